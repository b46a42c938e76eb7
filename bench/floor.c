/* floor.c - the plain-C floor of `make bench`: the same work with no interpreter at all.
 *   "matmul 512x512": one cblas_sgemm call.
 *   "MLP 45 layers": one cblas_sgemv per layer into preallocated buffers, bias add and ReLU
 *   in plain loops (memory-bound: about 45 MB of weights per pass).
 * Prints JSON lines like workloads.tsl. Usage: floor [quick] */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int reps = 7;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report(const char *name, double *t) {
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("{\"workload\": \"%s\", \"impl\": \"c-floor\", \"ms\": %.6f, \"min\": %.6f, \"max\": %.6f, \"reps\": %d}\n",
           name, t[reps / 2], t[0], t[reps - 1], reps);
}

static float *randbuf(size_t n) {
    float *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++) p[i] = (float)rand() / RAND_MAX - 0.5f;
    return p;
}

int main(int argc, char **argv) {
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    if (quick) reps = 5;
    double t[16];
    float *a = randbuf(512 * 512), *b = randbuf(512 * 512), *c = randbuf(512 * 512);
    for (int r = -1; r < reps; r++) {
        double t0 = now_ms();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 512, 512, 512, 1.0f, a, 512, b, 512, 0.0f, c, 512);
        if (r >= 0) t[r] = now_ms() - t0;
    }
    report("matmul 512x512", t);

    enum { L = 45 };
    int in[L], out[L];
    for (int i = 0; i < 42; i++) in[i] = out[i] = 512;
    in[42] = 512; out[42] = 256; in[43] = 256; out[43] = 128; in[44] = 128; out[44] = 2;
    float *w[L], *bias[L], *h0 = malloc(512 * sizeof(float)), *h1 = malloc(512 * sizeof(float));
    for (int i = 0; i < L; i++) { w[i] = randbuf((size_t)in[i] * out[i]); bias[i] = randbuf((size_t)out[i]); }
    int passes = quick ? 100 : 1000;
    for (int r = -1; r < reps; r++) {
        double t0 = now_ms();
        for (int p = 0; p < passes; p++) {
            for (int k = 0; k < 512; k++) h0[k] = (float)rand() / RAND_MAX;
            float *x = h0, *y = h1;
            for (int i = 0; i < L; i++) {
                cblas_sgemv(CblasRowMajor, CblasTrans, in[i], out[i], 1.0f, w[i], out[i], x, 1, 0.0f, y, 1);
                for (int k = 0; k < out[i]; k++) {
                    y[k] += bias[i][k];
                    if ((i == 42 || i == 43) && y[k] < 0) y[k] = 0;
                }
                float *s = x; x = y; y = s;
            }
        }
        if (r >= 0) t[r] = (now_ms() - t0) / passes;
    }
    report("MLP 45 layers, batch 1 (per pass)", t);
    return 0;
}
