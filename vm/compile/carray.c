/* carray.c - lists indexed at run time, and tensor arrays (lists of tensors that grow in a
 * run-time loop), in static code.
 *
 * A list's structure is known when compiling (its items are AVals), so `xs[2]` is simply an
 * item. `xs[i]` with i known only at run time (a loop counter) is a SELECT instruction: it
 * moves the register of item i into its result, with eager's rules and messages for the
 * index; every item must then be of one kind (tensors of one dtype and shape, or numbers),
 * so the result has one register type whatever i is. */
#include "comp.h"

/* Why the items of a list cannot be chosen between at run time, or NULL when they can: the
 * result's register type must not depend on the index. */
static const char *select_problem(Comp *c, const AStruct *st) {
    for (int i = 0; i < st->n; i++) {
        const AVal *v = &st->items[i], *v0 = &st->items[0];
        if (v->kind != AV_TENSOR && v->kind != AV_NUM) {
            if (v->kind == AV_CLOSURE || (v->kind == AV_CONST && v->k.type == VAL_FUNC))
                return "a list of functions indexed by a number computed at run time (each call is inlined, so "
                       "the function must be known when compiling)";
            return "a list whose items are not tensors or numbers, indexed by a number computed at run time";
        }
        if (v->kind != v0->kind || v->is_bool != v0->is_bool)
            return "a list of items of different kinds, indexed by a number computed at run time";
        if (v->kind == AV_TENSOR && (v->dtype != v0->dtype || !shape_equal(&v->shape, &v0->shape)))
            return "a list of tensors of different shapes or dtypes, indexed by a number computed at run time";
        if (v->unset) return "a list holding a variable that may be unset, indexed by a number computed at run time";
    }
    return NULL;
}

static bool any_tracked(Comp *c, const AStruct *st) {
    for (int i = 0; c->tape && i < st->n; i++)
        if (st->items[i].kind == AV_TENSOR && cgrad_tracked(c, st->items[i].reg)) return true;
    return false;
}

/* A constant i64 tensor shaped like an item: the flat positions of row k of a stack of items. */
static AVal row_positions(Comp *c, const Shape *item, int64_t k) {
    Tensor *t = tensor_new(DT_I64, item);
    if (!t) return cc_op_failed(c);
    for (int64_t i = 0; i < t->size; i++) ((int64_t *)t->data)[i] = k * t->size + i;
    return cc_tensor_const(c, t);
}

/* The flat positions of row N[row] of a stack of items: base (row 0's) + N[row] * item size. */
static AVal positions_at(Comp *c, AVal base, int row) {
    AVal rowsize = cc_num_const((double)shape_count(&base.shape));
    int rs = cc_num_reg(c, &rowsize);
    Ins *in = cc_emit(c, I_NBIN);
    in->dst = cc_new_num(c, false);
    in->a = row;
    in->b = rs;
    in->aux = OP_MUL;
    int off = in->dst;
    Shape s0 = { 0, { 0 } };
    AVal toff = cc_tensor_av(c, DT_I64, &s0);
    in = cc_emit(c, I_SCALAR);
    in->dst = toff.reg;
    in->a = off;
    in->aux = DT_I64;
    return cc_emit_op(c, OP_ADD, (AVal[]){ base, toff }, 2, NULL);
}

/* list[key] of tensors being differentiated: take(stack(list), row key's positions), which the
 * tape differentiates (each item gets its row of the gradient). The index is checked and made
 * non-negative first by a SELECT over the numbers 0..n-1, with eager's rules and messages. */
static AVal select_tracked(Comp *c, AStruct *st, int key) {
    int n = st->n, *ks = mem_alloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) {
        AVal k = cc_num_const(i);
        ks[i] = cc_num_reg(c, &k);
    }
    int row = cc_new_num(c, false);
    Ins *in = cc_emit(c, I_SELECT);
    in->dst = row;
    in->a = key;
    in->args = ks;
    in->nargs = n;
    AVal *items = cc_arena_alloc(c, sizeof(AVal) * (size_t)n);
    memcpy(items, st->items, sizeof(AVal) * (size_t)n);
    AVal stacked = cc_emit_op(c, OP_STACK, items, n, NULL);
    AVal pos = c->failed ? FAILV : positions_at(c, row_positions(c, &st->items[0].shape, 0), row);
    return c->failed ? FAILV : cc_emit_op(c, OP_TAKE, (AVal[]){ stacked, pos }, 2, NULL);
}

