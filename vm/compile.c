/* compile.c - compiles static code (a `static { }` block or a `static fn`) to a Graph.
 *
 * The compiler is an abstract interpreter over the AST. Every expression becomes an AVal:
 *   AV_CONST    a value known when compiling: nil, strings, functions (a guard if read from
 *               an input);
 *   AV_NUM      a number register; `known` when its value at compile time is fixed by the
 *               inputs (it then remembers which input numbers it depends on, so it can be
 *               turned into guards when a shape, loop step or condition needs its value);
 *   AV_TENSOR   a tensor register with a fixed shape and dtype;
 *   AV_LIST / AV_DICT  a structure known when compiling, whose items are AVals;
 *   AV_CLOSURE  a function created inside static code (inlined when called).
 * Variables read from outside are inputs: their current values decide the guards (tensors:
 * shape/dtype; numbers: run-time registers; everything else: by value or identity).
 * Calls are inlined; `for` over range() and `while` become loops; branches on run-time
 * values become jumps. Variables that change inside a loop or a run-time branch live in a
 * "home" register, found by compiling the body once as a dry run.
 * Code the compiler does not handle yet returns COMPILE_UNSUPPORTED and runs eagerly. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "compile.h"
#include "builtins.h"
#include "infer.h"
#include "mem.h"

/* ---------- compile-time values ---------- */

typedef enum { AV_NONE, AV_CONST, AV_NUM, AV_TENSOR, AV_LIST, AV_DICT, AV_CLOSURE } AVKind;

typedef enum { K_LOCAL, K_GLOBAL, K_CELL, K_INLINE } KeyKind;
typedef struct {
    KeyKind kind;
    int slot;        /* local slot; K_INLINE: activation id * 65536 + slot */
    void *ptr;       /* Module* (K_GLOBAL), ObjCell* (K_CELL) */
} VarKey;

typedef struct AStruct AStruct;
typedef struct {
    FnProto *proto;
    Module *mod;
    VarKey *caps;
} CClosure;

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
} AVal;

struct AStruct {
    bool dict;
    int n, cap;
    AVal *items;
    char **keys;
    int obj;          /* container index when the structure is an input, else -1 */
};

typedef struct {
    VarKey key;
    AVal v;
    bool assigned;    /* written by the static code: written back when it ends */
    const char *name;
} Binding;

typedef struct Home {
    VarKey key;
    AVal home;
    const char *name;
} Home;

typedef struct Loop {
    struct Loop *outer;
    Home *homes;
    int nhomes;
    int *breaks, nbreaks;
    int *conts, nconts;
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
} Inline;

typedef struct {
    AStruct *st;
    int n;
    AVal *items;
    char **keys;
} Undo;

typedef struct {
    Interp *I;
    Graph *g;
    Frame *frame;            /* the block's live frame (static block) */
    ObjClosure *fn;          /* the static fn (static fn) */
    Value *params;
    Module *mod;
    Source *src;
    SrcLoc loc;
    Binding *env;
    int nenv, capenv;
    Binding *inputs;         /* lifted inputs by source, so a source is read once */
    int ninputs, capinputs;
    int numguards[64];
    int nnum;
    Inline *ictx;
    int next_inline;
    int inline_depth;
    Loop *loop;
    int branch_depth;        /* inside a run-time branch or loop */
    int dry;
    Undo *undo;
    int nundo, capundo;
    void **arena;
    int narena, caparena;
    Value *vals;             /* values the compiler made (strings, folded results) */
    int nvals, capvals;
    bool failed;
    CompileStatus status;
    char *why;
    size_t whylen;
} Comp;

static const AVal FAILV = { .kind = AV_NONE };

#define GROW(arr, n, cap)                                                          \
    do {                                                                           \
        if ((n) == (cap)) {                                                        \
            (cap) = (cap) ? (cap) * 2 : 16;                                        \
            (arr) = mem_realloc((arr), sizeof *(arr) * (size_t)(cap));             \
        }                                                                          \
    } while (0)

static void *arena_alloc(Comp *c, size_t n) {
    void *p = mem_calloc(1, n);
    GROW(c->arena, c->narena, c->caparena);
    c->arena[c->narena++] = p;
    return p;
}

static Value keep_value(Comp *c, Value v) {
    GROW(c->vals, c->nvals, c->capvals);
    c->vals[c->nvals++] = v;
    return v;
}

/* ---------- failure ---------- */

static AVal unsupported(Comp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static AVal unsupported(Comp *c, const char *fmt, ...) {
    if (!c->failed) {
        va_list ap;
        va_start(ap, fmt);
        char msg[200];
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        snprintf(c->why, c->whylen, "%s:%d:%d: %s", c->src ? c->src->name : "?", c->loc.line, c->loc.col, msg);
        c->failed = true;
        c->status = COMPILE_UNSUPPORTED;
    }
    return FAILV;
}

static AVal error_at(Comp *c, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static AVal error_at(Comp *c, SrcLoc loc, const char *fmt, ...) {
    if (!c->failed) {
        char msg[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        Source *saved = c->I->cur_src;
        c->I->cur_src = c->src;
        interp_error_at(c->I, loc, "%s", msg);
        c->I->cur_src = saved;
        c->failed = true;
        c->status = COMPILE_ERROR;
    }
    return FAILV;
}

static AVal op_failed(Comp *c) { return error_at(c, c->loc, "%s", op_error()); }

#define TRY(x)                                                                     \
    do {                                                                           \
        x;                                                                         \
        if (c->failed) return FAILV;                                               \
    } while (0)

/* ---------- emission ---------- */

static Ins *emit(Comp *c, InsOp op) {
    int i = graph_emit(c->g, op, c->loc, c->src);
    return &c->g->code[i];
}

static int new_num(Comp *c, bool is_bool) {
    int r = graph_reg(c->g, R_NUM);
    c->g->regs[r].is_bool = is_bool;
    return r;
}

static int new_tensor(Comp *c, DType dt, const Shape *s) {
    int r = graph_reg(c->g, R_TENSOR);
    c->g->regs[r].dtype = dt;
    c->g->regs[r].shape = *s;
    return r;
}

static AVal tensor_av(Comp *c, DType dt, const Shape *s) {
    AVal v = { .kind = AV_TENSOR, .dtype = dt, .shape = *s };
    v.reg = new_tensor(c, dt, s);
    return v;
}

static AVal num_const(double x) { return (AVal){ .kind = AV_NUM, .known = true, .num = x, .reg = -1 }; }
static AVal bool_const(bool b) {
    AVal v = num_const(b);
    v.is_bool = true;
    return v;
}
static AVal const_av(Value k) { return (AVal){ .kind = AV_CONST, .k = k, .reg = -1 }; }

/* A register holding the number (pure constants get one on demand). */
static int num_reg(Comp *c, AVal *v) {
    if (v->reg >= 0) return v->reg;
    Ins *in = emit(c, I_NCONST);
    in->dst = new_num(c, v->is_bool);
    in->imm = v->num;
    v->reg = in->dst;
    return in->dst;
}

/* A constant tensor computed now, with the run-time kernels (constant folding). */
static AVal tensor_const(Comp *c, Tensor *t) {
    Graph *g = c->g;
    g->consts = mem_realloc(g->consts, sizeof(Tensor *) * (size_t)(g->nconsts + 1));
    g->consts[g->nconsts] = t;
    Shape s;
    shape_of(t, &s);
    AVal v = tensor_av(c, t->dtype, &s);
    Ins *in = emit(c, I_TCONST);
    in->dst = v.reg;
    in->aux = g->nconsts++;
    return v;
}

/* ---------- structures ---------- */

static AStruct *astruct_new(Comp *c, bool dict) {
    AStruct *s = arena_alloc(c, sizeof *s);
    s->dict = dict;
    s->obj = -1;
    return s;
}

/* Before a dry run changes a structure, remember how it was. */
static void undo_save(Comp *c, AStruct *s) {
    if (!c->dry) return;
    for (int i = 0; i < c->nundo; i++)
        if (c->undo[i].st == s) return;
    GROW(c->undo, c->nundo, c->capundo);
    Undo *u = &c->undo[c->nundo++];
    u->st = s;
    u->n = s->n;
    u->items = mem_alloc(sizeof(AVal) * (size_t)(s->n + 1));
    if (s->n) memcpy(u->items, s->items, sizeof(AVal) * (size_t)s->n);
    u->keys = mem_alloc(sizeof(char *) * (size_t)(s->n + 1));
    if (s->keys && s->n) memcpy(u->keys, s->keys, sizeof(char *) * (size_t)s->n);
}

static void astruct_push(Comp *c, AStruct *s, const char *key, AVal v) {
    undo_save(c, s);
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        AVal *items = arena_alloc(c, sizeof(AVal) * (size_t)s->cap);
        if (s->n) memcpy(items, s->items, sizeof(AVal) * (size_t)s->n);
        s->items = items;
        if (s->dict) {
            char **keys = arena_alloc(c, sizeof(char *) * (size_t)s->cap);
            if (s->n) memcpy(keys, s->keys, sizeof(char *) * (size_t)s->n);
            s->keys = keys;
        }
    }
    if (s->dict) {
        char *k = arena_alloc(c, strlen(key) + 1);
        strcpy(k, key);
        s->keys[s->n] = k;
    }
    s->items[s->n++] = v;
}

static int astruct_find(AStruct *s, const char *key) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->keys[i], key)) return i;
    return -1;
}

/* ---------- variables and inputs ---------- */

static bool key_eq(VarKey a, VarKey b) { return a.kind == b.kind && a.slot == b.slot && a.ptr == b.ptr; }

static Binding *find_binding(Binding *b, int n, VarKey k) {
    for (int i = n - 1; i >= 0; i--)
        if (key_eq(b[i].key, k)) return &b[i];
    return NULL;
}

static void env_set(Comp *c, VarKey k, AVal v, const char *name, bool assigned) {
    Binding *b = find_binding(c->env, c->nenv, k);
    if (!b) {
        GROW(c->env, c->nenv, c->capenv);
        b = &c->env[c->nenv++];
        b->key = k;
        b->assigned = false;
        b->name = name;
    }
    b->v = v;
    b->assigned |= assigned;
}

static int add_guard(Comp *c, GuardKind kind, int input) {
    Graph *g = c->g;
    g->guards = mem_realloc(g->guards, sizeof(Guard) * (size_t)(g->nguards + 1));
    Guard *gd = &g->guards[g->nguards];
    memset(gd, 0, sizeof *gd);
    gd->kind = kind;
    gd->input = input;
    gd->reg = -1;
    gd->obj = -1;
    gd->k = NIL_VAL;
    return g->nguards++;
}

static int add_input(Comp *c, InputSrc src) {
    Graph *g = c->g;
    g->inputs = mem_realloc(g->inputs, sizeof(InputSrc) * (size_t)(g->ninputs + 1));
    g->inputs[g->ninputs] = src;
    return g->ninputs++;
}

