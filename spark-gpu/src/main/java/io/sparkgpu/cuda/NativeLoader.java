package io.sparkgpu.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Loads JCuda's driver-API JNI library from a private per-user directory.
 *
 * <p>JCuda extracts its native library into {@code java.io.tmpdir} under a fixed name and reuses whatever
 * file already has that name, which on a shared host lets another user plant a library. We extract it
 * ourselves into a directory only the current user can access (mode 0700, content verified by SHA-256)
 * and let JCuda load it from there by pointing {@code java.io.tmpdir} at that directory for the duration
 * of JCuda's class initialisation (under a global lock).
 */
final class NativeLoader {
    private static final String JCUDA_VERSION = "12.6.0";
    private static final String DRIVER_LIB = "libJCudaDriver-" + JCUDA_VERSION + "-linux-x86_64.so";
    private static boolean loaded;

    private NativeLoader() {
    }

    static synchronized void loadJCudaDriver() {
        if (loaded) {
            return;
        }
        String os = System.getProperty("os.name", "").toLowerCase();
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            throw new CudaException("GPU backend supports linux-x86_64 only (this JVM: " + os + "/" + arch + ")");
        }
        Path dir = privateDirectory();
        extract("/lib/" + DRIVER_LIB, dir.resolve(DRIVER_LIB));
        String previous = System.getProperty("java.io.tmpdir");
        synchronized (System.class) {
            try {
                System.setProperty("java.io.tmpdir", dir.toString());
                jcuda.driver.JCudaDriver.setExceptionsEnabled(true);
            } finally {
                System.setProperty("java.io.tmpdir", previous);
            }
        }
        loaded = true;
    }

    static Path privateDirectory() {
        String configured = SparkGpuConf.get(SparkGpuConf.NATIVE_DIR, null);
        Path dir;
        if (configured != null && !configured.isBlank()) {
            dir = Paths.get(configured);
        } else {
            String home = System.getProperty("user.home");
            String cache = System.getenv("XDG_CACHE_HOME");
            Path base = cache != null && !cache.isBlank() ? Paths.get(cache)
                    : home != null && !home.isBlank() && Files.isWritable(Paths.get(home)) ? Paths.get(home, ".cache")
                    : Paths.get(System.getProperty("java.io.tmpdir"), "spark-gpu-" + System.getProperty("user.name", "user"));
            dir = base.resolve("spark-gpu").resolve("native-" + JCUDA_VERSION);
        }
        try {
            Files.createDirectories(dir);
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
            if (!Files.getOwner(dir).getName().equals(System.getProperty("user.name"))) {
                throw new CudaException("native library directory " + dir + " is not owned by the current user; set "
                        + SparkGpuConf.NATIVE_DIR + " to a private directory");
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new CudaException("cannot create private native library directory " + dir + " (set "
                    + SparkGpuConf.NATIVE_DIR + "): " + e.getMessage(), e);
        }
        return dir;
    }

    private static void extract(String resource, Path target) {
        byte[] content;
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new CudaException("JCuda native library " + resource
                        + " is not on the classpath (add org.jcuda:jcuda-natives:" + JCUDA_VERSION + ":linux-x86_64)");
            }
            content = in.readAllBytes();
        } catch (IOException e) {
            throw new CudaException("cannot read " + resource + ": " + e.getMessage(), e);
        }
        try {
            if (Files.isRegularFile(target) && sha256(Files.readAllBytes(target)).equals(sha256(content))) {
                return;
            }
            Path tmp = Files.createTempFile(target.getParent(), ".jcuda", ".tmp");
            Files.write(tmp, content);
            try {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException e) {
            throw new CudaException("cannot unpack " + resource + " to " + target + ": " + e.getMessage(), e);
        }
    }

    private static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
