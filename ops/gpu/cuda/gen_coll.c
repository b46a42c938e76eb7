/* gen_coll.c - the ordered combine of allreduce on the GPU (see gen_coll.h). */
#include <stdio.h>
#include "gen.h"
#include "gen_coll.h"

int gen_rank_combine_has(RedOp r, DType dt) {
    if (dt != DT_I64 && dt != DT_F32 && dt != DT_F64) return 0;
    return r != REDOP_MEAN || dt != DT_I64;
}

/* acc := acc op b, as COMBINE in ops/cpu/collective.c (max/min: NaN wins) */
static const char *combine_expr(RedOp r) {
    switch (r) {
    case REDOP_MAX: return "b > acc || b != b ? b : acc";
    case REDOP_MIN: return "b < acc || b != b ? b : acc";
    default: return "acc + b";
    }
}

int gen_rank_combine_kernel(RedOp r, DType dt, char *name, size_t nn, char *src, size_t ns) {
    static const char *const ops[] = { "sum", "mean", "max", "min" };
    if (!gen_rank_combine_has(r, dt)) return -1;
    const char *T = gen_dtype_ctype(dt);
    int w = snprintf(name, nn, "tsl_rank_%s_%s", ops[r], gen_dtype_suffix(dt));
    if (w < 0 || (size_t)w >= nn) return -1;
    /* one thread per element walks the ranks in order: every step rounds to T, as the CPU's
     * stores to out[] do (compiled with --fmad=false, so nothing is contracted) */
    w = snprintf(src, ns,
                 "extern \"C\" __global__ void %s(const %s *parts, %s *out, long long count, int size) {\n"
                 "  for (long long i = tsl_tid(); i < count; i += tsl_nthreads()) {\n"
                 "    %s acc = parts[i];\n"
                 "    for (int k = 1; k < size; k++) { %s b = parts[(long long)k * count + i]; acc = %s; }\n"
                 "    out[i] = %s;\n"
                 "  }\n"
                 "}\n",
                 name, T, T, T, T, combine_expr(r), r == REDOP_MEAN ? "acc / (decltype(acc))size" : "acc");
    return w < 0 || (size_t)w >= ns ? -1 : 0;
}
