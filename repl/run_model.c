/* run_model.c - `tsl run MODEL.tslg --in X.npy ... [--out Y.npy ...]`: runs a graph that
 * export() wrote, without its source, on the public API alone (a model, a session, .npy files).
 * `tsl run MODEL.tslg --help` prints its signature (tsl_model_signature, as help() does).
 *
 * Inputs are the model's flattened signature in order (tsl_model_input); outputs go to the
 * --out files in order, or are printed as TSL prints tensors when no --out is given (through
 * a state, so the text is the language's). Every failure is one line on stderr and status 1;
 * a usage mistake is status 2, as for the rest of the command line. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "repl.h"

#define MAX_FILES 256

typedef struct {
    const char *model;
    const char *in[MAX_FILES], *out[MAX_FILES];
    int nin, nout;
    bool help;            /* --help: print the model's signature instead of running it */
} RunArgs;

static int fail(const char *what, const char *path, const char *why) {
    fputs("tsl: error: ", stderr);
    fputs(what, stderr);
    if (path) {
        fputs(" '", stderr);
        repl_put_escaped(stderr, path);
        fputs("'", stderr);
    }
    if (why && *why) {
        fputs(": ", stderr);
        repl_put_escaped(stderr, why);
    }
    fputc('\n', stderr);
    return 1;
}

/* 0, or 2 after a usage error. */
static int parse_args(int argc, char **argv, RunArgs *r) {
    memset(r, 0, sizeof *r);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool in = !strcmp(a, "--in"), out = !strcmp(a, "--out");
        if ((in || out) && i + 1 < argc) {
            int *n = in ? &r->nin : &r->nout;
            if (*n == MAX_FILES) return fail("tsl run takes at most 256 --in and 256 --out files", NULL, NULL) + 1;
            (in ? r->in : r->out)[(*n)++] = argv[++i];
        } else if (in || out) {
            fprintf(stderr, "tsl: error: %s needs a .npy file\n", a);
            return 2;
        } else if (!strcmp(a, "--help")) {
            r->help = true;
        } else if (!r->model && a[0] != '-') {
            r->model = a;
        } else {
            fputs("tsl: error: tsl run: unexpected argument '", stderr);
            repl_put_escaped(stderr, a);
            fputs("' (usage: tsl run MODEL.tslg --in X.npy ... [--out Y.npy ...] | --help)\n", stderr);
            return 2;
        }
    }
    if (!r->model) {
        fputs("tsl: error: usage: tsl run MODEL.tslg --in X.npy ... [--out Y.npy ...] | --help\n", stderr);
        return 2;
    }
    return 0;
}

static int check_counts(const tsl_Model *m, const RunArgs *r) {
    int want = tsl_model_num_inputs(m), outs = tsl_model_num_outputs(m);
    if (r->nin != want) {
        fprintf(stderr, "tsl: error: the model takes %d input%s, %d --in file%s given\n", want, want == 1 ? "" : "s",
                r->nin, r->nin == 1 ? " was" : "s were");
        fputs(tsl_model_signature(m), stderr);   /* what it takes: as help() and --help print it */
        return 1;
    }
    if (r->nout && r->nout != outs) {
        fprintf(stderr, "tsl: error: the model has %d output%s, %d --out file%s given\n", outs, outs == 1 ? "" : "s",
                r->nout, r->nout == 1 ? " was" : "s were");
        return 1;
    }
    return 0;
}

/* Prints output i as TSL prints a tensor (a state does the formatting). */
static int print_output(tsl_State *S, int i, int nout, tsl_Tensor *t) {
    if (nout > 1) printf("output %d:\n", i + 1);
    if (tsl_set_tensor(S, "y", t) != TSL_OK || tsl_run_string(S, "<tsl run>", "print(y)", -1) != TSL_OK) {
        fputs(tsl_error_report(S), stderr);
        return 1;
    }
    return 0;
}

static int write_outputs(const RunArgs *r, tsl_Tensor **out, int nout) {
    tsl_State *S = NULL;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) return fail("out of memory", NULL, NULL);
    int rc = 0;
    for (int i = 0; i < nout && rc == 0; i++) {
        if (!r->nout) rc = print_output(S, i, nout, out[i]);
        else if (tsl_npy_write(S, r->out[i], out[i]) != TSL_OK) rc = fail("cannot write", r->out[i], tsl_error_message(S));
    }
    tsl_free(S);
    return rc;
}

static int read_inputs(const tsl_Model *m, const RunArgs *r, tsl_Tensor **in) {
    tsl_State *S = NULL;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) return fail("out of memory", NULL, NULL);
    int rc = 0;
    for (int i = 0; i < r->nin && rc == 0; i++)
        if (tsl_npy_read(S, r->in[i], &in[i]) != TSL_OK) {
            const char *name = "";
            tsl_model_input(m, i, NULL, NULL, NULL, &name);
            fprintf(stderr, "tsl: error: input %d (%s): ", i + 1, name);
            repl_put_escaped(stderr, tsl_error_message(S));   /* it names the file */
            fputc('\n', stderr);
            rc = 1;
        }
    tsl_free(S);
    return rc;
}

static int run_loaded(const tsl_Model *m, const RunArgs *r) {
    if (check_counts(m, r)) return 1;
    int nout = tsl_model_num_outputs(m);
    tsl_Tensor *in[MAX_FILES] = { 0 }, **out = calloc((size_t)nout + 1, sizeof *out);
    tsl_Session *s = NULL;
    int rc = out ? read_inputs(m, r, in) : fail("out of memory", NULL, NULL);
    if (rc == 0 && tsl_session_new(m, &s) != TSL_OK) rc = fail("out of memory starting a session for", r->model, NULL);
    if (rc == 0 && tsl_session_run(s, in, r->nin, out, nout) != TSL_OK) rc = fail(tsl_session_error(s), NULL, NULL);
    if (rc == 0) rc = write_outputs(r, out, nout);
    for (int i = 0; out && i < nout; i++) tsl_tensor_free(out[i]);
    for (int i = 0; i < r->nin; i++) tsl_tensor_free(in[i]);
    tsl_session_free(s);
    free(out);
    return rc;
}

int run_model_command(int argc, char **argv) {
    RunArgs r;
    int rc = parse_args(argc, argv, &r);
    if (rc) return rc;
    tsl_State *S = NULL;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) return fail("out of memory", NULL, NULL);
    tsl_Model *m = NULL;
    if (tsl_model_load(S, r.model, &m) != TSL_OK) rc = fail(tsl_error_message(S), NULL, NULL);   /* it names the file */
    tsl_free(S);
    if (rc == 0 && r.help) fputs(tsl_model_signature(m), stdout);
    else if (rc == 0) rc = run_loaded(m, &r);
    tsl_model_free(m);
    return rc;
}
