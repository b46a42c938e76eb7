/* test_parse.c - the parser: precedence, statements, locations and syntax errors. */
#include <string.h>
#include "suites.h"
#include "parse.h"
#include "ast_print.h"

static Node *parse(const char *src, ParseError *e) { return parse_program(src, strlen(src), 1000, e); }

START_TEST(parse_precedence) {
    ParseError e;
    Node *p = parse("1 + 2 * 3 ** -1", &e);
    ck_assert_ptr_nonnull(p);
    Node *add = p->kids[0]->a;
    ck_assert_int_eq(add->kind, AST_BINARY);
    ck_assert_int_eq(add->op, TOK_PLUS);
    ck_assert_int_eq(add->b->op, TOK_STAR);
    Node *pow = add->b->b;
    ck_assert_int_eq(pow->op, TOK_POW);
    ck_assert_int_eq(pow->b->kind, AST_UNARY);
    ast_free(p);
    /* -2 ** 2 is -(2 ** 2); not binds looser than comparison */
    p = parse("-2 ** 2\nnot a == b\na or b and c", &e);
    ck_assert_int_eq(p->kids[0]->a->kind, AST_UNARY);
    ck_assert_int_eq(p->kids[0]->a->a->op, TOK_POW);
    ck_assert_int_eq(p->kids[1]->a->kind, AST_NOT);
    ck_assert_int_eq(p->kids[1]->a->a->op, TOK_EQ);
    ck_assert_int_eq(p->kids[2]->a->kind, AST_OR);
    ck_assert_int_eq(p->kids[2]->a->b->kind, AST_AND);
    ast_free(p);
}
END_TEST

/* v2: or < and < not < | < ^ < & < comparisons and in / not in < + - < * / // % @ < unary - ~ < ** */
START_TEST(parse_precedence_v2) {
    ParseError e;
    Node *p = parse("x > 0 & x < 5\na | b ^ c & d\nnot a | b\na + b in c\nx not in y == z", &e);
    ck_assert_ptr_null(p);   /* 'in' does not chain with '==' */
    ck_assert_str_eq(e.msg, "comparison operators do not chain; use 'and'");
    ck_assert_int_eq(e.loc.line, 5);
    ck_assert_int_eq(e.loc.col, 12);
    p = parse("x > 0 & x < 5\na | b ^ c & d\nnot a | b\na + b in c\nx not in y\na or b | c", &e);
    ck_assert_msg(p != NULL, "%s", e.msg);
    Node *n = p->kids[0]->a;   /* (x > 0) & (x < 5) */
    ck_assert_int_eq(n->op, TOK_AMP);
    ck_assert_int_eq(n->a->op, TOK_GT);
    ck_assert_int_eq(n->b->op, TOK_LT);
    n = p->kids[1]->a;         /* a | (b ^ (c & d)) */
    ck_assert_int_eq(n->op, TOK_PIPE);
    ck_assert_int_eq(n->b->op, TOK_CARET);
    ck_assert_int_eq(n->b->b->op, TOK_AMP);
    n = p->kids[2]->a;         /* not (a | b) */
    ck_assert_int_eq(n->kind, AST_NOT);
    ck_assert_int_eq(n->a->op, TOK_PIPE);
    n = p->kids[3]->a;         /* (a + b) in c */
    ck_assert_int_eq(n->op, TOK_IN);
    ck_assert_int_eq(n->a->op, TOK_PLUS);
    ck_assert_int_eq(p->kids[4]->a->op, TOK_NOT_IN);
    n = p->kids[5]->a;         /* a or (b | c) */
    ck_assert_int_eq(n->kind, AST_OR);
    ck_assert_int_eq(n->b->op, TOK_PIPE);
    ast_free(p);
    /* a // b * c is (a // b) * c; -a // b is (-a) // b; ~a ** b is ~(a ** b); a & b == c is a & (b == c) */
    p = parse("a // b * c\n-a // b\n~a ** b\na & b == c\na - b | c + d\n~~a", &e);
    ck_assert_msg(p != NULL, "%s", e.msg);
    n = p->kids[0]->a;
    ck_assert_int_eq(n->op, TOK_STAR);
    ck_assert_int_eq(n->a->op, TOK_SLASHSLASH);
    n = p->kids[1]->a;
    ck_assert_int_eq(n->op, TOK_SLASHSLASH);
    ck_assert_int_eq(n->a->kind, AST_UNARY);
    n = p->kids[2]->a;
    ck_assert_int_eq(n->kind, AST_UNARY);
    ck_assert_int_eq(n->op, TOK_TILDE);
    ck_assert_int_eq(n->a->op, TOK_POW);
    n = p->kids[3]->a;
    ck_assert_int_eq(n->op, TOK_AMP);
    ck_assert_int_eq(n->b->op, TOK_EQ);
    n = p->kids[4]->a;
    ck_assert_int_eq(n->op, TOK_PIPE);
    ck_assert_int_eq(n->a->op, TOK_MINUS);
    ck_assert_int_eq(n->b->op, TOK_PLUS);
    n = p->kids[5]->a;
    ck_assert_int_eq(n->op, TOK_TILDE);
    ck_assert_int_eq(n->a->op, TOK_TILDE);
    ast_free(p);
}
END_TEST

