/* test_interp.c - the evaluator through its public entry point: scope rules, closures,
 * calls, errors with locations, limits. Expected values come from the spec's rules. */
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "helpers.h"
#include "interp.h"

static Interp *I;

static void setup(void) { I = interp_new(); }
static void teardown(void) { interp_free(I); }

static int run(const char *code) { return run_in(I, code); }

static Value global(const char *name) {
    int k = globals_find(&I->main->g, name);
    ck_assert_msg(k >= 0, "no global %s", name);
    return I->main->g.vals[k];
}

static double num(const char *name) {
    Value v = global(name);
    ck_assert_int_eq(v.type, VAL_NUM);
    return v.as.n;
}

/* lang/ without vm/: with no StaticHooks, static code runs eagerly and the compiler's
 * built-ins say why they cannot run. */
START_TEST(interp_without_static_hooks) {
    const StaticHooks *vm = interp_static_hooks();
    ck_assert_ptr_nonnull(vm);   /* main() registered them */
    interp_set_static_hooks(NULL);
    ck_assert_int_eq(run("static fn f(x) { return x * 2 + 1 }\ny = f(3)\nstatic { z = y + f(1) }"), 0);
    ck_assert_double_eq(num("y"), 7);
    ck_assert_double_eq(num("z"), 10);
    ck_assert_fails_with(I, "dis(f)", "this build of tsl has no static compiler", 1, 1);
    interp_set_static_hooks(vm);
}
END_TEST

START_TEST(interp_arithmetic_and_printing) {
    ck_assert_int_eq(run("a = 0.1 + 0.2\nb = -7 % 3\nc = 2 ** -1\nd = 1 / 0\ne = 2 ** 3 ** 2"), 0);
    ck_assert_double_eq(num("a"), 0.1 + 0.2);
    ck_assert_double_eq(num("b"), 2);
    ck_assert_double_eq(num("c"), 0.5);
    ck_assert(num("d") > 1e308);
    ck_assert_double_eq(num("e"), 512);
    StrBuf b = { 0 };
    fmt_number(&b, 0.1 + 0.2);
    ck_assert_str_eq(b.s, "0.30000000000000004");
    b.len = 0;
    fmt_number(&b, 1e20);
    ck_assert_str_eq(b.s, "1e+20");
    b.len = 0;
    fmt_number(&b, -0.0);
    ck_assert_str_eq(b.s, "-0");
    b.len = 0;
    fmt_number(&b, 1e-7);
    ck_assert_str_eq(b.s, "1e-07");
    sb_free(&b);
}
END_TEST

START_TEST(interp_scope_and_closures) {
    ck_assert_int_eq(run("fn counter() { n = 0; return fn() { n = n + 1; return n } }\n"
                         "c = counter(); c(); c(); r = c()\n"
                         "g = 5\nfn setg() { g = 1; return g }\nlocal = setg()\n"
                         "fn mk() { xs = []; fn add(v) { push(xs, v) }; add(1); add(2); return len(xs) }\n"
                         "k = mk()"),
                     0);
    ck_assert_double_eq(num("r"), 3);
    ck_assert_double_eq(num("g"), 5);       /* a function never assigns a global */
    ck_assert_double_eq(num("local"), 1);
    ck_assert_double_eq(num("k"), 2);
}
END_TEST

START_TEST(interp_calls_and_keywords) {
    ck_assert_int_eq(run("fn f(a, b=2, c=a * 10) { return a + b + c }\n"
                         "x = f(1)\ny = f(1, c=0)\nz = f(c=1, a=1, b=1)\n"
                         "m = {k: 3, forward: fn(self, v) { return self.k * v }}\nw = m(2)"),
                     0);
    ck_assert_double_eq(num("x"), 13);
    ck_assert_double_eq(num("y"), 3);
    ck_assert_double_eq(num("z"), 3);
    ck_assert_double_eq(num("w"), 6);
    ck_assert_fails_with(I, "f(1, 2, 3, 4)", "f() takes 3 arguments but 4 were given", 0, 0);
    ck_assert_fails_with(I, "f(1, q=2)", "f() got an unknown keyword argument 'q'", 0, 0);
    ck_assert_fails_with(I, "fn g(a) { return a }\ng()", "g() missing argument 'a'", 0, 0);
}
END_TEST

