/* builtins.c - built-in functions that are not about tensors (spec section 5, "Other"
 * and "Conversion"), argument binding, and installation into module globals.
 * The tensor built-ins live in tbuiltins.c. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "interp.h"
#include "gc.h"
#include "mem.h"
#include "tops.h"
#include "builtins.h"
#include "autograd.h"
#include "help.h"


/* Binds a call to np parameters, the first nreq required, with args_match's messages. */
static bool bind_params(Interp *I, CallArgs *a, const char *fname, const char *const *params, int np, int nreq,
                        Value *out) {
    int which[ARGS_MAX];
    char err[300];
    if (!args_match(fname, params, nreq, a->npos, (const char *const *)a->kwnames, a->nkw, which, err, sizeof err))
        return interp_errork(I, ERRK_TYPE, "%s", err), false;
    for (int i = 0; i < np; i++)
        out[i] = which[i] < 0 ? UNDEF_VAL : which[i] < a->npos ? a->pos[which[i]] : a->kw[which[i] - a->npos];
    return true;
}

/* The usual call, as many positional arguments as allowed: args_match's result without it. */
static inline bool bind_positional(CallArgs *a, int np, int nreq, Value *out) {
    if (a->nkw || a->npos < nreq || a->npos > np) return false;
    for (int i = 0; i < np; i++) out[i] = i < a->npos ? a->pos[i] : UNDEF_VAL;
    return true;
}

bool args_bind(Interp *I, CallArgs *a, const char *fname, const char *const *params, int nreq, Value *out) {
    int np = 0;
    while (params[np]) np++;
    return bind_positional(a, np, nreq, out) || bind_params(I, a, fname, params, np, nreq, out);
}

const BuiltinParams *builtin_bind(Interp *I, CallArgs *a, BuiltinFn self, Value *out) {
    const ObjBuiltin *b = I->calling_builtin;   /* the interpreter and constant folding set it */
    const BuiltinParams *p = b && (!self || b->fn == self) ? b->params : NULL;
    if (p && bind_positional(a, p->np, p->nreq, out)) return p;
    if (!p || p->nreq < 0) return interp_error(I, "internal error: a built-in without a plain signature"), NULL;
    return bind_params(I, a, p->def->name, p->names, p->np, p->nreq, out) ? p : NULL;
}

int builtin_params(const BuiltinDef *d, const char **params, char *buf, size_t n) {
    size_t len = strlen(d->signature);
    if (len < 2 || len > n || strchr(d->signature, '[') || strstr(d->signature, "...")) return -1;
    memcpy(buf, d->signature + 1, len - 2);   /* without the parentheses */
    buf[len - 2] = 0;
    int np = 0, nreq = -1;
    for (char *p = buf, *next; *p; p = next) {
        if (np == ARGS_MAX) return -1;
        char *sep = strstr(p, ", ");
        if (sep) *sep = 0;
        next = sep ? sep + 2 : p + strlen(p);
        char *eq = strchr(p, '=');   /* "sep=nil": optional, and so are those after it */
        if (eq) *eq = 0;
        if (eq && nreq < 0) nreq = np;
        params[np++] = p;
    }
    params[np] = NULL;
    return nreq < 0 ? np : nreq;
}

bool arg_number(Interp *I, const char *fname, const char *pname, Value v, double *out) {
    if (v.type == VAL_NUM) { *out = v.as.n; return true; }
    if (v.type == VAL_BOOL) { *out = v.as.b; return true; }
    if (v.type == VAL_TENSOR && v.as.t->size == 1) {
        if (tensor_first(v.as.t, out)) return interp_op_error(I), false;
        return true;
    }
    interp_errork(I, ERRK_TYPE, "%s(): '%s' must be a number, got a %s", fname, pname, val_type_name(v));
    return false;
}

bool arg_int(Interp *I, const char *fname, const char *pname, Value v, int64_t *out) {
    double x;
    if (!arg_number(I, fname, pname, v, &x)) return false;
    if (!num_to_i64(x, out)) {
        interp_errork(I, ERRK_TYPE, x == floor(x) ? "%s(): '%s' is out of the i64 range, got %g" : "%s(): '%s' must be an integer, got %g",
                     fname, pname, x);
        return false;
    }
    return true;
}

