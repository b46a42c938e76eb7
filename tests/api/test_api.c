/* test_api.c - the public C API (include/tsl.h), used as a host would: this file is compiled
 * with -Iinclude alone, so it cannot reach the interpreter's internals. One suite per part of
 * the header: states, running and errors, globals and calls, tensors, host tools. */
#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tsl.h"

Suite *null_args_suite(void);   /* test_null_args.c */

static tsl_State *new_state(void) {
    tsl_State *S = NULL;
    ck_assert_int_eq(tsl_new(NULL, NULL, &S), TSL_OK);
    ck_assert_ptr_nonnull(S);
    return S;
}

/* Captures program output (the output hook) into a buffer. */
typedef struct {
    char s[4096];
    size_t len;
    int fail_with;   /* an errno value to fail every write with, or 0 */
} Capture;

static int capture(void *ud, const char *s, size_t n) {
    Capture *c = ud;
    if (c->fail_with) return c->fail_with;
    if (c->len + n >= sizeof c->s) n = sizeof c->s - 1 - c->len;
    memcpy(c->s + c->len, s, n);
    c->len += n;
    c->s[c->len] = 0;
    return 0;
}

static double number_of(tsl_State *S, const char *name) {
    double x = -1;
    ck_assert_int_eq(tsl_get_number(S, name, &x), TSL_OK);
    return x;
}

/* ---- states ---- */

START_TEST(test_version) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", TSL_VERSION_MAJOR, TSL_VERSION_MINOR, TSL_VERSION_PATCH);
    ck_assert_str_eq(tsl_version(), want);
    ck_assert_ptr_nonnull(strstr(tsl_backend(), "OpenBLAS"));
}
END_TEST

/* A host's allocation hook that counts what it holds and refuses after fail_after blocks. */
typedef struct {
    long long live;      /* bytes held now */
    long blocks;         /* allocations so far */
    long fail_after;     /* -1: never */
} Counter;

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    Counter *c = ud;
    if (nsize == 0) {
        c->live -= (long long)osize;
        free(ptr);
        return NULL;
    }
    if (c->fail_after >= 0 && c->blocks >= c->fail_after) return NULL;
    void *p = realloc(ptr, nsize);
    if (!p) return NULL;
    c->blocks++;
    c->live += (long long)nsize - (long long)(ptr ? osize : 0);
    return p;
}

/* Everything of a state, its handle included, comes from its hook and goes back to it; a
 * tensor handed to the host is a copy in the host's memory, so it is not the state's. */
START_TEST(test_custom_allocator) {
    Counter c = { 0, 0, -1 };
    tsl_State *S = NULL;
    ck_assert_int_eq(tsl_new(counting_alloc, &c, &S), TSL_OK);
    long long empty = c.live;
    ck_assert_int_gt(empty, (long long)sizeof(void *));
    ck_assert_int_eq(tsl_run_string(S, "<a>", "t = ones([1000])\nl = [t, 'x']\npush(l, l)", -1), TSL_OK);
    ck_assert_int_ge(c.live - empty, 4000);
    tsl_Tensor *t = NULL;
    ck_assert_int_eq(tsl_get_tensor(S, "t", &t), TSL_OK);
    long long held = c.live;
    tsl_tensor_free(t);
    ck_assert_int_eq(c.live, held);   /* the copy was never the state's */
    ck_assert_int_eq(tsl_get_tensor(S, "t", &t), TSL_OK);
    tsl_free(S);
    ck_assert_int_eq(c.live, 0);
    ck_assert_float_eq(((const float *)tsl_tensor_data(t))[999], 1.0f);   /* outlives the state */
    tsl_tensor_free(t);
    ck_assert_int_eq(tsl_new(NULL, NULL, NULL), TSL_BADARG);
}
END_TEST

/* A hook that refuses: tsl_new fails cleanly when even the state cannot be made; a run that
 * runs out of memory returns TSL_ERROR with "out of memory", and the state runs again after. */
START_TEST(test_out_of_memory_is_a_status) {
    for (long n = 0; n < 400; n += 7) {
        Counter c = { 0, 0, n };
        tsl_State *S = (tsl_State *)&c;
        tsl_Status st = tsl_new(counting_alloc, &c, &S);
        if (st != TSL_OK) {
            ck_assert_int_eq(st, TSL_ERROR);
            ck_assert_ptr_null(S);
            ck_assert_int_eq(c.live, 0);
            continue;
        }
        c.fail_after = c.blocks + 20;
        st = tsl_run_string(S, "<oom>", "l = []\nfor i in range(100) { push(l, str(i)) }\nt = randn([8, 8]) @ randn([8, 8])", -1);
        ck_assert_int_eq(st, TSL_ERROR);
        ck_assert_str_eq(tsl_error_message(S), "out of memory");
        ck_assert_ptr_nonnull(strstr(tsl_error_report(S), "error: out of memory"));
        c.fail_after = -1;
        ck_assert_int_eq(tsl_run_string(S, "<ok>", "y = 2 + 3\nfn grow(n) { return str(ones([n])) + str(n) }", -1), TSL_OK);
        ck_assert_double_eq(number_of(S, "y"), 5);
        /* a call and a tensor handed in run out of memory the same way */
        tsl_Tensor *t = NULL;
        ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 1, (int64_t[]){ 3 }, NULL, &t), TSL_OK);
        c.fail_after = c.blocks + (n % 5);
        tsl_Value r;
        ck_assert_int_eq(tsl_call(S, "grow", (tsl_Value[]){ tsl_number(50) }, 1, &r), TSL_ERROR);
        ck_assert(!strncmp(tsl_error_message(S), "out of memory", 13));   /* also "... allocating a tensor of N bytes" */
        ck_assert_int_eq(tsl_set_tensor(S, "t", t), TSL_ERROR);
        c.fail_after = -1;
        ck_assert_int_eq(tsl_set_tensor(S, "t", t), TSL_OK);
        ck_assert_int_eq(tsl_call(S, "grow", (tsl_Value[]){ tsl_number(2) }, 1, &r), TSL_OK);
        ck_assert_int_eq(r.type, TSL_STRING);
        tsl_tensor_free(t);
        tsl_free(S);
        ck_assert_int_eq(c.live, 0);
    }
}
END_TEST

/* Two states hold their own globals, whichever is made, used and freed first. The loop runs
 * every order: i's bit 0 picks which is created first, bit 1 which is used first, bit 2
 * which is freed first. */
