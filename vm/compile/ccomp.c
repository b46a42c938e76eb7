/* ccomp.c - comprehensions in static code.
 *
 * A comprehension's clauses are statements (lang/parse.c): `for` and `if` nested around a
 * COLLECT. Its result lives in a hidden local (lang/resolve.c), bound here to a new list or
 * dict; the clauses compile as the for and if statements they are, so a loop over a known
 * list or string is copies of its body, and a range or a tensor's rows a run-time loop that
 * grows a tensor array, as `for` with push does; COLLECT is that push, or the dict's store.
 * After it the hidden locals are unbound (AV_NONE): neither an output written back nor a
 * change an enclosing loop gives a home. */
#include "comp.h"

static Node *inner(Node *clause) { return (clause->kind == AST_FOR ? clause->c : clause->b)->kids[0]; }

static VarKey hidden_key(Comp *c, int slot) {
    Node fake = { .kind = AST_NAME, .scope = SCOPE_LOCAL, .slot = slot };
    return cc_name_key(c, &fake);
}

static void unbind(Comp *c, Node *n) {
    AVal none = { .kind = AV_NONE };
    cc_env_set(c, hidden_key(c, n->slot), none, "comprehension", false);
    for (Node *k = n->a; k->kind != AST_COLLECT; k = inner(k))
        if (k->kind == AST_FOR) cc_env_set(c, cc_name_key(c, k->a), none, k->a->str, false);
}

AVal cc_comprehension(Comp *c, Node *n) {
    for (Node *k = n->a; k->kind != AST_COLLECT; k = inner(k))
        if (k->kind == AST_FOR && k->a->scope == SCOPE_CELL)
            return cc_unsupported(c, "a function made in a comprehension that uses its variable '%s'", k->a->str);
    bool dict = n->op == TOK_LBRACE;
    AVal r = { .kind = dict ? AV_DICT : AV_LIST, .st = cc_astruct_new(c, dict), .reg = -1 };
    VarKey key = hidden_key(c, n->slot);
    cc_env_set(c, key, r, "comprehension", false);
    cc_for_stmt(c, n->a);
    if (c->failed) return FAILV;
    r = cc_env_find(c, key)->v;
    unbind(c, n);
    return r;
}

static const char *kind_name(const AVal *v) {
    switch (v->kind) {
    case AV_NUM: return v->is_bool ? "bool" : "number";
    case AV_TENSOR: return "tensor";
    case AV_LIST: return "list";
    case AV_DICT: return "dict";
    case AV_CLOSURE: return "function";
    case AV_STR: return "string";
    default: return val_type_name(v->k);
    }
}

void cc_collect(Comp *c, Node *n) {
    AVal res = cc_env_find(c, hidden_key(c, n->slot))->v;
    AVal k = cc_expr(c, n->a);
    if (c->failed) return;
    if (!n->b) {
        AVal args[2] = { res, k };
        if (ca_is_open(res.st)) ca_push(c, res.st, k);   /* in a run-time loop: a tensor array */
        else if (res.st->obj < 0) cc_astruct_push(c, res.st, NULL, k);
        else if (cc_host_push(c, builtin_named(c->I, "push"), args, false).kind == AV_NONE)   /* a host list */
            cc_unsupported(c, "a comprehension's item that a list made at run time cannot hold");
        return;
    }
    if (k.kind != AV_STR && (k.kind != AV_CONST || k.k.type != VAL_STR)) {
        cc_error_at(c, n->a->loc, "dict keys are strings, got a %s", kind_name(&k));
        return;
    }
    AVal v = cc_expr(c, n->b);
    if (!c->failed) cc_store_struct(c, res, k, v, n->loc);
}
