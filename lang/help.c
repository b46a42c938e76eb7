/* help.c - help(x) and `:help NAME` (spec section 5).
 *
 * Nothing here is written twice: a built-in's signature and line come from the table that
 * defines it (ops/ops.def for tensor ops, the BuiltinDef rows for the rest), a TSL function's
 * from its own source text (the parameter list as written, and the `#` lines directly above
 * the `fn`), a module's from its functions. In static code help() is not compiled: like any
 * built-in the compiler does not know, it makes the block run eagerly (TSL_EXPLAIN says so). */
#include <stdlib.h>
#include <string.h>
#include "builtins.h"
#include "help.h"
#include "mem.h"
#include "opcall.h"

/* Where line `rel` (1-based) of a text begins, or NULL past its end. A cursor lives for one
 * help() call and goes on from its last answer when asked for a later line of the same text
 * (a module's functions come sorted by position), so describing a module reads its text once
 * rather than once per function. */
typedef struct {
    const Source *src;
    int line;
    const char *at;
} LineCursor;

static const char *line_start(LineCursor *c, const Source *x, int rel) {
    if (rel < 1) return NULL;
    if (c->src != x || rel < c->line) {
        c->src = x;
        c->line = 1;
        c->at = x->text;
    }
    const char *end = x->text + x->len;
    while (c->line < rel) {
        const char *nl = memchr(c->at, '\n', (size_t)(end - c->at));
        if (!nl) return NULL;
        c->at = nl + 1;
        c->line++;
    }
    return c->at;
}

/* The `#` comment lines directly above the line of loc (a location counts lines over the whole
 * REPL session: line_base is where this text starts), top to bottom, each as "  TEXT\n" with
 * "# " taken off; or only the first non-blank one, bare, when `first_only`. */
static void comment_above(LineCursor *cur, const Source *src, SrcLoc loc, bool first_only, StrBuf *b) {
    const char *fn_line = line_start(cur, src, loc.line - src->line_base);
    if (!fn_line) return;
    const char *top = fn_line;
    while (top > src->text) {   /* back over the comment lines, from the '\n' ending each */
        const char *prev = top - 1;
        while (prev > src->text && prev[-1] != '\n') prev--;
        const char *s = prev;
        while (*s == ' ' || *s == '\t') s++;
        if (*s != '#') break;
        top = prev;
    }
    for (const char *line = top; line < fn_line;) {
        const char *e = memchr(line, '\n', (size_t)(fn_line - line));
        const char *s = line;
        size_t n = (size_t)(e - line);
        line = e + 1;
        while (*s == ' ' || *s == '\t') s++, n--;
        s++, n--;   /* the '#' */
        if (n && *s == ' ') s++, n--;
        while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) n--;
        if (first_only) {
            if (!n) continue;   /* a blank comment line before the text */
            sb_putn(b, s, n);
            return;
        }
        if (n) sb_puts(b, "  ");
        sb_putn(b, s, n);
        sb_puts(b, "\n");
    }
}

/* "(params)" as written in the source: from the '(' after the fn token to its ')', with
 * comments left out and each run of white space shown as one space. */
static bool params_as_written(LineCursor *cur, const Source *src, const FnProto *p, StrBuf *b) {
    const char *s = line_start(cur, src, p->loc.line - src->line_base), *end = src->text + src->len;
    if (!s || p->loc.col < 1 || p->loc.col - 1 > end - s) return false;
    s += p->loc.col - 1;
    while (s < end && *s != '(') s++;
    if (s >= end) return false;
    int depth = 0;
    bool space = false;
    for (; s < end; s++) {
        char ch = *s;
        if (ch == '#') {
            while (s + 1 < end && s[1] != '\n') s++;
            continue;
        }
        if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r') { space = true; continue; }
        if (space && ch != ')' && ch != ',' && b->len && b->s[b->len - 1] != '(') sb_puts(b, " ");
        space = false;
        if (ch == '"' || ch == '\'') {   /* a string default: its brackets do not count */
            const char *q = s + 1;
            while (q < end && *q != ch && *q != '\n') q += *q == '\\' && q + 1 < end ? 2 : 1;
            if (q >= end) return false;
            sb_putn(b, s, (size_t)(q - s + 1));
            s = q;
            continue;
        }
        sb_putn(b, s, 1);
        if (ch == '(' || ch == '[' || ch == '{') depth++;
        else if ((ch == ')' || ch == ']' || ch == '}') && --depth == 0) return true;
    }
    return false;
}

