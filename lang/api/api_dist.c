/* api_dist.c - the public API's view of the MPI job (include/tsl.h, ops/dist.h): what a host
 * such as bin/tsl needs to report a failing rank and end the job instead of hanging it, and
 * to tell the others that this rank finished. */
#include "api.h"
#include "dist.h"

/* Either pointer may be NULL: the result alone says whether this is a job. */
TSL_API int tsl_world(int *rank, int *size) {
    int r = 0, n = 1;
    int joined = !dist_start() && dist_started(&r, &n);   /* dist_start fails: no plugin loaded */
    if (rank) *rank = joined ? r : 0;
    if (size) *size = joined ? n : 1;
    return joined;
}

TSL_API void tsl_world_abort(int status) {
    int rank, size;
    if (dist_started(&rank, &size)) dist_abort(status);
}

TSL_API tsl_Status tsl_world_finish(tsl_State *S) {
    if (!S) return TSL_BADARG;
    api_begin(S);
    return dist_finish() ? api_fail(S, TSL_ERROR, "%s", op_error()) : TSL_OK;
}
