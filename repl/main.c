/* main.c - the `tsl` command: options, then a script, `-e CODE`, or the REPL.
 *
 * The interpreter runs on a thread with a large stack so deep (but legal) recursion up to
 * --max-depth fits; a guard in the evaluator turns anything deeper into an error.
 * SIGINT and the --timeout timer (SIGALRM) only set a flag that the evaluator and the VM poll
 * (tsl_interrupt, tsl_timeout; tsl_session_interrupt, tsl_session_timeout for `tsl run`).
 * Like the rest of repl/, this file sees include/tsl.h alone. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <limits.h>
#include <math.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include "repl.h"

/* What the signal handlers stop: the state (set while it exists), or the session running a
 * model for `tsl run` (repl_watch_session). */
static tsl_State *volatile signal_state;
static tsl_Session *volatile signal_session;

typedef struct {
    int argc;
    char **argv;
    int rc;
} MainArgs;

static void usage(FILE *out) {
    fputs("usage: tsl [options] [FILE.tsl [ARGS...]]\n"
          "       tsl [options] -e CODE [ARGS...]\n"
          "       tsl [options] - [ARGS...]       (the program from standard input)\n"
          "       tsl run MODEL.tslg --in X.npy ... [--out Y.npy ...] [--timeout S] [--max-memory N]\n"
          "       tsl run MODEL.tslg --help\n"
          "With no FILE, starts the interactive REPL. `tsl run` runs a graph that export() wrote:\n"
          "the inputs in the order of its signature, the outputs written to the --out files in\n"
          "order (printed when there are none); --timeout and --max-memory as below; --help\n"
          "prints the signature. A script named run: tsl -- run.\n\n"
          "options:\n"
          "  -e CODE                run CODE instead of a file\n"
          "  -                      read the program from standard input (errors name <stdin>)\n"
          "  -u                     unbuffered standard output (default: line-buffered on a\n"
          "                         terminal, block-buffered otherwise; flush() writes it out)\n"
          "  --                     end of the options (a FILE may then start with '-')\n"
          "  --no-static            run static blocks and static fns eagerly\n"
          "  --verify-static        run each static block eagerly and statically, compare\n"
          "  --device cpu|gpu       default device for new tensors (default cpu)\n"
          "  --max-depth N          call depth limit (default 10000)\n"
          "  --max-nesting N        syntactic nesting limit (default 1000)\n"
          "  --max-tensor-bytes N   largest tensor (default 1 GiB)\n"
          "  --max-memory N         all memory held: tensors, strings, lists, dicts (default: no limit)\n"
          "  --max-ops N            operation budget (loop iterations and calls)\n"
          "  --timeout S            wall-time limit in seconds\n"
          "  --threads N            threads for large tensor ops (default: TSL_THREADS, else the\n"
          "                         cores; results are the same bits for every N)\n"
          "  --version, --help, -h\n\n"
          "environment variables:\n"
          "  TSL_PATH=DIR:DIR       folders import searches after the importing module's own\n"
          "  TSL_STDLIB=DIR         the standard library's folder (default: ../stdlib beside bin/tsl)\n"
          "  TSL_EXPLAIN=1          print one line per static compile (where, how long, why again)\n"
          "  TSL_OPT=-PASS,...      switch optimizer passes off (fold, cse, dce, licm, epilogue,\n"
          "                         fuse, mem)\n"
          "  TSL_JIT=0|force        the native tier of fused groups: 0 off; force: compile on the\n"
          "                         first run (default: after 3 runs, in the background)\n"
          "  TSL_JIT_CC=CC          the native tier's C compiler (default: cc)\n"
          "  TSL_WARN=0             no warning when static code runs eagerly (the compiler cannot\n"
          "                         handle it yet; TSL_EXPLAIN=1 prints it as an explain line)\n"
          "  OPENBLAS_CORETYPE=NAME OpenBLAS's kernels (default: the CPU's; where OpenBLAS falls\n"
          "                         back to its generic ones, tsl picks AVX-512 or AVX2 ones)\n"
          "  TSL_THREADS=N          threads for large tensor ops when --threads is not given\n"
          "  TSL_NO_AVX512=1        use the AVX2 math kernels even where AVX-512 is available\n"
          "  OMPI_COMM_WORLD_SIZE=N set by mpirun (Open MPI): the process joins the MPI job on its\n"
          "                         first rank(), world_size() or collective (spec section 11)\n"
          "  PMI_SIZE=N             the same, set by other MPI launchers\n"
          "  TSL_MPI_PLUGIN=FILE    the MPI plugin to load (default: libtsl_mpi.so beside bin/tsl)\n"
          "  TSL_CUDA_PLUGIN=FILE   the CUDA plugin to load on the first use of the GPU (default:\n"
          "                         libtsl_cuda.so beside bin/tsl)\n"
          "  OMPI_COMM_WORLD_LOCAL_RANK=N  set by mpirun (MPI_LOCALRANKID, SLURM_LOCALID by other\n"
          "                         launchers): the GPU this process uses is N mod the GPU count\n"
          "  TSL_NCCL_LIB=FILE      the NCCL library for collectives on GPU tensors (default:\n"
          "                         libnccl.so.2, found as the dynamic loader finds libraries)\n"
          "  XDG_CACHE_HOME=DIR     the GPU's compiled kernels are cached in DIR/tsl/cuda, the\n"
          "                         native tier's in DIR/tsl/jit (default: $HOME/.cache/tsl/...)\n"
          "  TMPDIR=DIR             the native tier's cache when neither of those can be made\n"
          "                         (DIR/tsl-jit-UID; default: /tmp)\n"
          "  PATH=DIRS              where the native tier finds TSL_JIT_CC when it names no folder\n"
          "  TSL_FAIL_ALLOC=N       testing: make the Nth allocation fail\n"
          "  TSL_VM_DEVICE=1        testing: static graphs run on the VM's device executor\n"
          "                         (vm/run/exec_dev.c), on the CPU too\n"
          "  HOME                   the REPL keeps its history in $HOME/.tsl_history\n",
          out);
}

