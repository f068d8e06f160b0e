package io.sparkgpu.jobs.bench;

import java.util.function.BiConsumer;

/** The command-line convention of the benchmarks: {@code --name value} or {@code --name=value}, and --help/-h. */
final class BenchArgs {
    private BenchArgs() {
    }

    /**
     * Calls {@code option} with each option name and its value in order; returns true when --help or -h was
     * given. A missing value is an IllegalArgumentException.
     */
    static boolean forEach(String[] args, BiConsumer<String, String> option) {
        boolean help = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                help = true;
                continue;
            }
            String v;
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                v = a.substring(eq + 1);
                a = a.substring(0, eq);
            } else {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("missing value after " + a);
                }
                v = args[++i];
            }
            option.accept(a, v);
        }
        return help;
    }
}
