/* test_pool.c - ops/pool.h: the fixed partition, every part run once on a slot below the
 * width, the lowest failing part's message, small work on the calling thread, and the same
 * bits from the split kernels and matmul blocks (cut by rows or columns) for every thread
 * count. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "suites.h"
#include "pool.h"
#include "tensor.h"
#include "cpu/cpu.h"
#include "tops.h"

START_TEST(pool_parts_fixed_by_n_and_block) {
    ck_assert_int_eq(pool_parts(0, 16), 0);
    ck_assert_int_eq(pool_parts(1, 16), 1);
    ck_assert_int_eq(pool_parts(16, 16), 1);
    ck_assert_int_eq(pool_parts(17, 16), 2);
    ck_assert_int_eq(pool_parts(POOL_BLOCK * 5 + 1, POOL_BLOCK), 6);
    /* the thread count never enters: the same parts after changing it */
    pool_set_threads(3);
    ck_assert_int_eq(pool_parts(1000, 7), 143);
    pool_set_threads(1);
    ck_assert_int_eq(pool_parts(1000, 7), 143);
    pool_set_threads(0);
}
END_TEST

START_TEST(pool_width_small_work_stays_serial) {
    pool_set_threads(4);
    ck_assert_int_eq(pool_width(100, POOL_MIN_WORK - 1), 1);
    ck_assert_int_eq(pool_width(1, POOL_MIN_WORK * 8), 1);
    ck_assert_int_eq(pool_width(3, POOL_MIN_WORK), 3);
    ck_assert_int_eq(pool_width(100, POOL_MIN_WORK), 4);
    pool_set_threads(1);
    ck_assert_int_eq(pool_width(100, POOL_MIN_WORK * 8), 1);
    ck_assert_int_eq(pool_threads(), 1);
    pool_set_threads(0);
}
END_TEST

typedef struct {
    int runs[1000];
    int slot_of[1000];
    int width;
    int64_t fail_a, fail_b;   /* parts that fail, -1 none */
} Count;

static int count_part(void *ud, int64_t p, int slot) {
    Count *c = ud;
    c->runs[p]++;
    c->slot_of[p] = slot;
    if (p == c->fail_a || p == c->fail_b) {
        op_fail("part %lld failed", (long long)p);
        return -1;
    }
    return 0;
}

START_TEST(pool_run_every_part_once) {
    for (int w = 1; w <= 4; w++) {
        pool_set_threads(w);
        for (int rep = 0; rep < 20; rep++) {
            static Count c;
            memset(&c, 0, sizeof c);
            c.fail_a = c.fail_b = -1;
            ck_assert_int_eq(pool_run(1000, w, count_part, &c), 0);
            for (int p = 0; p < 1000; p++) {
                ck_assert_int_eq(c.runs[p], 1);
                ck_assert(c.slot_of[p] >= 0 && c.slot_of[p] < w);
            }
        }
    }
    pool_set_threads(0);
}
END_TEST

START_TEST(pool_run_reports_lowest_failing_part) {
    for (int w = 1; w <= 4; w++) {
        pool_set_threads(w);
        for (int rep = 0; rep < 20; rep++) {
            static Count c;
            memset(&c, 0, sizeof c);
            c.fail_a = 900;
            c.fail_b = 37 + rep;
            op_fail("before");
            ck_assert_int_eq(pool_run(1000, w, count_part, &c), -1);
            char want[64];
            snprintf(want, sizeof want, "part %d failed", 37 + rep);
            ck_assert_str_eq(op_error(), want);
            for (int p = 0; p <= 37 + rep; p++) ck_assert_int_eq(c.runs[p], 1);   /* all below ran */
        }
    }
    pool_set_threads(0);
}
END_TEST

