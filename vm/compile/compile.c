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
#include <stdlib.h>
#include <time.h>
#include "comp.h"

/* ---------- statements ---------- */

static void assign(Comp *c, Node *target, AVal v);
static void assign_into(Comp *c, Node *target, AVal obj, AVal v);

/* A container field/element store: compile-time structures change; containers that came
 * from the program are also changed at run time, in program order. */
void cc_store_struct(Comp *c, AVal obj, AVal key, AVal v, SrcLoc loc) {
    AStruct *st = obj.st;
    int at;
    c->loc = loc;
    if (ca_is_open(st)) { ca_read_open(c); return; }
    if (st->selected) { cc_unsupported(c, "assigning into a dict chosen from a list by a number computed at run time"); return; }
    if (st->shrunk) { cc_unsupported(c, "assigning into a list or dict after static code deleted from it at run time"); return; }
    if (obj.kind == AV_DICT && key.kind == AV_STR) {
        cc_host_dict_set(c, st, key, v);
        return;
    }
    if (obj.kind == AV_DICT) {
        if (key.kind != AV_CONST || key.k.type != VAL_STR) { cc_error_atk(c, ERRK_TYPE, loc, "dict keys are strings"); return; }
        at = cc_astruct_find(st, AS_STR(key.k)->chars);
        if (at < 0 && st->obj >= 0) cc_struct_grows(c, st);   /* a new key: stored at run time too */
        cc_undo_save(c, st);
        if (at < 0) cc_astruct_push(c, st, AS_STR(key.k)->chars, v);
        else st->items[at] = v;
        at = cc_astruct_find(st, AS_STR(key.k)->chars);
    } else {
        int64_t i;
        if (!cc_need_int(c, &key, &i, "a list index")) return;
        if (!cc_list_index(c, st, &i)) return;
        if (i < 0 || i >= st->n) { cc_error_atk(c, ERRK_INDEX, loc, "list index out of range"); return; }
        cc_undo_save(c, st);
        st->items[i] = v;
        at = (int)i;
    }
    if (st->obj < 0) return;
    cc_escape(c, v);
    Ins *in = cc_emit(c, I_STORE);
    int idx = (int)(in - c->g->code);
    Opnd *o = mem_calloc(1, sizeof(Opnd));
    *o = cc_opnd_of(c, v);
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
        cc_env_set(c, cc_name_key(c, target), v, target->str, true);
        return;
    }
    AVal obj = cc_expr(c, target->a);
    if (c->failed) return;
    assign_into(c, target, obj, v);
}

/* target = v for an index or field target whose container target->a compiled to obj. */
static void assign_into(Comp *c, Node *target, AVal obj, AVal v) {
    c->loc = target->loc;
    if (target->kind == AST_FIELD) {
        if (obj.kind != AV_DICT) { cc_error_atk(c, ERRK_TYPE, target->loc, "cannot set field '%s' on this value", target->str); return; }
        cc_store_struct(c, obj, cc_const_av(cc_keep_value(c, val_cstr(target->str))), v, target->loc);
        return;
    }
    if (obj.kind == AV_TENSOR) {
        AVal nt = cc_index_tensor(c, obj, target, &v);
        if (!c->failed) assign(c, target->a, nt);
        return;
    }
    if ((obj.kind == AV_LIST || obj.kind == AV_DICT) && target->n == 1 && target->kids[0]->kind != AST_SLICE) {
        AVal key = cc_expr(c, target->kids[0]);
        if (!c->failed) cc_store_struct(c, obj, key, v, target->loc);
        return;
    }
    cc_unsupported(c, "this kind of assignment");
}

/* Whether compiling n twice is the same as compiling it once: names, literals, and fields
 * and indices of those (no calls, which could have effects or rebind names). */
static bool is_simple(Node *n) {
    if (!n) return true;
    switch (n->kind) {
    case AST_NAME: case AST_NUM: case AST_STR: case AST_TRUE: case AST_FALSE: case AST_NIL: case AST_ELLIPSIS:
        return true;
    case AST_UNARY: case AST_FIELD: return is_simple(n->a);
    case AST_BINARY: return is_simple(n->a) && is_simple(n->b);
    case AST_SLICE: return is_simple(n->a) && is_simple(n->b) && is_simple(n->c);
    case AST_INDEX:
        for (int i = 0; i < n->n; i++)
            if (!is_simple(n->kids[i])) return false;
        return is_simple(n->a);
    default: return false;
    }
}

/* target op= e: exactly target = target op e, the target's container compiled once (its
 * current value is read through the same, simple, expressions). */
static void assign_augmented(Comp *c, Node *n) {
    Node *t = n->a;
    if (t->kind == AST_NAME) {
        AVal cur = cc_expr(c, t);
        if (c->failed) return;
        AVal v = cc_expr(c, n->b);
        if (c->failed) return;
        AVal r = cc_binary_values(c, n->op, cur, v, t->loc);
        if (!c->failed) assign(c, t, r);
        return;
    }
    if (!is_simple(t)) {
        cc_unsupported(c, "augmented assignment to an index or field whose container or index has a call in it");
        return;
    }
    AVal obj = cc_expr(c, t->a);
    if (c->failed) return;
    AVal cur = cc_expr(c, t);
    if (c->failed) return;
    AVal v = cc_expr(c, n->b);
    if (c->failed) return;
    AVal r = cc_binary_values(c, n->op, cur, v, t->loc);
    if (!c->failed) assign_into(c, t, obj, r);
}

/* ---------- loops and branches ---------- */

typedef struct {
    int ncode;
    int nenv;         /* bindings then; later ones were added by the dry run */
    int nenvlog;      /* the environment's undo log then (cc_env_set logs what it overwrites) */
    int nundo, undo_base;
    int id;           /* structures born at or after it were made by the dry run */
    int outer_id;
} Snap;

static Snap snapshot(Comp *c) {
    /* no copy of the environment: a dry run logs the bindings it overwrites */
    Snap s = { c->g->ncode, c->nenv, c->nenvlog, c->nundo, c->undo_base, ++c->nsnaps, c->snap_id };
    c->snap_id = s.id;
    c->undo_base = c->nundo;
    c->dry++;
    return s;
}

/* Throws away what a dry run emitted and changed. */
static void rollback(Comp *c, Snap *s) {
    for (int i = s->ncode; i < c->g->ncode; i++) ins_free(&c->g->code[i]);
    c->g->ncode = s->ncode;
    for (int i = c->nenvlog - 1; i >= s->nenvlog; i--) c->env[c->envlog[i].pos] = c->envlog[i].old;
    c->nenvlog = s->nenvlog;
    c->nenv = s->nenv;
    for (int i = c->nundo - 1; i >= s->nundo; i--) {
        Undo *u = &c->undo[i];
        u->st->n = u->n;
        u->st->obj = u->obj;
        u->st->grown = u->grown;
        u->st->items_unknown = u->items_unknown;
        u->st->shrunk = u->shrunk;
        u->st->wants_host = u->wants_host;
        u->st->escaped = u->escaped;
        u->st->ta = u->ta;
        if (u->n) memcpy(u->st->items, u->items, sizeof(AVal) * (size_t)u->n);
        if (u->st->keys && u->n) memcpy(u->st->keys, u->keys, sizeof(char *) * (size_t)u->n);
        mem_free(u->items);
        mem_free(u->keys);
    }
    c->nundo = s->nundo;
    c->undo_base = s->undo_base;
    c->snap_id = s->outer_id;
    c->dry--;
}

static bool same_av(const AVal *a, const AVal *b) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case AV_NUM: return a->reg == b->reg && a->known == b->known && (!a->known || a->num == b->num);
    case AV_TENSOR: case AV_STR: return a->reg == b->reg;
    case AV_CONST: return a->k.type == b->k.type && (a->k.type == VAL_NIL || val_equal(a->k, b->k));
    case AV_LIST: case AV_DICT: return a->st == b->st;
    case AV_CLOSURE: return a->cl == b->cl || (a->cl->proto && a->cl->proto == b->cl->proto);
    default: return true;
    }
}

static bool make_home(Comp *c, const AVal *v, const AVal *after, AVal *home);

/* A list or dict home: the structure v and the value after the region share (length, keys),
 * each item a home of its own, or the item itself where it does not change (a function). A
 * loop's `r = vg(m, xb, yb)`, [loss, grads], lives there. */
static bool make_struct_home(Comp *c, const AVal *v, const AVal *after, AVal *home) {
    if (!after || after->kind != v->kind || after->st->n != v->st->n || v->st->grown || after->st->grown) return false;
    AStruct *st = cc_astruct_new(c, v->kind == AV_DICT);
    st->is_home = true;
    for (int i = 0; i < v->st->n; i++) {
        const AVal *x = &v->st->items[i], *y = &after->st->items[i];
        if (v->kind == AV_DICT && strcmp(v->st->keys[i], after->st->keys[i]) != 0) return false;
        AVal h;
        if (!make_home(c, x, y, &h)) {
            if (!same_av(x, y)) return false;
            h = *x;
        }
        cc_astruct_push(c, st, v->kind == AV_DICT ? v->st->keys[i] : NULL, h);
    }
    *home = (AVal){ .kind = v->kind, .st = st, .reg = -1 };
    return true;
}

/* A home for a list or dict v first bound in a loop: a register for each tensor, number or
 * string in it, nested lists and dicts alike; other items (functions) as they are. */
static bool fresh_struct_home(Comp *c, const AVal *v, AVal *home) {
    if (v->st->grown || ca_is_open(v->st)) return false;
    AStruct *st = cc_astruct_new(c, v->kind == AV_DICT);
    st->is_home = true;
    for (int i = 0; i < v->st->n; i++) {
        const AVal *x = &v->st->items[i];
        AVal h = *x;
        if ((x->kind == AV_LIST || x->kind == AV_DICT) ? !fresh_struct_home(c, x, &h)
            : x->kind == AV_TENSOR || x->kind == AV_NUM || x->kind == AV_STR ? !make_home(c, x, x, &h) : false)
            return false;
        cc_astruct_push(c, st, v->kind == AV_DICT ? v->st->keys[i] : NULL, h);
    }
    *home = (AVal){ .kind = v->kind, .st = st, .reg = -1 };
    return true;
}

