/* axis.c - CPU kernels of the ops along an axis (cumsum cumprod sort argsort topk unique
 * one_hot tile repeat pad diff) and of trace.
 *
 * An axis op sees its operand as [outer, n, inner] around the axis: element (o, j, i) sits
 * at (o * n + j) * inner + i. Shapes, dtypes and every data-independent error come from
 * infer_axis.c before these run; here are only the loops and the checks on values.
 *
 * Ordering (sort, argsort, topk, unique) maps each element to an unsigned 64-bit key whose
 * integer order is the element order wanted: NaN above +inf, -0 tied with +0, i64 and bool
 * exact. One stable merge sort on (key, index) pairs then serves every dtype, and
 * descending order is ascending order of the complemented key, which keeps ties stable. */
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"

typedef struct {
    int64_t outer, n, inner;
} Lines;

static int norm_ax(int axis, int ndim) { return axis < 0 ? axis + ndim : axis; }

static Lines lines_of(const Tensor *t, int ax) {
    Lines L = { 1, t->shape[ax], 1 };
    for (int i = 0; i < ax; i++) L.outer *= t->shape[i];
    for (int i = ax + 1; i < t->ndim; i++) L.inner *= t->shape[i];
    return L;
}

static void *try_alloc(size_t bytes) {
    void *p = mem_try_alloc(bytes ? bytes : 1);
    if (!p) op_failk(ERRK_MEMORY, "out of memory");
    return p;
}

/* ---------- cumsum, cumprod ---------- */

/* Sequential running sum/product of each line, accumulated in TA (integers in uint64_t so
 * that overflow wraps, as i64 arithmetic does everywhere in TSL). */
#define CUM_KERNEL(NAME, TI, TA)                                                          \
    static void NAME(const void *xv, void *yv, Lines L, bool prod) {                     \
        const TI *x = xv;                                                                \
        TA *y = yv;                                                                      \
        for (int64_t o = 0; o < L.outer; o++) {                                          \
            const TI *xo = x + o * L.n * L.inner;                                        \
            TA *yo = y + o * L.n * L.inner;                                              \
            for (int64_t i = 0; i < L.inner; i++) yo[i] = (TA)xo[i];                     \
            for (int64_t j = 1; j < L.n; j++)                                            \
                for (int64_t i = 0; i < L.inner; i++) {                                  \
                    TA a = yo[(j - 1) * L.inner + i], b = (TA)xo[j * L.inner + i];       \
                    yo[j * L.inner + i] = prod ? a * b : a + b;                          \
                }                                                                        \
        }                                                                                \
    }
CUM_KERNEL(cum_bool, uint8_t, uint64_t)
CUM_KERNEL(cum_i64, uint64_t, uint64_t)
CUM_KERNEL(cum_f32, float, float)
CUM_KERNEL(cum_f64, double, double)

int cpu_cum(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    Lines L = lines_of(t, norm_ax(c->at->axis, t->ndim));
    if (t->size == 0) return 0;   /* also when outer is huge and inner 0: nothing to walk */
    bool prod = c->op == OP_CUMPROD;
    switch (t->dtype) {
    case DT_BOOL: cum_bool(t->data, out[0]->data, L, prod); break;
    case DT_I64: cum_i64(t->data, out[0]->data, L, prod); break;
    case DT_F32: cum_f32(t->data, out[0]->data, L, prod); break;
    case DT_F64: cum_f64(t->data, out[0]->data, L, prod); break;
    }
    return 0;
}

/* ---------- sort keys and the stable sort ---------- */

typedef struct {
    uint64_t key;
    int64_t idx;
} Pair;

/* IEEE order as unsigned integers: negatives have their bits flipped, positives their sign
 * set. Every NaN maps to the largest key (NumPy sorts all NaNs last), and -0 to +0's key
 * (they compare equal, so a stable sort keeps them in input order). */
static uint64_t key_f64(double x) {
    if (x != x) return UINT64_MAX;
    if (x == 0) x = 0;
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b >> 63 ? ~b : b | (UINT64_C(1) << 63);
}

static uint64_t key_at(const Tensor *t, int64_t i) {
    switch (t->dtype) {
    case DT_BOOL: return ((const uint8_t *)t->data)[i] != 0;
    case DT_I64: return (uint64_t)((const int64_t *)t->data)[i] ^ (UINT64_C(1) << 63);
    case DT_F32: return key_f64(((const float *)t->data)[i]);   /* f32 -> f64 is exact */
    default: return key_f64(((const double *)t->data)[i]);
    }
}

