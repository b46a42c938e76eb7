/* model.c - exported graphs as values: export(), load(), and the Model/ModelSession API
 * (vm/file/model.h) that the C library builds on.
 *
 * A loaded graph runs on the same VM as a static fn: its arguments are checked against the
 * guards it was exported with (a wrong shape or dtype names the argument), the registers of
 * captured values are bound to their constants, and vm_exec runs the code.
 *
 * A graph load() made runs where its tensor arguments are (the first one not on the CPU,
 * else the default device), as a static graph does: on the GPU through the device executor
 * (Graph.device_vm), with a copy of its constants made on that device at its first call
 * there and kept (the weights it binds; literals go to the default device, as in a static
 * graph). TSL_VM_DEVICE=1 sends it through exec_dev.c on the CPU too, as it does
 * every static graph. The C API's sessions run on the CPU. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model.h"
#include "graphfile.h"
#include "vm.h"
#include "guard.h"
#include "ctx.h"
#include "autograd.h"
#include "builtins.h"
#include "num.h"

struct Model {
    GraphFile *gf;
    Source src;           /* error locations: "MODEL:LINE:COL" (lines of the exported source) */
    int *leaves;          /* guards of the flattened inputs, in argument order */
    int nleaves;
    const Opnd **outs;    /* number and tensor leaves of the result, in order */
    int nouts;
    char *signature;      /* model_signature's text, made at load (a Model is never written after) */
};

struct ModelSession {
    const Model *m;
    Interp *I;            /* this session's state: errors, limits, RNG, memory */
    VmRegs *r;
};

/* ---------- the signature ---------- */

/* The path of input i from its argument down: argument index, then the position at each level. */
static int input_path(const Graph *g, int i, int *path) {
    int n = 0;
    for (; g->inputs[i].kind == SRC_LEAF; i = g->inputs[i].slot) path[n++] = g->inputs[i].path;
    path[n++] = g->inputs[i].slot;
    for (int a = 0, b = n - 1; a < b; a++, b--) {
        int t = path[a];
        path[a] = path[b];
        path[b] = t;
    }
    return n;
}

/* Whether input path x comes before y: argument first, then the position at each level. */
static bool path_before(const int *x, int nx, const int *y, int ny) {
    for (int k = 0; k < nx && k < ny; k++)
        if (x[k] != y[k]) return x[k] < y[k];
    return nx < ny;
}

/* Orders the leaf guards by their input's path (an insertion sort: signatures are small, and
 * the comparison needs the graph, which qsort cannot pass without a global). */
static void sort_leaves(const Graph *g, int *leaves, int n) {
    int *x = mem_alloc(sizeof(int) * 2 * (size_t)(g->ninputs + 1)), *y = x + g->ninputs + 1;
    for (int i = 1; i < n; i++) {
        int v = leaves[i], j = i;
        int nx = input_path(g, g->guards[v].input, x);
        while (j > 0) {
            int ny = input_path(g, g->guards[leaves[j - 1]].input, y);
            if (!path_before(x, nx, y, ny)) break;
            leaves[j] = leaves[j - 1];
            j--;
        }
        leaves[j] = v;
    }
    mem_free(x);
}

static void collect_outs(Model *m, const Opnd *o) {
    if (o->kind == OPND_NUM || o->kind == OPND_TENSOR) {
        m->outs = mem_realloc(m->outs, sizeof(Opnd *) * (size_t)(m->nouts + 1));
        m->outs[m->nouts++] = o;
    }
    if (o->kind == OPND_LIST || o->kind == OPND_DICT)
        for (int i = 0; i < o->n; i++) collect_outs(m, &o->items[i]);
}

/* "x: f32[2, 4]", "n: number": what an argument or a result must be. */
static void put_type(StrBuf *b, bool num, DType dt, const Shape *s) {
    char sh[600];
    if (num) sb_puts(b, "number");
    else sb_printf(b, "%s%s", dtype_name(dt), shape_str(s, sh, sizeof sh));
}

