/* load.c - reading a graph file (docs/format.md); vm/file/verify.c checks its instructions.
 *
 * The file is untrusted. Every offset and length is checked against the bytes there are
 * before it is used (overflow-safe: a length is compared with what is left, never added to
 * an offset first), every count against the bytes left before anything is allocated for it,
 * and every instruction against the op table: its registers exist and have the right kind,
 * and the dtypes and shapes of its results are what inference gives for its operands. So
 * a file that loads runs on the VM with the guarantees a compiled graph has. Validation
 * never asserts; the first problem is the message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "load.h"

bool load_fail(Load *L, const char *fmt, ...) {
    if (L->failed) return false;
    L->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err, L->errlen, fmt, ap);
    va_end(ap);
    return false;
}

/* After a record: a reader that ran out means the section is shorter than it says. */
static bool read_ok(Load *L) {
    return L->failed ? false : !L->r.bad || load_fail(L, "corrupt graph file: the %s section is truncated", L->where);
}

/* ---------- header and sections ---------- */

static const char *section_name(int id) {
    static const char *names[GF_SEC_END] = { "?", "meta", "strings", "ops", "registers", "constants", "inputs",
                                             "guards", "bindings", "code", "result", "weights" };
    return id > 0 && id < GF_SEC_END ? names[id] : "?";
}

static bool check_header(Load *L, bool check_sum) {
    const uint8_t *d = L->data;
    if (L->n < GF_HEADER_BYTES || memcmp(d, GF_MAGIC, GF_MAGIC_BYTES))
        return load_fail(L, "not a TSL graph file (it does not start with the graph file magic)");
    uint32_t tag = wire_le32(d + 8), version = wire_le32(d + 12), opset = wire_le32(d + 16);
    if (tag == 0x0D0C0B0Au)
        return load_fail(L, "the graph file is big-endian; this build reads little-endian files");
    if (tag != GF_ENDIAN_TAG) return load_fail(L, "corrupt graph file: bad byte-order mark");
    if (version > GF_FORMAT_VERSION)
        return load_fail(L, "the graph file has format version %u; this build reads format version %u", version,
                    GF_FORMAT_VERSION);
    if (version == 0) return load_fail(L, "corrupt graph file: format version 0");
    L->version = version;
    if (opset > GF_OPSET_VERSION)
        return load_fail(L, "the graph file uses op set version %u; this build has op set version %u", opset,
                    GF_OPSET_VERSION);
    uint64_t size = wire_le64(d + 24);
    if (size != L->n)
        return size > L->n ? load_fail(L, "the graph file is truncated: %zu of %llu bytes", L->n, (unsigned long long)size)
                           : load_fail(L, "corrupt graph file: %zu bytes where the header says %llu", L->n,
                                  (unsigned long long)size);
    uint64_t h = wire_fnv1a(WIRE_FNV_INIT, d, 32);
    h = wire_fnv1a(h, d + 40, L->n - 40);
    if (check_sum && h != wire_le64(d + 32)) return load_fail(L, "corrupt graph file: the checksum does not match");
    if (wire_le64(d + 40)) return load_fail(L, "corrupt graph file: unknown flags");
    return true;
}

static bool read_section_table(Load *L) {
    uint32_t nsec = wire_le32(L->data + 20);
    if (nsec != GF_SEC_END - 1) return load_fail(L, "corrupt graph file: %u sections where format 1 has %d", nsec, GF_SEC_END - 1);
    uint64_t table_end = GF_HEADER_BYTES + (uint64_t)nsec * GF_SECTION_BYTES;
    if (table_end > L->n) return load_fail(L, "the graph file is truncated in its section table");
    for (uint32_t i = 0; i < nsec; i++) {
        const uint8_t *e = L->data + GF_HEADER_BYTES + (size_t)i * GF_SECTION_BYTES;
        uint32_t id = wire_le32(e);
        uint64_t off = wire_le64(e + 8), len = wire_le64(e + 16);
        if (id != i + 1 || wire_le32(e + 4)) return load_fail(L, "corrupt graph file: section %u has id %u", i + 1, id);
        if (off < table_end || off > L->n || len > L->n - off)
            return load_fail(L, "corrupt graph file: the %s section (offset %llu, length %llu) is outside the file's %zu bytes",
                        section_name((int)id), (unsigned long long)off, (unsigned long long)len, L->n);
        if (off % (id == GF_SEC_WEIGHTS ? GF_WEIGHT_ALIGN : 8))
            return load_fail(L, "corrupt graph file: the %s section is not aligned", section_name((int)id));
        L->sec[id] = (Span){ off, len };
    }
    return true;
}

