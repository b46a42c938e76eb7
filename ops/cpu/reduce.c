/* reduce.c - reductions (sum mean max min prod var std argmax argmin all any logsumexp norm)
 * and softmax / log_softmax.
 *
 * The reduced axes are moved last (a transposed copy when they are not already), so
 * every reduction is over contiguous rows; sums over leading axes and float reductions
 * around kept middle axes read the same values in the same order without the copy. Float sums use NumPy's pairwise summation
 * (8 accumulators per 128-element block), one fixed order for eager and static. */
#include <immintrin.h>
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "ctx.h"
#include "mem.h"
#include "infer.h"
#include "pool.h"

/* NumPy's pairwise sum: below 8 elements a plain loop; up to 128, 8 accumulators (lane k
 * sums x[k], x[k+8], ...) combined as ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)); above, split at
 * a multiple of 8 and recurse. The 8 accumulators are exactly one AVX2 register of f32 (two
 * of f64), so the vector code below computes the scalar scheme's bits. The _sq versions sum
 * the squares x[i] * x[i] (each rounded to T, as a multiplication's result is) in the same
 * order: a row group's mean(d * d) that never stores d * d (exec_rows.c) gets the bits of the
 * sum over the stored squares. */
#define PAIRWISE_F32(NAME, LOAD, EL)                                                           \
    static float NAME(const float *x, int64_t n) {                                             \
        if (n < 8) {                                                                           \
            float s = 0;                                                                       \
            for (int64_t i = 0; i < n; i++) s += EL(x[i]);                                      \
            return s;                                                                          \
        }                                                                                      \
        if (n <= 128) {                                                                        \
            __m256 acc = LOAD(x);                                                              \
            int64_t i;                                                                         \
            for (i = 8; i < n - n % 8; i += 8) acc = _mm256_add_ps(acc, LOAD(x + i));           \
            float r[8];                                                                        \
            _mm256_storeu_ps(r, acc);                                                          \
            float s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));       \
            for (; i < n; i++) s += EL(x[i]);                                                   \
            return s;                                                                          \
        }                                                                                      \
        int64_t h = n / 2;                                                                     \
        h -= h % 8;                                                                            \
        return NAME(x, h) + NAME(x + h, n - h);                                                \
    }
#define PAIRWISE_F64(NAME, LOAD, EL)                                                           \
    static double NAME(const double *x, int64_t n) {                                           \
        if (n < 8) {                                                                           \
            double s = 0;                                                                      \
            for (int64_t i = 0; i < n; i++) s += EL(x[i]);                                      \
            return s;                                                                          \
        }                                                                                      \
        if (n <= 128) {                                                                        \
            __m256d lo = LOAD(x), hi = LOAD(x + 4);                                            \
            int64_t i;                                                                         \
            for (i = 8; i < n - n % 8; i += 8) {                                               \
                lo = _mm256_add_pd(lo, LOAD(x + i));                                           \
                hi = _mm256_add_pd(hi, LOAD(x + i + 4));                                       \
            }                                                                                  \
            double r[8];                                                                       \
            _mm256_storeu_pd(r, lo);                                                           \
            _mm256_storeu_pd(r + 4, hi);                                                       \
            double s = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));      \
            for (; i < n; i++) s += EL(x[i]);                                                   \
            return s;                                                                          \
        }                                                                                      \
        int64_t h = n / 2;                                                                     \
        h -= h % 8;                                                                            \
        return NAME(x, h) + NAME(x + h, n - h);                                                \
    }
#define PAIRWISE_PLAIN(v) (v)
static inline float sq_f32(float v) { return v * v; }
static inline double sq_f64(double v) { return v * v; }
static inline __m256 load_sq_ps(const float *p) { __m256 v = _mm256_loadu_ps(p); return _mm256_mul_ps(v, v); }
static inline __m256d load_sq_pd(const double *p) { __m256d v = _mm256_loadu_pd(p); return _mm256_mul_pd(v, v); }
PAIRWISE_F32(pairwise_f32, _mm256_loadu_ps, PAIRWISE_PLAIN)
PAIRWISE_F32(pairwise_sq_f32, load_sq_ps, sq_f32)
PAIRWISE_F64(pairwise_f64, _mm256_loadu_pd, PAIRWISE_PLAIN)
PAIRWISE_F64(pairwise_sq_f64, load_sq_pd, sq_f64)

