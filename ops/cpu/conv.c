/* conv.c - the CPU kernels of the convolution and pooling ops (ops/conv.h has the geometry).
 *
 * A convolution is im2col and one BLAS product per unit and group (unit_of: a band of an
 * image's output rows, or several small images side by side, within CONV_UNIT_ELEMS): the
 * window's taps become the rows of a [c/groups * kh * kw, positions] matrix, which the
 * weight's [o/groups, c/groups * kh * kw] block multiplies (cpu_matmul_rows); the product's
 * rows then move to NCHW with the bias added (unband). A 1x1 window with stride 1 and no
 * padding reads each image itself; a padded one is read through a zero-padded copy of each
 * image (Pad), so the columns are plain copies. A transposed convolution at stride 1 is a
 * convolution of its x by the flipped weight (conv_flipped); at other strides it gathers a
 * unit's rows, multiplies by the weight's transpose and scatters the columns back image by
 * image (col2im, in a fixed order). The weight's gradient is one product per unit and group
 * (the columns by gy's rows transposed), the units' products added in order. The forward and
 * the weight gradient run their units of images as parts on the thread pool (units_run). Each
 * result depends only on shapes for its order of operations, so eager and static code, and
 * every thread count, get the same bits. */
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "conv.h"
#include "mem.h"
#include "pool.h"

/* The padded image (Pad): one image's cg channels of a group copied to [cg, hp, wp] with x's
 * pixels at row pt, column pl and zeros around, so that every row of the columns is a plain
 * strided copy of ow values, with no bounds to check and no table to read. hp and wp cover
 * both the padded image and the rows and columns the windows reach. Without padding (pad.copy
 * false) the image itself is read. The copy costs c * h * w moves per image against the
 * columns' kh * kw times as many: clipping each row to the image (32x32 images) or reading a
 * table of each tap's source (the 8x8 and 4x4 maps of a small CNN) cost more than it. */
typedef struct { int64_t hp, wp; bool copy; } Pad;

static Pad pad_of(const ConvGeom *g) {
    int64_t eh = (g->oh - 1) * g->sh + (g->kh - 1) * g->dh + 1;
    int64_t ew = (g->ow - 1) * g->sw + (g->kw - 1) * g->dw + 1;
    Pad p = { g->pt + g->h > eh ? g->pt + g->h : eh, g->pl + g->w > ew ? g->pl + g->w : ew, false };
    p.copy = p.hp != g->h || p.wp != g->w;
    return p;
}

/* The columns of one image's group: row k = (ci, ki, kj) of the [K, L] matrix at cols + k * ks,
 * its oh * ow values contiguous (ks = L for one image; nb * L with a chunk's images side by
 * side). Forward, each row is copied from the padded image xp; back (col2im), each row is added
 * into xp where it was read, in the order of the rows and of each row's values (the order of
 * the adds, and so the bits, is that of any walk over the columns in k, oy, ox order). Runs of
 * a row move in fixed blocks (vector moves, no call: a CNN's 4- and 8-wide rows). */
/* 32 bytes moved as one vector (an AVX2 register): memcpy(d, s, 32) compiled to two 16-byte
 * moves, and a 32-float row of the columns took 37 instructions where this takes 9. */
