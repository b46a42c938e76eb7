/* io.c - NumPy .npy files (format v1/v2, little-endian, C order; f32 f64 i64 bool, and
 * int8/16/32, uint8/16/32, float16 read into i64 / f32) and CSV of numbers. Every size read
 * from a file is checked before anything is allocated: a hostile or truncated file is an
 * error, never a crash. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "tops.h"
#include "mem.h"

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
 * int8/16/32 and uint8/16/32 into i64, float16 into f32, as the spec says. */
typedef struct {
    const char *descr;   /* without the byte-order character */
    char kind;           /* 'b' bool, 'i' signed, 'u' unsigned, 'f' float */
    int size;            /* bytes in the file */
    DType dt;            /* the tensor's dtype */
} NpyType;

static const NpyType npy_types[] = {
    { "b1", 'b', 1, DT_BOOL }, { "i1", 'i', 1, DT_I64 }, { "i2", 'i', 2, DT_I64 }, { "i4", 'i', 4, DT_I64 },
    { "i8", 'i', 8, DT_I64 },  { "u1", 'u', 1, DT_I64 }, { "u2", 'u', 2, DT_I64 }, { "u4", 'u', 4, DT_I64 },
    { "f2", 'f', 2, DT_F32 },  { "f4", 'f', 4, DT_F32 }, { "f8", 'f', 8, DT_F64 },
};

static const NpyType *npy_type_of(const char *got, const char **why) {
    *why = "";
    char order = got[0];
    for (size_t i = 0; i < sizeof npy_types / sizeof npy_types[0]; i++) {
        const NpyType *t = &npy_types[i];
        if (strcmp(got + 1, t->descr)) continue;
        /* one-byte types have no byte order (NumPy writes '|'); wider ones must be little-endian */
        if (order == '<' || (t->size == 1 && strchr("|=>", order))) return t;
        if (order == '>' && t->size > 1) { *why = " (big-endian data is not supported)"; return NULL; }
        return NULL;
    }
    return NULL;
}

static int parse_header(const char *h, const char *path, const NpyType **type, Shape *s) {
    static const char *const keys[] = { "descr", "fortran_order", "shape" };
    for (int k = 0; k < 3; k++) {   /* NumPy's header is a dict literal: a key given twice is ambiguous */
        const char *first = header_value(h, keys[k]);
        if (first && header_value(first, keys[k])) {
            op_failk(ERRK_IO, "load_npy: '%s' has a malformed header (duplicate key '%s')", path, keys[k]);
            return -1;
        }
    }
    const char *d = header_value(h, "descr"), *f = header_value(h, "fortran_order"), *sh = header_value(h, "shape");
    if (!d || !f || !sh) { op_failk(ERRK_IO, "load_npy: '%s' has a malformed header", path); return -1; }
    char got[24] = { 0 };
    const char *why;
    if (sscanf(d, "'%20[^']'", got) != 1 || !(*type = npy_type_of(got, &why))) {
        if (!got[0]) sscanf(d, "%20[^,}]", got);   /* a structured dtype: a list, not a string */
        op_failk(ERRK_IO, "load_npy: '%s' has dtype '%s'%s; supported are bool, int8/16/32/64, uint8/16/32 and "
                "float16/32/64, little-endian", path, got, why);
        return -1;
    }
    if (strncmp(f, "False", 5)) { op_failk(ERRK_IO, "load_npy: '%s' is in Fortran order; only C order is supported", path); return -1; }
    if (*sh != '(') { op_failk(ERRK_IO, "load_npy: '%s' has a malformed shape", path); return -1; }
    s->ndim = 0;
    const char *p = sh + 1;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == ')') break;
        if (s->ndim >= TSL_MAX_RANK) { op_failk(ERRK_IO, "load_npy: '%s' has rank above %d", path, TSL_MAX_RANK); return -1; }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0) { op_failk(ERRK_IO, "load_npy: '%s' has a malformed shape", path); return -1; }
        s->d[s->ndim++] = v;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p != ')') { op_failk(ERRK_IO, "load_npy: '%s' has a malformed shape", path); return -1; }
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

/* Widens count little-endian elements of a narrow .npy type at raw into dst (i64 or f32). The
 * narrow data sits at the end of dst's buffer, so each element is read before its slot is written. */
static void npy_widen(const NpyType *type, const unsigned char *raw, void *dst, int64_t count) {
    for (int64_t i = 0; i < count; i++) {
        const unsigned char *p = raw + i * type->size;
        uint32_t u = 0;
        for (int b = type->size - 1; b >= 0; b--) u = u << 8 | p[b];
        if (type->kind == 'f') {
            ((float *)dst)[i] = half_to_float((uint16_t)u);
            continue;
        }
        int64_t x = u;
        if (type->kind == 'i' && (u >> (8 * type->size - 1)) & 1) x -= (int64_t)1 << (8 * type->size);   /* sign */
        ((int64_t *)dst)[i] = x;
    }
}

