/* cbuiltins.c - built-in functions in static code. Every op of ops.def compiles the same
 * way (cc_call_op: the eager binding and attribute rules, op_infer for shapes and dtypes,
 * one OP instruction). A built-in that is not an op compiles by the rule its table row
 * gives (BuiltinDef.stat, lang/builtins.h, read through ObjBuiltin.def, never its name):
 * the pure ones (ST_FOLDS) fold at compile time through their eager implementation;
 * print/assert act in program order. Arguments bind by the row's signature, with eager's
 * binder and messages (bind_row); a rule whose argument kinds do not fit, and anything else,
 * is reported unsupported (the code then runs eagerly, with eager's messages, and
 * TSL_EXPLAIN says why). */
#include "comp.h"
#include "einsum.h"
#include "opargs.h"
#include "dist.h"

/* ---------- built-ins ---------- */

/* Binds a call of built-in b by its row's signature, with the binder and messages of eager
 * built-ins (lang/builtins.c): v[i] is parameter i's argument, AV_NONE when omitted. false when
 * the signature is not a plain list (nothing bound) or on an error (c->failed). */
static bool bind_row(Comp *c, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, AVal *v) {
    const char *params[ARGS_MAX + 1];
    char buf[128], err[300];
    int which[ARGS_MAX];
    int nreq = builtin_params(b->def, params, buf, sizeof buf);
    if (nreq < 0) return false;
    if (!args_match(b->name, params, nreq, nargs, (const char *const *)kwn, nkw, which, err, sizeof err)) {
        cc_error_atk(c, ERRK_TYPE, c->loc, "%s", err);
        return false;
    }
    for (int i = 0; params[i]; i++) v[i] = which[i] < 0 ? FAILV : which[i] < nargs ? args[which[i]] : kw[which[i] - nargs];
    return true;
}

/* Calls a pure built-in now, on compile-time values (constant folding, same code as eager). */
static bool fold_builtin(Comp *c, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, AVal *out) {
    Value vals[16];
    if (nargs + nkw > 16) return false;
    for (int i = 0; i < nargs + nkw; i++)
        if (!cc_pure_value(c, i < nargs ? &args[i] : &kw[i - nargs], &vals[i])) return false;
    CallArgs ca = { vals, nargs, kwn, vals + nargs, nkw };
    *out = cc_folded(c, builtin_run(c->I, b, &ca), c->loc);
    return true;
}

Opnd cc_opnd_of(Comp *c, AVal v);

/* A keyword argument of print known while compiling, as a value. */
static bool print_option_value(const AVal *v, Value *out) {
    if (v->kind == AV_CONST) { *out = v->k; return true; }
    if (v->kind == AV_NUM && v->known) { *out = v->is_bool ? BOOL_VAL(v->num != 0) : NUM_VAL(v->num); return true; }
    return false;
}

/* print(values, sep=, end=, file=, flush=) and flush() (as print(end="", flush=true)): one
 * PRINT instruction; with options, aux is 1 + PRINT_STDERR/PRINT_FLUSH and the last two
 * operands are sep and end (vm_print). The options must be known while compiling. */
static AVal builtin_print(Comp *c, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, bool flush_only) {
    PrintOpts o;
    char err[200];
    Value vals[ARGS_MAX];
    if (nkw > ARGS_MAX) return cc_unsupported(c, "print() with more than %d keyword arguments", ARGS_MAX);
    for (int i = 0; i < nkw; i++)
        if (!print_option_value(&kw[i], &vals[i])) return cc_unsupported(c, "print()'s %s made at run time", kwn[i]);
    if (!print_options(kwn, vals, nkw, &o, err, sizeof err)) return cc_error_atk(c, ERRK_TYPE, c->loc, "%s", err);
    if (flush_only) o = (PrintOpts){ " ", "", 1, 0, false, true };
    bool opts = nkw || flush_only;
    Ins *in = cc_emit(c, I_PRINT);
    int at = (int)(in - c->g->code);
    Opnd *ops = mem_calloc((size_t)nargs + 3, sizeof(Opnd));
    for (int i = 0; i < nargs; i++) ops[i] = cc_opnd_of(c, args[i]);
    if (opts) {
        ops[nargs] = (Opnd){ .kind = OPND_CONST, .k = val_str(o.sep, o.sep_len) };
        ops[nargs + 1] = (Opnd){ .kind = OPND_CONST, .k = val_str(o.end, o.end_len) };
    }
    in = &c->g->code[at];
    in->opnds = ops;
    in->nopnds = nargs + (opts ? 2 : 0);
    in->aux = opts ? 1 + (o.to_stderr ? PRINT_STDERR : 0) + (o.flush ? PRINT_FLUSH : 0) : 0;
    return cc_const_av(NIL_VAL);
}

static AVal builtin_assert(Comp *c, AVal *v) {
    int reg = -1, t = cc_truth(c, v[0], &reg, c->loc);
    if (c->failed) return FAILV;
    if (t == 1) return cc_const_av(NIL_VAL);
    if (t == 0) reg = cc_num_reg(c, &(AVal){ .kind = AV_NUM, .known = true, .num = 0, .reg = -1, .is_bool = true });
    Ins *in = cc_emit(c, I_ASSERT);
    int at = (int)(in - c->g->code);
    Opnd *msg = NULL;
    if (v[1].kind != AV_NONE) {
        msg = mem_calloc(1, sizeof(Opnd));
        *msg = cc_opnd_of(c, v[1]);
    }
    in = &c->g->code[at];
    in->a = reg;
    in->opnds = msg;
    in->nopnds = msg ? 1 : 0;
    return cc_const_av(NIL_VAL);
}

