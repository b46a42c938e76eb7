/* interp.h - the eager interpreter: modules, frames, calls, errors, entry points.
 *
 * The REPL and `tsl FILE` use the same entry points (interp_run_source). Evaluation
 * walks the resolved AST: names are slots (locals, cells, upvalues, module globals),
 * never hashed on the hot path. Errors do not longjmp: every eval_* returns ERR_VAL
 * (and every exec_* EX_ERR) with the message pending in the Interp, so each frame
 * releases what it holds on the way out. The one exception is running out of memory in a
 * small allocation, which jumps to the protected entry point (interp_protected, state.c). */
#ifndef TSL_INTERP_H
#define TSL_INTERP_H
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include "value.h"
#include "ctx.h"
#include "suggest.h"
#include "ast.h"
#include "progress.h"

/* The largest source file or module read (docs/language.md); anything bigger is an error. */
#define TSL_MAX_SOURCE_BYTES (64 * 1024 * 1024)

typedef struct Source {
    char *name;   /* as shown in messages: path, "<string>" or "<stdin>" */
    char *dir;    /* folder that imports search first */
    char *text;
    size_t len;
    int line_base;  /* lines before this text: REPL inputs count lines over the whole session */
    struct Source *next;
} Source;

/* A module's globals: name -> slot, values in a growable array. */
typedef struct {
    int count, cap;
    char **names;
    Value *vals;
    int32_t *index;
    int index_cap;
} Globals;

typedef enum { MOD_LOADING, MOD_READY } ModState;

typedef struct Module {
    char *name;
    Source *src;
    Globals g;
    ModState state;
    Value exports;            /* dict of the module's globals, built when it finishes */
    struct Module *next;
} Module;

typedef struct CallArgs {
    Value *pos;
    int npos;
    char **kwnames;
    Value *kw;
    int nkw;
} CallArgs;

/* The callers of a failing call, recorded as the error unwinds (innermost first). Only what
 * is shown is kept (spec section 1): the innermost 10 frames, the latest (outermost so far)
 * 10 in a ring, and how many fell between; identical consecutive frames share one entry. */
#define TRACE_SHOWN 10
typedef struct {
    char name[64];            /* "in NAME() called from SRC:LINE:COL" */
    const struct Source *src; /* alive until the error is printed (sources outlive their runs) */
    SrcLoc loc;
    long count;               /* identical consecutive frames this entry stands for */
} TraceFrame;

typedef struct {
    TraceFrame inner[TRACE_SHOWN], outer[TRACE_SHOWN];
    int ninner, nouter, outer_first;   /* outer is a ring: outer_first is the oldest entry */
    long hidden;                       /* frames between the two */
} Traceback;

/* The call expression being evaluated: where a function entered now was called from. Every
 * call expression sets it around its call, so a function a built-in calls back (a sorted
 * key, grad's f) or a dict's forward finds the user's line that started it. */
typedef struct {
    Source *src;              /* NULL outside every call (an API call, the top level) */
    SrcLoc loc;
} CallSite;

/* Where the library's text goes: program output (print, dis) and diagnostics (warnings,
 * TSL_EXPLAIN lines). Returns 0, or an errno value when the text could not be written.
 * NULL means standard output / standard error (the public hooks of lang/api/api.c set them). */
typedef int (*InterpWriteFn)(void *ud, const char *s, size_t n);
/* Rich output (tsl_set_display): n bytes of data of a MIME type; id non-NULL names a display
 * that a later call with the same id redraws in place. Returns 0 or an errno value. */
typedef int (*InterpDisplayFn)(void *ud, const char *mime, const void *data, size_t n, const char *id);

typedef enum { EX_OK, EX_BREAK, EX_CONTINUE, EX_RETURN, EX_ERR } Exec;

typedef struct Frame {
    Value *slots;
    ObjClosure *closure;      /* NULL at module top level */
    Module *mod;
} Frame;

