/* autograd.c - the eager tape, backward over it, and the gradient trees of section 7. */
#include <math.h>
#include <string.h>
#include "autograd.h"
#include "builtins.h"
#include "grad.h"
#include "mem.h"
#include "tops.h"

/* One recorded op call: operands (tensors retained), attributes, the tape variables of
 * its operands (-1: not tracked) and of its results. */
typedef struct {
    OpCode op;
    int nin;
    OpArg *in;
    int *in_var;
    OpAttrs at;
    int out_var;
    int out_k;   /* which result of the call out_var is (rules differentiate result 0 only) */
} TapeNode;

/* A tape variable: a tracked tensor (retained) and its gradient so far (NULL: none). */
typedef struct {
    Tensor *t;
    Tensor *grad;
} Var;

struct Tape {
    Var *vars;
    int nvars, vcap;
    TapeNode *nodes;
    int nnodes, ncap;
    /* Tensor* -> the newest variable holding it (open addressing; keys are vars' tensors) */
    int *slots;
    int nslots;
    Tape *outer;   /* the tape of an enclosing grad: it records this one's forward and backward ops */
    int64_t counted;   /* bytes of the arrays above, counted toward --max-memory (tape_grow) */
    /* the first conversion of a tracked tensor to host values (item() at 3:12): a result that
     * reaches the argument only through it has no gradient, and says where it was cut */
    const char *cut_by;
    SrcLoc cut_at;
};

/* The innermost active tape is the interpreter's (I->tape); code without an Interp at hand
 * finds it through the current one. */
static Tape *active_tape(void) {
    Interp *I = interp_current();
    return I ? I->tape : NULL;
}

/* The tape's memory counts toward --max-memory (mem_charge): its arrays, and the headers of
 * the tensors it keeps (their data counts as tensors), since a tape of a million small ops
 * holds hundreds of megabytes of them. */
static bool tape_charge(Tape *tp, int64_t bytes) {
    if (!mem_charge(bytes)) return false;
    tp->counted += bytes;
    return true;
}

/* p (of old bytes, NULL for a new block) resized to n bytes; NULL with the message in
 * op_error() when that would pass the limit or the allocation fails (p is unchanged). */
static void *tape_grow(Tape *tp, void *p, size_t old, size_t n) {
    if (!tape_charge(tp, (int64_t)n - (int64_t)old)) return NULL;
    void *q = mem_try_realloc(p, n);
    if (!q) {
        tape_charge(tp, (int64_t)old - (int64_t)n);
        op_failk(ERRK_MEMORY, "out of memory: the gradient tape cannot grow to %zu bytes", n);
    }
    return q;
}

/* Frees a block of `bytes` that tape_grow made. */
static void tape_drop(Tape *tp, void *p, size_t bytes) {
    mem_free(p);
    tape_charge(tp, -(int64_t)bytes);
}

static size_t hash_ptr(const void *p, int n) { return (size_t)(((uintptr_t)p >> 4) * 2654435761u) & (size_t)(n - 1); }

static int tape_find(const Tape *tp, const Tensor *t) {
    if (!tp->nslots) return -1;
    for (size_t h = hash_ptr(t, tp->nslots);; h = (h + 1) & (size_t)(tp->nslots - 1)) {
        int v = tp->slots[h];
        if (v < 0) return -1;
        if (tp->vars[v].t == t) return v;
    }
}

static void slots_put(Tape *tp, int v) {
    size_t h = hash_ptr(tp->vars[v].t, tp->nslots);
    for (;; h = (h + 1) & (size_t)(tp->nslots - 1)) {
        int w = tp->slots[h];
        if (w < 0 || tp->vars[w].t == tp->vars[v].t) break;
    }
    tp->slots[h] = v;
}

/* A new variable for t (retained); t now maps to it. -1 with the message in op_error() when
 * the tape cannot grow (it is unchanged then). */
