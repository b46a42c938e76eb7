/* random.c - Philox4x32-10 counter-based random numbers.
 *
 * The stream is defined by (seed, counter): element i of a draw uses the 128-bit block
 * philox(key = seed, counter + i), and the counter then advances by the element count.
 * So a static graph that knows the counter at its start draws exactly the numbers eager
 * execution would, and leaves the generator in the same state. The generator starts at
 * seed 0. */
#include <math.h>
#include "cpu.h"
#include "ctx.h"

/* The generator's state is the current ops context's (ctx.h): each interpreter and each
 * model session draws from its own stream. */
void rng_seed(uint64_t seed) { rng_set_state(seed, 0); }
void rng_get_state(uint64_t *seed, uint64_t *counter) {
    OpsCtx *c = ops_ctx();
    *seed = c->rng_key;
    *counter = c->rng_counter;
}
void rng_set_state(uint64_t seed, uint64_t counter) {
    OpsCtx *c = ops_ctx();
    c->rng_key = seed;
    c->rng_counter = counter;
}

static void philox(uint64_t ctr, uint64_t key, uint32_t out[4]) {
    uint32_t c0 = (uint32_t)ctr, c1 = (uint32_t)(ctr >> 32), c2 = 0, c3 = 0;
    uint32_t k0 = (uint32_t)key, k1 = (uint32_t)(key >> 32);
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

/* Uniform in [0, 1) with 24 bits: exactly representable in f32, never 1.0. */
static double unit24(uint32_t w) { return (double)(w >> 8) * (1.0 / 16777216.0); }


void rng_fill_uniform(Tensor *r) {
    OpsCtx *c = ops_ctx();
    const uint64_t key = c->rng_key, start = c->rng_counter;
    float *o = r->data;
    for (int64_t i = 0; i < r->size; i++) {
        uint32_t w[4];
        philox(start + (uint64_t)i, key, w);
        o[i] = (float)unit24(w[0]);
    }
    c->rng_counter = start + (uint64_t)r->size;
}

/* Box-Muller: u1 in (0, 1], u2 in [0, 1); z = sqrt(-2 ln u1) cos(2 pi u2). */

void rng_fill_normal(Tensor *r) {
    OpsCtx *c = ops_ctx();
    const uint64_t key = c->rng_key, start = c->rng_counter;
    float *o = r->data;
    for (int64_t i = 0; i < r->size; i++) {
        uint32_t w[4];
        philox(start + (uint64_t)i, key, w);
        double u1 = ((double)(((uint64_t)w[0] << 21) ^ (w[1] >> 11)) + 1.0) * (1.0 / 9007199254740992.0);
        double u2 = (double)(((uint64_t)w[2] << 21) ^ (w[3] >> 11)) * (1.0 / 9007199254740992.0);
        o[i] = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
    c->rng_counter = start + (uint64_t)r->size;
}


void rng_fill_int(Tensor *r, int64_t lo, int64_t hi) {
    OpsCtx *c = ops_ctx();
    const uint64_t key = c->rng_key, start = c->rng_counter;
    uint64_t range = (uint64_t)hi - (uint64_t)lo;
    int64_t *o = r->data;
    for (int64_t i = 0; i < r->size; i++) {
        uint32_t w[4];
        philox(start + (uint64_t)i, key, w);
        uint64_t x = ((uint64_t)w[0] << 32) | w[1];
        o[i] = (int64_t)((uint64_t)lo + x % range);
    }
    c->rng_counter = start + (uint64_t)r->size;
}
