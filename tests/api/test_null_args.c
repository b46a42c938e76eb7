/* test_null_args.c - every function of include/tsl.h, called with each of its pointer
 * arguments NULL in turn (the others valid): it returns TSL_BADARG, or what its comment says
 * NULL means, and never crashes (each case runs in its own process, so a crash fails only it).
 *
 * The list of functions is read from the header itself, so a function added there without a
 * case here fails test_every_function_has_a_case; `make test` checks that the header names
 * exactly what libtsl.so exports. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tsl.h"

/* What the cases work on: a state with globals, a tensor, a model and its session. */
static tsl_State *S;
static tsl_Tensor *T;          /* f32 [2, 3]: the model's first input */
static tsl_Model *M;
static tsl_Session *SS;
static char model_path[256];
static unsigned char model_bytes[1 << 16];
static size_t model_len;

static void setup(void) {
    ck_assert_int_eq(tsl_new(NULL, NULL, &S), TSL_OK);
    const char *dir = getenv("TMPDIR");
    snprintf(model_path, sizeof model_path, "%s/tsl_null_XXXXXX.tslg", dir && *dir ? dir : "/tmp");
    int fd = mkstemps(model_path, 5);
    ck_assert_int_ge(fd, 0);
    close(fd);
    char code[512];
    snprintf(code, sizeof code, "static fn affine(x, w) { return relu(x @ w + 1) }\n"
             "export(affine, [ones([2, 3]), ones([3, 2])], \"%s\")\n"
             "x = 1\nb = true\ns = \"str\"\nt = ones([2])\nfn f(a) { return a }", model_path);
    ck_assert_msg(tsl_run_string(S, "<setup>", code, -1) == TSL_OK, "%s", tsl_error_report(S));
    ck_assert_int_eq(tsl_tensor_new(S, TSL_F32, 2, (int64_t[]){ 2, 3 }, NULL, &T), TSL_OK);
    ck_assert_int_eq(tsl_model_load(S, model_path, &M), TSL_OK);
    ck_assert_int_eq(tsl_session_new(M, &SS), TSL_OK);
    FILE *f = fopen(model_path, "rb");
    ck_assert_ptr_nonnull(f);
    model_len = fread(model_bytes, 1, sizeof model_bytes, f);
    fclose(f);
}

static void teardown(void) {
    tsl_session_free(SS);
    tsl_model_free(M);
    tsl_tensor_free(T);
    tsl_free(S);
    unlink(model_path);
}

/* ---- one function per entry of the header: the NULL cases ---- */

static void null_tsl_version(void) { ck_assert_ptr_nonnull(tsl_version()); }   /* no pointer arguments */
static void null_tsl_backend(void) { ck_assert_ptr_nonnull(tsl_backend()); }
static void null_tsl_threads(void) { ck_assert_int_ge(tsl_threads(), 1); }
static void null_tsl_set_threads(void) { ck_assert_int_eq(tsl_set_threads(-1), TSL_BADARG); }
static void null_tsl_world_abort(void) { tsl_world_abort(1); }   /* not in a job: returns at once */

static void null_tsl_new(void) {
    ck_assert_int_eq(tsl_new(NULL, NULL, NULL), TSL_BADARG);
    tsl_State *s = NULL;
    ck_assert_int_eq(tsl_new(NULL, NULL, &s), TSL_OK);   /* alloc NULL: realloc and free */
    tsl_free(s);
}

static void null_tsl_free(void) { tsl_free(NULL); }

static void null_tsl_set_output(void) {
    ck_assert_int_eq(tsl_set_output(NULL, NULL, NULL), TSL_BADARG);
    ck_assert_int_eq(tsl_set_output(S, NULL, NULL), TSL_OK);   /* fn NULL: the default */
}

static void null_tsl_set_diagnostics(void) {
    ck_assert_int_eq(tsl_set_diagnostics(NULL, NULL, NULL), TSL_BADARG);
    ck_assert_int_eq(tsl_set_diagnostics(S, NULL, NULL), TSL_OK);
}