static void open_section(Load *L, int id) {
    L->r = (Reader){ L->data + L->sec[id].off, L->data + L->sec[id].off + L->sec[id].len, false };
    L->where = section_name(id);
}

static bool close_section(Load *L) {
    if (!read_ok(L)) return false;
    return L->r.p == L->r.end || load_fail(L, "corrupt graph file: %zu unread bytes at the end of the %s section",
                                      (size_t)(L->r.end - L->r.p), L->where);
}

/* ---------- small fields ---------- */

static const char *get_str(Load *L) {
    uint32_t i = wire_get_u32(&L->r);
    if (!read_ok(L)) return NULL;
    if (i >= L->nstrs) return load_fail(L, "corrupt graph file: string %u of %u in the %s section", i, L->nstrs, L->where), NULL;
    return L->strs[i];
}

/* A shape whose dimensions are at least `lowest`: 0 for a tensor's, -1 for the shape
 * attribute of an op whose signature allows one inferred dimension (reshape's shape-). */
static bool get_dims(Load *L, Shape *s, int64_t lowest) {
    uint8_t nd = wire_get_u8(&L->r);
    if (nd > TSL_MAX_RANK) return load_fail(L, "corrupt graph file: a shape of rank %u in the %s section", nd, L->where);
    s->ndim = nd;
    int64_t count = 1;
    for (int d = 0; d < nd; d++) {
        s->d[d] = wire_get_i64(&L->r);
        if (!read_ok(L)) return false;
        if (s->d[d] < lowest || (s->d[d] > 0 && count > INT64_MAX / 8 / s->d[d]))
            return load_fail(L, "corrupt graph file: a shape dimension of %lld in the %s section", (long long)s->d[d], L->where);
        if (s->d[d] >= 0) count *= s->d[d];   /* an inferred -1 counts as nothing yet */
    }
    return read_ok(L);
}

static bool get_shape(Load *L, Shape *s) { return get_dims(L, s, 0); }
/* A register's or guard's shape: from version 4 a dimension may be a run-time one (-1). */
static bool get_reg_shape(Load *L, Shape *s) { return get_dims(L, s, L->version >= GF_FORMAT_RUNTIME ? SHAPE_RT : 0); }

static bool get_dtype(Load *L, int x, DType *dt) {
    if (x < 0 || x > DT_F64) return load_fail(L, "corrupt graph file: dtype %d in the %s section", x, L->where);
    *dt = (DType)x;
    return true;
}

static bool get_value(Load *L, Value *v) {
    uint8_t tag = wire_get_u8(&L->r);
    switch (tag) {
    case 0: *v = NIL_VAL; break;
    case 1: *v = BOOL_VAL(wire_get_u8(&L->r) != 0); break;
    case 2: *v = NUM_VAL(wire_get_f64(&L->r)); break;
    case 3: {
        const char *s = get_str(L);
        if (!s) return false;
        *v = graph_detached_str(s, strlen(s));
        break;
    }
    case 4: *v = UNDEF_VAL; break;
    default: return read_ok(L) && load_fail(L, "corrupt graph file: value tag %u in the %s section", tag, L->where);
    }
    return read_ok(L);
}

bool load_is_reg(Load *L, int r, RegKind kind) {
    Graph *g = L->gf->g;
    return r >= 0 && r < g->nregs && g->regs[r].kind == kind;
}

bool load_want_reg(Load *L, int r, RegKind kind, const char *what) {
    return load_is_reg(L, r, kind) ||
           load_fail(L, "corrupt graph file: %s register %d is not a %s register", what, r, kind == R_NUM ? "number" : "tensor");
}

bool load_same_type(const RegInfo *a, const RegInfo *b) {
    return a->kind == b->kind && (a->kind == R_NUM || (a->dtype == b->dtype && shape_equal(&a->shape, &b->shape)));
}

/* ---------- tables ---------- */

