/* comp.h - the static compiler's private interface, shared by its files:
 *   vm/compile/cvalue.c         compile-time values, failure reporting, emission, inputs and guards
 *   vm/compile/cexpr.c          expressions, indexing, calls, operands the VM builds
 *   vm/compile/cbuiltins.c      built-in functions in static code
 *   vm/compile/carray.c         lists indexed at run time, tensor arrays (lists grown in loops)
 *   vm/compile/compile.c        statements, loops and branches, the driver
 *   vm/compile/cflow.c          return, break and continue inside run-time branches and loops
 *   vm/compile/cslice.c         slices with a run-time start and a size known when compiling
 *   vm/compile/ccomp.c          comprehensions
 *   vm/compile/cprogress.c      for over progress(...): the bar as host instructions
 * See vm/compile/compile.c for how the compiler works. */
#ifndef TSL_COMP_H
#define TSL_COMP_H
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "compile.h"
#include "builtins.h"
#include "infer.h"
#include "mem.h"

/* ---------- compile-time values ---------- */

/* AV_STR: a string made at run time, in a host value register (reg) */
typedef enum { AV_NONE, AV_CONST, AV_NUM, AV_TENSOR, AV_LIST, AV_DICT, AV_CLOSURE, AV_STR } AVKind;

typedef enum { K_LOCAL, K_GLOBAL, K_CELL, K_INLINE } KeyKind;
typedef struct {
    KeyKind kind;
    int slot;        /* local slot; K_INLINE: activation id * 65536 + slot */
    void *ptr;       /* Module* (K_GLOBAL), ObjCell* (K_CELL) */
} VarKey;

typedef struct AStruct AStruct;
typedef struct CClosure {
    FnProto *proto;
    Module *mod;
    VarKey *caps;
    /* grad(f) / value_and_grad(f) of a function value f made in or read by static code:
     * calling it differentiates f (vm/compile/cgrad.c); proto is NULL then */
    struct AValBox *grad_of;
    bool with_value;
} CClosure;

/* The counter of a `for i in range(...)` loop (vm/compile/cslice.c): the values it takes. */
typedef struct ARange {
    int reg;             /* its register */
    bool bounded;        /* lo and hi are known when compiling */
    double lo, hi;       /* its smallest and largest values (a loop that never runs: lo == hi == start) */
    uint64_t stop_deps;  /* number inputs the range's stop depends on (guarded when hi is used) */
    const char *stop_name;   /* the stop as written when it is a name, for messages, or NULL */
} ARange;

typedef struct {
    AVKind kind;
    Value k;
    int reg;
    bool known, is_bool;
    double num;
    uint64_t deps;   /* number inputs this value depends on (bit i: c->numguards[i]) */
    DType dtype;
    Shape shape;
    AStruct *st;
    CClosure *cl;
    int unset;       /* a home that may be unbound: its run-time flag register + 1 (0: bound) */
    bool poison;     /* AV_NONE: a variable no register follows after a region (compile.c) */
    /* a number that is lin_a * counter + lin_b this iteration, for a range loop's counter
     * (NULL: not known to be); lin_a and lin_b integers, fixed by the guards in deps */
    const ARange *range;
    double lin_a, lin_b;
} AVal;

struct AValBox { AVal v; };

struct AStruct {
    bool dict;
    int n, cap;
    AVal *items;
    char **keys;
    int obj;          /* container index when the structure is an input, else -1 */
    int born;         /* Comp.nsnaps when it was made: dry runs tell their own structures */
    /* an input structure the code adds to at run time (push, a new key): its length and
     * keys past the guarded ones are not known when compiling (grown); the code read its
     * length or the absence of a key (len_read: its guard then pins them exactly) */
    bool grown, len_read;
    bool items_unknown;   /* a store with a key made at run time may have replaced any item */
    bool shrunk;          /* an input that static code deleted from at run time: positions moved */
    bool wants_host;      /* a dict made in the block that a dry run stored into with a run-time key */
    struct TArray *ta;   /* a list grown in a run-time loop: its stacked buffer (carray.c), or NULL */
    bool selected;       /* a dict chosen by an index of the run (carray.c): a store into it would
                          * not reach the list's item */
    bool is_home;        /* a loop's or branch's home for a list or dict variable (compile.c) */
    bool escaped;        /* made in the block and stored into a container of the program (cc_escape) */
};

