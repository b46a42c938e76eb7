/* test_grad.c - the GradBuilder (ops/grad.h) and backward rules called directly, without the
 * interpreter. Expected values are by hand: un-broadcasting sums over the broadcast axes, and
 * d(a * b)/da = gy * b, d(a * b)/db = gy * a, summed back to each operand's shape. */
#include <string.h>
#include "suites.h"
#include "grad.h"

#define SH(...) ((Shape){ (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), { __VA_ARGS__ } })

static Tensor *tens(Shape s, const double *v) {
    Tensor *t = tensor_new(DT_F64, &s);
    ck_assert_ptr_nonnull(t);
    for (int64_t i = 0; i < t->size; i++) tensor_set(t, i, v[i]);
    return t;
}

START_TEST(sum_to_shape_unbroadcasts) {
    GradBuilder b;
    gb_init(&b);
    Tensor *g = tens(SH(2, 3), (const double[]){ 1, 2, 3, 4, 5, 6 });
    Shape row = SH(1, 3), vec = SH(3), col = SH(2, 1);
    GVal r = gb_sum_to_shape(&b, gb_tensor(&b, g), &row, DT_F64);
    GVal v = gb_sum_to_shape(&b, gb_tensor(&b, g), &vec, DT_F64);
    GVal c = gb_sum_to_shape(&b, gb_tensor(&b, g), &col, DT_F32);
    ck_assert(gb_ok(r) && gb_ok(v) && gb_ok(c));
    ck_assert_int_eq(r.t->ndim, 2);
    ck_assert_int_eq(v.t->ndim, 1);
    ck_assert_int_eq(c.t->dtype, DT_F32);
    for (int j = 0; j < 3; j++) {
        ck_assert(tensor_get(r.t, j) == 5 + 2 * j);
        ck_assert(tensor_get(v.t, j) == 5 + 2 * j);
    }
    ck_assert(tensor_get(c.t, 0) == 6 && tensor_get(c.t, 1) == 15);
    tensor_release(g);
    gb_free(&b);
}
END_TEST

START_TEST(mul_rule_broadcast) {
    GradBuilder b;
    gb_init(&b);
    Tensor *a = tens(SH(2, 2), (const double[]){ 1, 2, 3, 4 });
    Tensor *bb = tens(SH(2), (const double[]){ 10, 20 });
    OpArg in[2] = { op_arg_tensor(a), op_arg_tensor(bb) };
    OpAttrs at;
    memset(&at, 0, sizeof at);
    at.naxes = -1;
    at.dtype = -1;
    OpCall c = { OP_MUL, 2, in, &at };
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    ck_assert_int_eq(op_run(&c, out), 0);
    GVal x[2] = { gb_tensor(&b, a), gb_tensor(&b, bb) }, gx[2] = { gb_none(), gb_none() };
    bool needs[2] = { true, true };
    GVal ones = gb_ones_like(&b, gb_tensor(&b, out[0]));
    GradCtx g = { &b, &c, x, gb_tensor(&b, out[0]), ones, needs, gx, 0 };
    ck_assert_int_eq(grad_backward(&g), 0);
    ck_assert(tensor_get(gx[0].t, 0) == 10 && tensor_get(gx[0].t, 3) == 20);
    ck_assert_int_eq(gx[1].t->ndim, 1);
    ck_assert(tensor_get(gx[1].t, 0) == 4 && tensor_get(gx[1].t, 1) == 6);   /* columns of a summed */
    /* an op without a rule says so */
    c.op = OP_UNIQUE;
    ck_assert_int_eq(grad_backward(&g), -1);
    ck_assert_str_eq(op_error(), "no gradient for unique yet");
    ck_assert(!grad_has_rule(OP_UNIQUE) && grad_has_rule(OP_MATMUL));
    tensor_release(out[0]);
    tensor_release(a);
    tensor_release(bb);
    gb_free(&b);
}
END_TEST

Suite *grad_suite(void) {
    op_table_init();
    Suite *s = suite_create("grad");
    TCase *tc = tcase_create("builder");
    tcase_add_test(tc, sum_to_shape_unbroadcasts);
    tcase_add_test(tc, mul_rule_broadcast);
    suite_add_tcase(s, tc);
    return s;
}