/* Whether every item is a dict with the keys of the first, in its order (and at least one). */
static bool same_dicts(const AStruct *st) {
    if (st->n == 0 || st->items[0].kind != AV_DICT || st->items[0].st->n == 0) return false;
    const AStruct *d0 = st->items[0].st;
    for (int i = 1; i < st->n; i++) {
        const AStruct *d = st->items[i].kind == AV_DICT ? st->items[i].st : NULL;
        if (!d || d->n != d0->n) return false;
        for (int f = 0; f < d0->n; f++)
            if (strcmp(d->keys[f], d0->keys[f]) != 0) return false;
    }
    return true;
}

/* list[key] of dicts of one structure (`layers[i].w`): a dict whose every field is the select
 * of that field across the items (fields nobody reads cost nothing: DCE). It is marked
 * selected: a store into it would change a copy, not the list's item. */
static AVal select_fields(Comp *c, AStruct *st, AVal key, SrcLoc loc) {
    const AStruct *d0 = st->items[0].st;
    AStruct *r = cc_astruct_new(c, true), column = { .n = st->n, .obj = -1 };
    column.items = cc_arena_alloc(c, sizeof(AVal) * (size_t)st->n);
    r->selected = true;
    for (int f = 0; f < d0->n; f++) {
        for (int i = 0; i < st->n; i++) column.items[i] = st->items[i].st->items[f];
        AVal v = ca_select(c, &column, key, loc);
        if (c->failed) return FAILV;
        cc_astruct_push(c, r, d0->keys[f], v);
    }
    return (AVal){ .kind = AV_DICT, .st = r };
}

static bool all_strings(const AStruct *st) {
    for (int i = 0; i < st->n; i++)
        if (st->items[i].kind != AV_STR && !(st->items[i].kind == AV_CONST && st->items[i].k.type == VAL_STR)) return false;
    return st->n > 0;
}

/* Whether ca_select can index st with a number of the run. */
bool ca_selectable(Comp *c, AStruct *st) {
    if (all_strings(st)) return true;
    if (!same_dicts(st)) return select_problem(c, st) == NULL;
    const AStruct *d0 = st->items[0].st;
    AStruct column = { .n = st->n, .obj = -1 };
    column.items = cc_arena_alloc(c, sizeof(AVal) * (size_t)st->n);
    for (int f = 0; f < d0->n; f++) {
        for (int i = 0; i < st->n; i++) column.items[i] = st->items[i].st->items[f];
        if (!ca_selectable(c, &column)) return false;
    }
    return true;
}

/* list[key] where key is a number known only at run time: one SELECT over the items'
 * registers (an empty list fails at run time, as eagerly); a dict of selects for dicts of one
 * structure; eager's own lookup, as a host instruction, for strings. */
AVal ca_select(Comp *c, AStruct *st, AVal key, SrcLoc loc) {
    c->loc = loc;
    if (same_dicts(st)) return select_fields(c, st, key, loc);
    if (all_strings(st)) return cc_host_index(c, (AVal){ .kind = AV_LIST, .st = st }, key);
    const char *why = select_problem(c, st);
    if (why) return cc_unsupported(c, "%s", why);
    if (st->n == 0) return cc_unsupported(c, "an empty list indexed by a number computed at run time");
    if (any_tracked(c, st)) {
        AVal r = select_tracked(c, st, cc_num_reg(c, &key));
        c->loc = loc;
        return r;
    }
    int *regs = mem_alloc(sizeof(int) * (size_t)st->n);
    for (int i = 0; i < st->n; i++) regs[i] = st->items[i].kind == AV_NUM ? cc_num_reg(c, &st->items[i]) : st->items[i].reg;
    int kr = cc_num_reg(c, &key);
    const AVal *v0 = &st->items[0];
    AVal r = v0->kind == AV_TENSOR ? cc_tensor_av(c, v0->dtype, &v0->shape)
                                   : (AVal){ .kind = AV_NUM, .is_bool = v0->is_bool, .reg = cc_new_num(c, v0->is_bool) };
    c->loc = loc;
    Ins *in = cc_emit(c, I_SELECT);
    in->dst = r.reg;
    in->a = kr;
    in->args = regs;
    in->nargs = st->n;
    return r;
}

