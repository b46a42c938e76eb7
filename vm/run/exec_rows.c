/* exec_rows.c - a row group (vm/opt/opt.h's opt_row_group) on the CPU: its steps over a band
 * of whole rows at a time, so a layernorm's or a softmax's rows are read from memory once and
 * only the results that leave the group are written.
 *
 * The steps fall into phases: a run of elementwise steps over the group's shape [..., C], a run
 * of elementwise steps over one value per row, or one reduction. For each band of rows every
 * phase runs in order: an elementwise phase as a fused chain over the band (ops/cpu/chain.h,
 * the kernels a fused group calls, a value per row and a row vector expanded as there), a
 * reduction by reduce.c's row kernel on each row of the band (cpu_reduce_row, what eager calls
 * on the same values). A temporary that a later phase reads lives in a band buffer of the
 * running thread; one read within its phase only is the chain's block temporary. Bands are
 * independent, so parts of whole bands go to the thread pool (the same bits for any count).
 * Once the group is hot, the native tier (jit.h's jit_phases) runs each elementwise phase as
 * one generated loop, row by row, with the chain's values in registers (the same bits: chain.h,
 * jit.c); the reductions stay the row kernel's. */
#include <string.h>
#include "vm_impl.h"
#include "exec_cpu.h"
#include "jit.h"
#include "mem.h"
#include "opt.h"
#include "pool.h"
#include "cpu/chain.h"
#include "cpu/cpu.h"

/* Elements of a band, at least (whole rows): 16 KB of f32 per band buffer. Measured on
 * layernorm [256, 1024] (fastest of 5 processes, 2 pool threads on one core): bands of 1,024,
 * 2,048, 4,096 and 8,192 elements took 0.131, 0.125, 0.123 and 0.124 ms in the VM and 0.108,
 * 0.108 and 0.105 ms (no 8,192) native: a smaller band pays its per-band work more often than
 * its buffers' staying in L1 saves. */
#define ROW_BAND 4096

typedef enum { PH_FULL, PH_ROW, PH_REDUCE } PhaseKind;
typedef struct {
    PhaseKind kind;
    int first, n;   /* steps [first, first + n) */
    int src;        /* PH_REDUCE: what it reduces (a step, or a register -(r+1)) */
    bool square;    /* PH_REDUCE: the squares of src (fold_squares) */
} Phase;

/* How a step reads an outside register: every element, a row vector, or a value per row. */
typedef enum { RA_FULL, RA_ROWVEC, RA_PERROW } RegArg;

typedef struct {
    Ins *in;   /* not const: the native tier counts its runs there */
    VmRegs *r;
    DType dt;
    size_t esz;
    int64_t R, C, band, part_rows;
    Phase *ph;
    int nph, nbuf, max_n;
    int *buf_of;      /* step -> its temporary's band buffer, -1: none (a chain temporary, a register) */
    uint8_t *lay;     /* step k's operand q: RegArg, at 2k + q */
    double *num;      /* step k's number in the group's dtype */
    JitFusedFn *native;   /* phase -> its native loop (jit.h), NULL: the chain */
    const JitAnyFn *api;
    char *slots;      /* per pool slot, `area` bytes: band buffers, chain temporaries, chain steps
                       * and how they move (steps_at), a row for the row kernel (tmp_at), the
                       * native loop's operands (ptrs_at) */
    size_t area, bufs_bytes, steps_at, tmp_at, ptrs_at;
} RowRun;

static PhaseKind step_kind(const Graph *g, const Ins *in, const FusedStep *st) {
    if (op_info[st->op].kind == K_REDUCE) return PH_REDUCE;
    return st->dst >= 0 || shape_equal(&g->regs[-st->dst - 1].shape, &in->shape) ? PH_FULL : PH_ROW;
}

/* An operand x of a step of phase p, for rows [r0, r0 + nb), into *a; *adv: the bytes its data
 * moves by for each row further (0: it stays). */
