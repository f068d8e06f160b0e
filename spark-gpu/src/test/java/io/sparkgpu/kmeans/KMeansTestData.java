package io.sparkgpu.kmeans;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/** Small, well-separated 2-d blobs and a local Spark session for the k-means API tests. */
public final class KMeansTestData {
    /** True blob centres. */
    public static final double[][] BLOBS = {{0, 0}, {10, 10}, {-10, 10}};
    public static final int PER_BLOB = 20;

    public static final StructType SCHEMA = new StructType()
            .add("id", DataTypes.IntegerType, false)
            .add("blob", DataTypes.IntegerType, false)
            .add("features", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
            .add("vec", SQLDataTypes.VectorType(), false)
            .add("w", DataTypes.DoubleType, false);

    /** Rows: id, blob (true cluster), features (array<double>), vec (vector), w (weight 1, 2 or 3). */
    public static final List<Row> ROWS;
    /** The points, in id order. */
    public static final double[][] POINTS;

    static {
        Random rnd = new Random(7);
        ROWS = new ArrayList<>();
        POINTS = new double[BLOBS.length * PER_BLOB][];
        int id = 0;
        for (int b = 0; b < BLOBS.length; b++) {
            for (int i = 0; i < PER_BLOB; i++) {
                double x = BLOBS[b][0] + rnd.nextDouble() - 0.5;
                double y = BLOBS[b][1] + rnd.nextDouble() - 0.5;
                POINTS[id] = new double[] {x, y};
                ROWS.add(RowFactory.create(id, b, List.of(x, y), Vectors.dense(x, y), weight(id)));
                id++;
            }
        }
    }

    private KMeansTestData() {
    }

    public static double weight(int id) {
        return 1 + id % 3;
    }

    public static Dataset<Row> blobs(SparkSession spark) {
        return spark.createDataFrame(ROWS, SCHEMA).repartition(2);
    }

    /** Mean of the points of blob {@code b}, weighted by {@link #weight} or not. */
    public static double[] mean(int b, boolean weighted) {
        double[] s = new double[2];
        double ws = 0;
        for (int id = b * PER_BLOB; id < (b + 1) * PER_BLOB; id++) {
            double w = weighted ? weight(id) : 1.0;
            s[0] += w * POINTS[id][0];
            s[1] += w * POINTS[id][1];
            ws += w;
        }
        return new double[] {s[0] / ws, s[1] / ws};
    }

    /** local[2] session; whole-stage codegen is off because compiling it dominates these tiny jobs. */
    public static SparkSession session(String app) {
        return SparkSession.builder()
                .master("local[2]")
                .appName(app)
                .config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.codegen.wholeStage", "false")
                .getOrCreate();
    }

    /** Stops {@code spark} and forgets it, so that the next test class gets a fresh session with its own config. */
    public static void stop(SparkSession spark) {
        if (spark != null) {
            spark.stop();
        }
        SparkSession.clearActiveSession();
        SparkSession.clearDefaultSession();
    }
}