bool arg_str(Interp *I, const char *fname, const char *pname, Value v, ObjString **out) {
    if (v.type == VAL_STR) { *out = AS_STR(v); return true; }
    interp_errork(I, ERRK_TYPE, "%s(): '%s' must be a string, got a %s", fname, pname, val_type_name(v));
    return false;
}

/* ---- printing ---- */

static Value bi_print(Interp *I, CallArgs *a) {
    PrintOpts o;
    char err[200];
    if (!print_options(a->kwnames, a->kw, a->nkw, &o, err, sizeof err)) return interp_errork(I, ERRK_TYPE, "%s", err);
    return print_values(I, &o, a->pos, a->npos) ? NIL_VAL : ERR_VAL;
}

static Value bi_str(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_str, v)) return ERR_VAL;
    if (v[0].type == VAL_STR) return val_retain(v[0]);
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    if (!fmt_value_in(I, &b, v[0], false)) { sb_free(&b); return ERR_VAL; }
    Value r = val_str(b.s, (int)b.len);
    sb_free(&b);
    return r;
}

static Value bi_type(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_type, v)) return ERR_VAL;
    return val_cstr(val_type_name(v[0]));
}

static Value bi_len(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_len, v)) return ERR_VAL;
    switch (v[0].type) {
    case VAL_STR: return NUM_VAL((double)AS_STR(v[0])->ncp);
    case VAL_LIST: return NUM_VAL(AS_LIST(v[0])->len);
    case VAL_DICT: return NUM_VAL(AS_DICT(v[0])->len);
    case VAL_TENSOR:
        if (v[0].as.t->ndim == 0) return interp_errork(I, ERRK_TYPE, "len() of a 0-d tensor");
        return NUM_VAL((double)v[0].as.t->shape[0]);
    default: return interp_errork(I, ERRK_TYPE, "len() of a %s", val_type_name(v[0]));
    }
}

/* Messages name Python's parameters, range(stop) or range(start, stop, step), not the
 * binding's internal a/b. */
const char *range_param_name(int nargs, int i) {
    static const char *const more[] = { "start", "stop", "step" };
    return nargs == 1 ? "stop" : more[i < 3 ? i : 2];
}

/* The message for a range() argument that is not an integer: type names a value that is not a
 * number (NULL for the number x). The for-loop fast paths of the interpreter and the compiler
 * say the same as the built-in. */
void range_arg_message(char *buf, size_t size, int nargs, int i, const char *type, double x) {
    if (type)
        snprintf(buf, size, "range(): '%s' must be a number, got a %s", range_param_name(nargs, i), type);
    else
        snprintf(buf, size, x == floor(x) ? "range(): '%s' is out of the i64 range, got %g" : "range(): '%s' must be an integer, got %g",
                 range_param_name(nargs, i), x);
}

Value builtins_range_list(Interp *I, CallArgs *a) {
    static const char *const p[] = { "a", "b", "step", NULL };
    Value v[3];
    if (!args_bind(I, a, "range", p, 1, v)) return ERR_VAL;   /* its row is no plain list */
    int64_t x[3] = { 0, 0, 1 };
    for (int i = 0; i < 3; i++) {
        if (v[i].type == VAL_UNDEF) continue;
        /* one rule with for-range loops: past 2**53, i + 1 == i */
        if (v[i].type == VAL_NUM && fabs(v[i].as.n) > RANGE_MAX_BOUND) return interp_error(I, RANGE_BOUND_MSG);
        if (!arg_int(I, "range", range_param_name(v[1].type == VAL_UNDEF ? 1 : 3, i), v[i], &x[i])) return ERR_VAL;
    }
    int64_t start = 0, stop = x[0], step = x[2];
    if (v[1].type != VAL_UNDEF) { start = x[0]; stop = x[1]; }
    if (step == 0) return interp_error(I, "range() step must not be zero");
    uint64_t count = range_count(start, stop, step);
    if (count > 100000000) return interp_error(I, "range() of %llu elements is too large for a list", (unsigned long long)count);
    int64_t n = (int64_t)count;
    ObjList *l = list_new((int)n);
    for (int64_t i = 0; i < n; i++) l->items[l->len++] = NUM_VAL((double)range_at(start, step, (uint64_t)i));
    return OBJ_VAL(VAL_LIST, l);
}

