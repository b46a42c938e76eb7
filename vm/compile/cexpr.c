/* cexpr.c - the static compiler's expressions: operators, truth values, literals,
 * indexing, calls (inlined), and the operands the VM builds at run time. */
#include "comp.h"
#include "methods.h"
#include "opargs.h"

/* ---------- expressions ---------- */

AVal cc_expr(Comp *c, Node *n);
void cc_stmt(Comp *c, Node *n);
void cc_block(Comp *c, Node *b);
AVal cc_call_value(Comp *c, AVal fn, AVal *args, int nargs, char **kwnames, AVal *kw, int nkw, SrcLoc loc);

static bool is_cmp(int tok) {
    return tok == TOK_EQ || tok == TOK_NE || tok == TOK_LT || tok == TOK_LE || tok == TOK_GT || tok == TOK_GE;
}

/* Two numbers under an op of the table (NBIN's aux is that op). */
static AVal num_binary_av(Comp *c, int tok, AVal a, AVal b) {
    OpCode op = (OpCode)tensor_op_of(tok);
    AVal r = { .kind = AV_NUM, .reg = -1 };
    r.is_bool = is_cmp(tok);
    r.known = a.known && b.known;
    r.deps = a.deps | b.deps;
    if (r.known) r.num = op_binary_number(op, a.num, b.num);
    if (r.known && !r.deps) return r;   /* a pure constant */
    cslice_affine(&r, tok, &a, &b);
    int ra = cc_num_reg(c, &a), rb = cc_num_reg(c, &b);
    Ins *in = cc_emit(c, I_NBIN);
    in->dst = r.reg = cc_new_num(c, r.is_bool);
    in->a = ra;
    in->b = rb;
    in->aux = op;
    return r;
}

/* `x in c` / `x not in c` when compiling: a key of a dict structure is known from its
 * keys; otherwise both sides must be known values, folded by the eager function. */
static AVal in_values(Comp *c, int op, AVal a, AVal b, SrcLoc loc) {
    if (b.kind == AV_DICT && a.kind == AV_CONST && a.k.type == VAL_STR) {
        cc_struct_n(c, b.st);   /* the answer rests on its keys */
        return cc_bool_const((cc_astruct_find(b.st, AS_STR(a.k)->chars) >= 0) != (op == TOK_NOT_IN));
    }
    Value x, y;
    if (cc_pure_value(c, &a, &x) && cc_pure_value(c, &b, &y)) return cc_folded(c, value_binary(c->I, op, x, y), loc);
    return cc_unsupported(c, "'%s' on values not known when compiling (it is folded only for known lists, dicts and strings)",
                          op == TOK_IN ? "in" : "not in");
}

/* A number operand of & | ^ ~: a non-integral one is an error, so a number computed at run
 * time is checked there (the VM's NBIN/NMATH report it as eagerly). */
static bool is_bitwise(int tok) { return tok == TOK_AMP || tok == TOK_PIPE || tok == TOK_CARET; }

/* a (op) b on compiled values (the operator's node at loc). */
AVal cc_binary_values(Comp *c, int op, AVal a, AVal b, SrcLoc loc) {
    c->loc = loc;
    if (op == TOK_IN || op == TOK_NOT_IN) return in_values(c, op, a, b, loc);
    if (is_bitwise(op) && a.kind == AV_NUM && b.kind == AV_NUM)
        return cc_emit_op(c, (OpCode)tensor_op_of(op), (AVal[]){ a, b }, 2, NULL);
    if (a.kind == AV_NUM && b.kind == AV_NUM && !(a.is_bool && b.is_bool && op != TOK_EQ && op != TOK_NE))
        return num_binary_av(c, op, a, b);
    if (a.kind == AV_NUM && b.kind == AV_NUM) return num_binary_av(c, op, a, b);
    if (op == TOK_AT && (a.kind != AV_TENSOR || b.kind != AV_TENSOR)) return cc_error_atk(c, ERRK_TYPE, loc, "'@' needs two tensors");
    if ((a.kind == AV_TENSOR && (b.kind == AV_TENSOR || b.kind == AV_NUM)) || (b.kind == AV_TENSOR && a.kind == AV_NUM))
        return cc_emit_op(c, (OpCode)tensor_op_of(op), (AVal[]){ a, b }, 2, NULL);
    if (a.kind == AV_TENSOR || b.kind == AV_TENSOR) {
        if (op == TOK_EQ || op == TOK_NE) {
            AVal o = a.kind == AV_TENSOR ? b : a;
            if (o.kind == AV_CONST || o.kind == AV_LIST || o.kind == AV_DICT || o.kind == AV_CLOSURE)
                return cc_bool_const(op == TOK_NE);
        }
        return cc_unsupported(c, "this mix of a tensor and a non-number");
    }
    AVal hr;
    if (cc_host_binary(c, op, a, b, &hr)) return hr;   /* a string made at run time */
    Value x, y;
    if (op == TOK_STAR && ((a.kind == AV_CONST && a.k.type == VAL_STR && b.kind == AV_NUM) ||
                           (b.kind == AV_CONST && b.k.type == VAL_STR && a.kind == AV_NUM))) {
        /* s * n: the count shapes the string, so a number input is a guard (as a loop bound is) */
        AVal *n = a.kind == AV_NUM ? &a : &b;
        double k;
        if (!cc_need_const(c, n, &k, "the count of a string repeat")) return FAILV;
        Value s = a.kind == AV_NUM ? b.k : a.k;
        return cc_folded(c, value_binary(c->I, op, s, NUM_VAL(k)), loc);
    }
    if (cc_pure_value(c, &a, &x) && cc_pure_value(c, &b, &y)) {
        return cc_folded(c, value_binary(c->I, op, x, y), loc);
    }
    if ((op == TOK_EQ || op == TOK_NE) && a.kind != b.kind && a.kind != AV_NUM && b.kind != AV_NUM)
        return cc_bool_const(op == TOK_NE);
    return cc_unsupported(c, "operator '%s' on these values", tok_symbol((TokKind)op));
}

static AVal field_of(Comp *c, AVal obj, Node *n);
static AVal call_expr_with(Comp *c, Node *n, AVal fn);