static void null_tsl_set_display(void) {
    ck_assert_int_eq(tsl_set_display(NULL, NULL, NULL), TSL_BADARG);
    ck_assert_int_eq(tsl_set_display(S, NULL, NULL), TSL_OK);   /* fn NULL: no display */
}

static void null_tsl_check_input(void) {
    ck_assert_int_eq(tsl_check_input(NULL, "x", 1), TSL_BADARG);
    ck_assert_int_eq(tsl_check_input(S, NULL, 1), TSL_BADARG);
}

static void null_tsl_set_option(void) { ck_assert_int_eq(tsl_set_option(NULL, TSL_OPT_MAX_OPS, 1), TSL_BADARG); }

static void null_tsl_get_option(void) {
    int64_t v;
    ck_assert_int_eq(tsl_get_option(NULL, TSL_OPT_MAX_OPS, &v), TSL_BADARG);
    ck_assert_int_eq(tsl_get_option(S, TSL_OPT_MAX_OPS, NULL), TSL_BADARG);
}

static void null_tsl_set_device(void) {
    ck_assert_int_eq(tsl_set_device(NULL, "cpu"), TSL_BADARG);
    ck_assert_int_eq(tsl_set_device(S, NULL), TSL_BADARG);
}

/* A NULL entry is refused before the old arguments are dropped. */
static void null_tsl_set_args(void) {
    const char *keep[] = { "kept" }, *holed[] = { "a", NULL };
    ck_assert_int_eq(tsl_set_args(S, 1, keep), TSL_OK);
    ck_assert_int_eq(tsl_set_args(NULL, 1, keep), TSL_BADARG);
    ck_assert_int_eq(tsl_set_args(S, 1, NULL), TSL_BADARG);
    ck_assert_int_eq(tsl_set_args(S, 2, holed), TSL_BADARG);
    ck_assert_str_eq(tsl_error_message(S), "argument 2 of 2 is NULL");
    ck_assert_int_eq(tsl_run_string(S, "<t>", "a = args()[0]", -1), TSL_OK);
    const char *a;
    ck_assert_int_eq(tsl_get_string(S, "a", &a, NULL), TSL_OK);
    ck_assert_str_eq(a, "kept");
    ck_assert_int_eq(tsl_set_args(S, 0, NULL), TSL_OK);   /* no arguments */
}

static void null_tsl_set_stdlib_path(void) {
    ck_assert_int_eq(tsl_set_stdlib_path(NULL, "stdlib"), TSL_BADARG);
    ck_assert_int_eq(tsl_set_stdlib_path(S, NULL), TSL_BADARG);
}

static void null_tsl_run_string(void) {
    ck_assert_int_eq(tsl_run_string(NULL, "<t>", "x = 1", -1), TSL_BADARG);
    ck_assert_int_eq(tsl_run_string(S, NULL, "x = 1", -1), TSL_BADARG);
    ck_assert_int_eq(tsl_run_string(S, "<t>", NULL, -1), TSL_BADARG);
    ck_assert_int_eq(tsl_run_string(S, "<t>", NULL, 0), TSL_BADARG);
}

static void null_tsl_run_file(void) {
    ck_assert_int_eq(tsl_run_file(NULL, "x.tsl"), TSL_BADARG);
    ck_assert_int_eq(tsl_run_file(S, NULL), TSL_BADARG);
}

static void null_tsl_run_input(void) {
    ck_assert_int_eq(tsl_run_input(NULL, "<stdin>", "1", 1, 0), TSL_BADARG);
    ck_assert_int_eq(tsl_run_input(S, NULL, "1", 1, 0), TSL_BADARG);
    ck_assert_int_eq(tsl_run_input(S, "<stdin>", NULL, 1, 0), TSL_BADARG);
}