static Value bi_push(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_push, v)) return ERR_VAL;
    if (v[0].type != VAL_LIST) return interp_errork(I, ERRK_TYPE, "push() needs a list, got a %s", val_type_name(v[0]));
    list_push(AS_LIST(v[0]), v[1]);
    return NIL_VAL;
}

static Value bi_keys(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_keys, v)) return ERR_VAL;
    if (v[0].type != VAL_DICT) return interp_errork(I, ERRK_TYPE, "keys() needs a dict, got a %s", val_type_name(v[0]));
    ObjDict *d = AS_DICT(v[0]);
    ObjList *l = list_new(d->len);
    for (int i = 0; i < d->len; i++) list_push(l, OBJ_VAL(VAL_STR, d->entries[i].key));
    return OBJ_VAL(VAL_LIST, l);
}

static Value bi_get(Interp *I, CallArgs *a) {
    Value v[3];
    if (!builtin_bind(I, a, bi_get, v)) return ERR_VAL;
    if (v[0].type != VAL_DICT) return interp_errork(I, ERRK_TYPE, "get() needs a dict, got a %s", val_type_name(v[0]));
    if (v[1].type != VAL_STR) return interp_errork(I, ERRK_TYPE, "get(): dict keys are strings");
    Value *x = dict_get(AS_DICT(v[0]), AS_STR(v[1])->chars, AS_STR(v[1])->len);
    if (x) return val_retain(*x);
    return v[2].type == VAL_UNDEF ? NIL_VAL : val_retain(v[2]);
}

/* The error "<prefix><v as print shows it>" of kind k. */
static Value error_showing(Interp *I, ErrKind k, const char *prefix, Value v) {
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    fmt_value(&b, v, false);
    interp_errork(I, k, "%s%s", prefix, b.s);
    sb_free(&b);
    return ERR_VAL;
}

static Value bi_assert(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_assert, v)) return ERR_VAL;
    int t = interp_truthy(I, v[0]);
    if (t < 0) return ERR_VAL;
    if (t) return NIL_VAL;
    if (v[1].type == VAL_UNDEF) return interp_errork(I, ERRK_ASSERT, "assertion failed");
    return error_showing(I, ERRK_ASSERT, "assertion failed: ", v[1]);
}

/* error(message, kind="user"): kind names one of the ErrKinds (spec section 12). */
static Value bi_error(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_error, v)) return ERR_VAL;
    int k = ERRK_USER;
    if (v[1].type != VAL_UNDEF && (k = error_kind_arg(I, "error", v[1])) < 0) return ERR_VAL;
    return error_showing(I, (ErrKind)k, "", v[0]);
}

static Value bi_clock(Interp *I, CallArgs *a) {
    if (a->npos || a->nkw) return interp_errork(I, ERRK_TYPE, "clock() takes no arguments");
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return NUM_VAL((double)ts.tv_sec + (double)ts.tv_nsec * 1e-9);
}

static Value bi_args(Interp *I, CallArgs *a) {
    if (a->npos || a->nkw) return interp_errork(I, ERRK_TYPE, "args() takes no arguments");
    ObjList *l = list_new(I->nargs);
    for (int i = 0; i < I->nargs; i++) {
        Value s = val_cstr(I->args[i]);
        list_push(l, s);
        val_release(s);
    }
    return OBJ_VAL(VAL_LIST, l);
}

/* Numbers from a number, a one-element tensor, a bool, or (for int/float) a string. */
const char *one_element_message(char *buf, size_t n, const char *fname, int64_t size) {
    snprintf(buf, n, "%s(): only a one-element tensor converts to a number, not one of %lld elements", fname, (long long)size);
    return buf;
}

