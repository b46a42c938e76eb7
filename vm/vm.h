/* vm.h - runs a Graph (vm/run/vm.c) and the static-code entry points (vm/static.c). */
#ifndef TSL_VM_H
#define TSL_VM_H
#include "ir.h"
#include "compile.h"

/* A PUSH/POP stack; its tensors stay between runs, so a warm graph reuses their buffers. */
typedef struct VmStack {
    Tensor **t;
    double *x;
    int n, cap;
} VmStack;

/* Run-time state of one graph execution: registers and the containers it stores into. */
typedef struct VmRegs {
    VmStack *stacks;         /* g->nstacks of them, emptied when a run starts */
    Tensor **spare;          /* per register: the value it replaced in a variable or container
                              * last run, whose buffer it may take once nobody else holds it */
    double *num;
    Tensor **ten;
    Value *val;              /* host value registers (R_VAL: strings), released after each run */
    Obj **objs;
    Tensor **slots;          /* the memory plan's buffers */
    int *slot_owner;         /* register that last took each slot */
    bool quiet;              /* --verify-static's second run: prints are suppressed */
    Tensor **consts;         /* the constants tconst reads, when not the graph's own: a model
                              * session's copies (vm/file/model.c), so no thread touches a shared
                              * tensor's reference count */
    struct { void *p; size_t bytes; } *scratch;   /* block buffers of fused groups (shared by copies of
                                                     these registers: run_graph works on a copy) */
} VmRegs;

VmRegs *vm_regs_new(const Graph *g);
void vm_regs_free(VmRegs *r, const Graph *g);
/* Releases the host values a run left in its registers (they hold strings, not buffers to reuse). */
void vm_regs_clear_vals(VmRegs *r, const Graph *g);
/* Executes g with inputs bound in r. 0, or -1 with an error pending in I. */
int vm_exec(Interp *I, Graph *g, VmRegs *r);
/* old, the value a store or output of operand o just replaced (the reference is taken): kept
 * as the spare of o's register, so a step that updates a tensor in place ping-pongs between
 * two buffers instead of allocating one per run. */
void vm_keep_spare(VmRegs *r, const Opnd *o, Value old);
/* Builds the run-time Value of an operand (a new reference), or ERR_VAL. */
Value vm_operand(Interp *I, Graph *g, VmRegs *r, const Opnd *o);

/* static.c: what the interpreter calls, through the hooks vm_register() gives it (lang/interp.h's
 * StaticHooks); every entry point that makes a state (tsl_new, a model session) calls it first. */
void vm_register(void);
/* dis(fn)'s listing appended to out instead of written as program output. */
Value static_dis_text(Interp *I, Value fn, bool dot, StrBuf *out);
/* Where an eager value and a static one first differ, bit for bit (--verify-static's test),
 * written into where; false when they are the same. */
bool static_values_differ(Value eager, Value stat, char *where, size_t n);
/* export(): compiles fn for params outside the caches (vm/file/model.c); *vals_out: its inputs. */
CompileStatus static_compile_export(Interp *I, ObjClosure *fn, Value *params, const uint32_t *dyn, Graph **out,
                                    Value **vals_out, char *why, size_t whylen);
/* The inputs of a graph that reads only its arguments (a loaded one), borrowed into vals. */
void static_fetch_args(const Graph *g, Value *params, Value *vals);
Graph *static_last_graph(Interp *I);   /* the graph that ran last (tests, :dis) */
int static_cache_count(const void *cache);   /* graphs cached for a block or static fn */

/* model.c: the export() and load() built-ins (spec section 9). */
Value model_builtin_export(Interp *I, CallArgs *a);
Value model_builtin_load(Interp *I, CallArgs *a);
/* The graph of a function load() made (for dis), named in *name; NULL for any other value. */
const Graph *model_loaded_graph(Value f, const char **name);
/* Its signature (model_signature: help() prints it), NULL for any other value. */
const char *model_loaded_signature(Value f);

/* dis.c */
void dis_graph(FILE *out, Graph *g, const char *title);
/* How many of guards[from..) are inputs (read at each run) and how many fixed-value guards. */
void graph_count_guards(const Graph *g, int from, int *inputs, int *guards);
void dis_dot(FILE *out, Graph *g, const char *title);

#endif