/* Line (o, i) of t as pairs (key, position along the axis); descending complements keys. */
static void line_pairs(const Tensor *t, Lines L, int64_t o, int64_t i, bool desc, Pair *p) {
    int64_t base = o * L.n * L.inner + i;
    uint64_t flip = desc ? UINT64_MAX : 0;
    for (int64_t j = 0; j < L.n; j++) p[j] = (Pair){ key_at(t, base + j * L.inner) ^ flip, j };
}

enum { SORT_RUN = 16 };

/* Stable: an element moves left only past strictly larger keys. */
static void insertion_sort(Pair *p, int64_t n) {
    for (int64_t k = 1; k < n; k++) {
        Pair x = p[k];
        int64_t j = k;
        for (; j > 0 && x.key < p[j - 1].key; j--) p[j] = p[j - 1];
        p[j] = x;
    }
}

/* Stable: on equal keys the left run's element goes first. */
static void merge_runs(const Pair *a, int64_t lo, int64_t mid, int64_t hi, Pair *b) {
    int64_t i = lo, j = mid, k = lo;
    while (i < mid && j < hi) b[k++] = a[j].key < a[i].key ? a[j++] : a[i++];
    while (i < mid) b[k++] = a[i++];
    while (j < hi) b[k++] = a[j++];
}

/* Bottom-up merge sort of a[0..n) using tmp; returns the buffer holding the result. */
static Pair *stable_sort(Pair *a, Pair *tmp, int64_t n) {
    for (int64_t s = 0; s < n; s += SORT_RUN) insertion_sort(a + s, n - s < SORT_RUN ? n - s : SORT_RUN);
    for (int64_t w = SORT_RUN; w < n; w *= 2) {
        for (int64_t lo = 0; lo < n; lo += 2 * w) {
            int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            merge_runs(a, lo, mid, hi, tmp);
        }
        Pair *sw = a;
        a = tmp;
        tmp = sw;
    }
    return a;
}

/* out[dst] = t[src], one element of t's dtype (bits copied: NaN payloads and -0 survive). */
static void copy_elem(const Tensor *t, int64_t src, Tensor *out, int64_t dst) {
    size_t es = dtype_size(t->dtype);
    memcpy((char *)out->data + (size_t)dst * es, (const char *)t->data + (size_t)src * es, es);
}

/* The first k of a sorted line: values into vals (may be NULL), positions into idx. */
static void write_line(const Tensor *t, Lines L, Lines Lo, int64_t o, int64_t i, const Pair *p, int64_t k,
                       Tensor *vals, Tensor *idx) {
    int64_t src = o * L.n * L.inner + i, dst = o * Lo.n * Lo.inner + i;
    for (int64_t j = 0; j < k; j++) {
        if (vals) copy_elem(t, src + p[j].idx * L.inner, vals, dst + j * L.inner);
        if (idx) ((int64_t *)idx->data)[dst + j * L.inner] = p[j].idx;
    }
}

/* ---------- sort, argsort ---------- */

int cpu_sort(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    Lines L = lines_of(t, norm_ax(c->at->axis, t->ndim));
    if (L.n == 0 || L.outer * L.inner == 0) return 0;
    Pair *buf = try_alloc(sizeof(Pair) * 2 * (size_t)L.n);
    if (!buf) return -1;
    bool arg = c->op == OP_ARGSORT;
    for (int64_t o = 0; o < L.outer; o++)
        for (int64_t i = 0; i < L.inner; i++) {
            line_pairs(t, L, o, i, c->at->flag, buf);
            const Pair *s = stable_sort(buf, buf + L.n, L.n);
            write_line(t, L, L, o, i, s, L.n, arg ? NULL : out[0], arg ? out[0] : NULL);
        }
    mem_free(buf);
    return 0;
}

/* ---------- topk ---------- */

/* Below this k, topk keeps a sorted window of the k best instead of sorting the line. */
enum { TOPK_WINDOW = 32 };

/* The k smallest (complemented) keys of p[0..n) into w[0..k), earliest first among equals:
 * a later element enters only when strictly smaller than the window's last. */
static void window_select(const Pair *p, int64_t n, int64_t k, Pair *w) {
    int64_t m = 0;
    for (int64_t j = 0; j < n; j++) {
        if (m == k && !(p[j].key < w[k - 1].key)) continue;
        int64_t pos = m < k ? m++ : k - 1;
        for (; pos > 0 && p[j].key < w[pos - 1].key; pos--) w[pos] = w[pos - 1];
        w[pos] = p[j];
    }
}

