package io.skimsketch.spark;


/** Merges sketch bytes (NULLs skipped); NULL when there is none. */
final class UnionAgg extends SketchAggregator<byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public SketchState zero() {
        return new SketchState();
    }

    @Override
    public SketchState reduce(SketchState b, byte[] in) {
        return in == null ? b : b.merge(SketchState.fromBytes(in));
    }

    @Override
    public byte[] finish(SketchState b) {
        return b.isSet() ? b.toBytes() : null;
    }


    /** skim_union(a, b): the merge of two sketches (NULL if either is NULL). */
    public static byte[] union(byte[] a, byte[] b) {
        return SketchState.fromBytes(a).merge(SketchState.fromBytes(b)).toBytes();
    }
}
