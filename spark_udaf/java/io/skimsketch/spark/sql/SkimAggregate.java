package io.skimsketch.spark.sql;

import java.util.Arrays;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.aggregate.ImperativeAggregate;
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;

/**
 * What the typed aggregates of this package share ({@link BuildAggregate}, {@link SampleAggregate},
 * {@link SampleRunsAggregate}, {@link SamplePiecesAggregate}): a named, never-NULL binary result; a
 * constructor (name, constant parameters..., children, mutable and input buffer offsets), whose arguments
 * are the Product that TreeNode.makeCopy relies on and that equality and the hash compare; copies with new
 * buffer offsets or children through {@link #copyWith}. Each subclass keeps its buffer, update, merge, result,
 * partial bytes and how it prints.
 */
abstract class SkimAggregate<T> extends TypedImperativeAggregate<T> implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    final String name;
    final Seq<Expression> children;
    final int mutableAggBufferOffset;
    final int inputAggBufferOffset;

    SkimAggregate(String name, Seq<Expression> children, int mutableAggBufferOffset, int inputAggBufferOffset) {
        this.name = name;
        this.children = children;
        this.mutableAggBufferOffset = mutableAggBufferOffset;
        this.inputAggBufferOffset = inputAggBufferOffset;
    }

    /** The constructor's arguments before the children, in its order: the name, then the constant parameters. */
    abstract Object[] leadingArgs();

    /** This aggregate with other children and buffer offsets (the constructor, the parameters unchanged). */
    abstract SkimAggregate<T> copyWith(Seq<Expression> children, int mutableAggBufferOffset,
                                       int inputAggBufferOffset);

    @Override
    public int mutableAggBufferOffset() {
        return mutableAggBufferOffset;
    }

    @Override
    public int inputAggBufferOffset() {
        return inputAggBufferOffset;
    }

    @Override
    public ImperativeAggregate withNewMutableAggBufferOffset(int offset) {
        return copyWith(children, offset, inputAggBufferOffset);
    }

    @Override
    public ImperativeAggregate withNewInputAggBufferOffset(int offset) {
        return copyWith(children, mutableAggBufferOffset, offset);
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return copyWith(newChildren, mutableAggBufferOffset, inputAggBufferOffset);
    }

    @Override
    public boolean nullable() {
        return false;
    }

    @Override
    public DataType dataType() {
        return DataTypes.BinaryType;
    }

    @Override
    public String prettyName() {
        return name;
    }

    // -- Product (the constructor's arguments, which TreeNode.makeCopy relies on) ----------------
    private Object[] elements() {
        Object[] p = leadingArgs();
        Object[] out = Arrays.copyOf(p, p.length + 3);
        out[p.length] = children;
        out[p.length + 1] = mutableAggBufferOffset;
        out[p.length + 2] = inputAggBufferOffset;
        return out;
    }

    @Override
    public int productArity() {
        return leadingArgs().length + 3;
    }

    @Override
    public Object productElement(int n) {
        Object[] e = elements();
        if (n < 0 || n >= e.length) {
            throw new IndexOutOfBoundsException(Integer.toString(n));
        }
        return e[n];
    }

    @Override
    public boolean canEqual(Object o) {
        return o != null && o.getClass() == getClass();
    }

    @Override
    public boolean equals(Object o) {
        return canEqual(o) && Arrays.equals(elements(), ((SkimAggregate<?>) o).elements());
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(elements());
    }
}
