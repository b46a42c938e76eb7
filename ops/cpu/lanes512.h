/* lanes512.h - the one-vector AVX-512F operations of chain512.c that are more than one
 * intrinsic (maximum, minimum, relu, neg, and + and * in a fixed operand order), written once:
 * chain512.c computes with them, and the C the native tier (vm/run/jit.c) generates includes
 * this file's text (built into tsl), so a native fused group runs the very same instructions.
 * Self-contained: it includes only <immintrin.h>. */
#ifndef TSL_LANES512_H
#define TSL_LANES512_H
#include <immintrin.h>

#ifndef VOP
#define VOP(f, S) _mm512_##f##_##S
#endif

/* ew.c's max_f / min_f: a if a is NaN, else b if b is NaN, else a > b ? a : b (a < b for
 * min; equal operands, -0 and 0 included, give b). */
#define PICK(S, VT, NAME, CMP)                                                                     \
    static inline VT NAME(VT a, VT b) {                                                            \
        VT r = VOP(mask_blend, S)(VOP(cmp, S##_mask)(a, b, CMP), b, a);                            \
        r = VOP(mask_blend, S)(VOP(cmp, S##_mask)(b, b, _CMP_UNORD_Q), r, b);                      \
        return VOP(mask_blend, S)(VOP(cmp, S##_mask)(a, a, _CMP_UNORD_Q), r, a);                   \
    }
/* ew.c's relu: x > 0 ? x : (x is NaN ? x : +0). */
#define RELU(S, VT, NAME)                                                                          \
    static inline VT NAME(VT x) {                                                                  \
        VT zero = VOP(setzero, S)();                                                               \
        return VOP(maskz_mov, S)(                                                                  \
            VOP(cmp, S##_mask)(x, zero, _CMP_GT_OQ) | VOP(cmp, S##_mask)(x, x, _CMP_UNORD_Q), x);  \
    }
PICK(ps, __m512, max16, _CMP_GT_OQ)
PICK(ps, __m512, min16, _CMP_LT_OQ)
PICK(pd, __m512d, max8, _CMP_GT_OQ)
PICK(pd, __m512d, min8, _CMP_LT_OQ)
RELU(ps, __m512, relu16)
RELU(pd, __m512d, relu8)
static inline __m512 neg16(__m512 x) {
    return _mm512_castsi512_ps(
        _mm512_xor_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u)));
}
static inline __m512d neg8(__m512d x) {
    return _mm512_castsi512_pd(_mm512_xor_si512(
        _mm512_castpd_si512(x), _mm512_set1_epi64((long long)0x8000000000000000ull)));
}

/* a + b and a * b with a as the instruction's first source: where both are NaN, x86 returns
 * the first source's NaN, and a compiler may swap the operands of the intrinsics (they are
 * vector + and *, commutative to it) differently in two loops; the assembler may not. */
#define ORDERED(NAME, VT, INSN)                                                                    \
    static inline VT NAME(VT a, VT b) {                                                            \
        VT r;                                                                                      \
        __asm__(INSN " %2, %1, %0" : "=v"(r) : "v"(a), "vm"(b));                                   \
        return r;                                                                                  \
    }
ORDERED(add16, __m512, "vaddps")
ORDERED(mul16, __m512, "vmulps")
ORDERED(add8, __m512d, "vaddpd")
ORDERED(mul8, __m512d, "vmulpd")

#endif