START_TEST(test_two_states_every_order) {
    for (int order = 0; order < 8; order++) {
        tsl_State *S[2];
        int first = order & 1;
        S[first] = new_state();
        S[!first] = new_state();
        int used = (order >> 1) & 1;
        for (int k = 0; k < 2; k++) {
            int i = k ? !used : used;
            char code[160];
            snprintf(code, sizeof code, "x = %d\nl = [x, \"s\"]\nd = {a: l}\npush(l, d)\nt = ones([2, 2]) * %d\n"
                     "fn f(v) { return v + x }", i + 1, i + 1);
            ck_assert_int_eq(tsl_run_string(S[i], "<state>", code, -1), TSL_OK);
        }
        tsl_Tensor *kept = NULL;
        ck_assert_int_eq(tsl_get_tensor(S[1], "t", &kept), TSL_OK);
        int freed = (order >> 2) & 1;
        ck_assert_double_eq(number_of(S[!freed], "x"), !freed + 1);
        tsl_free(S[freed]);
        /* the other still runs, its cycles and functions intact */
        ck_assert_int_eq(tsl_run_string(S[!freed], "<after>", "y = f(10) + len(d.a)", -1), TSL_OK);
        ck_assert_double_eq(number_of(S[!freed], "y"), 10 + (!freed + 1) + 3);
        tsl_free(S[!freed]);
        /* a tensor handed out outlives its state */
        ck_assert_float_eq(((const float *)tsl_tensor_data(kept))[3], 2.0f);
        tsl_tensor_free(kept);
    }
}
END_TEST

/* One state after another: nothing of the first is left in the second. */
START_TEST(test_states_one_after_another) {
    tsl_Tensor *kept = NULL;
    for (int i = 0; i < 3; i++) {
        tsl_State *S = new_state();
        ck_assert_int_eq(tsl_get_number(S, "x", &(double){ 0 }), TSL_NOT_FOUND);   /* nothing left over */
        ck_assert_int_eq(tsl_run_string(S, "<s>", "x = 5\nl = [x]\npush(l, l)\nt = ones([3]) * x", -1), TSL_OK);
        ck_assert_double_eq(number_of(S, "x"), 5);
        tsl_tensor_free(kept);
        ck_assert_int_eq(tsl_get_tensor(S, "t", &kept), TSL_OK);
        tsl_free(S);
        ck_assert_float_eq(((const float *)tsl_tensor_data(kept))[2], 5.0f);   /* outlives its state */
    }
    tsl_tensor_free(kept);
}
END_TEST

START_TEST(test_free_null) { tsl_free(NULL); tsl_tensor_free(NULL); }
END_TEST

/* ---- running and errors ---- */

START_TEST(test_runtime_error_message_and_location) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_string(S, "<t>", "x = 1\ny = x + nope\n", -1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_error_message(S), "nope"));
    const char *file = NULL;
    int line = 0, col = 0;
    ck_assert_int_eq(tsl_error_location(S, &file, &line, &col), 1);
    ck_assert_str_eq(file, "<t>");
    ck_assert_int_eq(line, 2);
    ck_assert_int_eq(col, 9);
    char head[128];
    snprintf(head, sizeof head, "<t>:2:9: error: %s\n    y = x + nope\n            ^\n", tsl_error_message(S));
    ck_assert_str_eq(tsl_error_report(S), head);
    /* what ran before the error stays; the next success clears the error */
    ck_assert_double_eq(number_of(S, "x"), 1);
    ck_assert_str_eq(tsl_error_message(S), "");
    ck_assert_int_eq(tsl_error_location(S, NULL, NULL, NULL), 0);
    tsl_free(S);
}
END_TEST

/* A static fn that fails while it runs, called by the host: the host goes on with the state,
 * so what the fn did before the error is done, as eagerly (vm/static.c runs it again eagerly):
 * the captured counter counts the failed call too. */
START_TEST(test_call_static_fn_that_fails) {
    tsl_State *S = new_state();
    const char *src = "fn make() {\n  n = 0\n  static fn step(x, i) {\n    n = n + 1\n    return x[argmax(x) + i]\n  }\n"
                      "  return [step, fn() { n }]\n}\nc = make()\nstep = c[0]\nfn count() { return c[1]() }\n"
                      "x = tensor([1, 2, 3])\n";
    ck_assert_int_eq(tsl_run_string(S, "<t>", src, -1), TSL_OK);
    tsl_Tensor *x = NULL;
    ck_assert_int_eq(tsl_get_tensor(S, "x", &x), TSL_OK);
    tsl_Value r;
    for (int k = 0; k < 3; k++)   /* compiled on an early run: the later ones run the graph */
        ck_assert_int_eq(tsl_call(S, "step", (tsl_Value[]){ tsl_tensor(x), tsl_number(-1) }, 2, &r), TSL_OK);
    ck_assert_int_eq(tsl_call(S, "step", (tsl_Value[]){ tsl_tensor(x), tsl_number(5) }, 2, &r), TSL_ERROR);
    ck_assert_str_eq(tsl_error_message(S), "index 7 is out of bounds for axis 0 with size 3");
    ck_assert_int_eq(tsl_call(S, "count", NULL, 0, &r), TSL_OK);
    ck_assert_int_eq(r.type, TSL_NUMBER);
    ck_assert_double_eq(r.number, 4);
    tsl_tensor_free(x);
    tsl_free(S);
}
END_TEST

START_TEST(test_syntax_error) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_string(S, "bad.tsl", "x = (1 +\ny = 2", -1), TSL_ERROR);
    int line = 0, col = 0;
    const char *file;
    ck_assert_int_eq(tsl_error_location(S, &file, &line, &col), 1);
    ck_assert_str_eq(file, "bad.tsl");
    ck_assert_int_eq(line, 2);
    ck_assert_int_eq(strncmp(tsl_error_report(S), "bad.tsl:2:", 10), 0);
    ck_assert_int_eq(tsl_get_type(S, "y", &(tsl_Type){ 0 }), TSL_NOT_FOUND);   /* nothing ran */
    tsl_free(S);
}
END_TEST

START_TEST(test_incomplete_input) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", "fn f(x) {", 9, 0), TSL_INCOMPLETE);
    const char *more = "fn f(x) {\n  return x * 3\n}";
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", more, strlen(more), 0), TSL_OK);
    const char *shown = "unset";
    ck_assert_int_eq(tsl_result_text(S, &shown), TSL_OK);
    ck_assert_ptr_null(shown);   /* a definition has no value to show */
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", "f(\"ab\")", 7, 3), TSL_OK);
    ck_assert_int_eq(tsl_result_text(S, &shown), TSL_OK);
    ck_assert_str_eq(shown, "\"ababab\"");
    /* line_base: the error counts lines over the session */
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", "f(nope)", 7, 4), TSL_ERROR);
    int line = 0;
    ck_assert_int_eq(tsl_error_location(S, NULL, &line, NULL), 1);
    ck_assert_int_eq(line, 5);
    tsl_free(S);
}
END_TEST

START_TEST(test_output_hook) {
    tsl_State *S = new_state();
    Capture c = { .len = 0 };
    ck_assert_int_eq(tsl_set_output(S, capture, &c), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "print(\"hi\", 1 + 1)\nprint([1, 2])", -1), TSL_OK);
    ck_assert_str_eq(c.s, "hi 2\n[1, 2]\n");
    c.fail_with = 28;   /* ENOSPC: a failed write is an error of the program */
    ck_assert_int_eq(tsl_run_string(S, "<t>", "print(1)", -1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_error_message(S), "cannot write"));
    tsl_free(S);
}
END_TEST

