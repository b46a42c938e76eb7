/* dis.c - the disassembler: one instruction a line with its source line, registers with
 * their shapes, fused groups, buffer slots, and a summary; or Graphviz DOT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vm.h"
#include "mem.h"
#include "opt.h"
#include "jit.h"

static void reg_str(Graph *g, int r, char *buf, size_t n) {
    if (r < 0) { snprintf(buf, n, "-"); return; }
    RegInfo *ri = &g->regs[r];
    if (ri->kind == R_NUM) { snprintf(buf, n, "n%d", r); return; }
    if (ri->kind == R_VAL) { snprintf(buf, n, "v%d", r); return; }
    char sh[128];
    shape_str(&ri->shape, sh, sizeof sh);
    if (ri->slot >= 0) snprintf(buf, n, "t%d:%s%s@b%d", r, dtype_name(ri->dtype), sh, ri->slot);
    else snprintf(buf, n, "t%d:%s%s", r, dtype_name(ri->dtype), sh);
}


/* Whether dis shows attribute p of the call: one the op requires, one the caller passed, or
 * one whose value is not the table's default. Not the given bit alone: the gradient and the
 * passes build calls (a sum over the broadcast axes) that set values without it, and the
 * kernels read the values. A nil default is told by the given bit where the value cannot say
 * nil (an axis, a number). */
static bool attr_shown(const OpParam *pp, const OpAttrs *at, int p) {
    if (pp->required || ((at->given >> p) & 1u)) return true;
    switch (pp->type) {
    case P_AXES: return at->naxes >= 0;
    case P_DTYPE: return at->dtype >= 0;
    case P_PAIRS: return at->npairs > 0;
    case P_WIN: case P_PADW: return true;
    case P_SHAPE: case P_SHAPE_M1: return at->shape.ndim > 0;
    default: break;
    }
    if (pp->default_nil) return false;
    switch (pp->type) {
    case P_AXIS: return at->axis != (int)pp->default_num;
    case P_BOOL: return op_attr_bool_get(at, pp->slot) != (pp->default_num != 0);
    case P_INT: case P_REDOP: case P_CHOICE: return at->i[pp->slot] != (int64_t)pp->default_num;
    case P_F: return !(at->f[pp->slot] == pp->default_num);
    default: return true;
    }
}

