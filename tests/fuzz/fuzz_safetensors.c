/* fuzz_safetensors.c - the safetensors reader on arbitrary files: tensors or an error, never
 * a crash. */
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("safetensors", data, size);
    NamedTensors nt;
    if (path && safetensors_load(path, &nt) == 0) named_free(&nt);
    return 0;
}
