/* strings.c - the string built-ins of spec section 5 (v2): split join replace find strip
 * upper lower startswith endswith, and `s * n`. Strings are UTF-8; indices that a caller
 * sees (find) count code points as len and s[i] do. Where the spec is silent, Python's str
 * methods decide, whitespace (is_space_cp) and case mapping (casemap.c) included. */
#include <math.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "builtins.h"

/* Python's str.isspace() on one code point: the ASCII whitespace, the separators \x1c-\x1f
 * and Unicode's white space (NEL, no-break space, the spaces of U+2000-U+200A, ...). */
static bool is_space_cp(uint32_t c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f) || c == 0x85 || c == 0xA0 ||
           c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

/* Bytes of the UTF-8 sequence that starts with c (1 for a stray continuation byte). */
static int cp_bytes(unsigned char c) { return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; }

/* The code point at p (n bytes of it, as cp_bytes says, cut at end). */
static uint32_t cp_at(const unsigned char *p, const unsigned char *end, int *n) {
    *n = cp_bytes(*p);
    if (*n > end - p) *n = (int)(end - p);
    uint32_t cp = *n == 1 ? *p : (uint32_t)(*p & (0xFF >> (*n + 1)));
    for (int i = 1; i < *n; i++) cp = cp << 6 | (p[i] & 0x3F);
    return cp;
}

/* Bytes of the white space code point at p, 0 when it is not one. */
static int space_at(const char *p, const char *end) {
    int n;
    return is_space_cp(cp_at((const unsigned char *)p, (const unsigned char *)end, &n)) ? n : 0;
}

/* Bytes of the white space code point that ends at end (after start), 0 when it is not one. */
static int space_before(const char *start, const char *end) {
    const char *p = end - 1;
    while (p > start && end - p < 4 && ((unsigned char)*p & 0xC0) == 0x80) p--;   /* its first byte */
    return space_at(p, end) == end - p ? (int)(end - p) : 0;
}

/* Every result is bounded as printed text is (TSL_MAX_TEXT), so a repeat or replace that
 * would make gigabytes is an error rather than an allocation failure. */
static bool text_fits(Interp *I, const char *fname, double bytes) {
    if (bytes <= (double)TSL_MAX_TEXT) return true;
    if (isinf(bytes)) interp_error(I, "%s: the result would be endless, more than the limit of %zu bytes", fname, TSL_MAX_TEXT);
    else interp_error(I, "%s: the result would be %.0f bytes, more than the limit of %zu", fname, bytes, TSL_MAX_TEXT);
    return false;
}

Value str_repeat(Interp *I, ObjString *s, double n) {
    if (n != floor(n)) return interp_errork(I, ERRK_TYPE, "'*' repeats a string a whole number of times, got %g", n);
    if (n <= 0 || s->len == 0) return val_str("", 0);   /* Python: "ab" * -1 == "" */
    if (!text_fits(I, "'*' on a string", n * s->len)) return ERR_VAL;
    int times = (int)n, len = s->len * times;
    ObjString *r = str_new_room("", 0, len);
    for (int i = 0; i < times; i++) str_append_in_place(r, s->chars, s->len);
    return OBJ_VAL(VAL_STR, r);
}

/* Binds a call whose parameters are all strings. */
static const BuiltinParams *bind_str(Interp *I, CallArgs *a, BuiltinFn self, Value *v) {
    const BuiltinParams *p = builtin_bind(I, a, self, v);
    for (int i = 0; p && i < p->np; i++) {
        ObjString *unused;
        if (v[i].type != VAL_UNDEF && !arg_str(I, p->def->name, p->names[i], v[i], &unused)) return NULL;
    }
    return p;
}

static void push_str(ObjList *l, const char *s, int len) {
    Value x = val_str(s, len);
    list_push(l, x);
    val_release(x);
}