/* Warnings go to the diagnostics hook, not to standard error. */
START_TEST(test_diagnostics_hook) {
    tsl_State *S = new_state();
    Capture out = { .len = 0 }, diag = { .len = 0 };
    tsl_set_output(S, capture, &out);
    tsl_set_diagnostics(S, capture, &diag);
    /* printoptions() in static code still runs the block eagerly, with the warning */
    ck_assert_int_eq(tsl_run_string(S, "w.tsl", "x = 1\nstatic { s = \"a\" + str(x); printoptions(precision=4) }\nprint(s)", -1), TSL_OK);
    ck_assert_str_eq(out.s, "a1\n");
    ck_assert_ptr_nonnull(strstr(diag.s, "w.tsl:2:1: warning: static block runs eagerly"));
    tsl_free(S);
}
END_TEST

START_TEST(test_exit_and_missing_file) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_string(S, "<t>", "exit(3)", -1), TSL_EXIT);
    ck_assert_int_eq(tsl_exit_code(S), 3);
    ck_assert_int_eq(tsl_run_file(S, "/nonexistent/dir/x.tsl"), TSL_IO);
    ck_assert_ptr_nonnull(strstr(tsl_error_report(S), "tsl: error: cannot read script"));
    ck_assert_int_eq(tsl_run_string(S, "<t>", "x = 1", -1), TSL_OK);
    ck_assert_int_eq(tsl_exit_code(S), 0);
    tsl_free(S);
}
END_TEST

/* Outside mpirun a world of one: finishing is at once and collectives stay identities. */
START_TEST(test_world_finish_alone) {
    ck_assert_int_eq(tsl_world_finish(NULL), TSL_BADARG);
    tsl_State *S = new_state();
    int rank = -1, size = -1;
    ck_assert_int_eq(tsl_world(&rank, &size), 0);
    ck_assert_int_eq(rank * 10 + size, 1);
    ck_assert_int_eq(tsl_world_finish(S), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "barrier()\nassert(equal(allreduce(tensor([1.5])), tensor([1.5])))", -1), TSL_OK);
    tsl_free(S);
}
END_TEST

START_TEST(test_interrupt) {
    tsl_State *S = new_state();
    tsl_interrupt(S);
    ck_assert_int_eq(tsl_interrupt_pending(S), 1);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "while true { }", -1), TSL_INTERRUPTED);
    ck_assert_str_eq(tsl_error_message(S), "interrupted");
    tsl_interrupt(S);
    tsl_interrupt_clear(S);
    ck_assert_int_eq(tsl_interrupt_pending(S), 0);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "x = 2", -1), TSL_OK);
    tsl_free(S);
}
END_TEST

/* Another thread stops a running state (tsl_interrupt is safe from one); the state runs
 * again after. */
static void *interrupt_later(void *S) {
    nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
    tsl_interrupt(S);
    return NULL;
}

START_TEST(test_interrupt_from_another_thread) {
    tsl_State *S = new_state();
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, interrupt_later, S), 0);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "i = 0\nwhile true { i += 1 }", -1), TSL_INTERRUPTED);
    pthread_join(th, NULL);
    ck_assert_str_eq(tsl_error_message(S), "interrupted");
    ck_assert_int_eq(tsl_run_string(S, "<t>", "x = i > 0", -1), TSL_OK);
    int b = 0;
    ck_assert_int_eq(tsl_get_bool(S, "x", &b), TSL_OK);
    ck_assert_int_eq(b, 1);
    tsl_free(S);
}
END_TEST

/* A state made on one thread runs on another with a small stack: recursion there is bounded
 * by that thread's stack (a clean error, not a crash), and shallow recursion works (the guard
 * was measured once, on the creating thread, and misjudged every other thread's stack). */
static void *recurse_on_small_stack(void *S) {
    static const char *src = "fn f(n) { if n == 0 { return 0 } return 1 + f(n - 1) }\nshallow = f(50)";
    if (tsl_run_string(S, "<t>", src, -1) != TSL_OK) return "shallow recursion failed";
    if (tsl_run_string(S, "<t>", "deep = f(9000)", -1) != TSL_ERROR) return "deep recursion did not fail";
    if (!strstr(tsl_error_message(S), "recursion too deep")) return "deep recursion: not a stack error";
    return NULL;
}

START_TEST(test_state_moves_to_a_small_stack_thread) {
    tsl_State *S = new_state();
    pthread_attr_t attr;
    pthread_t th;
    void *why = "not run";
    ck_assert_int_eq(pthread_attr_init(&attr), 0);
    ck_assert_int_eq(pthread_attr_setstacksize(&attr, 1u << 20), 0);
    ck_assert_int_eq(pthread_create(&th, &attr, recurse_on_small_stack, S), 0);
    pthread_join(th, &why);
    pthread_attr_destroy(&attr);
    ck_assert_msg(why == NULL, "%s: %s", (char *)why, tsl_error_message(S));
    ck_assert_int_eq(tsl_run_string(S, "<t>", "back = f(50)", -1), TSL_OK);   /* and on this thread again */
    tsl_free(S);
}
END_TEST

/* line_base counts lines on from the session's earlier ones: a line past INT_MAX is refused
 * before anything runs (it used to overflow), the last one that fits is reported as it is. */
START_TEST(test_line_base_limits) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", "x = 1", 5, INT_MAX), TSL_BADARG);
    ck_assert_ptr_nonnull(strstr(tsl_error_message(S), "line_base 2147483647"));
    ck_assert_int_eq(tsl_get_type(S, "x", &(tsl_Type){ 0 }), TSL_NOT_FOUND);   /* nothing ran */
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", "x = 1\ny = 2", 11, INT_MAX - 1), TSL_BADARG);
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", "x = 1", 5, -1), TSL_BADARG);
    ck_assert_str_eq(tsl_error_message(S), "line_base must not be negative, not -1");
    int line = 0, col = 0;
    const char *two = "x = 1\ny = nope";
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", two, strlen(two), INT_MAX - 2), TSL_ERROR);
    ck_assert_int_eq(tsl_error_location(S, NULL, &line, &col), 1);
    ck_assert_int_eq(line, INT_MAX);
    ck_assert_int_eq(col, 5);
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", "z = )", 5, INT_MAX - 1), TSL_ERROR);   /* a syntax error there */
    ck_assert_int_eq(tsl_error_location(S, NULL, &line, NULL), 1);
    ck_assert_int_eq(line, INT_MAX);
    tsl_free(S);
}
END_TEST

/* Every entry that takes text has the one limit: TSL_MAX_SOURCE bytes run, one more byte is
 * refused alike by tsl_run_string and tsl_run_input (which used to run it). */
