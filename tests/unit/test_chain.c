/* test_chain.c - ops/cpu/chain.h, the fused-group engine, called directly: every fusable op
 * in f32 and f64, over lengths around the vector, block and part boundaries, must give the
 * bits of its own kernels (cpu_unary, cpu_binary over the whole arrays: what eager runs) on
 * the AVX-512 path and on the AVX2 path, whole and split into pieces as the thread pool
 * splits it.
 * One chain of the vector-coded ops is checked against values computed with NumPy 1.24
 * (float64 and float32 arrays), pasted here. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <xmmintrin.h>
#include "suites.h"
#include "cpu/cpu.h"
#include "mem.h"
#include "cpu/cpu.h"
#include "cpu/chain.h"

static const int64_t lengths[] = {0, 1, 15, 16, 17, 255, 256, 257, 4095, 4096, 4097, 40001};
#define NLEN ((int)(sizeof lengths / sizeof lengths[0]))
#define NMAX 40001

/* Values from every range the kernels treat apart: NaN, infinities, signed zeros,
 * subnormals, past the bounds where libm takes over (cpu.h's libm_past), then pseudo-random
 * numbers of magnitudes 1e-3 .. 1e3, either sign. */
static void fill(double *x, int64_t n, uint32_t seed) {
    static const double special[] = {
        NAN,  -NAN,  INFINITY, -INFINITY, 0.0,    -0.0, 1.0,  -1.0,  0.5,   -0.5,
        2.0,  3.0,   1e-310,   -1e-40,    1e-5,   88.0, 89.0, -90.0, 709.5, 711.0,
        1e19, -1e19, 1e31,     1e151,     -1e301, 0.7,  0.99, -0.99, 1.01,  710.0};
    int ns = (int)(sizeof special / sizeof special[0]);
    uint32_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        if ((s >> 24) % 5 == 0) {
            x[i] = special[(s >> 8) % (uint32_t)ns];
            continue;
        }
        double m = (double)(s >> 8) / (double)(1u << 24), e = (double)((s >> 4) % 7) - 3.0;
        x[i] = (s & 1 ? -m : m) * pow(10.0, e);
    }
}

typedef struct {
    DType dt;
    int64_t n;
    char *x, *y, *out1, *out2; /* the chain's arrays */
    char *r0, *r1, *r2, *r3;   /* the kernels' results */
    char *scratch;
} Arrays;

static void *buf(DType dt) { return mem_alloc((size_t)NMAX * dtype_size(dt) + 64); }

static void arrays_init(Arrays *a, DType dt, int64_t n, uint32_t seed) {
    static double xd[NMAX], yd[NMAX];
    a->dt = dt;
    a->n = n;
    char **all[] = {&a->x, &a->y, &a->out1, &a->out2, &a->r0, &a->r1, &a->r2, &a->r3};
    for (int k = 0; k < 8; k++) *all[k] = buf(dt);
    a->scratch = mem_alloc((size_t)8 * CHAIN_BYTES);
    fill(xd, n, seed);
    fill(yd, n, seed * 7 + 1);
    for (int64_t i = 0; i < n; i++) {
        if (dt == DT_F32)
            ((float *)a->x)[i] = (float)xd[i], ((float *)a->y)[i] = (float)yd[i];
        else
            ((double *)a->x)[i] = xd[i], ((double *)a->y)[i] = yd[i];
    }
}

static void arrays_free(Arrays *a) {
    char *all[] = {a->x, a->y, a->out1, a->out2, a->r0, a->r1, a->r2, a->r3, a->scratch};
    for (int k = 0; k < 9; k++) mem_free(all[k]);
}

/* The dtype and length of the arrays the steps built next name (the chain checks them). */
static DType cur_dt;
static int64_t cur_n;
static void extent(DType dt, int64_t n) { cur_dt = dt, cur_n = n; }
static ChainArg temp(int k) { return (ChainArg){CHAIN_TEMP, k, NULL, cur_dt, 0, 0}; }
static ChainArg array(const void *p) { return (ChainArg){CHAIN_ARRAY, -1, p, cur_dt, cur_n, 0}; }
static ChainArg scalar(const void *p) { return (ChainArg){CHAIN_SCALAR, -1, p, cur_dt, 0, 0}; }
static ChainStep step1(OpCode op, ChainArg a, int t, void *out) {
    return (ChainStep){op, 1, {a, a}, t, out, cur_dt, out ? cur_n : 0, false, false};
}
static ChainStep step2(OpCode op, ChainArg a, ChainArg b, int t, void *out) {
    return (ChainStep){op, 2, {a, b}, t, out, cur_dt, out ? cur_n : 0, false, false};
}

