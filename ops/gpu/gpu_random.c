/* gpu_random.c - rand, randn and randint drawn on the GPU from the CPU's stream. */
#include <math.h>
#include <string.h>
#include "gpu_impl.h"
#include "tops.h"

/* ---------- random numbers ---------- */

/* rand, randn, randint on the GPU draw the CPU's stream (ops/cpu/random.c): element i of a
 * draw uses Philox block (seed, counter + i), and the counter advances by the count, so
 * the same seed gives the same numbers on either device. */
int gpu_run_random(const OpCall *c, Tensor *out) {
    uint64_t key, counter;
    rng_get_state(&key, &counter);
    int kind = c->op == OP_RAND ? 0 : c->op == OP_RANDN ? 1 : 2;
    char err[400];
    if (GPU_CALL(random, kind, key, counter, c->at->i[0], c->at->i[1], out->data, out->size)) return -1;
    rng_set_state(key, counter + (uint64_t)out->size);
    return 0;
}
