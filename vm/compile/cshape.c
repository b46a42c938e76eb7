/* cshape.c - run-time shapes: values whose size the data decides (a bool-mask index x[m],
 * unique(x), a slice whose bounds the run computes: X[s:e], clamped as NumPy clamps) and what
 * static code computes from them.
 *
 * Such a register has a dimension SHAPE_RT (ops/tensor.h, "?" in dis). The VM makes its
 * value, and that of every instruction that reads or writes such a register (Ins.rt), the
 * way eager code does (op_run, tensor_index), so its shape and its checks are eager's, at
 * run time, with eager's messages. The compiler still derives what does not depend on the
 * unknown sizes: sum(pos) is 0-d, pos * 2 is [?], item(sum(pos)) a number.
 *
 * An op's result shape over unknown dimensions comes from the op's own inference (op_infer),
 * asked twice with two stand-in sizes for the unknown ones: a result dimension equal in both
 * is known, one equal to the stand-in in both is unknown, and one that is neither (it needs
 * the value: concat, reshape to a given shape) makes the code run eagerly, naming the op.
 * For elementwise ops an unknown dimension broadcast against a known one other than 1 is
 * the known one (the run checks it). The optimizer gives such registers no shared buffer and
 * fuses none of them (vm/opt/opt.c). */
#include "comp.h"

/* Two large primes no real dimension is likely to be, and no reshape divides. */
static const int64_t PROBE[2] = { 1000003, 1000033 };

bool cs_any_runtime(const AVal *ops, int n) {
    for (int k = 0; k < n; k++)
        if (ops[k].kind == AV_TENSOR && shape_is_runtime(&ops[k].shape)) return true;
    return false;
}

/* Whether op broadcasts its tensor operands together elementwise (NumPy's rules). */
static bool broadcasts(OpCode op) {
    int kind = op_def(op)->kind;
    return kind == K_UNARY || kind == K_BINARY || kind == K_COMPARE || op == OP_WHERE;
}

/* The known size an unknown dimension of operand k takes when op broadcasts: another
 * operand's known size other than 1 on the same (right-aligned) axis, else 0 (none). */
static int64_t broadcast_partner(const OpCall *call, const Shape *sh, int k, int axis) {
    int from_end = sh[k].ndim - axis;
    for (int j = 0; j < call->nin; j++) {
        if (j == k || call->in[j].kind != ARG_TENSOR || sh[j].ndim < from_end) continue;
        int64_t d = sh[j].d[sh[j].ndim - from_end];
        if (d != SHAPE_RT && d != 1) return d;
    }
    return 0;
}

/* op_infer with every unknown dimension of the operands replaced by probe (or, for a
 * broadcasting op, by the known size it meets). */
static int infer_probed(OpCall *call, const Shape *sh, int64_t probe, Shape *so, DType *dt) {
    Shape *ps = mem_alloc(sizeof(Shape) * (size_t)(call->nin + 1));
    const int64_t **dims = mem_alloc(sizeof(int64_t *) * (size_t)(call->nin + 1));   /* the caller's, put back */
    OpArg *in = (OpArg *)call->in;
    for (int k = 0; k < call->nin; k++) {
        if (in[k].kind != ARG_TENSOR) continue;
        dims[k] = in[k].dims;
        ps[k] = sh[k];
        for (int a = 0; a < ps[k].ndim; a++) {
            if (ps[k].d[a] != SHAPE_RT) continue;
            int64_t p = broadcasts(call->op) ? broadcast_partner(call, sh, k, a) : 0;
            ps[k].d[a] = p ? p : probe;
        }
        in[k].dims = ps[k].d;
    }
    int rc = op_infer(call, so, dt);
    for (int k = 0; k < call->nin; k++)
        if (in[k].kind == ARG_TENSOR) in[k].dims = dims[k];
    mem_free(dims);
    mem_free(ps);
    return rc;
}

/* op_infer, with a stand-in size for unknown dimensions (for dtypes: number_decides_dtype). */
int cs_op_infer(OpCall *call, Shape *so, DType *dt) {
    Shape *sh = mem_alloc(sizeof(Shape) * (size_t)(call->nin + 1));
    for (int k = 0; k < call->nin; k++)
        if (call->in[k].kind == ARG_TENSOR) op_arg_shape(&call->in[k], &sh[k]);
    int rc = infer_probed(call, sh, PROBE[0], so, dt);
    mem_free(sh);
    return rc;
}

