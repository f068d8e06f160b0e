package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * {@link BarrierStages#groupByLocation}: the groups of a single-stage fit follow where the blocks are cached (one
 * executor per GPU must not fetch half its blocks from the other), have sizes within one of each other and cover
 * every partition once.
 */
class BarrierStagesGroupingTest {
    private static void assertPartition(List<List<Integer>> groups, int parts, int tasks) {
        assertEquals(tasks, groups.size());
        TreeSet<Integer> seen = new TreeSet<>();
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (List<Integer> g : groups) {
            for (int p : g) {
                assertTrue(seen.add(p), "partition " + p + " in two groups: " + groups);
            }
            min = Math.min(min, g.size());
            max = Math.max(max, g.size());
        }
        assertEquals(parts, seen.size(), "every partition once: " + groups);
        assertTrue(max - min <= 1, "sizes within one: " + groups);
    }

    /** Blocks a task reads from another executor: those not where the most of its group's blocks are. */
    private static long remote(List<List<Integer>> groups, String[] where) {
        long r = 0;
        for (List<Integer> g : groups) {
            java.util.Map<String, Long> at = new java.util.HashMap<>();
            for (int p : g) {
                at.merge(where[p], 1L, Long::sum);
            }
            r += g.size() - at.values().stream().mapToLong(Long::longValue).max().orElse(0);
        }
        return r;
    }

    @Test
    void interleavedBlocksOfTwoExecutorsAreReadInPlace() {
        String[] where = new String[32];
        for (int p = 0; p < where.length; p++) {
            where[p] = p % 2 == 0 ? "executor_h_0" : "executor_h_1"; // how a packing job spreads them
        }
        List<List<Integer>> g = BarrierStages.groupByLocation(where, 2);
        assertPartition(g, 32, 2);
        assertEquals(0, remote(g, where), g.toString());
        // contiguous id ranges, the old grouping, would have read half of them remotely
        List<List<Integer>> ranges = new ArrayList<>();
        ranges.add(new ArrayList<>());
        ranges.add(new ArrayList<>());
        for (int p = 0; p < 32; p++) {
            ranges.get(p < 16 ? 0 : 1).add(p);
        }
        assertEquals(16, remote(ranges, where));
    }

    @Test
    void unevenSplitsStraddleOneExecutorAtMostPerCut() {
        String[] where = new String[33];
        for (int p = 0; p < where.length; p++) {
            where[p] = p < 3 ? "" : p % 3 == 0 ? "executor_h_2" : p % 5 == 0 ? "executor_h_0" : "executor_h_1";
        }
        for (int tasks : new int[] {1, 2, 3, 4, 7, 33}) {
            List<List<Integer>> g = BarrierStages.groupByLocation(where, tasks);
            assertPartition(g, 33, tasks);
            assertTrue(remote(g, where) <= 33, g.toString());
        }
        List<List<Integer>> three = BarrierStages.groupByLocation(where, 3);
        assertEquals(List.of(0, 1, 2), three.get(0).subList(0, 3), "partitions with no location first");
        assertTrue(remote(three, where) < 11, "mostly in place: " + three);
    }
}
