/* value.c - heap objects (strings, lists, dicts, closures, cells), formatting and
 * equality. Ownership rules are in value.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "value.h"
#include "mem.h"
#include "tops.h"

static Obj all_objects = { 0, OBJ_STR, &all_objects, &all_objects };

static void *obj_alloc(size_t size, ObjKind kind) {
    Obj *o = mem_calloc(1, size);
    o->rc = 1;
    o->kind = kind;
    o->next = all_objects.next;
    o->prev = &all_objects;
    all_objects.next->prev = o;
    all_objects.next = o;
    return o;
}

static void obj_unlink(Obj *o) {
    o->prev->next = o->next;
    o->next->prev = o->prev;
}

/* Releases what the object refers to, leaving the object itself allocated. */
static void obj_clear(Obj *o) {
    switch (o->kind) {
    case OBJ_LIST: {
        ObjList *l = (ObjList *)o;
        int n = l->len;
        l->len = 0;
        for (int i = 0; i < n; i++) val_release(l->items[i]);
        mem_free(l->items);
        l->items = NULL;
        break;
    }
    case OBJ_DICT: {
        ObjDict *d = (ObjDict *)o;
        int n = d->len;
        d->len = 0;
        for (int i = 0; i < n; i++) {
            val_release(OBJ_VAL(VAL_STR, d->entries[i].key));
            val_release(d->entries[i].val);
        }
        mem_free(d->entries);
        mem_free(d->index);
        d->entries = NULL;
        d->index = NULL;
        break;
    }
    case OBJ_CELL: {
        ObjCell *c = (ObjCell *)o;
        Value v = c->v;
        c->v = NIL_VAL;
        val_release(v);
        break;
    }
    case OBJ_CLOSURE: {
        ObjClosure *c = (ObjClosure *)o;
        ObjCell **up = c->upvals;
        c->upvals = NULL;
        if (up) {
            for (int i = 0; i < c->proto->nupvals; i++)
                if (up[i]) val_release(OBJ_VAL(VAL_CELL, up[i]));
            mem_free(up);
        }
        break;
    }
    default: break;
    }
}

void val_obj_free(Obj *o) {
    obj_unlink(o);
    obj_clear(o);
    mem_free(o);
}

void val_free_all(void) {
    /* Pin everything, drop all references between objects, then free the storage. */
    for (Obj *o = all_objects.next; o != &all_objects; o = o->next) o->rc++;
    for (Obj *o = all_objects.next; o != &all_objects; o = o->next) obj_clear(o);
    while (all_objects.next != &all_objects) {
        Obj *o = all_objects.next;
        obj_unlink(o);
        mem_free(o);
    }
}

static uint32_t hash_bytes(const char *s, int len) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

ObjString *str_new(const char *s, int len) {
    ObjString *o = obj_alloc(sizeof(ObjString) + (size_t)len + 1, OBJ_STR);
    memcpy(o->chars, s, (size_t)len);
    o->chars[len] = 0;
    o->len = len;
    o->hash = hash_bytes(s, len);
    return o;
}

Value val_str(const char *s, int len) { return OBJ_VAL(VAL_STR, str_new(s, len)); }
Value val_cstr(const char *s) { return val_str(s, (int)strlen(s)); }

Value val_str_take_fmt(const char *fmt, ...) {
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf) n = (int)sizeof buf - 1;
    return val_str(buf, n);
}

ObjList *list_new(int cap) {
    ObjList *l = obj_alloc(sizeof(ObjList), OBJ_LIST);
    l->cap = cap;
    l->items = cap ? mem_alloc(sizeof(Value) * (size_t)cap) : NULL;
    return l;
}

void list_push(ObjList *l, Value v) {
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->items = mem_realloc(l->items, sizeof(Value) * (size_t)l->cap);
    }
    l->items[l->len++] = val_retain(v);
}

ObjDict *dict_new(void) { return obj_alloc(sizeof(ObjDict), OBJ_DICT); }

static void dict_reindex(ObjDict *d, int cap) {
    mem_free(d->index);
    d->index = mem_alloc(sizeof(int32_t) * (size_t)cap);
    d->index_cap = cap;
    for (int i = 0; i < cap; i++) d->index[i] = -1;
    for (int e = 0; e < d->len; e++) {
        uint32_t i = d->entries[e].key->hash & (uint32_t)(cap - 1);
        while (d->index[i] >= 0) i = (i + 1) & (uint32_t)(cap - 1);
        d->index[i] = e;
    }
}

