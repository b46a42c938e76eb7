/* takes.c - the optimizer pass `takes`: a differentiated index read directly.
 *
 * Under grad, t[...] records take(t, positions) with positions = the same index applied to an
 * arange of t's shape (vm/compile/cexpr.c's index_tracked), so that the backward is take's
 * rule, a scatter_add (as eager code records it, lang/autograd.c). The forward value needs no
 * positions: take(t, arange[...]) reads exactly t[...], element for element, so the take
 * becomes that index instruction (a copy or a view, no i64 positions read). The positions stay
 * for the backward when it uses them. Same bits: both copy t's elements.
 *
 * The backward of such a take is scatter_add(zeros, positions, g), 0 + g at the positions: a
 * fresh buffer of zeros and a scatter through i64 positions each. Two rewrites keep its bits
 * (0 + g is never -0, so adding +0 to it changes nothing):
 *  - positions 0, 1, 2, ... over the whole of zeros (y[0] of a [1, ...] y): add(g, zeros),
 *    the same sums element for element, which fusion can join;
 *  - add(scatter_add(Z, P1, g1), scatter_add(Z, P2, g2)) with P1 and P2 disjoint (the
 *    gradient of qkv from qkv[0], qkv[1], qkv[2]): scatter_add(scatter_add(Z, P1, g1), P2, g2),
 *    one buffer of zeros and no add; a longer sum chains the same way. */
#include <string.h>
#include "opt_impl.h"
#include "opargs.h"
#include "tops.h"

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

/* Whether register r holds a float constant of +0.0 bits only. */
static bool zeros_const(const Graph *g, int r, const int *def_at) {
    if (r < 0 || def_at[r] < 0 || g->code[def_at[r]].op != I_TCONST) return false;
    const Tensor *k = g->consts[g->code[def_at[r]].aux];
    if (!dtype_is_float(k->dtype)) return false;
    const unsigned char *b = k->data;
    for (size_t i = 0; i < (size_t)k->size * dtype_size(k->dtype); i++)
        if (b[i]) return false;
    return true;
}

/* The i64 positions register r holds, computed now (a new tensor), when it is an index
 * without run-time parts of an i64 constant; else NULL. */
static Tensor *known_positions(Graph *g, int r, const int *def_at) {
    if (r < 0 || def_at[r] < 0) return NULL;
    const Ins *ix = &g->code[def_at[r]];
    if (ix->op != I_INDEX || ix->rt || ix->a < 0 || def_at[ix->a] < 0 || g->code[def_at[ix->a]].op != I_TCONST) return NULL;
    for (int k = 0; k < ix->nargs; k++)
        if (ix->args[k] >= 0) return NULL;
    for (int k = 0; k < ix->nidx; k++)
        if (ix->idx[k].kind == IDX_TENSOR) return NULL;
    Tensor *k = g->consts[g->code[def_at[ix->a]].aux];
    if (k->dtype != DT_I64) return NULL;
    return tensor_index(k, ix->idx, ix->nidx, NULL, false);   /* NULL (out of range): not taken */
}

/* A scatter_add(zeros, positions, g) the rewrites may take: its positions (a new tensor) when
 * they are known, distinct and in range, else NULL. */
static Tensor *zeros_scatter(Graph *g, const Ins *in, const int *def_at, const int *defs) {
    if (in->op != I_OP || in->aux != OP_SCATTER_ADD || in->nargs != 3 || in->rt || defs[in->dst] != 1) return NULL;
    int z = in->args[0], v = in->args[2];
    const RegInfo *d = &g->regs[in->dst];
    if (v < 0 || g->regs[v].kind != R_TENSOR || g->regs[v].dtype != d->dtype || !zeros_const(g, z, def_at) ||
        g->regs[z].dtype != d->dtype)
        return NULL;
    Tensor *p = known_positions(g, in->args[1], def_at);
    if (!p || p->size != shape_count(&g->regs[v].shape)) return tensor_release(p), NULL;
    int64_t n = shape_count(&d->shape);
    bool *seen = mem_calloc((size_t)n + 1, sizeof(bool)), ok = true;
    const int64_t *x = p->data;
    for (int64_t i = 0; i < p->size && ok; i++) {
        ok = x[i] >= 0 && x[i] < n && !seen[x[i]];
        if (ok) seen[x[i]] = true;
    }
    mem_free(seen);
    if (!ok) tensor_release(p), p = NULL;
    return p;
}

