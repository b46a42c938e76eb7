/* tops.h - the tensor operations (the ops library's public API).
 *
 * Every op is declared once in ops.def; this header exposes the generic entry points
 * (op_unary, op_binary, op_reduce, ...) that the interpreter and, later, the static VM
 * and GPU backend call. All functions return NEW tensors and BORROW their arguments;
 * NULL means failure with the message in op_error(). No function here ever modifies a
 * tensor it was given. */
#ifndef TSL_TOPS_H
#define TSL_TOPS_H
#include <stdbool.h>
#include "tensor.h"

#include "opcall.h"

/* Kernels per device: elementwise ops run on a tensor's device through its table. The CPU
 * table (ops/cpu/) is the reference; the CUDA table joins when the GPU backend exists. */
typedef struct {
    const char *name;
    int (*unary)(OpCode op, DType dt, const void *src, void *dst, int64_t n);
    int (*binary)(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out, int64_t n);
} DeviceKernels;
extern const DeviceKernels *const device_kernels[2];   /* indexed by Device */
/* The kernel table for a device, or NULL (error set) when that device is not available. */
const DeviceKernels *kernels_for(Device d);

/* Elementwise. */
Tensor *op_unary(OpCode op, const Tensor *a);
double op_unary_number(OpCode op, double x);          /* the same op on a number */
double op_binary_number(OpCode op, double x, double y);   /* K_BINARY/K_COMPARE on numbers (NumPy f64) */
/* NumPy around(x, decimals) over n elements of dtype dt (the kernel of round with decimals). */
int cpu_round_decimals(DType dt, const void *src, void *dst, int64_t n, int64_t decimals);
Tensor *op_binary(OpCode op, const Tensor *a, const Tensor *b);
/* tensor (op) number, or number (op) tensor when num_left; PyTorch scalar promotion. */
Tensor *op_binary_scalar(OpCode op, const Tensor *a, double x, bool num_left);
/* The dtype the binary op's result will have (for shape/dtype inference). */
int op_binary_dtype(OpCode op, DType a, DType b, DType *out);
/* Broadcast two shapes (NumPy rules); -1 with an error naming `opname` on mismatch. */
int shape_broadcast(const Shape *a, const Shape *b, Shape *out, const char *opname);

/* The elementwise kernels themselves, on contiguous runs (the static VM's fused groups
 * call them on chunks; the results are the same bits as over the whole tensor).
 * cpu_binary: a and b in dtype ct with strides 0 (a scalar) or 1. */
int cpu_unary(OpCode op, DType dt, const void *src, void *dst, int64_t n);
int cpu_binary(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out, int64_t n);

/* Reductions: axes[n] (n == -1: all axes). Negative axes count from the end. */
Tensor *op_reduce(OpCode op, const Tensor *a, const int *axes, int n, bool keepdims);
Tensor *op_softmax(const Tensor *a, int axis, bool log);
/* The same into r, which has the result's dtype and shape (and is not a). */
int op_reduce_into(OpCode op, const Tensor *a, const int *axes, int n, bool keepdims, Tensor *r);
int op_softmax_into(const Tensor *a, int axis, bool log, Tensor *r);

Tensor *op_matmul(const Tensor *a, const Tensor *b);

/* The same ops writing into a tensor the caller provides, which already has the result's
 * dtype and shape (the static VM's reused buffers). For elementwise ops out may be an
 * input of the same shape; for matmul and index it must not alias an input.
 * 0, or -1 with the message in op_error(). */
int op_unary_into(OpCode op, const Tensor *a, Tensor *out);
int op_binary_into(OpCode op, const Tensor *a, const Tensor *b, Tensor *out);
int op_binary_scalar_into(OpCode op, const Tensor *t, double x, bool num_left, Tensor *out);
int op_matmul_into(const Tensor *a, const Tensor *b, Tensor *out);
Tensor *op_outer(const Tensor *a, const Tensor *b);
Tensor *op_where(const Tensor *c, const Tensor *a, const Tensor *b);
Tensor *op_clip(const Tensor *a, double lo, double hi);
Tensor *op_astype(const Tensor *a, DType dt);

/* Shape ops. reshape: `s` may hold one -1. perm may be NULL (reverse axes). */
Tensor *op_reshape(Tensor *a, const Shape *s);
Tensor *op_transpose(const Tensor *a, const int *perm, int n);
Tensor *op_expand_dims(Tensor *a, int axis);
Tensor *op_squeeze(Tensor *a, const int *axes, int n);  /* n == -1: every size-1 axis */
Tensor *op_concat(Tensor *const *ts, int n, int axis);
Tensor *op_stack(Tensor *const *ts, int n, int axis);
Tensor *op_broadcast_to(const Tensor *a, const Shape *s);
/* The same into r (the result's dtype and shape; not a). */
int op_transpose_into(const Tensor *a, const int *perm, int n, Tensor *r);
void op_broadcast_into(const Tensor *a, Tensor *r);

/* Indexing (NumPy basic and advanced). */
typedef enum { IDX_INT, IDX_SLICE, IDX_ELLIPSIS, IDX_TENSOR } IndexKind;
typedef struct {
    IndexKind kind;
    int64_t i;                     /* IDX_INT */
    bool has_start, has_stop;      /* IDX_SLICE */
    int64_t start, stop, step;
    const Tensor *t;               /* IDX_TENSOR: i64 gather or bool mask */
} IndexItem;
Tensor *op_index(const Tensor *a, const IndexItem *idx, int n);
int op_index_into(const Tensor *a, const IndexItem *idx, int n, Tensor *out);   /* out must not be a */
/* A copy of `a` with the indexed elements set from `v` (broadcast to the indexed shape). */
Tensor *op_index_set(const Tensor *a, const IndexItem *idx, int n, const Tensor *v);

/* Construction. */
Tensor *op_full(const Shape *s, double v, DType dt);
Tensor *op_arange(double start, double stop, double step, DType dt);
Tensor *op_linspace(double a, double b, int64_t n);
Tensor *op_eye(int64_t n);

/* Random numbers: Philox4x32-10, a stream defined by (seed, counter). */
void rng_seed(uint64_t seed);
void rng_get_state(uint64_t *seed, uint64_t *counter);
void rng_set_state(uint64_t seed, uint64_t counter);
Tensor *op_rand(const Shape *s);
Tensor *op_randn(const Shape *s);
Tensor *op_randint(int64_t lo, int64_t hi, const Shape *s);
/* The same draws into a tensor of the right dtype (f32; i64 for ints, hi > lo). */
void rng_fill_uniform(Tensor *r);
void rng_fill_normal(Tensor *r);
void rng_fill_int(Tensor *r, int64_t lo, int64_t hi);

/* Comparison. */
bool tensor_equal(const Tensor *a, const Tensor *b);          /* dtype, shape, bits */
int op_allclose(const Tensor *a, const Tensor *b, double rtol, double atol);  /* 1/0, -1 err */

/* I/O. */
Tensor *npy_load(const char *path);
int npy_save(const char *path, const Tensor *t);               /* 0 ok, -1 err */
Tensor *csv_load(const char *path, bool skip_header);

/* NumPy-style text, newly allocated (mem_free it). */
char *tensor_format(const Tensor *t);

#endif