/* a @ transpose(x), a @ x.T, transpose(x) @ b and x.T @ b of a matrix x: matmul with
 * transpose_b or transpose_a, no copy of x^T, exactly as eager code chooses, by ranks only
 * (lang/interp.c, "a @ transpose(x), transpose(x) @ b": OpenBLAS's transposed read need not
 * give a copy's bits); anything else as written. The forms: transpose(x) with one argument of
 * a name, or x.T; when the left side has one, the right side is compiled as written. */
static bool transpose_form(const Node *t) {
    return (t->kind == AST_CALL && t->n == 1 && t->nk == 0 && t->a->kind == AST_NAME) ||
           (t->kind == AST_FIELD && !strcmp(t->str, "T"));
}

/* Form t's source x into *x (true), or its value as written into *v when the callee is not
 * the built-in transpose (false); *fn the callee. FAILV in both on an error. */
static bool transpose_source(Comp *c, Node *t, AVal *x, AVal *fn, AVal *v) {
    *x = *v = *fn = FAILV;
    if (t->kind == AST_FIELD) {
        *x = cc_expr(c, t->a);
        return true;
    }
    *fn = cc_expr(c, t->a);
    if (c->failed) return false;
    if (fn->kind == AV_CONST && fn->k.type == VAL_FUNC && fn->k.as.o == (Obj *)builtins_of_op(c->I, OP_TRANSPOSE)) {
        *x = cc_expr(c, t->kids[0]);
        return true;
    }
    *v = call_expr_with(c, t, *fn);
    return false;
}

/* Form t's value as written from its source x (and callee fn). */
static AVal transpose_written(Comp *c, Node *t, AVal x, AVal fn) {
    c->loc = t->loc;
    return t->kind == AST_FIELD ? field_of(c, x, t) : cc_call_value(c, fn, &x, 1, NULL, NULL, 0, t->loc);
}

static bool tensor_rank(const AVal *v, int rank, bool matrix) {
    return v->kind == AV_TENSOR && (matrix ? v->shape.ndim == 2 : v->shape.ndim >= rank);
}

static AVal matmul_transposed(Comp *c, Node *n, AVal a, AVal b, bool ta) {
    c->loc = n->loc;
    OpAttrs at;
    memset(&at, 0, sizeof at);
    opargs_attrs_init(OP_MATMUL, &at);
    at.flag = ta;     /* transpose_a, matmul's third parameter */
    at.flag2 = !ta;   /* transpose_b, its fourth */
    at.given = ta ? 1u << 2 : 1u << 3;
    return cc_emit_op(c, OP_MATMUL, (AVal[]){ a, b }, 2, &at);
}

/* a @ <form>, a compiled. */
static AVal at_transpose(Comp *c, Node *n, AVal a) {
    AVal x, fn, t;
    if (transpose_source(c, n->b, &x, &fn, &t)) {
        if (c->failed) return FAILV;
        if (tensor_rank(&x, 2, true) && tensor_rank(&a, 1, false)) return matmul_transposed(c, n, a, x, false);
        t = transpose_written(c, n->b, x, fn);
    }
    if (c->failed) return FAILV;
    return cc_binary_values(c, n->op, a, t, n->loc);
}

/* <form> @ b. */
static AVal transpose_at(Comp *c, Node *n) {
    AVal x, fn, t, b;
    bool matrix = false;
    if (transpose_source(c, n->a, &x, &fn, &t)) {
        if (c->failed) return FAILV;
        matrix = tensor_rank(&x, 2, true);
        if (!matrix) t = transpose_written(c, n->a, x, fn);
    }
    if (c->failed) return FAILV;
    TRY(b = cc_expr(c, n->b));
    if (matrix && tensor_rank(&b, 1, false)) return matmul_transposed(c, n, x, b, true);
    if (matrix) TRY(t = transpose_written(c, n->a, x, fn));
    return cc_binary_values(c, n->op, t, b, n->loc);
}

static AVal binary(Comp *c, Node *n) {
    AVal a, b;
    if (n->op == TOK_AT && transpose_form(n->a)) return transpose_at(c, n);
    TRY(a = cc_expr(c, n->a));
    if (n->op == TOK_AT && transpose_form(n->b)) return at_transpose(c, n, a);
    TRY(b = cc_expr(c, n->b));
    return cc_binary_values(c, n->op, a, b, n->loc);
}

/* Truth value of a condition: known (returns 0/1) or a bool register (returns -1, *reg). */
int cc_truth(Comp *c, AVal v, int *reg, SrcLoc loc) {
    switch (v.kind) {
    case AV_CONST: return val_truthy_simple(v.k);
    case AV_NUM:
        if (!v.is_bool) return 1;   /* every number is true, 0 included */
        if (v.known) c->decided++;   /* see prepare_homes */
        if (v.known && !v.deps) return v.num != 0;
        if (v.known) {
            double x;
            cc_need_const(c, &v, &x, "a condition");
            return x != 0;
        }
        *reg = v.reg;
        return -1;
    case AV_TENSOR: {
        c->loc = loc;
        Ins *in = cc_emit(c, I_TRUTH);
        in->dst = cc_new_num(c, true);
        in->a = v.reg;
        *reg = in->dst;
        return -1;
    }
    case AV_LIST:
        if (ca_is_open(v.st)) ca_read_open(c);   /* its truth is its length's */
        return 1;
    default: return 1;
    }
}

static AVal not_expr(Comp *c, Node *n) {
    AVal a;
    TRY(a = cc_cond(c, n->a));   /* only its truth matters */
    int reg, t = cc_truth(c, a, &reg, n->a->loc);
    if (c->failed) return FAILV;
    if (t >= 0) return cc_bool_const(!t);
    c->loc = n->loc;
    Ins *in = cc_emit(c, I_NNOT);
    in->dst = cc_new_num(c, true);
    in->a = reg;
    AVal r = { .kind = AV_NUM, .is_bool = true, .reg = in->dst };
    return r;
}

