/* rows.c - the row-group pass (opt.h's opt_row_group): a run of instructions over the rows of
 * one [..., C] float tensor shape G, made of
 *   - elementwise ops giving G (operands G, a row vector [C], one value per row [..., 1], numbers),
 *   - elementwise ops giving one value per row, Gr = G with a last axis of 1 (operands Gr, numbers),
 *   - reductions of a G operand over its last axis with keepdims, giving Gr (sum, mean, max, min,
 *     prod, var, std, norm, logsumexp: the ops reduce.c computes with its row kernel),
 * with at least one reduction, becomes one FUSED instruction. A layernorm (mean, x - m, mean of
 * the squares, rsqrt, scale and shift) then reads x once instead of three times, and its
 * intermediates of shape G live in a band of rows in cache, not in memory.
 *
 * The steps are a fused group's; a reduction step's b is FUSED_NONE. A result of shape G that
 * only later steps read is the group's temporary (dst = its step's index); results of shape Gr
 * stay registers (one value per row: nothing to save). The bits: each reduction is the row
 * kernel eager calls on the same row values; each elementwise step is the kernel a fused group
 * calls (ops/cpu/chain.h), a value per row read as eager's broadcast reads it. */
#include <string.h>
#include "opt_impl.h"
#include "mem.h"

/* How instruction `in` can join a row group of shape G and dtype dt. */
typedef enum { RS_NO, RS_FULL, RS_ROW, RS_REDUCE } RowStep;

static bool row_reduction(OpCode op) {
    switch (op) {
    case OP_SUM: case OP_MEAN: case OP_MAX: case OP_MIN: case OP_PROD: case OP_VAR: case OP_STD: case OP_NORM:
    case OP_LOGSUMEXP:
        return true;
    default: return false;
    }
}

/* G with a last axis of 1: one value per row. */
static Shape per_row(const Shape *g) {
    Shape s = *g;
    s.d[s.ndim - 1] = 1;
    return s;
}

/* A reduction over the last axis of a G operand, kept: its result is G with a last axis of 1
 * (C > 1, so no other reduction gives that shape but one of the same rows: axes of size 1
 * besides, which leave every row's values and their order as they are). */
static RowStep reduce_step(const Graph *g, const Ins *in, const Shape *G, DType dt) {
    if (in->op != I_OP || !row_reduction((OpCode)in->aux) || in->nargs != 1 || in->nres != 1 || in->args[0] < 0)
        return RS_NO;
    const RegInfo *x = &g->regs[in->args[0]], *d = &g->regs[in->dst];
    Shape gr = per_row(G);
    if (x->kind != R_TENSOR || x->dtype != dt || d->dtype != dt || !shape_equal(&x->shape, G) || !shape_equal(&d->shape, &gr))
        return RS_NO;
    return RS_REDUCE;
}

/* An elementwise op of a fused group's kind (opt.c's fusable) giving G or Gr. */
static RowStep ew_step(const Graph *g, const Ins *in, const Shape *G, DType dt) {
    int ta, tb, scalar;
    bool num_left;
    if (!ew_operands(g, in, &ta, &tb, &scalar, &num_left)) return RS_NO;
    if (!(op_info[in->aux].flags & F_FUSE) || op_info[in->aux].kind == K_COMPARE) return RS_NO;
    if (in->attrs && in->attrs->i[0] != 0) return RS_NO;   /* round(x, decimals): not a plain kernel */
    const RegInfo *d = &g->regs[in->dst];
    Shape gr = per_row(G);
    bool full = shape_equal(&d->shape, G);
    if (d->dtype != dt || (!full && !shape_equal(&d->shape, &gr))) return RS_NO;
    int ops[2] = { ta, tb }, bcast = 0;
    for (int k = 0; k < 2; k++) {
        if (ops[k] < 0) continue;
        const RegInfo *o = &g->regs[ops[k]];
        if (o->kind != R_TENSOR || o->dtype != dt) return RS_NO;
        if (!full) {   /* one value per row: operands of that shape only */
            if (!shape_equal(&o->shape, &gr)) return RS_NO;
            continue;
        }
        FusedLayout l = opt_fused_layout(&o->shape, G);
        if (l == FUSED_NO) return RS_NO;
        bcast += l != FUSED_FULL;
    }
    /* as in a fused group: a broadcast operand beside one of G (a unary's would not give G) */
    if (full && (bcast > 1 || (bcast == 1 && tb < 0))) return RS_NO;
    return full ? RS_FULL : RS_ROW;
}

static RowStep row_step(const Graph *g, const Ins *in, const Shape *G, DType dt) {
    if (in->op != I_OP || graph_ins_runtime(g, in)) return RS_NO;
    RowStep s = reduce_step(g, in, G, dt);
    return s != RS_NO ? s : ew_step(g, in, G, dt);
}

/* The shape and dtype of a group that instruction i can begin: a reduction's operand's, or an
 * elementwise op's result; rows of at least ROWS_MIN_C f32 or f64 elements (the chain's). */
