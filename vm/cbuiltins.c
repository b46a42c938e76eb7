/* cbuiltins.c - built-in functions in static code: pure ones folded at compile time by the
 * eager implementation, tensor ops emitted as instructions with inferred shapes, print/assert
 * in program order. Anything else is reported unsupported (the code then runs eagerly). */
#include "comp.h"

/* ---------- built-ins ---------- */

static bool bind(Comp *c, const char *fname, const char *const *params, int nreq, AVal *args, int nargs, char **kwn,
                 AVal *kw, int nkw, AVal *out) {
    int np = 0;
    while (params[np]) np++;
    if (nargs > np) {
        cc_error_at(c, c->loc, "%s() takes at most %d argument%s but %d were given", fname, np, np == 1 ? "" : "s", nargs);
        return false;
    }
    for (int i = 0; i < np; i++) out[i] = i < nargs ? args[i] : FAILV;
    for (int k = 0; k < nkw; k++) {
        int i = 0;
        while (i < np && strcmp(params[i], kwn[k])) i++;
        if (i == np) { cc_error_at(c, c->loc, "%s() got an unknown keyword argument '%s'", fname, kwn[k]); return false; }
        out[i] = kw[k];
    }
    for (int i = 0; i < nreq; i++)
        if (out[i].kind == AV_NONE) { cc_error_at(c, c->loc, "%s() missing argument '%s'", fname, params[i]); return false; }
    return true;
}

static bool axes_of(Comp *c, AVal *v, int *axes, int *n) {
    if (v->kind == AV_NONE || (v->kind == AV_CONST && v->k.type == VAL_NIL)) { *n = -1; return true; }
    int64_t x;
    if (v->kind == AV_LIST) {
        if (v->st->n > TSL_MAX_RANK) { cc_error_at(c, c->loc, "too many axes"); return false; }
        for (int i = 0; i < v->st->n; i++) {
            if (!cc_need_int(c, &v->st->items[i], &x, "an axis")) return false;
            axes[i] = (int)x;
        }
        *n = v->st->n;
        return true;
    }
    if (!cc_need_int(c, v, &x, "an axis")) return false;
    if (x > 1000 || x < -1000) { cc_error_at(c, c->loc, "axis %lld is out of range", (long long)x); return false; }
    axes[0] = (int)x;
    *n = 1;
    return true;
}

static bool shape_of_av(Comp *c, AVal *v, Shape *s, bool allow_minus1) {
    int64_t x;
    if (v->kind == AV_NUM) {
        s->ndim = 1;
        if (!cc_need_int(c, v, &x, "a shape")) return false;
        s->d[0] = x;
    } else if (v->kind == AV_LIST) {
        if (v->st->n > TSL_MAX_RANK) { cc_error_at(c, c->loc, "rank %d is above the limit of %d", v->st->n, TSL_MAX_RANK); return false; }
        s->ndim = v->st->n;
        for (int i = 0; i < v->st->n; i++) {
            if (!cc_need_int(c, &v->st->items[i], &x, "a shape")) return false;
            s->d[i] = x;
        }
    } else {
        cc_error_at(c, c->loc, "shape must be a list of numbers or a number");
        return false;
    }
    for (int i = 0; i < s->ndim; i++)
        if (s->d[i] < 0 && !(allow_minus1 && s->d[i] == -1)) {
            cc_error_at(c, c->loc, "negative dimension %lld in shape", (long long)s->d[i]);
            return false;
        }
    return true;
}

bool cc_is_pure_builtin(const char *name) {
    static const char *const pure[] = {
        "tensor", "zeros", "ones", "full", "arange", "linspace", "eye", "range", "str", "int", "float", "bool",
        "type", "len", "keys", "get", "equal", "allclose", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh",
        "sigmoid", "relu", "floor", "ceil", "round", "sign", "maximum", "minimum", NULL,
    };
    for (int i = 0; pure[i]; i++)
        if (!strcmp(pure[i], name)) return true;
    return false;
}

