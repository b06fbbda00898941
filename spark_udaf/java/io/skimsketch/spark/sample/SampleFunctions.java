package io.skimsketch.spark.sample;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * skim_sketch_info of a join sample (EstimateFunctions hands kind-5 bytes here), as the core's: the width
 * is the budget B (a layout-1 blob's converted budget) and nbytes the size of its layout-2 bytes.
 */
public final class SampleFunctions {
    private SampleFunctions() {}

    public static InternalRow info(byte[] a) {
        SampleState s = SampleEstimator.load(a, "skim_sketch_info(a)");
        BigInteger seed = new BigInteger(Long.toUnsignedString(s.seed));
        return new GenericInternalRow(new Object[] {UTF8String.fromString("JoinSample"), s.nbytes, 1,
            Decimal.apply(new BigDecimal(seed), 20, 0), s.totalWeight(), s.nullWeight(), (long) s.toBytes().length});
    }
}
