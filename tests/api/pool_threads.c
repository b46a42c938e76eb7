/* pool_threads.c - the thread pool under ThreadSanitizer (`make tsan`): three states on three
 * threads run a program whose elementwise ops, fused static group, reductions and matmuls (one
 * with a static epilogue) are large enough to be split over a pool of 2 threads, all at once (one job runs at a time: the
 * others run theirs alone), and every result must equal, bit for bit, what --threads 1 gave. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "tsl.h"

#define THREADS 3
#define ROUNDS 6
#define NRESULTS 7

static const char *program =
    "seed(3)\n"
    "x = randn([300000])\n"
    "ew = tanh(x) * 2 + x\n"
    "static { fused = 0.5 * x * (1 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))) }\n"
    "rows = sum(reshape(x, [3000, 100]), axis=1)\n"
    "cols = sum(reshape(x, [30, 10000]), axis=0)\n"
    "lse = logsumexp(reshape(x, [1500, 200]), axis=-1)\n"
    "w = reshape(x[:262144], [512, 512])\n"
    "a = reshape(x[:32768], [64, 512])\n"
    "mm = a @ w\n"
    "static { mme = relu(a @ w + w[0]) }\n";
static const char *names[NRESULTS] = { "ew", "fused", "rows", "cols", "lse", "mm", "mme" };
static tsl_Tensor *expected[NRESULTS];   /* read-only once the threads start */

/* Runs the program in a new state; results[k] new references. 0 on success. */
static int run_program(tsl_Tensor **results) {
    tsl_State *S;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) return 1;
    int rc = tsl_run_string(S, "<pool>", program, -1) != TSL_OK;
    for (int k = 0; !rc && k < NRESULTS; k++) rc = tsl_get_tensor(S, names[k], &results[k]) != TSL_OK;
    if (rc) fprintf(stderr, "pool_threads: %s\n", tsl_error_report(S));
    tsl_free(S);
    return rc;
}

static int same(const tsl_Tensor *a, const tsl_Tensor *b) {
    size_t bytes = (size_t)tsl_tensor_size(a) * sizeof(float);
    return tsl_tensor_size(a) == tsl_tensor_size(b) && !memcmp(tsl_tensor_data(a), tsl_tensor_data(b), bytes);
}

static void *worker(void *arg) {
    (void)arg;
    long bad = 0;
    for (int r = 0; r < ROUNDS; r++) {
        tsl_Tensor *got[NRESULTS] = { NULL };
        if (run_program(got)) bad++;
        for (int k = 0; k < NRESULTS; k++) {
            if (got[k] && !same(got[k], expected[k])) bad++;
            tsl_tensor_free(got[k]);
        }
    }
    return (void *)bad;
}

int main(void) {
    tsl_set_threads(1);
    if (run_program(expected)) return 1;
    tsl_set_threads(2);
    pthread_t th[THREADS];
    for (long i = 0; i < THREADS; i++) pthread_create(&th[i], NULL, worker, NULL);
    long bad = 0;
    for (int i = 0; i < THREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += (long)r;
    }
    for (int k = 0; k < NRESULTS; k++) tsl_tensor_free(expected[k]);
    printf("pool: %d states x %d runs on a pool of %d threads, %ld results differ from --threads 1\n", THREADS,
           ROUNDS, tsl_threads(), bad);
    return bad != 0;
}
