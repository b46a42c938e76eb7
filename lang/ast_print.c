/* ast_print.c - prints a syntax tree back as TSL source, fully parenthesised, one statement
 * a line. Parsing the printed text gives the same tree, so print(parse(print(parse(s)))) is
 * print(parse(s)): the parser fuzz target checks exactly that. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "ast_print.h"

static void print_stmt(StrBuf *b, const Node *n, int indent);
static void print_block(StrBuf *b, const Node *blk, int indent);

static const char *op_text(int tok) { return tok_symbol((TokKind)tok); }

static void print_string(StrBuf *b, const char *s, int len) {
    sb_puts(b, "\"");
    for (int i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\t': sb_puts(b, "\\t"); break;
        case '\r': sb_puts(b, "\\r"); break;
        case 0: sb_puts(b, "\\0"); break;
        default:
            if (c < 0x20 || c == 0x7f) sb_printf(b, "\\u{%x}", c);
            else sb_putn(b, (const char *)&c, 1);
        }
    }
    sb_puts(b, "\"");
}

static void print_number(StrBuf *b, double x) {
    if (isinf(x)) sb_puts(b, "1e999");   /* the only way the lexer makes infinity */
    else sb_printf(b, "%.17g", x);
}

static void print_fn(StrBuf *b, const FnProto *p, const char *name, int indent) {
    sb_printf(b, "%sfn%s%s(", p->is_static ? "static " : "", name ? " " : "", name ? name : "");
    for (int i = 0; i < p->nparams; i++) {
        sb_printf(b, "%s%s", i ? ", " : "", p->params[i]);
        if (p->defaults[i]) {
            sb_puts(b, "=");
            ast_print_expr(b, p->defaults[i]);
        }
    }
    sb_puts(b, ") ");
    print_block(b, p->body, indent);
}

/* open, the n expressions separated by commas, close */
static void print_exprs(StrBuf *b, const char *open, Node *const *kids, int n, const char *close) {
    sb_puts(b, open);
    for (int i = 0; i < n; i++) {
        if (i) sb_puts(b, ", ");
        ast_print_expr(b, kids[i]);
    }
    sb_puts(b, close);
}

/* A call's parenthesised arguments, positional then keyword: (a, b, k=c) */
static void print_call_args(StrBuf *b, const Node *n) {
    print_exprs(b, "(", n->kids, n->n, "");
    for (int i = 0; i < n->nk; i++) {
        sb_printf(b, "%s%s=", n->n || i ? ", " : "", n->names[i]);
        ast_print_expr(b, n->kw[i]);
    }
    sb_puts(b, ")");
}

/* A comprehension, its clauses read back from the statements they became (parse.c). A dict
 * one in parentheses, as a dict is. */
static void print_comp(StrBuf *b, const Node *n) {
    const Node *add = n->a;
    while (add->kind != AST_COLLECT) add = (add->kind == AST_FOR ? add->c : add->b)->kids[0];
    sb_puts(b, add->b ? "({" : "[");
    ast_print_expr(b, add->a);
    if (add->b) { sb_puts(b, ": "); ast_print_expr(b, add->b); }
    for (const Node *c = n->a; c != add; c = (c->kind == AST_FOR ? c->c : c->b)->kids[0]) {
        if (c->kind == AST_FOR) sb_printf(b, " for %s in ", c->a->str);
        else sb_puts(b, " if ");
        ast_print_expr(b, c->kind == AST_FOR ? c->b : c->a);
    }
    sb_puts(b, add->b ? "})" : "]");
}

