/* export.c - a compiled static fn as a graph file (docs/format.md).
 *
 * graphfile_from_compiled turns what the function read from outside its arguments into
 * constants bound to registers, and refuses what a file cannot hold (writes to variables or
 * to containers it was given, functions). graphfile_write lays the file out: tables of
 * strings, op names and constants are numbered by first use in a fixed walk, so writing a
 * loaded file again gives the same bytes. The memory plan (registers sharing buffers) is not
 * written: it rests on liveness a hostile file could contradict, so a loaded graph gives every
 * register a buffer of its own. */
#include <stdio.h>
#include <string.h>
#include "graphfile.h"
#include "opt.h"
#include "guard.h"

/* ---------- from a compiled graph ---------- */

static bool input_is_arg(const Graph *g, int i) {
    for (int hops = 0; hops <= g->ninputs; hops++) {
        if (g->inputs[i].kind == SRC_ARG) return true;
        if (g->inputs[i].kind != SRC_LEAF) return false;
        i = g->inputs[i].slot;
    }
    return false;
}

static const char *opnd_problem(const Opnd *o, int depth) {
    if (depth > GF_MAX_DEPTH) return "a result nested too deeply";
    if (o->kind == OPND_OBJ) return "a list or dict it was given";
    if (o->kind == OPND_CLOSURE) return "a function";
    if (o->kind == OPND_VAL) return "a string made at run time";
    if (o->kind == OPND_CONST && o->k.type != VAL_NIL && o->k.type != VAL_BOOL && o->k.type != VAL_NUM &&
        o->k.type != VAL_STR && o->k.type != VAL_UNDEF)
        return o->k.type == VAL_FUNC ? "a function" : "a constant a file cannot hold";
    for (int i = 0; i < o->n && (o->kind == OPND_LIST || o->kind == OPND_DICT); i++) {
        const char *p = opnd_problem(&o->items[i], depth + 1);
        if (p) return p;
    }
    return NULL;
}

/* What in g a file cannot express, as a message; NULL when there is nothing. */
static bool exportable(const Graph *g, const char *fname, char *err, size_t errlen) {
    if (g->noutputs) {
        snprintf(err, errlen, "%s() assigns '%s' outside itself; an exported graph can only return values", fname,
                 g->outputs[0].name ? g->outputs[0].name : "?");
        return false;
    }
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        if (in->op == I_SELECT || in->op == I_ROWSET) {   /* not in the file format yet */
            snprintf(err, errlen, "%s() %s (line %d), which a graph file cannot hold yet", fname,
                     in->op == I_SELECT ? "indexes a list with a number computed at run time" : "grows a tensor list in a loop",
                     in->loc.line);
            return false;
        }
        if (in->op == I_HCALL && in->nopnds > 0 && in->opnds[0].kind == OPND_CONST && in->opnds[0].k.type == VAL_FUNC &&
            in->opnds[0].k.as.o->kind == OBJ_BUILTIN && in->aux == 0 && in->dst < 0) {   /* an effect: save_npy, a bar */
            snprintf(err, errlen, "%s() calls %s() (line %d); an exported graph holds tensor computation only", fname,
                     AS_BUILTIN(in->opnds[0].k)->name, in->loc.line);
            return false;
        }
        if (in->op == I_HCALL || in->op == I_HBIN || in->op == I_VMOVE || in->op == I_DSET || in->op == I_HLIST ||
            in->op == I_HINDEX) {
            snprintf(err, errlen, "%s() makes a string or changes a list or dict at run time (line %d); an exported "
                     "graph holds tensors and numbers only", fname, in->loc.line);
            return false;
        }
        if (in->op == I_STORE) {
            snprintf(err, errlen, "%s() changes a list or dict outside itself (line %d); an exported graph can only "
                     "return values", fname, in->loc.line);
            return false;
        }
        for (int k = 0; k < in->nopnds; k++) {
            const char *p = opnd_problem(&in->opnds[k], 0);
            if (p) {
                snprintf(err, errlen, "%s() prints %s (line %d), which an exported graph cannot hold", fname, p,
                         in->loc.line);
                return false;
            }
        }
    }
    const char *p = g->has_result ? opnd_problem(&g->result, 0) : NULL;
    if (p) snprintf(err, errlen, "%s() returns %s, which an exported graph cannot hold", fname, p);
    return !p;
}

static int add_const(Graph *g, Tensor *t) {
    GROW(g->consts, g->nconsts, g->capconsts);
    g->consts[g->nconsts] = tensor_retain(t);
    return g->nconsts++;
}