/* The call's attributes, by their signature names, from the op table: "axis=[1], keepdims=true". */
static size_t attrs_text(const Ins *in, char *buf, size_t n) {
    const OpDef *d = op_def((OpCode)in->aux);
    const OpAttrs *at = in->attrs;
    size_t len = 0;
    for (int p = 0; at && p < d->nparams && len < n; p++) {
        const OpParam *pp = &d->params[p];
        if (pp->type <= P_N || !attr_shown(pp, at, p)) continue;
        len += (size_t)snprintf(buf + len, n - len, ", %s=", pp->name);
        if (len >= n) break;
        char sh[600];
        switch (pp->type) {
        case P_AXIS: len += (size_t)snprintf(buf + len, n - len, "%d", at->axis); break;
        case P_AXES:
            if (at->naxes <= 0) { len += (size_t)snprintf(buf + len, n - len, at->naxes < 0 ? "nil" : "[]"); break; }
            for (int k = 0; k < at->naxes && len < n; k++)
                len += (size_t)snprintf(buf + len, n - len, "%s%d%s", k ? ", " : "[", at->axes[k], k == at->naxes - 1 ? "]" : "");
            break;
        case P_BOOL: len += (size_t)snprintf(buf + len, n - len, "%s", op_attr_bool_get(at, pp->slot) ? "true" : "false"); break;
        case P_INT: len += (size_t)snprintf(buf + len, n - len, "%lld", (long long)at->i[pp->slot]); break;
        case P_F: len += (size_t)snprintf(buf + len, n - len, "%g", at->f[pp->slot]); break;
        case P_SHAPE: case P_SHAPE_M1: len += (size_t)snprintf(buf + len, n - len, "%s", shape_str(&at->shape, sh, sizeof sh)); break;
        case P_PAIRS:
            len += (size_t)snprintf(buf + len, n - len, "[");
            for (int k = 0; k < at->npairs && len < n; k++)
                len += (size_t)snprintf(buf + len, n - len, "%s[%lld, %lld]", k ? ", " : "", (long long)at->pairs[k][0],
                                        (long long)at->pairs[k][1]);
            if (len < n) len += (size_t)snprintf(buf + len, n - len, "]");
            break;
        case P_REDOP: len += (size_t)snprintf(buf + len, n - len, "\"%s\"", redop_names[at->i[pp->slot]]); break;
        case P_WIN: len += (size_t)snprintf(buf + len, n - len, "[%lld, %lld]", (long long)at->pairs[pp->slot][0],
                                            (long long)at->pairs[pp->slot][1]); break;
        case P_PADW:
            len += (size_t)snprintf(buf + len, n - len, "[[%lld, %lld], [%lld, %lld]]", (long long)at->pairs[pp->slot][0],
                                    (long long)at->pairs[pp->slot][1], (long long)at->pairs[pp->slot + 1][0],
                                    (long long)at->pairs[pp->slot + 1][1]);
            break;
        case P_DTYPE: len += (size_t)snprintf(buf + len, n - len, "%s", at->dtype < 0 ? "nil" : dtype_name((DType)at->dtype)); break;
        case P_CHOICE: len += (size_t)snprintf(buf + len, n - len, "choice %lld of \"%s\"", (long long)at->i[pp->slot], pp->choices); break;
        default: len += (size_t)snprintf(buf + len, n - len, "?"); break;
        }
    }
    return len;
}

/* "t5:f32[2] = add(t1:f32[2], n3)", results and operands from the table's signature. */
static void op_text(Graph *g, const Ins *in, char *buf, size_t n) {
    size_t len = 0;
    char r[160];
    for (int k = 0; k < in->nres && len < n; k++) {
        reg_str(g, in->res[k], r, sizeof r);
        len += (size_t)snprintf(buf + len, n - len, "%s%s", k ? ", " : "", r);
    }
    if (len < n) len += (size_t)snprintf(buf + len, n - len, " = %s(", op_info[in->aux].name);
    for (int k = 0; k < in->nargs && len < n; k++) {
        if (k == 12 && in->nargs > 14) {
            len += (size_t)snprintf(buf + len, n - len, ", ... %d more", in->nargs - k);
            break;
        }
        reg_str(g, in->args[k], r, sizeof r);
        len += (size_t)snprintf(buf + len, n - len, "%s%s", k ? ", " : "", in->args[k] < 0 ? "nil" : r);
    }
    if (len < n) len += attrs_text(in, buf + len, n - len);
    if (len < n) snprintf(buf + len, n - len, ")");
}

/* A step's operand: the matmul's product, an earlier step's value (s1), or a register (t3, n4). */
/* A step's operand; a row vector that every row reads or a value per row of the group (a
 * tensor operand of a fused group or epilogue that broadcasts) says so: "t1[row]", "t3[per row]". */
static void step_operand(const Graph *g, const Ins *in, const FusedStep *st, int x, char *buf, size_t n) {
    if (x == EPI_PRODUCT) { snprintf(buf, n, "product"); return; }
    if (x >= 0) { snprintf(buf, n, "s%d", x); return; }
    const RegInfo *r = &g->regs[-x - 1], *d = &g->regs[in->dst];
    /* a row group's steps are over its rows, or over one value per row (their result's shape) */
    const Shape *gs = !opt_row_group(in) ? &d->shape : st->dst < 0 && op_info[st->op].kind != K_REDUCE ? &g->regs[-st->dst - 1].shape : &in->shape;
    FusedLayout l = r->kind == R_TENSOR && d->kind == R_TENSOR ? opt_fused_layout(&r->shape, gs) : FUSED_FULL;
    snprintf(buf, n, "%c%d%s", r->kind == R_NUM ? 'n' : 't', -x - 1, l == FUSED_ROW ? "[row]" : l == FUSED_COL ? "[per row]" : "");
}

