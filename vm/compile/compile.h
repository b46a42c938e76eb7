/* compile.h - from the AST of a static block or static fn to a Graph (vm/compile/compile.c). */
#ifndef TSL_COMPILE_H
#define TSL_COMPILE_H
#include "ir.h"

typedef enum {
    COMPILE_OK,
    COMPILE_ERROR,         /* a TSL error is pending in the interpreter (report it) */
    COMPILE_UNSUPPORTED,   /* the code uses something the compiler does not handle yet: run eagerly */
    COMPILE_REFUSED,       /* a TSL error is pending that only static code has (spec section 6: recursion
                            * whose depth is decided at run time): eager code would not raise it, so
                            * nothing runs eagerly in its place; the error is the program's */
} CompileStatus;

/* Compiles `block` (an AST_STATIC's block) against the live frame f, whose current values
 * decide input shapes and guards. */
CompileStatus compile_block(Interp *I, Frame *f, Node *block, Graph **out, char *why, size_t whylen);
/* Compiles a static fn for its parameter values (one per parameter, already bound from
 * positional and keyword arguments; UNDEF where the default applies, compiled in). dyn: NULL,
 * or per parameter a mask of the axes of its tensor that take any size (export's dynamic=:
 * run-time dimensions, vm/compile/cshape.c). */
CompileStatus compile_fn(Interp *I, ObjClosure *fn, Value *params, const uint32_t *dyn, Graph **out, char *why,
                         size_t whylen);

/* Shape inference over run-time dimensions (SHAPE_RT) with stand-in sizes, without a compiler
 * (vm/compile/cshape.c; the graph file verifier's). cs_infer_runtime: 0; 1 when a result's
 * shape needs the run-time size; -1 when the op's rule fails (op_error). cs_index_runtime: 0,
 * or -1 when the index fails. */
int cs_infer_runtime(OpCall *call, Shape *so, DType *dt);
int cs_index_runtime(const Shape *t, const IndexItem *items, int n, Shape *so);

/* The compile budget in time (docs/static.md) is the interpreter's I->compile_budget_ms
 * (default 2000): code whose compilation runs longer runs eagerly, like code past the
 * instruction and inlining budgets. */

#endif
