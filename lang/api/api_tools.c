/* api_tools.c - what an interactive host needs beyond running code: help texts, the last
 * static block's listing, the variables, tab completion, escaping for a terminal. The REPL
 * (repl/repl.c) is built from these and nothing else. */
#include <string.h>
#include "api.h"
#include "builtins.h"
#include "help.h"
#include "methods.h"
#include "mem.h"
#include "vm.h"

static const char *scratch_begin(tsl_State *S) {
    S->text.len = 0;
    sb_putn(&S->text, "", 0);
    return S->text.s;
}

/* Each tool runs inside its state (api_run): the texts it builds are the state's memory. */
typedef struct {
    const char *name;
    const char **text;
    int index;
} ToolJob;

static tsl_Status help_text(tsl_State *S, void *ud) {
    ToolJob *j = ud;
    scratch_begin(S);
    help_name(S->I, api_main(S), j->name, &S->text);
    *j->text = S->text.s;
    return TSL_OK;
}

tsl_Status tsl_help_text(tsl_State *S, const char *name, const char **text) {
    if (!S || !name || !text) return TSL_BADARG;
    api_begin(S);
    *text = NULL;
    return api_run(S, help_text, &(ToolJob){ name, text, 0 });
}

static tsl_Status dis_text(tsl_State *S, void *ud) {
    const char **text = ((ToolJob *)ud)->text;
    scratch_begin(S);
    if (IS_ERR(static_dis_text(S->I, NIL_VAL, false, &S->text))) {
        interp_report_error(S->I);
        return TSL_ERROR;
    }
    *text = S->text.s;
    return TSL_OK;
}

tsl_Status tsl_dis_text(tsl_State *S, const char **text) {
    if (!S || !text) return TSL_BADARG;
    api_begin(S);
    *text = NULL;
    return api_run(S, dis_text, &(ToolJob){ NULL, text, 0 });
}

/* One line: the value as the REPL shows it, its first row for a matrix, cut to the line. */
static void put_var(StrBuf *out, const char *name, Value v) {
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    fmt_value(&b, v, true);
    char *nl = strchr(b.s, '\n');
    if (nl) { strcpy(nl, " ..."); b.len = strlen(b.s); }
    if (b.len > 70) {
        size_t cut = 67;
        while (cut > 0 && (b.s[cut] & 0xc0) == 0x80) cut--;   /* not inside a UTF-8 character */
        memcpy(b.s + cut, "...", 4);
    }
    sb_printf(out, "  %-16s %-9s %s\n", name, val_type_name(v), b.s);
    sb_free(&b);
}

static tsl_Status vars_text(tsl_State *S, void *ud) {
    const char **text = ((ToolJob *)ud)->text;
    scratch_begin(S);
    Globals *g = &api_main(S)->g;
    StrBuf out = { 0 };   /* fmt_value may not write into the buffer it is appended to */
    sb_putn(&out, "", 0);
    for (int i = 0; i < g->count; i++) {
        Value v = g->vals[i];
        if (v.type == VAL_UNDEF || builtin_is(v, g->names[i]) || builtin_constant_is(v, g->names[i])) continue;
        put_var(&out, g->names[i], v);
    }
    sb_putn(&S->text, out.s, out.len);
    sb_free(&out);
    *text = S->text.s;
    return TSL_OK;
}

tsl_Status tsl_vars_text(tsl_State *S, const char **text) {
    if (!S || !text) return TSL_BADARG;
    api_begin(S);
    *text = NULL;
    return api_run(S, vars_text, &(ToolJob){ NULL, text, 0 });
}

/* ---- completion ---- */

/* The value `text` names up to its last '.', read from the globals and dict fields without
 * running anything (a module is the dict of its exports); UNDEF when it names none. */