static void null_tsl_result_text(void) {
    const char *text;
    ck_assert_int_eq(tsl_result_text(NULL, &text), TSL_BADARG);
    ck_assert_int_eq(tsl_result_text(S, NULL), TSL_BADARG);
}

static void null_tsl_exit_code(void) { ck_assert_int_eq(tsl_exit_code(NULL), 0); }
static void null_tsl_interrupt(void) { tsl_interrupt(NULL); }
static void null_tsl_timeout(void) { tsl_timeout(NULL); }
static void null_tsl_interrupt_pending(void) { ck_assert_int_eq(tsl_interrupt_pending(NULL), 0); }
static void null_tsl_interrupt_clear(void) { tsl_interrupt_clear(NULL); }

static void null_tsl_world_finish(void) { ck_assert_int_eq(tsl_world_finish(NULL), TSL_BADARG); }

static void null_tsl_world(void) {
    int rank = -1, size = -1;
    ck_assert_int_eq(tsl_world(NULL, NULL), 0);   /* not started by mpirun: a world of one */
    ck_assert_int_eq(tsl_world(NULL, &size), 0);
    ck_assert_int_eq(size, 1);
    ck_assert_int_eq(tsl_world(&rank, NULL), 0);
    ck_assert_int_eq(rank, 0);
}

static void null_tsl_error_message(void) { ck_assert_str_eq(tsl_error_message(NULL), ""); }
static void null_tsl_error_report(void) { ck_assert_str_eq(tsl_error_report(NULL), ""); }

static void null_tsl_error_location(void) {
    const char *file;
    int line, col;
    ck_assert_int_eq(tsl_error_location(NULL, &file, &line, &col), 0);
    ck_assert_int_eq(tsl_run_string(S, "<t>", "y = nope", -1), TSL_ERROR);
    ck_assert_int_eq(tsl_error_location(S, NULL, NULL, NULL), 1);   /* each may be NULL */
    ck_assert_int_eq(tsl_error_location(S, NULL, &line, NULL), 1);
    ck_assert_int_eq(line, 1);
}

static void null_tsl_get_type(void) {
    tsl_Type type;
    ck_assert_int_eq(tsl_get_type(NULL, "x", &type), TSL_BADARG);
    ck_assert_int_eq(tsl_get_type(S, NULL, &type), TSL_BADARG);
    ck_assert_int_eq(tsl_get_type(S, "x", NULL), TSL_BADARG);
}

/* The value's pointers may be NULL: the status alone says what the global is. */
static void null_tsl_get_number(void) {
    double x;
    ck_assert_int_eq(tsl_get_number(NULL, "x", &x), TSL_BADARG);
    ck_assert_int_eq(tsl_get_number(S, NULL, &x), TSL_BADARG);
    ck_assert_int_eq(tsl_get_number(S, "x", NULL), TSL_OK);
    ck_assert_int_eq(tsl_get_number(S, "s", NULL), TSL_TYPE);
}

static void null_tsl_get_bool(void) {
    int b;
    ck_assert_int_eq(tsl_get_bool(NULL, "b", &b), TSL_BADARG);
    ck_assert_int_eq(tsl_get_bool(S, NULL, &b), TSL_BADARG);
    ck_assert_int_eq(tsl_get_bool(S, "b", NULL), TSL_OK);
}

static void null_tsl_get_string(void) {
    const char *s;
    size_t len;
    ck_assert_int_eq(tsl_get_string(NULL, "s", &s, &len), TSL_BADARG);
    ck_assert_int_eq(tsl_get_string(S, NULL, &s, &len), TSL_BADARG);
    ck_assert_int_eq(tsl_get_string(S, "s", NULL, &len), TSL_OK);
    ck_assert_uint_eq(len, 3);
    ck_assert_int_eq(tsl_get_string(S, "s", &s, NULL), TSL_OK);
    ck_assert_str_eq(s, "str");
}

