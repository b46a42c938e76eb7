/* exec_cpu.c - the CPU's executor (vm_impl.h's VmExec): what vm.c's loop asks of a graph
 * whose tensors live in host memory.
 *
 * Results go into the registers' reused buffers (the memory plan's slots, or a register's
 * own private tensor), so a warm graph allocates nothing; ops with given buffers call their
 * kernel straight away; a fused group runs block by block through ops/cpu/chain.h and a
 * matmul epilogue's steps run on each row block right after its BLAS call. Every kernel is
 * the one eager execution calls, so the bits are eager's. */
#include <pthread.h>
#include <math.h>
#include <string.h>
#include "vm_impl.h"
#include "vm_loop.h"
#include "mem.h"
#include "opt.h"
#include "pool.h"
#include "cpu/chain.h"
#include "cpu/cpu.h"
#include "jit.h"
#include "exec_cpu.h"

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
        if (!mine) vm_set_t(r, reg, tensor_retain(t));
    } else {
        t = tensor_new(g->regs[reg].dtype, &g->regs[reg].shape);
        if (!t) return NULL;
        tensor_release(r->slots[s]);
        r->slots[s] = tensor_retain(t);
        vm_set_t(r, reg, t);
    }
    r->slot_owner[s] = reg;
    return t;
}

static bool private_fit(const Tensor *t, const RegInfo *ri, const Tensor *in1, const Tensor *in2) {
    return t && t->rc == 1 && t->buf->rc == 1 && t != in1 && t != in2 && fits(t, ri);
}

static Tensor *dst_tensor(Graph *g, VmRegs *r, int reg, const Tensor *in1, const Tensor *in2) {
    if (g->regs[reg].slot >= 0) return slot_tensor(g, r, reg, g->regs[reg].slot, in1, in2);
    Tensor *t = r->ten[reg];
    RegInfo *ri = &g->regs[reg];
    if (private_fit(t, ri, in1, in2)) return t;
    if (private_fit(r->spare[reg], ri, in1, in2)) {   /* the buffer this register's value replaced last run */
        vm_set_t(r, reg, r->spare[reg]);
        r->spare[reg] = NULL;
        return r->ten[reg];
    }
    Tensor *n = tensor_new(ri->dtype, &ri->shape);
    if (n) vm_set_t(r, reg, n);
    return n;
}

Tensor *vm_cpu_dst(Graph *g, VmRegs *r, int reg) { return dst_tensor(g, r, reg, NULL, NULL); }

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
    JitFusedFn native;          /* the native tier's loop (jit.h), or NULL: the chain */
    const void *const *ptrs;    /* its operands (jit.h's p) */
} FusedJob;

/* At least `need` bytes of block scratch (mem_alloc may jump out: never leave a freed block). */
static void scratch_reserve(VmRegs *r, size_t need) {
    if (r->scratch->bytes >= need) return;
    mem_free(r->scratch->p);
    r->scratch->p = NULL;
    r->scratch->bytes = 0;
    r->scratch->p = mem_alloc(need);
    r->scratch->bytes = need;
}

void vm_cpu_scratch(VmRegs *r, size_t need) { scratch_reserve(r, need); }

/* Elements [part * FUSED_PART, (part + 1) * FUSED_PART) of the group, through every step. */
static int fused_part(void *ud, int64_t part, int slot) {
    FusedJob *j = ud;
    int64_t begin = part * FUSED_PART, end = begin + FUSED_PART;
    if (end > j->total) end = j->total;
    if (j->native) {
        if (cpu_chain_check(j->steps, j->nsteps, j->dt, begin, end)) return -1;
        return j->native(j->ptrs, begin, end, jit_api(j->dt));
    }
    return cpu_chain_run(j->steps, j->nsteps, j->dt, begin, end, j->temps + (size_t)slot * j->area);
}

/* A step's operand x (a step's temporary, an outside register -(r+1), or an epilogue's
 * product: *product) into *g: a row vector or a value per row of the group's shape gs
 * (opt_fused_layout) reads as one. */