/* The function's name and parameters, then its flattened inputs and outputs, one a line. */
static char *signature_text(const Model *m) {
    const Graph *g = m->gf->g;
    StrBuf b = { 0 };
    sb_printf(&b, "%s(", m->gf->name);
    for (int p = 0; p < m->gf->nparams; p++) {
        const char *name = "_";   /* a parameter the graph never reads has no input */
        for (int i = 0; i < g->ninputs; i++)
            if (g->inputs[i].kind == SRC_ARG && g->inputs[i].slot == p && g->inputs[i].name) name = g->inputs[i].name;
        sb_printf(&b, "%s%s", p ? ", " : "", name);
    }
    sb_printf(&b, ")\n  a graph exported by export(): %d input%s, %d output%s\n", m->nleaves,
              m->nleaves == 1 ? "" : "s", m->nouts, m->nouts == 1 ? "" : "s");
    for (int i = 0; i < m->nleaves; i++) {
        const Guard *gd = &g->guards[m->leaves[i]];
        sb_printf(&b, "  input %d: %s: ", i + 1, g->inputs[gd->input].name ? g->inputs[gd->input].name : "?");
        put_type(&b, gd->kind != G_TENSOR, gd->dtype, &gd->shape);
        sb_puts(&b, "\n");
    }
    for (int i = 0; i < m->nouts; i++) {
        const RegInfo *ri = &g->regs[m->outs[i]->reg];
        sb_printf(&b, "  output %d: ", i + 1);
        put_type(&b, m->outs[i]->kind == OPND_NUM, ri->dtype, &ri->shape);
        sb_puts(&b, "\n");
    }
    return b.s;
}

const char *model_signature(const Model *m) { return m->signature; }

Model *model_from_graphfile(GraphFile *gf, const char *name) {
    Model *m = mem_calloc(1, sizeof *m);
    m->gf = gf;
    m->src.name = mem_strndup(name, strlen(name));
    m->src.text = mem_strndup("", 0);
    for (int i = 0; i < gf->g->ncode; i++) gf->g->code[i].src = &m->src;
    Graph *g = gf->g;
    m->leaves = mem_alloc(sizeof(int) * (size_t)(g->nguards + 1));
    for (int i = 0; i < g->nguards; i++)
        if (g->guards[i].reg >= 0) m->leaves[m->nleaves++] = i;
    sort_leaves(g, m->leaves, m->nleaves);
    if (g->has_result) collect_outs(m, &g->result);
    m->signature = signature_text(m);
    return m;
}

void model_free(Model *m) {
    if (!m) return;
    graphfile_free(m->gf);
    mem_free(m->src.name);
    mem_free(m->src.text);
    mem_free(m->leaves);
    mem_free(m->outs);
    mem_free(m->signature);
    mem_free(m);
}

Model *model_load_bytes(const void *data, size_t n, const char *name, char *err, size_t errlen) {
    Source tmp = { (char *)name, NULL, NULL, 0, 0, NULL };
    GraphFile *gf = graphfile_read(data, n, &tmp, true, err, errlen);
    return gf ? model_from_graphfile(gf, name) : NULL;
}

/* Through io_open_regular, as scripts, modules, load_npy, load_csv and read_text are read:
 * /dev/zero, a FIFO or a directory is refused before a byte is read, never read without
 * end or waited on. */
Model *model_load_file(const char *path, char *err, size_t errlen) {
    FILE *f = io_open_regular(path, NULL, 0);
    if (!f) {
        snprintf(err, errlen, "%s", op_error());
        return NULL;
    }
    size_t n = 0;
    char *data = io_read_all(f, path, NULL, SIZE_MAX / 2, &n, NULL);
    fclose(f);
    if (!data) {
        snprintf(err, errlen, "%s", op_error());
        return NULL;
    }
    char msg[400];
    Model *m = model_load_bytes(data, n, path, msg, sizeof msg);
    if (!m) snprintf(err, errlen, "%s: %s", path, msg);
    mem_free(data);
    return m;
}

