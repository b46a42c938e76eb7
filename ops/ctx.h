/* ctx.h - the ops layer's state: everything kernels and tensors used to keep in globals.
 *
 * An OpsCtx holds the allocation hook, the op error message, the random generator, the
 * tensor accounting and limits, and the kernels' caches. Nothing the kernels touch is
 * shared between two OpsCtx, so two interpreters (or several model sessions on several
 * threads) never see each other's state.
 *
 * Ops code reaches the current one through ops_ctx(): a thread-local pointer, set by
 * ops_ctx_enter at the entry points of whoever owns the context (each Interp owns one;
 * a model session owns one) and restored by ops_ctx_leave, so entering nests and costs two
 * stores. A thread that entered nothing uses its own default context (malloc, default
 * limits, no out-of-memory injection): unit tests and tools that call ops directly. */
#ifndef TSL_CTX_H
#define TSL_CTX_H
#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tensor.h"
#include "tops.h"

/* The allocation hook, Lua's lua_Alloc: ptr NULL allocates nsize bytes; nsize 0 frees ptr
 * (whose size was osize) and returns NULL; otherwise resizes ptr from osize to nsize.
 * NULL when it cannot (the block is then unchanged). Memory must be aligned as malloc's. */
typedef void *(*TslAllocFn)(void *ud, void *ptr, size_t osize, size_t nsize);

typedef struct OpsCtx OpsCtx;

/* In front of every block (ops/mem.c): the context's list of live blocks, what the hook
 * allocated (so it can be told the old size) and where the block starts in it. */
typedef struct MemBlock {
    struct MemBlock *prev, *next;
    size_t total;
    size_t offset;
} MemBlock;

#define OPS_PERM_CACHE 4

struct OpsCtx {
    /* allocation (ops/mem.c) */
    TslAllocFn alloc;
    void *alloc_ud;
    long fail_countdown;        /* TSL_FAIL_ALLOC=N: the Nth allocation fails; -1 off */
    MemBlock blocks;            /* sentinel of every live block: ops_ctx_free frees what is left */
    jmp_buf *on_oom;            /* where a failed mem_alloc jumps (a protected call); NULL aborts */
    /* the op error message (op_fail / op_error) */
    char err[512];
    int err_kind;               /* its ErrKind */
    /* the random generator (ops/cpu/random.c): seed and counter of the Philox stream */
    uint64_t rng_key, rng_counter;
    /* tensor accounting and limits (ops/tensor.c) */
    int64_t max_tensor_bytes;   /* --max-tensor-bytes */
    int64_t max_live;           /* --max-memory: tensors and objects together; 0 none */
    int64_t tensor_live_bytes;
    int64_t obj_live_bytes;     /* strings, lists, dicts, closures (lang/value.c counts them) */
    int64_t tensor_alloc_count; /* tensors allocated so far (tests count steady-state allocations) */
    int64_t tensor_peak_bytes;  /* the most tensor memory live at once */
    /* called when --max-memory would fail an allocation: frees memory the program cannot
     * reach (kept buffers of compiled code) and returns how many bytes it released */
    int64_t (*reclaim)(void *ud);
    void *reclaim_ud;
    /* reductions' permuted copies, reused for the same shape (ops/cpu/reduce.c) */
    Tensor *perm_cache[OPS_PERM_CACHE];
    int perm_next;
    /* print options (print_options() changes them) */
    PrintOptions print;
    /* where ops with no tensor operand (zeros, arange, rand...) put their results:
     * device("gpu"), --device gpu, :device gpu */
    Device default_device;
};

/* The default hook: realloc and free. */
void *ops_default_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

/* A new context allocated through f (NULL: the default hook); NULL when that fails. It reads
 * TSL_FAIL_ALLOC for out-of-memory injection. */
OpsCtx *ops_ctx_new_with_alloc(TslAllocFn f, void *ud);
OpsCtx *ops_ctx_new(void);
/* Releases the caches, every block still allocated under c (what an out-of-memory jump
 * stranded), then the context itself (through its own hook). */
void ops_ctx_free(OpsCtx *c);
/* Makes c current on this thread; returns the previous one, for ops_ctx_leave. */
OpsCtx *ops_ctx_enter(OpsCtx *c);
void ops_ctx_leave(OpsCtx *prev);

/* Runs body(ud) with c current and protected: a small allocation that fails inside
 * (mem_alloc) jumps back here and -1 is returned with "out of memory" in op_error();
 * otherwise body's result. For a host of the ops layer without an interpreter (a model
 * session): what the jump stranded is freed with c. */
int ops_ctx_run(OpsCtx *c, int (*body)(void *ud), void *ud);

/* Initialises *c (the caller's storage) as a context whose hook refuses every allocation:
 * a thread pool worker's (ops/pool.c), where op_fail may write but nothing may allocate. */
void ops_ctx_init_refusing(OpsCtx *c);

extern _Thread_local OpsCtx *ops_ctx_cur;
OpsCtx *ops_ctx_thread_default(void);
static inline OpsCtx *ops_ctx(void) {
    OpsCtx *c = ops_ctx_cur;
    return c ? c : ops_ctx_thread_default();
}

#endif
