/* gc.c - a trial-deletion cycle collector in the style of CPython's gc module.
 *
 * Every reference to an object is counted in its rc: variable slots, the value stack,
 * module globals, static-code guards and caches, and other objects. A container whose rc
 * is explained entirely by references from other containers, and that no container with
 * an outside reference reaches, is garbage: only a cycle keeps it alive. So:
 *  1. gc_refs = rc for every container (list, dict, closure, cell);
 *  2. subtract one for every reference from one container to another;
 *  3. containers left with gc_refs > 0 are referenced from outside (the roots): mark
 *     everything they reach;
 *  4. free the unmarked ones: pin them, clear their contents (tensors, strings and other
 *     objects they hold are released), then free their storage. Pinning keeps the
 *     releases inside the garbage from freeing a garbage object while it is being cleared.
 * Strings and built-ins refer to no object, so they cannot be part of a cycle: they sit on
 * a list of their own that a collection never walks, and are freed by reference counting
 * once the garbage that holds them lets go. */
#include "gc.h"
#include "mem.h"
#include "value.h"

static bool is_container(const Obj *o) {
    return o->kind == OBJ_LIST || o->kind == OBJ_DICT || o->kind == OBJ_CLOSURE || o->kind == OBJ_CELL;
}

static Obj *as_container(Value v) {
    if (v.type == VAL_TENSOR || !val_is_heap(v)) return NULL;
    return is_container(v.as.o) ? v.as.o : NULL;
}

typedef void (*Visit)(Obj *child, void *ctx);

/* Calls visit for every container o refers to; returns how many slots it looked at. With
 * no visit, only counts them. */
static long each_child(Obj *o, Visit visit, void *ctx) {
    Obj *c;
    if (!visit) {
        switch (o->kind) {
        case OBJ_LIST: return ((ObjList *)o)->len;
        case OBJ_DICT: return ((ObjDict *)o)->len;
        case OBJ_CLOSURE: return ((ObjClosure *)o)->upvals ? ((ObjClosure *)o)->proto->nupvals : 0;
        default: return 1;
        }
    }
    switch (o->kind) {
    case OBJ_LIST: {
        ObjList *l = (ObjList *)o;
        for (int i = 0; i < l->len; i++)
            if ((c = as_container(l->items[i]))) visit(c, ctx);
        return l->len;
    }
    case OBJ_DICT: {
        ObjDict *d = (ObjDict *)o;
        for (int i = 0; i < d->len; i++)
            if ((c = as_container(d->entries[i].val))) visit(c, ctx);
        return d->len;
    }
    case OBJ_CELL:
        if ((c = as_container(((ObjCell *)o)->v))) visit(c, ctx);
        return 1;
    case OBJ_CLOSURE: {
        ObjClosure *cl = (ObjClosure *)o;
        for (int i = 0; cl->upvals && i < cl->proto->nupvals; i++)
            if (cl->upvals[i]) visit(&cl->upvals[i]->h, ctx);
        return cl->upvals ? cl->proto->nupvals : 0;
    }
    default: return 0;
    }
}

static void subtract_ref(Obj *child, void *ctx) { (void)ctx; child->gc_refs--; }

/* The mark phase's work list (explicit, so any nesting depth is safe). Growing it may fail
 * (out of memory): the collection then gives up, since an object left unmarked would be
 * taken for garbage, and it must not jump out with marks half set. */
typedef struct {
    Obj **items;
    size_t n, cap;
    bool failed;
} ObjStack;

static void push_unmarked(Obj *child, void *ctx) {
    ObjStack *s = ctx;
    if (child->marks & OBJ_GC_REACHABLE || s->failed) return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        Obj **items = mem_try_realloc(s->items, sizeof(Obj *) * cap);
        if (!items) { s->failed = true; return; }
        s->items = items;
        s->cap = cap;
    }
    child->marks |= OBJ_GC_REACHABLE;
    s->items[s->n++] = child;
}

long gc_collect(void) {
    val_heap()->gc_due = false;
    Obj *head = val_containers_head();
    for (Obj *o = head->next; o != head; o = o->next) o->gc_refs = o->rc;
    for (Obj *o = head->next; o != head; o = o->next) each_child(o, subtract_ref, NULL);
    ObjStack stack = { 0 };
    for (Obj *o = head->next; o != head; o = o->next)
        if (o->gc_refs > 0) push_unmarked(o, &stack);
    while (stack.n && !stack.failed) each_child(stack.items[--stack.n], push_unmarked, &stack);
    if (stack.failed) {   /* no memory to finish marking: collect nothing this time */
        for (Obj *o = head->next; o != head; o = o->next) o->marks &= ~OBJ_GC_REACHABLE;
        mem_free(stack.items);
        val_gc_done(0);
        return 0;
    }
    /* what is left unmarked is garbage: move it off the containers list */
    Obj garbage = { 0, OBJ_STR, 0, 0, &garbage, &garbage };
    long freed = 0;
    long work = 0;   /* the live containers and their slots: what the next collection walks */
    for (Obj *o = head->next, *next; o != head; o = next) {
        next = o->next;
        if (o->marks & OBJ_GC_REACHABLE) {
            o->marks &= ~OBJ_GC_REACHABLE;
            work += 1 + each_child(o, NULL, NULL);
            continue;
        }
        val_obj_move(o, &garbage);
        o->rc++;   /* pinned while the garbage releases its references to itself */
        freed++;
    }
    for (Obj *o = garbage.next; o != &garbage; o = o->next) val_obj_clear(o);
    while (garbage.next != &garbage) val_obj_release_storage(garbage.next);
    mem_free(stack.items);
    val_gc_done(work);
    return freed;
}
