/* vm_dev.c - a GPU graph's state between runs (vm_impl.h's VmDev): one arena laid out from
 * the memory plan, the constants on the device, staging copies of inputs, and the capture
 * segments' records. The device executor (exec_dev.c) runs the graph through it.
 *
 * The arena: every tensor register an instruction writes (all but constants and results
 * whose shape depends on the data) gets a region at a fixed offset of one allocation, so
 * each run writes the same addresses, which is what lets a captured CUDA Graph be replayed.
 * Registers that share a slot of the memory plan (opt.c: lives that do not overlap, same
 * dtype and shape) share a region. Sharing a region is safe because nothing else keeps an
 * arena address across a write: a value that leaves the graph is copied (vm_dev_owns), a
 * tmove copies into its destination's region, a view's elements are copied into its own
 * region, and an op whose region overlaps an operand computes elsewhere and is copied in.
 * On the CPU (TSL_VM_DEVICE=1) the same arena is host memory, so all of this is exercised
 * without a GPU. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vm_impl.h"
#include "mem.h"
#include "opt.h"

#define ARENA_ALIGN 256                      /* cudaMalloc's alignment: every kernel's vector loads */
#define ARENA_MAX ((int64_t)1 << 32)         /* beyond this a graph runs without an arena */
#define ESCAPE_COPY_MAX ((int64_t)1 << 20)   /* bytes of a leaving value copied out of the arena */

static int64_t reg_bytes(const RegInfo *ri) {
    int64_t n = shape_count(&ri->shape);
    if (n < 0) return -1;
    int64_t b = n * (int64_t)dtype_size(ri->dtype);
    return b ? (b + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN : ARENA_ALIGN;
}

/* Whether register reg gets a region: a tensor some instruction writes, with a known shape. */
static void mark_written(const Graph *g, bool *w) {
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        switch (in->op) {
        case I_OP:
            if (op_info[in->aux].flags & F_DYNAMIC) break;
            for (int k = 0; k < in->nres; k++)
                if (in->res[k] >= 0) w[in->res[k]] = true;
            break;
        case I_FUSED: case I_EPILOGUE:
            w[in->dst] = true;
            if (in->op == I_EPILOGUE && in->c >= 0) w[in->c] = true;
            for (int k = 0; k < in->nsteps; k++)
                if (in->steps[k].dst < 0) w[-in->steps[k].dst - 1] = true;
            break;
        case I_SCALAR: case I_TMOVE: case I_INDEX: case I_INDEX_SET: w[in->dst] = true; break;
        case I_SELECT:
            if (g->regs[in->dst].kind == R_TENSOR) w[in->dst] = true;
            break;
        case I_POP:
            if (in->dst >= 0 && g->regs[in->dst].kind == R_TENSOR) w[in->dst] = true;
            break;
        default: break;
        }
    }
}

/* Registers whose values leave the graph (outputs, the result, prints, stores, pushes). */
static void mark_opnd(const Opnd *o, bool *esc) {
    if (o->kind == OPND_TENSOR) esc[o->reg] = true;
    if (o->kind == OPND_LIST || o->kind == OPND_DICT)
        for (int i = 0; i < o->n; i++) mark_opnd(&o->items[i], esc);
}

static void mark_escaping(const Graph *g, bool *esc) {
    for (int i = 0; i < g->noutputs; i++) mark_opnd(&g->outputs[i].val, esc);
    if (g->has_result) mark_opnd(&g->result, esc);
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        for (int k = 0; k < in->nopnds; k++) mark_opnd(&in->opnds[k], esc);
        if (in->op == I_PUSH && g->regs[in->a].kind == R_TENSOR) esc[in->a] = true;
    }
}

/* A tensor of register ri's dtype and shape over the arena's buffer at offset off. */
static Tensor *region_tensor(Tensor *mem, const RegInfo *ri, int64_t off) {
    Tensor *t = mem_alloc(sizeof(Tensor));
    memset(t, 0, sizeof *t);
    tensor_init(t, ri->dtype, &ri->shape, shape_count(&ri->shape), mem->buf);
    mem->buf->rc++;
    t->data = (char *)mem->data + off;
    return t;
}

