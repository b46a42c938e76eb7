/* help.h - help(x) and the REPL's `:help NAME` (spec section 5): what a built-in, a TSL
 * function or a module is, from the tables and comments that define it. */
#ifndef TSL_HELP_H
#define TSL_HELP_H
#include "interp.h"

/* help(x): prints the description of x (a string is a name to look up) and returns nil. */
Value builtin_help(Interp *I, CallArgs *a);
/* Appends to b what help prints for the name (a global of m, or "a.b" through dict fields). */
void help_name(Interp *I, Module *m, const char *name, StrBuf *b);

#endif