/* A home register of the same kind as v (numbers and tensors; others must not change); a
 * tensor's takes any size where v and the value after the region (after, or NULL) differ and
 * one of them has a run-time shape (cs_home_shape). */
static bool make_home(Comp *c, const AVal *v, const AVal *after, AVal *home) {
    if ((v->kind == AV_LIST || v->kind == AV_DICT) && after && after->st != v->st && !ca_is_open(v->st))
        return make_struct_home(c, v, after, home);
    if (v->kind == AV_NUM) {
        *home = (AVal){ .kind = AV_NUM, .is_bool = v->is_bool, .reg = cc_new_num(c, v->is_bool) };
        return true;
    }
    if (v->kind == AV_TENSOR) {
        Shape s;
        cs_home_shape(v, after, &s);
        *home = cc_tensor_av(c, v->dtype, &s);
        return true;
    }
    if (v->kind == AV_STR || (v->kind == AV_CONST && v->k.type == VAL_STR)) {   /* a string built in the loop */
        *home = (AVal){ .kind = AV_STR, .reg = cc_new_val(c) };
        return true;
    }
    return false;
}

/* A home that may be unbound learns, at run time, whether v is bound. */
static void set_bound_flag(Comp *c, const AVal *home, const AVal *v) {
    if (!home->unset) return;
    AVal one = cc_bool_const(true);
    int src = v->unset ? v->unset - 1 : cc_num_reg(c, &one);
    Ins *in = cc_emit(c, I_NMOVE);
    in->dst = home->unset - 1;
    in->a = src;
}

/* Whether the variable has a value in the frame the static code runs in. */
static bool has_value_outside(Comp *c, VarKey k) {
    Value v;
    InputSrc src;
    if (!cc_key_source(c, k, &v, &src)) return false;
    if (src.kind == SRC_CELLPTR) src.cell->h.rc--;   /* cc_key_source took a reference */
    return v.type != VAL_UNDEF;
}

/* Whether a value of shape s may move into a home of shape h: the same, but for h's run-time
 * dimensions, which take any size. */
static bool shape_fits_home(const Shape *s, const Shape *h) {
    if (s->ndim != h->ndim) return false;
    for (int a = 0; a < s->ndim; a++)
        if (h->d[a] != SHAPE_RT && s->d[a] != h->d[a]) return false;
    return true;
}

static void move_into(Comp *c, const AVal *home, AVal v, const char *name) {
    if (c->failed) return;
    if (home->kind == AV_STR && (v.kind == AV_STR || (v.kind == AV_CONST && v.k.type == VAL_STR))) {
        if (v.reg == home->reg && v.kind == AV_STR) return;
        cc_host_move(c, home->reg, v);
        set_bound_flag(c, home, &v);
        return;
    }
    if (v.kind != home->kind) {
        cc_unsupported(c, "variable '%s' changes kind inside a loop or branch", name);
        return;
    }
    if (home->kind == AV_NUM) {
        if (v.reg == home->reg) return;
        int r = cc_num_reg(c, &v);
        Ins *in = cc_emit(c, I_NMOVE);
        in->dst = home->reg;
        in->a = r;
        set_bound_flag(c, home, &v);
        return;
    }
    if (home->kind == AV_TENSOR) {
        if (v.reg == home->reg) return;
        if (v.dtype != home->dtype || !shape_fits_home(&v.shape, &home->shape)) {
            char b1[600], b2[600];
            cc_unsupported(c, "variable '%s' changes shape or dtype (%s %s to %s %s) inside a loop or branch", name,
                        shape_str(&home->shape, b1, sizeof b1), dtype_name(home->dtype),
                        shape_str(&v.shape, b2, sizeof b2), dtype_name(v.dtype));
            return;
        }
        if (c->tape) cgrad_move(c, home->reg, v.reg);
        /* a value that may be unbound (an inner loop's home before that loop ever ran) is
         * moved only when bound: its register is empty otherwise, and its flag says so */
        int skip = -1;
        if (v.unset) {
            Ins *jf = cc_emit(c, I_JUMPF);
            jf->a = v.unset - 1;
            skip = (int)(jf - c->g->code);
        }
        Ins *in = cc_emit(c, I_TMOVE);
        in->dst = home->reg;
        in->a = v.reg;
        if (skip >= 0) c->g->code[skip].aux = c->g->ncode;
        set_bound_flag(c, home, &v);
        return;
    }
    if ((home->kind == AV_LIST || home->kind == AV_DICT) && home->st != v.st && home->st->is_home) {
        if (v.kind != home->kind || v.st->n != home->st->n || v.unset) {   /* one structure, always bound */
            cc_unsupported(c, "variable '%s' changes its structure inside a loop or branch", name);
            return;
        }
        for (int i = 0; i < v.st->n && !c->failed; i++) move_into(c, &home->st->items[i], v.st->items[i], name);
        set_bound_flag(c, home, &v);
        return;
    }
    if (!same_av(home, &v)) cc_unsupported(c, "variable '%s' changes inside a loop or branch", name);
}

static void changed_one(Binding *now, const Binding *before, Home **out, int *n) {
    if (before && same_av(&before->v, &now->v)) return;
    if (now->v.kind == AV_NONE) return;
    *out = mem_realloc(*out, sizeof(Home) * (size_t)(*n + 1));
    (*out)[*n] = (Home){ now->key, now->v, now->name, NULL, 0 };
    (*n)++;
}

static int by_pos_then_age(const void *a, const void *b) {
    const EnvUndo *x = *(EnvUndo *const *)a, *y = *(EnvUndo *const *)b;
    if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
    return x < y ? -1 : x > y;
}

static bool listed(const Home *homes, int n, VarKey key) {
    for (int i = 0; i < n; i++)
        if (cc_key_eq(homes[i].key, key)) return true;
    return false;
}

/* Variables whose binding differs between the environment now and the snapshot, in the
 * order of the environment: the bindings the dry run overwrote (the oldest log entry of a
 * position holds its value then), then those it added. Linear in what the run touched. */
static void changed_since(Comp *c, Snap *s, Home **out, int *n) {
    int nlog = c->nenvlog - s->nenvlog;
    EnvUndo **log = mem_alloc(sizeof(EnvUndo *) * (size_t)(nlog + 1));
    int m = 0;
    for (int i = 0; i < nlog; i++)   /* bindings the run added are reported below, once */
        if (c->envlog[s->nenvlog + i].pos < s->nenv) log[m++] = &c->envlog[s->nenvlog + i];
    nlog = m;
    qsort(log, (size_t)nlog, sizeof *log, by_pos_then_age);
    for (int i = 0; i < nlog; i++)
        if (i == 0 || log[i]->pos != log[i - 1]->pos) changed_one(&c->env[log[i]->pos], &log[i]->old, out, n);
    for (int i = s->nenv; i < c->nenv; i++) changed_one(&c->env[i], NULL, out, n);
    /* `y = x` where y held x's register before: the same value in the dry run, but in the
     * region y holds x's home, which the move at the region's end overwrites: y changes too */
    for (bool more = true; more;) {
        more = false;
        for (int i = 0; i < nlog; i++) {
            const Binding *now = &c->env[log[i]->pos];
            if ((i && log[i]->pos == log[i - 1]->pos) || listed(*out, *n, now->key)) continue;
            if ((now->v.kind != AV_TENSOR && now->v.kind != AV_NUM) || now->v.reg < 0 || !same_av(&log[i]->old.v, &now->v))
                continue;   /* a register (not a number known when compiling) it kept */
            bool shares = false;
            for (int k = 0; k < *n && !shares; k++) {   /* a changed variable's value before */
                const AVal *before = NULL;
                for (int j = 0; j < nlog && !before; j++)
                    if (cc_key_eq(c->env[log[j]->pos].key, (*out)[k].key)) before = &log[j]->old.v;
                if (!before) {
                    Binding *in = cc_input_find(c, (*out)[k].key);
                    before = in ? &in->v : NULL;
                }
                shares = before && before->kind == now->v.kind && before->reg == now->v.reg;
            }
            if (shares) {
                *out = mem_realloc(*out, sizeof(Home) * (size_t)(*n + 1));
                (*out)[(*n)++] = (Home){ now->key, now->v, now->name, NULL, 0 };
                more = true;
            }
        }
    }
    mem_free(log);
}

/* A list the region's dry run grew, which becomes a tensor array for the loop (carray.c). */
typedef struct {
    AStruct *st;
    int n0;           /* its items before */
    int per;          /* items an iteration pushes */
    AVal first;       /* the first item pushed (its dtype and shape) */
} Grown;

/* List and dict items changed since the snapshot (their value now), from the dry run's
 * undo log. A list made in the block that grows there becomes a host list (*hosts, made
 * before the region: vm/compile/chost.c) unless every item it gains is a tensor; such a list
 * is a tensor array when the region is a loop of `trips` iterations known when compiling
 * (added to grown; NULL or -1 when not a loop) and its items before stay; other growth
 * cannot be compiled. */
