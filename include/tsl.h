/* tsl.h - the public interface of the TSL library (libtsl.a, libtsl.so).
 *
 * A program embeds TSL through this header alone; the `tsl` command itself (repl/) is built
 * against nothing else. Everything is reached through opaque handles:
 *
 *   tsl_State   one interpreter: its modules, globals, options, pending error, and all the
 *               memory they use (through its allocation hook). A state is used by one thread
 *               at a time; two states in one process share nothing.
 *   tsl_Tensor  an n-dimensional array (bool, i64, f32 or f64, C order). Reference-counted
 *               (not atomically: hand a tensor to one thread at a time). A tensor the host
 *               holds is the host's: made in the C library's memory of the thread that made
 *               it, never a state's, so it outlives every state. Handing one to a state
 *               (tsl_set_tensor, a tsl_call argument) copies it into the state's memory;
 *               handing one out (tsl_get_tensor, a tsl_call result, a session's output)
 *               copies it out. Free a tensor on the thread that made it.
 *   tsl_Model   a graph file written by export() (docs/format.md), loaded and verified;
 *               immutable, so several threads may run it at once, ...
 *   tsl_Session ... each through its own session (registers, buffers, error text).
 *               (docs/api.md says what still keeps this from being race-free.)
 *
 * Statuses. Every function that can fail returns a tsl_Status; TSL_OK is 0. The message of a
 * failure is read from the state: tsl_error_message (the message alone), tsl_error_location
 * (file, line, column) and tsl_error_report (what `tsl` prints: FILE:LINE:COL: error: MSG,
 * the source line, a caret, the traceback). A function given a NULL state (allowed where its
 * comment says so) returns the status only. Accessors that cannot fail return their value.
 *
 * NULL. Every pointer argument may be NULL without a crash: where its comment does not say
 * what NULL means, a function with a status returns TSL_BADARG and does nothing (an array
 * with a NULL entry counts too), a function without one does nothing, and an accessor returns
 * -1, NULL or "" (tests/api/test_null_args.c calls every function of this header so).
 *
 * Ownership. "new reference": the caller frees it (tsl_tensor_free). "borrowed": the library
 * keeps it; valid until the call named at the declaration. Strings handed in are copied.
 *
 * Output. Nothing in the library prints or exits. Program output (print, dis) goes to the
 * output hook, warnings and TSL_EXPLAIN lines to the diagnostics hook (by default standard
 * output and standard error); errors are returned, and the program decides what to show.
 *
 * A minimal embedding:
 *
 *     tsl_State *S;
 *     tsl_Value result;
 *     if (tsl_new(NULL, NULL, &S) != TSL_OK) return 1;
 *     if (tsl_run_string(S, "<init>", "fn sq(x) { return x * x }", -1) != TSL_OK ||
 *         tsl_call(S, "sq", (tsl_Value[]){ tsl_number(3) }, 1, &result) != TSL_OK)
 *         fputs(tsl_error_report(S), stderr);
 *     printf("%g\n", result.number);   // 9
 *     tsl_free(S);
 *
 * docs/api.md is the guide; this header is the reference. */
#ifndef TSL_H
#define TSL_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define TSL_API __attribute__((visibility("default")))
#else
#define TSL_API
#endif

#define TSL_VERSION_MAJOR 0
#define TSL_VERSION_MINOR 1
#define TSL_VERSION_PATCH 0
/* The largest source text (a script, standard input) the library runs. */
#define TSL_MAX_SOURCE (64 * 1024 * 1024)
/* The most dimensions a tensor has. */
#define TSL_MAX_DIMS 32

typedef struct tsl_State tsl_State;
typedef struct tsl_Tensor tsl_Tensor;
typedef struct tsl_Model tsl_Model;
typedef struct tsl_Session tsl_Session;

