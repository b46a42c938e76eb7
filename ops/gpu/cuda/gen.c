/* gen.c - the CUDA source generator: the prelude (the helper library ops/gpu/cuda/tsl_ew.cuh
 * and the element function of each elementwise op, both generated into build/ew_cuda.h from
 * ops/ew.def, the very text the CPU's scalar functions come from), the kernels built around
 * an op's element function (eager launches and fused chains) and the hand-written families. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "gen.h"
#include "gen_args.h"
#include "ew_cuda.h"

#define STR_(...) #__VA_ARGS__
#define STR(...) STR_(__VA_ARGS__)

/* The element function of every elementwise op (ops/ew.def, through ops/gen/ewgen.c's
 * build/ew_cuda.h): a CUDA expression over x (and y) in the compute dtype, calling the
 * generated tsl_<op> overloads, and the compute dtypes the op is defined for. i64 floor
 * division, modulo and power report an operand the CPU raises an error for through a.bad
 * (the plugin reads it back and raises the CPU's message). */
static const struct {
    const char *expr;
    bool to_bool;   /* a truth-valued result (bool whatever the compute dtype) */
    unsigned dtypes;
} ew_rows[OP__COUNT] = { EW_CUDA_ROWS };

/* The hand-written helpers (ops/gpu/cuda/tsl_ew.cuh), the launch-argument structs, then the
 * generated element functions. */
static const char prelude[] =
    EW_CUDA_LIBRARY
    "struct TslEwArgs { " STR(GEN_EW_ARGS_FIELDS) " };\n"
    "struct TslFusedArgs { " STR(GEN_FUSED_ARGS_FIELDS) " };\n"
    "struct TslReduceArgs { " STR(GEN_REDUCE_ARGS_FIELDS) " };\n"
    "struct TslGatherArgs { " STR(GEN_GATHER_ARGS_FIELDS) " };\n"
    "struct TslWhereArgs { " STR(GEN_WHERE_ARGS_FIELDS) " };\n"
    "struct TslLineArgs { " STR(GEN_LINE_ARGS_FIELDS) " };\n"
    "struct TslRemapArgs { " STR(GEN_REMAP_ARGS_FIELDS) " };\n"
    EW_CUDA_DEVICE;

const char *gen_prelude(void) { return prelude; }

const char *gen_ew_expr(OpCode op) { return op >= 0 && op < OP__COUNT ? ew_rows[op].expr : NULL; }

bool gen_ew_has(OpCode op, DType ct) { return gen_ew_expr(op) && (ew_rows[op].dtypes >> ct & 1u); }

DType gen_ew_result(OpCode op, DType ct) { return gen_ew_expr(op) && ew_rows[op].to_bool ? DT_BOOL : ct; }

const char *gen_dtype_suffix(DType dt) {
    static const char *const s[] = { "b8", "i64", "f32", "f64" };
    return s[dt];
}

const char *gen_dtype_ctype(DType dt) {
    static const char *const s[] = { "tsl_b8", "tsl_i64", "float", "double" };
    return s[dt];
}

/* The kind column of ops.def (the plugin has no op_info: it does not link the op core). */
static int op_kind(OpCode op) {
    static const int kinds[] = {
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) kind,
#include "ops.def"
#undef OP
    };
    return kinds[op];
}

static const char *op_name(OpCode op) {
    static const char *const names[] = {
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) #id,
#include "ops.def"
#undef OP
    };
    return names[op];
}

/* Appends to a bounded buffer; the total is checked once at the end. */
typedef struct {
    char *p;
    size_t n, len;
} Out;

__attribute__((format(printf, 2, 3))) static void put(Out *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(o->p + (o->len < o->n ? o->len : o->n), o->len < o->n ? o->n - o->len : 0, fmt, ap);
    va_end(ap);
    if (k > 0) o->len += (size_t)k;
}

static int done(const Out *o) { return o->len < o->n ? 0 : -1; }