static void changed_items(Comp *c, Snap *s, Home **out, int *n, AStruct ***hosts, int *nhosts, int trips,
                          Grown **grown, int *ngrown) {
    for (int i = s->nundo; i < c->nundo && !c->failed; i++) {
        Undo *u = &c->undo[i];
        if (u->st->born >= s->id) continue;   /* made inside the region */
        /* grown here, or made a host list by a region inside (a branch's dry run) */
        bool became_host = (u->obj < 0 && u->st->obj >= 0) || u->st->wants_host;
        if (became_host || (u->st->n != u->n && cc_host_list_fits(u->st, u->n))) {
            *hosts = mem_realloc(*hosts, sizeof(AStruct *) * (size_t)(*nhosts + 1));
            (*hosts)[(*nhosts)++] = u->st;
            continue;
        }
        if (u->st->n != u->n) {
            bool kept = u->st->n > u->n;
            for (int j = 0; kept && j < u->n; j++) kept = same_av(&u->items[j], &u->st->items[j]);
            if (!kept) {
                cc_unsupported(c, "a list or dict grows inside a loop or run-time branch");
                return;
            }
            if (!ca_can_grow(c, u->st, u->n, grown ? trips : -1)) return;
            *grown = mem_realloc(*grown, sizeof(Grown) * (size_t)(*ngrown + 1));
            (*grown)[(*ngrown)++] = (Grown){ u->st, u->n, u->st->n - u->n, u->st->items[u->n] };
            continue;
        }
        for (int j = 0; j < u->n; j++) {
            if (same_av(&u->items[j], &u->st->items[j])) continue;
            const char *name = u->st->keys ? u->st->keys[j] : "a list item";
            AVal unused;   /* found in the dry run, so a loop may still compile as copies (wants_unroll) */
            if (!make_home(c, &u->items[j], &u->st->items[j], &unused)) {
                cc_unsupported(c, "item '%s' changes its kind inside a loop or run-time branch", name);
                return;
            }
            *out = mem_realloc(*out, sizeof(Home) * (size_t)(*n + 1));
            (*out)[*n] = (Home){ { 0 }, u->st->items[j], name, u->st, j };
            (*n)++;
        }
    }
}

/* Whether the variable (st NULL) or item has a home among homes[0..n). */
static bool has_home(const Home *homes, int n, VarKey key, const AStruct *st, int slot) {
    for (int i = 0; i < n; i++)
        if (st ? homes[i].st == st && homes[i].slot == slot : !homes[i].st && cc_key_eq(homes[i].key, key)) return true;
    return false;
}

static bool known_number(const AVal *v) { return v->kind == AV_NUM && v->known; }

/* Gives item `slot` of st a home register for the region, starting at its current value;
 * true when that value was a number known when compiling (see prepare_homes). */
static bool home_item(Comp *c, Home *changed, Home **homes, int *nhomes) {
    AStruct *st = changed->st;
    AVal before = st->items[changed->slot], home;
    if (has_home(*homes, *nhomes, changed->key, st, changed->slot)) return false;
    if (!make_home(c, &before, &changed->home, &home)) {
        if (!same_av(&before, &changed->home))
            cc_unsupported(c, "item '%s' changes its kind inside a loop or run-time branch", changed->name);
        return false;
    }
    move_into(c, &home, before, changed->name);
    cc_undo_save(c, st);
    st->items[changed->slot] = home;
    *homes = mem_realloc(*homes, sizeof(Home) * (size_t)(*nhomes + 1));
    (*homes)[*nhomes] = (Home){ { 0 }, home, changed->name, st, changed->slot };
    (*nhomes)++;
    return known_number(&before);
}

static void loop_body_once(Comp *c, void *arg);
static int loop_trips(Comp *c, void *arg, uint64_t *deps);
static bool wants_peel(Comp *c, void *arg, Home *changed, int nchanged, Home *items, int nitems);
static void wants_unroll(Comp *c, void *arg);

/* Gives every variable that `compile_region` may change a home register (those without one
 * in homes yet), by running it once as a dry run. Emits the moves of the current values into
 * the homes. Returns whether a new home replaced a number known when compiling while the dry
 * run decided a condition on such numbers: a loop's next iteration sees the home only at run
 * time, so the condition may not be decided there (compile_loop runs it again). A loop's
 * region (grown not NULL) also opens the tensor arrays it grows, listed in *grown for ca_close. */
static bool prepare_homes(Comp *c, void (*compile_region)(Comp *, void *), void *arg, Home **homes, int *nhomes,
                          Grown **grown, int *ngrown) {
    /* each nested region is compiled twice (dry run, then for real): keep the depth bounded */
    if (c->branch_depth > 10) {
        cc_unsupported(c, "loops and run-time branches nested more than 10 deep");
        return false;
    }
    bool refold = false;
    int decided = c->decided;
    Snap s = snapshot(c);
    Loop *saved_loop = c->loop;
    bool returned = c->ictx && c->ictx->returned;
    /* the dry run's break/continue jumps are rolled back with its code: forget them too */
    int nbreaks = c->loop ? c->loop->nbreaks : 0, nconts = c->loop ? c->loop->nconts : 0;
    compile_region(c, arg);
    if (c->ictx) c->ictx->returned = returned;
    if (saved_loop) {
        saved_loop->nbreaks = nbreaks;
        saved_loop->nconts = nconts;
    }
    Home *changed = NULL, *items = NULL;
    AStruct **hosts = NULL;
    int nchanged = 0, nitems = 0, nhosts = 0;
    if (!c->failed) changed_since(c, &s, &changed, &nchanged);
    uint64_t stop_deps = 0;
    int trips = compile_region == loop_body_once ? loop_trips(c, arg, &stop_deps) : -1;
    if (!c->failed) changed_items(c, &s, &items, &nitems, &hosts, &nhosts, trips, grown, ngrown);
    bool failed = c->failed;
    c->loop = saved_loop;
    rollback(c, &s);
    for (int i = 0; i < nhosts && !failed; i++) cc_host_list(c, hosts[i]);
    mem_free(hosts);
    if (failed) {
        mem_free(changed);
        mem_free(items);
        if (compile_region == loop_body_once) wants_unroll(c, arg);
        return false;
    }
    if (compile_region == loop_body_once && wants_peel(c, arg, changed, nchanged, items, nitems)) {
        mem_free(changed);   /* nothing emitted: compile_loop peels the first iteration */
        mem_free(items);
        return false;
    }
    bool again = false;
    if (grown && *ngrown && stop_deps) {   /* the arrays' length rests on the stop's value */
        cc_guard_deps(c, stop_deps);
        cslice_mark_stop_guards(c, stop_deps);
    }
    for (int i = 0; grown && i < *ngrown && !c->failed; i++)
        again |= ca_open(c, (*grown)[i].st, (*grown)[i].n0, trips * (*grown)[i].per, &(*grown)[i].first);
    if (again && !c->failed) {   /* the tensor arrays' hidden variables (grad) need homes */
        mem_free(changed);
        mem_free(items);
        return prepare_homes(c, compile_region, arg, homes, nhomes, NULL, NULL);
    }
    for (int i = 0; i < nitems && !c->failed; i++) refold |= home_item(c, &items[i], homes, nhomes);
    mem_free(items);
    if (c->failed) { mem_free(changed); return false; }
    for (int i = 0; i < nchanged; i++) {
        AVal home;
        if (has_home(*homes, *nhomes, changed[i].key, NULL, 0)) continue;
        Binding *b = cc_env_find(c, changed[i].key);
        if (b && b->v.poison) {
            cc_unsupported(c, "variable '%s', first bound to a list or dict inside a run-time branch or a loop that may "
                           "not run, changes again", changed[i].name);
            break;
        }
        if (b && b->v.kind == AV_NONE) b = NULL;   /* unbound again (a comprehension's variable) */
        if (!b) b = cc_input_find(c, changed[i].key);
        if (!b && has_value_outside(c, changed[i].key)) {   /* bound before, not read yet */
            cc_read_key(c, changed[i].key, changed[i].name);
            if (c->failed) break;
            b = cc_input_find(c, changed[i].key);
        }
        const AVal *shape_src = b ? &b->v : &changed[i].home;
        bool made = make_home(c, shape_src, &changed[i].home, &home);
        /* a list or dict first bound in a loop that runs: a home of its structure, so that
         * after the loop its items are the last iteration's, not registers (another variable's
         * home) the moves at the iteration's end overwrote */
        if (!made && !b && trips > 0 && (shape_src->kind == AV_LIST || shape_src->kind == AV_DICT))
            made = fresh_struct_home(c, shape_src, &home);
        if (!made) {
            if (b && !same_av(&b->v, &changed[i].home)) {
                cc_unsupported(c, "variable '%s' changes its value inside a loop or run-time branch", changed[i].name);
                break;
            }
            /* first bound in the region to a value without a home (a list, a dict): after a
             * run-time branch, or a loop that may not run, it may be unbound, or hold what the
             * side that did not run bound, which no register tells. It is poisoned there: code
             * that reads it, or writes it back, runs eagerly (cc_read_key, collect_outputs).
             * cflow's hidden variables check their paths themselves. */
            if (!b && trips <= 0 && changed[i].name[0] != '<') {
                *homes = mem_realloc(*homes, sizeof(Home) * (size_t)(*nhomes + 1));
                (*homes)[*nhomes] = (Home){ changed[i].key, { .kind = AV_NONE, .poison = true, .reg = -1 },
                                            changed[i].name, NULL, 0 };
                (*nhomes)++;
            }
            continue;
        }
        if (!b || b->v.unset) {   /* the region may leave it unbound, as eager code would */
            home.unset = cc_new_num(c, true) + 1;
            if (!b) {
                AVal zero = cc_bool_const(false);
                int r = cc_num_reg(c, &zero);
                Ins *in = cc_emit(c, I_NMOVE);
                in->dst = home.unset - 1;
                in->a = r;
            }
        }
        if (b) refold |= known_number(&b->v);
        if (b) move_into(c, &home, b->v, changed[i].name);
        cc_env_set(c, changed[i].key, home, changed[i].name, true);   /* written back after the region */
        *homes = mem_realloc(*homes, sizeof(Home) * (size_t)(*nhomes + 1));
        (*homes)[*nhomes] = (Home){ changed[i].key, home, changed[i].name, NULL, 0 };
        (*nhomes)++;
    }
    mem_free(changed);
    return refold && decided != c->decided && !c->failed;
}

/* The value home h is about to take (NULL: the variable is unbound here). */
static const AVal *home_source(Comp *c, const Home *h) {
    if (h->st) return &h->st->items[h->slot];
    Binding *b = cc_env_find(c, h->key);
    return b ? &b->v : NULL;
}

