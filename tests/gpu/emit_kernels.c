/* emit_kernels.c - prints the CUDA source of the sort/pad module (ops/cuda/gen_sort.c) and of
 * the integer-matmul / cuSOLVER-aid module (ops/cuda/gen_linalg.c), for tests/gpu/emul.sh,
 * which compiles it as host C++ and runs it on the CPU. */
#include <stdio.h>
#include "cuda/gen_linalg.h"
#include "cuda/gen_sort.h"

int main(void) {
    fputs(gen_sort_source(), stdout);
    fputs(gen_linalg_source(), stdout);
    return 0;
}
