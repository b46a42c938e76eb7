/* test_vm_gpu.c - the host-side logic of static graphs on the GPU (vm/vm_gpu.c) that needs
 * no GPU: how a fused group becomes one generated kernel (vm_gpu_fused_plan). A plan is
 * checked by evaluating it on the host with the CPU's elementwise kernels, element by
 * element, as the generated kernel would, against the group's result from the CPU VM, and
 * by generating its kernel source (ops/cuda/gen.c; NVRTC is tests/gpu/ptx_check.c's job). */
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "helpers.h"
#include "vm_impl.h"
#include "tops.h"
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
static float eval_plan(const VmGpuFused *p, const VmRegs *r, float x) {
    float in[GPU_FUSED_MAX_IN], t[VM_GPU_FUSED_MAX + 1];
    for (int k = 0; k < p->nin; k++) in[k] = p->in_reg[k] >= 0 ? x : (float)r->num[p->in_num[k]];
    for (int s = 0; s < p->nsteps; s++) {
        const GpuFusedStep *q = &p->steps[s];
        const float *a = q->a >= 0 ? &t[q->a] : &in[-q->a - 1];
        if (q->b == GPU_FUSED_NONE) {
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
    VmGpuFused p;
    ck_assert_int_eq(vm_gpu_fused_plan(f, &p), 0);
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
    GenStep gs[VM_GPU_FUSED_MAX];
    for (int s = 0; s < p.nsteps; s++) gs[s] = (GenStep){ (OpCode)p.steps[s].op, p.steps[s].dst, p.steps[s].a, p.steps[s].b };
    static char name[8192], src[65536];
    ck_assert_int_eq(gen_fused_kernel(gs, p.nsteps, p.nin, DT_F32, name, sizeof name, src, sizeof src), 0);
}

START_TEST(vm_gpu_fused_plan_gelu) {
    check_plan("0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))", 5);
}
END_TEST

START_TEST(vm_gpu_fused_plan_numbers_on_both_sides) {
    check_plan("2 - exp(x * 0.5) / (1 + x * x)", 4);
}
END_TEST

/* A group whose intermediate is read outside it writes a register mid-way: step by step. */
START_TEST(vm_gpu_fused_plan_refuses_escaping_step) {
    ck_assert_int_eq(run_in(I, "x = rand([4, 6])\nstatic { a = exp(x * 2)\nb = sin(a - 1) }\n"), 0);
    Graph *g = static_last_graph(I);
    Ins *f = fused_ins(g);
    bool escapes = false;
    for (int k = 0; k + 1 < f->nsteps; k++) escapes |= f->steps[k].dst < 0;
    ck_assert(escapes);
    VmGpuFused p;
    ck_assert_int_eq(vm_gpu_fused_plan(f, &p), -1);
}
END_TEST

/* A graph made for the CPU's tensors runs in vm.c (no device VM): the one branch per run. */
START_TEST(vm_gpu_cpu_graph_stays_in_vm) {
    ck_assert_int_eq(run_in(I, "x = rand([3])\nstatic { y = x + 1 }\n"), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(g->device, DEV_CPU);
    ck_assert(!g->device_vm || getenv("TSL_VM_DEVICE"));
}
END_TEST

Suite *vm_gpu_suite(void) {
    Suite *s = suite_create("vm_gpu");
    TCase *tc = tcase_create("fused_plan");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, vm_gpu_fused_plan_gelu);
    tcase_add_test(tc, vm_gpu_fused_plan_numbers_on_both_sides);
    tcase_add_test(tc, vm_gpu_fused_plan_refuses_escaping_step);
    tcase_add_test(tc, vm_gpu_cpu_graph_stays_in_vm);
    suite_add_tcase(s, tc);
    return s;
}
