/* progress.h - the tqdm-style bar of progress(iterable, total=nil, desc=""): the built-in
 * returns its iterable and leaves total and desc in I->progress_next; the `for` loop that
 * iterates over the call (lang/interp.c, vm/compile/compile.c for static code) owns the bar. */
#ifndef TSL_PROGRESS_H
#define TSL_PROGRESS_H
#include <stdbool.h>
#include <stdint.h>

struct Interp;

/* What the last progress() call asked for, until a loop takes it. */
typedef struct ProgressArgs {
    bool has_total;         /* false: the iterable's length */
    int64_t total;
    char desc[80];
} ProgressArgs;

typedef struct Progress {
    int64_t n, total;
    double start, last_draw;
    bool tty;               /* redraw in place; otherwise one line at the end */
    int display;            /* > 0: drawn as the host's display of this number (a notebook) */
    char desc[80];
} Progress;

/* Static code draws bars through host instructions calling progress_host_builtin(I)
 * (builtins.h; not a global):
 * progress_bar(PB_BEGIN, start, stop, step, total, desc) starts a bar over a range's count
 * (the arguments progress() checks, checked the same), PB_TICK counts an item of the
 * innermost, PB_END ends it (vm/compile/cprogress.c). Bars nest PROGRESS_DEPTH deep. */
enum { PB_BEGIN, PB_TICK, PB_END };
#define PROGRESS_DEPTH 8

/* Starts a bar over `len` items with the arguments of the last progress() call. */
void progress_begin(struct Interp *I, Progress *p, int64_t len);
/* One more item done: redraws at most ten times a second on a terminal. */
void progress_tick(struct Interp *I, Progress *p);
/* The loop ended (completed, broke or failed): the last drawing, or the one summary line. */
void progress_end(struct Interp *I, Progress *p);
/* Erases a bar drawn in place before the program writes to standard output. */
void progress_clear(struct Interp *I);
/* The bar's text for n of total items after `elapsed` seconds (no control bytes), in buf. */
void progress_format(char *buf, size_t size, const char *desc, int64_t n, int64_t total, double elapsed);
#endif
