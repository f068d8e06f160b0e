package io.sparkgpu.common;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ProgressTest {
    private static final Pattern LEFT = Pattern.compile("about ([0-9.]+) s left");

    @AfterEach
    void restore() {
        Progress.setSink(null);
    }

    @Test
    void linesCarryElapsedAndAMonotoneEstimateOfWhatRemains() {
        long[] now = {0};
        List<String> lines = new ArrayList<>();
        Progress.setSink(lines::add);
        Progress p = Progress.start("k-means", 5, () -> now[0]);
        double previousLeft = Double.MAX_VALUE;
        for (int i = 1; i <= 5; i++) {
            now[0] += (long) ((1.0 + 0.1 * (i % 2)) * 1e9); // steps of about a second
            String line = p.step(i, "iteration", "cost " + i);
            assertEquals(line, lines.get(i - 1), "the sink gets the line");
            assertTrue(line.startsWith("k-means: iteration " + i + "/5 (cost " + i + "), "), line);
            assertTrue(line.contains(" s elapsed"), line);
            if (i < 5) {
                Matcher m = LEFT.matcher(line);
                assertTrue(m.find(), line);
                double left = Double.parseDouble(m.group(1));
                assertTrue(left < previousLeft, "the estimate shrinks: " + lines);
                previousLeft = left;
            } else {
                assertTrue(line.endsWith(", done"), line);
            }
        }
        // 1 of 4 steps in 2 s: 6 s left; elapsed and the remainder in minutes past a minute
        now[0] = 0;
        Progress q = Progress.start("isotonic", 4, () -> now[0]);
        now[0] = 2_000_000_000L;
        assertEquals("isotonic: phase 1/4 (pack done), 2.0 s elapsed, about 6.0 s left", q.step(1, "phase", "pack done"));
        now[0] = 90_000_000_000L;
        assertEquals("isotonic: phase 2/4, 1 min 30 s elapsed, about 1 min 30 s left", q.step(2, "phase", ""));
        // unknown total: no estimate; withTotal keeps the start
        Progress u = Progress.start("t", 0, () -> now[0]);
        assertEquals("t: replicas 3 (x), 0.0 s elapsed", u.step(3, "replicas", "x"));
        now[0] += 1_000_000_000L;
        assertEquals("t: replicas 1/2, 1.0 s elapsed, about 1.0 s left", u.withTotal(2).step(1, "replicas", ""));
    }

    @Test
    void aSilentSinkSilences() {
        List<String> lines = new ArrayList<>();
        Progress.setSink(line -> { });
        Progress.start("scan", 2).step(1, "replicas", "");
        Progress.setSink(lines::add);
        Progress.start("scan", 2).step(1, "replicas", "");
        assertEquals(1, lines.size());
    }
}
