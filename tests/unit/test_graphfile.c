/* test_graphfile.c - the graph file (docs/format.md) as untrusted input: round trips give
 * the same bytes, and no prefix, bit flip or field value of a valid file crashes, leaks or
 * hangs the loader or the VM running what it accepted. Valid files come from export(). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "suites.h"
#include "helpers.h"
#include "graphfile.h"
#include "model.h"
#include "vm.h"

/* Small programs covering the instruction kinds: an op chain with a fused group, weights
 * read from globals, a dict argument, numbers (an input and a guard), a loop, a branch,
 * indexing, random draws, prints and a structured result; and one exported with symbolic
 * axes (format 4: run-time dims in registers and guards, dim, unique). */
static const char *const programs[] = {
    "seed(1)\nw = randn([3, 2])\nstatic fn f(x) { return tanh(x @ w) * 2 + 1 }\nexport(f, [randn([4, 3])], PATH)",
    "static fn f(m, x, n) {\n  y = x\n  for i in range(n) { y = y * m.a + m.b }\n  return [sum(y), { first: y[0], n: n }]\n}\n"
    "export(f, [{ a: randn([2]), b: randn([2]) }, randn([3, 2]), 2], PATH)",
    "static fn f(x, k) {\n  d = x * k\n  if sum(d) > 0 { d = -d }\n  print(\"d\", d[1:])\n  return d + randn(x.shape)\n}\n"
    "export(f, [randn([4]), 0.5], PATH)",
    "w = randn([3, 2])\nstatic fn f(x, y) {\n  h = tanh(x @ w) + 1\n  return [h[0:2], sum(h, axis=0), x.shape[0], unique(y)]\n}\n"
    "export(f, [randn([4, 3]), ones([5])], PATH, dynamic={ x: [0], y: [0] })",
};
#define NPROGRAMS (int)(sizeof programs / sizeof *programs)

static Interp *I;
static uint8_t *file[NPROGRAMS];
static size_t file_len[NPROGRAMS];

