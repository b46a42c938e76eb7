/* fuzz_eval.c - whole programs under limits: any outcome but a crash, a sanitizer report or
 * a leak is fine. */
#include <stdint.h>
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) return 0;
    Interp *I = fuzz_interp();
    fuzz_run(I, "<fuzz>", data, size);
    interp_free(I);
    return 0;
}
