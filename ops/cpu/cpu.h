/* cpu.h - the CPU library: what the CPU kernel files of ops/cpu/ share, and the kernels the ops
 * core's host paths and vm/run/vm.c (the CPU executor) call. lang/ and vm/ otherwise use tops.h. */
#ifndef TSL_CPU_H
#define TSL_CPU_H
#include <stdint.h>
#include "tops.h"
#include "ew_cpu.h"

/* math.c: array math through SLEEF vectors (x and y may alias). EW_SLEEF_UNARY (generated
 * from ops/ew.def's "vec: sleef(...)" lines) lists the functions that come from SLEEF:
 * F(name, accuracy, nan bits, range). Both the AVX2 and the
 * AVX-512 path call SLEEF's deterministic (finz) variant with the accuracy given here (u10:
 * 1.0 ULP, where SLEEF has it; tanh u35), so each element's bits depend on its value only,
 * not on the vector width or its neighbours (the plain variants pick sin/cos/tan's range
 * reduction for the whole vector). nan_canon: SLEEF's AVX-512 log leaves other NaN bits
 * than its AVX2 log (always +NaN), so that path writes +NaN for every NaN. libm_past: SLEEF
 * returns inf where the result is still finite (sinh, cosh past |x| 88.7 / 709.8, asinh and
 * acosh past sqrt(max), log1p past 1e38 / 1e307); math.c computes those elements with libm. */
#define VM_DECLARE(NAME, ULP, NANBITS, RANGE)                      \
    void vm_##NAME##_f32(const float *x, float *y, int64_t n);     \
    void vm_##NAME##_f64(const double *x, double *y, int64_t n);
EW_SLEEF_UNARY(VM_DECLARE)
VM_DECLARE(sqrt, exact, nan_keep, sleef_only)
VM_DECLARE(sigmoid, u10, nan_keep, sleef_only)   /* 1 / (1 + exp(-x)) with the exp above */
#undef VM_DECLARE
/* out[i] = atan2(y[i*sy], x[i*sx]), strides 0 or 1 (out may alias y or x); SLEEF finz u10. */
void vm_atan2_f32(const float *y, int64_t sy, const float *x, int64_t sx, float *out, int64_t n);
void vm_atan2_f64(const double *y, int64_t sy, const double *x, int64_t sx, double *out, int64_t n);
void vm_force_avx2(int on);   /* tests: compare the AVX2 and AVX-512 paths */
/* chain512.c: the f32/f64 kernels of cpu_binary (+ - * /, maximum, minimum) and cpu_unary
 * (neg, abs, relu, sqrt, the SLEEF functions but the libm_past ones) written for AVX-512F;
 * cpu_binary and cpu_unary, and every step of a fused chain, call them when the processor
 * has it (cpu_has_avx512), so eager and static run the very same instructions on each
 * element (x86 leaves a NaN operand's payload and sign in the result by operand order, which
 * a compiler's loops need not keep). False when the op or dtype is not theirs. */
bool cpu_binary_avx512(OpCode op, DType dt, const void *a, int64_t sa, const void *b, int64_t sb, void *out, int64_t n);
bool cpu_unary_avx512(OpCode op, DType dt, const void *x, void *y, int64_t n);
bool cpu_has_avx512(void);

/* ew.c: kernels with a parameter or an operand the generic entry points do not carry.
 * cpu_round_decimals: NumPy's around to `decimals` places (dst may be src); 0. */
int cpu_round_decimals(DType dt, const void *src, void *dst, int64_t n, int64_t decimals);
/* NumPy's power_of_ten (used by np.around): exact up to 10^22, then repeated
 * multiplication by 10, which from 10^25 on is not the correctly rounded 10^n; rounding
 * multiplies by this very number, so it is reproduced (the GPU's round too). Stops once
 * infinite. */
double cpu_power_of_ten(uint64_t n);
/* How an i64 element compares with a number x that is NaN, outside i64's range, or
 * between two integers: a[i] (op) x is a[i] (op') k for the integer k = floor(x), or a
 * constant; CMP_EXACT with k = x when x is an integer in range. Exact: nothing is rounded.
 * num_left (x (op) a[i]) swaps *op to a[i] (op) x first. The GPU plans the same way. */
