/* test_vm.c - the static compiler, optimizer passes and VM, through the interpreter:
 * each test runs a static block and inspects the graph that ran (or its effects). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "helpers.h"
#include "vm.h"
#include "opt.h"

static Interp *I;

static void setup(void) {
    unsetenv("TSL_OPT");
    I = interp_new();
}
static void teardown(void) {
    interp_free(I);
    unsetenv("TSL_OPT");
}

static int run(const char *code) { return run_in(I, code); }

static int count_op(Graph *g, InsOp op) {
    int n = 0;
    for (int i = 0; i < g->ncode; i++) n += g->code[i].op == op;
    return n;
}

/* OP instructions of one op kind (K_UNARY...), or of one op. */
static int count_kind(Graph *g, int kind) {
    int n = 0;
    for (int i = 0; i < g->ncode; i++) n += g->code[i].op == I_OP && op_info[g->code[i].aux].kind == kind;
    return n;
}
static int count_opcode(Graph *g, OpCode op) {
    int n = 0;
    for (int i = 0; i < g->ncode; i++) n += g->code[i].op == I_OP && g->code[i].aux == (int)op;
    return n;
}

static const char *GELU = "x = reshape(arange(24, dtype=\"f32\"), [4, 6]) / 10\n"
                          "static { y = 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))) }\n";

START_TEST(vm_fuses_elementwise_chain) {
    ck_assert_int_eq(run(GELU), 0);
    Graph *g = static_last_graph(I);
    ck_assert_ptr_nonnull(g);
    ck_assert_int_eq(count_op(g, I_FUSED), 1);
    ck_assert_int_eq(count_kind(g, K_BINARY) + count_kind(g, K_UNARY), 0);
    ck_assert_int_eq(g->fused_groups, 1);
    ck_assert(g->bytes_saved > 0);
}
END_TEST

START_TEST(vm_fusion_switch_off) {
    setenv("TSL_OPT", "-fuse", 1);
    ck_assert_int_eq(run(GELU), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_op(g, I_FUSED), 0);
    ck_assert_int_eq(count_kind(g, K_UNARY), 1);   /* the tanh */
}
END_TEST

START_TEST(vm_memory_plan_shares_buffers) {
    setenv("TSL_OPT", "-fuse", 1);
    ck_assert_int_eq(run(GELU), 0);
    Graph *g = static_last_graph(I);
    int planned = 0;
    for (int r = 0; r < g->nregs; r++) planned += g->regs[r].slot >= 0;
    /* nine intermediates of one shape, each dead after the next step: two buffers suffice */
    ck_assert_int_ge(planned, 8);
    ck_assert_int_le(g->nslots, 2);
    ck_assert_int_eq(run("ok = equal(y, 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))))\n"), 0);
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
}
END_TEST

/* A matmul, its bias add and activation: one EPILOGUE (no matmul, add or relu left), the
 * product never whole, the result eager's bits; TSL_OPT=-epilogue leaves the matmul an op. */
static const char *MLP_LAYER = "seed(5)\nx = randn([300, 32])\nw = randn([32, 16])\nb = randn([16])\n"
                               "static { y = relu(x @ w + b) }\nok = equal(y, relu(x @ w + b))\n";

START_TEST(vm_epilogue_takes_bias_and_activation) {
    ck_assert_int_eq(run(MLP_LAYER), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_op(g, I_EPILOGUE), 1);
    ck_assert_int_eq(count_opcode(g, OP_MATMUL) + count_kind(g, K_BINARY) + count_kind(g, K_UNARY), 0);
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_EPILOGUE) {
            ck_assert_int_eq(g->code[i].nsteps, 2);
            ck_assert_int_eq(g->code[i].c, -1);   /* nothing else reads the product */
            ck_assert_int_eq(g->code[i].steps[0].a, EPI_PRODUCT);
        }
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
}
END_TEST

START_TEST(vm_epilogue_switch_off) {
    setenv("TSL_OPT", "-epilogue", 1);
    ck_assert_int_eq(run(MLP_LAYER), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_op(g, I_EPILOGUE), 0);
    ck_assert_int_eq(count_opcode(g, OP_MATMUL), 1);
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
}
END_TEST

/* A layernorm over rows: one row group (the two means among its steps, the centred rows a
 * temporary), eager's bits; TSL_OPT=-rows leaves the means ops. A mean over axis 0 is not rows. */
static const char *LAYERNORM = "seed(3)\nx = randn([40, 200])\ng = randn([200])\nb = randn([200])\n"
                               "fn ln(x) { m = mean(x, axis=-1, keepdims=true)\n d = x - m\n"
                               "  v = mean(d * d, axis=-1, keepdims=true)\n return d / sqrt(v + 0.00001) * g + b }\n"
                               "static { y = ln(x) }\nok = equal(y, ln(x))\n";

