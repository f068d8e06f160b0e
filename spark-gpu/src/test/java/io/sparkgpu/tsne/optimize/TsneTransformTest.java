package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneGridOptions;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link TsneTransform} on a synthetic reference map (4 Gaussian clusters in 8-D, placed at the corners of a square):
 * new points land in their cluster (kNN-label accuracy), exact and grid repulsion agree, any split of the new points
 * gives the same bits, bad settings are refused with the rule.
 */
class TsneTransformTest {
    static final int D = 8;
    static final int CLUSTERS = 4;

    /** Reference (labels, features, map) and new points of the same clusters. */
    static final class Data {
        final int nRef;
        final int nq;
        final int[] refLabel;
        final int[] newLabel;
        final float[] xRef;
        final float[] xNew;
        final double[] yRef;

        Data(int perCluster, int newPerCluster, long seed) {
            Random rnd = new Random(seed);
            double[][] centre = new double[CLUSTERS][D];
            for (int c = 0; c < CLUSTERS; c++) {
                for (int a = 0; a < D; a++) {
                    centre[c][a] = 10 * rnd.nextGaussian();
                }
            }
            nRef = CLUSTERS * perCluster;
            nq = CLUSTERS * newPerCluster;
            refLabel = new int[nRef];
            newLabel = new int[nq];
            xRef = new float[nRef * D];
            xNew = new float[nq * D];
            yRef = new double[nRef * 2];
            for (int i = 0; i < nRef; i++) {
                int c = i % CLUSTERS;
                refLabel[i] = c;
                for (int a = 0; a < D; a++) {
                    xRef[i * D + a] = (float) (centre[c][a] + rnd.nextGaussian());
                }
                yRef[2 * i] = (c % 2 == 0 ? -20 : 20) + 2 * rnd.nextGaussian();
                yRef[2 * i + 1] = (c / 2 == 0 ? -20 : 20) + 2 * rnd.nextGaussian();
            }
            for (int i = 0; i < nq; i++) {
                int c = (i * 7 + 3) % CLUSTERS;
                newLabel[i] = c;
                for (int a = 0; a < D; a++) {
                    xNew[i * D + a] = (float) (centre[c][a] + rnd.nextGaussian());
                }
            }
        }
    }

    static TsneConfig config(String repulsion) {
        TsneConfig cfg = new TsneConfig();
        cfg.perplexity = 10;
        cfg.repulsion = repulsion;
        cfg.backend = Backend.CPU;
        cfg.grid = new TsneGridOptions(4, 2.0, 3, new int[] {0, 400, 40, 4});
        return cfg;
    }

    /** Share of new points whose 10 nearest reference points (in the map) mostly carry their label. */
    static double knnAccuracy(double[] yRef, int[] refLabel, double[] yNew, int[] newLabel) {
        int nRef = refLabel.length;
        int good = 0;
        for (int i = 0; i < newLabel.length; i++) {
            Integer[] idx = new Integer[nRef];
            for (int j = 0; j < nRef; j++) {
                idx[j] = j;
            }
            final int q = i;
            java.util.Arrays.sort(idx, java.util.Comparator.comparingDouble(j -> Math.hypot(
                    yRef[2 * j] - yNew[2 * q], yRef[2 * j + 1] - yNew[2 * q + 1])));
            int[] votes = new int[CLUSTERS];
            for (int m = 0; m < 10; m++) {
                votes[refLabel[idx[m]]]++;
            }
            int best = 0;
            for (int c = 1; c < CLUSTERS; c++) {
                if (votes[c] > votes[best]) {
                    best = c;
                }
            }
            good += best == newLabel[i] ? 1 : 0;
        }
        return good / (double) newLabel.length;
    }

