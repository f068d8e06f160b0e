package io.sparkgpu.jobs;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

/** Reading the input of a job and turning the {@code --features} columns into one feature column. */
final class InputData {
    enum Format { auto, csv, parquet }

    private InputData() {
    }

    /** Resolved features: the frame to train on, its feature column and the names of the dimensions (if known). */
    static final class Features {
        final Dataset<Row> df;
        final String column;
        /** Names of the feature dimensions when they came from scalar columns, else null. */
        final List<String> names;
        /** True when {@link #column} was added by us (and must not reach the output). */
        final boolean assembled;

        Features(Dataset<Row> df, String column, List<String> names, boolean assembled) {
            this.df = df;
            this.column = column;
            this.names = names;
            this.assembled = assembled;
        }

        String axisName(int j) {
            return names != null ? names.get(j) : column + "[" + j + "]";
        }

        /**
         * Runs a fit on {@link #df}. The estimator's errors name its feature column; when we assembled it, the user
         * never named it, so the error also says which {@code --features} columns it holds.
         */
        <T> T fit(java.util.function.Supplier<T> fit) {
            try {
                return fit.get();
            } catch (Exception e) { // Spark's job failures are checked SparkExceptions thrown without declaration
                IllegalArgumentException iae = SparkGpuCli.find(e, IllegalArgumentException.class);
                if (iae != null && assembled && iae.getMessage() != null
                        && iae.getMessage().contains("'" + column + "'")) {
                    throw new IllegalArgumentException(iae.getMessage() + " (column '" + column
                            + "' holds the values of --features " + String.join(",", names) + ")", e);
                }
                throw e;
            }
        }
    }

    static FileSystem fileSystem(SparkSession spark, String path) {
        try {
            return new Path(path).getFileSystem(spark.sparkContext().hadoopConfiguration());
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot access " + path + ": " + e.getMessage(), e);
        }
    }

    static boolean exists(SparkSession spark, String path) {
        try {
            return fileSystem(spark, path).exists(new Path(path));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot access " + path + ": " + e.getMessage(), e);
        }
    }

    /** Reads {@code input} (a file, a directory or a glob) as CSV with a header row or as Parquet. */
    static Dataset<Row> read(SparkSession spark, String input, Format format, CommandLine cl) {
        FileStatus[] matches;
        try {
            matches = fileSystem(spark, input).globStatus(new Path(input));
        } catch (IOException e) {
            throw new ParameterException(cl, "--input: cannot access " + input + ": " + e.getMessage());
        }
        if (matches == null || matches.length == 0) {
            throw new ParameterException(cl, "--input: path does not exist: " + input);
        }
        Format f = format == Format.auto ? detect(spark, input, matches, cl) : format;
        if (f == Format.csv) {
            // a row with more or fewer fields than the header fails the job (Spark's permissive mode would drop
            // extra fields and fill missing ones with null); without column pruning the parser sees every field.
            // The failure is explained, file and line, by explainMalformedCsv.
            spark.conf().set("spark.sql.csv.parser.columnPruning.enabled", "false");
            Dataset<Row> df = null;
            if (cl.getCommand() instanceof SparkCommand) {
                SparkCommand cmd = (SparkCommand) cl.getCommand();
                cmd.csvInputs.add(input);
                if (cmd.common.skipBad) {
                    df = readSkippingBad(spark, input, cmd.out());
                }
            }
            if (df == null) {
                df = spark.read().option("header", "true").option("inferSchema", "true").option("mode", "FAILFAST")
                        .csv(input);
            }
            return checkNotEmpty(df, input, cl);
        }
        return spark.read().parquet(input);
    }

    /**
     * An empty CSV input (no header) or one with a header only is a usage error saying so, instead of a missing
     * column or "has type string" later (inference gives strings when there are no values). Only a frame whose
     * columns are all strings is looked at, so a usual input costs no extra job.
     */
    static Dataset<Row> checkNotEmpty(Dataset<Row> df, String input, CommandLine cl) {
        StructType schema = df.schema();
        if (schema.isEmpty()) {
            throw new ParameterException(cl, "--input: " + input + " is empty (no header row, no data)");
        }
        for (StructField f : schema.fields()) {
            if (!(f.dataType() instanceof org.apache.spark.sql.types.StringType)) {
                return df;
            }
        }
        if (df.isEmpty()) {
            throw new ParameterException(cl, "--input: " + input + " has a header (" + String.join(", ",
                    schema.fieldNames()) + ") but no data rows");
        }
        return df;
    }

