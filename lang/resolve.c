/* resolve.c - binds every name to a slot before anything runs.
 *
 * Scope rules (spec section 4): blocks make no scope; top-level assignment binds a
 * module global; inside a function an assignment rebinds the variable of the nearest
 * enclosing function that binds the name, else makes a local. So for each function we
 * first collect the names it binds (parameters always; assigned names unless an
 * enclosing function binds them), then resolve every NAME to LOCAL, CELL (a local some
 * inner function captures), UPVAL or GLOBAL.
 * A comprehension's loop variables are local to it (spec section 12): each gets a hidden slot
 * of the enclosing function (at top level, of the comprehension's own frame, COMP's proto),
 * whose name no identifier matches, and names inside the comprehension see it first.
 * It also reports, before anything runs, what can never run: `break`/`continue` outside a
 * loop of their own function and `return` outside a function (spec section 4), and those
 * that would leave a `static {}` block (spec section 6), in every mode. */
#include <stdio.h>
#include <string.h>
#include "interp.h"
#include "mem.h"

typedef struct Scope {
    FnProto *proto;
    struct Scope *parent;
    Node **local_refs;   /* NAME nodes resolved to LOCAL; turned into CELL if captured */
    int nrefs;
} FnScope;

static int find_local(FnProto *p, const char *name) {
    for (int i = 0; i < p->nlocals; i++)
        if (!strcmp(p->local_names[i], name)) return i;
    return -1;
}

static int push_local(FnProto *p, const char *name) {
    p->local_names = mem_realloc(p->local_names, sizeof(char *) * (size_t)(p->nlocals + 1));
    p->is_cell = mem_realloc(p->is_cell, (size_t)(p->nlocals + 1));
    p->local_names[p->nlocals] = mem_strndup(name, strlen(name));
    p->is_cell[p->nlocals] = 0;
    return p->nlocals++;
}

static int add_local(FnProto *p, const char *name) {
    int i = find_local(p, name);
    return i >= 0 ? i : push_local(p, name);
}

static bool bound_by_ancestor(FnScope *s, const char *name) {
    for (FnScope *a = s->parent; a; a = a->parent)
        if (find_local(a->proto, name) >= 0) return true;
    return false;
}

/* Collect the names a function body binds, not descending into nested functions. */
static void collect_bindings(FnScope *s, Node *n) {
    if (!n) return;
    switch (n->kind) {
    case AST_ASSIGN:
        if (n->a->kind == AST_NAME && !bound_by_ancestor(s, n->a->str)) add_local(s->proto, n->a->str);
        collect_bindings(s, n->b);
        return;
    case AST_FOR:
        if (!bound_by_ancestor(s, n->a->str)) add_local(s->proto, n->a->str);
        collect_bindings(s, n->b);
        collect_bindings(s, n->c);
        return;
    case AST_FNDECL:
    case AST_IMPORT:
        if (!bound_by_ancestor(s, n->a->str)) add_local(s->proto, n->a->str);
        return;
    case AST_TRY:
        if (n->b && !bound_by_ancestor(s, n->b->str)) add_local(s->proto, n->b->str);
        collect_bindings(s, n->a);
        collect_bindings(s, n->c);
        return;
    case AST_FN:
    case AST_COMP:   /* binds only its own loop variables (hidden slots, resolve_comp) */
        return;
    default: break;
    }
    collect_bindings(s, n->a);
    collect_bindings(s, n->b);
    collect_bindings(s, n->c);
    for (int i = 0; i < n->n; i++) collect_bindings(s, n->kids[i]);
    for (int i = 0; i < n->nk; i++) collect_bindings(s, n->kw[i]);
}

/* A comprehension's loop variable while its comprehension is being resolved. */
typedef struct {
    const char *name;
    FnScope *owner;   /* the scope whose frame holds the slot */
    int slot;
} CompVar;

typedef struct {
    Interp *I;
    Module *m;
    int loops;      /* loops around this point in the current function (a function body starts at 0) */
    int static_loops;   /* loops outside the innermost static block of the function; -1: none */
    bool failed;
    CompVar *vars;  /* the loop variables in scope, innermost last */
    int nvars, capvars;
    int result;     /* the hidden slot of the innermost comprehension's result */
} Ctx;

