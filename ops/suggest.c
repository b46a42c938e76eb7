/* suggest.c - the closest known name to an unknown one (suggest.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "suggest.h"

/* Edits (insert, delete, substitute, swap two neighbours) from a to b: the optimal string
 * alignment distance, both shorter than SUGGEST_MAX_NAME. */
static int edit_distance(const char *a, int la, const char *b, int lb) {
    int d[SUGGEST_MAX_NAME + 1][SUGGEST_MAX_NAME + 1];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int cost = a[i - 1] != b[j - 1];
            int x = d[i - 1][j] + 1, y = d[i][j - 1] + 1, z = d[i - 1][j - 1] + cost;
            int m = x < y ? x : y;
            m = m < z ? m : z;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < m)
                m = d[i - 2][j - 2] + 1;
            d[i][j] = m;
        }
    return d[la][lb];
}

/* PyTorch's and NumPy's spellings of what TSL names otherwise, far apart in edits: a user coming
 * from them writes `x.mean(dim=1)` or `cat(...)` first. Each pair suggests the TSL name when it
 * is among the names offered (so `dim` suggests `axis` only where `axis` is a keyword). */
static const char *const synonyms[][2] = {
    { "dim", "axis" },         { "cat", "concat" },       { "concatenate", "concat" },
    { "unsqueeze", "expand_dims" }, { "permute", "transpose" }, { "view", "reshape" },
    { "numel", "size" },       { "mm", "matmul" },        { "bmm", "matmul" },
    { "amax", "max" },         { "amin", "min" },         { "long", "astype" },
    { "float", "astype" },     { "double", "astype" },    { "type_as", "astype" },
    { "None", "nil" },         { "null", "nil" },
};

static bool is_synonym(const char *name, const char *known) {
    for (size_t i = 0; i < sizeof synonyms / sizeof synonyms[0]; i++)
        if (!strcmp(synonyms[i][0], name) && !strcmp(synonyms[i][1], known)) return true;
    return false;
}

void suggest_init(Suggest *s, const char *name) {
    s->name = name;
    s->best_dist = 1 << 20;
    s->best[0] = 0;
}

void suggest_offer(Suggest *s, const char *known) {
    int la = (int)strlen(s->name), lb = (int)strlen(known);
    if (la >= SUGGEST_MAX_NAME || lb >= SUGGEST_MAX_NAME || !strcmp(s->name, known)) return;
    if (is_synonym(s->name, known)) {   /* closer than any edit: it is the same thing */
        s->best_dist = 0;
        memcpy(s->best, known, (size_t)lb + 1);
        return;
    }
    int allowed = (la + lb + 3) / 6;
    if (allowed > 2) allowed = 2;
    int dl = la > lb ? la - lb : lb - la;
    if (dl > allowed || dl >= s->best_dist) return;
    int dist = edit_distance(s->name, la, known, lb);
    if (dist > allowed || dist >= s->best_dist) return;
    s->best_dist = dist;
    memcpy(s->best, known, (size_t)lb + 1);
}

const char *suggest_text(const Suggest *s, char *buf, size_t n) {
    if (!s->best[0]) snprintf(buf, n, "%s", "");
    else snprintf(buf, n, "; did you mean '%s'?", s->best);
    return buf;
}

const char *suggest_among(const char *name, const char *const *known, char *buf, size_t n) {
    Suggest s;
    suggest_init(&s, name);
    for (int i = 0; known[i]; i++) suggest_offer(&s, known[i]);
    return suggest_text(&s, buf, n);
}