int model_num_inputs(const Model *m) { return m->nleaves; }
int model_num_outputs(const Model *m) { return m->nouts; }

void model_input_info(const Model *m, int i, DType *dt, Shape *s, const char **name) {
    const Guard *gd = &m->gf->g->guards[m->leaves[i]];
    bool num = gd->kind != G_TENSOR;
    if (dt) *dt = num ? DT_F64 : gd->dtype;
    if (s) *s = num ? (Shape){ 0, { 0 } } : gd->shape;
    if (name) *name = m->gf->g->inputs[gd->input].name;
}

void model_output_info(const Model *m, int i, DType *dt, Shape *s) {
    const RegInfo *ri = &m->gf->g->regs[m->outs[i]->reg];
    bool num = m->outs[i]->kind == OPND_NUM;
    if (dt) *dt = num ? DT_F64 : ri->dtype;
    if (s) *s = num ? (Shape){ 0, { 0 } } : ri->shape;
}

/* ---------- running ---------- */

static void bind_constants(const Model *m, VmRegs *r) {
    const GraphFile *gf = m->gf;
    Tensor **consts = r->consts ? r->consts : gf->g->consts;
    for (int i = 0; i < gf->nbinds; i++) {
        const GfBinding *b = &gf->binds[i];
        if (!b->is_tensor) {
            r->num[b->reg] = b->num;
            continue;
        }
        tensor_release(r->ten[b->reg]);
        r->ten[b->reg] = tensor_retain(consts[b->k]);
    }
}

/* After a run the registers of inputs and constants let go (the caller's tensors are not
 * kept alive by the session); intermediates stay for the next run. */
static void unbind(const Model *m, VmRegs *r) {
    guards_unbind(m->gf->g, r);
    for (int i = 0; i < m->gf->nbinds; i++)
        if (m->gf->binds[i].is_tensor) {
            tensor_release(r->ten[m->gf->binds[i].reg]);
            r->ten[m->gf->binds[i].reg] = NULL;
        }
}

/* Runs the bound registers. 0, or -1 with the error set in I (located in the model). */
static int exec_model(Interp *I, const Model *m, VmRegs *r) {
    bind_constants(m, r);
    Source *saved = I->cur_src;
    I->cur_src = (Source *)&m->src;
    int rc = vm_exec(I, m->gf->g, r);
    I->cur_src = saved;
    return rc;
}

/* A session is an interpreter state of its own (errors, limits, RNG, allocation), holding
 * the VM's registers and private copies of the constants: tensors' reference counts are not
 * atomic, and several sessions may run one Model at once on several threads. */
typedef struct {
    const Model *m;
    ModelSession *s;
} NewSession;

static int session_init(Interp *I, void *ud) {
    NewSession *a = ud;
    const Graph *g = a->m->gf->g;
    ModelSession *s = a->s = mem_calloc(1, sizeof *s);
    s->m = a->m;
    s->I = I;
    s->r = vm_regs_new(g);
    s->r->consts = mem_calloc((size_t)g->nconsts + 1, sizeof(Tensor *));
    for (int i = 0; i < g->nconsts; i++)
        if (!(s->r->consts[i] = tensor_copy(g->consts[i]))) return -1;
    return 0;
}

static void session_release(ModelSession *s) {
    const Graph *g = s->m->gf->g;
    for (int i = 0; s->r->consts && i < g->nconsts; i++) tensor_release(s->r->consts[i]);
    mem_free(s->r->consts);
    s->r->consts = NULL;
    vm_regs_free(s->r, g);
    mem_free(s);
}

ModelSession *model_session_new(const Model *m) {
    vm_register();
    Interp *I = interp_new();
    if (!I) return NULL;
    NewSession a = { m, NULL };
    if (interp_protected(I, session_init, &a) == 0) return a.s;
    interp_free(I);   /* frees what the failed start allocated, in the session's own memory */
    return NULL;
}

void model_session_set_limits(ModelSession *s, int64_t max_ops, int64_t max_tensor_bytes) {
    s->I->max_ops = max_ops;
    s->I->limits_on = max_ops > 0;
    if (max_tensor_bytes > 0) s->I->opsctx->max_tensor_bytes = max_tensor_bytes;
}

