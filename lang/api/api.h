/* api.h - what the files of the public API (lang/api/) share: the state behind a
 * tsl_State handle and the helpers that record a failure in it. Not installed: hosts see
 * include/tsl.h only. */
#ifndef TSL_API_INTERNAL_H
#define TSL_API_INTERNAL_H
#include "tsl.h"
#include "interp.h"

struct tsl_State {
    Interp *I;
    StrBuf text;      /* the borrowed texts handed out (results, help, listings) */
    char **args;      /* owned copies of tsl_set_args's strings */
    int nargs;
    char bare[600];   /* "tsl: error: MSG" when the report could not be rendered (out of memory) */
};

/* Clears the pending error and its report: the start of every call that can fail. */
void api_begin(tsl_State *S);
/* Records a failure that belongs to no source ("tsl: error: MSG") and returns st. S may be NULL. */
tsl_Status api_fail(tsl_State *S, tsl_Status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The status of a run that stopped with an error: TSL_EXIT, TSL_INTERRUPTED or TSL_ERROR. */
tsl_Status api_error_status(tsl_State *S);
/* Runs body(S, ud) inside S's state, protected (every public function that touches objects,
 * tensors or memory of the state comes through here): its blocks are the state's, and out of
 * memory returns TSL_ERROR with "out of memory" in S instead of jumping. */
typedef tsl_Status (*ApiBody)(tsl_State *S, void *ud);
tsl_Status api_run(tsl_State *S, ApiBody body, void *ud);
/* A tensor handed to the host: a copy in the host's memory (the memory current on this
 * thread outside every state), so it outlives the state. Call it outside api_run. */
tsl_Status api_hand_out(tsl_State *S, const Tensor *t, tsl_Tensor **out);
/* Sets an option of an interpreter: a state's, or a session's (tsl_session_set_option).
 * TSL_BADARG with the reason in why for a negative value or an unknown option. */
tsl_Status api_set_option(Interp *I, tsl_Option opt, int64_t v, char *why, size_t cap);
/* The main module, made on first use (completion and help work before any input has run). */
Module *api_main(tsl_State *S);

#endif
