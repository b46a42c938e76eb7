/* value.c - heap objects (strings, lists, dicts, closures, cells), formatting and
 * equality. Ownership rules are in value.h. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "value.h"
#include "interp.h"
#include "gc.h"
#include "mem.h"
#include "tops.h"
#include "shortest.h"

/* Two lists hold every object: containers (lists, dicts, closures, cells: what can form a
 * cycle, and all the cycle collector walks) and the rest (strings, built-ins). They are the
 * current interpreter's (ObjHeap, value.h). */
#define GC_MIN_ALLOCS 10000

void val_heap_init(ObjHeap *h) {
    memset(h, 0, sizeof *h);
    h->objects = (Obj){ 0, OBJ_STR, 0, 0, &h->objects, &h->objects };
    h->containers = (Obj){ 0, OBJ_LIST, 0, 0, &h->containers, &h->containers };
    h->gc_threshold = GC_MIN_ALLOCS;
}

/* A thread that entered no interpreter has a heap of its own (thread-local: no sharing). */
static _Thread_local ObjHeap thread_heap;
static _Thread_local bool thread_heap_ready;

ObjHeap *val_heap(void) {
    Interp *I = interp_current();
    if (I) return &I->heap;
    if (!thread_heap_ready) {
        val_heap_init(&thread_heap);
        thread_heap_ready = true;
    }
    return &thread_heap;
}

static void count_obj_bytes(int64_t delta) { ops_ctx()->obj_live_bytes += delta; }

static bool kind_is_container(ObjKind k) { return k != OBJ_STR && k != OBJ_BUILTIN; }

/* --max-memory counts object memory too (obj_live_bytes in the ops context, next to the
 * tensor count): every byte allocated here for an object or its arrays is added, and
 * subtracted when freed. The limit does not fail an allocation here; the interpreter's
 * limit polls see the total pass the limit and raise a located error (interp_check_limits).
 * An allocation the hook refuses raises "out of memory" (mem.h): each array is assigned
 * only once allocated, so the object it belongs to stays valid. */
static size_t obj_base_size(const Obj *o) {
    switch (o->kind) {
    case OBJ_STR: return sizeof(ObjString) + (size_t)((const ObjString *)o)->len + 1;
    case OBJ_LIST: return sizeof(ObjList);
    case OBJ_DICT: return sizeof(ObjDict);
    case OBJ_CLOSURE: return sizeof(ObjClosure);
    case OBJ_BUILTIN: return sizeof(ObjBuiltin);
    default: return sizeof(ObjCell);
    }
}

/* The cycle collector runs when this many containers (lists, dicts, closures, cells) were
 * made since the last collection: at least GC_MIN_ALLOCS, and at least as many as the
 * live containers and slots in them that the next collection will walk, so each
 * collection is paid for by as many allocations and the cost per allocation stays
 * constant. */
static void *obj_alloc(size_t size, ObjKind kind) {
    Obj *o = mem_calloc(1, size);
    count_obj_bytes((int64_t)size);
    o->rc = 1;
    o->kind = kind;
    ObjHeap *h = val_heap();
    Obj *list = &h->objects;
    if (kind_is_container(kind)) {
        if (++h->gc_allocs > h->gc_threshold) h->gc_due = true;
        h->live_containers++;
        list = &h->containers;
    }
    o->next = list->next;
    o->prev = list;
    list->next->prev = o;
    list->next = o;
    return o;
}

static void obj_unlink(Obj *o) {
    o->prev->next = o->next;
    o->next->prev = o->prev;
    if (kind_is_container(o->kind)) val_heap()->live_containers--;
}

Obj *val_containers_head(void) { return &val_heap()->containers; }

void val_obj_move(Obj *o, Obj *list) {
    obj_unlink(o);
    val_heap()->live_containers++;   /* still counted until its storage is released */
    o->next = list->next;
    o->prev = list;
    list->next->prev = o;
    list->next = o;
}

