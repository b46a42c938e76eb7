/* mem.c - allocation with a single failure policy (see mem.h). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mem.h"

static long fail_countdown = -2;  /* -2: not read yet; -1: disabled */

/* Out-of-memory injection: with TSL_FAIL_ALLOC=N the Nth allocation through this file fails. */
static bool inject_failure(void) {
    if (fail_countdown == -2) {
        const char *s = getenv("TSL_FAIL_ALLOC");
        fail_countdown = s ? atol(s) : -1;
    }
    return fail_countdown > 0 && --fail_countdown == 0;
}

static void out_of_memory(void) {
    fputs("tsl: error: out of memory\n", stderr);
    exit(1);
}

void *mem_alloc(size_t n) {
    void *p = inject_failure() ? NULL : malloc(n ? n : 1);
    if (!p) out_of_memory();
    return p;
}

void *mem_calloc(size_t n, size_t sz) {
    void *p = inject_failure() ? NULL : calloc(n ? n : 1, sz ? sz : 1);
    if (!p) out_of_memory();
    return p;
}

void *mem_realloc(void *p, size_t n) {
    void *q = inject_failure() ? NULL : realloc(p, n ? n : 1);
    if (!q) out_of_memory();
    return q;
}

void *mem_try_alloc(size_t n) {
    if (inject_failure()) return NULL;
    return malloc(n ? n : 1);
}

char *mem_strndup(const char *s, size_t n) {
    char *p = mem_alloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

void mem_free(void *p) { free(p); }