/* The steps of a fused group or epilogue, each with what it reads and writes:
 * " { s0 = exp(t3); t7 = add(s0, s0) }". A step that writes a register other than the
 * instruction's result (a value read after the group: the pre-activation a gradient keeps)
 * shows the register with its dtype, shape and buffer, as a result would. */
static size_t steps_text(Graph *g, const Ins *in, char *buf, size_t n) {
    size_t len = (size_t)snprintf(buf, n, " {");
    for (int i = 0; i < in->nsteps && len < n; i++) {
        const FusedStep *st = &in->steps[i];
        char d[160], a[48], b[48] = "";
        if (st->dst >= 0) snprintf(d, sizeof d, "s%d", st->dst);
        else if (-st->dst - 1 == in->dst) snprintf(d, sizeof d, "t%d", in->dst);
        else reg_str(g, -st->dst - 1, d, sizeof d);
        step_operand(g, in, st, st->a, a, sizeof a);
        if (st->scalar_reg >= 0) snprintf(b, sizeof b, "n%d", st->scalar_reg);
        else if (st->b != FUSED_NONE) step_operand(g, in, st, st->b, b, sizeof b);
        const char *x = st->num_left && *b ? b : a, *y = st->num_left && *b ? a : b;
        len += (size_t)snprintf(buf + len, n - len, "%s %s = %s(%s%s%s)", i ? ";" : "", d, op_info[st->op].name, x,
                                *y ? ", " : "", y);
    }
    if (len < n) len += (size_t)snprintf(buf + len, n - len, " }");
    return len;
}

/* "[n6, 1:3]": an index instruction's items, registers where they are read at run time. */
static size_t index_text(const Ins *in, char *buf, size_t n) {
    size_t len = (size_t)snprintf(buf, n, "[");
    for (int k = 0; k < in->nidx && len < n; k++) {
        const IndexItem *it = &in->idx[k];
        const char *sep = k ? ", " : "";
        int r = k < in->nargs ? in->args[k] : -1;
        if (r >= 0 && it->kind == IDX_SLICE) {   /* a start of the run, a fixed size (vm/compile/cslice.c) */
            len += (size_t)snprintf(buf + len, n - len, "%sn%d:n%d+%lld", sep, r, r, (long long)((uint64_t)it->stop - (uint64_t)it->start));
            if (it->step != 1 && len < n) len += (size_t)snprintf(buf + len, n - len, ":%lld", (long long)it->step);
        } else if (r >= 0) len += (size_t)snprintf(buf + len, n - len, "%s%c%d", sep, it->kind == IDX_TENSOR ? 't' : 'n', r);
        else if (it->kind == IDX_INT) len += (size_t)snprintf(buf + len, n - len, "%s%lld", sep, (long long)it->i);
        else if (it->kind == IDX_ELLIPSIS) len += (size_t)snprintf(buf + len, n - len, "%s...", sep);
        else if (it->kind == IDX_NEWAXIS) len += (size_t)snprintf(buf + len, n - len, "%snil", sep);
        else if (it->kind == IDX_TENSOR) len += (size_t)snprintf(buf + len, n - len, "%sconst", sep);
        else {
            char lo[24] = "", hi[24] = "";
            if (it->has_start) snprintf(lo, sizeof lo, "%lld", (long long)it->start);
            if (it->has_stop) snprintf(hi, sizeof hi, "%lld", (long long)it->stop);
            /* bounds read from registers at run time (vm/compile/cshape.c's layout) */
            const int *run = in->nargs > in->nidx ? in->args + in->nidx + 2 * k : NULL;
            if (run && run[0] >= 0) snprintf(lo, sizeof lo, "n%d", run[0]);
            if (run && run[1] >= 0) snprintf(hi, sizeof hi, "n%d", run[1]);
            len += (size_t)snprintf(buf + len, n - len, "%s%s:%s", sep, lo, hi);
            if (it->step != 1 && len < n) len += (size_t)snprintf(buf + len, n - len, ":%lld", (long long)it->step);
        }
    }
    if (len < n) len += (size_t)snprintf(buf + len, n - len, "]");
    return len;
}

