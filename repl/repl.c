/* repl.c - the REPL: readline editing, persistent history (~/.tsl_history), multi-line
 * input while the parser says the input is incomplete, tab completion, `:` commands.
 * Everything else is the same entry point as `tsl FILE` (interp_run_source).
 * Ctrl-C at the prompt clears the line; while code runs, the evaluator sees the flag,
 * stops with "interrupted" and we are back at the prompt.
 * Locations count lines over the whole session, so a function keeps the line it was typed on.
 * Standard input that is not a terminal is no session: it runs as one script (spec section 1). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#include <readline/history.h>
#include <readline/readline.h>
#include "builtins.h"
#include "help.h"
#include "interp.h"
#include "mem.h"
#include "repl.h"
#include "vm.h"

static Interp *repl_I;
static char *pending_line;
static bool got_line, got_eof;

static const char *const commands[] = {
    ":help", ":quit", ":time", ":static", ":dis", ":load", ":vars", ":device", NULL,
};
static const char *const keywords[] = {
    "fn", "return", "if", "else", "while", "for", "in", "break", "continue", "static", "import",
    "and", "or", "not", "true", "false", "nil", NULL,
};

static void print_help(void) {
    puts("TSL REPL. Type code; an unfinished input continues on the next line.\n"
         "  :help              this text\n"
         "  :help NAME         describe a built-in, a function or a module (as help(NAME))\n"
         "  :quit              leave (Ctrl-D too)\n"
         "  :time on|off       time each input\n"
         "  :static on|off     run static blocks compiled (on) or eagerly (off)\n"
         "  :dis               show the bytecode of the last static block\n"
         "  :load FILE         run a script in this session\n"
         "  :vars              list the variables you defined\n"
         "  :device cpu|gpu    default device for new tensors\n"
         "Ctrl-C interrupts running code; Tab completes names and fields after a '.'.\n"
         "`#` lines typed just before a fn become what :help prints for it.");
}

static void show_vars(Interp *I) {
    Globals *g = &I->main->g;
    for (int i = 0; i < g->count; i++) {
        Value v = g->vals[i];
        if (v.type == VAL_UNDEF || builtin_is(v, g->names[i]) || builtin_constant_is(v, g->names[i])) continue;
        StrBuf b = { 0 };
        sb_putn(&b, "", 0);
        fmt_value(&b, v, true);
        /* one line per variable: a matrix shows its first row */
        char *nl = strchr(b.s, '\n');
        if (nl) { strcpy(nl, " ..."); b.len = strlen(b.s); }
        if (b.len > 70) {
            size_t cut = 67;
            while (cut > 0 && (b.s[cut] & 0xc0) == 0x80) cut--;   /* not inside a UTF-8 character */
            memcpy(b.s + cut, "...", 4);
        }
        printf("  %-16s %-9s %s\n", g->names[i], val_type_name(v), b.s);
        sb_free(&b);
    }
}

/* Returns true when the line was a command (handled here). */
static bool run_command(Interp *I, char *line, bool *quit) {
    while (*line == ' ') line++;
    if (line[0] != ':') return false;
    char *arg = strchr(line, ' ');
    if (arg) { *arg++ = 0; while (*arg == ' ') arg++; }
    else arg = line + strlen(line);
    for (size_t n = strlen(arg); n && (arg[n - 1] == ' ' || arg[n - 1] == '\t'); n--) arg[n - 1] = 0;   /* ":help sum " */
    if (!strcmp(line, ":quit") || !strcmp(line, ":q")) *quit = true;
    else if (!strcmp(line, ":help") && !*arg) print_help();
    else if (!strcmp(line, ":help")) {
        StrBuf b = { 0 };
        sb_putn(&b, "", 0);
        help_name(I, I->main, arg, &b);
        fputs(b.s, stdout);
        sb_free(&b);
    }
    else if (!strcmp(line, ":vars")) show_vars(I);
    else if (!strcmp(line, ":time")) {
        if (!strcmp(arg, "on") || !strcmp(arg, "off")) {
            I->time_inputs = !strcmp(arg, "on");
            printf("time: %s\n", arg);
        } else puts(":time takes on or off");
    } else if (!strcmp(line, ":static")) {
        if (!strcmp(arg, "on") || !strcmp(arg, "off")) {
            I->no_static = !strcmp(arg, "off");
            printf("static: %s\n", arg);
        } else puts(":static takes on or off");
    } else if (!strcmp(line, ":dis")) {
        interp_clear_error(I);
        if (IS_ERR(static_dis(I, NIL_VAL, false))) interp_print_error(I, stderr);
    } else if (!strcmp(line, ":load")) {
        if (!*arg) puts(":load takes a file name");
        else interp_run_file(I, arg);
        if (I->exiting) *quit = true;   /* exit(code) in the file ends the REPL */
        I->sp = I->stack;
        I->depth = 0;
    } else if (!strcmp(line, ":device")) {
        if (!strcmp(arg, "cpu")) puts("device: cpu");
        else if (!strcmp(arg, "gpu")) fputs("<stdin>: error: device 'gpu' is not available (this build has no GPU backend yet)\n", stderr);
        else puts(":device takes cpu or gpu");
    } else {
        fputs("unknown command '", stderr);
        fput_escaped(stderr, line, strlen(line));
        fputs("' (try :help)\n", stderr);
    }
    return true;
}

