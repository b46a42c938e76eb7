/* fuzz_graph.c - the graph file loader (vm/file/load.c) on arbitrary bytes, checksum off so the
 * verifier sees every mutation: a file it accepts runs once on zeros under an op budget and
 * small tensor limits. An error is fine; a crash, leak, hang or sanitizer report is a bug. */
#include <stdint.h>
#include <stdlib.h>
#include "ctx.h"
#include "graphfile.h"
#include "model.h"

static void run_once(Model *m) {
    int nin = model_num_inputs(m), nout = model_num_outputs(m);
    Tensor **in = calloc((size_t)nin + 1, sizeof(Tensor *)), **out = calloc((size_t)nout + 1, sizeof(Tensor *));
    bool ok = true;
    for (int i = 0; i < nin && ok; i++) {
        DType dt;
        Shape s;
        model_input_info(m, i, &dt, &s, NULL);
        for (int a = 0; a < s.ndim; a++)   /* an axis exported to take any size (dynamic=): 2 */
            if (s.d[a] == SHAPE_RT) s.d[a] = 2;
        ok = (in[i] = tensor_zeros(dt, &s)) != NULL;
    }
    ModelSession *sess = ok ? model_session_new(m) : NULL;
    if (sess) {
        char err[512];
        model_session_set_limits(sess, 2000, 1 << 22);
        if (model_run(sess, in, nin, out, err, sizeof err) == 0)
            for (int i = 0; i < nout; i++) tensor_release(out[i]);
        model_session_free(sess);
    }
    for (int i = 0; i < nin; i++) tensor_release(in[i]);
    free(in);
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ops_ctx()->max_tensor_bytes = 1 << 22;   /* this thread's default ops context */
    char err[512];
    Source src = { (char *)"<fuzz>", NULL, NULL, 0, 0, NULL };
    GraphFile *gf = graphfile_read(data, size, &src, false, err, sizeof err);
    if (!gf) return 0;
    Model *m = model_from_graphfile(gf, "<fuzz>");
    run_once(m);
    model_free(m);
    return 0;
}