/* ---------- tensor arrays ----------
 * A list made in the static code (empty, or with items already) that a counted loop pushes
 * tensors of one dtype and shape onto, the same number of times each iteration, when the
 * loop's trip count is known when compiling (`for t in range(xs.shape[0])`, no break or
 * continue): found by the loop's dry run (compile.c, prepare_homes), it becomes a buffer
 * register [capacity, *item] and a run-time count. Each push is a ROWSET of the pushed
 * value into row `count` (a copy: the pushed register may change afterwards) and count += 1;
 * len() is n0 + count. After the loop the list holds its items again: each row an INDEX of
 * the buffer (a tensor of its own, equal to what eager code pushed; DCE removes those
 * nobody reads), and stack(list) / concat(list) of exactly those rows is the buffer itself
 * (a reshape for concat).
 *
 * Under grad (a tape is recording), the buffer is a hidden variable of the loop instead (a
 * home, so the tape carries it across iterations), starting as -0.0 everywhere, and a push
 * is buf = scatter_add(buf, the row's flat positions, v): -0.0 + x is x for every x, so the
 * rows hold exactly the pushed values, and scatter_add's rule gives v the row's gradient
 * (take), the copies eager's stack rule gives each item. The rows after the loop are takes
 * of the buffer. A second dry run of the loop finds the hidden variable's home. */
typedef struct TArray {
    AVal buf;         /* [cap, *item] */
    int count;        /* number register: pushes so far in this run of the loop */
    int cap, n0;      /* rows; items the list had before the loop */
    int depth;        /* branch depth of the loop body that pushes */
    bool open;        /* the loop is being compiled */
    int *rows;        /* after the loop: the registers of its rows (items n0..) */
    DType dtype;
    Shape item;
    bool grad;        /* under a tape: the buffer is the hidden variable `key` */
    VarKey key;
    AVal base;        /* grad: i64 flat positions of row 0, shaped like an item */
} TArray;

#define CA_MAX_ROWS 10000   /* each row becomes an item (an instruction) after the loop */

/* The one reason a tensor list cannot be a buffer whose size is known when compiling: its
 * number of items is known only at run time (a push in a run-time branch or a nested loop,
 * a `while` loop, a range whose stop is a run-time number, break or continue). Run-time
 * dimensions in registers would let it compile: this is where to connect them. */
AVal ca_runtime_growth(Comp *c) {
    return cc_unsupported(c, "a tensor list grows a run-time number of times (a push in a while loop, a loop with a "
                             "run-time range stop, break or continue, or a run-time branch or nested loop)");
}

bool ca_is_open(const AStruct *st) { return st->ta && st->ta->open; }

AVal ca_read_open(Comp *c) {
    return cc_unsupported(c, "a tensor list read inside the loop that grows it (only push and len are compiled there)");
}

/* Whether the items a loop's dry run pushed onto st (from n0 on) can make it a tensor array
 * for a loop of `trips` iterations (-1: not known when compiling); reports why not. */
bool ca_can_grow(Comp *c, AStruct *st, int n0, int trips) {
    const AVal *first = &st->items[n0];
    for (int i = n0; i < st->n; i++) {
        const AVal *v = &st->items[i];
        if (st->dict || st->obj >= 0 || v->kind != AV_TENSOR) {   /* host containers: others' rules */
            cc_unsupported(c, "a list or dict grows inside a loop or run-time branch");
            return false;
        }
        if (v->dtype != first->dtype || !shape_equal(&v->shape, &first->shape)) {
            char b1[600], b2[600];
            cc_unsupported(c, "a tensor list grows in a loop with tensors of different shapes or dtypes (%s %s and %s %s)",
                           shape_str(&first->shape, b1, sizeof b1), dtype_name(first->dtype),
                           shape_str(&v->shape, b2, sizeof b2), dtype_name(v->dtype));
            return false;
        }
    }
    if (trips < 0) {
        ca_runtime_growth(c);
        return false;
    }
    if ((int64_t)trips * (st->n - n0) > CA_MAX_ROWS) {
        cc_unsupported(c, "a tensor list grows to more than %d items in a loop", CA_MAX_ROWS);
        return false;
    }
    if (first->shape.ndim + 1 > TSL_MAX_RANK) {
        cc_unsupported(c, "a tensor list of %d-d tensors grows in a loop", first->shape.ndim);
        return false;
    }
    return true;
}


