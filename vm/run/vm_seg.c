/* vm_seg.c - capture segments, a property of the device executor (exec_dev.c): the runs of
 * a graph's instructions that only launch device work, each recorded once (a CUDA Graph on
 * the GPU) and replayed after.
 *
 * A segment is a maximal run of instructions none of which needs the host while the device
 * works (no item, no branch on a tensor, no print, no host-side indexing, no kernel whose
 * errors the host reads back after a sync), that no jump enters in the middle and that
 * launches at least one kernel. Control flow ends a segment (a loop body may be one: it is
 * replayed once per iteration). The only number instruction a segment keeps is nconst: a
 * number computed from others (nbin, nmove...) may change what a captured kernel receives
 * by value, so it runs on the host and the segment after it checks the number it reads.
 * Where the segments are is a pure function of the graph (vm_dev_segments, tested in
 * tests/unit/test_vm_dev.c). A segment runs op by op (vm_run_range: the one loop) on runs 1
 * and 2, is captured on run 3 (on the CPU a stand-in records the same things) and replayed
 * after, when what it reads is what it captured. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "vm_impl.h"
#include "mem.h"
#include "opt.h"

/* Whether a tensor instruction computes in i64: integer kernels raise a flag the host reads
 * after a sync (floor_divide, mod and pow by zero or a negative power, astype to i64). */
static bool touches_i64(const Graph *g, const Ins *in) {
    for (int k = 0; k < in->nres && k < OP_MAX_OUT; k++)
        if (in->res[k] >= 0 && g->regs[in->res[k]].kind == R_TENSOR && g->regs[in->res[k]].dtype == DT_I64) return true;
    if (in->dst >= 0 && g->regs[in->dst].kind == R_TENSOR && g->regs[in->dst].dtype == DT_I64) return true;
    for (int k = 0; k < in->nargs; k++) {
        int r = in->args[k];
        if (r >= 0 && g->regs[r].kind == R_TENSOR && g->regs[r].dtype == DT_I64) return true;
    }
    for (int k = 0; k < in->nsteps; k++) {
        const FusedStep *st = &in->steps[k];
        int regs[3] = { st->a, st->b, st->dst };
        for (int q = 0; q < 3; q++)
            if (regs[q] < 0 && regs[q] != FUSED_NONE && regs[q] != EPI_PRODUCT && g->regs[-regs[q] - 1].dtype == DT_I64)
                return true;
    }
    return false;
}

/* Whether an operand of the instruction is a number (a register, not a tensor). */
static bool has_number_arg(const Graph *g, const Ins *in) {
    for (int k = 0; k < in->nargs; k++)
        if (in->args[k] >= 0 && g->regs[in->args[k]].kind == R_NUM) return true;
    return false;
}

/* The GPU row's supports_op (ops/gpu/gpu.c): an op other than an elementwise one whose first operand is
 * not a tensor (clip of a number...) is made by the CPU and its result copied to the device. */
static bool made_on_host(const Graph *g, const Ins *in) {
    int kind = op_info[(OpCode)in->aux].kind;
    if (kind == K_UNARY || kind == K_BINARY || kind == K_COMPARE) return false;
    return in->nargs < 1 || in->args[0] < 0 || g->regs[in->args[0]].kind != R_TENSOR;
}

static const char *op_refuses(const Graph *g, const Ins *in) {
    OpCode op = (OpCode)in->aux;
    int fl = op_info[op].flags;
    if (fl & F_RANDOM) return "a random draw takes the host's generator state by value";
    if (fl & F_COLL) return "a collective waits for the other ranks";
    if (fl & F_DYNAMIC) return "its result's shape depends on the data";
    if (fl & F_ITEM) return "its result is read on the host";
    if (fl & F_READBACK) return "its GPU kernel's outcome (a range check, cuSOLVER's info) is read back on the host";
    if ((OpCode)in->aux == OP_PAD)   /* the GPU's pad converts a tensor fill value on the host */
        for (int k = 1; k < in->nargs; k++)
            if (in->args[k] >= 0 && g->regs[in->args[k]].kind == R_TENSOR) return "pad's tensor fill value is read on the host";
    if (touches_i64(g, in)) return "an integer kernel's error flag is read back on the host";
    /* host copies in the GPU's host code (ops/gpu/: its shape and elementwise files), which CUDA refuses while
     * capturing: found by difftest.py --repeat on the stand-in's capture emulation */
    if (op == OP_ZEROS || op == OP_ONES || op == OP_FULL) return "its fill value is copied to the device from the host";
    if (op == OP_WHERE && has_number_arg(g, in)) return "where's number operand is copied to the device from the host";
    if (op == OP_EQUAL || op == OP_ALLCLOSE) return "equal and allclose compare on the host";
    if (made_on_host(g, in)) return "its first operand is not a tensor: the CPU makes it, copied to the device";
    return NULL;
}

