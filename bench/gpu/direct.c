/* direct.c - the baselines of the GPU benchmarks, without TSL: cuBLAS called directly on a
 * 4096 x 4096 f32 matmul (TSL's is held to within 1.1x; same math mode as the plugin,
 * pedantic: plain f32, no TF32), and a device-to-device copy of 64M f32, the time to read
 * and write them once (tanh-GELU over 64M is held to within 1.3x of it). Events around 10
 * calls, the median of 5 such runs; JSON lines as bench/gpu/gpu.tsl prints. Built and run
 * by tests/gpu/check.sh. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { if ((x) != 0) { fprintf(stderr, "%s failed\n", #x); return 1; } } while (0)

static int cmp(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return (x > y) - (x < y); }

int main(void) {
    const int n = 4096, k = 10, reps = 5;
    float *a, *b, *c, one = 1, zero = 0, ms[5];
    CHECK(cudaMalloc((void **)&a, sizeof(float) * n * n));
    CHECK(cudaMalloc((void **)&b, sizeof(float) * n * n));
    CHECK(cudaMalloc((void **)&c, sizeof(float) * n * n));
    CHECK(cudaMemset(a, 0, sizeof(float) * n * n));
    CHECK(cudaMemset(b, 0, sizeof(float) * n * n));
    cublasHandle_t h;
    CHECK(cublasCreate(&h));
    CHECK(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n));   /* warm-up */
    for (int r = 0; r < reps; r++) {
        cudaEventRecord(e0, 0);
        for (int i = 0; i < k; i++) CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, b, n, a, n, &zero, c, n));
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms[r], e0, e1);
        ms[r] /= k;
    }
    qsort(ms, reps, sizeof *ms, cmp);
    printf("{\"workload\": \"matmul 4096^2 f32\", \"impl\": \"cublas-direct\", \"ms\": %g, \"min\": %g, \"max\": %g, \"reps\": %d}\n",
           ms[reps / 2], ms[0], ms[reps - 1], reps);
    /* read and write 64M f32 once: a device-to-device copy */
    size_t bytes = sizeof(float) * 64 * 1024 * 1024;
    float *x, *y;
    CHECK(cudaMalloc((void **)&x, bytes));
    CHECK(cudaMalloc((void **)&y, bytes));
    CHECK(cudaMemcpy(y, x, bytes, cudaMemcpyDeviceToDevice));
    for (int r = 0; r < reps; r++) {
        cudaEventRecord(e0, 0);
        for (int i = 0; i < k; i++) CHECK(cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice, 0));
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms[r], e0, e1);
        ms[r] /= k;
    }
    qsort(ms, reps, sizeof *ms, cmp);
    printf("{\"workload\": \"read + write 64M f32 once\", \"impl\": \"cudaMemcpy-d2d\", \"ms\": %g, \"min\": %g, \"max\": %g, \"reps\": %d}\n",
           ms[reps / 2], ms[0], ms[reps - 1], reps);
    return 0;
}
