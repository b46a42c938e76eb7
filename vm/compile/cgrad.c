/* cgrad.c - grad and value_and_grad in static code (spec section 7).
 *
 * The static gradient is the eager one, replayed at compile time. While the compiler inlines
 * f, every OP instruction it emits with a tracked tensor operand is recorded on a compile-time
 * tape (cgrad_record, called by cc_emit_op), exactly where the eager tape records the same op
 * call (lang/autograd.c). Backward then walks that tape in reverse creation order and runs
 * the same rules (ops/grad.c) through a GradBuilder whose ops are emitted as instructions
 * instead of run, accumulating with the same adds in the same order. The backward graph is
 * therefore the eager computation written down, and the two agree bit for bit on the CPU.
 *
 * Registers play the part of the eager tape's tensors: a register maps to the newest tape
 * variable holding it. A tensor moved into a loop or branch home keeps its variable; an op on
 * a tracked value inside a run-time loop or branch is not compiled yet (the block then runs
 * eagerly, and says why). grad(grad(f)) nests tapes as eager code does: an inner backward's
 * ops are recorded on the outer tape. */
#include "comp.h"
#include "autograd.h"
#include "grad.h"

typedef struct {
    OpCode op;
    int nin;
    GVal *x;           /* operands: tensor registers, numbers or number registers (owned) */
    int *in_var;       /* tape variable of each operand, -1 none (owned, with x) */
    OpAttrs at;
    GVal y;            /* the result (res[out_k]) */
    int out_var;
    int out_k;         /* which result of the call (rules differentiate result 0 only) */
    bool sink;         /* a push onto a tensor array: its backward runs first in its iteration */
} CNode;

typedef struct {
    GVal grad;         /* the gradient so far (ok false: none yet) */
    int pend;          /* -1: grad, if any, is certain; else pending (see settle) */
} CVar;

/* A loop home while the loop is recorded: the variable of its value before the loop
 * (var_init), of its value when an iteration starts (var_start, made for the loop) and of
 * the value an iteration leaves in it (var_end). */
typedef struct {
    int reg;
    int var_init, var_start, var_end;
} CHome;

/* A run-time loop recorded on the tape: its nodes [first_node, last_node) ran once per
 * iteration; the registers in saved[] were pushed at the end of each iteration (stack[i]),
 * and count_reg counted the iterations. Backward runs its nodes in a loop of its own. */
typedef struct {
    int first_node, last_node;
    int first_var, end_var;   /* variables made inside the loop: [first_var, end_var) */
    int first_reg;     /* registers made inside the loop are >= first_reg */
    int counter;       /* the loop counter register, -1 */
    CHome *homes;
    int nhomes;
    int *home_regs;    /* every home register (numbers too): values that change per iteration */
    int nhome_regs;
    int count_reg;
    int *saved, *stack, *push_at;   /* saved registers, their stacks, their PUSH instructions */
    int nsaved;
    int parent;        /* the region it is nested in (a RegionRef), 0 at the tape's top */
    bool done;         /* its backward is emitted */
    bool body_done;
    bool dead;         /* nothing tracked flows through it: dropped from the tape */
} CLoop;

/* A run-time branch recorded on the tape: the nodes of the then-branch [then_first,
 * then_last) and of the else-branch [then_last, else_last); flag tells backward which ran.
 * A home of the branch ends as var_then (after the then-branch), var_else, and var_after
 * (made for the value after the branch, whichever ran). */
typedef struct {
    int reg;
    int var_init, var_then, var_else, var_after;
} CBHome;

typedef struct {
    int flag;
    int then_first, then_last, else_last;
    int first_var, end_var;   /* variables made inside the branch: [first_var, end_var) */
    CBHome *homes;
    int nhomes;
    int *shadow;       /* per home: a register holding its value before the branch, -1 none */
    int parent;        /* the region it is nested in (a RegionRef), 0 at the tape's top */
    bool in_else, done;
} CBranch;

/* A region of the tape: loop i is i + 1, branch i is -(i + 1), 0 the tape's top level. */
typedef int RegionRef;
#define MAX_REGION_DEPTH 16

struct CTape {
    CVar *vars;
    int nvars, capvars;
    CNode *nodes;
    int nnodes, capnodes;
    int nnodes_made;   /* nodes whose operand arrays exist (a dropped loop's stay until the end) */
    int *var_of_reg;   /* register -> newest variable, -1 none */
    int nmap;
    int depth;         /* the compiler's run-time branch depth when the tape started */
    int dry;           /* the compiler's dry-run level then: dry runs of loop bodies record nothing */
    CLoop *loops;
    int nloops, caploops;
    CBranch *branches;
    int nbranches, capbranches;
    RegionRef open[MAX_REGION_DEPTH];   /* the regions being recorded, outermost first */
    int nopen;
    int nest;          /* loops or branches begun where no region can start (their ops fail) */
    int *redirect;     /* backward: variable -> the one its gradient goes to instead (-1 none) */
    CTape *outer;
    const char *cut_by;   /* the first item()/float() of a tracked value (cgrad_cut), NULL none */
    SrcLoc cut_at;
};

static bool is_float(DType dt) { return dt == DT_F32 || dt == DT_F64; }

static int var_of(const CTape *tp, int reg) { return reg >= 0 && reg < tp->nmap ? tp->var_of_reg[reg] : -1; }

static void map_reg(CTape *tp, int reg, int var) {
    if (reg >= tp->nmap) {
        int n = tp->nmap ? tp->nmap : 64;
        while (n <= reg) n *= 2;
        tp->var_of_reg = mem_realloc(tp->var_of_reg, sizeof(int) * (size_t)n);
        for (int i = tp->nmap; i < n; i++) tp->var_of_reg[i] = -1;
        tp->nmap = n;
    }
    tp->var_of_reg[reg] = var;
}

/* A new variable for register reg; reg now maps to it. */
static int new_var(CTape *tp, int reg) {
    GROW(tp->vars, tp->nvars, tp->capvars);
    tp->vars[tp->nvars] = (CVar){ gb_none(), -1 };
    map_reg(tp, reg, tp->nvars);
    return tp->nvars++;
}

static void tape_free(CTape *tp) {
    for (int i = 0; i < tp->nloops; i++) {
        mem_free(tp->loops[i].homes);
        mem_free(tp->loops[i].home_regs);
        mem_free(tp->loops[i].saved);
        mem_free(tp->loops[i].stack);
        mem_free(tp->loops[i].push_at);
    }
    mem_free(tp->loops);
    for (int i = 0; i < tp->nnodes_made; i++) mem_free(tp->nodes[i].x);
    for (int i = 0; i < tp->nbranches; i++) {
        mem_free(tp->branches[i].homes);
        mem_free(tp->branches[i].shadow);
    }
    mem_free(tp->branches);
    mem_free(tp->redirect);
    mem_free(tp->vars);
    mem_free(tp->nodes);
    mem_free(tp->var_of_reg);
}

/* The deepest run-time branch depth at which the tape records: its own, one deeper in each
 * region (loop or branch) being recorded. */
static int record_depth(const CTape *tp) { return tp->depth + tp->nopen; }
static RegionRef innermost(const CTape *tp) { return tp->nopen ? tp->open[tp->nopen - 1] : 0; }
static CLoop *open_loop(CTape *tp) { RegionRef r = innermost(tp); return r > 0 ? &tp->loops[r - 1] : NULL; }
static CBranch *open_branch(CTape *tp) { RegionRef r = innermost(tp); return r < 0 ? &tp->branches[-r - 1] : NULL; }

static AVal not_compiled(Comp *c) {
    return cc_unsupported(c, "a gradient through a run-time branch or loop nested this way is not compiled yet");
}

/* The handle of a compiled operand: a tensor register, a constant number, or a number
 * register (a number only known at run time). */
static GVal gval_of(Comp *c, AVal *v) {
    if (v->kind == AV_TENSOR) return gb_reg(v->reg, v->dtype, &v->shape);
    if (v->kind == AV_NUM && v->known && !v->deps) return gb_num(v->num);
    if (v->kind == AV_NUM) return (GVal){ .reg = cc_num_reg(c, v), .is_num = true };
    return gb_none();
}

static AVal aval_of(GVal v) {
    if (v.is_num && v.reg < 0) return cc_num_const(v.x);
    if (v.is_num) return (AVal){ .kind = AV_NUM, .reg = v.reg };
    return (AVal){ .kind = AV_TENSOR, .reg = v.reg, .dtype = v.dtype, .shape = v.shape };
}

