/* vm.c - the static VM's entry: picks a graph's executor (vm_impl.h's VmExec) and runs the
 * one interpreter loop (vm_loop.h) with it; what the loop calls out of line (print, assert,
 * store, a stack's growth, errors at an instruction), operands, and the register file's end.
 * Tensor instructions call the very functions eager execution calls (ops/), so static
 * results are the eager results, bit for bit. */
#include <limits.h>
#include "vm.h"
#include "vm_loop.h"
#include "mem.h"

int vm_fail_atk(Interp *I, Ins *in, ErrKind k, const char *msg) {
    Source *saved = I->cur_src;
    I->cur_src = in->src;
    interp_error_atk(I, k, in->loc, "%s", msg);
    interp_attach_loc(I, in->loc);   /* msg may be the pending error's own (then it is not set again) */
    I->cur_src = saved;
    graph_trace(I, in->frame);
    return -1;
}

int vm_fail_at(Interp *I, Ins *in, const char *msg) {
    return vm_fail_atk(I, in, msg == op_error() ? op_error_kind() : ERRK_VALUE, msg);
}

/* Ctrl-C, --timeout or --max-ops stopped the run at `in` (the error is set): locate it in
 * the instruction's own source, as vm_fail_at does. */
int vm_stopped_at(Interp *I, Ins *in) {
    Source *saved = I->cur_src;
    I->cur_src = in->src;
    interp_attach_loc(I, in->loc);
    I->cur_src = saved;
    graph_trace(I, in->frame);
    return -1;
}

/* A number op whose result is NaN: whether it is an error eagerly (& | ^ ~ of a non-integral
 * number), with the message set. Bool operands are 0/1 and never get here. */
bool vm_number_failed(const Ins *in, double a, double b, int n) {
    if (op_def((OpCode)in->aux)->dtype_rule != DR_INT) return false;
    OpArg args[2] = { op_arg_num(a, false), op_arg_num(b, false) };
    double r;
    return op_run_number((OpCode)in->aux, args, n, NULL, &r) == -2;
}

void vm_keep_spare(VmRegs *r, const Opnd *o, Value old) {
    if (o->kind != OPND_TENSOR || old.type != VAL_TENSOR || old.as.t == r->ten[o->reg]) {
        val_release(old);
        return;
    }
    tensor_release(r->spare[o->reg]);
    r->spare[o->reg] = old.as.t;
}

Value vm_operand(Interp *I, Graph *g, VmRegs *r, const Opnd *o) {
    if (o->bound && r->num[o->bound - 1] == 0) return UNDEF_VAL;   /* left unbound, as eagerly */
    switch (o->kind) {
    case OPND_CONST: return graph_const_value(o->k);
    case OPND_NUM: return g->regs[o->reg].is_bool ? BOOL_VAL(r->num[o->reg] != 0) : NUM_VAL(r->num[o->reg]);
    case OPND_TENSOR: {
        Tensor *t = r->ten[o->reg];
        if (!t) return interp_errork(I, ERRK_KEY, "undefined variable");
        /* a GPU graph's arena is written again next run: what leaves the graph is a copy */
        if (g->dev && vm_dev_owns(g->dev, t)) {
            Tensor *c = tensor_copy(t);
            return c ? TENSOR_VAL(c) : interp_op_error(I);
        }
        return TENSOR_VAL(tensor_retain(t));
    }
    case OPND_VAL:
        if (r->val[o->reg].type == VAL_NIL) return interp_errork(I, ERRK_KEY, "undefined variable");
        return val_retain(r->val[o->reg]);
    case OPND_OBJ: {
        Obj *ob = r->objs[o->reg];
        if (!ob) return interp_errork(I, ERRK_KEY, "undefined variable");   /* a host list a loop that ran 0 times made */
        ob->rc++;
        return OBJ_VAL(ob->kind == OBJ_LIST ? VAL_LIST : VAL_DICT, ob);
    }
    case OPND_CLOSURE: {
        ObjClosure *cl = closure_new(o->proto, o->mod);
        for (int i = 0; i < o->n; i++) {
            o->cells[i]->h.rc++;
            cl->upvals[i] = o->cells[i];
        }
        return OBJ_VAL(VAL_FUNC, cl);
    }
    case OPND_LIST: {
        ObjList *l = list_new(o->n);
        for (int i = 0; i < o->n; i++) {
            Value v = vm_operand(I, g, r, &o->items[i]);
            if (IS_ERR(v)) { val_release(OBJ_VAL(VAL_LIST, l)); return v; }
            l->items[l->len++] = v;
        }
        return OBJ_VAL(VAL_LIST, l);
    }
    case OPND_DICT: {
        ObjDict *d = dict_new();
        for (int i = 0; i < o->n; i++) {
            Value v = vm_operand(I, g, r, &o->items[i]);
            if (IS_ERR(v)) { val_release(OBJ_VAL(VAL_DICT, d)); return v; }
            dict_set_cstr(d, o->keys[i], v);
            val_release(v);
        }
        return OBJ_VAL(VAL_DICT, d);
    }
    }
    return NIL_VAL;
}

