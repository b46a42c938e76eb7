/* interp.c - the tree-walking evaluator.
 *
 * eval() returns an owned Value or ERR_VAL; exec() returns an Exec status. Both keep
 * every temporary on the C stack or the value stack and release it on every path.
 * Numbers take a fast path in arithmetic and comparisons; everything else goes
 * through value_binary and the ops library. */
#include <pthread.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include "interp.h"
#include "methods.h"
#include "builtins.h"
#include "autograd.h"
#include "builtins.h"
#include "gc.h"
#include "mem.h"
#include "tops.h"
#include "infer.h"

/* The dispatchers eval() and exec() are inlined into their callers and handle the common
 * leaves (numbers, local names) themselves; every other kind has a function of its own, kept
 * out of line so that no case pays for the registers and stack frame of another (a tree
 * walker's cost is mostly the prologues of its recursive calls). */
#define NOINLINE __attribute__((noinline))
#define COLD __attribute__((noinline, cold))

static inline Value eval(Interp *I, Frame *f, Node *n);
static inline Exec exec(Interp *I, Frame *f, Node *n);
static Exec exec_block(Interp *I, Frame *f, Node *b);
static inline Exec exec_stmts(Interp *I, Frame *f, Node *b);
static inline Exec exec_cond(Interp *I, Frame *f, Node *cond, int *out);
static Exec exec_if_from(Interp *I, Frame *f, Node *n, int c);
static inline Exec exec_body(Interp *I, Frame *f, Node *b);

/* ---------- errors ---------- */

__attribute__((format(printf, 4, 0)))
static Value error_v(Interp *I, ErrKind k, const SrcLoc *loc, const char *fmt, va_list ap) {
    if (I->err_set) return ERR_VAL;
    I->err_set = true;
    I->err_kind = k;
    vsnprintf(I->err_msg, sizeof I->err_msg, fmt, ap);
    if (loc) interp_attach_loc(I, *loc);
    return ERR_VAL;
}

Value interp_error(Interp *I, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Value v = error_v(I, ERRK_VALUE, NULL, fmt, ap);
    va_end(ap);
    return v;
}

Value interp_error_at(Interp *I, SrcLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Value v = error_v(I, ERRK_VALUE, &loc, fmt, ap);
    va_end(ap);
    return v;
}

Value interp_errork(Interp *I, ErrKind k, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Value v = error_v(I, k, NULL, fmt, ap);
    va_end(ap);
    return v;
}

Value interp_error_atk(Interp *I, ErrKind k, SrcLoc loc, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    Value v = error_v(I, k, &loc, fmt, ap);
    va_end(ap);
    return v;
}

Value interp_op_error(Interp *I) { return interp_errork(I, op_error_kind(), "%s", op_error()); }

void interp_attach_loc(Interp *I, SrcLoc loc) {
    if (!I->err_set || I->err_has_loc) return;
    I->err_has_loc = true;
    I->err_loc = loc;
    I->err_src = I->cur_src;
}

void interp_clear_error(Interp *I) {
    I->err_set = I->err_has_loc = I->err_final = false;
    I->err_kind = ERRK_VALUE;
    I->err_src = NULL;   /* may be a REPL input freed since */
    I->interrupted = false;
    I->err_msg[0] = 0;
    I->traceback.ninner = I->traceback.nouter = I->traceback.outer_first = 0;
    I->traceback.hidden = 0;
}

/* Ctrl-C and --timeout arrive as signals (repl/main.c), or from another thread of a host
 * (tsl_interrupt): they only set the state's atomic flags (interp_interrupt, interp_time_up),
 * so the hot-path poll is one load of I->interrupt_flag. I->timeout_flag says which it was
 * and stays set: once the time is up, every later poll fails too. The wake-up flag is
 * cleared (in one exchange) before the reason is read, so a signal that lands in between is
 * reported now or at the next poll. */
bool interp_check_signals(Interp *I) {
    if (!atomic_exchange(&I->interrupt_flag, 0)) return true;
    if (I->timeout_flag) {
        I->interrupt_flag = 1;
        interp_error(I, "time limit exceeded (--timeout)");
        I->err_final = true;
        return false;
    }
    interp_error(I, "interrupted");
    I->interrupted = I->err_final = true;
    return false;
}

/* Poll Ctrl-C, the time limit and the operation budget (one operation counted). */
bool interp_check_limits(Interp *I) {
    if (!interp_check_signals(I)) return false;
    /* objects count toward --max-memory as they are made (that cannot fail): check here */
    if (mem_over_budget()) {
        interp_errork(I, ERRK_MEMORY, MAX_MEMORY_MSG, (long long)I->opsctx->max_live);
        return false;
    }
    if (I->max_ops && ++I->ops > I->max_ops) {
        interp_error(I, "operation budget exceeded (--max-ops %lld)", (long long)I->max_ops);
        I->err_final = true;
        return false;
    }
    return true;
}

#define POLL(I) (!((I)->interrupt_flag | (I)->limits_on) || interp_check_limits(I))

/* ---------- truthiness ---------- */

int interp_truthy(Interp *I, Value v) {
    if (v.type == VAL_BOOL) return v.as.b;
    if (v.type != VAL_TENSOR) return val_truthy_simple(v);
    Tensor *t = v.as.t;
    if (t->size != 1) {
        interp_error(I, AMBIGUOUS_TRUTH_FMT, (long long)t->size);
        return -1;
    }
    double x;
    if (tensor_first(t, &x)) return interp_op_error(I), -1;   /* a GPU tensor is copied */
    return x != 0;
}

/* ---------- variables ---------- */

COLD static Value undefined_name(Interp *I, Frame *f, Node *n) {
    char hint[SUGGEST_MAX_NAME + 24];
    return interp_error_atk(I, ERRK_KEY, n->loc, "undefined variable '%s'%s", n->str,
                            interp_name_hint(f->mod, f->closure ? f->closure->proto : NULL, n->str, hint, sizeof hint));
}

__attribute__((always_inline)) static inline Value *name_ref(Frame *f, const Node *n) {
    if (__builtin_expect(n->scope == SCOPE_LOCAL, 1)) return &f->slots[n->slot];   /* most names */
    switch (n->scope) {
    case SCOPE_CELL: return &((ObjCell *)f->slots[n->slot].as.o)->v;
    case SCOPE_UPVAL: return &f->closure->upvals[n->slot]->v;
    default: return &f->mod->g.vals[n->slot];
    }
}

__attribute__((always_inline)) static inline void assign_name(Frame *f, Node *n, Value v) {
    Value *ref = name_ref(f, n);
    Value old = *ref;
    *ref = v;
    val_release(old);
}

/* Stores a number into a variable. The double goes straight into the slot: built as a Value
 * first, it would travel through an integer register and back, on the loop-carried path of
 * every `s = s + x`. */
__attribute__((always_inline)) static inline void assign_number(Frame *f, Node *n, double x) {
    Value *ref = name_ref(f, n);
    Value old = *ref;
    ref->type = VAL_NUM;
    ref->as.n = x;
    val_release(old);
}

/* ---------- calls ---------- */

static bool c_stack_ok(Interp *I) {
    char here;
    return I->c_stack_base - &here < (ptrdiff_t)I->c_stack_limit;
}

static Value call_builtin(Interp *I, ObjBuiltin *b, CallArgs *a) {
    SrcLoc loc = I->call_site.loc;   /* b may call TSL code, which makes calls of its own */
    Value r = builtin_run(I, b, a);
    /* under grad, every built-in is a boundary a value may leave the tape by */
    return I->tape ? autograd_after_builtin(I, b, a, r, loc) : r;
}

/* Calls a closure whose positional arguments are already at `base` on the value stack
 * (they become its first slots). Keywords come separately. Consumes base[0..npos). */
static Value call_closure_eager(Interp *I, ObjClosure *c, Value *base, int npos, CallArgs *kw);

/* The frame of a failed call of c: "in NAME() called from" the call expression that was
 * being evaluated when c was entered. */
static void add_traceback(Interp *I, CallSite site, ObjClosure *c) {
    if (I->err_set && site.src)
        traceback_add(&I->traceback, c->proto->name[0] ? c->proto->name : "<fn>", site.src, site.loc);
}

static const StaticHooks *static_hooks;   /* published once, read by every thread */
void interp_set_static_hooks(const StaticHooks *h) { __atomic_store_n(&static_hooks, h, __ATOMIC_RELEASE); }
const StaticHooks *interp_static_hooks(void) { return __atomic_load_n(&static_hooks, __ATOMIC_ACQUIRE); }

/* A static fn runs compiled (vm/static.c) unless static code is switched off. Every call of
 * a closure but fast_call's comes here (call_value_at: a call expression, a dict's forward, a
 * built-in calling back), so this is where a failed call gets its traceback frame. */
static Value call_closure(Interp *I, ObjClosure *c, Value *base, int npos, CallArgs *kw) {
    CallSite site = I->call_site;
    const StaticHooks *vm = interp_static_hooks();
    Value r;
    if (!c->proto->is_static || I->no_static || !vm) {
        r = call_closure_eager(I, c, base, npos, kw);
    } else {
        I->sp = base + npos;
        r = vm->call(I, c, base, npos, kw);
        for (int i = 0; i < npos; i++) val_release(base[i]);
        I->sp = base;
    }
    /* an error with no place yet was raised by the call itself (an argument missing or extra,
     * the depth limit) before c ran: the call expression places it, and c gets no frame */
    if (IS_ERR(r) && I->err_has_loc) add_traceback(I, site, c);
    return r;
}

Value interp_call_eager(Interp *I, ObjClosure *fn, Value *args, int nargs, CallArgs *kw) {
    Value *base = I->sp;
    if (base + nargs + 1 >= I->stack_end) return interp_error(I, "stack overflow");
    for (int i = 0; i < nargs; i++) base[i] = val_retain(args[i]);
    I->sp = base + nargs;
    return call_closure_eager(I, fn, base, nargs, kw);
}

static Value call_closure_eager(Interp *I, ObjClosure *c, Value *base, int npos, CallArgs *kw) {
    FnProto *p = c->proto;
    const char *fname = p->name[0] ? p->name : "<fn>";
    Value result = ERR_VAL;
    int nslots = p->nlocals;
    if (base + nslots + 8 > I->stack_end || !c_stack_ok(I)) {
        for (int i = 0; i < npos; i++) val_release(base[i]);
        return interp_error(I, "stack overflow (recursion too deep)");
    }
    if (I->depth >= I->max_depth) {
        for (int i = 0; i < npos; i++) val_release(base[i]);
        return interp_error(I, "maximum call depth exceeded (%d frames, see --max-depth)", I->max_depth);
    }
    for (int i = npos; i < nslots; i++) base[i] = UNDEF_VAL;
    I->sp = base + nslots;
    Frame fr = { base, c, c->module };
    if (npos > p->nparams) {
        interp_errork(I, ERRK_TYPE, "%s() takes %d argument%s but %d were given", fname, p->nparams,
                     p->nparams == 1 ? "" : "s", npos);
        goto out;
    }
    for (int k = 0; kw && k < kw->nkw; k++) {
        int i = 0;
        while (i < p->nparams && strcmp(p->params[i], kw->kwnames[k])) i++;
        if (i == p->nparams) {
            char hint[SUGGEST_MAX_NAME + 24];
            interp_errork(I, ERRK_TYPE, "%s() got an unknown keyword argument '%s'%s", fname, kw->kwnames[k],
                          interp_param_hint(p, kw->kwnames[k], hint, sizeof hint));
            goto out;
        }
        if (base[i].type != VAL_UNDEF) {
            interp_errork(I, ERRK_TYPE, "%s() got multiple values for parameter '%s'", fname, p->params[i]);
            goto out;
        }
        base[i] = val_retain(kw->kw[k]);
    }
    Source *saved_src = I->cur_src;
    I->cur_src = closure_src(c);
    I->depth++;
    for (int i = npos; i < p->nparams; i++) {
        if (base[i].type != VAL_UNDEF) continue;
        if (!p->defaults[i]) {
            I->cur_src = saved_src;
            I->depth--;
            interp_errork(I, ERRK_TYPE, "%s() missing argument '%s'", fname, p->params[i]);
            goto out;
        }
        Value d = eval(I, &fr, p->defaults[i]);
        if (IS_ERR(d)) { I->cur_src = saved_src; I->depth--; goto out; }
        base[i] = d;
    }
    for (int i = 0; i < nslots && p->has_cells; i++)
        if (p->is_cell[i]) {
            ObjCell *cell = cell_new(base[i]);
            val_release(base[i]);
            base[i] = OBJ_VAL(VAL_CELL, cell);
        }
    Source *saved_stmt_src = I->stmt_src;
    SrcLoc saved_stmt = I->stmt_loc;   /* the caller's statement again once the call is over */
    Exec st = exec_block(I, &fr, p->body);
    I->depth--;
    I->cur_src = saved_src;
    I->stmt_src = saved_stmt_src;
    I->stmt_loc = saved_stmt;
    if (st == EX_RETURN) { result = I->ret; I->ret = NIL_VAL; }
    else if (st == EX_ERR) result = ERR_VAL;
    else if (st != EX_OK) result = interp_error_at(I, I->jump_loc, "'break' or 'continue' outside a loop");
    else result = NIL_VAL;
out:
    for (int i = 0; i < nslots; i++) val_release(base[i]);
    I->sp = base;
    return result;
}

