/* io.c - NumPy .npy files (format v1/v2, little-endian, C order, f32 f64 i64 bool) and
 * CSV of numbers. Every size read from a file is checked before anything is allocated:
 * a hostile or truncated file is an error, never a crash. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cpu.h"
#include "mem.h"

static const char NPY_MAGIC[] = "\x93NUMPY";

FILE *io_open_regular(const char *path, const char *who, int64_t max_bytes) {
    const char *pre = who ? who : "", *sep = who ? ": " : "";
    /* O_NONBLOCK: opening a FIFO must not wait for a writer before we can look at it */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) { op_fail("%s%scannot open '%s': %s", pre, sep, path, strerror(errno)); return NULL; }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        op_fail("%s%s'%s' is not a regular file", pre, sep, path);
        close(fd);
        return NULL;
    }
    if (max_bytes > 0 && st.st_size > max_bytes) {
        op_fail("%s%s'%s' is larger than the limit of %lld bytes", pre, sep, path, (long long)max_bytes);
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *fp = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) ? NULL : fdopen(fd, "rb");
    if (!fp) {
        op_fail("%s%scannot open '%s': %s", pre, sep, path, strerror(errno));
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

static int parse_header(const char *h, const char *path, DType *dt, Shape *s) {
    static const char *const keys[] = { "descr", "fortran_order", "shape" };
    for (int k = 0; k < 3; k++) {   /* NumPy's header is a dict literal: a key given twice is ambiguous */
        const char *first = header_value(h, keys[k]);
        if (first && header_value(first, keys[k])) {
            op_fail("load_npy: '%s' has a malformed header (duplicate key '%s')", path, keys[k]);
            return -1;
        }
    }
    const char *d = header_value(h, "descr"), *f = header_value(h, "fortran_order"), *sh = header_value(h, "shape");
    if (!d || !f || !sh) { op_fail("load_npy: '%s' has a malformed header", path); return -1; }
    int found = 0;
    for (int t = 0; t < 4; t++) {
        const char *want = npy_descr((DType)t);
        char quoted[16];
        snprintf(quoted, sizeof quoted, "'%s'", want);
        if (!strncmp(d, quoted, strlen(quoted)) ||
            (t == DT_BOOL && !strncmp(d, "'<b1'", 5))) { *dt = (DType)t; found = 1; break; }
    }
    if (!found) {
        char got[24] = { 0 };
        sscanf(d, "'%20[^']", got);
        op_fail("load_npy: '%s' has dtype '%s'; supported are <f4 <f8 <i8 |b1 (little-endian)", path, got);
        return -1;
    }
    if (strncmp(f, "False", 5)) { op_fail("load_npy: '%s' is in Fortran order; only C order is supported", path); return -1; }
    if (*sh != '(') { op_fail("load_npy: '%s' has a malformed shape", path); return -1; }
    s->ndim = 0;
    const char *p = sh + 1;
    for (;;) {
        while (*p == ' ') p++;
        if (*p == ')') break;
        if (s->ndim >= TSL_MAX_RANK) { op_fail("load_npy: '%s' has rank above %d", path, TSL_MAX_RANK); return -1; }
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0) { op_fail("load_npy: '%s' has a malformed shape", path); return -1; }
        s->d[s->ndim++] = v;
        p = end;
        while (*p == ' ') p++;
        if (*p == ',') p++;
        else if (*p != ')') { op_fail("load_npy: '%s' has a malformed shape", path); return -1; }
    }
    return 0;
}

