/* fuzz_static.c - differential: the input runs with every static block verified against
 * eager execution (--verify-static); a verification failure is a bug. */
#include <stdint.h>
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    Interp *I = fuzz_interp();
    I->verify_static = true;
    int rc = fuzz_run(I, "<fuzz>", data, size);
    if (rc == 1 && strstr(I->err_msg, "verify-static:")) {
        fprintf(stderr, "eager and static differ: %s\n", I->err_msg);
        abort();
    }
    interp_free(I);
    return 0;
}
