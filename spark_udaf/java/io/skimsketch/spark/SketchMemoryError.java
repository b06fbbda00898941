package io.skimsketch.spark;

/**
 * The JVM's heap had no room for the library's work on one query (Memory): that query fails with
 * this error, the JVM (a Spark driver) goes on. Re-raised on the Python driver as MemoryError.
 */
public final class SketchMemoryError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** No cause: Spark's executor searches an exception's causes for fatal errors (OutOfMemoryError) and
     * kills its JVM when it finds one (spark.executor.killOnFatalError.depth). */
    public SketchMemoryError(String message) {
        super(message);
    }
}
