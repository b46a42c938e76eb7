/* jit.c - the native tier for fused groups (jit.h): C generated from a group's steps, compiled
 * by the system C compiler into a shared object, loaded with dlopen, cached in memory by a
 * hash of the code and on disk under $XDG_CACHE_HOME/tsl/jit (or ~/.cache/tsl/jit).
 *
 * Why the system compiler (cc -O2) rather than libgccjit or LLVM's ORC: the generated code is
 * C that includes ops/cpu/lanes512.h (its text, built in, written to the cache folder and
 * precompiled there), the very helpers chain512.c computes with, so the two cannot drift
 * apart; it needs no library at build or run time (libgccjit would be built through its own
 * tree-building API, not from this text); and compile time (70-80 ms a group with the
 * precompiled header, on a thread of its own, once per machine with the disk cache) matters
 * less than the bits and the code's speed. docs/static.md has the measurements.
 *
 * The loop: W = 16 f32 or 8 f64 lanes a vector (chain512.c's width), every step of the group
 * on one vector before the next vector, values in registers; a step's result goes to memory
 * only when it is the group's output. The last partial vector is loaded with zeros in its
 * unused lanes and stored through a mask, as chain512.c does. + - * /, maximum, minimum, neg,
 * abs, relu and sqrt are the same instructions (lanes512.h), a SLEEF step calls the same
 * one-vector function (cpu_chain_lane_fn), and any other op stores its vector and calls its
 * kernel (cpu_unary, cpu_binary) on those lanes: each element's bits never depend on where it
 * falls (chain.h), so every element gets the VM's bits. Compiled with -ffp-contract=off. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "jit.h"
#include "vm_impl.h"
#include "opt.h"
#include "cpu/chain.h"
#include "cpu/cpu.h"
#include "lanes512_src.h"   /* LANES512_SRC: ops/cpu/lanes512.h's text (the Makefile) */

extern char **environ;

/* Runs of a group before it is compiled: the first runs of a script stay in the VM (most
 * groups run once), a hot one is compiled while the VM keeps running it. */
#define JIT_AFTER 3
/* Runs between two tries of a group that found the compiling queue full. */
#define JIT_RETRY 64

enum { JIT_COMPILING, JIT_READY, JIT_FAILED };
typedef struct JitCode {
    uint64_t hash;             /* of the source and the compiler's command */
    char *src;                 /* the generated C (malloc'd, process-wide) */
    int state;                 /* JIT_*, atomic: READY published with release */
    JitFusedFn fn[JIT_PHASES]; /* tsl_fused, tsl_fused1, ...: a row group has one per phase */
    int nfn;
    double compile_ms;         /* 0 when loaded from the disk cache */
    bool cached;               /* loaded from the disk cache */
    char why[800];             /* JIT_FAILED: the reason */
    struct JitCode *next;
} JitCode;

/* Process-wide: the codes (never freed: a loaded object stays loaded while the process runs,
 * and graphs of any state may point at them), and the settings read once. */
static pthread_mutex_t codes_lock = PTHREAD_MUTEX_INITIALIZER;
static JitCode *codes;
static pthread_once_t settings_once = PTHREAD_ONCE_INIT;
static int mode;               /* 0 off, 1 after JIT_AFTER runs in the background, 2 force */
static bool explain_on;
static const char *off_why;    /* why the tier is off, for TSL_EXPLAIN */
static const char *compiler;
/* The file every generated source includes: lanes512.h's text, named by its hash (with the
 * compiler's), written once into the cache folder beside its precompiled form (gcc's .gch),
 * which cuts a group's compile from ~330 ms, nearly all of it <immintrin.h>, to ~70 ms. */
static char lanes_name[64];
static uint64_t code_hash(const char *src);

/* The environment as it was when the tier was first used: the compiling thread never calls
 * getenv or reads environ, which another thread's setenv may be changing (getenv is not safe
 * beside setenv). */
static char **env_copy;
static char env_cache[256], env_home[256], env_tmp[256], compiler_path[1024];

static void copy_var(char *dst, size_t n, const char *name) {   /* too long: as unset */
    const char *v = getenv(name);
    snprintf(dst, n, "%s", v && strlen(v) < n ? v : "");
}

