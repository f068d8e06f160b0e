/*
 * Monotone splines: Schumaker's quadratic with Butland's slopes and Gregory-Delbourgo's rational quadratic Hermite
 * spline; construction in one launch, evaluation (value, derivative) and inverse of millions of queries in one
 * launch each. CPU twin: io.sparkgpu.spline.SplineCpu (the same operations in the same order, so the same bits;
 * every + - * / sqrt below is written with the round-to-nearest intrinsics so no build flag can contract them into
 * fused multiply-adds); launcher: io.sparkgpu.spline.SplineGpu. The layout of a built spline and the maths are
 * described in SplineCpu and Spline: knots t, values a and slopes b of length T, for the non-decreasing version of
 * the data (times sign).
 *
 * spline_build     grid-stride over the intervals (Schumaker: writes knots 2i, 2i+1, and 2n-2 for the last; rational:
 *                  over the knots, a = sign y, b = sign p or Butland's slope). Every interval is checked
 *                  (interval_ok, SplineCpu.intervalOk); the smallest bad index goes to *bad (atomicMin), and the host
 *                  throws the twin's message for it.
 * spline_eval      one query per thread (grid-stride); the block first loads a guide of every stride-th knot into
 *                  shared memory, so a search starts with a bisection there and ends in one stride of the knots (the
 *                  answer, the largest j with t[j] <= z, is unique, so it equals the twin's plain bisection).
 * spline_eval_schumaker_data  the same for a Schumaker spline from its data knots alone (x, y, slopes): the search
 *                  runs over n knots instead of 2n - 1 and the interval's extra knot is recomputed by the build's
 *                  own operations (schumaker_mid), so the random accesses touch half the bytes for the same bits.
 *                  Queries are read and results written with the streaming cache hints (__ldcs/__stcs, evict
 *                  first): they are touched once, and the knot arrays (3 x 8 x T bytes, 48 MB for 10^6 Schumaker
 *                  knots: about the H100's whole L2) then stay cached for the random accesses of the searches.
 * spline_inverse   the same with the knot values (smallest k with a[k] >= v), then the closed-form quadratic root
 *                  or the safeguarded Newton iteration of the rational piece.
 * With extrapolate=error, a query outside the knots (values) is written as NaN and its index recorded in *bad.
 */

#include "layout/spline.cuh"

#define ADD(a, b) __dadd_rn((a), (b))
#define SUB(a, b) __dsub_rn((a), (b))
#define MUL(a, b) __dmul_rn((a), (b))
#define DIV(a, b) __ddiv_rn((a), (b))

/* ------------------------------------------------------------------------------------------- construction */

__device__ __forceinline__ double delta_at(const double *x, const double *y, double sign, int i) {
    const double dy = MUL(sign, SUB(y[i + 1], y[i]));
    return DIV(dy, SUB(x[i + 1], x[i]));
}

__device__ __forceinline__ double harmonic(double a, double b) {
    return (a > 0 && b > 0) ? MUL(2.0, MUL(a, DIV(b, ADD(a, b)))) : 0.0;
}

__device__ double butland(const double *x, const double *y, double sign, int n, int k) {
    if (n == 2) return delta_at(x, y, sign, 0);
    if (k == 0) {
        const double d0 = delta_at(x, y, sign, 0);
        const double e = SUB(MUL(2.0, d0), harmonic(d0, delta_at(x, y, sign, 1)));
        return (d0 > 0 && e > 0) ? e : 0.0;
    }
    if (k == n - 1) {
        const double dl = delta_at(x, y, sign, n - 2);
        const double e = SUB(MUL(2.0, dl), harmonic(delta_at(x, y, sign, n - 3), dl));
        return (dl > 0 && e > 0) ? e : 0.0;
    }
    return harmonic(delta_at(x, y, sign, k - 1), delta_at(x, y, sign, k));
}

__device__ bool interval_ok(const double *x, const double *y, const double *p, double sign, int i) {
    const double x0 = x[i], x1 = x[i + 1], y0 = y[i], y1 = y[i + 1];
    if (!(isfinite(x0) && isfinite(x1) && isfinite(y0) && isfinite(y1))) return false;
    const double h = SUB(x1, x0);
    const double dy = MUL(sign, SUB(y1, y0));
    if (!(h > 0 && h <= 1.7976931348623157e308 && dy >= 0 && DIV(dy, h) <= SPLINE_MAX_SLOPE)) return false;
    if (p != nullptr) {
        const double p0 = MUL(sign, p[i]), p1 = MUL(sign, p[i + 1]);
        return p0 >= 0 && p0 <= SPLINE_MAX_SLOPE && p1 >= 0 && p1 <= SPLINE_MAX_SLOPE;
    }
    return true;
}