/* Column sums of an n x cols block (rows stride apart): each column summed exactly as the
 * pairwise sums above sum a contiguous row (the same additions in the same order), read down
 * the columns, so a sum over leading axes (a bias gradient over the batch) needs no
 * transposed copy. cols <= COLBLK. */
#define COLBLK 256
#define COLSUM(T)                                                                                     \
    static void colsum_##T(const T *x, int64_t n, int64_t cols, int64_t stride, T *out) {             \
        if (n < 8) {                                                                                  \
            for (int64_t c = 0; c < cols; c++) out[c] = 0;                                            \
            for (int64_t i = 0; i < n; i++)                                                           \
                for (int64_t c = 0; c < cols; c++) out[c] += x[i * stride + c];                        \
            return;                                                                                   \
        }                                                                                             \
        if (n <= 128) {                                                                               \
            T r[8][COLBLK];                                                                           \
            for (int j = 0; j < 8; j++)                                                               \
                for (int64_t c = 0; c < cols; c++) r[j][c] = x[j * stride + c];                       \
            int64_t i;                                                                                \
            for (i = 8; i < n - n % 8; i += 8)                                                        \
                for (int j = 0; j < 8; j++)                                                           \
                    for (int64_t c = 0; c < cols; c++) r[j][c] += x[(i + j) * stride + c];            \
            for (int64_t c = 0; c < cols; c++)                                                        \
                out[c] = ((r[0][c] + r[1][c]) + (r[2][c] + r[3][c])) + ((r[4][c] + r[5][c]) + (r[6][c] + r[7][c])); \
            for (; i < n; i++)                                                                        \
                for (int64_t c = 0; c < cols; c++) out[c] += x[i * stride + c];                        \
            return;                                                                                   \
        }                                                                                             \
        int64_t h = n / 2;                                                                            \
        h -= h % 8;                                                                                   \
        T left[COLBLK];                                                                               \
        colsum_##T(x, h, cols, stride, left);                                                         \
        colsum_##T(x + h * stride, n - h, cols, stride, out);                                         \
        for (int64_t c = 0; c < cols; c++) out[c] = left[c] + out[c];                                 \
    }
COLSUM(float)
COLSUM(double)

/* Column blocks are independent sums: the thread pool takes one block per part. */
typedef struct {
    const Tensor *a;
    Tensor *r;
    int64_t n, cols;
} ColJob;

static int colsum_part(void *ud, int64_t p, int slot) {
    (void)slot;
    ColJob *j = ud;
    int64_t c0 = p * COLBLK, w = j->cols - c0 < COLBLK ? j->cols - c0 : COLBLK;
    if (j->a->dtype == DT_F32) colsum_float((const float *)j->a->data + c0, j->n, w, j->cols, (float *)j->r->data + c0);
    else colsum_double((const double *)j->a->data + c0, j->n, w, j->cols, (double *)j->r->data + c0);
    return 0;
}

/* sum over the leading axes of a float tensor into r (its dtype): true when done here. */
static bool sum_leading_axes(const Tensor *a, const bool *mask, Tensor *r) {
    int lead = 0;
    while (lead < a->ndim && mask[lead]) lead++;
    for (int i = lead; i < a->ndim; i++)
        if (mask[i]) return false;
    if (lead == 0 || lead == a->ndim || r->dtype != a->dtype || !dtype_is_float(a->dtype)) return false;
    int64_t n = 1, cols = 1;
    for (int i = 0; i < lead; i++) n *= a->shape[i];
    for (int i = lead; i < a->ndim; i++) cols *= a->shape[i];
    if (n == 0 || cols == 0) return false;
    ColJob j = { a, r, n, cols };
    int64_t parts = pool_parts(cols, COLBLK);
    pool_run(parts, pool_width(parts, n * cols), colsum_part, &j);   /* cannot fail */
    return true;
}

