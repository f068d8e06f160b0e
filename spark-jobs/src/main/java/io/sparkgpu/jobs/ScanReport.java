package io.sparkgpu.jobs;

import io.sparkgpu.scan.ScanCluster;
import io.sparkgpu.scan.ScanGrid;
import io.sparkgpu.scan.ScanGridInfo;
import io.sparkgpu.scan.ScanModel;
import io.sparkgpu.scan.ScanResult;
import io.sparkgpu.scan.ScanShape;
import io.sparkgpu.scan.ScanSpec;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.FontMetrics;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.imageio.ImageIO;

/** The outputs of {@code sparkgpu scan}: console summary, JSON report, CSV of clusters, PNG heat map. */
final class ScanReport {
    static final int WIDTH = 1100;

    static {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private ScanReport() {
    }

    /** Six significant digits without trailing zeros; whole numbers as integers. */
    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "n/a";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        double a = Math.abs(v);
        if (v == Math.rint(v) && a < 1e15) {
            return String.valueOf((long) v);
        }
        if (a < 1e-4 || a >= 1e9) {
            return String.format(Locale.ROOT, "%.4e", v);
        }
        return new java.math.BigDecimal(String.format(Locale.ROOT, "%.6g", v)).stripTrailingZeros().toPlainString();
    }

    /** The console summary. */
    static void summary(PrintWriter out, ScanGrid grid, ScanGridInfo info, ScanResult r, long rows, double seconds) {
        ScanShape sh = r.shape();
        out.printf(Locale.ROOT, "  grid          %s %s from %d rows (%s input)%n", sh, r.model().id(), rows,
                info.inputType());
        out.printf(Locale.ROOT, "  ranges        %d (every %s)%n", sh.ranges(),
                sh.dims() == 1 ? "interval" : sh.dims() == 2 ? "rectangle" : "box");
        out.printf(Locale.ROOT, "  totals        %s %s, baseline %s%n", fmt(r.totalCases()),
                r.model() == ScanModel.NORMAL ? "(sum of values)" : "cases", fmt(r.totalBaseline()));
        out.printf(Locale.ROOT, "  replicas      %d (seed %d)%n", r.numReplicas(), r.seed());
        out.printf(Locale.ROOT, "  backend       %s%n", r.backend());
        out.printf(Locale.ROOT, "  time          %.3f s%n", seconds);
        if (r.clusters().isEmpty()) {
            out.println("  clusters      none: no range has a positive log-likelihood ratio");
            return;
        }
        out.println("  rank  LLR            p-value    observed      expected      rel.risk   cells  range");
        for (ScanCluster c : r.clusters()) {
            out.printf(Locale.ROOT, "  %4d  %-13s  %-9s  %-12s  %-12s  %-9s  %5d  %s%n", c.rank(), fmt(c.llr()),
                    fmt(c.pValue()), fmt(c.observed()), fmt(c.expected()), fmt(c.relativeRisk()), c.cells(),
                    info.describe(c.box()));
        }
    }