/* A host instruction's operand: a register, a container (oK), a constant as it prints
 * (strings quoted), or a list or dict built at run time. */
static void opnd_text(Graph *g, const Opnd *o, char *buf, size_t n) {
    switch (o->kind) {
    case OPND_NUM: case OPND_TENSOR: case OPND_VAL: reg_str(g, o->reg, buf, n); return;
    case OPND_OBJ: snprintf(buf, n, "o%d", o->reg); return;
    case OPND_CONST: {
        StrBuf b = { 0 };
        fmt_value(&b, o->k, true);
        snprintf(buf, n, "%s", b.s ? b.s : "?");
        sb_free(&b);
        return;
    }
    default: snprintf(buf, n, "%s", o->kind == OPND_LIST ? "[..]" : o->kind == OPND_DICT ? "{..}" : "fn"); return;
    }
}

/* "v3 = str(n2)", "push(o0, n5)": a host call with its operands (operand 0 is the built-in). */
static void hcall_text(Graph *g, Ins *in, const char *d, char *buf, size_t n) {
    size_t len = in->dst >= 0 ? (size_t)snprintf(buf, n, "%s = ", d) : 0;
    if (len < n) len += (size_t)snprintf(buf + len, n - len, "%s(", in->key ? in->key : "?");
    for (int k = 1; k < in->nopnds && len < n; k++) {
        char a[160];
        opnd_text(g, &in->opnds[k], a, sizeof a);
        len += (size_t)snprintf(buf + len, n - len, "%s%s", k > 1 ? ", " : "", a);
    }
    if (len < n) snprintf(buf + len, n - len, ")");
}

