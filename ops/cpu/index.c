/* index.c - NumPy indexing: integers, slices, ellipsis, new axes, i64 gather arrays and bool masks.
 *
 * An index is planned into "iteration dims": each is a slice of one source axis
 * (size, stride) or the single block of advanced (array) indices, whose broadcast
 * shape B is walked flat with a precomputed table of source offsets. Integers (and 0-d
 * i64 tensors) fix an axis; when there are index arrays they also count as 0-d advanced
 * indices for placement: the block sits where the advanced indices are when they are
 * adjacent as written, else first (see make_plan). Gather and scatter (index_set) share
 * the plan: both walk the same list of source offsets. A new axis (`nil`) is a result axis
 * of length 1 and no iteration dim: it changes the result's shape, never the walk. A large
 * gather runs in parts on the thread pool (copies: any partition gives the same result); a
 * scatter stays serial, since with repeated indices the last write must win. */
#include <string.h>
#include "cpu.h"
#include "mem.h"
#include "infer.h"
#include "pool.h"

typedef struct {
    int nd;                       /* iteration dims */
    int64_t size[TSL_MAX_RANK + 1], stride[TSL_MAX_RANK + 1];
    int adv_pos;                  /* which iteration dim is the advanced block, or -1 */
    int64_t *adv_off;             /* |B| source offsets; NULL when the result is empty */
    int64_t base;                 /* offset from integer indices and slice starts */
    Shape out;                    /* result shape */
} Plan;

static void plan_free(Plan *p) { mem_free(p->adv_off); }

static int64_t slice_count(int64_t len, const IndexItem *it, int64_t *start_out, int64_t *step_out) {
    int64_t step = it->step == INT64_MIN ? -INT64_MAX : it->step, start, stop;
    if (step > 0) {
        start = it->has_start ? it->start : 0;
        stop = it->has_stop ? it->stop : len;
        if (start < 0) start = start + len < 0 ? 0 : start + len;
        if (stop < 0) stop = stop + len < 0 ? 0 : stop + len;
        if (start > len) start = len;
        if (stop > len) stop = len;
        *start_out = start;
        *step_out = step;
        return slice_length(start, stop, step);
    }
    start = it->has_start ? it->start : len - 1;
    stop = it->has_stop ? it->stop : -1;
    if (it->has_start && start < 0) start = start + len < -1 ? -1 : start + len;
    if (it->has_stop && stop < 0) stop = stop + len < -1 ? -1 : stop + len;
    if (start > len - 1) start = len - 1;
    if (stop > len - 1) stop = len - 1;
    *start_out = start;
    *step_out = step;
    return slice_length(start, stop, step);
}

static int bad_index(int64_t i, int axis, int64_t len) {
    op_failk(ERRK_INDEX, "index %lld is out of bounds for axis %d with size %lld", (long long)i, axis, (long long)len);
    return -1;
}

/* Expands the user's items into one entry per source axis (masks become arrays). */
typedef struct {
    int kind;                /* IDX_INT, IDX_SLICE, IDX_TENSOR */
    int item;                /* which user item it came from; -1 for the axes an ellipsis or the end fills */
    bool from_mask;          /* an array made from a bool mask: in bounds by construction */
    IndexItem item_v;
    Tensor *arr;             /* i64 index array (owned) for IDX_TENSOR */
} AxisIdx;

/* `data`: index contents may be read (false when only the shape is wanted: infer_index).
 * newax[d] counts the new axes written before source axis d (d == ndim: after the last). */