int gen_ew_kernel(OpCode op, DType ct, char form, char *name, size_t nn, char *src, size_t ns) {
    if (!gen_ew_has(op, ct) || (form != 'c' && form != 's')) return -1;
    bool binary = op_kind(op) != K_UNARY;
    const char *t = gen_dtype_ctype(ct), *rt = gen_dtype_ctype(gen_ew_result(op, ct));
    int k = snprintf(name, nn, "tsl_ew_%s_%s_%c", op_name(op), gen_dtype_suffix(ct), form);
    if (k < 0 || (size_t)k >= nn) return -1;
    Out o = { src, ns, 0 };
    put(&o, "extern \"C\" __global__ void %s(TslEwArgs a) {\n", name);
    put(&o, "  const %s *in0 = (const %s *)a.in0, *in1 = (const %s *)a.in1;\n", t, t, t);
    put(&o, "  %s *out = (%s *)a.out;\n", rt, rt);
    put(&o, "  for (long long i = tsl_tid(); i < a.n; i += tsl_nthreads()) {\n");
    if (form == 'c') {
        put(&o, "    long long i0 = i * a.inner0, i1 = i * a.inner1;\n");
    } else {   /* the output index taken apart axis by axis, innermost first */
        put(&o, "    long long i0 = 0, i1 = 0, r = i;\n");
        put(&o, "    for (int d = a.ndim - 1; d >= 0; d--) {\n");
        put(&o, "      long long j = r %% a.shape[d]; r /= a.shape[d];\n");
        put(&o, "      i0 += j * a.st0[d]; i1 += j * a.st1[d];\n    }\n");
    }
    put(&o, "    %s x = in0 ? in0[i0] : tsl_num<%s>(a.num0);\n", t, t);
    if (binary) put(&o, "    %s y = in1 ? in1[i1] : tsl_num<%s>(a.num1);\n", t, t);
    else put(&o, "    (void)i1; (void)in1;\n");
    put(&o, "    out[i] = (%s)(%s);\n  }\n}\n", rt, ew_rows[op].expr);
    return done(&o);
}

/* A chain operand's C expression: a temporary or an input. */
static void operand(Out *o, int v) {
    if (v >= 0) put(o, "t%d", v);
    else put(o, "x%d", -v - 1);
}

/* Substitutes the operands into a row's expression (x and y are whole identifiers there). */
static void expr_with(Out *o, const char *e, int a, int b) {
    for (const char *p = e; *p; p++) {
        bool ident_before = p > e && (p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= '0' && p[-1] <= '9'));
        bool ident_after = p[1] == '_' || (p[1] >= 'a' && p[1] <= 'z') || (p[1] >= '0' && p[1] <= '9');
        if ((*p == 'x' || *p == 'y') && !ident_before && !ident_after) operand(o, *p == 'x' ? a : b);
        else put(o, "%c", *p);
    }
}

int gen_fused_kernel(const GenStep *steps, int nsteps, int ninputs, DType ct, char *name, size_t nn, char *src,
                     size_t ns) {
    if (nsteps < 1 || ninputs < 1 || ninputs > 8) return -1;
    for (int s = 0; s < nsteps; s++)
        if (!gen_ew_has(steps[s].op, ct) || steps[s].op == OP_ROUND) return -1;
    /* the name is the chain itself, so two groups with the same chain share a kernel */
    Out nm = { name, nn, 0 };
    put(&nm, "tsl_fused_%s_%d", gen_dtype_suffix(ct), ninputs);
    for (int s = 0; s < nsteps; s++)
        put(&nm, "_%s_%d_%d_%d", op_name(steps[s].op), steps[s].dst, steps[s].a + 100, steps[s].b == GEN_NONE ? 0 : steps[s].b + 100);
    if (done(&nm)) return -1;
    const char *t = gen_dtype_ctype(ct);
    DType last = gen_ew_result(steps[nsteps - 1].op, ct);
    Out o = { src, ns, 0 };
    put(&o, "extern \"C\" __global__ void %s(TslFusedArgs a) {\n", name);
    put(&o, "  for (long long i = tsl_tid(); i < a.n; i += tsl_nthreads()) {\n");
    for (int k = 0; k < ninputs; k++)
        put(&o, "    %s x%d = a.in[%d] ? ((const %s *)a.in[%d])[i * a.inner[%d]] : tsl_num<%s>(a.num[%d]);\n", t, k, k, t, k,
            k, t, k);
    for (int s = 0; s < nsteps; s++) {
        /* every temporary is kept in ct: a comparison's truth value becomes 0 or 1 */
        put(&o, "    %s t%d = (%s)(", t, steps[s].dst, t);
        expr_with(&o, ew_rows[steps[s].op].expr, steps[s].a, steps[s].b);
        put(&o, ");\n");
    }
    put(&o, "    ((%s *)a.out)[i] = (%s)t%d;\n  }\n}\n", gen_dtype_ctype(last), gen_dtype_ctype(last), steps[nsteps - 1].dst);
    return done(&o);
}

