/* dist_builtins.c - the built-ins of spec section 11 that take no tensor: rank(),
 * world_size() and barrier(). The collectives on tensors are ops (ops.def, F_COLL); these
 * ask ops/dist.h about the process's world, which starts on first use. */
#include "builtins.h"
#include "dist.h"

static Value bi_rank(Interp *I, CallArgs *a) {
    if (!builtin_bind(I, a, bi_rank, NULL)) return ERR_VAL;
    int r = dist_rank();
    return dist_start() ? interp_op_error(I) : NUM_VAL(r);
}

static Value bi_world_size(Interp *I, CallArgs *a) {
    if (!builtin_bind(I, a, bi_world_size, NULL)) return ERR_VAL;
    int n = dist_size();
    return dist_start() ? interp_op_error(I) : NUM_VAL(n);
}

static Value bi_barrier(Interp *I, CallArgs *a) {
    if (!builtin_bind(I, a, bi_barrier, NULL)) return ERR_VAL;
    return dist_barrier() ? interp_op_error(I) : NIL_VAL;
}

const BuiltinDef dist_builtins[] = {
    { "rank", bi_rank, "()", "this process's rank in the MPI job (0 without mpirun)", ST_RANK },
    { "world_size", bi_world_size, "()", "the number of processes in the MPI job (1 without mpirun)", ST_WORLD_SIZE },
    { "barrier", bi_barrier, "()", "waits until every rank of the MPI job reaches a barrier", ST_NONE },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