static int expand_items(const Tensor *a, const IndexItem *idx, int n, AxisIdx *ax, int *newax, bool data) {
    int consumed = 0, ellipsis = -1;
    for (int k = 0; k < n; k++) {
        if (idx[k].kind == IDX_NEWAXIS) continue;   /* takes no axis: not counted as NumPy's None */
        if (idx[k].kind == IDX_ELLIPSIS) {
            if (ellipsis >= 0) { op_failk(ERRK_INDEX, "an index can only have a single ellipsis ('...')"); return -1; }
            ellipsis = k;
        } else if (idx[k].kind == IDX_TENSOR && idx[k].t->dtype == DT_BOOL) {
            consumed += idx[k].t->ndim;
        } else {
            consumed++;
        }
    }
    if (consumed > a->ndim) {
        op_failk(ERRK_INDEX, "too many indices for tensor: tensor is %d-dimensional, but %d were indexed", a->ndim, consumed);
        return -1;
    }
    int d = 0;
    for (int k = 0; k <= n; k++) {
        if (k == n || idx[k].kind == IDX_ELLIPSIS) {
            int fill = k == n ? (ellipsis >= 0 ? 0 : a->ndim - d) : a->ndim - consumed;
            for (int j = 0; j < fill; j++, d++) {
                memset(&ax[d], 0, sizeof ax[d]);
                ax[d].kind = IDX_SLICE;
                ax[d].item = -1;
                ax[d].item_v.kind = IDX_SLICE;
                ax[d].item_v.step = 1;
            }
            continue;
        }
        if (idx[k].kind == IDX_NEWAXIS) {
            newax[d]++;
            continue;
        }
        const IndexItem *it = &idx[k];
        if (it->kind == IDX_TENSOR && it->t->dtype == DT_BOOL) {
            const Tensor *m = it->t;
            /* NumPy checks only the mask's nonzero sizes: a size-0 mask dimension selects
             * nothing from an axis of any size (np.zeros(3)[np.array([], bool)] has shape (0,)) */
            for (int j = 0; j < m->ndim; j++)
                if (m->shape[j] != 0 && m->shape[j] != a->shape[d + j]) {
                    op_failk(ERRK_INDEX, "boolean index did not match the indexed tensor along axis %d: size %lld vs %lld", d + j,
                            (long long)a->shape[d + j], (long long)m->shape[j]);
                    return -1;
                }
            int64_t cnt = 0;
            const uint8_t *mv = m->data;
            for (int64_t i = 0; i < m->size; i++) cnt += mv[i] != 0;
            Shape s = { 1, { cnt } };
            for (int j = 0; j < m->ndim; j++) {
                memset(&ax[d + j], 0, sizeof ax[d + j]);
                ax[d + j].kind = IDX_TENSOR;
                ax[d + j].item = k;
                ax[d + j].from_mask = true;
                if (!(ax[d + j].arr = tensor_new(DT_I64, &s))) return -1;
            }
            int64_t pos = 0;
            for (int64_t i = 0; i < m->size; i++) {
                if (!mv[i]) continue;
                int64_t rem = i;
                for (int j = m->ndim - 1; j >= 0; j--) {
                    ((int64_t *)ax[d + j].arr->data)[pos] = rem % m->shape[j];
                    rem /= m->shape[j];
                }
                pos++;
            }
            d += m->ndim;
            continue;
        }
        memset(&ax[d], 0, sizeof ax[d]);
        ax[d].kind = it->kind;
        ax[d].item = k;
        ax[d].item_v = *it;
        if (it->kind == IDX_TENSOR) {
            if (it->t->dtype != DT_I64) {
                op_failk(ERRK_TYPE, "tensors used as indices must be i64 or bool, not %s%s", dtype_name(it->t->dtype),
                        dtype_is_float(it->t->dtype) ? " (convert with astype(t, \"i64\"))" : "");
                return -1;
            }
            if (it->t->ndim == 0) {
                /* a 0-d integer tensor is an integer index (NumPy): always bounds-checked */
                ax[d].kind = IDX_INT;
                ax[d].item_v.kind = IDX_INT;
                ax[d].item_v.t = NULL;
                ax[d].item_v.i = data ? ((const int64_t *)it->t->data)[0] : 0;
                ax[d].item_v.at_run_time = !data;
            } else {
                ax[d].arr = tensor_retain((Tensor *)it->t);
            }
        }
        d++;
    }
    return 0;
}