void val_gc_done(long work) {
    ObjHeap *h = val_heap();
    h->gc_allocs = 0;
    h->gc_threshold = work > GC_MIN_ALLOCS ? work : GC_MIN_ALLOCS;
}

void val_heap_clear_marks(void) {
    Obj *head = &val_heap()->containers;
    for (Obj *o = head->next; o != head; o = o->next) o->marks = 0;
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
        count_obj_bytes(-(int64_t)(sizeof(Value) * (size_t)l->cap));
        l->items = NULL;
        l->cap = 0;
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
        count_obj_bytes(-(int64_t)(sizeof(DictEntry) * (size_t)d->cap + sizeof(int32_t) * (size_t)d->index_cap));
        d->entries = NULL;
        d->index = NULL;
        d->cap = d->index_cap = 0;
        break;
    }
    case OBJ_CELL: {
        ObjCell *c = (ObjCell *)o;
        Value v = c->v;
        c->v = NIL_VAL;
        val_release(v);
        break;
    }
    case OBJ_BUILTIN: {
        ObjBuiltin *b = (ObjBuiltin *)o;
        Value v = b->bound;
        b->bound = NIL_VAL;
        val_release(v);
        if (b->udata_free) b->udata_free(b->udata);
        b->udata = NULL;
        b->udata_free = NULL;
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
            count_obj_bytes(-(int64_t)(sizeof(ObjCell *) * (size_t)c->proto->nupvals));
        }
        break;
    }
    default: break;
    }
}

/* Clears and frees an object already off its list. */
static void obj_destroy(Obj *o) {
    obj_clear(o);
    count_obj_bytes(-(int64_t)obj_base_size(o));
    mem_free(o);
}

void val_obj_clear(Obj *o) { obj_clear(o); }

void val_obj_release_storage(Obj *o) {
    obj_unlink(o);
    count_obj_bytes(-(int64_t)obj_base_size(o));
    mem_free(o);
}

/* Freeing a list nested a million deep releases its item, which frees the next list...:
 * past FREE_MAX_DEPTH nested frees an object waits on a pending list that the outermost
 * free drains, so the C stack stays small (CPython's "trashcan"). */
#define FREE_MAX_DEPTH 1000
/* The pending list is the heap's (free_pending, linked through next; already off their lists). */
void val_obj_free(Obj *o) {
    obj_unlink(o);
    ObjHeap *h = val_heap();
    if (h->free_depth >= FREE_MAX_DEPTH) {
        o->next = h->free_pending;
        h->free_pending = o;
        return;
    }
    h->free_depth++;
    obj_destroy(o);
    if (h->free_depth == 1)
        while (h->free_pending) {
            Obj *p = h->free_pending;
            h->free_pending = p->next;
            obj_destroy(p);
        }
    h->free_depth--;
}

void val_free_all(void) {
    /* Pin everything, drop all references between objects, then free the storage. */
    ObjHeap *h = val_heap();
    Obj *lists[2] = { &h->containers, &h->objects };
    for (int k = 0; k < 2; k++)
        for (Obj *o = lists[k]->next; o != lists[k]; o = o->next) o->rc++;
    for (Obj *o = h->containers.next; o != &h->containers; o = o->next) obj_clear(o);
    for (int k = 0; k < 2; k++)
        while (lists[k]->next != lists[k]) {
            Obj *o = lists[k]->next;
            obj_unlink(o);
            count_obj_bytes(-(int64_t)obj_base_size(o));
            mem_free(o);
        }
}

static uint32_t hash_bytes(const char *s, int len) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

ObjString *str_new(const char *s, int len) { return str_new_room(s, len, len); }

ObjString *str_new_room(const char *s, int len, int cap) {
    ObjString *o = obj_alloc(sizeof(ObjString) + (size_t)cap + 1, OBJ_STR);
    o->cap = cap;
    o->hash = 2166136261u;
    str_append_in_place(o, s, len);
    return o;
}

