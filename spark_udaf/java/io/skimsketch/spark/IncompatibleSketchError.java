package io.skimsketch.spark;

/** Two sketches that cannot be merged or joined; the message names the field that differs (the core's skimsketch.errors.IncompatibleSketchError). */
public final class IncompatibleSketchError extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public IncompatibleSketchError(String message) {
        super(message);
    }
}