static void null_tsl_get_tensor(void) {
    tsl_Tensor *t;
    ck_assert_int_eq(tsl_get_tensor(NULL, "t", &t), TSL_BADARG);
    ck_assert_int_eq(tsl_get_tensor(S, NULL, &t), TSL_BADARG);
    ck_assert_int_eq(tsl_get_tensor(S, "t", NULL), TSL_OK);
}

static void null_tsl_set_number(void) {
    ck_assert_int_eq(tsl_set_number(NULL, "k", 1), TSL_BADARG);
    ck_assert_int_eq(tsl_set_number(S, NULL, 1), TSL_BADARG);
}

static void null_tsl_set_tensor(void) {
    ck_assert_int_eq(tsl_set_tensor(NULL, "k", T), TSL_BADARG);
    ck_assert_int_eq(tsl_set_tensor(S, NULL, T), TSL_BADARG);
    ck_assert_int_eq(tsl_set_tensor(S, "k", NULL), TSL_BADARG);
}

static void null_tsl_call(void) {
    tsl_Value arg = tsl_number(2), r;
    ck_assert_int_eq(tsl_call(NULL, "f", &arg, 1, &r), TSL_BADARG);
    ck_assert_int_eq(tsl_call(S, NULL, &arg, 1, &r), TSL_BADARG);
    ck_assert_int_eq(tsl_call(S, "f", NULL, 1, &r), TSL_BADARG);
    ck_assert_int_eq(tsl_call(S, "f", &arg, 1, NULL), TSL_OK);   /* the value dropped */
    tsl_Value no_string = { .type = TSL_STRING, .string = NULL, .length = 3 };
    ck_assert_int_eq(tsl_call(S, "f", &no_string, 1, &r), TSL_BADARG);
    ck_assert_int_eq(tsl_call(S, "f", (tsl_Value[]){ tsl_tensor(NULL) }, 1, &r), TSL_BADARG);
}

static void null_tsl_tensor_new(void) {
    tsl_Tensor *t = NULL;
    ck_assert_int_eq(tsl_tensor_new(NULL, TSL_F32, 1, (int64_t[]){ 2 }, NULL, &t), TSL_OK);   /* S and data may be NULL */
    ck_assert_float_eq(((const float *)tsl_tensor_data(t))[1], 0.0f);
    tsl_tensor_free(t);
    ck_assert_int_eq(tsl_tensor_new(S, TSL_F32, 1, NULL, NULL, &t), TSL_BADARG);
    ck_assert_int_eq(tsl_tensor_new(S, TSL_F32, 1, (int64_t[]){ 2 }, NULL, NULL), TSL_BADARG);
}

static void null_tsl_tensor_free(void) { tsl_tensor_free(NULL); }
static void null_tsl_tensor_dtype(void) { ck_assert_int_eq((int)tsl_tensor_dtype(NULL), -1); }
static void null_tsl_tensor_ndim(void) { ck_assert_int_eq(tsl_tensor_ndim(NULL), -1); }

static void null_tsl_tensor_dim(void) {
    ck_assert_int_eq(tsl_tensor_dim(NULL, 0), -1);
    ck_assert_int_eq(tsl_tensor_dim(T, 2), -1);
}

static void null_tsl_tensor_size(void) { ck_assert_int_eq(tsl_tensor_size(NULL), -1); }
static void null_tsl_tensor_data(void) { ck_assert_ptr_null(tsl_tensor_data(NULL)); }

static void null_tsl_tensor_copy_data(void) {
    float buf[6];
    ck_assert_int_eq(tsl_tensor_copy_data(NULL, T, buf, sizeof buf), TSL_OK);
    ck_assert_int_eq(tsl_tensor_copy_data(S, NULL, buf, sizeof buf), TSL_BADARG);
    ck_assert_int_eq(tsl_tensor_copy_data(S, T, NULL, sizeof buf), TSL_BADARG);
}