static bool number_of(Interp *I, const char *fname, Value v, double *out) {
    char m[128];
    if (v.type == VAL_TENSOR) {
        if (v.as.t->size != 1)
            return interp_error(I, "%s", one_element_message(m, sizeof m, fname, v.as.t->size)), false;
        if (tensor_first(v.as.t, out)) return interp_op_error(I), false;
        return true;
    }
    if (v.type == VAL_NUM || v.type == VAL_BOOL) { *out = v.type == VAL_NUM ? v.as.n : v.as.b; return true; }
    interp_errork(I, ERRK_TYPE, "%s() cannot convert a %s", fname, val_type_name(v));
    return false;
}

/* s without the spaces around it and the underscores between two digits (`1_000`, as a TSL
 * literal and Python's int()/float() read it), in buf; false when an underscore is misplaced
 * or the text does not fit. */
static bool number_text(const char *s, char *buf, size_t n) {
    while (*s == ' ' || *s == '\t') s++;
    size_t len = strlen(s), k = 0;
    while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '_') {
            if (i == 0 || i + 1 == len || !isdigit((unsigned char)s[i - 1]) || !isdigit((unsigned char)s[i + 1])) return false;
            continue;
        }
        if (k + 1 >= n) return false;
        buf[k++] = s[i];
    }
    buf[k] = 0;
    return true;
}

static bool parse_int_string(const char *s, double *out) {
    char buf[512];
    if (!number_text(s, buf, sizeof buf)) return false;
    const char *p = buf;
    if (*p == '+' || *p == '-') p++;
    if (!(*p >= '0' && *p <= '9')) return false;
    while (*p >= '0' && *p <= '9') p++;
    if (*p) return false;
    *out = strtod(buf, NULL) + 0.0;   /* an integer has no sign of zero: int("-0") is 0 */
    return true;
}

static Value bi_int(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_int, v)) return ERR_VAL;
    double x;
    if (v[0].type == VAL_STR) {
        if (!parse_int_string(AS_STR(v[0])->chars, &x))
            return interp_error(I, "int(): invalid integer literal \"%s\"", AS_STR(v[0])->chars);
        return NUM_VAL(x);
    }
    if (!number_of(I, "int", v[0], &x)) return ERR_VAL;
    if (isnan(x) || isinf(x)) return interp_error(I, "int(): cannot convert %s to an integer", isnan(x) ? "nan" : "inf");
    return NUM_VAL(trunc(x) + 0.0);   /* int(-0.5) is 0, not -0 (Python's) */
}

static Value bi_float(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_float, v)) return ERR_VAL;
    double x;
    if (v[0].type == VAL_STR) {
        char s[512], *end;
        bool ok = number_text(AS_STR(v[0])->chars, s, sizeof s);
        errno = 0;
        x = ok ? strtod(s, &end) : 0;
        const char *digits = s[0] == '+' || s[0] == '-' ? s + 1 : s;
        if (!ok || end == s || *end || (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')))
            return interp_error(I, "float(): invalid number \"%s\"", AS_STR(v[0])->chars);
        return NUM_VAL(x);
    }
    if (!number_of(I, "float", v[0], &x)) return ERR_VAL;
    return NUM_VAL(x);
}

static Value bi_bool(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_bool, v)) return ERR_VAL;
    int t = interp_truthy(I, v[0]);
    return t < 0 ? ERR_VAL : BOOL_VAL(t);
}

/* memstats(): {allocations, live_bytes, peak_bytes} of tensor memory so far (a TSL extension,
 * for measuring steady-state allocation). */
/* "static" when static code is compiled (the default), "eager" under --no-static, :static off
 * or inside grad (whose static code runs eagerly, on the tape): examples print which ran. */
