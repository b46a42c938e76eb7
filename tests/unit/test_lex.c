/* test_lex.c - the re2c lexer: token kinds, positions, literals, and lexical errors. */
#include <string.h>
#include "suites.h"
#include "token.h"

static int lex(const char *src, TokenList *tl) { return lex_source(src, strlen(src), tl); }

START_TEST(lex_kinds_and_positions) {
    TokenList tl;
    ck_assert_int_eq(lex("x = a ** -2 # c\nif", &tl), 0);
    TokKind want[] = { TOK_IDENT, TOK_ASSIGN, TOK_IDENT, TOK_POW, TOK_MINUS, TOK_NUMBER, TOK_NEWLINE, TOK_IF, TOK_EOF };
    ck_assert_int_eq(tl.count, 9);
    for (int i = 0; i < 9; i++) ck_assert_int_eq(tl.toks[i].kind, want[i]);
    ck_assert_int_eq(tl.toks[3].loc.line, 1);
    ck_assert_int_eq(tl.toks[3].loc.col, 7);
    ck_assert_int_eq(tl.toks[7].loc.line, 2);
    ck_assert_int_eq(tl.toks[7].loc.col, 1);
    lex_free(&tl);
}
END_TEST

/* v2 operators: the longest match wins (// before /, //= before //, **= before **) */
START_TEST(lex_operators_v2) {
    TokenList tl;
    ck_assert_int_eq(lex("a//b & c|d ^ ~e += -= *= /= //= %= **= @= &= |= ^= / * **", &tl), 0);
    TokKind want[] = { TOK_IDENT, TOK_SLASHSLASH, TOK_IDENT, TOK_AMP, TOK_IDENT, TOK_PIPE, TOK_IDENT, TOK_CARET,
                       TOK_TILDE, TOK_IDENT, TOK_PLUS_ASSIGN, TOK_MINUS_ASSIGN, TOK_STAR_ASSIGN, TOK_SLASH_ASSIGN,
                       TOK_SLASHSLASH_ASSIGN, TOK_PERCENT_ASSIGN, TOK_POW_ASSIGN, TOK_AT_ASSIGN, TOK_AMP_ASSIGN,
                       TOK_PIPE_ASSIGN, TOK_CARET_ASSIGN, TOK_SLASH, TOK_STAR, TOK_POW, TOK_EOF };
    int n = (int)(sizeof want / sizeof want[0]);
    ck_assert_int_eq(tl.count, n);
    for (int i = 0; i < n; i++) ck_assert_int_eq(tl.toks[i].kind, want[i]);
    lex_free(&tl);
    /* an operator's text comes from its spelling */
    ck_assert_str_eq(tok_symbol(TOK_SLASHSLASH), "//");
    ck_assert_str_eq(tok_symbol(TOK_CARET_ASSIGN), "^=");
    ck_assert_str_eq(tok_symbol(TOK_NOT_IN), "not in");
}
END_TEST

START_TEST(lex_numbers) {
    TokenList tl;
    ck_assert_int_eq(lex("12 1.5 .5 1e-3 0x1F 1_000 2.", &tl), 0);
    double want[] = { 12, 1.5, 0.5, 1e-3, 31, 1000, 2 };
    for (int i = 0; i < 7; i++) {
        ck_assert_int_eq(tl.toks[i].kind, TOK_NUMBER);
        ck_assert_double_eq(tl.toks[i].num, want[i]);
    }
    lex_free(&tl);
}
END_TEST

START_TEST(lex_strings_and_escapes) {
    TokenList tl;
    ck_assert_int_eq(lex("\"a\\n\\t\\\\\\\"\" 'it\\'s' \"\\u{e9}\"", &tl), 0);
    ck_assert_str_eq(tl.toks[0].str, "a\n\t\\\"");
    ck_assert_str_eq(tl.toks[1].str, "it's");
    ck_assert_str_eq(tl.toks[2].str, "\xc3\xa9");
    lex_free(&tl);
}
END_TEST

START_TEST(lex_newlines_inside_brackets) {
    TokenList tl;
    ck_assert_int_eq(lex("f(1,\n2)\n[3\n]\n{\n}", &tl), 0);
    int newlines = 0;
    for (int i = 0; i < tl.count; i++) newlines += tl.toks[i].kind == TOK_NEWLINE;
    /* only the ones after ')', ']', inside '{' and ... : "f(1,\n2)" none inside, then 3 more */
    ck_assert_int_eq(newlines, 3);
    lex_free(&tl);
}
END_TEST

START_TEST(lex_errors) {
    TokenList tl;
    ck_assert_int_eq(lex("x = \"open", &tl), -1);
    ck_assert_str_eq(tl.err, "unterminated string");
    ck_assert_int_eq(tl.err_loc.col, 5);
    lex_free(&tl);
    const char nul[] = "a = 1\nb\0c";
    ck_assert_int_eq(lex_source(nul, sizeof nul - 1, &tl), -1);
    ck_assert_str_eq(tl.err, "NUL byte in source");
    ck_assert_int_eq(tl.err_loc.line, 2);
    ck_assert_int_eq(tl.err_loc.col, 2);
    lex_free(&tl);
    ck_assert_int_eq(lex("x = 1\ny = \"\xff\"", &tl), -1);
    ck_assert_str_eq(tl.err, "invalid UTF-8 in source");
    ck_assert_int_eq(tl.err_loc.line, 2);
    ck_assert_int_eq(tl.err_loc.col, 6);
    lex_free(&tl);
    ck_assert_int_eq(lex("x = 12abc", &tl), -1);
    ck_assert_str_eq(tl.err, "malformed number");
    lex_free(&tl);
    ck_assert_int_eq(lex("x = $", &tl), -1);
    ck_assert_str_eq(tl.err, "unexpected character");
    lex_free(&tl);
    ck_assert_int_eq(lex("'\\q'", &tl), -1);
    ck_assert_str_eq(tl.err, "invalid escape sequence in string");
    lex_free(&tl);
}
END_TEST

Suite *lex_suite(void) {
    Suite *s = suite_create("lexer");
    TCase *tc = tcase_create("tokens");
    tcase_add_test(tc, lex_kinds_and_positions);
    tcase_add_test(tc, lex_operators_v2);
    tcase_add_test(tc, lex_numbers);
    tcase_add_test(tc, lex_strings_and_escapes);
    tcase_add_test(tc, lex_newlines_inside_brackets);
    tcase_add_test(tc, lex_errors);
    suite_add_tcase(s, tc);
    return s;
}
