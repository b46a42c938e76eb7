/* csv.c - CSV files: load_csv's two forms and save_csv. Without a header, numbers only,
 * one row per line (an empty field is NaN), read into a 2-D f32 tensor (the spec's load_csv,
 * section 5). With one
 * (csv_table_load), a table of named columns: a column whose fields are all numbers (or
 * empty: NaN) is read as floats, any other as text, with fields quoted as RFC 4180 quotes
 * them ("a, b", "say ""hi""", line breaks inside quotes). The file is read twice, once to
 * learn each column's kind and once to fill it, so nothing but the result is held. Readers
 * hold an open file while they allocate, so they allocate with mem_try_* (io.c says why). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tops.h"
#include "mem.h"
#include "shortest.h"

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

/* The lines of a CSV file as its readers see them: the first o->skip_rows skipped, a UTF-8
 * byte-order mark dropped, the line break cut off, a NUL byte an error. */
typedef struct {
    FILE *fp;
    const char *path;
    const CsvOptions *o;
    char *line;
    size_t cap;
    int64_t len, lineno;
} CsvLines;

static bool csv_oom(const char *path) {
    op_failk(ERRK_MEMORY, "load_csv: out of memory reading '%s'", path);
    return false;
}

/* The next line into L->line: 1, 0 at the end of the file, -1 on an error. */
static int csv_next_line(CsvLines *L) {
    for (;;) {
        int64_t len = read_line(L->fp, &L->line, &L->cap);
        if (len == -2) return csv_oom(L->path), -1;
        if (len < 0) return 0;
        if (++L->lineno == 1 && len >= 3 && !memcmp(L->line, "\xEF\xBB\xBF", 3)) {   /* a UTF-8 byte-order mark */
            memmove(L->line, L->line + 3, (size_t)len - 2);
            len -= 3;
        }
        if (L->lineno <= L->o->skip_rows) continue;
        while (len > 0 && (L->line[len - 1] == '\n' || L->line[len - 1] == '\r')) L->line[--len] = 0;
        if ((int64_t)strlen(L->line) != len) {   /* the parsers would stop at the NUL: a silently short row */
            op_failk(ERRK_IO, "load_csv: '%s' line %lld contains a NUL byte", L->path, (long long)L->lineno);
            return -1;
        }
        L->len = len;
        return 1;
    }
}

static bool is_blank(int c, char delim) { return (c == ' ' || c == '\t') && c != delim; }

/* A number field: strtod's syntax with blanks around it. */
static bool parse_number(const char *p, char delim, double *v, const char **end) {
    char *e;
    *v = strtod(p, &e);
    if (e == p) return false;
    while (is_blank(*e, delim)) e++;
    *end = e;
    return true;
}

static bool blank_line(const char *p, char delim) {
    while (is_blank(*p, delim)) p++;
    return !*p;
}

/* A field of the plain form: a number, or blanks only up to the delimiter or the end of the
 * line, which is NaN as in the header form and np.genfromtxt (a spreadsheet's missing value). */
static bool number_or_empty(const char *p, char delim, double *v, const char **end) {
    const char *q = p;
    while (is_blank(*q, delim)) q++;
    if (!*q || *q == delim) { *v = NAN; *end = q; return true; }
    return parse_number(p, delim, v, end);
}

/* CSV: numbers separated by the delimiter, one row per line; every row the same length. */
Tensor *csv_load(const char *path, const CsvOptions *o) {
    FILE *fp = io_open_regular(path, "load_csv", 0);
    if (!fp) return NULL;
    double *vals = NULL;
    int64_t nvals = 0, cap = 0, rows = 0, cols = -1;
    CsvLines L = { fp, path, o, NULL, 0, 0, 0 };
    Tensor *t = NULL;
    int got;
    if (o->skip_header && (got = csv_next_line(&L)) <= 0) goto done;
    while ((got = csv_next_line(&L)) > 0) {
        if (blank_line(L.line, o->delim)) continue;   /* as np.genfromtxt: spaces only is no row */
        int64_t c = 0;
        const char *p = L.line, *end;
        for (;;) {
            double v;
            if (!number_or_empty(p, o->delim, &v, &end) || (*end && *end != o->delim)) {
                op_failk(ERRK_IO, "load_csv: '%s' line %lld: not a number in column %lld", path, (long long)L.lineno, (long long)c + 1);
                goto out;
            }
            if (nvals == cap) {
                int64_t want = cap ? cap * 2 : 1024;
                double *grown = mem_try_realloc(vals, sizeof(double) * (size_t)want);
                if (!grown) { csv_oom(path); goto out; }
                vals = grown;
                cap = want;
            }
            vals[nvals++] = v;
            c++;
            if (!*end) break;
            p = end + 1;
        }
        if (cols >= 0 && c != cols) {
            op_failk(ERRK_IO, "load_csv: '%s' line %lld has %lld columns, expected %lld", path, (long long)L.lineno, (long long)c,
                    (long long)cols);
            goto out;
        }
        cols = c;
        rows++;
    }
done:
    if (got < 0) goto out;
    {
        Shape s = { 2, { rows, cols < 0 ? 0 : cols } };
        if ((t = tensor_new(DT_F32, &s)))
            for (int64_t i = 0; i < nvals; i++) ((float *)t->data)[i] = (float)vals[i];
    }
out:
    mem_free(L.line);
    mem_free(vals);
    fclose(fp);
    return t;
}