static void ins_text(Graph *g, Ins *in, char *buf, size_t n) {
    char d[160], a[160], b[160];
    reg_str(g, in->dst, d, sizeof d);
    reg_str(g, in->a, a, sizeof a);
    reg_str(g, in->b, b, sizeof b);
    switch (in->op) {
    case I_NCONST: snprintf(buf, n, "%s = %g", d, in->imm); break;
    case I_NBIN:
        if (op_info[in->aux].symbol) snprintf(buf, n, "%s = %s %s %s", d, a, op_info[in->aux].symbol, b);
        else snprintf(buf, n, "%s = %s(%s, %s)", d, op_info[in->aux].name, a, b);
        break;
    case I_NMATH: snprintf(buf, n, "%s = %s(%s)", d, op_info[in->aux].name, a); break;
    case I_OP: op_text(g, in, buf, n); break;
    case I_SEED: snprintf(buf, n, "%.17g", in->imm); break;
    case I_TCONST: snprintf(buf, n, "%s = const k%d", d, in->aux); break;
    case I_JUMP: snprintf(buf, n, "-> %d", in->aux); break;
    case I_JUMPF: snprintf(buf, n, "if not %s -> %d", a, in->aux); break;
    case I_PRINT: snprintf(buf, n, "(%d values%s)", in->nopnds - (in->aux ? 2 : 0), in->aux ? ", options" : ""); break;
    case I_ASSERT:
        if (in->key && in->aux == 1) snprintf(buf, n, "%s   (else: %s)", a, in->key);   /* a check's own message */
        else if (in->key) snprintf(buf, n, "%s   (else: undefined variable '%s')", a, in->key);
        else snprintf(buf, n, "%s", a);
        break;
    case I_PUSH: snprintf(buf, n, "stack%d <- %s", in->aux, a); break;
    case I_POP: snprintf(buf, n, "%s = pop stack%d", d, in->aux); break;
    case I_STORE: snprintf(buf, n, "o%d%s%s", in->a, in->key ? "." : "[..]", in->key ? in->key : ""); break;
    case I_HCALL: hcall_text(g, in, d, buf, n); break;
    case I_HLIST:
        snprintf(buf, n, "%s = o%d = new %s of %d", d, in->aux, in->opnds[0].kind == OPND_DICT ? "dict" : "list", in->opnds[0].n);
        break;
    case I_HINDEX: {
        char x[160], y[160];
        opnd_text(g, &in->opnds[0], x, sizeof x);
        opnd_text(g, &in->opnds[1], y, sizeof y);
        snprintf(buf, n, "%s = %s[%s]", d, x, y);
        break;
    }
    case I_HBIN: case I_DSET: case I_VMOVE: {
        char x[160] = "?", y[160];
        if (in->nopnds) opnd_text(g, &in->opnds[0], x, sizeof x);
        if (in->op == I_VMOVE && in->a >= 0) snprintf(buf, n, "%s = %s", d, a);
        else if (in->op == I_VMOVE) snprintf(buf, n, "%s = %s", d, x);
        else if (in->op == I_DSET) snprintf(buf, n, "o%d[%s] = %s", in->aux, b, x);
        else {
            opnd_text(g, &in->opnds[1], y, sizeof y);
            snprintf(buf, n, "%s = %s %s %s", d, x, tok_symbol((TokKind)in->aux), y);
        }
        break;
    }
    case I_FUSED: {   /* a row group's rows: "row group 0 over [256, 1024] rows" */
        char rows[160] = "";
        if (opt_row_group(in)) shape_str(&in->shape, rows, sizeof rows);
        size_t len = opt_row_group(in) ? (size_t)snprintf(buf, n, "%s = row group %d over %s rows", d, in->aux, rows)
                                       : (size_t)snprintf(buf, n, "%s = fused group %d", d, in->aux);
        if (len < n) len += steps_text(g, in, buf + len, n - len);
        char tier[300];   /* the native tier's word, once it has looked at the group */
        if (len < n && jit_tier(in, tier, sizeof tier)) snprintf(buf + len, n - len, "  [%s]", tier);
        break;
    }
    case I_EPILOGUE: {   /* "t9 = matmul+add+relu(t3, t8) { steps }; product t5": every register it writes */
        size_t len = (size_t)snprintf(buf, n, "%s = matmul", d);
        for (int i = 0; i < in->nsteps && len < n; i++) len += (size_t)snprintf(buf + len, n - len, "+%s", op_info[in->steps[i].op].name);
        if (len < n)
            len += (size_t)snprintf(buf + len, n - len, "(%s, %s%s%s)", a, b, in->aux & EPI_TRANS_A ? ", transpose_a=true" : "",
                                    in->aux & EPI_TRANS_B ? ", transpose_b=true" : "");
        if (len < n) len += steps_text(g, in, buf + len, n - len);
        if (in->c >= 0 && len < n) {
            char c[160];
            reg_str(g, in->c, c, sizeof c);
            len += (size_t)snprintf(buf + len, n - len, "; product %s", c);
        }
        char tier[300];   /* the native tier's word for a one-chunk epilogue (exec_cpu.c) */
        if (len < n && jit_tier(in, tier, sizeof tier)) snprintf(buf + len, n - len, "  [%s]", tier);
        break;
    }
    case I_ROWSET: snprintf(buf, n, "%s[%s] := %s", d, a, b); break;
    case I_DIM:
        if (in->aux < 0) snprintf(buf, n, "%s = %s.size", d, a);
        else snprintf(buf, n, "%s = %s.shape[%d]", d, a, in->aux);
        break;
    case I_SELECT: {   /* "t9 = [t3, t5, t7][n2]": the registers of the list's items */
        size_t len = (size_t)snprintf(buf, n, "%s = [", d);
        for (int k = 0; k < in->nargs && len < n; k++) {
            char r[160];
            reg_str(g, in->args[k], r, sizeof r);
            len += (size_t)snprintf(buf + len, n - len, "%s%s", k ? ", " : "", r);
        }
        if (len < n) snprintf(buf + len, n - len, "][%s]", a);
        break;
    }
    case I_INDEX: case I_INDEX_SET: {
        size_t len = (size_t)snprintf(buf, n, "%s = %s", d, a);
        if (len < n) len += index_text(in, buf + len, n - len);
        if (in->op == I_INDEX_SET && len < n) snprintf(buf + len, n - len, " := %s", b);
        break;
    }
    default:
        if (in->b >= 0) snprintf(buf, n, "%s = %s, %s", d, a, b);
        else snprintf(buf, n, "%s = %s", d, a);
    }
}