/* Appends a result axis of length len to the plan's shape. */
static int out_axis(Plan *p, int64_t len) {
    if (p->out.ndim >= TSL_MAX_RANK) {
        op_fail("indexing result would exceed rank %d", TSL_MAX_RANK);
        return -1;
    }
    p->out.d[p->out.ndim++] = len;
    return 0;
}

/* The block of advanced indices (broadcast shape B, nb points) as the next iteration dim. */
static int place_block(Plan *p, const Shape *B, int64_t nb) {
    p->adv_pos = p->nd;
    p->size[p->nd] = nb;
    p->stride[p->nd++] = 0;
    for (int j = 0; j < B->ndim; j++)
        if (out_axis(p, B->d[j])) return -1;
    return 0;
}

/* Plans an index. `data` false: only p->out is wanted (no offsets, and no bounds checks
 * but those of integers known without data: see infer_index).
 *
 * NumPy's rules: index arrays (i64 tensors, masks as their nonzero() arrays) and, when
 * there is at least one, the integers too (as 0-d arrays) form the advanced indices; they
 * broadcast together to a shape B. When they are adjacent in the index as written, B
 * replaces them in place; when a slice or an ellipsis stands between two of them (even an
 * ellipsis that expands to no axes), B goes first. Errors come in NumPy's order: the
 * index's structure, then integers and slice steps as written, then the arrays' shapes,
 * then the arrays' entries, which are all checked unless B is empty (NumPy does not look
 * at them then), even when slices make the result empty. A new axis counts as a slice for
 * adjacency (x[i, nil, j] puts B first) and otherwise sits where it is written: before the
 * block when written before the advanced indices, after it when written after them. */
