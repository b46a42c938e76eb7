/* gpu.c - the GPU device: loads the CUDA plugin (ops/gpu/cuda/plugin.h) on the first use of
 * the GPU, holds GPU tensors' memory and transfers, and is the GPU's entry in the device
 * registry. A call arrives validated and inferred (ops/op.c); the op families (gpu_ew.c,
 * gpu_axis.c, gpu_shape.c, gpu_matmul.c, gpu_random.c, gpu_dist.c, gpu_sort.c, gpu_linalg.c)
 * choose the plugin kernel, convert operands to the compute dtype (as the CPU does) and lay
 * out strides. What the plugin has
 * no kernel for is refused by supports_op, so the user reads "NAME() is not supported on
 * device 'gpu'", never a wrong result. See docs/gpu.md. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "gpu_impl.h"
#include "tops.h"
#include "ctx.h"
#include "mem.h"
#include "plugin.h"

/* The plugin belongs to the process (one CUDA context), started once under pthread_once. */
static struct {
    pthread_once_t once;
    char error[600];           /* why it could not start (every later use reports it) */
} gpu = { PTHREAD_ONCE_INIT, "" };

const TslCudaPlugin *gpu_cu;   /* NULL until started; then read-only */

static void gpu_load(void) {
    char path[4096], why[600];
    void *entry;
    plugin_path("TSL_CUDA_PLUGIN", "libtsl_cuda.so", path, sizeof path);
    int rc = plugin_open(path, "tsl_cuda_plugin", &entry, why, sizeof why);
    if (rc) {
        snprintf(gpu.error, sizeof gpu.error, "CUDA runtime not available: %.500s", why);
        return;
    }
    const TslCudaPlugin *p = ((TslCudaPluginFn)entry)();
    if (!p || p->abi != TSL_CUDA_ABI || p->nops != OP__COUNT) {
        snprintf(gpu.error, sizeof gpu.error,
                 "CUDA runtime not available: %.400s is not a CUDA plugin of this build of tsl", path);
        return;
    }
    char err[400] = "";
    switch (p->init(err, sizeof err)) {
    case CUDA_OK:
        gpu_cu = p;
        return;
    case CUDA_NO_DEVICE: snprintf(gpu.error, sizeof gpu.error, "no CUDA device found"); return;
    default: snprintf(gpu.error, sizeof gpu.error, "CUDA runtime not available: %.500s", err); return;
    }
}

/* The registry's start hook: the first call loads the plugin; 0, or -1 with the reason every time. */
static int gpu_start(void) {
    pthread_once(&gpu.once, gpu_load);
    if (!gpu_cu) {
        op_failk(ERRK_DEVICE, "%s", gpu.error);
        return -1;
    }
    return 0;
}

int gpu_result(int rc, const char *err) {
    if (rc) op_fail("%s", err);
    return rc ? -1 : 0;
}

/* ---------- memory ---------- */

Tensor *gpu_alloc(DType dt, const Shape *s) {
    int64_t count = shape_count(s), nb;
    if (count < 0 || tensor_nbytes(dt, s, count, &nb)) return NULL;
    size_t bytes = (size_t)nb;
    TBuf *b = mem_try_alloc(sizeof(TBuf));
    Tensor *t = b ? mem_try_alloc(sizeof(Tensor)) : NULL;
    char err[400];
    void *data = NULL;
    if (!t || GPU_CALL(alloc, &data, bytes ? bytes : 64)) {
        if (!t) op_failk(ERRK_MEMORY, "out of memory");
        mem_free(t);
        mem_free(b);
        return NULL;
    }
    *b = (TBuf){ .rc = 1, .bytes = bytes, .data = data, .device = DEV_GPU };
    memset(t, 0, sizeof *t);
    tensor_init(t, dt, s, count, b);
    return t;
}

void gpu_release(TBuf *b) { gpu_cu->free(b->data, b->bytes ? b->bytes : 64); }

size_t gpu_nbytes(const Tensor *t) { return (size_t)t->size * dtype_size(t->dtype); }

int gpu_to_host(const Tensor *t, void *dst) {
    char err[400];
    return GPU_CALL(to_host, dst, t->data, gpu_nbytes(t));
}

/* A new GPU tensor with a's elements, a on the GPU or (from_host) on the host. */
static Tensor *gpu_copy_of(const Tensor *a, bool from_host) {
    Shape s;
    shape_of(a, &s);
    Tensor *t = gpu_alloc(a->dtype, &s);
    char err[400];
    size_t nb = gpu_nbytes(a);
    if (t && (from_host ? GPU_CALL(to_device, t->data, a->data, nb) : GPU_CALL(copy, t->data, a->data, nb))) {
        tensor_release(t);
        t = NULL;
    }
    return t;
}

