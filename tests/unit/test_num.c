/* test_num.c - ops/num.h (the one checked number -> integer conversion, Python's slice and
 * range lengths) and shape_count's overflow rule. Expected values are exact math: 2**63 is
 * 9223372036854775808, Python's len(range(-2**63, 2**62)) is 2**63 + 2**62, and NumPy
 * rejects np.empty((0, 2**62, 2**62)) ("array is too big") but not np.empty((2**62, 0)). */
#include <math.h>
#include <stdint.h>
#include "suites.h"
#include "tensor.h"

START_TEST(num_to_i64_rejects) {
    int64_t x = 7;
    ck_assert(!num_to_i64(NAN, &x));
    ck_assert(!num_to_i64(INFINITY, &x));
    ck_assert(!num_to_i64(-INFINITY, &x));
    ck_assert(!num_to_i64(1.5, &x));
    ck_assert(!num_to_i64(-0.5, &x));
    ck_assert(!num_to_i64(9223372036854775808.0, &x));    /* 2**63 */
    ck_assert(!num_to_i64(1e300, &x));
    ck_assert(!num_to_i64(-9223372036854777856.0, &x));   /* the double below -2**63 */
    ck_assert_int_eq(x, 7);                               /* untouched on failure */
}
END_TEST

START_TEST(num_to_i64_accepts) {
    int64_t x;
    ck_assert(num_to_i64(-9223372036854775808.0, &x));
    ck_assert(x == INT64_MIN);
    ck_assert(num_to_i64(9223372036854774784.0, &x));    /* 2**63 - 1024, the largest double below 2**63 */
    ck_assert(x == INT64_C(9223372036854774784));
    ck_assert(num_to_i64(-0.0, &x) && x == 0);
    ck_assert(num_to_i64(-3, &x) && x == -3);
}
END_TEST

START_TEST(num_to_i64_clamped_saturates) {
    int64_t x;
    ck_assert(num_to_i64_clamped(9223372036854775808.0, &x) && x == INT64_MAX);
    ck_assert(num_to_i64_clamped(1e300, &x) && x == INT64_MAX);
    ck_assert(num_to_i64_clamped(-9223372036854775808.0, &x) && x == -INT64_MAX);
    ck_assert(num_to_i64_clamped(-1e300, &x) && x == -INT64_MAX);
    ck_assert(num_to_i64_clamped(-5, &x) && x == -5);
    ck_assert(!num_to_i64_clamped(NAN, &x));
    ck_assert(!num_to_i64_clamped(INFINITY, &x));
    ck_assert(!num_to_i64_clamped(2.5, &x));
}
END_TEST

START_TEST(slice_and_range_lengths) {
    /* Python: len(range(0, 3, 2**63 - 1)) == 1, len(range(2, -1, -(2**63 - 1))) == 1 */
    ck_assert_int_eq(slice_length(0, 3, INT64_MAX), 1);
    ck_assert_int_eq(slice_length(2, -1, -INT64_MAX), 1);
    ck_assert_int_eq(slice_length(0, 3, 2), 2);
    ck_assert_int_eq(slice_length(2, -1, -1), 3);
    ck_assert_int_eq(slice_length(3, 3, 1), 0);
    ck_assert(range_count(INT64_MIN, INT64_C(1) << 62, 1) == (UINT64_C(1) << 63) + (UINT64_C(1) << 62));
    ck_assert(range_count(INT64_C(1) << 62, INT64_MIN, -(INT64_C(1) << 62)) == 3);
    ck_assert(range_count(10, 0, INT64_MIN) == 1);
    ck_assert(range_count(0, 10, -1) == 0);
    ck_assert(range_at(INT64_MIN, INT64_C(1) << 62, 2) == 0);
    ck_assert(range_at(INT64_C(1) << 62, -(INT64_C(1) << 62), 2) == -(INT64_C(1) << 62));
}
END_TEST

START_TEST(shape_count_zero_dims) {
    Shape huge0 = { 3, { 0, INT64_C(1) << 62, INT64_C(1) << 62 } };
    ck_assert_int_eq(shape_count(&huge0), -1);
    Shape last0 = { 3, { INT64_C(1) << 62, 4, 0 } };
    ck_assert_int_eq(shape_count(&last0), -1);
    Shape ok0 = { 2, { INT64_C(1) << 62, 0 } };
    ck_assert_int_eq(shape_count(&ok0), 0);
    Shape ok = { 2, { 3, INT64_C(1) << 31 } };
    ck_assert(shape_count(&ok) == 3 * (INT64_C(1) << 31));
}
END_TEST

Suite *num_suite(void) {
    Suite *s = suite_create("num");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, num_to_i64_rejects);
    tcase_add_test(tc, num_to_i64_accepts);
    tcase_add_test(tc, num_to_i64_clamped_saturates);
    tcase_add_test(tc, slice_and_range_lengths);
    tcase_add_test(tc, shape_count_zero_dims);
    suite_add_tcase(s, tc);
    return s;
}
