/* linalg.c - matmul (NumPy rules: 1-D operands, batched broadcasting) and outer.
 *
 * Float matmul goes to OpenBLAS: cblas_?gemv when the left operand has one row (batch-1
 * inference, memory-bound; a small one, an RNN cell's, is a loop of our own: mm_small),
 * cblas_?gemm otherwise, one call per block of MATMUL_BLOCK_ROWS rows of the result. The
 * choice and the blocks depend only on shapes, so eager and static (whose matmul epilogues
 * apply bias and activation to each block while it is in cache) call the same routines on the
 * same blocks and get the same bits. A large block is cut into row
 * or column ranges for the thread pool, each one gemm call whose elements have the whole
 * block call's bits (see "Rows or columns on the thread pool" below). The plain row-major call
 * is OpenBLAS's fastest form for the MLP's [64, 512] @ [512, 512]: the swapped call
 * (C^T = B^T A^T) is 4-8% slower, and on one thread blocks of N or K, padded rows and
 * prefetching gain nothing (bench/gemm64.c, bench/README.md).
 * Integer matmul has no BLAS routine; it is a plain triple loop (exact, so order does not
 * matter). */
#include <cblas.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>
#include "cpu.h"
#include "infer.h"
#include "pool.h"

/* ---------- One row of a small matrix ----------
 * An RNN cell's h @ W ([1, 16] @ [16, 16]) is 256 multiply-adds: cblas_sgemv's entry, its beta
 * scaling and its kernel's set-up cost more than the arithmetic (callgrind: about 680
 * instructions a call against 230 here). A one-row product of at most MM_SMALL_WORK multiply-adds is this loop
 * instead, in eager and static code alike (both come through mm_row). Each c[j] is four
 * running sums over the rows p of b by p mod 4, each in p order and started by its first
 * product, then (s0 + s1) + (s2 + s3) (s0, s0 + s1, (s0 + s1) + s2 when k < 4); every product
 * is rounded before its add (the build has no contraction: -ffp-contract=off). Four sums, not
 * one: a step of a recurrence waits for its product, and one chain of k dependent adds is
 * most of its latency (RNN 16 x 10,000: 0.97-1.00 ms with one sum, 5% less with four, 1.15 ms
 * with gemv; fastest of 41 runs). The order does not depend on how many columns a vector
 * holds, so the vectors, the scalar tail and every thread count give the same bits. (Not
 * OpenBLAS's: its gemv sums with FMA in groups of rows; the values agree within rounding, as
 * NumPy's do: tests/scripts/matmul_small.tsl.) Above the limit gemv's blocked kernel wins
 * (this loop alone against cblas_sgemv, one core: 64 x 64 1.3x faster, 96 x 96 about even,
 * 128 x 128 1.4x slower). */
#define MM_SMALL_WORK 4096

/* One output (R = T) or one vector of them (R = T##_v): the sums above. LD(x) reads row x of b
 * at the output's columns. */
#define MM_SUM4(NAME, T, R, LD)                                                                         \
    static inline R NAME(const T *a, const T *b, int64_t k, int64_t n) {                                 \
        R s0 = a[0] * LD(b), s1, s2, s3;                                                                 \
        if (k == 1) return s0;                                                                           \
        s1 = a[1] * LD(b + n);                                                                           \
        if (k == 2) return s0 + s1;                                                                      \
        s2 = a[2] * LD(b + 2 * n);                                                                       \
        if (k == 3) return (s0 + s1) + s2;                                                               \
        s3 = a[3] * LD(b + 3 * n);                                                                       \
        int64_t p = 4;                                                                                   \
        for (; p + 4 <= k; p += 4) {                                                                     \
            const T *bp = b + p * n;                                                                     \
            s0 = s0 + a[p] * LD(bp);                                                                     \
            s1 = s1 + a[p + 1] * LD(bp + n);                                                             \
            s2 = s2 + a[p + 2] * LD(bp + 2 * n);                                                         \
            s3 = s3 + a[p + 3] * LD(bp + 3 * n);                                                         \
        }                                                                                                \
        if (p < k) s0 = s0 + a[p] * LD(b + p * n);                                                       \
        if (p + 1 < k) s1 = s1 + a[p + 1] * LD(b + (p + 1) * n);                                         \
        if (p + 2 < k) s2 = s2 + a[p + 2] * LD(b + (p + 2) * n);                                         \
        return (s0 + s1) + (s2 + s3);                                                                    \
    }
