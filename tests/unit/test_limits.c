/* test_limits.c - limits that always hold (issue 10): the per-statement poll of Ctrl-C and
 * --timeout, the compile budget in time, and compiled code's intermediate buffers, which
 * must not pile up across many static fns or count against --max-memory. */
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "helpers.h"
#include "compile.h"
#include "mem.h"
#include "vm.h"

static Interp *I;

static void setup(void) { I = interp_new(); }
static void teardown(void) { interp_free(I); }   /* the flags and limits were I's own */

/* Straight-line code (no loop, no call) stops at its next statement. */
START_TEST(limits_statement_polls_signals) {
    interp_interrupt(I);
    ck_assert_int_eq(run_in(I, "x = 1\ny = 2"), 130);   /* a script's Ctrl-C status */
    ck_assert_str_eq(I->err_msg, "interrupted");
    ck_assert_int_eq(I->err_loc.line, 1);
    ck_assert_int_eq(globals_find(&I->main->g, "y") >= 0 ? I->main->g.vals[globals_find(&I->main->g, "y")].type : VAL_UNDEF,
                     VAL_UNDEF);
    interp_time_up(I);
    ck_assert_fails_with(I, "x = 1", "time limit exceeded (--timeout)", 1, 0);
    ck_assert(!I->interrupted);
    /* the time stays up */
    ck_assert_fails_with(I, "x = 1", "time limit exceeded (--timeout)", 1, 0);
}
END_TEST

static char *many_statements(int n) {
    size_t cap = (size_t)n * 32 + 64;
    char *s = mem_alloc(cap);
    size_t len = (size_t)snprintf(s, cap, "static {\n  x0 = 1\n");
    for (int i = 1; i < n; i++) len += (size_t)snprintf(s + len, cap - len, "  x%d = x%d + 1\n", i, i - 1);
    snprintf(s + len, cap - len, "}\n");
    return s;
}

/* Past the compile budget in time the block runs eagerly, with the same result. */
START_TEST(limits_compile_budget_in_time) {
    char *code = many_statements(200);
    I->compile_budget_ms = 0;
    ck_assert_int_eq(run_in(I, code), 0);
    ck_assert_ptr_null(static_last_graph(I));
    int k = globals_find(&I->main->g, "x199");
    ck_assert_double_eq(I->main->g.vals[k].as.n, 200);
    interp_free(I);
    I = interp_new();
    I->compile_budget_ms = 2000;
    ck_assert_int_eq(run_in(I, code), 0);
    ck_assert_ptr_nonnull(static_last_graph(I));
    mem_free(code);
}
END_TEST

/* NFNS distinct static fns, each with two 256 KiB intermediates (a matmul and a product). */
#define NFNS 20
static char *many_fns(void) {
    size_t cap = 200 * NFNS + 200;
    char *s = mem_alloc(cap);
    size_t len = (size_t)snprintf(s, cap, "a = ones([256, 256])\ntotal = 0\n");
    for (int k = 0; k < NFNS; k++)
        len += (size_t)snprintf(s + len, cap - len, "static fn f%d(x) {\n  b = x @ x\n  c = b * %d\n  return sum(c)\n}\n", k, k + 1);
    return s;
}

static int call_fns(int from, int to) {
    char code[4096];
    size_t len = 0;
    for (int k = from; k < to; k++) len += (size_t)snprintf(code + len, sizeof code - len, "total = total + item(f%d(a))\n", k);
    return run_in(I, code);
}

/* Only the most recently run graphs keep their buffers: running 20 static fns does not pin
 * 20 sets of intermediates. */
START_TEST(limits_buffers_do_not_pile_up) {
    char *defs = many_fns();
    ck_assert_int_eq(run_in(I, defs), 0);
    mem_free(defs);
    int64_t base = I->opsctx->tensor_live_bytes;
    ck_assert_int_eq(call_fns(0, 1), 0);
    int64_t one = I->opsctx->tensor_live_bytes - base;   /* what one fn keeps between runs */
    ck_assert(one >= 256 * 256 * 4);
    ck_assert_int_eq(call_fns(1, NFNS), 0);
    ck_assert_int_le(I->opsctx->tensor_live_bytes - base, 8 * one);
    int k = globals_find(&I->main->g, "total");
    /* each element of a @ a is 256; sum(c) = 256 * 256 * 256 * (k + 1) */
    ck_assert_double_eq(I->main->g.vals[k].as.n, 256.0 * 256 * 256 * (NFNS * (NFNS + 1) / 2));
}
END_TEST