static int count_reduce_steps(Graph *g) {
    int n = 0;
    for (int i = 0; i < g->ncode; i++)
        for (int k = 0; opt_row_group(&g->code[i]) && k < g->code[i].nsteps; k++) n += op_info[g->code[i].steps[k].op].kind == K_REDUCE;
    return n;
}

START_TEST(vm_row_group_layernorm) {
    ck_assert_int_eq(run(LAYERNORM), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_op(g, I_FUSED), 1);
    ck_assert_int_eq(count_opcode(g, OP_MEAN), 0);
    ck_assert_int_eq(count_reduce_steps(g), 2);
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_FUSED) {
            ck_assert(opt_row_group(&g->code[i]));
            ck_assert_int_eq(g->code[i].shape.d[1], 200);
            ck_assert_int_eq(g->code[i].steps[1].dst, 1);   /* x - m: a temporary, not a tensor */
        }
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
}
END_TEST

START_TEST(vm_row_group_switch_off) {
    setenv("TSL_OPT", "-rows", 1);
    ck_assert_int_eq(run(LAYERNORM), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_opcode(g, OP_MEAN), 2);
    ck_assert_int_eq(count_reduce_steps(g), 0);
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
}
END_TEST

START_TEST(vm_row_group_not_over_columns) {
    ck_assert_int_eq(run("x = reshape(arange(600, dtype=\"f32\"), [20, 30])\n"
                         "static { y = x - mean(x, axis=0, keepdims=true) * 2 }\n"
                         "ok = equal(y, x - mean(x, axis=0, keepdims=true) * 2)\n"), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_opcode(g, OP_MEAN), 1);
    ck_assert_int_eq(count_reduce_steps(g), 0);
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
}
END_TEST

/* A differentiated index (take of the index's positions, as eager records it) is read as the
 * index itself; the positions stay for the backward's scatter_add. TSL_OPT=-takes keeps it. */
static const char *TRACKED_INDEX = "x = reshape(arange(24, dtype=\"f32\"), [2, 3, 4])\n"
                                   "f = fn(x) { return sum(x[1] * x[1]) + sum(x[0, 1:3]) }\n"
                                   "static { r = value_and_grad(f)(x) }\n"
                                   "ok = equal(r[1], grad(f)(x)) and equal(r[0], f(x))\n";

START_TEST(vm_tracked_index_reads_directly) {
    ck_assert_int_eq(run(TRACKED_INDEX), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_opcode(g, OP_TAKE), 0);
    ck_assert_int_eq(count_opcode(g, OP_SCATTER_ADD), 3);   /* x[1] twice, x[0, 1:3] */
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
    setenv("TSL_OPT", "-takes", 1);
    ck_assert_int_eq(run(TRACKED_INDEX), 0);
    ck_assert_int_eq(count_opcode(static_last_graph(I), OP_TAKE), 3);
    ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
}
END_TEST

/* The backward of x[0], x[1], x[2] of one x: three scatter_adds into zeros, summed. The pass
 * chains them into one buffer (no add over x's shape), and the gradient of y[0] of a [1, ...] y
 * (positions over all of it, in order) is g + zeros, no scatter at all; the bits of eager's. */
static const char *SPLIT_INDEX = "x = reshape(arange(12, dtype=\"f32\"), [3, 4]) / 5 - 1\n"
                                 "f = fn(x) { return sum(x[0] * x[1]) + sum(tanh(x[2])) }\n"
                                 "static { r = value_and_grad(f)(x) }\n"
                                 "ok = equal(r[1], grad(f)(x))\n";
static const char *WHOLE_INDEX = "y = reshape(arange(8, dtype=\"f32\"), [1, 2, 4]) / 3 - 1\n"
                                 "h = fn(y) { return sum(tanh(y[0]) * y[0]) }\n"
                                 "static { r = value_and_grad(h)(y) }\n"
                                 "ok = equal(r[1], grad(h)(y))\n";

/* OP instructions of op `op` whose result has n dimensions. */
static int count_op_rank(Graph *g, OpCode op, int n) {
    int c = 0;
    for (int i = 0; i < g->ncode; i++)
        c += g->code[i].op == I_OP && g->code[i].aux == (int)op && g->regs[g->code[i].dst].shape.ndim == n;
    return c;
}

