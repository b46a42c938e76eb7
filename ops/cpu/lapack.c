/* lapack.c - the CPU kernels of the LAPACK family: solve, inv, det, cholesky, qr, svd, eigh
 * (numpy.linalg semantics; shapes and shape errors come from infer_lapack).
 *
 * LAPACK is the one inside the libopenblas TSL links (Debian's pthread build, held to one
 * thread: linalg.c), which exports the Fortran routines (dgesv_, ...): the same bits every run. They are called through lapack.h,
 * the reference C prototypes of those routines (it passes Fortran's hidden string
 * lengths right), not through liblapacke: that library would reach LAPACK through the
 * system's liblapack.so.3 alternative, which need not be that OpenBLAS. Each matrix
 * is copied, transposed to column-major and converted to the compute dtype, into scratch
 * (LAPACK overwrites its input and tensors are immutable). The copy is NumPy's too, which
 * hands LAPACK a Fortran-order copy of A: the same routine on the same matrix, so the same
 * signs of q, u and the eigenvectors.
 * Matrices of a batch (leading axes) are done one by one, scratch reused. */
#include <lapack.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"

/* ---------- elements of any dtype ---------- */

static double elem_get(const void *p, DType t, int64_t i) {
    switch (t) {
    case DT_BOOL: return ((const uint8_t *)p)[i];
    case DT_I64: return (double)((const int64_t *)p)[i];
    case DT_F32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
    }
}

/* dst[j] (dtype dt, f32 or f64) = src[i] converted; i64 goes to f32 directly, as astype does. */
static void elem_put(void *dst, DType dt, int64_t j, const void *src, DType st, int64_t i) {
    if (dt == DT_F32)
        ((float *)dst)[j] = st == DT_I64 ? (float)((const int64_t *)src)[i] : (float)elem_get(src, st, i);
    else
        ((double *)dst)[j] = elem_get(src, st, i);
}

/* The m x n row-major matrix at element `off` of t, into dst column-major (leading dim m). */
static void load_cm(void *dst, DType dt, const Tensor *t, int64_t off, int64_t m, int64_t n) {
    for (int64_t j = 0; j < n; j++)
        for (int64_t i = 0; i < m; i++) elem_put(dst, dt, j * m + i, t->data, t->dtype, off + i * n + j);
}

/* A column-major m x n matrix (leading dim ld) into t row-major at element `off`. */
static void store_rm(Tensor *t, int64_t off, const void *src, int64_t m, int64_t n, int64_t ld) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) elem_put(t->data, t->dtype, off + i * n + j, src, t->dtype, j * ld + i);
}

static void store_vec(Tensor *t, int64_t off, const void *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) elem_put(t->data, t->dtype, off + i, src, t->dtype, i);
}

/* The same from f64 scratch into a tensor of either float dtype. */
static void store_rm_f64(Tensor *t, int64_t off, const double *src, int64_t m, int64_t n, int64_t ld) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) elem_put(t->data, t->dtype, off + i * n + j, src, DT_F64, j * ld + i);
}

static void store_vec_f64(Tensor *t, int64_t off, const double *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) elem_put(t->data, t->dtype, off + i, src, DT_F64, i);
}

/* LAPACK wants a leading dimension of at least 1 even for empty matrices. */
static lapack_int ld_of(int64_t rows) { return rows > 1 ? (lapack_int)rows : 1; }

/* ---------- scratch: every buffer of one call, freed together ---------- */

typedef struct {
    void *p[8];   /* svd, the most: 6 */
    int n;
    bool oom;
} Scratch;

static void *scratch(Scratch *s, int64_t count, size_t esize) {
    void *p = mem_try_alloc((size_t)(count > 0 ? count : 1) * esize);
    if (!p) s->oom = true;
    else s->p[s->n++] = p;
    return p;
}

static int scratch_done(Scratch *s, int rc) {
    for (int i = 0; i < s->n; i++) mem_free(s->p[i]);
    return rc;
}

/* After the allocations: -1 (error set) if one of them failed. */
static int scratch_check(Scratch *s) {
    if (!s->oom) return 0;
    op_failk(ERRK_MEMORY, "out of memory");
    return -1;
}

/* A workspace size LAPACK reported in work[0]. A float holds it rounded to 24 bits, maybe
 * down, so pad it; a larger lwork never changes LAPACK's block sizes, hence its bits. */