/* The extra knot of Schumaker's interval [x0, x1] (signed values y0 <= y1, end slopes d0, d1): its position tk,
 * value abar and slope dbar (SplineCpu.schumakerInterval). Shared by the build and by the evaluation from the data
 * knots, which recomputes it with the same operations from the same inputs, hence the same bits. */
__device__ __forceinline__ void schumaker_mid(double x0, double x1, double y0, double y1, double d0, double d1,
                                              double &tk, double &abar, double &dbar) {
    const double h = SUB(x1, x0);
    const double del = DIV(SUB(y1, y0), h);
    if (ADD(d0, d1) == MUL(2.0, del)) {
        tk = x0;
        dbar = d0;
    } else if ((d0 < del && d1 > del) || (d0 > del && d1 < del)) {
        tk = ADD(x1, MUL(DIV(SUB(d0, del), SUB(d1, d0)), h));
        dbar = del;
    } else {
        tk = ADD(x0, MUL(0.5, h));
        dbar = SUB(MUL(2.0, del), MUL(0.5, ADD(d0, d1)));
        if (!(dbar >= 0)) dbar = 0.0;
    }
    if (!(tk >= x0)) tk = x0;
    if (tk > x1) tk = x1;
    const double wa = SUB(tk, x0);
    const double wb = SUB(x1, tk);
    if (wa == 0) {
        abar = y0;
        dbar = d0;
    } else if (wb == 0) {
        abar = y1;
        dbar = d1;
    } else {
        abar = ADD(y0, MUL(MUL(0.5, ADD(d0, dbar)), wa));
        if (!(abar >= y0)) abar = y0;
        if (abar > y1) abar = y1;
    }
}

__device__ void schumaker_interval(const double *x, const double *y, double sign, int n, int i, double *t,
                                   double *a, double *b) {
    const double x0 = x[i], x1 = x[i + 1];
    const double y0 = MUL(sign, y[i]), y1 = MUL(sign, y[i + 1]);
    const double d0 = butland(x, y, sign, n, i);
    const double d1 = butland(x, y, sign, n, i + 1);
    double tk, abar, dbar;
    schumaker_mid(x0, x1, y0, y1, d0, d1, tk, abar, dbar);
    t[2 * i] = x0;
    a[2 * i] = y0;
    b[2 * i] = d0;
    t[2 * i + 1] = tk;
    a[2 * i + 1] = abar;
    b[2 * i + 1] = dbar;
    if (i == n - 2) {
        t[2 * i + 2] = x1;
        a[2 * i + 2] = y1;
        b[2 * i + 2] = d1;
    }
}

/* p may be null (rational: Butland's slopes). t is written for Schumaker only (the rational knots are x). */
extern "C" __global__ void spline_build(const double *__restrict__ x, const double *__restrict__ y,
                                        const double *__restrict__ p, int n, double sign, int kind,
                                        double *__restrict__ t, double *__restrict__ a, double *__restrict__ b,
                                        int *__restrict__ bad) {
    const int stride = blockDim.x * gridDim.x;
    int firstBad = SPLINE_NO_BAD;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (i < n - 1 && !interval_ok(x, y, p, sign, i)) firstBad = min(firstBad, i);
        if (kind == SPLINE_KIND_RATIONAL) {
            a[i] = MUL(sign, y[i]);
            b[i] = p != nullptr ? MUL(sign, p[i]) : butland(x, y, sign, n, i);
        } else if (i < n - 1) {
            schumaker_interval(x, y, sign, n, i, t, a, b);
        }
    }
    if (firstBad != SPLINE_NO_BAD) atomicMin(bad, firstBad);
}

/* ------------------------------------------------------------------------------------------- evaluation */

/*
 * Value and derivative of piece j (t[j] <= z < t[j+1]) of the non-decreasing spline (SplineCpu.piece). With
 * WANT_D false the derivative is not computed (d is left unset): the value's operations are the same, so are its
 * bits, and a value-only evaluation saves the rational piece's second division.
 */