/* A number where eager code makes a tensor: a 0-d tensor of dtype dt (f32 unless the
 * built-in says otherwise), as interp_to_tensor does. */
static AVal number_tensor(Comp *c, AVal v, DType dt) {
    Shape s0 = { 0, { 0 } };
    int xr = cc_num_reg(c, &v);
    AVal t = cc_tensor_av(c, dt, &s0);
    Ins *in = cc_emit(c, I_SCALAR);
    in->dst = t.reg;
    in->a = xr;
    in->aux = dt;
    return t;
}

/* ---------- ops of the table ---------- */

/* Whether an input list's items at this point of the code are the ones the compiler tracks:
 * nothing stored into it with a run-time key, pushed to or deleted from it at run time.
 * (`padding=p` with p = [1, 2] read from a variable, or nn.conv2d's `self.padding`.) */
static bool input_items_known(const AStruct *st) {
    return !st->grown && !st->items_unknown && !st->shrunk && !st->ta;
}

/* An attribute's value, which static code needs when compiling: numbers computed from
 * number inputs become guards (their value is checked at each run), as loop bounds do. */
static bool const_value(Comp *c, AVal *v, const char *what, Value *out) {
    if (v->kind == AV_NUM) {
        double x;
        if (!cc_need_const(c, v, &x, what)) return false;
        *out = v->is_bool ? BOOL_VAL(x != 0) : NUM_VAL(x);
        return true;
    }
    if (v->kind == AV_LIST && ca_is_open(v->st)) {
        ca_read_open(c);
        return false;
    }
    if (v->kind == AV_LIST && (v->st->obj < 0 || input_items_known(v->st))) {
        ObjList *l = list_new(v->st->n);
        *out = cc_keep_value(c, OBJ_VAL(VAL_LIST, l));
        for (int i = 0; i < v->st->n; i++) {
            Value x;
            if (!const_value(c, &v->st->items[i], what, &x)) return false;
            list_push(l, x);
        }
        return true;
    }
    if (cc_pure_value(c, v, out)) return true;
    cc_unsupported(c, "%s is not known when compiling", what);
    return false;
}

/* Whether the value of run-time number operand k decides the call's result dtypes (an i64
 * tensor beside 2 stays i64, beside 2.5 becomes f32): the inference is asked with an
 * integral and a non-integral sample. Then the number must be known when compiling. */
static bool number_decides_dtype(OpCall *call, int k) {
    OpArg *in = (OpArg *)&call->in[k];
    double saved = in->x;
    Shape s[OP_MAX_OUT];
    DType d1[OP_MAX_OUT], d2[OP_MAX_OUT];
    in->x = 1;
    int r1 = cs_op_infer(call, s, d1);   /* op_infer, also over run-time shapes */
    in->x = 0.5;
    int r2 = cs_op_infer(call, s, d2);
    in->x = saved;
    return r1 != r2 || (r1 == 0 && memcmp(d1, d2, sizeof(DType) * (size_t)op_info[call->op].nout));
}

/* A number operand where the op takes numbers as numbers (F_NUM ops on numbers only). */
static AVal number_op(Comp *c, OpCode op, AVal *ops, int n, const OpAttrs *at) {
    AVal r = { .kind = AV_NUM, .known = true, .reg = -1 };
    OpArg in[2];
    for (int k = 0; k < n; k++) {
        r.known &= ops[k].known;
        r.deps |= ops[k].deps;
        in[k] = op_arg_num(ops[k].num, ops[k].is_bool);
    }
    r.is_bool = op_number_is_bool(op, in, n);
    if (r.known) {
        int rc = op_run_number(op, in, n, at, &r.num);
        if (rc == -2) return cc_op_failed(c);
        if (!r.deps) return r;
    }
    int ra = cc_num_reg(c, &ops[0]), rb = n > 1 ? cc_num_reg(c, &ops[1]) : -1;
    Ins *in2 = cc_emit(c, n == 1 ? I_NMATH : I_NBIN);
    in2->dst = r.reg = cc_new_num(c, r.is_bool);
    in2->a = ra;
    in2->b = rb;
    in2->aux = (int)op;
    in2->imm = op == OP_ROUND ? (double)at->i[0] : 0;   /* round(x, decimals) */
    r.known = false;
    return r;
}

/* Emits one OP instruction: operands are tensors, numbers (weak scalars) or absent (kind
 * AV_NONE); the results' shapes and dtypes come from op_infer, with eager's messages. */
