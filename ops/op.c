/* op.c - the op table and the one way to call an op.
 *
 * op_info[] is generated from ops.def; op_table_init() parses each row's signature into
 * typed parameters. op_bind() maps a call's arguments onto them through args_match(), the
 * binder of every built-in (eager built-ins and the static compiler both use it, so both
 * say the same thing about a bad call), op_infer()
 * gives result shapes and dtypes through the row's infer_<impl>, and op_run() allocates
 * the results and hands the call to the device that holds the operands. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suggest.h"
#include "opcall.h"
#include "ctx.h"
#include "infer.h"
#include "grad.h"
#include "cpu/cpu.h"   /* numbers are computed by the CPU library */

OpDef op_info[OP__COUNT] = {
#define OP(id, nm, sig, no, kd, fl, rule, impl, sym, dc) \
    { .name = nm, .signature = sig, .symbol = sym, .doc = dc, .nout = no, .kind = kd, .flags = fl, .dtype_rule = rule },
#include "ops.def"
#undef OP
};

typedef int (*InferFn)(const OpCall *c, Shape *out, DType *dt);
static const InferFn infer_of[OP__COUNT] = {
#define OP(id, nm, sig, no, kd, fl, rule, impl, sym, dc) infer_##impl,
#include "ops.def"
#undef OP
};

/* ---------- signatures ---------- */

static const struct { const char *name; ParamType type; } param_types[] = {
    { "T", P_T }, { "T?", P_TOPT }, { "Ts", P_TS }, { "N", P_N }, { "axis", P_AXIS }, { "axes", P_AXES },
    { "bool", P_BOOL }, { "int", P_INT }, { "f", P_F }, { "shape", P_SHAPE }, { "shape-", P_SHAPE_M1 },
    { "pairs", P_PAIRS }, { "redop", P_REDOP }, { "dtype", P_DTYPE }, { "win", P_WIN }, { "pad", P_PADW },
};

const char *const redop_names[4] = { "sum", "mean", "max", "min" };

bool op_param_takes_number(const OpDef *d, ParamType t) {
    return t == P_N || (d->flags & F_WEAK) || d->kind == K_UNARY || d->kind == K_BINARY || d->kind == K_COMPARE;
}

static void table_abort(const OpDef *d, const char *why) {
    fprintf(stderr, "tsl: ops.def: row '%s': %s\n", d->name, why);
    abort();
}

/* "name:type" or "name:type=default" */
static void parse_param(OpDef *d, const char *text, size_t len, int *nint, int *nf, int *npair) {
    char buf[64];
    if (len >= sizeof buf || d->nparams == OP_MAX_PARAMS) table_abort(d, "parameter too long or too many");
    memcpy(buf, text, len);
    buf[len] = 0;
    char *colon = strchr(buf, ':'), *eq = strchr(buf, '=');
    if (!colon) table_abort(d, "parameter without a type");
    *colon = 0;
    if (eq) *eq = 0;
    OpParam *p = &d->params[d->nparams++];
    p->name = strdup(buf);   /* lives as long as the process: the table is static */
    size_t i = 0, n = sizeof param_types / sizeof param_types[0];
    while (i < n && strcmp(param_types[i].name, colon + 1)) i++;
    if (i == n && !strchr(colon + 1, '|')) table_abort(d, "unknown parameter type");
    p->type = i < n ? param_types[i].type : P_CHOICE;
    if (p->type == P_CHOICE) p->choices = strdup(colon + 1);
    p->required = !eq && p->type != P_TOPT;
    if (p->required && d->nparams > 1 && !d->params[d->nparams - 2].required) table_abort(d, "a required parameter after an optional one");
    p->default_nil = p->type == P_TOPT || (eq && !strcmp(eq + 1, "nil"));
    if (eq && !p->default_nil) p->default_num = !strcmp(eq + 1, "true") ? 1 : !strcmp(eq + 1, "false") ? 0 : atof(eq + 1);
    if (eq && p->type == P_REDOP) {
        int r = 0;
        while (r < 4 && strcmp(redop_names[r], eq + 1)) r++;
        if (r == 4) table_abort(d, "unknown redop default");
        p->default_num = r;
    }
    if (eq && p->type == P_CHOICE && (p->default_num = op_choice_index(p, eq + 1)) < 0) table_abort(d, "unknown choice default");
    if (op_param_is_operand(p->type)) p->slot = d->noperands++;
    else if (p->type == P_INT || p->type == P_REDOP || p->type == P_CHOICE) p->slot = (*nint)++;
    else if (p->type == P_F) p->slot = (*nf)++;
    else if (p->type == P_BOOL) {   /* OpAttrs has two: flag and flag2 */
        p->slot = 0;
        for (int q = 0; q < d->nparams - 1; q++) p->slot += d->params[q].type == P_BOOL;
        if (p->slot > 1) table_abort(d, "more than 2 bool parameters");
    }
    else if (p->type == P_WIN || p->type == P_PADW) {
        p->slot = *npair;
        *npair += p->type == P_PADW ? 2 : 1;
    }
    if (*nint > 3 || *nf > 3) table_abort(d, "more than 3 int or f parameters");
}