static AVal and_or(Comp *c, Node *n) {
    AVal a;
    TRY(a = cc_expr(c, n->a));
    int reg, t = cc_truth(c, a, &reg, n->a->loc);
    if (c->failed) return FAILV;
    bool is_and = n->kind == AST_AND;
    if (t >= 0) return (is_and == (t != 0)) ? cc_expr(c, n->b) : a;
    if (a.kind != AV_NUM || !a.is_bool)   /* its value would be a or b, of different kinds */
        return cc_unsupported(c, "'and'/'or' on a value known only at run time, used as a value, with an operand that is not true/false");
    return cc_and_or_runtime(c, n, reg, true);
}

static AVal make_list(Comp *c, Node *n) {
    AStruct *st = cc_astruct_new(c, false);
    for (int i = 0; i < n->n; i++) {
        AVal v;
        TRY(v = cc_expr(c, n->kids[i]));
        cc_astruct_push(c, st, NULL, v);
    }
    return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
}

static AVal make_dict(Comp *c, Node *n) {
    AStruct *st = cc_astruct_new(c, true);
    for (int i = 0; i < n->n; i++) {
        AVal v;
        TRY(v = cc_expr(c, n->kids[i]));
        int at = cc_astruct_find(st, n->names[i]);
        if (at >= 0) st->items[at] = v;
        else cc_astruct_push(c, st, n->names[i], v);
    }
    return (AVal){ .kind = AV_DICT, .st = st, .reg = -1 };
}

AVal cc_make_closure(Comp *c, FnProto *p) {
    CClosure *cl = cc_arena_alloc(c, sizeof *cl);
    cl->proto = p;
    cl->mod = c->ictx ? c->ictx->mod : c->mod;
    cl->caps = cc_arena_alloc(c, sizeof(VarKey) * (size_t)(p->nupvals + 1));
    for (int i = 0; i < p->nupvals; i++) {
        Node fake = { .kind = AST_NAME, .scope = p->upvals[i].from_local ? SCOPE_LOCAL : SCOPE_UPVAL,
                      .slot = p->upvals[i].index };
        cl->caps[i] = cc_name_key(c, &fake);
        if (p->upvals[i].from_local && !c->ictx && !c->fn) {
            /* a local of the block's frame captured by a closure is a cell there */
            cl->caps[i].kind = K_CELL;
            cl->caps[i].ptr = c->frame->slots[p->upvals[i].index].as.o;
        }
    }
    return (AVal){ .kind = AV_CLOSURE, .cl = cl, .reg = -1 };
}

/* ---------- indexing ---------- */

/* t[...] of a tensor being differentiated, as eager code records it (autograd_record_index):
 * take(t, positions), the positions being the same index applied to an arange of t's shape,
 * so take's rule (scatter_add) is the backward of every kind of index. */
static AVal index_tracked(Comp *c, AVal t, Node *n) {
    if (shape_is_runtime(&t.shape)) return cc_unsupported(c, "a gradient through an index of a value with a run-time shape");
    Tensor *pos = tensor_new(DT_I64, &t.shape);
    if (!pos) return cc_op_failed(c);
    for (int64_t k = 0; k < pos->size; k++) ((int64_t *)pos->data)[k] = k;
    AVal at = cc_index_tensor(c, cc_tensor_const(c, pos), n, NULL);
    if (c->failed) return FAILV;
    return cc_emit_op(c, OP_TAKE, (AVal[]){ t, at }, 2, NULL);
}

