/* exec_dev.c - the device executor (vm_impl.h's VmExec): vm.c's loop on a graph whose
 * tensors live on a device other than the host's block kernels' (the GPU), or on any
 * graph under TSL_VM_DEVICE=1, which is how it is tested without a GPU (tests/run.sh and
 * tests/gpu/static.sh run the static scripts that way with --verify-static).
 *
 * Every tensor instruction is the op eager execution calls, through the op core's device
 * registry (op_run): a fused group is its steps, one op each, and an epilogue is the
 * product then its steps. So static results are the eager results on that device bit for
 * bit, by construction. On the GPU a fused group whose steps the generator covers runs as
 * one kernel (the device's fused_run: the eager kernels' expression rows in one loop, so the same
 * bits), and so do an epilogue's steps when every operand has the result's size;
 * otherwise, and on the CPU, step by step.
 * With the graph's own register file (the static cache's graphs) results go into the
 * graph's arena (vm_dev.c): each tensor register written has a fixed place, so every run
 * writes the same addresses; values that leave the graph (outputs, prints, stores, pushes)
 * are copied out, and a tmove copies into its destination's place. Without one (a nested
 * run, a model session) every result is a new tensor. The arena's capture segments
 * (vm_seg.c) run where they begin (the segment hook). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vm.h"
#include "vm_impl.h"
#include "mem.h"
#include "opt.h"

/* The graph's arena, when this run has one: the graph's own register file (run_graph works
 * on a copy of *g->rf); a nested run of the same graph, or a model session's registers, go
 * without. */
static VmDev *arena(const Graph *g, const VmRegs *r) {
    VmDev *d = g->dev;
    return d && !d->off && g->rf && r->ten == g->rf->ten ? d : NULL;
}

/* Register reg := t (stolen): into the register's region when the graph runs with an arena
 * (d), so the address is the same every run. -1 (error set) when the copy failed. */
static int put(VmDev *d, VmRegs *r, int reg, Tensor *t) {
    if (d && !(t = vm_dev_place(d, reg, t))) return -1;
    vm_set_t(r, reg, t);
    return 0;
}

/* Whether a's and b's elements share memory. */
static bool overlaps(const Tensor *a, const Tensor *b) {
    const char *pa = a->data, *pb = b->data;
    size_t na = (size_t)a->size * dtype_size(a->dtype), nb = (size_t)b->size * dtype_size(b->dtype);
    return a->device == b->device && pa < pb + nb && pb < pa + na;
}

/* The region op results res[k] are written into directly: none for views and results whose
 * shape depends on the data or reads a run-time shape (the op makes those), on another device, or overlapping an
 * operand (computed elsewhere, then copied in). */
static Tensor *direct_out(VmDev *d, Ins *in, int k, const OpArg *args) {
    Tensor *home = d ? vm_dev_region(d, in->res[k]) : NULL;
    if (!home || in->rt || (op_info[in->aux].flags & (F_VIEW | F_DYNAMIC))) return NULL;
    bool any = false;
    for (int q = 0; q < in->nargs; q++) {
        if (args[q].kind != ARG_TENSOR) continue;
        any = true;
        if (args[q].t->device != home->device || overlaps(args[q].t, home)) return NULL;
    }
    return any ? home : NULL;
}

static int exec_op(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    VmDev *d = arena(g, r);
    OpArg few[4];
    OpArg *args = in->nargs <= 4 ? few : mem_alloc(sizeof(OpArg) * (size_t)in->nargs);
    int rc = 0;
    for (int k = 0; k < in->nargs && rc == 0; k++) {
        int reg = in->args[k];
        if (reg < 0) args[k].kind = ARG_NONE;
        else if (g->regs[reg].kind == R_NUM) args[k] = op_arg_num(r->num[reg], g->regs[reg].is_bool);
        else if (!r->ten[reg]) rc = vm_fail_at(I, in, "undefined variable");
        else args[k] = op_arg_tensor(r->ten[reg]);
    }
    Tensor *out[OP_MAX_OUT] = { NULL };
    bool given[OP_MAX_OUT] = { false };
    for (int k = 0; rc == 0 && k < in->nres && k < OP_MAX_OUT; k++)
        if ((out[k] = direct_out(d, in, k, args))) given[k] = true, tensor_retain(out[k]);
    if (rc == 0 && op_run_with((OpCode)in->aux, args, in->nargs, in->attrs, out)) {
        rc = vm_fail_at(I, in, op_error());
        for (int k = 0; k < OP_MAX_OUT; k++)
            if (given[k]) tensor_release(out[k]);   /* the caller's buffers stay the caller's */
    }
    if (rc == 0)
        for (int k = 0; k < in->nres; k++)
            if (put(d, r, in->res[k], out[k]) && rc == 0) rc = vm_fail_at(I, in, op_error());
    if (args != few) mem_free(args);
    return rc;
}