    /**
     * {@code --skip-bad}: the CSV {@code input} without its malformed rows (a row whose number of fields differs from
     * the header's), whose count and first example (file and text) are printed to {@code out}; nothing is skipped
     * silently. The schema is inferred as without the option (extra fields do not change it), then the files are
     * read again with that schema and a corrupt-record column, cached, and the rows where it is set are dropped.
     */
    static Dataset<Row> readSkippingBad(SparkSession spark, String input, java.io.PrintWriter out) {
        StructType inferred = spark.read().option("header", "true").option("inferSchema", "true")
                .option("mode", "DROPMALFORMED").csv(input).schema();
        String corrupt = freshName(inferred, "_corrupt_record");
        Dataset<Row> all = spark.read().option("header", "true").option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", corrupt)
                .schema(inferred.add(corrupt, DataTypes.StringType, true)).csv(input)
                .withColumn(corrupt + "_file", functions.input_file_name()).cache();
        Column bad = all.col(quote(corrupt)).isNotNull();
        long skipped = all.where(bad).count();
        if (skipped > 0) {
            Row first = all.where(bad).select(quote(corrupt + "_file"), quote(corrupt)).first();
            out.printf(java.util.Locale.ROOT, "--skip-bad: skipped %d malformed CSV row%s of %s (not the header's "
                    + "%d fields), e.g. in %s: %s%n", skipped, skipped == 1 ? "" : "s", input, inferred.size(),
                    first.getString(0), first.getString(1));
        } else {
            out.printf("--skip-bad: no malformed CSV rows in %s%n", input);
        }
        return all.where(functions.not(bad)).drop(corrupt, corrupt + "_file");
    }