static Value bi_static_mode(Interp *I, CallArgs *a) {
    if (a->npos || a->nkw) return interp_errork(I, ERRK_TYPE, "static_mode() takes no arguments");
    return val_cstr(I->no_static ? "eager" : "static");
}
static Value bi_memstats(Interp *I, CallArgs *a) {
    if (a->npos || a->nkw) return interp_errork(I, ERRK_TYPE, "memstats() takes no arguments");
    ObjDict *d = dict_new();
    const OpsCtx *c = I->opsctx;
    dict_set_cstr(d, "allocations", NUM_VAL((double)c->tensor_alloc_count));
    dict_set_cstr(d, "live_bytes", NUM_VAL((double)c->tensor_live_bytes));
    dict_set_cstr(d, "peak_bytes", NUM_VAL((double)c->tensor_peak_bytes));
    dict_set_cstr(d, "object_bytes", NUM_VAL((double)c->obj_live_bytes));
    dict_set_cstr(d, "device_mallocs", NUM_VAL((double)device_mallocs()));
    return OBJ_VAL(VAL_DICT, d);
}

/* gc(): runs the cycle collector now (lang/gc.c); returns how many objects it freed. */
static Value bi_gc(Interp *I, CallArgs *a) {
    if (a->npos || a->nkw) return interp_errork(I, ERRK_TYPE, "gc() takes no arguments");
    return NUM_VAL((double)gc_collect());
}

/* printoptions(precision, threshold, edgeitems, linewidth): NumPy's names and defaults for
 * how tensors print from now on; returns the settings before the call as a dict. */
static Value bi_printoptions(Interp *I, CallArgs *a) {
    Value v[4];
    const BuiltinParams *bp = builtin_bind(I, a, bi_printoptions, v);
    if (!bp) return ERR_VAL;
    const char *const *p = bp->names;
    PrintOptions old = tensor_print_options(), o = old;
    int64_t *field[4] = { &o.precision, &o.threshold, &o.edgeitems, &o.linewidth };
    for (int i = 0; i < 4; i++) {
        if (v[i].type == VAL_UNDEF) continue;
        if (v[i].type != VAL_NUM)
            return interp_errork(I, ERRK_TYPE, "printoptions(): '%s' must be a non-negative integer, got a %s", p[i], val_type_name(v[i]));
        /* below 2^53 every setting is exact and width arithmetic cannot overflow */
        double x = v[i].as.n;
        if (x != floor(x) || x < 0 || x > 9007199254740992.0)
            return interp_errork(I, ERRK_TYPE, "printoptions(): '%s' must be a non-negative integer, got %g", p[i], x);
        *field[i] = (int64_t)x;
    }
    tensor_set_print_options(o);
    ObjDict *d = dict_new();
    int64_t was[4] = { old.precision, old.threshold, old.edgeitems, old.linewidth };
    for (int i = 0; i < 4; i++) dict_set_cstr(d, p[i], NUM_VAL((double)was[i]));
    return OBJ_VAL(VAL_DICT, d);
}

/* dis, export and load belong to the static compiler (vm/), reached through its hooks. */
static const StaticHooks *vm_hooks(Interp *I) {
    const StaticHooks *h = interp_static_hooks();
    if (!h) interp_error(I, "this build of tsl has no static compiler");
    return h;
}

static Value bi_dis(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_dis, v)) return ERR_VAL;
    bool dot = v[1].type == VAL_STR && !strcmp(AS_STR(v[1])->chars, "dot");
    if (v[1].type != VAL_UNDEF && !dot) return interp_error(I, "dis(): format must be \"dot\"");
    return vm_hooks(I) ? vm_hooks(I)->dis(I, v[0], dot) : ERR_VAL;
}
static Value bi_export(Interp *I, CallArgs *a) { return vm_hooks(I) ? vm_hooks(I)->export_fn(I, a) : ERR_VAL; }
static Value bi_load(Interp *I, CallArgs *a) { return vm_hooks(I) ? vm_hooks(I)->load(I, a) : ERR_VAL; }
/* grad(f) and value_and_grad(f): a built-in bound to f (spec section 7). */
static Value grad_fn_call(Interp *I, CallArgs *a) { return autograd_call(I, I->calling_builtin->bound, a, false); }
static Value vgrad_fn_call(Interp *I, CallArgs *a) { return autograd_call(I, I->calling_builtin->bound, a, true); }
/* The rows of the functions grad(f) and value_and_grad(f) return: not globals, so in no
 * table of names, but static code compiles a call of one (cgrad.c). */