static int tape_var(Tape *tp, Tensor *t) {
    if (tp->nvars == tp->vcap) {
        int cap = tp->vcap ? tp->vcap * 2 : 16;
        int64_t keep = (int64_t)(cap - tp->vcap) * TENSOR_KEEP_BYTES;   /* each variable keeps its tensor */
        if (!tape_charge(tp, keep)) return -1;
        Var *vars = tape_grow(tp, tp->vars, sizeof(Var) * (size_t)tp->vcap, sizeof(Var) * (size_t)cap);
        if (!vars) {
            tape_charge(tp, -keep);
            return -1;
        }
        tp->vars = vars;
        tp->vcap = cap;
    }
    if ((tp->nvars + 1) * 2 > tp->nslots) {   /* grow and rehash: the newest variable of each tensor wins */
        int nslots = tp->nslots ? tp->nslots * 2 : 64;
        while ((tp->nvars + 1) * 2 > nslots) nslots *= 2;
        int *slots = tape_grow(tp, NULL, 0, sizeof(int) * (size_t)nslots);
        if (!slots) return -1;
        if (tp->slots) tape_drop(tp, tp->slots, sizeof(int) * (size_t)tp->nslots);
        tp->slots = slots;
        tp->nslots = nslots;
        for (int i = 0; i < tp->nslots; i++) tp->slots[i] = -1;
        for (int w = 0; w < tp->nvars; w++) slots_put(tp, w);
    }
    int v = tp->nvars++;
    tp->vars[v] = (Var){ tensor_retain(t), NULL };
    slots_put(tp, v);
    return v;
}

static void tape_free(Tape *tp) {
    for (int i = 0; i < tp->nnodes; i++) {
        TapeNode *n = &tp->nodes[i];
        for (int k = 0; k < n->nin; k++)
            if (n->in[k].kind == ARG_TENSOR) tensor_release((Tensor *)n->in[k].t);
        mem_free(n->in);   /* in_var lies in the same block */
    }
    for (int v = 0; v < tp->nvars; v++) {
        tensor_release(tp->vars[v].t);
        tensor_release(tp->vars[v].grad);
    }
    mem_free(tp->nodes);
    mem_free(tp->vars);
    mem_free(tp->slots);
    mem_charge(-tp->counted);
    tp->counted = 0;
}

static bool is_float(DType dt) { return dt == DT_F32 || dt == DT_F64; }

static int record_on(Tape *tp, const OpCall *c, Tensor *const *out, int k) {
    bool any = false;
    for (int i = 0; i < c->nin && !any; i++)
        any = c->in[i].kind == ARG_TENSOR && tape_find(tp, c->in[i].t) >= 0;
    if (!any) return 0;
    if (tp->nnodes == tp->ncap) {
        int cap = tp->ncap ? tp->ncap * 2 : 16;
        TapeNode *nodes = tape_grow(tp, tp->nodes, sizeof(TapeNode) * (size_t)tp->ncap, sizeof(TapeNode) * (size_t)cap);
        if (!nodes) return -1;
        tp->nodes = nodes;
        tp->ncap = cap;
    }
    /* the operands and their variables in one block (tape_free frees in) */
    size_t nin = (size_t)(c->nin ? c->nin : 1), bytes = (sizeof(OpArg) + sizeof(int)) * nin;
    OpArg *in = tape_grow(tp, NULL, 0, bytes);
    if (!in) return -1;
    int out_var = tape_var(tp, out[k]);
    if (out_var < 0) {
        tape_drop(tp, in, bytes);
        return -1;
    }
    TapeNode *n = &tp->nodes[tp->nnodes++];
    n->op = c->op;
    n->nin = c->nin;
    n->at = *c->at;
    n->in = in;
    n->in_var = (int *)(in + nin);
    for (int i = 0; i < c->nin; i++) {
        n->in[i] = c->in[i];
        n->in_var[i] = -1;
        if (c->in[i].kind != ARG_TENSOR) continue;
        tensor_retain((Tensor *)c->in[i].t);   /* dims point into it: kept alive with it */
        if (is_float(c->in[i].t->dtype)) n->in_var[i] = tape_find(tp, c->in[i].t);
    }
    n->out_var = out_var;
    n->out_k = k;
    return 0;
}

