/* progress.c - progress(iterable, total=nil, desc=""), a tqdm-style bar on the diagnostics
 * stream (standard error unless the host set a hook). On a terminal it redraws in place,
 * at most ten times a second; anywhere else (a file, a pipe, a host's hook) it writes one
 * summary line when the loop ends and no control bytes, so logs stay clean. A host with a
 * display (tsl_set_display: a notebook) gets the bar as a text display of its own, redrawn
 * in place under the bar's id at the same rate.
 * The built-in only hands its iterable back; the loop over the call draws (progress.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "interp.h"
#include "builtins.h"
#include "progress.h"
#include "num.h"

#define BAR_WIDTH 24
#define REDRAW_S 0.1

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 75 -> "01:15", 3700 -> "1:01:40", as tqdm writes durations. */
static void fmt_time(char *buf, size_t size, double s) {
    if (!isfinite(s) || s < 0) { snprintf(buf, size, "?"); return; }
    long t = (long)s, h = t / 3600, m = t / 60 % 60, sec = t % 60;
    if (h) snprintf(buf, size, "%ld:%02ld:%02ld", h, m, sec);
    else snprintf(buf, size, "%02ld:%02ld", m, sec);
}

void progress_format(char *buf, size_t size, const char *desc, int64_t n, int64_t total, double elapsed) {
    char el[32], eta[32], rate[32];
    fmt_time(el, sizeof el, elapsed);
    double r = elapsed > 0 ? (double)n / elapsed : 0;
    if (r > 0) snprintf(rate, sizeof rate, r >= 1 ? "%.2fit/s" : "%.2fs/it", r >= 1 ? r : 1 / r);
    else snprintf(rate, sizeof rate, "?it/s");
    const char *sep = desc[0] ? ": " : "";
    if (total <= 0) {   /* nothing to measure against: count, elapsed and rate */
        snprintf(buf, size, "%s%s%lldit [%s, %s]", desc, sep, (long long)n, el, rate);
        return;
    }
    fmt_time(eta, sizeof eta, r > 0 && n <= total ? (double)(total - n) / r : NAN);
    int64_t shown = n < total ? n : total;
    int fill = (int)(shown * BAR_WIDTH / total);
    char bar[BAR_WIDTH + 1];
    memset(bar, '#', (size_t)fill);
    memset(bar + fill, ' ', (size_t)(BAR_WIDTH - fill));
    bar[BAR_WIDTH] = 0;
    snprintf(buf, size, "%s%s%3d%%|%s| %lld/%lld [%s<%s, %s]", desc, sep, (int)(shown * 100 / total), bar,
             (long long)n, (long long)total, el, eta, rate);
}

static void draw(Interp *I, Progress *p, bool last) {
    char line[400];
    size_t len = 0;
    if (p->display) {
        char id[32];
        snprintf(id, sizeof id, "tsl-progress-%d", p->display);
        progress_format(line, sizeof line, p->desc, p->n, p->total, now_s() - p->start);
        interp_display(I, "text/plain", line, strlen(line), id);   /* a failed redraw is no error */
        return;
    }
    if (p->tty) line[len++] = '\r';
    progress_format(line + len, sizeof line - len - 8, p->desc, p->n, p->total, now_s() - p->start);
    len += strlen(line + len);
    if (p->tty) { memcpy(line + len, "\x1b[K", 3); len += 3; }   /* erase what a longer line left */
    if (last) line[len++] = '\n';
    interp_write_diag(I, line, len);
    I->bar_drawn = p->tty && !last;
    I->bar_cleared = false;
}

void progress_clear(Interp *I) {
    I->bar_drawn = false;
    I->bar_cleared = true;
    interp_write_diag(I, "\r\x1b[K", 4);
}

void progress_begin(Interp *I, Progress *p, int64_t len) {
    ProgressArgs *a = &I->progress_next;
    p->n = 0;
    p->total = a->has_total ? a->total : len;
    memcpy(p->desc, a->desc, sizeof p->desc);
    p->display = I->display ? (I->displays = I->displays % 1000000 + 1) : 0;
    p->tty = !p->display && !I->write_diag && isatty(2);
    p->start = p->last_draw = now_s();
    a->has_total = false;
    a->desc[0] = 0;
    if (p->tty || p->display) draw(I, p, false);
}

