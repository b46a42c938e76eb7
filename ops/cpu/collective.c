/* collective.c - the collectives of ops.def (allreduce, broadcast, allgather) on CPU tensors.
 *
 * Each call first gathers every rank's header (op, attribute, dtype, shape: dist_agree), so
 * ranks that call different collectives, or the same one on other shapes, or a barrier, or
 * that finished, all stop with one error that names both sides instead of exchanging the
 * wrong number of bytes. allreduce then gathers
 * the tensors and combines them here, in rank order: every rank computes the same
 * (((t0 + t1) + t2) ...), so results are the same bits everywhere and independent of timing,
 * and equal to one process adding the same partial tensors in that order. It does so in
 * chunks of 1 MiB per rank, so the gather buffer is small, reused and warm in cache. */
#include <string.h>
#include "cpu.h"
#include "dist.h"
#include "mem.h"

/* allreduce gathers and combines this many bytes of each rank's tensor at a time */
#define CHUNK_BYTES ((size_t)1 << 20)

/* The header of this call (ops/dist.h), so every rank checks that all called the same
 * collective on the same dtype, device and shape before any data moves. */
int cpu_dist_agree(const OpCall *c, const Tensor *t) {
    DistCall h;
    memset(&h, 0, sizeof h);
    h.call = c->op;
    h.attr = c->op == OP_ALLGATHER ? 0 : c->at->i[0];
    h.dtype = t->dtype;
    h.device = t->device;
    h.ndim = t->ndim;
    for (int k = 0; k < t->ndim; k++) h.dims[k] = t->shape[k];
    return dist_agree(&h);
}

/* o = a op b over n elements of type T (max/min: NaN wins, as maximum()). */
#define COMBINE(T, o, a, b, r)                                                               \
    do {                                                                                     \
        T *o_ = (T *)(o);                                                                    \
        const T *a_ = (const T *)(a), *b_ = (const T *)(b);                                  \
        switch (r) {                                                                         \
        case REDOP_SUM: case REDOP_MEAN: for (int64_t i = 0; i < n; i++) o_[i] = a_[i] + b_[i]; break; \
        case REDOP_MAX: for (int64_t i = 0; i < n; i++) o_[i] = b_[i] > a_[i] || b_[i] != b_[i] ? b_[i] : a_[i]; break; \
        case REDOP_MIN: for (int64_t i = 0; i < n; i++) o_[i] = b_[i] < a_[i] || b_[i] != b_[i] ? b_[i] : a_[i]; break; \
        }                                                                                    \
    } while (0)

/* out = ((parts[0] op parts[1]) op parts[2]) ... in rank order; the first step reads two
 * parts, so one pass over the data per rank after the first (no copy of parts[0]). */
static void combine(DType dt, RedOp r, const char *parts, int size, int64_t n, void *out) {
    size_t nbytes = (size_t)n * dtype_size(dt);
    if (size == 1) memcpy(out, parts, nbytes);
    for (int k = 1; k < size; k++) {
        const void *a = k == 1 ? (const void *)parts : out, *b = parts + (size_t)k * nbytes;
        if (dt == DT_F32) COMBINE(float, out, a, b, r);
        else if (dt == DT_F64) COMBINE(double, out, a, b, r);
        else COMBINE(int64_t, out, a, b, r);
    }
    if (r != REDOP_MEAN) return;
    if (dt == DT_F32)
        for (int64_t i = 0; i < n; i++) ((float *)out)[i] /= (float)size;
    else
        for (int64_t i = 0; i < n; i++) ((double *)out)[i] /= (double)size;
}

int cpu_dist(const OpCall *c, Tensor **out) {
    Tensor *tmp;
    ScalarBox box;
    const Tensor *t = operand_as(&c->in[0], (DType)c->in[0].dtype, &tmp, &box);
    if (!t || cpu_dist_agree(c, t)) {
        tensor_release(tmp);
        return -1;
    }
    size_t nbytes = (size_t)t->size * dtype_size(t->dtype);
    int rc = 0, size = dist_size();
    if (c->op == OP_ALLGATHER) {
        rc = dist_allgather(t->data, out[0]->data, nbytes);
    } else if (c->op == OP_BROADCAST) {
        memcpy(out[0]->data, t->data, nbytes);
        rc = dist_bcast(out[0]->data, nbytes, (int)c->at->i[0]);
    } else {   /* in chunks: a small gather buffer that stays in cache, reused */
        size_t esize = dtype_size(t->dtype), step = CHUNK_BYTES / esize * esize;
        char *parts = mem_alloc((nbytes < step ? nbytes : step) * (size_t)size + 1);
        for (size_t off = 0; rc == 0 && off < nbytes; off += step) {
            size_t len = nbytes - off < step ? nbytes - off : step;
            rc = dist_allgather((const char *)t->data + off, parts, len);
            if (rc == 0)
                combine(t->dtype, (RedOp)c->at->i[0], parts, size, (int64_t)(len / esize), (char *)out[0]->data + off);
        }
        mem_free(parts);
    }
    tensor_release(tmp);
    return rc;
}
