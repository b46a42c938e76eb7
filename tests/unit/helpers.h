/* helpers.h - shared by the check suites that drive the interpreter. */
#ifndef TSL_TEST_HELPERS_H
#define TSL_TEST_HELPERS_H
#include <stdio.h>
#include <string.h>
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
#endif