/* Turns the current value of input `in` into an AVal, adding the guards it needs. */
static AVal lift(Comp *c, Value v, int in, const char *name) {
    switch (v.type) {
    case VAL_NUM: {
        int gi = add_guard(c, G_NUMBER, in);
        AVal a = { .kind = AV_NUM, .known = true, .num = v.as.n };
        a.reg = new_num(c, false);
        c->g->guards[gi].reg = a.reg;
        c->g->guards[gi].num = v.as.n;
        if (c->nnum < 64) {
            c->numguards[c->nnum] = gi;
            a.deps = (uint64_t)1 << c->nnum++;
        } else {
            c->g->guards[gi].kind = G_NUMBER_EQ;   /* past 64 number inputs, guard the value */
        }
        return a;
    }
    case VAL_TENSOR: {
        Shape s;
        shape_of(v.as.t, &s);
        int gi = add_guard(c, G_TENSOR, in);
        AVal a = tensor_av(c, v.as.t->dtype, &s);
        c->g->guards[gi].dtype = v.as.t->dtype;
        c->g->guards[gi].shape = s;
        c->g->guards[gi].reg = a.reg;
        return a;
    }
    case VAL_BOOL: {
        int gi = add_guard(c, G_CONST, in);
        c->g->guards[gi].k = v;
        return bool_const(v.as.b);
    }
    case VAL_LIST:
    case VAL_DICT: {
        bool dict = v.type == VAL_DICT;
        int gi = add_guard(c, dict ? G_DICT : G_LIST, in);
        AStruct *st = astruct_new(c, dict);
        st->obj = c->g->nobjs++;
        c->g->guards[gi].obj = st->obj;
        int n = dict ? AS_DICT(v)->len : AS_LIST(v)->len;
        c->g->guards[gi].n = n;
        if (dict) {
            c->g->guards[gi].keys = mem_alloc(sizeof(char *) * (size_t)(n + 1));
            for (int i = 0; i < n; i++) {
                ObjString *k = AS_DICT(v)->entries[i].key;
                c->g->guards[gi].keys[i] = mem_strndup(k->chars, (size_t)k->len);
            }
        }
        for (int i = 0; i < n && !c->failed; i++) {
            char leafname[256];
            if (dict) snprintf(leafname, sizeof leafname, "%s.%s", name, AS_DICT(v)->entries[i].key->chars);
            else snprintf(leafname, sizeof leafname, "%s[%d]", name, i);
            InputSrc src = { SRC_LEAF, in, NULL, NULL, i, mem_strndup(leafname, strlen(leafname)) };
            int leaf = add_input(c, src);
            Value item = dict ? AS_DICT(v)->entries[i].val : AS_LIST(v)->items[i];
            AVal a = lift(c, item, leaf, c->g->inputs[leaf].name);
            astruct_push(c, st, dict ? AS_DICT(v)->entries[i].key->chars : NULL, a);
        }
        AVal a = { .kind = dict ? AV_DICT : AV_LIST, .st = st, .reg = -1 };
        return a;
    }
    case VAL_STR:
    case VAL_NIL:
    case VAL_FUNC: {
        int gi = add_guard(c, G_CONST, in);
        c->g->guards[gi].k = val_retain(v);
        return const_av(v);
    }
    default:
        return error_at(c, c->loc, "undefined variable '%s'", name);
    }
}

/* The block frame's value for a key, and where it comes from at run time. */
static bool key_source(Comp *c, VarKey k, Value *val, InputSrc *src) {
    memset(src, 0, sizeof *src);
    switch (k.kind) {
    case K_LOCAL:
        if (c->fn) {
            if (k.slot >= c->fn->proto->nparams) return false;
            *val = c->params[k.slot];
            src->kind = SRC_ARG;
        } else {
            *val = c->frame->slots[k.slot];
            src->kind = SRC_LOCAL;
        }
        src->slot = k.slot;
        return true;
    case K_GLOBAL:
        *val = ((Module *)k.ptr)->g.vals[k.slot];
        src->kind = SRC_GLOBAL;
        src->mod = k.ptr;
        src->slot = k.slot;
        return true;
    case K_CELL: {
        ObjCell *cell = k.ptr;
        *val = cell->v;
        ObjClosure *cl = c->fn ? c->fn : c->frame->closure;
        if (!c->fn && c->frame->closure)
            for (int i = 0; i < c->frame->closure->proto->nlocals; i++)
                if (c->frame->closure->proto->is_cell[i] && c->frame->slots[i].as.o == (Obj *)cell) {
                    src->kind = SRC_CELL;
                    src->slot = i;
                    return true;
                }
        for (int i = 0; cl && i < cl->proto->nupvals; i++)
            if (cl->upvals[i] == cell) {
                src->kind = SRC_UPVAL;
                src->slot = i;
                return true;
            }
        src->kind = SRC_CELLPTR;
        src->cell = cell;
        cell->h.rc++;
        return true;
    }
    default: return false;
    }
}

static AVal read_key(Comp *c, VarKey k, const char *name) {
    Binding *b = find_binding(c->env, c->nenv, k);
    if (b) {
        if (b->v.kind == AV_NONE) return error_at(c, c->loc, "undefined variable '%s'", name);
        return b->v;
    }
    b = find_binding(c->inputs, c->ninputs, k);
    if (b) return b->v;
    Value v;
    InputSrc src;
    if (!key_source(c, k, &v, &src) || v.type == VAL_UNDEF)
        return error_at(c, c->loc, "undefined variable '%s'", name);
    src.name = mem_strndup(name, strlen(name));
    int in = add_input(c, src);
    AVal a = lift(c, v, in, name);
    if (c->failed) return FAILV;
    GROW(c->inputs, c->ninputs, c->capinputs);
    c->inputs[c->ninputs++] = (Binding){ k, a, false, name };
    return a;
}

/* The variable a NAME node refers to, in the current context. */
static VarKey name_key(Comp *c, Node *n) {
    VarKey k = { K_LOCAL, n->slot, NULL };
    Inline *ic = c->ictx;
    switch (n->scope) {
    case SCOPE_GLOBAL:
        k.kind = K_GLOBAL;
        k.ptr = ic ? ic->mod : c->mod;
        return k;
    case SCOPE_LOCAL:
    case SCOPE_CELL:
        if (ic && ic->id > 0) {
            k.kind = K_INLINE;
            k.slot = ic->id * 65536 + n->slot;
        } else if (n->scope == SCOPE_CELL && !c->fn) {
            k.kind = K_CELL;
            k.ptr = c->frame->slots[n->slot].as.o;
        }
        return k;
    default: /* SCOPE_UPVAL */
        if (ic && ic->cclosure) return ic->cclosure->caps[n->slot];
        if (ic && ic->closure) {
            k.kind = K_CELL;
            k.ptr = ic->closure->upvals[n->slot];
            return k;
        }
        k.kind = K_CELL;
        k.ptr = (c->fn ? c->fn : c->frame->closure)->upvals[n->slot];
        return k;
    }
}

/* ---------- numbers as guards ---------- */

/* The compile-time value of a number that a shape, step or structural index needs:
 * the inputs it came from become value guards. */
static bool need_const(Comp *c, AVal *v, double *out, const char *what) {
    if (v->kind != AV_NUM) {
        error_at(c, c->loc, "%s must be a number", what);
        return false;
    }
    if (!v->known) {
        unsupported(c, "%s is computed at run time; static code needs it when compiling", what);
        return false;
    }
    for (int i = 0; i < c->nnum; i++)
        if (v->deps & ((uint64_t)1 << i)) c->g->guards[c->numguards[i]].kind = G_NUMBER_EQ;
    *out = v->num;
    return true;
}

static bool need_int(Comp *c, AVal *v, int64_t *out, const char *what) {
    double x;
    if (!need_const(c, v, &x, what)) return false;
    if (x != floor(x) || !double_fits_i64(x)) {
        error_at(c, c->loc, "%s must be an integer, got %g", what, x);
        return false;
    }
    *out = (int64_t)x;
    return true;
}

/* A compile-time Value for an AVal that is fully known (used to fold pure built-ins). */
static bool pure_value(Comp *c, AVal *v, Value *out) {
    switch (v->kind) {
    case AV_CONST: *out = v->k; return true;
    case AV_NUM:
        if (!v->known || v->deps) return false;
        *out = v->is_bool ? BOOL_VAL(v->num != 0) : NUM_VAL(v->num);
        return true;
    case AV_LIST:
    case AV_DICT: {
        if (v->st->obj >= 0) return false;
        Value r;
        if (v->kind == AV_LIST) {
            ObjList *l = list_new(v->st->n);
            r = keep_value(c, OBJ_VAL(VAL_LIST, l));
            for (int i = 0; i < v->st->n; i++) {
                Value x;
                if (!pure_value(c, &v->st->items[i], &x)) return false;
                list_push(l, x);
            }
        } else {
            ObjDict *d = dict_new();
            r = keep_value(c, OBJ_VAL(VAL_DICT, d));
            for (int i = 0; i < v->st->n; i++) {
                Value x;
                if (!pure_value(c, &v->st->items[i], &x)) return false;
                dict_set_cstr(d, v->st->keys[i], x);
            }
        }
        *out = r;
        return true;
    }
    default: return false;
    }
}

/* A compile-time Value back into an AVal (results of folded built-ins). */
static AVal from_value(Comp *c, Value v) {
    switch (v.type) {
    case VAL_NUM: return num_const(v.as.n);
    case VAL_BOOL: return bool_const(v.as.b);
    case VAL_TENSOR: return tensor_const(c, tensor_retain(v.as.t));
    case VAL_LIST:
    case VAL_DICT: {
        bool dict = v.type == VAL_DICT;
        AStruct *st = astruct_new(c, dict);
        int n = dict ? AS_DICT(v)->len : AS_LIST(v)->len;
        for (int i = 0; i < n; i++) {
            AVal a = from_value(c, dict ? AS_DICT(v)->entries[i].val : AS_LIST(v)->items[i]);
            if (c->failed) return FAILV;
            astruct_push(c, st, dict ? AS_DICT(v)->entries[i].key->chars : NULL, a);
        }
        return (AVal){ .kind = dict ? AV_DICT : AV_LIST, .st = st, .reg = -1 };
    }
    default: return const_av(keep_value(c, val_retain(v)));
    }
}

/* ---------- expressions ---------- */

static AVal expr(Comp *c, Node *n);
static void stmt(Comp *c, Node *n);
static void block(Comp *c, Node *b);
static AVal call_value(Comp *c, AVal fn, AVal *args, int nargs, char **kwnames, AVal *kw, int nkw, SrcLoc loc);

static bool is_cmp(int tok) {
    return tok == TOK_EQ || tok == TOK_NE || tok == TOK_LT || tok == TOK_LE || tok == TOK_GT || tok == TOK_GE;
}

static AVal tensor_binary(Comp *c, OpCode op, AVal a, AVal b) {
    Shape so;
    DType dt;
    if (infer_binary(op, &a.shape, a.dtype, &b.shape, b.dtype, &so, &dt)) return op_failed(c);
    AVal r = tensor_av(c, dt, &so);
    Ins *in = emit(c, I_BINARY);
    in->dst = r.reg;
    in->a = a.reg;
    in->b = b.reg;
    in->aux = op;
    return r;
}

/* tensor (op) number, or number (op) tensor when num_left. */
static AVal tensor_scalar_op(Comp *c, OpCode op, AVal t, AVal x, bool num_left) {
    double sample = x.num;
    if (!dtype_is_float(t.dtype) && !need_const(c, &x, &sample, "a number combined with an integer tensor"))
        return FAILV;
    DType sd = scalar_dtype(op, t.dtype, sample), dt;
    Shape s0 = { 0, { 0 } }, so;
    int rc = num_left ? infer_binary(op, &s0, sd, &t.shape, t.dtype, &so, &dt)
                      : infer_binary(op, &t.shape, t.dtype, &s0, sd, &so, &dt);
    if (rc) return op_failed(c);
    int xr = num_reg(c, &x);
    AVal r = tensor_av(c, dt, &so);
    Ins *in = emit(c, I_BINARY_S);
    in->dst = r.reg;
    in->a = t.reg;
    in->b = xr;
    in->c = num_left;
    in->aux = op;
    return r;
}

static double fold_num(int op, double x, double y) {
    return op >= NBIN_OP_BASE ? num_minmax((OpCode)(op - NBIN_OP_BASE), x, y) : num_binary(op, x, y);
}

static AVal num_binary_av(Comp *c, int op, AVal a, AVal b) {
    AVal r = { .kind = AV_NUM, .reg = -1 };
    r.is_bool = is_cmp(op);
    r.known = a.known && b.known;
    r.deps = a.deps | b.deps;
    if (r.known) r.num = fold_num(op, a.num, b.num);
    if (r.known && !r.deps) return r;   /* a pure constant */
    int ra = num_reg(c, &a), rb = num_reg(c, &b);
    Ins *in = emit(c, I_NBIN);
    in->dst = r.reg = new_num(c, r.is_bool);
    in->a = ra;
    in->b = rb;
    in->aux = op;
    return r;
}