struct Interp *model_session_interp(ModelSession *s) { return s->I; }

void model_session_free(ModelSession *s) {
    if (!s) return;
    Interp *I = s->I;
    InterpScope sc = interp_enter(I);
    session_release(s);
    interp_leave(sc);
    interp_free(I);
}

/* Checks the flattened inputs against the signature; binds them. */
static bool bind_inputs(ModelSession *s, Tensor *const *in, int nin, char *err, size_t errlen) {
    const Model *m = s->m;
    const Graph *g = m->gf->g;
    if (nin != m->nleaves) {
        snprintf(err, errlen, "%s: takes %d inputs, got %d", m->src.name, m->nleaves, nin);
        return false;
    }
    for (int i = 0; i < nin; i++) {
        const Guard *gd = &g->guards[m->leaves[i]];
        if (!in[i]) {
            snprintf(err, errlen, "argument '%s' is missing", guard_name(g, gd));
            return false;
        }
        Value v = TENSOR_VAL(in[i]);
        if (gd->kind != G_TENSOR) {   /* a number argument, passed as a one-element tensor */
            if (in[i]->size != 1) {
                snprintf(err, errlen, "argument '%s' must be a number (a one-element tensor)", guard_name(g, gd));
                return false;
            }
            v = NUM_VAL(tensor_get(in[i], 0));
        }
        if (guard_check(m->gf->g, gd, v, false, err, errlen)) return false;
    }
    for (int i = 0; i < nin; i++) {
        const Guard *gd = &g->guards[m->leaves[i]];
        if (gd->kind == G_TENSOR) s->r->ten[gd->reg] = tensor_retain(in[i]);
        else s->r->num[gd->reg] = tensor_get(in[i], 0);
    }
    return true;
}

static int run_body(Interp *I, void *ud) {
    ModelSession *s = ud;
    return exec_model(I, s->m, s->r);
}

/* The results, copied into the caller's memory (the session's may go first). */
static int take_outputs(ModelSession *s, Tensor **out, char *err, size_t errlen) {
    const Model *m = s->m;
    for (int k = 0; k < m->nouts; k++) {
        const Opnd *o = m->outs[k];
        Tensor *reg = o->kind == OPND_TENSOR ? s->r->ten[o->reg] : NULL;
        Tensor *t = o->kind == OPND_NUM ? tensor_scalar(DT_F64, s->r->num[o->reg]) : reg ? tensor_copy(reg) : NULL;
        if (!t) {
            for (int j = 0; j < k; j++) tensor_release(out[j]);
            snprintf(err, errlen, "%s", o->kind == OPND_NUM || reg ? op_error() : "the graph left a result unset");
            return -1;
        }
        out[k] = t;
    }
    return 0;
}

int model_run(ModelSession *s, Tensor *const *in, int nin, Tensor **out, char *err, size_t errlen) {
    Interp *I = s->I;
    if (!bind_inputs(s, in, nin, err, errlen)) return -1;
    interp_clear_error(I);
    int rc = interp_protected(I, run_body, s) == 0 ? 0 : I->interrupted ? MODEL_INTERRUPTED : -1;
    if (rc == 0) rc = take_outputs(s, out, err, errlen);
    else snprintf(err, errlen, "%s:%d:%d: %s", I->err_src ? I->err_src->name : s->m->src.name, I->err_loc.line,
                  I->err_loc.col, I->err_msg);
    InterpScope sc = interp_enter(I);
    unbind(s->m, s->r);
    interp_leave(sc);
    return rc;
}

/* ---------- the built-ins ---------- */

typedef struct {
    Model *m;
    VmRegs *r;            /* the interpreter's session (a nested call makes its own) */
    bool busy;
    Tensor **dev_consts;  /* the graph's constants copied to its device (made once), or NULL */
} Loaded;

