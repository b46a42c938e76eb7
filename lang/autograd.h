/* autograd.h - eager automatic differentiation (spec section 7).
 *
 * While grad(f)(x) runs f, a tape is active: every eager op call with a tracked operand
 * (a float leaf of x, or a result recorded before) is recorded by autograd_record(), which
 * the eager op paths (interp.c operators, opargs.c built-ins) call when the interpreter's
 * tape (I->tape) is set. Backward walks the tape in reverse creation order and runs each op's rule
 * (ops/grad.c) through the eager GradBuilder, so every op call accumulates in the same
 * order every run. Static code does not record: f runs with I->no_static set. Tapes nest
 * (grad(grad(f))): an op is recorded on every active tape, and an inner backward runs its
 * ops through a builder that records them on the enclosing tapes. */
#ifndef TSL_AUTOGRAD_H
#define TSL_AUTOGRAD_H
#include "interp.h"
#include "opcall.h"
#include "tops.h"

typedef struct Tape Tape;   /* I->tape: the innermost active tape, or NULL (the common case: one test) */

/* Records a finished call (out[] its results); a no-op when no operand is tracked. 0, or -1
 * with the message in op_error() when the tape cannot grow (--max-memory counts it). */
int autograd_record(const OpCall *c, Tensor *const *out);

/* Records res = op(t) with attributes at (t tracked or not): a copy the interpreter makes
 * without the op call (tensor(t), grad's fresh argument) recorded as the op that gives it.
 * 0, or -1 with the message in op_error(). */
int autograd_record_unary(OpCode op, const Tensor *t, const OpAttrs *at, Tensor *res);

/* Records res = t[idx] (t tracked) as take(t, positions): positions are the flat
 * positions of t that the index read (op_index_positions: the same plan as the read), so
 * take's rule (scatter_add into zeros) is the backward of every index kind. The tape format is unchanged: the node is an ordinary TAKE call. 0, or -1 with
 * the message in op_error(). */
int autograd_record_index(const Tensor *t, const IndexItem *idx, int n, Tensor *res);

/* Whether t is on the active tape (a leaf or a recorded result). */
bool autograd_tracked(const Tensor *t);
/* Whether v holds such a tensor, through lists and dicts. */
bool value_holds_tracked(Value v);

/* After built-in b returned r for arguments a (call at loc), with a tape active: the boundary
 * where a value can leave the tape. A conversion to host values (ST_CUTS: item, float,
 * tolist...) of a tracked tensor is remembered as the cut, so a gradient that reaches the
 * argument only through it is an error instead of silent zeros (autograd_call). A new float
 * tensor made from tracked arguments that the tape did not record (a loaded graph, a tensor
 * built from a list of tracked tensors) is an error now. Returns r, or ERR_VAL (r released). */
/* The error of a result that reaches the argument only through a cut (eager and static code
 * say it alike): who (grad or value_and_grad), the built-in that cut, its line and column. */
#define GRAD_CUT_MSG "%s(): f's result reaches its argument only through %s() at %d:%d, which makes a number " \
                     "(not a tensor on the gradient tape), so no gradient flows back; keep the value a tensor"
Value autograd_after_builtin(Interp *I, const ObjBuiltin *b, const CallArgs *a, Value r, SrcLoc loc);

/* The built-ins (builtins.c binds them): grad(f) / value_and_grad(f) make a function;
 * calling it runs autograd_call. check_grad compares with central differences. */
Value autograd_call(Interp *I, Value f, CallArgs *a, bool with_value);
Value autograd_check_grad(Interp *I, Value f, Value x, double eps);

#endif