typedef char Bytes32 __attribute__((vector_size(32), aligned(1), may_alias));
#define IM2COL(T)                                                                                          \
    enum { V32_##T = 32 / sizeof(T), V16_##T = 16 / sizeof(T) };                                           \
    static inline void run_copy_##T(T *restrict d, const T *restrict s, int64_t n, int64_t st) {           \
        int64_t i = 0;                                                                                     \
        if (st != 1) {                                                                                     \
            for (; i < n; i++) d[i] = s[i * st];                                                           \
            return;                                                                                        \
        }                                                                                                  \
        for (; i + V32_##T <= n; i += V32_##T) *(Bytes32 *)(d + i) = *(const Bytes32 *)(s + i);             \
        if (i + V16_##T <= n) memcpy(d + i, s + i, 16), i += V16_##T;                                      \
        for (; i < n; i++) d[i] = s[i];                                                                    \
    }                                                                                                      \
    static inline void run_add_##T(T *restrict d, const T *restrict s, int64_t n, int64_t st) {            \
        int64_t i = 0;                                                                                     \
        if (st != 1) {                                                                                     \
            for (; i < n; i++) d[i * st] += s[i];                                                          \
            return;                                                                                        \
        }                                                                                                  \
        for (; i + V32_##T <= n; i += V32_##T)                                                             \
            for (int j = 0; j < V32_##T; j++) d[i + j] += s[i + j];                                        \
        for (; i < n; i++) d[i] += s[i];                                                                   \
    }                                                                                                      \
    /* oh rows of ow values, step apart in xp, to (back: from) consecutive rows of the columns; a     \
     * fixed width (W, in a case of its own) makes each row one or two vector moves */               \
    static inline void rows_##T(T *restrict src, T *restrict row, int64_t oh, int64_t ow, int64_t sw,    \
                                int64_t step, bool back) {                                                 \
        for (int64_t oy = 0; oy < oh; oy++, src += step, row += ow) {                                      \
            if (back) run_add_##T(src, row, ow, sw);                                                       \
            else run_copy_##T(row, src, ow, sw);                                                           \
        }                                                                                                  \
    }                                                                                                      \
    static void columns_##T(const ConvGeom *g, Pad p, T *xp, int64_t cg, T *cols, int64_t ks, bool back,   \
                            int64_t oy0, int64_t oh) {                                                     \
        int64_t k = 0, step = g->sh * p.wp, ow = g->ow;                                                    \
        xp += oy0 * step;                                                                                  \
        bool unit = g->sw == 1;                                                                            \
        for (int64_t ci = 0; ci < cg; ci++)                                                                \
            for (int64_t ki = 0; ki < g->kh; ki++)                                                         \
                for (int64_t kj = 0; kj < g->kw; kj++, k++) {                                              \
                    T *src = xp + (ci * p.hp + ki * g->dh) * p.wp + kj * g->dw, *row = cols + k * ks;      \
                    if (unit && ow == 4) rows_##T(src, row, oh, 4, 1, step, back);                         \
                    else if (unit && ow == 8) rows_##T(src, row, oh, 8, 1, step, back);                    \
                    else if (unit && ow == 16) rows_##T(src, row, oh, 16, 1, step, back);                  \
                    else if (unit && ow == 32) rows_##T(src, row, oh, 32, 1, step, back);                  \
                    else rows_##T(src, row, oh, ow, g->sw, step, back);                                    \
                }                                                                                          \
    }                                                                                                      \
    /* x's cg channels into xp's inside (back: xp's inside into x); xp's border stays as it is */        \
    static void pad_move_##T(const ConvGeom *g, Pad p, T *x, int64_t cg, T *xp, bool back) {               \
        for (int64_t ci = 0; ci < cg; ci++)                                                                \
            for (int64_t iy = 0; iy < g->h; iy++) {                                                        \
                T *in = xp + (ci * p.hp + g->pt + iy) * p.wp + g->pl, *img = x + (ci * g->h + iy) * g->w;  \
                if (back) run_copy_##T(img, in, g->w, 1);                                                  \
                else run_copy_##T(in, img, g->w, 1);                                                       \
            }                                                                                              \
    }                                                                                                      \
    /* The columns of output rows [oy0, oy0 + rows) (a band, Unit). xp: the padded image's scratch  \
     * (pad_scratch), its border zero, filled at the image's first band and read by the others;    \
     * unused without p.copy */                                                                     \
    static void im2col_##T(const ConvGeom *g, Pad p, const T *x, int64_t cg, T *cols, int64_t ks, T *xp,  \
                           int64_t oy0, int64_t rows) {                                                    \
        if (p.copy && oy0 == 0) pad_move_##T(g, p, (T *)x, cg, xp, false);                                 \
        columns_##T(g, p, p.copy ? xp : (T *)x, cg, cols, ks, false, oy0, rows);                           \
    }                                                                                                      \
    /* x's cg channels += a band's columns, added back where im2col read them: into the padded      \
     * image xp, zeroed at the image's first band and copied out to x after its last; without     \
     * p.copy into x itself, which the caller zeroed */                                            \
    static void col2im_##T(const ConvGeom *g, Pad p, const T *cols, int64_t cg, T *x, int64_t ks, T *xp,  \
                           int64_t oy0, int64_t rows) {                                                    \
        if (!p.copy) {                                                                                     \
            columns_##T(g, p, x, cg, (T *)cols, ks, true, oy0, rows);                                      \
            return;                                                                                        \
        }                                                                                                  \
        if (oy0 == 0) memset(xp, 0, sizeof(T) * (size_t)(cg * p.hp * p.wp));                              \
        columns_##T(g, p, xp, cg, (T *)cols, ks, true, oy0, rows);                                         \
        if (oy0 + rows == g->oh) pad_move_##T(g, p, x, cg, xp, true);                                      \
    }                                                                                                      \
    static void add_bias_##T(T *y, const T *b, int64_t n, int64_t ch, int64_t len) {                      \
        for (int64_t i = 0; i < n * ch; i++) {                                                             \
            T v = b[i % ch], *yi = y + i * len;                                                            \
            for (int64_t l = 0; l < len; l++) yi[l] += v;                                                  \
        }                                                                                                  \
    }
IM2COL(float)
IM2COL(double)

static bool direct_columns(const ConvGeom *g) {
    return g->kh == 1 && g->kw == 1 && g->sh == 1 && g->sw == 1 && !g->pt && !g->pb && !g->pl && !g->pr;
}

static void *scratch(int64_t n, size_t elem) {
    void *p = mem_try_alloc((size_t)(n > 0 ? n : 1) * elem);
    if (!p) op_fail("out of memory for the convolution's columns (%lld elements)", (long long)n);
    return p;
}

/* The padded image's scratch of a call (pad_of), zeroed: one image's cg channels; NULL without
 * padding, or after op_fail when out of memory (*fail set). */
static void *pad_scratch(Pad p, int64_t cg, size_t elem, bool *fail) {
    if (!p.copy) return NULL;
    void *xp = mem_try_calloc((size_t)(cg * p.hp * p.wp), elem);
    if (!xp)
        op_fail("out of memory for the convolution's padded image (%lld elements)", (long long)(cg * p.hp * p.wp));
    *fail = !xp;
    return xp;
}

/* d[l * ld + i] = s[i * ls + l] for i < r, l < c: gy's rows transposed for the weight gradient.
 * f32 goes in 8x8 blocks through AVX2 registers: one value a store, scattered og apart, cost
 * about 3 instructions a value, 1.5M values a step of the conv2d benchmark. The values are
 * only moved, so the bits are the same either way. */
