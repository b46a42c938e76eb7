/* api.c - the public interface (include/tsl.h) over the interpreter: states, options,
 * running code, errors, globals and calls. Tensors are in api_tensor.c, the REPL's tools
 * (completion, :vars, help, dis) in api_tools.c.
 *
 * A tsl_State wraps one Interp. Texts the API hands out (results, messages) live in the
 * state's scratch buffer until the next call, so a host never frees what it is given except
 * tensors. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "api.h"
#include "mem.h"
#include "tops.h"

_Static_assert(TSL_MAX_SOURCE == TSL_MAX_SOURCE_BYTES, "tsl.h and interp.h agree on the source limit");
_Static_assert(TSL_MAX_DIMS == TSL_MAX_RANK, "tsl.h and tensor.h agree on the rank limit");

const char *tsl_version(void) { return "0.1.0"; }

const char *tsl_backend(void) {
    static char text[96];
    snprintf(text, sizeof text, "OpenBLAS, %s kernels", blas_core_name());
    return text;
}

/* OpenBLAS chooses its kernels once per process, before the first state computes. */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

tsl_Status tsl_new(tsl_AllocFn alloc, void *ud, tsl_State **out) {
    (void)ud;
    if (!out) return TSL_BADARG;
    *out = NULL;
    if (alloc) return TSL_UNSUPPORTED;   /* the allocation hook is not wired through the library yet */
    pthread_once(&blas_once, blas_choose_kernels);
    tsl_State *S = mem_calloc(1, sizeof *S);
    S->I = interp_new();
    *out = S;
    return TSL_OK;
}

void tsl_free(tsl_State *S) {
    if (!S) return;
    Interp *I = S->I;
    /* the handle's own memory first: the interpreter goes last, as whatever it owns may
     * include the memory everything else came from */
    for (int i = 0; i < S->nargs; i++) mem_free(S->args[i]);
    mem_free(S->args);
    sb_free(&S->text);
    mem_free(S);
    I->args = NULL;
    I->nargs = 0;
    interp_free(I);
}

tsl_Status tsl_set_output(tsl_State *S, tsl_WriteFn fn, void *ud) {
    if (!S) return TSL_BADARG;
    S->I->write_out = fn;
    S->I->out_ud = ud;
    return TSL_OK;
}

tsl_Status tsl_set_diagnostics(tsl_State *S, tsl_WriteFn fn, void *ud) {
    if (!S) return TSL_BADARG;
    S->I->write_diag = fn;
    S->I->diag_ud = ud;
    return TSL_OK;
}

/* ---- errors ---- */

void api_begin(tsl_State *S) {
    Interp *I = S->I;
    interp_clear_error(I);
    I->exiting = false;
    I->report.len = 0;
    if (I->report.s) I->report.s[0] = 0;
    I->report_has_loc = false;
}

tsl_Status api_fail(tsl_State *S, tsl_Status st, const char *fmt, ...) {
    if (!S) return st;
    Interp *I = S->I;
    interp_clear_error(I);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(I->err_msg, sizeof I->err_msg, fmt, ap);
    va_end(ap);
    I->err_set = true;
    interp_report_plain(I, I->err_msg);
    return st;
}

/* The status of a run that left an error pending (its report already rendered). */
tsl_Status api_error_status(tsl_State *S) {
    Interp *I = S->I;
    if (I->exiting) return TSL_EXIT;
    return I->interrupted ? TSL_INTERRUPTED : TSL_ERROR;
}

const char *tsl_error_message(tsl_State *S) { return S && S->I->err_set ? S->I->err_msg : ""; }

int tsl_error_location(tsl_State *S, const char **file, int *line, int *col) {
    if (!S || !S->I->err_set || !S->I->report_has_loc) return 0;
    if (file) *file = S->I->report_file;
    if (line) *line = S->I->report_loc.line;
    if (col) *col = S->I->report_loc.col;
    return 1;
}

const char *tsl_error_report(tsl_State *S) { return S && S->I->report.s ? S->I->report.s : ""; }

/* ---- options ---- */

