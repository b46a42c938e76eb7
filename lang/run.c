/* run.c - interpreter lifecycle, entry points and error printing.
 *
 * `tsl FILE`, `tsl -e` and the REPL all come through interp_run_source (by way of the public
 * API, lang/api/api.c): parse, resolve against the main module's globals, execute, and render any
 * error as FILE:LINE:COL: error: MESSAGE, the source line and a caret into I->report. The
 * library prints nothing: the program (repl/) prints the report. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "parse.h"
#include "tops.h"

#define STACK_VALUES (1 << 21)

/* The value stack is not zeroed: every slot is written before it is read (a frame fills its
 * slots as it starts), and untouched pages of a large block cost nothing. */
static int make_stack(Interp *I, void *ud) {
    (void)ud;
    I->stack = mem_alloc(STACK_VALUES * sizeof(Value));
    I->sp = I->stack;
    I->stack_end = I->stack + STACK_VALUES;
    return 0;
}

Interp *interp_new_with_alloc(TslAllocFn f, void *ud) {
    OpsCtx *ops = ops_ctx_new_with_alloc(f, ud);
    if (!ops) return NULL;
    OpsCtx *outer = ops_ctx_enter(ops);   /* the Interp itself comes from its own hook */
    Interp *I = mem_try_alloc(sizeof *I);
    ops_ctx_leave(outer);
    if (!I) {
        ops_ctx_free(ops);
        return NULL;
    }
    memset(I, 0, sizeof *I);
    I->opsctx = ops;
    val_heap_init(&I->heap);
    I->max_depth = 10000;
    I->max_nesting = 1000;
    I->compile_budget_ms = 2000;
    I->ret = NIL_VAL;
    I->last_value = NIL_VAL;
    if (interp_protected(I, make_stack, NULL) == INTERP_OOM) {
        interp_free(I);
        return NULL;
    }
    return I;
}

Interp *interp_new(void) { return interp_new_with_alloc(NULL, NULL); }

static void free_contents(Interp *I) {
    if (interp_static_hooks()) interp_static_hooks()->free_all(I);
    val_release(I->ret);
    val_release(I->last_value);
    for (Module *m = I->modules; m;) {
        Module *next = m->next;
        globals_free(&m->g);
        val_release(m->exports);
        mem_free(m->name);
        mem_free(m);
        m = next;
    }
    val_free_all();
    for (int i = 0; i < I->nprograms; i++) ast_free(I->programs[i]);
    mem_free(I->programs);
    for (Source *s = I->sources; s;) {
        Source *next = s->next;
        mem_free(s->name);
        mem_free(s->dir);
        mem_free(s->text);
        mem_free(s);
        s = next;
    }
    mem_free(I->stack);
    sb_free(&I->report);
    mem_free(I->report_file);
    builtins_free(I);
}

/* Everything goes back through I's own hook, with I current; the ops context goes last. */
void interp_free(Interp *I) {
    if (!I) return;
    InterpScope scope = interp_enter(I);
    free_contents(I);
    OpsCtx *ops = I->opsctx;
    mem_free(I);
    interp_leave(scope);
    ops_ctx_free(ops);
}

/* ---- escaping: an error message never sends the terminal a control byte from the program ---- */

/* Renders the character at p[0..n) for a terminal: *used gets the bytes it takes. Returns
 * NULL when it prints as it is, else its escaped form (\x1b, \n, \u{9b}...) in buf. */
static const char *escape_char(const char *p, size_t n, size_t *used, char buf[16]) {
    unsigned char c = (unsigned char)p[0];
    *used = 1;
    if (c == '\n') return "\\n";
    if (c == '\t') return "\\t";
    if (c == '\r') return "\\r";
    if (c < 0x20 || c == 0x7f) { snprintf(buf, 16, "\\x%02x", c); return buf; }
    if (c < 0x80) return NULL;
    /* a whole UTF-8 sequence prints as it is, except the C1 controls U+0080..U+009F
     * (U+009B is a CSI to some terminals); a stray byte is shown as \xNN */
    size_t len = c >= 0xf5 ? 0 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    bool ok = len > 0 && len <= n;
    for (size_t i = 1; ok && i < len; i++) ok = ((unsigned char)p[i] & 0xc0) == 0x80;
    if (!ok) { snprintf(buf, 16, "\\x%02x", c); return buf; }
    *used = len;
    if (c == 0xc2 && (unsigned char)p[1] < 0xa0) { snprintf(buf, 16, "\\u{%x}", (unsigned char)p[1]); return buf; }
    return NULL;
}

