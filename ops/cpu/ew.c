/* ew.c - elementwise ops: NumPy broadcasting, PyTorch dtype promotion, and the kernels
 * for unary and binary ops, astype, clip and where.
 *
 * Binary ops convert both operands to one compute dtype, then run a kernel over runs
 * of the broadcast iteration whose inner strides are 0 or 1. Each (op, dtype) kernel
 * has one loop order, so the static VM calling the same kernel gets the same bits. */
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"
#include "infer.h"
#include "ew_cpu.h"

/* ---------- broadcasting ---------- */

int shape_broadcast(const Shape *a, const Shape *b, Shape *out, const char *opname) {
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int i = 0; i < n; i++) {
        int ia = a->ndim - n + i, ib = b->ndim - n + i;
        int64_t x = ia >= 0 ? a->d[ia] : 1, y = ib >= 0 ? b->d[ib] : 1;
        if (x != y && x != 1 && y != 1) {
            char sa[600], sb[600];
            op_failk(ERRK_SHAPE, "shape mismatch for '%s': %s and %s", opname, shape_str(a, sa, sizeof sa), shape_str(b, sb, sizeof sb));
            return -1;
        }
        out->d[i] = x == 1 ? y : x;
    }
    out->ndim = n;
    return 0;
}

void biter_init(BIter *it, const Shape *out, const Shape *const *ins, int nin) {
    int nd = out->ndim;
    int64_t stride[3][TSL_MAX_RANK];
    for (int k = 0; k < nin; k++) {
        int64_t s = 1;
        for (int i = nd - 1; i >= 0; i--) {
            int j = ins[k]->ndim - nd + i;
            int64_t d = j >= 0 ? ins[k]->d[j] : 1;
            stride[k][i] = (d == out->d[i] && d != 1) ? s : 0;
            s *= d;
        }
    }
    /* drop size-1 dims and merge dims that are contiguous for every input */
    it->nd = 0;
    for (int i = 0; i < nd; i++) {
        if (out->d[i] == 1) continue;
        int m = it->nd;
        bool merge = m > 0;
        for (int k = 0; k < nin && merge; k++)
            merge = it->stride[k][m - 1] == stride[k][i] * out->d[i];
        if (merge) {
            it->shape[m - 1] *= out->d[i];
            for (int k = 0; k < nin; k++) it->stride[k][m - 1] = stride[k][i];
        } else {
            it->shape[m] = out->d[i];
            for (int k = 0; k < nin; k++) it->stride[k][m] = stride[k][i];
            it->nd++;
        }
    }
    if (it->nd == 0) {
        it->nd = 1;
        it->shape[0] = 1;
        for (int k = 0; k < nin; k++) it->stride[k][0] = 0;
    }
}

int biter_run(const BIter *it, int nin, BRunFn fn, void *ctx) {
    int64_t idx[TSL_MAX_RANK] = { 0 }, off[3] = { 0, 0, 0 }, out_off = 0;
    int last = it->nd - 1;
    int64_t inner = it->shape[last];
    for (;;) {
        int rc = fn(ctx, off, out_off, inner);
        if (rc) return rc;
        out_off += inner;
        int d = last - 1;
        for (; d >= 0; d--) {
            idx[d]++;
            for (int k = 0; k < nin; k++) off[k] += it->stride[k][d];
            if (idx[d] < it->shape[d]) break;
            for (int k = 0; k < nin; k++) off[k] -= it->stride[k][d] * it->shape[d];
            idx[d] = 0;
        }
        if (d < 0) break;
    }
    return 0;
}

/* ---------- astype ---------- */

Tensor *op_astype(const Tensor *a, DType dt) {
    if (a->dtype == dt) return tensor_copy(a);
    Shape s;
    shape_of(a, &s);
    Tensor *r = tensor_new(dt, &s);
    if (r && op_astype_into(a, r)) {
        tensor_release(r);
        r = NULL;
    }
    return r;
}

