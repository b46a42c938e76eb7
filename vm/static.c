/* static.c - running static code: the compiled-code cache, guards, inputs and outputs,
 * --no-static, --verify-static and TSL_EXPLAIN.
 *
 * Each static block (and static fn) keeps up to CACHE_MAX graphs, one per signature. On
 * entry the inputs are fetched from the frame and every graph's guards are checked, most
 * recent first; a hit runs it, a miss compiles a new graph for the current values. Code
 * the compiler does not support yet runs eagerly: a warning says so once per block or static
 * fn (TSL_EXPLAIN=1 says it in its own line instead; TSL_WARN=0 silences it). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "compile.h"
#include "opt.h"
#include "mem.h"
#include "vm.h"
#include "guard.h"
#include "saved.h"
#include "pool.h"

#define CACHE_MAX 8

typedef struct Cache {
    Graph *graphs[CACHE_MAX];
    int n;
    bool eager_only;          /* the compiler does not support this code */
    int stop_misses;          /* recompiles because a range stop's guard failed (cslice.c) */
    struct Cache *next;       /* all caches, for freeing */
} Cache;

/* Graphs that keep their intermediate buffers between runs ("warm"), most recently run
 * first. A block in a hot loop reuses its buffers (no allocation in steady state), but only
 * the WARM_MAX most recent graphs keep theirs: 100 static fns or a block recompiled for new
 * shapes do not pin 100 sets. Under --max-memory, an allocation that would fail first
 * releases every warm graph's buffers (the ops context's reclaim hook, set to this
 * interpreter's static state when it is made). */
#define WARM_MAX 8

typedef struct {
    Cache *caches;
    Graph *last;              /* the most recently run graph (for :dis) */
    int explain;              /* TSL_EXPLAIN set */
    int warn;                 /* warn of eager fallbacks (TSL_WARN is not 0) */
    Graph *warm[WARM_MAX];
    int nwarm;
} StaticState;

static int64_t reclaim_buffers(void *state);

static StaticState *state(Interp *I) {
    if (!I->vm) {
        StaticState *s = mem_calloc(1, sizeof *s);
        const char *e = getenv("TSL_EXPLAIN");
        s->explain = e && *e && strcmp(e, "0");
        const char *w = getenv("TSL_WARN");
        s->warn = !w || strcmp(w, "0");
        I->vm = s;
        I->opsctx->reclaim = reclaim_buffers;
        I->opsctx->reclaim_ud = s;
    }
    return I->vm;
}

/* Drops a graph's register file: its intermediates go; the next run allocates afresh. */

static void cool(Graph *g) {
    if (!g->rf || g->busy) return;
    vm_regs_free(g->rf, g);
    g->rf = NULL;
}

static void warm_forget(StaticState *s, Graph *g) {
    for (int i = 0; i < s->nwarm; i++)
        if (s->warm[i] == g) {
            memmove(s->warm + i, s->warm + i + 1, sizeof(Graph *) * (size_t)(s->nwarm - i - 1));
            s->nwarm--;
            return;
        }
}

/* g just ran and kept its buffers: it becomes the most recent; the least recent past
 * WARM_MAX cools down. */
static void warm_touch(StaticState *s, Graph *g) {
    if (s->nwarm > 0 && s->warm[0] == g) return;   /* the hot loop: nothing to do */
    warm_forget(s, g);
    if (s->nwarm == WARM_MAX) cool(s->warm[--s->nwarm]);
    memmove(s->warm + 1, s->warm, sizeof(Graph *) * (size_t)s->nwarm);
    s->warm[0] = g;
    s->nwarm++;
}

static int64_t reclaim_buffers(void *state) {
    StaticState *s = state;
    const OpsCtx *c = ops_ctx();
    int64_t before = c->tensor_live_bytes;
    int kept = 0;
    for (int i = 0; i < s->nwarm; i++) {   /* a running graph keeps its registers */
        if (s->warm[i]->busy) s->warm[kept++] = s->warm[i];
        else cool(s->warm[i]);
    }
    s->nwarm = kept;
    cpu_reduce_cache_free();
    return before - c->tensor_live_bytes;
}

static Cache *cache_new(Interp *I) {
    Cache *c = mem_calloc(1, sizeof *c);
    c->next = state(I)->caches;
    state(I)->caches = c;
    return c;
}

static void static_free_all(Interp *I) {
    StaticState *s = I->vm;
    if (!s) return;
    for (Cache *c = s->caches; c;) {
        Cache *next = c->next;
        for (int i = 0; i < c->n; i++) graph_free(c->graphs[i]);
        mem_free(c);
        c = next;
    }
    if (I->opsctx->reclaim_ud == s) {
        I->opsctx->reclaim = NULL;
        I->opsctx->reclaim_ud = NULL;
    }
    mem_free(s);
    I->vm = NULL;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* ---------- inputs and guards ---------- */

typedef struct {
    Frame *f;
    ObjClosure *fn;
    Value *params;
} Env;

static Value fetch_one(Graph *g, Env *e, Value *vals, int i) {
    InputSrc *s = &g->inputs[i];
    switch (s->kind) {
    case SRC_LOCAL: return e->f->slots[s->slot];
    case SRC_CELL: return ((ObjCell *)e->f->slots[s->slot].as.o)->v;
    case SRC_UPVAL: return (e->fn ? e->fn : e->f->closure)->upvals[s->slot]->v;
    case SRC_GLOBAL: return s->slot < s->mod->g.count ? s->mod->g.vals[s->slot] : UNDEF_VAL;
    case SRC_CELLPTR: return s->cell->v;
    case SRC_ARG: return e->params[s->slot];
    case SRC_LEAF: {
        Value p = vals[s->slot];
        if (p.type == VAL_LIST) return s->path < AS_LIST(p)->len ? AS_LIST(p)->items[s->path] : UNDEF_VAL;
        if (p.type == VAL_DICT) return s->path < AS_DICT(p)->len ? AS_DICT(p)->entries[s->path].val : UNDEF_VAL;
        return UNDEF_VAL;
    }
    }
    return UNDEF_VAL;
}

static void fetch_inputs(Graph *g, Env *e, Value *vals) {
    for (int i = 0; i < g->ninputs; i++) vals[i] = fetch_one(g, e, vals, i);
}

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)*(Obj *const *)a, y = (uintptr_t)*(Obj *const *)b;
    return x < y ? -1 : x > y;
}

