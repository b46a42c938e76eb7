/* vm_seg.c - capture segments: the runs of a GPU graph's instructions that only launch
 * device work, so that the device executor (exec_dev.c) can record each one as a CUDA Graph and replay it.
 *
 * A segment is a maximal run of instructions none of which needs the host while the device
 * works (no item, no branch on a tensor, no print, no host-side indexing, no kernel whose
 * errors the host reads back after a sync), that no jump enters in the middle and that
 * launches at least one kernel. Control flow ends a segment (a loop body may be one: it is
 * replayed once per iteration). The only number instruction a segment keeps is nconst: its
 * value is the same every run, whereas a number computed from others (nbin, nmove...) may
 * change what a captured kernel receives by value, so it is run on the host between
 * segments and the segment after it checks the number it reads (exec_dev.c).
 * This file is a pure function of the graph (tested in tests/unit/test_vm_gpu.c). */
#include "vm_impl.h"
#include "opt.h"

/* Whether a tensor instruction computes in i64: integer kernels raise a flag the host reads
 * after a sync (floor_divide, mod and pow by zero or a negative power, astype to i64). */
static bool touches_i64(const Graph *g, const Ins *in) {
    for (int k = 0; k < in->nres && k < OP_MAX_OUT; k++)
        if (in->res[k] >= 0 && g->regs[in->res[k]].kind == R_TENSOR && g->regs[in->res[k]].dtype == DT_I64) return true;
    if (in->dst >= 0 && g->regs[in->dst].kind == R_TENSOR && g->regs[in->dst].dtype == DT_I64) return true;
    for (int k = 0; k < in->nargs; k++) {
        int r = in->args[k];
        if (r >= 0 && g->regs[r].kind == R_TENSOR && g->regs[r].dtype == DT_I64) return true;
    }
    for (int k = 0; k < in->nsteps; k++) {
        const FusedStep *st = &in->steps[k];
        int regs[3] = { st->a, st->b, st->dst };
        for (int q = 0; q < 3; q++)
            if (regs[q] < 0 && regs[q] != FUSED_NONE && regs[q] != EPI_PRODUCT && g->regs[-regs[q] - 1].dtype == DT_I64)
                return true;
    }
    return false;
}

/* Whether an operand of the instruction is a number (a register, not a tensor). */
static bool has_number_arg(const Graph *g, const Ins *in) {
    for (int k = 0; k < in->nargs; k++)
        if (in->args[k] >= 0 && g->regs[in->args[k]].kind == R_NUM) return true;
    return false;
}

/* ops/gpu.c's gpu_supports_op: an op other than an elementwise one whose first operand is
 * not a tensor (clip of a number...) is made by the CPU and its result copied to the device. */
static bool made_on_host(const Graph *g, const Ins *in) {
    int kind = op_info[(OpCode)in->aux].kind;
    if (kind == K_UNARY || kind == K_BINARY || kind == K_COMPARE) return false;
    return in->nargs < 1 || in->args[0] < 0 || g->regs[in->args[0]].kind != R_TENSOR;
}

static const char *op_refuses(const Graph *g, const Ins *in) {
    OpCode op = (OpCode)in->aux;
    int fl = op_info[op].flags;
    if (fl & F_RANDOM) return "a random draw takes the host's generator state by value";
    if (fl & F_COLL) return "a collective waits for the other ranks";
    if (fl & F_DYNAMIC) return "its result's shape depends on the data";
    if (fl & F_ITEM) return "its result is read on the host";
    if (fl & F_READBACK) return "its GPU kernel's outcome (a range check, cuSOLVER's info) is read back on the host";
    if ((OpCode)in->aux == OP_PAD)   /* gpu_run_pad converts a tensor fill value on the host */
        for (int k = 1; k < in->nargs; k++)
            if (in->args[k] >= 0 && g->regs[in->args[k]].kind == R_TENSOR) return "pad's tensor fill value is read on the host";
    if (touches_i64(g, in)) return "an integer kernel's error flag is read back on the host";
    /* host copies in the GPU's host code (ops/gpu_shape.c, gpu_ew.c), which CUDA refuses while
     * capturing: found by difftest.py --repeat on the stand-in's capture emulation */
    if (op == OP_ZEROS || op == OP_ONES || op == OP_FULL) return "its fill value is copied to the device from the host";
    if (op == OP_WHERE && has_number_arg(g, in)) return "where's number operand is copied to the device from the host";
    if (op == OP_EQUAL || op == OP_ALLCLOSE) return "equal and allclose compare on the host";
    if (made_on_host(g, in)) return "its first operand is not a tensor: the CPU makes it, copied to the device";
    return NULL;
}

const char *vm_seg_refuses(const Graph *g, const Ins *in) {
    switch (in->op) {
    case I_NCONST: case I_TCONST: case I_TMOVE: return NULL;
    case I_OP: return op_refuses(g, in);
    case I_FUSED: case I_EPILOGUE:
        return touches_i64(g, in) ? "an integer kernel's error flag is read back on the host" : NULL;
    case I_NMOVE: case I_NBIN: case I_NNEG: case I_NNOT: case I_NMATH:
        return "a number computed on the host";
    case I_SCALAR: return "a number becomes a tensor through a host copy";
    case I_INDEX: case I_INDEX_SET: return "indexing runs on the host";
    case I_ITEM: return "item() reads the device";
    case I_TRUTH: return "a branch on a tensor reads the device";
    case I_JUMP: case I_JUMPF: return "control flow";
    case I_PRINT: return "print runs on the host";
    case I_ASSERT: return "assert runs on the host";
    case I_STORE: return "a store into a container runs on the host";
    case I_PUSH: case I_POP: return "a backward loop's stack lives on the host";
    case I_SEED: return "seed() sets the host's generator";
    default: return "an instruction the capture does not know";
    }
}

static bool launches(const Ins *in) { return in->op == I_OP || in->op == I_FUSED || in->op == I_EPILOGUE; }

int vm_gpu_segments(const Graph *g, VmSeg **out) {
    *out = NULL;
    bool *target = mem_calloc((size_t)g->ncode + 1, sizeof(bool));
    for (int i = 0; i < g->ncode; i++)
        if ((g->code[i].op == I_JUMP || g->code[i].op == I_JUMPF) && g->code[i].aux >= 0 && g->code[i].aux <= g->ncode)
            target[g->code[i].aux] = true;
    int n = 0, cap = 0;
    VmSeg *seg = NULL;
    int begin = -1, work = 0;
    for (int i = 0; i <= g->ncode; i++) {
        bool ok = i < g->ncode && !vm_seg_refuses(g, &g->code[i]);
        if (begin >= 0 && (!ok || target[i])) {   /* the run ends before i */
            if (work) {
                GROW(seg, n, cap);
                seg[n++] = (VmSeg){ begin, i };
            }
            begin = -1;
        }
        if (!ok) continue;
        if (begin < 0) begin = i, work = 0;
        work += launches(&g->code[i]);
    }
    mem_free(target);
    *out = seg;
    return n;
}