static void record_on(Comp *c, CTape *tp, OpCode op, AVal *ops, int n, const OpAttrs *at, AVal *res, int k) {
    bool any = false;
    for (int i = 0; i < n && !any; i++) any = ops[i].kind == AV_TENSOR && var_of(tp, ops[i].reg) >= 0;
    if (!any || c->dry > tp->dry) return;
    if (c->branch_depth > record_depth(tp)) {
        not_compiled(c);
        return;
    }
    GROW(tp->nodes, tp->nnodes, tp->capnodes);
    if (tp->nnodes < tp->nnodes_made) mem_free(tp->nodes[tp->nnodes].x);   /* a dropped loop's node */
    CNode *nd = &tp->nodes[tp->nnodes++];
    if (tp->nnodes > tp->nnodes_made) tp->nnodes_made = tp->nnodes;
    nd->op = op;
    nd->sink = false;
    nd->nin = n;
    nd->x = mem_alloc((sizeof(GVal) + sizeof(int)) * (size_t)(n + 1));   /* a concat may have many */
    nd->in_var = (int *)(nd->x + n + 1);
    nd->at = *at;
    for (int i = 0; i < n; i++) {
        nd->x[i] = gval_of(c, &ops[i]);
        for (int o = 0; o < tp->nopen && nd->x[i].reg >= 0 && !nd->x[i].is_num; o++) {
            /* a home of a branch is overwritten when the branch ends: backward reads the
             * value it had when the node ran, the copy made before the branch */
            if (tp->open[o] >= 0) continue;
            CBranch *B = &tp->branches[-tp->open[o] - 1];
            for (int h = 0; h < B->nhomes; h++)
                if (B->homes[h].reg == nd->x[i].reg) nd->x[i].reg = B->shadow[h];
        }
        nd->in_var[i] = ops[i].kind == AV_TENSOR && is_float(ops[i].dtype) ? var_of(tp, ops[i].reg) : -1;
    }
    nd->y = gval_of(c, &res[k]);
    nd->out_var = new_var(tp, res[k].reg);
    nd->out_k = k;
}

/* Each float result gets a node, as eagerly: a gradient that reaches a later result of a
 * multi-result op then stops with eager's error instead of silently being zero. */
void cgrad_record(Comp *c, OpCode op, AVal *ops, int n, const OpAttrs *at, AVal *res) {
    if (cs_any_runtime(ops, n) || cs_any_runtime(res, op_info[op].nout))   /* its rules would need the sizes */
        for (int k = 0; k < n; k++)
            if (ops[k].kind == AV_TENSOR && cgrad_tracked(c, ops[k].reg)) {
                /* take: how a tracked index records itself (index_tracked), a bool mask's here */
                bool take = op == OP_TAKE;
                cc_unsupported(c, "a gradient through %s%s of a value with a run-time shape",
                               take ? "an index" : op_info[op].name, take ? "" : "()");
                return;
            }
    for (int k = 0; k < op_info[op].nout; k++)
        if (res[k].kind == AV_TENSOR && is_float(res[k].dtype))   /* non-float results carry no gradient */
            for (CTape *tp = c->tape; tp && !c->failed; tp = tp->outer) record_on(c, tp, op, ops, n, at, res, k);
}

/* A tensor moved into a loop or branch home: the home holds the same variable. */
void cgrad_move(Comp *c, int dst, int src) {
    for (CTape *tp = c->tape; tp; tp = tp->outer) {
        int v = var_of(tp, src);
        if (c->dry > tp->dry) continue;
        if (v >= 0 && c->branch_depth > record_depth(tp)) {
            not_compiled(c);
            return;
        }
        if (v >= 0 || var_of(tp, dst) >= 0) map_reg(tp, dst, v);
    }
}

bool cgrad_nested(Comp *c) { return c->tape && c->tape->outer; }

bool cgrad_tracked(Comp *c, int reg) {
    for (CTape *tp = c->tape; tp; tp = tp->outer)
        if (var_of(tp, reg) >= 0) return true;
    return false;
}

void cgrad_cut(Comp *c, const char *what, SrcLoc loc) {
    for (CTape *tp = c->tape; tp; tp = tp->outer)
        if (!tp->cut_by) {
            tp->cut_by = what;
            tp->cut_at = loc;
        }
}


/* ---------- run-time loops ---------- */

static int num_const_reg(Comp *c, double x) {
    AVal k = cc_num_const(x);
    return cc_num_reg(c, &k);
}

static void emit_nbin(Comp *c, int dst, int a, int b, OpCode op) {
    Ins *in = cc_emit(c, I_NBIN);
    in->dst = dst;
    in->a = a;
    in->b = b;
    in->aux = op;
}

/* Whether a loop or branch starting now is recorded as a region of tp: only at the tape's own
 * depth, outside dry runs and other regions; otherwise it is counted as nested (an op on a
 * tracked value inside it then makes the code run eagerly). */
static bool region_starts(Comp *c, CTape *tp) {
    if (tp->nest || c->branch_depth != tp->depth + tp->nopen || c->dry > tp->dry || tp->nopen == MAX_REGION_DEPTH) {
        tp->nest++;
        return false;
    }
    return true;
}

static void loop_begin(Comp *c, CTape *tp, const int *home_regs, int nhomes, int counter) {
    if (!region_starts(c, tp)) return;
    GROW(tp->loops, tp->nloops, tp->caploops);
    CLoop *L = &tp->loops[tp->nloops];
    memset(L, 0, sizeof *L);
    L->parent = innermost(tp);
    tp->open[tp->nopen++] = ++tp->nloops;
    L->counter = counter;
    L->count_reg = cc_new_num(c, false);
    Ins *in = cc_emit(c, I_NCONST);   /* iterations run: 0 */
    in->dst = L->count_reg;
    L->first_node = tp->nnodes;
    L->first_var = tp->nvars;
    L->home_regs = mem_alloc(sizeof(int) * (size_t)(nhomes + 1));
    L->homes = mem_alloc(sizeof(CHome) * (size_t)(nhomes + 1));
    for (int i = 0; i < nhomes; i++) {
        int r = home_regs[i];
        if (r < 0) continue;
        L->home_regs[L->nhome_regs++] = r;
        const RegInfo *ri = &c->g->regs[r];
        if (ri->kind != R_TENSOR || !is_float(ri->dtype)) continue;
        /* every float home may carry a gradient from one iteration to the next */
        CHome *h = &L->homes[L->nhomes++];
        h->reg = r;
        h->var_init = var_of(tp, r);
        h->var_start = new_var(tp, r);
        h->var_end = -1;
    }
    L->first_reg = c->g->nregs;
}

void cgrad_loop_begin(Comp *c, const int *home_regs, int nhomes, int counter) {
    for (CTape *tp = c->tape; tp; tp = tp->outer) loop_begin(c, tp, home_regs, nhomes, counter);
}

static bool loop_variant(const CLoop *L, int reg) {
    if (reg < 0) return false;
    if (reg >= L->first_reg || reg == L->counter) return true;
    for (int i = 0; i < L->nhome_regs; i++)
        if (L->home_regs[i] == reg) return true;
    return false;
}

/* Whether any node of the loop depends on a tracked value (an outside variable, or a home
 * whose value comes in tracked or is made tracked by an iteration): a loop that only
 * computes constants needs no backward. */
static bool loop_live(CTape *tp, CLoop *L) {
    bool *live = mem_calloc((size_t)tp->nvars + 1, sizeof(bool));
    for (int v = 0; v < L->first_var; v++) live[v] = true;
    for (int i = 0; i < L->nhomes; i++) live[L->homes[i].var_start] = L->homes[i].var_init >= 0;
    bool any = false, changed = true;
    while (changed) {
        changed = false;
        for (int k = L->first_node; k < L->last_node; k++) {
            CNode *nd = &tp->nodes[k];
            for (int i = 0; i < nd->nin && !live[nd->out_var]; i++)
                if (nd->in_var[i] >= 0 && live[nd->in_var[i]]) live[nd->out_var] = any = true;
        }
        for (int i = 0; i < L->nhomes; i++) {   /* carried into the next iteration */
            CHome *h = &L->homes[i];
            if (h->var_end >= 0 && live[h->var_end] && !live[h->var_start]) live[h->var_start] = changed = true;
        }
    }
    mem_free(live);
    return any;
}