static bool read_strings(Load *L) {
    open_section(L, GF_SEC_STRINGS);
    uint32_t n = wire_count(&L->r, 4, UINT32_MAX);
    if (!read_ok(L)) return false;
    L->strs = mem_calloc(n + 1, sizeof(char *));
    for (uint32_t i = 0; i < n; i++) {
        uint32_t len = wire_get_u32(&L->r);
        if (!read_ok(L)) return false;
        if (len > wire_left(&L->r)) return load_fail(L, "corrupt graph file: string %u runs past its section", i);
        if (memchr(L->r.p, 0, len)) return load_fail(L, "corrupt graph file: string %u holds a NUL byte", i);
        L->strs[i] = mem_strndup((const char *)L->r.p, len);
        L->nstrs = i + 1;
        L->r.p += len;
    }
    return close_section(L);
}

static OpCode op_named(const char *name) {
    for (int op = 0; op < OP__COUNT; op++)
        if (!strcmp(op_def((OpCode)op)->name, name)) return (OpCode)op;
    return OP__COUNT;
}

static bool read_ops(Load *L) {
    open_section(L, GF_SEC_OPS);
    uint32_t n = wire_count(&L->r, 4, OP__COUNT * 4);
    if (!read_ok(L)) return false;
    L->ops = mem_calloc(n + 1, sizeof(OpCode));
    for (uint32_t i = 0; i < n; i++) {
        const char *name = get_str(L);
        if (!name) return false;
        OpCode op = op_named(name);
        if (op == OP__COUNT)
            return load_fail(L, "the graph uses the op '%s', which this build does not have (op set version %u)", name,
                        GF_OPSET_VERSION);
        L->ops[i] = op;
        L->nops = i + 1;
    }
    return close_section(L);
}

static bool get_op(Load *L, int32_t i, OpCode *op) {
    if (i < 0 || (uint32_t)i >= L->nops) return load_fail(L, "corrupt graph file: op %d of %u", i, L->nops);
    *op = L->ops[i];
    return true;
}

static bool read_meta(Load *L) {
    open_section(L, GF_SEC_META);
    GraphFile *gf = L->gf;
    uint32_t nparams = wire_get_u32(&L->r);
    const char *name = get_str(L);
    uint32_t nstacks = wire_get_u32(&L->r);
    if (!name || !close_section(L)) return false;
    if (nparams > 255) return load_fail(L, "corrupt graph file: %u parameters", nparams);
    if (nstacks > MAX_CODE) return load_fail(L, "corrupt graph file: %u stacks", nstacks);
    gf->nparams = (int)nparams;
    gf->name = mem_strndup(name, strlen(name));
    gf->g->nstacks = (int)nstacks;
    return true;
}

static bool read_regs(Load *L) {
    open_section(L, GF_SEC_REGS);
    Graph *g = L->gf->g;
    uint32_t n = wire_count(&L->r, 4, MAX_REGS);
    if (!read_ok(L)) return false;
    g->regs = mem_calloc(n + 1, sizeof(RegInfo));
    g->capregs = (int)n + 1;
    for (uint32_t i = 0; i < n; i++) {
        RegInfo *ri = &g->regs[i];
        uint8_t kind = wire_get_u8(&L->r), is_bool = wire_get_u8(&L->r), dt = wire_get_u8(&L->r);
        ri->slot = -1;   /* no shared buffers in a loaded graph (see export.c) */
        if (!get_reg_shape(L, &ri->shape)) return false;
        if (kind > R_TENSOR || is_bool > 1 || !get_dtype(L, dt, &ri->dtype))
            return load_fail(L, "corrupt graph file: register %u has kind %u", i, kind);
        ri->kind = (RegKind)kind;
        ri->is_bool = is_bool;
        g->nregs = (int)i + 1;
    }
    return close_section(L);
}

