package io.skimsketch.spark.common;

/**
 * The core's class names of the linear sketch kinds in the format's kind byte (the core's kind registry): 1
 * AGMSSketch, 2 HashSketch, 3 SkimmedSketch. For messages that name another family's kind (a join sample
 * refusing a sketch) without depending on that family.
 */
public final class Kinds {
    private Kinds() {}

    /** The class name of linear sketch kind {@code kind} (1, 2; any other is SkimmedSketch). */
    public static String sketchName(int kind) {
        return kind == 2 ? "HashSketch" : kind == 1 ? "AGMSSketch" : "SkimmedSketch";
    }
}