/* Under grad: the buffer as a hidden variable of the code, starting as -0.0. */
static void open_for_grad(Comp *c, TArray *ta, const Shape *s) {
    Tensor *t = op_full(s, -0.0, ta->dtype);
    if (!t) { cc_op_failed(c); return; }
    ta->grad = true;
    ta->key = (VarKey){ K_INLINE, ++c->next_inline * 65536, NULL };
    cc_env_set(c, ta->key, cc_tensor_const(c, t), "a tensor list's buffer", false);
    ta->base = row_positions(c, &ta->item, 0);
}

/* Before the loop: st's buffer (zeros of [rows (its pushes in all), *item]) and count. True
 * when the loop needs another dry run (a grad's hidden variable needs a home). */
bool ca_open(Comp *c, AStruct *st, int n0, int rows, const AVal *first) {
    TArray *ta = cc_arena_alloc(c, sizeof *ta);
    ta->cap = rows;
    ta->n0 = n0;
    ta->dtype = first->dtype;
    ta->item = first->shape;
    ta->depth = c->branch_depth + 1;   /* compile_loop's body */
    ta->open = true;
    AStruct *dims = cc_astruct_new(c, false);
    cc_astruct_push(c, dims, NULL, cc_num_const(ta->cap));
    for (int k = 0; k < ta->item.ndim; k++) cc_astruct_push(c, dims, NULL, cc_num_const((double)ta->item.d[k]));
    AVal shape = { .kind = AV_LIST, .st = dims, .reg = -1 };
    AVal dt = cc_const_av(cc_keep_value(c, val_cstr(dtype_name(ta->dtype))));
    char *kwn[] = { "dtype" };
    if (c->tape) {
        Shape s = { ta->item.ndim + 1, { ta->cap } };
        memcpy(s.d + 1, ta->item.d, sizeof(int64_t) * (size_t)ta->item.ndim);
        open_for_grad(c, ta, &s);
    } else {
        ta->buf = cc_call_op(c, OP_ZEROS, &shape, 1, kwn, &dt, 1);
    }
    if (c->failed) return false;
    AVal zero = cc_num_const(0);
    int z = cc_num_reg(c, &zero);
    ta->count = cc_new_num(c, false);
    Ins *in = cc_emit(c, I_NMOVE);
    in->dst = ta->count;
    in->a = z;
    cc_undo_save(c, st);
    st->n = n0;   /* the dry run's pushes were rolled back: its items before the loop */
    st->ta = ta;
    return ta->grad;
}

/* Under grad: buf = scatter_add(buf, row `count`'s positions, v), recorded on the tape. */
static void push_for_grad(Comp *c, TArray *ta, AVal v) {
    Binding *b = cc_env_find(c, ta->key);
    AVal pos = positions_at(c, ta->base, ta->count);
    if (c->failed) return;
    AVal nb = cc_emit_op(c, OP_SCATTER_ADD, (AVal[]){ b->v, pos, v }, 3, NULL);
    if (c->failed) return;
    cgrad_push_node(c, nb.reg);
    cc_env_set(c, ta->key, nb, "a tensor list's buffer", false);
}

/* push(st, v) inside the loop: v into row count. */
AVal ca_push(Comp *c, AStruct *st, AVal v) {
    TArray *ta = st->ta;
    if (c->branch_depth != ta->depth) return ca_runtime_growth(c);
    if (v.kind != AV_TENSOR || v.dtype != ta->dtype || !shape_equal(&v.shape, &ta->item))
        return cc_unsupported(c, "a tensor list grows in a loop with values of different kinds, shapes or dtypes");
    if (v.unset) return cc_unsupported(c, "a push of a variable that may be unset onto a tensor list");
    Ins *in;
    if (ta->grad) {
        push_for_grad(c, ta, v);
        if (c->failed) return FAILV;
    } else {
        in = cc_emit(c, I_ROWSET);
        in->dst = ta->buf.reg;
        in->a = ta->count;
        in->b = v.reg;
    }
    AVal one = cc_num_const(1);
    int r1 = cc_num_reg(c, &one);
    in = cc_emit(c, I_NBIN);
    in->dst = ta->count;
    in->a = ta->count;
    in->b = r1;
    in->aux = OP_ADD;
    return cc_const_av(NIL_VAL);
}

