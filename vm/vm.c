/* vm.c - the static VM: one dispatch loop over a Graph's instructions, for every device.
 *
 * The loop runs control flow, numbers, prints, asserts, stores, the PUSH/POP stacks and the
 * host's reads (item, a branch on a tensor) itself. What depends on where tensors live goes
 * to the graph's executor (vm_impl.h's VmExec): the CPU's (exec_cpu.c: the memory plan's
 * buffers, block kernels) or the device executor (exec_dev.c: any device through the op
 * registry, one arena per graph, capture segments). Tensor instructions call the very
 * functions eager execution calls (ops/), so static results are the eager results, bit for
 * bit. Registers hold numbers or references to tensors; a tensor register that is
 * overwritten releases its old value. An instruction that fails reports at its own source
 * location, with the message eager would give. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "vm.h"
#include "vm_impl.h"
#include "mem.h"

#define vmdispatch(op) switch (op)
#define vmcase(l) case l:
#define vmbreak break

int vm_fail_at(Interp *I, Ins *in, const char *msg) {
    Source *saved = I->cur_src;
    I->cur_src = in->src;
    interp_error_at(I, in->loc, "%s", msg);
    I->cur_src = saved;
    return -1;
}

/* Ctrl-C, --timeout or --max-ops stopped the run at `in` (the error is set): locate it in
 * the instruction's own source, as vm_fail_at does. */
int vm_stopped_at(Interp *I, Ins *in) {
    Source *saved = I->cur_src;
    I->cur_src = in->src;
    interp_attach_loc(I, in->loc);
    I->cur_src = saved;
    return -1;
}

/* A number op whose result is NaN: whether it is an error eagerly (& | ^ ~ of a non-integral
 * number), with the message set. Bool operands are 0/1 and never get here. */
