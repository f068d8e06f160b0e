#!/usr/bin/env python3
"""Peers for the counting sort benchmark (bench sort), run on the GPU host (never a dependency of the package):
PyTorch's torch.sort (CUB device radix sort; it always returns int64 indices as well) for the keys-only sort,
PyTorch's torch.bincount + repeat_interleave (a counting sort from library calls) for the keys-only sort, and
torch.sort(stable=True) for the stable key-value order (the indices). Same shapes and distributions as
SortBenchmark (int32 keys in [0, m): uniform, Zipf(s) with rank r mapped to key r * 0x9E3779B1 mod m for
power-of-two m, or one key holding half), generated here with torch, so the same shape, not the same values.

Timing: "kernels" = the sort on keys already on the GPU between two CUDA events; "with transfers" = from a host
tensor (pageable, like a Java array) to the result back on the host, wall clock. Median of --reps runs after a
warm-up. Prints the same Markdown table as SortBenchmark.

Usage: sort_peers.py [--n 1e6,1e7,1e8] [--m 2^8,2^12,2^16,2^20,2^24] [--dists uniform,zipf,hot] [--zipf-s 1.2]
                     [--ops keys,kv] [--reps 5] [--seed 42] [--wide] [--markdown FILE]
--wide: also, at each n, uniform full-range int32 keys (SortBenchmark --wide): torch.sort stable and default.
"""
import argparse
import datetime
import os
import platform
import statistics
import sys
import time


def counts(text, lo, hi):
    out = []
    for t in text.split(","):
        t = t.strip().replace("_", "")
        if not t:
            continue
        v = 1 << int(t[2:]) if t.startswith("2^") else int(float(t))
        if not lo <= v <= hi:
            raise SystemExit("value %s outside [%d, %d]" % (t, lo, hi))
        out.append(v)
    return out


def range_name(m):
    return "2^%d" % (m.bit_length() - 1) if m & (m - 1) == 0 else str(m)


def make_keys(torch, dist, n, m, s, seed, dev):
    g = torch.Generator(device=dev)
    g.manual_seed(seed)
    if dist == "uniform":
        return torch.randint(0, m, (n,), device=dev, generator=g, dtype=torch.int32)
    if dist == "hot":
        hot = int(torch.randint(0, m, (1,), device=dev, generator=g))
        k = torch.randint(0, m, (n,), device=dev, generator=g, dtype=torch.int32)
        coin = torch.rand(n, device=dev, generator=g) < 0.5
        return torch.where(coin, torch.full_like(k, hot), k)
    cdf = torch.cumsum(torch.arange(1, m + 1, device=dev, dtype=torch.float64).pow(-s), 0)
    u = torch.rand(n, device=dev, generator=g, dtype=torch.float64) * cdf[-1]
    rank = torch.searchsorted(cdf, u).clamp_(max=m - 1)
    if m & (m - 1) == 0:
        return ((rank * 0x9E3779B1) & (m - 1)).to(torch.int32)
    return rank.to(torch.int32)


def describe(dist, s):
    return {"uniform": "uniform", "hot": "one key 50%"}.get(dist, "zipf-%s" % s)


