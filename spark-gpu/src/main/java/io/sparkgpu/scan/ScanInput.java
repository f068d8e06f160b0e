package io.sparkgpu.scan;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.floor;
import static org.apache.spark.sql.functions.isnan;
import static org.apache.spark.sql.functions.least;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.when;

import io.sparkgpu.common.SchemaColumns;
import java.io.Serializable;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Which columns of a DataFrame make the scan grid, and the two Spark passes that build it.
 * <ul>
 *   <li>{@code cells}: one row per cell (or several, which are added): integer cell coordinates, cases,
 *       baseline (and for the normal model optionally a sum of squares). The grid spans the coordinates'
 *       minimum to maximum, or [0, gridSize) when gridSize is given.</li>
 *   <li>{@code points}: one row per individual or event: real coordinates, a case flag or count, an optional
 *       baseline weight (default 1 per point: the population). Points are binned onto gridSize equal bins per
 *       axis over the extent (default: the data's minimum to maximum). For the normal model the case column is
 *       the observed value and the sum of squares is formed from it.</li>
 * </ul>
 * Pass 1 validates every row (nulls, NaN, negative, fractional Bernoulli counts, coordinates outside the grid)
 * and finds the extent; pass 2 sums per cell. Real-valued sums (fractional case counts of the Poisson models
 * included) go through exact DECIMAL(38, s) arithmetic (s from the data's bounds), so the grid, and with it the
 * scan, is the same however the data are partitioned.
 */
public final class ScanInput implements Serializable {
    private static final long serialVersionUID = 1L;

    final String inputType;
    final String[] coordinateCols;
    final String casesCol;
    final String baselineCol;
    final String sumSquaresCol;
    final int[] gridSize;
    final double[] extent;

    /**
     * @param baselineCol   required for cells; for points null means one unit of baseline per point
     * @param sumSquaresCol normal model with cells only, may be null
     * @param gridSize      bins per axis (required for points; optional for cells: then coordinates are 0-based)
     * @param extent        points only, may be null: lo_0, hi_0, lo_1, hi_1, ...
     */
    public ScanInput(String inputType, String[] coordinateCols, String casesCol, String baselineCol,
                     String sumSquaresCol, int[] gridSize, double[] extent) {
        String type = checkInputType(inputType);
        checkCoordinateCols(coordinateCols);
        if (casesCol == null || casesCol.isEmpty()) {
            throw new IllegalArgumentException("casesCol is not set");
        }
        boolean points = type.equals(ScanGridInfo.POINTS);
        if (!points && (baselineCol == null || baselineCol.isEmpty())) {
            throw new IllegalArgumentException("baselineCol is required for cells input");
        }
        int d = coordinateCols.length;
        if (points && gridSize == null) {
            throw new IllegalArgumentException("gridSize (bins per axis) is required for points input");
        }
        if (gridSize != null) {
            checkGridSize(gridSize);
            if (gridSize.length != d) {
                throw new IllegalArgumentException("gridSize needs one size per coordinate column (" + d + "), got "
                        + Arrays.toString(gridSize));
            }
        }
        if (extent != null) {
            if (!points) {
                throw new IllegalArgumentException("extent applies to points input only");
            }
            if (extent.length != 2 * d) {
                throw new IllegalArgumentException("extent needs lo, hi for each of the " + d + " axes, got "
                        + Arrays.toString(extent));
            }
            for (int k = 0; k < d; k++) {
                if (!Double.isFinite(extent[2 * k]) || !Double.isFinite(extent[2 * k + 1])
                        || !(extent[2 * k] < extent[2 * k + 1])) {
                    throw new IllegalArgumentException("extent of axis " + k + " (" + coordinateCols[k]
                            + ") must be finite with lo < hi, got [" + extent[2 * k] + ", " + extent[2 * k + 1] + "]");
                }
            }
        }
        this.inputType = type;
        this.coordinateCols = coordinateCols.clone();
        this.casesCol = casesCol;
        this.baselineCol = baselineCol == null || baselineCol.isEmpty() ? null : baselineCol;
        this.sumSquaresCol = sumSquaresCol == null || sumSquaresCol.isEmpty() ? null : sumSquaresCol;
        this.gridSize = gridSize == null ? null : gridSize.clone();
        this.extent = extent == null ? null : extent.clone();
    }

    /** inputType: cells or points (any case); returns it in lower case. */
    public static String checkInputType(String inputType) {
        String type = inputType == null ? "" : inputType.trim().toLowerCase(Locale.ROOT);
        if (!type.equals(ScanGridInfo.CELLS) && !type.equals(ScanGridInfo.POINTS)) {
            throw new IllegalArgumentException("inputType must be cells or points, got '" + inputType + "'");
        }
        return type;
    }

    /** coordinateCols: 1 to 3 distinct non-empty names, x first. */
    public static void checkCoordinateCols(String[] coordinateCols) {
        if (coordinateCols == null || coordinateCols.length < 1 || coordinateCols.length > 3) {
            throw new IllegalArgumentException("coordinateCols must name 1 to 3 columns, got "
                    + (coordinateCols == null ? "none" : Arrays.toString(coordinateCols)));
        }
        Set<String> seen = new HashSet<>();
        for (String c : coordinateCols) {
            if (c == null || c.isEmpty() || !seen.add(c)) {
                throw new IllegalArgumentException("coordinateCols must be distinct non-empty names, got "
                        + Arrays.toString(coordinateCols));
            }
        }
    }

    /**
     * gridSize: 1 to 3 axis sizes, each &gt;= 1, at most {@link ScanShape#MAX_AXIS_1D} (1-D) or
     * {@link ScanShape#MAX_AXIS_ND} per axis and {@link ScanShape#MAX_CELLS} cells ({@link ScanShape}'s limits).
     */
    public static void checkGridSize(int[] gridSize) {
        try {
            new ScanShape(gridSize);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("gridSize " + (gridSize == null ? "null" : Arrays.toString(gridSize))
                    + ": " + e.getMessage(), e);
        }
    }

    boolean points() {
        return inputType.equals(ScanGridInfo.POINTS);
    }

    /** The grid and where it lies. */
    public static final class Built {
        public final ScanGrid grid;
        public final ScanGridInfo info;
        public final long rows;

        Built(ScanGrid grid, ScanGridInfo info, long rows) {
            this.grid = grid;
            this.info = info;
            this.rows = rows;
        }
    }


    /** Checks that every named column exists and is numeric. */
    public void checkSchema(StructType schema, ScanModel model) {
        for (String c : coordinateCols) {
            SchemaColumns.numeric(schema, c, "coordinateCols");
        }
        SchemaColumns.numeric(schema, casesCol, "casesCol");
        if (baselineCol != null) {
            SchemaColumns.numeric(schema, baselineCol, "baselineCol");
        }
        if (sumSquaresCol != null) {
            if (model != ScanModel.NORMAL || points()) {
                throw new IllegalArgumentException("sumSquaresCol is used by the normal model with cells input only");
            }
            SchemaColumns.numeric(schema, sumSquaresCol, "sumSquaresCol");
        }
    }

    static Column q(String name) {
        return col("`" + name.replace("`", "``") + "`");
    }

    /** The cell index along axis k of a coordinate column, null outside the grid (same rule for fit and transform). */
    public static Column axisCell(ScanGridInfo info, int k, Column coordinate) {
        int size = info.sizes()[k];
        double lo = info.origin()[k];
        Column v = coordinate.cast(DataTypes.DoubleType);
        if (info.points()) {
            double hi = info.upper()[k];
            double w = info.width()[k];
            Column bin = least(floor(v.minus(lo).divide(w)), lit((long) size - 1)).cast(DataTypes.IntegerType);
            return when(v.geq(lo).and(v.leq(hi)), functions.greatest(bin, lit(0)));
        }
        Column idx = v.minus(lo);
        return when(idx.geq(0).and(idx.lt(size)).and(v.equalTo(floor(v))), idx.cast(DataTypes.IntegerType));
    }

    /** Flattened cell index (x fastest) of a row, null outside the grid. */
    public static Column cellIndex(ScanGridInfo info, Column[] coordinates) {
        Column c = null;
        int stride = 1;
        for (int k = 0; k < info.dims(); k++) {
            Column term = axisCell(info, k, coordinates[k]).multiply(stride);
            c = c == null ? term : c.plus(term);
            stride *= info.sizes()[k];
        }
        return c;
    }

    private static Column count(Column cond) {
        return functions.sum(when(cond, 1L).otherwise(0L));
    }

    private static Column notFinite(Column c) {
        Column d = c.cast(DataTypes.DoubleType);
        return isnan(d).or(d.equalTo(Double.POSITIVE_INFINITY)).or(d.equalTo(Double.NEGATIVE_INFINITY));
    }

    private static long longAt(Row r, int i) {
        return r.isNullAt(i) ? 0 : ((Number) r.get(i)).longValue();
    }

    private static double doubleAt(Row r, int i) {
        return r.isNullAt(i) ? Double.NaN : ((Number) r.get(i)).doubleValue();
    }

    private static IllegalArgumentException bad(String param, String column, String what) {
        return new IllegalArgumentException(param + ": column '" + column + "' " + what);
    }

    /** DECIMAL(38, s) with s as large as an exact sum of {@code rows} values of magnitude <= maxAbs allows. */
    static org.apache.spark.sql.types.DecimalType exactSumType(double maxAbs, long rows, String column) {
        double bound = Math.max(1, maxAbs) * Math.max(1, rows);
        int intDigits = (int) Math.floor(Math.log10(bound)) + 2;
        if (intDigits > 36) {
            throw new IllegalArgumentException("column '" + column + "' holds values too large to add exactly (about "
                    + bound + " in total)");
        }
        return DataTypes.createDecimalType(38, Math.min(30, 38 - intDigits));
    }

    /**
     * Partitions of the per-cell sums of a cells input: one per 2^16 cells, at least 1 and at most the input's
     * partitions (the sums are exact, so any number gives the same grid).
     */
    static int cellPartitions(long cells, int inputPartitions) {
        long want = (cells + (1 << 16) - 1) >> 16;
        return (int) Math.max(1, Math.min(Math.max(1, inputPartitions), want));
    }

    /** Builds and validates the grid from {@code data} (two Spark jobs). */
    public Built build(Dataset<?> data, ScanModel model) {
        Dataset<Row> df = data.toDF();
        checkSchema(df.schema(), model);
        int d = coordinateCols.length;
        boolean points = points();
        Column cases = q(casesCol).cast(DataTypes.DoubleType);
        Column base = baselineCol != null ? q(baselineCol).cast(DataTypes.DoubleType) : lit(1.0);

        // ---- pass 1: validation and extent
        List<Column> aggs = new ArrayList<>();
        aggs.add(functions.count(lit(1)));
        for (String c : coordinateCols) {
            Column v = q(c).cast(DataTypes.DoubleType);
            aggs.add(count(q(c).isNull()));
            aggs.add(count(notFinite(q(c))));
            aggs.add(functions.min(v));
            aggs.add(functions.max(v));
            aggs.add(count(v.notEqual(floor(v))));
        }
        String[] valueCols = {casesCol, baselineCol, sumSquaresCol};
        for (String c : valueCols) {
            if (c == null) {
                for (int i = 0; i < 5; i++) {
                    aggs.add(lit(0L));
                }
                continue;
            }
            Column v = q(c).cast(DataTypes.DoubleType);
            aggs.add(count(q(c).isNull()));
            aggs.add(count(notFinite(q(c))));
            aggs.add(functions.min(v));
            aggs.add(functions.max(functions.abs(v)));
            aggs.add(count(v.notEqual(floor(v))));
        }
        aggs.add(count(cases.gt(base)));
        Row st = df.agg(aggs.get(0), aggs.subList(1, aggs.size()).toArray(new Column[0])).first();
        long rows = longAt(st, 0);
        if (rows == 0) {
            throw new IllegalArgumentException("the input has no rows: the grid is empty");
        }
        double[] lo = new double[d];
        double[] hi = new double[d];
        for (int k = 0; k < d; k++) {
            int at = 1 + 5 * k;
            String c = coordinateCols[k];
            if (longAt(st, at) > 0) {
                throw bad("coordinateCols", c, "has " + longAt(st, at) + " null values; every row needs coordinates");
            }
            if (longAt(st, at + 1) > 0) {
                throw bad("coordinateCols", c, "has " + longAt(st, at + 1) + " NaN or infinite values");
            }
            lo[k] = doubleAt(st, at + 2);
            hi[k] = doubleAt(st, at + 3);
            if (!points && longAt(st, at + 4) > 0) {
                throw bad("coordinateCols", c, "must hold whole cell coordinates for cells input, found "
                        + longAt(st, at + 4) + " values with a fraction (use inputType=points to bin real coordinates)");
            }
        }
        String[] params = {"casesCol", "baselineCol", "sumSquaresCol"};
        double[] maxAbs = new double[3];
        boolean fractionalCases = false;
        for (int j = 0; j < 3; j++) {
            String c = valueCols[j];
            if (c == null) {
                continue;
            }
            int at = 1 + 5 * d + 5 * j;
            if (longAt(st, at) > 0) {
                throw bad(params[j], c, "has " + longAt(st, at) + " null values; nothing is dropped, so clean or fill "
                        + "them first");
            }
            if (longAt(st, at + 1) > 0) {
                throw bad(params[j], c, "has " + longAt(st, at + 1) + " NaN or infinite values");
            }
            double min = doubleAt(st, at + 2);
            maxAbs[j] = doubleAt(st, at + 3);
            long fractional = longAt(st, at + 4);
            boolean mayBeNegative = j == 0 && model == ScanModel.NORMAL;
            if (!mayBeNegative && min < 0) {
                throw bad(params[j], c, "has negative values (minimum " + min + ")");
            }
            if (j == 0 && model.countCases() && !model.fractionalCases() && fractional > 0) {
                throw bad(params[j], c, "must hold whole case counts (or 0/1 case flags), found " + fractional
                        + " values with a fraction: " + ScanModel.WHOLE_CASES_REASON);
            }
            if (j == 0) {
                fractionalCases = fractional > 0;
            }
            if (j == 1 && (model == ScanModel.BERNOULLI || model == ScanModel.NORMAL) && fractional > 0) {
                throw bad(params[j], c, "must hold whole numbers of " + (model == ScanModel.NORMAL ? "observations"
                        : "individuals") + " for the " + model.id() + " model, found " + fractional
                        + " values with a fraction");
            }
        }
        if (points && model == ScanModel.BERNOULLI) {
            long over = longAt(st, 1 + 5 * d + 15);
            if (over > 0) {
                throw bad("casesCol", casesCol, "exceeds the individuals of its row ("
                        + (baselineCol == null ? "1 per point" : "column '" + baselineCol + "'") + ") in " + over
                        + " rows");
            }
        }

        // ---- the grid
        int[] sizes = new int[d];
        double[] origin = new double[d];
        double[] upper = new double[d];
        for (int k = 0; k < d; k++) {
            String c = coordinateCols[k];
            if (points) {
                sizes[k] = gridSize[k];
                if (extent != null) {
                    origin[k] = extent[2 * k];
                    upper[k] = extent[2 * k + 1];
                    if (lo[k] < origin[k] || hi[k] > upper[k]) {
                        throw bad("coordinateCols", c, "has points outside the extent [" + origin[k] + ", " + upper[k]
                                + "] (data range [" + lo[k] + ", " + hi[k] + "])");
                    }
                } else {
                    origin[k] = lo[k];
                    upper[k] = hi[k] > lo[k] ? hi[k] : lo[k] + 1;
                }
            } else if (gridSize != null) {
                sizes[k] = gridSize[k];
                origin[k] = 0;
                upper[k] = gridSize[k] - 1;
                if (lo[k] < 0 || hi[k] > gridSize[k] - 1) {
                    throw bad("coordinateCols", c, "holds coordinates in [" + lo[k] + ", " + hi[k] + "], outside the "
                            + "grid 0.." + (gridSize[k] - 1) + " that gridSize gives");
                }
            } else {
                double span = hi[k] - lo[k] + 1;
                int max = d == 1 ? ScanShape.MAX_AXIS_1D : ScanShape.MAX_AXIS_ND;
                if (span > max) {
                    throw bad("coordinateCols", c, "spans " + (long) span + " cells (" + lo[k] + " to " + hi[k]
                            + "), over the supported maximum of " + max + " for a " + d + "-D grid");
                }
                sizes[k] = (int) span;
                origin[k] = lo[k];
                upper[k] = hi[k];
            }
        }
        ScanShape shape = new ScanShape(sizes);
        ScanGridInfo info = new ScanGridInfo(inputType, coordinateCols, sizes, origin, upper);

        // ---- pass 2: per-cell sums (exact)
        Column[] coords = new Column[d];
        for (int k = 0; k < d; k++) {
            coords[k] = q(coordinateCols[k]);
        }
        boolean exactCases = model.countCases() && !fractionalCases; // whole counts add exactly in doubles
        boolean exactBase = model == ScanModel.BERNOULLI || model == ScanModel.NORMAL || baselineCol == null;
        Column caseSum = exactCases ? cases : cases.cast(exactSumType(maxAbs[0], rows, casesCol));
        Column baseSum = exactBase ? base : base.cast(exactSumType(maxAbs[1], rows, baselineCol));
        Column ssSum = null;
        if (model == ScanModel.NORMAL && points) {
            ssSum = cases.multiply(cases).cast(exactSumType(maxAbs[0] * maxAbs[0], rows, casesCol + "^2"));
        } else if (sumSquaresCol != null) {
            ssSum = q(sumSquaresCol).cast(DataTypes.DoubleType).cast(exactSumType(maxAbs[2], rows, sumSquaresCol));
        }
        Dataset<Row> perRow = df.select(cellIndex(info, coords).as("cell"), caseSum.as("c"), baseSum.as("b"),
                ssSum == null ? lit(0.0).as("s") : ssSum.as("s"));
        if (!points) {
            // about one row per cell: no partial aggregation to keep, so the exchange is sized by the grid, not by
            // spark.sql.shuffle.partitions (200 tasks took 1.7 s of a 0.4 s job for a 256 x 256 grid)
            perRow = perRow.repartition(cellPartitions(shape.cells(), df.rdd().getNumPartitions()), col("cell"));
        }
        List<Row> cellRows = perRow
                .groupBy("cell").agg(functions.sum(col("c")), functions.sum(col("b")), functions.sum(col("s")))
                .collectAsList();
        int cells = shape.cells();
        double[] cv = new double[cells];
        double[] bv = new double[cells];
        double[] sv = ssSum == null ? null : new double[cells];
        for (Row r : cellRows) {
            if (r.isNullAt(0)) {
                throw new IllegalStateException("a row fell outside the grid after validation; please report this");
            }
            int c = r.getInt(0);
            cv[c] = toDouble(r.get(1));
            bv[c] = toDouble(r.get(2));
            if (sv != null) {
                sv[c] = toDouble(r.get(3));
            }
        }
        String[] names = {casesCol, baselineCol != null ? baselineCol : "(1 per point)",
                sumSquaresCol != null ? sumSquaresCol : "(sum of squares)"};
        return new Built(ScanGrid.of(model, shape, cv, bv, sv, names), info, rows);
    }

    private static double toDouble(Object o) {
        if (o instanceof BigDecimal) {
            return ((BigDecimal) o).doubleValue();
        }
        return ((Number) o).doubleValue();
    }
}