START_TEST(interp_errors_have_locations) {
    ck_assert_fails_with(I, "x = 1\ny = x + zz", "undefined variable 'zz'", 2, 9);
    ck_assert_fails_with(I, "\n  assert(1 == 2, \"nope\")", "assertion failed: nope", 2, 3);
    ck_assert_fails_with(I, "d = {a: 1}\nd.b", "key 'b' not found in dict", 0, 0);
    ck_assert_fails_with(I, "if tensor([1, 2]) { }", "ambiguous truth value of a tensor with 2 elements; use any/all, or where(cond, a, b) to choose elementwise", 0, 0);
    ck_assert_fails_with(I, "l = [1]\nl[5]", "list index out of range", 0, 0);
    ck_assert_int_eq(run("fn f() { break }\nf()"), 1);
}
END_TEST

START_TEST(interp_recursion_limit) {
    I->max_depth = 200;
    ck_assert_int_eq(run("fn r(n) { return r(n + 1) }\nr(0)"), 1);
    ck_assert_msg(strstr(I->err_msg, "maximum call depth exceeded") != NULL, "%s", I->err_msg);
    /* on the test's own (8 MiB) stack, the C-stack guard stops runaway recursion first */
    I->max_depth = 1000000;
    ck_assert_int_eq(run("fn r2(n) { return r2(n + 1) + 1 }\nr2(0)"), 1);
    ck_assert_msg(strstr(I->err_msg, "stack overflow") != NULL, "%s", I->err_msg);
    /* and the interpreter is usable afterwards */
    ck_assert_int_eq(run("ok = 1"), 0);
    ck_assert_double_eq(num("ok"), 1);
}
END_TEST

START_TEST(interp_equality_and_truthiness) {
    ck_assert_int_eq(run("a = [1, {x: \"s\"}] == [1, {x: \"s\"}]\nb = tensor([1]) == nil\nc = range(3) == [0, 1, 2]\n"
                         "d = 0 and 5\ne = nil or \"\"\nf = not tensor([0])"),
                     0);
    ck_assert(global("a").as.b);
    ck_assert(!global("b").as.b);
    ck_assert(global("c").as.b);
    ck_assert_double_eq(num("d"), 5);
    ck_assert_int_eq(global("e").type, VAL_STR);
    ck_assert(global("f").as.b);
}
END_TEST

START_TEST(interp_tensor_assignment_rebinds) {
    ck_assert_int_eq(run("t = zeros([2, 2])\nu = t\nt[0, 1] = 5\ns = item(sum(t))\nsu = item(sum(u))"), 0);
    ck_assert_double_eq(num("s"), 5);
    ck_assert_double_eq(num("su"), 0);   /* no operation changes a tensor another variable sees */
}
END_TEST

START_TEST(interp_operation_budget) {
    I->max_ops = 1000;
    ck_assert_int_eq(run("while true { }"), 1);
    ck_assert_msg(strstr(I->err_msg, "operation budget exceeded") != NULL, "%s", I->err_msg);
}
END_TEST

/* Running the same code many times in one interpreter does not grow live allocations:
 * tensors, heap objects, kept programs. */
START_TEST(interp_no_growth_across_runs) {
    const char *code = "x = zeros([10, 10]) * 2 + 1\ny = sum(x, axis=0)\nl = [x, {k: y}]\nfn f(v) { return v * 2 }\nz = f(3)\n";
    ck_assert_int_eq(run(code), 0);
    ck_assert_int_eq(run(code), 0);
    int64_t live = I->opsctx->tensor_live_bytes;
    int programs = I->nprograms;
    for (int i = 0; i < 200; i++) ck_assert_int_eq(run(code), 0);
    ck_assert_int_eq(I->opsctx->tensor_live_bytes, live);
    ck_assert_int_le(I->nprograms, programs + 200);   /* f's closure keeps each run's program */
    const char *plain = "a = ones(5) * 3\nb = tolist(a)\nc = {n: len(b)}\n";
    run(plain);
    programs = I->nprograms;
    live = I->opsctx->tensor_live_bytes;
    for (int i = 0; i < 200; i++) ck_assert_int_eq(run(plain), 0);
    ck_assert_int_eq(I->nprograms, programs);
    ck_assert_int_eq(I->opsctx->tensor_live_bytes, live);
}
END_TEST

Suite *interp_suite(void) {
    Suite *s = suite_create("interp");
    TCase *tc = tcase_create("eval");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, interp_arithmetic_and_printing);
    tcase_add_test(tc, interp_scope_and_closures);
    tcase_add_test(tc, interp_calls_and_keywords);
    tcase_add_test(tc, interp_errors_have_locations);
    tcase_add_test(tc, interp_recursion_limit);
    tcase_add_test(tc, interp_equality_and_truthiness);
    tcase_add_test(tc, interp_tensor_assignment_rebinds);
    tcase_add_test(tc, interp_operation_budget);
    tcase_add_test(tc, interp_no_growth_across_runs);
    tcase_add_test(tc, interp_without_static_hooks);
    suite_add_tcase(s, tc);
    return s;
}