/* "fn name(params)" of a closure; the parameter names alone when its text is gone. */
static void closure_signature(LineCursor *cur, ObjClosure *c, StrBuf *b) {
    const FnProto *p = c->proto;
    sb_printf(b, "%sfn%s%s", p->is_static ? "static " : "", p->name[0] ? " " : "", p->name);   /* fn(x) when anonymous */
    size_t at = b->len;
    const Source *src = closure_src(c);
    if (src && params_as_written(cur, src, p, b)) return;
    b->len = at;
    b->s[at] = 0;
    sb_puts(b, "(");
    for (int i = 0; i < p->nparams; i++) sb_printf(b, "%s%s%s", i ? ", " : "", p->params[i], p->defaults[i] ? "=..." : "");
    sb_puts(b, ")");
}

/* An op's signature without its parameter types: "t:T, axis:axes=nil" -> "t, axis=nil". */
static void op_signature(const char *sig, StrBuf *b) {
    for (const char *s = sig; *s;) {
        if (*s == ':') {
            while (*s && *s != ',' && *s != '=') s++;
            continue;
        }
        sb_putn(b, s++, 1);
    }
}

static void describe_builtin(ObjBuiltin *bi, StrBuf *b) {
    OpCode op = op_by_name(bi->name);
    if (op < OP__COUNT && op_builtins[op] == bi->fn) {
        sb_printf(b, "%s(", bi->name);
        op_signature(op_info[op].signature, b);
        sb_printf(b, ")\n  %s\n", op_info[op].doc);
        return;
    }
    const BuiltinDef *d = builtin_def(bi->name);
    if (d && d->fn == bi->fn) sb_printf(b, "%s%s\n  %s\n", bi->name, d->signature, d->doc);
    else sb_printf(b, "%s(...)\n  a built-in function\n", bi->name);
}

static void describe_closure(ObjClosure *c, StrBuf *b) {
    LineCursor cur = { 0 };
    closure_signature(&cur, c, b);
    sb_puts(b, "\n");
    const Source *src = closure_src(c);
    if (src) comment_above(&cur, src, c->proto->loc, false, b);
}

/* The imported module whose exports dict d is, or NULL. */
static Module *module_of(Interp *I, Value d) {
    for (Module *m = I->modules; m; m = m->next)
        if (m != I->main && m->exports.type == VAL_DICT && m->exports.as.o == d.as.o) return m;
    return NULL;
}

/* A module's function and the text it was defined in (another module's, for one it re-exports). */
typedef struct {
    ObjClosure *fn;
    const Source *src;
    bool own;
} ModuleFn;

/* The module's own functions first, then by text, so the functions of one text come together
 * and the line cursor reads each text once; within a text, by position. */
static int by_position(const void *pa, const void *pb) {
    const ModuleFn *x = pa, *y = pb;
    if (x->own != y->own) return x->own ? -1 : 1;
    if (x->src != y->src) {
        int c = strcmp(x->src ? x->src->name : "", y->src ? y->src->name : "");
        if (c) return c;
    }
    const FnProto *a = x->fn->proto, *b = y->fn->proto;
    if (a->loc.line != b->loc.line) return a->loc.line < b->loc.line ? -1 : 1;
    return a->loc.col < b->loc.col ? -1 : a->loc.col > b->loc.col;
}

/* A module: one line per function, its signature and the first line of its comment, in the
 * order the module's text defines them (its exports follow the order of its global slots,
 * where a name it shares with a built-in comes first). */