typedef struct Interp {
    /* value stack: locals and call arguments */
    Value *stack, *sp, *stack_end;
    int depth;
    char *c_stack_base;
    size_t c_stack_limit;     /* bytes of C stack the evaluator may use */
    /* options and limits (spec section 1) */
    int max_depth, max_nesting;
    int64_t max_ops, ops;
    bool limits_on;           /* max_ops set: the evaluator counts operations */
    bool no_static, verify_static, repl, time_inputs;
    ObjBuiltin *calling_builtin;   /* the built-in being called (set just before its fn runs) */
    bool sandbox;             /* fuzzing: built-ins that touch files are disabled */
    int nargs;
    char **args;
    /* modules, sources and parsed programs live as long as the interpreter */
    Module *modules;
    Module *main;
    const char *reload_module;   /* the REPL's :reload: the next import of it loads it afresh */
    Source *sources;
    Node **programs;
    int nprograms;
    Source *cur_src;          /* source of the code now running (error locations) */
    /* the statement that began last and its source: where an out-of-memory jump, which
     * unwinds past every location, is reported (state.c) */
    SrcLoc stmt_loc;
    Source *stmt_src;
    CallSite call_site;       /* the innermost call expression being evaluated */
    /* pending error */
    bool err_set, err_has_loc, interrupted;
    bool err_final;           /* Ctrl-C, --timeout, --max-ops, exit(): no try catches it */
    ErrKind err_kind;         /* what a catch sees as e.kind (spec section 12) */
    char err_msg[512];
    SrcLoc err_loc;
    SrcLoc jump_loc;          /* the last break/continue executed */
    bool exiting;             /* exit(code) ran: the pending error only unwinds the program (files.c) */
    int ntry;                 /* try blocks running: an error now may be caught, and the program
                               * sees the state it leaves (vm/static.c reruns a failed static run) */
    bool quiet;               /* that rerun: what it would print, draw or show was shown already */
    int exit_code;
    Source *err_src;
    Traceback traceback;
    Value ret;                /* value carried by EX_RETURN */
    Value last_value;         /* REPL: value of the last expression statement */
    void *vm;                 /* static-code state: caches, last graph (vm/static.c) */
    /* The rest of the state: nothing of an interpreter is process-wide (docs/internals.md,
     * "State and allocation"), so two in one process share nothing. */
    OpsCtx *opsctx;           /* allocation hook, op errors, RNG, tensor limits, kernel caches */
    ObjHeap heap;             /* every object, and the cycle collector's counters */
    struct Tape *tape;        /* the innermost active autograd tape, or NULL (lang/autograd.c) */
    ObjBuiltin **builtins;    /* one object per built-in, shared by every module (builtins.c) */
    ObjBuiltin *range_builtin;   /* range(), which loops and the compiler recognise */
    ProgressArgs progress_next;  /* the last progress() call's, for the loop over it (progress.h) */
    Progress bars[PROGRESS_DEPTH];   /* static code's bars, innermost last */
    int nbars;
    ObjBuiltin *progress_host;   /* the built-in static code's bar instructions call (owned) */
    /* a bar drawn in place on the terminal: the program's output clears its line first, and
     * the next tick draws it again below (progress_clear, as tqdm.write does) */
    bool bar_drawn, bar_cleared;
    char stdlib_dir[4096];    /* where `import` finds the standard library ("" : "stdlib") */
    int compile_budget_ms;    /* a static compile taking longer gives up (runs eagerly) */
    bool compile_fixed_stops; /* vm/static.c: do not guard a range stop again (vm/compile/cslice.c) */
    /* Set by interp_interrupt / interp_time_up, which a signal handler or another thread may
     * call (lock-free atomics: both are safe): the evaluator, the compiler and the VM poll
     * interrupt_flag; timeout_flag says the time is up. */
    atomic_int interrupt_flag, timeout_flag;
    /* text out: the library never prints itself (spec section 9) */
    InterpWriteFn write_out, write_diag;
    void *out_ud, *diag_ud;
    InterpDisplayFn display;  /* NULL: the host shows no images (plot.show says how to save) */
    void *display_ud;
    int displays;             /* progress bars shown as displays so far: each bar's id */
    StrBuf report;            /* the last error as the program shows it (interp_report_error) */
    char *report_file;        /* owned: the file the report names (its source may be gone) */
    SrcLoc report_loc;        /* and where in it, when report_has_loc */
    bool report_has_loc;
} Interp;