/* Whether moving s into home h (a list's or dict's item by item) overwrites the register (or
 * bound flag) of v. */
static bool move_overwrites(const AVal *h, const AVal *s, const AVal *v) {
    if ((h->kind == AV_LIST || h->kind == AV_DICT) && h->st->is_home && s->kind == h->kind && s->st != h->st) {
        for (int k = 0; k < h->st->n && k < s->st->n; k++)
            if (move_overwrites(&h->st->items[k], &s->st->items[k], v)) return true;
        return false;
    }
    if (h->kind != v->kind) return false;
    if (s->kind == h->kind && s->reg == h->reg) return false;   /* its move is a no-op */
    return h->reg == v->reg || (v->unset && h->unset == v->unset);
}

/* Whether a move into one of homes[0..i) overwrites the register (or bound flag) of v. */
static bool overwritten_before(Comp *c, const Home *homes, int i, const AVal *v) {
    for (int j = 0; j < i; j++) {
        const AVal *s = home_source(c, &homes[j]);
        if (s && move_overwrites(&homes[j].home, s, v)) return true;
    }
    return false;
}

/* A copy of v in a fresh register, read before the homes are written. */
static AVal copy_to_temp(Comp *c, AVal v, const char *name) {
    AVal t = v.kind == AV_TENSOR ? cc_tensor_av(c, v.dtype, &v.shape)
                                 : (AVal){ .kind = AV_NUM, .is_bool = v.is_bool, .reg = cc_new_num(c, v.is_bool) };
    if (v.kind == AV_TENSOR && v.unset) t.unset = cc_new_num(c, true) + 1;
    move_into(c, &t, v, name);
    return t;
}

/* v, with each tensor or number in it that a move into homes[0..i) overwrites copied first. */
static AVal protect(Comp *c, const Home *homes, int i, AVal v, const char *name) {
    if ((v.kind == AV_TENSOR || v.kind == AV_NUM) && v.reg >= 0 && overwritten_before(c, homes, i, &v))
        return copy_to_temp(c, v, name);
    if (v.kind != AV_LIST && v.kind != AV_DICT) return v;
    AStruct *st = NULL;
    for (int k = 0; k < v.st->n && !c->failed; k++) {
        AVal item = protect(c, homes, i, v.st->items[k], name);
        if (!st && item.kind == v.st->items[k].kind && item.reg == v.st->items[k].reg && item.st == v.st->items[k].st) continue;
        if (!st) {   /* a copy of the structure, its items so far as they were */
            st = cc_astruct_new(c, v.kind == AV_DICT);
            for (int j = 0; j < k; j++) cc_astruct_push(c, st, v.kind == AV_DICT ? v.st->keys[j] : NULL, v.st->items[j]);
        }
        cc_astruct_push(c, st, v.kind == AV_DICT ? v.st->keys[k] : NULL, item);
    }
    if (st) v.st = st;
    return v;
}

/* The moves into the homes at the end of a loop body or a branch side are one parallel
 * assignment: after `x = x` made x's home its value, `t = x; x = x * 2` leaves t holding
 * x's home register, which the move into x's home would overwrite before t's move reads it.
 * Such a value is copied to a fresh register before any home is written. */
static void home_moves(Comp *c, Home *homes, int n) {
    AVal *vals = mem_alloc(sizeof(AVal) * (size_t)(n + 1));
    bool *has = mem_alloc(sizeof(bool) * (size_t)(n + 1));
    for (int i = 0; i < n && !c->failed; i++) {
        const AVal *v = home_source(c, &homes[i]);
        has[i] = v != NULL;
        if (!v) continue;
        vals[i] = protect(c, homes, i, *v, homes[i].name);
    }
    for (int i = 0; i < n && !c->failed; i++)   /* a poisoned variable (prepare_homes) has no register */
        if (has[i] && !homes[i].home.poison) move_into(c, &homes[i].home, vals[i], homes[i].name);
    mem_free(vals);
    mem_free(has);
}

/* Registers of the homes (-1: not a register) and, with now, of the values they are about
 * to take (what home_moves moves), for the static gradient's loop record (vm/compile/cgrad.c). */
static int *home_regs(Comp *c, Home *homes, int n, bool now) {
    int *r = mem_alloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0; i < n; i++) {
        const AVal *v = &homes[i].home;
        if (now) {
            Binding *b = homes[i].st ? NULL : cc_env_find(c, homes[i].key);
            v = homes[i].st ? &homes[i].st->items[homes[i].slot] : b ? &b->v : NULL;
        }
        r[i] = v && (v->kind == AV_TENSOR || v->kind == AV_NUM) ? v->reg : -1;
    }
    return r;
}

static void restore_homes(Comp *c, Home *homes, int n) {
    for (int i = 0; i < n; i++) {
        if (homes[i].st) {
            cc_undo_save(c, homes[i].st);
            homes[i].st->items[homes[i].slot] = homes[i].home;
        } else {
            cc_env_set(c, homes[i].key, homes[i].home, homes[i].name, true);
        }
    }
}

static void patch(Comp *c, int at, int target) { c->g->code[at].aux = target; }

typedef struct {
    Node *n;          /* the loop statement */
    double start, step;
    bool counted;     /* for over range or a tensor */
    AVal counter, stop;
    AVal iter;        /* tensor iterated over (for t in tensor) */
    bool jumps;       /* its body breaks or continues (found by the dry run) */
    int flow;         /* break/continue set flags (a gradient is recorded): their id, else 0 */
    bool may_peel;    /* a number that the body turns into a tensor may be peeled (below) */
    const char *to_tensor;   /* the dry run found one: its name */
    bool to_unroll;   /* the dry run found a list it grows that copies of the body can build */
    CProgress *bar;   /* for over progress(...): the bar it draws (cprogress.c), else NULL */
} LoopArg;

/* A variable that was a number before the region and is a tensor after one run of it (an
 * accumulator `loss = 0.0` that `loss = loss + mean(...)` turns into a 0-d tensor), or NULL. */
static const char *number_to_tensor(Comp *c, Home *changed, int n) {
    for (int i = 0; i < n; i++) {
        Binding *b = cc_env_find(c, changed[i].key);
        if (!b) b = cc_input_find(c, changed[i].key);
        if (b && b->v.kind == AV_NUM && !b->v.unset && changed[i].home.kind == AV_TENSOR) return changed[i].name;
    }
    return NULL;
}

/* The same for list and dict items (st->items holds the value before the region). */
static const char *item_number_to_tensor(Home *items, int n) {
    for (int i = 0; i < n; i++)
        if (items[i].st->items[items[i].slot].kind == AV_NUM && items[i].home.kind == AV_TENSOR) return items[i].name;
    return NULL;
}

/* Whether a counted loop's dry run turned a number into a tensor (la->to_tensor names it):
 * then compile_loop peels the first iteration instead of giving the number a home. */
/* A range loop of known length, at most UNROLL_RETRY_MAX trips, whose dry run met something
 * the compiler does not handle with a run-time counter: copies of the body, each with its
 * counter known, as eager code runs them. So a list grown with tensors of several shapes, or
 * of a shape known only at run time (the clamped last chunk of `for s in range(0, n, bs) {
 * push(outs, f(X[s:s + bs])) }`), gets each item's own shape, and `arange(i + 1)` its size.
 * The failure is forgotten and loop_from_counter unrolls (nothing was emitted); what the
 * copies cannot compile either fails there with its reason. Errors are not retried. */
#define UNROLL_RETRY_MAX 64
static bool unrolled_range(Comp *c, LoopArg *la);

static void wants_unroll(Comp *c, void *arg) {
    LoopArg *la = arg;
    if (c->status != COMPILE_UNSUPPORTED || !la->may_peel || la->iter.kind == AV_TENSOR || !la->stop.known ||
        (la->stop.deps && c->I->compile_fixed_stops) || (la->stop.num - la->start) / la->step > UNROLL_RETRY_MAX)
        return;
    c->failed = false;
    c->status = COMPILE_OK;
    c->why[0] = '\0';
    la->to_unroll = true;
    if (la->stop.deps) {   /* the copies' count rests on the stop's value: a guard, as for tensor arrays */
        cc_guard_deps(c, la->stop.deps);
        cslice_mark_stop_guards(c, la->stop.deps);
    }
}

static bool wants_peel(Comp *c, void *arg, Home *changed, int nchanged, Home *items, int nitems) {
    LoopArg *la = arg;
    if (!la->may_peel) return false;
    la->to_tensor = number_to_tensor(c, changed, nchanged);
    if (!la->to_tensor) la->to_tensor = item_number_to_tensor(items, nitems);
    return la->to_tensor != NULL;
}

/* How many times a loop runs, when that is known when compiling (a counted loop whose stop
 * is a constant, without break or continue), else -1: the rows of its tensor arrays. */
static int loop_trips(Comp *c, void *arg, uint64_t *deps) {
    LoopArg *la = arg;
    /* a stop computed from the script's numbers: they become guards when a tensor array needs
     * its length, as a minibatch slice's proof does (vm/compile/cslice.c), unless the block
     * recompiled for them twice already */
    *deps = la->stop.deps;
    if (!la->counted || la->jumps || !la->stop.known || (la->stop.deps && c->I->compile_fixed_stops)) return -1;
    double n = ceil((la->stop.num - la->start) / la->step);
    return n <= 0 ? 0 : n > 1e9 ? -1 : (int)n;
}

/* counter += step: the next iteration of a counted loop. */
static void step_counter(Comp *c, LoopArg *la) {
    AVal step = cc_num_const(la->step);
    int sr = cc_num_reg(c, &step);
    Ins *inc = cc_emit(c, I_NBIN);
    inc->dst = la->counter.reg;
    inc->a = la->counter.reg;
    inc->b = sr;
    inc->aux = OP_ADD;
}

