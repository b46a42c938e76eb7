/* gemm64.c - ways to run TSL's batch-64 MLP layer (y = relu(x[64,512] @ w[512,512] + b)) on
 * OpenBLAS on one thread, timed side by side (issue 27). One pass is a chain of 42 such layers
 * with 42 different weight matrices (42 MB: more than the L3, as in the MLP row of `make
 * bench`). Each round runs one pass of every variant in turn, so a shared machine's load falls
 * on all of them alike, and every layer is timed on its own: a 0.4 ms layer often runs
 * undisturbed where a 17 ms pass does not. Printed: GFLOP/s of the best, the 10th-percentile
 * and the median layer (read the first two on a loaded machine).
 *
 *   nn         cblas_sgemm(RowMajor, N, N) as TSL calls it, then bias + ReLU over the output
 *   nsplitNB   the same in column blocks of NB of w (ldb 512), bias + ReLU after each block
 *   swap       the product the other way round, C^T[512,64] = w^T x^T (RowMajor, T, T):
 *              OpenBLAS then packs x as its "A" panel and w as its "B"; bias + ReLU while
 *              transposing back
 *   swapnNB    swap in blocks of NB rows of C^T (w's columns), each transposed back in cache
 *   ld528      nn with w's rows 528 floats apart (not 2 KiB: no cache-set aliasing)
 *   prefetch   nn after a contiguous prefetch pass over w
 *   pf-n128    nsplit128, prefetching w's next column block before each call
 *   nt         w stored transposed ([n, k], as torch's Linear keeps it), x @ wt^T
 *   ksplitKB   the sum over k in blocks of KB, each call adding to the last (beta 1)
 *   nn-hot-w, swap-hot-w   not ways to run the MLP: the same w in every layer (in cache), to
 *              show what w's trip from memory costs
 * Every variant runs under each OpenBLAS kernel set named on the command line (switched
 * in-process with gotoblas_dynamic_quit/init, as ops/cpu/linalg.c choose_core does), and its
 * output is compared with nn's under the same kernels (a line says by how much it differs).
 *
 * Modes:
 *   gemm64 [rounds] [core ...]          the variants (default 15 rounds, the CPU's kernels)
 *   gemm64 shapes [rounds] [core ...]   single products of other shapes (batch 1 as gemv,
 *                                       batch 256, the training and transformer shapes)
 *   gemm64 only V                       one pass of variant V, for instruction counts:
 *     valgrind --tool=callgrind --collect-atstart=no --toggle-collect=counted_pass gemm64 only V
 *     (valgrind has no AVX-512: OpenBLAS runs its AVX2 kernels there)
 *
 * Build and run (pinned to one core):
 *   B=/usr/lib/x86_64-linux-gnu/openblas-pthread
 *   cc -O2 -I/usr/include/x86_64-linux-gnu/openblas-pthread bench/gemm64.c -o /tmp/gemm64 \
 *      -L$B -Wl,-rpath,$B -lopenblas -lm
 *   OPENBLAS_NUM_THREADS=1 taskset -c 0 /tmp/gemm64 15 Cooperlake SkylakeX Haswell Zen
 * Figures and what was concluded: bench/README.md, "The batch-64 matmul". */
#include <cblas.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { M = 64, K = 512, N = 512, L = 42 };

static float *w[L], *wt[L], *w528[L], *bias[L], *x0, *h[2], *ct;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static float *buf(size_t n, int fill) {
    float *p = aligned_alloc(64, (n * sizeof *p + 63) / 64 * 64);
    for (size_t i = 0; i < n; i++)
        p[i] = fill ? ((float)rand() / RAND_MAX - 0.5f) * 0.09f : 0;
    return p;
}

static void bias_relu(float *y, const float *b, int rows, int n, int ld) {
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < n; j++) {
            float v = y[i * ld + j] + b[j];
            y[i * ld + j] = v < 0 ? 0 : v;
        }
}

/* y[:, j0:j0+nb] = relu(ctb^T + b), ctb = C^T rows j0.. (nb x 64, 64 apart) */
static void back_bias_relu(float *y, const float *ctb, const float *b, int j0, int nb) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < nb; j++) {
            float v = ctb[j * M + i] + b[j0 + j];
            y[i * N + j0 + j] = v < 0 ? 0 : v;
        }
}

/* Each variant: one layer y = relu(x @ w[l] + bias[l]), with an argument (a block size). */
typedef void (*LayerFn)(const float *x, float *y, int l, int arg);

static void nn_into(const float *x, const float *wl, int ldw, float *y, const float *b) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1, x, K, wl, ldw, 0, y, N);
    bias_relu(y, b, M, N, N);
}

static void layer_nsplit(const float *x, float *y, int l, int nb) {
    for (int j0 = 0; j0 < N; j0 += nb) {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, nb, K, 1, x, K, w[l] + j0, N, 0,
                    y + j0, N);
        bias_relu(y + j0, bias[l] + j0, M, nb, N);
    }
}

static void swap_into(const float *x, const float *wl, float *y, const float *b, int nb) {
    for (int j0 = 0; j0 < N; j0 += nb) {
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, nb, M, K, 1, wl + j0, N, x, K, 0, ct, M);
        back_bias_relu(y, ct, b, j0, nb);
    }
}

