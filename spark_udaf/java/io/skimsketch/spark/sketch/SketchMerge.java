package io.skimsketch.spark.sketch;

import io.skimsketch.spark.IncompatibleSketchError;
import java.util.Map;

/**
 * Merges of sketch states (the core's Sketch.merge): the kind, shape, seed and counter type checked, the key
 * domains and sign flags combined, then counters added to counters, or an exact-mode sketch's entries added
 * one by one (as updates when the target has counters) with its weights.
 */
final class SketchMerge {
    private SketchMerge() {}

    /** Adds {@code o} to {@code a} (a union buffer adopts it) -> {@code a}. */
    static SketchState merge(SketchState a, SketchState o) {
        if (o.spec == null) {
            return a;
        }
        o.flushCache();
        if (a.spec == null) {
            a.spec = o.spec;
            a.allocate(o.exact());
        }
        a.spec.checkCompatible(o.spec, "merge");
        a.nonneg &= o.nonneg;
        if (a.keyDomain != 0 && o.keyDomain != 0 && a.keyDomain != o.keyDomain) {
            throw new IncompatibleSketchError("cannot merge sketches: key_domain differs ('"
                    + SketchState.domainName(a.keyDomain) + "' != '" + SketchState.domainName(o.keyDomain) + "')");
        }
        if (a.keyDomain == 0) {
            a.keyDomain = o.keyDomain;
        }
        if (a.spec.kind == SketchState.KIND_AGMS && a.exact() != o.exact()) {
            throw new UnsupportedOperationException("merging an exact-mode AGMS sketch with a counter-mode one is "
                    + "not done on the JVM: merge them with skimsketch (a.merge(b))");
        }
        if (o.exact()) {
            mergeEntries(a, o);
            return a;
        }
        if (a.exact()) {
            a.convert();
        }
        if (o.range.has && o.recordedDomain() != 0) {
            a.observe(o.range.lo, SketchState.KEY_INT);
            a.observe(o.range.hi, SketchState.KEY_INT);
        }
        if (a.spec.isFloat) {
            a.floats.merge(o.floats);
        } else {
            try {
                a.ints.merge(o.ints);
            } catch (ArithmeticException e) {
                throw SketchState.overflow();
            }
        }
        return a;
    }

    /** Adds an exact-mode sketch: entry by entry (as updates when this one has counters), then its weights. */
    private static void mergeEntries(SketchState a, SketchState o) {
        boolean mine = a.exact();
        if (o.entries != null) {
            for (Map.Entry<Long, Long> x : o.entries.map.entrySet()) {
                if (mine) {
                    try {
                        a.entries.add(x.getKey(), x.getValue());
                    } catch (ArithmeticException e) {
                        throw SketchState.overflow();
                    }
                } else {
                    a.addCounters(x.getKey(), o.keyDomain, x.getValue());
                }
            }
        } else {
            for (Map.Entry<Long, Double> x : o.fentries.map.entrySet()) {
                if (mine) {
                    a.fentries.add(x.getKey(), x.getValue());
                } else {
                    a.addCounters(x.getKey(), o.keyDomain, x.getValue());
                }
            }
        }
        if (a.spec.isFloat) {
            a.floats.addWeights(o.floats);
        } else {
            try {
                a.ints.addWeights(o.ints);
            } catch (ArithmeticException e) {
                throw SketchState.overflow();
            }
        }
        if (mine && a.entryCount() > a.spec.capacity()) {
            a.convert();
        }
    }
}
