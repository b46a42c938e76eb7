/* model.h - exported graphs (spec section 9): export to a file, load with the verifier, run.
 *
 * A Model is a loaded graph file: the program (instructions, registers, constants, the
 * argument signature) and nothing else. It is immutable once loaded, so several threads may
 * run it at once, each through its own ModelSession (registers, buffers, RNG, error text).
 * The file format is docs/format.md; vm/file/export.c writes it, vm/file/load.c reads and verifies it. */
#ifndef TSL_MODEL_H
#define TSL_MODEL_H
#include <stddef.h>
#include <stdint.h>
#include "tensor.h"

typedef struct Model Model;
typedef struct ModelSession ModelSession;

/* Reads and verifies a graph file image (data is copied; the caller keeps it). `name` labels
 * error locations (the model's path). NULL with the reason in err on any problem. */
Model *model_load_bytes(const void *data, size_t n, const char *name, char *err, size_t errlen);
Model *model_load_file(const char *path, char *err, size_t errlen);
void model_free(Model *m);

/* The signature, flattened: inputs are the tensors and numbers of the arguments in argument
 * order (lists and dicts walked in order); a number input is passed as a 0-d tensor. Outputs
 * are the leaves of the result, numbers as 0-d f64 tensors. name: "x" or "params.w[2]". */
int model_num_inputs(const Model *m);
void model_input_info(const Model *m, int i, DType *dt, Shape *s, const char **name);
int model_num_outputs(const Model *m);
void model_output_info(const Model *m, int i, DType *dt, Shape *s);
/* The signature as text (borrowed from m), the one printer of help(g) and `tsl run MODEL
 * --help`: "f(x, m)", a line of counts, then "  input 1: x: f32[2, 4]" and "  output 1: ..."
 * lines (a number input or output is "number"). */
const char *model_signature(const Model *m);

/* NULL when the copies of the model's constants cannot be made (memory limits). */
ModelSession *model_session_new(const Model *m);
/* Limits of the session's runs, as --max-ops (backward jumps; 0: none) and
 * --max-tensor-bytes (0: the default, 1 GiB) give them. */
void model_session_set_limits(ModelSession *s, int64_t max_ops, int64_t max_tensor_bytes);
void model_session_free(ModelSession *s);
/* The session's own interpreter: its options (limits) and its interrupt flags, which a signal
 * handler or another thread may raise while a run is under way (interp_interrupt). */
struct Interp *model_session_interp(ModelSession *s);
/* Runs the model: in[nin] borrowed, out[model_num_outputs] receives new references.
 * 0, or -1 with the message (naming the argument for a wrong shape or dtype) in err, or
 * MODEL_INTERRUPTED when an interrupt stopped it (err: "MODEL:L:C: interrupted"). */
#define MODEL_INTERRUPTED (-2)
int model_run(ModelSession *s, Tensor *const *in, int nin, Tensor **out, char *err, size_t errlen);

#endif
