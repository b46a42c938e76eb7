/* exec_cpu.h - what the CPU executor's files share (exec_cpu.c, exec_rows.c). */
#ifndef TSL_EXEC_CPU_H
#define TSL_EXEC_CPU_H
#include "vm_impl.h"

/* The tensor register reg's result goes into (its reused buffer, else a new one); NULL failed. */
Tensor *vm_cpu_dst(Graph *g, VmRegs *r, int reg);
/* At least `need` bytes of the state's block scratch (mem_alloc may jump out). */
void vm_cpu_scratch(VmRegs *r, size_t need);
/* exec_rows.c: a row group (opt.h's opt_row_group); reports its own failure (vm_fail_at). */
int vm_cpu_rows(Interp *I, Graph *g, VmRegs *r, Ins *in);

#endif