/* The last few permuted copies reductions made, reused when the same shape comes again
 * (a training step sums its bias gradients over the batch axis every step: with the cache
 * that allocates nothing once warm). The cache is the current ops context's (ctx.h), so
 * threads running their own contexts need no lock. */
#define PERM_CACHE OPS_PERM_CACHE

static Tensor *permuted_copy(const Tensor *a, const int *perm) {
    Shape sa, so;
    int p[TSL_MAX_RANK];
    shape_of(a, &sa);
    if (shape_transpose(&sa, perm, a->ndim, p, &so)) return NULL;
    OpsCtx *ctx = ops_ctx();
    Tensor **perm_cache = ctx->perm_cache;
    for (int i = 0; i < PERM_CACHE; i++) {
        Tensor *c = perm_cache[i];
        if (c && c != a && c->rc == 1 && c->buf->rc == 1 && c->dtype == a->dtype && c->ndim == so.ndim &&
            !memcmp(c->shape, so.d, sizeof(int64_t) * (size_t)so.ndim))
            return op_transpose_into(a, perm, a->ndim, c) ? NULL : tensor_retain(c);
    }
    Tensor *t = op_transpose(a, perm, a->ndim);
    if (!t) return NULL;
    tensor_release(perm_cache[ctx->perm_next]);
    perm_cache[ctx->perm_next] = tensor_retain(t);
    ctx->perm_next = (ctx->perm_next + 1) % PERM_CACHE;
    return t;
}

void cpu_reduce_cache_free(void) {
    Tensor **perm_cache = ops_ctx()->perm_cache;
    for (int i = 0; i < PERM_CACHE; i++) {
        tensor_release(perm_cache[i]);
        perm_cache[i] = NULL;
    }
}

/* A copy (or a new reference) of a with the masked axes moved last, in order. */
static Tensor *move_axes_last(const Tensor *a, const bool *mask, int64_t *outer, int64_t *inner) {
    int perm[TSL_MAX_RANK], np = 0;
    *outer = 1;
    *inner = 1;
    for (int i = 0; i < a->ndim; i++)
        if (!mask[i]) { perm[np++] = i; *outer *= a->shape[i]; }
    for (int i = 0; i < a->ndim; i++)
        if (mask[i]) { perm[np++] = i; *inner *= a->shape[i]; }
    bool identity = true;
    for (int i = 0; i < a->ndim; i++) identity &= perm[i] == i;
    if (identity) return tensor_retain((Tensor *)a);
    return permuted_copy(a, perm);
}

/* The dtype the row kernels read: float ops on ints read f64, all/any read bool. */
static DType input_dtype(OpCode op, DType in) {
    switch (op) {
    case OP_MEAN: case OP_VAR: case OP_STD: case OP_LOGSUMEXP: case OP_NORM: return dtype_is_float(in) ? in : DT_F64;
    case OP_SUM: case OP_PROD: return in == DT_BOOL ? DT_I64 : in;
    case OP_ALL: case OP_ANY: return DT_BOOL;
    default: return in;
    }
}

/* max/min in vector lanes with NaN tracked apart: any NaN makes the result NaN (NumPy).
 * _mm256_max_ps(v, m) is (v > m ? v : m), the scalar rule, so lanes agree with the tail.
 * Ties between -0 and +0 may resolve either way. */
