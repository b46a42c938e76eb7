/* opt.h - the optimizer passes (vm/opt.c). */
#ifndef TSL_OPT_H
#define TSL_OPT_H
#include "ir.h"

#define FUSED_NONE (-1000000000)   /* a FusedStep's b when the step is unary or takes a scalar */

void opt_run(Graph *g);
/* Once per process: the words of TSL_OPT that name no pass, as lines to show (false: none). */
bool opt_env_problem(char *out, size_t n);

#endif
