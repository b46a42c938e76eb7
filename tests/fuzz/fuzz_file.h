/* fuzz_file.h - for the targets that fuzz a file reader (.npy, .npz, safetensors, CSV): the
 * input written to a file of this process's own, which the reader then opens, under the
 * thread's default ops context with a small tensor limit. */
#ifndef TSL_FUZZ_FILE_H
#define TSL_FUZZ_FILE_H
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "tops.h"
#include "ctx.h"

/* The path of a file holding data, or NULL when it cannot be written. */
static const char *fuzz_file(const char *ext, const uint8_t *data, size_t size) {
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/tsl-fuzz-%d.%s", (int)getpid(), ext);
    ops_ctx()->max_tensor_bytes = 1 << 24;   /* this thread's default ops context */
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    fwrite(data, 1, size, f);
    fclose(f);
    return path;
}
#endif
