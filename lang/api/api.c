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
#include "pool.h"
#include "tops.h"
#include "ctx.h"
#include "vm.h"
#include "parse.h"

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

static tsl_Status make_main(tsl_State *S, void *ud) {
    (void)ud;
    api_main(S);
    return TSL_OK;
}

/* The handle lives in the state's memory, allocated through the state's hook like the rest. */
tsl_Status tsl_new(tsl_AllocFn alloc, void *ud, tsl_State **out) {
    if (!out) return TSL_BADARG;
    *out = NULL;
    pthread_once(&blas_once, blas_choose_kernels);
    vm_register();   /* static code, reached by lang/ through hooks */
    Interp *I = interp_new_with_alloc(alloc, ud);
    if (!I) return TSL_ERROR;
    InterpScope scope = interp_enter(I);
    tsl_State *S = mem_try_alloc(sizeof *S);
    interp_leave(scope);
    if (!S) {
        interp_free(I);
        return TSL_ERROR;
    }
    memset(S, 0, sizeof *S);
    S->I = I;
    if (api_run(S, make_main, NULL) != TSL_OK) {
        tsl_free(S);
        return TSL_ERROR;
    }
    *out = S;
    return TSL_OK;
}

void tsl_free(tsl_State *S) {
    if (!S) return;
    Interp *I = S->I;
    /* the handle's own memory first, under its state: the interpreter goes last, as whatever
     * it owns includes the memory everything else came from */
    InterpScope scope = interp_enter(I);
    for (int i = 0; i < S->nargs; i++) mem_free(S->args[i]);
    mem_free(S->args);
    sb_free(&S->text);
    mem_free(S);
    interp_leave(scope);
    I->args = NULL;
    I->nargs = 0;
    interp_free(I);
}

typedef struct {
    tsl_State *S;
    ApiBody body;
    void *ud;
    tsl_Status st;
} ApiJob;

static int job_body(Interp *I, void *ud) {
    (void)I;
    ApiJob *j = ud;
    j->st = j->body(j->S, j->ud);
    return 0;
}

tsl_Status api_run(tsl_State *S, ApiBody body, void *ud) {
    ApiJob j = { S, body, ud, TSL_OK };
    if (interp_protected(S->I, job_body, &j) != INTERP_OOM) return j.st;
    interp_report_plain(S->I, S->I->err_msg);   /* "out of memory" */
    return TSL_ERROR;
}

