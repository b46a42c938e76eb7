/* npz.c - NumPy .npz archives on libzip: a zip file whose members NAME.npy are .npy arrays
 * (np.savez stores them, np.savez_compressed deflates them). Each member is read by the .npy
 * reader of io.c straight from libzip's stream, its size and checksum checked by libzip; an
 * archive is written in memory through libzip and then to the file whole or not at all
 * (io_write.c). libzip allocates with malloc, outside the state's allocator: only what it
 * holds while a call runs, every handle closed before the call returns. */
#include <limits.h>
#include <string.h>
#include <time.h>
#include <zip.h>
#include "tops.h"
#include "mem.h"
#include "io_raw.h"

static int64_t member_read(RawIn *in, void *buf, size_t n) {
    size_t done = 0;
    while (done < n) {
        zip_int64_t got = zip_fread(in->handle, (char *)buf + done, n - done);
        if (got < 0) {
            op_failk(ERRK_IO, "%s: cannot read %s: %s", in->who, in->what, zip_file_strerror(in->handle));
            return -1;
        }
        if (got == 0) break;
        done += (size_t)got;
    }
    return (int64_t)done;
}

static bool has_suffix(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !memcmp(s + n - k, suffix, k);
}

/* Member i of za into out, named as np.load names it: without its ".npy". */
static int npz_member(zip_t *za, zip_uint64_t i, const char *path, NamedTensors *out) {
    zip_stat_t st;
    if (zip_stat_index(za, i, 0, &st) || !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE)) {
        op_failk(ERRK_IO, "load_npz: '%s' has an unreadable member %llu: %s", path, (unsigned long long)i, zip_strerror(za));
        return -1;
    }
    if (!has_suffix(st.name, ".npy")) {
        op_failk(ERRK_IO, "load_npz: '%s' has the member '%s', which is not a .npy file (a .npz holds NAME.npy members)", path, st.name);
        return -1;
    }
    size_t keylen = strlen(st.name) - 4;
    for (int k = 0; k < out->n; k++)
        if (strlen(out->names[k]) == keylen && !memcmp(out->names[k], st.name, keylen)) {
            op_failk(ERRK_IO, "load_npz: '%s' has the member '%s' twice", path, st.name);
            return -1;
        }
    char what[PATH_MAX + 1024];
    snprintf(what, sizeof what, "'%s' member '%s'", path, st.name);
    zip_file_t *zf = zip_fopen_index(za, i, 0);
    if (!zf) {
        op_failk(ERRK_IO, "load_npz: cannot read %s: %s", what, zip_strerror(za));
        return -1;
    }
    RawIn in = { member_read, zf, (int64_t)st.size, "load_npz", what, true };
    Tensor *t = st.size > INT64_MAX ? NULL : npy_read(&in);
    if (st.size > INT64_MAX) op_failk(ERRK_IO, "load_npz: %s is too large", what);
    zip_fclose(zf);
    return t ? named_push(out, st.name, keylen, t) : -1;
}

int npz_load(const char *path, NamedTensors *out) {
    memset(out, 0, sizeof *out);
    FILE *fp = io_open_regular(path, "load_npz", 0);
    if (!fp) return -1;
    zip_error_t ze;
    zip_error_init(&ze);
    zip_source_t *src = zip_source_filep_create(fp, 0, -1, &ze);   /* closes fp when it is freed */
    zip_t *za = src ? zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &ze) : NULL;
    if (!za) {
        op_failk(ERRK_IO, "load_npz: '%s' is not a readable zip archive: %s", path, zip_error_strerror(&ze));
        if (src) zip_source_free(src);
        else fclose(fp);
        zip_error_fini(&ze);
        return -1;
    }
    zip_error_fini(&ze);
    zip_int64_t n = zip_get_num_entries(za, 0);
    int rc = 0;
    for (zip_int64_t i = 0; i < n && rc == 0; i++) rc = npz_member(za, (zip_uint64_t)i, path, out);
    zip_discard(za);
    if (rc) named_free(out);
    return rc;
}

/* ---------- writing ---------- */

static int zip_failed(const char *path, zip_error_t *e) {
    op_failk(ERRK_IO, "save_npz: cannot write '%s': %s", path, zip_error_strerror(e));
    return -1;
}

