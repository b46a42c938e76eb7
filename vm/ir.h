/* ir.h - the static graph: instructions over number and tensor registers.
 *
 * A compiled static block (or static fn) is a Graph: a flat instruction array with
 * forward/backward jumps for branches and loops, typed registers (numbers, or tensors of
 * a fixed shape and dtype), constants, the inputs it reads with their guards, and the
 * outputs it writes back. Every instruction keeps the source location it came from.
 * A Graph is plain data: it holds no pointers into the interpreter's frames. */
#ifndef TSL_IR_H
#define TSL_IR_H
#include "interp.h"
#include "tops.h"
#include "mem.h"

typedef enum {
#define OPC(name, text, effect) I_##name,
#include "opcodes.def"
#undef OPC
    I__COUNT
} InsOp;

/* Room for one more element in arr (n used, cap allocated), doubling: graphs can reach
 * 10^5 instructions and registers, so growth must not be one element at a time. */
#define GROW(arr, n, cap)                                                          \
    do {                                                                           \
        if ((n) == (cap)) {                                                        \
            (cap) = (cap) ? (cap) * 2 : 16;                                        \
            (arr) = mem_realloc((arr), sizeof *(arr) * (size_t)(cap));             \
        }                                                                          \
    } while (0)

/* R_VAL: a host value (a string made at run time), owned by the register file */
typedef enum { R_NUM, R_TENSOR, R_VAL } RegKind;


typedef struct {
    RegKind kind;
    bool is_bool;          /* a number register holding a truth value */
    DType dtype;           /* tensors */
    Shape shape;
    int slot;              /* memory plan: buffer slot, -1 none (see opt.c) */
} RegInfo;

/* A value the VM must build at run time (print arguments, stores, outputs):
 * a constant, a register, or a list/dict of operands. */
typedef enum { OPND_CONST, OPND_NUM, OPND_TENSOR, OPND_LIST, OPND_DICT, OPND_OBJ, OPND_CLOSURE, OPND_VAL } OpndKind;
typedef struct Opnd {
    OpndKind kind;
    int reg;               /* NUM/TENSOR/VAL register, or OBJ container index */
    Value k;               /* CONST (owned) */
    int n;                 /* LIST/DICT */
    struct Opnd *items;
    char **keys;           /* DICT */
    FnProto *proto;        /* CLOSURE: a function made in static code, built at run time */
    Module *mod;
    ObjCell **cells;       /* its captured variables (retained), n of them */
    struct CellSrc *csrc;  /* CLOSURE: where each cell is found in the block's frame at run time */
    int bound;             /* NUM/TENSOR: flag register + 1; flag 0 means "unbound" (0: always bound) */
} Opnd;

/* PRINT's aux: 0 for print's defaults, else 1 + these flags, and its last two operands are
 * the separator and the end (constant strings). */
enum { PRINT_STDERR = 1, PRINT_FLUSH = 2, PRINT_MAX_AUX = 1 + PRINT_STDERR + PRINT_FLUSH };

/* One elementwise step inside a FUSED group: t[dst] := op(t[a], t[b] or scalar). */
typedef struct {
    OpCode op;
    int dst, a, b;         /* group-local temporaries; negative: external register -(r+1) */
    int scalar_reg;        /* number register for scalar operands, -1 none */
    bool num_left;
} FusedStep;

/* A call the compiler inlined: the traceback frame an error inside it gets ("in NAME()
 * called from SRC:LOC"), as the eager call would add it. Owned by the graph (its list). */
typedef struct CallFrame {
    char *name;
    Source *src;
    SrcLoc loc;
    struct CallFrame *outer;   /* the inlined call it was made in, or NULL */
    struct CallFrame *next;    /* the graph's list */
} CallFrame;

typedef struct Ins {
    InsOp op;
    int dst, a, b, c;
    int aux;
    double imm;
    int *args;
    int nargs;
    Shape shape;
    IndexItem *idx;        /* INDEX/INDEX_SET template (ints may come from registers) */
    int nidx;
    Opnd *opnds;           /* PRINT/ASSERT/STORE */
    int nopnds;
    char *key;             /* STORE into a dict */
    OpAttrs *attrs;        /* OP: the call's attributes (owned) */
    int res[OP_MAX_OUT];   /* OP: result registers (res[0] == dst) */
    int nres;
    FusedStep *steps;      /* FUSED */
    int nsteps;
    SrcLoc loc;
    Source *src;
    const CallFrame *frame;   /* the inlined call it belongs to, or NULL (not in graph files) */
    bool cannot_fail;      /* OP: an optimizer pass proved its operands valid (takes.c: a scatter's
                            * positions known, distinct and in range), so unused it is dead code */
    bool rt;               /* OP/INDEX: reads or writes a register with a run-time dim, so its
                            * result is made at run time as eagerly (graph_mark_runtime) */
    struct JitCode *jit;      /* FUSED, EPILOGUE of one chunk: its native code (vm/run/jit.c, process-wide), or NULL */
    int jit_runs;             /* FUSED, EPILOGUE: runs counted toward compiling it (atomic) */
    bool jit_told;            /* FUSED, EPILOGUE: TSL_EXPLAIN said which tier runs it */
} Ins;

/* Where an input comes from at run time, relative to the block's frame. */
typedef enum { SRC_LOCAL, SRC_CELL, SRC_UPVAL, SRC_GLOBAL, SRC_CELLPTR, SRC_ARG, SRC_LEAF } SrcKind;
typedef struct {
    SrcKind kind;
    int slot;              /* frame slot / upvalue / global slot / arg index / leaf: parent input */
    Module *mod;           /* SRC_GLOBAL */
    ObjCell *cell;         /* SRC_CELLPTR (retained) */
    int path;              /* SRC_LEAF: index into the parent structure's flattening */
    char *name;            /* for messages */
} InputSrc;