tsl_Status tsl_set_option(tsl_State *S, tsl_Option opt, int64_t v) {
    if (!S) return TSL_BADARG;
    if (v < 0) return api_fail(S, TSL_BADARG, "option %d: the value must not be negative", (int)opt);
    Interp *I = S->I;
    switch (opt) {
    case TSL_OPT_MAX_DEPTH: I->max_depth = v > 1000000 ? 1000000 : (int)v; break;
    case TSL_OPT_MAX_NESTING: I->max_nesting = v > 100000 ? 100000 : (int)v; break;
    case TSL_OPT_MAX_TENSOR_BYTES: I->opsctx->max_tensor_bytes = v; break;
    case TSL_OPT_MAX_MEMORY: I->opsctx->max_live = v; break;
    case TSL_OPT_MAX_OPS: I->max_ops = v; break;
    case TSL_OPT_NO_STATIC: I->no_static = v != 0; break;
    case TSL_OPT_VERIFY_STATIC: I->verify_static = v != 0; break;
    default: return api_fail(S, TSL_BADARG, "unknown option %d", (int)opt);
    }
    return TSL_OK;
}

tsl_Status tsl_get_option(tsl_State *S, tsl_Option opt, int64_t *v) {
    if (!S || !v) return TSL_BADARG;
    Interp *I = S->I;
    switch (opt) {
    case TSL_OPT_MAX_DEPTH: *v = I->max_depth; break;
    case TSL_OPT_MAX_NESTING: *v = I->max_nesting; break;
    case TSL_OPT_MAX_TENSOR_BYTES: *v = I->opsctx->max_tensor_bytes; break;
    case TSL_OPT_MAX_MEMORY: *v = I->opsctx->max_live; break;
    case TSL_OPT_MAX_OPS: *v = I->max_ops; break;
    case TSL_OPT_NO_STATIC: *v = I->no_static; break;
    case TSL_OPT_VERIFY_STATIC: *v = I->verify_static; break;
    default: return api_fail(S, TSL_BADARG, "unknown option %d", (int)opt);
    }
    return TSL_OK;
}

tsl_Status tsl_set_device(tsl_State *S, const char *device) {
    if (!S || !device) return TSL_BADARG;
    if (!strcmp(device, "cpu")) return TSL_OK;
    if (!strcmp(device, "gpu"))
        return api_fail(S, TSL_UNSUPPORTED, "device 'gpu' is not available (this build has no GPU backend yet)");
    return api_fail(S, TSL_BADARG, "the device is cpu or gpu");
}

tsl_Status tsl_set_args(tsl_State *S, int argc, const char *const *argv) {
    if (!S || argc < 0 || (argc && !argv)) return TSL_BADARG;
    for (int i = 0; i < S->nargs; i++) mem_free(S->args[i]);
    mem_free(S->args);
    S->args = argc ? mem_alloc(sizeof(char *) * (size_t)argc) : NULL;
    for (int i = 0; i < argc; i++) S->args[i] = mem_strndup(argv[i], strlen(argv[i]));
    S->nargs = argc;
    S->I->args = S->args;
    S->I->nargs = argc;
    return TSL_OK;
}

tsl_Status tsl_set_stdlib_path(tsl_State *S, const char *dir) {
    if (!S || !dir) return TSL_BADARG;
    if (strlen(dir) >= sizeof S->I->stdlib_dir) return api_fail(S, TSL_BADARG, "the stdlib path is longer than %zu bytes", sizeof S->I->stdlib_dir - 1);
    interp_set_stdlib_dir(S->I, dir);
    return TSL_OK;
}

/* ---- running ---- */

/* A run leaves the value stack empty: the next one (or a call) starts from its bottom. */
static void reset_stack(Interp *I) {
    I->sp = I->stack;
    I->depth = 0;
}

static tsl_Status run_status(tsl_State *S, int rc) {
    if (S->I->exiting) return TSL_EXIT;
    return rc == 0 ? TSL_OK : api_error_status(S);
}

tsl_Status tsl_run_string(tsl_State *S, const char *name, const char *text, ptrdiff_t len) {
    if (!S || !name || !text) return TSL_BADARG;
    size_t n = len < 0 ? strlen(text) : (size_t)len;
    if (n > TSL_MAX_SOURCE_BYTES)
        return api_fail(S, TSL_BADARG, "the source is larger than the limit of %d bytes", TSL_MAX_SOURCE_BYTES);
    api_begin(S);
    int rc = interp_run_source(S->I, name, text, n, false, NULL);
    return run_status(S, rc);
}