static void fused_arg(VmRegs *r, int x, ChainArg *g, const Shape *gs, const ChainArg *product) {
    if (x == EPI_PRODUCT) {
        *g = *product;
        return;
    }
    const Tensor *t = x >= 0 ? NULL : r->ten[-x - 1];
    g->kind = x >= 0 ? CHAIN_TEMP : CHAIN_ARRAY;
    g->temp = x;
    g->data = t ? t->data : NULL;
    g->dtype = t ? t->dtype : DT_F32;
    g->n = t ? t->size : 0;   /* the chain checks both against its own */
    g->row = gs->ndim ? gs->d[gs->ndim - 1] : 1;
    if (!t || t->size == shape_count(gs)) return;
    Shape s;
    shape_of(t, &s);
    FusedLayout l = opt_fused_layout(&s, gs);
    if (l == FUSED_ROW) g->kind = CHAIN_ROW;
    if (l == FUSED_COL) g->kind = CHAIN_COL;
}

/* The group's steps over n elements as the chain runs them, into cs; a number operand is
 * converted into the tensors' dtype, as the kernel of a weak scalar converts it, into *num
 * (one per step). Planned (pairs, requests for the next block) only when there is more than
 * one block: for a tensor of a few elements in a loop (an RNN cell) planning would cost more
 * than it saves, and it changes no bits. */
