/* sort.c - the plugin's ordering and padding kernels (sort, argsort, topk, unique, pad):
 * launches of the module in gen_sort.c. The host side is ops/gpu/gpu_sort.c. */
#include <stdio.h>
#include <string.h>
#include "cuda_impl.h"
#include "gen.h"
#include "gen_sort.h"

static CUfunction sort_kernel(const char *name, char *err, size_t n) {
    return cuda_kernel(gen_sort_source(), name, err, n);
}

static const char *elem_suffix(int esz) { return esz == 1 ? "1" : esz == 4 ? "4" : esz == 8 ? "8" : NULL; }

enum { TILE = 512 };   /* pairs per tile of tsl_sort_tile (its shared memory) */

/* Fills the rows of P (key, position) pairs from the lines of in and sorts every row with
 * the bitonic network, all rows at once: the steps inside 512-pair tiles run in shared
 * memory (tsl_sort_tile: every step up to k = 512 in one launch, then the last nine steps
 * of each larger k in one), the others (j >= 512) one launch each over global memory. */
static int sort_rows(int dt, const void *in, int64_t outer, int64_t len, int64_t inner, int desc, int64_t P,
                     uint64_t *key, int64_t *pos, char *err, size_t n) {
    char name[64];
    gen_family_name(name, sizeof name, "sort_keys", gen_dtype_suffix(dt), NULL);
    CUfunction fk = sort_kernel(name, err, n), fs = fk ? sort_kernel("tsl_sort_step", err, n) : NULL;
    CUfunction ft = fs ? sort_kernel("tsl_sort_tile", err, n) : NULL;
    if (!ft) return -1;
    long long o = outer, l = len, i = inner, p = P, total = outer * inner * P, tiles = (total + TILE - 1) / TILE;
    unsigned long long flip = desc ? ~0ull : 0;
    void *kp[] = { &in, &o, &l, &i, &p, &flip, &key, &pos };
    if (cuda_launch(fk, total, kp, err, n)) return -1;
    long long k0 = 2, k1 = P < TILE ? P : TILE;
    void *tp[] = { &key, &pos, &total, &p, &k0, &k1 };
    if (P > 1 && cuda_launch_blocks(ft, tiles, tp, err, n)) return -1;
    for (long long k = 2 * TILE; k <= P; k <<= 1) {
        for (long long j = k >> 1; j >= TILE; j >>= 1) {
            void *sp[] = { &key, &pos, &total, &p, &k, &j };
            if (cuda_launch(fs, total, sp, err, n)) return -1;
        }
        k0 = k1 = k;
        if (cuda_launch_blocks(ft, tiles, tp, err, n)) return -1;
    }
    return 0;
}

static bool pow2(int64_t P) { return P > 0 && (P & (P - 1)) == 0; }

int cuda_sort(int dt, const void *in, int64_t outer, int64_t len, int64_t inner, int desc, int64_t kout, void *vals,
              int64_t *idx, uint64_t *key, int64_t *pos, int64_t P, char *err, size_t n) {
    int esz = dt == DT_BOOL ? 1 : dt == DT_F32 ? 4 : 8;
    if (dt < DT_BOOL || dt > DT_F64 || !pow2(P) || P < len || kout > len) {
        snprintf(err, n, "sort: bad arguments to the GPU kernel");
        return -1;
    }
    if (outer * inner == 0 || len == 0 || kout == 0) return 0;
    if (sort_rows(dt, in, outer, len, inner, desc, P, key, pos, err, n)) return -1;
    char name[32];
    snprintf(name, sizeof name, "tsl_sort_write_%s", elem_suffix(esz));
    CUfunction fw = sort_kernel(name, err, n);
    if (!fw) return -1;
    long long o = outer, l = len, i = inner, p = P, k = kout;
    void *wp[] = { &in, &pos, &o, &l, &i, &p, &k, &vals, &idx };
    return cuda_launch(fw, outer * kout * inner, wp, err, n);
}

int cuda_unique(int dt, const void *in, int64_t count, void *out, int64_t *m, uint64_t *key, int64_t *pos,
                int64_t *rank, int64_t P, char *err, size_t n) {
    int esz = dt == DT_BOOL ? 1 : dt == DT_F32 ? 4 : 8;
    *m = 0;
    if (dt < DT_BOOL || dt > DT_F64 || !pow2(P) || P < count) {
        snprintf(err, n, "unique: bad arguments to the GPU kernel");
        return -1;
    }
    if (count == 0) return 0;
    if (sort_rows(dt, in, 1, count, 1, 0, P, key, pos, err, n)) return -1;
    char name[32];
    snprintf(name, sizeof name, "tsl_unique_write_%s", elem_suffix(esz));
    CUfunction ff = sort_kernel("tsl_unique_flags", err, n), fc = ff ? sort_kernel("tsl_unique_scan", err, n) : NULL;
    CUfunction fw = fc ? sort_kernel(name, err, n) : NULL;
    if (!fw) return -1;
    long long cnt = count;
    void *fp[] = { &key, &cnt, &rank };
    void *cp[] = { &rank, &cnt };
    void *wp[] = { &in, &key, &pos, &rank, &cnt, &out };
    if (cuda_launch(ff, count, fp, err, n) || cuda_launch_blocks(fc, 1, cp, err, n) ||
        cuda_launch(fw, count, wp, err, n))
        return -1;
    /* the result's size is data: the host needs it now (unique is F_DYNAMIC) */
    cudaError_t e = cudaMemcpyAsync(m, rank + (count - 1), sizeof *m, cudaMemcpyDeviceToHost, cuda.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(cuda.stream);
    return e == cudaSuccess ? 0 : cuda_fail_rt(e, "unique", err, n);
}

int cuda_pad(int esz, int ndim, const int64_t *oshape, const int64_t *ishape, const int64_t *before,
             const void *value, const void *in, void *out, int64_t count, char *err, size_t n) {
    if (!elem_suffix(esz) || ndim < 0 || ndim > 32) return snprintf(err, n, "no GPU pad for %d-byte elements", esz), -1;
    char name[32];
    snprintf(name, sizeof name, "tsl_pad_%s", elem_suffix(esz));
    CUfunction f = sort_kernel(name, err, n);
    if (!f) return -1;
    GenPadArgs a = { .n = count, .ndim = ndim, .in = in, .out = out };
    AXES(a.oshape, oshape, ndim);
    AXES(a.ishape, ishape, ndim);
    AXES(a.before, before, ndim);
    memcpy(&a.value, value, (size_t)esz);   /* the element's bits in the low bytes (little-endian) */
    void *params[] = { &a };
    return cuda_launch(f, count, params, err, n);
}