/* A usage error that quotes the user's argument, escaped (it may hold terminal escapes). */
static void usage_error(const char *before, const char *arg, const char *after) {
    fprintf(stderr, "tsl: error: %s'", before);
    repl_put_escaped(stderr, arg);
    fprintf(stderr, "'%s\n", after);
}

/* Numeric options take plain decimal digits: no sign, no exponent, no junk, no overflow. */
bool repl_parse_count(const char *opt, const char *s, int64_t *out) {
    int64_t v = 0;
    bool ok = s && *s;
    for (const char *p = s; ok && *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - (*p - '0')) / 10) ok = false;
        else v = v * 10 + (*p - '0');
    }
    if (!ok) {
        char what[96];
        snprintf(what, sizeof what, "%s needs a non-negative integer below 2**63, not ", opt);
        usage_error(what, s ? s : "", "");
        return false;
    }
    *out = v;
    return true;
}

/* --timeout: a finite number of seconds, above 0 and at most a year (setitimer's range). */
bool repl_parse_seconds(const char *s, double *out) {
    char *end;
    errno = 0;
    double t = s && *s ? strtod(s, &end) : NAN;
    if (!(t > 0 && t <= 366 * 86400.0) || errno == ERANGE || *end) {
        usage_error("--timeout needs a number of seconds above 0 and at most 31622400, not ", s ? s : "", "");
        return false;
    }
    *out = t;
    return true;
}

/* Ctrl-C stops the running code, which then reports where; with nothing that could report
 * (`tsl run` loading a model, reading or writing .npy files) the process ends at once, with
 * the status an interrupted run has. */
static void on_sigint(int sig) {
    (void)sig;
    tsl_State *S = signal_state;
    tsl_Session *s = signal_session;
    if (S) tsl_interrupt(S);
    if (s) tsl_session_interrupt(s);
    if (!S && !s) _exit(130);
}

/* --timeout: the timer's handler raises the same flag the evaluator and the VM poll (the
 * timer repeats, so a session watched after it first fired still hears it). */
static void on_sigalrm(int sig) {
    (void)sig;
    tsl_State *S = signal_state;
    tsl_Session *s = signal_session;
    if (S) tsl_timeout(S);
    if (s) tsl_session_timeout(s);
}

void repl_watch_session(tsl_Session *s) { signal_session = s; }

