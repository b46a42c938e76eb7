/* verify.c - the verifier's instruction checks: each instruction reads and writes registers
 * of the kinds its opcode needs (vm/opcodes.def), and every op's results have the dtypes
 * and shapes shape inference gives for its operands, so a loaded graph runs on the VM with
 * the guarantees a compiled one has. */
#include <string.h>
#include "load.h"
#include "infer.h"
#include "opt.h"
#include "compile.h"

static bool reg_runtime(const RegInfo *ri) { return ri->kind == R_TENSOR && shape_is_runtime(&ri->shape); }

/* Whether a register's shape is what inference over run-time dims gave (so): equal where
 * so's size is known, except that the register may leave one to the run; run-time where
 * so's is. (The VM checks each run-time result against its register's known dims.) */
static bool fits_inferred(const Shape *so, const Shape *reg) {
    if (so->ndim != reg->ndim) return false;
    for (int a = 0; a < so->ndim; a++)
        if (reg->d[a] != SHAPE_RT && reg->d[a] != so->d[a]) return false;
    return true;
}

/* A stand-in tensor with a register's dtype and shape, for inference (no data). */
static Tensor meta_of(const RegInfo *ri) {
    Tensor t;
    memset(&t, 0, sizeof t);
    t.dtype = ri->dtype;
    t.ndim = ri->shape.ndim;
    memcpy(t.shape, ri->shape.d, sizeof(int64_t) * (size_t)ri->shape.ndim);
    t.size = shape_count(&ri->shape);
    return t;
}

/* A slice whose start a register gives: its template's bounds, moved there (vm/compile/cslice.c). */
static bool run_time_slice(const IndexItem *it) { return it->kind == IDX_SLICE && it->has_start && it->has_stop; }

/* An INDEX or INDEX_SET: operand registers, and the result shape inference gives. */
static bool verify_index(Load *L, Ins *in) {
    Graph *g = L->gf->g;
    if (!load_want_reg(L, in->dst, R_TENSOR, "an index's") || !load_want_reg(L, in->a, R_TENSOR, "an index's")) return false;
    if (in->nidx > TSL_MAX_RANK + 8 || in->nargs != in->nidx) return load_fail(L, "corrupt graph file: an index with %d items", in->nidx);
    Tensor metas[TSL_MAX_RANK + 8];
    IndexItem items[TSL_MAX_RANK + 8];
    if (in->nidx) memcpy(items, in->idx, sizeof(IndexItem) * (size_t)in->nidx);
    for (int k = 0; k < in->nidx; k++) {
        int r = in->args[k];
        if (items[k].kind == IDX_TENSOR) {
            if (r >= 0) {
                if (!load_want_reg(L, r, R_TENSOR, "an index's")) return false;
                if (reg_runtime(&g->regs[r])) return load_fail(L, "corrupt graph file: an index array with a run-time shape");
                metas[k] = meta_of(&g->regs[r]);
                items[k].t = &metas[k];
            }
            if (!items[k].t || items[k].t->dtype != DT_I64) return load_fail(L, "corrupt graph file: an index array that is not i64");
        } else if (r != -1 && !((items[k].kind == IDX_INT || run_time_slice(&items[k])) && load_want_reg(L, r, R_NUM, "an index's"))) {
            return load_fail(L, "corrupt graph file: an index item reads register %d", r);
        } else if (r != -1) {
            items[k].at_run_time = true;   /* its value comes from the register */
        }
    }
    const RegInfo *a = &g->regs[in->a], *d = &g->regs[in->dst];
    Shape s;
    bool rt = reg_runtime(a);
    if (rt ? cs_index_runtime(&a->shape, items, in->nidx, &s) : infer_index(&a->shape, items, in->nidx, &s))
        return load_fail(L, "corrupt graph file: an index fails: %s", op_error());
    if (in->op == I_INDEX_SET) {
        if (!load_want_reg(L, in->b, R_TENSOR, "an index's")) return false;
        return load_same_type(a, d) || load_fail(L, "corrupt graph file: an index assignment changes the type");
    }
    return (d->dtype == a->dtype && (rt ? fits_inferred(&s, &d->shape) : shape_equal(&s, &d->shape))) ||
           load_fail(L, "corrupt graph file: an index's result register has the wrong type");
}

