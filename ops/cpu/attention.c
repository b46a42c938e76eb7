/* attention.c - the CPU kernel of scaled_dot_product_attention (ops.def SDPA).
 *
 * Flash-attention's online softmax, so the L x S score matrix is never made: for each
 * block of ATTN_BQ queries, the keys are visited in blocks of ATTN_BK; each block's scores
 * are one gemm (q_blk @ k_blk^T), scaled, masked, and folded into a running row maximum m,
 * a running sum l of exp(s - m) and an unnormalised output o (rescaled by exp(m_old - m)
 * when the maximum grows; o += p @ v_blk is a second gemm). The result is o / l. The
 * blocks depend only on the shapes, so eager and static code (the same kernel) get the same
 * bits. A row whose every score is masked gives 0 / 0 = NaN, as the formula does in NumPy
 * (PyTorch 2.15 returns 0 there instead).
 * Shapes and the broadcasting of batch axes and mask are checked by ops/attention.c. */
#include <cblas.h>
#include <math.h>
#include <string.h>
#include "cpu.h"
#include "infer.h"
#include "attention.h"
#include "mem.h"

#define ATTN_BQ 64
#define ATTN_BK 128

typedef struct {
    int64_t L, S, D, Dv, nb;
    int nbd;                              /* batch axes of the result */
    int64_t bd[TSL_MAX_RANK];             /* their lengths */
    int64_t qs[TSL_MAX_RANK], ks[TSL_MAX_RANK], vs[TSL_MAX_RANK], ms[TSL_MAX_RANK + 2];
    int mask;                             /* 0 none, 1 bool (keep where true), 2 float (added) */
    bool causal;
    double scale;
} Attn;

/* Element strides of t read as `full` (right-aligned, NumPy broadcasting): 0 along an axis
 * t lacks or has as 1. */
static void bstrides(const Tensor *t, const int64_t *full, int fn, int64_t *st) {
    int64_t step = 1;
    for (int i = fn - 1; i >= 0; i--) {
        int ti = t->ndim - (fn - i);
        int64_t len = ti >= 0 ? t->shape[ti] : 1;
        st[i] = len == 1 ? 0 : step;   /* a length-1 axis broadcasts */
        step *= len;
    }
}

/* Offset of batch item bi under strides st. */
static int64_t batch_off(const Attn *a, int64_t bi, const int64_t *st) {
    int64_t off = 0;
    for (int d = a->nbd - 1; d >= 0; d--) {
        off += (bi % a->bd[d]) * st[d];
        bi /= a->bd[d];
    }
    return off;
}

static void gemm_f32(bool tb, int m, int n, int k, const float *x, int ldx, const float *y, int ldy, float beta, float *z, int ldz) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1, x, ldx, y, ldy, beta, z, ldz);
}
static void gemm_f64(bool tb, int m, int n, int k, const double *x, int ldx, const double *y, int ldy, double beta, double *z, int ldz) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, 1, x, ldx, y, ldy, beta, z, ldz);
}

/* One block of queries [i0, i0 + nq) of one batch item: q, k, v, mk at the item, o the
 * result's rows. s (ATTN_BQ x ATTN_BK), acc (ATTN_BQ x Dv), m and l are scratch. */
