/* mem.h - the one allocator every module goes through.
 *
 * Small allocations (objects, tokens, AST) that fail end the process with a clean
 * "out of memory" message; tensor data uses mem_try_alloc, which returns NULL so the
 * caller can raise a TSL error instead. TSL_FAIL_ALLOC=N makes the Nth allocation through
 * this file fail (out-of-memory injection for the tests). */
#ifndef TSL_MEM_H
#define TSL_MEM_H
#include <stddef.h>

void *mem_alloc(size_t n);              /* never NULL */
void *mem_calloc(size_t n, size_t sz);  /* never NULL, zeroed */
void *mem_realloc(void *p, size_t n);   /* never NULL */
void *mem_try_alloc(size_t n);          /* NULL when out of memory */
char *mem_strndup(const char *s, size_t n);
void mem_free(void *p);

#endif
