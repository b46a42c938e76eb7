/* methods.c - method calls: the dict rule (`self`) and the tensor methods generated from the op
 * table (methods.h says the rules). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "methods.h"
#include "ast.h"
#include "builtins.h"

const char *const tensor_attrs[] = { "shape", "dtype", "ndim", "size", "device", "T", NULL };

bool method_is_tensor_attr(const char *name) {
    for (int i = 0; tensor_attrs[i]; i++)
        if (!strcmp(tensor_attrs[i], name)) return true;
    return false;
}

static bool is_method_op(int op) {
    const OpDef *d = op_def((OpCode)op);
    return !(d->flags & F_SYNTAX) && d->nparams > 0 && d->params[0].type == P_T &&
           !method_is_tensor_attr(d->name);
}

/* The methods' ops sorted by name, built once per process (read-only afterwards), so a
 * lookup is a binary search rather than a walk over every row. */
static OpCode sorted_ops[OP__COUNT];
static int nsorted;

static int by_name(const void *a, const void *b) {
    return strcmp(op_def(*(const OpCode *)a)->name, op_def(*(const OpCode *)b)->name);
}

static void sorted_build(void) {
    for (int op = 0; op < OP__COUNT; op++)
        if (is_method_op(op)) sorted_ops[nsorted++] = (OpCode)op;
    qsort(sorted_ops, (size_t)nsorted, sizeof sorted_ops[0], by_name);
}

OpCode method_tensor_op(const char *name) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, sorted_build);
    int lo = 0, hi = nsorted - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(name, op_def(sorted_ops[mid])->name);
        if (!c) return sorted_ops[mid];
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return OP__COUNT;
}

/* The conversions that are built-ins rather than ops but read a tensor first, as NumPy's and
 * PyTorch's methods of the same names: x.item(), x.tolist(), x.to("cpu"). (float, int, bool
 * and str are not among them: PyTorch's x.float() is a tensor, TSL's float(x) a number.) */
static const char *const conversion_methods[] = { "item", "tolist", "to", NULL };

static bool is_conversion_method(const char *name) {
    for (int i = 0; conversion_methods[i]; i++)
        if (!strcmp(conversion_methods[i], name)) return true;
    return false;
}

ObjBuiltin *method_tensor_builtin(struct Interp *I, const char *name) {
    OpCode op = method_tensor_op(name);
    if (op != OP__COUNT) return builtins_of_op(I, op);
    return is_conversion_method(name) ? builtin_named(I, name) : NULL;
}

const char *method_tensor_nth(int index) {
    for (int op = 0; op < OP__COUNT; op++)
        if (is_method_op(op) && index-- == 0) return op_def((OpCode)op)->name;
    for (int i = 0; conversion_methods[i]; i++)
        if (index-- == 0) return conversion_methods[i];
    return NULL;
}

bool method_takes_self(const struct FnProto *p) {
    return p && p->nparams > 0 && !strcmp(p->params[0], "self");
}

bool method_value_takes_self(Value fn) {
    return fn.type == VAL_FUNC && fn.as.o->kind == OBJ_CLOSURE && method_takes_self(AS_CLOSURE(fn)->proto);
}
