package io.sparkgpu.jobs.notebooks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Where the notebooks live, and small helpers the notebook tests share. */
final class NotebookPaths {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String JUPYTER_DIR = "notebooks/jupyter";
    static final String ZEPPELIN_DIR = "notebooks/zeppelin";
    /** The kernelspec that scripts/setup-notebooks.sh installs; every Jupyter notebook must use it. */
    static final String KERNEL_NAME = "sparkgpu-java";
    /** Cell tag of the cells that must show a plot. */
    static final String PLOT_TAG = "plot";

    private NotebookPaths() {
    }

    /**
     * The checkout's root: the {@code sparkgpu.root} system property (set by the build), else the first parent
     * of the working directory that holds notebooks/ and pom.xml.
     */
    static Path root() {
        String configured = System.getProperty("sparkgpu.root");
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured).toAbsolutePath().normalize();
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("notebooks")) && Files.isRegularFile(p.resolve("pom.xml"))) {
                return p;
            }
        }
        throw new IllegalStateException("cannot find the project root (with notebooks/) above "
                + Path.of("").toAbsolutePath() + "; set -Dsparkgpu.root");
    }

    /** Files under {@code dir} (relative to the root) ending in {@code suffix}, sorted, checkpoints left out. */
    static List<Path> files(String dir, String suffix) {
        Path base = root().resolve(dir);
        if (!Files.isDirectory(base)) {
            return List.of();
        }
        try (Stream<Path> s = Files.walk(base)) {
            return s.filter(p -> p.getFileName().toString().endsWith(suffix))
                    .filter(p -> !p.toString().contains(".ipynb_checkpoints"))
                    .filter(Files::isRegularFile)
                    .sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static JsonNode read(Path file) {
        try {
            return JSON.readTree(file.toFile());
        } catch (IOException e) {
            throw new AssertionError(file + " is not valid JSON: " + e.getMessage(), e);
        }
    }

    /** A notebook field that may be a string or a list of strings (nbformat allows both), as one string. */
    static String text(JsonNode node) {
        if (node == null || node.isNull()) {
            return "";
        }
        if (node.isArray()) {
            StringBuilder b = new StringBuilder();
            node.forEach(n -> b.append(n.asText()));
            return b.toString();
        }
        return node.asText();
    }

    static List<String> tags(JsonNode cell) {
        List<String> tags = new ArrayList<>();
        JsonNode t = cell.path("metadata").path("tags");
        if (t.isArray()) {
            t.forEach(n -> tags.add(n.asText()));
        }
        return tags;
    }

    /** A cell's name for messages: its id, else its index, plus its first source line. */
    static String describe(JsonNode cell, int index) {
        String src = text(cell.get("source")).strip();
        int nl = src.indexOf('\n');
        String first = nl < 0 ? src : src.substring(0, nl);
        String id = cell.path("id").asText("");
        return "cell " + (id.isEmpty() ? "#" + index : "'" + id + "'") + " (" + first + ")";
    }

    static String rel(Path file) {
        return root().relativize(file.toAbsolutePath().normalize()).toString();
    }
}