typedef enum {
    TSL_OK = 0,
    TSL_ERROR,        /* a syntax or run-time error: the message is in the state */
    TSL_INCOMPLETE,   /* tsl_run_input: the input ends inside an open construct; add a line */
    TSL_EXIT,         /* the program called exit(code): tsl_exit_code says the code */
    TSL_INTERRUPTED,  /* tsl_interrupt stopped it (tsl_timeout's stop is a TSL_ERROR) */
    TSL_IO,           /* a file could not be read or written */
    TSL_NOT_FOUND,    /* no global of that name */
    TSL_TYPE,         /* a value of another type than asked for */
    TSL_BADARG,       /* an invalid argument to the API (NULL, out of range) */
    TSL_UNSUPPORTED   /* not available in this build (a GPU) */
} tsl_Status;

typedef enum { TSL_BOOL, TSL_I64, TSL_F32, TSL_F64 } tsl_DType;

/* The version as "MAJOR.MINOR.PATCH" (static). */
TSL_API const char *tsl_version(void);
/* What the build computes with, as "OpenBLAS, Haswell kernels" (static). */
TSL_API const char *tsl_backend(void);

/* ---- states ---- */

/* The allocation hook (Lua's lua_Alloc): nsize 0 frees ptr; otherwise like realloc, told the
 * old size (0 for a new block). Returns NULL when it cannot allocate. */
typedef void *(*tsl_AllocFn)(void *ud, void *ptr, size_t osize, size_t nsize);

/* Creates a state in *out (new: free it with tsl_free). Every block of the state, the handle
 * included, comes from alloc(ud, ...) and goes back to it by tsl_free; alloc NULL: the C
 * library's realloc and free. TSL_ERROR (and *out NULL) when the state cannot be made. Out of
 * memory later is an ordinary error: the call returns TSL_ERROR with "out of memory" in the
 * state, which stays usable. */
TSL_API tsl_Status tsl_new(tsl_AllocFn alloc, void *ud, tsl_State **out);
/* Frees the state and every block it holds (tensors handed out are the host's: they stay
 * valid). NULL is a no-op. */
TSL_API void tsl_free(tsl_State *S);

/* Text hooks: write n bytes of s; return 0, or an errno value when they could not be written
 * (for output, that is an error of the running program). fn NULL restores the default. */
typedef int (*tsl_WriteFn)(void *ud, const char *s, size_t n);
TSL_API tsl_Status tsl_set_output(tsl_State *S, tsl_WriteFn fn, void *ud);
TSL_API tsl_Status tsl_set_diagnostics(tsl_State *S, tsl_WriteFn fn, void *ud);

/* Rich output, for a host that shows more than text (a notebook): data of n bytes of a MIME
 * type. plot.show() hands it a figure as "image/png"; a progress bar becomes a "text/plain"
 * display (its text as the bar on a terminal, without control bytes) that each redraw
 * replaces: id names it ("tsl-progress-N"), NULL for data shown once. Return 0, or an errno
 * value when it could not be shown (an error of plot.show; a bar's redraw ignores it).
 * fn NULL (the default): no display; plot.show() then says how to save the figure, and bars
 * go to the diagnostics hook. */
typedef int (*tsl_DisplayFn)(void *ud, const char *mime, const void *data, size_t n, const char *id);
TSL_API tsl_Status tsl_set_display(tsl_State *S, tsl_DisplayFn fn, void *ud);

/* ---- options (spec section 1: the command line's) ---- */

typedef enum {
    TSL_OPT_MAX_DEPTH,          /* call depth (default 10000, at most 1000000) */
    TSL_OPT_MAX_NESTING,        /* syntactic nesting (default 1000, at most 100000) */
    TSL_OPT_MAX_TENSOR_BYTES,   /* largest tensor of the state (default 1 GiB) */
    TSL_OPT_MAX_MEMORY,         /* all memory the program holds, 0 none */
    TSL_OPT_MAX_OPS,            /* operation budget, 0 none */
    TSL_OPT_NO_STATIC,          /* 1: static blocks and static fns run eagerly */
    TSL_OPT_VERIFY_STATIC       /* 1: run static code both ways and compare */
} tsl_Option;