static Value completion_target(Globals *g, const char *text, size_t dot) {
    const char *seg = text, *end = text + dot;
    const char *stop = memchr(seg, '.', (size_t)(end - seg));
    size_t n = (size_t)((stop ? stop : end) - seg);
    Value v = UNDEF_VAL;
    for (int i = 0; i < g->count; i++)
        if (strlen(g->names[i]) == n && !memcmp(g->names[i], seg, n)) v = g->vals[i];
    while (v.type != VAL_UNDEF && stop) {
        seg = stop + 1;
        stop = memchr(seg, '.', (size_t)(end - seg));
        n = (size_t)((stop ? stop : end) - seg);
        Value *f = v.type == VAL_DICT ? dict_get(AS_DICT(v), seg, (int)n) : NULL;
        v = f ? *f : UNDEF_VAL;
    }
    return v;
}

static bool is_identifier(const char *s) {
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return false;
    for (s++; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

/* The i-th member of a tensor: its attributes, then its methods (methods.h); NULL past the last. */
static const char *tensor_member(int i) {
    int nattrs = 0;
    while (tensor_attrs[nattrs]) nattrs++;
    return i < nattrs ? tensor_attrs[i] : method_tensor_nth(i - nattrs);
}

/* The index-th field of target (dict keys that are names, or a tensor's attributes and
 * methods) starting with part; NULL past the last. */
static const char *nth_field(Value target, const char *part, int index) {
    size_t plen = strlen(part);
    for (int i = 0;; i++) {
        const char *name;
        if (target.type == VAL_DICT) {
            ObjDict *d = AS_DICT(target);
            if (i >= d->len) return NULL;
            name = d->entries[i].key->chars;
            if (!is_identifier(name)) continue;
        } else if (target.type == VAL_TENSOR) {
            name = tensor_member(i);
            if (!name) return NULL;
        } else {
            return NULL;
        }
        if (strncmp(name, part, plen)) continue;
        if (index-- == 0) return name;
    }
}

static const char *nth_global(Globals *g, const char *prefix, int index) {
    size_t len = strlen(prefix);
    for (int i = 0; i < g->count; i++)
        if (g->vals[i].type != VAL_UNDEF && !strncmp(g->names[i], prefix, len) && index-- == 0) return g->names[i];
    return NULL;
}

/* The index-th keyword starting with prefix; NULL past the last. */
static const char *nth_keyword(const char *prefix, int index) {
    size_t len = strlen(prefix);
    for (int i = 0; interp_keywords[i]; i++)
        if (!strncmp(interp_keywords[i], prefix, len) && index-- == 0) return interp_keywords[i];
    return NULL;
}

static tsl_Status complete(tsl_State *S, void *ud) {
    ToolJob *j = ud;
    const char *text = j->name, **out = j->text;
    int index = j->index;
    Globals *g = &api_main(S)->g;
    const char *dot = strrchr(text, '.');
    if (!dot) {   /* the globals, then the keywords */
        int nglobals = 0;
        while (nth_global(g, text, nglobals)) nglobals++;
        const char *name = index < nglobals ? nth_global(g, text, index) : nth_keyword(text, index - nglobals);
        if (!name) return TSL_OK;
        scratch_begin(S);
        sb_puts(&S->text, name);
        *out = S->text.s;
        return TSL_OK;
    }
    size_t at = (size_t)(dot - text);
    const char *field = nth_field(completion_target(g, text, at), dot + 1, index);
    if (!field) return TSL_OK;
    scratch_begin(S);
    sb_putn(&S->text, text, at + 1);
    sb_puts(&S->text, field);
    *out = S->text.s;
    return TSL_OK;
}

tsl_Status tsl_complete(tsl_State *S, const char *text, int index, const char **out) {
    if (!S || !text || !out || index < 0) return TSL_BADARG;
    *out = NULL;
    return api_run(S, complete, &(ToolJob){ text, out, index });
}

/* s NULL is the empty text; buf NULL writes nothing (as cap 0) and still says the length. */
size_t tsl_escape(const char *s, size_t n, char *buf, size_t cap) {
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    if (s) sb_put_escaped(&b, s, n);
    size_t len = b.len;
    if (buf && cap) {
        size_t k = len < cap - 1 ? len : cap - 1;
        memcpy(buf, b.s, k);
        buf[k] = 0;
    }
    sb_free(&b);
    return len;
}