/* The compiler as a path: itself when it names a folder, else the first executable of that
 * name on $PATH (posix_spawnp would search $PATH on the compiling thread). */
static void find_compiler(const char *name) {
    snprintf(compiler_path, sizeof compiler_path, "%s", name);
    const char *path = getenv("PATH");
    if (strchr(name, '/') || !path) return;
    for (const char *p = path; *p;) {
        size_t len = strcspn(p, ":");
        char cand[1024];
        snprintf(cand, sizeof cand, "%.*s/%s", (int)len, p, name);
        if (len && !access(cand, X_OK)) {
            snprintf(compiler_path, sizeof compiler_path, "%s", cand);
            return;
        }
        p += len + (p[len] == ':');
    }
}

static void copy_environment(void) {
    size_t n = 0;
    while (environ && environ[n]) n++;
    env_copy = calloc(n + 1, sizeof *env_copy);   /* process-wide, kept: the children's environment */
    for (size_t i = 0; env_copy && i < n; i++) env_copy[i] = strdup(environ[i]);
    copy_var(env_cache, sizeof env_cache, "XDG_CACHE_HOME");
    copy_var(env_home, sizeof env_home, "HOME");
    copy_var(env_tmp, sizeof env_tmp, "TMPDIR");
}

static void read_settings(void) {
    const char *j = getenv("TSL_JIT"), *e = getenv("TSL_EXPLAIN"), *c = getenv("TSL_JIT_CC");
    explain_on = e && *e && strcmp(e, "0");
    compiler = c && *c ? c : "cc";
    find_compiler(compiler);
    copy_environment();
    mode = j && !strcmp(j, "0") ? 0 : j && !strcmp(j, "force") ? 2 : 1;
    snprintf(lanes_name, sizeof lanes_name, "lanes512-%016llx.h", (unsigned long long)code_hash(LANES512_SRC));
    if (!mode) off_why = "TSL_JIT=0";
    else if (!cpu_has_avx512()) {
        mode = 0;
        off_why = "the native tier needs AVX-512F, which this processor lacks";
    }
}

/* ---------- the generated C ---------- */

typedef struct {
    char *p;
    size_t len, cap;
} Buf;

static void put(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(Buf *b, const char *fmt, ...) {
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->p && b->len + (size_t)k < b->cap) {
            b->len += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + (size_t)k + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) abort();   /* process-wide, outside every state: as pthread_create would fail */
        b->p = p;
        b->cap = cap;
    }
}

/* The vector spelling of a dtype: suffix, vector and mask types, element type, lanes. */
typedef struct {
    const char *s, *vt, *mt, *t, *lane;   /* lane: the suffix of lanes512.h's helpers */
    int w;
} Lanes;
static Lanes lanes_of(DType dt) {
    if (dt == DT_F32) return (Lanes){ "ps", "__m512", "__mmask16", "float", "16", 16 };
    return (Lanes){ "pd", "__m512d", "__mmask8", "double", "8", 8 };
}

/* Operand q of step k in C: a temporary's variable (the latest step that wrote it), the
 * hoisted scalar, or a load of the array at i (masked in the tail). */
static void operand(Buf *b, const Lanes *L, const ChainStep *s, int k, int q, const int *writer, bool tail) {
    const ChainArg *g = &s->in[q];
    if (g->kind == CHAIN_TEMP) put(b, "v%d", writer[g->temp]);
    else if (g->kind == CHAIN_SCALAR) put(b, "s%d_%d", k, q);
    else if (tail) put(b, "_mm512_maskz_loadu_%s(m, p%d + i)", L->s, 2 * k + q);
    else put(b, "_mm512_loadu_%s(p%d + i)", L->s, 2 * k + q);
}

/* The expression of an op chain512.c computes inline (operands a and b), NULL for any other
 * op or another count of operands. */
