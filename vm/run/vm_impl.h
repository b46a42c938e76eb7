/* vm_impl.h - what the VM's one loop (vm_loop.h, vm.c) and its executors share. */
#ifndef TSL_VM_IMPL_H
#define TSL_VM_IMPL_H
#include <stdarg.h>
#include "vm.h"

/* ---------- executors ----------
 * The one loop (vm_loop.h) runs control flow, numbers, prints, asserts, stores, the stacks
 * and the host's reads for every device; an executor runs what depends on where the tensors
 * live. vm.c picks one per graph from its device (and Graph.device_vm); a new device is a
 * new VmExec, not a new loop. Hooks that return int give 0, or -1 with the message in
 * op_error() (the loop reports it at the instruction), except op/fused/epilogue, which
 * report it themselves (vm_fail_at). begin, end, segment and loop may be NULL. */
typedef struct VmExec {
    /* a run starts (the executor's per-run state: the arena, staged inputs); a run ended well */
    int (*begin)(Interp *I, Graph *g, VmRegs *r);
    void (*end)(Graph *g, VmRegs *r);
    /* a capture segment begins at *pc: runs it (op by op, captured or replayed) and moves *pc
     * past it, 1; 0 when none begins there; -1 failed (reported) */
    int (*segment)(Interp *I, Graph *g, VmRegs *r, int *pc);
    /* register reg := t (stolen; t may be the register's own tensor, written in place) */
    int (*place)(Graph *g, VmRegs *r, int reg, Tensor *t);
    /* dst's elements := src's (the same dtype, shape and device) */
    int (*copy)(Tensor *dst, const Tensor *src);
    /* constant k where the graph's ops meet it: a new reference, NULL failed */
    Tensor *(*konst)(Graph *g, VmRegs *r, int k);
    /* register reg := a 0-d tensor of dtype dt holding x (checked to fit) */
    int (*scalar)(Graph *g, VmRegs *r, int reg, DType dt, double x);
    /* an INDEX or INDEX_SET's result, a new reference the loop places; NULL failed */
    Tensor *(*index)(Graph *g, VmRegs *r, Ins *in, Tensor *src, IndexItem *items, Tensor *setval);
    /* an INDEX src[x] of one run-time number x (an RNN's xs[t]) the short way: 1 when it put the
     * result in the register, 0 when the general path must run (every error among them, so
     * the messages are that path's); NULL: always the general path */
    int (*row)(Graph *g, VmRegs *r, Ins *in, Tensor *src, double x);
    int (*op)(Interp *I, Graph *g, VmRegs *r, Ins *in);         /* OP */
    int (*fused)(Interp *I, Graph *g, VmRegs *r, Ins *in);      /* FUSED */
    int (*epilogue)(Interp *I, Graph *g, VmRegs *r, Ins *in);   /* EPILOGUE */
    /* its own instance of the loop (vm_loop.h), hooks called directly; NULL: vm.c's */
    int (*loop)(Interp *I, Graph *g, VmRegs *r, int pc, int end, bool segments);
} VmExec;

/* exec_cpu.c: host memory, the memory plan's buffers, block kernels (a graph for the CPU). */
extern const VmExec vm_cpu_exec;
/* exec_dev.c: any device through the op registry (op_run), with an arena per graph and
 * capture segments (a CUDA Graph each on the GPU): the GPU's, and every graph's under
 * TSL_VM_DEVICE=1, so the CPU tests it. */
extern const VmExec vm_dev_exec;

static inline void vm_set_t(VmRegs *r, int reg, Tensor *t) {
    tensor_release(r->ten[reg]);
    r->ten[reg] = t;
}
/* vm.c: instructions [begin, end) of g through its executor, without segments (a capture
 * segment's own run: it has no jumps). 0, or -1 with the error pending. */
int vm_run_range(Interp *I, Graph *g, VmRegs *r, int begin, int end);

/* A FUSED instruction as one generated kernel (the device's fused_run hook): its steps renumbered for
 * the kernel (the group's result is the last step's temporary), and where each kernel input
 * comes from: a tensor register (in_reg) or a number register (in_num, a weak scalar). */
#define VM_FUSED_MAX 256
#define VM_FUSED_PRODUCT (-2)   /* in_reg of an epilogue's product (EPI_PRODUCT in its steps) */
typedef struct {
    int nsteps, nin;
    DevFusedStep steps[VM_FUSED_MAX];
    int in_reg[DEV_FUSED_MAX_IN], in_num[DEV_FUSED_MAX_IN];
} VmFusedPlan;
/* 0 with the plan, or -1 when the group cannot be one kernel (a step other than the last
 * writes a register, too many inputs or steps): it then runs step by step. The same for an
 * EPILOGUE's steps, whose product is then an input (in_reg VM_FUSED_PRODUCT). */
int vm_fused_plan(const Ins *in, VmFusedPlan *p);

/* ---------- the device executor's arena and capture segments (vm_dev.c, vm_seg.c) ----------
 * A graph run by the device executor on its own register file (Graph.rf: the static cache's graphs, not
 * a model session's) keeps a VmDev between runs: every tensor register an instruction writes
 * has a region at a fixed offset of one allocation (registers of one memory-plan slot share
 * theirs), so each run writes the same addresses; results that leave the graph are copied
 * out (vm_operand, push). Constants are copied to the device once. The instructions split
 * into capture segments; a segment's third run is captured (a CUDA Graph on the GPU) and
 * later runs replay it when every tensor address and number it read is the one captured. */
