/* cslice.c - slices with a start known only at run time: `X[i*bs:(i+1)*bs]`, `perm[s:s+bs]`,
 * `X[:, j:j+2]` inside `for i in range(...)`.
 *
 * A static register has one shape, so such a slice compiles when its size is the same on
 * every run and no run clamps it (NumPy's bounds clamp: X[90:100] of 95 rows has 5). The
 * compiler proves both with two small facts it carries on number values:
 *   - the counter of a range loop knows the values it takes (ARange: [lo, hi], when the
 *     range's stop is known when compiling; the numbers it is computed from become guards
 *     when a slice uses it);
 *   - a number computed from a counter with + - * and known integers is affine in it
 *     (AVal.lin_a * counter + lin_b, all integers), as long as it stays exact in a double.
 * Two bounds affine in the same counter with the same factor differ by a known integer:
 * the size. Their intervals inside [0, len] mean no clamping. Then the INDEX instruction
 * reads the start from a number register and keeps the size: its template holds a start
 * and stop (the smallest ones, so compile-time inference sees a valid slice) whose
 * difference the VM keeps (vm/run/vm_loop.h: exec_index). Everything else, the VM's index
 * routine does as eagerly, so the bits are eager's; the static gradient is take's, as for
 * every index (vm/compile/cexpr.c: index_tracked). */
#include "comp.h"

/* Integers of a double are exact up to 2^53: affine forms stay below it. */
#define LIN_MAX 9007199254740992.0

void cslice_counter(Comp *c, AVal *counter, double start, double step, const AVal *stop, const Node *stop_node) {
    ARange *r = cc_arena_alloc(c, sizeof *r);
    memset(r, 0, sizeof *r);
    r->reg = counter->reg;
    r->lo = r->hi = start;
    r->stop_name = stop_node && stop_node->kind == AST_NAME ? stop_node->str : NULL;
    int64_t s0, s1, st;
    r->bounded = stop->kind == AV_NUM && stop->known && num_to_i64(start, &s0) && num_to_i64(stop->num, &s1) &&
                 num_to_i64(step, &st) && st != 0;
    if (r->bounded) {
        r->stop_deps = stop->deps;
        uint64_t n = range_count(s0, s1, st);
        if (n) {   /* a loop that never runs proves anything: its body never runs */
            double last = (double)range_at(s0, st, n - 1);
            r->lo = fmin(start, last);
            r->hi = fmax(start, last);
        }
    }
    counter->range = r;
    counter->lin_a = 1;
    counter->lin_b = 0;
}

static bool exact_int(double x) { return x == floor(x) && fabs(x) <= LIN_MAX; }

/* The smallest and largest values of an affine form over its counter's range. */
static void lin_span(const AVal *v, double *lo, double *hi) {
    double x = v->lin_a * v->range->lo + v->lin_b, y = v->lin_a * v->range->hi + v->lin_b;
    *lo = fmin(x, y);
    *hi = fmax(x, y);
}

/* Sets r's affine form from a op b when it has one: a counter's form and a known integer
 * under + - *, or two forms of one counter under + -. */
void cslice_affine(AVal *r, int tok, const AVal *a, const AVal *b) {
    r->range = NULL;
    if (r->known || (tok != TOK_PLUS && tok != TOK_MINUS && tok != TOK_STAR)) return;
    bool ka = a->known && exact_int(a->num), kb = b->known && exact_int(b->num);
    const ARange *rg = a->range ? a->range : b->range;
    double sa = tok == TOK_MINUS ? -1 : 1, la, lb;
    if (a->range && b->range) {
        if (a->range != b->range || tok == TOK_STAR) return;
        la = a->lin_a + sa * b->lin_a;
        lb = a->lin_b + sa * b->lin_b;
    } else if (a->range && kb) {
        la = tok == TOK_STAR ? a->lin_a * b->num : a->lin_a;
        lb = tok == TOK_STAR ? a->lin_b * b->num : a->lin_b + sa * b->num;
    } else if (b->range && ka) {
        la = tok == TOK_STAR ? b->lin_a * a->num : sa * b->lin_a;
        lb = tok == TOK_STAR ? b->lin_b * a->num : a->num + sa * b->lin_b;
    } else {
        return;
    }
    AVal f = { .kind = AV_NUM, .range = rg, .lin_a = la, .lin_b = lb };
    if (!exact_int(la) || !exact_int(lb)) return;
    if (rg->bounded) {   /* the value itself, at every counter value, is an exact integer */
        double lo, hi;
        lin_span(&f, &lo, &hi);
        if (fabs(lo) > LIN_MAX || fabs(hi) > LIN_MAX) return;
    }
    r->range = rg;
    r->lin_a = la;
    r->lin_b = lb;
}

/* The axis that item k of the index slices: items before an ellipsis count from the
 * start, those after it from the end (static indices take one axis per item but `nil`,
 * which takes none: a nil held in a variable is refused by cc_index_tensor). -1 when the
 * index's structure is not one the checks below can read (infer_index reports it). */
static int item_axis(const Node *index, int k, int ndim) {
    int ell = -1, nell = 0, nnil = 0, before = 0, after = 0;
    for (int j = 0; j < index->n; j++) {
        int kind = index->kids[j]->kind;
        if (kind == AST_ELLIPSIS) { ell = j; nell++; }
        nnil += kind == AST_NIL;
        if (kind != AST_NIL && kind != AST_ELLIPSIS) {
            before += j < k;
            after += j > k;
        }
    }
    if (nell > 1 || index->n - nell - nnil > ndim) return -1;
    return ell >= 0 && ell < k ? ndim - 1 - after : before;
}