/* Whether the lists and dicts of the inputs are shared as they were when the graph was
 * compiled: the guards of one container slot (names of one container then, cvalue.c's
 * lift_alias) see one object, different slots different objects. A store through one name
 * must reach the other exactly when it does eagerly. */
static bool objs_shared_as_compiled(Graph *g, Value *vals, char *why, size_t n) {
    if (g->nobjs == 0) return true;
    Obj *small[64], **objs = g->nobjs <= 64 ? small : mem_alloc(sizeof(Obj *) * (size_t)g->nobjs);
    int nset = 0;
    bool ok = true;
    for (int i = 0; i < g->nobjs; i++) objs[i] = NULL;
    for (int i = 0; i < g->nguards && ok; i++) {
        const Guard *gd = &g->guards[i];
        if (gd->obj < 0 || (gd->kind != G_LIST && gd->kind != G_DICT)) continue;
        Obj *o = vals[gd->input].as.o;
        if (!objs[gd->obj]) objs[gd->obj] = o, nset++;
        else ok = objs[gd->obj] == o;
    }
    Obj *sorted_small[64], **sorted = nset <= 64 ? sorted_small : mem_alloc(sizeof(Obj *) * (size_t)nset);
    int k = 0;
    for (int i = 0; i < g->nobjs && ok; i++)
        if (objs[i]) sorted[k++] = objs[i];
    if (ok) qsort(sorted, (size_t)k, sizeof(Obj *), cmp_ptr);
    for (int i = 1; i < k && ok; i++) ok = sorted[i] != sorted[i - 1];
    if (sorted != sorted_small) mem_free(sorted);
    if (objs != small) mem_free(objs);
    if (!ok && why) snprintf(why, n, "the lists and dicts the code reads are shared between its names differently");
    return ok;
}

/* *stop (when not NULL): whether the guard that failed is a range stop's. */
static bool guards_pass(Graph *g, Value *vals, char *why, size_t n, bool *stop) {
    for (int i = 0; i < g->nguards; i++)
        if (guard_check(g, &g->guards[i], vals[g->guards[i].input], true, why, n)) {
            if (stop) *stop = g->guards[i].loop_stop;
            return false;
        }
    return objs_shared_as_compiled(g, vals, why, n);
}

/* ---------- running a graph ---------- */

static VmRegs *regs_new(Graph *g) {
    VmRegs *r = mem_calloc(1, sizeof *r);
    r->num = mem_calloc((size_t)g->nregs + 1, sizeof(double));
    r->ten = mem_calloc((size_t)g->nregs + 1, sizeof(Tensor *));
    r->val = mem_calloc((size_t)g->nregs + 1, sizeof(Value));   /* all NIL */
    r->objs = mem_calloc((size_t)g->nobjs + 1, sizeof(Obj *));
    r->slots = mem_calloc((size_t)g->nslots + 1, sizeof(Tensor *));
    r->slot_owner = mem_alloc(sizeof(int) * (size_t)(g->nslots + 1));
    for (int i = 0; i < g->nslots; i++) r->slot_owner[i] = -1;
    r->stacks = mem_calloc((size_t)g->nstacks + 1, sizeof(VmStack));
    r->spare = mem_calloc((size_t)g->nregs + 1, sizeof(Tensor *));
    r->scratch = mem_calloc(1, sizeof *r->scratch);
    return r;
}

static void write_output(Env *e, VmRegs *r, Output *o, Value v) {
    Value *slot;
    switch (o->kind) {
    case SRC_LOCAL: slot = &e->f->slots[o->slot]; break;
    case SRC_CELL: slot = &((ObjCell *)e->f->slots[o->slot].as.o)->v; break;
    case SRC_UPVAL: slot = &(e->fn ? e->fn : e->f->closure)->upvals[o->slot]->v; break;
    case SRC_GLOBAL: slot = &o->mod->g.vals[o->slot]; break;
    case SRC_CELLPTR: slot = &o->cell->v; break;
    default: val_release(v); return;
    }
    Value old = *slot;
    *slot = v;
    if (r) vm_keep_spare(r, &o->val, old);
    else val_release(old);
}

/* A closure made in static code leaves it with this call's cells (the frame's now), not
 * those of the call that compiled the graph: rebound before the outputs are materialised. */
static void rebind_cells(Env *e, Opnd *o) {
    if (o->kind == OPND_CLOSURE) {
        for (int i = 0; o->csrc && i < o->n; i++) {
            ObjCell *cell = o->cells[i];
            if (o->csrc[i].kind == SRC_CELL) cell = (ObjCell *)e->f->slots[o->csrc[i].slot].as.o;
            else if (o->csrc[i].kind == SRC_UPVAL) cell = (e->fn ? e->fn : e->f->closure)->upvals[o->csrc[i].slot];
            if (cell == o->cells[i]) continue;
            cell->h.rc++;
            val_release(OBJ_VAL(VAL_CELL, o->cells[i]));
            o->cells[i] = cell;
        }
        return;
    }
    if (o->kind == OPND_LIST || o->kind == OPND_DICT)
        for (int i = 0; i < o->n; i++) rebind_cells(e, &o->items[i]);
}

