/* chain.c - a fused elementwise chain, block by block (chain.h): the block loop, and the
 * path that runs each step through its op's kernel (any processor; on AVX-512F, chain512.c
 * runs the cheap steps itself and comes back here for the rest). */
#include "chain.h"
#include <string.h>
#include "cpu.h"

/* An operand's first element in this block, and its stride (0: one value, broadcast). */
static const char *arg_at(const ChainArg *a, char *scratch, size_t esz, int64_t at,
                          int64_t *stride) {
    *stride = a->kind != CHAIN_SCALAR;
    if (a->kind == CHAIN_TEMP) return scratch + (size_t)a->temp * CHAIN_BYTES;
    if (a->kind == CHAIN_ARRAY) return (const char *)a->data + at * (int64_t)esz;
    return a->data;
}

int cpu_chain_step(const ChainStep *s, DType dt, int64_t at, int64_t len, void *scratch) {
    size_t esz = dtype_size(dt);
    char *out = s->temp >= 0 ? (char *)scratch + (size_t)s->temp * CHAIN_BYTES
                             : (char *)s->out + at * (int64_t)esz;
    int64_t sa, sb;
    const char *a = arg_at(&s->in[0], scratch, esz, at, &sa);
    if (s->nin == 1) return cpu_unary(s->op, dt, a, out, len);
    const char *b = arg_at(&s->in[1], scratch, esz, at, &sb);
    return cpu_binary(s->op, dt, a, sa, b, sb, out, len);
}

static bool arith(const ChainStep *s) {
    return s->nin == 2 &&
           (s->op == OP_ADD || s->op == OP_SUB || s->op == OP_MUL || s->op == OP_DIV);
}

/* How many operands of steps [from, n) read temporary t. */
static int temp_reads(const ChainStep *steps, int from, int n, int t) {
    int reads = 0;
    for (int k = from; k < n; k++)
        for (int q = 0; q < steps[k].nin; q++)
            reads += steps[k].in[q].kind == CHAIN_TEMP && steps[k].in[q].temp == t;
    return reads;
}

void cpu_chain_plan(ChainStep *steps, int n) {
    for (int k = 0; k < n; k++) steps[k].pair_next = steps[k].fetch_next = false;
    if (!cpu_has_avx512()) return;
    for (int k = 0; k + 1 < n; k++) {
        ChainStep *s = &steps[k];
        if (!arith(s) || !arith(&steps[k + 1]) || s->temp < 0) continue;
        if (temp_reads(steps, k + 1, k + 2, s->temp) != 1 ||
            temp_reads(steps, k + 2, n, s->temp) != 0)
            continue;
        s->pair_next = true;
        k++; /* pairs do not overlap */
    }
    for (int k = 0; k < n; k++) {
        if (steps[k].pair_next) {
            k++;
            continue;
        }
        if (steps[k].nin == 1 && cpu_chain_math_op(steps[k].op)) {
            steps[k].fetch_next = true;
            break;
        }
    }
}

/* Whether an operand the chain reads over [0, end) is there: a temporary of the chain, an
 * array of the chain's dtype holding at least end elements, or one value of that dtype. */
static bool arg_fits(const ChainArg *a, int n, DType dt, int64_t end) {
    switch (a->kind) {
    case CHAIN_TEMP: return a->temp >= 0 && a->temp < n;   /* n counts broadcast temporaries too */
    case CHAIN_ARRAY: return a->data && a->dtype == dt && a->n >= end;
    case CHAIN_SCALAR: return a->data && a->dtype == dt;
    default: return false;
    }
}

/* The steps against the chain before a block runs: the blocks, temporaries and element
 * strides are sized for f32 or f64 (chain_block, chain512.c's lanes), and the VM builds the
 * steps from a graph, which may have come from a file. Nothing is trusted. */
