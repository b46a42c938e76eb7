/* suggest.h - "did you mean" for an unknown name, attribute, key or keyword (spec section 12).
 *
 * The one helper every such error uses, eager and static alike, so they word it the same: offer
 * the known names one by one, then append suggest_text's "; did you mean 'X'?" to the message.
 * A name is close enough within a small edit distance (Damerau-Levenshtein, a swap of neighbours
 * one edit) scaled by length, as Python 3.10+ does: (len(name) + len(known) + 3) / 6 edits, at
 * most 2, so a one-letter name never gets a suggestion. The first of equally close names wins.
 * PyTorch's and NumPy's names for TSL's (dim -> axis, cat -> concat, unsqueeze -> expand_dims,
 * view -> reshape, ...: the table in suggest.c) count as closer than any edit. */
#ifndef TSL_SUGGEST_H
#define TSL_SUGGEST_H
#include <stddef.h>

#define SUGGEST_MAX_NAME 64
typedef struct {
    const char *name;
    int best_dist;
    char best[SUGGEST_MAX_NAME];
} Suggest;

void suggest_init(Suggest *s, const char *name);
void suggest_offer(Suggest *s, const char *known);
/* "; did you mean 'X'?" (in buf) when an offered name was close enough, else "". */
const char *suggest_text(const Suggest *s, char *buf, size_t n);
/* All three over a NULL-terminated list. */
const char *suggest_among(const char *name, const char *const *known, char *buf, size_t n);

#endif
