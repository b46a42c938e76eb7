/* chain512.c - the AVX-512F float kernels of + - * /, maximum, minimum, neg, abs, relu, sqrt
 * and the SLEEF functions (16 f32 / 8 f64 lanes, the last partial vector through masked loads
 * and stores), which cpu_binary and cpu_unary call where the processor has AVX-512F, and one
 * block of a fused chain (chain.h) with them: a step with vector code here runs here, two
 * arithmetic steps that cpu_chain_plan paired run as one pass, any other step runs its kernel.
 *
 * Lane by lane this is the scalar C of ew.c's kernels: IEEE + - * / and sqrt are correctly
 * rounded at any width, -x flips the sign bit, |x| clears it (NaN included, as the compiled
 * C does), and relu, maximum and minimum pick the very operand ew.c's expressions pick, NaN
 * and signed zeros included. The build compiles nothing here to FMA (-ffp-contract=off). */
#include <immintrin.h>
#include "chain.h"
#include "math512.h"
#include "lanes512.h"

/* S: ps (f32) or pd (f64); VT its vector type, MT its mask type, W its lanes (VOP: lanes512.h). */

/* y := op(a, b) over len elements, strides 0 or 1: one loop per operation, so the
 * operation is chosen once per step, not per vector. */
#define BIN_LOOP(S, T, VT, MT, W, EXPR)                                                            \
    {                                                                                              \
        if (sa && sb)                                                                              \
            BIN_SHAPE(S, VT, MT, W, EXPR, 1, 1)                                                    \
        else if (sa)                                                                               \
            BIN_SHAPE(S, VT, MT, W, EXPR, 1, 0)                                                    \
        else if (sb)                                                                               \
            BIN_SHAPE(S, VT, MT, W, EXPR, 0, 1)                                                    \
        else                                                                                       \
            BIN_SHAPE(S, VT, MT, W, EXPR, 0, 0)                                                    \
        return true;                                                                               \
    }
/* One loop shape: LA / LB say whether a / b are arrays (else one broadcast value), so the
 * loads are decided when the loop is compiled, not per vector. */
#define BIN_SHAPE(S, VT, MT, W, EXPR, LA, LB)                                                      \
    {                                                                                              \
        VT x = LA ? VOP(setzero, S)() : VOP(set1, S)(a[0]);                                        \
        VT y = LB ? VOP(setzero, S)() : VOP(set1, S)(b[0]);                                        \
        int64_t i = 0;                                                                             \
        for (; i + W <= len; i += W) {                                                             \
            if (LA) x = VOP(loadu, S)(a + i);                                                      \
            if (LB) y = VOP(loadu, S)(b + i);                                                      \
            VOP(storeu, S)(out + i, EXPR);                                                         \
        }                                                                                          \
        if (i < len) {                                                                             \
            MT m = (MT)((1u << (len - i)) - 1);                                                    \
            if (LA) x = VOP(maskz_loadu, S)(m, a + i);                                             \
            if (LB) y = VOP(maskz_loadu, S)(m, b + i);                                             \
            VOP(mask_storeu, S)(out + i, m, EXPR);                                                 \
        }                                                                                          \
    }
#define UN_LOOP(S, T, VT, MT, W, EXPR)                                                             \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + W <= len; i += W) {                                                             \
            VT x = VOP(loadu, S)(a + i);                                                           \
            VOP(storeu, S)(out + i, EXPR);                                                         \
        }                                                                                          \
        if (i < len) {                                                                             \
            MT m = (MT)((1u << (len - i)) - 1);                                                    \
            VT x = VOP(maskz_loadu, S)(m, a + i);                                                  \
            VOP(mask_storeu, S)(out + i, m, EXPR);                                                 \
        }                                                                                          \
        return true;                                                                               \
    }