static void row_arg(const RowRun *e, const Phase *p, int k, int q, int x, int64_t r0, int64_t nb, char *slot, ChainArg *a,
                    int64_t *adv) {
    int64_t len = p->kind == PH_FULL ? nb * e->C : nb;
    a->dtype = e->dt;
    a->temp = -1;
    a->row = e->C;
    *adv = 0;
    if (x >= 0 && e->buf_of[x] < 0) {
        a->kind = CHAIN_TEMP;
        a->temp = x - p->first;
        return;
    }
    a->kind = CHAIN_ARRAY;
    a->n = len;
    if (x >= 0) {
        a->data = slot + (size_t)e->buf_of[x] * (size_t)(e->band * e->C) * e->esz;
        return;
    }
    const char *d = e->r->ten[-x - 1]->data;
    switch ((RegArg)e->lay[2 * k + q]) {
    case RA_FULL: a->data = d + (size_t)(r0 * e->C) * e->esz; *adv = e->C * (int64_t)e->esz; return;
    case RA_ROWVEC: a->kind = CHAIN_ROW; a->data = d; a->n = e->C; return;
    case RA_PERROW:
        a->data = d + (size_t)r0 * e->esz;
        *adv = (int64_t)e->esz;
        if (p->kind == PH_FULL) a->kind = CHAIN_COL, a->n = nb;
        return;
    }
}

/* The chain steps of elementwise phase p for the band at r0 of nb rows (the part's first, its
 * longest), checked; adv[3i..3i+2]: how its step i's operands and result move per row. */
static int chain_build(const RowRun *e, const Phase *p, int64_t r0, int64_t nb, char *slot, ChainStep *cs, int64_t *adv) {
    int64_t len = p->kind == PH_FULL ? nb * e->C : nb;
    for (int i = 0; i < p->n; i++) {
        int k = p->first + i;
        const FusedStep *st = &e->in->steps[k];
        ChainStep *c = &cs[i];
        int64_t *m = adv + 3 * i;
        c->op = st->op;
        c->out_dtype = e->dt;
        c->out_n = len;
        c->out = NULL;
        c->temp = -1;
        m[1] = m[2] = 0;
        if (st->dst >= 0 && e->buf_of[st->dst] < 0) c->temp = i;
        else if (st->dst >= 0) c->out = slot + (size_t)e->buf_of[st->dst] * (size_t)(e->band * e->C) * e->esz;
        else {
            int64_t row = (p->kind == PH_FULL ? e->C : 1) * (int64_t)e->esz;
            c->out = e->r->ten[-st->dst - 1]->data + (size_t)(r0 * row);
            m[2] = row;
        }
        row_arg(e, p, k, 0, st->a, r0, nb, slot, &c->in[0], &m[0]);
        c->nin = st->b == FUSED_NONE && st->scalar_reg < 0 ? 1 : 2;
        if (st->scalar_reg < 0) {
            if (c->nin == 2) row_arg(e, p, k, 1, st->b, r0, nb, slot, &c->in[1], &m[1]);
            continue;
        }
        ChainArg *x = &c->in[st->num_left ? 0 : 1];
        if (st->num_left) c->in[1] = c->in[0], m[1] = m[0];
        *x = (ChainArg){ CHAIN_SCALAR, -1, &e->num[k], e->dt, 1, e->C };
        m[st->num_left ? 0 : 1] = 0;
    }
    if (len > chain_block(e->dt)) cpu_chain_plan(cs, p->n);
    else
        for (int i = 0; i < p->n; i++) cs[i].pair_next = cs[i].fetch_next = false;
    return cpu_chain_check(cs, p->n, e->dt, 0, len);
}

/* The steps' operands and results `rows` rows further on (those that move: a temporary's
 * data is NULL, a unary's second operand unset). */
static void chain_advance(ChainStep *cs, int n, const int64_t *adv, int64_t rows) {
    for (int i = 0; i < n; i++) {
        if (adv[3 * i]) cs[i].in[0].data = (const char *)cs[i].in[0].data + adv[3 * i] * rows;
        if (adv[3 * i + 1]) cs[i].in[1].data = (const char *)cs[i].in[1].data + adv[3 * i + 1] * rows;
        if (adv[3 * i + 2]) cs[i].out = (char *)cs[i].out + adv[3 * i + 2] * rows;
    }
}

/* A reduction of each row of [r0, r0 + nb) into its register. */
static int run_reduce(const RowRun *e, const Phase *p, int64_t r0, int64_t nb, char *slot) {
    const FusedStep *st = &e->in->steps[p->first];
    size_t row = (size_t)e->C * e->esz;
    const char *src = p->src >= 0 ? slot + (size_t)e->buf_of[p->src] * (size_t)e->band * row
                                  : e->r->ten[-p->src - 1]->data + (size_t)r0 * row;
    char *out = e->r->ten[-st->dst - 1]->data, *tmp = slot + e->tmp_at;
    for (int64_t q = 0; q < nb; q++) {
        double v = p->square ? cpu_reduce_row_sq(st->op, e->dt, src + q * row, e->C)
                             : cpu_reduce_row(st->op, e->dt, src + q * row, e->C, tmp);
        if (e->dt == DT_F32) ((float *)out)[r0 + q] = (float)v;
        else ((double *)out)[r0 + q] = v;
    }
    return 0;
}

