package io.sparkgpu.jobs;

import java.io.PrintWriter;
import java.io.StringWriter;

/** One in-process run of the CLI with its exit code and captured output. */
final class CliRun {
    final int exitCode;
    final String out;
    final String err;

    CliRun(int exitCode, String out, String err) {
        this.exitCode = exitCode;
        this.out = out;
        this.err = err;
    }

    static CliRun of(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SparkGpuCli.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
        return new CliRun(code, out.toString(), err.toString());
    }

    @Override
    public String toString() {
        return "exit " + exitCode + "\n--- stdout\n" + out + "--- stderr\n" + err;
    }
}