/* Whether region r is nested (at any depth) inside region outer. */
static bool nested_in(const CTape *tp, RegionRef r, RegionRef outer) {
    while (r != 0) {
        r = r > 0 ? tp->loops[r - 1].parent : tp->branches[-r - 1].parent;
        if (r == outer) return true;
    }
    return false;
}

/* Drops a loop that nothing tracked flows through, and every region recorded inside it. */
static void drop_loop(CTape *tp, CLoop *L) {
    RegionRef self = (RegionRef)(L - tp->loops) + 1;
    L->dead = true;
    tp->nnodes = L->first_node;
    for (int i = 0; i < tp->nloops; i++)
        if (nested_in(tp, i + 1, self)) tp->loops[i].dead = true;
    for (int i = 0; i < tp->nbranches; i++)
        if (nested_in(tp, -(i + 1), self)) tp->branches[i].done = true;
}

static void save_reg(Comp *c, CLoop *L, int reg) {
    for (int i = 0; i < L->nsaved; i++)
        if (L->saved[i] == reg) return;
    L->saved = mem_realloc(L->saved, sizeof(int) * (size_t)(L->nsaved + 1));
    L->stack = mem_realloc(L->stack, sizeof(int) * (size_t)(L->nsaved + 1));
    L->saved[L->nsaved] = reg;
    L->stack[L->nsaved++] = c->g->nstacks++;
}

static bool sink_pushes(Comp *c, CTape *tp, CLoop *L);

static void loop_body_end(Comp *c, CTape *tp, const int *new_regs, bool jumps_out) {
    CLoop *L = open_loop(tp);
    if (tp->nest || !L) return;
    L->last_node = tp->nnodes;
    L->body_done = true;
    if (!sink_pushes(c, tp, L)) return;
    for (int i = 0; i < L->nhomes; i++) {
        L->homes[i].var_end = -1;
        for (int j = 0; j < L->nhome_regs; j++)
            if (L->home_regs[j] == L->homes[i].reg) L->homes[i].var_end = var_of(tp, new_regs[j]);
    }
    if (!loop_live(tp, L)) {
        drop_loop(tp, L);
        return;
    }
    if (jumps_out) {
        cc_unsupported(c, "a gradient through a loop with break or continue is not compiled yet");
        return;
    }
    for (int i = 0; i < L->nhomes; i++)
        if (L->homes[i].var_end >= 0 && L->homes[i].var_end < L->first_var) {
            cc_unsupported(c, "a gradient through a loop that sets a variable to a value made before it is not compiled yet");
            return;
        }
    for (int n = L->first_node; n < L->last_node; n++) {
        CNode *nd = &tp->nodes[n];
        for (int i = 0; i < nd->nin; i++)
            if (loop_variant(L, nd->x[i].reg)) save_reg(c, L, nd->x[i].reg);
        if (loop_variant(L, nd->y.reg)) save_reg(c, L, nd->y.reg);
    }
    /* regions inside this loop: each iteration's trip count of an inner loop, and which side
     * of an inner branch ran */
    RegionRef self = (RegionRef)(L - tp->loops) + 1;
    for (int i = 0; i < tp->nloops; i++)
        if (!tp->loops[i].dead && nested_in(tp, i + 1, self)) save_reg(c, L, tp->loops[i].count_reg);
    for (int i = 0; i < tp->nbranches; i++)
        if (!tp->branches[i].done && nested_in(tp, -(i + 1), self)) save_reg(c, L, tp->branches[i].flag);
    L->push_at = mem_alloc(sizeof(int) * (size_t)(L->nsaved + 1));
    for (int i = 0; i < L->nsaved; i++) {
        Ins *in = cc_emit(c, I_PUSH);
        in->a = L->saved[i];
        in->aux = L->stack[i];
        L->push_at[i] = (int)(in - c->g->code);
    }
    emit_nbin(c, L->count_reg, L->count_reg, num_const_reg(c, 1), OP_ADD);
}

/* A push onto a tensor array (vm/compile/carray.c) is recorded where it is compiled, but eager
 * code's stack or concat of the list gives each pushed value its gradient after the loop, so
 * before any other use of the value: the push nodes move to the end of their iteration (their
 * backward then runs first), in order. They read and write only the buffer's chain and the
 * pushed value, so no other node depends on where they are. */
static bool sink_pushes(Comp *c, CTape *tp, CLoop *L) {
    int n = L->last_node - L->first_node, nsink = 0;
    for (int k = L->first_node; k < L->last_node; k++) nsink += tp->nodes[k].sink;
    if (!nsink) return true;
    RegionRef self = (RegionRef)(L - tp->loops) + 1;
    for (int i = 0; i < tp->nloops; i++)
        if (nested_in(tp, i + 1, self)) goto nested;
    for (int i = 0; i < tp->nbranches; i++)
        if (nested_in(tp, -(i + 1), self)) goto nested;
    CNode *tmp = mem_alloc(sizeof(CNode) * (size_t)(n + 1));
    int at = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = L->first_node; k < L->last_node; k++)
            if (tp->nodes[k].sink == (pass == 1)) tmp[at++] = tp->nodes[k];
    memcpy(tp->nodes + L->first_node, tmp, sizeof(CNode) * (size_t)n);
    mem_free(tmp);
    return true;
nested:
    cc_unsupported(c, "a gradient through a tensor list grown in a loop with run-time branches or loops inside is not compiled yet");
    return false;
}

/* The newest node, when it computed register reg: a push onto a tensor array (sink_pushes). */
void cgrad_push_node(Comp *c, int reg) {
    for (CTape *tp = c->tape; tp; tp = tp->outer)
        if (tp->nnodes > 0 && var_of(tp, reg) >= 0 && tp->nodes[tp->nnodes - 1].out_var == var_of(tp, reg))
            tp->nodes[tp->nnodes - 1].sink = true;
}

void cgrad_loop_body_end(Comp *c, const int *new_regs, bool jumps_out) {
    for (CTape *tp = c->tape; tp && !c->failed; tp = tp->outer) loop_body_end(c, tp, new_regs, jumps_out);
}

static void loop_end(CTape *tp) {
    if (tp->nest) {
        tp->nest--;
        return;
    }
    CLoop *L = open_loop(tp);
    if (!L) return;
    tp->nopen--;
    L->end_var = tp->nvars;
    if (!L->body_done) drop_loop(tp, L);   /* the body never compiled (a loop that never runs) */
    for (int i = 0; i < L->nhomes; i++)   /* after the loop a dead loop's homes hold what came in */
        if (L->dead) map_reg(tp, L->homes[i].reg, L->homes[i].var_init);
}

void cgrad_loop_end(Comp *c) {
    for (CTape *tp = c->tape; tp; tp = tp->outer) loop_end(tp);
}


/* ---------- run-time branches ---------- */

static void emit_tmove(Comp *c, int dst, int src);
static int new_reg_like(Comp *c, int reg);

static void branch_begin(Comp *c, CTape *tp, const int *home_regs, const int *unset, int nhomes, int cond) {
    if (!region_starts(c, tp)) return;
    GROW(tp->branches, tp->nbranches, tp->capbranches);
    CBranch *B = &tp->branches[tp->nbranches];
    memset(B, 0, sizeof *B);
    B->parent = innermost(tp);
    tp->open[tp->nopen++] = -(++tp->nbranches);
    B->flag = cc_new_num(c, true);
    Ins *in = cc_emit(c, I_NMOVE);   /* which branch ran, kept for backward */
    in->dst = B->flag;
    in->a = cond;
    B->homes = mem_alloc(sizeof(CBHome) * (size_t)(nhomes + 1));
    B->shadow = mem_alloc(sizeof(int) * (size_t)(nhomes + 1));
    for (int i = 0; i < nhomes; i++) {
        int r = home_regs[i];
        if (r < 0 || c->g->regs[r].kind != R_TENSOR || !is_float(c->g->regs[r].dtype)) continue;
        /* a home that may be unbound is copied where it is bound: a side reads it only there */
        int skip = -1;
        if (unset[i] >= 0) {
            in = cc_emit(c, I_JUMPF);
            in->a = unset[i];
            skip = (int)(in - c->g->code);
        }
        B->shadow[B->nhomes] = new_reg_like(c, r);
        emit_tmove(c, B->shadow[B->nhomes], r);
        if (skip >= 0) c->g->code[skip].aux = c->g->ncode;
        B->homes[B->nhomes++] = (CBHome){ r, var_of(tp, r), -1, -1, -1 };
    }
    B->then_first = tp->nnodes;
    B->first_var = tp->nvars;
}

