package io.sparkgpu.tsne;

import java.io.Serializable;
import org.apache.spark.sql.types.DataType;

/** A fitted t-SNE run on a DataFrame: the optimiser's result, the id of every row, and quality on a sample. */
public final class TsneFit implements Serializable {
    private static final long serialVersionUID = 1L;

    public final TsneResult result;
    /** Id of point i (the idCol value, the graph vertex, or the generated row index as a Long). */
    public final Object[] ids;
    public final DataType idType;
    /** Input dimension used for the affinities (after the optional PCA); 0 in graph mode. */
    public final int numFeatures;
    /** Trustworthiness and kNN preservation on the quality sample (NaN in graph mode). */
    public final double trustworthiness;
    public final double knnPreservation;
    public final int qualitySample;
    public final int qualityK;
    /** "features" or "graph". */
    public final String input;
    public final double learningRate;
    public final String backend;
    /**
     * Feature mode: the reference for embedding new rows ({@link GpuTsneModel#transform}): the features the kNN used
     * (n x numFeatures floats, after the optional PCA), the PCA basis applied to the input (null: none), the
     * perplexity and k of the fit; null in graph mode.
     */
    public final TsneReference reference;

    TsneFit(TsneResult result, Object[] ids, DataType idType, int numFeatures, double trustworthiness,
            double knnPreservation, int qualitySample, int qualityK, String input, double learningRate,
            String backend) {
        this(result, ids, idType, numFeatures, trustworthiness, knnPreservation, qualitySample, qualityK, input,
                learningRate, backend, null);
    }

    TsneFit(TsneResult result, Object[] ids, DataType idType, int numFeatures, double trustworthiness,
            double knnPreservation, int qualitySample, int qualityK, String input, double learningRate,
            String backend, TsneReference reference) {
        this.reference = reference;
        this.result = result;
        this.ids = ids;
        this.idType = idType;
        this.numFeatures = numFeatures;
        this.trustworthiness = trustworthiness;
        this.knnPreservation = knnPreservation;
        this.qualitySample = qualitySample;
        this.qualityK = qualityK;
        this.input = input;
        this.learningRate = learningRate;
        this.backend = backend;
    }
}
