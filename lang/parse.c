/* parse.c - recursive-descent parser for TSL (grammar in spec section 2 and 4).
 *
 * Each parse_* function starts with the production it parses. Errors longjmp out to
 * parse_program, which frees the partial tree; every node built so far is reachable
 * from `p->roots` until the parse succeeds. */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include "parse.h"
#include "mem.h"
#include "suggest.h"

typedef struct {
    TokenList tl;
    int pos;
    int depth, max_depth;
    int no_brace;        /* parsing an if/while/for header: '{' opens the block */
    ParseError *err;
    jmp_buf jb;
    Node **pending;      /* every node allocated, freed on error */
    int npending;
} Parser;

static Token *peek(Parser *p) { return &p->tl.toks[p->pos]; }
static Token *peek_at(Parser *p, int k) {
    int i = p->pos + k;
    return &p->tl.toks[i < p->tl.count ? i : p->tl.count - 1];
}
static int check(Parser *p, TokKind k) { return peek(p)->kind == k; }
static Token *advance(Parser *p) {
    Token *t = peek(p);
    if (t->kind != TOK_EOF) p->pos++;
    return t;
}

static void fail_at(Parser *p, Token *t, const char *msg) {
    snprintf(p->err->msg, sizeof p->err->msg, "%s", msg);
    p->err->loc = t->loc;
    p->err->incomplete = t->kind == TOK_EOF;
    longjmp(p->jb, 1);
}

static void fail_expected(Parser *p, const char *what) {
    char msg[200];
    snprintf(msg, sizeof msg, "expected %s, got %s", what, tok_name(peek(p)->kind));
    fail_at(p, peek(p), msg);
}

static Token *expect(Parser *p, TokKind k, const char *what) {
    if (!check(p, k)) fail_expected(p, what);
    return advance(p);
}

static int match(Parser *p, TokKind k) {
    if (!check(p, k)) return 0;
    advance(p);
    return 1;
}

static void skip_newlines(Parser *p) {
    while (check(p, TOK_NEWLINE)) advance(p);
}

/* Grows an array that holds n elements to fit one more, doubling at powers of two (the
 * convention ast_push uses for kids), so long lists of keys or parameters stay linear. */
static void *grow_for(void *arr, int n, size_t elem) {
    if (n && (n & (n - 1))) return arr;
    return mem_realloc(arr, elem * (size_t)(n ? n * 2 : 1));
}

static Node *node(Parser *p, NodeKind k, Token *t) {
    Node *n = ast_new(k, t->loc);
    ast_push(&p->pending, &p->npending, n);
    return n;
}

static void enter(Parser *p) {
    if (++p->depth > p->max_depth) {
        char msg[128];
        snprintf(msg, sizeof msg, "nesting too deep (limit %d, see --max-nesting)", p->max_depth);
        fail_at(p, peek(p), msg);
    }
}
static void leave(Parser *p) { p->depth--; }

static Node *parse_expr(Parser *p);
static Node *parse_block(Parser *p);
static Node *parse_unary(Parser *p);

