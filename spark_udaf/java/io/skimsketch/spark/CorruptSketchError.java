package io.skimsketch.spark;

/** Bytes that are not a valid serialised sketch (the core's skimsketch.errors.CorruptSketchError). */
public final class CorruptSketchError extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public CorruptSketchError(String message) {
        super(message);
    }
}