/* The ways a chain runs: the processor's path (AVX-512 here when it has it) over [0, n) and
 * in pieces cut at odd places; the AVX2 path over [0, n) and in pieces cut where the thread
 * pool cuts (whole blocks: a compiler's loop may treat its last elements apart). */
enum { WAYS = 4 };
static const char *ways[WAYS] = {"default path", "default path in pieces", "AVX2 path",
                                 "AVX2 path in pieces"};

/* The chain over [0, n) the given way, compared bitwise with the kernels' results for the
 * same path: out1 with r2, out2 with r3. */
static void run_way(Arrays *a, const ChainStep *s, int ns, int way, const char *what) {
    size_t bytes = (size_t)a->n * dtype_size(a->dt);
    memset(a->out1, 0x5a, bytes);
    memset(a->out2, 0x5a, bytes);
    vm_force_avx2(way >= 2);
    if (way % 2 == 0) {
        ck_assert_int_eq(cpu_chain_run(s, ns, a->dt, 0, a->n, a->scratch), 0);
    } else {
        int64_t cut1 = a->n / 3 | 1, cut2 = a->n - a->n / 5;
        int64_t block = chain_block(a->dt);
        if (way == 3) cut1 = cut1 / block * block, cut2 = cut2 / block * block;
        if (cut1 > a->n) cut1 = a->n;
        if (cut2 < cut1) cut2 = cut1;
        ck_assert_int_eq(cpu_chain_run(s, ns, a->dt, 0, cut1, a->scratch), 0);
        ck_assert_int_eq(cpu_chain_run(s, ns, a->dt, cut1, cut2, a->scratch), 0);
        ck_assert_int_eq(cpu_chain_run(s, ns, a->dt, cut2, a->n, a->scratch), 0);
    }
    vm_force_avx2(0);
    size_t esz = dtype_size(a->dt);
    for (int o = 0; o < 2; o++) {
        const char *got = o ? a->out2 : a->out1, *want = o ? a->r3 : a->r2;
        int64_t i = 0;
        while (i < a->n && !memcmp(got + i * (int64_t)esz, want + i * (int64_t)esz, esz)) i++;
        if (i == a->n) continue;
        double g = a->dt == DT_F32 ? ((const float *)got)[i] : ((const double *)got)[i];
        double w = a->dt == DT_F32 ? ((const float *)want)[i] : ((const double *)want)[i];
        ck_abort_msg("%s %s n=%lld %s: output %d [%lld] is %.17g, the kernels give %.17g", what,
                     dtype_name(a->dt), (long long)a->n, ways[way], o + 1, (long long)i, g, w);
    }
}

static OpCode fusable_op(int i) {
    int k = 0;
    for (int op = 0; op < OP__COUNT; op++) {
        const OpDef *d = &op_info[op];
        if (!(d->flags & F_FUSE) || (d->kind != K_UNARY && d->kind != K_BINARY)) continue;
        if (k++ == i) return (OpCode)op;
    }
    return OP__COUNT;
}
static int fusable_count(void) {
    int n = 0;
    while (fusable_op(n) != OP__COUNT) n++;
    return n;
}