/* TSL_BADARG for a negative value or an unknown option. */
TSL_API tsl_Status tsl_set_option(tsl_State *S, tsl_Option opt, int64_t value);
TSL_API tsl_Status tsl_get_option(tsl_State *S, tsl_Option opt, int64_t *value);
/* The process's thread pool, shared by every state: large elementwise ops, fused groups and
 * reductions split their work over n threads (the caller's included) in a fixed partition,
 * so results have the same bits for every n. n 1: no thread is ever started; 0: the default,
 * TSL_THREADS from the environment, else the number of cores. Takes effect for the next op;
 * TSL_BADARG for n < 0. tsl_threads says the number in use. */
TSL_API tsl_Status tsl_set_threads(int n);
TSL_API int tsl_threads(void);
/* "cpu" or "gpu"; TSL_UNSUPPORTED (with a message) for a device this build lacks. */
TSL_API tsl_Status tsl_set_device(tsl_State *S, const char *device);
/* What args() returns to the program (copied); TSL_BADARG, and the old ones kept, when an
 * entry is NULL. */
TSL_API tsl_Status tsl_set_args(tsl_State *S, int argc, const char *const *argv);
/* The standard library's folder (copied); TSL_STDLIB in the environment still wins. */
TSL_API tsl_Status tsl_set_stdlib_path(tsl_State *S, const char *dir);

/* ---- running code ---- */

/* Runs len bytes of text (len < 0: up to its NUL) as the main module, `name` labelling its
 * locations ("<string>"). TSL_OK, TSL_ERROR, TSL_EXIT or TSL_INTERRUPTED; TSL_BADARG (and
 * nothing run) for a text longer than TSL_MAX_SOURCE bytes. */
TSL_API tsl_Status tsl_run_string(tsl_State *S, const char *name, const char *text, ptrdiff_t len);
/* Runs a script file; TSL_IO when it cannot be read. */
TSL_API tsl_Status tsl_run_file(tsl_State *S, const char *path);
/* The REPL's entry: like tsl_run_string, but TSL_INCOMPLETE (and nothing run) when the text
 * ends inside an open construct, and the value of a last expression statement is kept for
 * tsl_result_text. line_base: lines of the session before this input (locations count on);
 * TSL_BADARG (nothing run) when it is negative or the input's lines would count past INT_MAX. */
TSL_API tsl_Status tsl_run_input(tsl_State *S, const char *name, const char *text, size_t len, int line_base);
/* Parses len bytes of text without running anything: TSL_OK when it is a whole program,
 * TSL_INCOMPLETE when it ends inside an open construct (tsl_run_input would ask for another
 * line), TSL_ERROR for a syntax error ("LINE:COL: MSG" in tsl_error_message), TSL_BADARG
 * for a text longer than TSL_MAX_SOURCE. A notebook's "is this cell complete?". */
TSL_API tsl_Status tsl_check_input(tsl_State *S, const char *text, size_t len);
/* After tsl_run_input: *text is the value shown as the REPL shows it, or NULL when it was
 * nil (borrowed: valid until the next call on S). TSL_ERROR when it is too large to show or
 * the showing was interrupted (the report then says so). */
TSL_API tsl_Status tsl_result_text(tsl_State *S, const char **text);
/* The code passed to exit(code) after TSL_EXIT. */
TSL_API int tsl_exit_code(tsl_State *S);

/* Async-signal-safe, and safe from another thread while S runs: ask the running code to stop
 * (Ctrl-C); it fails with "interrupted" (TSL_INTERRUPTED) at its next poll, and S runs again
 * after. Called while nothing runs, it stops the next run at its start. */
TSL_API void tsl_interrupt(tsl_State *S);
/* The same for the time limit (--timeout): this and every later poll fails with "time limit
 * exceeded (--timeout)" (TSL_ERROR). */