static bool read_consts(Load *L) {
    open_section(L, GF_SEC_CONSTS);
    Graph *g = L->gf->g;
    Span w = L->sec[GF_SEC_WEIGHTS];
    uint32_t n = wire_count(&L->r, 18, MAX_REGS);
    if (!read_ok(L)) return false;
    g->consts = mem_calloc(n + 1, sizeof(Tensor *));
    g->capconsts = (int)n + 1;
    for (uint32_t i = 0; i < n; i++) {
        DType dt = DT_F32;
        Shape s;
        uint8_t d = wire_get_u8(&L->r);
        if (!get_shape(L, &s) || !get_dtype(L, d, &dt)) return false;
        uint64_t off = wire_get_u64(&L->r), nbytes = wire_get_u64(&L->r);
        if (!read_ok(L)) return false;
        if (nbytes != (uint64_t)shape_count(&s) * dtype_size(dt))
            return load_fail(L, "corrupt graph file: constant %u has %llu bytes for %s %lld elements", i,
                        (unsigned long long)nbytes, dtype_name(dt), (long long)shape_count(&s));
        if (off % GF_WEIGHT_ALIGN || off > w.len || nbytes > w.len - off)
            return load_fail(L, "corrupt graph file: constant %u (offset %llu, %llu bytes) is outside the weights", i,
                        (unsigned long long)off, (unsigned long long)nbytes);
        Tensor *t = tensor_new(dt, &s);
        if (!t) return load_fail(L, "cannot load constant %u: %s", i, op_error());
        memcpy(t->data, L->data + w.off + off, (size_t)nbytes);
        g->consts[g->nconsts++] = t;
    }
    return close_section(L);
}

/* ---------- signature ---------- */

static bool read_inputs(Load *L) {
    open_section(L, GF_SEC_INPUTS);
    Graph *g = L->gf->g;
    uint32_t n = wire_count(&L->r, 13, MAX_REGS);
    if (!read_ok(L)) return false;
    g->inputs = mem_calloc(n + 1, sizeof(InputSrc));
    g->capinputs = (int)n + 1;
    for (uint32_t i = 0; i < n; i++) {
        InputSrc *s = &g->inputs[i];
        uint8_t leaf = wire_get_u8(&L->r);
        s->slot = wire_get_i32(&L->r);
        s->path = wire_get_i32(&L->r);
        const char *name = get_str(L);
        if (!name) return false;
        s->name = mem_strndup(name, strlen(name));
        s->kind = leaf ? SRC_LEAF : SRC_ARG;
        g->ninputs = (int)i + 1;
        /* a part's parent comes before it: the inputs form a forest, read in one pass */
        bool ok = leaf == 0 ? s->slot >= 0 && s->slot < L->gf->nparams : leaf == 1 && s->slot >= 0 && (uint32_t)s->slot < i;
        if (!ok || s->path < 0) return load_fail(L, "corrupt graph file: input %u reads %d/%d", i, s->slot, s->path);
    }
    return close_section(L);
}

static bool guard_reg_ok(Load *L, const Guard *gd) {
    if (gd->reg == -1) return gd->kind != G_TENSOR || load_fail(L, "corrupt graph file: a tensor guard binds no register");
    if (gd->kind == G_TENSOR) {
        if (!load_want_reg(L, gd->reg, R_TENSOR, "a guard's")) return false;
        const RegInfo *ri = &L->gf->g->regs[gd->reg];
        return (ri->dtype == gd->dtype && shape_equal(&ri->shape, &gd->shape)) ||
               load_fail(L, "corrupt graph file: a guard's type differs from its register's");
    }
    if (gd->kind == G_NUMBER || gd->kind == G_NUMBER_EQ) return load_want_reg(L, gd->reg, R_NUM, "a guard's");
    return load_fail(L, "corrupt graph file: a structure guard binds register %d", gd->reg);
}

static bool read_guard(Load *L, Guard *gd) {
    Graph *g = L->gf->g;
    uint8_t kind = wire_get_u8(&L->r), dt;
    gd->input = wire_get_i32(&L->r);
    dt = wire_get_u8(&L->r);
    gd->obj = -1;
    gd->reg = -1;
    if (!get_reg_shape(L, &gd->shape) || !get_dtype(L, dt, &gd->dtype)) return false;
    gd->num = wire_get_f64(&L->r);
    if (!get_value(L, &gd->k)) return false;
    gd->n = wire_get_i32(&L->r);
    if (!read_ok(L)) return false;
    if (kind > G_DICT || gd->input < 0 || gd->input >= g->ninputs)
        return load_fail(L, "corrupt graph file: guard of kind %u on input %d", kind, gd->input);
    gd->kind = (GuardKind)kind;
    if (gd->n < 0 || (size_t)gd->n > (kind == G_DICT ? wire_left(&L->r) / 4 : (size_t)MAX_REGS))
        return load_fail(L, "corrupt graph file: a guard on %d elements", gd->n);
    if (kind == G_DICT) {
        gd->keys = mem_calloc((size_t)gd->n + 1, sizeof(char *));
        for (int k = 0; k < gd->n; k++) {
            const char *key = get_str(L);
            if (!key) return false;
            gd->keys[k] = mem_strndup(key, strlen(key));
        }
    }
    gd->reg = wire_get_i32(&L->r);
    return read_ok(L) && guard_reg_ok(L, gd);
}