START_TEST(vm_index_backward_scatters_chain) {
    for (int off = 0; off < 2; off++) {
        setenv("TSL_OPT", off ? "-takes,-fuse" : "-fuse", 1);   /* (fusion would take the adds) */
        ck_assert_int_eq(run(SPLIT_INDEX), 0);
        Graph *g = static_last_graph(I);
        ck_assert_int_eq(count_opcode(g, OP_SCATTER_ADD), 3);
        ck_assert_int_eq(count_op_rank(g, OP_ADD, 2), off ? 2 : 0);   /* the sum of the three scatters */
        ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
        ck_assert_int_eq(run(WHOLE_INDEX), 0);
        ck_assert_int_eq(count_opcode(static_last_graph(I), OP_SCATTER_ADD), off ? 2 : 0);
        ck_assert(I->main->g.vals[globals_find(&I->main->g, "ok")].as.b);
    }
    unsetenv("TSL_OPT");
}
END_TEST

START_TEST(vm_cse_and_dce) {
    setenv("TSL_OPT", "-fuse", 1);
    ck_assert_int_eq(run("x = ones([3])\nfn f(v) { unused = tanh(v); return exp(v) + exp(v) }\nstatic { y = f(x) }\n"), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_kind(g, K_UNARY), 1);   /* one exp: the second is the same; tanh is dead */
    ck_assert_int_eq(count_kind(g, K_BINARY), 1);
    ck_assert(g->ops_before > g->ncode);
}
END_TEST

START_TEST(vm_constant_folding) {
    setenv("TSL_OPT", "-fuse", 1);
    ck_assert_int_eq(run("x = ones([2])\nstatic { y = tensor([1, 2]) * 2 + x }\nok = equal(y, tensor([3, 5]))\n"), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_opcode(g, OP_MUL), 0);   /* folded */
    ck_assert_int_eq(count_kind(g, K_BINARY), 1);
    int k = globals_find(&I->main->g, "ok");
    ck_assert(I->main->g.vals[k].as.b);
}
END_TEST

/* Collectives (F_COLL) are effects every rank must reach in order: two equal ones are not
 * merged (CSE), an unused one is not removed (DCE), one of a constant is not computed while
 * compiling (fold), and a loop-invariant one stays in the loop (LICM). */
START_TEST(vm_collectives_stay) {
    ck_assert_int_eq(run("x = ones([3])\nstatic {\n  a = allreduce(x)\n  b = allreduce(x)\n  unused = allgather(x)\n"
                         "  c = broadcast(tensor([1.0, 2.0]))\n  for i in range(3) { d = allreduce(x, op=\"max\") }\n"
                         "  y = a + b\n}\n"), 0);
    Graph *g = static_last_graph(I);
    ck_assert_int_eq(count_opcode(g, OP_ALLREDUCE), 3);
    ck_assert_int_eq(count_opcode(g, OP_ALLGATHER), 1);
    ck_assert_int_eq(count_opcode(g, OP_BROADCAST), 1);
    int order[5], n = 0, loop_top = -1;
    for (int i = 0; i < g->ncode; i++) {
        if (g->code[i].op == I_JUMP && g->code[i].aux < i) loop_top = g->code[i].aux;
        if (g->code[i].op == I_OP && (op_info[g->code[i].aux].flags & F_COLL) && n < 5) order[n++] = i;
    }
    ck_assert_int_eq(n, 5);   /* in program order, the last one inside the loop */
    ck_assert_int_eq(g->code[order[0]].aux, OP_ALLREDUCE);
    ck_assert_int_eq(g->code[order[2]].aux, OP_ALLGATHER);
    ck_assert_int_eq(g->code[order[3]].aux, OP_BROADCAST);
    ck_assert(loop_top >= 0 && order[4] > loop_top);
}
END_TEST

START_TEST(vm_loops_stay_loops) {
    ck_assert_int_eq(run("acc = 0\nstatic { for i in range(100000) { acc = acc + i } }\n"), 0);
    Graph *g = static_last_graph(I);
    ck_assert(g->ncode < 20);
    int k = globals_find(&I->main->g, "acc");
    ck_assert_double_eq(I->main->g.vals[k].as.n, 4999950000.0);
}
END_TEST

START_TEST(vm_guards_and_recompiles) {
    /* a number only computed with is a run-time input: one graph for every value */
    ck_assert_int_eq(run("x = ones([3])\nfor i in range(5) { lr = i * 0.1\n static { x = x - lr } }\n"), 0);
    Node *prog = I->programs[I->nprograms - 1];
    Node *loop = prog->kids[1];
    Node *st = loop->c->kids[1];
    ck_assert_int_eq(st->kind, AST_STATIC);
    ck_assert_int_eq(static_cache_count(st->vm_cache), 1);
    /* a shape change recompiles; a loop bound is a guard */
    ck_assert_int_eq(run("for n in [2, 3, 2] { z = zeros([n])\n static { w = z + 1 } }\n"), 0);
    prog = I->programs[I->nprograms - 1];
    st = prog->kids[0]->c->kids[1];
    ck_assert_int_eq(static_cache_count(st->vm_cache), 2);
}
END_TEST