static int32_t *dict_find_slot(ObjDict *d, const char *key, int len, uint32_t h) {
    if (!d->index_cap) return NULL;
    uint32_t mask = (uint32_t)d->index_cap - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        int32_t *slot = &d->index[i];
        if (*slot < 0) return slot;
        ObjString *k = d->entries[*slot].key;
        if (k->hash == h && k->len == len && !memcmp(k->chars, key, (size_t)len)) return slot;
    }
}

Value *dict_get(ObjDict *d, const char *key, int len) {
    int32_t *slot = dict_find_slot(d, key, len, hash_bytes(key, len));
    return slot && *slot >= 0 ? &d->entries[*slot].val : NULL;
}

void dict_set(ObjDict *d, ObjString *key, Value v) {
    int32_t *slot = dict_find_slot(d, key->chars, key->len, key->hash);
    if (slot && *slot >= 0) {
        Value old = d->entries[*slot].val;
        d->entries[*slot].val = val_retain(v);
        val_release(old);
        return;
    }
    if (d->len == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 4;
        d->entries = mem_realloc(d->entries, sizeof(DictEntry) * (size_t)d->cap);
    }
    key->h.rc++;
    d->entries[d->len].key = key;
    d->entries[d->len].val = val_retain(v);
    d->len++;
    if (d->len * 2 > d->index_cap) dict_reindex(d, d->index_cap ? d->index_cap * 2 : 8);
    else *slot = d->len - 1;
}

void dict_set_cstr(ObjDict *d, const char *key, Value v) {
    ObjString *k = str_new(key, (int)strlen(key));
    dict_set(d, k, v);
    val_release(OBJ_VAL(VAL_STR, k));
}

ObjCell *cell_new(Value v) {
    ObjCell *c = obj_alloc(sizeof(ObjCell), OBJ_CELL);
    c->v = val_retain(v);
    return c;
}

ObjClosure *closure_new(FnProto *p, struct Module *m) {
    ObjClosure *c = obj_alloc(sizeof(ObjClosure), OBJ_CLOSURE);
    p->made = true;
    c->proto = p;
    c->module = m;
    if (p->nupvals) c->upvals = mem_calloc((size_t)p->nupvals, sizeof(ObjCell *));
    return c;
}

ObjBuiltin *builtin_new(const char *name, BuiltinFn fn) {
    ObjBuiltin *b = obj_alloc(sizeof(ObjBuiltin), OBJ_BUILTIN);
    b->name = name;
    b->fn = fn;
    return b;
}

Value val_tensor(Tensor *t) { return TENSOR_VAL(t); }

const char *val_type_name(Value v) {
    switch (v.type) {
    case VAL_NIL: return "nil";
    case VAL_BOOL: return "bool";
    case VAL_NUM: return "number";
    case VAL_STR: return "string";
    case VAL_LIST: return "list";
    case VAL_DICT: return "dict";
    case VAL_FUNC: return "function";
    case VAL_TENSOR: return "tensor";
    default: return "undefined";
    }
}

bool val_truthy_simple(Value v) {
    return !(v.type == VAL_NIL || (v.type == VAL_BOOL && !v.as.b));
}

/* ---- formatting ---- */

void sb_putn(StrBuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = mem_realloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = 0;
}
void sb_puts(StrBuf *b, const char *s) { sb_putn(b, s, strlen(s)); }
void sb_printf(StrBuf *b, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof buf) n = (int)sizeof buf - 1;
    sb_putn(b, buf, (size_t)n);
}
void sb_free(StrBuf *b) {
    mem_free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}

/* Integers print as integers (|x| < 2^53); others as the shortest text that reads back. */
void fmt_number(StrBuf *b, double x) {
    char buf[64];
    if (isnan(x)) { sb_puts(b, "nan"); return; }
    if (isinf(x)) { sb_puts(b, x > 0 ? "inf" : "-inf"); return; }
    if (x == floor(x) && fabs(x) < 9007199254740992.0) {
        snprintf(buf, sizeof buf, "%.0f", x);
        if (x == 0 && signbit(x)) snprintf(buf, sizeof buf, "-0");
        sb_puts(b, buf);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) break;
    }
    sb_puts(b, buf);
}

