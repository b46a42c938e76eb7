/* test_state.c - two interpreters in one process share nothing, every allocation goes
 * through the state's hook, and out of memory is an ordinary error (issue 14). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "helpers.h"
#include "ctx.h"
#include "mem.h"

/* The tensor global `name` of I (borrowed). */
static Tensor *tensor_global(Interp *I, const char *name) {
    int k = globals_find(&I->main->g, name);
    ck_assert_int_ge(k, 0);
    ck_assert_int_eq(I->main->g.vals[k].type, VAL_TENSOR);
    return I->main->g.vals[k].as.t;
}

static double num_global(Interp *I, const char *name) {
    int k = globals_find(&I->main->g, name);
    ck_assert_int_ge(k, 0);
    ck_assert_int_eq(I->main->g.vals[k].type, VAL_NUM);
    return I->main->g.vals[k].as.n;
}

static const char *str_global(Interp *I, const char *name) {
    int k = globals_find(&I->main->g, name);
    ck_assert_int_ge(k, 0);
    ck_assert_int_eq(I->main->g.vals[k].type, VAL_STR);
    return AS_STR(I->main->g.vals[k])->chars;
}

static void ck_same_tensor(const Tensor *a, const Tensor *b) {
    ck_assert_int_eq(a->size, b->size);
    ck_assert_int_eq(a->dtype, b->dtype);
    ck_assert(!memcmp(a->data, b->data, (size_t)a->size * dtype_size(a->dtype)));
}

/* What one state computes alone: two draws after seed(1), objects, a cycle, a static block. */
static const char *const part1 = "seed(1)\na1 = randn([3])\nl = [1, 'two', [3]]\nd = {k: l}\nd.self = d\n"
                                 "static { s = tanh(a1 * 2) }\nprintoptions(precision=2)\n";
static const char *const part2 = "a2 = randn([3])\nn = len(l) + len(d)\ngc()\nshown = str(tensor([1.23456]))\n";

/* Interleaved in the order of the loop index: A and B created, both used between each
 * other's steps (B seeds and draws in between, collects garbage, prints with other
 * options), then one freed first and the other used after it. */
START_TEST(state_two_interpreters_share_nothing) {
    bool free_a_first = _i & 1, create_b_first = _i & 2;
    Interp *ref = interp_new();
    ck_assert_int_eq(run_in(ref, part1), 0);
    ck_assert_int_eq(run_in(ref, part2), 0);
    Interp *A, *B;
    if (create_b_first) { B = interp_new(); A = interp_new(); }
    else { A = interp_new(); B = interp_new(); }
    ck_assert_int_eq(run_in(A, part1), 0);
    ck_assert_int_eq(run_in(B, "seed(7)\nb = randn([100])\nq = [[1], {x: 2}]\npush(q, q)\ngc()"), 0);
    ck_assert_int_eq(run_in(A, part2), 0);
    ck_assert_int_eq(run_in(B, "shown = str(tensor([1.23456]))\nb2 = randn([3])"), 0);
    ck_same_tensor(tensor_global(A, "a1"), tensor_global(ref, "a1"));
    ck_same_tensor(tensor_global(A, "a2"), tensor_global(ref, "a2"));   /* B's draws did not move A's stream */
    ck_same_tensor(tensor_global(A, "s"), tensor_global(ref, "s"));
    ck_assert_double_eq(num_global(A, "n"), 5);
    ck_assert_str_eq(str_global(A, "shown"), str_global(ref, "shown"));
    ck_assert_str_ne(str_global(B, "shown"), str_global(A, "shown"));   /* A's printoptions are A's */
    Interp *first = free_a_first ? A : B, *second = free_a_first ? B : A;
    interp_free(first);
    ck_assert_int_eq(run_in(second, "z = [1, 2]\npush(z, z)\ngc()\nw = sum(randn([4, 4]) @ randn([4, 4]))"), 0);
    ck_assert_int_eq(run_in(second, "import nn\nm = nn.mlp([4, 3, 2])\ny = m(randn([2, 4]))"), 0);
    interp_free(second);
    interp_free(ref);
}
END_TEST

/* Interpreters on several threads at once, each its own: the same results as one at a time. */
typedef struct {
    int seed;
    Tensor *want;     /* computed alone first (owned by the main thread's reference) */
    bool same;
} Worker;

static const char *const thread_script =
    "r = randn([64])\nl = []\nfor i in range(300) { push(l, str(i)) }\nd = {l: l}\nd.me = d\ngc()\n"
    "static { y = tanh(r * 2) + sum(r) }\nfor k in range(20) { y = y + tanh(y) * 0.01 }\n";

/* Not run_in: it swaps the process's stderr, which threads must not do. */
static int run_seeded(Interp *I, int seed) {
    char code[64];
    snprintf(code, sizeof code, "seed(%d)", seed);
    return interp_run_source(I, "<seed>", code, strlen(code), false, NULL) ||
           interp_run_source(I, "<thread>", thread_script, strlen(thread_script), false, NULL);
}