/* print's options from the instruction (PRINT_* in ir.h); false when they are malformed. */
static bool print_opts_of(const Ins *in, PrintOpts *o, int *nvals) {
    *o = (PrintOpts){ " ", "\n", 1, 1, false, false };
    *nvals = in->nopnds;
    if (in->aux == 0) return true;
    if (in->aux < 0 || in->aux > PRINT_MAX_AUX || in->nopnds < 2) return false;
    const Opnd *sep = &in->opnds[in->nopnds - 2], *end = &in->opnds[in->nopnds - 1];
    if (sep->kind != OPND_CONST || sep->k.type != VAL_STR || end->kind != OPND_CONST || end->k.type != VAL_STR) return false;
    int f = in->aux - 1;
    *o = (PrintOpts){ AS_STR(sep->k)->chars, AS_STR(end->k)->chars, AS_STR(sep->k)->len, AS_STR(end->k)->len,
                      (f & PRINT_STDERR) != 0, (f & PRINT_FLUSH) != 0 };
    *nvals = in->nopnds - 2;
    return true;
}

int vm_print(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    PrintOpts o;
    int n;
    if (!print_opts_of(in, &o, &n)) return vm_fail_at(I, in, "corrupt graph: a print with bad options");
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    for (int i = 0; i < n; i++) {
        Value v = vm_operand(I, g, r, &in->opnds[i]);
        if (IS_ERR(v)) { sb_free(&b); return vm_fail_at(I, in, I->err_msg); }
        if (i) sb_putn(&b, o.sep, (size_t)o.sep_len);
        bool ok = fmt_value_in(I, &b, v, false);
        val_release(v);
        if (!ok) {   /* text over the size limit, or interrupted: the error is set */
            sb_free(&b);
            return vm_stopped_at(I, in);
        }
    }
    sb_putn(&b, o.end, (size_t)o.end_len);
    bool ok = r->quiet || print_write(I, &o, b.s, b.len);
    sb_free(&b);
    if (ok) return 0;
    return vm_stopped_at(I, in);   /* the error is set: give it this print's location */
}

int vm_assert(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    if (r->num[in->a] != 0) return 0;
    if (in->key && in->aux == 1) return vm_fail_at(I, in, in->key);   /* a check with its own message */
    if (in->key) {   /* a variable first assigned in a loop or branch that did not assign it */
        char msg[300];
        snprintf(msg, sizeof msg, "undefined variable '%s'", in->key);
        return vm_fail_atk(I, in, ERRK_KEY, msg);
    }
    if (!in->nopnds) return vm_fail_atk(I, in, ERRK_ASSERT, "assertion failed");
    Value m = vm_operand(I, g, r, &in->opnds[0]);
    StrBuf b = { 0 };
    sb_puts(&b, "assertion failed: ");
    fmt_value(&b, m, false);
    val_release(m);
    int rc = vm_fail_atk(I, in, ERRK_ASSERT, b.s);
    sb_free(&b);
    return rc;
}

int vm_store(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    Value v = vm_operand(I, g, r, &in->opnds[0]);
    if (IS_ERR(v)) return -1;
    Obj *o = r->objs[in->a];
    if (o->kind == OBJ_DICT) {
        Value *slot = dict_get((ObjDict *)o, in->key, (int)strlen(in->key));
        Value old = slot ? val_retain(*slot) : NIL_VAL;
        dict_set_cstr((ObjDict *)o, in->key, v);
        val_release(v);
        vm_keep_spare(r, &in->opnds[0], old);
    } else {
        ObjList *l = (ObjList *)o;
        Value old = l->items[in->aux];
        l->items[in->aux] = v;
        vm_keep_spare(r, &in->opnds[0], old);
    }
    return 0;
}

