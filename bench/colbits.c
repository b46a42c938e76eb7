/* colbits.c - which column cuts of a row-major gemm keep one call's bits (issue 27).
 *
 * TSL may cut a product c[m, n] = a[m, k] @ b[k, n] into blocks of output columns, each one
 * OpenBLAS call on b's and c's columns [j0, j1) (ldb = ldc = n). This measures, for each
 * kernel set named on the command line (switched in-process, as ops/cpu/linalg.c does), f32
 * and f64, a read transposed or not, and random shapes (m 2..256, k and n 8..2048, odd ones
 * too), which column granularities g keep the bits of the single call: the shape is cut into
 * 2, 3 and 4 parts of a multiple of g columns (the last part takes the rest), and each cut is
 * compared with the whole call byte for byte. A cut counts only where every part does at
 * least MIN_WORK multiply-adds (TSL's rule, off OpenBLAS's small-matrix paths); cuts with
 * smaller parts are reported apart, and so are widths n that are multiples of g.
 *
 *   B=/usr/lib/x86_64-linux-gnu/openblas-pthread
 *   cc -O2 -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/colbits.c -o /tmp/colbits \
 *      -L$B -Wl,-rpath,$B -lopenblas -lm
 *   OPENBLAS_NUM_THREADS=1 [SEED=n] /tmp/colbits [shapes] [core ...]   (default 300 shapes, SkylakeX)
 * Results: docs/internals.md, "Threads" (matmul). */
#include <cblas.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_WORK ((int64_t)1 << 21)
enum { NG = 9 };
static const int grain[NG] = { 4, 8, 16, 24, 32, 48, 64, 96, 128 };

static void use_core(const char *core) {
    void (*quit)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
    void (*init)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
    if (!quit || !init) return;
    setenv("OPENBLAS_CORETYPE", core, 1);
    quit();
    init();
}

/* columns [j0, j0 + w) of c = op(a) @ b, rows m; ta: a stored [k, m] */
static void call(int f64, int ta, const void *a, const void *b, void *c, int m, int k, int n, int j0, int w) {
    CBLAS_TRANSPOSE t = ta ? CblasTrans : CblasNoTrans;
    int lda = ta ? m : k;
    if (f64)
        cblas_dgemm(CblasRowMajor, t, CblasNoTrans, m, w, k, 1, a, lda, (const double *)b + j0, n, 0,
                    (double *)c + j0, n);
    else
        cblas_sgemm(CblasRowMajor, t, CblasNoTrans, m, w, k, 1, a, lda, (const float *)b + j0, n, 0,
                    (float *)c + j0, n);
}

static int rnd(int lo, int hi) { return lo + rand() % (hi - lo + 1); }

typedef struct { long tried, bad, tried_small, bad_small, tried_whole, bad_whole; } Tally;   /* whole: n % g == 0 */

int main(int argc, char **argv) {
    int shapes = argc > 1 ? atoi(argv[1]) : 300;
    const char *def[] = { "SkylakeX" };
    const char **cores = argc > 2 ? (const char **)argv + 2 : def;
    int ncores = argc > 2 ? argc - 2 : 1;
    size_t big = (size_t)2048 * 2048 * 8;
    char *a = malloc(big), *b = malloc(big), *want = malloc(big), *got = malloc(big);
    for (size_t i = 0; i < big / 8; i++) {
        ((double *)a)[i] = (double)((i * 7919) % 20011) / 10000.0 - 1.0;
        ((double *)b)[i] = (double)((i * 104729) % 19997) / 10000.0 - 1.0;
    }
    for (size_t i = 0; i < big / 4 / 2; i++) {   /* f32 views: values of the same range */
        ((float *)a)[big / 8 + i] = (float)((i * 7919) % 20011) / 10000.0f - 1.0f;
        ((float *)b)[big / 8 + i] = (float)((i * 104729) % 19997) / 10000.0f - 1.0f;
    }
    for (int ci = 0; ci < ncores; ci++) {
        use_core(cores[ci]);
        for (int f64 = 0; f64 < 2; f64++)
            for (int ta = 0; ta < 2; ta++) {
                Tally t[NG] = { { 0 } };
                srand(getenv("SEED") ? (unsigned)atoi(getenv("SEED")) : 12345u);
                const void *A = f64 ? (void *)a : (void *)(a + big / 2), *B = f64 ? (void *)b : (void *)(b + big / 2);
                size_t esz = f64 ? 8 : 4;
                for (int s = 0; s < shapes; s++) {
                    int m = rand() % 3 ? rnd(2, 256) : 64, k = rnd(8, 2048), n = rnd(8, 2048);
                    if (rand() % 2) n = rnd(1, 32) * 32;   /* half the widths round */
                    if ((int64_t)m * k * n > ((int64_t)1 << 27)) { s--; continue; }
                    call(f64, ta, A, B, want, m, k, n, 0, n);
                    for (int g = 0; g < NG; g++)
                        for (int parts = 2; parts <= 4; parts++) {
                            int w = (n + parts - 1) / parts;
                            w = (w + grain[g] - 1) / grain[g] * grain[g];
                            if (w >= n) continue;
                            int64_t last = n - (int64_t)(n - 1) / w * w, least = last < w ? last : w;
                            int small = (int64_t)m * k * least < MIN_WORK;
                            memset(got, 0xff, (size_t)m * n * esz);
                            for (int j0 = 0; j0 < n; j0 += w) call(f64, ta, A, B, got, m, k, n, j0, n - j0 < w ? n - j0 : w);
                            int bad = memcmp(got, want, (size_t)m * n * esz) != 0;
                            if (small) t[g].tried_small++, t[g].bad_small += bad;
                            else t[g].tried++, t[g].bad += bad;
                            if (!small && n % grain[g] == 0) t[g].tried_whole++, t[g].bad_whole += bad;
                            if (bad && !small && grain[g] >= 16 && n % grain[g] == 0)
                                printf("  %s %s ta=%d %dx%dx%d g=%d parts of %d: differs\n", cores[ci],
                                       f64 ? "f64" : "f32", ta, m, k, n, grain[g], w);
                        }
                }
                printf("%s %s ta=%d:", cores[ci], f64 ? "f64" : "f32", ta);
                for (int g = 0; g < NG; g++)
                    printf(" g%d %ld/%ld (n%%g=0 %ld/%ld, small %ld/%ld)", grain[g], t[g].bad, t[g].tried,
                           t[g].bad_whole, t[g].tried_whole, t[g].bad_small, t[g].tried_small);
                printf("\n");
                fflush(stdout);
            }
    }
    return 0;
}
