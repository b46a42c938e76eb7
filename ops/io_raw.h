/* io_raw.h - tensors read from and written into the file formats of others (.npy, .npz,
 * safetensors): a stream of bytes to read from, element types as those files store them, and
 * the .npy reader and header writer that .npz reuses on its members. For the readers in ops/
 * (io.c, npz.c, safetensors.c); lang/ and vm/ call the entry points in tops.h.
 * Everything here returns NULL / -1 with the reason in op_error(), prefixed "who: ". */
#ifndef TSL_IO_RAW_H
#define TSL_IO_RAW_H
#include <stdio.h>
#include "tops.h"

/* Bytes read in order from a file or a member of an archive. */
typedef struct RawIn {
    /* up to n bytes into buf: how many (fewer only at the end), -1 on a read error (op_error set) */
    int64_t (*read)(struct RawIn *in, void *buf, size_t n);
    void *handle;       /* the FILE or the archive member */
    int64_t size;       /* the bytes it holds, as its container says */
    const char *who;    /* the built-in, for messages: "load_npy" */
    const char *what;   /* what is read, quoted, for messages: "'w.npy'", "'w.npz' member 'b.npy'" */
    /* npy_read: Fortran order and uint64 are read (an .npz member). The spec's rules for
     * load_npy (section 5) make both an error there; it says nothing of .npz. */
    bool any_npy;
} RawIn;

/* A RawIn over an open file, from where it stands to its end. */
RawIn raw_in_file(FILE *fp, const char *who, const char *what);

/* An element type as a file stores it, little-endian, and the dtype it is read into (as
 * load_npy reads the narrower NumPy types: integers into i64, half floats into f32). */
typedef struct {
    char kind;   /* 'b' bool, 'i' signed, 'u' unsigned, 'f' IEEE float, 'h' bfloat16 */
    int size;    /* bytes per element */
    DType dt;
} RawType;

/* A new tensor of dtype type->dt and shape s from the next shape_count(s) elements of in. */
Tensor *raw_read_tensor(RawIn *in, const RawType *type, const Shape *s);

/* A .npy array from in, which holds exactly one (bytes after it are an error). */
Tensor *npy_read(RawIn *in);
/* The .npy header of t (magic to newline, padded to 64 bytes) into buf: its length. */
size_t npy_header(const Tensor *t, unsigned char *buf, size_t cap);
#define NPY_HEADER_MAX 1280

#endif