void cgrad_branch_begin(Comp *c, const int *home_regs, const int *unset, int nhomes, int cond) {
    for (CTape *tp = c->tape; tp; tp = tp->outer) branch_begin(c, tp, home_regs, unset, nhomes, cond);
}

/* After the then-branch's home moves: the else-branch starts from the values before it. */
void cgrad_branch_else(Comp *c) {
    for (CTape *tp = c->tape; tp; tp = tp->outer) {
        CBranch *B = open_branch(tp);
        if (tp->nest || !B) continue;
        B->then_last = tp->nnodes;
        B->in_else = true;
        for (int i = 0; i < B->nhomes; i++) {
            B->homes[i].var_then = var_of(tp, B->homes[i].reg);
            map_reg(tp, B->homes[i].reg, B->homes[i].var_init);
        }
    }
}

/* After the else-branch's home moves (or the then-branch's, with no else). */
void cgrad_branch_end(Comp *c) {
    for (CTape *tp = c->tape; tp; tp = tp->outer) {
        if (tp->nest) {
            tp->nest--;
            continue;
        }
        CBranch *B = open_branch(tp);
        if (!B) continue;
        tp->nopen--;
        B->else_last = tp->nnodes;
        B->end_var = tp->nvars;
        for (int i = 0; i < B->nhomes; i++) {
            CBHome *h = &B->homes[i];
            h->var_else = var_of(tp, h->reg);
            h->var_after = h->var_then >= 0 || h->var_else >= 0 ? new_var(tp, h->reg) : -1;
        }
    }
}

/* ---------- the static builder ---------- */

static GVal emit(GradBuilder *b, OpCode op, const GVal *in, int n, const OpAttrs *at, int which) {
    Comp *c = b->ctx;
    AVal a[4];
    for (int i = 0; i < n; i++) a[i] = aval_of(in[i]);
    AVal r = cc_emit_op(c, op, a, n, at);
    if (c->failed) return gb_none();
    if (r.kind == AV_LIST) r = r.st->items[which];
    if (r.kind == AV_NUM) return r.known && !r.deps ? gb_num(r.num) : (GVal){ .reg = cc_num_reg(c, &r), .is_num = true };
    return gb_reg(r.reg, r.dtype, &r.shape);
}

/* dst += g, as eager's accumulate: the first contribution is taken as it is. */
static void accumulate(GradBuilder *b, GVal *dst, GVal g) { *dst = dst->ok ? gb_add(b, *dst, g) : g; }

/* A contribution g (certain) to variable v: v's gradient is certain after it. */
static void contribute(GradBuilder *b, CVar *v, GVal g) {
    accumulate(b, &v->grad, g);
    v->pend = -1;
}

/* A constant tensor of shape s filled with v. */
static GVal filled(Comp *c, const Shape *s, double v, DType dt) {
    Tensor *t = op_full(s, v, dt);
    if (!t) return cc_op_failed(c), gb_none();
    AVal r = cc_tensor_const(c, t);
    return gb_reg(r.reg, r.dtype, &r.shape);
}

/* The variable v's gradient goes to: itself, or (in a loop's peeled first iteration) the
 * variable its home started from, followed through enclosing peels. */
static int resolve(const CTape *tp, int v) {
    while (tp->redirect && v >= 0 && tp->redirect[v] >= 0) v = tp->redirect[v];
    return v;
}

/* Inside backward loops: register -> the copy popped for this iteration (-1: the register
 * itself), for the registers that existed when the innermost backward loop began. */
typedef struct {
    int *to;
    int n;
} ShadowMap;

static int shadow_reg(const ShadowMap *sm, int reg) { return sm && reg >= 0 && reg < sm->n && sm->to[reg] >= 0 ? sm->to[reg] : reg; }

static GVal shadowed(GVal v, const ShadowMap *sm) {
    v.reg = shadow_reg(sm, v.reg);
    return v;
}

/* Runs node nd's rule on its result's gradient gy and accumulates its operands' gradients.
 * false: compilation failed. */
static bool run_rule(Comp *c, CTape *tp, GradBuilder *b, CNode *nd, GVal gy, const ShadowMap *shadow) {
    size_t nin = (size_t)nd->nin + 1;
    GVal *x = mem_alloc((2 * sizeof(GVal) + sizeof(OpArg) + sizeof(bool)) * nin), *gx = x + nin;
    OpArg *in = (OpArg *)(gx + nin);
    bool *needs = (bool *)(in + nin);
    for (int i = 0; i < nd->nin; i++) {
        x[i] = shadowed(nd->x[i], shadow);
        needs[i] = nd->in_var[i] >= 0;
        gx[i] = gb_none();
        in[i] = x[i].is_num ? op_arg_num(x[i].x, false)
                : x[i].ok  ? op_arg_meta(x[i].dtype, &x[i].shape)
                           : (OpArg){ .kind = ARG_NONE };
    }
    OpCall call = { nd->op, nd->nin, in, &nd->at };
    GradCtx g = { b, &call, x, shadowed(nd->y, shadow), gy, needs, gx, nd->out_k };
    int rc = grad_backward(&g);
    if (!c->failed && rc) cc_unsupported(c, "%s", op_error());   /* no rule (yet): eager reports it at the user's line */
    for (int i = 0; i < nd->nin && !c->failed; i++) {
        int v = resolve(tp, nd->in_var[i]);
        if (needs[i] && gx[i].ok) contribute(b, &tp->vars[v], gx[i]);
    }
    mem_free(x);
    return !c->failed;
}

static bool pending_rule(Comp *c, CTape *tp, GradBuilder *b, CNode *nd, const ShadowMap *shadow);

/* Runs node nd's rule where its result has a gradient. false: compilation failed. */
static bool backward_node(Comp *c, CTape *tp, GradBuilder *b, CNode *nd, const ShadowMap *shadow) {
    CVar out = tp->vars[nd->out_var];
    if (!out.grad.ok) return true;
    return out.pend < 0 ? run_rule(c, tp, b, nd, out.grad, shadow) : pending_rule(c, tp, b, nd, shadow);
}

/* dst = src; an enclosing tape (grad(grad(f))) sees dst hold src's variable. */
static void emit_tmove(Comp *c, int dst, int src) {
    if (dst == src) return;
    if (c->tape) cgrad_move(c, dst, src);
    Ins *in = cc_emit(c, I_TMOVE);
    in->dst = dst;
    in->a = src;
}

/* A tensor register holding v's gradient g, or zeros of v's kind when g is none. */
static int grad_or_zeros(Comp *c, GVal g, int like) {
    if (g.ok) return g.reg;
    RegInfo ri = c->g->regs[like];   /* a copy: making registers moves the array */
    return filled(c, &ri.shape, 0, ri.dtype).reg;
}

static int new_reg_like(Comp *c, int reg) {
    RegInfo ri = c->g->regs[reg];   /* a copy: making registers moves the array */
    return ri.kind == R_NUM ? cc_new_num(c, ri.is_bool) : cc_new_tensor(c, ri.dtype, &ri.shape);
}

static bool reads_reg(const Ins *in, int reg) {
    if (in->a == reg || in->b == reg || in->c == reg) return true;
    for (int k = 0; k < in->nargs; k++)
        if (in->args[k] == reg) return true;
    return false;
}

/* A saved value no rule read after all (add's rule reads no operand, say): its PUSH and POP
 * become constants nobody reads, which the optimizer's DCE removes. */
static void drop_unread(Comp *c, CLoop *L, const int *shadow, const int *pop_at, const int *pop2_at, int from) {
    for (int i = 0; i < L->nsaved; i++) {
        int r = shadow[L->saved[i]];
        bool read = false;
        for (int k = from; k < c->g->ncode && !read; k++)
            read = k != pop_at[i] && (!pop2_at || k != pop2_at[i]) && reads_reg(&c->g->code[k], r);
        if (read) continue;
        int at[3] = { L->push_at[i], pop_at[i], pop2_at ? pop2_at[i] : -1 };
        for (int j = 0; j < 3; j++) {
            if (at[j] < 0) continue;
            int dead = cc_new_num(c, false);
            Ins *in = &c->g->code[at[j]];
            ins_free(in);
            memset(in, 0, sizeof *in);
            in->op = I_NCONST;
            in->dst = dead;
            in->a = in->b = in->c = -1;
        }
    }
}

