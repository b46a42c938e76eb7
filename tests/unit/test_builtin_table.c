/* test_builtin_table.c - every built-in that is not an op has one row with a signature and a
 * one-line doc (lang/builtins.h BuiltinDef), so help(x) can print "name(signature)" and the
 * line for any built-in; ops have theirs in ops.def. */
#include <string.h>
#include "suites.h"
#include "builtins.h"
#include "opcall.h"
#include "helpers.h"

START_TEST(builtin_rows_have_signature_and_doc) {
    const char **names;
    int n = builtins_names(&names), rows = 0;
    for (int i = 0; i < n; i++) {
        if (op_by_name(names[i]) < OP__COUNT) continue;   /* an op: its row is in ops.def */
        const BuiltinDef *d = builtin_def(names[i]);
        ck_assert_msg(d != NULL, "no BuiltinDef row for %s", names[i]);
        ck_assert_msg(d->signature && d->signature[0] == '(' && d->signature[strlen(d->signature) - 1] == ')',
                      "%s: signature '%s' is not a parenthesised parameter list", names[i], d->signature);
        ck_assert_msg(d->doc && d->doc[0] && !strchr(d->doc, '\n'), "%s: the doc must be one line", names[i]);
        rows++;
    }
    ck_assert_int_ge(rows, 40);
}
END_TEST

START_TEST(builtin_rows_of_v2_builtins) {
    static const char *const v2[] = { "split", "join", "replace", "find", "strip", "upper", "lower", "startswith",
                                      "endswith", "format", "sorted", "reversed", "extend", "insert", "remove",
                                      "index", "read_text", "write_text", "save_csv", "exit", NULL };
    for (int i = 0; v2[i]; i++) ck_assert_msg(builtin_def(v2[i]) != NULL, "%s has no row", v2[i]);
    ck_assert_str_eq(builtin_def("split")->signature, "(s, sep=nil)");
    ck_assert_str_eq(builtin_def("sorted")->signature, "(list, key=nil, reverse=false)");
    ck_assert_str_eq(builtin_def("exit")->signature, "(code=0)");
    ck_assert(builtin_def("sum") == NULL);   /* an op */
    ck_assert(builtin_def("no_such_builtin") == NULL);
}
END_TEST

/* Each built-in object carries its row (ObjBuiltin.def), which the static compiler reads
 * for the built-in's ST_* rule instead of matching names; an op carries none. The pure
 * built-ins fold while compiling; those with a side effect or reading state never do. */
START_TEST(builtin_objects_carry_their_row) {
    Interp *I = interp_new();
    ck_assert_int_eq(run_in(I, "x = 1"), 0);   /* the main module, with the built-ins installed */
    const char **names;
    int n = builtins_names(&names);
    for (int i = 0; i < n; i++) {
        int k = globals_find(&I->main->g, names[i]);
        ck_assert_int_ge(k, 0);
        Value v = I->main->g.vals[k];
        ck_assert(v.type == VAL_FUNC && v.as.o->kind == OBJ_BUILTIN);
        ck_assert_msg(AS_BUILTIN(v)->def == builtin_def(names[i]), "%s carries another row", names[i]);
    }
    static const char *const folds[] = { "tensor", "len", "str", "format", "sorted", "index", NULL };
    static const char *const never[] = { "print", "push", "seed", "clock", "args", "read_text", "exit", "load", NULL };
    for (int i = 0; folds[i]; i++) ck_assert_msg(builtin_def(folds[i])->stat & ST_FOLDS, "%s does not fold", folds[i]);
    for (int i = 0; never[i]; i++) ck_assert_msg(!(builtin_def(never[i])->stat & ST_FOLDS), "%s folds", never[i]);
    ck_assert_int_eq(builtin_def("item")->stat & ST_RULE, ST_ITEM);
    interp_free(I);
}
END_TEST

/* A row's signature is its parameter spec: static code binds a call by it (vm/compile/cbuiltins.c,
 * through args_match), so each eager built-in must bind exactly those parameters, in that
 * order, with as many required: one argument too many, each parameter given twice and the
 * last required one missing get args_match's messages from the eager built-in. */
static const char *eager_error(Interp *I, const BuiltinDef *d, int npos, const char *kw) {
    Value pos[ARGS_MAX + 1], kwv[1] = { NIL_VAL };
    for (int i = 0; i <= ARGS_MAX; i++) pos[i] = NIL_VAL;
    char *kwn[1] = { (char *)kw };
    CallArgs a = { pos, npos, kw ? kwn : NULL, kwv, kw ? 1 : 0 };
    interp_clear_error(I);
    Value r = d->fn(I, &a);
    return IS_ERR(r) ? I->err_msg : "(no error)";
}

START_TEST(builtin_signatures_are_the_eager_binding) {
    Interp *I = interp_new();
    ck_assert_int_eq(run_in(I, "x = 1"), 0);
    const char **names;
    int n = builtins_names(&names), checked = 0, rules = 0;
    for (int i = 0; i < n; i++) {
        const BuiltinDef *d = builtin_def(names[i]);
        const char *params[ARGS_MAX + 1];
        char buf[128], want[300];
        int nreq = d ? builtin_params(d, params, buf, sizeof buf) : -1;
        if (nreq < 0) {
            ck_assert_msg(!d || !(d->stat & ST_RULE) || (d->stat & ST_RULE) == ST_PRINT ||
                          (d->stat & ST_RULE) == ST_CALL_GRAD || (d->stat & ST_RULE) == ST_CALL_VALUE_AND_GRAD,
                          "%s has a static rule but no plain signature: '%s'", names[i], d ? d->signature : "");
            continue;
        }
        int np = 0;
        while (params[np]) np++;
        int which[ARGS_MAX];
        args_match(d->name, params, nreq, np + 1, NULL, 0, which, want, sizeof want);
        ck_assert_str_eq(eager_error(I, d, np + 1, NULL), want);
        for (int k = 0; k < np; k++) {
            args_match(d->name, params, nreq, np, &params[k], 1, which, want, sizeof want);
            ck_assert_str_eq(eager_error(I, d, np, params[k]), want);
        }
        if (nreq > 0) {
            args_match(d->name, params, nreq, nreq - 1, NULL, 0, which, want, sizeof want);
            ck_assert_str_eq(eager_error(I, d, nreq - 1, NULL), want);
        }
        checked++;
        rules += (d->stat & ST_RULE) != ST_NONE;
    }
    ck_assert_int_ge(checked, 40);
    ck_assert_int_ge(rules, 15);
    interp_free(I);
}
END_TEST

Suite *builtin_table_suite(void) {
    Suite *s = suite_create("builtin_table");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, builtin_rows_have_signature_and_doc);
    tcase_add_test(tc, builtin_rows_of_v2_builtins);
    tcase_add_test(tc, builtin_objects_carry_their_row);
    tcase_add_test(tc, builtin_signatures_are_the_eager_binding);
    suite_add_tcase(s, tc);
    return s;
}
