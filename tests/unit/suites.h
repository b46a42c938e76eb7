/* suites.h - the registry of check suites: one per module, run by main.c. */
#ifndef TSL_TEST_SUITES_H
#define TSL_TEST_SUITES_H
#include <check.h>

Suite *lex_suite(void);
Suite *parse_suite(void);
Suite *ops_suite(void);
Suite *interp_suite(void);
Suite *vm_suite(void);
Suite *axis_suite(void);     /* test_axis.c: cumsum ... trace kernels */
Suite *linalg_suite(void);   /* test_linalg.c: LAPACK ops */
Suite *ew_suite(void);       /* test_ew.c: v2 elementwise kernels */
Suite *table_suite(void);    /* test_table.c: every op of ops.def x dtype x {eager, static, -fuse} */
Suite *num_suite(void);      /* test_num.c: ops/num.h conversions, slice/range lengths, shape_count */
Suite *values_suite(void);   /* test_values.c: cycles, shared structure, gc, object memory */
Suite *limits_suite(void);   /* test_limits.c: polling, compile budget, kept buffers (issue 10) */
Suite *builtin_table_suite(void);   /* test_builtin_table.c: signature and doc rows of the built-ins */
Suite *state_suite(void);    /* test_state.c: two interpreters, the allocation hook, out of memory (issue 14) */

Suite *grad_suite(void);     /* test_grad.c: the GradBuilder and backward rules (issue 12) */
Suite *grad_table_suite(void);   /* test_grad_table.c: every backward rule against central differences */
Suite *graphfile_suite(void);   /* test_graphfile.c: graph files as untrusted input (issue 14) */
Suite *chain_suite(void);    /* test_chain.c: the fused-group engine, bitwise against the kernels */
Suite *gpu_gen_suite(void);  /* test_gpu_gen.c: the CUDA generator's table against ops.def and the CPU */
Suite *vm_dev_suite(void);  /* test_vm_dev.c: static graphs on the GPU, the host-side logic (no GPU) */
Suite *suggest_suite(void);  /* test_suggest.c: ops/suggest.h, "did you mean" (issue 30) */
Suite *pool_suite(void);     /* test_pool.c: the thread pool's partition, errors, same bits */
Suite *progress_suite(void); /* test_progress.c: progress()'s bar text (issue 29) */

#endif