/* A guard on a value read from outside the arguments: its register gets a binding; the
 * guard itself goes (the value is now part of the file). */
static bool bind_captured(GraphFile *gf, Guard *gd, Value v, char *err, size_t errlen) {
    if (gd->reg < 0) return true;
    GfBinding b = { gd->reg, false, -1, 0 };
    if (v.type == VAL_TENSOR) {
        if (v.as.t->device != DEV_CPU) {
            snprintf(err, errlen, "'%s' is on the GPU; export reads constants from the CPU",
                     gf->g->inputs[gd->input].name);
            return false;
        }
        b.is_tensor = true;
        b.k = add_const(gf->g, v.as.t);
    } else if (v.type == VAL_NUM) {
        b.num = v.as.n;
    } else {
        return true;
    }
    gf->binds = mem_realloc(gf->binds, sizeof(GfBinding) * (size_t)(gf->nbinds + 1));
    gf->binds[gf->nbinds++] = b;
    return true;
}

/* Keeps the inputs that come from arguments, renumbered; captured ones become bindings. */
static bool split_inputs(GraphFile *gf, const Value *vals, char *err, size_t errlen) {
    Graph *g = gf->g;
    int *newidx = mem_alloc(sizeof(int) * (size_t)(g->ninputs + 1));
    int kept = 0;
    for (int i = 0; i < g->ninputs; i++) newidx[i] = input_is_arg(g, i) ? kept++ : -1;
    bool ok = true;
    int ng = 0;
    for (int i = 0; i < g->nguards; i++) {
        Guard gd = g->guards[i];
        if (newidx[gd.input] < 0) {
            ok = ok && bind_captured(gf, &gd, vals[gd.input], err, errlen);
            val_release(gd.k);
            for (int k = 0; gd.keys && k < gd.n; k++) mem_free(gd.keys[k]);
            mem_free(gd.keys);
            continue;
        }
        ok = ok && !guard_unstorable(g, &gd, err, errlen);
        gd.input = newidx[gd.input];
        g->guards[ng++] = gd;
    }
    g->nguards = ng;
    int ni = 0;
    for (int i = 0; i < g->ninputs; i++) {
        InputSrc s = g->inputs[i];
        if (newidx[i] < 0) {
            if (s.cell) val_release(OBJ_VAL(VAL_CELL, s.cell));
            mem_free(s.name);
            continue;
        }
        if (s.kind == SRC_LEAF) s.slot = newidx[s.slot];
        s.mod = NULL;
        g->inputs[ni++] = s;
    }
    g->ninputs = ni;
    mem_free(newidx);
    return ok;
}

GraphFile *graphfile_from_compiled(Graph *g, const Value *vals, int nparams, const char *name, char *err,
                                   size_t errlen) {
    GraphFile *gf = mem_calloc(1, sizeof *gf);
    gf->g = g;
    gf->nparams = nparams;
    gf->name = mem_strndup(name, strlen(name));
    if (!exportable(g, name, err, errlen) || !split_inputs(gf, vals, err, errlen)) {
        graphfile_free(gf);
        return NULL;
    }
    mem_free(g->vals);   /* run state of the compiled graph: a file has none */
    g->vals = NULL;
    return gf;
}

void graphfile_free(GraphFile *gf) {
    if (!gf) return;
    graph_free(gf->g);
    mem_free(gf->binds);
    mem_free(gf->name);
    mem_free(gf);
}

/* ---------- writing ---------- */

typedef struct {
    const char **strs;
    int nstrs;
    const Tensor **consts;
    int nconsts;
    int opmap[OP__COUNT];  /* op code -> index in the file's op table, -1 not yet */
    OpCode ops[OP__COUNT];
    int nops;
    const char *problem;
} Tables;

static uint32_t str_index(Tables *t, const char *s) {
    for (int i = 0; i < t->nstrs; i++)
        if (!strcmp(t->strs[i], s)) return (uint32_t)i;
    t->strs = mem_realloc(t->strs, sizeof(char *) * (size_t)(t->nstrs + 1));
    t->strs[t->nstrs] = s;
    return (uint32_t)t->nstrs++;
}

static int32_t const_index(Tables *t, const Tensor *x) {
    for (int i = 0; i < t->nconsts; i++)
        if (t->consts[i] == x) return i;
    t->consts = mem_realloc(t->consts, sizeof(Tensor *) * (size_t)(t->nconsts + 1));
    t->consts[t->nconsts] = x;
    return t->nconsts++;
}

