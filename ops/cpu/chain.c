/* chain.c - a fused elementwise chain, block by block (chain.h): the block loop, and the
 * path that runs each step through its op's kernel (any processor; on AVX-512F, chain512.c
 * runs the cheap steps itself and comes back here for the rest). */
#include "chain.h"
#include "cpu.h"

int cpu_chain_step(const ChainStep *s, DType dt, int64_t at, int64_t len, void *scratch) {
    size_t esz = dtype_size(dt);
    char *out = s->temp >= 0 ? (char *)scratch + (size_t)s->temp * CHAIN_BYTES
                             : (char *)s->out + at * (int64_t)esz;
    int64_t sa, sb;
    const char *a = chain_arg_at(&s->in[0], scratch, esz, at, &sa);
    if (s->nin == 1) return cpu_unary(s->op, dt, a, out, len);
    const char *b = chain_arg_at(&s->in[1], scratch, esz, at, &sb);
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
 * array of the chain's dtype holding at least end elements, one value of that dtype, a row
 * vector of a whole row or a value for each row that [0, end) touches. */
static bool arg_fits(const ChainArg *a, int n, DType dt, int64_t end) {
    switch (a->kind) {
    case CHAIN_TEMP: return a->temp >= 0 && a->temp < n;
    case CHAIN_ARRAY: return a->data && a->dtype == dt && a->n >= end;
    case CHAIN_SCALAR: return a->data && a->dtype == dt;
    case CHAIN_ROW: return a->data && a->dtype == dt && a->row >= 1 && a->n >= a->row;
    case CHAIN_COL: return a->data && a->dtype == dt && a->row >= 1 && a->n >= (end + a->row - 1) / a->row;
    default: return false;
    }
}

/* Whether the step has an operand with an element for each of the block's: a unary's
 * operand, or one of a binary's, is not a single value (a scalar, a value per row). */
static bool one_per_element(const ChainArg *a) { return a->kind != CHAIN_SCALAR && a->kind != CHAIN_COL; }
static bool spans_block(const ChainStep *s) {
    return one_per_element(&s->in[0]) || (s->nin == 2 && one_per_element(&s->in[1]));
}

/* The steps against the chain before a block runs: the blocks, temporaries and element
 * strides are sized for f32 or f64 (chain_block, chain512.c's lanes), and the VM builds the
 * steps from a graph, which may have come from a file. Nothing is trusted. */
int cpu_chain_check(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end) {
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
        bool ok = (s->nin == 1 || s->nin == 2) && arg_fits(&s->in[0], n, dt, end) &&
                  (s->nin == 1 || arg_fits(&s->in[1], n, dt, end)) && spans_block(s);
        ChainArg out = { s->temp >= 0 ? CHAIN_TEMP : CHAIN_ARRAY, s->temp, s->out, s->out_dtype, s->out_n, 0 };
        if (!ok || !arg_fits(&out, n, dt, end)) {
            op_failk(ERRK_TYPE, "step %d of a fused %s chain does not fit its %lld elements", k, dtype_name(dt), (long long)end);
            return -1;
        }
    }
    return 0;
}

/* The row length of the chain's CHAIN_ROW and CHAIN_COL operands (0: none). A group's are
 * all its last axis; the smallest cuts blocks at every row end of any of them. */
static int64_t chain_row(const ChainStep *steps, int n) {
    int64_t row = 0;
    for (int k = 0; k < n; k++)
        for (int q = 0; q < steps[k].nin; q++) {
            const ChainArg *a = &steps[k].in[q];
            if ((a->kind == CHAIN_ROW || a->kind == CHAIN_COL) && (row == 0 || a->row < row)) row = a->row;
        }
    return row;
}

int cpu_chain_run(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end,
                  void *scratch) {
    if (cpu_chain_check(steps, n, dt, begin, end)) return -1;
    return cpu_chain_blocks(steps, n, dt, begin, end, scratch);
}

int cpu_chain_blocks(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end,
                     void *scratch) {
    bool wide = cpu_has_avx512();
    int64_t block = chain_block(dt), row = chain_row(steps, n);
    for (int64_t at = begin, len; at < end; at += len) {
        len = end - at < block ? end - at : block;
        if (row && row - at % row < len) len = row - at % row;   /* blocks end at row ends */
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
