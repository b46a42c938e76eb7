/* lists.c - the list built-ins of spec section 5 (v2): sorted reversed extend insert remove
 * index, and (section 12) del and pop. Where the spec is silent, Python's list methods decide (insert clamps its index,
 * remove and index fail when the item is missing, sorted is stable and compares numbers
 * with numbers and strings with strings). */
#include <math.h>
#include <string.h>
#include "interp.h"
#include "mem.h"
#include "builtins.h"

static bool need_list(Interp *I, const char *fname, Value v) {
    if (v.type == VAL_LIST) return true;
    interp_errork(I, ERRK_TYPE, "%s() needs a list, got a %s", fname, val_type_name(v));
    return false;
}

/* ---------- sorted ---------- */

typedef struct {
    Value key;    /* owned: the key function's result, or the item itself (retained) */
    Value item;   /* owned */
} SortEntry;

/* -1, 0, 1; or 2 when the two keys cannot be compared (an error is then pending). */
static int compare_keys(Interp *I, Value x, Value y) {
    if (x.type == VAL_NUM && y.type == VAL_NUM) return (x.as.n > y.as.n) - (x.as.n < y.as.n);
    if (x.type == VAL_STR && y.type == VAL_STR) {
        ObjString *a = AS_STR(x), *b = AS_STR(y);
        int c = memcmp(a->chars, b->chars, (size_t)(a->len < b->len ? a->len : b->len));   /* UTF-8 bytes sort as code points */
        if (c == 0) c = (a->len > b->len) - (a->len < b->len);
        return (c > 0) - (c < 0);
    }
    bool xs = x.type == VAL_STR || x.type == VAL_NUM, ys = y.type == VAL_STR || y.type == VAL_NUM;
    if (xs && ys) interp_errork(I, ERRK_TYPE, "sorted(): cannot compare numbers with strings");
    else interp_errork(I, ERRK_TYPE, "sorted() orders numbers or strings, got a %s", val_type_name(xs ? y : x));
    return 2;
}

/* Stable merge sort of e[0..n) using tmp; false when two keys could not be compared. With
 * reverse, equal keys keep their order (as Python's reverse=True does). */
static bool merge_sort(Interp *I, SortEntry *e, SortEntry *tmp, int n, bool reverse) {
    if (n < 2) return true;
    int h = n / 2;
    if (!merge_sort(I, e, tmp, h, reverse) || !merge_sort(I, e + h, tmp, n - h, reverse)) return false;
    int i = 0, j = h, k = 0;
    while (i < h && j < n) {
        int c = compare_keys(I, e[j].key, e[i].key);
        if (c == 2) return false;
        bool take_right = reverse ? c > 0 : c < 0;
        tmp[k++] = take_right ? e[j++] : e[i++];
    }
    while (i < h) tmp[k++] = e[i++];
    while (j < n) tmp[k++] = e[j++];
    memcpy(e, tmp, sizeof *e * (size_t)n);
    return true;
}

bool list_sort_order(Interp *I, const Value *keys, int n, bool reverse, int *order) {
    SortEntry *e = mem_alloc(sizeof *e * (size_t)(n ? n : 1)), *tmp = mem_alloc(sizeof *tmp * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) e[i] = (SortEntry){ keys[i], NUM_VAL(i) };   /* borrowed keys: compared only */
    bool ok = merge_sort(I, e, tmp, n, reverse);
    for (int i = 0; ok && i < n; i++) order[i] = (int)e[i].item.as.n;
    mem_free(e);
    mem_free(tmp);
    return ok;
}