/* fn_rest := '(' [param (',' param)*] ')' block ; param := IDENT ['=' expr] */
static Node *parse_fn_rest(Parser *p, Token *fn_tok, const Token *name, int is_static) {
    Node *n = node(p, AST_FN, fn_tok);
    FnProto *f = mem_calloc(1, sizeof *f);
    n->proto = f;
    f->name = name ? mem_strndup(name->start, (size_t)name->len) : mem_strndup("", 0);
    f->loc = fn_tok->loc;
    f->is_static = is_static;
    f->plain_arity = -1;   /* until the resolver has seen the body (resolve.c) */
    int saved = p->no_brace;
    p->no_brace = 0;
    expect(p, TOK_LPAREN, "'(' after fn");
    while (!check(p, TOK_RPAREN)) {
        Token *t = expect(p, TOK_IDENT, "parameter name");
        for (int i = 0; i < f->nparams; i++)
            if ((int)strlen(f->params[i]) == t->len && !memcmp(f->params[i], t->start, (size_t)t->len))
                fail_at(p, t, "duplicate parameter name");
        Node *def = NULL;
        if (match(p, TOK_ASSIGN)) def = parse_expr(p);
        else if (f->nparams > 0 && f->defaults[f->nparams - 1])
            fail_at(p, t, "parameter without default follows one with a default");
        f->params = grow_for(f->params, f->nparams, sizeof(char *));
        f->defaults = grow_for(f->defaults, f->nparams, sizeof(Node *));
        f->params[f->nparams] = mem_strndup(t->start, (size_t)t->len);
        f->defaults[f->nparams++] = def;
        if (!match(p, TOK_COMMA)) break;
    }
    expect(p, TOK_RPAREN, "')' after parameters");
    f->body = parse_block(p);
    p->no_brace = saved;
    /* A body whose final statement is an expression returns its value. */
    Node *body = f->body;
    if (body->n > 0 && body->kids[body->n - 1]->kind == AST_EXPR)
        body->kids[body->n - 1]->kind = AST_RETURN;
    return n;
}

static Node *name_node(Parser *p, Token *t);

/* comprehension := '[' expr comp_for+ ']' | '{' expr ':' expr comp_for+ '}'
 * comp_for := 'for' IDENT 'in' expr ('if' expr)*
 * The clauses become the statements they stand for, nested left to right (Python's order):
 * FOR { IF { FOR { COLLECT } } }, so they run with the for statement's own semantics. */
static Node *parse_comprehension(Parser *p, Token *open, Node *key, Node *value) {
    bool dict = open->kind == TOK_LBRACE;
    Node *n = node(p, AST_COMP, open);
    n->op = open->kind;
    Node *add = node(p, AST_COLLECT, open);
    add->loc = key->loc;
    add->a = key;
    add->b = value;
    if (!check(p, TOK_FOR)) fail_at(p, peek(p), "expected 'for' before 'if' in a comprehension");
    Node **hole = &n->a;
    int depth = 0;   /* each clause nests the next: they count against the nesting limit */
    while (check(p, TOK_FOR) || check(p, TOK_IF)) {
        Token *t = advance(p);
        enter(p);
        depth++;
        Node *clause = node(p, t->kind == TOK_FOR ? AST_FOR : AST_IF, t);
        if (t->kind == TOK_FOR) {
            clause->a = name_node(p, expect(p, TOK_IDENT, "loop variable name"));
            expect(p, TOK_IN, "'in'");
        }
        skip_newlines(p);
        Node *head = parse_expr(p);
        Node *body = node(p, AST_BLOCK, t);
        ast_push(&body->kids, &body->n, NULL);
        if (t->kind == TOK_FOR) { clause->b = head; clause->c = body; }
        else { clause->a = head; clause->b = body; }
        *hole = clause;
        hole = &body->kids[0];   /* a block of one statement: never reallocated */
        if (dict) skip_newlines(p);
    }
    *hole = add;
    while (depth--) leave(p);
    expect(p, dict ? TOK_RBRACE : TOK_RBRACKET, dict ? "'}' to close the comprehension" : "']' to close the comprehension");
    return n;
}

/* list := '[' [expr (',' expr)* [',']] ']' | comprehension */
static Node *parse_list(Parser *p, Token *open) {
    Node *first = check(p, TOK_RBRACKET) ? NULL : parse_expr(p);
    if (first && (check(p, TOK_FOR) || check(p, TOK_IF))) return parse_comprehension(p, open, first, NULL);
    Node *n = node(p, AST_LIST, open);
    if (first) {
        ast_push(&n->kids, &n->n, first);
        while (match(p, TOK_COMMA) && !check(p, TOK_RBRACKET)) ast_push(&n->kids, &n->n, parse_expr(p));
    }
    expect(p, TOK_RBRACKET, "']' to close the list");
    return n;
}

/* Whether the dict opened just before the parser's position is a comprehension: a 'for' at
 * its own bracket depth before its first ',' or its '}'. (A literal's keys are names; a
 * comprehension's key is an expression, so this is decided before the key is read.) */