/* unary op: t0 = op(x); t1 = t0 + y; out1 = op(t1); out2 = out1 - t0 */
static void check_unary(OpCode op, DType dt, int64_t n) {
    Arrays a;
    arrays_init(&a, dt, n, (uint32_t)(op * 131 + n));
    extent(dt, n);
    ChainStep s[4] = {
        step1(op, array(a.x), 0, NULL),
        step2(OP_ADD, temp(0), array(a.y), 1, NULL),
        step1(op, temp(1), -1, a.out1),
        step2(OP_SUB, array(a.out1), temp(0), -1, a.out2),
    };
    cpu_chain_plan(s, 4);
    if (cpu_has_avx512()) /* a SLEEF first step asks for the next block while it computes */
        ck_assert(s[0].fetch_next == cpu_chain_math_op(op) && !s[2].fetch_next);
    for (int way = 0; way < WAYS; way++) {
        vm_force_avx2(way >= 2);
        ck_assert_int_eq(cpu_unary(op, dt, a.x, a.r0, n), 0);
        ck_assert_int_eq(cpu_binary(OP_ADD, dt, a.r0, 1, a.y, 1, a.r1, n), 0);
        ck_assert_int_eq(cpu_unary(op, dt, a.r1, a.r2, n), 0);
        ck_assert_int_eq(cpu_binary(OP_SUB, dt, a.r2, 1, a.r0, 1, a.r3, n), 0);
        run_way(&a, s, 4, way, op_info[op].name);
    }
    arrays_free(&a);
}

/* binary op: t0 = op(x, y); t1 = op(t0, c); t2 = op(d, t1); out1 = op(t2, t0); out2 = op(out1, x)
 * with numbers c and d that change with n (NaN and -0.0 among them) */
static void check_binary(OpCode op, DType dt, int64_t n, int which) {
    static const double cs[] = {1.5, -0.0, NAN, 1e30, -2.25, 3.0};
    double c = cs[which % 6], d = cs[(which + 3) % 6];
    float cf = (float)c, df = (float)d;
    const void *pc = dt == DT_F32 ? (const void *)&cf : (const void *)&c;
    const void *pd = dt == DT_F32 ? (const void *)&df : (const void *)&d;
    Arrays a;
    arrays_init(&a, dt, n, (uint32_t)(op * 17 + n));
    extent(dt, n);
    ChainStep s[5] = {
        step2(op, array(a.x), array(a.y), 0, NULL),       step2(op, temp(0), scalar(pc), 1, NULL),
        step2(op, scalar(pd), temp(1), 2, NULL),          step2(op, temp(2), temp(0), -1, a.out1),
        step2(op, array(a.out1), array(a.x), -1, a.out2),
    };
    cpu_chain_plan(s, 5);
    if (cpu_has_avx512()) /* the pairs and the SLEEF step's requests are AVX-512's */
        ck_assert(!s[0].pair_next &&
                  s[1].pair_next == (op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV));
    for (int way = 0; way < WAYS; way++) {
        vm_force_avx2(way >= 2);
        ck_assert_int_eq(cpu_binary(op, dt, a.x, 1, a.y, 1, a.r0, n), 0);
        ck_assert_int_eq(cpu_binary(op, dt, a.r0, 1, pc, 0, a.r1, n), 0);
        ck_assert_int_eq(cpu_binary(op, dt, pd, 0, a.r1, 1, a.r2, n), 0); /* r2: t2 for now */
        ck_assert_int_eq(cpu_binary(op, dt, a.r2, 1, a.r0, 1, a.r2, n), 0);
        ck_assert_int_eq(cpu_binary(op, dt, a.r2, 1, a.x, 1, a.r3, n), 0);
        run_way(&a, s, 5, way, op_info[op].name);
    }
    arrays_free(&a);
}

START_TEST(chain_matches_kernels) {
    OpCode op = fusable_op(_i);
    ck_assert_int_lt(op, OP__COUNT);
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < NLEN; k++) {
            DType dt = d ? DT_F64 : DT_F32;
            if (op_info[op].kind == K_UNARY)
                check_unary(op, dt, lengths[k]);
            else
                check_binary(op, dt, lengths[k], k);
        }
}
END_TEST

/* Two arithmetic steps computed in one pass (cpu_chain_plan), every pair of + - * / with the
 * first result as the second's left or right operand:
 *   t0 = op1(x, y); out1 = op2(t0, c) or op2(y, t0); t2 = op1(out1, d); out2 = op2(t2, x) or op2(x,
 * t2) */