static void *thread_body(void *p) {
    Worker *w = p;
    Interp *I = interp_new();
    w->same = I && run_seeded(I, w->seed) == 0;
    int k = w->same ? globals_find(&I->main->g, "y") : -1;   /* no ck_assert off the main thread */
    if (k < 0 || I->main->g.vals[k].type != VAL_TENSOR) w->same = false;
    else {
        const Tensor *got = I->main->g.vals[k].as.t;
        w->same = got->size == w->want->size && !memcmp(got->data, w->want->data, (size_t)got->size * 4);
    }
    interp_free(I);
    return NULL;
}

START_TEST(state_interpreters_on_threads) {
    enum { N = 4 };
    Interp *ref[N];
    Worker w[N];
    for (int i = 0; i < N; i++) {
        ref[i] = interp_new();
        ck_assert_int_eq(run_seeded(ref[i], i + 1), 0);
        w[i] = (Worker){ i + 1, tensor_global(ref[i], "y"), false };
    }
    pthread_t th[N];
    for (int i = 0; i < N; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, thread_body, &w[i]), 0);
    for (int i = 0; i < N; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < N; i++) {
        ck_assert(w[i].same);
        interp_free(ref[i]);
    }
}
END_TEST

/* ---- the allocation hook ---- */

typedef struct {
    long allocs, frees, reallocs;
    int64_t live;       /* bytes held now */
    long fail_after;    /* allocations (and growths) still allowed; -1: any number */
} Counter;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    Counter *c = ud;
    if (nsize == 0) {
        c->frees++;
        c->live -= (int64_t)osize;
        free(ptr);
        return NULL;
    }
    if (c->fail_after == 0) return NULL;
    if (c->fail_after > 0) c->fail_after--;
    void *p = realloc(ptr, nsize);
    if (!p) return NULL;
    if (ptr) c->reallocs++;
    else c->allocs++;
    c->live += (int64_t)nsize - (int64_t)(ptr ? osize : 0);
    return p;
}

/* Every allocation, tensor data included, goes through the hook, and all of it comes back. */
START_TEST(state_alloc_hook_sees_everything) {
    Counter c = { 0, 0, 0, 0, -1 };
    Interp *I = interp_new_with_alloc(counting_alloc, &c);
    ck_assert_ptr_nonnull(I);
    ck_assert_int_gt(c.allocs, 0);   /* the state itself came from the hook */
    ck_assert_int_eq(run_in(I, "x = 1"), 0);
    int64_t before = c.live;
    ck_assert_int_eq(run_in(I, "big = zeros([1000, 100])"), 0);   /* 400 KB of f32 data */
    ck_assert_int_ge(c.live - before, 400000);
    ck_assert_int_eq(run_in(I, "big = nil\nl = []\nfor i in range(1000) { push(l, str(i)) }\nd = {a: l}\nd.me = d\n"
                               "static { t = tanh(randn([8, 8]) @ randn([8, 8])) }\nimport nn\nm = nn.mlp([4, 2])"),
                     0);
    ck_assert_int_gt(c.reallocs, 0);
    interp_free(I);
    ck_assert_int_eq(c.live, 0);
    ck_assert_int_eq(c.allocs, c.frees);
}
END_TEST

/* A hook that refuses after N allocations: the run stops with "out of memory" (a status,
 * not an exit), the state runs code again once memory is back, and freeing it returns
 * every byte, also what the jump stranded. Over a range of N, so the failure lands in the
 * parser, the evaluator, the objects, the tensors and the compiler. */
START_TEST(state_out_of_memory_is_an_error) {
    Counter c = { 0, 0, 0, 0, -1 };
    Interp *I = interp_new_with_alloc(counting_alloc, &c);
    ck_assert_ptr_nonnull(I);
    c.fail_after = 1 + _i * 7;
    int rc = run_in(I, "l = []\nfor i in range(200) { push(l, str(i) + '!') }\nd = {a: l}\n"
                       "t = sum(randn([16, 16]) @ randn([16, 16]))\nstatic { u = tanh(randn([4]) * 2) }\n"
                       "done = 1");
    if (_i < 10) ck_assert_int_eq(rc, 1);   /* the script needs far more than 64 allocations */
    if (rc != 0) {
        ck_assert_int_eq(rc, 1);
        ck_assert_str_eq(I->err_msg, "out of memory");
    }
    c.fail_after = -1;
    ck_assert_int_eq(run_in(I, "y = 1 + 2\nk = [y, str(y)]\nv = sum(ones([3]))"), 0);
    ck_assert_double_eq(num_global(I, "y"), 3);
    interp_free(I);
    ck_assert_int_eq(c.live, 0);
    ck_assert_int_eq(c.allocs, c.frees);
}
END_TEST

/* The same in the static compiler and the VM: the failure lands while a block and a static
 * fn compile or run; afterwards both compile and run again and give the result of a state
 * that never failed. */
static const char *const static_script =
    "static fn layer(x, w) { return tanh(x @ w + 1) * 0.5 }\n"
    "static { h = layer(x, w)\n for k in range(3) { h = h + sum(h * h, axis=1, keepdims=true) * 0.1 } }\n"
    "g = grad(fn(v) { return sum(layer(v, w)) })(x)\n";