AVal cc_emit_op(Comp *c, OpCode op, AVal *ops, int n, const OpAttrs *at_in) {
    const OpDef *d = op_def(op);
    OpAttrs at;
    if (at_in) {
        at = *at_in;
    } else {
        memset(&at, 0, sizeof at);   /* byte-equal attributes compare equal (CSE) */
        opargs_attrs_init(op, &at);
    }
    bool all_numbers = n > 0;
    for (int k = 0; k < n; k++) all_numbers &= ops[k].kind == AV_NUM;
    if (all_numbers && (d->flags & F_NUM)) return number_op(c, op, ops, n, &at);
    OpArg *in = cc_arena_alloc(c, sizeof(OpArg) * (size_t)(n + 1));
    int *regs = mem_alloc(sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n; k++) {
        AVal *v = &ops[k];
        if (v->kind == AV_TENSOR) {
            in[k] = op_arg_meta(v->dtype, &v->shape);
            regs[k] = v->reg;
        } else if (v->kind == AV_NUM) {
            in[k] = op_arg_num(v->num, v->is_bool);
            regs[k] = cc_num_reg(c, v);
        } else {
            in[k] = (OpArg){ .kind = ARG_NONE };
            regs[k] = -1;
        }
    }
    OpCall call = { op, n, in, &at };
    for (int k = 0; k < n; k++) {
        AVal *v = &ops[k];
        if (v->kind == AV_NUM && (!v->known || v->deps) && number_decides_dtype(&call, k) &&
            !cc_need_const(c, v, &in[k].x, "a number combined with an integer tensor")) {
            mem_free(regs);
            return FAILV;
        }
    }
    Shape so[OP_MAX_OUT];
    DType dt[OP_MAX_OUT];
    if ((d->flags & F_DYNAMIC) || cs_any_runtime(ops, n)) {   /* a run-time shape (cshape.c) */
        if (cs_infer(c, &call, so, dt)) {
            mem_free(regs);
            return FAILV;
        }
    } else if (op_infer(&call, so, dt)) {
        mem_free(regs);
        return cc_op_failed(c);
    }
    AVal res[OP_MAX_OUT];
    for (int k = 0; k < d->nout; k++) res[k] = cc_tensor_av(c, dt[k], &so[k]);
    Ins *ins = cc_emit(c, I_OP);
    ins->aux = op;
    ins->args = regs;
    ins->nargs = n;
    ins->attrs = mem_alloc(sizeof at);
    *ins->attrs = at;
    ins->dst = res[0].reg;
    ins->nres = d->nout;
    for (int k = 0; k < d->nout; k++) ins->res[k] = res[k].reg;
    if (c->tape) cgrad_record(c, op, ops, n, &at, res);
    if (d->flags & F_ITEM) {   /* the built-in gives the one element as a number or bool */
        AVal r = { .kind = AV_NUM, .reg = cc_new_num(c, dt[0] == DT_BOOL) };
        Ins *it = cc_emit(c, I_ITEM);
        it->dst = r.reg;
        it->a = res[0].reg;
        r.is_bool = dt[0] == DT_BOOL;
        return r;
    }
    if (d->nout == 1) return res[0];
    AStruct *st = cc_astruct_new(c, false);
    for (int k = 0; k < d->nout; k++) cc_astruct_push(c, st, NULL, res[k]);
    return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
}

/* A value where the op wants a tensor: tensors and (weak) numbers as they are; a list
 * literal or constant made into a constant tensor as eager's tensor() makes it. */
static bool tensor_operand(Comp *c, OpCode op, int p, AVal *v) {
    const OpDef *d = op_def(op);
    ParamType t = d->params[p].type;
    if (v->kind == AV_TENSOR) return true;
    if (v->kind == AV_CONST && !opargs_check_operand(c->I, op, p, v->k)) {
        cc_error_at(c, c->loc, "%s", c->I->err_msg);
        return false;
    }
    bool weak = op_param_takes_number(d, t);
    if (v->kind == AV_NUM) {
        if (!weak) *v = number_tensor(c, *v, v->is_bool ? DT_BOOL : DT_F32);
        return true;
    }
    Value x;
    if (v->kind == AV_LIST && cc_pure_value(c, v, &x)) {
        *v = cc_folded(c, interp_to_tensor(c->I, x, -1), c->loc);
        return !c->failed;
    }
    if (v->kind == AV_CONST && v->k.type != VAL_NIL) {
        cc_folded(c, interp_to_tensor(c->I, v->k, -1), c->loc);
        if (!c->failed) cc_unsupported(c, "%s() of a %s", d->name, val_type_name(v->k));
        return false;
    }
    cc_unsupported(c, "%s() with an argument computed at run time that is not a tensor or a number", d->name);
    return false;
}

/* A call of an op's built-in: the same binding and attribute rules as eager code
 * (op_bind, opargs_attr), then one OP instruction. */
