package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** End-to-end runs of {@code sparkgpu tsne} on a small generated CSV file, Spark on local[2], CPU twins. */
class SparkGpuCliTsneTest {
    @TempDir
    Path tmp;

    /** 3 Gaussian clusters of 50 points in 4-D, labelled a/b/c, with an id column. */
    private Path blobsCsv() throws Exception {
        Random r = new Random(5);
        StringBuilder sb = new StringBuilder("key,x1,x2,x3,x4,group\n");
        for (int i = 0; i < 150; i++) {
            int c = i % 3;
            sb.append("k").append(i);
            for (int a = 0; a < 4; a++) {
                sb.append(',').append((a == c ? 15.0 : 0.0) + r.nextGaussian());
            }
            sb.append(',').append((char) ('a' + c)).append('\n');
        }
        Path f = tmp.resolve("blobs.csv");
        Files.writeString(f, sb.toString(), StandardCharsets.UTF_8);
        return f;
    }

    @Test
    void tsneWritesEmbeddingModelAndPlot() throws Exception {
        Path in = blobsCsv();
        Path out = tmp.resolve("out/emb.csv");
        Path model = tmp.resolve("out/model");
        Path png = tmp.resolve("out/tsne.png");
        CliRun r = CliRun.of("tsne", "--input", in.toString(), "--features", "x1,x2,x3,x4", "--id", "key", "--label",
                "group", "--perplexity", "10", "--max-iter", "200", "--exaggeration-iter", "100", "--backend", "cpu",
                "--grid-min-intervals", "10", "--grid-max-intervals", "40", "--learning-rate", "48",
                "--output", out.toString(), "--output-format", "csv", "--model-out", model.toString(), "--plot",
                png.toString(), "--master", "local[2]");
        assertEquals(0, r.exitCode, r::toString);
        assertTrue(r.out.contains("t-SNE finished"), r::toString);
        assertTrue(r.out.contains("t-SNE: iteration 200/200 (KL"), r::toString);
        assertEquals(1, r.out.split("t-SNE: iteration 200/200 ", -1).length - 1, "iteration 200 once: " + r);
        assertTrue(r.out.contains("trustworthiness"), r::toString);

        List<String> lines;
        try (Stream<Path> parts = Files.list(out)) {
            Path part = parts.filter(p -> p.getFileName().toString().endsWith(".csv")).findFirst().orElseThrow();
            lines = Files.readAllLines(part);
        }
        assertEquals("key,group,tsne_1,tsne_2", lines.get(0));
        assertEquals(151, lines.size());
        assertTrue(lines.get(1).startsWith("k0,a,"), lines.get(1));

        JsonNode s = new ObjectMapper().readTree(model.resolve("summary.json").toFile());
        assertEquals(150, s.get("numPoints").asInt());
        assertTrue(s.get("trustworthiness").asDouble() > 0.8, s.toString());
        assertTrue(Files.isDirectory(model.resolve("metadata")));

        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(Plots.WIDTH, img.getWidth());
    }

    @Test
    void usageErrorsNameTheOption() throws Exception {
        Path in = blobsCsv();
        CliRun both = CliRun.of("tsne", "--input", in.toString(), "--features", "x1", "--graph", "x1,x2");
        assertEquals(SparkGpuCli.EXIT_USAGE, both.exitCode, both::toString);
        assertTrue(both.err.contains("--features") && both.err.contains("--graph"), both::toString);
        CliRun dim = CliRun.of("tsne", "--input", in.toString(), "--features", "x1,x2", "--dimension", "4");
        assertEquals(SparkGpuCli.EXIT_USAGE, dim.exitCode, dim::toString);
        assertTrue(dim.err.contains("dimension"), dim::toString);
        CliRun lr = CliRun.of("tsne", "--input", in.toString(), "--features", "x1,x2", "--learning-rate", "fast");
        assertEquals(SparkGpuCli.EXIT_USAGE, lr.exitCode, lr::toString);
        CliRun tooBig = CliRun.of("tsne", "--input", in.toString(), "--features", "x1,x2", "--perplexity", "200",
                "--backend", "cpu", "--master", "local[2]");
        assertEquals(SparkGpuCli.EXIT_ERROR, tooBig.exitCode, tooBig::toString);
        assertTrue(tooBig.err.contains("perplexity=200.0 must be < n - 1 = 149"), tooBig::toString);
    }
}
