package io.sparkgpu.jobs;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.ml.util.MLWritable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SaveMode;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;

/**
 * One output of a CLI command, made safe (see docs/architecture.md, "Outputs"). {@link #check} runs before any work:
 * the path is resolved (relative paths, {@code .}/{@code ..}, trailing slashes, {@code file:}, symbolic links) and
 * refused when it is an input, contains an input, lies inside an input, overlaps another output of the same run,
 * exists without {@code --overwrite}, or exists but does not look like an output of its {@link Kind} (unless empty).
 * The {@code write*} methods then write the complete output to a hidden temporary sibling (same parent directory)
 * and move it into place only when it is complete; with {@code --overwrite} the previous output is first renamed
 * aside and deleted only after the new one is in place. On any failure the temporary sibling is removed and the
 * previous output is left (or put back) as it was. Works through Hadoop's {@link FileSystem}, so local paths and
 * HDFS alike.
 *
 * <p>A process killed while writing (no {@code finally} runs) can leave hidden siblings behind; {@link #check}
 * repairs that before the next run's work ({@link #recover}): when the target is missing because the kill came
 * between moving the previous output aside and moving the new one in, the previous output is moved back; every
 * other leftover sibling of the target (an unfinished or never-committed new output, a previous output that was
 * already replaced) is deleted. Each repair is reported in {@link #notes}. One run per output at a time: a run
 * started on an output that another is still writing removes that one's temporary sibling, so the other fails
 * (without touching the target).
 */
final class SafeOutput {
    /** What an output is, which decides what an existing target must look like to be replaced. */
    enum Kind {
        /** A DataFrame written by Spark (Parquet or CSV directory). */
        DATASET("a dataset directory written by Spark (holding _SUCCESS or part-* files)"),
        /** A saved Spark ML model (plus summary.json). */
        MODEL("a saved model directory (holding Spark ML metadata/)"),
        /** One file: PNG, JSON, CSV report. */
        FILE("a file");

        final String looksLike;

        Kind(String looksLike) {
            this.looksLike = looksLike;
        }
    }

    /** Writes the complete output at {@code tmp}, a path of the target's file system that does not exist yet. */
    @FunctionalInterface
    interface Writer {
        void write(String tmp) throws Exception;
    }

    /** Writes the bytes of a one-file output. */
    @FunctionalInterface
    interface StreamWriter {
        void write(OutputStream os) throws Exception;
    }

    /** Marks the hidden siblings this class creates next to a target (temporary output, previous output aside). */
    static final String TMP_MARK = ".sparkgpu-tmp-";
    static final String ASIDE_MARK = ".sparkgpu-old-";

    /** For tests only: runs after the output is complete, before it is moved into place (to inject a failure). */
    static volatile Runnable beforeMoveForTests;

    /**
     * Test-only (issue 18: a process killed mid-write), off unless set (Spark conf or system property):
     * {@code STEP:FILE} makes the run, at that {@link PauseStep} of writing an output, create FILE and then sleep
     * (at most {@link #PAUSE_MILLIS}), so that a test can kill the process at exactly that step.
     */
    static final String PAUSE_KEY = "spark.sparkgpu.test.outputPause";
    static final long PAUSE_MILLIS = 120_000;

    /** The points of {@link #write} where {@link #PAUSE_KEY} can hold a run. */
    enum PauseStep {
        /** A model's data is at the temporary sibling, its summary.json not yet: an unfinished output. */
        WRITING,
        /** The new output is complete at the temporary sibling; the target is untouched. */
        WRITTEN,
        /** The previous output has been moved aside; the new one is not in place yet (the target is missing). */
        ASIDE,
        /** The new output is in place; the previous one, aside, is not deleted yet. */
        MOVED
    }

    final String option;
    /** The path as the user gave it (for messages). */
    final String shown;
    final Kind kind;
    final boolean overwrite;
    private final FileSystem fs;
    /** Qualified, normalised, symbolic links of its existing part resolved. */
    final Path target;
    /** What {@link #recover} repaired for this target (for the user), in order. */
    final List<String> notes = new ArrayList<>();

