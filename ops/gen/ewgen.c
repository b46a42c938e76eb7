/* ewgen.c - the elementwise generator: reads ops/ew.def (each elementwise op's scalar maths,
 * written once) and writes, for the build:
 *   ewgen cpu ops/ew.def                       build/ew_cpu.h, the CPU's scalar functions
 *   ewgen cuda ops/ew.def ops/gpu/cuda/tsl_ew.cuh  build/ew_cuda.h, the GPU's device functions
 * ew.def's header says what a row holds. A body is C; this program only rewrites its names
 * for a compute dtype and a target (a token at a time), so what the CPU and the GPU compute
 * is the same text. Built and run by the Makefile; a host tool, never linked into TSL. */
#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F32, F64, I64, B8, NUM, NDT };   /* compute dtypes, and numbers (f64) */
static const char *const sfx[NDT] = { "f32", "f64", "i64", "b8", "n" };
static const char *const ctype_c[NDT] = { "float", "double", "int64_t", "uint8_t", "double" };
static const char *const ctype_cu[NDT] = { "float", "double", "tsl_i64", "tsl_b8", "double" };

typedef struct {
    char name[32], id[32];   /* "floor_divide", "FLOOR_DIVIDE" (OP_FLOOR_DIVIDE) */
    int arity;
    bool to_bool, fails;
    char *body[NDT];    /* NULL: not defined for that dtype */
    char vec[64];       /* "sleef(...)", "own" or "" */
    char cuda[96];      /* the GPU's expression where it is not tsl_<name>(...) */
    bool composite;     /* "name(x) = EXPR" */
} Row;

static Row rows[128];
static int nrows;
static const char *def_path;
static int line_no;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: ", def_path, line_no);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static char *dup(const char *s, size_t n) {
    char *p = malloc(n + 1);
    if (!p) die("out of memory");
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

static const char *skip_space(const char *p) {
    while (*p == ' ' || *p == '\t') p++;
    return p;
}

static Row *find_row(const char *name, size_t n) {
    for (int r = 0; r < nrows; r++)
        if (strlen(rows[r].name) == n && !memcmp(rows[r].name, name, n)) return &rows[r];
    return NULL;
}

/* ---------- reading ew.def ---------- */

typedef struct {
    char *p;
    size_t len, cap;
} Buf;

__attribute__((format(printf, 2, 3))) static void put(Buf *b, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
        va_end(ap);
        if (k < 0) die("format error");
        if (b->len + (size_t)k < b->cap) { b->len += (size_t)k; return; }
        b->cap = (b->cap + (size_t)k + 64) * 2;
        if (!(b->p = realloc(b->p, b->cap))) die("out of memory");
    }
}

static int brace_depth(const char *s) {
    int d = 0;
    for (; *s; s++) d += (*s == '{') - (*s == '}');
    return d;
}

static void set_body(Row *r, const char *classes, size_t nc, char *body) {
    for (size_t k = 0; k < nc; k++) {
        int dts[2] = { -1, -1 };
        switch (classes[k]) {
        case 'f': dts[0] = F32, dts[1] = F64; break;
        case 'i': dts[0] = I64; break;
        case 'b': dts[0] = B8; break;
        case 'n': dts[0] = NUM; break;
        default: die("unknown dtype class '%c'", classes[k]);
        }
        for (int j = 0; j < 2 && dts[j] >= 0; j++) r->body[dts[j]] = body;
    }
    if (strstr(body, "fail(")) r->fails = true;
}

/* One "CLASSES: BODY" clause of row r, n bytes at p (a block's braces balanced). */
static void clause(Row *r, const char *p, size_t n) {
    size_t nc = strcspn(p, ":");
    if (nc >= n) die("expected CLASSES: BODY");
    const char *body = skip_space(p + nc + 1);
    int nb = (int)(n - (size_t)(body - p));
    while (nb > 0 && body[nb - 1] == ' ') nb--;
    if (nc == 3 && !memcmp(p, "vec", 3)) snprintf(r->vec, sizeof r->vec, "%.*s", nb, body);
    else if (nc == 4 && !memcmp(p, "cuda", 4)) snprintf(r->cuda, sizeof r->cuda, "%.*s", nb, body);
    else set_body(r, p, nc, dup(body, (size_t)nb));
}

