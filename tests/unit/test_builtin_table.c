/* test_builtin_table.c - every built-in that is not an op has one row with a signature and a
 * one-line doc (lang/builtins.h BuiltinDef), so help(x) can print "name(signature)" and the
 * line for any built-in; ops have theirs in ops.def. */
#include <string.h>
#include "suites.h"
#include "builtins.h"
#include "methods.h"
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

/* A row's signature is its parameter spec: eager built-ins bind by it (builtin_bind, parsed
 * once per row) and static code too (vm/compile/cbuiltins.c). So every row but print's and range's
 * must be a plain list of distinct names, which each built-in object carries parsed; a call
 * with one argument too many gets args_match's message when the interpreter (or constant
 * folding, tests/errors/builtin_fold_too_many_args.tsl) calls the built-in with
 * calling_builtin set; without it, an internal error (never another row's binding), or
 * args_match's message from some built-ins of no parameters, which count them themselves. */
static const char *eager_error(Interp *I, ObjBuiltin *b, int npos, bool as_call) {
    Value pos[ARGS_MAX + 1];
    for (int i = 0; i <= ARGS_MAX; i++) pos[i] = NIL_VAL;
    CallArgs a = { pos, npos, NULL, NULL, 0 };
    interp_clear_error(I);
    I->calling_builtin = as_call ? b : NULL;
    Value r = b->fn(I, &a);
    return IS_ERR(r) ? I->err_msg : "(no error)";
}

START_TEST(builtin_signatures_are_parameter_lists) {
    Interp *I = interp_new();
    ck_assert_int_eq(run_in(I, "x = 1"), 0);
    const char **names;
    int n = builtins_names(&names), checked = 0;
    for (int i = 0; i < n; i++) {
        const BuiltinDef *d = builtin_def(names[i]);
        if (!d) continue;   /* an op: ops.def */
        const char *params[ARGS_MAX + 1];
        char buf[128], want[300];
        int nreq = builtin_params(d, params, buf, sizeof buf);
        if (!strcmp(d->name, "print") || !strcmp(d->name, "range") || !strcmp(d->name, "einsum")) {   /* variadic */
            ck_assert_int_lt(nreq, 0);
            continue;
        }
        ck_assert_msg(nreq >= 0, "%s: signature '%s' is not a plain parameter list", d->name, d->signature);
        int np = 0;
        for (; params[np]; np++) {
            const char *nm = params[np];
            ck_assert_msg(nm[0] >= 'a' && strspn(nm, "abcdefghijklmnopqrstuvwxyz_0123456789") == strlen(nm),
                          "%s: '%s' is not a parameter name", d->name, nm);
            for (int k = 0; k < np; k++) ck_assert_msg(strcmp(params[k], params[np]), "%s: '%s' twice", d->name, params[np]);
        }
        ObjBuiltin *b = AS_BUILTIN(I->main->g.vals[globals_find(&I->main->g, d->name)]);
        ck_assert_msg(b->params && b->params->np == np && b->params->nreq == nreq, "%s: parsed otherwise", d->name);
        int which[ARGS_MAX];
        args_match(d->name, params, nreq, np + 1, NULL, 0, which, want, sizeof want);
        ck_assert_str_eq(eager_error(I, b, np + 1, true), want);
        const char *unbound = eager_error(I, b, np + 1, false);
        if (np || strcmp(unbound, want)) ck_assert_str_eq(unbound, "internal error: a built-in without a plain signature");
        checked++;
    }
    I->calling_builtin = NULL;
    ck_assert_int_ge(checked, 40);
    interp_free(I);
}
END_TEST

/* The tensor methods are the op table (lang/methods.h): t.NAME(...) for exactly the ops with a
 * built-in whose first parameter is a tensor, each NAME found by the sorted lookup and bound to
 * the built-in the global NAME starts as; completion lists them in table order, then the
 * conversions item, tolist and to. */
START_TEST(tensor_methods_are_the_op_table) {
    Interp *I = interp_new();
    ck_assert_int_eq(run_in(I, "x = 1"), 0);
    int listed = 0;
    for (int op = 0; op < OP__COUNT; op++) {
        const OpDef *d = op_def((OpCode)op);
        bool method = !(d->flags & F_SYNTAX) && d->nparams > 0 && d->params[0].type == P_T;
        ck_assert_msg((method_tensor_op(d->name) == (OpCode)op) == method, "%s: method %d", d->name, method);
        if (!method) continue;
        Value g = I->main->g.vals[globals_find(&I->main->g, d->name)];
        ck_assert_msg(method_tensor_builtin(I, d->name) == AS_BUILTIN(g), "%s: another built-in", d->name);
        ck_assert_str_eq(method_tensor_nth(listed++), d->name);
    }
    const char *conversions[] = { "item", "tolist", "to" };   /* then the three conversions */
    for (int k = 0; k < 3; k++) {
        ck_assert_str_eq(method_tensor_nth(listed++), conversions[k]);
        Value g = I->main->g.vals[globals_find(&I->main->g, conversions[k])];
        ck_assert(method_tensor_builtin(I, conversions[k]) == AS_BUILTIN(g));
    }
    ck_assert_ptr_null(method_tensor_nth(listed));
    ck_assert_ptr_null(method_tensor_builtin(I, "float"));   /* PyTorch's x.float() is a tensor */
    ck_assert_int_ge(listed, 83);
    ck_assert_int_eq(method_tensor_op("sum"), OP_SUM);
    ck_assert_int_eq(method_tensor_op("add"), OP__COUNT);     /* '+' only */
    ck_assert_int_eq(method_tensor_op("zeros"), OP__COUNT);   /* a shape first */
    ck_assert_int_eq(method_tensor_op("concat"), OP__COUNT);  /* a list of tensors first */
    ck_assert_int_eq(method_tensor_op("item"), OP__COUNT);    /* not an op */
    ck_assert_int_eq(method_tensor_op(""), OP__COUNT);
    for (int i = 0; tensor_attrs[i]; i++) ck_assert_int_eq(method_tensor_op(tensor_attrs[i]), OP__COUNT);
    interp_free(I);
}
END_TEST

Suite *builtin_table_suite(void) {
    Suite *s = suite_create("builtin_table");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, builtin_rows_have_signature_and_doc);
    tcase_add_test(tc, builtin_rows_of_v2_builtins);
    tcase_add_test(tc, builtin_objects_carry_their_row);
    tcase_add_test(tc, builtin_signatures_are_parameter_lists);
    tcase_add_test(tc, tensor_methods_are_the_op_table);
    suite_add_tcase(s, tc);
    return s;
}
