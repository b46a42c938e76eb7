/* ptx_check.c - compiles every kernel the CUDA generator (ops/gpu/cuda/gen.c) can produce with
 * NVRTC to PTX, with the options the plugin uses; fails on any compile error. NVRTC needs
 * no GPU, so this runs in `make test` wherever the CUDA toolkit is installed.
 *
 * Covered: each elementwise op of the table in each compute dtype it is defined for, in
 * both launch forms (contiguous and strided broadcast); fused chains (the tanh-GELU of the
 * benchmarks, a bias + relu, chains with comparisons and numbers) in f32 and f64; and the
 * hand-written families (reductions, softmax, astype, strided copies, Philox); and allreduce's
 * ordered combine of the ranks' slices (ops/gpu/cuda/gen_coll.c), every (op, dtype); and the
 * ordering and padding module (ops/gpu/cuda/gen_sort.c: sort, argsort, topk, unique, pad) and
 * integer matmul (ops/gpu/cuda/gen_linalg.c). */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/gen.h"
#include "cuda/gen_coll.h"
#include "cuda/gen_sort.h"
#include "cuda/gen_linalg.h"
#include "cuda/gen_conv.h"
#include "cuda/gen_nn.h"
#include "cuda/nvrtc_opts.h"

static int failures;

/* Each name of entries (NULL-terminated) is an entry point of the PTX: the names the plugin
 * looks kernels up by (a misspelt one would only fail on a GPU). */
static void check_entries(const char *what, const char *ptx, const char *const *entries) {
    for (; entries && *entries; entries++) {
        char pat[128];
        snprintf(pat, sizeof pat, ".entry %s(", *entries);
        if (!strstr(ptx, pat)) {
            fprintf(stderr, "%s: no kernel %s in the PTX\n", what, *entries);
            failures++;
        }
    }
}

/* Compiles prelude + body as one program; reports the log on failure. With arch an sm_XX
 * option, to a CUBIN as the plugin does at run time (NVRTC needs no GPU for that either);
 * without, to PTX, which must have the given entries. */
static void compile_with(const char *what, const char *body, int kernels, const char *arch,
                         const char *const *entries) {
    const char *pre = gen_prelude();
    size_t n = strlen(pre) + strlen(body) + 1;
    char *src = malloc(n);
    snprintf(src, n, "%s%s", pre, body);
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, what, 0, NULL, NULL);
    if (r == NVRTC_SUCCESS) {
        const char *opts[] = { GEN_NVRTC_OPTIONS, arch ? arch : GEN_CHECK_ARCH_OPTION };
        r = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof *opts), opts);
        size_t ptx = 0;
        if (r == NVRTC_SUCCESS && arch) nvrtcGetCUBINSize(prog, &ptx);
        else if (r == NVRTC_SUCCESS) nvrtcGetPTXSize(prog, &ptx);
        if (r == NVRTC_SUCCESS && !arch && entries && ptx > 0) {
            char *text = malloc(ptx + 1);
            if (text && nvrtcGetPTX(prog, text) == NVRTC_SUCCESS) {
                text[ptx] = 0;
                check_entries(what, text, entries);
            }
            free(text);
        }
        if (r != NVRTC_SUCCESS || ptx < 100) {
            size_t len = 0;
            nvrtcGetProgramLogSize(prog, &len);
            char *log = malloc(len + 1);
            nvrtcGetProgramLog(prog, log);
            log[len] = 0;
            fprintf(stderr, "%s: %s\n%s\n", what, nvrtcGetErrorString(r), log);
            free(log);
            failures++;
        }
        nvrtcDestroyProgram(&prog);
    } else {
        fprintf(stderr, "%s: %s\n", what, nvrtcGetErrorString(r));
        failures++;
    }
    printf("  %-24s %4d kernel%s %s\n", what, kernels, kernels == 1 ? " " : "s", r == NVRTC_SUCCESS ? "ok" : "FAILED");
    free(src);
}

static void compile_for(const char *what, const char *body, int kernels, const char *arch) {
    compile_with(what, body, kernels, arch, NULL);
}

