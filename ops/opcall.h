/* opcall.h - one op call: the unit that eager code, the static compiler, the VM and every
 * device share.
 *
 * An OpCall names an op of ops.def, its operands (tensors, or numbers that are weak
 * scalars as in PyTorch) and its attributes (axes, shapes, dtypes... typed by the op's
 * signature). The same call is
 *   - inferred:  op_infer() gives every result's shape and dtype, from operand shapes and
 *                dtypes only (the static compiler calls it with no data), and raises every
 *                error that does not depend on values, with the message eager code gives;
 *   - run:       op_run() validates, infers, allocates (or writes into outputs the caller
 *                provides: the VM's reused buffers) and dispatches to the kernel of the
 *                operands' device through the device registry.
 * Argument binding (positional, keywords, defaults) is op_bind(); converting argument
 * values into OpArgs and OpAttrs is the language's side (lang/opargs.c), used by the
 * eager built-ins and the static compiler alike.
 *
 * Ownership: op_run's outputs are NEW references (or the caller's own tensors when it
 * passed them in); operands are BORROWED. Errors: -1 with the message in op_error(). */
#ifndef TSL_OPCALL_H
#define TSL_OPCALL_H
#include <stdbool.h>
#include <stdint.h>
#include "tensor.h"

typedef enum {
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) OP_##id,
#include "ops.def"
#undef OP
    OP__COUNT
} OpCode;

enum { K_UNARY, K_BINARY, K_COMPARE, K_REDUCE, K_OTHER };
enum { F_FUSE = 1, F_COMM = 2, F_NUM = 4, F_SYNTAX = 8, F_RANDOM = 16, F_VIEW = 32, F_DYNAMIC = 64, F_WEAK = 128, F_ITEM = 256, F_COLL = 512,
       F_READBACK = 1024 };

/* The backward rule of an op (spec section 7): graph-building code over a GradBuilder
 * (ops/grad.h), filled in from the one list of rules in ops/grad.c. */
struct GradCtx;
typedef int (*BackwardFn)(struct GradCtx *g);

#define OP_MAX_OUT 3
#define OP_MAX_PARAMS 8

/* ---------- the table ---------- */

/* allreduce's op (a P_REDOP attribute), in the order of its names in redop_names */
typedef enum { REDOP_SUM, REDOP_MEAN, REDOP_MAX, REDOP_MIN } RedOp;
extern const char *const redop_names[4];

typedef enum { DR_SAME, DR_FLOAT, DR_BOOL, DR_PROMOTE, DR_CMP, DR_INT, DR_SUM, DR_MEAN, DR_I64, DR_F32, DR_ATTR, DR_IMPL } DtypeRule;

typedef enum {
    P_T, P_TOPT, P_TS, P_N,                         /* operands */
    P_AXIS, P_AXES, P_BOOL, P_INT, P_F, P_SHAPE, P_SHAPE_M1, P_PAIRS, P_REDOP, P_DTYPE,   /* attributes */
    P_WIN, P_PADW,           /* window attributes of the convolution and pooling ops (ops/conv.h) */
    P_CHOICE   /* one of the names "a|b|c" the signature lists; its index in an int slot */
} ParamType;

typedef struct {
    const char *name;
    ParamType type;
    bool required;
    bool default_nil;     /* the default is nil */
    double default_num;   /* numeric/bool default */
    int slot;             /* P_INT, P_REDOP, P_CHOICE: OpAttrs.i[slot]; P_F: f[slot]; operands: operand index;
                           * P_BOOL: op_attr_bool's slot (OpAttrs.flag, flag2);
                           * P_WIN: OpAttrs.pairs[slot] ([h, w]); P_PADW: pairs[slot] and [slot + 1] */
    const char *choices;  /* P_CHOICE: "none|tanh" */
} OpParam;

/* Everything the table says about one op (op_info[op]). */
typedef struct {
    const char *name, *signature, *symbol, *doc;
    int nout, kind, flags;
    DtypeRule dtype_rule;
    int nparams;
    OpParam params[OP_MAX_PARAMS];   /* parsed from signature by op_table_init() */
    int noperands;                   /* operand parameters (T, T?, Ts, N) */
    BackwardFn backward;             /* NULL: no gradient for this op yet */
} OpDef;
extern OpDef op_info[OP__COUNT];


/* Parses every signature once; called by op_def(), so callers need not. Aborts on a
 * malformed table row (a programming error, caught by the first test run). */
void op_table_init(void);
const OpDef *op_def(OpCode op);
/* Whether parameter type t is an operand (T, T?, Ts, N), not an attribute. */
static inline bool op_param_is_operand(ParamType t) { return t <= P_N; }
/* Whether a number operand stays a number (a weak scalar, spec section 5) for parameter type
 * t of op d: number parameters, the elementwise families and F_WEAK ops. Elsewhere a number
 * becomes a 0-d tensor first (eager and the static compiler alike), and kernels read a
 * tensor there. */