def kernel_ms(torch, fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def wall_ms(torch, fn, reps):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def row(n, m, dist, op, impl, ms, notes):
    if ms is None:
        t, g = "n/a", "n/a"
    else:
        t, g = "%.3f" % ms, "%.3f" % (n / (ms / 1e3) / 1e9)
    return "| %d | %s | %s | %s | %s | %s | %s | %s |" % (n, range_name(m), dist, op, impl, t, g,
                                                         notes.replace("|", "\\|"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1e6,1e7,1e8")
    ap.add_argument("--m", default="2^8,2^12,2^16,2^20,2^24")
    ap.add_argument("--dists", default="uniform,zipf,hot")
    ap.add_argument("--zipf-s", type=float, default=1.2)
    ap.add_argument("--ops", default="keys,kv")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--markdown")
    ap.add_argument("--wide", action="store_true")
    a = ap.parse_args()
    ns = counts(a.n, 1, 2**31 - 1)
    ms = counts(a.m, 1, 1 << 24)
    dists = [d.strip() for d in a.dists.split(",") if d.strip()]
    ops = [o.strip() for o in a.ops.split(",") if o.strip()]
    for d in dists:
        if d not in ("uniform", "zipf", "hot"):
            raise SystemExit("--dists: unknown %s" % d)
    for o in ops:
        if o not in ("keys", "kv"):
            raise SystemExit("--ops: unknown %s" % o)

    import torch
    dev = torch.device("cuda")
    lines = ["## counting sort benchmark: peers", ""]
    lines.append("- command: `%s`" % " ".join(["sort_peers.py"] + sys.argv[1:]))
    lines.append("- date: %s" % datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"))
    lines.append("- host: %d cores, Python %s, PyTorch %s (CUDA %s)" % (os.cpu_count(), platform.python_version(),
                                                                      torch.__version__, torch.version.cuda))
    lines.append("- GPU: %s" % torch.cuda.get_device_name(0))
    lines.append("- keys: int32 in [0, m), generated with torch (same shapes as SortBenchmark, not the same values)")
    lines.append("")
    lines.append("| n | m | keys | op | implementation | ms | G keys/s | notes |")
    lines.append("| ---: | ---: | --- | --- | --- | ---: | ---: | --- |")
    for n in ns:
        if a.wide:
            g = torch.Generator(device=dev)
            g.manual_seed(a.seed)
            keys = torch.randint(-2**31, 2**31, (n,), device=dev, generator=g, dtype=torch.int64).to(torch.int32)
            for impl, fn in (("PyTorch torch.sort(stable=True)", lambda k: torch.sort(k, stable=True)[1]),
                             ("PyTorch torch.sort", lambda k: torch.sort(k)[1])):
                try:
                    kms = kernel_ms(torch, lambda: fn(keys), a.reps)
                    lines.append(row(n, 1 << 32, "uniform", "kv (order, long)", impl + ", kernels", kms,
                                     "full-range int32; CUB radix sort pairs; int64 indices"))
                except Exception as e:
                    lines.append(row(n, 1 << 32, "uniform", "kv (order, long)", impl + ", kernels", None,
                                     "failed: %s" % e))
                print("[peers] " + lines[-1], file=sys.stderr, flush=True)
            del keys
            torch.cuda.empty_cache()
        for m in ms:
            for dist in dists:
                name = describe(dist, a.zipf_s)
                keys = make_keys(torch, dist, n, m, a.zipf_s, a.seed, dev)
                host = keys.cpu()
                torch.cuda.synchronize()
                for op in ops:
                    if op == "keys":
                        opn = "keys only"
                        cands = [
                            ("PyTorch torch.sort", lambda k: torch.sort(k)[0],
                             "CUB radix sort; returns int64 indices too"),
                            ("PyTorch bincount+repeat_interleave",
                             lambda k: torch.repeat_interleave(
                                 torch.arange(m, device=dev, dtype=torch.int32),
                                 torch.bincount(k, minlength=m), output_size=n),
                             "counting sort from library calls"),
                        ]
                    else:
                        opn = "kv (stable order, long)"
                        cands = [("PyTorch torch.sort(stable=True)", lambda k: torch.sort(k, stable=True)[1],
                                  "CUB radix sort pairs; int64 indices")]
                    for impl, fn, note in cands:
                        try:
                            kms = kernel_ms(torch, lambda: fn(keys), a.reps)
                            lines.append(row(n, m, name, opn, impl + ", kernels", kms, note))
                        except Exception as e:  # a peer that cannot run is reported, not fatal
                            lines.append(row(n, m, name, opn, impl + ", kernels", None, "failed: %s" % e))
                        try:
                            tms = wall_ms(torch, lambda: fn(host.to(dev)).cpu(), a.reps)
                            lines.append(row(n, m, name, opn, impl + ", with transfers", tms,
                                             "pageable host tensor in and out"))
                        except Exception as e:
                            lines.append(row(n, m, name, opn, impl + ", with transfers", None, "failed: %s" % e))
                        print("[peers] " + lines[-2], file=sys.stderr, flush=True)
                del keys, host
                torch.cuda.empty_cache()
    lines.append("")
    lines.append("ms: median of %d runs after a warm-up. kernels: between two CUDA events on keys already on the GPU. "
                 "with transfers: host tensor to GPU, sort, result back to the host, wall clock. "
                 "G keys/s = n / time." % a.reps)
    md = "\n".join(lines) + "\n"
    print(md)
    if a.markdown:
        os.makedirs(os.path.dirname(os.path.abspath(a.markdown)), exist_ok=True)
        with open(a.markdown, "w") as f:
            f.write(md)


if __name__ == "__main__":
    main()
