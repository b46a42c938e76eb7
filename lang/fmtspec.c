/* fmtspec.c - format(value, spec): Python's format-spec mini-language,
 *     [[fill]align][sign][z][#][0][width][grouping][.precision][type]
 * for numbers (types d f F e E g G % and none) and strings (s and none). A number with no
 * type and no precision is written as print writes it (3, 0.1, 1e+20), then signed, grouped
 * and padded. A tensor formats each element with the spec and writes them as nested lists:
 * tensor([1.00, 2.50]) (no alignment beyond the spec's width, no dtype suffix). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "builtins.h"
#include "shortest.h"

typedef struct {
    char fill[5];      /* one code point, UTF-8 */
    char align;        /* < > ^ = or 0 (the value's default) */
    char sign;         /* + - space, or 0 */
    bool z, alt, zero;
    int64_t width;     /* -1: none */
    char group;        /* , _ or 0 */
    int precision;     /* -1: none */
    char type;         /* 0: none */
} Spec;

#define MAX_WIDTH 10000000   /* bounded like every text (TSL_MAX_TEXT) */
#define MAX_PRECISION 1000

static bool is_align(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

static bool parse_spec(Interp *I, const char *s, Spec *sp) {
    const char *start = s;
    memset(sp, 0, sizeof *sp);
    strcpy(sp->fill, " ");
    sp->width = sp->precision = -1;
    int n = *s ? ((unsigned char)*s >= 0xF0 ? 4 : (unsigned char)*s >= 0xE0 ? 3 : (unsigned char)*s >= 0xC0 ? 2 : 1) : 0;
    bool has_fill = false;
    if (n && (int)strnlen(s, (size_t)n) == n && is_align(s[n])) {
        has_fill = true;
        memcpy(sp->fill, s, (size_t)n);
        sp->fill[n] = 0;
        sp->align = s[n];
        s += n + 1;
    } else if (is_align(*s)) sp->align = *s++;
    if (*s == '+' || *s == '-' || *s == ' ') sp->sign = *s++;
    if (*s == 'z') { sp->z = true; s++; }
    if (*s == '#') { sp->alt = true; s++; }
    if (*s == '0') { sp->zero = true; s++; }
    if (sp->zero && !has_fill) strcpy(sp->fill, "0");   /* '0' pads with zeros unless a fill is given */
    if (*s >= '0' && *s <= '9') {
        sp->width = 0;
        while (*s >= '0' && *s <= '9')
            if ((sp->width = sp->width * 10 + (*s++ - '0')) > MAX_WIDTH)
                return interp_error(I, "format(): width is more than %d", MAX_WIDTH), false;
    }
    if (*s == ',' || *s == '_') sp->group = *s++;
    if (*s == '.') {
        s++;
        if (!(*s >= '0' && *s <= '9')) return interp_error(I, "format(): format spec \"%s\" is missing the precision", start), false;
        sp->precision = 0;
        while (*s >= '0' && *s <= '9')
            if ((sp->precision = sp->precision * 10 + (*s++ - '0')) > MAX_PRECISION)
                return interp_error(I, "format(): precision is more than %d", MAX_PRECISION), false;
    }
    if (*s && strchr("dfFeEgG%s", *s) && s[1] == 0) sp->type = *s++;
    if (*s) return interp_error(I, "format(): invalid format spec \"%s\"", start), false;
    return true;
}

/* Pads body (already signed) to the width: prefix is the sign part that '=' keeps in front. */
static void pad(StrBuf *out, const Spec *sp, const char *prefix, const char *body, char default_align) {
    size_t plen = strlen(prefix), blen = strlen(body);
    int64_t cps = (int64_t)utf8_length(prefix, (int)plen) + utf8_length(body, (int)blen);
    int64_t fill = sp->width > cps ? sp->width - cps : 0;
    char align = sp->align ? sp->align : default_align;
    int64_t left = align == '<' ? 0 : align == '^' ? fill / 2 : fill;
    if (align == '=') {
        sb_puts(out, prefix);
        for (int64_t i = 0; i < fill; i++) sb_puts(out, sp->fill);
        sb_puts(out, body);
        return;
    }
    for (int64_t i = 0; i < left; i++) sb_puts(out, sp->fill);
    sb_puts(out, prefix);
    sb_puts(out, body);
    for (int64_t i = left; i < fill; i++) sb_puts(out, sp->fill);
}

/* Inserts the grouping character every three digits of the integer part of digits. */
static void group_digits(StrBuf *b, const char *digits, char group) {
    size_t n = strspn(digits, "0123456789");
    for (size_t i = 0; i < n; i++) {
        if (group && i && (n - i) % 3 == 0) sb_putn(b, &group, 1);
        sb_putn(b, digits + i, 1);
    }
    sb_puts(b, digits + n);
}

/* One printf conversion (literal formats, so the compiler checks them); alt is Python's '#'. */
static void conv(char *buf, size_t size, char type, bool alt, int prec, double x) {
    switch (type) {
    case 'f': snprintf(buf, size, alt ? "%#.*f" : "%.*f", prec, x); break;
    case 'F': snprintf(buf, size, alt ? "%#.*F" : "%.*F", prec, x); break;
    case 'e': snprintf(buf, size, alt ? "%#.*e" : "%.*e", prec, x); break;
    case 'E': snprintf(buf, size, alt ? "%#.*E" : "%.*E", prec, x); break;
    case 'g': snprintf(buf, size, alt ? "%#.*g" : "%.*g", prec, x); break;
    default: snprintf(buf, size, alt ? "%#.*G" : "%.*G", prec, x); break;
    }
}

/* Python's general formats with p significant digits: type 'g'/'G' go scientific when the
 * exponent is below -4 or at least p; no type when it is at least p - 1, and keeps a digit
 * after the point when fixed-point. Trailing zeros go unless alt ('#'). Built on %e and %f
 * (glibc's %#g drops a digit when rounding carries into a new exponent: 99.995 as 1.e+02). */
static void general(char *buf, size_t size, int p, bool alt, double x, char type) {
    if (isnan(x) || isinf(x)) {
        conv(buf, size, type == 'G' ? 'G' : 'g', false, p, x);
        return;
    }
    conv(buf, size, 'e', alt, p - 1, x);
    int exp = atoi(strchr(buf, 'e') + 1);
    bool sci = exp < -4 || exp >= (type ? p : p - 1);
    if (!sci) conv(buf, size, 'f', alt, p - 1 - exp, x);
    char *e = strchr(buf, 'e'), tail[16] = "";
    if (e) {
        snprintf(tail, sizeof tail, "%s", e);
        if (type == 'G') tail[0] = 'E';
        *e = 0;
    }
    if (!alt && strchr(buf, '.')) {
        size_t n = strlen(buf);
        while (buf[n - 1] == '0') buf[--n] = 0;
        if (buf[n - 1] == '.') {
            if (sci || type) buf[--n] = 0;
            else strcat(buf, "0");
        }
    } else if (!alt && !sci && !type) strcat(buf, ".0");
    strcat(buf, tail);
}

/* The shortest text that reads back as the f32 x (a number as print writes it, in f32's digits). */
static void shortest_f32(char *buf, size_t size, double x) {
    if (x == floor(x) && x < 9007199254740992.0) {
        snprintf(buf, size, "%.0f", x);
        return;
    }
    num_shortest(buf, size, x, true);
}

/* f32: x is an element of an f32 tensor (no type and no precision write its f32 digits). */
static bool format_number(Interp *I, StrBuf *out, double x, const Spec *sp, bool f32) {
    char type = sp->type;
    if (type == 's') return interp_errork(I, ERRK_TYPE, "format(): type 's' is for strings, got a number"), false;
    if (type == 'd' && sp->precision >= 0) return interp_error(I, "format(): precision is not allowed with type 'd'"), false;
    if (type == 'd' && (isnan(x) || isinf(x) || x != floor(x)))
        return interp_error(I, "format(): type 'd' needs an integer, got %g", x), false;
    bool neg = signbit(x) && !isnan(x);
    double ax = fabs(x);
    char num[MAX_PRECISION + 400];
    int prec = sp->precision;
    switch (type) {
    case 'd':
        snprintf(num, sizeof num, "%.0f", ax);
        if (ax == 0) neg = false;   /* integers have no negative zero */
        break;
    case 'f': case 'F': case 'e': case 'E':
        conv(num, sizeof num, type, sp->alt, prec < 0 ? 6 : prec, ax);
        break;
    case 'g': case 'G':
        general(num, sizeof num, prec < 0 ? 6 : prec == 0 ? 1 : prec, sp->alt, ax, type);
        break;
    case '%':
        conv(num, sizeof num, 'f', sp->alt, prec < 0 ? 6 : prec, ax * 100);
        strcat(num, "%");
        break;
    default:
        if (prec < 0 && f32 && !isnan(ax) && !isinf(ax)) shortest_f32(num, sizeof num, ax);
        else if (prec < 0) {   /* as print writes the number */
            StrBuf t = { 0 };
            fmt_number(&t, ax);
            snprintf(num, sizeof num, "%s", t.s);
            sb_free(&t);
            char *e = strchr(num, 'e');
            if (sp->alt && e && !strchr(num, '.')) {   /* '#' keeps the point: 1.e-05 */
                memmove(e + 1, e, strlen(e) + 1);
                *e = '.';
            }
        } else general(num, sizeof num, prec == 0 ? 1 : prec, sp->alt, ax, 0);
    }
    if (sp->z && neg && !isinf(x)) {   /* 'z': a result that rounds to zero loses its sign */
        bool all_zero = true;
        for (const char *c = num; *c && *c != 'e' && *c != 'E'; c++)
            if (*c >= '1' && *c <= '9') all_zero = false;
        if (all_zero) neg = false;
    }
    char prefix[2] = { neg ? '-' : sp->sign == '+' ? '+' : sp->sign == ' ' ? ' ' : 0, 0 };
    Spec s = *sp;
    if (sp->zero && !sp->align) s.align = '=';   /* '0' before the width: sign-aware zero padding */
    StrBuf body = { 0 };
    sb_putn(&body, "", 0);
    size_t digits = strspn(num, "0123456789");
    if (s.group && s.align == '=' && !strcmp(s.fill, "0") && digits) {
        /* Python groups zero padding too: 0,000,001.50; the zeros go into the digits */
        int64_t want = s.width - (int64_t)strlen(prefix) - (int64_t)strlen(num + digits), n = (int64_t)digits;
        while (n + (n - 1) / 3 < want) n++;
        StrBuf padded = { 0 };
        for (int64_t i = (int64_t)digits; i < n; i++) sb_putn(&padded, "0", 1);
        sb_puts(&padded, num);
        group_digits(&body, padded.s, s.group);
        sb_free(&padded);
    } else group_digits(&body, num, s.group);
    pad(out, &s, prefix, body.s, '>');
    sb_free(&body);
    return true;
}

static bool format_string(Interp *I, StrBuf *out, ObjString *str, const Spec *sp) {
    if (sp->type && sp->type != 's')
        return interp_errork(I, ERRK_TYPE, "format(): type '%c' is for numbers, got a string", sp->type), false;
    if (sp->sign) return interp_error(I, "format(): a sign is not allowed for a string"), false;
    if (sp->align == '=') return interp_error(I, "format(): '=' alignment is not allowed for a string"), false;
    if (sp->group) return interp_error(I, "format(): '%c' grouping is not allowed for a string", sp->group), false;
    int len = str->len;
    if (sp->precision >= 0 && sp->precision < str->ncp) {   /* the first `precision` code points */
        int cp = 0, i = 0;
        while (i < len && cp < sp->precision) {
            i++;
            while (i < len && ((unsigned char)str->chars[i] & 0xC0) == 0x80) i++;
            cp++;
        }
        len = i;
    }
    char *body = mem_alloc((size_t)len + 1);
    memcpy(body, str->chars, (size_t)len);
    body[len] = 0;
    Spec s = *sp;
    pad(out, &s, "", body, '<');
    mem_free(body);
    return true;
}

static bool format_tensor_rec(Interp *I, StrBuf *out, const Tensor *t, int dim, int64_t *pos, const Spec *sp) {
    if (dim == t->ndim) {
        double x = tensor_get(t, (*pos)++);
        if (t->dtype == DT_BOOL && !sp->type && sp->precision < 0) {
            pad(out, sp, "", x != 0 ? "true" : "false", '<');
            return true;
        }
        return format_number(I, out, x, sp, t->dtype == DT_F32);
    }
    sb_puts(out, "[");
    for (int64_t i = 0; i < t->shape[dim]; i++) {
        if (i) sb_puts(out, ", ");
        if (!format_tensor_rec(I, out, t, dim + 1, pos, sp)) return false;
        if (out->len > TSL_MAX_TEXT)
            return interp_error(I, "format(): the text is longer than %zu bytes", TSL_MAX_TEXT), false;
    }
    sb_puts(out, "]");
    return true;
}

Value builtin_format(Interp *I, CallArgs *a) {
    Value v[2];
    ObjString *spec_str;
    if (!builtin_bind(I, a, builtin_format, v)) return ERR_VAL;
    if (v[1].type == VAL_UNDEF) v[1] = NIL_VAL;
    if (v[1].type == VAL_NIL) spec_str = NULL;
    else if (!arg_str(I, "format", "spec", v[1], &spec_str)) return ERR_VAL;
    Spec sp;
    if (!parse_spec(I, spec_str ? spec_str->chars : "", &sp)) return ERR_VAL;
    StrBuf out = { 0 };
    sb_putn(&out, "", 0);
    bool ok;
    Value x = v[0];
    switch (x.type) {
    case VAL_NUM: ok = format_number(I, &out, x.as.n, &sp, false); break;
    case VAL_STR: ok = format_string(I, &out, AS_STR(x), &sp); break;
    case VAL_BOOL:   /* as a number under a numeric type, else as the word print writes */
        if (sp.type || sp.precision >= 0) ok = format_number(I, &out, x.as.b, &sp, false);
        else pad(&out, &sp, "", x.as.b ? "true" : "false", '<'), ok = true;
        break;
    case VAL_TENSOR: {
        int64_t pos = 0;
        Tensor *h = tensor_host(x.as.t);   /* a GPU tensor formats from a host copy */
        if (!h) {
            interp_op_error(I);
            ok = false;
            break;
        }
        sb_puts(&out, "tensor(");
        ok = format_tensor_rec(I, &out, h, 0, &pos, &sp);
        sb_puts(&out, ")");
        tensor_release(h);
        break;
    }
    default:
        if (!spec_str || spec_str->len == 0) {   /* an empty spec is str(x), as in Python */
            ok = fmt_value_in(I, &out, x, false);
            break;
        }
        ok = false;
        interp_errork(I, ERRK_TYPE, "format(): cannot format a %s with a spec", val_type_name(x));
    }
    if (ok && out.len > TSL_MAX_TEXT) ok = false, interp_error(I, "format(): the text is longer than %zu bytes", TSL_MAX_TEXT);
    Value r = ok ? val_str(out.s, (int)out.len) : ERR_VAL;
    sb_free(&out);
    return r;
}
