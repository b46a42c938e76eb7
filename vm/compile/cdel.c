/* cdel.c - `del d[k]`, `del d.k`, `del l[i]` and pop(x, key, default) in static code (spec
 * section 12).
 *
 * A list or dict the block made is a structure known while compiling: taking an item out is
 * a change to that structure, with the key known then, and costs no instruction. `del` of
 * an item of the program's own list or dict (an input) is eager's pop when the block runs
 * (chost.c), with eager's messages. pop() of an input's item, whose value is not known while
 * compiling, keys made at run time in the block's own structures and `del l[a:b]` run
 * eagerly. */
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

AVal cc_take(Comp *c, AVal obj, AVal key, AVal dflt, bool del, SrcLoc loc) {
    c->loc = loc;
    if ((obj.kind == AV_LIST || obj.kind == AV_DICT) && ca_is_open(obj.st)) return ca_read_open(c);
    if (del && (obj.kind == AV_LIST || obj.kind == AV_DICT) && obj.st->obj >= 0 && !obj.st->selected &&
        (obj.kind == AV_LIST ? key.kind == AV_NUM : (key.kind == AV_STR || (key.kind == AV_CONST && key.k.type == VAL_STR)))) {
        AVal r = cc_host_remove(c, builtin_named(c->I, "pop"), obj, key);
        return r.kind == AV_NONE ? unsupported(c, true) : r;
    }
    if (!known_struct(&obj)) return del ? unsupported(c, true) : FAILV;
    AStruct *st = obj.st;
    int at;
    if (obj.kind == AV_DICT) {
        if (key.kind == AV_NONE) return take_error(c, loc, "pop() of a dict needs a key", NULL);
        if (key.kind != AV_CONST || key.k.type != VAL_STR) return del || key.kind != AV_CONST ? unsupported(c, del) : FAILV;
        at = cc_astruct_find(st, AS_STR(key.k)->chars);
        if (at < 0 && dflt.kind != AV_NONE) return dflt;
        if (at < 0) return take_error(c, loc, NULL, AS_STR(key.k)->chars);
    } else {
        if (dflt.kind != AV_NONE) return take_error(c, loc, "pop(): a default is only for a dict", NULL);
        if (key.kind == AV_NONE && st->n == 0) return take_error(c, loc, "pop() from an empty list", NULL);
        at = st->n - 1;
        if (key.kind != AV_NONE) {
            if (key.kind != AV_NUM) return del ? unsupported(c, true) : FAILV;   /* eager's message */
            int64_t i;
            if (!cc_need_int(c, &key, &i, "a list index")) return FAILV;
            if (!cc_list_index(c, st, &i)) return FAILV;
            if (i < 0 || i >= st->n) return take_error(c, loc, "list index out of range", NULL);
            at = (int)i;
        }
    }
    cc_undo_save(c, st);
    AVal out = st->items[at];
    memmove(st->items + at, st->items + at + 1, sizeof(AVal) * (size_t)(st->n - 1 - at));
    if (st->dict) memmove(st->keys + at, st->keys + at + 1, sizeof(char *) * (size_t)(st->n - 1 - at));
    st->n--;
    return out;
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