TSL_API void tsl_timeout(tsl_State *S);
/* Whether an interrupt is pending (1) or not (0); tsl_interrupt_clear drops it (the REPL,
 * at its prompt). */
TSL_API int tsl_interrupt_pending(tsl_State *S);
TSL_API void tsl_interrupt_clear(tsl_State *S);

/* ---- the MPI job (spec section 11) ---- */

/* 1 with this process's *rank and the job's *size when it was started by mpirun (joining
 * the job if no collective has yet), else 0 (a world of one). Either pointer may be NULL. */
TSL_API int tsl_world(int *rank, int *size);
/* Ends every process of the MPI job with status (MPI_Abort), so that the other ranks do not
 * wait forever in a collective for one that failed; the caller reports the error first. Returns
 * at once when the process is not part of a job of more than one, or when the ranks disagreed
 * in a collective (every rank saw it and stops with its own error: ending normally, each one's
 * report is printed before mpirun ends the job with a failure). */
TSL_API void tsl_world_abort(int status);
/* A host calls it once its run ended without an error (the script's end, exit(0), the REPL
 * left): this rank's last exchange with the others, joining the job first under mpirun. TSL_OK
 * when every rank finished too, and at once outside mpirun; TSL_ERROR when a rank still waits
 * in a collective, which stops with an error at its line, and the report in S says which
 * (print it and end with a failure, as for a failed run). Under mpirun, collectives after it
 * are errors. */
TSL_API tsl_Status tsl_world_finish(tsl_State *S);

/* ---- errors (all borrowed: valid until the next call on S) ---- */

/* The message of the last failure, "" when none. */
TSL_API const char *tsl_error_message(tsl_State *S);
/* Where it happened: 1 with *file, *line and *col set (each pointer may be NULL), or 0 when
 * it has no location. */
TSL_API int tsl_error_location(tsl_State *S, const char **file, int *line, int *col);
/* The whole report as `tsl` prints it (ends with a newline), "" when none. */
TSL_API const char *tsl_error_report(tsl_State *S);

/* ---- values ---- */

typedef enum { TSL_NIL, TSL_BOOLEAN, TSL_NUMBER, TSL_STRING, TSL_TENSOR, TSL_OTHER } tsl_Type;

/* An argument or a result. In arguments everything is borrowed (a string or tensor is
 * copied into the state). In a result from tsl_call, tensor is a new reference to a copy in
 * the host's memory and string is borrowed (until the next call on S). */
typedef struct {
    tsl_Type type;
    int boolean;
    double number;
    const char *string;
    size_t length;          /* of string, in bytes */
    tsl_Tensor *tensor;
} tsl_Value;

static inline tsl_Value tsl_number(double x) {
    tsl_Value v = { TSL_NUMBER, 0, x, NULL, 0, NULL };
    return v;
}
static inline tsl_Value tsl_tensor(tsl_Tensor *t) {
    tsl_Value v = { TSL_TENSOR, 0, 0, NULL, 0, t };
    return v;
}

/* The type of global `name` of the main module; TSL_NOT_FOUND when it has none. */
TSL_API tsl_Status tsl_get_type(tsl_State *S, const char *name, tsl_Type *type);
/* Typed getters: TSL_NOT_FOUND, or TSL_TYPE when the global holds something else. The value's
 * pointers (x, b, s, len, t) may be NULL: the status alone then says what the global is. */
TSL_API tsl_Status tsl_get_number(tsl_State *S, const char *name, double *x);
TSL_API tsl_Status tsl_get_bool(tsl_State *S, const char *name, int *b);
/* *s borrowed: valid until the next call on S that runs code. */
TSL_API tsl_Status tsl_get_string(tsl_State *S, const char *name, const char **s, size_t *len);
/* *t: a new reference to a copy in the host's memory (it outlives S). */
TSL_API tsl_Status tsl_get_tensor(tsl_State *S, const char *name, tsl_Tensor **t);
/* Binds a global of the main module (t borrowed: the state binds a copy in its memory). */
TSL_API tsl_Status tsl_set_number(tsl_State *S, const char *name, double x);
TSL_API tsl_Status tsl_set_tensor(tsl_State *S, const char *name, tsl_Tensor *t);

