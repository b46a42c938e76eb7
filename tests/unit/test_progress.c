/* test_progress.c - lang/progress.c: the bar's text, as tqdm writes it (issue 29). */
#include <string.h>
#include "helpers.h"
#include "progress.h"

START_TEST(progress_format_bar) {
    char buf[200];
    /* 4 of 10 in 2 s: 2 it/s, 3 s left, 40% of a 24-wide bar is 9 marks */
    progress_format(buf, sizeof buf, "train", 4, 10, 2.0);
    ck_assert_str_eq(buf, "train:  40%|#########               | 4/10 [00:02<00:03, 2.00it/s]");
    progress_format(buf, sizeof buf, "", 10, 10, 3725.0);
    ck_assert_str_eq(buf, "100%|########################| 10/10 [1:02:05<00:00, 372.50s/it]");
}
END_TEST

START_TEST(progress_format_edges) {
    char buf[200];
    progress_format(buf, sizeof buf, "x", 0, 5, 0.0);   /* nothing done yet: no rate, no ETA */
    ck_assert_str_eq(buf, "x:   0%|                        | 0/5 [00:00<?, ?it/s]");
    progress_format(buf, sizeof buf, "x", 7, 0, 1.0);   /* an empty total: a count only */
    ck_assert_str_eq(buf, "x: 7it [00:01, 7.00it/s]");
    progress_format(buf, sizeof buf, "x", 12, 10, 1.0); /* past total (total= was small): full bar */
    ck_assert(strstr(buf, "100%|########################| 12/10 [00:01<?, 12.00it/s]"));
}
END_TEST

Suite *progress_suite(void) {
    Suite *s = suite_create("progress");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, progress_format_bar);
    tcase_add_test(tc, progress_format_edges);
    suite_add_tcase(s, tc);
    return s;
}
