/* conv.h - the geometry of the convolution and pooling ops (NCHW tensors, PyTorch's weight
 * layouts), shared by their shape inference (ops/infer_conv.c), the CPU kernels
 * (ops/cpu/conv.c) and the backward rules (ops/grad.c).
 *
 * Every call is described as one plain convolution: an input [n, c, h, w] read through a
 * window of kh x kw taps (dilated by dh, dw) at strides sh, sw after padding, giving an
 * output [n, o, oh, ow]. conv1d is conv2d with h = kh = 1. A transposed convolution is the
 * same description read backwards: its result is the input side (h, w) and its operand x
 * the output side (oh, ow), so one im2col serves both and their gradients are each other.
 *
 * Window attributes (P_WIN, P_PADW) live in OpAttrs.pairs: a P_WIN at pairs[slot] as
 * [h, w]; a P_PADW at pairs[slot] (top, bottom) and pairs[slot + 1] (left, right), so the
 * gradient's convolutions can pad the two sides differently ("same" with an even kernel). */
#ifndef TSL_CONV_H
#define TSL_CONV_H
#include "opcall.h"

/* A P_WIN that is nil (a pool's stride: the kernel's size). */
#define WIN_NIL 0
/* A P_PADW given as "same": sized when the kernel is known (conv_geom). */
#define CONV_PAD_SAME (-1)

typedef struct {
    int64_t n, c, h, w;          /* the input side */
    int64_t o, oh, ow;           /* the output side */
    int64_t kh, kw, sh, sw, dh, dw;
    int64_t pt, pb, pl, pr;      /* padding: top, bottom, left, right */
    int64_t groups;
} ConvGeom;

/* The call's geometry from its operand shapes and attributes, with every check that does
 * not depend on the data (the errors eager and static code give). 0, or -1 with op_fail. */
int conv_geom(const OpCall *c, ConvGeom *g);

/* Adaptive pooling's window along one axis: [start, end) of output position i. */
static inline int64_t adaptive_start(int64_t i, int64_t in, int64_t out) { return i * in / out; }
static inline int64_t adaptive_end(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

/* Window attribute setters for calls built in C (the backward rules): pairs grows to cover. */
void conv_set_win(OpAttrs *at, OpCode op, const char *name, int64_t h, int64_t w);
void conv_set_pad(OpAttrs *at, OpCode op, int64_t t, int64_t b, int64_t l, int64_t r);
/* The attributes of op with every parameter at its default. */
OpAttrs conv_attrs(OpCode op);

#endif