/* Calls the function bound to global `name` with args (borrowed). *result receives its value
 * (see tsl_Value); a list, dict or function result comes back as TSL_OTHER. result may be
 * NULL (the value is dropped); a string or tensor argument whose pointer is NULL is TSL_BADARG. */
TSL_API tsl_Status tsl_call(tsl_State *S, const char *name, const tsl_Value *args, int nargs,
                            tsl_Value *result);

/* ---- tensors (S may be NULL in each: then only the status tells what failed) ---- */

/* These work in the host's memory, never a state's: S only receives the error message. */

/* A new tensor (*out: new reference, the host's) of dtype and shape, its data copied from `data` (C
 * order, the dtype's C type: bool as uint8_t 0/1, int64_t, float, double), zeros when NULL. */
TSL_API tsl_Status tsl_tensor_new(tsl_State *S, tsl_DType dtype, int ndim, const int64_t *shape,
                                  const void *data, tsl_Tensor **out);
/* Drops a reference; NULL is a no-op. */
TSL_API void tsl_tensor_free(tsl_Tensor *t);
/* The accessors: -1 (tsl_tensor_data: NULL) for a NULL tensor. */
TSL_API tsl_DType tsl_tensor_dtype(const tsl_Tensor *t);
TSL_API int tsl_tensor_ndim(const tsl_Tensor *t);
/* The extent of dimension i (0 <= i < ndim; -1 for another i). */
TSL_API int64_t tsl_tensor_dim(const tsl_Tensor *t, int i);
/* Elements (the product of the shape). */
TSL_API int64_t tsl_tensor_size(const tsl_Tensor *t);
/* The elements, read-only (borrowed: valid while t is); NULL for a tensor on the GPU. */
TSL_API const void *tsl_tensor_data(const tsl_Tensor *t);
/* Copies the elements into dst (cap bytes), from any device; TSL_BADARG when they do not fit. */
TSL_API tsl_Status tsl_tensor_copy_data(tsl_State *S, const tsl_Tensor *t, void *dst, size_t cap);
/* Reads a NumPy .npy file (*out: new reference); TSL_IO with the reason. */
TSL_API tsl_Status tsl_npy_read(tsl_State *S, const char *path, tsl_Tensor **out);
TSL_API tsl_Status tsl_npy_write(tsl_State *S, const char *path, const tsl_Tensor *t);

/* ---- exported graphs (spec section 9; the format is docs/format.md) ---- */

/* Reads and verifies a graph file (*out: new, free with tsl_model_free). A missing, corrupt,
 * truncated or newer file is TSL_ERROR with the reason in S (S may be NULL), *out NULL. */
TSL_API tsl_Status tsl_model_load(tsl_State *S, const char *path, tsl_Model **out);
/* The same from a file's bytes in memory (copied); `name` labels its error locations. */
TSL_API tsl_Status tsl_model_load_bytes(tsl_State *S, const void *data, size_t n, const char *name,
                                        tsl_Model **out);
/* Frees the model; its sessions must be freed first. NULL is a no-op. */
TSL_API void tsl_model_free(tsl_Model *m);
/* The signature, flattened: the tensors and numbers of the arguments in order (lists and
 * dicts walked in order; a number is a 0-d f64 tensor), and the leaves of the result. -1 for
 * a NULL model. */
TSL_API int tsl_model_num_inputs(const tsl_Model *m);
TSL_API int tsl_model_num_outputs(const tsl_Model *m);
/* Input i's dtype, rank, shape (shape holds TSL_MAX_DIMS; -1 for an axis exported with
 * dynamic=, which takes any size) and name ("x", "params.w[2]", borrowed from m); any pointer
 * may be NULL. TSL_BADARG when i is out of range. Outputs likewise. */