AVal cc_call_op(Comp *c, OpCode op, AVal *args, int nargs, char **kwn, AVal *kw, int nkw) {
    const OpDef *d = op_def(op);
    AVal joined;
    if (ca_join(c, op, args, nargs, kwn, kw, nkw, &joined)) return joined;   /* a tensor list's buffer */
    int which[OP_MAX_PARAMS];
    if (op_bind(op, nargs, (const char *const *)kwn, nkw, which)) return cc_error_at(c, c->loc, "%s", op_error());
    OpAttrs at;
    memset(&at, 0, sizeof at);   /* byte-equal attributes compare equal (CSE) */
    opargs_attrs_init(op, &at);
    int cap = d->noperands;
    for (int p = 0; p < d->nparams; p++)   /* a list of tensors is that many operands */
        if (d->params[p].type == P_TS && which[p] >= 0) {
            AVal *v = which[p] < nargs ? &args[which[p]] : &kw[which[p] - nargs];
            if (v->kind == AV_LIST) cap += cc_struct_n(c, v->st);
        }
    AVal *ops = cc_arena_alloc(c, sizeof(AVal) * (size_t)(cap + 1));
    int n = 0;
    for (int p = 0; p < d->nparams; p++) {
        const OpParam *pp = &d->params[p];
        AVal *v = which[p] < 0 ? NULL : which[p] < nargs ? &args[which[p]] : &kw[which[p] - nargs];
        if (pp->type == P_TS) {
            if (!v || v->kind != AV_LIST) return cc_error_atk(c, ERRK_TYPE, c->loc, "%s() needs a list of tensors", d->name);
            if (ca_is_open(v->st)) return ca_read_open(c);
            if (v->st->n > 256) return cc_unsupported(c, "%s of more than 256 tensors", d->name);
            for (int i = 0; i < v->st->n; i++) {
                ops[n] = v->st->items[i];
                if (!tensor_operand(c, op, p, &ops[n++])) return FAILV;
            }
        } else if (pp->type == P_T || pp->type == P_TOPT || pp->type == P_N) {
            if (!v || (pp->type == P_TOPT && v->kind == AV_CONST && v->k.type == VAL_NIL)) {
                ops[n++] = pp->type == P_N || (pp->type == P_T && !pp->default_nil) ? cc_num_const(pp->default_num) : FAILV;
                continue;
            }
            ops[n] = *v;
            if (!tensor_operand(c, op, p, &ops[n++])) return FAILV;
        } else if (v) {
            Value x;
            char what[96];
            snprintf(what, sizeof what, "%s()'s argument '%s'", d->name, pp->name);
            if (!const_value(c, v, what, &x)) return FAILV;
            if (!opargs_attr(c->I, op, p, x, &at)) return cc_error_at(c, c->loc, "%s", c->I->err_msg);
        }
    }
    op = opargs_variant(op, &at);
    return cc_emit_op(c, op, ops, n, &at);
}
/* to(t, device) of a tensor: the eager built-in on a stand-in tensor says whether the device is
 * available; static graphs run on the CPU, so moving to the GPU is eager code's. */
static AVal builtin_to(Comp *c, ObjBuiltin *b, AVal *v) {
    Value probe[2] = { TENSOR_VAL(tensor_scalar(DT_F32, 0)), v[1].k };
    CallArgs ca = { probe, 2, NULL, NULL, 0 };
    Value x = builtin_run(c->I, b, &ca);
    val_release(probe[0]);
    if (IS_ERR(x)) return cc_folded(c, x, c->loc);
    bool gpu = x.type == VAL_TENSOR && x.as.t->device != DEV_CPU;
    val_release(x);
    return gpu ? cc_unsupported(c, "to() a GPU (static graphs run on the CPU only, so far)") : v[0];
}

/* item(x) or float(x) of a tensor or number known only at run time. */
static AVal builtin_item(Comp *c, int rule, const char *name, AVal x, SrcLoc loc) {
    if (x.kind == AV_NUM) return x;
    if (shape_is_runtime(&x.shape))   /* its element count is the run's: eager checks it */
        return cc_unsupported(c, "%s() of a value whose shape is known only at run time", name);
    if (shape_count(&x.shape) != 1) {
        char m[128];
        return cc_error_at(c, loc, "%s", one_element_message(m, sizeof m, name, shape_count(&x.shape)));
    }
    if (cgrad_tracked(c, x.reg)) cgrad_cut(c, name, loc);
    AVal r = { .kind = AV_NUM, .reg = cc_new_num(c, x.dtype == DT_BOOL && rule == ST_ITEM) };
    Ins *in = cc_emit(c, I_ITEM);
    in->dst = r.reg;
    in->a = x.reg;
    r.is_bool = c->g->regs[r.reg].is_bool;
    return r;
}

/* tolist(x) of a tensor whose shape is known: nested lists the compiler knows (their lengths
 * are x's shape), each number one element of x read when the block runs (an index, then
 * item() of it: the same double eager's tolist reads). Each element costs two instructions, so
 * only small tensors; a larger one runs eagerly. */
enum { TOLIST_MAX = 256 };

static AVal tolist_level(Comp *c, AVal x, int dim, int64_t *pos) {
    if (dim < x.shape.ndim) {
        AStruct *st = cc_astruct_new(c, false);
        for (pos[dim] = 0; pos[dim] < x.shape.d[dim]; pos[dim]++) {
            AVal item = tolist_level(c, x, dim + 1, pos);
            if (c->failed) return FAILV;
            cc_astruct_push(c, st, NULL, item);
        }
        return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
    }
    AVal e = x;
    if (x.shape.ndim > 0) {   /* x[pos]: a 0-d tensor */
        IndexItem *items = mem_calloc((size_t)x.shape.ndim, sizeof(IndexItem));
        int *regs = mem_alloc(sizeof(int) * (size_t)x.shape.ndim);
        for (int k = 0; k < x.shape.ndim; k++) {
            items[k].kind = IDX_INT;   /* field by field: CSE compares the bytes (calloc's zero padding) */
            items[k].i = pos[k];
            regs[k] = -1;
        }
        Shape s0 = { 0, { 0 } };
        e = cc_tensor_av(c, x.dtype, &s0);
        Ins *in = cc_emit(c, I_INDEX);
        in->dst = e.reg;
        in->a = x.reg;
        in->idx = items;
        in->nidx = in->nargs = x.shape.ndim;
        in->args = regs;
    }
    AVal r = { .kind = AV_NUM, .reg = cc_new_num(c, x.dtype == DT_BOOL) };
    Ins *in = cc_emit(c, I_ITEM);
    in->dst = r.reg;
    in->a = e.reg;
    r.is_bool = x.dtype == DT_BOOL;
    return r;
}