static AVal binary(Comp *c, Node *n) {
    AVal a, b;
    TRY(a = expr(c, n->a));
    TRY(b = expr(c, n->b));
    c->loc = n->loc;
    int op = n->op;
    if (a.kind == AV_NUM && b.kind == AV_NUM && !(a.is_bool && b.is_bool && op != TOK_EQ && op != TOK_NE))
        return num_binary_av(c, op, a, b);
    if (a.kind == AV_NUM && b.kind == AV_NUM) return num_binary_av(c, op, a, b);
    if (op == TOK_AT) {
        if (a.kind != AV_TENSOR || b.kind != AV_TENSOR) return error_at(c, n->loc, "'@' needs two tensors");
        Shape so;
        DType dt;
        if (infer_matmul(&a.shape, a.dtype, &b.shape, b.dtype, &so, &dt)) return op_failed(c);
        AVal r = tensor_av(c, dt, &so);
        Ins *in = emit(c, I_MATMUL);
        in->dst = r.reg;
        in->a = a.reg;
        in->b = b.reg;
        return r;
    }
    if (a.kind == AV_TENSOR && b.kind == AV_TENSOR) return tensor_binary(c, (OpCode)tensor_op_of(op), a, b);
    if (a.kind == AV_TENSOR && b.kind == AV_NUM && !b.is_bool) return tensor_scalar_op(c, (OpCode)tensor_op_of(op), a, b, false);
    if (b.kind == AV_TENSOR && a.kind == AV_NUM && !a.is_bool) return tensor_scalar_op(c, (OpCode)tensor_op_of(op), b, a, true);
    if (a.kind == AV_TENSOR || b.kind == AV_TENSOR) {
        if (op == TOK_EQ || op == TOK_NE) {
            AVal o = a.kind == AV_TENSOR ? b : a;
            if (o.kind == AV_CONST || o.kind == AV_LIST || o.kind == AV_DICT || o.kind == AV_CLOSURE)
                return bool_const(op == TOK_NE);
        }
        return unsupported(c, "this mix of a tensor and a %s", a.kind == AV_TENSOR ? "non-number" : "non-number");
    }
    Value x, y;
    if (pure_value(c, &a, &x) && pure_value(c, &b, &y)) {
        Value r = value_binary(c->I, op, x, y);
        if (IS_ERR(r)) {
            c->failed = true;
            c->status = COMPILE_ERROR;
            Source *saved = c->I->cur_src;
            c->I->cur_src = c->src;
            interp_attach_loc(c->I, n->loc);
            c->I->cur_src = saved;
            return FAILV;
        }
        keep_value(c, r);
        return from_value(c, r);
    }
    if ((op == TOK_EQ || op == TOK_NE) && a.kind != b.kind && a.kind != AV_NUM && b.kind != AV_NUM)
        return bool_const(op == TOK_NE);
    return unsupported(c, "operator '%s' on these values", op == TOK_PLUS ? "+" : "this");
}

/* Truth value of a condition: known (returns 0/1) or a bool register (returns -1, *reg). */
static int truth(Comp *c, AVal v, int *reg, SrcLoc loc) {
    switch (v.kind) {
    case AV_CONST: return val_truthy_simple(v.k);
    case AV_NUM:
        if (!v.is_bool) return 1;   /* every number is true, 0 included */
        if (v.known && !v.deps) return v.num != 0;
        if (v.known) {
            double x;
            need_const(c, &v, &x, "a condition");
            return x != 0;
        }
        *reg = v.reg;
        return -1;
    case AV_TENSOR: {
        c->loc = loc;
        Ins *in = emit(c, I_TRUTH);
        in->dst = new_num(c, true);
        in->a = v.reg;
        *reg = in->dst;
        return -1;
    }
    default: return 1;
    }
}

static AVal not_expr(Comp *c, Node *n) {
    AVal a;
    TRY(a = expr(c, n->a));
    int reg, t = truth(c, a, &reg, n->a->loc);
    if (c->failed) return FAILV;
    if (t >= 0) return bool_const(!t);
    c->loc = n->loc;
    Ins *in = emit(c, I_NNOT);
    in->dst = new_num(c, true);
    in->a = reg;
    AVal r = { .kind = AV_NUM, .is_bool = true, .reg = in->dst };
    return r;
}

static AVal and_or(Comp *c, Node *n) {
    AVal a;
    TRY(a = expr(c, n->a));
    int reg, t = truth(c, a, &reg, n->a->loc);
    if (c->failed) return FAILV;
    bool is_and = n->kind == AST_AND;
    if (t >= 0) return (is_and == (t != 0)) ? expr(c, n->b) : a;
    return unsupported(c, "'and'/'or' on a value known only at run time");
}

static AVal make_list(Comp *c, Node *n) {
    AStruct *st = astruct_new(c, false);
    for (int i = 0; i < n->n; i++) {
        AVal v;
        TRY(v = expr(c, n->kids[i]));
        astruct_push(c, st, NULL, v);
    }
    return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
}

static AVal make_dict(Comp *c, Node *n) {
    AStruct *st = astruct_new(c, true);
    for (int i = 0; i < n->n; i++) {
        AVal v;
        TRY(v = expr(c, n->kids[i]));
        int at = astruct_find(st, n->names[i]);
        if (at >= 0) st->items[at] = v;
        else astruct_push(c, st, n->names[i], v);
    }
    return (AVal){ .kind = AV_DICT, .st = st, .reg = -1 };
}

static AVal make_closure(Comp *c, FnProto *p) {
    CClosure *cl = arena_alloc(c, sizeof *cl);
    cl->proto = p;
    cl->mod = c->ictx ? c->ictx->mod : c->mod;
    cl->caps = arena_alloc(c, sizeof(VarKey) * (size_t)(p->nupvals + 1));
    for (int i = 0; i < p->nupvals; i++) {
        Node fake = { .kind = AST_NAME, .scope = p->upvals[i].from_local ? SCOPE_LOCAL : SCOPE_UPVAL,
                      .slot = p->upvals[i].index };
        cl->caps[i] = name_key(c, &fake);
        if (p->upvals[i].from_local && !c->ictx && !c->fn) {
            /* a local of the block's frame captured by a closure is a cell there */
            cl->caps[i].kind = K_CELL;
            cl->caps[i].ptr = c->frame->slots[p->upvals[i].index].as.o;
        }
    }
    return (AVal){ .kind = AV_CLOSURE, .cl = cl, .reg = -1 };
}

/* ---------- indexing ---------- */

static AVal index_tensor(Comp *c, AVal t, Node *n, AVal *set_value) {
    IndexItem *items = mem_calloc((size_t)n->n + 1, sizeof(IndexItem));
    int *regs = mem_alloc(sizeof(int) * (size_t)(n->n + 1));
    AVal r = FAILV;
    for (int k = 0; k < n->n; k++) {
        Node *it = n->kids[k];
        regs[k] = -1;
        if (it->kind == AST_ELLIPSIS) { items[k].kind = IDX_ELLIPSIS; continue; }
        if (it->kind == AST_SLICE) {
            items[k].kind = IDX_SLICE;
            items[k].step = 1;
            Node *parts[3] = { it->a, it->b, it->c };
            for (int j = 0; j < 3; j++) {
                if (!parts[j]) continue;
                AVal v = expr(c, parts[j]);
                if (c->failed) goto out;
                if (v.kind == AV_CONST && v.k.type == VAL_NIL) continue;
                int64_t x;
                c->loc = parts[j]->loc;
                if (!need_int(c, &v, &x, "a slice bound")) goto out;
                if (j == 0) { items[k].has_start = true; items[k].start = x; }
                else if (j == 1) { items[k].has_stop = true; items[k].stop = x; }
                else items[k].step = x;
            }
            if (items[k].step == 0) { error_at(c, n->loc, "slice step cannot be zero"); goto out; }
            continue;
        }
        AVal v = expr(c, it);
        if (c->failed) goto out;
        if (v.kind == AV_NUM && !v.is_bool) {
            if (v.known && v.num != floor(v.num)) {
                error_at(c, n->loc, "tensor index must be an integer, got %g", v.num);
                goto out;
            }
            items[k].kind = IDX_INT;
            if (v.known && !v.deps) items[k].i = (int64_t)v.num;
            else regs[k] = num_reg(c, &v);
        } else if (v.kind == AV_TENSOR && v.dtype == DT_I64) {
            items[k].kind = IDX_TENSOR;
            regs[k] = v.reg;
            /* a stand-in with the index's shape for inference */
            items[k].t = NULL;
            Tensor *stand = tensor_zeros(DT_I64, &v.shape);
            if (!stand) { op_failed(c); goto out; }
            items[k].t = stand;
        } else {
            unsupported(c, "this kind of tensor index (only integers, slices, ... and i64 tensors)");
            goto out;
        }
    }
    Shape so;
    c->loc = n->loc;
    if (infer_index(&t.shape, items, n->n, &so)) {
        op_failed(c);
        goto out;
    }
    for (int k = 0; k < n->n; k++)
        if (items[k].kind == IDX_TENSOR) { tensor_release((Tensor *)items[k].t); items[k].t = NULL; }
    if (set_value) {
        AVal v = *set_value;
        if (v.kind == AV_NUM && !v.is_bool) {
            /* a number assigned into a tensor: a 0-d tensor of the tensor's dtype, as eagerly */
            Shape s0 = { 0, { 0 } };
            int xr = num_reg(c, &v);
            v = tensor_av(c, t.dtype, &s0);
            Ins *sc = emit(c, I_SCALAR);
            sc->dst = v.reg;
            sc->a = xr;
            sc->aux = t.dtype;
        }
        if (v.kind != AV_TENSOR) { unsupported(c, "assigning a non-tensor into a tensor"); goto out; }
        if (infer_broadcast_to(&v.shape, &so)) {
            char b1[600], b2[600];
            error_at(c, n->loc, "cannot assign a value of shape %s to an index of shape %s",
                     shape_str(&v.shape, b1, sizeof b1), shape_str(&so, b2, sizeof b2));
            goto out;
        }
        r = tensor_av(c, t.dtype, &t.shape);
        Ins *in = emit(c, I_INDEX_SET);
        in->dst = r.reg;
        in->a = t.reg;
        in->b = v.reg;
        in->idx = items;
        in->nidx = n->n;
        in->args = regs;
        in->nargs = n->n;
        return r;
    }
    r = tensor_av(c, t.dtype, &so);
    Ins *in = emit(c, I_INDEX);
    in->dst = r.reg;
    in->a = t.reg;
    in->idx = items;
    in->nidx = n->n;
    in->args = regs;
    in->nargs = n->n;
    return r;
out:
    for (int k = 0; k < n->n; k++)
        if (items[k].kind == IDX_TENSOR && items[k].t) tensor_release((Tensor *)items[k].t);
    mem_free(items);
    mem_free(regs);
    return FAILV;
}

static AVal index_struct(Comp *c, AVal obj, AVal key, SrcLoc loc) {
    if (obj.kind == AV_DICT) {
        if (key.kind != AV_CONST || key.k.type != VAL_STR) return error_at(c, loc, "dict keys are strings");
        int at = astruct_find(obj.st, AS_STR(key.k)->chars);
        if (at < 0) return error_at(c, loc, "key '%s' not found in dict", AS_STR(key.k)->chars);
        return obj.st->items[at];
    }
    int64_t i;
    c->loc = loc;
    if (!need_int(c, &key, &i, "a list index")) return FAILV;
    if (i < 0) i += obj.st->n;
    if (i < 0 || i >= obj.st->n) return error_at(c, loc, "list index out of range");
    return obj.st->items[i];
}

static AVal index_expr(Comp *c, Node *n) {
    AVal obj;
    TRY(obj = expr(c, n->a));
    c->loc = n->loc;
    if (obj.kind == AV_TENSOR) return index_tensor(c, obj, n, NULL);
    if ((obj.kind == AV_LIST || obj.kind == AV_DICT) && n->n == 1 && n->kids[0]->kind != AST_SLICE &&
        n->kids[0]->kind != AST_ELLIPSIS) {
        AVal key;
        TRY(key = expr(c, n->kids[0]));
        return index_struct(c, obj, key, n->loc);
    }
    Value o;
    if (pure_value(c, &obj, &o) && n->n == 1 && n->kids[0]->kind != AST_SLICE && n->kids[0]->kind != AST_ELLIPSIS) {
        AVal key;
        Value kv;
        TRY(key = expr(c, n->kids[0]));
        if (pure_value(c, &key, &kv)) {
            Value r = value_index(c->I, o, &kv, 1);
            if (IS_ERR(r)) { c->failed = true; c->status = COMPILE_ERROR; interp_attach_loc(c->I, n->loc); return FAILV; }
            keep_value(c, r);
            return from_value(c, r);
        }
    }
    return unsupported(c, "this kind of indexing");
}