/* Each operand of an OP against its parameter in the op's signature (ops/ops.def), for
 * every op alike: a register that exists; absent (-1) only for an optional tensor (T?); a
 * number register only where the op takes numbers as numbers (op_param_takes_number).
 * Elsewhere the compiler makes a number a 0-d tensor first, and the VM hands the kernel the
 * register's tensor, which a number register does not have. */
static bool operands_fit_signature(Load *L, const Ins *in, const OpDef *def) {
    Graph *g = L->gf->g;
    for (int p = 0, k = 0; p < def->nparams; p++) {
        ParamType t = def->params[p].type;
        if (!op_param_is_operand(t)) continue;
        int take = t == P_TS ? in->nargs - (def->noperands - 1) : 1;
        for (int j = 0; j < take && k < in->nargs; j++, k++) {
            int r = in->args[k];
            if (r == -1 && t == P_TOPT) continue;
            if (r == -1) return load_fail(L, "corrupt graph file: '%s' lacks operand %d", def->name, k);
            if (r < 0 || r >= g->nregs) return load_fail(L, "corrupt graph file: '%s' reads register %d", def->name, r);
            if (g->regs[r].kind == R_NUM && !op_param_takes_number(def, t))
                return load_fail(L, "corrupt graph file: '%s' operand %d is a number register where the op takes a tensor",
                                 def->name, k);
        }
    }
    return true;
}

/* An OP: its operands' kinds and count, and its results' dtypes and shapes by inference. */
static bool verify_op(Load *L, Ins *in) {
    Graph *g = L->gf->g;
    OpCode op = (OpCode)in->aux;
    const OpDef *def = op_def(op);
    if ((def->flags & F_DYNAMIC) && L->version < GF_FORMAT_RUNTIME)
        return load_fail(L, "corrupt graph file: the op '%s' has a data-dependent shape", def->name);
    bool list = false;
    int optional = 0;   /* trailing T? operands a call built in C may leave out (a gradient's conv2d without b) */
    for (int p = 0; p < def->nparams; p++) {
        list = list || def->params[p].type == P_TS;
        if (op_param_is_operand(def->params[p].type)) optional = def->params[p].type == P_TOPT ? optional + 1 : 0;
    }
    if (!in->attrs || in->nargs < def->noperands - (list ? 1 : optional) || (!list && in->nargs > def->noperands) ||
        in->nargs > 4096)
        return load_fail(L, "corrupt graph file: '%s' with %d operands", def->name, in->nargs);
    if (in->nres != def->nout || in->res[0] != in->dst) return load_fail(L, "corrupt graph file: '%s' with %d results", def->name, in->nres);
    if (!operands_fit_signature(L, in, def)) return false;
    OpArg *args = mem_calloc((size_t)in->nargs + 1, sizeof(OpArg));
    bool ok = true, rt = def->flags & F_DYNAMIC;
    for (int k = 0; k < in->nargs; k++) {
        int r = in->args[k];
        if (r == -1) args[k].kind = ARG_NONE;
        else if (g->regs[r].kind == R_NUM) args[k] = op_arg_num(0, g->regs[r].is_bool);
        else args[k] = op_arg_meta(g->regs[r].dtype, &g->regs[r].shape);
        rt |= r >= 0 && reg_runtime(&g->regs[r]);
    }
    Shape shapes[OP_MAX_OUT];
    DType dts[OP_MAX_OUT];
    OpCall call = { op, in->nargs, args, in->attrs };
    int rc = rt ? cs_infer_runtime(&call, shapes, dts) : op_infer(&call, shapes, dts);
    if (rc > 0) ok = load_fail(L, "corrupt graph file: '%s' of a run-time shape needs its size", def->name);
    else if (rc) ok = load_fail(L, "corrupt graph file: '%s' fails: %s", def->name, op_error());
    for (int k = 0; k < in->nres && ok; k++) {
        RegInfo want = { R_TENSOR, false, dts[k], shapes[k], -1 };
        if (!load_want_reg(L, in->res[k], R_TENSOR, "a result's")) ok = false;
        else if (!load_same_type(&want, &g->regs[in->res[k]])) ok = load_fail(L, "corrupt graph file: '%s' result %d has the wrong type", def->name, k);
    }
    mem_free(args);
    return ok;
}