int cpu_topk(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    int ax = norm_ax(c->at->axis, t->ndim);
    Lines L = lines_of(t, ax), Lo = lines_of(out[0], ax);
    int64_t k = c->at->i[0];
    if (k == 0 || L.outer * L.inner == 0) return 0;
    Pair *buf = try_alloc(sizeof(Pair) * (2 * (size_t)L.n + (size_t)k));
    if (!buf) return -1;
    for (int64_t o = 0; o < L.outer; o++)
        for (int64_t i = 0; i < L.inner; i++) {
            line_pairs(t, L, o, i, true, buf);
            const Pair *s = buf + 2 * L.n;
            if (k <= TOPK_WINDOW) window_select(buf, L.n, k, buf + 2 * L.n);
            else s = stable_sort(buf, buf + L.n, L.n);
            write_line(t, L, Lo, o, i, s, k, out[0], out[1]);
        }
    mem_free(buf);
    return 0;
}

/* ---------- unique ---------- */

/* Sorted distinct values: equal keys collapse to their first element in input order, so
 * all NaNs become one NaN at the end (NumPy >= 1.21) and 0 / -0 keep whichever came first. */
int cpu_unique(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    int64_t n = t->size;
    Pair *buf = try_alloc(sizeof(Pair) * 2 * (size_t)n);
    if (!buf) return -1;
    for (int64_t j = 0; j < n; j++) buf[j] = (Pair){ key_at(t, j), j };
    const Pair *s = stable_sort(buf, buf + n, n);
    int64_t m = 0;
    for (int64_t j = 0; j < n; j++)
        if (j == 0 || s[j].key != s[j - 1].key) m++;
    Shape rs = { 1, { m } };
    out[0] = tensor_new(t->dtype, &rs);
    if (out[0])
        for (int64_t j = 0, w = 0; j < n; j++)
            if (j == 0 || s[j].key != s[j - 1].key) copy_elem(t, s[j].idx, out[0], w++);
    mem_free(buf);
    return out[0] ? 0 : -1;
}

/* ---------- one_hot ---------- */

int cpu_one_hot(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    const int64_t *lab = t->data;
    int64_t n = c->at->i[0];
    float *y = out[0]->data;
    memset(y, 0, sizeof(float) * (size_t)out[0]->size);
    for (int64_t p = 0; p < t->size; p++) {
        if (lab[p] < 0 || lab[p] >= n) {
            op_failk(ERRK_INDEX, "one_hot(): label %lld is out of range for n = %lld (labels must be in [0, n))", (long long)lab[p],
                    (long long)n);
            return -1;
        }
        y[p * n + lab[p]] = 1;
    }
    return 0;
}

/* ---------- tile ---------- */

/* Byte strides of the source (its shape padded with leading 1s) and of the result. */
typedef struct {
    int nd;
    size_t es;
    int64_t dim[TSL_MAX_RANK], reps[TSL_MAX_RANK];
    size_t sstride[TSL_MAX_RANK], dstride[TSL_MAX_RANK];
} TilePlan;

/* Writes one copy of the source's block at level l, then copies the finished block
 * reps[l] - 1 more times: every element is computed once, the rest is memcpy. */
static void tile_level(const TilePlan *p, int l, const char *src, char *dst) {
    if (l == p->nd) {
        memcpy(dst, src, p->es);
        return;
    }
    if (l == p->nd - 1) memcpy(dst, src, (size_t)p->dim[l] * p->es);
    else
        for (int64_t j = 0; j < p->dim[l]; j++)
            tile_level(p, l + 1, src + (size_t)j * p->sstride[l], dst + (size_t)j * p->dstride[l]);
    size_t block = (size_t)p->dim[l] * p->dstride[l];
    for (int64_t r = 1; r < p->reps[l]; r++) memcpy(dst + (size_t)r * block, dst, block);
}

int cpu_tile(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    Tensor *r = out[0];
    if (r->size == 0) return 0;
    TilePlan p = { .nd = r->ndim, .es = dtype_size(t->dtype) };
    for (int i = 0; i < p.nd; i++) {
        int ia = i - (p.nd - t->ndim);
        p.dim[i] = ia >= 0 ? t->shape[ia] : 1;
        p.reps[i] = r->shape[i] / p.dim[i];
    }
    size_t ss = p.es, ds = p.es;
    for (int i = p.nd - 1; i >= 0; i--) {
        p.sstride[i] = ss;
        p.dstride[i] = ds;
        ss *= (size_t)p.dim[i];
        ds *= (size_t)r->shape[i];
    }
    tile_level(&p, 0, t->data, r->data);
    return 0;
}

