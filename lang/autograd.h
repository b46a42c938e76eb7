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

/* Records a finished call (out[] its results); a no-op when no operand is tracked. */
void autograd_record(const OpCall *c, Tensor *const *out);

/* Records res = t[idx] (t tracked) as take(t, positions): positions are the flat
 * positions of t that the index read (op_index_positions: the same plan as the read), so
 * take's rule (scatter_add into zeros) is the backward of every index kind. The tape format is unchanged: the node is an ordinary TAKE call. 0, or -1 with
 * the message in op_error(). */
int autograd_record_index(const Tensor *t, const IndexItem *idx, int n, Tensor *res);

/* Whether t is on the active tape (a leaf or a recorded result). */
bool autograd_tracked(const Tensor *t);

/* The built-ins (builtins.c binds them): grad(f) / value_and_grad(f) make a function;
 * calling it runs autograd_call. check_grad compares with central differences. */
Value autograd_call(Interp *I, Value f, CallArgs *a, bool with_value);
Value autograd_check_grad(Interp *I, Value f, Value x, double eps);

#endif
