/* mem.h - the one allocator every module goes through.
 *
 * Every block comes from the current ops context's hook (ops/ctx.h, Lua's lua_Alloc), which
 * is told the old size: a 32-byte header in front of each block keeps its size, so
 * mem_free needs none, and links it into its context's list of live blocks, so freeing
 * the context frees whatever is left (what an out-of-memory jump stranded). A block must be
 * freed under a context with the same hook as the one it was allocated under (each state's
 * entry points make its own current), and before its context is freed.
 *
 * Small allocations (objects, tokens, AST) never return NULL: a failure raises "out of
 * memory" in the current state, a longjmp to its protected entry point (ctx->on_oom; Lua's
 * luaD_throw), which returns the error status. Outside every protected call a failure
 * aborts: library code ran where no caller could receive the error. Tensor data uses
 * mem_try_*, which return NULL so the caller raises a TSL error instead. TSL_FAIL_ALLOC=N
 * makes the Nth allocation of a state fail (out-of-memory injection for the tests). */
#ifndef TSL_MEM_H
#define TSL_MEM_H
#include <stddef.h>

void *mem_alloc(size_t n);              /* never NULL */
void *mem_calloc(size_t n, size_t sz);  /* never NULL, zeroed */
void *mem_realloc(void *p, size_t n);   /* never NULL */
void *mem_try_alloc(size_t n);          /* NULL when out of memory */
void *mem_try_realloc(void *p, size_t n);   /* NULL when out of memory (p unchanged) */
void *mem_try_calloc(size_t n, size_t sz);  /* zeroed; NULL when out of memory */
/* n bytes at an address that is a multiple of align (a power of two, at least 16); NULL
 * when out of memory. Freed with mem_free like any other block. */
void *mem_try_alloc_aligned(size_t n, size_t align);
char *mem_strndup(const char *s, size_t n);
void mem_free(void *p);
struct OpsCtx;
/* Frees every block still allocated under c (ops_ctx_free calls it). */
void mem_free_all(struct OpsCtx *c);
/* Raises "out of memory" in the current state (the longjmp mem_alloc does on failure). */
_Noreturn void mem_throw_oom(void);

#endif