/* UN_LOOP for a SLEEF function, asking meanwhile for one cache line (one vector) of each of
 * the arrays pr (to read) and pw (to write) per vector, where not NULL: in a fused chain, the
 * next block's lines, which then arrive while this block computes (cpu_chain_block512). */
#define MATH_LOOP(S, T, VT, MT, W, F)                                                              \
    {                                                                                              \
        int64_t i = 0;                                                                             \
        for (; i + W <= len; i += W) {                                                             \
            if (pr) __builtin_prefetch(pr + i * (int64_t)sizeof(T), 0, 3);                         \
            if (pw) __builtin_prefetch(pw + i * (int64_t)sizeof(T), 1, 3);                         \
            VT x = VOP(loadu, S)(a + i);                                                           \
            VOP(storeu, S)(out + i, F(x));                                                         \
        }                                                                                          \
        if (i < len) {                                                                             \
            MT m = (MT)((1u << (len - i)) - 1);                                                    \
            VT x = VOP(maskz_loadu, S)(m, a + i);                                                  \
            VOP(mask_storeu, S)(out + i, m, F(x));                                                 \
        }                                                                                          \
        return true;                                                                               \
    }

/* The SLEEF functions of math512.c by op, one vector at a time (ew.def's EW_VEC_LANE): the
 * function eager's array version calls for every element, the padded tail included. Not
 * here: the ops that take libm past a bound (log1p, sinh, cosh, asinh, acosh: cpu.h's
 * libm_past), which go through their kernels. */
#define ROW16(ID, NAME) [OP_##ID] = avx512_##NAME##_16,
#define ROW8(ID, NAME) [OP_##ID] = avx512_##NAME##_8,
static __m512 (*const vec_ps[OP__COUNT])(__m512) = {EW_VEC_LANE(ROW16)};
static __m512d (*const vec_pd[OP__COUNT])(__m512d) = {EW_VEC_LANE(ROW8)};

/* y := op(a, b) over len elements, strides 0 or 1, and y := op(a): false when op is not one
 * this file computes. */
#define KERNELS(S, T, VT, MT, W, ADD, MUL, MAX, MIN, RELUF, NEG)                                   \
    static bool binary_##S(OpCode op, const T *a, int64_t sa, const T *b, int64_t sb, T *out,      \
                           int64_t len) {                                                          \
        switch (op) {                                                                              \
        case OP_ADD:                                                                               \
            BIN_LOOP(S, T, VT, MT, W, ADD(x, y))                                                   \
        case OP_SUB:                                                                               \
            BIN_LOOP(S, T, VT, MT, W, VOP(sub, S)(x, y))                                           \
        case OP_MUL:                                                                               \
            BIN_LOOP(S, T, VT, MT, W, MUL(x, y))                                                   \
        case OP_DIV:                                                                               \
            BIN_LOOP(S, T, VT, MT, W, VOP(div, S)(x, y))                                           \
        case OP_MAXIMUM:                                                                           \
            BIN_LOOP(S, T, VT, MT, W, MAX(x, y))                                                   \
        case OP_MINIMUM:                                                                           \
            BIN_LOOP(S, T, VT, MT, W, MIN(x, y))                                                   \
        default:                                                                                   \
            return false;                                                                          \
        }                                                                                          \
    }                                                                                              \
    static bool unary_##S(OpCode op, const T *a, T *out, int64_t len, const char *pr,             \
                          const char *pw) {                                                        \
        switch (op) {                                                                              \
        case OP_NEG:                                                                               \
            UN_LOOP(S, T, VT, MT, W, NEG(x))                                                       \
        case OP_ABS:                                                                               \
            UN_LOOP(S, T, VT, MT, W, VOP(abs, S)(x))                                               \
        case OP_RELU:                                                                              \
            UN_LOOP(S, T, VT, MT, W, RELUF(x))                                                     \
        case OP_SQRT:                                                                              \
            UN_LOOP(S, T, VT, MT, W, VOP(sqrt, S)(x))                                              \
        default:                                                                                   \
            break;                                                                                 \
        }                                                                                          \
        VT (*f)(VT) = vec_##S[op];                                                                 \
        if (!f) return false;                                                                      \
        MATH_LOOP(S, T, VT, MT, W, f)                                                              \
    }
