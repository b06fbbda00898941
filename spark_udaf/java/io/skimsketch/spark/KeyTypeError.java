package io.skimsketch.spark;

/** Keys or weights of a type or value the sketch cannot take (the core's skimsketch.errors.KeyTypeError). */
public final class KeyTypeError extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public KeyTypeError(String message) {
        super(message);
    }
}