static bool is_identifier(const char *s, int len) {
    if (len == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return false;
    for (int i = 1; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

static void fmt_quoted(StrBuf *b, const char *s, int len) {
    sb_putn(b, "\"", 1);
    for (int i = 0; i < len; i++) {
        char c = s[i];
        switch (c) {
        case '"': sb_puts(b, "\\\""); break;
        case '\\': sb_puts(b, "\\\\"); break;
        case '\n': sb_puts(b, "\\n"); break;
        case '\t': sb_puts(b, "\\t"); break;
        default: {
            /* other control characters (C0, DEL, C1 U+0080..U+009F) as \u{..} escapes, which read
             * back as the same string: a value shown in the REPL never drives the terminal */
            unsigned char u = (unsigned char)c;
            char esc[16];
            if (u < 0x20 || u == 0x7f) snprintf(esc, sizeof esc, "\\u{%x}", u);
            else if (u == 0xc2 && i + 1 < len && (unsigned char)s[i + 1] >= 0x80 && (unsigned char)s[i + 1] < 0xa0)
                snprintf(esc, sizeof esc, "\\u{%x}", (unsigned char)s[++i]);
            else { sb_putn(b, &c, 1); break; }
            sb_puts(b, esc);
        }
        }
    }
    sb_putn(b, "\"", 1);
}

static void fmt_value_depth(StrBuf *b, Value v, bool quote, int depth) {
    if (depth > 200) { sb_puts(b, "..."); return; }
    switch (v.type) {
    case VAL_NIL: sb_puts(b, "nil"); break;
    case VAL_BOOL: sb_puts(b, v.as.b ? "true" : "false"); break;
    case VAL_NUM: fmt_number(b, v.as.n); break;
    case VAL_STR:
        if (quote) fmt_quoted(b, AS_STR(v)->chars, AS_STR(v)->len);
        else sb_putn(b, AS_STR(v)->chars, (size_t)AS_STR(v)->len);
        break;
    case VAL_LIST: {
        ObjList *l = AS_LIST(v);
        sb_puts(b, "[");
        for (int i = 0; i < l->len; i++) {
            if (i) sb_puts(b, ", ");
            fmt_value_depth(b, l->items[i], true, depth + 1);
        }
        sb_puts(b, "]");
        break;
    }
    case VAL_DICT: {
        ObjDict *d = AS_DICT(v);
        sb_puts(b, "{");
        for (int i = 0; i < d->len; i++) {
            if (i) sb_puts(b, ", ");
            ObjString *k = d->entries[i].key;
            if (is_identifier(k->chars, k->len)) sb_putn(b, k->chars, (size_t)k->len);
            else fmt_quoted(b, k->chars, k->len);
            sb_puts(b, ": ");
            fmt_value_depth(b, d->entries[i].val, true, depth + 1);
        }
        sb_puts(b, "}");
        break;
    }
    case VAL_FUNC:
        if (v.as.o->kind == OBJ_BUILTIN) sb_printf(b, "<fn %s>", AS_BUILTIN(v)->name);
        else if (AS_CLOSURE(v)->proto->name[0]) sb_printf(b, "<fn %s>", AS_CLOSURE(v)->proto->name);
        else sb_puts(b, "<fn>");
        break;
    case VAL_TENSOR: {
        char *s = tensor_format(v.as.t);
        sb_puts(b, s);
        mem_free(s);
        break;
    }
    default: sb_puts(b, "<undefined>"); break;
    }
}

void fmt_value(StrBuf *b, Value v, bool quote) { fmt_value_depth(b, v, quote, 0); }

bool val_equal(Value a, Value b) {
    if (a.type != b.type) return false;
    switch (a.type) {
    case VAL_NIL: return true;
    case VAL_BOOL: return a.as.b == b.as.b;
    case VAL_NUM: return a.as.n == b.as.n;
    case VAL_STR:
        return AS_STR(a)->len == AS_STR(b)->len && !memcmp(AS_STR(a)->chars, AS_STR(b)->chars, (size_t)AS_STR(a)->len);
    case VAL_LIST: {
        ObjList *x = AS_LIST(a), *y = AS_LIST(b);
        if (x->len != y->len) return false;
        for (int i = 0; i < x->len; i++)
            if (!val_equal(x->items[i], y->items[i])) return false;
        return true;
    }
    case VAL_DICT: {
        ObjDict *x = AS_DICT(a), *y = AS_DICT(b);
        if (x->len != y->len) return false;
        for (int i = 0; i < x->len; i++) {
            ObjString *k = x->entries[i].key;
            Value *o = dict_get(y, k->chars, k->len);
            if (!o || !val_equal(x->entries[i].val, *o)) return false;
        }
        return true;
    }
    case VAL_FUNC: return a.as.o == b.as.o;
    case VAL_TENSOR: return tensor_equal(a.as.t, b.as.t);
    default: return false;
    }
}
