/* safetensors.c - Hugging Face's safetensors files, with jansson for the JSON header. The
 * format: an 8-byte little-endian header size N, N bytes of JSON (an object: for each tensor
 * {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, offsets into the data
 * that follows; an optional "__metadata__" object of strings), then the data. A file is
 * checked as the reference implementation checks it before any tensor is made: the header
 * size within the file (and at most 100 MB), the header a JSON object starting with '{',
 * each tensor's bytes those of its shape and dtype, the tensors' byte ranges contiguous and
 * covering the data exactly. BOOL, I64, F32 and F64 are read as they are; the other integer
 * types into i64 (U64 above the largest i64 an error naming the value) and F16 and BF16
 * into f32, as load_npy reads NumPy's narrower types. jansson allocates with malloc, only
 * while a call runs. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "tops.h"
#include "mem.h"
#include "io_raw.h"

#define HEADER_LIMIT 100000000   /* the reference implementation's MAX_HEADER_SIZE */

typedef struct {
    const char *name;
    RawType type;
} StType;

static const StType st_types[] = {
    { "BOOL", { 'b', 1, DT_BOOL } }, { "U8", { 'u', 1, DT_I64 } },  { "I8", { 'i', 1, DT_I64 } },
    { "U16", { 'u', 2, DT_I64 } },   { "I16", { 'i', 2, DT_I64 } }, { "U32", { 'u', 4, DT_I64 } },
    { "I32", { 'i', 4, DT_I64 } },   { "U64", { 'u', 8, DT_I64 } }, { "I64", { 'i', 8, DT_I64 } },
    { "F16", { 'f', 2, DT_F32 } },   { "BF16", { 'h', 2, DT_F32 } }, { "F32", { 'f', 4, DT_F32 } },
    { "F64", { 'f', 8, DT_F64 } },
};
#define ST_NTYPES (int)(sizeof st_types / sizeof st_types[0])

/* One tensor of the header. */
typedef struct {
    const char *name;   /* the JSON's, alive while it is */
    const RawType *type;
    Shape shape;
    int64_t begin, end;
} StEntry;

/* What a load reads: the file, its header, the entries. */
typedef struct {
    const char *path;
    RawIn in;
    json_t *root;
    StEntry *e;
    int n;
    int64_t data_len;
} StLoad;

static int st_bad(const StLoad *L, const char *name, const char *why) {
    if (name) op_failk(ERRK_IO, "load_safetensors: '%s' tensor '%s' %s", L->path, name, why);
    else op_failk(ERRK_IO, "load_safetensors: '%s' %s", L->path, why);
    return -1;
}

static int st_dtype(const StLoad *L, StEntry *e, json_t *v) {
    const char *d = json_string_value(v);
    if (!d) return st_bad(L, e->name, "has no \"dtype\" string");
    for (int i = 0; i < ST_NTYPES; i++)
        if (!strcmp(d, st_types[i].name)) {
            e->type = &st_types[i].type;
            return 0;
        }
    char why[200];
    snprintf(why, sizeof why, "has dtype '%.40s'; supported are BOOL, U8, I8, U16, I16, U32, I32, U64, I64, F16, BF16, F32 and F64", d);
    return st_bad(L, e->name, why);
}

static int st_shape(const StLoad *L, StEntry *e, json_t *v) {
    if (!json_is_array(v)) return st_bad(L, e->name, "has no \"shape\" list");
    if (json_array_size(v) > TSL_MAX_RANK) {
        char why[64];
        snprintf(why, sizeof why, "has rank above %d", TSL_MAX_RANK);
        return st_bad(L, e->name, why);
    }
    e->shape.ndim = (int)json_array_size(v);
    for (int i = 0; i < e->shape.ndim; i++) {
        json_t *d = json_array_get(v, (size_t)i);
        if (!json_is_integer(d) || json_integer_value(d) < 0) return st_bad(L, e->name, "has a malformed shape");
        e->shape.d[i] = json_integer_value(d);
    }
    return 0;
}

static int st_offsets(const StLoad *L, StEntry *e, json_t *v) {
    json_t *b = json_array_get(v, 0), *x = json_array_get(v, 1);
    if (json_array_size(v) != 2 || !json_is_integer(b) || !json_is_integer(x) || json_integer_value(b) < 0 ||
        json_integer_value(x) < json_integer_value(b))
        return st_bad(L, e->name, "has malformed \"data_offsets\" (two integers, begin <= end)");
    e->begin = json_integer_value(b);
    e->end = json_integer_value(x);
    return 0;
}