#define MM_LOAD1(x) (*(x))
#define MM_SMALL(T)                                                                                      \
    typedef T T##_v __attribute__((vector_size(32)));                                                    \
    typedef T T##_vu __attribute__((vector_size(32), aligned(sizeof(T))));   /* unaligned */             \
    static inline T##_v mm_load_##T(const T *x) { return *(const T##_vu *)x; }                           \
    MM_SUM4(mm_sum1_##T, T, T, MM_LOAD1)                                                                 \
    MM_SUM4(mm_sumv_##T, T, T##_v, mm_load_##T)                                                          \
    static void mm_small_##T(const T *restrict a, const T *restrict b, T *restrict c, int64_t k, int64_t n, \
                             int64_t cols) {                                                             \
        enum { LANES = 32 / sizeof(T) };                                                                 \
        int64_t j = 0;                                                                                   \
        for (; j + LANES <= cols; j += LANES) *(T##_vu *)(c + j) = mm_sumv_##T(a, b + j, k, n);          \
        for (; j < cols; j++) c[j] = mm_sum1_##T(a, b + j, k, n);                                        \
    }                                                                                                    \
    /* b stored [n, k]: the same sums, each c[j] reading row j of b (no vectors across columns) */       \
    static void mm_small_tb_##T(const T *restrict a, const T *restrict b, T *restrict c, int64_t k, int64_t n) { \
        for (int64_t j = 0; j < n; j++) c[j] = mm_sum1_##T(a, b + j * k, k, 1);                          \
    }
MM_SMALL(float)
MM_SMALL(double)

/* The one-row product c0[n] = a[k] @ b[k, n] (one row of a is the same memory transposed or
 * not; tb: b stored [n, k]): the loop above when it is small, else gemv. k >= 1
 * (cpu_matmul_rows makes k == 0 zeros). With tb the small loop sums as it does for a copied
 * transpose; gemv reads b's rows (its other kernel). */
static void mm_row(DType dt, const void *a, const void *b, bool tb, void *c0, int64_t k, int64_t n) {
    bool small = k * n <= MM_SMALL_WORK;
    if (tb && small && dt == DT_F32) mm_small_tb_float(a, b, c0, k, n);
    else if (tb && small) mm_small_tb_double(a, b, c0, k, n);
    else if (tb && dt == DT_F32) cblas_sgemv(CblasRowMajor, CblasNoTrans, (blasint)n, (blasint)k, 1, b, (blasint)k, a, 1, 0, c0, 1);
    else if (tb) cblas_dgemv(CblasRowMajor, CblasNoTrans, (blasint)n, (blasint)k, 1, b, (blasint)k, a, 1, 0, c0, 1);
    else if (dt == DT_F32 && small) mm_small_float(a, b, c0, k, n, n);
    else if (dt == DT_F32) cblas_sgemv(CblasRowMajor, CblasTrans, (blasint)k, (blasint)n, 1, b, (blasint)n, a, 1, 0, c0, 1);
    else if (small) mm_small_double(a, b, c0, k, n, n);
    else cblas_dgemv(CblasRowMajor, CblasTrans, (blasint)k, (blasint)n, 1, b, (blasint)n, a, 1, 0, c0, 1);
}

/* Rows [r0, r0 + rows) and columns [j0, j0 + cols) of c[m, n] = a[m, k] @ b[k, n], m >= 2, into
 * c0 (those rows only, n apart; the columns at their place in them); with MM_TRANS_A a is
 * stored [k, m], with MM_TRANS_B b is stored [n, k], and BLAS reads them transposed. The bits
 * are not always those of a copied transpose (Haswell sgemm, 0.3.21: [24, 32] @ [32, 16] differs
 * from [24, 32] @ transpose([16, 32])), so only code that asks for transpose_b gets it, in
 * eager and static code alike: the gradient rules, attention, nn's layers. */
#define MM_BLOCK(T, GEMM)                                                                                   \
    static void mm_block_##T(const T *a, int trans, const T *b, T *c0, int64_t m, int64_t k, int64_t n,       \
                             int64_t r0, int64_t rows, int64_t j0, int64_t cols) {                           \
        bool ta = trans & MM_TRANS_A, tb = trans & MM_TRANS_B;                                               \
        GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)rows,    \
             (blasint)cols, (blasint)k, 1, ta ? a + r0 : a + r0 * k, (blasint)(ta ? m : k),                  \
             tb ? b + j0 * k : b + j0, (blasint)(tb ? k : n), 0, c0 + j0, (blasint)n);                       \
    }
