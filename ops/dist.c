/* dist.c - joining the MPI world at run time: the plugin is found beside the binary that
 * holds this code (bin/tsl or bin/libtsl.so; TSL_MPI_PLUGIN names another), dlopen'ed only
 * when mpirun started the process; and the exchange of headers that opens every collective,
 * barrier and rank's end, which turns ranks doing different things into errors on all of
 * them instead of a job that waits forever. See dist.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dist.h"
#include "plugin.h"
#include "opcall.h"
#include "tensor.h"
#include "mpi/plugin.h"

static struct {
    pthread_once_t once;
    const TslMpiPlugin *mpi;   /* NULL: a world of one */
    int rank, size;
    char error[512];           /* why the world could not start (every call reports it) */
    bool finished;             /* this rank's run ended (dist_finish): no more exchanges */
    char broken[600];          /* why an exchange disagreed: every rank saw it, none goes on */
} world = { PTHREAD_ONCE_INIT, NULL, 0, 1, "", false, "" };

static bool under_mpirun(void) { return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE"); }

static void world_start(void) {
    if (!under_mpirun()) return;
    char path[4096], why[600];
    plugin_path("TSL_MPI_PLUGIN", "libtsl_mpi.so", path, sizeof path);
    void *entry;
    int rc = plugin_open(path, "tsl_mpi_plugin", &entry, why, sizeof why);
    if (rc == -1) {
        snprintf(world.error, sizeof world.error,
                 "started by mpirun, but the MPI plugin could not be loaded (%.400s); build it with `make` where Open MPI is installed",
                 why);
        return;
    }
    const TslMpiPlugin *p = rc == 0 ? ((TslMpiPluginFn)entry)() : NULL;
    if (!p || p->abi != TSL_MPI_ABI) {
        snprintf(world.error, sizeof world.error, "%.400s is not an MPI plugin of this build of tsl", path);
        return;
    }
    char err[256];
    if (p->init(&world.rank, &world.size, err, sizeof err)) {
        snprintf(world.error, sizeof world.error, "MPI could not start: %s", err);
        return;
    }
    world.mpi = p;
}

int dist_start(void) {
    pthread_once(&world.once, world_start);
    if (world.error[0]) {
        op_fail("%s", world.error);
        return -1;
    }
    return 0;
}

int dist_rank(void) { return dist_start() ? 0 : world.rank; }
int dist_size(void) { return dist_start() ? 1 : world.size; }

bool dist_started(int *rank, int *size) {
    *rank = world.rank;
    *size = world.size;
    return world.mpi && world.size > 1;
}

bool dist_joined(int *rank, int *size) {
    *rank = world.rank;
    *size = world.size;
    return world.mpi != NULL;
}

/* A plugin call's result: 0, or -1 with its message as the op error. */
static int plugin_result(int rc, const char *err) {
    if (rc) op_fail("%s", err);
    return rc ? -1 : 0;
}

/* A header is another process's bytes: one from another build of tsl (mpirun can start
 * different programs) must not be used as an index. */
static bool call_known(const DistCall *h) {
    bool op = h->call >= 0 && h->call < OP__COUNT && (op_info[h->call].flags & F_COLL);
    return op && h->attr >= 0 && (h->call != OP_ALLREDUCE || h->attr <= REDOP_MIN) && h->dtype >= 0 &&
           h->dtype <= DT_F64 && h->device >= 0 && h->device <= DEV_GPU && h->ndim >= 0 && h->ndim <= TSL_MAX_RANK;
}

/* "allreduce(op=\"sum\") of f32[2, 3]", " on gpu" when devices are to be named, "barrier()" */
static const char *call_text(const DistCall *h, bool device, char *buf, size_t n) {
    if (h->call == DIST_BARRIER) return "barrier()";
    if (!call_known(h)) {
        snprintf(buf, n, "something this build of tsl does not know (call %lld)", (long long)h->call);
        return buf;
    }
    Shape s = { (int)h->ndim, { 0 } };
    for (int k = 0; k < s.ndim; k++) s.d[k] = h->dims[k];
    char sh[400], attr[32] = "";
    if (h->call == OP_ALLREDUCE) snprintf(attr, sizeof attr, "op=\"%s\"", redop_names[h->attr]);
    if (h->call == OP_BROADCAST) snprintf(attr, sizeof attr, "root=%lld", (long long)h->attr);
    snprintf(buf, n, "%s(%s) of %s%s%s%s", op_info[h->call].name, attr, dtype_name((DType)h->dtype),
             shape_str(&s, sh, sizeof sh), device ? " on " : "", device ? device_name((Device)h->device) : "");
    return buf;
}

/* The error for the first rank r whose header differs from mine: one of us finished, or we
 * called different things (devices named when a tensor is on the GPU: some ranks on the CPU,
 * some on the GPU). Kept in world.broken: no rank exchanges anything after this. */
static void disagree(const DistCall *mine, const DistCall *theirs, int r) {
    char a[500], b[500];
    bool device = (mine->call >= 0 && mine->device != DEV_CPU) || (theirs->call >= 0 && theirs->device != DEV_CPU);
    if (mine->call == DIST_DONE)
        snprintf(world.broken, sizeof world.broken, "this rank finished while rank %d waits in %s", r,
                 call_text(theirs, device, b, sizeof b));
    else if (theirs->call == DIST_DONE)
        snprintf(world.broken, sizeof world.broken, "rank %d finished while this rank waits in %s", r,
                 call_text(mine, device, a, sizeof a));
    else
        snprintf(world.broken, sizeof world.broken, "%s(): the ranks disagree: rank %d called %s, rank %d called %s",
                 mine->call == DIST_BARRIER ? "barrier" : op_info[mine->call].name, world.rank,
                 call_text(mine, device, a, sizeof a), r, call_text(theirs, device, b, sizeof b));
}

/* 0 when the world can hold an exchange now (the process joined an MPI world, nothing broke,
 * this rank has not finished), 1 when it is a world of one without MPI, else -1. */
static int exchange_ready(void) {
    if (dist_start()) return -1;
    if (world.broken[0]) {
        op_failk(ERRK_VALUE, "the ranks disagreed in an earlier collective (%s)", world.broken);
        return -1;
    }
    if (world.finished) {
        op_failk(ERRK_VALUE, "no collective after this rank finished");
        return -1;
    }
    return world.mpi ? 0 : 1;
}

int dist_agree(const DistCall *mine) {
    int ready = exchange_ready();
    if (ready) return ready == 1 ? 0 : -1;
    DistCall *all = malloc(sizeof *all * (size_t)world.size);
    if (!all) {
        op_failk(ERRK_MEMORY, "out of memory");
        return -1;
    }
    int rc = dist_allgather(mine, all, sizeof *mine);
    for (int r = 0; rc == 0 && r < world.size; r++) {
        if (memcmp(&all[r], mine, sizeof *mine)) {
            disagree(mine, &all[r], r);
            op_fail("%s", world.broken);
            rc = -1;
        }
    }
    free(all);
    return rc;
}

int dist_allgather(const void *send, void *recv, size_t nbytes) {
    if (dist_start()) return -1;
    if (!world.mpi) {
        memcpy(recv, send, nbytes);
        return 0;
    }
    char err[256];
    return plugin_result(world.mpi->allgather(send, recv, nbytes, err, sizeof err), err);
}

int dist_bcast(void *buf, size_t nbytes, int root) {
    if (dist_start()) return -1;
    if (!world.mpi) return 0;
    char err[256];
    return plugin_result(world.mpi->bcast(buf, nbytes, root, err, sizeof err), err);
}

/* No rank leaves an allgather before every rank has entered it, so the exchange of headers
 * is the barrier itself. */
int dist_barrier(void) {
    DistCall h = { .call = DIST_BARRIER };
    return dist_agree(&h);
}

int dist_finish(void) {
    if (world.finished || (!under_mpirun() && !world.mpi)) return 0;
    DistCall h = { .call = DIST_DONE };
    int rc = dist_agree(&h);
    world.finished = true;
    return rc;
}

void dist_abort(int status) {
    if (world.mpi && !world.broken[0]) world.mpi->abort(status);
}