/* Calls a pure built-in now, on compile-time values (constant folding, same code as eager). */
static bool fold_builtin(Comp *c, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, AVal *out) {
    Value vals[16];
    if (nargs + nkw > 16) return false;
    for (int i = 0; i < nargs + nkw; i++)
        if (!cc_pure_value(c, i < nargs ? &args[i] : &kw[i - nargs], &vals[i])) return false;
    CallArgs ca = { vals, nargs, kwn, vals + nargs, nkw };
    *out = cc_folded(c, b->fn(c->I, &ca), c->loc);
    return true;
}

Opnd cc_opnd_of(Comp *c, AVal v);

static AVal builtin_print(Comp *c, AVal *args, int nargs, int nkw) {
    if (nkw) return cc_error_at(c, c->loc, "print() takes no keyword arguments");
    Ins *in = cc_emit(c, I_PRINT);
    int at = (int)(in - c->g->code);
    Opnd *ops = mem_calloc((size_t)nargs + 1, sizeof(Opnd));
    for (int i = 0; i < nargs; i++) ops[i] = cc_opnd_of(c, args[i]);
    in = &c->g->code[at];
    in->opnds = ops;
    in->nopnds = nargs;
    return cc_const_av(NIL_VAL);
}

static AVal builtin_assert(Comp *c, AVal *args, int nargs, char **kwn, AVal *kw, int nkw) {
    static const char *const p[] = { "cond", "message", NULL };
    AVal v[2];
    if (!bind(c, "assert", p, 1, args, nargs, kwn, kw, nkw, v)) return FAILV;
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

AVal cc_emit_unary(Comp *c, OpCode op, AVal t) {
    DType dt;
    if (infer_unary(op, t.dtype, &dt)) return cc_op_failed(c);
    AVal r = cc_tensor_av(c, dt, &t.shape);
    Ins *in = cc_emit(c, I_UNARY);
    in->dst = r.reg;
    in->a = t.reg;
    in->aux = op;
    return r;
}

static OpCode op_by_name(const char *name) {
    for (int i = 0; i < OP__COUNT; i++)
        if (!strcmp(op_info[i].name, name)) return (OpCode)i;
    return OP__COUNT;
}

/* Built-ins whose first argument eager code turns into a tensor (interp_to_tensor). */
static bool takes_tensor(const char *name, OpCode op) {
    static const char *const names[] = { "clip", "astype", "reshape", "flatten", "transpose", "expand_dims", "squeeze",
                                         "broadcast_to", NULL };
    if (op < OP__COUNT && (op_info[op].kind == K_REDUCE || op == OP_SOFTMAX || op == OP_LOG_SOFTMAX)) return true;
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
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

/* where()'s numbers become tensors as the eager built-in makes them: a number beside a float
 * tensor takes its dtype, an integral one beside an i64 tensor is i64, otherwise f32; bools
 * are bool. */
static bool where_operands(Comp *c, AVal *args) {
    for (int i = 0; i < 3; i++) {
        if (args[i].kind != AV_NUM) continue;
        DType dt = args[i].is_bool ? DT_BOOL : DT_F32;
        AVal *other = i > 0 ? &args[3 - i] : NULL;
        if (!args[i].is_bool && other && other->kind == AV_TENSOR) {
            if (dtype_is_float(other->dtype)) dt = other->dtype;
            else if (other->dtype == DT_I64) {
                double x;
                if (!cc_need_const(c, &args[i], &x, "a number in where() beside an integer tensor")) return false;
                if (x == floor(x)) dt = DT_I64;
            }
        }
        args[i] = number_tensor(c, args[i], dt);
    }
    return true;
}

AVal cc_compile_builtin(Comp *c, const char *name, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw,
                            int nkw, SrcLoc loc) {
    c->loc = loc;
    if (nargs >= 1 && args[0].kind == AV_NUM && !args[0].is_bool && takes_tensor(name, op_by_name(name)) &&
        !cc_is_pure_builtin(name))
        args[0] = number_tensor(c, args[0], DT_F32);
    if (!strcmp(name, "print")) return builtin_print(c, args, nargs, nkw);
    if (!strcmp(name, "assert")) return builtin_assert(c, args, nargs, kwn, kw, nkw);
    OpCode op = op_by_name(name);
    bool tensor_arg = false;
    for (int i = 0; i < nargs; i++) tensor_arg |= args[i].kind == AV_TENSOR;
    if (cc_is_pure_builtin(name)) {
        AVal r;
        if (fold_builtin(c, b, args, nargs, kwn, kw, nkw, &r)) return c->failed ? FAILV : r;
    }
    if (op < OP__COUNT && op_info[op].kind == K_UNARY && nargs == 1 && nkw == 0) {
        if (args[0].kind == AV_TENSOR) return cc_emit_unary(c, op, args[0]);
        if (args[0].kind == AV_NUM) {
            AVal x = args[0];
            AVal r = { .kind = AV_NUM, .known = x.known, .deps = x.deps, .reg = -1 };
            if (x.known) r.num = op_unary_number(op, x.num);
            if (r.known && !r.deps) return r;
            int xr = cc_num_reg(c, &x);
            Ins *in = cc_emit(c, I_NMATH);
            in->dst = r.reg = cc_new_num(c, false);
            in->a = xr;
            in->aux = op;
            return r;
        }
    }
    if ((op == OP_MAXIMUM || op == OP_MINIMUM) && nargs == 2 && nkw == 0 && args[0].kind == AV_NUM &&
        args[1].kind == AV_NUM) {
        /* two numbers: as the eager built-in, NaN wins */
        AVal a = args[0], b2 = args[1];
        AVal r = { .kind = AV_NUM, .known = a.known && b2.known, .deps = a.deps | b2.deps, .reg = -1 };
        if (r.known) r.num = num_minmax(op, a.num, b2.num);
        if (r.known && !r.deps) return r;
        int ra = cc_num_reg(c, &a), rb = cc_num_reg(c, &b2);
        Ins *in = cc_emit(c, I_NBIN);
        in->dst = r.reg = cc_new_num(c, false);
        in->a = ra;
        in->b = rb;
        in->aux = NBIN_OP_BASE + op;
        return r;
    }
    if ((op == OP_MAXIMUM || op == OP_MINIMUM) && nargs == 2 && nkw == 0 && tensor_arg) {
        if (args[0].kind == AV_TENSOR && args[1].kind == AV_TENSOR) return cc_tensor_binary(c, op, args[0], args[1]);
        if (args[0].kind == AV_TENSOR && args[1].kind == AV_NUM) return cc_tensor_scalar_op(c, op, args[0], args[1], false);
        if (args[1].kind == AV_TENSOR && args[0].kind == AV_NUM) return cc_tensor_scalar_op(c, op, args[1], args[0], true);
    }
    if (op < OP__COUNT && op_info[op].kind == K_REDUCE && nargs >= 1 && args[0].kind == AV_TENSOR) {
        static const char *const p[] = { "t", "axis", "keepdims", NULL };
        AVal v[3];
        int axes[TSL_MAX_RANK], n;
        if (!bind(c, name, p, 1, args, nargs, kwn, kw, nkw, v) || !axes_of(c, &v[1], axes, &n)) return FAILV;
        if ((op == OP_ARGMAX || op == OP_ARGMIN) && n > 1) return cc_error_at(c, loc, "%s(): axis must be a single number or nil", name);
        int keep = 0;
        if (v[2].kind != AV_NONE) {
            int reg;
            keep = cc_truth(c, v[2], &reg, loc);
            if (keep < 0) return cc_unsupported(c, "keepdims known only at run time");
        }
        Shape so;
        DType dt;
        if (infer_reduce(op, &v[0].shape, v[0].dtype, axes, n, keep, &so, &dt)) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, dt, &so);
        Ins *in = cc_emit(c, I_REDUCE);
        in->dst = r.reg;
        in->a = v[0].reg;
        in->aux = op;
        in->c = keep;
        in->nargs = n;
        if (n > 0) {
            in->args = mem_alloc(sizeof(int) * (size_t)n);
            memcpy(in->args, axes, sizeof(int) * (size_t)n);
        }
        return r;
    }
    if ((op == OP_SOFTMAX || op == OP_LOG_SOFTMAX) && nargs >= 1 && args[0].kind == AV_TENSOR) {
        static const char *const p[] = { "t", "axis", NULL };
        AVal v[2];
        int64_t axis = -1;
        if (!bind(c, name, p, 1, args, nargs, kwn, kw, nkw, v)) return FAILV;
        if (v[1].kind != AV_NONE && !cc_need_int(c, &v[1], &axis, "an axis")) return FAILV;
        int ax;
        DType dt;
        if (axis > 1000 || axis < -1000) return cc_error_at(c, loc, "%s(): axis %lld is out of range", name, (long long)axis);
        if (infer_softmax(&v[0].shape, v[0].dtype, (int)axis, op == OP_LOG_SOFTMAX, &ax, &dt)) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, dt, &v[0].shape);
        Ins *in = cc_emit(c, I_SOFTMAX);
        in->dst = r.reg;
        in->a = v[0].reg;
        in->b = (int)axis;
        in->c = op == OP_LOG_SOFTMAX;
        return r;
    }
    if ((op == OP_MATMUL || !strcmp(name, "dot")) && nargs == 2 && args[0].kind == AV_TENSOR &&
        args[1].kind == AV_TENSOR && args[0].shape.ndim >= 1 && args[1].shape.ndim >= 1 &&
        (op == OP_MATMUL || (args[0].shape.ndim <= 2 && args[1].shape.ndim <= 2))) {
        Shape so;
        DType dt;
        if (infer_matmul(&args[0].shape, args[0].dtype, &args[1].shape, args[1].dtype, &so, &dt)) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, dt, &so);
        Ins *in = cc_emit(c, I_MATMUL);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->b = args[1].reg;
        return r;
    }
    if (op == OP_WHERE && nargs == 3 && nkw == 0 && (args[1].kind == AV_TENSOR || args[2].kind == AV_TENSOR ||
                                                     args[0].kind == AV_TENSOR) &&
        args[0].kind != AV_CONST && args[1].kind != AV_CONST && args[2].kind != AV_CONST && where_operands(c, args) &&
        args[0].kind == AV_TENSOR && args[1].kind == AV_TENSOR && args[2].kind == AV_TENSOR) {
        Shape s1, so;
        DType dt = args[1].dtype > args[2].dtype ? args[1].dtype : args[2].dtype;
        if (shape_broadcast(&args[1].shape, &args[2].shape, &s1, "where") ||
            shape_broadcast(&args[0].shape, &s1, &so, "where"))
            return cc_op_failed(c);
        AVal r = cc_tensor_av(c, dt, &so);
        Ins *in = cc_emit(c, I_WHERE);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->b = args[1].reg;
        in->c = args[2].reg;
        return r;
    }
    if (!strcmp(name, "clip") && nargs == 3 && args[0].kind == AV_TENSOR) {
        int regs[2];
        for (int i = 0; i < 2; i++) {
            AVal x = args[1 + i];
            if (x.kind == AV_CONST && x.k.type == VAL_NIL) x = cc_num_const(i ? INFINITY : -INFINITY);
            if (x.kind != AV_NUM) return cc_error_at(c, loc, "clip(): bounds must be numbers");
            regs[i] = cc_num_reg(c, &x);
        }
        AVal r = cc_tensor_av(c, args[0].dtype, &args[0].shape);
        Ins *in = cc_emit(c, I_CLIP);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->b = regs[0];
        in->c = regs[1];
        return r;
    }
    if (!strcmp(name, "astype") && nargs == 2 && args[0].kind == AV_TENSOR) {
        DType dt;
        if (args[1].kind != AV_CONST || args[1].k.type != VAL_STR || dtype_parse(AS_STR(args[1].k)->chars, &dt))
            return cc_error_at(c, loc, "astype(): dtype must be one of \"f32\", \"f64\", \"i64\", \"bool\"");
        AVal r = cc_tensor_av(c, dt, &args[0].shape);
        Ins *in = cc_emit(c, I_ASTYPE);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->aux = dt;
        return r;
    }
    if ((!strcmp(name, "reshape") || !strcmp(name, "flatten") || !strcmp(name, "expand_dims") ||
         !strcmp(name, "squeeze")) && nargs >= 1 && args[0].kind == AV_TENSOR) {
        Shape req, so;
        AVal t = args[0];
        int rc = 0;
        if (!strcmp(name, "reshape")) {
            if (nargs != 2) return cc_error_at(c, loc, "reshape() takes a tensor and a shape");
            if (!shape_of_av(c, &args[1], &req, true)) return FAILV;
            rc = infer_reshape(&t.shape, &req, &so);
        } else if (!strcmp(name, "flatten")) {
            Shape f = { 1, { shape_count(&t.shape) } };
            so = f;
        } else if (!strcmp(name, "expand_dims")) {
            int64_t ax;
            if (nargs != 2 || !cc_need_int(c, &args[1], &ax, "an axis")) return c->failed ? FAILV : cc_error_at(c, loc, "expand_dims() takes a tensor and an axis");
            rc = infer_expand_dims(&t.shape, (int)ax, &so);
        } else {
            int axes[TSL_MAX_RANK], n = -1;
            AVal ax = nargs > 1 ? args[1] : (nkw ? kw[0] : FAILV);
            if (!axes_of(c, &ax, axes, &n)) return FAILV;
            rc = infer_squeeze(&t.shape, axes, n, &so);
        }
        if (rc) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, t.dtype, &so);
        Ins *in = cc_emit(c, I_RESHAPE);
        in->dst = r.reg;
        in->a = t.reg;
        in->shape = so;
        return r;
    }
    if (!strcmp(name, "transpose") && nargs >= 1 && args[0].kind == AV_TENSOR) {
        int axes[TSL_MAX_RANK], n = -1, perm[TSL_MAX_RANK];
        AVal ax = nargs > 1 ? args[1] : (nkw ? kw[0] : FAILV);
        if (!axes_of(c, &ax, axes, &n)) return FAILV;
        Shape so;
        if (infer_transpose(&args[0].shape, n < 0 ? NULL : axes, n, perm, &so)) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, args[0].dtype, &so);
        Ins *in = cc_emit(c, I_TRANSPOSE);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->nargs = n;
        if (n > 0) {
            in->args = mem_alloc(sizeof(int) * (size_t)n);
            memcpy(in->args, axes, sizeof(int) * (size_t)n);
        }
        return r;
    }
    if (!strcmp(name, "broadcast_to") && nargs == 2 && args[0].kind == AV_TENSOR) {
        Shape s;
        if (!shape_of_av(c, &args[1], &s, false)) return FAILV;
        if (infer_broadcast_to(&args[0].shape, &s)) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, args[0].dtype, &s);
        Ins *in = cc_emit(c, I_BCAST);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->shape = s;
        return r;
    }
    if ((!strcmp(name, "concat") || !strcmp(name, "stack")) && nargs >= 1 && args[0].kind == AV_LIST) {
        AStruct *st = args[0].st;
        int64_t axis = 0;
        AVal ax = nargs > 1 ? args[1] : (nkw ? kw[0] : FAILV);
        if (ax.kind != AV_NONE && !cc_need_int(c, &ax, &axis, "an axis")) return FAILV;
        if (st->n > 256) return cc_unsupported(c, "%s of more than 256 tensors", name);
        Shape shapes[256];
        const Shape *ptrs[256];
        DType dts[256], dt;
        Shape so;
        for (int i = 0; i < st->n; i++) {
            if (st->items[i].kind != AV_TENSOR) return cc_unsupported(c, "%s of non-tensors", name);
            shapes[i] = st->items[i].shape;
            ptrs[i] = &shapes[i];
            dts[i] = st->items[i].dtype;
        }
        bool stack = name[0] == 's';
        int rc = stack ? infer_stack(ptrs, dts, st->n, (int)axis, &so, &dt) : infer_concat(ptrs, dts, st->n, (int)axis, &so, &dt);
        if (rc) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, dt, &so);
        Ins *in = cc_emit(c, I_CONCAT);
        in->dst = r.reg;
        in->b = (int)axis;
        in->c = stack;
        in->nargs = st->n;
        in->args = mem_alloc(sizeof(int) * (size_t)(st->n + 1));
        for (int i = 0; i < st->n; i++) in->args[i] = st->items[i].reg;
        return r;
    }
    if ((!strcmp(name, "rand") || !strcmp(name, "randn") || !strcmp(name, "randint"))) {
        Shape s;
        int kind = name[4] == 'n' ? 1 : name[4] == 'i' ? 2 : 0;
        int64_t lo = 0, hi = 0;
        AVal *shape_arg = kind == 2 ? (nargs == 3 ? &args[2] : NULL) : (nargs == 1 ? &args[0] : NULL);
        if (!shape_arg || nkw) return cc_unsupported(c, "%s() with these arguments", name);
        if (kind == 2 && (!cc_need_int(c, &args[0], &lo, "randint's low bound") || !cc_need_int(c, &args[1], &hi, "randint's high bound")))
            return FAILV;
        if (kind == 2 && hi <= lo)
            return cc_error_at(c, loc, "randint: high (%lld) must be greater than low (%lld)", (long long)hi, (long long)lo);
        if (!shape_of_av(c, shape_arg, &s, false)) return FAILV;
        if (shape_count(&s) < 0) return cc_op_failed(c);
        AVal r = cc_tensor_av(c, kind == 2 ? DT_I64 : DT_F32, &s);
        Ins *in = cc_emit(c, I_RANDOM);
        in->dst = r.reg;
        in->aux = kind;
        in->shape = s;
        in->imm = (double)lo;
        in->b = (int)(hi - lo);
        if (hi - lo > 2000000000) return cc_unsupported(c, "randint with a range this wide");
        return r;
    }
    if ((!strcmp(name, "item") || !strcmp(name, "float")) && nargs == 1 && args[0].kind == AV_TENSOR) {
        if (shape_count(&args[0].shape) != 1)
            return cc_error_at(c, loc, "%s", !strcmp(name, "item") ? "item(): the tensor does not have one element"
                                                                : "float(): only a one-element tensor converts to a number");
        AVal r = { .kind = AV_NUM, .reg = cc_new_num(c, args[0].dtype == DT_BOOL && name[0] == 'i') };
        Ins *in = cc_emit(c, I_ITEM);
        in->dst = r.reg;
        in->a = args[0].reg;
        r.is_bool = c->g->regs[r.reg].is_bool;
        return r;
    }
    if ((!strcmp(name, "item") || !strcmp(name, "float")) && nargs == 1 && args[0].kind == AV_NUM) return args[0];
    if (!strcmp(name, "len") && nargs == 1) {
        if (args[0].kind == AV_LIST || args[0].kind == AV_DICT) return cc_num_const(args[0].st->n);
        if (args[0].kind == AV_TENSOR && args[0].shape.ndim > 0) return cc_num_const((double)args[0].shape.d[0]);
    }
    if (!strcmp(name, "type") && nargs == 1) {
        const char *t = args[0].kind == AV_NUM ? (args[0].is_bool ? "bool" : "number")
                        : args[0].kind == AV_TENSOR ? "tensor" : args[0].kind == AV_LIST ? "list"
                        : args[0].kind == AV_DICT ? "dict" : args[0].kind == AV_CLOSURE ? "function"
                        : val_type_name(args[0].k);
        return cc_const_av(cc_keep_value(c, val_cstr(t)));
    }
    if (!strcmp(name, "push") && nargs == 2 && args[0].kind == AV_LIST) {
        if (args[0].st->obj >= 0) return cc_unsupported(c, "push() onto a list that exists outside the static code");
        cc_astruct_push(c, args[0].st, NULL, args[1]);
        return cc_const_av(NIL_VAL);
    }
    if (!strcmp(name, "keys") && nargs == 1 && args[0].kind == AV_DICT) {
        AStruct *st = cc_astruct_new(c, false);
        for (int i = 0; i < args[0].st->n; i++)
            cc_astruct_push(c, st, NULL, cc_const_av(cc_keep_value(c, val_cstr(args[0].st->keys[i]))));
        return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
    }
    if (!strcmp(name, "get") && nargs >= 2 && args[0].kind == AV_DICT && args[1].kind == AV_CONST &&
        args[1].k.type == VAL_STR) {
        int at = cc_astruct_find(args[0].st, AS_STR(args[1].k)->chars);
        if (at >= 0) return args[0].st->items[at];
        return nargs > 2 ? args[2] : cc_const_av(NIL_VAL);
    }
    return cc_unsupported(c, "%s() with these arguments is not supported in static code yet", name);
}