/* Operand g of a chain step built for a band (chain_build), for row q of the band as the
 * native loop over that row reads it: an array's row, a row vector whole, a value per row as
 * the row's number. */
static const void *row_ptr(const ChainArg *g, int64_t q, size_t row, size_t esz) {
    switch (g->kind) {
    case CHAIN_ARRAY: return (const char *)g->data + (size_t)q * row;
    case CHAIN_COL: return (const char *)g->data + (size_t)q * esz;
    case CHAIN_ROW: case CHAIN_SCALAR: return g->data;
    default: return NULL;
    }
}

/* Elementwise phase ph of a band of nb rows through its native loop, on the chain steps built
 * for the band: over [..., C] row by row, over one value per row at once. p: 3n pointers. */
static int native_phase(const RowRun *e, const Phase *ph, const ChainStep *cs, int64_t nb, const void **p) {
    JitFusedFn fn = e->native[ph - e->ph];
    int n = ph->n;
    bool full = ph->kind == PH_FULL;
    size_t row = full ? (size_t)e->C * e->esz : 0;
    for (int64_t q = 0; q < (full ? nb : 1); q++) {
        for (int k = 0; k < n; k++) {
            p[2 * k] = row_ptr(&cs[k].in[0], q, row, e->esz);
            p[2 * k + 1] = cs[k].nin == 2 ? row_ptr(&cs[k].in[1], q, row, e->esz) : NULL;
            p[2 * n + k] = cs[k].temp < 0 ? (char *)cs[k].out + (size_t)q * row : NULL;
        }
        int rc = fn(p, 0, full ? e->C : nb, e->api);
        if (rc) return rc;
    }
    return 0;
}

/* Part `part`: its rows band by band, every phase of a band before the next band. The chain
 * steps are built and checked once, for the first band, and move along. */
static int rows_part(void *ud, int64_t part, int slot) {
    const RowRun *e = ud;
    int n = e->in->nsteps;
    char *s = e->slots + (size_t)slot * e->area;
    ChainStep *cs = (ChainStep *)(s + e->steps_at);
    int64_t *adv = (int64_t *)(cs + n);
    int64_t begin = part * e->part_rows, end = begin + e->part_rows < e->R ? begin + e->part_rows : e->R;
    int64_t nb0 = end - begin < e->band ? end - begin : e->band;
    for (int p = 0; p < e->nph; p++)
        if (e->ph[p].kind != PH_REDUCE && e->ph[p].n &&
            chain_build(e, &e->ph[p], begin, nb0, s, cs + e->ph[p].first, adv + 3 * e->ph[p].first))
            return -1;
    for (int64_t r0 = begin; r0 < end; r0 += e->band) {
        int64_t nb = end - r0 < e->band ? end - r0 : e->band;
        for (int p = 0; p < e->nph; p++) {
            const Phase *ph = &e->ph[p];
            if (ph->kind == PH_REDUCE) {
                run_reduce(e, ph, r0, nb, s);
                continue;
            }
            if (!ph->n) continue;   /* its one step folded into the reduction after it */
            ChainStep *c = cs + ph->first;
            if (r0 > begin) chain_advance(c, ph->n, adv + 3 * ph->first, e->band);
            int rc = e->native[p] ? native_phase(e, ph, c, nb, (const void **)(s + e->ptrs_at))
                                  : cpu_chain_blocks(c, ph->n, e->dt, 0, ph->kind == PH_FULL ? nb * e->C : nb, s + e->bufs_bytes);
            if (rc) return rc;
        }
    }
    return 0;
}

/* A sum or mean of the rows of s = mul(a, a), the last step of the phase before it, that no
 * other step reads (layernorm's mean(d * d)): the reduction sums a's squares itself
 * (cpu_reduce_row_sq, the same products in the same order) and the phase ends before s, so
 * the squares are never stored and read back. */
static void fold_squares(const Ins *in, RowRun *e) {
    for (int p = 1; p < e->nph; p++) {
        Phase *r = &e->ph[p], *f = &e->ph[p - 1];
        const FusedStep *st = &in->steps[r->first];
        int k = f->first + f->n - 1;
        const FusedStep *m = &in->steps[k];
        if (r->kind != PH_REDUCE || f->kind != PH_FULL || (st->op != OP_SUM && st->op != OP_MEAN) || st->a != k ||
            m->op != OP_MUL || m->scalar_reg >= 0 || m->b != m->a || m->dst != k)
            continue;
        bool others = false;
        for (int j = k + 1; j < in->nsteps; j++)
            others |= j != r->first && (in->steps[j].a == k || (in->steps[j].scalar_reg < 0 && in->steps[j].b == k));
        if (others) continue;
        f->n--;
        r->src = m->a;
        r->square = true;
    }
}