static const OpCode arith_ops[4] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV};
START_TEST(chain_pairs_match_kernels) {
    OpCode op1 = arith_ops[_i / 8], op2 = arith_ops[_i / 2 % 4];
    bool left = _i % 2;
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < NLEN; k++) {
            DType dt = d ? DT_F64 : DT_F32;
            int64_t n = lengths[k];
            double c = k % 3 ? 1.75 : NAN, dd = k % 2 ? -0.0 : 2.5;
            float cf = (float)c, df = (float)dd;
            const void *pc = d ? (const void *)&c : (const void *)&cf,
                       *pd = d ? (const void *)&dd : (const void *)&df;
            Arrays a;
            arrays_init(&a, dt, n, (uint32_t)(_i * 29 + n));
            extent(dt, n);
            ChainStep s[4] = {
                step2(op1, array(a.x), array(a.y), 0, NULL),
                left ? step2(op2, temp(0), scalar(pc), -1, a.out1)
                     : step2(op2, array(a.y), temp(0), -1, a.out1),
                step2(op1, array(a.out1), scalar(pd), 2, NULL),
                left ? step2(op2, temp(2), array(a.x), -1, a.out2)
                     : step2(op2, array(a.x), temp(2), -1, a.out2),
            };
            cpu_chain_plan(s, 4);
            if (cpu_has_avx512())
                ck_assert(s[0].pair_next && !s[1].pair_next && s[2].pair_next && !s[3].pair_next);
            for (int way = 0; way < WAYS; way++) {
                vm_force_avx2(way >= 2);
                ck_assert_int_eq(cpu_binary(op1, dt, a.x, 1, a.y, 1, a.r0, n), 0);
                if (left)
                    ck_assert_int_eq(cpu_binary(op2, dt, a.r0, 1, pc, 0, a.r2, n), 0);
                else
                    ck_assert_int_eq(cpu_binary(op2, dt, a.y, 1, a.r0, 1, a.r2, n), 0);
                ck_assert_int_eq(cpu_binary(op1, dt, a.r2, 1, pd, 0, a.r1, n), 0);
                if (left)
                    ck_assert_int_eq(cpu_binary(op2, dt, a.r1, 1, a.x, 1, a.r3, n), 0);
                else
                    ck_assert_int_eq(cpu_binary(op2, dt, a.x, 1, a.r1, 1, a.r3, n), 0);
                run_way(&a, s, 4, way, op_info[op1].name);
            }
            arrays_free(&a);
        }
}
END_TEST

/* The ops chain512.c writes as vector code, against NumPy:
 *   m = np.maximum(x, y); r = np.sqrt(np.abs(-np.minimum(m, x / y))) - dt(0.5) * m */
static const double nx[] = {NAN, 1.0,  -0.0,  0.0,      -INFINITY, 2.0, NAN,  3.5, -7.25,
                            0.0, 1e30, -1e-3, INFINITY, -0.0,      5.0, -2.0, 0.25};
static const double ny[] = {1.0, NAN,   0.0,  -0.0,     3.0,  NAN,  NAN, -3.5, -7.25,
                            0.0, -1e30, 2e-3, INFINITY, -0.0, -5.0, 4.0, 0.5};
#define NN ((int)(sizeof nx / sizeof nx[0]))
static const double m64[NN] = {NAN, NAN,   0.0,   -0.0,     3.0,  NAN, NAN, 3.5, -7.25,
                               0.0, 1e+30, 0.002, INFINITY, -0.0, 5.0, 4.0, 0.5};
static const double r64[NN] = {NAN,
                               NAN,
                               NAN,
                               NAN,
                               INFINITY,
                               NAN,
                               NAN,
                               -0.75,
                               6.317582403567252,
                               NAN,
                               -5e+29,
                               0.7061067811865476,
                               NAN,
                               NAN,
                               -1.5,
                               -1.2928932188134525,
                               0.4571067811865476};
static const float m32[NN] = {NAN,
                              NAN,
                              0.0f,
                              -0.0f,
                              3.0f,
                              NAN,
                              NAN,
                              3.5f,
                              -7.25f,
                              0.0f,
                              1.0000000150474662e+30f,
                              0.0020000000949949026f,
                              INFINITY,
                              -0.0f,
                              5.0f,
                              4.0f,
                              0.5f};
