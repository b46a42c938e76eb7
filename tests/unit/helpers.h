/* helpers.h - shared by the check suites that drive the interpreter. */
#ifndef TSL_TEST_HELPERS_H
#define TSL_TEST_HELPERS_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* Makes a new, empty file of this test's own under $TMPDIR (or /tmp) and writes its name into
 * path: never a fixed name, which two runs at once would share and where a file left by an
 * earlier run could make a test pass. The caller unlinks it. */
static inline void tmp_file(char *path, size_t n, const char *suffix) {
    const char *dir = getenv("TMPDIR");
    snprintf(path, n, "%s/tsl_test_XXXXXX%s", dir && *dir ? dir : "/tmp", suffix);
    int fd = mkstemps(path, (int)strlen(suffix));
    ck_assert_msg(fd >= 0, "cannot make a file like %s", path);
    close(fd);
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