static AVal builtin_tolist(Comp *c, AVal x, SrcLoc loc) {
    if (x.kind != AV_TENSOR) return FAILV;   /* eager's error */
    if (shape_is_runtime(&x.shape)) return cc_unsupported(c, "tolist() of a tensor whose shape is known only at run time");
    if (shape_count(&x.shape) > TOLIST_MAX)
        return cc_unsupported(c, "tolist() of a tensor of more than %d elements", TOLIST_MAX);
    if (cgrad_tracked(c, x.reg)) cgrad_cut(c, "tolist", loc);
    int64_t pos[TSL_MAX_RANK];
    return tolist_level(c, x, 0, pos);
}

/* A sort key known when compiling (a number that depends on guards makes them exact). Other
 * constants pass as they are: sorted()'s own error refuses them. */
static bool known_key(Comp *c, AVal *k, Value *out) {
    if (k->kind == AV_CONST) { *out = k->k; return true; }
    if (k->kind != AV_NUM || !k->known) return false;
    double x;
    if (!cc_need_const(c, k, &x, "a sort key")) return false;
    *out = k->is_bool ? BOOL_VAL(x != 0) : NUM_VAL(x);
    return true;
}

/* sorted(l, key=f) of a list whose items the compiler knows: f inlined once per item, in
 * order, as eager calls it, and the order found while compiling when every key is known then
 * (len of known strings, a field of known dicts, numbers the guards fix). The items may be
 * anything (tensors are moved, not read). Keys made at run time run eagerly. */
static AVal builtin_sorted_key(Comp *c, AVal *v, SrcLoc loc) {
    bool fn = (v[1].kind == AV_CONST && v[1].k.type == VAL_FUNC) || v[1].kind == AV_CLOSURE;
    if (v[0].kind != AV_LIST || v[0].st->items_unknown || !fn) return FAILV;   /* eager's error, or key=nil */
    bool reverse = false;
    if (v[2].kind != AV_NONE) {
        Value r;
        if (!known_key(c, &v[2], &r)) return c->failed ? FAILV : cc_unsupported(c, "sorted() with reverse= known only at run time");
        reverse = val_truthy_simple(r);
    }
    AStruct *st = v[0].st;
    int n = cc_struct_n(c, st);
    if (c->failed) return FAILV;
    AVal *items = cc_arena_alloc(c, sizeof(AVal) * (size_t)(n + 1));   /* a key may change the list */
    memcpy(items, st->items, sizeof(AVal) * (size_t)n);
    Value *keys = mem_alloc(sizeof(Value) * (size_t)(n + 1));
    int *order = mem_alloc(sizeof(int) * (size_t)(n + 1));
    AVal r = FAILV;
    for (int i = 0; i < n; i++) {
        AVal k = cc_call_value(c, v[1], &items[i], 1, NULL, NULL, 0, loc);
        if (c->failed) goto out;
        if (!known_key(c, &k, &keys[i])) {
            if (!c->failed) cc_unsupported(c, "sorted() with a key whose results are known only at run time");
            goto out;
        }
    }
    if (!list_sort_order(c->I, keys, n, reverse, order)) {
        cc_folded(c, ERR_VAL, loc);
        goto out;
    }
    AStruct *sorted = cc_astruct_new(c, false);
    for (int i = 0; i < n; i++) cc_astruct_push(c, sorted, NULL, items[order[i]]);
    r = (AVal){ .kind = AV_LIST, .st = sorted, .reg = -1 };
out:
    mem_free(keys);
    mem_free(order);
    return r;
}

/* insert(l, i, x) into a list the static code made. */
static AVal builtin_insert(Comp *c, AVal *v, SrcLoc loc) {
    AStruct *st = v[0].st;
    double x;
    if (!cc_need_const(c, &v[1], &x, "insert()'s index")) return FAILV;
    if (x != floor(x)) return cc_error_atk(c, ERRK_TYPE, loc, "insert(): 'i' must be an integer, got %g", x);
    if (x < 0) x += st->n;   /* clamped to the ends, as eagerly */
    int at = x < 0 ? 0 : x > st->n ? st->n : (int)x;
    cc_astruct_push(c, st, NULL, v[2]);
    memmove(st->items + at + 1, st->items + at, sizeof(AVal) * (size_t)(st->n - 1 - at));
    st->items[at] = v[2];
    return cc_const_av(NIL_VAL);
}

/* tensor(list) of numbers that are known only at run time (globals such as nan and pi, a
 * loop's values): each element a 0-d tensor converted by I_SCALAR as eager's tensor() converts
 * it (the same errors for NaN or out-of-range to i64), stacked level by level. A list eager
 * would refuse (ragged, holding tensors or strings) is left to eager code (FAILV). */
