/* vm_gpu.c - the static VM for a graph compiled for a device other than the CPU (the GPU).
 *
 * vm.c's loop is the CPU's: it hands kernels raw host pointers, writes into the memory
 * plan's buffers and runs fused groups and matmul epilogues block by block in host memory.
 * None of that applies to device memory, so a graph compiled for the GPU (Graph.device)
 * runs here instead, decided once per run (vm_exec's first branch). Every tensor
 * instruction is the op eager execution calls, through the op core's device registry
 * (op_run): a fused group is its steps, one op each, and an epilogue is the product then
 * its steps. So GPU static results are the eager GPU results bit for bit, by construction;
 * the same holds on the CPU, which is how this file is tested without a GPU
 * (TSL_VM_DEVICE=1 sends every graph here: tests/run.sh runs the static scripts that way
 * with --verify-static).
 *
 * Nothing here writes into a tensor in place: every result is a new tensor, so registers,
 * stacks and containers may share tensors freely (a PUSH keeps a reference, not a copy).
 * Host-needing instructions (item, a branch on a tensor, print) read through tensor_host.
 * On the GPU a fused group whose steps the generator covers runs as one kernel
 * (gpu_fused_run: the eager kernels' expression rows in one loop, so the same bits);
 * otherwise, and on the CPU, step by step.
 * Not here yet (docs/gpu.md): one arena per graph from the memory plan, and CUDA Graph
 * capture and replay. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vm.h"
#include "vm_impl.h"
#include "mem.h"
#include "opt.h"
#include "gpu.h"

static void set_t(VmRegs *r, int reg, Tensor *t) {
    tensor_release(r->ten[reg]);
    r->ten[reg] = t;
}

/* One op call into new tensors (out[] filled), as eager execution makes it. */
static int call_op(OpCode op, int nargs, const OpArg *args, const OpAttrs *at, Tensor **out) {
    OpAttrs none;
    if (!at) {
        memset(&none, 0, sizeof none);
        none.naxes = -1;
        none.dtype = -1;
        at = &none;
    }
    OpCall call = { op, nargs, args, at };
    for (int k = 0; k < OP_MAX_OUT; k++) out[k] = NULL;
    return op_run(&call, out);
}

static int exec_op(Interp *I, Graph *g, VmRegs *r, Ins *in) {
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
    Tensor *out[OP_MAX_OUT];
    if (rc == 0 && call_op((OpCode)in->aux, in->nargs, args, in->attrs, out)) rc = vm_fail_at(I, in, op_error());
    if (rc == 0)
        for (int k = 0; k < in->nres; k++) set_t(r, in->res[k], out[k]);
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

static int run_steps(Interp *I, Graph *g, VmRegs *r, Ins *in, const Tensor *product) {
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
        Tensor *out[OP_MAX_OUT];
        if (call_op(st->op, n, args, NULL, out)) {
            rc = vm_fail_at(I, in, op_error());
            break;
        }
        if (st->dst >= 0) {
            tensor_release(temps[st->dst]);
            temps[st->dst] = out[0];
        } else {
            set_t(r, -st->dst - 1, out[0]);
        }
    }
    for (int k = 0; k < ntemps; k++) tensor_release(temps[k]);
    mem_free(temps);
    return rc;
}

/* The kernel input for register reg (a tensor), or for number register num: -(k+1), or
 * PLAN_FULL when the kernel takes no more inputs. */
#define PLAN_FULL INT_MIN
static int plan_input(VmGpuFused *p, int reg, int num) {
    for (int k = 0; k < p->nin; k++)
        if (p->in_reg[k] == reg && p->in_num[k] == num) return -(k + 1);
    if (p->nin == GPU_FUSED_MAX_IN) return PLAN_FULL;
    p->in_reg[p->nin] = reg;
    p->in_num[p->nin] = num;
    return -(++p->nin);
}