/* np.savez's date for every member, 1980-01-01 00:00 (the earliest a zip can hold), so the
 * same arrays always make the same bytes. */
static time_t zip_epoch(void) {
    struct tm tm = { .tm_year = 80, .tm_mday = 1, .tm_isdst = -1 };
    return mktime(&tm);
}

/* Adds in's tensors to za, each as NAME.npy: its header in heads, its data where it is. */
static int npz_add(zip_t *za, const NamedTensors *in, unsigned char (*heads)[NPY_HEADER_MAX], bool compressed,
                   const char *path) {
    time_t when = zip_epoch();
    for (int i = 0; i < in->n; i++) {
        const Tensor *t = in->ts[i];
        zip_buffer_fragment_t frag[2] = { { heads[i], npy_header(t, heads[i], NPY_HEADER_MAX) },
                                          { t->data, (zip_uint64_t)t->size * dtype_size(t->dtype) } };
        size_t len = strlen(in->names[i]);
        char *name = mem_try_alloc(len + 5);
        if (!name) return op_failk(ERRK_MEMORY, "save_npz: out of memory"), -1;
        memcpy(name, in->names[i], len);
        memcpy(name + len, ".npy", 5);
        zip_source_t *s = zip_source_buffer_fragment(za, frag, t->size ? 2 : 1, 0);
        zip_int64_t at = s ? zip_file_add(za, name, s, ZIP_FL_ENC_UTF_8) : -1;
        mem_free(name);
        if (at < 0) {
            if (s) zip_source_free(s);
            return zip_failed(path, zip_get_error(za));
        }
        if (zip_set_file_compression(za, (zip_uint64_t)at, compressed ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) ||
            zip_file_set_mtime(za, (zip_uint64_t)at, when, 0))
            return zip_failed(path, zip_get_error(za));
    }
    return 0;
}

/* The archive libzip wrote into buf, copied to path (whole or not at all). */
static int npz_write_out(zip_source_t *buf, const char *path) {
    if (zip_source_open(buf) < 0) return zip_failed(path, zip_source_error(buf));
    IoWriter w;
    FILE *fp = io_write_begin(&w, path, "save_npz");
    bool ok = fp != NULL;
    char chunk[65536];
    zip_int64_t got = 0;
    while (ok && (got = zip_source_read(buf, chunk, sizeof chunk)) > 0) ok = fwrite(chunk, 1, (size_t)got, fp) == (size_t)got;
    int rc = fp ? io_write_end(&w, ok && got == 0) : -1;
    zip_source_close(buf);
    return rc;
}

int npz_save(const char *path, const NamedTensors *in, bool compressed) {
    /* libzip writes nothing for an archive with no members; np.savez() writes this, the end
     * record of an empty zip (PKWARE's APPNOTE 4.3.16) */
    static const unsigned char empty_zip[22] = { 'P', 'K', 5, 6 };
    if (in->n == 0) return io_write_file(path, "save_npz", empty_zip, sizeof empty_zip);
    zip_error_t ze;
    zip_error_init(&ze);
    unsigned char (*heads)[NPY_HEADER_MAX] = mem_try_alloc((size_t)in->n * NPY_HEADER_MAX);
    zip_source_t *buf = heads ? zip_source_buffer_create(NULL, 0, 0, &ze) : NULL;
    zip_t *za = buf ? zip_open_from_source(buf, ZIP_CREATE | ZIP_TRUNCATE, &ze) : NULL;
    int rc = -1;
    if (!heads) op_failk(ERRK_MEMORY, "save_npz: out of memory");
    else if (!za) zip_failed(path, &ze);
    else {
        zip_source_keep(buf);   /* it outlives the archive, which writes into it as it closes */
        if (npz_add(za, in, heads, compressed, path)) zip_discard(za);
        else if (zip_close(za)) {
            zip_failed(path, zip_get_error(za));
            zip_discard(za);
        } else rc = npz_write_out(buf, path);
    }
    if (buf) zip_source_free(buf);
    zip_error_fini(&ze);
    mem_free(heads);
    return rc;
}
