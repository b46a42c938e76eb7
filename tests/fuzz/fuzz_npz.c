/* fuzz_npz.c - the .npz reader (libzip, then the .npy reader on each member) on arbitrary
 * files: tensors or an error, never a crash. */
#include "fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("npz", data, size);
    NamedTensors nt;
    if (path && npz_load(path, &nt) == 0) named_free(&nt);
    return 0;
}
