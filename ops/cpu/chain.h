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
 * one value (in the chain's dtype) broadcast to every element, or, over rows of `row`
 * elements, a row vector that every row reads (CHAIN_ROW: element i reads data[i % row]) or
 * one value per row (CHAIN_COL: data[i / row]), a fused group's bias or per-row mean. A chain
 * with a CHAIN_ROW or CHAIN_COL operand cuts its blocks at row ends, so within a block such
 * an operand is a plain array or a single value and every kernel runs as for the others.
 * Arrays and values say their dtype and how many elements they hold: cpu_chain_run checks
 * them against the chain's dtype and range before it reads anything (the steps may come
 * from a file). */
typedef enum { CHAIN_TEMP, CHAIN_ARRAY, CHAIN_SCALAR, CHAIN_ROW, CHAIN_COL } ChainArgKind;
typedef struct {
    ChainArgKind kind;
    int temp;         /* CHAIN_TEMP */
    const void *data; /* all but CHAIN_TEMP */
    DType dtype;      /* all but CHAIN_TEMP */
    int64_t n;        /* CHAIN_ARRAY, CHAIN_ROW, CHAIN_COL: elements at data */
    int64_t row;      /* CHAIN_ROW, CHAIN_COL: elements per row of the chain */
} ChainArg;

/* The first element of operand a in the block at element `at`, and its stride (0: one
 * value). For CHAIN_ROW and CHAIN_COL the block lies within one row (cpu_chain_run). */
static inline const char *chain_arg_at(const ChainArg *a, char *scratch, size_t esz, int64_t at,
                                       int64_t *stride) {
    *stride = a->kind != CHAIN_SCALAR && a->kind != CHAIN_COL;
    switch (a->kind) {
    case CHAIN_TEMP: return scratch + (size_t)a->temp * CHAIN_BYTES;
    case CHAIN_ARRAY: return (const char *)a->data + at * (int64_t)esz;
    case CHAIN_ROW: return (const char *)a->data + (at % a->row) * (int64_t)esz;
    case CHAIN_COL: return (const char *)a->data + (at / a->row) * (int64_t)esz;
    default: return a->data;
    }
}

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
/* cpu_chain_run without its check, for a caller that runs the same steps many times over
 * ranges it has checked once (cpu_chain_check over [begin, end) with operands at least as
 * long; moving an array's data pointer along keeps it checked when the caller's arrays are
 * that long there): a row group (vm/run/exec_rows.c), band after band. */
int cpu_chain_blocks(const ChainStep *steps, int n, DType dt, int64_t begin, int64_t end,
                     void *scratch);


/* One step over the block of len elements starting at element `at`, through the op's
 * kernel (chain512.c's way for the steps it has no vector code for). */
int cpu_chain_step(const ChainStep *s, DType dt, int64_t at, int64_t len, void *scratch);
/* chain512.c: every step over one block of len <= chain_block(dt) elements starting at element
 * `at`, with AVX-512F; only called when the processor has it. */
int cpu_chain_block512(const ChainStep *steps, int n, DType dt, int64_t at, int64_t len,
                       void *scratch);

#endif
