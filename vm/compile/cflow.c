/* cflow.c - `return`, `break` and `continue` inside run-time branches and loops.
 *
 * Done as Paddle's dy2static return transformer does it, with variables the code cannot
 * name: a `return` that may or may not run (inside a run-time branch or loop) sets the
 * function's "returned" flag and its result home, two hidden variables of the function
 * (hidden_key); the compiler's homes then carry them through every branch and loop like
 * any variable. After a statement that may have set a flag, the rest of the block runs
 * only where the flag is clear (run-time branches on it: cflow_statements); a loop whose body
 * may set one stops before its next iteration (cflow_loop_exits); the function's value is
 * the result home (cflow_result). The paths' results must share kind, dtype and shape, as
 * the variables of a run-time branch do.
 *
 * `break` and `continue` jump (compile.c, jump_out), except in a loop a gradient is
 * recorded through: there they set flags of their loop the same way, so every iteration's
 * path is made of branches the static gradient (vm/compile/cgrad.c) can replay. */
#include "comp.h"

enum { SLOT_RETURNED = 65535, SLOT_RESULT = 65534, SLOT_BREAK = 65533, SLOT_CONTINUE = 65532 };

static const char RETURNED_NAME[] = "<returned>", RESULT_NAME[] = "<returned value>";
static const char BREAK_NAME[] = "<break>", CONTINUE_NAME[] = "<continue>";

/* A hidden variable of activation (or loop) id: a slot no parameter or local has. */
static VarKey hidden_key(int id, int slot) { return (VarKey){ K_INLINE, id * 65536 + slot, NULL }; }

static bool sets_flag(Node *n, bool in_loop);

/* A function is entered: nothing has returned yet (a constant, so no code). Only a function
 * with a return inside a branch or loop needs the flag. */
void cflow_enter(Comp *c, Inline *ic) {
    Node *body = ic->proto->body;
    for (int i = 0; i < body->n; i++)
        if (body->kids[i]->kind != AST_RETURN && sets_flag(body->kids[i], false)) {
            cc_env_set(c, hidden_key(ic->id, SLOT_RETURNED), cc_bool_const(false), RETURNED_NAME, false);
            return;
        }
}

/* A loop a gradient is recorded through gets flags for its break and continue (id: a fresh
 * number, shared by its dry run and its real compile). */
void cflow_loop_enter(Comp *c, int id) {
    cc_env_set(c, hidden_key(id, SLOT_BREAK), cc_bool_const(false), BREAK_NAME, false);
}

/* Each iteration starts with its continue flag clear. */
void cflow_body_enter(Comp *c, int id) {
    if (id) cc_env_set(c, hidden_key(id, SLOT_CONTINUE), cc_bool_const(false), CONTINUE_NAME, false);
}

static void describe(const AVal *v, char *buf, size_t n) {
    if (v->kind == AV_TENSOR) {
        char s[600];
        snprintf(buf, n, "a tensor %s %s", dtype_name(v->dtype), shape_str(&v->shape, s, sizeof s));
    } else if (v->kind == AV_NUM) {
        snprintf(buf, n, "%s", v->is_bool ? "true/false" : "a number");
    } else if (v->kind == AV_CONST) {
        snprintf(buf, n, "%s", v->k.type == VAL_NIL ? "nothing" : val_type_name(v->k));
    } else {
        snprintf(buf, n, "a %s", v->kind == AV_LIST ? "list" : v->kind == AV_DICT ? "dict" : "function");
    }
}

/* Whether a result v can share one home with the result r another path gave. */
static bool same_result(const AVal *r, const AVal *v) {
    if (r->kind != v->kind) return false;
    if (v->kind == AV_TENSOR) return r->dtype == v->dtype && shape_equal(&r->shape, &v->shape);
    if (v->kind == AV_NUM) return r->is_bool == v->is_bool;   /* true and 1 print differently */
    if (v->kind == AV_CONST) return r->k.type == v->k.type && (v->k.type == VAL_NIL || val_equal(r->k, v->k));
    if (v->kind == AV_LIST || v->kind == AV_DICT) return r->st == v->st;
    return r->cl == v->cl;
}

static void mismatch(Comp *c, SrcLoc loc, const AVal *before, const AVal *now) {
    char a[700], b[700];
    describe(now, a, sizeof a);
    describe(before, b, sizeof b);
    c->loc = loc;
    if (now->kind == before->kind && now->kind != AV_TENSOR && now->kind != AV_NUM)   /* no home holds them */
        cc_unsupported(c, "'return' of %s other than the one another path of a run-time branch or loop returns", a);
    else
        cc_unsupported(c, "'return' of %s where another path of a run-time branch or loop returns %s", a, b);
}

/* `return e` inside a run-time branch or loop of the function being inlined: the result
 * home takes e and the returned flag is set; the rest of this path is not compiled. */
