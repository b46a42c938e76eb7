/* attention.h - scaled_dot_product_attention composed from ops (ops/attention.c): the
 * backward rule and the GPU build it; the CPU kernel (ops/cpu/attention.c) runs in blocks. */
#ifndef TSL_ATTENTION_H
#define TSL_ATTENTION_H
#include "grad.h"

/* 1 / sqrt(d), the scale of the scores for head size d. */
double attn_scale(int64_t d);
/* softmax(q @ k^T * scale (+ mask | where mask), causal) along the keys: [..., L, S].
 * mask: a none GVal when absent. */
GVal attn_probs(GradBuilder *b, GVal q, GVal k, GVal mask, bool causal);
/* attn_probs(...) @ v: the op's result, composed. */
GVal attn_composed(GradBuilder *b, GVal q, GVal k, GVal v, GVal mask, bool causal);

#endif