/* t op= e: an ASSIGN whose op is the binary operator; '=' alone has op TOK_EOF */
START_TEST(parse_augmented_assignment) {
    ParseError e;
    static const struct { const char *src; int op; } cases[] = {
        { "x += 1", TOK_PLUS }, { "x -= 1", TOK_MINUS }, { "x *= 1", TOK_STAR }, { "x /= 1", TOK_SLASH },
        { "x //= 1", TOK_SLASHSLASH }, { "x %= 1", TOK_PERCENT }, { "x **= 1", TOK_POW }, { "x @= 1", TOK_AT },
        { "x &= 1", TOK_AMP }, { "x |= 1", TOK_PIPE }, { "x ^= 1", TOK_CARET }, { "x = 1", TOK_EOF },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Node *p = parse(cases[i].src, &e);
        ck_assert_msg(p != NULL, "%s: %s", cases[i].src, e.msg);
        ck_assert_int_eq(p->kids[0]->kind, AST_ASSIGN);
        ck_assert_int_eq(p->kids[0]->op, cases[i].op);
        ast_free(p);
    }
    Node *p = parse("a[i, 1:] += b | c\nd.k //=\n  2", &e);
    ck_assert_msg(p != NULL, "%s", e.msg);
    ck_assert_int_eq(p->kids[0]->a->kind, AST_INDEX);
    ck_assert_int_eq(p->kids[0]->b->op, TOK_PIPE);
    ck_assert_int_eq(p->kids[1]->a->kind, AST_FIELD);
    ck_assert_int_eq(p->kids[1]->op, TOK_SLASHSLASH);
    ast_free(p);
    ck_assert_ptr_null(parse("f(x) += 1", &e));
    ck_assert_str_eq(e.msg, "cannot assign to this expression");
    ck_assert_ptr_null(parse("x += y += 1", &e));
}
END_TEST