static const BuiltinDef grad_fn_def = { "grad_fn", grad_fn_call, "(...)", "the gradient of f", ST_CALL_GRAD };
static const BuiltinDef vgrad_fn_def = { "value_and_grad_fn", vgrad_fn_call, "(...)", "[f's value, its gradient]",
                                         ST_CALL_VALUE_AND_GRAD };
static Value make_grad_fn(Interp *I, CallArgs *a, BuiltinFn self, const BuiltinDef *def) {
    Value f;
    const BuiltinParams *p = builtin_bind(I, a, self, &f);
    if (p && f.type != VAL_FUNC && f.type != VAL_DICT)
        return interp_errork(I, ERRK_TYPE, "%s(): f must be a function, got %s", p->def->name, val_type_name(f));
    if (!p) return ERR_VAL;
    ObjBuiltin *b = builtin_new(def->name, def->fn);
    b->def = def;
    b->bound = val_retain(f);
    return OBJ_VAL(VAL_FUNC, b);
}
static Value bi_grad(Interp *I, CallArgs *a) { return make_grad_fn(I, a, bi_grad, &grad_fn_def); }
static Value bi_vgrad(Interp *I, CallArgs *a) { return make_grad_fn(I, a, bi_vgrad, &vgrad_fn_def); }
static Value bi_check_grad(Interp *I, CallArgs *a) {
    Value v[3];
    if (!builtin_bind(I, a, bi_check_grad, v)) return ERR_VAL;
    if (v[2].type != VAL_UNDEF && v[2].type != VAL_NUM) return interp_errork(I, ERRK_TYPE, "check_grad(): eps must be a number");
    return autograd_check_grad(I, v[0], v[1], v[2].type == VAL_NUM ? v[2].as.n : 1e-3);
}

