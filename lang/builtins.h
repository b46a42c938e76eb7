/* builtins.h - tables of built-in functions and helpers shared by their files. */
#ifndef TSL_BUILTINS_H
#define TSL_BUILTINS_H
#include "interp.h"

/* One row per built-in that is not an op (ops have theirs in ops.def): the signature as a
 * call would be written ("split(s, sep=nil)" without the name) and one line saying what it
 * does, so help(x) can print both from the table that defines the built-in. */
typedef struct {
    const char *name;
    BuiltinFn fn;
    const char *signature;
    const char *doc;
} BuiltinDef;

extern const BuiltinDef core_builtins[];
extern const BuiltinDef tensor_builtins[];
extern const BuiltinDef string_builtins[];   /* strings.c */
extern const BuiltinDef list_builtins[];     /* lists.c */
extern const BuiltinDef file_builtins[];     /* files.c */
extern const BuiltinDef dist_builtins[];     /* dist_builtins.c */

/* The row of a built-in that is not an op, or NULL. */
const BuiltinDef *builtin_def(const char *name);
Value builtin_format(Interp *I, CallArgs *a);   /* fmtspec.c */
bool arg_str(Interp *I, const char *fname, const char *pname, Value v, ObjString **out);
extern const BuiltinFn op_builtins[];   /* indexed by OpCode (tbuiltins.c) */

bool arg_number(Interp *I, const char *fname, const char *pname, Value v, double *out);
bool arg_int(Interp *I, const char *fname, const char *pname, Value v, int64_t *out);
bool builtin_is(Value v, const char *name);
bool builtin_constant_is(Value v, const char *name);
int builtins_names(const char ***names);

#endif