/* axis_of: the axis of the user's tensor each axis of a stands for, in messages (NULL: the same) */
static int make_plan_(const Tensor *a, const IndexItem *idx, int n, Plan *p, bool data, const int *axis_of) {
    AxisIdx ax[TSL_MAX_RANK];
    int newax[TSL_MAX_RANK + 1] = { 0 };
    memset(p, 0, sizeof *p);
    memset(ax, 0, sizeof ax);
    p->adv_pos = -1;
    int rc = -1;
    bool unchecked = false;   /* an integer passed that only the run can check */
    if (expand_items(a, idx, n, ax, newax, data)) goto out;
    int64_t stride[TSL_MAX_RANK], s = 1;
    for (int d = a->ndim - 1; d >= 0; d--) { stride[d] = s; s *= a->shape[d]; }
    int narr = 0;
    for (int d = 0; d < a->ndim; d++) narr += ax[d].kind == IDX_TENSOR;
    /* integers and slice steps, in the order written */
    for (int d = 0; d < a->ndim; d++) {
        if (ax[d].kind == IDX_SLICE && ax[d].item_v.step == 0) { op_fail("slice step cannot be zero"); goto out; }
        if (ax[d].kind != IDX_INT) continue;
        int64_t len = a->shape[d], i = ax[d].item_v.i;
        if (!data && ax[d].item_v.at_run_time) { unchecked = true; continue; }
        if (i < 0) i += len;
        if (i < 0 || i >= len) { bad_index(ax[d].item_v.i, axis_of ? axis_of[d] : d, len); goto out; }
        p->base += i * stride[d];
    }
    /* adjacency of the advanced indices, judged on the items as written */
    int first_item = -1, last_item = -1, first_adv = -1;
    for (int d = 0; narr && d < a->ndim; d++) {
        if (ax[d].kind == IDX_SLICE) continue;
        if (first_adv < 0) first_adv = d;
        if (first_item < 0) first_item = ax[d].item;
        last_item = ax[d].item;
    }
    bool adjacent = true;
    for (int k = first_item + 1; narr && k < last_item; k++)
        if (idx[k].kind == IDX_SLICE || idx[k].kind == IDX_ELLIPSIS || idx[k].kind == IDX_NEWAXIS) adjacent = false;
    /* the broadcast shape B of the index arrays */
    Shape B = { 0, { 0 } };
    for (int d = 0; d < a->ndim; d++) {
        if (ax[d].kind != IDX_TENSOR) continue;
        Shape sa, nb_;
        shape_of(ax[d].arr, &sa);
        if (shape_broadcast(&B, &sa, &nb_, "indexing")) {   /* into a copy: out must not alias B */
            op_failk(ERRK_INDEX, "shape mismatch: indexing arrays could not be broadcast together");
            goto out;
        }
        B = nb_;
    }
    int64_t nb = 1;
    if (narr && (nb = shape_count(&B)) < 0) goto out;
    /* the arrays' entries: every one is checked unless B is empty */
    for (int d = 0; data && nb > 0 && d < a->ndim; d++) {
        if (ax[d].kind != IDX_TENSOR || ax[d].from_mask) continue;
        const int64_t *iv = ax[d].arr->data;
        int64_t len = a->shape[d];
        for (int64_t k = 0; k < ax[d].arr->size; k++)
            if (iv[k] < -len || iv[k] >= len) { bad_index(iv[k], axis_of ? axis_of[d] : d, len); goto out; }
    }
    /* iteration dims and the result shape */
    bool empty = narr && nb == 0;
    for (int d = 0; d <= a->ndim; d++) {
        if (narr && !adjacent && d == 0 && place_block(p, &B, nb)) goto out;
        for (int j = 0; j < newax[d]; j++)
            if (out_axis(p, 1)) goto out;
        if (narr && adjacent && d == first_adv && place_block(p, &B, nb)) goto out;
        if (d == a->ndim) break;
        if (ax[d].kind != IDX_SLICE) continue;
        int64_t start, step, cnt = slice_count(a->shape[d], &ax[d].item_v, &start, &step);
        p->base += cnt ? start * stride[d] : 0;
        p->size[p->nd] = cnt;
        /* with two or more elements |step| < len, so step * stride stays inside the tensor;
         * with one or none the stride is never applied (and a huge step would overflow it) */
        p->stride[p->nd++] = cnt > 1 ? step * stride[d] : 0;
        if (out_axis(p, cnt)) goto out;
        empty |= cnt == 0;
    }
    /* the source offset of every point of B (not needed when nothing is read or written) */
    if (data && narr && !empty) {
        if (!(p->adv_off = mem_try_alloc(sizeof(int64_t) * (size_t)nb))) { op_failk(ERRK_MEMORY, "out of memory"); goto out; }
        memset(p->adv_off, 0, sizeof(int64_t) * (size_t)nb);
        for (int d = 0; d < a->ndim; d++) {
            if (ax[d].kind != IDX_TENSOR) continue;
            const Tensor *t = ax[d].arr;
            const int64_t *iv = t->data;
            int64_t len = a->shape[d], bst[TSL_MAX_RANK], cnt[TSL_MAX_RANK], pos = 0, es = 1;
            /* t's strides over B: right-aligned, 0 where t has size 1 */
            for (int j = B.ndim - 1; j >= 0; j--) {
                int tj = j - (B.ndim - t->ndim);
                bst[j] = tj >= 0 && t->shape[tj] != 1 ? es : 0;
                if (tj >= 0) es *= t->shape[tj];
                cnt[j] = 0;
            }
            for (int64_t b = 0; b < nb; b++) {
                int64_t i = iv[pos] < 0 ? iv[pos] + len : iv[pos];
                p->adv_off[b] += i * stride[d];
                for (int j = B.ndim - 1; j >= 0; j--) {
                    pos += bst[j];
                    if (++cnt[j] < B.d[j]) break;
                    pos -= bst[j] * B.d[j];
                    cnt[j] = 0;
                }
            }
        }
    }
    rc = 0;
out:
    for (int d = 0; d < TSL_MAX_RANK; d++) tensor_release(ax[d].arr);
    if (rc) plan_free(p);
    /* an error found after an integer only the run can check may not be the index's */
    return rc && unchecked ? INFER_INDEX_UNDECIDED : rc;
}