static Value bi_sorted(Interp *I, CallArgs *a) {
    Value v[3];
    if (!builtin_bind(I, a, bi_sorted, v) || !need_list(I, "sorted", v[0])) return ERR_VAL;
    bool has_key = v[1].type != VAL_UNDEF && v[1].type != VAL_NIL;
    if (has_key && v[1].type != VAL_FUNC) return interp_errork(I, ERRK_TYPE, "sorted(): key must be a function, got a %s", val_type_name(v[1]));
    bool reverse = v[2].type != VAL_UNDEF && val_truthy_simple(v[2]);
    /* the items are copied first: a key function may change the list while it runs */
    ObjList *l = AS_LIST(v[0]);
    int n = l->len;
    SortEntry *e = mem_alloc(sizeof *e * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        e[i].item = val_retain(l->items[i]);
        e[i].key = NIL_VAL;
    }
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        e[i].key = has_key ? interp_call(I, v[1], &e[i].item, 1) : val_retain(e[i].item);
        if (IS_ERR(e[i].key)) { e[i].key = NIL_VAL; ok = false; }
    }
    SortEntry *tmp = mem_alloc(sizeof *tmp * (size_t)(n ? n : 1));
    ok = ok && merge_sort(I, e, tmp, n, reverse);
    mem_free(tmp);
    ObjList *r = ok ? list_new(n) : NULL;
    for (int i = 0; i < n; i++) {
        if (r) list_push(r, e[i].item);
        val_release(e[i].item);
        val_release(e[i].key);
    }
    mem_free(e);
    return r ? OBJ_VAL(VAL_LIST, r) : ERR_VAL;
}

/* ---------- the rest ---------- */

static Value bi_reversed(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, bi_reversed, v) || !need_list(I, "reversed", v[0])) return ERR_VAL;
    ObjList *l = AS_LIST(v[0]), *r = list_new(l->len);
    for (int i = l->len - 1; i >= 0; i--) list_push(r, l->items[i]);
    return OBJ_VAL(VAL_LIST, r);
}

static Value bi_extend(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_extend, v) || !need_list(I, "extend", v[0])) return ERR_VAL;
    if (v[1].type != VAL_LIST) return interp_errork(I, ERRK_TYPE, "extend(): 'other' must be a list, got a %s", val_type_name(v[1]));
    ObjList *l = AS_LIST(v[0]), *o = AS_LIST(v[1]);
    int n = o->len;   /* extend(l, l) appends l's items once */
    for (int i = 0; i < n; i++) list_push(l, o->items[i]);
    return NIL_VAL;
}

static Value bi_insert(Interp *I, CallArgs *a) {
    Value v[3];
    double x;
    if (!builtin_bind(I, a, bi_insert, v) || !need_list(I, "insert", v[0]) || !arg_number(I, "insert", "i", v[1], &x))
        return ERR_VAL;
    if (x != floor(x)) return interp_errork(I, ERRK_TYPE, "insert(): 'i' must be an integer, got %g", x);
    ObjList *l = AS_LIST(v[0]);
    if (x < 0) x += l->len;   /* Python clamps an index outside the list (however far) to its ends */
    int i = x < 0 ? 0 : x > l->len ? l->len : (int)x;
    list_push(l, NIL_VAL);
    memmove(l->items + i + 1, l->items + i, sizeof(Value) * (size_t)(l->len - 1 - i));
    l->items[i] = val_retain(v[2]);
    return NIL_VAL;
}

/* The position of the first item equal to x (==, deep), -1 when none, -2 on error. */
static int find_item(Interp *I, ObjList *l, Value x) {
    for (int i = 0; i < l->len; i++) {
        int eq = val_equal_in(I, l->items[i], x);
        if (eq < 0) return -2;
        if (eq) return i;
    }
    return -1;
}

static Value bi_remove(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_remove, v) || !need_list(I, "remove", v[0])) return ERR_VAL;
    ObjList *l = AS_LIST(v[0]);
    int i = find_item(I, l, v[1]);
    if (i == -2) return ERR_VAL;
    if (i < 0) return interp_errork(I, ERRK_VALUE, "remove(): the item is not in the list");
    Value gone = l->items[i];
    memmove(l->items + i, l->items + i + 1, sizeof(Value) * (size_t)(l->len - 1 - i));
    l->len--;
    val_release(gone);
    return NIL_VAL;
}

