/* casemap.c - upper() and lower() as Python's str.upper()/str.lower(): Unicode's full case
 * mapping. One code point maps to one by the simple mapping of the C library's C.UTF-8 locale
 * (the same as Python's for every code point of Unicode 14), except where Unicode's
 * SpecialCasing makes several: the 102 code points whose upper case is longer (ß -> SS, the
 * ligatures, Greek with ypogegrammeni: upper_full below), İ whose lower case is i + U+0307,
 * and Σ, which lower-cases to final ς at the end of a word (Python's Final_Sigma rule). */
#include <locale.h>
#include <pthread.h>
#include <stdlib.h>
#include <wctype.h>
#include "builtins.h"

/* Python 3.11's str.upper() where it gives more than one code point (Unicode 14), sorted:
 * [c.upper() for c in map(chr, range(0x110000)) if len(c.upper()) > 1]. */
typedef struct {
    uint32_t cp, up[3];
} FullCase;
static const FullCase upper_full[] = {
    { 0x00DF, { 0x0053, 0x0053, 0x0000 } }, { 0x0149, { 0x02BC, 0x004E, 0x0000 } },
    { 0x01F0, { 0x004A, 0x030C, 0x0000 } }, { 0x0390, { 0x0399, 0x0308, 0x0301 } },
    { 0x03B0, { 0x03A5, 0x0308, 0x0301 } }, { 0x0587, { 0x0535, 0x0552, 0x0000 } },
    { 0x1E96, { 0x0048, 0x0331, 0x0000 } }, { 0x1E97, { 0x0054, 0x0308, 0x0000 } },
    { 0x1E98, { 0x0057, 0x030A, 0x0000 } }, { 0x1E99, { 0x0059, 0x030A, 0x0000 } },
    { 0x1E9A, { 0x0041, 0x02BE, 0x0000 } }, { 0x1F50, { 0x03A5, 0x0313, 0x0000 } },
    { 0x1F52, { 0x03A5, 0x0313, 0x0300 } }, { 0x1F54, { 0x03A5, 0x0313, 0x0301 } },
    { 0x1F56, { 0x03A5, 0x0313, 0x0342 } }, { 0x1F80, { 0x1F08, 0x0399, 0x0000 } },
    { 0x1F81, { 0x1F09, 0x0399, 0x0000 } }, { 0x1F82, { 0x1F0A, 0x0399, 0x0000 } },
    { 0x1F83, { 0x1F0B, 0x0399, 0x0000 } }, { 0x1F84, { 0x1F0C, 0x0399, 0x0000 } },
    { 0x1F85, { 0x1F0D, 0x0399, 0x0000 } }, { 0x1F86, { 0x1F0E, 0x0399, 0x0000 } },
    { 0x1F87, { 0x1F0F, 0x0399, 0x0000 } }, { 0x1F88, { 0x1F08, 0x0399, 0x0000 } },
    { 0x1F89, { 0x1F09, 0x0399, 0x0000 } }, { 0x1F8A, { 0x1F0A, 0x0399, 0x0000 } },
    { 0x1F8B, { 0x1F0B, 0x0399, 0x0000 } }, { 0x1F8C, { 0x1F0C, 0x0399, 0x0000 } },
    { 0x1F8D, { 0x1F0D, 0x0399, 0x0000 } }, { 0x1F8E, { 0x1F0E, 0x0399, 0x0000 } },
    { 0x1F8F, { 0x1F0F, 0x0399, 0x0000 } }, { 0x1F90, { 0x1F28, 0x0399, 0x0000 } },
    { 0x1F91, { 0x1F29, 0x0399, 0x0000 } }, { 0x1F92, { 0x1F2A, 0x0399, 0x0000 } },
    { 0x1F93, { 0x1F2B, 0x0399, 0x0000 } }, { 0x1F94, { 0x1F2C, 0x0399, 0x0000 } },
    { 0x1F95, { 0x1F2D, 0x0399, 0x0000 } }, { 0x1F96, { 0x1F2E, 0x0399, 0x0000 } },
    { 0x1F97, { 0x1F2F, 0x0399, 0x0000 } }, { 0x1F98, { 0x1F28, 0x0399, 0x0000 } },
    { 0x1F99, { 0x1F29, 0x0399, 0x0000 } }, { 0x1F9A, { 0x1F2A, 0x0399, 0x0000 } },
    { 0x1F9B, { 0x1F2B, 0x0399, 0x0000 } }, { 0x1F9C, { 0x1F2C, 0x0399, 0x0000 } },
    { 0x1F9D, { 0x1F2D, 0x0399, 0x0000 } }, { 0x1F9E, { 0x1F2E, 0x0399, 0x0000 } },
    { 0x1F9F, { 0x1F2F, 0x0399, 0x0000 } }, { 0x1FA0, { 0x1F68, 0x0399, 0x0000 } },
    { 0x1FA1, { 0x1F69, 0x0399, 0x0000 } }, { 0x1FA2, { 0x1F6A, 0x0399, 0x0000 } },
    { 0x1FA3, { 0x1F6B, 0x0399, 0x0000 } }, { 0x1FA4, { 0x1F6C, 0x0399, 0x0000 } },
    { 0x1FA5, { 0x1F6D, 0x0399, 0x0000 } }, { 0x1FA6, { 0x1F6E, 0x0399, 0x0000 } },
    { 0x1FA7, { 0x1F6F, 0x0399, 0x0000 } }, { 0x1FA8, { 0x1F68, 0x0399, 0x0000 } },
    { 0x1FA9, { 0x1F69, 0x0399, 0x0000 } }, { 0x1FAA, { 0x1F6A, 0x0399, 0x0000 } },
    { 0x1FAB, { 0x1F6B, 0x0399, 0x0000 } }, { 0x1FAC, { 0x1F6C, 0x0399, 0x0000 } },
    { 0x1FAD, { 0x1F6D, 0x0399, 0x0000 } }, { 0x1FAE, { 0x1F6E, 0x0399, 0x0000 } },
    { 0x1FAF, { 0x1F6F, 0x0399, 0x0000 } }, { 0x1FB2, { 0x1FBA, 0x0399, 0x0000 } },
    { 0x1FB3, { 0x0391, 0x0399, 0x0000 } }, { 0x1FB4, { 0x0386, 0x0399, 0x0000 } },
    { 0x1FB6, { 0x0391, 0x0342, 0x0000 } }, { 0x1FB7, { 0x0391, 0x0342, 0x0399 } },
    { 0x1FBC, { 0x0391, 0x0399, 0x0000 } }, { 0x1FC2, { 0x1FCA, 0x0399, 0x0000 } },
    { 0x1FC3, { 0x0397, 0x0399, 0x0000 } }, { 0x1FC4, { 0x0389, 0x0399, 0x0000 } },
    { 0x1FC6, { 0x0397, 0x0342, 0x0000 } }, { 0x1FC7, { 0x0397, 0x0342, 0x0399 } },
    { 0x1FCC, { 0x0397, 0x0399, 0x0000 } }, { 0x1FD2, { 0x0399, 0x0308, 0x0300 } },
    { 0x1FD3, { 0x0399, 0x0308, 0x0301 } }, { 0x1FD6, { 0x0399, 0x0342, 0x0000 } },
    { 0x1FD7, { 0x0399, 0x0308, 0x0342 } }, { 0x1FE2, { 0x03A5, 0x0308, 0x0300 } },
    { 0x1FE3, { 0x03A5, 0x0308, 0x0301 } }, { 0x1FE4, { 0x03A1, 0x0313, 0x0000 } },
    { 0x1FE6, { 0x03A5, 0x0342, 0x0000 } }, { 0x1FE7, { 0x03A5, 0x0308, 0x0342 } },
    { 0x1FF2, { 0x1FFA, 0x0399, 0x0000 } }, { 0x1FF3, { 0x03A9, 0x0399, 0x0000 } },
    { 0x1FF4, { 0x038F, 0x0399, 0x0000 } }, { 0x1FF6, { 0x03A9, 0x0342, 0x0000 } },
    { 0x1FF7, { 0x03A9, 0x0342, 0x0399 } }, { 0x1FFC, { 0x03A9, 0x0399, 0x0000 } },
    { 0xFB00, { 0x0046, 0x0046, 0x0000 } }, { 0xFB01, { 0x0046, 0x0049, 0x0000 } },
    { 0xFB02, { 0x0046, 0x004C, 0x0000 } }, { 0xFB03, { 0x0046, 0x0046, 0x0049 } },
    { 0xFB04, { 0x0046, 0x0046, 0x004C } }, { 0xFB05, { 0x0053, 0x0054, 0x0000 } },
    { 0xFB06, { 0x0053, 0x0054, 0x0000 } }, { 0xFB13, { 0x0544, 0x0546, 0x0000 } },
    { 0xFB14, { 0x0544, 0x0535, 0x0000 } }, { 0xFB15, { 0x0544, 0x053B, 0x0000 } },
    { 0xFB16, { 0x054E, 0x0546, 0x0000 } }, { 0xFB17, { 0x0544, 0x053D, 0x0000 } },
};