/* An entry from its JSON: the three fields, and bytes that fit its shape and dtype. */
static int st_entry(const StLoad *L, StEntry *e, const char *name, json_t *v) {
    e->name = name;
    if (!json_is_object(v)) return st_bad(L, name, "is not described by an object");
    if (st_dtype(L, e, json_object_get(v, "dtype")) || st_shape(L, e, json_object_get(v, "shape")) ||
        st_offsets(L, e, json_object_get(v, "data_offsets")))
        return -1;
    int64_t count = shape_count(&e->shape), bytes;
    if (count < 0) {   /* shape_count's "shape [...] is too large ...", said of this tensor */
        char why[400];
        snprintf(why, sizeof why, "%s", op_error());
        return op_failk(ERRK_IO, "load_safetensors: '%s' tensor '%s': %s", L->path, name, why), -1;
    }
    if (__builtin_mul_overflow(count, (int64_t)e->type->size, &bytes) || bytes != e->end - e->begin) {
        char why[200];
        snprintf(why, sizeof why, "has %lld elements of %d bytes, but its data_offsets [%lld, %lld] hold %lld bytes", (long long)count,
                 e->type->size, (long long)e->begin, (long long)e->end, (long long)(e->end - e->begin));
        return st_bad(L, name, why);
    }
    return 0;
}

static int st_metadata(const StLoad *L, json_t *v) {
    const char *k;
    json_t *x;
    if (!json_is_object(v)) return st_bad(L, NULL, "has a \"__metadata__\" that is not an object of strings");
    json_object_foreach(v, k, x)
        if (!json_is_string(x)) return st_bad(L, NULL, "has a \"__metadata__\" that is not an object of strings");
    return 0;
}

/* The header: its size, its JSON, its entries. */
static int st_header(StLoad *L) {
    unsigned char pre[8];
    int64_t got = L->in.read(&L->in, pre, 8);
    if (got < 0) return -1;
    if (got < 8) return st_bad(L, NULL, "is not a safetensors file (shorter than its 8-byte header size)");
    uint64_t n = 0;
    for (int b = 7; b >= 0; b--) n = n << 8 | pre[b];
    char why[160];
    if (n > (uint64_t)L->in.size - 8) {
        snprintf(why, sizeof why, "has a header size of %llu bytes, more than the file holds", (unsigned long long)n);
        return st_bad(L, NULL, why);
    }
    if (n > HEADER_LIMIT) {
        snprintf(why, sizeof why, "has a header of %llu bytes, above the limit of %d", (unsigned long long)n, HEADER_LIMIT);
        return st_bad(L, NULL, why);
    }
    L->data_len = L->in.size - 8 - (int64_t)n;
    char *text = mem_try_alloc(n + 1);
    if (!text) return op_failk(ERRK_MEMORY, "load_safetensors: out of memory reading '%s'", L->path), -1;
    int rc = -1;
    json_error_t je;
    if ((got = L->in.read(&L->in, text, n)) != (int64_t)n) {
        if (got >= 0) st_bad(L, NULL, "is truncated");
    } else if (n == 0 || text[0] != '{') st_bad(L, NULL, "has a header that does not start with '{'");
    else if (!(L->root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je))) {
        snprintf(why, sizeof why, "has a malformed JSON header: %.80s (at byte %d)", je.text, je.position);
        st_bad(L, NULL, why);
    } else rc = 0;
    mem_free(text);
    if (rc) return rc;
    if (!(L->e = mem_try_calloc(json_object_size(L->root) + 1, sizeof *L->e)))
        return op_failk(ERRK_MEMORY, "load_safetensors: out of memory reading '%s'", L->path), -1;
    const char *k;
    json_t *v;
    json_object_foreach(L->root, k, v) {
        if (!strcmp(k, "__metadata__") ? st_metadata(L, v) : st_entry(L, &L->e[L->n++], k, v)) return -1;
    }
    return 0;
}