tsl_Status tsl_run_file(tsl_State *S, const char *path) {
    if (!S || !path) return TSL_BADARG;
    api_begin(S);
    int rc = interp_run_file(S->I, path);
    reset_stack(S->I);
    if (rc == 2 && !S->I->exiting) return TSL_IO;
    return run_status(S, rc);
}

tsl_Status tsl_run_input(tsl_State *S, const char *name, const char *text, size_t len, int line_base) {
    if (!S || !name || !text || line_base < 0) return TSL_BADARG;
    Interp *I = S->I;
    val_release(I->last_value);
    I->last_value = NIL_VAL;
    api_begin(S);
    bool incomplete = false;
    int rc = interp_run_source_at(I, name, text, len, line_base, true, &incomplete);
    if (rc == 2 && incomplete) return TSL_INCOMPLETE;
    return run_status(S, rc);
}

tsl_Status tsl_result_text(tsl_State *S, const char **text) {
    if (!S || !text) return TSL_BADARG;
    Interp *I = S->I;
    *text = NULL;
    Value v = I->last_value;
    I->last_value = NIL_VAL;
    if (v.type == VAL_NIL) return TSL_OK;
    S->text.len = 0;
    sb_putn(&S->text, "", 0);
    bool ok = fmt_value_in(I, &S->text, v, true);
    val_release(v);
    if (!ok) {   /* too large to show, or Ctrl-C while printing; the input's source is gone */
        interp_report_plain(I, I->err_msg);
        return api_error_status(S);
    }
    *text = S->text.s;
    return TSL_OK;
}

int tsl_exit_code(tsl_State *S) { return S && S->I->exiting ? S->I->exit_code : 0; }

/* The flags are the state's; a signal handler may call these (they only store to a volatile
 * sig_atomic_t). */
void tsl_interrupt(tsl_State *S) {
    if (S) interp_interrupt(S->I);
}

void tsl_timeout(tsl_State *S) {
    if (S) interp_time_up(S->I);
}

int tsl_interrupt_pending(tsl_State *S) { return S && S->I->interrupt_flag != 0; }

void tsl_interrupt_clear(tsl_State *S) {
    if (S) S->I->interrupt_flag = 0;
}

/* ---- globals and calls ---- */

Module *api_main(tsl_State *S) {
    Interp *I = S->I;
    if (!I->main) I->main = module_new(I, "__main__", NULL);
    return I->main;
}

static tsl_Status find_global(tsl_State *S, const char *name, Value *out) {
    if (!S || !name) return TSL_BADARG;
    api_begin(S);
    Globals *g = &api_main(S)->g;
    int i = globals_find(g, name);
    if (i < 0 || g->vals[i].type == VAL_UNDEF) return api_fail(S, TSL_NOT_FOUND, "no global named '%s'", name);
    *out = g->vals[i];
    return TSL_OK;
}

static tsl_Type type_of(Value v) {
    switch (v.type) {
    case VAL_NIL: return TSL_NIL;
    case VAL_BOOL: return TSL_BOOLEAN;
    case VAL_NUM: return TSL_NUMBER;
    case VAL_STR: return TSL_STRING;
    case VAL_TENSOR: return TSL_TENSOR;
    default: return TSL_OTHER;
    }
}

static tsl_Status wrong_type(tsl_State *S, const char *name, const char *want, Value v) {
    return api_fail(S, TSL_TYPE, "global '%s' is a %s, not a %s", name, val_type_name(v), want);
}

tsl_Status tsl_get_type(tsl_State *S, const char *name, tsl_Type *type) {
    Value v;
    tsl_Status st = find_global(S, name, &v);
    if (st == TSL_OK && type) *type = type_of(v);
    return type ? st : TSL_BADARG;
}

tsl_Status tsl_get_number(tsl_State *S, const char *name, double *x) {
    Value v;
    tsl_Status st = find_global(S, name, &v);
    if (st != TSL_OK) return st;
    if (v.type != VAL_NUM) return wrong_type(S, name, "number", v);
    if (x) *x = v.as.n;
    return TSL_OK;
}

tsl_Status tsl_get_bool(tsl_State *S, const char *name, int *b) {
    Value v;
    tsl_Status st = find_global(S, name, &v);
    if (st != TSL_OK) return st;
    if (v.type != VAL_BOOL) return wrong_type(S, name, "bool", v);
    if (b) *b = v.as.b;
    return TSL_OK;
}