#define MAXMIN(NAME, T, V, LOAD, SET1, MAXV, MINV, CMPU, OR, MASK, STORE, W)            \
    static T NAME(const T *x, int64_t n, int want_max) {                               \
        V m = SET1(x[0]), m2 = m, nan = CMPU(m, m);                                    \
        int64_t i = 0;                                                                 \
        /* two accumulators: the order of max/min does not change the result */        \
        for (; i + 2 * W <= n; i += 2 * W) {                                           \
            V v = LOAD(x + i), v2 = LOAD(x + i + W);                                   \
            m = want_max ? MAXV(v, m) : MINV(v, m);                                    \
            m2 = want_max ? MAXV(v2, m2) : MINV(v2, m2);                               \
            nan = OR(nan, OR(CMPU(v, v), CMPU(v2, v2)));                               \
        }                                                                              \
        m = want_max ? MAXV(m2, m) : MINV(m2, m);                                      \
        T lane[W], r;                                                                  \
        STORE(lane, m);                                                                \
        r = lane[0];                                                                   \
        for (int k = 1; k < W; k++) r = (want_max ? lane[k] > r : lane[k] < r) ? lane[k] : r; \
        int any_nan = MASK(nan) != 0;                                                  \
        for (; i < n; i++) {                                                           \
            any_nan |= x[i] != x[i];                                                   \
            r = (want_max ? x[i] > r : x[i] < r) ? x[i] : r;                           \
        }                                                                              \
        return any_nan ? (T)NAN : r;                                                   \
    }
#define CMPU_PS(a, b) _mm256_cmp_ps(a, b, _CMP_UNORD_Q)
#define CMPU_PD(a, b) _mm256_cmp_pd(a, b, _CMP_UNORD_Q)
MAXMIN(MAXMINfloat, float, __m256, _mm256_loadu_ps, _mm256_set1_ps, _mm256_max_ps, _mm256_min_ps, CMPU_PS,
       _mm256_or_ps, _mm256_movemask_ps, _mm256_storeu_ps, 8)
MAXMIN(MAXMINdouble, double, __m256d, _mm256_loadu_pd, _mm256_set1_pd, _mm256_max_pd, _mm256_min_pd, CMPU_PD,
       _mm256_or_pd, _mm256_movemask_pd, _mm256_storeu_pd, 4)

#define ROW_FLOAT(T, SUM, EXP, LOGF)                                                    \
    static double row_##T(OpCode op, const T *x, int64_t n, T *tmp) {                   \
        switch (op) {                                                                   \
        case OP_SUM: return SUM(x, n);                                                  \
        case OP_MEAN: return (T)(SUM(x, n) / (T)n);                                     \
        case OP_PROD: { T p = 1; for (int64_t i = 0; i < n; i++) p *= x[i]; return p; } \
        case OP_VAR: case OP_STD: {                                                     \
            T m = (T)(SUM(x, n) / (T)n);                                                \
            for (int64_t i = 0; i < n; i++) { T d = x[i] - m; tmp[i] = d * d; }        \
            T v = (T)(SUM(tmp, n) / (T)n);                                              \
            return op == OP_VAR ? v : (T)sqrt(v);                                       \
        }                                                                               \
        case OP_NORM: { /* sqrt(sum(x * x)): the squares in T, summed as sum does */    \
            for (int64_t i = 0; i < n; i++) tmp[i] = x[i] * x[i];                       \
            return (T)sqrt(SUM(tmp, n));                                                \
        }                                                                               \
        case OP_MAX: return MAXMIN##T(x, n, 1);                                         \
        case OP_MIN: return MAXMIN##T(x, n, 0);                                         \
        case OP_ARGMAX: case OP_ARGMIN: {                                               \
            int64_t k = 0;                                                              \
            for (int64_t i = 1; i < n && x[k] == x[k]; i++)                             \
                if (x[i] != x[i] || (op == OP_ARGMAX ? x[i] > x[k] : x[i] < x[k])) k = i; \
            return (double)k;                                                           \
        }                                                                               \
        case OP_LOGSUMEXP: {                                                            \
            T m = x[0];                                                                 \
            for (int64_t i = 1; i < n; i++) if (x[i] > m || x[i] != x[i]) m = x[i];     \
            if (n == 0) return -INFINITY;                                               \
            if (m != m) return m;                                                       \
            if (isinf(m)) return m;                                                     \
            for (int64_t i = 0; i < n; i++) tmp[i] = x[i] - m;                          \
            EXP(tmp, tmp, n);                                                           \
            return (T)(m + LOGF(SUM(tmp, n)));                                          \
        }                                                                               \
        default: return 0;                                                              \
        }                                                                               \
    }