static AVal field_expr(Comp *c, Node *n) {
    AVal obj;
    TRY(obj = expr(c, n->a));
    c->loc = n->loc;
    if (obj.kind == AV_DICT) {
        int at = astruct_find(obj.st, n->str);
        if (at < 0) return error_at(c, n->loc, "key '%s' not found in dict", n->str);
        return obj.st->items[at];
    }
    if (obj.kind == AV_TENSOR) {
        if (!strcmp(n->str, "shape")) {
            AStruct *st = astruct_new(c, false);
            for (int i = 0; i < obj.shape.ndim; i++) astruct_push(c, st, NULL, num_const((double)obj.shape.d[i]));
            return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
        }
        if (!strcmp(n->str, "ndim")) return num_const(obj.shape.ndim);
        if (!strcmp(n->str, "size")) return num_const((double)shape_count(&obj.shape));
        if (!strcmp(n->str, "dtype")) return const_av(keep_value(c, val_cstr(dtype_name(obj.dtype))));
        if (!strcmp(n->str, "device")) return const_av(keep_value(c, val_cstr("cpu")));
        if (!strcmp(n->str, "T")) {
            int perm[TSL_MAX_RANK];
            Shape so;
            infer_transpose(&obj.shape, NULL, -1, perm, &so);
            AVal r = tensor_av(c, obj.dtype, &so);
            Ins *in = emit(c, I_TRANSPOSE);
            in->dst = r.reg;
            in->a = obj.reg;
            in->nargs = -1;
            return r;
        }
        return error_at(c, n->loc, "tensor has no attribute '%s'", n->str);
    }
    return error_at(c, n->loc, "a %s has no field '%s'", obj.kind == AV_LIST ? "list" : "value", n->str);
}

/* ---------- calls ---------- */

static AVal call_expr(Comp *c, Node *n) {
    AVal fn;
    TRY(fn = expr(c, n->a));
    AVal *args = mem_alloc(sizeof(AVal) * (size_t)(n->n + n->nk + 1));
    AVal r = FAILV;
    for (int i = 0; i < n->n + n->nk; i++) {
        args[i] = expr(c, i < n->n ? n->kids[i] : n->kw[i - n->n]);
        if (c->failed) goto out;
    }
    c->loc = n->loc;
    r = call_value(c, fn, args, n->n, n->names, args + n->n, n->nk, n->loc);
out:
    mem_free(args);
    return r;
}

static AVal compile_builtin(Comp *c, const char *name, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw,
                            int nkw, SrcLoc loc);

/* Inlines a call of a TSL function. */
static AVal inline_call(Comp *c, FnProto *p, Module *mod, ObjClosure *real, CClosure *cc, AVal *args, int nargs,
                        char **kwn, AVal *kw, int nkw, SrcLoc loc) {
    const char *fname = p->name[0] ? p->name : "<fn>";
    if (c->inline_depth > 64) return unsupported(c, "calls nested more than 64 deep (recursion?)");
    if (nargs > p->nparams)
        return error_at(c, loc, "%s() takes %d argument%s but %d were given", fname, p->nparams,
                        p->nparams == 1 ? "" : "s", nargs);
    Inline ic = { c->ictx, ++c->next_inline, p, mod, real, cc, false, FAILV, c->branch_depth };
    AVal *bound = mem_calloc((size_t)p->nparams + 1, sizeof(AVal));
    AVal r = FAILV;
    for (int i = 0; i < nargs; i++) bound[i] = args[i];
    for (int k = 0; k < nkw; k++) {
        int i = 0;
        while (i < p->nparams && strcmp(p->params[i], kwn[k])) i++;
        if (i == p->nparams) { error_at(c, loc, "%s() got an unknown keyword argument '%s'", fname, kwn[k]); goto out; }
        if (bound[i].kind != AV_NONE) { error_at(c, loc, "%s() got multiple values for parameter '%s'", fname, p->params[i]); goto out; }
        bound[i] = kw[k];
    }
    Source *saved_src = c->src;
    Inline *saved_ctx = c->ictx;
    c->ictx = &ic;
    c->src = mod->src;
    c->inline_depth++;
    for (int i = 0; i < p->nparams; i++) {
        VarKey key = { K_INLINE, ic.id * 65536 + i, NULL };
        if (bound[i].kind == AV_NONE) {
            if (!p->defaults[i]) {
                c->ictx = saved_ctx;
                c->src = saved_src;
                c->inline_depth--;
                error_at(c, loc, "%s() missing argument '%s'", fname, p->params[i]);
                goto out;
            }
            bound[i] = expr(c, p->defaults[i]);
            if (c->failed) break;
        }
        env_set(c, key, bound[i], p->params[i], false);
    }
    if (!c->failed) block(c, p->body);
    c->ictx = saved_ctx;
    c->src = saved_src;
    c->inline_depth--;
    if (!c->failed) r = ic.returned ? ic.result : const_av(NIL_VAL);
out:
    mem_free(bound);
    return r;
}

static AVal call_value(Comp *c, AVal fn, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, SrcLoc loc) {
    if (fn.kind == AV_CONST && fn.k.type == VAL_FUNC) {
        Obj *o = fn.k.as.o;
        if (o->kind == OBJ_BUILTIN)
            return compile_builtin(c, ((ObjBuiltin *)o)->name, (ObjBuiltin *)o, args, nargs, kwn, kw, nkw, loc);
        ObjClosure *cl = (ObjClosure *)o;
        return inline_call(c, cl->proto, cl->module, cl, NULL, args, nargs, kwn, kw, nkw, loc);
    }
    if (fn.kind == AV_CLOSURE)
        return inline_call(c, fn.cl->proto, fn.cl->mod, NULL, fn.cl, args, nargs, kwn, kw, nkw, loc);
    if (fn.kind == AV_DICT) {
        int at = astruct_find(fn.st, "forward");
        if (at < 0) return error_at(c, loc, "dict is not callable: it has no 'forward' field");
        AVal *with_self = mem_alloc(sizeof(AVal) * (size_t)(nargs + 1));
        with_self[0] = fn;
        memcpy(with_self + 1, args, sizeof(AVal) * (size_t)nargs);
        AVal r = call_value(c, fn.st->items[at], with_self, nargs + 1, kwn, kw, nkw, loc);
        mem_free(with_self);
        return r;
    }
    const char *what = fn.kind == AV_TENSOR ? "tensor" : fn.kind == AV_NUM ? "number" : fn.kind == AV_LIST ? "list" : "value";
    if (fn.kind == AV_CONST) what = val_type_name(fn.k);
    return error_at(c, loc, "a %s is not callable", what);
}

/* ---------- built-ins ---------- */

static bool bind(Comp *c, const char *fname, const char *const *params, int nreq, AVal *args, int nargs, char **kwn,
                 AVal *kw, int nkw, AVal *out) {
    int np = 0;
    while (params[np]) np++;
    if (nargs > np) {
        error_at(c, c->loc, "%s() takes at most %d argument%s but %d were given", fname, np, np == 1 ? "" : "s", nargs);
        return false;
    }
    for (int i = 0; i < np; i++) out[i] = i < nargs ? args[i] : FAILV;
    for (int k = 0; k < nkw; k++) {
        int i = 0;
        while (i < np && strcmp(params[i], kwn[k])) i++;
        if (i == np) { error_at(c, c->loc, "%s() got an unknown keyword argument '%s'", fname, kwn[k]); return false; }
        out[i] = kw[k];
    }
    for (int i = 0; i < nreq; i++)
        if (out[i].kind == AV_NONE) { error_at(c, c->loc, "%s() missing argument '%s'", fname, params[i]); return false; }
    return true;
}

static bool axes_of(Comp *c, AVal *v, int *axes, int *n) {
    if (v->kind == AV_NONE || (v->kind == AV_CONST && v->k.type == VAL_NIL)) { *n = -1; return true; }
    int64_t x;
    if (v->kind == AV_LIST) {
        if (v->st->n > TSL_MAX_RANK) { error_at(c, c->loc, "too many axes"); return false; }
        for (int i = 0; i < v->st->n; i++) {
            if (!need_int(c, &v->st->items[i], &x, "an axis")) return false;
            axes[i] = (int)x;
        }
        *n = v->st->n;
        return true;
    }
    if (!need_int(c, v, &x, "an axis")) return false;
    if (x > 1000 || x < -1000) { error_at(c, c->loc, "axis %lld is out of range", (long long)x); return false; }
    axes[0] = (int)x;
    *n = 1;
    return true;
}

static bool shape_of_av(Comp *c, AVal *v, Shape *s, bool allow_minus1) {
    int64_t x;
    if (v->kind == AV_NUM) {
        s->ndim = 1;
        if (!need_int(c, v, &x, "a shape")) return false;
        s->d[0] = x;
    } else if (v->kind == AV_LIST) {
        if (v->st->n > TSL_MAX_RANK) { error_at(c, c->loc, "rank %d is above the limit of %d", v->st->n, TSL_MAX_RANK); return false; }
        s->ndim = v->st->n;
        for (int i = 0; i < v->st->n; i++) {
            if (!need_int(c, &v->st->items[i], &x, "a shape")) return false;
            s->d[i] = x;
        }
    } else {
        error_at(c, c->loc, "shape must be a list of numbers or a number");
        return false;
    }
    for (int i = 0; i < s->ndim; i++)
        if (s->d[i] < 0 && !(allow_minus1 && s->d[i] == -1)) {
            error_at(c, c->loc, "negative dimension %lld in shape", (long long)s->d[i]);
            return false;
        }
    return true;
}

static bool is_pure_builtin(const char *name) {
    static const char *const pure[] = {
        "tensor", "zeros", "ones", "full", "arange", "linspace", "eye", "range", "str", "int", "float", "bool",
        "type", "len", "keys", "get", "equal", "allclose", "abs", "exp", "log", "sqrt", "sin", "cos", "tanh",
        "sigmoid", "relu", "floor", "ceil", "round", "sign", "maximum", "minimum", NULL,
    };
    for (int i = 0; pure[i]; i++)
        if (!strcmp(pure[i], name)) return true;
    return false;
}

/* Calls a pure built-in now, on compile-time values (constant folding, same code as eager). */
static bool fold_builtin(Comp *c, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, AVal *out) {
    Value vals[16];
    if (nargs + nkw > 16) return false;
    for (int i = 0; i < nargs + nkw; i++)
        if (!pure_value(c, i < nargs ? &args[i] : &kw[i - nargs], &vals[i])) return false;
    CallArgs ca = { vals, nargs, kwn, vals + nargs, nkw };
    Value r = b->fn(c->I, &ca);
    if (IS_ERR(r)) {
        c->failed = true;
        c->status = COMPILE_ERROR;
        Source *saved = c->I->cur_src;
        c->I->cur_src = c->src;
        interp_attach_loc(c->I, c->loc);
        c->I->cur_src = saved;
        return true;
    }
    keep_value(c, r);
    *out = from_value(c, r);
    return true;
}

static Opnd opnd_of(Comp *c, AVal v);

static AVal builtin_print(Comp *c, AVal *args, int nargs, int nkw) {
    if (nkw) return error_at(c, c->loc, "print() takes no keyword arguments");
    Ins *in = emit(c, I_PRINT);
    int at = (int)(in - c->g->code);
    Opnd *ops = mem_calloc((size_t)nargs + 1, sizeof(Opnd));
    for (int i = 0; i < nargs; i++) ops[i] = opnd_of(c, args[i]);
    in = &c->g->code[at];
    in->opnds = ops;
    in->nopnds = nargs;
    return const_av(NIL_VAL);
}