/* ---------- fused groups and epilogues, step by step ---------- */

/* A step's operand: a temporary of the group (x >= 0), the product (EPI_PRODUCT) or a
 * register -(r+1). */
static const Tensor *step_operand(VmRegs *r, Tensor **temps, const Tensor *product, int x) {
    if (x == EPI_PRODUCT) return product;
    return x >= 0 ? temps[x] : r->ten[-x - 1];
}

static int run_steps(Interp *I, Graph *g, VmRegs *r, VmDev *d, Ins *in, const Tensor *product) {
    int ntemps = 0;
    for (int k = 0; k < in->nsteps; k++)
        if (in->steps[k].dst + 1 > ntemps) ntemps = in->steps[k].dst + 1;
    Tensor **temps = mem_calloc((size_t)ntemps + 1, sizeof(Tensor *));
    int rc = 0;
    for (int k = 0; k < in->nsteps && rc == 0; k++) {
        const FusedStep *st = &in->steps[k];
        OpArg args[2];
        const Tensor *a = step_operand(r, temps, product, st->a);
        const Tensor *b = st->b == FUSED_NONE ? NULL : step_operand(r, temps, product, st->b);
        if (!a || (st->b != FUSED_NONE && !b)) {
            rc = vm_fail_at(I, in, "undefined variable");
            break;
        }
        int n = 1;
        args[0] = op_arg_tensor(a);
        if (st->scalar_reg >= 0) {   /* a weak number, on the side the source wrote it */
            OpArg x = op_arg_num(r->num[st->scalar_reg], g->regs[st->scalar_reg].is_bool);
            if (st->num_left) args[1] = args[0], args[0] = x;
            else args[1] = x;
            n = 2;
        } else if (b) {
            args[1] = op_arg_tensor(b);
            n = 2;
        }
        /* a register's step writes into its region, unless an operand is there */
        Tensor *out[OP_MAX_OUT] = { NULL }, *home = st->dst < 0 && d ? vm_dev_region(d, -st->dst - 1) : NULL;
        if (home && (home->device != a->device || overlaps(a, home) || (b && overlaps(b, home)))) home = NULL;
        if ((out[0] = home)) tensor_retain(home);
        if (op_run_with(st->op, args, n, NULL, out)) {
            if (home) tensor_release(home);
            rc = vm_fail_at(I, in, op_error());
            break;
        }
        if (st->dst >= 0) {
            tensor_release(temps[st->dst]);
            temps[st->dst] = out[0];
        } else if (put(d, r, -st->dst - 1, out[0])) {
            rc = vm_fail_at(I, in, op_error());
        }
    }
    for (int k = 0; k < ntemps; k++) tensor_release(temps[k]);
    mem_free(temps);
    return rc;
}

/* The kernel input for register reg (a tensor), or for number register num: -(k+1), or
 * PLAN_FULL when the kernel takes no more inputs. */
#define PLAN_FULL INT_MIN
static int plan_input(VmFusedPlan *p, int reg, int num) {
    for (int k = 0; k < p->nin; k++)
        if (p->in_reg[k] == reg && p->in_num[k] == num) return -(k + 1);
    if (p->nin == DEV_FUSED_MAX_IN) return PLAN_FULL;
    p->in_reg[p->nin] = reg;
    p->in_num[p->nin] = num;
    return -(++p->nin);
}

/* A step operand outside the group: its register, or VM_FUSED_PRODUCT (an epilogue's product). */
static int operand_reg(int x) { return x == EPI_PRODUCT ? VM_FUSED_PRODUCT : -x - 1; }