int vm_gpu_fused_plan(const Ins *in, VmGpuFused *p) {
    int n = in->nsteps, last_temp = 0;
    if (n < 1 || n > VM_GPU_FUSED_MAX || in->steps[n - 1].dst != -(in->dst + 1)) return -1;
    for (int k = 0; k < n; k++) {
        if (in->steps[k].dst < 0 && k != n - 1) return -1;   /* a result read outside the group */
        if (in->steps[k].dst >= last_temp) last_temp = in->steps[k].dst + 1;
    }
    p->nsteps = n;
    p->nin = 0;
    for (int k = 0; k < n; k++) {
        const FusedStep *st = &in->steps[k];
        GpuFusedStep *q = &p->steps[k];
        q->op = st->op;
        q->dst = st->dst >= 0 ? st->dst : last_temp;
        q->a = st->a >= 0 ? st->a : plan_input(p, -st->a - 1, -1);
        q->b = st->b == FUSED_NONE ? GPU_FUSED_NONE : st->b >= 0 ? st->b : plan_input(p, -st->b - 1, -1);
        if (st->scalar_reg >= 0) {
            int x = plan_input(p, -1, st->scalar_reg);
            if (st->num_left) q->b = q->a, q->a = x;
            else q->b = x;
        }
        if (q->a == PLAN_FULL || q->b == PLAN_FULL) return -1;   /* more inputs than a kernel takes */
    }
    return 0;
}

/* A fused group on the GPU as one kernel: 0, 1 when it must run step by step, -1 failed. */
static int fused_kernel(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    VmGpuFused p;
    if (g->device != DEV_GPU || vm_gpu_fused_plan(in, &p)) return 1;
    const Tensor *x[GPU_FUSED_MAX_IN];
    double num[GPU_FUSED_MAX_IN];
    for (int k = 0; k < p.nin; k++) {
        x[k] = p.in_reg[k] >= 0 ? r->ten[p.in_reg[k]] : NULL;
        num[k] = p.in_num[k] >= 0 ? r->num[p.in_num[k]] : 0;
        if (p.in_reg[k] >= 0 && !x[k]) return vm_fail_at(I, in, "undefined variable");
    }
    const DeviceImpl *dev = op_device(g->device);
    Tensor *out = dev ? dev->alloc(g->regs[in->dst].dtype, &g->regs[in->dst].shape) : NULL;
    if (!out) return vm_fail_at(I, in, op_error());
    int rc = gpu_fused_run(p.steps, p.nsteps, x, num, p.nin, out);
    if (rc == 0) set_t(r, in->dst, out);
    else tensor_release(out);
    return rc < 0 ? vm_fail_at(I, in, op_error()) : rc;
}

static int exec_fused(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    int rc = fused_kernel(I, g, r, in);
    return rc == 1 ? run_steps(I, g, r, in, NULL) : rc;
}

/* The product as eager computes matmul(a, b, transpose_a=aux), then the steps over it; the
 * product goes to register c when something else reads it. */
static int exec_epilogue(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    if (!r->ten[in->a] || !r->ten[in->b]) return vm_fail_at(I, in, "undefined variable");
    OpArg args[2];
    args[0] = op_arg_tensor(r->ten[in->a]);
    args[1] = op_arg_tensor(r->ten[in->b]);
    OpAttrs at;
    memset(&at, 0, sizeof at);
    at.naxes = -1;
    at.dtype = -1;
    if (in->aux) {
        at.given = 1u << 2;   /* transpose_a, matmul's third parameter */
        at.flag = true;
    }
    Tensor *out[OP_MAX_OUT];
    if (call_op(OP_MATMUL, 2, args, &at, out)) return vm_fail_at(I, in, op_error());
    Tensor *p = out[0];
    int rc = run_steps(I, g, r, in, p);
    if (rc == 0 && in->c >= 0) set_t(r, in->c, tensor_retain(p));
    tensor_release(p);
    return rc;
}

/* ---------- indexing, numbers, host reads ---------- */