START_TEST(parse_statements) {
    ParseError e;
    Node *p = parse("fn f(a, b=2) { a + b }\nif a { return 1 } return 2\nx[1, 2:3, ...] = d.k\n"
                    "for i in range(3) { continue }; while x { break }\nstatic { y = 1 }\nimport nn\n"
                    "if c {\n}\nelse { z = {a: 1, \"b c\": 2} }",
                    &e);
    ck_assert_msg(p != NULL, "%s", e.msg);
    ck_assert_int_eq(p->n, 9);
    ck_assert_int_eq(p->kids[0]->kind, AST_FNDECL);
    FnProto *f = p->kids[0]->b->proto;
    ck_assert_int_eq(f->nparams, 2);
    ck_assert_ptr_nonnull(f->defaults[1]);
    ck_assert_int_eq(f->body->kids[0]->kind, AST_RETURN);   /* final expression returns */
    ck_assert_int_eq(p->kids[1]->kind, AST_IF);
    ck_assert_int_eq(p->kids[2]->kind, AST_RETURN);
    ck_assert_int_eq(p->kids[3]->kind, AST_ASSIGN);
    ck_assert_int_eq(p->kids[3]->a->n, 3);
    ck_assert_int_eq(p->kids[3]->a->kids[1]->kind, AST_SLICE);
    ck_assert_int_eq(p->kids[3]->a->kids[2]->kind, AST_ELLIPSIS);
    ck_assert_int_eq(p->kids[6]->kind, AST_STATIC);
    ck_assert_int_eq(p->kids[7]->kind, AST_IMPORT);
    ck_assert_ptr_nonnull(p->kids[8]->c);
    ast_free(p);
}
END_TEST

START_TEST(parse_brace_after_condition_opens_block) {
    ParseError e;
    Node *p = parse("if x {a: 1}", &e);
    /* `{a: 1}` is the block (a statement `a` followed by ':' is an error), never a dict */
    ck_assert_ptr_null(p);
    p = parse("if f({a: 1}) { y = 1 }", &e);
    ck_assert_ptr_nonnull(p);
    ast_free(p);
}
END_TEST

START_TEST(parse_errors) {
    ParseError e;
    ck_assert_ptr_null(parse("a < b < c", &e));
    ck_assert_str_eq(e.msg, "comparison operators do not chain; use 'and'");
    ck_assert_int_eq(e.loc.col, 7);
    ck_assert_ptr_null(parse("x = (1 +", &e));
    ck_assert_int_eq(e.incomplete, 1);
    ck_assert_ptr_null(parse("fn f() {\n  x = 1\n", &e));
    ck_assert_int_eq(e.incomplete, 1);
    ck_assert_ptr_null(parse("1 + = 2", &e));
    ck_assert_int_eq(e.incomplete, 0);
    ck_assert_ptr_null(parse("f(a=1, 2)", &e));
    ck_assert_str_eq(e.msg, "positional argument after keyword argument");
    ck_assert_ptr_null(parse("1 = 2", &e));
    ck_assert_str_eq(e.msg, "cannot assign to this expression");
    ck_assert_ptr_null(parse("x = 1 y = 2", &e));
}
END_TEST

START_TEST(parse_nesting_limit) {
    char src[5000];
    int n = 0;
    for (int i = 0; i < 2000; i++) src[n++] = '(';
    src[n++] = '1';
    for (int i = 0; i < 2000; i++) src[n++] = ')';
    src[n] = 0;
    ParseError e;
    ck_assert_ptr_null(parse_program(src, (size_t)n, 1000, &e));
    ck_assert_msg(strstr(e.msg, "nesting too deep") != NULL, "%s", e.msg);
    Node *p = parse_program(src, (size_t)n, 5000, &e);
    ck_assert_ptr_nonnull(p);
    ast_free(p);
}
END_TEST

/* print(parse(s)) parses back to the same tree: printing it again gives the same text. */
START_TEST(parse_print_round_trip) {
    const char *src = "import nn\nfn f(a, b=2 ** -1) { if a < b { return -a } else if not a { return {k: [1, \"x\\n\"]} }\n b }\n"
                      "static fn g(t) { return t[1:, ..., ::-1] @ t.T }\nfor i in range(3) { while i { break } }\n"
                      "x = f(1, b=3)(2)[0].y and nil or 1e999\nstatic { z = fn(q) { q % 2 } }\nd.k = 0x1F\n"
                      "m = x > 0 & x < 5 | ~y ^ a // b\nk = a in b and c not in d\nx += 1; t[0, :] //= 2; d.k **= -1\n"
                      "x -= 1; x *= 2; x /= 3; x %= 4; x @= y; x &= y; x |= y; x ^= ~y\n"
                      "del n[-4]\ndel d.a.b[f(x, k=2)][0]\ndel g(1)[2]\ndel l[1:2]\n"   /* del's name first (the fuzzer) */
                      "try { error(\"e\") } catch e { raise(e) }\n";
    ParseError e;
    Node *a = parse_program(src, strlen(src), 1000, &e);
    ck_assert_msg(a != NULL, "%s", e.msg);
    StrBuf p1 = { 0 }, p2 = { 0 };
    sb_putn(&p1, "", 0);
    sb_putn(&p2, "", 0);
    ast_print_program(&p1, a);
    Node *b = parse_program(p1.s, p1.len, 1000, &e);
    ck_assert_msg(b != NULL, "%s: %s", e.msg, p1.s);
    ast_print_program(&p2, b);
    ck_assert_str_eq(p1.s, p2.s);
    ck_assert_int_eq(a->n, b->n);
    sb_free(&p1);
    sb_free(&p2);
    ast_free(a);
    ast_free(b);
}
END_TEST

