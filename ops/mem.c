/* mem.c - allocation through the current context's hook, with one failure policy (mem.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "ctx.h"
#include "mem.h"

/* Every block has a MemBlock header (ctx.h) in front: the links of its context's list of
 * live blocks, so freeing a context frees what an out-of-memory jump left behind; what the
 * hook allocated, so the hook is told the old size; and how far the block starts into it
 * (the header's size for ordinary blocks, more for aligned ones). 32 bytes keep the block
 * aligned as malloc's. */
#define HEADER sizeof(MemBlock)
_Static_assert(sizeof(MemBlock) % 16 == 0, "the header keeps blocks 16-byte aligned");

static MemBlock *header_of(void *p) { return (MemBlock *)((char *)p - HEADER); }

static void link_block(OpsCtx *c, MemBlock *h, size_t total, size_t offset) {
    h->total = total;
    h->offset = offset;
    h->prev = &c->blocks;
    h->next = c->blocks.next;
    c->blocks.next->prev = h;
    c->blocks.next = h;
}

static void unlink_block(MemBlock *h) {
    h->prev->next = h->next;
    h->next->prev = h->prev;
}

/* The hook, unless out-of-memory injection says this allocation fails. */
static void *hook(OpsCtx *c, void *ptr, size_t osize, size_t nsize) {
    if (c->fail_countdown > 0 && --c->fail_countdown == 0) return NULL;
    return c->alloc(c->alloc_ud, ptr, osize, nsize);
}

_Noreturn void mem_throw_oom(void) {
    OpsCtx *c = ops_ctx();
    if (c->on_oom) longjmp(*c->on_oom, 1);
    abort();
}

/* n bytes after a header, or NULL (also when n + the header overflows). */
static void *block_alloc(OpsCtx *c, size_t n) {
    if (n > SIZE_MAX - HEADER) return NULL;
    MemBlock *h = hook(c, NULL, 0, n + HEADER);
    if (!h) return NULL;
    link_block(c, h, n + HEADER, HEADER);
    return h + 1;
}

/* The block moves as a whole, header included: its neighbours are pointed at the new place. */
static void *block_realloc(OpsCtx *c, void *p, size_t n) {
    if (!p) return block_alloc(c, n);
    MemBlock *h = header_of(p);
    if (h->offset != HEADER || n > SIZE_MAX - HEADER) return NULL;   /* aligned blocks do not move */
    MemBlock *m = hook(c, h, h->total, n + HEADER);
    if (!m) return NULL;
    m->total = n + HEADER;
    m->prev->next = m;
    m->next->prev = m;
    return m + 1;
}

void *mem_alloc(size_t n) {
    void *p = block_alloc(ops_ctx(), n);
    if (!p) mem_throw_oom();
    return p;
}

void *mem_calloc(size_t n, size_t sz) {
    size_t bytes;
    if (__builtin_mul_overflow(n, sz, &bytes)) mem_throw_oom();
    void *p = mem_alloc(bytes);
    memset(p, 0, bytes);
    return p;
}

void *mem_realloc(void *p, size_t n) {
    void *q = block_realloc(ops_ctx(), p, n);
    if (!q) mem_throw_oom();
    return q;
}

void *mem_try_alloc(size_t n) { return block_alloc(ops_ctx(), n); }

void *mem_try_realloc(void *p, size_t n) { return block_realloc(ops_ctx(), p, n); }

void *mem_try_calloc(size_t n, size_t sz) {
    size_t bytes;
    void *p = __builtin_mul_overflow(n, sz, &bytes) ? NULL : mem_try_alloc(bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

void *mem_try_alloc_aligned(size_t n, size_t align) {
    OpsCtx *c = ops_ctx();
    if (n > SIZE_MAX - HEADER - align) return NULL;
    char *raw = hook(c, NULL, 0, n + HEADER + align);
    if (!raw) return NULL;
    uintptr_t at = ((uintptr_t)raw + HEADER + align - 1) & ~(uintptr_t)(align - 1);
    char *p = (char *)at;
    link_block(c, header_of(p), n + HEADER + align, (size_t)(p - raw));
    return p;
}

char *mem_strndup(const char *s, size_t n) {
    char *p = mem_alloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static void block_free(OpsCtx *c, MemBlock *h) {
    unlink_block(h);
    c->alloc(c->alloc_ud, (char *)(h + 1) - h->offset, h->total, 0);
}

void mem_free(void *p) {
    if (p) block_free(ops_ctx(), header_of(p));
}

void mem_free_all(OpsCtx *c) {
    while (c->blocks.next != &c->blocks) block_free(c, c->blocks.next);
}