void repl_arm_timeout(double t) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigalrm;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it;
    memset(&it, 0, sizeof it);
    it.it_value.tv_sec = (time_t)t;
    it.it_value.tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6);
    if (!it.it_value.tv_sec && !it.it_value.tv_usec) it.it_value.tv_usec = 1;
    /* then every 50 ms: the time stays up even where the REPL clears the flag at its prompt */
    it.it_interval.tv_usec = 50000;
    setitimer(ITIMER_REAL, &it, NULL);
}

/* The standard library: ../stdlib beside the executable (malloc'd). */
static char *find_stdlib(const char *argv0) {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(exe, sizeof exe, "%s", argv0);
        n = (ssize_t)strlen(exe);
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    else snprintf(exe, sizeof exe, ".");
    size_t len = strlen(exe) + 16;
    char *dir = malloc(len);
    if (dir) snprintf(dir, len, "%s/../stdlib", exe);
    return dir;
}

static char *stdlib_dir;

/* A limit option's value into the state (the state caps what it cannot hold). */
static void set_limit(tsl_State *S, const char *opt, int64_t n) {
    tsl_Option o = !strcmp(opt, "--max-depth") ? TSL_OPT_MAX_DEPTH
                 : !strcmp(opt, "--max-nesting") ? TSL_OPT_MAX_NESTING
                 : !strcmp(opt, "--max-tensor-bytes") ? TSL_OPT_MAX_TENSOR_BYTES
                 : !strcmp(opt, "--max-memory") ? TSL_OPT_MAX_MEMORY
                                                : TSL_OPT_MAX_OPS;
    tsl_set_option(S, o, n);
}

static int run_main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "run")) {   /* a script named run: tsl -- run */
        int rc = run_model_command(argc - 2, argv + 2);
        if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
            fprintf(stderr, "tsl: error: cannot write to standard output: %s\n", strerror(errno));
            rc = 1;
        }
        return rc;
    }
    tsl_State *S;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) {
        fputs("tsl: error: out of memory\n", stderr);
        return 1;
    }
    signal_state = S;
    if (stdlib_dir) tsl_set_stdlib_path(S, stdlib_dir);
    const char *code = NULL, *file = NULL;
    int i = 1, rc = 0;
    double timeout = 0;
    for (; i < argc; i++) {
        const char *a = argv[i];
        int64_t n;
        if (a[0] != '-' || !strcmp(a, "-")) break;
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); goto done; }
        else if (!strcmp(a, "--version")) {
            printf("tsl %s (%s)\n", tsl_version(), tsl_backend());
            goto done;
        }
        else if (!strcmp(a, "--no-static")) tsl_set_option(S, TSL_OPT_NO_STATIC, 1);
        else if (!strcmp(a, "--verify-static")) tsl_set_option(S, TSL_OPT_VERIFY_STATIC, 1);
        else if (!strcmp(a, "-u")) setvbuf(stdout, NULL, _IONBF, 0);   /* before anything is written */
        else if (!strcmp(a, "-e")) {
            if (i + 1 >= argc) { fputs("tsl: error: -e needs CODE\n", stderr); rc = 2; goto done; }
            code = argv[++i];
            i++;
            break;
        } else if (!strcmp(a, "--device")) {
            const char *d = i + 1 < argc ? argv[++i] : "";
            if (strcmp(d, "cpu") && strcmp(d, "gpu")) { usage_error("--device takes cpu or gpu, not ", d, ""); rc = 2; goto done; }
            if (tsl_set_device(S, d) != TSL_OK) {
                fputs(tsl_error_report(S), stderr);
                rc = 1;
                goto done;
            }
        } else if (!strcmp(a, "--threads")) {
            if (!repl_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &n)) { rc = 2; goto done; }
            if (n < 1 || n > INT32_MAX) { usage_error("--threads takes a count of at least 1, not ", argv[i], ""); rc = 2; goto done; }
            tsl_set_threads((int)n);
        } else if (!strcmp(a, "--timeout")) {
            if (!repl_parse_seconds(i + 1 < argc ? argv[++i] : NULL, &timeout)) { rc = 2; goto done; }
        } else if (!strcmp(a, "--max-depth") || !strcmp(a, "--max-nesting") || !strcmp(a, "--max-tensor-bytes") ||
                   !strcmp(a, "--max-memory") || !strcmp(a, "--max-ops")) {
            if (!repl_parse_count(a, i + 1 < argc ? argv[++i] : NULL, &n)) { rc = 2; goto done; }
            set_limit(S, a, n);
        } else {
            usage_error("unknown option ", a, " (see tsl --help)");
            rc = 2;
            goto done;
        }
    }
    if (!code && i < argc) file = argv[i++];
    tsl_set_args(S, argc - i, (const char *const *)(argv + i));
    if (timeout > 0) repl_arm_timeout(timeout);
    if (code) rc = repl_exit_status(S, tsl_run_string(S, "<string>", code, (ptrdiff_t)strlen(code)));
    else if (file && !strcmp(file, "-")) rc = repl_run_stdin(S);   /* named <stdin> in errors */
    else if (file) rc = repl_exit_status(S, tsl_run_file(S, file));
    else rc = repl_run(S);
    /* a rank that ends tells the others, which may wait for it in a collective (then both
     * stop with an error); one that failed ends the MPI job, as the others would wait for it */
    if (rc == 0 && tsl_world_finish(S) != TSL_OK) rc = repl_exit_status(S, TSL_ERROR);
    if (rc != 0) tsl_world_abort(rc);