static int exec_index(Interp *I, VmRegs *r, Ins *in) {
    IndexItem items[TSL_MAX_RANK + 8];
    if (in->nidx) memcpy(items, in->idx, sizeof(IndexItem) * (size_t)in->nidx);
    for (int k = 0; k < in->nidx; k++) {
        if (in->args[k] < 0) continue;
        if (items[k].kind == IDX_TENSOR) {
            if (!(items[k].t = r->ten[in->args[k]])) return vm_fail_at(I, in, "undefined variable");
            continue;
        }
        double x = r->num[in->args[k]];
        if (!num_to_i64(x, &items[k].i)) {
            char msg[96];
            snprintf(msg, sizeof msg, x == floor(x) ? "index %g is out of range" : "tensor index must be an integer, got %g", x);
            return vm_fail_at(I, in, msg);
        }
    }
    Tensor *src = r->ten[in->a], *v = in->op == I_INDEX_SET ? r->ten[in->b] : NULL;
    if (!src || (in->op == I_INDEX_SET && !v)) return vm_fail_at(I, in, "undefined variable");
    Tensor *t = gpu_index_any(src, items, in->nidx, v, in->op == I_INDEX_SET);
    if (!t) return vm_fail_at(I, in, op_error());
    set_t(r, in->dst, t);
    return 0;
}

/* The first element of a tensor on any device, read on the host (NaN with the error set
 * when the copy fails). */
static bool host_first(const Tensor *t, double *x) {
    if (t->device == DEV_CPU) {
        *x = tensor_get(t, 0);
        return true;
    }
    Tensor *h = tensor_host(t);
    if (!h) return false;
    *x = tensor_get(h, 0);
    tensor_release(h);
    return true;
}

/* A 0-d tensor of dtype dt holding x, made on the default device as eager makes it. */
static Tensor *scalar_tensor(DType dt, double x) {
    Shape s = { .ndim = 0 };
    Tensor *t = tensor_new(dt, &s);
    if (!t) return NULL;
    tensor_set(t, 0, dt == DT_I64 ? trunc(x) : x);
    Device d = ops_ctx()->default_device;
    if (d == DEV_CPU) return t;
    Tensor *m = gpu_to(t, d);
    tensor_release(t);
    return m;
}

/* A constant of the graph on the device the program's literals are made on (the default
 * device), so an op meets it where eager code would. */
static Tensor *const_tensor(Graph *g, VmRegs *r, int k) {
    Tensor *c = (r->consts ? r->consts : g->consts)[k];
    Device d = ops_ctx()->default_device;
    return c->device == d ? tensor_retain(c) : gpu_to(c, d);
}

static int exec_scalar(Interp *I, VmRegs *r, Ins *in) {
    double x = r->num[in->a];
    if (in->aux == DT_I64 && !double_fits_i64(x))
        return vm_fail_at(I, in, isnan(x) ? "cannot convert nan to i64"
                              : isinf(x) ? (x > 0 ? "cannot convert inf to i64" : "cannot convert -inf to i64")
                                         : "cannot convert an out-of-range value to i64");
    Tensor *t = scalar_tensor((DType)in->aux, x);
    if (!t) return vm_fail_at(I, in, op_error());
    set_t(r, in->dst, t);
    return 0;
}

static int exec_truth(Interp *I, VmRegs *r, Ins *in) {
    Tensor *x = r->ten[in->a];
    if (!x) return vm_fail_at(I, in, "undefined variable");
    if (x->size != 1) {
        char msg[128];
        snprintf(msg, sizeof msg, "ambiguous truth value of a tensor with %lld elements; use any/all", (long long)x->size);
        return vm_fail_at(I, in, msg);
    }
    double v;
    if (!host_first(x, &v)) return vm_fail_at(I, in, op_error());
    r->num[in->dst] = v != 0;
    return 0;
}

/* ---------- stacks ---------- */