/* An outside register a fused step reads: what vm/opt/opt.c's fusable() lets into a group, a
 * tensor of the group's dtype whose elements lie as the group's do (its shape broadcasts
 * to the group's without growing), so the chain walks it element for element, or a row
 * vector or a value per row (opt_fused_layout), which the chain expands block by block. */
static bool fused_input_ok(Load *L, int reg, const RegInfo *d) {
    if (!load_is_reg(L, reg, R_TENSOR) || reg_runtime(&L->gf->g->regs[reg])) return false;
    const RegInfo *o = &L->gf->g->regs[reg];
    return o->dtype == d->dtype && opt_fused_layout(&o->shape, &d->shape) != FUSED_NO;
}

/* A FUSED group, held to what the fusion pass (vm/opt/opt.c, pass_fuse) emits: at least two
 * elementwise steps of F_FUSE ops, not comparisons, over one float dtype and shape with at
 * least one element (the chain kernels are f32 and f64 only); step k keeps its result in
 * temporary k or writes a register of the group's type, the last step the group's own; a
 * step reads temporaries of earlier steps that kept theirs, registers fused_input_ok
 * accepts, and a binary step one operand or one number besides its first. */
static bool verify_fused(Load *L, Ins *in) {
    Graph *g = L->gf->g;
    if (!load_want_reg(L, in->dst, R_TENSOR, "a fused group's")) return false;
    const RegInfo *d = &g->regs[in->dst];
    if (reg_runtime(d)) return load_fail(L, "corrupt graph file: a fused group of a run-time shape");
    if (!dtype_is_float(d->dtype) || shape_count(&d->shape) < 1)
        return load_fail(L, "corrupt graph file: a fused group of %lld %s elements", (long long)shape_count(&d->shape),
                         dtype_name(d->dtype));
    if (in->nsteps < 2 || in->nsteps > MAX_STEPS) return load_fail(L, "corrupt graph file: a fused group of %d steps", in->nsteps);
    if (in->steps[in->nsteps - 1].dst != -in->dst - 1) return load_fail(L, "corrupt graph file: a fused group's last step");
    for (int k = 0; k < in->nsteps; k++) {
        FusedStep *s = &in->steps[k];
        const OpDef *def = op_def(s->op);
        if (!(def->flags & F_FUSE) || (def->kind != K_UNARY && def->kind != K_BINARY))
            return load_fail(L, "corrupt graph file: '%s' in a fused group", def->name);
        bool dst_ok = s->dst >= 0 ? s->dst == k
                                  : s->dst > INT32_MIN && load_is_reg(L, -s->dst - 1, R_TENSOR) &&
                                        load_same_type(&g->regs[-s->dst - 1], d);
        int reads[2] = { s->a, s->b };
        bool reads_ok = true;
        for (int q = 0; q < 2 && reads_ok; q++) {
            int x = reads[q];
            if (q == 1 && x == FUSED_NONE) continue;
            reads_ok = x >= 0 ? x < k && in->steps[x].dst == x : x > INT32_MIN && fused_input_ok(L, -x - 1, d);
        }
        if (!dst_ok || !reads_ok) return load_fail(L, "corrupt graph file: step %d of a fused group refers to the wrong operands", k);
        bool operands_ok = def->kind == K_UNARY ? s->b == FUSED_NONE && s->scalar_reg == -1
                                                : s->scalar_reg >= -1 && (s->scalar_reg >= 0) == (s->b == FUSED_NONE);
        if (!operands_ok) return load_fail(L, "corrupt graph file: step %d of a fused group has the wrong operands", k);
        if (s->scalar_reg >= 0 && !load_is_reg(L, s->scalar_reg, R_NUM))
            return load_fail(L, "corrupt graph file: step %d of a fused group reads scalar %d", k, s->scalar_reg);
    }
    return true;
}