static int64_t lwork_of(const void *work, DType t) {
    double q = elem_get(work, t, 0);
    return (int64_t)ceil(q * (1 + 1e-6)) + 1;
}

static int too_large(const char *name, int64_t lwork) {
    if (lwork <= INT32_MAX) return 0;
    op_failk(ERRK_VALUE, "%s: the matrix is too large for LAPACK's workspace", name);
    return -1;
}

/* What a failed LAPACK call means to the user: info > 0 is the op's own error. */
static int lapack_failed(const char *name, lapack_int info, const char *why) {
    if (info > 0) op_fail("%s: %s", name, why);
    else op_fail("%s: LAPACK rejected argument %d (internal error)", name, (int)-info);
    return -1;
}

/* ---------- the routines, by dtype (lapack_int arguments go by address, Fortran style) ---------- */

static lapack_int la_gesv(DType t, int64_t n, int64_t k, void *a, lapack_int *ipiv, void *b) {
    lapack_int nn = (lapack_int)n, kk = (lapack_int)k, ld = ld_of(n), info = 0;
    if (t == DT_F32) LAPACK_sgesv(&nn, &kk, a, &ld, ipiv, b, &ld, &info);
    else LAPACK_dgesv(&nn, &kk, a, &ld, ipiv, b, &ld, &info);
    return info;
}

static lapack_int la_getrf(DType t, int64_t n, void *a, lapack_int *ipiv) {
    lapack_int nn = (lapack_int)n, ld = ld_of(n), info = 0;
    if (t == DT_F32) LAPACK_sgetrf(&nn, &nn, a, &ld, ipiv, &info);
    else LAPACK_dgetrf(&nn, &nn, a, &ld, ipiv, &info);
    return info;
}

static lapack_int la_potrf(DType t, int64_t n, void *a) {
    lapack_int nn = (lapack_int)n, ld = ld_of(n), info = 0;
    if (t == DT_F32) LAPACK_spotrf("L", &nn, a, &ld, &info);
    else LAPACK_dpotrf("L", &nn, a, &ld, &info);
    return info;
}

static lapack_int la_geqrf(DType t, int64_t m, int64_t n, void *a, void *tau, void *w, int64_t lw) {
    lapack_int mm = (lapack_int)m, nn = (lapack_int)n, ld = ld_of(m), l = (lapack_int)lw, info = 0;
    if (t == DT_F32) LAPACK_sgeqrf(&mm, &nn, a, &ld, tau, w, &l, &info);
    else LAPACK_dgeqrf(&mm, &nn, a, &ld, tau, w, &l, &info);
    return info;
}

/* The m x k matrix q with orthonormal columns from geqrf's first k reflectors. */
static lapack_int la_orgqr(DType t, int64_t m, int64_t k, void *a, const void *tau, void *w, int64_t lw) {
    lapack_int mm = (lapack_int)m, kk = (lapack_int)k, ld = ld_of(m), l = (lapack_int)lw, info = 0;
    if (t == DT_F32) LAPACK_sorgqr(&mm, &kk, &kk, a, &ld, tau, w, &l, &info);
    else LAPACK_dorgqr(&mm, &kk, &kk, a, &ld, tau, w, &l, &info);
    return info;
}

/* Reduced SVD (jobz 'S', as numpy.linalg.svd(full_matrices=False)): u m x k, vt k x n. */
static lapack_int la_gesdd(DType t, int64_t m, int64_t n, void *a, void *s, void *u, void *vt, void *w, int64_t lw,
                           lapack_int *iw) {
    lapack_int mm = (lapack_int)m, nn = (lapack_int)n, l = (lapack_int)lw, info = 0;
    lapack_int lda = ld_of(m), ldvt = ld_of(m < n ? m : n);
    if (t == DT_F32) LAPACK_sgesdd("S", &mm, &nn, a, &lda, s, u, &lda, vt, &ldvt, w, &l, iw, &info);
    else LAPACK_dgesdd("S", &mm, &nn, a, &lda, s, u, &lda, vt, &ldvt, w, &l, iw, &info);
    return info;
}

/* Eigenvalues ascending and eigenvectors (jobz 'V') of the symmetric matrix whose lower
 * triangle a holds: numpy.linalg.eigh's default UPLO='L'. */