static void transpose8_float(const float *s, int64_t ls, float *d, int64_t ld) {
    __m256 r0 = _mm256_loadu_ps(s), r1 = _mm256_loadu_ps(s + ls), r2 = _mm256_loadu_ps(s + 2 * ls);
    __m256 r3 = _mm256_loadu_ps(s + 3 * ls), r4 = _mm256_loadu_ps(s + 4 * ls), r5 = _mm256_loadu_ps(s + 5 * ls);
    __m256 r6 = _mm256_loadu_ps(s + 6 * ls), r7 = _mm256_loadu_ps(s + 7 * ls);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
    __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
    __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
    _mm256_storeu_ps(d + ld, _mm256_permute2f128_ps(u1, u5, 0x20));
    _mm256_storeu_ps(d + 2 * ld, _mm256_permute2f128_ps(u2, u6, 0x20));
    _mm256_storeu_ps(d + 3 * ld, _mm256_permute2f128_ps(u3, u7, 0x20));
    _mm256_storeu_ps(d + 4 * ld, _mm256_permute2f128_ps(u0, u4, 0x31));
    _mm256_storeu_ps(d + 5 * ld, _mm256_permute2f128_ps(u1, u5, 0x31));
    _mm256_storeu_ps(d + 6 * ld, _mm256_permute2f128_ps(u2, u6, 0x31));
    _mm256_storeu_ps(d + 7 * ld, _mm256_permute2f128_ps(u3, u7, 0x31));
}

static void transpose_float(const float *s, int64_t ls, float *d, int64_t ld, int64_t r, int64_t c) {
    int64_t r8 = r / 8 * 8, c8 = c / 8 * 8;
    for (int64_t i = 0; i < r8; i += 8)
        for (int64_t l = 0; l < c8; l += 8) transpose8_float(s + i * ls + l, ls, d + l * ld + i, ld);
    for (int64_t i = 0; i < r; i++)   /* the edges the blocks left */
        for (int64_t l = i < r8 ? c8 : 0; l < c; l++) d[l * ld + i] = s[i * ls + l];
}

static void transpose_double(const double *s, int64_t ls, double *d, int64_t ld, int64_t r, int64_t c) {
    for (int64_t i = 0; i < r; i++)
        for (int64_t l = 0; l < c; l++) d[l * ld + i] = s[i * ls + l];
}

/* A product's share of the work (Unit): m images side by side, or one image's band of `rows`
 * output rows, whose columns (K x m * rows * ow) and product stay within CONV_UNIT_ELEMS
 * elements (unit_of, from `per` elements per output position). Each unit is one BLAS call on
 * data in the core's own cache: on the benchmark's 32x32 images (one core, OpenBLAS 0.3.21's
 * Cooperlake kernels) a [32, 144] x [144, 128] band ran at 52 GMAC/s where the whole image's
 * [144, 1024] columns ran at 32, and the first convolution's 9 images a product at 20 against
 * 45 for one. The small per-image products of a CNN on 8x8 digits ([32, 144] x [144, 16]) spent
 * as much on OpenBLAS's per-call packing and zeroing as on their multiply-adds, so those images
 * share a product. Depends only on shapes (the same units eagerly and in static code). */
#define CONV_UNIT_ELEMS ((int64_t)1 << 15)
typedef struct { int64_t m, rows; } Unit;

static Unit unit_of(const ConvGeom *g, int64_t per) {
    int64_t image = per * g->oh * g->ow, row = per * g->ow;
    if (image <= CONV_UNIT_ELEMS) {
        int64_t m = image > 0 ? CONV_UNIT_ELEMS / image : g->n;
        return (Unit){ m > g->n ? g->n : m, g->oh };
    }
    int64_t rows = CONV_UNIT_ELEMS / row;
    return (Unit){ 1, rows < 1 ? 1 : rows > g->oh ? g->oh : rows };
}

/* A transposed convolution at stride 1 whose padding is no wider than the dilated window
 * (every PyTorch-style gradient of a stride-1 convolution) is a plain convolution of its x,
 * [n, o, oh, ow], by the weight flipped in both axes with its two channel axes swapped:
 * flip_geom's window (the same size and dilation, stride 1) padded by (kh - 1) * dh - pt on
 * top and likewise on each side, giving [n, c, h, w]. Computed so (conv_flipped), each band of
 * y is one product [c/groups, rows * ow], og * kh * kw deep, with no col2im adds. */
static bool flip_fits(const ConvGeom *g) {
    return g->sh == 1 && g->sw == 1 && g->pt <= (g->kh - 1) * g->dh && g->pl <= (g->kw - 1) * g->dw;
}

static ConvGeom flip_geom(const ConvGeom *g) {
    ConvGeom f = *g;
    f.c = g->o, f.h = g->oh, f.w = g->ow, f.o = g->c, f.oh = g->h, f.ow = g->w;
    f.pt = (g->kh - 1) * g->dh - g->pt, f.pb = (g->kh - 1) * g->dh - g->pb;
    f.pl = (g->kw - 1) * g->dw - g->pl, f.pr = (g->kw - 1) * g->dw - g->pr;
    return f;
}

/* A convolution's units on the thread pool (the forward's and the weight gradient's): each part
 * is one unit of images, whose results are its own (its bands' places in y; its sum of the
 * weight gradient), each slot its own scratch, per_slot elements: the columns and products of
 * the largest unit (most positions) and, last, a padded image, its border zero. x and w are
 * the operands (the weight gradient's w: gy), y the result. Every unit is computed the same
 * whichever thread runs it: the bits of one thread. */
typedef struct {
    const ConvGeom *g;
    DType dt;
    const void *x, *w, *b;
    void *y;
    Unit u;
    Pad pad;
    void *scratch;
    int64_t cg, most, per_slot;   /* cg: the channels of a group, for the padded image's size */
} ConvJob;