/* tanh and a division over 3M elements: the bits of one serial call for 1..4 threads. */
START_TEST(pool_split_kernels_same_bits) {
    int64_t n = 3000000 + 17;
    float *x = malloc(sizeof(float) * (size_t)n), *want = malloc(sizeof(float) * (size_t)n),
          *got = malloc(sizeof(float) * (size_t)n), two = 2.0f;
    for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7919) % 20011) / 1000.0f - 10.0f;
    ck_assert_int_eq(cpu_unary(OP_TANH, DT_F32, x, want, n), 0);
    for (int w = 1; w <= 4; w++) {
        pool_set_threads(w);
        memset(got, 0, sizeof(float) * (size_t)n);
        ck_assert_int_eq(cpu_unary_split(OP_TANH, DT_F32, x, got, DT_F32, n), 0);
        ck_assert(!memcmp(got, want, sizeof(float) * (size_t)n));
    }
    ck_assert_int_eq(cpu_binary(OP_DIV, DT_F32, x, 1, &two, 0, want, n), 0);
    for (int w = 1; w <= 4; w++) {
        pool_set_threads(w);
        ck_assert_int_eq(cpu_binary_split(OP_DIV, DT_F32, x, 1, &two, 0, got, DT_F32, n), 0);
        ck_assert(!memcmp(got, want, sizeof(float) * (size_t)n));
    }
    pool_set_threads(0);
    free(x);
    free(want);
    free(got);
}
END_TEST

/* a[m, k] and b[k, n] of dtype t, values in [-1, 1) from a fixed formula */
static void mm_operands(DType t, int64_t m, int64_t k, int64_t n, char **a, char **b) {
    size_t esz = dtype_size(t);
    *a = malloc((size_t)(m * k) * esz);
    *b = malloc((size_t)(k * n) * esz);
    for (int64_t i = 0; i < m * k + k * n; i++) {
        double v = (double)((i * 7919) % 20011) / 10000.0 - 1.0;
        char *at = i < m * k ? *a + (size_t)i * esz : *b + (size_t)(i - m * k) * esz;
        if (t == DT_F64) *(double *)at = v;
        else *(float *)at = (float)v;
    }
}

/* One block c[r0:r0+rows] of a[m, k] @ b[k, n]: the bits of one BLAS call (1 thread) with 2..4
 * threads, which cut it into row or column ranges; *cut says how it was cut. */
static void check_block(int64_t m, int64_t k, int64_t n, int64_t r0, int64_t rows, DType t, int ta, const char *core,
                        MatmulCut *cut) {
    int64_t least, grain;
    *cut = cpu_matmul_cut(t, m, k, n, rows, &least, &grain);
    size_t cbytes = (size_t)(rows * n) * dtype_size(t);
    char *a, *b, *want = malloc(cbytes), *got = malloc(cbytes);
    mm_operands(t, m, k, n, &a, &b);
    pool_set_threads(1);
    cpu_matmul_rows(t, a, ta, b, want, m, k, n, r0, rows);
    for (int w = 2; w <= 4; w++) {
        pool_set_threads(w);
        memset(got, 0, cbytes);
        cpu_matmul_rows(t, a, ta, b, got, m, k, n, r0, rows);
        ck_assert_msg(!memcmp(got, want, cbytes), "%s: %lldx%lldx%lld rows %lld+%lld %s ta=%d cut %s, %d threads", core,
                      (long long)m, (long long)k, (long long)n, (long long)r0, (long long)rows, t == DT_F64 ? "f64" : "f32",
                      ta, *cut == MM_BY_COLS ? "by columns" : *cut == MM_BY_ROWS ? "by rows" : "none", w);
    }
    free(a);
    free(b);
    free(want);
    free(got);
}

/* Switches OpenBLAS to another kernel set in-process (as linalg.c choose_core does) and lets
 * TSL choose its tiles for it; NULL goes back to the library's own choice. False where the CPU
 * cannot run that set or the build cannot switch. */
static bool use_kernels(const char *core) {
    void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
    void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
    __builtin_cpu_init();
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (!quit || !init || (core && strcmp(core, "Haswell") ? !avx512 : !avx2)) return false;
    if (core) setenv("OPENBLAS_CORETYPE", core, 1);
    else unsetenv("OPENBLAS_CORETYPE");
    quit();
    init();
    blas_choose_kernels();
    return !core || !strcasecmp(blas_core_name(), core);
}