static bool is_bool0(const IndexItem *it) { return it->kind == IDX_TENSOR && it->t->dtype == DT_BOOL && it->t->ndim == 0; }

/* A 0-d bool index (NumPy's x[True], x[x > 0] on a 0-d x) is an advanced index of shape [1]
 * (true) or [0] (false) on an axis of length 1 it inserts: the plan is made for a view of a
 * with those axes (the same offsets, as the axes have length 1) and i64 arrays [0] or []. */
static int make_plan(const Tensor *a, const IndexItem *idx, int n, Plan *p, bool data) {
    int nb0 = 0, consumed = 0;
    for (int k = 0; k < n; k++) {
        nb0 += is_bool0(&idx[k]);
        if (idx[k].kind == IDX_TENSOR && idx[k].t->dtype == DT_BOOL) consumed += idx[k].t->ndim;
        else if (idx[k].kind != IDX_NEWAXIS && idx[k].kind != IDX_ELLIPSIS) consumed++;
    }
    if (!nb0 || !data || consumed > a->ndim || n > TSL_MAX_RANK + 8) return make_plan_(a, idx, n, p, data, NULL);
    if (a->ndim + nb0 > TSL_MAX_RANK) { op_fail("indexing result would exceed rank %d", TSL_MAX_RANK); return -1; }
    IndexItem items[TSL_MAX_RANK + 8];
    Tensor va = *a, *arr[2] = { NULL, NULL };   /* the i64 arrays standing for true, false */
    int d = 0, vd = 0, rc = -1, axis_of[TSL_MAX_RANK];
    for (int k = 0; k < n; k++) {
        items[k] = idx[k];
        int take = idx[k].kind == IDX_NEWAXIS ? 0 : idx[k].kind == IDX_ELLIPSIS ? a->ndim - consumed
                 : idx[k].kind == IDX_TENSOR && idx[k].t->dtype == DT_BOOL ? idx[k].t->ndim : 1;
        if (is_bool0(&idx[k])) {
            int v = *(const uint8_t *)idx[k].t->data ? 0 : 1;
            Shape s = { 1, { 1 - v } };
            if (!arr[v] && !(arr[v] = tensor_new(DT_I64, &s))) goto out;
            if (!v) *(int64_t *)arr[v]->data = 0;
            items[k].t = arr[v];
            axis_of[vd] = d;
            va.shape[vd++] = 1;
        }
        for (int j = 0; j < take; j++, d++) axis_of[vd] = d, va.shape[vd++] = a->shape[d];
    }
    for (; d < a->ndim; d++) axis_of[vd] = d, va.shape[vd++] = a->shape[d];
    va.ndim = vd;
    rc = make_plan_(&va, items, n, p, data, axis_of);
out:
    tensor_release(arr[0]);
    tensor_release(arr[1]);
    return rc;
}

/* Runs BODY (k, src: the source element's offset) for total result elements k in order,
 * from the iteration dims' index start (NULL: all 0; p->base its offset). */
#define PLAN_WALK(p, start, total, BODY)                                            \
    do {                                                                            \
        int64_t ix_[TSL_MAX_RANK + 1] = { 0 }, off_ = (p)->base;                    \
        const int64_t *from_ = (start);                                             \
        if (from_) memcpy(ix_, from_, sizeof ix_);                                  \
        for (int64_t k = 0; k < (total); k++) {                                     \
            int64_t src = off_ + ((p)->adv_pos >= 0 ? (p)->adv_off[ix_[(p)->adv_pos]] : 0); \
            BODY;                                                                   \
            for (int d_ = (p)->nd - 1; d_ >= 0; d_--) {                             \
                ix_[d_]++;                                                          \
                off_ += (p)->stride[d_];                                            \
                if (ix_[d_] < (p)->size[d_]) break;                                 \
                off_ -= (p)->stride[d_] * (p)->size[d_];                            \
                ix_[d_] = 0;                                                        \
            }                                                                       \
        }                                                                           \
    } while (0)