static int by_offsets(const void *a, const void *b, void *entries) {
    const StEntry *x = (const StEntry *)entries + *(const int *)a, *y = (const StEntry *)entries + *(const int *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

/* The entries in the order of their data, checked to cover it without gaps or overlaps. */
static int st_layout(StLoad *L, int *order) {
    for (int i = 0; i < L->n; i++) order[i] = i;
    qsort_r(order, (size_t)L->n, sizeof *order, by_offsets, L->e);
    int64_t at = 0;
    char why[200];
    for (int i = 0; i < L->n; i++) {
        const StEntry *e = &L->e[order[i]];
        if (e->begin != at) {
            snprintf(why, sizeof why, "has data_offsets [%lld, %lld], but the data before it ends at %lld (gaps and overlaps are errors)",
                     (long long)e->begin, (long long)e->end, (long long)at);
            return st_bad(L, e->name, why);
        }
        at = e->end;
    }
    if (at != L->data_len) {
        snprintf(why, sizeof why, "has %lld bytes of data, but its tensors cover %lld", (long long)L->data_len, (long long)at);
        return st_bad(L, NULL, why);
    }
    return 0;
}

/* The tensors, read in the order of their data (one pass over the file), kept in the header's. */
static int st_read(StLoad *L, const int *order, NamedTensors *out) {
    Tensor **ts = mem_try_calloc((size_t)L->n + 1, sizeof *ts);
    if (!ts) return op_failk(ERRK_MEMORY, "load_safetensors: out of memory reading '%s'", L->path), -1;
    int rc = 0;
    char what[PATH_MAX + 300];
    for (int i = 0; i < L->n && rc == 0; i++) {
        const StEntry *e = &L->e[order[i]];
        snprintf(what, sizeof what, "'%s' tensor '%.200s'", L->path, e->name);
        L->in.what = what;
        if (!(ts[order[i]] = raw_read_tensor(&L->in, e->type, &e->shape))) rc = -1;
    }
    for (int i = 0; i < L->n; i++) {
        if (rc == 0) rc = named_push(out, L->e[i].name, strlen(L->e[i].name), ts[i]);
        else tensor_release(ts[i]);
    }
    mem_free(ts);
    return rc;
}

int safetensors_load(const char *path, NamedTensors *out) {
    memset(out, 0, sizeof *out);
    FILE *fp = io_open_regular(path, "load_safetensors", 0);
    if (!fp) return -1;
    char what[PATH_MAX + 3];
    snprintf(what, sizeof what, "'%s'", path);
    StLoad L = { path, raw_in_file(fp, "load_safetensors", what), NULL, NULL, 0, 0 };
    int *order = NULL;
    int rc = st_header(&L);
    if (rc == 0 && !(order = mem_try_alloc(sizeof *order * (size_t)(L.n + 1)))) {
        op_failk(ERRK_MEMORY, "load_safetensors: out of memory reading '%s'", path);
        rc = -1;
    }
    if (rc == 0) rc = st_layout(&L, order);
    if (rc == 0) rc = st_read(&L, order, out);
    if (rc) named_free(out);
    mem_free(order);
    mem_free(L.e);
    json_decref(L.root);
    fclose(fp);
    return rc;
}

/* ---------- writing ---------- */

static const char *st_name_of(DType dt) {
    static const char *names[] = { [DT_BOOL] = "BOOL", [DT_I64] = "I64", [DT_F32] = "F32", [DT_F64] = "F64" };
    return names[dt];
}

/* The JSON header of in's tensors, their data one after another in order. */
static json_t *st_header_of(const NamedTensors *in) {
    json_t *root = json_object();
    int64_t at = 0;
    for (int i = 0; root && i < in->n; i++) {
        const Tensor *t = in->ts[i];
        int64_t bytes = t->size * (int64_t)dtype_size(t->dtype);
        json_t *shape = json_array(), *e = NULL;
        for (int d = 0; shape && d < t->ndim; d++)
            if (json_array_append_new(shape, json_integer(t->shape[d]))) json_decref(shape), shape = NULL;
        if (shape) e = json_pack("{s:s, s:o, s:[I, I]}", "dtype", st_name_of(t->dtype), "shape", shape, "data_offsets",
                                 (json_int_t)at, (json_int_t)(at + bytes));
        if (!e || json_object_set_new(root, in->names[i], e)) json_decref(root), root = NULL;
        at += bytes;
    }
    return root;
}

int safetensors_save(const char *path, const NamedTensors *in) {
    for (int i = 0; i < in->n; i++)
        if (!strcmp(in->names[i], "__metadata__"))
            return op_failk(ERRK_VALUE, "save_safetensors: the name '__metadata__' is the header's metadata, not a tensor's"), -1;
    json_t *root = st_header_of(in);
    char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
    json_decref(root);
    if (!text) return op_failk(ERRK_MEMORY, "save_safetensors: out of memory"), -1;
    /* spaces after the JSON so that the data starts 8-byte aligned, as the reference writer pads it */
    size_t n = strlen(text), padded = (n + 7) / 8 * 8;
    unsigned char pre[8];
    for (int b = 0; b < 8; b++) pre[b] = (unsigned char)((uint64_t)padded >> (8 * b));
    IoWriter w;
    FILE *fp = io_write_begin(&w, path, "save_safetensors");
    bool ok = fp && fwrite(pre, 1, 8, fp) == 8 && fwrite(text, 1, n, fp) == n;
    for (size_t i = n; ok && i < padded; i++) ok = fputc(' ', fp) != EOF;
    for (int i = 0; ok && i < in->n; i++) {
        size_t bytes = (size_t)in->ts[i]->size * dtype_size(in->ts[i]->dtype);
        ok = fwrite(in->ts[i]->data, 1, bytes, fp) == bytes;
    }
    free(text);
    return fp ? io_write_end(&w, ok) : -1;
}