static bool read_guards(Load *L) {
    open_section(L, GF_SEC_GUARDS);
    Graph *g = L->gf->g;
    uint32_t n = wire_count(&L->r, 24, MAX_REGS);
    if (!read_ok(L)) return false;
    g->guards = mem_calloc(n + 1, sizeof(Guard));
    g->capguards = (int)n + 1;
    for (uint32_t i = 0; i < n; i++) {
        g->nguards = (int)i + 1;   /* counted first: graph_free frees what a failed read left */
        if (!read_guard(L, &g->guards[i])) return false;
    }
    return close_section(L);
}

static bool read_bindings(Load *L) {
    open_section(L, GF_SEC_BINDINGS);
    GraphFile *gf = L->gf;
    Graph *g = gf->g;
    uint32_t n = wire_count(&L->r, 9, MAX_REGS);
    if (!read_ok(L)) return false;
    gf->binds = mem_calloc(n + 1, sizeof(GfBinding));
    for (uint32_t i = 0; i < n; i++) {
        GfBinding *b = &gf->binds[i];
        b->reg = wire_get_i32(&L->r);
        b->is_tensor = wire_get_u8(&L->r) != 0;
        if (b->is_tensor) b->k = wire_get_i32(&L->r);
        else b->num = wire_get_f64(&L->r);
        if (!read_ok(L) || !load_want_reg(L, b->reg, b->is_tensor ? R_TENSOR : R_NUM, "a binding's")) return false;
        if (b->is_tensor) {
            if (b->k < 0 || b->k >= g->nconsts) return load_fail(L, "corrupt graph file: binding to constant %d", b->k);
            RegInfo ri = { R_TENSOR, false, g->consts[b->k]->dtype, { 0 }, -1 };
            shape_of(g->consts[b->k], &ri.shape);
            if (!load_same_type(&ri, &g->regs[b->reg])) return load_fail(L, "corrupt graph file: a binding's type differs from its register's");
        }
        gf->nbinds = (int)i + 1;
    }
    return close_section(L);
}

/* ---------- operands ---------- */

static bool read_opnd(Load *L, Opnd *o, int depth) {
    if (depth > GF_MAX_DEPTH) return load_fail(L, "corrupt graph file: operands nested deeper than %d", GF_MAX_DEPTH);
    uint8_t kind = wire_get_u8(&L->r);
    memset(o, 0, sizeof *o);
    o->kind = OPND_CONST;
    o->k = NIL_VAL;
    switch (kind) {
    case OPND_CONST: return get_value(L, &o->k);
    case OPND_NUM:
    case OPND_TENSOR:
        o->reg = wire_get_i32(&L->r);
        o->bound = wire_get_i32(&L->r);
        if (!read_ok(L) || !load_want_reg(L, o->reg, kind == OPND_NUM ? R_NUM : R_TENSOR, "an operand's")) return false;
        if (o->bound && (o->bound < 0 || !load_want_reg(L, o->bound - 1, R_NUM, "an operand's flag"))) return load_fail(L, "corrupt graph file: an operand's flag");
        o->kind = (OpndKind)kind;
        return true;
    case OPND_LIST:
    case OPND_DICT: {
        uint32_t n = wire_count(&L->r, kind == OPND_DICT ? 5 : 1, MAX_REGS);
        if (!read_ok(L)) return false;
        o->kind = (OpndKind)kind;
        o->items = mem_calloc(n + 1, sizeof(Opnd));
        if (kind == OPND_DICT) o->keys = mem_calloc(n + 1, sizeof(char *));
        for (uint32_t i = 0; i < n; i++) {
            if (kind == OPND_DICT) {
                const char *key = get_str(L);
                if (!key) return false;
                o->keys[i] = mem_strndup(key, strlen(key));
            }
            o->n = (int)i + 1;
            if (!read_opnd(L, &o->items[i], depth + 1)) return false;
        }
        return true;
    }
    default: return read_ok(L) && load_fail(L, "corrupt graph file: operand kind %u", kind);
    }
}

