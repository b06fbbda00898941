package io.skimsketch.spark.sql;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.NamedArgumentExpression;
import org.apache.spark.sql.catalyst.expressions.PrettyAttribute;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import org.apache.spark.sql.catalyst.expressions.objects.StaticInvoke;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractPartialFunction;

/**
 * A scalar skim_* call under its SQL name: it evaluates (interpreted and generated code) as the
 * expression it wraps (a StaticInvoke of EstimateFunctions or SampleUnionAgg), and names itself
 * after the function instead of the Java method.
 * <ul>
 * <li>{@code sql} (what Spark names an unaliased column after): {@code fn(args as written)}, each
 * argument in Spark's pretty SQL, as Spark names its own functions (and, but for casts and binary
 * constants, which Spark prints as plain text there, as it names the Python functions), e.g.
 * {@code skim_join_size(s, s)} or {@code skim_join_size_bounds(s, s, confidence => 0.9)};</li>
 * <li>{@code toString} (EXPLAIN): {@code fn(the arguments evaluated)}, e.g.
 * {@code skim_join_size(s#12, s#15, 0.95)};</li>
 * <li>in both, a binary constant longer than {@link #SHOWN} bytes (a literal sketch) is shown as its
 * first {@link #SHOWN} bytes and its length, {@code X'534B534B04000318...'(4096 bytes)}
 * ({@link #abbreviate}), never whole.</li>
 * </ul>
 */
public final class NamedCall extends Expression implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    /** Binary constants up to this many bytes are shown whole; longer ones by these first bytes. */
    static final int SHOWN = 8;
    private final String name;
    private final String shown;
    private final Expression call;
    private final Seq<Expression> children;

    public NamedCall(String name, String shown, Expression call) {
        this.name = name;
        this.shown = shown;
        this.call = call;
        this.children = CollectionConverters.asScala(List.of(call)).toSeq();
    }

    /** fn's call, named fn(the written arguments). */
    static NamedCall of(String fn, Seq<Expression> written, Expression call) {
        return new NamedCall(fn, shown(fn, written), call);
    }

    /** fn(the written arguments) as a column's name: each in Spark's pretty SQL (named ones as name => value),
     * binary constants abbreviated; the aggregates (BuildAggregate) are named so too. */
    static String shown(String fn, Seq<Expression> written) {
        List<String> args = new ArrayList<>();
        for (Expression e : CollectionConverters.asJava(written)) {
            args.add(e instanceof NamedArgumentExpression ? ((NamedArgumentExpression) e).key() + " => "
                    + pretty(((NamedArgumentExpression) e).value()) : pretty(e));
        }
        return fn + "(" + String.join(", ", args) + ")";
    }

    /** e as Spark names a column after it (its pretty SQL), binary constants abbreviated. */
    private static String pretty(Expression e) {
        return org.apache.spark.sql.catalyst.util.package$.MODULE$.toPrettySQL(abbreviated(e), false);
    }

    /** A binary constant as shown in a name: whole up to SHOWN bytes, else X'first SHOWN bytes...'(n bytes). */
    static String abbreviate(byte[] b) {
        StringBuilder s = new StringBuilder("X'");
        for (int i = 0; i < Math.min(b.length, SHOWN); i++) {
            s.append(String.format("%02X", b[i] & 0xff));
        }
        return b.length <= SHOWN ? s.append("'").toString() : s.append("...'(").append(b.length).append(" bytes)")
                .toString();
    }

    /** e with each binary constant longer than SHOWN bytes replaced by a placeholder named as abbreviate shows it. */
    static Expression abbreviated(Expression e) {
        return e.transform(new AbstractPartialFunction<Expression, Expression>() {
            @Override
            public boolean isDefinedAt(Expression x) {
                return x instanceof Literal && x.dataType() instanceof BinaryType && ((Literal) x).value() != null
                        && ((byte[]) ((Literal) x).value()).length > SHOWN;
            }

            @Override
            public Expression apply(Expression x) {
                return new PrettyAttribute(abbreviate((byte[]) ((Literal) x).value()), DataTypes.BinaryType);
            }
        });
    }

    /** The StaticInvoke the call runs (under an If for NaN keys), or null. */
    private static StaticInvoke invoke(Expression e) {
        if (e instanceof StaticInvoke) {
            return (StaticInvoke) e;
        }
        for (Expression c : CollectionConverters.asJava(e.children())) {
            StaticInvoke s = invoke(c);
            if (s != null) {
                return s;
            }
        }
        return null;
    }

    /** The same computation however it was written: GROUP BY skim_frequency(s, key => 3) matches
     * skim_frequency(s, 3). */
    @Override
    public Expression canonicalized() {
        return new NamedCall(name, name, call.canonicalized());
    }

    @Override
    public String sql() {
        return shown;
    }

    @Override
    public String toString() {
        StaticInvoke s = invoke(call);
        if (s == null) {
            return shown;
        }
        List<String> args = new ArrayList<>();
        for (Expression e : CollectionConverters.asJava(s.arguments())) {
            args.add(abbreviated(e).toString());
        }
        return name + "(" + String.join(", ", args) + ")";
    }

    @Override
    public String prettyName() {
        return name;
    }

    @Override
    public boolean nullable() {
        return call.nullable();
    }

    @Override
    public boolean foldable() {
        return call.foldable();
    }

    @Override
    public DataType dataType() {
        return call.dataType();
    }

    @Override
    public Object eval(InternalRow input) {
        return call.eval(input);
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return call.genCode(ctx);
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        return new NamedCall(name, shown, newChildren.apply(0));
    }

    // -- Product (the constructor's arguments, which TreeNode.makeCopy relies on) ----------------
    @Override
    public int productArity() {
        return 3;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return name;
            case 1: return shown;
            case 2: return call;
            default: throw new IndexOutOfBoundsException(Integer.toString(n));
        }
    }

    @Override
    public boolean canEqual(Object o) {
        return o instanceof NamedCall;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof NamedCall)) {
            return false;
        }
        NamedCall x = (NamedCall) o;
        return name.equals(x.name) && shown.equals(x.shown) && call.equals(x.call);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, shown, call);
    }
}
