package io.sparkgpu.jobs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/lib/classpath.sh}, which {@code bin/sparkgpu} and the notebook kernel use: a checkout moved or
 * copied after its build runs its own module jars, never the original tree's, and a class path naming missing
 * jars is reported (the launcher then rebuilds).
 */
class LauncherClassPathTest {
    @TempDir
    Path tmp;

    @Test
    void moduleJarsResolveAgainstTheCheckoutThatRuns() throws Exception {
        Path copy = tmp.resolve("copied checkout");
        Path m2 = Files.createDirectories(tmp.resolve("m2/org/x"));
        Path dep = Files.createFile(m2.resolve("dep-1.0.jar"));
        for (String module : List.of("spark-gpu", "native-kernels")) {
            Files.createDirectories(copy.resolve(module).resolve("target"));
            Files.createFile(copy.resolve(module).resolve("target").resolve(module + "-0.1.0-SNAPSHOT.jar"));
        }
        // written by a build in another directory, which no longer exists
        Path cp = tmp.resolve("classpath.txt");
        Files.writeString(cp, "/gone/tree/spark-gpu/target/spark-gpu-0.1.0-SNAPSHOT.jar:"
                + "/gone/tree/native-kernels/target/native-kernels-0.1.0-SNAPSHOT.jar:" + dep + "\n");
        Result r = classpath(copy, cp);
        assertEquals(0, r.status, r.err);
        assertEquals(copy + "/spark-gpu/target/spark-gpu-0.1.0-SNAPSHOT.jar:"
                + copy + "/native-kernels/target/native-kernels-0.1.0-SNAPSHOT.jar:" + dep, r.out);
    }

    @Test
    void aMissingJarIsReportedNotSkipped() throws Exception {
        Path root = Files.createDirectories(tmp.resolve("root"));
        Path cp = tmp.resolve("classpath.txt");
        Files.writeString(cp, tmp.resolve("m2/purged-2.0.jar") + "\n");
        Result r = classpath(root, cp);
        assertEquals(1, r.status, r.out);
        assertTrue(r.err.contains("class path entry missing: " + tmp.resolve("m2/purged-2.0.jar")), r.err);
        assertEquals("", r.out);
    }

    private record Result(int status, String out, String err) {
    }

    private static Result classpath(Path root, Path cpFile) throws Exception {
        Path lib = Paths.get("..", "scripts", "lib", "classpath.sh").toAbsolutePath().normalize();
        assertTrue(Files.isRegularFile(lib), lib.toString());
        ProcessBuilder pb = new ProcessBuilder("/bin/bash", "-c", ". \"$1\"; sparkgpu_classpath \"$2\" \"$3\"", "sh",
                lib.toString(), root.toString(), cpFile.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        return new Result(p.exitValue(), out, err);
    }
}