void str_append_in_place(ObjString *o, const char *s, int n) {
    memcpy(o->chars + o->len, s, (size_t)n);
    uint32_t h = o->hash;   /* FNV-1a runs byte by byte: the old hash is the state to go on from */
    int ncp = o->ncp;
    for (int i = 0; i < n; i++) {
        h = (h ^ (unsigned char)s[i]) * 16777619u;
        ncp += ((unsigned char)s[i] & 0xC0) != 0x80;
    }
    o->hash = h;
    o->ncp = ncp;
    o->len += n;
    o->chars[o->len] = 0;
}

Value val_str(const char *s, int len) { return OBJ_VAL(VAL_STR, str_new(s, len)); }
Value val_cstr(const char *s) { return val_str(s, (int)strlen(s)); }


ObjList *list_new(int cap) {
    ObjList *l = obj_alloc(sizeof(ObjList), OBJ_LIST);
    l->items = cap ? mem_alloc(sizeof(Value) * (size_t)cap) : NULL;
    l->cap = cap;   /* after the allocation: one that fails (out of memory) leaves the list valid */
    count_obj_bytes((int64_t)(sizeof(Value) * (size_t)cap));
    return l;
}

void list_push(ObjList *l, Value v) {
    if (l->len == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        l->items = mem_realloc(l->items, sizeof(Value) * (size_t)cap);
        count_obj_bytes((int64_t)(sizeof(Value) * (size_t)(cap - l->cap)));
        l->cap = cap;
    }
    l->items[l->len++] = val_retain(v);
}

ObjDict *dict_new(void) { return obj_alloc(sizeof(ObjDict), OBJ_DICT); }

static void dict_reindex(ObjDict *d, int cap) {
    int32_t *index = mem_alloc(sizeof(int32_t) * (size_t)cap);   /* first: a failure changes nothing */
    mem_free(d->index);
    count_obj_bytes((int64_t)(sizeof(int32_t) * (size_t)(cap - d->index_cap)));
    d->index = index;
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
        int cap = d->cap ? d->cap * 2 : 4;
        d->entries = mem_realloc(d->entries, sizeof(DictEntry) * (size_t)cap);
        count_obj_bytes((int64_t)(sizeof(DictEntry) * (size_t)(cap - d->cap)));
        d->cap = cap;
    }
    key->h.rc++;
    d->entries[d->len].key = key;
    d->entries[d->len].val = val_retain(v);
    d->len++;
    if (d->len * 2 > d->index_cap) dict_reindex(d, d->index_cap ? d->index_cap * 2 : 8);
    else *slot = d->len - 1;
}

void dict_truncate(ObjDict *d, int n) {
    if (n >= d->len) return;
    for (int e = n; e < d->len; e++) {
        val_release(OBJ_VAL(VAL_STR, d->entries[e].key));
        val_release(d->entries[e].val);
    }
    d->len = n;
    dict_reindex(d, d->index_cap);
}

/* Removes key, keeping the order of the others; its value is handed to the caller (owned). */
bool dict_remove(ObjDict *d, const char *key, int len, Value *out) {
    int32_t *slot = dict_find_slot(d, key, len, hash_bytes(key, len));
    if (!slot || *slot < 0) return false;
    int e = *slot;
    *out = d->entries[e].val;
    val_release(OBJ_VAL(VAL_STR, d->entries[e].key));
    memmove(d->entries + e, d->entries + e + 1, sizeof(DictEntry) * (size_t)(d->len - e - 1));
    d->len--;
    /* the positions after e moved: rebuilt in place (no allocation that could fail) */
    uint32_t mask = (uint32_t)d->index_cap - 1;
    for (int i = 0; i < d->index_cap; i++) d->index[i] = -1;
    for (int k = 0; k < d->len; k++) {
        uint32_t i = d->entries[k].key->hash & mask;
        while (d->index[i] >= 0) i = (i + 1) & mask;
        d->index[i] = k;
    }
    return true;
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
    count_obj_bytes((int64_t)(sizeof(ObjCell *) * (size_t)p->nupvals));
    return c;
}

