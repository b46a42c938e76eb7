/* opargs.c - binding a built-in call to an op of the table, and running it eagerly.
 * The static compiler (vm/compile/cbuiltins.c) binds with the same op_bind() and converts
 * attributes with the same opargs_attr(), so both modes accept and reject the same calls
 * with the same words. */
#include <math.h>
#include <string.h>
#include "opargs.h"
#include "autograd.h"
#include "builtins.h"
#include "mem.h"
#include "infer.h"
#include "conv.h"

/* A window parameter's default: [v, v] in each of its pair slots (nil: WIN_NIL). */
static void win_default(OpAttrs *at, const OpParam *pp) {
    int64_t v = pp->default_nil ? WIN_NIL : (int64_t)pp->default_num;
    int n = pp->type == P_PADW ? 2 : 1;
    for (int k = 0; k < n; k++) at->pairs[pp->slot + k][0] = at->pairs[pp->slot + k][1] = v;
    if (at->npairs < pp->slot + n) at->npairs = pp->slot + n;
}

void opargs_attrs_init(OpCode op, OpAttrs *at) {
    const OpDef *d = op_def(op);
    /* field by field, not memset: this runs at every eager call (the static compiler, which
     * compares attributes byte for byte, zeroes them first) */
    at->given = 0;
    at->naxes = -1;
    at->npairs = 0;
    at->dtype = -1;
    for (int p = 0; p < d->nparams; p++) {
        const OpParam *pp = &d->params[p];
        switch (pp->type) {
        case P_AXIS: at->axis = (int)pp->default_num; break;
        case P_BOOL: *op_attr_bool(at, pp->slot) = pp->default_num != 0; break;
        case P_INT: case P_REDOP: case P_CHOICE: at->i[pp->slot] = (int64_t)pp->default_num; break;
        case P_F: at->f[pp->slot] = pp->default_num; break;
        case P_WIN: case P_PADW: win_default(at, pp); break;
        default: break;
        }
    }
}

/* The rows that a choice of another row stands for: one elementwise function each, so the
 * kernels, fusion and the GPU need no attribute. */
static const struct { OpCode op; int choice; OpCode variant; } variants[] = {
    { OP_GELU, 1, OP_GELU_TANH },   /* approximate="tanh" */
};

OpCode opargs_variant(OpCode op, OpAttrs *at) {
    for (size_t k = 0; k < sizeof variants / sizeof variants[0]; k++)
        if (variants[k].op == op && at->i[0] == variants[k].choice) {
            memset(at, 0, sizeof *at);
            opargs_attrs_init(variants[k].variant, at);
            return variants[k].variant;
        }
    return op;
}

Value opargs_value(const CallArgs *a, int which) {
    if (which < 0) return UNDEF_VAL;
    return which < a->npos ? a->pos[which] : a->kw[which - a->npos];
}

static bool attr_axis(Interp *I, const char *fname, Value v, int *out) {
    int64_t x;
    if (!arg_int(I, fname, "axis", v, &x)) return false;
    if (x > 1000 || x < -1000) return interp_errork(I, ERRK_INDEX, "%s(): axis %lld is out of range", fname, (long long)x), false;
    *out = (int)x;
    return true;
}

static bool attr_axes(Interp *I, const char *fname, Value v, OpAttrs *at) {
    if (v.type == VAL_NIL) { at->naxes = -1; return true; }
    if (v.type != VAL_LIST) {
        at->naxes = 1;
        return attr_axis(I, fname, v, &at->axes[0]);
    }
    ObjList *l = AS_LIST(v);
    if (l->len > TSL_MAX_RANK) return interp_error(I, "%s(): too many axes", fname), false;
    for (int i = 0; i < l->len; i++)
        if (!attr_axis(I, fname, l->items[i], &at->axes[i])) return false;
    at->naxes = l->len;
    return true;
}

/* A shape is a list of numbers or a single number. */
static bool attr_shape(Interp *I, const char *fname, const char *pname, Value v, Shape *s, bool allow_minus1) {
    if (v.type == VAL_NUM) {
        s->ndim = 1;
        if (!arg_int(I, fname, pname, v, &s->d[0])) return false;
    } else if (v.type == VAL_LIST) {
        ObjList *l = AS_LIST(v);
        if (l->len > TSL_MAX_RANK)
            return interp_errork(I, ERRK_SHAPE, "%s(): rank %d is above the limit of %d", fname, l->len, TSL_MAX_RANK), false;
        s->ndim = l->len;
        for (int i = 0; i < l->len; i++)
            if (!arg_int(I, fname, pname, l->items[i], &s->d[i])) return false;
    } else {
        return interp_errork(I, ERRK_TYPE, "%s(): %s must be a list of numbers or a number", fname, pname), false;
    }
    for (int i = 0; i < s->ndim; i++)
        if (s->d[i] < 0 && !(allow_minus1 && s->d[i] == -1))
            return interp_errork(I, ERRK_SHAPE, "%s(): negative dimension %lld in %s", fname, (long long)s->d[i], pname), false;
    return true;
}

