/* methods.h - what `obj.name(args)` calls (spec section 12).
 *
 * A call whose callee is a field passes the object as the first argument when
 *   - the object is a dict and the field a TSL function whose first parameter is named `self`
 *     (`opt.step(model, grads)`, `model.forward(x)`); any other field is called as written;
 *   - the object is a tensor and the name none of its attributes: the name is then a method,
 *     an op of ops.def with a built-in whose first parameter is a tensor, and `t.name(args)` is
 *     `name(t, args)` (`x.sum(axis=1)`). The list is the op table itself, so a new row is a
 *     new method, plus the conversions item, tolist and to (`x.item()`, as NumPy and PyTorch).
 * `t.name` without a call is the op's built-in, unbound (help(t.sum) is help(sum)), as `d.f`
 * is the function f: the object is passed by the call only. Eager code (interp.c), the static
 * compiler (vm/compile/cexpr.c) and completion (api_tools.c) all ask these functions, so they
 * resolve a name alike. */
#ifndef TSL_METHODS_H
#define TSL_METHODS_H
#include <stdbool.h>
#include "value.h"
#include "opcall.h"

struct FnProto;
struct Interp;

/* The attributes of a tensor (`shape dtype ndim size device T`), NULL-terminated. */
extern const char *const tensor_attrs[];
bool method_is_tensor_attr(const char *name);
/* The error for t.NAME(...) with NAME an attribute (`x.size()`, `x.shape()`, as PyTorch
 * spells them): an attribute is a value, never a method. Its one argument is the name; eager
 * code and the static compiler raise it at the call, a type error. */
#define METHOD_ATTR_CALLED "'%s' is a tensor attribute, not a method: write .%s without ()"
/* The op `t.name(...)` calls, or OP__COUNT when name is no tensor method. */
OpCode method_tensor_op(const char *name);
/* The built-in of that op, or of a conversion method (item tolist to) (the interpreter's,
 * BORROWED), or NULL. */
ObjBuiltin *method_tensor_builtin(struct Interp *I, const char *name);
/* The index-th tensor method in table order, NULL past the last (completion). */
const char *method_tensor_nth(int index);
/* Whether a function with this prototype, read from a dict's field and called, gets the
 * dict as its first argument: its first parameter is named `self`. */
bool method_takes_self(const struct FnProto *p);
/* The same for a value: a TSL function (a closure) with that prototype. */
bool method_value_takes_self(Value fn);

#endif