static lapack_int la_syevd(DType t, int64_t n, void *a, void *wv, void *w, int64_t lw, lapack_int *iw, int64_t liw) {
    lapack_int nn = (lapack_int)n, ld = ld_of(n), l = (lapack_int)lw, li = (lapack_int)liw, info = 0;
    if (t == DT_F32) LAPACK_ssyevd("V", "L", &nn, a, &ld, wv, w, &l, iw, &li, &info);
    else LAPACK_dsyevd("V", "L", &nn, a, &ld, wv, w, &l, iw, &li, &info);
    return info;
}

/* ---------- batches ---------- */

/* Matrices in a [..., m, n] tensor. */
static int64_t batch_count(const Tensor *t, int keep) {
    int64_t b = 1;
    for (int i = 0; i < t->ndim - keep; i++) b *= t->shape[i];
    return b;
}

/* The matrix of an operand (batch axes id[0..ni)) that output batch entry i reads under
 * broadcasting (output batch axes od[0..nd), ni <= nd, right-aligned). */
static int64_t bcast_index(int64_t i, const int64_t *od, int nd, const int64_t *id, int ni) {
    int64_t r = 0, mul = 1;
    for (int d = nd - 1, e = ni - 1; e >= 0; d--, e--) {
        int64_t coord = i % od[d];
        i /= od[d];
        if (id[e] != 1) r += coord * mul;
        mul *= id[e];
    }
    return r;
}

/* ---------- the ops ---------- */

/* x with a @ x == b; b a vector when 1-D (NumPy 2), else [..., n, k] with broadcast batches.
 * b NULL: inv(a), as NumPy, gesv against the identity. */
static int run_solve(const Tensor *a, const Tensor *b, Tensor *out) {
    DType t = out->dtype;
    size_t es = dtype_size(t);
    bool vec = b && b->ndim == 1;
    int64_t n = a->shape[a->ndim - 1], k = vec ? 1 : b ? b->shape[b->ndim - 1] : n;
    int nd = out->ndim - (vec ? 1 : 2), na = a->ndim - 2, nb = b && !vec ? b->ndim - 2 : 0;
    int64_t count = batch_count(out, vec ? 1 : 2);
    if (n == 0 || count == 0) return 0;
    Scratch s = { 0 };
    void *am = scratch(&s, n * n, es), *x = scratch(&s, n * k, es);
    lapack_int *ipiv = scratch(&s, n, sizeof(lapack_int));
    if (scratch_check(&s)) return scratch_done(&s, -1);
    for (int64_t i = 0; i < count; i++) {
        load_cm(am, t, a, bcast_index(i, out->shape, nd, a->shape, na) * n * n, n, n);
        if (b) load_cm(x, t, b, bcast_index(i, out->shape, nd, b->shape, nb) * n * k, n, k);
        else {   /* the identity */
            memset(x, 0, (size_t)(n * n) * es);
            for (int64_t d = 0; d < n; d++) elem_put(x, t, d * n + d, &(double){ 1 }, DT_F64, 0);
        }
        lapack_int info = la_gesv(t, n, k, am, ipiv, x);
        if (info) return scratch_done(&s, lapack_failed(b ? "solve" : "inv", info, "singular matrix"));
        store_rm(out, i * n * k, x, n, k, n);
    }
    return scratch_done(&s, 0);
}

/* The product of u's diagonal with the permutation's sign; 0 for a singular matrix. The
 * product runs in f64 even for f32 so partial products cannot overflow or flush early. */
static double lu_det(const void *lu, DType t, const lapack_int *ipiv, lapack_int info, int64_t n) {
    if (info > 0) return 0;
    double d = 1;
    for (int64_t i = 0; i < n; i++) {
        d *= elem_get(lu, t, i * n + i);
        if (ipiv[i] != i + 1) d = -d;
    }
    return d;
}

static int run_det(const Tensor *a, Tensor *out) {
    DType t = out->dtype;
    int64_t n = a->shape[a->ndim - 1], count = batch_count(a, 2);
    Scratch s = { 0 };
    void *am = scratch(&s, n * n, dtype_size(t));
    lapack_int *ipiv = scratch(&s, n, sizeof(lapack_int));
    if (scratch_check(&s)) return scratch_done(&s, -1);
    for (int64_t i = 0; i < count; i++) {
        load_cm(am, t, a, i * n * n, n, n);
        lapack_int info = n ? la_getrf(t, n, am, ipiv) : 0;   /* det of 0 x 0 is 1 */
        if (info < 0) return scratch_done(&s, lapack_failed("det", info, ""));
        double d = lu_det(am, t, ipiv, info, n);
        elem_put(out->data, t, i, &d, DT_F64, 0);
    }
    return scratch_done(&s, 0);
}