typedef struct {
    VarKey key;
    AVal v;
    bool assigned;    /* written by the static code: written back when it ends */
    const char *name;
} Binding;

/* A hash index over a Binding array (the environment, the inputs): key -> its latest
 * position, so a lookup is one probe however many variables the code has. Entries are never
 * deleted: one whose position is past the array's end (a rollback) or holds another key is
 * stale and reads as absent. */
typedef struct {
    VarKey key;
    int pos;          /* -1: empty slot */
} KeySlot;
typedef struct {
    KeySlot *slots;
    int cap, used;
} KeyIndex;

typedef struct {
    int pos;          /* a binding a dry run overwrote, and its value before */
    Binding old;
} EnvUndo;

/* Where a value that changes inside a loop or run-time branch lives: a variable (st NULL)
 * or item `slot` of a compile-time list or dict. */
typedef struct Home {
    VarKey key;
    AVal home;
    const char *name;
    AStruct *st;
    int slot;
} Home;

typedef struct Loop {
    struct Loop *outer;
    Home *homes;
    int nhomes;
    int *breaks, nbreaks;
    int *conts, nconts;
    int flow;        /* break/continue set flags of the loop (vm/compile/cflow.c): their id; 0: they jump */
} Loop;

/* An inlined function activation. */
typedef struct Inline {
    struct Inline *outer;
    int id;
    FnProto *proto;
    Module *mod;
    ObjClosure *closure;   /* a real closure (its upvalues are cells), or NULL */
    CClosure *cclosure;    /* a closure made by static code, or NULL */
    bool returned;
    AVal result;
    int depth_at_entry;    /* runtime-branch depth when the function was entered */
    CallFrame *frame;      /* its traceback frame (NULL for the fn compiled itself) */
    const AVal *args;      /* its parameters' values (AV_NONE: the default), for the recursion check */
    unsigned long known_changes;   /* Comp.known_changes when it was entered */
} Inline;

typedef struct {
    AStruct *st;
    int n;
    AVal *items;
    char **keys;
    int obj;                      /* a list made host by the dry run (vm/compile/chost.c) */
    bool grown, items_unknown, wants_host, escaped, shrunk;
    struct TArray *ta;
} Undo;

typedef struct CTape CTape;   /* vm/compile/cgrad.c */

typedef struct {
    Interp *I;
    Graph *g;
    CTape *tape;             /* the innermost static grad being compiled, or NULL */
    Frame *frame;            /* the block's live frame (static block) */
    ObjClosure *fn;          /* the static fn (static fn) */
    Value *params;
    const uint32_t *dyn;     /* compile_fn's: per parameter, the axes of its tensor that take any size, or NULL */
    Module *mod;
    Source *src;
    SrcLoc loc;
    Binding *env;
    int nenv, capenv;
    Binding *inputs;         /* lifted inputs by source, so a source is read once */
    int ninputs, capinputs;
    struct LiftedObj { Obj *o; AStruct *st; } *lifted;   /* containers read from inputs: one */
    int nlifted, caplifted;  /* structure however many names reach it (cc_lift) */
    KeyIndex envix, inputix;  /* lookups into env and inputs (cc_env_find, cc_input_find) */
    EnvUndo *envlog;          /* bindings overwritten in dry runs (rolled back by position) */
    int nenvlog, capenvlog;
    int numguards[64];
    int nnum;
    Inline *ictx;
    int next_inline;
    int inline_depth;
    int inlined;             /* calls inlined so far (a compile budget) */
    double give_up_ms;       /* the compile budget: this thread's CPU ms when it runs out */
    int nstmts;              /* statements compiled (the clock is read every 64) */
    Loop *loop;
    int branch_depth;        /* inside a run-time branch or loop */
    int try_depth;           /* compiling a try's body at branch depth try_depth - 1; 0: none (ctry.c) */
    int err_depth, err_dry;  /* branch_depth and dry when the pending compile error was raised */
    int decided;             /* conditions on known numbers decided so far (vm/compile/compile.c, prepare_homes) */
    struct CProgress *bar;   /* a progress() bar for the next counted loop to take (cprogress.c) */
    int dry;
    Undo *undo;
    int nundo, capundo;
    int undo_base;           /* first entry of the innermost dry run */
    int nsnaps;              /* dry runs started so far */
    unsigned long known_changes;   /* changes to structures and captured variables so far (cexpr.c's
                                    * recursion check: state a call may read besides its arguments) */
    int snap_id;             /* the innermost dry run's number, 0 outside */
    void **arena;
    int narena, caparena;
    Value *vals;             /* values the compiler made (strings, folded results) */
    int nvals, capvals;
    bool failed;
    CompileStatus status;
    char *why;
    size_t whylen;
} Comp;

