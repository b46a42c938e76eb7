/* test_vm_dev.c - the host-side logic of static graphs on the GPU (vm/run/exec_dev.c) that needs
 * no GPU: how a fused group becomes one generated kernel (vm_fused_plan). A plan is
 * checked by evaluating it on the host with the CPU's elementwise kernels, element by
 * element, as the generated kernel would, against the group's result from the CPU VM, and
 * by generating its kernel source (ops/gpu/cuda/gen.c; NVRTC is tests/gpu/ptx_check.c's job).
 * Then capture segments (vm_seg.c) on graphs compiled from source, and the arena and the
 * capture state machine (vm_dev.c) run on the CPU under TSL_VM_DEVICE=1: addresses that stay
 * put from run to run, one capture per segment, numbers that change between runs. */
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "helpers.h"
#include "vm_impl.h"
#include "cpu/cpu.h"
#include "cuda/gen.h"

static Interp *I;
static void setup(void) { I = interp_new(); }
static void teardown(void) { interp_free(I); }

/* The graph's only FUSED instruction. */
static Ins *fused_ins(Graph *g) {
    Ins *f = NULL;
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_FUSED) {
            ck_assert_ptr_null(f);
            f = &g->code[i];
        }
    ck_assert_ptr_nonnull(f);
    return f;
}

/* One element through the plan: inputs x (the one tensor input) or the number registers. */
static float eval_plan(const VmFusedPlan *p, const VmRegs *r, float x) {
    float in[DEV_FUSED_MAX_IN], t[VM_FUSED_MAX + 1];
    for (int k = 0; k < p->nin; k++) in[k] = p->in_reg[k] >= 0 ? x : (float)r->num[p->in_num[k]];
    for (int s = 0; s < p->nsteps; s++) {
        const DevFusedStep *q = &p->steps[s];
        const float *a = q->a >= 0 ? &t[q->a] : &in[-q->a - 1];
        if (q->b == DEV_FUSED_NONE) {
            ck_assert_int_eq(cpu_unary((OpCode)q->op, DT_F32, a, &t[q->dst], 1), 0);
        } else {
            const float *b = q->b >= 0 ? &t[q->b] : &in[-q->b - 1];
            ck_assert_int_eq(cpu_binary((OpCode)q->op, DT_F32, a, 1, b, 1, &t[q->dst], 1), 0);
        }
    }
    return t[p->steps[p->nsteps - 1].dst];
}

/* Runs `static { y = EXPR }` over x = arange(24) / 10 and checks the group's plan. */
static void check_plan(const char *expr, int want_nin) {
    char code[600];
    snprintf(code, sizeof code, "x = reshape(arange(24, dtype=\"f32\"), [4, 6]) / 10\nstatic { y = %s }\n", expr);
    ck_assert_int_eq(run_in(I, code), 0);
    Graph *g = static_last_graph(I);
    Ins *f = fused_ins(g);
    VmFusedPlan p;
    ck_assert_int_eq(vm_fused_plan(f, &p), 0);
    ck_assert_int_eq(p.nsteps, f->nsteps);
    ck_assert_int_eq(p.nin, want_nin);
    int tensors = 0;
    for (int k = 0; k < p.nin; k++) tensors += p.in_reg[k] >= 0;
    ck_assert_int_eq(tensors, 1);   /* x, however often the steps read it */
    const Tensor *y = g->rf->ten[f->dst];   /* the CPU VM's result (its register keeps it) */
    ck_assert_int_eq(y->size, 24);
    for (int i = 0; i < 24; i++) {
        float want = ((const float *)y->data)[i], got = eval_plan(&p, g->rf, (float)i / 10.0f);
        ck_assert_msg(!memcmp(&want, &got, sizeof got), "%s: element %d: %.9g, the plan gives %.9g", expr, i, want, got);
    }
    GenStep gs[VM_FUSED_MAX];
    for (int s = 0; s < p.nsteps; s++) gs[s] = (GenStep){ (OpCode)p.steps[s].op, p.steps[s].dst, p.steps[s].a, p.steps[s].b };
    static char name[8192], src[65536];
    ck_assert_int_eq(gen_fused_kernel(gs, p.nsteps, p.nin, DT_F32, name, sizeof name, src, sizeof src), 0);
}