static void return_at_run_time(Comp *c, Node *n, AVal v) {
    Inline *ic = c->ictx;
    if (!cc_env_find(c, hidden_key(ic->id, SLOT_RETURNED))) {   /* cflow_enter saw no such return */
        cc_unsupported(c, "'return' inside this kind of statement");
        return;
    }
    Binding *r = cc_env_find(c, hidden_key(ic->id, SLOT_RESULT));
    if (r && !same_result(&r->v, &v)) {
        mismatch(c, n->loc, &r->v, &v);
        return;
    }
    cc_env_set(c, hidden_key(ic->id, SLOT_RESULT), v, RESULT_NAME, false);
    cc_env_set(c, hidden_key(ic->id, SLOT_RETURNED), cc_bool_const(true), RETURNED_NAME, false);
    ic->returned = true;
}

void cflow_return(Comp *c, Node *n) {
    if (!c->ictx) {
        cc_error_at(c, n->loc, "'return' cannot leave a static block");
        return;
    }
    AVal v = n->a ? cc_expr(c, n->a) : cc_const_av(NIL_VAL);
    if (c->failed) return;
    c->loc = n->loc;
    if (c->branch_depth > c->ictx->depth_at_entry) {
        return_at_run_time(c, n, v);
        return;
    }
    c->ictx->result = v;
    c->ictx->returned = true;
}

/* `break`/`continue` of a loop with flags: false when the loop jumps instead. */
bool cflow_jump(Comp *c, bool is_break) {
    if (!c->loop || !c->loop->flow) return false;
    int slot = is_break ? SLOT_BREAK : SLOT_CONTINUE;
    cc_env_set(c, hidden_key(c->loop->flow, slot), cc_bool_const(true), is_break ? BREAK_NAME : CONTINUE_NAME, false);
    return true;
}

/* The function's value after its body: what it returned at compile time, or its result home
 * when a return ran at run time (nothing, where a path ends without one). */
AVal cflow_result(Comp *c, Inline *ic) {
    Binding *f = cc_env_find(c, hidden_key(ic->id, SLOT_RETURNED));
    bool at_run_time = f && !(f->v.kind == AV_NUM && f->v.known);
    if (!at_run_time) return ic->returned ? ic->result : cc_const_av(NIL_VAL);
    Binding *r = cc_env_find(c, hidden_key(ic->id, SLOT_RESULT));
    AVal v = r ? r->v : cc_const_av(NIL_VAL);
    if (!ic->returned) {   /* a path falls off the end: it returns nothing */
        AVal nil = cc_const_av(NIL_VAL);
        if (!same_result(&v, &nil)) {
            char what[700];
            describe(&v, what, sizeof what);
            c->loc = ic->proto->loc;
            cc_unsupported(c, "%s() can end without 'return' where another path of a run-time branch or loop returns %s",
                           ic->proto->name[0] ? ic->proto->name : "<fn>", what);
            return FAILV;
        }
        return nil;
    }
    v.unset = 0;   /* every path returned: the home holds a value */
    return v;
}

/* ---------- guards: the rest of a path runs only where no flag is set ---------- */

/* The flags a statement of the current block may set: its function's returned flag, and
 * its loop's break and continue flags when the loop has them. Their bindings now. */
void cflow_watch(Comp *c, FlowWatch *w) {
    VarKey keys[3];
    int n = 0;
    if (c->ictx) keys[n++] = hidden_key(c->ictx->id, SLOT_RETURNED);
    if (c->loop && c->loop->flow) {
        keys[n++] = hidden_key(c->loop->flow, SLOT_BREAK);
        keys[n++] = hidden_key(c->loop->flow, SLOT_CONTINUE);
    }
    w->n = 0;
    for (int i = 0; i < n; i++) {
        Binding *b = cc_env_find(c, keys[i]);
        if (!b) continue;
        w->key[w->n] = keys[i];
        w->before[w->n++] = b->v;
    }
}

static bool same_flag(const AVal *a, const AVal *b) {
    if (a->kind != b->kind || a->known != b->known) return false;
    return a->known ? a->num == b->num : a->reg == b->reg;
}

/* After a statement: the flags it may have set join w's live ones. false: the rest of the
 * path cannot run (a return when compiling, or a flag surely set). */
bool cflow_after(Comp *c, FlowWatch *w) {
    if (c->failed || (c->ictx && c->ictx->returned)) return false;
    for (int i = 0; i < w->n; i++) {
        Binding *b = cc_env_find(c, w->key[i]);
        if (!b || same_flag(&b->v, &w->before[i])) continue;
        if (b->v.kind == AV_NUM && b->v.known) {
            if (b->v.num != 0) return false;
            continue;
        }
        bool seen = false;
        for (int k = 0; k < w->nlive; k++) seen |= cc_key_eq(w->live[k], w->key[i]);
        if (!seen) w->live[w->nlive++] = w->key[i];
    }
    return true;
}

