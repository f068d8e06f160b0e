package io.sparkgpu.sql;

import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.ExpressionInfo;
import scala.Function1;
import scala.collection.immutable.Seq;

/**
 * One SQL function that {@link SparkGpuExtensions} registers: its name, its documentation (what
 * {@code DESCRIBE FUNCTION} shows) and the builder Catalyst calls with the resolved arguments.
 */
public record SqlFunctionSpec(String name, ExpressionInfo info, Function1<Seq<Expression>, Expression> builder) {
}