    private SafeOutput(String option, String shown, Kind kind, boolean overwrite, FileSystem fs, Path target) {
        this.option = option;
        this.shown = shown;
        this.kind = kind;
        this.overwrite = overwrite;
        this.fs = fs;
        this.target = target;
    }

    /** The conventional kind of an option: {@code --model-out} a model, {@code --output} a dataset, others a file. */
    static Kind kindOf(String option) {
        if ("--model-out".equals(option)) {
            return Kind.MODEL;
        }
        return "--output".equals(option) ? Kind.DATASET : Kind.FILE;
    }

    /** A local file option ({@link java.nio.file.Path}) as a {@code file:} URI, so it stays local on any cluster. */
    static String local(java.nio.file.Path file) {
        return file == null ? null : file.toAbsolutePath().toUri().toString();
    }

    /**
     * Checks an output before the work; null {@code path} (not asked for) gives null.
     *
     * @param inputs the command's inputs (files, directories or globs)
     * @param others the outputs already checked in this run (this one must not overlap them)
     * @throws IllegalArgumentException naming {@code option}, the path and the rule, when refused
     */
    static SafeOutput check(Configuration conf, String option, String path, Kind kind, boolean overwrite,
                            Collection<String> inputs, Collection<SafeOutput> others) {
        return check(conf, option, path, path, kind, overwrite, inputs, others);
    }

    /** {@link #check} of a local file given as a {@link java.nio.file.Path} (its {@code file:} URI is used). */
    static SafeOutput checkLocal(Configuration conf, String option, java.nio.file.Path file, Kind kind,
                                 boolean overwrite, Collection<String> inputs, Collection<SafeOutput> others) {
        return file == null ? null : check(conf, option, local(file), file.toString(), kind, overwrite, inputs, others);
    }