/* A new interpreter whose every allocation goes through f (ops/ctx.h; NULL: realloc/free).
 * NULL when out of memory. interp_new uses the default. */
Interp *interp_new_with_alloc(TslAllocFn f, void *ud);
Interp *interp_new(void);
void interp_free(Interp *I);

/* Static code (vm/) reaches the interpreter through these hooks, which vm_register() sets
 * at start-up (tsl_new, a model session), so lang/ never calls up into vm/. Unset (lang/
 * linked alone), static code runs eagerly and dis/export/load say there is no compiler. */
typedef struct {
    Exec (*exec_block)(Interp *I, Frame *f, Node *static_stmt);
    Value (*call)(Interp *I, ObjClosure *fn, Value *args, int nargs, CallArgs *kw);
    Value (*dis)(Interp *I, Value fn, bool dot);
    BuiltinFn export_fn, load;                  /* the export() and load() built-ins */
    const char *(*loaded_signature)(Value f);   /* a loaded graph's, NULL for any other value */
    void (*free_all)(Interp *I);                /* the state's static caches */
} StaticHooks;
void interp_set_static_hooks(const StaticHooks *h);
const StaticHooks *interp_static_hooks(void);   /* NULL until set */

/* Entering a state: makes I (its objects, its ops context) current on this thread until
 * interp_leave restores what was current before. Entry points do it; entering nests. */
typedef struct {
    struct Interp *interp;
    OpsCtx *ops;
} InterpScope;
extern _Thread_local Interp *interp_cur;
InterpScope interp_enter(Interp *I);
void interp_leave(InterpScope saved);
/* The interpreter running on this thread (NULL outside every entry point). */
static inline Interp *interp_current(void) { return interp_cur; }

/* Runs body(I, ud) entered and protected: an allocation that fails inside (mem_alloc) jumps
 * back here, the state is reset to its top level with the error "out of memory" pending,
 * and INTERP_OOM is returned; otherwise body's result. Nests (Lua's luaD_rawrunprotected). */
#define INTERP_OOM (-100)
typedef int (*InterpBody)(Interp *I, void *ud);
int interp_protected(Interp *I, InterpBody body, void *ud);
/* A protected interp_call: 0 and *out owned, or 1 with the error pending in I. */
int interp_pcall(Interp *I, Value fn, Value *args, int nargs, Value *out);

/* Ctrl-C and --timeout: async-signal-safe (they only set the state's flags). */
void interp_interrupt(Interp *I);
void interp_time_up(Interp *I);
/* Where `import` finds the standard library (copied; at most 4095 bytes). */
void interp_set_stdlib_dir(Interp *I, const char *dir);

/* Parse, resolve and run `text` as code of module `m` (the main module when NULL).
 * Returns 0, or 1 on error (printed to stderr), or 2 when `incomplete` is non-NULL
 * and the input ended inside an open construct (*incomplete set). */
int interp_run_source(Interp *I, const char *name, const char *text, size_t len, bool echo,
                      bool *incomplete);
/* The same, for text that starts after line `line_base` of a longer input (the REPL session).
 * Both refuse text over TSL_MAX_SOURCE_BYTES, a negative line_base, and lines that would count
 * past INT_MAX: INTERP_REFUSED, with the error set, before anything runs. */
#define INTERP_REFUSED (-101)
int interp_run_source_at(Interp *I, const char *name, const char *text, size_t len, int line_base,
                         bool echo, bool *incomplete);
int interp_run_file(Interp *I, const char *path);
/* Writes program output through I->write_out; a failed write is an error (pending), false returned. */
bool interp_write_out(Interp *I, const char *s, size_t len);
/* Writes a diagnostic (a warning, an explain line) through I->write_diag; failures are ignored. */
void interp_write_diag(Interp *I, const char *s, size_t len);
/* The language's keywords, NULL-terminated (errval.c): "did you mean" and tab completion. */
extern const char *const interp_keywords[];
/* Hands data to the host's display hook: -1 when the host set none, else the hook's 0 or errno. */
int interp_display(Interp *I, const char *mime, const void *data, size_t n, const char *id);
/* print()'s options (print.c): sep and end (not NUL-terminated), to standard error, flush. */
typedef struct {
    const char *sep, *end;
    int sep_len, end_len;
    bool to_stderr, flush;
} PrintOpts;
/* Reads print's keyword arguments into o (the defaults for those not given); false with the
 * message in err when one is unknown or of the wrong type. */