ObjBuiltin *builtin_new(const char *name, BuiltinFn fn) {
    ObjBuiltin *b = obj_alloc(sizeof(ObjBuiltin), OBJ_BUILTIN);   /* zeroed: no row, no udata */
    b->name = name;
    b->fn = fn;
    b->bound = NIL_VAL;
    return b;
}


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
    if (b->len + n + 1 > b->cap) {   /* cap set once grown: out of memory jumps out of mem_realloc */
        size_t cap = (b->len + n + 1) * 2;
        b->s = mem_realloc(b->s, cap);
        b->cap = cap;
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
        if (!(x == 0 && signbit(x))) {   /* digits by hand: snprintf dominates printing big lists */
            long long k = (long long)x;
            unsigned long long u = k < 0 ? 0ull - (unsigned long long)k : (unsigned long long)k;
            char *p = buf + sizeof buf;
            do { *--p = (char)('0' + u % 10); u /= 10; } while (u);
            if (k < 0) *--p = '-';
            sb_putn(b, p, (size_t)(buf + sizeof buf - p));
            return;
        }
        snprintf(buf, sizeof buf, "%.0f", x);
        if (x == 0 && signbit(x)) snprintf(buf, sizeof buf, "-0");
        sb_puts(b, buf);
        return;
    }
    num_shortest(buf, sizeof buf, x, false);
    sb_puts(b, buf);
}

/* A dict key printed bare reads back as one: a name that is not a keyword ({"if": 1} prints
 * quoted, as `{if: 1}` is no literal). */
