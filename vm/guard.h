/* guard.h - what a graph's guards accept (inline: the cache lookup of every static call runs
 * it), and why a value fails one (guard.c). The one rule for a static graph's cache lookup
 * (static.c: the reason TSL_EXPLAIN gives for a recompile), a loaded graph's and the C API's
 * arguments (model.c: the reason in their errors) and export's choice of which guards a file
 * can hold (export.c). */
#ifndef TSL_GUARD_H
#define TSL_GUARD_H
#include <string.h>
#include "ir.h"

static inline bool guard_keys_ok(const Guard *gd, Value v) {
    /* at_least: a dict the code only adds keys to; its keys begin with these */
    if (v.type != VAL_DICT || (gd->at_least ? AS_DICT(v)->len < gd->n : AS_DICT(v)->len != gd->n)) return false;
    for (int k = 0; k < gd->n; k++)
        if (strcmp(AS_DICT(v)->entries[k].key->chars, gd->keys[k])) return false;
    return true;
}

static inline bool guard_passes(const Guard *gd, Value v, bool any_device) {
    switch (gd->kind) {
    case G_TENSOR: {
        if (v.type != VAL_TENSOR || v.as.t->dtype != gd->dtype || (!any_device && v.as.t->device != DEV_CPU)) return false;
        Shape s;
        shape_of(v.as.t, &s);
        return shape_fits(&s, &gd->shape);   /* a dynamic axis (export's) takes any size */
    }
    case G_NUMBER: return v.type == VAL_NUM;
    case G_NUMBER_EQ: return v.type == VAL_NUM && !memcmp(&v.as.n, &gd->num, sizeof(double));
    /* nil, bools and strings by value, functions by identity (val_equal), an omitted argument by another */
    case G_CONST: return v.type == gd->k.type && (v.type == VAL_UNDEF || val_equal(v, gd->k));
    case G_LIST: return v.type == VAL_LIST && (gd->at_least ? AS_LIST(v)->len >= gd->n : AS_LIST(v)->len == gd->n);
    case G_DICT: return guard_keys_ok(gd, v);
    }
    return false;
}

/* The name of gd's input ("x", "d.w", "l[0]"), for messages. */
const char *guard_name(const Graph *g, const Guard *gd);
/* Why v fails gd (in why; a fixed text when why is NULL). */
const char *guard_reason(const Graph *g, const Guard *gd, Value v, char *why, size_t n);

/* NULL when v passes gd, else why not. A tensor off the CPU passes only where any_device. */
static inline const char *guard_check(const Graph *g, const Guard *gd, Value v, bool any_device, char *why, size_t n) {
    return guard_passes(gd, v, any_device) ? NULL : guard_reason(g, gd, v, why, n);
}

/* The kind of error (spec section 12) a value that fails gd makes: "type" for another type or
 * dtype, "shape" for a tensor of another shape, "device" for one on another device, "key" for
 * a dict with other keys, "value" for another number, length or constant. */
ErrKind guard_kind(const Guard *gd, Value v);

/* NULL when a graph file can hold gd, else why not (in why). */
const char *guard_unstorable(const Graph *g, const Guard *gd, char *why, size_t n);

/* Before a run, the guarded inputs into their registers (tensors retained) and containers;
 * after it, the registers let go of them (the graph must not keep the caller's tensors). */
struct VmRegs;
void guards_bind(const Graph *g, const Value *vals, struct VmRegs *r);
void guards_unbind(const Graph *g, struct VmRegs *r);

#endif
