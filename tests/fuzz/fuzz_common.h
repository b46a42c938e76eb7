/* fuzz_common.h - shared set-up for the libFuzzer targets: an interpreter with tight limits
 * (depth, nesting, operations, tensor bytes, live memory) and no file access. */
#ifndef TSL_FUZZ_COMMON_H
#define TSL_FUZZ_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"

static Interp *fuzz_interp(void) {
    Interp *I = interp_new();
    if (!I) abort();
    I->max_depth = 200;
    I->max_nesting = 200;
    I->max_ops = 20000;
    I->sandbox = true;
    I->opsctx->max_tensor_bytes = 1 << 20;
    /* 4 MiB also caps the text str/print may make (a shared list prints 2^n elements), so
     * one input stays well inside libFuzzer's time limit under full instrumentation */
    I->opsctx->max_live = 4 << 20;
    return I;
}

/* Runs a script silently; returns interp_run_source's status. */
static int fuzz_run(Interp *I, const char *name, const uint8_t *data, size_t size) {
    static FILE *null_out;
    if (!null_out) null_out = fopen("/dev/null", "w");
    FILE *so = stdout, *se = stderr;
    stdout = stderr = null_out;
    int rc = interp_run_source(I, name, (const char *)data, size, false, NULL);
    stdout = so;
    stderr = se;
    return rc;
}
#endif
