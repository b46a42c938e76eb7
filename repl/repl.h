/* repl.h - the interactive loop (repl.c) and what the `tsl` command shares with it. Built
 * against the public header alone. */
#ifndef TSL_REPL_H
#define TSL_REPL_H
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tsl.h"

/* Runs the REPL on a terminal, or standard input as one script; returns the exit status. */
int repl_run(tsl_State *S);
/* Runs the whole of standard input as a program named <stdin> (`tsl -`, or no terminal). */
int repl_run_stdin(tsl_State *S);
/* The exit status of a run, its error report printed to stderr: 0, 1 for an error, 2 for a
 * file that cannot be read, 130 for Ctrl-C, exit(code)'s code. */
int repl_exit_status(tsl_State *S, tsl_Status st);
/* `tsl run MODEL.tslg --in X.npy ... [--out Y.npy ...] [--timeout S] [--max-memory N]`
 * (run_model.c); argv after "run". Returns the exit status: 0, 1 for a failure, 2 for a usage
 * mistake, 130 for Ctrl-C. */
int run_model_command(int argc, char **argv);
/* The command line's numbers, read alike by `tsl` and `tsl run` (main.c): a count for option
 * opt (plain decimal digits below 2**63), --timeout's seconds (above 0, at most 366 days).
 * false after printing the usage error. */
bool repl_parse_count(const char *opt, const char *s, int64_t *out);
bool repl_parse_seconds(const char *s, double *out);
/* Starts the --timeout timer: when it fires, the state or session being run stops. */
void repl_arm_timeout(double seconds);
/* The session that Ctrl-C and the --timeout timer stop while `tsl run` runs it; NULL when
 * it is done (Ctrl-C then ends the process with status 130). */
void repl_watch_session(tsl_Session *s);
/* Writes s with control bytes and terminal escapes shown escaped. */
void repl_put_escaped(FILE *out, const char *s);

#endif