AVal cc_index_tensor(Comp *c, AVal t, Node *n, AVal *set_value) {
    if (c->tape && set_value && (cgrad_tracked(c, t.reg) || (set_value->kind == AV_TENSOR && cgrad_tracked(c, set_value->reg))))
        return cc_unsupported(c, "assigning into a tensor that is being differentiated");   /* eager says it exactly */
    if (c->tape && !set_value && cgrad_tracked(c, t.reg)) return index_tracked(c, t, n);
    IndexItem *items = mem_calloc((size_t)n->n + 1, sizeof(IndexItem));
    int *regs = mem_alloc(sizeof(int) * (size_t)(n->n + 1));
    AVal r = FAILV;
    bool run_time_number = false;   /* an item before: a number the run makes an integer */
    int mask_at = -1, mask_ndim = 0;   /* a bool mask item: a run-time shape (cshape.c) */
    int nargs = n->n;                  /* more with slice bounds read at run time (cs_slice_bound) */
    bool named_nil = false, moved_slice = false;   /* cslice.c finds axes by the literals */
    for (int k = 0; k < n->n; k++) {
        Node *it = n->kids[k];
        regs[k] = -1;
        if (it->kind == AST_ELLIPSIS) { items[k].kind = IDX_ELLIPSIS; continue; }
        if (it->kind == AST_SLICE) {
            items[k].kind = IDX_SLICE;
            items[k].step = 1;
            Node *parts[3] = { it->a, it->b, it->c };
            AVal bound[3] = { FAILV, FAILV, FAILV };   /* kind AV_NONE: absent */
            bool run_time = false;
            for (int j = 0; j < 3; j++) {
                if (!parts[j]) continue;
                AVal v = cc_expr(c, parts[j]);
                if (c->failed) goto out;
                if (v.kind == AV_CONST && v.k.type == VAL_NIL) continue;
                bound[j] = v;
                if (v.kind == AV_NUM && !v.known && !v.is_bool) {   /* the run's: cslice.c, else cshape.c */
                    run_time = true;
                    continue;
                }
                int64_t x;
                double xd;
                c->loc = parts[j]->loc;
                if (!cc_need_const(c, &v, &xd, "a slice bound")) goto out;
                if (!num_to_i64_clamped(xd, &x)) {   /* clamped like eager's (Python's) bounds */
                    cc_error_atk(c, ERRK_TYPE, c->loc, "slice bounds must be integers");
                    goto out;
                }
                if (j == 0) { items[k].has_start = true; items[k].start = x; }
                else if (j == 1) { items[k].has_stop = true; items[k].stop = x; }
                else items[k].step = x;
            }
            if (run_time) {
                char why[300];
                c->loc = it->loc;
                moved_slice = true;
                if (!cslice_try(c, &t, n, k, bound, &items[k], &regs[k], why, sizeof why)) {
                    moved_slice = false;
                    if (c->failed) goto out;
                    /* not provably one size: a run-time shape (cshape.c), unless the step is the run's */
                    if (bound[2].kind == AV_NUM && !bound[2].known) {
                        cc_unsupported(c, "%s", why);
                        goto out;
                    }
                    for (int j = 0; j < 2; j++)
                        if (bound[j].kind == AV_NUM && !bound[j].known) cs_slice_bound(c, &bound[j], n->n, k, j, &regs, &nargs);
                    run_time_number = true;
                }
            }
            continue;   /* a zero step is infer_index's to report, in the index's order */
        }
        AVal v = cc_expr(c, it);
        if (c->failed) goto out;
        if (v.kind == AV_CONST && v.k.type == VAL_NIL) {   /* a new axis, NumPy's None */
            items[k].kind = IDX_NEWAXIS;
            named_nil |= it->kind != AST_NIL;
            continue;
        }
        if (v.kind == AV_NUM && !v.is_bool) {
            bool bad_num = v.known && (v.num != floor(v.num) || (!v.deps && !num_to_i64(v.num, &items[k].i)));
            if (bad_num && run_time_number) {   /* the run may fail on the earlier one first */
                cc_unsupported(c, "an index that fails unless its run-time integers fail first");
                goto out;
            }
            if (v.known && v.num != floor(v.num)) {
                cc_error_atk(c, ERRK_TYPE, n->loc, "tensor index must be an integer, got %g", v.num);
                goto out;
            }
            items[k].kind = IDX_INT;
            if (v.known && !v.deps) {
                if (bad_num) {
                    cc_error_atk(c, ERRK_INDEX, n->loc, "index %g is out of range", v.num);
                    goto out;
                }
            } else {
                regs[k] = cc_num_reg(c, &v);
                /* a value known now (this call's) is checked now, in the index's order,
                 * as eager code would; the run checks the values of later calls */
                items[k].at_run_time = !(v.known && num_to_i64(v.num, &items[k].i));
                run_time_number |= items[k].at_run_time;
            }
        } else if (v.kind == AV_TENSOR && v.dtype == DT_I64) {
            if (shape_is_runtime(&v.shape)) {
                cc_unsupported(c, "an index array with a run-time shape");
                goto out;
            }
            items[k].kind = IDX_TENSOR;
            regs[k] = v.reg;
            /* a stand-in with the index's shape for inference */
            items[k].t = NULL;
            Tensor *stand = tensor_zeros(DT_I64, &v.shape);
            if (!stand) { cc_op_failed(c); goto out; }
            items[k].t = stand;
        } else if (v.kind == AV_TENSOR && v.dtype == DT_BOOL && mask_at < 0) {
            items[k].kind = IDX_TENSOR;   /* the mask, read from its register at run time */
            regs[k] = v.reg;
            mask_at = k;
            mask_ndim = v.shape.ndim;
        } else {
            cc_unsupported(c, "this kind of tensor index (only integers, slices, ..., i64 tensors and one bool mask)");
            goto out;
        }
    }
    if (named_nil && moved_slice) {
        c->loc = n->loc;
        cc_unsupported(c, "a slice with a run-time start beside a new axis that is not written `nil`");
        goto out;
    }
    Shape so;
    c->loc = n->loc;
    bool run_time_shape = mask_at >= 0 || nargs > n->n || shape_is_runtime(&t.shape);
    if (run_time_shape && !cs_index_shape(c, &t.shape, items, n->n, regs, nargs, mask_at, mask_ndim, &so)) goto out;
    int bad = run_time_shape ? 0 : infer_index(&t.shape, items, n->n, &so);
    if (bad == INFER_INDEX_UNDECIDED) {
        /* it fails, but which error is the first depends on an integer of the run: eager
         * code makes the checks with it, in order */
        cc_unsupported(c, "an index that fails unless its run-time integers fail first (%s)", op_error());
        goto out;
    }
    if (bad) {
        cc_op_failed(c);
        goto out;
    }
    for (int k = 0; k < n->n; k++)
        if (items[k].kind == IDX_TENSOR) { tensor_release((Tensor *)items[k].t); items[k].t = NULL; }
    if (set_value) {
        AVal v = *set_value;
        if (v.kind == AV_NUM && !v.is_bool) {
            /* a number assigned into a tensor: a 0-d tensor of the tensor's dtype, as eagerly */
            Shape s0 = { 0, { 0 } };
            int xr = cc_num_reg(c, &v);
            v = cc_tensor_av(c, t.dtype, &s0);
            Ins *sc = cc_emit(c, I_SCALAR);
            sc->dst = v.reg;
            sc->a = xr;
            sc->aux = t.dtype;
        }
        if (v.kind != AV_TENSOR) { cc_unsupported(c, "assigning a non-tensor into a tensor"); goto out; }
        bool known = !shape_is_runtime(&so) && !shape_is_runtime(&v.shape);   /* else the run checks */
        Shape vs = shape_assigned_value(&v.shape, so.ndim);
        if (known && shape_broadcast_to(&vs, &so)) {
            char b1[600], b2[600];
            cc_error_atk(c, ERRK_SHAPE, n->loc, "cannot assign a value of shape %s to an index of shape %s",
                     shape_str(&v.shape, b1, sizeof b1), shape_str(&so, b2, sizeof b2));
            goto out;
        }
        r = cc_tensor_av(c, t.dtype, &t.shape);
        Ins *in = cc_emit(c, I_INDEX_SET);
        in->dst = r.reg;
        in->a = t.reg;
        in->b = v.reg;
        in->idx = items;
        in->nidx = n->n;
        in->args = regs;
        in->nargs = nargs;
        return r;
    }
    r = cc_tensor_av(c, t.dtype, &so);
    Ins *in = cc_emit(c, I_INDEX);
    in->dst = r.reg;
    in->a = t.reg;
    in->idx = items;
    in->nidx = n->n;
    in->args = regs;
    in->nargs = nargs;
    return r;
out:
    for (int k = 0; k < n->n; k++)
        if (items[k].kind == IDX_TENSOR && items[k].t) tensor_release((Tensor *)items[k].t);
    mem_free(items);
    mem_free(regs);
    return FAILV;
}

