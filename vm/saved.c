/* saved.c - the containers a graph changes, saved and put back (saved.h). */
#include <stdio.h>
#include <string.h>
#include "mem.h"
#include "saved.h"
#include "vm.h"

/* The container an instruction changes: a store, a new key made at run time, or a host call
 * that pushes, extends or deletes (its aux: the container + 1); -1 for the rest. */
static int changed_obj(const Ins *in) {
    return in->op == I_STORE ? in->a : in->op == I_DSET ? in->aux : in->op == I_HCALL ? in->aux - 1 : -1;
}

static bool is_append(const Ins *in) {
    if (in->op != I_HCALL || in->nopnds < 1 || in->opnds[0].kind != OPND_CONST || in->opnds[0].k.type != VAL_FUNC ||
        in->opnds[0].k.as.o->kind != OBJ_BUILTIN)
        return false;
    const char *name = AS_BUILTIN(in->opnds[0].k)->name;
    return !strcmp(name, "push") || !strcmp(name, "extend");
}

/* The guards' inputs of the containers g changes, each once, with whether g only pushes onto it. */
static void find_changes(Graph *g) {
    g->changes_found = true;
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        int obj = changed_obj(in);
        for (int k = 0; obj >= 0 && k < g->nguards; k++) {
            if (g->guards[k].obj != obj) continue;
            int q = 0;
            while (q < g->nchanges && g->changes[2 * q] != g->guards[k].input) q++;
            if (q == g->nchanges) {
                g->changes = mem_realloc(g->changes, sizeof(int) * 2 * (size_t)(++g->nchanges));
                g->changes[2 * q] = g->guards[k].input;
                g->changes[2 * q + 1] = 1;
            }
            g->changes[2 * q + 1] &= is_append(in);
        }
    }
}

Saved *saved_containers(Graph *g, Value *vals, int *n) {
    if (!g->changes_found) find_changes(g);
    *n = 0;
    if (!g->nchanges) return NULL;
    Saved *out = mem_alloc(sizeof(Saved) * (size_t)g->nchanges);
    for (int q = 0; q < g->nchanges; q++) {
        Obj *o = vals[g->changes[2 * q]].as.o;
        Saved *s = NULL;
        for (int j = 0; j < *n && !s; j++)   /* two inputs may be one list (M = L) */
            if (out[j].obj == o) s = &out[j];
        if (!s) {
            s = &out[(*n)++];
            *s = (Saved){ o, NULL, 0, NULL, o->kind == OBJ_LIST };
        }
        s->append_only &= g->changes[2 * q + 1] != 0;
    }
    return out;
}

static void save_one(Saved *s, bool whole) {
    bool dict = s->obj->kind == OBJ_DICT;
    s->n = dict ? ((ObjDict *)s->obj)->len : ((ObjList *)s->obj)->len;
    if (s->append_only && !whole) return;   /* pushes only: truncating to n undoes them */
    s->append_only = false;
    s->items = mem_alloc(sizeof(Value) * (size_t)(s->n + 1));
    s->keys = dict ? mem_alloc(sizeof(Value) * (size_t)(s->n + 1)) : NULL;
    for (int i = 0; i < s->n; i++) {
        s->items[i] = val_retain(dict ? ((ObjDict *)s->obj)->entries[i].val : ((ObjList *)s->obj)->items[i]);
        if (dict) s->keys[i] = val_retain(OBJ_VAL(VAL_STR, ((ObjDict *)s->obj)->entries[i].key));
    }
}

void saved_save(Saved *s, int n, bool whole) {
    for (int k = 0; k < n; k++) save_one(&s[k], whole);
}

static void restore_one(Saved *s) {
    if (s->obj->kind == OBJ_DICT) {
        ObjDict *d = (ObjDict *)s->obj;
        dict_truncate(d, 0);
        for (int i = 0; i < s->n; i++) dict_set(d, AS_STR(s->keys[i]), s->items[i]);
        return;
    }
    /* made again from the snapshot: the run may have added (pushes), replaced and deleted
     * (del) items; a list the graph only pushes onto gets its old length back */
    ObjList *l = (ObjList *)s->obj;
    int keep = s->append_only ? s->n : 0;
    while (l->len > keep) val_release(l->items[--l->len]);
    for (int i = keep; i < s->n; i++) list_push(l, s->items[i]);
}

void saved_restore(Saved *s, int n) {
    for (int k = 0; k < n; k++) restore_one(&s[k]);
}

static void release_all(Value *v, int n) {
    for (int i = 0; v && i < n; i++) val_release(v[i]);
    mem_free(v);
}

void saved_free(Saved *s, int n) {
    for (int k = 0; k < n; k++) {
        release_all(s[k].items, s[k].n);
        release_all(s[k].keys, s[k].n);
    }
    mem_free(s);
}

bool saved_differs(const Saved *eager, char *where, size_t n) {
    Saved now = { eager->obj, NULL, 0, NULL, false };
    save_one(&now, true);
    bool differs = now.n != eager->n;
    if (differs) snprintf(where, n, "it has %d items, eagerly %d", now.n, eager->n);
    for (int i = 0; i < now.n && !differs; i++) {
        differs = now.keys && !val_equal(now.keys[i], eager->keys[i]);
        if (differs) snprintf(where, n, "key %d is '%s', eagerly '%s'", i, AS_STR(now.keys[i])->chars, AS_STR(eager->keys[i])->chars);
        else differs = static_values_differ(eager->items[i], now.items[i], where, n);
    }
    release_all(now.items, now.n);
    release_all(now.keys, now.n);
    return differs;
}
