package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checks and the temporary-sibling writes of {@link SafeOutput}, on the local file system, without Spark. */
class SafeOutputTest {
    private static final Configuration CONF = new Configuration();

    @TempDir
    Path tmp;

    @AfterEach
    void noHook() {
        SafeOutput.beforeMoveForTests = null;
    }

    private static SafeOutput check(String path, SafeOutput.Kind kind, boolean overwrite, String... inputs) {
        return SafeOutput.check(CONF, "--out", path, kind, overwrite, List.of(inputs), List.of());
    }

    private static String refusal(String path, SafeOutput.Kind kind, String... inputs) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> check(path, kind, true, inputs), path);
        assertTrue(e.getMessage().startsWith("--out: "), e.getMessage());
        return e.getMessage();
    }

    /** Every file under {@code dir} (relative name to content), hidden ones included. */
    static Map<String, String> snapshot(Path dir) throws IOException {
        Map<String, String> m = new TreeMap<>();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (Files.isRegularFile(p)) {
                    m.put(dir.relativize(p).toString(), new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1));
                }
            }
        }
        return m;
    }

    @Test
    void everySpellingOfTheInputIsRefused() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path in = Files.writeString(data.resolve("pts.csv"), "a,b\n1,2\n");
        Path link = Files.createSymbolicLink(tmp.resolve("link"), data);
        String relative = Path.of("").toAbsolutePath().relativize(in).toString();
        for (String spelling : new String[] {in.toString(), data + "/./pts.csv", data + "/sub/../pts.csv",
                in.toUri().toString(), "file://" + in, in + "/", in + "//", link.resolve("pts.csv").toString(),
                "./" + relative, relative}) {
            for (SafeOutput.Kind kind : SafeOutput.Kind.values()) {
                String msg = refusal(spelling, kind, in.toString());
                assertTrue(msg.contains(" is the input " + in), msg);
            }
        }
        // the input given through the link or relative, the output plainly
        assertTrue(refusal(in.toString(), SafeOutput.Kind.DATASET, link.resolve("pts.csv").toString())
                .contains("is the input"));
        assertTrue(refusal(in.toString(), SafeOutput.Kind.DATASET, relative).contains("is the input"));
        assertEquals("a,b\n1,2\n", Files.readString(in));
    }

    @Test
    void aDirectoryHoldingAnInputAndAPathInsideAnInputAreRefused() throws Exception {
        Path data = Files.createDirectories(tmp.resolve("data"));
        Path in = Files.writeString(data.resolve("pts.csv"), "a\n1\n");
        for (String parent : new String[] {data.toString(), data + "/", tmp.toString(), link(data).toString()}) {
            String msg = refusal(parent, SafeOutput.Kind.MODEL, in.toString());
            assertTrue(msg.contains(" contains the input " + in), msg);
        }
        // an input directory (or a glob) and a path inside it
        assertTrue(refusal(data.resolve("model").toString(), SafeOutput.Kind.MODEL, data.toString())
                .contains("is inside the input " + data));
        assertTrue(refusal(data.toString(), SafeOutput.Kind.DATASET, tmp + "/da*/*.csv").contains("contains the input"));
        // a sibling whose name starts like the input is apart
        assertNotNull(check(tmp.resolve("data2").toString(), SafeOutput.Kind.MODEL, false, data.toString()));
        // the working directory, as in --model-out . --overwrite: not a model, not empty
        String msg = refusal(".", SafeOutput.Kind.MODEL, in.toString());
        assertTrue(msg.contains("is a non-empty directory that is not a saved model directory"), msg);
    }

    private Path link(Path target) throws IOException {
        return Files.createSymbolicLink(tmp.resolve("to-" + target.getFileName()), target);
    }

    @Test
    void overwriteReplacesOnlyAPreviousOutputOfTheSameKindOrAnEmptyDirectory() throws Exception {
        Path other = Files.createDirectories(tmp.resolve("other"));
        Files.writeString(other.resolve("notes.txt"), "mine");
        for (SafeOutput.Kind kind : new SafeOutput.Kind[] {SafeOutput.Kind.MODEL, SafeOutput.Kind.DATASET}) {
            String msg = refusal(other.toString(), kind);
            assertTrue(msg.contains("is a non-empty directory that is not " + kind.looksLike)
                    && msg.contains("refusing to replace it with --overwrite"), msg);
        }
        assertTrue(refusal(other.resolve("notes.txt").toString(), SafeOutput.Kind.MODEL)
                .contains("is a file, not a saved model directory"));
        assertTrue(refusal(other.toString(), SafeOutput.Kind.FILE).contains("is a directory"));
        IllegalArgumentException exists = assertThrows(IllegalArgumentException.class,
                () -> check(other.resolve("notes.txt").toString(), SafeOutput.Kind.FILE, false));
        assertTrue(exists.getMessage().contains("already exists (pass --overwrite to replace it)"), exists.getMessage());

        assertNotNull(check(Files.createDirectories(tmp.resolve("empty")).toString(), SafeOutput.Kind.MODEL, true));
        Path model = Files.createDirectories(tmp.resolve("model/metadata"));
        assertNotNull(check(model.getParent().toString(), SafeOutput.Kind.MODEL, true));
        assertTrue(refusal(model.getParent().toString(), SafeOutput.Kind.DATASET).contains("not a dataset directory"));
        Path ds = Files.createDirectories(tmp.resolve("ds"));
        Files.writeString(ds.resolve("part-00000.csv"), "x\n");
        assertNotNull(check(ds.toString(), SafeOutput.Kind.DATASET, true));
        assertNotNull(check(other.resolve("notes.txt").toString(), SafeOutput.Kind.FILE, true));
        assertEquals(Map.of("notes.txt", "mine"), snapshot(other));
    }

    @Test
    void outputsOfOneRunMustNotOverlap() throws Exception {
        SafeOutput model = check(tmp.resolve("m").toString(), SafeOutput.Kind.MODEL, false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SafeOutput.check(CONF,
                "--plot", tmp.resolve("m/plot.png").toString(), SafeOutput.Kind.FILE, false, List.of(), List.of(model)));
        assertTrue(e.getMessage().contains("is inside --out " + tmp.resolve("m")), e.getMessage());
    }

    private static void writeDataset(Path dir, String content) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("part-00000.csv"), content);
        Files.writeString(dir.resolve("_SUCCESS"), "");
    }

    @Test
    void overwriteMovesTheNewOutputInAndRemovesTheOldOneAfterwards() throws Exception {
        Path out = tmp.resolve("out");
        writeDataset(out, "old\n");
        SafeOutput t = check(out.toString(), SafeOutput.Kind.DATASET, true);
        t.write(p -> {
            assertTrue(p.contains("/.out" + SafeOutput.TMP_MARK), p);
            assertEquals(Map.of("part-00000.csv", "old\n", "_SUCCESS", ""), snapshot(out), "old intact while writing");
            writeDataset(Path.of(new java.net.URI(p)), "new\n");
        });
        assertEquals(Map.of("part-00000.csv", "new\n", "_SUCCESS", ""), snapshot(out));
        assertEquals(Map.of("out/part-00000.csv", "new\n", "out/_SUCCESS", ""), snapshot(tmp), "no sibling left behind");

        Path png = tmp.resolve("plots/a.png");
        check(png.toString(), SafeOutput.Kind.FILE, false).writeText("first");
        check(png.toString(), SafeOutput.Kind.FILE, true).writeText("second");
        assertEquals(Map.of("a.png", "second"), snapshot(png.getParent()), "no .crc sidecar, no sibling");
    }

    @Test
    void aFailureWhileWritingOrMovingLeavesThePreviousOutputIntact() throws Exception {
        Path out = tmp.resolve("out");
        writeDataset(out, "old\n");
        Map<String, String> before = snapshot(tmp);
        SafeOutput t = check(out.toString(), SafeOutput.Kind.DATASET, true);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> t.write(p -> {
            Path half = Files.createDirectories(Path.of(new java.net.URI(p)));
            Files.writeString(half.resolve("part-00000.csv"), "ne");
            throw new IllegalStateException("disk full (injected)");
        }));
        assertTrue(e.getMessage().contains("disk full (injected)"), e.getMessage());
        assertEquals(before, snapshot(tmp), "old output intact, temporary sibling removed");

        // complete, then failing just before the move
        SafeOutput.beforeMoveForTests = () -> {
            throw new IllegalStateException("killed before the move (injected)");
        };
        assertThrows(IllegalStateException.class, () -> t.write(p -> writeDataset(Path.of(new java.net.URI(p)), "new\n")));
        assertEquals(before, snapshot(tmp));
        SafeOutput.beforeMoveForTests = null;

        // a target that appeared during the work is not replaced without --overwrite
        Path late = tmp.resolve("late.json");
        SafeOutput lateTarget = check(late.toString(), SafeOutput.Kind.FILE, false);
        Files.writeString(late, "someone else's");
        IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> lateTarget.writeText("{}"));
        assertTrue(ex.getMessage().contains("already exists"), ex.getMessage());
        assertEquals("someone else's", Files.readString(late));
        assertFalse(snapshot(tmp).keySet().stream().anyMatch(n -> n.contains(".sparkgpu-")), snapshot(tmp).toString());
    }

    /**
     * What a killed run leaves (no finally block ran), repaired by the next check: a target missing between the two
     * moves gets its previous output back; any other leftover of this target is removed, those of other names are
     * not; several previous outputs aside of a missing target are the user's choice. The real kills, in their own
     * JVM: {@code SafeOutputKillIT}.
     */
    @Test
    void theNextCheckRepairsWhatAKilledRunLeftBehind() throws Exception {
        Path out = tmp.resolve("out");
        Path aside = Files.createDirectories(tmp.resolve(".out" + SafeOutput.ASIDE_MARK + "0123abcd"));
        Files.writeString(aside.resolve("part-00000.csv"), "old\n");
        Path newTmp = Files.createDirectories(tmp.resolve(".out" + SafeOutput.TMP_MARK + "0123abcd"));
        Files.writeString(newTmp.resolve("part-00000.csv"), "new\n");
        Files.writeString(tmp.resolve(".out2" + SafeOutput.TMP_MARK + "0123abcd"), "another target's");
        Files.writeString(tmp.resolve(".out" + SafeOutput.TMP_MARK + "notmine!"), "not our name");

        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> check(out.toString(), SafeOutput.Kind.DATASET, false));
        assertTrue(e.getMessage().startsWith("--out: moved the previous " + out + " back into place from .out"
                + SafeOutput.ASIDE_MARK + "0123abcd") && e.getMessage().contains("already exists (pass --overwrite"),
                e.getMessage());
        assertEquals(Map.of("out/part-00000.csv", "old\n", ".out2" + SafeOutput.TMP_MARK + "0123abcd",
                "another target's", ".out" + SafeOutput.TMP_MARK + "notmine!", "not our name"), snapshot(tmp));

        Files.createDirectories(tmp.resolve(".out" + SafeOutput.ASIDE_MARK + "00000001"));
        SafeOutput t = check(out.toString(), SafeOutput.Kind.DATASET, true);
        assertEquals(List.of("--out: removed what a stopped run left next to " + out + ": .out" + SafeOutput.ASIDE_MARK
                + "00000001"), t.notes);

        Files.move(out, tmp.resolve(".out" + SafeOutput.ASIDE_MARK + "00000002"));
        Files.createDirectories(tmp.resolve(".out" + SafeOutput.ASIDE_MARK + "00000003"));
        assertTrue(refusal(out.toString(), SafeOutput.Kind.DATASET).contains("is missing and several previous "
                + "outputs were left aside"));
        assertTrue(Files.exists(tmp.resolve(".out" + SafeOutput.ASIDE_MARK + "00000002/part-00000.csv")), "kept");
    }
}