ROW_FLOAT(float, pairwise_f32, vm_exp_f32, logf)
ROW_FLOAT(double, pairwise_f64, vm_exp_f64, log)

double cpu_reduce_row(OpCode op, DType dt, const void *x, int64_t n, void *tmp) {
    return dt == DT_F32 ? row_float(op, x, n, tmp) : row_double(op, x, n, tmp);
}

double cpu_reduce_row_sq(OpCode op, DType dt, const void *x, int64_t n) {
    double s = dt == DT_F32 ? pairwise_sq_f32(x, n) : pairwise_sq_f64(x, n);
    if (op != OP_MEAN) return s;   /* as row_float's and row_double's OP_MEAN */
    return dt == DT_F32 ? (double)(float)((float)s / (float)n) : s / (double)n;
}

static void reduce_rows(OpCode op, const Tensor *x, Tensor *r, int64_t begin, int64_t end, int64_t inner, void *tmp) {
    for (int64_t o = begin; o < end; o++) {
        double v = 0;
        if (x->dtype == DT_F32) v = row_float(op, (const float *)x->data + o * inner, inner, tmp);
        else if (x->dtype == DT_F64) v = row_double(op, (const double *)x->data + o * inner, inner, tmp);
        else if (x->dtype == DT_I64) {
            const int64_t *p = (const int64_t *)x->data + o * inner;
            if (op == OP_SUM || op == OP_PROD) {
                uint64_t acc = op == OP_SUM ? 0 : 1;
                for (int64_t i = 0; i < inner; i++) acc = op == OP_SUM ? acc + (uint64_t)p[i] : acc * (uint64_t)p[i];
                ((int64_t *)r->data)[o] = (int64_t)acc;
                continue;
            }
            int64_t k = 0;
            for (int64_t i = 1; i < inner; i++)
                if (op == OP_MAX || op == OP_ARGMAX ? p[i] > p[k] : p[i] < p[k]) k = i;
            if (op == OP_ARGMAX || op == OP_ARGMIN) ((int64_t *)r->data)[o] = k;
            else ((int64_t *)r->data)[o] = p[k];
            continue;
        } else {
            const uint8_t *p = (const uint8_t *)x->data + o * inner;
            int64_t k = 0;
            bool all = true, any = false;
            for (int64_t i = 0; i < inner; i++) { all &= p[i] != 0; any |= p[i] != 0; }
            for (int64_t i = 1; i < inner; i++)
                if (op == OP_MAX || op == OP_ARGMAX ? p[i] > p[k] : p[i] < p[k]) k = i;
            v = op == OP_ALL ? all : op == OP_ANY ? any : (op == OP_ARGMAX || op == OP_ARGMIN) ? (double)k : p[k];
        }
        tensor_set(r, o, v);
    }
}

/* Rows split over the thread pool: a part is a fixed number of whole rows (about POOL_BLOCK
 * elements), so no output's summation is ever split and the bits never depend on the
 * threads; each slot has its own `tmp` row. */
typedef struct {
    OpCode op;
    const Tensor *x;
    Tensor *r;
    int64_t outer, inner, rows;   /* rows per part */
    char *tmp;                    /* per slot: inner + 1 doubles, or NULL */
} RowsJob;

static int rows_part(void *ud, int64_t p, int slot) {
    RowsJob *j = ud;
    int64_t begin = p * j->rows, end = begin + j->rows < j->outer ? begin + j->rows : j->outer;
    void *tmp = j->tmp ? j->tmp + (size_t)slot * sizeof(double) * (size_t)(j->inner + 1) : NULL;
    reduce_rows(j->op, j->x, j->r, begin, end, j->inner, tmp);
    return 0;
}