/* a converted into r (a's shape, r's dtype; r may not be a unless the dtypes are equal). */
int op_astype_into(const Tensor *a, Tensor *r) {
    DType dt = r->dtype;
    int64_t n = a->size;
    if (a->dtype == dt) {
        if (r != a) memcpy(r->data, a->data, (size_t)n * dtype_size(dt));
        return 0;
    }
    if (dt == DT_I64 && dtype_is_float(a->dtype)) {
        int64_t *o = r->data;
        for (int64_t i = 0; i < n; i++) {
            double x = tensor_get(a, i);
            if (!double_fits_i64(x)) {
                op_fail("cannot convert %s to i64", isnan(x) ? "nan" : isinf(x) ? (x > 0 ? "inf" : "-inf") : "an out-of-range value");
                return -1;
            }
            o[i] = (int64_t)x;
        }
        return 0;
    }
#define CONVERT(TI, TO, EXPR)                                    \
    {                                                            \
        const TI *x = a->data;                                   \
        TO *o = r->data;                                         \
        for (int64_t i = 0; i < n; i++) o[i] = EXPR;             \
    }
    switch (a->dtype * 4 + dt) {
    case DT_BOOL * 4 + DT_I64: CONVERT(uint8_t, int64_t, x[i]) break;
    case DT_BOOL * 4 + DT_F32: CONVERT(uint8_t, float, x[i]) break;
    case DT_BOOL * 4 + DT_F64: CONVERT(uint8_t, double, x[i]) break;
    case DT_I64 * 4 + DT_BOOL: CONVERT(int64_t, uint8_t, x[i] != 0) break;
    case DT_I64 * 4 + DT_F32: CONVERT(int64_t, float, (float)x[i]) break;
    case DT_I64 * 4 + DT_F64: CONVERT(int64_t, double, (double)x[i]) break;
    case DT_F32 * 4 + DT_BOOL: CONVERT(float, uint8_t, x[i] != 0) break;
    case DT_F32 * 4 + DT_F64: CONVERT(float, double, x[i]) break;
    case DT_F64 * 4 + DT_BOOL: CONVERT(double, uint8_t, x[i] != 0) break;
    case DT_F64 * 4 + DT_F32: CONVERT(double, float, (float)x[i]) break;
    default: break;
    }
#undef CONVERT
    return 0;
}

/* ---------- unary ---------- */
/* The element functions ew_<op>_<dtype> and the lists of which kernel each dtype has are
 * generated from ops/ew.def (build/ew_cpu.h, ops/gen/ewgen.c): every loop below runs one. */

/* ~x for a number that is an integer in i64's range (the op layer checks); NaN otherwise,
 * never undefined behaviour. */
static double bitwise_not_number(double x) {
    int64_t a;
    return num_to_i64(x, &a) ? (double)~a : NAN;
}

double op_unary_number(OpCode op, double x) {
    switch (op) {
#define NUMBER1(ID, NAME) case OP_##ID: return ew_##NAME##_n(x);
    EW_NUMBER1(NUMBER1)
#undef NUMBER1
    case OP_BITWISE_NOT: return bitwise_not_number(x);
    default: return NAN;
    }
}

/* The ops computed by math.c's vector array functions (ew.def's vec rows), by op. */
typedef void (*VmF32)(const float *x, float *y, int64_t n);
typedef void (*VmF64)(const double *x, double *y, int64_t n);
static const struct {
    VmF32 f32;
    VmF64 f64;
} vm_math[OP__COUNT] = {
#define VM_ROW(ID, NAME) [OP_##ID] = { vm_##NAME##_f32, vm_##NAME##_f64 },
    EW_VEC_UNARY(VM_ROW)
#undef VM_ROW
};

/* ew.def's composites that call one vector row (ewgen.c: split_call), in blocks: pre(x),
 * the row's vector function, post(x, v). Each element's bits are the composite's written
 * out as ops, so a fused chain, the native tier (both call cpu_unary for these) and eager
 * agree, and SLEEF's vectors replace one libm call an element. x and y may alias: element
 * i is read before it is written. Not auto-vectorised: a vector loop may swap a product's
 * operands, and which NaN comes out would then depend on where the element falls. */
enum { SPLIT_BLOCK = 256 };
#if defined(__clang__)   /* clang has no optimize attribute: its loop pragma instead */
#define SPLIT_NOVEC
#define SPLIT_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define SPLIT_NOVEC __attribute__((optimize("no-tree-vectorize")))
#define SPLIT_LOOP
#endif
#define SPLIT_FN(ID, NAME, INNER, T, S)                                                 \
    SPLIT_NOVEC                                                                         \
    static void split_##NAME##_##S(const T *x, T *y, int64_t n) {                       \
        T v[SPLIT_BLOCK];                                                               \
        for (int64_t i = 0; i < n; i += SPLIT_BLOCK) {                                  \
            int64_t m = n - i < SPLIT_BLOCK ? n - i : SPLIT_BLOCK;                      \
            SPLIT_LOOP for (int64_t j = 0; j < m; j++) v[j] = ew_##NAME##_pre_##S(x[i + j]); \
            vm_##INNER##_##S(v, v, m);                                                  \
            SPLIT_LOOP for (int64_t j = 0; j < m; j++) y[i + j] = ew_##NAME##_post_##S(x[i + j], v[j]); \
        }                                                                               \
    }
