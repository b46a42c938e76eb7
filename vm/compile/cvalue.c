/* cvalue.c - the static compiler's compile-time values: failure reporting, emission,
 * structures, variables and inputs (with their guards), numbers that become guards. */
#include "comp.h"

const AVal FAILV = { .kind = AV_NONE };

void *cc_arena_alloc(Comp *c, size_t n) {
    void *p = mem_calloc(1, n);
    GROW(c->arena, c->narena, c->caparena);
    c->arena[c->narena++] = p;
    return p;
}

Value cc_keep_value(Comp *c, Value v) {
    GROW(c->vals, c->nvals, c->capvals);
    c->vals[c->nvals++] = v;
    return v;
}

/* ---------- failure ---------- */

AVal cc_unsupported(Comp *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
AVal cc_unsupported(Comp *c, const char *fmt, ...) {
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

/* Innermost first, as the error would unwind through eager calls: a static fn's body is
 * inlined, so without these a shape error in a model's layer would name only the outer call. */
void cc_trace_inlined(Comp *c) {
    if (c->ictx) graph_trace(c->I, c->ictx->frame);
}

__attribute__((format(printf, 4, 0)))
static AVal error_v(Comp *c, int kind, SrcLoc loc, const char *fmt, va_list ap) {
    if (!c->failed) {
        char msg[512];
        vsnprintf(msg, sizeof msg, fmt, ap);
        /* the ops layer's pending error passed on ("%s", op_error()) keeps its kind */
        ErrKind k = kind >= 0 ? (ErrKind)kind : !strcmp(msg, op_error()) ? op_error_kind() : ERRK_VALUE;
        Source *saved = c->I->cur_src;
        c->I->cur_src = c->src;
        interp_error_atk(c->I, k, loc, "%s", msg);
        interp_attach_loc(c->I, loc);   /* an error the interpreter's helpers set has none yet */
        c->I->cur_src = saved;
        cc_trace_inlined(c);
        c->failed = true;
        c->status = COMPILE_ERROR;
        c->err_depth = c->branch_depth;
        c->err_dry = c->dry;
    }
    return FAILV;
}

AVal cc_error_at(Comp *c, SrcLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    AVal r = error_v(c, -1, loc, fmt, ap);
    va_end(ap);
    return r;
}

AVal cc_error_atk(Comp *c, ErrKind k, SrcLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    AVal r = error_v(c, (int)k, loc, fmt, ap);
    va_end(ap);
    return r;
}

AVal cc_op_failed(Comp *c) { return cc_error_at(c, c->loc, "%s", op_error()); }

/* The result of running an operation on compile-time values now (folding): an error it
 * raised is the program's error, at loc; a value becomes a compile-time AVal. */
AVal cc_folded(Comp *c, Value r, SrcLoc loc) {
    if (IS_ERR(r)) {
        c->failed = true;
        c->status = COMPILE_ERROR;
        c->err_depth = c->branch_depth;
        c->err_dry = c->dry;
        Source *saved = c->I->cur_src;
        c->I->cur_src = c->src;
        interp_attach_loc(c->I, loc);
        c->I->cur_src = saved;
        cc_trace_inlined(c);
        return FAILV;
    }
    cc_keep_value(c, r);
    return cc_from_value(c, r);
}


/* ---------- emission ---------- */

Ins *cc_emit(Comp *c, InsOp op) {
    int i = graph_emit(c->g, op, c->loc, c->src);
    c->g->code[i].frame = c->ictx ? c->ictx->frame : NULL;
    return &c->g->code[i];
}

int cc_new_num(Comp *c, bool is_bool) {
    int r = graph_reg(c->g, R_NUM);
    c->g->regs[r].is_bool = is_bool;
    return r;
}

int cc_new_val(Comp *c) { return graph_reg(c->g, R_VAL); }

int cc_new_tensor(Comp *c, DType dt, const Shape *s) {
    int r = graph_reg(c->g, R_TENSOR);
    c->g->regs[r].dtype = dt;
    c->g->regs[r].shape = *s;
    return r;
}

AVal cc_tensor_av(Comp *c, DType dt, const Shape *s) {
    AVal v = { .kind = AV_TENSOR, .dtype = dt, .shape = *s };
    v.reg = cc_new_tensor(c, dt, s);
    return v;
}

AVal cc_num_const(double x) { return (AVal){ .kind = AV_NUM, .known = true, .num = x, .reg = -1 }; }
AVal cc_bool_const(bool b) {
    AVal v = cc_num_const(b);
    v.is_bool = true;
    return v;
}
AVal cc_const_av(Value k) { return (AVal){ .kind = AV_CONST, .k = k, .reg = -1 }; }

/* A register holding the number (pure constants get one on demand). */
int cc_num_reg(Comp *c, AVal *v) {
    if (v->reg >= 0) return v->reg;
    Ins *in = cc_emit(c, I_NCONST);
    in->dst = cc_new_num(c, v->is_bool);
    in->imm = v->num;
    v->reg = in->dst;
    return in->dst;
}

/* A constant tensor computed now, with the run-time kernels (constant folding). */
AVal cc_tensor_const(Comp *c, Tensor *t) {
    Graph *g = c->g;
    GROW(g->consts, g->nconsts, g->capconsts);
    g->consts[g->nconsts] = t;
    Shape s;
    shape_of(t, &s);
    AVal v = cc_tensor_av(c, t->dtype, &s);
    Ins *in = cc_emit(c, I_TCONST);
    in->dst = v.reg;
    in->aux = g->nconsts++;
    return v;
}

/* ---------- structures ---------- */

AStruct *cc_astruct_new(Comp *c, bool dict) {
    AStruct *s = cc_arena_alloc(c, sizeof *s);
    s->dict = dict;
    s->obj = -1;
    s->born = c->nsnaps;
    return s;
}

/* Before a dry run changes a structure, remember how it was. Every change of a structure
 * comes through here, so here a change of an escaped one (cc_escape) is refused. */
void cc_undo_save(Comp *c, AStruct *s) {
    c->known_changes++;
    if (s->escaped)
        cc_unsupported(c, "a list or dict made in static code changes after it was stored into a list or dict from "
                       "outside the block (the stored copy would not see the change)");
    if (!c->dry || s->born >= c->snap_id) return;   /* made by this dry run: nobody else sees it */
    for (int i = c->undo_base; i < c->nundo; i++)   /* saved once per dry run */
        if (c->undo[i].st == s) return;
    GROW(c->undo, c->nundo, c->capundo);
    Undo *u = &c->undo[c->nundo++];
    u->st = s;
    u->n = s->n;
    u->obj = s->obj;
    u->grown = s->grown;
    u->items_unknown = s->items_unknown;
    u->shrunk = s->shrunk;
    u->wants_host = s->wants_host;
    u->escaped = s->escaped;
    u->ta = s->ta;
    u->items = mem_alloc(sizeof(AVal) * (size_t)(s->n + 1));
    if (s->n) memcpy(u->items, s->items, sizeof(AVal) * (size_t)s->n);
    u->keys = mem_alloc(sizeof(char *) * (size_t)(s->n + 1));
    if (s->keys && s->n) memcpy(u->keys, s->keys, sizeof(char *) * (size_t)s->n);
}

void cc_astruct_push(Comp *c, AStruct *s, const char *key, AVal v) {
    cc_undo_save(c, s);
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        AVal *items = cc_arena_alloc(c, sizeof(AVal) * (size_t)s->cap);
        if (s->n) memcpy(items, s->items, sizeof(AVal) * (size_t)s->n);
        s->items = items;
        if (s->dict) {
            char **keys = cc_arena_alloc(c, sizeof(char *) * (size_t)s->cap);
            if (s->n) memcpy(keys, s->keys, sizeof(char *) * (size_t)s->n);
            s->keys = keys;
        }
    }
    if (s->dict) {
        char *k = cc_arena_alloc(c, strlen(key) + 1);
        strcpy(k, key);
        s->keys[s->n] = k;
    }
    s->items[s->n++] = v;
}

int cc_astruct_find(AStruct *s, const char *key) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->keys[i], key)) return i;
    return -1;
}