KERNELS(ps, float, __m512, __mmask16, 16, add16, mul16, max16, min16, relu16, neg16)
KERNELS(pd, double, __m512d, __mmask8, 8, add8, mul8, max8, min8, relu8, neg8)

/* Two steps in one pass (cpu_chain_plan's pairs): out := op2(op1(a, b), c), or
 * op2(c, op1(a, b)), the first result kept in a register: the same instructions on the same
 * values as two passes, one store and one load fewer per vector. */
static const OpCode arith[4] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV};
static int arith_index(OpCode op) {
    for (int i = 0; i < 4; i++)
        if (arith[i] == op) return i;
    return -1;
}
#define ARITH(S, ADD, MUL)                                                                         \
    static inline __m512##S##_t arith_##S(OpCode op, __m512##S##_t x, __m512##S##_t y) {           \
        switch (op) {                                                                              \
        case OP_ADD:                                                                               \
            return ADD(x, y);                                                                      \
        case OP_SUB:                                                                               \
            return VOP(sub, S)(x, y);                                                              \
        case OP_MUL:                                                                               \
            return MUL(x, y);                                                                      \
        default:                                                                                   \
            return VOP(div, S)(x, y);                                                              \
        }                                                                                          \
    }
typedef __m512 __m512ps_t;
typedef __m512d __m512pd_t;
ARITH(ps, add16, mul16)
ARITH(pd, add8, mul8)

#define PAIR_LOOP(S, T, VT, MT, W, I1, I2, LEFT)                                                   \
    case (I1 * 4 + I2) * 2 + LEFT: {                                                               \
        VT x = sa ? VOP(setzero, S)() : VOP(set1, S)(a[0]);                                        \
        VT y = sb ? VOP(setzero, S)() : VOP(set1, S)(b[0]);                                        \
        VT z = sc ? VOP(setzero, S)() : VOP(set1, S)(c[0]);                                        \
        int64_t i = 0;                                                                             \
        for (; i + W <= len; i += W) {                                                             \
            if (sa) x = VOP(loadu, S)(a + i);                                                      \
            if (sb) y = VOP(loadu, S)(b + i);                                                      \
            if (sc) z = VOP(loadu, S)(c + i);                                                      \
            VT t = arith_##S(arith[I1], x, y);                                                     \
            VT r = LEFT ? arith_##S(arith[I2], t, z) : arith_##S(arith[I2], z, t);                 \
            VOP(storeu, S)(out + i, r);                                                            \
        }                                                                                          \
        if (i < len) {                                                                             \
            MT m = (MT)((1u << (len - i)) - 1);                                                    \
            if (sa) x = VOP(maskz_loadu, S)(m, a + i);                                             \
            if (sb) y = VOP(maskz_loadu, S)(m, b + i);                                             \
            if (sc) z = VOP(maskz_loadu, S)(m, c + i);                                             \
            VT t = arith_##S(arith[I1], x, y);                                                     \
            VT r = LEFT ? arith_##S(arith[I2], t, z) : arith_##S(arith[I2], z, t);                 \
            VOP(mask_storeu, S)(out + i, m, r);                                                    \
        }                                                                                          \
        return;                                                                                    \
    }
#define PAIR_SIDES(S, T, VT, MT, W, I1, I2)                                                        \
    PAIR_LOOP(S, T, VT, MT, W, I1, I2, 0) PAIR_LOOP(S, T, VT, MT, W, I1, I2, 1)
#define PAIR_SECOND(S, T, VT, MT, W, I1)                                                           \
    PAIR_SIDES(S, T, VT, MT, W, I1, 0) PAIR_SIDES(S, T, VT, MT, W, I1, 1)                          \
    PAIR_SIDES(S, T, VT, MT, W, I1, 2)                                                             \
    PAIR_SIDES(S, T, VT, MT, W, I1, 3)
