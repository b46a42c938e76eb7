/* cdel.c - `del d[k]`, `del d.k`, `del l[i]` and pop(x, key, default) in static code (spec
 * section 12).
 *
 * A list or dict the block made is a structure known while compiling: taking an item out is
 * a change to that structure, with the key known then, and costs no instruction. `del` of
 * an item of the program's own list or dict (an input) is eager's pop when the block runs
 * (chost.c), with eager's messages; so is pop() of one outside run-time branches and loops,
 * its value the item the guards know. pop() of an input's item inside a loop or run-time branch,
 * keys made at run time in the block's own structures and `del l[a:b]` run eagerly. */
#include "comp.h"

/* A structure the block made whose items are all known while compiling. */
static bool known_struct(const AVal *v) {
    if (v->kind != AV_LIST && v->kind != AV_DICT) return false;
    const AStruct *st = v->st;
    return st->obj < 0 && !st->grown && !st->items_unknown && !st->wants_host && !st->ta && !st->selected;
}

static AVal unsupported(Comp *c, bool del) {
    return cc_unsupported(c, "%s on a list or dict that static code did not make, or with a key made at run time",
                          del ? "del" : "pop()");
}

/* An error the block meets when compiling: where a run-time branch or loop may not reach
 * it, the code runs eagerly instead (eager reports it if it happens). */
static AVal take_error(Comp *c, SrcLoc loc, const char *msg, const char *key) {
    if (c->branch_depth > 0) return cc_unsupported(c, "del or pop() that fails when compiling, in a run-time branch");
    if (key) return cc_error_at(c, loc, "key '%s' not found in dict", key);
    return cc_error_at(c, loc, "%s", msg);
}

/* The position of the item key names in st, or -1 with *done set: the result when there is
 * none (a dict's default), or FAILV when compiling failed or ran into an error or an eager
 * case. A dict's absent key reads its keys (the guard pins them). */
static int take_position(Comp *c, AStruct *st, AVal key, AVal dflt, bool del, SrcLoc loc, AVal *done) {
    *done = FAILV;
    if (st->dict) {
        if (key.kind == AV_NONE) return take_error(c, loc, "pop() of a dict needs a key", NULL), -1;
        if (key.kind != AV_CONST || key.k.type != VAL_STR) {
            if (del || key.kind != AV_CONST) unsupported(c, del);   /* else eager's message */
            return -1;
        }
        int at = cc_astruct_find(st, AS_STR(key.k)->chars);
        if (at >= 0) return at;
        if (st->obj >= 0) cc_struct_n(c, st);
        if (c->failed) return -1;
        if (dflt.kind != AV_NONE) *done = dflt;
        else take_error(c, loc, NULL, AS_STR(key.k)->chars);
        return -1;
    }
    if (dflt.kind != AV_NONE) return take_error(c, loc, "pop(): a default is only for a dict", NULL), -1;
    int64_t i = -1;
    if (key.kind != AV_NONE) {
        if (key.kind != AV_NUM || key.is_bool) {   /* eager's message */
            if (del) unsupported(c, true);
            return -1;
        }
        if (!cc_need_int(c, &key, &i, "a list index")) return -1;
    }
    if (!cc_list_index(c, st, &i)) return -1;
    if (key.kind == AV_NONE && st->n == 0) return take_error(c, loc, "pop() from an empty list", NULL), -1;
    if (i < 0 || i >= st->n) return take_error(c, loc, "list index out of range", NULL), -1;
    return (int)i;
}

/* Item at of st taken out of the compiler's structure; returns it. */
static AVal remove_at(Comp *c, AStruct *st, int at) {
    cc_undo_save(c, st);
    AVal out = st->items[at];
    memmove(st->items + at, st->items + at + 1, sizeof(AVal) * (size_t)(st->n - 1 - at));
    if (st->dict) memmove(st->keys + at, st->keys + at + 1, sizeof(char *) * (size_t)(st->n - 1 - at));
    st->n--;
    return out;
}

/* An item of the program's own list or dict taken out outside run-time branches and loops
 * (where a later pass would take another item): the item the guards know, as an index reads
 * it, and eager's pop when the block runs takes it out of the container. The compiler's copy
 * of the structure follows, so the items after it stay known. */
static AVal take_input(Comp *c, AVal obj, AVal key, AVal dflt, bool del, SrcLoc loc) {
    AVal done;
    int at = take_position(c, obj.st, key, dflt, del, loc, &done);
    if (at < 0) return done;
    if (!obj.st->dict) key = cc_num_const((double)at);
    if (cc_host_remove(c, builtin_named(c->I, "pop"), obj, key, at).kind == AV_NONE) return unsupported(c, del);
    AVal out = remove_at(c, obj.st, at);
    return del ? cc_const_av(NIL_VAL) : out;
}

AVal cc_take(Comp *c, AVal obj, AVal key, AVal dflt, bool del, SrcLoc loc) {
    c->loc = loc;
    if (obj.kind != AV_LIST && obj.kind != AV_DICT) return del ? unsupported(c, true) : FAILV;
    AStruct *st = obj.st;
    if (ca_is_open(st)) return ca_read_open(c);
    bool input = st->obj >= 0 && !st->selected;
    if (input && c->branch_depth == 0 && !c->dry && !st->items_unknown) return take_input(c, obj, key, dflt, del, loc);
    if (input && del &&
        (obj.kind == AV_LIST ? key.kind == AV_NUM : (key.kind == AV_STR || (key.kind == AV_CONST && key.k.type == VAL_STR)))) {
        AVal r = cc_host_remove(c, builtin_named(c->I, "pop"), obj, key, -1);
        return r.kind == AV_NONE ? unsupported(c, true) : r;
    }
    if (!known_struct(&obj)) return del ? unsupported(c, true) : FAILV;
    AVal done;
    int at = take_position(c, st, key, dflt, del, loc, &done);
    return at < 0 ? done : remove_at(c, st, at);
}

void cc_del(Comp *c, Node *n) {
    Node *t = n->a;
    if (t->kind == AST_INDEX && t->kids[0]->kind == AST_SLICE) {   /* del l[a:b]: eager's */
        cc_unsupported(c, "del of a slice");
        return;
    }
    AVal obj = cc_expr(c, t->a);
    if (c->failed) return;
    AVal key = t->kind == AST_FIELD ? cc_const_av(cc_keep_value(c, val_cstr(t->str))) : cc_expr(c, t->kids[0]);
    if (c->failed) return;
    if (obj.kind != AV_LIST && obj.kind != AV_DICT) {   /* eager's message, from eager code */
        unsupported(c, true);
        return;
    }
    cc_take(c, obj, key, FAILV, true, t->loc);
}