tsl_Status api_hand_out(tsl_State *S, const Tensor *t, tsl_Tensor **out) {
    Tensor *copy = tensor_copy(t);
    *out = (tsl_Tensor *)copy;
    return copy ? TSL_OK : api_fail(S, TSL_ERROR, "%s", op_error());
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

tsl_Status tsl_set_display(tsl_State *S, tsl_DisplayFn fn, void *ud) {
    if (!S) return TSL_BADARG;
    S->I->display = fn;
    S->I->display_ud = ud;
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
    va_list ap;
    va_start(ap, fmt);
    interp_vfail_plain(S->I, fmt, ap);
    va_end(ap);
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

/* An error whose report ran out of memory while it was rendered shows its bare message. */
const char *tsl_error_report(tsl_State *S) {
    if (!S) return "";
    Interp *I = S->I;
    if (I->report.s && I->report.s[0]) return I->report.s;
    if (!I->err_set || I->exiting) return "";   /* exit(code) is no error to show */
    snprintf(S->bare, sizeof S->bare, "tsl: error: %s\n", I->err_msg);
    return S->bare;
}

/* ---- options ---- */

tsl_Status api_set_option(Interp *I, tsl_Option opt, int64_t v, char *why, size_t cap) {
    if (v < 0) {
        snprintf(why, cap, "option %d: the value must not be negative", (int)opt);
        return TSL_BADARG;
    }
    switch (opt) {
    case TSL_OPT_MAX_DEPTH: I->max_depth = v > 1000000 ? 1000000 : (int)v; break;
    case TSL_OPT_MAX_NESTING: I->max_nesting = v > 100000 ? 100000 : (int)v; break;
    case TSL_OPT_MAX_TENSOR_BYTES: I->opsctx->max_tensor_bytes = v; break;
    case TSL_OPT_MAX_MEMORY: I->opsctx->max_live = v; break;
    case TSL_OPT_MAX_OPS: I->max_ops = v; break;
    case TSL_OPT_NO_STATIC: I->no_static = v != 0; break;
    case TSL_OPT_VERIFY_STATIC: I->verify_static = v != 0; break;
    default: snprintf(why, cap, "unknown option %d", (int)opt); return TSL_BADARG;
    }
    I->limits_on = I->max_ops > 0 || I->opsctx->max_live > 0;
    return TSL_OK;
}

tsl_Status tsl_set_option(tsl_State *S, tsl_Option opt, int64_t v) {
    if (!S) return TSL_BADARG;
    char why[96];
    tsl_Status st = api_set_option(S->I, opt, v, why, sizeof why);
    return st == TSL_OK ? st : api_fail(S, st, "%s", why);
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

tsl_Status tsl_set_threads(int n) {
    if (n < 0) return TSL_BADARG;
    pool_set_threads(n);
    return TSL_OK;
}

int tsl_threads(void) { return pool_threads(); }

tsl_Status tsl_set_device(tsl_State *S, const char *device) {
    if (!S || !device) return TSL_BADARG;
    Device d;
    if (device_by_name(device, &d)) return api_fail(S, TSL_BADARG, "the device is cpu or gpu");
    if (device_start(d)) return api_fail(S, TSL_UNSUPPORTED, "%s", op_error());
    S->I->opsctx->default_device = d;   /* the state's own context: new tensors go there */
    return TSL_OK;
}

typedef struct {
    int argc;
    const char *const *argv;
} ArgsJob;

static tsl_Status set_args(tsl_State *S, void *ud) {
    int argc = ((ArgsJob *)ud)->argc;
    const char *const *argv = ((ArgsJob *)ud)->argv;
    S->I->args = NULL;
    S->I->nargs = 0;
    for (int i = 0; i < S->nargs; i++) mem_free(S->args[i]);
    mem_free(S->args);
    S->args = NULL;
    S->nargs = 0;
    if (argc) S->args = mem_alloc(sizeof(char *) * (size_t)argc);
    for (; S->nargs < argc; S->nargs++) S->args[S->nargs] = mem_strndup(argv[S->nargs], strlen(argv[S->nargs]));
    S->I->args = S->args;
    S->I->nargs = argc;
    return TSL_OK;
}

tsl_Status tsl_set_args(tsl_State *S, int argc, const char *const *argv) {
    if (!S || argc < 0 || (argc && !argv)) return TSL_BADARG;
    for (int i = 0; i < argc; i++)   /* before the old arguments are dropped */
        if (!argv[i]) return api_fail(S, TSL_BADARG, "argument %d of %d is NULL", i + 1, argc);
    return api_run(S, set_args, &(ArgsJob){ argc, argv });
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
    I->call_site = (CallSite){ 0 };
}

static tsl_Status run_status(tsl_State *S, int rc) {
    if (S->I->exiting) return TSL_EXIT;
    return rc == 0 ? TSL_OK : api_error_status(S);
}

/* Both entries that take text (repl: the REPL's, which keeps the last value); the interpreter
 * checks the text against the source limits, and a text it refuses is an invalid argument. */
static tsl_Status run_text(tsl_State *S, const char *name, const char *text, size_t len, int line_base,
                           bool repl, bool *incomplete) {
    api_begin(S);
    int rc = interp_run_source_at(S->I, name, text, len, line_base, repl, incomplete);
    if (rc == INTERP_REFUSED) return TSL_BADARG;
    if (rc == 2 && incomplete && *incomplete) return TSL_INCOMPLETE;
    return run_status(S, rc);
}

tsl_Status tsl_run_string(tsl_State *S, const char *name, const char *text, ptrdiff_t len) {
    if (!S || !name || !text) return TSL_BADARG;
    return run_text(S, name, text, len < 0 ? strlen(text) : (size_t)len, 0, false, NULL);
}

tsl_Status tsl_reload(tsl_State *S, const char *module) {
    if (!S || !module) return TSL_BADARG;
    size_t n = strspn(module, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
    if (!n || module[n] || (module[0] >= '0' && module[0] <= '9') || n > 200)
        return api_fail(S, TSL_BADARG, "a module name is a name");
    char text[256];
    snprintf(text, sizeof text, "import %s", module);
    S->I->reload_module = module;
    tsl_Status st = run_text(S, "<stdin>", text, strlen(text), 0, false, NULL);
    S->I->reload_module = NULL;
    return st;
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
    if (!S || !name || !text) return TSL_BADARG;
    Interp *I = S->I;
    InterpScope scope = interp_enter(I);   /* the value is the state's: released under it */
    val_release(I->last_value);
    I->last_value = NIL_VAL;
    interp_leave(scope);
    bool incomplete = false;
    return run_text(S, name, text, len, line_base, true, &incomplete);
}

typedef struct {
    const char *text;
    size_t len;
} CheckJob;

/* Parses a NUL-terminated copy (the parser reads to the NUL) and drops the tree. */
static tsl_Status check_input(tsl_State *S, void *ud) {
    CheckJob *j = ud;
    char *copy = mem_alloc(j->len + 1);
    memcpy(copy, j->text, j->len);
    copy[j->len] = 0;
    ParseError pe;
    Node *prog = parse_program(copy, j->len, S->I->max_nesting, &pe);
    mem_free(copy);
    if (prog) {
        ast_free(prog);
        return TSL_OK;
    }
    if (pe.incomplete) return TSL_INCOMPLETE;
    return api_fail(S, TSL_ERROR, "%d:%d: %s", pe.loc.line, pe.loc.col, pe.msg);
}

tsl_Status tsl_check_input(tsl_State *S, const char *text, size_t len) {
    if (!S || !text) return TSL_BADARG;
    api_begin(S);
    if (len > TSL_MAX_SOURCE) return api_fail(S, TSL_BADARG, "the source is larger than the limit of %d bytes", TSL_MAX_SOURCE);
    return api_run(S, check_input, &(CheckJob){ text, len });
}

static tsl_Status result_text(tsl_State *S, void *ud) {
    const char **text = ud;
    Interp *I = S->I;
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

tsl_Status tsl_result_text(tsl_State *S, const char **text) {
    if (!S || !text) return TSL_BADARG;
    *text = NULL;
    return api_run(S, result_text, text);
}

int tsl_exit_code(tsl_State *S) { return S && S->I->exiting ? S->I->exit_code : 0; }

/* The flags are the state's; a signal handler or another thread may call these (they only
 * store to lock-free atomics). */
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

/* tsl_new makes the main module, so reading a global allocates nothing. */
Module *api_main(tsl_State *S) {
    Interp *I = S->I;
    if (!I->main) I->main = module_new(I, "__main__", NULL);
    return I->main;
}

static tsl_Status find_global(tsl_State *S, const char *name, Value *out) {
    if (!S || !name) return TSL_BADARG;
    api_begin(S);
    Globals *g = &S->I->main->g;
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

/* The global `name` when it is of type t (a `want`), else why not. */
static tsl_Status find_typed(tsl_State *S, const char *name, ValType t, const char *want, Value *out) {
    tsl_Status st = find_global(S, name, out);
    if (st == TSL_OK && out->type != t)
        return api_fail(S, TSL_TYPE, "global '%s' is a %s, not a %s", name, val_type_name(*out), want);
    return st;
}

tsl_Status tsl_get_type(tsl_State *S, const char *name, tsl_Type *type) {
    if (!type) return TSL_BADARG;
    Value v;
    tsl_Status st = find_global(S, name, &v);
    if (st == TSL_OK) *type = type_of(v);
    return st;
}

tsl_Status tsl_get_number(tsl_State *S, const char *name, double *x) {
    Value v;
    tsl_Status st = find_typed(S, name, VAL_NUM, "number", &v);
    if (st == TSL_OK && x) *x = v.as.n;
    return st;
}

tsl_Status tsl_get_bool(tsl_State *S, const char *name, int *b) {
    Value v;
    tsl_Status st = find_typed(S, name, VAL_BOOL, "bool", &v);
    if (st == TSL_OK && b) *b = v.as.b;
    return st;
}

tsl_Status tsl_get_string(tsl_State *S, const char *name, const char **s, size_t *len) {
    Value v;
    tsl_Status st = find_typed(S, name, VAL_STR, "string", &v);
    if (st != TSL_OK) return st;
    if (s) *s = AS_STR(v)->chars;
    if (len) *len = (size_t)AS_STR(v)->len;
    return TSL_OK;
}

/* A copy in the host's memory: the global's tensor is the state's. */
tsl_Status tsl_get_tensor(tsl_State *S, const char *name, tsl_Tensor **t) {
    Value v;
    if (t) *t = NULL;
    tsl_Status st = find_typed(S, name, VAL_TENSOR, "tensor", &v);
    if (st != TSL_OK) return st;
    return t ? api_hand_out(S, v.as.t, t) : TSL_OK;
}

typedef struct {
    const char *name;
    const Tensor *t;   /* the host's; copied into the state */
    double x;
} SetJob;

static tsl_Status set_global(tsl_State *S, void *ud) {
    SetJob *j = ud;
    Value v = NUM_VAL(j->x);
    if (j->t) {
        Tensor *copy = tensor_copy(j->t);
        if (!copy) return api_fail(S, TSL_ERROR, "%s", op_error());
        v = TENSOR_VAL(copy);
    }
    Globals *g = &api_main(S)->g;
    int i = globals_slot(g, j->name);
    val_release(g->vals[i]);
    g->vals[i] = v;
    return TSL_OK;
}

tsl_Status tsl_set_number(tsl_State *S, const char *name, double x) {
    if (!S || !name) return TSL_BADARG;
    api_begin(S);
    return api_run(S, set_global, &(SetJob){ name, NULL, x });
}

tsl_Status tsl_set_tensor(tsl_State *S, const char *name, tsl_Tensor *t) {
    if (!S || !name || !t) return TSL_BADARG;
    api_begin(S);
    return api_run(S, set_global, &(SetJob){ name, (const Tensor *)t, 0 });
}

/* An argument as a Value of the state: owned (a string or a tensor is copied into it). */
static bool value_of_arg(const tsl_Value *a, Value *out) {
    switch (a->type) {
    case TSL_NIL: *out = NIL_VAL; return true;
    case TSL_BOOLEAN: *out = BOOL_VAL(a->boolean != 0); return true;
    case TSL_NUMBER: *out = NUM_VAL(a->number); return true;
    case TSL_STRING:
        if (!a->string || a->length > INT32_MAX) return false;
        *out = val_str(a->string, (int)a->length);
        return true;
    case TSL_TENSOR: {
        Tensor *copy = a->tensor ? tensor_copy((const Tensor *)a->tensor) : NULL;
        *out = TENSOR_VAL(copy);
        return copy != NULL;
    }
    default: return false;
    }
}

typedef struct {
    const char *name;
    Value fn;
    const tsl_Value *args;
    int nargs;
    tsl_Value *result;
    Tensor *tensor;    /* a tensor result, still the state's: handed out after leaving it */
} CallJob;

/* A string result is copied into the handle's text; anything else is read off the value. */
static void result_of(tsl_State *S, Value v, CallJob *j) {
    tsl_Value *r = j->result;
    memset(r, 0, sizeof *r);
    r->type = type_of(v);
    if (v.type == VAL_BOOL) r->boolean = v.as.b;
    else if (v.type == VAL_NUM) r->number = v.as.n;
    else if (v.type == VAL_TENSOR) j->tensor = tensor_retain(v.as.t);
    else if (v.type == VAL_STR) {
        S->text.len = 0;
        sb_putn(&S->text, AS_STR(v)->chars, (size_t)AS_STR(v)->len);
        r->string = S->text.s;
        r->length = (size_t)AS_STR(v)->len;
    }
}

static tsl_Status call_body(tsl_State *S, void *ud) {
    CallJob *j = ud;
    Value vals[256];
    for (int i = 0; i < j->nargs; i++)
        if (!value_of_arg(&j->args[i], &vals[i])) {
            for (int k = 0; k < i; k++) val_release(vals[k]);
            if (j->args[i].type == TSL_TENSOR && j->args[i].tensor)
                return api_fail(S, TSL_ERROR, "argument %d of %s(): %s", i + 1, j->name, op_error());
            return api_fail(S, TSL_BADARG, "argument %d of %s(): not a value (a NULL string or tensor?)", i + 1, j->name);
        }
    Interp *I = S->I;
    I->exiting = false;
    I->limits_on = I->max_ops > 0 || I->opsctx->max_live > 0;
    Value fn = val_retain(j->fn);   /* the call may rebind the global */
    Value r;
    /* the host gets the error back and goes on with the state, as a catch would (vm/static.c
     * then leaves eager's state after a static run that fails) */
    I->ntry++;
    int rc = interp_pcall(I, fn, vals, j->nargs, &r);
    I->ntry--;
    val_release(fn);
    for (int i = 0; i < j->nargs; i++) val_release(vals[i]);
    reset_stack(I);
    if (rc != 0) {
        interp_report_error(I);
        return api_error_status(S);
    }
    if (j->result) result_of(S, r, j);
    val_release(r);
    return TSL_OK;
}

tsl_Status tsl_call(tsl_State *S, const char *name, const tsl_Value *args, int nargs, tsl_Value *result) {
    if (!S || !name || nargs < 0 || (nargs && !args) || nargs > 255) return TSL_BADARG;
    Value fn;
    tsl_Status st = find_typed(S, name, VAL_FUNC, "function", &fn);
    if (st != TSL_OK) return st;
    CallJob j = { name, fn, args, nargs, result, NULL };
    st = api_run(S, call_body, &j);
    if (!j.tensor) return st;
    if (st == TSL_OK) st = api_hand_out(S, j.tensor, &result->tensor);
    InterpScope scope = interp_enter(S->I);   /* the state's reference, dropped under it */
    tensor_release(j.tensor);
    interp_leave(scope);
    return st;
}