/* Compiles s where none of w's live flags is set: in a run-time branch on them (nothing on
 * the other side), or directly when none is live. */
void cflow_run(Comp *c, FlowWatch *w, Side s) {
    if (!w->nlive) {
        s.fn(c, s.arg);
        return;
    }
    int go = -1;   /* not f1 and not f2 ...: 1 where no flag is set */
    bool only_return = true;
    for (int i = 0; i < w->nlive && !c->failed; i++) {
        Binding *b = cc_env_find(c, w->live[i]);
        AVal v = b->v;
        int clear = cc_new_num(c, true), r = cc_num_reg(c, &v);
        Ins *in = cc_emit(c, I_NNOT);
        in->dst = clear;
        in->a = r;
        only_return &= w->live[i].slot % 65536 == SLOT_RETURNED;
        if (go < 0) {
            go = clear;
            continue;
        }
        in = cc_emit(c, I_NBIN);
        in->dst = go;
        in->a = go;
        in->b = clear;
        in->aux = OP_MUL;
    }
    if (!c->failed) cc_runtime_branch(c, go, c->loc, s, (Side){ NULL, NULL }, only_return);
}

/* Whether statement n may set a flag of its function or of the loop it is in. */
static bool sets_flag(Node *n, bool in_loop) {
    if (!n) return false;
    switch (n->kind) {
    case AST_RETURN: return true;
    case AST_BREAK: case AST_CONTINUE: return !in_loop;
    case AST_BLOCK:
        for (int i = 0; i < n->n; i++)
            if (sets_flag(n->kids[i], in_loop)) return true;
        return false;
    case AST_STATIC: return sets_flag(n->a, in_loop);
    case AST_TRY: return sets_flag(n->a, in_loop) || sets_flag(n->c, in_loop);
    case AST_IF: return sets_flag(n->b, in_loop) || sets_flag(n->c, in_loop);
    case AST_WHILE: return sets_flag(n->b, true);
    case AST_FOR: return sets_flag(n->c, true);
    default: return false;
    }
}

typedef struct {
    Node *blk;
    int from, to;
} Stmts;

static void stmts_side(Comp *c, void *arg) {
    Stmts *st = arg;
    cflow_statements(c, st->blk, st->from, st->to);
}

/* The statements [from, to) of block blk. After one that may have set a flag, the next
 * ones run in a run-time branch on the flags: up to and including the next that may set
 * one, so such branches follow each other instead of nesting. */
void cflow_statements(Comp *c, Node *blk, int from, int to) {
    FlowWatch w = { .nlive = 0 };
    for (int i = from; i < to && !c->failed;) {
        cflow_watch(c, &w);
        if (!w.nlive) {
            cc_stmt(c, blk->kids[i++]);
        } else {
            int j = i;
            while (j + 1 < to && !sets_flag(blk->kids[j], false)) j++;
            Stmts st = { blk, i, j + 1 };
            c->loc = blk->kids[i]->loc;
            cflow_run(c, &w, (Side){ stmts_side, &st });
            i = j + 1;
        }
        if (!cflow_after(c, &w)) return;
    }
}

static bool flag_has_home(const Home *homes, int nhomes, VarKey key) {
    for (int i = 0; i < nhomes; i++)
        if (!homes[i].st && cc_key_eq(homes[i].key, key) && homes[i].home.kind == AV_NUM) return true;
    return false;
}

/* Whether a loop with these homes may return, and cannot break with a flag. */
bool cflow_left_by_return(Comp *c, const Home *homes, int nhomes, int flow) {
    if (!c->ictx || !flag_has_home(homes, nhomes, hidden_key(c->ictx->id, SLOT_RETURNED))) return false;
    return !flow || !flag_has_home(homes, nhomes, hidden_key(flow, SLOT_BREAK));
}

/* At the top of a loop whose body may return or break (its flags have homes): the loop
 * stops before its condition when one is set. Returns how many exit jumps it emitted (at
 * most 2, their positions in at[]), to be patched to the loop's end. */
int cflow_loop_exits(Comp *c, const Home *homes, int nhomes, int flow, int *at) {
    VarKey keys[2];
    int nk = 0, n = 0;
    if (c->ictx) keys[nk++] = hidden_key(c->ictx->id, SLOT_RETURNED);
    if (flow) keys[nk++] = hidden_key(flow, SLOT_BREAK);
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < nhomes; i++) {
            if (homes[i].st || !cc_key_eq(homes[i].key, keys[k]) || homes[i].home.kind != AV_NUM) continue;
            int go = cc_new_num(c, true);
            Ins *in = cc_emit(c, I_NNOT);
            in->dst = go;
            in->a = homes[i].home.reg;
            in = cc_emit(c, I_JUMPF);
            in->a = go;
            at[n++] = (int)(in - c->g->code);
        }
    return n;
}