typedef enum { CMP_FALSE, CMP_TRUE, CMP_LE_K, CMP_GT_K, CMP_EXACT } CmpPlan;
CmpPlan cpu_compare_plan(OpCode *op, double x, bool num_left, int64_t *k);
/* a[i] (op) x for a comparison op, exactly (no rounding of x or a[i]); num_left: x (op)
 * a[i]. 0, or -1 (error set) for an op that is not a comparison. */
int cpu_compare_i64_number(OpCode op, const int64_t *a, double x, bool num_left, uint8_t *out,
                           int64_t n);

/* ew.c: whether the unary op computes through math.c's SLEEF functions for dtype dt (costly
 * per element: the thread pool splits it sooner). */
bool cpu_unary_is_math(OpCode op, DType dt);
/* split.c: cpu_unary and cpu_binary (tops.h) over n contiguous elements, split over the
 * thread pool when n is large (out_dt: the result's dtype); the same bits as one call. */
int cpu_unary_split(OpCode op, DType dt, const void *src, void *dst, DType out_dt, int64_t n);
int cpu_binary_split(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out,
                     DType out_dt, int64_t n);

/* Broadcast iteration: output shape with per-input strides (in elements, 0 where the
 * input is broadcast), adjacent dimensions merged where possible. */
typedef struct {
    int nd;
    int64_t shape[TSL_MAX_RANK];
    int64_t stride[3][TSL_MAX_RANK];
} BIter;
void biter_init(BIter *it, const Shape *out, const Shape *const *ins, int nin);
/* Calls fn(offsets, count) for each innermost run; offsets[k] is input k's element offset,
 * and inner strides are it->stride[k][it->nd-1]. Returns 0, or fn's first non-zero. */
typedef int (*BRunFn)(void *ctx, const int64_t *off, int64_t out_off, int64_t n);
int biter_run(const BIter *it, int nin, BRunFn fn, void *ctx);
/* split.c: biter_run over the thread pool when the output is large: parts of POOL_BLOCK output
 * elements, which may cut a run into pieces (fn must give each element the same bits in any
 * piece, touch only its piece of the output, and neither allocate nor keep state: it runs on
 * the pool's workers). cost: work per element (1, or POOL_MATH_COST for a SLEEF-priced op). */
int biter_run_split(const BIter *it, int nin, BRunFn fn, void *ctx, int64_t cost);
bool cpu_binary_is_math(OpCode op);

/* The CPU kernel of each op family (the impl column of ops.def), reached through the CPU's
 * entry in the device registry (kernels.c). out[k] already has the dtype and shape that
 * infer_<impl> gave, except for F_VIEW and F_DYNAMIC ops, whose kernels allocate out[k].
 * 0, or -1 with the message set by op_fail(). */
/* Before a collective: every rank's op, attribute, dtype, device and shape agree (gathered
 * over MPI), or -1 with an error naming this rank's call and the first that differs
 * (ops/cpu/collective.c; the GPU's collectives, ops/gpu/gpu_dist.c, call it too). */
int cpu_dist_agree(const OpCall *c, const Tensor *t);
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) int cpu_##impl(const OpCall *c, Tensor **out);
#include "ops.def"
#undef OP

/* Operand a as a tensor of dtype dt: the operand itself, a converted copy (*tmp, released
 * by the caller), or a 0-d scalar built in *box (no allocation). */
typedef struct {
    Tensor t;
    TBuf buf;
    double storage;
} ScalarBox;
const Tensor *operand_as(const OpArg *a, DType dt, Tensor **tmp, ScalarBox *box);

/* axis.c: pad's fill value (c's operand 1, a number, a CPU tensor or none) converted to dt,
 * its bytes in v, with the CPU's errors (the GPU's pad uses it too): 0 or -1. */
int cpu_pad_value(const OpCall *c, DType dt, unsigned char *v);

/* ---------- the CPU library ----------
 * Kernels and the helpers they share, on CPU tensors (the CPU executor of vm/run/vm.c calls them
 * too). Functions named _into write into a tensor the caller provides with the result's dtype
 * and shape (which is not an operand unless said). */

/* The elementwise kernels on contiguous runs (fused groups call them on chunks; each
 * element gets the same bits in any chunk). cpu_binary: a and b in dtype ct with strides 0
 * (a scalar) or 1; out may be a or b. */
int cpu_unary(OpCode op, DType dt, const void *src, void *dst, int64_t n);
int cpu_binary(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out, int64_t n);

