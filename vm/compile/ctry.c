/* ctry.c - `try { A } catch e { B }` in static code (docs/static.md, "try in static code").
 *
 * A graph cannot unwind to a handler, so a try compiles when the compiler can tell where its
 * body fails: an error the compiler raises while compiling A (a shape or dtype mismatch, a
 * missing key, an index out of range: the errors eager code would raise at the same point,
 * since the graph is specialised on the shapes, dtypes and constants its guards check) is
 * caught here when it was raised in straight-line code of A. What A's code did before the failing point is already emitted, as eager code
 * would have done it; e becomes the caught error as a compile-time dict and B is compiled
 * after it. A body that compiles is kept when none of its instructions can fail at run time
 * (arithmetic on floats, comparisons, reductions, shape ops, constant indexing): the handler
 * is then dead code. Anything else (a run-time index, an assert, integer division, a host
 * call) may fail while the graph runs: the region then runs eagerly, which is always right. */
#include <string.h>
#include "comp.h"

/* Whether instruction in may fail while the graph runs (besides running out of memory). */
static bool may_fail(const Graph *g, const Ins *in) {
    switch (in->op) {
    case I_NCONST: case I_NMOVE: case I_NBIN: case I_NNEG: case I_NNOT: case I_NMATH:
    case I_TCONST: case I_SCALAR: case I_TMOVE: case I_JUMP: case I_JUMPF: case I_PRINT:
    case I_FUSED: case I_EPILOGUE: case I_DIM: case I_VMOVE:
        return false;
    case I_INDEX: return in->nargs > 0;   /* indices read at run time are checked then */
    case I_OP: {
        const OpDef *d = &op_info[in->aux];
        if (d->flags & (F_DYNAMIC | F_ITEM | F_READBACK | F_COLL)) return true;
        if (d->kind == K_COMPARE || d->kind == K_REDUCE) return false;
        if (d->kind == K_UNARY || d->kind == K_BINARY) return !dtype_is_float(g->regs[in->dst].dtype);
        static const char *const safe[] = { "matmul", "transpose", "reshape", "expand_dims", "squeeze", "concat",
                                            "stack", "broadcast_to", "where", "clip", "softmax", "log_softmax", NULL };
        for (int i = 0; safe[i]; i++)
            if (!strcmp(d->name, safe[i])) return false;
        return true;
    }
    default: return true;
    }
}

void cc_try(Comp *c, Node *n) {
    Inline *ictx = c->ictx;
    Loop *loop = c->loop;
    int dry = c->dry, depth = c->branch_depth, start = c->g->ncode, outer_try = c->try_depth;
    c->try_depth = depth + 1;
    cc_block(c, n->a);
    c->try_depth = outer_try;
    if (!c->failed) {
        for (int i = start; i < c->g->ncode; i++)
            if (may_fail(c->g, &c->g->code[i])) {
                c->loc = c->g->code[i].loc;
                cc_unsupported(c, "a try whose body may fail while the graph runs");
                return;
            }
        return;   /* A cannot fail: the handler never runs */
    }
    if (c->status != COMPILE_ERROR) return;   /* unsupported already: the region runs eagerly */
    Interp *I = c->I;
    /* raised where A runs for sure (not in a loop or run-time branch of it, which may not run),
     * and every construct between unwound back to the try's own state */
    bool caught_here = !I->err_final && c->err_depth == depth && c->err_dry == dry && c->ictx == ictx &&
                       c->loop == loop && c->dry == dry && c->branch_depth == depth;
    Value e = caught_here && n->b ? interp_caught_error(I) : NIL_VAL;
    interp_clear_error(I);
    c->failed = false;
    c->status = COMPILE_OK;
    if (!caught_here) {
        c->loc = n->loc;
        cc_unsupported(c, "a try whose body fails inside a loop or run-time branch");
        return;
    }
    if (n->b) {
        AVal v = cc_from_value(c, e);
        val_release(e);
        if (c->failed) return;
        cc_env_set(c, cc_name_key(c, n->b), v, n->b->str, true);
    }
    cc_block(c, n->c);
}