START_TEST(test_source_limit_every_entry) {
    tsl_State *S = new_state();
    size_t n = (size_t)TSL_MAX_SOURCE + 1;
    char *text = malloc(n);
    ck_assert_ptr_nonnull(text);
    memset(text, ' ', n);
    memcpy(text, "x = 1", 5);
    ck_assert_int_eq(tsl_run_string(S, "<big>", text, (ptrdiff_t)n), TSL_BADARG);
    char refused[256];
    snprintf(refused, sizeof refused, "%s", tsl_error_message(S));
    ck_assert_str_eq(refused, "the source is larger than the limit of 67108864 bytes");
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", text, n, 0), TSL_BADARG);
    ck_assert_str_eq(tsl_error_message(S), refused);
    ck_assert_int_eq(tsl_get_type(S, "x", &(tsl_Type){ 0 }), TSL_NOT_FOUND);
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", text, n - 1, 0), TSL_OK);   /* at the limit */
    ck_assert_int_eq(tsl_get_type(S, "x", &(tsl_Type){ 0 }), TSL_OK);
    free(text);
    tsl_free(S);
}
END_TEST

START_TEST(test_options) {
    tsl_State *S = new_state();
    int64_t v = 0;
    ck_assert_int_eq(tsl_get_option(S, TSL_OPT_MAX_DEPTH, &v), TSL_OK);
    ck_assert_int_eq(v, 10000);
    ck_assert_int_eq(tsl_set_option(S, TSL_OPT_MAX_OPS, 1000), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "i = 0\nwhile true { i += 1 }", -1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_error_message(S), "operation budget exceeded"));
    ck_assert_int_eq(tsl_set_option(S, TSL_OPT_MAX_OPS, -1), TSL_BADARG);
    ck_assert_int_eq(tsl_set_option(S, (tsl_Option)99, 1), TSL_BADARG);
    ck_assert_int_eq(tsl_set_device(S, "cpu"), TSL_OK);
    /* the GPU where the CUDA plugin starts one, else the one clear error (tests/gpu/nogpu.sh) */
    tsl_Status gpu = tsl_set_device(S, "gpu");
    if (gpu != TSL_OK) {
        ck_assert_int_eq(gpu, TSL_UNSUPPORTED);
        const char *m = tsl_error_message(S);
        ck_assert(strncmp(m, "CUDA runtime not available: ", 28) == 0 || strcmp(m, "no CUDA device found") == 0);
    }
    ck_assert_int_eq(tsl_set_device(S, "cpu"), TSL_OK);
    ck_assert_int_eq(tsl_set_device(S, "tpu"), TSL_BADARG);
    const char *argv[] = { "one", "two" };
    ck_assert_int_eq(tsl_set_args(S, 2, argv), TSL_OK);
    ck_assert_int_eq(tsl_set_option(S, TSL_OPT_MAX_OPS, 0), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "n = len(args())\ns = args()[1]", -1), TSL_OK);
    ck_assert_double_eq(number_of(S, "n"), 2);
    const char *s;
    size_t len;
    ck_assert_int_eq(tsl_get_string(S, "s", &s, &len), TSL_OK);
    ck_assert_str_eq(s, "two");
    ck_assert_uint_eq(len, 3);
    tsl_free(S);
}
END_TEST

/* ---- globals and calls ---- */

START_TEST(test_globals_typed) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_string(S, "<t>", "n = nil\nb = true\nx = 2.5\ns = \"h\\u{e9}\"\nl = [1]", -1), TSL_OK);
    tsl_Type t;
    ck_assert_int_eq(tsl_get_type(S, "n", &t), TSL_OK);
    ck_assert_int_eq(t, TSL_NIL);
    ck_assert_int_eq(tsl_get_type(S, "l", &t), TSL_OK);
    ck_assert_int_eq(t, TSL_OTHER);
    int b = 0;
    ck_assert_int_eq(tsl_get_bool(S, "b", &b), TSL_OK);
    ck_assert_int_eq(b, 1);
    ck_assert_double_eq(number_of(S, "x"), 2.5);
    const char *s;
    size_t len;
    ck_assert_int_eq(tsl_get_string(S, "s", &s, &len), TSL_OK);
    ck_assert_str_eq(s, "h\xc3\xa9");
    ck_assert_uint_eq(len, 3);
    double x;
    ck_assert_int_eq(tsl_get_number(S, "s", &x), TSL_TYPE);
    ck_assert_str_eq(tsl_error_message(S), "global 's' is a string, not a number");
    ck_assert_int_eq(tsl_get_number(S, "missing", &x), TSL_NOT_FOUND);
    ck_assert_int_eq(tsl_set_number(S, "k", 4), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "k2 = k * k", -1), TSL_OK);
    ck_assert_double_eq(number_of(S, "k2"), 16);
    tsl_free(S);
}
END_TEST

START_TEST(test_call_function) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_string(S, "lib.tsl", "fn add(a, b) { return a + b }\nfn name(s) { return s + \"!\" }\n"
                                                  "fn bad(x) {\n  return x + nope\n}", -1), TSL_OK);
    tsl_Value r;
    ck_assert_int_eq(tsl_call(S, "add", (tsl_Value[]){ tsl_number(2), tsl_number(40) }, 2, &r), TSL_OK);
    ck_assert_int_eq(r.type, TSL_NUMBER);
    ck_assert_double_eq(r.number, 42);
    tsl_Value str = { .type = TSL_STRING, .string = "hey", .length = 3 };
    ck_assert_int_eq(tsl_call(S, "name", &str, 1, &r), TSL_OK);
    ck_assert_int_eq(r.type, TSL_STRING);
    ck_assert_str_eq(r.string, "hey!");
    /* a tensor argument, a tensor result */
    tsl_Tensor *t;
    ck_assert_int_eq(tsl_tensor_new(S, TSL_F32, 1, (int64_t[]){ 3 }, (float[]){ 1, 2, 3 }, &t), TSL_OK);
    ck_assert_int_eq(tsl_call(S, "add", (tsl_Value[]){ tsl_tensor(t), tsl_number(1) }, 2, &r), TSL_OK);
    ck_assert_int_eq(r.type, TSL_TENSOR);
    ck_assert_int_eq(tsl_tensor_dtype(r.tensor), TSL_F32);
    ck_assert_float_eq(((const float *)tsl_tensor_data(r.tensor))[2], 4.0f);
    tsl_tensor_free(r.tensor);
    tsl_tensor_free(t);
    /* an error inside the function: its message, and the location in the function's file */
    ck_assert_int_eq(tsl_call(S, "bad", (tsl_Value[]){ tsl_number(1) }, 1, &r), TSL_ERROR);
    const char *file;
    int line = 0;
    ck_assert_int_eq(tsl_error_location(S, &file, &line, NULL), 1);
    ck_assert_str_eq(file, "lib.tsl");
    ck_assert_int_eq(line, 4);
    ck_assert_int_eq(tsl_call(S, "add", (tsl_Value[]){ tsl_number(1) }, 1, &r), TSL_ERROR);
    ck_assert_int_eq(tsl_call(S, "nothing", NULL, 0, &r), TSL_NOT_FOUND);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "v = 1", -1), TSL_OK);
    ck_assert_int_eq(tsl_call(S, "v", NULL, 0, &r), TSL_TYPE);
    tsl_free(S);
}
END_TEST

/* ---- tensors ---- */