Tensor *gpu_from_host(const Tensor *h) { return gpu_copy_of(h, true); }
Tensor *gpu_clone(const Tensor *a) { return gpu_copy_of(a, false); }

void gpu_synchronize(void) {
    char err[400];
    gpu_result(gpu_cu->synchronize(err, sizeof err), err);
}

/* a (on the GPU) in dtype dt: a itself retained, or a converted copy */
Tensor *gpu_as_dtype(const Tensor *a, DType dt) {
    if (a->dtype == dt) return tensor_retain((Tensor *)a);
    Shape s;
    shape_of(a, &s);
    Tensor *r = gpu_alloc(dt, &s);
    char err[400];
    if (r && GPU_CALL(astype, a->dtype, dt, a->data, r->data, a->size)) {
        tensor_release(r);
        r = NULL;
    }
    return r;
}

/* ---------- the registry entry ---------- */

static bool all_tensors(const OpCall *c) {
    for (int k = 0; k < c->nin; k++)
        if (c->in[k].kind != ARG_TENSOR) return false;
    return true;
}

/* tensors and absent optional operands only (a convolution's bias) */
static bool no_numbers(const OpCall *c) {
    for (int k = 0; k < c->nin; k++)
        if (c->in[k].kind == ARG_NUM) return false;
    return true;
}

static bool gpu_supports_op(const OpCall *c) {
    const OpDef *d = &op_info[c->op];
    if (d->kind == K_UNARY || d->kind == K_BINARY || d->kind == K_COMPARE) return gpu_ew_supported(c);
    if (c->op == OP_RAND || c->op == OP_RANDN || c->op == OP_RANDINT) return true;
    if (c->nin < 1 || c->in[0].kind != ARG_TENSOR) return false;
    if (gpu_reduce_op(c->op)) return true;
    if (gpu_linalg_op(c->op)) return all_tensors(c);
    switch (c->op) {
    case OP_SOFTMAX: case OP_LOG_SOFTMAX: return gpu_softmax_supported(c);
    case OP_MATMUL: case OP_DOT: return gpu_matmul_supported(c);
    case OP_SDPA: return all_tensors(c) || (c->nin == 4 && c->in[3].kind == ARG_NONE);
    case OP_RESHAPE: case OP_FLATTEN: case OP_EXPAND_DIMS: case OP_SQUEEZE:
    case OP_TRANSPOSE: case OP_BROADCAST_TO: case OP_ASTYPE: case OP_CLIP: case OP_WHERE: return true;
    case OP_CONCAT: case OP_STACK: case OP_EQUAL: case OP_ALLCLOSE: case OP_OUTER: return all_tensors(c);
    case OP_CUMSUM: case OP_CUMPROD: case OP_TRACE: case OP_DIFF: case OP_TILE: case OP_REPEAT: return true;
    case OP_ONE_HOT: return c->in[0].dtype == DT_I64;
    case OP_SORT: case OP_ARGSORT: case OP_TOPK: case OP_UNIQUE: case OP_PAD: case OP_FULL: return true;
    case OP_TAKE: return c->in[1].kind == ARG_TENSOR;
    case OP_SCATTER_ADD: return c->in[1].kind == ARG_TENSOR;
    case OP_ALLREDUCE: case OP_BROADCAST: case OP_ALLGATHER: return true;
    case OP_CONV1D: case OP_CONV2D: case OP_CONV_TRANSPOSE2D: case OP_CONV2D_WEIGHT_GRAD:
    case OP_MAX_POOL2D: case OP_AVG_POOL2D: case OP_ADAPTIVE_AVG_POOL2D: case OP_MAX_POOL2D_BACKWARD:
    case OP_AVG_POOL2D_BACKWARD: case OP_ADAPTIVE_AVG_POOL2D_BACKWARD: return no_numbers(c);
    case OP_SOFTPLUS: case OP_LAYER_NORM: case OP_RMS_NORM: case OP_GROUP_NORM: case OP_BATCH_NORM: return no_numbers(c);
    case OP_CROSS_ENTROPY: case OP_GATHER: return c->in[1].kind == ARG_TENSOR;
    case OP_SCATTER: case OP_MASKED_FILL: return c->in[1].kind == ARG_TENSOR;
    default: return false;
    }
}

static bool gpu_allocates(OpCode op) { return op_info[op].flags & F_VIEW; }

