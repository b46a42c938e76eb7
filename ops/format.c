/* format.c - tensor text: PyTorch's layout with NumPy's number format (spec §3).
 *   tensor([1., 2.])   tensor([1, 2], dtype=i64)   tensor(0.5)
 *   tensor([[ 1.,  2.],
 *           [10., 20.]])
 * This follows NumPy 1.24's array2string(a, separator=', ', prefix='tensor(') step by step:
 * FloatingFormat (floatmode 'maxprec', unique, suppress_small off) picks positional or
 * scientific notation and one width for the whole tensor, and _formatArray lays the rows
 * out, wraps long ones at linewidth and summarises big tensors with "...". Where a comment
 * names a NumPy variable, the code computes that variable. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tops.h"
#include "ctx.h"
#include "mem.h"

/* The options are the current ops context's (ctx.h): print_options() in one interpreter
 * does not change another's printing. */
static const PrintOptions *options(void) { return &ops_ctx()->print; }

PrintOptions tensor_print_options(void) { return *options(); }
void tensor_set_print_options(PrintOptions o) { ops_ctx()->print = o; }

typedef struct {
    char *s;
    size_t len, cap;
} Buf;

static void put_n(Buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = mem_realloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}
static void put(Buf *b, const char *s) { put_n(b, s, strlen(s)); }
static void put_spaces(Buf *b, int64_t n) {
    for (int64_t i = 0; i < n; i++) put_n(b, " ", 1);
}

/* ---- one number, as NumPy's dragon4 with unique=True writes it ---- */

/* Beyond 17 significant digits every double reads back, so a larger precision changes nothing. */
#define MAX_PRECISION 40

static bool reads_back(const char *txt, double ax, DType dt) {
    return dt == DT_F32 ? strtof(txt, NULL) == (float)ax : strtod(txt, NULL) == ax;
}

/* The next p-digit decimal up or down from the mantissa "d.ddd" with exponent *e, in place;
 * "9.99" up is "1.00" with *e + 1, "1.00" down is "9.99" with *e - 1. */
static void step_mantissa(char *m, int *e, bool up) {
    int n = (int)strlen(m), i = n - 1;
    for (; i >= 0; i--) {
        if (m[i] == '.') continue;
        if (up ? m[i] < '9' : m[i] > '0') { m[i] = (char)(m[i] + (up ? 1 : -1)); break; }
        m[i] = up ? '0' : '9';
    }
    if (i < 0 && up) { m[0] = '1'; ++*e; }
    if (!up && m[0] == '0') { m[0] = '9'; --*e; }
}

/* ax >= 0 with p digits after the point of the mantissa, as dragon4 picks them: of the two
 * p-digit decimals around the value, the nearest, unless only the other reads back as the
 * value (the interval that reads back is lopsided at powers of two). Writes "d.ddd" into m
 * and returns whether it reads back. */
static bool fixed_digits(double ax, DType dt, int p, char *m, size_t n, int *exp) {
    char txt[MAX_PRECISION + 16], other[MAX_PRECISION + 48];
    snprintf(txt, sizeof txt, "%.*e", p, ax);
    char *ep = strchr(txt, 'e');
    *exp = atoi(ep + 1);
    *ep = 0;
    snprintf(other, sizeof other, "%se%d", txt, *exp);
    bool ok = reads_back(other, ax, dt);
    if (!ok) {
        bool up = strtod(other, NULL) < ax;
        int e2 = *exp;
        char m2[MAX_PRECISION + 16];
        snprintf(m2, sizeof m2, "%s", txt);
        step_mantissa(m2, &e2, up);
        snprintf(other, sizeof other, "%se%d", m2, e2);
        if (reads_back(other, ax, dt)) {
            snprintf(m, n, "%s", m2);
            *exp = e2;
            return true;
        }
    }
    snprintf(m, n, "%s", txt);
    return ok;
}

/* The shortest decimal digits of ax >= 0 that read back as the same value of the dtype:
 * *ndig significant digits in digits, decimal exponent *exp. */
static void shortest_digits(double ax, DType dt, char *digits, int *ndig, int *exp) {
    char m[MAX_PRECISION + 16];
    int maxp = dt == DT_F32 ? 8 : 16;
    for (int p = 0; p <= maxp; p++)
        if (fixed_digits(ax, dt, p, m, sizeof m, exp) || p == maxp) break;
    int n = 0;
    for (const char *c = m; *c; c++)
        if (*c != '.') digits[n++] = *c;
    digits[n] = 0;
    *ndig = n;
}

/* Drops the zeros after the last nonzero fraction digit, keeping the point (trim='.'). */
static void trim_zeros(char *s) {
    char *dot = strchr(s, '.');
    if (!dot) { strcat(s, "."); return; }
    char *end = s + strlen(s);
    while (end > dot + 1 && end[-1] == '0') end--;
    *end = 0;
}