MM_BLOCK(float, cblas_sgemm)
MM_BLOCK(double, cblas_dgemm)

static void matmul_call(DType dt, const void *a, int trans, const void *b, void *c0, int64_t m, int64_t k, int64_t n,
                        int64_t r0, int64_t rows, int64_t j0, int64_t cols) {
    if (dt == DT_F32) mm_block_float(a, trans, b, c0, m, k, n, r0, rows, j0, cols);
    else mm_block_double(a, trans, b, c0, m, k, n, r0, rows, j0, cols);
}

/* ---------- Rows or columns on the thread pool ----------
 * The build links Debian's pthread OpenBLAS (Makefile, BLAS_DIR) held to one thread of its own
 * (blas_one_thread): its gemm takes its work buffers under a lock, so any number of threads
 * may call it at once. (The serial build searches its buffer table unlocked: two calls at once
 * can share a buffer and return each other's garbage.) OpenBLAS's own threads are not used: with
 * 2 or 4 of them some of our products (128 x 784 x 128 f32) change bits.
 *
 * A large block is cut instead into one range of rows, or of columns, per pool thread, each one
 * gemm call. A range has the bits of the same elements of the whole block's call: a row range
 * starts at a multiple of the kernel's tile rows (tile_rows), so its rows are whole tiles of the
 * whole call, which start at row 0; a column range (b's and c's columns, ldb = ldc = n) starts at
 * a multiple of col_grain, where the kernel sets measured (bench/colbits.c) give every column
 * one call's bits; each element sums over k in the same blocks; and every range (so the whole)
 * does at least MM_PART_MIN_WORK multiply-adds, above OpenBLAS's small-matrix path (10^6 on
 * SkylakeX), which sums in another order. So the ranges may follow the thread count (one range
 * per thread) and the result still has one call's bits for every count (tests/unit/test_pool.c
 * checks it against the single call).
 *
 * Rows or columns: the choice depends on the shape only (never on the thread count). A row
 * range packs all of b (OpenBLAS's slow copy, 27% of a batch-64 layer's time) and its rows of
 * a; a column range packs its columns of b and all the block's rows of a (the cheap copy). So
 * a block of no more rows than columns is cut by columns where the kernel set allows, which at
 * batch 64 halves each thread's packing of the weights instead of repeating it. */
#define MM_PART_MIN_WORK ((int64_t)1 << 21)

/* Rows whose multiples keep the bits, by kernel set and dtype, measured with 0.3.21 (ranges
 * of 8..96 rows against one call): SkylakeX/Cooperlake sgemm 16 (8 changes bits), dgemm 24
 * (16, 32 and 64 change them); Haswell (also Zen's) 24 for both. 0: another kernel set,
 * never split. Columns likewise (bench/colbits.c: 2-4 ranges of multiples of 4..128 columns,
 * 150-300 random shapes m 2..256, k and n 8..2048, a transposed or not, a range of at least
 * MM_PART_MIN_WORK): SkylakeX/Cooperlake sgemm any multiple of 4 for any n (16 taken: 64-byte
 * lines), dgemm multiples of 8 only where n is one too (an edge of fewer than 8 columns takes
 * another summation when the call is cut; grain 4 fails); Haswell (Zen) dgemm any multiple of
 * 4 for any n (8 taken), sgemm no grain (its 16-column tiles start where the call's cut points
 * put them, 75-95% of cuts change bits): never split by columns. Set once by
 * blas_choose_kernels, before any state computes. */
static int tile_rows_f32, tile_rows_f64, col_grain_f32, col_grain_f64;
static bool col_any_n_f64;   /* dgemm column ranges keep the bits for any n (else n % grain == 0) */

