/* vm.c - the static VM: a dispatch loop over a Graph's instructions.
 *
 * Tensor instructions call the very functions eager execution calls (ops/), so static
 * results are the eager results, bit for bit. Registers hold numbers or references to
 * tensors; a tensor register that is overwritten releases its old value. An instruction
 * that fails reports at its own source location, with the message eager would give. */
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "vm.h"
#include "vm_impl.h"
#include "mem.h"
#include "infer.h"
#include "opt.h"
#include "pool.h"
#include "cpu/chain.h"
#include "cpu/cpu.h"

#define vmdispatch(op) switch (op)
#define vmcase(l) case l:
#define vmbreak break

int vm_fail_at(Interp *I, Ins *in, const char *msg) {
    Source *saved = I->cur_src;
    I->cur_src = in->src;
    interp_error_at(I, in->loc, "%s", msg);
    I->cur_src = saved;
    graph_trace(I, in->frame);
    return -1;
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
static bool number_op_failed(const Ins *in, double a, double b, int n) {
    if (op_def((OpCode)in->aux)->dtype_rule != DR_INT) return false;
    OpArg args[2] = { op_arg_num(a, false), op_arg_num(b, false) };
    double r;
    return op_run_number((OpCode)in->aux, args, n, NULL, &r) == -2;
}

static void set_t(VmRegs *r, int reg, Tensor *t) {
    tensor_release(r->ten[reg]);
    r->ten[reg] = t;
}

/* The tensor an instruction writes its result into: the register's own tensor when nothing
 * else refers to it (so no other variable can see it change) and it has the register's dtype
 * and shape; otherwise a new one. In steady state a graph allocates nothing. */
static bool fits(const Tensor *t, const RegInfo *ri) {
    if (t->dtype != ri->dtype || t->ndim != ri->shape.ndim) return false;
    for (int k = 0; k < t->ndim; k++)   /* a loop, not memcmp: a call costs more for 1-2 dims */
        if (t->shape[k] != ri->shape.d[k]) return false;
    return true;
}

/* A register with a slot in the memory plan takes the slot's buffer; the register that held
 * it before is dead by then (liveness), so it lets go first. The buffer is reused when no
 * one else (a variable the program kept) holds it. */
static Tensor *slot_tensor(Graph *g, VmRegs *r, int reg, int s, const Tensor *in1, const Tensor *in2) {
    Tensor *t = r->slots[s];
    int owner = r->slot_owner[s];
    if (owner >= 0 && owner != reg && r->ten[owner] == t) {
        tensor_release(r->ten[owner]);
        r->ten[owner] = NULL;
    }
    int mine = r->ten[reg] == t ? 1 : 0;
    if (t && t->rc == 1 + mine && t->buf->rc == 1 && t != in1 && t != in2 && fits(t, &g->regs[reg])) {
        if (!mine) set_t(r, reg, tensor_retain(t));
    } else {
        t = tensor_new(g->regs[reg].dtype, &g->regs[reg].shape);
        if (!t) return NULL;
        tensor_release(r->slots[s]);
        r->slots[s] = tensor_retain(t);
        set_t(r, reg, t);
    }
    r->slot_owner[s] = reg;
    return t;
}

static bool private_fit(const Tensor *t, const RegInfo *ri, const Tensor *in1, const Tensor *in2) {
    return t && t->rc == 1 && t->buf->rc == 1 && t != in1 && t != in2 && fits(t, ri);
}

void vm_keep_spare(VmRegs *r, const Opnd *o, Value old) {
    if (o->kind != OPND_TENSOR || old.type != VAL_TENSOR || old.as.t == r->ten[o->reg]) {
        val_release(old);
        return;
    }
    tensor_release(r->spare[o->reg]);
    r->spare[o->reg] = old.as.t;
}

static Tensor *dst_tensor(Graph *g, VmRegs *r, int reg, const Tensor *in1, const Tensor *in2) {
    if (g->regs[reg].slot >= 0) return slot_tensor(g, r, reg, g->regs[reg].slot, in1, in2);
    Tensor *t = r->ten[reg];
    RegInfo *ri = &g->regs[reg];
    if (private_fit(t, ri, in1, in2)) return t;
    if (private_fit(r->spare[reg], ri, in1, in2)) {   /* the buffer this register's value replaced last run */
        set_t(r, reg, r->spare[reg]);
        r->spare[reg] = NULL;
        return r->ten[reg];
    }
    Tensor *n = tensor_new(ri->dtype, &ri->shape);
    if (n) set_t(r, reg, n);
    return n;
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
            return vm_stopped_at(I, in);
        }
    }
    sb_putn(&b, "\n", 1);
    bool ok = r->quiet || interp_write_out(I, b.s, b.len);
    sb_free(&b);
    if (ok) return 0;
    return vm_stopped_at(I, in);   /* the error is set: give it this print's location */
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

