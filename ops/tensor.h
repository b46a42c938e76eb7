/* tensor.h - the n-dimensional array every op works on.
 *
 * A Tensor is an immutable value once built: ops never write into a tensor that was
 * handed to them; they return new ones. Data is contiguous, C order, in a reference-
 * counted buffer, so shape-only ops (reshape, squeeze, expand_dims) share the buffer.
 *
 * Ownership: functions returning Tensor* return a NEW reference (rc already 1 or
 * retained); arguments are BORROWED. tensor_release(NULL) is a no-op.
 * Errors: functions that can fail return NULL and leave the message in op_error(). */
#ifndef TSL_TENSOR_H
#define TSL_TENSOR_H
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include "num.h"

#define TSL_MAX_RANK 32

/* Ordered for promotion: the larger of two dtypes wins (bool < i64 < f32 < f64). */
typedef enum { DT_BOOL, DT_I64, DT_F32, DT_F64 } DType;
typedef enum { DEV_CPU, DEV_GPU, DEV__COUNT } Device;   /* the device registry's rows (ops/op.c) */

typedef struct {
    int rc;
    size_t bytes;
    void *data;
    Device device;   /* who owns data: host memory (DEV_CPU, 0), or the GPU plugin's allocator */
} TBuf;

typedef struct Tensor {
    int rc;
    DType dtype;
    Device device;
    int ndim;
    int64_t size;                   /* product of shape */
    int64_t shape[TSL_MAX_RANK];
    TBuf *buf;
    void *data;                     /* == buf->data */
} Tensor;

typedef struct {
    int ndim;
    int64_t d[TSL_MAX_RANK];
} Shape;

/* A dimension known only at run time (a static graph's register after a bool-mask index,
 * unique(), a slice with run-time bounds: vm/compile/cshape.c). Never in a tensor's shape;
 * shape_str prints it as "?". */
#define SHAPE_RT (-1)
static inline bool shape_is_runtime(const Shape *s) {
    for (int i = 0; i < s->ndim; i++)
        if (s->d[i] == SHAPE_RT) return true;
    return false;
}
/* Whether a tensor of shape s has the shape `want`, which may hold run-time dimensions (a
 * graph exported with a dynamic axis takes any size there). */
static inline bool shape_fits(const Shape *s, const Shape *want) {
    if (s->ndim != want->ndim) return false;
    for (int i = 0; i < s->ndim; i++)
        if (want->d[i] != SHAPE_RT && s->d[i] != want->d[i]) return false;
    return true;
}

/* Whether a double converts to int64_t without overflow (2^63 is exact as a double). */
static inline int double_fits_i64(double x) { return x >= -9223372036854775808.0 && x < 9223372036854775808.0; }

/* Limits and accounting live in the current ops context (ops/ctx.h): max_tensor_bytes
 * (--max-tensor-bytes), max_live (--max-memory), tensor_live_bytes, obj_live_bytes, ... */
/* Bytes the program may still allocate under --max-memory (INT64_MAX when unlimited). */
int64_t mem_budget_left(void);
/* Whether the program already holds more than --max-memory (objects are counted as made). */
bool mem_over_budget(void);
/* The one message of the limit, wherever it is hit (printf format; the limit as long long). */
#define MAX_MEMORY_MSG "out of memory: the program's memory would exceed --max-memory (%lld bytes)"
/* Bookkeeping that grows with a program's work but is neither a tensor nor an object (the
 * autograd tape, the compiled backward's PUSH stacks) counts toward --max-memory with the
 * objects (obj_live_bytes): mem_charge(n) before allocating n more bytes of it, false with
 * the limit's message in op_error() when they do not fit; mem_charge(-n) once freed. */
bool mem_charge(int64_t bytes);
/* What keeping a tensor alive costs besides its data, which tensor accounting counts: its
 * header and buffer record, each with the allocator's header (mem.c). The tape and the PUSH
 * stacks charge it per tensor they keep: a million saved scalars are a million headers. */
#define TENSOR_KEEP_BYTES ((int64_t)(sizeof(Tensor) + sizeof(TBuf) + 64))

const char *dtype_name(DType t);
int dtype_parse(const char *s, DType *out);   /* 0 ok, -1 unknown */
/* inline: the VM and the kernels ask for it on every instruction */
static inline size_t dtype_size(DType t) { return t == DT_BOOL ? 1 : t == DT_F32 ? 4 : 8; }
int dtype_is_float(DType t);

/* The kind of an error, as a TSL program sees it in a caught error's `kind` (spec section
 * 12): one row each, the name in the row. Each raise point says which it is. */
#define ERRK_LIST(X)                                                                        \
    X(VALUE, "value") X(TYPE, "type") X(SHAPE, "shape") X(INDEX, "index") X(KEY, "key")     \
    X(IO, "io") X(MEMORY, "memory") X(DEVICE, "device") X(ASSERT, "assert") X(USER, "user")
typedef enum {
#define X(name, text) ERRK_##name,
    ERRK_LIST(X)
#undef X
    ERRK__COUNT
} ErrKind;
const char *errkind_name(ErrKind k);
int errkind_parse(const char *s);   /* the ErrKind named s, or -1 */

/* Errors: the current ops context's message and kind (set by op_fail, read by callers).
 * op_fail is op_failk(ERRK_VALUE, ...). */
void op_failk(ErrKind k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void op_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *op_error(void);
ErrKind op_error_kind(void);

/* Checked element count of a shape; -1 (error set) on a negative dim or overflow. */
int64_t shape_count(const Shape *s);
int shape_equal(const Shape *a, const Shape *b);
void shape_of(const Tensor *t, Shape *s);
/* Writes "[2, 3]" into buf. */
const char *shape_str(const Shape *s, char *buf, size_t n);

Tensor *tensor_new(DType dt, const Shape *s);          /* uninitialised data */
/* For device allocators: the bytes of count elements of dt (0), or -1 with the
 * --max-tensor-bytes error; and a new tensor's header over buffer b (on b's device). */
int tensor_nbytes(DType dt, const Shape *s, int64_t count, int64_t *bytes);
void tensor_init(Tensor *t, DType dt, const Shape *s, int64_t count, TBuf *b);
Tensor *tensor_zeros(DType dt, const Shape *s);
Tensor *tensor_scalar(DType dt, double v);              /* 0-d */
Tensor *tensor_view(Tensor *t, const Shape *s);         /* same buffer, new shape (same count) */
Tensor *tensor_copy(const Tensor *t);                   /* on t's device */
/* t's elements readable on the host: t itself retained when it is on the CPU, else a new
 * CPU copy. Every reader of ->data outside a device's kernels goes through this. */
Tensor *tensor_host(const Tensor *t);
Tensor *tensor_retain(Tensor *t);
void tensor_release(Tensor *t);

/* Element 0 of t as a double, copied from its device when it is not on the CPU (truth
 * values, item(), numbers from one-element tensors): 0, or -1 with the error set. */
int tensor_first(const Tensor *t, double *x);

/* Element access through double (used by printing, conversion and small helpers); CPU
 * tensors only (tensor_host first). */
double tensor_get(const Tensor *t, int64_t i);
void tensor_set(Tensor *t, int64_t i, double v);

#endif