static void compile(const char *what, const char *body, int kernels) { compile_for(what, body, kernels, NULL); }

/* the entry points ops/gpu/cuda/sort.c and ops/gpu/cuda/linalg.c + solver.c launch */
static const char *const sort_entries[] = {
    "tsl_sort_keys_b8", "tsl_sort_keys_i64", "tsl_sort_keys_f32", "tsl_sort_keys_f64", "tsl_sort_step", "tsl_sort_tile",
    "tsl_sort_write_1", "tsl_sort_write_4", "tsl_sort_write_8", "tsl_unique_flags", "tsl_unique_scan",
    "tsl_unique_write_1", "tsl_unique_write_4", "tsl_unique_write_8", "tsl_pad_1", "tsl_pad_4", "tsl_pad_8", NULL,
};
static const char *const linalg_entries[] = {
    "tsl_imatmul", "tsl_det_f32", "tsl_det_f64", "tsl_eye_f32", "tsl_eye_f64", "tsl_tril_f32", "tsl_tril_f64",
    "tsl_qr_r_f32", "tsl_qr_r_f64", NULL,
};
/* ops/gpu/cuda/conv.c's */
static const char *const conv_entries[] = {
    "tsl_im2col_f32", "tsl_im2col_f64", "tsl_col2im_f32", "tsl_col2im_f64", "tsl_bias_f32", "tsl_bias_f64",
    "tsl_pool_f32", "tsl_pool_f64", "tsl_pool_back_f32", "tsl_pool_back_f64", NULL,
};
/* ops/gpu/cuda/nn.c's */
static const char *const nn_entries[] = {
    "tsl_softplus_f32", "tsl_softplus_f64", "tsl_norm_stats_f32", "tsl_norm_stats_f64", "tsl_norm_apply_f32",
    "tsl_norm_apply_f64", "tsl_xent_rows_f32", "tsl_xent_rows_f64", "tsl_xent_sum_f32", "tsl_xent_sum_f64",
    "tsl_gather_axis_1", "tsl_gather_axis_4", "tsl_gather_axis_8", "tsl_idx_check", "tsl_scatter_axis_b8",
    "tsl_scatter_axis_i64", "tsl_scatter_axis_f32", "tsl_scatter_axis_f64", "tsl_masked_fill_1", "tsl_masked_fill_4",
    "tsl_masked_fill_8", NULL,
};

static const char *const op_names[] = {
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) name,
#include "ops.def"
#undef OP
};

/* Every (dtype, form) kernel of one elementwise op in one program. */
static int check_op(OpCode op) {
    static char body[1 << 18];
    size_t len = 0;
    int count = 0;
    for (int dt = DT_BOOL; dt <= DT_F64; dt++)
        for (const char *f = "cs"; *f; f++) {
            char name[128];
            if (!gen_ew_has(op, (DType)dt)) continue;
            if (gen_ew_kernel(op, (DType)dt, *f, name, sizeof name, body + len, sizeof body - len)) {
                fprintf(stderr, "%s: the generator has no %s kernel in form %c\n", op_names[op],
                        gen_dtype_suffix((DType)dt), *f);
                failures++;
                continue;
            }
            len += strlen(body + len);
            count++;
        }
    if (count) compile(op_names[op], body, count);
    return count;
}

/* x * 0.5 * (1 + tanh(0.7978845608 * (x + 0.044715 * x^3))), as the static VM fuses it:
 * input 0 is x, inputs 1..4 numbers. */
static const GenStep gelu[] = {
    { OP_MUL, 0, -1, -1 }, { OP_MUL, 1, 0, -1 }, { OP_MUL, 2, 1, -2 }, { OP_ADD, 3, -1, 2 },
    { OP_MUL, 4, 3, -3 }, { OP_TANH, 5, 4, GEN_NONE }, { OP_ADD, 6, 5, -4 }, { OP_MUL, 7, -1, -5 },
    { OP_MUL, 8, 7, 6 },
};
static const GenStep bias_relu[] = { { OP_ADD, 0, -1, -2 }, { OP_RELU, 1, 0, GEN_NONE } };
static const GenStep compares[] = {
    { OP_GT, 0, -1, -2 }, { OP_MUL, 1, 0, -1 }, { OP_MAXIMUM, 2, 1, -3 }, { OP_SUB, 3, 2, -1 }, { OP_LE, 4, 3, -2 },
};