static AVal builtin_assert(Comp *c, AVal *args, int nargs, char **kwn, AVal *kw, int nkw) {
    static const char *const p[] = { "cond", "message", NULL };
    AVal v[2];
    if (!bind(c, "assert", p, 1, args, nargs, kwn, kw, nkw, v)) return FAILV;
    int reg = -1, t = truth(c, v[0], &reg, c->loc);
    if (c->failed) return FAILV;
    if (t == 1) return const_av(NIL_VAL);
    if (t == 0) reg = num_reg(c, &(AVal){ .kind = AV_NUM, .known = true, .num = 0, .reg = -1, .is_bool = true });
    Ins *in = emit(c, I_ASSERT);
    int at = (int)(in - c->g->code);
    Opnd *msg = NULL;
    if (v[1].kind != AV_NONE) {
        msg = mem_calloc(1, sizeof(Opnd));
        *msg = opnd_of(c, v[1]);
    }
    in = &c->g->code[at];
    in->a = reg;
    in->opnds = msg;
    in->nopnds = msg ? 1 : 0;
    return const_av(NIL_VAL);
}

static AVal emit_unary(Comp *c, OpCode op, AVal t) {
    DType dt;
    if (infer_unary(op, t.dtype, &dt)) return op_failed(c);
    AVal r = tensor_av(c, dt, &t.shape);
    Ins *in = emit(c, I_UNARY);
    in->dst = r.reg;
    in->a = t.reg;
    in->aux = op;
    return r;
}

static OpCode op_by_name(const char *name) {
    for (int i = 0; i < OP__COUNT; i++)
        if (!strcmp(op_info[i].name, name)) return (OpCode)i;
    return OP__COUNT;
}

/* Built-ins whose first argument eager code turns into a tensor (interp_to_tensor). */
static bool takes_tensor(const char *name, OpCode op) {
    static const char *const names[] = { "clip", "astype", "reshape", "flatten", "transpose", "expand_dims", "squeeze",
                                         "broadcast_to", NULL };
    if (op < OP__COUNT && (op_info[op].kind == K_REDUCE || op == OP_SOFTMAX || op == OP_LOG_SOFTMAX)) return true;
    for (int i = 0; names[i]; i++)
        if (!strcmp(names[i], name)) return true;
    return false;
}

/* A number where eager code makes a tensor: a 0-d f32 tensor, as interp_to_tensor does. */
static AVal number_tensor(Comp *c, AVal v) {
    Shape s0 = { 0, { 0 } };
    int xr = num_reg(c, &v);
    AVal t = tensor_av(c, DT_F32, &s0);
    Ins *in = emit(c, I_SCALAR);
    in->dst = t.reg;
    in->a = xr;
    in->aux = DT_F32;
    return t;
}

static AVal compile_builtin(Comp *c, const char *name, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw,
                            int nkw, SrcLoc loc) {
    c->loc = loc;
    if (nargs >= 1 && args[0].kind == AV_NUM && !args[0].is_bool && takes_tensor(name, op_by_name(name)) &&
        !is_pure_builtin(name))
        args[0] = number_tensor(c, args[0]);
    if (!strcmp(name, "print")) return builtin_print(c, args, nargs, nkw);
    if (!strcmp(name, "assert")) return builtin_assert(c, args, nargs, kwn, kw, nkw);
    OpCode op = op_by_name(name);
    bool tensor_arg = false;
    for (int i = 0; i < nargs; i++) tensor_arg |= args[i].kind == AV_TENSOR;
    if (is_pure_builtin(name)) {
        AVal r;
        if (fold_builtin(c, b, args, nargs, kwn, kw, nkw, &r)) return c->failed ? FAILV : r;
    }
    if (op < OP__COUNT && op_info[op].kind == K_UNARY && nargs == 1 && nkw == 0) {
        if (args[0].kind == AV_TENSOR) return emit_unary(c, op, args[0]);
        if (args[0].kind == AV_NUM) {
            AVal x = args[0];
            AVal r = { .kind = AV_NUM, .known = x.known, .deps = x.deps, .reg = -1 };
            if (x.known) r.num = op_unary_number(op, x.num);
            if (r.known && !r.deps) return r;
            int xr = num_reg(c, &x);
            Ins *in = emit(c, I_NMATH);
            in->dst = r.reg = new_num(c, false);
            in->a = xr;
            in->aux = op;
            return r;
        }
    }
    if ((op == OP_MAXIMUM || op == OP_MINIMUM) && nargs == 2 && nkw == 0 && args[0].kind == AV_NUM &&
        args[1].kind == AV_NUM) {
        /* two numbers: as the eager built-in, NaN wins */
        AVal a = args[0], b2 = args[1];
        AVal r = { .kind = AV_NUM, .known = a.known && b2.known, .deps = a.deps | b2.deps, .reg = -1 };
        if (r.known) r.num = num_minmax(op, a.num, b2.num);
        if (r.known && !r.deps) return r;
        int ra = num_reg(c, &a), rb = num_reg(c, &b2);
        Ins *in = emit(c, I_NBIN);
        in->dst = r.reg = new_num(c, false);
        in->a = ra;
        in->b = rb;
        in->aux = NBIN_OP_BASE + op;
        return r;
    }
    if ((op == OP_MAXIMUM || op == OP_MINIMUM) && nargs == 2 && nkw == 0 && tensor_arg) {
        if (args[0].kind == AV_TENSOR && args[1].kind == AV_TENSOR) return tensor_binary(c, op, args[0], args[1]);
        if (args[0].kind == AV_TENSOR && args[1].kind == AV_NUM) return tensor_scalar_op(c, op, args[0], args[1], false);
        if (args[1].kind == AV_TENSOR && args[0].kind == AV_NUM) return tensor_scalar_op(c, op, args[1], args[0], true);
    }
    if (op < OP__COUNT && op_info[op].kind == K_REDUCE && nargs >= 1 && args[0].kind == AV_TENSOR) {
        static const char *const p[] = { "t", "axis", "keepdims", NULL };
        AVal v[3];
        int axes[TSL_MAX_RANK], n;
        if (!bind(c, name, p, 1, args, nargs, kwn, kw, nkw, v) || !axes_of(c, &v[1], axes, &n)) return FAILV;
        if ((op == OP_ARGMAX || op == OP_ARGMIN) && n > 1) return error_at(c, loc, "%s(): axis must be a single number or nil", name);
        int keep = 0;
        if (v[2].kind != AV_NONE) {
            int reg;
            keep = truth(c, v[2], &reg, loc);
            if (keep < 0) return unsupported(c, "keepdims known only at run time");
        }
        Shape so;
        DType dt;
        if (infer_reduce(op, &v[0].shape, v[0].dtype, axes, n, keep, &so, &dt)) return op_failed(c);
        AVal r = tensor_av(c, dt, &so);
        Ins *in = emit(c, I_REDUCE);
        in->dst = r.reg;
        in->a = v[0].reg;
        in->aux = op;
        in->c = keep;
        in->nargs = n;
        if (n > 0) {
            in->args = mem_alloc(sizeof(int) * (size_t)n);
            memcpy(in->args, axes, sizeof(int) * (size_t)n);
        }
        return r;
    }
    if ((op == OP_SOFTMAX || op == OP_LOG_SOFTMAX) && nargs >= 1 && args[0].kind == AV_TENSOR) {
        static const char *const p[] = { "t", "axis", NULL };
        AVal v[2];
        int64_t axis = -1;
        if (!bind(c, name, p, 1, args, nargs, kwn, kw, nkw, v)) return FAILV;
        if (v[1].kind != AV_NONE && !need_int(c, &v[1], &axis, "an axis")) return FAILV;
        int ax;
        DType dt;
        if (axis > 1000 || axis < -1000) return error_at(c, loc, "%s(): axis %lld is out of range", name, (long long)axis);
        if (infer_softmax(&v[0].shape, v[0].dtype, (int)axis, op == OP_LOG_SOFTMAX, &ax, &dt)) return op_failed(c);
        AVal r = tensor_av(c, dt, &v[0].shape);
        Ins *in = emit(c, I_SOFTMAX);
        in->dst = r.reg;
        in->a = v[0].reg;
        in->b = (int)axis;
        in->c = op == OP_LOG_SOFTMAX;
        return r;
    }
    if ((op == OP_MATMUL || !strcmp(name, "dot")) && nargs == 2 && args[0].kind == AV_TENSOR &&
        args[1].kind == AV_TENSOR && args[0].shape.ndim >= 1 && args[1].shape.ndim >= 1 &&
        (op == OP_MATMUL || (args[0].shape.ndim <= 2 && args[1].shape.ndim <= 2))) {
        Shape so;
        DType dt;
        if (infer_matmul(&args[0].shape, args[0].dtype, &args[1].shape, args[1].dtype, &so, &dt)) return op_failed(c);
        AVal r = tensor_av(c, dt, &so);
        Ins *in = emit(c, I_MATMUL);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->b = args[1].reg;
        return r;
    }
    if (op == OP_WHERE && nargs == 3 && args[0].kind == AV_TENSOR && args[1].kind == AV_TENSOR && args[2].kind == AV_TENSOR) {
        Shape s1, so;
        DType dt = args[1].dtype > args[2].dtype ? args[1].dtype : args[2].dtype;
        if (shape_broadcast(&args[1].shape, &args[2].shape, &s1, "where") ||
            shape_broadcast(&args[0].shape, &s1, &so, "where"))
            return op_failed(c);
        AVal r = tensor_av(c, dt, &so);
        Ins *in = emit(c, I_WHERE);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->b = args[1].reg;
        in->c = args[2].reg;
        return r;
    }
    if (!strcmp(name, "clip") && nargs == 3 && args[0].kind == AV_TENSOR) {
        int regs[2];
        for (int i = 0; i < 2; i++) {
            AVal x = args[1 + i];
            if (x.kind == AV_CONST && x.k.type == VAL_NIL) x = num_const(i ? INFINITY : -INFINITY);
            if (x.kind != AV_NUM) return error_at(c, loc, "clip(): bounds must be numbers");
            regs[i] = num_reg(c, &x);
        }
        AVal r = tensor_av(c, args[0].dtype, &args[0].shape);
        Ins *in = emit(c, I_CLIP);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->b = regs[0];
        in->c = regs[1];
        return r;
    }
    if (!strcmp(name, "astype") && nargs == 2 && args[0].kind == AV_TENSOR) {
        DType dt;
        if (args[1].kind != AV_CONST || args[1].k.type != VAL_STR || dtype_parse(AS_STR(args[1].k)->chars, &dt))
            return error_at(c, loc, "astype(): dtype must be one of \"f32\", \"f64\", \"i64\", \"bool\"");
        AVal r = tensor_av(c, dt, &args[0].shape);
        Ins *in = emit(c, I_ASTYPE);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->aux = dt;
        return r;
    }
    if ((!strcmp(name, "reshape") || !strcmp(name, "flatten") || !strcmp(name, "expand_dims") ||
         !strcmp(name, "squeeze")) && nargs >= 1 && args[0].kind == AV_TENSOR) {
        Shape req, so;
        AVal t = args[0];
        int rc = 0;
        if (!strcmp(name, "reshape")) {
            if (nargs != 2) return error_at(c, loc, "reshape() takes a tensor and a shape");
            if (!shape_of_av(c, &args[1], &req, true)) return FAILV;
            rc = infer_reshape(&t.shape, &req, &so);
        } else if (!strcmp(name, "flatten")) {
            Shape f = { 1, { shape_count(&t.shape) } };
            so = f;
        } else if (!strcmp(name, "expand_dims")) {
            int64_t ax;
            if (nargs != 2 || !need_int(c, &args[1], &ax, "an axis")) return c->failed ? FAILV : error_at(c, loc, "expand_dims() takes a tensor and an axis");
            rc = infer_expand_dims(&t.shape, (int)ax, &so);
        } else {
            int axes[TSL_MAX_RANK], n = -1;
            AVal ax = nargs > 1 ? args[1] : (nkw ? kw[0] : FAILV);
            if (!axes_of(c, &ax, axes, &n)) return FAILV;
            rc = infer_squeeze(&t.shape, axes, n, &so);
        }
        if (rc) return op_failed(c);
        AVal r = tensor_av(c, t.dtype, &so);
        Ins *in = emit(c, I_RESHAPE);
        in->dst = r.reg;
        in->a = t.reg;
        in->shape = so;
        return r;
    }
    if (!strcmp(name, "transpose") && nargs >= 1 && args[0].kind == AV_TENSOR) {
        int axes[TSL_MAX_RANK], n = -1, perm[TSL_MAX_RANK];
        AVal ax = nargs > 1 ? args[1] : (nkw ? kw[0] : FAILV);
        if (!axes_of(c, &ax, axes, &n)) return FAILV;
        Shape so;
        if (infer_transpose(&args[0].shape, n < 0 ? NULL : axes, n, perm, &so)) return op_failed(c);
        AVal r = tensor_av(c, args[0].dtype, &so);
        Ins *in = emit(c, I_TRANSPOSE);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->nargs = n;
        if (n > 0) {
            in->args = mem_alloc(sizeof(int) * (size_t)n);
            memcpy(in->args, axes, sizeof(int) * (size_t)n);
        }
        return r;
    }
    if (!strcmp(name, "broadcast_to") && nargs == 2 && args[0].kind == AV_TENSOR) {
        Shape s;
        if (!shape_of_av(c, &args[1], &s, false)) return FAILV;
        if (infer_broadcast_to(&args[0].shape, &s)) return op_failed(c);
        AVal r = tensor_av(c, args[0].dtype, &s);
        Ins *in = emit(c, I_BCAST);
        in->dst = r.reg;
        in->a = args[0].reg;
        in->shape = s;
        return r;
    }
    if ((!strcmp(name, "concat") || !strcmp(name, "stack")) && nargs >= 1 && args[0].kind == AV_LIST) {
        AStruct *st = args[0].st;
        int64_t axis = 0;
        AVal ax = nargs > 1 ? args[1] : (nkw ? kw[0] : FAILV);
        if (ax.kind != AV_NONE && !need_int(c, &ax, &axis, "an axis")) return FAILV;
        if (st->n > 256) return unsupported(c, "%s of more than 256 tensors", name);
        Shape shapes[256];
        const Shape *ptrs[256];
        DType dts[256], dt;
        Shape so;
        for (int i = 0; i < st->n; i++) {
            if (st->items[i].kind != AV_TENSOR) return unsupported(c, "%s of non-tensors", name);
            shapes[i] = st->items[i].shape;
            ptrs[i] = &shapes[i];
            dts[i] = st->items[i].dtype;
        }
        bool stack = name[0] == 's';
        int rc = stack ? infer_stack(ptrs, dts, st->n, (int)axis, &so, &dt) : infer_concat(ptrs, dts, st->n, (int)axis, &so, &dt);
        if (rc) return op_failed(c);
        AVal r = tensor_av(c, dt, &so);
        Ins *in = emit(c, I_CONCAT);
        in->dst = r.reg;
        in->b = (int)axis;
        in->c = stack;
        in->nargs = st->n;
        in->args = mem_alloc(sizeof(int) * (size_t)(st->n + 1));
        for (int i = 0; i < st->n; i++) in->args[i] = st->items[i].reg;
        return r;
    }
    if ((!strcmp(name, "rand") || !strcmp(name, "randn") || !strcmp(name, "randint"))) {
        Shape s;
        int kind = name[4] == 'n' ? 1 : name[4] == 'i' ? 2 : 0;
        int64_t lo = 0, hi = 0;
        AVal *shape_arg = kind == 2 ? (nargs == 3 ? &args[2] : NULL) : (nargs == 1 ? &args[0] : NULL);
        if (!shape_arg || nkw) return unsupported(c, "%s() with these arguments", name);
        if (kind == 2 && (!need_int(c, &args[0], &lo, "randint's low bound") || !need_int(c, &args[1], &hi, "randint's high bound")))
            return FAILV;
        if (kind == 2 && hi <= lo)
            return error_at(c, loc, "randint: high (%lld) must be greater than low (%lld)", (long long)hi, (long long)lo);
        if (!shape_of_av(c, shape_arg, &s, false)) return FAILV;
        if (shape_count(&s) < 0) return op_failed(c);
        AVal r = tensor_av(c, kind == 2 ? DT_I64 : DT_F32, &s);
        Ins *in = emit(c, I_RANDOM);
        in->dst = r.reg;
        in->aux = kind;
        in->shape = s;
        in->imm = (double)lo;
        in->b = (int)(hi - lo);
        if (hi - lo > 2000000000) return unsupported(c, "randint with a range this wide");
        return r;
    }
    if ((!strcmp(name, "item") || !strcmp(name, "float")) && nargs == 1 && args[0].kind == AV_TENSOR) {
        if (shape_count(&args[0].shape) != 1)
            return error_at(c, loc, "%s", !strcmp(name, "item") ? "item(): the tensor does not have one element"
                                                                : "float(): only a one-element tensor converts to a number");
        AVal r = { .kind = AV_NUM, .reg = new_num(c, args[0].dtype == DT_BOOL && name[0] == 'i') };
        Ins *in = emit(c, I_ITEM);
        in->dst = r.reg;
        in->a = args[0].reg;
        r.is_bool = c->g->regs[r.reg].is_bool;
        return r;
    }
    if ((!strcmp(name, "item") || !strcmp(name, "float")) && nargs == 1 && args[0].kind == AV_NUM) return args[0];
    if (!strcmp(name, "len") && nargs == 1) {
        if (args[0].kind == AV_LIST || args[0].kind == AV_DICT) return num_const(args[0].st->n);
        if (args[0].kind == AV_TENSOR && args[0].shape.ndim > 0) return num_const((double)args[0].shape.d[0]);
    }
    if (!strcmp(name, "type") && nargs == 1) {
        const char *t = args[0].kind == AV_NUM ? (args[0].is_bool ? "bool" : "number")
                        : args[0].kind == AV_TENSOR ? "tensor" : args[0].kind == AV_LIST ? "list"
                        : args[0].kind == AV_DICT ? "dict" : args[0].kind == AV_CLOSURE ? "function"
                        : val_type_name(args[0].k);
        return const_av(keep_value(c, val_cstr(t)));
    }
    if (!strcmp(name, "push") && nargs == 2 && args[0].kind == AV_LIST) {
        if (args[0].st->obj >= 0) return unsupported(c, "push() onto a list that exists outside the static code");
        astruct_push(c, args[0].st, NULL, args[1]);
        return const_av(NIL_VAL);
    }
    if (!strcmp(name, "keys") && nargs == 1 && args[0].kind == AV_DICT) {
        AStruct *st = astruct_new(c, false);
        for (int i = 0; i < args[0].st->n; i++)
            astruct_push(c, st, NULL, const_av(keep_value(c, val_cstr(args[0].st->keys[i]))));
        return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
    }
    if (!strcmp(name, "get") && nargs >= 2 && args[0].kind == AV_DICT && args[1].kind == AV_CONST &&
        args[1].k.type == VAL_STR) {
        int at = astruct_find(args[0].st, AS_STR(args[1].k)->chars);
        if (at >= 0) return args[0].st->items[at];
        return nargs > 2 ? args[2] : const_av(NIL_VAL);
    }
    return unsupported(c, "%s() with these arguments is not supported in static code yet", name);
}

