/* opt.h - the optimizer passes (vm/opt/opt.c, vm/opt/rows.c). */
#ifndef TSL_OPT_H
#define TSL_OPT_H
#include "ir.h"

#define FUSED_NONE (-1000000000)   /* a FusedStep's b when the step is unary or takes a scalar */
#define EPI_PRODUCT (-1000000001)  /* an EPILOGUE step's operand: the block of the matmul's product */
/* An EPILOGUE's aux: its matmul's transpose_a and transpose_b bits (the values of
 * cpu_matmul_rows's MM_TRANS_A and MM_TRANS_B, which the CPU hands on as they are). */
enum { EPI_TRANS_A = 1, EPI_TRANS_B = 2 };

/* How a tensor operand of an EPILOGUE step lines up with the product [m, n]: element for
 * element (its shape is [m, n]), or a row vector ([n] or [1, n]) that every row reads, as a
 * bias broadcasts. m == 1 counts as element for element. */
typedef enum { EPI_NO, EPI_FULL, EPI_ROW } EpiLayout;
static inline EpiLayout opt_epi_layout(const Shape *s, int64_t m, int64_t n) {
    if (s->ndim == 2 && s->d[0] == m && s->d[1] == n) return EPI_FULL;
    if (s->ndim == 1 && s->d[0] == n) return m == 1 ? EPI_FULL : EPI_ROW;
    if (s->ndim == 2 && s->d[0] == 1 && s->d[1] == n) return EPI_ROW;
    return EPI_NO;
}

/* How a tensor operand of a FUSED step lines up with the group's shape [..., n]: element for
 * element (its shape broadcasts to the group's without growing, the same count), a row vector
 * (n elements, its last axis n and every other 1: a bias, layernorm's weight) that every row
 * of n elements reads, or one value per row (the group's shape with a last axis of 1: a
 * reduction kept with keepdims, layernorm's mean). The chain reads them as CHAIN_ROW and
 * CHAIN_COL operands (ops/cpu/chain.h), cutting its blocks at row ends. */
typedef enum { FUSED_NO, FUSED_FULL, FUSED_ROW, FUSED_COL } FusedLayout;
static inline FusedLayout opt_fused_layout(const Shape *s, const Shape *g) {
    int64_t cs = shape_count(s), cg = shape_count(g);
    Shape bs;
    if (shape_broadcast(s, g, &bs, "fuse") || !shape_equal(&bs, g)) return FUSED_NO;
    if (cs == cg) return FUSED_FULL;
    if (g->ndim < 1 || s->ndim < 1 || cg < 1) return FUSED_NO;
    int64_t n = g->d[g->ndim - 1];
    if (s->d[s->ndim - 1] == n && cs == n) return FUSED_ROW;
    if (s->ndim == g->ndim && s->d[s->ndim - 1] == 1 && cs * n == cg) return FUSED_COL;
    return FUSED_NO;
}

/* The fusion pass lets a row vector or a value per row into a group only over rows of at
 * least this many elements: blocks end at row ends, and shorter blocks cost more in work per
 * step than keeping the data in cache saves. */
#define FUSED_ROW_MIN 128

/* A row group (vm/opt/rows.c) is a FUSED instruction over rows of Ins.shape's last axis (C
 * elements, contiguous), some of whose steps are reductions of a row with keepdims (sum, mean,
 * max, min, prod, var, std, norm, logsumexp: ops/cpu/reduce.c's row kernel), giving one value
 * per row that later steps read. Its steps are elementwise over the group's shape ([..., C],
 * operands as opt_fused_layout lines them up), elementwise over one value per row ([..., 1],
 * operands of that shape or numbers), or reductions ([..., C] to [..., 1]); a step's temporary
 * (dst >= 0) is always of the group's shape. The CPU runs it a band of rows at a time with the
 * temporaries in per-thread buffers (vm/run/exec_rows.c), so the rows are read from memory
 * once. Only the optimizer makes them: a graph file's fused groups are elementwise (export
 * compiles without them, Graph.plain_groups), and device graphs never have them. */
static inline bool opt_row_group(const Ins *in) {
    if (in->op != I_FUSED) return false;
    for (int k = 0; k < in->nsteps; k++)
        if (op_info[in->steps[k].op].kind == K_REDUCE) return true;
    return false;
}
/* Rows shorter than this stay out of row groups: a band's steps cost more to set up than the
 * one pass they save. */
#define ROWS_MIN_C 8

void opt_run(Graph *g);
/* Once per process: the words of TSL_OPT that name no pass, as lines to show (false: none). */
bool opt_env_problem(char *out, size_t n);

#endif