/* Runs g; writes its outputs; returns the static fn result (or NIL_VAL), ERR_VAL on error. */
static Value run_graph(Interp *I, Graph *g, Env *e, Value *vals, bool quiet) {
    bool own = !g->busy;
    if (own && !g->rf) g->rf = regs_new(g);
    VmRegs *rp = own ? g->rf : regs_new(g);
    VmRegs r = *rp;
    g->busy = true;
    guards_bind(g, vals, &r);
    r.quiet = quiet;
    state(I)->last = g;
    Value result = NIL_VAL;
    int bars = I->nbars;   /* progress bars its loops start (vm/compile/cprogress.c) */
    if (vm_exec(I, g, &r) == 0) {
        /* materialise every output before writing any: outputs may read each other's inputs */
        Value *outs = mem_alloc(sizeof(Value) * (size_t)(g->noutputs + 1));
        for (int i = 0; i < g->noutputs; i++) rebind_cells(e, &g->outputs[i].val);
        if (g->has_result) rebind_cells(e, &g->result);
        int made = 0;
        for (; made < g->noutputs; made++) {
            outs[made] = vm_operand(I, g, &r, &g->outputs[made].val);
            if (IS_ERR(outs[made])) break;
        }
        if (made == g->noutputs) {
            for (int i = 0; i < g->noutputs; i++) write_output(e, &r, &g->outputs[i], outs[i]);
            if (g->has_result) result = vm_operand(I, g, &r, &g->result);
        } else {
            for (int i = 0; i < made; i++) val_release(outs[i]);
            result = ERR_VAL;
        }
        mem_free(outs);
    } else {
        result = ERR_VAL;
        /* a loop the error left ends its bar, as eagerly (its line before the error's report) */
        while (I->nbars > bars) progress_end(I, &I->bars[--I->nbars]);
    }
    guards_unbind(g, &r);
    vm_regs_clear_vals(&r, g);
    if (own) {
        g->busy = false;
        warm_touch(state(I), g);
    } else vm_regs_free(rp, g);
    return result;
}

/* ---------- the cache ---------- */