static int units_run(ConvJob *fj, int64_t parts, int width, size_t elem, PoolPartFn fn) {
    fj->scratch = mem_try_alloc((size_t)(width * fj->per_slot) * elem);
    if (!fj->scratch) {
        op_fail("out of memory for the convolution's columns (%lld elements)", (long long)(width * fj->per_slot));
        return -1;
    }
    /* each slot's padded image, its last elements, is zeroed (its border stays zero); the rest is
     * written before it is read (zeroing it all cost a small CNN's step 0.76M instructions) */
    int64_t padn = fj->pad.copy ? fj->cg * fj->pad.hp * fj->pad.wp : 0;
    for (int s = 0; s < width; s++)
        memset((char *)fj->scratch + (size_t)((s + 1) * fj->per_slot - padn) * elem, 0, (size_t)padn * elem);
    int rc = pool_run(parts, width, fn, fj);
    mem_free(fj->scratch);
    return rc;
}

/* y [n, o, oh, ow] = x [n, c, h, w] (*) w [o, c / groups, kh, kw] (+ b). Per unit (unit_of) and
 * group: the columns [K, m * rows * ow] (the unit's images side by side), one product
 * [og, m * rows * ow], then its rows moved to their place in NCHW with the bias added (a 1x1
 * window reads each image itself, one product each). */