START_TEST(vm_error_location_inside_static) {
    ck_assert_fails_with(I, "x = ones([3])\nstatic {\n  y = 1\n  z = x + zeros([5])\n}\n", "shape mismatch for '+': [3] and [5]", 4, 7);
    ck_assert_fails_with(I, "t = zeros([2, 2])\ni = 5\nstatic { for k in range(1) { v = t[i] } }\n", "index 5 is out of bounds for axis 0 with size 2", 3, 0);
}
END_TEST

START_TEST(vm_no_allocation_in_steady_state) {
    ck_assert_int_eq(run("W = ones([16, 16]) / 16\nxs = ones([50, 16])\n"
                         "fn run() { h = zeros([1, 16])\n static { for t in range(50) { h = tanh(h @ W + xs[t]) } }\n return h }\n"
                         "h1 = run()\n"),
                     0);
    int64_t before = I->opsctx->tensor_alloc_count;
    ck_assert_int_eq(run("h2 = run()\n"), 0);
    /* one zeros() outside the block, one output; nothing per step */
    ck_assert_int_le(I->opsctx->tensor_alloc_count - before, 3);
    ck_assert_int_eq(run("ok = equal(h1, h2)\n"), 0);
}
END_TEST

/* A whole training step in a static fn (forward, static grad, update in place) and an RNN's
 * backward through a run-time loop allocate nothing per step once warm: the saved values'
 * stacks, the registers and the updated parameters' buffers are reused. */
START_TEST(vm_training_step_allocates_nothing) {
    ck_assert_int_eq(run("fn loss(p, x, y) { h = relu(x @ p.w1 + p.b1)\n return mean(sum((h @ p.w2 + p.b2 - y) ** 2, axis=1)) + sum(h[1, 2:5]) }\n"
                         "static fn step(p, x, y, lr) { g = grad(loss)(p, x, y)\n"
                         "  for k in keys(p) { p[k] = p[k] - lr * g[k] } }\n"
                         "fn rnn(p, xs, n) { h = zeros([2, 4])\n s = zeros([])\n"
                         "  for t in range(n) { h = tanh(xs[t] @ p.wx + h @ p.wh)\n s = s - sum(log_softmax(h, axis=1)) }\n"
                         "  return sum(h * h) + s }\n"
                         "static fn rstep(p, xs, n, lr) { g = grad(rnn)(p, xs, n)\n p.wh = p.wh - lr * g.wh\n p.wx = p.wx - lr * g.wx }\n"
                         "p = {w1: randn([4, 8]), b1: zeros([8]), w2: randn([8, 1]), b2: zeros([1]), wh: randn([4, 4]) * 0.3, wx: randn([3, 4])}\n"
                         "x = randn([16, 4])\ny = randn([16, 1])\nxs = randn([7, 2, 3])\n"
                         "for i in range(5) { step(p, x, y, 0.01)\n rstep(p, xs, 7, 0.01) }\n"),
                     0);
    /* a run of the program itself may allocate a little (still warming): 60 steps no more than 10 */
    const char *progs[2][2] = { { "for i in range(10) { step(p, x, y, 0.01) }\n", "for i in range(60) { step(p, x, y, 0.01) }\n" },
                                { "for i in range(10) { rstep(p, xs, 7, 0.01) }\n", "for i in range(60) { rstep(p, xs, 7, 0.01) }\n" } };
    for (int k = 0; k < 2; k++) {
        int64_t n[2];
        for (int j = 0; j < 2; j++) {
            int64_t before = I->opsctx->tensor_alloc_count;
            ck_assert_int_eq(run(progs[k][j]), 0);
            n[j] = I->opsctx->tensor_alloc_count - before;
        }
        ck_assert_msg(n[1] <= n[0], "%s: 10 steps allocated %lld tensors, 60 steps %lld", k ? "rnn" : "mlp", (long long)n[0],
                      (long long)n[1]);
    }
}
END_TEST

/* A transpose of a tensor the loop does not change runs once, before the loop (licm); with
 * the pass off it stays inside. */
