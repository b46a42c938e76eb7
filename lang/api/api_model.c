/* api_model.c - exported graphs through the public API: tsl_Model over vm/file/model.h's Model
 * (immutable once loaded) and tsl_Session over its ModelSession (one per thread). */
#include <stdio.h>
#include <string.h>
#include "api.h"
#include "mem.h"
#include "model.h"

struct tsl_Session {
    ModelSession *s;
    const Model *m;
    char err[512];
};

static tsl_Status loaded(tsl_State *S, Model *m, const char *err, tsl_Model **out) {
    *out = (tsl_Model *)m;
    return m ? TSL_OK : api_fail(S, TSL_ERROR, "%s", err);
}

tsl_Status tsl_model_load(tsl_State *S, const char *path, tsl_Model **out) {
    if (!path || !out) return TSL_BADARG;
    char err[512] = "";
    return loaded(S, model_load_file(path, err, sizeof err), err, out);
}

tsl_Status tsl_model_load_bytes(tsl_State *S, const void *data, size_t n, const char *name, tsl_Model **out) {
    if ((!data && n) || !name || !out) return TSL_BADARG;
    char err[512] = "";
    return loaded(S, model_load_bytes(data, n, name, err, sizeof err), err, out);
}

void tsl_model_free(tsl_Model *m) {
    if (m) model_free((Model *)m);
}

int tsl_model_num_inputs(const tsl_Model *m) { return m ? model_num_inputs((const Model *)m) : -1; }
int tsl_model_num_outputs(const tsl_Model *m) { return m ? model_num_outputs((const Model *)m) : -1; }
const char *tsl_model_signature(const tsl_Model *m) { return m ? model_signature((const Model *)m) : ""; }

static void put_shape(const Shape *s, int *ndim, int64_t *shape) {
    if (ndim) *ndim = s->ndim;
    if (shape) memcpy(shape, s->d, sizeof(int64_t) * (size_t)s->ndim);
}

tsl_Status tsl_model_input(const tsl_Model *m, int i, tsl_DType *dtype, int *ndim, int64_t *shape, const char **name) {
    if (!m || i < 0 || i >= tsl_model_num_inputs(m)) return TSL_BADARG;
    DType dt;
    Shape s;
    model_input_info((const Model *)m, i, &dt, &s, name);
    if (dtype) *dtype = (tsl_DType)dt;
    put_shape(&s, ndim, shape);
    return TSL_OK;
}

tsl_Status tsl_model_output(const tsl_Model *m, int i, tsl_DType *dtype, int *ndim, int64_t *shape) {
    if (!m || i < 0 || i >= tsl_model_num_outputs(m)) return TSL_BADARG;
    DType dt;
    Shape s;
    model_output_info((const Model *)m, i, &dt, &s);
    if (dtype) *dtype = (tsl_DType)dt;
    put_shape(&s, ndim, shape);
    return TSL_OK;
}

tsl_Status tsl_session_new(const tsl_Model *m, tsl_Session **out) {
    if (!m || !out) return TSL_BADARG;
    *out = NULL;
    tsl_Session *s = mem_try_alloc(sizeof *s);   /* the host's memory: no state is entered */
    if (!s) return TSL_ERROR;
    memset(s, 0, sizeof *s);
    s->m = (const Model *)m;
    s->s = model_session_new(s->m);
    if (!s->s) {   /* out of memory, or the constants' copies over a limit */
        mem_free(s);
        return TSL_ERROR;
    }
    *out = s;
    return TSL_OK;
}

void tsl_session_free(tsl_Session *s) {
    if (!s) return;
    model_session_free(s->s);
    mem_free(s);
}

tsl_Status tsl_session_run(tsl_Session *s, tsl_Tensor *const *in, int nin, tsl_Tensor **out, int nout) {
    if (!s || nin < 0 || (nin && !in) || !out) return TSL_BADARG;
    s->err[0] = 0;
    if (nout != model_num_outputs(s->m)) {
        snprintf(s->err, sizeof s->err, "the model has %d outputs, room was given for %d", model_num_outputs(s->m), nout);
        return TSL_BADARG;
    }
    for (int i = 0; i < nin; i++)
        if (!in[i]) {
            const char *name = "?";
            if (i < model_num_inputs(s->m)) model_input_info(s->m, i, NULL, NULL, &name);
            snprintf(s->err, sizeof s->err, "input %d (%s) is NULL", i + 1, name);
            return TSL_BADARG;
        }
    for (int i = 0; i < nout; i++) out[i] = NULL;
    int rc = model_run(s->s, (Tensor *const *)in, nin, (Tensor **)out, s->err, sizeof s->err);
    return rc == 0 ? TSL_OK : rc == MODEL_INTERRUPTED ? TSL_INTERRUPTED : TSL_ERROR;
}

tsl_Status tsl_session_set_option(tsl_Session *s, tsl_Option opt, int64_t value) {
    if (!s) return TSL_BADARG;
    s->err[0] = 0;
    return api_set_option(model_session_interp(s->s), opt, value, s->err, sizeof s->err);
}

/* The session's interpreter's flags: what tsl_interrupt and tsl_timeout raise for a state. */
void tsl_session_interrupt(tsl_Session *s) {
    if (s) interp_interrupt(model_session_interp(s->s));
}

void tsl_session_timeout(tsl_Session *s) {
    if (s) interp_time_up(model_session_interp(s->s));
}

const char *tsl_session_error(const tsl_Session *s) { return s ? s->err : ""; }
