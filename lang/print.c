/* print.c - print()'s options (spec section 12): sep, end, file and flush, the same for
 * eager code (builtins.c) and static code (the VM's print, vm/run/vm.c), and flush().
 *
 * Standard output is the C library's: line-buffered on a terminal, block-buffered otherwise,
 * unbuffered under `tsl -u` (repl/main.c). file="stderr" writes to standard error, which is
 * unbuffered; standard output is flushed first, so `2>&1` keeps the program's order. */
#include <errno.h>
#include <string.h>
#include "interp.h"
#include "suggest.h"

/* A string option: a string, or nil for the default (as Python's None). */
static bool text_option(const char *name, Value v, const char **s, int *len, char *err, size_t n) {
    if (v.type == VAL_NIL) return true;
    if (v.type != VAL_STR) {
        snprintf(err, n, "print(): '%s' must be a string, got a %s", name, val_type_name(v));
        return false;
    }
    *s = AS_STR(v)->chars;
    *len = AS_STR(v)->len;
    return true;
}

bool print_options(char *const *names, const Value *vals, int n, PrintOpts *o, char *err, size_t errn) {
    *o = (PrintOpts){ " ", "\n", 1, 1, false, false };
    for (int i = 0; i < n; i++) {
        const char *k = names[i];
        Value v = vals[i];
        if (!strcmp(k, "sep")) {
            if (!text_option(k, v, &o->sep, &o->sep_len, err, errn)) return false;
        } else if (!strcmp(k, "end")) {
            if (!text_option(k, v, &o->end, &o->end_len, err, errn)) return false;
        } else if (!strcmp(k, "file")) {
            bool out = v.type == VAL_STR && !strcmp(AS_STR(v)->chars, "stdout");
            o->to_stderr = v.type == VAL_STR && !strcmp(AS_STR(v)->chars, "stderr");
            if (!out && !o->to_stderr && v.type != VAL_NIL) {
                snprintf(err, errn, "print(): 'file' must be \"stdout\" or \"stderr\"");
                return false;
            }
        } else if (!strcmp(k, "flush")) {
            if (v.type != VAL_BOOL) {
                snprintf(err, errn, "print(): 'flush' must be a bool, got a %s", val_type_name(v));
                return false;
            }
            o->flush = v.as.b;
        } else {
            static const char *const known[] = { "sep", "end", "file", "flush", NULL };
            char hint[SUGGEST_MAX_NAME + 24];
            const char *h = suggest_among(k, known, hint, sizeof hint);   /* as any call's keyword */
            snprintf(err, errn, "print() got an unknown keyword argument '%s'%s", k,
                     *h ? h : " (it takes sep, end, file, flush)");
            return false;
        }
    }
    return true;
}

/* Standard output's pending text, when the program's output is standard output. */
static bool flush_out(Interp *I) {
    if (I->write_out || fflush(stdout) == 0) return true;
    interp_errork(I, ERRK_IO, "cannot write to standard output: %s", strerror(errno));
    return false;
}

bool print_write(Interp *I, const PrintOpts *o, const char *s, size_t len) {
    if (o->to_stderr) {
        if (!flush_out(I)) return false;
        interp_write_diag(I, s, len);
        return true;
    }
    return interp_write_out(I, s, len) && (!o->flush || flush_out(I));
}

bool print_values(Interp *I, const PrintOpts *o, const Value *v, int n) {
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    for (int i = 0; i < n; i++) {
        if (i) sb_putn(&b, o->sep, (size_t)o->sep_len);
        if (!fmt_value_in(I, &b, v[i], false)) { sb_free(&b); return false; }
    }
    sb_putn(&b, o->end, (size_t)o->end_len);
    bool ok = print_write(I, o, b.s, b.len);
    sb_free(&b);
    return ok;
}

Value builtin_flush(Interp *I, CallArgs *a) {
    if (a->npos || a->nkw) return interp_errork(I, ERRK_TYPE, "flush() takes no arguments");
    return flush_out(I) ? NIL_VAL : ERR_VAL;
}
