/* tbuiltins.c - the tensor built-ins of spec section 5. Every op of ops.def is a built-in
 * through one generic wrapper (interp_call_op, lang/opargs.c), so a row added to the table
 * is callable from TSL with no code here; what stays here are the built-ins that are not
 * ops: tensor() from nested lists, conversions, comparisons of whole tensors, devices, files. */
#include <limits.h>
#include <math.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "tops.h"
#include "builtins.h"
#include "infer.h"
#include "opargs.h"
#include "ctx.h"
#include "autograd.h"
#include "grad.h"
#include "pool.h"
#include "einsum.h"

/* ---------- conversions ---------- */

static Value tresult(Interp *I, Tensor *t) {
    if (!t) return interp_op_error(I);
    return TENSOR_VAL(t);
}

/* Shape of a nested list of numbers/bools/tensors; false on a ragged list. */
static bool nested_shape(Interp *I, Value v, Shape *s, int depth, bool *all_bool) {
    if (depth > TSL_MAX_RANK || (depth == TSL_MAX_RANK && v.type == VAL_LIST))
        return interp_errork(I, ERRK_SHAPE, "tensor(): nesting deeper than rank %d", TSL_MAX_RANK), false;
    if (v.type == VAL_NUM) { *all_bool = false; s->ndim = depth; return true; }
    if (v.type == VAL_BOOL) { s->ndim = depth; return true; }
    if (v.type == VAL_TENSOR) {
        Tensor *t = v.as.t;
        if (t->device != DEV_CPU)
            return interp_errork(I, ERRK_DEVICE, "tensor(): a GPU tensor inside a list (move it with to(t, \"cpu\") first)"), false;
        if (depth + t->ndim > TSL_MAX_RANK) return interp_errork(I, ERRK_TYPE, "tensor(): rank above %d", TSL_MAX_RANK), false;
        if (t->dtype != DT_BOOL) *all_bool = false;
        for (int i = 0; i < t->ndim; i++) s->d[depth + i] = t->shape[i];
        s->ndim = depth + t->ndim;
        return true;
    }
    if (v.type != VAL_LIST) {
        interp_errork(I, ERRK_TYPE, "tensor(): cannot make a tensor from a %s", val_type_name(v));
        return false;
    }
    ObjList *l = AS_LIST(v);
    s->d[depth] = l->len;
    if (l->len == 0) { s->ndim = depth + 1; *all_bool = false; return true; }
    Shape first;
    if (!nested_shape(I, l->items[0], &first, depth + 1, all_bool)) return false;
    for (int i = 1; i < l->len; i++) {
        Shape other;
        if (!nested_shape(I, l->items[i], &other, depth + 1, all_bool)) return false;
        if (other.ndim != first.ndim || memcmp(other.d + depth + 1, first.d + depth + 1,
                                               sizeof(int64_t) * (size_t)(first.ndim - depth - 1))) {
            interp_errork(I, ERRK_SHAPE, "tensor(): ragged nested list (sub-lists of different shapes)");
            return false;
        }
    }
    *s = first;
    s->d[depth] = l->len;
    return true;
}

static void nested_fill(Value v, Tensor *t, int64_t *pos) {
    if (v.type == VAL_NUM) tensor_set(t, (*pos)++, v.as.n);
    else if (v.type == VAL_BOOL) tensor_set(t, (*pos)++, v.as.b);
    else if (v.type == VAL_TENSOR)
        for (int64_t i = 0; i < v.as.t->size; i++) tensor_set(t, (*pos)++, tensor_get(v.as.t, i));
    else
        for (int i = 0; i < AS_LIST(v)->len; i++) nested_fill(AS_LIST(v)->items[i], t, pos);
}

/* Any value that can be a tensor: numbers, bools, nested lists, tensors (retained).
 * dtype -1: bool if every element is a bool, else f32 (a tensor keeps its dtype). */
Value interp_to_tensor(Interp *I, Value v, int dtype) {
    if (v.type == VAL_TENSOR) {
        if (dtype < 0 || v.as.t->dtype == (DType)dtype) return val_retain(v);
        return tresult(I, tensor_astype(v.as.t, (DType)dtype));
    }
    /* elements read into a new tensor are numbers to it: a tracked one would leave the tape */
    if (I->tape && value_holds_tracked(v))
        return interp_errork(I, ERRK_VALUE, "no gradient through a list of tensors made into a tensor yet: stack() them instead");
    Shape s;
    bool all_bool = true;
    if (!nested_shape(I, v, &s, 0, &all_bool)) return ERR_VAL;
    DType dt = dtype >= 0 ? (DType)dtype : all_bool ? DT_BOOL : DT_F32;
    Tensor *t = tensor_new(dt, &s);
    if (!t) return interp_op_error(I);
    int64_t pos = 0;
    nested_fill(v, t, &pos);
    return TENSOR_VAL(t);
}