/* "name(x[, y]) [-> bool]", then "= EXPR" or clauses two spaces or more apart */
static void read_header(const char *p) {
    if (nrows == (int)(sizeof rows / sizeof rows[0])) die("too many rows");
    Row *r = &rows[nrows++];
    size_t n = strcspn(p, "(");
    if (!p[n] || n >= sizeof r->name) die("expected name(x) or name(x, y)");
    memcpy(r->name, p, n);
    for (size_t i = 0; i < n; i++) r->id[i] = (char)toupper((unsigned char)p[i]);
    const char *close = strchr(p, ')');
    if (!close) die("expected ')'");
    r->arity = memchr(p + n, ',', (size_t)(close - p - n)) ? 2 : 1;
    const char *q = skip_space(close + 1);
    if (!strncmp(q, "-> bool", 7)) r->to_bool = true, q = skip_space(q + 7);
    if (*q == '=') {   /* a composite: an expression over other rows, in the float dtypes */
        q = skip_space(q + 1);
        set_body(r, "f", 1, dup(q, strlen(q)));
        r->composite = true;
        return;
    }
    while (*q) {
        const char *e = strstr(q, "  ");
        size_t k = e ? (size_t)(e - q) : strlen(q);
        clause(r, q, k);
        q = skip_space(q + k);
    }
}

static void read_def(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) die("cannot open");
    char line[512];
    Buf acc = { 0 };   /* a row's indented clause, until its braces balance */
    while (fgets(line, sizeof line, f)) {
        line_no++;
        line[strcspn(line, "\n")] = 0;
        const char *p = skip_space(line);
        if (acc.len) {
            put(&acc, "\n%s", line);
        } else {
            if (!*p || *p == '#') continue;
            if (p == line) { read_header(p); continue; }
            if (!nrows) die("a clause before any row");
            put(&acc, "%s", p);
        }
        if (brace_depth(acc.p) > 0) continue;
        clause(&rows[nrows - 1], acc.p, acc.len);
        acc.len = 0;
    }
    if (acc.len) die("unclosed '{'");
    fclose(f);
    for (int r = 0; r < nrows; r++)   /* numbers are f64's, unless a row says otherwise */
        if (!rows[r].body[NUM]) rows[r].body[NUM] = rows[r].body[F64];
}

/* ---------- rewriting a body for a dtype and a target ---------- */

/* The C library's math functions a body may call: f32 takes the name with an f. */
static bool is_libm(const char *s, size_t n) {
    static const char *const names[] = { "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
                                         "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
                                         "asinh", "acosh", "atanh", "fabs", "floor", "ceil", "nearbyint",
                                         "rint", "fmod", "copysign", "pow", "atan2", "erf", "erfc", NULL };
    for (int i = 0; names[i]; i++)
        if (strlen(names[i]) == n && !memcmp(names[i], s, n)) return true;
    return false;
}

static bool word_is(const char *s, size_t n, const char *w) { return strlen(w) == n && !memcmp(s, w, n); }