int vm_fused_plan(const Ins *in, VmFusedPlan *p) {
    int n = in->nsteps, last_temp = 0;
    if (n < 1 || n > VM_FUSED_MAX || in->steps[n - 1].dst != -(in->dst + 1)) return -1;
    for (int k = 0; k < n; k++) {
        if (in->steps[k].dst < 0 && k != n - 1) return -1;   /* a result read outside the group */
        if (in->steps[k].dst >= last_temp) last_temp = in->steps[k].dst + 1;
    }
    p->nsteps = n;
    p->nin = 0;
    for (int k = 0; k < n; k++) {
        const FusedStep *st = &in->steps[k];
        DevFusedStep *q = &p->steps[k];
        q->op = st->op;
        q->dst = st->dst >= 0 ? st->dst : last_temp;
        q->a = st->a >= 0 ? st->a : plan_input(p, operand_reg(st->a), -1);
        q->b = st->b == FUSED_NONE ? DEV_FUSED_NONE : st->b >= 0 ? st->b : plan_input(p, operand_reg(st->b), -1);
        if (st->scalar_reg >= 0) {
            int x = plan_input(p, -1, st->scalar_reg);
            if (st->num_left) q->b = q->a, q->a = x;
            else q->b = x;
        }
        if (q->a == PLAN_FULL || q->b == PLAN_FULL) return -1;   /* more inputs than a kernel takes */
    }
    return 0;
}

/* A fused group on the GPU as one kernel, or an epilogue's steps over its product (every
 * operand then has the result's size or one element: a bias at batch 1): 0, 1 when it must
 * run step by step, -1 failed. */
static int fused_kernel(Interp *I, Graph *g, VmRegs *r, VmDev *d, Ins *in, const Tensor *product) {
    VmFusedPlan p;
    const DeviceImpl *dev = device_impl(g->device);
    if (!dev->fused_run || vm_fused_plan(in, &p)) return 1;
    const Tensor *x[DEV_FUSED_MAX_IN];
    double num[DEV_FUSED_MAX_IN];
    for (int k = 0; k < p.nin; k++) {
        x[k] = p.in_reg[k] == VM_FUSED_PRODUCT ? product : p.in_reg[k] >= 0 ? r->ten[p.in_reg[k]] : NULL;
        num[k] = p.in_num[k] >= 0 ? r->num[p.in_num[k]] : 0;
        if ((p.in_reg[k] >= 0 || p.in_reg[k] == VM_FUSED_PRODUCT) && !x[k]) return vm_fail_at(I, in, "undefined variable");
    }
    Tensor *out = d ? vm_dev_region(d, in->dst) : NULL;   /* the region, unless an input is in it */
    for (int k = 0; out && k < p.nin; k++)
        if (x[k] && overlaps(x[k], out)) out = NULL;
    if (out) tensor_retain(out);
    else if (!(out = op_device(g->device) ? dev->alloc(g->regs[in->dst].dtype, &g->regs[in->dst].shape) : NULL))
        return vm_fail_at(I, in, op_error());
    int rc = dev->fused_run(p.steps, p.nsteps, x, num, p.nin, out);
    if (rc == 0 && put(d, r, in->dst, out)) return vm_fail_at(I, in, op_error());
    if (rc != 0) tensor_release(out);
    return rc < 0 ? vm_fail_at(I, in, op_error()) : rc;
}

static int exec_fused(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    VmDev *d = arena(g, r);
    int rc = fused_kernel(I, g, r, d, in, NULL);
    return rc == 1 ? run_steps(I, g, r, d, in, NULL) : rc;
}

/* The product as eager computes matmul(a, b, transpose_a=, transpose_b= as aux says), then the
 * steps over it; the
 * product goes to register c when something else reads it. */