static bool dict_is_comprehension(const Parser *p) {
    int depth = 0;
    for (int i = p->pos; i < p->tl.count; i++) {
        TokKind k = p->tl.toks[i].kind;
        if (k == TOK_LPAREN || k == TOK_LBRACKET || k == TOK_LBRACE) depth++;
        else if (k == TOK_RPAREN || k == TOK_RBRACKET || k == TOK_RBRACE) {
            if (depth-- == 0) return false;
        } else if (depth == 0 && (k == TOK_COMMA || k == TOK_FOR)) return k == TOK_FOR;
    }
    return false;
}

/* dict comprehension := '{' expr ':' expr comp_for+ '}' (newlines allowed between parts) */
static Node *parse_dict_comprehension(Parser *p, Token *open) {
    skip_newlines(p);
    Node *key = parse_expr(p);
    skip_newlines(p);
    expect(p, TOK_COLON, "':' after the key of a dict comprehension");
    skip_newlines(p);
    Node *value = parse_expr(p);
    skip_newlines(p);
    return parse_comprehension(p, open, key, value);
}

/* dict := '{' [key ':' expr (',' key ':' expr)* [',']] '}' | dict comprehension ; key := IDENT | STRING */
static Node *parse_dict(Parser *p, Token *open) {
    if (dict_is_comprehension(p)) return parse_dict_comprehension(p, open);
    Node *n = node(p, AST_DICT, open);
    skip_newlines(p);
    while (!check(p, TOK_RBRACE)) {
        if (check(p, TOK_EOF)) fail_expected(p, "dict key");
        Token *k = peek(p);
        if (k->kind != TOK_IDENT && k->kind != TOK_STRING) fail_expected(p, "dict key (a name or a string)");
        advance(p);
        expect(p, TOK_COLON, "':' after dict key");
        /* key and a placeholder value join the node before anything else can fail, so the
         * error path frees them with it */
        n->names = grow_for(n->names, n->n, sizeof(char *));
        n->names[n->n] = k->kind == TOK_IDENT ? mem_strndup(k->start, (size_t)k->len) : mem_strndup(k->str, (size_t)k->str_len);
        int at = n->n;
        ast_push(&n->kids, &n->n, NULL);
        skip_newlines(p);
        n->kids[at] = parse_expr(p);
        skip_newlines(p);
        if (!match(p, TOK_COMMA)) break;
        skip_newlines(p);
    }
    expect(p, TOK_RBRACE, "'}' to close the dict");
    return n;
}

/* primary := NUMBER | STRING | IDENT | true | false | nil | '(' expr ')' | list | dict
 *          | 'fn' fn_rest */
static Node *parse_primary(Parser *p) {
    if (check(p, TOK_EOF)) fail_expected(p, "an expression");
    Token *t = advance(p);
    Node *n;
    switch (t->kind) {
    case TOK_NUMBER: n = node(p, AST_NUM, t); n->num = t->num; return n;
    case TOK_STRING:
        n = node(p, AST_STR, t);
        n->str = mem_strndup(t->str, (size_t)t->str_len);
        n->str_len = t->str_len;
        return n;
    case TOK_IDENT:
        n = node(p, AST_NAME, t);
        n->str = mem_strndup(t->start, (size_t)t->len);
        return n;
    case TOK_TRUE: return node(p, AST_TRUE, t);
    case TOK_FALSE: return node(p, AST_FALSE, t);
    case TOK_NIL: return node(p, AST_NIL, t);
    case TOK_LPAREN: {
        int saved = p->no_brace;
        p->no_brace = 0;
        n = parse_expr(p);
        expect(p, TOK_RPAREN, "')'");
        p->no_brace = saved;
        return n;
    }
    case TOK_LBRACKET: {
        int saved = p->no_brace;
        p->no_brace = 0;
        n = parse_list(p, t);
        p->no_brace = saved;
        return n;
    }
    case TOK_LBRACE:
        if (p->no_brace) break;
        return parse_dict(p, t);
    case TOK_FN: return parse_fn_rest(p, t, NULL, 0);
    default: break;
    }
    p->pos--;
    fail_expected(p, "an expression");
    return NULL;
}