static void layer_swap(const float *x, float *y, int l, int nb) {
    swap_into(x, w[l], y, bias[l], nb);
}

static void layer_ld528(const float *x, float *y, int l, int arg) {
    (void)arg, nn_into(x, w528[l], 528, y, bias[l]);
}

/* rows k of w's columns [j0, j0 + nb), one prefetch a cache line */
static void prefetch_cols(const float *wl, int j0, int nb) {
    for (int i = 0; i < K; i++)
        for (int q = 0; q < nb; q += 16)
            __builtin_prefetch(wl + i * N + j0 + q, 0, 2);
}

static void layer_prefetch(const float *x, float *y, int l, int arg) {
    (void)arg;
    for (size_t i = 0; i < (size_t)K * N; i += 16)
        __builtin_prefetch(w[l] + i, 0, 2);
    nn_into(x, w[l], N, y, bias[l]);
}

static void layer_pf_nsplit(const float *x, float *y, int l, int nb) {
    prefetch_cols(w[l], 0, nb);
    for (int j0 = 0; j0 < N; j0 += nb) {
        if (j0 + nb < N)
            prefetch_cols(w[l], j0 + nb, nb);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, nb, K, 1, x, K, w[l] + j0, N, 0,
                    y + j0, N);
        bias_relu(y + j0, bias[l] + j0, M, nb, N);
    }
}

static void layer_nt(const float *x, float *y, int l, int arg) {
    (void)arg;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, N, K, 1, x, K, wt[l], K, 0, y, N);
    bias_relu(y, bias[l], M, N, N);
}

static void layer_ksplit(const float *x, float *y, int l, int kb) {
    for (int k0 = 0; k0 < K; k0 += kb)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, kb, 1, x + k0, K,
                    w[l] + k0 * N, N, k0 ? 1 : 0, y, N);
    bias_relu(y, bias[l], M, N, N);
}

/* not ways to run the MLP: the same w (in cache) in every layer */
static void layer_nn_hot(const float *x, float *y, int l, int arg) {
    (void)arg, nn_into(x, w[0], N, y, bias[l]);
}
static void layer_swap_hot(const float *x, float *y, int l, int nb) {
    swap_into(x, w[0], y, bias[l], nb);
}

static const struct {
    const char *name;
    LayerFn fn;
    int arg;
} var[] = {{"nn", layer_nsplit, 512},         {"nsplit256", layer_nsplit, 256},
           {"nsplit128", layer_nsplit, 128},  {"swap", layer_swap, 512},
           {"swapn256", layer_swap, 256},     {"swapn128", layer_swap, 128},
           {"ld528", layer_ld528, 0},         {"prefetch", layer_prefetch, 0},
           {"pf-n128", layer_pf_nsplit, 128}, {"nt", layer_nt, 0},
           {"ksplit256", layer_ksplit, 256},  {"ksplit128", layer_ksplit, 128},
           {"nn-hot-w", layer_nn_hot, 0},     {"swap-hot-w", layer_swap_hot, 512}};
enum { NV = sizeof var / sizeof var[0] };

/* one pass; returns the output buffer; each layer's seconds into lt (when not NULL) */
static float *pass(int v, double *lt) {
    const float *x = x0;
    for (int l = 0; l < L; l++) {
        double t0 = now_s();
        var[v].fn(x, h[l & 1], l, var[v].arg);
        if (lt)
            lt[l] = now_s() - t0;
        x = h[l & 1];
    }
    return (float *)x;
}

static void set_core(const char *core) {
    static void (*quit)(void), (*init)(void);
    if (!quit) {
        quit = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_quit");
        init = (void (*)(void))dlsym(RTLD_DEFAULT, "gotoblas_dynamic_init");
    }
    if (!core || !quit || !init)
        return;
    setenv("OPENBLAS_CORETYPE", core, 1);
    quit();
    init();
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void init_data(void) {
    srand(1);
    for (int l = 0; l < L; l++) {
        w[l] = buf((size_t)K * N, 1);
        w528[l] = buf((size_t)K * 528, 0);
        for (int i = 0; i < K; i++)
            memcpy(w528[l] + i * 528, w[l] + i * N, N * sizeof(float));
        bias[l] = buf(N, 1);
        wt[l] = buf((size_t)K * N, 0);
        for (int i = 0; i < K; i++)
            for (int j = 0; j < N; j++)
                wt[l][j * K + i] = w[l][i * N + j];
    }
    x0 = buf((size_t)M * K, 1);
    h[0] = buf((size_t)M * N, 0), h[1] = buf((size_t)M * N, 0), ct = buf((size_t)M * N, 0);
}

/* "shapes" mode: one product c[m,n] = a[m,k] @ b[k,n] per shape (gemv at m == 1, as TSL
 * calls it), b cycling through 42 copies (those over the L3 come from memory), per kernel set */
static const int shp[][3] = {{1, 512, 512},   {64, 512, 512},  {256, 512, 512}, {512, 512, 512},
                             {64, 512, 256},  {64, 256, 128},  {32, 64, 128},   {32, 128, 10},
                             {128, 784, 128}, {128, 128, 384}, {128, 128, 512}, {128, 512, 128}};
enum { NS = sizeof shp / sizeof shp[0], NB = 42 };

static void shape_call(const int *d, const float *a, const float *b, float *c) {
    if (d[0] == 1)
        cblas_sgemv(CblasRowMajor, CblasTrans, d[1], d[2], 1, b, d[2], a, 1, 0, c, 1);
    else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d[0], d[2], d[1], 1, a, d[1], b,
                    d[2], 0, c, d[2]);
}

