/* main.c - runs every check suite; exit status is the number of failures (capped). */
#include <stdlib.h>
#include "suites.h"
#include "tops.h"
#include "vm.h"

int main(void) {
    vm_register();   /* the suites make states with interp_new, not tsl_new */
    blas_choose_kernels();   /* as tsl_new does: OpenBLAS on the calling thread only */
    SRunner *sr = srunner_create(lex_suite());
    srunner_add_suite(sr, parse_suite());
    srunner_add_suite(sr, ops_suite());
    srunner_add_suite(sr, interp_suite());
    srunner_add_suite(sr, vm_suite());
    srunner_add_suite(sr, axis_suite());
    srunner_add_suite(sr, linalg_suite());
    srunner_add_suite(sr, ew_suite());
    srunner_add_suite(sr, pool_suite());
    srunner_add_suite(sr, chain_suite());
    srunner_add_suite(sr, grad_suite());
    srunner_add_suite(sr, grad_table_suite());
    srunner_add_suite(sr, table_suite());
    srunner_add_suite(sr, num_suite());
    srunner_add_suite(sr, values_suite());
    srunner_add_suite(sr, limits_suite());
    srunner_add_suite(sr, builtin_table_suite());
    srunner_add_suite(sr, graphfile_suite());
    srunner_add_suite(sr, state_suite());
    srunner_add_suite(sr, gpu_gen_suite());
    srunner_add_suite(sr, vm_dev_suite());
    srunner_add_suite(sr, suggest_suite());
    srunner_add_suite(sr, progress_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