/* Terminal columns of the valid UTF-8 sequence p[0..len): 2 for the wide East Asian ranges
 * and emoji, 0 for combining accents, else 1 (close enough to keep a caret in place). */
static int char_width(const char *p, size_t len) {
    if (len < 2) return 1;
    const unsigned char *u = (const unsigned char *)p;
    unsigned cp = len == 2 ? (u[0] & 0x1fu) << 6 | (u[1] & 0x3fu)
                : len == 3 ? (u[0] & 0x0fu) << 12 | (u[1] & 0x3fu) << 6 | (u[2] & 0x3fu)
                           : (u[0] & 0x07u) << 18 | (u[1] & 0x3fu) << 12 | (u[2] & 0x3fu) << 6 | (u[3] & 0x3fu);
    if (cp >= 0x300 && cp < 0x370) return 0;
    if ((cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) || (cp >= 0xac00 && cp <= 0xd7a3) ||
        (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
        (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1faff) || (cp >= 0x20000 && cp <= 0x3fffd))
        return 2;
    return 1;
}

void sb_put_escaped(StrBuf *b, const char *s, size_t n) {
    char buf[16];
    for (size_t i = 0, used; i < n; i += used) {
        const char *e = escape_char(s + i, n - i, &used, buf);
        if (e) sb_puts(b, e);
        else sb_putn(b, s + i, used);
    }
}

static void sb_put_escaped_str(StrBuf *b, const char *s) { sb_put_escaped(b, s, strlen(s)); }

/* The source line of loc (loc.line counts from the start of the whole input, so a REPL
 * input subtracts the lines before it), escaped, and a caret under the column. Tabs stay
 * tabs in both lines so the caret lines up; an escaped byte takes its escape's width, a
 * character its columns (not its bytes). */
static void put_source_line(StrBuf *b, Source *src, SrcLoc loc) {
    if (!src || loc.line - src->line_base <= 0) return;
    const char *p = src->text, *end = src->text + src->len;
    for (int line = 1; line < loc.line - src->line_base && p < end; p++)
        if (*p == '\n') line++;
    const char *e = p;
    while (e < end && *e != '\n') e++;
    size_t n = (size_t)(e - p);
    if (n > 200) n = 200;
    sb_puts(b, "    ");
    char buf[16];
    for (size_t i = 0, used; i < n; i += used) {
        const char *esc = NULL;
        if (p[i] == '\t') used = 1;   /* a tab stays a tab: the caret line repeats it */
        else esc = escape_char(p + i, n - i, &used, buf);
        if (esc) sb_puts(b, esc);
        else sb_putn(b, p + i, used);
    }
    sb_puts(b, "\n    ");
    for (size_t i = 0, used; i < n && (int)i + 1 < loc.col; i += used) {
        if (p[i] == '\t') { sb_putn(b, "\t", 1); used = 1; continue; }
        const char *esc = escape_char(p + i, n - i, &used, buf);
        for (size_t k = esc ? strlen(esc) : (size_t)char_width(p + i, used); k > 0; k--) sb_putn(b, " ", 1);
    }
    sb_puts(b, "^\n");
}

/* ---- tracebacks ---- */

static TraceFrame *latest_frame(Traceback *t) {
    if (t->hidden && !t->nouter) return NULL;   /* raise() restored "... N more frames ..." last */
    if (t->nouter) return &t->outer[(t->outer_first + t->nouter - 1) % TRACE_SHOWN];
    return t->ninner ? &t->inner[t->ninner - 1] : NULL;
}

/* Records the next caller out. A repeat of the last one only counts; past the innermost
 * TRACE_SHOWN entries they go to the ring, whose oldest entry then falls into `hidden`. */
void traceback_add(Traceback *t, const char *fn_name, const Source *src, SrcLoc loc) {
    traceback_add_n(t, fn_name, src, loc, 1);
}

/* traceback_add for `count` identical consecutive frames (raise() restores a caught list's
 * "(repeated N times)" entry as one). */
void traceback_add_n(Traceback *t, const char *fn_name, const Source *src, SrcLoc loc, long count) {
    TraceFrame *last = latest_frame(t);
    if (last && last->src == src && last->loc.line == loc.line && last->loc.col == loc.col &&
        !strncmp(last->name, fn_name, sizeof last->name - 1)) {
        last->count = last->count > LONG_MAX - count ? LONG_MAX : last->count + count;   /* a hand-made list's counts */
        return;
    }
    TraceFrame *f;
    if (t->ninner < TRACE_SHOWN) f = &t->inner[t->ninner++];
    else if (t->nouter < TRACE_SHOWN) f = &t->outer[(t->outer_first + t->nouter++) % TRACE_SHOWN];
    else {
        f = &t->outer[t->outer_first];
        t->hidden = t->hidden > LONG_MAX - f->count ? LONG_MAX : t->hidden + f->count;
        t->outer_first = (t->outer_first + 1) % TRACE_SHOWN;
    }
    snprintf(f->name, sizeof f->name, "%s", fn_name);
    f->src = src;
    f->loc = loc;
    f->count = count;
}

/* The lines of a traceback, innermost first, without indentation: "in f() called from
 * FILE:L:C", " (repeated N times)" after one that stands for several, and one
 * "... N more frames ..." where frames were left out. The report and a caught error's
 * `traceback` list (errval.c) both use it, so the list reads as the report does. */
int traceback_nlines(const Traceback *t) { return t->ninner + (t->hidden ? 1 : 0) + t->nouter; }

void traceback_line(StrBuf *b, const Traceback *t, int i) {
    if (i >= t->ninner && t->hidden && i == t->ninner) {
        sb_printf(b, "... %ld more frame%s ...", t->hidden, t->hidden == 1 ? "" : "s");
        return;
    }
    const TraceFrame *f = i < t->ninner ? &t->inner[i]
                                        : &t->outer[(t->outer_first + i - t->ninner - (t->hidden ? 1 : 0)) % TRACE_SHOWN];
    sb_printf(b, "in %s() called from ", f->name);
    sb_put_escaped_str(b, f->src ? f->src->name : "?");
    sb_printf(b, ":%d:%d", f->loc.line, f->loc.col);
    if (f->count > 1) sb_printf(b, " (repeated %ld times)", f->count);
}

static void put_traceback(StrBuf *b, const Traceback *t) {
    for (int i = 0; i < traceback_nlines(t); i++) {
        sb_puts(b, "  ");
        traceback_line(b, t, i);
        sb_putn(b, "\n", 1);
    }
}

/* The report is built when the error happens, not when it is read: the source it quotes may
 * be freed as soon as the run ends (forget_program). */
static void render_error(Interp *I) {
    StrBuf *b = &I->report;
    b->len = 0;
    sb_putn(b, "", 0);
    Source *src = I->err_src ? I->err_src : I->cur_src;
    sb_put_escaped_str(b, src ? src->name : "tsl");
    if (I->err_has_loc && src) sb_printf(b, ":%d:%d", I->err_loc.line, I->err_loc.col);
    mem_free(I->report_file);
    I->report_file = NULL;   /* not left dangling if the copy runs out of memory */
    I->report_file = src ? mem_strndup(src->name, strlen(src->name)) : NULL;
    I->report_has_loc = I->err_has_loc && src;
    I->report_loc = I->err_loc;
    sb_puts(b, ": error: ");
    sb_put_escaped_str(b, I->err_msg);
    sb_putn(b, "\n", 1);
    if (I->err_has_loc) put_source_line(b, src, I->err_loc);
    put_traceback(b, &I->traceback);
}

static void render_plain(Interp *I, const char *msg) {
    StrBuf *b = &I->report;
    b->len = 0;
    mem_free(I->report_file);
    I->report_file = NULL;
    I->report_has_loc = false;
    sb_puts(b, "tsl: error: ");
    sb_put_escaped_str(b, msg);
    sb_putn(b, "\n", 1);
}

/* The report's blocks are the state's: it is rendered entered and protected, from inside a
 * run or from the API. When rendering runs out of memory the report is left empty and the
 * pending message stays what it was (tsl_error_report then shows it bare). */
static void drop_report(Interp *I) {
    I->report.len = 0;
    if (I->report.s) I->report.s[0] = 0;
    I->report_has_loc = false;
}

static int error_body(Interp *I, void *ud) {
    (void)ud;
    render_error(I);
    return 0;
}

static int plain_body(Interp *I, void *ud) {
    render_plain(I, ud);
    return 0;
}

static void report_protected(Interp *I, InterpBody body, const char *msg) {
    char saved[sizeof I->err_msg];
    snprintf(saved, sizeof saved, "%s", I->err_msg);
    if (interp_protected(I, body, (void *)msg) != INTERP_OOM) return;
    drop_report(I);
    snprintf(I->err_msg, sizeof I->err_msg, "%s", saved);   /* the error being reported, not the report's */
}

void interp_report_error(Interp *I) { report_protected(I, error_body, NULL); }

void interp_report_plain(Interp *I, const char *msg) { report_protected(I, plain_body, msg); }

void interp_vfail_plain(Interp *I, const char *fmt, va_list ap) {
    interp_clear_error(I);
    vsnprintf(I->err_msg, sizeof I->err_msg, fmt, ap);
    I->err_set = true;
    interp_report_plain(I, I->err_msg);
}

void interp_fail_plain(Interp *I, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    interp_vfail_plain(I, fmt, ap);
    va_end(ap);
}

/* Moves every location in a parsed input down by `lines` (a REPL input after earlier ones). */
static void shift_lines(Node *n, int lines) {
    if (!n) return;
    n->loc.line += lines;
    if (n->proto) {
        n->proto->loc.line += lines;
        for (int i = 0; i < n->proto->nparams; i++) shift_lines(n->proto->defaults[i], lines);
        shift_lines(n->proto->body, lines);
    }
    shift_lines(n->a, lines);
    shift_lines(n->b, lines);
    shift_lines(n->c, lines);
    for (int i = 0; i < n->n; i++) shift_lines(n->kids[i], lines);
    for (int i = 0; i < n->nk; i++) shift_lines(n->kw[i], lines);
}

/* Parses and resolves src into the current program list. NULL on error (pending). */
Node *interp_parse(Interp *I, Source *src, bool *incomplete) {
    ParseError pe;
    Node *prog = parse_program(src->text, src->len, I->max_nesting, &pe);
    if (!prog) {
        if (incomplete && pe.incomplete) {
            *incomplete = true;
            return NULL;
        }
        Source *saved = I->cur_src;
        I->cur_src = src;
        pe.loc.line += src->line_base;
        interp_error_at(I, pe.loc, "%s", pe.msg);
        I->cur_src = saved;
        return NULL;
    }
    if (src->line_base) shift_lines(prog, src->line_base);
    I->programs = mem_realloc(I->programs, sizeof(Node *) * (size_t)(I->nprograms + 1));
    I->programs[I->nprograms++] = prog;
    return prog;
}

static void ensure_main(Interp *I, Source *src) {
    if (!I->main) I->main = module_new(I, "__main__", src);
    I->main->src = src;
}

/* Whether anything can still refer to a program after it ran: a closure made from one of its
 * functions, or the compiled code of a static block in it. */
static bool still_referenced(const Node *n) {
    if (!n) return false;
    if (n->kind == AST_STATIC) return true;
    if (n->proto && (n->proto->made || n->proto->is_static || still_referenced(n->proto->body))) return true;
    if (n->proto)
        for (int i = 0; i < n->proto->nparams; i++)
            if (still_referenced(n->proto->defaults[i])) return true;
    if (still_referenced(n->a) || still_referenced(n->b) || still_referenced(n->c)) return true;
    for (int i = 0; i < n->n; i++)
        if (still_referenced(n->kids[i])) return true;
    for (int i = 0; i < n->nk; i++)
        if (still_referenced(n->kw[i])) return true;
    return false;
}

/* Frees the latest program and its source when nothing refers to them any more, so running
 * the same code again and again (the REPL, a host program) does not grow memory. */
static void forget_program(Interp *I, Node *prog, Source *src) {
    if (I->nprograms == 0 || I->programs[I->nprograms - 1] != prog || still_referenced(prog)) return;
    if (I->sources != src) return;
    for (Module *m = I->modules; m; m = m->next)
        if (m->src == src && m != I->main) return;
    I->nprograms--;
    ast_free(prog);
    I->sources = src->next;
    if (I->main && I->main->src == src) I->main->src = NULL;
    mem_free(src->name);
    mem_free(src->dir);
    mem_free(src->text);
    mem_free(src);
}

int interp_run_source(Interp *I, const char *name, const char *text, size_t len, bool echo, bool *incomplete) {
    return interp_run_source_at(I, name, text, len, 0, echo, incomplete);
}

/* Takes back the source of an input that did not parse (incomplete: the REPL tries again with
 * one more line), so each try does not keep a copy of the whole input until exit. */
static void drop_source(Interp *I, Source *src, Source *main_src) {
    if (I->sources != src) return;
    I->sources = src->next;
    I->main->src = main_src;
    mem_free(src->name);
    mem_free(src->dir);
    mem_free(src->text);
    mem_free(src);
}

static int run_source(Interp *I, const char *name, const char *text, size_t len, int line_base, bool echo,
                      bool *incomplete) {
    char *copy = mem_alloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = 0;
    Source *main_src = I->main ? I->main->src : NULL;
    Source *src = source_new(I, name, ".", copy, len);
    src->line_base = line_base;
    ensure_main(I, src);
    interp_clear_error(I);
    I->exiting = false;
    I->limits_on = I->max_ops > 0 || I->opsctx->max_live > 0;
    if (incomplete) *incomplete = false;
    Node *prog = interp_parse(I, src, incomplete);
    if (!prog) {
        bool more = incomplete && *incomplete;
        if (!more) interp_report_error(I);
        drop_source(I, src, main_src);
        return more ? 2 : 1;
    }
    if (resolve_program(I, I->main, prog) < 0) {
        interp_report_error(I);
        forget_program(I, prog, src);
        return 1;
    }
    I->repl = echo;
    Exec st = interp_exec_module(I, I->main, prog);
    I->sp = I->stack;
    I->depth = 0;
    I->call_site = (CallSite){ 0 };
    int rc = 0;
    if (st == EX_ERR) {
        if (!I->exiting) interp_report_error(I);
        val_release(I->last_value);
        I->last_value = NIL_VAL;
        rc = I->exiting ? I->exit_code : I->interrupted ? 130 : 1;
    }
    forget_program(I, prog, src);
    return rc;
}

static int run_file(Interp *I, const char *path) {
    size_t len;
    extern char *read_file(const char *path, size_t *len);
    char *text = read_file(path, &len);
    if (!text) {
        interp_fail_plain(I, "cannot read script: %s", op_error());   /* it quotes the path */
        return 2;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? mem_strndup(path, (size_t)(slash - path)) : mem_strndup(".", 1);
    Source *src = source_new(I, path, dir, text, len);
    mem_free(dir);
    ensure_main(I, src);
    interp_clear_error(I);
    I->exiting = false;
    I->limits_on = I->max_ops > 0 || I->opsctx->max_live > 0;
    Node *prog = interp_parse(I, src, NULL);
    if (!prog) {
        interp_report_error(I);
        return 1;
    }
    if (resolve_program(I, I->main, prog) < 0) {
        interp_report_error(I);
        return 1;
    }
    Exec st = interp_exec_module(I, I->main, prog);
    if (st == EX_ERR) {
        if (I->exiting) return I->exit_code;
        interp_report_error(I);
        return I->interrupted ? 130 : 1;
    }
    return 0;
}

/* The entry points run protected (state.c): out of memory is an error like any other. */
typedef struct {
    const char *name, *text;
    size_t len;
    int line_base;
    bool echo;
    bool *incomplete;
} SourceJob;

static int source_body(Interp *I, void *ud) {
    SourceJob *j = ud;
    return run_source(I, j->name, j->text, j->len, j->line_base, j->echo, j->incomplete);
}

static int out_of_memory(Interp *I) {
    interp_report_error(I);
    return 1;
}

/* Whether text[0..len) fits the limits every source text must (the one check for all that
 * come in as text: tsl_run_string, tsl_run_input, and so the REPL): at most
 * TSL_MAX_SOURCE_BYTES, and its lines, counted on from line_base, within an int. Files are
 * read bounded by the same limit (read_file). When it does not fit, the error is set (with
 * no location: nothing of the text was read) and false returned, before anything is copied. */
static bool source_fits(Interp *I, const char *text, size_t len, int line_base) {
    if (len > TSL_MAX_SOURCE_BYTES) {
        interp_fail_plain(I, "the source is larger than the limit of %d bytes", TSL_MAX_SOURCE_BYTES);
        return false;
    }
    /* a text of len bytes has at most len + 1 lines: count them only near the edge */
    size_t room = (size_t)(INT_MAX - line_base), lines = 1;
    if (len < room) return true;
    for (const char *p = text, *end = text + len; (p = memchr(p, '\n', (size_t)(end - p))); p++) lines++;
    if (lines <= room) return true;
    interp_fail_plain(I, "line_base %d: the input's %zu lines would count past the last line number, %d", line_base,
                      lines, INT_MAX);
    return false;
}

int interp_run_source_at(Interp *I, const char *name, const char *text, size_t len, int line_base, bool echo,
                         bool *incomplete) {
    SourceJob j = { name, text, len, line_base, echo, incomplete };
    if (incomplete) *incomplete = false;
    if (line_base < 0) {
        interp_fail_plain(I, "line_base must not be negative, not %d", line_base);
        return INTERP_REFUSED;
    }
    if (!source_fits(I, text, len, line_base)) return INTERP_REFUSED;
    int rc = interp_protected(I, source_body, &j);
    return rc == INTERP_OOM ? out_of_memory(I) : rc;
}

static int file_body(Interp *I, void *ud) { return run_file(I, ud); }

int interp_run_file(Interp *I, const char *path) {
    int rc = interp_protected(I, file_body, (void *)path);
    return rc == INTERP_OOM ? out_of_memory(I) : rc;
}

bool interp_write_out(Interp *I, const char *s, size_t len) {
    if (I->quiet) return true;
    if (I->write_out) {
        int e = I->write_out(I->out_ud, s, len);
        if (!e) return true;
        interp_errork(I, ERRK_IO, "cannot write the program's output: %s", strerror(e));
        return false;
    }
    if (I->bar_drawn) progress_clear(I);   /* the program's line replaces the bar's (progress.c) */
    /* stdout is buffered: a full disk or a closed pipe may only show at a later flush
     * (then main reports it at exit); here we catch what the write itself sees */
    if (fwrite(s, 1, len, stdout) == len && !(I->repl && fflush(stdout)) && !ferror(stdout)) return true;
    interp_errork(I, ERRK_IO, "cannot write to standard output: %s", strerror(errno));
    return false;
}

void interp_write_diag(Interp *I, const char *s, size_t len) {
    if (I->quiet) return;
    if (!I->write_out) fflush(stdout);   /* what print wrote first shows first, under 2>&1 too */
    if (I->write_diag) I->write_diag(I->diag_ud, s, len);
    else fwrite(s, 1, len, stderr);
}

int interp_display(Interp *I, const char *mime, const void *data, size_t n, const char *id) {
    if (I->quiet) return 0;
    if (!I->display) return -1;
    if (!I->write_out) fflush(stdout);   /* what print wrote first shows first */
    return I->display(I->display_ud, mime, data, n, id);
}

void interp_diag_at(Interp *I, const char *head, const Source *src, SrcLoc loc, const char *what, const char *msg) {
    const char *file = src ? src->name : "?";
    StrBuf b = { 0 };
    sb_puts(&b, head);   /* names and values in file and msg are the program's: shown escaped */
    sb_put_escaped(&b, file, strlen(file));
    sb_printf(&b, ":%d:%d: %s", loc.line, loc.col, what);
    sb_put_escaped(&b, msg, strlen(msg));
    sb_putn(&b, "\n", 1);
    interp_write_diag(I, b.s, b.len);
    sb_free(&b);
}
