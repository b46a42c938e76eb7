/* floor.c - the plain-C floor of `make bench`: the same work with no interpreter at all.
 *   "matmul 512x512": one cblas_sgemm call.
 *   "MLP 45 layers": one cblas_sgemv per layer into preallocated buffers, bias add and ReLU
 *   in plain loops (memory-bound: about 45 MB of weights per pass); at batch 64 and 256 one
 *   cblas_sgemm per layer, then the same loops over its output.
 *   "tanh-GELU": one hand-fused pass over the input, 16 floats at a time, with SLEEF's
 *   AVX-512 tanh (the 3.5-ULP one TSL uses; AVX2 where there is no AVX-512) and the same
 *   operations in the same order as TSL's chain (compiled with -ffp-contract=off: no FMA).
 * Prints JSON lines like workloads.tsl. Usage: floor [quick] */
#include <cblas.h>
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int reps = 7;

/* SLEEF's vector tanh, the functions TSL's kernels call (declared here: sleef.h declares
 * them only when the whole file is compiled for that instruction set) */
__m512 Sleef_finz_tanhf16_u35avx512f(__m512 x);
__m256 Sleef_finz_tanhf8_u35avx2(__m256 x);

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

/* 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))), left to right as TSL's
 * chain evaluates it (x * x * x is (x * x) * x). */
__attribute__((target("avx512f"))) static void gelu_avx512(const float *x, float *y, size_t n) {
    const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f), c = _mm512_set1_ps(0.7978845608f),
                 k = _mm512_set1_ps(0.044715f);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 v = _mm512_loadu_ps(x + i);
        __m512 cube = _mm512_mul_ps(_mm512_mul_ps(_mm512_mul_ps(k, v), v), v);
        __m512 t = Sleef_finz_tanhf16_u35avx512f(_mm512_mul_ps(c, _mm512_add_ps(v, cube)));
        _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, t)));
    }
    for (; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

__attribute__((target("avx2"))) static void gelu_avx2(const float *x, float *y, size_t n) {
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), c = _mm256_set1_ps(0.7978845608f),
                 k = _mm256_set1_ps(0.044715f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256 cube = _mm256_mul_ps(_mm256_mul_ps(_mm256_mul_ps(k, v), v), v);
        __m256 t = Sleef_finz_tanhf8_u35avx2(_mm256_mul_ps(c, _mm256_add_ps(v, cube)));
        _mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, t)));
    }
    for (; i < n; i++) y[i] = 0.5f * x[i] * (1.0f + tanhf(0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
}

static void gelu_floor(int quick, double *t) {
    size_t n = quick ? 1000000 : 4000000;
    float *x = randbuf(n), *y = malloc(n * sizeof *y);
    int avx512 = __builtin_cpu_supports("avx512f");
    for (int r = -1; r < reps; r++) {
        double t0 = now_ms();
        if (avx512) gelu_avx512(x, y, n);
        else gelu_avx2(x, y, n);
        if (r >= 0) t[r] = now_ms() - t0;
    }
    char name[64];
    snprintf(name, sizeof name, "tanh-GELU %zuM", n / 1000000);
    report(name, t);
    free(x);
    free(y);
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
    /* batches: one cblas_sgemm per layer, then bias add and ReLU over its output */
    float *hb0 = randbuf(256 * 512), *hb1 = malloc(256 * 512 * sizeof(float)), *xb = randbuf(256 * 512);
    for (int batch = 64; batch <= 256; batch *= 4) {
        int bpasses = (quick ? 640 : 2560) / batch;
        for (int r = -1; r < reps; r++) {
            double t0 = now_ms();
            for (int p = 0; p < bpasses; p++) {
                memcpy(hb0, xb, (size_t)batch * 512 * sizeof(float));
                float *x = hb0, *y = hb1;
                for (int i = 0; i < L; i++) {
                    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, out[i], in[i], 1.0f, x, in[i], w[i],
                                out[i], 0.0f, y, out[i]);
                    for (int q = 0; q < batch; q++)
                        for (int k = 0; k < out[i]; k++) {
                            float v = y[q * out[i] + k] + bias[i][k];
                            y[q * out[i] + k] = (i == 42 || i == 43) && v < 0 ? 0 : v;
                        }
                    float *s = x; x = y; y = s;
                }
            }
            if (r >= 0) t[r] = (now_ms() - t0) / bpasses;
        }
        char name[64];
        snprintf(name, sizeof name, "MLP 45 layers, batch %d (per pass)", batch);
        report(name, t);
    }
    gelu_floor(quick, t);
    return 0;
}