static int reduce_rows_split(OpCode op, const Tensor *x, Tensor *r, int64_t outer, int64_t inner, bool needs_tmp) {
    RowsJob j = { op, x, r, outer, inner, inner >= POOL_BLOCK ? 1 : POOL_BLOCK / inner, NULL };
    int64_t parts = pool_parts(outer, j.rows);
    int width = pool_width(parts, outer * inner);
    if (needs_tmp && !(j.tmp = mem_try_alloc(sizeof(double) * (size_t)(inner + 1) * (size_t)width))) {
        op_failk(ERRK_MEMORY, "out of memory");
        return -1;
    }
    int rc = pool_run(parts, width, rows_part, &j);
    mem_free(j.tmp);
    return rc;
}

/* ---------- Kept axes in the middle ----------
 * A float reduction over leading and trailing axes around one run of kept axes (a bias
 * gradient or batch statistics: [N, C, H, W] over N, H and W) gathers each kept index's row
 * into a per-slot buffer, `lead` pieces of `seg` contiguous values, in the order move_axes_last's
 * transposed copy would hold them, and runs the same row kernel on it: the copy's bits without
 * making the copy (its element-by-element walk was most of a small CNN's bias gradients). */
typedef struct {
    OpCode op;
    const Tensor *a;
    Tensor *r;
    int64_t lead, kept, seg, rows;   /* rows per part */
    char *buf;                       /* per slot: the row, then the row kernel's tmp */
} MidJob;

static int mid_part(void *ud, int64_t p, int slot) {
    MidJob *j = ud;
    size_t esz = dtype_size(j->a->dtype), inner = (size_t)(j->lead * j->seg);
    char *row = j->buf + (size_t)slot * 2 * inner * esz;
    int64_t end = (p + 1) * j->rows < j->kept ? (p + 1) * j->rows : j->kept;
    for (int64_t k = p * j->rows; k < end; k++) {
        for (int64_t i = 0; i < j->lead; i++)
            memcpy(row + (size_t)(i * j->seg) * esz, j->a->data + (size_t)((i * j->kept + k) * j->seg) * esz,
                   (size_t)j->seg * esz);
        double v = j->a->dtype == DT_F32 ? row_float(j->op, (const float *)row, (int64_t)inner, (float *)(row + inner * esz))
                                         : row_double(j->op, (const double *)row, (int64_t)inner, (double *)(row + inner * esz));
        tensor_set(j->r, k, v);
    }
    return 0;
}

/* The reduction when a's kept axes are one run between reduced leading and trailing axes of a
 * float tensor reduced in its own dtype: 0 done, 1 not this case, -1 out of memory. */
static int reduce_mid_axes(OpCode op, const Tensor *a, const bool *mask, Tensor *r) {
    int nd = a->ndim, k0 = 0, k1;
    while (k0 < nd && mask[k0]) k0++;
    for (k1 = k0; k1 < nd && !mask[k1]; k1++) {}
    for (int i = k1; i < nd; i++)
        if (!mask[i]) return 1;
    if (k0 == 0 || k1 == nd || !dtype_is_float(a->dtype) || r->dtype != a->dtype || input_dtype(op, a->dtype) != a->dtype)
        return 1;
    MidJob j = { op, a, r, 1, 1, 1, 0, NULL };
    for (int i = 0; i < nd; i++) *(i < k0 ? &j.lead : i < k1 ? &j.kept : &j.seg) *= a->shape[i];
    int64_t inner = j.lead * j.seg;
    if (inner == 0 || j.kept == 0) return 1;
    j.rows = inner >= POOL_BLOCK ? 1 : POOL_BLOCK / inner;
    int64_t parts = pool_parts(j.kept, j.rows);
    int width = pool_width(parts, j.kept * inner);
    if (!(j.buf = mem_try_alloc(2 * dtype_size(a->dtype) * (size_t)inner * (size_t)width))) {
        op_failk(ERRK_MEMORY, "out of memory");
        return -1;
    }
    int rc = pool_run(parts, width, mid_part, &j);
    mem_free(j.buf);
    return rc;
}

