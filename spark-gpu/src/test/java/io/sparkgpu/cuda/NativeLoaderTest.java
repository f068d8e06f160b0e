package io.sparkgpu.cuda;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The native directory and library rules of {@link NativeLoader} (issue 18, item 5); no GPU needed. */
class NativeLoaderTest {
    private static final String ME = System.getProperty("user.name");

    @TempDir
    Path tmp;

    private static int mode(Path p) throws IOException {
        return (Integer) Files.getAttribute(p, "unix:mode") & 07777;
    }

    @Test
    void aMissingDirectoryIsCreatedPrivate() throws IOException {
        Path dir = tmp.resolve("a/b/native");
        assertEquals(dir, NativeLoader.ensurePrivate(dir));
        assertEquals(0700, mode(dir));
    }

    @Test
    void anExistingDirectoryIsNeverChmodded() throws IOException {
        Path shared = Files.createDirectory(tmp.resolve("shared"));
        Files.setPosixFilePermissions(shared, PosixFilePermissions.fromString("rwxr-xr-x"));
        NativeLoader.ensurePrivate(shared);
        assertEquals(0755, mode(shared), "an existing directory keeps its mode");
    }

    @Test
    void aWritableDirectoryWithoutStickyBitIsRefusedAndLeftAlone() throws IOException {
        Path open = Files.createDirectory(tmp.resolve("open"));
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwxrwx"));
        CudaException e = assertThrows(CudaException.class, () -> NativeLoader.ensurePrivate(open));
        assertTrue(e.getMessage().contains("world-writable (mode 0777) without the sticky bit")
                && e.getMessage().contains(SparkGpuConf.NATIVE_DIR), e.getMessage());
        assertEquals(0777, mode(open), "not chmodded");
        Files.setPosixFilePermissions(open, PosixFilePermissions.fromString("rwxrwx---"));
        assertThrows(CudaException.class, () -> NativeLoader.ensurePrivate(open), "group-writable");
    }

    @Test
    void aWritableDirectoryWithTheStickyBitIsAccepted() throws IOException, InterruptedException {
        Path sticky = Files.createDirectory(tmp.resolve("sticky"));
        Process p = new ProcessBuilder("chmod", "1777", sticky.toString()).start();
        assumeTrue(p.waitFor() == 0, "chmod 1777 not possible here");
        assertEquals(01777, mode(sticky));
        assertDoesNotThrow(() -> NativeLoader.checkDirectory(sticky, ME));
    }

    @Test
    void aDirectoryOfAnotherUserIsRefused() throws IOException {
        Path theirs = Files.createDirectory(tmp.resolve("theirs"));
        // as root the test can give the directory away; otherwise ask the check on behalf of another name
        UserPrincipal nobody;
        try {
            nobody = theirs.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
            Files.setOwner(theirs, nobody);
        } catch (IOException | UnsupportedOperationException e) {
            CudaException x = assertThrows(CudaException.class, () -> NativeLoader.checkDirectory(theirs, "not-" + ME));
            assertTrue(x.getMessage().contains("is owned by " + ME), x.getMessage());
            return;
        }
        CudaException x = assertThrows(CudaException.class, () -> NativeLoader.ensurePrivate(theirs));
        assertTrue(x.getMessage().contains("is owned by nobody"), x.getMessage());
    }

    @Test
    void aFileInsteadOfADirectoryIsRefused() throws IOException {
        Path file = Files.writeString(tmp.resolve("file"), "x");
        assertThrows(CudaException.class, () -> NativeLoader.checkDirectory(file, ME));
    }

    @Test
    void aForeignCopyOnTheLibraryPathIsRefused() throws IOException {
        byte[] shipped = "the shipped library".getBytes(StandardCharsets.UTF_8);
        String digest = NativeLoader.sha256(shipped);
        Path good = Files.createDirectory(tmp.resolve("good"));
        Path bad = Files.createDirectory(tmp.resolve("bad"));
        Files.write(good.resolve(NativeLoader.DRIVER_LIB), shipped);
        Files.writeString(bad.resolve(NativeLoader.DRIVER_LIB), "planted");
        String sep = java.io.File.pathSeparator;
        assertDoesNotThrow(() -> NativeLoader.checkLibraryPath(good + sep + tmp.resolve("none") + sep, digest));
        CudaException e = assertThrows(CudaException.class,
                () -> NativeLoader.checkLibraryPath(good + sep + bad, digest));
        assertTrue(e.getMessage().contains(bad.resolve(NativeLoader.DRIVER_LIB).toString()), e.getMessage());
    }

    @Test
    void theMappedLibraryIsVerified() throws IOException {
        byte[] shipped = "the shipped library".getBytes(StandardCharsets.UTF_8);
        String digest = NativeLoader.sha256(shipped);
        Path lib = Files.write(tmp.resolve(NativeLoader.DRIVER_LIB), shipped);
        Path maps = tmp.resolve("maps");
        Files.writeString(maps, "7f00-7f01 r--p 00000000 08:01 1 /usr/lib/libc.so.6\n"
                + "7f10-7f11 r-xp 00000000 08:01 2 " + lib + "\n");
        assertDoesNotThrow(() -> NativeLoader.checkMapped(maps, digest));
        Files.writeString(lib, "swapped after the check");
        CudaException e = assertThrows(CudaException.class, () -> NativeLoader.checkMapped(maps, digest));
        assertTrue(e.getMessage().contains("differs from the one shipped"), e.getMessage());
        Files.writeString(maps, "7f00-7f01 r--p 00000000 08:01 1 /usr/lib/libc.so.6\n");
        assertThrows(CudaException.class, () -> NativeLoader.checkMapped(maps, digest), "nothing mapped: unverifiable");
    }
}
