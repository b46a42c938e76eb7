/* builtins.h - tables of built-in functions and helpers shared by their files. */
#ifndef TSL_BUILTINS_H
#define TSL_BUILTINS_H
#include "interp.h"
#include "opcall.h"

/* How static code treats a built-in that is not an op (vm/compile/cbuiltins.c; ops have theirs in
 * ops.def): the rule that compiles a call of it, ST_NONE where nothing does (the code runs
 * eagerly), or'ed with ST_FOLDS when it is pure and a call whose arguments are known while
 * compiling is run then, its result a constant. */
enum {
    ST_NONE,
    ST_PRINT, ST_ASSERT, ST_STATIC_MODE,      /* act in program order; "static" */
    ST_FLUSH,                                 /* print(end="", flush=true) */
    ST_GRAD, ST_VALUE_AND_GRAD,               /* of a function known while compiling: cgrad.c */
    ST_CALL_GRAD, ST_CALL_VALUE_AND_GRAD,     /* the function grad(f) returned, called */
    ST_EAGER,                                 /* says it runs eagerly (check_grad) */
    ST_RANK, ST_WORLD_SIZE,                   /* constants of the process */
    ST_TENSOR, ST_BOOL, ST_TO, ST_SEED,       /* also on tensors known only at run time */
    ST_ITEM, ST_FLOAT, ST_LEN, ST_TYPE,
    ST_TOLIST,                                /* of a small tensor of known shape */
    ST_INT,                                   /* of numbers and strings made at run time */
    ST_PUSH, ST_EXTEND, ST_INSERT,            /* onto lists the static code made */
    ST_REVERSED, ST_KEYS, ST_GET, ST_SORTED,
    ST_POP,                                   /* from lists and dicts the static code made */
    ST_TEXT,                                  /* a string; of values known only at run time too */
    ST_RAISE,                                 /* error(), raise(): compiled in a try's body (ctry.c) */
    ST_EINSUM,                                /* a plan of ops (ops/einsum.c), emitted */
    ST_WRITE,                                 /* writes a file when the block runs, in program order */
    ST_RULE = 0xff,                           /* the rule's bits */
    ST_FOLDS = 0x100,
    /* its result is host values read from a tensor's elements (item, float, tolist): under
     * grad it cuts the gradient (lang/autograd.c, autograd_after_builtin) */
    ST_CUTS = 0x200,
};

/* One row per built-in that is not an op (ops have theirs in ops.def): the signature as a
 * call would be written ("split(s, sep=nil)" without the name), one line saying what it
 * does, so help(x) can print both from the table that defines the built-in, and how static
 * code treats it (ST_*). The signature is also the parameter spec static code binds a call
 * by (builtin_params), with eager's binder and messages (args_match). */
typedef struct BuiltinDef {
    const char *name;
    BuiltinFn fn;
    const char *signature;
    const char *doc;
    unsigned stat;
} BuiltinDef;

extern const BuiltinDef core_builtins[];
extern const BuiltinDef tensor_builtins[];
extern const BuiltinDef string_builtins[];   /* strings.c */
extern const BuiltinDef list_builtins[];     /* lists.c */
extern const BuiltinDef file_builtins[];     /* files.c */
extern const BuiltinDef format_builtins[];   /* formats.c */
extern const BuiltinDef dist_builtins[];     /* dist_builtins.c */
extern const BuiltinDef progress_builtins[]; /* progress.c */
extern const BuiltinDef plot_builtins[];     /* plot.c (cairo) */
/* The built-in static code's progress bars call (progress.c, progress.h), made on first use. */
ObjBuiltin *progress_host_builtin(Interp *I);

/* A row's parameters, parsed from its signature once per process (builtin_params). */
typedef struct BuiltinParams {
    const BuiltinDef *def;
    const char *names[ARGS_MAX + 1];   /* NULL-terminated, in buf */
    int np, nreq;                      /* nreq -1: not a plain list (print's, range's) */
    char buf[128];
} BuiltinParams;

/* del and pop: takes key out of a list or dict (lists.c); the item (owned) or ERR_VAL. */
Value interp_take(Interp *I, const char *what, Value obj, Value key, Value dflt);
/* sorted()'s order of keys[0..n) (lists.c): order[k] is the position of the k-th smallest
 * (reverse: largest; equal keys keep their order either way). False, with sorted()'s error
 * pending, when two keys cannot be compared. Static code sorts by keys known when compiling
 * with it (vm/compile/cbuiltins.c). */
bool list_sort_order(Interp *I, const Value *keys, int n, bool reverse, int *order);
/* The interpreter's object for built-in `name` (static code calling one it did not name). */
ObjBuiltin *builtin_named(Interp *I, const char *name);

/* Binds a call of I->calling_builtin, whose function is self (NULL: whatever it is, for a
 * built-in reached through a hook), by its row: out[i] is parameter i's argument (borrowed;
 * UNDEF when omitted). Returns the row's parameters, or NULL on an error. */
const BuiltinParams *builtin_bind(Interp *I, CallArgs *a, BuiltinFn self, Value *out);
/* The parameters of row d's signature, "(list, i, x)" or "(data, dtype=nil)": their names (in
 * buf, n >= its length), NULL-terminated, and the result how many are required; -1 when it is not
 * such a list (print's "(...)", range's). Static code binds a call by it (vm/compile/cbuiltins.c);
 * Eager built-ins bind by the same list, parsed once (builtin_bind). */
int builtin_params(const BuiltinDef *d, const char **params, char *buf, size_t n);
/* The message of item(), float() or int() on a tensor of `size` elements, not one (in buf). */
const char *one_element_message(char *buf, size_t n, const char *fname, int64_t size);
/* The row of a built-in that is not an op, or NULL. */
const BuiltinDef *builtin_def(const char *name);
Value builtin_format(Interp *I, CallArgs *a);   /* fmtspec.c */
bool arg_str(Interp *I, const char *fname, const char *pname, Value v, ObjString **out);
/* files.c: the path argument of a file built-in (a string; not in a sandbox), and where s's n
 * bytes stop being UTF-8 text (a NUL byte or invalid UTF-8), -1 when they all are. */
bool builtin_path(Interp *I, const char *fname, Value v, const char **out);
int64_t utf8_bad_at(const char *s, size_t n);
/* casemap.c: appends s's len bytes upper- or lower-cased as Python's str.upper()/lower(). */
void casemap_append(StrBuf *b, const char *s, size_t len, bool up);
extern const BuiltinFn op_builtins[];   /* indexed by OpCode (tbuiltins.c) */

bool arg_number(Interp *I, const char *fname, const char *pname, Value v, double *out);
bool arg_int(Interp *I, const char *fname, const char *pname, Value v, int64_t *out);
bool builtin_is(Value v, const char *name);
bool builtin_constant_is(Value v, const char *name);
int builtins_names(const char ***names);
/* The built-in that calls op (the interpreter's, BORROWED), or NULL for an F_SYNTAX op. */
ObjBuiltin *builtins_of_op(Interp *I, OpCode op);
/* errval.c: errors as values (spec section 12) */
Value builtin_raise(Interp *I, CallArgs *a);
/* The ErrKind a kind= argument names, or -1 with the error set ("fname(): kind must be ..."). */
int error_kind_arg(Interp *I, const char *fname, Value v);

#endif
