/* errval.c - errors as values (spec section 12): the dict a `catch e` binds, raise(), and the
 * kind argument of error().
 *
 * A caught error is the pending error of the interpreter (message, kind, place, the frames it
 * unwound through) made into a plain dict; raise(e) makes it pending again, at the place the
 * dict names when that source is still known, with the frames its `traceback` lists, so a
 * re-raised error reads as the original. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "interp.h"
#include "builtins.h"
#include "methods.h"

int error_kind_arg(Interp *I, const char *fname, Value v) {
    int k = IS_STR(v) ? errkind_parse(AS_STR(v)->chars) : -1;
    if (k < 0)
        interp_errork(I, IS_STR(v) ? ERRK_VALUE : ERRK_TYPE,
                      "%s(): kind must be one of \"value\" \"type\" \"shape\" \"index\" \"key\" \"io\" \"memory\" "
                      "\"device\" \"assert\" \"user\"", fname);
    return k;
}

static void set_str(ObjDict *d, const char *key, const char *s) {
    Value v = val_cstr(s);
    dict_set_cstr(d, key, v);
    val_release(v);
}

/* The frames the error went through, innermost first, as the report lists them (run.c). */
static Value traceback_list(const Traceback *t) {
    ObjList *l = list_new(traceback_nlines(t));
    Value lv = OBJ_VAL(VAL_LIST, l);
    StrBuf b = { 0 };
    for (int i = 0; i < traceback_nlines(t); i++) {
        b.len = 0;
        sb_putn(&b, "", 0);
        traceback_line(&b, t, i);
        Value s = val_str(b.s, (int)b.len);
        list_push(l, s);
        val_release(s);
    }
    sb_free(&b);
    return lv;
}

Value interp_caught_error(Interp *I) {
    ObjDict *d = dict_new();
    Value dv = OBJ_VAL(VAL_DICT, d);
    set_str(d, "message", I->err_msg);
    set_str(d, "kind", errkind_name(I->err_kind));
    Source *src = I->err_src ? I->err_src : I->cur_src;
    if (src) set_str(d, "file", src->name);
    else dict_set_cstr(d, "file", NIL_VAL);
    dict_set_cstr(d, "line", I->err_has_loc ? NUM_VAL(I->err_loc.line) : NIL_VAL);
    dict_set_cstr(d, "col", I->err_has_loc ? NUM_VAL(I->err_loc.col) : NIL_VAL);
    Value tb = traceback_list(&I->traceback);
    dict_set_cstr(d, "traceback", tb);
    val_release(tb);
    return dv;
}

static Source *source_named(Interp *I, const char *name) {
    for (Source *s = I->sources; s; s = s->next)
        if (!strcmp(s->name, name)) return s;
    return NULL;
}

/* Where the dict says the error was: its file (a source this state still holds) and line:col. */
static void raise_at(Interp *I, ObjDict *d) {
    Value *file = dict_get(d, "file", 4), *line = dict_get(d, "line", 4), *col = dict_get(d, "col", 3);
    if (!file || !IS_STR(*file) || !line || !IS_NUM(*line) || !col || !IS_NUM(*col)) return;
    Source *src = source_named(I, AS_STR(*file)->chars);
    if (!src) return;
    I->err_has_loc = true;
    I->err_src = src;
    I->err_loc = (SrcLoc){ .line = (int)line->as.n, .col = (int)col->as.n };
}

/* One line of a caught traceback back into frames: "in NAME() called from FILE:L:C", maybe
 * with " (repeated N times)", or "... N more frames ...". A line that does not read so, or
 * names a source this state no longer holds, is left out. */
static void restore_line(Interp *I, const char *s) {
    long n;
    if (sscanf(s, "... %ld more frame", &n) == 1 && n > 0) {
        long *h = &I->traceback.hidden;
        *h = *h > LONG_MAX - n ? LONG_MAX : *h + n;
        return;
    }
    const char *call = strstr(s, "() called from ");
    if (strncmp(s, "in ", 3) || !call || call - (s + 3) >= 64) return;
    char name[64], file[4096];
    snprintf(name, sizeof name, "%.*s", (int)(call - (s + 3)), s + 3);
    const char *where = call + strlen("() called from ");
    const char *rep = strstr(where, " (repeated ");
    long count = 1;
    if (rep && (sscanf(rep, " (repeated %ld times)", &count) != 1 || count < 1)) return;
    size_t len = rep ? (size_t)(rep - where) : strlen(where);
    if (len >= sizeof file) return;
    memcpy(file, where, len);
    file[len] = 0;
    char *c2 = strrchr(file, ':');
    if (!c2) return;
    *c2 = 0;
    char *c1 = strrchr(file, ':');
    if (!c1) return;
    *c1 = 0;
    int line = atoi(c1 + 1), col = atoi(c2 + 1);
    Source *src = source_named(I, file);
    if (src && line > 0 && col > 0) traceback_add_n(&I->traceback, name, src, (SrcLoc){ .line = line, .col = col }, count);
}

/* The frames a caught error had gone through, so that raise(e) reports them again (as
 * Python's re-raise keeps its traceback) before the frames it unwinds through now. */
static void restore_traceback(Interp *I, ObjDict *d) {
    Value *tb = dict_get(d, "traceback", 9);
    if (!tb || !IS_LIST(*tb)) return;
    ObjList *l = AS_LIST(*tb);
    for (int i = 0; i < l->len; i++)
        if (IS_STR(l->items[i])) restore_line(I, AS_STR(l->items[i])->chars);
}