static bool attr_pairs(Interp *I, const char *fname, Value v, OpAttrs *at) {
#define BAD_PAIRS() (interp_error(I, "%s(): widths must be a list of [before, after] pairs", fname), false)
    if (v.type != VAL_LIST || AS_LIST(v)->len > TSL_MAX_RANK) return BAD_PAIRS();
    ObjList *l = AS_LIST(v);
    for (int i = 0; i < l->len; i++) {
        Value p = l->items[i];
        if (p.type != VAL_LIST || AS_LIST(p)->len != 2) return BAD_PAIRS();
        for (int k = 0; k < 2; k++)
            if (!arg_int(I, fname, "widths", AS_LIST(p)->items[k], &at->pairs[i][k])) return false;
    }
    at->npairs = l->len;
    return true;
#undef BAD_PAIRS
}

/* A window size (win): a number or a list of one or two, [h, w]; padding (pad) also
 * "valid" (0) or "same" (CONV_PAD_SAME, sized when the kernel's size is known), and each of
 * its two values is both sides' padding. */
static bool attr_win(Interp *I, const char *fname, const OpParam *pp, Value v, OpAttrs *at) {
    int64_t hw[2];
    bool pad = pp->type == P_PADW;
    if (pad && v.type == VAL_STR && (!strcmp(AS_STR(v)->chars, "same") || !strcmp(AS_STR(v)->chars, "valid"))) {
        hw[0] = hw[1] = AS_STR(v)->chars[0] == 's' ? CONV_PAD_SAME : 0;
    } else if (v.type == VAL_NUM) {
        if (!arg_int(I, fname, pp->name, v, &hw[0])) return false;
        hw[1] = hw[0];
    } else if (v.type == VAL_LIST && (AS_LIST(v)->len == 1 || AS_LIST(v)->len == 2)) {
        ObjList *l = AS_LIST(v);
        for (int k = 0; k < 2; k++)
            if (!arg_int(I, fname, pp->name, l->items[k % l->len], &hw[k])) return false;
    } else {
        return interp_error(I, "%s(): %s must be a number or a list of two numbers%s", fname, pp->name,
                            pad ? ", \"same\" or \"valid\"" : ""), false;
    }
    for (int k = 0; k < 2; k++)
        if (hw[k] < 0 && v.type != VAL_STR)
            return interp_error(I, "%s(): %s must not be negative", fname, pp->name), false;
    if (pad) {
        for (int k = 0; k < 2; k++) at->pairs[pp->slot + k][0] = at->pairs[pp->slot + k][1] = hw[k];
    } else {
        at->pairs[pp->slot][0] = hw[0];
        at->pairs[pp->slot][1] = hw[1];
    }
    return true;
}

bool opargs_attr(Interp *I, OpCode op, int p, Value v, OpAttrs *at) {
    const OpDef *d = op_def(op);
    const OpParam *pp = &d->params[p];
    if (v.type == VAL_UNDEF || (v.type == VAL_NIL && pp->default_nil && pp->type != P_AXES)) return true;
    at->given |= 1u << p;
    DType dt;
    switch (pp->type) {
    case P_AXIS: return attr_axis(I, d->name, v, &at->axis);
    case P_AXES: return attr_axes(I, d->name, v, at);
    case P_BOOL: *op_attr_bool(at, pp->slot) = val_truthy_simple(v); return true;
    case P_INT: return arg_int(I, d->name, pp->name, v, &at->i[pp->slot]);
    case P_F: return arg_number(I, d->name, pp->name, v, &at->f[pp->slot]);
    case P_SHAPE: case P_SHAPE_M1: return attr_shape(I, d->name, pp->name, v, &at->shape, pp->type == P_SHAPE_M1);
    case P_PAIRS: return attr_pairs(I, d->name, v, at);
    case P_WIN: case P_PADW: return attr_win(I, d->name, pp, v, at);
    case P_REDOP:
        for (int r = 0; v.type == VAL_STR && r < 4; r++)
            if (!strcmp(AS_STR(v)->chars, redop_names[r])) {
                at->i[pp->slot] = r;
                return true;
            }
        return interp_error(I, "%s(): %s must be one of \"sum\", \"mean\", \"max\", \"min\"", d->name, pp->name), false;
    case P_CHOICE:
        if (v.type == VAL_STR && (at->i[pp->slot] = op_choice_index(pp, AS_STR(v)->chars)) >= 0) return true;
        {
            char list[96] = "";   /* "none", "tanh" */
            for (const char *s = pp->choices; *s;) {
                size_t len = strcspn(s, "|"), n = strlen(list);
                snprintf(list + n, sizeof list - n, "%s\"%.*s\"", n ? ", " : "", (int)len, s);
                s += len + (s[len] == '|');
            }
            return interp_error(I, "%s(): %s must be one of %s", d->name, pp->name, list), false;
        }
    case P_DTYPE:
        if (v.type != VAL_STR || dtype_parse(AS_STR(v)->chars, &dt))
            return interp_errork(I, ERRK_TYPE, "%s(): dtype must be one of \"f32\", \"f64\", \"i64\", \"bool\"", d->name), false;
        at->dtype = (int)dt;
        return true;
    default: return interp_error(I, "internal error: %s() parameter %d is not an attribute", d->name, p), false;
    }
}