/* On every active tape: an inner grad's ops are also the outer one's (grad(grad(f))). Each
 * float result gets a node (a non-float result carries no gradient), so that a gradient
 * reaching a later result of a multi-result op (qr's r) stops with an error instead of
 * silently being zero. */
int autograd_record(const OpCall *c, Tensor *const *out) {
    for (int k = 0; k < op_info[c->op].nout; k++)
        if (out[k] && is_float(out[k]->dtype))
            for (Tape *tp = active_tape(); tp; tp = tp->outer)
                if (record_on(tp, c, out, k)) return -1;
    return 0;
}

int autograd_record_unary(OpCode op, const Tensor *t, const OpAttrs *at, Tensor *res) {
    OpArg in[1] = { op_arg_tensor(t) };
    OpCall c = { op, 1, in, at };
    return autograd_record(&c, &res);
}

int autograd_record_index(const Tensor *t, const IndexItem *idx, int n, Tensor *res) {
    if (!is_float(res->dtype)) return 0;
    Tensor *pos = op_index_positions(t, idx, n);   /* O(result), not O(t): rows in a loop stay cheap */
    Tensor *at_pos = pos ? tensor_to(pos, t->device) : NULL;   /* beside t, for the backward scatter_add */
    tensor_release(pos);
    if (!at_pos) return -1;
    OpArg in[2] = { op_arg_tensor(t), op_arg_tensor(at_pos) };
    OpAttrs at = attrs_default();
    OpCall c = { OP_TAKE, 2, in, &at };
    int rc = autograd_record(&c, &res);
    tensor_release(at_pos);   /* the tape holds its own reference */
    return rc;
}

/* The builder's op runner: backward ops are recorded on the enclosing tapes, if any. */
static int recording_run(GradBuilder *b, const OpCall *c, Tensor **out) {
    (void)b;
    if (op_run(c, out)) return -1;
    if (active_tape() && autograd_record(c, out)) {
        for (int k = 0; k < OP_MAX_OUT; k++) {
            tensor_release(out[k]);
            out[k] = NULL;
        }
        return -1;
    }
    return 0;
}

bool autograd_tracked(const Tensor *t) {
    for (Tape *tp = active_tape(); tp; tp = tp->outer)
        if (tape_find(tp, t) >= 0) return true;
    return false;
}

/* ---------- where values leave the tape ---------- */

/* Calls visit(t, ud) on each tensor v holds, through lists and dicts, until one returns true
 * (then true). *budget bounds the walk: a list that holds itself is walked that far only. */
typedef bool (*TensorVisit)(const Tensor *t, const void *ud);
static bool any_tensor(Value v, TensorVisit visit, const void *ud, int *budget) {
    if (--*budget < 0) return false;
    if (v.type == VAL_TENSOR) return visit(v.as.t, ud);
    if (v.type == VAL_LIST) {
        ObjList *l = AS_LIST(v);
        for (int i = 0; i < l->len && *budget >= 0; i++)
            if (any_tensor(l->items[i], visit, ud, budget)) return true;
    } else if (v.type == VAL_DICT) {
        ObjDict *d = AS_DICT(v);
        for (int i = 0; i < d->len && *budget >= 0; i++)
            if (d->entries[i].key && any_tensor(d->entries[i].val, visit, ud, budget)) return true;
    }
    return false;
}

enum { WALK_BUDGET = 1 << 16 };

static bool is_tracked(const Tensor *t, const void *ud) { (void)ud; return autograd_tracked(t); }
static bool is_same(const Tensor *t, const void *ud) { return t == ud; }