    /** The JSON report: settings, grid, totals, clusters and the replica maxima. */
    static Map<String, Object> json(ScanResult r, ScanGridInfo info, Map<String, Object> settings, long rows,
                                    double seconds) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("algorithm", "scan statistic");
        m.put("statistic", r.model().id());
        ScanSpec s = r.spec();
        m.put("direction", s.direction().id());
        m.putAll(settings);
        Map<String, Object> grid = new LinkedHashMap<>();
        grid.put("inputType", info.inputType());
        grid.put("coordinateCols", info.coordinateCols());
        grid.put("sizes", info.sizes());
        grid.put("origin", info.origin());
        grid.put("upper", info.upper());
        grid.put("cellWidth", info.width());
        grid.put("ranges", r.shape().ranges());
        grid.put("rows", rows);
        m.put("grid", grid);
        m.put("totalCases", r.totalCases());
        m.put("totalBaseline", r.totalBaseline());
        m.put("numReplicas", r.numReplicas());
        m.put("seed", r.seed());
        m.put("backend", r.backend());
        m.put("seconds", seconds);
        List<Object> cl = new ArrayList<>();
        for (ScanCluster c : r.clusters()) {
            Map<String, Object> cm = new LinkedHashMap<>();
            cm.put("rank", c.rank());
            cm.put("llr", c.llr());
            cm.put("pValue", c.pValue());
            cm.put("observed", c.observed());
            cm.put("expected", c.expected());
            cm.put("relativeRisk", c.relativeRisk());
            cm.put("baseline", c.baseline());
            cm.put("cells", c.cells());
            cm.put("rangeIndex", c.index());
            int d = info.dims();
            int[] lo = new int[d];
            int[] hi = new int[d];
            double[] clo = new double[d];
            double[] chi = new double[d];
            for (int k = 0; k < d; k++) {
                lo[k] = c.lo(k);
                hi[k] = c.hi(k);
                clo[k] = info.lower(k, lo[k]);
                chi[k] = info.upper(k, hi[k]);
            }
            cm.put("cellLo", lo);
            cm.put("cellHi", hi);
            cm.put("coordLo", clo);
            cm.put("coordHi", chi);
            cm.put("description", info.describe(c.box()));
            cl.add(cm);
        }
        m.put("clusters", cl);
        m.put("replicaMaxLlr", r.replicaLlrs());
        return m;
    }

    static String jsonText(Map<String, Object> report) {
        return ModelOutput.toJson(report) + "\n";
    }

    /** One CSV row per cluster. */
    static String csvText(ScanResult r, ScanGridInfo info) {
        StringBuilder sb = new StringBuilder("rank,llr,p_value,observed,expected,relative_risk,baseline,cells");
        String[] cols = info.coordinateCols();
        for (String c : cols) {
            sb.append(',').append(csv(c + "_cell_lo")).append(',').append(csv(c + "_cell_hi")).append(',')
                    .append(csv(c + "_lo")).append(',').append(csv(c + "_hi"));
        }
        sb.append('\n');
        for (ScanCluster c : r.clusters()) {
            sb.append(c.rank()).append(',').append(num(c.llr())).append(',').append(num(c.pValue())).append(',')
                    .append(num(c.observed())).append(',').append(num(c.expected())).append(',')
                    .append(num(c.relativeRisk())).append(',').append(num(c.baseline())).append(',').append(c.cells());
            for (int k = 0; k < cols.length; k++) {
                sb.append(',').append(c.lo(k)).append(',').append(c.hi(k)).append(',')
                        .append(num(info.lower(k, c.lo(k)))).append(',').append(num(info.upper(k, c.hi(k))));
            }
            sb.append('\n');
        }
        return sb.toString();
    }

    private static String num(double v) {
        return Double.isFinite(v) ? Double.toString(v) : "";
    }

    private static String csv(String s) {
        return s.contains(",") || s.contains("\"") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }

    // ------------------------------------------------------------------------------------------ heat map

    /** Diverging colour for t in [-1, 1]: blue, white, red. */
    static Color diverging(double t) {
        double u = Math.max(-1, Math.min(1, t));
        if (u >= 0) {
            return new Color(255, (int) Math.round(255 - 190 * u), (int) Math.round(255 - 215 * u));
        }
        return new Color((int) Math.round(255 + 215 * u), (int) Math.round(255 + 140 * u), 255);
    }

    private static final Color[] OUTLINE = {Color.BLACK, new Color(0x1b, 0x7a, 0x2f), new Color(0x7a, 0x29, 0x9a),
        new Color(0xc0, 0x6a, 0x00), new Color(0x00, 0x6d, 0x8f)};

    /**
     * A PNG of the grid coloured by log2(observed / expected) per cell (normal model: the cell mean's distance
     * from the overall mean in standard deviations), blue below, red above, grey without baseline, with the
     * reported clusters outlined and labelled. Grids wider than the image are summed into pixel buckets; 3-D
     * grids are summed over z.
     */
    static void heatMap(SafeOutput target, ScanGrid grid, ScanGridInfo info, ScanResult r, String title)
            throws IOException {
        BufferedImage img = heatMapImage(grid, info, r, title);
        target.writeStream(os -> {
            if (!ImageIO.write(img, "png", os)) {
                throw new IOException("no PNG writer available");
            }
        });
    }

    /** The image {@link #heatMap} writes (shown inline by the notebooks through {@link Plots#scanHeatMap}). */
    static BufferedImage heatMapImage(ScanGrid grid, ScanGridInfo info, ScanResult r, String title) {
        ScanShape sh = grid.shape();
        int nx = sh.size(0);
        int ny = sh.dims() >= 2 ? sh.size(1) : 1;
        boolean oneD = sh.dims() == 1;
        int left = 90;
        int right = 150;
        int top = 60;
        int bottom = 70;
        int plotW = WIDTH - left - right;
        int plotH = oneD ? 90 : (int) Math.max(120, Math.min(700, (double) plotW * ny / nx));
        int height = top + plotH + bottom;
        int bx = Math.min(nx, plotW);
        int by = Math.min(ny, plotH);
        // buckets: sums of observed and expected (or of value and count) over the cells in each
        double[][] obs = new double[bx][by];
        double[][] exp = new double[bx][by];
        boolean normal = grid.model() == ScanModel.NORMAL;
        double totalC = 0;
        double totalB = 0;
        for (int c = 0; c < sh.cells(); c++) {
            totalC += grid.cases(c);
            totalB += grid.baseline(c);
        }
        double rate = totalC / totalB;
        double sd = 1;
        if (normal) {
            double ss = 0;
            for (int c = 0; c < sh.cells(); c++) {
                ss += grid.sumSquares(c);
            }
            sd = Math.sqrt(Math.max(1e-300, ss / totalB - rate * rate));
        }
        for (int c = 0; c < sh.cells(); c++) {
            int x = c % nx;
            int y = (c / nx) % Math.max(1, sh.size(1));
            int i = (int) ((long) x * bx / nx);
            int j = (int) ((long) y * by / ny);
            obs[i][j] += grid.cases(c);
            double e = grid.model() == ScanModel.EBP ? grid.baseline(c) : grid.baseline(c) * rate;
            exp[i][j] += normal ? grid.baseline(c) : e;
        }
        BufferedImage img = new BufferedImage(WIDTH, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, WIDTH, height);
            for (int i = 0; i < bx; i++) {
                for (int j = 0; j < by; j++) {
                    Color col;
                    if (exp[i][j] <= 0) {
                        col = new Color(0xc8, 0xc8, 0xc8);
                    } else if (normal) {
                        col = diverging((obs[i][j] / exp[i][j] - rate) / sd / 2);
                    } else {
                        col = diverging(Math.log((obs[i][j] + 0.5) / (exp[i][j] + 0.5)) / Math.log(2) / 2);
                    }
                    int x0 = left + (int) ((long) i * plotW / bx);
                    int x1 = left + (int) ((long) (i + 1) * plotW / bx);
                    int y1 = top + plotH - (int) ((long) j * plotH / by);
                    int y0 = top + plotH - (int) ((long) (j + 1) * plotH / by);
                    g.setColor(col);
                    g.fillRect(x0, y0, Math.max(1, x1 - x0), Math.max(1, y1 - y0));
                }
            }
            g.setColor(Color.DARK_GRAY);
            g.setStroke(new BasicStroke(1f));
            g.drawRect(left, top, plotW, plotH);
            // clusters
            Font small = new Font(Font.SANS_SERIF, Font.BOLD, 13);
            g.setFont(small);
            List<ScanCluster> cs = r.clusters();
            for (int k = cs.size() - 1; k >= 0; k--) {
                ScanCluster c = cs.get(k);
                int x0 = left + (int) ((long) c.lo(0) * plotW / nx);
                int x1 = left + (int) ((long) (c.hi(0) + 1) * plotW / nx);
                int yLo = oneD ? 0 : c.lo(1);
                int yHi = oneD ? 0 : c.hi(1);
                int y1 = top + plotH - (int) ((long) yLo * plotH / ny);
                int y0 = top + plotH - (int) ((long) (yHi + 1) * plotH / ny);
                Color oc = OUTLINE[k % OUTLINE.length];
                float w = k == 0 ? 3.5f : 2.2f;
                g.setStroke(k == 0 ? new BasicStroke(w) : new BasicStroke(w, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER,
                        10f, new float[] {7f, 4f}, 0f));
                g.setColor(Color.WHITE);
                g.drawRect(x0 - 1, y0 - 1, Math.max(2, x1 - x0) + 2, Math.max(2, y1 - y0) + 2);
                g.setColor(oc);
                g.drawRect(x0, y0, Math.max(2, x1 - x0), Math.max(2, y1 - y0));
                String label = "#" + c.rank() + (Double.isNaN(c.pValue()) ? "" : " p=" + fmt(c.pValue()));
                int ly = y0 > top + 16 ? y0 - 4 : Math.min(top + plotH - 4, y1 + 15);
                g.setColor(Color.WHITE);
                g.drawString(label, x0 + 1, ly + 1);
                g.setColor(oc);
                g.drawString(label, x0, ly);
            }
            // title and axes
            g.setColor(Color.BLACK);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, left, 28);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            String sub = grid.model().id() + " scan of a " + sh + " grid, " + r.numReplicas() + " replicas"
                    + (sh.dims() == 3 ? "; summed over " + info.coordinateCols()[2] : "");
            g.drawString(sub, left, 46);
            String[] cols = info.coordinateCols();
            String xlo = fmt(info.lower(0, 0));
            String xhi = fmt(info.upper(0, nx - 1));
            FontMetrics fm = g.getFontMetrics();
            g.drawString(xlo, left, top + plotH + 16);
            g.drawString(xhi, left + plotW - fm.stringWidth(xhi), top + plotH + 16);
            g.drawString(cols[0], left + plotW / 2 - fm.stringWidth(cols[0]) / 2, top + plotH + 34);
            if (!oneD) {
                String ylo = fmt(info.lower(1, 0));
                String yhi = fmt(info.upper(1, ny - 1));
                g.drawString(ylo, left - 8 - fm.stringWidth(ylo), top + plotH);
                g.drawString(yhi, left - 8 - fm.stringWidth(yhi), top + 12);
                g.drawString(cols[1], left - 8 - fm.stringWidth(cols[1]), top + plotH / 2);
            }
            // colour bar
            int cbX = left + plotW + 40;
            int cbH = Math.min(plotH, 200);
            for (int p = 0; p < cbH; p++) {
                g.setColor(diverging(1 - 2.0 * p / (cbH - 1)));
                g.fillRect(cbX, top + p, 18, 1);
            }
            g.setColor(Color.DARK_GRAY);
            g.drawRect(cbX, top, 18, cbH);
            String[] ticks = normal ? new String[] {"+2 sd", "mean", "-2 sd"} : new String[] {"4x", "1x", "1/4x"};
            g.drawString(ticks[0], cbX + 24, top + 10);
            g.drawString(ticks[1], cbX + 24, top + cbH / 2 + 4);
            g.drawString(ticks[2], cbX + 24, top + cbH);
            g.drawString(normal ? "cell mean" : "obs / exp", cbX - 8, top + cbH + 18);
        } finally {
            g.dispose();
        }
        return img;
    }
}