#define ATTN_BLOCK(T, VEXP, GEMM)                                                                            \
    static void attn_block_##T(const Attn *a, const T *q, const T *k, const T *v, const void *mk, int64_t i0,  \
                               int64_t nq, T *o, T *s, T *acc, T *m, T *l) {                                 \
        int64_t D = a->D, Dv = a->Dv, ld = D > 0 ? D : 1, ldv = Dv > 0 ? Dv : 1;                            \
        int64_t jend = a->causal ? (i0 + nq < a->S ? i0 + nq : a->S) : a->S;                                 \
        for (int64_t r = 0; r < nq; r++) { m[r] = -INFINITY; l[r] = 0; }                                     \
        memset(acc, 0, sizeof(T) * (size_t)(nq * Dv));                                                       \
        for (int64_t j0 = 0; j0 < jend; j0 += ATTN_BK) {                                                     \
            int64_t nk = jend - j0 < ATTN_BK ? jend - j0 : ATTN_BK;                                          \
            if (D > 0) GEMM(true, (int)nq, (int)nk, (int)D, q + i0 * D, (int)ld, k + j0 * D, (int)ld, 0, s, (int)nk); \
            else memset(s, 0, sizeof(T) * (size_t)(nq * nk));                                                \
            for (int64_t r = 0; r < nq; r++) {                                                               \
                T *sr = s + r * nk, mx = m[r];                                                               \
                int64_t i = i0 + r;                                                                          \
                for (int64_t c = 0; c < nk && !a->mask && !a->causal; c++) {   /* the plain case, alone */   \
                    T x = sr[c] * (T)a->scale;                                                               \
                    sr[c] = x;                                                                               \
                    if (x > mx) mx = x;                                                                      \
                }                                                                                            \
                for (int64_t c = 0; c < nk && (a->mask || a->causal); c++) {                                 \
                    int64_t j = j0 + c, mo = i * a->ms[a->nbd] + j * a->ms[a->nbd + 1];                      \
                    T x = sr[c] * (T)a->scale;                                                               \
                    if (a->mask == 1 && !((const bool *)mk)[mo]) x = -INFINITY;                              \
                    else if (a->mask == 2) x += ((const T *)mk)[mo];                                         \
                    if (a->causal && j > i) x = -INFINITY;                                                   \
                    sr[c] = x;                                                                               \
                    if (x > mx) mx = x;                                                                      \
                }                                                                                            \
                /* nothing kept yet: exp(-inf - -inf) would be NaN */                                        \
                T corr = 1, sum = 0;                                                                         \
                if (mx == -INFINITY) {                                                                       \
                    memset(sr, 0, sizeof(T) * (size_t)nk);                                                   \
                } else {   /* the exp op's SLEEF vectors, not a libm call an element */                      \
                    corr = m[r] - mx;   /* exp(-inf) = 0 before the first kept key */                        \
                    for (int64_t c = 0; c < nk; c++) sr[c] -= mx;                                            \
                    VEXP(&corr, &corr, 1);                                                                   \
                    VEXP(sr, sr, nk);                                                                        \
                    for (int64_t c = 0; c < nk; c++) sum += sr[c];                                           \
                }                                                                                            \
                l[r] = l[r] * corr + sum;                                                                    \
                m[r] = mx;                                                                                   \
                if (corr != 1)                                                                               \
                    for (int64_t c = 0; c < Dv; c++) acc[r * Dv + c] *= corr;                                \
            }                                                                                                \
            if (Dv > 0) GEMM(false, (int)nq, (int)Dv, (int)nk, s, (int)nk, v + j0 * Dv, (int)ldv, 1, acc, (int)ldv); \
        }                                                                                                    \
        for (int64_t r = 0; r < nq; r++)   /* no keys at all: an empty sum, 0 (NumPy's p @ v) */             \
            for (int64_t c = 0; c < Dv; c++) o[(i0 + r) * Dv + c] = a->S ? acc[r * Dv + c] / l[r] : 0;       \
    }
ATTN_BLOCK(float, vm_exp_f32, gemm_f32)
ATTN_BLOCK(double, vm_exp_f64, gemm_f64)

/* t in dt (a bool mask stays bool) */
static const Tensor *as_dtype(const Tensor *t, DType dt, bool mask, Tensor **tmp) {
    if (t->dtype == dt || (mask && t->dtype == DT_BOOL)) return t;
    return *tmp = op_astype(t, dt);
}