bool value_holds_tracked(Value v) {
    int budget = WALK_BUDGET;
    return any_tensor(v, is_tracked, NULL, &budget);
}

static bool args_hold(const CallArgs *a, TensorVisit visit, const void *ud) {
    int budget = WALK_BUDGET;
    for (int i = 0; i < a->npos; i++)
        if (any_tensor(a->pos[i], visit, ud, &budget)) return true;
    for (int i = 0; i < a->nkw; i++)
        if (any_tensor(a->kw[i], visit, ud, &budget)) return true;
    return false;
}

/* A float tensor of the result that the tape does not know and the call was not handed:
 * made from the arguments behind the tape's back. */
static bool is_escaped(const Tensor *t, const void *ud) {
    return is_float(t->dtype) && !autograd_tracked(t) && !args_hold(ud, is_same, t);
}

Value autograd_after_builtin(Interp *I, const ObjBuiltin *b, const CallArgs *a, Value r, SrcLoc loc) {
    if (IS_ERR(r) || b->bound.type != VAL_NIL) return r;   /* grad(f)'s function: its zeros are constants */
    bool cuts = b->def && (b->def->stat & ST_CUTS);
    int budget = WALK_BUDGET;
    bool escaped = !cuts && any_tensor(r, is_escaped, a, &budget);
    if (!cuts && !escaped) return r;
    if (!args_hold(a, is_tracked, NULL)) return r;
    if (escaped) {
        val_release(r);
        return interp_errork(I, ERRK_VALUE, "%s(): no gradient through this call yet: it makes a tensor from one being differentiated "
                               "that the gradient tape does not record", b->name);
    }
    for (Tape *tp = I->tape; tp; tp = tp->outer)
        if (!tp->cut_by) {
            tp->cut_by = b->name;   /* a built-in's name lives as long as the interpreter */
            tp->cut_at = loc;
        }
    return r;
}

/* ---------- backward ---------- */

/* dst += g (g a NEW reference, taken). */
static int accumulate(Tensor **dst, Tensor *g) {
    if (!*dst) { *dst = g; return 0; }
    OpArg in[2] = { op_arg_tensor(*dst), op_arg_tensor(g) };
    OpAttrs at = attrs_default();
    OpCall c = { OP_ADD, 2, in, &at };
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    int rc = recording_run(NULL, &c, out);
    tensor_release(g);
    if (rc) return -1;
    tensor_release(*dst);
    *dst = out[0];
    return 0;
}

/* Runs backward from variable y, seeded with ones. -1 with the message in op_error(). */
static int backward(Tape *tp, int y) {
    Shape s;
    shape_of(tp->vars[y].t, &s);
    Tensor *ones = op_full(&s, 1, tp->vars[y].t->dtype);   /* the seed lives where y does */
    tp->vars[y].grad = ones ? tensor_to(ones, tp->vars[y].t->device) : NULL;
    tensor_release(ones);
    if (!tp->vars[y].grad) return -1;
    for (int k = tp->nnodes - 1; k >= 0; k--) {
        TapeNode *n = &tp->nodes[k];
        Var *out = &tp->vars[n->out_var];
        if (!out->grad) continue;
        GradBuilder b;
        gb_init(&b);
        b.run = recording_run;
        /* one block for the operand handles (a concat may have any number of operands) */
        size_t nin = (size_t)(n->nin ? n->nin : 1);
        GVal *x = mem_alloc((sizeof(GVal) * 2 + sizeof(bool)) * nin), *gx = x + nin;
        bool *needs = (bool *)(gx + nin);
        for (int i = 0; i < n->nin; i++) {   /* an absent operand (clip's nil bound) is none, not 0 */
            x[i] = n->in[i].kind == ARG_TENSOR ? gb_tensor(&b, (Tensor *)n->in[i].t)
                   : n->in[i].kind == ARG_NUM  ? gb_num(n->in[i].x)
                                               : gb_none();
            needs[i] = n->in_var[i] >= 0;
            gx[i] = gb_none();
        }
        OpCall c = { n->op, n->nin, n->in, &n->at };
        GradCtx g = { &b, &c, x, gb_tensor(&b, out->t), gb_tensor(&b, out->grad), needs, gx, n->out_k };
        int rc = grad_backward(&g);
        for (int i = 0; i < n->nin && !rc; i++)
            if (needs[i] && gb_ok(gx[i])) rc = accumulate(&tp->vars[n->in_var[i]].grad, gb_keep(gx[i]));
        gb_free(&b);
        mem_free(x);
        if (rc) return -1;
        if (n->out_var != y) {   /* consumed: its memory goes now */
            tensor_release(out->grad);
            out->grad = NULL;
        }
    }
    return 0;
}