/* body for dtype dt; cuda: the GPU's names (else the CPU's) */
static void rewrite(Buf *o, const char *body, int dt, bool cuda) {
    const char *const *ct = cuda ? ctype_cu : ctype_c;
    for (const char *p = body; *p;) {
        if (isalpha((unsigned char)*p) || *p == '_') {
            size_t n = 1;
            while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
            bool call = *skip_space(p + n) == '(';
            if (word_is(p, n, "T")) put(o, "%s", ct[dt]);
            else if (word_is(p, n, "i64")) put(o, "%s", ct[I64]);
            else if (word_is(p, n, "b8")) put(o, "%s", ct[B8]);
            else if (word_is(p, n, "u64")) put(o, "%s", cuda ? "tsl_u64" : "uint64_t");
            else if (word_is(p, n, "NAN")) put(o, "%s", !cuda ? "NAN" : dt == F32 ? "TSL_NAN_F" : "TSL_NAN_D");
            else if (call && word_is(p, n, "fail")) {   /* fail(k) */
                const char *a = strchr(p, '(') + 1, *e = strchr(a, ')');
                if (cuda) put(o, "(*bad = %.*s, 0)", (int)(e - a), a);
                else put(o, "0");
                p = e + 1;
                continue;
            } else if (call && is_libm(p, n)) put(o, "%.*s%s", (int)n, p, dt == F32 ? "f" : "");
            else if (call && (word_is(p, n, "isnan") || word_is(p, n, "isinf") || word_is(p, n, "isfinite")))
                put(o, "%.*s", (int)n, p);   /* C's type-generic tests */
            else if (call && find_row(p, n)) {
                if (cuda) put(o, "tsl_%.*s", (int)n, p);
                else put(o, "ew_%.*s_%s", (int)n, p, sfx[dt]);
            } else put(o, "%.*s", (int)n, p);
            p += n;
        } else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
            size_t n = 0;
            bool real = false;
            while (isalnum((unsigned char)p[n]) || p[n] == '.' ||
                   ((p[n] == '+' || p[n] == '-') && (p[n - 1] == 'e' || p[n - 1] == 'E'))) {
                real |= p[n] == '.' || p[n] == 'e' || p[n] == 'E';
                n++;
            }
            bool hex = n > 1 && (p[1] == 'x' || p[1] == 'X');
            put(o, "%.*s%s", (int)n, p, real && !hex && dt == F32 ? "f" : "");
            p += n;
        } else {
            put(o, "%c", *p++);
        }
    }
}

/* One function: its signature and body for dtype dt. */
static void function(Buf *o, const Row *r, int dt, bool cuda) {
    const char *const *ct = cuda ? ctype_cu : ctype_c;
    const char *body = r->body[dt];
    const char *rt = r->to_bool && dt != NUM ? ct[B8] : ct[dt];
    if (cuda) put(o, "__device__ __forceinline__ %s tsl_%s(%s x", rt, r->name, ct[dt]);
    else put(o, "static inline %s ew_%s_%s(%s x", rt, r->name, sfx[dt], ct[dt]);
    if (r->arity == 2) put(o, ", %s y", ct[dt]);
    if (cuda && r->fails) put(o, strstr(body, "fail(") ? ", int *bad" : ", int *");
    put(o, ") ");
    if (*body == '{') {
        rewrite(o, body, dt, cuda);
    } else {
        put(o, "{ return (%s)(", rt);
        rewrite(o, body, dt, cuda);
        put(o, "); }");
    }
    put(o, "\n");
}

static bool has_loop(const Row *r, int dt) { return r->body[dt] && !(r->vec[0] && (dt == F32 || dt == F64)); }

/* ---------- composites around one vector row ---------- */

/* A composite that calls one vector row (gelu_tanh calls tanh) runs on arrays in three
 * passes: pre(x), the argument of that call; the row's vector function over a block of
 * those; post(x, v), the body with the call's result v in place of the call. Same bits as
 * the composite written out as ops, and SLEEF's vectors instead of one libm call an element.
 * Finds the call: *at, *len the call's text; NULL when the body has none or more than one. */