/* The phases, which temporaries need band buffers, how each register operand is read; false
 * when a register does not hold what the group was compiled for. */
static bool rows_plan(const Graph *g, RowRun *e, int *phase_of) {
    const Ins *in = e->in;
    Shape gr = in->shape;
    gr.d[gr.ndim - 1] = 1;
    for (int k = 0; k < in->nsteps; k++) {
        PhaseKind kind = step_kind(g, in, &in->steps[k]);
        if (e->nph == 0 || kind == PH_REDUCE || e->ph[e->nph - 1].kind != kind)
            e->ph[e->nph++] = (Phase){ kind, k, 0, in->steps[k].a, false };
        e->ph[e->nph - 1].n++;
        phase_of[k] = e->nph - 1;
        e->buf_of[k] = -1;
        if (e->ph[e->nph - 1].n > e->max_n) e->max_n = e->ph[e->nph - 1].n;
    }
    fold_squares(in, e);
    for (int k = 0; k < in->nsteps; k++) {
        const FusedStep *st = &in->steps[k];
        const Phase *ph = &e->ph[phase_of[k]];
        if (k >= ph->first + ph->n) continue;   /* folded into the reduction after it */
        int x[2] = { ph->kind == PH_REDUCE ? ph->src : st->a, st->scalar_reg < 0 ? st->b : FUSED_NONE };
        for (int q = 0; q < 2; q++) {
            if (x[q] == FUSED_NONE) continue;
            if (x[q] >= 0) {   /* a temporary a later phase reads: a band buffer */
                if (x[q] >= k || in->steps[x[q]].dst != x[q]) return false;
                if (phase_of[x[q]] != phase_of[k] && e->buf_of[x[q]] < 0) e->buf_of[x[q]] = e->nbuf++;
                continue;
            }
            const RegInfo *ri = &g->regs[-x[q] - 1];
            const Tensor *t = e->r->ten[-x[q] - 1];
            FusedLayout l = opt_fused_layout(&ri->shape, &in->shape);
            e->lay[2 * k + q] = (uint8_t)(l == FUSED_ROW ? RA_ROWVEC : l == FUSED_FULL && shape_count(&ri->shape) == e->R * e->C ? RA_FULL : RA_PERROW);
            int64_t want = e->lay[2 * k + q] == RA_FULL ? e->R * e->C : e->lay[2 * k + q] == RA_ROWVEC ? e->C : e->R;
            if (!t || t->dtype != e->dt || t->size != want) return false;
        }
        if (st->dst < 0) {
            const Tensor *t = e->r->ten[-st->dst - 1];
            if (!t || t->dtype != e->dt || t->size != (step_kind(g, in, st) == PH_FULL ? e->R * e->C : e->R)) return false;
        }
        if (st->scalar_reg >= 0) {
            if (e->dt == DT_F32) *(float *)&e->num[k] = (float)e->r->num[st->scalar_reg];
            else e->num[k] = e->r->num[st->scalar_reg];
        }
    }
    return true;
}

/* The native tier's loops of the elementwise phases into e->native (left NULL while the VM
 * runs them). When the tier wants their steps, they are built for a first band in slot 0 (each
 * part builds its own again) and given to it as a fused group's: a row vector as an array of
 * the row, a value per row as a number. -1 when the steps do not fit (the error set). */