#define CONV_FORWARD(T)                                                                                    \
    /* the unit's product r [og, m * bl] to y: image n0 + j's rows, at position l0 of each channel */    \
    static void unband_##T(const ConvGeom *g, const T *r, const T *b, int64_t n0, int64_t m, int64_t gi,  \
                           int64_t l0, int64_t bl, T *y) {                                                 \
        int64_t og = g->o / g->groups, L = g->oh * g->ow;                                                  \
        for (int64_t oc = 0; oc < og; oc++)                                                                \
            for (int64_t j = 0; j < m; j++) {                                                              \
                const T *src = r + (oc * m + j) * bl;                                                      \
                T *dst = y + ((n0 + j) * g->o + gi * og + oc) * L + l0, v = b ? b[gi * og + oc] : 0;       \
                if (b) for (int64_t l = 0; l < bl; l++) dst[l] = src[l] + v;                               \
                else memcpy(dst, src, sizeof(T) * (size_t)bl);                                             \
            }                                                                                              \
    }                                                                                                      \
    static int conv_direct_##T(const ConvGeom *g, DType dt, const T *x, const T *w, const T *b, T *y) {    \
        int64_t cg = g->c / g->groups, og = g->o / g->groups, L = g->oh * g->ow;                           \
        for (int64_t n = 0; n < g->n; n++)                                                                 \
            for (int64_t gi = 0; gi < g->groups; gi++)                                                     \
                cpu_matmul_rows(dt, w + gi * og * cg, 0, x + (n * g->c + gi * cg) * L,                 \
                                y + (n * g->o + gi * og) * L, og, cg, L, 0, og);                           \
        if (b) add_bias_##T(y, b, g->n, g->o, L);                                                          \
        return 0;                                                                                          \
    }                                                                                                      \
    /* the images of unit `part` (ConvJob; slot: the thread's columns, product and padded image) */    \
    static int forward_part_##T(void *ud, int64_t part, int slot) {                                        \
        const ConvJob *fj = ud;                                                                             \
        const ConvGeom *g = fj->g;                                                                         \
        const T *x = fj->x, *w = fj->w, *b = fj->b;                                                        \
        int64_t cg = g->c / g->groups, og = g->o / g->groups, K = cg * g->kh * g->kw, ow = g->ow;          \
        int64_t n0 = part * fj->u.m, m = g->n - n0 < fj->u.m ? g->n - n0 : fj->u.m;                        \
        T *cols = (T *)fj->scratch + slot * fj->per_slot, *r = cols + K * fj->most, *xp = r + og * fj->most; \
        for (int64_t gi = 0; gi < g->groups; gi++)                                                         \
            for (int64_t oy0 = 0; oy0 < g->oh; oy0 += fj->u.rows) {                                        \
                int64_t rows = g->oh - oy0 < fj->u.rows ? g->oh - oy0 : fj->u.rows, bl = rows * ow;        \
                const T *xg = x + (n0 * g->c + gi * cg) * g->h * g->w;                                     \
                for (int64_t j = 0; j < m; j++)                                                            \
                    im2col_##T(g, fj->pad, xg + j * g->c * g->h * g->w, cg, cols + j * bl, m * bl, xp, oy0, rows); \
                cpu_matmul_rows(fj->dt, w + gi * og * K, 0, cols, r, og, K, m * bl, 0, og);            \
                unband_##T(g, r, b, n0, m, gi, oy0 * ow, bl, fj->y);                                       \
            }                                                                                              \
        return 0;                                                                                          \
    }                                                                                                      \
    static int conv_forward_##T(const ConvGeom *g, DType dt, const T *x, const T *w, const T *b, T *y) {   \
        if (direct_columns(g)) return conv_direct_##T(g, dt, x, w, b, y);                                  \
        int64_t cg = g->c / g->groups, og = g->o / g->groups, K = cg * g->kh * g->kw;                      \
        ConvJob fj = { g, dt, x, w, b, y, unit_of(g, K > og ? K : og), pad_of(g), NULL, cg, 0, 0 };         \
        fj.most = fj.u.m * fj.u.rows * g->ow;                                                              \
        fj.per_slot = (K + og) * fj.most + (fj.pad.copy ? cg * fj.pad.hp * fj.pad.wp : 0);                 \
        int64_t parts = (g->n + fj.u.m - 1) / fj.u.m;                                                      \
        int width = pool_width(parts, g->n * g->o * g->oh * g->ow * K);                                    \
        return units_run(&fj, parts, width, sizeof(T), forward_part_##T);                                \
    }                                                                                                      \
    /* The transposed convolution at stride 1 as the convolution flip_geom describes: x read through \
     * the window with the weight flipped, wf [c, og, kh, kw] per group (wf[gi * cg + ci][oc][kh-1-i]  \
     * [kw-1-j] = w[gi * og + oc][ci][i][j]) */                                                        \
    static int conv_flipped_##T(const ConvGeom *g, DType dt, const T *x, const T *w, const T *b, T *y) {   \
        int64_t cg = g->c / g->groups, og = g->o / g->groups, kk = g->kh * g->kw;                          \
        T *wf = scratch(g->c * og * kk, sizeof(T));                                                        \
        if (!wf) return -1;                                                                                \
        for (int64_t oc = 0; oc < g->o; oc++)                                                              \
            for (int64_t ci = 0; ci < cg; ci++)                                                            \
                for (int64_t t = 0; t < kk; t++)                                                           \
                    wf[(((oc / og) * cg + ci) * og + oc % og) * kk + kk - 1 - t] = w[(oc * cg + ci) * kk + t]; \
        ConvGeom f = flip_geom(g);                                                                         \
        int rc = conv_forward_##T(&f, dt, x, wf, b, y);                                                    \
        mem_free(wf);                                                                                      \
        return rc;                                                                                         \
    }                                                                                                      \
    /* y [n, c, h, w] = the transposed convolution of x [n, o, oh, ow] by w [o, c / groups, kh, kw]: at \
     * stride 1 conv_flipped; else per unit and group, x's rows gathered [og, m * rows * ow], one      \
     * product by the weight's transpose into the columns [K, m * rows * ow], then col2im image by     \
     * image */                                                                                        \
    static int conv_transpose_##T(const ConvGeom *g, DType dt, const T *x, const T *w, const T *b, T *y) { \
        if (flip_fits(g)) return conv_flipped_##T(g, dt, x, w, b, y);                   \
        int64_t cg = g->c / g->groups, og = g->o / g->groups, K = cg * g->kh * g->kw, L = g->oh * g->ow;    \
        Unit u = unit_of(g, K > og ? K : og);                                                              \
        int64_t most = u.m * u.rows * g->ow;                                                               \
        Pad pad = pad_of(g);                                                                               \
        bool fail = false;                                                                                 \
        T *cols = scratch(K * most, sizeof(T)), *xb = cols ? scratch(og * most, sizeof(T)) : NULL;         \
        T *xp = xb ? pad_scratch(pad, cg, sizeof(T), &fail) : NULL;                                        \
        if (!xb || fail) { mem_free(cols), mem_free(xb); return -1; }                                      \
        if (!pad.copy) memset(y, 0, sizeof(T) * (size_t)(g->n * g->c * g->h * g->w));                     \
        for (int64_t n0 = 0; n0 < g->n; n0 += u.m) {                                                       \
            int64_t m = g->n - n0 < u.m ? g->n - n0 : u.m;                                                 \
            for (int64_t gi = 0; gi < g->groups; gi++)                                                     \
                for (int64_t oy0 = 0; oy0 < g->oh; oy0 += u.rows) {                                        \
                    int64_t rows = g->oh - oy0 < u.rows ? g->oh - oy0 : u.rows, bl = rows * g->ow;         \
                    for (int64_t oc = 0; oc < og; oc++)                                                    \
                        for (int64_t j = 0; j < m; j++)                                                    \
                            memcpy(xb + (oc * m + j) * bl, x + ((n0 + j) * g->o + gi * og + oc) * L + oy0 * g->ow, \
                                   sizeof(T) * (size_t)bl);                                                \
                    cpu_matmul_rows(dt, w + gi * og * K, MM_TRANS_A, xb, cols, K, og, m * bl, 0, K);             \
                    for (int64_t j = 0; j < m; j++)                                                        \
                        col2im_##T(g, pad, cols + j * bl, cg, y + ((n0 + j) * g->c + gi * cg) * g->h * g->w, m * bl, \
                                   xp, oy0, rows);                                                         \
                }                                                                                          \
        }                                                                                                  \
        mem_free(cols);                                                                                    \
        mem_free(xb);                                                                                      \
        mem_free(xp);                                                                                      \
        if (b) add_bias_##T(y, b, g->n, g->c, g->h * g->w);                                                \
        return 0;                                                                                          \
    }                                                                                                      \
    /* dw [o, c / groups, kh, kw]: per group, its transpose [K, og] is the sum over the units        \
     * (unit_of) of their columns [K, m * rows * ow] times gy's rows transposed [m * rows * ow, og],  \
     * one product a unit: each unit of images (a part on the pool) adds its bands' products in     \
     * order into its own sum, then the units' sums are added in order; then transposed back */     \
    static int wgrad_part_##T(void *ud, int64_t part, int slot) {                                          \
        const ConvJob *cj = ud;                                                                            \
        const ConvGeom *g = cj->g;                                                                         \
        const T *x = cj->x, *gy = cj->w;                                                                   \
        int64_t cg = g->c / g->groups, og = g->o / g->groups, K = cg * g->kh * g->kw, L = g->oh * g->ow;    \
        int64_t n0 = part * cj->u.m, m = g->n - n0 < cj->u.m ? g->n - n0 : cj->u.m;                        \
        T *cols = (T *)cj->scratch + slot * cj->per_slot, *gyt = cols + K * cj->most;                      \
        T *prod = gyt + cj->most * og, *xp = prod + K * og;                                                \
        for (int64_t gi = 0; gi < g->groups; gi++) {                                                       \
            T *sum = (T *)cj->y + (part * g->groups + gi) * K * og;                                        \
            for (int64_t oy0 = 0; oy0 < g->oh; oy0 += cj->u.rows) {                                        \
                int64_t rows = g->oh - oy0 < cj->u.rows ? g->oh - oy0 : cj->u.rows, bl = rows * g->ow;     \
                for (int64_t j = 0; j < m; j++) {                                                          \
                    int64_t n = n0 + j;                                                                    \
                    im2col_##T(g, cj->pad, x + (n * g->c + gi * cg) * g->h * g->w, cg, cols + j * bl, m * bl, xp, \
                               oy0, rows);                                                                 \
                    transpose_##T(gy + (n * g->o + gi * og) * L + oy0 * g->ow, L, gyt + j * bl * og, og, og, bl); \
                }                                                                                          \
                cpu_matmul_rows(cj->dt, cols, 0, gyt, oy0 ? prod : sum, K, m * bl, og, 0, K);          \
                for (int64_t i = 0; oy0 && i < K * og; i++) sum[i] += prod[i];                             \
            }                                                                                              \
        }                                                                                                  \
        return 0;                                                                                          \
    }                                                                                                      \
    static int conv_weight_grad_##T(const ConvGeom *g, DType dt, const T *x, const T *gy, T *dw) {        \
        int64_t cg = g->c / g->groups, og = g->o / g->groups, K = cg * g->kh * g->kw;                      \
        ConvJob cj = { g, dt, x, gy, NULL, NULL, unit_of(g, K + og), pad_of(g), NULL, cg, 0, 0 };          \
        cj.most = cj.u.m * cj.u.rows * g->ow;                                                              \
        cj.per_slot = (K + og) * cj.most + K * og + (cj.pad.copy ? cg * cj.pad.hp * cj.pad.wp : 0);        \
        int64_t parts = (g->n + cj.u.m - 1) / cj.u.m, KO = K * og;                                         \
        T *sums = scratch(parts * g->groups * KO, sizeof(T));                                              \
        cj.y = sums;                                                                                       \
        if (!sums || units_run(&cj, parts, pool_width(parts, g->n * g->o * g->oh * g->ow * K), sizeof(T), wgrad_part_##T)) { \
            mem_free(sums);                                                                                \
            return -1;                                                                                     \
        }                                                                                                  \
        for (int64_t gi = 0; gi < g->groups; gi++) {                                                       \
            T *dwt = sums + gi * KO, *dwg = dw + gi * KO;                                                  \
            for (int64_t p = 1; p < parts; p++)                                                            \
                for (int64_t i = 0; i < KO; i++) dwt[i] += sums[(p * g->groups + gi) * KO + i];            \
            for (int64_t k = 0; k < K; k++)                                                                \
                for (int64_t oc = 0; oc < og; oc++) dwg[oc * K + k] = dwt[k * og + oc];                    \
        }                                                                                                  \
        mem_free(sums);                                                                                    \
        return 0;                                                                                          \
    }