/* A host instruction's result into register dst: a number register takes a number or
 * bool, a value register anything (a string). */
static int host_result(Interp *I, Graph *g, VmRegs *r, Ins *in, Value v) {
    if (IS_ERR(v)) return vm_stopped_at(I, in);   /* eager's error, located at the call as eagerly */
    if (in->dst < 0) {
        val_release(v);
        return 0;
    }
    if (g->regs[in->dst].kind == R_NUM) {
        if (v.type != VAL_NUM && v.type != VAL_BOOL) {
            val_release(v);
            return vm_fail_at(I, in, "internal error: a host instruction gave no number");
        }
        r->num[in->dst] = v.type == VAL_BOOL ? v.as.b : v.as.n;
        return 0;
    }
    val_release(r->val[in->dst]);
    r->val[in->dst] = v;
    return 0;
}

/* Operands 0..n-1 of in as values (new references); false with the error reported. */
static bool host_operands(Interp *I, Graph *g, VmRegs *r, Ins *in, Value *out, int n) {
    for (int k = 0; k < n; k++) {
        out[k] = vm_operand(I, g, r, &in->opnds[k]);
        if (IS_ERR(out[k])) {
            for (int j = 0; j < k; j++) val_release(out[j]);
            vm_fail_at(I, in, I->err_msg);
            return false;
        }
    }
    return true;
}

int vm_host(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    Value v[8];
    switch (in->op) {
    case I_VMOVE:
        if (in->a < 0 && !host_operands(I, g, r, in, v, 1)) return -1;
        val_release(r->val[in->dst]);
        r->val[in->dst] = in->a < 0 ? v[0] : val_retain(r->val[in->a]);
        return 0;
    case I_HCALL: {   /* operand 0 is the built-in: eager's own function, eager's messages */
        if (in->nopnds > 8 || !host_operands(I, g, r, in, v, in->nopnds)) return in->nopnds > 8 ? vm_fail_at(I, in, "internal error: too many operands") : -1;
        CallArgs ca = { v + 1, in->nopnds - 1, NULL, NULL, 0 };
        /* a quiet run (--verify-static's) draws no progress bar, as it prints nothing */
        bool skip = r->quiet && v[0].as.o == (Obj *)I->progress_host;
        Value res = skip ? NIL_VAL : builtin_run(I, AS_BUILTIN(v[0]), &ca);
        for (int k = 0; k < in->nopnds; k++) val_release(v[k]);
        return host_result(I, g, r, in, res);
    }
    case I_HBIN: {
        if (!host_operands(I, g, r, in, v, 2)) return -1;
        Value res = value_binary(I, in->aux, v[0], v[1]);
        val_release(v[0]);
        val_release(v[1]);
        return host_result(I, g, r, in, res);
    }
    case I_HINDEX: {
        if (!host_operands(I, g, r, in, v, 2)) return -1;
        Value res = value_index(I, v[0], &v[1], 1);
        val_release(v[0]);
        val_release(v[1]);
        return host_result(I, g, r, in, res);
    }
    case I_HLIST:   /* the register owns the new list; the container index borrows it */
        if (!host_operands(I, g, r, in, v, 1)) return -1;
        val_release(r->val[in->dst]);
        r->val[in->dst] = v[0];
        r->objs[in->aux] = v[0].as.o;
        return 0;
    case I_DSET: {   /* d[k] = x with a key made at run time, as eager's assignment */
        if (!host_operands(I, g, r, in, v, 1)) return -1;
        Value key = r->val[in->b];
        if (key.type != VAL_STR) {
            val_release(v[0]);
            return vm_fail_at(I, in, "dict keys are strings");
        }
        dict_set((ObjDict *)r->objs[in->aux], AS_STR(key), v[0]);
        val_release(v[0]);
        return 0;
    }
    default: return vm_fail_at(I, in, "internal error: not a host instruction");
    }
}

void vm_regs_clear_vals(VmRegs *r, const Graph *g) {
    for (int i = 0; i < g->nregs; i++) {
        val_release(r->val[i]);
        r->val[i] = NIL_VAL;
    }
}

/* What one entry of a PUSH stack costs toward --max-memory: its two array slots and the
 * header of the tensor it keeps (the tensor's data counts as a tensor). */
