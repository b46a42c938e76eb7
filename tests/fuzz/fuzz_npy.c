/* fuzz_npy.c - the .npy reader on arbitrary files: a tensor or an error, never a crash. */
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("npy", data, size);
    if (path) tensor_release(npy_load(path));
    return 0;
}
