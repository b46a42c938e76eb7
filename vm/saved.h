/* saved.h - the containers a graph stores into (lists and dicts of the program that its stores,
 * pushes and dels change), their contents saved before a run and put back after it. Two users in
 * vm/static.c: --verify-static puts back what the eager run changed before the static run, and a
 * run that fails partway puts back what it changed before the block runs again eagerly. */
#ifndef TSL_SAVED_H
#define TSL_SAVED_H
#include "ir.h"

typedef struct {
    Obj *obj;
    Value *items;
    int n;
    Value *keys;       /* a dict's keys (strings), NULL for a list */
    bool append_only;  /* the graph only pushes onto this list: its length is enough to undo */
} Saved;

/* The containers g changes, read from its inputs vals (*n of them; a new array, or NULL). */
Saved *saved_containers(Graph *g, Value *vals, int *n);
/* Saves each one's contents; lengths only where that undoes the graph (whole: always all). */
void saved_save(Saved *s, int n, bool whole);
void saved_restore(Saved *s, int n);
void saved_free(Saved *s, int n);   /* the contents and the array */
/* Whether the container of an eager run's whole snapshot now holds something else, said in where. */
bool saved_differs(const Saved *eager, char *where, size_t n);
#endif