    /** Marks Spark's failure on a malformed CSV record (FAILFAST mode). */
    static boolean isMalformedCsv(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            String m = c.getMessage();
            if (m != null && (m.contains("MALFORMED_RECORD_IN_PARSING") || m.contains("Malformed records are detected"))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The first row of the CSV {@code input} (files, directories, globs) whose number of fields differs from its
     * file's header, as a message naming the file, the line and the columns; null when none is found. Run on
     * the driver after a job failed on a malformed record, so it reads at most up to that row of each file.
     */
    static String explainMalformedCsv(String input, org.apache.hadoop.conf.Configuration conf) throws IOException {
        Path p = new Path(input);
        FileSystem fs = p.getFileSystem(conf);
        FileStatus[] matches = fs.globStatus(p);
        if (matches == null) {
            return null;
        }
        org.apache.hadoop.io.compress.CompressionCodecFactory codecs =
                new org.apache.hadoop.io.compress.CompressionCodecFactory(conf);
        com.univocity.parsers.csv.CsvParser parser =
                new com.univocity.parsers.csv.CsvParser(new com.univocity.parsers.csv.CsvParserSettings());
        for (FileStatus m : matches) {
            org.apache.hadoop.fs.RemoteIterator<org.apache.hadoop.fs.LocatedFileStatus> files = fs.listFiles(m.getPath(), true);
            while (files.hasNext()) {
                Path file = files.next().getPath();
                if (file.getName().startsWith(".") || file.getName().startsWith("_")) {
                    continue;
                }
                org.apache.hadoop.io.compress.CompressionCodec codec = codecs.getCodec(file);
                try (java.io.InputStream raw = fs.open(file);
                     java.io.BufferedReader r = new java.io.BufferedReader(new java.io.InputStreamReader(
                             codec == null ? raw : codec.createInputStream(raw), java.nio.charset.StandardCharsets.UTF_8))) {
                    String[] header = null;
                    long line = 0;
                    for (String text = r.readLine(); text != null; text = r.readLine()) {
                        line++;
                        if (text.isBlank()) {
                            continue;
                        }
                        String[] fields = parser.parseLine(text);
                        if (header == null) {
                            header = fields;
                        } else if (fields.length != header.length) {
                            return "malformed CSV row at " + file + " line " + line + ": " + fields.length
                                    + " fields where the header has " + header.length + " ("
                                    + String.join(", ", Arrays.asList(header)) + ")"
                                    + (fields.length < header.length ? "; column '" + header[fields.length]
                                    + "' is missing" : "") + "; fix or remove the row";
                        }
                    }
                }
            }
        }
        return null;
    }

    static Format byName(String name) {
        String n = name.toLowerCase(Locale.ROOT);
        for (String z : new String[] {".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst"}) {
            if (n.endsWith(z)) {
                n = n.substring(0, n.length() - z.length());
                break;
            }
        }
        if (n.endsWith(".csv")) {
            return Format.csv;
        }
        if (n.endsWith(".parquet") || n.endsWith(".parq")) {
            return Format.parquet;
        }
        return null;
    }

    private static Format detect(SparkSession spark, String input, FileStatus[] matches, CommandLine cl) {
        String trimmed = input.replaceAll("/+$", "");
        Format f = byName(trimmed);
        if (f != null) {
            return f;
        }
        // a directory (say, the output of a Spark job): look at the data files inside
        for (FileStatus st : matches) {
            if (!st.isDirectory()) {
                continue;
            }
            try {
                for (FileStatus child : fileSystem(spark, input).listStatus(st.getPath())) {
                    String name = child.getPath().getName();
                    if (child.isFile() && !name.startsWith("_") && !name.startsWith(".")) {
                        Format cf = byName(name);
                        if (cf != null) {
                            return cf;
                        }
                    }
                }
            } catch (IOException e) {
                throw new ParameterException(cl, "--input: cannot list " + st.getPath() + ": " + e.getMessage());
            }
        }
        throw new ParameterException(cl, "--input: cannot tell the format of " + input
                + " from its name; pass --format csv or --format parquet");
    }

    /**
     * Resolves {@code --features}: one vector or numeric-array column is used as it is; otherwise every listed
     * column (items may be ranges {@code FROM..TO} or prefixes {@code PREFIX*}, see {@link #expand}) must be numeric and they are assembled (as doubles) into a new array column.
     */
    static Features features(Dataset<Row> df, String spec, String option, CommandLine cl) {
        StructType schema = df.schema();
        List<String> names = new ArrayList<>();
        for (String s : spec.split(",", -1)) {
            String t = s.trim();
            if (t.isEmpty()) {
                throw new ParameterException(cl, option + ": empty column name in '" + spec + "'");
            }
            for (String n : expand(schema, t, option, cl)) {
                if (names.contains(n)) {
                    throw new ParameterException(cl, option + ": column '" + n + "' is listed twice");
                }
                names.add(n);
            }
        }
        if (names.size() == 1) {
            StructField f = field(schema, names.get(0), option, cl);
            DataType t = f.dataType();
            if (t.equals(SQLDataTypes.VectorType())
                    || (t instanceof ArrayType && ((ArrayType) t).elementType() instanceof NumericType)) {
                return new Features(df, f.name(), null, false);
            }
        }
        List<Column> cols = new ArrayList<>();
        List<String> resolved = new ArrayList<>();
        for (String n : names) {
            StructField f = field(schema, n, option, cl);
            if (!(f.dataType() instanceof NumericType)) {
                throw new ParameterException(cl, option + ": column '" + f.name() + "' has type "
                        + f.dataType().simpleString() + "; " + option + " needs numeric columns"
                        + (names.size() == 1 ? " or one vector/array column" : ""));
            }
            cols.add(df.col(quote(f.name())).cast(DataTypes.DoubleType));
            resolved.add(f.name());
        }
        String col = freshName(schema, "features");
        return new Features(df.withColumn(col, functions.array(cols.toArray(new Column[0]))), col, resolved, true);
    }

    /**
     * One item of a column list: {@code FROM..TO} is every column from FROM through TO in the input's order (e.g.
     * {@code p0..p63}), {@code PREFIX*} every column whose name starts with PREFIX, in the input's order; anything
     * else is one column's name (checked later).
     */
    static List<String> expand(StructType schema, String item, String option, CommandLine cl) {
        String[] all = schema.fieldNames();
        List<String> out = new ArrayList<>();
        int dots = item.indexOf("..");
        if (dots >= 0) {
            String from = item.substring(0, dots).trim();
            String to = item.substring(dots + 2).trim();
            int a = java.util.Arrays.asList(all).indexOf(from);
            int b = java.util.Arrays.asList(all).indexOf(to);
            if (from.isEmpty() || to.isEmpty() || a < 0 || b < 0) {
                throw new ParameterException(cl, option + ": the range '" + item + "' must name two columns of the "
                        + "input (FROM..TO)" + (a < 0 && !from.isEmpty() ? "; no column '" + from + "'"
                        : b < 0 && !to.isEmpty() ? "; no column '" + to + "'" : ""));
            }
            if (b < a) {
                throw new ParameterException(cl, option + ": the range '" + item + "' must go forwards: '" + to
                        + "' comes before '" + from + "' in the input");
            }
            out.addAll(java.util.Arrays.asList(all).subList(a, b + 1));
            return out;
        }
        if (item.endsWith("*")) {
            String prefix = item.substring(0, item.length() - 1);
            for (String n : all) {
                if (n.startsWith(prefix)) {
                    out.add(n);
                }
            }
            if (out.isEmpty()) {
                throw new ParameterException(cl, option + ": no column of the input starts with '" + prefix + "'");
            }
            return out;
        }
        out.add(item);
        return out;
    }

    static StructField field(StructType schema, String name, String option, CommandLine cl) {
        for (StructField f : schema.fields()) {
            if (f.name().equals(name)) {
                return f;
            }
        }
        for (StructField f : schema.fields()) {
            if (f.name().equalsIgnoreCase(name)) {
                return f;
            }
        }
        throw new ParameterException(cl, option + ": column '" + name + "' does not exist; the input has "
                + String.join(", ", Arrays.asList(schema.fieldNames())));
    }

    static String freshName(StructType schema, String base) {
        java.util.Set<String> taken = new java.util.HashSet<>();
        for (String f : schema.fieldNames()) {
            taken.add(f.toLowerCase(Locale.ROOT));
        }
        String n = base;
        for (int i = 1; taken.contains(n.toLowerCase(Locale.ROOT)); i++) {
            n = base + "_" + i;
        }
        return n;
    }

    /** Backtick-quotes a column name so that dots and spaces in it are taken literally. */
    static String quote(String name) {
        return "`" + name.replace("`", "``") + "`";
    }
}
