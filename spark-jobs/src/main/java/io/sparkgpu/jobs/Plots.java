package io.sparkgpu.jobs;

import io.sparkgpu.scan.ScanGrid;
import io.sparkgpu.scan.ScanGridInfo;
import io.sparkgpu.scan.ScanResult;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.geom.Line2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.BitmapEncoder.BitmapFormat;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.markers.Marker;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * XChart helpers for the PNG plots of the jobs and the notebooks: scatter plots of labelled points with marked
 * centres, line charts (for example cost per iteration), data with fitted curves (isotonic regression), and the
 * scan statistic's heat map. Everything renders off-screen ({@code java.awt.headless}).
 */
public final class Plots {
    public static final int WIDTH = 1000;
    public static final int HEIGHT = 700;

    /** Distinct, print-friendly colours for up to 12 groups; further groups reuse them. */
    private static final Color[] PALETTE = {
        new Color(0x1f, 0x6f, 0xb4), new Color(0xe8, 0x7a, 0x10), new Color(0x2c, 0x9c, 0x3a),
        new Color(0xc9, 0x26, 0x2b), new Color(0x8a, 0x5c, 0xbf), new Color(0x86, 0x55, 0x48),
        new Color(0xd9, 0x6c, 0xc0), new Color(0x6f, 0x6f, 0x6f), new Color(0xb0, 0xb4, 0x1e),
        new Color(0x14, 0xb4, 0xc6), new Color(0x0b, 0x3d, 0x66), new Color(0x7a, 0x14, 0x14),
    };

    static {
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
    }

    private Plots() {
    }

    public static Color color(int group) {
        return PALETTE[Math.floorMod(group, PALETTE.length)];
    }

    /**
     * Scatter plot with one series per group.
     *
     * @param group      group of each point, 0-based
     * @param groupNames legend name of each group (its size is the number of groups); empty groups are left out
     */
    public static XYChart scatter(String title, String xTitle, String yTitle, double[] x, double[] y, int[] group,
                                  List<String> groupNames) {
        if (x.length != y.length || x.length != group.length) {
            throw new IllegalArgumentException("x, y and group must have the same length (" + x.length + ", "
                    + y.length + ", " + group.length + ")");
        }
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        XYStyler st = chart.getStyler();
        style(st);
        st.setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        st.setMarkerSize(x.length > 5000 ? 3 : 6);
        st.setLegendPosition(Styler.LegendPosition.OutsideE);
        int groups = groupNames.size();
        int[] counts = new int[groups];
        for (int g : group) {
            if (g < 0 || g >= groups) {
                throw new IllegalArgumentException("group " + g + " is outside 0.." + (groups - 1));
            }
            counts[g]++;
        }
        for (int g = 0; g < groups; g++) {
            if (counts[g] == 0) {
                continue;
            }
            double[] gx = new double[counts[g]];
            double[] gy = new double[counts[g]];
            int n = 0;
            for (int i = 0; i < group.length; i++) {
                if (group[i] == g) {
                    gx[n] = x[i];
                    gy[n++] = y[i];
                }
            }
            XYSeries s = chart.addSeries(groupNames.get(g) + " (" + counts[g] + ")", gx, gy);
            s.setMarker(SeriesMarkers.CIRCLE);
            s.setMarkerColor(color(g));
        }
        return chart;
    }

    private static void style(XYStyler st) {
        st.setChartBackgroundColor(Color.WHITE);
        st.setPlotBackgroundColor(Color.WHITE);
        st.setPlotGridLinesColor(new Color(0xe4, 0xe4, 0xe4));
        st.setAntiAlias(true);
    }

    /** Adds centres (or any reference points) drawn as large black crosses with a white outline. */
    public static void addCentres(XYChart chart, String name, double[] cx, double[] cy) {
        XYSeries s = chart.addSeries(name, cx, cy);
        s.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        s.setMarker(new BigCross());
        s.setMarkerColor(Color.BLACK);
    }