done:
    /* output still buffered fails only now (a full disk, a closed pipe): that is an error too */
    if ((fflush(stdout) != 0 || ferror(stdout)) && rc == 0) {
        fprintf(stderr, "tsl: error: cannot write to standard output: %s\n", strerror(errno));
        rc = 1;
    }
    signal_state = NULL;
    tsl_free(S);
    return rc;
}

static void *thread_main(void *p) {
    MainArgs *m = p;
    m->rc = run_main(m->argc, m->argv);
    return NULL;
}

/* OpenBLAS (the pthread build, ops/cpu/linalg.c) starts a worker thread per further core when
 * it loads, before main. TSL never gives them work, and under a memory limit (ulimit -v) a
 * worker that cannot reserve its 128 MB buffer retries forever. It counts the cores this
 * process may run on, so: an executable's preinit functions run before any library's
 * initializer (and environment variables set there do not survive libc's), and this one
 * lets the process run on one core while the libraries load; main gives the mask back first,
 * before any thread of tsl's starts. */
static cpu_set_t cores_at_start;
static bool cores_narrowed;

static void one_core_while_loading(int argc, char **argv, char **envp) {
    (void)argc, (void)argv, (void)envp;
    if (sched_getaffinity(0, sizeof cores_at_start, &cores_at_start) || CPU_COUNT(&cores_at_start) < 2) return;
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &cores_at_start)) { CPU_SET(c, &one); break; }
    cores_narrowed = sched_setaffinity(0, sizeof one, &one) == 0;
}
__attribute__((section(".preinit_array"), used)) static void (*const preinit_one_core)(int, char **, char **) =
    one_core_while_loading;

int main(int argc, char **argv) {
    if (cores_narrowed) sched_setaffinity(0, sizeof cores_at_start, &cores_at_start);
    /* One malloc arena: the interpreter thread would otherwise get its own, made of 64 MiB
     * mmap'd heaps that glibc unmaps when empty, so every large tensor would page-fault. */
    mallopt(M_ARENA_MAX, 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);   /* no SA_RESTART: the REPL's select() wakes up */
    /* A closed pipe (tsl x.tsl | head -1) is a write error, reported and exit status 1 (spec
     * section 1: no signal ends the process), not SIGPIPE's silent death. */
    signal(SIGPIPE, SIG_IGN);
    stdlib_dir = find_stdlib(argv[0]);
    MainArgs m = { argc, argv, 0 };
    /* Deep recursion needs a big C stack: 1 GiB when the address space allows, smaller
     * under a `ulimit -v` (still room for --max-depth's default of 10,000 frames), and the
     * main thread's own stack as the last resort. The evaluator measures what it got. */
    bool started = false;
    for (int shift = 30; shift >= 26 && !started; shift -= 2) {
        pthread_attr_t attr;
        pthread_t th;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, (size_t)1 << shift);
        if (pthread_create(&th, &attr, thread_main, &m) == 0) {
            pthread_join(th, NULL);
            started = true;
        }
        pthread_attr_destroy(&attr);
    }
    if (!started) thread_main(&m);
    free(stdlib_dir);
    return m.rc;
}