/* An EPILOGUE: a 2-D float product of registers of its dtype, and steps over it as vm/run/exec_cpu.c
 * runs them: every operand element for element with the product ([m, n]) or, for a binary
 * step's one tensor operand, a row vector ([n] or [1, n]) each row reads. */
static bool epi_operand_ok(Load *L, int x, int k, const RegInfo *d, bool dst, bool *row) {
    Graph *g = L->gf->g;
    *row = false;
    if (x == EPI_PRODUCT) return !dst;
    if (x >= 0) return !dst && x < k;   /* an earlier step's block */
    int ext = x > INT32_MIN ? -x - 1 : -1;
    if (!load_is_reg(L, ext, R_TENSOR) || g->regs[ext].dtype != d->dtype || reg_runtime(&g->regs[ext])) return false;
    EpiLayout lay = opt_epi_layout(&g->regs[ext].shape, d->shape.d[0], d->shape.d[1]);
    *row = lay == EPI_ROW;
    return lay == EPI_FULL || (lay == EPI_ROW && !dst);
}

static bool verify_epilogue(Load *L, Ins *in) {
    Graph *g = L->gf->g;
    if (!load_want_reg(L, in->dst, R_TENSOR, "an epilogue's") || !load_want_reg(L, in->a, R_TENSOR, "an epilogue's") ||
        !load_want_reg(L, in->b, R_TENSOR, "an epilogue's"))
        return false;
    const RegInfo *d = &g->regs[in->dst], *a = &g->regs[in->a], *b = &g->regs[in->b];
    bool ta = in->aux & EPI_TRANS_A, tb = in->aux & EPI_TRANS_B;
    bool aux_ok = in->aux >= 0 && in->aux <= (L->version >= GF_FORMAT_TRANSPOSE_B ? 3 : 1);
    if (reg_runtime(d) || reg_runtime(a) || reg_runtime(b) || !aux_ok ||
        !dtype_is_float(d->dtype) || d->shape.ndim != 2 || a->dtype != d->dtype || b->dtype != d->dtype ||
        a->shape.ndim != 2 || b->shape.ndim != 2 || a->shape.d[ta ? 1 : 0] != d->shape.d[0] ||
        a->shape.d[ta ? 0 : 1] != b->shape.d[tb ? 1 : 0] || b->shape.d[tb ? 0 : 1] != d->shape.d[1] ||
        shape_count(&d->shape) < 1)
        return load_fail(L, "corrupt graph file: an epilogue's product does not fit its registers");
    if (in->c != -1 && !(load_is_reg(L, in->c, R_TENSOR) && load_same_type(&g->regs[in->c], d)))
        return load_fail(L, "corrupt graph file: an epilogue's product register %d", in->c);
    if (in->nsteps < 1 || in->nsteps > MAX_STEPS) return load_fail(L, "corrupt graph file: an epilogue of %d steps", in->nsteps);
    /* the last step writes the destination: the VM takes its buffer for the product */
    if (in->steps[in->nsteps - 1].dst != -in->dst - 1) return load_fail(L, "corrupt graph file: an epilogue's last step");
    for (int k = 0; k < in->nsteps; k++) {
        FusedStep *s = &in->steps[k];
        const OpDef *def = op_def(s->op);
        if (!(def->flags & F_FUSE) || (def->kind != K_UNARY && def->kind != K_BINARY))
            return load_fail(L, "corrupt graph file: '%s' in an epilogue", def->name);
        bool row_dst, row_a, row_b = false;
        bool ok = (s->dst >= 0 ? s->dst < in->nsteps : epi_operand_ok(L, s->dst, k, d, true, &row_dst)) &&
                  epi_operand_ok(L, s->a, k, d, false, &row_a) &&
                  (s->b == FUSED_NONE || epi_operand_ok(L, s->b, k, d, false, &row_b));
        /* a row vector only beside an operand element for element */
        if (!ok || (row_a && (s->b == FUSED_NONE || row_b)) || (row_b && s->scalar_reg >= 0))
            return load_fail(L, "corrupt graph file: step %d of an epilogue refers to the wrong operands", k);
        if (def->kind == K_UNARY ? s->b != FUSED_NONE || s->scalar_reg >= 0 : (s->scalar_reg < -1 || (s->scalar_reg >= 0) == (s->b != FUSED_NONE)))
            return load_fail(L, "corrupt graph file: step %d of an epilogue has the wrong operands", k);
        if (s->scalar_reg >= 0 && !load_is_reg(L, s->scalar_reg, R_NUM))
            return load_fail(L, "corrupt graph file: step %d of an epilogue reads scalar %d", k, s->scalar_reg);
    }
    return true;
}