#define SPLIT_F32(ID, NAME, INNER) SPLIT_FN(ID, NAME, INNER, float, f32)
#define SPLIT_F64(ID, NAME, INNER) SPLIT_FN(ID, NAME, INNER, double, f64)
EW_SPLIT_UNARY(SPLIT_F32)
EW_SPLIT_UNARY(SPLIT_F64)
#undef SPLIT_F32
#undef SPLIT_F64
#undef SPLIT_FN
static const struct {
    VmF32 f32;
    VmF64 f64;
} split_math[OP__COUNT] = {
#define SPLIT_ROW(ID, NAME, INNER) [OP_##ID] = { split_##NAME##_f32, split_##NAME##_f64 },
    EW_SPLIT_UNARY(SPLIT_ROW)
#undef SPLIT_ROW
};

static int unsupported(OpCode op, DType dt) {
    op_failk(ERRK_TYPE, "%s is not supported for %s tensors", op_info[op].name, dtype_name(dt));
    return -1;
}

bool cpu_unary_is_math(OpCode op, DType dt) {
    return (dt == DT_F32 && (vm_math[op].f32 || split_math[op].f32)) ||
           (dt == DT_F64 && (vm_math[op].f64 || split_math[op].f64));
}

/* y[i] = f(x[i]) from dtype TI to TO. dst may be src: for a bool result (isnan, ...) byte i
 * is written after every byte of element i was read. */
#define UNARY_CASE(ID, NAME, TI, TO, S)                                              \
    case OP_##ID: {                                                                  \
        const TI *x = src;                                                           \
        TO *y = dst;                                                                 \
        for (int64_t i = 0; i < n; i++) y[i] = ew_##NAME##_##S(x[i]);                \
        return 0;                                                                    \
    }

/* Runs a unary op on contiguous data of dtype dt (float kernels may run in place). The
 * bool-result ops (isnan, isinf, isfinite, logical_not) read dt and write bool bytes. With
 * AVX-512F, chain512.c's vector code runs the float ops it has (cpu.h), as fused groups do. */
int cpu_unary(OpCode op, DType dt, const void *src, void *dst, int64_t n) {
    if ((dt == DT_F32 || dt == DT_F64) && cpu_has_avx512() && cpu_unary_avx512(op, dt, src, dst, n)) return 0;
    if (dt == DT_F32 && vm_math[op].f32) { vm_math[op].f32(src, dst, n); return 0; }
    if (dt == DT_F32 && split_math[op].f32) { split_math[op].f32(src, dst, n); return 0; }
    if (dt == DT_F64 && split_math[op].f64) { split_math[op].f64(src, dst, n); return 0; }
    if (dt == DT_F64 && vm_math[op].f64) { vm_math[op].f64(src, dst, n); return 0; }
    switch (dt) {
    case DT_F32: switch (op) { EW_UNARY_F32(UNARY_CASE) default: break; } break;
    case DT_F64: switch (op) { EW_UNARY_F64(UNARY_CASE) default: break; } break;
    case DT_I64: switch (op) { EW_UNARY_I64(UNARY_CASE) default: break; } break;
    case DT_BOOL: switch (op) { EW_UNARY_B8(UNARY_CASE) default: break; } break;
    }
    return unsupported(op, dt);
}
#undef UNARY_CASE

double cpu_power_of_ten(uint64_t n) {
    static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8 };
    if (n < 9) return p10[n];
    double r = 1e9;
    for (uint64_t k = 9; k < n && !isinf(r); k++) r *= 10.0;
    return r;
}

/* x rounded to a multiple of 10^k, ties to the even multiple, exactly (NumPy goes through
 * f64 and loses integers past 2^53); a result past i64's range wraps, as i64 overflow does. */
static int64_t round_i64(int64_t x, uint64_t k) {
    if (k >= 20) return 0;   /* 10^20 > 2 * 2^63: every x is nearer 0 */
    uint64_t q = 1;
    for (uint64_t i = 0; i < k; i++) q *= 10;
    uint64_t m = x < 0 ? 0 - (uint64_t)x : (uint64_t)x, quo = m / q, rem = m % q;
    if (rem > q - rem || (rem == q - rem && (quo & 1))) quo++;
    uint64_t r = quo * q;
    return x < 0 ? (int64_t)(0 - r) : (int64_t)r;
}

