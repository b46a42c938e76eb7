/* mpi_plugin.c - the MPI plugin: TSL's collectives as MPI calls on MPI_COMM_WORLD.
 *
 * Built with mpicc into bin/libtsl_mpi.so when Open MPI is installed, and loaded at run
 * time by ops/dist.c (so bin/tsl runs without MPI). Only bytes cross this boundary: dtypes,
 * shapes and the order of a sum stay in the library, which is what makes every rank's
 * result the same bits (a reduction inside MPI may add in any order). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <mpi.h>
#include "plugin.h"

static int mpi_status(int rc, const char *what, char *err, size_t n) {
    if (rc == MPI_SUCCESS) return 0;
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    snprintf(err, n, "%s failed: %s", what, msg);
    return -1;
}

static int count_ok(size_t nbytes, char *err, size_t n) {
    if (nbytes <= INT_MAX) return 0;
    snprintf(err, n, "a collective of %zu bytes is larger than MPI's int count allows", nbytes);
    return -1;
}

static void finalize(void) {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}

static int plugin_init(int *rank, int *size, char *err, size_t n) {
    int started = 0;
    MPI_Initialized(&started);
    if (!started) {
        int rc = MPI_Init(NULL, NULL);
        if (rc != MPI_SUCCESS) return mpi_status(rc, "MPI_Init", err, n);
        atexit(finalize);   /* mpirun treats a process that exits without it as failed */
    }
    /* errors come back as codes, so they become TSL errors with a message */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

static int plugin_allgather(const void *send, void *recv, size_t nbytes, char *err, size_t n) {
    if (count_ok(nbytes, err, n)) return -1;
    int rc = MPI_Allgather(send, (int)nbytes, MPI_BYTE, recv, (int)nbytes, MPI_BYTE, MPI_COMM_WORLD);
    return mpi_status(rc, "MPI_Allgather", err, n);
}

static int plugin_bcast(void *buf, size_t nbytes, int root, char *err, size_t n) {
    if (count_ok(nbytes, err, n)) return -1;
    return mpi_status(MPI_Bcast(buf, (int)nbytes, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast", err, n);
}

static void plugin_abort(int status) {
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);   /* MPI_Abort does not return; this only satisfies the contract */
}

static const TslMpiPlugin plugin = { TSL_MPI_ABI, plugin_init, plugin_allgather, plugin_bcast, plugin_abort };

__attribute__((visibility("default"))) const TslMpiPlugin *tsl_mpi_plugin(void) { return &plugin; }
