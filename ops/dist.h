/* dist.h - the world of processes this one belongs to (spec section 11).
 *
 * Started by mpirun (OMPI_COMM_WORLD_SIZE or PMI_SIZE in the environment), the process loads
 * the MPI plugin (ops/mpi/plugin.h) on first use and the world is MPI_COMM_WORLD; otherwise
 * it is a world of one and every collective is an identity. The world belongs to the process,
 * not to an interpreter: MPI is initialised once per process, so it is the one piece of
 * process-wide state here (set once, under pthread_once).
 * Errors: -1 with the message in op_error(). */
#ifndef TSL_DIST_H
#define TSL_DIST_H
#include <stdbool.h>
#include <stddef.h>

/* Joins the world if the process was started by mpirun (first call only); 0 or -1. */
int dist_start(void);
/* This process's rank and the world's size (a world of one: 0 and 1); starts the world. */
int dist_rank(void);
int dist_size(void);
/* Whether a world of more than one process was started (does not start it). */
bool dist_started(int *rank, int *size);
/* Whether the process joined an MPI world, of any size (mpirun -np 1 too; does not start it). */
bool dist_joined(int *rank, int *size);
/* recv (size * nbytes bytes) gets every rank's send, in rank order. */
int dist_allgather(const void *send, void *recv, size_t nbytes);
int dist_bcast(void *buf, size_t nbytes, int root);
int dist_barrier(void);
/* Ends every process of a started world with status (MPI_Abort); returns when none was started. */
void dist_abort(int status);

#endif