int op_choice_index(const OpParam *p, const char *name) {
    size_t n = strlen(name);
    int k = 0;
    for (const char *s = p->choices; *s; k++) {
        size_t len = strcspn(s, "|");
        if (len == n && !memcmp(s, name, n)) return k;
        s += len + (s[len] == '|');
    }
    return -1;
}

/* The table is filled once per process (pthread_once: any thread may be first) and only
 * read afterwards, so it is shared by every interpreter and thread. */
static void op_table_build(void) {
    grad_table_init();
    for (int op = 0; op < OP__COUNT; op++) {
        OpDef *d = &op_info[op];
        int nint = 0, nf = 0, npair = 0;
        for (const char *s = d->signature; *s;) {
            const char *end = strchr(s, ',');
            size_t len = end ? (size_t)(end - s) : strlen(s);
            parse_param(d, s, len, &nint, &nf, &npair);
            s += len;
            while (*s == ',' || *s == ' ') s++;
        }
        if (d->nout < 1 || d->nout > OP_MAX_OUT) table_abort(d, "bad result count");
    }
}

void op_table_init(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, op_table_build);
}

const OpDef *op_def(OpCode op) {
    op_table_init();
    return &op_info[op];
}

OpCode op_by_name(const char *name) {
    for (int i = 0; i < OP__COUNT; i++)
        if (!(op_info[i].flags & F_SYNTAX) && !strcmp(op_info[i].name, name)) return (OpCode)i;
    return OP__COUNT;
}

OpCode op_by_symbol(const char *sym, int nin) {
    for (int i = 0; i < OP__COUNT; i++) {
        const OpDef *d = &op_info[i];
        bool arity_ok = (d->kind == K_UNARY) == (nin == 1);
        if (d->symbol && arity_ok && !strcmp(d->symbol, sym)) return (OpCode)i;
    }
    return OP__COUNT;
}

const char *op_display(OpCode op, char *buf, size_t n) {
    if (op_info[op].symbol) snprintf(buf, n, "'%s'", op_info[op].symbol);
    else snprintf(buf, n, "%s", op_info[op].name);
    return buf;
}

void op_arg_shape(const OpArg *a, Shape *s) {
    s->ndim = a->kind == ARG_TENSOR ? a->ndim : 0;
    for (int i = 0; i < s->ndim; i++) s->d[i] = a->dims[i];
}

/* ---------- binding ---------- */

bool args_match(const char *fname, const char *const *params, int nreq, int npos, const char *const *kwn, int nkw,
                int *which, char *err, size_t n) {
    int np = 0;
    while (params[np]) np++;
    if (np == 0 && npos + nkw > 0) {
        snprintf(err, n, "%s() takes no arguments", fname);
        return false;
    }
    if (npos > np) {
        snprintf(err, n, "%s() takes at most %d argument%s but %d were given", fname, np, np == 1 ? "" : "s", npos);
        return false;
    }
    for (int i = 0; i < np; i++) which[i] = i < npos ? i : -1;
    for (int k = 0; k < nkw; k++) {
        int i = 0;
        while (i < np && strcmp(params[i], kwn[k])) i++;
        if (i == np) {
            char hint[SUGGEST_MAX_NAME + 24];
            snprintf(err, n, "%s() got an unknown keyword argument '%s'%s", fname, kwn[k],
                     suggest_among(kwn[k], params, hint, sizeof hint));
            return false;
        }
        if (which[i] >= 0) {
            snprintf(err, n, "%s() got multiple values for parameter '%s'", fname, params[i]);
            return false;
        }
        which[i] = npos + k;
    }
    for (int i = 0; i < nreq; i++)
        if (which[i] < 0) {
            snprintf(err, n, "%s() missing argument '%s'", fname, params[i]);
            return false;
        }
    return true;
}