/* ---------- operands the VM builds at run time ---------- */

static Opnd opnd_of(Comp *c, AVal v) {
    Opnd o;
    memset(&o, 0, sizeof o);
    o.k = NIL_VAL;
    switch (v.kind) {
    case AV_NUM:
        if (v.reg < 0 && !v.deps) {
            o.kind = OPND_CONST;
            o.k = v.is_bool ? BOOL_VAL(v.num != 0) : NUM_VAL(v.num);
        } else {
            o.kind = OPND_NUM;
            o.reg = num_reg(c, &v);
        }
        return o;
    case AV_TENSOR:
        o.kind = OPND_TENSOR;
        o.reg = v.reg;
        return o;
    case AV_LIST:
    case AV_DICT:
        if (v.st->obj >= 0 && !c->failed) {
            o.kind = OPND_OBJ;   /* the very container the program passed in */
            o.reg = v.st->obj;
            return o;
        }
        o.kind = v.kind == AV_LIST ? OPND_LIST : OPND_DICT;
        o.n = v.st->n;
        o.items = mem_calloc((size_t)o.n + 1, sizeof(Opnd));
        if (v.kind == AV_DICT) o.keys = mem_calloc((size_t)o.n + 1, sizeof(char *));
        for (int i = 0; i < o.n; i++) {
            o.items[i] = opnd_of(c, v.st->items[i]);
            if (o.keys) o.keys[i] = mem_strndup(v.st->keys[i], strlen(v.st->keys[i]));
        }
        return o;
    case AV_CLOSURE:
        unsupported(c, "a function made in static code cannot leave it");
        o.kind = OPND_CONST;
        return o;
    default:
        o.kind = OPND_CONST;
        o.k = val_retain(v.k);
        return o;
    }
}

/* ---------- statements ---------- */

static void assign(Comp *c, Node *target, AVal v);

/* A container field/element store: compile-time structures change; containers that came
 * from the program are also changed at run time, in program order. */
static void store_struct(Comp *c, AVal obj, AVal key, AVal v, SrcLoc loc) {
    AStruct *st = obj.st;
    int at;
    c->loc = loc;
    if (obj.kind == AV_DICT) {
        if (key.kind != AV_CONST || key.k.type != VAL_STR) { error_at(c, loc, "dict keys are strings"); return; }
        at = astruct_find(st, AS_STR(key.k)->chars);
        if (at < 0 && st->obj >= 0) { unsupported(c, "adding a key to a dict that exists outside the static code"); return; }
        undo_save(c, st);
        if (at < 0) astruct_push(c, st, AS_STR(key.k)->chars, v);
        else st->items[at] = v;
        at = astruct_find(st, AS_STR(key.k)->chars);
    } else {
        int64_t i;
        if (!need_int(c, &key, &i, "a list index")) return;
        if (i < 0) i += st->n;
        if (i < 0 || i >= st->n) { error_at(c, loc, "list index out of range"); return; }
        undo_save(c, st);
        st->items[i] = v;
        at = (int)i;
    }
    if (st->obj < 0) return;
    Ins *in = emit(c, I_STORE);
    int idx = (int)(in - c->g->code);
    Opnd *o = mem_calloc(1, sizeof(Opnd));
    *o = opnd_of(c, v);
    in = &c->g->code[idx];
    in->a = st->obj;
    in->aux = at;
    in->opnds = o;
    in->nopnds = 1;
    in->key = obj.kind == AV_DICT ? mem_strndup(st->keys[at], strlen(st->keys[at])) : NULL;
}

static void assign(Comp *c, Node *target, AVal v) {
    c->loc = target->loc;
    if (target->kind == AST_NAME) {
        env_set(c, name_key(c, target), v, target->str, true);
        return;
    }
    AVal obj = expr(c, target->a);
    if (c->failed) return;
    if (target->kind == AST_FIELD) {
        if (obj.kind != AV_DICT) { error_at(c, target->loc, "cannot set field '%s' on this value", target->str); return; }
        store_struct(c, obj, const_av(keep_value(c, val_cstr(target->str))), v, target->loc);
        return;
    }
    if (obj.kind == AV_TENSOR) {
        AVal nt = index_tensor(c, obj, target, &v);
        if (!c->failed) assign(c, target->a, nt);
        return;
    }
    if ((obj.kind == AV_LIST || obj.kind == AV_DICT) && target->n == 1 && target->kids[0]->kind != AST_SLICE) {
        AVal key = expr(c, target->kids[0]);
        if (!c->failed) store_struct(c, obj, key, v, target->loc);
        return;
    }
    unsupported(c, "this kind of assignment");
}

/* ---------- loops and branches ---------- */

typedef struct {
    int ncode;
    Binding *env;
    int nenv;
    int nundo;
} Snap;

static Snap snapshot(Comp *c) {
    Snap s = { c->g->ncode, mem_alloc(sizeof(Binding) * (size_t)(c->nenv + 1)), c->nenv, c->nundo };
    if (c->nenv) memcpy(s.env, c->env, sizeof(Binding) * (size_t)c->nenv);
    c->dry++;
    return s;
}

