/* repl.c - the REPL: readline editing, persistent history (~/.tsl_history), multi-line
 * input while the parser says the input is incomplete, tab completion, `:` commands.
 * Everything else is the same entry point as `tsl FILE` (tsl_run_input, of the public API:
 * this file includes tsl.h and system headers only).
 * Ctrl-C at the prompt clears the line; while code runs, the evaluator sees the flag,
 * stops with "interrupted" and we are back at the prompt.
 * Locations count lines over the whole session, so a function keeps the line it was typed on.
 * Standard input that is not a terminal is no session: it runs as one script (spec section 1). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#include <readline/history.h>
#include <readline/readline.h>
#include "repl.h"

static tsl_State *repl_S;
static bool time_inputs;
static int exit_code;   /* exit(code)'s, once it ran */

/* A growable text (the input so far, standard input). */
typedef struct {
    char *s;
    size_t len, cap;
} Text;

/* Appends n bytes, keeping the text NUL-terminated; false when out of memory. */
static bool text_add(Text *t, const char *s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1) cap *= 2;
        char *p = realloc(t->s, cap);
        if (!p) return false;
        t->s = p;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = 0;
    return true;
}
static char *pending_line;
static bool got_line, got_eof;

static const char *const commands[] = {
    ":help", ":quit", ":time", ":static", ":dis", ":load", ":reload", ":vars", ":device", NULL,
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
         "  :reload MODULE     import MODULE afresh from its file (after editing it)\n"
         "  :vars              list the variables you defined\n"
         "  :device cpu|gpu    default device for new tensors\n"
         "Ctrl-C interrupts running code; Tab completes names and fields after a '.'.\n"
         "`#` lines typed just before a fn become what :help prints for it.");
}

int repl_exit_status(tsl_State *S, tsl_Status st) {
    switch (st) {
    case TSL_OK: return 0;
    case TSL_EXIT: return tsl_exit_code(S);
    default: {
        /* in an MPI job, whose error it is: prefix and report in one call, so one write to
         * the unbuffered stderr that the other ranks' reports cannot cut in two */
        int rank, size;
        if (tsl_world(&rank, &size)) fprintf(stderr, "[rank %d of %d] %s", rank, size, tsl_error_report(S));
        else fputs(tsl_error_report(S), stderr);
        return st == TSL_INTERRUPTED ? 130 : st == TSL_IO ? 2 : 1;
    }
    }
}

void repl_put_escaped(FILE *out, const char *s) {
    char small[256];
    size_t n = strlen(s), need = tsl_escape(s, n, small, sizeof small);
    if (need < sizeof small) { fputs(small, out); return; }
    char *big = malloc(need + 1);
    if (!big) return;
    tsl_escape(s, n, big, need + 1);
    fputs(big, out);
    free(big);
}

/* Runs the command in `line` (starting with ':'), which it cuts into words in place. */
static void run_command_words(tsl_State *S, char *line, bool *quit) {
    char *arg = strchr(line, ' ');
    if (arg) { *arg++ = 0; while (*arg == ' ') arg++; }
    else arg = line + strlen(line);
    for (size_t n = strlen(arg); n && (arg[n - 1] == ' ' || arg[n - 1] == '\t'); n--) arg[n - 1] = 0;   /* ":help sum " */
    if (!strcmp(line, ":quit") || !strcmp(line, ":q")) *quit = true;
    else if (!strcmp(line, ":help") && !*arg) print_help();
    else if (!strcmp(line, ":help")) {
        const char *text;
        if (tsl_help_text(S, arg, &text) == TSL_OK) fputs(text, stdout);
    }
    else if (!strcmp(line, ":vars")) {
        const char *text;
        if (tsl_vars_text(S, &text) == TSL_OK) fputs(text, stdout);
    }
    else if (!strcmp(line, ":time")) {
        if (!strcmp(arg, "on") || !strcmp(arg, "off")) {
            time_inputs = !strcmp(arg, "on");
            printf("time: %s\n", arg);
        } else puts(":time takes on or off");
    } else if (!strcmp(line, ":static")) {
        if (!strcmp(arg, "on") || !strcmp(arg, "off")) {
            tsl_set_option(S, TSL_OPT_NO_STATIC, !strcmp(arg, "off"));
            printf("static: %s\n", arg);
        } else puts(":static takes on or off");
    } else if (!strcmp(line, ":dis")) {
        const char *text;
        if (tsl_dis_text(S, &text) == TSL_OK) fputs(text, stdout);
        else fputs(tsl_error_report(S), stderr);
        fflush(stdout);
    } else if (!strcmp(line, ":load")) {
        if (!*arg) puts(":load takes a file name");
        else {
            tsl_Status st = tsl_run_file(S, arg);
            int rc = repl_exit_status(S, st);
            if (st == TSL_EXIT) { *quit = true; exit_code = rc; }   /* exit(code) in the file ends the REPL */
        }
    } else if (!strcmp(line, ":reload")) {
        if (!*arg) puts(":reload takes a module name");
        else if (tsl_reload(S, arg) == TSL_OK) printf("reloaded %s\n", arg);
        else repl_exit_status(S, TSL_ERROR);
    } else if (!strcmp(line, ":device")) {
        if (strcmp(arg, "cpu") && strcmp(arg, "gpu")) puts(":device takes cpu or gpu");
        else if (tsl_set_device(S, arg) == TSL_OK) printf("device: %s\n", arg);
        else fprintf(stderr, "<stdin>: error: %s\n", tsl_error_message(S));
    } else {
        fputs("unknown command '", stderr);
        repl_put_escaped(stderr, line);
        fputs("' (try :help)\n", stderr);
    }
}