static int gpu_run(const OpCall *c, Tensor **out) {
    const OpDef *d = &op_info[c->op];
    if (d->kind == K_UNARY || d->kind == K_BINARY || d->kind == K_COMPARE) return gpu_run_ew(c, out[0]);
    if (gpu_reduce_op(c->op)) return gpu_run_reduce(c, out[0]);
    if (gpu_linalg_op(c->op)) return gpu_run_linalg(c, out);
    switch (c->op) {
    case OP_SOFTMAX: case OP_LOG_SOFTMAX: return gpu_run_softmax(c, out[0]);
    case OP_MATMUL: case OP_DOT: return gpu_run_matmul(c, out[0]);
    case OP_SDPA: return gpu_run_attention(c, out[0]);
    case OP_RESHAPE: case OP_FLATTEN: case OP_EXPAND_DIMS: case OP_SQUEEZE: return gpu_run_view(c, out);
    case OP_TRANSPOSE: return gpu_run_transpose(c, out[0]);
    case OP_BROADCAST_TO: return gpu_run_broadcast(c, out[0]);
    case OP_ASTYPE: return gpu_run_astype(c, out[0]);
    case OP_RAND: case OP_RANDN: case OP_RANDINT: return gpu_run_random(c, out[0]);
    case OP_CONCAT: case OP_STACK: return gpu_run_join(c, out[0]);
    case OP_CLIP: return gpu_run_clip(c, out[0]);
    case OP_CUMSUM: case OP_CUMPROD: return gpu_run_cum(c, out[0]);
    case OP_TRACE: return gpu_run_trace(c, out[0]);
    case OP_DIFF: return gpu_run_diff(c, out[0]);
    case OP_TILE: return gpu_run_tile(c, out[0]);
    case OP_REPEAT: return gpu_run_repeat(c, out[0]);
    case OP_ONE_HOT: return gpu_run_one_hot(c, out[0]);
    case OP_SORT: case OP_ARGSORT: case OP_TOPK: return gpu_run_sort(c, out);
    case OP_UNIQUE: return gpu_run_unique(c, out);
    case OP_PAD: return gpu_run_pad(c, out[0]);
    case OP_FULL: return gpu_run_full(c, out[0]);
    case OP_TAKE: return gpu_run_take(c, out[0]);
    case OP_SCATTER_ADD: return gpu_run_scatter_add(c, out[0]);
    case OP_OUTER: return gpu_run_outer(c, out[0]);
    case OP_WHERE: return gpu_run_where(c, out[0]);
    case OP_EQUAL: case OP_ALLCLOSE: return gpu_run_equal(c, out[0]);
    case OP_ALLREDUCE: case OP_BROADCAST: case OP_ALLGATHER: return gpu_run_dist(c, out[0]);
    case OP_CONV1D: case OP_CONV2D: case OP_CONV_TRANSPOSE2D: case OP_CONV2D_WEIGHT_GRAD: return gpu_run_conv(c, out[0]);
    case OP_MAX_POOL2D: case OP_AVG_POOL2D: case OP_ADAPTIVE_AVG_POOL2D: case OP_MAX_POOL2D_BACKWARD:
    case OP_AVG_POOL2D_BACKWARD: case OP_ADAPTIVE_AVG_POOL2D_BACKWARD: return gpu_run_pool(c, out[0]);
    case OP_SOFTPLUS: return gpu_run_softplus(c, out[0]);
    case OP_LAYER_NORM: case OP_RMS_NORM: case OP_GROUP_NORM: case OP_BATCH_NORM: return gpu_run_norm(c, out[0]);
    case OP_CROSS_ENTROPY: return gpu_run_xent(c, out[0]);
    case OP_GATHER: case OP_SCATTER: return gpu_run_gather_axis(c, out[0]);
    case OP_MASKED_FILL: return gpu_run_masked_fill(c, out[0]);
    default: op_failk(ERRK_DEVICE, "%s() is not supported on device 'gpu'", d->name); return -1;
    }
}

const DeviceImpl gpu_device = {
    .name = "gpu",
    .start = gpu_start,
    .mallocs = gpu_device_mallocs,
    .supports_op = gpu_supports_op,
    .alloc = gpu_alloc,
    .run = gpu_run,
    .allocates = gpu_allocates,
    .synchronize = gpu_synchronize,
    .release = gpu_release,
    .to_host = gpu_to_host,
    .from_host = gpu_from_host,
    .clone = gpu_clone,
    .fused_run = gpu_fused_run, .copy_into = gpu_copy_into,   /* the static VM's (gpu.h) */
    .capture_begin = gpu_capture_begin, .capture_end = gpu_capture_end,
    .graph_launch = gpu_graph_launch, .graph_free = gpu_graph_free,
};