static bool arg_dtype(Interp *I, const char *fname, Value v, int *out) {
    if (v.type == VAL_UNDEF || v.type == VAL_NIL) { *out = -1; return true; }
    DType d;
    if (v.type != VAL_STR || dtype_parse(AS_STR(v)->chars, &d)) {
        interp_errork(I, ERRK_TYPE, "%s(): dtype must be one of \"f32\", \"f64\", \"i64\", \"bool\"", fname);
        return false;
    }
    *out = (int)d;
    return true;
}

/* ---------- construction from values ---------- */

/* A new tensor is made on the default device (spec: --device, device("gpu")): t, made on
 * the host, moves there (tensor(), load_npy; formats.c's loaders too). */
static Value on_default_device(Interp *I, Value t) {
    if (IS_ERR(t) || ops_ctx()->default_device == DEV_CPU) return t;
    Tensor *moved = tensor_to(t.as.t, ops_ctx()->default_device);
    val_release(t);
    return tresult(I, moved);
}

/* tensor(t): a copy, or t converted to dtype dt (>= 0). Under grad it is recorded as what it
 * computes (reshape to its own shape, or astype), as static code compiles it, so the
 * gradient flows through the copy. */
static Value tensor_of_tensor(Interp *I, const Tensor *t, int dt) {
    Tensor *r = dt < 0 ? tensor_copy(t) : tensor_astype(t, (DType)dt);
    if (!r) return interp_op_error(I);
    OpAttrs at = attrs_default();
    shape_of(t, &at.shape);
    at.dtype = dt;
    if (I->tape && autograd_record_unary(dt < 0 ? OP_RESHAPE : OP_ASTYPE, t, &at, r)) {
        tensor_release(r);
        return interp_op_error(I);
    }
    return TENSOR_VAL(r);
}

static Value bi_tensor(Interp *I, CallArgs *a) {
    Value v[2];
    int dt;
    if (!builtin_bind(I, a, bi_tensor, v) || !arg_dtype(I, "tensor", v[1], &dt)) return ERR_VAL;
    if (v[0].type == VAL_TENSOR) return tensor_of_tensor(I, v[0].as.t, dt);
    Value t;
    if (dt == DT_I64 || dt == DT_BOOL) {
        /* i64 from numbers: non-integral values are an error rather than silently truncated */
        Value f = interp_to_tensor(I, v[0], DT_F64);
        if (IS_ERR(f)) return f;
        Tensor *r = tensor_astype(f.as.t, (DType)dt);
        val_release(f);
        t = tresult(I, r);
    } else {
        t = interp_to_tensor(I, v[0], dt);
    }
    return on_default_device(I, t);
}

static Value bi_seed(Interp *I, CallArgs *a) {
    Value v[1];
    int64_t n;
    if (!builtin_bind(I, a, bi_seed, v) || !arg_int(I, "seed", "n", v[0], &n)) return ERR_VAL;
    rng_seed((uint64_t)n);
    return NIL_VAL;
}

/* PyTorch's torch.set_flush_denormal: subnormal floats flushed to zero on every thread of the
 * pool (ops/pool.h); true where the CPU has the mode. */
static Value bi_set_flush_denormal(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_set_flush_denormal, v)) return ERR_VAL;
    if (v[0].type != VAL_BOOL) return interp_errork(I, ERRK_TYPE, "set_flush_denormal() needs a bool, got a %s", val_type_name(v[0]));
    return BOOL_VAL(pool_set_flush_denormal(v[0].as.b));
}

/* ---------- ops from the table ---------- */

/* One built-in per op of ops.def (those an operator does not stand for): each binds its
 * arguments and runs through the op core. */
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) \
    static Value bi_op_##id(Interp *I, CallArgs *a) { return interp_call_op(I, OP_##id, a); }
#include "ops.def"
#undef OP

const BuiltinFn op_builtins[OP__COUNT] = {
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) bi_op_##id,
#include "ops.def"
#undef OP
};

/* ---------- conversion and comparison ---------- */

static Value bi_item(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_item, v)) return ERR_VAL;
    if (v[0].type == VAL_NUM) return v[0];
    if (v[0].type != VAL_TENSOR) return interp_errork(I, ERRK_TYPE, "item() needs a tensor or a number, got a %s", val_type_name(v[0]));
    char m[128];
    if (v[0].as.t->size != 1) return interp_error(I, "%s", one_element_message(m, sizeof m, "item", v[0].as.t->size));
    Tensor *h = tensor_host(v[0].as.t);
    if (!h) return interp_op_error(I);
    double x = tensor_get(h, 0);
    tensor_release(h);
    return v[0].as.t->dtype == DT_BOOL ? BOOL_VAL(x != 0) : NUM_VAL(x);
}