typedef struct {
    int begin, end;   /* instructions [begin, end) */
} VmSeg;
/* Why instruction `in` cannot be part of a capture segment, or NULL when it can. */
const char *vm_seg_refuses(const Graph *g, const Ins *in);
/* g's capture segments in order (*out: a new array, mem_free it; NULL when none): their count. */
int vm_dev_segments(const Graph *g, VmSeg **out);

enum { CAP_WARM, CAP_LIVE, CAP_NEVER };
typedef struct {
    int reg;
    double x;
} VmNumRead;
typedef struct {
    int reg;
    const void *p;
} VmTenRead;
/* One segment's capture: what it read from outside itself when captured. */
typedef struct {
    int state;              /* CAP_WARM until captured; CAP_NEVER when a capture failed */
    void *graph;            /* the plugin's instantiated CUDA Graph (NULL on the CPU stand-in) */
    VmNumRead *num;         /* number registers its kernels read, with their values */
    VmTenRead *ten;         /* tensor registers it read, with their device addresses */
    int nnum, nten;
    bool told;              /* TSL_EXPLAIN said why a replay fell back */
    bool replayed;          /* TSL_EXPLAIN said it was replayed (the tests count these) */
} VmCapture;

typedef struct VmDev {
    Device device;
    bool explain;           /* TSL_EXPLAIN */
    bool off;               /* no arena (too large, or the device would not give one): run as before */
    Tensor *mem;            /* the arena: one allocation on the graph's device */
    Tensor **region;        /* its regions, as tensors over mem's buffer */
    int nregions;
    int *region_of;         /* per register: its region, -1 none */
    Tensor **stage;         /* per register: the staging copy of an input whose address moves */
    bool *stage_next;       /* per register: an input that moved before the capture, or that a
                             * replay found moved: staged from the next capture on */
    int *staged;            /* the registers with one */
    int nstaged;
    Tensor **dconst;        /* the constants on the graph's device, made once */
    int nconsts;
    const void **input_at;  /* per input register: its address in the run before */
    VmSeg *seg;
    int nseg;
    int *seg_at;            /* per instruction: the segment beginning there, -1 */
    VmCapture *cap;
    int runs;               /* runs completed */
    int captures;           /* segments captured, ever: steady state never adds to it */
    int recaptures;         /* captures dropped because an input moved (bounded) */
    bool misfit;            /* a result did not fit its region during the current capture */
} VmDev;

/* g's arena and capture state, made on its first run (NULL when g does not run with one). */
VmDev *vm_dev_get(Interp *I, Graph *g);
void vm_dev_free(VmDev *d, int nregs);
/* Frees a capture's graph and what it recorded (state and told are the caller's). */
void vm_capture_drop(VmDev *d, VmCapture *c);
/* The region of register reg (borrowed), NULL when it has none. */
Tensor *vm_dev_region(VmDev *d, int reg);
/* Whether t lives in memory the graph writes again next run (the arena, a staging copy):
 * such a value is copied when it leaves the graph. */
bool vm_dev_owns(const VmDev *d, const Tensor *t);
/* Steals t, a new value of register reg: its region holding t's elements (a new reference),
 * or t itself when reg has no region or t does not fit it; NULL when the copy failed. */
Tensor *vm_dev_place(VmDev *d, int reg, Tensor *t);
/* dst's elements := src's, on their device (a device-to-device copy: captured on the GPU). */
int vm_dev_copy(Tensor *dst, const Tensor *src);
/* TSL_EXPLAIN's line at instruction in, when the graph's VmDev explains; and the line itself. */
void vm_dev_explain(Interp *I, const VmDev *d, const Ins *in, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void vm_explain_va(Interp *I, const Ins *in, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Segment s of g where it begins: op by op, captured (its third run) or replayed. 0, or -1
 * with the error reported. */
int vm_seg_run(Interp *I, Graph *g, VmRegs *r, VmDev *d, int s);
/* At the start of a run: inputs whose address moved are copied into the graph's staging
 * copies, so a capture reads one address every run. */
int vm_seg_stage(Interp *I, Graph *g, VmRegs *r, VmDev *d);

/* vm.c: what the loop (vm_loop.h) calls out of line. Whether a number op's NaN result is an
 * error eagerly (the message set); PRINT, ASSERT and STORE; room for one more entry on a
 * PUSH stack, counted toward --max-memory (-1 with the message in op_error()). */
bool vm_number_failed(const Ins *in, double a, double b, int n);
int vm_print(Interp *I, Graph *g, VmRegs *r, Ins *in);
int vm_assert(Interp *I, Graph *g, VmRegs *r, Ins *in);
int vm_store(Interp *I, Graph *g, VmRegs *r, Ins *in);
/* Host instructions (HCALL, HBIN, VMOVE, DSET): eager's own functions on host values. */
int vm_host(Interp *I, Graph *g, VmRegs *r, Ins *in);
int vm_stack_reserve(VmStack *s);

/* vm.c: an error at instruction `in`, in its own source: msg (vm_fail_at), or the pending
 * error of a poll that stopped the run (vm_stopped_at). Both return -1. */
int vm_fail_at(Interp *I, Ins *in, const char *msg);
/* The same with the error's kind (vm_fail_at's: op_error_kind() when msg is op_error(), else
 * ERRK_VALUE; a pending error keeps its own). */
int vm_fail_atk(Interp *I, Ins *in, ErrKind k, const char *msg);
int vm_stopped_at(Interp *I, Ins *in);

#endif