/* index_item := '...' | [expr] ':' [expr] [':' [expr]] | expr */
static Node *parse_index_item(Parser *p) {
    Token *t = peek(p);
    if (match(p, TOK_ELLIPSIS)) return node(p, AST_ELLIPSIS, t);
    Node *start = NULL;
    if (!check(p, TOK_COLON)) {
        start = parse_expr(p);
        if (!check(p, TOK_COLON)) return start;
    }
    Node *s = node(p, AST_SLICE, t);
    s->a = start;
    advance(p);  /* ':' */
    if (!check(p, TOK_COLON) && !check(p, TOK_COMMA) && !check(p, TOK_RBRACKET)) s->b = parse_expr(p);
    if (match(p, TOK_COLON) && !check(p, TOK_COMMA) && !check(p, TOK_RBRACKET)) s->c = parse_expr(p);
    /* children are owned by the slice node from here on */
    return s;
}

/* call_args := [arg (',' arg)*] ; arg := expr | IDENT '=' expr (keywords last) */
static void parse_call_args(Parser *p, Node *call) {
    while (!check(p, TOK_RPAREN)) {
        if (check(p, TOK_IDENT) && peek_at(p, 1)->kind == TOK_ASSIGN) {
            Token *name = advance(p);
            advance(p);
            for (int i = 0; i < call->nk; i++)
                if ((int)strlen(call->names[i]) == name->len && !memcmp(call->names[i], name->start, (size_t)name->len)) {
                    char msg[200];
                    snprintf(msg, sizeof msg, "keyword argument '%.*s' repeated", name->len > 100 ? 100 : name->len,
                             name->start);
                    fail_at(p, name, msg);
                }
            call->names = grow_for(call->names, call->nk, sizeof(char *));
            call->kw = grow_for(call->kw, call->nk, sizeof(Node *));
            /* counted before the value is parsed, so an error there frees the name */
            int at = call->nk++;
            call->names[at] = mem_strndup(name->start, (size_t)name->len);
            call->kw[at] = NULL;
            call->kw[at] = parse_expr(p);
        } else {
            if (call->nk > 0) fail_at(p, peek(p), "positional argument after keyword argument");
            ast_push(&call->kids, &call->n, parse_expr(p));
        }
        if (!match(p, TOK_COMMA)) break;
    }
}

/* postfix := primary ( '(' call_args ')' | '[' index_item (',' index_item)* ']' | '.' IDENT )* */
static Node *parse_postfix(Parser *p) {
    Node *n = parse_primary(p);
    for (;;) {
        Token *t = peek(p);
        int saved = p->no_brace;
        if (match(p, TOK_LPAREN)) {
            p->no_brace = 0;
            Node *c = node(p, AST_CALL, t);
            c->loc = n->loc;
            c->a = n;
            parse_call_args(p, c);
            expect(p, TOK_RPAREN, "')' to close the call");
            n = c;
        } else if (match(p, TOK_LBRACKET)) {
            p->no_brace = 0;
            Node *ix = node(p, AST_INDEX, t);
            ix->loc = n->loc;
            ix->a = n;
            do {
                ast_push(&ix->kids, &ix->n, parse_index_item(p));
            } while (match(p, TOK_COMMA) && !check(p, TOK_RBRACKET));
            expect(p, TOK_RBRACKET, "']' to close the index");
            n = ix;
        } else if (match(p, TOK_DOT)) {
            Token *name = expect(p, TOK_IDENT, "field name after '.'");
            Node *f = node(p, AST_FIELD, name);
            f->loc = n->loc;
            f->a = n;
            f->str = mem_strndup(name->start, (size_t)name->len);
            n = f;
        } else {
            return n;
        }
        p->no_brace = saved;
    }
}