static Value tolist_rec(const Tensor *t, int dim, int64_t *pos) {
    if (dim == t->ndim) {
        double x = tensor_get(t, (*pos)++);
        return t->dtype == DT_BOOL ? BOOL_VAL(x != 0) : NUM_VAL(x);
    }
    ObjList *l = list_new(0);
    for (int64_t i = 0; i < t->shape[dim]; i++) {
        Value x = tolist_rec(t, dim + 1, pos);
        list_push(l, x);
        val_release(x);
    }
    return OBJ_VAL(VAL_LIST, l);
}

static Value bi_tolist(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_tolist, v)) return ERR_VAL;
    if (v[0].type != VAL_TENSOR) return interp_errork(I, ERRK_TYPE, "tolist() needs a tensor, got a %s", val_type_name(v[0]));
    /* The lists cost a Value per item even where a 0 dim makes the tensor empty (zeros([2**40, 0])
     * would be 2**40 empty lists): bound the items by the tensor limit, and each list by int. */
    const Tensor *t = v[0].as.t;
    int64_t items = 0, level = 1;
    for (int d = 0; d < t->ndim && level; d++) {
        if (t->shape[d] > INT_MAX || __builtin_mul_overflow(level, t->shape[d], &level) ||
            __builtin_add_overflow(items, level, &items) || items > I->opsctx->max_tensor_bytes / (int64_t)sizeof(Value)) {
            char sh[600];
            Shape s;
            shape_of(t, &s);
            return interp_errork(I, ERRK_MEMORY, "tolist(): a tensor of shape %s makes too many list items (limit %lld, --max-tensor-bytes)",
                                shape_str(&s, sh, sizeof sh), (long long)(I->opsctx->max_tensor_bytes / (int64_t)sizeof(Value)));
        }
    }
    Tensor *h = tensor_host(t);
    if (!h) return interp_op_error(I);
    int64_t pos = 0;
    Value r = tolist_rec(h, 0, &pos);
    tensor_release(h);
    return r;
}

/* ---------- devices ---------- */

/* The device v names, started (the GPU's first use loads the CUDA plugin). */
static bool device_ok(Interp *I, Value v, const char *fname, Device *dev) {
    char names[128];
    device_names(names, sizeof names);
    if (v.type != VAL_STR) return interp_errork(I, ERRK_DEVICE, "%s(): device must be %s", fname, names), false;
    const char *d = AS_STR(v)->chars;
    if (device_by_name(d, dev)) return interp_errork(I, ERRK_DEVICE, "%s(): unknown device \"%s\" (use %s)", fname, d, names), false;
    return device_start(*dev) ? interp_op_error(I), false : true;
}

static Value bi_to(Interp *I, CallArgs *a) {
    Value v[2];
    Device d;
    if (!builtin_bind(I, a, bi_to, v) || !device_ok(I, v[1], "to", &d)) return ERR_VAL;
    if (v[0].type != VAL_TENSOR) return interp_errork(I, ERRK_TYPE, "to() needs a tensor, got a %s", val_type_name(v[0]));
    return tresult(I, tensor_to(v[0].as.t, d));
}

static Value bi_device(Interp *I, CallArgs *a) {
    Value v[1];
    Device d;
    if (!builtin_bind(I, a, bi_device, v)) return ERR_VAL;
    if (v[0].type == VAL_UNDEF) return val_cstr(device_name(ops_ctx()->default_device));
    if (!device_ok(I, v[0], "device", &d)) return ERR_VAL;
    ops_ctx()->default_device = d;
    return NIL_VAL;
}

/* devices(): the devices that start (the GPU's loads its plugin), so a script can choose one
 * without catching an error (spec section 12). */
static Value bi_devices(Interp *I, CallArgs *a) {
    if (a->npos || a->nkw) return interp_errork(I, ERRK_TYPE, "devices() takes no arguments");
    ObjList *l = list_new(DEV__COUNT);
    for (int i = 0; i < DEV__COUNT; i++) {
        if (device_start((Device)i)) continue;   /* not there: its error is not the program's */
        Value s = val_cstr(device_name((Device)i));
        list_push(l, s);
        val_release(s);
    }
    return OBJ_VAL(VAL_LIST, l);
}

/* ---------- I/O ---------- */

static bool path_arg(Interp *I, const char *fname, Value v) {
    if (I->sandbox) {
        interp_errork(I, ERRK_IO, "%s() is disabled in this sandbox", fname);
        return false;
    }
    if (v.type == VAL_STR) return true;
    interp_errork(I, ERRK_TYPE, "%s(): path must be a string", fname);
    return false;
}