static const Row *split_call(const Row *r, const char **at, size_t *len) {
    if (!r->composite || r->arity != 1) return NULL;
    const Row *found = NULL;
    for (const char *p = r->body[F32]; *p;) {
        if (!isalpha((unsigned char)*p) && *p != '_') { p++; continue; }
        size_t n = 1;
        while (isalnum((unsigned char)p[n]) || p[n] == '_') n++;
        const Row *c = find_row(p, n);
        const char *open = skip_space(p + n);
        if (c && *open == '(' && c->vec[0] && c->arity == 1) {
            if (found) return NULL;
            int d = 0;
            const char *e = open;
            do d += (*e == '(') - (*e == ')'); while (d && *++e);
            if (!*e) die("unbalanced '(' in %s", r->name);
            found = c, *at = p, *len = (size_t)(e + 1 - p);
        }
        p += n;
    }
    return found;
}

/* ew_<name>_pre_<dt>(x) and ew_<name>_post_<dt>(x, v) of a split composite. */
static void split_functions(Buf *o, const Row *r, const char *at, size_t len, int dt) {
    const char *t = ctype_c[dt], *open = strchr(at, '(');
    char *arg = dup(open + 1, len - (size_t)(open + 1 - at) - 1);
    Buf post = { 0 };
    put(&post, "%.*sv%s", (int)(at - r->body[dt]), r->body[dt], at + len);
    put(o, "static inline %s ew_%s_pre_%s(%s x) { return (%s)(", t, r->name, sfx[dt], t, t);
    rewrite(o, arg, dt, false);
    put(o, "); }\nstatic inline %s ew_%s_post_%s(%s x, %s v) { return (%s)(", t, r->name, sfx[dt], t, t, t);
    rewrite(o, post.p, dt, false);
    put(o, "); }\n");
    free(arg);
    free(post.p);
}

/* ---------- ew_cpu.h ---------- */

static void emit_cpu(void) {
    Buf o = { 0 };
    put(&o, "/* ew_cpu.h - generated by ops/gen/ewgen.c from ops/ew.def: do not edit. */\n");
    put(&o, "#ifndef TSL_EW_CPU_H\n#define TSL_EW_CPU_H\n#include <math.h>\n#include <stdint.h>\n\n");
    for (int r = 0; r < nrows; r++)
        for (int dt = 0; dt < NDT; dt++)
            if (rows[r].body[dt]) function(&o, &rows[r], dt, false);
    for (int r = 0; r < nrows; r++) {
        const char *at;
        size_t len;
        if (split_call(&rows[r], &at, &len))
            for (int dt = F32; dt <= F64; dt++) split_functions(&o, &rows[r], at, len, dt);
    }
    /* which kernels loop over the scalar function: F(ID, name, in type, out type, suffix) */
    static const char *const dts[] = { "F32", "F64", "I64", "B8" };
    for (int arity = 1; arity <= 2; arity++)
        for (int dt = 0; dt < NUM; dt++) {
            put(&o, "\n#define EW_%s_%s(F)", arity == 1 ? "UNARY" : "BINARY", dts[dt]);
            for (int r = 0; r < nrows; r++)
                if (rows[r].arity == arity && has_loop(&rows[r], dt))
                    put(&o, " \\\n    F(%s, %s, %s, %s, %s)", rows[r].id, rows[r].name, ctype_c[dt],
                        rows[r].to_bool ? "uint8_t" : ctype_c[dt], sfx[dt]);
        }
    /* the number functions: F(ID, name) */
    for (int arity = 1; arity <= 2; arity++) {
        put(&o, "\n#define EW_NUMBER%d(F)", arity);
        for (int r = 0; r < nrows; r++)
            if (rows[r].arity == arity && rows[r].body[NUM]) put(&o, " F(%s, %s)", rows[r].id, rows[r].name);
    }
    /* SLEEF's functions (cpu.h): F(name, ULP, NANBITS, RANGE); each vector row: F(ID, name) */
    put(&o, "\n#define EW_SLEEF_UNARY(F)");
    for (int r = 0; r < nrows; r++)
        if (!strncmp(rows[r].vec, "sleef(", 6)) put(&o, " F(%s, %.*s)", rows[r].name, (int)strlen(rows[r].vec) - 7, rows[r].vec + 6);
    put(&o, "\n#define EW_VEC_UNARY(F)");
    for (int r = 0; r < nrows; r++)
        if (rows[r].vec[0] && rows[r].arity == 1) put(&o, " F(%s, %s)", rows[r].id, rows[r].name);
    /* the composites split around a vector row: F(ID, name, that row's name) */
    put(&o, "\n#define EW_SPLIT_UNARY(F)");
    for (int r = 0; r < nrows; r++) {
        const char *at;
        size_t len;
        const Row *c = split_call(&rows[r], &at, &len);
        if (c) put(&o, " F(%s, %s, %s)", rows[r].id, rows[r].name, c->name);
    }
    put(&o, "\n#define EW_VEC_LANE(F)");
    for (int r = 0; r < nrows; r++)
        if (strstr(rows[r].vec, "sleef_only") || strstr(rows[r].vec, "(lane)")) put(&o, " F(%s, %s)", rows[r].id, rows[r].name);
    put(&o, "\n\n#endif\n");
    fwrite(o.p, 1, o.len, stdout);
}

