/* threads.c - one loaded model, four threads, a session each (spec section 9): every thread
 * runs the model on its own inputs many times and checks each result is equal, bit for bit,
 * to what a single-threaded run gave for the same input. Built with ThreadSanitizer by
 * `make tsan`, so a data race between sessions fails the run even when the numbers agree.
 * Usage: threads MODEL.tslg   (a model with one f32 input and one f32 output) */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tsl.h"

#define THREADS 4
#define INPUTS 8      /* distinct inputs, each run by every thread */
#define ROUNDS 25

static tsl_Model *model;
static tsl_Tensor *expected[INPUTS];   /* read-only once the threads start */

/* Input k: a deterministic pattern of the model's input shape; an axis exported to take any
 * size (-1) has 1 + 3k (input k: a batch of its own size). */
static tsl_Tensor *make_input(int k) {
    int ndim;
    int64_t shape[TSL_MAX_DIMS], n = 1;
    tsl_model_input(model, 0, NULL, &ndim, shape, NULL);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0) shape[i] = 1 + 3 * k;
        n *= shape[i];
    }
    float *data = malloc(sizeof(float) * (size_t)n);
    for (int64_t i = 0; i < n; i++) data[i] = (float)((i * 7 + k * 13) % 17) / 17.0f - 0.5f;
    tsl_Tensor *t = NULL;
    tsl_tensor_new(NULL, TSL_F32, ndim, shape, data, &t);
    free(data);
    return t;
}

static int same(const tsl_Tensor *a, const tsl_Tensor *b) {
    size_t bytes = (size_t)tsl_tensor_size(a) * sizeof(float);
    return tsl_tensor_size(a) == tsl_tensor_size(b) && !memcmp(tsl_tensor_data(a), tsl_tensor_data(b), bytes);
}

/* Each thread makes its own inputs (equal to the main thread's): a tensor's reference count is
 * not atomic, so a tensor is handed to one thread at a time; the model is what is shared. */
static void *worker(void *arg) {
    long id = (long)arg, bad = 0;
    tsl_Session *s;
    tsl_Tensor *inputs[INPUTS];
    for (int k = 0; k < INPUTS; k++) inputs[k] = make_input(k);
    if (tsl_session_new(model, &s) != TSL_OK) return (void *)1;
    for (int r = 0; r < ROUNDS; r++)
        for (int k = 0; k < INPUTS; k++) {
            int which = (k + (int)id) % INPUTS;   /* the threads run different inputs at once */
            tsl_Tensor *out = NULL;
            if (tsl_session_run(s, &inputs[which], 1, &out, 1) != TSL_OK) {
                fprintf(stderr, "thread %ld: %s\n", id, tsl_session_error(s));
                bad++;
            } else if (!same(out, expected[which])) bad++;
            tsl_tensor_free(out);
        }
    tsl_session_free(s);
    for (int k = 0; k < INPUTS; k++) tsl_tensor_free(inputs[k]);
    return (void *)bad;
}

int main(int argc, char **argv) {
    if (argc != 2) { fputs("usage: threads MODEL.tslg\n", stderr); return 2; }
    tsl_State *S;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) return 1;
    if (tsl_model_load(S, argv[1], &model) != TSL_OK) {
        fprintf(stderr, "threads: %s\n", tsl_error_message(S));
        return 1;
    }
    tsl_Session *one;
    tsl_session_new(model, &one);
    for (int k = 0; k < INPUTS; k++) {
        tsl_Tensor *in = make_input(k);
        tsl_Status st = tsl_session_run(one, &in, 1, &expected[k], 1);
        tsl_tensor_free(in);
        if (st != TSL_OK) {
            fprintf(stderr, "threads: %s\n", tsl_session_error(one));
            return 1;
        }
    }
    tsl_session_free(one);
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, (void *)i);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += (long)r;
    }
    for (int k = 0; k < INPUTS; k++) tsl_tensor_free(expected[k]);
    tsl_model_free(model);
    tsl_free(S);
    printf("threads: %d threads x %d runs, %ld results differ from the single-threaded run\n", THREADS,
           ROUNDS * INPUTS, bad);
    return bad != 0;
}
