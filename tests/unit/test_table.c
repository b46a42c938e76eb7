/* test_table.c - checks generated from the op table (ops/ops.def), with no per-op code.
 *
 * table_meta: every row has a doc string and a well-formed parsed signature, every F_SYNTAX
 * op has an operator symbol (and op_by_symbol finds it), op_by_name finds every other op.
 *
 * table_op (one loop iteration per op): for each input dtype (f32, f64, i64, bool), each
 * input shape ([3, 4], and [3, 3] so that the linear algebra ops can succeed) and each way of
 * calling the op, a call is synthesised from the op's parsed signature alone:
 *   call  required parameters only, positionally
 *   full  every parameter, optional ones as keywords
 *   op    the operator (op_info[op].symbol), for ops that have one
 *   weak  the second tensor operand a number variable (a weak scalar); weakl: the first
 *   chain every tensor operand computed in the block by an elementwise op (maximum(x, x)),
 *         so that elementwise ops fuse with it and the others read an intermediate;
 *         chainw / chainl: the same with the second / first operand a weak scalar
 *   num   F_NUM ops on number (or bool) variables only
 * Each call runs three ways, in a fresh interpreter (random ops after the same seed):
 *   eager                     `r_eager = CALL`
 *   static                    `static { r_fused = CALL }`
 *   static with TSL_OPT=-fuse `static { r_nofus = CALL }`
 * and the three must either all fail with the same message at the same place, or all
 * succeed with bit-identical results (dtype, shape and bits of tensors; bits of numbers;
 * lists item by item). The static blocks must compile (no eager fallback, seen through
 * TSL_EXPLAIN and the block's graph cache) except for F_DYNAMIC ops, and the graph must
 * hold the op itself (an OP instruction, a fused step or a number op). Then each of the
 * three runs again as a loop of three runs on rotated operands (the static graph warm, its
 * buffers reused): the lists of results must be identical after the last run, with one
 * compiled graph; and no operand tensor may have changed.
 *
 * Disagreements that are known and not fixed yet are listed in KNOWN below: a case that
 * fails and matches an entry is tolerated; an entry that matches no failing case of its op
 * fails the test (remove it once fixed).
 *
 * TSL_TABLE_VERBOSE=1 prints every case (snippet and outcome) to stderr. */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "suites.h"
#include "helpers.h"
#include "parse.h"
#include "opcall.h"
#include "vm.h"

/* ---------- known disagreements ---------- */

/* FK_PARSE the synthesised call is not valid TSL; FK_FALLBACK a static block ran eagerly (or
 * its graph does not compute the op); FK_RC one way fails and another succeeds; FK_MSG all
 * fail, not with the same message at the same place; FK_DIFF results differ; FK_WARM a
 * block run again (its graph warm, buffers reused) gives another result, changes an earlier
 * result, or recompiles; FK_INPUT an operand tensor changed. */
typedef enum { FK_NONE, FK_PARSE, FK_FALLBACK, FK_RC, FK_MSG, FK_DIFF, FK_WARM, FK_INPUT, FK_ANY } FailKind;
static const char *const fail_kind_name[] = { "none", "parse", "fallback", "rc", "msg", "diff", "warm", "input", "any" };

typedef struct {
    const char *op;        /* exact op name */
    const char *pattern;   /* fnmatch pattern over "DTYPE/SHAPE/FORM", e.g. "bool/3x4/call" */
    FailKind kind;         /* what goes wrong (FK_ANY: any kind) */
    const char *why;
} Known;

/* Each entry: a real problem found by this suite, not fixed yet. Removing an entry makes its
 * cases fail again. */
static const Known KNOWN[] = {
    { NULL, NULL, FK_NONE, NULL },
};

/* ---------- synthesised inputs ---------- */

static const char *const DTYPES[] = { "f32", "f64", "i64", "bool" };
enum { NDT = 4 };

typedef struct {
    const char *name;      /* "3x4" */
    int rows, cols;
    double x[3][12], y[3][12], z[3][12];   /* [float, i64, bool] */
} Variant;

/* x, y, z per shape: float values mixed in sign with a repeat (sort stability, ties) and a
 * zero; y nonzero (division); the square x is symmetric positive definite in every dtype
 * (cholesky, solve, inv...), y and z not symmetric. */