const BuiltinDef core_builtins[] = {
    { "print", bi_print, "(..., sep=\" \", end=\"\\n\", file=\"stdout\", flush=false)",
      "prints its arguments separated by sep, then end, to standard output or file=\"stderr\"", ST_PRINT },
    { "flush", builtin_flush, "()", "writes out what print has buffered for standard output", ST_FLUSH },
    { "str", bi_str, "(x)", "the text print(x) shows", ST_TEXT | ST_FOLDS },
    { "type", bi_type, "(v)", "the type name: nil bool number string list dict function tensor", ST_TYPE | ST_FOLDS },
    { "len", bi_len, "(x)", "code points of a string, items of a list or dict, first dimension of a tensor", ST_LEN | ST_FOLDS },
    { "range", builtins_range_list, "([start, ]stop[, step])", "the integers from start up to (not including) stop", ST_FOLDS },
    { "push", bi_push, "(list, x)", "appends x to the list", ST_PUSH },
    { "keys", bi_keys, "(dict)", "the keys of a dict, in insertion order", ST_KEYS | ST_FOLDS },
    { "get", bi_get, "(dict, key, default=nil)", "dict[key], or default when the key is missing", ST_GET | ST_FOLDS },
    { "assert", bi_assert, "(cond, message=nil)", "fails with 'assertion failed: MESSAGE' unless cond is true", ST_ASSERT },
    { "error", bi_error, "(message, kind=\"user\")", "fails with the message; kind is one of \"value\" \"type\" \"shape\" \"index\" \"key\" \"io\" \"memory\" \"device\" \"assert\" \"user\" (what a catch sees as e.kind)", ST_RAISE },
    { "raise", builtin_raise, "(e)", "raises e again: an error a catch caught (same message, kind and place), or a string (kind \"user\")", ST_RAISE },
    { "clock", bi_clock, "()", "seconds on a monotonic clock", ST_NONE },
    { "args", bi_args, "()", "the command-line arguments after the script, as strings", ST_NONE },
    { "int", bi_int, "(x)", "a number truncated toward zero, or a decimal integer string read", ST_INT | ST_FOLDS | ST_CUTS },
    { "float", bi_float, "(x)", "a number from a one-element tensor, a bool or a float string", ST_FLOAT | ST_FOLDS | ST_CUTS },
    { "bool", bi_bool, "(x)", "the truth value of x", ST_BOOL | ST_FOLDS },
    { "gc", bi_gc, "()", "runs the cycle collector now; returns how many objects it freed", ST_NONE },
    { "dis", bi_dis, "(f=nil, format=nil)", "shows the optimized bytecode of a static fn or the last static block", ST_NONE },
    { "grad", bi_grad, "(f)", "a function with f's parameters returning f's gradient w.r.t. its first argument", ST_GRAD },
    { "value_and_grad", bi_vgrad, "(f)", "like grad(f), but the function returns [value, gradient]", ST_VALUE_AND_GRAD },
    { "check_grad", bi_check_grad, "(f, x, eps=1e-3)", "largest relative error of grad(f)(x) against f64 central differences", ST_EAGER },
    { "export", bi_export, "(f, example_args, path, dynamic=nil)", "compiles f for the example arguments and writes its graph to a file; dynamic={\"x\": [0]}: x's axis 0 takes any size", ST_NONE },
    { "load", bi_load, "(path)", "a function that runs an exported graph file", ST_NONE },
    { "memstats", bi_memstats, "()", "a dict of allocation counts and live/peak bytes", ST_NONE },
    { "static_mode", bi_static_mode, "()", "\"static\" when static code is compiled, \"eager\" under --no-static or :static off", ST_STATIC_MODE },
    { "help", builtin_help, "(x=nil)", "describes a built-in, a function or a module; help(\"name\") looks a name up", ST_NONE },
    { "printoptions", bi_printoptions, "(precision=8, threshold=1000, edgeitems=3, linewidth=75)",
      "sets how tensors print from now on; returns the previous settings as a dict", ST_NONE },
    { NULL, NULL, NULL, NULL, ST_NONE },
};

static const BuiltinDef *const groups[] = { core_builtins, tensor_builtins, string_builtins, list_builtins,
                                             file_builtins, format_builtins, dist_builtins, progress_builtins,
                                             plot_builtins };
#define NGROUPS (int)(sizeof groups / sizeof groups[0])

const BuiltinDef *builtin_def(const char *name) {
    for (int g = 0; g < NGROUPS; g++)
        for (const BuiltinDef *d = groups[g]; d->name; d++)
            if (!strcmp(d->name, name)) return d;
    return NULL;
}

/* The names and functions of the built-ins, in install order: filled once per process
 * (pthread_once) and read-only afterwards; the names themselves are static strings. */
static const char **table_names;
static BuiltinFn *table_fns;
static const BuiltinDef **table_defs;   /* NULL for an op */
static BuiltinParams *table_params;     /* the rows' (the first table_rows entries) */
static int table_len, table_rows;
static int table_op_at[OP__COUNT];      /* where each op's built-in is; -1: none (F_SYNTAX) */

static void table_add(const char *name, BuiltinFn fn, const BuiltinDef *def) {
    table_names[table_len] = name;
    table_defs[table_len] = def;
    table_fns[table_len++] = fn;
}