static bool numbers_dtype(Comp *c, AVal *v, bool *all_bool) {
    if (v->kind == AV_NUM) { *all_bool &= v->is_bool; return true; }
    if (v->kind == AV_CONST && (v->k.type == VAL_NUM || v->k.type == VAL_BOOL)) {
        *all_bool &= v->k.type == VAL_BOOL;
        return true;
    }
    if (v->kind != AV_LIST || ca_is_open(v->st) || (v->st->obj >= 0 && !input_items_known(v->st))) return false;
    int n = cc_struct_n(c, v->st);
    for (int i = 0; i < n; i++)
        if (!numbers_dtype(c, &v->st->items[i], all_bool)) return false;
    return n > 0;   /* an empty list among run-time numbers is ragged: eager says so */
}

static AVal stack_numbers(Comp *c, AVal *v, DType dt) {
    if (v->kind == AV_CONST)
        return number_tensor(c, v->k.type == VAL_BOOL ? cc_bool_const(v->k.as.b) : cc_num_const(v->k.as.n), dt);
    if (v->kind == AV_NUM) return number_tensor(c, *v, dt);
    AStruct *st = cc_astruct_new(c, false);
    for (int i = 0; i < v->st->n; i++) {
        AVal e = stack_numbers(c, &v->st->items[i], dt);
        if (e.kind == AV_NONE || c->failed) return FAILV;
        if (i && (e.kind != AV_TENSOR || !shape_equal(&e.shape, &st->items[0].shape))) return FAILV;   /* ragged */
        cc_astruct_push(c, st, NULL, e);
    }
    if (st->n > 256) return FAILV;   /* cc_call_op's limit on a list of operands */
    AVal list = { .kind = AV_LIST, .st = st, .reg = -1 };
    return cc_call_op(c, OP_STACK, &list, 1, NULL, NULL, 0);
}

static AVal tensor_of_numbers(Comp *c, AVal *v) {
    bool all_bool = true;
    DType dt;
    if (!numbers_dtype(c, &v[0], &all_bool)) return FAILV;
    if (v[1].kind == AV_NONE || (v[1].kind == AV_CONST && v[1].k.type == VAL_NIL)) dt = all_bool ? DT_BOOL : DT_F32;
    else if (v[1].kind != AV_CONST || v[1].k.type != VAL_STR || dtype_parse(AS_STR(v[1].k)->chars, &dt)) return FAILV;
    return stack_numbers(c, &v[0], dt);
}

/* The rules on values bound to the row's parameters (v), where the kinds fit; FAILV with
 * nothing reported where they do not (the call then runs eagerly, with eager's messages). */