/* The reduction into r (the result's dtype and shape). Reducing trailing axes of a tensor
 * in its compute dtype allocates no tensor; other cases move the axes last first. */
int op_reduce_into(OpCode op, const Tensor *a, const int *axes, int n, bool keepdims, Tensor *r) {
    bool mask[TSL_MAX_RANK];
    Shape sa, so;
    DType rt;
    shape_of(a, &sa);
    if (shape_reduce(op, &sa, a->dtype, axes, n, keepdims, &so, &rt)) return -1;
    axes_mask(a->ndim, axes, n, op_info[op].name, mask);
    if (op == OP_SUM && sum_leading_axes(a, mask, r)) return 0;
    int mid = reduce_mid_axes(op, a, mask, r);
    if (mid <= 0) return mid;
    int64_t outer, inner;
    DType in = input_dtype(op, a->dtype);
    Tensor *conv = in == a->dtype ? tensor_retain((Tensor *)a) : op_astype(a, in);
    if (!conv) return -1;
    Tensor *x = move_axes_last(conv, mask, &outer, &inner);
    tensor_release(conv);
    if (!x) return -1;
    DType cd = dtype_is_float(rt) && in == DT_F64 ? DT_F64 : rt;   /* compute dtype of the result */
    Tensor *acc = cd == r->dtype ? r : tensor_new(cd, &so);         /* integer inputs: f64, then rt */
    bool needs_tmp = op == OP_VAR || op == OP_STD || op == OP_LOGSUMEXP || op == OP_NORM;
    int rc = -1;
    if (acc) {
        /* An empty input runs no kernel: a row kernel's scratch is sized by the reduced axes
         * alone, which may be huge when another axis is 0 (zeros([0, 2**40, 4]) along axis
         * 1). With no rows there is nothing to fill; with empty rows each gets the identity. */
        if (outer == 0 || inner == 0) {
            double empty = op == OP_PROD || op == OP_ALL ? 1 : op == OP_LOGSUMEXP ? -INFINITY
                           : (op == OP_SUM || op == OP_ANY || op == OP_NORM) ? 0 : NAN;
            for (int64_t o = 0; o < outer; o++) tensor_set(acc, o, empty);
            rc = 0;
        } else {
            rc = reduce_rows_split(op, x, acc, outer, inner, needs_tmp);
        }
        for (int64_t o = 0; rc == 0 && acc != r && o < r->size; o++) tensor_set(r, o, tensor_get(acc, o));
    }
    if (acc != r) tensor_release(acc);
    tensor_release(x);
    return rc;
}

/* The row's largest value as softmax takes it: m = p[i] > m ? p[i] : m from m = p[0] (a NaN
 * first stays; a later NaN is passed over, and the row's sum is NaN then anyway), in 4 x W
 * vector lanes (_mm256_max_p* is that rule lane by lane, and lanes combine by it in order),
 * not a chain of scalar compares one element after another. Only which of +0 and -0 a tie
 * between them keeps may differ from the one-by-one loop, and no result depends on it: x - m
 * and exp(x - m) are the same for either, and when both zeros are the largest the sum is >= 2, so
 * log_softmax's x - m - log(sum) is too. */
#define SOFTMAX_MAX(T, V, W, LOAD, SET1, MAXV, STORE)                                    \
    static T softmax_max_##T(const T *p, int64_t n) {                                    \
        V a = SET1(p[0]), b = a, c = a, d = a;                                           \
        int64_t i = 0;                                                                   \
        for (; i + 4 * W <= n; i += 4 * W) {                                             \
            a = MAXV(LOAD(p + i), a);                                                    \
            b = MAXV(LOAD(p + i + W), b);                                                \
            c = MAXV(LOAD(p + i + 2 * W), c);                                            \
            d = MAXV(LOAD(p + i + 3 * W), d);                                            \
        }                                                                                \
        a = MAXV(MAXV(b, a), MAXV(d, c));                                                \
        T lane[W], m;                                                                    \
        STORE(lane, a);                                                                  \
        m = lane[0];                                                                     \
        for (int k = 1; k < W; k++) if (lane[k] > m) m = lane[k];                        \
        for (; i < n; i++) if (p[i] > m) m = p[i];                                       \
        return m;                                                                        \
    }