/* raise(e): e a caught error (a dict with a string `message`, and `kind`, `file`, `line`,
 * `col` when it has them) or a message (kind "user"). */
Value builtin_raise(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, builtin_raise, v)) return ERR_VAL;
    if (IS_STR(v[0])) return interp_errork(I, ERRK_USER, "%s", AS_STR(v[0])->chars);
    Value *msg = IS_DICT(v[0]) ? dict_get(AS_DICT(v[0]), "message", 7) : NULL;
    if (!msg || !IS_STR(*msg))
        return interp_errork(I, ERRK_TYPE, "raise() needs a caught error (a dict with a string 'message') or a string, got a %s",
                             val_type_name(v[0]));
    Value *kind = dict_get(AS_DICT(v[0]), "kind", 4);
    int k = kind ? error_kind_arg(I, "raise", *kind) : ERRK_USER;
    if (k < 0) return ERR_VAL;
    interp_errork(I, (ErrKind)k, "%s", AS_STR(*msg)->chars);
    raise_at(I, AS_DICT(v[0]));
    restore_traceback(I, AS_DICT(v[0]));
    return ERR_VAL;
}

const char *const interp_keywords[] = { "fn", "return", "if", "else", "while", "for", "in", "break", "continue",
                                        "static", "import", "and", "or", "not", "true", "false", "nil", "try",
                                        "catch", NULL };

/* Whether name is one of the function's locals and a global of the module with a value: the
 * function assigns the name, so it is local there, and reading it before that assignment
 * is what failed (`n += 1` on a global n, which Python programmers write with `global`). */
static bool shadows_global(const Module *m, const FnProto *p, const char *name) {
    bool local = false;
    for (int i = 0; p && i < p->nlocals && !local; i++) local = !strcmp(p->local_names[i], name);
    for (int i = 0; local && m && i < m->g.count; i++)
        if (m->g.vals[i].type != VAL_UNDEF && !strcmp(m->g.names[i], name)) return true;
    return false;
}

const char *interp_name_hint(const Module *m, const FnProto *p, const char *name, char *buf, size_t n) {
    if (shadows_global(m, p, name)) {
        snprintf(buf, n, " here: the function assigns it, so it is local (a function never rebinds a global)");
        return buf;
    }
    Suggest s;
    suggest_init(&s, name);
    for (int i = 0; p && i < p->nlocals; i++) suggest_offer(&s, p->local_names[i]);
    for (int i = 0; p && i < p->nupvals; i++) suggest_offer(&s, p->upval_names[i]);
    for (int i = 0; m && i < m->g.count; i++)
        if (m->g.vals[i].type != VAL_UNDEF) suggest_offer(&s, m->g.names[i]);
    for (int i = 0; interp_keywords[i]; i++) suggest_offer(&s, interp_keywords[i]);
    return suggest_text(&s, buf, n);
}

const char *interp_param_hint(const FnProto *p, const char *name, char *buf, size_t n) {
    Suggest s;
    suggest_init(&s, name);
    for (int i = 0; i < p->nparams; i++) suggest_offer(&s, p->params[i]);
    return suggest_text(&s, buf, n);
}

const char *interp_attr_hint(const char *name, char *buf, size_t n) {
    Suggest s;   /* the attributes, then the methods (the op table's: lang/methods.h) */
    suggest_init(&s, name);
    for (int i = 0; tensor_attrs[i]; i++) suggest_offer(&s, tensor_attrs[i]);
    for (int i = 0; method_tensor_nth(i); i++) suggest_offer(&s, method_tensor_nth(i));
    return suggest_text(&s, buf, n);
}

/* Python's methods on str, list and dict are TSL's functions (s.upper() is upper(s), l.append(x)
 * is push(l, x)): the form to write, for the field a Python programmer reaches for first. */
static const char *const python_methods[][3] = {
    { "string", "upper", "upper(s)" }, { "string", "lower", "lower(s)" },
    { "string", "split", "split(s, sep)" }, { "string", "strip", "strip(s)" },
    { "string", "replace", "replace(s, old, new)" }, { "string", "find", "find(s, sub)" },
    { "string", "startswith", "startswith(s, prefix)" }, { "string", "endswith", "endswith(s, suffix)" },
    { "string", "join", "join(list, s)" }, { "string", "format", "format(value, spec)" },
    { "list", "append", "push(l, x)" }, { "list", "pop", "pop(l)" }, { "list", "sort", "l = sorted(l)" },
    { "list", "reverse", "l = reversed(l)" }, { "list", "insert", "insert(l, i, x)" },
    { "list", "remove", "remove(l, x)" }, { "list", "extend", "extend(l, other)" },
    { "list", "index", "index(l, x)" }, { "list", "copy", "l[:]" },
    { "dict", "keys", "keys(d)" }, { "dict", "get", "get(d, key, default)" }, { "dict", "pop", "pop(d, key)" },
    { "dict", "items", "[[k, d[k]] for k in keys(d)]" }, { "dict", "values", "[d[k] for k in d]" },
};

const char *interp_field_hint(const char *type, const char *name, char *buf, size_t n) {
    for (size_t i = 0; i < sizeof python_methods / sizeof python_methods[0]; i++)
        if (!strcmp(python_methods[i][0], type) && !strcmp(python_methods[i][1], name)) {
            snprintf(buf, n, "; in TSL: %s", python_methods[i][2]);
            return buf;
        }
    return "";
}