/* NumPy's around: decimals >= 0: rint(x * 10^d) / 10^d, else rint(x / 10^-d) * 10^-d, in
 * the float dtype itself (f32 multiplies by 10^d rounded to f32, inf past 1e38, as NumPy
 * does); i64 rounds to a multiple of 10^-d; bool is unchanged (all false for d < 0: 0 and
 * 1 both round to 0). */
int cpu_round_decimals(DType dt, const void *src, void *dst, int64_t n, int64_t decimals) {
    uint64_t k = decimals < 0 ? 0 - (uint64_t)decimals : (uint64_t)decimals;
    bool up = decimals >= 0;
    if (dt == DT_F32) {
        const float *x = src;
        float *y = dst, p = (float)cpu_power_of_ten(k);
        if (up) for (int64_t i = 0; i < n; i++) y[i] = rintf(x[i] * p) / p;
        else for (int64_t i = 0; i < n; i++) y[i] = rintf(x[i] / p) * p;
    } else if (dt == DT_F64) {
        const double *x = src;
        double *y = dst, p = cpu_power_of_ten(k);
        if (up) for (int64_t i = 0; i < n; i++) y[i] = rint(x[i] * p) / p;
        else for (int64_t i = 0; i < n; i++) y[i] = rint(x[i] / p) * p;
    } else if (up) {
        if (dst != src) memmove(dst, src, (size_t)n * dtype_size(dt));
    } else if (dt == DT_I64) {
        const int64_t *x = src;
        int64_t *y = dst;
        for (int64_t i = 0; i < n; i++) y[i] = round_i64(x[i], k);
    } else {
        memset(dst, 0, (size_t)n);
    }
    return 0;
}

/* ---------- binary ---------- */

/* Bitwise ops on numbers: both must be integers in i64's range (the op layer checks);
 * NaN otherwise, never undefined behaviour. */
static double bitwise_number(OpCode op, double x, double y) {
    int64_t a, b;
    if (!num_to_i64(x, &a) || !num_to_i64(y, &b)) return NAN;
    return (double)(op == OP_BITWISE_AND ? a & b : op == OP_BITWISE_OR ? a | b : a ^ b);
}

/* The same ops as cpu_binary on two numbers, with NumPy's float64 semantics (and the same
 * element functions, so a folded constant matches the tensor kernel's bits); bool results
 * are 0/1. */
double op_binary_number(OpCode op, double x, double y) {
    switch (op) {
#define NUMBER2(ID, NAME) case OP_##ID: return ew_##NAME##_n(x, y);
    EW_NUMBER2(NUMBER2)
#undef NUMBER2
    case OP_BITWISE_AND: case OP_BITWISE_OR: case OP_BITWISE_XOR: return bitwise_number(op, x, y);
    default: return NAN;
    }
}