static Value bi_index(Interp *I, CallArgs *a) {
    Value v[2];
    if (!builtin_bind(I, a, bi_index, v) || !need_list(I, "index", v[0])) return ERR_VAL;
    int i = find_item(I, AS_LIST(v[0]), v[1]);
    if (i == -2) return ERR_VAL;
    if (i < 0) return interp_errork(I, ERRK_VALUE, "index(): the item is not in the list");
    return NUM_VAL(i);
}

/* ---------- del and pop (spec section 12) ---------- */

/* Takes key out of a list or dict: `del obj[key]`, `del obj.key` (what "del") and pop(obj,
 * key, default) (what "pop"). An omitted key (UNDEF) is a list's last item; a missing dict
 * key gives dflt when there is one. Returns the item taken (owned), or ERR_VAL. */
Value interp_take(Interp *I, const char *what, Value obj, Value key, Value dflt) {
    bool del = !strcmp(what, "del");
    if (obj.type == VAL_DICT) {
        if (key.type == VAL_UNDEF) return interp_errork(I, ERRK_TYPE, "pop() of a dict needs a key");
        if (key.type != VAL_STR) return interp_errork(I, ERRK_TYPE, "dict keys are strings, got a %s", val_type_name(key));
        Value out;
        if (dict_remove(AS_DICT(obj), AS_STR(key)->chars, AS_STR(key)->len, &out)) return out;
        if (dflt.type != VAL_UNDEF) return val_retain(dflt);
        return interp_errork(I, ERRK_KEY, "key '%s' not found in dict", AS_STR(key)->chars);
    }
    if (obj.type != VAL_LIST)
        return del ? interp_errork(I, ERRK_TYPE, "cannot delete from a %s (only from a list or dict)", val_type_name(obj))
                   : interp_errork(I, ERRK_TYPE, "pop() needs a list or dict, got a %s", val_type_name(obj));
    if (dflt.type != VAL_UNDEF) return interp_error(I, "pop(): a default is only for a dict");
    ObjList *l = AS_LIST(obj);
    int64_t i = l->len - 1;
    if (key.type == VAL_UNDEF && l->len == 0) return interp_errork(I, ERRK_INDEX, "pop() from an empty list");
    if (key.type != VAL_UNDEF) {
        if (key.type != VAL_NUM) return interp_errork(I, ERRK_TYPE, "list index must be a number, got a %s", val_type_name(key));
        double x = key.as.n;
        if (x != floor(x)) return interp_errork(I, ERRK_TYPE, "list index must be an integer, got %g", x);
        if (x < -(double)l->len || x >= (double)l->len) return interp_errork(I, ERRK_INDEX, "list index out of range");
        i = (int64_t)(x < 0 ? x + l->len : x);
    }
    Value out = l->items[i];
    memmove(l->items + i, l->items + i + 1, sizeof(Value) * (size_t)(l->len - 1 - i));
    l->len--;
    return out;
}

static Value bi_pop(Interp *I, CallArgs *a) {
    Value v[3];
    if (!builtin_bind(I, a, bi_pop, v)) return ERR_VAL;
    return interp_take(I, "pop", v[0], v[1], v[2]);
}

const BuiltinDef list_builtins[] = {
    { "sorted", bi_sorted, "(list, key=nil, reverse=false)", "a new list of the items in order (stable; numbers or strings)", ST_SORTED | ST_FOLDS },
    { "reversed", bi_reversed, "(list)", "a new list of the items in reverse order", ST_REVERSED | ST_FOLDS },
    { "extend", bi_extend, "(list, other)", "appends the items of other to the list", ST_EXTEND },
    { "insert", bi_insert, "(list, i, x)", "puts x before position i (negative from the end)", ST_INSERT },
    { "remove", bi_remove, "(list, x)", "removes the first item equal to x", ST_NONE },
    { "pop", bi_pop, "(x, key=nil, default=nil)",
      "removes and returns x[key] (a list's last item without key; a dict's default when the key is missing)", ST_POP },
    { "index", bi_index, "(list, x)", "the position of the first item equal to x", ST_FOLDS },
    { NULL, NULL, NULL, NULL, ST_NONE },
};