/* The loop variable for this iteration: the counter, or row `counter` of the tensor. */
static AVal loop_var(Comp *c, LoopArg *la) {
    AVal i = la->counter;
    if (la->iter.kind != AV_TENSOR) return i;
    if (c->tape && cgrad_tracked(c, la->iter.reg))
        return cc_unsupported(c, "a loop over the rows of a tensor being differentiated is not compiled yet");
    return cc_index_row(c, la->iter, 0, i.reg);
}

static void loop_body_once(Comp *c, void *arg) {
    LoopArg *la = arg;
    Loop lp = { c->loop, NULL, 0, NULL, 0, NULL, 0, la->flow };
    c->loop = &lp;
    c->branch_depth++;
    cflow_body_enter(c, la->flow);
    Node *n = la->n;
    if (la->counted) cc_env_set(c, cc_name_key(c, n->a), loop_var(c, la), n->a->str, true);
    if (n->kind == AST_WHILE) {
        int decided = c->decided;   /* the body runs here whatever the condition: no refold for it */
        AVal cond = cc_cond(c, n->a);
        if (!c->failed) {
            int reg;
            cc_truth(c, cond, &reg, n->a->loc);
        }
        c->decided = decided;
    }
    if (!c->failed) cc_block(c, n->kind == AST_FOR ? n->c : n->b);
    if (c->ictx) c->ictx->returned = false;   /* a return in the body: the loop may not have run */
    c->branch_depth--;
    c->loop = lp.outer;
    la->jumps |= lp.nbreaks + lp.nconts > 0;
    mem_free(lp.breaks);
    mem_free(lp.conts);
}

static void loop_from_counter(Comp *c, LoopArg *la);

/* The first iteration of a counted loop that turns the number variable `name` into a tensor,
 * compiled on its own (the body sees the number, as eagerly, and runs the same op on it),
 * then the loop over the remaining iterations, where the variable is a tensor throughout.
 * Whether the loop runs at all decides the variable's kind after it: the trip count is
 * fixed when compiling (the stop's numbers become guards). */
static void peel_first_iteration(Comp *c, LoopArg *la, const char *name) {
    Node *n = la->n;
    double stop;
    char what[200];
    snprintf(what, sizeof what, "the stop of a loop that turns '%s' from a number into a tensor", name);
    c->loc = n->loc;
    if (!cc_need_const(c, &la->stop, &stop, what)) return;
    if (la->step > 0 ? la->start >= stop : la->start <= stop) {   /* it never runs */
        if (la->bar) {
            cprogress_begin(c, la->bar, la->start, la->stop, la->step);
            cprogress_end(c, la->bar);
        }
        return;
    }
    if (la->bar) cprogress_begin(c, la->bar, la->start, la->stop, la->step);
    /* straight-line code at the loop's own depth (a static gradient records it as such);
     * break/continue jump (no flags) and are refused below */
    Loop lp = { c->loop, NULL, 0, NULL, 0, NULL, 0, 0 };
    c->loop = &lp;
    /* a range's first value is its known start; a tensor's first row is read at the counter */
    AVal first = la->iter.kind == AV_TENSOR ? loop_var(c, la) : cc_num_const(la->start);
    if (!c->failed) cc_env_set(c, cc_name_key(c, n->a), first, n->a->str, true);
    if (!c->failed) cc_block(c, n->c);
    c->loop = lp.outer;
    bool jumps = lp.nbreaks || lp.nconts;
    mem_free(lp.breaks);
    mem_free(lp.conts);
    if (c->failed) return;
    if (jumps) {
        cc_unsupported(c, "break/continue in a loop that turns '%s' from a number into a tensor", name);
        return;
    }
    if (c->ictx && c->ictx->returned) return;   /* the first iteration returned */
    if (la->bar) cprogress_tick(c, la->bar);
    step_counter(c, la);
    la->start += la->step;   /* the rest's trips (tensor arrays: loop_trips) */
    la->may_peel = false;
    la->to_tensor = NULL;
    loop_from_counter(c, la);
}

/* while cond { } and for i in range(...) { }: a run-time loop over home registers. */
static void compile_loop(Comp *c, LoopArg *la) {
    if (la->counted) {
        /* the counter is a run-time register from the start */
        la->counter = (AVal){ .kind = AV_NUM, .reg = cc_new_num(c, false) };
        if (la->iter.kind != AV_TENSOR)   /* the values it takes, for slices (vm/compile/cslice.c) */
            cslice_counter(c, &la->counter, la->start, la->step, &la->stop, la->n->b->kids[la->n->b->n == 1 ? 0 : 1]);
        AVal st = cc_num_const(la->start);
        int start = cc_num_reg(c, &st);   /* may emit: before cc_emit, which may move the code */
        Ins *in = cc_emit(c, I_NMOVE);
        in->dst = la->counter.reg;
        in->a = start;
    }
    la->may_peel = la->counted;
    loop_from_counter(c, la);
}

/* The loop from the counter's current value (a counted loop) or its condition (while). */
static void loop_from_counter(Comp *c, LoopArg *la) {
    Node *n = la->n;
    Home *homes = NULL;
    int nhomes = 0;
    Grown *grown = NULL;
    int ngrown = 0;
    if (c->tape) {   /* break/continue as flags: the gradient replays each iteration's path */
        la->flow = ++c->next_inline;
        cflow_loop_enter(c, la->flow);
    }
    /* again while a dry run turned known numbers into homes: `n = 0; while n < 3 { if n > 0
     * { s = ... } n = n + 1 }` changes s only from the second iteration on */
    bool again = prepare_homes(c, loop_body_once, la, &homes, &nhomes, &grown, &ngrown);
    while (again && !c->failed) again = prepare_homes(c, loop_body_once, la, &homes, &nhomes, NULL, NULL);
    if (la->to_unroll && la->bar) cc_unsupported(c, "a progress() loop whose body must be copied");
    if (la->to_unroll) {
        mem_free(homes);
        mem_free(grown);
        if (!c->failed) unrolled_range(c, la);
        return;
    }
    if (la->to_tensor && !c->failed) {
        mem_free(homes);
        mem_free(grown);
        peel_first_iteration(c, la, la->to_tensor);
        return;
    }
    if (c->failed) { mem_free(homes); mem_free(grown); return; }
    if (c->tape) {   /* a loop inside a function being differentiated */
        int *hr = home_regs(c, homes, nhomes, false);
        cgrad_loop_begin(c, hr, nhomes, la->counted ? la->counter.reg : -1);
        mem_free(hr);
    }
    if (la->bar) cprogress_begin(c, la->bar, la->start, la->stop, la->step);
    int top = c->g->ncode;
    int exit_jump = -1;
    bool forever = false;   /* `while true`: it ends only by break or return */
    c->loc = n->loc;
    int flow_exits[2], nflow_exits = cflow_loop_exits(c, homes, nhomes, la->flow, flow_exits);
    if (la->counted) {
        AVal i = la->counter;
        int stop = cc_num_reg(c, &la->stop);
        int more = cc_new_num(c, true);
        Ins *cmp = cc_emit(c, I_NBIN);
        cmp->dst = more;
        cmp->a = i.reg;
        cmp->b = stop;
        cmp->aux = la->step > 0 ? OP_LT : OP_GT;
        Ins *jf = cc_emit(c, I_JUMPF);   /* may move the code: cmp is stale from here */
        jf->a = more;
        exit_jump = (int)(jf - c->g->code);
        cc_env_set(c, cc_name_key(c, n->a), loop_var(c, la), n->a->str, true);
    } else {
        AVal cond = cc_cond(c, n->a);
        if (c->failed) { mem_free(homes); mem_free(grown); return; }
        int reg, t = cc_truth(c, cond, &reg, n->a->loc);
        if (c->failed) { mem_free(homes); mem_free(grown); return; }
        if (t == 0) {   /* (a while loop: it grows no tensor array) */
            for (int i = 0; i < nflow_exits; i++) patch(c, flow_exits[i], c->g->ncode);
            restore_homes(c, homes, nhomes);
            mem_free(homes);
            mem_free(grown);
            if (c->tape) cgrad_loop_end(c);
            return;
        }
        if (t < 0) {
            Ins *jf = cc_emit(c, I_JUMPF);
            jf->a = reg;
            exit_jump = (int)(jf - c->g->code);
        }
        forever = t > 0;
    }
    Loop lp = { c->loop, homes, nhomes, NULL, 0, NULL, 0, la->flow };
    c->loop = &lp;
    c->branch_depth++;
    cflow_body_enter(c, la->flow);
    cc_block(c, n->kind == AST_FOR ? n->c : n->b);
    if (c->ictx) c->ictx->returned = false;
    if (c->tape && !c->failed) {
        int *nr = home_regs(c, homes, nhomes, true);
        cgrad_loop_body_end(c, nr, lp.nbreaks + lp.nconts > 0);
        mem_free(nr);
    }
    c->branch_depth--;
    c->loop = lp.outer;
    home_moves(c, homes, nhomes);
    int cont_target = c->g->ncode;   /* `continue` made its own moves (jump_out) */
    if (la->bar && !c->failed) cprogress_tick(c, la->bar);
    if (la->counted && !c->failed) step_counter(c, la);
    Ins *back = cc_emit(c, I_JUMP);
    back->aux = top;
    int end = c->g->ncode;
    if (la->bar && !c->failed) cprogress_end(c, la->bar);   /* where the loop exits, breaks too */
    if (exit_jump >= 0) patch(c, exit_jump, end);
    for (int i = 0; i < nflow_exits; i++) patch(c, flow_exits[i], end);
    for (int i = 0; i < lp.nbreaks; i++) patch(c, lp.breaks[i], end);
    for (int i = 0; i < lp.nconts; i++) patch(c, lp.conts[i], cont_target);
    mem_free(lp.breaks);
    mem_free(lp.conts);
    restore_homes(c, homes, nhomes);
    /* a `while true` without break is left only by a return: nothing after it runs */
    if (forever && !lp.nbreaks && cflow_left_by_return(c, homes, nhomes, la->flow)) c->ictx->returned = true;
    mem_free(homes);
    for (int i = 0; i < ngrown; i++) ca_close(c, grown[i].st);
    mem_free(grown);
    if (c->tape) cgrad_loop_end(c);
}