static bool no(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool no(char *why, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return false;
}

/* The number inputs whose values are guards already. */
static uint64_t guarded_numbers(Comp *c) {
    uint64_t m = 0;
    for (int i = 0; i < c->nnum; i++)
        if (c->g->guards[c->numguards[i]].kind == G_NUMBER_EQ) m |= (uint64_t)1 << i;
    return m;
}

/* The name of the first number input in deps (NULL when none is named). */
static const char *stop_input_name(Comp *c, uint64_t deps) {
    for (int i = 0; i < c->nnum; i++)
        if (deps & ((uint64_t)1 << i)) return c->g->inputs[c->g->guards[c->numguards[i]].input].name;
    return NULL;
}

/* Why a counter's range does not bound its values when compiling: NULL when it does. The
 * slice's proof needs the range's stop, so the number inputs the stop depends on become
 * guards (the loop still reads its stop register at run time; the guard makes them agree),
 * unless vm/static.c asks not to: the block was recompiled twice already because such a
 * guard failed, and a stop that changes at every run would recompile at every run. Then
 * only a stop whose inputs are guards anyway (`guarded`) bounds the counter. */
static const char *unbounded(Comp *c, const ARange *r, uint64_t guarded, char *buf, size_t n) {
    if (r->bounded && (!c->I->compile_fixed_stops || !(r->stop_deps & ~guarded))) return NULL;
    char what[80] = "the loop's range stop";
    if (r->stop_name) snprintf(what, sizeof what, "the loop bound '%s'", r->stop_name);
    else if (r->bounded) {   /* name the input it is computed from that changes: `range(n // bs)` */
        const char *from = stop_input_name(c, r->stop_deps & ~guarded);
        if (from) snprintf(what, sizeof what, "the loop's range stop (from '%s')", from);
    }
    if (r->bounded)
        snprintf(buf, n, "%s is a run-time number whose value changed twice between runs (a guard on it would "
                 "recompile the code at every change)", what);
    else
        snprintf(buf, n, "%s is a run-time number", what);
    return buf;
}

/* Marks the guards on the number inputs in deps as range stops' (vm/static.c counts the
 * recompiles they cause). */
void cslice_mark_stop_guards(Comp *c, uint64_t deps) {
    for (int i = 0; i < c->nnum; i++)
        if (deps & ((uint64_t)1 << i)) c->g->guards[c->numguards[i]].loop_stop = true;
}

bool cslice_try(Comp *c, const AVal *t, const Node *index, int k, const AVal *bound, IndexItem *item, int *reg,
                char *why, size_t whylen) {
    const AVal *lo = &bound[0], *hi = &bound[1], *st = &bound[2];
    int64_t step = 1;
    if (st->kind != AV_NONE && !(st->kind == AV_NUM && st->known && num_to_i64(st->num, &step) && step > 0))
        return no(why, whylen, "a slice with a bound computed at run time needs a known positive step when compiling");
    for (int j = 0; j < 2; j++)
        if (bound[j].kind == AV_NUM && !bound[j].known && !bound[j].range)
            return no(why, whylen, "a slice bound is computed at run time, not from a range loop's counter with + - * "
                                   "and known integers (a while loop's variable, a number read at run time): its size "
                                   "and whether it clamps are not known when compiling");
    if (!lo->range || !hi->range || lo->range != hi->range || lo->lin_a != hi->lin_a)
        return no(why, whylen, "the size of a slice with bounds computed at run time changes at run time "
                               "(write it as t[s:s+k] with k known when compiling)");
    uint64_t deps = lo->deps | hi->deps, guarded = deps | guarded_numbers(c);
    char buf[200];
    const char *loose = unbounded(c, lo->range, guarded, buf, sizeof buf);
    if (loose) return no(why, whylen, "slice bounds may clamp at run time: %s", loose);
    int axis = item_axis(index, k, t->shape.ndim);
    if (axis < 0) return no(why, whylen, "an index with a run-time slice that does not fit the tensor's axes");
    double len = (double)t->shape.d[axis], a0, a1, b0, b1;
    lin_span(lo, &a0, &a1);
    lin_span(hi, &b0, &b1);
    if (a0 < 0 || b0 < 0 || a1 > len || b1 > len)
        return no(why, whylen, "slice bounds may clamp at run time: the start takes values in [%.0f, %.0f] and the "
                               "stop in [%.0f, %.0f] on axis %d of size %.0f",
                  a0, a1, b0, b1, axis, len);
    cc_guard_deps(c, deps | lo->range->stop_deps);
    cslice_mark_stop_guards(c, lo->range->stop_deps & ~guarded);
    /* the template: the bounds at the counter's smallest value (a valid slice), their difference the size */
    double first = lo->lin_a * lo->range->lo;
    *item = (IndexItem){ .kind = IDX_SLICE, .has_start = true, .has_stop = true, .step = step };
    item->start = (int64_t)(first + lo->lin_b);
    item->stop = (int64_t)(first + hi->lin_b);
    AVal start = *lo;
    *reg = cc_num_reg(c, &start);
    return true;
}