START_TEST(vm_fused_plan_gelu) {
    check_plan("0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))", 5);
}
END_TEST

START_TEST(vm_fused_plan_numbers_on_both_sides) {
    check_plan("2 - exp(x * 0.5) / (1 + x * x)", 4);
}
END_TEST

/* A group whose intermediate is read outside it writes a register mid-way: step by step. */
START_TEST(vm_fused_plan_refuses_escaping_step) {
    ck_assert_int_eq(run_in(I, "x = rand([4, 6])\nstatic { a = exp(x * 2)\nb = sin(a - 1) }\n"), 0);
    Graph *g = static_last_graph(I);
    Ins *f = fused_ins(g);
    bool escapes = false;
    for (int k = 0; k + 1 < f->nsteps; k++) escapes |= f->steps[k].dst < 0;
    ck_assert(escapes);
    VmFusedPlan p;
    ck_assert_int_eq(vm_fused_plan(f, &p), -1);
}
END_TEST

/* An epilogue's steps as one kernel: the product is an input of the plan beside the bias. */
START_TEST(vm_fused_plan_epilogue) {
    ck_assert_int_eq(run_in(I, "x = rand([1, 6])\nw = rand([6, 5])\nb = rand([5])\nstatic { y = tanh(x @ w + b) * 0.5 }\n"), 0);
    Graph *g = static_last_graph(I);
    Ins *e = NULL;
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_EPILOGUE) e = &g->code[i];
    ck_assert_ptr_nonnull(e);
    VmFusedPlan p;
    ck_assert_int_eq(vm_fused_plan(e, &p), 0);
    ck_assert_int_eq(p.nsteps, e->nsteps);
    int product = 0, bias = 0;
    for (int k = 0; k < p.nin; k++) {
        product += p.in_reg[k] == VM_FUSED_PRODUCT;
        bias += p.in_reg[k] >= 0 && g->regs[p.in_reg[k]].shape.ndim == 1;
    }
    ck_assert_int_eq(product, 1);
    ck_assert_int_eq(bias, 1);
    GenStep gs[VM_FUSED_MAX];
    for (int s = 0; s < p.nsteps; s++) gs[s] = (GenStep){ (OpCode)p.steps[s].op, p.steps[s].dst, p.steps[s].a, p.steps[s].b };
    static char name[8192], src[65536];
    ck_assert_int_eq(gen_fused_kernel(gs, p.nsteps, p.nin, DT_F32, name, sizeof name, src, sizeof src), 0);
}
END_TEST

