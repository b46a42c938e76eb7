/* guard.c - why a value fails a guard, and the guarded inputs in a run's registers (guard.h). */
#include <stdio.h>
#include <string.h>
#include "guard.h"
#include "mem.h"
#include "vm.h"

/* A value in a reason: a tensor's type, a list's or dict's length, anything else printed. */
static const char *value_text(Value v, char *buf, size_t n) {
    char sh[300];
    Shape s;
    StrBuf b = { 0 };
    if (v.type == VAL_UNDEF) return "nothing";
    if (v.type == VAL_LIST || v.type == VAL_DICT) {
        snprintf(buf, n, "a %s of %d", val_type_name(v), v.type == VAL_LIST ? AS_LIST(v)->len : AS_DICT(v)->len);
    } else if (v.type == VAL_TENSOR) {
        shape_of(v.as.t, &s);
        snprintf(buf, n, "%s %s%s", dtype_name(v.as.t->dtype), shape_str(&s, sh, sizeof sh),
                 v.as.t->device == DEV_CPU ? "" : " on the GPU");
    } else {
        fmt_value(&b, v, true);
        snprintf(buf, n, "%s", b.s ? b.s : "?");
        sb_free(&b);
    }
    return buf;
}

/* What the guard wants, for a reason. */
static const char *want_text(const Guard *gd, char *buf, size_t n) {
    char sh[300];
    switch (gd->kind) {
    case G_TENSOR: snprintf(buf, n, "%s %s", dtype_name(gd->dtype), shape_str(&gd->shape, sh, sizeof sh)); break;
    case G_NUMBER: return "a number";
    case G_NUMBER_EQ: snprintf(buf, n, "%.17g (the graph depends on its value)", gd->num); break;
    case G_CONST: return gd->k.type == VAL_UNDEF ? "omitted" : value_text(gd->k, buf, n);
    case G_LIST: snprintf(buf, n, "a list of %s%d", gd->at_least ? "at least " : "", gd->n); break;
    case G_DICT: snprintf(buf, n, "a dict with the same %d keys in the same order%s", gd->n, gd->at_least ? " (and perhaps more after them)" : ""); break;
    }
    return buf;
}

const char *guard_name(const Graph *g, const Guard *gd) {
    const char *name = g->inputs[gd->input].name;
    return name ? name : "?";
}

const char *guard_reason(const Graph *g, const Guard *gd, Value v, char *why, size_t n) {
    if (!why) return "a guard failed";
    char want[600], got[600];
    snprintf(why, n, "'%s' must be %s, got %s", guard_name(g, gd), want_text(gd, want, sizeof want),
             value_text(v, got, sizeof got));
    return why;
}

ErrKind guard_kind(const Guard *gd, Value v) {
    switch (gd->kind) {
    case G_TENSOR:
        if (v.type != VAL_TENSOR || v.as.t->dtype != gd->dtype) return ERRK_TYPE;
        return v.as.t->device != DEV_CPU ? ERRK_DEVICE : ERRK_SHAPE;   /* the dtype fits: the shape or device does not */
    case G_NUMBER: return ERRK_TYPE;
    case G_NUMBER_EQ: return v.type == VAL_NUM ? ERRK_VALUE : ERRK_TYPE;
    case G_LIST: return v.type == VAL_LIST ? ERRK_VALUE : ERRK_TYPE;
    case G_DICT: return v.type == VAL_DICT ? ERRK_KEY : ERRK_TYPE;   /* other keys */
    case G_CONST: return v.type == gd->k.type ? ERRK_VALUE : ERRK_TYPE;
    }
    return ERRK_VALUE;
}

const char *guard_unstorable(const Graph *g, const Guard *gd, char *why, size_t n) {
    ValType t = gd->k.type;
    if (gd->kind != G_CONST || t == VAL_NIL || t == VAL_BOOL || t == VAL_NUM || t == VAL_STR || t == VAL_UNDEF)
        return NULL;
    snprintf(why, n, "'%s' is a %s; an exported graph takes tensors, numbers, strings, lists and dicts",
             guard_name(g, gd), val_type_name(gd->k));
    return why;
}

void guards_bind(const Graph *g, const Value *vals, VmRegs *r) {
    for (int i = 0; i < g->nguards; i++) {
        const Guard *gd = &g->guards[i];
        Value v = vals[gd->input];
        if (gd->reg >= 0 && v.type == VAL_TENSOR) r->ten[gd->reg] = tensor_retain(v.as.t);
        else if (gd->reg >= 0 && v.type == VAL_NUM) r->num[gd->reg] = v.as.n;
        if (gd->obj >= 0) r->objs[gd->obj] = v.as.o;
    }
}

void guards_unbind(const Graph *g, VmRegs *r) {
    for (int i = 0; i < g->nguards; i++) {
        int reg = g->guards[i].reg;
        if (reg >= 0 && g->regs[reg].kind == R_TENSOR) {
            tensor_release(r->ten[reg]);
            r->ten[reg] = NULL;
        }
    }
    memset(r->objs, 0, sizeof(Obj *) * (size_t)g->nobjs);
}