static AVal builtin_by_rule(Comp *c, int rule, ObjBuiltin *b, AVal *v, SrcLoc loc) {
    bool onto_new_list = v[0].kind == AV_LIST && v[0].st->obj < 0;
    if (v[0].kind == AV_LIST && ca_is_open(v[0].st)) {   /* a tensor array in its loop */
        if (rule == ST_PUSH) return ca_push(c, v[0].st, v[1]);
        if (rule == ST_LEN) return ca_len(c, v[0].st);
        return ca_read_open(c);
    }
    for (int i = 1; i < ARGS_MAX; i++)
        if (v[i].kind == AV_LIST && ca_is_open(v[i].st)) return ca_read_open(c);
    const char *name = b->name;
    int reg, t;
    int64_t n;
    switch (rule) {
    case ST_TENSOR:   /* of a tensor: itself (tensors are immutable), or astype; of run-time numbers */
        if (v[0].kind == AV_LIST || v[0].kind == AV_NUM) return tensor_of_numbers(c, v);
        if (v[0].kind != AV_TENSOR) return FAILV;
        return v[1].kind != AV_NONE ? cc_call_op(c, OP_ASTYPE, v, 2, NULL, NULL, 0) : v[0];
    case ST_BOOL:   /* of a tensor: its truth value; every number and string is true (spec section 3) */
        if (v[0].kind == AV_NUM) return v[0].is_bool ? v[0] : cc_bool_const(true);
        if (v[0].kind == AV_STR) return cc_bool_const(true);
        if (v[0].kind != AV_TENSOR) return FAILV;
        t = cc_truth(c, v[0], &reg, c->loc);
        return c->failed ? FAILV : t >= 0 ? cc_bool_const(t) : (AVal){ .kind = AV_NUM, .reg = reg, .is_bool = true };
    case ST_TO: return v[0].kind == AV_TENSOR && v[1].kind == AV_CONST ? builtin_to(c, b, v) : FAILV;
    case ST_SEED:
        if (!cc_need_int(c, &v[0], &n, "seed()'s argument")) return FAILV;
        cc_emit(c, I_SEED)->imm = (double)n;
        return cc_const_av(NIL_VAL);
    case ST_STATIC_MODE: return cc_const_av(cc_keep_value(c, val_cstr("static")));
    case ST_ASSERT: return builtin_assert(c, v);
    case ST_INT:   /* eager's int() when the block runs: its truncation, its errors (nan, bad text) */
        if (v[0].kind == AV_TENSOR && cgrad_tracked(c, v[0].reg)) cgrad_cut(c, name, loc);
        return v[0].kind == AV_NUM || v[0].kind == AV_STR || v[0].kind == AV_TENSOR ? cc_host_call(c, b, v, 1, true) : FAILV;
    case ST_FLOAT:
        if (v[0].kind == AV_STR) return cc_host_call(c, b, v, 1, true);   /* text read when the block runs */
        /* fall through */
    case ST_ITEM:
        return v[0].kind == AV_TENSOR || v[0].kind == AV_NUM ? builtin_item(c, rule, name, v[0], loc) : FAILV;
    case ST_TOLIST: return builtin_tolist(c, v[0], loc);
    case ST_SORTED: return builtin_sorted_key(c, v, loc);
    case ST_LEN:
        if (v[0].kind == AV_STR || ((v[0].kind == AV_LIST || v[0].kind == AV_DICT) && v[0].st->grown))
            return cc_host_len(c, b, v[0]);   /* read at run time */
        if (v[0].kind == AV_LIST || v[0].kind == AV_DICT) return cc_num_const(cc_struct_n(c, v[0].st));
        if (v[0].kind == AV_TENSOR && v[0].shape.ndim > 0) return cs_dim(c, v[0], 0);
        return FAILV;
    case ST_TYPE: {
        const char *type = v[0].kind == AV_STR ? "string" : v[0].kind == AV_NUM ? (v[0].is_bool ? "bool" : "number")
                        : v[0].kind == AV_TENSOR ? "tensor" : v[0].kind == AV_LIST ? "list"
                        : v[0].kind == AV_DICT ? "dict" : v[0].kind == AV_CLOSURE ? "function"
                        : val_type_name(v[0].k);
        return cc_const_av(cc_keep_value(c, val_cstr(type)));
    }
    case ST_WRITE: {   /* eager's function, called when the block runs (the arguments it was given, in order) */
        int n = 0;
        while (n < ARGS_MAX && v[n].kind != AV_NONE) n++;
        for (int i = n; i < ARGS_MAX; i++)
            if (v[i].kind != AV_NONE) return FAILV;   /* a gap: a keyword past an omitted one */
        return cc_host_effect(c, b, v, n) ? cc_const_av(NIL_VAL) : FAILV;
    }
    case ST_PUSH:
    case ST_EXTEND:
        if (v[0].kind == AV_LIST && v[0].st->obj >= 0) return cc_host_push(c, b, v, rule == ST_EXTEND);
        if (v[1].kind == AV_LIST && rule == ST_EXTEND) cc_struct_n(c, v[1].st);
        if (!onto_new_list || (rule == ST_EXTEND && v[1].kind != AV_LIST)) return FAILV;
        /* extend(l, l) appends l's items once */
        for (int i = 0, n = rule == ST_PUSH ? 1 : v[1].st->n; i < n; i++)
            cc_astruct_push(c, v[0].st, NULL, rule == ST_PUSH ? v[1] : v[1].st->items[i]);
        return cc_const_av(NIL_VAL);
    case ST_INSERT: return onto_new_list ? builtin_insert(c, v, loc) : FAILV;
    case ST_POP: return cc_take(c, v[0], v[1], v[2], false, loc);
    case ST_REVERSED:
    case ST_KEYS: {
        if (v[0].kind != (rule == ST_KEYS ? AV_DICT : AV_LIST)) return FAILV;
        cc_struct_n(c, v[0].st);
        AStruct *st = cc_astruct_new(c, false);   /* a new list: tensors stay inputs */
        for (int i = 0, n = v[0].st->n; i < n; i++)
            cc_astruct_push(c, st, NULL, rule == ST_REVERSED ? v[0].st->items[n - 1 - i]
                                         : cc_const_av(cc_keep_value(c, val_cstr(v[0].st->keys[i]))));
        return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
    }
    case ST_GET: {
        if (v[0].kind != AV_DICT || v[1].kind != AV_CONST || v[1].k.type != VAL_STR) return FAILV;
        cc_struct_n(c, v[0].st);   /* a default where the key is missing */
        int at = cc_astruct_find(v[0].st, AS_STR(v[1].k)->chars);
        return at >= 0 ? v[0].st->items[at] : v[2].kind != AV_NONE ? v[2] : cc_const_av(NIL_VAL);
    }
    }
    return FAILV;
}

/* einsum(subscripts, operands...): its plan (ops/einsum.c) from the subscripts, a constant,
 * and the operands' shapes, emitted op by op as eager runs it. */