static Tensor *exec_index(Interp *I, Graph *g, VmRegs *r, Ins *in, Tensor *setval, int *failed) {
    IndexItem items[TSL_MAX_RANK + 8];
    if (in->nidx) memcpy(items, in->idx, sizeof(IndexItem) * (size_t)in->nidx);
    for (int k = 0; k < in->nidx; k++) {
        if (in->args[k] < 0) continue;
        if (items[k].kind == IDX_TENSOR) {
            if (!(items[k].t = r->ten[in->args[k]])) {
                *failed = vm_fail_at(I, in, "undefined variable");
                return NULL;
            }
            continue;
        }
        double x = r->num[in->args[k]];
        if (!num_to_i64(x, &items[k].i)) {
            char msg[96];
            snprintf(msg, sizeof msg, x == floor(x) ? "index %g is out of range" : "tensor index must be an integer, got %g", x);
            *failed = vm_fail_at(I, in, msg);
            return NULL;
        }
    }
    Tensor *src = r->ten[in->a];
    if (!src || (in->op == I_INDEX_SET && !setval)) {
        *failed = vm_fail_at(I, in, "undefined variable");
        return NULL;
    }
    if (setval) return op_index_set(src, items, in->nidx, setval);
    Tensor *out = dst_tensor(g, r, in->dst, src, NULL);
    if (!out || op_index_into(src, items, in->nidx, out)) {
        *failed = vm_fail_at(I, in, op_error());
        return NULL;
    }
    return tensor_retain(out);
}

/* A fused elementwise group, evaluated by ops/cpu/chain.h block by block (512 f32 or 256 f64
 * elements through every step while they are in L1): a step's result stays in the block's
 * temporaries, or goes to its register when something outside the group reads it. Each
 * element gets the bits its ops' kernels give it, whatever block it falls in.
 * Blocks are independent, so a large group splits them over the thread pool in parts of
 * FUSED_PART elements (a fixed partition: the bits of every thread count are the same), each
 * thread with its own temporaries. */
/* elements: whole blocks of either dtype, long runs of each array for one thread */
#define FUSED_PART POOL_BLOCK

typedef struct {
    const ChainStep *steps;
    int nsteps;
    DType dt;
    int64_t total;
    char *temps;   /* one area per slot, `area` bytes each */
    size_t area;
} FusedJob;

/* Elements [part * FUSED_PART, (part + 1) * FUSED_PART) of the group, through every step. */
static int fused_part(void *ud, int64_t part, int slot) {
    FusedJob *j = ud;
    int64_t begin = part * FUSED_PART, end = begin + FUSED_PART;
    if (end > j->total) end = j->total;
    return cpu_chain_run(j->steps, j->nsteps, j->dt, begin, end, j->temps + (size_t)slot * j->area);
}

/* A step's operand x (a step's temporary, or an outside register -(r+1)) into *g. */
static void fused_arg(VmRegs *r, int x, ChainArg *g) {
    const Tensor *t = x >= 0 ? NULL : r->ten[-x - 1];
    g->kind = x >= 0 ? CHAIN_TEMP : CHAIN_ARRAY;
    g->temp = x;
    g->data = t ? t->data : NULL;
    g->dtype = t ? t->dtype : DT_F32;
    g->n = t ? t->size : 0;   /* the chain checks both against its own */
}

/* The group's steps over n elements as the chain runs them, into cs; a number operand is
 * converted into the tensors' dtype, as the kernel of a weak scalar converts it, into *num
 * (one per step). Planned (pairs, requests for the next block) only when there is more than
 * one block: for a tensor of a few elements in a loop (an RNN cell) planning would cost more
 * than it saves, and it changes no bits. */
