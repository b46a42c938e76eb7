/* plugin.h - what the MPI plugin (bin/libtsl_mpi.so, built from ops/mpi/mpi_plugin.c with
 * mpicc) gives the library: a table of byte-level collectives over MPI_COMM_WORLD.
 *
 * bin/tsl never links MPI; ops/dist.c dlopens the plugin on first use, only when the process
 * was started by mpirun, and looks up tsl_mpi_plugin(). Every function returns 0, or -1 with
 * a message in err. Collectives are blocking and must be called in the same order on every
 * rank (the static compiler never reorders them: F_COLL in ops.def); the library opens each
 * with an allgather of headers (ops/dist.h), which is also its barrier. */
#ifndef TSL_MPI_PLUGIN_H
#define TSL_MPI_PLUGIN_H
#include <stddef.h>

#define TSL_MPI_ABI 2

typedef struct {
    int abi;   /* TSL_MPI_ABI: a plugin from another build is refused */
    /* MPI_Init (MPI_Finalize is registered with atexit); the world's rank and size */
    int (*init)(int *rank, int *size, char *err, size_t n);
    /* recv (size * nbytes bytes) gets every rank's send, in rank order */
    int (*allgather)(const void *send, void *recv, size_t nbytes, char *err, size_t n);
    int (*bcast)(void *buf, size_t nbytes, int root, char *err, size_t n);
    /* ends every process of the job with status (MPI_Abort); does not return */
    void (*abort)(int status);
} TslMpiPlugin;

typedef const TslMpiPlugin *(*TslMpiPluginFn)(void);

#endif