/* ---------- repeat ---------- */

enum { AXIS_PARAM_REPEAT = 2 };

int cpu_repeat(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    Lines L = { 1, t->size, 1 };   /* no axis: the flattened tensor */
    if (op_given(c, AXIS_PARAM_REPEAT)) L = lines_of(t, norm_ax(c->at->axis, t->ndim));
    int64_t n = c->at->i[0];
    if (out[0]->size == 0) return 0;   /* zeros([2**40, 2, 0]): 2**41 empty copies otherwise */
    size_t block = (size_t)L.inner * dtype_size(t->dtype);
    const char *src = t->data;
    char *dst = out[0]->data;
    for (int64_t o = 0; o < L.outer * L.n; o++, src += block)
        for (int64_t r = 0; r < n; r++, dst += block) memcpy(dst, src, block);
    return 0;
}

/* ---------- pad ---------- */

/* The fill value as a double, or exactly as an i64 when both it and t are i64. */
static void pad_source(const OpCall *c, double *x, int64_t *exact, bool *is_exact) {
    *x = 0;
    *is_exact = false;
    if (c->nin < 2 || c->in[1].kind == ARG_NONE) return;
    if (c->in[1].kind == ARG_NUM) {
        *x = c->in[1].x;
        return;
    }
    const Tensor *v = c->in[1].t;
    if (v->dtype == DT_I64) {
        *exact = ((const int64_t *)v->data)[0];
        *is_exact = true;
    }
    *x = tensor_get(v, 0);
}

/* The fill value converted to dt, its bytes in v; into i64 it must be an integer (as
 * astype, NaN, inf and out-of-range values are errors; so is a fraction, which astype
 * would truncate but which cannot be meant as a fill). */
int cpu_pad_value(const OpCall *c, DType dt, unsigned char *v) {
    double x;
    int64_t exact;
    bool is_exact;
    pad_source(c, &x, &exact, &is_exact);
    switch (dt) {
    case DT_BOOL: v[0] = x != 0; return 0;
    case DT_F32: { float f = (float)x; memcpy(v, &f, sizeof f); return 0; }
    case DT_F64: memcpy(v, &x, sizeof x); return 0;
    case DT_I64: break;
    }
    if (!is_exact && !num_to_i64(x, &exact)) {
        if (!double_fits_i64(x))
            op_fail("pad(): cannot convert %s to i64",
                    isnan(x) ? "nan" : isinf(x) ? (x > 0 ? "inf" : "-inf") : "an out-of-range value");
        else
            op_failk(ERRK_TYPE, "pad(): cannot convert %g to i64 (the value must be an integer for an i64 tensor)", x);
        return -1;
    }
    memcpy(v, &exact, sizeof exact);
    return 0;
}

static void fill_bytes(char *dst, const unsigned char *v, size_t es, int64_t n) {
    if (es == 1) {
        memset(dst, v[0], (size_t)n);
        return;
    }
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * es, v, es);
}

/* Copies t's rows (its last axis) into r at offsets shifted by the before-widths. */
static void pad_copy(const Tensor *t, Tensor *r, const OpAttrs *at) {
    int nd = t->ndim;
    size_t es = dtype_size(t->dtype);
    if (nd == 0) {
        memcpy(r->data, t->data, es);
        return;
    }
    int64_t ostride[TSL_MAX_RANK], idx[TSL_MAX_RANK] = { 0 }, row = t->shape[nd - 1];
    ostride[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; i--) ostride[i] = ostride[i + 1] * r->shape[i + 1];
    for (int64_t s = 0; s < t->size; s += row) {
        int64_t d = 0;
        for (int i = 0; i < nd; i++) d += (idx[i] + at->pairs[at->npairs == 1 ? 0 : i][0]) * ostride[i];
        memcpy((char *)r->data + (size_t)d * es, (const char *)t->data + (size_t)s * es, (size_t)row * es);
        for (int i = nd - 2; i >= 0 && ++idx[i] == t->shape[i]; i--) idx[i] = 0;
    }
}

int cpu_pad(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    unsigned char v[8];
    if (cpu_pad_value(c, t->dtype, v)) return -1;
    fill_bytes(out[0]->data, v, dtype_size(t->dtype), out[0]->size);
    if (t->size > 0) pad_copy(t, out[0], c->at);
    return 0;
}

