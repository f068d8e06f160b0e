/*
 * Host/device contract of the pde module's partitioned tridiagonal solver (io.sparkgpu.pde.PdeEngine): the threads
 * a block of each chunk size R may have and the dynamic shared memory of a plain and a staged block. Checked
 * against the Java side by io.sparkgpu.pde.PdeKernelLayoutTest (format: see include/layout/kmeans.cuh).
 */
#pragma once

/* __launch_bounds__ of the partition kernels of R = 4, 8 and 16 rows a thread (PdeEngine.partitionMaxThreads). */
#define PDE_PARTITION_MAXT_R4 1024
#define PDE_PARTITION_MAXT_R8 512
#define PDE_PARTITION_MAXT_R16 256

/* Doubles of shared memory a thread of a partition block keeps for the PCR: two buffers of a, c, d. */
#define PDE_PCR_DOUBLES 6

/* Chunks a system of n unknowns has at R rows a chunk. */
#define PDE_CHUNKS(n, r) (((n) + (r) - 1) / (r))

/* Staged doubles an array of a staged block of sb systems: a pad row a chunk (PdeEngine.partitionStagedShared). */
#define PDE_STAGED_ROWS(n, r, sb) ((sb) * ((n) + PDE_CHUNKS(n, r)))

/* Dynamic shared bytes of a staged block: the PCR buffers, the four staged arrays and the output. */
#define PDE_STAGED_SHARED_BYTES(n, r, sb) \
    (8 * (PDE_PCR_DOUBLES * (sb) * PDE_CHUNKS(n, r) + 5 * PDE_STAGED_ROWS(n, r, sb)))
