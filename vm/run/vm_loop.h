/* vm_loop.h - the VM's one interpreter loop (vm_loop) and the instructions it runs through
 * an executor's hooks (vm_impl.h's VmExec).
 *
 * The loop runs control flow, numbers, prints, asserts, stores, the PUSH/POP stacks, the
 * host's reads (item, a branch on a tensor) and host values (strings, pushes) itself, the same for every device, and hands
 * what depends on where tensors live to the executor X. It is an inline function so that a
 * file instantiates it for an executor: vm.c once for any executor through its table (the
 * device executor's), exec_cpu.c for the CPU's (VmExec.loop), whose hooks the compiler then
 * calls directly, so the CPU's hot loop pays nothing for being shared. Included by those
 * two files only. */
#ifndef TSL_VM_LOOP_H
#define TSL_VM_LOOP_H
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "vm_impl.h"
#include "infer.h"
#include "ew_cpu.h"

/* A number op: a loop counter's + and < (and the other arithmetic and comparisons) inline,
 * with the very functions op_binary_number calls (ew_cpu.h), any other through it. */
static inline double vm_nbin(OpCode op, double x, double y) {
    switch (op) {
    case OP_ADD: return ew_add_n(x, y);
    case OP_SUB: return ew_sub_n(x, y);
    case OP_MUL: return ew_mul_n(x, y);
    case OP_LT: return ew_lt_n(x, y);
    case OP_LE: return ew_le_n(x, y);
    case OP_GT: return ew_gt_n(x, y);
    case OP_GE: return ew_ge_n(x, y);
    case OP_EQ: return ew_eq_n(x, y);
    case OP_NE: return ew_ne_n(x, y);
    default: return op_binary_number(op, x, y);
    }
}

#define vmdispatch(op) switch (op)
#define vmcase(l) case l:
#define vmbreak break

/* A slice whose start is the run's number x (vm/compile/cslice.c): the template's bounds
 * move to it, keeping their difference. False when x is not an integer (or the stop
 * overflows, which only a graph file can ask for). */
static bool slice_at(IndexItem *it, double x) {
    int64_t s, size;
    if (!num_to_i64(x, &s) || __builtin_sub_overflow(it->stop, it->start, &size) ||
        __builtin_add_overflow(s, size, &it->stop))
        return false;
    it->start = s;
    return true;
}

/* Whether an index whose slices start at run time gives its register's shape: the compiler
 * proved they never clamp, a graph file did not. */
static bool slices_fit(const Graph *g, const Ins *in, const Tensor *src, const IndexItem *items) {
    Shape s, so;
    shape_of(src, &s);
    const Shape *want = &g->regs[in->dst].shape;
    if (infer_index(&s, items, in->nidx, &so) != 0 || so.ndim != want->ndim) return false;
    for (int a = 0; a < so.ndim; a++)   /* a run-time dim (another slice's, cshape.c) takes any size */
        if (want->d[a] != SHAPE_RT && so.d[a] != want->d[a]) return false;
    return true;
}

/* Slice item k's bounds computed at run time (args[nidx + 2k], args[nidx + 2k + 1]: start and
 * stop registers, -1 when fixed; vm/compile/cshape.c), made integers as eager code makes them.
 * -1 with the message in op_error(). */
static int slice_bounds(const Ins *in, const double *N, int k, IndexItem *it) {
    for (int j = 0; j < 2; j++) {
        int reg = in->args[in->nidx + 2 * k + j];
        int64_t x;
        if (reg < 0) continue;
        if (!num_to_i64_clamped(N[reg], &x)) {
            op_failk(ERRK_TYPE, "slice bounds must be integers");
            return -1;
        }
        if (j == 0) { it->has_start = true; it->start = x; }
        else { it->has_stop = true; it->stop = x; }
    }
    return 0;
}

