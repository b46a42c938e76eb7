/* einsum.h - NumPy's einsum as a plan of ops (ops/einsum.c), which the eager built-in
 * (lang/tbuiltins.c) runs and static code (vm/compile/cbuiltins.c) emits: the same ops in
 * the same order in both modes, each with its own gradient rule, GPU kernel and export. */
#ifndef TSL_EINSUM_H
#define TSL_EINSUM_H
#include "tops.h"

#define EIN_MAX_OPERANDS 16
#define EIN_MAX_STEPS 160
#define EIN_ELL_MAX 32          /* "..." axes are the labels 1..32, below every letter */

/* One op of the plan: its operands are slots (0..n-1 the einsum's operands, n + i the
 * result of step i; -1 none). */
typedef struct {
    OpCode op;
    int in[2], nin;
    OpAttrs at;
} EinStep;

typedef struct {
    int nsteps, nslots;
    EinStep step[EIN_MAX_STEPS];
    int result;                 /* the slot holding the einsum's result (an operand when no op is needed) */
} EinPlan;

/* Plans einsum(subs, operands) for n operands of these shapes and dtypes: 0, or -1 with
 * the message in op_error() (bad subscripts, lengths that disagree). */
int einsum_plan(const char *subs, int n, const Shape *shapes, const DType *dts, EinPlan *p);

#endif