static const char *inline_expr(OpCode op, int nin, char *buf, size_t n, const Lanes *L) {
    const char *two = NULL, *one = NULL, *lane = "";
    switch (op) {
    case OP_ADD: two = "add", lane = L->lane; break;
    case OP_MUL: two = "mul", lane = L->lane; break;
    case OP_SUB: two = "_mm512_sub_"; break;
    case OP_DIV: two = "_mm512_div_"; break;
    case OP_MAXIMUM: two = "max", lane = L->lane; break;
    case OP_MINIMUM: two = "min", lane = L->lane; break;
    case OP_NEG: one = "neg", lane = L->lane; break;
    case OP_ABS: one = "_mm512_abs_"; break;
    case OP_RELU: one = "relu", lane = L->lane; break;
    case OP_SQRT: one = "_mm512_sqrt_"; break;
    default: return NULL;
    }
    const char *f = nin == 2 ? two : one;
    if (!f) return NULL;
    snprintf(buf, n, "%s%s(a%s)", f, *lane ? lane : L->s, nin == 2 ? ", b" : "");
    return buf;
}

/* Step k of n on one vector: operands into a and b, the result into v<k>, stored when it is
 * one of the group's outputs. */
static void step_code(Buf *b, const Lanes *L, DType dt, const ChainStep *s, int k, int n, int *writer, bool tail) {
    put(b, "        { %s a = ", L->vt);
    operand(b, L, s, k, 0, writer, tail);
    if (s->nin == 2) {
        put(b, ", b = ");
        operand(b, L, s, k, 1, writer, tail);
    }
    put(b, ";\n");
    char ex[64];
    if (inline_expr(s->op, s->nin, ex, sizeof ex, L))
        put(b, "          v%d = %s;", k, ex);
    else if (s->nin == 1 && cpu_chain_lane_fn(s->op, dt))
        put(b, "          v%d = ((%s (*)(%s))api[%d])(a);", k, L->vt, L->vt, (int)s->op);
    else if (s->nin == 1)   /* the op's kernel (cpu_unary) on this vector's lanes */
        put(b, "          _mm512_store_%s(ba, a);\n"
               "          if (((int (*)(int, int, const void *, void *, int64_t))api[%d])(%d, %d, ba, ba, %d)) return -1;\n"
               "          v%d = _mm512_load_%s(ba);", L->s, OP__COUNT, (int)s->op, (int)dt, L->w, k, L->s);
    else   /* cpu_binary */
        put(b, "          _mm512_store_%s(ba, a); _mm512_store_%s(bb, b);\n"
               "          if (((int (*)(int, int, const void *, int64_t, const void *, int64_t, void *, int64_t))api[%d])"
               "(%d, %d, ba, 1, bb, 1, ba, %d)) return -1;\n"
               "          v%d = _mm512_load_%s(ba);", L->s, L->s, OP__COUNT + 1, (int)s->op, (int)dt, L->w, k, L->s);
    if (s->temp >= 0) writer[s->temp] = k;
    else if (tail) put(b, "\n          _mm512_mask_storeu_%s(p%d + i, m, v%d);", L->s, 2 * n + k, k);
    else put(b, "\n          _mm512_storeu_%s(p%d + i, v%d);", L->s, 2 * n + k, k);
    put(b, " }\n");
}

/* Every step on the vector at i (tail: the m lanes of the last, partial one). */
static void body_code(Buf *b, const Lanes *L, DType dt, const ChainStep *cs, int n, int *writer, bool tail) {
    for (int k = 0; k < n; k++) step_code(b, L, dt, &cs[k], k, n, writer, tail);
}

/* The C of one group's loop, as a function `name` (jit.h's JitFusedFn). Depends only on the
 * steps' structure (ops, operand kinds, temporaries), never on addresses or values, so one
 * object serves every run and every graph with the same group. */
