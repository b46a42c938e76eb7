/* emit_kernels.c [all] - prints CUDA source of the plugin's kernels for running them on the
 * host as C++: by default the sort/pad module (ops/gpu/cuda/gen_sort.c) and the integer-matmul /
 * cuSOLVER-aid module (ops/gpu/cuda/gen_linalg.c), for tests/gpu/emul.sh; with "all" also the
 * prelude, the hand-written families, the convolution/pooling and nn modules (gen_conv.c, gen_nn.c)
 * and every elementwise kernel the generator makes, with
 * ew_register() filling ew_fn[op][dtype][form] (tests/gpu/hostdev.sh). */
#include <stdio.h>
#include <string.h>
#include "cuda/gen.h"
#include "cuda/gen_linalg.h"
#include "cuda/gen_conv.h"
#include "cuda/gen_nn.h"
#include "cuda/gen_sort.h"

static char src[1 << 16];

/* every elementwise kernel, then the function that registers them */
static void emit_ew(void) {
    static char reg[1 << 18];
    size_t len = 0;
    for (int op = 0; op < OP__COUNT; op++)
        for (int dt = DT_BOOL; dt <= DT_F64; dt++)
            for (int f = 0; f < 2; f++) {
                char name[128];
                if (!gen_ew_has((OpCode)op, (DType)dt)) continue;
                if (gen_ew_kernel((OpCode)op, (DType)dt, "cs"[f], name, sizeof name, src, sizeof src)) continue;
                fputs(src, stdout);
                len += (size_t)snprintf(reg + len, sizeof reg - len, "  ew_fn[%d][%d][%d] = %s;\n", op, dt, f, name);
            }
    printf("static void (*ew_fn[%d][4][2])(TslEwArgs);\nstatic void ew_register() {\n%s}\n", (int)OP__COUNT, reg);
}

int main(int argc, char **argv) {
    bool all = argc > 1 && strcmp(argv[1], "all") == 0;
    if (all) {
        fputs(gen_prelude(), stdout);
        fputs(gen_families(), stdout);
        emit_ew();
    }
    fputs(gen_sort_source(), stdout);
    fputs(gen_linalg_source(), stdout);
    if (all) fputs(gen_conv_source(), stdout);
    if (all) fputs(gen_nn_source(), stdout);
    return 0;
}