int op_reduce_into(OpCode op, const Tensor *a, const int *axes, int n, bool keepdims, Tensor *r);
/* reduce.c: the row kernel every float reduction of a row calls (op over the n contiguous
 * elements at x, f32 or f64; tmp holds n elements for var, std, norm and logsumexp): a row
 * group (vm/run/exec_rows.c) reduces its rows by it, as eager does. */
double cpu_reduce_row(OpCode op, DType dt, const void *x, int64_t n, void *tmp);
/* cpu_reduce_row of OP_SUM or OP_MEAN over the squares x[i] * x[i] (each rounded to the
 * dtype), without storing them: the bits of cpu_reduce_row over the stored squares. */
double cpu_reduce_row_sq(OpCode op, DType dt, const void *x, int64_t n);
int op_softmax_into(const Tensor *a, int axis, bool log, Tensor *r);
/* The same with a's last two axes swapped when ta, b's when tb (BLAS reads them transposed:
 * no copy). */
int op_matmul_t_into(const Tensor *a, bool ta, const Tensor *b, bool tb, Tensor *out);
/* A float product of more than one row is computed in blocks of this many rows of the result,
 * each one BLAS call: a static graph's matmul epilogue (bias, activation) runs on each block
 * right after its call, while it is in cache, and gets eager's bits because eager computes the
 * same blocks. 256 rows keep B's repacking (once per call) small next to the block's work. */
#define MATMUL_BLOCK_ROWS 256
/* cpu_matmul_rows's `trans` bits (also an EPILOGUE instruction's aux): a is stored [k, m], b
 * is stored [n, k]; BLAS reads them transposed. */
enum { MM_TRANS_A = 1, MM_TRANS_B = 2 };
/* Rows [r0, r0 + rows) of the f32/f64 product c[m, n] = a[m, k] @ b[k, n] (stored transposed as
 * `trans` says), written to c0 with rows n elements apart: one block of op_matmul_t_into's
 * (m == 1: gemv), with the bits of one BLAS call, split across the thread pool by rows or by
 * columns when large (linalg.c, "Rows or columns on the thread pool"). Safe on any thread. */
void cpu_matmul_rows(DType dt, const void *a, int trans, const void *b, void *c0, int64_t m, int64_t k, int64_t n,
                     int64_t r0, int64_t rows);
/* How cpu_matmul_rows cuts such a block of `rows` rows for several threads, from the shape and
 * the BLAS kernel set only: one call, ranges of rows, or ranges of columns, each range a multiple
 * of *grain and at least *least rows or columns (0 for one call). */
typedef enum { MM_ONE_CALL, MM_BY_ROWS, MM_BY_COLS } MatmulCut;
MatmulCut cpu_matmul_cut(DType dt, int64_t m, int64_t k, int64_t n, int64_t rows, int64_t *least, int64_t *grain);
/* Helpers that make their result: a converted copy (NaN, inf or out of range to i64 is an
 * error), a permuted copy (perm NULL: reversed), a broadcast copy. */
Tensor *op_astype(const Tensor *a, DType dt);
Tensor *op_transpose(const Tensor *a, const int *perm, int n);
Tensor *op_broadcast_to(const Tensor *a, const Shape *s);
int op_astype_into(const Tensor *a, Tensor *r);
int op_transpose_into(const Tensor *a, const int *perm, int n, Tensor *r);
void op_broadcast_into(const Tensor *a, Tensor *r);

/* Indexing (NumPy basic and advanced), on CPU tensors. */
Tensor *op_index(const Tensor *a, const IndexItem *idx, int n);
int op_index_into(const Tensor *a, const IndexItem *idx, int n, Tensor *out);   /* out must not be a */
/* A copy of `a` with the indexed elements set from `v` (broadcast to the indexed shape). */
Tensor *op_index_set(const Tensor *a, const IndexItem *idx, int n, const Tensor *v);

/* Draws from tops.h's random stream into a tensor of the right dtype (f32; i64 for ints, hi > lo). */
void rng_fill_uniform(Tensor *r);
void rng_fill_normal(Tensor *r);
void rng_fill_int(Tensor *r, int64_t lo, int64_t hi);

/* Comparison. */
bool cpu_same_bits(const Tensor *a, const Tensor *b);              /* dtype, shape, bits */
int op_allclose(const Tensor *a, const Tensor *b, double rtol, double atol);  /* 1/0, -1 err */

#endif