/* Positional text of ax >= 0: "12.5", "3.", "0.001"; at most prec digits after the point. */
static void positional(double ax, DType dt, int prec, char *out, size_t n) {
    char d[32];
    int nd, e;
    shortest_digits(ax, dt, d, &nd, &e);
    int frac = nd - 1 - e > 0 ? nd - 1 - e : 0;
    if (frac > prec || frac == 0) {
        /* more digits than the precision: the exact value rounded there; and dragon4 writes
         * every digit before the point, so a whole f32 prints exactly (71727512., not 71727510.) */
        snprintf(out, n, "%.*f", frac ? prec : 0, ax);
        trim_zeros(out);
        return;
    }
    int k = 0;
    if (e < 0) {
        out[k++] = '0';
        out[k++] = '.';
        for (int i = 0; i < -e - 1; i++) out[k++] = '0';
        for (int i = 0; i < nd; i++) out[k++] = d[i];
    } else {
        for (int i = 0; i <= e; i++) out[k++] = i < nd ? d[i] : '0';
        out[k++] = '.';
        for (int i = e + 1; i < nd; i++) out[k++] = d[i];
    }
    out[k] = 0;
}

/* Scientific text of ax >= 0 split into mantissa "1.25" and exponent value: the shortest
 * that reads back, at most prec digits after the point. */
static void scientific(double ax, DType dt, int prec, char *mant, size_t n, int *exp) {
    char d[32];
    int nd;
    shortest_digits(ax, dt, d, &nd, exp);
    if (nd - 1 > prec) {
        fixed_digits(ax, dt, prec, mant, n, exp);
        trim_zeros(mant);
        return;
    }
    snprintf(mant, n, "%c.%s", d[0], d + 1);
}

static int exp_digits(int e) {
    int a = e < 0 ? -e : e, k = 1;
    while (a >= 10) { a /= 10; k++; }
    return k < 2 ? 2 : k;
}

/* FloatingFormat's fields for one tensor. */
typedef struct {
    bool exp_format;
    int precision;          /* exp: digits every mantissa shows; positional: the cap */
    int pad_left, pad_right;
    int exp_size;           /* digits of every exponent */
} FloatFmt;

/* ---- the tensor ---- */

typedef struct {
    const Tensor *t;
    bool summarize;
    int64_t edge;
    int64_t *stride;
    FloatFmt ff;
    int int_width;
    /* what the first pass over the shown elements saw */
    double max_abs, min_abs;    /* of the finite nonzero floats */
    bool any_finite, any_nonfinite, neginf;
    int64_t int_min, int_max;
} Fmt;

static bool axis_summarized(const Fmt *f, int dim) { return f->summarize && 2 * f->edge < f->t->shape[dim]; }

/* Calls fn on every element the text shows (NumPy's _leading_trailing), in order. */
static void each_shown(Fmt *f, int dim, int64_t off, void (*fn)(Fmt *, int64_t)) {
    if (dim == f->t->ndim) { fn(f, off); return; }
    int64_t n = f->t->shape[dim];
    /* NumPy's data[:0] + data[-0:] is the whole axis: edgeitems=0 sizes from every item */
    bool cut = axis_summarized(f, dim) && f->edge > 0;
    for (int64_t i = 0; i < n; i++) {
        if (cut && i == f->edge) i = n - f->edge;
        if (i < n) each_shown(f, dim + 1, off + i * f->stride[dim], fn);
    }
}

/* First pass of FloatingFormat.fillFormat: which notation, over the finite values shown. */
static void scan_range(Fmt *f, int64_t i) {
    double x = tensor_get(f->t, i);
    if (isinf(x) && x < 0) f->neginf = true;
    if (!isfinite(x)) { f->any_nonfinite = true; return; }
    f->any_finite = true;
    double a = fabs(x);
    if (a == 0) return;
    if (a > f->max_abs) f->max_abs = a;
    if (a < f->min_abs) f->min_abs = a;
}

/* Second pass: the widest integer part, fraction and exponent. */
static void scan_widths(Fmt *f, int64_t i) {
    double x = tensor_get(f->t, i);
    if (!isfinite(x)) return;
    char txt[MAX_PRECISION + 400];
    int sign = signbit(x) ? 1 : 0, il, fl;
    if (f->ff.exp_format) {
        int e;
        scientific(fabs(x), f->t->dtype, f->ff.precision, txt, sizeof txt, &e);
        int ed = exp_digits(e);
        if (ed > f->ff.exp_size) f->ff.exp_size = ed;
        il = sign + 1;
        fl = (int)strlen(txt) - 2;
        if (fl > f->ff.pad_right) f->ff.pad_right = fl;   /* the mantissa digits, for now */
    } else {
        positional(fabs(x), f->t->dtype, f->ff.precision, txt, sizeof txt);
        il = sign + (int)(strchr(txt, '.') - txt);
        fl = (int)strlen(strchr(txt, '.') + 1);
        if (fl > f->ff.pad_right) f->ff.pad_right = fl;
    }
    if (il > f->ff.pad_left) f->ff.pad_left = il;
}