static void release_consts(Tensor **consts, int n) {
    for (int i = 0; consts && i < n; i++) tensor_release(consts[i]);
    mem_free(consts);
}

static void loaded_free(void *p) {
    Loaded *l = p;
    if (l->r) vm_regs_free(l->r, l->m->gf->g);
    release_consts(l->dev_consts, l->m->gf->g->nconsts);
    model_free(l->m);
    mem_free(l);
}

/* The device a call runs on: its first tensor argument not on the CPU, else the default
 * device (static.c picks a static graph's the same way). */
static Device call_device(const Graph *g, const Value *vals) {
    for (int i = 0; i < g->ninputs; i++)
        if (vals[i].type == VAL_TENSOR && vals[i].as.t->device != DEV_CPU) return vals[i].as.t->device;
    return ops_ctx()->default_device;
}

/* The constants for a run on device d into *out: NULL (the graph's own) on the CPU, else
 * their copies on the GPU, made at the first call there and kept until the graph is freed
 * (the weights cross once, not per call; a nested call finds them too). false with
 * op_error() set when a copy fails, nothing kept. */
static bool consts_on(Loaded *l, Device d, Tensor ***out) {
    const Graph *g = l->m->gf->g;
    *out = NULL;
    if (d == DEV_CPU) return true;
    if (!l->dev_consts) {
        Tensor **c = mem_calloc((size_t)g->nconsts + 1, sizeof(Tensor *));
        for (int i = 0; i < g->nconsts; i++)
            if (!(c[i] = tensor_to(g->consts[i], d))) {
                release_consts(c, i);
                return false;
            }
        l->dev_consts = c;
    }
    *out = l->dev_consts;
    return true;
}

/* Runs the bound registers on device d: through the device executor off the CPU (or under
 * TSL_VM_DEVICE=1), as a static graph compiled for d runs. As there, the graph's literals
 * and creation ops are made on the default device (the weights, bound from the constants,
 * are on d): with arguments on the GPU and the CPU as the default, a random draw meets them
 * in the op core's mixing-devices error, as in eager code. */
static int exec_loaded(Interp *I, const Model *m, VmRegs *r, Device d) {
    Graph *g = m->gf->g;   /* this interpreter's own: load() made it */
    const char *forced = getenv("TSL_VM_DEVICE");
    g->device = d;
    g->device_vm = d != DEV_CPU || (forced && !strcmp(forced, "1"));
    return exec_model(I, m, r);
}

static Loaded *loaded_of(Value f) {
    if (f.type != VAL_FUNC || f.as.o->kind != OBJ_BUILTIN || AS_BUILTIN(f)->udata_free != loaded_free) return NULL;
    return AS_BUILTIN(f)->udata;
}

/* The graph has no source text to show: the error moves to the caller's line (the call
 * attaches it), saying where in the exported code it happened. */
static void relocate_error(Interp *I, const Model *m) {
    char msg[sizeof I->err_msg];
    snprintf(msg, sizeof msg, "%s", I->err_msg);
    SrcLoc at = I->err_loc;
    bool had = I->err_has_loc;
    interp_clear_error(I);
    if (had) interp_error(I, "%s(): %s (at %d:%d in the exported code)", m->gf->name, msg, at.line, at.col);
    else interp_error(I, "%s(): %s", m->gf->name, msg);
}

const char *model_loaded_signature(Value f) {
    Loaded *l = loaded_of(f);
    return l ? l->m->signature : NULL;
}

const Graph *model_loaded_graph(Value f, const char **name) {
    Loaded *l = loaded_of(f);
    if (!l) return NULL;
    *name = l->m->gf->name;
    return l->m->gf->g;
}