static uint8_t *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)len + 1);
    ck_assert_int_eq(fread(b, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return b;
}

/* Exports program k into file[k]. */
static void make_file(int k) {
    char path[256], code[1024], quoted[272];
    tmp_file(path, sizeof path, ".tslg");
    snprintf(quoted, sizeof quoted, "\"%s\"", path);
    const char *at = strstr(programs[k], "PATH");
    snprintf(code, sizeof code, "%.*s%s%s", (int)(at - programs[k]), programs[k], quoted, at + 4);
    ck_assert_msg(run_in(I, code) == 0, "export failed: %s", I->err_msg);
    file[k] = read_all(path, &file_len[k]);
    unlink(path);
}

/* The interpreter that exports is gone before the sweeps run: each run below has a session
 * of its own. */
static void setup(void) {
    I = interp_new();
    for (int k = 0; k < NPROGRAMS; k++) make_file(k);
    interp_free(I);
    I = NULL;
}

static void teardown(void) {
    for (int k = 0; k < NPROGRAMS; k++) free(file[k]);
}

/* Loads an image without the checksum and, when it loads, runs it once on zeros with an op
 * budget: whatever a damaged file holds, this must end with a result or an error. */
static bool load_and_run(const uint8_t *data, size_t n) {
    char err[512];
    Source src = { (char *)"<sweep>", NULL, NULL, 0, 0, NULL };
    GraphFile *gf = graphfile_read(data, n, &src, false, err, sizeof err);
    if (!gf) return false;
    Model *m = model_from_graphfile(gf, "<sweep>");
    int nin = model_num_inputs(m), nout = model_num_outputs(m);
    Tensor **in = calloc((size_t)nin + 1, sizeof(Tensor *)), **out = calloc((size_t)nout + 1, sizeof(Tensor *));
    for (int i = 0; i < nin; i++) {
        DType dt;
        Shape s;
        model_input_info(m, i, &dt, &s, NULL);
        for (int a = 0; a < s.ndim; a++)   /* an axis that takes any size: 3 */
            if (s.d[a] == SHAPE_RT) s.d[a] = 3;
        in[i] = tensor_zeros(dt, &s);
    }
    ModelSession *sess = model_session_new(m);
    ck_assert_ptr_nonnull(sess);
    model_session_set_limits(sess, 10000, 1 << 24);
    FILE *saved = stdout;   /* the graph may print */
    stdout = fopen("/dev/null", "w");
    if (model_run(sess, in, nin, out, err, sizeof err) == 0)
        for (int i = 0; i < nout; i++) tensor_release(out[i]);
    fclose(stdout);
    stdout = saved;
    model_session_free(sess);
    for (int i = 0; i < nin; i++) tensor_release(in[i]);
    free(in);
    free(out);
    model_free(m);
    return true;
}

START_TEST(graphfile_round_trip_same_bytes) {
    for (int k = 0; k < NPROGRAMS; k++) {
        char err[512];
        Source src = { (char *)"<rt>", NULL, NULL, 0, 0, NULL };
        GraphFile *gf = graphfile_read(file[k], file_len[k], &src, true, err, sizeof err);
        ck_assert_msg(gf != NULL, "program %d: %s", k, err);
        Writer w = { 0 };
        ck_assert_int_eq(graphfile_write(gf, &w, err, sizeof err), 0);
        ck_assert_uint_eq(w.len, file_len[k]);
        ck_assert_msg(!memcmp(w.p, file[k], w.len), "program %d: a re-export differs", k);
        mem_free(w.p);
        graphfile_free(gf);
    }
}
END_TEST

START_TEST(graphfile_loaded_equals_static) {
    char path[256], code[1024];
    tmp_file(path, sizeof path, ".tslg");
    snprintf(code, sizeof code, "seed(2)\nw = randn([5, 3])\nstatic fn f(x) { return softmax(relu(x @ w), axis=1) }\n"
             "x = randn([4, 5])\nexport(f, [x], \"%s\")\ng = load(\"%s\")\nsame = equal(g(x), f(x))", path, path);
    I = interp_new();
    ck_assert_int_eq(run_in(I, code), 0);
    int k = globals_find(&I->main->g, "same");
    ck_assert(I->main->g.vals[k].type == VAL_BOOL && I->main->g.vals[k].as.b);
    unlink(path);
    interp_free(I);
}
END_TEST

/* The tensor in global `name` of I's main module. */
static Tensor *global_tensor(const char *name) {
    int k = globals_find(&I->main->g, name);
    ck_assert_int_ge(k, 0);
    ck_assert(I->main->g.vals[k].type == VAL_TENSOR);
    return I->main->g.vals[k].as.t;
}

/* TSL_VM_DEVICE=1 sends a loaded graph through the device executor (exec_dev.c, on the CPU here)
 * as it sends static graphs: its results are the CPU executor's bit for bit, a fused group, a matmul
 * epilogue, a reduction and a random draw among them, and a call without it is back on the
 * CPU executor. */
START_TEST(graphfile_loaded_on_the_device_vm) {
    char path[256], code[1024];
    tmp_file(path, sizeof path, ".tslg");
    snprintf(code, sizeof code, "import nn\nseed(4)\nmodel = nn.mlp([6, 12, 3])\n"
             "static fn f(x) { h = model.forward(x)\n"
             "  return softmax(h * 0.5 + mean(h, axis=1, keepdims=true), axis=1) + rand(h.shape) }\n"
             "x = randn([7, 6])\nexport(f, [x], \"%s\")\ng = load(\"%s\")\n"
             "seed(9)\na = g(x)", path, path);
    unsetenv("TSL_VM_DEVICE");
    I = interp_new();
    ck_assert_int_eq(run_in(I, code), 0);
    const char *name;
    const Graph *g = model_loaded_graph(I->main->g.vals[globals_find(&I->main->g, "g")], &name);
    ck_assert_ptr_nonnull(g);
    ck_assert(!g->device_vm);
    setenv("TSL_VM_DEVICE", "1", 1);
    ck_assert_int_eq(run_in(I, "seed(9)\nb = g(x)"), 0);
    ck_assert(g->device_vm);
    unsetenv("TSL_VM_DEVICE");
    ck_assert_int_eq(run_in(I, "seed(9)\nc = g(x)"), 0);
    ck_assert(!g->device_vm);
    Tensor *a = global_tensor("a"), *b = global_tensor("b"), *c = global_tensor("c");
    ck_assert_int_eq(a->size, 21);
    ck_assert_int_eq(b->size, 21);
    ck_assert_int_eq(memcmp(a->data, b->data, 21 * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(a->data, c->data, 21 * sizeof(float)), 0);
    unlink(path);
    interp_free(I);
    I = NULL;
}
END_TEST

START_TEST(graphfile_every_prefix_rejected) {
    for (int k = 0; k < NPROGRAMS; k++)
        for (size_t n = 0; n < file_len[k]; n++) {
            char err[512];
            Source src = { (char *)"<t>", NULL, NULL, 0, 0, NULL };
            GraphFile *gf = graphfile_read(file[k], n, &src, true, err, sizeof err);
            ck_assert_msg(gf == NULL, "program %d: a prefix of %zu bytes loaded", k, n);
        }
}
END_TEST

START_TEST(graphfile_every_bit_flip_safe) {
    /* the smallest file, every bit, with the checksum off so the verifier sees each flip */
    int k = 0;
    for (int j = 1; j < NPROGRAMS; j++)
        if (file_len[j] < file_len[k]) k = j;
    uint8_t *b = malloc(file_len[k]);
    int loaded = 0;
    for (size_t i = 0; i < file_len[k] * 8; i++) {
        memcpy(b, file[k], file_len[k]);
        b[i / 8] ^= (uint8_t)(1u << (i % 8));
        loaded += load_and_run(b, file_len[k]);
    }
    free(b);
    /* flips in weights, locations and spare bits load; most others must not */
    ck_assert_int_gt(loaded, 0);
    ck_assert_int_lt(loaded, (int)(file_len[k] * 8));
    /* and with the checksum on, no flip loads at all */
    b = malloc(file_len[k]);
    for (size_t i = 0; i < file_len[k] * 8; i += 7) {
        memcpy(b, file[k], file_len[k]);
        b[i / 8] ^= (uint8_t)(1u << (i % 8));
        char err[512];
        Source src = { (char *)"<t>", NULL, NULL, 0, 0, NULL };
        ck_assert_ptr_null(graphfile_read(b, file_len[k], &src, true, err, sizeof err));
    }
    free(b);
}
END_TEST

typedef struct {
    size_t *at;
    int *width;
    int n, cap;
    const uint8_t *base;
} Fields;

static void note_field(const uint8_t *at, int width, void *ud) {
    Fields *f = ud;
    if (f->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 256;
        f->at = realloc(f->at, sizeof(size_t) * (size_t)f->cap);
        f->width = realloc(f->width, sizeof(int) * (size_t)f->cap);
    }
    f->at[f->n] = (size_t)(at - f->base);
    f->width[f->n++] = width;
}

static void put_field(uint8_t *p, int width, uint64_t v) {
    for (int i = 0; i < width; i++) p[i] = (uint8_t)(v >> (8 * i));
}

START_TEST(graphfile_every_field_extreme_values) {
    static const uint64_t values[] = { 0, 1, (uint64_t)-1, 2, 0x7fffffff, 0x80000000u, 0xffffffffu,
                                       0x8000000000000000ull, 0x7fffffffffffffffull };
    for (int k = 0; k < NPROGRAMS; k++) {
        Fields f = { NULL, NULL, 0, 0, file[k] };
        char err[512];
        Source src = { (char *)"<t>", NULL, NULL, 0, 0, NULL };
        wire_set_field_hook(note_field, &f);
        GraphFile *gf = graphfile_read(file[k], file_len[k], &src, true, err, sizeof err);
        wire_set_field_hook(NULL, NULL);
        ck_assert_msg(gf != NULL, "%s", err);
        graphfile_free(gf);
        for (size_t h = 8; h < GF_HEADER_BYTES; h += 4) note_field(file[k] + h, h >= 24 ? 8 : 4, &f);   /* the header */
        ck_assert_int_gt(f.n, 50);
        uint8_t *b = malloc(file_len[k]);
        for (int i = 0; i < f.n; i++)
            for (size_t v = 0; v < sizeof values / sizeof *values; v++) {
                if (f.width[i] == 1 && v > 3) continue;
                memcpy(b, file[k], file_len[k]);
                put_field(b + f.at[i], f.width[i], values[v]);
                load_and_run(b, file_len[k]);
            }
        free(b);
        free(f.at);
        free(f.width);
    }
}
END_TEST

/* A valid header whose fields are then changed: the reasons named. */
static const char *header_error(void (*patch)(uint8_t *b, size_t n)) {
    static char err[512];
    size_t n = file_len[0];
    uint8_t *b = malloc(n);
    memcpy(b, file[0], n);
    patch(b, n);
    Source src = { (char *)"<t>", NULL, NULL, 0, 0, NULL };
    GraphFile *gf = graphfile_read(b, n, &src, false, err, sizeof err);
    free(b);
    ck_assert_ptr_null(gf);
    return err;
}
static void newer_format(uint8_t *b, size_t n) { put_field(b + 12, 4, GF_FORMAT_VERSION + 1); }
static void newer_opset(uint8_t *b, size_t n) { put_field(b + 16, 4, 7); }
static void big_endian(uint8_t *b, size_t n) { put_field(b + 8, 4, 0x0D0C0B0Au); }
static void huge_code_count(uint8_t *b, size_t n) {
    uint64_t off = wire_le64(b + GF_HEADER_BYTES + (GF_SEC_CODE - 1) * GF_SECTION_BYTES + 8);
    put_field(b + off, 4, 0xffffffffu);
}

START_TEST(graphfile_versions_and_counts_named) {
    char want[200];
    snprintf(want, sizeof want, "the graph file has format version %u; this build reads format version %u",
             GF_FORMAT_VERSION + 1, GF_FORMAT_VERSION);
    ck_assert_str_eq(header_error(newer_format), want);
    snprintf(want, sizeof want, "the graph file uses op set version 7; this build has op set version %u", GF_OPSET_VERSION);
    ck_assert_str_eq(header_error(newer_opset), want);
    ck_assert_str_eq(header_error(big_endian), "the graph file is big-endian; this build reads little-endian files");
    ck_assert_str_eq(header_error(huge_code_count), "corrupt graph file: the code section is truncated");
}
END_TEST

/* 100 bytes that claim 2^32-1 instructions: refused before anything is allocated for them. */
START_TEST(graphfile_small_file_huge_claims) {
    uint8_t b[100];
    memset(b, 0xff, sizeof b);
    memcpy(b, GF_MAGIC, GF_MAGIC_BYTES);
    put_field(b + 8, 4, GF_ENDIAN_TAG);
    put_field(b + 12, 4, GF_FORMAT_VERSION);
    put_field(b + 16, 4, GF_OPSET_VERSION);
    put_field(b + 20, 4, GF_SEC_END - 1);
    put_field(b + 24, 8, sizeof b);
    put_field(b + 40, 8, 0);
    char err[512];
    Source src = { (char *)"<t>", NULL, NULL, 0, 0, NULL };
    ck_assert_ptr_null(graphfile_read(b, sizeof b, &src, false, err, sizeof err));
    ck_assert_str_eq(err, "the graph file is truncated in its section table");
    /* and a file whose sections all fit but whose code count is 2^32-1 */
    ck_assert_str_eq(header_error(huge_code_count), "corrupt graph file: the code section is truncated");
}
END_TEST

/* The file stores instruction codes as numbers (docs/format.md lists them): a change to
 * vm/opcodes.def is a new format version. Version 2 added code 23, epilogue; version 3 an
 * index item kind (a new axis), no instruction; version 4 code 32, dim; version 5 a second
 * bool attribute and an epilogue's transpose_b, no instruction. Codes 24 select
 * and 25 rowset are never in a file (export refuses them, verify calls them unknown). */
START_TEST(graphfile_instruction_codes_are_format_2) {
    static const char *const v2[] = { "nconst", "nmove", "nbin", "nneg", "nnot", "nmath", "tconst", "scalar",
                                      "tmove", "op", "index", "index_set", "seed", "item", "truth", "jump",
                                      "jumpf", "print", "assert", "store", "push", "pop", "fused", "epilogue" };
    int n = (int)(sizeof v2 / sizeof *v2);
    ck_assert_uint_eq(GF_FORMAT_VERSION, 5);
    ck_assert_int_eq(I_DIM, 32);
    ck_assert_str_eq(ins_name(I_DIM), "dim");
    /* the instructions after them (select ... dset) are never in a file: export refuses
     * them and load_verify_ins rejects them */
    ck_assert_int_eq(I_SELECT, n);
    for (int i = 0; i < n; i++) ck_assert_str_eq(ins_name((InsOp)i), v2[i]);
}
END_TEST

/* A file says the lowest format version that holds its instructions: program 0 has a matmul
 * epilogue (version 2), program 1 none (version 1, which older builds read). A version-1 file
 * that holds an epilogue is refused. */
START_TEST(graphfile_epilogue_needs_format_2) {
    uint32_t v0, v1;
    memcpy(&v0, file[0] + 12, 4);
    memcpy(&v1, file[1] + 12, 4);
    ck_assert_uint_eq(v0, 2);
    ck_assert_uint_eq(v1, 1);
    uint8_t *b = malloc(file_len[0]);
    memcpy(b, file[0], file_len[0]);
    b[12] = 1;
    char err[512];
    Source src = { (char *)"<v1>", NULL, NULL, 0, 0, NULL };
    ck_assert_ptr_null(graphfile_read(b, file_len[0], &src, false, err, sizeof err));
    ck_assert_str_eq(err, "corrupt graph file: instruction code 23");
    free(b);
}
END_TEST

/* ---------- crafted files: what the compiler never emits (issue 24) ---------- */

/* The bytes export() writes for `program` (PATH stands for the file's path). */
static uint8_t *export_bytes(const char *program, size_t *n) {
    char path[256], code[2048], quoted[272];
    tmp_file(path, sizeof path, ".tslg");
    snprintf(quoted, sizeof quoted, "\"%s\"", path);
    const char *at = strstr(program, "PATH");
    snprintf(code, sizeof code, "%.*s%s%s", (int)(at - program), program, quoted, at + 4);
    Interp *J = interp_new();
    ck_assert_msg(run_in(J, code) == 0, "export failed: %s", J->err_msg);
    interp_free(J);
    uint8_t *b = read_all(path, n);
    unlink(path);
    return b;
}

/* A file that differs from an export of `program` only where `mutate` changed its loaded
 * program (as a hand-made file could), written with a valid checksum; `which` picks among
 * the changes mutate knows. NULL when mutate finds nothing to change. */
typedef bool (*Mutate)(Graph *g, int which);
static uint8_t *crafted(const uint8_t *file_bytes, size_t n, Mutate mutate, int which, size_t *out_n) {
    char err[512];
    Source src = { (char *)"<craft>", NULL, NULL, 0, 0, NULL };
    GraphFile *gf = graphfile_read(file_bytes, n, &src, true, err, sizeof err);
    ck_assert_msg(gf != NULL, "the export does not load: %s", err);
    uint8_t *b = NULL;
    if (mutate(gf->g, which)) {
        Writer w = { 0 };
        ck_assert_int_eq(graphfile_write(gf, &w, err, sizeof err), 0);
        b = w.p;
        *out_n = w.len;
    }
    graphfile_free(gf);
    return b;
}

/* The loader refuses b (checksum and all valid) with a message containing `want`. */
static void refused(uint8_t *b, size_t n, const char *want, const char *what) {
    char err[512];
    Source src = { (char *)"<craft>", NULL, NULL, 0, 0, NULL };
    GraphFile *gf = graphfile_read(b, n, &src, true, err, sizeof err);
    if (gf) load_and_run(b, n);   /* what accepting it led to (under ASan: the report) */
    ck_assert_msg(gf == NULL, "%s: loaded", what);
    ck_assert_msg(strstr(err, want), "%s: refused with '%s', not '%s'", what, err, want);
    mem_free(b);
}

/* Every tensor register and tensor guard of g made dtype dt (a graph the compiler would
 * have typed so for inputs of dt, but for what its instructions then allow). */
static void retype(Graph *g, DType dt) {
    for (int r = 0; r < g->nregs; r++)
        if (g->regs[r].kind == R_TENSOR) g->regs[r].dtype = dt;
    for (int i = 0; i < g->nguards; i++)
        if (g->guards[i].kind == G_TENSOR) g->guards[i].dtype = dt;
}

/* Operand 0 of the which-th op whose first parameter takes no number, given a number
 * register instead (the graph's number input). */
static bool number_for_tensor(Graph *g, int which) {
    int num = -1;
    for (int r = 0; r < g->nregs && num < 0; r++)
        if (g->regs[r].kind == R_NUM) num = r;
    ck_assert_int_ge(num, 0);
    for (int i = 0; i < g->ncode; i++) {
        Ins *in = &g->code[i];
        if (in->op != I_OP || in->nargs < 1) continue;
        const OpDef *d = op_def((OpCode)in->aux);
        if (op_param_takes_number(d, d->params[0].type) || which-- > 0) continue;
        in->args[0] = num;
        return true;
    }
    return false;
}

/* The graph verifier checks every op's operands against the op table's signature: a number
 * register where reshape, flatten, expand_dims, squeeze, sum, mean, transpose, tile, pad,
 * take, astype, cumsum, sort, softmax, ... take a tensor (the VM handed their kernels a NULL
 * tensor) is refused, one op at a time, for every such op of the program. */
START_TEST(graphfile_number_register_for_a_tensor) {
    size_t n, m;
    uint8_t *file_bytes = export_bytes(
        "static fn f(x, k) {\n  y = x * k\n"
        "  return [reshape(y, [6]), flatten(y), expand_dims(y, 0), squeeze(expand_dims(y, 0), axis=0), sum(y, axis=0),\n"
        "    mean(y), transpose(y), tile(y, [2, 1]), pad(y, [[1, 1], [0, 0]], k), take(y, astype(y > 0, \"i64\")),\n"
        "    astype(y, \"f64\"), cumsum(y), sort(y), softmax(y), argmax(y), diff(y), broadcast_to(y, [4, 2, 3]),\n"
        "    concat([y, y]), stack([y, y]), repeat(y, 2), trace(y[:, :2]), inv(y[:, :2]), outer(y, y)]\n}\n"
        "export(f, [randn([2, 3]), 0.5], PATH)", &n);
    load_and_run(file_bytes, n);   /* as exported: it loads and runs */
    int count = 0;
    for (uint8_t *b; (b = crafted(file_bytes, n, number_for_tensor, count, &m)); count++) {
        char what[32];
        snprintf(what, sizeof what, "op %d", count);
        refused(b, m, "is a number register where the op takes a tensor", what);
    }
    ck_assert_int_ge(count, 20);
    free(file_bytes);
}
END_TEST

/* allreduce's op: the which-th of out of range values; with which >= 2 on a bool graph, the
 * graph the issue showed (the verifier's own inference named redop_names[10^8]). */
static bool bad_redop(Graph *g, int which) {
    static const int64_t values[] = { 4, -1, 100000000, 100000000 };
    if (which >= 4) return false;
    if (which == 3) retype(g, DT_BOOL);
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_OP && g->code[i].aux == OP_ALLREDUCE) g->code[i].attrs->i[0] = values[which];
    return true;
}
static bool bad_dtype_attr(Graph *g, int which) {
    static const int dts[] = { 4, -2, 1 << 30 };
    if (which >= 3) return false;
    for (int i = 0; i < g->ncode; i++)
        if (g->code[i].op == I_OP && g->code[i].aux == OP_ASTYPE) g->code[i].attrs->dtype = dts[which];
    return true;
}

/* Every enum attribute (a redop, a dtype) is range-checked when the file is decoded, from
 * the op table, before any inference reads a table with it. */
START_TEST(graphfile_enum_attributes_range_checked) {
    size_t n, m;
    uint8_t *file_bytes = export_bytes("static fn f(x) { return allreduce(x, op=\"max\") }\nexport(f, [randn([3])], PATH)", &n);
    load_and_run(file_bytes, n);
    uint8_t *b;
    for (int k = 0; (b = crafted(file_bytes, n, bad_redop, k, &m)); k++) refused(b, m, "allreduce() with op ", "redop");
    free(file_bytes);
    file_bytes = export_bytes("static fn f(x) { return astype(x, \"i64\") }\nexport(f, [randn([3])], PATH)", &n);
    for (int k = 0; (b = crafted(file_bytes, n, bad_dtype_attr, k, &m)); k++) refused(b, m, "astype() with dtype ", "dtype");
    free(file_bytes);
}
END_TEST

/* A fused group as the fusion pass never makes it: over bool or i64 (the pass fuses f32 and
 * f64 only; a bool chain of 4096 elements ran off its arrays with an 8-byte stride, an i64
 * one gave zeros), or a step reading a temporary no step kept. */
static bool fused_retyped(Graph *g, int which) {
    if (which >= 2) return false;
    retype(g, which ? DT_I64 : DT_BOOL);
    return true;
}
static bool fused_unwritten_temp(Graph *g, int which) {
    for (int i = 0; i < g->ncode && which == 0; i++)
        if (g->code[i].op == I_FUSED && g->code[i].steps[0].dst == 0) {
            g->code[i].steps[0].dst = -g->code[i].dst - 1;   /* step 0 writes the group's register */
            return true;                                       /* and step 1 still reads temporary 0 */
        }
    return false;
}

START_TEST(graphfile_fused_group_as_the_pass_makes_it) {
    size_t n, m;
    uint8_t *file_bytes = export_bytes("static fn f(x, y) { return (x + y) * y - x }\n"
                                       "export(f, [randn([4096]), randn([4096])], PATH)", &n);
    char err[512];
    Source src = { (char *)"<craft>", NULL, NULL, 0, 0, NULL };
    GraphFile *gf = graphfile_read(file_bytes, n, &src, true, err, sizeof err);
    ck_assert_ptr_nonnull(gf);
    bool fused = false;
    for (int i = 0; i < gf->g->ncode; i++) fused = fused || gf->g->code[i].op == I_FUSED;
    ck_assert_msg(fused, "the program has no fused group to craft from");
    graphfile_free(gf);
    load_and_run(file_bytes, n);
    uint8_t *b;
    for (int k = 0; (b = crafted(file_bytes, n, fused_retyped, k, &m)); k++)
        refused(b, m, k ? "a fused group of 4096 i64 elements" : "a fused group of 4096 bool elements", "fused type");
    ck_assert_ptr_nonnull(b = crafted(file_bytes, n, fused_unwritten_temp, 0, &m));
    refused(b, m, "step 1 of a fused group refers to the wrong operands", "unwritten temporary");
    free(file_bytes);
}
END_TEST

/* An index with a new axis (`x[:, nil]`, item kind 4) makes a file of format 3, which loads
 * and runs; the same bytes claiming format 2 are refused, as a format-2 build would refuse
 * the kind. */
START_TEST(graphfile_new_axis_needs_format_3) {
    size_t n;
    uint8_t *b = export_bytes("static fn f(x) { return x[:, nil] * x[nil, 1:] }\nexport(f, [ones([3])], PATH)", &n);
    uint32_t v;
    memcpy(&v, b + 12, 4);
    ck_assert_uint_eq(v, 3);
    ck_assert(load_and_run(b, n));
    b[12] = 2;
    char err[512];
    Source src = { (char *)"<v2>", NULL, NULL, 0, 0, NULL };
    ck_assert_ptr_null(graphfile_read(b, n, &src, false, err, sizeof err));
    ck_assert_str_eq(err, "corrupt graph file: index kind 4");
    free(b);
}
END_TEST

/* ---------- run-time dimensions (export's dynamic=, format 4) ---------- */

/* program 3 (symbolic axes) is format 4 and runs at any size; the same bytes claiming format
 * 3 are refused, as a format-3 build refuses a dimension of -1. The same function exported
 * without dynamic= is an older format. */
START_TEST(graphfile_runtime_dims_need_format_4) {
    uint32_t v;
    memcpy(&v, file[3] + 12, 4);
    ck_assert_uint_eq(v, 4);
    ck_assert(load_and_run(file[3], file_len[3]));
    uint8_t *b = malloc(file_len[3]);
    memcpy(b, file[3], file_len[3]);
    b[12] = 3;
    char err[512];
    Source src = { (char *)"<v3>", NULL, NULL, 0, 0, NULL };
    ck_assert_ptr_null(graphfile_read(b, file_len[3], &src, false, err, sizeof err));
    ck_assert_str_eq(err, "corrupt graph file: a shape dimension of -1 in the registers section");
    free(b);
    size_t n;
    b = export_bytes("w = randn([3, 2])\nstatic fn f(x) { return tanh(x @ w) + 1 }\nexport(f, [randn([4, 3])], PATH)", &n);
    memcpy(&v, b + 12, 4);
    ck_assert_uint_lt(v, 4);
    free(b);
}
END_TEST

/* The which-th tensor register with a run-time dim, given a fixed size there instead (2). */
static bool pin_runtime_dim(Graph *g, int which) {
    for (int r = 0; r < g->nregs; r++) {
        Shape *s = &g->regs[r].shape;
        if (g->regs[r].kind != R_TENSOR || !shape_is_runtime(s) || which-- > 0) continue;
        for (int a = 0; a < s->ndim; a++)
            if (s->d[a] == SHAPE_RT) s->d[a] = 2;
        for (int i = 0; i < g->nguards; i++)   /* a guard keeps its register's type */
            if (g->guards[i].reg == r && g->guards[i].kind == G_TENSOR) g->guards[i].shape = *s;
        return true;
    }
    return false;
}
/* A dim instruction reading an axis its register does not have. */
static bool dim_out_of_range(Graph *g, int which) {
    for (int i = 0; i < g->ncode && which == 0; i++)
        if (g->code[i].op == I_DIM) {
            g->code[i].aux = g->regs[g->code[i].a].shape.ndim;
            return true;
        }
    return false;
}

/* A file that pins a size the run decides: an op's result is refused by the verifier's
 * inference; an index's (x[0:2] of a run-time x: 2 rows, or fewer) loads, and then the VM
 * refuses the run whose result does not have it (1 row), naming the shapes. A dim of an axis
 * that is not there is refused. */
START_TEST(graphfile_runtime_dims_checked) {
    size_t n, m;
    uint8_t *file_bytes = export_bytes("w = randn([3, 2])\nstatic fn f(x) {\n  h = tanh(x @ w)\n  return [h[0:2], x.shape[0]]\n}\n"
                                       "export(f, [randn([4, 3])], PATH, dynamic={ x: [0] })", &n);
    ck_assert(load_and_run(file_bytes, n));
    uint8_t *b;
    int loaded = 0, count = 0;
    for (; (b = crafted(file_bytes, n, pin_runtime_dim, count, &m)); count++) {
        char err[512];
        Source src = { (char *)"<craft>", NULL, NULL, 0, 0, NULL };
        GraphFile *gf = graphfile_read(b, m, &src, true, err, sizeof err);
        if (!gf) {
            ck_assert_msg(strstr(err, "has the wrong type") || strstr(err, "differs from its register"), "%s", err);
        } else {   /* the index's result pinned to [2, 2]: a run of 1 row gives [1, 2] */
            loaded++;
            Model *model = model_from_graphfile(gf, "<craft>");
            ModelSession *sess = model_session_new(model);
            DType dt;
            Shape s;
            model_input_info(model, 0, &dt, &s, NULL);
            if (s.d[0] == SHAPE_RT) s.d[0] = 1;
            Tensor *in = tensor_zeros(dt, &s), *out[2] = { NULL, NULL };
            ck_assert_int_ne(model_run(sess, &in, 1, out, err, sizeof err), 0);
            ck_assert_msg(strstr(err, "a result of shape [1, 2] where the graph has [2, 2] (a corrupt graph)"), "%s", err);
            tensor_release(in);
            model_session_free(sess);
            model_free(model);
        }
        mem_free(b);
    }
    ck_assert_int_ge(count, 3);
    ck_assert_int_eq(loaded, 1);
    ck_assert_ptr_nonnull(b = crafted(file_bytes, n, dim_out_of_range, 0, &m));
    refused(b, m, "corrupt graph file: dim of axis 2 of a rank-2 register", "dim");
    free(file_bytes);
}
END_TEST

Suite *graphfile_suite(void) {
    Suite *s = suite_create("graphfile");
    TCase *t = tcase_create("graphfile");
    tcase_set_timeout(t, 600);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, graphfile_round_trip_same_bytes);
    tcase_add_test(t, graphfile_loaded_equals_static);
    tcase_add_test(t, graphfile_loaded_on_the_device_vm);
    tcase_add_test(t, graphfile_every_prefix_rejected);
    tcase_add_test(t, graphfile_every_bit_flip_safe);
    tcase_add_test(t, graphfile_every_field_extreme_values);
    tcase_add_test(t, graphfile_versions_and_counts_named);
    tcase_add_test(t, graphfile_small_file_huge_claims);
    tcase_add_test(t, graphfile_instruction_codes_are_format_2);
    tcase_add_test(t, graphfile_epilogue_needs_format_2);
    tcase_add_test(t, graphfile_new_axis_needs_format_3);
    tcase_add_test(t, graphfile_runtime_dims_need_format_4);
    tcase_add_test(t, graphfile_runtime_dims_checked);
    tcase_add_test(t, graphfile_number_register_for_a_tensor);
    tcase_add_test(t, graphfile_enum_attributes_range_checked);
    tcase_add_test(t, graphfile_fused_group_as_the_pass_makes_it);
    suite_add_tcase(s, t);
    return s;
}