static void group_fn(Buf *b, const char *name, const ChainStep *cs, int n, DType dt) {
    Lanes L = lanes_of(dt);
    int *writer = calloc((size_t)n + 1, sizeof(int));
    if (!writer) abort();
    put(b, "int %s(const void *const *p, int64_t begin, int64_t end, void (*const *api)(void)) {\n", name);
    put(b, "    %s ba[%d] __attribute__((aligned(64))), bb[%d] __attribute__((aligned(64)));\n"
           "    (void)ba; (void)bb;\n", L.t, L.w, L.w);
    for (int k = 0; k < n; k++)
        for (int q = 0; q < cs[k].nin; q++)
            if (cs[k].in[q].kind == CHAIN_SCALAR)
                put(b, "    const %s s%d_%d = _mm512_set1_%s(*(const %s *)p[%d]);\n", L.vt, k, q, L.s, L.t, 2 * k + q);
            else if (cs[k].in[q].kind == CHAIN_ARRAY)   /* read once: a store may alias p[] */
                put(b, "    const %s *const p%d = (const %s *)p[%d];\n", L.t, 2 * k + q, L.t, 2 * k + q);
    for (int k = 0; k < n; k++)
        if (cs[k].temp < 0) put(b, "    %s *const p%d = (%s *)p[%d];\n", L.t, 2 * n + k, L.t, 2 * n + k);
    put(b, "    %s", L.vt);
    for (int k = 0; k < n; k++) put(b, "%s v%d", k ? "," : "", k);
    put(b, ";\n    int64_t i = begin;\n    for (; i + %d <= end; i += %d) {\n", L.w, L.w);
    body_code(b, &L, dt, cs, n, writer, false);
    put(b, "    }\n    if (i < end) {\n        %s m = (%s)((1u << (end - i)) - 1);\n", L.mt, L.mt);
    body_code(b, &L, dt, cs, n, writer, true);
    put(b, "    }\n    return 0;\n}\n");
    free(writer);
}

/* The C of a fused group: its loop as tsl_fused. */
static char *group_source(const ChainStep *cs, int n, DType dt) {
    Buf b = { 0 };
    put(&b, "/* tsl native fused group: %d steps of %s (abi 1: ops %d) */\n#include \"%s\"\n\n",
        n, dtype_name(dt), (int)OP__COUNT, lanes_name);
    group_fn(&b, "tsl_fused", cs, n, dt);
    return b.p;
}

/* The C of a row group's nph elementwise phases: phase i's loop as tsl_fused, tsl_fused1, ... */
static char *phases_source(ChainStep *const *cs, const int *n, int nph, DType dt) {
    Buf b = { 0 };
    put(&b, "/* tsl native row group: %d phases of %s (abi 1: ops %d) */\n#include \"%s\"\n\n",
        nph, dtype_name(dt), (int)OP__COUNT, lanes_name);
    for (int i = 0; i < nph; i++) {
        char name[32];
        snprintf(name, sizeof name, i ? "tsl_fused%d" : "tsl_fused", i);
        group_fn(&b, name, cs[i], n[i], dt);
    }
    return b.p;
}

/* ---------- compiling and loading ---------- */

/* The compiler's flags (of the header's precompiled form too): part of the code's hash. */
static const char *const cc_flags[] = { "-O2", "-mavx512f", "-ffp-contract=off", "-fno-strict-aliasing", "-fPIC" };