static int32_t file_op(Tables *t, int op) {
    if (op < 0 || op >= OP__COUNT) {
        t->problem = "an instruction names an op this build does not have";
        return -1;
    }
    if (t->opmap[op] < 0) {
        t->opmap[op] = t->nops;
        t->ops[t->nops++] = (OpCode)op;
    }
    return t->opmap[op];
}

static void put_shape(Writer *w, const Shape *s) {
    wire_u8(w, (uint8_t)s->ndim);
    for (int d = 0; d < s->ndim; d++) wire_i64(w, s->d[d]);
}

static void put_value(Tables *t, Writer *w, Value v) {
    switch (v.type) {
    case VAL_NIL: wire_u8(w, 0); break;
    case VAL_BOOL: wire_u8(w, 1); wire_u8(w, v.as.b); break;
    case VAL_NUM: wire_u8(w, 2); wire_f64(w, v.as.n); break;
    case VAL_STR: wire_u8(w, 3); wire_u32(w, str_index(t, AS_STR(v)->chars)); break;
    case VAL_UNDEF: wire_u8(w, 4); break;
    default: t->problem = "a constant a file cannot hold"; wire_u8(w, 0); break;
    }
}

static void put_opnd(Tables *t, Writer *w, const Opnd *o) {
    wire_u8(w, (uint8_t)o->kind);
    switch (o->kind) {
    case OPND_CONST: put_value(t, w, o->k); break;
    case OPND_NUM:
    case OPND_TENSOR:
        wire_i32(w, o->reg);
        wire_i32(w, o->bound);
        break;
    case OPND_LIST:
    case OPND_DICT:
        wire_u32(w, (uint32_t)o->n);
        for (int i = 0; i < o->n; i++) {
            if (o->kind == OPND_DICT) wire_u32(w, str_index(t, o->keys[i]));
            put_opnd(t, w, &o->items[i]);
        }
        break;
    default: t->problem = "an operand a file cannot hold"; break;
    }
}

static void put_attrs(Writer *w, const OpAttrs *a) {
    wire_u32(w, a->given);
    wire_i32(w, a->naxes);
    for (int k = 0; k < a->naxes; k++) wire_i32(w, a->axes[k]);
    wire_i32(w, a->axis);
    wire_u8(w, (uint8_t)(a->flag | a->flag2 << 1));   /* flag2 from format version 5 */
    for (int k = 0; k < 3; k++) wire_i64(w, a->i[k]);
    for (int k = 0; k < 3; k++) wire_f64(w, a->f[k]);
    put_shape(w, &a->shape);
    wire_i32(w, a->npairs);
    for (int k = 0; k < a->npairs; k++) {
        wire_i64(w, a->pairs[k][0]);
        wire_i64(w, a->pairs[k][1]);
    }
    wire_i32(w, a->dtype);
}

static void put_index_item(Tables *t, Writer *w, const IndexItem *it, int argreg) {
    wire_u8(w, (uint8_t)it->kind);
    wire_i64(w, it->i);
    wire_u8(w, it->has_start);
    wire_u8(w, it->has_stop);
    wire_i64(w, it->start);
    wire_i64(w, it->stop);
    wire_i64(w, it->step);
    wire_i32(w, it->kind == IDX_TENSOR && argreg < 0 ? const_index(t, it->t) : -1);
}

/* The aux field: an op (by the file's op table), a constant (by the file's table), or as is. */
static int32_t aux_out(Tables *t, const Graph *g, const Ins *in) {
    switch (in->op) {
    case I_OP:
    case I_NBIN:
    case I_NMATH: return file_op(t, in->aux);
    case I_TCONST: return const_index(t, g->consts[in->aux]);
    default: return in->aux;
    }
}

