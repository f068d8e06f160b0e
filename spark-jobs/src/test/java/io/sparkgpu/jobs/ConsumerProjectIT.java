package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Issue 21 item 4: the library is usable as a dependency. The artifacts this build just packaged (parent POM,
 * native-kernels, spark-gpu_2.13) are laid out as {@code mvn install} would in a fresh local repository, then samples/consumer, a separate
 * project that names the library only by its coordinates, is built by Maven and its program runs a k-means fit.
 * Third-party artifacts come from the build's own local repository (used as a file:// mirror), so no network is
 * needed. An integration test because it needs the packaged jars.
 */
class ConsumerProjectIT {
    static final long LIMIT_MINUTES = 8;

    @Test
    void aSeparateProjectDependsOnTheArtifactByCoordinatesAndFits() throws Exception {
        Path root = Paths.get(System.getProperty("sparkgpu.root", "..")).toAbsolutePath().normalize();
        String version = System.getProperty("sparkgpu.version", "0.1.0-SNAPSHOT");
        Path cache = Paths.get(System.getProperty("sparkgpu.localRepository",
                System.getProperty("user.home") + "/.m2/repository"));
        Path work = root.resolve("spark-jobs/target/consumer-it");
        deleteTree(work);
        Path repo = Files.createDirectories(work.resolve("repo"));
        Path settings = work.resolve("settings.xml");
        Files.writeString(settings, "<settings><mirrors><mirror><id>build-cache</id><mirrorOf>*</mirrorOf><url>"
                + cache.toUri() + "</url></mirror></mirrors></settings>\n", StandardCharsets.UTF_8);
        Path project = work.resolve("consumer");
        copyTree(root.resolve("samples/consumer"), project);

        // what `mvn install` puts into a local repository: the POMs and jars under their coordinates
        String[][] artifacts = {
            {"spark-gpu-parent", "pom.xml", null},
            {"native-kernels", "native-kernels/pom.xml", "native-kernels/target/native-kernels-" + version + ".jar"},
            {"spark-gpu_2.13", "spark-gpu/pom.xml", "spark-gpu/target/spark-gpu-" + version + ".jar"}};
        for (String[] a : artifacts) {
            Path dir = Files.createDirectories(repo.resolve("io/sparkgpu/" + a[0] + "/" + version));
            Files.copy(root.resolve(a[1]), dir.resolve(a[0] + "-" + version + ".pom"));
            if (a[2] != null) {
                Files.copy(root.resolve(a[2]), dir.resolve(a[0] + "-" + version + ".jar"));
            }
        }
        Path cp = work.resolve("classpath.txt");
        mvn(project, settings, repo, work.resolve("build.log"), "-Dsparkgpu.version=" + version, "compile",
                "dependency:build-classpath", "-Dmdep.includeScope=test", "-Dmdep.outputFile=" + cp);
        String classPath = project.resolve("target/classes") + File.pathSeparator
                + Files.readString(cp, StandardCharsets.UTF_8).trim();
        assertTrue(classPath.contains("spark-gpu_2.13-" + version + ".jar"),
                "the consumer's class path has the library by its coordinates: " + classPath);

        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(Arrays.asList(System.getProperty("sparkgpu.jvmOpens", DEFAULT_OPENS).trim().split("\\s+")));
        cmd.addAll(List.of("-Xmx1g", "-cp", classPath, "com.example.FitKMeans"));
        String out = run(cmd, project, work.resolve("run.log"));
        assertTrue(out.contains("CONSUMER OK:") && out.contains(", 2 clusters,"), out);
    }

    static final String DEFAULT_OPENS = "--add-opens=java.base/java.lang=ALL-UNNAMED "
            + "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED "
            + "--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED "
            + "--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED "
            + "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED "
            + "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED "
            + "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED --add-opens=java.base/sun.security.action=ALL-UNNAMED "
            + "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED "
            + "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED -Djdk.reflect.useDirectMethodHandle=false "
            + "-Dio.netty.tryReflectionSetAccessible=true";

    static void mvn(Path dir, Path settings, Path repo, Path log, String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("mvn", "-B", "-q", "-s", settings.toString(),
                "-Dmaven.repo.local=" + repo));
        cmd.addAll(Arrays.asList(args));
        run(cmd, dir, log);
    }

    static String run(List<String> cmd, Path dir, Path log) throws Exception {
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        byte[] bytes = p.getInputStream().readAllBytes();
        boolean done = p.waitFor(LIMIT_MINUTES, TimeUnit.MINUTES);
        String out = new String(bytes, StandardCharsets.UTF_8);
        Files.writeString(log, String.join(" ", cmd) + "\n" + out, StandardCharsets.UTF_8,
                java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        if (!done) {
            p.destroyForcibly();
        }
        assertTrue(done, "timed out: " + cmd);
        String tail = out.length() > 4000 ? out.substring(out.length() - 4000) : out;
        assertEquals(0, p.exitValue(), String.join(" ", cmd) + " failed (log " + log + "):\n" + tail);
        return out;
    }

    static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path f : (Iterable<Path>) s::iterator) {
                Path rel = from.relativize(f);
                if (rel.toString().startsWith("target")) {
                    continue;
                }
                Path t = to.resolve(rel.toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(f, t);
                }
            }
        }
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path f : (Iterable<Path>) s.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(f);
            }
        }
    }
}