/* An input is read afresh at each run (a tensor, a run-time number); every other guard is a
 * value the code was compiled for and checks (spec: docs/static.md). Counts guards[from..). */
static bool guard_is_input(const Guard *gd) { return gd->kind == G_TENSOR || gd->kind == G_NUMBER; }

void graph_count_guards(const Graph *g, int from, int *inputs, int *guards) {
    *inputs = *guards = 0;
    for (int i = from; i < g->nguards; i++) ++*(guard_is_input(&g->guards[i]) ? inputs : guards);
}

void dis_graph(FILE *out, Graph *g, const char *title) {
    int ninputs, nguards;
    graph_count_guards(g, 0, &ninputs, &nguards);
    fprintf(out, "== %s: %d instructions, %d registers, %d inputs, %d guards, %d outputs ==\n", title, g->ncode,
            g->nregs, ninputs, nguards, g->noutputs);
    for (int i = 0; i < g->nguards; i++) {
        Guard *gd = &g->guards[i];
        if (i == 12 && g->nguards > 16) {
            graph_count_guards(g, i, &ninputs, &nguards);
            fprintf(out, "  ... %d more inputs, %d more guards\n", ninputs, nguards);
            break;
        }
        const char *name = g->inputs[gd->input].name ? g->inputs[gd->input].name : "?";
        char r[160], sh[128];
        reg_str(g, gd->reg, r, sizeof r);
        switch (gd->kind) {
        case G_TENSOR:
            fprintf(out, "  input %-14s tensor %s%s -> %s\n", name, dtype_name(gd->dtype), shape_str(&gd->shape, sh, sizeof sh), r);
            break;
        case G_NUMBER: fprintf(out, "  input %-14s number (run time) -> %s\n", name, r); break;
        case G_NUMBER_EQ: fprintf(out, "  guard %-14s number == %g -> %s\n", name, gd->num, r); break;
        case G_LIST: fprintf(out, "  guard %-14s list of %s%d\n", name, gd->at_least ? "at least " : "", gd->n); break;
        case G_DICT: fprintf(out, "  guard %-14s dict with %s%d keys\n", name, gd->at_least ? "at least " : "", gd->n); break;
        default: fprintf(out, "  guard %-14s %s\n", name, gd->k.type == VAL_UNDEF ? "omitted" : val_type_name(gd->k)); break;
        }
    }
    int last_line = -1;
    Source *last_src = g->ncode ? g->code[0].src : NULL;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        char text[8192];
        ins_text(g, in, text, sizeof text);
        char where[64] = "";
        if (in->src != last_src && in->src) {
            /* inlined from another file (a module's function): name it */
            const char *base = strrchr(in->src->name, '/');
            snprintf(where, sizeof where, "%s:%d", base ? base + 1 : in->src->name, in->loc.line);
            last_src = in->src;
            last_line = in->loc.line;
        } else if (in->loc.line != last_line) {
            snprintf(where, sizeof where, "line %d", in->loc.line);
            last_line = in->loc.line;
        }
        fprintf(out, "%4d  %-12s %-12s %s\n", i, where, ins_name(in->op), text);
    }
    int tensors = 0;
    for (int i = 0; i < g->nregs; i++) tensors += g->regs[i].kind == R_TENSOR;
    fprintf(out, "summary: %d instructions (%d before optimisation), %d fused groups, %d shared buffers, "
                 "%lld bytes of intermediates saved, %d tensor registers, compiled in %.2f ms\n",
            g->ncode, g->ops_before ? g->ops_before : g->ncode, g->fused_groups, g->nslots, (long long)g->bytes_saved,
            tensors, g->compile_ms);
}

