/* tops.h - the tensor operations (the ops library's device-neutral API: what lang/ and vm/ call).
 *
 * Every op is declared once in ops.def and called through opcall.h's op_run; this header
 * adds one-call conveniences over it, calls that work on a tensor of any device, and the
 * host-side formatting and file I/O. The CPU library is ops/cpu/cpu.h. Functions
 * returning Tensor* return NEW tensors and BORROW their arguments; NULL (or -1) means
 * failure with the message in op_error(). No function here modifies a tensor it was given,
 * except the `_into` target. */
#ifndef TSL_TOPS_H
#define TSL_TOPS_H
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include "tensor.h"

#include "opcall.h"

/* ---------- conveniences over op_run (ops/op.c) ----------
 * One call each, for C callers and tests: the same validation, inference and kernels as
 * every other caller. They return NEW tensors (NULL: error in op_error()). */
Tensor *op_unary(OpCode op, const Tensor *a);
Tensor *op_binary(OpCode op, const Tensor *a, const Tensor *b);
/* tensor (op) number, or number (op) tensor when num_left: the number is a weak scalar. */
Tensor *op_binary_scalar(OpCode op, const Tensor *a, double x, bool num_left);
/* Reductions: axes[n] (n == -1: all axes). Negative axes count from the end. */
Tensor *op_reduce(OpCode op, const Tensor *a, const int *axes, int n, bool keepdims);
Tensor *op_softmax(const Tensor *a, int axis, bool log);
Tensor *op_matmul(const Tensor *a, const Tensor *b);
Tensor *op_reshape(Tensor *a, const Shape *s);   /* `s` may hold one -1; shares a's buffer */
Tensor *op_full(const Shape *s, double v, DType dt);
/* The kernel set OpenBLAS uses; and, once per process before any state computes (tsl_new, the
 * unit tests' main): OpenBLAS held to the calling thread, a better kernel set than its generic
 * fallback where the CPU runs it, and the tiles the pool may split products at (ops/cpu/linalg.c). */
const char *blas_core_name(void);
void blas_choose_kernels(void);
/* Releases the copies reductions keep for reuse (ops/cpu/reduce.c). */
void cpu_reduce_cache_free(void);
Tensor *op_rand(const Shape *s);
Tensor *op_randn(const Shape *s);
Tensor *op_randint(int64_t lo, int64_t hi, const Shape *s);

/* ---------- any device ----------
 * What lang/ and vm/ call instead of a device's own functions: each dispatches through the
 * device registry (opcall.h), reading a tensor on the host where only the host can. */
/* t on device d (started on first use): t itself (retained) when it is there, else a NEW copy. */
Tensor *tensor_to(const Tensor *t, Device d);
/* t converted to dt on its own device (astype's kernel: NaN, inf or out of range to i64 is an error). */
Tensor *tensor_astype(const Tensor *t, DType dt);
/* Same dtype, shape and element bits (compared on the host; a failed copy compares unequal). */
bool tensor_equal(const Tensor *a, const Tensor *b);

/* Numbers: the elementwise ops on f64 numbers (NumPy float64 semantics). */
double op_unary_number(OpCode op, double x);
double op_binary_number(OpCode op, double x, double y);   /* K_BINARY/K_COMPARE on numbers */
double op_round_number(double x, int64_t decimals);       /* NumPy's around(x, decimals) in f64 */
/* Broadcast two shapes (NumPy rules); -1 with an error naming `opname` on mismatch. */
int shape_broadcast(const Shape *a, const Shape *b, Shape *out, const char *opname);

/* Indexing (NumPy basic and advanced). */
/* IDX_NEWAXIS (`nil`, NumPy's None) inserts an axis of length 1 and takes none of t's. The
 * values are a graph file's (docs/format.md): new kinds go at the end. */
typedef enum { IDX_INT, IDX_SLICE, IDX_ELLIPSIS, IDX_TENSOR, IDX_NEWAXIS } IndexKind;
typedef struct {
    IndexKind kind;
    int64_t i;                     /* IDX_INT */
    bool at_run_time;              /* IDX_INT: i is known only when the index runs (a static
                                      graph's register), so infer_index cannot check it */
    bool has_start, has_stop;      /* IDX_SLICE */
    int64_t start, stop, step;
    const Tensor *t;               /* IDX_TENSOR: i64 gather or bool mask */
} IndexItem;
/* t[idx], or a copy of t with v (broadcast to the indexed shape) set at idx when set, on
 * t's device: indexing runs on the host, so a GPU tensor goes through a host copy. */