START_TEST(test_tensor_in_and_out) {
    tsl_State *S = new_state();
    double data[6] = { 1, 2, 3, 4, 5, 6 };
    tsl_Tensor *t;
    ck_assert_int_eq(tsl_tensor_new(S, TSL_F64, 2, (int64_t[]){ 2, 3 }, data, &t), TSL_OK);
    data[0] = 100;   /* copied: the tensor does not see it */
    ck_assert_int_eq(tsl_tensor_ndim(t), 2);
    ck_assert_int_eq(tsl_tensor_dim(t, 1), 3);
    ck_assert_int_eq(tsl_tensor_size(t), 6);
    ck_assert_int_eq(tsl_set_tensor(S, "t", t), TSL_OK);
    tsl_tensor_free(t);   /* the global keeps its own reference */
    ck_assert_int_eq(tsl_run_string(S, "<t>", "s = float(sum(t))\nu = t.T * 2", -1), TSL_OK);
    ck_assert_double_eq(number_of(S, "s"), 21);
    tsl_Tensor *u;
    ck_assert_int_eq(tsl_get_tensor(S, "u", &u), TSL_OK);
    ck_assert_int_eq(tsl_tensor_dim(u, 0), 3);
    double back[6];
    ck_assert_int_eq(tsl_tensor_copy_data(S, u, back, sizeof back), TSL_OK);
    ck_assert_double_eq(back[1], 8);   /* u[0][1] = t[1][0] * 2 */
    ck_assert_int_eq(tsl_tensor_copy_data(S, u, back, sizeof back - 1), TSL_BADARG);
    tsl_tensor_free(u);
    /* zeros when no data; shapes checked */
    ck_assert_int_eq(tsl_tensor_new(S, TSL_I64, 0, NULL, NULL, &t), TSL_OK);
    ck_assert_int_eq(((const int64_t *)tsl_tensor_data(t))[0], 0);
    tsl_tensor_free(t);
    ck_assert_int_eq(tsl_tensor_new(S, TSL_F32, 1, (int64_t[]){ -1 }, NULL, &t), TSL_BADARG);
    ck_assert_ptr_nonnull(strstr(tsl_error_message(S), "negative"));
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 33, (int64_t[33]){ 0 }, NULL, &t), TSL_BADARG);
    tsl_free(S);
}
END_TEST

START_TEST(test_npy_round_trip) {
    tsl_State *S = new_state();
    char path[] = "/tmp/tsl_api_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    tsl_Tensor *t, *back;
    ck_assert_int_eq(tsl_tensor_new(S, TSL_I64, 2, (int64_t[]){ 2, 2 }, (int64_t[]){ 7, 8, 9, -1 }, &t), TSL_OK);
    ck_assert_int_eq(tsl_npy_write(S, path, t), TSL_OK);
    ck_assert_int_eq(tsl_npy_read(S, path, &back), TSL_OK);
    ck_assert_int_eq(tsl_tensor_dtype(back), TSL_I64);
    ck_assert_int_eq(memcmp(tsl_tensor_data(back), tsl_tensor_data(t), 4 * sizeof(int64_t)), 0);
    tsl_tensor_free(back);
    tsl_tensor_free(t);
    unlink(path);
    ck_assert_int_eq(tsl_npy_read(S, path, &back), TSL_IO);
    ck_assert_ptr_null(back);
    ck_assert_str_ne(tsl_error_message(S), "");
    tsl_free(S);
}
END_TEST

/* ---- exported graphs ---- */

static char model_path[256];

/* Runs defs, then export(fn_and_args, model_path extra), in a state that is then freed: the
 * file is all the model needs. model_path is a file of this run's own (mkstemps), never a
 * fixed name another run could share. extra: more arguments of export (", dynamic=..."). */
static void export_to_model_path(const char *defs, const char *fn_and_args, const char *extra) {
    const char *dir = getenv("TMPDIR");
    snprintf(model_path, sizeof model_path, "%s/tsl_api_model_XXXXXX.tslg", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(model_path, 5);
    ck_assert_int_ge(fd, 0);
    close(fd);
    tsl_State *S = new_state();
    char code[512];
    snprintf(code, sizeof code, "%s\nexport(%s, \"%s\"%s)", defs, fn_and_args, model_path, extra);
    ck_assert_msg(tsl_run_string(S, "<export>", code, -1) == TSL_OK, "%s", tsl_error_report(S));
    tsl_free(S);
}

/* `static fn affine(x, w) { return relu(x @ w + 1) }` for x f32 [2, 3], w f32 [3, 2]. */
static void export_model(void) {
    export_to_model_path("static fn affine(x, w) { return relu(x @ w + 1) }", "affine, [ones([2, 3]), ones([3, 2])]", "");
}

/* The model at model_path, loaded, and a session on it. */
static tsl_Session *open_session(tsl_Model **m) {
    ck_assert_int_eq(tsl_model_load(NULL, model_path, m), TSL_OK);
    tsl_Session *s = NULL;
    ck_assert_int_eq(tsl_session_new(*m, &s), TSL_OK);
    return s;
}

/* Frees what a model test made: its inputs, the session, the model and its file. */
static void close_session(tsl_Session *s, tsl_Model *m, tsl_Tensor **in, int nin) {
    for (int i = 0; i < nin; i++) tsl_tensor_free(in[i]);
    tsl_session_free(s);
    tsl_model_free(m);
    unlink(model_path);
}

START_TEST(test_model_run) {
    export_model();
    tsl_Model *m;
    ck_assert_int_eq(tsl_model_load(NULL, model_path, &m), TSL_OK);
    ck_assert_int_eq(tsl_model_num_inputs(m), 2);
    ck_assert_int_eq(tsl_model_num_outputs(m), 1);
    tsl_DType dt;
    int ndim;
    int64_t shape[TSL_MAX_DIMS];
    const char *name;
    ck_assert_int_eq(tsl_model_input(m, 1, &dt, &ndim, shape, &name), TSL_OK);
    ck_assert_int_eq(dt, TSL_F32);
    ck_assert_int_eq(ndim, 2);
    ck_assert_int_eq(shape[0], 3);
    ck_assert_str_eq(name, "w");
    ck_assert_int_eq(tsl_model_input(m, 2, NULL, NULL, NULL, NULL), TSL_BADARG);
    ck_assert_int_eq(tsl_model_output(m, 0, &dt, &ndim, shape), TSL_OK);
    ck_assert_int_eq(shape[1], 2);
    /* what help() of the loaded graph and `tsl run --help` print: [2, 3] @ [3, 2] is [2, 2] */
    ck_assert_str_eq(tsl_model_signature(m), "affine(x, w)\n  a graph exported by export(): 2 inputs, 1 output\n"
                                             "  input 1: x: f32[2, 3]\n  input 2: w: f32[3, 2]\n  output 1: f32[2, 2]\n");
    tsl_Session *s;
    ck_assert_int_eq(tsl_session_new(m, &s), TSL_OK);
    tsl_Tensor *in[2], *out = NULL;
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ 2, 3 }, (float[]){ 1, 2, 3, -4, -5, -6 }, &in[0]), TSL_OK);
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ 3, 2 }, (float[]){ 1, 0, 0, 1, 1, -1 }, &in[1]), TSL_OK);
    ck_assert_msg(tsl_session_run(s, in, 2, &out, 1) == TSL_OK, "%s", tsl_session_error(s));
    const float *y = tsl_tensor_data(out);   /* relu([[4, -1], [-10, 1]] + 1) */
    ck_assert_float_eq(y[0], 5);
    ck_assert_float_eq(y[1], 0);
    ck_assert_float_eq(y[2], 0);
    ck_assert_float_eq(y[3], 2);
    tsl_tensor_free(out);
    /* a wrong shape is an error that names the argument */
    tsl_Tensor *wrong;
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ 2, 2 }, NULL, &wrong), TSL_OK);
    tsl_Tensor *bad_in[2] = { in[0], wrong };
    ck_assert_int_eq(tsl_session_run(s, bad_in, 2, &out, 1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_session_error(s), "'w' must be f32 [3, 2], got f32 [2, 2]"));
    ck_assert_int_eq(tsl_session_run(s, in, 1, &out, 1), TSL_ERROR);   /* one input short */
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 2), TSL_BADARG);
    tsl_tensor_free(wrong);
    /* and the session still runs */
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 1), TSL_OK);
    ck_assert_float_eq(((const float *)tsl_tensor_data(out))[3], 2);
    tsl_tensor_free(out);
    close_session(s, m, in, 2);
}
END_TEST