/* The slot of `name` in scope s: a comprehension's variable first (the innermost), else a
 * local of s's function; -1 when neither. */
static int scope_slot(Ctx *c, FnScope *s, const char *name) {
    for (int i = c->nvars - 1; i >= 0; i--)
        if (c->vars[i].owner == s && !strcmp(c->vars[i].name, name)) return c->vars[i].slot;
    return find_local(s->proto, name);
}

/* A new slot of p no name resolves to ("[x]" for the loop variable x). */
static int add_hidden(FnProto *p, const char *name) {
    char buf[80];
    snprintf(buf, sizeof buf, "[%.70s]", name);
    return push_local(p, buf);
}

static int add_upval(FnProto *p, int from_local, int index, const char *name) {
    for (int i = 0; i < p->nupvals; i++)
        if (p->upvals[i].from_local == from_local && p->upvals[i].index == index) return i;
    p->upvals = mem_realloc(p->upvals, sizeof(UpvalDesc) * (size_t)(p->nupvals + 1));
    p->upval_names = mem_realloc(p->upval_names, sizeof(char *) * (size_t)(p->nupvals + 1));
    p->upvals[p->nupvals] = (UpvalDesc){ from_local, index };
    p->upval_names[p->nupvals] = mem_strndup(name, strlen(name));
    return p->nupvals++;
}

/* Upvalue index of `name` in scope s, or -1 when no enclosing function binds it. */
static int resolve_upval(Ctx *c, FnScope *s, const char *name) {
    if (!s->parent) return -1;
    int local = scope_slot(c, s->parent, name);
    if (local >= 0) {
        s->parent->proto->is_cell[local] = 1;
        return add_upval(s->proto, 1, local, name);
    }
    int up = resolve_upval(c, s->parent, name);
    return up < 0 ? -1 : add_upval(s->proto, 0, up, name);
}

/* Records the first misplaced-statement error, located in the module's source. */
static void misplaced(Ctx *c, Node *n, const char *msg) {
    if (c->failed) return;
    c->failed = true;
    Source *saved = c->I->cur_src;
    c->I->cur_src = c->m->src;
    interp_error_at(c->I, n->loc, "%s", msg);
    c->I->cur_src = saved;
}

static void resolve_fn(Ctx *c, FnScope *parent, Node *fn);
static void resolve_comp(Ctx *c, FnScope *s, Node *n);

static void resolve_name(Ctx *c, FnScope *s, Node *n) {
    if (s) {
        int local = scope_slot(c, s, n->str);
        if (local >= 0) {
            n->scope = SCOPE_LOCAL;
            n->slot = local;
            ast_push(&s->local_refs, &s->nrefs, n);
            return;
        }
        int up = resolve_upval(c, s, n->str);
        if (up >= 0) {
            n->scope = SCOPE_UPVAL;
            n->slot = up;
            return;
        }
    }
    n->scope = SCOPE_GLOBAL;
    n->slot = globals_slot(&c->m->g, n->str);
}

static void resolve_node(Ctx *c, FnScope *s, Node *n) {
    if (!n) return;
    switch (n->kind) {
    case AST_NAME: resolve_name(c, s, n); return;
    case AST_FN: resolve_fn(c, s, n); return;
    case AST_COMP: resolve_comp(c, s, n); return;
    case AST_COLLECT: n->slot = c->result; break;
    case AST_BREAK:
    case AST_CONTINUE:
        if (c->loops == 0) misplaced(c, n, "'break' or 'continue' outside a loop");
        else if (c->loops == c->static_loops)
            misplaced(c, n, n->kind == AST_BREAK ? "'break' cannot leave a static block" : "'continue' cannot leave a static block");
        return;
    case AST_RETURN:
        if (!s) misplaced(c, n, "'return' outside a function");
        else if (c->static_loops >= 0) misplaced(c, n, "'return' cannot leave a static block");
        break;
    case AST_STATIC: {   /* spec section 6: nothing may jump out of the block */
        int outer = c->static_loops;
        c->static_loops = c->loops;
        resolve_node(c, s, n->a);
        c->static_loops = outer;
        return;
    }
    case AST_WHILE:
    case AST_FOR:
        /* the condition / loop variable and iterable are outside the loop; the body (b of
         * while, c of for) is inside */
        resolve_node(c, s, n->a);
        if (n->kind == AST_FOR) resolve_node(c, s, n->b);
        c->loops++;
        resolve_node(c, s, n->kind == AST_FOR ? n->c : n->b);
        c->loops--;
        return;
    default: break;
    }
    resolve_node(c, s, n->a);
    resolve_node(c, s, n->b);
    resolve_node(c, s, n->c);
    for (int i = 0; i < n->n; i++) resolve_node(c, s, n->kids[i]);
    for (int i = 0; i < n->nk; i++) resolve_node(c, s, n->kw[i]);
}