/* ---------- with a header: records of quoted fields ---------- */

/* One record's fields, unquoted, each NUL-terminated in buf at at[i]. */
typedef struct {
    CsvLines L;
    char *buf;
    size_t bcap, blen;
    size_t *at;
    int64_t acap, n;
    int64_t lineno;   /* where the record starts */
} CsvRecord;

static bool rec_put(CsvRecord *r, const char *s, size_t n) {
    if (r->blen + n + 1 > r->bcap) {
        size_t want = (r->blen + n + 1) * 2;
        char *grown = mem_try_realloc(r->buf, want);
        if (!grown) return csv_oom(r->L.path);
        r->buf = grown;
        r->bcap = want;
    }
    memcpy(r->buf + r->blen, s, n);
    r->blen += n;
    return true;
}

static bool rec_field(CsvRecord *r) {
    if (r->n == r->acap) {
        int64_t want = r->acap ? r->acap * 2 : 16;
        size_t *grown = mem_try_realloc(r->at, sizeof(size_t) * (size_t)want);
        if (!grown) return csv_oom(r->L.path);
        r->at = grown;
        r->acap = want;
    }
    r->at[r->n++] = r->blen;
    return true;
}

/* The next record that is not a blank line: 1, 0 at the end of the file, -1 on an error. A
 * field that starts with a quote runs to the closing quote ("" inside is one quote), over
 * line breaks; what follows the closing quote up to the delimiter belongs to it too. */
static int csv_next_record(CsvRecord *r) {
    int got;
    do {
        if ((got = csv_next_line(&r->L)) <= 0) return got;
    } while (r->L.len == 0);
    r->lineno = r->L.lineno;
    r->blen = 0;
    r->n = 0;
    char delim = r->L.o->delim;
    const char *p = r->L.line;
    if (!rec_field(r)) return -1;
    bool quoted = false, at_start = true;
    for (;;) {
        if (!*p) {
            if (!quoted) break;
            if ((got = csv_next_line(&r->L)) <= 0) {   /* a line break inside the quotes */
                if (got == 0)
                    op_failk(ERRK_IO, "load_csv: '%s' line %lld: a quoted field is not closed", r->L.path, (long long)r->lineno);
                return -1;
            }
            if (!rec_put(r, "\n", 1)) return -1;
            p = r->L.line;
            continue;
        }
        if (quoted && *p == '"') {
            if (p[1] == '"') {
                if (!rec_put(r, "\"", 1)) return -1;
                p += 2;
            } else {
                quoted = false;
                p++;
            }
            continue;
        }
        if (!quoted && *p == delim) {
            if (!rec_put(r, "", 1) || !rec_field(r)) return -1;
            at_start = true;
            p++;
            continue;
        }
        if (at_start && *p == '"') quoted = true;
        else if (!rec_put(r, p, 1)) return -1;
        at_start = false;
        p++;
    }
    return rec_put(r, "", 1) ? 1 : -1;
}

static const char *rec_get(const CsvRecord *r, int64_t i) { return r->buf + r->at[i]; }

/* A field of a number column: a number with blanks around it, or blanks only (NaN). */
static bool field_number(const char *s, char delim, double *v) {
    const char *end = s;
    while (is_blank(*end, delim)) end++;
    if (!*end) { *v = NAN; return true; }
    return parse_number(s, delim, v, &end) && !*end;
}

/* Goes to the first record after the header (rewinding for the second pass). */
static int csv_table_start(CsvRecord *r) {
    rewind(r->L.fp);
    r->L.lineno = 0;
    int got = csv_next_record(r);
    if (got == 0) op_failk(ERRK_IO, "load_csv: '%s' has no header line", r->L.path);
    return got;
}