/* Lays out and allocates the arena: 0, or -1 when the graph runs without one. */
static int arena_make(VmDev *d, const Graph *g) {
    int n = g->nregs;
    bool *w = mem_calloc((size_t)n + 1, sizeof(bool)), *esc = mem_calloc((size_t)n + 1, sizeof(bool));
    mark_written(g, w);
    mark_escaping(g, esc);
    int *slot_region = mem_alloc(sizeof(int) * ((size_t)g->nslots + 1));
    for (int s = 0; s < g->nslots; s++) slot_region[s] = -1;
    int64_t *off = mem_alloc(sizeof(int64_t) * ((size_t)n + 1));
    int *owner = mem_alloc(sizeof(int) * ((size_t)n + 1));   /* a register of each region */
    int64_t total = 0;
    for (int r = 0; r < n; r++) {
        const RegInfo *ri = &g->regs[r];
        /* a run-time shape (SHAPE_RT) has no fixed size: its values are the ops' own tensors */
        int64_t b = ri->kind == R_TENSOR && w[r] && !shape_is_runtime(&ri->shape) ? reg_bytes(ri) : -1;
        /* a large value that leaves the graph is handed over in a buffer of its own rather
         * than copied out of the arena every run (the copy would cost more than a launch
         * saves); a segment that writes it is then not captured */
        if (b < 0 || (esc[r] && b > ESCAPE_COPY_MAX)) continue;
        if (ri->slot >= 0 && ri->slot < g->nslots && slot_region[ri->slot] >= 0) {
            d->region_of[r] = slot_region[ri->slot];
            continue;
        }
        int k = d->nregions++;
        off[k] = total;
        owner[k] = r;
        total += b;
        d->region_of[r] = k;
        if (ri->slot >= 0 && ri->slot < g->nslots) slot_region[ri->slot] = k;
    }
    int rc = -1;
    if (d->nregions && total <= ARENA_MAX) {
        Shape s = { .ndim = 1, .d = { total } };
        const DeviceImpl *dev = op_device(d->device);
        d->mem = dev && dev->alloc ? dev->alloc(DT_BOOL, &s) : tensor_new(DT_BOOL, &s);
        if (d->mem) {
            d->region = mem_alloc(sizeof(Tensor *) * (size_t)d->nregions);
            for (int k = 0; k < d->nregions; k++) d->region[k] = region_tensor(d->mem, &g->regs[owner[k]], off[k]);
            rc = 0;
        }   /* else no room for an arena: the graph allocates per op as before */
    }
    mem_free(w);
    mem_free(esc);
    mem_free(slot_region);
    mem_free(off);
    mem_free(owner);
    return rc;
}

VmDev *vm_dev_get(Interp *I, Graph *g) {
    if (g->dev) return g->dev->off ? NULL : g->dev;
    VmDev *d = mem_calloc(1, sizeof(VmDev));
    g->dev = d;
    const char *e = getenv("TSL_EXPLAIN");
    d->explain = e && *e && strcmp(e, "0");
    d->device = g->device;
    int n = g->nregs;
    d->region_of = mem_alloc(sizeof(int) * ((size_t)n + 1));
    for (int r = 0; r < n; r++) d->region_of[r] = -1;
    d->stage = mem_calloc((size_t)n + 1, sizeof(Tensor *));
    d->input_at = mem_calloc((size_t)n + 1, sizeof(void *));
    d->nconsts = g->nconsts;
    d->dconst = mem_calloc((size_t)g->nconsts + 1, sizeof(Tensor *));
    d->staged = mem_alloc(sizeof(int) * ((size_t)n + 1));
    d->stage_next = mem_calloc((size_t)n + 1, sizeof(bool));
    if (arena_make(d, g)) {
        d->off = true;
        if (g->ncode)
            vm_dev_explain(I, d, &g->code[0], "%s", d->nregions ? "this graph runs without an arena (too large, or no device memory for one): no capture"
                                                                : "no register of this graph needs a place in an arena (its results leave it in buffers of their own): no capture");
        return NULL;
    }
    d->nseg = vm_dev_segments(g, &d->seg);
    d->seg_at = mem_alloc(sizeof(int) * ((size_t)g->ncode + 1));
    for (int i = 0; i <= g->ncode; i++) d->seg_at[i] = -1;
    for (int s = 0; s < d->nseg; s++) d->seg_at[d->seg[s].begin] = s;
    d->cap = mem_calloc((size_t)d->nseg + 1, sizeof(VmCapture));
    if (d->explain) {   /* why kernels stay outside every segment */
        for (int i = 0, s = 0; i < g->ncode; i++) {
            while (s < d->nseg && d->seg[s].end <= i) s++;
            Ins *in = &g->code[i];
            bool inside = s < d->nseg && d->seg[s].begin <= i;
            if (!inside && (in->op == I_OP || in->op == I_FUSED || in->op == I_EPILOGUE))
                vm_dev_explain(I, d, in, "%s is not captured: %s", ins_name(in->op), vm_seg_refuses(g, in) ? vm_seg_refuses(g, in) : "no device work around it");
        }
    }
    return d;
}