/* ---------- variables and inputs ---------- */

bool cc_key_eq(VarKey a, VarKey b) { return a.kind == b.kind && a.slot == b.slot && a.ptr == b.ptr; }

void cc_env_set(Comp *c, VarKey k, AVal v, const char *name, bool assigned) {
    if (assigned) cs_note_value(c, name, &v);
    if (k.kind == K_CELL || k.kind == K_GLOBAL) c->known_changes++;   /* seen by other calls */
    Binding *b = cc_env_find(c, k);
    if (!b) {
        GROW(c->env, c->nenv, c->capenv);
        cc_key_indexed(&c->envix, k, c->nenv);
        b = &c->env[c->nenv++];
        b->key = k;
        b->assigned = false;
        b->name = name;
    } else if (c->dry) {   /* a dry run: log what it overwrites, for the rollback */
        GROW(c->envlog, c->nenvlog, c->capenvlog);
        c->envlog[c->nenvlog++] = (EnvUndo){ (int)(b - c->env), *b };
    }
    b->v = v;
    b->assigned |= assigned;
}

int cc_add_guard(Comp *c, GuardKind kind, int input) {
    Graph *g = c->g;
    GROW(g->guards, g->nguards, g->capguards);
    Guard *gd = &g->guards[g->nguards];
    memset(gd, 0, sizeof *gd);
    gd->kind = kind;
    gd->input = input;
    gd->reg = -1;
    gd->obj = -1;
    gd->k = NIL_VAL;
    return g->nguards++;
}

