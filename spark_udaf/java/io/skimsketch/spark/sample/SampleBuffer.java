package io.skimsketch.spark.sample;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * The partial buffer of skim_sample_agg as Spark shuffles it (TypedImperativeAggregate's serialize and
 * deserialize): the table's totals, key domain and sign flag, then a building sample's exact totals (key, total) or a
 * bounded selection's entries (key, total, rank). Not the core's format: the partial step's own bytes.
 */
public final class SampleBuffer {
    private SampleBuffer() {}

    /** The buffer's bytes. */
    public static byte[] write(SampleState b) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeLong(b.total);
            out.writeLong(b.nullW);
            out.writeByte(b.keyDomain);
            out.writeBoolean(b.signFlag);
            if (b.map != null) {
                out.writeLong(b.map.nonZero());
                b.map.forEach((k, t) -> {
                    try {
                        out.writeLong(k);
                        out.writeLong(t);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
            } else {
                SampleSelect s = b.sel;
                out.writeLong(s.nKeys);
                out.writeInt(s.size);
                for (int i = 0; i < s.size; i++) {
                    out.writeLong(s.keys[i]);
                    out.writeLong(s.totals[i]);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    /** Reads {@code bytes} into {@code b}, a fresh buffer of the aggregate's parameters; returns {@code b}. */
    public static SampleState read(SampleState b, byte[] bytes) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            b.total = in.readLong();
            b.nullW = in.readLong();
            b.keyDomain = in.readByte();
            b.signFlag = in.readBoolean();
            long n = in.readLong();
            if (b.map != null) {
                for (long i = 0; i < n; i++) {
                    b.map.add(in.readLong(), in.readLong());
                }
            } else {
                b.sel.nKeys = n;
                int size = in.readInt();
                for (int i = 0; i < size; i++) {
                    b.sel.offer(in.readLong(), in.readLong()); // ranked again (SampleScale)
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return b;
    }
}