static AVal builtin_einsum(Comp *c, AVal *args, int nargs, int nkw) {
    if (nkw || nargs < 2 || args[0].kind != AV_CONST || !IS_STR(args[0].k))
        return cc_unsupported(c, "einsum() runs eagerly in static code unless its subscripts are a constant string");
    int n = nargs - 1;
    if (n > EIN_MAX_OPERANDS) return cc_unsupported(c, "einsum() with more than %d operands runs eagerly", EIN_MAX_OPERANDS);
    Shape sh[EIN_MAX_OPERANDS];
    DType dt[EIN_MAX_OPERANDS];
    for (int i = 0; i < n; i++) {
        if (args[i + 1].kind != AV_TENSOR || shape_is_runtime(&args[i + 1].shape))
            return cc_unsupported(c, "einsum() of operands that are not tensors of known shape runs eagerly");
        sh[i] = args[i + 1].shape;
        dt[i] = args[i + 1].dtype;
    }
    EinPlan *p = cc_arena_alloc(c, sizeof *p);
    if (einsum_plan(AS_STR(args[0].k)->chars, n, sh, dt, p)) return cc_op_failed(c);
    AVal *slot = cc_arena_alloc(c, sizeof(AVal) * (size_t)p->nslots);
    for (int i = 0; i < n; i++) slot[i] = args[i + 1];
    for (int k = 0; k < p->nsteps; k++) {
        EinStep *st = &p->step[k];
        AVal in[2];
        for (int j = 0; j < st->nin; j++) in[j] = slot[st->in[j]];
        slot[n + k] = cc_emit_op(c, st->op, in, st->nin, &st->at);
        if (c->failed) return FAILV;
    }
    return slot[p->result];
}

/* A call of built-in b in static code: its row's ST_* rule says how (lang/builtins.h), or
 * it is an op of ops.def; a built-in known by neither (a loaded graph, whatever its name)
 * runs eagerly. Arguments bind by the row's signature, as eagerly (bind_row). */
AVal cc_compile_builtin(Comp *c, const char *name, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw,
                            int nkw, SrcLoc loc) {
    c->loc = loc;
    unsigned stat = b && b->def ? b->def->stat : ST_NONE;
    int rule = (int)(stat & ST_RULE);
    if ((rule == ST_CALL_GRAD || rule == ST_CALL_VALUE_AND_GRAD) && b->bound.type != VAL_NIL)
        return cgrad_call(c, cc_const_av(b->bound), rule == ST_CALL_VALUE_AND_GRAD, args, nargs, kwn, kw, nkw, loc);
    if ((rule == ST_GRAD || rule == ST_VALUE_AND_GRAD) && nargs == 1 && nkw == 0 &&
        ((args[0].kind == AV_CONST && args[0].k.type == VAL_FUNC) || args[0].kind == AV_CLOSURE || args[0].kind == AV_DICT))
        return cgrad_make(c, args[0], rule == ST_VALUE_AND_GRAD);
    if (rule == ST_GRAD || rule == ST_VALUE_AND_GRAD || rule == ST_EAGER || (b && b->bound.type != VAL_NIL))
        return cc_unsupported(c, "%s() runs eagerly in static code", name);
    if (rule == ST_PRINT || rule == ST_FLUSH) {
        if (rule == ST_FLUSH && (nargs || nkw)) return cc_error_at(c, loc, "flush() takes no arguments");
        return builtin_print(c, args, nargs, kwn, kw, nkw, rule == ST_FLUSH);
    }
    if (rule == ST_EINSUM) return builtin_einsum(c, args, nargs, nkw);
    OpCode op = b && !b->def ? op_by_name(name) : OP__COUNT;
    if (op < OP__COUNT && b->fn == op_builtins[op]) return cc_call_op(c, op, args, nargs, kwn, kw, nkw);
    AVal v[ARGS_MAX] = { 0 };   /* kind AV_NONE: not given */
    bool bound = rule != ST_NONE && bind_row(c, b, args, nargs, kwn, kw, nkw, v);
    if (c->failed) return FAILV;
    /* constants of the process (its place in the MPI job), so shard sizes are known shapes */
    if (bound && (rule == ST_RANK || rule == ST_WORLD_SIZE)) {
        int n = rule == ST_RANK ? dist_rank() : dist_size();
        return dist_start() ? cc_error_at(c, loc, "%s", op_error()) : cc_num_const(n);
    }
    /* error(), raise() and an assertion known to fail, reached for sure in a try's body: the
     * error is raised while compiling, where the try catches it (ctry.c) */
    if ((rule == ST_RAISE || rule == ST_ASSERT) && cc_try_reaches(c)) {
        AVal r;
        if (fold_builtin(c, b, args, nargs, kwn, kw, nkw, &r)) return c->failed ? FAILV : r;
    }
    if (rule == ST_RAISE && cc_try_reaches(c))   /* in a try, but the error is known only at run time */
        return cc_unsupported(c, "%s() with arguments made at run time runs eagerly in static code", name);
    if (rule == ST_RAISE) return cc_unsupported(c, "%s() runs eagerly in static code outside a try", name);
    /* sorted() with a key calls it: folding would run a TSL function (and its prints) while compiling */
    bool calls_back = rule == ST_SORTED && (nargs > 1 || (nkw && strcmp(kwn[0], "reverse")) || nkw > 1);
    if ((stat & ST_FOLDS) && !calls_back) {
        AVal r;
        if (fold_builtin(c, b, args, nargs, kwn, kw, nkw, &r)) return c->failed ? FAILV : r;
    }
    /* str() or format() of a value made at run time: eager's function, called at run time */
    if (rule == ST_TEXT && nkw == 0) {
        AVal r = cc_host_call(c, b, args, nargs, false);
        if (r.kind != AV_NONE || c->failed) return r;
    }
    AVal r = bound ? builtin_by_rule(c, rule, b, v, loc) : FAILV;
    if (r.kind != AV_NONE || c->failed) return r;
    return cc_unsupported(c, "%s() with these arguments is not supported in static code yet", name);
}