/* ---------- ew_cuda.h ---------- */

/* s as the body of a C string literal */
static void literal(Buf *o, const char *s) {
    put(o, "\"");
    for (; *s; s++) {
        if (*s == '\n') put(o, "\\n\" \\\n    \"");
        else if (*s == '"' || *s == '\\') put(o, "\\%c", *s);
        else put(o, "%c", *s);
    }
    put(o, "\"");
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot open %s", path);
    Buf b = { 0 };
    char chunk[4096];
    size_t n;
    put(&b, "%s", "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) put(&b, "%.*s", (int)n, chunk);
    fclose(f);
    return b.p;
}

static void emit_cuda(const char *cuh) {
    Buf o = { 0 }, dev = { 0 };
    put(&o, "/* ew_cuda.h - generated by ops/gen/ewgen.c from ops/ew.def and ops/gpu/cuda/tsl_ew.cuh: do not edit. */\n");
    put(&o, "#define EW_CUDA_LIBRARY ");
    literal(&o, slurp(cuh));
    put(&dev, "%s", "");
    for (int r = 0; r < nrows; r++)
        for (int dt = 0; dt < NUM; dt++)
            if (rows[r].body[dt] && !rows[r].cuda[0]) function(&dev, &rows[r], dt, true);
    put(&o, "\n#define EW_CUDA_DEVICE ");
    literal(&o, dev.p);
    /* gen.c's table: [OP_ID] = { expression, to_bool, dtypes } */
    put(&o, "\n#define EW_CUDA_ROWS");
    static const char *const bit[] = { "DT_F32", "DT_F64", "DT_I64", "DT_BOOL" };
    for (int r = 0; r < nrows; r++) {
        char expr[128];
        if (rows[r].cuda[0]) snprintf(expr, sizeof expr, "%s", rows[r].cuda);
        else snprintf(expr, sizeof expr, "tsl_%s(x%s%s)", rows[r].name, rows[r].arity == 2 ? ", y" : "",
                      rows[r].fails ? ", a.bad" : "");
        put(&o, " \\\n    [OP_%s] = { \"%s\", %d, 0", rows[r].id, expr, rows[r].to_bool);
        for (int dt = 0; dt < NUM; dt++)
            if (rows[r].body[dt]) put(&o, " | 1u << %s", bit[dt]);
        put(&o, " },");
    }
    put(&o, "\n");
    fwrite(o.p, 1, o.len, stdout);
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "cuda")) || (!strcmp(argv[1], "cuda") && argc < 4)) {
        fprintf(stderr, "usage: ewgen cpu EW.DEF | ewgen cuda EW.DEF TSL_EW.CUH\n");
        return 2;
    }
    def_path = argv[2];
    read_def(def_path);
    if (!strcmp(argv[1], "cpu")) emit_cpu();
    else emit_cuda(argv[3]);
    return 0;
}