/* ---------- eager calls ---------- */

/* A call's operands: on the stack for up to 8 (every op but a long concat/stack). */
typedef struct {
    OpArg *in;
    int nin, cap;
    Value *owned;        /* tensors made from lists, released after the call */
    int nowned;
    OpArg few_in[8];
    Value few_owned[8];
} Operands;

static void operands_init(Operands *o) {
    o->in = o->few_in;
    o->owned = o->few_owned;
    o->nin = o->nowned = 0;
    o->cap = 8;
}

static void operands_push(Operands *o, OpArg a) {
    if (o->nin == o->cap) {
        bool first = o->in == o->few_in;
        o->cap *= 2;
        o->in = first ? memcpy(mem_alloc(sizeof(OpArg) * (size_t)o->cap), o->few_in, sizeof o->few_in)
                      : mem_realloc(o->in, sizeof(OpArg) * (size_t)o->cap);
        o->owned = first ? memcpy(mem_alloc(sizeof(Value) * (size_t)o->cap), o->few_owned, sizeof o->few_owned)
                         : mem_realloc(o->owned, sizeof(Value) * (size_t)o->cap);
    }
    o->in[o->nin++] = a;
}

static void operands_free(Operands *o) {
    for (int i = 0; i < o->nowned; i++) val_release(o->owned[i]);
    if (o->in != o->few_in) mem_free(o->in);
    if (o->owned != o->few_owned) mem_free(o->owned);
}

/* A tensor operand from any value that makes one; numbers stay weak scalars when the op
 * takes them as such (elementwise families), else become 0-d tensors as tensor() makes. */
static bool operand_of(Interp *I, Operands *o, Value v, bool keep_number) {
    if (v.type == VAL_NUM || v.type == VAL_BOOL) {
        double x = v.type == VAL_NUM ? v.as.n : v.as.b;
        if (keep_number) {
            operands_push(o, op_arg_num(x, v.type == VAL_BOOL));
            return true;
        }
    }
    if (v.type == VAL_TENSOR) {
        operands_push(o, op_arg_tensor(v.as.t));
        return true;
    }
    Value t = interp_to_tensor(I, v, -1);
    if (IS_ERR(t)) return false;
    operands_push(o, op_arg_tensor(t.as.t));
    o->owned[o->nowned++] = t;
    return true;
}

static bool list_operands(Interp *I, const char *fname, Operands *o, Value v) {
    if (v.type != VAL_LIST) return interp_errork(I, ERRK_TYPE, "%s() needs a list of tensors", fname), false;
    ObjList *l = AS_LIST(v);
    for (int i = 0; i < l->len; i++)
        if (!operand_of(I, o, l->items[i], false)) return false;
    return true;
}


bool opargs_check_operand(Interp *I, OpCode op, int p, Value v) {
    const OpDef *d = op_def(op);
    const OpParam *pp = &d->params[p];
    bool number_like = v.type == VAL_NUM || v.type == VAL_BOOL || v.type == VAL_TENSOR;
    if (pp->type == P_N && !number_like)
        return interp_errork(I, ERRK_TYPE, "%s(): '%s' must be a number, got a %s", d->name, pp->name, val_type_name(v)), false;
    if (pp->type == P_TOPT && !number_like && v.type != VAL_LIST)
        return interp_errork(I, ERRK_TYPE, "%s(): '%s' must be a number or a tensor, got a %s", d->name, pp->name, val_type_name(v)),
               false;
    return true;
}