static void null_tsl_npy_read(void) {
    tsl_Tensor *t = T;
    ck_assert_int_eq(tsl_npy_read(NULL, "/nonexistent/x.npy", &t), TSL_IO);
    ck_assert_ptr_null(t);
    ck_assert_int_eq(tsl_npy_read(S, NULL, &t), TSL_BADARG);
    ck_assert_int_eq(tsl_npy_read(S, "/nonexistent/x.npy", NULL), TSL_BADARG);
}

static void null_tsl_npy_write(void) {
    char path[sizeof model_path + 8];
    snprintf(path, sizeof path, "%s.npy", model_path);
    ck_assert_int_eq(tsl_npy_write(NULL, path, T), TSL_OK);
    unlink(path);
    ck_assert_int_eq(tsl_npy_write(S, NULL, T), TSL_BADARG);
    ck_assert_int_eq(tsl_npy_write(S, path, NULL), TSL_BADARG);
}

static void null_tsl_model_load(void) {
    tsl_Model *m = NULL;
    ck_assert_int_eq(tsl_model_load(NULL, model_path, &m), TSL_OK);
    tsl_model_free(m);
    ck_assert_int_eq(tsl_model_load(S, NULL, &m), TSL_BADARG);
    ck_assert_int_eq(tsl_model_load(S, model_path, NULL), TSL_BADARG);
}

static void null_tsl_model_load_bytes(void) {
    tsl_Model *m = NULL;
    ck_assert_int_eq(tsl_model_load_bytes(NULL, model_bytes, model_len, "m.tslg", &m), TSL_OK);
    tsl_model_free(m);
    ck_assert_int_eq(tsl_model_load_bytes(S, NULL, model_len, "m.tslg", &m), TSL_BADARG);
    ck_assert_int_eq(tsl_model_load_bytes(S, model_bytes, model_len, NULL, &m), TSL_BADARG);
    ck_assert_int_eq(tsl_model_load_bytes(S, model_bytes, model_len, "m.tslg", NULL), TSL_BADARG);
}

static void null_tsl_model_free(void) { tsl_model_free(NULL); }
static void null_tsl_model_num_inputs(void) { ck_assert_int_eq(tsl_model_num_inputs(NULL), -1); }
static void null_tsl_model_num_outputs(void) { ck_assert_int_eq(tsl_model_num_outputs(NULL), -1); }
static void null_tsl_model_signature(void) { ck_assert_str_eq(tsl_model_signature(NULL), ""); }

static void null_tsl_model_input(void) {
    tsl_DType dt;
    int ndim;
    int64_t shape[TSL_MAX_DIMS];
    const char *name;
    ck_assert_int_eq(tsl_model_input(NULL, 0, &dt, &ndim, shape, &name), TSL_BADARG);
    ck_assert_int_eq(tsl_model_input(M, 0, NULL, NULL, NULL, NULL), TSL_OK);   /* any may be NULL */
}

static void null_tsl_model_output(void) {
    tsl_DType dt;
    int ndim;
    int64_t shape[TSL_MAX_DIMS];
    ck_assert_int_eq(tsl_model_output(NULL, 0, &dt, &ndim, shape), TSL_BADARG);
    ck_assert_int_eq(tsl_model_output(M, 0, NULL, NULL, NULL), TSL_OK);
}

static void null_tsl_session_new(void) {
    tsl_Session *s;
    ck_assert_int_eq(tsl_session_new(NULL, &s), TSL_BADARG);
    ck_assert_int_eq(tsl_session_new(M, NULL), TSL_BADARG);
}

static void null_tsl_session_free(void) { tsl_session_free(NULL); }