    private static SafeOutput check(Configuration conf, String option, String path, String shown, Kind kind,
                                    boolean overwrite, Collection<String> inputs, Collection<SafeOutput> others) {
        if (path == null) {
            return null;
        }
        if (path.isBlank()) {
            throw new IllegalArgumentException(option + ": empty path");
        }
        try {
            FileSystem fs = fileSystem(new Path(path), conf);
            Path t = resolve(fs, path);
            if (t.isRoot()) {
                throw new IllegalArgumentException(option + ": " + shown + " is the root directory; choose a new path");
            }
            for (String in : inputs) {
                if (in == null) {
                    continue;
                }
                for (Path i : resolvedInputs(in, conf)) {
                    String rel = relation(t, i);
                    if (rel != null) {
                        throw new IllegalArgumentException(option + ": " + shown + " " + rel + " the input " + in
                                + (i.toString().equals(in) ? "" : " (" + i + ")")
                                + "; writing there could destroy it: choose another path");
                    }
                }
            }
            for (SafeOutput o : others) {
                if (o != null && relation(t, o.target) != null) {
                    throw new IllegalArgumentException(option + ": " + shown + " " + relation(t, o.target) + " "
                            + o.option + " " + o.shown + "; choose separate paths");
                }
            }
            SafeOutput out = new SafeOutput(option, shown, kind, overwrite, fs, t);
            out.recover();
            try {
                out.checkExisting();
            } catch (IllegalArgumentException e) {
                if (out.notes.isEmpty()) {
                    throw e;
                }
                // the refusal is all the caller sees: say what was repaired first
                throw new IllegalArgumentException(String.join("; ", out.notes) + ". " + e.getMessage(), e);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalArgumentException(option + ": cannot access " + shown + ": " + e.getMessage(), e);
        }
    }

    /** How {@code out} relates to {@code in}, as words, or null when they are apart. */
    private static String relation(Path out, Path in) {
        if (!sameFileSystem(out, in)) {
            return null;
        }
        String o = out.toUri().getPath();
        String i = in.toUri().getPath();
        if (o.equals(i)) {
            return "is";
        }
        if (isAncestor(o, i)) {
            return "contains";
        }
        return isAncestor(i, o) ? "is inside" : null;
    }

    private static boolean isAncestor(String dir, String p) {
        String d = dir.endsWith("/") ? dir : dir + "/";
        return p.startsWith(d);
    }

    private static boolean sameFileSystem(Path a, Path b) {
        return String.valueOf(a.toUri().getScheme()).equalsIgnoreCase(String.valueOf(b.toUri().getScheme()))
                && String.valueOf(a.toUri().getAuthority()).equalsIgnoreCase(String.valueOf(b.toUri().getAuthority()));
    }

    /** The file system of {@code p}; for local paths the raw one (no {@code .crc} sidecars next to user files). */
    private static FileSystem fileSystem(Path p, Configuration conf) throws IOException {
        FileSystem fs = p.getFileSystem(conf);
        return fs instanceof LocalFileSystem ? ((LocalFileSystem) fs).getRaw() : fs;
    }

    /** Every path an input names: the glob's matches, else the path itself; each resolved. */
    private static List<Path> resolvedInputs(String input, Configuration conf) throws IOException {
        FileSystem fs = fileSystem(new Path(input), conf);
        List<Path> out = new ArrayList<>();
        out.add(resolve(fs, input));
        FileStatus[] matches = fs.globStatus(new Path(input));
        if (matches != null) {
            for (FileStatus m : matches) {
                out.add(resolve(fs, m.getPath().toString()));
            }
        }
        return out;
    }

    /**
     * The path the file system will actually use: qualified (scheme, absolute, normalised, no trailing slash) and,
     * for local paths, with the symbolic links of its longest existing prefix resolved.
     */
    static Path resolve(FileSystem fs, String path) throws IOException {
        Path q = fs.makeQualified(new Path(path));
        if (!"file".equalsIgnoreCase(q.toUri().getScheme())) {
            Path existing = q;
            List<String> rest = new ArrayList<>();
            while (existing != null && !fs.exists(existing)) {
                rest.add(0, existing.getName());
                existing = existing.getParent();
            }
            if (existing == null) {
                return q;
            }
            Path p = fs.resolvePath(existing);
            for (String r : rest) {
                p = new Path(p, r);
            }
            return p;
        }
        // Hadoop normalises the path lexically before the operating system sees it: resolve links after that
        java.nio.file.Path local = Paths.get(q.toUri());
        java.nio.file.Path existing = local;
        List<String> rest = new ArrayList<>();
        while (existing != null && !Files.exists(existing)) {
            java.nio.file.Path name = existing.getFileName();
            if (name != null) {
                rest.add(0, name.toString());
            }
            existing = existing.getParent();
        }
        java.nio.file.Path real = existing == null ? local.getRoot() : existing.toRealPath();
        for (String r : rest) {
            real = real.resolve(r);
        }
        // (from a string, not a URI: a directory's URI ends in '/', which a Hadoop Path would keep)
        return fs.makeQualified(new Path("file", null, real.normalize().toString()));
    }

    /** The hidden siblings {@link #write} makes next to the target: {@code .NAME} + a mark + an 8-hex-digit id. */
    private FileStatus[] leftovers() throws IOException {
        Path parent = target.getParent();
        if (parent == null || !fs.exists(parent) || !fs.getFileStatus(parent).isDirectory()) {
            return new FileStatus[0];
        }
        java.util.regex.Pattern own = java.util.regex.Pattern.compile("\\." + java.util.regex.Pattern.quote(
                target.getName()) + "(" + java.util.regex.Pattern.quote(TMP_MARK) + "|"
                + java.util.regex.Pattern.quote(ASIDE_MARK) + ")[0-9a-f]{8}");
        FileStatus[] all = fs.listStatus(parent, p -> own.matcher(p.getName()).matches());
        Arrays.sort(all, (a, b) -> a.getPath().getName().compareTo(b.getPath().getName()));
        return all;
    }

    /**
     * Repairs what a killed run left next to the target (see the class comment): a missing target with one
     * previous output aside gets it back; then every leftover sibling is deleted. Several previous outputs aside
     * of a missing target are refused (which one to keep is the user's choice).
     */
    private void recover() throws IOException {
        FileStatus[] left = leftovers();
        if (left.length == 0) {
            return;
        }
        if (!fs.exists(target)) {
            List<Path> aside = new ArrayList<>();
            for (FileStatus f : left) {
                if (f.getPath().getName().contains(ASIDE_MARK)) {
                    aside.add(f.getPath());
                }
            }
            if (aside.size() > 1) {
                throw new IllegalArgumentException(option + ": " + shown + " is missing and several previous outputs "
                        + "were left aside by runs stopped while replacing it: " + aside + "; move the one to keep "
                        + "back to " + shown + " (or remove them)");
            }
            if (aside.size() == 1) {
                if (!fs.rename(aside.get(0), target)) {
                    throw new IllegalArgumentException(option + ": " + shown + " is missing; the previous output, left "
                            + "aside by a run stopped while replacing it, is at " + aside.get(0) + " and could not be "
                            + "moved back");
                }
                notes.add(option + ": moved the previous " + shown + " back into place from " + aside.get(0).getName()
                        + " (a run was stopped while replacing it)");
                left = leftovers();
            }
        }
        List<String> removed = new ArrayList<>();
        for (FileStatus f : left) {
            if (fs.delete(f.getPath(), true) || !fs.exists(f.getPath())) {
                removed.add(f.getPath().getName());
            }
        }
        if (!removed.isEmpty()) {
            notes.add(option + ": removed what a stopped run left next to " + shown + ": " + String.join(", ", removed));
        }
    }

    /** Refuses an existing target without --overwrite, or one that is not a previous output of this kind. */
    private void checkExisting() throws IOException {
        if (!fs.exists(target)) {
            Path parent = target.getParent();
            if (fs.exists(parent) && !fs.getFileStatus(parent).isDirectory()) {
                throw new IllegalArgumentException(option + ": " + shown + ": its parent " + parent
                        + " is a file, not a directory");
            }
            return;
        }
        if (!overwrite) {
            throw new IllegalArgumentException(option + ": " + shown + " already exists (pass --overwrite to replace it)");
        }
        FileStatus st = fs.getFileStatus(target);
        if (kind == Kind.FILE) {
            if (st.isDirectory()) {
                throw new IllegalArgumentException(option + ": " + shown + " is a directory; --overwrite replaces "
                        + "only a file: choose a file name");
            }
            return;
        }
        if (!st.isDirectory()) {
            throw new IllegalArgumentException(option + ": " + shown + " is a file, not " + kind.looksLike
                    + "; refusing to replace it with --overwrite");
        }
        FileStatus[] children = fs.listStatus(target);
        if (children.length == 0 || looksLikeOutput(children)) {
            return;
        }
        throw new IllegalArgumentException(option + ": " + shown + " is a non-empty directory that is not "
                + kind.looksLike + "; refusing to replace it with --overwrite (remove it yourself or choose "
                + "another path)");
    }

    private boolean looksLikeOutput(FileStatus[] children) {
        for (FileStatus c : children) {
            String name = c.getPath().getName();
            if (kind == Kind.MODEL && c.isDirectory() && name.equals("metadata")) {
                return true;
            }
            if (kind == Kind.DATASET && c.isFile() && (name.equals("_SUCCESS") || name.startsWith("part-"))) {
                return true;
            }
        }
        return false;
    }

    /** The target as a path string for Spark and Hadoop ({@code scheme:/...}). */
    String path() {
        return target.toString();
    }

    /** Writes the output through {@code writer} at a hidden temporary sibling, then moves it into place. */
    void write(Writer writer) throws IOException {
        checkExisting(); // again: the target may have appeared or changed during the work
        Path parent = target.getParent();
        if (!fs.exists(parent) && !fs.mkdirs(parent)) {
            throw new IOException(option + ": cannot create the directory " + parent);
        }
        String id = UUID.randomUUID().toString().substring(0, 8);
        Path tmp = new Path(parent, "." + target.getName() + TMP_MARK + id);
        boolean committed = false;
        try {
            writer.write(tmp.toString());
            if (!fs.exists(tmp)) {
                throw new IOException(option + ": nothing was written for " + shown);
            }
            pauseForTests(PauseStep.WRITTEN);
            Runnable hook = beforeMoveForTests;
            if (hook != null) {
                hook.run();
            }
            moveIntoPlace(tmp, new Path(parent, "." + target.getName() + ASIDE_MARK + id));
            committed = true;
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(option + ": writing " + shown + " failed: " + e.getMessage(), e);
        } finally {
            if (!committed) {
                try {
                    fs.delete(tmp, true);
                } catch (IOException ignored) {
                    // the failure being reported matters more; a hidden temporary sibling may remain
                }
            }
        }
    }

    private void moveIntoPlace(Path tmp, Path aside) throws IOException {
        boolean replacing = fs.exists(target);
        if (replacing) {
            checkExisting();
            if (!fs.rename(target, aside)) {
                throw new IOException(option + ": cannot move the previous " + shown + " aside; it is unchanged");
            }
            pauseForTests(PauseStep.ASIDE);
        }
        IOException failure = null;
        boolean moved;
        try {
            moved = fs.rename(tmp, target);
        } catch (IOException e) {
            moved = false;
            failure = e;
        }
        if (!moved) {
            if (replacing && !fs.rename(aside, target)) {
                throw new IOException(option + ": cannot move the new output into place at " + shown
                        + ", nor the previous one back: it is at " + aside, failure);
            }
            throw new IOException(option + ": cannot move the new output into place at " + shown
                    + (replacing ? "; the previous one is unchanged" : ""), failure);
        }
        if (replacing) {
            pauseForTests(PauseStep.MOVED);
        }
        if (replacing && !fs.delete(aside, true) && fs.exists(aside)) {
            throw new IOException(option + ": " + shown + " is written, but the previous output could not be "
                    + "removed from " + aside);
        }
    }

    /** One-file output from a stream. */
    void writeStream(StreamWriter w) throws IOException {
        write(tmp -> {
            try (OutputStream os = fs.create(new Path(tmp), false)) {
                w.write(os);
            }
        });
    }

    void writeText(String text) throws IOException {
        writeStream(os -> os.write(text.getBytes(StandardCharsets.UTF_8)));
    }

    void writePng(XYChart chart) throws IOException {
        writeStream(os -> BitmapEncoder.saveBitmap(chart, os, BitmapEncoder.BitmapFormat.PNG));
    }

    /** A DataFrame as Parquet or as CSV with a header row. */
    void writeDataset(Dataset<Row> df, String format) throws IOException {
        boolean csv = "csv".equals(format.toLowerCase(Locale.ROOT));
        write(tmp -> df.write().mode(SaveMode.ErrorIfExists).option("header", String.valueOf(csv))
                .format(csv ? "csv" : "parquet").save(tmp));
    }

    /** A model saved by its ML writer, plus {@code summary.json} (may be null) beside its data. */
    void writeModel(MLWritable model, String summaryJson) throws IOException {
        write(tmp -> {
            model.write().save(tmp);
            pauseForTests(PauseStep.WRITING);
            if (summaryJson != null) {
                try (OutputStream os = fs.create(new Path(tmp, ModelOutput.SUMMARY), false)) {
                    os.write(summaryJson.getBytes(StandardCharsets.UTF_8));
                }
            }
        });
    }

    /** {@link #PAUSE_KEY}: at {@code step}, creates the named file and sleeps (to be killed there by a test). */
    static void pauseForTests(PauseStep step) {
        String v = io.sparkgpu.cuda.SparkGpuConf.get(PAUSE_KEY, "").trim();
        if (v.isEmpty()) {
            return;
        }
        int colon = v.indexOf(':');
        PauseStep at;
        try {
            at = PauseStep.valueOf(colon < 0 ? "" : v.substring(0, colon).trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(PAUSE_KEY + " must be STEP:FILE with STEP one of "
                    + Arrays.toString(PauseStep.values()) + ", got '" + v + "'");
        }
        if (at != step) {
            return;
        }
        try {
            Files.writeString(Paths.get(v.substring(colon + 1).trim()), step.name(), StandardCharsets.UTF_8);
            Thread.sleep(PAUSE_MILLIS);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