static bool group_start(const Graph *g, const Ins *in, Shape *G, DType *dt) {
    if (in->op != I_OP || in->nres > 1 || in->nargs < 1 || in->args[0] < 0) return false;
    const RegInfo *x = row_reduction((OpCode)in->aux) ? &g->regs[in->args[0]] : &g->regs[in->dst];
    if (x->kind != R_TENSOR || (x->dtype != DT_F32 && x->dtype != DT_F64) || x->shape.ndim < 1 || shape_count(&x->shape) < 1 ||
        x->shape.d[x->shape.ndim - 1] < ROWS_MIN_C)
        return false;
    *G = x->shape;
    *dt = x->dtype;
    RowStep s = row_step(g, in, G, *dt);
    return s == RS_FULL || s == RS_REDUCE;
}

/* The end of the group that instructions [i, j) can form: a step may not read a register it or
 * a later step writes (it would see this run's rows, or a buffer chosen for the new value). */
static int first_conflict(const Graph *g, int i, int j) {
    for (int k = i; k < j; k++) {
        int r[16], q = reads(&g->code[k], r);
        for (int x = 0; x < q; x++)
            for (int w = k; w < j; w++)
                if (g->code[w].dst == r[x]) return k;
    }
    return j;
}

/* Instructions [i, j) as one row group of shape G: the steps, and bytes of G no one stores. */
static FusedStep *group_steps(Graph *g, int i, int j, const Shape *G, DType dt, const int *uses, const int *defs,
                              int64_t *saved) {
    int n = j - i, last = g->code[j - 1].dst;
    int *local = mem_calloc((size_t)g->nregs + 1, sizeof(int)), *step_of = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    for (int k = i; k < j; k++) {
        int r[4], m = reads(&g->code[k], r);
        for (int q = 0; q < m; q++) local[r[q]]++;
    }
    for (int r = 0; r < g->nregs; r++) step_of[r] = -1;
    FusedStep *steps = mem_calloc((size_t)n, sizeof(FusedStep));
    for (int k = i; k < j; k++) {
        Ins *in = &g->code[k];
        FusedStep *s = &steps[k - i];
        int ta, tb = -1;
        s->op = (OpCode)in->aux;
        s->scalar_reg = -1;
        if (row_reduction(s->op)) ta = in->args[0];
        else ew_operands(g, in, &ta, &tb, &s->scalar_reg, &s->num_left);
        s->a = step_of[ta] >= 0 ? step_of[ta] : -ta - 1;
        s->b = tb >= 0 ? (step_of[tb] >= 0 ? step_of[tb] : -tb - 1) : FUSED_NONE;
        bool internal = in->dst != last && defs[in->dst] == 1 && uses[in->dst] == local[in->dst] &&
                        shape_equal(&g->regs[in->dst].shape, G);
        s->dst = internal ? k - i : -in->dst - 1;
        step_of[in->dst] = internal ? k - i : -1;
        if (internal) *saved += shape_count(G) * (int64_t)dtype_size(dt);
    }
    mem_free(local);
    mem_free(step_of);
    return steps;
}

int pass_rows(Graph *g) {
    int *uses = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    bool *starts = jump_targets(g), *dead = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    count_uses(g, uses, defs);
    int made = 0;
    for (int i = 0; i < g->ncode; i++) {
        Shape G;
        DType dt;
        if (!group_start(g, &g->code[i], &G, &dt)) continue;
        int j = i + 1, reductions = row_step(g, &g->code[i], &G, dt) == RS_REDUCE;
        for (RowStep s; j < g->ncode && !starts[j] && (s = row_step(g, &g->code[j], &G, dt)) != RS_NO; j++)
            reductions += s == RS_REDUCE;
        if (reductions == 0) {   /* it saves a pass only around a reduction; none starts inside */
            i = j - 1;
            continue;
        }
        j = first_conflict(g, i, j);
        reductions = 0;
        for (int k = i; k < j; k++) reductions += row_step(g, &g->code[k], &G, dt) == RS_REDUCE;
        if (reductions == 0 || j - i < 2) continue;
        int64_t saved = 0;
        FusedStep *steps = group_steps(g, i, j, &G, dt, uses, defs, &saved);
        Ins *first = &g->code[i];
        SrcLoc loc = g->code[j - 1].loc;
        Source *src = g->code[j - 1].src;
        const CallFrame *frame = g->code[j - 1].frame;
        fuse_into(g, dead, i, j, I_FUSED, g->code[j - 1].dst);
        first->a = first->b = first->c = -1;
        first->aux = g->fused_groups + made;
        first->steps = steps;
        first->nsteps = j - i;
        first->shape = G;
        first->loc = loc;
        first->src = src;
        first->frame = frame;
        g->bytes_saved += saved;
        made++;
        i = j - 1;
    }
    compact(g, dead);
    mem_free(starts);
    mem_free(dead);
    mem_free(uses);
    mem_free(defs);
    g->fused_groups += made;
    return made;
}