/* power := postfix ['**' unary]   (right-associative through unary) */
static Node *parse_power(Parser *p) {
    Node *base = parse_postfix(p);
    Token *t = peek(p);
    if (!match(p, TOK_POW)) return base;
    skip_newlines(p);
    enter(p);
    Node *n = node(p, AST_BINARY, t);
    n->loc = base->loc;
    n->op = TOK_POW;
    n->a = base;
    n->b = parse_unary(p);
    leave(p);
    return n;
}

/* unary := ('-' | '~') unary | power */
static Node *parse_unary(Parser *p) {
    Token *t = peek(p);
    if (t->kind != TOK_MINUS && t->kind != TOK_TILDE) return parse_power(p);
    advance(p);
    enter(p);
    Node *n = node(p, AST_UNARY, t);
    n->op = t->kind;
    n->a = parse_unary(p);
    leave(p);
    return n;
}

/* A chain `a + b + c ...` builds a left-deep tree as deep as it is long; evaluating it
 * recurses that deep, so long chains count against the nesting limit (10 links a level). */
static void chain_link(Parser *p, Node *left, Node *n) {
    n->chain = left->chain + 1;
    if (n->chain > p->max_depth * 10) {
        char msg[160];
        snprintf(msg, sizeof msg, "expression too deeply nested: a chain of %d operators (limit %d, see --max-nesting)",
                 n->chain, p->max_depth * 10);
        fail_at(p, peek(p), msg);
    }
}

static Node *binary(Parser *p, Token *op, Node *a, Node *b) {
    Node *n = node(p, AST_BINARY, op);
    chain_link(p, a, n);
    n->loc = a->loc;   /* an expression is located where it begins */
    n->op = op->kind;
    n->a = a;
    n->b = b;
    return n;
}

/* mul := unary (('*' | '/' | '//' | '%' | '@') unary)* */
static Node *parse_mul(Parser *p) {
    Node *n = parse_unary(p);
    for (;;) {
        Token *t = peek(p);
        if (t->kind != TOK_STAR && t->kind != TOK_SLASH && t->kind != TOK_SLASHSLASH && t->kind != TOK_PERCENT &&
            t->kind != TOK_AT)
            return n;
        advance(p);
        skip_newlines(p);
        n = binary(p, t, n, parse_unary(p));
    }
}

/* add := mul (('+' | '-') mul)* */
static Node *parse_add(Parser *p) {
    Node *n = parse_mul(p);
    for (;;) {
        Token *t = peek(p);
        if (t->kind != TOK_PLUS && t->kind != TOK_MINUS) return n;
        advance(p);
        skip_newlines(p);
        n = binary(p, t, n, parse_mul(p));
    }
}

static int is_comparison(TokKind k) {
    return k == TOK_EQ || k == TOK_NE || k == TOK_LT || k == TOK_LE || k == TOK_GT || k == TOK_GE || k == TOK_IN;
}

/* The comparison operator at the parser's position, or TOK_EOF: 'not' 'in' is TOK_NOT_IN. */
static TokKind comparison_at(Parser *p) {
    TokKind k = peek(p)->kind;
    if (is_comparison(k)) return k;
    if (k == TOK_NOT && peek_at(p, 1)->kind == TOK_IN) return TOK_NOT_IN;
    return TOK_EOF;
}

/* cmp := add [cmp_op add]   (non-associative) ; cmp_op := '==' ... '>=' | 'in' | 'not' 'in' */
static Node *parse_cmp(Parser *p) {
    Node *n = parse_add(p);
    Token *t = peek(p);
    TokKind k = comparison_at(p);
    if (k == TOK_EOF) return n;
    advance(p);
    if (k == TOK_NOT_IN) advance(p);
    skip_newlines(p);
    n = binary(p, t, n, parse_add(p));
    n->op = k;
    if (comparison_at(p) != TOK_EOF)
        fail_at(p, peek(p), "comparison operators do not chain; use 'and'");
    return n;
}

/* band := cmp ('&' cmp)* ; bxor := band ('^' band)* ; bor := bxor ('|' bxor)*
 * The three levels differ only in their operator: level 0 is '&' over comparisons. */