static int transpose_at(Graph *g, int *loop_top) {
    int at = -1;
    *loop_top = -1;
    for (int i = 0; i < g->ncode; i++) {
        if (g->code[i].op == I_OP && g->code[i].aux == OP_TRANSPOSE) at = i;
        if (g->code[i].op == I_JUMP && g->code[i].aux < i) *loop_top = g->code[i].aux;
    }
    return at;
}

START_TEST(vm_loop_invariant_transpose_hoisted) {
    /* (transpose with its axes: h @ transpose(W) alone is matmul(h, W, transpose_b=true)) */
    const char *prog = "W = ones([4, 4]) / 4\nh = ones([1, 4])\nstatic { for t in range(5) { h = tanh(h @ transpose(W, [1, 0])) } }\n";
    for (int off = 0; off < 2; off++) {
        if (off) setenv("TSL_OPT", "-licm", 1);
        ck_assert_int_eq(run(prog), 0);
        int top, at = transpose_at(static_last_graph(I), &top);
        ck_assert(at >= 0 && top >= 0);
        ck_assert_msg(off ? at > top : at < top, "transpose at %d, loop from %d (licm %s)", at, top, off ? "off" : "on");
    }
    unsetenv("TSL_OPT");
}
END_TEST

/* The golden `dis` of tests/dis/passes.tsl with every pass on and with each one off: the
 * optimizer's decisions (what folds, merges, dies, fuses, shares a buffer) are visible and
 * any change to them shows up here; and of tests/dis/grad.tsl, a gradient's graph (attributes
 * the backward pass set, registers an epilogue writes besides its result). The compile time
 * at the end of the summary is cut. */
static char *dis_of_last(void) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    dis_graph(f, static_last_graph(I), "last static block");
    fclose(f);
    char *cut = strstr(text, ", compiled in ");
    if (cut) strcpy(cut, "\n");
    return text;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

static const struct {
    const char *script, *pass;
} golden[] = {
    { "passes", "all" }, { "passes", "-fold" }, { "passes", "-cse" }, { "passes", "-dce" },
    { "passes", "-epilogue" }, { "passes", "-fuse" }, { "passes", "-mem" }, { "grad", "all" },
};

START_TEST(vm_golden_dis) {
    const char *script = golden[_i].script, *pass = golden[_i].pass;
    if (strcmp(pass, "all")) setenv("TSL_OPT", pass, 1);
    char path[64];
    snprintf(path, sizeof path, "tests/dis/%s.tsl", script);
    char *src = read_file(path);
    ck_assert_msg(src != NULL, "%s not found (run from the repository root)", path);
    char *prog = strdup(src);
    strstr(prog, "\ndis(")[1] = 0;   /* run the code; the test prints the graph itself */
    ck_assert_int_eq(run(prog), 0);
    free(prog);
    char *got = dis_of_last();
    snprintf(path, sizeof path, "tests/dis/%s.%s.out", script, pass);
    char *want = read_file(path);
    ck_assert_msg(want != NULL, "%s not found", path);
    ck_assert_msg(!strcmp(got, want), "dis with TSL_OPT=%s differs from %s:\n%s", pass, path, got);
    free(got);
}
END_TEST

Suite *vm_suite(void) {
    Suite *s = suite_create("vm");
    TCase *tc = tcase_create("static");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, vm_fuses_elementwise_chain);
    tcase_add_test(tc, vm_fusion_switch_off);
    tcase_add_test(tc, vm_memory_plan_shares_buffers);
    tcase_add_test(tc, vm_epilogue_takes_bias_and_activation);
    tcase_add_test(tc, vm_epilogue_switch_off);
    tcase_add_test(tc, vm_row_group_layernorm);
    tcase_add_test(tc, vm_row_group_switch_off);
    tcase_add_test(tc, vm_row_group_not_over_columns);
    tcase_add_test(tc, vm_tracked_index_reads_directly);
    tcase_add_test(tc, vm_index_backward_scatters_chain);
    tcase_add_test(tc, vm_cse_and_dce);
    tcase_add_test(tc, vm_constant_folding);
    tcase_add_test(tc, vm_loops_stay_loops);
    tcase_add_test(tc, vm_collectives_stay);
    tcase_add_test(tc, vm_guards_and_recompiles);
    tcase_add_test(tc, vm_error_location_inside_static);
    tcase_add_test(tc, vm_no_allocation_in_steady_state);
    tcase_add_test(tc, vm_training_step_allocates_nothing);
    tcase_add_test(tc, vm_loop_invariant_transpose_hoisted);
    tcase_add_loop_test(tc, vm_golden_dis, 0, (int)(sizeof golden / sizeof golden[0]));
    suite_add_tcase(s, tc);
    return s;
}
