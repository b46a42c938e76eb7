/* state.c - the interpreter as a state: entering it, protected calls, interrupts.
 *
 * Everything an interpreter uses lives in its Interp and the OpsCtx it owns (docs/internals.md,
 * "State and allocation"). Code that has no Interp at hand (freeing an object, recording on
 * the autograd tape, a kernel) finds the current one through a thread-local pointer that the
 * entry points set: interp_enter makes I and its ops context current, interp_leave puts back
 * what was current before, so a host may run two interpreters interleaved on one thread, or
 * one per thread. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "interp.h"
#include "mem.h"

_Thread_local Interp *interp_cur;

InterpScope interp_enter(Interp *I) {
    InterpScope saved = { interp_cur, ops_ctx_enter(I->opsctx) };
    interp_cur = I;
    return saved;
}

void interp_leave(InterpScope saved) {
    interp_cur = saved.interp;
    ops_ctx_leave(saved.ops);
}

/* What an out-of-memory jump may leave half-changed, as it was when the protected call began. */
typedef struct {
    Value *sp;
    int depth;
    struct Tape *tape;
    bool no_static, repl;
    Source *cur_src;
    CallSite call_site;
    int ntry;
    bool quiet;
} Snapshot;

static Snapshot snapshot(const Interp *I) {
    return (Snapshot){ I->sp, I->depth, I->tape, I->no_static, I->repl, I->cur_src, I->call_site, I->ntry, I->quiet };
}

/* Back to where the protected call began, with "out of memory" pending. What the unwound C
 * frames held only there (a half-built AST or graph, a temporary buffer, a tensor not yet
 * stored in a value) is not freed (docs/internals.md); objects are on the heap's lists and
 * go with interp_free. The values on the value stack above the snapshot are dropped
 * unreleased (a frame may have been filling its slots). */
static void recover(Interp *I, const Snapshot *s) {
    Source *failed_in = I->cur_src;   /* the error names the file it ran out of memory in */
    I->depth = s->depth;
    I->tape = s->tape;
    I->no_static = s->no_static;
    I->repl = s->repl;
    I->ntry = s->ntry;
    I->quiet = s->quiet;
    I->cur_src = s->cur_src;
    I->call_site = s->call_site;
    I->calling_builtin = NULL;
    I->sp = s->sp;
    I->heap.free_depth = 0;   /* a free is never interrupted (freeing allocates nothing) */
    val_heap_clear_marks();   /* printing, lifting, comparing marks of walks that never ended */
    interp_clear_error(I);
    I->exiting = false;
    interp_errork(I, ERRK_MEMORY, "out of memory");
    I->err_src = failed_in;
    if (I->stmt_src) {   /* the jump passed every location: the statement that was running has one */
        I->err_src = I->stmt_src;
        I->err_loc = I->stmt_loc;
        I->err_has_loc = true;
    }
}

/* The C stack the evaluator may use: what is left of the calling thread's below here, less a
 * margin for the deepest single evaluation step (sanitizers widen frames). Measured at every
 * outermost entry, since a state may be used from one thread and then another (tsl.h allows
 * it), and a host may call in from deep in its own stack. */
static void measure_c_stack(Interp *I) {
    char here;
    size_t left = 8u << 20;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *low;
        size_t size;
        if (pthread_attr_getstack(&attr, &low, &size) == 0 && &here > (char *)low &&
            &here <= (char *)low + size)
            left = (size_t)(&here - (char *)low);
        pthread_attr_destroy(&attr);
    }
    I->c_stack_base = &here;
    I->c_stack_limit = left > (4u << 20) ? left - (2u << 20) : left / 2;
}

int interp_protected(Interp *I, InterpBody body, void *ud) {
    InterpScope scope = interp_enter(I);
    jmp_buf here, *outer = I->opsctx->on_oom;
    if (!outer) measure_c_stack(I);   /* not nested in a running evaluation */
    Snapshot s = snapshot(I);
    volatile int rc;
    Source *stmt_src = I->stmt_src;
    SrcLoc stmt_loc = I->stmt_loc;
    I->stmt_src = NULL;   /* no statement of this call has begun yet */
    I->opsctx->on_oom = &here;
    if (setjmp(here) == 0) rc = body(I, ud);
    else {
        recover(I, &s);
        rc = INTERP_OOM;
    }
    I->opsctx->on_oom = outer;
    I->stmt_src = stmt_src;
    I->stmt_loc = stmt_loc;
    interp_leave(scope);
    return rc;
}

typedef struct {
    Value fn, *args, *out;
    int nargs;
} CallJob;

static int call_body(Interp *I, void *ud) {
    CallJob *j = ud;
    interp_clear_error(I);
    Value r = interp_call(I, j->fn, j->args, j->nargs);
    if (IS_ERR(r)) return 1;
    *j->out = r;
    return 0;
}

int interp_pcall(Interp *I, Value fn, Value *args, int nargs, Value *out) {
    CallJob j = { fn, args, out, nargs };
    *out = NIL_VAL;
    int rc = interp_protected(I, call_body, &j);
    return rc == INTERP_OOM ? 1 : rc;
}

/* A signal handler may only touch lock-free atomics. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the interrupt flags are lock-free");

void interp_interrupt(Interp *I) { I->interrupt_flag = 1; }

void interp_time_up(Interp *I) {
    I->timeout_flag = 1;
    I->interrupt_flag = 1;
}

void interp_set_stdlib_dir(Interp *I, const char *dir) {
    snprintf(I->stdlib_dir, sizeof I->stdlib_dir, "%s", dir);
}