static Value call_loaded(Interp *I, CallArgs *a) {
    Loaded *l = I->calling_builtin->udata;
    const Model *m = l->m;
    const Graph *g = m->gf->g;
    if (a->nkw) return interp_errork(I, ERRK_TYPE, "%s(): a loaded graph takes positional arguments only", m->gf->name);
    /* its ops run on the VM, unseen by the gradient tape: zeros would be silently wrong */
    for (int i = 0; I->tape && i < a->npos; i++)
        if (value_holds_tracked(a->pos[i]))
            return interp_errork(I, ERRK_VALUE, "%s(): no gradient through a loaded graph yet (grad of a call of what load() made)",
                                m->gf->name);
    if (a->npos > m->gf->nparams)
        return interp_errork(I, ERRK_TYPE, "%s(): takes %d argument%s but %d were given", m->gf->name, m->gf->nparams,
                            m->gf->nparams == 1 ? "" : "s", a->npos);
    Value *params = mem_alloc(sizeof(Value) * (size_t)(m->gf->nparams + g->ninputs + 1)), *vals = params + m->gf->nparams;
    for (int i = 0; i < m->gf->nparams; i++) params[i] = i < a->npos ? a->pos[i] : UNDEF_VAL;
    static_fetch_args(g, params, vals);
    char err[700];
    for (int i = 0; i < g->nguards; i++)
        if (guard_check(g, &g->guards[i], vals[g->guards[i].input], true, err, sizeof err)) {
            ErrKind kind = guard_kind(&g->guards[i], vals[g->guards[i].input]);   /* vals lives in params */
            mem_free(params);
            return interp_errork(I, kind, "%s(): %s", m->gf->name, err);
        }
    Device d = call_device(g, vals);
    Tensor **consts;
    if (!consts_on(l, d, &consts)) {
        mem_free(params);
        return interp_error(I, "%s(): %s", m->gf->name, op_error());
    }
    bool own = !l->busy;
    if (own && !l->r) l->r = vm_regs_new(g);
    VmRegs *r = own ? l->r : vm_regs_new(g);
    l->busy = true;
    guards_bind(g, vals, r);
    mem_free(params);
    r->consts = consts;
    Value result = exec_loaded(I, m, r, d) ? ERR_VAL : g->has_result ? vm_operand(I, (Graph *)g, r, &g->result) : NIL_VAL;
    r->consts = NULL;
    if (IS_ERR(result) && !I->interrupted && !I->exiting) relocate_error(I, m);
    unbind(m, r);
    if (own) l->busy = false;
    else vm_regs_free(r, g);
    return result;
}

static Value loaded_value(Model *m) {
    Loaded *l = mem_calloc(1, sizeof *l);
    l->m = m;
    ObjBuiltin *b = builtin_new(m->gf->name, call_loaded);   /* the name lives as long as the model */
    b->udata = l;
    b->udata_free = loaded_free;
    return OBJ_VAL(VAL_FUNC, b);
}

Value model_builtin_load(Interp *I, CallArgs *a) {
    Value v[1];
    if (!builtin_bind(I, a, NULL, v)) return ERR_VAL;
    if (!IS_STR(v[0])) return interp_errork(I, ERRK_TYPE, "load(): path must be a string, got %s", val_type_name(v[0]));
    if (I->sandbox) return interp_errork(I, ERRK_IO, "load(): files are disabled here");
    char err[700];
    Model *m = model_load_file(AS_STR(v[0])->chars, err, sizeof err);
    if (!m) return interp_errork(I, ERRK_IO, "load(): %s", err);   /* missing, corrupt or too new: the file's */
    return loaded_value(m);
}

/* export's dynamic= ({"x": [0]}: parameter name to the axes of its tensor that take any
 * size) as a mask per parameter in dyn; false with the error set. */