static Value call_value_at(Interp *I, Value fn, Value *base, int npos, CallArgs *kw);

/* Calls fn with args at base[0..npos) on the value stack; consumes them. */
static Value call_value_at(Interp *I, Value fn, Value *base, int npos, CallArgs *kw) {
    if (fn.type == VAL_FUNC && fn.as.o->kind == OBJ_CLOSURE)
        return call_closure(I, AS_CLOSURE(fn), base, npos, kw);
    if (fn.type == VAL_FUNC) {
        CallArgs a = { base, npos, kw ? kw->kwnames : NULL, kw ? kw->kw : NULL, kw ? kw->nkw : 0 };
        I->sp = base + npos;
        Value r = call_builtin(I, AS_BUILTIN(fn), &a);
        for (int i = 0; i < npos; i++) val_release(base[i]);
        I->sp = base;
        return r;
    }
    if (fn.type == VAL_DICT) {
        /* m(x) calls m's forward with m first, whatever its first parameter's name (spec 4) */
        Value *fwd = dict_get(AS_DICT(fn), "forward", 7);
        if (!fwd) {
            for (int i = 0; i < npos; i++) val_release(base[i]);
            return interp_errork(I, ERRK_TYPE, "dict is not callable: it has no 'forward' field");
        }
        if (base + npos + 1 >= I->stack_end) {
            for (int i = 0; i < npos; i++) val_release(base[i]);
            return interp_error(I, "stack overflow (recursion too deep)");
        }
        memmove(base + 1, base, sizeof(Value) * (size_t)npos);
        base[0] = val_retain(fn);
        Value f2 = val_retain(*fwd);
        Value r = call_value_at(I, f2, base, npos + 1, kw);
        val_release(f2);
        return r;
    }
    for (int i = 0; i < npos; i++) val_release(base[i]);
    return interp_errork(I, ERRK_TYPE, "a %s is not callable", val_type_name(fn));
}

Value interp_call_args(Interp *I, Value fn, CallArgs *a) {
    Value *base = I->sp;
    if (base + a->npos + 1 >= I->stack_end) return interp_error(I, "stack overflow");
    for (int i = 0; i < a->npos; i++) base[i] = val_retain(a->pos[i]);
    I->sp = base + a->npos;
    return call_value_at(I, fn, base, a->npos, a->nkw ? a : NULL);
}

Value interp_call(Interp *I, Value fn, Value *args, int nargs) {
    CallArgs a = { args, nargs, NULL, NULL, 0 };
    return interp_call_args(I, fn, &a);
}

/* The common call: a plain closure, positional arguments matching its parameters, no
 * keywords, no captured locals. Arguments are evaluated straight into the new frame. */
/* Runs a function body to its value (owned), or ERR_VAL. A `return e` among the body's own
 * statements (the usual last one) hands e over directly instead of through I->ret. */
__attribute__((always_inline)) static inline Value run_body(Interp *I, Frame *f, Node *body) {
    for (int i = 0; i < body->n; i++) {
        Node *s = body->kids[i];
        if (!interp_poll(I)) { interp_attach_loc(I, s->loc); return ERR_VAL; }
        I->stmt_loc = s->loc;   /* the return and if below do not pass through exec() */
        I->stmt_src = I->cur_src;
        if (s->kind == AST_RETURN) {
            if (I->heap.gc_due) gc_collect();   /* as exec() does before a statement */
            return s->a ? eval(I, f, s->a) : NIL_VAL;
        }
        Exec st;
        if (s->kind == AST_IF) {
            /* a guard, `if c { return e }` (the base case of a recursion), returns e directly */
            if (I->heap.gc_due) gc_collect();
            int c;
            if (exec_cond(I, f, s->a, &c) == EX_ERR) return ERR_VAL;
            if (!c && !s->c) continue;
            Node *b = s->b;
            if (c && b->n == 1 && b->kids[0]->kind == AST_RETURN) {
                Node *r = b->kids[0];
                if (!interp_poll(I)) { interp_attach_loc(I, r->loc); return ERR_VAL; }
                if (I->heap.gc_due) gc_collect();
                return r->a ? eval(I, f, r->a) : NIL_VAL;
            }
            st = exec_if_from(I, f, s, c);
        } else st = exec(I, f, s);
        if (st == EX_OK) continue;
        if (st == EX_RETURN) {
            Value r = I->ret;
            I->ret = NIL_VAL;
            return r;
        }
        if (st == EX_ERR) return ERR_VAL;
        return interp_error_at(I, I->jump_loc, "'break' or 'continue' outside a loop");
    }
    return NIL_VAL;
}

/* The error of a call that would go past the value stack, the C stack or --max-depth. */
COLD static Value call_too_deep(Interp *I, Node *n) {
    if (I->depth >= I->max_depth)
        return interp_error_at(I, n->loc, "maximum call depth exceeded (%d frames, see --max-depth)", I->max_depth);
    return interp_error_at(I, n->loc, "stack overflow (recursion too deep)");
}

/* Evaluates the n expressions onto the value stack at base[from..] (I->sp follows them); on an
 * error base[0..] is released and I->sp is back at base. */
__attribute__((always_inline)) static inline bool push_values(Interp *I, Frame *f, Node **exprs, int n, Value *base, int from) {
    for (int i = from; i < from + n; i++) {
        Value v = eval(I, f, exprs[i - from]);
        if (IS_ERR(v)) {
            for (int k = 0; k < i; k++) val_release(base[k]);
            I->sp = base;
            return false;
        }
        base[i] = v;
        I->sp = base + i + 1;
    }
    return true;
}

/* self, when not UNDEF, is a method's object (taken): the first argument, before n's. */
__attribute__((always_inline)) static inline Value fast_call(Interp *I, Frame *f, Node *n, ObjClosure *c, Value self) {
    CallSite site = I->call_site;
    FnProto *p = c->proto;
    Value *base = I->sp;
    int nslots = p->nlocals, from = self.type != VAL_UNDEF;
    if (base + nslots + 8 > I->stack_end || !c_stack_ok(I) || I->depth >= I->max_depth) {
        val_release(self);
        return call_too_deep(I, n);
    }
    if (from) {
        base[0] = self;
        I->sp = base + 1;
    }
    if (!push_values(I, f, n->kids, n->n, base, from)) return ERR_VAL;
    for (int i = n->n + from; i < nslots; i++) base[i] = UNDEF_VAL;
    I->sp = base + nslots;
    Frame fr = { base, c, c->module };
    Source *saved_src = I->cur_src, *saved_stmt_src = I->stmt_src;
    SrcLoc saved_stmt = I->stmt_loc;   /* the caller's statement again once the call is over */
    I->cur_src = closure_src(c);
    I->depth++;
    Value result = run_body(I, &fr, p->body);
    I->depth--;
    I->cur_src = saved_src;
    I->stmt_src = saved_stmt_src;
    I->stmt_loc = saved_stmt;
    for (int i = 0; i < nslots; i++) val_release(base[i]);
    I->sp = base;
    if (IS_ERR(result)) {
        interp_attach_loc(I, n->loc);
        add_traceback(I, site, c);
    }
    return result;
}

NOINLINE static Value call_general(Interp *I, Frame *f, Node *n, Value fn, Value self);
NOINLINE static Value call_method(Interp *I, Frame *f, Node *n);
NOINLINE static Value call_builtin_positional(Interp *I, Frame *f, Node *n, ObjBuiltin *b, Value self);

/* Calls fn (taken) as the call expression n says, with self (taken) first unless it is UNDEF. */
__attribute__((always_inline)) static inline Value call_expr(Interp *I, Frame *f, Node *n, Value fn, Value self) {
    int npos = n->n + (self.type != VAL_UNDEF);
    if (fn.type == VAL_FUNC && fn.as.o->kind == OBJ_CLOSURE && n->nk == 0) {
        FnProto *p = AS_CLOSURE(fn)->proto;
        if (npos == p->plain_arity || (npos == p->nparams && !p->has_cells && I->no_static)) {
            Value r = fast_call(I, f, n, AS_CLOSURE(fn), self);
            val_release(fn);
            return r;
        }
    }
    if (fn.type == VAL_FUNC && fn.as.o->kind == OBJ_BUILTIN && n->nk == 0) {
        Value r = call_builtin_positional(I, f, n, AS_BUILTIN(fn), self);
        val_release(fn);
        return r;
    }
    return call_general(I, f, n, fn, self);
}

NOINLINE static Value eval_call(Interp *I, Frame *f, Node *n) {
    if (!POLL(I)) {   /* the poll set the message; give it this call's location */
        interp_attach_loc(I, n->loc);
        return ERR_VAL;
    }
    if (n->a->kind == AST_FIELD) return call_method(I, f, n);
    Value fn = eval(I, f, n->a);
    if (IS_ERR(fn)) return fn;
    /* this expression is the call site of whatever function runs until it returns, however
     * the call gets there (directly, through a dict's forward, or from a built-in) */
    CallSite outer = I->call_site;
    I->call_site = (CallSite){ I->cur_src, n->loc };
    Value r = call_expr(I, f, n, fn, UNDEF_VAL);
    I->call_site = outer;
    return r;
}

static Value field_of(Interp *I, Value obj, const char *name);

/* The op built-in a tensor's field names, or NULL: looked up once per field node (its slot
 * caches the OpCode, OP__COUNT for none; the op table never changes). */
static ObjBuiltin *tensor_method(Interp *I, Node *field) {
    if (field->slot < 0) field->slot = (int)method_tensor_op(field->str);
    /* not an op: one of the conversions (x.item()), or nothing */
    return field->slot == OP__COUNT ? method_tensor_builtin(I, field->str) : builtins_of_op(I, (OpCode)field->slot);
}

/* obj.name(args): obj evaluated once, then passed first when the field is a method (a dict's
 * function naming `self`, a tensor's op; methods.h), else the field called as written. */
NOINLINE static Value call_method(Interp *I, Frame *f, Node *n) {
    Node *field = n->a;
    Value obj = eval(I, f, field->a);
    if (IS_ERR(obj)) return obj;
    Value fn;
    bool bind;
    ObjBuiltin *op = obj.type == VAL_TENSOR ? tensor_method(I, field) : NULL;
    if (obj.type == VAL_TENSOR && !op && method_is_tensor_attr(field->str)) {
        val_release(obj);
        return interp_error_atk(I, ERRK_TYPE, n->loc, METHOD_ATTR_CALLED, field->str, field->str);
    }
    if (op) {
        fn = val_retain(OBJ_VAL(VAL_FUNC, op));
        bind = true;
    } else {
        fn = field_of(I, obj, field->str);
        if (IS_ERR(fn)) {
            val_release(obj);
            interp_attach_loc(I, field->loc);
            return fn;
        }
        bind = obj.type == VAL_DICT && method_value_takes_self(fn);
    }
    CallSite outer = I->call_site;
    I->call_site = (CallSite){ I->cur_src, n->loc };
    if (!bind) {
        val_release(obj);
        obj = UNDEF_VAL;
    }
    Value r = call_expr(I, f, n, fn, obj);
    I->call_site = outer;
    return r;
}

/* A built-in called with positional arguments only (len(xs), push(xs, x), tanh(h)): the
 * arguments evaluated onto the value stack and handed over as they lie. */
NOINLINE static Value call_builtin_positional(Interp *I, Frame *f, Node *n, ObjBuiltin *b, Value self) {
    Value *base = I->sp;
    int from = self.type != VAL_UNDEF, npos = n->n + from;
    if (base + npos + 2 >= I->stack_end) {
        val_release(self);
        return interp_error_at(I, n->loc, "stack overflow (recursion too deep)");
    }
    if (from) {
        base[0] = self;
        I->sp = base + 1;
    }
    if (!push_values(I, f, n->kids, n->n, base, from)) return ERR_VAL;
    CallArgs a = { base, npos, NULL, NULL, 0 };
    Value r = call_builtin(I, b, &a);
    for (int i = 0; i < npos; i++) val_release(base[i]);
    I->sp = base;
    if (IS_ERR(r)) interp_attach_loc(I, n->loc);
    return r;
}