static Node *parse_bitwise(Parser *p, int level) {
    static const TokKind ops[] = { TOK_AMP, TOK_CARET, TOK_PIPE };
    Node *n = level ? parse_bitwise(p, level - 1) : parse_cmp(p);
    while (check(p, ops[level])) {
        Token *t = advance(p);
        skip_newlines(p);
        n = binary(p, t, n, level ? parse_bitwise(p, level - 1) : parse_cmp(p));
    }
    return n;
}

/* not := 'not' not | bor */
static Node *parse_not(Parser *p) {
    Token *t = peek(p);
    if (!match(p, TOK_NOT)) return parse_bitwise(p, 2);
    enter(p);
    Node *n = node(p, AST_NOT, t);
    n->a = parse_not(p);
    leave(p);
    return n;
}

/* and := not ('and' not)* ; or := and ('or' and)*: left-associative chains of `kind` nodes */
static Node *parse_logic(Parser *p, TokKind tok, NodeKind kind, Node *(*operand)(Parser *)) {
    Node *n = operand(p);
    while (check(p, tok)) {
        Token *t = advance(p);
        skip_newlines(p);
        Node *x = node(p, kind, t);
        x->loc = n->loc;
        chain_link(p, n, x);
        x->a = n;
        x->b = operand(p);
        n = x;
    }
    return n;
}

static Node *parse_and(Parser *p) { return parse_logic(p, TOK_AND, AST_AND, parse_not); }

static Node *parse_expr(Parser *p) {
    enter(p);
    Node *n = parse_logic(p, TOK_OR, AST_OR, parse_and);
    leave(p);
    return n;
}

/* A condition: the first '{' after it opens the block, never a dict. */
static Node *parse_condition(Parser *p) {
    int saved = p->no_brace;
    p->no_brace = 1;
    Node *n = parse_expr(p);
    p->no_brace = saved;
    return n;
}

static Node *parse_statement(Parser *p);

/* Statements end at a newline, ';', '}' or the end; one that ends with '}' needs none. */
/* A statement that is one name followed by more (`retrun x`, `whiel c { }`): a misspelt
 * keyword when the name is close to one (ops/suggest.h). */
static void fail_misspelt_keyword(Parser *p) {
    static const char *const starts[] = { "fn", "return", "if", "else", "while", "for", "break", "continue",
                                          "static", "import", "try", "catch", NULL };
    Token *name = &p->tl.toks[p->pos - 1];
    TokKind before = p->pos >= 2 ? p->tl.toks[p->pos - 2].kind : TOK_NEWLINE;
    if (name->kind != TOK_IDENT || (p->pos >= 2 && before != TOK_NEWLINE && before != TOK_SEMI && before != TOK_LBRACE &&
                                    before != TOK_RBRACE))
        return;
    char word[SUGGEST_MAX_NAME], hint[SUGGEST_MAX_NAME + 24], msg[300];
    if (name->len >= SUGGEST_MAX_NAME) return;
    memcpy(word, name->start, (size_t)name->len);
    word[name->len] = 0;
    if (!*suggest_among(word, starts, hint, sizeof hint)) return;
    snprintf(msg, sizeof msg, "expected end of statement (newline or ';'), got %s%s", tok_name(peek(p)->kind), hint);
    fail_at(p, peek(p), msg);
}

static void end_statement(Parser *p) {
    if (match(p, TOK_NEWLINE) || match(p, TOK_SEMI) || check(p, TOK_RBRACE) || check(p, TOK_EOF)) return;
    if (p->tl.toks[p->pos - 1].kind == TOK_RBRACE) return;
    fail_misspelt_keyword(p);
    fail_expected(p, "end of statement (newline or ';')");
}

/* block := '{' statement* '}' */
static Node *parse_block(Parser *p) {
    Token *open = expect(p, TOK_LBRACE, "'{' to open a block");
    enter(p);
    Node *b = node(p, AST_BLOCK, open);
    int saved = p->no_brace;
    p->no_brace = 0;
    for (;;) {
        while (match(p, TOK_NEWLINE) || match(p, TOK_SEMI)) {}
        if (check(p, TOK_RBRACE) || check(p, TOK_EOF)) break;
        ast_push(&b->kids, &b->n, parse_statement(p));
    }
    expect(p, TOK_RBRACE, "'}' to close the block");
    p->no_brace = saved;
    leave(p);
    return b;
}