template <bool WANT_D>
__device__ void piece_of(int kind, double t0, double t1, double a0, double a1, double b0, double b1, double z,
                         double &v, double &d) {
    const double w = SUB(t1, t0);
    if (kind == SPLINE_KIND_SCHUMAKER) {
        if (b1 >= b0) {
            const double r = SUB(z, t0);
            const double th = DIV(r, w);
            const double g = SUB(b1, b0);
            v = ADD(a0, ADD(MUL(r, b0), MUL(r, MUL(MUL(g, th), 0.5))));
            if (WANT_D) d = ADD(b0, MUL(g, th));
        } else {
            const double q = SUB(t1, z);
            const double th = DIV(q, w);
            const double g = SUB(b0, b1);
            v = SUB(a1, ADD(MUL(q, b1), MUL(q, MUL(MUL(g, th), 0.5))));
            if (WANT_D) d = ADD(b1, MUL(g, th));
        }
    } else {
        const double dy = SUB(a1, a0);
        const double del = DIV(dy, w);
        const double th = DIV(SUB(z, t0), w);
        if (!(del > 0)) {
            v = ADD(a0, MUL(dy, th));
            if (WANT_D) d = del;
        } else {
            const double u = SUB(1.0, th);
            const double nn = MUL(th, ADD(MUL(del, th), MUL(b0, u)));
            const double mm = MUL(u, ADD(MUL(del, u), MUL(b1, th)));
            const double den = ADD(nn, mm);
            v = ADD(a0, MUL(dy, DIV(nn, den)));
            if (WANT_D) {
                const double kk = ADD(ADD(MUL(b1, MUL(th, th)), MUL(MUL(2.0, del), MUL(th, u))), MUL(b0, MUL(u, u)));
                const double qq = DIV(del, den);
                d = MUL(qq, MUL(qq, kk));
            }
        }
    }
    if (!(v >= a0)) v = a0;
    if (v > a1) v = a1;
}

template <bool WANT_D>
__device__ __forceinline__ void piece(int kind, const double *t, const double *a, const double *b, int j, double z,
                                      double &v, double &d) {
    piece_of<WANT_D>(kind, t[j], t[j + 1], a[j], a[j + 1], b[j], b[j + 1], z, v, d);
}

/* Schumaker's piece at z from its data knots i, i + 1 (x[i] <= z < x[i+1]; y signed, d their slopes): the extra
 * knot recomputed as the build made it, then the half holding z, i.e. the largest knot <= z as find_piece over all
 * knots would give (t[2i + 1] = tk). */
template <bool WANT_D>
__device__ __forceinline__ void schumaker_piece_from_data(const double *x, const double *y, const double *dd, int i,
                                                          double z, double &v, double &d) {
    const double x0 = x[i], x1 = x[i + 1], y0 = y[i], y1 = y[i + 1], d0 = dd[i], d1 = dd[i + 1];
    double tk, abar, dbar;
    schumaker_mid(x0, x1, y0, y1, d0, d1, tk, abar, dbar);
    if (tk <= z) {
        piece_of<WANT_D>(SPLINE_KIND_SCHUMAKER, tk, x1, abar, y1, dbar, d1, z, v, d);
    } else {
        piece_of<WANT_D>(SPLINE_KIND_SCHUMAKER, x0, tk, y0, abar, d0, dbar, z, v, d);
    }
}

/* Loads every stride-th entry of arr into the block's guide; returns stride. */
__device__ int load_guide(const double *arr, int T, double *guide) {
    const int stride = (T + SPLINE_GUIDE - 1) / SPLINE_GUIDE;
    const int g = (T + stride - 1) / stride;
    for (int k = threadIdx.x; k < g; k += blockDim.x) guide[k] = arr[k * stride];
    __syncthreads();
    return stride;
}

/* The largest j with t[j] <= z, for t[0] <= z <= t[T-1]. */
__device__ int find_piece(const double *t, int T, const double *guide, int stride, double z) {
    int lo = 0, hi = (T - 1) / stride; /* guide entries */
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (guide[mid] <= z) lo = mid; else hi = mid - 1;
    }
    hi = min(T - 1, lo * stride + stride - 1);
    lo = lo * stride;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (__ldg(t + mid) <= z) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* The smallest k with a[k] >= v, for a[0] < v <= a[T-1]. */
