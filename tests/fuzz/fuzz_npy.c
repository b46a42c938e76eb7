/* fuzz_npy.c - the .npy reader on arbitrary files: a tensor or an error, never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "tops.h"
#include "ctx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/tsl-fuzz-npy-%d.npy", (int)getpid());
    ops_ctx()->max_tensor_bytes = 1 << 24;   /* this thread's default ops context */
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    Tensor *t = npy_load(path);
    tensor_release(t);
    return 0;
}
