/* combine_check.c - allreduce's ordered combine on a GPU (make gpu-check): the plugin's
 * rank_combine kernel against the CPU's arithmetic (ops/cpu/collective.c: out = ((p0 op p1)
 * op p2) ..., each step rounded to the dtype; mean divides the sum by the rank count), bit
 * for bit, for every (op, dtype) on 1 to 4 ranks' slices. Runs with one GPU: it is the part
 * of the NCCL path that a single device can check for more than one rank. Loads the plugin
 * as ops/gpu/gpu.c does; without a GPU it says so and exits 0. Usage: combine_check PLUGIN */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/plugin.h"

enum { DT_I64 = 1, DT_F32 = 2, DT_F64 = 3 };   /* tensor.h's DType */
enum { SUM, MEAN, MAX, MIN };                   /* opcall.h's RedOp */
#define COUNT 100003

/* the CPU's steps (collective.c's COMBINE), written out per type */
#define REF(T)                                                                                 \
    static void ref_##T(int r, const T *parts, int size, long n, T *out) {                     \
        memcpy(out, parts, sizeof(T) * (size_t)n);                                             \
        for (int k = 1; k < size; k++)                                                         \
            for (long i = 0; i < n; i++) {                                                     \
                T a = out[i], b = parts[(long)k * n + i];                                      \
                out[i] = r == MAX ? (b > a || b != b ? b : a) : r == MIN ? (b < a || b != b ? b : a) : a + b; \
            }                                                                                  \
        if (r == MEAN)                                                                         \
            for (long i = 0; i < n; i++) out[i] /= (T)size;                                    \
    }
REF(float)
REF(double)
typedef long long i64;
REF(i64)

/* values of many magnitudes (so the order of additions changes the bits), NaN and infinity
 * for max and min */
static double value(int k, long i, int r) {
    double x = ((double)rand() / RAND_MAX - 0.5) * pow(10.0, (double)(rand() % 17 - 8));
    if (r >= MAX && i % 97 == (long)k) return NAN;
    if (r >= MAX && i % 89 == 0) return k % 2 ? INFINITY : -INFINITY;
    return x;
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "bin/libtsl_cuda.so";
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    TslCudaPluginFn get = h ? (TslCudaPluginFn)dlsym(h, "tsl_cuda_plugin") : NULL;
    const TslCudaPlugin *p = get ? get() : NULL;
    if (!p || p->abi != TSL_CUDA_ABI) {
        printf("combine_check: SKIP, no plugin (%s)\n", h ? "not a CUDA plugin of this build" : dlerror());
        return 0;
    }
    char err[400] = "";
    if (p->init(err, sizeof err) != CUDA_OK) {
        printf("combine_check: SKIP, no GPU (%s)\n", err[0] ? err : "no CUDA device found");
        return 0;
    }
    static const char *const names[] = { "sum", "mean", "max", "min" }, *const dts[] = { "", "i64", "f32", "f64" };
    int cases = 0, failures = 0;
    for (int dt = DT_I64; dt <= DT_F64; dt++)
        for (int r = SUM; r <= MIN; r++)
            for (int size = 1; size <= 4; size++) {
                if (r == MEAN && dt == DT_I64) continue;
                size_t es = dt == DT_F32 ? 4 : 8, nb = es * COUNT;
                char *parts = malloc(nb * (size_t)size), *want = malloc(nb), *got = malloc(nb);
                srand((unsigned)(dt * 100 + r * 10 + size));
                for (int k = 0; k < size; k++)
                    for (long i = 0; i < COUNT; i++) {
                        double v = value(k, i, r);
                        char *at = parts + ((size_t)k * COUNT + (size_t)i) * es;
                        if (dt == DT_F32) *(float *)at = (float)v;
                        else if (dt == DT_F64) *(double *)at = v;
                        else *(i64 *)at = (i64)(v * 1e6);
                    }
                if (dt == DT_F32) ref_float(r, (float *)parts, size, COUNT, (float *)want);
                else if (dt == DT_F64) ref_double(r, (double *)parts, size, COUNT, (double *)want);
                else ref_i64(r, (i64 *)parts, size, COUNT, (i64 *)want);
                void *dp = NULL, *dout = NULL;
                int rc = p->alloc(&dp, nb * (size_t)size, err, sizeof err);
                if (!rc) rc = p->alloc(&dout, nb, err, sizeof err);
                if (!rc) rc = p->to_device(dp, parts, nb * (size_t)size, err, sizeof err);
                if (!rc) rc = p->rank_combine(r, dt, dp, size, COUNT, dout, err, sizeof err);
                if (!rc) rc = p->to_host(got, dout, nb, err, sizeof err);
                if (!rc) rc = p->synchronize(err, sizeof err);
                cases++;
                if (rc) {
                    printf("combine_check: FAIL, %s %s on %d ranks: %s\n", names[r], dts[dt], size, err);
                    failures++;
                } else if (memcmp(got, want, nb)) {
                    long i = 0;
                    while (!memcmp(got + i * (long)es, want + i * (long)es, es)) i++;
                    printf("combine_check: FAIL, %s %s on %d ranks differs from the CPU's arithmetic at element %ld\n",
                           names[r], dts[dt], size, i);
                    failures++;
                }
                if (dp) p->free(dp, nb * (size_t)size);
                if (dout) p->free(dout, nb);
                free(parts);
                free(want);
                free(got);
            }
    printf("combine_check: %d of %d (op, dtype, ranks) cases bitwise equal to the CPU's arithmetic\n", cases - failures,
           cases);
    return failures != 0;
}