static int exec_epilogue(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    VmDev *d = arena(g, r);
    if (!r->ten[in->a] || !r->ten[in->b]) return vm_fail_at(I, in, "undefined variable");
    OpArg args[2];
    args[0] = op_arg_tensor(r->ten[in->a]);
    args[1] = op_arg_tensor(r->ten[in->b]);
    OpAttrs at;
    memset(&at, 0, sizeof at);
    at.naxes = -1;
    at.dtype = -1;
    at.flag = in->aux & EPI_TRANS_A;   /* transpose_a, matmul's third parameter */
    at.flag2 = in->aux & EPI_TRANS_B;  /* transpose_b, its fourth */
    at.given = (at.flag ? 1u << 2 : 0) | (at.flag2 ? 1u << 3 : 0);
    Tensor *out[OP_MAX_OUT] = { NULL };   /* new tensors, as eager execution makes them */
    if (op_run_with(OP_MATMUL, args, 2, &at, out)) return vm_fail_at(I, in, op_error());
    Tensor *p = out[0];
    int rc = fused_kernel(I, g, r, d, in, p);   /* the steps as one kernel where they fit it */
    if (rc == 1) rc = run_steps(I, g, r, d, in, p);
    if (rc == 0 && in->c >= 0 && put(d, r, in->c, tensor_retain(p))) rc = vm_fail_at(I, in, op_error());
    tensor_release(p);
    return rc;
}

/* ---------- the small hooks ---------- */

/* Index arrays and masks are read on the host, as eager code reads them (interp.c): one on
 * the device is copied there first. */
static Tensor *dev_index(Graph *g, VmRegs *r, Ins *in, Tensor *src, IndexItem *items, Tensor *setval) {
    Tensor *host[TSL_MAX_RANK + 8] = { NULL }, *res = NULL;
    bool ok = true;
    for (int k = 0; k < in->nidx && ok; k++)
        if (items[k].kind == IDX_TENSOR && items[k].t->device != DEV_CPU && (ok = (host[k] = tensor_host(items[k].t)) != NULL))
            items[k].t = host[k];
    if (ok) res = tensor_index(src, items, in->nidx, setval, in->op == I_INDEX_SET);
    for (int k = 0; k < in->nidx; k++) tensor_release(host[k]);
    return res;
}

static int dev_place(Graph *g, VmRegs *r, int reg, Tensor *t) { return put(arena(g, r), r, reg, t); }

/* A 0-d tensor of dtype dt holding x, made on the default device as eager makes it. */
static int dev_scalar(Graph *g, VmRegs *r, int reg, DType dt, double x) {
    Shape s = { .ndim = 0 };
    Tensor *t = tensor_new(dt, &s), *m = t;
    Device dev = ops_ctx()->default_device;
    if (t) tensor_set(t, 0, dt == DT_I64 ? trunc(x) : x);
    if (t && dev != DEV_CPU) {
        m = tensor_to(t, dev);
        tensor_release(t);
    }
    return m ? dev_place(g, r, reg, m) : -1;
}

/* A constant on the device the program's literals are made on (the default device), so an
 * op meets it where eager code would; with an arena, copied there once. */
static Tensor *dev_const(Graph *g, VmRegs *r, int k) {
    VmDev *d = arena(g, r);
    if (d && d->dconst[k]) return tensor_retain(d->dconst[k]);
    Tensor *c = (r->consts ? r->consts : g->consts)[k], *t;
    Device dev = ops_ctx()->default_device;
    if ((t = c->device == dev ? tensor_retain(c) : tensor_to(c, dev)) && d) d->dconst[k] = tensor_retain(t);
    return t;
}

/* A run starts: the arena (made on the first run) and the inputs staged for the captures. */
static int dev_begin(Interp *I, Graph *g, VmRegs *r) {
    VmDev *d = g->rf && r->ten == g->rf->ten ? vm_dev_get(I, g) : NULL;
    return d && d->nseg ? vm_seg_stage(I, g, r, d) : 0;
}

static void dev_end(Graph *g, VmRegs *r) {
    VmDev *d = arena(g, r);
    if (d) d->runs++;
}

static int dev_segment(Interp *I, Graph *g, VmRegs *r, int *pc) {
    VmDev *d = arena(g, r);
    int s = d ? d->seg_at[*pc] : -1;
    if (s < 0) return 0;
    if (vm_seg_run(I, g, r, d, s)) return -1;
    *pc = d->seg[s].end;
    return 1;
}

const VmExec vm_dev_exec = {
    .begin = dev_begin, .end = dev_end, .segment = dev_segment, .place = dev_place,
    .copy = vm_dev_copy, .konst = dev_const, .scalar = dev_scalar, .index = dev_index,
    .op = exec_op, .fused = exec_fused, .epilogue = exec_epilogue,
};
