import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.nio.file.Paths;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * Build-time tool of scripts/make-spark-gpu-bundle.sh (run as a single-file program: java TrimJars.java ...).
 *
 * <pre>
 * keeplist --traces DIR --jars DIR --rules FILE --out FILE
 *     Reads -Xlog:class+load traces (every *.log under DIR, driver and executor JVMs) and writes the keep-list:
 *     for every jar of DIR one of "whole" (a rule says so), "drop" (no class of it was loaded) or "packages"
 *     followed by the packages to keep (those a traced class came from, plus the rules' keep-package
 *     entries). The keep-list is committed, so a bundle build is reproducible and its trimming reviewable.
 * trim --keep FILE --jars DIR --out DIR
 *     Writes every jar the keep-list does not drop to the output directory, with all entries STORED
 *     (uncompressed: the solid xz archive compresses them far better than deflate did), class files of
 *     dropped packages removed, native libraries for other platforms removed, the keep-list's
 *     !drop-resources folders removed, service-provider lines naming removed classes removed, and signatures of modified jars
 *     removed. Fails when a jar of DIR has no line in the keep-list (re-trace after a dependency change).
 * modules --traces DIR
 *     Prints the JDK modules that traced classes came from (jrt:/MODULE), one per line.
 * </pre>
 *
 * Rules file lines ('#' starts a comment; GLOB matches the jar's file name):
 * <pre>
 * whole GLOB                      never trimmed (kept whole even if no class was traced)
 * trim GLOB                       package-level trimming (other jars with traced classes are kept whole)
 * trim-classes GLOB               class-level trimming: keep the top-level classes a traced class belongs to
 *                                 (with all their nested, companion and specialised classes: C, C$..., C$$...)
 * keep-package GLOB PREFIX        with trim or trim-classes: keep the packages under PREFIX (a/b/c) whether
 *                                 traced or not
 * drop-resources GLOB PREFIX [unless-class CLASS]
 *                                 remove non-class entries under PREFIX, unless CLASS was traced
 * </pre>
 */
public final class TrimJars {
    private static final Pattern TRACE = Pattern.compile("\\[class,load\\] (\\S+) source: (.*)$");
    /** Native libraries for other platforms than linux x86-64. */
    private static final Pattern FOREIGN_NATIVE = Pattern.compile(
            "(?i).*\\.(dll|dylib|jnilib)$|"
            + "(?i).*(aarch64|aarch_64|arm64|armv7|arm32|\\barm\\b|ppc64|ppc64le|s390x|riscv64|loongarch64|"
            + "freebsd|darwin|mac|osx|windows|win32|win64|sunos|solaris|aix|i386|x86/|linux32|linux/x86/).*\\.(so|a)$");
    /** Marks a keep-list set as top-level classes (trim-classes) rather than packages. */
    static final String CLASSES_MARKER = "<classes>";
    private static final LocalDateTime FIXED_TIME = LocalDateTime.of(2000, 1, 1, 0, 0);

    private TrimJars() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length == 0) {
            usage();
        }
        Map<String, String> opt = new LinkedHashMap<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            opt.put(args[i], args[i + 1]);
        }
        switch (args[0]) {
            case "keeplist":
                keepList(Paths.get(req(opt, "--traces")), Paths.get(req(opt, "--jars")), Rules.read(Paths.get(req(opt, "--rules"))),
                        Paths.get(req(opt, "--out")));
                break;
            case "trim":
                trim(Paths.get(req(opt, "--keep")), Paths.get(req(opt, "--jars")), Paths.get(req(opt, "--out")));
                break;
            case "modules":
                for (String m : readTraces(Paths.get(req(opt, "--traces"))).modules) {
                    System.out.println(m);
                }
                break;
            default:
                usage();
        }
    }

    private static void usage() {
        System.err.println("usage: TrimJars keeplist|trim|modules ... (see the class comment)");
        System.exit(2);
    }

    private static String req(Map<String, String> opt, String key) {
        String v = opt.get(key);
        if (v == null) {
            System.err.println("TrimJars: missing " + key);
            System.exit(2);
        }
        return v;
    }

    // ------------------------------------------------------------------------------------------ rules

    static final class Rules {
        final List<PathMatcher> whole = new ArrayList<>();
        final List<PathMatcher> trim = new ArrayList<>();
        final List<PathMatcher> trimClasses = new ArrayList<>();
        final List<Object[]> keepPackages = new ArrayList<>(); // {matcher, prefix}
        final List<Object[]> dropResources = new ArrayList<>(); // {matcher, prefix, unlessClass or null}

        static PathMatcher glob(String g) {
            return FileSystems.getDefault().getPathMatcher("glob:" + g);
        }

        static boolean matches(PathMatcher m, String jar) {
            return m.matches(Paths.get(jar));
        }

        static Rules read(Path file) throws IOException {
            Rules r = new Rules();
            int no = 0;
            for (String raw : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                no++;
                String line = raw.replaceAll("#.*", "").trim();
                if (line.isEmpty()) {
                    continue;
                }
                String[] f = line.split("\\s+");
                switch (f[0]) {
                    case "whole":
                        r.whole.add(glob(f[1]));
                        break;
                    case "trim":
                        r.trim.add(glob(f[1]));
                        break;
                    case "trim-classes":
                        r.trimClasses.add(glob(f[1]));
                        break;
                    case "keep-package":
                        r.keepPackages.add(new Object[] {glob(f[1]), stripSlash(f[2])});
                        break;
                    case "drop-resources":
                        String unless = f.length >= 5 && f[3].equals("unless-class") ? f[4] : null;
                        r.dropResources.add(new Object[] {glob(f[1]), stripSlash(f[2]), unless});
                        break;
                    default:
                        throw new IllegalArgumentException(file + ":" + no + ": unknown rule '" + f[0] + "'");
                }
            }
            return r;
        }

        static String stripSlash(String p) {
            return p.endsWith("/") ? p.substring(0, p.length() - 1) : p;
        }

        boolean isWhole(String jar) {
            return whole.stream().anyMatch(m -> matches(m, jar));
        }

        boolean isTrimmed(String jar) {
            return trim.stream().anyMatch(m -> matches(m, jar));
        }

        boolean isClassTrimmed(String jar) {
            return trimClasses.stream().anyMatch(m -> matches(m, jar));
        }
    }

    // ------------------------------------------------------------------------------------------ traces

    static final class Traces {
        /** jar file name -> loaded class names (binary names, '.'-separated). */
        final Map<String, Set<String>> classesByJar = new TreeMap<>();
        final Set<String> allClasses = new TreeSet<>();
        final Set<String> modules = new TreeSet<>();
        int files;
    }

    static Traces readTraces(Path dir) throws IOException {
        Traces t = new Traces();
        List<Path> logs;
        try (Stream<Path> s = Files.walk(dir)) {
            logs = s.filter(p -> p.getFileName().toString().endsWith(".log")).sorted().collect(Collectors.toList());
        }
        if (logs.isEmpty()) {
            throw new IllegalStateException("no *.log class-load traces under " + dir);
        }
        for (Path log : logs) {
            t.files++;
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                Matcher m = TRACE.matcher(line);
                if (!m.find()) {
                    continue;
                }
                String cls = m.group(1);
                String src = m.group(2).trim();
                t.allClasses.add(cls);
                if (src.startsWith("jrt:/")) {
                    String mod = src.substring(5);
                    int slash = mod.indexOf('/');
                    t.modules.add(slash < 0 ? mod : mod.substring(0, slash));
                    continue;
                }
                String path = null;
                if (src.startsWith("jar:file:")) {
                    int bang = src.indexOf('!');
                    path = src.substring("jar:file:".length(), bang < 0 ? src.length() : bang);
                } else if (src.startsWith("file:")) {
                    path = src.substring("file:".length());
                }
                if (path == null || !path.endsWith(".jar")) {
                    continue; // shared archive, a directory, or generated (lambda, hidden, codegen) classes
                }
                String jar = Paths.get(path).getFileName().toString();
                t.classesByJar.computeIfAbsent(jar, k -> new TreeSet<>()).add(cls);
            }
        }
        return t;
    }

    static String packageOf(String binaryName) {
        int dot = binaryName.lastIndexOf('.');
        return dot < 0 ? "" : binaryName.substring(0, dot).replace('.', '/');
    }

    // ------------------------------------------------------------------------------------------ keep-list

    static List<Path> jars(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> p.getFileName().toString().endsWith(".jar")).sorted().collect(Collectors.toList());
        }
    }

    static void keepList(Path traceDir, Path jarDir, Rules rules, Path out) throws IOException {
        Traces t = readTraces(traceDir);
        StringBuilder sb = new StringBuilder();
        sb.append("# Keep-list of the Spark GPU bundle: written by scripts/spark-bundle/TrimJars.java keeplist from the\n");
        sb.append("# class-load traces of the bundle's entry points (scripts/make-spark-gpu-bundle.sh --retrace); do not\n");
        sb.append("# edit by hand, change scripts/spark-bundle/trim-rules.txt and re-trace instead.\n");
        sb.append("# ").append(t.files).append(" trace files, ").append(t.allClasses.size()).append(" distinct classes; JDK modules: ")
                .append(String.join(",", t.modules)).append('\n');
        sb.append("# <jar> whole | drop | packages <n> | classes <n>, then one '  <package>' line per kept package, or\n");
        sb.append("# one '  <top-level class>' (or '  <package>/*') line per kept class family, and one\n");
        sb.append("# '  !drop-resources <prefix>' line per resource folder removed (trim-rules.txt drop-resources)\n");
        int whole = 0;
        int drop = 0;
        int trimmed = 0;
        for (Path jar : jars(jarDir)) {
            String name = jar.getFileName().toString();
            Set<String> loaded = t.classesByJar.getOrDefault(name, Set.of());
            if (rules.isWhole(name)) {
                sb.append(name).append(" whole\n");
                whole++;
            } else if (loaded.isEmpty()) {
                sb.append(name).append(" drop\n");
                drop++;
            } else if (rules.isClassTrimmed(name)) {
                Set<String> keepSet = new TreeSet<>();
                for (String c : loaded) {
                    keepSet.add(topLevel(c));
                }
                for (String p : keptByRule(rules, name, packagesOf(jar))) {
                    keepSet.add(p + "/*");
                }
                sb.append(name).append(" classes ").append(keepSet.size()).append('\n');
                for (String c : keepSet) {
                    sb.append("  ").append(c).append('\n');
                }
                trimmed++;
            } else if (!rules.isTrimmed(name)) {
                sb.append(name).append(" whole\n");
                whole++;
            } else {
                Set<String> pkgs = new TreeSet<>();
                for (String c : loaded) {
                    pkgs.add(packageOf(c));
                }
                pkgs.addAll(keptByRule(rules, name, packagesOf(jar)));
                sb.append(name).append(" packages ").append(pkgs.size()).append('\n');
                for (String p : pkgs) {
                    sb.append("  ").append(p.isEmpty() ? "." : p).append('\n');
                }
                trimmed++;
            }
            if (!loaded.isEmpty() || rules.isWhole(name)) {
                for (Object[] dr : rules.dropResources) {
                    String unless = (String) dr[2];
                    if (Rules.matches((PathMatcher) dr[0], name) && (unless == null || !t.allClasses.contains(unless))) {
                        sb.append("  !drop-resources ").append((String) dr[1]).append('\n');
                    }
                }
            }
        }
        Files.writeString(out, sb.toString(), StandardCharsets.UTF_8);
        System.out.printf("keep-list %s: %d jars whole, %d trimmed by package, %d dropped; %d classes traced in %d files%n",
                out, whole, trimmed, drop, t.allClasses.size(), t.files);
    }

    /** The packages of {@code all} that a keep-package rule names for this jar. */
    static Set<String> keptByRule(Rules rules, String jar, Set<String> all) {
        Set<String> out = new TreeSet<>();
        for (Object[] kp : rules.keepPackages) {
            if (Rules.matches((PathMatcher) kp[0], jar)) {
                String prefix = (String) kp[1];
                for (String p : all) {
                    if (p.equals(prefix) || p.startsWith(prefix + "/")) {
                        out.add(p);
                    }
                }
            }
        }
        return out;
    }

    /** a.b.C$D$1 -> a/b/C: the top-level class a (nested, anonymous, companion or specialised) class belongs to. */
    static String topLevel(String binaryName) {
        String internal = binaryName.replace('.', '/');
        int slash = internal.lastIndexOf('/');
        int dollar = internal.indexOf('$', slash + 1);
        return dollar < 0 ? internal : internal.substring(0, dollar);
    }

    /** Packages (a/b/c) holding class files in the jar, multi-release versions folded in. */
    static Set<String> packagesOf(Path jar) throws IOException {
        Set<String> out = new TreeSet<>();
        try (ZipFile z = new ZipFile(jar.toFile())) {
            for (Enumeration<? extends ZipEntry> en = z.entries(); en.hasMoreElements(); ) {
                String n = unversioned(en.nextElement().getName());
                if (n.endsWith(".class")) {
                    int slash = n.lastIndexOf('/');
                    out.add(slash < 0 ? "" : n.substring(0, slash));
                }
            }
        }
        return out;
    }

    static String unversioned(String entry) {
        if (entry.startsWith("META-INF/versions/")) {
            int slash = entry.indexOf('/', "META-INF/versions/".length());
            return slash < 0 ? entry : entry.substring(slash + 1);
        }
        return entry;
    }

    // ------------------------------------------------------------------------------------------ trim

    /** Parsed keep-list: jar -> null for whole, empty set for drop, else the packages. */
    static Map<String, Set<String>> readKeepList(Path file, Map<String, List<String>> dropResources) throws IOException {
        Map<String, Set<String>> keep = new LinkedHashMap<>();
        String current = null;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (line.startsWith("#") || line.isBlank()) {
                continue;
            }
            if (line.startsWith("  !drop-resources ")) {
                dropResources.computeIfAbsent(current, k -> new ArrayList<>()).add(line.trim().split("\\s+")[1]);
                continue;
            }
            if (line.startsWith("  ")) {
                String p = line.trim();
                keep.get(current).add(p.equals(".") ? "" : p);
                continue;
            }
            String[] f = line.trim().split("\\s+");
            current = f[0];
            switch (f[1]) {
                case "whole": keep.put(current, null); break;
                case "drop": keep.put(current, Set.of()); break;
                case "packages": keep.put(current, new TreeSet<>()); break;
                case "classes": keep.put(current, new TreeSet<>(Set.of(CLASSES_MARKER))); break;
                default: throw new IllegalArgumentException(file + ": bad line '" + line + "'");
            }
        }
        return keep;
    }

    static void trim(Path keepFile, Path jarDir, Path outDir) throws IOException {
        Map<String, List<String>> dropResources = new LinkedHashMap<>();
        Map<String, Set<String>> keep = readKeepList(keepFile, dropResources);
        List<String> missing = new ArrayList<>();
        for (Path jar : jars(jarDir)) {
            if (!keep.containsKey(jar.getFileName().toString())) {
                missing.add(jar.getFileName().toString());
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalStateException("no keep-list line for " + missing + " in " + keepFile
                    + ": a dependency changed; re-trace (scripts/make-spark-gpu-bundle.sh --retrace) and commit the new list");
        }
        Files.createDirectories(outDir);
        long in = 0;
        long outBytes = 0;
        int dropped = 0;
        for (Path jar : jars(jarDir)) {
            String name = jar.getFileName().toString();
            Set<String> pkgs = keep.get(name);
            in += Files.size(jar);
            if (pkgs != null && pkgs.isEmpty()) {
                dropped++;
                continue;
            }
            Path target = outDir.resolve(name);
            copyJar(jar, target, pkgs, dropResources.getOrDefault(name, List.of()));
            outBytes += Files.size(target);
        }
        System.out.printf("trimmed %s -> %s: %d jars dropped, %.1f MB of (deflated) jars in, %.1f MB of stored jars out%n",
                jarDir, outDir, dropped, in / 1e6, outBytes / 1e6);
    }

    /** Copies {@code src} to {@code dst} with stored entries; {@code pkgs} null keeps every class. */
    static void copyJar(Path src, Path dst, Set<String> pkgs, List<String> dropPrefixes) throws IOException {
        boolean modified = pkgs != null || !dropPrefixes.isEmpty();
        Set<String> removedClasses = new TreeSet<>();
        try (ZipFile z = new ZipFile(src.toFile())) {
            List<ZipEntry> entries = new ArrayList<>();
            for (Enumeration<? extends ZipEntry> en = z.entries(); en.hasMoreElements(); ) {
                entries.add(en.nextElement());
            }
            List<ZipEntry> kept = new ArrayList<>();
            for (ZipEntry e : entries) {
                String n = e.getName();
                String u = unversioned(n);
                if (u.endsWith(".class") && !u.equals("module-info.class")) {
                    int slash = u.lastIndexOf('/');
                    String pkg = slash < 0 ? "" : u.substring(0, slash);
                    boolean keepIt;
                    if (pkgs == null) {
                        keepIt = true;
                    } else if (pkgs.contains(CLASSES_MARKER)) {
                        keepIt = pkgs.contains(pkg + "/*")
                                || pkgs.contains(topLevel(u.substring(0, u.length() - 6).replace('/', '.')));
                    } else {
                        keepIt = pkgs.contains(pkg);
                    }
                    if (!keepIt) {
                        removedClasses.add(u.substring(0, u.length() - 6).replace('/', '.'));
                        continue;
                    }
                } else if (!e.isDirectory()) {
                    if (FOREIGN_NATIVE.matcher(n).matches()) {
                        modified = true;
                        continue;
                    }
                    boolean drop = false;
                    for (String p : dropPrefixes) {
                        if (n.startsWith(p + "/")) {
                            drop = true;
                        }
                    }
                    if (drop) {
                        continue;
                    }
                }
                kept.add(e);
            }
            try (OutputStream fos = Files.newOutputStream(dst); ZipOutputStream zos = new ZipOutputStream(fos)) {
                zos.setMethod(ZipOutputStream.STORED);
                for (ZipEntry e : kept) {
                    String n = e.getName();
                    if (modified && n.startsWith("META-INF/") && n.matches("META-INF/[^/]+\\.(SF|RSA|DSA|EC)")) {
                        continue; // the signature no longer matches a modified jar
                    }
                    byte[] data = e.isDirectory() ? new byte[0] : readAll(z.getInputStream(e));
                    if (n.startsWith("META-INF/services/") && !e.isDirectory() && !removedClasses.isEmpty()) {
                        data = withoutRemovedProviders(data, removedClasses);
                    }
                    ZipEntry o = new ZipEntry(n);
                    o.setMethod(ZipEntry.STORED);
                    o.setSize(data.length);
                    o.setCompressedSize(data.length);
                    CRC32 crc = new CRC32();
                    crc.update(data);
                    o.setCrc(crc.getValue());
                    o.setTimeLocal(FIXED_TIME);
                    zos.putNextEntry(o);
                    zos.write(data);
                    zos.closeEntry();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot copy " + src, e);
        }
    }

    static byte[] withoutRemovedProviders(byte[] data, Set<String> removed) {
        StringBuilder sb = new StringBuilder();
        for (String line : new String(data, StandardCharsets.UTF_8).split("\n", -1)) {
            String cls = line.replaceAll("#.*", "").trim();
            if (!cls.isEmpty() && removed.contains(cls)) {
                continue;
            }
            sb.append(line).append('\n');
        }
        String s = sb.toString();
        if (s.endsWith("\n\n")) {
            s = s.substring(0, s.length() - 1);
        }
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] readAll(InputStream in) throws IOException {
        try (in) {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            in.transferTo(b);
            return b.toByteArray();
        }
    }
}
