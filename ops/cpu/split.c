/* split.c - the elementwise kernels over large contiguous tensors, split over the thread
 * pool (ops/pool.h) in POOL_BLOCK-element parts.
 *
 * Each element's arithmetic is its own (the SLEEF functions give every element the same bits
 * in any piece of an array, ops/cpu/math.c), so the parts give the bits of one serial call. */
#include "cpu.h"
#include "pool.h"

typedef struct {
    OpCode op;
    DType dt;
    const char *a, *b;
    int64_t sa, sb;
    char *out;
    size_t esz, osz;   /* operand and result element sizes */
    int64_t n;
} Split;

static int64_t part_len(const Split *s, int64_t p) {
    int64_t left = s->n - p * POOL_BLOCK;
    return left < POOL_BLOCK ? left : POOL_BLOCK;
}

static int unary_part(void *ud, int64_t p, int slot) {
    (void)slot;
    Split *s = ud;
    int64_t o = p * POOL_BLOCK;
    return cpu_unary(s->op, s->dt, s->a + o * (int64_t)s->esz, s->out + o * (int64_t)s->osz, part_len(s, p));
}

static int binary_part(void *ud, int64_t p, int slot) {
    (void)slot;
    Split *s = ud;
    int64_t o = p * POOL_BLOCK;
    return cpu_binary(s->op, s->dt, s->a + o * s->sa * (int64_t)s->esz, s->sa, s->b + o * s->sb * (int64_t)s->esz,
                      s->sb, s->out + o * (int64_t)s->osz, part_len(s, p));
}

int cpu_unary_split(OpCode op, DType dt, const void *src, void *dst, DType out_dt, int64_t n) {
    int64_t parts = pool_parts(n, POOL_BLOCK);
    int width = pool_width(parts, cpu_unary_is_math(op, dt) ? n * POOL_MATH_COST : n);
    if (width < 2) return cpu_unary(op, dt, src, dst, n);
    Split s = { op, dt, src, NULL, 1, 0, dst, dtype_size(dt), dtype_size(out_dt), n };
    return pool_run(parts, width, unary_part, &s);
}

/* Binary ops whose kernel costs about a SLEEF function per element. */
bool cpu_binary_is_math(OpCode op) { return op == OP_POW || op == OP_ATAN2 || op == OP_MOD || op == OP_FLOOR_DIVIDE; }

int cpu_binary_split(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out,
                     DType out_dt, int64_t n) {
    bool math = cpu_binary_is_math(op);
    int64_t parts = pool_parts(n, POOL_BLOCK);
    int width = pool_width(parts, math ? n * POOL_MATH_COST : n);
    if (width < 2) return cpu_binary(op, ct, a, sa, b, sb, out, n);
    Split s = { op, ct, a, b, sa, sb, out, dtype_size(ct), dtype_size(out_dt), n };
    return pool_run(parts, width, binary_part, &s);
}

/* ---------- broadcast iteration ---------- */

typedef struct {
    const BIter *it;
    int nin;
    BRunFn fn;
    void *ctx;
    int64_t total;
} BSplit;

/* Elements [p * POOL_BLOCK, ...) of the output, in pieces of the innermost runs (a part may
 * start and end inside one): fn sees each piece as it would a whole run of biter_run. */
static int biter_part(void *ud, int64_t p, int slot) {
    (void)slot;
    const BSplit *s = ud;
    const BIter *it = s->it;
    int last = it->nd - 1;
    int64_t inner = it->shape[last], begin = p * POOL_BLOCK, end = begin + POOL_BLOCK;
    if (end > s->total) end = s->total;
    int64_t idx[TSL_MAX_RANK] = { 0 }, off[3] = { 0, 0, 0 }, run = begin / inner, pos = begin % inner;
    for (int d = last - 1; d >= 0; d--) {   /* the run's index, its inputs' offsets */
        idx[d] = run % it->shape[d];
        run /= it->shape[d];
        for (int k = 0; k < s->nin; k++) off[k] += idx[d] * it->stride[k][d];
    }
    for (int64_t out_off = begin; out_off < end;) {
        int64_t n = inner - pos < end - out_off ? inner - pos : end - out_off, at[3];
        for (int k = 0; k < s->nin; k++) at[k] = off[k] + pos * it->stride[k][last];
        int rc = s->fn(s->ctx, at, out_off, n);
        if (rc) return rc;
        out_off += n;
        pos = 0;
        for (int d = last - 1; d >= 0; d--) {   /* the next run, as biter_run steps */
            idx[d]++;
            for (int k = 0; k < s->nin; k++) off[k] += it->stride[k][d];
            if (idx[d] < it->shape[d]) break;
            for (int k = 0; k < s->nin; k++) off[k] -= it->stride[k][d] * it->shape[d];
            idx[d] = 0;
        }
    }
    return 0;
}

int biter_run_split(const BIter *it, int nin, BRunFn fn, void *ctx, int64_t cost) {
    int64_t total = 1;
    for (int d = 0; d < it->nd; d++) total *= it->shape[d];
    int64_t parts = pool_parts(total, POOL_BLOCK);
    int width = pool_width(parts, total * cost);
    if (width < 2) return biter_run(it, nin, fn, ctx);
    BSplit s = { it, nin, fn, ctx, total };
    return pool_run(parts, width, biter_part, &s);
}