static int shapes(int rounds, int ncore, const char **cores) {
    float *a = buf(512 * 784, 1), *c = buf(512 * 512, 0), *b[NB];
    for (int i = 0; i < NB; i++)
        b[i] = buf(784 * 512, 1);
    int ns = rounds * NB;
    double *t = calloc((size_t)ncore * NS * ns, sizeof *t);
    for (int r = -1; r < rounds; r++)
        for (int s = 0; s < NS; s++)
            for (int q = 0; q < ncore; q++) {
                set_core(cores[q]);
                for (int i = 0; i < NB; i++) {
                    double t0 = now_s();
                    shape_call(shp[s], a, b[i], c);
                    if (r >= 0)
                        t[(s * ncore + q) * ns + r * NB + i] = now_s() - t0;
                }
            }
    for (int s = 0; s < NS; s++)
        for (int q = 0; q < ncore; q++) {
            set_core(cores[q]);
            double *tv = t + (s * ncore + q) * ns, flop = 2.0 * shp[s][0] * shp[s][1] * shp[s][2];
            qsort(tv, (size_t)ns, sizeof *tv, cmp);
            printf("%4d x %3d x %3d  %-10s GFLOP/s: best %6.1f  10th pct %6.1f  median %6.1f\n",
                   shp[s][0], shp[s][1], shp[s][2], openblas_get_corename(), flop / tv[0] * 1e-9,
                   flop / tv[ns / 10] * 1e-9, flop / tv[ns / 2] * 1e-9);
        }
    return 0;
}

/* one pass of variant v, for instruction counts under load:
 *   valgrind --tool=callgrind --collect-atstart=no --toggle-collect=counted_pass gemm64 only V */
__attribute__((noinline)) float *counted_pass(int v) { return pass(v, NULL); }

int main(int argc, char **argv) {
    if (argc > 2 && !strcmp(argv[1], "only")) {
        openblas_set_num_threads(1);
        init_data();
        pass(atoi(argv[2]), NULL); /* warm-up: OpenBLAS's buffers */
        counted_pass(atoi(argv[2]));
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "shapes")) {
        openblas_set_num_threads(1);
        int rounds = argc > 2 ? atoi(argv[2]) : 10;
        return shapes(rounds, argc > 3 ? argc - 3 : 1,
                      argc > 3 ? (const char **)argv + 3 : (const char *[]){NULL});
    }
    int rounds = argc > 1 ? atoi(argv[1]) : 15, ncore = argc > 2 ? argc - 2 : 1;
    const char **cores = argc > 2 ? (const char **)argv + 2 : (const char *[]){NULL};
    openblas_set_num_threads(1);
    init_data();
    int nvar = ncore * NV;
    int ns = rounds * L; /* samples per variant: one per layer */
    double *t = calloc((size_t)nvar * ns, sizeof *t), flop = 2.0 * M * N * K;
    float *ref = buf((size_t)M * N, 0), *got = buf((size_t)M * N, 0);
    for (int c = 0; c < ncore; c++) { /* bits: each variant against nn, per kernel set */
        set_core(cores[c]);
        memcpy(ref, pass(0, NULL), sizeof(float) * M * N);
        for (int v = 1; v < NV; v++) {
            if (strstr(var[v].name, "-hot-")) continue; /* other weights: another result */
            memcpy(got, pass(v, NULL), sizeof(float) * M * N);
            double d = 0;
            for (int i = 0; i < M * N; i++)
                d = fmax(d, fabs((double)got[i] - ref[i]));
            if (d)
                printf("%s %s: max |diff| from nn %.3g\n", openblas_get_corename(), var[v].name, d);
        }
    }
    for (int r = -1; r < rounds; r++)
        for (int c = 0; c < ncore; c++) {
            set_core(cores[c]);
            for (int v = 0; v < NV; v++)
                pass(v, r >= 0 ? t + (c * NV + v) * ns + r * L : NULL);
        }
    for (int c = 0; c < ncore; c++) {
        set_core(cores[c]);
        for (int v = 0; v < NV; v++) {
            double *tv = t + (c * NV + v) * ns;
            qsort(tv, (size_t)ns, sizeof *tv, cmp);
            printf("%-10s %-10s GFLOP/s: best %6.1f  10th pct %6.1f  median %6.1f  (%d layers)\n",
                   openblas_get_corename(), var[v].name, flop / tv[0] * 1e-9,
                   flop / tv[ns / 10] * 1e-9, flop / tv[ns / 2] * 1e-9, ns);
        }
    }
    return 0;
}
