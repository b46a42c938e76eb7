/* carray.c - lists indexed at run time, and tensor arrays (lists of tensors that grow in a
 * run-time loop), in static code.
 *
 * A list's structure is known when compiling (its items are AVals), so `xs[2]` is simply an
 * item. `xs[i]` with i known only at run time (a loop counter) is a SELECT instruction: it
 * moves the register of item i into its result, with eager's rules and messages for the
 * index; every item must then be of one kind (tensors of one dtype and shape, or numbers),
 * so the result has one register type whatever i is. */
#include "comp.h"

/* Why the items of a list cannot be chosen between at run time, or NULL when they can: the
 * result's register type must not depend on the index. */
static const char *select_problem(Comp *c, const AStruct *st) {
    for (int i = 0; i < st->n; i++) {
        const AVal *v = &st->items[i], *v0 = &st->items[0];
        if (v->kind != AV_TENSOR && v->kind != AV_NUM) {
            if (v->kind == AV_CLOSURE || (v->kind == AV_CONST && v->k.type == VAL_FUNC))
                return "a list of functions indexed by a number computed at run time (each call is inlined, so "
                       "the function must be known when compiling)";
            return "a list whose items are not tensors or numbers, indexed by a number computed at run time";
        }
        if (v->kind != v0->kind || v->is_bool != v0->is_bool)
            return "a list of items of different kinds, indexed by a number computed at run time";
        if (v->kind == AV_TENSOR && (v->dtype != v0->dtype || !shape_equal(&v->shape, &v0->shape)))
            return "a list of tensors of different shapes or dtypes, indexed by a number computed at run time";
        if (v->unset) return "a list holding a variable that may be unset, indexed by a number computed at run time";
        if (v->kind == AV_TENSOR && c->tape && cgrad_tracked(c, v->reg))
            return "a list of tensors being differentiated, indexed by a number computed at run time (not compiled yet)";
    }
    return NULL;
}

/* list[key] where key is a number known only at run time: one SELECT over the items'
 * registers (an empty list fails at run time, as eagerly). */
AVal ca_select(Comp *c, AStruct *st, AVal key, SrcLoc loc) {
    c->loc = loc;
    const char *why = select_problem(c, st);
    if (why) return cc_unsupported(c, "%s", why);
    if (st->n == 0) return cc_unsupported(c, "an empty list indexed by a number computed at run time");
    int *regs = mem_alloc(sizeof(int) * (size_t)st->n);
    for (int i = 0; i < st->n; i++) regs[i] = st->items[i].kind == AV_NUM ? cc_num_reg(c, &st->items[i]) : st->items[i].reg;
    int kr = cc_num_reg(c, &key);
    const AVal *v0 = &st->items[0];
    AVal r = v0->kind == AV_TENSOR ? cc_tensor_av(c, v0->dtype, &v0->shape)
                                   : (AVal){ .kind = AV_NUM, .is_bool = v0->is_bool, .reg = cc_new_num(c, v0->is_bool) };
    c->loc = loc;
    Ins *in = cc_emit(c, I_SELECT);
    in->dst = r.reg;
    in->a = kr;
    in->args = regs;
    in->nargs = st->n;
    return r;
}