void progress_tick(Interp *I, Progress *p) {
    p->n++;
    if (!p->tty && !p->display) return;
    double t = now_s();
    if (t - p->last_draw < REDRAW_S && !I->bar_cleared) return;
    p->last_draw = t;
    draw(I, p, false);
}

void progress_end(Interp *I, Progress *p) { draw(I, p, true); }

/* progress()'s total and desc (UNDEF: not given) into I->progress_next; false on an error. */
static bool set_args(Interp *I, Value total, Value desc) {
    ProgressArgs *pa = &I->progress_next;
    pa->has_total = false;
    if (total.type != VAL_UNDEF && total.type != VAL_NIL) {
        int64_t n;
        if (!arg_int(I, "progress", "total", total, &n)) return false;
        if (n < 0) return interp_errork(I, ERRK_VALUE, "progress(): total must not be negative, got %lld", (long long)n), false;
        pa->total = n;
        pa->has_total = true;
    }
    pa->desc[0] = 0;
    if (desc.type != VAL_UNDEF) {
        ObjString *s;
        if (!arg_str(I, "progress", "desc", desc, &s)) return false;
        snprintf(pa->desc, sizeof pa->desc, "%s", s->chars);
        for (char *c = pa->desc; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f) *c = ' ';   /* no control bytes from the label */
    }
    return true;
}

/* progress(iterable, total=nil, desc=""): checks its arguments and hands the iterable back;
 * the `for` over this call draws the bar. */
static Value bi_progress(Interp *I, CallArgs *a) {
    Value v[3];
    if (!builtin_bind(I, a, bi_progress, v)) return ERR_VAL;
    Value it = v[0];
    if (it.type != VAL_LIST && it.type != VAL_DICT && it.type != VAL_TENSOR && it.type != VAL_STR)
        return interp_errork(I, ERRK_TYPE, "progress(): cannot iterate over a %s", val_type_name(it));
    return set_args(I, v[1], v[2]) ? val_retain(it) : ERR_VAL;
}

/* Static code's bar instructions (progress.h); a bar left open by an error is dropped
 * when the stack is full, oldest first. */
static Value bi_progress_bar(Interp *I, CallArgs *a) {
    Value *v = a->pos;
    if (a->npos < 1 || v[0].type != VAL_NUM) return interp_error(I, "internal error: progress_bar's operands");
    int action = (int)v[0].as.n;
    if (action == PB_BEGIN) {
        int64_t r[3];
        if (a->npos != 6) return interp_error(I, "internal error: progress_bar's operands");
        for (int i = 0; i < 3; i++)
            if (v[1 + i].type != VAL_NUM || !num_to_i64(v[1 + i].as.n, &r[i])) return interp_error(I, "internal error: progress_bar's range");
        if (!set_args(I, v[4], v[5])) return ERR_VAL;
        if (I->nbars == PROGRESS_DEPTH) memmove(I->bars, I->bars + 1, sizeof I->bars[0] * --I->nbars);
        progress_begin(I, &I->bars[I->nbars++], r[2] ? (int64_t)range_count(r[0], r[1], r[2]) : 0);
    } else if (I->nbars > 0) {
        Progress *p = &I->bars[I->nbars - 1];
        if (action == PB_TICK) progress_tick(I, p);
        else {
            progress_end(I, p);
            I->nbars--;
        }
    }
    return NIL_VAL;
}

ObjBuiltin *progress_host_builtin(Interp *I) {
    if (!I->progress_host) I->progress_host = builtin_new("progress_bar", bi_progress_bar);   /* its one reference */
    return I->progress_host;
}

const BuiltinDef progress_builtins[] = {
    { "progress", bi_progress, "(iterable, total=nil, desc=\"\")",
      "the iterable's items; a for loop over it draws a progress bar on stderr (one summary line when not a terminal)", ST_EAGER },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