    /** An empty line chart; add series with {@link #addLine}. With {@code logY} the y axis is logarithmic. */
    public static XYChart lines(String title, String xTitle, String yTitle, boolean logY) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle(xTitle).yAxisTitle(yTitle).build();
        XYStyler st = chart.getStyler();
        style(st);
        st.setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        st.setLegendPosition(Styler.LegendPosition.InsideNE);
        st.setYAxisLogarithmic(logY);
        st.setMarkerSize(7);
        return chart;
    }

    public static XYSeries addLine(XYChart chart, String name, double[] x, double[] y) {
        XYSeries s = chart.addSeries(name, x, y);
        int i = chart.getSeriesMap().size() - 1;
        s.setLineColor(color(i));
        s.setMarkerColor(color(i));
        s.setMarker(SeriesMarkers.CIRCLE);
        return s;
    }

    /** Colour of a fitted curve drawn over data points (the CLI's isotonic plot uses it). */
    public static final Color FIT_COLOR = new Color(0xc9, 0x26, 0x2b);

    /**
     * A chart of data points, small and translucent so that a dense sample still shows its spread, for fitted
     * curves to be drawn on top with {@link #addFit} (the plot of {@code sparkgpu isotonic --plot}).
     */
    public static XYChart fitChart(String title, String xTitle, String yTitle, String dataName, double[] x,
                                   double[] y) {
        XYChart chart = lines(title, xTitle, yTitle, false);
        chart.getStyler().setMarkerSize(x.length > 5000 ? 2 : 4);
        XYSeries pts = chart.addSeries(dataName, x, y);
        pts.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        pts.setMarker(SeriesMarkers.CIRCLE);
        pts.setMarkerColor(new Color(0x1f, 0x6f, 0xb4, 90));
        return chart;
    }

    /**
     * Adds a fitted function as a thick line through ({@code x}, {@code y}) without markers, for example an
     * isotonic model's boundaries and predictions (it interpolates linearly between them, as the line does).
     */
    public static XYSeries addFit(XYChart chart, String name, double[] x, double[] y, Color color) {
        XYSeries fit = chart.addSeries(name, x, y);
        fit.setXYSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        fit.setMarker(SeriesMarkers.NONE);
        fit.setLineColor(color);
        fit.setLineWidth(2.5f);
        return fit;
    }

    /**
     * The heat map of {@code sparkgpu scan --heatmap}: the grid coloured by observed / expected per cell with
     * the reported clusters outlined and labelled with their p-values (see ScanReport). {@code grid} is the
     * grid the scan ran on, e.g. {@code new GpuScanStatistic()...toInput().build(data, model).grid}, and
     * {@code info} and {@code result} those of the fitted {@code GpuScanModel}.
     */
    public static BufferedImage scanHeatMap(ScanGrid grid, ScanGridInfo info, ScanResult result, String title) {
        return ScanReport.heatMapImage(grid, info, result, title);
    }

    /**
     * The picture of {@code sparkgpu fhn --plot}: the space-time heat map of v above the v and w profiles at the
     * end, for a result of a run with {@code recordEvery > 0} (e.g. {@code FhnStep.run(config, params, 1).value[0]})
     * under {@code config}.
     */
    public static BufferedImage fhnImage(io.sparkgpu.pde.FhnConfig config, io.sparkgpu.pde.FhnResult result,
                                         String title) {
        return FhnReport.image(config, result, title);
    }

    /**
     * Writes {@code chart} as a PNG to exactly {@code file} (parent directories are created), replacing it if it
     * exists. The image is written to a hidden temporary sibling and moved over {@code file} only when complete, so
     * a failure never leaves a truncated PNG nor destroys the previous one. (The command line checks its outputs
     * first and writes through {@link SafeOutput}.)
     */
    public static Path savePng(XYChart chart, Path file) throws IOException {
        Path abs = file.toAbsolutePath();
        Path parent = abs.getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Path tmp = abs.resolveSibling("." + abs.getFileName() + SafeOutput.TMP_MARK
                + java.util.UUID.randomUUID().toString().substring(0, 8));
        try {
            try (OutputStream os = Files.newOutputStream(tmp, java.nio.file.StandardOpenOption.CREATE_NEW)) {
                BitmapEncoder.saveBitmap(chart, os, BitmapFormat.PNG);
            }
            Files.move(tmp, abs, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                    java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        return file;
    }

    /** A cross three times the chart's marker size, white-outlined so that it shows on top of dense points. */
    static final class BigCross extends Marker {
        @Override
        public void paint(Graphics2D g, double xOffset, double yOffset, int markerSize) {
            double h = Math.max(7, markerSize * 1.6);
            Line2D a = new Line2D.Double(xOffset - h, yOffset - h, xOffset + h, yOffset + h);
            Line2D b = new Line2D.Double(xOffset - h, yOffset + h, xOffset + h, yOffset - h);
            g.setStroke(new BasicStroke(6f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
            g.setColor(Color.WHITE);
            g.draw(a);
            g.draw(b);
            g.setStroke(new BasicStroke(3f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND));
            g.setColor(Color.BLACK);
            g.draw(a);
            g.draw(b);
        }
    }
}