/* Any other call (keywords, built-ins, dicts with forward, defaults, cells, static fns,
 * methods): the arguments evaluated onto the value stack, after self when it is not UNDEF (a
 * method's object, call_method), then call_value_at. Takes fn and self. */
NOINLINE static Value call_general(Interp *I, Frame *f, Node *n, Value fn, Value self) {
    Value *base = I->sp;
    int from = self.type != VAL_UNDEF, npos = n->n + from;
    if (base + npos + n->nk + 2 >= I->stack_end) {
        val_release(fn);
        val_release(self);
        return interp_error_at(I, n->loc, "stack overflow (recursion too deep)");
    }
    if (from) {
        base[0] = self;
        I->sp = base + 1;
    }
    if (!push_values(I, f, n->kids, n->n, base, from) || !push_values(I, f, n->kw, n->nk, base, npos)) {
        val_release(fn);
        return ERR_VAL;
    }
    CallArgs kw = { NULL, 0, n->names, base + npos, n->nk };
    /* keyword values sit above the positional ones; the callee's frame starts at base, so
     * move them out of the way first */
    Value kwbuf[16];
    Value *kwv = n->nk <= 16 ? kwbuf : mem_alloc(sizeof(Value) * (size_t)n->nk);
    memcpy(kwv, base + npos, sizeof(Value) * (size_t)n->nk);
    kw.kw = kwv;
    I->sp = base + npos;
    Value r = call_value_at(I, fn, base, npos, n->nk ? &kw : NULL);
    for (int k = 0; k < n->nk; k++) val_release(kwv[k]);
    if (kwv != kwbuf) mem_free(kwv);
    if (IS_ERR(r)) interp_attach_loc(I, n->loc);
    val_release(fn);
    return r;
}

/* ---------- operators ---------- */

/* Floor modulo with NumPy's signs (the zero of 3 % -1 is -0): the op table's rule. */
double num_floor_mod(double a, double b) { return op_binary_number(OP_MOD, a, b); }


/* The tensor op of a binary operator token (shared with the static compiler): the op
 * whose symbol in ops.def is the token's text. */
/* The op of each operator token: filled once per process, read-only afterwards. */
static OpCode op_of_token[TOK__COUNT];
static void op_of_token_build(void) {
    for (int t = 0; t < TOK__COUNT; t++) op_of_token[t] = op_by_symbol(tok_symbol((TokKind)t), 2);
}

int tensor_op_of(int tok) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, op_of_token_build);
    return tok >= 0 && tok < TOK__COUNT ? (int)op_of_token[tok] : OP__COUNT;
}

static Value tensor_result(Interp *I, Tensor *t) {
    if (!t) return interp_op_error(I);
    return TENSOR_VAL(t);
}

static Value concat_lists(ObjList *a, ObjList *b) {
    ObjList *l = list_new(a->len + b->len);
    for (int i = 0; i < a->len; i++) list_push(l, a->items[i]);
    for (int i = 0; i < b->len; i++) list_push(l, b->items[i]);
    return OBJ_VAL(VAL_LIST, l);
}

/* A number as a 0-d tensor of dtype dt, converted as astype converts. */
static Value scalar_as(Interp *I, double x, DType dt) {
    Tensor *f = tensor_scalar(DT_F64, x);
    Tensor *t = f ? tensor_astype(f, dt) : NULL;
    tensor_release(f);
    return t ? TENSOR_VAL(t) : interp_op_error(I);
}

/* A tensor, number or bool as an operand of an op (numbers and bools are weak scalars). */
static OpArg value_arg(Value v) {
    if (v.type == VAL_TENSOR) return op_arg_tensor(v.as.t);
    return op_arg_num(v.type == VAL_BOOL ? v.as.b : v.as.n, v.type == VAL_BOOL);
}

/* Operators take no attributes. */
static const OpAttrs no_attrs = { .naxes = -1, .dtype = -1 };

/* Every tensor the evaluator itself makes from tensors (operators, attributes) comes from
 * here: the op runs and, under grad, is recorded, so no such path can leave the tape behind
 * (a transpose that was not recorded made grad(x.T * x.T) zero). */
static Value recorded_op(Interp *I, const OpCall *c) {
    Tensor *out[OP_MAX_OUT] = { NULL, NULL, NULL };
    if (op_run(c, out)) return interp_op_error(I);
    if (I->tape && autograd_record(c, out)) {
        for (int k = 0; k < OP_MAX_OUT; k++) tensor_release(out[k]);
        return interp_op_error(I);
    }
    return TENSOR_VAL(out[0]);
}

/* a (op) b through the op core. */
static Value tensor_binary(Interp *I, OpCode op, Value a, Value b) {
    if (!interp_poll(I)) return ERR_VAL;   /* before the kernel, not after it */
    OpArg in[2] = { value_arg(a), value_arg(b) };
    OpCall c = { op, 2, in, &no_attrs };
    return recorded_op(I, &c);
}

/* Arithmetic and comparison on two numbers: the one definition eager code, the static
 * compiler's folding and the static VM all use (comparisons give 0 or 1). */
double num_binary(int op, double x, double y) {
    switch (op) {
    case TOK_PLUS: return x + y;
    case TOK_MINUS: return x - y;
    case TOK_STAR: return x * y;
    case TOK_SLASH: return x / y;
    case TOK_PERCENT: return num_floor_mod(x, y);
    case TOK_SLASHSLASH: return op_binary_number(OP_FLOOR_DIVIDE, x, y);
    case TOK_POW: return pow(x, y);
    case TOK_LT: return x < y;
    case TOK_LE: return x <= y;
    case TOK_GT: return x > y;
    case TOK_GE: return x >= y;
    case TOK_EQ: return x == y;
    default: return x != y;
    }
}

static bool is_comparison_tok(int op) {
    return op == TOK_EQ || op == TOK_NE || op == TOK_LT || op == TOK_LE || op == TOK_GT || op == TOK_GE;
}

/* The bitwise operators: on numbers and bools through the op table's number rule. */
static bool is_bitwise_tok(int op) { return op == TOK_AMP || op == TOK_PIPE || op == TOK_CARET || op == TOK_TILDE; }

/* An F_NUM op on numbers and bools (n operands, each VAL_NUM or VAL_BOOL): a number, or a
 * bool where the op says so (& | ^ ~ on two bools), or an error (& of 1.5). */
static Value number_op_values(Interp *I, OpCode op, const Value *v, int n) {
    OpArg in[2];
    for (int i = 0; i < n; i++) in[i] = value_arg(v[i]);
    double r;
    if (op_run_number(op, in, n, NULL, &r)) return interp_op_error(I);
    return op_number_is_bool(op, in, n) ? BOOL_VAL(r != 0) : NUM_VAL(r);
}

/* `x in c`: an element of a list (by ==; a tensor is equal only to itself), a key of a
 * dict, a substring of a string. Both borrowed. */
static Value value_in(Interp *I, Value x, Value c, bool negate) {
    bool found = false;
    if (c.type == VAL_LIST) {
        ObjList *l = AS_LIST(c);
        for (int i = 0; i < l->len && !found; i++) {
            Value y = l->items[i];
            if (x.type == VAL_TENSOR || y.type == VAL_TENSOR) found = x.type == y.type && x.as.t == y.as.t;
            else {
                int eq = val_equal_in(I, x, y);
                if (eq < 0) return ERR_VAL;
                found = eq;
            }
        }
    } else if (c.type == VAL_DICT) {
        found = x.type == VAL_STR && dict_get(AS_DICT(c), AS_STR(x)->chars, AS_STR(x)->len) != NULL;
    } else if (c.type == VAL_STR) {
        if (x.type != VAL_STR)
            return interp_errork(I, ERRK_TYPE, "'in' on a string needs a string on the left, got %s", val_type_name(x));
        ObjString *h = AS_STR(c), *nd = AS_STR(x);
        if (nd->len == 0) found = true;
        for (int i = 0; !found && i + nd->len <= h->len; i++)
            found = !memcmp(h->chars + i, nd->chars, (size_t)nd->len);
    } else {
        return interp_errork(I, ERRK_TYPE, "'%s' needs a list, dict or string on the right, got %s", negate ? "not in" : "in",
                            val_type_name(c));
    }
    return BOOL_VAL(found != negate);
}

/* a + y for a string a. `unique`: a is a variable's only reference and the result replaces
 * it (s = s + e, s += e), so y may go into a's spare room, and a new string gets room to
 * double: a string built by appending in a loop costs linear time overall, not quadratic. */
static Value str_concat(Interp *I, Value a, ObjString *y, bool unique) {
    ObjString *x = AS_STR(a);
    int64_t total = (int64_t)x->len + y->len;
    if (total >= INT_MAX / 2) return interp_error(I, "string too long (%lld bytes)", (long long)total);
    if (unique && x->cap - x->len >= y->len) {
        str_append_in_place(x, y->chars, y->len);
        return val_retain(a);
    }
    ObjString *r = str_new_room(x->chars, x->len, unique ? (int)total * 2 : (int)total);
    str_append_in_place(r, y->chars, y->len);
    return OBJ_VAL(VAL_STR, r);
}

/* a (op) b for every pair of kinds; both borrowed. */
Value value_binary(Interp *I, int op, Value a, Value b) {
    if (op == TOK_IN || op == TOK_NOT_IN) return value_in(I, a, b, op == TOK_NOT_IN);
    if (is_bitwise_tok(op) && (a.type == VAL_NUM || a.type == VAL_BOOL) && (b.type == VAL_NUM || b.type == VAL_BOOL))
        return number_op_values(I, (OpCode)tensor_op_of(op), (Value[]){ a, b }, 2);
    if (a.type == VAL_NUM && b.type == VAL_NUM && op != TOK_AT) {
        double r = num_binary(op, a.as.n, b.as.n);
        return is_comparison_tok(op) ? BOOL_VAL(r != 0) : NUM_VAL(r);
    }
    bool at = a.type == VAL_TENSOR, bt = b.type == VAL_TENSOR;
    if (op == TOK_AT && !(at && bt))
        return interp_errork(I, ERRK_TYPE, "'@' needs two tensors, got %s and %s", val_type_name(a), val_type_name(b));
    if ((at && (bt || b.type == VAL_NUM || b.type == VAL_BOOL)) || (bt && (a.type == VAL_NUM || a.type == VAL_BOOL)))
        return tensor_binary(I, (OpCode)tensor_op_of(op), a, b);
    if (op == TOK_EQ || op == TOK_NE) {
        int eq = val_equal_in(I, a, b);
        return eq < 0 ? ERR_VAL : BOOL_VAL((eq == 1) == (op == TOK_EQ));
    }
    if (a.type == VAL_STR && b.type == VAL_STR) {
        ObjString *x = AS_STR(a), *y = AS_STR(b);
        if (op == TOK_PLUS) return str_concat(I, a, y, false);
        int c = memcmp(x->chars, y->chars, (size_t)(x->len < y->len ? x->len : y->len));
        if (c == 0) c = (x->len > y->len) - (x->len < y->len);
        switch (op) {
        case TOK_LT: return BOOL_VAL(c < 0);
        case TOK_LE: return BOOL_VAL(c <= 0);
        case TOK_GT: return BOOL_VAL(c > 0);
        case TOK_GE: return BOOL_VAL(c >= 0);
        default: break;
        }
    }
    if (op == TOK_PLUS && a.type == VAL_LIST && b.type == VAL_LIST) return concat_lists(AS_LIST(a), AS_LIST(b));
    if (op == TOK_STAR && a.type == VAL_STR && b.type == VAL_NUM) return str_repeat(I, AS_STR(a), b.as.n);
    if (op == TOK_STAR && a.type == VAL_NUM && b.type == VAL_STR) return str_repeat(I, AS_STR(b), a.as.n);
    return interp_errork(I, ERRK_TYPE, "unsupported operand types for '%s': %s and %s", tok_symbol((TokKind)op), val_type_name(a),
                        val_type_name(b));
}

/* A tensor nothing else refers to: a temporary that an operation may overwrite. */
static bool is_temporary(Value v) {
    return v.type == VAL_TENSOR && v.as.t->rc == 1 && v.as.t->buf->rc == 1;
}

/* Temporary elision (as NumPy's): when an operand is a temporary of the result's dtype and
 * shape, the result is computed into it by the same kernel (elementwise kernels allow their
 * output to be an input). Takes a and b; returns UNDEF_VAL (owning nothing) when it does
 * not apply. */