static bool dynamic_axes(Interp *I, Value spec, const FnProto *p, const Value *params, uint32_t *dyn) {
    if (spec.type == VAL_UNDEF || spec.type == VAL_NIL) return true;
    if (spec.type != VAL_DICT)
        return interp_errork(I, ERRK_TYPE, "export(): dynamic must be a dict of parameter names to lists of axes, got %s",
                             val_type_name(spec)), false;
    for (int e = 0; e < AS_DICT(spec)->len; e++) {
        const char *name = AS_DICT(spec)->entries[e].key->chars;
        Value axes = AS_DICT(spec)->entries[e].val;
        int i = 0;
        while (i < p->nparams && strcmp(p->params[i], name)) i++;
        if (i == p->nparams)
            return interp_errork(I, ERRK_KEY, "export(): dynamic names '%s', which is not a parameter of %s()", name,
                                 p->name[0] ? p->name : "<fn>"), false;
        if (params[i].type != VAL_TENSOR)
            return interp_errork(I, ERRK_TYPE, "export(): dynamic names '%s', which is %s in example_args, not a tensor",
                                 name, params[i].type == VAL_UNDEF ? "missing" : val_type_name(params[i])), false;
        if (!IS_LIST(axes))
            return interp_errork(I, ERRK_TYPE, "export(): dynamic['%s'] must be a list of axes, got %s", name,
                                 val_type_name(axes)), false;
        int ndim = params[i].as.t->ndim;
        for (int k = 0; k < AS_LIST(axes)->len; k++) {
            Value ax = AS_LIST(axes)->items[k];
            int64_t a;
            if (ax.type != VAL_NUM || !num_to_i64(ax.as.n, &a))
                return interp_errork(I, ERRK_TYPE, "export(): dynamic['%s'] must hold whole numbers (axes)", name), false;
            if (a < -ndim || a >= ndim)
                return interp_errork(I, ERRK_INDEX, "export(): dynamic['%s'] names axis %lld, but '%s' has %d ax%s", name,
                                     (long long)a, name, ndim, ndim == 1 ? "is" : "es"), false;
            dyn[i] |= (uint32_t)1 << (a < 0 ? a + ndim : a);
        }
    }
    return true;
}

/* f compiled for params with the dynamic axes dyn (NULL: none) into *g and *vals. */
static CompileStatus compile_export(Interp *I, ObjClosure *fn, Value *params, const uint32_t *dyn, Graph **g,
                                    Value **vals, char *why, size_t whylen) {
    *g = NULL;
    *vals = NULL;
    CompileStatus st = static_compile_export(I, fn, params, dyn, g, vals, why, whylen);
    if (st != COMPILE_OK) {
        graph_free(*g);
        mem_free(*vals);
        *g = NULL;
        *vals = NULL;
    }
    return st;
}

/* When f compiles with fixed shapes but not with the dynamic axes: the first axis that alone
 * stops it (its parameter's name and axis, the compiler's reason in why), as the error. */
static void blame_dynamic_axis(Interp *I, ObjClosure *fn, Value *params, const uint32_t *dyn, char *why, size_t whylen) {
    FnProto *p = fn->proto;
    const char *fname = p->name[0] ? p->name : "<fn>";
    uint32_t *one = mem_calloc((size_t)p->nparams + 1, sizeof(uint32_t));
    Graph *g;
    Value *vals;
    CompileStatus st = COMPILE_OK;
    for (int i = 0; i < p->nparams && st == COMPILE_OK; i++)
        for (int a = 0; a < 32 && st == COMPILE_OK; a++) {
            if (!(dyn[i] >> a & 1)) continue;
            one[i] = (uint32_t)1 << a;
            st = compile_export(I, fn, params, one, &g, &vals, why, whylen);
            one[i] = 0;
            graph_free(g);
            mem_free(vals);
            if (st == COMPILE_UNSUPPORTED)
                interp_error(I, "export(): %s() cannot take any size on axis %d of '%s' (dynamic=): %s", fname, a,
                             p->params[i], why);
        }
    if (st == COMPILE_OK)
        interp_error(I, "export(): %s() cannot take any size on the axes dynamic= names together: %s", fname, why);
    mem_free(one);
}