/* affine exported with a symbolic batch (dynamic={"x": [0]}): the input's shape says -1 there,
 * and sessions take any number of rows (1, the 2 of the export, 7, 300), each row what
 * relu(x @ w + 1) is (small integers: exact in f32); w's shape is still checked. */
START_TEST(test_model_symbolic_batch) {
    export_to_model_path("static fn affine(x, w) { return relu(x @ w + 1) }", "affine, [ones([2, 3]), ones([3, 2])]",
                         ", dynamic={\"x\": [0]}");
    tsl_Model *m;
    tsl_Session *s = open_session(&m);
    tsl_DType dt;
    int ndim;
    int64_t shape[TSL_MAX_DIMS];
    ck_assert_int_eq(tsl_model_input(m, 0, &dt, &ndim, shape, NULL), TSL_OK);
    ck_assert_int_eq(ndim, 2);
    ck_assert_int_eq(shape[0], -1);
    ck_assert_int_eq(shape[1], 3);
    ck_assert_int_eq(tsl_model_output(m, 0, &dt, &ndim, shape), TSL_OK);
    ck_assert_int_eq(shape[0], -1);
    ck_assert_int_eq(shape[1], 2);
    ck_assert_str_eq(tsl_model_signature(m), "affine(x, w)\n  a graph exported by export(): 2 inputs, 1 output\n"
                                             "  input 1: x: f32[?, 3]\n  input 2: w: f32[3, 2]\n  output 1: f32[?, 2]\n");
    tsl_Tensor *in[2], *out = NULL;
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ 3, 2 }, (float[]){ 1, 0, 0, 1, 1, -1 }, &in[1]), TSL_OK);
    static float x[300 * 3];
    for (int i = 0; i < 300 * 3; i++) x[i] = (float)(i % 7 - 3);
    int64_t sizes[] = { 1, 2, 7, 300 };
    for (int k = 0; k < 4; k++) {
        int64_t n = sizes[k];
        ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ n, 3 }, x, &in[0]), TSL_OK);
        ck_assert_msg(tsl_session_run(s, in, 2, &out, 1) == TSL_OK, "%s", tsl_session_error(s));
        ck_assert_int_eq(tsl_tensor_ndim(out), 2);
        ck_assert_int_eq(tsl_tensor_dim(out, 0), n);
        ck_assert_int_eq(tsl_tensor_dim(out, 1), 2);
        const float *y = tsl_tensor_data(out);
        for (int64_t r = 0; r < n; r++) {   /* w's columns: x0 + x2 and x1 - x2 */
            float a = x[3 * r] + x[3 * r + 2] + 1, b = x[3 * r + 1] - x[3 * r + 2] + 1;
            ck_assert_float_eq(y[2 * r], a > 0 ? a : 0);
            ck_assert_float_eq(y[2 * r + 1], b > 0 ? b : 0);
        }
        tsl_tensor_free(out);
        tsl_tensor_free(in[0]);
    }
    /* the axis not marked is checked as before */
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ 4, 2 }, NULL, &in[0]), TSL_OK);
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_session_error(s), "'x' must be f32 [?, 3], got f32 [4, 2]"));
    close_session(s, m, in, 2);
}
END_TEST

/* `static fn spin(x, n)`, whose loop runs n times (n a 0-d f64 tensor: a value of the run,
 * not of the export). */
static void export_spin(void) {
    export_to_model_path("static fn spin(x, n) {\n  i = 0\n  while i < n { i = i + 1 }\n  return x + i\n}",
                         "spin, [ones([2]), tensor(1.0, dtype=\"f64\")]", "");
}

static void *interrupt_session_later(void *s) {
    nanosleep(&(struct timespec){ 0, 200 * 1000 * 1000 }, NULL);
    tsl_session_interrupt(s);
    return NULL;
}

/* Another thread stops a session in a loop that would run for days: TSL_INTERRUPTED, the
 * location in the model; the session then runs again. */
START_TEST(test_session_interrupt_from_another_thread) {
    export_spin();
    tsl_Model *m;
    tsl_Session *s = open_session(&m);
    tsl_Tensor *in[2], *out = NULL;
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 1, (int64_t[]){ 2 }, (float[]){ 1, 2 }, &in[0]), TSL_OK);
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F64, 0, NULL, (double[]){ 1e15 }, &in[1]), TSL_OK);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, interrupt_session_later, s), 0);
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 1), TSL_INTERRUPTED);
    pthread_join(th, NULL);
    ck_assert_ptr_null(out);
    const char *err = tsl_session_error(s);
    ck_assert_msg(strstr(err, ".tslg:3:") && strstr(err, ": interrupted"), "%s", err);
    tsl_tensor_free(in[1]);
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F64, 0, NULL, (double[]){ 3 }, &in[1]), TSL_OK);
    ck_assert_msg(tsl_session_run(s, in, 2, &out, 1) == TSL_OK, "%s", tsl_session_error(s));
    ck_assert_float_eq(((const float *)tsl_tensor_data(out))[1], 5.0f);   /* 2 + 3 */
    tsl_tensor_free(out);
    /* the time limit: this run and every later one stop */
    tsl_session_timeout(s);
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_session_error(s), "time limit exceeded (--timeout)"));
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 1), TSL_ERROR);
    close_session(s, m, in, 2);
}
END_TEST

/* A session's memory limit, as --max-memory: a result larger than it is an error, and the
 * same run fits without it. */