static const Variant VARIANTS[] = {
    { "3x4", 3, 4,
      { { -0.9, 0.35, -0.2, 0.0, 0.5, 0.85, -0.75, 0.35, 0.05, -0.4, 0.7, 0.95 },
        { -3, 2, 0, 5, 1, -1, 4, 2, -2, 3, 6, -4 },
        { 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1 } },
      { { 1.5, 0.25, 2.0, -1.25, 0.75, 3.0, -0.5, 1.0, 2.5, 0.125, -2.0, 0.6 },
        { 2, -3, 1, 4, 3, 2, -2, 1, 5, 1, 2, -1 },
        { 1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1 } },
      { { 0.3, -1.1, 0.8, 2.2, -0.6, 0.0, 1.4, -2.5, 0.9, 0.45, -0.05, 1.7 },
        { -1, 0, 7, 2, 3, -5, 1, 1, 0, 2, -3, 4 },
        { 0, 1, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1 } } },
    { "3x3", 3, 3,
      { { 2.5, 0.5, -0.25, 0.5, 1.75, 0.5, -0.25, 0.5, 1.5 },
        { 4, 1, -1, 1, 3, 1, -1, 1, 2 },
        { 1, 0, 0, 0, 1, 0, 0, 0, 1 } },
      { { 1.0, -2.0, 0.5, 0.25, 1.5, -1.0, 2.0, 0.75, 3.0 },
        { 2, -1, 3, 1, 4, -2, 3, 1, 1 },
        { 1, 0, 1, 0, 1, 0, 1, 1, 0 } },
      { { -0.5, 1.25, 0.0, 2.0, -1.5, 0.75, 0.3, 0.6, -0.9 },
        { 0, 2, -1, 3, -2, 1, 1, 1, 5 },
        { 0, 1, 0, 1, 0, 1, 1, 1, 1 } } },
};
enum { NVAR = 2 };

typedef enum { FORM_CALL, FORM_FULL, FORM_OP, FORM_WEAK, FORM_WEAKL, FORM_CHAIN, FORM_CHAINW, FORM_CHAINL, FORM_NUM, NFORMS } Form;
static const char *const FORM_NAME[] = { "call", "full", "op", "weak", "weakl", "chain", "chainw", "chainl", "num" };

/* A growable string. */
typedef struct {
    char *s;
    size_t len, cap;
} Buf;