/* The GraphFile of f compiled for args (a new one), or a loaded graph's own (*owned false). */
static GraphFile *export_graph(Interp *I, Value f, ObjList *args, Value dynamic, bool *owned) {
    Loaded *l = loaded_of(f);
    *owned = l == NULL;
    if (l && dynamic.type != VAL_UNDEF && dynamic.type != VAL_NIL)
        return interp_errork(I, ERRK_TYPE, "export(): a loaded graph is written as it is; dynamic= needs the function"), NULL;
    if (l) return l->m->gf;
    if (f.type == VAL_FUNC && f.as.o->kind == OBJ_BUILTIN)
        return interp_errork(I, ERRK_TYPE, "export(): f must be a function defined in TSL, got the built-in %s", AS_BUILTIN(f)->name), NULL;
    if (f.type != VAL_FUNC) return interp_errork(I, ERRK_TYPE, "export(): f must be a function, got %s", val_type_name(f)), NULL;
    ObjClosure *fn = (ObjClosure *)f.as.o;
    FnProto *p = fn->proto;
    const char *fname = p->name[0] ? p->name : "<fn>";
    if (args->len > p->nparams)
        return interp_errork(I, ERRK_TYPE, "export(): %s() takes %d argument%s but example_args has %d", fname, p->nparams,
                            p->nparams == 1 ? "" : "s", args->len), NULL;
    Value *params = mem_alloc(sizeof(Value) * (size_t)(p->nparams + 1));
    for (int i = 0; i < p->nparams; i++) params[i] = i < args->len ? args->items[i] : UNDEF_VAL;
    uint32_t *dyn = mem_calloc((size_t)p->nparams + 1, sizeof(uint32_t));
    bool any = false;
    Graph *g = NULL;
    Value *vals = NULL;
    char why[512] = "";
    CompileStatus st = COMPILE_ERROR;
    if (dynamic_axes(I, dynamic, p, params, dyn)) {
        for (int i = 0; i < p->nparams; i++) any |= dyn[i] != 0;
        st = compile_export(I, fn, params, any ? dyn : NULL, &g, &vals, why, sizeof why);
    }
    if (st == COMPILE_UNSUPPORTED && any) {   /* the dynamic axes' fault, or the function's? */
        char plain[512] = "";
        Graph *g0;
        Value *v0;
        CompileStatus st0 = compile_export(I, fn, params, NULL, &g0, &v0, plain, sizeof plain);
        graph_free(g0);
        mem_free(v0);
        if (st0 == COMPILE_OK) blame_dynamic_axis(I, fn, params, dyn, why, sizeof why);
        else snprintf(why, sizeof why, "%s", plain);
        st = st0 == COMPILE_OK ? COMPILE_ERROR : st0;
    }
    mem_free(dyn);
    mem_free(params);
    if (st == COMPILE_ERROR || st == COMPILE_REFUSED) return NULL;
    if (st == COMPILE_UNSUPPORTED) return interp_error(I, "export(): %s() cannot be compiled: %s", fname, why), NULL;
    char err[700];
    GraphFile *gf = graphfile_from_compiled(g, vals, p->nparams, fname, err, sizeof err);
    mem_free(vals);
    if (!gf) interp_error(I, "export(): %s", err);
    return gf;
}

Value model_builtin_export(Interp *I, CallArgs *a) {
    Value v[4];
    if (!builtin_bind(I, a, NULL, v)) return ERR_VAL;
    if (!IS_LIST(v[1])) return interp_errork(I, ERRK_TYPE, "export(): example_args must be a list, got %s", val_type_name(v[1]));
    if (!IS_STR(v[2])) return interp_errork(I, ERRK_TYPE, "export(): path must be a string, got %s", val_type_name(v[2]));
    if (I->sandbox) return interp_errork(I, ERRK_IO, "export(): files are disabled here");
    bool owned;
    GraphFile *gf = export_graph(I, v[0], AS_LIST(v[1]), v[3], &owned);
    if (!gf) return ERR_VAL;
    Writer w = { 0 };
    char err[300];
    bool ok = graphfile_write(gf, &w, err, sizeof err) == 0;
    if (!ok) interp_error(I, "export(): %s", err);
    else if (io_write_file(AS_STR(v[2])->chars, "export()", w.p, w.len) != 0) {
        interp_op_error(I);
        ok = false;
    }
    mem_free(w.p);
    if (owned) graphfile_free(gf);
    return ok ? NIL_VAL : ERR_VAL;
}