static void null_tsl_session_run(void) {
    tsl_Tensor *in[2] = { T, NULL }, *out = NULL;
    ck_assert_int_eq(tsl_session_run(NULL, in, 2, &out, 1), TSL_BADARG);
    ck_assert_int_eq(tsl_session_run(SS, NULL, 2, &out, 1), TSL_BADARG);
    ck_assert_int_eq(tsl_session_run(SS, in, 2, &out, 1), TSL_BADARG);   /* a NULL entry */
    ck_assert_str_eq(tsl_session_error(SS), "input 2 (w) is NULL");
    ck_assert_int_eq(tsl_session_run(SS, in, 2, NULL, 1), TSL_BADARG);
}

static void null_tsl_session_interrupt(void) { tsl_session_interrupt(NULL); }
static void null_tsl_session_timeout(void) { tsl_session_timeout(NULL); }

static void null_tsl_session_set_option(void) {
    ck_assert_int_eq(tsl_session_set_option(NULL, TSL_OPT_MAX_MEMORY, 1), TSL_BADARG);
}

static void null_tsl_session_error(void) { ck_assert_str_eq(tsl_session_error(NULL), ""); }

static void null_tsl_help_text(void) {
    const char *text;
    ck_assert_int_eq(tsl_help_text(NULL, "len", &text), TSL_BADARG);
    ck_assert_int_eq(tsl_help_text(S, NULL, &text), TSL_BADARG);
    ck_assert_int_eq(tsl_help_text(S, "len", NULL), TSL_BADARG);
}

static void null_tsl_reload(void) {
    ck_assert_int_eq(tsl_reload(NULL, "m"), TSL_BADARG);
    ck_assert_int_eq(tsl_reload(S, NULL), TSL_BADARG);
}

static void null_tsl_dis_text(void) {
    const char *text;
    ck_assert_int_eq(tsl_dis_text(NULL, &text), TSL_BADARG);
    ck_assert_int_eq(tsl_dis_text(S, NULL), TSL_BADARG);
}

static void null_tsl_vars_text(void) {
    const char *text;
    ck_assert_int_eq(tsl_vars_text(NULL, &text), TSL_BADARG);
    ck_assert_int_eq(tsl_vars_text(S, NULL), TSL_BADARG);
}

static void null_tsl_complete(void) {
    const char *c;
    ck_assert_int_eq(tsl_complete(NULL, "pri", 0, &c), TSL_BADARG);
    ck_assert_int_eq(tsl_complete(S, NULL, 0, &c), TSL_BADARG);
    ck_assert_int_eq(tsl_complete(S, "pri", 0, NULL), TSL_BADARG);
}

/* s NULL is the empty text; buf NULL writes nothing but still gives the length. */
static void null_tsl_escape(void) {
    char buf[8] = "x";
    ck_assert_uint_eq(tsl_escape(NULL, 5, buf, sizeof buf), 0);
    ck_assert_str_eq(buf, "");
    ck_assert_uint_eq(tsl_escape("a\n", 2, NULL, sizeof buf), 3);
}

/* ---- the table, and its check against the header ---- */

typedef struct {
    const char *name;
    void (*check)(void);
} NullCase;