/* Returns true when the line was a command (handled here). The command is split into its
 * words in a copy: the line itself is left exactly as typed, for the history. */
static bool run_command(tsl_State *S, const char *typed, bool *quit) {
    typed += strspn(typed, " ");
    if (typed[0] != ':') return false;
    char *line = strdup(typed);
    if (!line) {
        fputs("tsl: error: out of memory\n", stderr);
        return true;
    }
    run_command_words(S, line, quit);
    free(line);
    return true;
}

/* ---- completion ---- */

/* Completion: `:` commands, then the names, keywords and fields the state offers. */
static char *complete_next(const char *text, int state) {
    static int idx;
    static size_t len;
    if (!state) { idx = 0; len = strlen(text); }
    if (text[0] == ':') {
        while (commands[idx])
            if (!strncmp(commands[idx++], text, len)) return strdup(commands[idx - 1]);
        return NULL;
    }
    const char *name = NULL;
    tsl_complete(repl_S, text, idx++, &name);
    return name ? strdup(name) : NULL;
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
        if (tsl_interrupt_pending(repl_S)) {
            tsl_interrupt_clear(repl_S);
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
int repl_run_stdin(tsl_State *S) {
    Text text = { 0 };
    char chunk[65536];
    size_t n;
    bool ok = true;
    /* bounded like a script file: `tsl < /dev/zero` must not read without end */
    while (ok && text.len <= TSL_MAX_SOURCE && (n = fread(chunk, 1, sizeof chunk, stdin)) > 0) ok = text_add(&text, chunk, n);
    int rc;
    if (!ok) {
        fputs("tsl: error: out of memory\n", stderr);
        rc = 1;
    } else if (ferror(stdin)) {
        fprintf(stderr, "tsl: error: cannot read standard input: %s\n", strerror(errno));
        rc = 2;   /* as for a script file that cannot be read */
    } else if (text.len > TSL_MAX_SOURCE) {
        fprintf(stderr, "tsl: error: standard input is larger than the limit of %d bytes\n", TSL_MAX_SOURCE);
        rc = 2;
    } else {
        rc = repl_exit_status(S, tsl_run_string(S, "<stdin>", text.s ? text.s : "", (ptrdiff_t)text.len));
    }
    free(text.s);
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

static void text_clear(Text *t) {
    t->len = 0;
    if (t->s) t->s[0] = 0;
}

int repl_run(tsl_State *S) {
    repl_S = S;
    if (!isatty(0)) return repl_run_stdin(S);
    char hist[4096] = "";
    const char *home = getenv("HOME");
    if (home) snprintf(hist, sizeof hist, "%s/.tsl_history", home);
    rl_catch_signals = 0;
    rl_attempted_completion_function = complete;
    rl_readline_name = "tsl";
    stifle_history(1000);
    if (hist[0]) read_history(hist);
    Text input = { 0 };
    bool quit = false;
    int lines_read = 0;    /* over the session: an input starting on line L reports line L */
    int input_base = 0;    /* lines read before the current input's first line */
    while (!quit) {
        bool interrupted = false;
        char *line = read_line_tty(input.len ? "... " : ">>> ", &interrupted);
        if (interrupted) { text_clear(&input); continue; }
        if (!line) {
            putchar('\n');
            if (!input.len) break;
            text_clear(&input);   /* Ctrl-D on a continuation line drops the unfinished input */
            continue;
        }
        if (lines_read < INT_MAX) lines_read++;   /* saturates: tsl_run_input refuses what would count past it */
        if (input.len == 0 && run_command(S, line, &quit)) {
            if (*line) { add_history(line); if (hist[0]) { write_history(hist); } }
            free(line);
            continue;
        }
        if (input.len == 0) input_base = lines_read - 1;
        bool ok = (!input.len || text_add(&input, "\n", 1)) && text_add(&input, line, strlen(line));
        bool blank = !line[strspn(line, " \t")];
        free(line);
        if (!ok) {
            fputs("tsl: error: out of memory\n", stderr);
            text_clear(&input);
            continue;
        }
        if (only_comments(input.s)) {
            /* `#` lines wait for what follows (as in Python's REPL), so the comment above a
             * fn typed here is part of its text and :help shows it; a blank line ends them */
            if (blank) text_clear(&input);
            continue;
        }
        double t0 = now();
        tsl_Status st = tsl_run_input(S, "<stdin>", input.s, input.len, input_base);
        if (st == TSL_INCOMPLETE) continue;
        int rc = repl_exit_status(S, st);
        if (st == TSL_EXIT) { quit = true; exit_code = rc; }   /* exit(code) ends the REPL with that status */
        if (input.len) {
            add_history(input.s);
            if (hist[0]) write_history(hist);
        }
        const char *shown;
        if (st == TSL_OK) {
            if (tsl_result_text(S, &shown) != TSL_OK) fputs(tsl_error_report(S), stderr);
            else if (shown) puts(shown);
        }
        if (time_inputs) fprintf(stderr, "time: %.3f ms\n", (now() - t0) * 1e3);
        fflush(stdout);
        text_clear(&input);
    }
    free(input.s);
    rl_callback_handler_remove();
    return exit_code;
}