static void fill_float_format(Fmt *f) {
    FloatFmt *ff = &f->ff;
    f->max_abs = 0, f->min_abs = INFINITY;
    each_shown(f, 0, 0, scan_range);
    *ff = (FloatFmt){ false, (int)(options()->precision < MAX_PRECISION ? options()->precision : MAX_PRECISION), 0, 0, 0 };
    /* NumPy divides in the array's dtype: for f32 a ratio a hair over 1000 rounds to 1000 */
    double ratio = f->t->dtype == DT_F32 ? (double)((float)f->max_abs / (float)f->min_abs) : f->max_abs / f->min_abs;
    if (f->max_abs > 0 && (f->max_abs >= 1e8 || f->min_abs < 1e-4 || ratio > 1e3)) ff->exp_format = true;
    if (f->any_finite) {
        each_shown(f, 0, 0, scan_widths);
        if (ff->exp_format) {
            ff->precision = ff->pad_right;      /* every mantissa pads to the longest */
            ff->pad_right = ff->exp_size + 2 + ff->precision;
        }
    }
    /* nan and inf right-align in the same width */
    if (!f->any_nonfinite) return;
    int offset = ff->pad_right + 1, inflen = 3 + (f->neginf ? 1 : 0);
    if (3 - offset > ff->pad_left) ff->pad_left = 3 - offset;
    if (inflen - offset > ff->pad_left) ff->pad_left = inflen - offset;
}

static void format_float(const Fmt *f, double x, Buf *out) {
    const FloatFmt *ff = &f->ff;
    char txt[MAX_PRECISION + 400];
    if (!isfinite(x)) {
        const char *w = isnan(x) ? "nan" : x > 0 ? "inf" : "-inf";
        put_spaces(out, ff->pad_left + ff->pad_right + 1 - (int)strlen(w));
        put(out, w);
        return;
    }
    const char *sign = signbit(x) ? "-" : "";
    if (ff->exp_format) {
        /* every mantissa shows precision digits: more digits of the value, not zeros */
        int e;
        fixed_digits(fabs(x), f->t->dtype, ff->precision, txt, sizeof txt, &e);
        if (!strchr(txt, '.')) strcat(txt, ".");
        put_spaces(out, ff->pad_left - (int)strlen(sign) - 1);
        put(out, sign);
        put(out, txt);
        char ex[32];
        snprintf(ex, sizeof ex, "e%c%0*d", e < 0 ? '-' : '+', ff->exp_size, e < 0 ? -e : e);
        put(out, ex);
    } else {
        positional(fabs(x), f->t->dtype, ff->precision, txt, sizeof txt);
        int il = (int)(strchr(txt, '.') - txt) + (int)strlen(sign);
        put_spaces(out, ff->pad_left - il);
        put(out, sign);
        put(out, txt);
        put_spaces(out, ff->pad_right - (int)strlen(strchr(txt, '.') + 1));
    }
}

static void scan_ints(Fmt *f, int64_t i) {
    int64_t v = ((const int64_t *)f->t->data)[i];
    if (v < f->int_min) f->int_min = v;
    if (v > f->int_max) f->int_max = v;
}

static void fill_int_format(Fmt *f) {
    f->int_min = INT64_MAX, f->int_max = INT64_MIN;
    each_shown(f, 0, 0, scan_ints);
    char a[32], b[32];
    int la = snprintf(a, sizeof a, "%lld", (long long)f->int_min);
    int lb = snprintf(b, sizeof b, "%lld", (long long)f->int_max);
    f->int_width = la > lb ? la : lb;
}

/* One element, padded to the tensor's width (NumPy's format_function). */
static void format_elem(const Fmt *f, int64_t i, Buf *out) {
    char txt[32];
    switch (f->t->dtype) {
    case DT_BOOL:
        /* NumPy pads ' True' to the width of 'False' except in a 0-d array */
        put(out, tensor_get(f->t, i) != 0 ? (f->t->ndim ? " true" : "true") : "false");
        break;
    case DT_I64:
        snprintf(txt, sizeof txt, "%*lld", f->int_width, (long long)((const int64_t *)f->t->data)[i]);
        put(out, txt);
        break;
    default: format_float(f, tensor_get(f->t, i), out);
    }
}