static bool verify_stack(Load *L, Ins *in, int reg) {
    Graph *g = L->gf->g;
    if (in->aux < 0 || in->aux >= g->nstacks) return load_fail(L, "corrupt graph file: stack %d of %d", in->aux, g->nstacks);
    if (reg < 0 || reg >= g->nregs) return load_fail(L, "corrupt graph file: a stack of register %d", reg);
    int *first = &L->stack_reg[in->aux];
    if (*first < 0) *first = reg;
    return load_same_type(&g->regs[*first], &g->regs[reg]) || load_fail(L, "corrupt graph file: stack %d holds values of two types", in->aux);
}

static bool text_opnd(const Opnd *o) { return o->kind == OPND_CONST && o->k.type == VAL_STR; }

/* What each instruction reads and writes (opcodes.def), checked against the registers. */
bool load_verify_ins(Load *L, Ins *in) {
    Graph *g = L->gf->g;
    switch (in->op) {
    case I_NCONST: return load_want_reg(L, in->dst, R_NUM, "nconst's");
    case I_NMOVE: case I_NNEG: case I_NNOT:
        return load_want_reg(L, in->dst, R_NUM, "a number op's") && load_want_reg(L, in->a, R_NUM, "a number op's");
    case I_NBIN: {
        int kind = op_def((OpCode)in->aux)->kind;
        if (kind != K_BINARY && kind != K_COMPARE) return load_fail(L, "corrupt graph file: nbin of a non-binary op");
        return load_want_reg(L, in->dst, R_NUM, "nbin's") && load_want_reg(L, in->a, R_NUM, "nbin's") && load_want_reg(L, in->b, R_NUM, "nbin's");
    }
    case I_NMATH:
        if (op_def((OpCode)in->aux)->kind != K_UNARY) return load_fail(L, "corrupt graph file: nmath of a non-unary op");
        if (in->imm != 0 && !(in->imm == (double)(int)in->imm && in->imm > -1e6 && in->imm < 1e6))
            return load_fail(L, "corrupt graph file: round to %g decimals", in->imm);
        return load_want_reg(L, in->dst, R_NUM, "nmath's") && load_want_reg(L, in->a, R_NUM, "nmath's");
    case I_TCONST: {
        if (!load_want_reg(L, in->dst, R_TENSOR, "tconst's")) return false;
        if (in->aux < 0 || in->aux >= g->nconsts) return load_fail(L, "corrupt graph file: constant %d of %d", in->aux, g->nconsts);
        RegInfo ri = { R_TENSOR, false, g->consts[in->aux]->dtype, { 0 }, -1 };
        shape_of(g->consts[in->aux], &ri.shape);
        return load_same_type(&ri, &g->regs[in->dst]) || load_fail(L, "corrupt graph file: constant %d does not fit its register", in->aux);
    }
    case I_SCALAR:
        if (!load_want_reg(L, in->dst, R_TENSOR, "scalar's") || !load_want_reg(L, in->a, R_NUM, "scalar's")) return false;
        return (g->regs[in->dst].shape.ndim == 0 && (int)g->regs[in->dst].dtype == in->aux) ||
               load_fail(L, "corrupt graph file: a scalar register that is not 0-d");
    case I_TMOVE:
        if (!load_want_reg(L, in->dst, R_TENSOR, "tmove's") || !load_want_reg(L, in->a, R_TENSOR, "tmove's")) return false;
        return load_same_type(&g->regs[in->dst], &g->regs[in->a]) || load_fail(L, "corrupt graph file: tmove between types");
    case I_OP: return verify_op(L, in);
    case I_INDEX: case I_INDEX_SET: return verify_index(L, in);
    case I_SEED: return double_fits_i64(in->imm) || load_fail(L, "corrupt graph file: seed %g", in->imm);
    case I_ITEM:
        if (!load_want_reg(L, in->dst, R_NUM, "item's") || !load_want_reg(L, in->a, R_TENSOR, "item's")) return false;
        return (!reg_runtime(&g->regs[in->a]) && shape_count(&g->regs[in->a].shape) == 1) ||
               load_fail(L, "corrupt graph file: item of a register with other than one element");
    case I_TRUTH: return load_want_reg(L, in->dst, R_NUM, "truth's") && load_want_reg(L, in->a, R_TENSOR, "truth's");
    case I_JUMP: case I_JUMPF:
        if (in->aux < 0 || in->aux > g->ncode) return load_fail(L, "corrupt graph file: a jump to %d of %d", in->aux, g->ncode);
        return in->op == I_JUMP || load_want_reg(L, in->a, R_NUM, "jumpf's");
    case I_PRINT:   /* options: 1 + PRINT_* flags, then the separator and the end (ir.h) */
        if (in->aux == 0) return true;
        if (in->aux < 0 || in->aux > PRINT_MAX_AUX || in->nopnds < 2 || !text_opnd(&in->opnds[in->nopnds - 2]) ||
            !text_opnd(&in->opnds[in->nopnds - 1]))
            return load_fail(L, "corrupt graph file: a print with bad options");
        return true;
    case I_ASSERT:
        if (in->nopnds > 1 || in->aux < 0 || in->aux > 1) return load_fail(L, "corrupt graph file: an assert with %d operands", in->nopnds);
        return load_want_reg(L, in->a, R_NUM, "assert's");
    case I_STORE: return load_fail(L, "corrupt graph file: a store (a graph file holds no containers)");
    case I_HCALL: case I_HBIN: case I_VMOVE: case I_HLIST: case I_DSET: case I_HINDEX:   /* export refuses them */
        return load_fail(L, "corrupt graph file: a host instruction (a graph file holds no strings made at run time or containers)");
    case I_DIM:   /* version 4 (read_ins): an axis of the tensor, or -1 its element count */
        if (!load_want_reg(L, in->dst, R_NUM, "dim's") || !load_want_reg(L, in->a, R_TENSOR, "dim's")) return false;
        return (in->aux >= -1 && in->aux < g->regs[in->a].shape.ndim) ||
               load_fail(L, "corrupt graph file: dim of axis %d of a rank-%d register", in->aux, g->regs[in->a].shape.ndim);
    case I_SELECT: case I_ROWSET:   /* export refuses them */
        return load_fail(L, "corrupt graph file: a run-time list index or tensor list (a graph file holds none yet)");
    case I_PUSH: return verify_stack(L, in, in->a);
    case I_POP: return verify_stack(L, in, in->dst);
    case I_FUSED: return verify_fused(L, in);
    case I_EPILOGUE: return verify_epilogue(L, in);
    default: return load_fail(L, "corrupt graph file: unknown instruction %d", (int)in->op);
    }
}