/* Result elements [k0, k0 + n) of a gather: PLAN_WALK from k0's place in the iteration dims. */
static void gather_range(const Tensor *a, const Plan *p, Tensor *r, int64_t k0, int64_t n) {
    size_t esz = dtype_size(a->dtype);
    char *out = (char *)r->data + k0 * (int64_t)esz;
    const char *in = a->data;
    Plan q = *p;
    int64_t rest = k0, start[TSL_MAX_RANK + 1] = { 0 };
    for (int d = q.nd - 1; d >= 0; d--) {   /* k0's index in each iteration dim */
        start[d] = q.size[d] ? rest % q.size[d] : 0;
        rest = q.size[d] ? rest / q.size[d] : 0;
        q.base += start[d] * q.stride[d];
    }
    if (esz == 4) PLAN_WALK(&q, start, n, ((int32_t *)out)[k] = ((const int32_t *)in)[src]);
    else if (esz == 8) PLAN_WALK(&q, start, n, ((int64_t *)out)[k] = ((const int64_t *)in)[src]);
    else PLAN_WALK(&q, start, n, out[k] = in[src]);
}

typedef struct {
    const Tensor *a;
    const Plan *p;
    Tensor *r;
} Gather;

static int gather_part(void *ud, int64_t part, int slot) {
    (void)slot;
    Gather *g = ud;
    int64_t k0 = part * POOL_BLOCK, n = g->r->size - k0 < POOL_BLOCK ? g->r->size - k0 : POOL_BLOCK;
    gather_range(g->a, g->p, g->r, k0, n);
    return 0;
}

/* A large gather copies parts of POOL_BLOCK result elements on the thread pool: each element
 * is a copy, so any partition gives the same result. */
static void gather(const Tensor *a, Plan *p, Tensor *r) {
    int64_t parts = pool_parts(r->size, POOL_BLOCK);
    int width = pool_width(parts, r->size);
    if (width < 2) {
        gather_range(a, p, r, 0, r->size);
        return;
    }
    Gather g = { a, p, r };
    pool_run(parts, width, gather_part, &g);
}

/* Integers on the leading axes (t[i], t[i, j], ...) select one contiguous block: a single
 * copy, no plan. Returns 1 when it handled the index, 0 when the general path must, -1 on a
 * bad index. */
static int index_int_prefix(const Tensor *a, const IndexItem *idx, int n, Tensor *out) {
    if (n > a->ndim) return 0;
    for (int k = 0; k < n; k++)
        if (idx[k].kind != IDX_INT) return 0;
    int64_t off = 0, block = 1;
    for (int d = a->ndim - 1; d >= n; d--) block *= a->shape[d];
    for (int d = 0; d < n; d++) {   /* in the order written: the first bad one is the error */
        int64_t i = idx[d].i < 0 ? idx[d].i + a->shape[d] : idx[d].i;
        if (i < 0 || i >= a->shape[d]) return bad_index(idx[d].i, d, a->shape[d]);
        off = off * a->shape[d] + i;
    }
    off *= block;
    size_t esz = dtype_size(a->dtype);
    memcpy(out->data, (const char *)a->data + off * (int64_t)esz, (size_t)block * esz);
    return 1;
}