static AVal index_struct(Comp *c, AVal obj, AVal key, SrcLoc loc) {
    if (key.kind == AV_STR) {
        c->loc = loc;   /* a missing key is reported at the index, as eagerly */
        return cc_host_index(c, obj, key);
    }
    if (obj.kind == AV_DICT) {
        if (key.kind != AV_CONST || key.k.type != VAL_STR) return cc_error_atk(c, ERRK_TYPE, loc, "dict keys are strings");
        if (obj.st->items_unknown) return cc_unknown_items(c);
        int at = cc_astruct_find(obj.st, AS_STR(key.k)->chars);
        if (at < 0) return cc_error_atk(c, ERRK_KEY, loc, "key '%s' not found in dict", AS_STR(key.k)->chars);
        return obj.st->items[at];
    }
    int64_t i;
    c->loc = loc;
    if (obj.st->items_unknown) return cc_unsupported(c, "reading an item of a list that static code grows at run time");
    if (ca_is_open(obj.st)) return ca_read_open(c);
    if (key.kind == AV_NUM && !key.known && !key.is_bool) {
        cc_struct_n(c, obj.st);   /* select checks the index against the list's length */
        if (c->failed) return FAILV;
        return ca_select(c, obj.st, key, loc);
    }
    if (!cc_need_int(c, &key, &i, "a list index")) return FAILV;
    if (!cc_list_index(c, obj.st, &i)) return FAILV;
    if (i < 0 || i >= obj.st->n) return cc_error_atk(c, ERRK_INDEX, loc, "list index out of range");
    return obj.st->items[i];
}

static AVal index_expr(Comp *c, Node *n) {
    AVal obj;
    TRY(obj = cc_expr(c, n->a));
    c->loc = n->loc;
    if (obj.kind == AV_TENSOR) return cc_index_tensor(c, obj, n, NULL);
    if ((obj.kind == AV_LIST || obj.kind == AV_DICT) && n->n == 1 && n->kids[0]->kind != AST_SLICE &&
        n->kids[0]->kind != AST_ELLIPSIS) {
        AVal key;
        TRY(key = cc_expr(c, n->kids[0]));
        return index_struct(c, obj, key, n->loc);
    }
    Value o;
    if (cc_pure_value(c, &obj, &o) && n->n == 1 && n->kids[0]->kind != AST_SLICE && n->kids[0]->kind != AST_ELLIPSIS) {
        AVal key;
        Value kv;
        TRY(key = cc_expr(c, n->kids[0]));
        if (cc_pure_value(c, &key, &kv)) {
            return cc_folded(c, value_index(c->I, o, &kv, 1), n->loc);
        }
    }
    if (cc_pure_value(c, &obj, &o) && o.type == VAL_STR && n->n == 1 && n->kids[0]->kind == AST_SLICE) {
        /* a slice of a known string (strings are guards): folded, as eager code slices it */
        Node *parts[3] = { n->kids[0]->a, n->kids[0]->b, n->kids[0]->c };
        Value b[3] = { NIL_VAL, NIL_VAL, NIL_VAL };
        for (int j = 0; j < 3; j++) {
            if (!parts[j]) continue;
            AVal x;
            TRY(x = cc_expr(c, parts[j]));
            if (!cc_pure_value(c, &x, &b[j])) return cc_unsupported(c, "a string slice with bounds computed at run time");
        }
        return cc_folded(c, value_slice(c->I, o, b), n->loc);
    }
    return cc_unsupported(c, "this kind of indexing");
}

/* Field n->str of obj, the value of n->a. */
static AVal field_of(Comp *c, AVal obj, Node *n) {
    c->loc = n->loc;
    if (obj.kind == AV_DICT) {
        if (obj.st->items_unknown) return cc_unknown_items(c);
        int at = cc_astruct_find(obj.st, n->str);
        if (at < 0) {
            char hint[SUGGEST_MAX_NAME + 24];
            Suggest s;
            suggest_init(&s, n->str);
            for (int i = 0; i < obj.st->n; i++) suggest_offer(&s, obj.st->keys[i]);
            char py[96];
            const char *h = suggest_text(&s, hint, sizeof hint);
            return cc_error_atk(c, ERRK_KEY, n->loc, "key '%s' not found in dict%s", n->str,
                                *h ? h : interp_field_hint("dict", n->str, py, sizeof py));
        }
        return obj.st->items[at];
    }
    if (obj.kind == AV_TENSOR) {
        if (!strcmp(n->str, "shape")) {   /* a run-time dim's size is read by the run (cs_dim) */
            AStruct *st = cc_astruct_new(c, false);
            for (int i = 0; i < obj.shape.ndim; i++) cc_astruct_push(c, st, NULL, cs_dim(c, obj, i));
            return (AVal){ .kind = AV_LIST, .st = st, .reg = -1 };
        }
        if (!strcmp(n->str, "ndim")) return cc_num_const(obj.shape.ndim);
        if (!strcmp(n->str, "size")) return cs_dim(c, obj, -1);
        if (!strcmp(n->str, "dtype")) return cc_const_av(cc_keep_value(c, val_cstr(dtype_name(obj.dtype))));
        if (!strcmp(n->str, "device")) return cc_const_av(cc_keep_value(c, val_cstr("cpu")));
        if (!strcmp(n->str, "T")) {
            return cc_emit_op(c, OP_TRANSPOSE, &obj, 1, NULL);
        }
        ObjBuiltin *m = method_tensor_builtin(c->I, n->str);   /* t.sum is sum (methods.h) */
        if (m) return cc_const_av(OBJ_VAL(VAL_FUNC, m));
        char hint[SUGGEST_MAX_NAME + 24];
        return cc_error_atk(c, ERRK_KEY, n->loc, "tensor has no attribute '%s'%s", n->str, interp_attr_hint(n->str, hint, sizeof hint));
    }
    const char *type = obj.kind == AV_LIST ? "list" : obj.kind == AV_STR ? "string" : obj.kind == AV_CONST ? val_type_name(obj.k)
                     : obj.kind == AV_NUM ? (obj.is_bool ? "bool" : "number") : "value";   /* eager's words */
    char py[96];
    return cc_error_atk(c, ERRK_KEY, n->loc, "a %s has no field '%s'%s", type, n->str, interp_field_hint(type, n->str, py, sizeof py));
}

