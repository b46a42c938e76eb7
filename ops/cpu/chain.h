/* chain.h - a chain of elementwise steps (a static fused group) evaluated block by block:
 * each block of chain_block(dt) elements goes through every step while it is in L1, instead of
 * one op at a time over the whole tensor.
 *
 * Each step gives every element the bits the op's own kernel (cpu_unary, cpu_binary: what eager
 * runs) gives it. On a processor with AVX-512F, + - * /, maximum, minimum, neg, abs, relu,
 * sqrt and the SLEEF functions run as chain512.c's 16-wide (f32) or 8-wide (f64) vector code,
 * the very code those kernels call there, and two arithmetic steps that cpu_chain_plan paired
 * run as one pass; every other step, and every step without AVX-512F, calls the op's kernel
 * on the block. Elements never depend on their neighbours or on the block they fall in, so
 * any split of [begin, end) gives the same bits (fused groups over the thread pool). */
#ifndef TSL_CHAIN_H
#define TSL_CHAIN_H
#include <stdbool.h>
#include <stdint.h>
#include "tops.h"
#include "cpu.h"

/* Bytes per block of a temporary: 512 f32 or 256 f64 elements a block keeps a chain's
 * temporaries in L1 (tanh-GELU stores 5 of its 9 steps' results: 10 KB) while the per-step
 * work is long enough to pay for choosing the step. Measured on tanh-GELU over 4M f32, one
 * thread, the chain alone (minimum thread CPU time of 21 runs): 2 KB 3.3 ms, 4 KB 4.1 ms,
 * 8 KB 5.8 ms, 1 KB slower too; giving a dead temporary's block to a later step (2 blocks
 * instead of 5) 3.6 ms; prefetching the next blocks of the arrays slower at every distance. */
#ifndef CHAIN_BYTES
#define CHAIN_BYTES 2048
#endif
static inline int64_t chain_block(DType dt) { return CHAIN_BYTES / (int64_t)dtype_size(dt); }

/* An operand: a temporary of the chain, a contiguous array (element 0 of the whole range),
 * or one value (in the chain's dtype) broadcast to every element. An array and a value say
 * their dtype and an array how many elements it holds: cpu_chain_run checks them against
 * the chain's dtype and range before it reads anything (the steps may come from a file). */
typedef enum { CHAIN_TEMP, CHAIN_ARRAY, CHAIN_SCALAR } ChainArgKind;
typedef struct {
    ChainArgKind kind;
    int temp;         /* CHAIN_TEMP */
    const void *data; /* CHAIN_ARRAY, CHAIN_SCALAR */
    DType dtype;      /* CHAIN_ARRAY, CHAIN_SCALAR */
    int64_t n;        /* CHAIN_ARRAY: elements at data */
} ChainArg;

/* One step: result := op(in[0]) or op(in[0], in[1]), into temporary `temp` (in [0, n) for a
 * chain of n steps; one step writes each), or into the array `out` (element 0 of the whole
 * range; out_dtype elements, out_n of them) when temp < 0. */
typedef struct ChainStep {
    OpCode op;
    int nin;
    ChainArg in[2];
    int temp;
    void *out;
    DType out_dtype;
    int64_t out_n;
    bool pair_next;  /* cpu_chain_plan: computed with the next step in one pass */
    bool fetch_next; /* cpu_chain_plan: asks for the next block's lines while it computes */
} ChainStep;

/* Marks the steps the AVX-512 path computes together with the next one: both + - * or / of
 * two operands, the first's result a temporary that only the next step reads, once; and the
 * first SLEEF step, which asks for the next block's lines of the chain's first input and of
 * its result while it computes. Call it once the steps are built; neither changes any bits
 * (chain512.c). Marks nothing without AVX-512F. */
void cpu_chain_plan(ChainStep *steps, int n);
/* chain512.c: whether a one-operand op is a SLEEF function there (only with AVX-512F). */
bool cpu_chain_math_op(OpCode op);

/* chain512.c: the one-vector SLEEF function (math512.h's avx512_<name>_16 or _8) a step of a
 * one-operand op computes with in dtype dt, or NULL when it has none: the native tier
 * (vm/run/jit.c) calls the very function. */
typedef void (*ChainAnyFn)(void);
ChainAnyFn cpu_chain_lane_fn(OpCode op, DType dt);

/* A broadcast operand of the chain (a fused group's row vector or value per row): before a
 * block runs, its values for the block's elements are copied into temporary `temp` (after
 * the steps' own), which steps then read as CHAIN_TEMP, so every step sees plain arrays and
 * computes eager's bits (the same op on the same values). Element i of the chain reads
 * data[i % row] (CHAIN_BCAST_ROW: `row` values) or data[i / row] (CHAIN_BCAST_COL: one per
 * row of `row` elements); data holds n elements of dtype. */
typedef enum { CHAIN_BCAST_ROW, CHAIN_BCAST_COL } ChainBcastKind;
typedef struct {
    ChainBcastKind kind;
    int temp;
    const void *data;
    DType dtype;
    int64_t n, row;
} ChainBcast;

/* The check cpu_chain_run makes before a block runs (steps that do not fit the chain's dtype
 * and range: -1 with the error set), for another evaluator of the same steps (the native
 * tier). */
int cpu_chain_check(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end);

/* Elements [begin, end) of the chain's arrays through its n steps, in dtype dt (f32 or f64).
 * scratch holds n * CHAIN_BYTES bytes for the temporaries. Allocates nothing (safe on a pool
 * worker): 0, a kernel's non-zero status, or -1 with the error set when the steps do not
 * fit the chain (a dtype other than f32 or f64, an array of another dtype or shorter than
 * end, a temporary outside [0, n), a step of other than 1 or 2 operands): nothing is read
 * or written then. */
int cpu_chain_run(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end,
                  void *scratch);
/* cpu_chain_run with nb broadcast operands, expanded into temporaries n .. n + nb - 1 before
 * each block (scratch then holds (n + nb) * CHAIN_BYTES bytes). Each is checked too: its
 * dtype the chain's, its temporary in range, and enough elements for [begin, end). */
int cpu_chain_run_bcast(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end,
                        void *scratch, const ChainBcast *bc, int nb);

/* One step over the block of len elements starting at element `at`, through the op's
 * kernel (chain512.c's way for the steps it has no vector code for). */
int cpu_chain_step(const ChainStep *s, DType dt, int64_t at, int64_t len, void *scratch);
/* chain512.c: every step over one block of len <= chain_block(dt) elements starting at element
 * `at`, with AVX-512F; only called when the processor has it. */
int cpu_chain_block512(const ChainStep *steps, int n, DType dt, int64_t at, int64_t len,
                       void *scratch);

#endif