/* `out` has the result's dtype and shape and is not a. */
int op_index_into(const Tensor *a, const IndexItem *idx, int n, Tensor *out) {
    int fast = index_int_prefix(a, idx, n, out);
    if (fast) return fast < 0 ? -1 : 0;
    Plan p;
    if (make_plan(a, idx, n, &p, true)) return -1;
    gather(a, &p, out);
    plan_free(&p);
    return 0;
}

Tensor *op_index_positions(const Tensor *a, const IndexItem *idx, int n) {
    Plan p;
    if (make_plan(a, idx, n, &p, true)) return NULL;
    Tensor *r = tensor_new(DT_I64, &p.out);
    if (r) {
        int64_t *o = r->data;
        PLAN_WALK(&p, NULL, r->size, o[k] = src);
    }
    plan_free(&p);
    return r;
}

Tensor *op_index(const Tensor *a, const IndexItem *idx, int n) {
    Plan p;
    if (make_plan(a, idx, n, &p, true)) return NULL;
    Tensor *r = tensor_new(a->dtype, &p.out);
    if (r) gather(a, &p, r);
    plan_free(&p);
    return r;
}

Tensor *op_index_set(const Tensor *a, const IndexItem *idx, int n, const Tensor *v) {
    Plan p;
    if (make_plan(a, idx, n, &p, true)) return NULL;
    Tensor *r = NULL, *cv = NULL, *bv = NULL;
    Shape sv, st;
    shape_of(v, &sv);
    st = shape_assigned_value(&sv, p.out.ndim);
    if (!(cv = v->dtype == a->dtype ? tensor_retain((Tensor *)v) : op_astype(v, a->dtype))) goto out;
    if (st.ndim < sv.ndim) {    /* leading axes of length 1 dropped: the same elements */
        Tensor *sq = tensor_view(cv, &st);
        tensor_release(cv);
        if (!(cv = sq)) goto out;
    }
    if (!(bv = op_broadcast_to(cv, &p.out))) {
        char b1[600], b2[600];
        op_failk(ERRK_SHAPE, "cannot assign a value of shape %s to an index of shape %s", shape_str(&sv, b1, sizeof b1),
                shape_str(&p.out, b2, sizeof b2));
        goto out;
    }
    if (!(r = tensor_copy(a))) goto out;
    size_t esz = dtype_size(a->dtype);
    char *dst = r->data;
    const char *src_v = bv->data;
    int64_t total = bv->size;
    PLAN_WALK(&p, NULL, total, memcpy(dst + src * (int64_t)esz, src_v + k * (int64_t)esz, esz));
out:
    tensor_release(cv);
    tensor_release(bv);
    plan_free(&p);
    return r;
}

/* The result shape of an index, without data: integer values and index-array contents do
 * not change it, so the plan is made without reading the arrays; it checks what it can in
 * make_plan's order (the known integers' bounds among them), and the run checks the rest
 * with the real values. A bool mask's result size depends on its data, so it has none. */
int infer_index(const Shape *s, const IndexItem *idx, int n, Shape *out) {
    Tensor a;
    memset(&a, 0, sizeof a);
    a.ndim = s->ndim;
    memcpy(a.shape, s->d, sizeof(int64_t) * (size_t)s->ndim);
    if (n > TSL_MAX_RANK + 8) { op_failk(ERRK_INDEX, "too many indices"); return -1; }
    for (int k = 0; k < n; k++)
        if (idx[k].kind == IDX_TENSOR && idx[k].t->dtype == DT_BOOL) {
            op_failk(ERRK_INDEX, "indexing with a bool mask has a data-dependent shape");
            return -1;
        }
    Plan p;
    int rc = make_plan(&a, idx, n, &p, false);
    /* a number known only at run time is made an integer when the index runs, before any
     * check here: if it is not one, that is the error */
    for (int k = 0; rc && k < n; k++)
        if (idx[k].kind == IDX_INT && idx[k].at_run_time) rc = INFER_INDEX_UNDECIDED;
    if (rc) return rc;
    *out = p.out;
    plan_free(&p);
    return 0;
}
