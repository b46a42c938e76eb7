/* gen_linalg.c - the integer matmul kernel's source (see gen_linalg.h). */
#include "gen_linalg.h"

#define STR_(...) #__VA_ARGS__
#define STR(...) STR_(__VA_ARGS__)

static const char source[] =
    "struct TslImatmulArgs { " STR(GEN_IMATMUL_ARGS_FIELDS) " };\n"
    /* one thread per result element: its batch index picks a's and b's matrices, then the
     * dot product in unsigned 64-bit arithmetic (wraps as i64 does everywhere in TSL) */
    "extern \"C\" __global__ void tsl_imatmul(TslImatmulArgs a) {\n"
    "  for (long long t = tsl_tid(); t < a.total; t += tsl_nthreads()) {\n"
    "    long long mn = a.m * a.n, bi = t / mn, r = t % mn, i = r / a.n, j = r % a.n, oa = 0, ob = 0;\n"
    "    for (int d = a.nbd - 1; d >= 0; d--) { long long q = bi % a.bshape[d]; bi /= a.bshape[d];\n"
    "      oa += q * a.astr[d]; ob += q * a.bstr[d]; }\n"
    "    const long long *x = (const long long *)a.a + oa, *y = (const long long *)a.b + ob;\n"
    "    tsl_u64 s = 0;\n"
    "    for (long long p = 0; p < a.k; p++)\n"
    "      s += (tsl_u64)x[a.ta ? p * a.m + i : i * a.k + p] * (tsl_u64)y[p * a.n + j];\n"
    "    ((long long *)a.c)[t] = (long long)s; } }\n";

const char *gen_linalg_source(void) { return source; }