static AVal field_expr(Comp *c, Node *n) {
    AVal obj;
    TRY(obj = cc_expr(c, n->a));
    return field_of(c, obj, n);
}

/* Whether the call obj.NAME(...) passes obj first, fn being the field (methods.h; eager's
 * call_method asks the same). */
static bool binds_self(AVal obj, AVal fn, const char *name) {
    if (obj.kind == AV_TENSOR) return !method_is_tensor_attr(name);
    if (obj.kind != AV_DICT) return false;
    if (fn.kind == AV_CLOSURE) return method_takes_self(fn.cl->proto);
    return fn.kind == AV_CONST && method_value_takes_self(fn.k);
}

/* ---------- calls ---------- */

static AVal call_with_self(Comp *c, Node *n, AVal fn, AVal self, int from);

static AVal call_expr(Comp *c, Node *n) {
    AVal fn, self = FAILV;
    int from = 0;   /* 1: a method's object goes first */
    if (n->a->kind == AST_FIELD) {
        TRY(self = cc_expr(c, n->a->a));
        if (self.kind == AV_TENSOR && method_is_tensor_attr(n->a->str))
            return cc_error_atk(c, ERRK_TYPE, n->loc, METHOD_ATTR_CALLED, n->a->str, n->a->str);
        TRY(fn = field_of(c, self, n->a));
        from = binds_self(self, fn, n->a->str);
    } else {
        TRY(fn = cc_expr(c, n->a));
    }
    return call_with_self(c, n, fn, self, from);
}

/* Call n of a callee fn already compiled (a name's: no method object). */
static AVal call_expr_with(Comp *c, Node *n, AVal fn) { return call_with_self(c, n, fn, FAILV, 0); }

/* The arguments of call n compiled, then fn called (self first when from is 1). */
static AVal call_with_self(Comp *c, Node *n, AVal fn, AVal self, int from) {
    int npos = n->n + from;
    AVal *args = mem_alloc(sizeof(AVal) * (size_t)(npos + n->nk + 1));
    AVal r = FAILV;
    if (from) args[0] = self;
    for (int i = 0; i < n->n + n->nk; i++) {
        args[from + i] = cc_expr(c, i < n->n ? n->kids[i] : n->kw[i - n->n]);
        if (c->failed) goto out;
    }
    c->loc = n->loc;
    r = cc_call_value(c, fn, args, npos, n->names, args + npos, n->nk, n->loc);
out:
    mem_free(args);
    return r;
}

AVal cc_compile_builtin(Comp *c, const char *name, ObjBuiltin *b, AVal *args, int nargs, char **kwn, AVal *kw,
                            int nkw, SrcLoc loc);

/* Whether a and b are the same as far as compiling can tell: a call of the same function with
 * such arguments compiles to the same code. Unsure is "not the same". */
static bool same_when_compiling(const AVal *a, const AVal *b, int depth) {
    if (a->kind != b->kind || depth > 4) return false;
    switch (a->kind) {
    case AV_NONE: case AV_STR: return true;
    case AV_CONST: return a->k.type == b->k.type && (a->k.type == VAL_FUNC ? a->k.as.o == b->k.as.o : val_equal(a->k, b->k));
    case AV_NUM: return a->known == b->known && a->is_bool == b->is_bool && (!a->known || a->num == b->num);
    case AV_TENSOR: return a->dtype == b->dtype && shape_equal(&a->shape, &b->shape);
    case AV_LIST: case AV_DICT:
        /* one structure passed down may have changed in between (d.n = d.n - 1): unsure */
        if (a->st == b->st || a->st->n != b->st->n) return false;
        for (int i = 0; i < a->st->n; i++)
            if ((a->st->dict && strcmp(a->st->keys[i], b->st->keys[i])) ||
                !same_when_compiling(&a->st->items[i], &b->st->items[i], depth + 1))
                return false;
        return true;
    default: return a->cl == b->cl;
    }
}

/* Spec section 6: recursion in static code compiles only where guards fix its depth. A call
 * of p that an activation of p reaches through a run-time branch, with arguments the same as
 * that activation's as far as compiling can tell, and no list, dict or captured variable
 * changed in between, would inline the same code again and again:
 * only the run decides when it stops. That is the program's error (COMPILE_REFUSED), not a
 * reason to run eagerly. A recursion whose guards change (fib(n - 1), a shorter list) goes on
 * compiling, within the compile budget. */
static bool recursion_refused(Comp *c, FnProto *p, const AVal *bound, SrcLoc loc) {
    for (const Inline *a = c->ictx; a; a = a->outer) {
        if (a->proto != p || !a->args || c->branch_depth <= a->depth_at_entry) continue;
        if (c->known_changes != a->known_changes) continue;   /* a list, dict or captured variable changed */
        bool same = true;
        for (int i = 0; i < p->nparams && same; i++) same = same_when_compiling(&a->args[i], &bound[i], 0);
        if (!same) continue;
        const char *fname = p->name[0] ? p->name : "<fn>";
        cc_error_atk(c, ERRK_VALUE, loc,
                     "recursion in static code whose depth is decided at run time: %s() calls itself inside a "
                     "branch on values known only when the block runs, with nothing known when compiling "
                     "changed (static code compiles recursion only when guards fix its depth); write it as a "
                     "loop, or call it outside static code", fname);
        c->status = COMPILE_REFUSED;
        return true;
    }
    return false;
}