/* Throws away what a dry run emitted and changed. */
static void rollback(Comp *c, Snap *s) {
    for (int i = s->ncode; i < c->g->ncode; i++) ins_free(&c->g->code[i]);
    c->g->ncode = s->ncode;
    c->nenv = s->nenv;
    if (s->nenv) memcpy(c->env, s->env, sizeof(Binding) * (size_t)s->nenv);
    for (int i = c->nundo - 1; i >= s->nundo; i--) {
        Undo *u = &c->undo[i];
        u->st->n = u->n;
        if (u->n) memcpy(u->st->items, u->items, sizeof(AVal) * (size_t)u->n);
        if (u->st->keys && u->n) memcpy(u->st->keys, u->keys, sizeof(char *) * (size_t)u->n);
        mem_free(u->items);
        mem_free(u->keys);
    }
    c->nundo = s->nundo;
    mem_free(s->env);
    c->dry--;
}

static bool same_av(const AVal *a, const AVal *b) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case AV_NUM: return a->reg == b->reg && a->known == b->known && (!a->known || a->num == b->num);
    case AV_TENSOR: return a->reg == b->reg;
    case AV_CONST: return a->k.type == b->k.type && (a->k.type == VAL_NIL || val_equal(a->k, b->k));
    case AV_LIST: case AV_DICT: return a->st == b->st;
    case AV_CLOSURE: return a->cl->proto == b->cl->proto;
    default: return true;
    }
}

/* A home register of the same kind as v (numbers and tensors; others must not change). */
static bool make_home(Comp *c, const AVal *v, AVal *home) {
    if (v->kind == AV_NUM) {
        *home = (AVal){ .kind = AV_NUM, .is_bool = v->is_bool, .reg = new_num(c, v->is_bool) };
        return true;
    }
    if (v->kind == AV_TENSOR) {
        *home = tensor_av(c, v->dtype, &v->shape);
        return true;
    }
    return false;
}

static void move_into(Comp *c, const AVal *home, AVal v, const char *name) {
    if (c->failed) return;
    if (v.kind != home->kind) {
        unsupported(c, "variable '%s' changes kind inside a loop or branch", name);
        return;
    }
    if (home->kind == AV_NUM) {
        if (v.reg == home->reg) return;
        int r = num_reg(c, &v);
        Ins *in = emit(c, I_NMOVE);
        in->dst = home->reg;
        in->a = r;
        return;
    }
    if (home->kind == AV_TENSOR) {
        if (v.reg == home->reg) return;
        if (v.dtype != home->dtype || !shape_equal(&v.shape, &home->shape)) {
            char b1[600], b2[600];
            unsupported(c, "variable '%s' changes shape or dtype (%s %s to %s %s) inside a loop or branch", name,
                        shape_str(&home->shape, b1, sizeof b1), dtype_name(home->dtype),
                        shape_str(&v.shape, b2, sizeof b2), dtype_name(v.dtype));
            return;
        }
        Ins *in = emit(c, I_TMOVE);
        in->dst = home->reg;
        in->a = v.reg;
        return;
    }
    if (!same_av(home, &v)) unsupported(c, "variable '%s' changes inside a loop or branch", name);
}

/* Variables whose binding differs between the environment now and the snapshot. */
static void changed_since(Comp *c, Snap *s, Home **out, int *n) {
    for (int i = 0; i < c->nenv; i++) {
        Binding *now = &c->env[i];
        Binding *before = find_binding(s->env, s->nenv, now->key);
        if (before && same_av(&before->v, &now->v)) continue;
        if (now->v.kind == AV_NONE) continue;
        *out = mem_realloc(*out, sizeof(Home) * (size_t)(*n + 1));
        (*out)[*n] = (Home){ now->key, now->v, now->name };
        (*n)++;
    }
}

/* Gives every variable that `compile_region` may change a home register, by running it
 * once as a dry run. Emits the moves of the current values into the homes. */
static void prepare_homes(Comp *c, void (*compile_region)(Comp *, void *), void *arg, Home **homes, int *nhomes) {
    Snap s = snapshot(c);
    Loop *saved_loop = c->loop;
    compile_region(c, arg);
    Home *changed = NULL;
    int nchanged = 0;
    if (!c->failed) changed_since(c, &s, &changed, &nchanged);
    bool failed = c->failed;
    c->loop = saved_loop;
    rollback(c, &s);
    if (failed) { mem_free(changed); return; }
    for (int i = 0; i < nchanged; i++) {
        AVal home;
        Binding *b = find_binding(c->env, c->nenv, changed[i].key);
        if (!b) b = find_binding(c->inputs, c->ninputs, changed[i].key);
        const AVal *shape_src = b ? &b->v : &changed[i].home;
        if (!make_home(c, shape_src, &home)) {
            if (b && !same_av(&b->v, &changed[i].home)) {
                unsupported(c, "variable '%s' changes its value inside a loop or run-time branch", changed[i].name);
                break;
            }
            continue;
        }
        if (b) move_into(c, &home, b->v, changed[i].name);
        env_set(c, changed[i].key, home, changed[i].name, !b || b->assigned || true);
        *homes = mem_realloc(*homes, sizeof(Home) * (size_t)(*nhomes + 1));
        (*homes)[*nhomes] = (Home){ changed[i].key, home, changed[i].name };
        (*nhomes)++;
    }
    mem_free(changed);
}

static void home_moves(Comp *c, Home *homes, int n) {
    for (int i = 0; i < n && !c->failed; i++) {
        Binding *b = find_binding(c->env, c->nenv, homes[i].key);
        if (b) move_into(c, &homes[i].home, b->v, homes[i].name);
    }
}

static void restore_homes(Comp *c, Home *homes, int n) {
    for (int i = 0; i < n; i++) env_set(c, homes[i].key, homes[i].home, homes[i].name, true);
}

static void patch(Comp *c, int at, int target) { c->g->code[at].aux = target; }

typedef struct {
    Node *n;          /* the loop statement */
    double start, step;
    bool counted;     /* for over range or a tensor */
    AVal counter, stop;
    AVal iter;        /* tensor iterated over (for t in tensor) */
} LoopArg;

/* The loop variable for this iteration: the counter, or row `counter` of the tensor. */
static AVal loop_var(Comp *c, LoopArg *la) {
    AVal i = la->counter;
    if (la->iter.kind != AV_TENSOR) return i;
    IndexItem *it = mem_calloc(1, sizeof(IndexItem));
    it->kind = IDX_INT;
    Shape so = { la->iter.shape.ndim - 1, { 0 } };
    memcpy(so.d, la->iter.shape.d + 1, sizeof(int64_t) * (size_t)so.ndim);
    AVal v = tensor_av(c, la->iter.dtype, &so);
    Ins *ix = emit(c, I_INDEX);
    ix->dst = v.reg;
    ix->a = la->iter.reg;
    ix->idx = it;
    ix->nidx = 1;
    ix->args = mem_alloc(sizeof(int));
    ix->args[0] = i.reg;
    ix->nargs = 1;
    return v;
}

static void loop_body_once(Comp *c, void *arg) {
    LoopArg *la = arg;
    Loop lp = { c->loop, NULL, 0, NULL, 0, NULL, 0 };
    c->loop = &lp;
    c->branch_depth++;
    Node *n = la->n;
    if (la->counted) env_set(c, name_key(c, n->a), loop_var(c, la), n->a->str, true);
    if (n->kind == AST_WHILE) {
        AVal cond = expr(c, n->a);
        if (!c->failed) {
            int reg;
            truth(c, cond, &reg, n->a->loc);
        }
    }
    if (!c->failed) block(c, n->kind == AST_FOR ? n->c : n->b);
    c->branch_depth--;
    c->loop = lp.outer;
    mem_free(lp.breaks);
    mem_free(lp.conts);
}

/* while cond { } and for i in range(...) { }: a run-time loop over home registers. */
static void compile_loop(Comp *c, LoopArg *la) {
    Node *n = la->n;
    Home *homes = NULL;
    int nhomes = 0;
    if (la->counted) {
        /* the counter is a run-time register from the start */
        la->counter = (AVal){ .kind = AV_NUM, .reg = new_num(c, false) };
        AVal st = num_const(la->start);
        if (la->iter.kind != AV_TENSOR && la->stop.kind == AV_NUM && la->stop.reg < 0 && !la->stop.deps) {}
        Ins *in = emit(c, I_NMOVE);
        in->dst = la->counter.reg;
        in->a = num_reg(c, &st);
    }
    prepare_homes(c, loop_body_once, la, &homes, &nhomes);
    if (c->failed) { mem_free(homes); return; }
    int top = c->g->ncode;
    int exit_jump = -1;
    c->loc = n->loc;
    if (la->counted) {
        AVal i = la->counter;
        int stop = num_reg(c, &la->stop);
        Ins *cmp = emit(c, I_NBIN);
        cmp->dst = new_num(c, true);
        cmp->a = i.reg;
        cmp->b = stop;
        cmp->aux = la->step > 0 ? TOK_LT : TOK_GT;
        Ins *jf = emit(c, I_JUMPF);
        jf->a = cmp->dst;
        exit_jump = (int)(jf - c->g->code);
        env_set(c, name_key(c, n->a), loop_var(c, la), n->a->str, true);
    } else {
        AVal cond = expr(c, n->a);
        if (c->failed) { mem_free(homes); return; }
        int reg, t = truth(c, cond, &reg, n->a->loc);
        if (c->failed) { mem_free(homes); return; }
        if (t == 0) {
            restore_homes(c, homes, nhomes);
            mem_free(homes);
            return;
        }
        if (t < 0) {
            Ins *jf = emit(c, I_JUMPF);
            jf->a = reg;
            exit_jump = (int)(jf - c->g->code);
        }
    }
    Loop lp = { c->loop, homes, nhomes, NULL, 0, NULL, 0 };
    c->loop = &lp;
    c->branch_depth++;
    block(c, n->kind == AST_FOR ? n->c : n->b);
    c->branch_depth--;
    c->loop = lp.outer;
    int cont_target = c->g->ncode;
    home_moves(c, homes, nhomes);
    if (la->counted && !c->failed) {
        AVal step = num_const(la->step);
        int sr = num_reg(c, &step);
        Ins *inc = emit(c, I_NBIN);
        inc->dst = la->counter.reg;
        inc->a = la->counter.reg;
        inc->b = sr;
        inc->aux = TOK_PLUS;
    }
    Ins *back = emit(c, I_JUMP);
    back->aux = top;
    int end = c->g->ncode;
    if (exit_jump >= 0) patch(c, exit_jump, end);
    for (int i = 0; i < lp.nbreaks; i++) patch(c, lp.breaks[i], end);
    for (int i = 0; i < lp.nconts; i++) patch(c, lp.conts[i], cont_target);
    mem_free(lp.breaks);
    mem_free(lp.conts);
    restore_homes(c, homes, nhomes);
    mem_free(homes);
}