static Value bi_load_npy(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_load_npy, v) || !path_arg(I, "load_npy", v[0])) return ERR_VAL;
    return on_default_device(I, tresult(I, npy_load(AS_STR(v[0])->chars)));
}

static Value bi_save_npy(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_save_npy, v) || !path_arg(I, "save_npy", v[0])) return ERR_VAL;
    if (v[1].type != VAL_TENSOR) return interp_errork(I, ERRK_TYPE, "save_npy() needs a tensor, got a %s", val_type_name(v[1]));
    Tensor *t = tensor_host(v[1].as.t);   /* a GPU tensor is written from a host copy */
    int rc = t ? npy_save(AS_STR(v[0])->chars, t) : -1;
    tensor_release(t);
    if (rc) return interp_op_error(I);
    return NIL_VAL;
}

/* ---------- einsum: a plan of ops (ops/einsum.c), run and recorded one by one ---------- */

static Value bi_einsum(Interp *I, CallArgs *a) {
    if (a->nkw) return interp_error(I, "einsum() takes no keyword arguments");
    if (a->npos < 2 || !IS_STR(a->pos[0])) return interp_error(I, "einsum() needs subscripts (a string) and at least one tensor");
    int n = a->npos - 1;
    if (n > EIN_MAX_OPERANDS) return interp_error(I, "einsum(): needs 1 to %d operands, got %d", EIN_MAX_OPERANDS, n);
    Shape sh[EIN_MAX_OPERANDS];
    DType dt[EIN_MAX_OPERANDS];
    for (int i = 0; i < n; i++) {
        if (a->pos[i + 1].type != VAL_TENSOR) return interp_error(I, "einsum() operand %d must be a tensor, got a %s", i + 1, val_type_name(a->pos[i + 1]));
        shape_of(a->pos[i + 1].as.t, &sh[i]);
        dt[i] = a->pos[i + 1].as.t->dtype;
    }
    EinPlan *p = mem_alloc(sizeof *p);
    if (einsum_plan(AS_STR(a->pos[0])->chars, n, sh, dt, p)) {
        mem_free(p);
        return interp_error(I, "%s", op_error());
    }
    Tensor **slot = mem_calloc((size_t)p->nslots, sizeof(Tensor *));
    for (int i = 0; i < n; i++) slot[i] = tensor_retain(a->pos[i + 1].as.t);
    Value r = ERR_VAL;
    for (int k = 0; k < p->nsteps; k++) {
        EinStep *st = &p->step[k];
        OpArg in[2];
        for (int j = 0; j < st->nin; j++) in[j] = op_arg_tensor(slot[st->in[j]]);
        OpCall call = { st->op, st->nin, in, &st->at };
        Tensor *res[OP_MAX_OUT] = { NULL, NULL, NULL };
        if (op_run(&call, res) || (I->tape && autograd_record(&call, res))) {
            tensor_release(res[0]);
            interp_error(I, "%s", op_error());
            goto out;
        }
        slot[n + k] = res[0];
    }
    r = TENSOR_VAL(tensor_retain(slot[p->result]));
out:
    for (int i = 0; i < p->nslots; i++) tensor_release(slot[i]);
    mem_free(slot);
    mem_free(p);
    return r;
}

const BuiltinDef tensor_builtins[] = {
    { "tensor", bi_tensor, "(data, dtype=nil)", "a tensor from a number, a nested list or a tensor (a copy)", ST_TENSOR | ST_FOLDS },
    { "seed", bi_seed, "(n)", "restarts the random generator from n", ST_SEED },
    { "set_flush_denormal", bi_set_flush_denormal, "(b)",
      "true: float results and operands that are subnormal are zero from now on (faster where they occur); returns whether the CPU can", ST_NONE },
    { "item", bi_item, "(x)", "the one element of a tensor as a number (or bool)", ST_ITEM | ST_CUTS },
    { "tolist", bi_tolist, "(t)", "a tensor as nested lists of numbers (or bools)", ST_TOLIST | ST_CUTS },
    { "to", bi_to, "(t, device)", "the tensor on device \"cpu\" or \"gpu\"", ST_TO },
    { "device", bi_device, "(name=nil)", "the default device, or sets it", ST_NONE },
    { "devices", bi_devices, "()", "the devices this process can use: [\"cpu\"] or [\"cpu\", \"gpu\"]", ST_FOLDS },
    { "load_npy", bi_load_npy, "(path)", "a tensor from a NumPy .npy file", ST_NONE },
    { "einsum", bi_einsum, "(subscripts, ...)",
      "NumPy's einsum (\"ij,jk->ik\", implicit output, \"...\", repeated labels): transposes, sums and matmuls", ST_EINSUM },
    { "save_npy", bi_save_npy, "(path, t)", "writes the tensor as a NumPy .npy file", ST_WRITE },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