void ast_print_expr(StrBuf *b, const Node *n) {
    switch (n->kind) {
    case AST_NUM: print_number(b, n->num); break;
    case AST_STR: print_string(b, n->str, n->str_len); break;
    case AST_TRUE: sb_puts(b, "true"); break;
    case AST_FALSE: sb_puts(b, "false"); break;
    case AST_NIL: sb_puts(b, "nil"); break;
    case AST_NAME: sb_puts(b, n->str); break;
    case AST_LIST: print_exprs(b, "[", n->kids, n->n, "]"); break;
    case AST_DICT:   /* in parentheses: a '{' after a condition would open a block */
        sb_puts(b, "({");
        for (int i = 0; i < n->n; i++) {
            if (i) sb_puts(b, ", ");
            print_string(b, n->names[i], (int)strlen(n->names[i]));
            sb_puts(b, ": ");
            ast_print_expr(b, n->kids[i]);
        }
        sb_puts(b, "})");
        break;
    case AST_UNARY: sb_printf(b, "(%s", op_text(n->op)); ast_print_expr(b, n->a); sb_puts(b, ")"); break;
    case AST_NOT: sb_puts(b, "(not "); ast_print_expr(b, n->a); sb_puts(b, ")"); break;
    case AST_BINARY:
    case AST_AND:
    case AST_OR:
        sb_puts(b, "(");
        ast_print_expr(b, n->a);
        sb_printf(b, " %s ", n->kind == AST_AND ? "and" : n->kind == AST_OR ? "or" : op_text(n->op));
        ast_print_expr(b, n->b);
        sb_puts(b, ")");
        break;
    case AST_CALL:
        sb_puts(b, "(");
        ast_print_expr(b, n->a);
        sb_puts(b, ")");
        print_call_args(b, n);
        break;
    case AST_INDEX:
        sb_puts(b, "(");
        ast_print_expr(b, n->a);
        print_exprs(b, ")[", n->kids, n->n, "]");
        break;
    case AST_SLICE:
        if (n->a) ast_print_expr(b, n->a);
        sb_puts(b, ":");
        if (n->b) ast_print_expr(b, n->b);
        if (n->c) { sb_puts(b, ":"); ast_print_expr(b, n->c); }
        break;
    case AST_ELLIPSIS: sb_puts(b, "..."); break;
    case AST_FIELD: sb_puts(b, "("); ast_print_expr(b, n->a); sb_printf(b, ").%s", n->str); break;
    case AST_FN: sb_puts(b, "("); print_fn(b, n->proto, NULL, 0); sb_puts(b, ")"); break;
    case AST_COMP: print_comp(b, n); break;
    default: sb_puts(b, "<?>"); break;
    }
}

/* del's target without parentheses around its innermost name: `del` is a keyword only where
 * a name follows it (lang/parse.c, is_del), so `del (d)[k]` would read back as a call. */
static void print_del_target(StrBuf *b, const Node *n) {
    switch (n->kind) {
    case AST_NAME: sb_puts(b, n->str); return;
    case AST_FIELD: print_del_target(b, n->a); sb_printf(b, ".%s", n->str); return;
    case AST_INDEX: print_del_target(b, n->a); print_exprs(b, "[", n->kids, n->n, "]"); return;
    case AST_CALL: print_del_target(b, n->a); print_call_args(b, n); return;
    default: ast_print_expr(b, n); return;
    }
}

static void print_block(StrBuf *b, const Node *blk, int indent) {
    sb_puts(b, "{\n");
    for (int i = 0; i < blk->n; i++) print_stmt(b, blk->kids[i], indent + 1);
    sb_printf(b, "%*s}", indent * 2, "");
}

static void print_stmt(StrBuf *b, const Node *n, int indent) {
    sb_printf(b, "%*s", indent * 2, "");
    switch (n->kind) {
    case AST_EXPR: ast_print_expr(b, n->a); break;
    case AST_ASSIGN:   /* op: the binary operator of an augmented assignment, TOK_EOF for '=' */
        ast_print_expr(b, n->a);
        sb_printf(b, " %s= ", n->op != TOK_EOF ? op_text(n->op) : "");
        ast_print_expr(b, n->b);
        break;
    case AST_IF:
        sb_puts(b, "if ");
        ast_print_expr(b, n->a);
        sb_puts(b, " ");
        print_block(b, n->b, indent);
        if (n->c) {
            sb_puts(b, " else ");
            if (n->c->kind == AST_IF) {
                print_stmt(b, n->c, 0);
                return;
            }
            print_block(b, n->c, indent);
        }
        break;
    case AST_WHILE: sb_puts(b, "while "); ast_print_expr(b, n->a); sb_puts(b, " "); print_block(b, n->b, indent); break;
    case AST_FOR:
        sb_printf(b, "for %s in ", n->a->str);
        ast_print_expr(b, n->b);
        sb_puts(b, " ");
        print_block(b, n->c, indent);
        break;
    case AST_BREAK: sb_puts(b, "break"); break;
    case AST_CONTINUE: sb_puts(b, "continue"); break;
    case AST_RETURN:
        sb_puts(b, "return");
        if (n->a) { sb_puts(b, " "); ast_print_expr(b, n->a); }
        break;
    case AST_BLOCK: print_block(b, n, indent); break;
    case AST_FNDECL: print_fn(b, n->b->proto, n->a->str, indent); break;
    case AST_IMPORT: sb_printf(b, "import %s", n->str); break;
    case AST_DEL: sb_puts(b, "del "); print_del_target(b, n->a); break;
    case AST_STATIC: sb_puts(b, "static "); print_block(b, n->a, indent); break;
    case AST_TRY:
        sb_puts(b, "try ");
        print_block(b, n->a, indent);
        sb_printf(b, " catch %s%s", n->b ? n->b->str : "", n->b ? " " : "");
        print_block(b, n->c, indent);
        break;
    default: ast_print_expr(b, n); break;
    }
    sb_puts(b, "\n");
}

void ast_print_program(StrBuf *b, const Node *prog) {
    for (int i = 0; i < prog->n; i++) print_stmt(b, prog->kids[i], 0);
}