/* A matmul block gets the bits of one BLAS call whatever the pool's thread count (2..4 cut it
 * into row or column ranges; 1 makes the one call), f32 and f64, a read transposed or not,
 * under each kernel set that cuts (linalg.c, "Rows or columns on the thread pool"): the MLP
 * shapes of the benchmarks, odd ones, remainders a range takes over, and a sweep of m 2..256,
 * k and n 8..2048 (odd and round). Each kernel set must cut some of them by columns and some by
 * rows, or the test would not test the cut. */
START_TEST(pool_matmul_rows_same_bits) {
    static const int64_t shapes[][5] = {   /* m, k, n, and the block: r0, rows */
        { 64, 512, 512, 0, 64 }, { 256, 512, 512, 0, 256 }, { 512, 512, 512, 256, 256 }, { 97, 700, 333, 0, 97 },
        { 300, 256, 1024, 256, 44 }, { 200, 1000, 77, 0, 200 }, { 130, 64, 4000, 0, 130 }, { 49, 2048, 100, 0, 49 },
        { 128, 784, 128, 0, 128 }, { 100, 300, 200, 0, 100 }, { 250, 128, 512, 0, 250 }, { 64, 823, 213, 0, 64 },
        { 64, 1086, 376, 0, 64 }, { 16, 2048, 2000, 0, 16 }, { 3, 1500, 1999, 0, 3 }, { 256, 37, 1536, 0, 256 },
    };
    static const int64_t ms[] = { 2, 7, 16, 33, 64, 100, 256 }, ks[] = { 8, 61, 512, 1023, 2048 },
                         ns[] = { 8, 96, 250, 512, 769, 1024, 2048 };
    static const char *cores[] = { "SkylakeX", "Cooperlake", "Haswell" };
    for (int c = 0; c < 3; c++) {
        if (!use_kernels(cores[c])) continue;
        int cuts[3] = { 0 };
        for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++)
            for (int q = 0; q < 4; q++) {
                MatmulCut cut;
                const int64_t *h = shapes[s];
                check_block(h[0], h[1], h[2], h[3], h[4], q & 1 ? DT_F64 : DT_F32, q >> 1, cores[c], &cut);
                cuts[cut]++;
            }
        for (int i = 0; i < 7 * 5 * 7; i++) {   /* the sweep: every m, k, n once, a 3-in-4 */
            int64_t m = ms[i % 7], k = ks[i / 7 % 5], n = ns[i / 35];
            if (i % 4 == 3 || m * k * n > ((int64_t)1 << 27)) continue;
            MatmulCut cut;
            check_block(m, k, n, 0, m, i % 3 ? DT_F32 : DT_F64, i % 5 < 2, cores[c], &cut);
            cuts[cut]++;
        }
        ck_assert_msg(cuts[MM_BY_COLS] > 0 && cuts[MM_BY_ROWS] > 0, "%s: %d cut by columns, %d by rows", cores[c],
                      cuts[MM_BY_COLS], cuts[MM_BY_ROWS]);
    }
    ck_assert(use_kernels(NULL));
    pool_set_threads(0);
}
END_TEST

/* ---- Several threads multiplying at once ----
 * Products computed by 4 threads at once (each also splitting its own across the pool when
 * it finds it free) have the bits computed alone: the BLAS is safe on several threads. With
 * Debian's serial OpenBLAS (LD_PRELOAD its libopenblas.so.0) this fails: it is not built with
 * its buffer lock (openblas_get_parallel() is 0), and its calls at once can share a buffer. */
int openblas_get_parallel(void);