/* An index instruction: its number operands checked into items, then the executor's. */
static int exec_index(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    /* a row by a loop counter: no items to fill in (the executor's row hook) */
    if (X->row && in->op == I_INDEX && in->nidx == 1 && in->nargs == 1 && in->args[0] >= 0 &&
        in->idx[0].kind == IDX_INT && !in->rt && r->ten[in->a] && X->row(g, r, in, r->ten[in->a], r->num[in->args[0]]))
        return 0;
    IndexItem items[TSL_MAX_RANK + 8];
    bool moved = false;   /* a slice starts at a run-time number */
    if (in->nidx) memcpy(items, in->idx, sizeof(IndexItem) * (size_t)in->nidx);
    for (int k = 0; k < in->nidx; k++) {
        if (in->nargs > in->nidx && items[k].kind == IDX_SLICE && slice_bounds(in, r->num, k, &items[k]))
            return vm_fail_at(I, in, op_error());
        if (in->args[k] < 0) continue;
        if (items[k].kind == IDX_TENSOR) {
            if (!(items[k].t = r->ten[in->args[k]])) return vm_fail_at(I, in, "undefined variable");
            continue;
        }
        double x = r->num[in->args[k]];
        if (items[k].kind == IDX_SLICE) {
            if (!slice_at(&items[k], x)) return vm_fail_atk(I, in, ERRK_TYPE, "slice bounds must be integers");
            moved = true;
            continue;
        }
        if (!num_to_i64(x, &items[k].i)) {
            char msg[96];
            snprintf(msg, sizeof msg, x == floor(x) ? "index %g is out of range" : "tensor index must be an integer, got %g", x);
            return vm_fail_at(I, in, msg);
        }
    }
    Tensor *src = r->ten[in->a], *v = in->op == I_INDEX_SET ? r->ten[in->b] : NULL;
    if (!src || (in->op == I_INDEX_SET && !v)) return vm_fail_at(I, in, "undefined variable");
    /* (an assignment's result is its operand's shape whatever the slice: eager's, clamped) */
    if (moved && in->op == I_INDEX && !slices_fit(g, in, src, items))
        return vm_fail_at(I, in, "a slice with a run-time start clamps: the graph's register has a fixed shape");
    Tensor *t = X->index(g, r, in, src, items, v);
    return !t || X->place(g, r, in->dst, t) ? vm_fail_at(I, in, op_error()) : 0;
}

/* Whether d is nobody else's and has t's dtype, shape and device. */
static inline bool private_like(const Tensor *d, const Tensor *t) {
    if (d->rc != 1 || d->buf->rc != 1 || d->dtype != t->dtype || d->device != t->device || d->ndim != t->ndim) return false;
    for (int k = 0; k < t->ndim; k++)   /* a loop, not memcmp: a call costs more for 1-2 dims */
        if (d->shape[k] != t->shape[k]) return false;
    return true;
}

/* A register := another's value: a copy into the destination's own buffer when it is
 * private, so the source keeps its buffer for the next iteration; otherwise the executor
 * places it (shared on the CPU, copied into the arena's region on a device). */
static inline __attribute__((always_inline)) int exec_tmove_from(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in, int from) {
    Tensor *src = r->ten[from], *home = r->ten[in->dst];
    if (!src) return vm_fail_at(I, in, "undefined variable");
    int rc = home && home != src && private_like(home, src) ? X->copy(home, src) : X->place(g, r, in->dst, tensor_retain(src));
    return rc ? vm_fail_at(I, in, op_error()) : 0;
}

static int exec_tmove(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) { return exec_tmove_from(I, g, r, X, in, in->a); }

/* xs[i] of a list of registers (args), i read at run time: eager's list index rules and
 * messages (norm_index in lang/interp.c), then a move of the chosen register. */