static bool backward_range(Comp *c, CTape *tp, GradBuilder *b, RegionRef region, int first, int last, const ShadowMap *sm);

/* POPs of one iteration's saved values into the shadow registers; pop_at[] their places. */
static void pop_iteration(Comp *c, CLoop *L, int *shadow, int *pop_at) {
    for (int i = L->nsaved - 1; i >= 0; i--) {
        int r = L->saved[i];
        if (shadow[r] < 0) shadow[r] = new_reg_like(c, r);
        Ins *in = cc_emit(c, I_POP);
        in->dst = shadow[r];
        in->aux = L->stack[i];
        pop_at[i] = (int)(in - c->g->code);
    }
}

static GVal reg_gval(Comp *c, int reg) { return gb_reg(reg, c->g->regs[reg].dtype, &c->g->regs[reg].shape); }

/* Static backward has no run-time none. A variable from before a backward loop or branch that
 * only some of its paths give a gradient is pending: its register holds -0 (the exact identity
 * of +, so the first contribution keeps its bits, as eager's first contribution is taken as it
 * is; +0 zeros would make a -0 +0) plus what the paths that ran gave, and the number register
 * pend counts those paths. A rule reading it runs only where one was given (pending_rule); the
 * result settles it: zeros where none was given, as eager's none becomes (-0 would differ from
 * eager's +0). In place: a pending register is a region's accumulator, which nothing reads
 * after the result (two variables sharing one share its count too). */
static GVal settle(Comp *c, CTape *tp, int v) {
    if (tp->vars[v].pend < 0 || !tp->vars[v].grad.ok) return tp->vars[v].grad;
    int r = tp->vars[v].grad.reg, none = cc_new_num(c, true);
    emit_nbin(c, none, num_const_reg(c, 0), tp->vars[v].pend, OP_GE);
    Ins *in = cc_emit(c, I_JUMPF);
    in->a = none;
    int skip = (int)(in - c->g->code);
    emit_tmove(c, r, grad_or_zeros(c, gb_none(), r));
    c->g->code[skip].aux = c->g->ncode;
    tp->vars[v].pend = -1;
    return tp->vars[v].grad;
}

static void emit_nmove(Comp *c, int dst, int src) {
    Ins *in = cc_emit(c, I_NMOVE);
    in->dst = dst;
    in->a = src;
}

/* A region's accumulator for variable v from before it: a copy of v's gradient, or -0 when
 * it has none; *flag: the register counting the paths that gave one (-1: v's is certain). */
static int region_acc(Comp *c, CVar v, int like, int *flag) {
    int acc = new_reg_like(c, like);
    *flag = -1;
    if (v.grad.ok && v.pend < 0) {
        emit_tmove(c, acc, v.grad.reg);
        return acc;
    }
    RegInfo ri = c->g->regs[like];   /* a copy: making registers moves the array */
    *flag = cc_new_num(c, false);
    emit_nmove(c, *flag, v.grad.ok ? v.pend : num_const_reg(c, 0));
    emit_tmove(c, acc, v.grad.ok ? v.grad.reg : filled(c, &ri.shape, -0.0, ri.dtype).reg);
    return acc;
}

/* The end of one path through a region: its accumulator takes v's gradient, and the path is
 * counted when it gave one. */
static void region_path_end(Comp *c, CVar v, int acc, int flag) {
    emit_tmove(c, acc, v.grad.reg);
    if (flag >= 0 && v.pend != flag) emit_nmove(c, flag, v.pend >= 0 ? v.pend : num_const_reg(c, 1));
}

/* A rule whose result's gradient is pending runs only where some path gave that gradient, as
 * eagerly: run on zeros it could give its operands what eager does not (+0 where eager's first
 * contribution is -0). Its operands' gradients become pending on the same condition. */
static bool pending_rule(Comp *c, CTape *tp, GradBuilder *b, CNode *nd, const ShadowMap *shadow) {
    int n = nd->nin, *vars = mem_alloc(sizeof(int) * 3 * (size_t)(n + 1)), *acc = vars + n + 1, *flag = acc + n + 1, nt = 0;
    for (int i = 0; i < n; i++) {
        int v = nd->in_var[i] >= 0 ? resolve(tp, nd->in_var[i]) : -1;
        bool dup = false;
        for (int j = 0; j < nt; j++) dup |= vars[j] == v;
        if (v < 0 || dup) continue;
        vars[nt] = v;
        acc[nt] = region_acc(c, tp->vars[v], nd->x[i].reg, &flag[nt]);
        nt++;
    }
    int ran = cc_new_num(c, true);
    emit_nbin(c, ran, tp->vars[nd->out_var].pend, num_const_reg(c, 0), OP_GT);
    Ins *in = cc_emit(c, I_JUMPF);
    in->a = ran;
    int skip = (int)(in - c->g->code);
    for (int j = 0; j < nt; j++) tp->vars[vars[j]] = (CVar){ reg_gval(c, acc[j]), flag[j] };
    bool ok = run_rule(c, tp, b, nd, tp->vars[nd->out_var].grad, shadow);
    for (int j = 0; j < nt && ok; j++) region_path_end(c, tp->vars[vars[j]], acc[j], flag[j]);
    c->g->code[skip].aux = c->g->ncode;
    for (int j = 0; j < nt; j++) tp->vars[vars[j]] = (CVar){ reg_gval(c, acc[j]), flag[j] };
    mem_free(vars);
    return ok;
}

/* A contribution g to variable v that may be pending (g.pend, see settle): added to v's
 * gradient exactly (-0 where no path gave one), v pending where either is. */
static void contribute_pending(Comp *c, GradBuilder *b, CVar *v, CVar g) {
    if (g.pend < 0) {
        contribute(b, v, g.grad);
    } else if (!v->grad.ok) {
        *v = g;
    } else {
        v->grad = gb_add(b, v->grad, g.grad);
        if (v->pend >= 0) {
            int either = cc_new_num(c, false);
            emit_nbin(c, either, v->pend, g.pend, OP_ADD);
            v->pend = either;
        }
    }
}

/* After a backward loop: the flags of the variables every iteration gives a gradient (every[])
 * count one path when it ran at all (count > 0), one test for all instead of a move in each
 * iteration. */
static void count_if_ran(Comp *c, int count, const int *flag, const bool *every, int n) {
    int j = 0;
    while (j < n && !every[j]) j++;
    if (j == n) return;
    int ran = cc_new_num(c, true);
    emit_nbin(c, ran, count, num_const_reg(c, 0), OP_GT);
    Ins *in = cc_emit(c, I_JUMPF);
    in->a = ran;
    int skip = (int)(in - c->g->code);
    for (; j < n; j++)
        if (every[j]) emit_nmove(c, flag[j], num_const_reg(c, 1));
    c->g->code[skip].aux = c->g->ncode;
}

/* A home's gradient carried to the iteration before (gh): v's, or zeros when it has none; a
 * pending one stays pending where the loop began with it pending (flag ghf, else -1). */
static void carry_home(Comp *c, CTape *tp, int v, int like, int gh, int ghf) {
    if (ghf < 0) {
        emit_tmove(c, gh, grad_or_zeros(c, v >= 0 ? settle(c, tp, v) : gb_none(), like));
        return;
    }
    CVar var = v >= 0 ? tp->vars[v] : (CVar){ gb_none(), -1 };
    if (!var.grad.ok) {
        RegInfo ri = c->g->regs[like];   /* a copy: making registers moves the array */
        var = (CVar){ filled(c, &ri.shape, -0.0, ri.dtype), num_const_reg(c, 0) };
    }
    region_path_end(c, var, gh, ghf);
}

/* The gradient state at the start of a backward iteration: the loop's own variables none,
 * each home's end seeded from gh, the variables from before the loop in their registers. */
static void iteration_state(Comp *c, CTape *tp, CLoop *L, const int *gh, const int *ghf, const int *outside,
                            const int *acc, const int *flag, int nout) {
    for (int v = L->first_var; v < L->end_var; v++) tp->vars[v] = (CVar){ gb_none(), -1 };
    for (int i = 0; i < L->nhomes; i++)
        if (L->homes[i].var_end >= 0) tp->vars[L->homes[i].var_end] = (CVar){ reg_gval(c, gh[i]), ghf[i] };
    for (int j = 0; j < nout; j++) tp->vars[outside[j]] = (CVar){ reg_gval(c, acc[j]), flag[j] };
}