static bool fused_chain(VmRegs *r, const Ins *in, const Shape *gs, DType dt, int64_t n, ChainStep *cs, double *num,
                        const ChainArg *product) {
    bool rows = false;
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
        fused_arg(r, st->a, &c->in[0], gs, product);
        if (st->scalar_reg < 0) {
            c->nin = st->b == FUSED_NONE ? 1 : 2;
            if (c->nin == 2) fused_arg(r, st->b, &c->in[1], gs, product);
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
    for (int k = 0; k < in->nsteps; k++)
        for (int q = 0; q < cs[k].nin; q++) rows |= cs[k].in[q].kind == CHAIN_ROW || cs[k].in[q].kind == CHAIN_COL;
    if (n > chain_block(dt)) cpu_chain_plan(cs, in->nsteps);
    return rows;
}

/* The operands of the chain's n steps as the native tier's loop takes them (jit.h), into p
 * (3n pointers). */
static const void *const *native_operands(const ChainStep *cs, int n, const void **p) {
    for (int k = 0; k < n; k++) {
        p[2 * k] = cs[k].in[0].data;
        p[2 * k + 1] = cs[k].nin == 2 ? cs[k].in[1].data : NULL;
        p[2 * n + k] = cs[k].out;
    }
    return p;
}

static int exec_fused(Interp *I, Graph *g, VmRegs *r, Ins *in) {
    if (opt_row_group(in)) return vm_cpu_rows(I, g, r, in);   /* reductions among its steps */
    RegInfo *d = &g->regs[in->dst];
    for (int k = 0; k < in->nsteps; k++)
        if (in->steps[k].dst < 0 && !dst_tensor(g, r, -in->steps[k].dst - 1, NULL, NULL)) return vm_fail_at(I, in, op_error());
    for (int k = 0; k < in->nsteps; k++) {
        FusedStep *st = &in->steps[k];
        int regs[2] = { st->a < 0 ? -st->a - 1 : -1, st->b < 0 && st->b != FUSED_NONE ? -st->b - 1 : -1 };
        for (int q = 0; q < 2; q++)
            if (regs[q] >= 0 && !r->ten[regs[q]]) return vm_fail_at(I, in, "undefined variable");
    }
    FusedJob j = { NULL, in->nsteps, d->dtype, shape_count(&d->shape), NULL, 0, NULL, NULL };
    int64_t parts = pool_parts(j.total, FUSED_PART);
    int width = pool_width(parts, j.total * in->nsteps);
    /* the scratch area: the steps, their numbers, the native tier's operands, then each
     * thread's temporaries, 64-byte aligned (an AVX-512 access that straddles two cache lines
     * costs two) */
    size_t head = (sizeof(ChainStep) + sizeof(double) + 3 * sizeof(void *)) * (size_t)in->nsteps;
    j.area = (size_t)in->nsteps * CHAIN_BYTES;
    size_t need = head + 63 + j.area * (size_t)width;
    scratch_reserve(r, need);
    ChainStep *cs = r->scratch->p;
    bool rows = fused_chain(r, in, &d->shape, j.dt, j.total, cs, (double *)(cs + in->nsteps), NULL);
    j.steps = cs;
    /* the native tier's loops read arrays, values and temporaries: a group with a row vector
     * or a value per row stays in the vm */
    j.native = rows ? NULL : jit_fused(I, in, cs, in->nsteps, j.dt);
    if (j.native) j.ptrs = native_operands(cs, in->nsteps, (const void **)((double *)(cs + in->nsteps) + in->nsteps));
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
            vm_set_t(r, reg, t);
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
    if ((op_info[op].flags & F_VIEW) && !in->rt) {
        /* reshape and its kin keep the elements in order: a copy into the register's buffer.
         * A view would be a new tensor every run, and would hold its operand's buffer, which
         * the next iteration of a loop then could not reuse. */
        Tensor *d = op_dst(g, r, in, 0, args, false), *src = (Tensor *)args[0].t;
        if (!d) return vm_fail_at(I, in, op_error());
        memcpy(d->data, src->data, (size_t)src->size * dtype_size(src->dtype));
        return 0;
    }
    /* results the kernel makes itself; or a run-time shape (Ins.rt): inferred, checked and
     * allocated by op_run, as eagerly */
    if (in->rt || !(op_mode[op] & VM_GIVEN)) {
        if (op_run(&call, out)) return vm_fail_at(I, in, op_error());
        for (int k = 0; k < in->nres; k++) vm_set_t(r, in->res[k], out[k]);
        return 0;
    }
    /* The compiler inferred every shape and dtype, and the guards hold them: with its
     * buffers given (owned by the registers), the call goes straight to the kernel. */
    for (int k = 0; k < in->nres; k++)
        if (!(out[k] = op_dst(g, r, in, k, args, op_mode[op] & VM_ELEMENTWISE))) return vm_fail_at(I, in, op_error());
    return op_kernel[op](&call, out) ? vm_fail_at(I, in, op_error()) : 0;
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
/* Rows a chunk of an [m, n] product has: all m when they are one block of one chunk (an RNN
 * cell, an MLP at batch 1: m <= EPI_CHUNK / n without the division, which an RNN step paid
 * three times), else epi_chunk_rows(n). */
static int64_t epi_rows(int64_t m, int64_t n) {
    return m <= MATMUL_BLOCK_ROWS && (m == 1 || m * n <= EPI_CHUNK) ? m : epi_chunk_rows(n);
}

/* One pool slot's scratch bytes, and the threads a block of `rows` rows uses for its steps
 * (work: its elements times the steps, as a fused group counts). */
static size_t epi_area(const Ins *in, int64_t chunk_rows, int64_t n, size_t esz) {
    return (size_t)in->nsteps * (size_t)(chunk_rows * n) * esz;
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

/* The native tier for an epilogue of one chunk (an RNN cell, an MLP at batch 1): its steps
 * over the product's len elements are a fused group's (the same ops: opt.c's epi_step_ok),
 * with the product and the registers as arrays and the scratch areas as temporaries, so
 * jit.c's loop runs them with the values in registers. NULL, and the VM's epi_part runs
 * them, when an operand is a row vector (broadcast row by row), the dtype is not f32/f64, the
 * steps are too many for cs, or the tier has no code for them (yet). The steps are built as
 * a chain only on the runs that count toward compiling; a warm one fills p (jit.h's
 * operands) straight from the registers, checked here as cpu_chain_check would. */
#define EPI_NATIVE_STEPS 16
static const void *epi_ptr(const EpiRun *e, int x) {
    return x == EPI_PRODUCT ? e->product : x >= 0 || x == FUSED_NONE ? NULL : e->r->ten[-x - 1]->data;
}
/* Whether operand x is not a register, or one of len elements of the epilogue's dtype. */
static inline bool epi_whole(const EpiRun *e, int x, int64_t len) {
    if (x >= 0 || x == EPI_PRODUCT || x == FUSED_NONE) return true;
    const Tensor *t = e->r->ten[-x - 1];
    return t->size == len && t->dtype == e->dt;
}
static JitFusedFn epi_native(Interp *I, const EpiRun *e, ChainStep *cs, double *num, const void **p) {
    Ins *in = e->in;
    int n = in->nsteps;
    int64_t len = e->m * e->n;
    bool ask;
    JitFusedFn fn = jit_ready(I, in, &ask);
    if ((!fn && !ask) || (e->dt != DT_F32 && e->dt != DT_F64) || n > EPI_NATIVE_STEPS) return NULL;
    /* one pass: each step's operands checked whole and laid out as fused_chain and
     * native_operands lay them out (the chain, when one is built below, reads no p) */
    for (int k = 0; k < n; k++) {
        const FusedStep *st = &in->steps[k];
        if (!epi_whole(e, st->a, len) || !epi_whole(e, st->b, len) || !epi_whole(e, st->dst, len)) return NULL;
        p[2 * k] = epi_ptr(e, st->a);
        p[2 * k + 1] = epi_ptr(e, st->b);
        p[2 * n + k] = epi_ptr(e, st->dst);
        if (st->scalar_reg < 0) continue;
        if (e->dt == DT_F32) *(float *)&num[k] = (float)e->r->num[st->scalar_reg];
        else num[k] = e->r->num[st->scalar_reg];
        if (st->num_left) p[2 * k + 1] = p[2 * k];
        p[2 * k + !st->num_left] = &num[k];
    }
    if (!fn) {
        ChainArg product = { CHAIN_ARRAY, -1, e->product, e->dt, len, 0 };
        Shape gs = { .ndim = 2, .d = { e->m, e->n } };   /* every operand is whole (epi_whole) */
        fused_chain(e->r, in, &gs, e->dt, len, cs, num, &product);   /* (num: the same numbers) */
        fn = jit_fused(I, in, cs, n, e->dt);
    }
    return fn;
}

/* Whether a step's operand x is an outside register (-(r+1)) that holds nothing. */
static inline bool epi_undefined(const VmRegs *r, int x) {
    return x < 0 && x != EPI_PRODUCT && x != FUSED_NONE && !r->ten[-x - 1];
}

/* The product in the row blocks op_matmul_t_into computes (cpu_matmul_rows), the steps run
 * on each block right after its BLAS call. The product goes into register c when something
 * else reads it, else into the destination's buffer, which the last step then overwrites. */
static int epilogue_run(Interp *I, Graph *g, VmRegs *r, Ins *in, const Tensor *A, const Tensor *B, int64_t chunk_rows) {
    RegInfo *d = &g->regs[in->dst];
    EpiRun e = { g, r, in, d->dtype, dtype_size(d->dtype), d->shape.d[0], d->shape.d[1], 1, NULL, NULL, 0, 0, 0 };
    _Static_assert((int)EPI_TRANS_A == (int)MM_TRANS_A && (int)EPI_TRANS_B == (int)MM_TRANS_B, "aux is the CPU's trans");
    int trans = in->aux;
    int64_t k = A->shape[trans & MM_TRANS_A ? 0 : 1];
    for (int q = 0; q < in->nsteps; q++)
        if (in->steps[q].dst < 0 && !dst_tensor(g, r, -in->steps[q].dst - 1, A, B)) return vm_fail_at(I, in, op_error());
    Tensor *prod = in->c >= 0 ? dst_tensor(g, r, in->c, A, B) : r->ten[in->dst];
    if (!prod) return vm_fail_at(I, in, op_error());
    for (int q = 0; q < in->nsteps; q++)
        if (epi_undefined(r, in->steps[q].a) || epi_undefined(r, in->steps[q].b)) return vm_fail_at(I, in, "undefined variable");
    e.product = prod->data;
    e.chunk_rows = chunk_rows;
    e.scratch = r->scratch->p;
    e.area = epi_area(in, chunk_rows, e.n, e.esz);
    if (e.m <= e.chunk_rows && e.m <= MATMUL_BLOCK_ROWS) {   /* one block of one chunk (an RNN cell, an MLP at batch 1): no pool */
        e.b_end = e.m;
        ChainStep cs[EPI_NATIVE_STEPS];
        double num[EPI_NATIVE_STEPS];
        const void *p[3 * EPI_NATIVE_STEPS];
        JitFusedFn native = epi_native(I, &e, cs, num, p);
        cpu_matmul_rows(e.dt, A->data, trans, B->data, e.product, e.m, k, e.n, 0, e.m);
        int rc = native ? native(p, 0, e.m * e.n, jit_api(e.dt)) : epi_part(&e, 0, 0);
        return rc ? vm_fail_at(I, in, op_error()) : 0;
    }
    for (e.b0 = 0; e.b0 < e.m; e.b0 += MATMUL_BLOCK_ROWS) {
        int64_t rows = e.m - e.b0 < MATMUL_BLOCK_ROWS ? e.m - e.b0 : MATMUL_BLOCK_ROWS;
        e.b_end = e.b0 + rows;
        cpu_matmul_rows(e.dt, A->data, trans, B->data, e.product + (size_t)(e.b0 * e.n) * e.esz, e.m, k, e.n, e.b0, rows);
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
    int64_t chunk_rows = epi_rows(m, n);
    size_t need = epi_area(in, chunk_rows, n, dtype_size(g->regs[in->dst].dtype)) *
                  (size_t)(m <= chunk_rows ? 1 : epi_width(in, most, n, chunk_rows));
    scratch_reserve(r, need);   /* before A and B are held: mem_alloc may jump out */
    /* held while the registers change: a destination register that held an operand (which a
     * loaded file may ask for) then gets a new buffer and the operand stays alive */
    tensor_retain(A);
    tensor_retain(B);
    int rc = epilogue_run(I, g, r, in, A, B, chunk_rows);
    tensor_release(A);
    tensor_release(B);
    return rc;
}

/* ---------- the small hooks ---------- */

static Tensor *cpu_index(Graph *g, VmRegs *r, Ins *in, Tensor *src, IndexItem *items, Tensor *setval) {
    if (setval) return op_index_set(src, items, in->nidx, setval);
    if (in->rt) return tensor_index(src, items, in->nidx, NULL, false);   /* its shape is the run's */
    Tensor *out = dst_tensor(g, r, in->dst, src, NULL);
    if (!out || op_index_into(src, items, in->nidx, out)) return NULL;
    return tensor_retain(out);
}

/* src[x] of a number x within src's first axis: that row copied into the register's buffer,
 * without the items, the index plan and the place the general path goes through. */
static int cpu_row(Graph *g, VmRegs *r, Ins *in, Tensor *src, double x) {
    int64_t i;
    if (src->ndim < 1 || !num_to_i64(x, &i)) return 0;
    if (i < 0) i += src->shape[0];   /* from the end, as eager's index */
    if (i < 0 || i >= src->shape[0]) return 0;
    Tensor *out = dst_tensor(g, r, in->dst, src, NULL);
    if (!out || out->dtype != src->dtype || out->size * src->shape[0] != src->size) return 0;
    size_t bytes = (size_t)out->size * dtype_size(src->dtype);
    memcpy(out->data, (const char *)src->data + (size_t)i * bytes, bytes);
    return 1;
}

static int cpu_scalar(Graph *g, VmRegs *r, int reg, DType dt, double x) {
    Tensor *t = dst_tensor(g, r, reg, NULL, NULL);
    if (!t) return -1;
    tensor_set(t, 0, dt == DT_I64 ? trunc(x) : x);
    return 0;
}

/* t may be the register's own tensor, written in place (cpu_index) */
static int cpu_place(Graph *g, VmRegs *r, int reg, Tensor *t) {
    if (t == r->ten[reg]) tensor_release(t);
    else vm_set_t(r, reg, t);
    return 0;
}

static int cpu_copy(Tensor *dst, const Tensor *src) {
    memcpy(dst->data, src->data, (size_t)src->size * dtype_size(src->dtype));
    return 0;
}

static Tensor *cpu_const(Graph *g, VmRegs *r, int k) { return tensor_retain((r->consts ? r->consts : g->consts)[k]); }

static int cpu_loop(Interp *I, Graph *g, VmRegs *r, int pc, int end, bool segments);

const VmExec vm_cpu_exec = {
    .place = cpu_place, .copy = cpu_copy, .konst = cpu_const, .scalar = cpu_scalar,
    .index = cpu_index, .row = cpu_row, .op = exec_op, .fused = exec_fused, .epilogue = exec_epilogue, .loop = cpu_loop,
};

/* The loop with this table's hooks known: direct calls, the small ones inlined (no segments). */
static int cpu_loop(Interp *I, Graph *g, VmRegs *r, int pc, int end, bool segments) {
    return vm_loop(I, g, r, &vm_cpu_exec, pc, end, false);
}