const char *vm_seg_refuses(const Graph *g, const Ins *in) {
    switch (in->op) {
    case I_NCONST: case I_TCONST: case I_TMOVE: return NULL;
    case I_OP: return in->rt ? "a shape known only at run time" : op_refuses(g, in);
    case I_FUSED: case I_EPILOGUE:
        return touches_i64(g, in) ? "an integer kernel's error flag is read back on the host" : NULL;
    case I_NMOVE: case I_NBIN: case I_NNEG: case I_NNOT: case I_NMATH:
        return "a number computed on the host";
    case I_SCALAR: return "a number becomes a tensor through a host copy";
    case I_INDEX: case I_INDEX_SET: return "indexing runs on the host";
    case I_SELECT: return "a run-time list index chooses a register on the host";
    case I_ROWSET: return "a tensor list's row is chosen on the host";
    case I_ITEM: return "item() reads the device";
    case I_DIM: return "a run-time shape's size is read on the host";
    case I_TRUTH: return "a branch on a tensor reads the device";
    case I_JUMP: case I_JUMPF: return "control flow";
    case I_PRINT: return "print runs on the host";
    case I_ASSERT: return "assert runs on the host";
    case I_STORE: return "a store into a container runs on the host";
    case I_PUSH: case I_POP: return "a backward loop's stack lives on the host";
    case I_SEED: return "seed() sets the host's generator";
    default: return "an instruction the capture does not know";
    }
}

static bool launches(const Ins *in) { return in->op == I_OP || in->op == I_FUSED || in->op == I_EPILOGUE; }

int vm_dev_segments(const Graph *g, VmSeg **out) {
    *out = NULL;
    bool *target = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    for (int i = 0; i < g->ncode; i++)
        if ((g->code[i].op == I_JUMP || g->code[i].op == I_JUMPF) && g->code[i].aux >= 0 && g->code[i].aux <= g->ncode)
            target[g->code[i].aux] = true;
    int n = 0, cap = 0;
    VmSeg *seg = NULL;
    int begin = -1, work = 0;
    for (int i = 0; i <= g->ncode; i++) {
        bool ok = i < g->ncode && !vm_seg_refuses(g, &g->code[i]);
        if (begin >= 0 && (!ok || target[i])) {   /* the run ends before i */
            if (work) {
                GROW(seg, n, cap);
                seg[n++] = (VmSeg){ begin, i };
            }
            begin = -1;
        }
        if (!ok) continue;
        if (begin < 0) begin = i, work = 0;
        work += launches(&g->code[i]);
    }
    mem_free(target);
    *out = seg;
    return n;
}

/* ---------- capture and replay ---------- */

/* What an instruction of a segment reads and writes: fn(ud, reg, what) for each register. */
enum { READ_T, READ_N, WRITE_T, WRITE_N };
typedef void (*RegVisit)(void *ud, int reg, int what);

static void visit_step_operand(int x, RegVisit fn, void *ud) {
    if (x < 0 && x != FUSED_NONE && x != EPI_PRODUCT) fn(ud, -x - 1, READ_T);
}

static void visit_regs(const Graph *g, const Ins *in, RegVisit fn, void *ud) {
    switch (in->op) {
    case I_NCONST: fn(ud, in->dst, WRITE_N); return;
    case I_TCONST: fn(ud, in->dst, WRITE_T); return;
    case I_TMOVE: fn(ud, in->a, READ_T); fn(ud, in->dst, WRITE_T); return;
    case I_OP:
        for (int k = 0; k < in->nargs; k++)
            if (in->args[k] >= 0) fn(ud, in->args[k], g->regs[in->args[k]].kind == R_NUM ? READ_N : READ_T);
        for (int k = 0; k < in->nres; k++)
            if (in->res[k] >= 0) fn(ud, in->res[k], WRITE_T);
        return;
    case I_EPILOGUE: fn(ud, in->a, READ_T); fn(ud, in->b, READ_T); /* fall through */
    case I_FUSED:
        for (int k = 0; k < in->nsteps; k++) {
            const FusedStep *st = &in->steps[k];
            visit_step_operand(st->a, fn, ud);
            visit_step_operand(st->b, fn, ud);
            if (st->scalar_reg >= 0) fn(ud, st->scalar_reg, READ_N);
            if (st->dst < 0) fn(ud, -st->dst - 1, WRITE_T);
        }
        fn(ud, in->dst, WRITE_T);
        if (in->op == I_EPILOGUE && in->c >= 0) fn(ud, in->c, WRITE_T);
        return;
    default: return;
    }
}

