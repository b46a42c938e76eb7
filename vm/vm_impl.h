/* vm_impl.h - what vm.c shares with vm_gpu.c, the VM of graphs compiled for the GPU. */
#ifndef TSL_VM_IMPL_H
#define TSL_VM_IMPL_H
#include "vm.h"

/* vm_gpu.c: runs g instruction by instruction through the op core's device registry
 * (vm_exec's branch for a graph with Graph.device_vm set). 0, or -1 with an error pending. */
int vm_exec_gpu(Interp *I, Graph *g, VmRegs *r);

/* vm.c: instructions whose work does not depend on the device. */
int vm_number_ins(Interp *I, VmRegs *r, Ins *in);              /* NBIN, NNEG, NNOT, NMATH */
int vm_host_ins(Interp *I, Graph *g, VmRegs *r, Ins *in);     /* PRINT, ASSERT, STORE */

#endif