static void choose_tiles(void) {
    const char *core = openblas_get_corename();
    tile_rows_f32 = tile_rows_f64 = col_grain_f32 = col_grain_f64 = 0;
    col_any_n_f64 = false;
    if (!core) return;
    if (!strcasecmp(core, "skylakex") || !strcasecmp(core, "cooperlake"))
        tile_rows_f32 = 16, tile_rows_f64 = 24, col_grain_f32 = 16, col_grain_f64 = 8;
    else if (!strcasecmp(core, "haswell") || !strcasecmp(core, "zen"))
        tile_rows_f32 = tile_rows_f64 = 24, col_grain_f64 = 8, col_any_n_f64 = true;
}

/* The column grain for this product, 0 when it may not be cut by columns. */
static int64_t col_grain(DType dt, int64_t n) {
    if (dt == DT_F32) return col_grain_f32;
    return col_grain_f64 && (col_any_n_f64 || n % col_grain_f64 == 0) ? col_grain_f64 : 0;
}

typedef struct {
    DType dt;
    const void *a, *b;
    void *c0;
    int trans;
    bool by_cols;
    int64_t m, k, n, r0, rows, part, parts;   /* part: a range's rows or columns */
} MmJob;

/* Range `part`; the last one also takes the rows or columns left over. */
static int mm_part(void *ud, int64_t part, int slot) {
    (void)slot;
    const MmJob *j = ud;
    int64_t p0 = part * j->part, total = j->by_cols ? j->n : j->rows;
    int64_t len = part == j->parts - 1 ? total - p0 : j->part;
    if (j->by_cols) matmul_call(j->dt, j->a, j->trans, j->b, j->c0, j->m, j->k, j->n, j->r0, j->rows, p0, len);
    else
        matmul_call(j->dt, j->a, j->trans, j->b, (char *)j->c0 + (size_t)(p0 * j->n) * dtype_size(j->dt), j->m, j->k,
                    j->n, j->r0 + p0, len, 0, j->n);
    return 0;
}

static int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/* The fewest rows or columns a range may have (each `unit` multiply-adds): whole grains, off
 * the small-matrix path. 0: no cut. */
static int64_t least_range(int64_t unit, int64_t grain) {
    return unit > 0 && grain ? round_up((MM_PART_MIN_WORK + unit - 1) / unit, grain) : 0;
}

/* `total` rows or columns in one range per thread (at most `width`), multiples of `grain`, each
 * at least `least`: sets the range's length and their count (< 2: one call). */
static void cut_ranges(MmJob *j, int64_t total, int64_t grain, int64_t least, int width) {
    j->part = round_up((total + width - 1) / width, grain);
    if (j->part < least) j->part = least;
    j->parts = total / j->part;
    if (total - j->parts * j->part >= least) j->parts++;   /* else the last range takes the rest */
}

/* How a block is cut (from its shape only; the thread count decides how many ranges): the
 * fewest rows or columns a range may have into *least and its grain into *grain. */
MatmulCut cpu_matmul_cut(DType dt, int64_t m, int64_t k, int64_t n, int64_t rows, int64_t *least, int64_t *grain) {
    *least = *grain = 0;
    if (m < 2) return MM_ONE_CALL;   /* gemv (first: an RNN step pays no divisions for it) */
    int64_t tile = dt == DT_F32 ? tile_rows_f32 : tile_rows_f64, cg = col_grain(dt, n);
    int64_t min_rows = least_range(k * n, tile), min_cols = least_range(rows * k, cg);
    if (rows <= n && min_cols && n >= 2 * min_cols) {
        *least = min_cols, *grain = cg;
        return MM_BY_COLS;
    }
    if (!min_rows || rows < 2 * min_rows) return MM_ONE_CALL;
    *least = min_rows, *grain = tile;
    return MM_BY_ROWS;
}

void cpu_matmul_rows(DType dt, const void *a, int trans, const void *b, void *c0, int64_t m, int64_t k, int64_t n,
                     int64_t r0, int64_t rows) {
    if (k == 0) {   /* no BLAS call: zeros */
        memset(c0, 0, dtype_size(dt) * (size_t)(rows * n));
        return;
    }
    if (m == 1) {   /* never cut (cpu_matmul_cut): an RNN step goes straight to its loop */
        mm_row(dt, a, b, trans & MM_TRANS_B, c0, k, n);
        return;
    }
    int64_t least, grain;
    MatmulCut cut = cpu_matmul_cut(dt, m, k, n, rows, &least, &grain);
    bool by_cols = cut == MM_BY_COLS;
    int64_t total = by_cols ? n : rows;
    int width = cut != MM_ONE_CALL ? pool_width(total / least, rows * k * n) : 1;
    MmJob j = { dt, a, b, c0, trans, by_cols, m, k, n, r0, rows, 0, 1 };
    if (width > 1) cut_ranges(&j, total, grain, least, width);
    if (j.parts < 2) matmul_call(dt, a, trans, b, c0, m, k, n, r0, rows, 0, n);
    else pool_run(j.parts, width, mm_part, &j);   /* mm_part never fails */
}

