/* format.c - NumPy-style text for tensors, on one line:
 *   tensor([[1., 2.], [3., 4.]])   tensor([1, 2], dtype=i64)   tensor(0.5)
 * Floats print with the fewest digits that read back in their dtype (at most 8 after
 * the point); scientific notation when NumPy would use it (max >= 1e8, min < 1e-4, or
 * max/min > 1e3). Past 1000 elements each long axis shows 3 items, "...", 3 items. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cpu.h"
#include "mem.h"

typedef struct {
    char *s;
    size_t len, cap;
} Buf;

static void put(Buf *b, const char *s) {
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = mem_realloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}

static bool reads_back(const char *txt, double x, DType dt) {
    double y = strtod(txt, NULL);
    return dt == DT_F32 ? (float)y == (float)x : y == x;
}

static void fmt_float(char *out, size_t n, double x, DType dt, bool sci) {
    if (isnan(x)) { snprintf(out, n, "nan"); return; }
    if (isinf(x)) { snprintf(out, n, x > 0 ? "inf" : "-inf"); return; }
    int digits = 8;
    for (int d = 0; d <= 8; d++) {
        snprintf(out, n, sci ? "%.*e" : "%.*f", d, x);
        if (reads_back(out, x, dt)) { digits = d; break; }
    }
    snprintf(out, n, sci ? "%.*e" : "%.*f", digits, x);
    if (digits == 0) {
        /* "3" -> "3."  and  "1e-05" -> "1.e-05" */
        char *e = strchr(out, 'e');
        if (e) {
            char tail[16];
            snprintf(tail, sizeof tail, "%s", e);
            snprintf(e, n - (size_t)(e - out), ".%s", tail);
        } else {
            strncat(out, ".", n - strlen(out) - 1);
        }
    }
}

typedef struct {
    const Tensor *t;
    bool sci, summarize;
    Buf b;
} Fmt;

static void put_elem(Fmt *f, int64_t i) {
    char txt[64];
    double x = tensor_get(f->t, i);
    switch (f->t->dtype) {
    case DT_BOOL: snprintf(txt, sizeof txt, "%s", x != 0 ? "true" : "false"); break;
    case DT_I64: snprintf(txt, sizeof txt, "%lld", (long long)((const int64_t *)f->t->data)[i]); break;
    default: fmt_float(txt, sizeof txt, x, f->t->dtype, f->sci);
    }
    put(&f->b, txt);
}

static void put_dim(Fmt *f, int dim, int64_t off) {
    const Tensor *t = f->t;
    if (dim == t->ndim) { put_elem(f, off); return; }
    int64_t n = t->shape[dim], stride = 1;
    for (int d = dim + 1; d < t->ndim; d++) stride *= t->shape[d];
    put(&f->b, "[");
    for (int64_t i = 0; i < n; i++) {
        if (f->summarize && n > 6 && i == 3) {
            put(&f->b, ", ...");
            i = n - 3;
        }
        if (i) put(&f->b, ", ");
        put_dim(f, dim + 1, off + i * stride);
    }
    put(&f->b, "]");
}

static bool use_scientific(const Tensor *t) {
    if (!dtype_is_float(t->dtype)) return false;
    double mx = 0, mn = INFINITY;
    for (int64_t i = 0; i < t->size; i++) {
        double a = fabs(tensor_get(t, i));
        if (a == 0 || isnan(a) || isinf(a)) continue;
        if (a > mx) mx = a;
        if (a < mn) mn = a;
    }
    if (mx == 0) return false;
    return mx >= 1e8 || mn < 1e-4 || mx / mn > 1e3;
}

char *tensor_format(const Tensor *t) {
    Fmt f = { t, use_scientific(t), t->size > 1000, { NULL, 0, 0 } };
    put(&f.b, "tensor(");
    if (t->size == 0) {
        put(&f.b, "[]");
        if (t->ndim != 1) {
            char sh[600];
            Shape s;
            shape_of(t, &s);
            put(&f.b, ", shape=");
            put(&f.b, shape_str(&s, sh, sizeof sh));
        }
    } else {
        put_dim(&f, 0, 0);
    }
    if (t->dtype != DT_F32) {
        put(&f.b, ", dtype=");
        put(&f.b, dtype_name(t->dtype));
    }
    put(&f.b, ")");
    return f.b.s;
}