SOFTMAX_MAX(float, __m256, 8, _mm256_loadu_ps, _mm256_set1_ps, _mm256_max_ps, _mm256_storeu_ps)
SOFTMAX_MAX(double, __m256d, 4, _mm256_loadu_pd, _mm256_set1_pd, _mm256_max_pd, _mm256_storeu_pd)

/* softmax(x) = exp(x - max) / sum(exp(x - max)); log_softmax(x) = x - max - log(sum). */
#define SOFTMAX_LINE(T, SUM, EXP, LOG)                                                   \
    static void softmax_line_##T(const T *p, T *q, int64_t inner, bool want_log, T *e) { \
        T m = softmax_max_##T(p, inner);                                                 \
        for (int64_t i = 0; i < inner; i++) q[i] = p[i] - m;                             \
        if (want_log) {                                                                  \
            EXP(q, e, inner);                                                            \
            T ls = LOG(SUM(e, inner));                                                   \
            for (int64_t i = 0; i < inner; i++) q[i] = q[i] - ls;                        \
        } else {                                                                         \
            EXP(q, q, inner);                                                            \
            T s = SUM(q, inner);                                                         \
            for (int64_t i = 0; i < inner; i++) q[i] = q[i] / s;                         \
        }                                                                                \
    }
SOFTMAX_LINE(float, pairwise_f32, vm_exp_f32, logf)
SOFTMAX_LINE(double, pairwise_f64, vm_exp_f64, log)

/* (log_)softmax into r (a's shape, the result dtype). Along the last axis of a float
 * tensor nothing is allocated but log_softmax's row of exponentials (one, reused by every
 * row). */
int op_softmax_into(const Tensor *a, int axis, bool want_log, Tensor *r) {
    int ax;
    DType dt;
    Shape sa;
    shape_of(a, &sa);
    if (shape_softmax(&sa, a->dtype, axis, want_log, &ax, &dt)) return -1;
    bool mask[TSL_MAX_RANK] = { false };
    mask[ax] = true;
    Tensor *conv = dt == a->dtype ? tensor_retain((Tensor *)a) : op_astype(a, dt);
    if (!conv) return -1;
    int64_t outer, inner;
    Tensor *x = move_axes_last(conv, mask, &outer, &inner);
    tensor_release(conv);
    if (!x) return -1;
    bool last = ax == a->ndim - 1;
    Shape sx;
    shape_of(x, &sx);
    Tensor *y = last ? r : tensor_new(dt, &sx);
    if (!y) { tensor_release(x); return -1; }
    /* log_softmax's row of exponentials, one for every row (was one allocation a row) */
    void *e = want_log && outer > 0 && inner > 0 ? mem_try_alloc(dtype_size(dt) * (size_t)inner) : NULL;
    if (want_log && outer > 0 && inner > 0 && !e) {
        tensor_release(x);
        if (y != r) tensor_release(y);
        op_failk(ERRK_MEMORY, "out of memory");
        return -1;
    }
    for (int64_t o = 0, at = 0; o < outer && inner > 0; o++, at += inner) {
        if (dt == DT_F32) softmax_line_float((const float *)x->data + at, (float *)y->data + at, inner, want_log, e);
        else softmax_line_double((const double *)x->data + at, (double *)y->data + at, inner, want_log, e);
    }
    mem_free(e);
    tensor_release(x);
    if (last) return 0;
    /* move the axis back where it was */
    int perm[TSL_MAX_RANK];
    for (int i = 0, k = 0; i < a->ndim; i++) perm[i] = i == ax ? a->ndim - 1 : k++;
    int rc = op_transpose_into(y, perm, a->ndim, r);
    tensor_release(y);
    return rc;
}