static uint64_t fnv1a(uint64_t h, const char *s) {
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}
static uint64_t code_hash(const char *src) {
    uint64_t h = fnv1a(14695981039346656037ull, compiler);
    for (size_t k = 0; k < sizeof cc_flags / sizeof *cc_flags; k++) h = fnv1a(fnv1a(h, " "), cc_flags[k]);
    return fnv1a(h, src);
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* mkdir -p of path (a buffer it may write into): 0 when it is a directory. */
static int make_dirs(char *path) {
    for (char *q = path + 1; *q; q++) {
        if (*q != '/') continue;
        *q = 0;
        int rc = mkdir(path, 0755);
        *q = '/';
        if (rc && errno != EEXIST) return -1;
    }
    return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
}

static bool is_dir(const char *path) {
    struct stat st;
    return path && *path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The disk cache's folder into dir: $XDG_CACHE_HOME/tsl/jit, ~/.cache/tsl/jit, or a folder of
 * this user's under $TMPDIR (or /tmp) when neither can be made. A home that does not exist
 * (HOME=/nonexistent for a service account) is never created; $XDG_CACHE_HOME may be, as the
 * XDG spec says. */
static int cache_dir(char *dir, size_t n) {
    const char *x = env_cache, *h = env_home, *t = env_tmp;   /* copied by read_settings */
    if (x && *x) snprintf(dir, n, "%s/tsl/jit", x);
    else if (is_dir(h)) snprintf(dir, n, "%s/.cache/tsl/jit", h);
    else dir[0] = 0;
    if (dir[0] && !make_dirs(dir)) return 0;
    snprintf(dir, n, "%s/tsl-jit-%d", t && *t ? t : "/tmp", (int)getuid());
    return make_dirs(dir);
}

/* Runs the compiler with its flags and then the arguments tail (NULL-terminated): 0, or -1
 * with the reason in why. */
static int run_compiler(const char *const *tail, char *why, size_t n) {
    const char *argv[24];
    int a = 0;
    argv[a++] = compiler;
    for (size_t k = 0; k < sizeof cc_flags / sizeof *cc_flags; k++) argv[a++] = cc_flags[k];
    while (*tail && a < 23) argv[a++] = *tail++;
    argv[a] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, compiler_path, &fa, NULL, (char *const *)argv, env_copy ? env_copy : (char *[]){ NULL });
    posix_spawn_file_actions_destroy(&fa);
    if (rc) {
        snprintf(why, n, "no C compiler: '%s' would not start (%s)", compiler, strerror(rc));
        return -1;
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, n, "the C compiler '%s' was lost (%s)", compiler, strerror(errno));
            return -1;
        }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
    snprintf(why, n, "the C compiler '%s' failed on the generated code (status %d)", compiler,
             WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return -1;
}

/* text into path: written under a name of this process's and renamed into place, so that
 * processes doing the same at once never see half a file. */
static int write_file(const char *path, const char *text) {
    char tmp[700];
    snprintf(tmp, sizeof tmp, "%s.%d.%lx", path, (int)getpid(), (unsigned long)pthread_self());
    FILE *f = fopen(tmp, "w");
    if (!f) return -1;
    bool ok = fputs(text, f) >= 0;
    if (fclose(f) || !ok || rename(tmp, path)) {
        remove(tmp);
        return -1;
    }
    return 0;
}

/* The header the sources include, in the cache folder dir (once). */
static int lanes_header(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, lanes_name);
    return access(path, R_OK) ? write_file(path, "#include <stdint.h>\n" LANES512_SRC) : 0;
}

/* The header's precompiled form beside it, when there is none yet; a compiler that cannot
 * make or use one just reads the header (the bits never depend on it). */
static void precompile_header(const char *dir) {
    char h[600], gch[620], tmp[700];
    snprintf(h, sizeof h, "%s/%s", dir, lanes_name);
    snprintf(gch, sizeof gch, "%s.gch", h);
    if (!access(gch, R_OK)) return;
    snprintf(tmp, sizeof tmp, "%s.%d.%lx", gch, (int)getpid(), (unsigned long)pthread_self());
    char why[300];
    const char *tail[] = { "-x", "c-header", "-o", tmp, h, NULL };
    if (run_compiler(tail, why, sizeof why) || rename(tmp, gch)) remove(tmp);
}

/* so's tsl_fused (and tsl_fused1, ... for a row group) into c->fn: 0, or -1 with the reason. */
static int load_object(JitCode *c, const char *so) {
    void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(c->why, sizeof c->why, "its object would not load (%s)", dlerror());
        return -1;
    }
    for (int i = 0; i < c->nfn; i++) {
        char name[32];
        snprintf(name, sizeof name, i ? "tsl_fused%d" : "tsl_fused", i);
        void *f = dlsym(h, name);
        if (!f) {
            snprintf(c->why, sizeof c->why, "its object has no %s", name);
            dlclose(h);
            return -1;
        }
        memcpy(&c->fn[i], &f, sizeof f);   /* an object pointer to a function pointer, as POSIX allows */
    }
    return 0;   /* the object stays loaded: c is process-wide */
}

/* The disk cache's bounds: at most JIT_CACHE_KEEP objects (about 12 kB each); past that the
 * least recently used go (an object's time is touched when it is loaded from the cache). A
 * process that exits while compiling leaves its own temporary source or object: those older
 * than an hour go, as do the headers of other builds' lanes512.h. */
#define JIT_CACHE_KEEP 1000
#define JIT_STALE_S 3600

