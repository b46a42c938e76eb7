/* vecloop.h - the array loops of math.c (AVX2) and math512.c (AVX-512), written once for any
 * vector width W: every element goes through the one vector function, the tail padded with
 * zeros into one more vector, so a whole array and any chunk of it give the same bits. */
#ifndef TSL_VECLOOP_H
#define TSL_VECLOOP_H
#include <stdint.h>
#include <string.h>

/* void NAME(x, y, n): y[i] = F(x[i]) (y may be x) */
#define VEC1(NAME, T, W, LOAD, STORE, F)                                         \
    void NAME(const T *x, T *y, int64_t n) {                                     \
        int64_t i = 0;                                                           \
        for (; i + W <= n; i += W) STORE(y + i, F(LOAD(x + i)));                 \
        if (i < n) {                                                             \
            T buf[W] = { 0 };                                                    \
            memcpy(buf, x + i, sizeof(T) * (size_t)(n - i));                     \
            STORE(buf, F(LOAD(buf)));                                            \
            memcpy(y + i, buf, sizeof(T) * (size_t)(n - i));                     \
        }                                                                        \
    }

/* void NAME(a, sa, b, sb, y, n): y[i] = F(a[i], b[i]), each operand with stride 0 (one value,
 * broadcast) or 1; y may be a or b (loads come first) */
#define VEC2(NAME, T, W, VT, LOAD, SET1, STORE, F)                               \
    void NAME(const T *a, int64_t sa, const T *b, int64_t sb, T *y, int64_t n) { \
        if (n <= 0) return;                                                      \
        VT va = SET1(a[0]), vb = SET1(b[0]);                                     \
        int64_t i = 0;                                                           \
        for (; i + W <= n; i += W) {                                             \
            if (sa) va = LOAD(a + i);                                            \
            if (sb) vb = LOAD(b + i);                                            \
            STORE(y + i, F(va, vb));                                             \
        }                                                                        \
        if (i < n) {                                                             \
            T ba[W] = { 0 }, bb[W] = { 0 };                                      \
            for (int64_t k = 0; k < n - i; k++) {                                \
                ba[k] = a[sa ? i + k : 0];                                       \
                bb[k] = b[sb ? i + k : 0];                                       \
            }                                                                    \
            STORE(ba, F(LOAD(ba), LOAD(bb)));                                    \
            memcpy(y + i, ba, sizeof(T) * (size_t)(n - i));                      \
        }                                                                        \
    }

#endif
