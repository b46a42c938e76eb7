/* casemap.c - upper() and lower() as Python's str.upper()/str.lower(): Unicode's full case
 * mapping, SpecialCasing's one-to-many mappings (ß -> SS, the ligatures, İ -> i + U+0307) and
 * the Final_Sigma context (Σ lower-cases to ς at the end of a word) included, through GNU
 * libunistring (u8_toupper, u8_tolower) with no language's tailoring, as Python has none. */
#include <errno.h>
#include <stdlib.h>
#include <unicase.h>
#include "builtins.h"
#include "mem.h"

void casemap_append(StrBuf *b, const char *s, size_t len, bool up) {
    size_t n = 0;
    uint8_t *(*map)(const uint8_t *, size_t, const char *, uninorm_t, uint8_t *, size_t *) = up ? u8_toupper : u8_tolower;
    uint8_t *r = map((const uint8_t *)s, len, NULL, NULL, NULL, &n);
    if (!r) {
        if (errno == ENOMEM) mem_throw_oom();
        sb_putn(b, s, len);   /* not UTF-8 (EILSEQ): as it was, as Python's bytes would stay */
        return;
    }
    sb_putn(b, (const char *)r, n);
    free(r);
}
