package io.sparkgpu.ml;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.KMeansTestData;
import io.sparkgpu.tsne.GpuTsneModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Saved objects record their format and capability and the digests of their files ({@link ParamsIO#seal}); load
 * refuses another capability, a newer format, a truncated, corrupted, missing or added file, and data breaking an
 * invariant of a fit, each with a message naming the path and the rule. A model saved before the record existed
 * still loads.
 */
class ModelIntegrityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static SparkSession spark;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = KMeansTestData.session("ModelIntegrityTest");
    }

    @AfterAll
    static void stop() {
        KMeansTestData.stop(spark);
    }

    private static final double[][] CENTRES = {{0.5, -1}, {3, 4}, {1e-300, 7}};

    private Path savedKMeans(String name) throws IOException {
        Path dir = tmp.resolve(name);
        new GpuKMeansModel("km", CENTRES).setPredictionCol("cluster").write().save(dir.toString());
        return dir;
    }

    private static Path dataFile(Path model) throws IOException {
        try (Stream<Path> s = Files.list(model.resolve("data"))) {
            return s.filter(p -> p.getFileName().toString().startsWith("part-")).findFirst().orElseThrow();
        }
    }

    /** Changes a file behind Hadoop's back: its .crc sidecar goes too (the case: a copy without them). */
    private static void replace(Path file, byte[] bytes) throws IOException {
        Files.write(file, bytes);
        Files.deleteIfExists(file.resolveSibling("." + file.getFileName() + ".crc"));
    }

    private static String refusal(Path model, Executable load) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, load::run);
        assertTrue(e.getMessage().contains(model.toString()), e.getMessage());
        return e.getMessage();
    }

    interface Executable {
        void run() throws Exception;
    }

    @Test
    void aSavedModelRecordsFormatCapabilityAndDigestsAndLoadsBack() throws Exception {
        Path dir = savedKMeans("km");
        JsonNode rec = JSON.readTree(dir.resolve(ParamsIO.INTEGRITY).toFile());
        assertEquals(ParamsIO.FORMAT_VERSION, rec.get(ParamsIO.FORMAT_FIELD).asInt());
        assertEquals("kmeans model", rec.get(ParamsIO.CAPABILITY_FIELD).asText());
        List<String> files = iterable(rec.get("files").fieldNames());
        assertTrue(files.stream().anyMatch(f -> f.startsWith("data/part-")), files.toString());
        assertTrue(files.stream().anyMatch(f -> f.startsWith("metadata/part-")), files.toString());
        assertTrue(files.stream().noneMatch(f -> f.contains("/.") || f.contains("/_")), "no .crc, no _SUCCESS");
        GpuKMeansModel back = GpuKMeansModel.load(dir.toString());
        assertArrayEquals(CENTRES, back.clusterCentersArray());
        assertEquals("cluster", back.getPredictionCol());
        // no Java serialization in the saved data: no file starts with its stream magic 0xACED
        for (String f : files) {
            byte[] b = Files.readAllBytes(dir.resolve(f));
            assertTrue(b.length < 2 || !(b[0] == (byte) 0xAC && b[1] == (byte) 0xED), f);
        }
        // a top-level file (the CLI's summary.json) is not part of the model
        Files.writeString(dir.resolve("summary.json"), "{}");
        GpuKMeansModel.load(dir.toString());
        // estimators are sealed too
        Path est = tmp.resolve("est");
        new GpuKMeans().setK(4).write().save(est.toString());
        assertEquals("kmeans estimator", JSON.readTree(est.resolve(ParamsIO.INTEGRITY).toFile())
                .get(ParamsIO.CAPABILITY_FIELD).asText());
        assertEquals(4, GpuKMeans.load(est.toString()).getK());
    }

    private static List<String> iterable(java.util.Iterator<String> it) {
        List<String> l = new java.util.ArrayList<>();
        it.forEachRemaining(l::add);
        return l;
    }

    @Test
    void anotherCapabilityIsRefused() throws Exception {
        Path iso = tmp.resolve("iso");
        new GpuIsotonicRegressionModel("iso", new double[] {0, 1}, new double[] {2, 3}, true).write().save(iso.toString());
        String msg = refusal(iso, () -> GpuKMeansModel.load(iso.toString()));
        assertTrue(msg.contains("holds an isotonic model") && msg.contains("not a kmeans model")
                && msg.contains("load it with GpuIsotonicRegressionModel.load"), msg);
        // also without the integrity record (the metadata names it)
        Files.delete(iso.resolve(ParamsIO.INTEGRITY));
        assertTrue(refusal(iso, () -> GpuKMeansModel.load(iso.toString())).contains("not a kmeans model"));
    }

    @Test
    void aNewerFormatIsRefused() throws Exception {
        Path dir = savedKMeans("future");
        Path rec = dir.resolve(ParamsIO.INTEGRITY);
        replace(rec, Files.readString(rec).replace("\"" + ParamsIO.FORMAT_FIELD + "\" : 1",
                "\"" + ParamsIO.FORMAT_FIELD + "\" : 2").getBytes());
        String msg = refusal(dir, () -> GpuKMeansModel.load(dir.toString()));
        assertTrue(msg.contains("format 2") && msg.contains("reads formats up to 1"), msg);
        // the metadata's own field, once the record is gone
        Files.delete(rec);
        Path md = metadataFile(dir);
        replace(md, Files.readString(md).replace("\"" + ParamsIO.FORMAT_FIELD + "\":1",
                "\"" + ParamsIO.FORMAT_FIELD + "\":7").getBytes());
        assertTrue(refusal(dir, () -> GpuKMeansModel.load(dir.toString())).contains("format 7"));
    }

    private static Path metadataFile(Path model) throws IOException {
        try (Stream<Path> s = Files.list(model.resolve("metadata"))) {
            return s.filter(p -> p.getFileName().toString().startsWith("part-")).findFirst().orElseThrow();
        }
    }

    @Test
    void truncatedCorruptedMissingOrAddedFilesAreRefused() throws Exception {
        Path a = savedKMeans("truncated");
        Path data = dataFile(a);
        byte[] bytes = Files.readAllBytes(data);
        replace(data, java.util.Arrays.copyOf(bytes, bytes.length - 1));
        String msg = refusal(a, () -> GpuKMeansModel.load(a.toString()));
        assertTrue(msg.contains(a.relativize(data).toString()) && msg.contains("truncated"), msg);

        Path b = savedKMeans("flipped");
        Path bd = dataFile(b);
        byte[] flipped = Files.readAllBytes(bd);
        flipped[flipped.length / 2] ^= 0x01;
        replace(bd, flipped);
        msg = refusal(b, () -> GpuKMeansModel.load(b.toString()));
        assertTrue(msg.contains("does not match the SHA-256 digest") && msg.contains("corrupted"), msg);

        Path c = savedKMeans("added");
        Files.copy(dataFile(c), c.resolve("data/part-99999-extra.parquet"));
        msg = refusal(c, () -> GpuKMeansModel.load(c.toString()));
        assertTrue(msg.contains("data/part-99999-extra.parquet was not part of the saved object"), msg);

        Path d = savedKMeans("missing");
        Files.delete(dataFile(d));
        assertTrue(refusal(d, () -> GpuKMeansModel.load(d.toString())).contains("is missing"));
    }

    @Test
    void aModelSavedBeforeTheRecordStillLoads() throws Exception {
        Path dir = savedKMeans("legacy");
        Files.delete(dir.resolve(ParamsIO.INTEGRITY));
        Path md = metadataFile(dir);
        String old = Files.readString(md).replace("\"" + ParamsIO.FORMAT_FIELD + "\":1,", "")
                .replace("\"" + ParamsIO.CAPABILITY_FIELD + "\":\"kmeans model\",", "");
        assertTrue(!old.contains(ParamsIO.FORMAT_FIELD) && !old.contains(ParamsIO.CAPABILITY_FIELD), old);
        replace(md, old.getBytes());
        assertArrayEquals(CENTRES, GpuKMeansModel.load(dir.toString()).clusterCentersArray());
    }

    @Test
    void dataBreakingAnInvariantOfAFitIsRefused() throws Exception {
        // t-SNE ids must be unique: a duplicate id would return another point's coordinates
        Path tsne = tmp.resolve("tsne");
        new GpuTsneModel("ts", new Object[] {1L, 2L, 1L}, DataTypes.LongType, new double[] {0, 1, 2, 3, 4, 5}, 2)
                .write().save(tsne.toString());
        String msg = refusal(tsne, () -> GpuTsneModel.load(tsne.toString()));
        assertTrue(msg.contains("ids must be unique") && msg.contains("row 2 repeats the id of row 0"), msg);
        List<String> names;
        try (Stream<Path> s = Files.list(tsne)) {
            names = s.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
        assertTrue(names.contains(ParamsIO.INTEGRITY), names.toString());
    }
}