__device__ int find_value(const double *a, int T, const double *guide, int stride, double v) {
    int lo = 0, hi = (T - 1) / stride; /* largest guide entry g with a[g * stride] < v (g = 0 qualifies) */
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (guide[mid] < v) lo = mid; else hi = mid - 1;
    }
    hi = min(T - 1, lo * stride + stride);
    lo = lo * stride + 1;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (__ldg(a + mid) >= v) hi = mid; else lo = mid + 1;
    }
    return lo;
}

/* DATA: t, a, b are Schumaker's data knots only (x, signed y, slopes: every other entry of the built spline, T = n),
 * the extra knots recomputed per query (half the bytes the random searches and pieces touch). */
template <bool DATA>
__device__ __forceinline__ void eval_body(const double *__restrict__ t, const double *__restrict__ a,
        const double *__restrict__ b, int T, int kind, double sign, const double *__restrict__ z, long long K,
        int mode, double *__restrict__ value, double *__restrict__ deriv, int *__restrict__ bad) {
    __shared__ double guide[SPLINE_GUIDE];
    const int stride = load_guide(t, T, guide);
    const int last = T - 1;
    const double tFirst = t[0], tLast = t[last];
    int firstBad = SPLINE_NO_BAD;
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < K;
         i += (long long) blockDim.x * gridDim.x) {
        const double zi = __ldcs(z + i); /* streamed: keep the knots in L2 */
        double v, d = 0.0;
        if (zi != zi) {
            v = __longlong_as_double(0x7ff8000000000000LL);
            d = v;
        } else if (zi < tFirst || zi > tLast) {
            const int e = zi < tFirst ? 0 : last;
            if (mode == SPLINE_EXTRAP_CLIP) {
                v = a[e];
                d = 0.0;
            } else if (mode == SPLINE_EXTRAP_LINEAR) {
                v = b[e] == 0 ? a[e] : ADD(a[e], MUL(b[e], SUB(zi, t[e])));
                d = b[e];
            } else {
                if (mode == SPLINE_EXTRAP_ERROR) firstBad = min(firstBad, (int) min(i, (long long) SPLINE_NO_BAD));
                v = __longlong_as_double(0x7ff8000000000000LL);
                d = v;
            }
        } else {
            const int j = find_piece(t, T, guide, stride, zi);
            if (j == last) {
                v = a[last];
                d = b[last];
            } else if (DATA) {
                if (deriv != nullptr) {
                    schumaker_piece_from_data<true>(t, a, b, j, zi, v, d);
                } else {
                    schumaker_piece_from_data<false>(t, a, b, j, zi, v, d);
                }
            } else if (deriv != nullptr) {
                piece<true>(kind, t, a, b, j, zi, v, d);
            } else {
                piece<false>(kind, t, a, b, j, zi, v, d);
            }
        }
        __stcs(value + i, MUL(sign, v));
        if (deriv != nullptr) __stcs(deriv + i, MUL(sign, d));
    }
    if (firstBad != SPLINE_NO_BAD) atomicMin(bad, firstBad);
}

extern "C" __global__ void __launch_bounds__(SPLINE_THREADS)
spline_eval(const double *__restrict__ t, const double *__restrict__ a, const double *__restrict__ b, int T,
            int kind, double sign, const double *__restrict__ z, long long K, int mode, double *__restrict__ value,
            double *__restrict__ deriv, int *__restrict__ bad) {
    eval_body<false>(t, a, b, T, kind, sign, z, K, mode, value, deriv, bad);
}

/* spline_eval of a Schumaker spline given by its data knots (x, signed y, slopes; n of them; kind is ignored). */
extern "C" __global__ void __launch_bounds__(SPLINE_THREADS)
spline_eval_schumaker_data(const double *__restrict__ x, const double *__restrict__ y, const double *__restrict__ d,
                           int n, int kind, double sign, const double *__restrict__ z, long long K, int mode,
                           double *__restrict__ value, double *__restrict__ deriv, int *__restrict__ bad) {
    eval_body<true>(x, y, d, n, SPLINE_KIND_SCHUMAKER, sign, z, K, mode, value, deriv, bad);
}

/* ------------------------------------------------------------------------------------------- inverse */

