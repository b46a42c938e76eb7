/* pool.h - the process's thread pool: one per process, started on first use, shared by every
 * interpreter and model session.
 *
 * Work is split by a fixed partition: n items in parts of a fixed block size, part p covering
 * [p * block, min(n, (p + 1) * block)). The parts depend on n and the block only, never on the
 * number of threads, and each part does the same arithmetic whichever thread runs it, so a
 * result has the same bits for every thread count (--threads, TSL_THREADS).
 *
 * Workers compute on the buffers they are given and nothing else: a part function must not
 * allocate (mem_alloc would abort there: a worker's context refuses every allocation) nor touch
 * an interpreter. A part that fails returns non-zero with op_fail's message; the message of the
 * lowest failing part (the one a serial run stops at) comes back to the caller's op_error().
 * One job runs at a time: a caller that finds the pool busy (another state's thread, or a part
 * function that submits again) runs its parts itself, in order, with the same results. */
#ifndef TSL_POOL_H
#define TSL_POOL_H
#include <stdbool.h>
#include <stdint.h>

#define POOL_MAX_THREADS 64
/* A job of less work than this runs on the calling thread alone: waking a worker (tens of
 * microseconds) costs more than it saves (measured: docs/internals.md, "Threads"). Work is
 * counted in element-operations: an add of n elements is n, a SLEEF function's n elements
 * 4n (POOL_MATH_COST), a fused group's n elements n times its steps. */
#define POOL_MIN_WORK ((int64_t)1 << 20)
#define POOL_MATH_COST 4
/* The elementwise block: 16384 elements, 64 KiB of f32 (a part's operands stay in L2). */
#define POOL_BLOCK ((int64_t)1 << 14)

/* Runs part `part` of a job with `slot` the running thread's index in [0, width): a scratch
 * area per slot is the caller's to provide. 0, or non-zero with op_fail's message. */
typedef int (*PoolPartFn)(void *ud, int64_t part, int slot);

/* Sets the number of threads jobs use from now on (the caller included): n >= 1, capped at
 * POOL_MAX_THREADS; 0 goes back to the default (TSL_THREADS, else the cores). 1 never starts
 * a thread. Process-wide. */
void pool_set_threads(int n);
int pool_threads(void);
/* How many parts a job of n items in blocks of `block` has. */
static inline int64_t pool_parts(int64_t n, int64_t block) { return n <= 0 ? 0 : (n - 1) / block + 1; }
/* The threads a job of `parts` parts would use: 1 when it is small (work < POOL_MIN_WORK)
 * or the pool has one thread; never more than the parts. Size per-slot scratch by it. */
int pool_width(int64_t parts, int64_t work);
/* Runs fn on every part 0..parts-1 over at most `width` threads (pool_width's answer; 1: on
 * this thread, in order) and waits for them. 0, or -1 with the lowest failing part's message
 * in op_error(). */
int pool_run(int64_t parts, int width, PoolPartFn fn, void *ud);

/* Subnormal flushing (set_flush_denormal): on, float results that would be subnormal are zero
 * and subnormal operands read as zero (FTZ and DAZ in x86's MXCSR); off (the default), IEEE
 * arithmetic. Process-wide, like the thread count: the calling thread changes at once, every
 * pool worker before its next part, and any other thread before it runs a pool job, so a
 * result has the same bits on every thread. Returns false, changing nothing, where the CPU
 * has no such mode (not x86). */
bool pool_set_flush_denormal(bool on);
bool pool_flush_denormal(void);

#endif