    @Test
    void newPointsLandInTheirClusterAndSplitsGiveTheSameBits() {
        Data data = new Data(60, 10, 1);
        TsneTransform.Settings s = new TsneTransform.Settings();
        double[][] out = new double[2][];
        String[] repulsions = {TsneConfig.REPULSION_EXACT, TsneConfig.REPULSION_GRID};
        for (int m = 0; m < 2; m++) {
            TsneConfig cfg = config(repulsions[m]);
            double[] y = TsneTransform.embed(data.yRef, data.xRef, data.nRef, D, data.xNew, data.nq, 30, cfg, s, null);
            assertTrue(knnAccuracy(data.yRef, data.refLabel, y, data.newLabel) >= 0.95, repulsions[m]);
            // each new point depends only on the reference: any split gives the same bits
            int half = 13;
            double[] a = TsneTransform.embed(data.yRef, data.xRef, data.nRef, D,
                    java.util.Arrays.copyOfRange(data.xNew, 0, half * D), half, 30, cfg, s, null);
            double[] b = TsneTransform.embed(data.yRef, data.xRef, data.nRef, D,
                    java.util.Arrays.copyOfRange(data.xNew, half * D, data.nq * D), data.nq - half, 30, cfg, s, null);
            double[] joined = new double[y.length];
            System.arraycopy(a, 0, joined, 0, a.length);
            System.arraycopy(b, 0, joined, a.length, b.length);
            assertArrayEquals(y, joined, 0.0, repulsions[m] + ": split");
            out[m] = y;
        }
        // the grid approximates the exact repulsion: the same places up to a small fraction of the map's extent
        double worst = 0;
        for (int t = 0; t < out[0].length; t++) {
            worst = Math.max(worst, Math.abs(out[0][t] - out[1][t]));
        }
        assertTrue(worst < 0.5, "grid vs exact: " + worst + " (map extent about 45)");
    }

    @Test
    void optimisationMovesPointsFromTheirStartAndHeavyTailsWork() {
        Data data = new Data(40, 5, 2);
        TsneConfig cfg = config(TsneConfig.REPULSION_EXACT);
        TsneTransform.Settings s = new TsneTransform.Settings();
        double[] moved = TsneTransform.embed(data.yRef, data.xRef, data.nRef, D, data.xNew, data.nq, 30, cfg, s, null);
        s.maxIter = 0;
        double[] start = TsneTransform.embed(data.yRef, data.xRef, data.nRef, D, data.xNew, data.nq, 30, cfg, s, null);
        double diff = 0;
        for (int t = 0; t < moved.length; t++) {
            diff = Math.max(diff, Math.abs(moved[t] - start[t]));
        }
        assertTrue(diff > 1e-3, "the iterations must move the points: " + diff);
        s.maxIter = 100;
        cfg.dof = 0.5;
        double[] heavy = TsneTransform.embed(data.yRef, data.xRef, data.nRef, D, data.xNew, data.nq, 30, cfg, s, null);
        assertTrue(knnAccuracy(data.yRef, data.refLabel, heavy, data.newLabel) >= 0.95);
    }

    @Test
    void settingsAreChecked() {
        Data data = new Data(10, 2, 3);
        TsneConfig cfg = config(TsneConfig.REPULSION_EXACT);
        TsneTransform.Settings s = new TsneTransform.Settings();
        s.learningRate = 0;
        assertEquals("transformLearningRate must be a finite number > 0, got 0.0", assertThrows(
                IllegalArgumentException.class, () -> TsneTransform.embed(data.yRef, data.xRef, data.nRef, D,
                        data.xNew, data.nq, 30, cfg, s, null)).getMessage());
        assertEquals("transformMaxIter must be >= 0, got -1", assertThrows(IllegalArgumentException.class,
                () -> TsneTransform.Settings.checkMaxIter(-1)).getMessage());
        TsneTransform.Settings ok = new TsneTransform.Settings();
        assertThrows(IllegalArgumentException.class, () -> TsneTransform.embed(data.yRef, data.xRef, data.nRef, D,
                data.xNew, data.nq, 41, cfg, ok, null)); // k > nRef
    }
}