CONV_FORWARD(float)
CONV_FORWARD(double)

static const void *data_of(const OpCall *c, int k) {
    return k < c->nin && c->in[k].kind == ARG_TENSOR ? c->in[k].t->data : NULL;
}

int cpu_conv(const OpCall *c, Tensor **out) {
    ConvGeom g;
    if (conv_geom(c, &g)) return -1;
    if (out[0]->size == 0) return 0;
    bool f32 = c->in[0].dtype == DT_F32;
    DType dt = f32 ? DT_F32 : DT_F64;
    const void *x = data_of(c, 0), *w = data_of(c, 1), *b = data_of(c, 2);
    void *y = out[0]->data;
    if (c->op == OP_CONV2D_WEIGHT_GRAD) {
        if (g.n * g.oh * g.ow == 0) return memset(y, 0, (size_t)out[0]->size * (f32 ? 4 : 8)), 0;
        return f32 ? conv_weight_grad_float(&g, dt, x, w, y) : conv_weight_grad_double(&g, dt, x, w, y);
    }
    if (c->op == OP_CONV_TRANSPOSE2D)
        return f32 ? conv_transpose_float(&g, dt, x, w, b, y) : conv_transpose_double(&g, dt, x, w, b, y);
    return f32 ? conv_forward_float(&g, dt, x, w, b, y) : conv_forward_double(&g, dt, x, w, b, y);
}

/* ---------- pooling ---------- */

/* The window of output (oy, ox) as [y0, y1) x [x0, x1) inside the image; *count is what
 * the mean divides by (PyTorch's count_include_pad: the padded window, clipped to the
 * padded image; adaptive: the window). */
static void window(const ConvGeom *g, bool adaptive, int64_t oy, int64_t ox, int64_t *y0, int64_t *y1, int64_t *x0,
                   int64_t *x1, int64_t *count) {
    if (adaptive) {
        *y0 = adaptive_start(oy, g->h, g->oh), *y1 = adaptive_end(oy, g->h, g->oh);
        *x0 = adaptive_start(ox, g->w, g->ow), *x1 = adaptive_end(ox, g->w, g->ow);
        *count = (*y1 - *y0) * (*x1 - *x0);
        return;
    }
    int64_t ys = oy * g->sh - g->pt, xs = ox * g->sw - g->pl;
    int64_t ye = ys + g->kh < g->h + g->pb ? ys + g->kh : g->h + g->pb;
    int64_t xe = xs + g->kw < g->w + g->pr ? xs + g->kw : g->w + g->pr;
    *count = (ye - ys) * (xe - xs);
    *y0 = ys < 0 ? 0 : ys, *y1 = ye < g->h ? ye : g->h;
    *x0 = xs < 0 ? 0 : xs, *x1 = xe < g->w ? xe : g->w;
}