/* ---------- instructions ---------- */

/* Every attribute the op's signature (ops/ops.def) types, in the domain the compiler's
 * conversion (lang/opargs.c, opargs_attr) gives it. The enum attributes (a redop, a dtype)
 * index tables wherever they are read (redop_names, the dtype sizes), inference included,
 * so they are range-checked here, once, from the table, for every op that has one; shapes,
 * axes and numbers op_infer then checks against the operands, as the compiler did. */
static bool attrs_in_domain(Load *L, const OpDef *def, const OpAttrs *a) {
    for (int p = 0; p < def->nparams; p++) {
        const OpParam *pp = &def->params[p];
        int64_t x = pp->type == P_REDOP || pp->type == P_CHOICE ? a->i[pp->slot] : pp->type == P_DTYPE ? a->dtype : 0;
        bool ok = pp->type == P_REDOP ? x >= 0 && x < (int64_t)(sizeof redop_names / sizeof *redop_names)
                : pp->type == P_CHOICE ? x >= 0 && x <= (int64_t)strlen(pp->choices)
                : pp->type == P_DTYPE ? x >= -1 && x <= DT_F64
                : true;
        if (!ok) return load_fail(L, "corrupt graph file: %s() with %s %lld", def->name, pp->name, (long long)x);
    }
    return true;
}

/* The shape attribute's dimensions are non-negative, or -1 where the signature says shape-
 * (or where no op says: a folded op's dropped attributes). */
static int64_t shape_attr_lowest(const OpDef *def) {
    for (int p = 0; def && p < def->nparams; p++)
        if (def->params[p].type == P_SHAPE_M1) return -1;
    return def ? 0 : -1;
}

/* The attributes of op (OP__COUNT: of an instruction that is no op, checked only as fields). */
static bool read_attrs(Load *L, OpCode op, OpAttrs *a) {
    const OpDef *def = op < OP__COUNT ? op_def(op) : NULL;
    memset(a, 0, sizeof *a);
    Reader *r = &L->r;
    a->given = wire_get_u32(r);
    a->naxes = wire_get_i32(r);
    if (a->naxes < -1 || a->naxes > TSL_MAX_RANK) return load_fail(L, "corrupt graph file: %d axes", a->naxes);
    for (int k = 0; k < a->naxes; k++) a->axes[k] = wire_get_i32(r);
    a->axis = wire_get_i32(r);
    uint8_t flags = wire_get_u8(r);   /* bit 0 flag; bit 1 flag2, from version 5 */
    if (flags > (L->version >= GF_FORMAT_TRANSPOSE_B ? 3 : 1))
        return load_fail(L, "corrupt graph file: attribute flags %u", flags);
    a->flag = flags & 1;
    a->flag2 = flags >> 1;
    for (int k = 0; k < 3; k++) a->i[k] = wire_get_i64(r);
    for (int k = 0; k < 3; k++) a->f[k] = wire_get_f64(r);
    if (!get_dims(L, &a->shape, shape_attr_lowest(def))) return false;
    a->npairs = wire_get_i32(r);
    if (a->npairs < 0 || a->npairs > TSL_MAX_RANK) return load_fail(L, "corrupt graph file: %d pairs", a->npairs);
    for (int k = 0; k < a->npairs; k++) {
        a->pairs[k][0] = wire_get_i64(r);
        a->pairs[k][1] = wire_get_i64(r);
    }
    a->dtype = wire_get_i32(r);
    for (int k = 0; k < a->naxes; k++)
        if (a->axes[k] < -TSL_MAX_RANK || a->axes[k] >= TSL_MAX_RANK) return load_fail(L, "corrupt graph file: axis %d", a->axes[k]);
    return read_ok(L) && (!def || attrs_in_domain(L, def, a));
}