static int exec_select(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    double x = r->num[in->a];
    int64_t i;
    if (isnan(x) || x != floor(x)) {
        char msg[96];
        snprintf(msg, sizeof msg, "list index must be an integer, got %g", x);
        return vm_fail_at(I, in, msg);
    }
    if (!num_to_i64(x, &i) || (i < 0 ? i + in->nargs < 0 : i >= in->nargs)) return vm_fail_atk(I, in, ERRK_INDEX, "list index out of range");
    int from = in->args[i < 0 ? i + in->nargs : i];
    if (g->regs[in->dst].kind == R_NUM) {
        r->num[in->dst] = r->num[from];
        return 0;
    }
    return exec_tmove_from(I, g, r, X, in, from);
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

static int exec_push(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (vm_stack_reserve(s)) return vm_fail_at(I, in, op_error());
    if (g->regs[in->a].kind == R_NUM) s->x[s->n] = r->num[in->a];
    else if (r->ten[in->a] && !copy_into(X, &s->t[s->n], r->ten[in->a])) return vm_fail_at(I, in, op_error());
    /* (an empty register: a value of a branch side this iteration did not take, which its
     * backward, taking the same side, never reads) */
    s->n++;
    return 0;
}

/* The value is handed over to the register (the executor places it: on a device with an
 * arena, copied into its region); the stack keeps the register's old value, whose buffer the
 * next push reuses when nothing else holds it. */
static int exec_pop(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    VmStack *s = &r->stacks[in->aux];
    if (s->n == 0) return vm_fail_at(I, in, "internal error: a backward loop popped more values than its loop saved");
    s->n--;
    if (g->regs[in->dst].kind == R_NUM) {
        r->num[in->dst] = s->x[s->n];
        return 0;
    }
    Tensor *t = s->t[s->n];
    if (!t) return 0;   /* nothing was ever saved here: a side not taken (see exec_push) */
    s->t[s->n] = r->ten[in->dst];
    r->ten[in->dst] = NULL;
    return X->place(g, r, in->dst, t) ? vm_fail_at(I, in, op_error()) : 0;
}

/* Row N[a] of the buffer in register dst := T[b] (a push onto a tensor list, carray.c): in
 * place, into a copy first when another value holds the buffer (the register's own arena
 * region, held by the arena and the register only, is its own). The compiler keeps the row
 * in range (the buffer has a row for every push of the loop). */
static int exec_rowset(Interp *I, Graph *g, VmRegs *r, const VmExec *X, Ins *in) {
    Tensor *buf = r->ten[in->dst], *v = r->ten[in->b];
    if (!buf || !v) return vm_fail_at(I, in, "undefined variable");
    bool own_region = g->dev && g->dev->region_of && buf->rc == 2 && vm_dev_region(g->dev, in->dst) == buf;
    if (!own_region && (buf->rc != 1 || buf->buf->rc != 1)) {
        Tensor *own = tensor_copy(buf);
        if (!own || X->place(g, r, in->dst, own)) return vm_fail_at(I, in, op_error());
        buf = r->ten[in->dst];
    }
    double at = r->num[in->a];
    if (!(at >= 0 && (at + 1) * (double)v->size <= (double)buf->size) || v->dtype != buf->dtype)   /* never, from the compiler */
        return vm_fail_at(I, in, "internal error: a push past the end of a tensor list's buffer");
    Tensor row = *buf;
    row.ndim = v->ndim;
    memcpy(row.shape, v->shape, sizeof(int64_t) * (size_t)v->ndim);
    row.size = v->size;
    row.data = (char *)buf->data + (int64_t)at * v->size * (int64_t)dtype_size(v->dtype);
    return X->copy(&row, v) ? vm_fail_at(I, in, op_error()) : 0;
}

/* After an instruction that made its results as eager code does (Ins.rt): each has its
 * register's known dimensions. The compiler derives them so, but a loaded file only claims
 * them (its verifier lets a register leave a size to the run, not pin one the run decides),
 * and the instructions that follow rely on them. */
static int rt_results_fit(Interp *I, const Graph *g, const VmRegs *r, Ins *in) {
    int n = in->op == I_OP ? in->nres : 1;
    for (int k = 0; k < n; k++) {
        int reg = in->op == I_OP ? in->res[k] : in->dst;
        Shape s;
        shape_of(r->ten[reg], &s);
        if (!shape_fits(&s, &g->regs[reg].shape)) {
            char msg[700], got[300], want[300];
            snprintf(msg, sizeof msg, "a result of shape %s where the graph has %s (a corrupt graph)",
                     shape_str(&s, got, sizeof got), shape_str(&g->regs[reg].shape, want, sizeof want));
            return vm_fail_at(I, in, msg);
        }
    }
    return 0;
}

/* ITEM and TRUTH: the first element, read on the host whatever the tensor's device. */
static int exec_read(Interp *I, VmRegs *r, Ins *in) {
    Tensor *x = r->ten[in->a], *h;
    if (!x) return vm_fail_at(I, in, "undefined variable");
    if (in->op == I_TRUTH && x->size != 1) {
        char msg[160];
        snprintf(msg, sizeof msg, AMBIGUOUS_TRUTH_FMT, (long long)x->size);
        return vm_fail_at(I, in, msg);
    }
    if (!(h = x->device == DEV_CPU ? x : tensor_host(x))) return vm_fail_at(I, in, op_error());
    double v = tensor_get(h, 0);
    if (h != x) tensor_release(h);
    r->num[in->dst] = in->op == I_ITEM ? v : v != 0;
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

/* Instructions from pc until one jumps to or past end; segments: the executor's capture
 * segments run where they begin (off for a segment's own run, and for an executor without). */
static inline __attribute__((always_inline)) int vm_loop(Interp *I, Graph *g, VmRegs *r, const VmExec *X, int pc, int end,
                                                         bool segments) {
    double *N = r->num;
    Ins *code = g->code;
    while (pc < end) {
        if (segments) {
            int ran = X->segment(I, g, r, &pc);
            if (ran < 0) return -1;
            if (ran) continue;
        }
        Ins *in = &code[pc++];
        vmdispatch(in->op) {
            vmcase(I_NCONST) N[in->dst] = in->imm; vmbreak;
            vmcase(I_NMOVE) N[in->dst] = N[in->a]; vmbreak;
            vmcase(I_NBIN) {
                double x = vm_nbin((OpCode)in->aux, N[in->a], N[in->b]);
                if (x != x && vm_number_failed(in, N[in->a], N[in->b], 2)) return vm_fail_at(I, in, op_error());
                N[in->dst] = x;
                vmbreak;
            }
            vmcase(I_NNEG) N[in->dst] = -N[in->a]; vmbreak;
            vmcase(I_NNOT) N[in->dst] = N[in->a] == 0; vmbreak;
            vmcase(I_NMATH) {
                if (in->imm != 0) N[in->dst] = op_round_number(N[in->a], (int64_t)in->imm);
                else {
                    double x = op_unary_number((OpCode)in->aux, N[in->a]);
                    if (x != x && vm_number_failed(in, N[in->a], 0, 1)) return vm_fail_at(I, in, op_error());
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
            vmcase(I_SELECT) if (exec_select(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_ROWSET) if (exec_rowset(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_DIM) {
                const Tensor *x = r->ten[in->a];
                if (!x) return vm_fail_at(I, in, "undefined variable");
                r->num[in->dst] = in->aux < 0 ? (double)x->size : (double)x->shape[in->aux];
                vmbreak;
            }
            vmcase(I_OP) {
                /* before each kernel: a run of slow ops without a loop stops too */
                if (!interp_poll(I)) return vm_stopped_at(I, in);
                if (X->op(I, g, r, in) || (in->rt && rt_results_fit(I, g, r, in))) return -1;
                vmbreak;
            }
            vmcase(I_INDEX)
            vmcase(I_INDEX_SET) if (exec_index(I, g, r, X, in) || (in->rt && rt_results_fit(I, g, r, in))) return -1; vmbreak;
            vmcase(I_SEED) rng_seed((uint64_t)(int64_t)in->imm); vmbreak;
            vmcase(I_ITEM)
            vmcase(I_TRUTH) if (exec_read(I, r, in)) return -1; vmbreak;
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
            vmcase(I_PRINT) if (vm_print(I, g, r, in)) return -1; vmbreak;
            vmcase(I_PUSH) if (exec_push(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_POP) if (exec_pop(I, g, r, X, in)) return -1; vmbreak;
            vmcase(I_ASSERT) if (vm_assert(I, g, r, in)) return -1; vmbreak;
            vmcase(I_STORE) if (vm_store(I, g, r, in)) return -1; vmbreak;
            vmcase(I_HCALL)
            vmcase(I_HBIN)
            vmcase(I_VMOVE)
            vmcase(I_HLIST)
            vmcase(I_HINDEX)
            vmcase(I_DSET) if (vm_host(I, g, r, in)) return -1; vmbreak;
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

#endif
