package io.skimsketch.spark;

/** A key outside the sketch's declared domain [0, domain) (the core's skimsketch.errors.KeyDomainError). */
public final class KeyDomainError extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    public KeyDomainError(String message) {
        super(message);
    }
}
