/* cgrad.c - grad and value_and_grad in static code (spec section 7).
 *
 * The static gradient is the eager one, replayed at compile time. While the compiler inlines
 * f, every OP instruction it emits with a tracked tensor operand is recorded on a compile-time
 * tape (cgrad_record, called by cc_emit_op), exactly where the eager tape records the same op
 * call (lang/autograd.c). Backward then walks that tape in reverse creation order and runs
 * the same rules (ops/grad.c) through a GradBuilder whose ops are emitted as instructions
 * instead of run, accumulating with the same adds in the same order. The backward graph is
 * therefore the eager computation written down, and the two agree bit for bit on the CPU.
 *
 * Registers play the part of the eager tape's tensors: a register maps to the newest tape
 * variable holding it. A tensor moved into a loop or branch home keeps its variable; an op on
 * a tracked value inside a run-time loop or branch is not compiled yet (the block then runs
 * eagerly, and says why). grad(grad(f)) nests tapes as eager code does: an inner backward's
 * ops are recorded on the outer tape. */
#include "comp.h"
#include "grad.h"

typedef struct {
    OpCode op;
    int nin;
    GVal x[8];         /* operands: tensor registers, numbers or number registers */
    int in_var[8];     /* tape variable of each operand, -1 none */
    OpAttrs at;
    GVal y;            /* the result (res[0]) */
    int out_var;
} CNode;

typedef struct {
    GVal grad;         /* the gradient so far (ok false: none yet) */
} CVar;

struct CTape {
    CVar *vars;
    int nvars, capvars;
    CNode *nodes;
    int nnodes, capnodes;
    int *var_of_reg;   /* register -> newest variable, -1 none */
    int nmap;
    int depth;         /* the compiler's run-time branch depth when the tape started */
    CTape *outer;
};

static bool is_float(DType dt) { return dt == DT_F32 || dt == DT_F64; }

static int var_of(const CTape *tp, int reg) { return reg >= 0 && reg < tp->nmap ? tp->var_of_reg[reg] : -1; }

static void map_reg(CTape *tp, int reg, int var) {
    if (reg >= tp->nmap) {
        int n = tp->nmap ? tp->nmap : 64;
        while (n <= reg) n *= 2;
        tp->var_of_reg = mem_realloc(tp->var_of_reg, sizeof(int) * (size_t)n);
        for (int i = tp->nmap; i < n; i++) tp->var_of_reg[i] = -1;
        tp->nmap = n;
    }
    tp->var_of_reg[reg] = var;
}

/* A new variable for register reg; reg now maps to it. */
static int new_var(CTape *tp, int reg) {
    GROW(tp->vars, tp->nvars, tp->capvars);
    tp->vars[tp->nvars] = (CVar){ gb_none() };
    map_reg(tp, reg, tp->nvars);
    return tp->nvars++;
}

static void tape_free(CTape *tp) {
    mem_free(tp->vars);
    mem_free(tp->nodes);
    mem_free(tp->var_of_reg);
}

/* The handle of a compiled operand: a tensor register, a constant number, or a number
 * register (a number only known at run time). */
static GVal gval_of(Comp *c, AVal *v) {
    if (v->kind == AV_TENSOR) return gb_reg(v->reg, v->dtype, &v->shape);
    if (v->kind == AV_NUM && v->known && !v->deps) return gb_num(v->num);
    if (v->kind == AV_NUM) return (GVal){ .reg = cc_num_reg(c, v), .is_num = true };
    return gb_none();
}

static AVal aval_of(GVal v) {
    if (v.is_num && v.reg < 0) return cc_num_const(v.x);
    if (v.is_num) return (AVal){ .kind = AV_NUM, .reg = v.reg };
    return (AVal){ .kind = AV_TENSOR, .reg = v.reg, .dtype = v.dtype, .shape = v.shape };
}

static void record_on(Comp *c, CTape *tp, OpCode op, AVal *ops, int n, const OpAttrs *at, AVal *res) {
    bool any = false;
    for (int i = 0; i < n && !any; i++) any = ops[i].kind == AV_TENSOR && var_of(tp, ops[i].reg) >= 0;
    if (!any) return;
    if (c->branch_depth > tp->depth) {
        cc_unsupported(c, "a gradient through a loop or branch decided at run time is not compiled yet");
        return;
    }
    if (n > 8) {
        cc_unsupported(c, "a gradient through %s of more than 8 operands", op_info[op].name);
        return;
    }
    GROW(tp->nodes, tp->nnodes, tp->capnodes);
    CNode *nd = &tp->nodes[tp->nnodes++];
    nd->op = op;
    nd->nin = n;
    nd->at = *at;
    for (int i = 0; i < n; i++) {
        nd->x[i] = gval_of(c, &ops[i]);
        nd->in_var[i] = ops[i].kind == AV_TENSOR && is_float(ops[i].dtype) ? var_of(tp, ops[i].reg) : -1;
    }
    nd->y = gval_of(c, &res[0]);
    nd->out_var = new_var(tp, res[0].reg);   /* multi-result ops: only the first, as eagerly */
}

