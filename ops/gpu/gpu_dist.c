/* gpu_dist.c - the collectives of ops.def (allreduce, broadcast, allgather) on GPU tensors:
 * over NCCL, with one process per GPU (docs/gpu.md, "Collectives").
 *
 * The contract is the CPU's (ops/cpu/collective.c): every rank first agrees on the call over
 * MPI (the same header and the same error naming both sides, devices included), and sums
 * are combined in rank order, so every rank gets the same bits, independent of timing, and
 * the same bits as the ranks' CPU tensors would give. NCCL only moves bytes: allgather and
 * broadcast are ncclAllGather and ncclBroadcast; allreduce gathers every rank's tensor and
 * the plugin's generated kernel adds the slices in rank order (never an NCCL reduction,
 * whose order of additions is not fixed). The communicator is the process's, made on the
 * first GPU collective from an id rank 0 makes and broadcasts over MPI. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gpu_impl.h"
#include "cpu/cpu.h"
#include "dist.h"

/* The NCCL communicator belongs to the process, as the MPI world does: made once. */
static struct {
    pthread_once_t once;
    bool ready;
    char error[600];   /* why it could not be made (every later GPU collective reports it) */
} comm = { PTHREAD_ONCE_INIT, false, "" };

/* Every rank says whether it could load NCCL before any waits in ncclCommInitRank for a
 * rank that will never come; the first that could not is named on every rank. */
static bool all_loaded(int rank, int size, bool mine, const char *why) {
    int *ok = malloc(sizeof(int) * (size_t)size), me = mine;
    if (!ok || dist_allgather(&me, ok, sizeof me)) {
        snprintf(comm.error, sizeof comm.error, "%s", ok ? op_error() : "out of memory");
        free(ok);
        return false;
    }
    int bad = -1;
    for (int r = 0; r < size && bad < 0; r++)
        if (!ok[r]) bad = r;
    free(ok);
    if (bad == rank) snprintf(comm.error, sizeof comm.error, "%s", why);
    else if (bad >= 0) snprintf(comm.error, sizeof comm.error, "NCCL not available on rank %d (its message says why)", bad);
    return bad < 0;
}

static void comm_start(void) {
    int rank, size;
    dist_joined(&rank, &size);
    char id[TSL_NCCL_ID_BYTES], err[400] = "";
    memset(id, 0, sizeof id);
    bool loaded = gpu_cu->nccl_load(rank == 0 ? id : NULL, err, sizeof err) == 0;
    if (!all_loaded(rank, size, loaded, err)) return;
    if (dist_bcast(id, sizeof id, 0)) {
        snprintf(comm.error, sizeof comm.error, "%s", op_error());
        return;
    }
    if (gpu_cu->nccl_init(id, rank, size, err, sizeof err)) {
        snprintf(comm.error, sizeof comm.error, "%s", err);
        return;
    }
    comm.ready = true;
}

static int comm_ready(void) {
    pthread_once(&comm.once, comm_start);
    if (comm.ready) return 0;
    op_fail("%s", comm.error);
    return -1;
}

/* allreduce: every rank's tensor gathered on the device, then combined in rank order */
static int allreduce(const OpCall *c, const Tensor *t, int size, Tensor *out) {
    size_t nbytes = gpu_nbytes(t);
    void *parts = NULL;
    char err[400];
    if (GPU_CALL(alloc, &parts, nbytes * (size_t)size)) return -1;
    int rc = GPU_CALL(nccl_allgather, t->data, parts, nbytes);
    if (rc == 0) rc = GPU_CALL(rank_combine, (int)c->at->i[0], t->dtype, parts, size, t->size, out->data);
    gpu_cu->free(parts, nbytes * (size_t)size);   /* the caching allocator reuses it in stream order */
    return rc;
}

int gpu_run_dist(const OpCall *c, Tensor *out) {
    const Tensor *t = c->in[0].t;
    if (cpu_dist_agree(c, t)) return -1;
    int rank, size;
    size_t nbytes = gpu_nbytes(t);
    char err[400];
    /* not under mpirun: a world of one, each collective a copy (under mpirun -np 1 NCCL runs
     * as for any size, so one GPU checks the whole path) */
    if (!dist_joined(&rank, &size) || nbytes == 0)
        return nbytes ? GPU_CALL(copy, out->data, t->data, nbytes) : 0;
    if (comm_ready()) return -1;
    switch (c->op) {
    case OP_ALLGATHER: return GPU_CALL(nccl_allgather, t->data, out->data, nbytes);
    case OP_BROADCAST:
        if (GPU_CALL(copy, out->data, t->data, nbytes)) return -1;
        return GPU_CALL(nccl_bcast, out->data, nbytes, (int)c->at->i[0]);
    default: return allreduce(c, t, size, out);
    }
}