Tensor *npy_load(const char *path) {
    FILE *fp = io_open_regular(path, "load_npy", 0);
    if (!fp) return NULL;
    Tensor *t = NULL;
    char *header = NULL;
    unsigned char pre[12];
    if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, NPY_MAGIC, 6)) {
        op_failk(ERRK_IO, "load_npy: '%s' is not a .npy file", path);
        goto out;
    }
    uint32_t hlen;
    long data_start;
    if (pre[6] == 1) { hlen = pre[8] | (uint32_t)pre[9] << 8; data_start = 10; }
    else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, fp) != 2) { op_failk(ERRK_IO, "load_npy: '%s' is truncated", path); goto out; }
        hlen = pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
        data_start = 12;
    } else { op_failk(ERRK_IO, "load_npy: '%s' has unsupported format version %d", path, pre[6]); goto out; }
    if (hlen > (1u << 20)) { op_failk(ERRK_IO, "load_npy: '%s' has an oversized header", path); goto out; }
    header = mem_try_alloc(hlen + 1);
    if (!header) { op_failk(ERRK_MEMORY, "load_npy: out of memory reading '%s'", path); goto out; }
    if (fread(header, 1, hlen, fp) != hlen) { op_failk(ERRK_IO, "load_npy: '%s' is truncated", path); goto out; }
    header[hlen] = 0;
    const NpyType *type;
    Shape s;
    if (parse_header(header, path, &type, &s)) goto out;
    DType dt = type->dt;
    int64_t count = shape_count(&s);
    if (count < 0) goto out;
    /* check the file holds the data before allocating */
    if (fseek(fp, 0, SEEK_END)) { op_failk(ERRK_IO, "load_npy: cannot read '%s'", path); goto out; }
    long size = ftell(fp);
    int64_t need;
    if (__builtin_mul_overflow(count, (int64_t)type->size, &need) || size - data_start - (long)hlen < need) {
        op_failk(ERRK_IO, "load_npy: '%s' is truncated (the header promises more data than the file holds)", path);
        goto out;
    }
    if (size - data_start - (long)hlen > need) {   /* spec section 5: bytes after the data are an error */
        op_failk(ERRK_IO, "load_npy: '%s' has %ld bytes after the data", path, size - data_start - (long)hlen - (long)need);
        goto out;
    }
    if (fseek(fp, data_start + (long)hlen, SEEK_SET)) { op_failk(ERRK_IO, "load_npy: cannot read '%s'", path); goto out; }
    if (!(t = tensor_new(dt, &s))) goto out;
    /* a narrower type is read into the end of the tensor's buffer and widened in place, front
     * to back: element i's wide slot ends at or before narrow element i + 1 starts */
    size_t wide = dtype_size(dt);
    unsigned char *raw = count ? (unsigned char *)t->data + (size_t)count * wide - (size_t)need : NULL;
    if (count && fread(raw, 1, (size_t)need, fp) != (size_t)need) {
        op_failk(ERRK_IO, "load_npy: '%s' is truncated", path);
        tensor_release(t);
        t = NULL;
        goto out;
    }
    if (count && type->size != (int)wide) npy_widen(type, raw, t->data, count);
    if (dt == DT_BOOL)
        for (int64_t i = 0; i < count; i++) ((uint8_t *)t->data)[i] = ((uint8_t *)t->data)[i] != 0;
out:
    mem_free(header);
    fclose(fp);
    return t;
}

int npy_save(const char *path, const Tensor *t) {
    char dict[1200];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", npy_descr(t->dtype));
    for (int i = 0; i < t->ndim; i++) n += snprintf(dict + n, sizeof dict - (size_t)n, "%lld, ", (long long)t->shape[i]);
    if (t->ndim > 1) n -= 2;
    else if (t->ndim == 1) n -= 1;
    n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
    /* pad with spaces so that magic + header ends on a 64-byte boundary, then '\n' */
    int total = 10 + n + 1;
    int pad = (64 - total % 64) % 64;
    IoWriter w;
    FILE *fp = io_write_begin(&w, path, "save_npy");
    if (!fp) return -1;
    uint16_t hlen = (uint16_t)(n + pad + 1);
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF), (unsigned char)(hlen >> 8) };
    int ok = fwrite(pre, 1, 10, fp) == 10 && fwrite(dict, 1, (size_t)n, fp) == (size_t)n;
    for (int i = 0; ok && i < pad; i++) ok = fputc(' ', fp) != EOF;
    ok = ok && fputc('\n', fp) != EOF;
    size_t bytes = (size_t)t->size * dtype_size(t->dtype);
    ok = ok && fwrite(t->data, 1, bytes, fp) == bytes;
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

/* One line (with its newline) into *line, grown as needed: its length, -1 at the end of the
 * file, -2 out of memory. getline's contract, on the state's allocator. */
