package io.sparkgpu.sql;

import java.io.Serializable;
import java.util.Objects;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext;
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback;
import org.apache.spark.sql.catalyst.expressions.codegen.ExprCode;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The Catalyst plumbing shared by the functions {@code f(model_path, arg)} that evaluate a saved model: one child
 * ({@code arg}), the literal path and the model reference as constructor arguments and product elements, SQL text,
 * equality (same class, child, path and model key) and interpreted evaluation only ({@link CodegenFallback}).
 * Catalyst expressions are serializable because they are case classes; these say so explicitly, since plans
 * holding them are shipped to executors.
 */
abstract class ModelPathExpression extends Expression implements CodegenFallback, Serializable {
    private static final long serialVersionUID = 1L;

    private final Expression argument;
    private final String modelPath;
    private final Object model;
    private final Object modelKey;
    private final Seq<Expression> children;

    /**
     * {@code model} is the product element; {@code modelKey} decides equality (the model reference itself, or an id
     * of it where the reference has no value equality).
     */
    ModelPathExpression(Expression argument, String modelPath, Object model, Object modelKey) {
        this.argument = argument;
        this.modelPath = modelPath;
        this.model = model;
        this.modelKey = modelKey;
        this.children = CollectionConverters.asScala(java.util.List.of(argument)).toList();
    }

    /** The same function over a new argument (same path and model). */
    protected abstract Expression withArgument(Expression newArgument);

    public String modelPath() {
        return modelPath;
    }

    @Override
    public Seq<Expression> children() {
        return children;
    }

    @Override
    public Expression withNewChildrenInternal(IndexedSeq<Expression> newChildren) {
        if (newChildren.size() != 1) {
            throw new IllegalArgumentException(prettyName() + " has one child, got " + newChildren.size());
        }
        return withArgument(newChildren.apply(0));
    }

    @Override
    public ExprCode doGenCode(CodegenContext ctx, ExprCode ev) {
        return CodegenFallback.super.doGenCode(ctx, ev);
    }

    @Override
    public String sql() {
        return prettyName() + "('" + modelPath.replace("\\", "\\\\").replace("'", "\\'") + "', " + argument.sql() + ")";
    }

    @Override
    public String toString() {
        return prettyName() + "(" + modelPath + ", " + argument + ")";
    }

    @Override
    public int productArity() {
        return 3;
    }

    @Override
    public Object productElement(int n) {
        switch (n) {
            case 0: return argument;
            case 1: return modelPath;
            case 2: return model;
            default: throw new IndexOutOfBoundsException(String.valueOf(n));
        }
    }

    @Override
    public boolean canEqual(Object that) {
        return that != null && that.getClass() == getClass();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (o == null || o.getClass() != getClass()) {
            return false;
        }
        ModelPathExpression e = (ModelPathExpression) o;
        return argument.equals(e.argument) && modelPath.equals(e.modelPath) && modelKey.equals(e.modelKey);
    }

    @Override
    public int hashCode() {
        return Objects.hash(getClass(), argument, modelPath, modelKey);
    }
}