typedef struct { time_t t; char name[64]; } CacheEntry;

static int older_first(const void *a, const void *b) {
    time_t x = ((const CacheEntry *)a)->t, y = ((const CacheEntry *)b)->t;
    return x < y ? -1 : x > y;
}

/* Whether name is an object of the cache, HASH.so (16 hex digits): a temporary one has more dots. */
static bool cache_object(const char *name) {
    return strlen(name) == 19 && strspn(name, "0123456789abcdef") == 16 && !strcmp(name + 16, ".so");
}

static bool stale_file(const char *name, time_t t, time_t now) {
    if (!strncmp(name, "lanes512-", 9)) return strncmp(name, lanes_name, strlen(lanes_name)) != 0;
    return !cache_object(name) && now - t > JIT_STALE_S;
}

/* Brings the folder dir within the bounds above (once a process, by the compiling thread). */
static void prune_cache(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    CacheEntry *objs = NULL;
    size_t n = 0, cap = 0;
    time_t now = time(NULL);
    char path[700];
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || strlen(e->d_name) >= 64 || stat(path, &st) || !S_ISREG(st.st_mode)) continue;
        if (stale_file(e->d_name, st.st_mtime, now)) remove(path);
        else if (cache_object(e->d_name)) {
            if (n == cap) {
                CacheEntry *m = realloc(objs, (cap = cap ? 2 * cap : 256) * sizeof *objs);
                if (!m) break;
                objs = m;
            }
            objs[n].t = st.st_mtime;
            snprintf(objs[n++].name, sizeof objs->name, "%s", e->d_name);
        }
    }
    closedir(d);
    if (n > JIT_CACHE_KEEP) {
        qsort(objs, n, sizeof *objs, older_first);
        for (size_t k = 0; k < n - JIT_CACHE_KEEP; k++) {
            snprintf(path, sizeof path, "%s/%s", dir, objs[k].name);
            remove(path);
        }
    }
    free(objs);
}

/* Finds c's object in the disk cache, or compiles it there (a file of this process's own,
 * renamed into place, so processes compiling the same group at once never see half a file),
 * and loads it. Sets c->state last, with release: the VM's threads read c->fn after it. */
static void compile_code(JitCode *c) {
    char dir[512], so[600], tmp[640], csrc[640];
    double t0 = now_ms();
    int state = JIT_FAILED;
    if (cache_dir(dir, sizeof dir)) {
        snprintf(c->why, sizeof c->why, "no folder for its object (%s)", dir);
        goto done;
    }
    static bool pruned;   /* only this thread compiles */
    if (!pruned) prune_cache(dir);
    pruned = true;
    snprintf(so, sizeof so, "%s/%016llx.so", dir, (unsigned long long)c->hash);
    if (!access(so, R_OK) && !load_object(c, so)) {
        utimensat(AT_FDCWD, so, NULL, 0);   /* recently used: kept by prune_cache */
        c->cached = true;
        state = JIT_READY;
        goto done;
    }
    snprintf(csrc, sizeof csrc, "%s/%016llx.%d.%lx.c", dir, (unsigned long long)c->hash, (int)getpid(), (unsigned long)pthread_self());
    snprintf(tmp, sizeof tmp, "%s/%016llx.%d.%lx.so", dir, (unsigned long long)c->hash, (int)getpid(), (unsigned long)pthread_self());
    if (lanes_header(dir) || write_file(csrc, c->src)) {
        snprintf(c->why, sizeof c->why, "its source could not be written (%s)", csrc);
        goto done;
    }
    const char *tail[] = { "-shared", "-nostdlib", "-o", tmp, csrc, NULL };
    int rc = run_compiler(tail, c->why, sizeof c->why);
    remove(csrc);
    if (!rc && rename(tmp, so)) {
        snprintf(c->why, sizeof c->why, "its object could not be put in place (%s)", so);
        rc = -1;
    }
    if (rc) remove(tmp);
    else if (!load_object(c, so)) state = JIT_READY;
    c->compile_ms = now_ms() - t0;
    __atomic_store_n(&c->state, state, __ATOMIC_RELEASE);
    if (state == JIT_READY) precompile_header(dir);   /* for the next groups, once this one runs */
    return;
done:
    __atomic_store_n(&c->state, state, __ATOMIC_RELEASE);
}