TSL_API tsl_Status tsl_model_input(const tsl_Model *m, int i, tsl_DType *dtype, int *ndim, int64_t *shape,
                                   const char **name);
TSL_API tsl_Status tsl_model_output(const tsl_Model *m, int i, tsl_DType *dtype, int *ndim, int64_t *shape);
/* The signature as help() of the loaded graph prints it (borrowed from m): "f(x, m)", a line
 * of counts, then one line per input ("  input 1: x: f32[2, 4]") and per output; "" for m NULL. */
TSL_API const char *tsl_model_signature(const tsl_Model *m);

/* A session runs m (borrowed: m must outlive it) on one thread at a time; *out: new.
 * TSL_ERROR (*out NULL) when there is no memory for it or its copies of the constants. */
TSL_API tsl_Status tsl_session_new(const tsl_Model *m, tsl_Session **out);
TSL_API void tsl_session_free(tsl_Session *s);
/* Runs the model: in[nin] borrowed; out[nout] (nout = tsl_model_num_outputs) receives new
 * references, in the host's memory of the calling thread. TSL_ERROR with the message in
 * tsl_session_error: a wrong shape or dtype names the argument. TSL_INTERRUPTED when
 * tsl_session_interrupt stopped it. */
TSL_API tsl_Status tsl_session_run(tsl_Session *s, tsl_Tensor *const *in, int nin, tsl_Tensor **out, int nout);
/* What tsl_interrupt and tsl_timeout are to a state, for the session's runs: async-signal-
 * safe, and safe from another thread while the session runs on its own. The run stops at its
 * next poll (every loop's backward jump, every op) with "interrupted" (TSL_INTERRUPTED; the
 * session runs again after) or "time limit exceeded (--timeout)" (TSL_ERROR, and every later
 * run too). */
TSL_API void tsl_session_interrupt(tsl_Session *s);
TSL_API void tsl_session_timeout(tsl_Session *s);
/* The limits of the session's runs, as tsl_set_option sets a state's (TSL_OPT_MAX_MEMORY,
 * TSL_OPT_MAX_OPS, TSL_OPT_MAX_TENSOR_BYTES; the options about source and static code do not
 * apply to a graph). TSL_BADARG, with the reason in tsl_session_error, as there. */
TSL_API tsl_Status tsl_session_set_option(tsl_Session *s, tsl_Option opt, int64_t value);
/* The message of the session's last failure, "" when none (borrowed: until its next run). */
TSL_API const char *tsl_session_error(const tsl_Session *s);

/* ---- tools for hosts and the REPL (texts borrowed: valid until the next call on S) ---- */

/* The REPL's :reload: `import module` that loads the module afresh from its file (its
 * exports dict keeps its identity, its members replaced); a failed reload keeps the old one. */
TSL_API tsl_Status tsl_reload(tsl_State *S, const char *module);
/* What help(name) prints: a built-in, a global function (its doc comment) or a module field. */
TSL_API tsl_Status tsl_help_text(tsl_State *S, const char *name, const char **text);
/* The listing of the last static block that ran (dis()); TSL_ERROR when none has. */
TSL_API tsl_Status tsl_dis_text(tsl_State *S, const char **text);
/* The variables the program defined, one line each: name, type, value cut to the line. */
TSL_API tsl_Status tsl_vars_text(tsl_State *S, const char **text);
/* The index-th completion of `text` (from 0): global names starting with it, then the
 * language's keywords, or after a '.', the fields of the dict, module or tensor before it.
 * *out NULL when there are no more. */
TSL_API tsl_Status tsl_complete(tsl_State *S, const char *text, int index, const char **out);
/* Writes s[0..n) into buf (cap bytes, NUL-terminated when cap > 0) with control bytes and
 * terminal escapes shown escaped (\x1b, \n); returns the length the whole text needs. s NULL
 * is the empty text; buf NULL writes nothing (as cap 0). */
TSL_API size_t tsl_escape(const char *s, size_t n, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