/* A run-time stop of a range beyond +-2**53 is an error when the loop starts (as eagerly):
 * the counter would stop moving there. */
static void check_range_stop(Comp *c, AVal *stop) {
    int r = cc_num_reg(c, stop);
    AVal hi = cc_num_const(RANGE_MAX_BOUND), lo = cc_num_const(-RANGE_MAX_BOUND);
    int rhi = cc_num_reg(c, &hi), rlo = cc_num_reg(c, &lo);
    int ok[2], ops[2] = { OP_LE, OP_GE }, lim[2] = { rhi, rlo };
    for (int k = 0; k < 2; k++) {
        ok[k] = cc_new_num(c, true);
        Ins *in = cc_emit(c, I_NBIN);
        in->dst = ok[k];
        in->a = r;
        in->b = lim[k];
        in->aux = ops[k];
    }
    Ins *both = cc_emit(c, I_NBIN);
    both->dst = cc_new_num(c, true);
    both->a = ok[0];
    both->b = ok[1];
    both->aux = OP_MUL;
    int cond = both->dst;
    Ins *in = cc_emit(c, I_ASSERT);
    in->a = cond;
    in->aux = 1;   /* key is the whole message */
    in->key = mem_strndup(RANGE_BOUND_MSG, strlen(RANGE_BOUND_MSG));
}

typedef struct {
    Node *n;          /* for x in list { } */
    AVal item;
} ItemArg;

/* One copy of the body of a loop over a known list or dict, for one item. */
static void unrolled_copy(Comp *c, void *arg) {
    ItemArg *ia = arg;
    Node *n = ia->n;
    cc_env_set(c, cc_name_key(c, n->a), ia->item, n->a->str, true);
    Loop lp = { c->loop, NULL, 0, NULL, 0, NULL, 0, 0 };
    c->loop = &lp;
    cc_block(c, n->c);
    c->loop = lp.outer;
    bool jumps = lp.nbreaks || lp.nconts;
    mem_free(lp.breaks);
    mem_free(lp.conts);
    if (jumps) cc_unsupported(c, "break/continue in a loop compiled as copies of its body (over a list, or under grad(grad(f)))");
}

/* Copies of the body, one per item of a list or dict, or number of a range; after a copy that
 * may have returned, the later ones run only where it did not (vm/compile/cflow.c). */
static void unrolled(Comp *c, Node *n, const AVal *items, int count) {
    FlowWatch w = { .nlive = 0 };
    for (int i = 0; i < count && !c->failed; i++) {
        ItemArg ia = { n, items[i] };
        cflow_watch(c, &w);
        cflow_run(c, &w, (Side){ unrolled_copy, &ia });
        if (!cflow_after(c, &w)) return;
    }
}

/* grad(grad(f)) through a loop of f: the inner backward's loop cannot be recorded on the
 * enclosing tape, so a range whose length is known is compiled as copies of the body (the
 * ops eager code runs, in its order). false: too long; it stays a loop. */
static bool unrolled_range(Comp *c, LoopArg *la) {
    double span = (la->stop.num - la->start) / la->step;
    if (span > 256) return false;
    int count = span > 0 ? (int)ceil(span) : 0;
    AVal *items = mem_alloc(sizeof(AVal) * (size_t)(count + 1));
    for (int i = 0; i < count; i++) items[i] = cc_num_const(la->start + la->step * i);
    unrolled(c, la->n, items, count);
    mem_free(items);
    return true;
}

/* The list `NAME` names, when it is bound now (in the block, or outside it: then read as an
 * input, which the body does anyway), else NULL. */
static AStruct *list_named(Comp *c, Node *name) {
    VarKey k = cc_name_key(c, name);
    Binding *b = cc_env_find(c, k);
    if (!b) b = cc_input_find(c, k);
    if (b) return b->v.kind == AV_LIST ? b->v.st : NULL;
    Value v;
    InputSrc src;
    if (!cc_key_source(c, k, &v, &src) || v.type != VAL_LIST) return NULL;
    AVal r = cc_read_key(c, k, name->str);
    return r.kind == AV_LIST ? r.st : NULL;
}

/* Whether code n reads LIST[counter] of a list whose items a run-time index cannot choose
 * between (tensors of different shapes: `layers[i]` of a network's layers). A range loop of
 * known length over such a list compiles as copies of its body, as `for layer in layers`
 * does, each copy with its item. */
static bool reads_mixed_list(Comp *c, const Node *n, const char *counter) {
    if (!n || n->kind == AST_FN || c->failed) return false;
    if (n->kind == AST_INDEX && n->n == 1 && n->kids[0]->kind == AST_NAME && strcmp(n->kids[0]->str, counter) == 0 &&
        n->a->kind == AST_NAME) {
        AStruct *st = list_named(c, n->a);
        if (st && !ca_selectable(c, st)) return true;
    }
    if (reads_mixed_list(c, n->a, counter) || reads_mixed_list(c, n->b, counter) || reads_mixed_list(c, n->c, counter))
        return true;
    for (int i = 0; i < n->n; i++)
        if (reads_mixed_list(c, n->kids[i], counter)) return true;
    for (int i = 0; i < n->nk; i++)
        if (reads_mixed_list(c, n->kw[i], counter)) return true;
    return false;
}

void cc_for_stmt(Comp *c, Node *n) {
    Node *it = n->b;
    CProgress *bar = c->bar;   /* set by cprogress_for for this loop alone: not its arguments' or body's */
    c->bar = NULL;
    if (!bar && cprogress_is_call(c, it)) { cprogress_for(c, n); return; }
    if (c->failed) return;
    LoopArg la = { n, 0, 1, true, FAILV, FAILV, FAILV, false, 0, false, NULL, false, bar };
    if (it->kind == AST_CALL && it->a->kind == AST_NAME && it->nk == 0 && it->n >= 1 && it->n <= 3) {
        AVal fn = cc_expr(c, it->a);
        if (c->failed) return;
        if (fn.kind == AV_CONST && fn.k.type == VAL_FUNC && fn.k.as.o == (Obj *)c->I->range_builtin) {
            AVal a[3];
            for (int i = 0; i < it->n; i++) {
                a[i] = cc_expr(c, it->kids[i]);
                if (c->failed) return;
                if (a[i].kind != AV_NUM) {
                    char msg[160];
                    const char *type = a[i].kind == AV_CONST ? val_type_name(a[i].k) : a[i].kind == AV_TENSOR ? "tensor"
                                       : a[i].kind == AV_LIST ? "list" : a[i].kind == AV_DICT ? "dict" : "function";
                    range_arg_message(msg, sizeof msg, it->n, i, type, 0);
                    cc_error_at(c, it->kids[i]->loc, "%s", msg);
                    return;
                }
                if (a[i].known && fabs(a[i].num) > RANGE_MAX_BOUND) { cc_error_at(c, it->kids[i]->loc, RANGE_BOUND_MSG); return; }
            }
            c->loc = it->loc;
            if (it->n == 1) { la.start = 0; la.stop = a[0]; }
            else {
                double s0;
                if (!cc_need_const(c, &a[0], &s0, "the start of a range in static code")) return;
                la.start = s0;
                la.stop = a[1];
            }
            if (it->n == 3 && !cc_need_const(c, &a[2], &la.step, "the step of a range")) return;
            /* integers in i64, as eagerly (range_args): a fraction or nan was looped over here */
            int64_t unused;
            for (int i = 0; i < it->n; i++) {
                bool is_stop = i == (it->n == 1 ? 0 : 1);
                if (is_stop && !la.stop.known) continue;   /* a run-time stop only bounds the counter */
                double x = is_stop ? la.stop.num : i == 0 ? la.start : la.step;
                if (!num_to_i64(x, &unused)) {
                    char msg[160];
                    range_arg_message(msg, sizeof msg, it->n, i, NULL, x);
                    cc_error_at(c, it->kids[i]->loc, "%s", msg);
                    return;
                }
            }
            if (la.step == 0) { cc_error_at(c, it->loc, "range() step must not be zero"); return; }
            if (!la.stop.known || la.stop.deps) {   /* may change at run time: located as eagerly */
                c->loc = it->kids[it->n == 1 ? 0 : 1]->loc;
                check_range_stop(c, &la.stop);
                c->loc = it->loc;
            }
            if (la.stop.known && !la.stop.deps && (cgrad_nested(c) || reads_mixed_list(c, n->c, n->a->str))) {
                if (bar) { cc_unsupported(c, "a progress() loop whose body must be copied"); return; }
                if (unrolled_range(c, &la)) return;
            }
            if (c->failed) return;
            compile_loop(c, &la);
            return;
        }
    }
    AVal v = cc_expr(c, it);
    if (c->failed) return;
    if (bar && v.kind != AV_TENSOR) { cc_unsupported(c, "a progress() loop over a list, dict or string (its body is copied)"); return; }
    if (v.kind == AV_TENSOR) {
        if (v.shape.ndim == 0) { cc_error_atk(c, ERRK_TYPE, it->loc, "cannot iterate over a 0-d tensor"); return; }
        if (v.shape.d[0] == SHAPE_RT) {
            cc_unsupported(c, "a loop over the rows of a value whose length is known only at run time");
            return;
        }
        la.iter = v;
        la.stop = cc_num_const((double)v.shape.d[0]);
        compile_loop(c, &la);
        return;
    }
    if ((v.kind == AV_LIST || v.kind == AV_DICT) && ca_is_open(v.st)) { ca_read_open(c); return; }
    if (v.kind == AV_LIST || v.kind == AV_DICT) {
        /* the structure is known: one copy of the body per item */
        cc_struct_n(c, v.st);
        AVal *items = mem_alloc(sizeof(AVal) * (size_t)(v.st->n + 1));
        for (int i = 0; i < v.st->n; i++)
            items[i] = v.kind == AV_LIST ? v.st->items[i] : cc_const_av(cc_keep_value(c, val_cstr(v.st->keys[i])));
        unrolled(c, n, items, v.st->n);
        mem_free(items);
        return;
    }
    if (v.kind == AV_CONST && v.k.type == VAL_STR) {
        /* a known string (a guard when it is an input): one copy of the body per character,
         * each the string indexed as eagerly (code points) */
        int count = AS_STR(v.k)->ncp;
        AVal *items = mem_alloc(sizeof(AVal) * (size_t)(count + 1));
        for (int i = 0; i < count && !c->failed; i++) {
            Value idx = NUM_VAL((double)i);
            items[i] = cc_folded(c, value_index(c->I, v.k, &idx, 1), n->loc);
        }
        if (!c->failed) unrolled(c, n, items, count);
        mem_free(items);
        return;
    }
    const char *type = v.kind == AV_CONST ? val_type_name(v.k) : v.kind == AV_CLOSURE ? "function"
                       : v.kind == AV_NUM ? (v.is_bool ? "bool" : "number") : NULL;
    if (type) cc_error_atk(c, ERRK_TYPE, it->loc, "cannot iterate over a %s", type);
    else cc_unsupported(c, "for over this kind of value");
}