/* ---------- gradient trees ---------- */

/* The argument as f sees it: its lists and dicts copied, each float tensor a new tensor
 * object over the same data. The tape tracks those objects, so a tensor f reads from
 * elsewhere (a global) is a constant even when it is the argument's own tensor: the gradient
 * is with respect to the argument, as static code computes it (and jax.grad). */
static Value fresh_argument(Interp *I, Value v, int depth) {
    if (depth > 1000) return interp_errork(I, ERRK_VALUE, "grad(): the argument is nested too deeply");
    if (v.type == VAL_TENSOR && is_float(v.as.t->dtype)) {
        Shape s;
        shape_of(v.as.t, &s);
        Tensor *t = tensor_view(v.as.t, &s);
        if (!t) return interp_op_error(I);
        OpAttrs at = attrs_default();   /* an enclosing grad sees the new object as reshape(v): grad(grad(f)) */
        at.shape = s;
        if (I->tape && autograd_record_unary(OP_RESHAPE, v.as.t, &at, t)) {
            tensor_release(t);
            return interp_op_error(I);
        }
        return TENSOR_VAL(t);
    }
    if (v.type == VAL_LIST) {
        ObjList *l = AS_LIST(v), *r = list_new(l->len);
        Value rv = OBJ_VAL(VAL_LIST, r);
        for (int i = 0; i < l->len; i++) {
            Value item = fresh_argument(I, l->items[i], depth + 1);
            if (IS_ERR(item)) { val_release(rv); return item; }
            r->items[r->len++] = item;
        }
        return rv;
    }
    if (v.type == VAL_DICT) {
        ObjDict *d = AS_DICT(v), *r = dict_new();
        Value rv = OBJ_VAL(VAL_DICT, r);
        for (int i = 0; i < d->len; i++) {
            if (!d->entries[i].key) continue;
            Value item = fresh_argument(I, d->entries[i].val, depth + 1);
            if (IS_ERR(item)) { val_release(rv); return item; }
            dict_set(r, d->entries[i].key, item);
            val_release(item);
        }
        return rv;
    }
    return val_retain(v);
}

/* Makes a variable for every float tensor leaf of v, in walk order (leaves[]). */
static bool track_leaves(Interp *I, Tape *tp, Value v, int **leaves, int *n, int *cap, int depth) {
    if (depth > 1000) return interp_errork(I, ERRK_VALUE, "grad(): the argument is nested too deeply"), false;
    if (v.type == VAL_TENSOR && is_float(v.as.t->dtype)) {
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 8;
            *leaves = mem_realloc(*leaves, sizeof(int) * (size_t)*cap);
        }
        int found = tape_find(tp, v.as.t);
        if (found < 0 && (found = tape_var(tp, v.as.t)) < 0) return interp_op_error(I), false;
        (*leaves)[(*n)++] = found;
    } else if (v.type == VAL_LIST) {
        ObjList *l = AS_LIST(v);
        for (int i = 0; i < l->len; i++)
            if (!track_leaves(I, tp, l->items[i], leaves, n, cap, depth + 1)) return false;
    } else if (v.type == VAL_DICT) {
        ObjDict *d = AS_DICT(v);
        for (int i = 0; i < d->len; i++)
            if (d->entries[i].key && !track_leaves(I, tp, d->entries[i].val, leaves, n, cap, depth + 1)) return false;
    }
    return true;
}