static void fused_chain(VmRegs *r, const Ins *in, DType dt, int64_t n, ChainStep *cs, double *num) {
    for (int k = 0; k < in->nsteps; k++) {
        const FusedStep *st = &in->steps[k];
        ChainStep *c = &cs[k];
        c->op = st->op;
        c->pair_next = c->fetch_next = false;
        c->temp = st->dst;   /* >= 0: a temporary; else the register's tensor */
        c->out = NULL;
        c->out_dtype = dt;
        c->out_n = 0;
        if (st->dst < 0) {
            const Tensor *o = r->ten[-st->dst - 1];
            c->temp = -1;
            c->out = o->data;
            c->out_dtype = o->dtype;
            c->out_n = o->size;
        }
        fused_arg(r, st->a, &c->in[0]);
        if (st->scalar_reg < 0) {
            c->nin = st->b == FUSED_NONE ? 1 : 2;
            if (c->nin == 2) fused_arg(r, st->b, &c->in[1]);
            continue;
        }
        c->nin = 2;
        if (dt == DT_F32) *(float *)&num[k] = (float)r->num[st->scalar_reg];
        else num[k] = r->num[st->scalar_reg];
        ChainArg *x = &c->in[st->num_left ? 0 : 1];
        if (st->num_left) c->in[1] = c->in[0];
        x->kind = CHAIN_SCALAR;
        x->temp = -1;
        x->data = &num[k];
        x->dtype = dt;
    }
    if (n > chain_block(dt)) cpu_chain_plan(cs, in->nsteps);
}

static int exec_fused(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    RegInfo *d = &g->regs[in->dst];
    for (int k = 0; k < in->nsteps; k++)
        if (in->steps[k].dst < 0 && !dst_tensor(g, r, -in->steps[k].dst - 1, NULL, NULL)) return vm_fail_at(I, in, op_error());
    for (int k = 0; k < in->nsteps; k++) {
        FusedStep *st = &in->steps[k];
        int regs[2] = { st->a < 0 ? -st->a - 1 : -1, st->b < 0 && st->b != FUSED_NONE ? -st->b - 1 : -1 };
        for (int q = 0; q < 2; q++)
            if (regs[q] >= 0 && !r->ten[regs[q]]) return vm_fail_at(I, in, "undefined variable");
    }
    FusedJob j = { NULL, in->nsteps, d->dtype, shape_count(&d->shape), NULL, 0 };
    int64_t parts = pool_parts(j.total, FUSED_PART);
    int width = pool_width(parts, j.total * in->nsteps);
    /* the scratch area: the steps, their numbers, then each thread's temporaries, 64-byte
     * aligned (an AVX-512 access that straddles two cache lines costs two) */
    size_t head = (sizeof(ChainStep) + sizeof(double)) * (size_t)in->nsteps;
    j.area = (size_t)in->nsteps * CHAIN_BYTES;
    size_t need = head + 63 + j.area * (size_t)width;
    if (r->scratch->bytes < need) {
        mem_free(r->scratch->p);
        r->scratch->p = NULL;   /* mem_alloc may jump out: never leave a freed block here */
        r->scratch->bytes = 0;
        r->scratch->p = mem_alloc(need);
        r->scratch->bytes = need;
    }
    ChainStep *cs = r->scratch->p;
    fused_chain(r, in, j.dt, j.total, cs, (double *)(cs + in->nsteps));
    j.steps = cs;
    uintptr_t temps = (uintptr_t)((char *)r->scratch->p + head);
    j.temps = (char *)((temps + 63) & ~(uintptr_t)63);
    if (pool_run(parts, width, fused_part, &j)) return vm_fail_at(I, in, op_error());
    return 0;
}

/* An op of the table: operands from registers (number registers are weak scalars), results
 * into the registers' reused buffers, so a warm graph allocates nothing for ops whose kernel
 * writes into a given buffer. Operands are read before a destination is chosen: an
 * elementwise result may take the buffer of an operand that dies here (the slot keeps it). */
static int run_op(Interp *I, Graph *g, VmRegs *r, Ins *in, OpArg *args);

static int exec_op(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    OpArg few[4];   /* most ops have up to 4 operands; concat/stack may have many */
    OpArg *args = in->nargs <= 4 ? few : mem_alloc(sizeof(OpArg) * (size_t)in->nargs);
    int rc = run_op(I, g, r, in, args);
    if (args != few) mem_free(args);
    return rc;
}