enum { MC_SHAPES = 8, MC_THREADS = 4, MC_ROUNDS = 12 };
static const int64_t mc_shapes[MC_SHAPES][5] = {   /* m, k, n, ta, f64 */
    { 64, 512, 512, 0, 0 }, { 8, 512, 512, 0, 0 }, { 4, 512, 256, 1, 0 }, { 1, 512, 512, 0, 0 },
    { 33, 128, 200, 0, 1 }, { 96, 300, 256, 1, 0 }, { 17, 33, 65, 0, 0 }, { 40, 256, 256, 0, 1 },
};
static char *mc_a[MC_SHAPES], *mc_b[MC_SHAPES], *mc_want[MC_SHAPES];
static size_t mc_bytes(int s) { return (size_t)(mc_shapes[s][0] * mc_shapes[s][2]) * (mc_shapes[s][4] ? 8 : 4); }
static void mc_product(int s, char *c) {
    const int64_t *h = mc_shapes[s];
    cpu_matmul_rows(h[4] ? DT_F64 : DT_F32, mc_a[s], h[3] != 0, mc_b[s], c, h[0], h[1], h[2], 0, h[0]);
}

static void *mc_thread(void *arg) {
    intptr_t id = (intptr_t)arg, wrong = 0;
    char *c = malloc(mc_bytes(0) * 2);
    for (int r = 0; r < MC_ROUNDS; r++)
        for (int q = 0; q < MC_SHAPES; q++) {
            int s = (int)((q * 3 + id + r) % MC_SHAPES);   /* each thread in its own order */
            memset(c, 0xff, mc_bytes(s));
            mc_product(s, c);
            wrong += memcmp(c, mc_want[s], mc_bytes(s)) != 0;
        }
    free(c);
    return (void *)wrong;
}

START_TEST(pool_matmul_threads_at_once) {
    ck_assert_msg(openblas_get_parallel() != 0, "the linked OpenBLAS is the serial build, unsafe on several threads");
    pool_set_threads(1);
    for (int s = 0; s < MC_SHAPES; s++) {
        const int64_t *h = mc_shapes[s];
        mm_operands(h[4] ? DT_F64 : DT_F32, h[0], h[1], h[2], &mc_a[s], &mc_b[s]);
        mc_want[s] = malloc(mc_bytes(s));
        mc_product(s, mc_want[s]);
    }
    pool_set_threads(2);
    pthread_t th[MC_THREADS];
    for (intptr_t i = 0; i < MC_THREADS; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, mc_thread, (void *)i), 0);
    intptr_t wrong = 0;
    for (int i = 0; i < MC_THREADS; i++) {
        void *w;
        pthread_join(th[i], &w);
        wrong += (intptr_t)w;
    }
    ck_assert_msg(wrong == 0, "%ld of %d products wrong", (long)wrong, MC_THREADS * MC_ROUNDS * MC_SHAPES);
    for (int s = 0; s < MC_SHAPES; s++) {
        free(mc_a[s]);
        free(mc_b[s]);
        free(mc_want[s]);
    }
    pool_set_threads(0);
}
END_TEST

/* An i64 division by zero in a late part: the serial message, for every thread count. */
START_TEST(pool_split_kernel_error_comes_back) {
    int64_t n = POOL_MIN_WORK * 4;
    int64_t *a = malloc(sizeof(int64_t) * (size_t)n), *b = malloc(sizeof(int64_t) * (size_t)n),
            *o = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t i = 0; i < n; i++) { a[i] = i; b[i] = 1; }
    b[n - 5] = 0;
    for (int w = 1; w <= 3; w++) {
        pool_set_threads(w);
        op_fail("none");
        ck_assert_int_eq(cpu_binary_split(OP_FLOOR_DIVIDE, DT_I64, a, 1, b, 1, o, DT_I64, n), -1);
        ck_assert_str_eq(op_error(), "integer division by zero");
    }
    pool_set_threads(0);
    free(a);
    free(b);
    free(o);
}
END_TEST

Suite *pool_suite(void) {
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pool_parts_fixed_by_n_and_block);
    tcase_add_test(tc, pool_width_small_work_stays_serial);
    tcase_add_test(tc, pool_run_every_part_once);
    tcase_add_test(tc, pool_run_reports_lowest_failing_part);
    tcase_add_test(tc, pool_split_kernels_same_bits);
    tcase_add_test(tc, pool_split_kernel_error_comes_back);
    tcase_add_test(tc, pool_matmul_rows_same_bits);
    tcase_add_test(tc, pool_matmul_threads_at_once);
    suite_add_tcase(s, tc);
    return s;
}
