/* test_suggest.c - ops/suggest.h, the "did you mean" helper (issue 30). Expected answers are
 * hand-counted edits under Python 3.12's rule for its suggestions: at most
 * (len(a) + len(b) + 3) / 6 edits (here capped at 2), a swap of neighbours one edit. */
#include <string.h>
#include "suites.h"
#include "suggest.h"

static const char *among(const char *name, const char *const *known) {
    static char buf[128];
    return suggest_among(name, known, buf, sizeof buf);
}

START_TEST(suggest_close_names) {
    const char *const ops[] = { "sum", "softmax", "softplus", "shape", "axis", NULL };
    ck_assert_str_eq(among("softmx", ops), "; did you mean 'softmax'?");     /* one deletion */
    ck_assert_str_eq(among("sfotmax", ops), "; did you mean 'softmax'?");    /* one swap */
    ck_assert_str_eq(among("shpe", ops), "; did you mean 'shape'?");
    ck_assert_str_eq(among("axsi", ops), "; did you mean 'axis'?");          /* (4+4+3)/6 = 1 edit */
}
END_TEST

START_TEST(suggest_none_when_far_or_short) {
    const char *const ops[] = { "sum", "mean", "x", NULL };
    ck_assert_str_eq(among("y", ops), "");          /* one letter: 0 edits allowed */
    ck_assert_str_eq(among("prod", ops), "");       /* 4 edits from mean */
    ck_assert_str_eq(among("sum", ops), "");        /* the name itself is never suggested */
    ck_assert_str_eq(among("xs", ops), "; did you mean 'x'?");   /* (2+1+3)/6 = 1 edit: one deletion */
}
END_TEST

START_TEST(suggest_first_of_equals_wins) {
    const char *const ks[] = { "abcd", "abce", NULL };
    ck_assert_str_eq(among("abcf", ks), "; did you mean 'abcd'?");
    Suggest s;
    suggest_init(&s, "linaer");
    suggest_offer(&s, "linear");
    suggest_offer(&s, "line");
    char buf[64];
    ck_assert_str_eq(suggest_text(&s, buf, sizeof buf), "; did you mean 'linear'?");
}
END_TEST

START_TEST(suggest_pytorch_names) {
    const char *const kws[] = { "t", "axis", "keepdims", NULL };
    ck_assert_str_eq(among("dim", kws), "; did you mean 'axis'?");          /* 4 edits, a synonym */
    const char *const ops[] = { "concat", "expand_dims", "reshape", "clip", "astype", NULL };
    ck_assert_str_eq(among("cat", ops), "; did you mean 'concat'?");
    ck_assert_str_eq(among("unsqueeze", ops), "; did you mean 'expand_dims'?");
    ck_assert_str_eq(among("view", ops), "; did you mean 'reshape'?");
    ck_assert_str_eq(among("long", ops), "; did you mean 'astype'?");
    const char *const none[] = { "sum", "mean", NULL };
    ck_assert_str_eq(among("dim", none), "");       /* only a name that is offered */
}
END_TEST

Suite *suggest_suite(void) {
    Suite *s = suite_create("suggest");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, suggest_close_names);
    tcase_add_test(tc, suggest_none_when_far_or_short);
    tcase_add_test(tc, suggest_first_of_equals_wins);
    tcase_add_test(tc, suggest_pytorch_names);
    suite_add_tcase(s, tc);
    return s;
}
