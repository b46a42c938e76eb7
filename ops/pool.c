/* pool.c - the thread pool (pool.h): detached workers that wait for a job, claim its parts
 * in increasing order from an atomic counter and report back under one mutex.
 *
 * A job is published under `mu` with a new generation number; the workers it needs (slots
 * 1..width-1) run it, the caller runs slot 0, and the caller waits until those workers are
 * done, so no worker is ever behind on a job that needs it. `submit` is held by the caller
 * for the whole job: a second caller that cannot take it runs its parts alone. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__SSE2__)
#include <xmmintrin.h>
#define HAS_MXCSR 1
#endif
#include "ctx.h"
#include "tensor.h"
#include "pool.h"

static pthread_mutex_t submit = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;

/* The current job (fields written under mu before the generation changes). */
static struct {
    PoolPartFn fn;
    void *ud;
    int64_t parts;
    int width;
    atomic_llong next;     /* the next part to claim */
    atomic_bool failed;    /* stop claiming: a part failed (lower parts are all claimed) */
    int64_t err_part;      /* the lowest failing part, -1 none (under mu) */
    char err[sizeof ((OpsCtx *)0)->err];
    ErrKind err_kind;
    int pending;           /* workers of this job still running (under mu) */
} job;
static uint64_t generation;   /* under mu */
static int nworkers;          /* started so far, under submit */
static atomic_int wanted;     /* pool_set_threads; 0: not decided yet */

static int default_threads(void) {
    const char *s = getenv("TSL_THREADS");
    long n = s && *s ? strtol(s, NULL, 10) : 0;
    if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (int)n;
}

void pool_set_threads(int n) {
    if (n <= 0) n = default_threads();
    atomic_store(&wanted, n > POOL_MAX_THREADS ? POOL_MAX_THREADS : n);
}

int pool_threads(void) {
    int n = atomic_load(&wanted);
    if (n == 0) {   /* racing first callers compute the same value */
        n = default_threads();
        int zero = 0;
        atomic_compare_exchange_strong(&wanted, &zero, n);
        n = atomic_load(&wanted);
    }
    return n;
}

int pool_width(int64_t parts, int64_t work) {
    if (parts < 2 || work < POOL_MIN_WORK) return 1;
    int n = pool_threads();
    return parts < n ? (int)parts : n;
}

/* The flushing setting: a generation bumped by each change, and the generation each thread
 * last applied (the MXCSR is a thread's own register). */
static atomic_uint fpu_generation;
static atomic_bool fpu_flush;
static _Thread_local unsigned fpu_seen;

#ifdef HAS_MXCSR
#define MXCSR_FTZ 0x8000u   /* flush to zero: subnormal results become 0 */
#define MXCSR_DAZ 0x0040u   /* denormals are zero: subnormal operands read as 0 */
#endif

/* Brings this thread's floating-point mode to the current setting. */
static void fpu_sync(void) {
    unsigned g = atomic_load_explicit(&fpu_generation, memory_order_acquire);
    if (g == fpu_seen) return;
    fpu_seen = g;
#ifdef HAS_MXCSR
    unsigned csr = _mm_getcsr() & ~(MXCSR_FTZ | MXCSR_DAZ);
    _mm_setcsr(atomic_load(&fpu_flush) ? csr | MXCSR_FTZ | MXCSR_DAZ : csr);
#endif
}

bool pool_set_flush_denormal(bool on) {
#ifdef HAS_MXCSR
    atomic_store(&fpu_flush, on);
    atomic_fetch_add_explicit(&fpu_generation, 1, memory_order_release);
    fpu_sync();
    return true;
#else
    (void)on;
    return false;
#endif
}

bool pool_flush_denormal(void) { return atomic_load(&fpu_flush); }

/* Claims and runs parts until none is left or one failed; records a failure's message. */
static void run_parts(int slot) {
    fpu_sync();
    for (;;) {
        if (atomic_load_explicit(&job.failed, memory_order_relaxed)) return;
        int64_t p = atomic_fetch_add(&job.next, 1);
        if (p >= job.parts) return;
        if (job.fn(job.ud, p, slot) == 0) continue;
        pthread_mutex_lock(&mu);
        if (job.err_part < 0 || p < job.err_part) {
            job.err_part = p;
            snprintf(job.err, sizeof job.err, "%s", ops_ctx()->err);
            job.err_kind = op_error_kind();
        }
        pthread_mutex_unlock(&mu);
        atomic_store(&job.failed, true);
    }
}

typedef struct {
    int slot;
    uint64_t seen;
} WorkerArg;

static void *worker_main(void *p) {
    WorkerArg a = *(WorkerArg *)p;
    free(p);
    OpsCtx own;   /* op_fail's message lands here; any allocation aborts */
    ops_ctx_init_refusing(&own);
    ops_ctx_enter(&own);
    pthread_mutex_lock(&mu);
    for (;;) {
        while (generation == a.seen) pthread_cond_wait(&work_cv, &mu);
        a.seen = generation;
        if (a.slot >= job.width) continue;
        pthread_mutex_unlock(&mu);
        run_parts(a.slot);
        pthread_mutex_lock(&mu);
        if (--job.pending == 0) pthread_cond_signal(&done_cv);
    }
    return NULL;
}

/* A child of fork() has none of the workers (only the forking thread is copied): it starts
 * its own when it needs them. */
static void forget_workers(void) {
    pthread_mutex_init(&submit, NULL);
    pthread_mutex_init(&mu, NULL);
    pthread_cond_init(&work_cv, NULL);
    pthread_cond_init(&done_cv, NULL);
    nworkers = 0;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void) { pthread_atfork(NULL, NULL, forget_workers); }

/* Starts workers up to slot width-1 (submit held); the width that could be reached. */
static int start_workers(int width) {
    pthread_once(&atfork_once, register_atfork);
    while (nworkers < width - 1) {
        WorkerArg *a = malloc(sizeof *a);
        if (!a) break;
        pthread_mutex_lock(&mu);
        *a = (WorkerArg){ nworkers + 1, generation };
        pthread_mutex_unlock(&mu);
        pthread_t t;
        if (pthread_create(&t, NULL, worker_main, a)) { free(a); break; }
        pthread_detach(t);
        nworkers++;
    }
    return width < nworkers + 1 ? width : nworkers + 1;
}

static int run_serial(int64_t parts, PoolPartFn fn, void *ud) {
    fpu_sync();
    for (int64_t p = 0; p < parts; p++)
        if (fn(ud, p, 0)) return -1;
    return 0;
}

int pool_run(int64_t parts, int width, PoolPartFn fn, void *ud) {
    if (width < 2 || parts < 2 || pthread_mutex_trylock(&submit)) return run_serial(parts, fn, ud);
    width = start_workers(width);
    if (width < 2) {
        pthread_mutex_unlock(&submit);
        return run_serial(parts, fn, ud);
    }
    pthread_mutex_lock(&mu);
    job.fn = fn;
    job.ud = ud;
    job.parts = parts;
    job.width = width;
    atomic_store(&job.next, 0);
    atomic_store(&job.failed, false);
    job.err_part = -1;
    job.pending = width - 1;
    generation++;
    pthread_cond_broadcast(&work_cv);
    pthread_mutex_unlock(&mu);
    run_parts(0);   /* the caller's parts report like a worker's */
    pthread_mutex_lock(&mu);
    while (job.pending > 0) pthread_cond_wait(&done_cv, &mu);
    int64_t bad = job.err_part;
    if (bad >= 0) op_failk(job.err_kind, "%s", job.err);
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&submit);
    return bad >= 0 ? -1 : 0;
}
