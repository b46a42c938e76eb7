/* repl.h - the interactive loop: reads lines, hands them to interp_run_source. */
#ifndef TSL_REPL_H
#define TSL_REPL_H
#include "interp.h"

int repl_run(Interp *I);

#endif