#define CASE(fn) { #fn, null_##fn }
static const NullCase cases[] = {
    CASE(tsl_version), CASE(tsl_backend), CASE(tsl_new), CASE(tsl_free), CASE(tsl_set_output),
    CASE(tsl_set_diagnostics), CASE(tsl_set_display), CASE(tsl_check_input), CASE(tsl_set_option), CASE(tsl_get_option), CASE(tsl_set_threads),
    CASE(tsl_threads), CASE(tsl_set_device), CASE(tsl_set_args), CASE(tsl_set_stdlib_path),
    CASE(tsl_run_string), CASE(tsl_run_file), CASE(tsl_run_input), CASE(tsl_result_text), CASE(tsl_exit_code),
    CASE(tsl_interrupt), CASE(tsl_timeout), CASE(tsl_interrupt_pending), CASE(tsl_interrupt_clear),
    CASE(tsl_world), CASE(tsl_world_finish), CASE(tsl_world_abort), CASE(tsl_error_message), CASE(tsl_error_location),
    CASE(tsl_error_report), CASE(tsl_get_type), CASE(tsl_get_number), CASE(tsl_get_bool), CASE(tsl_get_string),
    CASE(tsl_get_tensor), CASE(tsl_set_number), CASE(tsl_set_tensor), CASE(tsl_call), CASE(tsl_tensor_new),
    CASE(tsl_tensor_free), CASE(tsl_tensor_dtype), CASE(tsl_tensor_ndim), CASE(tsl_tensor_dim),
    CASE(tsl_tensor_size), CASE(tsl_tensor_data), CASE(tsl_tensor_copy_data), CASE(tsl_npy_read),
    CASE(tsl_npy_write), CASE(tsl_model_load), CASE(tsl_model_load_bytes), CASE(tsl_model_free),
    CASE(tsl_model_num_inputs), CASE(tsl_model_num_outputs), CASE(tsl_model_signature), CASE(tsl_model_input), CASE(tsl_model_output),
    CASE(tsl_session_new), CASE(tsl_session_free), CASE(tsl_session_run), CASE(tsl_session_interrupt),
    CASE(tsl_session_timeout), CASE(tsl_session_set_option), CASE(tsl_session_error), CASE(tsl_help_text), CASE(tsl_reload),
    CASE(tsl_dis_text), CASE(tsl_vars_text), CASE(tsl_complete), CASE(tsl_escape),
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

START_TEST(test_null_case) {
    _mark_point(cases[_i].name, 0);   /* a crash before the case's first check is reported under its name */
    cases[_i].check();
}
END_TEST

static bool has_case(const char *name) {
    for (int i = 0; i < NCASES; i++)
        if (!strcmp(cases[i].name, name)) return true;
    return false;
}

/* The functions include/tsl.h declares (TSL_API ... tsl_NAME(), into names; their count.
 * The header is found beside this file: the tests run from the repository's root. */
static int header_functions(char names[][64], int cap) {
    char path[512];
    const char *here = __FILE__, *slash = strrchr(here, '/');
    snprintf(path, sizeof path, "%.*s%sinclude/tsl.h", slash ? (int)(slash - here) : 0, here, slash ? "/../../" : "../../");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s: run the API tests from the repository's root", path);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "TSL_API ", 8)) continue;
        for (char *p = line; (p = strstr(p, "tsl_")); p++) {
            size_t len = strspn(p, "abcdefghijklmnopqrstuvwxyz_0123456789");
            if (p[len] != '(') continue;
            ck_assert_int_lt(n, cap);
            snprintf(names[n++], 64, "%.*s", (int)len, p);
            break;
        }
    }
    fclose(f);
    return n;
}

START_TEST(test_every_function_has_a_case) {
    static char names[256][64];
    int n = header_functions(names, 256);
    ck_assert_int_ge(n, 61);
    static char missing[sizeof names + 256];
    for (int i = 0; i < n; i++)
        if (!has_case(names[i])) snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s", names[i]);
    ck_assert_msg(!missing[0], "no NULL case in tests/api/test_null_args.c for:%s", missing);
    for (int i = 0; i < NCASES; i++) {
        bool declared = false;
        for (int k = 0; k < n && !declared; k++) declared = !strcmp(names[k], cases[i].name);
        ck_assert_msg(declared, "%s has a NULL case but include/tsl.h does not declare it", cases[i].name);
    }
}
END_TEST

Suite *null_args_suite(void) {
    Suite *s = suite_create("api_null_args");
    TCase *all = tcase_create("null_args");
    tcase_add_checked_fixture(all, setup, teardown);
    tcase_add_loop_test(all, test_null_case, 0, NCASES);
    suite_add_tcase(s, all);
    TCase *list = tcase_create("header");
    tcase_add_test(list, test_every_function_has_a_case);
    suite_add_tcase(s, list);
    return s;
}