static Value binary_in_place(Interp *I, int op, Value a, Value b) {
    if (tensor_op_of(op) == OP__COUNT) return UNDEF_VAL;   /* in, not in */
    if (I->tape) return UNDEF_VAL;   /* the tape keeps operands: they must not change */
    if (op == TOK_AT || op == TOK_EQ || op == TOK_NE || op == TOK_LT || op == TOK_LE || op == TOK_GT || op == TOK_GE)
        return UNDEF_VAL;
    bool left = is_temporary(a);
    if (!left && !is_temporary(b)) return UNDEF_VAL;
    Value tv = left ? a : b, other = left ? b : a;
    if (other.type != VAL_TENSOR && other.type != VAL_NUM) return UNDEF_VAL;
    Tensor *t = tv.as.t;
    OpArg in[2] = { value_arg(a), value_arg(b) };
    OpCall c = { (OpCode)tensor_op_of(op), 2, in, &no_attrs };
    Shape st, so;
    DType dt;
    shape_of(t, &st);
    if (op_infer(&c, &so, &dt) || dt != t->dtype || !shape_equal(&so, &st)) return UNDEF_VAL;
    int rc = op_exec(&c, &t);   /* inferred: straight to the kernel, into t */
    val_release(other);
    if (rc) {
        val_release(tv);
        return interp_op_error(I);
    }
    return tv;
}

/* The number a leaf yields, when it is one: a literal, or a variable holding a number. Reading
 * either has no side effect and cannot fail, so a caller that finds both operands of an
 * operator this way may compute it on the spot, without making or releasing a Value. */
__attribute__((always_inline)) static inline bool num_leaf(Frame *f, const Node *n, double *x) {
    if (n->kind == AST_NUM) { *x = n->num; return true; }
    if (n->kind != AST_NAME) return false;
    const Value *v = name_ref(f, n);
    if (v->type != VAL_NUM) return false;
    *x = v->as.n;
    return true;
}

/* x (op) y for + - * /: *r and true; false for any other operator. */
__attribute__((always_inline)) static inline bool num_arith(int op, double x, double y, double *r) {
    switch (op) {
    case TOK_PLUS: *r = x + y; return true;
    case TOK_MINUS: *r = x - y; return true;
    case TOK_STAR: *r = x * y; return true;
    case TOK_SLASH: *r = x / y; return true;
    default: return false;
    }
}

/* x (op) y for the operators that are one instruction on numbers: *r and true, or false for
 * the others (which take value_binary's path: % // ** through the op table, @, in, bitwise). */
__attribute__((always_inline)) static inline bool num_simple_op(int op, double x, double y, Value *r) {
    switch (op) {
    case TOK_PLUS: *r = NUM_VAL(x + y); return true;
    case TOK_MINUS: *r = NUM_VAL(x - y); return true;
    case TOK_STAR: *r = NUM_VAL(x * y); return true;
    case TOK_SLASH: *r = NUM_VAL(x / y); return true;
    case TOK_LT: *r = BOOL_VAL(x < y); return true;
    case TOK_LE: *r = BOOL_VAL(x <= y); return true;
    case TOK_GT: *r = BOOL_VAL(x > y); return true;
    case TOK_GE: *r = BOOL_VAL(x >= y); return true;
    case TOK_EQ: *r = BOOL_VAL(x == y); return true;
    case TOK_NE: *r = BOOL_VAL(x != y); return true;
    default: return false;
    }
}


NOINLINE static Value binary_general(Interp *I, Node *n, Value a, Value b);

/* ---------- a @ transpose(x), transpose(x) @ b ----------
 * a @ transpose(x) and a @ x.T of a matrix x: matmul(a, x, transpose_b=true), BLAS reading x
 * transposed instead of a copy of x^T; transpose(x) @ b and x.T @ b likewise with
 * transpose_a (when the left side has the form, the right side is evaluated as written). A
 * shape mismatch is the same error ('@' with x^T's shape). The static compiler takes the same
 * forms the same way (vm/compile/cexpr.c, transposed_matmul): OpenBLAS's transposed read need
 * not give a copy's bits, so both modes must choose alike, by ranks only (a static shape may
 * be the run's). Anything else is the call or the field and the operator as written. */

/* The written forms: transpose(x) with one argument of a name, or x.T. */
static bool transpose_form(const Node *t) {
    return (t->kind == AST_CALL && t->n == 1 && t->nk == 0 && t->a->kind == AST_NAME) ||
           (t->kind == AST_FIELD && !strcmp(t->str, "T"));
}

/* The x of form t: x.T's x, or transpose(x)'s when the callee is the built-in transpose;
 * UNDEF_VAL when it is another function (only the name evaluated), ERR_VAL on an error. */
static Value transpose_source(Interp *I, Frame *f, Node *t) {
    if (t->kind == AST_FIELD) return eval(I, f, t->a);
    Value fn = eval(I, f, t->a);   /* the callee first, as a call evaluates it */
    if (IS_ERR(fn)) return fn;
    bool is_t = fn.type == VAL_FUNC && fn.as.o == (Obj *)builtins_of_op(I, OP_TRANSPOSE);
    val_release(fn);
    return is_t ? eval(I, f, t->kids[0]) : UNDEF_VAL;
}

/* Form t's value as written, from its source x (taken). */
static Value transpose_written(Interp *I, Node *t, Value x) {
    if (t->kind == AST_FIELD) {
        Value r = field_of(I, x, t->str);
        val_release(x);
        if (IS_ERR(r)) interp_attach_loc(I, t->loc);
        return r;
    }
    Value *base = I->sp;
    if (base + 3 >= I->stack_end) {
        val_release(x);
        return interp_error_at(I, t->loc, "stack overflow (recursion too deep)");
    }
    base[0] = x;
    I->sp = base + 1;
    CallSite outer = I->call_site;
    I->call_site = (CallSite){ I->cur_src, t->loc };
    CallArgs args = { base, 1, NULL, NULL, 0 };
    Value r = call_builtin(I, builtins_of_op(I, OP_TRANSPOSE), &args);
    I->call_site = outer;
    val_release(base[0]);
    I->sp = base;
    if (IS_ERR(r)) interp_attach_loc(I, t->loc);
    return r;
}

/* Whether v is a tensor of at least `rank` axes (exactly 2 when `matrix`). */
static bool tensor_rank(Value v, int rank, bool matrix) {
    return v.type == VAL_TENSOR && (matrix ? v.as.t->ndim == 2 : v.as.t->ndim >= rank);
}

/* matmul(a, b) with a's (ta) or b's last two axes read transposed; takes a and b. */
static Value matmul_transposed(Interp *I, Node *n, Value a, Value b, bool ta) {
    Value r = interp_poll(I) ? UNDEF_VAL : ERR_VAL;
    if (!IS_ERR(r)) {
        OpAttrs at = no_attrs;
        at.flag = ta;          /* transpose_a, matmul's third parameter */
        at.flag2 = !ta;        /* transpose_b, its fourth */
        at.given = ta ? 1u << 2 : 1u << 3;
        OpArg in[2] = { value_arg(a), value_arg(b) };
        OpCall c = { OP_MATMUL, 2, in, &at };
        r = recorded_op(I, &c);
    }
    val_release(a);
    val_release(b);
    if (IS_ERR(r)) interp_attach_loc(I, n->loc);
    return r;
}

/* n is a @ <form>, a (taken) evaluated: its right side, then the product. */
NOINLINE static Value at_transpose(Interp *I, Frame *f, Node *n, Value a) {
    Value x = transpose_source(I, f, n->b), t;
    if (IS_ERR(x)) {
        val_release(a);
        return x;
    }
    if (x.type != VAL_UNDEF && tensor_rank(x, 2, true) && tensor_rank(a, 1, false))
        return matmul_transposed(I, n, a, x, false);
    t = x.type == VAL_UNDEF ? eval(I, f, n->b) : transpose_written(I, n->b, x);
    if (IS_ERR(t)) {
        val_release(a);
        return t;
    }
    return binary_general(I, n, a, t);
}

/* n is <form> @ b: the form's source, b, then the product (the form's value made before b is
 * evaluated unless it is the matrix the product reads transposed). */
NOINLINE static Value transpose_at(Interp *I, Frame *f, Node *n) {
    Value x = transpose_source(I, f, n->a), t = UNDEF_VAL;
    if (IS_ERR(x)) return x;
    bool matrix = x.type != VAL_UNDEF && tensor_rank(x, 2, true);
    if (!matrix) {
        t = x.type == VAL_UNDEF ? eval(I, f, n->a) : transpose_written(I, n->a, x);
        if (IS_ERR(t)) return t;
    }
    Value b = eval(I, f, n->b);
    if (IS_ERR(b)) {
        val_release(matrix ? x : t);
        return b;
    }
    if (matrix && tensor_rank(b, 1, false)) return matmul_transposed(I, n, x, b, true);
    if (matrix && IS_ERR(t = transpose_written(I, n->a, x))) {
        val_release(b);
        return t;
    }
    return binary_general(I, n, t, b);
}

NOINLINE static Value eval_binary(Interp *I, Frame *f, Node *n) {
    if (n->op == TOK_AT && transpose_form(n->a)) return transpose_at(I, f, n);
    Value a = eval(I, f, n->a);
    if (IS_ERR(a)) return a;
    if (n->op == TOK_AT && transpose_form(n->b)) return at_transpose(I, f, n, a);
    Value b = eval(I, f, n->b);
    if (IS_ERR(b)) { val_release(a); return b; }
    Value r;
    if (a.type == VAL_NUM && b.type == VAL_NUM) {
        if (num_simple_op(n->op, a.as.n, b.as.n, &r)) return r;
        if (n->op == TOK_PERCENT || n->op == TOK_SLASHSLASH || n->op == TOK_POW)   /* value_binary's rule */
            return NUM_VAL(num_binary(n->op, a.as.n, b.as.n));
    }
    return binary_general(I, n, a, b);
}

/* a (op) b for all but two numbers under a simple operator; takes a and b. */
NOINLINE static Value binary_general(Interp *I, Node *n, Value a, Value b) {
    Value r = binary_in_place(I, n->op, a, b);
    if (r.type != VAL_UNDEF) {
        if (IS_ERR(r)) interp_attach_loc(I, n->loc);
        return r;
    }
    r = value_binary(I, n->op, a, b);
    val_release(a);
    val_release(b);
    if (IS_ERR(r)) interp_attach_loc(I, n->loc);
    return r;
}

static Value eval_unary(Interp *I, Frame *f, Node *n) {
    Value a = eval(I, f, n->a);
    if (IS_ERR(a)) return a;
    bool tilde = n->op == TOK_TILDE;
    if (a.type == VAL_NUM && !tilde) return NUM_VAL(-a.as.n);
    if (tilde && (a.type == VAL_NUM || a.type == VAL_BOOL)) {
        Value r = number_op_values(I, OP_BITWISE_NOT, &a, 1);
        if (IS_ERR(r)) interp_attach_loc(I, n->loc);
        return r;
    }
    if (a.type == VAL_TENSOR) {
        OpArg in = op_arg_tensor(a.as.t);
        OpCall c = { tilde ? OP_BITWISE_NOT : OP_NEG, 1, &in, &no_attrs };
        Value r = recorded_op(I, &c);
        val_release(a);
        if (IS_ERR(r)) interp_attach_loc(I, n->loc);
        return r;
    }
    Value r = interp_error_atk(I, ERRK_TYPE, n->loc, "unsupported operand type for unary '%s': %s", tilde ? "~" : "-",
                              val_type_name(a));
    val_release(a);
    return r;
}

/* ---------- indexing ---------- */

/* Python-style index normalisation for lists and strings. */
static bool norm_index(Interp *I, double x, int64_t len, int64_t *out, const char *what) {
    int64_t i;
    if (isnan(x) || x != floor(x)) { interp_errork(I, ERRK_TYPE, "%s index must be an integer, got %g", what, x); return false; }
    if (!num_to_i64(x, &i) || (i < 0 ? i + len < 0 : i >= len)) {
        interp_errork(I, ERRK_INDEX, "%s index out of range", what);
        return false;
    }
    *out = i < 0 ? i + len : i;
    return true;
}

/* Slice bounds for a sequence of length len (Python's slice.indices: huge bounds and steps
 * are clamped, not rejected). */
static bool slice_bounds(Interp *I, int64_t len, int64_t *start, int64_t *stop, int64_t *step, Value *vals) {
    *step = 1;
    if (vals[2].type == VAL_NUM) {
        if (!num_to_i64_clamped(vals[2].as.n, step)) { interp_errork(I, ERRK_TYPE, "slice step must be an integer"); return false; }
    } else if (vals[2].type != VAL_NIL && vals[2].type != VAL_UNDEF) {
        interp_errork(I, ERRK_TYPE, "slice step must be a number");
        return false;
    }
    if (*step == 0) { interp_error(I, "slice step cannot be zero"); return false; }
    for (int k = 0; k < 2; k++) {
        int64_t *dst = k ? stop : start;
        Value v = vals[k];
        if (v.type == VAL_NIL || v.type == VAL_UNDEF) {
            if (*step > 0) *dst = k ? len : 0;
            else *dst = k ? -1 : len - 1;
            continue;
        }
        int64_t x;
        if (v.type != VAL_NUM || !num_to_i64_clamped(v.as.n, &x)) { interp_errork(I, ERRK_TYPE, "slice bounds must be integers"); return false; }
        if (x < 0) x += len;   /* x >= -(2^63-1) and len >= 0: no overflow */
        if (*step > 0) x = x < 0 ? 0 : x > len ? len : x;
        else x = x < -1 ? -1 : x > len - 1 ? len - 1 : x;
        *dst = x;
    }
    return true;
}