/* One compiling thread for the process, fed by a queue of at most JIT_QUEUE codes: a program
 * with many hot groups (the differential test has hundreds) compiles them one at a time, on
 * one core, instead of starting a compiler per group at once. A group that finds the queue
 * full stays in the VM and asks again later. */
#define JIT_QUEUE 8
static pthread_cond_t queue_cond = PTHREAD_COND_INITIALIZER;
static JitCode *queue[JIT_QUEUE];
static int queued;
static bool worker_started;

static void *compile_thread(void *arg) {
    pthread_mutex_lock(&codes_lock);
    for (;;) {
        while (!queued) pthread_cond_wait(&queue_cond, &codes_lock);
        JitCode *c = queue[0];
        memmove(queue, queue + 1, sizeof *queue * (size_t)--queued);
        pthread_mutex_unlock(&codes_lock);
        compile_code(c);
        pthread_mutex_lock(&codes_lock);
    }
    return NULL;
}

/* Starts the compiling thread (codes_lock held): false when there can be none. */
static bool start_worker(void) {
    if (worker_started) return true;
    pthread_t t;
    pthread_attr_t at;
    if (pthread_attr_init(&at)) return false;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    worker_started = !pthread_create(&t, &at, compile_thread, NULL);
    pthread_attr_destroy(&at);
    return worker_started;
}

/* The code of src (taken; nfn functions), found or made; a new one is queued for the
 * compiling thread, or compiled here when sync. NULL when the queue is full (or no thread can
 * start): ask later. */
static JitCode *code_for(char *src, int nfn, bool sync) {
    uint64_t h = code_hash(src);
    pthread_mutex_lock(&codes_lock);
    JitCode *c = codes;
    while (c && !(c->hash == h && !strcmp(c->src, src))) c = c->next;
    if (c || (!sync && (queued == JIT_QUEUE || !start_worker()))) {
        pthread_mutex_unlock(&codes_lock);
        free(src);
        return c;
    }
    c = calloc(1, sizeof *c);
    if (!c) abort();
    c->hash = h;
    c->src = src;
    c->nfn = nfn;
    c->state = JIT_COMPILING;
    c->next = codes;
    codes = c;
    if (!sync) {
        queue[queued++] = c;
        pthread_cond_signal(&queue_cond);
    }
    pthread_mutex_unlock(&codes_lock);
    if (sync) compile_code(c);
    return c;
}

/* ---------- the VM's side ---------- */

