/* test_gpu_gen.c - the CUDA generator's table (ops/gpu/cuda/gen.c) against the op table and the
 * CPU, with no GPU and no CUDA: every elementwise op of ops.def has exactly one row, each
 * compute dtype a row claims is one the CPU's kernel accepts (so the GPU never computes
 * something the CPU calls an error), and every dtype the CPU accepts is covered. NVRTC
 * compiling each kernel is
 * tests/gpu/ptx_check.c's job. */
#include <string.h>
#include "suites.h"
#include "opcall.h"
#include "cpu/cpu.h"
#include "cuda/gen.h"

static bool elementwise(OpCode op) {
    int k = op_def(op)->kind;
    return k == K_UNARY || k == K_BINARY || k == K_COMPARE;
}

START_TEST(gen_table_covers_elementwise) {
    for (int op = 0; op < OP__COUNT; op++) {
        const char *name = op_def((OpCode)op)->name;
        if (elementwise((OpCode)op)) ck_assert_msg(gen_ew_expr((OpCode)op), "%s has no GPU row", name);
        else ck_assert_msg(!gen_ew_expr((OpCode)op), "%s is not elementwise but has a GPU row", name);
    }
}
END_TEST

/* Whether the CPU's kernel runs op in ct (operands all 1, so no division by zero). */
static bool cpu_accepts(OpCode op, DType ct) {
    union { double d[4]; int64_t i[4]; float f[4]; uint8_t b[32]; } x, y, out;
    memset(&x, 0, sizeof x);
    for (int k = 0; k < 4; k++) {
        x.d[k] = 0;
        if (ct == DT_F64) x.d[k] = 1;
        else if (ct == DT_F32) x.f[k] = 1;
        else if (ct == DT_I64) x.i[k] = 1;
        else x.b[k] = 1;
    }
    y = x;
    int rc = op_def(op)->kind == K_UNARY ? cpu_unary(op, ct, &x, &out, 4) : cpu_binary(op, ct, &x, 1, &y, 1, &out, 4);
    return rc == 0;
}

START_TEST(gen_dtypes_match_cpu) {
    for (int op = 0; op < OP__COUNT; op++) {
        if (!elementwise((OpCode)op)) continue;
        for (int dt = DT_BOOL; dt <= DT_F64; dt++) {
            bool gpu = gen_ew_has((OpCode)op, (DType)dt), cpu = cpu_accepts((OpCode)op, (DType)dt);
            const char *name = op_def((OpCode)op)->name;
            ck_assert_msg(!gpu || cpu, "the GPU runs %s in %s, which the CPU refuses", name, dtype_name((DType)dt));
            ck_assert_msg(gpu || !cpu, "the GPU lacks %s in %s", name, dtype_name((DType)dt));
        }
    }
}
END_TEST

START_TEST(gen_results_and_kernels) {
    char name[128], src[16384];
    for (int op = 0; op < OP__COUNT; op++) {
        if (!elementwise((OpCode)op)) continue;
        for (int dt = DT_BOOL; dt <= DT_F64; dt++) {
            DType r = gen_ew_result((OpCode)op, (DType)dt);
            if (op_def((OpCode)op)->kind == K_COMPARE) ck_assert_int_eq(r, DT_BOOL);
            int rc = gen_ew_kernel((OpCode)op, (DType)dt, 's', name, sizeof name, src, sizeof src);
            ck_assert_int_eq(rc, gen_ew_has((OpCode)op, (DType)dt) ? 0 : -1);
            if (rc == 0) ck_assert_ptr_nonnull(strstr(src, name));
        }
    }
    ck_assert_int_eq(gen_ew_kernel(OP_SUM, DT_F32, 'c', name, sizeof name, src, sizeof src), -1);
    ck_assert_int_eq(gen_ew_kernel(OP_ADD, DT_F32, 'c', name, sizeof name, src, 16), -1);   /* too small a buffer */
}
END_TEST

START_TEST(gen_fused_chains) {
    char name[512], src[8192];
    GenStep gelu[] = { { OP_MUL, 0, -1, -1 }, { OP_TANH, 1, 0, GEN_NONE }, { OP_GT, 2, 1, -2 } };
    ck_assert_int_eq(gen_fused_kernel(gelu, 3, 2, DT_F32, name, sizeof name, src, sizeof src), 0);
    ck_assert_ptr_nonnull(strstr(src, "tsl_tanh(t0)"));
    ck_assert_ptr_nonnull(strstr(src, "((tsl_b8 *)a.out)[i]"));   /* a comparison's chain writes bools */
    GenStep round[] = { { OP_ROUND, 0, -1, GEN_NONE } };   /* decimals are a launch argument: not fused */
    ck_assert_int_eq(gen_fused_kernel(round, 1, 1, DT_F32, name, sizeof name, src, sizeof src), -1);
    GenStep bits[] = { { OP_BITWISE_AND, 0, -1, -2 } };    /* not defined on floats */
    ck_assert_int_eq(gen_fused_kernel(bits, 1, 2, DT_F32, name, sizeof name, src, sizeof src), -1);
    GenStep mod[] = { { OP_MOD, 0, -1, -2 } };             /* integer modulo reports through a.bad */
    ck_assert_int_eq(gen_fused_kernel(mod, 1, 2, DT_I64, name, sizeof name, src, sizeof src), 0);
    ck_assert_ptr_nonnull(strstr(src, "tsl_mod(x0, x1, a.bad)"));
}
END_TEST

Suite *gpu_gen_suite(void) {
    Suite *s = suite_create("gpu_gen");
    TCase *tc = tcase_create("gen");
    tcase_add_test(tc, gen_table_covers_elementwise);
    tcase_add_test(tc, gen_dtypes_match_cpu);
    tcase_add_test(tc, gen_results_and_kernels);
    tcase_add_test(tc, gen_fused_chains);
    suite_add_tcase(s, tc);
    return s;
}