#define STACK_ENTRY_BYTES ((int64_t)(sizeof(Tensor *) + sizeof(double)) + TENSOR_KEEP_BYTES)

int vm_stack_reserve(VmStack *s) {
    if (s->n < s->cap) return 0;
    if (s->cap > INT_MAX / 2) {
        op_failk(ERRK_MEMORY, "out of memory: a backward loop saved more than %d iterations", s->cap);
        return -1;
    }
    int cap = s->cap ? s->cap * 2 : 16;
    int64_t more = (int64_t)(cap - s->cap) * STACK_ENTRY_BYTES;
    if (!mem_charge(more)) return -1;
    Tensor **t = mem_try_realloc(s->t, sizeof(Tensor *) * (size_t)cap);
    if (t) s->t = t;   /* kept even if x fails: the entries past cap are unused */
    double *x = t ? mem_try_realloc(s->x, sizeof(double) * (size_t)cap) : NULL;
    if (!x) {
        mem_charge(-more);
        op_failk(ERRK_MEMORY, "out of memory: a backward loop's saved values cannot grow to %d entries", cap);
        return -1;
    }
    s->x = x;
    for (int k = s->cap; k < cap; k++) s->t[k] = NULL;
    s->cap = cap;
    return 0;
}

/* Releases a graph's run-time state: registers, buffers, stacks, spares. */
void vm_regs_free(VmRegs *r, const Graph *g) {
    for (int i = 0; i < g->nregs; i++) {
        tensor_release(r->ten[i]);
        tensor_release(r->spare[i]);
        if (r->val) val_release(r->val[i]);
    }
    mem_free(r->val);
    mem_free(r->spare);
    for (int i = 0; i < g->nslots; i++) tensor_release(r->slots[i]);
    for (int i = 0; i < g->nstacks; i++) {
        for (int k = 0; k < r->stacks[i].cap; k++) tensor_release(r->stacks[i].t[k]);
        mem_free(r->stacks[i].t);
        mem_free(r->stacks[i].x);
        mem_charge(-(int64_t)r->stacks[i].cap * STACK_ENTRY_BYTES);
    }
    mem_free(r->stacks);
    if (r->scratch) mem_free(r->scratch->p);
    mem_free(r->scratch);
    mem_free(r->slots);
    mem_free(r->slot_owner);
    mem_free(r->num);
    mem_free(r->ten);
    mem_free(r->objs);
    mem_free(r);
}

/* ---------- the executors and the loop ---------- */

/* Executors by the device a graph's tensors live on: host memory runs on the CPU's block
 * kernels; a device without a row of its own, and every graph under TSL_VM_DEVICE=1
 * (Graph.device_vm), runs through the op registry's executor. A new device is a new row or
 * none: never a new loop. */
static const VmExec *const executors[] = { [DEV_CPU] = &vm_cpu_exec, [DEV_GPU] = &vm_dev_exec };

static const VmExec *executor(const Graph *g) {
    const VmExec *x = (size_t)g->device < sizeof executors / sizeof *executors ? executors[g->device] : NULL;
    return x && !(g->device_vm && x == &vm_cpu_exec) ? x : &vm_dev_exec;
}

/* The loop through an executor's table: the device executor's, and every executor without
 * its own instance (VmExec.loop). */
static int run_plain(Interp *I, Graph *g, VmRegs *r, const VmExec *X, int pc, int end) {
    return vm_loop(I, g, r, X, pc, end, false);
}
static int run_segmented(Interp *I, Graph *g, VmRegs *r, const VmExec *X) { return vm_loop(I, g, r, X, 0, g->ncode, true); }

int vm_run_range(Interp *I, Graph *g, VmRegs *r, int begin, int end) {
    const VmExec *X = executor(g);
    return X->loop ? X->loop(I, g, r, begin, end, false) : run_plain(I, g, r, X, begin, end);
}

int vm_exec(Interp *I, Graph *g, VmRegs *r) {
    const VmExec *X = executor(g);
    for (int i = 0; i < g->nstacks; i++) r->stacks[i].n = 0;   /* an earlier run may have stopped half-way */
    if (X->begin && X->begin(I, g, r)) return -1;
    int rc = X->loop ? X->loop(I, g, r, 0, g->ncode, true) : X->segment ? run_segmented(I, g, r, X) : run_plain(I, g, r, X, 0, g->ncode);
    if (rc) return -1;
    if (X->end) X->end(g, r);
    return 0;
}
