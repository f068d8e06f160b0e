package io.sparkgpu.testutil;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code #define}s of a CUDA header of native-kernels, read from the source tree and evaluated as the C
 * preprocessor and compiler would: macros are expanded textually (function-like ones with their arguments), then the
 * integer expression is evaluated in 64-bit arithmetic (+ - * / % &amp; | ^ ~ ! &lt;&lt; &gt;&gt;, comparisons,
 * &amp;&amp; ||, ?:). The layout tests ({@code *KernelLayoutTest}) compare these with the Java constants and
 * functions that mirror them, so a size changed on one side only fails the build instead of corrupting memory.
 *
 * <p>The source tree is found from the working directory (Maven runs tests in the module directory, so
 * {@code ../native-kernels}) or from the system property {@code sparkgpu.cudaSourceDir}; there is no fallback, a
 * missing tree fails the test.
 */
public final class KernelHeader {
    private static final Pattern DEFINE = Pattern.compile("^\\s*#\\s*define\\s+(\\w+)(\\(([^)]*)\\))?(?:\\s+(.*))?$");
    private static final Pattern TOKEN = Pattern.compile("\\s*(0[xX][0-9a-fA-F]+[uUlL]*"
            + "|\\d+(?:\\.\\d*)?(?:[eE][-+]?\\d+)?[uUlLfF]*|\\w+|<<|>>|<=|>=|==|!=|&&|\\|\\||[-+*/%&|^~!<>?:(),])");

    private final String name;
    private final Map<String, Macro> macros = new LinkedHashMap<>();
    private final Set<String> used = new HashSet<>();

    private static final class Macro {
        final List<String> params; // null: object-like
        final List<String> body;
        final String text;

        Macro(List<String> params, String text) {
            this.params = params;
            this.text = text;
            this.body = tokenize(text);
        }
    }

    private KernelHeader(String name, String text) {
        this.name = name;
        for (String line : logicalLines(text)) {
            Matcher m = DEFINE.matcher(line);
            if (!m.matches()) {
                continue;
            }
            List<String> params = null;
            if (m.group(2) != null) {
                params = new ArrayList<>();
                for (String p : m.group(3).split(",")) {
                    if (!p.trim().isEmpty()) {
                        params.add(p.trim());
                    }
                }
            }
            String body = m.group(4) == null ? "" : m.group(4).trim();
            if (macros.put(m.group(1), new Macro(params, body)) != null) {
                throw new IllegalStateException(name + ": " + m.group(1) + " defined twice");
            }
        }
    }

    /** The directory native-kernels/src/main/cuda of this checkout. */
    public static Path cudaDir() {
        String prop = System.getProperty("sparkgpu.cudaSourceDir");
        if (prop != null) {
            return Paths.get(prop);
        }
        Path dir = Paths.get("").toAbsolutePath();
        for (Path d = dir; d != null; d = d.getParent()) {
            Path c = d.resolve("native-kernels").resolve("src").resolve("main").resolve("cuda");
            if (Files.isDirectory(c)) {
                return c;
            }
        }
        throw new IllegalStateException("native-kernels/src/main/cuda not found above " + dir
                + " (set -Dsparkgpu.cudaSourceDir)");
    }