/* The capture run's bookkeeping: what the segment reads from outside itself (a register
 * read before the segment writes it), and whether every tensor it writes is in its region. */
typedef struct {
    VmDev *d;
    VmRegs *r;
    VmCapture *c;
    int *written;   /* per register: 1 once the segment wrote it, 2 once recorded as read */
    bool misplaced;
    bool validate;  /* after the run: check the writes */
    const Graph *g;
    int ins;        /* the instruction being visited (for TCONST) */
} Recorder;

static void record(void *ud, int reg, int what) {
    Recorder *rc = ud;
    VmCapture *c = rc->c;
    if (rc->validate) {   /* after the capture run: where each written tensor register ended up */
        if (what == WRITE_T) {
            const Ins *in = &rc->g->code[rc->ins];
            Tensor *want = in->op == I_TCONST ? rc->d->dconst[in->aux] : vm_dev_region(rc->d, reg);
            if (!want || rc->r->ten[reg] != want) rc->misplaced = true;
        }
        return;
    }
    if (what == WRITE_T || what == WRITE_N) {
        if (!rc->written[reg]) rc->written[reg] = 1;
        return;
    }
    if (rc->written[reg]) return;
    rc->written[reg] = 2;
    if (what == READ_N) {
        c->num = mem_realloc(c->num, sizeof(VmNumRead) * (size_t)(c->nnum + 1));
        c->num[c->nnum++] = (VmNumRead){ reg, rc->r->num[reg] };
    } else {
        c->ten = mem_realloc(c->ten, sizeof(VmTenRead) * (size_t)(c->nten + 1));
        c->ten[c->nten++] = (VmTenRead){ reg, rc->r->ten[reg] ? rc->r->ten[reg]->data : NULL };
    }
}

static bool is_input(const Graph *g, int reg) {
    for (int i = 0; i < g->nguards; i++)
        if (g->guards[i].reg == reg) return true;
    return false;
}

/* Why a captured segment cannot be replayed now (NULL: it can): a number a kernel received by
 * value, or the address of a tensor it read, is not what it was at capture. An input that
 * moved gets a staging copy from the next run on, and the graph is captured again then. */
static const char *replay_refuses(Graph *g, VmRegs *r, VmDev *d, VmCapture *c, char *why, size_t n) {
    for (int k = 0; k < c->nnum; k++)
        if (r->num[c->num[k].reg] != c->num[k].x && !(isnan(r->num[c->num[k].reg]) && isnan(c->num[k].x))) {
            snprintf(why, n, "a number its kernels take by value changed (%.17g, captured %.17g)", r->num[c->num[k].reg], c->num[k].x);
            return why;
        }
    for (int k = 0; k < c->nten; k++) {
        int reg = c->ten[k].reg;
        if (r->ten[reg] && r->ten[reg]->data == c->ten[k].p) continue;
        if (is_input(g, reg) && !d->stage[reg]) {
            d->stage_next[reg] = true;   /* staged from the next run (vm_seg_stage) */
            snprintf(why, n, "an input tensor moved: it is staged from the next run, which captures again");
        } else {
            snprintf(why, n, "a tensor it reads is not where the capture read it");
        }
        return why;
    }
    return NULL;
}

static void find_homeless(void *ud, int reg, int what) {
    void **p = ud;
    if (what == WRITE_T && !vm_dev_region(p[0], reg)) *(bool *)p[1] = true;
}

/* Captures segment s (its third run): on the GPU its launches become a CUDA Graph, then
 * launched; on the CPU (TSL_VM_DEVICE=1) the stand-in runs the instructions and records the
 * same things, so the bookkeeping is tested without a GPU. A capture that fails leaves the
 * segment uncaptured for good and the run goes on op by op: never a wrong result. */