/* A graph made for the CPU's tensors runs on the CPU's executor (exec_cpu.c), not the device's. */
START_TEST(vm_dev_cpu_graph_stays_in_vm) {
    ck_assert_int_eq(run_in(I, "x = rand([3])\nstatic { y = x + 1 }\n"), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(g->device, DEV_CPU);
    ck_assert(!g->device_vm || getenv("TSL_VM_DEVICE"));
}
END_TEST

/* ---------- capture segments, the arena, the capture state machine ---------- */

/* Runs code with every graph on the device executor (TSL_VM_DEVICE is read per compile). */
static int run_dev(const char *code) {
    setenv("TSL_VM_DEVICE", "1", 1);
    int rc = run_in(I, code);
    unsetenv("TSL_VM_DEVICE");
    return rc;
}

/* A graph with a print, a reduction read by a branch, a loop-free if and a tail: the segments
 * are the runs of kernels between the host's instructions and the jump targets. */
START_TEST(vm_dev_segments_split_at_host_work) {
    ck_assert_int_eq(run_in(I, "static fn f(x, s) {\n a = exp(x) @ x\n b = tanh(a) * s\n print(1)\n c = sum(b)\n"
                               " if c > 0 { b = b + 1 }\n return b * 2\n}\n"
                               "x = reshape(arange(4, dtype=\"f32\"), [2, 2]) / 10\ny = f(x, 2)\n"), 0);
    Graph *g = static_last_graph(I);
    VmSeg *seg;
    int n = vm_dev_segments(g, &seg);
    /* 0-2 nconst, 3 exp, 4 epilogue | 5 print | 6 sum, 7 gt | 8 truth, 9 tmove (no kernel),
     * 10 jumpf | 11 add, 12 tmove | 13 jump | 14 mul (a jump target) */
    ck_assert_int_eq(n, 4);
    int want[4][2] = { { 0, 5 }, { 6, 8 }, { 11, 13 }, { 14, 15 } };
    for (int s = 0; s < n; s++) {
        ck_assert_int_eq(seg[s].begin, want[s][0]);
        ck_assert_int_eq(seg[s].end, want[s][1]);
        for (int i = seg[s].begin; i < seg[s].end; i++) ck_assert_ptr_null(vm_seg_refuses(g, &g->code[i]));
    }
    ck_assert_ptr_nonnull(vm_seg_refuses(g, &g->code[5]));   /* print */
    ck_assert_ptr_nonnull(vm_seg_refuses(g, &g->code[8]));   /* truth */
    mem_free(seg);
}
END_TEST

/* Kernels whose errors the host reads after a sync, and random draws, stay outside. */
START_TEST(vm_dev_segments_refuse_host_checked_kernels) {
    ck_assert_int_eq(run_in(I, "static fn f(x, i) {\n a = x // 2\n b = rand([3])\n c = take(x, i)\n return [a, b, c]\n}\n"
                               "y = f(arange(6), arange(2))\n"), 0);
    Graph *g = static_last_graph(I);
    VmSeg *seg;
    ck_assert_int_eq(vm_dev_segments(g, &seg), 0);
    ck_assert_ptr_null(seg);
    int refused = 0;
    for (int i = 0; i < g->ncode; i++) refused += g->code[i].op == I_OP && vm_seg_refuses(g, &g->code[i]);
    ck_assert_int_eq(refused, 3);
}
END_TEST

/* Ops whose GPU host code reads an outcome back after a sync (F_READBACK: cuSOLVER's info, a
 * range check; pad's tensor fill value) stay outside, as CUDA refuses a sync while capturing:
 * the host-memory stand-in's capture emulation found inv and cholesky invalidating whole
 * segments. The matmul before them, and pad with a number, are still captured. */
START_TEST(vm_dev_segments_refuse_readback_ops) {
    ck_assert_int_eq(run_in(I, "static fn f(a, v) {\n b = a @ a\n c = inv(b)\n d = cholesky(b)\n"
                               " e = pad(a, [[1, 1], [0, 0]], v)\n g = pad(a, [[1, 1], [0, 0]], 3)\n return [c, d, e, g]\n}\n"
                               "y = f(eye(3) * 2, sum(ones(2)))\n"), 0);
    Graph *g = static_last_graph(I);
    int seen = 0;
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        if (in->op != I_OP) continue;
        OpCode op = (OpCode)in->aux;
        bool tensor_value = false;
        for (int k = 1; k < in->nargs; k++) tensor_value |= in->args[k] >= 0 && g->regs[in->args[k]].kind == R_TENSOR;
        if (op == OP_INV || op == OP_CHOLESKY || (op == OP_PAD && tensor_value)) {
            ck_assert_ptr_nonnull(vm_seg_refuses(g, in));
            seen++;
        } else if (op == OP_MATMUL || op == OP_PAD) {
            ck_assert_ptr_null(vm_seg_refuses(g, in));
            seen += 10;
        }
    }
    ck_assert_int_eq(seen, 23);   /* inv, cholesky, pad(v) refused; matmul, pad(3) kept */
}
END_TEST

/* Ops whose GPU host code copies to or from the host without a readback of an error (zeros,
 * ones, full: the fill value; where: a number operand; equal, allclose: compared on the host;
 * an op whose first operand is a number, made by the CPU) stay outside: difftest.py --repeat on
 * the stand-in's capture emulation found zeros and clip(s, -10, 10) invalidating whole
 * segments (a host copy while capturing). where of tensors and clip of a tensor are captured. */