static bool read_index_item(Load *L, IndexItem *it) {
    Graph *g = L->gf->g;
    uint8_t kind = wire_get_u8(&L->r);
    it->i = wire_get_i64(&L->r);
    it->has_start = wire_get_u8(&L->r) != 0;
    it->has_stop = wire_get_u8(&L->r) != 0;
    it->start = wire_get_i64(&L->r);
    it->stop = wire_get_i64(&L->r);
    it->step = wire_get_i64(&L->r);
    int32_t k = wire_get_i32(&L->r);
    if (!read_ok(L)) return false;
    if (kind > IDX_NEWAXIS || (kind == IDX_NEWAXIS && L->version < GF_FORMAT_NEWAXIS))
        return load_fail(L, "corrupt graph file: index kind %u", kind);
    it->kind = (IndexKind)kind;
    if (kind == IDX_SLICE && (it->step == 0 || it->step == INT64_MIN)) return load_fail(L, "corrupt graph file: slice step %lld", (long long)it->step);
    it->t = NULL;
    if (k >= 0) {
        if (kind != IDX_TENSOR || k >= g->nconsts) return load_fail(L, "corrupt graph file: index constant %d", k);
        it->t = tensor_retain(g->consts[k]);
    }
    return true;
}

static bool read_ins_arrays(Load *L, Ins *in) {
    Reader *r = &L->r;
    uint32_t nargs = wire_count(r, 4, 4096);
    if (!read_ok(L)) return false;
    in->args = mem_calloc(nargs + 1, sizeof(int));
    for (uint32_t k = 0; k < nargs; k++) in->args[k] = wire_get_i32(r);
    in->nargs = (int)nargs;
    uint8_t nres = wire_get_u8(r);
    if (nres > OP_MAX_OUT) return load_fail(L, "corrupt graph file: %u results", nres);
    for (int k = 0; k < nres; k++) in->res[k] = wire_get_i32(r);
    in->nres = nres;
    uint8_t nidx = wire_get_u8(r);
    if (!read_ok(L)) return false;
    if (nidx > TSL_MAX_RANK + 8) return load_fail(L, "corrupt graph file: %u index items", nidx);
    if (nidx) in->idx = mem_calloc(nidx, sizeof(IndexItem));
    for (int k = 0; k < nidx; k++) {
        in->nidx = k + 1;
        if (!read_index_item(L, &in->idx[k])) return false;
    }
    uint8_t nop = wire_get_u8(r);
    if (nop) in->opnds = mem_calloc(nop, sizeof(Opnd));
    for (int k = 0; k < nop; k++) {
        in->nopnds = k + 1;
        if (!read_opnd(L, &in->opnds[k], 0)) return false;
    }
    int32_t key = wire_get_i32(r);
    if (!read_ok(L)) return false;
    if (key >= 0) {
        if ((uint32_t)key >= L->nstrs) return load_fail(L, "corrupt graph file: string %d of %u", key, L->nstrs);
        in->key = mem_strndup(L->strs[key], strlen(L->strs[key]));
    } else if (key != -1) {
        return load_fail(L, "corrupt graph file: key %d", key);
    }
    if (wire_get_u8(r)) {
        /* an op's attributes, checked by its signature; earlier builds also wrote those of an op
         * that constant folding made a tconst: read, then dropped (nothing reads them) */
        in->attrs = mem_alloc(sizeof(OpAttrs));
        if (!read_attrs(L, in->op == I_OP ? (OpCode)in->aux : OP__COUNT, in->attrs)) return false;
        if (in->op != I_OP) {
            mem_free(in->attrs);
            in->attrs = NULL;
        }
    }
    uint32_t nsteps = wire_count(r, 21, MAX_STEPS);
    if (!read_ok(L)) return false;
    if (nsteps) in->steps = mem_calloc(nsteps, sizeof(FusedStep));
    for (uint32_t k = 0; k < nsteps; k++) {
        FusedStep *s = &in->steps[k];
        int32_t op = wire_get_i32(r);
        s->dst = wire_get_i32(r);
        s->a = wire_get_i32(r);
        s->b = wire_get_i32(r);
        s->scalar_reg = wire_get_i32(r);
        s->num_left = wire_get_u8(r) != 0;
        in->nsteps = (int)k + 1;
        if (!read_ok(L) || !get_op(L, op, &s->op)) return false;
    }
    return read_ok(L);
}