static void table_build(void) {
    int n = OP__COUNT;
    for (int g = 0; g < NGROUPS; g++)
        for (const BuiltinDef *d = groups[g]; d->name; d++) n++;
    /* the process's, not a state's: plain malloc, never freed */
    table_names = malloc(sizeof *table_names * (size_t)n);
    table_fns = malloc(sizeof *table_fns * (size_t)n);
    table_defs = malloc(sizeof *table_defs * (size_t)n);
    table_params = malloc(sizeof *table_params * (size_t)(n - OP__COUNT));
    if (!table_names || !table_fns || !table_defs || !table_params) abort();
    for (int g = 0; g < NGROUPS; g++)
        for (const BuiltinDef *d = groups[g]; d->name; d++) {
            BuiltinParams *p = &table_params[table_len];
            p->def = d;
            p->nreq = builtin_params(d, p->names, p->buf, sizeof p->buf);
            for (p->np = p->nreq < 0 ? -1 : 0; p->np >= 0 && p->names[p->np]; p->np++) {}   /* -1: none binds */
            table_add(d->name, d->fn, d);
        }
    table_rows = table_len;
    for (int op = 0; op < OP__COUNT; op++) {
        table_op_at[op] = -1;
        if (op_def((OpCode)op)->flags & F_SYNTAX) continue;
        table_op_at[op] = table_len;
        table_add(op_info[op].name, op_builtins[op], NULL);
    }
}

static void table_ready(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, table_build);
}

/* One ObjBuiltin per name, shared by every module of the interpreter (I->builtins). */
static void objects_build(Interp *I) {
    table_ready();
    /* filled in place: after an out-of-memory jump half way, the next call finishes it */
    if (!I->builtins) I->builtins = mem_calloc((size_t)table_len, sizeof *I->builtins);
    for (int i = 0; i < table_len; i++)
        if (!I->builtins[i]) {
            I->builtins[i] = builtin_new(table_names[i], table_fns[i]);
            I->builtins[i]->def = table_defs[i];
            I->builtins[i]->params = i < table_rows ? &table_params[i] : NULL;
        }
    for (int i = 0; i < table_len; i++)
        if (!strcmp(table_names[i], "range")) I->range_builtin = I->builtins[i];
}

/* The constants of spec section 5 (v2): predefined globals like the built-ins, so a module may
 * rebind them as it may rebind a built-in's name. */
static const struct {
    const char *name;
    double value;
} constants[] = { { "pi", M_PI }, { "e", M_E }, { "inf", INFINITY }, { "nan", NAN } };

void builtins_install(Interp *I, Module *m) {
    if (!I->builtins || !I->builtins[table_len - 1]) objects_build(I);
    for (int i = 0; i < table_len; i++) {
        int slot = globals_slot(&m->g, table_names[i]);
        I->builtins[i]->h.rc++;
        m->g.vals[slot] = OBJ_VAL(VAL_FUNC, I->builtins[i]);
    }
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        m->g.vals[globals_slot(&m->g, constants[i].name)] = NUM_VAL(constants[i].value);
}

/* Whether global `name` still holds the predefined constant of that name (module exports
 * leave those out, as they leave out the built-ins). */
bool builtin_constant_is(Value v, const char *name) {
    if (v.type != VAL_NUM) return false;
    for (size_t i = 0; i < sizeof constants / sizeof constants[0]; i++)
        if (!strcmp(constants[i].name, name))
            return !memcmp(&v.as.n, &constants[i].value, sizeof(double)) || (isnan(v.as.n) && isnan(constants[i].value));
    return false;
}

ObjBuiltin *builtin_named(Interp *I, const char *name) {
    if (!I->builtins || !I->builtins[table_len - 1]) objects_build(I);
    for (int i = 0; i < table_len; i++)
        if (!strcmp(table_names[i], name)) return I->builtins[i];
    return NULL;
}

bool builtin_is(Value v, const char *name) {
    if (v.type != VAL_FUNC || v.as.o->kind != OBJ_BUILTIN) return false;
    return !strcmp(AS_BUILTIN(v)->name, name);
}

ObjBuiltin *builtins_of_op(Interp *I, OpCode op) {
    table_ready();
    int at = table_op_at[op];
    return at < 0 || !I->builtins ? NULL : I->builtins[at];
}

int builtins_names(const char ***names) {
    table_ready();
    *names = table_names;
    return table_len;
}

/* The objects themselves are swept by val_free_all; only the table goes here. */

void builtins_free(Interp *I) {
    mem_free(I->builtins);
    I->builtins = NULL;
    I->range_builtin = NULL;
    I->progress_host = NULL;   /* swept with the other objects */
}
