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

/* SLEEF 3.5.1's Sleef_finz_tanhf16_u35avx512f (what tanh's f32 steps call, math512.c) written
 * out instruction for instruction, so the native tier's loop can keep its values in registers
 * across it: a call clobbers every zmm register, and the loop around it then reloads its
 * constants and spills its live values (tanh-GELU over 4M f32: 2.87 against 2.67 ms, one
 * thread). The same bits as the library for all 2^32 inputs (checked exhaustively, also with
 * subnormals flushed); the tier uses it only with that very library file, after comparing the
 * two on a sample of every exponent (cpu_chain_inline_ok), and calls the library otherwise.
 * expm1(2|x|) by 2^q * (1 + p(s)) - 1, then e / (e + 2); 1 past 8.664339742 and for a NaN
 * quotient; x's sign; NaN x gives all bits set, as SLEEF's. */
static inline __m512 f32_bits16(unsigned u) { return _mm512_castsi512_ps(_mm512_set1_epi32((int)u)); }
static inline __m512 tanh16(__m512 x) {
    __m512i xi = _mm512_castps_si512(x), one = _mm512_set1_epi32(0x3f800000);
    __m512 y = _mm512_castsi512_ps(_mm512_and_si512(xi, _mm512_set1_epi32(0x7fffffff)));
    __m512 d = _mm512_add_ps(y, y);
    __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(d, f32_bits16(0x3fb8aa3b)));   /* 1 / ln 2 */
    __m512 qf = _mm512_cvtepi32_ps(q);
    __m512 s = _mm512_fmadd_ps(qf, f32_bits16(0xbf317200), d);                  /* ln 2, split */
    s = _mm512_fmadd_ps(qf, f32_bits16(0xb5bfbe8e), s);
    __m512 s2 = _mm512_mul_ps(s, s), s4 = _mm512_mul_ps(s2, s2);
    __m512 p6 = _mm512_fmadd_ps(s, f32_bits16(0x39502bda), f32_bits16(0x3ab696c9));
    __m512 p7 = _mm512_fmadd_ps(s, f32_bits16(0x3c0888a6), f32_bits16(0x3d2aaa7a));
    __m512 u = _mm512_fmadd_ps(s, f32_bits16(0x3e2aaaab), f32_bits16(0x3f000000));
    u = _mm512_fmadd_ps(s2, p7, u);
    u = _mm512_fmadd_ps(s4, p6, u);
    u = _mm512_fmadd_ps(s2, u, s);
    __m512 t = _mm512_add_ps(u, f32_bits16(0x3f800000));
    __m512i e1 = _mm512_srai_epi32(q, 1), e2 = _mm512_sub_epi32(q, e1);
    t = _mm512_mul_ps(t, _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(e1, 23), one)));
    t = _mm512_mul_ps(t, _mm512_castsi512_ps(_mm512_add_epi32(_mm512_slli_epi32(e2, 23), one)));
    t = _mm512_add_ps(t, f32_bits16(0xbf800000));
    t = _mm512_mask_mov_ps(t, _mm512_testn_epi32_mask(q, q), u);
    __m512 r = _mm512_div_ps(t, _mm512_add_ps(t, f32_bits16(0x40000000)));
    __mmask16 big = _mm512_cmp_ps_mask(y, f32_bits16(0x410aa123), _CMP_GT_OQ);   /* 8.664339742 */
    r = _mm512_mask_mov_ps(r, big | _mm512_cmp_ps_mask(r, r, _CMP_UNORD_Q), f32_bits16(0x3f800000));
    r = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(r),
                                             _mm512_and_si512(xi, _mm512_set1_epi32((int)0x80000000u))));
    return _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), f32_bits16(0xffffffffu));
}

#endif