Tensor *npy_load(const char *path) {
    FILE *fp = io_open_regular(path, "load_npy", 0);
    if (!fp) return NULL;
    Tensor *t = NULL;
    char *header = NULL;
    unsigned char pre[12];
    if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, NPY_MAGIC, 6)) {
        op_fail("load_npy: '%s' is not a .npy file", path);
        goto out;
    }
    uint32_t hlen;
    long data_start;
    if (pre[6] == 1) { hlen = pre[8] | (uint32_t)pre[9] << 8; data_start = 10; }
    else if (pre[6] == 2 || pre[6] == 3) {
        if (fread(pre + 10, 1, 2, fp) != 2) { op_fail("load_npy: '%s' is truncated", path); goto out; }
        hlen = pre[8] | (uint32_t)pre[9] << 8 | (uint32_t)pre[10] << 16 | (uint32_t)pre[11] << 24;
        data_start = 12;
    } else { op_fail("load_npy: '%s' has unsupported format version %d", path, pre[6]); goto out; }
    if (hlen > (1u << 20)) { op_fail("load_npy: '%s' has an oversized header", path); goto out; }
    header = mem_alloc(hlen + 1);
    if (fread(header, 1, hlen, fp) != hlen) { op_fail("load_npy: '%s' is truncated", path); goto out; }
    header[hlen] = 0;
    DType dt;
    Shape s;
    if (parse_header(header, path, &dt, &s)) goto out;
    int64_t count = shape_count(&s);
    if (count < 0) goto out;
    /* check the file holds the data before allocating */
    if (fseek(fp, 0, SEEK_END)) { op_fail("load_npy: cannot read '%s'", path); goto out; }
    long size = ftell(fp);
    int64_t need;
    if (__builtin_mul_overflow(count, (int64_t)dtype_size(dt), &need) || size - data_start - (long)hlen < need) {
        op_fail("load_npy: '%s' is truncated (the header promises more data than the file holds)", path);
        goto out;
    }
    if (fseek(fp, data_start + (long)hlen, SEEK_SET)) { op_fail("load_npy: cannot read '%s'", path); goto out; }
    if (!(t = tensor_new(dt, &s))) goto out;
    if (fread(t->data, 1, (size_t)need, fp) != (size_t)need) {
        op_fail("load_npy: '%s' is truncated", path);
        tensor_release(t);
        t = NULL;
        goto out;
    }
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
    /* O_NONBLOCK: a FIFO nobody reads fails (ENXIO) instead of blocking the open forever */
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666), flags = fd < 0 ? -1 : fcntl(fd, F_GETFL);
    FILE *fp = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) ? NULL : fdopen(fd, "wb");
    if (!fp) {
        op_fail("save_npy: cannot open '%s': %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    uint16_t hlen = (uint16_t)(n + pad + 1);
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xFF), (unsigned char)(hlen >> 8) };
    int ok = fwrite(pre, 1, 10, fp) == 10 && fwrite(dict, 1, (size_t)n, fp) == (size_t)n;
    for (int i = 0; ok && i < pad; i++) ok = fputc(' ', fp) != EOF;
    ok = ok && fputc('\n', fp) != EOF;
    size_t bytes = (size_t)t->size * dtype_size(t->dtype);
    ok = ok && fwrite(t->data, 1, bytes, fp) == bytes;
    ok = (fclose(fp) == 0) && ok;
    if (!ok) { op_fail("save_npy: cannot write '%s'", path); return -1; }
    return 0;
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
    ssize_t len;
    while ((len = getline(&line, &lcap, fp)) >= 0) {
        lineno++;
        if (lineno == 1 && len >= 3 && !memcmp(line, "\xEF\xBB\xBF", 3)) {   /* a UTF-8 byte-order mark */
            memmove(line, line + 3, (size_t)len - 2);
            len -= 3;
        }
        if (lineno == 1 && skip_header) continue;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = 0;
        if ((ssize_t)strlen(line) != len) {   /* the parser below would stop at the NUL: a silently short row */
            op_fail("load_csv: '%s' line %lld contains a NUL byte", path, (long long)lineno);
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
                op_fail("load_csv: '%s' line %lld: not a number in column %lld", path, (long long)lineno, (long long)c + 1);
                goto out;
            }
            if (nvals == cap) {
                cap = cap ? cap * 2 : 1024;
                vals = mem_realloc(vals, sizeof(double) * (size_t)cap);
            }
            vals[nvals++] = v;
            c++;
            if (!*end) break;
            p = end + 1;
        }
        if (cols >= 0 && c != cols) {
            op_fail("load_csv: '%s' line %lld has %lld columns, expected %lld", path, (long long)lineno, (long long)c,
                    (long long)cols);
            goto out;
        }
        cols = c;
        rows++;
    }
    {
        Shape s = { 2, { rows, cols < 0 ? 0 : cols } };
        if ((t = tensor_new(DT_F32, &s)))
            for (int64_t i = 0; i < nvals; i++) ((float *)t->data)[i] = (float)vals[i];
    }
out:
    free(line);
    mem_free(vals);
    fclose(fp);
    return t;
}