int op_bind(OpCode op, int nargs, const char *const *kwnames, int nkw, int *which) {
    const OpDef *d = op_def(op);
    if (nkw == 0 && nargs <= d->nparams && (nargs == d->nparams || !d->params[nargs].required)) {
        for (int p = 0; p < d->nparams; p++) which[p] = p < nargs ? p : -1;
        return 0;   /* the usual call, positional with the required ones (the first): args_match's answer */
    }
    const char *names[OP_MAX_PARAMS + 1];
    int nreq = 0;
    for (int p = 0; p < d->nparams; p++) {
        names[p] = d->params[p].name;
        nreq += d->params[p].required;   /* the first ones (parse_param) */
    }
    names[d->nparams] = NULL;
    char err[300];
    if (args_match(d->name, names, nreq, nargs, kwnames, nkw, which, err, sizeof err)) return 0;
    op_failk(ERRK_TYPE, "%s", err);
    return -1;
}

/* ---------- promotion ---------- */

/* Whether number x keeps dtype dt beside a tensor of that dtype (spec section 5). */
static bool number_fits(DType dt, double x, bool is_bool) {
    if (is_bool || dtype_is_float(dt)) return true;
    bool integral = x == floor(x) && double_fits_i64(x);
    return dt == DT_I64 && integral;
}

DType op_promote(const OpArg *in, int n) {
    bool any_tensor = false, any_number = false;
    DType dt = DT_BOOL;
    for (int i = 0; i < n; i++)
        if (in[i].kind == ARG_TENSOR) {
            if (!any_tensor || in[i].dtype > dt) dt = (DType)in[i].dtype;
            any_tensor = true;
        } else {
            any_number |= in[i].kind == ARG_NUM;
        }
    if (!any_number) return dt;   /* tensors only: the larger dtype */
    if (!any_tensor) {   /* numbers alone: f32, as tensor() makes them; bools alone: bool */
        for (int i = 0; i < n; i++)
            if (in[i].kind == ARG_NUM && !in[i].is_bool) return DT_F32;
        return DT_BOOL;
    }
    for (int i = 0; i < n; i++) {
        if (in[i].kind != ARG_NUM || number_fits(dt, in[i].x, in[i].is_bool)) continue;
        bool integral = in[i].x == floor(in[i].x) && double_fits_i64(in[i].x);
        dt = dt == DT_BOOL && integral ? DT_I64 : DT_F32;
    }
    return dt;
}

/* ---------- inference and execution ---------- */

int op_infer(const OpCall *c, Shape *out, DType *dt) {
    op_table_init();
    return infer_of[c->op](c, out, dt);
}

/* The device registry: every device of this build, by Device (a new device is a DeviceImpl and
 * its row here), and the started ones, the CPU from the start. A device starts on its first
 * use, possibly while another thread runs CPU code: it is published with release/acquire. */
static const DeviceImpl *const device_table[DEV__COUNT] = { [DEV_CPU] = &cpu_device, [DEV_GPU] = &gpu_device };
static const DeviceImpl *devices[DEV__COUNT] = { [DEV_CPU] = &cpu_device };

const DeviceImpl *op_device(Device d) {
    const DeviceImpl *impl = __atomic_load_n(&devices[d], __ATOMIC_ACQUIRE);
    if (!impl) op_failk(ERRK_DEVICE, "device '%s' is not started", device_name(d));
    return impl;
}

const DeviceImpl *device_impl(Device d) { return device_table[d]; }

int device_start(Device d) {
    if (__atomic_load_n(&devices[d], __ATOMIC_ACQUIRE)) return 0;
    if (device_table[d]->start && device_table[d]->start()) return -1;
    __atomic_store_n(&devices[d], device_table[d], __ATOMIC_RELEASE);
    return 0;
}

const char *device_name(Device d) { return device_table[d]->name; }

int device_by_name(const char *name, Device *d) {
    for (int i = 0; i < DEV__COUNT; i++)
        if (!strcmp(device_table[i]->name, name)) return *d = (Device)i, 0;
    return -1;
}

void device_names(char *buf, size_t n) {
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < DEV__COUNT && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s\"%s\"", i == 0 ? "" : i == DEV__COUNT - 1 ? " or " : ", ",
                                device_table[i]->name);
}

int64_t device_mallocs(void) {
    int64_t n = 0;
    for (int i = 0; i < DEV__COUNT; i++)
        if (device_table[i]->mallocs && __atomic_load_n(&devices[i], __ATOMIC_ACQUIRE)) n += device_table[i]->mallocs();
    return n;
}

