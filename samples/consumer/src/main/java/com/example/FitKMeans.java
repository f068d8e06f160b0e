package com.example;

import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.StructType;

/** A user's program: two well-separated blobs, a k-means fit with backend auto, one line of result. */
public final class FitKMeans {
    public static void main(String[] args) {
        SparkSession spark = SparkSession.builder().master("local[2]").appName("uses-spark-gpu")
                .config("spark.ui.enabled", "false").getOrCreate();
        spark.sparkContext().setLogLevel("ERROR");
        try {
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < 1000; i++) {
                double c = (i % 2 == 0) ? 0 : 10;
                rows.add(RowFactory.create(Vectors.dense(c + (i % 7) * 0.01, c - (i % 5) * 0.01)));
            }
            StructType schema = new StructType().add("features", SQLDataTypes.VectorType(), false);
            Dataset<Row> df = spark.createDataFrame(rows, schema);
            GpuKMeansModel model = new GpuKMeans().setK(2).setSeed(1L).setBackend("auto").fit(df);
            long clusters = model.transform(df).select("prediction").distinct().count();
            System.out.println("CONSUMER OK: k-means on " + model.summary().backend() + ", " + clusters
                    + " clusters, cost " + model.summary().trainingCost());
        } finally {
            spark.stop();
        }
    }
}
