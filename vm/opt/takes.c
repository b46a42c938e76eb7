/* takes.c - the optimizer pass `takes`: a differentiated index read directly.
 *
 * Under grad, t[...] records take(t, positions) with positions = the same index applied to an
 * arange of t's shape (vm/compile/cexpr.c's index_tracked), so that the backward is take's
 * rule, a scatter_add (as eager code records it, lang/autograd.c). The forward value needs no
 * positions: take(t, arange[...]) reads exactly t[...], element for element, so the take
 * becomes that index instruction (a copy or a view, no i64 positions read). The positions stay
 * for the backward when it uses them. Same bits: both copy t's elements. */
#include <string.h>
#include "opt_impl.h"

/* Whether tensor k holds 0, 1, 2, ... in an i64 array of the given shape. */
static bool is_iota(const Tensor *k, const Shape *shape) {
    if (k->dtype != DT_I64 || k->ndim != shape->ndim) return false;
    for (int d = 0; d < k->ndim; d++)
        if (k->shape[d] != shape->d[d]) return false;
    const int64_t *v = k->data;
    for (int64_t i = 0; i < k->size; i++)
        if (v[i] != i) return false;
    return true;
}

/* The INDEX instruction that made take's positions from an arange of t's shape, or NULL. */
static const Ins *positions_index(Graph *g, const Ins *take, const int *def_at) {
    int t = take->args[0], pos = take->args[1];
    if (t < 0 || pos < 0 || def_at[pos] < 0) return NULL;
    const Ins *ix = &g->code[def_at[pos]];
    if (ix->op != I_INDEX || ix->rt || take->rt || ix->a < 0 || def_at[ix->a] < 0) return NULL;
    for (int k = 0; k < ix->nidx; k++)
        if (ix->idx[k].kind == IDX_TENSOR) return NULL;   /* its tensor is owned by one instruction */
    const Ins *k = &g->code[def_at[ix->a]];
    if (k->op != I_TCONST || !is_iota(g->consts[k->aux], &g->regs[t].shape)) return NULL;
    return ix;
}

/* take i becomes t[...] with the index of ix. */
static void read_directly(Ins *in, const Ins *ix) {
    int t = in->args[0];
    IndexItem *items = mem_alloc(sizeof(IndexItem) * (size_t)(ix->nidx + 1));
    int *args = mem_alloc(sizeof(int) * (size_t)(ix->nargs + 1));
    memcpy(items, ix->idx, sizeof(IndexItem) * (size_t)ix->nidx);
    memcpy(args, ix->args, sizeof(int) * (size_t)ix->nargs);
    mem_free(in->args);
    mem_free(in->attrs);
    in->attrs = NULL;
    in->nres = 0;
    in->op = I_INDEX;
    in->a = t;
    in->b = in->c = -1;
    in->aux = ix->aux;
    in->imm = ix->imm;
    in->shape = ix->shape;
    in->idx = items;
    in->nidx = ix->nidx;
    in->args = args;
    in->nargs = ix->nargs;
}

int pass_takes(Graph *g) {
    int *uses = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1)), *defs = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    int *def_at = mem_alloc(sizeof(int) * (size_t)(g->nregs + 1));
    count_uses(g, uses, defs);
    for (int r = 0; r < g->nregs; r++) def_at[r] = -1;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        bool makes = in->op == I_OP || in->op == I_INDEX || in->op == I_TCONST;   /* what a take's chain is made of */
        if (makes && in->dst >= 0 && defs[in->dst] == 1) def_at[in->dst] = i;
    }
    int made = 0;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        if (in->op != I_OP || in->aux != OP_TAKE || in->nargs != 2 || defs[in->dst] != 1) continue;
        const Ins *ix = positions_index(g, in, def_at);
        if (!ix) continue;
        read_directly(in, ix);
        made++;
    }
    mem_free(uses);
    mem_free(defs);
    mem_free(def_at);
    return made;
}