#define PAIR(S, T, VT, MT, W)                                                                      \
    static void pair_##S(int key, const T *a, int64_t sa, const T *b, int64_t sb, const T *c,      \
                         int64_t sc, T *out, int64_t len) {                                        \
        switch (key) {                                                                             \
            PAIR_SECOND(S, T, VT, MT, W, 0) PAIR_SECOND(S, T, VT, MT, W, 1)                        \
            PAIR_SECOND(S, T, VT, MT, W, 2) PAIR_SECOND(S, T, VT, MT, W, 3)                        \
        default: return;                                                                           \
        }                                                                                          \
    }
PAIR(ps, float, __m512, __mmask16, 16)
PAIR(pd, double, __m512d, __mmask8, 8)

/* + - * / of two f32 arrays, 8 lanes at a time: streaming from L3 or memory, 256-bit loads and
 * stores keep up better than 512-bit ones here (1M elements in blocks of 16K, thread CPU time,
 * minimum of 300: 512-bit 0.157 ms, 256-bit 0.148 ms, GCC's AVX2 loop 0.152 ms; 4M: 2.20,
 * 1.89, 2.00 ms); a fused chain's blocks, in L1, stay 512-bit. The same operation lane by
 * lane (+ and * in the same operand order), so the same bits. The elements it did; binary_ps
 * does the rest. */
#define ORDERED256(NAME, INSN)                                                                     \
    static inline __m256 NAME(__m256 a, __m256 b) {                                                \
        __m256 r;                                                                                  \
        __asm__(INSN " %2, %1, %0" : "=v"(r) : "v"(a), "vm"(b));                                   \
        return r;                                                                                  \
    }
ORDERED256(add8ps, "vaddps")
ORDERED256(mul8ps, "vmulps")
#define ARRAYS256(EXPR)                                                                            \
    for (; i + 8 <= len; i += 8) {                                                                 \
        __m256 x = _mm256_loadu_ps(a + i), y = _mm256_loadu_ps(b + i);                             \
        _mm256_storeu_ps(out + i, EXPR);                                                           \
    }                                                                                              \
    break;
static int64_t arrays_ps(OpCode op, const float *a, const float *b, float *out, int64_t len) {
    int64_t i = 0;
    switch (op) {
    case OP_ADD: ARRAYS256(add8ps(x, y))
    case OP_SUB: ARRAYS256(_mm256_sub_ps(x, y))
    case OP_MUL: ARRAYS256(mul8ps(x, y))
    case OP_DIV: ARRAYS256(_mm256_div_ps(x, y))
    default: break;
    }
    return i;
}

bool cpu_binary_avx512(OpCode op, DType dt, const void *a, int64_t sa, const void *b, int64_t sb,
                       void *out, int64_t n) {
    if (dt == DT_F32 && sa && sb && n > chain_block(DT_F32)) {   /* not a chain's block: that is in L1 */
        int64_t done = arrays_ps(op, a, b, out, n);
        if (done) return binary_ps(op, (const float *)a + done, 1, (const float *)b + done, 1, (float *)out + done, n - done);
    }
    if (dt == DT_F32) return binary_ps(op, a, sa, b, sb, out, n);
    return dt == DT_F64 && binary_pd(op, a, sa, b, sb, out, n);
}

bool cpu_unary_avx512(OpCode op, DType dt, const void *x, void *y, int64_t n) {
    if (dt == DT_F32) return unary_ps(op, x, y, n, NULL, NULL);
    return dt == DT_F64 && unary_pd(op, x, y, n, NULL, NULL);
}