static const float r32[NN] = {NAN,
                              NAN,
                              NAN,
                              NAN,
                              INFINITY,
                              NAN,
                              NAN,
                              -0.75f,
                              6.317582130432129f,
                              NAN,
                              -5.000000075237331e+29f,
                              0.7061067819595337f,
                              NAN,
                              NAN,
                              -1.5f,
                              -1.2928931713104248f,
                              0.4571067690849304f};

static bool same(double got, double want) {
    if (isnan(want)) return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

START_TEST(chain_vector_ops_numpy) {
    for (int way = 0; way < 2; way++)
        for (int d = 0; d < 2; d++) {
            DType dt = d ? DT_F64 : DT_F32;
            double x64[NN], y64[NN], m[NN], r[NN], scratch[CHAIN_BYTES];
            float x32[NN], y32[NN], mf[NN], rf[NN], half32 = 0.5f;
            double half64 = 0.5;
            for (int i = 0; i < NN; i++)
                x64[i] = nx[i], y64[i] = ny[i], x32[i] = (float)nx[i], y32[i] = (float)ny[i];
            const void *x = d ? (void *)x64 : (void *)x32, *y = d ? (void *)y64 : (void *)y32;
            void *mo = d ? (void *)m : (void *)mf, *ro = d ? (void *)r : (void *)rf;
            extent(dt, NN);
            ChainStep s[8] = {
                step2(OP_MAXIMUM, array(x), array(y), -1, mo),
                step2(OP_DIV, array(x), array(y), 1, NULL),
                step2(OP_MINIMUM, array(mo), temp(1), 2, NULL),
                step1(OP_NEG, temp(2), 3, NULL),
                step1(OP_ABS, temp(3), 4, NULL),
                step1(OP_SQRT, temp(4), 5, NULL),
                step2(OP_MUL, scalar(d ? (void *)&half64 : (void *)&half32), array(mo), 6, NULL),
                step2(OP_SUB, temp(5), temp(6), -1, ro),
            };
            cpu_chain_plan(s, 8);
            vm_force_avx2(way);
            ck_assert_int_eq(cpu_chain_run(s, 8, dt, 0, NN, scratch), 0);
            vm_force_avx2(0);
            for (int i = 0; i < NN; i++) {
                double gm = d ? m[i] : mf[i], gr = d ? r[i] : rf[i];
                double wm = d ? m64[i] : m32[i], wr = d ? r64[i] : r32[i];
                ck_assert_msg(same(gm, wm), "%s maximum [%d]: got %.17g want %.17g", dtype_name(dt),
                              i, gm, wm);
                ck_assert_msg(same(gr, wr), "%s chain [%d]: got %.17g want %.17g", dtype_name(dt),
                              i, gr, wr);
            }
        }
}
END_TEST

/* relu: max(x, 0) with NaN kept and -0 made +0 (ops.def), from math */
START_TEST(chain_relu_signs) {
    float x[5] = {-0.0f, 0.0f, NAN, -3.0f, 2.5f}, y[5], scratch[CHAIN_BYTES / 4];
    extent(DT_F32, 5);
    ChainStep s[1] = {step1(OP_RELU, array(x), -1, y)};
    for (int way = 0; way < 2; way++) {
        vm_force_avx2(way);
        ck_assert_int_eq(cpu_chain_run(s, 1, DT_F32, 0, 5, scratch), 0);
        vm_force_avx2(0);
        ck_assert(y[0] == 0.0f && !signbit(y[0]));
        ck_assert(y[1] == 0.0f && !signbit(y[1]));
        ck_assert(isnan(y[2]));
        ck_assert(y[3] == 0.0f && !signbit(y[3]));
        ck_assert(y[4] == 2.5f);
    }
}
END_TEST

/* cpu_binary with both operands one value (stride 0): every element is a + b, on both paths;
 * 1.5 + 2.25 = 3.75 and 1.5 * 2.25 = 3.375 exactly. */
START_TEST(chain_binary_two_scalars) {
    float a = 1.5f, b = 2.25f, y[37];
    double ad = 1.5, bd = 2.25, yd[37];
    for (int way = 0; way < 2; way++) {
        vm_force_avx2(way);
        ck_assert_int_eq(cpu_binary(OP_ADD, DT_F32, &a, 0, &b, 0, y, 37), 0);
        ck_assert_int_eq(cpu_binary(OP_MUL, DT_F64, &ad, 0, &bd, 0, yd, 37), 0);
        vm_force_avx2(0);
        for (int i = 0; i < 37; i++) ck_assert(y[i] == 3.75f && yd[i] == 3.375);
    }
}
END_TEST

/* + - * / of two long f32 arrays (cpu_binary_avx512's 256-bit loop past a chain's block)
 * give each element the bits of the same op on that element alone (the 512-bit masked path),
 * NaN payloads included: where both operands are NaN, the first operand's, as x86 gives. */
START_TEST(chain_long_f32_arrays_match_one_by_one) {
    static const OpCode ops[] = {OP_ADD, OP_SUB, OP_MUL, OP_DIV};
    static const int64_t ns[] = {513, 520, 1000, 16389};
    static float a[16389], b[16389], y[16389];
    static double d[16389];
    fill(d, 16389, 91);
    for (int i = 0; i < 16389; i++) a[i] = (float)d[i];
    fill(d, 16389, 92);
    for (int i = 0; i < 16389; i++) b[i] = (float)d[i];
    for (int i = 0; i < 16389; i += 37) {   /* both NaN, with different payloads */
        uint32_t pa = 0x7fc00000u | (uint32_t)i, pb = 0xffc00000u | (uint32_t)(i + 1);
        memcpy(&a[i], &pa, 4);
        memcpy(&b[i], &pb, 4);
    }
    for (int o = 0; o < 4; o++)
        for (int k = 0; k < 4; k++) {
            int64_t n = ns[k];
            ck_assert_int_eq(cpu_binary(ops[o], DT_F32, a, 1, b, 1, y, n), 0);
            for (int64_t i = 0; i < n; i++) {
                float one;
                ck_assert_int_eq(cpu_binary(ops[o], DT_F32, &a[i], 1, &b[i], 1, &one, 1), 0);
                ck_assert_msg(!memcmp(&one, &y[i], 4), "op %d n %lld element %lld", (int)ops[o], (long long)n, (long long)i);
            }
        }
}
END_TEST

/* The chain does not trust its steps (a graph file may have built them): a chain of bool
 * or i64 elements (its blocks and strides are sized for f32 and f64: a bool chain of 4096
 * elements walked with an 8-byte stride ran off its arrays), an array of another dtype or
 * shorter than the range, a temporary outside the chain or a step of 3 operands is an
 * error, before anything is read or written: the guard bytes after each array stay. */
START_TEST(chain_refuses_steps_that_do_not_fit) {
    enum { N = 4096, GUARD = 64 };
    static double x[N + GUARD], y[N + GUARD];
    static char scratch[2 * CHAIN_BYTES];
    for (int way = 0; way < 2; way++) {
        vm_force_avx2(way);
        for (int c = 0; c < 7; c++) {
            memset(x, 0x5a, sizeof x);
            memset(y, 0x5a, sizeof y);
            DType dt = c == 0 ? DT_BOOL : c == 1 ? DT_I64 : DT_F32;
            extent(dt, N);
            ChainStep s[2] = {step2(OP_ADD, array(x), array(x), 0, NULL), step1(OP_NEG, temp(0), -1, y)};
            if (c == 2) s[0].in[1].n = N - 1;          /* one element short */
            if (c == 3) s[0].in[1].dtype = DT_F64;     /* an f64 array in an f32 chain */
            if (c == 4) s[1].in[0].temp = 2;           /* a temporary past the chain's 2 */
            if (c == 5) s[1].out_n = N / 2;            /* a result array too short */
            if (c == 6) s[0].nin = 3;
            cpu_chain_plan(s, 2);
            ck_assert_int_eq(cpu_chain_run(s, 2, dt, 0, N, scratch), -1);
            ck_assert_msg(strstr(op_error(), "fused"), "case %d: %s", c, op_error());
            for (int i = 0; i < N + GUARD; i++) ck_assert_msg(memcmp(&y[i], &x[i], 8) == 0, "case %d wrote y[%d]", c, i);
        }
        vm_force_avx2(0);
    }
    extent(DT_F32, 8);   /* and the same steps fitting their arrays run */
    float a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8];
    ChainStep s[2] = {step2(OP_ADD, array(a), array(a), 0, NULL), step1(OP_NEG, temp(0), -1, b)};
    ck_assert_int_eq(cpu_chain_run(s, 2, DT_F32, 0, 8, scratch), 0);
    for (int i = 0; i < 8; i++) ck_assert(b[i] == -2.0f * (float)(i + 1));
}
END_TEST