bool print_options(char *const *names, const Value *vals, int n, PrintOpts *o, char *err, size_t errn);
/* The values as print shows them, with o's separator and end, to o's stream. */
bool print_values(Interp *I, const PrintOpts *o, const Value *v, int n);
bool print_write(Interp *I, const PrintOpts *o, const char *s, size_t len);
Value builtin_flush(Interp *I, CallArgs *a);
/* The diagnostic line "<head>FILE:LINE:COL: <what>MSG" of src (NULL: "?"), file and msg escaped. */
void interp_diag_at(Interp *I, const char *head, const Source *src, SrcLoc loc, const char *what, const char *msg);

/* Where a function's locations point: the text it was defined in, not the module's latest. */
static inline Source *closure_src(const ObjClosure *c) {
    return c->proto->src ? c->proto->src : c->module->src;
}

/* Errors. The message is recorded once (innermost wins); the location is attached by
 * the innermost expression that has one. */
Value interp_error(Interp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
Value interp_error_at(Interp *I, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with the error's kind; interp_error and interp_error_at raise ERRK_VALUE. */
Value interp_errork(Interp *I, ErrKind k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
Value interp_error_atk(Interp *I, ErrKind k, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Raises the ops layer's pending error (op_error(), op_error_kind()). */
Value interp_op_error(Interp *I);
void interp_attach_loc(Interp *I, SrcLoc loc);
/* The pending error as the dict `catch e` binds: {message, kind, file, line, col, traceback}
 * (lang/errval.c). The error stays pending. */
Value interp_caught_error(Interp *I);
/* "; did you mean 'X'?" (in buf) for an unknown name read in function p (NULL: top level) of
 * module m: the closest of p's locals and captured names, m's bound globals (the built-ins
 * among them) and the keywords; "" when none is close (ops/suggest.h). Where p assigns the name
 * and m has a global of it, instead " here: the function assigns it, so it is local (...)":
 * that is the mistake (Python's `global`). lang/errval.c. */
const char *interp_name_hint(const Module *m, const FnProto *p, const char *name, char *buf, size_t n);
/* The same for a keyword argument of p, and for a tensor attribute. */
const char *interp_param_hint(const FnProto *p, const char *name, char *buf, size_t n);
const char *interp_attr_hint(const char *name, char *buf, size_t n);
/* "; in TSL: upper(s)" for a Python method of a string, list or dict, else "" */
const char *interp_field_hint(const char *type, const char *name, char *buf, size_t n);
/* Renders the pending error as the program prints it (FILE:LINE:COL: error: MSG, the source
 * line and a caret, the traceback) into I->report, while its source is still alive. Both
 * render entered and protected, so they may be called from inside or outside a run: when the
 * report runs out of memory it is left empty and the pending message is kept. */
void interp_report_error(Interp *I);
/* Sets I->report to "tsl: error: MSG" for an error that belongs to no source. */
void interp_report_plain(Interp *I, const char *msg);
/* Sets a pending error that belongs to no source ("tsl: error: MSG") and renders its report. */
void interp_fail_plain(Interp *I, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void interp_vfail_plain(Interp *I, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void interp_clear_error(Interp *I);
void traceback_add(Traceback *t, const char *fn_name, const Source *src, SrcLoc loc);
void traceback_add_n(Traceback *t, const char *fn_name, const Source *src, SrcLoc loc, long count);
/* Line i of a traceback as the report shows it, unindented (run.c); traceback_nlines lines in all. */
int traceback_nlines(const Traceback *t);
void traceback_line(StrBuf *b, const Traceback *t, int i);
/* Appends s[0..n) with control bytes and terminal escapes shown escaped (\x1b, \n, \u{9b}). */
void sb_put_escaped(StrBuf *b, const char *s, size_t n);

/* Calls a function value (closure, builtin, or dict with forward). Args borrowed. */
Value interp_call(Interp *I, Value fn, Value *args, int nargs);
Value interp_call_args(Interp *I, Value fn, CallArgs *a);

/* Truthiness (spec section 3); -1 on error (ambiguous tensor). */
int interp_truthy(Interp *I, Value v);

/* Globals. */
int globals_slot(Globals *g, const char *name);          /* creates an unbound slot */
int globals_find(const Globals *g, const char *name);    /* -1 when absent */
void globals_free(Globals *g);

Exec interp_exec_module(Interp *I, Module *m, Node *prog);
/* Eager execution that never goes through the static VM (--no-static, verify, fallback). */
Exec interp_exec_block_eager(Interp *I, Frame *f, Node *block);
Value interp_call_eager(Interp *I, ObjClosure *fn, Value *args, int nargs, CallArgs *kw);
int64_t utf8_length(const char *s, int len);
double num_floor_mod(double a, double b);   /* % on numbers: floor modulo, x % 0 is nan */
double num_binary(int tok, double x, double y);   /* + - * / % ** and comparisons (0/1) on numbers */
int tensor_op_of(int tok);                       /* the OpCode of a binary operator token */

/* A range's bounds stay within +-2**53, where every integer is a double and i + step moves
 * i: beyond, i + 1 == i and a loop over range() would never end (also for infinities). */
/* The error of `if t` (and while, and, or, not, assert) on a tensor of several elements, eager
 * and static alike (vm/run/vm_loop.h): spec section 6 asks the message to suggest where(). */
#define AMBIGUOUS_TRUTH_FMT "ambiguous truth value of a tensor with %lld elements; use any/all, or where(cond, a, b) to choose elementwise"
#define RANGE_MAX_BOUND 9007199254740992.0
#define RANGE_BOUND_MSG "range() arguments must be integers between -2**53 and 2**53"

/* resolve.c */
int resolve_program(Interp *I, Module *m, Node *prog);

/* builtins.c / tbuiltins.c: built-in functions */
void builtins_install(Interp *I, Module *m);
Value builtins_range_list(Interp *I, CallArgs *a);
const char *range_param_name(int nargs, int i);
void range_arg_message(char *buf, size_t size, int nargs, int i, const char *type, double x);
Value str_repeat(Interp *I, ObjString *s, double n);   /* strings.c: s * n */
void builtins_free(Interp *I);
/* Argument binding for built-ins: fills out[i] (borrowed; UNDEF when omitted and optional).
 * `params` lists names (at most ARGS_MAX); the first `nreq` are required. */
enum { ARGS_MAX = 8 };
bool args_bind(Interp *I, CallArgs *a, const char *fname, const char *const *params, int nreq, Value *out);

/* module.c */
Module *module_new(Interp *I, const char *name, Source *src);
Value module_import(Interp *I, Module *from, const char *name);
Source *source_new(Interp *I, const char *name, const char *dir, char *text, size_t len);

/* interp.c helpers used by builtins */
Value value_index(Interp *I, Value obj, Value *idx, int n);
Value value_slice(Interp *I, Value obj, const Value bounds[3]);   /* obj[a:b:c], nil where omitted */
Value value_binary(Interp *I, int tok_op, Value a, Value b);
Value interp_to_tensor(Interp *I, Value v, int dtype_or_minus1);
bool interp_check_limits(Interp *I);      /* signals, then counts one op against --max-ops */
bool interp_check_signals(Interp *I);     /* Ctrl-C and --timeout only; false with an error set */
/* The cheap poll for any loop that can run long (value walks, compiler passes, kernels):
 * one load of an atomic flag. False with an error set (the caller attaches a location). */
static inline bool interp_poll(Interp *I) { return !I->interrupt_flag || interp_check_signals(I); }

/* Runs built-in b on a call's arguments, as the interpreter calls it: b is then
 * I->calling_builtin, the row builtin_bind (and grad(f)'s functions) read. */
static inline Value builtin_run(Interp *I, ObjBuiltin *b, CallArgs *a) {
    I->calling_builtin = b;
    return b->fn(I, a);
}

#endif