/* Steps s and s + 1 of a pair over one block (their temporaries and arrays at `at`). */
static void run_pair(const ChainStep *s, DType dt, int64_t at, int64_t len, char *scratch) {
    const ChainStep *s2 = s + 1;
    size_t esz = dtype_size(dt);
    bool left =
        s2->in[0].kind == CHAIN_TEMP && s2->in[0].temp == s->temp; /* s's result is s2's left */
    int64_t sa, sb, sc;
    const char *a = chain_arg_at(&s->in[0], scratch, esz, at, &sa),
               *b = chain_arg_at(&s->in[1], scratch, esz, at, &sb);
    const char *c = chain_arg_at(&s2->in[left ? 1 : 0], scratch, esz, at, &sc);
    char *out = s2->temp >= 0 ? scratch + (size_t)s2->temp * CHAIN_BYTES
                              : (char *)s2->out + at * (int64_t)esz;
    int key = (arith_index(s->op) * 4 + arith_index(s2->op)) * 2 + left;
    if (dt == DT_F32)
        pair_ps(key, (const float *)a, sa, (const float *)b, sb, (const float *)c, sc, (float *)out,
                len);
    else
        pair_pd(key, (const double *)a, sa, (const double *)b, sb, (const double *)c, sc,
                (double *)out, len);
}

bool cpu_chain_math_op(OpCode op) { return vec_ps[op] != NULL; }

ChainAnyFn cpu_chain_lane_fn(OpCode op, DType dt) {
    if (dt == DT_F32 && vec_ps[op]) return (ChainAnyFn)vec_ps[op];
    return dt == DT_F64 && vec_pd[op] ? (ChainAnyFn)vec_pd[op] : NULL;
}

/* The block after this one of the chain's first array and of its last step's result, when
 * that is an array: what the math step asks for while it computes. */
static void next_lines(const ChainStep *steps, int n, size_t esz, int64_t at, int64_t len,
                       const char **pr, const char **pw) {
    *pr = *pw = NULL;
    for (int k = 0; k < n && !*pr; k++)
        for (int q = 0; q < steps[k].nin && !*pr; q++)
            if (steps[k].in[q].kind == CHAIN_ARRAY)
                *pr = (const char *)steps[k].in[q].data + (at + len) * (int64_t)esz;
    if (steps[n - 1].temp < 0) *pw = (const char *)steps[n - 1].out + (at + len) * (int64_t)esz;
}

int cpu_chain_block512(const ChainStep *steps, int n, DType dt, int64_t at, int64_t len,
                       void *scratch) {
    size_t esz = dtype_size(dt);
    for (int k = 0; k < n; k++) {
        const ChainStep *s = &steps[k];
        if (s->pair_next) { /* this step and the next in one pass (cpu_chain_plan) */
            run_pair(s, dt, at, len, scratch);
            k++;
            continue;
        }
        char *out = s->temp >= 0 ? (char *)scratch + (size_t)s->temp * CHAIN_BYTES
                                 : (char *)s->out + at * (int64_t)esz;
        int64_t sa, sb = 0;
        const char *a = chain_arg_at(&s->in[0], scratch, esz, at, &sa);
        bool done;
        if (s->fetch_next) { /* a SLEEF function (cpu_chain_plan) */
            const char *pr, *pw;
            next_lines(steps, n, esz, at, len, &pr, &pw);
            done = dt == DT_F32 ? unary_ps(s->op, (const float *)a, (float *)out, len, pr, pw)
                                : unary_pd(s->op, (const double *)a, (double *)out, len, pr, pw);
        } else if (s->nin == 1) {
            done = cpu_unary_avx512(s->op, dt, a, out, len);
        } else {
            const char *b = chain_arg_at(&s->in[1], scratch, esz, at, &sb);
            done = cpu_binary_avx512(s->op, dt, a, sa, b, sb, out, len);
        }
        if (done) continue;
        int rc = cpu_chain_step(s, dt, at, len, scratch); /* an op without vector code here */
        if (rc) return rc;
    }
    return 0;
}