static Node *name_node(Parser *p, Token *t) {
    Node *n = node(p, AST_NAME, t);
    n->str = mem_strndup(t->start, (size_t)t->len);
    return n;
}

/* if := 'if' expr block ['else' (if | block)]   ('else' may start the next line) */
static Node *parse_if(Parser *p, Token *t) {
    Node *n = node(p, AST_IF, t);
    n->a = parse_condition(p);
    n->b = parse_block(p);
    int save = p->pos;
    skip_newlines(p);
    if (match(p, TOK_ELSE)) {
        Token *t2 = peek(p);
        if (match(p, TOK_IF)) n->c = parse_if(p, t2);
        else n->c = parse_block(p);
    } else {
        p->pos = save;
    }
    return n;
}

/* fn_decl := ['static'] 'fn' IDENT fn_rest */
static Node *parse_fn_decl(Parser *p, Token *fn_tok, int is_static) {
    Token *name = expect(p, TOK_IDENT, "function name");
    Node *decl = node(p, AST_FNDECL, name);
    decl->a = name_node(p, name);
    decl->b = parse_fn_rest(p, fn_tok, name, is_static);
    return decl;
}

/* The binary operator of an augmented assignment token ('+=' gives '+'), else TOK_EOF. */
static TokKind augmented_op(TokKind k) {
    switch (k) {
    case TOK_PLUS_ASSIGN: return TOK_PLUS;
    case TOK_MINUS_ASSIGN: return TOK_MINUS;
    case TOK_STAR_ASSIGN: return TOK_STAR;
    case TOK_SLASH_ASSIGN: return TOK_SLASH;
    case TOK_SLASHSLASH_ASSIGN: return TOK_SLASHSLASH;
    case TOK_PERCENT_ASSIGN: return TOK_PERCENT;
    case TOK_POW_ASSIGN: return TOK_POW;
    case TOK_AT_ASSIGN: return TOK_AT;
    case TOK_AMP_ASSIGN: return TOK_AMP;
    case TOK_PIPE_ASSIGN: return TOK_PIPE;
    case TOK_CARET_ASSIGN: return TOK_CARET;
    default: return TOK_EOF;
    }
}

/* `del` is a keyword only where it starts a statement and a name follows on its line (two
 * names in a row are no expression), so a program's variable named del keeps working. */
static bool is_del(Parser *p, Token *t) {
    Token *next = peek_at(p, 1);
    return t->len == 3 && !memcmp(t->start, "del", 3) && next->kind == TOK_IDENT && next->loc.line == t->loc.line;
}

/* del_stmt := 'del' postfix_expr, ending in one index, one slice or a field */
static Node *parse_del(Parser *p, Token *t) {
    advance(p);
    Token *at = peek(p);
    Node *n = node(p, AST_DEL, t);
    n->a = parse_expr(p);
    if (!(n->a->kind == AST_INDEX && n->a->n == 1 && n->a->kids[0]->kind != AST_ELLIPSIS) && n->a->kind != AST_FIELD)
        fail_at(p, at, "del needs an item: d[k], d.k, l[i] or l[a:b]");
    return n;
}

/* try := 'try' block 'catch' [IDENT] block */
static Node *parse_try(Parser *p, Token *t) {
    Node *n = node(p, AST_TRY, t);
    n->a = parse_block(p);
    skip_newlines(p);
    expect(p, TOK_CATCH, "'catch'");
    if (check(p, TOK_IDENT)) n->b = name_node(p, advance(p));
    n->c = parse_block(p);
    return n;
}

/* statement := fn_decl | 'static' (fn_decl | block) | if | while | for | try | break | continue
 *            | return | import | del_stmt | expr [('=' | aug_op) expr] ; aug_op := '+=' '-=' ... '^=' */