void cgrad_record(Comp *c, OpCode op, AVal *ops, int n, const OpAttrs *at, AVal *res) {
    if (res[0].kind != AV_TENSOR || !is_float(res[0].dtype)) return;   /* carries no gradient */
    for (CTape *tp = c->tape; tp && !c->failed; tp = tp->outer) record_on(c, tp, op, ops, n, at, res);
}

/* A tensor moved into a loop or branch home: the home holds the same variable. */
void cgrad_move(Comp *c, int dst, int src) {
    for (CTape *tp = c->tape; tp; tp = tp->outer) {
        int v = var_of(tp, src);
        if (v >= 0 && c->branch_depth > tp->depth) {
            cc_unsupported(c, "a gradient through a loop or branch decided at run time is not compiled yet");
            return;
        }
        if (v >= 0 || var_of(tp, dst) >= 0) map_reg(tp, dst, v);
    }
}

bool cgrad_tracked(Comp *c, int reg) {
    for (CTape *tp = c->tape; tp; tp = tp->outer)
        if (var_of(tp, reg) >= 0) return true;
    return false;
}

/* ---------- the static builder ---------- */

static GVal emit(GradBuilder *b, OpCode op, const GVal *in, int n, const OpAttrs *at) {
    Comp *c = b->ctx;
    AVal a[4];
    for (int i = 0; i < n; i++) a[i] = aval_of(in[i]);
    AVal r = cc_emit_op(c, op, a, n, at);
    if (c->failed) return gb_none();
    if (r.kind == AV_LIST) r = r.st->items[0];
    if (r.kind == AV_NUM) return r.known && !r.deps ? gb_num(r.num) : (GVal){ .reg = cc_num_reg(c, &r), .is_num = true };
    return gb_reg(r.reg, r.dtype, &r.shape);
}

/* dst += g, as eager's accumulate: the first contribution is taken as it is. */
static void accumulate(GradBuilder *b, GVal *dst, GVal g) { *dst = dst->ok ? gb_add(b, *dst, g) : g; }

/* A constant tensor of shape s filled with v. */
static GVal filled(Comp *c, const Shape *s, double v, DType dt) {
    Tensor *t = op_full(s, v, dt);
    if (!t) return cc_op_failed(c), gb_none();
    AVal r = cc_tensor_const(c, t);
    return gb_reg(r.reg, r.dtype, &r.shape);
}

/* Backward from variable y of tp, seeded with ones. false: compilation failed. */
static bool backward(Comp *c, CTape *tp, int y, GVal yv) {
    tp->vars[y].grad = filled(c, &yv.shape, 1, yv.dtype);
    GradBuilder b;
    gb_init(&b);
    b.emit = emit;
    b.ctx = c;
    for (int k = tp->nnodes - 1; k >= 0 && !c->failed; k--) {
        CNode *nd = &tp->nodes[k];
        GVal gy = tp->vars[nd->out_var].grad;
        if (!gy.ok) continue;
        GVal gx[8];
        bool needs[8];
        OpArg in[8];
        for (int i = 0; i < nd->nin; i++) {
            needs[i] = nd->in_var[i] >= 0;
            gx[i] = gb_none();
            in[i] = nd->x[i].is_num ? op_arg_num(nd->x[i].x, false)
                    : nd->x[i].ok  ? op_arg_meta(nd->x[i].dtype, &nd->x[i].shape)
                                   : (OpArg){ .kind = ARG_NONE };
        }
        OpCall call = { nd->op, nd->nin, in, &nd->at };
        GradCtx g = { &b, &call, nd->x, nd->y, gy, needs, gx };
        int rc = grad_backward(&g);
        if (c->failed) break;
        if (rc) {   /* no rule (yet): eager code reports it at the user's line */
            cc_unsupported(c, "%s", op_error());
            break;
        }
        for (int i = 0; i < nd->nin && !c->failed; i++)
            if (needs[i] && gx[i].ok) accumulate(&b, &tp->vars[nd->in_var[i]].grad, gx[i]);
    }
    gb_free(&b);
    return !c->failed;
}

