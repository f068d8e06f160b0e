#!/usr/bin/env python3
"""Peers for the k-means benchmark, run on the GPU host in the same call as bench-e2e (never a dependency of
the package): scikit-learn's Lloyd KMeans on all cores, and a plain PyTorch Lloyd step on the GPU (fp32 and
fp64 GEMM distances, argmin, index_add), on data of the same shape as EndToEndBenchmark's (64 Gaussian blobs
with centres uniform in [-5, 5)^d, sigma 1; generated here with numpy, so the same shape, not the same values).

Usage: kmeans_peers.py [--n 10000000] [--d 32] [--k 64] [--iters 10] [--markdown FILE]
"""
import argparse
import os
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--k", type=int, default=64)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--markdown")
    a = ap.parse_args()
    rng = np.random.default_rng(42)
    centres = rng.uniform(-5, 5, size=(a.k, a.d))
    t0 = time.perf_counter()
    lab = rng.integers(0, a.k, size=a.n)
    x = centres[lab] + rng.standard_normal((a.n, a.d))
    gen = time.perf_counter() - t0
    init = x[:a.k].copy()
    rows = []

    try:
        from sklearn.cluster import KMeans
        import threadpoolctl
        km = KMeans(n_clusters=a.k, init=init, n_init=1, max_iter=a.iters, tol=0.0, algorithm="lloyd")
        t0 = time.perf_counter()
        km.fit(x)
        s = time.perf_counter() - t0
        info = threadpoolctl.threadpool_info()
        threads = max((i.get("num_threads", 0) for i in info), default=0)
        rows.append(("scikit-learn KMeans (lloyd, fp64, data in memory, %d threads)" % threads, s,
                     s / max(1, km.n_iter_), "%d iterations" % km.n_iter_))
    except Exception as e:  # a peer that cannot run is reported, not fatal
        rows.append(("scikit-learn KMeans", float("nan"), float("nan"), "failed: %s" % e))

    try:
        import torch
        dev = torch.device("cuda")
        t0 = time.perf_counter()
        xh = torch.from_numpy(x)
        xd = xh.to(dev)
        torch.cuda.synchronize()
        up = time.perf_counter() - t0
        pinned = xh.pin_memory()
        t0 = time.perf_counter()
        xd2 = pinned.to(dev, non_blocking=True)
        torch.cuda.synchronize()
        up_pinned = time.perf_counter() - t0
        del xd2, pinned
        rows.append(("PyTorch host->device copy of x (pageable / pinned)", up, up_pinned,
                     "%.1f / %.1f GB/s" % (x.nbytes / up / 1e9, x.nbytes / up_pinned / 1e9)))
        for dt in (torch.float32, torch.float64):
            xs = xd.to(dt)
            c = torch.from_numpy(init).to(dev, dt)
            xx = (xs * xs).sum(1)

            def step(c):
                d2 = xx[:, None] - 2 * xs @ c.T + (c * c).sum(1)[None, :]
                best = d2.argmin(1)
                s = torch.zeros_like(c).index_add_(0, best, xs)
                cnt = torch.bincount(best, minlength=a.k).to(dt)
                return torch.where(cnt[:, None] > 0, s / cnt.clamp(min=1)[:, None], c)

            c = step(c)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(a.iters):
                c = step(c)
            torch.cuda.synchronize()
            s = time.perf_counter() - t0
            rows.append(("PyTorch Lloyd step on the GPU (%s GEMM distances, argmin, index_add)" % str(dt).split(".")[1],
                         s, s / a.iters, "data already on the GPU"))
            del xs
        t0 = time.perf_counter()
        _ = xd.sum().item()
        torch.cuda.synchronize()
        rd = time.perf_counter() - t0
        rows.append(("PyTorch: read x once on the GPU (sum)", rd, rd, "%.0f GB/s" % (x.nbytes / rd / 1e9)))
    except Exception as e:
        rows.append(("PyTorch", float("nan"), float("nan"), "failed: %s" % e))

    out = ["### k-means peers (same shape: n=%d, d=%d, k=%d, %d iterations; numpy data generated in %.1f s)" %
           (a.n, a.d, a.k, a.iters, gen), "", "- host: %d cores; %s" % (os.cpu_count(), gpu_name()), "",
           "| peer | total s | s per iteration | note |", "| --- | ---: | ---: | --- |"]
    for r in rows:
        out.append("| %s | %.4f | %.5f | %s |" % r)
    text = "\n".join(out) + "\n"
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)


def gpu_name():
    try:
        import torch
        return torch.cuda.get_device_name(0)
    except Exception:
        return "no GPU"


if __name__ == "__main__":
    main()