static void explain(Interp *I, SrcLoc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void explain(Interp *I, SrcLoc loc, const char *fmt, ...) {
    if (!state(I)->explain) return;
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    interp_diag_at(I, "explain: ", I->cur_src, loc, "", msg);
}

/* Static code the compiler cannot handle runs eagerly: the program still gives its results,
 * only slower, so the user hears of it once (the cache remembers the block as eager-only),
 * located at the block or static fn, with the compiler's reason. Not for --no-static or
 * `:static off`, which ask for eager code (the caller never gets here then). */
static void warn_eager(Interp *I, SrcLoc loc, const char *what, const char *reason) {
    StaticState *s = state(I);
    if (s->explain) {   /* its line says the same */
        explain(I, loc, "%s runs eagerly: %s", what, reason);
        return;
    }
    if (!s->warn) return;
    char head[200];
    snprintf(head, sizeof head, "warning: %s runs eagerly: ", what);
    interp_diag_at(I, "", I->cur_src, loc, head, reason);
}

/* The fetched inputs are borrowed Values: a graph keeps one buffer for them; a nested run
 * of the same graph gets its own. */
static Value *input_buffer(Graph *g) {
    if (!g->busy) {
        if (!g->vals) g->vals = mem_alloc(sizeof(Value) * (size_t)(g->ninputs + 1));
        return g->vals;
    }
    return mem_alloc(sizeof(Value) * (size_t)(g->ninputs + 1));
}

static void release_input_buffer(Graph *g, Value *vals) {
    if (vals != g->vals) mem_free(vals);
}

/* The device a graph for these inputs is compiled for: the first input tensor not on the
 * CPU's, else the default device (where the code's literals and creation ops go). A graph
 * for another device does not apply, as one for another shape does not. */
static Device inputs_device(Graph *g, Value *vals) {
    for (int i = 0; i < g->ninputs; i++)
        if (vals[i].type == VAL_TENSOR && vals[i].as.t->device != DEV_CPU) return vals[i].as.t->device;
    return ops_ctx()->default_device;
}

/* A new graph's device. Graphs for the GPU run on exec_dev.c; TSL_VM_DEVICE=1 sends every
 * graph there, so its logic is tested on the CPU (tests/run.sh). */
static void set_device(Graph *g, Value *vals) {
    const char *forced = getenv("TSL_VM_DEVICE");   /* read per compile: no shared state between threads */
    g->device = inputs_device(g, vals);
    g->device_vm = g->device != DEV_CPU || (forced && !strcmp(forced, "1"));
}

/* Finds (or compiles) the graph for the current inputs. NULL with *eager when the code must
 * run eagerly; NULL otherwise means an error is pending. *vals_out: fetched inputs. */
static Graph *lookup(Interp *I, Cache *c, Env *e, Node *blk, SrcLoc loc, const char *what, Value **vals_out,
                     bool *eager) {
    *eager = false;
    char why[512] = "";
    bool stop_missed = false;
    for (int i = 0; i < c->n; i++) {
        Graph *g = c->graphs[i];
        Value *vals = input_buffer(g);
        fetch_inputs(g, e, vals);
        Device d = inputs_device(g, vals);
        if (d != g->device) {
            if (i == 0) snprintf(why, sizeof why, "the code works on device '%s' now, was on '%s'", device_name(d),
                                 device_name(g->device));
        } else if (g->flush_denormal != pool_flush_denormal()) {
            if (i == 0) snprintf(why, sizeof why, "subnormal flushing (set_flush_denormal) is %s now",
                                 g->flush_denormal ? "off" : "on");
        } else if (guards_pass(g, vals, i == 0 ? why : NULL, sizeof why, i == 0 ? &stop_missed : NULL)) {
            if (i > 0) {   /* most recently used first */
                memmove(c->graphs + 1, c->graphs, sizeof(Graph *) * (size_t)i);
                c->graphs[0] = g;
            }
            *vals_out = vals;
            return g;
        }
        release_input_buffer(g, vals);
    }
    double t0 = now_ms();
    Graph *g = NULL;
    char reason[512] = "";
    /* A range stop whose guard failed twice changes from run to run (`for k in range(1, 50)
     * { static { for i in range(k) {...} } }`): guarding it again would recompile at every
     * run, so the compiler is told not to (docs/static.md). */
    c->stop_misses += stop_missed;
    I->compile_fixed_stops = c->stop_misses >= 2;
    CompileStatus st = e->fn ? compile_fn(I, e->fn, e->params, NULL, &g, reason, sizeof reason)
                             : compile_block(I, e->f, blk, &g, reason, sizeof reason);
    I->compile_fixed_stops = false;
    if (st == COMPILE_UNSUPPORTED) {
        c->eager_only = true;
        warn_eager(I, loc, what, reason);
        *eager = true;
        return NULL;
    }
    if (st == COMPILE_ERROR && !I->err_final) {
        /* an error the compiler met is the program's only when the code before it has run:
         * eagerly, `print("a"); y = x + ones([5])` prints, pushes and draws first, then fails
         * at the same place with the same message. So this run is eager (not the block's
         * later runs, whose inputs may compile). Interrupts and --timeout stay errors. */
        explain(I, loc, "%s met an error while compiling; this run of it is eager: %s:%d:%d: %s", what,
                I->err_src ? I->err_src->name : "?", I->err_loc.line, I->err_loc.col, I->err_msg);
        interp_clear_error(I);
        *eager = true;
        return NULL;
    }
    if (st == COMPILE_ERROR || st == COMPILE_REFUSED) return NULL;   /* the program's error */
    char opt_msg[1024];
    if (opt_env_problem(opt_msg, sizeof opt_msg)) interp_write_diag(I, opt_msg, strlen(opt_msg));
    /* the device first: a graph the device executor runs gets no row groups (opt.h) */
    Value *vals = input_buffer(g);
    fetch_inputs(g, e, vals);
    set_device(g, vals);
    g->plain_groups = g->device_vm;
    opt_run(g);
    bool rt = graph_mark_runtime(g);   /* Ins.rt: after the optimizer, which rewrites instructions */
    g->compile_ms = now_ms() - t0;
    int ninputs, nguards;
    graph_count_guards(g, 0, &ninputs, &nguards);
    if (c->n == 0)
        explain(I, loc, "compiled %s in %.2f ms (%d instructions, %d before optimisation, %d fused groups, %d inputs, "
                "%d guards)", what, g->compile_ms, g->ncode, g->ops_before, g->fused_groups, ninputs, nguards);
    else
        explain(I, loc, "recompiled %s in %.2f ms: %s", what, g->compile_ms, why);
    if (rt) explain(I, loc, "run-time shapes: %s", g->rt_values ? g->rt_values : "temporaries only");
    if (c->n == CACHE_MAX) {
        warm_forget(state(I), c->graphs[c->n - 1]);
        graph_free(c->graphs[--c->n]);
    }
    memmove(c->graphs + 1, c->graphs, sizeof(Graph *) * (size_t)c->n);
    c->graphs[0] = g;
    c->n++;
    g->flush_denormal = pool_flush_denormal();
    *vals_out = vals;
    return g;
}

/* ---------- --verify-static ---------- */

/* Two closures behave alike when they run the same code over the same captured
 * variables: static code makes its own closure object where eager code makes another. */
static bool same_closure(const ObjClosure *a, const ObjClosure *b) {
    if (a == b) return true;
    if (a->proto != b->proto || a->module != b->module) return false;
    for (int i = 0; i < a->proto->nupvals; i++)
        if (a->upvals[i] != b->upvals[i]) return false;
    return true;
}

static bool containers_differ(Value a, Value b, char *where, size_t n) {
    if (a.type == VAL_LIST) {
        if (AS_LIST(a)->len != AS_LIST(b)->len) { snprintf(where, n, "list lengths differ"); return true; }
        for (int i = 0; i < AS_LIST(a)->len; i++)
            if (static_values_differ(AS_LIST(a)->items[i], AS_LIST(b)->items[i], where, n)) return true;
        return false;
    }
    if (AS_DICT(a)->len != AS_DICT(b)->len) { snprintf(where, n, "dict sizes differ"); return true; }
    for (int i = 0; i < AS_DICT(a)->len; i++)
        if (static_values_differ(AS_DICT(a)->entries[i].val, AS_DICT(b)->entries[i].val, where, n)) return true;
    return false;
}

/* Reports the first place a and b differ (bitwise), or returns false. */
bool static_values_differ(Value a, Value b, char *where, size_t n) {
    if (a.type != b.type) {
        snprintf(where, n, "eager gives a %s, static a %s", val_type_name(a), val_type_name(b));
        return true;
    }
    switch (a.type) {
    case VAL_NUM:
        if (memcmp(&a.as.n, &b.as.n, sizeof(double)) == 0) return false;
        snprintf(where, n, "eager %.17g, static %.17g", a.as.n, b.as.n);
        return true;
    case VAL_TENSOR: {
        Tensor *x = a.as.t, *y = b.as.t;
        Shape sx, sy;
        shape_of(x, &sx);
        shape_of(y, &sy);
        char b1[600], b2[600];
        if (x->dtype != y->dtype || !shape_equal(&sx, &sy)) {
            snprintf(where, n, "eager %s %s, static %s %s", dtype_name(x->dtype), shape_str(&sx, b1, sizeof b1),
                     dtype_name(y->dtype), shape_str(&sy, b2, sizeof b2));
            return true;
        }
        /* compared on the host: a GPU tensor is copied first */
        Tensor *hx = tensor_host(x), *hy = hx ? tensor_host(y) : NULL;
        bool differ = !hx || !hy;
        if (differ) snprintf(where, n, "%s", op_error());
        size_t esz = dtype_size(x->dtype);
        for (int64_t i = 0; !differ && i < x->size; i++)
            if (memcmp((char *)hx->data + i * (int64_t)esz, (char *)hy->data + i * (int64_t)esz, esz)) {
                snprintf(where, n, "element %lld: eager %.9g, static %.9g", (long long)i, tensor_get(hx, i), tensor_get(hy, i));
                differ = true;
            }
        tensor_release(hx);
        tensor_release(hy);
        return differ;
    }
    case VAL_LIST:
    case VAL_DICT: {
        /* the same container is bitwise the same; one met again inside itself (a cycle the
         * code made) is being compared further up already */
        if (a.as.o == b.as.o || (a.as.o->marks & OBJ_COMPARING)) return false;
        a.as.o->marks |= OBJ_COMPARING;
        bool differ = containers_differ(a, b, where, n);
        a.as.o->marks &= ~OBJ_COMPARING;
        return differ;
    }
    case VAL_FUNC:
        if (a.as.o == b.as.o) return false;   /* a built-in, or the one closure (s = t.mean) */
        if (a.as.o->kind == OBJ_CLOSURE && b.as.o->kind == OBJ_CLOSURE && same_closure(AS_CLOSURE(a), AS_CLOSURE(b)))
            return false;
        snprintf(where, n, "different functions");
        return true;
    case VAL_UNDEF:
        return false;
    default:
        if (val_equal(a, b)) return false;
        snprintf(where, n, "values differ");
        return true;
    }
}

/* Values of the graph's outputs as they are now (new references). */
static Value *read_outputs(Graph *g, Env *e) {
    Value *v = mem_alloc(sizeof(Value) * (size_t)(g->noutputs + 1));
    for (int i = 0; i < g->noutputs; i++) {
        Output *o = &g->outputs[i];
        Value x = UNDEF_VAL;
        switch (o->kind) {
        case SRC_LOCAL: x = e->f->slots[o->slot]; break;
        case SRC_CELL: x = ((ObjCell *)e->f->slots[o->slot].as.o)->v; break;
        case SRC_UPVAL: x = (e->fn ? e->fn : e->f->closure)->upvals[o->slot]->v; break;
        case SRC_GLOBAL: x = o->mod->g.vals[o->slot]; break;
        case SRC_CELLPTR: x = o->cell->v; break;
        default: break;
        }
        v[i] = val_retain(x);
    }
    return v;
}

static void release_all(Value *v, int n) {
    for (int i = 0; i < n; i++) val_release(v[i]);
    mem_free(v);
}

static Exec exec_eager(Interp *I, Frame *f, Node *blk);
Value interp_call_eager(Interp *I, ObjClosure *fn, Value *args, int nargs, CallArgs *kw);

/* Runs the block eagerly, then statically from the same state, and compares. */
static Exec verify_block(Interp *I, Frame *f, Node *n, Cache *c, Env *e) {
    Value *vals = NULL;
    bool eager;
    Graph *g = lookup(I, c, e, n->a, n->loc, "static block", &vals, &eager);
    if (!g) return eager ? exec_eager(I, f, n->a) : EX_ERR;
    uint64_t seed, ctr;
    rng_get_state(&seed, &ctr);
    Value *before = read_outputs(g, e);
    int nc;
    Saved *orig = saved_containers(g, vals, &nc), *eager_c = NULL;
    saved_save(orig, nc, true);
    bool no_static = I->no_static;
    I->no_static = true;   /* the reference run is eager all the way down */
    Exec st = exec_eager(I, f, n->a);
    I->no_static = no_static;
    if (st != EX_OK) {
        release_all(before, g->noutputs);
        saved_free(orig, nc);
        release_input_buffer(g, vals);
        return st;
    }
    Value *eager_vals = read_outputs(g, e);
    eager_c = saved_containers(g, vals, &nc);
    saved_save(eager_c, nc, true);
    saved_restore(orig, nc);
    uint64_t seed_e, ctr_e;
    rng_get_state(&seed_e, &ctr_e);
    for (int i = 0; i < g->noutputs; i++) write_output(e, NULL, &g->outputs[i], val_retain(before[i]));
    rng_set_state(seed, ctr);
    fetch_inputs(g, e, vals);
    Value r = run_graph(I, g, e, vals, true);
    release_input_buffer(g, vals);
    release_all(before, g->noutputs);
    saved_free(orig, nc);
    if (IS_ERR(r)) {
        release_all(eager_vals, g->noutputs);
        saved_free(eager_c, nc);
        return EX_ERR;
    }
    Value *static_vals = read_outputs(g, e);
    uint64_t seed_s, ctr_s;
    rng_get_state(&seed_s, &ctr_s);
    Exec result = EX_OK;
    char where[700];
    for (int i = 0; i < g->noutputs; i++)
        if (static_values_differ(eager_vals[i], static_vals[i], where, sizeof where)) {
            interp_error_atk(I, ERRK_VALUE, n->loc, "verify-static: variable '%s' (line %d) differs: %s", g->outputs[i].name,
                            n->loc.line, where);
            result = EX_ERR;
            break;
        }
    for (int k = 0; k < nc && result == EX_OK; k++)
        if (saved_differs(&eager_c[k], where, sizeof where)) {
            interp_error_atk(I, ERRK_VALUE, n->loc, "verify-static: a container changed by the block (line %d) differs: %s", n->loc.line,
                            where);
            result = EX_ERR;
        }
    saved_free(eager_c, nc);
    if (result == EX_OK && (seed_s != seed_e || ctr_s != ctr_e)) {
        interp_error_atk(I, ERRK_VALUE, n->loc, "verify-static: the random generator ends in a different state");
        result = EX_ERR;
    }
    release_all(eager_vals, g->noutputs);
    release_all(static_vals, g->noutputs);
    return result;
}

/* --verify-static for a static fn: eagerly, then compiled from the same state (arguments,
 * the containers it stores into, the generator); results and stores must agree. */
static Value verify_fn(Interp *I, Graph *g, Env *e, ObjClosure *fn, Value *args, int nargs, CallArgs *kw, Value *vals) {
    uint64_t seed, ctr;
    rng_get_state(&seed, &ctr);
    int nc;
    Saved *orig = saved_containers(g, vals, &nc);
    saved_save(orig, nc, true);
    /* what the fn assigns outside itself (a closure's captured counter) is put back too */
    Value *before = read_outputs(g, e);
    /* the reference run is eager all the way down: nested static code must not reuse (or
     * evict) the graph being verified */
    bool no_static = I->no_static;
    I->no_static = true;
    Value re = interp_call_eager(I, fn, args, nargs, kw);
    I->no_static = no_static;
    if (IS_ERR(re)) {
        release_all(before, g->noutputs);
        saved_free(orig, nc);
        release_input_buffer(g, vals);
        return re;
    }
    Value *eager_vals = read_outputs(g, e);
    for (int i = 0; i < g->noutputs; i++) write_output(e, NULL, &g->outputs[i], val_retain(before[i]));
    release_all(before, g->noutputs);
    Saved *eager_c = saved_containers(g, vals, &nc);
    saved_save(eager_c, nc, true);
    saved_restore(orig, nc);
    saved_free(orig, nc);
    uint64_t seed_e, ctr_e;
    rng_get_state(&seed_e, &ctr_e);
    rng_set_state(seed, ctr);
    fetch_inputs(g, e, vals);
    Value rs = run_graph(I, g, e, vals, true);   /* the eager run printed already */
    release_input_buffer(g, vals);
    char where[700];
    const char *name = fn->proto->name[0] ? fn->proto->name : "<fn>";
    Source *saved = I->cur_src;
    I->cur_src = closure_src(fn);
    if (!IS_ERR(rs) && static_values_differ(re, rs, where, sizeof where)) {
        interp_error_atk(I, ERRK_VALUE, fn->proto->loc, "verify-static: the result of %s() differs: %s", name, where);
        val_release(rs);
        rs = ERR_VAL;
    }
    Value *static_vals = IS_ERR(rs) ? NULL : read_outputs(g, e);
    for (int i = 0; static_vals && i < g->noutputs && !IS_ERR(rs); i++)
        if (static_values_differ(eager_vals[i], static_vals[i], where, sizeof where)) {
            interp_error_atk(I, ERRK_VALUE, fn->proto->loc, "verify-static: variable '%s' %s() assigns differs: %s",
                             g->outputs[i].name, name, where);
            val_release(rs);
            rs = ERR_VAL;
        }
    if (static_vals) release_all(static_vals, g->noutputs);
    release_all(eager_vals, g->noutputs);
    for (int k = 0; k < nc && !IS_ERR(rs); k++)
        if (saved_differs(&eager_c[k], where, sizeof where)) {
            interp_error_atk(I, ERRK_VALUE, fn->proto->loc, "verify-static: a container %s() changed differs: %s", name, where);
            val_release(rs);
            rs = ERR_VAL;
        }
    uint64_t seed_s, ctr_s;
    rng_get_state(&seed_s, &ctr_s);
    if (!IS_ERR(rs) && (seed_s != seed_e || ctr_s != ctr_e)) {
        interp_error_atk(I, ERRK_VALUE, fn->proto->loc, "verify-static: %s() leaves the random generator in a different state", name);
        val_release(rs);
        rs = ERR_VAL;
    }
    I->cur_src = saved;
    saved_free(eager_c, nc);
    val_release(re);
    return rs;
}

/* ---------- a run that fails partway ---------- */

/* Eagerly, a block that raises has done what came before the error: assignments, stores,
 * pushes and draws (spec sections 6 and 12). A graph writes its variables only at its end. So a
 * failed run is undone (the containers it changed, the generator) and the block runs again
 * eagerly, quietly (its prints and bars showed already), to the same error. Only where the
 * program sees that state: inside a try (a host's tsl_call counts as one), or at the REPL,
 * which keeps the variables; elsewhere the error ends the program, and running again would
 * only delay its report. */
typedef struct {
    bool on;
    uint64_t seed, ctr;
    Saved *c;
    int nc;
} Undo;

static void undo_begin(Interp *I, Graph *g, Value *vals, Undo *u) {
    *u = (Undo){ I->ntry > 0 || I->repl, 0, 0, NULL, 0 };
    if (!u->on) return;
    rng_get_state(&u->seed, &u->ctr);
    u->c = saved_containers(g, vals, &u->nc);
    saved_save(u->c, u->nc, false);
}

/* After the run: true when it failed and the block is to run again (the state put back). An
 * error no try catches (Ctrl-C, --timeout, exit) is not run again. */
static bool undo_end(Interp *I, Undo *u, bool failed) {
    bool again = u->on && failed && !I->err_final && !I->exiting;
    if (again) {
        saved_restore(u->c, u->nc);
        rng_set_state(u->seed, u->ctr);
    }
    saved_free(u->c, u->nc);
    return again;
}

/* The failed run's error, kept while the block runs again, and the settings the rerun changes. */
typedef struct {
    bool has_loc, interrupted;
    ErrKind kind;
    char msg[sizeof ((Interp *)0)->err_msg];
    SrcLoc loc;
    Source *src;
    Traceback tb;
    bool no_static, quiet;
} Pending;

static void rerun_begin(Interp *I, Pending *p) {
    *p = (Pending){ I->err_has_loc, I->interrupted, I->err_kind, "", I->err_loc, I->err_src, I->traceback, I->no_static, I->quiet };
    memcpy(p->msg, I->err_msg, sizeof p->msg);
    interp_clear_error(I);
    I->no_static = I->quiet = true;   /* eager all the way down, as --verify-static's reference */
}

/* ok: the rerun did not fail. Then static and eager code disagree, a bug: the first error stands. */
static void rerun_end(Interp *I, const Pending *p, bool ok) {
    I->no_static = p->no_static;
    I->quiet = p->quiet;
    if (!ok) return;
    I->err_set = true;
    I->err_has_loc = p->has_loc;
    I->interrupted = p->interrupted;
    I->err_kind = p->kind;
    memcpy(I->err_msg, p->msg, sizeof p->msg);
    I->err_loc = p->loc;
    I->err_src = p->src;
    I->traceback = p->tb;
}

static Exec rerun_block(Interp *I, Frame *f, Node *blk) {
    Pending p;
    rerun_begin(I, &p);
    Exec st = exec_eager(I, f, blk);
    rerun_end(I, &p, st != EX_ERR);
    return EX_ERR;
}

static Value rerun_fn(Interp *I, ObjClosure *fn, Value *args, int nargs, CallArgs *kw) {
    Pending p;
    rerun_begin(I, &p);
    Value r = interp_call_eager(I, fn, args, nargs, kw);
    rerun_end(I, &p, !IS_ERR(r));
    if (!IS_ERR(r)) val_release(r);
    return ERR_VAL;
}

/* ---------- entry points ---------- */

Exec interp_exec_block_eager(Interp *I, Frame *f, Node *blk);

static Exec exec_eager(Interp *I, Frame *f, Node *blk) { return interp_exec_block_eager(I, f, blk); }

static Exec static_exec_block(Interp *I, Frame *f, Node *n) {
    if (I->no_static) return exec_eager(I, f, n->a);
    Cache *c = n->vm_cache;
    if (!c) c = n->vm_cache = cache_new(I);
    if (c->eager_only) return exec_eager(I, f, n->a);
    Env e = { f, NULL, NULL };
    if (I->verify_static) return verify_block(I, f, n, c, &e);
    Value *vals = NULL;
    bool eager;
    Graph *g = lookup(I, c, &e, n->a, n->loc, "static block", &vals, &eager);
    if (!g) return eager ? exec_eager(I, f, n->a) : EX_ERR;
    Undo u;
    undo_begin(I, g, vals, &u);
    Value r = run_graph(I, g, &e, vals, false);
    release_input_buffer(g, vals);
    if (undo_end(I, &u, IS_ERR(r))) return rerun_block(I, f, n->a);
    return IS_ERR(r) ? EX_ERR : EX_OK;
}

static Value static_call(Interp *I, ObjClosure *fn, Value *args, int nargs, CallArgs *kw) {
    FnProto *p = fn->proto;
    const char *fname = p->name[0] ? p->name : "<fn>";
    Cache *c = p->vm_cache;
    if (!c) c = p->vm_cache = cache_new(I);
    if (I->no_static || c->eager_only) return interp_call_eager(I, fn, args, nargs, kw);
    if (nargs > p->nparams)
        return interp_errork(I, ERRK_TYPE, "%s() takes %d argument%s but %d were given", fname, p->nparams, p->nparams == 1 ? "" : "s", nargs);
    Value *params = mem_alloc(sizeof(Value) * (size_t)(p->nparams + 1));
    for (int i = 0; i < p->nparams; i++) params[i] = i < nargs ? args[i] : UNDEF_VAL;
    for (int k = 0; kw && k < kw->nkw; k++) {
        int i = 0;
        while (i < p->nparams && strcmp(p->params[i], kw->kwnames[k])) i++;
        if (i == p->nparams || params[i].type != VAL_UNDEF) {
            mem_free(params);
            char hint[SUGGEST_MAX_NAME + 24];
            return i == p->nparams ? interp_errork(I, ERRK_TYPE, "%s() got an unknown keyword argument '%s'%s", fname, kw->kwnames[k],
                                                   interp_param_hint(p, kw->kwnames[k], hint, sizeof hint))
                                   : interp_errork(I, ERRK_TYPE, "%s() got multiple values for parameter '%s'", fname, p->params[i]);
        }
        params[i] = kw->kw[k];
    }
    /* a missing argument is the caller's mistake: report it here, where the call attaches its
     * location, as the eager call does (the compiler would point at the definition) */
    for (int i = 0; i < p->nparams; i++)
        if (params[i].type == VAL_UNDEF && !p->defaults[i]) {
            mem_free(params);
            return interp_errork(I, ERRK_TYPE, "%s() missing argument '%s'", fname, p->params[i]);
        }
    Env e = { NULL, fn, params };
    Value *vals = NULL;
    bool eager;
    Source *saved = I->cur_src;
    I->cur_src = closure_src(fn);
    Graph *g = lookup(I, c, &e, NULL, p->loc, "static fn", &vals, &eager);
    I->cur_src = saved;
    Value r;
    if (!g) r = eager ? interp_call_eager(I, fn, args, nargs, kw) : ERR_VAL;
    else if (I->verify_static) r = verify_fn(I, g, &e, fn, args, nargs, kw, vals);
    else {
        Undo u;
        undo_begin(I, g, vals, &u);
        r = run_graph(I, g, &e, vals, false);
        release_input_buffer(g, vals);
        if (undo_end(I, &u, IS_ERR(r))) r = rerun_fn(I, fn, args, nargs, kw);
    }
    mem_free(params);
    return r;
}

Graph *static_last_graph(Interp *I) { return I->vm ? state(I)->last : NULL; }

int static_cache_count(const void *cache) { return cache ? ((const Cache *)cache)->n : 0; }

Value static_dis_text(Interp *I, Value fn, bool dot, StrBuf *out) {
    Graph *g = NULL;
    const char *title = "last static block";
    if (fn.type == VAL_FUNC && fn.as.o->kind == OBJ_CLOSURE) {
        FnProto *p = AS_CLOSURE(fn)->proto;
        Cache *c = p->vm_cache;
        if (!p->is_static) return interp_error(I, "dis: %s is not a static fn", p->name[0] ? p->name : "<fn>");
        if (!c || c->n == 0) {
            if (c && c->eager_only) return interp_error(I, "dis: %s runs eagerly (TSL_EXPLAIN=1 says why)", p->name);
            return interp_error(I, "dis: %s has not been compiled yet: call it first", p->name[0] ? p->name : "<fn>");
        }
        g = c->graphs[0];
        title = p->name[0] ? p->name : "<fn>";
    } else if ((g = (Graph *)model_loaded_graph(fn, &title))) {
        /* a graph load() read: its program as the file holds it */
    } else if (fn.type == VAL_NIL || fn.type == VAL_UNDEF) {
        g = I->vm ? state(I)->last : NULL;
        if (!g) return interp_error(I, "dis: no static code has run yet");
    } else {
        return interp_error(I, "dis() takes a static fn or a loaded graph");
    }
    /* the disassembler writes to a FILE: here a memory one, so the listing is a string */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return interp_errork(I, ERRK_MEMORY, "dis: out of memory");
    if (dot) dis_dot(f, g, title);
    else dis_graph(f, g, title);
    bool ok = fclose(f) == 0;
    if (ok) sb_putn(out, text, len);
    free(text);   /* open_memstream's buffer comes from malloc */
    return ok ? NIL_VAL : interp_errork(I, ERRK_MEMORY, "dis: out of memory");
}

static Value static_dis(Interp *I, Value fn, bool dot) {
    StrBuf b = { 0 };
    sb_putn(&b, "", 0);
    Value r = static_dis_text(I, fn, dot, &b);
    if (!IS_ERR(r) && !interp_write_out(I, b.s, b.len)) r = ERR_VAL;
    if (!IS_ERR(r) && !I->write_out) fflush(stdout);   /* as print's: the listing shows before what follows on stderr */
    sb_free(&b);
    return r;
}

/* Whether g indexes with a bool mask or slice bounds read at run time (vm/compile/cshape.c):
 * a graph file's index items are fixed (format.md). */
static bool runtime_indexing(const Graph *g) {
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        if (in->op != I_INDEX && in->op != I_INDEX_SET) continue;
        if (in->nargs > in->nidx) return true;
        for (int k = 0; k < in->nidx; k++)
            if (in->idx[k].kind == IDX_TENSOR && in->args[k] >= 0 && g->regs[in->args[k]].dtype == DT_BOOL) return true;
    }
    return false;
}