/* ---------- gradient trees ---------- */

/* Makes a variable for every float tensor leaf of v, in walk order (as eager's track_leaves). */
static void track_leaves(Comp *c, CTape *tp, AVal *v, int **leaves, int *n, int *cap) {
    if (v->kind == AV_TENSOR && is_float(v->dtype)) {
        GROW(*leaves, *n, *cap);
        int found = var_of(tp, v->reg);
        (*leaves)[(*n)++] = found >= 0 ? found : new_var(tp, v->reg);
    } else if (v->kind == AV_LIST || v->kind == AV_DICT) {
        for (int i = 0; i < v->st->n && !c->failed; i++) track_leaves(c, tp, &v->st->items[i], leaves, n, cap);
    }
}

/* The gradient tree of v: each float leaf's gradient (zeros when none reached it), nil for
 * constants; same list lengths, same dict keys in the same order. */
static AVal grad_tree(Comp *c, CTape *tp, AVal *v, const int *leaves, int *k) {
    if (v->kind == AV_TENSOR && is_float(v->dtype)) {
        GVal g = tp->vars[leaves[(*k)++]].grad;
        if (!g.ok) g = filled(c, &v->shape, 0, v->dtype);
        return c->failed ? FAILV : aval_of(g);
    }
    if (v->kind == AV_LIST || v->kind == AV_DICT) {
        AStruct *st = cc_astruct_new(c, v->kind == AV_DICT);
        for (int i = 0; i < v->st->n; i++) {
            AVal g = grad_tree(c, tp, &v->st->items[i], leaves, k);
            if (c->failed) return FAILV;
            cc_astruct_push(c, st, v->kind == AV_DICT ? v->st->keys[i] : NULL, g);
        }
        return (AVal){ .kind = v->kind, .st = st, .reg = -1 };
    }
    return cc_const_av(NIL_VAL);
}

/* grad(f) of a function value when compiling: a closure-like value that differentiates f
 * when called (it cannot leave the static code: cc_opnd_of refuses it). */
AVal cgrad_make(Comp *c, AVal f, bool with_value) {
    CClosure *cl = cc_arena_alloc(c, sizeof *cl);
    memset(cl, 0, sizeof *cl);
    cl->grad_of = cc_arena_alloc(c, sizeof *cl->grad_of);
    cl->grad_of->v = f;
    cl->with_value = with_value;
    return (AVal){ .kind = AV_CLOSURE, .cl = cl, .reg = -1 };
}

/* The result y of f: a one-element float tensor or a number, as eager code requires. */
static bool check_result(Comp *c, AVal *y, const char *who) {
    if (y->kind == AV_NUM) return true;
    if (y->kind == AV_TENSOR && is_float(y->dtype) && shape_count(&y->shape) == 1) return true;
    cc_unsupported(c, "%s(): f does not return a one-element float tensor or a number", who);   /* eager says it exactly */
    return false;
}

AVal cgrad_call(Comp *c, AVal f, bool with_value, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, SrcLoc loc) {
    const char *who = with_value ? "value_and_grad" : "grad";
    if (nargs < 1) return cc_unsupported(c, "%s(): no argument to differentiate", who);
    CTape tp;
    memset(&tp, 0, sizeof tp);
    tp.depth = c->branch_depth;
    int *leaves = NULL, nleaves = 0, cap = 0;
    AVal r = FAILV;
    track_leaves(c, &tp, &args[0], &leaves, &nleaves, &cap);
    tp.outer = c->tape;
    c->tape = &tp;
    AVal y = cc_call_value(c, f, args, nargs, kwn, kw, nkw, loc);
    c->tape = tp.outer;   /* backward is recorded on the enclosing tapes, as eagerly */
    c->loc = loc;
    if (c->failed || !check_result(c, &y, who)) goto out;
    int yv = y.kind == AV_TENSOR ? var_of(&tp, y.reg) : -1;
    if (yv >= 0 && !backward(c, &tp, yv, gval_of(c, &y))) goto out;
    int k = 0;
    AVal g = grad_tree(c, &tp, &args[0], leaves, &k);
    if (c->failed) goto out;
    if (!with_value) {
        r = g;
        goto out;
    }
    AStruct *st = cc_astruct_new(c, false);
    cc_astruct_push(c, st, NULL, y);
    cc_astruct_push(c, st, NULL, g);
    r = (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
out:
    mem_free(leaves);
    tape_free(&tp);
    return c->failed ? FAILV : r;
}
