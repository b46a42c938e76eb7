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

int cpu_binary_split(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out,
                     DType out_dt, int64_t n) {
    bool math = op == OP_POW || op == OP_ATAN2 || op == OP_MOD || op == OP_FLOOR_DIVIDE;
    int64_t parts = pool_parts(n, POOL_BLOCK);
    int width = pool_width(parts, math ? n * POOL_MATH_COST : n);
    if (width < 2) return cpu_binary(op, ct, a, sa, b, sb, out, n);
    Split s = { op, ct, a, b, sa, sb, out, dtype_size(ct), dtype_size(out_dt), n };
    return pool_run(parts, width, binary_part, &s);
}