/* A scope's names are resolved: locals that an inner function captures become cells. */
static void scope_close(FnScope *s) {
    FnProto *p = s->proto;
    for (int i = 0; i < s->nrefs; i++)
        if (p->is_cell[s->local_refs[i]->slot]) s->local_refs[i]->scope = SCOPE_CELL;
    for (int i = 0; i < p->nlocals; i++) p->has_cells |= p->is_cell[i];
    mem_free(s->local_refs);
}

static void resolve_fn(Ctx *c, FnScope *parent, Node *fn) {
    FnProto *p = fn->proto;
    FnScope s = { p, parent, NULL, 0 };
    int outer_loops = c->loops, outer_static = c->static_loops;
    c->loops = 0;   /* a loop around the definition is not a loop around the body */
    c->static_loops = -1;
    p->src = c->m->src;
    for (int i = 0; i < p->nparams; i++) add_local(p, p->params[i]);
    collect_bindings(&s, p->body);
    for (int i = 0; i < p->nparams; i++) resolve_node(c, &s, p->defaults[i]);
    resolve_node(c, &s, p->body);
    scope_close(&s);
    p->plain_arity = p->has_cells || p->is_static ? -1 : p->nparams;
    c->loops = outer_loops;
    c->static_loops = outer_static;
}

/* A comprehension's clauses (FOR and IF statements nested around its COLLECT): each loop
 * variable is bound from its `for` on, so a later clause and the element see it. */
static void resolve_clauses(Ctx *c, FnScope *s, Node *n) {
    resolve_node(c, s, n->kind == AST_FOR ? n->b : n->a);   /* the iterable, the condition */
    if (n->kind == AST_FOR) {
        if (c->nvars == c->capvars) {
            c->capvars = c->capvars ? 2 * c->capvars : 8;
            c->vars = mem_realloc(c->vars, sizeof(CompVar) * (size_t)c->capvars);
        }
        c->vars[c->nvars++] = (CompVar){ n->a->str, s, add_hidden(s->proto, n->a->str) };
        resolve_name(c, s, n->a);
    }
    Node *inner = (n->kind == AST_FOR ? n->c : n->b)->kids[0];
    if (inner->kind == AST_COLLECT) resolve_node(c, s, inner);
    else resolve_clauses(c, s, inner);
}

static void resolve_comp(Ctx *c, FnScope *s, Node *n) {
    FnScope own = { NULL, NULL, NULL, 0 };
    if (!s) {   /* top level: the comprehension's hidden locals get a frame of their own */
        n->proto = mem_calloc(1, sizeof(FnProto));
        n->proto->name = mem_strndup("", 0);
        n->proto->plain_arity = -1;
        n->proto->src = c->m->src;
        own.proto = n->proto;
        s = &own;
    }
    int nvars = c->nvars, result = c->result;
    n->slot = c->result = add_hidden(s->proto, "result");
    n->scope = SCOPE_LOCAL;
    resolve_clauses(c, s, n->a);
    c->nvars = nvars;
    c->result = result;
    if (s == &own) scope_close(&own);
}

/* Returns 0, or -1 with the error pending when the program has a misplaced statement. */
int resolve_program(Interp *I, Module *m, Node *prog) {
    Ctx c = { .I = I, .m = m, .static_loops = -1, .result = -1 };
    resolve_node(&c, NULL, prog);
    mem_free(c.vars);
    return c.failed ? -1 : 0;
}
