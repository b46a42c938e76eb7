/* io.c - NumPy .npy files (format v1/v2, little-endian, C order; f32 f64 i64 bool, and
 * int8/16/32, uint8/16/32, float16 read into i64 / f32), read from any RawIn (a file, a .npz
 * member: io_raw.h), and the helpers every reader opens files with. Every size read from a
 * file is checked before anything is allocated: a hostile or truncated file is an error,
 * never a crash. CSV is csv.c's. */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tops.h"
#include "mem.h"
#include "cpu/cpu.h"   /* op_transpose: a Fortran-ordered .npz member */
#include "io_raw.h"

static const char NPY_MAGIC[] = "\x93NUMPY";

/* Readers hold an open file while they allocate, so they allocate with mem_try_*: running
 * out of memory is then their own error (the file is closed on the way out), never the
 * out-of-memory jump of mem_alloc, which would leave the file open. */

FILE *io_open_regular(const char *path, const char *who, int64_t max_bytes) {
    const char *pre = who ? who : "", *sep = who ? ": " : "";
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before we can look at it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { op_failk(ERRK_IO, "%s%scannot open '%s': %s", pre, sep, path, strerror(errno)); return NULL; }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        op_failk(ERRK_IO, "%s%s'%s' is not a regular file", pre, sep, path);
        close(fd);
        return NULL;
    }
    if (max_bytes > 0 && st.st_size > max_bytes) {
        op_failk(ERRK_IO, "%s%s'%s' is larger than the limit of %lld bytes", pre, sep, path, (long long)max_bytes);
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *fp = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) ? NULL : fdopen(fd, "rb");
    if (!fp) {
        op_failk(ERRK_IO, "%s%scannot open '%s': %s", pre, sep, path, strerror(errno));
        close(fd);
    }
    return fp;
}

static const char *npy_descr(DType dt) {
    static const char *d[] = { "|b1", "<i8", "<f4", "<f8" };
    return d[dt];
}

/* Finds the value text after 'key': in the header dict. */
static const char *header_value(const char *h, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

/* How a .npy dtype is stored in the file and read into a tensor: the four dtypes as they are;
 * int8/16/32 and uint8/16/32 into i64, float16 into f32, as the spec says (section 5, v2:
 * every other dtype, uint64 included, is an error naming it in load_npy). An .npz member
 * (RawIn.any_npy) may also be uint64, read into i64 as load_safetensors reads it. */
typedef struct {
    const char *descr;   /* without the byte-order character */
    RawType type;
} NpyType;

static const NpyType npy_types[] = {
    { "b1", { 'b', 1, DT_BOOL } }, { "i1", { 'i', 1, DT_I64 } }, { "i2", { 'i', 2, DT_I64 } },
    { "i4", { 'i', 4, DT_I64 } },  { "i8", { 'i', 8, DT_I64 } }, { "u1", { 'u', 1, DT_I64 } },
    { "u2", { 'u', 2, DT_I64 } },  { "u4", { 'u', 4, DT_I64 } }, { "f2", { 'f', 2, DT_F32 } },
    { "f4", { 'f', 4, DT_F32 } },  { "f8", { 'f', 8, DT_F64 } }, { "u8", { 'u', 8, DT_I64 } },
};

static const RawType *npy_type_of(const char *got, bool any_npy, const char **why) {
    *why = "";
    char order = got[0];
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
        const RawType *t = &npy_types[i].type;
        if (strcmp(got + 1, npy_types[i].descr) || (t->kind == 'u' && t->size == 8 && !any_npy)) continue;
        /* one-byte types have no byte order (NumPy writes '|'); wider ones must be little-endian */
        if (order == '<' || (t->size == 1 && strchr("|=>", order))) return t;
        if (order == '>' && t->size > 1) { *why = " (big-endian data is not supported)"; return NULL; }
        return NULL;
    }
    return NULL;
}