static bool number_op_failed(const Ins *in, double a, double b, int n) {
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
        if (!t) return interp_error(I, "undefined variable");
        /* a GPU graph's arena is written again next run: what leaves the graph is a copy */
        if (g->dev && vm_dev_owns(g->dev, t)) {
            Tensor *c = tensor_copy(t);
            return c ? TENSOR_VAL(c) : interp_error(I, "%s", op_error());
        }
        return TENSOR_VAL(tensor_retain(t));
    }
    case OPND_OBJ: {
        Obj *ob = r->objs[o->reg];
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

static int exec_print(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    for (int i = 0; i < in->nopnds; i++) {
        Value v = vm_operand(I, g, r, &in->opnds[i]);
        if (IS_ERR(v)) { sb_free(&b); return vm_fail_at(I, in, I->err_msg); }
        if (i) sb_putn(&b, " ", 1);
        bool ok = fmt_value_in(I, &b, v, false);
        val_release(v);
        if (!ok) {   /* text over the size limit, or interrupted: the error is set */
            sb_free(&b);
            Source *saved = I->cur_src;
            I->cur_src = in->src;
            interp_attach_loc(I, in->loc);
            I->cur_src = saved;
            return -1;
        }
    }
    sb_putn(&b, "\n", 1);
    bool ok = r->quiet || interp_write_out(I, b.s, b.len);
    sb_free(&b);
    if (ok) return 0;
    Source *saved = I->cur_src;   /* the error is set: give it this print's location */
    I->cur_src = in->src;
    interp_attach_loc(I, in->loc);
    I->cur_src = saved;
    return -1;
}

static int exec_assert(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    if (r->num[in->a] != 0) return 0;
    if (in->key && in->aux == 1) return vm_fail_at(I, in, in->key);   /* a check with its own message */
    if (in->key) {   /* a variable first assigned in a loop or branch that did not assign it */
        char msg[300];
        snprintf(msg, sizeof msg, "undefined variable '%s'", in->key);
        return vm_fail_at(I, in, msg);
    }
    if (!in->nopnds) return vm_fail_at(I, in, "assertion failed");
    Value m = vm_operand(I, g, r, &in->opnds[0]);
    StrBuf b = { 0 };
    sb_puts(&b, "assertion failed: ");
    fmt_value(&b, m, false);
    val_release(m);
    int rc = vm_fail_at(I, in, b.s);
    sb_free(&b);
    return rc;
}

static int exec_store(Interp *I, Graph *g, VmRegs *r, Ins *in) {
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

/* ---------- indexing, stacks, host reads: the same on every device ---------- */

/* An index instruction: its number operands checked into items, then the executor's. */
static int exec_index(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    IndexItem items[TSL_MAX_RANK + 8];
    if (in->nidx) memcpy(items, in->idx, sizeof(IndexItem) * (size_t)in->nidx);
    for (int k = 0; k < in->nidx; k++) {
        if (in->args[k] < 0) continue;
        if (items[k].kind == IDX_TENSOR) {
            if (!(items[k].t = r->ten[in->args[k]])) return vm_fail_at(I, in, "undefined variable");
            continue;
        }
        double x = r->num[in->args[k]];
        if (!num_to_i64(x, &items[k].i)) {
            char msg[96];
            snprintf(msg, sizeof msg, x == floor(x) ? "index %g is out of range" : "tensor index must be an integer, got %g", x);
            return vm_fail_at(I, in, msg);
        }
    }
    Tensor *src = r->ten[in->a], *v = in->op == I_INDEX_SET ? r->ten[in->b] : NULL;
    if (!src || (in->op == I_INDEX_SET && !v)) return vm_fail_at(I, in, "undefined variable");
    Tensor *t = X->index(g, r, in, src, items, v);
    return !t || X->place(g, r, in->dst, t) ? vm_fail_at(I, in, op_error()) : 0;
}

static bool private_like(const Tensor *d, const Tensor *t) {
    return d->rc == 1 && d->buf->rc == 1 && d->dtype == t->dtype && d->device == t->device && d->ndim == t->ndim &&
           !memcmp(d->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
}

/* A register := another's value: a copy into the destination's own buffer when it is
 * private, so the source keeps its buffer for the next iteration; otherwise the executor
 * places it (shared on the CPU, copied into the arena's region on a device). */
static int exec_tmove(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    Tensor *src = r->ten[in->a], *home = r->ten[in->dst];
    if (!src) return vm_fail_at(I, in, "undefined variable");
    int rc = home && home != src && private_like(home, src) ? X->copy(home, src) : X->place(g, r, in->dst, tensor_retain(src));
    return rc ? vm_fail_at(I, in, op_error()) : 0;
}

/* A private tensor like t holding a copy of t, reusing *slot's buffer. */
static bool copy_into(const VmExec *X, Tensor **slot, const Tensor *t) {
    Tensor *d = *slot;
    if (d && private_like(d, t)) return X->copy(d, t) == 0;
    Tensor *c = tensor_copy(t);
    if (!c) return false;
    tensor_release(d);
    *slot = c;
    return true;
}


/* What one entry of a PUSH stack costs toward --max-memory: its two array slots and the
 * header of the tensor it keeps (the tensor's data counts as a tensor). */
#define STACK_ENTRY_BYTES ((int64_t)(sizeof(Tensor *) + sizeof(double)) + TENSOR_KEEP_BYTES)

/* Room for one more entry on a PUSH stack, counted toward --max-memory. 0, or -1 with the
 * message in op_error(). */
static int stack_reserve(VmStack *s) {
    if (s->n < s->cap) return 0;
    if (s->cap > INT_MAX / 2) {
        op_fail("out of memory: a backward loop saved more than %d iterations", s->cap);
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
        op_fail("out of memory: a backward loop's saved values cannot grow to %d entries", cap);
        return -1;
    }
    s->x = x;
    for (int k = s->cap; k < cap; k++) s->t[k] = NULL;
    s->cap = cap;
    return 0;
}

static int exec_push(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (stack_reserve(s)) return vm_fail_at(I, in, op_error());
    if (g->regs[in->a].kind == R_NUM) s->x[s->n] = r->num[in->a];
    else if (r->ten[in->a] && !copy_into(X, &s->t[s->n], r->ten[in->a])) return vm_fail_at(I, in, op_error());
    /* (an empty register: a value of a branch side this iteration did not take, which its
     * backward, taking the same side, never reads) */
    s->n++;
    return 0;
}

/* The value is handed over to the register (the executor places it); the stack keeps the
 * register's old buffer for the next push when nothing else holds it. */
static int exec_pop(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (s->n == 0) return vm_fail_at(I, in, "internal error: a backward loop popped more values than its loop saved");
    s->n--;
    if (g->regs[in->dst].kind == R_NUM) {
        r->num[in->dst] = s->x[s->n];
        return 0;
    }
    Tensor *t = s->t[s->n], *old = r->ten[in->dst];
    if (!t) return 0;   /* nothing was ever saved here: a side not taken (see exec_push) */
    s->t[s->n] = NULL;
    if (old) tensor_retain(old);
    if (X->place(g, r, in->dst, t)) {
        tensor_release(old);
        return vm_fail_at(I, in, op_error());
    }
    if (old && old != r->ten[in->dst] && old->rc == 1 && old->buf->rc == 1) s->t[s->n] = old;
    else tensor_release(old);
    return 0;
}

/* The first element of a tensor on any device, read on the host. */
static bool host_first(const Tensor *t, double *x) {
    if (t->device == DEV_CPU) {
        *x = tensor_get(t, 0);
        return true;
    }
    Tensor *h = tensor_host(t);
    if (!h) return false;
    *x = tensor_get(h, 0);
    tensor_release(h);
    return true;
}

static int exec_truth(Interp *I, VmRegs *r, Ins *in) {
    Tensor *x = r->ten[in->a];
    double v;
    if (!x) return vm_fail_at(I, in, "undefined variable");
    if (x->size != 1) {
        char msg[128];
        snprintf(msg, sizeof msg, "ambiguous truth value of a tensor with %lld elements; use any/all", (long long)x->size);
        return vm_fail_at(I, in, msg);
    }
    if (!host_first(x, &v)) return vm_fail_at(I, in, op_error());
    r->num[in->dst] = v != 0;
    return 0;
}

static int exec_scalar(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    double x = r->num[in->a];
    if (in->aux == DT_I64 && !double_fits_i64(x))   /* as astype: never a wrapped integer */
        return vm_fail_at(I, in, isnan(x) ? "cannot convert nan to i64"
                              : isinf(x) ? (x > 0 ? "cannot convert inf to i64" : "cannot convert -inf to i64")
                                         : "cannot convert an out-of-range value to i64");
    return X->scalar(g, r, in->dst, (DType)in->aux, x) ? vm_fail_at(I, in, op_error()) : 0;
}

/* Releases a graph's run-time state: registers, buffers, stacks, spares. */
void vm_regs_free(VmRegs *r, const Graph *g) {
    for (int i = 0; i < g->nregs; i++) {
        tensor_release(r->ten[i]);
        tensor_release(r->spare[i]);
    }
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
    if (g->device_vm && x == &vm_cpu_exec) return &vm_dev_exec;
    return x ? x : &vm_dev_exec;
}

/* Instructions from pc until one jumps to or past end; segments: the executor's capture
 * segments run where they begin (off for a segment's own run). */
static int run(Interp *I, Graph *g, VmRegs *r, const VmExec *X, int pc, int end, bool segments) {
    double *N = r->num;
    Tensor **T = r->ten;
    Ins *code = g->code;
    while (pc < end) {
        if (segments && X->segment) {
            int ran = X->segment(I, g, r, &pc);
            if (ran < 0) return -1;
            if (ran) continue;
        }
        Ins *in = &code[pc++];
        vmdispatch(in->op) {
            vmcase(I_NCONST) N[in->dst] = in->imm; vmbreak;
            vmcase(I_NMOVE) N[in->dst] = N[in->a]; vmbreak;
            vmcase(I_NBIN) {
                double x = op_binary_number((OpCode)in->aux, N[in->a], N[in->b]);
                if (x != x && number_op_failed(in, N[in->a], N[in->b], 2)) return vm_fail_at(I, in, op_error());
                N[in->dst] = x;
                vmbreak;
            }
            vmcase(I_NNEG) N[in->dst] = -N[in->a]; vmbreak;
            vmcase(I_NNOT) N[in->dst] = N[in->a] == 0; vmbreak;
            vmcase(I_NMATH) {
                if (in->imm != 0) cpu_round_decimals(DT_F64, &N[in->a], &N[in->dst], 1, (int64_t)in->imm);
                else {
                    double x = op_unary_number((OpCode)in->aux, N[in->a]);
                    if (x != x && number_op_failed(in, N[in->a], 0, 1)) return vm_fail_at(I, in, op_error());
                    N[in->dst] = x;
                }
                vmbreak;
            }
            vmcase(I_TCONST) {
                Tensor *t = X->konst(g, r, in->aux);
                if (!t) return vm_fail_at(I, in, op_error());
                vm_set_t(r, in->dst, t);
                vmbreak;
            }
            vmcase(I_SCALAR) if (exec_scalar(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_TMOVE) if (exec_tmove(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_OP) {
                /* before each kernel: a run of slow ops without a loop stops too */
                if (!interp_poll(I)) return vm_stopped_at(I, in);
                if (X->op(I, g, r, in)) return -1;
                vmbreak;
            }
            vmcase(I_INDEX)
            vmcase(I_INDEX_SET) if (exec_index(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_SEED) rng_seed((uint64_t)(int64_t)in->imm); vmbreak;
            vmcase(I_ITEM) {
                if (!T[in->a]) return vm_fail_at(I, in, "undefined variable");
                if (!host_first(T[in->a], &N[in->dst])) return vm_fail_at(I, in, op_error());
                vmbreak;
            }
            vmcase(I_TRUTH) if (exec_truth(I, r, in)) return -1; vmbreak;
            vmcase(I_JUMP) {
                /* backward jumps close loops: poll Ctrl-C, --timeout and --max-ops there */
                if (in->aux < pc && (I->interrupt_flag || I->max_ops) && !interp_check_limits(I))
                    return vm_stopped_at(I, in);
                pc = in->aux;
                vmbreak;
            }
            vmcase(I_JUMPF) {
                if (N[in->a] != 0) vmbreak;
                /* the compiler's loops close with jump, but a loaded file may loop here */
                if (in->aux < pc && (I->interrupt_flag || I->max_ops) && !interp_check_limits(I))
                    return vm_stopped_at(I, in);
                pc = in->aux;
                vmbreak;
            }
            vmcase(I_PRINT) if (exec_print(I, g, r, in)) return -1; vmbreak;
            vmcase(I_PUSH) if (exec_push(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_POP) if (exec_pop(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_ASSERT) if (exec_assert(I, g, r, in)) return -1; vmbreak;
            vmcase(I_STORE) if (exec_store(I, g, r, in)) return -1; vmbreak;
            vmcase(I_FUSED) {
                if (!interp_poll(I)) return vm_stopped_at(I, in);
                if (X->fused(I, g, r, in)) return -1;
                vmbreak;
            }
            vmcase(I_EPILOGUE) {
                if (!interp_poll(I)) return vm_stopped_at(I, in);
                if (X->epilogue(I, g, r, in)) return -1;
                vmbreak;
            }
            default: return vm_fail_at(I, in, "internal error: unknown instruction");
        }
    }
    return 0;
}

int vm_run_range(Interp *I, Graph *g, VmRegs *r, int begin, int end) { return run(I, g, r, executor(g), begin, end, false); }

int vm_exec(Interp *I, Graph *g, VmRegs *r) {
    const VmExec *X = executor(g);
    for (int i = 0; i < g->nstacks; i++) r->stacks[i].n = 0;   /* an earlier run may have stopped half-way */
    if (X->begin && X->begin(I, g, r)) return -1;
    if (run(I, g, r, X, 0, g->ncode, true)) return -1;
    if (X->end) X->end(g, r);
    return 0;
}