/* ---------- diff ---------- */

/* y = x[j + 1] - x[j] along the axis; bool uses != (NumPy), i64 wraps. */
#define DIFF_KERNEL(NAME, T, EXPR)                                                        \
    static void NAME(const void *xv, void *yv, Lines L) {                                \
        const T *x = xv;                                                                 \
        T *y = yv;                                                                       \
        for (int64_t o = 0; o < L.outer; o++)                                            \
            for (int64_t j = 0; j + 1 < L.n; j++) {                                      \
                const T *b = x + (o * L.n + j) * L.inner, *a = b + L.inner;              \
                T *d = y + (o * (L.n - 1) + j) * L.inner;                                \
                for (int64_t i = 0; i < L.inner; i++) d[i] = EXPR;                       \
            }                                                                            \
    }
DIFF_KERNEL(diff_bool, uint8_t, a[i] != b[i])
DIFF_KERNEL(diff_i64, uint64_t, a[i] - b[i])
DIFF_KERNEL(diff_f32, float, a[i] - b[i])
DIFF_KERNEL(diff_f64, double, a[i] - b[i])

int cpu_diff(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    Lines L = lines_of(t, norm_ax(c->at->axis, t->ndim));
    switch (t->dtype) {
    case DT_BOOL: diff_bool(t->data, out[0]->data, L); break;
    case DT_I64: diff_i64(t->data, out[0]->data, L); break;
    case DT_F32: diff_f32(t->data, out[0]->data, L); break;
    case DT_F64: diff_f64(t->data, out[0]->data, L); break;
    }
    return 0;
}

/* ---------- trace ---------- */

/* acc[r] += t[k, k, r] for k = 0, 1, ...: one sequential sum per trailing position. */
#define TRACE_KERNEL(NAME, TI, TA)                                                        \
    static void NAME(const void *xv, void *yv, int64_t d0, int64_t d1, int64_t rest) {   \
        const TI *x = xv;                                                                \
        TA *y = yv;                                                                      \
        for (int64_t r = 0; r < rest; r++) y[r] = 0;                                     \
        int64_t m = d0 < d1 ? d0 : d1;                                                   \
        for (int64_t k = 0; k < m; k++) {                                                \
            const TI *row = x + (k * d1 + k) * rest;                                     \
            for (int64_t r = 0; r < rest; r++) y[r] += (TA)row[r];                       \
        }                                                                                \
    }
TRACE_KERNEL(trace_bool, uint8_t, uint64_t)
TRACE_KERNEL(trace_i64, uint64_t, uint64_t)
TRACE_KERNEL(trace_f32, float, float)
TRACE_KERNEL(trace_f64, double, double)

int cpu_trace(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    int64_t d0 = t->shape[0], d1 = t->shape[1], rest = out[0]->size;
    switch (t->dtype) {
    case DT_BOOL: trace_bool(t->data, out[0]->data, d0, d1, rest); break;
    case DT_I64: trace_i64(t->data, out[0]->data, d0, d1, rest); break;
    case DT_F32: trace_f32(t->data, out[0]->data, d0, d1, rest); break;
    case DT_F64: trace_f64(t->data, out[0]->data, d0, d1, rest); break;
    }
    return 0;
}

/* ---------- take / scatter_add ---------- */

/* Position p of a tensor of n elements (negative counts from the end), or -1 with the error. */
static int64_t flat_position(const OpCall *c, int64_t p, int64_t n) {
    int64_t q = p < 0 ? p + n : p;
    if (q < 0 || q >= n) {
        op_failk(ERRK_INDEX, "%s(): index %lld is out of bounds for a tensor of %lld element%s", op_info[c->op].name, (long long)p,
                (long long)n, n == 1 ? "" : "s");
        return -1;
    }
    return q;
}

/* Every position checked (0, or -1 with the error) before any is read: first their least and
 * greatest (a loop the compiler vectorises: positions are usually in range), then one by one
 * for the error's words only when that fails or some count from the end. */
static int check_positions(const OpCall *c, const int64_t *ix, int64_t n, int64_t size) {
    int64_t lo = 0, hi = -1;
    for (int64_t k = 0; k < n; k++) {
        lo = ix[k] < lo ? ix[k] : lo;
        hi = ix[k] > hi ? ix[k] : hi;
    }
    if (lo >= 0 && hi < size) return 0;
    for (int64_t k = 0; k < n; k++)
        if (flat_position(c, ix[k], size) < 0) return -1;
    return 0;
}

