/* test_values.c - cyclic and shared values at the C level: equality on cycles and shared
 * structure, printing of cycles and its size limit, the cycle collector's count, and
 * object memory accounting that returns to where it started once everything is freed. */
#include <stdio.h>
#include <string.h>
#include "suites.h"
#include "gc.h"
#include "value.h"
#include "ctx.h"

/* a list that contains itself: [n, [...]] */
static ObjList *self_list(double n) {
    ObjList *l = list_new(0);
    list_push(l, NUM_VAL(n));
    list_push(l, OBJ_VAL(VAL_LIST, l));
    return l;
}

static void drop(void *o) { val_release(OBJ_VAL(VAL_LIST, o)); }

START_TEST(values_equal_cycles) {
    gc_collect();
    ObjList *a = self_list(1), *b = self_list(1), *c = self_list(2);
    Value va = OBJ_VAL(VAL_LIST, a), vb = OBJ_VAL(VAL_LIST, b), vc = OBJ_VAL(VAL_LIST, c);
    ck_assert(val_equal(va, va));
    ck_assert(val_equal(va, vb));     /* pairs met again compare equal (spec section 3) */
    ck_assert(!val_equal(va, vc));
    ck_assert_int_eq(val_equal_in(NULL, vb, va), 1);
    drop(a);
    drop(b);
    drop(c);
    ck_assert_int_eq(gc_collect(), 3);  /* reference counting alone freed none of them */
}
END_TEST

START_TEST(values_equal_shared_is_polynomial) {
    gc_collect();
    /* x = [x, x] forty times: 2^40 leaves, 41 distinct lists */
    Value x = NUM_VAL(1), y = NUM_VAL(1);
    for (int i = 0; i < 40; i++) {
        ObjList *nx = list_new(2), *ny = list_new(2);
        list_push(nx, x);
        list_push(nx, x);
        list_push(ny, y);
        list_push(ny, y);
        val_release(x);
        val_release(y);
        x = OBJ_VAL(VAL_LIST, nx);
        y = OBJ_VAL(VAL_LIST, ny);
    }
    ck_assert(val_equal(x, y));
    StrBuf b = { 0 };
    ck_assert(!fmt_value(&b, x, true));   /* 2^40 elements: stops at the text limit */
    ck_assert(b.len > TSL_MAX_TEXT && b.len < TSL_MAX_TEXT + 64);
    sb_free(&b);
    val_release(x);
    val_release(y);
}
END_TEST

START_TEST(values_print_cycles) {
    gc_collect();
    ObjList *a = self_list(1);
    ObjDict *d = dict_new();
    dict_set_cstr(d, "k", NUM_VAL(1));
    dict_set_cstr(d, "self", OBJ_VAL(VAL_DICT, d));
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    ck_assert(fmt_value(&b, OBJ_VAL(VAL_LIST, a), false));
    ck_assert_str_eq(b.s, "[1, [...]]");             /* Python: a = [1]; a.append(a) */
    b.len = 0;
    ck_assert(fmt_value(&b, OBJ_VAL(VAL_DICT, d), false));
    ck_assert_str_eq(b.s, "{k: 1, self: {...}}");    /* Python: {'k': 1, 'self': {...}} */
    sb_free(&b);
    drop(a);
    val_release(OBJ_VAL(VAL_DICT, d));
    ck_assert_int_eq(gc_collect(), 2);
}
END_TEST

START_TEST(values_memory_accounting_balances) {
    gc_collect();
    int64_t before = ops_ctx()->obj_live_bytes;
    ObjDict *d = dict_new();
    for (int i = 0; i < 1000; i++) {
        char key[32];
        snprintf(key, sizeof key, "key%d", i);
        ObjList *l = list_new(3);
        for (int j = 0; j < 11; j++) {
            Value s = val_cstr("some text");
            list_push(l, s);   /* retains */
            val_release(s);
        }
        dict_set_cstr(d, key, OBJ_VAL(VAL_LIST, l));
        list_push(l, OBJ_VAL(VAL_DICT, d));   /* every list points back at the dict */
        drop(l);
    }
    ck_assert(ops_ctx()->obj_live_bytes - before > 1000 * (int64_t)(sizeof(ObjList) + 11 * sizeof(Value)));
    val_release(OBJ_VAL(VAL_DICT, d));
    ck_assert_int_eq(gc_collect(), 1001);
    ck_assert_int_eq(ops_ctx()->obj_live_bytes, before);   /* every byte counted in was counted out */
}
END_TEST

/* A million nested lists: comparing and freeing them must not recurse on the C stack
 * (the unit tests run on the main thread's 8 MiB stack). */
START_TEST(values_deep_nesting) {
    Value x = NUM_VAL(0), y = NUM_VAL(0);
    for (int i = 0; i < 1000000; i++) {
        ObjList *nx = list_new(1), *ny = list_new(1);
        list_push(nx, x);
        list_push(ny, y);
        val_release(x);
        val_release(y);
        x = OBJ_VAL(VAL_LIST, nx);
        y = OBJ_VAL(VAL_LIST, ny);
    }
    ck_assert(val_equal(x, y));
    StrBuf b = { 0 };
    ck_assert(fmt_value(&b, x, true));   /* past 200 levels it prints "..." */
    ck_assert_int_eq((int)b.len, 200 * 2 + 3);
    sb_free(&b);
    int64_t before = ops_ctx()->obj_live_bytes;
    val_release(x);
    val_release(y);
    ck_assert(before - ops_ctx()->obj_live_bytes >= 2000000 * (int64_t)sizeof(ObjList));
}
END_TEST

Suite *values_suite(void) {
    Suite *s = suite_create("values");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, values_equal_cycles);
    tcase_add_test(tc, values_equal_shared_is_polynomial);
    tcase_add_test(tc, values_print_cycles);
    tcase_add_test(tc, values_memory_accounting_balances);
    tcase_add_test(tc, values_deep_nesting);
    suite_add_tcase(s, tc);
    return s;
}