/* Under --max-memory, kept buffers are released before an allocation would fail. */
START_TEST(limits_max_memory_releases_kept_buffers) {
    char *defs = many_fns();
    ck_assert_int_eq(run_in(I, defs), 0);
    mem_free(defs);
    int64_t base = I->opsctx->tensor_live_bytes;
    ck_assert_int_eq(call_fns(0, 1), 0);
    int64_t one = I->opsctx->tensor_live_bytes - base;
    I->opsctx->max_live = base + 2 * one + 256 * 256 * 4;
    ck_assert_int_eq(call_fns(1, NFNS), 0);
    ck_assert_int_eq(call_fns(0, NFNS), 0);
}
END_TEST

/* The eager tape counts toward --max-memory while grad runs and gives back every byte it
 * charged, whether backward ran or the limit stopped it (issue 24). */
START_TEST(limits_tape_is_charged_and_returned) {
    ck_assert_int_eq(run_in(I, "fn f(x) {\n  s = x\n  for i in range(20000) { s = s * 1.0 }\n  return sum(s)\n}\n"
                               "g = grad(f)(tensor(1.0))"), 0);
    int64_t base = I->opsctx->obj_live_bytes, tensors = I->opsctx->tensor_live_bytes;
    ck_assert_int_eq(run_in(I, "g = grad(f)(tensor(1.0))"), 0);
    ck_assert_int_eq(I->opsctx->obj_live_bytes, base);
    /* room for the tensors' data (20000 scalars), not for the tape's nodes and headers */
    I->opsctx->max_live = base + tensors + 1000000;
    ck_assert_int_eq(run_in(I, "g = grad(f)(tensor(1.0))"), 1);
    ck_assert(strstr(I->err_msg, "--max-memory") != NULL);
    ck_assert_int_eq(I->err_loc.line, 3);   /* the op in the loop that would pass the limit */
    ck_assert_int_eq(I->opsctx->obj_live_bytes, base);   /* the stopped tape gave its charge back */
}
END_TEST

/* The compiled backward's PUSH stacks are charged as they grow and keep their charge with
 * their buffers between runs: a second run charges nothing more. */
START_TEST(limits_push_stacks_are_charged) {
    ck_assert_int_eq(run_in(I, "static fn f(x, n) {\n  return grad(fn(x) {\n    s = x\n"
                               "    for i in range(n) { s = sin(s) }\n    return sum(s)\n  })(x)\n}\n"
                               "x = tensor(1.0)\ng = 0"), 0);
    int64_t before = I->opsctx->obj_live_bytes;
    ck_assert_int_eq(run_in(I, "g = f(x, 5000)"), 0);
    int64_t charged = I->opsctx->obj_live_bytes - before;
    ck_assert(charged >= 5000 * TENSOR_KEEP_BYTES);   /* a saved scalar per iteration */
    ck_assert_int_eq(run_in(I, "g = f(x, 5000)"), 0);
    ck_assert_int_eq(I->opsctx->obj_live_bytes - before, charged);
    I->opsctx->max_live = I->opsctx->obj_live_bytes + I->opsctx->tensor_live_bytes + 1000000;
    ck_assert_int_eq(run_in(I, "g = f(x, 100000)"), 1);
    ck_assert(strstr(I->err_msg, "--max-memory") != NULL);
    ck_assert_int_eq(I->err_loc.line, 4);   /* the loop's op, not a bare "out of memory" */
}
END_TEST

Suite *limits_suite(void) {
    Suite *s = suite_create("limits");
    TCase *tc = tcase_create("limits");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, limits_statement_polls_signals);
    tcase_add_test(tc, limits_compile_budget_in_time);
    tcase_add_test(tc, limits_buffers_do_not_pile_up);
    tcase_add_test(tc, limits_max_memory_releases_kept_buffers);
    tcase_add_test(tc, limits_tape_is_charged_and_returned);
    tcase_add_test(tc, limits_push_stacks_are_charged);
    suite_add_tcase(s, tc);
    return s;
}