int cs_infer_runtime(OpCall *call, Shape *so, DType *dt) {
    const OpDef *d = op_def(call->op);
    int n = call->nin;
    Shape *sh = mem_alloc(sizeof(Shape) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        if (call->in[k].kind == ARG_TENSOR) op_arg_shape(&call->in[k], &sh[k]);
    Shape s2[OP_MAX_OUT];
    DType d2[OP_MAX_OUT];
    int rc = infer_probed(call, sh, PROBE[0], so, dt);
    if (rc == 0) rc = infer_probed(call, sh, PROBE[1], s2, d2);
    mem_free(sh);
    if (rc) {   /* the rule failed on a stand-in size (reshape to a given shape), or fails anyway */
        const char *e = op_error();
        return strstr(e, "1000003") || strstr(e, "1000033") ? 1 : -1;
    }
    if (d->flags & F_DYNAMIC) {   /* a 1-D result whose length the data decides */
        so[0] = (Shape){ 1, { SHAPE_RT } };
        return 0;
    }
    for (int r = 0; r < d->nout; r++) {
        if (so[r].ndim != s2[r].ndim) return 1;
        for (int a = 0; a < so[r].ndim; a++) {
            if (so[r].d[a] == s2[r].d[a]) continue;
            if (so[r].d[a] != PROBE[0] || s2[r].d[a] != PROBE[1]) return 1;
            so[r].d[a] = SHAPE_RT;
        }
    }
    return 0;
}

int cs_infer(Comp *c, OpCall *call, Shape *so, DType *dt) {
    int rc = cs_infer_runtime(call, so, dt);
    if (rc < 0) cc_unsupported(c, "%s() of a value with a run-time shape: %s", op_def(call->op)->name, op_error());
    if (rc > 0)
        cc_unsupported(c, "%s() of a value with a run-time shape: its result's shape needs the run-time size",
                       op_def(call->op)->name);
    return rc ? -1 : 0;
}

/* infer_index over a source with run-time dimensions, with stand-in sizes (no compiler; the
 * verifier's): a result axis that differs between them is a run-time one. -1 when the index
 * fails (op_error). */
int cs_index_runtime(const Shape *t, const IndexItem *items, int n, Shape *so) {
    Shape p[2], s2;
    for (int k = 0; k < 2; k++) {
        p[k] = *t;
        for (int a = 0; a < t->ndim; a++)
            if (t->d[a] == SHAPE_RT) p[k].d[a] = PROBE[k];
    }
    if (infer_index(&p[0], items, n, so) || infer_index(&p[1], items, n, &s2)) return -1;
    for (int a = 0; a < so->ndim; a++)
        if (so->d[a] != s2.d[a]) so->d[a] = SHAPE_RT;
    return 0;
}

AVal cs_dim(Comp *c, AVal t, int axis) {
    if (axis >= 0 ? t.shape.d[axis] != SHAPE_RT : !shape_is_runtime(&t.shape))
        return cc_num_const(axis >= 0 ? (double)t.shape.d[axis] : (double)shape_count(&t.shape));
    AVal r = { .kind = AV_NUM, .reg = cc_new_num(c, false) };
    Ins *in = cc_emit(c, I_DIM);
    in->dst = r.reg;
    in->a = t.reg;
    in->aux = axis;
    return r;
}

void cs_slice_bound(Comp *c, AVal *v, int n, int k, int j, int **regs, int *nargs) {
    if (*nargs == n) {
        *regs = mem_realloc(*regs, sizeof(int) * (size_t)(3 * n + 1));
        for (int q = n; q < 3 * n; q++) (*regs)[q] = -1;
        *nargs = 3 * n;
    }
    (*regs)[n + 2 * k + j] = cc_num_reg(c, v);
}

/* Whether slice item k of an n-item index has a bound read at run time (cs_slice_bound). */
static bool slice_at_run_time(const int *regs, int nargs, int n, int k) {
    return nargs > n && (regs[n + 2 * k] >= 0 || regs[n + 2 * k + 1] >= 0);
}

/* The shape of t[items] when t has a run-time shape, a slice has bounds computed at run time
 * (regs, nargs: cs_slice_bound's layout) or an item is a bool mask (mask_at, its rank
 * mask_ndim; -1 none): integers, slices, new axes and an ellipsis on t, or one mask with
 * only new axes beside it. An axis a slice takes from an unknown dimension, or with a bound
 * of the run's, is unknown (the slice clamps to the run's size, as NumPy's does); a mask
 * selects an unknown number of elements. The run checks the rest, as eagerly. false
 * (unsupported) for other indices. */
bool cs_index_shape(Comp *c, const Shape *t, IndexItem *items, int n, const int *regs, int nargs, int mask_at, int mask_ndim,
                    Shape *so) {
    if (mask_at >= 0) {
        int nnew = 0;   /* new axes (nil) may stand beside the mask: lengths 1 where written */
        for (int k = 0; k < n; k++) nnew += items[k].kind == IDX_NEWAXIS;
        if (nnew != n - 1 || mask_ndim < 1 || mask_ndim > t->ndim || 1 + t->ndim - mask_ndim + nnew > TSL_MAX_RANK) {
            cc_unsupported(c, "a bool-mask index other than one mask over the leading axes of a tensor");
            return false;
        }
        so->ndim = 0;
        for (int k = 0; k < n; k++) so->d[so->ndim++] = k == mask_at ? SHAPE_RT : 1;
        memcpy(so->d + so->ndim, t->d + mask_ndim, sizeof(int64_t) * (size_t)(t->ndim - mask_ndim));
        so->ndim += t->ndim - mask_ndim;
        return true;
    }
    int consumed = 0;
    for (int k = 0; k < n; k++) {
        if (items[k].kind == IDX_TENSOR) {
            cc_unsupported(c, "an index array into a value with a run-time shape");
            return false;
        }
        consumed += items[k].kind != IDX_ELLIPSIS && items[k].kind != IDX_NEWAXIS;
    }
    Shape probed = *t;
    for (int a = 0; a < probed.ndim; a++)
        if (probed.d[a] == SHAPE_RT) probed.d[a] = PROBE[0];
    if (infer_index(&probed, items, n, so)) {
        cc_unsupported(c, "an index into a value with a run-time shape: %s", op_error());
        return false;
    }
    /* result axes in order: each slice's, an ellipsis's and the trailing ones, from t's axes
     * (a new axis is one of length 1, from none) */
    int d = 0, o = 0;
    for (int k = 0; k <= n && d <= t->ndim; k++) {
        if (k < n && items[k].kind == IDX_NEWAXIS) {
            o++;
            continue;
        }
        int take = k == n ? t->ndim - d : items[k].kind == IDX_ELLIPSIS ? t->ndim - consumed : items[k].kind == IDX_SLICE;
        bool run_bounds = k < n && items[k].kind == IDX_SLICE && slice_at_run_time(regs, nargs, n, k);
        if (k < n && items[k].kind == IDX_INT) d++;
        for (int j = 0; j < take && d < t->ndim && o < so->ndim; j++, d++, o++)
            if (t->d[d] == SHAPE_RT || run_bounds) so->d[o] = SHAPE_RT;
    }
    return true;
}

/* A home for a value that was `before` the loop or branch and `after` it: of before's kind,
 * dtype and rank, with a run-time dimension wherever the two differ (x = x[x > 0] or
 * x = x[1:] in a loop, a branch that assigns tensors of two sizes). */
void cs_home_shape(const AVal *before, const AVal *after, Shape *s) {
    *s = before->shape;
    if (!after || after->kind != AV_TENSOR || before->kind != AV_TENSOR || after->dtype != before->dtype ||
        after->shape.ndim != s->ndim)
        return;
    for (int a = 0; a < s->ndim; a++)
        if (s->d[a] != after->shape.d[a]) s->d[a] = SHAPE_RT;
}

/* TSL_EXPLAIN's list of the variables with run-time shapes: name (line N), each once. */
void cs_note_value(Comp *c, const char *name, const AVal *v) {
    if (!name || v->kind != AV_TENSOR || !shape_is_runtime(&v->shape)) return;
    char *list = c->g->rt_values;
    size_t len = list ? strlen(list) : 0, nlen = strlen(name);
    for (const char *p = list; p && (p = strstr(p, name)); p += nlen)
        if ((p == list || (p - list >= 2 && p[-2] == ',')) && p[nlen] == ' ') return;
    if (len > 400) return;   /* enough for a line */
    char item[160];
    int m = snprintf(item, sizeof item, "%s%.100s (line %d)", len ? ", " : "", name, c->loc.line);
    list = mem_realloc(list, len + (size_t)m + 1);
    memcpy(list + len, item, (size_t)m + 1);
    c->g->rt_values = list;
}