/* An edge from the instruction that last wrote register r (if any) to instruction i. */
static void dot_edge(FILE *out, const Graph *g, const int *writer, int r, int i) {
    if (r >= 0 && r < g->nregs && writer[r] >= 0) fprintf(out, "  i%d -> i%d;\n", writer[r], i);
}

/* The registers a fused group's or epilogue's steps read (-1 for none). */
static void step_reads(const FusedStep *st, int r[3]) {
    r[0] = st->a < 0 && st->a != EPI_PRODUCT ? -st->a - 1 : -1;
    r[1] = st->b < 0 && st->b != FUSED_NONE && st->b != EPI_PRODUCT ? -st->b - 1 : -1;
    r[2] = st->scalar_reg;
}

void dis_dot(FILE *out, Graph *g, const char *title) {
    fprintf(out, "digraph \"%s\" {\n  rankdir=TB;\n  node [shape=box, fontname=monospace];\n", title);
    /* the instruction that last wrote each register feeds the readers after it */
    int *writer = mem_calloc((size_t)g->nregs + 1, sizeof(int));
    for (int r = 0; r < g->nregs; r++) writer[r] = -1;
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        char text[8192];
        ins_text(g, in, text, sizeof text);
        for (char *p = text; *p; p++)
            if (*p == '"') *p = '\'';
        fprintf(out, "  i%d [label=\"%d: %s\\n%s\\nline %d\"%s];\n", i, i, ins_name(in->op), text, in->loc.line,
                in->op == I_FUSED || in->op == I_EPILOGUE ? ", style=filled, fillcolor=lightblue" : "");
        int fixed[3] = { in->a, in->b, in->op == I_EPILOGUE ? -1 : in->c };   /* an epilogue writes c */
        const int *srcs = in->op == I_OP ? in->args : fixed;
        int nsrc = in->op == I_OP ? in->nargs : in->op == I_STORE ? 0 : 3;
        for (int k = 0; k < nsrc; k++) dot_edge(out, g, writer, srcs[k], i);
        for (int k = 0; (in->op == I_INDEX || in->op == I_INDEX_SET || in->op == I_SELECT) && k < in->nargs; k++) dot_edge(out, g, writer, in->args[k], i);
        bool grouped = in->op == I_FUSED || in->op == I_EPILOGUE;
        for (int k = 0; grouped && k < in->nsteps; k++) {
            int r[3];
            step_reads(&in->steps[k], r);
            for (int q = 0; q < 3; q++) dot_edge(out, g, writer, r[q], i);
        }
        if (in->dst >= 0 && in->dst < g->nregs) writer[in->dst] = i;
        if (in->op == I_EPILOGUE && in->c >= 0 && in->c < g->nregs) writer[in->c] = i;
        for (int k = 1; in->op == I_OP && k < in->nres; k++) writer[in->res[k]] = i;
        for (int k = 0; grouped && k < in->nsteps; k++)   /* a step's value read after the group */
            if (in->steps[k].dst < 0 && -in->steps[k].dst - 1 < g->nregs) writer[-in->steps[k].dst - 1] = i;
        if (in->op == I_JUMP || in->op == I_JUMPF) fprintf(out, "  i%d -> i%d [style=dashed];\n", i, in->aux);
    }
    mem_free(writer);
    fprintf(out, "}\n");
}