static int capture(Interp *I, Graph *g, VmRegs *r, VmDev *d, int s) {
    VmSeg *sg = &d->seg[s];
    VmCapture *c = &d->cap[s];
    Ins *first = &g->code[sg->begin];
    const DeviceImpl *dev = device_impl(d->device);
    bool graphs = dev->capture_begin != NULL, homeless = false;   /* else the CPU's stand-in */
    void *ud[2] = { d, &homeless };
    for (int i = sg->begin; i < sg->end; i++)
        if (g->code[i].op != I_TCONST) visit_regs(g, &g->code[i], find_homeless, ud);
    if (homeless) {   /* known before trying: its writes would not be at the same address next run */
        c->state = CAP_NEVER;
        vm_dev_explain(I, d, first, "segment %d (instructions %d-%d) is not captured: it writes a large value that leaves "
                       "the graph (handed over in a buffer of its own, not copied out of the arena)", s, sg->begin, sg->end - 1);
        return vm_run_range(I, g, r, sg->begin, sg->end);
    }
    int n = g->nregs;
    double *num = NULL;
    Tensor **ten = NULL;
    if (graphs) {   /* nothing runs while capturing: on failure the host side is put back and rerun */
        num = mem_alloc(sizeof(double) * ((size_t)n + 1));
        ten = mem_alloc(sizeof(Tensor *) * ((size_t)n + 1));
        memcpy(num, r->num, sizeof(double) * (size_t)n);
        for (int k = 0; k < n; k++) ten[k] = r->ten[k] ? tensor_retain(r->ten[k]) : NULL;
    }
    Recorder rec = { d, r, c, mem_calloc((size_t)n + 1, sizeof(int)), false, false, g, 0 };
    d->misfit = false;
    const char *why = NULL;
    char msg[600] = "";
    bool began = false;
    if (graphs) {
        if (dev->capture_begin()) {
            snprintf(msg, sizeof msg, "%s", op_error());
            why = msg;
        } else {
            began = true;
        }
    }
    int rc = 0;
    for (int i = sg->begin; i < sg->end && !why; i++) {
        rec.ins = i;
        visit_regs(g, &g->code[i], record, &rec);
        if (vm_run_range(I, g, r, i, i + 1)) {
            rc = -1;
            snprintf(msg, sizeof msg, "%s", I->err_msg);
            why = msg;
        }
    }
    void *graph = NULL;
    if (began && dev->capture_end(&graph) && !why) {   /* every begin that succeeded is ended */
        snprintf(msg, sizeof msg, "%s", op_error());
        why = msg;
    }
    rec.validate = true;
    for (int i = sg->begin; i < sg->end && !why; i++) {
        rec.ins = i;
        visit_regs(g, &g->code[i], record, &rec);
    }
    if (!why && (rec.misplaced || d->misfit))
        why = "it writes a register without a place in the arena (a large value that leaves the graph, or a shape the plan did not know)";
    mem_free(rec.written);
    if (why) {
        c->state = CAP_NEVER;
        vm_capture_drop(d, c);
        if (graph) dev->graph_free(graph);
        if (!graphs) {   /* the stand-in ran for real: its error is the program's */
            if (rc) return -1;
            vm_dev_explain(I, d, first, "segment %d (instructions %d-%d) is not captured: %s", s, sg->begin, sg->end - 1, why);
            return 0;
        }
        if (rc) interp_clear_error(I);
        for (int k = 0; k < n; k++) vm_set_t(r, k, ten[k]);
        memcpy(r->num, num, sizeof(double) * (size_t)n);
        mem_free(num);
        mem_free(ten);
        vm_dev_explain(I, d, first, "segment %d (instructions %d-%d) is not captured: %s", s, sg->begin, sg->end - 1, why);
        return vm_run_range(I, g, r, sg->begin, sg->end);   /* for real: a real error reports at its line */
    }
    if (graphs) {
        for (int k = 0; k < n; k++) tensor_release(ten[k]);
        mem_free(num);
        mem_free(ten);
    }
    c->graph = graph;
    c->state = CAP_LIVE;
    d->captures++;
    vm_dev_explain(I, d, first, "segment %d (instructions %d-%d) captured%s after %d runs: replayed from now on", s,
                   sg->begin, sg->end - 1, graphs ? " as a CUDA Graph" : " (the CPU's stand-in)", d->runs);
    if (graphs && dev->graph_launch(graph)) return vm_fail_at(I, first, op_error());
    return 0;
}

/* A written tensor register := its region (what the captured instruction left there). */
static void place_writes(void *ud, int reg, int what) {
    void **p = ud;
    VmDev *d = p[0];
    VmRegs *r = p[1];
    if (what != WRITE_T) return;
    Tensor *home = vm_dev_region(d, reg);
    if (home && r->ten[reg] != home) vm_set_t(r, reg, tensor_retain(home));
}

/* A captured segment again. On the GPU the host only sets what the instructions would set
 * (numbers from nconst, constants, and each written register to its region) and launches the
 * graph. On the CPU the stand-in re-executes the instructions into the same regions, with the
 * numbers the capture baked in (the same, since replay_refuses checked them: if that check
 * were missing, the CPU tests would see the stale numbers a CUDA Graph would use). */