/* The length of the run of consecutive flat positions that starts at ix[k] (at least 1):
 * crops (indexing under autograd, concat's and pad's backward) read whole rows, one memcpy
 * or one loop each. Positions are already checked. */
static int64_t run_length(const int64_t *ix, int64_t k, int64_t n, int64_t size) {
    int64_t q = ix[k] < 0 ? ix[k] + size : ix[k], r = 1;
    while (k + r < n && (ix[k + r] < 0 ? ix[k + r] + size : ix[k + r]) == q + r) r++;
    return r;
}

static int cpu_take(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t, *idx = c->in[1].t;
    const int64_t *ix = idx->data;
    size_t es = dtype_size(t->dtype);
    if (check_positions(c, ix, idx->size, t->size)) return -1;
    for (int64_t k = 0, r; k < idx->size; k += r) {
        r = run_length(ix, k, idx->size, t->size);
        int64_t q = ix[k] < 0 ? ix[k] + t->size : ix[k];
        memcpy((char *)out[0]->data + (size_t)k * es, (const char *)t->data + (size_t)q * es, (size_t)r * es);
    }
    return 0;
}

/* y[q + j] += v[k + j] for the run of r positions that starts at ix[k] = q (v one element:
 * always its first), in order, in the result's dtype. Runs never overlap an earlier position
 * out of order: they are the positions in their given order, so repeats accumulate as
 * NumPy's add.at does. */
#define SCATTER_KERNEL(name, T, ADD)                                                            \
    static void name(T *restrict y, const int64_t *ix, const T *restrict v, int64_t n, int64_t size, \
                     bool one) {                                                                \
        for (int64_t k = 0, r; k < n; k += r) {                                                 \
            r = run_length(ix, k, n, size);                                                     \
            T *restrict yq = y + (ix[k] < 0 ? ix[k] + size : ix[k]);                            \
            const T *restrict vk = v + (one ? 0 : k);                                           \
            if (one) {                                                                          \
                T x = vk[0];                                                                    \
                for (int64_t j = 0; j < r; j++) yq[j] = ADD;                                    \
            } else {                                                                            \
                for (int64_t j = 0; j < r; j++) {   /* distinct places in a run: vectorises */  \
                    T x = vk[j];                                                                \
                    yq[j] = ADD;                                                                \
                }                                                                               \
            }                                                                                   \
        }                                                                                       \
    }
SCATTER_KERNEL(scatter_f32, float, yq[j] + x)
SCATTER_KERNEL(scatter_f64, double, yq[j] + x)
SCATTER_KERNEL(scatter_i64, int64_t, (int64_t)((uint64_t)yq[j] + (uint64_t)x))   /* wraps, as i64 + does */
SCATTER_KERNEL(scatter_bool, uint8_t, yq[j] | x)                                  /* bool + bool is or */

static int cpu_scatter_add(const OpCall *c, Tensor **out) {
    DType dt = out[0]->dtype;
    const Tensor *idx = c->in[1].t;
    const int64_t *ix = idx->data;
    int64_t size = out[0]->size;
    /* operands in the result's dtype: as they are when they have it (no copy per call) */
    Tensor *tmp[2];
    ScalarBox box[2];
    const Tensor *base = operand_as(&c->in[0], dt, &tmp[0], &box[0]), *v = operand_as(&c->in[2], dt, &tmp[1], &box[1]);
    int rc = -1;
    if (!v || !base || check_positions(c, ix, idx->size, size)) goto out;
    if (size) memcpy(out[0]->data, base->data, dtype_size(dt) * (size_t)size);
    bool one = v->size == 1;
    switch (dt) {
    case DT_F32: scatter_f32(out[0]->data, ix, v->data, idx->size, size, one); break;
    case DT_F64: scatter_f64(out[0]->data, ix, v->data, idx->size, size, one); break;
    case DT_I64: scatter_i64(out[0]->data, ix, v->data, idx->size, size, one); break;
    default: scatter_bool(out[0]->data, ix, v->data, idx->size, size, one); break;
    }
    rc = 0;
out:
    tensor_release(tmp[0]);
    tensor_release(tmp[1]);
    return rc;
}

int cpu_gather(const OpCall *c, Tensor **out) { return c->op == OP_TAKE ? cpu_take(c, out) : cpu_scatter_add(c, out); }