/* Lower l with l @ l.T == a, reading a's lower triangle only (NumPy's UPLO='L'). */
static int run_cholesky(const Tensor *a, Tensor *out) {
    DType t = out->dtype;
    size_t es = dtype_size(t);
    int64_t n = a->shape[a->ndim - 1], count = batch_count(a, 2);
    if (n == 0 || count == 0) return 0;
    Scratch s = { 0 };
    void *am = scratch(&s, n * n, es);
    if (scratch_check(&s)) return scratch_done(&s, -1);
    for (int64_t i = 0; i < count; i++) {
        load_cm(am, t, a, i * n * n, n, n);
        lapack_int info = la_potrf(t, n, am);
        if (info) return scratch_done(&s, lapack_failed("cholesky", info, "matrix is not positive definite"));
        /* potrf leaves the strict upper triangle as it found it: column j, rows 0..j-1 */
        for (int64_t j = 1; j < n; j++) memset((char *)am + (size_t)(j * n) * es, 0, (size_t)j * es);
        store_rm(out, i * n * n, am, n, n, n);
    }
    return scratch_done(&s, 0);
}

/* The larger of geqrf's and orgqr's workspace for an m x n matrix; -1 if a query failed. */
static int64_t qr_lwork(DType t, int64_t m, int64_t n, void *a, void *tau) {
    double q1 = 0, q2 = 0;   /* each size query writes one float or double */
    int64_t k = m < n ? m : n;
    if (la_geqrf(t, m, n, a, tau, &q1, -1) || la_orgqr(t, m, k, a, tau, &q2, -1)) return -1;
    int64_t l1 = lwork_of(&q1, t), l2 = lwork_of(&q2, t);
    return l1 > l2 ? l1 : l2;
}

/* Reduced QR: geqrf, r from the upper triangle, then orgqr builds q in place. */
static int run_qr(const Tensor *a, Tensor *q, Tensor *r) {
    DType t = q->dtype;
    size_t es = dtype_size(t);
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n, count = batch_count(a, 2);
    if (k == 0 || count == 0) return 0;
    Scratch s = { 0 };
    void *am = scratch(&s, m * n, es), *tau = scratch(&s, k, es);
    if (scratch_check(&s)) return scratch_done(&s, -1);
    int64_t lw = qr_lwork(t, m, n, am, tau);
    if (lw < 0) return scratch_done(&s, lapack_failed("qr", -1, ""));
    if (too_large("qr", lw)) return scratch_done(&s, -1);
    void *w = scratch(&s, lw, es);
    if (scratch_check(&s)) return scratch_done(&s, -1);
    for (int64_t i = 0; i < count; i++) {
        load_cm(am, t, a, i * m * n, m, n);
        lapack_int info = la_geqrf(t, m, n, am, tau, w, lw);
        if (info) return scratch_done(&s, lapack_failed("qr", info, "LAPACK failed"));
        for (int64_t p = 0; p < k; p++)
            for (int64_t j = 0; j < n; j++) {
                double v = j >= p ? elem_get(am, t, j * m + p) : 0;
                elem_put(r->data, t, i * k * n + p * n + j, &v, DT_F64, 0);
            }
        info = la_orgqr(t, m, k, am, tau, w, lw);
        if (info) return scratch_done(&s, lapack_failed("qr", info, "LAPACK failed"));
        store_rm(q, i * m * k, am, m, k, m);
    }
    return scratch_done(&s, 0);
}