static bool csv_table_names(CsvRecord *r, CsvTable *t) {
    if (r->n > (1 << 20)) return op_failk(ERRK_IO, "load_csv: '%s' has more than %d columns", r->L.path, 1 << 20), false;
    t->ncols = (int)r->n;
    if (!(t->cols = mem_try_calloc((size_t)r->n, sizeof *t->cols))) return csv_oom(r->L.path);
    for (int c = 0; c < t->ncols; c++) {
        const char *name = rec_get(r, c);
        for (int k = 0; k < c; k++)
            if (!strcmp(t->cols[k].name, name))
                return op_failk(ERRK_IO, "load_csv: '%s' names the column '%s' twice", r->L.path, name), false;
        size_t n = strlen(name) + 1;
        if (!(t->cols[c].name = mem_try_alloc(n))) return csv_oom(r->L.path);
        memcpy(t->cols[c].name, name, n);
    }
    return true;
}

static bool csv_row_width(CsvRecord *r, const CsvTable *t) {
    if (r->n == t->ncols) return true;
    op_failk(ERRK_IO, "load_csv: '%s' line %lld has %lld columns, expected %d", r->L.path, (long long)r->lineno, (long long)r->n,
             t->ncols);
    return false;
}

/* First pass: each column's kind and the number of rows. */
static bool csv_table_kinds(CsvRecord *r, CsvTable *t) {
    int got;
    while ((got = csv_next_record(r)) > 0) {
        if (!csv_row_width(r, t)) return false;
        for (int c = 0; c < t->ncols; c++) {
            double v;
            if (!t->cols[c].text && !field_number(rec_get(r, c), r->L.o->delim, &v)) t->cols[c].text = true;
        }
        t->nrows++;
    }
    return got == 0;
}

static bool csv_table_alloc(CsvRecord *r, CsvTable *t) {
    for (int c = 0; c < t->ncols; c++) {
        CsvColumn *col = &t->cols[c];
        size_t n = (size_t)(t->nrows ? t->nrows : 1);
        if (col->text ? !(col->texts = mem_try_calloc(n, sizeof(char *))) : !(col->nums = mem_try_alloc(n * sizeof(float))))
            return csv_oom(r->L.path);
    }
    return true;
}

/* Second pass: the values (a file that changed between the passes is an error, not a crash). */
static bool csv_table_fill(CsvRecord *r, CsvTable *t) {
    int64_t row = 0;
    int got;
    bool same = true;
    while (same && (got = csv_next_record(r)) > 0) {
        if (row == t->nrows || r->n != t->ncols) break;
        for (int c = 0; same && c < t->ncols; c++) {
            CsvColumn *col = &t->cols[c];
            const char *s = rec_get(r, c);
            double v;
            if (col->text) {
                size_t n = strlen(s) + 1;
                if (!(col->texts[row] = mem_try_alloc(n))) return csv_oom(r->L.path);
                memcpy(col->texts[row], s, n);
            } else if ((same = field_number(s, r->L.o->delim, &v))) col->nums[row] = (float)v;
        }
        row++;
    }
    if (got == -1) return false;
    if (same && got == 0 && row == t->nrows) return true;
    op_failk(ERRK_IO, "load_csv: '%s' changed while it was read", r->L.path);
    return false;
}

int csv_table_load(const char *path, const CsvOptions *o, CsvTable *t) {
    memset(t, 0, sizeof *t);
    FILE *fp = io_open_regular(path, "load_csv", 0);
    if (!fp) return -1;
    CsvRecord r = { { fp, path, o, NULL, 0, 0, 0 }, NULL, 0, 0, NULL, 0, 0, 0 };
    bool ok = csv_table_start(&r) > 0 && csv_table_names(&r, t) && csv_table_kinds(&r, t) && csv_table_alloc(&r, t) &&
              csv_table_start(&r) > 0 && csv_table_fill(&r, t);
    mem_free(r.L.line);
    mem_free(r.buf);
    mem_free(r.at);
    fclose(fp);
    if (!ok) csv_table_free(t);
    return ok ? 0 : -1;
}

void csv_table_free(CsvTable *t) {
    for (int c = 0; t->cols && c < t->ncols; c++) {
        CsvColumn *col = &t->cols[c];
        for (int64_t i = 0; col->texts && i < t->nrows; i++) mem_free(col->texts[i]);
        mem_free(col->texts);
        mem_free(col->nums);
        mem_free(col->name);
    }
    mem_free(t->cols);
    memset(t, 0, sizeof *t);
}

/* ---------- writing ---------- */

/* The shortest text that load_csv (strtod, then to the tensor's f32) reads back as x: f32
 * elements need at most 9 significant digits, f64 ones 17. */
static void csv_number(char *buf, size_t size, double x, DType dt) {
    if (dt == DT_BOOL || dt == DT_I64) { snprintf(buf, size, "%.0f", x); return; }
    num_shortest(buf, size, x, dt == DT_F32);
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
