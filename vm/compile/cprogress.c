/* cprogress.c - `for x in progress(ITER, total=nil, desc="")` in static code: the loop over
 * ITER compiles as it would without the call (the loop statement's iterable is ITER while it
 * compiles), and the bar becomes three host instructions
 * calling lang/progress.c's progress_bar (PB_BEGIN with the range's start, stop and step and
 * progress()'s arguments, PB_TICK after each iteration, PB_END where the loop exits, breaks
 * included), so the bar is drawn in program order as eagerly. The counted loops take it
 * (vm/compile/compile.c: a range, a tensor's rows); a loop compiled as copies of its body (a
 * list, a dict, a string, an unrolled range), one with `return` in its body (which would skip
 * the end) and one under grad run eagerly, with the reason. */
#include "comp.h"
#include "progress.h"

bool cprogress_is_call(Comp *c, Node *it) {
    if (it->kind != AST_CALL || it->a->kind != AST_NAME) return false;
    AVal fn = cc_expr(c, it->a);
    return !c->failed && fn.kind == AV_CONST && builtin_is(fn.k, "progress");
}

static bool has_return(const Node *n) {
    if (!n) return false;
    if (n->kind == AST_RETURN) return true;
    if (has_return(n->a) || has_return(n->b) || has_return(n->c)) return true;
    for (int i = 0; i < n->n; i++)
        if (has_return(n->kids[i])) return true;
    for (int i = 0; i < n->nk; i++)
        if (has_return(n->kw[i])) return true;
    return false;
}

/* progress(ITER, total, desc)'s arguments by position or name: ITER's node, the others compiled. */
static Node *bind_args(Comp *c, Node *call, CProgress *p) {
    Node *arg[3] = { NULL, NULL, NULL };
    if (call->n > 3) return NULL;
    for (int i = 0; i < call->n; i++) arg[i] = call->kids[i];
    for (int i = 0; i < call->nk; i++) {
        int k = !strcmp(call->names[i], "total") ? 1 : !strcmp(call->names[i], "desc") ? 2 : -1;
        if (k < 0 || arg[k]) return NULL;
        arg[k] = call->kw[i];
    }
    p->total = arg[1] ? cc_expr(c, arg[1]) : (AVal){ .kind = AV_NONE };
    if (!c->failed) p->desc = arg[2] ? cc_expr(c, arg[2]) : (AVal){ .kind = AV_NONE };
    return c->failed ? NULL : arg[0];
}

void cprogress_for(Comp *c, Node *n) {
    Node *call = n->b;
    if (c->tape) { cc_unsupported(c, "a progress() loop in a function being differentiated"); return; }
    if (has_return(n->c)) { cc_unsupported(c, "return inside a progress() loop"); return; }
    CProgress p = { 0 };
    Node *it = bind_args(c, call, &p);
    if (c->failed) return;
    if (!it) { cc_unsupported(c, "progress() with these arguments is not supported in static code"); return; }
    /* the loop over ITER itself, which takes the bar when it is a counted loop */
    c->bar = &p;   /* cc_for_stmt takes it at once */
    n->b = it;
    cc_for_stmt(c, n);
    n->b = call;
    c->bar = NULL;
}

static void emit(Comp *c, AVal *args, int n) {
    if (!cc_host_effect(c, progress_host_builtin(c->I), args, n))
        cc_unsupported(c, "progress() with a total or desc made of values static code cannot pass");
}

void cprogress_begin(Comp *c, CProgress *p, double start, AVal stop, double step) {
    if (p->begun) return;
    p->begun = true;
    AVal none = cc_const_av(NIL_VAL), empty = p->desc.kind == AV_NONE ? cc_const_av(cc_keep_value(c, val_cstr(""))) : p->desc;
    AVal args[6] = { cc_num_const(PB_BEGIN), cc_num_const(start), stop, cc_num_const(step),
                     p->total.kind == AV_NONE ? none : p->total, empty };
    emit(c, args, 6);
}

void cprogress_tick(Comp *c, CProgress *p) {
    AVal a = cc_num_const(PB_TICK);
    emit(c, &a, 1);
}

void cprogress_end(Comp *c, CProgress *p) {
    AVal a = cc_num_const(PB_END);
    emit(c, &a, 1);
}