static int parse_header(const char *h, const RawIn *in, const RawType **type, Shape *s, bool *fortran) {
    const char *who = in->who, *what = in->what;
    static const char *const keys[] = { "descr", "fortran_order", "shape" };
    for (int k = 0; k < 3; k++) {   /* NumPy's header is a dict literal: a key given twice is ambiguous */
        const char *first = header_value(h, keys[k]);
        if (first && header_value(first, keys[k])) {
            op_failk(ERRK_IO, "%s: %s has a malformed header (duplicate key '%s')", who, what, keys[k]);
            return -1;
        }
    }
    const char *d = header_value(h, "descr"), *f = header_value(h, "fortran_order"), *sh = header_value(h, "shape");
    if (!d || !f || !sh) { op_failk(ERRK_IO, "%s: %s has a malformed header", who, what); return -1; }
    char got[24] = { 0 };
    const char *why;
    if (sscanf(d, "'%20[^']'", got) != 1 || !(*type = npy_type_of(got, in->any_npy, &why))) {
        if (!got[0]) sscanf(d, "%20[^,}]", got);   /* a structured dtype: a list, not a string */
        op_failk(ERRK_IO, "%s: %s has dtype '%s'%s; supported are bool, int8/16/32/64, uint8/16/32%s and "
                "float16/32/64, little-endian", who, what, got, why, in->any_npy ? "/64" : "");
        return -1;
    }
    *fortran = !strncmp(f, "True", 4);
    if (!*fortran && strncmp(f, "False", 5)) { op_failk(ERRK_IO, "%s: %s has a malformed header", who, what); return -1; }
    /* the spec (section 5) makes Fortran order an error naming it in load_npy */
    if (*fortran && !in->any_npy) {
        op_failk(ERRK_IO, "%s: %s is in Fortran order; load_npy reads C order only (np.save of "
                 "np.ascontiguousarray(a) writes it; load_npz reads either)", who, what);
        return -1;
    }
    if (*sh != '(') { op_failk(ERRK_IO, "%s: %s has a malformed shape", who, what); return -1; }
    s->ndim = 0;
    const char *p = sh + 1;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == ')') break;
        if (s->ndim >= TSL_MAX_RANK) { op_failk(ERRK_IO, "%s: %s has rank above %d", who, what, TSL_MAX_RANK); return -1; }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0) { op_failk(ERRK_IO, "%s: %s has a malformed shape", who, what); return -1; }
        s->d[s->ndim++] = v;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p != ')') { op_failk(ERRK_IO, "%s: %s has a malformed shape", who, what); return -1; }
    }
    return 0;
}

/* IEEE half to float, subnormals, infinities and NaN included (exact: every half is a float). */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | man << 13;
    else if (exp) bits = sign | (exp + 112) << 23 | man << 13;
    else if (!man) bits = sign;
    else {   /* subnormal: normalise the mantissa */
        int e = -1;
        do { man <<= 1; e++; } while (!(man & 0x400));
        bits = sign | (uint32_t)(112 - e) << 23 | (man & 0x3FF) << 13;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Widens count little-endian elements of a file's type at raw into dst (i64 or f32). The
 * narrow data sits at the end of dst's buffer, so each element is read before its slot is
 * written. uint64 fits i64 only below 2^63: a larger value is an error naming it. */
static int raw_widen(const RawIn *in, const RawType *type, const unsigned char *raw, void *dst, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        const unsigned char *p = raw + i * type->size;
        uint64_t u = 0;
        for (int b = type->size - 1; b >= 0; b--) u = u << 8 | p[b];
        if (type->kind == 'f' || type->kind == 'h') {
            uint32_t bits = (uint32_t)u << 16;   /* bfloat16: a float's upper half */
            float f;
            memcpy(&f, &bits, sizeof f);
            ((float *)dst)[i] = type->kind == 'f' ? half_to_float((uint16_t)u) : f;
            continue;
        }
        if (type->kind == 'u' && u >> 63) {
            op_failk(ERRK_IO, "%s: %s holds the uint64 value %llu, above the largest i64 (9223372036854775807)",
                     in->who, in->what, (unsigned long long)u);
            return -1;
        }
        int bits = 8 * type->size;
        int64_t x = (int64_t)u;
        if (type->kind == 'i' && bits < 64 && (u >> (bits - 1)) & 1) x -= (int64_t)1 << bits;   /* sign */
        ((int64_t *)dst)[i] = x;
    }
    return 0;
}