/* The backward of a recorded loop: a loop of its own that runs as many times, popping each
 * iteration's saved values into shadow registers and running the body's rules in reverse.
 * A home's gradient is carried from one iteration to the one before it (gh); a variable from
 * before the loop accumulates across iterations in a register of its own (acc), in eager's
 * order. Eagerly, a home's value when the loop starts is the variable it came from (y = x
 * makes y x): so when a home starts tracked, the first iteration's backward is peeled off
 * and runs last, its home gradients going straight to those variables, in eager's order.
 * A home in carry[] carries its gradient pending (ghf); *again: one more needs to (its
 * saved values' PUSHes are then kept for the next pass). */
static bool loop_pass(Comp *c, CTape *tp, GradBuilder *b, CLoop *L, const ShadowMap *outer, bool *carry, bool *again) {
    int *gh = mem_alloc(sizeof(int) * 2 * (size_t)(L->nhomes + 1)), *ghf = gh + L->nhomes + 1;
    int *outside = mem_alloc(sizeof(int) * (size_t)(tp->nvars + 1)), nout = 0;
    int *acc = mem_alloc(sizeof(int) * (size_t)(tp->nvars + 1));
    ShadowMap sm = { mem_alloc(sizeof(int) * (size_t)(c->g->nregs + 1)), c->g->nregs };
    int *shadow = sm.to;
    int *flag = mem_alloc(sizeof(int) * (size_t)(tp->nvars + 1));
    bool *seen = mem_calloc((size_t)tp->nvars + 1, sizeof(bool)), *every = mem_calloc((size_t)tp->nvars + 1, sizeof(bool));
    bool peel = false;
    for (int r = 0; r < sm.n; r++) shadow[r] = outer && r < outer->n ? outer->to[r] : -1;   /* an enclosing loop's copies */
    for (int i = 0; i < L->nhomes; i++) {
        CHome *h = &L->homes[i];
        gh[i] = new_reg_like(c, h->reg);
        /* a gradient pending or none after the loop, or pending at an iteration's start (carry),
         * stays pending: where none was given the iterations' rules do not run, as eagerly */
        carry[i] |= h->var_end >= 0 && (!tp->vars[h->var_end].grad.ok || tp->vars[h->var_end].pend >= 0);
        ghf[i] = carry[i] ? cc_new_num(c, false) : -1;
        carry_home(c, tp, h->var_end, h->reg, gh[i], ghf[i]);
    }
    for (int k = L->first_node; k <= L->last_node; k++) {
        /* the variables from before the loop its nodes read, then those its homes start from */
        int n = k < L->last_node ? tp->nodes[k].nin : L->nhomes;
        for (int i = 0; i < n; i++) {
            int v = resolve(tp, k < L->last_node ? tp->nodes[k].in_var[i] : L->homes[i].var_init);
            if (v < 0 || v >= L->first_var || seen[v]) continue;
            seen[v] = true;
            outside[nout] = v;
            int like = k < L->last_node ? tp->nodes[k].x[i].reg : L->homes[i].reg;
            acc[nout] = region_acc(c, tp->vars[v], like, &flag[nout]);
            nout++;
        }
    }
    for (int i = 0; i < L->nhomes; i++) peel |= L->homes[i].var_init >= 0;
    int k = cc_new_num(c, false), more = cc_new_num(c, true);
    Ins *in = cc_emit(c, I_NMOVE);
    in->dst = k;
    in->a = shadow_reg(outer, L->count_reg);   /* inside an enclosing loop: this iteration's count */
    int top = c->g->ncode;
    emit_nbin(c, more, k, num_const_reg(c, peel ? 1 : 0), OP_GT);
    in = cc_emit(c, I_JUMPF);
    in->a = more;
    int exit_jump = (int)(in - c->g->code);
    int *pop_at = mem_alloc(sizeof(int) * (size_t)(L->nsaved + 1)), *pop2_at = NULL;
    pop_iteration(c, L, shadow, pop_at);
    iteration_state(c, tp, L, gh, ghf, outside, acc, flag, nout);
    RegionRef self = (RegionRef)(L - tp->loops) + 1;
    bool ok = backward_range(c, tp, b, self, L->first_node, L->last_node, &sm);
    if (ok) {
        for (int i = 0; i < L->nhomes; i++) {
            int v = L->homes[i].var_start;
            if (!carry[i] && tp->vars[v].grad.ok && tp->vars[v].pend >= 0) *again = carry[i] = true;
            carry_home(c, tp, v, L->homes[i].reg, gh[i], ghf[i]);
        }
        /* a variable every iteration gives a gradient is counted once, after the loop */
        for (int j = 0; j < nout; j++) {
            CVar v = tp->vars[outside[j]];
            every[j] = flag[j] >= 0 && v.pend < 0;
            region_path_end(c, every[j] ? (CVar){ v.grad, flag[j] } : v, acc[j], flag[j]);
        }
        emit_nbin(c, k, k, num_const_reg(c, 1), OP_SUB);
        in = cc_emit(c, I_JUMP);
        in->aux = top;
        c->g->code[exit_jump].aux = c->g->ncode;
        count_if_ran(c, shadow_reg(outer, L->count_reg), flag, every, nout);
    }
    if (ok && peel) {   /* the first iteration, if the loop ran at all */
        emit_nbin(c, more, k, num_const_reg(c, 0), OP_GT);
        in = cc_emit(c, I_JUMPF);
        in->a = more;
        int skip = (int)(in - c->g->code);
        pop2_at = mem_alloc(sizeof(int) * (size_t)(L->nsaved + 1));
        pop_iteration(c, L, shadow, pop2_at);
        iteration_state(c, tp, L, gh, ghf, outside, acc, flag, nout);
        if (!tp->redirect) {
            tp->redirect = mem_alloc(sizeof(int) * (size_t)(tp->nvars + 1));
            for (int v = 0; v < tp->nvars; v++) tp->redirect[v] = -1;
        }
        for (int i = 0; i < L->nhomes; i++) tp->redirect[L->homes[i].var_start] = L->homes[i].var_init;
        for (int i = 0; i < tp->nloops; i++)   /* the regions inside are emitted again */
            if (nested_in(tp, i + 1, self)) tp->loops[i].done = false;
        for (int i = 0; i < tp->nbranches; i++)
            if (nested_in(tp, -(i + 1), self)) tp->branches[i].done = false;
        ok = backward_range(c, tp, b, self, L->first_node, L->last_node, &sm);
        for (int i = 0; i < L->nhomes; i++) tp->redirect[L->homes[i].var_start] = -1;
        for (int j = 0; j < nout && ok; j++) region_path_end(c, tp->vars[outside[j]], acc[j], flag[j]);
        in = cc_emit(c, I_JUMP);
        int join = (int)(in - c->g->code);
        c->g->code[skip].aux = c->g->ncode;
        /* no iteration ran: a home's value after the loop is the one it started from (its
         * gradient goes there, a path that gave one); the other accumulators keep their state */
        for (int i = 0; i < L->nhomes && ok; i++) {
            int v = resolve(tp, L->homes[i].var_init);
            for (int j = 0; j < nout && v >= 0; j++)
                if (outside[j] == v) {
                    CVar sum = { reg_gval(c, acc[j]), flag[j] };
                    contribute_pending(c, b, &sum, (CVar){ reg_gval(c, gh[i]), ghf[i] });
                    if (!sum.grad.ok || c->failed) { ok = false; break; }
                    region_path_end(c, sum, acc[j], flag[j]);
                }
        }
        c->g->code[join].aux = c->g->ncode;
    }
    if (ok && !*again) {
        drop_unread(c, L, shadow, pop_at, pop2_at, top);
        for (int v = L->first_var; v < L->end_var; v++) tp->vars[v] = (CVar){ gb_none(), -1 };
        for (int j = 0; j < nout; j++) tp->vars[outside[j]] = (CVar){ reg_gval(c, acc[j]), flag[j] };
    }
    mem_free(gh);
    mem_free(outside);
    mem_free(acc);
    mem_free(shadow);
    mem_free(pop_at);
    mem_free(pop2_at);
    mem_free(seen);
    mem_free(every);
    mem_free(flag);
    return ok && !c->failed;
}

