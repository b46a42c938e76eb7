/* dist.h - the world of processes this one belongs to (spec section 11).
 *
 * Started by mpirun (OMPI_COMM_WORLD_SIZE or PMI_SIZE in the environment), the process loads
 * the MPI plugin (ops/mpi/plugin.h) on first use and the world is MPI_COMM_WORLD; otherwise
 * it is a world of one and every collective is an identity. The world belongs to the process,
 * not to an interpreter: MPI is initialised once per process, so it is the one piece of
 * process-wide state here (set once, under pthread_once).
 *
 * Every exchange between ranks opens with the same step: each rank sends the header of what
 * it is doing (DistCall) and receives every other's (dist_agree). A tensor collective, a
 * barrier and the end of a rank's run (dist_finish) all take part, so ranks that do different
 * things meet in the same step, see it, and all stop with an error instead of waiting forever
 * in two different MPI calls. Once a step disagreed the world is broken: every rank knows,
 * reports its own error and ends, and no later exchange is tried.
 * Errors: -1 with the message in op_error(). */
#ifndef TSL_DIST_H
#define TSL_DIST_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tensor.h"

/* What a rank does at an exchange (its header): a collective op of ops.def (OP_ALLREDUCE ...)
 * on a tensor, or one of DIST_BARRIER and DIST_DONE, which have no tensor. All int64_t, so
 * there is no padding and ranks compare the bytes. */
enum { DIST_BARRIER = -1, DIST_DONE = -2 };
typedef struct {
    int64_t call;     /* an OpId, DIST_BARRIER or DIST_DONE */
    int64_t attr;     /* allreduce's RedOp, broadcast's root, else 0 */
    int64_t dtype, device, ndim, dims[TSL_MAX_RANK];
} DistCall;

/* Joins the world if the process was started by mpirun (first call only); 0 or -1. */
int dist_start(void);
/* This process's rank and the world's size (a world of one: 0 and 1); starts the world. */
int dist_rank(void);
int dist_size(void);
/* Whether a world of more than one process was started (does not start it). */
bool dist_started(int *rank, int *size);
/* Whether the process joined an MPI world, of any size (mpirun -np 1 too; does not start it). */
bool dist_joined(int *rank, int *size);
/* The exchange of headers that opens every collective: 0 when every rank sent the same as
 * mine, else -1 with an error naming this rank's call and the first rank's that differs
 * (or that it finished). A world of one agrees at once. */
int dist_agree(const DistCall *mine);
/* recv (size * nbytes bytes) gets every rank's send, in rank order. Data only: the caller
 * has agreed on the call first. */
int dist_allgather(const void *send, void *recv, size_t nbytes);
int dist_bcast(void *buf, size_t nbytes, int root);
/* Returns when every rank has reached a barrier (an exchange of headers: all must be in one). */
int dist_barrier(void);
/* The last exchange of a rank whose run ended without an error (its script's end, exit(0)):
 * joins the world first under mpirun, since the others may wait for this rank. 0 when every
 * rank finished too; -1 when some rank waits in a collective (that rank stops with an error
 * too). Later exchanges are errors. A world of one, or a second call, returns 0 at once. */
int dist_finish(void);
/* Ends every process of a started world with status (MPI_Abort); returns when none was
 * started, or when the world is broken (every rank saw the disagreement and ends itself). */
void dist_abort(int status);

#endif
