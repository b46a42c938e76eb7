/* ast.h - the syntax tree.
 *
 * One Node struct serves every kind; the comment on each kind says which fields it
 * uses. Every node keeps the SrcLoc of the token that names it (the operator of a
 * binary expression, the '(' of a call), so errors point at the failing expression.
 * The resolver fills the `slot`/`scope` of names and the FnProto of functions.
 * A Node tree is owned by its Program; ast_free releases all of it. */
#ifndef TSL_AST_H
#define TSL_AST_H
#include <stdbool.h>
#include "token.h"

typedef enum {
    /* expressions */
    AST_NUM,      /* num */
    AST_STR,      /* str, str_len */
    AST_TRUE, AST_FALSE, AST_NIL,
    AST_NAME,     /* str = name; scope, slot */
    AST_LIST,     /* kids[n] */
    AST_DICT,     /* names[n] keys, kids[n] values */
    AST_UNARY,    /* op (TOK_MINUS or TOK_TILDE), a */
    AST_BINARY,   /* op (TOK_NOT_IN for 'not in'), a, b */
    AST_AND, AST_OR, /* a, b */
    AST_NOT,      /* a */
    AST_CALL,     /* a = callee, kids[n] positional, names[nk] + kw[nk] keywords */
    AST_INDEX,    /* a = object, kids[n] index items */
    AST_SLICE,    /* a, b, c: start, stop, step (each may be NULL) - only inside INDEX */
    AST_ELLIPSIS, /* only inside INDEX */
    AST_FIELD,    /* a = object, str = field name; slot (a call's callee: interp.c) */
    AST_FN,       /* proto */
    AST_COMP,     /* comprehension: op = TOK_LBRACKET (list) or TOK_LBRACE (dict); a = its clauses as
                   * statements (FOR, IF) nested left to right around a COLLECT; slot = the hidden
                   * local that holds the result as it grows; proto: at top level, the frame of its
                   * hidden locals (the resolver makes it), else NULL */
    /* statements */
    AST_EXPR,     /* a */
    AST_ASSIGN,   /* a = target, b = value; op: TOK_EOF for '=', else the binary operator of 'op=' */
    AST_IF,       /* a = cond, b = then block, c = else (block or IF) or NULL */
    AST_WHILE,    /* a = cond, b = body */
    AST_FOR,      /* a = loop variable (NAME), b = iterable, c = body */
    AST_BREAK, AST_CONTINUE,
    AST_RETURN,   /* a or NULL */
    AST_BLOCK,    /* kids[n] */
    AST_FNDECL,   /* a = NAME target, b = FN */
    AST_IMPORT,   /* a = NAME target, str = module name */
    AST_STATIC,   /* a = block */
    AST_COLLECT,  /* innermost statement of a COMP: adds a (list item, or dict key) [: b] to the
                   * result in hidden slot `slot` */
    AST_DEL,      /* a = target: INDEX with one index, or FIELD */
    AST_TRY,      /* a = body block, b = the caught error's NAME or NULL, c = handler block */
} NodeKind;

/* Where a resolved name lives. */
typedef enum { SCOPE_NONE, SCOPE_LOCAL, SCOPE_CELL, SCOPE_UPVAL, SCOPE_GLOBAL } Scope;

typedef struct Node Node;
typedef struct FnProto FnProto;
struct Source;

struct Node {
    NodeKind kind;
    SrcLoc loc;
    int op;
    double num;
    char *str;
    int str_len;
    Node *a, *b, *c;
    Node **kids;
    int n;
    char **names;    /* DICT keys / CALL keyword names */
    Node **kw;       /* CALL keyword values */
    int nk;
    Scope scope;     /* NAME */
    int slot;        /* NAME; FIELD: -1, or the OpCode of its tensor method once looked up (interp.c) */
    int chain;       /* BINARY/AND/OR: length of the operator chain ending here */
    FnProto *proto;  /* FN */
    void *vm_cache;  /* STATIC: compiled graphs (vm/static.c) */
    unsigned char quick;   /* ASSIGN: the interpreter's shape class, set on its first run (interp.c) */
};

/* Upvalue i of a closure comes from the enclosing frame's cell slot `index`
 * (from_local) or from the enclosing closure's upvalue `index`. */
typedef struct { int from_local, index; } UpvalDesc;

struct FnProto {
    char *name;          /* "" for anonymous */
    SrcLoc loc;
    int nparams;
    char **params;
    Node **defaults;     /* nparams entries, NULL where none */
    Node *body;          /* BLOCK */
    int is_static;
    /* filled by the resolver */
    int nlocals;
    char **local_names;  /* nlocals */
    unsigned char *is_cell; /* nlocals: slot holds a Cell because an inner fn captures it */
    int has_cells;          /* any is_cell set: the call path skips the cell loop otherwise */
    int plain_arity;        /* nparams when calls with that many positional arguments may take the
                               interpreter's fast path (no cells, not static), else -1 */
    void *vm_cache;         /* static fn: compiled graphs (vm/static.c) */
    bool made;              /* a closure was made from it: its program must stay */
    int nupvals;
    UpvalDesc *upvals;
    char **upval_names;
    struct Source *src;     /* the text it was read from (a REPL input, a file): its errors point there */
};

Node *ast_new(NodeKind k, SrcLoc loc);
void ast_push(Node ***arr, int *n, Node *x);
void ast_free(Node *n);
void ast_free_shallow(Node *n);

#endif
