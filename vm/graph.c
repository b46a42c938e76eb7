/* graph.c - building and freeing Graphs; names of instructions. */
#include <string.h>
#include "vm.h"
#include "mem.h"

const char *ins_name(InsOp op) {
    static const char *names[] = {
#define OPC(name, text, effect) text,
#include "opcodes.def"
#undef OPC
    };
    return op < I__COUNT ? names[op] : "?";
}

int graph_emit(Graph *g, InsOp op, SrcLoc loc, Source *src) {
    if (g->ncode == g->capcode) {
        g->capcode = g->capcode ? g->capcode * 2 : 64;
        g->code = mem_realloc(g->code, sizeof(Ins) * (size_t)g->capcode);
    }
    Ins *in = &g->code[g->ncode];
    memset(in, 0, sizeof *in);
    in->op = op;
    in->dst = in->a = in->b = in->c = -1;
    in->loc = loc;
    in->src = src;
    return g->ncode++;
}

CallFrame *graph_frame(Graph *g, const char *name, Source *src, SrcLoc loc, CallFrame *outer) {
    CallFrame *f = mem_alloc(sizeof *f);
    *f = (CallFrame){ mem_strndup(name, strlen(name)), src, loc, outer, g->frames };
    g->frames = f;
    return f;
}

void graph_trace(Interp *I, const CallFrame *f) {
    for (; f && I->err_set; f = f->outer) traceback_add(&I->traceback, f->name, f->src, f->loc);
}

int graph_reg(Graph *g, RegKind kind) {
    GROW(g->regs, g->nregs, g->capregs);
    RegInfo *r = &g->regs[g->nregs];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->slot = -1;
    return g->nregs++;
}

Value graph_detached_str(const char *s, size_t len) {
    ObjString *o = mem_calloc(1, sizeof(ObjString) + len + 1);
    o->h.rc = 1;
    o->h.kind = OBJ_STR;
    o->h.marks = OBJ_DETACHED;
    o->cap = (int)len;
    o->hash = 2166136261u;
    str_append_in_place(o, s, (int)len);
    return OBJ_VAL(VAL_STR, o);
}

static bool is_detached(Value v) { return v.type == VAL_STR && (v.as.o->marks & OBJ_DETACHED); }

Value graph_const_value(Value k) {
    return is_detached(k) ? OBJ_VAL(VAL_STR, str_new(AS_STR(k)->chars, AS_STR(k)->len)) : val_retain(k);
}

void graph_release_const(Value k) {
    if (is_detached(k)) mem_free(k.as.o);
    else val_release(k);
}

void opnd_free(Opnd *o) {
    if (o->kind == OPND_CONST) graph_release_const(o->k);
    if (o->kind == OPND_CLOSURE) {
        for (int i = 0; i < o->n; i++) val_release(OBJ_VAL(VAL_CELL, o->cells[i]));
        mem_free(o->cells);
        mem_free(o->csrc);
        o->n = 0;
    }
    for (int i = 0; i < o->n; i++) {
        opnd_free(&o->items[i]);
        if (o->keys) mem_free(o->keys[i]);
    }
    mem_free(o->items);
    mem_free(o->keys);
    memset(o, 0, sizeof *o);
}

/* Frees what an instruction owns (operands, arguments, index template, steps). */
void ins_free(Ins *in) {
    for (int k = 0; k < in->nopnds; k++) opnd_free(&in->opnds[k]);
    mem_free(in->opnds);
    if (in->idx)
        for (int k = 0; k < in->nidx; k++)
            if (in->idx[k].kind == IDX_TENSOR && in->idx[k].t) tensor_release((Tensor *)in->idx[k].t);
    mem_free(in->args);
    mem_free(in->idx);
    mem_free(in->key);
    mem_free(in->steps);
    mem_free(in->attrs);
    in->attrs = NULL;
    in->opnds = NULL;
    in->args = NULL;
    in->idx = NULL;
    in->key = NULL;
    in->steps = NULL;
    in->nopnds = in->nargs = in->nidx = in->nsteps = 0;
}

void graph_free(Graph *g) {
    if (!g) return;
    for (int i = 0; i < g->ncode; i++) ins_free(&g->code[i]);
    mem_free(g->code);
    while (g->frames) {
        CallFrame *f = g->frames;
        g->frames = f->next;
        mem_free(f->name);
        mem_free(f);
    }
    mem_free(g->regs);
    for (int i = 0; i < g->nconsts; i++) tensor_release(g->consts[i]);
    mem_free(g->consts);
    for (int i = 0; i < g->ninputs; i++) {
        if (g->inputs[i].cell) val_release(OBJ_VAL(VAL_CELL, g->inputs[i].cell));
        mem_free(g->inputs[i].name);
    }
    mem_free(g->inputs);
    for (int i = 0; i < g->nguards; i++) {
        graph_release_const(g->guards[i].k);
        for (int k = 0; g->guards[i].keys && k < g->guards[i].n; k++) mem_free(g->guards[i].keys[k]);
        mem_free(g->guards[i].keys);
    }
    mem_free(g->guards);
    for (int i = 0; i < g->noutputs; i++) {
        if (g->outputs[i].cell) val_release(OBJ_VAL(VAL_CELL, g->outputs[i].cell));
        mem_free(g->outputs[i].name);
        opnd_free(&g->outputs[i].val);
    }
    mem_free(g->outputs);
    if (g->has_result) opnd_free(&g->result);
    if (g->rf) vm_regs_free(g->rf, g);
    vm_dev_free(g->dev, g->nregs);
    mem_free(g->vals);
    mem_free(g->rt_values);
    mem_free(g->changes);
    mem_free(g);
}

static bool reg_runtime(const Graph *g, int r) {
    return r >= 0 && r < g->nregs && g->regs[r].kind == R_TENSOR && shape_is_runtime(&g->regs[r].shape);
}

bool graph_ins_runtime(const Graph *g, const Ins *in) {
    bool rt = reg_runtime(g, in->dst) || reg_runtime(g, in->a) || reg_runtime(g, in->b) || reg_runtime(g, in->c);
    for (int k = 0; k < in->nargs && !rt; k++) rt = reg_runtime(g, in->args[k]);
    for (int k = 0; k < in->nres && !rt; k++) rt = reg_runtime(g, in->res[k]);
    for (int k = 0; k < in->nsteps && !rt; k++) {
        const FusedStep *st = &in->steps[k];
        rt = (st->dst < 0 && reg_runtime(g, -st->dst - 1)) || (st->a < 0 && reg_runtime(g, -st->a - 1)) ||
             (st->b < 0 && reg_runtime(g, -st->b - 1));
    }
    return rt;
}

/* Whether an instruction of the graph touches a run-time shape. (A register alone says
 * nothing: a compiler's dry run, rolled back, may have left one that no instruction uses.) */
bool graph_mark_runtime(Graph *g) {
    bool regs = false, any = false;
    for (int r = 0; r < g->nregs && !regs; r++) regs = reg_runtime(g, r);
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        bool rt = regs && graph_ins_runtime(g, in);
        in->rt = rt && (in->op == I_OP || in->op == I_INDEX || in->op == I_INDEX_SET);
        any |= rt;
    }
    return any;
}