/* Scatter i (into zeros z) covers the whole of z in order and g lines up with it element for
 * element: it becomes add(g, z). */
static bool scatter_as_add(Graph *g, Ins *in, const Tensor *pos) {
    int z = in->args[0], v = in->args[2];
    const int64_t *x = pos->data;
    Shape b;
    if (pos->size != shape_count(&g->regs[z].shape) || shape_broadcast(&g->regs[v].shape, &g->regs[z].shape, &b, "+") ||
        !shape_equal(&b, &g->regs[z].shape))
        return false;
    for (int64_t i = 0; i < pos->size; i++)
        if (x[i] != i) return false;
    in->aux = OP_ADD;
    in->args[0] = v;
    in->args[1] = z;
    in->nargs = 2;
    memset(in->attrs, 0, sizeof *in->attrs);
    opargs_attrs_init(OP_ADD, in->attrs);
    return true;
}

/* Whether two scatters' positions share none (both distinct, within n). */
static bool disjoint(const Tensor *p, const Tensor *q, int64_t n) {
    bool *seen = mem_calloc((size_t)n + 1, sizeof(bool)), ok = true;
    for (int64_t i = 0; i < p->size; i++) seen[((const int64_t *)p->data)[i]] = true;
    for (int64_t i = 0; i < q->size && ok; i++) ok = !seen[((const int64_t *)q->data)[i]];
    mem_free(seen);
    return ok;
}

/* The scatters into zeros first (their positions in pos[], NULL for others), then sums of two
 * of them with disjoint positions chained: add(s1, s2) becomes scatter_add(s1, P2, g2) when s2
 * has no other reader; the sum's positions are both (a new tensor), so a longer sum chains on. */
static int scatter_rewrites(Graph *g, const int *def_at, const int *uses, const int *defs) {
    Tensor **pos = mem_calloc((size_t)g->nregs + 1, sizeof(Tensor *));
    int made = 0;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        Tensor *p = zeros_scatter(g, in, def_at, defs);
        if (p && scatter_as_add(g, in, p)) {
            tensor_release(p);
            made++;
            continue;
        }
        if (p) {
            pos[in->dst] = p;
            in->cannot_fail = true;   /* its positions are checked: dce may drop it once chained */
            continue;
        }
        if (in->op != I_OP || in->aux != OP_ADD || in->nargs != 2 || in->rt || defs[in->dst] != 1) continue;
        int x = in->args[0], y = in->args[1];
        if (x < 0 || y < 0 || !pos[x] || !pos[y] || g->regs[x].dtype != g->regs[in->dst].dtype ||
            !shape_equal(&g->regs[x].shape, &g->regs[in->dst].shape) || !shape_equal(&g->regs[y].shape, &g->regs[x].shape))
            continue;
        if (uses[y] != 1 && uses[x] == 1) {   /* the one read only here goes (x + y is y + x, bit for bit) */
            int t = x;
            x = y;
            y = t;
        }
        const Ins *sy = &g->code[def_at[y]];
        if (uses[y] != 1 || sy->op != I_OP || sy->aux != OP_SCATTER_ADD ||
            !disjoint(pos[x], pos[y], shape_count(&g->regs[x].shape)))
            continue;
        Tensor *both = tensor_new(DT_I64, &(Shape){ 1, { pos[x]->size + pos[y]->size } });
        if (!both) continue;
        memcpy(both->data, pos[x]->data, sizeof(int64_t) * (size_t)pos[x]->size);
        memcpy((int64_t *)both->data + pos[x]->size, pos[y]->data, sizeof(int64_t) * (size_t)pos[y]->size);
        pos[in->dst] = both;
        int *args = mem_alloc(sizeof(int) * 3);
        args[0] = x;
        args[1] = sy->args[1];
        args[2] = sy->args[2];
        mem_free(in->args);
        in->args = args;
        in->nargs = 3;
        in->aux = OP_SCATTER_ADD;
        in->cannot_fail = true;
        memset(in->attrs, 0, sizeof *in->attrs);
        opargs_attrs_init(OP_SCATTER_ADD, in->attrs);
        made++;   /* scatter y is dead now: dce removes it (cannot_fail) */
    }
    for (int r = 0; r < g->nregs; r++) tensor_release(pos[r]);
    mem_free(pos);
    return made;
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
    made += scatter_rewrites(g, def_at, uses, defs);
    mem_free(uses);
    mem_free(defs);
    mem_free(def_at);
    return made;
}