bool op_param_takes_number(const OpDef *d, ParamType t);
/* The index of name among a P_CHOICE parameter's choices, or -1. */
int op_choice_index(const OpParam *p, const char *name);
/* The op with this built-in name (F_SYNTAX ops have none), or OP__COUNT. */
OpCode op_by_name(const char *name);
/* The op an operator symbol stands for with `nin` operands ("-" is NEG or SUB), or OP__COUNT. */
OpCode op_by_symbol(const char *sym, int nin);
/* What errors call the op: its symbol in quotes for operators ("'+'"), else its name. */
const char *op_display(OpCode op, char *buf, size_t n);

/* ---------- a call ---------- */

typedef enum { ARG_NONE, ARG_TENSOR, ARG_NUM } ArgKind;

/* One operand. At run time a tensor operand has t; while compiling only its dtype and
 * shape (t NULL). A number is a weak scalar: it takes the tensors' dtype when it fits. */
typedef struct {
    uint8_t kind;         /* ArgKind (small: the VM builds these for every instruction) */
    uint8_t dtype;        /* DType */
    uint8_t ndim;
    bool is_bool;         /* ARG_NUM: a truth value */
    const Tensor *t;
    const int64_t *dims;
    double x;             /* ARG_NUM */
} OpArg;

static inline OpArg op_arg_tensor(const Tensor *t) {
    return (OpArg){ .kind = ARG_TENSOR, .t = t, .dtype = (uint8_t)t->dtype, .ndim = (uint8_t)t->ndim, .dims = t->shape };
}
static inline OpArg op_arg_meta(DType dt, const Shape *s) {
    return (OpArg){ .kind = ARG_TENSOR, .dtype = (uint8_t)dt, .ndim = (uint8_t)s->ndim, .dims = s->d };
}
static inline OpArg op_arg_num(double x, bool is_bool) {
    return (OpArg){ .kind = ARG_NUM, .x = x, .is_bool = is_bool, .dtype = (uint8_t)(is_bool ? DT_BOOL : DT_F64) };
}
void op_arg_shape(const OpArg *a, Shape *s);

/* Attribute values, typed by the signature. Zero-initialise (memset) so that two calls with
 * the same attributes compare equal byte for byte (the optimizer's CSE does). */
typedef struct {
    uint32_t given;          /* bit p: parameter p was passed, not defaulted */
    int naxes;               /* P_AXES: -1 nil (all axes) */
    int axes[TSL_MAX_RANK];
    int axis;                /* P_AXIS (given bit clear and default nil: none) */
    bool flag;               /* P_BOOL: the signature's first (slot 0) */
    bool flag2;              /* P_BOOL: its second (slot 1; matmul's transpose_b) */
    int64_t i[3];            /* P_INT, in signature order */
    double f[3];             /* P_F, in signature order */
    Shape shape;             /* P_SHAPE / P_SHAPE_M1 */
    int npairs;              /* P_PAIRS; the window ops: the slots their P_WIN and P_PADW use */
    int64_t pairs[TSL_MAX_RANK][2];
    int dtype;               /* P_DTYPE: -1 nil */
} OpAttrs;

/* The P_BOOL attribute in `slot` (OpParam.slot: 0 flag, 1 flag2). */
static inline bool *op_attr_bool(OpAttrs *at, int slot) { return slot ? &at->flag2 : &at->flag; }
static inline bool op_attr_bool_get(const OpAttrs *at, int slot) { return slot ? at->flag2 : at->flag; }

typedef struct {
    OpCode op;
    int nin;
    const OpArg *in;         /* operands, in signature order (a Ts list expands here) */
    const OpAttrs *at;
} OpCall;

/* Whether parameter p of the call's op was given. */
static inline bool op_given(const OpCall *c, int p) { return (c->at->given >> p) & 1u; }

/* ---------- binding (shared by eager built-ins and the static compiler) ---------- */

/* Which argument binds each parameter of fname(params), the first nreq required: which[i] is an
 * index into the npos positional arguments, npos + k for keyword k, or -1 (its default). false
 * with the message in err ("NAME() missing argument 'P'", ...). The one binding of ops
 * (op_bind: 0, or -1 with the message), the other built-ins (args_bind) and static code. */
bool args_match(const char *fname, const char *const *params, int nreq, int npos, const char *const *kwn, int nkw,
                int *which, char *err, size_t n);
int op_bind(OpCode op, int nargs, const char *const *kwnames, int nkw, int *which);

/* ---------- inference and execution ---------- */

/* The dtype operands promote to (spec section 5: tensors by bool < i64 < f32 < f64, numbers
 * weakly). With no tensor operand, a number alone is f32 and a bool alone is bool. */
DType op_promote(const OpArg *in, int n);

/* Shapes and dtypes of the results; every error that does not depend on the data. */
int op_infer(const OpCall *c, Shape *out, DType *dt);
/* Runs the call. out[k] NULL: allocated; otherwise written into (it has the inferred dtype
 * and shape, and does not alias an operand unless the op is elementwise). F_VIEW and
 * F_DYNAMIC ops always allocate their results (out[k] is replaced, the old one released). */