static int chain_check(const ChainStep *steps, int n, int ntemps, DType dt, int64_t begin, int64_t end) {
    if (dt != DT_F32 && dt != DT_F64) {
        op_failk(ERRK_TYPE, "a fused chain of %s elements (chains are f32 or f64)", dtype_name(dt));
        return -1;
    }
    if (begin < 0 || begin > end) {
        op_fail("a fused chain over elements [%lld, %lld)", (long long)begin, (long long)end);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        const ChainStep *s = &steps[k];
        bool ok = (s->nin == 1 || s->nin == 2) && arg_fits(&s->in[0], ntemps, dt, end) &&
                  (s->nin == 1 || arg_fits(&s->in[1], ntemps, dt, end));
        ChainArg out = { s->temp >= 0 ? CHAIN_TEMP : CHAIN_ARRAY, s->temp, s->out, s->out_dtype, s->out_n };
        if (!ok || !arg_fits(&out, n, dt, end)) {
            op_failk(ERRK_TYPE, "step %d of a fused %s chain does not fit its %lld elements", k, dtype_name(dt), (long long)end);
            return -1;
        }
    }
    return 0;
}

int cpu_chain_check(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end) {
    return chain_check(steps, n, n, dt, begin, end);
}

/* A broadcast operand against the chain: its temporary after the steps' own, the chain's
 * dtype, and the elements [0, end) reads (whole rows: the row count of end, rounded up). */
static bool bcast_fits(const ChainBcast *b, int n, int nb, DType dt, int64_t end) {
    if (!b->data || b->dtype != dt || b->temp < n || b->temp >= n + nb || b->row < 1) return false;
    return b->kind == CHAIN_BCAST_ROW ? b->n >= b->row : b->kind == CHAIN_BCAST_COL && b->n >= (end + b->row - 1) / b->row;
}

/* Operand b's values for elements [at, at + len) into its temporary. */
static void bcast_fill(const ChainBcast *b, size_t esz, int64_t at, int64_t len, char *scratch) {
    char *dst = scratch + (size_t)b->temp * CHAIN_BYTES;
    const char *src = b->data;
    for (int64_t i = 0; i < len;) {
        int64_t pos = (at + i) % b->row, run = b->row - pos < len - i ? b->row - pos : len - i;
        if (b->kind == CHAIN_BCAST_ROW) {
            memcpy(dst + i * (int64_t)esz, src + pos * (int64_t)esz, (size_t)run * esz);
        } else if (esz == 4) {
            float v = ((const float *)src)[(at + i) / b->row];
            for (int64_t k = 0; k < run; k++) ((float *)dst)[i + k] = v;
        } else {
            double v = ((const double *)src)[(at + i) / b->row];
            for (int64_t k = 0; k < run; k++) ((double *)dst)[i + k] = v;
        }
        i += run;
    }
}

int cpu_chain_run(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end,
                  void *scratch) {
    return cpu_chain_run_bcast(steps, n, dt, begin, end, scratch, NULL, 0);
}

int cpu_chain_run_bcast(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end,
                        void *scratch, const ChainBcast *bc, int nb) {
    if (chain_check(steps, n, n + nb, dt, begin, end)) return -1;
    for (int k = 0; k < nb; k++)
        if (!bcast_fits(&bc[k], n, nb, dt, end)) {
            op_failk(ERRK_TYPE, "broadcast operand %d of a fused %s chain does not fit its %lld elements", k, dtype_name(dt), (long long)end);
            return -1;
        }
    bool wide = cpu_has_avx512();
    int64_t block = chain_block(dt);
    for (int64_t at = begin; at < end; at += block) {
        int64_t len = end - at < block ? end - at : block;
        for (int k = 0; k < nb; k++) bcast_fill(&bc[k], dtype_size(dt), at, len, scratch);
        if (wide) {
            int rc = cpu_chain_block512(steps, n, dt, at, len, scratch);
            if (rc) return rc;
            continue;
        }
        for (int k = 0; k < n; k++) {
            int rc = cpu_chain_step(&steps[k], dt, at, len, scratch);
            if (rc) return rc;
        }
    }
    return 0;
}