/* The whole product, one row block after another: the blocks are the ones a static graph's
 * matmul epilogue computes (vm/run/exec_cpu.c exec_epilogue), so eager gets the same bits. */
static void mm_float(DType dt, const void *a, int trans, const void *b, void *c, int64_t m, int64_t k, int64_t n) {
    size_t esz = dtype_size(dt);
    for (int64_t r0 = 0; r0 < m; r0 += MATMUL_BLOCK_ROWS) {
        int64_t rows = m - r0 < MATMUL_BLOCK_ROWS ? m - r0 : MATMUL_BLOCK_ROWS;
        cpu_matmul_rows(dt, a, trans, b, (char *)c + (size_t)(r0 * n) * esz, m, k, n, r0, rows);
    }
}

static void mm_i64(const int64_t *a, int trans, const int64_t *b, int64_t *c, int64_t m, int64_t k, int64_t n) {
    bool ta = trans & MM_TRANS_A, tb = trans & MM_TRANS_B;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            uint64_t s = 0;
            for (int64_t p = 0; p < k; p++)
                s += (uint64_t)a[ta ? p * m + i : i * k + p] * (uint64_t)b[tb ? j * k + p : p * n + j];
            c[i * n + j] = (int64_t)s;
        }
}


/* `out` has the result's dtype and shape and is neither a nor b. */
int op_matmul_t_into(const Tensor *a, bool ta, const Tensor *b, bool tb, Tensor *out) {
    if (a->ndim < 2) ta = false;   /* a vector is the same either way */
    if (b->ndim < 2) tb = false;
    int trans = (ta ? MM_TRANS_A : 0) | (tb ? MM_TRANS_B : 0);
    int am = ta ? 1 : 0, ak = ta ? 0 : 1, bk = tb ? 1 : 0, bn = tb ? 0 : 1;   /* their axes among the last two */
    /* plain float matrices (the common case): straight to BLAS */
    if (a->ndim == 2 && b->ndim == 2 && a->dtype == b->dtype && a->dtype == out->dtype && dtype_is_float(a->dtype) &&
        a->shape[ak] == b->shape[bk] && a->shape[am] * b->shape[bn] > 0) {
        mm_float(a->dtype, a->data, trans, b->data, out->data, a->shape[am], a->shape[ak], b->shape[bn]);
        return 0;
    }
    Shape sa, sb;
    DType dt = out->dtype;
    shape_of(a, &sa);
    shape_of(b, &sb);
    /* 1-D operands become matrices, and the added axis is dropped from the result */
    Shape ma = sa, mb = sb;
    if (a->ndim == 1) { ma.ndim = 2; ma.d[0] = 1; ma.d[1] = sa.d[0]; }
    if (ta) {   /* a's matrices as the product reads them */
        int64_t t = ma.d[ma.ndim - 1];
        ma.d[ma.ndim - 1] = ma.d[ma.ndim - 2];
        ma.d[ma.ndim - 2] = t;
    }
    if (b->ndim == 1) { mb.ndim = 2; mb.d[0] = sb.d[0]; mb.d[1] = 1; }
    if (tb) {   /* b's matrices as the product reads them */
        int64_t t = mb.d[mb.ndim - 1];
        mb.d[mb.ndim - 1] = mb.d[mb.ndim - 2];
        mb.d[mb.ndim - 2] = t;
    }
    int64_t m = ma.d[ma.ndim - 2], k = ma.d[ma.ndim - 1], n = mb.d[mb.ndim - 1];
    Shape ba = { ma.ndim - 2, { 0 } }, bb = { mb.ndim - 2, { 0 } }, bo;
    memcpy(ba.d, ma.d, sizeof(int64_t) * (size_t)ba.ndim);
    memcpy(bb.d, mb.d, sizeof(int64_t) * (size_t)bb.ndim);
    shape_broadcast(&ba, &bb, &bo, "@");
    DType ct = dt == DT_BOOL ? DT_I64 : dt;
    Tensor *ca = a->dtype == ct ? tensor_retain((Tensor *)a) : op_astype(a, ct);
    Tensor *cb = b->dtype == ct ? tensor_retain((Tensor *)b) : op_astype(b, ct);
    int rc = -1;
    Shape so;
    shape_of(out, &so);
    /* bool matmul computes in i64 and converts at the end */
    Tensor *r = ca && cb ? (ct == dt ? tensor_retain(out) : tensor_new(ct, &so)) : NULL;
    if (!r) goto out;
    /* walk the broadcast batch: each batch index maps to one matrix of a and of b */
    /* an empty result has nothing to compute, however many (empty) batches it has */
    int64_t nbatch = out->size ? shape_count(&bo) : 0, esz = (int64_t)dtype_size(ct);
    for (int64_t bi = 0; bi < nbatch; bi++) {
        int64_t rem = bi, oa = 0, ob = 0, stra = 1, strb = 1;
        for (int d = bo.ndim - 1; d >= 0; d--) {
            int64_t idx = rem % bo.d[d];
            rem /= bo.d[d];
            int ja = ba.ndim - bo.ndim + d, jb = bb.ndim - bo.ndim + d;
            if (ja >= 0) { if (ba.d[ja] != 1) oa += idx * stra; stra *= ba.d[ja]; }
            if (jb >= 0) { if (bb.d[jb] != 1) ob += idx * strb; strb *= bb.d[jb]; }
        }
        const char *pa = (const char *)ca->data + oa * m * k * esz, *pb = (const char *)cb->data + ob * k * n * esz;
        char *pc = (char *)r->data + bi * m * n * esz;
        if (m * n == 0) continue;
        if (dtype_is_float(ct)) mm_float(ct, pa, trans, pb, pc, m, k, n);
        else mm_i64((const int64_t *)pa, trans, (const int64_t *)pb, (int64_t *)pc, m, k, n);
    }
    if (dt == DT_BOOL) {
        Tensor *c = op_astype(r, DT_BOOL);
        if (c) memcpy(out->data, c->data, (size_t)out->size);
        tensor_release(c);
        if (!c) goto out;
    }
    rc = 0;
out:
    tensor_release(r);
    tensor_release(ca);
    tensor_release(cb);
    return rc;
}