extern const AVal FAILV;





AVal cc_unsupported(Comp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
AVal cc_error_at(Comp *c, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same with the error's kind; cc_error_at's is ERRK_VALUE, or op_error_kind() when the
 * message is the ops layer's pending one. */
AVal cc_error_atk(Comp *c, ErrKind k, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* A compile error inside inlined calls: their traceback frames, as eager calls add them. */
void cc_trace_inlined(Comp *c);
AVal cc_op_failed(Comp *c);
AVal cc_folded(Comp *c, Value r, SrcLoc loc);
Ins *cc_emit(Comp *c, InsOp op);
int cc_new_num(Comp *c, bool is_bool);
int cc_new_tensor(Comp *c, DType dt, const Shape *s);
int cc_new_val(Comp *c);
/* st's length or key set, which the code now depends on (see AStruct.grown); grow: the code
 * adds to input structure st at run time (vm/compile/chost.c). */
int cc_struct_n(Comp *c, AStruct *st);
/* A constant list index, negative from the end, checked against what is known (chost.c). */
bool cc_list_index(Comp *c, AStruct *st, int64_t *i);
/* A read of an item of a dict a store with a run-time key may have changed (AStruct.items_unknown). */
AVal cc_unknown_items(Comp *c);
void cc_struct_grows(Comp *c, AStruct *st);
/* Host values (vm/compile/chost.c): a + b or a comparison with a string made at run time
 * (handled: *out set), a built-in called on host values at run time. */
bool cc_host_binary(Comp *c, int op, AVal a, AVal b, AVal *out);
AVal cc_host_call(Comp *c, ObjBuiltin *b, AVal *args, int nargs, bool to_num);
AVal cc_host_len(Comp *c, ObjBuiltin *len, AVal x);
/* b called on args when the block runs, for its effect (no result); false: an operand a host
 * instruction cannot take. */
bool cc_host_effect(Comp *c, ObjBuiltin *b, AVal *args, int nargs);
AVal cc_host_index(Comp *c, AVal obj, AVal key);   /* d[k], k a string made at run time */   /* of a run-time string, a grown list or dict */
/* push(l, x) / extend(l, xs) (v: the bound arguments) onto list l from outside the block;
 * d[k] = x with key k made at run time; V[dst] := a string (a move into a home). */
AVal cc_host_push(Comp *c, ObjBuiltin *b, AVal *v, bool extend);
void cc_host_dict_set(Comp *c, AStruct *st, AVal key, AVal v);
void cc_host_move(Comp *c, int dst, AVal v);
/* A list made in the block (st, n items before a loop or branch, more after its dry run)
 * that can live at run time instead: its items numbers, strings, tensors, not all that were
 * pushed tensors; cc_host_list makes it (or a dict made in the block that gets a key made at
 * run time) one, before the region: a container index like an input's. */
bool cc_host_list_fits(const AStruct *st, int n_before);
void cc_host_list(Comp *c, AStruct *st);
AVal cc_tensor_av(Comp *c, DType dt, const Shape *s);
AVal cc_num_const(double x);
AVal cc_bool_const(bool b);
AVal cc_const_av(Value k);
int cc_num_reg(Comp *c, AVal *v);
AVal cc_tensor_const(Comp *c, Tensor *t);
AStruct *cc_astruct_new(Comp *c, bool dict);
void cc_undo_save(Comp *c, AStruct *s);
void cc_escape(Comp *c, AVal v);
void cc_astruct_push(Comp *c, AStruct *s, const char *key, AVal v);
int cc_astruct_find(AStruct *s, const char *key);
bool cc_key_eq(VarKey a, VarKey b);
Binding *cc_env_find(Comp *c, VarKey k);
Binding *cc_input_find(Comp *c, VarKey k);
void cc_key_indexed(KeyIndex *ix, VarKey k, int pos);   /* after appending a binding at pos */
void cc_env_set(Comp *c, VarKey k, AVal v, const char *name, bool assigned);
int cc_add_guard(Comp *c, GuardKind kind, int input);
int cc_add_input(Comp *c, InputSrc src);
AVal cc_lift(Comp *c, Value v, int in, const char *name);
bool cc_key_source(Comp *c, VarKey k, Value *val, InputSrc *src);
AVal cc_read_key(Comp *c, VarKey k, const char *name);
VarKey cc_name_key(Comp *c, Node *n);
bool cc_need_const(Comp *c, AVal *v, double *out, const char *what);
/* del and pop (cdel.c): the item taken out of a list or dict the block made */
AVal cc_take(Comp *c, AVal obj, AVal key, AVal dflt, bool del, SrcLoc loc);
AVal cc_host_remove(Comp *c, ObjBuiltin *b, AVal obj, AVal key, int at);
void cc_del(Comp *c, Node *n);
bool cc_need_int(Comp *c, AVal *v, int64_t *out, const char *what);
bool cc_pure_value(Comp *c, AVal *v, Value *out);
AVal cc_from_value(Comp *c, Value v);
AVal cc_expr(Comp *c, Node *n);
AVal cc_binary_values(Comp *c, int op, AVal a, AVal b, SrcLoc loc);
AVal cc_cond(Comp *c, Node *n);
AVal cc_and_or_runtime(Comp *c, Node *n, int ra, bool value);
void cc_stmt(Comp *c, Node *n);
void cc_block(Comp *c, Node *b);
void cc_for_stmt(Comp *c, Node *n);
/* for x in progress(ITER, total, desc) (cprogress.c): the loop over ITER compiled by
 * cc_for_stmt, which takes the bar from Comp.bar at once and hands it to the counted loop it
 * makes (a range or a tensor's rows); that loop emits cprogress_begin before its first
 * iteration, a tick at the end of each and cprogress_end where it exits. Any other loop
 * refuses it: the code runs eagerly. */
typedef struct CProgress {
    AVal total, desc;    /* progress()'s (AV_NONE: not given) */
    bool begun;
} CProgress;
bool cprogress_is_call(Comp *c, Node *it);
void cprogress_for(Comp *c, Node *n);
void cprogress_begin(Comp *c, CProgress *p, double start, AVal stop, double step);
void cprogress_tick(Comp *c, CProgress *p);
void cprogress_end(Comp *c, CProgress *p);
/* obj[key] = v (obj.key = v) into a list or dict the compiler knows. */
void cc_store_struct(Comp *c, AVal obj, AVal key, AVal v, SrcLoc loc);
/* vm/compile/ccomp.c: a comprehension's value, and its COLLECT statement */
AVal cc_comprehension(Comp *c, Node *n);
void cc_collect(Comp *c, Node *n);
void cc_try(Comp *c, Node *n);   /* ctry.c */
/* Whether the code being compiled is in a try's body and runs whenever the body does. */
static inline bool cc_try_reaches(const Comp *c) { return c->try_depth && c->branch_depth == c->try_depth - 1; }
AVal cc_call_value(Comp *c, AVal fn, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, SrcLoc loc);
/* One OP instruction over operands (tensors, numbers, or absent: kind AV_NONE); attrs NULL
 * for the op's defaults. cc_call_op binds a built-in call's arguments first. */
AVal cc_emit_op(Comp *c, OpCode op, AVal *ops, int n, const OpAttrs *attrs);
AVal cc_call_op(Comp *c, OpCode op, AVal *args, int nargs, char **kwn, AVal *kw, int nkw);
int cc_truth(Comp *c, AVal v, int *reg, SrcLoc loc);
Opnd cc_opnd_of(Comp *c, AVal v);
AVal cc_compile_builtin(Comp *c, const char *name, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, SrcLoc loc);
AVal cc_index_tensor(Comp *c, AVal t, Node *n, AVal *set_value);
AVal cc_make_closure(Comp *c, FnProto *p);
/* Runs x and returns FAILV from the enclosing function if compilation has failed. */
#define TRY(x)                                                                     \
    do {                                                                           \
        x;                                                                         \
        if (c->failed) return FAILV;                                               \
    } while (0)

/* vm/compile/cgrad.c: grad in static code. cc_emit_op records each op on the active tapes; a tensor
 * moved into a home keeps its tape variable. */
AVal cgrad_make(Comp *c, AVal f, bool with_value);
AVal cgrad_call(Comp *c, AVal f, bool with_value, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, SrcLoc loc);
void cgrad_record(Comp *c, OpCode op, AVal *ops, int n, const OpAttrs *at, AVal *res);
void cgrad_move(Comp *c, int dst, int src);
bool cgrad_tracked(Comp *c, int reg);
/* Whether a tape encloses the active one (grad(grad(f)) is being compiled). */
bool cgrad_nested(Comp *c);
/* item()/float() (what) of a tracked register at loc: the first such cut on each active tape
 * is where a result that reaches the argument only through it was cut (GRAD_CUT_MSG). */
void cgrad_cut(Comp *c, const char *what, SrcLoc loc);
/* A run-time loop while a tape is active: begin after its homes are made (home registers,
 * the counter register or -1), body_end after the body (the registers the homes are about
 * to take; whether the loop breaks or continues), end after the loop. */
void cgrad_loop_begin(Comp *c, const int *home_regs, int nhomes, int counter);
void cgrad_loop_body_end(Comp *c, const int *new_regs, bool jumps_out);
void cgrad_loop_end(Comp *c);
/* The newest recorded op, the one that computed reg, is a push onto a tensor array (carray.c). */
void cgrad_push_node(Comp *c, int reg);
/* A run-time branch while a tape is active: begin after its homes are made (their
 * registers, the flag register of each that may be unbound or -1, the condition's register), else after the
 * then-branch's home moves, end after the else-branch's. */
void cgrad_branch_begin(Comp *c, const int *home_regs, const int *unset, int nhomes, int cond);
void cgrad_branch_else(Comp *c);
void cgrad_branch_end(Comp *c);

/* vm/compile/cslice.c: a range loop's counter (after its register is made; stop_node the
 * stop as written), the affine form of a number computed from one (after num op a/b or -a),
 * and a slice item whose bounds are numbers of the run (bound[0..2]: start, stop, step,
 * kind AV_NONE when absent). cslice_try fills the item and its start register when the
 * slice's size and bounds are provable when compiling, else leaves why, false. */
void cslice_counter(Comp *c, AVal *counter, double start, double step, const AVal *stop, const Node *stop_node);
void cslice_affine(AVal *r, int tok, const AVal *a, const AVal *b);
bool cslice_try(Comp *c, const AVal *t, const Node *index, int k, const AVal *bound, IndexItem *item, int *reg,
                char *why, size_t whylen);
/* Turns the number inputs in deps into guards of their current values. */
void cc_guard_deps(Comp *c, uint64_t deps);
/* Marks the guards on deps as a range stop's: vm/static.c stops making them after two misses. */
void cslice_mark_stop_guards(Comp *c, uint64_t deps);
/* vm/compile/carray.c: a list indexed by a number known only at run time; tensor arrays, lists
 * of tensors grown in a run-time loop (opened before it, closed after it, pushed onto in it). */
AVal ca_select(Comp *c, AStruct *st, AVal key, SrcLoc loc);
bool ca_selectable(Comp *c, AStruct *st);   /* whether ca_select can choose among its items */
AVal cc_index_row(Comp *c, AVal t, int64_t k, int kreg);   /* row k, or row N[kreg] (kreg >= 0), of t */
AVal ca_runtime_growth(Comp *c);
bool ca_can_grow(Comp *c, AStruct *st, int n0, int trips);
bool ca_open(Comp *c, AStruct *st, int n0, int rows, const AVal *first);
void ca_close(Comp *c, AStruct *st);
bool ca_is_open(const AStruct *st);
AVal ca_read_open(Comp *c);
AVal ca_push(Comp *c, AStruct *st, AVal v);
AVal ca_len(Comp *c, AStruct *st);
bool ca_join(Comp *c, OpCode op, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, AVal *out);

/* A run-time branch on number register cond: then and else each compile one side (fn NULL:
 * nothing); else_returned: the else side is a path that has already returned. */
typedef struct {
    void (*fn)(Comp *, void *);
    void *arg;
} Side;
void cc_runtime_branch(Comp *c, int cond, SrcLoc loc, Side then, Side els, bool else_returned);

/* vm/compile/cflow.c: return, break and continue inside run-time branches and loops. */
typedef struct {
    VarKey key[3];
    AVal before[3];   /* the flags' bindings before a statement */
    int n;
    VarKey live[3];   /* flags that may be set at run time by now */
    int nlive;
} FlowWatch;
void cflow_enter(Comp *c, Inline *ic);
AVal cflow_result(Comp *c, Inline *ic);
void cflow_return(Comp *c, Node *n);
bool cflow_jump(Comp *c, bool is_break);
void cflow_loop_enter(Comp *c, int id);
void cflow_body_enter(Comp *c, int id);
int cflow_loop_exits(Comp *c, const Home *homes, int nhomes, int flow, int *at);
bool cflow_left_by_return(Comp *c, const Home *homes, int nhomes, int flow);
void cflow_watch(Comp *c, FlowWatch *w);
bool cflow_after(Comp *c, FlowWatch *w);
void cflow_run(Comp *c, FlowWatch *w, Side s);
void cflow_statements(Comp *c, Node *blk, int from, int to);
/* vm/compile/cshape.c: run-time shapes (SHAPE_RT dimensions). cs_infer: op_infer over operands
 * with unknown dimensions (-1, unsupported, when the result's shape needs their value);
 * cs_index_shape: an index's shape when its source is such or an item is a bool mask;
 * cs_home_shape: a loop or branch home's shape from the values before and after; cs_note_value:
 * a variable bound to such a value, for TSL_EXPLAIN. */
bool cs_any_runtime(const AVal *ops, int n);
int cs_infer(Comp *c, OpCall *call, Shape *so, DType *dt);
int cs_op_infer(OpCall *call, Shape *so, DType *dt);   /* op_infer over a stand-in size: for dtypes */
bool cs_index_shape(Comp *c, const Shape *t, IndexItem *items, int n, const int *regs, int nargs, int mask_at, int mask_ndim,
                    Shape *so);
/* Bound j (0 start, 1 stop) of slice item k of an n-item index, a number v known only at run
 * time: its register goes to (*regs)[n + 2k + j], the array grown to 3n entries (*nargs). */
void cs_slice_bound(Comp *c, AVal *v, int n, int k, int j, int **regs, int *nargs);
/* The size of t's axis (-1: its element count): a constant, or the run's (a DIM instruction). */
AVal cs_dim(Comp *c, AVal t, int axis);
void cs_home_shape(const AVal *before, const AVal *after, Shape *s);
void cs_note_value(Comp *c, const char *name, const AVal *v);

void *cc_arena_alloc(Comp *c, size_t n);
Value cc_keep_value(Comp *c, Value v);

#endif
