/* helpers.h - shared by the check suites that drive the interpreter. */
#ifndef TSL_TEST_HELPERS_H
#define TSL_TEST_HELPERS_H
#include <stdio.h>
#include <string.h>
#include <check.h>
#include "interp.h"

/* Runs code in I with stderr silenced; returns interp_run_source's status. */
static inline int run_in(Interp *I, const char *code) {
    FILE *saved = stderr;
    stderr = fopen("/dev/null", "w");
    int rc = interp_run_source(I, "<test>", code, strlen(code), false, NULL);
    fclose(stderr);
    stderr = saved;
    return rc;
}

/* Asserts that code fails with msg; at_line and at_col, where not 0, are where the error
 * points. */
#define ck_assert_fails_with(I, code, msg, at_line, at_col) do {             \
        ck_assert_int_eq(run_in((I), (code)), 1);                             \
        ck_assert_str_eq((I)->err_msg, (msg));                                \
        if ((at_line) != 0) ck_assert_int_eq((I)->err_loc.line, (at_line));   \
        if ((at_col) != 0) ck_assert_int_eq((I)->err_loc.col, (at_col));      \
    } while (0)
#endif
