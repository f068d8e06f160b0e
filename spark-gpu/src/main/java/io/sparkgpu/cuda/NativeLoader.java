package io.sparkgpu.cuda;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Loads JCuda's driver-API JNI library from a private per-user directory.
 *
 * <p>JCuda extracts its native library into {@code java.io.tmpdir} under a fixed name and reuses whatever
 * file already has that name, which on a shared host lets another user plant a library. We extract it
 * ourselves into a directory only the current user can write, verified by SHA-256, and let JCuda load it
 * from there by pointing {@code java.io.tmpdir} at that directory for the duration of JCuda's class
 * initialisation (under a global lock).
 *
 * <p>The directory rules ({@link #checkDirectory}): a directory we create is created private (0700); an
 * existing one is never chmodded (it may be shared on purpose); it is refused when someone else owns it or
 * when it is group- or world-writable without the sticky bit. JCuda tries {@code java.library.path} before
 * its own extraction, so a copy of the library found there must have the shipped digest too, and after
 * loading, the file the process actually mapped ({@code /proc/self/maps}) is checked again.
 */
final class NativeLoader {
    private static final String JCUDA_VERSION = "12.6.0";
    static final String DRIVER_LIB = "libJCudaDriver-" + JCUDA_VERSION + "-linux-x86_64.so";
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
        byte[] content = resource("/lib/" + DRIVER_LIB);
        String digest = sha256(content);
        checkLibraryPath(System.getProperty("java.library.path", ""), digest);
        Path dir = privateDirectory();
        extract(content, digest, dir.resolve(DRIVER_LIB));
        String previous = System.getProperty("java.io.tmpdir");
        synchronized (System.class) {
            try {
                System.setProperty("java.io.tmpdir", dir.toString());
                jcuda.driver.JCudaDriver.setExceptionsEnabled(true);
            } finally {
                System.setProperty("java.io.tmpdir", previous);
            }
        }
        checkMapped(Paths.get("/proc/self/maps"), digest);
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
        return ensurePrivate(dir.toAbsolutePath().normalize());
    }

    /** Creates {@code dir} private (0700) when missing, else leaves its mode alone; then {@link #checkDirectory}. */
    static Path ensurePrivate(Path dir) {
        try {
            if (!Files.exists(dir)) {
                Path parent = dir.getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                try {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(PRIVATE));
                    Files.setPosixFilePermissions(dir, PRIVATE); // the umask may have removed bits: ours, so set them
                } catch (FileAlreadyExistsException raced) {
                    // created meanwhile by another task or process: checked like any existing directory
                }
            }
        } catch (IOException | UnsupportedOperationException e) {
            throw new CudaException("cannot create private native library directory " + dir + " (set "
                    + SparkGpuConf.NATIVE_DIR + " to a directory you own): " + e.getMessage(), e);
        }
        checkDirectory(dir, System.getProperty("user.name"));
        return dir;
    }

    private static final Set<PosixFilePermission> PRIVATE = PosixFilePermissions.fromString("rwx------");
    private static final int STICKY = 01000;
    private static final int GROUP_OR_WORLD_WRITE = 0022;

    /**
     * Refuses (with the setting to change) a native directory that is not a directory, belongs to someone other
     * than {@code user}, or is group- or world-writable without the sticky bit: another user could replace the
     * library between our digest check and its loading.
     */
    static void checkDirectory(Path dir, String user) {
        String fix = "; set " + SparkGpuConf.NATIVE_DIR + " to a directory you own that others cannot write";
        try {
            Path real = dir.toRealPath();
            if (!Files.isDirectory(real)) {
                throw new CudaException("native library directory " + dir + " is not a directory" + fix);
            }
            String owner = Files.getOwner(real).getName();
            if (!owner.equals(user)) {
                throw new CudaException("native library directory " + dir + " is owned by " + owner + ", not by "
                        + user + fix);
            }
            int mode = (Integer) Files.getAttribute(real, "unix:mode");
            if ((mode & GROUP_OR_WORLD_WRITE) != 0 && (mode & STICKY) == 0) {
                throw new CudaException(String.format(Locale.ROOT,
                        "native library directory %s is group- or world-writable (mode %04o) without the sticky bit%s",
                        dir, mode & 07777, fix));
            }
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            throw new CudaException("cannot check native library directory " + dir + ": " + e.getMessage() + fix, e);
        }
    }

    /**
     * JCuda loads a library of the same name from {@code java.library.path} in preference to its own: every such
     * copy must be the shipped one.
     */
    static void checkLibraryPath(String libraryPath, String digest) {
        for (String entry : libraryPath.split(java.io.File.pathSeparator)) {
            if (entry.isBlank()) {
                continue;
            }
            Path candidate = Paths.get(entry, DRIVER_LIB);
            if (Files.isRegularFile(candidate) && !digest.equals(fileDigest(candidate))) {
                throw new CudaException("refusing JCuda's native library: " + candidate + " (on java.library.path, "
                        + "which JCuda would load first) differs from the one shipped with spark-gpu; remove it or fix "
                        + "java.library.path");
            }
        }
    }

    /** After loading: every mapped file named like the library must have the shipped digest. */
    static void checkMapped(Path maps, String digest) {
        List<String> lines;
        try {
            lines = Files.readAllLines(maps);
        } catch (IOException e) {
            throw new CudaException("cannot read " + maps + " to verify the loaded JCuda library: " + e.getMessage(), e);
        }
        Set<String> seen = new TreeSet<>();
        for (String line : lines) {
            int slash = line.indexOf('/');
            if (slash < 0 || !line.endsWith("/" + DRIVER_LIB)) {
                continue;
            }
            String file = line.substring(slash);
            if (seen.add(file) && !digest.equals(fileDigest(Paths.get(file)))) {
                throw new CudaException("the loaded JCuda native library " + file
                        + " differs from the one shipped with spark-gpu; the GPU is not used");
            }
        }
        if (seen.isEmpty()) {
            throw new CudaException("JCuda's native library " + DRIVER_LIB + " is not mapped after loading (" + maps
                    + "); cannot verify it");
        }
    }

    private static byte[] resource(String resource) {
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new CudaException("JCuda native library " + resource
                        + " is not on the classpath (add org.jcuda:jcuda-natives:" + JCUDA_VERSION + ":linux-x86_64)");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new CudaException("cannot read " + resource + ": " + e.getMessage(), e);
        }
    }

    private static void extract(byte[] content, String digest, Path target) {
        try {
            if (Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS) && digest.equals(fileDigest(target))) {
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
            throw new CudaException("cannot unpack " + DRIVER_LIB + " to " + target + ": " + e.getMessage(), e);
        }
    }

    /** SHA-256 of a file, or "" when it cannot be read (never equal to a digest). */
    static String fileDigest(Path file) {
        try {
            return sha256(Files.readAllBytes(file));
        } catch (IOException e) {
            return "";
        }
    }

    static String sha256(byte[] b) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(b));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