/* The device of the call's tensor operands; mixing devices is an error naming both. */
static int call_device(const OpCall *c, Device *d) {
    *d = DEV_CPU;
    bool seen = false;
    for (int i = 0; i < c->nin; i++) {
        if (c->in[i].kind != ARG_TENSOR || !c->in[i].t) continue;
        Device x = c->in[i].t->device;
        if (seen && x != *d) {
            op_failk(ERRK_DEVICE, "%s(): operands are on different devices (%s and %s)", op_info[c->op].name, device_name(*d),
                    device_name(x));
            return -1;
        }
        *d = x;
        seen = true;
    }
    return 0;
}

/* The device a call with no tensor operand (zeros, arange, rand...) makes its results on:
 * the default device (device("gpu")). */
static Device default_device(const OpCall *c) {
    for (int i = 0; i < c->nin; i++)
        if (c->in[i].kind == ARG_TENSOR) return DEV_CPU;
    return ops_ctx()->default_device;
}

/* Results the CPU made for the default device (which has no kernel for the op) move there.
 * A call with tensor operands leaves its results on their device (default_device's DEV_CPU
 * then only means "not the default device's to make": the CPU has no from_host). */
static int to_default_device(const OpCall *c, Device made_on, int nout, Tensor **out) {
    for (int i = 0; i < c->nin; i++)
        if (c->in[i].kind == ARG_TENSOR) return 0;
    Device dev = default_device(c);
    if (dev == made_on) return 0;
    for (int k = 0; k < nout; k++) {
        Tensor *moved = tensor_to(out[k], dev);
        if (!moved) return -1;
        tensor_release(out[k]);
        out[k] = moved;
    }
    return 0;
}

int op_run(const OpCall *c, Tensor **out) {
    const OpDef *d = op_def(c->op);
    Shape s[OP_MAX_OUT];
    DType dt[OP_MAX_OUT];
    Device dev;
    if (op_infer(c, s, dt) || call_device(c, &dev)) return -1;
    const DeviceImpl *impl = op_device(dev);
    if (!impl) return -1;
    Device want = default_device(c);   /* no tensor operand: the default device, if it has the kernel */
    const DeviceImpl *there = want != dev ? op_device(want) : NULL;
    if (there && there->supports_op && there->supports_op(c)) {
        impl = there;
        dev = want;
    }
    if (impl->supports_op && !impl->supports_op(c)) {
        op_failk(ERRK_DEVICE, "%s() is not supported on device '%s'", d->name, impl->name);
        return -1;
    }
    /* results that are ours (not the caller's buffers) are dropped on failure */
    bool views = d->flags & (F_VIEW | F_DYNAMIC), kernel_makes = impl->allocates && impl->allocates(c->op);
    bool ours[OP_MAX_OUT] = { false };
    for (int k = 0; k < d->nout; k++) {
        if (views) {
            tensor_release(out[k]);
            out[k] = NULL;
        }
        ours[k] = !out[k];
        if (!out[k] && !views && !kernel_makes && !(out[k] = impl->alloc(dt[k], &s[k]))) goto fail;
    }
    if (impl->run(c, out) == 0 && to_default_device(c, dev, d->nout, out) == 0) return 0;
fail:
    for (int k = 0; k < d->nout; k++)
        if (ours[k]) {
            tensor_release(out[k]);
            out[k] = NULL;
        }
    return -1;
}

int op_exec(const OpCall *c, Tensor **out) {
    Device dev;
    if (call_device(c, &dev)) return -1;
    const DeviceImpl *impl = op_device(dev);
    if (!impl) return -1;
    if (dev != DEV_CPU && impl->supports_op && !impl->supports_op(c)) {   /* the CPU runs every op */
        op_failk(ERRK_DEVICE, "%s() is not supported on device '%s'", op_info[c->op].name, impl->name);
        return -1;
    }
    return impl->run(c, out);
}

int op_run_number(OpCode op, const OpArg *in, int n, const OpAttrs *at, double *r) {
    const OpDef *d = op_def(op);
    if (!(d->flags & F_NUM) || d->noperands != n) return -1;
    for (int i = 0; i < n; i++)
        if (in[i].kind != ARG_NUM) return -1;
    bool bools = true;
    for (int i = 0; i < n; i++) bools &= in[i].is_bool;
    if (d->dtype_rule == DR_INT && bools) {   /* ~ & | ^ on truth values are logical */
        bool x = in[0].x != 0, y = n > 1 && in[1].x != 0;
        *r = op == OP_BITWISE_NOT ? !x : op == OP_BITWISE_AND ? x && y : op == OP_BITWISE_OR ? x || y : x != y;
        return 0;
    }
    if (d->dtype_rule == DR_INT)
        for (int i = 0; i < n; i++)
            if (!in[i].is_bool && (in[i].x != floor(in[i].x) || !double_fits_i64(in[i].x))) {
                char name[32];
                op_failk(ERRK_TYPE, "%s is not supported for non-integral numbers (%g)", op_display(op, name, sizeof name), in[i].x);
                return -2;
            }
    if (op == OP_ROUND && at && at->i[0] != 0) {   /* NumPy's around, in f64, as on tensors */
        *r = op_round_number(in[0].x, at->i[0]);
        return 0;
    }
    *r = n == 1 ? op_unary_number(op, in[0].x) : op_binary_number(op, in[0].x, in[1].x);
    return 0;
}