static void tell(Interp *I, const Ins *in, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void tell(Interp *I, const Ins *in, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vm_explain_va(I, in, fmt, ap);
    va_end(ap);
}

/* TSL_EXPLAIN's one line for the instruction (a fused group, or a matmul's epilogue), once it
 * knows its tier. */
static void tell_tier(Interp *I, Ins *in, const JitCode *c, int state) {
    if (!explain_on || __atomic_exchange_n(&in->jit_told, true, __ATOMIC_RELAXED)) return;
    char what[48];
    if (in->op == I_FUSED) snprintf(what, sizeof what, "%s %d", opt_row_group(in) ? "row group" : "fused group", in->aux);
    else snprintf(what, sizeof what, "the matmul's epilogue");
    if (!c) tell(I, in, "%s runs in the vm: %s", what, off_why);
    else if (state == JIT_FAILED) tell(I, in, "%s runs in the vm: no native code, %s", what, c->why);
    else if (c->cached) tell(I, in, "%s runs native code (from the disk cache)", what);
    else tell(I, in, "%s runs native code (compiled in %.1f ms)", what, c->compile_ms);
}

/* Whether an instruction without code asks for it on this run: the tier is on and (unless
 * forced) the run is the JIT_AFTER-th, or a JIT_RETRY-th after it (a full queue asks again).
 * With the tier off it says so, once, under TSL_EXPLAIN. */
static bool compile_due(Interp *I, Ins *in) {
    pthread_once(&settings_once, read_settings);
    if (!mode) {
        tell_tier(I, in, NULL, 0);
        return false;
    }
    int runs = __atomic_add_fetch(&in->jit_runs, 1, __ATOMIC_RELAXED);
    return mode == 2 || (runs >= JIT_AFTER && (runs - JIT_AFTER) % JIT_RETRY == 0);
}

JitFusedFn jit_fused(Interp *I, Ins *in, const ChainStep *cs, int n, DType dt) {
    JitCode *c = __atomic_load_n(&in->jit, __ATOMIC_ACQUIRE);
    if (!c) {
        if (!compile_due(I, in)) return NULL;
        c = code_for(group_source(cs, n, dt), 1, mode == 2);
        if (!c) return NULL;   /* the queue was full: again in JIT_RETRY runs */
        __atomic_store_n(&in->jit, c, __ATOMIC_RELEASE);
    }
    int state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
    if (state == JIT_COMPILING) return NULL;
    tell_tier(I, in, c, state);
    return state == JIT_READY ? c->fn[0] : NULL;
}

JitFusedFn jit_ready(Interp *I, Ins *in, bool *ask) {
    JitCode *c = __atomic_load_n(&in->jit, __ATOMIC_ACQUIRE);
    if (!c) {
        pthread_once(&settings_once, read_settings);
        *ask = mode != 0;
        if (!mode) tell_tier(I, in, NULL, 0);
        return NULL;
    }
    *ask = false;
    int state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
    if (state == JIT_COMPILING) return NULL;
    tell_tier(I, in, c, state);
    return state == JIT_READY ? c->fn[0] : NULL;
}

bool jit_phases_ready(Interp *I, Ins *in, JitFusedFn *fns, int nph, bool *ask) {
    bool want;
    if (!jit_ready(I, in, &want)) {
        *ask = want && nph <= JIT_PHASES;
        return false;
    }
    *ask = false;
    const JitCode *c = __atomic_load_n(&in->jit, __ATOMIC_ACQUIRE);
    if (c->nfn != nph) return false;   /* not this group's code (cannot happen: one per instruction) */
    memcpy(fns, c->fn, sizeof *fns * (size_t)nph);
    return true;
}

bool jit_phases(Interp *I, Ins *in, ChainStep *const *cs, const int *n, int nph, DType dt, JitFusedFn *fns) {
    if (nph > JIT_PHASES) return false;
    JitCode *c = __atomic_load_n(&in->jit, __ATOMIC_ACQUIRE);
    if (!c) {
        if (!compile_due(I, in)) return false;
        if (!(c = code_for(phases_source(cs, n, nph, dt), nph, mode == 2))) return false;   /* queue full */
        __atomic_store_n(&in->jit, c, __ATOMIC_RELEASE);
    }
    bool ask;
    return jit_phases_ready(I, in, fns, nph, &ask);
}

/* Per dtype: the SLEEF one-vector functions by op, then cpu_unary and cpu_binary. */
static JitAnyFn api_f32[OP__COUNT + 2], api_f64[OP__COUNT + 2];
static pthread_once_t api_once = PTHREAD_ONCE_INIT;
static void make_api(void) {
    for (int op = 0; op < OP__COUNT; op++) {
        api_f32[op] = cpu_chain_lane_fn((OpCode)op, DT_F32);
        api_f64[op] = cpu_chain_lane_fn((OpCode)op, DT_F64);
    }
    api_f32[OP__COUNT] = api_f64[OP__COUNT] = (JitAnyFn)cpu_unary;
    api_f32[OP__COUNT + 1] = api_f64[OP__COUNT + 1] = (JitAnyFn)cpu_binary;
}
const JitAnyFn *jit_api(DType dt) {
    pthread_once(&api_once, make_api);
    return dt == DT_F32 ? api_f32 : api_f64;
}

const char *jit_tier(const Ins *in, char *buf, size_t n) {
    const JitCode *c = __atomic_load_n(&in->jit, __ATOMIC_ACQUIRE);
    if (!c) return NULL;
    int state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);
    if (state == JIT_READY) snprintf(buf, n, "native");
    else if (state == JIT_COMPILING) snprintf(buf, n, "vm (native compiling)");
    else snprintf(buf, n, "vm (no native code: %s)", c->why);
    return buf;
}