static Node *parse_statement(Parser *p) {
    Token *t = peek(p);
    Node *n;
    switch (t->kind) {
    case TOK_FN:
        if (peek_at(p, 1)->kind != TOK_IDENT) goto expression;
        advance(p);
        n = parse_fn_decl(p, t, 0);
        break;
    case TOK_STATIC:
        advance(p);
        if (check(p, TOK_FN)) {
            Token *f = advance(p);
            n = parse_fn_decl(p, f, 1);
        } else {
            n = node(p, AST_STATIC, t);
            n->a = parse_block(p);
        }
        break;
    case TOK_IF: advance(p); n = parse_if(p, t); break;
    case TOK_WHILE:
        advance(p);
        n = node(p, AST_WHILE, t);
        n->a = parse_condition(p);
        n->b = parse_block(p);
        break;
    case TOK_FOR: {
        advance(p);
        n = node(p, AST_FOR, t);
        n->a = name_node(p, expect(p, TOK_IDENT, "loop variable name"));
        expect(p, TOK_IN, "'in'");
        n->b = parse_condition(p);
        n->c = parse_block(p);
        break;
    }
    case TOK_TRY: advance(p); n = parse_try(p, t); break;
    case TOK_BREAK: advance(p); n = node(p, AST_BREAK, t); break;
    case TOK_CONTINUE: advance(p); n = node(p, AST_CONTINUE, t); break;
    case TOK_RETURN:
        advance(p);
        n = node(p, AST_RETURN, t);
        if (!check(p, TOK_NEWLINE) && !check(p, TOK_SEMI) && !check(p, TOK_RBRACE) && !check(p, TOK_EOF))
            n->a = parse_expr(p);
        break;
    case TOK_IMPORT: {
        advance(p);
        Token *name = expect(p, TOK_IDENT, "module name");
        n = node(p, AST_IMPORT, t);
        n->a = name_node(p, name);
        n->str = mem_strndup(name->start, (size_t)name->len);
        break;
    }
    case TOK_IDENT:
        if (is_del(p, t)) { n = parse_del(p, t); break; }
        goto expression;
    default:
    expression: {
        Node *e = parse_expr(p);
        Token *eq = peek(p);
        TokKind aug = augmented_op(eq->kind);
        if (match(p, TOK_ASSIGN) || (aug != TOK_EOF && advance(p))) {
            if (e->kind != AST_NAME && e->kind != AST_INDEX && e->kind != AST_FIELD)
                fail_at(p, eq, "cannot assign to this expression");
            skip_newlines(p);
            n = node(p, AST_ASSIGN, eq);
            n->op = aug;   /* TOK_EOF (0) for a plain '=' */
            n->a = e;
            n->b = parse_expr(p);
        } else {
            n = node(p, AST_EXPR, t);
            n->a = e;
            n->loc = e->loc;
        }
    }
    }
    end_statement(p);
    return n;
}

Node *parse_program(const char *src, size_t len, int max_nesting, ParseError *err) {
    Parser *p = mem_calloc(1, sizeof *p);
    memset(err, 0, sizeof *err);
    p->err = err;
    p->max_depth = max_nesting;
    Node *result = NULL;
    if (lex_source(src, len, &p->tl) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s", p->tl.err);
        err->loc = p->tl.err_loc;
        err->incomplete = p->tl.at_eof;
        goto done;
    }
    if (setjmp(p->jb)) {
        /* Every node built so far is in `pending`: free each one without its children. */
        for (int i = 0; i < p->npending; i++) ast_free_shallow(p->pending[i]);
        result = NULL;
        goto done;
    }
    Token *first = peek(p);
    Node *prog = node(p, AST_BLOCK, first);
    for (;;) {
        while (match(p, TOK_NEWLINE) || match(p, TOK_SEMI)) {}
        if (check(p, TOK_EOF)) break;
        if (check(p, TOK_RBRACE)) fail_at(p, peek(p), "unexpected '}'");
        ast_push(&prog->kids, &prog->n, parse_statement(p));
    }
    result = prog;
done:
    mem_free(p->pending);
    lex_free(&p->tl);
    mem_free(p);
    return result;
}
