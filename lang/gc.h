/* gc.h - the cycle collector: reclaims lists, dicts, closures and cells that only refer
 * to each other (reference counting alone never frees a cycle). */
#ifndef TSL_GC_H
#define TSL_GC_H
#include <stdbool.h>

/* The heap's gc_due (value.h) is set by the allocator when enough containers were made
 * since the last collection; the interpreter collects at its next statement boundary (a
 * safe point: no C code holds a pointer it has not counted). */

/* Collects now; returns the number of objects freed. */
long gc_collect(void);

#endif