int cc_add_input(Comp *c, InputSrc src) {
    Graph *g = c->g;
    GROW(g->inputs, g->ninputs, g->capinputs);
    g->inputs[g->ninputs] = src;
    return g->ninputs++;
}

/* The most guards lifting may add (elements of the lists and dicts a block reads). */
#define LIFT_MAX_GUARDS 10000

/* A list or dict the block already reads under another name (`M = L` before it): the same
 * structure, so a store through one name is seen through the other, as eagerly. Its guard
 * repeats the first one's and shares its container slot; the cache lookup checks that the
 * inputs share containers exactly as they did here (static.c, objs_shared_as_compiled). */
static AVal lift_alias(Comp *c, AStruct *st, int in, bool dict) {
    int gi = cc_add_guard(c, dict ? G_DICT : G_LIST, in);
    Guard *gd = &c->g->guards[gi];
    gd->obj = st->obj;
    for (int i = 0; i < gi; i++) {
        const Guard *first = &c->g->guards[i];
        if (first->obj != st->obj || (first->kind != G_LIST && first->kind != G_DICT)) continue;
        gd->n = first->n;
        gd->at_least = first->at_least;
        if (dict) {
            gd->keys = mem_alloc(sizeof(char *) * (size_t)(gd->n + 1));
            for (int k = 0; k < gd->n; k++) gd->keys[k] = mem_strndup(first->keys[k], strlen(first->keys[k]));
        }
        break;
    }
    return (AVal){ .kind = dict ? AV_DICT : AV_LIST, .st = st, .reg = -1 };
}

/* Turns the current value of input `in` into an AVal, adding the guards it needs. */
AVal cc_lift(Comp *c, Value v, int in, const char *name) {
    switch (v.type) {
    case VAL_NUM: {
        int gi = cc_add_guard(c, G_NUMBER, in);
        AVal a = { .kind = AV_NUM, .known = true, .num = v.as.n };
        a.reg = cc_new_num(c, false);
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
        const InputSrc *src = &c->g->inputs[in];
        uint32_t any = c->dyn && src->kind == SRC_ARG ? c->dyn[src->slot] : 0;
        for (int a = 0; a < s.ndim; a++)   /* export's dynamic axes: any size, a run-time dimension */
            if (any >> a & 1) s.d[a] = SHAPE_RT;
        int gi = cc_add_guard(c, G_TENSOR, in);
        AVal a = cc_tensor_av(c, v.as.t->dtype, &s);
        c->g->guards[gi].dtype = v.as.t->dtype;
        c->g->guards[gi].shape = s;
        c->g->guards[gi].reg = a.reg;
        return a;
    }
    case VAL_BOOL: {
        int gi = cc_add_guard(c, G_CONST, in);
        c->g->guards[gi].k = v;
        return cc_bool_const(v.as.b);
    }
    case VAL_LIST:
    case VAL_DICT: {
        bool dict = v.type == VAL_DICT;
        /* Each element becomes its own input and guard: a structure that contains itself
         * would never end, and one shared n times would expand 2^n times. Such blocks
         * run eagerly (correct, and eager == and printing handle cycles). */
        if (v.as.o->marks & OBJ_LIFTING)
            return cc_unsupported(c, "'%s' contains itself; static code reads only acyclic lists and dicts", name);
        if (c->g->nguards >= LIFT_MAX_GUARDS)
            return cc_unsupported(c, "the lists and dicts this block reads have more than %d elements in all",
                                  LIFT_MAX_GUARDS);
        for (int i = 0; i < c->nlifted; i++)
            if (c->lifted[i].o == v.as.o) return lift_alias(c, c->lifted[i].st, in, dict);
        int gi = cc_add_guard(c, dict ? G_DICT : G_LIST, in);
        AStruct *st = cc_astruct_new(c, dict);
        st->obj = c->g->nobjs++;
        GROW(c->lifted, c->nlifted, c->caplifted);
        c->lifted[c->nlifted++] = (struct LiftedObj){ v.as.o, st };
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
        v.as.o->marks |= OBJ_LIFTING;
        for (int i = 0; i < n && !c->failed; i++) {
            char leafname[256];
            if (dict) snprintf(leafname, sizeof leafname, "%s.%s", name, AS_DICT(v)->entries[i].key->chars);
            else snprintf(leafname, sizeof leafname, "%s[%d]", name, i);
            InputSrc src = { SRC_LEAF, in, NULL, NULL, i, mem_strndup(leafname, strlen(leafname)) };
            int leaf = cc_add_input(c, src);
            Value item = dict ? AS_DICT(v)->entries[i].val : AS_LIST(v)->items[i];
            AVal a = cc_lift(c, item, leaf, c->g->inputs[leaf].name);
            cc_astruct_push(c, st, dict ? AS_DICT(v)->entries[i].key->chars : NULL, a);
        }
        v.as.o->marks &= ~OBJ_LIFTING;
        st->born = 0;   /* an input exists before any dry run, even when one lifts it */
        AVal a = { .kind = dict ? AV_DICT : AV_LIST, .st = st, .reg = -1 };
        return a;
    }
    case VAL_STR:
    case VAL_NIL:
    case VAL_FUNC: {
        int gi = cc_add_guard(c, G_CONST, in);
        c->g->guards[gi].k = val_retain(v);
        return cc_const_av(v);
    }
    default:
        return cc_error_atk(c, ERRK_KEY, c->loc, "undefined variable '%s'", name);
    }
}