/* Comprehensions: clauses left to right, printed back as written, round-tripping; an open one
 * is incomplete input (the REPL reads on), an `if` before any `for` is an error. */
START_TEST(parse_comprehension) {
    const char *src = "a = [x * y for x in xs if x for y in f(x) if y != x]\n"
                      "for k in ({k + \"!\": [v for v in k] for k in d}) { }\n";
    ParseError e;
    Node *a = parse_program(src, strlen(src), 1000, &e);
    ck_assert_msg(a != NULL, "%s", e.msg);
    Node *c = a->kids[0]->b;
    ck_assert_int_eq(c->kind, AST_COMP);
    ck_assert_int_eq(c->a->kind, AST_FOR);                  /* for x */
    ck_assert_int_eq(c->a->c->kids[0]->kind, AST_IF);       /* if x */
    ck_assert_str_eq(c->a->c->kids[0]->b->kids[0]->a->str, "y");   /* for y */
    StrBuf p1 = { 0 }, p2 = { 0 };
    sb_putn(&p1, "", 0);
    sb_putn(&p2, "", 0);
    ast_print_program(&p1, a);
    ck_assert_msg(strstr(p1.s, "a = [(x * y) for x in xs if x for y in (f)(x) if (y != x)]") != NULL, "%s", p1.s);
    ck_assert_msg(strstr(p1.s, "({(k + \"!\"): [v for v in k] for k in d})") != NULL, "%s", p1.s);
    Node *b = parse_program(p1.s, p1.len, 1000, &e);
    ck_assert_msg(b != NULL, "%s: %s", e.msg, p1.s);
    ast_print_program(&p2, b);
    ck_assert_str_eq(p1.s, p2.s);
    sb_free(&p1);
    sb_free(&p2);
    ast_free(a);
    ast_free(b);
    ck_assert_ptr_null(parse_program("[x for x in xs", 14, 1000, &e));
    ck_assert_int_eq(e.incomplete, 1);
    ck_assert_ptr_null(parse_program("{k: 1 for k in", 14, 1000, &e));
    ck_assert_int_eq(e.incomplete, 1);
    ck_assert_ptr_null(parse_program("[x if x]", 8, 1000, &e));
    ck_assert_str_eq(e.msg, "expected 'for' before 'if' in a comprehension");
    ck_assert_int_eq(e.loc.col, 4);
}
END_TEST

Suite *parse_suite(void) {
    Suite *s = suite_create("parser");
    TCase *tc = tcase_create("grammar");
    tcase_add_test(tc, parse_precedence);
    tcase_add_test(tc, parse_precedence_v2);
    tcase_add_test(tc, parse_augmented_assignment);
    tcase_add_test(tc, parse_statements);
    tcase_add_test(tc, parse_brace_after_condition_opens_block);
    tcase_add_test(tc, parse_errors);
    tcase_add_test(tc, parse_nesting_limit);
    tcase_add_test(tc, parse_print_round_trip);
    tcase_add_test(tc, parse_comprehension);
    suite_add_tcase(s, tc);
    return s;
}
