/* jit.h - the native tier: a fused group (FUSED) that has run a few times becomes one generated
 * C loop over its elements, values in registers, compiled by the system C compiler in the
 * background and loaded with dlopen; the CPU executor (exec_cpu.c) switches to it when it is
 * ready. Each element goes through the very vector instructions and SLEEF functions the VM's
 * chain (ops/cpu/chain.h) uses, in the same order, so the bits are the VM's and eager's.
 *
 * TSL_JIT=0 turns it off; TSL_JIT=force compiles a group on its first run, synchronously (the
 * tests); TSL_JIT_CC names the compiler (default cc). Without AVX-512F or a working compiler
 * the VM runs every group (TSL_EXPLAIN says why). */
#ifndef TSL_JIT_H
#define TSL_JIT_H
#include <stdint.h>
#include "vm.h"

struct ChainStep;   /* ops/cpu/chain.h: what the CPU executor builds a group's steps as */

/* A group's native code: elements [begin, end) of the steps the VM built, whose operands are
 * p[2k] and p[2k + 1] (step k's inputs: an array's element 0, or the one value of a scalar)
 * and p[2n + k] (its output array, unused for a temporary); api is jit_api(dt). 0, or a
 * kernel's non-zero status. */
typedef void (*JitAnyFn)(void);
typedef int (*JitFusedFn)(const void *const *p, int64_t begin, int64_t end, const JitAnyFn *api);

/* The native code of FUSED instruction `in` (whose n steps in dtype dt the VM has just built
 * as cs), or NULL when the VM runs it this time. Counts the run; on the run that makes the
 * group hot it generates the C and starts compiling it (in the background, or right here
 * under TSL_JIT=force). Says under TSL_EXPLAIN, once per instruction, which tier runs it. */
JitFusedFn jit_fused(Interp *I, Ins *in, const struct ChainStep *cs, int n, DType dt);
/* The native code of instruction `in` once it is ready, without counting a run; else NULL,
 * with *ask set when the tier is on and `in` has no code yet (then jit_fused, given its
 * steps, counts the run and compiles them when they are hot). For callers that build their
 * steps only when asked (a matmul's epilogue of one chunk, exec_cpu.c). */
JitFusedFn jit_ready(Interp *I, Ins *in, bool *ask);
/* The most elementwise phases of a row group the tier compiles (functions of one object). */
#define JIT_PHASES 16
/* A row group's (exec_rows.c) nph elementwise phases: phase i's steps cs[i][0, n[i]), a
 * fused group's steps over one row (a row vector as an array of the row's elements, a value
 * per row as a number). Counts the run and compiles them as one object when hot, as
 * jit_fused does; true when their code is ready: fns[i] runs phase i. */
bool jit_phases(Interp *I, Ins *in, struct ChainStep *const *cs, const int *n, int nph, DType dt, JitFusedFn *fns);
/* jit_phases once the code is ready, without counting a run or needing the steps: true with
 * fns filled, else false with *ask set when jit_phases should be given the steps. */
bool jit_phases_ready(Interp *I, Ins *in, JitFusedFn *fns, int nph, bool *ask);
/* The functions generated code calls, for dtype dt (f32 or f64). */
const JitAnyFn *jit_api(DType dt);
/* Which tier runs FUSED instruction in, for dis: "native", "vm (native compiling)",
 * "vm (no native code: why)", or NULL before the tier looked at it (the VM runs it). */
const char *jit_tier(const Ins *in, char *buf, size_t n);

#endif