static bool bind_call(Interp *I, OpCode op, CallArgs *a, Operands *o, OpAttrs *at) {
    const OpDef *d = op_def(op);
    int which[OP_MAX_PARAMS];
    if (op_bind(op, a->npos, (const char *const *)a->kwnames, a->nkw, which))
        return interp_op_error(I), false;
    opargs_attrs_init(op, at);
    for (int p = 0; p < d->nparams; p++) {
        const OpParam *pp = &d->params[p];
        Value v = opargs_value(a, which[p]);
        if (pp->type == P_TS) {
            if (!list_operands(I, d->name, o, v)) return false;
        } else if (pp->type == P_T || pp->type == P_TOPT || pp->type == P_N) {
            if (v.type == VAL_UNDEF || (v.type == VAL_NIL && pp->type == P_TOPT)) {
                bool num = pp->type == P_N || (pp->type == P_T && !pp->default_nil);   /* "T=0.01": a weak scalar */
                operands_push(o, num ? op_arg_num(pp->default_num, false) : (OpArg){ .kind = ARG_NONE });
                continue;
            }
            if (!opargs_check_operand(I, op, p, v)) return false;
            if (!operand_of(I, o, v, op_param_takes_number(d, pp->type))) return false;
        } else if (!opargs_attr(I, op, p, v, at)) {
            return false;
        }
    }
    return true;
}


/* A temporary tensor operand (only the argument slot and nobody else holds it) whose dtype
 * and shape the result has: an elementwise op writes into it, as NumPy's elision does. */
static Tensor *reusable_operand(Interp *I, const OpCall *c, CallArgs *a) {
    if (I->tape) return NULL;   /* the tape keeps operands: they must not change */
    if (op_info[c->op].kind != K_UNARY || c->in[0].kind != ARG_TENSOR || a->npos < 1) return NULL;
    Tensor *t = (Tensor *)c->in[0].t;
    if (a->pos[0].type != VAL_TENSOR || t->rc != 1 || t->buf->rc != 1) return NULL;
    DType ct, dt;   /* a unary result has its operand's shape: only the dtype can differ */
    if (ew_types(c, &ct, &dt) || dt != t->dtype) return NULL;
    return tensor_retain(t);
}

Value interp_call_op(Interp *I, OpCode op, CallArgs *a) {
    const OpDef *d = op_def(op);
    Operands o;
    operands_init(&o);
    OpAttrs at;
    Value r = ERR_VAL;
    if (a->npos == 1 && a->nkw == 0 && d->nparams == 1 && d->params[0].type == P_T && a->pos[0].type == VAL_TENSOR) {
        /* one tensor for the one parameter (exp(t), flatten(t)...): nothing to bind */
        opargs_attrs_init(op, &at);
        operands_push(&o, op_arg_tensor(a->pos[0].as.t));
    } else if (!bind_call(I, op, a, &o, &at)) {
        goto out;
    } else {
        op = opargs_variant(op, &at);
    }
    double x;
    int rc = op_run_number(op, o.in, o.nin, &at, &x);
    if (rc == 0) { r = op_number_is_bool(op, o.in, o.nin) ? BOOL_VAL(x != 0) : NUM_VAL(x); goto out; }
    if (rc == -2) { interp_op_error(I); goto out; }
    OpCall call = { op, o.nin, o.in, &at };
    Tensor *res[OP_MAX_OUT] = { reusable_operand(I, &call, a), NULL, NULL };
    /* a reused operand was inferred already: straight to the kernel */
    if (res[0] ? op_exec(&call, res) : op_run(&call, res)) {
        tensor_release(res[0]);
        interp_op_error(I);
        goto out;
    }
    if (I->tape && autograd_record(&call, res)) {
        for (int k = 0; k < OP_MAX_OUT; k++) tensor_release(res[k]);
        interp_op_error(I);
        goto out;
    }
    if (d->flags & F_ITEM) {
        double x = 0;
        if (tensor_first(res[0], &x)) r = interp_op_error(I);   /* a GPU result is copied */
        else r = res[0]->dtype == DT_BOOL ? BOOL_VAL(x != 0) : NUM_VAL(x);
        tensor_release(res[0]);
        goto out;
    }
    if (d->nout == 1) { r = TENSOR_VAL(res[0]); goto out; }
    ObjList *l = list_new(d->nout);
    for (int k = 0; k < d->nout; k++) l->items[l->len++] = TENSOR_VAL(res[k]);
    r = OBJ_VAL(VAL_LIST, l);
out:
    operands_free(&o);
    return r;
}