/* Drops what a pass over loop L emitted from instruction mark on, and the gradients it left. */
static void rewind_loop(Comp *c, CTape *tp, CLoop *L, int mark, const CVar *saved) {
    for (int k = mark; k < c->g->ncode; k++) ins_free(&c->g->code[k]);
    c->g->ncode = mark;
    memcpy(tp->vars, saved, sizeof(CVar) * (size_t)tp->nvars);
    RegionRef self = (RegionRef)(L - tp->loops) + 1;
    for (int i = 0; i < tp->nloops; i++)
        if (nested_in(tp, i + 1, self)) tp->loops[i].done = false;
    for (int i = 0; i < tp->nbranches; i++)
        if (nested_in(tp, -(i + 1), self)) tp->branches[i].done = false;
}

/* The backward of a recorded loop (loop_pass). A home whose gradient ends an iteration pending
 * (given on some paths of a branch in it only) must carry it pending into the iteration before,
 * where a rule runs only if it was given, as eagerly (zeros would give the variables from
 * before the loop what eager does not: +0 where eager's first contribution is -0); known only
 * once the body's backward is emitted, so the pass is emitted again carrying it. */
static bool backward_loop(Comp *c, CTape *tp, GradBuilder *b, CLoop *L, const ShadowMap *outer) {
    L->done = true;
    if (c->tape) {   /* the backward loop's ops would have to be recorded per iteration too */
        cc_unsupported(c, "a second derivative through a run-time loop is not compiled yet");
        return false;
    }
    bool *carry = mem_calloc((size_t)L->nhomes + 1, sizeof(bool)), again = true, ok = true;
    CVar *saved = mem_alloc(sizeof(CVar) * (size_t)(tp->nvars + 1));
    memcpy(saved, tp->vars, sizeof(CVar) * (size_t)tp->nvars);
    int mark = c->g->ncode;
    while (ok && again) {
        again = false;
        ok = loop_pass(c, tp, b, L, outer, carry, &again);
        if (ok && again) rewind_loop(c, tp, L, mark, saved);
    }
    mem_free(carry);
    mem_free(saved);
    return ok;
}

/* Runs the rules of nodes [first, last) in reverse for one side of a branch: its home ends
 * seeded with the gradients after the branch, the variables from before it accumulating in
 * acc[] (merge registers both sides write), pending (flag[]) where their gradient is not
 * certain (settle). Under an enclosing tape (grad(grad(f))), whose recording has no run-time
 * jumps but the branch's, a variable with no gradient before the branch (fresh) starts each
 * side with none instead, and a side that gives it none leaves zeros. */
static bool branch_side(Comp *c, CTape *tp, GradBuilder *b, CBranch *B, bool then_side, const int *targets,
                        const bool *fresh, const int *acc, const int *flag, int ntargets, const CVar *after,
                        const GVal *incoming, const ShadowMap *sm) {
    int first = then_side ? B->then_first : B->then_last, last = then_side ? B->then_last : B->else_last;
    /* a value made inside the branch has a gradient from after it only where an inner
     * backward (grad(grad(f))) read it: on the side that made it */
    for (int v = B->first_var; v < B->end_var; v++) tp->vars[v] = (CVar){ incoming[v - B->first_var], -1 };
    for (int j = 0; j < ntargets; j++) tp->vars[targets[j]] = (CVar){ fresh[j] ? gb_none() : reg_gval(c, acc[j]), flag[j] };
    for (int i = 0; i < B->nhomes && !c->failed; i++) {   /* the value after the branch came from this side's end */
        CBHome *h = &B->homes[i];
        int end = resolve(tp, then_side ? h->var_then : h->var_else);
        if (end >= 0 && after[i].grad.ok) contribute_pending(c, b, &tp->vars[end], after[i]);
    }
    bool ok = !c->failed && backward_range(c, tp, b, -((int)(B - tp->branches) + 1), first, last, sm);
    for (int j = 0; j < ntargets && ok; j++) {
        if (fresh[j]) emit_tmove(c, acc[j], grad_or_zeros(c, tp->vars[targets[j]].grad, acc[j]));
        else region_path_end(c, tp->vars[targets[j]], acc[j], flag[j]);
    }
    return ok && !c->failed;
}

/* The backward of a recorded branch: a branch on the same flag. Each side runs its own
 * nodes' rules; gradients of values from before the branch meet in merge registers. */
static bool backward_branch(Comp *c, CTape *tp, GradBuilder *b, CBranch *B, const ShadowMap *sm) {
    B->done = true;
    /* the variables from before the branch that either side may give a gradient to */
    bool *is_target = mem_calloc((size_t)tp->nvars + 1, sizeof(bool));
    int *targets = mem_alloc(sizeof(int) * (size_t)(tp->nvars + 1)), *acc = NULL, nt = 0;
    int *like = mem_alloc(sizeof(int) * (size_t)(tp->nvars + 1));
    for (int k = B->then_first; k < B->else_last; k++)
        for (int i = 0; i < tp->nodes[k].nin; i++) {
            int v = resolve(tp, tp->nodes[k].in_var[i]);
            if (v >= 0 && v < B->first_var && !is_target[v]) {
                is_target[v] = true;
                like[nt] = tp->nodes[k].x[i].reg;
                targets[nt++] = v;
            }
        }
    for (int i = 0; i < B->nhomes; i++) {
        int ends[2] = { resolve(tp, B->homes[i].var_then), resolve(tp, B->homes[i].var_else) };
        for (int e = 0; e < 2; e++)
            if (ends[e] >= 0 && ends[e] < B->first_var && !is_target[ends[e]]) {
                is_target[ends[e]] = true;
                like[nt] = B->homes[i].reg;
                targets[nt++] = ends[e];
            }
    }
    bool nested = c->tape != NULL;   /* grad(grad(f)): this branch is recorded on the enclosing tapes */
    acc = mem_alloc(sizeof(int) * (size_t)(nt + 1));
    int *flag = mem_alloc(sizeof(int) * (size_t)(nt + 1));
    bool *fresh = mem_alloc(sizeof(bool) * (size_t)(nt + 1));
    for (int j = 0; j < nt; j++) {
        fresh[j] = nested && !tp->vars[targets[j]].grad.ok;
        flag[j] = -1;
        if (!fresh[j]) acc[j] = region_acc(c, tp->vars[targets[j]], like[j], &flag[j]);
        else emit_tmove(c, acc[j] = new_reg_like(c, like[j]), grad_or_zeros(c, gb_none(), like[j]));
    }
    CVar *after = mem_alloc(sizeof(CVar) * (size_t)(B->nhomes + 1));   /* taken before the sides reset grads */
    for (int i = 0; i < B->nhomes; i++) after[i] = B->homes[i].var_after >= 0 ? tp->vars[B->homes[i].var_after] : (CVar){ gb_none(), -1 };
    GVal *incoming = mem_alloc(sizeof(GVal) * (size_t)(B->end_var - B->first_var + 1));
    for (int v = B->first_var; v < B->end_var; v++) incoming[v - B->first_var] = tp->vars[v].grad;
    int took = shadow_reg(sm, B->flag);   /* inside a loop: the side this iteration took */
    if (nested) {
        int *unset = mem_alloc(sizeof(int) * (size_t)(nt + 1));
        for (int j = 0; j < nt; j++) unset[j] = -1;
        cgrad_branch_begin(c, acc, unset, nt, took);
        mem_free(unset);
        c->branch_depth++;
    }
    Ins *in = cc_emit(c, I_JUMPF);
    in->a = took;
    int to_else = (int)(in - c->g->code);
    bool ok = branch_side(c, tp, b, B, true, targets, fresh, acc, flag, nt, after, incoming, sm);
    int to_end = -1;
    if (ok) {
        if (nested) cgrad_branch_else(c);
        in = cc_emit(c, I_JUMP);
        to_end = (int)(in - c->g->code);
        c->g->code[to_else].aux = c->g->ncode;
        ok = branch_side(c, tp, b, B, false, targets, fresh, acc, flag, nt, after, incoming, sm);
    }
    if (nested) {
        c->branch_depth--;
        if (ok) cgrad_branch_end(c);
    }
    if (ok) {
        c->g->code[to_end].aux = c->g->ncode;
        for (int v = B->first_var; v < B->end_var; v++) tp->vars[v] = (CVar){ gb_none(), -1 };
        for (int j = 0; j < nt; j++) tp->vars[targets[j]] = (CVar){ reg_gval(c, acc[j]), flag[j] };
    }
    mem_free(is_target);
    mem_free(targets);
    mem_free(acc);
    mem_free(flag);
    mem_free(fresh);
    mem_free(like);
    mem_free(after);
    mem_free(incoming);
    return ok && !c->failed;
}