/* The kernel set OpenBLAS uses (e.g. "SkylakeX", "Haswell", "Prescott"). */
const char *blas_core_name(void) { return openblas_get_corename(); }

/* OpenBLAS computes on the calling thread only: the pool splits products (see "Rows or
 * columns on the thread pool"). bin/tsl keeps the pthread build from starting its worker
 * threads at all (repl/main.c sets OPENBLAS_NUM_THREADS=1 before libraries load); in another
 * program that links libtsl they wait, unused, and go to sleep after ~0.1 s. (Stopping them
 * with blas_thread_shutdown_ would hang where a worker cannot reserve its buffer, under
 * ulimit -v.) */
static void blas_one_thread(void) { openblas_set_num_threads(1); }

/* OpenBLAS picks its kernels when it loads, from the CPU or OPENBLAS_CORETYPE. Debian's
 * 0.3.21 does not know recent Xeons and falls back to its generic SSE3 kernels ("Prescott"),
 * three to four times slower on the small matrices of training steps, although the CPU runs
 * its AVX-512 or AVX2 ones. A DYNAMIC_ARCH build can choose again before its first call:
 * gotoblas_dynamic_quit/_init (looked up, so another build simply keeps its choice). A
 * user's own OPENBLAS_CORETYPE is left alone. */
static void choose_core(void) {
    const char *core = openblas_get_corename();
    if (getenv("OPENBLAS_CORETYPE") || !core || strcasecmp(core, "prescott") != 0) return;
    void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
    void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
    if (!quit || !init) return;
    __builtin_cpu_init();
    const char *better = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")
                             ? "SkylakeX"
                         : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? "Haswell"
                                                                                             : NULL;
    if (!better || setenv("OPENBLAS_CORETYPE", better, 1)) return;
    quit();
    init();
    unsetenv("OPENBLAS_CORETYPE");   /* only this choice: nothing else reads it from us */
}

void blas_choose_kernels(void) {
    blas_one_thread();
    choose_core();
    choose_tiles();
}