Tensor *raw_read_tensor(RawIn *in, const RawType *type, const Shape *s) {
    Tensor *t = tensor_new(type->dt, s);
    if (!t) return NULL;
    /* a narrower type is read into the end of the tensor's buffer and widened in place, front
     * to back: element i's wide slot ends at or before narrow element i + 1 starts */
    size_t wide = dtype_size(type->dt), need = (size_t)t->size * (size_t)type->size;
    unsigned char *raw = (unsigned char *)t->data + (size_t)t->size * wide - need;
    int64_t got = need ? in->read(in, raw, need) : 0;
    if (got != (int64_t)need) {
        if (got >= 0) op_failk(ERRK_IO, "%s: %s is truncated", in->who, in->what);
        tensor_release(t);
        return NULL;
    }
    bool widen = type->size != (int)wide || (type->kind == 'u' && type->size == 8);
    if (widen && raw_widen(in, type, raw, t->data, t->size)) {
        tensor_release(t);
        return NULL;
    }
    if (type->dt == DT_BOOL)
        for (int64_t i = 0; i < t->size; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
    return t;
}

static int64_t file_read(RawIn *in, void *buf, size_t n) {
    size_t got = fread(buf, 1, n, in->handle);
    if (got < n && ferror((FILE *)in->handle)) {
        op_failk(ERRK_IO, "%s: cannot read %s: %s", in->who, in->what, strerror(errno));
        return -1;
    }
    return (int64_t)got;
}

RawIn raw_in_file(FILE *fp, const char *who, const char *what) {
    struct stat st;
    long at = ftell(fp);
    int64_t size = fstat(fileno(fp), &st) == 0 && at >= 0 ? (int64_t)st.st_size - at : 0;
    return (RawIn){ file_read, fp, size, who, what, false };
}

/* Fortran-ordered data of shape s is C-ordered data of s's axes reversed: read so, then
 * transposed back, so the result is the array NumPy holds (np.save of a.T writes this). */
static Tensor *read_fortran(RawIn *in, const RawType *type, const Shape *s) {
    Shape rs = { .ndim = s->ndim };
    int perm[TSL_MAX_RANK];
    for (int k = 0; k < s->ndim; k++) {
        rs.d[k] = s->d[s->ndim - 1 - k];
        perm[k] = s->ndim - 1 - k;
    }
    Tensor *raw = raw_read_tensor(in, type, &rs);
    if (!raw || s->ndim < 2) return raw;
    Tensor *t = op_transpose(raw, perm, s->ndim);
    tensor_release(raw);
    if (!t) op_failk(ERRK_MEMORY, "%s: out of memory reading %s", in->who, in->what);
    return t;
}

Tensor *npy_read(RawIn *in) {
    const char *who = in->who, *what = in->what;
    unsigned char pre[12];
    char *header = NULL;
    Tensor *t = NULL;
    int64_t got = in->read(in, pre, 10);
    if (got < 0) return NULL;
    if (got != 10 || memcmp(pre, NPY_MAGIC, 6)) {
        op_failk(ERRK_IO, "%s: %s is not a .npy file", who, what);
        return NULL;
    }
    uint32_t hlen;
    int64_t data_start;
    if (pre[6] == 1) { hlen = pre[8] | (uint32_t)pre[9] << 8; data_start = 10; }
    else if (pre[6] == 2 || pre[6] == 3) {
        if ((got = in->read(in, pre + 10, 2)) != 2) goto truncated;
        hlen = pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
        data_start = 12;
    } else { op_failk(ERRK_IO, "%s: %s has unsupported format version %d", who, what, pre[6]); return NULL; }
    if (hlen > (1u << 20)) { op_failk(ERRK_IO, "%s: %s has an oversized header", who, what); return NULL; }
    header = mem_try_alloc(hlen + 1);
    if (!header) { op_failk(ERRK_MEMORY, "%s: out of memory reading %s", who, what); return NULL; }
    if ((got = in->read(in, header, hlen)) != (int64_t)hlen) goto truncated;
    header[hlen] = 0;
    const RawType *type;
    Shape s;
    bool fortran;
    if (parse_header(header, in, &type, &s, &fortran)) goto out;
    int64_t count = shape_count(&s), need, left = in->size - data_start - (int64_t)hlen;
    if (count < 0) goto out;
    /* check the file holds the data before allocating */
    if (__builtin_mul_overflow(count, (int64_t)type->size, &need) || left < need) {
        op_failk(ERRK_IO, "%s: %s is truncated (the header promises more data than the file holds)", who, what);
        goto out;
    }
    if (left > need) {   /* spec section 5: bytes after the data are an error */
        op_failk(ERRK_IO, "%s: %s has %lld bytes after the data", who, what, (long long)(left - need));
        goto out;
    }
    if (!(t = fortran ? read_fortran(in, type, &s) : raw_read_tensor(in, type, &s))) goto out;
    char more;   /* the end, where an archive member's checksum is checked */
    if ((got = in->read(in, &more, 1)) != 0) {
        if (got > 0) op_failk(ERRK_IO, "%s: %s has bytes after the data", who, what);
        tensor_release(t);
        t = NULL;
    }
    goto out;
truncated:
    if (got >= 0) op_failk(ERRK_IO, "%s: %s is truncated", who, what);
out:
    mem_free(header);
    return t;
}

Tensor *npy_load(const char *path) {
    FILE *fp = io_open_regular(path, "load_npy", 0);
    if (!fp) return NULL;
    char what[PATH_MAX + 3];
    snprintf(what, sizeof what, "'%s'", path);
    RawIn in = raw_in_file(fp, "load_npy", what);
    Tensor *t = npy_read(&in);
    fclose(fp);
    return t;
}

size_t npy_header(const Tensor *t, unsigned char *buf, size_t cap) {
    char dict[1200];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(t->dtype));
    for (int i = 0; i < t->ndim; i++) n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld, ", (long long)t->shape[i]);
    if (t->ndim > 1) n -= 2;
    else if (t->ndim == 1) n -= 1;
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* pad with spaces so that magic + header ends on a 64-byte boundary, then '\n' */
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    uint16_t hlen = (uint16_t)(n + pad + 1);
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF), (unsigned char)(hlen >> 8) };
    size_t len = 10 + (size_t)hlen;
    if (len > cap) return 0;
    memcpy(buf, pre, 10);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', (size_t)pad);
    buf[len - 1] = '\n';
    return len;
}