/* Inlines a call of a TSL function. */
static AVal inline_call(Comp *c, FnProto *p, Module *mod, ObjClosure *real, CClosure *cc, AVal *args, int nargs,
                        char **kwn, AVal *kw, int nkw, SrcLoc loc) {
    const char *fname = p->name[0] ? p->name : "<fn>";
    if (c->inline_depth > 64) return cc_unsupported(c, "calls nested more than 64 deep (recursion?)");
    /* a compile budget: recursion fixed by guards can still inline exponentially many calls */
    if (++c->inlined > 5000 || c->g->ncode > 100000)
        return cc_unsupported(c, "more than 5000 calls to inline (recursion?); the code runs eagerly");
    if (nargs > p->nparams)
        return cc_error_atk(c, ERRK_TYPE, loc, "%s() takes %d argument%s but %d were given", fname, p->nparams,
                        p->nparams == 1 ? "" : "s", nargs);
    CallFrame *frame = graph_frame(c->g, fname, c->src, loc, c->ictx ? c->ictx->frame : NULL);
    Inline ic = { c->ictx, ++c->next_inline, p, mod, real, cc, false, FAILV, c->branch_depth, frame, NULL, 0 };
    AVal *bound = mem_calloc((size_t)p->nparams + 1, sizeof(AVal));
    AVal r = FAILV;
    for (int i = 0; i < nargs; i++) bound[i] = args[i];
    for (int k = 0; k < nkw; k++) {
        int i = 0;
        while (i < p->nparams && strcmp(p->params[i], kwn[k])) i++;
        if (i == p->nparams) {
            char hint[SUGGEST_MAX_NAME + 24];
            cc_error_atk(c, ERRK_TYPE, loc, "%s() got an unknown keyword argument '%s'%s", fname, kwn[k],
                         interp_param_hint(p, kwn[k], hint, sizeof hint));
            goto out;
        }
        if (bound[i].kind != AV_NONE) { cc_error_atk(c, ERRK_TYPE, loc, "%s() got multiple values for parameter '%s'", fname, p->params[i]); goto out; }
        bound[i] = kw[k];
    }
    if (recursion_refused(c, p, bound, loc)) goto out;
    ic.args = bound;
    ic.known_changes = c->known_changes;
    Source *saved_src = c->src;
    Inline *saved_ctx = c->ictx;
    c->ictx = &ic;
    c->src = p->src ? p->src : mod->src;
    c->inline_depth++;
    for (int i = 0; i < p->nparams; i++) {
        VarKey key = { K_INLINE, ic.id * 65536 + i, NULL };
        if (bound[i].kind == AV_NONE) {
            if (!p->defaults[i]) {
                c->ictx = saved_ctx;
                c->src = saved_src;
                c->inline_depth--;
                cc_error_atk(c, ERRK_TYPE, loc, "%s() missing argument '%s'", fname, p->params[i]);
                goto out;
            }
            bound[i] = cc_expr(c, p->defaults[i]);
            if (c->failed) break;
        }
        cc_env_set(c, key, bound[i], p->params[i], false);
    }
    if (!c->failed) cflow_enter(c, &ic);
    if (!c->failed) cc_block(c, p->body);
    if (!c->failed) r = cflow_result(c, &ic);
    c->ictx = saved_ctx;
    c->src = saved_src;
    c->inline_depth--;
out:
    mem_free(bound);
    return r;
}

AVal cc_call_value(Comp *c, AVal fn, AVal *args, int nargs, char **kwn, AVal *kw, int nkw, SrcLoc loc) {
    if (fn.kind == AV_CONST && fn.k.type == VAL_FUNC) {
        Obj *o = fn.k.as.o;
        if (o->kind == OBJ_BUILTIN)
            return cc_compile_builtin(c, ((ObjBuiltin *)o)->name, (ObjBuiltin *)o, args, nargs, kwn, kw, nkw, loc);
        ObjClosure *cl = (ObjClosure *)o;
        return inline_call(c, cl->proto, cl->module, cl, NULL, args, nargs, kwn, kw, nkw, loc);
    }
    if (fn.kind == AV_CLOSURE && fn.cl->grad_of)
        return cgrad_call(c, fn.cl->grad_of->v, fn.cl->with_value, args, nargs, kwn, kw, nkw, loc);
    if (fn.kind == AV_CLOSURE)
        return inline_call(c, fn.cl->proto, fn.cl->mod, NULL, fn.cl, args, nargs, kwn, kw, nkw, loc);
    if (fn.kind == AV_DICT) {
        int at = cc_astruct_find(fn.st, "forward");
        if (at < 0) return cc_error_atk(c, ERRK_TYPE, loc, "dict is not callable: it has no 'forward' field");
        AVal *with_self = mem_alloc(sizeof(AVal) * (size_t)(nargs + 1));
        with_self[0] = fn;
        memcpy(with_self + 1, args, sizeof(AVal) * (size_t)nargs);
        AVal r = cc_call_value(c, fn.st->items[at], with_self, nargs + 1, kwn, kw, nkw, loc);
        mem_free(with_self);
        return r;
    }
    const char *what = fn.kind == AV_TENSOR ? "tensor" : fn.kind == AV_NUM ? "number" : fn.kind == AV_LIST ? "list" : "value";
    if (fn.kind == AV_CONST) what = val_type_name(fn.k);
    return cc_error_atk(c, ERRK_TYPE, loc, "a %s is not callable", what);
}

