/* grad.h - backward rules as graph-building code (spec section 7).
 *
 * Each differentiable op's rule is written once, with ops, through a GradBuilder. A value
 * of the builder is a GVal handle: eagerly a tensor (or a weak number); a static builder
 * would instead give each GVal a register (reg) and emit one I_OP instruction per gb_op,
 * the same calls in the same order, so eager and static gradients accumulate alike. The
 * builder's `run` hook is that one difference: the eager builder runs op_run; a static one
 * (not written yet) would call cc_emit_op (vm/compile/cbuiltins.c) with the handles' registers.
 *
 * Ownership: every tensor a GVal of the builder holds is owned by the builder and
 * released by gb_free(); gb_keep() hands one out as a NEW reference. */
#ifndef TSL_GRAD_H
#define TSL_GRAD_H
#include "opcall.h"

/* Rules read a value's dtype and shape from the handle (never from t), so the same rule
 * runs on either builder. */
typedef struct {
    Tensor *t;       /* eager: the value (NULL: none / a number / static) */
    int reg;         /* static: the tensor or number register (-1: eager, or a constant number) */
    bool ok;         /* a tensor value (not none, not a failure, not a number) */
    bool is_num;     /* a weak scalar number: x, or number register reg when reg >= 0 */
    double x;
    DType dtype;     /* tensors */
    Shape shape;
} GVal;

typedef struct GradBuilder GradBuilder;
struct GradBuilder {
    /* runs one op; out[] NEW references. The eager one is op_run; the language may hook
     * it (to record the backward ops on an outer tape). */
    int (*run)(GradBuilder *b, const OpCall *c, Tensor **out);
    /* static builders: emits one op instead of running it (run is then unused); returns
     * the result handle, a none GVal on failure. */
    GVal (*emit)(GradBuilder *b, OpCode op, const GVal *in, int n, const OpAttrs *at, int which);
    void *ctx;
    Tensor **owned;
    int nowned, cap;
};

/* What a rule sees of one recorded op call. x[i] and y are the forward operands and
 * result as GVals; gy the incoming gradient; needs[i] whether operand i wants a gradient.
 * The rule sets gx[i] (a none GVal: no contribution) and returns 0, or -1 with op_fail. */
typedef struct GradCtx {
    GradBuilder *b;
    const OpCall *c;
    const GVal *x;
    GVal y, gy;
    const bool *needs;
    GVal *gx;
    int k;           /* which result of the call y and gy are (multi-result ops: eigh, qr) */
} GradCtx;

/* The attributes of a call that passes none (the tape's and the rules' ops). */
OpAttrs attrs_default(void);
void gb_init(GradBuilder *b);
void gb_free(GradBuilder *b);
GVal gb_none(void);
GVal gb_num(double x);
GVal gb_tensor(GradBuilder *b, Tensor *t);   /* borrows t (the builder retains it) */
GVal gb_reg(int reg, DType dt, const Shape *s);   /* static: a tensor register */
int64_t gv_size(GVal v);                     /* a tensor handle's element count */
bool gb_ok(GVal v);                          /* a tensor (not none, not a failure) */
Tensor *gb_keep(GVal v);                     /* a NEW reference to v's tensor */

/* One op on handles; attrs NULL: the op's defaults. A failed op gives a none GVal with
 * the message in op_error() (so rules check gb_ok once at the end, or per step). */
GVal gb_op(GradBuilder *b, OpCode op, const GVal *in, int n, const OpAttrs *at);
GVal gb_op_result(GradBuilder *b, OpCode op, const GVal *in, int n, const OpAttrs *at, int which);   /* result `which` */
GVal gb_add(GradBuilder *b, GVal x, GVal y);
GVal gb_sub(GradBuilder *b, GVal x, GVal y);
GVal gb_mul(GradBuilder *b, GVal x, GVal y);
GVal gb_div(GradBuilder *b, GVal x, GVal y);
GVal gb_neg(GradBuilder *b, GVal x);
GVal gb_unary(GradBuilder *b, OpCode op, GVal x);
GVal gb_zeros_like(GradBuilder *b, GVal x);
GVal gb_ones_like(GradBuilder *b, GVal x);
GVal gb_astype(GradBuilder *b, GVal x, DType dt);
GVal gb_reshape(GradBuilder *b, GVal x, const Shape *s);
GVal gb_swap_last(GradBuilder *b, GVal v);    /* v with its last two axes swapped */
/* g summed over the axes it was broadcast along, to shape s and dtype dt (un-broadcasting). */
GVal gb_sum_to_shape(GradBuilder *b, GVal g, const Shape *s, DType dt);

/* Runs op's backward rule; -1 with "no gradient for OP yet" when it has none. */
int grad_backward(GradCtx *g);
/* Whether op has a rule (ops without one fail only when backward reaches them). */
bool grad_has_rule(OpCode op);
/* Fills op_info[].backward from the one list of rules (op_table_init calls it). */
void grad_table_init(void);

#endif