/* The gradient tree of v: leaf k's gradient (zeros when none reached it), nil for
 * constants. */
static Value grad_tree(Interp *I, Tape *tp, Value v, const int *leaves, int *k) {
    if (v.type == VAL_TENSOR && is_float(v.as.t->dtype)) {
        Var *var = &tp->vars[leaves[(*k)++]];
        if (var->grad) return TENSOR_VAL(tensor_retain(var->grad));
        Shape s;
        shape_of(v.as.t, &s);
        Tensor *z = tensor_zeros(v.as.t->dtype, &s), *zd = z ? tensor_to(z, v.as.t->device) : NULL;   /* where v is */
        tensor_release(z);
        return zd ? TENSOR_VAL(zd) : interp_op_error(I);
    }
    if (v.type == VAL_LIST) {
        ObjList *l = AS_LIST(v);
        ObjList *r = list_new(l->len);
        Value rv = OBJ_VAL(VAL_LIST, r);
        for (int i = 0; i < l->len; i++) {
            Value g = grad_tree(I, tp, l->items[i], leaves, k);
            if (IS_ERR(g)) { val_release(rv); return g; }
            r->items[r->len++] = g;
        }
        return rv;
    }
    if (v.type == VAL_DICT) {
        ObjDict *d = AS_DICT(v);
        ObjDict *r = dict_new();
        Value rv = OBJ_VAL(VAL_DICT, r);
        for (int i = 0; i < d->len; i++) {
            if (!d->entries[i].key) continue;
            Value g = grad_tree(I, tp, d->entries[i].val, leaves, k);
            if (IS_ERR(g)) { val_release(rv); return g; }
            dict_set(r, d->entries[i].key, g);
            val_release(g);
        }
        return rv;
    }
    return NIL_VAL;
}

Value autograd_call(Interp *I, Value f, CallArgs *a, bool with_value) {
    const char *who = with_value ? "value_and_grad" : "grad";
    if (a->npos < 1) return interp_error(I, "%s(): the gradient function needs the argument to differentiate", who);
    Tape tp;
    memset(&tp, 0, sizeof tp);
    int *leaves = NULL, nleaves = 0, cap = 0;
    Value r = ERR_VAL, y = ERR_VAL;
    Value arg = fresh_argument(I, a->pos[0], 0);
    Value *pos = mem_alloc(sizeof(Value) * (size_t)a->npos);
    memcpy(pos, a->pos, sizeof(Value) * (size_t)a->npos);
    pos[0] = arg;
    CallArgs fa = *a;
    fa.pos = pos;
    if (IS_ERR(arg) || !track_leaves(I, &tp, arg, &leaves, &nleaves, &cap, 0)) goto out;
    bool no_static = I->no_static;
    I->no_static = true;   /* static code runs eagerly, so its ops are recorded */
    tp.outer = I->tape;
    I->tape = &tp;
    y = interp_call_args(I, f, &fa);
    I->tape = tp.outer;   /* backward runs with the enclosing tapes recording it */
    I->no_static = no_static;
    if (IS_ERR(y)) goto out;
    int yv = -1;
    if (y.type == VAL_TENSOR && is_float(y.as.t->dtype) && y.as.t->size == 1) {
        yv = tape_find(&tp, y.as.t);
    } else if (y.type == VAL_TENSOR) {
        Shape s;
        char buf[96];
        shape_of(y.as.t, &s);
        interp_errork(I, ERRK_TYPE, "%s(): f must return a one-element float tensor or a number, got a tensor of dtype %s and shape %s", who,
                     dtype_name(y.as.t->dtype), shape_str(&s, buf, sizeof buf));
        goto out;
    } else if (y.type != VAL_NUM) {
        interp_errork(I, ERRK_TYPE, "%s(): f must return a one-element float tensor or a number, got %s", who, val_type_name(y));
        goto out;
    }
    if (yv < 0 && tp.cut_by) {   /* zeros would be wrong: the result does depend on the argument */
        interp_error(I, GRAD_CUT_MSG, who, tp.cut_by, tp.cut_at.line, tp.cut_at.col);
        goto out;
    }
    if (yv >= 0 && backward(&tp, yv)) { interp_op_error(I); goto out; }
    int k = 0;
    Value g = grad_tree(I, &tp, arg, leaves, &k);
    if (IS_ERR(g)) goto out;
    if (!with_value) { r = g; goto out; }
    ObjList *l = list_new(2);
    l->items[l->len++] = val_retain(y);
    l->items[l->len++] = g;
    r = OBJ_VAL(VAL_LIST, l);
out:
    if (!IS_ERR(y)) val_release(y);
    if (!IS_ERR(arg)) val_release(arg);
    mem_free(pos);
    mem_free(leaves);
    tape_free(&tp);
    return r;
}

