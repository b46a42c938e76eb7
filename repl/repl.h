/* repl.h - the interactive loop (repl.c) and what the `tsl` command shares with it. Built
 * against the public header alone. */
#ifndef TSL_REPL_H
#define TSL_REPL_H
#include <stdio.h>
#include "tsl.h"

/* Runs the REPL on a terminal, or standard input as one script; returns the exit status. */
int repl_run(tsl_State *S);
/* The exit status of a run, its error report printed to stderr: 0, 1 for an error, 2 for a
 * file that cannot be read, 130 for Ctrl-C, exit(code)'s code. */
int repl_exit_status(tsl_State *S, tsl_Status st);
/* `tsl run MODEL.tslg --in X.npy ... [--out Y.npy ...]` (run_model.c); argv after "run".
 * Returns the exit status: 0, 1 for a failure, 2 for a usage mistake. */
int run_model_command(int argc, char **argv);
/* Writes s with control bytes and terminal escapes shown escaped. */
void repl_put_escaped(FILE *out, const char *s);

#endif