static Value bi_split(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_split, v)) return ERR_VAL;
    ObjString *s, *sep = NULL;
    if (!arg_str(I, "split", "s", v[0], &s)) return ERR_VAL;
    if (v[1].type != VAL_UNDEF && v[1].type != VAL_NIL && !arg_str(I, "split", "sep", v[1], &sep)) return ERR_VAL;
    if (sep && sep->len == 0) return interp_error(I, "split(): empty separator");
    ObjList *l = list_new(0);
    const char *c = s->chars, *end = c + s->len;
    if (!sep) {   /* runs of whitespace separate; none at either end makes an empty item */
        for (;;) {
            for (int n; c < end && (n = space_at(c, end)) > 0;) c += n;
            if (c == end) break;
            const char *w = c;
            while (c < end && !space_at(c, end)) c += cp_bytes((unsigned char)*c);
            if (c > end) c = end;
            push_str(l, w, (int)(c - w));
        }
        return OBJ_VAL(VAL_LIST, l);
    }
    for (;;) {
        const char *hit = memmem(c, (size_t)(end - c), sep->chars, (size_t)sep->len);
        if (!hit) break;
        push_str(l, c, (int)(hit - c));
        c = hit + sep->len;
    }
    push_str(l, c, (int)(end - c));
    return OBJ_VAL(VAL_LIST, l);
}

static Value bi_join(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_join, v)) return ERR_VAL;
    if (v[0].type != VAL_LIST) return interp_errork(I, ERRK_TYPE, "join() needs a list of strings, got a %s", val_type_name(v[0]));
    ObjString *sep = NULL;
    if (v[1].type != VAL_UNDEF && !arg_str(I, "join", "sep", v[1], &sep)) return ERR_VAL;
    ObjList *l = AS_LIST(v[0]);
    double bytes = 0;
    for (int i = 0; i < l->len; i++) {
        if (l->items[i].type != VAL_STR)
            return interp_errork(I, ERRK_TYPE, "join(): item %d is a %s, not a string", i, val_type_name(l->items[i]));
        bytes += AS_STR(l->items[i])->len + (i && sep ? sep->len : 0);
    }
    if (!text_fits(I, "join()", bytes)) return ERR_VAL;
    ObjString *r = str_new_room("", 0, (int)bytes);
    for (int i = 0; i < l->len; i++) {
        if (i && sep) str_append_in_place(r, sep->chars, sep->len);
        str_append_in_place(r, AS_STR(l->items[i])->chars, AS_STR(l->items[i])->len);
    }
    return OBJ_VAL(VAL_STR, r);
}

static Value bi_replace(Interp *I, CallArgs *a) {
    Value v[3];
    if (!bind_str(I, a, bi_replace, v)) return ERR_VAL;
    ObjString *s = AS_STR(v[0]), *old = AS_STR(v[1]), *rep = AS_STR(v[2]);
    const char *c = s->chars, *end = c + s->len;
    /* count first, so the result is sized (and bounded) before anything is copied */
    double count = 0;
    if (old->len == 0) count = (double)s->ncp + 1;   /* Python: new goes before every character and at the end */
    else
        for (const char *h = c; (h = memmem(h, (size_t)(end - h), old->chars, (size_t)old->len)); h += old->len) count++;
    double bytes = s->len + count * (rep->len - old->len);
    if (!text_fits(I, "replace()", bytes)) return ERR_VAL;
    ObjString *r = str_new_room("", 0, (int)bytes);
    if (old->len == 0) {
        for (;;) {
            str_append_in_place(r, rep->chars, rep->len);
            if (c == end) break;
            int n = cp_bytes((unsigned char)*c);
            if (n > end - c) n = (int)(end - c);
            str_append_in_place(r, c, n);
            c += n;
        }
        return OBJ_VAL(VAL_STR, r);
    }
    for (const char *h; (h = memmem(c, (size_t)(end - c), old->chars, (size_t)old->len)); c = h + old->len) {
        str_append_in_place(r, c, (int)(h - c));
        str_append_in_place(r, rep->chars, rep->len);
    }
    str_append_in_place(r, c, (int)(end - c));
    return OBJ_VAL(VAL_STR, r);
}

