/* vm.h - runs a Graph (vm/vm.c) and the static-code entry points (vm/static.c). */
#ifndef TSL_VM_H
#define TSL_VM_H
#include "ir.h"

/* Run-time state of one graph execution: registers and the containers it stores into. */
typedef struct VmRegs {
    double *num;
    Tensor **ten;
    Obj **objs;
    Tensor **slots;          /* the memory plan's buffers */
    int *slot_owner;         /* register that last took each slot */
    Tensor **spare;          /* per register: the tensor a store into a container replaced,
                              * kept to be written again when the register's own is shared */
    bool quiet;              /* --verify-static's second run: prints are suppressed */
} VmRegs;

/* Executes g with inputs bound in r. 0, or -1 with an error pending in I. */
int vm_exec(Interp *I, Graph *g, VmRegs *r);
/* Builds the run-time Value of an operand (a new reference), or ERR_VAL. */
Value vm_operand(Interp *I, Graph *g, VmRegs *r, const Opnd *o);

/* static.c: what the interpreter calls. */
Exec static_exec_block(Interp *I, Frame *f, Node *block_stmt);
Value static_call(Interp *I, ObjClosure *fn, Value *args, int nargs, CallArgs *kw);
Value static_dis(Interp *I, Value fn, bool dot);
/* Where an eager value and a static one first differ, bit for bit (--verify-static's test),
 * written into where; false when they are the same. */
bool static_values_differ(Value eager, Value stat, char *where, size_t n);
Graph *static_last_graph(Interp *I);   /* the graph that ran last (tests, :dis) */
int static_cache_count(const void *cache);   /* graphs cached for a block or static fn */
void static_free_all(Interp *I);

/* dis.c */
void dis_graph(FILE *out, Graph *g, const char *title);
/* How many of guards[from..) are inputs (read at each run) and how many fixed-value guards. */
void graph_count_guards(const Graph *g, int from, int *inputs, int *guards);
void dis_dot(FILE *out, Graph *g, const char *title);

#endif