/* ---------- check_grad ---------- */

static bool value_as_number(Interp *I, Value y, double *out) {
    if (y.type == VAL_NUM) { *out = y.as.n; return true; }
    if (y.type == VAL_TENSOR && y.as.t->size == 1) {
        if (tensor_first(y.as.t, out)) return interp_op_error(I), false;   /* a GPU loss is copied */
        return true;
    }
    return interp_errork(I, ERRK_TYPE, "check_grad(): f must return a one-element float tensor or a number"), false;
}

/* f at x64 with element i moved by d. */
static bool f_at(Interp *I, Value f, Tensor *x64, int64_t i, double d, double *out) {
    Tensor *t = tensor_copy(x64);
    if (!t) return interp_op_error(I), false;
    tensor_set(t, i, tensor_get(t, i) + d);
    Value arg = TENSOR_VAL(t);
    Value y = interp_call(I, f, &arg, 1);
    tensor_release(t);
    if (IS_ERR(y)) return false;
    bool ok = value_as_number(I, y, out);
    val_release(y);
    return ok;
}

Value autograd_check_grad(Interp *I, Value f, Value x, double eps) {
    if (x.type != VAL_TENSOR || !is_float(x.as.t->dtype))
        return interp_errork(I, ERRK_TYPE, "check_grad(): x must be a float tensor, got %s", val_type_name(x));
    if (!(eps > 0)) return interp_errork(I, ERRK_VALUE, "check_grad(): eps must be a positive number");
    if (x.as.t->device != DEV_CPU)   /* it perturbs x element by element, on the host */
        return interp_errork(I, ERRK_DEVICE, "check_grad(): x must be on the CPU (to(x, \"cpu\"))");
    Tensor *x64 = tensor_astype(x.as.t, DT_F64);
    if (!x64) return interp_op_error(I);
    Value arg = TENSOR_VAL(x64);
    CallArgs ca = { &arg, 1, NULL, NULL, 0 };
    Value g = autograd_call(I, f, &ca, false);
    Value r = ERR_VAL;
    if (IS_ERR(g)) goto out;
    double worst = 0;
    for (int64_t i = 0; i < x64->size; i++) {
        double hi, lo;
        if (!f_at(I, f, x64, i, eps, &hi) || !f_at(I, f, x64, i, -eps, &lo)) goto out;
        double num = (hi - lo) / (2 * eps), an = tensor_get(g.as.t, i);
        double scale = fmax(1, fmax(fabs(num), fabs(an)));
        double err = fabs(an - num) / scale;
        if (err > worst || isnan(err)) worst = err;
    }
    r = NUM_VAL(worst);
out:
    if (!IS_ERR(g)) val_release(g);
    tensor_release(x64);
    return r;
}