double op_round_number(double x, int64_t decimals) {
    double r;
    cpu_round_decimals(DT_F64, &x, &r, 1, decimals);   /* f64 never fails */
    return r;
}

/* Comparisons, logical ops and the bitwise ones on truth values give truth values. */
bool op_number_is_bool(OpCode op, const OpArg *in, int n) {
    DtypeRule rule = op_def(op)->dtype_rule;
    bool bools = n > 0;
    for (int i = 0; i < n; i++) bools &= in[i].is_bool;
    return rule == DR_BOOL || rule == DR_CMP || (rule == DR_INT && bools);
}

/* ---------- conveniences (tops.h): one call each through op_run ---------- */

int op_run_with(OpCode op, const OpArg *in, int n, const OpAttrs *at, Tensor **out) {
    OpAttrs none;
    if (!at) {
        memset(&none, 0, sizeof none);
        none.naxes = -1;
        none.dtype = -1;
        at = &none;
    }
    OpCall c = { op, n, in, at };
    return op_run(&c, out);
}

static Tensor *call(OpCode op, const OpArg *in, int n, const OpAttrs *at) {
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    return op_run_with(op, in, n, at, out) ? NULL : out[0];
}

Tensor *op_unary(OpCode op, const Tensor *a) {
    OpArg in = op_arg_tensor(a);
    return call(op, &in, 1, NULL);
}

Tensor *op_binary(OpCode op, const Tensor *a, const Tensor *b) {
    OpArg in[2] = { op_arg_tensor(a), op_arg_tensor(b) };
    return call(op, in, 2, NULL);
}

Tensor *op_binary_scalar(OpCode op, const Tensor *a, double x, bool num_left) {
    OpArg in[2] = { op_arg_tensor(a), op_arg_num(x, false) };
    if (num_left) {
        in[1] = in[0];
        in[0] = op_arg_num(x, false);
    }
    return call(op, in, 2, NULL);
}

Tensor *op_reduce(OpCode op, const Tensor *a, const int *axes, int n, bool keepdims) {
    OpArg in = op_arg_tensor(a);
    OpAttrs at = { .naxes = n, .flag = keepdims, .dtype = -1 };
    if (n > TSL_MAX_RANK) {
        op_fail("%s: too many axes", op_info[op].name);
        return NULL;
    }
    for (int i = 0; i < n; i++) at.axes[i] = axes[i];
    return call(op, &in, 1, &at);
}

Tensor *op_softmax(const Tensor *a, int axis, bool log) {
    OpArg in = op_arg_tensor(a);
    OpAttrs at = { .naxes = -1, .axis = axis, .dtype = -1 };
    return call(log ? OP_LOG_SOFTMAX : OP_SOFTMAX, &in, 1, &at);
}

Tensor *op_matmul(const Tensor *a, const Tensor *b) { return op_binary(OP_MATMUL, a, b); }

Tensor *op_reshape(Tensor *a, const Shape *s) {
    OpArg in = op_arg_tensor(a);
    OpAttrs at = { .naxes = -1, .shape = *s, .dtype = -1 };
    return call(OP_RESHAPE, &in, 1, &at);
}

Tensor *op_full(const Shape *s, double v, DType dt) {
    OpArg in = op_arg_num(v, false);
    OpAttrs at = { .naxes = -1, .shape = *s, .dtype = (int)dt };
    return call(OP_FULL, &in, 1, &at);
}

static Tensor *draw(OpCode op, const Shape *s, int64_t lo, int64_t hi) {
    OpAttrs at = { .naxes = -1, .shape = *s, .dtype = -1, .i = { lo, hi } };
    return call(op, NULL, 0, &at);
}
Tensor *op_rand(const Shape *s) { return draw(OP_RAND, s, 0, 0); }
Tensor *op_randn(const Shape *s) { return draw(OP_RANDN, s, 0, 0); }
Tensor *op_randint(int64_t lo, int64_t hi, const Shape *s) { return draw(OP_RANDINT, s, lo, hi); }
