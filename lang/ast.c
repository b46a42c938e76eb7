/* ast.c - allocation and release of syntax-tree nodes. */
#include "ast.h"
#include "mem.h"

Node *ast_new(NodeKind k, SrcLoc loc) {
    Node *n = mem_calloc(1, sizeof *n);
    n->kind = k;
    n->loc = loc;
    n->slot = -1;
    return n;
}

/* Arrays grow in powers of two; capacity is implied by n. */
void ast_push(Node ***arr, int *n, Node *x) {
    if ((*n & (*n - 1)) == 0) *arr = mem_realloc(*arr, sizeof(Node *) * (size_t)(*n ? *n * 2 : 1));
    (*arr)[(*n)++] = x;
}

static void proto_free(FnProto *p, int deep) {
    mem_free(p->name);
    for (int i = 0; i < p->nparams; i++) {
        mem_free(p->params[i]);
        if (deep) ast_free(p->defaults[i]);
    }
    mem_free(p->params);
    mem_free(p->defaults);
    if (deep) ast_free(p->body);
    for (int i = 0; i < p->nlocals; i++) mem_free(p->local_names[i]);
    mem_free(p->local_names);
    mem_free(p->is_cell);
    for (int i = 0; i < p->nupvals; i++) mem_free(p->upval_names[i]);
    mem_free(p->upvals);
    mem_free(p->upval_names);
    mem_free(p);
}

static void node_free(Node *n, int deep) {
    if (!n) return;
    if (deep) {
        ast_free(n->a);
        ast_free(n->b);
        ast_free(n->c);
        for (int i = 0; i < n->n; i++) ast_free(n->kids[i]);
        for (int i = 0; i < n->nk; i++) ast_free(n->kw[i]);
    }
    mem_free(n->kids);
    if (n->kind == AST_DICT)
        for (int i = 0; i < n->n; i++) mem_free(n->names[i]);
    for (int i = 0; i < n->nk; i++) mem_free(n->names[i]);
    mem_free(n->names);
    mem_free(n->kw);
    mem_free(n->str);
    if (n->proto) proto_free(n->proto, deep);
    mem_free(n);
}

void ast_free(Node *n) { node_free(n, 1); }

/* Frees a node's own storage but none of the nodes it points to (parser error path). */
void ast_free_shallow(Node *n) { node_free(n, 0); }