static void bputs(Buf *b, const char *s) {
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->s = realloc(b->s, b->cap);
    }
    memcpy(b->s + b->len, s, n + 1);
    b->len += n;
}
static void bprintf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(Buf *b, const char *fmt, ...) {
    char tmp[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    bputs(b, tmp);
}

/* `tensor([[...], ...], dtype="D")` for one of x, y, z. */
static void tensor_literal(Buf *b, const Variant *v, const double (*vals)[12], int dt) {
    const double *d = vals[dt <= 1 ? 0 : dt - 1];
    bputs(b, "tensor([");
    for (int r = 0; r < v->rows; r++) {
        bputs(b, r ? ", [" : "[");
        for (int c = 0; c < v->cols; c++) {
            double e = d[r * v->cols + c];
            if (c) bputs(b, ", ");
            if (dt == 3) bputs(b, e != 0 ? "true" : "false");
            else if (dt == 2) bprintf(b, "%d", (int)e);
            else bprintf(b, "%.17g", e);
        }
        bputs(b, "]");
    }
    bprintf(b, "], dtype=\"%s\")", DTYPES[dt]);
}

/* The variables every snippet may read: tensors x, y, z; T? bounds lo0, hi0; the N operand
 * n0; the weak scalar w0; the number operands a0, b0 (num form). */
static void setup_source(Buf *b, const Variant *v, int dt) {
    bputs(b, "x = ");
    tensor_literal(b, v, v->x, dt);
    bputs(b, "\ny = ");
    tensor_literal(b, v, v->y, dt);
    bputs(b, "\nz = ");
    tensor_literal(b, v, v->z, dt);
    bputs(b, "\nlo0 = -0.5\nhi0 = 0.5\nn0 = 2\n");
    static const char *const weak[] = { "0.75", "0.75", "3", "true" };
    static const char *const a0[] = { "0.375", "0.375", "3", "true" };
    static const char *const b0[] = { "-1.25", "-1.25", "-2", "false" };
    bprintf(b, "w0 = %s\na0 = %s\nb0 = %s\n", weak[dt], a0[dt], b0[dt]);
}

static bool is_operand_type(ParamType t) { return t == P_T || t == P_TOPT || t == P_TS || t == P_N; }

/* Whether the op reads a tensor operand (else the dtype and shape of x do not matter). */
static bool has_tensor_operand(const OpDef *d) {
    for (int p = 0; p < d->nparams; p++)
        if (d->params[p].type == P_T || d->params[p].type == P_TOPT || d->params[p].type == P_TS) return true;
    return false;
}

static int count_type(const OpDef *d, ParamType t) {
    int n = 0;
    for (int p = 0; p < d->nparams; p++) n += d->params[p].type == t;
    return n;
}

/* How a form passes the op's tensor operands (T parameters): as is, through an elementwise
 * op computed in the same block (so that elementwise ops fuse with it and others read an
 * intermediate), as a number variable (a weak scalar), or as numbers only. */
typedef enum { TM_PLAIN, TM_WRAP, TM_WEAK, TM_NUM } TMode;

static TMode t_mode(Form form, int k) {
    switch (form) {
    case FORM_WEAK: return k == 1 ? TM_WEAK : TM_PLAIN;
    case FORM_WEAKL: return k == 0 ? TM_WEAK : TM_PLAIN;
    case FORM_CHAIN: return TM_WRAP;
    case FORM_CHAINW: return k == 1 ? TM_WEAK : TM_WRAP;
    case FORM_CHAINL: return k == 0 ? TM_WEAK : TM_WRAP;
    case FORM_NUM: return TM_NUM;
    default: return TM_PLAIN;
    }
}

/* One argument's text for parameter p, the k-th of its type. */
static void arg_text(Buf *b, const OpDef *d, int p, int k, const Variant *v, int dt, Form form) {
    static const char *const tnames[] = { "x", "y", "z" };
    static const char *const numnames[] = { "a0", "b0", "a0" };
    static const char *const ints[] = { "2", "5", "3" };
    static const char *const fs[] = { "3", "7", "2" };
    switch (d->params[p].type) {
    case P_T:
        switch (t_mode(form, k)) {
        case TM_PLAIN: bputs(b, tnames[k % 3]); break;
        case TM_WRAP: bprintf(b, "maximum(%s, %s)", tnames[k % 3], tnames[k % 3]); break;
        case TM_WEAK: bputs(b, "w0"); break;
        case TM_NUM: bputs(b, numnames[k % 3]); break;
        }
        break;
    case P_TOPT: bputs(b, k == 0 ? "lo0" : "hi0"); break;
    case P_TS: bputs(b, t_mode(form, 0) == TM_WRAP ? "[maximum(x, x), maximum(y, y)]" : "[x, y]"); break;
    case P_N: bputs(b, "n0"); break;
    case P_AXIS: bputs(b, "-1"); break;
    case P_AXES: bputs(b, "[0]"); break;
    case P_BOOL: bputs(b, "true"); break;
    case P_INT: bputs(b, ints[k % 3]); break;
    case P_F: bputs(b, fs[k % 3]); break;
    case P_SHAPE: bprintf(b, "[2, %d, %d]", v->rows, v->cols); break;
    case P_SHAPE_M1: bprintf(b, "[%d, -1]", v->cols); break;
    case P_PAIRS: bputs(b, "[[1, 0], [0, 2]]"); break;
    case P_WIN: bputs(b, "1"); break;
    case P_PADW: bputs(b, "0"); break;
    case P_REDOP: bputs(b, "\"max\""); break;
    case P_CHOICE: bprintf(b, "\"%.*s\"", (int)strcspn(d->params[p].choices, "|"), d->params[p].choices); break;
    case P_DTYPE: bprintf(b, "\"%s\"", DTYPES[(dt + 1) % NDT]); break;   /* a conversion */
    }
}

/* Whether an F_SYNTAX row without a symbol is reached through a choice of another row
 * (gelu_tanh: gelu's approximate="tanh"): that row is its name's start, with a P_CHOICE. */
static bool by_choice(const OpDef *d) {
    for (int q = 0; q < OP__COUNT; q++) {
        const OpDef *o = &op_info[q];
        size_t n = strlen(o->name);
        if (o == d || strncmp(o->name, d->name, n) || d->name[n] != '_') continue;
        for (int p = 0; p < o->nparams; p++)
            if (o->params[p].type == P_CHOICE) return true;
    }
    return false;
}

/* The expression for one form, or false when the form does not apply to the op. */
static bool build_call(Buf *b, const OpDef *d, const Variant *v, int dt, Form form) {
    int nt = count_type(d, P_T);
    bool syntax = d->flags & F_SYNTAX;
    bool optional_given = false;
    int nt_req = 0;   /* the weak forms pass numbers for the tensors the call writes (not defaults) */
    for (int p = 0; p < d->nparams; p++) {
        optional_given |= !d->params[p].required;
        nt_req += d->params[p].type == P_T && d->params[p].required;
    }
    switch (form) {
    case FORM_CALL: if (syntax) return false; break;
    case FORM_FULL: if (syntax || !optional_given) return false; break;
    case FORM_OP: if (!d->symbol) return false; break;
    case FORM_WEAK: case FORM_WEAKL: case FORM_CHAINW: case FORM_CHAINL: if (nt_req < 2) return false; break;
    case FORM_CHAIN: if (nt < 1 && count_type(d, P_TS) < 1) return false; break;
    case FORM_NUM: if (!(d->flags & F_NUM) || dt == 0) return false; break;   /* f32 numbers are f64's */
    default: return false;
    }
    /* operator syntax: `SYM x` or `x SYM y` (also for the other forms of syntax ops) */
    if (form == FORM_OP || (syntax && d->symbol)) {
        if (nt != d->nparams || nt < 1 || nt > 2) return false;   /* an operator takes its operands only */
        Form f = form == FORM_OP ? FORM_CALL : form;
        if (nt == 1) {
            bputs(b, d->symbol);
            arg_text(b, d, 0, 0, v, dt, f);
        } else {
            arg_text(b, d, 0, 0, v, dt, f);
            bprintf(b, " %s ", d->symbol);
            arg_text(b, d, 1, 1, v, dt, f);
        }
        return true;
    }
    bprintf(b, "%s(", d->name);
    int seen[P_CHOICE + 1] = { 0 };
    bool first = true;
    for (int p = 0; p < d->nparams; p++) {
        const OpParam *pp = &d->params[p];
        int k = seen[pp->type]++;
        if (!pp->required && form != FORM_FULL) continue;
        if (!first) bputs(b, ", ");
        first = false;
        if (!pp->required) bprintf(b, "%s=", pp->name);
        arg_text(b, d, p, k, v, dt, form);
    }
    bputs(b, ")");
    return true;
}

/* ---------- running and comparing ---------- */

static Interp *I;

static void setup(void) {
    unsetenv("TSL_OPT");
    setenv("TSL_EXPLAIN", "1", 1);   /* read when the interpreter first runs static code */
    op_table_init();
}
static void teardown(void) {
    unsetenv("TSL_OPT");
    unsetenv("TSL_EXPLAIN");
}

typedef struct {
    int rc;
    char msg[512];
    int line, col;
    bool fallback;     /* the static block ran eagerly (TSL_EXPLAIN said so) */
    int graphs;        /* graphs in the static block's cache afterwards */
    bool has_op;       /* the graph that ran holds an instruction of the op */
    bool fused;        /* ... in a fused group */
    char explain[600];
    Value result;      /* borrowed from the globals; UNDEF when unset */
} Outcome;

/* Whether g computes op: an OP instruction, a step of a fused group, or an op on numbers. */
static bool graph_has_op(const Graph *g, OpCode op) {
    for (int i = 0; g && i < g->ncode; i++) {
        const Ins *in = &g->code[i];
        if ((in->op == I_OP || in->op == I_NBIN || in->op == I_NMATH) && in->aux == (int)op) return true;
        if (in->op == I_NNEG && op == OP_NEG) return true;
        if (in->op == I_EPILOGUE && op == OP_MATMUL) return true;
        if (in->op == I_FUSED || in->op == I_EPILOGUE)
            for (int k = 0; k < in->nsteps; k++)
                if (in->steps[k].op == op) return true;
    }
    return false;
}

static bool graph_fuses_op(const Graph *g, OpCode op) {
    for (int i = 0; g && i < g->ncode; i++)
        for (int k = 0; g->code[i].op == I_FUSED && k < g->code[i].nsteps; k++)
            if (g->code[i].steps[k].op == op) return true;
    return false;
}

/* The static block of a program (the one each snippet has). */
static Node *find_static(Node *n) {
    if (!n) return NULL;
    if (n->kind == AST_STATIC) return n;
    Node *r = NULL;
    if (!r) r = find_static(n->a);
    if (!r) r = find_static(n->b);
    if (!r) r = find_static(n->c);
    for (int i = 0; !r && i < n->n; i++) r = find_static(n->kids[i]);
    return r;
}

/* A global's value (borrowed), UNDEF when unset. */
static Value global(const char *name) {
    int k = globals_find(&I->main->g, name);
    return k >= 0 ? I->main->g.vals[k] : UNDEF_VAL;
}

/* Runs code with stderr captured (the explain lines and the printed error). */
static void run_capture(const char *code, const char *result_var, bool is_static, OpCode op, Outcome *o) {
    memset(o, 0, sizeof *o);
    char *cap = NULL;
    size_t caplen = 0;
    FILE *saved = stderr;
    stderr = open_memstream(&cap, &caplen);
    o->rc = interp_run_source(I, "<table>", code, strlen(code), false, NULL);
    fclose(stderr);
    stderr = saved;
    if (o->rc) {
        snprintf(o->msg, sizeof o->msg, "%s", I->err_msg);
        o->line = I->err_loc.line;
        o->col = I->err_loc.col;
    }
    const char *ex = cap ? strstr(cap, "explain:") : NULL;
    snprintf(o->explain, sizeof o->explain, "%s", ex ? ex : "");
    char *nl = strchr(o->explain, '\n');
    if (nl) *nl = 0;
    o->fallback = cap && strstr(cap, "runs eagerly");
    free(cap);
    if (is_static) {
        Node *st = find_static(I->nprograms ? I->programs[I->nprograms - 1] : NULL);
        if (st) o->graphs = static_cache_count(st->vm_cache);
        if (o->rc == 0 && o->graphs > 0) {
            o->has_op = graph_has_op(static_last_graph(I), op);
            o->fused = graph_fuses_op(static_last_graph(I), op);
        }
    }
    o->result = global(result_var);
}

/* The first place a and b differ, bitwise: the comparison --verify-static makes. */
static bool differ(Value a, Value b, char *where, size_t n) { return static_values_differ(a, b, where, n); }

/* One case's verdict: FK_NONE, or the first thing that went wrong (why says what). */
static FailKind check_case(OpCode op, const char *setup_src, const char *expr, bool dynamic, bool op_in_graph,
                           char *why, size_t n) {
    static const char *const var[3] = { "r_eager", "r_fused", "r_nofus" };
    static const char *const who[3] = { "eager", "static", "static -fuse" };
    Outcome o[3];
    char code[4096];
    /* the call must be valid TSL (all three would fail alike, at parsing, and test nothing) */
    snprintf(code, sizeof code, "r = %s\n", expr);
    ParseError pe;
    Node *parsed = parse_program(code, strlen(code), 1000, &pe);
    if (!parsed) {
        snprintf(why, n, "does not parse: %d:%d: %s", pe.loc.line, pe.loc.col, pe.msg);
        if (getenv("TSL_TABLE_VERBOSE")) fprintf(stderr, "table: %-60s parse error: %s\n", expr, pe.msg);
        return FK_PARSE;
    }
    ast_free(parsed);
    I = interp_new();
    FailKind verdict = FK_NONE;
    if (run_in(I, setup_src) != 0) {
        snprintf(why, n, "the setup code failed: %s", I->err_msg);
        interp_free(I);
        return FK_ANY;
    }
    /* the operands, to check that nothing writes into them */
    static const char *const inputs[3] = { "x", "y", "z" };
    Tensor *before[3];
    for (int i = 0; i < 3; i++) before[i] = tensor_copy(global(inputs[i]).as.t);
    /* the same columns in all three: `r_eager` is indented like `static { r_fused` */
    snprintf(code, sizeof code, "seed(7)\n         r_eager = %s\n", expr);
    run_capture(code, var[0], false, op, &o[0]);
    snprintf(code, sizeof code, "seed(7)\nstatic { r_fused = %s }\n", expr);
    run_capture(code, var[1], true, op, &o[1]);
    setenv("TSL_OPT", "-fuse", 1);
    snprintf(code, sizeof code, "seed(7)\nstatic { r_nofus = %s }\n", expr);
    run_capture(code, var[2], true, op, &o[2]);
    unsetenv("TSL_OPT");

    for (int s = 1; s < 3 && verdict == FK_NONE; s++) {
        if (o[s].fallback && !dynamic) {
            snprintf(why, n, "%s ran eagerly: %s", who[s], o[s].explain);
            verdict = FK_FALLBACK;
        } else if (o[s].rc == 0 && o[s].graphs == 0 && !dynamic) {
            snprintf(why, n, "%s succeeded without a compiled graph (explain: '%s')", who[s], o[s].explain);
            verdict = FK_FALLBACK;
        } else if (o[s].rc == 0 && !dynamic && op_in_graph && !o[s].has_op) {
            snprintf(why, n, "%s compiled a graph without the op in it", who[s]);
            verdict = FK_FALLBACK;
        }
    }
    for (int s = 1; s < 3 && verdict == FK_NONE; s++) {
        if (o[s].rc != o[0].rc) {
            snprintf(why, n, "eager %s, %s %s", o[0].rc ? o[0].msg : "succeeded", who[s], o[s].rc ? o[s].msg : "succeeded");
            verdict = FK_RC;
        } else if (o[0].rc) {
            if (strcmp(o[s].msg, o[0].msg) || o[s].line != o[0].line || o[s].col != o[0].col) {
                snprintf(why, n, "eager fails at %d:%d with '%s', %s at %d:%d with '%s'", o[0].line, o[0].col, o[0].msg,
                         who[s], o[s].line, o[s].col, o[s].msg);
                verdict = FK_MSG;
            }
        } else {
            char where[500];
            if (o[0].result.type == VAL_UNDEF) {
                snprintf(why, n, "eager gave no result");
                verdict = FK_ANY;
            } else if (differ(o[0].result, o[s].result, where, sizeof where)) {
                snprintf(why, n, "eager and %s differ: %s", who[s], where);
                verdict = FK_DIFF;
            }
        }
    }
    /* warm runs: the same block three times in a loop, on other operands each time (the
     * graph's buffers are reused from the second run on); every result must still be what
     * the same loop gives eagerly, after the last run */
    Outcome w[3];
    for (int s = 0; s < 3 && verdict == FK_NONE && o[0].rc == 0; s++) {
        if (s == 2) setenv("TSL_OPT", "-fuse", 1);
        snprintf(code, sizeof code,
                 "r_runs%d = []\nfor i_ in range(3) {\n  x = [x0, y0, z0][i_]\n  y = [y0, z0, x0][i_]\n  z = [z0, x0, y0][i_]\n"
                 "  seed(7 + i_)\n  %s r_w = %s %s\n  push(r_runs%d, r_w)\n}\n",
                 s, s ? "static {" : "        ", expr, s ? "}" : "", s);
        run_in(I, "x0 = x\ny0 = y\nz0 = z\n");
        char rv[16];
        snprintf(rv, sizeof rv, "r_runs%d", s);
        run_capture(code, rv, s > 0, op, &w[s]);
        run_in(I, "x = x0\ny = y0\nz = z0\n");
        unsetenv("TSL_OPT");
        char where[500];
        if (s == 0) continue;
        if (w[s].rc != w[0].rc || strcmp(w[s].msg, w[0].msg)) {
            snprintf(why, n, "in a loop, eager %s, %s %s", w[0].rc ? w[0].msg : "succeeds", who[s],
                     w[s].rc ? w[s].msg : "succeeds");
            verdict = FK_WARM;
        } else if (!dynamic && w[s].graphs != 1) {
            snprintf(why, n, "%s run in a loop compiled %d graphs, not 1 (explain: %s)", who[s], w[s].graphs, w[s].explain);
            verdict = FK_WARM;
        } else if (w[s].rc == 0 && differ(w[0].result, w[s].result, where, sizeof where)) {
            snprintf(why, n, "in a loop (after the third run), eager and %s differ: %s", who[s], where);
            verdict = FK_WARM;
        }
    }
    for (int i = 0; i < 3; i++) {
        char where[500];
        Value now = global(inputs[i]);
        if (verdict == FK_NONE && (now.type != VAL_TENSOR || differ(TENSOR_VAL(before[i]), now, where, sizeof where))) {
            snprintf(why, n, "operand %s changed: %s", inputs[i], now.type == VAL_TENSOR ? where : "not a tensor any more");
            verdict = FK_INPUT;
        }
        tensor_release(before[i]);
    }
    if (getenv("TSL_TABLE_VERBOSE"))
        fprintf(stderr, "table: %-60s eager %s | static %s%s%s | -fuse %s%s%s -> %s\n", expr, o[0].rc ? o[0].msg : "ok",
                o[1].rc ? o[1].msg : "ok", o[1].fallback ? " (eager)" : "", o[1].fused ? " (fused)" : o[1].has_op ? " (op in graph)" : "",
                o[2].rc ? o[2].msg : "ok", o[2].fallback ? " (eager)" : "", o[2].fused ? " (fused)" : o[2].has_op ? " (op in graph)" : "",
                fail_kind_name[verdict]);
    interp_free(I);
    I = NULL;
    return verdict;
}

/* The KNOWN entry a failing case matches, or -1. */
static int known_match(const char *op, const char *key, FailKind k) {
    for (int i = 0; KNOWN[i].op; i++)
        if (!strcmp(KNOWN[i].op, op) && !fnmatch(KNOWN[i].pattern, key, 0) && (KNOWN[i].kind == FK_ANY || KNOWN[i].kind == k))
            return i;
    return -1;
}

/* Every case of one op (the loop index); all of its failures are reported together. */
START_TEST(table_op) {
    OpCode op = (OpCode)_i;
    const OpDef *d = op_def(op);
    bool tensors = has_tensor_operand(d);
    bool dynamic = d->flags & F_DYNAMIC;
    Buf report = { 0 };
    int nfail = 0, ncases = 0;
    bool used[64] = { false };   /* KNOWN entries that matched a failing case */
    for (int i = 0; KNOWN[i].op; i++) ck_assert_msg(i < 63, "KNOWN has more than 63 entries: enlarge used[]");
    Buf done = { 0 };   /* snippets already run, for ops that read no tensor operand */
    bputs(&done, "\n");
    for (int dt = 0; dt < NDT; dt++)
        for (int vi = 0; vi < NVAR; vi++)
            for (int f = 0; f < NFORMS; f++) {
                const Variant *v = &VARIANTS[vi];
                Buf expr = { 0 };
                if (!build_call(&expr, d, v, dt, (Form)f)) {
                    free(expr.s);
                    continue;
                }
                if (!tensors && f != FORM_NUM) {   /* the same snippet under another dtype: run once */
                    char key[1100];
                    snprintf(key, sizeof key, "\n%s\n", expr.s);
                    if (strstr(done.s, key)) {
                        free(expr.s);
                        continue;
                    }
                    bputs(&done, expr.s);
                    bputs(&done, "\n");
                }
                Buf src = { 0 };
                setup_source(&src, v, dt);
                /* bools are guards of static code (docs/static.md): an op on bool values only
                 * is computed while compiling, by the eager code; all else must be in the graph */
                bool op_in_graph = !(f == FORM_NUM && dt == 3);
                char why[1500] = "", key[64];
                snprintf(key, sizeof key, "%s/%s/%s", DTYPES[dt], v->name, FORM_NAME[f]);
                FailKind k = check_case(op, src.s, expr.s, dynamic, op_in_graph, why, sizeof why);
                ncases++;
                if (k != FK_NONE) {
                    int m = known_match(d->name, key, k);
                    if (m >= 0) used[m] = true;
                    else {
                        nfail++;
                        bprintf(&report, "  %s %s: %s [%s]\n      snippet: r = %s\n", d->name, key, why,
                                fail_kind_name[k], expr.s);
                    }
                }
                free(src.s);
                free(expr.s);
            }
    for (int i = 0; KNOWN[i].op; i++)
        if (!strcmp(KNOWN[i].op, d->name) && !used[i]) {
            nfail++;
            bprintf(&report, "  %s: KNOWN entry '%s' (%s: %s) matches no failing case any more: remove it\n",
                    d->name, KNOWN[i].pattern, fail_kind_name[KNOWN[i].kind], KNOWN[i].why);
        }
    if (getenv("TSL_TABLE_VERBOSE")) fprintf(stderr, "table: op %s: %d cases\n", d->name, ncases);
    if (nfail) fprintf(stderr, "table: op '%s': %d failing case(s):\n%s", d->name, nfail, report.s);
    ck_assert_msg(ncases > 0, "op '%s': no case could be synthesised from '%s'", d->name, d->signature);
    ck_assert_msg(nfail == 0, "op '%s': %d failing case(s) (eager against static, see stderr):\n%.1500s", d->name, nfail,
                  report.s);
    free(report.s);
    free(done.s);
}
END_TEST

/* ---------- the table itself ---------- */

START_TEST(table_meta) {
    op_table_init();
    for (int op = 0; op < OP__COUNT; op++) {
        const OpDef *d = op_def((OpCode)op);
        ck_assert_msg(d->name && d->name[0], "op %d has no name", op);
        ck_assert_msg(d->doc && d->doc[0], "op '%s' has no doc string", d->name);
        ck_assert_msg(d->signature && d->signature[0], "op '%s' has no signature", d->name);
        /* the parsed signature: one parameter per comma-separated item, named, typed */
        int items = 1;
        for (const char *s = d->signature; *s; s++) items += *s == ',';
        ck_assert_msg(d->nparams == items, "op '%s': signature '%s' parsed into %d parameters", d->name, d->signature,
                      d->nparams);
        int noper = 0, nint = 0, nf = 0;
        bool optional_seen = false;
        for (int p = 0; p < d->nparams; p++) {
            const OpParam *pp = &d->params[p];
            ck_assert_msg(pp->name && pp->name[0], "op '%s': parameter %d has no name", d->name, p);
            ck_assert_msg(pp->type >= P_T && pp->type <= P_CHOICE, "op '%s': parameter '%s' has no type", d->name,
                          pp->name);
            ck_assert_msg(strstr(d->signature, pp->name), "op '%s': parameter '%s' not in '%s'", d->name, pp->name,
                          d->signature);
            for (int q = 0; q < p; q++)
                ck_assert_msg(strcmp(d->params[q].name, pp->name), "op '%s': parameter '%s' twice", d->name, pp->name);
            ck_assert_msg(!(pp->required && optional_seen), "op '%s': required '%s' after an optional parameter",
                          d->name, pp->name);
            optional_seen |= !pp->required;
            if (is_operand_type(pp->type)) ck_assert_int_eq(pp->slot, noper++);
            if (pp->type == P_INT || pp->type == P_REDOP || pp->type == P_CHOICE) ck_assert_int_eq(pp->slot, nint++);
            if (pp->type == P_F) ck_assert_int_eq(pp->slot, nf++);
        }
        ck_assert_msg(d->noperands == noper, "op '%s': %d operands counted, %d parsed", d->name, d->noperands, noper);
        ck_assert_msg(count_type(d, P_TS) == 0 || noper == 1, "op '%s': a Ts list must be the only operand", d->name);
        ck_assert_msg(d->nout >= 1 && d->nout <= OP_MAX_OUT, "op '%s': %d results", d->name, d->nout);
        ck_assert_msg(d->kind >= K_UNARY && d->kind <= K_OTHER, "op '%s': bad kind", d->name);
        if (d->kind == K_UNARY) ck_assert_msg(count_type(d, P_T) == 1, "op '%s': unary with %d operands", d->name, count_type(d, P_T));
        if (d->kind == K_BINARY || d->kind == K_COMPARE)
            ck_assert_msg(count_type(d, P_T) == 2 && d->nparams == 2, "op '%s': binary needs two operands", d->name);
        /* names and symbols */
        for (int q = 0; q < op; q++)
            ck_assert_msg(strcmp(op_info[q].name, d->name), "ops %d and %d are both named '%s'", q, op, d->name);
        if (d->flags & F_SYNTAX) {
            ck_assert_msg((d->symbol && d->symbol[0]) || by_choice(d), "F_SYNTAX op '%s' has no symbol", d->name);
            ck_assert_msg(op_by_name(d->name) == OP__COUNT, "F_SYNTAX op '%s' is found by name", d->name);
        } else {
            ck_assert_msg(op_by_name(d->name) == (OpCode)op, "op_by_name(\"%s\") gives %d, not %d", d->name,
                          (int)op_by_name(d->name), op);
        }
        if (d->symbol)
            ck_assert_msg(op_by_symbol(d->symbol, count_type(d, P_T)) == (OpCode)op, "op_by_symbol(\"%s\", %d) is not '%s'",
                          d->symbol, count_type(d, P_T), d->name);
    }
    ck_assert_int_eq(op_by_name("no_such_op"), OP__COUNT);
}
END_TEST

/* The synthesiser itself: a few calls it must produce (so a change to it is seen). */
START_TEST(table_synthesiser) {
    struct { OpCode op; int dt, vi; Form form; const char *want; } cases[] = {
        { OP_SUM, 0, 0, FORM_CALL, "sum(x)" },
        { OP_SUM, 0, 0, FORM_FULL, "sum(x, axis=[0], keepdims=true)" },
        { OP_ADD, 0, 0, FORM_OP, "x + y" },
        { OP_ADD, 2, 0, FORM_WEAK, "x + w0" },
        { OP_BITWISE_NOT, 2, 0, FORM_NUM, "~a0" },
        { OP_NEG, 1, 0, FORM_OP, "-x" },
        { OP_FLOOR_DIVIDE, 0, 0, FORM_OP, "x // y" },
        { OP_FLOOR_DIVIDE, 0, 0, FORM_CALL, "floor_divide(x, y)" },
        { OP_RESHAPE, 0, 0, FORM_CALL, "reshape(x, [4, -1])" },
        { OP_CLIP, 0, 0, FORM_FULL, "clip(x, lo=lo0, hi=hi0)" },
        { OP_CONCAT, 3, 1, FORM_CALL, "concat([x, y])" },
        { OP_ASTYPE, 0, 0, FORM_CALL, "astype(x, \"f64\")" },
        { OP_ARANGE, 0, 0, FORM_FULL, "arange(3, b=7, step=2, dtype=\"f64\")" },
        { OP_PAD, 2, 0, FORM_FULL, "pad(x, [[1, 0], [0, 2]], value=n0)" },
        { OP_ZEROS, 0, 1, FORM_CALL, "zeros([2, 3, 3])" },
        { OP_SUB, 0, 0, FORM_WEAKL, "w0 - y" },
        { OP_SUB, 0, 0, FORM_CHAIN, "maximum(x, x) - maximum(y, y)" },
        { OP_ATAN2, 0, 0, FORM_CHAINW, "atan2(maximum(x, x), w0)" },
        { OP_WHERE, 0, 0, FORM_CHAINL, "where(w0, maximum(y, y), maximum(z, z))" },
        { OP_STACK, 0, 0, FORM_CHAIN, "stack([maximum(x, x), maximum(y, y)])" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        Buf b = { 0 };
        ck_assert(build_call(&b, op_def(cases[i].op), &VARIANTS[cases[i].vi], cases[i].dt, cases[i].form));
        ck_assert_str_eq(b.s, cases[i].want);
        free(b.s);
    }
    Buf b = { 0 };
    ck_assert(!build_call(&b, op_def(OP_ADD), &VARIANTS[0], 0, FORM_CALL));   /* syntax only */
    ck_assert(!build_call(&b, op_def(OP_EXP), &VARIANTS[0], 0, FORM_FULL));   /* nothing optional */
    free(b.s);
}
END_TEST

Suite *table_suite(void) {
    Suite *s = suite_create("table");
    TCase *tm = tcase_create("meta");
    tcase_add_test(tm, table_meta);
    tcase_add_test(tm, table_synthesiser);
    suite_add_tcase(s, tm);
    TCase *tc = tcase_create("ops");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_loop_test(tc, table_op, 0, OP__COUNT);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}