int op_run(const OpCall *c, Tensor **out);
/* op_run of op on in[0..n) with attributes at, or every attribute at its default when at is
 * NULL (out[k] as op_run takes it). */
int op_run_with(OpCode op, const OpArg *in, int n, const OpAttrs *at, Tensor **out);
/* Runs a call op_infer already accepted, into out[] buffers of the inferred dtypes and
 * shapes (no second inference: the eager fast paths and the VM know them). */
int op_exec(const OpCall *c, Tensor **out);
/* An F_NUM op on numbers only: 0 with *r, -1 when the op does not map numbers, -2 on an
 * error (message set). The result is a bool when op_number_is_bool says so. */
int op_run_number(OpCode op, const OpArg *in, int n, const OpAttrs *at, double *r);
bool op_number_is_bool(OpCode op, const OpArg *in, int n);

/* ---------- devices ---------- */

/* A device: its kernels and memory. The registry (ops/op.c) lists every device this build
 * knows; Device is an index into it. A device whose start fails (no plugin, no driver) is
 * reported by name and never used. */
typedef int (*OpKernelFn)(const OpCall *c, Tensor **out);
/* A step of a fused elementwise group run as one kernel (fused_run): t[dst] := op(a, b), the
 * operands earlier temporaries (>= 0) or inputs -(k+1), b DEV_FUSED_NONE for a unary step;
 * the last step's temporary is the result. */
#define DEV_FUSED_MAX_IN 8
#define DEV_FUSED_NONE (-1000000)
typedef struct {
    int op, dst, a, b;
} DevFusedStep;
typedef struct {
    const char *name;
    int (*start)(void);             /* first use: 0, or -1 with the reason (every call); NULL: none needed */
    int64_t (*mallocs)(void);       /* device allocations so far (memstats().device_mallocs), or NULL */
    bool (*supports_op)(const OpCall *c);
    Tensor *(*alloc)(DType dt, const Shape *s);  /* a result's buffer on this device */
    int (*run)(const OpCall *c, Tensor **out);   /* out[] allocated with the inferred types */
    bool (*allocates)(OpCode op);   /* run() makes the results itself when out[k] is NULL */
    OpKernelFn (*kernel)(OpCode op); /* run()'s kernel for op, for callers that look it up once */
    /* elementwise kernels on contiguous chunks, for fused groups (see cpu_unary/cpu_binary) */
    int (*unary)(OpCode op, DType dt, const void *src, void *dst, int64_t n);
    int (*binary)(OpCode op, DType ct, const void *a, int64_t sa, const void *b, int64_t sb, void *out, int64_t n);
    void (*synchronize)(void);
    /* memory of the device (NULL for the CPU, whose buffers tensor.c handles) */
    void (*release)(TBuf *b);                      /* frees a buffer the device owns */
    int (*to_host)(const Tensor *t, void *dst);    /* t's elements into host memory */
    Tensor *(*from_host)(const Tensor *t);         /* a new tensor here with a CPU tensor's elements */
    Tensor *(*clone)(const Tensor *t);             /* a new tensor here with t's elements */
    /* the static VM's device executor (vm/run/exec_dev.c, vm_seg.c); NULL where the device has
     * none: fused groups then run step by step, captures are the CPU's stand-in (re-execution) */
    int (*fused_run)(const DevFusedStep *steps, int nsteps, const Tensor *const *in, const double *num, int nin,
                     Tensor *out);                 /* 0 ran, 1 no kernel for it (nothing ran), -1 failed */
    int (*copy_into)(Tensor *dst, const Tensor *src); /* two tensors here of one size, not waited for */
    int (*capture_begin)(void);                    /* graph capture: kernels recorded, not run */
    int (*capture_end)(void **graph);              /* after every begin that succeeded */
    int (*graph_launch)(void *graph);
    void (*graph_free)(void *graph);
} DeviceImpl;
/* The started device, or NULL (error set) when it is not: device_start starts it (the
 * first use of the GPU loads its plugin): 0, or -1 with the reason. */
const DeviceImpl *op_device(Device d);
const DeviceImpl *device_impl(Device d);   /* d's row, started or not (its hooks start it as they need) */
int device_start(Device d);
const char *device_name(Device d);
/* The device called name: 0 with *d, -1 when no device has that name. */
int device_by_name(const char *name, Device *d);
void device_names(char *buf, size_t n);   /* "cpu" or "gpu", for messages */
int64_t device_mallocs(void);   /* over every started device */
extern const DeviceImpl cpu_device, gpu_device;

/* Shape/dtype inference of each op family (ops/infer.c and beside it), named by the impl
 * column of ops.def: int infer_<impl>(const OpCall *c, Shape *out, DType *dt). */
#define OP(id, name, sig, nout, kind, flags, rule, impl, sym, doc) int infer_##impl(const OpCall *c, Shape *out, DType *dt);
#include "ops.def"
#undef OP

#endif