static Value bi_find(Interp *I, CallArgs *a) {
    Value v[2];
    if (!bind_str(I, a, bi_find, v)) return ERR_VAL;
    ObjString *s = AS_STR(v[0]), *sub = AS_STR(v[1]);
    const char *hit = memmem(s->chars, (size_t)s->len, sub->chars, (size_t)sub->len);
    if (!hit) return NUM_VAL(-1);
    return NUM_VAL((double)utf8_length(s->chars, (int)(hit - s->chars)));   /* a code-point index, as s[i] takes */
}

static Value bi_strip(Interp *I, CallArgs *a) {
    Value v[1];
    if (!bind_str(I, a, bi_strip, v)) return ERR_VAL;
    ObjString *s = AS_STR(v[0]);
    int lo = 0, hi = s->len, n;
    while (lo < hi && (n = space_at(s->chars + lo, s->chars + hi)) > 0) lo += n;
    while (hi > lo && (n = space_before(s->chars + lo, s->chars + hi)) > 0) hi -= n;
    if (lo == 0 && hi == s->len) return val_retain(v[0]);   /* strings are immutable */
    return val_str(s->chars + lo, hi - lo);
}

static Value change_case(Interp *I, CallArgs *a, BuiltinFn self, bool up) {
    Value v[1];
    const BuiltinParams *p = bind_str(I, a, self, v);
    if (!p) return ERR_VAL;
    ObjString *s = AS_STR(v[0]);
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    casemap_append(&b, s->chars, (size_t)s->len, up);
    if (!text_fits(I, p->def->name, (double)b.len)) {
        sb_free(&b);
        return ERR_VAL;
    }
    Value r = val_str(b.s, (int)b.len);
    sb_free(&b);
    return r;
}

static Value bi_upper(Interp *I, CallArgs *a) { return change_case(I, a, bi_upper, true); }
static Value bi_lower(Interp *I, CallArgs *a) { return change_case(I, a, bi_lower, false); }

static Value affix(Interp *I, CallArgs *a, BuiltinFn self, bool at_end) {
    Value v[2];
    if (!bind_str(I, a, self, v)) return ERR_VAL;
    ObjString *s = AS_STR(v[0]), *x = AS_STR(v[1]);
    if (x->len > s->len) return BOOL_VAL(false);
    return BOOL_VAL(!memcmp(s->chars + (at_end ? s->len - x->len : 0), x->chars, (size_t)x->len));
}

static Value bi_startswith(Interp *I, CallArgs *a) { return affix(I, a, bi_startswith, false); }
static Value bi_endswith(Interp *I, CallArgs *a) { return affix(I, a, bi_endswith, true); }

const BuiltinDef string_builtins[] = {
    { "split", bi_split, "(s, sep=nil)", "the pieces of s between occurrences of sep (nil: runs of whitespace)", ST_FOLDS },
    { "join", bi_join, "(list, sep=\"\")", "the strings of the list joined with sep between them", ST_TEXT | ST_FOLDS },
    { "replace", bi_replace, "(s, old, new)", "s with every occurrence of old replaced by new", ST_FOLDS },
    { "find", bi_find, "(s, sub)", "the index of the first occurrence of sub in s, or -1", ST_FOLDS },
    { "strip", bi_strip, "(s)", "s without whitespace at either end", ST_FOLDS },
    { "upper", bi_upper, "(s)", "s with its letters in upper case", ST_FOLDS },
    { "lower", bi_lower, "(s)", "s with its letters in lower case", ST_FOLDS },
    { "startswith", bi_startswith, "(s, p)", "whether s begins with p", ST_FOLDS },
    { "endswith", bi_endswith, "(s, p)", "whether s ends with p", ST_FOLDS },
    { "format", builtin_format, "(value, spec=nil)", "a number, string or tensor formatted by a Python format spec", ST_TEXT | ST_FOLDS },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