Tensor *tensor_index(Tensor *t, const IndexItem *idx, int n, const Tensor *v, bool set);
/* The flat position in a of every element a[idx] reads (i64, the result's shape): what the
 * gradient of indexing scatters back to. */
Tensor *op_index_positions(const Tensor *a, const IndexItem *idx, int n);

/* Random numbers: Philox4x32-10, a stream defined by (seed, counter). */
void rng_seed(uint64_t seed);
void rng_get_state(uint64_t *seed, uint64_t *counter);
void rng_set_state(uint64_t seed, uint64_t counter);

/* I/O (ops/io.c, ops/io_write.c, ops/csv.c, ops/npz.c, ops/safetensors.c). */
/* Opens path to read only when it is a regular file of at most max_bytes (0: any size):
 * a FIFO, a device or a directory would block or read without end. NULL with the reason
 * in op_error(), prefixed "who: " when who is not NULL. */
FILE *io_open_regular(const char *path, const char *who, int64_t max_bytes);
/* The rest of fp, NUL-terminated (mem_free it), *len its length; NULL when it cannot be read,
 * is larger than limit or there is no memory for it (*oom set, when oom is not NULL), with
 * the reason in op_error() (prefixed "who: " when who is not NULL). */
char *io_read_all(FILE *fp, const char *path, const char *who, size_t limit, size_t *len, bool *oom);
Tensor *npy_load(const char *path);
int npy_save(const char *path, const Tensor *t);               /* 0 ok, -1 err */
/* Tensors with names, in order: what load_npz and load_safetensors read and save_npz and
 * save_safetensors write. named_push TAKES t (released when it fails: -1, out of memory);
 * named_free releases every tensor and name. */
typedef struct {
    int n, cap;
    char **names;
    Tensor **ts;
} NamedTensors;
int named_push(NamedTensors *nt, const char *name, size_t len, Tensor *t);
void named_free(NamedTensors *nt);
/* .npz (ops/npz.c, on libzip): each member a .npy, named NAME.npy; 0 ok, -1 err. */
int npz_load(const char *path, NamedTensors *out);
int npz_save(const char *path, const NamedTensors *in, bool compressed);
/* safetensors (ops/safetensors.c, on jansson): 0 ok, -1 err. */
int safetensors_load(const char *path, NamedTensors *out);
int safetensors_save(const char *path, const NamedTensors *in);
/* CSV (ops/csv.c). Without a header, a 2-D f32 tensor of numbers; with one, a table whose
 * columns are numbers (f32, NaN where a field is empty) or text. */
typedef struct {
    char delim;          /* ',' */
    int64_t skip_rows;   /* lines skipped before anything is read */
    bool skip_header;    /* the tensor form: the next line is skipped too */
} CsvOptions;
typedef struct {
    char *name;
    bool text;       /* a field is neither a number nor empty */
    float *nums;     /* !text: nrows values */
    char **texts;    /* text: nrows strings, as the file has them (not validated as UTF-8) */
} CsvColumn;
typedef struct {
    int ncols;
    int64_t nrows;
    CsvColumn *cols;
} CsvTable;
Tensor *csv_load(const char *path, const CsvOptions *o);
int csv_table_load(const char *path, const CsvOptions *o, CsvTable *t);   /* 0 ok, -1 err */
void csv_table_free(CsvTable *t);
int csv_save(const char *path, const Tensor *t, const char *header);   /* 0 ok, -1 err */
/* Writing a file whole or not at all (io_write.c): io_write_begin opens a temporary file in
 * path's folder (making missing folders; a link at path writes where it points; an existing
 * non-regular file is refused); io_write_end(w, ok), with ok false when a write the caller
 * made failed, syncs it and renames it over path, or removes it and leaves path untouched.
 * NULL / -1 with "who: cannot write 'path': reason" in op_error(). io_write_file does both
 * for bytes in memory. */
typedef struct {
    FILE *fp;
    const char *who, *path;
    int mode;                   /* the replaced file's permissions, -1 for a new file */
    char target[PATH_MAX];      /* path, or where the link at path points */
    char tmp[PATH_MAX + 64];
} IoWriter;
FILE *io_write_begin(IoWriter *w, const char *path, const char *who);
int io_write_end(IoWriter *w, bool ok);
int io_write_file(const char *path, const char *who, const void *data, size_t n);

/* NumPy-style text, newly allocated (mem_free it; ops/format.c). */
char *tensor_format(const Tensor *t);
/* The settings tensor_format uses, as NumPy's printoptions (all >= 0); the current ops context's. */
typedef struct {
    int64_t precision, threshold, edgeitems, linewidth;
} PrintOptions;
PrintOptions tensor_print_options(void);
void tensor_set_print_options(PrintOptions o);

#endif