typedef struct {
    Side side[2];          /* then, else */
    bool else_returned;    /* the else side is a path that has returned (a guard's) */
} BranchArg;

static void set_returned(Comp *c, bool r) {
    if (c->ictx) c->ictx->returned = r;
}

/* One side of a run-time branch; whether it surely returned (the path after the branch did
 * only if both sides did). */
static bool branch_side(Comp *c, BranchArg *ba, int which) {
    set_returned(c, false);
    if (ba->side[which].fn) ba->side[which].fn(c, ba->side[which].arg);
    bool r = c->ictx && c->ictx->returned;
    set_returned(c, false);
    return r || (which == 1 && ba->else_returned);
}

static void both_branches(Comp *c, void *arg) {
    BranchArg *ba = arg;
    Snap s = snapshot(c);
    c->branch_depth++;
    branch_side(c, ba, 0);
    c->branch_depth--;
    Home *changed = NULL, *items = NULL;
    AStruct **hosts = NULL;
    int n = 0, nitems = 0, nhosts = 0;
    if (!c->failed) changed_since(c, &s, &changed, &n);
    if (!c->failed) changed_items(c, &s, &items, &nitems, &hosts, &nhosts, -1, NULL, NULL);
    /* keep then-branch results visible to the caller's diff, then run else from the start */
    rollback(c, &s);
    /* a list the then-branch grows: a host list, which the caller's diff sees (changed_items) */
    for (int i = 0; i < nhosts && !c->failed; i++) cc_host_list(c, hosts[i]);
    mem_free(hosts);
    c->branch_depth++;
    if (!c->failed) branch_side(c, ba, 1);
    c->branch_depth--;
    /* what the then-branch changed stays visible to prepare_homes' comparison; a tensor the
     * else-branch gives another size has a run-time shape there (cs_home_shape) */
    for (int i = 0; i < n; i++) {
        AVal v = changed[i].home;
        Binding *b = cc_env_find(c, changed[i].key);
        if (b) cs_home_shape(&changed[i].home, &b->v, &v.shape);
        cc_env_set(c, changed[i].key, v, changed[i].name, true);
    }
    restore_homes(c, items, nitems);
    mem_free(changed);
    mem_free(items);
}

void cc_runtime_branch(Comp *c, int cond, SrcLoc loc, Side then, Side els, bool else_returned) {
    Home *homes = NULL;
    int nhomes = 0;
    BranchArg ba = { { then, els }, else_returned };
    prepare_homes(c, both_branches, &ba, &homes, &nhomes, NULL, NULL);
    if (c->failed) { mem_free(homes); return; }
    if (c->tape) {   /* a branch inside a function being differentiated */
        int *hr = home_regs(c, homes, nhomes, false);
        int *unset = mem_alloc(sizeof(int) * (size_t)(nhomes + 1));
        for (int i = 0; i < nhomes; i++) unset[i] = homes[i].home.unset - 1;
        cgrad_branch_begin(c, hr, unset, nhomes, cond);
        mem_free(hr);
        mem_free(unset);
    }
    c->loc = loc;
    Ins *jf = cc_emit(c, I_JUMPF);
    jf->a = cond;
    int at_jf = (int)(jf - c->g->code);
    c->branch_depth++;
    bool returned = branch_side(c, &ba, 0);
    home_moves(c, homes, nhomes);
    if (c->tape) cgrad_branch_else(c);
    Ins *j = cc_emit(c, I_JUMP);
    int at_j = (int)(j - c->g->code);
    patch(c, at_jf, c->g->ncode);
    restore_homes(c, homes, nhomes);
    returned &= branch_side(c, &ba, 1);
    home_moves(c, homes, nhomes);
    c->branch_depth--;
    if (c->tape) cgrad_branch_end(c);
    patch(c, at_j, c->g->ncode);
    restore_homes(c, homes, nhomes);
    mem_free(homes);
    set_returned(c, returned);
}

static void block_side(Comp *c, void *blk) { cc_block(c, blk); }
static void stmt_side(Comp *c, void *stmt) { cc_stmt(c, stmt); }

/* ---------- `and` / `or` on run-time values ---------- */

typedef struct {
    Node *n;          /* the and/or node */
    int dst;          /* its truth */
    bool value;       /* its value is used, not only its truth: operands must be true/false */
} RhsArg;

/* The right operand, compiled where the left one did not decide: a run-time branch. */
static void and_or_rhs(Comp *c, void *arg) {
    RhsArg *ra = arg;
    c->branch_depth++;
    AVal b = ra->value ? cc_expr(c, ra->n->b) : cc_cond(c, ra->n->b);
    if (!c->failed && ra->value && !(b.kind == AV_NUM && b.is_bool))
        cc_unsupported(c, "'and'/'or' on a value known only at run time, used as a value, with an operand that is not true/false");
    int reg = -1, t = c->failed ? 0 : cc_truth(c, b, &reg, ra->n->b->loc);
    if (!c->failed) {
        if (t >= 0) {
            AVal k = cc_bool_const(t != 0);
            reg = cc_num_reg(c, &k);
        }
        Ins *in = cc_emit(c, I_NMOVE);
        in->dst = ra->dst;
        in->a = reg;
    }
    c->branch_depth--;
}

/* `a and b` / `a or b` where a's truth (register ra) is known only at run time: b is
 * evaluated only when a does not decide, as eagerly. The result is a true/false register. */
AVal cc_and_or_runtime(Comp *c, Node *n, int ra, bool value) {
    int dst = cc_new_num(c, true);
    Ins *in = cc_emit(c, I_NMOVE);
    in->dst = dst;
    in->a = ra;
    RhsArg arg = { n, dst, value };
    Home *homes = NULL;
    int nhomes = 0;
    prepare_homes(c, and_or_rhs, &arg, &homes, &nhomes, NULL, NULL);
    if (c->failed) { mem_free(homes); return FAILV; }
    int test = ra;
    if (n->kind == AST_OR) {   /* b runs when a is false */
        int nr = cc_new_num(c, true);
        in = cc_emit(c, I_NNOT);
        in->dst = nr;
        in->a = ra;
        test = nr;
    }
    in = cc_emit(c, I_JUMPF);
    in->a = test;
    int at = (int)(in - c->g->code);
    and_or_rhs(c, &arg);
    home_moves(c, homes, nhomes);
    patch(c, at, c->g->ncode);
    restore_homes(c, homes, nhomes);
    mem_free(homes);
    return c->failed ? FAILV : (AVal){ .kind = AV_NUM, .is_bool = true, .reg = dst };
}

/* A condition: like cc_expr, but `and`/`or` only need to give the right truth. */
AVal cc_cond(Comp *c, Node *n) {
    if (n->kind != AST_AND && n->kind != AST_OR) return cc_expr(c, n);
    AVal a = cc_cond(c, n->a);
    if (c->failed) return FAILV;
    int reg = -1, t = cc_truth(c, a, &reg, n->a->loc);
    if (c->failed) return FAILV;
    if (t >= 0) return ((n->kind == AST_AND) == (t != 0)) ? cc_cond(c, n->b) : a;
    return cc_and_or_runtime(c, n, reg, false);
}

static void if_stmt(Comp *c, Node *n) {
    AVal cond = cc_cond(c, n->a);
    if (c->failed) return;
    int reg, t = cc_truth(c, cond, &reg, n->a->loc);
    if (c->failed) return;
    if (t >= 0) {
        if (t) cc_block(c, n->b);
        else if (n->c) cc_stmt(c, n->c);
        return;
    }
    cc_runtime_branch(c, reg, n->loc, (Side){ block_side, n->b }, (Side){ n->c ? stmt_side : NULL, n->c }, false);
}

static void jump_out(Comp *c, Node *n, bool is_break) {
    if (!c->loop) {
        cc_error_at(c, n->loc, "'%s' cannot leave a static block", is_break ? "break" : "continue");
        return;
    }
    if (cflow_jump(c, is_break)) return;
    Loop *lp = c->loop;
    home_moves(c, lp->homes, lp->nhomes);
    Ins *j = cc_emit(c, I_JUMP);
    int at = (int)(j - c->g->code);
    if (is_break) {
        lp->breaks = mem_realloc(lp->breaks, sizeof(int) * (size_t)(lp->nbreaks + 1));
        lp->breaks[lp->nbreaks++] = at;
    } else {
        lp->conts = mem_realloc(lp->conts, sizeof(int) * (size_t)(lp->nconts + 1));
        lp->conts[lp->nconts++] = at;
    }
}

/* The compile budget counts this thread's CPU time, not the wall clock: on a loaded machine
 * the same code must still compile (or fall back) the same way. */