/* export(): fn compiled for params as a call would compile it, outside every cache, and
 * its inputs fetched (borrowed) into *vals_out (mem_free it). */
CompileStatus static_compile_export(Interp *I, ObjClosure *fn, Value *params, const uint32_t *dyn, Graph **out,
                                    Value **vals_out, char *why, size_t whylen) {
    Source *saved = I->cur_src;
    I->cur_src = closure_src(fn);
    CompileStatus st = compile_fn(I, fn, params, dyn, out, why, whylen);
    I->cur_src = saved;
    if (st != COMPILE_OK) return st;
    (*out)->plain_groups = true;   /* a graph file's fused groups are elementwise (opt.h) */
    opt_run(*out);
    /* a file holds run-time dimensions (format version 4), but its index items are fixed */
    if (runtime_indexing(*out)) {
        snprintf(why, whylen, "it indexes with a bool mask or with slice bounds computed at run time%s%s%s, "
                 "which a graph file cannot hold yet", (*out)->rt_values ? " (" : "",
                 (*out)->rt_values ? (*out)->rt_values : "", (*out)->rt_values ? ")" : "");
        graph_free(*out);
        *out = NULL;
        return COMPILE_UNSUPPORTED;
    }
    Env e = { NULL, fn, params };
    *vals_out = mem_alloc(sizeof(Value) * (size_t)((*out)->ninputs + 1));
    fetch_inputs(*out, &e, *vals_out);
    return COMPILE_OK;
}

/* A loaded graph's inputs: its arguments and their parts (no frame, no closure). */
void static_fetch_args(const Graph *g, Value *params, Value *vals) {
    Env e = { NULL, NULL, params };
    fetch_inputs((Graph *)g, &e, vals);
}

VmRegs *vm_regs_new(const Graph *g) { return regs_new((Graph *)g); }

/* What the interpreter reaches static code through (lang/interp.h). */
static const StaticHooks hooks = { static_exec_block, static_call, static_dis, model_builtin_export, model_builtin_load,
                                   model_loaded_signature, static_free_all };
void vm_register(void) { interp_set_static_hooks(&hooks); }