/* The expression dispatcher. */
AVal cc_expr(Comp *c, Node *n) {
    if (c->failed) return FAILV;
    c->loc = n->loc;
    switch (n->kind) {
    case AST_NUM: return cc_num_const(n->num);
    case AST_STR: return cc_const_av(cc_keep_value(c, val_str(n->str, n->str_len)));
    case AST_TRUE: return cc_bool_const(true);
    case AST_FALSE: return cc_bool_const(false);
    case AST_NIL: return cc_const_av(NIL_VAL);
    case AST_NAME: return cc_read_key(c, cc_name_key(c, n), n->str);
    case AST_BINARY: return binary(c, n);
    case AST_UNARY: {
        AVal a;
        TRY(a = cc_expr(c, n->a));
        c->loc = n->loc;
        if (n->op == TOK_TILDE) {
            if (a.kind == AV_NUM && a.is_bool && !(a.known && !a.deps)) {
                /* ~ of a truth value is logical: NNOT (NMATH's bitwise_not would give ~1 = -2) */
                int ar = cc_num_reg(c, &a);
                Ins *in = cc_emit(c, I_NNOT);
                in->dst = cc_new_num(c, true);
                in->a = ar;
                return (AVal){ .kind = AV_NUM, .is_bool = true, .reg = in->dst, .deps = a.deps };
            }
            if (a.kind == AV_TENSOR || a.kind == AV_NUM) return cc_emit_op(c, OP_BITWISE_NOT, &a, 1, NULL);
            return cc_unsupported(c, "unary '~' on this value");
        }
        if (a.kind == AV_TENSOR) return cc_emit_op(c, OP_NEG, &a, 1, NULL);
        if (a.kind == AV_NUM && !a.is_bool) {
            AVal r = { .kind = AV_NUM, .known = a.known, .num = -a.num, .deps = a.deps, .reg = -1 };
            if (r.known && !r.deps) return r;
            cslice_affine(&r, TOK_MINUS, &(AVal){ .kind = AV_NUM, .known = true }, &a);
            int ar = cc_num_reg(c, &a);
            Ins *in = cc_emit(c, I_NNEG);
            in->dst = r.reg = cc_new_num(c, false);
            in->a = ar;
            return r;
        }
        return cc_error_atk(c, ERRK_TYPE, n->loc, "unsupported operand type for unary '-'");
    }
    case AST_NOT: return not_expr(c, n);
    case AST_AND:
    case AST_OR: return and_or(c, n);
    case AST_CALL: return call_expr(c, n);
    case AST_INDEX: return index_expr(c, n);
    case AST_FIELD: return field_expr(c, n);
    case AST_LIST: return make_list(c, n);
    case AST_DICT: return make_dict(c, n);
    case AST_FN: return cc_make_closure(c, n->proto);
    case AST_COMP: return cc_comprehension(c, n);
    default: return cc_unsupported(c, "this expression");
    }
}

/* ---------- operands the VM builds at run time ---------- */

/* A list or dict made in static code becomes a tree of operands that the VM builds: one
 * that contains itself has no such tree, and one shared n times has 2^n nodes, so past
 * these bounds the block runs eagerly instead. */
#define OPND_MAX_DEPTH 1000
#define OPND_MAX_NODES 100000

static Opnd opnd_of(Comp *c, AVal v, int depth, long *nodes);

Opnd cc_opnd_of(Comp *c, AVal v) {
    long nodes = 0;
    return opnd_of(c, v, 0, &nodes);
}

static Opnd opnd_of(Comp *c, AVal v, int depth, long *nodes) {
    Opnd o;
    memset(&o, 0, sizeof o);
    o.k = NIL_VAL;
    if ((v.kind == AV_LIST || v.kind == AV_DICT) && (depth > OPND_MAX_DEPTH || ++*nodes > OPND_MAX_NODES)) {
        cc_unsupported(c, "a list or dict made in static code is nested too deeply, contains itself or is too large");
        o.kind = OPND_CONST;
        return o;
    }
    switch (v.kind) {
    case AV_NUM:
        if (v.reg < 0 && !v.deps) {
            o.kind = OPND_CONST;
            o.k = v.is_bool ? BOOL_VAL(v.num != 0) : NUM_VAL(v.num);
        } else {
            o.kind = OPND_NUM;
            o.reg = cc_num_reg(c, &v);
            o.bound = v.unset;
        }
        return o;
    case AV_TENSOR:
    case AV_STR:
        o.kind = v.kind == AV_STR ? OPND_VAL : OPND_TENSOR;
        o.reg = v.reg;
        o.bound = v.unset;
        return o;
    case AV_LIST:
    case AV_DICT:
        if (ca_is_open(v.st)) {
            ca_read_open(c);
            o.kind = OPND_CONST;
            return o;
        }
        if (v.st->obj >= 0 && !c->failed) {
            o.kind = OPND_OBJ;   /* the very container the program passed in */
            o.reg = v.st->obj;
            return o;
        }
        o.kind = v.kind == AV_LIST ? OPND_LIST : OPND_DICT;
        o.n = v.st->n;
        o.items = mem_calloc((size_t)o.n + 1, sizeof(Opnd));
        if (v.kind == AV_DICT) o.keys = mem_calloc((size_t)o.n + 1, sizeof(char *));
        for (int i = 0; i < o.n; i++) {
            o.items[i] = opnd_of(c, v.st->items[i], depth + 1, nodes);
            if (o.keys) o.keys[i] = mem_strndup(v.st->keys[i], strlen(v.st->keys[i]));
        }
        return o;
    case AV_CLOSURE:
        if (v.cl->grad_of) {
            cc_unsupported(c, "a gradient function made in static code cannot leave it");
            o.kind = OPND_CONST;
            return o;
        }
        /* it can leave the static code when what it captures lives in real cells */
        for (int i = 0; i < v.cl->proto->nupvals; i++)
            if (v.cl->caps[i].kind != K_CELL) {
                cc_unsupported(c, "a function made in static code that captures its locals cannot leave it");
                o.kind = OPND_CONST;
                return o;
            }
        o.kind = OPND_CLOSURE;
        o.proto = v.cl->proto;
        o.mod = v.cl->mod;
        o.n = v.cl->proto->nupvals;
        o.cells = mem_calloc((size_t)o.n + 1, sizeof(ObjCell *));
        o.csrc = mem_calloc((size_t)o.n + 1, sizeof(CellSrc));
        for (int i = 0; i < o.n; i++) {
            o.cells[i] = v.cl->caps[i].ptr;
            o.cells[i]->h.rc++;
            Value cur;
            InputSrc src;
            o.csrc[i].kind = SRC_CELLPTR;
            if (cc_key_source(c, v.cl->caps[i], &cur, &src)) {
                if (src.kind == SRC_CELLPTR) src.cell->h.rc--;   /* cc_key_source took a reference */
                else if (src.kind == SRC_CELL || src.kind == SRC_UPVAL) o.csrc[i] = (CellSrc){ src.kind, src.slot };
            }
        }
        return o;
    default:
        o.kind = OPND_CONST;
        o.k = val_retain(v.k);
        return o;
    }
}

