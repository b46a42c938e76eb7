/* run.c - interpreter lifecycle, entry points and error printing.
 *
 * `tsl FILE`, `tsl -e` and the REPL all come through interp_run_source: parse, resolve
 * against the main module's globals, execute, print any error as
 * FILE:LINE:COL: error: MESSAGE, the source line and a caret. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "parse.h"
#include "vm.h"
#include "tops.h"

#define STACK_VALUES (1 << 21)

Interp *interp_new(void) {
    Interp *I = mem_calloc(1, sizeof *I);
    I->stack = mem_calloc(STACK_VALUES, sizeof(Value));
    I->sp = I->stack;
    I->stack_end = I->stack + STACK_VALUES;
    I->max_depth = 10000;
    I->max_nesting = 1000;
    I->ret = NIL_VAL;
    I->last_value = NIL_VAL;
    char here;
    I->c_stack_base = &here;
    /* the guard leaves a margin for the deepest single evaluation step (sanitizers widen frames) */
    size_t size = 8u << 20;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &size);
        pthread_attr_destroy(&attr);
    }
    I->c_stack_limit = size > (4u << 20) ? size - (2u << 20) : size / 2;
    return I;
}

void interp_free(Interp *I) {
    static_free_all(I);
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
    sb_free(&I->traceback);
    mem_free(I->stack);
    builtins_free();
    mem_free(I);
}

static void print_source_line(FILE *out, Source *src, SrcLoc loc) {
    if (!src || loc.line <= 0) return;
    const char *p = src->text, *end = src->text + src->len;
    for (int line = 1; line < loc.line && p < end; p++)
        if (*p == '\n') line++;
    const char *e = p;
    while (e < end && *e != '\n') e++;
    int n = (int)(e - p);
    if (n > 200) n = 200;
    fprintf(out, "    %.*s\n    ", n, p);
    for (int i = 1; i < loc.col && i <= n; i++) fputc(p[i - 1] == '\t' ? '\t' : ' ', out);
    fputs("^\n", out);
}

void interp_print_error(Interp *I, FILE *out) {
    Source *src = I->err_src ? I->err_src : I->cur_src;
    if (I->err_has_loc && src)
        fprintf(out, "%s:%d:%d: error: %s\n", src->name, I->err_loc.line, I->err_loc.col, I->err_msg);
    else
        fprintf(out, "%s: error: %s\n", src ? src->name : "tsl", I->err_msg);
    if (I->err_has_loc) print_source_line(out, src, I->err_loc);
    if (I->traceback.len) fputs(I->traceback.s, out);
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
        interp_error_at(I, pe.loc, "%s", pe.msg);
        I->cur_src = saved;
        return NULL;
    }
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
    char *copy = mem_alloc(len + 1);
    memcpy(copy, text, len);
    copy[len] = 0;
    Source *src = source_new(I, name, ".", copy, len);
    ensure_main(I, src);
    interp_clear_error(I);
    I->exiting = false;
    I->limits_on = I->max_ops > 0 || I->deadline > 0 || tensor_max_live > 0;
    if (incomplete) *incomplete = false;
    Node *prog = interp_parse(I, src, incomplete);
    if (!prog) {
        if (incomplete && *incomplete) return 2;
        interp_print_error(I, stderr);
        return 1;
    }
    resolve_program(I, I->main, prog);
    I->repl = echo;
    Exec st = interp_exec_module(I, I->main, prog);
    I->sp = I->stack;
    I->depth = 0;
    int rc = 0;
    if (st == EX_ERR) {
        if (!I->exiting) interp_print_error(I, stderr);
        val_release(I->last_value);
        I->last_value = NIL_VAL;
        rc = I->exiting ? I->exit_code : I->interrupted ? 130 : 1;
    }
    forget_program(I, prog, src);
    return rc;
}

int interp_run_file(Interp *I, const char *path) {
    size_t len;
    extern char *read_file(const char *path, size_t *len);
    char *text = read_file(path, &len);
    if (!text) {
        fprintf(stderr, "tsl: error: cannot read script: %s\n", op_error());
        return 2;
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? mem_strndup(path, (size_t)(slash - path)) : mem_strndup(".", 1);
    Source *src = source_new(I, path, dir, text, len);
    mem_free(dir);
    ensure_main(I, src);
    interp_clear_error(I);
    I->exiting = false;
    I->limits_on = I->max_ops > 0 || I->deadline > 0 || tensor_max_live > 0;
    Node *prog = interp_parse(I, src, NULL);
    if (!prog) {
        interp_print_error(I, stderr);
        return 1;
    }
    resolve_program(I, I->main, prog);
    Exec st = interp_exec_module(I, I->main, prog);
    if (st == EX_ERR) {
        if (I->exiting) return I->exit_code;
        interp_print_error(I, stderr);
        return I->interrupted ? 130 : 1;
    }
    return 0;
}