static void exec_push(Graph *g, VmRegs *r, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 16;
        s->t = mem_realloc(s->t, sizeof(Tensor *) * (size_t)cap);
        s->x = mem_realloc(s->x, sizeof(double) * (size_t)cap);
        for (int k = s->cap; k < cap; k++) s->t[k] = NULL;
        s->cap = cap;
    }
    if (g->regs[in->a].kind == R_NUM) s->x[s->n] = r->num[in->a];
    else {   /* values are never written in place here: a reference is the copy */
        tensor_release(s->t[s->n]);
        s->t[s->n] = r->ten[in->a] ? tensor_retain(r->ten[in->a]) : NULL;
    }
    s->n++;
}

static int exec_pop(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (s->n == 0) return vm_fail_at(I, in, "internal error: a backward loop popped more values than its loop saved");
    s->n--;
    if (g->regs[in->dst].kind == R_NUM) r->num[in->dst] = s->x[s->n];
    else if (s->t[s->n]) {
        set_t(r, in->dst, s->t[s->n]);
        s->t[s->n] = NULL;
    }
    return 0;
}

/* ---------- the loop ---------- */

static int vm_gpu_ins(Interp *I, Graph *g, VmRegs *r, Ins *in, int *pc) {
    double *N = r->num;
    switch (in->op) {
    case I_NCONST: N[in->dst] = in->imm; return 0;
    case I_NMOVE: N[in->dst] = N[in->a]; return 0;
    case I_NBIN:
    case I_NNEG:
    case I_NNOT:
    case I_NMATH: return vm_number_ins(I, r, in);
    case I_TCONST: {
        Tensor *t = const_tensor(g, r, in->aux);
        if (!t) return vm_fail_at(I, in, op_error());
        set_t(r, in->dst, t);
        return 0;
    }
    case I_SCALAR: return exec_scalar(I, r, in);
    case I_TMOVE:
        if (!r->ten[in->a]) return vm_fail_at(I, in, "undefined variable");
        set_t(r, in->dst, tensor_retain(r->ten[in->a]));
        return 0;
    case I_OP:
        if (!interp_poll(I)) return vm_stopped_at(I, in);
        return exec_op(I, g, r, in);
    case I_INDEX:
    case I_INDEX_SET: return exec_index(I, r, in);
    case I_SEED: rng_seed((uint64_t)(int64_t)in->imm); return 0;
    case I_ITEM:
        if (!r->ten[in->a]) return vm_fail_at(I, in, "undefined variable");
        return host_first(r->ten[in->a], &N[in->dst]) ? 0 : vm_fail_at(I, in, op_error());
    case I_TRUTH: return exec_truth(I, r, in);
    case I_JUMP:
    case I_JUMPF:
        if (in->op == I_JUMPF && N[in->a] != 0) return 0;
        if (in->aux < *pc && (I->interrupt_flag || I->max_ops) && !interp_check_limits(I)) return vm_stopped_at(I, in);
        *pc = in->aux;
        return 0;
    case I_PRINT:
    case I_ASSERT:
    case I_STORE: return vm_host_ins(I, g, r, in);
    case I_PUSH: exec_push(g, r, in); return 0;
    case I_POP: return exec_pop(I, g, r, in);
    case I_FUSED:
        if (!interp_poll(I)) return vm_stopped_at(I, in);
        return exec_fused(I, g, r, in);
    case I_EPILOGUE:
        if (!interp_poll(I)) return vm_stopped_at(I, in);
        return exec_epilogue(I, g, r, in);
    default: return vm_fail_at(I, in, "internal error: unknown instruction");
    }
}

int vm_exec_gpu(Interp *I, Graph *g, VmRegs *r) {
    for (int i = 0; i < g->nstacks; i++) r->stacks[i].n = 0;
    int pc = 0;
    while (pc < g->ncode) {
        Ins *in = &g->code[pc++];
        if (vm_gpu_ins(I, g, r, in, &pc)) return -1;
    }
    return 0;
}