/* The nodes [first, last) of a region (0: the tape's top level) in reverse: a node's rule, or
 * the backward of a region nested directly in it that ends there (a branch may hold no node
 * and still route its variables' gradients). */
static bool backward_range(Comp *c, CTape *tp, GradBuilder *b, RegionRef region, int first, int last, const ShadowMap *sm) {
    bool ok = true;
    for (int k = last; ok;) {   /* k: the position after the next node back */
        CLoop *L = NULL;
        CBranch *B = NULL;
        for (int i = tp->nloops - 1; i >= 0 && !L; i--)
            if (!tp->loops[i].done && !tp->loops[i].dead && tp->loops[i].parent == region && tp->loops[i].last_node == k &&
                tp->loops[i].first_node < k)
                L = &tp->loops[i];
        for (int i = tp->nbranches - 1; i >= 0 && !L && !B; i--)
            if (!tp->branches[i].done && tp->branches[i].parent == region && tp->branches[i].else_last == k &&
                tp->branches[i].then_first >= first)
                B = &tp->branches[i];
        if (L) {
            ok = backward_loop(c, tp, b, L, sm);
            k = L->first_node;
        } else if (B) {
            ok = backward_branch(c, tp, b, B, sm);
            k = B->then_first;
        } else if (k > first) {
            ok = backward_node(c, tp, b, &tp->nodes[k - 1], sm);
            k--;
        } else {
            break;
        }
    }
    return ok && !c->failed;
}

/* Backward from variable y of tp, seeded with ones. false: compilation failed. */
static bool backward(Comp *c, CTape *tp, int y, GVal yv) {
    tp->vars[y] = (CVar){ filled(c, &yv.shape, 1, yv.dtype), -1 };
    GradBuilder b;
    gb_init(&b);
    b.emit = emit;
    b.ctx = c;
    bool ok = backward_range(c, tp, &b, 0, 0, tp->nnodes, NULL);
    gb_free(&b);
    return ok && !c->failed;
}

/* ---------- gradient trees ---------- */

/* Makes a variable for every float tensor leaf of v, in walk order (as eager's track_leaves). */
static void track_leaves(Comp *c, CTape *tp, AVal *v, int **leaves, int *n, int *cap) {
    if (v->kind == AV_TENSOR && is_float(v->dtype)) {
        GROW(*leaves, *n, *cap);
        int found = var_of(tp, v->reg);
        (*leaves)[(*n)++] = found >= 0 ? found : new_var(tp, v->reg);
    } else if (v->kind == AV_LIST || v->kind == AV_DICT) {
        cc_struct_n(c, v->st);   /* its whole structure: not one static code grows at run time */
        for (int i = 0; i < v->st->n && !c->failed; i++) track_leaves(c, tp, &v->st->items[i], leaves, n, cap);
    }
}

/* The gradient tree of v: each float leaf's gradient (zeros when none reached it), nil for
 * constants; same list lengths, same dict keys in the same order. */
static AVal grad_tree(Comp *c, CTape *tp, AVal *v, const int *leaves, int *k) {
    if (v->kind == AV_TENSOR && is_float(v->dtype)) {
        GVal g = settle(c, tp, leaves[(*k)++]);
        if (!g.ok) g = filled(c, &v->shape, 0, v->dtype);
        return c->failed ? FAILV : aval_of(g);
    }
    if (v->kind == AV_LIST || v->kind == AV_DICT) {
        AStruct *st = cc_astruct_new(c, v->kind == AV_DICT);
        for (int i = 0; i < v->st->n; i++) {
            AVal g = grad_tree(c, tp, &v->st->items[i], leaves, k);
            if (c->failed) return FAILV;
            cc_astruct_push(c, st, v->kind == AV_DICT ? v->st->keys[i] : NULL, g);
        }
        return (AVal){ .kind = v->kind, .st = st, .reg = -1 };
    }
    return cc_const_av(NIL_VAL);
}

/* grad(f) of a function value when compiling: a closure-like value that differentiates f
 * when called (it cannot leave the static code: cc_opnd_of refuses it). */
AVal cgrad_make(Comp *c, AVal f, bool with_value) {
    CClosure *cl = cc_arena_alloc(c, sizeof *cl);
    memset(cl, 0, sizeof *cl);
    cl->grad_of = cc_arena_alloc(c, sizeof *cl->grad_of);
    cl->grad_of->v = f;
    cl->with_value = with_value;
    return (AVal){ .kind = AV_CLOSURE, .cl = cl, .reg = -1 };
}

/* The result y of f: a one-element float tensor or a number, as eager code requires. */
static bool check_result(Comp *c, AVal *y, const char *who) {
    if (y->kind == AV_NUM) return true;
    if (y->kind == AV_TENSOR && is_float(y->dtype) && shape_count(&y->shape) == 1) return true;
    cc_unsupported(c, "%s(): f does not return a one-element float tensor or a number", who);   /* eager says it exactly */
    return false;
}

/* The argument as f sees it, as eager code makes it (lang/autograd.c, fresh_argument): its
 * structures copied, each float tensor leaf in a register of its own, so every leaf is a
 * variable of its own and a tensor f reads from elsewhere is a constant. A leaf an enclosing
 * grad tracks becomes reshape(leaf), recorded there as eagerly. */
static AVal fresh_argument(Comp *c, AVal *v) {
    if (v->kind == AV_TENSOR && is_float(v->dtype)) {
        if (cgrad_tracked(c, v->reg)) {
            OpAttrs at = attrs_default();
            at.shape = v->shape;
            return cc_emit_op(c, OP_RESHAPE, v, 1, &at);
        }
        AVal r = cc_tensor_av(c, v->dtype, &v->shape);
        emit_tmove(c, r.reg, v->reg);
        return r;
    }
    if (v->kind == AV_LIST || v->kind == AV_DICT) {
        AStruct *st = cc_astruct_new(c, v->kind == AV_DICT);
        for (int i = 0; i < v->st->n && !c->failed; i++) {
            AVal item = fresh_argument(c, &v->st->items[i]);
            cc_astruct_push(c, st, v->kind == AV_DICT ? v->st->keys[i] : NULL, item);
        }
        return (AVal){ .kind = v->kind, .st = st, .reg = -1 };
    }
    return *v;
}

AVal cgrad_call(Comp *c, AVal f, bool with_value, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, SrcLoc loc) {
    const char *who = with_value ? "value_and_grad" : "grad";
    if (nargs < 1) return cc_unsupported(c, "%s(): no argument to differentiate", who);
    CTape tp;
    memset(&tp, 0, sizeof tp);
    tp.depth = c->branch_depth;
    tp.dry = c->dry;
    int *leaves = NULL, nleaves = 0, cap = 0;
    AVal r = FAILV;
    AVal *fargs = mem_alloc(sizeof(AVal) * (size_t)nargs);
    memcpy(fargs, args, sizeof(AVal) * (size_t)nargs);
    fargs[0] = fresh_argument(c, &args[0]);   /* recorded on the enclosing tapes, if any */
    track_leaves(c, &tp, &fargs[0], &leaves, &nleaves, &cap);
    tp.outer = c->tape;
    c->tape = &tp;
    AVal y = c->failed ? FAILV : cc_call_value(c, f, fargs, nargs, kwn, kw, nkw, loc);
    c->tape = tp.outer;   /* backward is recorded on the enclosing tapes, as eagerly */
    c->loc = loc;
    if (c->failed || !check_result(c, &y, who)) goto out;
    int yv = y.kind == AV_TENSOR ? var_of(&tp, y.reg) : -1;
    if (yv < 0 && tp.cut_by) {   /* as eagerly (autograd_call): zeros would be wrong */
        cc_error_at(c, loc, GRAD_CUT_MSG, who, tp.cut_by, tp.cut_at.line, tp.cut_at.col);
        goto out;
    }
    if (yv >= 0 && !backward(c, &tp, yv, gval_of(c, &y))) goto out;
    int k = 0;
    AVal g = grad_tree(c, &tp, &fargs[0], leaves, &k);
    if (c->failed) goto out;
    if (!with_value) {
        r = g;
        goto out;
    }
    AStruct *st = cc_astruct_new(c, false);
    cc_astruct_push(c, st, NULL, y);
    cc_astruct_push(c, st, NULL, g);
    r = (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
out:
    mem_free(fargs);
    mem_free(leaves);
    tape_free(&tp);
    return c->failed ? FAILV : r;
}