/* Three loop shapes (both contiguous, left scalar, right scalar) so each vectorises. */
#define BINARY_CASE(ID, NAME, TI, TO, S)                                                  \
    case OP_##ID: {                                                                      \
        const TI *restrict pa = a, *restrict pb = b;                                     \
        TO *restrict o = out;                                                            \
        if (sa && sb) for (int64_t i = 0; i < n; i++) o[i] = ew_##NAME##_##S(pa[i], pb[i]); \
        else if (sa) { TI y = pb[0]; for (int64_t i = 0; i < n; i++) o[i] = ew_##NAME##_##S(pa[i], y); } \
        else if (sb) { TI x = pa[0]; for (int64_t i = 0; i < n; i++) o[i] = ew_##NAME##_##S(x, pb[i]); } \
        else { TI x = pa[0], y = pb[0]; for (int64_t i = 0; i < n; i++) o[i] = ew_##NAME##_##S(x, y); } \
        return 0;                                                                        \
    }

static int check_i64_operands(OpCode op, const int64_t *b, int64_t sb, int64_t n) {
    for (int64_t i = 0; i < (sb ? n : 1); i++) {
        if (op == OP_MOD && b[i] == 0) { op_fail("integer modulo by zero"); return -1; }
        if (op == OP_FLOOR_DIVIDE && b[i] == 0) { op_fail("integer division by zero"); return -1; }
        if (op == OP_POW && b[i] < 0) { op_fail("integers to negative integer powers are not allowed"); return -1; }
    }
    return 0;
}

/* Kernel over one run: a and b in compute dtype ct, strides sa/sb in {0, 1}. Comparisons
 * and the logical ops (ct bool) write bool bytes. With AVX-512F, chain512.c's vector code
 * runs the float ops it has (cpu.h), as fused groups do; atan2 is math.c's SLEEF vectors. */
int cpu_binary(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out, int64_t n) {
    if ((ct == DT_F32 || ct == DT_F64) && cpu_has_avx512() && cpu_binary_avx512(op, ct, a, sa, b, sb, out, n)) return 0;
    switch (ct) {
    case DT_F32:
        if (op == OP_ATAN2) { vm_atan2_f32(a, sa, b, sb, out, n); return 0; }
        switch (op) { EW_BINARY_F32(BINARY_CASE) default: break; }
        break;
    case DT_F64:
        if (op == OP_ATAN2) { vm_atan2_f64(a, sa, b, sb, out, n); return 0; }
        switch (op) { EW_BINARY_F64(BINARY_CASE) default: break; }
        break;
    case DT_I64:
        if (check_i64_operands(op, b, sb, n)) return -1;
        switch (op) { EW_BINARY_I64(BINARY_CASE) default: break; }
        break;
    case DT_BOOL:
        switch (op) { EW_BINARY_B8(BINARY_CASE) default: break; }
        break;
    }
    op_failk(ERRK_TYPE, "'%s' is not supported for %s tensors", op_symbol(op), dtype_name(ct));
    return -1;
}
#undef BINARY_CASE

static OpCode swap_compare(OpCode op) {
    switch (op) {
    case OP_LT: return OP_GT;
    case OP_LE: return OP_GE;
    case OP_GT: return OP_LT;
    case OP_GE: return OP_LE;
    default: return op;
    }
}

CmpPlan cpu_compare_plan(OpCode *op, double x, bool num_left, int64_t *k) {
    if (num_left) *op = swap_compare(*op);   /* x < a[i] is a[i] > x */
    OpCode o = *op;
    bool eq_ne = o == OP_EQ || o == OP_NE, less = o == OP_LT || o == OP_LE;
    if (isnan(x)) return o == OP_NE ? CMP_TRUE : CMP_FALSE;
    if (x >= 9223372036854775808.0 || x < -9223372036854775808.0) {   /* past every a[i] */
        if (eq_ne) return o == OP_NE ? CMP_TRUE : CMP_FALSE;
        return less == (x > 0) ? CMP_TRUE : CMP_FALSE;
    }
    double f = floor(x);
    *k = (int64_t)f;
    if (f == x) return CMP_EXACT;
    /* k < x < k + 1: a < x and a <= x mean a <= k; a > x and a >= x mean a > k */
    return eq_ne ? (o == OP_NE ? CMP_TRUE : CMP_FALSE) : less ? CMP_LE_K : CMP_GT_K;
}

int cpu_compare_i64_number(OpCode op, const int64_t *a, double x, bool num_left, uint8_t *out, int64_t n) {
    if (op_info[op].kind != K_COMPARE) {
        op_fail("%s is not a comparison", op_info[op].name);
        return -1;
    }
    int64_t k = 0;
    switch (cpu_compare_plan(&op, x, num_left, &k)) {
    case CMP_FALSE: memset(out, 0, (size_t)n); return 0;
    case CMP_TRUE: memset(out, 1, (size_t)n); return 0;
    case CMP_LE_K: for (int64_t i = 0; i < n; i++) out[i] = a[i] <= k; return 0;
    case CMP_GT_K: for (int64_t i = 0; i < n; i++) out[i] = a[i] > k; return 0;
    case CMP_EXACT: return cpu_binary(op, DT_I64, a, 1, &k, 0, out, n);
    }
    return 0;
}

bool cpu_same_bits(const Tensor *a, const Tensor *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    if (memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim)) return false;
    return !memcmp(a->data, b->data, (size_t)a->size * dtype_size(a->dtype));
}

int op_allclose(const Tensor *a, const Tensor *b, double rtol, double atol) {
    Shape sa, sb, so;
    shape_of(a, &sa);
    shape_of(b, &sb);
    if (shape_broadcast(&sa, &sb, &so, "allclose")) return -1;
    Tensor *x = op_broadcast_to(a, &so), *y = x ? op_broadcast_to(b, &so) : NULL;
    if (!y) { tensor_release(x); return -1; }
    int ok = 1;
    for (int64_t i = 0; i < x->size && ok; i++) {
        double u = tensor_get(x, i), v = tensor_get(y, i);
        if (u == v) continue;   /* equal infinities */
        ok = fabs(u - v) <= atol + rtol * fabs(v);
    }
    tensor_release(x);
    tensor_release(y);
    return ok;
}