static void put_ins(Tables *t, Writer *w, const Graph *g, const Ins *in) {
    wire_u8(w, (uint8_t)in->op);
    wire_i32(w, in->dst);
    wire_i32(w, in->a);
    wire_i32(w, in->b);
    wire_i32(w, in->c);
    wire_i32(w, aux_out(t, g, in));
    wire_f64(w, in->imm);
    wire_i32(w, in->loc.line);
    wire_i32(w, in->loc.col);
    put_shape(w, &in->shape);
    wire_u32(w, (uint32_t)in->nargs);
    for (int k = 0; k < in->nargs; k++) wire_i32(w, in->args[k]);
    wire_u8(w, (uint8_t)in->nres);
    for (int k = 0; k < in->nres; k++) wire_i32(w, in->res[k]);
    wire_u8(w, (uint8_t)in->nidx);
    for (int k = 0; k < in->nidx; k++) put_index_item(t, w, &in->idx[k], k < in->nargs ? in->args[k] : -1);
    wire_u8(w, (uint8_t)in->nopnds);
    for (int k = 0; k < in->nopnds; k++) put_opnd(t, w, &in->opnds[k]);
    wire_i32(w, in->key ? (int32_t)str_index(t, in->key) : -1);
    wire_u8(w, in->attrs != NULL);
    if (in->attrs) put_attrs(w, in->attrs);
    wire_u32(w, (uint32_t)in->nsteps);
    for (int k = 0; k < in->nsteps; k++) {
        const FusedStep *s = &in->steps[k];
        wire_i32(w, file_op(t, s->op));
        wire_i32(w, s->dst);
        wire_i32(w, s->a);
        wire_i32(w, s->b);
        wire_i32(w, s->scalar_reg);
        wire_u8(w, s->num_left);
    }
}

static void put_guard(Tables *t, Writer *w, const Guard *gd) {
    wire_u8(w, (uint8_t)gd->kind);
    wire_i32(w, gd->input);
    wire_u8(w, (uint8_t)gd->dtype);
    put_shape(w, &gd->shape);
    wire_f64(w, gd->num);
    put_value(t, w, gd->kind == G_CONST ? gd->k : NIL_VAL);
    wire_i32(w, gd->n);
    for (int k = 0; k < gd->n && (gd->kind == G_DICT); k++) wire_u32(w, str_index(t, gd->keys[k]));
    wire_i32(w, gd->reg);
}

/* Sections whose tables fill as they are written: bindings, inputs, guards, code, result. */
static void put_program(Tables *t, const GraphFile *gf, Writer *sec) {
    const Graph *g = gf->g;
    Writer *w = &sec[GF_SEC_BINDINGS];
    wire_u32(w, (uint32_t)gf->nbinds);
    for (int i = 0; i < gf->nbinds; i++) {
        const GfBinding *b = &gf->binds[i];
        wire_i32(w, b->reg);
        wire_u8(w, b->is_tensor);
        if (b->is_tensor) wire_i32(w, const_index(t, g->consts[b->k]));
        else wire_f64(w, b->num);
    }
    w = &sec[GF_SEC_INPUTS];
    wire_u32(w, (uint32_t)g->ninputs);
    for (int i = 0; i < g->ninputs; i++) {
        const InputSrc *s = &g->inputs[i];
        wire_u8(w, s->kind == SRC_LEAF);
        wire_i32(w, s->slot);
        wire_i32(w, s->path);
        wire_u32(w, str_index(t, s->name ? s->name : "?"));
    }
    w = &sec[GF_SEC_GUARDS];
    wire_u32(w, (uint32_t)g->nguards);
    for (int i = 0; i < g->nguards; i++) put_guard(t, w, &g->guards[i]);
    w = &sec[GF_SEC_CODE];
    wire_u32(w, (uint32_t)g->ncode);
    for (int i = 0; i < g->ncode; i++) put_ins(t, w, g, &g->code[i]);
    w = &sec[GF_SEC_RESULT];
    wire_u8(w, g->has_result);
    if (g->has_result) put_opnd(t, w, &g->result);
    w = &sec[GF_SEC_META];
    wire_u32(w, (uint32_t)gf->nparams);
    wire_u32(w, str_index(t, gf->name));
    wire_u32(w, (uint32_t)g->nstacks);
}

/* Registers, the tables (strings, op names, constants) and the weights. */
static void put_tables(Tables *t, const Graph *g, Writer *sec) {
    Writer *w = &sec[GF_SEC_REGS];
    wire_u32(w, (uint32_t)g->nregs);
    for (int i = 0; i < g->nregs; i++) {
        const RegInfo *r = &g->regs[i];
        wire_u8(w, (uint8_t)r->kind);
        wire_u8(w, r->is_bool);
        wire_u8(w, (uint8_t)r->dtype);
        put_shape(w, &r->shape);
    }
    w = &sec[GF_SEC_OPS];
    wire_u32(w, (uint32_t)t->nops);
    for (int i = 0; i < t->nops; i++) wire_u32(w, str_index(t, op_def(t->ops[i])->name));
    w = &sec[GF_SEC_STRINGS];
    wire_u32(w, (uint32_t)t->nstrs);
    for (int i = 0; i < t->nstrs; i++) {
        size_t n = strlen(t->strs[i]);
        wire_u32(w, (uint32_t)n);
        wire_put(w, t->strs[i], n);
    }
    Writer *data = &sec[GF_SEC_WEIGHTS];
    w = &sec[GF_SEC_CONSTS];
    wire_u32(w, (uint32_t)t->nconsts);
    for (int i = 0; i < t->nconsts; i++) {
        const Tensor *x = t->consts[i];
        Shape s;
        shape_of(x, &s);
        wire_pad(data, GF_WEIGHT_ALIGN);
        wire_u8(w, (uint8_t)x->dtype);
        put_shape(w, &s);
        wire_u64(w, data->len);
        wire_u64(w, (uint64_t)x->size * dtype_size(x->dtype));
        wire_put(data, x->data, (size_t)x->size * dtype_size(x->dtype));
    }
}