static int replay(Interp *I, Graph *g, VmRegs *r, VmDev *d, int s) {
    VmSeg *sg = &d->seg[s];
    VmCapture *c = &d->cap[s];
    const DeviceImpl *dev = device_impl(d->device);
    if (!dev->graph_launch) {
        for (int k = 0; k < c->nnum; k++) r->num[c->num[k].reg] = c->num[k].x;
        return vm_run_range(I, g, r, sg->begin, sg->end);
    }
    void *ud[2] = { d, r };
    for (int i = sg->begin; i < sg->end; i++) {
        Ins *in = &g->code[i];
        if (in->op == I_NCONST) r->num[in->dst] = in->imm;
        else if (in->op == I_TCONST) vm_set_t(r, in->dst, tensor_retain(d->dconst[in->aux]));
        else visit_regs(g, in, place_writes, ud);
    }
    return dev->graph_launch(c->graph) ? vm_fail_at(I, &g->code[sg->begin], op_error()) : 0;
}

int vm_seg_run(Interp *I, Graph *g, VmRegs *r, VmDev *d, int s) {
    VmSeg *sg = &d->seg[s];
    VmCapture *c = &d->cap[s];
    Ins *first = &g->code[sg->begin];
    if (!interp_poll(I)) return vm_stopped_at(I, first);
    if (c->state == CAP_LIVE) {
        char why[300];
        const char *no = replay_refuses(g, r, d, c, why, sizeof why);
        if (!no) {
            if (!c->replayed) {
                c->replayed = true;
                vm_dev_explain(I, d, first, "segment %d replayed in run %d", s, d->runs + 1);
            }
            return replay(I, g, r, d, s);
        }
        if (!c->told) {
            c->told = true;
            vm_dev_explain(I, d, first, "segment %d runs op by op this time: %s", s, no);
        }
        return vm_run_range(I, g, r, sg->begin, sg->end);
    }
    if (c->state == CAP_WARM && d->runs >= 2) return capture(I, g, r, d, s);
    return vm_run_range(I, g, r, sg->begin, sg->end);
}

/* Staging at the start of a run: an input whose address moved between runs is copied into a
 * tensor the graph keeps (its staging copy), so a capture reads one address every run. Inputs
 * are staged from the third run (the capture's) when they moved in any run before, or later
 * when a replay found one moved (replay_refuses marks it; every capture is then dropped and made again:
 * bounded, as each time one more input is staged). */
int vm_seg_stage(Interp *I, Graph *g, VmRegs *r, VmDev *d) {
    bool again = false;
    for (int i = 0; i < g->nguards; i++) {
        int reg = g->guards[i].reg;
        if (reg < 0 || g->regs[reg].kind != R_TENSOR || !r->ten[reg]) continue;
        Tensor *t = r->ten[reg], *st = d->stage[reg];
        if (d->input_at[reg] && d->input_at[reg] != t->data) d->stage_next[reg] |= d->runs <= 2;   /* moved before the capture */
        if (!st && d->stage_next[reg] && d->runs >= 2) {
            d->stage_next[reg] = false;
            if (!(st = tensor_copy(t))) return vm_fail_at(I, &g->code[0], op_error());
            d->stage[reg] = st;
            d->staged[d->nstaged++] = reg;
            again = again || d->runs > 2;
        } else if (st && st->dtype == t->dtype && st->size == t->size && st->device == t->device) {
            if (st->device == DEV_CPU) memcpy(st->data, t->data, (size_t)t->size * dtype_size(t->dtype));
            else if (device_impl(st->device)->copy_into(st, t)) return vm_fail_at(I, &g->code[0], op_error());
        } else {
            continue;   /* not stageable: the replay's address check runs the segments op by op */
        }
        vm_set_t(r, reg, tensor_retain(st));
    }
    for (int i = 0; i < g->nguards; i++) {
        int reg = g->guards[i].reg;
        if (reg >= 0 && g->regs[reg].kind == R_TENSOR && r->ten[reg]) d->input_at[reg] = r->ten[reg]->data;
    }
    if (again) {   /* captures made with the old address: made again, this run */
        d->recaptures++;
        for (int s = 0; s < d->nseg; s++) {
            VmCapture *c = &d->cap[s];
            if (c->state != CAP_LIVE) continue;
            vm_capture_drop(d, c);
            c->told = false;
            c->replayed = false;
            c->state = d->recaptures > 8 ? CAP_NEVER : CAP_WARM;
        }
    }
    return 0;
}