/* Whether every window lies inside the image (no padding before it, none clipped after): then
 * each window is kh x kw taps from its corner and the mean divides by kh * kw (window's count). */
static bool windows_inside(const ConvGeom *g, bool adaptive) {
    return !adaptive && !g->pt && !g->pl && (g->oh - 1) * g->sh + g->kh <= g->h &&
           (g->ow - 1) * g->sw + g->kw <= g->w;
}

/* Forward (gy NULL): y = each window's max or mean. Backward: dx gets gy back, at the
 * window's first largest element (max; NaN is largest) or spread evenly (mean).
 * max_inside and mean_inside do the same for windows_inside geometry, in the same order (the
 * same bits), without window()'s clipping per output, one simple loop nest per mode: the pools
 * of a small CNN spent most of their time clipping windows and branching on the mode. */
/* One tap k of a max window: !(v <= acc) is larger, or NaN; a NaN acc (acc != acc) is never
 * replaced: the window's first largest or first NaN, with no branch on the outcome. */
#define MAX_STEP(T, k)                                                                                     \
    do {                                                                                                   \
        T v_ = x[k];                                                                                       \
        bool take_ = !(v_ <= acc) && acc == acc;                                                           \
        acc = take_ ? v_ : acc;                                                                            \
        at = take_ ? (k) : at;                                                                             \
    } while (0)