START_TEST(vm_dev_segments_refuse_host_copies) {
    ck_assert_int_eq(run_in(I, "static fn f(x, s) {\n a = zeros([3]) + x\n b = where(x > 0, x, 0.5)\n"
                               " c = full([3], 2) * x\n d = where(x > 0, x, a)\n e = equal(x, a)\n"
                               " h = clip(s, -10, 10) + clip(x, -1, 1)\n return [b, c, d, e, h]\n}\n"
                               "y = f(arange(3, dtype=\"f32\"), 0.5)\n"), 0);
    Graph *g = static_last_graph(I);
    int refused = 0, kept = 0;
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        if (in->op != I_OP) continue;
        OpCode op = (OpCode)in->aux;
        bool number = false;
        for (int k = 0; k < in->nargs; k++) number |= in->args[k] >= 0 && g->regs[in->args[k]].kind == R_NUM;
        bool number_first = in->nargs > 0 && in->args[0] >= 0 && g->regs[in->args[0]].kind == R_NUM;
        if (op == OP_ZEROS || op == OP_FULL || op == OP_EQUAL || (op == OP_WHERE && number) || (op == OP_CLIP && number_first)) {
            ck_assert_ptr_nonnull(vm_seg_refuses(g, in));
            refused++;
        } else if (op == OP_WHERE || op == OP_CLIP) {
            ck_assert_ptr_null(vm_seg_refuses(g, in));
            kept++;
        }
    }
    ck_assert_int_eq(refused, 4);   /* zeros, where(x > 0, x, 0.5), equal, clip(s...) (full of constants folds) */
    ck_assert_int_eq(kept, 2);      /* where of tensors, clip(x, -1, 1) */
}
END_TEST

/* The arena's regions, and the tensors the registers hold, are at the same addresses run
 * after run; each segment is captured once (on the third run) and never again; the values
 * are those of arithmetic. */
START_TEST(vm_dev_arena_addresses_stay_and_capture_once) {
    ck_assert_int_eq(run_dev("static fn f(x, w) { return tanh(x @ w + 1) * 2 + x @ w }\n"
                             "x = full([2, 3], 0.5)\nw = full([3, 3], 0.25)\n"), 0);
    const void *base = NULL, *reg_at[64] = { NULL };
    Graph *g = NULL;
    for (int run = 0; run < 6; run++) {
        ck_assert_int_eq(run_dev("y = f(x, w)\nassert(allclose(y, full([2, 3], 2 * tanh(1.375) + 0.375), rtol=1e-6))\n"), 0);
        Graph *now = static_last_graph(I);
        ck_assert(now->device_vm);
        if (!g) g = now;
        ck_assert_ptr_eq(now, g);   /* one graph: the cache's */
        VmDev *d = g->dev;
        ck_assert_ptr_nonnull(d);
        ck_assert_ptr_nonnull(d->mem);
        ck_assert_int_ge(d->nseg, 1);
        if (run == 0) base = d->mem->data;
        ck_assert_ptr_eq(d->mem->data, base);
        ck_assert_int_lt(g->nregs, 64);
        for (int r = 0; r < g->nregs; r++) {
            Tensor *home = vm_dev_region(d, r);
            if (!home) continue;
            if (g->rf->ten[r]) ck_assert_ptr_eq(g->rf->ten[r], home);   /* what the register kept: its region */
            if (run == 0) reg_at[r] = home->data;
            ck_assert_ptr_eq(home->data, reg_at[r]);
            ck_assert(home->data >= base && (const char *)home->data < (const char *)base + d->mem->size);
        }
        ck_assert_int_eq(d->captures, run >= 2 ? d->nseg : 0);   /* on the third run, and never again */
        for (int s = 0; s < d->nseg; s++) ck_assert_int_eq(d->cap[s].state, run >= 2 ? CAP_LIVE : CAP_WARM);
    }
}
END_TEST

/* A number the captured kernels take by value changes every call: never the captured one's
 * result (expected values from arithmetic: x * a + b with exact binary fractions). */