    /** The text of a file under native-kernels/src/main/cuda, e.g. "kmeans.cu" or "include/layout/tsne.cuh". */
    public static String source(String relative) {
        try {
            return new String(Files.readAllBytes(cudaDir().resolve(relative)), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The macros of a header under native-kernels/src/main/cuda. */
    public static KernelHeader load(String relative) {
        return parse(relative, source(relative));
    }

    /** The macros of header text (for tests of this class). */
    public static KernelHeader parse(String name, String text) {
        return new KernelHeader(name, text);
    }

    /** Names of all macros, in order of definition. */
    public Set<String> names() {
        return macros.keySet();
    }

    /** An object-like macro's integer value. */
    public long value(String macro) {
        return eval(macro);
    }

    /** The integer value of {@code macro(args...)} (no arguments: an object-like macro). */
    public long eval(String macro, long... args) {
        Macro m = macros.get(macro);
        if (m == null) {
            throw new IllegalArgumentException(name + " has no macro " + macro);
        }
        int want = m.params == null ? 0 : m.params.size();
        if (want != args.length) {
            throw new IllegalArgumentException(macro + " takes " + want + " arguments, got " + args.length);
        }
        List<String> call = new ArrayList<>();
        call.add(macro);
        if (m.params != null) {
            call.add("(");
            for (int i = 0; i < args.length; i++) {
                if (i > 0) {
                    call.add(",");
                }
                call.add("(");
                call.addAll(tokenize(Long.toString(args[i])));
                call.add(")");
            }
            call.add(")");
        }
        return new Evaluator(expand(call, new HashSet<>(), 0)).parse();
    }

    /** An object-like macro defined as a floating-point literal. */
    public double doubleValue(String macro) {
        Macro m = macros.get(macro);
        if (m == null || m.params != null) {
            throw new IllegalArgumentException(name + " has no object-like macro " + macro);
        }
        used.add(macro);
        return Double.parseDouble(m.text.replaceAll("[fFlL]$", ""));
    }

    /** Fails unless every macro of the header has been evaluated, directly or inside another one. */
    public void assertAllCompared() {
        Set<String> missing = new TreeSet<>(macros.keySet());
        missing.removeAll(used);
        assertTrue(missing.isEmpty(), name + ": macros not compared with the Java side: " + missing);
    }

    /** assertEquals of a macro's value and the Java side's. */
    public void assertValue(String macro, long java) {
        assertEquals(value(macro), java, name + ": " + macro + " differs from the Java constant");
    }

    // ------------------------------------------------------------------------------------------ preprocessing

    private static List<String> logicalLines(String text) {
        String s = text.replaceAll("(?s)/\\*.*?\\*/", " ").replaceAll("//[^\n]*", "");
        s = s.replace("\\\r\n", " ").replace("\\\n", " ");
        List<String> out = new ArrayList<>();
        for (String l : s.split("\n")) {
            out.add(l);
        }
        return out;
    }

    static List<String> tokenize(String s) {
        List<String> out = new ArrayList<>();
        Matcher m = TOKEN.matcher(s);
        int at = 0;
        while (at < s.length()) {
            if (s.substring(at).trim().isEmpty()) {
                break;
            }
            if (!m.find(at) || m.start() != at) {
                throw new IllegalArgumentException("cannot read '" + s.substring(at) + "'");
            }
            out.add(m.group(1));
            at = m.end();
        }
        return out;
    }

    /** Macro expansion: arguments are expanded first, substituted, and the result is rescanned. */
    private List<String> expand(List<String> in, Set<String> disabled, int depth) {
        if (depth > 64) {
            throw new IllegalStateException(name + ": macro expansion too deep");
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < in.size(); i++) {
            String t = in.get(i);
            Macro m = macros.get(t);
            if (m == null || disabled.contains(t)) {
                out.add(t);
                continue;
            }
            used.add(t);
            Set<String> inner = new HashSet<>(disabled);
            inner.add(t);
            if (m.params == null) {
                out.addAll(expand(m.body, inner, depth + 1));
                continue;
            }
            if (i + 1 >= in.size() || !in.get(i + 1).equals("(")) {
                throw new IllegalArgumentException(name + ": " + t + " used without arguments");
            }
            List<List<String>> args = new ArrayList<>();
            List<String> cur = new ArrayList<>();
            int level = 0;
            int j = i + 2;
            for (; j < in.size(); j++) {
                String a = in.get(j);
                if (a.equals("(")) {
                    level++;
                } else if (a.equals(")")) {
                    if (level == 0) {
                        break;
                    }
                    level--;
                } else if (a.equals(",") && level == 0) {
                    args.add(cur);
                    cur = new ArrayList<>();
                    continue;
                }
                cur.add(a);
            }
            if (j >= in.size()) {
                throw new IllegalArgumentException(name + ": unbalanced arguments of " + t);
            }
            if (!cur.isEmpty() || !args.isEmpty()) {
                args.add(cur);
            }
            if (args.size() != m.params.size()) {
                throw new IllegalArgumentException(name + ": " + t + " takes " + m.params.size() + " arguments");
            }
            List<String> body = new ArrayList<>();
            for (String b : m.body) {
                int p = m.params.indexOf(b);
                if (p >= 0) {
                    body.addAll(expand(args.get(p), disabled, depth + 1));
                } else {
                    body.add(b);
                }
            }
            out.addAll(expand(body, inner, depth + 1));
            i = j;
        }
        return out;
    }

    /** Recursive-descent evaluation of a C integer constant expression. */
    private final class Evaluator {
        private final List<String> t;
        private int at;

        Evaluator(List<String> tokens) {
            this.t = tokens;
        }

        long parse() {
            long v = ternary();
            if (at != t.size()) {
                throw new IllegalArgumentException(name + ": unexpected '" + t.get(at) + "' in " + t);
            }
            return v;
        }

        private boolean eat(String s) {
            if (at < t.size() && t.get(at).equals(s)) {
                at++;
                return true;
            }
            return false;
        }

        private long ternary() {
            long c = logicalOr();
            if (eat("?")) {
                long a = ternary();
                if (!eat(":")) {
                    throw new IllegalArgumentException(name + ": ':' expected in " + t);
                }
                long b = ternary();
                return c != 0 ? a : b;
            }
            return c;
        }

        private long logicalOr() {
            long v = logicalAnd();
            while (eat("||")) {
                long r = logicalAnd();
                v = (v != 0 || r != 0) ? 1 : 0;
            }
            return v;
        }

        private long logicalAnd() {
            long v = bitOr();
            while (eat("&&")) {
                long r = bitOr();
                v = (v != 0 && r != 0) ? 1 : 0;
            }
            return v;
        }

        private long bitOr() {
            long v = bitXor();
            while (eat("|")) {
                v |= bitXor();
            }
            return v;
        }

        private long bitXor() {
            long v = bitAnd();
            while (eat("^")) {
                v ^= bitAnd();
            }
            return v;
        }

        private long bitAnd() {
            long v = equality();
            while (eat("&")) {
                v &= equality();
            }
            return v;
        }

        private long equality() {
            long v = relational();
            while (true) {
                if (eat("==")) {
                    v = v == relational() ? 1 : 0;
                } else if (eat("!=")) {
                    v = v != relational() ? 1 : 0;
                } else {
                    return v;
                }
            }
        }

        private long relational() {
            long v = shift();
            while (true) {
                if (eat("<")) {
                    v = v < shift() ? 1 : 0;
                } else if (eat("<=")) {
                    v = v <= shift() ? 1 : 0;
                } else if (eat(">")) {
                    v = v > shift() ? 1 : 0;
                } else if (eat(">=")) {
                    v = v >= shift() ? 1 : 0;
                } else {
                    return v;
                }
            }
        }

        private long shift() {
            long v = additive();
            while (true) {
                if (eat("<<")) {
                    v <<= additive();
                } else if (eat(">>")) {
                    v >>= additive();
                } else {
                    return v;
                }
            }
        }

        private long additive() {
            long v = multiplicative();
            while (true) {
                if (eat("+")) {
                    v += multiplicative();
                } else if (eat("-")) {
                    v -= multiplicative();
                } else {
                    return v;
                }
            }
        }

        private long multiplicative() {
            long v = unary();
            while (true) {
                if (eat("*")) {
                    v *= unary();
                } else if (eat("/")) {
                    v /= unary();
                } else if (eat("%")) {
                    v %= unary();
                } else {
                    return v;
                }
            }
        }

        private long unary() {
            if (eat("-")) {
                return -unary();
            }
            if (eat("+")) {
                return unary();
            }
            if (eat("~")) {
                return ~unary();
            }
            if (eat("!")) {
                return unary() == 0 ? 1 : 0;
            }
            return primary();
        }

        private long primary() {
            if (at >= t.size()) {
                throw new IllegalArgumentException(name + ": expression ends early: " + t);
            }
            if (eat("(")) {
                long v = ternary();
                if (!eat(")")) {
                    throw new IllegalArgumentException(name + ": ')' expected in " + t);
                }
                return v;
            }
            String tok = t.get(at++);
            String num = tok.replaceAll("[uUlL]+$", "");
            if (num.startsWith("0x") || num.startsWith("0X")) {
                return Long.parseUnsignedLong(num.substring(2), 16);
            }
            if (num.matches("\\d+")) {
                return Long.parseLong(num);
            }
            throw new IllegalArgumentException(name + ": '" + tok + "' is not an integer constant in " + t);
        }
    }
}