/* Byte offset of code point i (0 <= i <= ncp) of a string: direct when it is all ASCII, else
 * walked from the last offset looked up (or the start), so in-order access is O(1) a step. */
static int str_offset(ObjString *s, int64_t i) {
    if (s->ncp == s->len) return (int)i;
    int64_t k = s->cur_cp;
    int b = s->cur_byte;
    if (i < k - i) { k = 0; b = 0; }   /* the start is nearer */
    for (; k < i; k++) {
        b++;
        while (b < s->len && ((unsigned char)s->chars[b] & 0xC0) == 0x80) b++;
    }
    for (; k > i; k--) {
        b--;
        while (b > 0 && ((unsigned char)s->chars[b] & 0xC0) == 0x80) b--;
    }
    s->cur_cp = (int)k;
    s->cur_byte = b;
    return b;
}

int64_t utf8_length(const char *s, int len) {
    int64_t n = 0;
    for (int i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

/* Converts evaluated index items (numbers, slices as 3-lists, tensors, ellipsis, nil) into
 * IndexItems for the tensor op. The slice triples arrive as a marker list. */
typedef struct {
    int kind;        /* 0 value, 1 slice, 2 ellipsis */
    Value v[3];
} IdxVal;

/* A list used as a tensor index, as an i64 tensor: every entry must be an integer in i64's
 * range (it was cast: [1.5] picked element 1, [1e300] became INT64_MIN). */
static Value list_index_tensor(Interp *I, Value list) {
    Value fv = interp_to_tensor(I, list, DT_F64);   /* f64 holds every number exactly */
    if (IS_ERR(fv)) return fv;
    Shape s;
    shape_of(fv.as.t, &s);
    Tensor *r = tensor_new(DT_I64, &s);
    if (!r) { val_release(fv); return interp_op_error(I); }
    const double *x = fv.as.t->data;
    int64_t *o = r->data;
    for (int64_t k = 0; k < r->size; k++)
        if (!num_to_i64(x[k], &o[k])) {
            Value e = interp_errork(I, ERRK_TYPE, "tensor index must be an integer, got %g", x[k]);
            tensor_release(r);
            val_release(fv);
            return e;
        }
    val_release(fv);
    return TENSOR_VAL(r);
}

static Value index_tensor(Interp *I, Tensor *t, IdxVal *iv, int n, Tensor *setval, bool set) {
    IndexItem items[TSL_MAX_RANK + 8];
    Tensor *owned[TSL_MAX_RANK + 8];
    int nowned = 0;
    Value r = ERR_VAL;
    if (n > TSL_MAX_RANK + 8) return interp_errork(I, ERRK_INDEX, "too many indices");
    for (int k = 0; k < n; k++) {
        IndexItem *it = &items[k];
        memset(it, 0, sizeof *it);
        if (iv[k].kind == 2) { it->kind = IDX_ELLIPSIS; continue; }
        if (iv[k].kind == 1) {
            it->kind = IDX_SLICE;
            it->step = 1;
            for (int j = 0; j < 3; j++) {
                Value v = iv[k].v[j];
                if (v.type == VAL_NIL || v.type == VAL_UNDEF) continue;
                int64_t x;
                if (v.type != VAL_NUM || !num_to_i64_clamped(v.as.n, &x)) {
                    interp_errork(I, ERRK_TYPE, "slice bounds must be integers");
                    goto out;
                }
                if (j == 0) { it->has_start = true; it->start = x; }
                else if (j == 1) { it->has_stop = true; it->stop = x; }
                else it->step = x;
            }
            continue;
        }
        Value v = iv[k].v[0];
        if (v.type == VAL_NIL) {   /* a new axis of length 1, NumPy's None */
            it->kind = IDX_NEWAXIS;
        } else if (v.type == VAL_NUM) {
            if (v.as.n != floor(v.as.n) || isnan(v.as.n)) { interp_errork(I, ERRK_TYPE, "tensor index must be an integer, got %g", v.as.n); goto out; }
            if (!num_to_i64(v.as.n, &it->i)) { interp_errork(I, ERRK_INDEX, "index %g is out of range", v.as.n); goto out; }
            it->kind = IDX_INT;
        } else if (v.type == VAL_BOOL) {
            Tensor *bt = tensor_scalar(DT_BOOL, v.as.b);
            owned[nowned++] = bt;
            it->kind = IDX_TENSOR;
            it->t = bt;
        } else if (v.type == VAL_TENSOR) {
            it->kind = IDX_TENSOR;
            it->t = v.as.t;
            if (v.as.t->device != DEV_CPU) {   /* indices are read on the host */
                if (!(owned[nowned] = tensor_host(v.as.t))) { interp_op_error(I); goto out; }
                it->t = owned[nowned++];
            }
        } else if (v.type == VAL_LIST) {
            Value tv = list_index_tensor(I, v);
            if (IS_ERR(tv)) goto out;
            owned[nowned++] = tv.as.t;
            if (tv.as.t->size == 0) { /* [] indexes nothing: i64 */ }
            it->kind = IDX_TENSOR;
            it->t = tv.as.t;
        } else {
            interp_errork(I, ERRK_TYPE, "cannot index a tensor with a %s", val_type_name(v));
            goto out;
        }
    }
    if (set && I->tape && (autograd_tracked(t) || (setval && autograd_tracked(setval)))) {
        interp_errork(I, ERRK_VALUE, "no gradient through assigning into a tensor (t[i] = v) yet");   /* not silently zero */
        goto out;
    }
    {
        Tensor *res = tensor_index(t, items, n, setval, set);
        if (res && !set && I->tape && autograd_tracked(t) && autograd_record_index(t, items, n, res)) {
            tensor_release(res);
            res = NULL;
        }
        r = tensor_result(I, res);
    }
out:
    for (int k = 0; k < nowned; k++) tensor_release(owned[k]);
    return r;
}

static Value index_sequence(Interp *I, Value obj, IdxVal *iv) {
    bool is_list = obj.type == VAL_LIST;
    const char *what = is_list ? "list" : "string";
    ObjString *s = is_list ? NULL : AS_STR(obj);
    int64_t len = is_list ? AS_LIST(obj)->len : s->ncp;
    if (iv->kind == 1) {
        int64_t start, stop, step;
        if (!slice_bounds(I, len, &start, &stop, &step, iv->v)) return ERR_VAL;
        /* i += step only while another index follows: a huge step never overflows i */
        int64_t count = slice_length(start, stop, step);
        if (is_list) {
            ObjList *src = AS_LIST(obj), *l = list_new(0);
            for (int64_t k = 0, i = start; k < count; k++, i += k < count ? step : 0) list_push(l, src->items[i]);
            return OBJ_VAL(VAL_LIST, l);
        }
        StrBuf b = { 0 };
        sb_putn(&b, "", 0);
        for (int64_t k = 0, i = start; k < count; k++, i += k < count ? step : 0) {
            int o = str_offset(s, i), e = str_offset(s, i + 1);
            sb_putn(&b, s->chars + o, (size_t)(e - o));
        }
        Value r = val_str(b.s, (int)b.len);
        sb_free(&b);
        return r;
    }
    if (iv->kind != 0 || iv->v[0].type != VAL_NUM)
        return interp_errork(I, ERRK_TYPE, "%s index must be a number", what);
    int64_t i;
    if (!norm_index(I, iv->v[0].as.n, len, &i, what)) return ERR_VAL;
    if (is_list) return val_retain(AS_LIST(obj)->items[i]);
    int o = str_offset(s, i), e = str_offset(s, i + 1);
    return val_str(s->chars + o, e - o);
}

static Value index_dict(Interp *I, ObjDict *d, Value key) {
    if (key.type != VAL_STR) return interp_errork(I, ERRK_TYPE, "dict keys are strings, got a %s", val_type_name(key));
    Value *v = dict_get(d, AS_STR(key)->chars, AS_STR(key)->len);
    if (!v) return interp_errork(I, ERRK_KEY, "key '%s' not found in dict", AS_STR(key)->chars);
    return val_retain(*v);
}

static Value index_values(Interp *I, Value obj, IdxVal *iv, int n) {
    if (obj.type == VAL_TENSOR) return index_tensor(I, obj.as.t, iv, n, NULL, false);
    if (n != 1) return interp_errork(I, ERRK_INDEX, "a %s takes exactly one index", val_type_name(obj));
    if (obj.type == VAL_LIST || obj.type == VAL_STR) return index_sequence(I, obj, iv);
    if (obj.type == VAL_DICT && iv->kind == 0) return index_dict(I, AS_DICT(obj), iv->v[0]);
    return interp_errork(I, ERRK_TYPE, "a %s cannot be indexed", val_type_name(obj));
}

Value value_index(Interp *I, Value obj, Value *idx, int n) {
    IdxVal iv[TSL_MAX_RANK];
    if (n > TSL_MAX_RANK) return interp_errork(I, ERRK_INDEX, "too many indices");
    for (int k = 0; k < n; k++) iv[k] = (IdxVal){ 0, { idx[k], NIL_VAL, NIL_VAL } };
    return index_values(I, obj, iv, n);
}

/* obj[a:b:c] with the three bounds given (nil where omitted): the static compiler folds slices
 * of known strings through it. */
Value value_slice(Interp *I, Value obj, const Value bounds[3]) {
    IdxVal iv = { 1, { bounds[0], bounds[1], bounds[2] } };
    return index_values(I, obj, &iv, 1);
}

static void idx_release(IdxVal *iv, int n) {
    for (int k = 0; k < n; k++)
        for (int j = 0; j < 3; j++) val_release(iv[k].v[j]);
}

static bool eval_index_items(Interp *I, Frame *f, Node *n, IdxVal *iv) {
    for (int k = 0; k < n->n; k++) {
        Node *it = n->kids[k];
        iv[k] = (IdxVal){ 0, { NIL_VAL, NIL_VAL, NIL_VAL } };
        if (it->kind == AST_ELLIPSIS) { iv[k].kind = 2; continue; }
        Node *parts[3] = { it, NULL, NULL };
        int np = 1;
        if (it->kind == AST_SLICE) {
            iv[k].kind = 1;
            parts[0] = it->a; parts[1] = it->b; parts[2] = it->c;
            np = 3;
        }
        for (int j = 0; j < np; j++) {
            if (!parts[j]) continue;
            Value v = eval(I, f, parts[j]);
            if (IS_ERR(v)) { idx_release(iv, k + 1); return false; }
            iv[k].v[j] = v;
        }
    }
    return true;
}

static Value eval_index(Interp *I, Frame *f, Node *n) {
    if (n->n > TSL_MAX_RANK + 8) return interp_error_atk(I, ERRK_INDEX, n->loc, "too many indices");
    Value obj = eval(I, f, n->a);
    if (IS_ERR(obj)) return obj;
    IdxVal iv[TSL_MAX_RANK + 8];
    Node *k = n->n == 1 ? n->kids[0] : NULL;
    if (k && obj.type == VAL_LIST && k->kind != AST_SLICE && k->kind != AST_ELLIPSIS) {
        /* xs[i] with i a whole number in range: the item, without index_values' general rules */
        Value x = eval(I, f, k);
        if (IS_ERR(x)) { val_release(obj); return x; }
        ObjList *l = AS_LIST(obj);
        if (x.type == VAL_NUM && x.as.n >= 0 && x.as.n < l->len && x.as.n == (double)(int)x.as.n) {
            Value r = val_retain(l->items[(int)x.as.n]);
            val_release(obj);
            return r;
        }
        iv[0] = (IdxVal){ 0, { x, NIL_VAL, NIL_VAL } };
    } else if (!eval_index_items(I, f, n, iv)) {
        val_release(obj);
        return ERR_VAL;
    }
    Value r = index_values(I, obj, iv, n->n);
    idx_release(iv, n->n);
    val_release(obj);
    if (IS_ERR(r)) interp_attach_loc(I, n->loc);
    return r;
}

/* ---------- fields ---------- */

static Value shape_list(const Tensor *t) {
    ObjList *l = list_new(t->ndim);
    for (int i = 0; i < t->ndim; i++) list_push(l, NUM_VAL((double)t->shape[i]));
    return OBJ_VAL(VAL_LIST, l);
}

static Value tensor_field(Interp *I, Tensor *t, const char *name) {
    if (!strcmp(name, "shape")) return shape_list(t);
    if (!strcmp(name, "dtype")) return val_cstr(dtype_name(t->dtype));
    if (!strcmp(name, "ndim")) return NUM_VAL(t->ndim);
    if (!strcmp(name, "size")) return NUM_VAL((double)t->size);
    if (!strcmp(name, "device")) return val_cstr(device_name(t->device));
    if (!strcmp(name, "T")) {   /* transpose(t), recorded as that call is */
        OpArg in = op_arg_tensor(t);
        OpCall c = { OP_TRANSPOSE, 1, &in, &no_attrs };
        return recorded_op(I, &c);
    }
    ObjBuiltin *m = method_tensor_builtin(I, name);   /* t.sum is sum, unbound (methods.h) */
    if (m) return val_retain(OBJ_VAL(VAL_FUNC, m));
    char hint[SUGGEST_MAX_NAME + 24];
    return interp_errork(I, ERRK_KEY, "tensor has no attribute '%s'%s", name, interp_attr_hint(name, hint, sizeof hint));
}

static Value field_of(Interp *I, Value obj, const char *name) {
    if (obj.type == VAL_DICT) {
        Value *v = dict_get(AS_DICT(obj), name, (int)strlen(name));
        if (!v) {
            char hint[SUGGEST_MAX_NAME + 24];
            Suggest s;
            suggest_init(&s, name);
            for (int i = 0; i < AS_DICT(obj)->len; i++) suggest_offer(&s, AS_DICT(obj)->entries[i].key->chars);
            char py[96];
            const char *h = suggest_text(&s, hint, sizeof hint);
            return interp_errork(I, ERRK_KEY, "key '%s' not found in dict%s", name, *h ? h : interp_field_hint("dict", name, py, sizeof py));
        }
        return val_retain(*v);
    }
    if (obj.type == VAL_TENSOR) return tensor_field(I, obj.as.t, name);
    char hint[96];
    return interp_errork(I, ERRK_KEY, "a %s has no field '%s'%s", val_type_name(obj), name,
                         interp_field_hint(val_type_name(obj), name, hint, sizeof hint));
}

static Value eval_field(Interp *I, Frame *f, Node *n) {
    Value obj = eval(I, f, n->a);
    if (IS_ERR(obj)) return obj;
    Value r = field_of(I, obj, n->str);
    val_release(obj);
    if (IS_ERR(r)) interp_attach_loc(I, n->loc);
    return r;
}

/* ---------- literals and closures ---------- */

static Value eval_list(Interp *I, Frame *f, Node *n) {
    ObjList *l = list_new(n->n);
    for (int i = 0; i < n->n; i++) {
        Value v = eval(I, f, n->kids[i]);
        if (IS_ERR(v)) { val_release(OBJ_VAL(VAL_LIST, l)); return v; }
        l->items[l->len++] = v;
    }
    return OBJ_VAL(VAL_LIST, l);
}

static Value eval_dict(Interp *I, Frame *f, Node *n) {
    ObjDict *d = dict_new();
    for (int i = 0; i < n->n; i++) {
        Value v = eval(I, f, n->kids[i]);
        if (IS_ERR(v)) { val_release(OBJ_VAL(VAL_DICT, d)); return v; }
        dict_set_cstr(d, n->names[i], v);
        val_release(v);
    }
    return OBJ_VAL(VAL_DICT, d);
}

/* ---------- comprehensions ---------- */

static Exec exec_for(Interp *I, Frame *f, Node *n);

/* The loop variables of a comprehension's clauses, before it runs (start) and after. A
 * variable a function made inside captures gets a fresh cell each run, so a closure sees its
 * own run's variable (as in Python); the others are left unbound after, so a hidden slot
 * keeps no value alive. */
static void comp_vars(Frame *f, Node *clause, bool start) {
    for (; clause->kind != AST_COLLECT; clause = (clause->kind == AST_FOR ? clause->c : clause->b)->kids[0]) {
        if (clause->kind != AST_FOR) continue;
        Value *slot = &f->slots[clause->a->slot], old = *slot;
        if (clause->a->scope == SCOPE_CELL && start) *slot = OBJ_VAL(VAL_CELL, cell_new(UNDEF_VAL));
        else if (clause->a->scope != SCOPE_CELL && !start) *slot = UNDEF_VAL;
        else continue;
        val_release(old);
    }
}

/* [e for x in xs if c ...] and {k: v for ...}: the clauses run as the statements they stand
 * for, adding to the result in a hidden slot (exec_collect). At top level the hidden slots
 * are a frame of the comprehension's own, on the value stack. */
NOINLINE static Value eval_comp(Interp *I, Frame *f, Node *n) {
    Frame own = { I->sp, NULL, f->mod };
    if (n->proto) {
        int ns = n->proto->nlocals;
        if (I->sp + ns + 8 > I->stack_end) return interp_error_at(I, n->loc, "stack overflow");
        for (int i = 0; i < ns; i++) own.slots[i] = UNDEF_VAL;
        I->sp += ns;
        f = &own;
    }
    Value *result = &f->slots[n->slot];
    val_release(*result);
    *result = n->op == TOK_LBRACKET ? OBJ_VAL(VAL_LIST, list_new(0)) : OBJ_VAL(VAL_DICT, dict_new());
    comp_vars(f, n->a, true);
    SrcLoc stmt = I->stmt_loc;
    Source *stmt_src = I->stmt_src;
    Exec st = exec_for(I, f, n->a);
    I->stmt_loc = stmt;
    I->stmt_src = stmt_src;
    Value r = st == EX_ERR ? ERR_VAL : *result;
    if (st == EX_ERR) val_release(*result);
    *result = UNDEF_VAL;
    comp_vars(f, n->a, false);
    if (n->proto) {
        for (int i = 0; i < n->proto->nlocals; i++) val_release(own.slots[i]);
        I->sp = own.slots;
    }
    return r;
}

/* The innermost statement of a comprehension: result += [a], or result[a] = b. */
NOINLINE static Exec exec_collect(Interp *I, Frame *f, Node *n) {
    Value k = eval(I, f, n->a);
    if (IS_ERR(k)) return EX_ERR;
    Value result = f->slots[n->slot];
    if (!n->b) {
        list_push(AS_LIST(result), k);
        val_release(k);
        return EX_OK;
    }
    if (k.type != VAL_STR) {
        interp_error_at(I, n->a->loc, "dict keys are strings, got a %s", val_type_name(k));
        val_release(k);
        return EX_ERR;
    }
    Value v = eval(I, f, n->b);
    if (!IS_ERR(v)) dict_set(AS_DICT(result), AS_STR(k), v);
    val_release(k);
    val_release(v);
    return IS_ERR(v) ? EX_ERR : EX_OK;
}

static Value make_closure(Frame *f, FnProto *p) {
    ObjClosure *c = closure_new(p, f->mod);
    for (int i = 0; i < p->nupvals; i++) {
        ObjCell *cell = p->upvals[i].from_local ? (ObjCell *)f->slots[p->upvals[i].index].as.o
                                                 : f->closure->upvals[p->upvals[i].index];
        cell->h.rc++;
        c->upvals[i] = cell;
    }
    return OBJ_VAL(VAL_FUNC, c);
}

static Value eval_and_or(Interp *I, Frame *f, Node *n) {
    Value a = eval(I, f, n->a);
    if (IS_ERR(a)) return a;
    int t = interp_truthy(I, a);
    if (t < 0) { val_release(a); interp_attach_loc(I, n->a->loc); return ERR_VAL; }
    if ((n->kind == AST_AND) != (t != 0)) return a;   /* this operand decided */
    val_release(a);
    return eval(I, f, n->b);
}

/* Every expression kind but the hot ones eval() handles inline. */
NOINLINE static Value eval_other(Interp *I, Frame *f, Node *n) {
    switch (n->kind) {
    case AST_STR: return val_str(n->str, n->str_len);
    case AST_TRUE: return BOOL_VAL(true);
    case AST_FALSE: return BOOL_VAL(false);
    case AST_NIL: return NIL_VAL;
    case AST_UNARY: return eval_unary(I, f, n);
    case AST_AND:
    case AST_OR: return eval_and_or(I, f, n);
    case AST_NOT: {
        Value a = eval(I, f, n->a);
        if (IS_ERR(a)) return a;
        int t = interp_truthy(I, a);
        val_release(a);
        if (t < 0) { interp_attach_loc(I, n->a->loc); return ERR_VAL; }
        return BOOL_VAL(!t);
    }
    case AST_INDEX: return eval_index(I, f, n);
    case AST_FIELD: return eval_field(I, f, n);
    case AST_LIST: return eval_list(I, f, n);
    case AST_DICT: return eval_dict(I, f, n);
    case AST_FN: return make_closure(f, n->proto);
    case AST_COMP: return eval_comp(I, f, n);
    default: return interp_error_at(I, n->loc, "internal error: not an expression");
    }
}

__attribute__((always_inline)) static inline Value eval(Interp *I, Frame *f, Node *n) {
    switch (n->kind) {
    case AST_NUM: return NUM_VAL(n->num);
    case AST_NAME: {
        Value v = *name_ref(f, n);
        if (v.type == VAL_UNDEF) return undefined_name(I, f, n);
        return val_retain(v);
    }
    case AST_BINARY: {
        double x, y;
        Value r;
        if (num_leaf(f, n->a, &x) && num_leaf(f, n->b, &y) && num_simple_op(n->op, x, y, &r)) return r;
        return eval_binary(I, f, n);
    }
    case AST_CALL: return eval_call(I, f, n);
    default: return eval_other(I, f, n);
    }
}

/* ---------- assignment ---------- */

static Exec assign_to(Interp *I, Frame *f, Node *target, Value v);

/* Why obj[idx] = v cannot be: the message reading obj[idx] would give for a key or index of
 * the wrong kind (a student writes d[1] = x or l["a"] = x), else what cannot be assigned. */
static void store_index_error(Interp *I, Value obj, int n, const IdxVal *iv) {
    bool one = n == 1 && iv[0].kind == 0;
    if (obj.type == VAL_DICT && one)
        interp_errork(I, ERRK_TYPE, "dict keys are strings, got a %s", val_type_name(iv[0].v[0]));
    else if (obj.type == VAL_LIST && one)
        interp_errork(I, ERRK_TYPE, "list index must be a number, got a %s", val_type_name(iv[0].v[0]));
    else if (obj.type == VAL_LIST && n == 1)
        interp_errork(I, ERRK_TYPE, "cannot assign to a slice of a list (build a new list: l[:i] + items + l[j:])");
    else if (obj.type == VAL_STR)
        interp_errork(I, ERRK_TYPE, "strings are immutable: cannot assign into one (build a new string)");
    else
        interp_errork(I, ERRK_TYPE, "cannot assign into a %s with this index", val_type_name(obj));
}

/* obj[idx] = v with obj and the index items already evaluated: lists and dicts change in
 * place; a tensor is rebound to a new tensor. Takes obj, iv and v. */
static Exec store_index(Interp *I, Frame *f, Node *target, Value obj, IdxVal *iv, Value v) {
    Exec st = EX_OK;
    if (obj.type == VAL_LIST && target->n == 1 && iv[0].kind == 0 && iv[0].v[0].type == VAL_NUM) {
        ObjList *l = AS_LIST(obj);
        int64_t i;
        if (norm_index(I, iv[0].v[0].as.n, l->len, &i, "list")) {
            Value old = l->items[i];
            l->items[i] = v;
            v = NIL_VAL;
            val_release(old);
        } else st = EX_ERR;
    } else if (obj.type == VAL_DICT && target->n == 1 && iv[0].kind == 0 && iv[0].v[0].type == VAL_STR) {
        dict_set(AS_DICT(obj), AS_STR(iv[0].v[0]), v);
    } else if (obj.type == VAL_TENSOR) {
        /* a number takes the tensor's dtype through astype's rule: every bit into f64, an
         * error for NaN or out-of-range into i64 */
        Value tv = v.type == VAL_NUM ? scalar_as(I, v.as.n, obj.as.t->dtype) : interp_to_tensor(I, v, -1);
        if (IS_ERR(tv)) st = EX_ERR;
        else {
            Value nt = index_tensor(I, obj.as.t, iv, target->n, tv.as.t, true);
            val_release(tv);
            if (IS_ERR(nt)) st = EX_ERR;
            else {
                idx_release(iv, target->n);
                val_release(obj);
                val_release(v);
                return assign_to(I, f, target->a, nt);
            }
        }
    } else {
        store_index_error(I, obj, target->n, iv);
        st = EX_ERR;
    }
    if (st == EX_ERR) interp_attach_loc(I, target->loc);
    idx_release(iv, target->n);
    val_release(obj);
    val_release(v);
    return st;
}

/* obj[idx] = v. Takes v. */
static Exec assign_index(Interp *I, Frame *f, Node *target, Value v) {
    Value obj = eval(I, f, target->a);
    if (IS_ERR(obj)) { val_release(v); return EX_ERR; }
    IdxVal iv[TSL_MAX_RANK + 8];
    if (target->n > TSL_MAX_RANK + 8 || !eval_index_items(I, f, target, iv)) {
        if (target->n > TSL_MAX_RANK + 8) interp_error_atk(I, ERRK_INDEX, target->loc, "too many indices");
        val_release(obj);
        val_release(v);
        return EX_ERR;
    }
    return store_index(I, f, target, obj, iv, v);
}

/* `target op= e`: exactly `target = target op e`, the target's container and index
 * evaluated once (then the current value is read, e evaluated, and the result stored). */
/* d.k = v for target d.k; takes obj and v. */
static Exec store_field(Interp *I, Node *target, Value obj, Value v) {
    Exec st = EX_OK;
    if (obj.type == VAL_DICT) dict_set_cstr(AS_DICT(obj), target->str, v);
    else {
        interp_error_atk(I, ERRK_TYPE, target->loc, "cannot set field '%s' on a %s", target->str, val_type_name(obj));
        st = EX_ERR;
    }
    val_release(obj);
    val_release(v);
    return st;
}

/* `s = s + e` or `s += e` with s a string variable (target a name, rhs the node of e):
 * appends in place when the variable holds the only reference (str_concat). *done is false,
 * with nothing evaluated, when s does not hold a string: the general path takes it. */
static Exec append_to_string_var(Interp *I, Frame *f, Node *target, Node *rhs, SrcLoc loc, bool *done) {
    *done = name_ref(f, target)->type == VAL_STR;
    if (!*done) return EX_OK;
    Value cur = val_retain(*name_ref(f, target));
    Value b = eval(I, f, rhs);
    if (IS_ERR(b)) { val_release(cur); return EX_ERR; }
    Value *ref = name_ref(f, target);   /* again: evaluating e may have moved or rebound it */
    bool unique = b.type == VAL_STR && ref->type == VAL_STR && AS_STR(*ref) == AS_STR(cur) && AS_STR(cur)->h.rc == 2;
    Value r = unique ? str_concat(I, cur, AS_STR(b), true) : value_binary(I, TOK_PLUS, cur, b);
    val_release(cur);
    val_release(b);
    if (IS_ERR(r)) { interp_attach_loc(I, loc); return EX_ERR; }
    assign_name(f, target, r);
    return EX_OK;
}

/* Whether assignment n is `name = name + e` (same variable on both sides). The resolver
 * gave every name its scope and slot, so those two say it; no string compare on this path,
 * which every `i = i + 1` of a loop takes. */
static bool is_self_append(Node *n) {
    Node *v = n->b;
    return n->a->kind == AST_NAME && v->kind == AST_BINARY && v->op == TOK_PLUS && v->a->kind == AST_NAME &&
           v->a->scope == n->a->scope && v->a->slot == n->a->slot;
}

static Exec assign_augmented(Interp *I, Frame *f, Node *n) {
    Node *target = n->a;
    if (n->op == TOK_PLUS && target->kind == AST_NAME) {
        bool done;
        Exec st = append_to_string_var(I, f, target, n->b, target->loc, &done);
        if (done) return st;
    }
    Value obj = UNDEF_VAL, cur;
    IdxVal iv[TSL_MAX_RANK + 8];
    if (target->kind == AST_NAME) {
        cur = eval(I, f, target);
        if (IS_ERR(cur)) return EX_ERR;
    } else {
        if (target->kind == AST_INDEX && target->n > TSL_MAX_RANK + 8) {
            interp_error_atk(I, ERRK_INDEX, target->loc, "too many indices");
            return EX_ERR;
        }
        obj = eval(I, f, target->a);
        if (IS_ERR(obj)) return EX_ERR;
        if (target->kind == AST_INDEX) {
            if (!eval_index_items(I, f, target, iv)) { val_release(obj); return EX_ERR; }
            cur = index_values(I, obj, iv, target->n);
        } else {
            cur = field_of(I, obj, target->str);
        }
        if (IS_ERR(cur)) {
            interp_attach_loc(I, target->loc);
            goto fail;
        }
    }
    Value rhs = eval(I, f, n->b);
    if (IS_ERR(rhs)) { val_release(cur); goto fail; }
    Value v = value_binary(I, n->op, cur, rhs);
    val_release(cur);
    val_release(rhs);
    if (IS_ERR(v)) { interp_attach_loc(I, target->loc); goto fail; }
    if (target->kind == AST_NAME) {
        assign_name(f, target, v);
        return EX_OK;
    }
    if (target->kind == AST_INDEX) return store_index(I, f, target, obj, iv, v);
    return store_field(I, target, obj, v);
fail:
    if (target->kind == AST_INDEX) idx_release(iv, target->n);
    val_release(obj);
    return EX_ERR;
}

/* Takes ownership of v. */
static Exec assign_to(Interp *I, Frame *f, Node *target, Value v) {
    switch (target->kind) {
    case AST_NAME: assign_name(f, target, v); return EX_OK;
    case AST_INDEX: return assign_index(I, f, target, v);
    case AST_FIELD: {
        Value obj = eval(I, f, target->a);
        if (IS_ERR(obj)) { val_release(v); return EX_ERR; }
        return store_field(I, target, obj, v);
    }
    default:
        val_release(v);
        interp_error_at(I, target->loc, "cannot assign to this expression");
        return EX_ERR;
    }
}

/* ---------- statements ---------- */

/* Counted in integers, as range()'s list is: a double counter would stop moving at 2**53
 * (for i in range(2**53, 2**53 + 2) never ended). */
static Exec exec_for_range(Interp *I, Frame *f, Node *n, int64_t start, int64_t stop, int64_t step) {
    uint64_t count = range_count(start, stop, step);
    for (uint64_t k = 0; k < count; k++) {
        if (!POLL(I)) { interp_attach_loc(I, n->loc); return EX_ERR; }
        assign_number(f, n->a, (double)range_at(start, step, k));
        /* polled just above: a one-statement body (the usual) runs without polling again */
        Exec st = n->c->n == 1 ? exec(I, f, n->c->kids[0]) : exec_block(I, f, n->c);
        if (st == EX_BREAK) break;
        if (st == EX_RETURN || st == EX_ERR) return st;
    }
    return EX_OK;
}

/* for x in range(...) loops over numbers without building the list. */
static bool range_args(Interp *I, Frame *f, Node *call, int64_t *a, int64_t *b, int64_t *s, Exec *st) {
    if (call->kind != AST_CALL || call->a->kind != AST_NAME || call->nk || call->n < 1 || call->n > 3) return false;
    Value fn = *name_ref(f, call->a);
    if (fn.type != VAL_FUNC || fn.as.o != (Obj *)I->range_builtin) return false;
    int64_t v[3] = { 0, 0, 1 };
    for (int i = 0; i < call->n; i++) {
        Value x = eval(I, f, call->kids[i]);
        if (IS_ERR(x)) { *st = EX_ERR; return true; }
        if (x.type == VAL_NUM && fabs(x.as.n) > RANGE_MAX_BOUND) {   /* i + 1 == i there */
            interp_error_at(I, call->kids[i]->loc, RANGE_BOUND_MSG);
            *st = EX_ERR;
            return true;
        }
        if (x.type != VAL_NUM || !num_to_i64(x.as.n, &v[i])) {
            char msg[160];
            range_arg_message(msg, sizeof msg, call->n, i, x.type == VAL_NUM ? NULL : val_type_name(x), x.as.n);
            val_release(x);
            interp_error_at(I, call->kids[i]->loc, "%s", msg);
            *st = EX_ERR;
            return true;
        }
    }
    if (call->n == 1) { *a = 0; *b = v[0]; *s = 1; }
    else { *a = v[0]; *b = v[1]; *s = call->n == 3 ? v[2] : 1; }
    if (*s == 0) {
        interp_error_at(I, call->loc, "range() step must not be zero");
        *st = EX_ERR;
    } else *st = EX_OK;
    return true;
}

/* for x in progress(...): the loop draws the bar (lang/progress.c). */
static bool progress_loop(Interp *I, Frame *f, Node *call) {
    return call->kind == AST_CALL && call->a->kind == AST_NAME && builtin_is(*name_ref(f, call->a), "progress");
}

NOINLINE static Exec exec_for(Interp *I, Frame *f, Node *n) {
    int64_t a, b, s;
    Exec st = EX_OK;
    if (range_args(I, f, n->b, &a, &b, &s, &st))
        return st == EX_ERR ? st : exec_for_range(I, f, n, a, b, s);
    bool bar = progress_loop(I, f, n->b);
    Value it = eval(I, f, n->b);
    if (IS_ERR(it)) return EX_ERR;
    if (it.type == VAL_DICT) {
        /* iterate over a snapshot of the keys */
        ObjDict *d = AS_DICT(it);
        ObjList *keys = list_new(d->len);
        for (int i = 0; i < d->len; i++) list_push(keys, OBJ_VAL(VAL_STR, d->entries[i].key));
        val_release(it);
        it = OBJ_VAL(VAL_LIST, keys);
    }
    int64_t len;
    switch (it.type) {
    case VAL_LIST: len = AS_LIST(it)->len; break;
    case VAL_STR: len = AS_STR(it)->ncp; break;
    case VAL_TENSOR:
        if (it.as.t->ndim == 0) {
            val_release(it);
            interp_error_atk(I, ERRK_TYPE, n->b->loc, "cannot iterate over a 0-d tensor");
            return EX_ERR;
        }
        len = it.as.t->shape[0];
        break;
    default:
        interp_error_atk(I, ERRK_TYPE, n->b->loc, "cannot iterate over a %s", val_type_name(it));
        val_release(it);
        return EX_ERR;
    }
    Progress pb;
    if (bar) progress_begin(I, &pb, len);
    for (int64_t i = 0; i < len; i++) {
        if (!POLL(I)) { st = EX_ERR; interp_attach_loc(I, n->loc); break; }
        Value x;
        if (it.type == VAL_LIST) {
            if (i >= AS_LIST(it)->len) break;   /* the list shrank while we looped */
            x = val_retain(AS_LIST(it)->items[i]);
        } else {
            IdxVal iv = { 0, { NUM_VAL((double)i), NIL_VAL, NIL_VAL } };
            x = index_values(I, it, &iv, 1);
            if (IS_ERR(x)) { st = EX_ERR; interp_attach_loc(I, n->loc); break; }
        }
        assign_name(f, n->a, x);
        st = exec_body(I, f, n->c);
        if (bar && (st == EX_OK || st == EX_CONTINUE)) progress_tick(I, &pb);   /* as tqdm: a finished item */
        if (st == EX_BREAK) { st = EX_OK; break; }
        if (st == EX_CONTINUE) st = EX_OK;
        if (st != EX_OK) break;
    }
    if (bar) progress_end(I, &pb);
    val_release(it);
    return st;
}

/* A condition's truth through eval: 1, 0, or -1 with an error pending. */
NOINLINE static int cond_general(Interp *I, Frame *f, Node *cond) {
    Value c = eval(I, f, cond);
    if (IS_ERR(c)) return -1;
    int t = c.type == VAL_BOOL ? c.as.b : interp_truthy(I, c);
    val_release(c);
    if (t < 0) interp_attach_loc(I, cond->loc);
    return t;
}

/* x (op) y for a comparison operator: *out and true; false for any other operator. */
__attribute__((always_inline)) static inline bool num_compare(int op, double x, double y, int *out) {
    switch (op) {
    case TOK_LT: *out = x < y; return true;
    case TOK_LE: *out = x <= y; return true;
    case TOK_GT: *out = x > y; return true;
    case TOK_GE: *out = x >= y; return true;
    case TOK_EQ: *out = x == y; return true;
    case TOK_NE: *out = x != y; return true;
    default: return false;
    }
}

__attribute__((always_inline)) static inline Exec exec_cond(Interp *I, Frame *f, Node *cond, int *out) {
    /* the usual condition, a comparison of two numbers, without making a Value */
    double x, y;
    if (cond->kind == AST_BINARY && num_leaf(f, cond->a, &x) && num_leaf(f, cond->b, &y) &&
        num_compare(cond->op, x, y, out))
        return EX_OK;
    *out = cond_general(I, f, cond);
    return *out < 0 ? EX_ERR : EX_OK;
}

NOINLINE static Exec exec_expr(Interp *I, Frame *f, Node *n) {
    Value v = eval(I, f, n->a);
    if (IS_ERR(v)) return EX_ERR;
    if (I->repl && !f->closure) {
        val_release(I->last_value);
        I->last_value = v;
    } else val_release(v);
    return EX_OK;
}

/* An assignment's shape, classified on its first run into Node.quick (the resolved tree never
 * changes after). The hot one, `local = local op local|literal` with op one of + - * /, then
 * runs on the slots directly. */
enum {
    QUICK_UNSET,     /* not run yet */
    QUICK_NONE,      /* any other shape */
    QUICK_LOCAL_ARITH_VAR,   /* x = y op z: all three locals */
    QUICK_LOCAL_ARITH_NUM,   /* x = y op 1.5 */
};

static bool is_local(const Node *n) { return n->kind == AST_NAME && n->scope == SCOPE_LOCAL; }

NOINLINE static unsigned char quick_assign_class(Node *n) {
    Node *e = n->b;
    bool arith = e->kind == AST_BINARY &&
                 (e->op == TOK_PLUS || e->op == TOK_MINUS || e->op == TOK_STAR || e->op == TOK_SLASH);
    if (n->op != TOK_EOF || !is_local(n->a) || !arith || !is_local(e->a)) return QUICK_NONE;
    if (is_local(e->b)) return QUICK_LOCAL_ARITH_VAR;
    return e->b->kind == AST_NUM ? QUICK_LOCAL_ARITH_NUM : QUICK_NONE;
}

/* `local = local op local|literal` when the operands hold numbers and the target holds no
 * object: computed and stored on the slots. False, with nothing done, otherwise. */
__attribute__((always_inline)) static inline bool assign_quick(Frame *f, Node *n) {
    if (__builtin_expect(n->quick == QUICK_UNSET, 0)) n->quick = quick_assign_class(n);
    if (n->quick < QUICK_LOCAL_ARITH_VAR) return false;
    Node *e = n->b;
    const Value *a = &f->slots[e->a->slot];
    Value *dst = &f->slots[n->a->slot];
    double y;
    if (n->quick == QUICK_LOCAL_ARITH_NUM) y = e->b->num;
    else {
        const Value *b = &f->slots[e->b->slot];
        if (b->type != VAL_NUM) return false;
        y = b->as.n;
    }
    if (a->type != VAL_NUM || val_is_heap(*dst)) return false;
    double x = a->as.n, r;
    switch (e->op) {
    case TOK_PLUS: r = x + y; break;
    case TOK_MINUS: r = x - y; break;
    case TOK_STAR: r = x * y; break;
    default: r = x / y; break;
    }
    dst->type = VAL_NUM;
    dst->as.n = r;
    return true;
}

/* `name = leaf op leaf` on numbers (s = s + 1.5, i = i + 1), computed and stored in place;
 * false, with nothing done, for any other assignment. Inlined into exec(). */
__attribute__((always_inline)) static inline bool assign_number_leaves(Frame *f, Node *n) {
    Node *e = n->b;
    double x, y, r;
    if (n->op != TOK_EOF || n->a->kind != AST_NAME || e->kind != AST_BINARY || !num_leaf(f, e->a, &x) ||
        !num_leaf(f, e->b, &y))
        return false;
    if (num_arith(e->op, x, y, &r)) {
        assign_number(f, n->a, r);
        return true;
    }
    Value v;
    if (!num_simple_op(e->op, x, y, &v)) return false;
    assign_name(f, n->a, v);
    return true;
}

NOINLINE static Exec exec_assign(Interp *I, Frame *f, Node *n) {
    if (n->op != TOK_EOF) return assign_augmented(I, f, n);
    if (is_self_append(n) && name_ref(f, n->a)->type == VAL_STR) {   /* numbers skip the call */
        bool done;
        Exec st = append_to_string_var(I, f, n->a, n->b->b, n->b->loc, &done);
        if (done) return st;
    }
    Value v = eval(I, f, n->b);
    if (IS_ERR(v)) return EX_ERR;
    if (n->a->kind == AST_NAME) {
        assign_name(f, n->a, v);
        return EX_OK;
    }
    return assign_to(I, f, n->a, v);
}

/* An if whose condition c is already known (exec() tests the first condition inline). */
NOINLINE static Exec exec_if_from(Interp *I, Frame *f, Node *n, int c) {
    if (c) return exec_body(I, f, n->b);
    n = n->c;
    while (n && n->kind == AST_IF) {
        if (exec_cond(I, f, n->a, &c) == EX_ERR) return EX_ERR;
        if (c) return exec_body(I, f, n->b);
        n = n->c;
    }
    return n ? exec_body(I, f, n) : EX_OK;
}

NOINLINE static Exec exec_while(Interp *I, Frame *f, Node *n) {
    for (;;) {
        int c;
        if (!POLL(I)) { interp_attach_loc(I, n->loc); return EX_ERR; }
        if (exec_cond(I, f, n->a, &c) == EX_ERR) return EX_ERR;
        if (!c) return EX_OK;
        Exec st = exec_body(I, f, n->b);
        if (st == EX_BREAK) return EX_OK;
        if (st == EX_RETURN || st == EX_ERR) return st;
    }
}

__attribute__((always_inline)) static inline Exec exec_return(Interp *I, Frame *f, Node *n) {
    if (!f->closure) {
        interp_error_at(I, n->loc, "'return' outside a function");
        return EX_ERR;
    }
    Value v = n->a ? eval(I, f, n->a) : NIL_VAL;
    if (IS_ERR(v)) return EX_ERR;
    val_release(I->ret);
    I->ret = v;
    return EX_RETURN;
}

/* del l[a:b:s]: the items the slice selects leave the list, as Python's (a choice where
 * spec section 12 is silent; docs/reference.md section 5). */
static bool del_slice(Interp *I, Frame *f, Node *t, Value obj) {
    if (obj.type != VAL_LIST) {
        interp_errork(I, ERRK_TYPE, "cannot delete a slice of a %s (only of a list)", val_type_name(obj));
        return false;
    }
    IdxVal iv;
    if (!eval_index_items(I, f, t, &iv)) return false;
    ObjList *l = AS_LIST(obj);
    int64_t start, stop, step;
    bool ok = slice_bounds(I, l->len, &start, &stop, &step, iv.v);
    idx_release(&iv, 1);
    if (!ok) return false;
    int64_t count = slice_length(start, stop, step);
    if (count == 0) return true;
    if (step < 0) {   /* the same items, walked upward */
        start += (count - 1) * step;
        step = -step;
    }
    int64_t w = start;
    for (int64_t r = start; r < l->len; r++) {
        int64_t k = r - start;
        if (k % step == 0 && k / step < count) val_release(l->items[r]);
        else l->items[w++] = l->items[r];
    }
    l->len = (int)w;
    return true;
}

/* del d[k], del d.k, del l[i] (spec section 12): interp_take, the item dropped; del l[a:b]. */
NOINLINE static Exec exec_del(Interp *I, Frame *f, Node *n) {
    Node *t = n->a;
    Value obj = eval(I, f, t->a);
    if (IS_ERR(obj)) return EX_ERR;
    if (t->kind == AST_INDEX && t->kids[0]->kind == AST_SLICE) {
        bool ok = del_slice(I, f, t, obj);
        val_release(obj);
        if (!ok) interp_attach_loc(I, t->loc);
        return ok ? EX_OK : EX_ERR;
    }
    Value key = t->kind == AST_FIELD ? val_cstr(t->str) : eval(I, f, t->kids[0]);
    Value r = IS_ERR(key) ? key : interp_take(I, "del", obj, key, UNDEF_VAL);
    val_release(obj);
    if (IS_ERR(key)) return EX_ERR;
    val_release(key);
    if (IS_ERR(r)) { interp_attach_loc(I, t->loc); return EX_ERR; }
    val_release(r);
    return EX_OK;
}

/* try { a } catch e { c }: an error in a that a program may catch (not Ctrl-C, --timeout,
 * --max-ops or exit) becomes the dict e and c runs. Every frame between released what it
 * held as the error unwound; what a did before the error stays done. */
NOINLINE static Exec exec_try(Interp *I, Frame *f, Node *n) {
    Source *src = I->cur_src;
    I->ntry++;
    Exec st = exec_block(I, f, n->a);
    I->ntry--;
    if (st != EX_ERR || I->err_final || I->exiting) return st;
    I->cur_src = src;
    Value e = n->b ? interp_caught_error(I) : NIL_VAL;
    interp_clear_error(I);
    if (n->b && assign_to(I, f, n->b, e) == EX_ERR) return EX_ERR;
    return exec_block(I, f, n->c);
}

/* Every statement kind but the hot ones exec() dispatches itself. */
NOINLINE static Exec exec_other(Interp *I, Frame *f, Node *n) {
    switch (n->kind) {
    case AST_WHILE: return exec_while(I, f, n);
    case AST_BREAK:
    case AST_CONTINUE:
        I->jump_loc = n->loc;   /* where a break/continue that finds no loop is reported */
        return n->kind == AST_BREAK ? EX_BREAK : EX_CONTINUE;
    case AST_BLOCK: return exec_block(I, f, n);
    case AST_COLLECT: return exec_collect(I, f, n);
    case AST_DEL: return exec_del(I, f, n);
    case AST_TRY: return exec_try(I, f, n);
    case AST_FNDECL: return assign_to(I, f, n->a, make_closure(f, n->b->proto));
    case AST_IMPORT: {
        Value m = module_import(I, f->mod, n->str);
        if (IS_ERR(m)) { interp_attach_loc(I, n->loc); return EX_ERR; }
        return assign_to(I, f, n->a, m);
    }
    case AST_STATIC: {
        const StaticHooks *vm = interp_static_hooks();
        Exec st = vm ? vm->exec_block(I, f, n) : interp_exec_block_eager(I, f, n->a);
        if (st == EX_BREAK || st == EX_CONTINUE || (st == EX_RETURN)) {
            val_release(I->ret);
            I->ret = NIL_VAL;
            interp_error_at(I, n->loc, "'%s' cannot leave a static block",
                            st == EX_BREAK ? "break" : st == EX_CONTINUE ? "continue" : "return");
            return EX_ERR;
        }
        return st;
    }
    default: {
        Value v = eval(I, f, n);
        if (IS_ERR(v)) return EX_ERR;
        val_release(v);
        return EX_OK;
    }
    }
}

__attribute__((always_inline)) static inline Exec exec(Interp *I, Frame *f, Node *n) {
    I->stmt_loc = n->loc;
    I->stmt_src = I->cur_src;
    if (I->heap.gc_due) gc_collect();   /* a statement boundary is a safe point for the cycle collector */
    switch (n->kind) {
    case AST_EXPR: return exec_expr(I, f, n);
    case AST_ASSIGN: return assign_quick(f, n) || assign_number_leaves(f, n) ? EX_OK : exec_assign(I, f, n);
    case AST_IF: {
        /* a guard (if c { ... } with no else) whose condition is false costs no call */
        int c;
        if (exec_cond(I, f, n->a, &c) == EX_ERR) return EX_ERR;
        return !c && !n->c ? EX_OK : exec_if_from(I, f, n, c);
    }
    case AST_FOR: return exec_for(I, f, n);
    case AST_RETURN: return exec_return(I, f, n);
    default: return exec_other(I, f, n);
    }
}

/* The statements of block b in order: exec_block, and inlined where a function body runs. */
__attribute__((always_inline)) static inline Exec exec_stmts(Interp *I, Frame *f, Node *b) {
    for (int i = 0; i < b->n; i++) {
        /* every statement polls: straight-line code of slow kernels stops too */
        if (!interp_poll(I)) { interp_attach_loc(I, b->kids[i]->loc); return EX_ERR; }
        Exec st = exec(I, f, b->kids[i]);
        if (st != EX_OK) return st;
    }
    return EX_OK;
}

/* The body of a loop or an if: a block of one statement (the usual loop body) runs it here,
 * polling as exec_block does, without the call and frame of exec_block. */
__attribute__((always_inline)) static inline Exec exec_body(Interp *I, Frame *f, Node *b) {
    if (b->n != 1) return exec_block(I, f, b);
    if (!interp_poll(I)) { interp_attach_loc(I, b->kids[0]->loc); return EX_ERR; }
    return exec(I, f, b->kids[0]);
}

NOINLINE static Exec exec_block(Interp *I, Frame *f, Node *b) { return exec_stmts(I, f, b); }

Exec interp_exec_block_eager(Interp *I, Frame *f, Node *b) { return exec_block(I, f, b); }

/* Runs a resolved program at the top level of module m. */
Exec interp_exec_module(Interp *I, Module *m, Node *prog) {
    Frame f = { NULL, NULL, m };
    Source *saved = I->cur_src;
    I->cur_src = m->src;
    Exec st = exec_block(I, &f, prog);
    if (st == EX_BREAK || st == EX_CONTINUE) {
        interp_error_at(I, I->jump_loc, "'break' or 'continue' outside a loop");
        st = EX_ERR;
    }
    I->cur_src = saved;
    return st;
}