static void describe_module(Interp *I, Module *m, StrBuf *b) {
    sb_printf(b, "module %s\n", m->name);
    ObjDict *d = AS_DICT(m->exports);
    ModuleFn *fns = mem_alloc(sizeof *fns * (size_t)(d->len ? d->len : 1));
    int n = 0;
    for (int i = 0; i < d->len; i++) {
        Value v = d->entries[i].val;
        if (v.type != VAL_FUNC || v.as.o->kind != OBJ_CLOSURE) continue;
        const Source *src = closure_src(AS_CLOSURE(v));
        fns[n++] = (ModuleFn){ AS_CLOSURE(v), src, src == m->src };
    }
    qsort(fns, (size_t)n, sizeof *fns, by_position);
    LineCursor cur = { 0 };
    for (int i = 0; i < n; i++) {
        ObjClosure *c = fns[i].fn;
        size_t start = b->len;
        sb_puts(b, "  ");
        closure_signature(&cur, c, b);
        size_t doc_at = b->len;
        const Source *src = closure_src(c);
        StrBuf doc = { 0 };
        sb_putn(&doc, "", 0);
        if (src) comment_above(&cur, src, c->proto->loc, true, &doc);
        if (doc.len) {
            for (size_t w = doc_at - start; w < 36; w++) sb_puts(b, " ");
            sb_puts(b, "  ");
            sb_puts(b, doc.s);
        }
        sb_free(&doc);
        sb_puts(b, "\n");
    }
    mem_free(fns);
}

static void describe(Interp *I, Value v, StrBuf *b) {
    const StaticHooks *vm = interp_static_hooks();
    const char *loaded = vm ? vm->loaded_signature(v) : NULL;   /* a graph load() made */
    if (loaded) sb_puts(b, loaded);
    else if (v.type == VAL_FUNC && v.as.o->kind == OBJ_BUILTIN) describe_builtin(AS_BUILTIN(v), b);
    else if (v.type == VAL_FUNC && v.as.o->kind == OBJ_CLOSURE) describe_closure(AS_CLOSURE(v), b);
    else if (v.type == VAL_DICT && module_of(I, v)) describe_module(I, module_of(I, v), b);
    else sb_printf(b, "%s%s: help describes built-ins, functions and modules (help(\"name\") looks a name up)\n",
                   v.type == VAL_NIL ? "" : "a ", val_type_name(v));
}

void help_name(Interp *I, Module *m, const char *name, StrBuf *b) {
    const char *dot = strchr(name, '.');
    size_t n = dot ? (size_t)(dot - name) : strlen(name);
    Value v = UNDEF_VAL;
    for (int i = 0; i < m->g.count; i++)
        if (strlen(m->g.names[i]) == n && !memcmp(m->g.names[i], name, n)) v = m->g.vals[i];
    if (v.type == VAL_UNDEF)   /* an imported module that is not bound here */
        for (Module *x = I->modules; x; x = x->next)
            if (x != I->main && x->exports.type == VAL_DICT && strlen(x->name) == n && !memcmp(x->name, name, n))
                v = x->exports;
    while (v.type != VAL_UNDEF && dot) {   /* "nn.linear": fields of dicts */
        const char *field = dot + 1;
        dot = strchr(field, '.');
        size_t len = dot ? (size_t)(dot - field) : strlen(field);
        Value *f = v.type == VAL_DICT ? dict_get(AS_DICT(v), field, (int)len) : NULL;
        v = f ? *f : UNDEF_VAL;
    }
    if (v.type == VAL_UNDEF) {
        sb_puts(b, "no built-in, function or module named '");
        sb_puts(b, name);
        sb_puts(b, "'\n");
    } else {
        describe(I, v, b);
    }
}

/* The module whose code is running: help("name") looks there, as the name would. */
static Module *running_module(Interp *I) {
    for (Module *m = I->modules; m; m = m->next)
        if (m->src && m->src == I->cur_src) return m;
    return I->main;
}

Value builtin_help(Interp *I, CallArgs *a) {
    Value x;
    if (!builtin_bind(I, a, builtin_help, &x)) return ERR_VAL;
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    if (x.type == VAL_UNDEF)
        sb_puts(&b, "help(x) describes a built-in, a function or a module; help(\"name\") looks a name up\n");
    else if (x.type == VAL_STR && running_module(I))
        help_name(I, running_module(I), AS_STR(x)->chars, &b);
    else
        describe(I, x, &b);
    bool ok = interp_write_out(I, b.s, b.len);
    sb_free(&b);
    return ok ? NIL_VAL : ERR_VAL;
}