START_TEST(vm_dev_capture_numbers_never_stale) {
    ck_assert_int_eq(run_dev("static fn f(x, a, b) { return x * a + b }\nx = full([4], 0.5)\n"
                             "for i in range(8) {\n y = f(x, i, 1)\n assert(equal(y, full([4], 0.5 * i + 1)), str(i))\n}\n"
                             "for i in range(4) {\n y = f(x, 3, 2)\n assert(equal(y, full([4], 3.5)))\n}\n"), 0);
    VmDev *d = static_last_graph(I)->dev;
    ck_assert_int_eq(d->captures, 1);
    ck_assert_int_eq(d->cap[0].state, CAP_LIVE);
    ck_assert_int_ge(d->cap[0].nnum, 1);
    /* a segment in a loop body, its counter a number its kernel takes: (((0.5*0+1)*1+1)*2+1) = 5 */
    ck_assert_int_eq(run_dev("static fn g(x) {\n for k in range(3) { x = exp(x * k) * 0 + x * k + 1 }\n return x\n}\n"
                             "for i in range(6) { assert(equal(g(full([3], 0.5)), full([3], 5.0)), str(i)) }\n"), 0);
    d = static_last_graph(I)->dev;
    ck_assert_int_ge(d->nseg, 1);
    ck_assert_int_le(d->captures, d->nseg);
}
END_TEST

/* An input that moves after the capture is staged and the graph captured again, once; a
 * value that leaves the graph is a copy, not the arena (the next run rewrites the arena). */
START_TEST(vm_dev_capture_input_moves_and_results_are_copies) {
    ck_assert_int_eq(run_dev("static fn f(x) { return exp(x) * 2 }\nx = full([4], 0.0)\nkept = []\n"
                             "for i in range(4) { kept = kept + [f(x)] }\n"
                             "for i in range(6) { x = full([4], i * 1.0)\n y = f(x)\n assert(equal(y, exp(full([4], i * 1.0)) * 2), str(i)) }\n"
                             "for k in kept { assert(equal(k, full([4], 2.0))) }\n"), 0);
    VmDev *d = static_last_graph(I)->dev;
    ck_assert_int_le(d->captures, 2);
    ck_assert_int_eq(d->nstaged, 1);
}
END_TEST

/* A backward loop's stacks through the one loop on the device executor: each push a copy of
 * an arena value (the arena is rewritten next iteration), each pop handed back into the
 * register's region; the gradient is eager's bit for bit on every call, captured or not. */
START_TEST(vm_dev_stacks_through_the_device_executor) {
    ck_assert_int_eq(run_dev("fn loss(w) {\n h = full([3], 0.5)\n for k in range(4) { h = tanh(h * w + 0.1) }\n return sum(h)\n}\n"
                             "g = grad(loss)\nstatic fn step(w) { return g(w) }\nw = full([3], 0.7)\n"
                             "for i in range(5) {\n w = w + 0.01\n assert(equal(step(w), g(w)), str(i))\n}\n"), 0);
    Graph *g = static_last_graph(I);
    int push = 0, pop = 0;
    for (int i = 0; i < g->ncode; i++) push += g->code[i].op == I_PUSH, pop += g->code[i].op == I_POP;
    ck_assert_int_ge(push, 1);
    ck_assert_int_eq(push, pop);
    ck_assert_ptr_nonnull(g->dev);
    ck_assert_int_ge(g->dev->captures, 1);
}
END_TEST

Suite *vm_dev_suite(void) {
    Suite *s = suite_create("vm_dev");
    TCase *tc = tcase_create("fused_plan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, vm_fused_plan_gelu);
    tcase_add_test(tc, vm_fused_plan_numbers_on_both_sides);
    tcase_add_test(tc, vm_fused_plan_refuses_escaping_step);
    tcase_add_test(tc, vm_fused_plan_epilogue);
    tcase_add_test(tc, vm_dev_cpu_graph_stays_in_vm);
    suite_add_tcase(s, tc);
    tc = tcase_create("capture");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, vm_dev_segments_split_at_host_work);
    tcase_add_test(tc, vm_dev_segments_refuse_host_checked_kernels);
    tcase_add_test(tc, vm_dev_segments_refuse_readback_ops);
    tcase_add_test(tc, vm_dev_segments_refuse_host_copies);
    tcase_add_test(tc, vm_dev_arena_addresses_stay_and_capture_once);
    tcase_add_test(tc, vm_dev_capture_numbers_never_stale);
    tcase_add_test(tc, vm_dev_capture_input_moves_and_results_are_copies);
    tcase_add_test(tc, vm_dev_stacks_through_the_device_executor);
    suite_add_tcase(s, tc);
    return s;
}