static int check_fused(void) {
    static const struct { const char *name; const GenStep *s; int n, nin; } chains[] = {
        { "gelu", gelu, 9, 5 }, { "bias_relu", bias_relu, 2, 2 }, { "compares", compares, 5, 3 },
    };
    static char body[1 << 16];
    size_t len = 0;
    int count = 0;
    for (size_t c = 0; c < sizeof chains / sizeof *chains; c++)
        for (int dt = DT_F32; dt <= DT_F64; dt++) {
            char name[512];
            if (gen_fused_kernel(chains[c].s, chains[c].n, chains[c].nin, (DType)dt, name, sizeof name, body + len,
                                 sizeof body - len)) {
                fprintf(stderr, "fused %s: not generated\n", chains[c].name);
                failures++;
                continue;
            }
            len += strlen(body + len);
            count++;
        }
    compile("fused chains", body, count);
    return count;
}

/* allreduce's combine in rank order: every (op, dtype) it has, as PTX and as the plugin's CUBIN */
static int check_rank_combine(void) {
    static char body[1 << 15];
    size_t len = 0;
    int count = 0;
    for (int r = REDOP_SUM; r <= REDOP_MIN; r++)
        for (int dt = DT_BOOL; dt <= DT_F64; dt++) {
            char name[64];
            if (!gen_rank_combine_has((RedOp)r, (DType)dt)) continue;
            if (gen_rank_combine_kernel((RedOp)r, (DType)dt, name, sizeof name, body + len, sizeof body - len)) {
                fprintf(stderr, "rank combine %d %s: not generated\n", r, gen_dtype_suffix((DType)dt));
                failures++;
                continue;
            }
            len += strlen(body + len);
            count++;
        }
    if (count != 11) {   /* sum, max, min on i64, f32, f64; mean on f32, f64 */
        fprintf(stderr, "rank combine: %d kernels, expected 11\n", count);
        failures++;
    }
    compile("rank combine", body, count);
    compile_for("rank combine (sm_90)", body, count, "--gpu-architecture=sm_90");
    return count;
}

int main(void) {
    int kernels = 0;
    printf("NVRTC to PTX (%s):\n", GEN_CHECK_ARCH);
    for (int op = 0; op < OP__COUNT; op++) kernels += check_op((OpCode)op);
    kernels += check_fused();
    kernels += check_rank_combine();
    compile("families", gen_families(), 1);
    /* the plugin's own path: a CUBIN for the device's architecture (the H200's sm_90) */
    compile_for("families (sm_90 CUBIN)", gen_families(), 1, "--gpu-architecture=sm_90");
    compile_with("sort and pad", gen_sort_source(), 17, NULL, sort_entries);
    compile_for("sort and pad (sm_90)", gen_sort_source(), 17, "--gpu-architecture=sm_90");
    compile_with("matmul i64, cuSOLVER aid", gen_linalg_source(), 9, NULL, linalg_entries);
    compile_for("matmul i64, aid (sm_90)", gen_linalg_source(), 9, "--gpu-architecture=sm_90");
    compile_with("convolution and pooling", gen_conv_source(), 10, NULL, conv_entries);
    compile_for("convolution and pooling (sm_90)", gen_conv_source(), 10, "--gpu-architecture=sm_90");
    compile_with("nn: norms, losses, gather", gen_nn_source(), 21, NULL, nn_entries);
    compile_for("nn (sm_90)", gen_nn_source(), 21, "--gpu-architecture=sm_90");
    if (failures) {
        fprintf(stderr, "ptx_check: %d failure(s)\n", failures);
        return 1;
    }
    printf("ptx_check: %d generated kernels and the hand-written families compile\n", kernels);
    return 0;
}