/* len(st) inside the loop: n0 + the count, in a register of its own (the count moves on). */
AVal ca_len(Comp *c, AStruct *st) {
    AVal n0 = cc_num_const(st->ta->n0);
    int r0 = cc_num_reg(c, &n0);
    Ins *in = cc_emit(c, I_NBIN);
    in->dst = cc_new_num(c, false);
    in->a = st->ta->count;
    in->b = r0;
    in->aux = OP_ADD;
    return (AVal){ .kind = AV_NUM, .reg = in->dst };
}

/* After the loop: the list's items again, its rows after the ones it had. */
void ca_close(Comp *c, AStruct *st) {
    TArray *ta = st->ta;
    ta->open = false;
    if (c->failed) return;
    ta->rows = cc_arena_alloc(c, sizeof(int) * (size_t)(ta->cap + 1));
    if (ta->grad) {   /* rows the tape sees: takes of the buffer's final value */
        ta->buf = cc_env_find(c, ta->key)->v;
        for (int k = 0; k < ta->cap && !c->failed; k++) {
            AVal pos = row_positions(c, &ta->item, k);
            AVal row = c->failed ? FAILV : cc_emit_op(c, OP_TAKE, (AVal[]){ ta->buf, pos }, 2, NULL);
            if (c->failed) return;
            ta->rows[k] = row.reg;
            cc_astruct_push(c, st, NULL, row);
        }
        return;
    }
    for (int k = 0; k < ta->cap && !c->failed; k++) {
        AVal row = cc_index_row(c, ta->buf, k, -1);
        ta->rows[k] = row.reg;
        cc_astruct_push(c, st, NULL, row);
    }
}

/* Row k of tensor t, or row N[kreg] when kreg >= 0 (a loop over t's rows): one INDEX. */
AVal cc_index_row(Comp *c, AVal t, int64_t k, int kreg) {
    IndexItem *it = mem_calloc(1, sizeof(IndexItem));
    it->kind = IDX_INT;
    it->i = k;
    Shape so = { t.shape.ndim - 1, { 0 } };
    memcpy(so.d, t.shape.d + 1, sizeof(int64_t) * (size_t)so.ndim);
    AVal v = cc_tensor_av(c, t.dtype, &so);
    Ins *ix = cc_emit(c, I_INDEX);
    ix->dst = v.reg;
    ix->a = t.reg;
    ix->idx = it;
    ix->nidx = 1;
    ix->args = mem_alloc(sizeof(int));
    ix->args[0] = kreg;
    ix->nargs = 1;
    return v;
}

/* Whether axis argument v (absent, or a known number) is 0. */
static bool axis_zero(const AVal *v) { return !v || (v->kind == AV_NUM && v->known && !v->deps && v->num == 0); }

/* stack(l) / stack(l, axis=0) / concat(l) of a tensor list whose items are exactly the rows
 * its loop wrote: the buffer (concat: reshaped, which shares it). false: compile the call as
 * any other. */
bool ca_join(Comp *c, OpCode op, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, AVal *out) {
    if ((op != OP_STACK && op != OP_CONCAT) || nargs < 1 || nargs > 2 || nkw > 1 || args[0].kind != AV_LIST) return false;
    AStruct *st = args[0].st;
    TArray *ta = st->ta;
    if (!ta || ta->open || ta->n0 || ta->cap == 0 || st->n != ta->cap) return false;
    const AVal *axis = nargs == 2 ? &args[1] : NULL;
    if (nkw == 1) {
        if (axis || strcmp(kwn[0], "axis")) return false;
        axis = &kw[0];
    }
    if (!axis_zero(axis)) return false;
    for (int k = 0; k < st->n; k++)
        if (st->items[k].kind != AV_TENSOR || st->items[k].reg != ta->rows[k]) return false;
    if (op == OP_STACK) {
        *out = ta->buf;
        return true;
    }
    if (ta->item.ndim == 0) return false;   /* concat's own error */
    AStruct *dims = cc_astruct_new(c, false);
    cc_astruct_push(c, dims, NULL, cc_num_const((double)ta->cap * (double)ta->item.d[0]));
    for (int k = 1; k < ta->item.ndim; k++) cc_astruct_push(c, dims, NULL, cc_num_const((double)ta->item.d[k]));
    AVal a[2] = { ta->buf, { .kind = AV_LIST, .st = dims, .reg = -1 } };
    *out = cc_call_op(c, OP_RESHAPE, a, 2, NULL, NULL, 0);
    return true;
}