/* Header, section table, then the sections in id order, each at a multiple of 8 and the
 * weights at a multiple of GF_WEIGHT_ALIGN, so a reader may map them in place. */
static void assemble(Writer *sec, Writer *out, uint32_t version) {
    int nsec = GF_SEC_END - 1;
    wire_put(out, GF_MAGIC, GF_MAGIC_BYTES);
    wire_u32(out, GF_ENDIAN_TAG);
    wire_u32(out, version);
    wire_u32(out, GF_OPSET_VERSION);
    wire_u32(out, (uint32_t)nsec);
    wire_u64(out, 0);   /* file size, patched below */
    wire_u64(out, 0);   /* checksum, patched below */
    wire_u64(out, 0);   /* flags, reserved */
    size_t table = out->len;
    for (int i = 0; i < nsec * (int)GF_SECTION_BYTES; i++) wire_u8(out, 0);
    for (int id = 1; id < GF_SEC_END; id++) {
        wire_pad(out, id == GF_SEC_WEIGHTS ? GF_WEIGHT_ALIGN : 8);
        size_t at = table + (size_t)(id - 1) * GF_SECTION_BYTES;
        wire_set_u32(out, at, (uint32_t)id);
        wire_set_u64(out, at + 8, out->len);
        wire_set_u64(out, at + 16, sec[id].len);
        wire_put(out, sec[id].p, sec[id].len);
    }
    wire_set_u64(out, 24, out->len);
    uint64_t h = wire_fnv1a(WIRE_FNV_INIT, out->p, 32);
    h = wire_fnv1a(h, out->p + 40, out->len - 40);
    wire_set_u64(out, 32, h);
}

/* The lowest format version that holds g's registers and instructions (graphfile.h). */
static uint32_t lowest_version(const Graph *g) {
    uint32_t version = 1;
    for (int r = 0; r < g->nregs; r++)   /* a guard's run-time dims are its register's */
        if (g->regs[r].kind == R_TENSOR && shape_is_runtime(&g->regs[r].shape)) version = GF_FORMAT_RUNTIME;
    for (int i = 0; i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        if (in->op == I_DIM || shape_is_runtime(&in->shape) ||
            (in->op == I_OP && (op_def((OpCode)in->aux)->flags & F_DYNAMIC)))
            version = version < GF_FORMAT_RUNTIME ? GF_FORMAT_RUNTIME : version;
        if (in->op == I_EPILOGUE && version < GF_FORMAT_EPILOGUE) version = GF_FORMAT_EPILOGUE;
        if (((in->op == I_OP && in->attrs && in->attrs->flag2) || (in->op == I_EPILOGUE && (in->aux & EPI_TRANS_B))) &&
            version < GF_FORMAT_TRANSPOSE_B)
            version = GF_FORMAT_TRANSPOSE_B;
        for (int k = 0; k < in->nidx; k++)
            if (in->idx[k].kind == IDX_NEWAXIS && version < GF_FORMAT_NEWAXIS) version = GF_FORMAT_NEWAXIS;
    }
    return version;
}

int graphfile_write(const GraphFile *gf, Writer *out, char *err, size_t errlen) {
    Tables t;
    memset(&t, 0, sizeof t);
    for (int i = 0; i < OP__COUNT; i++) t.opmap[i] = -1;
    Writer sec[GF_SEC_END];
    memset(sec, 0, sizeof sec);
    put_program(&t, gf, sec);
    put_tables(&t, gf->g, sec);
    if (!t.problem) assemble(sec, out, lowest_version(gf->g));
    else snprintf(err, errlen, "%s", t.problem);
    for (int i = 0; i < GF_SEC_END; i++) mem_free(sec[i].p);
    mem_free(t.strs);
    mem_free(t.consts);
    return t.problem ? -1 : 0;
}