/* The block frame's value for a key, and where it comes from at run time. */
bool cc_key_source(Comp *c, VarKey k, Value *val, InputSrc *src) {
    memset(src, 0, sizeof *src);
    switch (k.kind) {
    case K_LOCAL:
        if (c->fn) {
            if (k.slot >= c->fn->proto->nparams) return false;
            *val = c->params[k.slot];
            src->kind = SRC_ARG;
        } else {
            if (!c->frame->slots) return false;   /* top level: a comprehension's hidden local */
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

/* Eager's message for an unbound name, with the same suggestion (interp_name_hint). */
static AVal undefined(Comp *c, VarKey k, const char *name) {
    ObjClosure *fn = c->fn ? c->fn : c->frame ? c->frame->closure : NULL;
    const Module *m = k.kind == K_GLOBAL ? k.ptr : fn ? fn->module : c->frame ? c->frame->mod : NULL;
    char hint[SUGGEST_MAX_NAME + 24];
    return cc_error_atk(c, ERRK_KEY, c->loc, "undefined variable '%s'%s", name,
                        interp_name_hint(m, fn ? fn->proto : NULL, name, hint, sizeof hint));
}

AVal cc_read_key(Comp *c, VarKey k, const char *name) {
    Binding *b = cc_env_find(c, k);
    if (b) {
        if (b->v.poison)   /* see prepare_homes */
            return cc_unsupported(c, "variable '%s' is first bound to a list or dict inside a run-time branch or a loop "
                                  "that may not run", name);
        if (b->v.kind == AV_NONE) return undefined(c, k, name);
        AVal v = b->v;
        if (v.unset) {   /* first assigned in a loop or branch that may not have run */
            Ins *in = cc_emit(c, I_ASSERT);
            in->a = v.unset - 1;
            in->key = mem_strndup(name, strlen(name));
            v.unset = 0;
        }
        return v;
    }
    b = cc_input_find(c, k);
    if (b) return b->v;
    Value v;
    InputSrc src;
    if (!cc_key_source(c, k, &v, &src) || v.type == VAL_UNDEF) return undefined(c, k, name);
    src.name = mem_strndup(name, strlen(name));
    int in = cc_add_input(c, src);
    AVal a = cc_lift(c, v, in, name);
    if (c->failed) return FAILV;
    GROW(c->inputs, c->ninputs, c->capinputs);
    cc_key_indexed(&c->inputix, k, c->ninputs);
    c->inputs[c->ninputs++] = (Binding){ k, a, false, name };
    return a;
}

/* The variable a NAME node refers to, in the current context. */
VarKey cc_name_key(Comp *c, Node *n) {
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
bool cc_need_const(Comp *c, AVal *v, double *out, const char *what) {
    if (v->kind != AV_NUM) {
        cc_error_atk(c, ERRK_TYPE, c->loc, "%s must be a number", what);
        return false;
    }
    if (!v->known) {
        cc_unsupported(c, "%s is computed at run time; static code needs it when compiling", what);
        return false;
    }
    cc_guard_deps(c, v->deps);
    *out = v->num;
    return true;
}

void cc_guard_deps(Comp *c, uint64_t deps) {
    for (int i = 0; i < c->nnum; i++)
        if (deps & ((uint64_t)1 << i)) c->g->guards[c->numguards[i]].kind = G_NUMBER_EQ;
}

bool cc_need_int(Comp *c, AVal *v, int64_t *out, const char *what) {
    double x;
    if (!cc_need_const(c, v, &x, what)) return false;
    if (!num_to_i64(x, out)) {
        cc_error_atk(c, ERRK_TYPE, c->loc, x == floor(x) ? "%s is out of the i64 range, got %g" : "%s must be an integer, got %g", what, x);
        return false;
    }
    return true;
}

/* A compile-time Value for an AVal that is fully known (used to fold pure built-ins).
 * Structures made in static code may contain themselves or be shared many times: past
 * these bounds the value is simply not known when compiling. */
#define PURE_MAX_DEPTH 1000
#define PURE_MAX_NODES 100000

static bool pure_value(Comp *c, AVal *v, Value *out, int depth, long *nodes);

bool cc_pure_value(Comp *c, AVal *v, Value *out) {
    long nodes = 0;
    return pure_value(c, v, out, 0, &nodes);
}

static bool pure_value(Comp *c, AVal *v, Value *out, int depth, long *nodes) {
    if ((v->kind == AV_LIST || v->kind == AV_DICT) && (depth > PURE_MAX_DEPTH || ++*nodes > PURE_MAX_NODES))
        return false;
    switch (v->kind) {
    case AV_CONST: *out = v->k; return true;
    case AV_NUM:
        if (!v->known || v->deps) return false;
        *out = v->is_bool ? BOOL_VAL(v->num != 0) : NUM_VAL(v->num);
        return true;
    case AV_LIST:
    case AV_DICT: {
        if (v->st->obj >= 0 || ca_is_open(v->st)) return false;
        Value r;
        if (v->kind == AV_LIST) {
            ObjList *l = list_new(v->st->n);
            r = cc_keep_value(c, OBJ_VAL(VAL_LIST, l));
            for (int i = 0; i < v->st->n; i++) {
                Value x;
                if (!pure_value(c, &v->st->items[i], &x, depth + 1, nodes)) return false;
                list_push(l, x);
            }
        } else {
            ObjDict *d = dict_new();
            r = cc_keep_value(c, OBJ_VAL(VAL_DICT, d));
            for (int i = 0; i < v->st->n; i++) {
                Value x;
                if (!pure_value(c, &v->st->items[i], &x, depth + 1, nodes)) return false;
                dict_set_cstr(d, v->st->keys[i], x);
            }
        }
        *out = r;
        return true;
    }
    default: return false;
    }
}

/* A compile-time Value back into an AVal (results of folded built-ins). A folded value
 * that contains itself has no AVal tree: OBJ_LIFTING marks the path, as cc_lift does. */
AVal cc_from_value(Comp *c, Value v) {
    if ((v.type == VAL_LIST || v.type == VAL_DICT) && (v.as.o->marks & OBJ_LIFTING))
        return cc_unsupported(c, "a list or dict that contains itself");
    switch (v.type) {
    case VAL_NUM: return cc_num_const(v.as.n);
    case VAL_BOOL: return cc_bool_const(v.as.b);
    case VAL_TENSOR: return cc_tensor_const(c, tensor_retain(v.as.t));
    case VAL_LIST:
    case VAL_DICT: {
        bool dict = v.type == VAL_DICT;
        AStruct *st = cc_astruct_new(c, dict);
        int n = dict ? AS_DICT(v)->len : AS_LIST(v)->len;
        v.as.o->marks |= OBJ_LIFTING;
        for (int i = 0; i < n && !c->failed; i++) {
            AVal a = cc_from_value(c, dict ? AS_DICT(v)->entries[i].val : AS_LIST(v)->items[i]);
            if (!c->failed) cc_astruct_push(c, st, dict ? AS_DICT(v)->entries[i].key->chars : NULL, a);
        }
        v.as.o->marks &= ~OBJ_LIFTING;
        if (c->failed) return FAILV;
        return (AVal){ .kind = dict ? AV_DICT : AV_LIST, .st = st, .reg = -1 };
    }
    default: return cc_const_av(cc_keep_value(c, val_retain(v)));
    }
}