START_TEST(test_session_max_memory) {
    export_model();
    tsl_Model *m;
    tsl_Session *s = open_session(&m);
    tsl_Tensor *in[2], *out = NULL;
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ 2, 3 }, NULL, &in[0]), TSL_OK);
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 2, (int64_t[]){ 3, 2 }, NULL, &in[1]), TSL_OK);
    ck_assert_int_eq(tsl_session_set_option(s, TSL_OPT_MAX_MEMORY, 8), TSL_OK);
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_session_error(s), "--max-memory (8 bytes)"));
    ck_assert_int_eq(tsl_session_set_option(s, TSL_OPT_MAX_MEMORY, -1), TSL_BADARG);
    ck_assert_str_eq(tsl_session_error(s), "option 3: the value must not be negative");
    ck_assert_int_eq(tsl_session_set_option(s, TSL_OPT_MAX_MEMORY, 0), TSL_OK);   /* no limit */
    ck_assert_int_eq(tsl_session_run(s, in, 2, &out, 1), TSL_OK);
    ck_assert_float_eq(((const float *)tsl_tensor_data(out))[0], 1.0f);   /* relu(0 + 1) */
    tsl_tensor_free(out);
    close_session(s, m, in, 2);
}
END_TEST

/* A file that is not a graph, a truncated one, a missing one: each an error with a reason,
 * no model. */
START_TEST(test_model_corrupt) {
    export_model();
    FILE *f = fopen(model_path, "rb");
    ck_assert_ptr_nonnull(f);
    static unsigned char bytes[1 << 16];
    size_t n = fread(bytes, 1, sizeof bytes, f);
    fclose(f);
    ck_assert_uint_gt(n, 64);
    tsl_State *S = new_state();
    tsl_Model *m = (tsl_Model *)&m;
    ck_assert_int_eq(tsl_model_load_bytes(S, bytes, n, "mem.tslg", &m), TSL_OK);
    tsl_model_free(m);
    ck_assert_int_eq(tsl_model_load_bytes(S, bytes, n / 2, "half.tslg", &m), TSL_ERROR);
    ck_assert_ptr_null(m);
    ck_assert_str_ne(tsl_error_message(S), "");
    ck_assert_int_eq(tsl_model_load_bytes(S, "not a graph file at all", 23, "text.tslg", &m), TSL_ERROR);
    ck_assert_str_ne(tsl_error_message(S), "");
    unlink(model_path);
    ck_assert_int_eq(tsl_model_load(S, model_path, &m), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_error_message(S), model_path));
    tsl_free(S);
}
END_TEST

/* ---- host tools ---- */

START_TEST(test_complete) {
    tsl_State *S = new_state();
    const char *c = NULL;
    /* before anything ran: the built-ins */
    ck_assert_int_eq(tsl_complete(S, "pri", 0, &c), TSL_OK);
    ck_assert_str_eq(c, "print");
    ck_assert_int_eq(tsl_run_string(S, "<t>", "cfg = {alpha: 1, beta: 2, \"not a name\": 3}\nw = ones([2])", -1), TSL_OK);
    ck_assert_int_eq(tsl_complete(S, "cfg.al", 0, &c), TSL_OK);
    ck_assert_str_eq(c, "cfg.alpha");
    ck_assert_int_eq(tsl_complete(S, "cfg.al", 1, &c), TSL_OK);
    ck_assert_ptr_null(c);
    int n = 0;
    for (; tsl_complete(S, "cfg.", n, &c) == TSL_OK && c; n++) ck_assert_str_ne(c, "cfg.not a name");
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(tsl_complete(S, "w.sh", 0, &c), TSL_OK);
    ck_assert_str_eq(c, "w.shape");
    /* a tensor's methods: the ops whose first parameter is a tensor (spec section 12) */
    ck_assert_int_eq(tsl_complete(S, "w.su", 0, &c), TSL_OK);
    ck_assert_str_eq(c, "w.sum");
    ck_assert_int_eq(tsl_complete(S, "w.su", 1, &c), TSL_OK);
    ck_assert_ptr_null(c);   /* sub is the op of '-' only: no built-in, no method */
    ck_assert_int_eq(tsl_complete(S, "w.zer", 0, &c), TSL_OK);
    ck_assert_ptr_null(c);   /* zeros takes a shape first */
    for (n = 0; tsl_complete(S, "w.arg", n, &c) == TSL_OK && c; n++) {}
    ck_assert_int_ge(n, 3);   /* argmax, argmin, argsort */
    /* after the globals, the keywords (try and catch too); never after a '.' */
    ck_assert_int_eq(tsl_complete(S, "whi", 0, &c), TSL_OK);
    ck_assert_str_eq(c, "while");
    ck_assert_int_eq(tsl_complete(S, "catc", 0, &c), TSL_OK);
    ck_assert_str_eq(c, "catch");
    ck_assert_int_eq(tsl_complete(S, "cfg.whi", 0, &c), TSL_OK);
    ck_assert_ptr_null(c);
    tsl_free(S);
}
END_TEST

/* What a display hook is handed: the mime type, the bytes, the id (a copy of the first call
 * of each kind, and the last call's text). */
typedef struct {
    int calls, pngs, texts, fail_with;
    unsigned char png_head[24];
    char last_text[256], last_id[64];
} Shown;

static int show(void *ud, const char *mime, const void *data, size_t n, const char *id) {
    Shown *d = ud;
    d->calls++;
    if (d->fail_with) return d->fail_with;
    if (!strcmp(mime, "image/png") && n >= sizeof d->png_head) {
        if (!d->pngs++) memcpy(d->png_head, data, sizeof d->png_head);
    } else if (!strcmp(mime, "text/plain") && n < sizeof d->last_text) {
        d->texts++;
        memcpy(d->last_text, data, n);
        d->last_text[n] = 0;
        snprintf(d->last_id, sizeof d->last_id, "%s", id ? id : "(null)");
    }
    return 0;
}

/* plot.show() hands the host a PNG; a progress bar is a text display redrawn under its id;
 * without a hook plot.show() says how to save, and the bar goes to the diagnostics hook. */
START_TEST(test_display_hook) {
    tsl_State *S = new_state();
    Capture diag = { .len = 0 };
    Shown d = { 0 };
    tsl_set_diagnostics(S, capture, &diag);
    ck_assert_int_eq(tsl_set_display(S, show, &d), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "import plot\nplot.line([1, 3, 2])\nr = plot.show()", -1), TSL_OK);
    ck_assert_int_eq(d.pngs, 1);
    ck_assert_mem_eq(d.png_head, "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\x02\x80\0\0\x01\xe0", 24);   /* 640 x 480 */
    ck_assert_int_eq(tsl_get_type(S, "r", &(tsl_Type){ 0 }), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "for i in progress(range(3), desc=\"d\") { }", -1), TSL_OK);
    ck_assert_int_ge(d.texts, 2);   /* drawn when it starts, and when it ends */
    ck_assert_str_eq(d.last_id, "tsl-progress-1");
    ck_assert_int_eq(strncmp(d.last_text, "d: 100%|########################| 3/3 [", 39), 0);
    ck_assert_ptr_null(strpbrk(d.last_text, "\r\n\x1b"));
    ck_assert_str_eq(diag.s, "");
    d.fail_with = 5;   /* EIO: a figure the host cannot show is the program's error */
    ck_assert_int_eq(tsl_run_string(S, "<t>", "plot.line([1])\nplot.show()", -1), TSL_ERROR);
    ck_assert_ptr_nonnull(strstr(tsl_error_message(S), "plot.show: the host could not display the figure"));
    ck_assert_int_eq(tsl_set_display(S, NULL, NULL), TSL_OK);
    int calls = d.calls;
    ck_assert_int_eq(tsl_run_string(S, "<t>", "plot.line([1])\nplot.show()\nfor i in progress([1, 2]) { }", -1), TSL_OK);
    ck_assert_int_eq(d.calls, calls);
    ck_assert_ptr_nonnull(strstr(diag.s, "plot.show: no display here"));
    ck_assert_ptr_nonnull(strstr(diag.s, "100%|########################| 2/2 ["));
    tsl_free(S);
}
END_TEST

