/* dist.c - joining the MPI world at run time: the plugin is found beside the binary that
 * holds this code (bin/tsl or bin/libtsl.so; TSL_MPI_PLUGIN names another), dlopen'ed only
 * when mpirun started the process. See dist.h. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dist.h"
#include "plugin.h"
#include "tensor.h"
#include "mpi/plugin.h"

static struct {
    pthread_once_t once;
    const TslMpiPlugin *mpi;   /* NULL: a world of one */
    int rank, size;
    char error[512];           /* why the world could not start (every call reports it) */
} world = { PTHREAD_ONCE_INIT, NULL, 0, 1, "" };

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

int dist_barrier(void) {
    if (dist_start()) return -1;
    if (!world.mpi) return 0;
    char err[256];
    return plugin_result(world.mpi->barrier(err, sizeof err), err);
}

void dist_abort(int status) {
    if (world.mpi) world.mpi->abort(status);
}