/* 2x2 windows at stride 2 that tile the image (no padding, nothing left over): max2x2 */
static bool exact_2x2(const ConvGeom *g) {
    return g->kh == 2 && g->kw == 2 && g->sh == 2 && g->sw == 2 && !g->pt && !g->pl && !g->pb && !g->pr &&
           g->h == 2 * g->oh && g->w == 2 * g->ow;
}
/* MAX_STEP's rule as a test: whether tap v replaces the running acc */
#define TAKE2(v, acc) (!((v) <= (acc)) && (acc) == (acc))
#define POOL(T)                                                                                            \
    static void max_inside_##T(const ConvGeom *g, const T *x, const T *gy, T *y) {                         \
        const int64_t w = g->w, kh = g->kh, kw = g->kw, sh = g->sh, sw = g->sw, HW = g->h * w;             \
        int64_t o = 0;                                                                                     \
        for (int64_t p = 0; p < g->n * g->c; p++)                                                          \
            for (int64_t oy = 0; oy < g->oh; oy++)                                                         \
                for (int64_t ox = 0; ox < g->ow; ox++, o++) {                                              \
                    int64_t corner = p * HW + oy * sh * w + ox * sw, at = corner;                          \
                    T acc = x[corner];                                                                     \
                    if (kh == 2 && kw == 2) {   /* the usual 2x2 pool, unrolled: 4 taps, 3 steps */        \
                        MAX_STEP(T, corner + 1);                                                           \
                        MAX_STEP(T, corner + w);                                                           \
                        MAX_STEP(T, corner + w + 1);                                                       \
                    } else {                                                                               \
                        for (int64_t i = 0; i < kh; i++)                                                   \
                            for (int64_t k = corner + i * w; k < corner + i * w + kw; k++) MAX_STEP(T, k); \
                    }                                                                                      \
                    if (gy) y[at] += gy[o];                                                                \
                    else y[o] = acc;                                                                       \
                }                                                                                          \
    }                                                                                                      \
    /* 2x2 windows at stride 2 tiling the image exactly (the usual pool, exact_2x2), as flat passes \
     * the compiler vectorizes: each horizontal pair's larger hm (and which, hb), then each        \
     * window's larger of its two pairs. Taking the first NaN, else the first largest, pair by     \
     * pair picks the same tap as max_inside's walk in a, b, c, d order. Backward, every pixel is  \
     * written once: 0 + gy at its window's pick, 0 + 0 elsewhere (max_inside's zeroed image plus  \
     * its one add: the same bits, with no memset). scratch: 2 * n * c * h * w / 2 values */       \
    static void max2x2_##T(const ConvGeom *g, const T *x, const T *gy, T *y, T *scratch) {                \
        const int64_t P = g->n * g->c * g->h * g->w / 2, Q = g->n * g->c * g->oh, ow = g->ow;              \
        T *hm = scratch, *hb = scratch + P;                                                                \
        for (int64_t j = 0; j < P; j++) {                                                                  \
            T a = x[2 * j], b = x[2 * j + 1];                                                              \
            bool t = TAKE2(b, a);                                                                          \
            hm[j] = t ? b : a;                                                                             \
            hb[j] = t ? 1 : 0;                                                                             \
        }                                                                                                  \
        for (int64_t q = 0; q < Q; q++)                                                                    \
            for (int64_t ox = 0; ox < ow; ox++) {                                                          \
                T *top = hm + 2 * q * ow + ox, *bot = top + ow, m1 = *top, m2 = *bot;                      \
                bool t = TAKE2(m2, m1);                                                                    \
                if (!gy) {                                                                                 \
                    y[q * ow + ox] = t ? m2 : m1;                                                          \
                    continue;                                                                              \
                }                                                                                          \
                T v = gy[q * ow + ox], z = 0;                                                              \
                *top = t ? z : v, *bot = t ? v : z;   /* each pair's share of the gradient */            \
            }                                                                                              \
        if (!gy) return;                                                                                   \
        for (int64_t j = 0; j < P; j++) {                                                                  \
            T z = 0, v = hm[j], right = hb[j] != 0 ? v : z, left = hb[j] != 0 ? z : v;                     \
            y[2 * j] = z + left;                                                                           \
            y[2 * j + 1] = z + right;                                                                      \
        }                                                                                                  \
    }                                                                                                      \
    static void mean_inside_##T(const ConvGeom *g, const T *x, const T *gy, T *y) {                        \
        const int64_t w = g->w, kh = g->kh, kw = g->kw, sh = g->sh, sw = g->sw, HW = g->h * w;             \
        const T count = (T)(kh * kw);                                                                      \
        int64_t o = 0;                                                                                     \
        for (int64_t p = 0; p < g->n * g->c; p++)                                                          \
            for (int64_t oy = 0; oy < g->oh; oy++)                                                         \
                for (int64_t ox = 0; ox < g->ow; ox++, o++) {                                              \
                    int64_t corner = p * HW + oy * sh * w + ox * sw;                                       \
                    if (gy) {                                                                              \
                        T share = gy[o] / count;                                                           \
                        for (int64_t i = 0; i < kh; i++)                                                   \
                            for (int64_t k = corner + i * w; k < corner + i * w + kw; k++) y[k] += share;  \
                        continue;                                                                          \
                    }                                                                                      \
                    T acc = 0;                                                                             \
                    for (int64_t i = 0; i < kh; i++)                                                       \
                        for (int64_t k = corner + i * w; k < corner + i * w + kw; k++) acc += x[k];        \
                    y[o] = acc / count;                                                                    \
                }                                                                                          \
    }                                                                                                      \
    static void pool_##T(const ConvGeom *g, bool max, bool adaptive, const T *x, const T *gy, T *y,       \
                         T *scratch) {                                                                     \
        int64_t HW = g->h * g->w, OL = g->oh * g->ow;                                                      \
        if (scratch) {                                                                                     \
            max2x2_##T(g, x, gy, y, scratch);                                                              \
            return;                                                                                        \
        }                                                                                                  \
        if (gy) memset(y, 0, sizeof(T) * (size_t)(g->n * g->c * HW));                                      \
        if (windows_inside(g, adaptive)) {                                                                 \
            (max ? max_inside_##T : mean_inside_##T)(g, x, gy, y);                                         \
            return;                                                                                        \
        }                                                                                                  \
        for (int64_t p = 0; p < g->n * g->c; p++) {                                                        \
            const T *img = x + p * HW;                                                                     \
            for (int64_t oy = 0; oy < g->oh; oy++)                                                         \
                for (int64_t ox = 0; ox < g->ow; ox++) {                                                   \
                    int64_t y0, y1, x0, x1, count, at = -1;                                                \
                    window(g, adaptive, oy, ox, &y0, &y1, &x0, &x1, &count);                               \
                    T acc = max ? -INFINITY : 0;                                                           \
                    for (int64_t iy = y0; iy < y1; iy++)                                                   \
                        for (int64_t ix = x0; ix < x1; ix++) {                                             \
                            T v = img[iy * g->w + ix];                                                     \
                            if (!max) acc += v;                                                            \
                            else if (at < 0 || v > acc || (isnan(v) && !isnan(acc))) acc = v, at = iy * g->w + ix; \
                        }                                                                                  \
                    int64_t o = p * OL + oy * g->ow + ox;                                                  \
                    if (!gy) {                                                                             \
                        y[o] = max ? acc : acc / (T)count;                                                 \
                    } else if (max) {                                                                      \
                        if (at >= 0) y[p * HW + at] += gy[o];                                              \
                    } else {                                                                               \
                        T share = gy[o] / (T)count;                                                        \
                        for (int64_t iy = y0; iy < y1; iy++)                                               \
                            for (int64_t ix = x0; ix < x1; ix++) y[p * HW + iy * g->w + ix] += share;      \
                    }                                                                                      \
                }                                                                                          \
        }                                                                                                  \
    }
POOL(float)
POOL(double)

int cpu_pool(const OpCall *c, Tensor **out) {
    ConvGeom g;
    if (conv_geom(c, &g)) return -1;
    if (out[0]->size == 0) return 0;
    bool max = c->op == OP_MAX_POOL2D || c->op == OP_MAX_POOL2D_BACKWARD;
    bool adaptive = c->op == OP_ADAPTIVE_AVG_POOL2D || c->op == OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    bool backward = c->op == OP_MAX_POOL2D_BACKWARD || c->op == OP_AVG_POOL2D_BACKWARD || c->op == OP_ADAPTIVE_AVG_POOL2D_BACKWARD;
    const void *x = data_of(c, 0), *gy = backward ? data_of(c, 1) : NULL;
    size_t elem = c->in[0].dtype == DT_F32 ? sizeof(float) : sizeof(double);
    void *scratch = max && exact_2x2(&g) ? mem_try_alloc((size_t)(g.n * g.c * g.h * g.w) * elem) : NULL;
    if (max && exact_2x2(&g) && !scratch) {
        op_fail("out of memory for the pool's pairs (%lld elements)", (long long)(g.n * g.c * g.h * g.w));
        return -1;
    }
    if (elem == sizeof(float)) pool_float(&g, max, adaptive, x, gy, out[0]->data, scratch);
    else pool_double(&g, max, adaptive, x, gy, out[0]->data, scratch);
    mem_free(scratch);
    return 0;
}
