/* ctx.c - creating, entering and freeing the ops layer's state (see ctx.h). */
#include <stdlib.h>
#include <string.h>
#include "ctx.h"
#include "mem.h"

_Thread_local OpsCtx *ops_ctx_cur;

void *ops_default_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud;
    (void)osize;
    if (nsize == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, nsize);
}

static void ctx_init(OpsCtx *c, TslAllocFn f, void *ud) {
    memset(c, 0, sizeof *c);
    c->alloc = f;
    c->alloc_ud = ud;
    c->fail_countdown = -1;
    c->blocks.prev = c->blocks.next = &c->blocks;
    c->max_tensor_bytes = (int64_t)1 << 30;
    c->print = (PrintOptions){ 8, 1000, 3, 75 };
}

/* Out-of-memory injection for the tests: with TSL_FAIL_ALLOC=N the Nth allocation of each
 * context made by ops_ctx_new fails (its own allocation is the first). */
static long fail_setting(void) {
    const char *s = getenv("TSL_FAIL_ALLOC");
    return s ? atol(s) : -1;
}

OpsCtx *ops_ctx_new_with_alloc(TslAllocFn f, void *ud) {
    if (!f) f = ops_default_alloc;
    long countdown = fail_setting();
    if (countdown == 1) return NULL;
    OpsCtx *c = f(ud, NULL, 0, sizeof *c);
    if (!c) return NULL;
    ctx_init(c, f, ud);
    c->fail_countdown = countdown > 1 ? countdown - 1 : -1;
    return c;
}

OpsCtx *ops_ctx_new(void) { return ops_ctx_new_with_alloc(NULL, NULL); }

/* The cached tensors are freed with c current, so their bytes go back through c's hook. */
void ops_ctx_free(OpsCtx *c) {
    if (!c) return;
    OpsCtx *prev = ops_ctx_enter(c);
    cpu_reduce_cache_free();
    mem_free_all(c);
    ops_ctx_leave(prev == c ? NULL : prev);
    c->alloc(c->alloc_ud, c, sizeof *c, 0);
}

OpsCtx *ops_ctx_enter(OpsCtx *c) {
    OpsCtx *prev = ops_ctx_cur;
    ops_ctx_cur = c;
    return prev;
}

void ops_ctx_leave(OpsCtx *prev) { ops_ctx_cur = prev; }

int ops_ctx_run(OpsCtx *c, int (*body)(void *ud), void *ud) {
    OpsCtx *prev = ops_ctx_enter(c);
    jmp_buf here, *outer = c->on_oom;
    volatile int rc;
    c->on_oom = &here;
    if (setjmp(here) == 0) rc = body(ud);
    else {
        op_failk(ERRK_MEMORY, "out of memory");
        rc = -1;
    }
    c->on_oom = outer;
    ops_ctx_leave(prev);
    return rc;
}

/* The context of a thread that entered none. It lives in thread-local storage: no two
 * threads share it, and there is nothing to free but its caches (tensors, freed when the
 * thread's last user calls cpu_reduce_cache_free; at exit the leak checker sees them
 * through the thread's storage). */
static _Thread_local OpsCtx thread_default;
static _Thread_local bool thread_default_ready;

/* A pool worker's context: the hook refuses, so a part function that allocates aborts
 * (mem_alloc outside a protected call) instead of touching a state's memory. */
static void *refuse_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    (void)ud; (void)ptr; (void)osize; (void)nsize;
    return NULL;
}

void ops_ctx_init_refusing(OpsCtx *c) { ctx_init(c, refuse_alloc, NULL); }

OpsCtx *ops_ctx_thread_default(void) {
    if (!thread_default_ready) {
        ctx_init(&thread_default, ops_default_alloc, NULL);
        thread_default_ready = true;
    }
    return &thread_default;
}