static int run_svd(const Tensor *a, Tensor *u, Tensor *sv, Tensor *vt) {
    DType t = u->dtype;
    size_t es = dtype_size(t);
    int64_t m = a->shape[a->ndim - 2], n = a->shape[a->ndim - 1], k = m < n ? m : n, count = batch_count(a, 2);
    if (k == 0 || count == 0) return 0;
    Scratch s = { 0 };
    void *am = scratch(&s, m * n, es), *sm = scratch(&s, k, es);
    void *um = scratch(&s, m * k, es), *vm = scratch(&s, k * n, es);
    lapack_int *iw = scratch(&s, 8 * k, sizeof(lapack_int));
    if (scratch_check(&s)) return scratch_done(&s, -1);
    double q = 0;   /* the size query writes one float or double */
    lapack_int info = la_gesdd(t, m, n, am, sm, um, vm, &q, -1, iw);
    if (info) return scratch_done(&s, lapack_failed("svd", info, ""));
    int64_t lw = lwork_of(&q, t);
    if (too_large("svd", lw)) return scratch_done(&s, -1);
    void *w = scratch(&s, lw, es);
    if (scratch_check(&s)) return scratch_done(&s, -1);
    for (int64_t i = 0; i < count; i++) {
        load_cm(am, t, a, i * m * n, m, n);
        info = la_gesdd(t, m, n, am, sm, um, vm, w, lw, iw);
        if (info == -4) info = 1;   /* gesdd refuses a NaN in a (argument 4); NumPy: did not converge */
        if (info) return scratch_done(&s, lapack_failed("svd", info, "did not converge"));
        store_rm(u, i * m * k, um, m, k, m);
        store_vec(sv, i * k, sm, k);
        store_rm(vt, i * k * n, vm, k, n, k);
    }
    return scratch_done(&s, 0);
}

/* Computed in f64 for f32 too, then rounded: ssyevd of OpenBLAS 0.3.21 (Debian) fails to
 * converge on some valid matrices after a dsyevd call in the same process (found by
 * tests/numpy_diff.py; reproduced from plain C). */
static int run_eigh(const Tensor *a, Tensor *vals, Tensor *vecs) {
    DType t = DT_F64;
    size_t es = dtype_size(t);
    int64_t n = a->shape[a->ndim - 1], count = batch_count(a, 2);
    if (n == 0 || count == 0) return 0;
    Scratch s = { 0 };
    void *am = scratch(&s, n * n, es), *wv = scratch(&s, n, es);
    if (scratch_check(&s)) return scratch_done(&s, -1);
    double q = 0;   /* the size query writes one float or double */
    lapack_int iq = 0, info = la_syevd(t, n, am, wv, &q, -1, &iq, -1);
    if (info) return scratch_done(&s, lapack_failed("eigh", info, ""));
    int64_t lw = lwork_of(&q, t), liw = iq;
    if (too_large("eigh", lw)) return scratch_done(&s, -1);
    void *w = scratch(&s, lw, es);
    lapack_int *iw = scratch(&s, liw, sizeof(lapack_int));
    if (scratch_check(&s)) return scratch_done(&s, -1);
    for (int64_t i = 0; i < count; i++) {
        load_cm(am, t, a, i * n * n, n, n);
        info = la_syevd(t, n, am, wv, w, lw, iw, liw);
        if (info) return scratch_done(&s, lapack_failed("eigh", info, "did not converge"));
        store_vec_f64(vals, i * n, wv, n);
        store_rm_f64(vecs, i * n * n, am, n, n, n);   /* eigenvectors stay columns */
    }
    return scratch_done(&s, 0);
}

static int run_lapack(const OpCall *c, Tensor **out) {
    const Tensor *a = c->in[0].t;
    switch (c->op) {
    case OP_SOLVE: return run_solve(a, c->in[1].t, out[0]);
    case OP_INV: return run_solve(a, NULL, out[0]);
    case OP_DET: return run_det(a, out[0]);
    case OP_CHOLESKY: return run_cholesky(a, out[0]);
    case OP_QR: return run_qr(a, out[0], out[1]);
    case OP_SVD: return run_svd(a, out[0], out[1], out[2]);
    case OP_EIGH: return run_eigh(a, out[0], out[1]);
    default: op_fail("%s has no LAPACK kernel", op_info[c->op].name); return -1;
    }
}

/* One LAPACK call at a time in the process. OpenBLAS's gemm is safe on several threads at once
 * (linalg.c, "Rows on the thread pool"), but its LAPACK is Fortran whose safety on several
 * threads was not checked here, and these calls are rare and long: a lock costs nothing. */
static pthread_mutex_t lapack_lock = PTHREAD_MUTEX_INITIALIZER;

int cpu_lapack(const OpCall *c, Tensor **out) {
    pthread_mutex_lock(&lapack_lock);
    int rc = run_lapack(c, out);
    pthread_mutex_unlock(&lapack_lock);
    return rc;
}
