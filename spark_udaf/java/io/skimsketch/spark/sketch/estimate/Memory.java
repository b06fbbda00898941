package io.skimsketch.spark.sketch.estimate;

import io.skimsketch.spark.SketchMemoryError;

/**
 * The library's memory on the JVM: its caches' bounds, relative to the heap ({@code -Xmx},
 * {@code spark.driver.memory}), and its allocation failures, which fail one query, never the JVM.
 * An OutOfMemoryError escaping a Spark task kills its executor, and in local mode the driver; the
 * library's entry points (build aggregates, merges, estimates) catch it, drop the library's caches
 * and throw a {@link SketchMemoryError} naming the function, the heap and the remedy instead.
 */
public final class Memory {
    /** The heap's limit (Runtime.maxMemory), read once. */
    static final long HEAP = Runtime.getRuntime().maxMemory();

    private Memory() {}

    /** A cache's bound in bytes: {@code cap}, or {@code 1/share} of the heap when that is smaller. */
    public static long cacheBound(long cap, int share) {
        return Math.min(cap, HEAP / share);
    }

    /** Drops the library's caches (the candidate scans and the recent skims). */
    static void dropCaches() {
        Candidates.dropCache();
        Skim.dropCache();
    }

    /** The error for an allocation failure in {@code fn}, after dropping the caches (throw it). */
    public static SketchMemoryError failed(String fn, OutOfMemoryError e) {
        dropCaches();
        return new SketchMemoryError(fn + ": the JVM ran out of memory (" + e.getMessage() + "; heap limit "
                + (HEAP >> 20) + " MB) in this query; the library's caches were dropped and only this query failed: "
                + "give the driver or the executors more memory (spark.driver.memory, spark.executor.memory), or use "
                + "smaller sketches"); // not the OutOfMemoryError as a cause: Spark would kill the JVM on it
    }
}