static int full_cmp(const void *k, const void *e) {
    uint32_t c = *(const uint32_t *)k, d = ((const FullCase *)e)->cp;
    return c < d ? -1 : c > d;
}

static locale_t utf8;   /* made once per process, read-only afterwards */
static void utf8_open(void) { utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0); }

/* The simple (one to one) mapping; ASCII's where the C.UTF-8 locale is missing. */
static uint32_t simple_case(uint32_t c, bool up) {
    if (c < 0x80) return up ? (c >= 'a' && c <= 'z' ? c - 32 : c) : (c >= 'A' && c <= 'Z' ? c + 32 : c);
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, utf8_open);
    if (!utf8) return c;
    uint32_t m = (uint32_t)(up ? towupper_l((wint_t)c, utf8) : towlower_l((wint_t)c, utf8));
    return m > 0x10FFFF || (m >= 0xD800 && m <= 0xDFFF) ? c : m;
}

/* A letter with case (Unicode's Cased, as near as the locale tells). */
static bool is_cased(uint32_t c) { return simple_case(c, true) != c || simple_case(c, false) != c; }

/* Unicode's Case_Ignorable, approximated: the apostrophes and word-inner punctuation, the
 * modifier letters and the combining marks' blocks, and the invisible format characters. */
static bool is_case_ignorable(uint32_t c) {
    return c == '\'' || c == '.' || c == ':' || c == '^' || c == '`' || c == 0xA8 || c == 0xAD || c == 0xAF ||
           c == 0xB4 || c == 0xB7 || c == 0xB8 || c == 0x2018 || c == 0x2019 || c == 0x2024 || c == 0x2027 ||
           (c >= 0x2B0 && c <= 0x36F) || (c >= 0x483 && c <= 0x489) || (c >= 0x1AB0 && c <= 0x1AFF) ||
           (c >= 0x1DC0 && c <= 0x1DFF) || (c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
           (c >= 0x2060 && c <= 0x2064) || (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE00 && c <= 0xFE0F) ||
           (c >= 0xFE20 && c <= 0xFE2F) || c == 0xFEFF;
}

static int cp_bytes(unsigned char c) { return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1; }

/* The code point at p and its length n (a sequence cut by end is what is there). */
static uint32_t cp_next(const unsigned char *p, const unsigned char *end, int *n) {
    *n = cp_bytes(*p);
    if (*n > end - p) *n = (int)(end - p);
    uint32_t cp = *n == 1 ? *p : (uint32_t)(*p & (0xFF >> (*n + 1)));
    for (int i = 1; i < *n; i++) cp = cp << 6 | (p[i] & 0x3F);
    return cp;
}

/* The code point that ends at p (after start); *q is where it begins. */
static uint32_t cp_prev(const unsigned char *start, const unsigned char *p, const unsigned char **q) {
    const unsigned char *b = p - 1;
    while (b > start && p - b < 4 && (*b & 0xC0) == 0x80) b--;
    int n;
    *q = b;
    return cp_next(b, p, &n);
}

/* Python's Final_Sigma: a cased letter before (past case-ignorable ones) and none after. */
static bool final_sigma(const unsigned char *start, const unsigned char *at, const unsigned char *after,
                        const unsigned char *end) {
    const unsigned char *p = at;
    bool before = false;
    while (p > start) {
        uint32_t c = cp_prev(start, p, &p);
        if (!is_case_ignorable(c)) { before = is_cased(c); break; }
    }
    if (!before) return false;
    for (int n; after < end; after += n) {
        uint32_t c = cp_next(after, end, &n);
        if (!is_case_ignorable(c)) return !is_cased(c);
    }
    return true;
}

static void put_cp(StrBuf *b, uint32_t c) {
    char u[4];
    int n;
    if (c < 0x80) { u[0] = (char)c; n = 1; }
    else if (c < 0x800) { u[0] = (char)(0xC0 | c >> 6); u[1] = (char)(0x80 | (c & 0x3F)); n = 2; }
    else if (c < 0x10000) {
        u[0] = (char)(0xE0 | c >> 12); u[1] = (char)(0x80 | ((c >> 6) & 0x3F)); u[2] = (char)(0x80 | (c & 0x3F)); n = 3;
    } else {
        u[0] = (char)(0xF0 | c >> 18); u[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3F)); u[3] = (char)(0x80 | (c & 0x3F)); n = 4;
    }
    sb_putn(b, u, (size_t)n);
}

void casemap_append(StrBuf *b, const char *s, size_t len, bool up) {
    const unsigned char *start = (const unsigned char *)s, *c = start, *end = start + len;
    for (int n; c < end; c += n) {
        uint32_t cp = cp_next(c, end, &n);
        const FullCase *f = up && cp >= 0xDF ? bsearch(&cp, upper_full, sizeof upper_full / sizeof *upper_full,
                                                       sizeof *upper_full, full_cmp) : NULL;
        if (f) {
            for (int i = 0; i < 3 && f->up[i]; i++) put_cp(b, f->up[i]);
        } else if (!up && cp == 0x130) {   /* İ: i and a combining dot above */
            put_cp(b, 'i');
            put_cp(b, 0x307);
        } else if (!up && cp == 0x3A3 && final_sigma(start, c, c + n, end)) {
            put_cp(b, 0x3C2);
        } else {
            uint32_t m = simple_case(cp, up);
            if (m == cp) sb_putn(b, (const char *)c, (size_t)n);   /* as it was, bytes and all */
            else put_cp(b, m);
        }
    }
}