void gen_family_name(char *buf, size_t n, const char *family, const char *a, const char *b) {
    snprintf(buf, n, "tsl_%s_%s%s%s", family, a, b ? "_" : "", b ? b : "");
}

/* The hand-written kernels, as C++ templates with extern "C" instances. Reductions use a
 * fixed tree (each thread folds a fixed stride of the axis in order, then a shared-memory
 * tree of fixed shape): no atomics, so the same input gives the same bits every run. */
static const char families[] =
    "#define TSL_BLOCK 256\n"
    /* each op: init (the empty reduction), start (a thread's first element), fold, merge */
    "template <typename T> struct SumOp { typedef T A; static __device__ A init() { return 0; }\n"
    "  static __device__ A start(T x, long long) { return (A)x; }\n"
    "  static __device__ A fold(A a, T x, long long) { return tsl_add(a, (A)x); } static __device__ A merge(A a, A b) { return tsl_add(a, b); } };\n"
    "template <typename T> struct ProdOp { typedef T A; static __device__ A init() { return 1; }\n"
    "  static __device__ A start(T x, long long) { return (A)x; }\n"
    "  static __device__ A fold(A a, T x, long long) { return tsl_mul(a, (A)x); } static __device__ A merge(A a, A b) { return tsl_mul(a, b); } };\n"
    "template <typename T> struct MaxOp { typedef T A; static __device__ A init() { return 0; }\n"
    "  static __device__ A start(T x, long long) { return x; }\n"
    "  static __device__ A fold(A a, T x, long long) { return tsl_maximum(a, x); } static __device__ A merge(A a, A b) { return tsl_maximum(a, b); } };\n"
    "template <typename T> struct MinOp { typedef T A; static __device__ A init() { return 0; }\n"
    "  static __device__ A start(T x, long long) { return x; }\n"
    "  static __device__ A fold(A a, T x, long long) { return tsl_minimum(a, x); } static __device__ A merge(A a, A b) { return tsl_minimum(a, b); } };\n"
    /* argmax/argmin: (value, index); the larger (smaller) value wins, the first NaN wins,
     * ties go to the lower index */
    "template <typename T> struct Arg { T v; long long i; };\n"
    "template <typename T, bool MAX> __device__ Arg<T> arg_pick(Arg<T> a, Arg<T> b) {\n"
    "  bool an = a.v != a.v, bn = b.v != b.v;\n"
    "  if (an || bn) return an && (!bn || a.i < b.i) ? a : b;\n"
    "  if (a.v == b.v) return a.i < b.i ? a : b;\n"
    "  return (MAX ? a.v > b.v : a.v < b.v) ? a : b; }\n"
    "template <typename T, bool MAX> struct ArgOp { typedef Arg<T> A; static __device__ A init() { A a; a.v = 0; a.i = 0; return a; }\n"
    "  static __device__ A start(T x, long long j) { A a; a.v = x; a.i = j; return a; }\n"
    "  static __device__ A fold(A a, T x, long long j) { return arg_pick<T, MAX>(a, start(x, j)); }\n"
    "  static __device__ A merge(A a, A b) { return arg_pick<T, MAX>(a, b); } };\n"
    "template <typename T, bool ALL> struct LogicOp { typedef tsl_b8 A; static __device__ A init() { return ALL ? 1 : 0; }\n"
    "  static __device__ A start(T x, long long) { return x != 0; }\n"
    "  static __device__ A fold(A a, T x, long long) { return ALL ? (a & (x != 0)) : (a | (x != 0)); }\n"
    "  static __device__ A merge(A a, A b) { return ALL ? (a & b) : (a | b); } };\n"
    /* one block per output element: thread t folds elements t, t + 256, ... in order, then
     * a tree of fixed shape merges the threads' results */
    "template <typename T, typename OP> __device__ typename OP::A reduce_block(const T *x, long long len, long long inner) {\n"
    "  __shared__ typename OP::A sh[TSL_BLOCK]; __shared__ bool has[TSL_BLOCK];\n"
    "  typename OP::A acc = OP::init(); bool got = false;\n"
    "  for (long long j = threadIdx.x; j < len; j += TSL_BLOCK) {\n"
    "    acc = got ? OP::fold(acc, x[j * inner], j) : OP::start(x[j * inner], j); got = true; }\n"
    "  sh[threadIdx.x] = acc; has[threadIdx.x] = got; __syncthreads();\n"
    "  for (int s = TSL_BLOCK / 2; s > 0; s >>= 1) {\n"
    "    if (threadIdx.x < s && has[threadIdx.x + s]) {\n"
    "      sh[threadIdx.x] = has[threadIdx.x] ? OP::merge(sh[threadIdx.x], sh[threadIdx.x + s]) : sh[threadIdx.x + s];\n"
    "      has[threadIdx.x] = true; }\n"
    "    __syncthreads(); }\n"
    "  typename OP::A r = has[0] ? sh[0] : OP::init(); __syncthreads(); return r; }\n"
    "template <typename T, typename R, typename OP, int MEAN> __device__ void reduce_kernel(TslReduceArgs a) {\n"
    "  const T *in = (const T *)a.in; R *out = (R *)a.out;\n"
    "  for (long long o = blockIdx.x; o < a.outer * a.inner; o += gridDim.x) {\n"
    "    long long u = o / a.inner, v = o % a.inner;\n"
    "    typename OP::A r = reduce_block<T, OP>(in + u * a.len * a.inner + v, a.len, a.inner);\n"
    "    if (threadIdx.x == 0) out[o] = MEAN ? (R)((R)r / (R)a.len) : (R)r; } }\n"
    "template <typename T, bool MAX> __device__ void arg_kernel(TslReduceArgs a) {\n"
    "  const T *in = (const T *)a.in; tsl_i64 *out = (tsl_i64 *)a.out;\n"
    "  for (long long o = blockIdx.x; o < a.outer * a.inner; o += gridDim.x) {\n"
    "    long long u = o / a.inner, v = o % a.inner;\n"
    "    Arg<T> r = reduce_block<T, ArgOp<T, MAX> >(in + u * a.len * a.inner + v, a.len, a.inner);\n"
    "    if (threadIdx.x == 0) out[o] = r.i; } }\n"
    /* max/min/arg/all/any in every type's own; float sums and products in their type (with
     * mean), i64 and bool ones in i64 (wrapping) */
    "#define TSL_REDUCE_ORDER(T, S) \\\n"
    "  extern \"C\" __global__ void tsl_reduce_max_##S(TslReduceArgs a) { reduce_kernel<T, T, MaxOp<T>, 0>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_min_##S(TslReduceArgs a) { reduce_kernel<T, T, MinOp<T>, 0>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_argmax_##S(TslReduceArgs a) { arg_kernel<T, true>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_argmin_##S(TslReduceArgs a) { arg_kernel<T, false>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_all_##S(TslReduceArgs a) { reduce_kernel<T, tsl_b8, LogicOp<T, true>, 0>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_any_##S(TslReduceArgs a) { reduce_kernel<T, tsl_b8, LogicOp<T, false>, 0>(a); }\n"
    "#define TSL_REDUCE_FLOAT(T, S) TSL_REDUCE_ORDER(T, S) \\\n"
    "  extern \"C\" __global__ void tsl_reduce_sum_##S(TslReduceArgs a) { reduce_kernel<T, T, SumOp<T>, 0>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_mean_##S(TslReduceArgs a) { reduce_kernel<T, T, SumOp<T>, 1>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_prod_##S(TslReduceArgs a) { reduce_kernel<T, T, ProdOp<T>, 0>(a); }\n"
    "TSL_REDUCE_FLOAT(float, f32) TSL_REDUCE_FLOAT(double, f64)\n"
    "#define TSL_REDUCE_INT(T, S) TSL_REDUCE_ORDER(T, S) \\\n"
    "  extern \"C\" __global__ void tsl_reduce_sum_##S(TslReduceArgs a) { reduce_kernel<T, tsl_i64, SumOp<tsl_i64>, 0>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_reduce_prod_##S(TslReduceArgs a) { reduce_kernel<T, tsl_i64, ProdOp<tsl_i64>, 0>(a); }\n"
    "TSL_REDUCE_INT(tsl_i64, i64) TSL_REDUCE_INT(tsl_b8, b8)\n"
    /* softmax and log_softmax of each row: max, then the sum of exp(x - max), both by the
     * fixed tree; one block per row */
    "template <typename T, bool LOG> __device__ void softmax_kernel(TslReduceArgs a) {\n"
    "  const T *in = (const T *)a.in; T *out = (T *)a.out;\n"
    "  for (long long row = blockIdx.x; row < a.outer; row += gridDim.x) {\n"
    "    const T *x = in + row * a.len; T *y = out + row * a.len;\n"
    "    T m = reduce_block<T, MaxOp<T> >(x, a.len, 1);\n"
    "    __shared__ T sh[TSL_BLOCK]; T s = 0;\n"
    "    for (long long j = threadIdx.x; j < a.len; j += TSL_BLOCK) s += tsl_exp(x[j] - m);\n"
    "    sh[threadIdx.x] = s; __syncthreads();\n"
    "    for (int k = TSL_BLOCK / 2; k > 0; k >>= 1) { if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k]; __syncthreads(); }\n"
    "    T sum = sh[0]; __syncthreads();\n"
    "    for (long long j = threadIdx.x; j < a.len; j += TSL_BLOCK)\n"
    "      y[j] = LOG ? (x[j] - m) - tsl_log(sum) : tsl_exp(x[j] - m) / sum; } }\n"
    "extern \"C\" __global__ void tsl_softmax_f32(TslReduceArgs a) { softmax_kernel<float, false>(a); }\n"
    "extern \"C\" __global__ void tsl_softmax_f64(TslReduceArgs a) { softmax_kernel<double, false>(a); }\n"
    "extern \"C\" __global__ void tsl_log_softmax_f32(TslReduceArgs a) { softmax_kernel<float, true>(a); }\n"
    "extern \"C\" __global__ void tsl_log_softmax_f64(TslReduceArgs a) { softmax_kernel<double, true>(a); }\n"
    /* astype, as ops/cpu/ew.c's op_astype_into: truth values are non-zero (NaN included);
     * a float to i64 that does not fit sets *bad to 1 (NaN), 2 (inf), 3 (out of range) */
    "template <typename F, typename T> __device__ __forceinline__ T tsl_cvt(F x, int *bad) { return (T)x; }\n"
    "template <> __device__ __forceinline__ tsl_b8 tsl_cvt<float, tsl_b8>(float x, int *bad) { return x != 0; }\n"
    "template <> __device__ __forceinline__ tsl_b8 tsl_cvt<double, tsl_b8>(double x, int *bad) { return x != 0; }\n"
    "template <> __device__ __forceinline__ tsl_b8 tsl_cvt<tsl_i64, tsl_b8>(tsl_i64 x, int *bad) { return x != 0; }\n"
    "template <typename F> __device__ __forceinline__ tsl_i64 tsl_to_i64(F x, int *bad) {\n"
    "  double d = (double)x; if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) return (tsl_i64)d;\n"
    "  *bad = d != d ? 1 : isinf(d) ? 2 : 3; return 0; }\n"
    "template <> __device__ __forceinline__ tsl_i64 tsl_cvt<float, tsl_i64>(float x, int *bad) { return tsl_to_i64(x, bad); }\n"
    "template <> __device__ __forceinline__ tsl_i64 tsl_cvt<double, tsl_i64>(double x, int *bad) { return tsl_to_i64(x, bad); }\n"
    "template <typename F, typename T> __device__ void astype_kernel(const F *in, T *out, long long n, int *bad) {\n"
    "  for (long long i = tsl_tid(); i < n; i += tsl_nthreads()) out[i] = tsl_cvt<F, T>(in[i], bad); }\n"
    "#define TSL_ASTYPE(F, FS, T, TS) extern \"C\" __global__ void tsl_astype_##FS##_##TS(const F *in, T *out, long long n, int *bad) \\\n"
    "  { astype_kernel<F, T>(in, out, n, bad); }\n"
    "#define TSL_ASTYPE_FROM(F, FS) TSL_ASTYPE(F, FS, tsl_b8, b8) TSL_ASTYPE(F, FS, tsl_i64, i64) TSL_ASTYPE(F, FS, float, f32) TSL_ASTYPE(F, FS, double, f64)\n"
    "TSL_ASTYPE_FROM(tsl_b8, b8) TSL_ASTYPE_FROM(tsl_i64, i64) TSL_ASTYPE_FROM(float, f32) TSL_ASTYPE_FROM(double, f64)\n"
    /* transpose and broadcast_to: each output element fetched through strides */
    "template <typename E> __device__ void gather_kernel(TslGatherArgs a) {\n"
    "  const E *in = (const E *)a.in; E *out = (E *)a.out;\n"
    "  for (long long i = tsl_tid(); i < a.n; i += tsl_nthreads()) {\n"
    "    long long off = 0, r = i;\n"
    "    for (int d = a.ndim - 1; d >= 0; d--) { long long j = r % a.shape[d]; r /= a.shape[d]; off += j * a.stride[d]; }\n"
    "    out[i] = in[off]; } }\n"
    "extern \"C\" __global__ void tsl_gather_1(TslGatherArgs a) { gather_kernel<unsigned char>(a); }\n"
    "extern \"C\" __global__ void tsl_gather_4(TslGatherArgs a) { gather_kernel<unsigned int>(a); }\n"
    "extern \"C\" __global__ void tsl_gather_8(TslGatherArgs a) { gather_kernel<unsigned long long>(a); }\n"
    /* where: each input broadcast through its own strides; any non-zero condition byte is true */
    "template <typename E> __device__ void where_kernel(TslWhereArgs a) {\n"
    "  const tsl_b8 *cond = (const tsl_b8 *)a.cond; const E *x = (const E *)a.a, *y = (const E *)a.b; E *out = (E *)a.out;\n"
    "  for (long long i = tsl_tid(); i < a.n; i += tsl_nthreads()) {\n"
    "    long long o0 = 0, o1 = 0, o2 = 0, r = i;\n"
    "    for (int d = a.ndim - 1; d >= 0; d--) {\n"
    "      long long j = r % a.shape[d]; r /= a.shape[d]; o0 += j * a.st0[d]; o1 += j * a.st1[d]; o2 += j * a.st2[d]; }\n"
    "    out[i] = cond[o0] ? x[o1] : y[o2]; } }\n"
    "extern \"C\" __global__ void tsl_where_1(TslWhereArgs a) { where_kernel<unsigned char>(a); }\n"
    "extern \"C\" __global__ void tsl_where_4(TslWhereArgs a) { where_kernel<unsigned int>(a); }\n"
    "extern \"C\" __global__ void tsl_where_8(TslWhereArgs a) { where_kernel<unsigned long long>(a); }\n"
    /* cumsum, cumprod and trace walk each line in order, one thread per line, as the CPU's
     * sequential loops do (so the bits are the CPU's); integers accumulate in unsigned
     * 64 bits, wrapping as i64 arithmetic does */
    "template <typename TI, typename TA, typename TO, bool PROD> __device__ void cum_kernel(TslLineArgs a) {\n"
    "  const TI *x = (const TI *)a.in; TO *y = (TO *)a.out;\n"
    "  for (long long line = tsl_tid(); line < a.outer * a.inner; line += tsl_nthreads()) {\n"
    "    long long base = (line / a.inner) * a.len * a.inner + line % a.inner;\n"
    "    TA acc = 0;\n"
    "    for (long long j = 0; j < a.len; j++) {\n"
    "      TA v = (TA)x[base + j * a.inner]; acc = j == 0 ? v : PROD ? acc * v : acc + v; y[base + j * a.inner] = (TO)acc; } } }\n"
    "template <typename TI, typename TA, typename TO> __device__ void trace_kernel(TslLineArgs a) {\n"
    "  const TI *x = (const TI *)a.in; TO *y = (TO *)a.out;\n"
    "  for (long long r = tsl_tid(); r < a.inner; r += tsl_nthreads()) {\n"
    "    TA acc = 0; for (long long k = 0; k < a.len; k++) acc += (TA)x[k * a.step + r]; y[r] = (TO)acc; } }\n"
    "#define TSL_LINES(TI, S, TA, TO) \\\n"
    "  extern \"C\" __global__ void tsl_cumsum_##S(TslLineArgs a) { cum_kernel<TI, TA, TO, false>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_cumprod_##S(TslLineArgs a) { cum_kernel<TI, TA, TO, true>(a); } \\\n"
    "  extern \"C\" __global__ void tsl_trace_##S(TslLineArgs a) { trace_kernel<TI, TA, TO>(a); }\n"
    "TSL_LINES(tsl_b8, b8, tsl_u64, tsl_i64) TSL_LINES(tsl_i64, i64, tsl_u64, tsl_i64)\n"
    "TSL_LINES(float, f32, float, float) TSL_LINES(double, f64, double, double)\n"
    /* tile and repeat: each output element fetched from (index / div) % mod along each axis */
    "template <typename E> __device__ void remap_kernel(TslRemapArgs a) {\n"
    "  const E *in = (const E *)a.in; E *out = (E *)a.out;\n"
    "  for (long long i = tsl_tid(); i < a.n; i += tsl_nthreads()) {\n"
    "    long long off = 0, r = i;\n"
    "    for (int d = a.ndim - 1; d >= 0; d--) { long long j = r % a.shape[d]; r /= a.shape[d]; off += ((j / a.div[d]) % a.mod[d]) * a.stride[d]; }\n"
    "    out[i] = in[off]; } }\n"
    "extern \"C\" __global__ void tsl_remap_1(TslRemapArgs a) { remap_kernel<unsigned char>(a); }\n"
    "extern \"C\" __global__ void tsl_remap_4(TslRemapArgs a) { remap_kernel<unsigned int>(a); }\n"
    "extern \"C\" __global__ void tsl_remap_8(TslRemapArgs a) { remap_kernel<unsigned long long>(a); }\n"
    /* one_hot: each label's row of n f32, a 1 at the label; the first bad label to *badk */
    "extern \"C\" __global__ void tsl_one_hot(const tsl_i64 *lab, long long count, long long n, float *out, tsl_u64 *badk) {\n"
    "  for (long long p = tsl_tid(); p < count; p += tsl_nthreads()) {\n"
    "    tsl_i64 l = lab[p]; if (l < 0 || l >= n) { atomicMin(badk, (tsl_u64)p); continue; }\n"
    "    for (long long k = 0; k < n; k++) out[p * n + k] = k == l ? 1.0f : 0.0f; } }\n"
    /* take: out[i] = t[idx[i]] (negative from the end); the first bad i goes to *badk (the
     * smallest, whatever the order threads run in) */
    "__device__ __forceinline__ long long tsl_position(tsl_i64 p, long long n) { long long q = p < 0 ? p + n : p; return q >= 0 && q < n ? q : -1; }\n"
    "template <typename E> __device__ void take_kernel(const E *t, long long nt, const tsl_i64 *idx, E *out, long long n, tsl_u64 *badk) {\n"
    "  for (long long i = tsl_tid(); i < n; i += tsl_nthreads()) {\n"
    "    long long q = tsl_position(idx[i], nt);\n"
    "    if (q < 0) atomicMin(badk, (tsl_u64)i); else out[i] = t[q]; } }\n"
    "#define TSL_TAKE(E, S) extern \"C\" __global__ void tsl_take_##S(const E *t, long long nt, const tsl_i64 *idx, E *out, long long n, tsl_u64 *badk) \\\n"
    "  { take_kernel<E>(t, nt, idx, out, n, badk); }\n"
    "TSL_TAKE(unsigned char, 1) TSL_TAKE(unsigned int, 4) TSL_TAKE(unsigned long long, 8)\n"
    /* scatter_add: y[idx[k]] += v[k] in order, by one thread, so repeated positions add up in
     * the CPU's order and give its bits; every position is checked first */
    "template <typename T> __device__ void scatter_kernel(T *y, long long ny, const tsl_i64 *idx, const T *v, long long n, int one, tsl_u64 *badk) {\n"
    "  if (tsl_tid() != 0) return;\n"
    "  for (long long k = 0; k < n; k++) if (tsl_position(idx[k], ny) < 0) { *badk = (tsl_u64)k; return; }\n"
    "  for (long long k = 0; k < n; k++) { long long q = tsl_position(idx[k], ny); y[q] = tsl_add(y[q], v[one ? 0 : k]); } }\n"
    "#define TSL_SCATTER(T, S) extern \"C\" __global__ void tsl_scatter_add_##S(T *y, long long ny, const tsl_i64 *idx, const T *v, long long n, int one, tsl_u64 *badk) \\\n"
    "  { scatter_kernel<T>(y, ny, idx, v, n, one, badk); }\n"
    "TSL_SCATTER(tsl_b8, b8) TSL_SCATTER(tsl_i64, i64) TSL_SCATTER(float, f32) TSL_SCATTER(double, f64)\n"
    /* Philox4x32-10, exactly ops/cpu/random.c's: element i uses the block of counter + i */
    "__device__ void tsl_philox(tsl_u64 ctr, tsl_u64 key, unsigned int out[4]) {\n"
    "  unsigned int c0 = (unsigned int)ctr, c1 = (unsigned int)(ctr >> 32), c2 = 0, c3 = 0;\n"
    "  unsigned int k0 = (unsigned int)key, k1 = (unsigned int)(key >> 32);\n"
    "  for (int r = 0; r < 10; r++) {\n"
    "    tsl_u64 p0 = (tsl_u64)0xD2511F53u * c0, p1 = (tsl_u64)0xCD9E8D57u * c2;\n"
    "    unsigned int n0 = (unsigned int)(p1 >> 32) ^ c1 ^ k0, n2 = (unsigned int)(p0 >> 32) ^ c3 ^ k1;\n"
    "    c1 = (unsigned int)p1; c3 = (unsigned int)p0; c0 = n0; c2 = n2; k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }\n"
    "  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3; }\n"
    "extern \"C\" __global__ void tsl_random_uniform(tsl_u64 key, tsl_u64 ctr, float *out, long long n) {\n"
    "  for (long long i = tsl_tid(); i < n; i += tsl_nthreads()) { unsigned int w[4]; tsl_philox(ctr + (tsl_u64)i, key, w);\n"
    "    out[i] = (float)((double)(w[0] >> 8) * (1.0 / 16777216.0)); } }\n"
    "extern \"C\" __global__ void tsl_random_normal(tsl_u64 key, tsl_u64 ctr, float *out, long long n) {\n"
    "  for (long long i = tsl_tid(); i < n; i += tsl_nthreads()) { unsigned int w[4]; tsl_philox(ctr + (tsl_u64)i, key, w);\n"
    "    double u1 = ((double)(((tsl_u64)w[0] << 21) ^ (w[1] >> 11)) + 1.0) * (1.0 / 9007199254740992.0);\n"
    "    double u2 = (double)(((tsl_u64)w[2] << 21) ^ (w[3] >> 11)) * (1.0 / 9007199254740992.0);\n"
    "    out[i] = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2)); } }\n"
    "extern \"C\" __global__ void tsl_random_int(tsl_u64 key, tsl_u64 ctr, tsl_i64 *out, long long n, tsl_i64 lo, tsl_u64 range) {\n"
    "  for (long long i = tsl_tid(); i < n; i += tsl_nthreads()) { unsigned int w[4]; tsl_philox(ctr + (tsl_u64)i, key, w);\n"
    "    tsl_u64 x = ((tsl_u64)w[0] << 32) | w[1]; out[i] = (tsl_i64)((tsl_u64)lo + x % range); } }\n";

const char *gen_families(void) { return families; }