/* ---- completion ---- */

/* What interp.c's field access answers on a tensor (tensor_field). */
static const char *const tensor_fields[] = { "shape", "dtype", "ndim", "size", "device", "T", NULL };

/* The value `text` names up to its last '.', read from the globals and dict fields without
 * running anything (a module is the dict of its exports); UNDEF when it names none. */
static Value completion_target(const char *text, size_t dot) {
    Globals *g = &repl_I->main->g;
    const char *seg = text, *end = text + dot;
    const char *stop = memchr(seg, '.', (size_t)(end - seg));
    size_t n = (size_t)((stop ? stop : end) - seg);
    Value v = UNDEF_VAL;
    for (int i = 0; i < g->count; i++)
        if (strlen(g->names[i]) == n && !memcmp(g->names[i], seg, n)) v = g->vals[i];
    while (v.type != VAL_UNDEF && stop) {
        seg = stop + 1;
        stop = memchr(seg, '.', (size_t)(end - seg));
        n = (size_t)((stop ? stop : end) - seg);
        Value *f = v.type == VAL_DICT ? dict_get(AS_DICT(v), seg, (int)n) : NULL;
        v = f ? *f : UNDEF_VAL;
    }
    return v;
}

static bool is_identifier(const char *s) {
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return false;
    for (s++; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

/* "prefix.field" for the next field of the target that starts with what follows the dot. */
static char *complete_field(const char *text, size_t dot, Value target, int *idx) {
    const char *part = text + dot + 1;
    size_t plen = strlen(part);
    for (;;) {
        const char *name;
        if (target.type == VAL_DICT) {
            ObjDict *d = AS_DICT(target);
            if (*idx >= d->len) return NULL;
            name = d->entries[(*idx)++].key->chars;
            if (!is_identifier(name)) continue;
        } else if (target.type == VAL_TENSOR) {
            if (!tensor_fields[*idx]) return NULL;
            name = tensor_fields[(*idx)++];
        } else {
            return NULL;
        }
        if (strncmp(name, part, plen)) continue;
        char *out = malloc(dot + 1 + strlen(name) + 1);   /* readline frees it with free() */
        if (!out) return NULL;
        memcpy(out, text, dot + 1);
        strcpy(out + dot + 1, name);
        return out;
    }
}

static char *complete_next(const char *text, int state) {
    static int phase, idx;
    static size_t len;
    static Value target;
    const char *dot = strrchr(text, '.');
    if (!state) {
        phase = 0; idx = 0; len = strlen(text);
        if (dot && text[0] != ':') target = completion_target(text, (size_t)(dot - text));
    }
    if (dot && text[0] != ':') return complete_field(text, (size_t)(dot - text), target, &idx);
    if (text[0] == ':') {
        while (commands[idx])
            if (!strncmp(commands[idx++], text, len)) return strdup(commands[idx - 1]);
        return NULL;
    }
    Globals *g = &repl_I->main->g;   /* repl_run makes the main module before the first prompt */
    for (; phase == 0; idx++) {
        if (idx >= g->count) { phase = 1; idx = 0; break; }
        if (g->vals[idx].type != VAL_UNDEF && !strncmp(g->names[idx], text, len)) return strdup(g->names[idx++]);
    }
    while (keywords[idx])
        if (!strncmp(keywords[idx++], text, len)) return strdup(keywords[idx - 1]);
    return NULL;
}

static char **complete(const char *text, int start, int end) {
    (void)start; (void)end;
    rl_attempted_completion_over = 1;
    return rl_completion_matches(text, complete_next);
}

/* ---- reading ---- */

static void on_line(char *line) {
    if (!line) got_eof = true;
    pending_line = line;
    got_line = true;
    rl_callback_handler_remove();
}

/* Reads one line with readline's callback interface, so Ctrl-C can clear it.
 * Returns NULL at end of input; sets *interrupted on Ctrl-C. */
static char *read_line_tty(const char *prompt, bool *interrupted) {
    got_line = got_eof = false;
    pending_line = NULL;
    *interrupted = false;
    rl_callback_handler_install(prompt, on_line);
    while (!got_line) {
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(0, &fds);
        /* SIGINT may go to the main thread (repl/main.c runs us on a thread with a big
         * stack), leaving this select() asleep: wake up now and then to look at the flag */
        struct timeval tick = { 0, 50000 };
        int r = select(1, &fds, NULL, NULL, &tick);
        if (repl_I->interrupt_flag) {
            repl_I->interrupt_flag = 0;
            rl_free_line_state();
            rl_callback_sigcleanup();
            rl_callback_handler_remove();
            fputs("^C\n", stdout);
            *interrupted = true;
            return NULL;
        }
        if (r == 0 || (r < 0 && errno == EINTR)) continue;
        if (r < 0) return NULL;
        rl_callback_read_char();
    }
    return pending_line;
}

/* Standard input that is not a terminal: read it all and run it as a script named <stdin>,
 * so the first error ends the run with status 1 and an unfinished statement is an error. */
static int run_stdin_script(Interp *I) {
    StrBuf text = { 0 };
    sb_putn(&text, "", 0);
    char chunk[65536];
    size_t n;
    /* bounded like a script file: `tsl < /dev/zero` must not read without end */
    while (text.len <= TSL_MAX_SOURCE_BYTES && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0) sb_putn(&text, chunk, n);
    int rc;
    if (ferror(stdin)) {
        fprintf(stderr, "tsl: error: cannot read standard input: %s\n", strerror(errno));
        rc = 2;   /* as for a script file that cannot be read */
    } else if (text.len > TSL_MAX_SOURCE_BYTES) {
        fprintf(stderr, "tsl: error: standard input is larger than the limit of %d bytes\n", TSL_MAX_SOURCE_BYTES);
        rc = 2;
    } else {
        rc = interp_run_source(I, "<stdin>", text.s, text.len, false, NULL);
    }
    sb_free(&text);
    return rc;
}

/* Whether the text is nothing but `#` comment lines (and blank ones), with at least one. */
static bool only_comments(const char *s) {
    bool any = false;
    for (; *s; s++) {
        s += strspn(s, " \t\r");
        if (*s == '#') { any = true; s += strcspn(s, "\n"); }
        if (*s && *s != '\n') return false;
        if (!*s) break;
    }
    return any;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int repl_run(Interp *I) {
    repl_I = I;
    if (!isatty(0)) return run_stdin_script(I);
    /* completion lists the main module's names, built-ins included, even before any input */
    if (!I->main) {   /* made inside I (interp_enter), so its objects are I's and go with it */
        InterpScope scope = interp_enter(I);
        I->main = module_new(I, "__main__", NULL);
        interp_leave(scope);
    }
    char hist[4096] = "";
    const char *home = getenv("HOME");
    if (home) snprintf(hist, sizeof hist, "%s/.tsl_history", home);
    rl_catch_signals = 0;
    rl_attempted_completion_function = complete;
    rl_readline_name = "tsl";
    stifle_history(1000);
    if (hist[0]) read_history(hist);
    StrBuf input = { 0 };
    sb_putn(&input, "", 0);
    bool quit = false;
    int lines_read = 0;    /* over the session: an input starting on line L reports line L */
    int input_base = 0;    /* lines read before the current input's first line */
    while (!quit) {
        bool interrupted = false;
        char *line = read_line_tty(input.len ? "... " : ">>> ", &interrupted);
        if (interrupted) { input.len = 0; input.s[0] = 0; continue; }
        if (!line) {
            putchar('\n');
            if (!input.len) break;
            input.len = 0;   /* Ctrl-D on a continuation line drops the unfinished input */
            input.s[0] = 0;
            continue;
        }
        lines_read++;
        if (input.len == 0 && run_command(I, line, &quit)) {
            if (*line) { add_history(line); if (hist[0]) { write_history(hist); } }
            free(line);
            continue;
        }
        if (input.len == 0) input_base = lines_read - 1;
        if (input.len) sb_putn(&input, "\n", 1);
        sb_puts(&input, line);
        bool blank = !line[strspn(line, " \t")];
        free(line);
        if (only_comments(input.s)) {
            /* `#` lines wait for what follows (as in Python's REPL), so the comment above a
             * fn typed here is part of its text and :help shows it; a blank line ends them */
            if (blank) { input.len = 0; input.s[0] = 0; }
            continue;
        }
        double t0 = now();
        bool incomplete = false;
        int rc = interp_run_source_at(I, "<stdin>", input.s, input.len, input_base, true, &incomplete);
        if (rc == 2 && incomplete) continue;
        if (I->exiting) quit = true;   /* exit(code) ends the REPL with that status */
        if (input.len) {
            add_history(input.s);
            if (hist[0]) write_history(hist);
        }
        if (rc == 0 && I->last_value.type != VAL_NIL) {
            StrBuf b = { 0 };
            sb_putn(&b, "", 0);
            if (fmt_value_in(I, &b, I->last_value, true)) puts(b.s);
            else {   /* too large to show, or Ctrl-C while printing; the input's source is gone */
                fprintf(stderr, "tsl: error: %s\n", I->err_msg);
                interp_clear_error(I);
            }
            sb_free(&b);
        }
        val_release(I->last_value);
        I->last_value = NIL_VAL;
        if (I->time_inputs) fprintf(stderr, "time: %.3f ms\n", (now() - t0) * 1e3);
        fflush(stdout);
        input.len = 0;
        input.s[0] = 0;
    }
    sb_free(&input);
    rl_callback_handler_remove();
    return I->exiting ? I->exit_code : 0;
}