/* What the VM needs to know of an op, once: whether it writes into the buffers it is given
 * (else it makes its results), and whether it may write over an operand (elementwise). */
enum { VM_GIVEN = 1, VM_ELEMENTWISE = 2 };
static const DeviceImpl *cpu;
static uint8_t op_mode[OP__COUNT];
static OpKernelFn op_kernel[OP__COUNT];

/* Filled once per process (pthread_once), read-only afterwards: shared by every state. */
static void op_modes_build(void) {
    cpu = op_device(DEV_CPU);   /* static graphs run on the CPU */
    for (int op = 0; op < OP__COUNT; op++) {
        const OpDef *d = op_def((OpCode)op);
        bool makes = (d->flags & (F_VIEW | F_DYNAMIC)) || (cpu->allocates && cpu->allocates((OpCode)op));
        bool ew = d->kind == K_UNARY || d->kind == K_BINARY || d->kind == K_COMPARE;
        op_mode[op] = (uint8_t)((makes ? 0 : VM_GIVEN) | (ew ? VM_ELEMENTWISE : 0));
        op_kernel[op] = cpu->kernel((OpCode)op);
    }
}

/* The destination of result k: the register's reused buffer. Only an elementwise kernel may
 * write over an operand, so for other ops a buffer that is an operand is replaced. */
static Tensor *op_dst(Graph *g, VmRegs *r, Ins *in, int k, const OpArg *args, bool elementwise) {
    int reg = in->res[k];
    if (elementwise) return dst_tensor(g, r, reg, NULL, NULL);
    Tensor *t = dst_tensor(g, r, reg, in->nargs > 0 ? args[0].t : NULL, in->nargs > 1 ? args[1].t : NULL);
    for (int j = 2; t && j < in->nargs; j++)
        if (args[j].t == t) {
            if (!(t = tensor_new(g->regs[reg].dtype, &g->regs[reg].shape))) return NULL;
            set_t(r, reg, t);
        }
    return t;
}

static int run_op(Interp *I, Graph *g, VmRegs *r, Ins *in, OpArg *args) {
    OpCode op = (OpCode)in->aux;
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, op_modes_build);
    for (int k = 0; k < in->nargs; k++) {
        int reg = in->args[k];
        OpArg *a = &args[k];
        if (reg < 0) {
            a->kind = ARG_NONE;
        } else if (g->regs[reg].kind == R_NUM) {
            *a = op_arg_num(r->num[reg], g->regs[reg].is_bool);
        } else {
            const Tensor *t = r->ten[reg];
            if (!t) return vm_fail_at(I, in, "undefined variable");
            a->kind = ARG_TENSOR;   /* field by field: this runs for every operand of every op */
            a->t = t;
            a->dtype = (uint8_t)t->dtype;
            a->ndim = (uint8_t)t->ndim;
            a->dims = t->shape;
        }
    }
    OpCall call = { op, in->nargs, args, in->attrs };
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    if (op_info[op].flags & F_VIEW) {
        /* reshape and its kin keep the elements in order: a copy into the register's buffer.
         * A view would be a new tensor every run, and would hold its operand's buffer, which
         * the next iteration of a loop then could not reuse. */
        Tensor *d = op_dst(g, r, in, 0, args, false), *src = (Tensor *)args[0].t;
        if (!d) return vm_fail_at(I, in, op_error());
        memcpy(d->data, src->data, (size_t)src->size * dtype_size(src->dtype));
        return 0;
    }
    if (!(op_mode[op] & VM_GIVEN)) {   /* results the kernel makes itself */
        if (op_run(&call, out)) return vm_fail_at(I, in, op_error());
        for (int k = 0; k < in->nres; k++) set_t(r, in->res[k], out[k]);
        return 0;
    }
    /* The compiler inferred every shape and dtype, and the guards hold them: with its
     * buffers given (owned by the registers), the call goes straight to the kernel. */
    for (int k = 0; k < in->nres; k++)
        if (!(out[k] = op_dst(g, r, in, k, args, op_mode[op] & VM_ELEMENTWISE))) return vm_fail_at(I, in, op_error());
    return op_kernel[op](&call, out) ? vm_fail_at(I, in, op_error()) : 0;
}

