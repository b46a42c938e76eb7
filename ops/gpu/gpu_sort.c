/* gpu_sort.c - the GPU's ordering ops and pad: sort, argsort and topk (the plugin sorts
 * (key, position) pairs with a bitonic network; the pair order is total, so the result is
 * the CPU's stable order, ties in input order), unique (the sorted row compacted, its
 * length read back: the result's size is data) and pad (the CPU's fill-value rules, then
 * one kernel). See gpu.c, ops/gpu/cuda/sort.c and ops/cpu/axis.c, the reference. */
#include <string.h>
#include "gpu_impl.h"
#include "cpu/cpu.h"

/* The power of two >= n (at least 1), or -1 when the scratch it sizes could not be
 * addressed (16 bytes per pair). */
static int64_t pow2_at_least(int64_t n) {
    int64_t p = 1;
    while (p < n) {
        if (p > (INT64_MAX >> 6)) return -1;
        p <<= 1;
    }
    return p;
}

/* Scratch of count 8-byte elements on the GPU, from the caching allocator. */
static void *scratch_alloc(int64_t count) {
    char err[400];
    void *p = NULL;
    if (count < 0 || count > (INT64_MAX >> 4)) {
        op_failk(ERRK_DEVICE, "the GPU's sort scratch would be too large");
        return NULL;
    }
    return GPU_CALL(alloc, &p, (size_t)count * 8) ? NULL : p;
}

static void scratch_free(void *p, int64_t count) {
    if (p) gpu_cu->free(p, (size_t)count * 8);
}

/* sort, argsort: every line in order (descending: the complemented keys); topk: the first
 * k of every line in descending order (ties: the lower position first, as the CPU). */
int gpu_run_sort(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    int ax = c->at->axis < 0 ? c->at->axis + t->ndim : c->at->axis;
    int64_t outer = 1, len = t->shape[ax], inner = 1;
    for (int d = 0; d < ax; d++) outer *= t->shape[d];
    for (int d = ax + 1; d < t->ndim; d++) inner *= t->shape[d];
    bool topk = c->op == OP_TOPK, arg = c->op == OP_ARGSORT;
    int64_t kout = topk ? c->at->i[0] : len;
    if (kout == 0 || len == 0 || outer * inner == 0) return 0;
    int64_t P = pow2_at_least(len), rows = outer * inner;
    if (P < 0 || rows > (INT64_MAX >> 4) / P) {
        op_failk(ERRK_DEVICE, "%s(): too large for the GPU's sort", op_info[c->op].name);
        return -1;
    }
    void *key = scratch_alloc(rows * P), *pos = key ? scratch_alloc(rows * P) : NULL;
    char err[400];
    int rc = pos ? GPU_CALL(sort, t->dtype, t->data, outer, len, inner, topk || c->at->flag, kout,
                            arg ? NULL : out[0]->data, arg ? out[0]->data : topk ? out[1]->data : NULL, key, pos, P)
                 : -1;
    scratch_free(pos, rows * P);
    scratch_free(key, rows * P);
    return rc;
}

/* unique: sorted distinct values of the flattened t into a scratch tensor of t's size,
 * then the first m of them into the result (allocated here: F_DYNAMIC). */
int gpu_run_unique(const OpCall *c, Tensor **out) {
    const Tensor *t = c->in[0].t;
    int64_t n = t->size, P = pow2_at_least(n), m = 0;
    if (P < 0) {
        op_failk(ERRK_DEVICE, "unique(): too large for the GPU's sort");
        return -1;
    }
    Shape all = { 1, { n } };
    Tensor *tmp = gpu_alloc(t->dtype, &all);
    void *key = tmp ? scratch_alloc(P) : NULL, *pos = key ? scratch_alloc(P) : NULL;
    void *rank = pos ? scratch_alloc(P) : NULL;
    char err[400];
    int rc = rank ? GPU_CALL(unique, t->dtype, t->data, n, tmp->data, &m, key, pos, rank, P) : -1;
    scratch_free(rank, P);
    scratch_free(pos, P);
    scratch_free(key, P);
    Shape rs = { 1, { m } };
    if (rc == 0 && !(out[0] = gpu_alloc(t->dtype, &rs))) rc = -1;
    if (rc == 0 && m > 0 && GPU_CALL(copy, out[0]->data, tmp->data, (size_t)m * dtype_size(t->dtype))) {
        tensor_release(out[0]);
        out[0] = NULL;
        rc = -1;
    }
    tensor_release(tmp);
    return rc;
}

/* pad: the fill value as the CPU converts it (a GPU tensor value is read on the host),
 * then every output element in one kernel. */
int gpu_run_pad(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    OpArg in[2] = { c->in[0], c->nin > 1 ? c->in[1] : (OpArg){ .kind = ARG_NONE } };
    Tensor *hv = in[1].kind == ARG_TENSOR ? tensor_host(in[1].t) : NULL;
    if (in[1].kind == ARG_TENSOR && !hv) return -1;
    if (hv) in[1].t = hv;
    OpCall hc = *c;
    hc.in = in;
    hc.nin = 2;
    unsigned char v[8] = { 0 };
    int rc = cpu_pad_value(&hc, t->dtype, v);
    tensor_release(hv);
    if (rc) return -1;
    int64_t before[TSL_MAX_RANK], ishape[TSL_MAX_RANK], oshape[TSL_MAX_RANK];
    for (int d = 0; d < t->ndim; d++) {
        before[d] = c->at->pairs[c->at->npairs == 1 ? 0 : d][0];
        ishape[d] = t->shape[d];
        oshape[d] = out->shape[d];
    }
    char err[400];
    return GPU_CALL(pad, (int)dtype_size(t->dtype), t->ndim, oshape, ishape, before, v, t->data, out->data, out->size);
}