tsl_Status tsl_get_string(tsl_State *S, const char *name, const char **s, size_t *len) {
    Value v;
    tsl_Status st = find_global(S, name, &v);
    if (st != TSL_OK) return st;
    if (v.type != VAL_STR) return wrong_type(S, name, "string", v);
    if (s) *s = AS_STR(v)->chars;
    if (len) *len = (size_t)AS_STR(v)->len;
    return TSL_OK;
}

tsl_Status tsl_get_tensor(tsl_State *S, const char *name, tsl_Tensor **t) {
    Value v;
    tsl_Status st = find_global(S, name, &v);
    if (st != TSL_OK) return st;
    if (v.type != VAL_TENSOR) return wrong_type(S, name, "tensor", v);
    if (t) *t = (tsl_Tensor *)tensor_retain(v.as.t);
    return TSL_OK;
}

static tsl_Status set_global(tsl_State *S, const char *name, Value v) {
    Globals *g = &api_main(S)->g;
    int i = globals_slot(g, name);
    val_release(g->vals[i]);
    g->vals[i] = v;
    return TSL_OK;
}

tsl_Status tsl_set_number(tsl_State *S, const char *name, double x) {
    if (!S || !name) return TSL_BADARG;
    api_begin(S);
    return set_global(S, name, NUM_VAL(x));
}

tsl_Status tsl_set_tensor(tsl_State *S, const char *name, tsl_Tensor *t) {
    if (!S || !name || !t) return TSL_BADARG;
    api_begin(S);
    return set_global(S, name, TENSOR_VAL(tensor_retain((Tensor *)t)));
}

/* An argument as a Value: owned (a string is copied into one; the rest are retained). */
static bool value_of_arg(const tsl_Value *a, Value *out) {
    switch (a->type) {
    case TSL_NIL: *out = NIL_VAL; return true;
    case TSL_BOOLEAN: *out = BOOL_VAL(a->boolean != 0); return true;
    case TSL_NUMBER: *out = NUM_VAL(a->number); return true;
    case TSL_STRING:
        if (!a->string || a->length > INT32_MAX) return false;
        *out = val_str(a->string, (int)a->length);
        return true;
    case TSL_TENSOR:
        if (!a->tensor) return false;
        *out = TENSOR_VAL(tensor_retain((Tensor *)a->tensor));
        return true;
    default: return false;
    }
}

static void result_of(tsl_State *S, Value v, tsl_Value *r) {
    memset(r, 0, sizeof *r);
    r->type = type_of(v);
    if (v.type == VAL_BOOL) r->boolean = v.as.b;
    else if (v.type == VAL_NUM) r->number = v.as.n;
    else if (v.type == VAL_TENSOR) r->tensor = (tsl_Tensor *)tensor_retain(v.as.t);
    else if (v.type == VAL_STR) {
        S->text.len = 0;
        sb_putn(&S->text, AS_STR(v)->chars, (size_t)AS_STR(v)->len);
        r->string = S->text.s;
        r->length = (size_t)AS_STR(v)->len;
    }
}

tsl_Status tsl_call(tsl_State *S, const char *name, const tsl_Value *args, int nargs, tsl_Value *result) {
    if (!S || !name || nargs < 0 || (nargs && !args) || nargs > 255) return TSL_BADARG;
    Value fn;
    tsl_Status st = find_global(S, name, &fn);
    if (st != TSL_OK) return st;
    if (fn.type != VAL_FUNC) return wrong_type(S, name, "function", fn);
    Value vals[256];
    for (int i = 0; i < nargs; i++)
        if (!value_of_arg(&args[i], &vals[i])) {
            for (int k = 0; k < i; k++) val_release(vals[k]);
            return api_fail(S, TSL_BADARG, "argument %d of %s(): not a value (a NULL string or tensor?)", i + 1, name);
        }
    Interp *I = S->I;
    I->exiting = false;
    I->limits_on = I->max_ops > 0 || I->opsctx->max_live > 0;
    fn = val_retain(fn);   /* the call may rebind the global */
    Value r = interp_call(I, fn, vals, nargs);
    val_release(fn);
    for (int i = 0; i < nargs; i++) val_release(vals[i]);
    reset_stack(I);
    if (IS_ERR(r)) {
        interp_report_error(I);
        return api_error_status(S);
    }
    if (result) result_of(S, r, result);
    val_release(r);
    return TSL_OK;
}