/* NumPy's _extendLine: starts a new line when the word would pass width, unless the line
 * holds nothing but the indent (wrapping would not help). */
static void extend_line(Buf *s, Buf *line, const char *word, int64_t width, int64_t hang) {
    bool wrap = (int64_t)(line->len + strlen(word)) > width && (int64_t)line->len > hang;
    if (wrap) {
        size_t n = line->len;
        while (n > 0 && line->s[n - 1] == ' ') n--;
        put_n(s, line->s, n);
        put(s, "\n");
        line->len = 0;
        put_spaces(line, hang);
    }
    put(line, word);
}

/* NumPy's _formatArray recurser: the text of the sub-array at (dim, off), whose later lines
 * start with hang spaces and stay within width columns. */
static void format_axis(const Fmt *f, int dim, int64_t off, int64_t hang, int64_t width, Buf *out) {
    const Tensor *t = f->t;
    if (dim == t->ndim) { format_elem(f, off, out); return; }
    int64_t n = t->shape[dim];
    bool cut = axis_summarized(f, dim);
    Buf s = { NULL, 0, 0 };
    if (dim == t->ndim - 1) {
        Buf line = { NULL, 0, 0 }, word = { NULL, 0, 0 };
        put_spaces(&line, hang);
        int64_t elem_width = width - 1;   /* room for the ',' or ']' */
        for (int64_t i = 0; i < n; i++) {
            if (cut && i == f->edge) {
                extend_line(&s, &line, "...", elem_width, hang);
                put(&line, ", ");
                i = n - f->edge;
                if (i >= n) i = n - 1;   /* edgeitems=0 still shows the last item */
            }
            word.len = 0;
            format_elem(f, off + i * f->stride[dim], &word);
            extend_line(&s, &line, word.s, elem_width, hang);
            if (i < n - 1) put(&line, ", ");
        }
        put_n(&s, line.s, line.len);
        mem_free(line.s);
        mem_free(word.s);
    } else {
        int64_t blank_lines = t->ndim - dim - 2;
        put_spaces(&s, hang);
        for (int64_t i = 0; i < n; i++) {
            if (i) {
                put(&s, ",\n");
                for (int64_t k = 0; k < blank_lines; k++) put(&s, "\n");
                put_spaces(&s, hang);
            }
            if (cut && i == f->edge) {
                put(&s, "...,\n");
                for (int64_t k = 0; k < blank_lines; k++) put(&s, "\n");
                put_spaces(&s, hang);
                i = n - f->edge;
                if (i >= n) i = n - 1;
            }
            format_axis(f, dim + 1, off + i * f->stride[dim], hang + 1, width - 1, &s);
        }
    }
    put(out, "[");
    put_n(out, s.s + hang, s.len - (size_t)hang);
    put(out, "]");
    mem_free(s.s);
}

static char *format_host(const Tensor *t);

/* A tensor on another device prints from a host copy, and says where it lives. */
char *tensor_format(const Tensor *t) {
    if (t->device == DEV_CPU) return format_host(t);
    Tensor *h = tensor_host(t);
    Buf b = { NULL, 0, 0 };
    if (!h) {
        put(&b, "<a GPU tensor that could not be copied to the host: ");
        put(&b, op_error());
        put(&b, ">");
        return b.s;
    }
    char *s = format_host(h);
    tensor_release(h);
    size_t len = strlen(s);
    put_n(&b, s, len > 0 ? len - 1 : 0);   /* before the closing parenthesis */
    put(&b, ", device=gpu)");
    mem_free(s);
    return b.s;
}

static char *format_host(const Tensor *t) {
    Buf b = { NULL, 0, 0 };
    put(&b, "tensor(");
    if (t->size == 0) {
        put(&b, "[]");
        if (t->ndim != 1) {
            char sh[600];
            Shape s;
            shape_of(t, &s);
            put(&b, ", shape=");
            put(&b, shape_str(&s, sh, sizeof sh));
        }
    } else {
        int64_t stride[TSL_MAX_RANK + 1];
        int64_t st = 1;
        for (int d = t->ndim - 1; d >= 0; d--) {
            stride[d] = st;
            st *= t->shape[d];
        }
        Fmt f = { .t = t, .summarize = t->size > options()->threshold, .edge = options()->edgeitems, .stride = stride };
        if (dtype_is_float(t->dtype)) fill_float_format(&f);
        if (t->dtype == DT_I64) fill_int_format(&f);
        /* the rows line up under the first: one space past "tensor(" for the '[' */
        format_axis(&f, 0, 0, (int64_t)strlen("tensor(") + 1, options()->linewidth, &b);
    }
    if (t->dtype != DT_F32) {
        put(&b, ", dtype=");
        put(&b, dtype_name(t->dtype));
    }
    put(&b, ")");
    return b.s;
}