static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* Ctrl-C and --timeout stop compiling too: an error at the statement being compiled. */
static void compile_interrupted(Comp *c, SrcLoc loc) {
    Source *saved = c->I->cur_src;
    c->I->cur_src = c->src;
    interp_attach_loc(c->I, loc);
    c->I->cur_src = saved;
    cc_trace_inlined(c);
    c->failed = true;
    c->status = COMPILE_ERROR;
    c->err_depth = 0;   /* the program's error wherever it stopped */
}

void cc_stmt(Comp *c, Node *n) {
    if (c->failed) return;
    if (!interp_poll(c->I)) { compile_interrupted(c, n->loc); return; }
    if ((++c->nstmts & 63) == 0 && cpu_ms() > c->give_up_ms) {
        c->loc = n->loc;
        cc_unsupported(c, "compiling took more than %d ms of CPU time; the code runs eagerly", c->I->compile_budget_ms);
        return;
    }
    if (c->g->ncode > 100000) {   /* e.g. a loop over a huge list, unrolled */
        cc_unsupported(c, "more than 100000 instructions; the code runs eagerly");
        return;
    }
    if (c->ictx && c->ictx->returned) return;
    c->loc = n->loc;
    switch (n->kind) {
    case AST_EXPR: cc_expr(c, n->a); return;
    case AST_ASSIGN: {
        if (n->op != TOK_EOF) { assign_augmented(c, n); return; }
        AVal v = cc_expr(c, n->b);
        if (!c->failed) assign(c, n->a, v);
        return;
    }
    case AST_IF: if_stmt(c, n); return;
    case AST_WHILE: {
        LoopArg la = { n, 0, 1, false, FAILV, FAILV, FAILV, false, 0, false, NULL, false, NULL };
        compile_loop(c, &la);
        return;
    }
    case AST_FOR: cc_for_stmt(c, n); return;
    case AST_COLLECT: cc_collect(c, n); return;
    case AST_BREAK: jump_out(c, n, true); return;
    case AST_CONTINUE: jump_out(c, n, false); return;
    case AST_RETURN: cflow_return(c, n); return;
    case AST_BLOCK: cc_block(c, n); return;
    case AST_FNDECL: cc_env_set(c, cc_name_key(c, n->a), cc_make_closure(c, n->b->proto), n->a->str, true); return;
    case AST_STATIC: cc_block(c, n->a); return;
    case AST_IMPORT: cc_unsupported(c, "import inside static code"); return;
    case AST_DEL: cc_del(c, n); return;
    case AST_TRY: cc_try(c, n); return;   /* ctry.c */
    default: cc_expr(c, n); return;
    }
}

void cc_block(Comp *c, Node *b) { cflow_statements(c, b, 0, b->n); }


/* ---------- variable lookup ---------- */

static size_t key_hash(VarKey k) {
    uint64_t h = ((uint64_t)k.kind * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(uint32_t)k.slot * 0xff51afd7ed558ccdull) ^
                 (uint64_t)(uintptr_t)k.ptr;
    h ^= h >> 31;
    h *= 0xc4ceb9fe1a85ec53ull;
    return (size_t)(h ^ (h >> 29));
}

/* The slot of key k: its own, or the empty one where it would go. */
static KeySlot *key_slot(KeyIndex *ix, VarKey k) {
    size_t mask = (size_t)ix->cap - 1, at = key_hash(k) & mask;
    while (ix->slots[at].pos >= 0 && !cc_key_eq(ix->slots[at].key, k)) at = (at + 1) & mask;
    return &ix->slots[at];
}

void cc_key_indexed(KeyIndex *ix, VarKey k, int pos) {
    if (2 * (ix->used + 1) > ix->cap) {   /* keep it at most half full */
        KeyIndex old = *ix;
        ix->cap = old.cap ? 2 * old.cap : 64;
        ix->used = 0;
        ix->slots = mem_alloc(sizeof(KeySlot) * (size_t)ix->cap);
        for (int i = 0; i < ix->cap; i++) ix->slots[i].pos = -1;
        for (int i = 0; i < old.cap; i++)
            if (old.slots[i].pos >= 0) cc_key_indexed(ix, old.slots[i].key, old.slots[i].pos);
        mem_free(old.slots);
    }
    KeySlot *s = key_slot(ix, k);
    if (s->pos < 0) ix->used++;
    *s = (KeySlot){ k, pos };
}

static Binding *indexed_find(KeyIndex *ix, Binding *b, int n, VarKey k) {
    if (!ix->cap) return NULL;
    KeySlot *s = key_slot(ix, k);
    return s->pos >= 0 && s->pos < n && cc_key_eq(b[s->pos].key, k) ? &b[s->pos] : NULL;
}

Binding *cc_env_find(Comp *c, VarKey k) { return indexed_find(&c->envix, c->env, c->nenv, k); }
Binding *cc_input_find(Comp *c, VarKey k) { return indexed_find(&c->inputix, c->inputs, c->ninputs, k); }

/* ---------- driver ---------- */

static void comp_free(Comp *c) {
    for (int i = 0; i < c->narena; i++) mem_free(c->arena[i]);
    mem_free(c->arena);
    for (int i = 0; i < c->nvals; i++) val_release(c->vals[i]);
    mem_free(c->vals);
    mem_free(c->env);
    mem_free(c->inputs);
    mem_free(c->lifted);
    mem_free(c->envlog);
    mem_free(c->envix.slots);
    mem_free(c->inputix.slots);
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
        if (!b->assigned || b->key.kind == K_INLINE) continue;
        if (c->fn && b->key.kind == K_LOCAL) continue;   /* a static fn's locals end with it */
        if (b->v.poison) {
            cc_unsupported(c, "variable '%s' is first bound to a list or dict inside a run-time branch or a loop that "
                           "may not run", b->name);
            return;
        }
        if (b->v.kind == AV_NONE) continue;
        Output o;
        memset(&o, 0, sizeof o);
        InputSrc src;
        Value cur;
        if (!cc_key_source(c, b->key, &cur, &src)) continue;
        o.kind = src.kind;
        o.slot = src.slot;
        o.mod = src.mod;
        o.cell = src.cell;   /* SRC_CELLPTR: key_source took a reference */
        o.name = mem_strndup(b->name, strlen(b->name));
        o.val = cc_opnd_of(c, b->v);
        Graph *g = c->g;
        GROW(g->outputs, g->noutputs, g->capoutputs);
        g->outputs[g->noutputs++] = o;
    }
}

/* An error met while compiling code inside a run-time branch or loop is not yet the program's:
 * eager code raises it only if, and when, that code runs (an undefined name or a bad reshape in
 * the branch a run never takes is no error at all). So such code runs eagerly, which raises it
 * exactly as eager does; an interrupt, a timeout or exit() stays what it is. */
static void error_only_if_reached(Comp *c) {
    if (!c->failed || c->status != COMPILE_ERROR || c->err_depth == 0 || c->I->err_final) return;
    snprintf(c->why, c->whylen, "%s:%d:%d: %s (met compiling a run-time branch or loop: eager code raises it only if that code runs)",
             c->I->err_src ? c->I->err_src->name : c->src ? c->src->name : "?", c->I->err_loc.line, c->I->err_loc.col,
             c->I->err_msg);
    interp_clear_error(c->I);
    c->status = COMPILE_UNSUPPORTED;
}

static CompileStatus finish(Comp *c, Graph **out) {
    CompileStatus st = c->failed ? c->status : COMPILE_OK;
    if (st == COMPILE_OK) collect_outputs(c);
    error_only_if_reached(c);
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

static void comp_init(Comp *c, Interp *I, Module *mod, Source *src, SrcLoc loc, char *why, size_t whylen) {
    memset(c, 0, sizeof *c);
    c->I = I;
    c->g = mem_calloc(1, sizeof(Graph));
    c->mod = mod;
    c->src = src;
    c->loc = loc;
    c->why = why;
    c->whylen = whylen;
    c->give_up_ms = cpu_ms() + I->compile_budget_ms;
}

CompileStatus compile_block(Interp *I, Frame *f, Node *blk, Graph **out, char *why, size_t whylen) {
    Comp c;
    comp_init(&c, I, f->mod, I->cur_src, blk->loc, why, whylen);
    c.frame = f;
    cc_block(&c, blk);
    return finish(&c, out);
}

CompileStatus compile_fn(Interp *I, ObjClosure *fn, Value *params, const uint32_t *dyn, Graph **out, char *why,
                         size_t whylen) {
    Comp c;
    FnProto *p = fn->proto;
    comp_init(&c, I, fn->module, closure_src(fn), p->loc, why, whylen);
    c.fn = fn;
    c.params = params;
    c.dyn = dyn;
    /* the body compiles as a call at depth 0: its parameters are the inputs (K_LOCAL) */
    Inline top = { NULL, 0, p, fn->module, fn, NULL, false, FAILV, 0, NULL, NULL, 0 };   /* its frame: the caller's; its arguments are inputs, compared from the first inlined call on */
    c.ictx = &top;
    cflow_enter(&c, &top);
    for (int i = 0; i < p->nparams && !c.failed; i++) {
        if (params[i].type != VAL_UNDEF) continue;
        /* the default is compiled in: guard that the argument is still omitted */
        InputSrc src = { SRC_ARG, i, NULL, NULL, 0, mem_strndup(p->params[i], strlen(p->params[i])) };
        int gi = cc_add_guard(&c, G_CONST, cc_add_input(&c, src));
        c.g->guards[gi].k = UNDEF_VAL;
        if (!p->defaults[i]) {
            cc_error_atk(&c, ERRK_TYPE, p->loc, "%s() missing argument '%s'", p->name[0] ? p->name : "<fn>", p->params[i]);
            break;
        }
        AVal d = cc_expr(&c, p->defaults[i]);
        if (!c.failed) cc_env_set(&c, (VarKey){ K_LOCAL, i, NULL }, d, p->params[i], false);
    }
    if (!c.failed) cc_block(&c, p->body);
    if (!c.failed) {
        AVal r = cflow_result(&c, &top);
        if (!c.failed) c.g->result = cc_opnd_of(&c, r);
        c.g->has_result = true;
    }
    return finish(&c, out);
}