static bool read_ins(Load *L, Ins *in) {
    Reader *r = &L->r;
    uint8_t op = wire_get_u8(r);
    in->dst = wire_get_i32(r);
    in->a = wire_get_i32(r);
    in->b = wire_get_i32(r);
    in->c = wire_get_i32(r);
    int32_t aux = wire_get_i32(r);
    in->imm = wire_get_f64(r);
    in->loc.line = wire_get_i32(r);
    in->loc.col = wire_get_i32(r);
    in->src = L->src;
    if (!get_reg_shape(L, &in->shape)) return false;
    if (op >= I__COUNT || (op == I_EPILOGUE && L->version < GF_FORMAT_EPILOGUE) ||
        (op == I_DIM && L->version < GF_FORMAT_RUNTIME))
        return load_fail(L, "corrupt graph file: instruction code %u", op);
    in->op = (InsOp)op;
    in->aux = aux;
    if (op == I_OP || op == I_NBIN || op == I_NMATH) {
        OpCode c = OP__COUNT;
        if (!get_op(L, aux, &c)) return false;
        in->aux = (int)c;
    }
    return read_ins_arrays(L, in);
}

static bool read_code(Load *L) {
    open_section(L, GF_SEC_CODE);
    Graph *g = L->gf->g;
    uint32_t n = wire_count(&L->r, 54, MAX_CODE);
    if (!read_ok(L)) return false;
    g->code = mem_calloc(n + 1, sizeof(Ins));
    g->capcode = (int)n + 1;
    for (uint32_t i = 0; i < n; i++) {
        g->ncode = (int)i + 1;   /* counted first: graph_free frees a half-read instruction */
        g->code[i].dst = g->code[i].a = g->code[i].b = g->code[i].c = -1;
        if (!read_ins(L, &g->code[i])) return false;
    }
    if (!close_section(L)) return false;
    if (g->nstacks > g->ncode) return load_fail(L, "corrupt graph file: %d stacks for %d instructions", g->nstacks, g->ncode);
    L->stack_reg = mem_alloc(sizeof(int) * (size_t)(g->nstacks + 1));
    for (int i = 0; i < g->nstacks; i++) L->stack_reg[i] = -1;
    for (int i = 0; i < g->ncode; i++) {
        if (!load_verify_ins(L, &g->code[i])) return false;
        for (int k = 0; k < g->code[i].nopnds; k++)
            if (g->code[i].op != I_PRINT && g->code[i].op != I_ASSERT) return load_fail(L, "corrupt graph file: operands on a %s", ins_name(g->code[i].op));
    }
    return true;
}

static bool read_result(Load *L) {
    open_section(L, GF_SEC_RESULT);
    Graph *g = L->gf->g;
    g->has_result = wire_get_u8(&L->r) != 0;
    if (g->has_result && !read_opnd(L, &g->result, 0)) return false;
    return close_section(L);
}

GraphFile *graphfile_read(const uint8_t *data, size_t n, Source *src, bool check_sum, char *err, size_t errlen) {
    Load L;
    memset(&L, 0, sizeof L);
    L.data = data;
    L.n = n;
    L.err = err;
    L.errlen = errlen;
    L.src = src;
    L.gf = mem_calloc(1, sizeof(GraphFile));
    L.gf->g = mem_calloc(1, sizeof(Graph));
    L.gf->g->result.kind = OPND_CONST;
    bool ok = check_header(&L, check_sum) && read_section_table(&L) && read_strings(&L) && read_meta(&L) &&
              read_ops(&L) && read_regs(&L) && read_consts(&L) && read_inputs(&L) && read_guards(&L) &&
              read_bindings(&L) && read_code(&L) && read_result(&L);
    for (uint32_t i = 0; i < L.nstrs; i++) mem_free(L.strs[i]);
    mem_free(L.strs);
    mem_free(L.ops);
    mem_free(L.stack_reg);
    if (ok) graph_mark_runtime(L.gf->g);   /* Ins.rt: what the VM runs as eager code does */
    if (ok) return L.gf;
    graphfile_free(L.gf);
    return NULL;
}