__device__ __forceinline__ double quad_root(double bb, double cc, double dd) {
    const double den = ADD(bb, __dsqrt_rn(ADD(MUL(bb, bb), MUL(MUL(4.0, cc), dd))));
    double th = DIV(MUL(2.0, dd), den);
    if (!(th > 0)) th = 0.0;
    if (th > 1) th = 1.0;
    return th;
}

/* SplineCpu.invertPiece. */
__device__ double invert_piece(int kind, const double *t, const double *a, const double *b, int j, double v) {
    const double t0 = t[j], t1 = t[j + 1];
    const double w = SUB(t1, t0);
    double x;
    if (kind == SPLINE_KIND_SCHUMAKER) {
        const double sc = SUB(a[j + 1], a[j]);
        const double b0 = b[j], b1 = b[j + 1];
        if (b1 >= b0) {
            const double th = quad_root(DIV(MUL(b0, w), sc), DIV(MUL(MUL(SUB(b1, b0), w), 0.5), sc),
                                        DIV(SUB(v, a[j]), sc));
            x = ADD(t0, MUL(th, w));
        } else {
            const double th = quad_root(DIV(MUL(b1, w), sc), DIV(MUL(MUL(SUB(b0, b1), w), 0.5), sc),
                                        DIV(SUB(a[j + 1], v), sc));
            x = SUB(t1, MUL(th, w));
        }
    } else {
        double lo = t0, hi = t1;
        const double g = DIV(SUB(v, a[j]), SUB(a[j + 1], a[j]));
        x = ADD(t0, MUL(g, w));
        if (!(x > lo && x < hi)) x = ADD(lo, MUL(0.5, SUB(hi, lo)));
        bool done = false;
        for (int it = 0; it < SPLINE_NEWTON_MAX_ITER && !done; it++) {
            double s, ds;
            piece<true>(kind, t, a, b, j, x, s, ds);
            const double f = SUB(s, v);
            if (f == 0) {
                done = true;
            } else {
                if (f < 0) lo = x; else hi = x;
                double xn = SUB(x, DIV(f, ds));
                if (!(xn > lo && xn < hi)) xn = ADD(lo, MUL(0.5, SUB(hi, lo)));
                if (!(xn > lo && xn < hi)) {
                    x = hi;
                    done = true;
                } else {
                    x = xn;
                }
            }
        }
        if (!done) x = hi;
    }
    if (!(x >= t0)) x = t0;
    if (x > t1) x = t1;
    return x;
}

extern "C" __global__ void __launch_bounds__(SPLINE_THREADS)
spline_inverse(const double *__restrict__ t, const double *__restrict__ a, const double *__restrict__ b, int T,
               int kind, double sign, const double *__restrict__ vq, long long K, int mode,
               double *__restrict__ out, int *__restrict__ bad) {
    __shared__ double guide[SPLINE_GUIDE];
    const int stride = load_guide(a, T, guide);
    const int last = T - 1;
    const double aFirst = a[0], aLast = a[last];
    int firstBad = SPLINE_NO_BAD;
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < K;
         i += (long long) blockDim.x * gridDim.x) {
        const double w = MUL(sign, __ldcs(vq + i));
        double x;
        if (w != w) {
            x = __longlong_as_double(0x7ff8000000000000LL);
        } else if (w < aFirst || w > aLast) {
            const int e = w < aFirst ? 0 : last;
            if (mode == SPLINE_EXTRAP_CLIP) {
                x = t[e];
            } else if (mode == SPLINE_EXTRAP_LINEAR && b[e] > 0) {
                x = ADD(t[e], DIV(SUB(w, a[e]), b[e]));
            } else {
                if (mode == SPLINE_EXTRAP_ERROR) firstBad = min(firstBad, (int) min(i, (long long) SPLINE_NO_BAD));
                x = __longlong_as_double(0x7ff8000000000000LL);
            }
        } else if (w == aFirst) {
            /* the first knot (find_value needs a[0] < v; SplineCpu.findValue returns 0 here) */
            x = t[0];
        } else {
            const int k = find_value(a, T, guide, stride, w);
            x = a[k] == w ? t[k] : invert_piece(kind, t, a, b, k - 1, w);
        }
        __stcs(out + i, x);
    }
    if (firstBad != SPLINE_NO_BAD) atomicMin(bad, firstBad);
}