START_TEST(state_out_of_memory_in_static_code) {
    const char *setup = "seed(3)\nx = randn([4, 8])\nw = randn([8, 3])\n";
    Interp *ref = interp_new();
    ck_assert_int_eq(run_in(ref, setup), 0);
    ck_assert_int_eq(run_in(ref, static_script), 0);
    Counter c = { 0, 0, 0, 0, -1 };
    Interp *I = interp_new_with_alloc(counting_alloc, &c);
    ck_assert_int_eq(run_in(I, setup), 0);
    c.fail_after = 1 + _i * 5;
    int rc = run_in(I, static_script);
    if (_i < 10) ck_assert_int_eq(rc, 1);
    if (rc != 0)   /* a small allocation's error, or a tensor's ("out of memory allocating a tensor of N bytes") */
        ck_assert(!strncmp(I->err_msg, "out of memory", strlen("out of memory")));
    c.fail_after = -1;
    ck_assert_int_eq(run_in(I, static_script), 0);
    ck_assert_int_eq(run_in(I, static_script), 0);   /* the cached graphs run */
    ck_same_tensor(tensor_global(I, "h"), tensor_global(ref, "h"));
    ck_same_tensor(tensor_global(I, "g"), tensor_global(ref, "g"));
    interp_free(I);
    interp_free(ref);
    ck_assert_int_eq(c.live, 0);
}
END_TEST

/* The ops layer alone (a model session's way): a protected run that runs out of memory
 * returns -1 with the message, and freeing the context returns every byte. */
static int grow_forever(void *ud) {
    (void)ud;
    void **chain = NULL;
    for (;;) {   /* a linked chain of blocks, never freed here: the context frees them */
        void **next = mem_alloc(sizeof(void *) * 64);
        next[0] = chain;
        chain = next;
        Shape s = { 1, { 100 } };
        tensor_release(tensor_new(DT_F32, &s));
    }
    return 0;
}

START_TEST(state_ops_context_out_of_memory) {
    Counter c = { 0, 0, 0, 0, 500 };
    OpsCtx *ctx = ops_ctx_new_with_alloc(counting_alloc, &c);
    ck_assert_ptr_nonnull(ctx);
    ck_assert_int_eq(ops_ctx_run(ctx, grow_forever, NULL), -1);
    OpsCtx *prev = ops_ctx_enter(ctx);
    ck_assert_str_eq(op_error(), "out of memory");
    ops_ctx_leave(prev);
    ck_assert_int_gt(c.live, 0);
    ops_ctx_free(ctx);
    ck_assert_int_eq(c.live, 0);
}
END_TEST

/* A call from outside (the C API's way): protected, with errors and out of memory as statuses. */
START_TEST(state_pcall) {
    Counter c = { 0, 0, 0, 0, -1 };
    Interp *I = interp_new_with_alloc(counting_alloc, &c);
    ck_assert_int_eq(run_in(I, "fn f(n) { l = []\nfor i in range(n) { push(l, str(i)) }\nreturn len(l) }"), 0);
    Value f = I->main->g.vals[globals_find(&I->main->g, "f")], out, arg = NUM_VAL(50);
    ck_assert_int_eq(interp_pcall(I, f, &arg, 1, &out), 0);
    ck_assert_double_eq(out.as.n, 50);
    ck_assert_int_eq(interp_pcall(I, f, NULL, 0, &out), 1);
    ck_assert_str_eq(I->err_msg, "f() missing argument 'n'");
    c.fail_after = 20;
    arg = NUM_VAL(100000);
    ck_assert_int_eq(interp_pcall(I, f, &arg, 1, &out), 1);
    ck_assert_str_eq(I->err_msg, "out of memory");
    c.fail_after = -1;
    arg = NUM_VAL(3);
    ck_assert_int_eq(interp_pcall(I, f, &arg, 1, &out), 0);
    ck_assert_double_eq(out.as.n, 3);
    interp_free(I);
    ck_assert_int_eq(c.live, 0);
}
END_TEST

/* A hook that refuses at once: no state, and nothing held. */
START_TEST(state_new_fails_cleanly) {
    for (long n = 0; n < 6; n++) {
        Counter c = { 0, 0, 0, 0, n };
        Interp *I = interp_new_with_alloc(counting_alloc, &c);
        if (I) interp_free(I);
        ck_assert_int_eq(c.live, 0);
    }
}
END_TEST

Suite *state_suite(void) {
    Suite *s = suite_create("state");
    TCase *tc = tcase_create("state");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, state_two_interpreters_share_nothing, 0, 4);
    tcase_add_test(tc, state_interpreters_on_threads);
    tcase_add_test(tc, state_alloc_hook_sees_everything);
    tcase_add_loop_test(tc, state_out_of_memory_is_an_error, 0, 60);
    tcase_add_loop_test(tc, state_out_of_memory_in_static_code, 0, 80);
    tcase_add_test(tc, state_pcall);
    tcase_add_test(tc, state_ops_context_out_of_memory);
    tcase_add_test(tc, state_new_fails_cleanly);
    suite_add_tcase(s, tc);
    return s;
}
