/* opt_impl.h - what the optimizer's passes share (vm/opt/opt.c, rows.c, takes.c). */
#ifndef TSL_OPT_IMPL_H
#define TSL_OPT_IMPL_H
#include "opt.h"

/* Whether TSL_OPT leaves pass `name` on (it is off when TSL_OPT has -name). */
bool pass_on(const char *name);
/* Registers an instruction reads (up to 3 fixed operands plus args, or its steps'). */
int reads(const Ins *in, int *out);
/* Readers and writers of every register (an input's guard counts as both). */
void count_uses(Graph *g, int *uses, int *defs);
/* Instructions that are targets of jumps (they start a basic block), ncode + 1 flags. */
bool *jump_targets(Graph *g);
/* Removes the instructions marked dead, remapping jump targets. */
void compact(Graph *g, bool *dead);
/* The operands of an elementwise OP: tensor registers *ta and *tb (-1 none) and a number
 * register *scalar (-1 none), the left operand when *num_left; false when not elementwise. */
bool ew_operands(const Graph *g, const Ins *in, int *ta, int *tb, int *scalar, bool *num_left);
/* Instructions i + 1 .. j - 1 die and i becomes op writing dst, without arguments or
 * attributes: a group's one instruction. */
void fuse_into(Graph *g, bool *dead, int i, int j, InsOp op, int dst);

/* rows.c: row groups (opt.h's opt_row_group) of the straight-line code; how many it made. */
int pass_rows(Graph *g);
/* takes.c: a take of an index of an arange (a differentiated t[...]) read as t[...]. */
int pass_takes(Graph *g);

#endif