static int attn_run(Attn *a, const Tensor *q, const Tensor *k, const Tensor *v, const Tensor *mk, Tensor *r) {
    DType dt = r->dtype;
    size_t esz = dtype_size(dt);
    void *s = mem_try_alloc(esz * (size_t)(ATTN_BQ * ATTN_BK + ATTN_BQ * (a->Dv + 2)));
    if (!s) {
        op_fail("out of memory in scaled_dot_product_attention");
        return -1;
    }
    char *acc = (char *)s + esz * ATTN_BQ * ATTN_BK, *m = acc + esz * (size_t)(ATTN_BQ * a->Dv), *l = m + esz * ATTN_BQ;
    for (int64_t bi = 0; bi < a->nb; bi++) {
        int64_t qo = batch_off(a, bi, a->qs), ko = batch_off(a, bi, a->ks), vo = batch_off(a, bi, a->vs);
        int64_t mo = mk ? batch_off(a, bi, a->ms) : 0;
        const char *mp = mk ? (const char *)mk->data + (size_t)mo * dtype_size(mk->dtype) : NULL;
        for (int64_t i0 = 0; i0 < a->L; i0 += ATTN_BQ) {
            int64_t nq = a->L - i0 < ATTN_BQ ? a->L - i0 : ATTN_BQ;
            if (dt == DT_F32)
                attn_block_float(a, (const float *)q->data + qo, (const float *)k->data + ko, (const float *)v->data + vo, mp, i0, nq,
                                 (float *)r->data + bi * a->L * a->Dv, s, (float *)acc, (float *)m, (float *)l);
            else
                attn_block_double(a, (const double *)q->data + qo, (const double *)k->data + ko, (const double *)v->data + vo, mp,
                                  i0, nq, (double *)r->data + bi * a->L * a->Dv, s, (double *)acc, (double *)m, (double *)l);
        }
    }
    mem_free(s);
    return 0;
}

int cpu_attention(const OpCall *c, Tensor **out) {
    Tensor *r = out[0], *tmp[4] = { NULL, NULL, NULL, NULL };
    const Tensor *in[4] = { c->in[0].t, c->in[1].t, c->in[2].t, c->nin > 3 && c->in[3].kind == ARG_TENSOR ? c->in[3].t : NULL };
    Attn a;
    memset(&a, 0, sizeof a);
    a.L = r->shape[r->ndim - 2];
    a.Dv = r->shape[r->ndim - 1];
    a.S = in[1]->shape[in[1]->ndim - 2];
    a.D = in[0]->shape[in[0]->ndim - 1];
    a.nbd = r->ndim - 2;
    a.nb = 1;
    for (int d = 0; d < a.nbd; d++) a.nb *= a.bd[d] = r->shape[d];
    a.causal = c->at->flag;
    a.scale = attn_scale(a.D);
    int rc = -1;
    for (int i = 0; i < 4; i++)
        if (in[i] && !(in[i] = as_dtype(in[i], r->dtype, i == 3, &tmp[i]))) goto out;
    int64_t full[TSL_MAX_RANK + 2];
    memcpy(full, a.bd, sizeof(int64_t) * (size_t)a.nbd);
    int64_t st[TSL_MAX_RANK + 2];
    int64_t *dst[3] = { a.qs, a.ks, a.vs };
    for (int i = 0; i < 3; i++) {
        full[a.nbd] = in[i]->shape[in[i]->ndim - 2];
        full[a.nbd + 1] = in[i]->shape[in[i]->ndim - 1];
        bstrides(in[i], full, a.nbd + 2, st);
        memcpy(dst[i], st, sizeof(int64_t) * (size_t)a.nbd);
    }
    if (in[3]) {
        full[a.nbd] = a.L;
        full[a.nbd + 1] = a.S;
        bstrides(in[3], full, a.nbd + 2, a.ms);
        a.mask = in[3]->dtype == DT_BOOL ? 1 : 2;
    }
    rc = attn_run(&a, in[0], in[1], in[2], in[3], r);
out:
    for (int i = 0; i < 4; i++) tensor_release(tmp[i]);
    return rc;
}
