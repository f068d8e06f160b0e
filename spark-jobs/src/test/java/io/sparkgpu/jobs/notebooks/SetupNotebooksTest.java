package io.sparkgpu.jobs.notebooks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * How scripts/setup-notebooks.sh (and so NotebooksIT, which runs it) provides Jupyter: an existing one when it
 * works, else apt-get when it can, else a failure naming the exact command to run. Run against fakes (jupyter,
 * python3, apt-get, sudo, id on a PATH of their own), so nothing is installed and each case takes milliseconds.
 */
class SetupNotebooksTest {
    private static final String APT = "apt-get install -y --no-install-recommends jupyter-nbconvert jupyter-client "
            + "python3-nbclient";
    private static final String WORKS = "[ \"$*\" = \"nbconvert --version\" ] && exit 0; exit 1";

    @TempDir
    Path tmp;
    private Path bin;
    private Path locations;
    private Map<String, String> extraEnv = Map.of();

    @BeforeEach
    void fakeMachine() throws IOException {
        bin = Files.createDirectories(tmp.resolve("bin"));
        locations = Files.createDirectories(tmp.resolve("places"));
        for (String tool : List.of("dirname", "readlink")) { // what the script needs to find its checkout
            Path real = List.of(Path.of("/usr/bin", tool), Path.of("/bin", tool)).stream().filter(Files::isExecutable)
                    .findFirst().orElseThrow(() -> new IllegalStateException("no " + tool));
            Files.createSymbolicLink(bin.resolve(tool), real);
        }
        fake("id", "echo 1000");
    }

    private void fake(String name, String body) throws IOException {
        fake(bin, name, body);
    }

    private static void fake(Path dir, String name, String body) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, "#!/bin/sh\n" + body + "\n", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    record Run(int rc, String out, String err) {
    }

    private Run setup(String... args) throws Exception {
        Path bash = List.of(Path.of("/bin/bash"), Path.of("/usr/bin/bash")).stream().filter(Files::isExecutable)
                .findFirst().orElseThrow();
        List<String> cmd = new java.util.ArrayList<>(List.of(bash.toString(),
                NotebookPaths.root().resolve("scripts/setup-notebooks.sh").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(tmp.toFile());
        pb.environment().clear();
        pb.environment().put("PATH", bin.toString());
        pb.environment().put("HOME", tmp.toString());
        pb.environment().put("SPARKGPU_JUPYTER_LOCATIONS", locations.toString());
        pb.environment().putAll(extraEnv);
        pb.redirectOutput(tmp.resolve("out.txt").toFile()).redirectError(tmp.resolve("err.txt").toFile());
        Process p = pb.start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "setup-notebooks.sh did not finish");
        return new Run(p.exitValue(), Files.readString(tmp.resolve("out.txt")).strip(),
                Files.readString(tmp.resolve("err.txt")).strip());
    }

    @Test
    void usesAJupyterOnPath() throws Exception {
        fake("jupyter", WORKS);
        fake("apt-get", "exit 1");
        assertEquals(new Run(0, "use: jupyter nbconvert", ""), setup("--plan"));
        assertEquals("jupyter nbconvert", setup("--nbconvert").out);
    }

    @Test
    void usesPythonModulesThenKnownPlaces() throws Exception {
        fake("jupyter", "exit 1"); // on PATH but broken: not used
        fake("python3", "[ \"$*\" = \"-m nbconvert --version\" ] && exit 0; exit 1");
        assertEquals("use: python3 -m nbconvert", setup("--plan").out);
        fake("python3", "[ \"$*\" = \"-m jupyter nbconvert --version\" ] && exit 0; exit 1");
        assertEquals("use: python3 -m jupyter nbconvert", setup("--plan").out);

        fake("python3", "exit 1");
        Path conda = Files.createDirectories(locations.resolve("conda-bin"));
        fake(conda, "jupyter", WORKS);
        extraEnv = Map.of("SPARKGPU_JUPYTER_LOCATIONS", locations + " " + conda);
        assertEquals("use: " + conda + "/jupyter nbconvert", setup("--plan").out);

        fake(bin, "my-nbconvert", "[ \"$*\" = \"--version\" ] && exit 0; exit 1");
        extraEnv = Map.of("SPARKGPU_NBCONVERT", bin.resolve("my-nbconvert").toString());
        assertEquals("use: " + bin.resolve("my-nbconvert"), setup("--plan").out);
    }

    @Test
    void installsWithAptWhenItCan() throws Exception {
        fake("apt-get", "echo \"apt-get $*\" >> \"$HOME/apt.log\"");
        fake("id", "echo 0");
        assertEquals(new Run(0, "apt: " + APT, ""), setup("--plan"));

        fake("id", "echo 1000");
        fake("sudo", "[ \"$1\" = -n ] && shift; [ \"$1\" = true ] && exit 0; echo sudo >> \"$HOME/apt.log\"; exec \"$@\"");
        assertEquals("apt: sudo -n " + APT, setup("--plan").out);

        // the real run calls apt-get (the fake here installs nothing, so it then fails saying so)
        Run r = setup();
        assertEquals(1, r.rc, r.err);
        assertTrue(r.err.contains("no working Jupyter nbconvert after 'sudo -n " + APT + "'"), r.err);
        assertEquals(List.of("sudo", "apt-get update -q", "sudo", APT),
                Files.readAllLines(tmp.resolve("apt.log")));
    }

    @Test
    void failsWithTheExactCommandWhenItCannotInstall() throws Exception {
        fake("apt-get", "echo \"apt-get $*\" >> \"$HOME/apt.log\"");
        fake("sudo", "exit 1"); // no passwordless sudo
        for (String[] args : List.of(new String[] {"--plan"}, new String[0], new String[] {"--nbconvert"})) {
            Run r = setup(args);
            assertEquals(1, r.rc, String.join(" ", args));
            assertTrue(r.err.contains("Install it with:  sudo " + APT + "  "), r.err);
        }
        assertTrue(Files.notExists(tmp.resolve("apt.log")), "apt-get must not run");

        Files.delete(bin.resolve("apt-get")); // not Debian: the pip command
        fake("python3", "exit 1");
        Run r = setup("--plan");
        assertEquals(1, r.rc);
        assertTrue(r.err.contains("Install it with:  python3 -m pip install --user nbconvert nbclient jupyter_client  "),
                r.err);
    }
}
