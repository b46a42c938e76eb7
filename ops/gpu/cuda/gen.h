/* gen.h - CUDA C source for the GPU's kernels, generated from the op table.
 *
 * Every elementwise op of ops.def has one row in gen.c's table: the element function as a
 * CUDA expression over x (and y) in the compute dtype, and the dtypes it is defined for.
 * Eager elementwise kernels, fused chains of the static VM and the hand-written families
 * (reductions, softmax, astype, strided copies, Philox) all come from here, so eager and
 * static code on the GPU run the same element functions. The output is plain source:
 * ops/gpu/cuda/nvrtc.c compiles it (`--fmad=false`, never fast math); tests/gpu/ptx_check.c
 * compiles every kernel the generator can produce, on a machine without a GPU.
 *
 * Pure C with no CUDA dependency: the unit tests link it to check the table. */
#ifndef TSL_CUDA_GEN_H
#define TSL_CUDA_GEN_H
#include <stdbool.h>
#include <stddef.h>
#include "opcall.h"

/* One step of a fused chain, as the VM's FusedStep: t[dst] := op(a, b). Operands >= 0 are
 * earlier temporaries; -(k+1) is input k (a tensor of the group's shape, or a number when
 * the kernel's in[k] is NULL). b is GEN_NONE for a unary step. */
#define GEN_NONE (-1000000)
typedef struct {
    OpCode op;
    int dst, a, b;
} GenStep;

/* What every generated module starts with: dtype names, conversions, element helpers and
 * the launch-argument structs (layouts shared with ops/gpu/cuda/plugin.h). */
const char *gen_prelude(void);

/* The element function of op: NULL when op is not elementwise (the check in the unit
 * tests: every K_UNARY, K_BINARY and K_COMPARE op has one). */
const char *gen_ew_expr(OpCode op);
/* Whether op's element function is defined with compute dtype ct (the CPU's coverage). */
bool gen_ew_has(OpCode op, DType ct);
/* The result dtype of op computed in ct (bool for comparisons and predicates). */
DType gen_ew_result(OpCode op, DType ct);

/* The kernel for one elementwise launch (op in ct, form 'c' or 's'): its name in name[]
 * and its source (without the prelude) in src[]. -1 if the buffers are too small or the
 * generator has no such kernel. */
int gen_ew_kernel(OpCode op, DType ct, char form, char *name, size_t nn, char *src, size_t ns);
/* One kernel for a whole fused chain over ninputs inputs, all in ct, contiguous (or one
 * element: inner stride 0); the last step's temporary is the result. */
int gen_fused_kernel(const GenStep *steps, int nsteps, int ninputs, DType ct, char *name, size_t nn, char *src,
                     size_t ns);
/* The hand-written families (reductions, softmax, astype, strided copy, Philox), with
 * extern "C" entry points named as gen_family_name() says. */
const char *gen_families(void);
/* The entry point of a family kernel: "tsl_reduce_sum_f32", "tsl_astype_f32_i64", ... */
void gen_family_name(char *buf, size_t n, const char *family, const char *a, const char *b);

/* "b8", "i64", "f32", "f64": the suffix kernel names use; "unsigned char", ... in source */
const char *gen_dtype_suffix(DType dt);
const char *gen_dtype_ctype(DType dt);

#endif