void vm_capture_drop(VmDev *d, VmCapture *c) {
    if (c->graph) device_impl(d->device)->graph_free(c->graph);   /* only a device with graphs makes one */
    c->graph = NULL;
    mem_free(c->num);
    mem_free(c->ten);
    c->num = NULL;
    c->ten = NULL;
    c->nnum = c->nten = 0;
}

void vm_dev_free(VmDev *d, int nregs) {
    if (!d) return;
    for (int s = 0; s < d->nseg; s++) vm_capture_drop(d, &d->cap[s]);
    mem_free(d->cap);
    mem_free(d->seg);
    mem_free(d->seg_at);
    for (int k = 0; k < d->nregions; k++) tensor_release(d->region[k]);
    mem_free(d->region);
    tensor_release(d->mem);
    for (int r = 0; r < nregs; r++) tensor_release(d->stage[r]);
    mem_free(d->stage);
    mem_free(d->staged);
    mem_free(d->stage_next);
    for (int k = 0; k < d->nconsts; k++) tensor_release(d->dconst[k]);
    mem_free(d->dconst);
    mem_free(d->region_of);
    mem_free(d->input_at);
    mem_free(d);
}

Tensor *vm_dev_region(VmDev *d, int reg) {
    int k = reg >= 0 ? d->region_of[reg] : -1;
    return k >= 0 ? d->region[k] : NULL;
}

bool vm_dev_owns(const VmDev *d, const Tensor *t) {
    if (!d || !t) return false;
    if (d->mem && t->buf == d->mem->buf) return true;
    for (int k = 0; k < d->nstaged; k++)   /* a staging copy, or a view of one */
        if (t->buf == d->stage[d->staged[k]]->buf) return true;
    return false;
}

static bool same_type(const Tensor *a, const Tensor *b) {
    if (a->dtype != b->dtype || a->ndim != b->ndim) return false;
    for (int k = 0; k < a->ndim; k++)
        if (a->shape[k] != b->shape[k]) return false;
    return true;
}

int vm_dev_copy(Tensor *dst, const Tensor *src) {
    size_t bytes = (size_t)src->size * dtype_size(src->dtype);
    if (!bytes || dst->data == src->data) return 0;
    if (dst->device == DEV_CPU && src->device == DEV_CPU) {
        memmove(dst->data, src->data, bytes);
        return 0;
    }
    if (dst->device != src->device) {
        op_failk(ERRK_DEVICE, "internal error: a register's value is on another device than its region");
        return -1;
    }
    return device_impl(dst->device)->copy_into(dst, src);
}

Tensor *vm_dev_place(VmDev *d, int reg, Tensor *t) {
    Tensor *home = t ? vm_dev_region(d, reg) : NULL;
    if (!home || home == t) return t;
    if (!same_type(home, t)) {
        d->misfit = true;   /* a shape the plan did not know (a capture then fails) */
        return t;
    }
    int rc = vm_dev_copy(home, t);
    tensor_release(t);
    return rc ? NULL : tensor_retain(home);
}

void vm_explain_va(Interp *I, const Ins *in, const char *fmt, va_list ap) {
    char msg[600];
    vsnprintf(msg, sizeof msg, fmt, ap);
    interp_diag_at(I, "explain: ", in->src, in->loc, "", msg);
}

void vm_dev_explain(Interp *I, const VmDev *d, const Ins *in, const char *fmt, ...) {
    if (!d->explain) return;
    va_list ap;
    va_start(ap, fmt);
    vm_explain_va(I, in, fmt, ap);
    va_end(ap);
}
