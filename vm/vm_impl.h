/* vm_impl.h - what vm.c shares with vm_gpu.c, the VM of graphs compiled for the GPU. */
#ifndef TSL_VM_IMPL_H
#define TSL_VM_IMPL_H
#include "vm.h"
#include "gpu.h"

/* vm_gpu.c: runs g instruction by instruction through the op core's device registry
 * (vm_exec's branch for a graph with Graph.device_vm set). 0, or -1 with an error pending. */
int vm_exec_gpu(Interp *I, Graph *g, VmRegs *r);

/* A FUSED instruction as one generated GPU kernel (gpu_fused_run): its steps renumbered for
 * the kernel (the group's result is the last step's temporary), and where each kernel input
 * comes from: a tensor register (in_reg) or a number register (in_num, a weak scalar). */
#define VM_GPU_FUSED_MAX 256
typedef struct {
    int nsteps, nin;
    GpuFusedStep steps[VM_GPU_FUSED_MAX];
    int in_reg[GPU_FUSED_MAX_IN], in_num[GPU_FUSED_MAX_IN];
} VmGpuFused;
/* 0 with the plan, or -1 when the group cannot be one kernel (a step other than the last
 * writes a register, too many inputs or steps): it then runs step by step. */
int vm_gpu_fused_plan(const Ins *in, VmGpuFused *p);

/* vm.c: an error at instruction `in`, in its own source: msg (vm_fail_at), or the pending
 * error of a poll that stopped the run (vm_stopped_at). Both return -1. */
int vm_fail_at(Interp *I, Ins *in, const char *msg);
int vm_stopped_at(Interp *I, Ins *in);

/* vm.c: instructions whose work does not depend on the device. */
int vm_number_ins(Interp *I, VmRegs *r, Ins *in);              /* NBIN, NNEG, NNOT, NMATH */
int vm_host_ins(Interp *I, Graph *g, VmRegs *r, Ins *in);     /* PRINT, ASSERT, STORE */

#endif