/* The parser alone: whole, open or wrong, and nothing runs. */
START_TEST(test_check_input) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_check_input(S, "x = 1\nfn f(a) {\n  return a\n}", 28), TSL_OK);
    ck_assert_int_eq(tsl_get_type(S, "x", &(tsl_Type){ 0 }), TSL_NOT_FOUND);
    ck_assert_int_eq(tsl_check_input(S, "fn f(a) {\n  return a", 20), TSL_INCOMPLETE);
    ck_assert_int_eq(tsl_check_input(S, "xs = [1, 2", 10), TSL_INCOMPLETE);
    ck_assert_int_eq(tsl_check_input(S, "x = )", 5), TSL_ERROR);
    ck_assert_int_eq(strncmp(tsl_error_message(S), "1:5: ", 5), 0);
    ck_assert_int_eq(tsl_check_input(S, "x = 1)", 5), TSL_OK);   /* len counts: the ')' is past it */
    ck_assert_int_eq(tsl_check_input(S, "", 0), TSL_OK);
    tsl_free(S);
}
END_TEST

START_TEST(test_help_vars_dis) {
    tsl_State *S = new_state();
    const char *text;
    ck_assert_int_eq(tsl_help_text(S, "len", &text), TSL_OK);
    ck_assert_ptr_nonnull(strstr(text, "len("));
    ck_assert_int_eq(tsl_dis_text(S, &text), TSL_ERROR);
    ck_assert_str_eq(tsl_error_message(S), "dis: no static code has run yet");
    ck_assert_int_eq(tsl_run_string(S, "<t>", "x = 3\nstatic { y = ones([2]) * x }", -1), TSL_OK);
    ck_assert_int_eq(tsl_dis_text(S, &text), TSL_OK);
    ck_assert_ptr_nonnull(strstr(text, "== last static block:"));
    ck_assert_int_eq(tsl_vars_text(S, &text), TSL_OK);
    ck_assert_ptr_nonnull(strstr(text, "  x                number    3\n"));
    ck_assert_ptr_null(strstr(text, "print"));   /* built-ins are not the program's variables */
    tsl_free(S);
}
END_TEST

/* tsl_reload (the REPL's :reload): the module read again, its dict kept with new members */
START_TEST(test_reload) {
    tsl_State *S = new_state();
    ck_assert_int_eq(tsl_run_string(S, "<t>", "import nn\nheld = nn\nnn.extra = 1", -1), TSL_OK);
    ck_assert_int_eq(tsl_reload(S, "nn"), TSL_OK);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "assert(get(held, \"extra\", 0) == 0 and type(held.linear) == \"function\")", -1), TSL_OK);
    ck_assert_int_eq(tsl_reload(S, "no_such_module"), TSL_ERROR);
    ck_assert_str_eq(tsl_error_message(S), "module 'no_such_module' not found");
    ck_assert_int_eq(tsl_reload(S, "1x"), TSL_BADARG);
    ck_assert_int_eq(tsl_reload(S, "a.b"), TSL_BADARG);
    tsl_free(S);
}
END_TEST

START_TEST(test_escape) {
    char buf[8];
    ck_assert_uint_eq(tsl_escape("a\x1b[", 3, buf, sizeof buf), 6);
    ck_assert_str_eq(buf, "a\\x1b[");
    ck_assert_uint_eq(tsl_escape("a\nbcdefgh", 9, buf, sizeof buf), 10);
    ck_assert_str_eq(buf, "a\\nbcde");   /* cut to the buffer, still terminated */
}
END_TEST

static Suite *api_suite(void) {
    Suite *s = suite_create("api");
    TCase *states = tcase_create("states");
    tcase_add_test(states, test_version);
    tcase_add_test(states, test_custom_allocator);
    tcase_add_test(states, test_out_of_memory_is_a_status);
    tcase_add_test(states, test_two_states_every_order);
    tcase_add_test(states, test_states_one_after_another);
    tcase_add_test(states, test_free_null);
    suite_add_tcase(s, states);
    TCase *run = tcase_create("run");
    tcase_add_test(run, test_runtime_error_message_and_location);
    tcase_add_test(run, test_syntax_error);
    tcase_add_test(run, test_incomplete_input);
    tcase_add_test(run, test_output_hook);
    tcase_add_test(run, test_diagnostics_hook);
    tcase_add_test(run, test_exit_and_missing_file);
    tcase_add_test(run, test_world_finish_alone);
    tcase_add_test(run, test_interrupt);
    tcase_add_test(run, test_interrupt_from_another_thread);
    tcase_add_test(run, test_state_moves_to_a_small_stack_thread);
    tcase_add_test(run, test_line_base_limits);
    tcase_add_test(run, test_source_limit_every_entry);
    tcase_add_test(run, test_options);
    suite_add_tcase(s, run);
    TCase *values = tcase_create("values");
    tcase_add_test(values, test_globals_typed);
    tcase_add_test(values, test_call_function);
    tcase_add_test(values, test_call_static_fn_that_fails);
    tcase_add_test(values, test_tensor_in_and_out);
    tcase_add_test(values, test_npy_round_trip);
    suite_add_tcase(s, values);
    TCase *models = tcase_create("models");
    tcase_add_test(models, test_model_run);
    tcase_add_test(models, test_model_symbolic_batch);
    tcase_add_test(models, test_model_corrupt);
    tcase_add_test(models, test_session_interrupt_from_another_thread);
    tcase_add_test(models, test_session_max_memory);
    suite_add_tcase(s, models);
    TCase *tools = tcase_create("tools");
    tcase_add_test(tools, test_complete);
    tcase_add_test(tools, test_display_hook);
    tcase_add_test(tools, test_check_input);
    tcase_add_test(tools, test_help_vars_dis);
    tcase_add_test(tools, test_reload);
    tcase_add_test(tools, test_escape);
    suite_add_tcase(s, tools);
    return s;
}

int main(void) {
    unsetenv("TSL_WARN");      /* the diagnostics test wants the default warning */
    unsetenv("TSL_EXPLAIN");
    SRunner *sr = srunner_create(api_suite());
    srunner_add_suite(sr, null_args_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
