package io.sparkgpu.isotonic;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;

/**
 * Solves one partition on the backend the policy picks. With {@code auto}, a GPU failure is logged once and the
 * partition is solved again by the CPU twin, which gives the same bits, so a GPU problem never changes an answer.
 * The L1 loss always runs on the CPU (median PAVA needs the rows of every block). For the L2 loss with PAVA on
 * the GPU, {@link #solveRows} sorts and pools the raw rows on the device too ({@link IsoPoolGpu}).
 */
final class IsotonicSolver {
    /** The phase name of a partition's solve (in logs, errors and injected test faults). */
    public static final String PHASE = "isotonic solve";

    private IsotonicSolver() {
    }

    /** Least-squares solution of {@code p} with PAVA(-merge) or MLS, with where it was computed. */
    public static BackendChooser.Ran<L2Blocks> solveL2(IsoPoints p, IsotonicConfig.Algorithm algorithm,
                                                       Backend backend, int chunk) {
        if (algorithm == IsotonicConfig.Algorithm.MLS) {
            IsotonicGpu.checkMlsSize(p.n);
        }
        return BackendChooser.run(p.n == 0 ? Backend.CPU : backend, IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL,
                PHASE,
                dev -> algorithm == IsotonicConfig.Algorithm.MLS ? IsotonicGpu.mls(dev, p, null)
                        : IsotonicGpu.pavaMerge(dev, p, chunk, null),
                () -> algorithm == IsotonicConfig.Algorithm.MLS ? IsotonicCpu.mls(p, 1) : IsotonicCpu.pava(p));
    }

    /** One partition's solution (L2Blocks or L1Blocks) with its row counts and the backend that solved it. */
    public static final class Solved {
        public final Object blocks;
        public final long rows;
        public final long zeroWeightRows;
        public final boolean gpu;

        Solved(Object blocks, long rows, long zeroWeightRows, boolean gpu) {
            this.blocks = blocks;
            this.rows = rows;
            this.zeroWeightRows = zeroWeightRows;
            this.gpu = gpu;
        }

        /** The least-squares blocks (L2 loss). */
        public L2Blocks l2() {
            return (L2Blocks) blocks;
        }
    }

    /**
     * Pools and solves {@code len} raw rows of one partition ({@link IsoPoints#pool} arguments). L2 with PAVA on a
     * resolved GPU: sort, pool and PAVA-merge on the device ({@link IsoPoolGpu#solve}); otherwise (L1, MLS, CPU, or
     * a GPU failure under {@code auto}) the host pools and {@link #solveL2} or {@link L1Blocks#pava} solves. Every
     * route gives the same blocks and bits.
     *
     * @throws IllegalArgumentException as {@link IsoPoints#pool}
     */
    public static Solved solveRows(double[] x, double[] y, double[] w, int len, boolean negate, IsoScales sc,
                                   IsoColumns cols, IsotonicConfig cfg) {
        return solveBlocks(java.util.List.of(new IsoBlock(x, y, w, len)), negate, sc, cols, cfg);
    }

    /**
     * {@link #solveRows} of the rows of several blocks together: on the device each block is uploaded in place, so
     * one range made of many packed blocks needs no host concatenation (on the host they are concatenated first).
     */
    static Solved solveBlocks(java.util.List<IsoBlock> blocks, boolean negate, IsoScales sc, IsoColumns cols,
                              IsotonicConfig cfg) {
        boolean l1 = cfg.loss == IsotonicConfig.Loss.L1;
        boolean l2Pava = !l1 && cfg.algorithm == IsotonicConfig.Algorithm.PAVA;
        long len = IsoBlock.rows(blocks);
        if (l2Pava && len > 0 && !IsoPoolGpu.overBudget(len)) {
            return BackendChooser.run(cfg.backend, IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL, PHASE,
                    dev -> IsoPoolGpu.solve(dev, blocks, negate, sc, cols, cfg.chunk, null),
                    // the device-side solve failed or none resolved: the solve would not find one either
                    afterGpuFailure -> host(IsoBlock.concat(blocks), negate, sc, cols, cfg, Backend.CPU)).value;
        }
        // L1, MLS, or rows over the device-memory budget: pooled on the host, solved on the backend (PAVA-merge in
        // chunks within the budget, IsotonicGpu.inChunks): the same blocks and bits on every route
        return host(IsoBlock.concat(blocks), negate, sc, cols, cfg, l1 ? Backend.CPU : cfg.backend);
    }

    /** Pools on the host, then solves (L1: median PAVA on the CPU; L2: {@link #solveL2} on {@code backend}). */
    private static Solved host(IsoBlock b, boolean negate, IsoScales sc, IsoColumns cols, IsotonicConfig cfg,
                               Backend backend) {
        boolean l1 = cfg.loss == IsotonicConfig.Loss.L1;
        IsoPoints p = IsoPoints.pool(b.x, b.y, b.w, b.n, negate, sc, l1, cols);
        if (l1) {
            return new Solved(L1Blocks.pava(p), p.rows, p.zeroWeightRows, false);
        }
        return solvePooled(p, cfg, backend);
    }

    /** The phase name of pooling a group of blocks before their points are shuffled by feature range. */
    public static final String POOL_PHASE = "isotonic pool";

    /**
     * {@link IsoPoints#poolPart} of the rows of {@code blocks} together (L2, no per-feature weight check): on the
     * device ({@link IsoPoolGpu#poolPart}, each block uploaded in place) when {@code backend} allows one and the rows
     * fit its memory budget, else, or after a GPU failure under {@code auto}, on the host. Same points either way.
     *
     * @return the points, and whether the device pooled them
     */
    static BackendChooser.Ran<IsoPoints> poolPart(java.util.List<IsoBlock> blocks, boolean negate, IsoScales sc,
                                                  IsoColumns cols, Backend backend) {
        long rows = IsoBlock.rows(blocks);
        java.util.function.Supplier<IsoPoints> host = () -> {
            IsoBlock all = IsoBlock.concat(blocks);
            return IsoPoints.poolPart(all.x, all.y, all.w, all.n, negate, sc, cols);
        };
        return BackendChooser.run(rows == 0 || IsoPoolGpu.overBudget(rows) ? Backend.CPU : backend,
                IsotonicGpu.MODULE, IsotonicGpu.PROBE_KERNEL, POOL_PHASE,
                dev -> IsoPoolGpu.poolPart(dev, blocks, negate, sc, cols), host);
    }

    /** Least squares ({@link #solveL2} on {@code backend}) of already pooled points, with their row counts. */
    static Solved solvePooled(IsoPoints p, IsotonicConfig cfg, Backend backend) {
        BackendChooser.Ran<L2Blocks> b = solveL2(p, cfg.algorithm, backend, cfg.chunk);
        return new Solved(b.value, p.rows, p.zeroWeightRows, p.n > 0 && b.onGpu());
    }
}