static int64_t read_line(FILE *fp, char **line, size_t *cap) {
    size_t n = 0;
    int ch;
    while ((ch = getc(fp)) != EOF) {
        if (n + 2 > *cap) {
            size_t want = *cap ? *cap * 2 : 256;
            char *grown = mem_try_realloc(*line, want);
            if (!grown) return -2;
            *line = grown;
            *cap = want;
        }
        (*line)[n++] = (char)ch;
        if (ch == '\n') break;
    }
    if (n == 0 && ch == EOF) return -1;
    (*line)[n] = 0;
    return (int64_t)n;
}

/* CSV: numbers separated by commas, one row per line; every row the same length. */
Tensor *csv_load(const char *path, bool skip_header) {
    FILE *fp = io_open_regular(path, "load_csv", 0);
    if (!fp) return NULL;
    double *vals = NULL;
    int64_t nvals = 0, cap = 0, rows = 0, cols = -1, lineno = 0;
    char *line = NULL;
    size_t lcap = 0;
    Tensor *t = NULL;
    int64_t len;
    while ((len = read_line(fp, &line, &lcap)) >= 0) {
        lineno++;
        if (lineno == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) {   /* a UTF-8 byte-order mark */
            memmove(line, line + 3, (size_t)len - 2);
            len -= 3;
        }
        if (lineno == 1 && skip_header) continue;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if ((int64_t)strlen(line) != len) {   /* the parser below would stop at the NUL: a silently short row */
            op_failk(ERRK_IO, "load_csv: '%s' line %lld contains a NUL byte", path, (long long)lineno);
            goto out;
        }
        if (len == 0) continue;
        int64_t c = 0;
        char *p = line;
        for (;;) {
            char *end;
            double v = strtod(p, &end);
            while (*end == ' ' || *end == '\t') end++;
            if (end == p || (*end && *end != ',')) {
                op_failk(ERRK_IO, "load_csv: '%s' line %lld: not a number in column %lld", path, (long long)lineno, (long long)c + 1);
                goto out;
            }
            if (nvals == cap) {
                int64_t want = cap ? cap * 2 : 1024;
                double *grown = mem_try_realloc(vals, sizeof(double) * (size_t)want);
                if (!grown) { op_failk(ERRK_MEMORY, "load_csv: out of memory reading '%s'", path); goto out; }
                vals = grown;
                cap = want;
            }
            vals[nvals++] = v;
            c++;
            if (!*end) break;
            p = end + 1;
        }
        if (cols >= 0 && c != cols) {
            op_failk(ERRK_IO, "load_csv: '%s' line %lld has %lld columns, expected %lld", path, (long long)lineno, (long long)c,
                    (long long)cols);
            goto out;
        }
        cols = c;
        rows++;
    }
    if (len == -2) { op_failk(ERRK_MEMORY, "load_csv: out of memory reading '%s'", path); goto out; }
    {
        Shape s = { 2, { rows, cols < 0 ? 0 : cols } };
        if ((t = tensor_new(DT_F32, &s)))
            for (int64_t i = 0; i < nvals; i++) ((float *)t->data)[i] = (float)vals[i];
    }
out:
    mem_free(line);
    mem_free(vals);
    fclose(fp);
    return t;
}

/* The shortest text that load_csv (strtod, then to the tensor's f32) reads back as x: f32
 * elements need at most 9 significant digits, f64 ones 17. */
static void csv_number(char *buf, size_t size, double x, DType dt) {
    if (dt == DT_BOOL || dt == DT_I64) { snprintf(buf, size, "%.0f", x); return; }
    int most = dt == DT_F32 ? 9 : 17;
    for (int p = 1; p <= most; p++) {
        snprintf(buf, size, "%.*g", p, x);
        double back = strtod(buf, NULL);
        if (dt == DT_F32 ? (float)back == (float)x : back == x) return;
        if (x != x) return;   /* nan */
    }
}

/* CSV as load_csv reads it: a 2-D tensor one row per line, a 1-D one one element per line (as
 * numpy.savetxt writes it); header, when given, is the first line. */
int csv_save(const char *path, const Tensor *t, const char *header) {
    if (t->ndim != 1 && t->ndim != 2) {
        op_failk(ERRK_SHAPE, "save_csv: needs a 1-D or 2-D tensor, got one of rank %d", t->ndim);
        return -1;
    }
    IoWriter w;
    FILE *fp = io_write_begin(&w, path, "save_csv");
    if (!fp) return -1;
    int64_t rows = t->shape[0], cols = t->ndim == 2 ? t->shape[1] : 1;
    bool ok = !header || fprintf(fp, "%s\n", header) >= 0;
    char num[64];
    for (int64_t r = 0; ok && r < rows; r++) {
        for (int64_t c = 0; ok && c < cols; c++) {
            csv_number(num, sizeof num, tensor_get(t, r * cols + c), t->dtype);
            ok = fprintf(fp, c ? ",%s" : "%s", num) >= 0;
        }
        ok = ok && fputc('\n', fp) != EOF;
    }
    return io_write_end(&w, ok);
}
