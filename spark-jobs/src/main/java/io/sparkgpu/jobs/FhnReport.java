package io.sparkgpu.jobs;

import io.sparkgpu.pde.FhnConfig;
import io.sparkgpu.pde.FhnResult;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.util.Locale;
import javax.imageio.ImageIO;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The picture of one FitzHugh-Nagumo run ({@code sparkgpu fhn --plot}, and {@link Plots#fhnImage} for notebooks): on
 * top the space-time heat map of v (x across, time downwards, one row per recorded frame), below the v and w
 * profiles at the final time.
 */
final class FhnReport {
    /** Frames the command records for its plot (the run's recordEvery is chosen to give at most this many). */
    static final int PLOT_FRAMES = 400;

    private FhnReport() {
    }

    /** recordEvery giving at most {@link #PLOT_FRAMES} + 1 frames over {@code steps} steps. */
    static int recordEveryFor(long steps) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, (steps + PLOT_FRAMES - 1) / PLOT_FRAMES));
    }

    static void write(SafeOutput target, FhnConfig c, FhnResult r, String title) throws java.io.IOException {
        BufferedImage img = image(c, r, title);
        target.writeStream(os -> {
            if (!ImageIO.write(img, "png", os)) {
                throw new java.io.IOException("no PNG writer in this JVM");
            }
        });
    }

    /** The heat map of {@code r.field} above the final profiles; {@code r} must carry a field. */
    static BufferedImage image(FhnConfig c, FhnResult r, String title) {
        if (r.field == null || r.frames < 1) {
            throw new IllegalArgumentException("the plot needs the space-time field: run with recordEvery > 0");
        }
        int n = r.v.length;
        int frames = r.frames;
        int width = Plots.WIDTH;
        int left = 90;
        int right = 130;
        int top = 50;
        int mapH = 360;
        int gap = 45;
        int plotW = width - left - right;
        XYChart profiles = new XYChartBuilder().width(width).height(300).title("v and w at t = " + fmt(r.finalTime))
                .xAxisTitle("x").yAxisTitle("value").build();
        profiles.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        profiles.getStyler().setLegendPosition(Styler.LegendPosition.InsideNE);
        profiles.getStyler().setChartBackgroundColor(Color.WHITE);
        double[] x = new double[n];
        double dx = c.dx();
        for (int i = 0; i < n; i++) {
            x[i] = i * dx;
        }
        for (String name : new String[] {"v", "w"}) {
            XYSeries line = profiles.addSeries(name, x, name.equals("v") ? r.v : r.w);
            line.setMarker(SeriesMarkers.NONE);
            line.setLineColor(Plots.color(name.equals("v") ? 0 : 1));
        }
        BufferedImage chart = BitmapEncoder.getBufferedImage(profiles);
        int height = top + mapH + gap + chart.getHeight();
        BufferedImage img = new BufferedImage(width, height, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = img.createGraphics();
        try {
            g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
            g.setColor(Color.WHITE);
            g.fillRect(0, 0, width, height);
            double lo = Double.POSITIVE_INFINITY;
            double hi = Double.NEGATIVE_INFINITY;
            for (double v : r.field) {
                if (Double.isFinite(v)) {
                    lo = Math.min(lo, v);
                    hi = Math.max(hi, v);
                }
            }
            if (!(hi > lo)) {
                hi = lo + 1;
            }
            // one pixel column per node bucket, one pixel row per frame bucket; the bucket's largest v (pulses stay
            // visible when many nodes share a pixel)
            for (int px = 0; px < plotW; px++) {
                int i0 = (int) ((long) px * n / plotW);
                int i1 = Math.max(i0 + 1, (int) ((long) (px + 1) * n / plotW));
                for (int py = 0; py < mapH; py++) {
                    int f0 = (int) ((long) py * frames / mapH);
                    int f1 = Math.max(f0 + 1, (int) ((long) (py + 1) * frames / mapH));
                    double m = Double.NEGATIVE_INFINITY;
                    for (int f = f0; f < f1; f++) {
                        for (int i = i0; i < i1; i++) {
                            m = Math.max(m, r.field[f * n + i]);
                        }
                    }
                    img.setRGB(left + px, top + py, heat((m - lo) / (hi - lo)).getRGB());
                }
            }
            g.setColor(Color.DARK_GRAY);
            g.setStroke(new BasicStroke(1f));
            g.drawRect(left, top, plotW, mapH);
            g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
            g.drawString(title, left, top - 18);
            g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
            g.drawString("x = 0", left, top + mapH + 16);
            String xr = "x = " + fmt(c.length);
            g.drawString(xr, left + plotW - g.getFontMetrics().stringWidth(xr), top + mapH + 16);
            g.drawString("t = 0", left - 50, top + 12);
            g.drawString("t = " + fmt(r.finalTime), left - 80, top + mapH);
            // colour bar
            int bx = left + plotW + 30;
            for (int py = 0; py < mapH; py++) {
                g.setColor(heat(1 - (double) py / (mapH - 1)));
                g.fillRect(bx, top + py, 20, 1);
            }
            g.setColor(Color.DARK_GRAY);
            g.drawRect(bx, top, 20, mapH);
            g.drawString("v " + fmt(hi), bx + 24, top + 10);
            g.drawString(fmt(lo), bx + 24, top + mapH);
            g.drawImage(chart, 0, top + mapH + gap, null);
        } finally {
            g.dispose();
        }
        return img;
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.4g", v);
    }

    /** A sequential map from dark blue (0) through teal and yellow to dark red (1). */
    static Color heat(double u) {
        double t = Double.isNaN(u) ? 0 : Math.max(0, Math.min(1, u));
        int[][] stops = {{0x1a, 0x1f, 0x5e}, {0x1f, 0x8a, 0x9b}, {0xf2, 0xd8, 0x3b}, {0xb3, 0x1b, 0x1b}};
        double p = t * (stops.length - 1);
        int k = Math.min(stops.length - 2, (int) p);
        double f = p - k;
        int[] a = stops[k];
        int[] b = stops[k + 1];
        return new Color((int) Math.round(a[0] + f * (b[0] - a[0])), (int) Math.round(a[1] + f * (b[1] - a[1])),
                (int) Math.round(a[2] + f * (b[2] - a[2])));
    }
}