static int rows_native(Interp *I, RowRun *e) {
    JitFusedFn fns[JIT_PHASES];
    ChainStep *csp[JIT_PHASES];
    int ns[JIT_PHASES], nel = 0;
    for (int p = 0; p < e->nph; p++) nel += e->ph[p].kind != PH_REDUCE && e->ph[p].n;
    bool ask;
    if (nel == 0 || nel > JIT_PHASES || (e->dt != DT_F32 && e->dt != DT_F64)) return 0;
    if (!jit_phases_ready(I, e->in, fns, nel, &ask)) {
        if (!ask) return 0;
        ChainStep *cs = (ChainStep *)(e->slots + e->steps_at);
        int64_t *adv = (int64_t *)(cs + e->in->nsteps), nb = e->R < e->band ? e->R : e->band;
        for (int p = 0, i = 0; p < e->nph; p++) {
            const Phase *ph = &e->ph[p];
            if (ph->kind == PH_REDUCE || !ph->n) continue;
            if (chain_build(e, ph, 0, nb, e->slots, cs + ph->first, adv + 3 * ph->first)) return -1;
            for (int k = ph->first; k < ph->first + ph->n; k++)
                for (int q = 0; q < cs[k].nin; q++)
                    if (cs[k].in[q].kind == CHAIN_ROW) cs[k].in[q].kind = CHAIN_ARRAY;
                    else if (cs[k].in[q].kind == CHAIN_COL) cs[k].in[q].kind = CHAIN_SCALAR;
            csp[i] = cs + ph->first;
            ns[i++] = ph->n;
        }
        if (!jit_phases(I, e->in, csp, ns, nel, e->dt, fns)) return 0;
    }
    for (int p = 0, i = 0; p < e->nph; p++) e->native[p] = e->ph[p].kind == PH_REDUCE || !e->ph[p].n ? NULL : fns[i++];
    e->api = jit_api(e->dt);
    return 0;
}

int vm_cpu_rows(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    for (int k = 0; k < in->nsteps; k++)
        if (in->steps[k].dst < 0 && !vm_cpu_dst(g, r, -in->steps[k].dst - 1)) return vm_fail_at(I, in, op_error());
    int n = in->nsteps;
    RowRun e = { in, r, g->regs[in->dst].dtype, dtype_size(g->regs[in->dst].dtype), 0, 0, 0, 0, NULL, 0, 0, 0,
                 NULL, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0 };
    e.C = in->shape.d[in->shape.ndim - 1];
    e.R = shape_count(&in->shape) / e.C;
    e.band = e.C >= ROW_BAND ? 1 : ROW_BAND / e.C;
    e.part_rows = e.band * (e.band * e.C >= POOL_BLOCK ? 1 : POOL_BLOCK / (e.band * e.C));
    int64_t parts = pool_parts(e.R, e.part_rows);
    int width = pool_width(parts, e.R * e.C * n);
    /* the plan (numbers, native loops, phases, step -> phase, band buffers, operands), then each
     * slot's area */
    size_t head = sizeof(Phase) * (size_t)n + 2 * sizeof(int) * (size_t)n + 2 * (size_t)n + sizeof(double) * (size_t)n +
                  sizeof(JitFusedFn) * (size_t)n;
    size_t band_bytes = (size_t)(e.band * e.C) * e.esz, worst = band_bytes * (size_t)n + (size_t)n * CHAIN_BYTES +
                        (size_t)n * (sizeof(ChainStep) + 3 * sizeof(int64_t)) + sizeof(double) * (size_t)(e.C + 1) +
                        3 * sizeof(void *) * (size_t)n;
    worst = (worst + 63 + 64) & ~(size_t)63;   /* + 64: steps_at's alignment below */
    vm_cpu_scratch(r, head + 64 + worst * (size_t)width);
    char *p = r->scratch->p;
    e.num = (double *)p;
    e.native = (JitFusedFn *)(e.num + n);
    e.ph = (Phase *)(e.native + n);
    int *phase_of = (int *)(e.ph + n);
    e.buf_of = phase_of + n;
    e.lay = (uint8_t *)(e.buf_of + n);
    if (!rows_plan(g, &e, phase_of)) return vm_fail_at(I, in, "internal error: a row group's registers do not fit it");
    e.bufs_bytes = band_bytes * (size_t)e.nbuf;
    /* the chain steps hold pointers: 64-byte aligned (a band of an odd f32 row count is not) */
    e.steps_at = (e.bufs_bytes + (size_t)e.max_n * CHAIN_BYTES + 63) & ~(size_t)63;
    e.tmp_at = e.steps_at + (size_t)n * (sizeof(ChainStep) + 3 * sizeof(int64_t));
    e.ptrs_at = (e.tmp_at + sizeof(double) * (size_t)(e.C + 1) + 7) & ~(size_t)7;
    e.area = (e.ptrs_at + 3 * sizeof(void *) * (size_t)n + 63) & ~(size_t)63;
    e.slots = (char *)(((uintptr_t)(p + head) + 63) & ~(uintptr_t)63);
    memset(e.native, 0, sizeof(JitFusedFn) * (size_t)n);
    if (rows_native(I, &e)) return vm_fail_at(I, in, op_error());
    if (pool_run(parts, width, rows_part, &e)) return vm_fail_at(I, in, op_error());
    return 0;
}