/* A row vector (CHAIN_ROW) and a value per row (CHAIN_COL) over rows of every length around
 * the block (512 f32) and the lanes, on both paths, from elements that start mid-row: each
 * element is (x - c[row]) * r[col] as cpu_binary gives it one row at a time (what eager's
 * broadcast runs). A unary over one value per row, or too few values for the range, is
 * refused before anything runs. */
START_TEST(chain_row_and_column_operands) {
    enum { MAXN = 3 * 1031 + 7 };
    static float x[MAXN], r[1031], c[MAXN], y[MAXN], want[MAXN], t[1031];
    static char scratch[3 * CHAIN_BYTES];
    static double d[MAXN];
    fill(d, MAXN, 7);
    for (int i = 0; i < MAXN; i++) x[i] = (float)d[i], c[i] = (float)d[(i * 7) % MAXN];
    for (int i = 0; i < 1031; i++) r[i] = (float)d[(i * 13 + 5) % MAXN];
    static const int64_t rows[] = {1, 7, 16, 17, 128, 511, 512, 513, 1024, 1031};
    for (int k = 0; k < 10; k++) {
        int64_t n = rows[k], m = 3, total = n * m, begin = n > 3 ? n / 2 : 0;
        extent(DT_F32, total);
        ChainArg row = {CHAIN_ROW, -1, r, DT_F32, n, n}, col = {CHAIN_COL, -1, c, DT_F32, m, n};
        ChainStep s[2] = {step2(OP_SUB, array(x), col, 0, NULL), step2(OP_MUL, temp(0), row, -1, y)};
        for (int way = 0; way < 2; way++) {
            memset(y, 0, sizeof y);
            cpu_chain_plan(s, 2);
            vm_force_avx2(way);   /* each path against itself: NaN payloads differ between them */
            for (int64_t q = 0; q < m; q++) {
                cpu_binary(OP_SUB, DT_F32, x + q * n, 1, c + q, 0, t, n);
                cpu_binary(OP_MUL, DT_F32, t, 1, r, 1, want + q * n, n);
            }
            ck_assert_int_eq(cpu_chain_run(s, 2, DT_F32, begin, total, scratch), 0);
            vm_force_avx2(0);
            for (int64_t i = begin; i < total; i++)
                ck_assert_msg(memcmp(&y[i], &want[i], 4) == 0, "way %d, row %lld, element %lld: %g, want %g", way, (long long)n, (long long)i, y[i], want[i]);
        }
        ChainStep u[1] = {step1(OP_NEG, col, -1, y)};
        ck_assert_int_eq(cpu_chain_run(u, 1, DT_F32, 0, total, scratch), -1);
        s[0].in[1].n = m - 1;   /* the last row's value missing */
        ck_assert_int_eq(cpu_chain_run(s, 2, DT_F32, 0, total, scratch), -1);
        s[0].in[1].n = m;
        s[1].in[1].n = n - 1;   /* a row vector one short */
        ck_assert_int_eq(cpu_chain_run(s, 2, DT_F32, 0, total, scratch), -1);
    }
}
END_TEST

Suite *chain_suite(void) {
    Suite *s = suite_create("chain");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, chain_matches_kernels, 0, fusable_count());
    tcase_add_loop_test(tc, chain_pairs_match_kernels, 0, 32);
    tcase_add_test(tc, chain_vector_ops_numpy);
    tcase_add_test(tc, chain_relu_signs);
    tcase_add_test(tc, chain_binary_two_scalars);
    tcase_add_test(tc, chain_long_f32_arrays_match_one_by_one);
    tcase_add_test(tc, chain_refuses_steps_that_do_not_fit);
    tcase_add_test(tc, chain_row_and_column_operands);
    suite_add_tcase(s, tc);
    return s;
}