/* Where a closure made in static code finds a captured cell when it leaves a run: the
 * frame's cell slot (SRC_CELL) or upvalue (SRC_UPVAL) of this call, or always the same cell
 * (SRC_CELLPTR). A new call has new cells: those of the compiling call would be stale. */
typedef struct CellSrc {
    SrcKind kind;
    int slot;
} CellSrc;

/* Guard on one input: what the value must be for this graph to apply. */
typedef enum { G_TENSOR, G_NUMBER, G_NUMBER_EQ, G_CONST, G_LIST, G_DICT } GuardKind;
typedef struct {
    GuardKind kind;
    int input;             /* index into inputs */
    DType dtype;
    Shape shape;
    double num;            /* G_NUMBER_EQ */
    bool loop_stop;        /* G_NUMBER_EQ for a range stop a slice needed (cslice.c; static.c counts its misses) */
    Value k;               /* G_CONST (owned): nil/bool/string by value, functions by identity */
    int n;                 /* G_LIST/G_DICT length */
    bool at_least;         /* G_LIST/G_DICT the code only adds to: length >= n (dict: its keys begin with keys) */
    char **keys;           /* G_DICT keys in order */
    int reg;               /* register the input binds (tensors, numbers), -1 none */
    int obj;               /* container index (lists/dicts), -1 none */
} Guard;

/* An output: after the graph runs, a variable is set to an operand. */
typedef struct {
    SrcKind kind;          /* LOCAL/CELL/UPVAL/GLOBAL/CELLPTR of the block's frame */
    int slot;
    Module *mod;
    ObjCell *cell;         /* SRC_CELLPTR (retained) */
    char *name;
    Opnd val;
} Output;

typedef struct Graph {
    Ins *code;
    int ncode, capcode;
    RegInfo *regs;
    int nregs, capregs;
    Tensor **consts;
    int nconsts, capconsts;
    InputSrc *inputs;
    int ninputs, capinputs;
    Guard *guards;
    int nguards, capguards;
    int nobjs;             /* containers read from inputs (for stores) */
    int nslots;            /* buffers shared by intermediates (opt.c's memory plan) */
    int nstacks;           /* PUSH/POP stacks (vm/compile/cgrad.c: values a backward loop reads) */
    Output *outputs;
    int noutputs, capoutputs;
    Opnd result;           /* static fn: the return value */
    bool has_result;
    /* the device the graph was compiled for (its tensor inputs', else the default device);
     * device_vm: run by the device executor (exec_dev.c), not the CPU's (the GPU, or
     * any graph under TSL_VM_DEVICE=1) */
    Device device;
    bool device_vm;
    /* compiled with subnormal flushing on (set_flush_denormal): the constants folded then were
     * flushed, so the graph runs only in the mode it was compiled in (vm/static.c lookup) */
    bool flush_denormal;
    /* set before opt_run: make no row groups (vm/opt/rows.c), whose reductions neither a graph
     * file nor the device executor holds (export, device graphs) */
    bool plain_groups;
    /* statistics for dis and TSL_EXPLAIN */
    int ops_before, fused_groups;
    int64_t bytes_saved;
    double compile_ms;
    /* run-time state kept between runs, so a hot graph allocates nothing */
    struct VmRegs *rf;       /* register file (tensors stay for reuse) */
    Value *vals;             /* fetched inputs */
    bool busy;               /* rf/vals in use (a nested run uses its own) */
    struct VmDev *dev;       /* the device executor's arena and captures (vm_impl.h), NULL until its first run */
    CallFrame *frames;       /* every inlined call's frame (Ins.frame points into them) */
    char *rt_values;         /* "pos (line 3), ...": variables with run-time shapes (TSL_EXPLAIN), or NULL */
    /* the containers the code changes, as pairs (input, 1 if it only pushes onto it), found on
     * first need (vm/saved.c) */
    int *changes;
    int nchanges;
    bool changes_found;
} Graph;

void graph_free(Graph *g);
void vm_dev_free(struct VmDev *d, int nregs);   /* vm/run/vm_dev.c */
void opnd_free(Opnd *o);
void ins_free(Ins *in);
int graph_emit(Graph *g, InsOp op, SrcLoc loc, Source *src);
int graph_reg(Graph *g, RegKind kind);
/* A new frame for a call inlined in `outer` (NULL: in the code compiled itself), owned by g. */
CallFrame *graph_frame(Graph *g, const char *name, Source *src, SrcLoc loc, CallFrame *outer);
/* Adds the frames of f and the calls it was inlined in, innermost first, to the pending
 * error's traceback. */
void graph_trace(Interp *I, const CallFrame *f);
const char *ins_name(InsOp op);
/* Sets Ins.rt on the instructions that touch a register with a run-time dim (SHAPE_RT):
 * whether g has any. After the optimizer, which may rewrite instructions. */
bool graph_mark_runtime(Graph *g);
/* Whether instruction in reads or writes a tensor register with a run-time dim. */
bool graph_ins_runtime(const Graph *g, const Ins *in);
/* Strings of a loaded graph live outside every interpreter (OBJ_DETACHED): made here, read
 * through graph_const_value (a copy for a detached string, else a new reference), freed by
 * graph_release_const. */
Value graph_detached_str(const char *s, size_t len);
Value graph_const_value(Value k);
void graph_release_const(Value k);

#endif
