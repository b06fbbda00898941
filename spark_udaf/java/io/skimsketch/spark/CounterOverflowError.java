package io.skimsketch.spark;

/** An update or merge that would overflow the counters (the core's skimsketch.errors.CounterOverflowError). */
public final class CounterOverflowError extends ArithmeticException {
    private static final long serialVersionUID = 1L;

    public CounterOverflowError(String message) {
        super(message);
    }
}