static void for_stmt(Comp *c, Node *n) {
    Node *it = n->b;
    LoopArg la = { n, 0, 1, true, FAILV, FAILV, FAILV };
    if (it->kind == AST_CALL && it->a->kind == AST_NAME && it->nk == 0 && it->n >= 1 && it->n <= 3) {
        AVal fn = expr(c, it->a);
        if (c->failed) return;
        if (fn.kind == AV_CONST && fn.k.type == VAL_FUNC && fn.k.as.o == (Obj *)builtin_range_obj) {
            AVal a[3];
            for (int i = 0; i < it->n; i++) {
                a[i] = expr(c, it->kids[i]);
                if (c->failed) return;
                if (a[i].kind != AV_NUM) { error_at(c, it->kids[i]->loc, "range() arguments must be integers"); return; }
            }
            c->loc = it->loc;
            if (it->n == 1) { la.start = 0; la.stop = a[0]; }
            else {
                double s0;
                if (!need_const(c, &a[0], &s0, "the start of a range in static code")) return;
                la.start = s0;
                la.stop = a[1];
            }
            if (it->n == 3 && !need_const(c, &a[2], &la.step, "the step of a range")) return;
            if (la.step == 0) { error_at(c, it->loc, "range() step must not be zero"); return; }
            if (la.stop.known && la.stop.num != floor(la.stop.num)) { error_at(c, it->kids[0]->loc, "range() arguments must be integers"); return; }
            compile_loop(c, &la);
            return;
        }
    }
    AVal v = expr(c, it);
    if (c->failed) return;
    if (v.kind == AV_TENSOR) {
        if (v.shape.ndim == 0) { error_at(c, it->loc, "cannot iterate over a 0-d tensor"); return; }
        la.iter = v;
        la.stop = num_const((double)v.shape.d[0]);
        compile_loop(c, &la);
        return;
    }
    if (v.kind == AV_LIST || v.kind == AV_DICT) {
        /* the structure is known: one copy of the body per item */
        for (int i = 0; i < v.st->n && !c->failed; i++) {
            if (c->loop && c->branch_depth) {}
            AVal item = v.kind == AV_LIST ? v.st->items[i] : const_av(keep_value(c, val_cstr(v.st->keys[i])));
            env_set(c, name_key(c, n->a), item, n->a->str, true);
            Loop lp = { c->loop, NULL, 0, NULL, 0, NULL, 0 };
            c->loop = &lp;
            block(c, n->c);
            c->loop = lp.outer;
            bool jumps = lp.nbreaks || lp.nconts;
            mem_free(lp.breaks);
            mem_free(lp.conts);
            if (jumps) { unsupported(c, "break/continue in a loop over a list"); return; }
        }
        return;
    }
    unsupported(c, "for over this kind of value");
}

typedef struct {
    Node *n;
    int which;   /* 0: then, 1: else */
} BranchArg;

static void branch_once(Comp *c, void *arg) {
    BranchArg *ba = arg;
    c->branch_depth++;
    if (ba->which == 0) block(c, ba->n->b);
    else if (ba->n->c) stmt(c, ba->n->c);
    c->branch_depth--;
}

static void both_branches(Comp *c, void *arg) {
    BranchArg *ba = arg;
    Snap s = snapshot(c);
    BranchArg t = { ba->n, 0 };
    branch_once(c, &t);
    Home *changed = NULL;
    int n = 0;
    if (!c->failed) changed_since(c, &s, &changed, &n);
    /* keep then-branch results visible to the caller's diff, then run else from the start */
    rollback(c, &s);
    BranchArg e = { ba->n, 1 };
    if (!c->failed) branch_once(c, &e);
    /* what the then-branch changed stays visible to prepare_homes' comparison */
    for (int i = 0; i < n; i++) env_set(c, changed[i].key, changed[i].home, changed[i].name, true);
    mem_free(changed);
}

static void if_stmt(Comp *c, Node *n) {
    AVal cond = expr(c, n->a);
    if (c->failed) return;
    int reg, t = truth(c, cond, &reg, n->a->loc);
    if (c->failed) return;
    if (t >= 0) {
        if (t) block(c, n->b);
        else if (n->c) stmt(c, n->c);
        return;
    }
    Home *homes = NULL;
    int nhomes = 0;
    BranchArg ba = { n, 0 };
    prepare_homes(c, both_branches, &ba, &homes, &nhomes);
    if (c->failed) { mem_free(homes); return; }
    c->loc = n->loc;
    Ins *jf = emit(c, I_JUMPF);
    jf->a = reg;
    int at_jf = (int)(jf - c->g->code);
    c->branch_depth++;
    block(c, n->b);
    home_moves(c, homes, nhomes);
    Ins *j = emit(c, I_JUMP);
    int at_j = (int)(j - c->g->code);
    patch(c, at_jf, c->g->ncode);
    restore_homes(c, homes, nhomes);
    if (n->c) stmt(c, n->c);
    home_moves(c, homes, nhomes);
    c->branch_depth--;
    patch(c, at_j, c->g->ncode);
    restore_homes(c, homes, nhomes);
    mem_free(homes);
}

static void jump_out(Comp *c, Node *n, bool is_break) {
    if (!c->loop) {
        error_at(c, n->loc, "'%s' cannot leave a static block", is_break ? "break" : "continue");
        return;
    }
    Loop *lp = c->loop;
    home_moves(c, lp->homes, lp->nhomes);
    Ins *j = emit(c, I_JUMP);
    int at = (int)(j - c->g->code);
    if (is_break) {
        lp->breaks = mem_realloc(lp->breaks, sizeof(int) * (size_t)(lp->nbreaks + 1));
        lp->breaks[lp->nbreaks++] = at;
    } else {
        lp->conts = mem_realloc(lp->conts, sizeof(int) * (size_t)(lp->nconts + 1));
        lp->conts[lp->nconts++] = at;
    }
}

static void stmt(Comp *c, Node *n) {
    if (c->failed) return;
    if (c->ictx && c->ictx->returned) return;
    c->loc = n->loc;
    switch (n->kind) {
    case AST_EXPR: expr(c, n->a); return;
    case AST_ASSIGN: {
        AVal v = expr(c, n->b);
        if (!c->failed) assign(c, n->a, v);
        return;
    }
    case AST_IF: if_stmt(c, n); return;
    case AST_WHILE: {
        LoopArg la = { n, 0, 1, false, FAILV, FAILV, FAILV };
        compile_loop(c, &la);
        return;
    }
    case AST_FOR: for_stmt(c, n); return;
    case AST_BREAK: jump_out(c, n, true); return;
    case AST_CONTINUE: jump_out(c, n, false); return;
    case AST_RETURN: {
        if (!c->ictx) {
            error_at(c, n->loc, "'return' cannot leave a static block");
            return;
        }
        if (c->branch_depth > c->ictx->depth_at_entry) {
            unsupported(c, "'return' inside a loop or a run-time branch");
            return;
        }
        AVal v = n->a ? expr(c, n->a) : const_av(NIL_VAL);
        if (c->failed) return;
        c->ictx->result = v;
        c->ictx->returned = true;
        return;
    }
    case AST_BLOCK: block(c, n); return;
    case AST_FNDECL: env_set(c, name_key(c, n->a), make_closure(c, n->b->proto), n->a->str, true); return;
    case AST_STATIC: block(c, n->a); return;
    case AST_IMPORT: unsupported(c, "import inside static code"); return;
    default: expr(c, n); return;
    }
}

static void block(Comp *c, Node *b) {
    for (int i = 0; i < b->n && !c->failed; i++) stmt(c, b->kids[i]);
}

static AVal expr(Comp *c, Node *n) {
    if (c->failed) return FAILV;
    c->loc = n->loc;
    switch (n->kind) {
    case AST_NUM: return num_const(n->num);
    case AST_STR: return const_av(keep_value(c, val_str(n->str, n->str_len)));
    case AST_TRUE: return bool_const(true);
    case AST_FALSE: return bool_const(false);
    case AST_NIL: return const_av(NIL_VAL);
    case AST_NAME: return read_key(c, name_key(c, n), n->str);
    case AST_BINARY: return binary(c, n);
    case AST_UNARY: {
        AVal a;
        TRY(a = expr(c, n->a));
        c->loc = n->loc;
        if (a.kind == AV_TENSOR) return emit_unary(c, OP_NEG, a);
        if (a.kind == AV_NUM && !a.is_bool) {
            AVal r = { .kind = AV_NUM, .known = a.known, .num = -a.num, .deps = a.deps, .reg = -1 };
            if (r.known && !r.deps) return r;
            int ar = num_reg(c, &a);
            Ins *in = emit(c, I_NNEG);
            in->dst = r.reg = new_num(c, false);
            in->a = ar;
            return r;
        }
        return error_at(c, n->loc, "unsupported operand type for unary '-'");
    }
    case AST_NOT: return not_expr(c, n);
    case AST_AND:
    case AST_OR: return and_or(c, n);
    case AST_CALL: return call_expr(c, n);
    case AST_INDEX: return index_expr(c, n);
    case AST_FIELD: return field_expr(c, n);
    case AST_LIST: return make_list(c, n);
    case AST_DICT: return make_dict(c, n);
    case AST_FN: return make_closure(c, n->proto);
    default: return unsupported(c, "this expression");
    }
}

/* ---------- driver ---------- */

static void comp_free(Comp *c) {
    for (int i = 0; i < c->narena; i++) mem_free(c->arena[i]);
    mem_free(c->arena);
    for (int i = 0; i < c->nvals; i++) val_release(c->vals[i]);
    mem_free(c->vals);
    mem_free(c->env);
    mem_free(c->inputs);
    for (int i = 0; i < c->nundo; i++) {
        mem_free(c->undo[i].items);
        mem_free(c->undo[i].keys);
    }
    mem_free(c->undo);
}

/* After the code: every block-frame variable the code assigned is written back. */
static void collect_outputs(Comp *c) {
    for (int i = 0; i < c->nenv && !c->failed; i++) {
        Binding *b = &c->env[i];
        if (!b->assigned || b->key.kind == K_INLINE || b->v.kind == AV_NONE) continue;
        if (c->fn && b->key.kind == K_LOCAL) continue;   /* a static fn's locals end with it */
        Output o;
        memset(&o, 0, sizeof o);
        InputSrc src;
        Value cur;
        if (!key_source(c, b->key, &cur, &src)) continue;
        o.kind = src.kind;
        o.slot = src.slot;
        o.mod = src.mod;
        o.cell = src.cell;   /* SRC_CELLPTR: key_source took a reference */
        o.name = mem_strndup(b->name, strlen(b->name));
        o.val = opnd_of(c, b->v);
        Graph *g = c->g;
        g->outputs = mem_realloc(g->outputs, sizeof(Output) * (size_t)(g->noutputs + 1));
        g->outputs[g->noutputs++] = o;
    }
}

static CompileStatus finish(Comp *c, Graph **out) {
    CompileStatus st = c->failed ? c->status : COMPILE_OK;
    if (st == COMPILE_OK) collect_outputs(c);
    st = c->failed ? c->status : COMPILE_OK;
    comp_free(c);
    if (st != COMPILE_OK) {
        graph_free(c->g);
        *out = NULL;
    } else {
        *out = c->g;
    }
    return st;
}

CompileStatus compile_block(Interp *I, Frame *f, Node *blk, Graph **out, char *why, size_t whylen) {
    Comp c;
    memset(&c, 0, sizeof c);
    c.I = I;
    c.g = mem_calloc(1, sizeof(Graph));
    c.frame = f;
    c.mod = f->mod;
    c.src = I->cur_src;
    c.why = why;
    c.whylen = whylen;
    c.loc = blk->loc;
    block(&c, blk);
    return finish(&c, out);
}

CompileStatus compile_fn(Interp *I, ObjClosure *fn, Value *params, Graph **out, char *why, size_t whylen) {
    Comp c;
    memset(&c, 0, sizeof c);
    c.I = I;
    c.g = mem_calloc(1, sizeof(Graph));
    c.fn = fn;
    c.params = params;
    c.mod = fn->module;
    c.src = fn->module->src;
    c.why = why;
    c.whylen = whylen;
    FnProto *p = fn->proto;
    c.loc = p->loc;
    /* the body compiles as a call at depth 0: its parameters are the inputs (K_LOCAL) */
    Inline top = { NULL, 0, p, fn->module, fn, NULL, false, FAILV, 0 };
    c.ictx = &top;
    for (int i = 0; i < p->nparams && !c.failed; i++) {
        if (params[i].type != VAL_UNDEF) continue;
        /* the default is compiled in: guard that the argument is still omitted */
        InputSrc src = { SRC_ARG, i, NULL, NULL, 0, mem_strndup(p->params[i], strlen(p->params[i])) };
        int gi = add_guard(&c, G_CONST, add_input(&c, src));
        c.g->guards[gi].k = UNDEF_VAL;
        if (!p->defaults[i]) {
            error_at(&c, p->loc, "%s() missing argument '%s'", p->name[0] ? p->name : "<fn>", p->params[i]);
            break;
        }
        AVal d = expr(&c, p->defaults[i]);
        if (!c.failed) env_set(&c, (VarKey){ K_LOCAL, i, NULL }, d, p->params[i], false);
    }
    if (!c.failed) block(&c, p->body);
    if (!c.failed) {
        c.g->result = opnd_of(&c, top.returned ? top.result : const_av(NIL_VAL));
        c.g->has_result = true;
    }
    return finish(&c, out);
}