int npy_save(const char *path, const Tensor *t) {
    unsigned char head[NPY_HEADER_MAX];
    size_t hlen = npy_header(t, head, sizeof head);
    IoWriter w;
    FILE *fp = io_write_begin(&w, path, "save_npy");
    if (!fp) return -1;
    size_t bytes = (size_t)t->size * dtype_size(t->dtype);
    bool ok = fwrite(head, 1, hlen, fp) == hlen && fwrite(t->data, 1, bytes, fp) == bytes;
    return io_write_end(&w, ok);
}

char *io_read_all(FILE *fp, const char *path, const char *who, size_t limit, size_t *len, bool *oom) {
    const char *pre = who ? who : "", *sep = who ? ": " : "";
    if (oom) *oom = false;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            size_t want = (n + 65536 + 1) * 2;
            char *grown = mem_try_realloc(buf, want);
            if (!grown) {
                op_failk(ERRK_MEMORY, "%s%sout of memory reading '%s'", pre, sep, path);
                if (oom) *oom = true;
                mem_free(buf);
                return NULL;
            }
            buf = grown;
            cap = want;
        }
        size_t got = fread(buf + n, 1, 65536, fp);
        n += got;
        if (got < 65536 || n > limit) break;   /* it may have grown since it was opened */
    }
    if (ferror(fp) || n > limit) {
        if (ferror(fp)) op_failk(ERRK_IO, "%s%scannot read '%s': %s", pre, sep, path, strerror(errno));
        else op_failk(ERRK_IO, "%s%s'%s' is larger than the limit of %zu bytes", pre, sep, path, limit);
        mem_free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}


int named_push(NamedTensors *nt, const char *name, size_t len, Tensor *t) {
    if (nt->n == nt->cap) {
        int want = nt->cap ? nt->cap * 2 : 8;
        char **names = mem_try_realloc(nt->names, sizeof(char *) * (size_t)want);
        if (names) nt->names = names;
        Tensor **ts = names ? mem_try_realloc(nt->ts, sizeof(Tensor *) * (size_t)want) : NULL;
        if (ts) nt->ts = ts;
        if (!ts) goto oom;
        nt->cap = want;
    }
    char *copy = mem_try_alloc(len + 1);
    if (!copy) goto oom;
    memcpy(copy, name, len);
    copy[len] = 0;
    nt->names[nt->n] = copy;
    nt->ts[nt->n++] = t;
    return 0;
oom:
    tensor_release(t);
    op_failk(ERRK_MEMORY, "out of memory");
    return -1;
}

void named_free(NamedTensors *nt) {
    for (int i = 0; i < nt->n; i++) {
        mem_free(nt->names[i]);
        tensor_release(nt->ts[i]);
    }
    mem_free(nt->names);
    mem_free(nt->ts);
    memset(nt, 0, sizeof *nt);
}