/* A private tensor of t's dtype and shape holding a copy of t, reusing *slot's buffer. */
static bool copy_into(Tensor **slot, const Tensor *t) {
    Tensor *d = *slot;
    if (d && d->rc == 1 && d->buf->rc == 1 && d->dtype == t->dtype && d->ndim == t->ndim &&
        !memcmp(d->shape, t->shape, sizeof(int64_t) * (size_t)t->ndim)) {
        memcpy(d->data, t->data, (size_t)t->size * dtype_size(t->dtype));
        return true;
    }
    Tensor *c = tensor_copy(t);
    if (!c) return false;
    tensor_release(d);
    *slot = c;
    return true;
}

/* What one entry of a PUSH stack costs toward --max-memory: its two array slots and the
 * header of the tensor it keeps (the tensor's data counts as a tensor). */
#define STACK_ENTRY_BYTES ((int64_t)(sizeof(Tensor *) + sizeof(double)) + TENSOR_KEEP_BYTES)

int vm_stack_reserve(VmStack *s) {
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

static int exec_push(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (vm_stack_reserve(s)) return vm_fail_at(I, in, op_error());
    if (g->regs[in->a].kind == R_NUM) s->x[s->n] = r->num[in->a];
    else if (r->ten[in->a] && !copy_into(&s->t[s->n], r->ten[in->a])) return vm_fail_at(I, in, op_error());
    /* (an empty register: a value of a branch side this iteration did not take, which its
     * backward, taking the same side, never reads) */
    s->n++;
    return 0;
}

static int exec_pop(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (s->n == 0) return vm_fail_at(I, in, "internal error: a backward loop popped more values than its loop saved");
    s->n--;
    if (g->regs[in->dst].kind == R_NUM) {
        r->num[in->dst] = s->x[s->n];
        return 0;
    }
    Tensor *t = s->t[s->n];
    if (!t) return 0;   /* nothing was ever saved here: a side not taken (see exec_push) */
    if (t->rc == 1 && t->buf->rc == 1) {   /* hand the value over; the stack keeps the old buffer */
        s->t[s->n] = r->ten[in->dst];
        r->ten[in->dst] = t;
        return 0;
    }
    if (!copy_into(&r->ten[in->dst], t)) return vm_fail_at(I, in, op_error());
    return 0;
}

/* ---------- matmul epilogues ---------- */

/* An EPILOGUE's steps run over EPI_CHUNK elements (whole rows) of a product block at a time,
 * so the block, read once from cache after its BLAS call, and the steps' results stay close:
 * 4 KB of f32 per step. */
#define EPI_CHUNK 1024

typedef struct {
    Graph *g;
    VmRegs *r;
    Ins *in;
    DType dt;
    size_t esz;
    int64_t m, n, chunk_rows;
    char *product;   /* the whole product's buffer (row r at r * n) */
    char *scratch;   /* per pool slot, `area` bytes: nsteps areas of chunk_rows * n elements */
    size_t area;
    int64_t b0, b_end;   /* the block whose steps run: rows [b0, b_end) */
} EpiRun;

static int64_t epi_chunk_rows(int64_t n) { return n >= EPI_CHUNK ? 1 : EPI_CHUNK / n; }

/* One pool slot's scratch bytes, and the threads a block of `rows` rows uses for its steps
 * (work: its elements times the steps, as a fused group counts). */
static size_t epi_area(const Ins *in, int64_t n, size_t esz) {
    return (size_t)in->nsteps * (size_t)(epi_chunk_rows(n) * n) * esz;
}
static int epi_width(const Ins *in, int64_t rows, int64_t n, int64_t chunk_rows) {
    return pool_width(pool_parts(rows, chunk_rows), rows * n * in->nsteps);
}

/* Where a step's operand x is for rows [r0, r0 + rows): *row set when it is a row vector that
 * every row reads. */
static const char *epi_operand(const EpiRun *e, char *scratch, int x, int64_t r0, bool *row) {
    *row = false;
    if (x == EPI_PRODUCT) return e->product + (size_t)(r0 * e->n) * e->esz;
    if (x >= 0) return scratch + (size_t)x * (size_t)(e->chunk_rows * e->n) * e->esz;
    const Tensor *t = e->r->ten[-x - 1];
    if (t->size == e->m * e->n) return (const char *)t->data + (size_t)(r0 * e->n) * e->esz;
    *row = true;
    return t->data;
}

/* The steps over chunk `part` of the block: rows [r0, r0 + rows), rows <= chunk_rows, with
 * the scratch area of pool slot `slot`. Chunks are independent, so a large block's go to the
 * thread pool (a fixed partition: the same bits for every thread count). */
static int epi_part(void *ud, int64_t part, int slot) {
    const EpiRun *e = ud;
    char *scratch = e->scratch + (size_t)slot * e->area;
    int64_t n = e->n, r0 = e->b0 + part * e->chunk_rows;
    int64_t rows = e->b_end - r0 < e->chunk_rows ? e->b_end - r0 : e->chunk_rows, len = rows * n;
    for (int k = 0; k < e->in->nsteps; k++) {
        const FusedStep *st = &e->in->steps[k];
        bool row_a, row_b = false, row_out;
        char *out = (char *)epi_operand(e, scratch, st->dst, r0, &row_out);   /* never a row vector (verified) */
        const char *pa = epi_operand(e, scratch, st->a, r0, &row_a), *pb = NULL;
        int rc = 0;
        if (st->scalar_reg >= 0) {
            /* the number in the tensor's dtype, as the kernel of a weak scalar makes it */
            float xf = (float)e->r->num[st->scalar_reg];
            double xd = e->r->num[st->scalar_reg];
            const void *px = e->dt == DT_F32 ? (const void *)&xf : (const void *)&xd;
            rc = st->num_left ? cpu_binary(st->op, e->dt, px, 0, pa, 1, out, len) : cpu_binary(st->op, e->dt, pa, 1, px, 0, out, len);
        } else if (st->b == FUSED_NONE) {
            rc = cpu_unary(st->op, e->dt, pa, out, len);
        } else if (pb = epi_operand(e, scratch, st->b, r0, &row_b), !row_a && !row_b) {
            rc = cpu_binary(st->op, e->dt, pa, 1, pb, 1, out, len);
        } else {   /* a bias: row by row, as eager's broadcast does */
            size_t step = (size_t)n * e->esz;
            for (int64_t q = 0; q < rows && rc == 0; q++)
                rc = cpu_binary(st->op, e->dt, pa + (row_a ? 0 : q * step), 1, pb + (row_b ? 0 : q * step), 1,
                                out + q * step, n);
        }
        if (rc) return rc;
    }
    return 0;
}

/* The product in the row blocks op_matmul_t_into computes (cpu_matmul_rows), the steps run
 * on each block right after its BLAS call. The product goes into register c when something
 * else reads it, else into the destination's buffer, which the last step then overwrites. */
static int epilogue_run(Interp *I, Graph *g, VmRegs *r, Ins *in, const Tensor *A, const Tensor *B) {
    RegInfo *d = &g->regs[in->dst];
    EpiRun e = { g, r, in, d->dtype, dtype_size(d->dtype), d->shape.d[0], d->shape.d[1], 1, NULL, NULL, 0, 0, 0 };
    bool ta = in->aux != 0;
    int64_t k = A->shape[ta ? 0 : 1];
    for (int q = 0; q < in->nsteps; q++)
        if (in->steps[q].dst < 0 && !dst_tensor(g, r, -in->steps[q].dst - 1, A, B)) return vm_fail_at(I, in, op_error());
    Tensor *prod = in->c >= 0 ? dst_tensor(g, r, in->c, A, B) : r->ten[in->dst];
    if (!prod) return vm_fail_at(I, in, op_error());
    for (int q = 0; q < in->nsteps; q++) {
        const FusedStep *st = &in->steps[q];
        int regs[2] = { st->a < 0 && st->a != EPI_PRODUCT ? -st->a - 1 : -1,
                        st->b < 0 && st->b != FUSED_NONE && st->b != EPI_PRODUCT ? -st->b - 1 : -1 };
        for (int x = 0; x < 2; x++)
            if (regs[x] >= 0 && !r->ten[regs[x]]) return vm_fail_at(I, in, "undefined variable");
    }
    e.product = prod->data;
    e.chunk_rows = epi_chunk_rows(e.n);
    e.scratch = r->scratch->p;
    e.area = epi_area(in, e.n, e.esz);
    if (e.m <= e.chunk_rows && e.m <= MATMUL_BLOCK_ROWS) {   /* one block of one chunk (an RNN cell, an MLP at batch 1): no pool */
        e.b_end = e.m;
        cpu_matmul_rows(e.dt, A->data, ta, B->data, e.product, e.m, k, e.n, 0, e.m);
        return epi_part(&e, 0, 0) ? vm_fail_at(I, in, op_error()) : 0;
    }
    for (e.b0 = 0; e.b0 < e.m; e.b0 += MATMUL_BLOCK_ROWS) {
        int64_t rows = e.m - e.b0 < MATMUL_BLOCK_ROWS ? e.m - e.b0 : MATMUL_BLOCK_ROWS;
        e.b_end = e.b0 + rows;
        cpu_matmul_rows(e.dt, A->data, ta, B->data, e.product + (size_t)(e.b0 * e.n) * e.esz, e.m, k, e.n, e.b0, rows);
        int64_t parts = pool_parts(rows, e.chunk_rows);
        if (pool_run(parts, epi_width(in, rows, e.n, e.chunk_rows), epi_part, &e)) return vm_fail_at(I, in, op_error());
    }
    return 0;
}

static int exec_epilogue(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    Tensor *A = r->ten[in->a], *B = r->ten[in->b];
    if (!A || !B) return vm_fail_at(I, in, "undefined variable");
    int64_t m = g->regs[in->dst].shape.d[0], n = g->regs[in->dst].shape.d[1];
    int64_t most = m < MATMUL_BLOCK_ROWS ? m : MATMUL_BLOCK_ROWS;   /* a block's rows, at most */
    int64_t chunk_rows = epi_chunk_rows(n);
    size_t need = epi_area(in, n, dtype_size(g->regs[in->dst].dtype)) *
                  (size_t)(m <= chunk_rows ? 1 : epi_width(in, most, n, chunk_rows));
    if (r->scratch->bytes < need) {   /* before A and B are held: mem_alloc may jump out */
        mem_free(r->scratch->p);
        r->scratch->p = NULL;   /* never leave a freed block here */
        r->scratch->bytes = 0;
        r->scratch->p = mem_alloc(need);
        r->scratch->bytes = need;
    }
    /* held while the registers change: a destination register that held an operand (which a
     * loaded file may ask for) then gets a new buffer and the operand stays alive */
    tensor_retain(A);
    tensor_retain(B);
    int rc = epilogue_run(I, g, r, in, A, B);
    tensor_release(A);
    tensor_release(B);
    return rc;
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

int vm_exec(Interp *I, Graph *g, VmRegs *r) {
    if (g->device_vm) return vm_exec_gpu(I, g, r);   /* device memory: vm_gpu.c */
    double *N = r->num;
    Tensor **T = r->ten;
    Ins *code = g->code;
    int pc = 0, n = g->ncode;
    for (int i = 0; i < g->nstacks; i++) r->stacks[i].n = 0;   /* an earlier run may have stopped half-way */
    while (pc < n) {
        Ins *in = &code[pc++];
        Tensor *t = NULL;
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
            vmcase(I_TCONST) set_t(r, in->dst, tensor_retain((r->consts ? r->consts : g->consts)[in->aux])); vmbreak;
            vmcase(I_SCALAR) {
                double x = N[in->a];
                if (in->aux == DT_I64 && !double_fits_i64(x))   /* as astype: never a wrapped integer */
                    return vm_fail_at(I, in, isnan(x) ? "cannot convert nan to i64"
                                          : isinf(x) ? (x > 0 ? "cannot convert inf to i64" : "cannot convert -inf to i64")
                                                     : "cannot convert an out-of-range value to i64");
                if (!(t = dst_tensor(g, r, in->dst, NULL, NULL))) return vm_fail_at(I, in, op_error());
                tensor_set(t, 0, in->aux == DT_I64 ? trunc(x) : x);
                vmbreak;
            }
            vmcase(I_TMOVE) {
                Tensor *src = T[in->a], *home = T[in->dst];
                if (!src) return vm_fail_at(I, in, "undefined variable");
                /* copy into the home's own buffer when it is private, so the source register
                 * keeps its buffer for the next iteration; otherwise share the tensor */
                if (home && home != src && home->rc == 1 && home->buf->rc == 1 && home->dtype == src->dtype &&
                    home->size == src->size && home->ndim == src->ndim &&
                    !memcmp(home->shape, src->shape, sizeof(int64_t) * (size_t)src->ndim))
                    memcpy(home->data, src->data, (size_t)src->size * dtype_size(src->dtype));
                else
                    set_t(r, in->dst, tensor_retain(src));
                vmbreak;
            }
            vmcase(I_OP) {
                /* before each kernel: a run of slow ops without a loop stops too */
                if (!interp_poll(I)) return vm_stopped_at(I, in);
                if (exec_op(I, g, r, in)) return -1;
                vmbreak;
            }
            vmcase(I_INDEX) {
                int failed = 0;
                t = exec_index(I, g, r, in, NULL, &failed);
                if (failed) return -1;
                goto tensor_out;
            }
            vmcase(I_INDEX_SET) {
                int failed = 0;
                t = exec_index(I, g, r, in, T[in->b], &failed);
                if (failed) return -1;
                goto tensor_out;
            }
            vmcase(I_SEED) rng_seed((uint64_t)(int64_t)in->imm); vmbreak;
            vmcase(I_ITEM) {
                if (!T[in->a]) return vm_fail_at(I, in, "undefined variable");
                N[in->dst] = tensor_get(T[in->a], 0);
                vmbreak;
            }
            vmcase(I_TRUTH) {
                Tensor *x = T[in->a];
                if (!x) return vm_fail_at(I, in, "undefined variable");
                if (x->size != 1) {
                    char msg[128];
                    snprintf(msg, sizeof msg, "ambiguous truth value of a tensor with %lld elements; use any/all",
                             (long long)x->size);
                    return vm_fail_at(I, in, msg);
                }
                N[in->dst] = tensor_get(x, 0) != 0;
                vmbreak;
            }
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
            vmcase(I_PUSH) if (exec_push(I, g, r, in)) return -1; vmbreak;
            vmcase(I_POP) if (exec_pop(I, g, r, in)) return -1; vmbreak;
            vmcase(I_ASSERT) if (exec_assert(I, g, r, in)) return -1; vmbreak;
            vmcase(I_STORE) if (exec_store(I, g, r, in)) return -1; vmbreak;
            vmcase(I_FUSED) {
                if (!interp_poll(I)) return vm_stopped_at(I, in);
                if (exec_fused(I, g, r, in)) return -1;
                vmbreak;
            }
            vmcase(I_EPILOGUE) {
                if (!interp_poll(I)) return vm_stopped_at(I, in);
                if (exec_epilogue(I, g, r, in)) return -1;
                vmbreak;
            }
            default: return vm_fail_at(I, in, "internal error: unknown instruction");
        }
        continue;
    tensor_out:
        if (!t) return vm_fail_at(I, in, op_error());
        if (t == r->ten[in->dst]) tensor_release(t);   /* written in place (exec_index) */
        else set_t(r, in->dst, t);
    }
    return 0;
}

/* ---------- shared with vm_gpu.c (vm_impl.h) ---------- */

int vm_number_ins(Interp *I, VmRegs *r, Ins *in) {
    double *N = r->num, x;
    switch (in->op) {
    case I_NBIN:
        x = op_binary_number((OpCode)in->aux, N[in->a], N[in->b]);
        if (x != x && number_op_failed(in, N[in->a], N[in->b], 2)) return vm_fail_at(I, in, op_error());
        N[in->dst] = x;
        return 0;
    case I_NNEG: N[in->dst] = -N[in->a]; return 0;
    case I_NNOT: N[in->dst] = N[in->a] == 0; return 0;
    default:   /* I_NMATH */
        if (in->imm != 0) {
            cpu_round_decimals(DT_F64, &N[in->a], &N[in->dst], 1, (int64_t)in->imm);
            return 0;
        }
        x = op_unary_number((OpCode)in->aux, N[in->a]);
        if (x != x && number_op_failed(in, N[in->a], 0, 1)) return vm_fail_at(I, in, op_error());
        N[in->dst] = x;
        return 0;
    }
}

int vm_host_ins(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    if (in->op == I_PRINT) return exec_print(I, g, r, in);
    return in->op == I_ASSERT ? exec_assert(I, g, r, in) : exec_store(I, g, r, in);
}