static bool is_identifier(const char *s, int len) {
    static const char *const keywords[] = { "fn", "return", "if", "else", "while", "for", "in", "break", "continue",
                                            "static", "import", "and", "or", "not", "true", "false", "nil", "try", "catch" };
    if (len == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return false;
    for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
        if ((int)strlen(keywords[k]) == len && !memcmp(keywords[k], s, (size_t)len)) return false;
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

/* Printing walks the value recursively but never further than FMT_MAX_DEPTH levels
 * (deeper parts print as "..."), marks the containers on the current path (OBJ_PRINTING)
 * so a container met again inside itself prints [...] / {...} as Python does, and stops
 * with an error once the text passes the string size limit: a list shared n times prints
 * 2^n elements, which no amount of memory holds. */
#define FMT_MAX_DEPTH 200

typedef struct {
    struct Interp *I;         /* polled for Ctrl-C and limits; NULL: never interrupted */
    size_t limit;             /* the most bytes of text */
    unsigned long steps;
    int depth;
    bool failed;              /* text over the limit, or interrupted (error pending in I) */
} Fmt;

/* After each element: is there room and time for more? */
static bool fmt_go_on(Fmt *f, StrBuf *b) {
    if (f->failed) return false;
    if (b->len > f->limit) {
        f->failed = true;
        if (f->I && f->limit < TSL_MAX_TEXT)
            interp_errork(f->I, ERRK_MEMORY, MAX_MEMORY_MSG, (long long)f->I->opsctx->max_live);
        else if (f->I)
            interp_error(f->I, "text too large: printing this value would exceed %zu bytes (the string size limit)",
                         f->limit);
        return false;
    }
    if ((++f->steps & 1023) == 0 && f->I && !interp_poll(f->I)) f->failed = true;
    return !f->failed;
}

static void fmt_rec(Fmt *f, StrBuf *b, Value v, bool quote);

static void fmt_container(Fmt *f, StrBuf *b, Value v) {
    bool dict = v.type == VAL_DICT;
    if (f->depth >= FMT_MAX_DEPTH) { sb_puts(b, "..."); return; }
    if (v.as.o->marks & OBJ_PRINTING) { sb_puts(b, dict ? "{...}" : "[...]"); return; }
    v.as.o->marks |= OBJ_PRINTING;
    f->depth++;
    sb_puts(b, dict ? "{" : "[");
    int n = dict ? AS_DICT(v)->len : AS_LIST(v)->len;
    /* re-read the length each time: nothing here mutates, but stay within bounds anyway */
    for (int i = 0; i < n && i < (dict ? AS_DICT(v)->len : AS_LIST(v)->len) && fmt_go_on(f, b); i++) {
        if (i) sb_puts(b, ", ");
        if (dict) {
            ObjString *k = AS_DICT(v)->entries[i].key;
            if (is_identifier(k->chars, k->len)) sb_putn(b, k->chars, (size_t)k->len);
            else fmt_quoted(b, k->chars, k->len);
            sb_puts(b, ": ");
            fmt_rec(f, b, AS_DICT(v)->entries[i].val, true);
        } else {
            fmt_rec(f, b, AS_LIST(v)->items[i], true);
        }
    }
    sb_puts(b, dict ? "}" : "]");
    f->depth--;
    v.as.o->marks &= ~OBJ_PRINTING;
}

static void fmt_rec(Fmt *f, StrBuf *b, Value v, bool quote) {
    switch (v.type) {
    case VAL_NIL: sb_puts(b, "nil"); break;
    case VAL_BOOL: sb_puts(b, v.as.b ? "true" : "false"); break;
    case VAL_NUM: fmt_number(b, v.as.n); break;
    case VAL_STR:
        if (quote) fmt_quoted(b, AS_STR(v)->chars, AS_STR(v)->len);
        else sb_putn(b, AS_STR(v)->chars, (size_t)AS_STR(v)->len);
        break;
    case VAL_LIST:
    case VAL_DICT: fmt_container(f, b, v); break;
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

bool fmt_value_in(struct Interp *I, StrBuf *b, Value v, bool quote) {
    /* the text becomes a string (or a copy on its way out): it counts against --max-memory */
    int64_t left = mem_budget_left();
    Fmt f = { .I = I, .limit = left < (int64_t)TSL_MAX_TEXT ? (size_t)left : TSL_MAX_TEXT };
    fmt_rec(&f, b, v, quote);
    if (!f.failed && b->len > f.limit) fmt_go_on(&f, b);
    return !f.failed;
}

bool fmt_value(StrBuf *b, Value v, bool quote) { return fmt_value_in(NULL, b, v, quote); }

/* ---- equality ----
 * An explicit work list instead of C recursion (any nesting depth is safe), and a set of
 * container pairs already expanded: a pair met again (a cycle, or structure shared many
 * times) is not walked twice, so cycles terminate and shared structure costs polynomial
 * time. Treating a pair met again as equal is what spec section 3 asks for cycles; it
 * cannot hide a difference, because any difference anywhere makes the whole result false. */

typedef struct { Value a, b; } ValPair;

typedef struct {
    struct Interp *I;       /* polled for Ctrl-C and limits; NULL: never interrupted */
    ValPair *work;
    int nwork, capwork;
    ValPair inline_work[32];
    const Obj **seen;       /* open addressing on pairs: seen[2i], seen[2i+1]; NULL empty */
    size_t nseen, capseen;  /* capseen: number of pair slots, a power of two */
    long expanded;          /* containers expanded so far */
} EqWalk;

/* Only after this many expansions does the walk start remembering pairs, so small
 * comparisons allocate nothing; a cycle is then walked at most this many extra times. */
#define EQ_MEMO_AFTER 32

static void eq_push(EqWalk *w, Value a, Value b) {
    if (w->nwork == w->capwork) {
        int cap = w->capwork * 2;
        ValPair *p = mem_alloc(sizeof(ValPair) * (size_t)cap);
        memcpy(p, w->work, sizeof(ValPair) * (size_t)w->nwork);
        if (w->work != w->inline_work) mem_free(w->work);
        w->work = p;
        w->capwork = cap;
    }
    w->work[w->nwork++] = (ValPair){ a, b };
}

static size_t pair_hash(const Obj *x, const Obj *y) {
    uintptr_t h = (uintptr_t)x * 0x9E3779B97F4A7C15u ^ ((uintptr_t)y + 0x632BE59BD9B4E019u) * 0xBF58476D1CE4E5B9u;
    return (size_t)(h ^ (h >> 29));
}

/* Adds the pair; false when it was already there. */
static bool eq_remember(EqWalk *w, const Obj *x, const Obj *y) {
    if ((w->nseen + 1) * 2 > w->capseen) {
        size_t cap = w->capseen ? w->capseen * 2 : 64;
        const Obj **old = w->seen;
        size_t oldcap = w->capseen;
        w->seen = mem_calloc(cap * 2, sizeof(Obj *));
        w->capseen = cap;
        w->nseen = 0;
        for (size_t i = 0; i < oldcap; i++)
            if (old[2 * i]) eq_remember(w, old[2 * i], old[2 * i + 1]);
        mem_free(old);
    }
    size_t mask = w->capseen - 1;
    for (size_t i = pair_hash(x, y) & mask;; i = (i + 1) & mask) {
        if (!w->seen[2 * i]) {
            w->seen[2 * i] = x;
            w->seen[2 * i + 1] = y;
            w->nseen++;
            return true;
        }
        if (w->seen[2 * i] == x && w->seen[2 * i + 1] == y) return false;
    }
}

/* Compares one pair; containers push their element pairs. */
static bool eq_step(EqWalk *w, Value a, Value b) {
    if (a.type != b.type) return false;
    switch (a.type) {
    case VAL_NIL: return true;
    case VAL_BOOL: return a.as.b == b.as.b;
    case VAL_NUM: return a.as.n == b.as.n;
    case VAL_STR:
        return AS_STR(a)->len == AS_STR(b)->len && !memcmp(AS_STR(a)->chars, AS_STR(b)->chars, (size_t)AS_STR(a)->len);
    case VAL_LIST:
    case VAL_DICT:
        if (++w->expanded > EQ_MEMO_AFTER && !eq_remember(w, a.as.o, b.as.o)) return true;
        if (a.type == VAL_LIST) {
            ObjList *x = AS_LIST(a), *y = AS_LIST(b);
            if (x->len != y->len) return false;
            for (int i = x->len - 1; i >= 0; i--) eq_push(w, x->items[i], y->items[i]);
        } else {
            ObjDict *x = AS_DICT(a), *y = AS_DICT(b);
            if (x->len != y->len) return false;
            for (int i = x->len - 1; i >= 0; i--) {
                ObjString *k = x->entries[i].key;
                Value *o = dict_get(y, k->chars, k->len);
                if (!o) return false;
                eq_push(w, x->entries[i].val, *o);
            }
        }
        return true;
    case VAL_FUNC: return a.as.o == b.as.o;
    case VAL_TENSOR: return tensor_equal(a.as.t, b.as.t);
    default: return false;
    }
}

int val_equal_in(struct Interp *I, Value a, Value b) {
    if (a.type != b.type) return 0;
    if (a.type != VAL_LIST && a.type != VAL_DICT) {
        EqWalk w0 = { 0 };
        return eq_step(&w0, a, b);
    }
    EqWalk w = { .I = I };
    w.work = w.inline_work;
    w.capwork = (int)(sizeof w.inline_work / sizeof w.inline_work[0]);
    eq_push(&w, a, b);
    int r = 1;
    for (unsigned long steps = 1; w.nwork > 0; steps++) {
        ValPair p = w.work[--w.nwork];
        if (!eq_step(&w, p.a, p.b)) { r = 0; break; }
        if ((steps & 1023) == 0 && I && !interp_poll(I)) { r = -1; break; }
    }
    if (w.work != w.inline_work) mem_free(w.work);
    mem_free(w.seen);
    return r;
}

bool val_equal(Value a, Value b) { return val_equal_in(NULL, a, b) == 1; }
