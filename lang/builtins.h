/* builtins.h - tables of built-in functions and helpers shared by their files. */
#ifndef TSL_BUILTINS_H
#define TSL_BUILTINS_H
#include "interp.h"

typedef struct {
    const char *name;
    BuiltinFn fn;
} BuiltinDef;

extern const BuiltinDef core_builtins[];
extern const BuiltinDef tensor_builtins[];
extern const BuiltinFn op_builtins[];   /* indexed by OpCode (tbuiltins.c) */

bool arg_number(Interp *I, const char *fname, const char *pname, Value v, double *out);
bool arg_int(Interp *I, const char *fname, const char *pname, Value v, int64_t *out);
bool builtin_is(Value v, const char *name);
int builtins_names(const char ***names);

#endif
