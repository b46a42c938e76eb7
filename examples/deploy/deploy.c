/* deploy.c - classifies the rows of a .npy file with an exported graph, through libtsl alone
 * (no TSL source, no interpreter session: the graph file holds the program and its weights).
 * Usage: deploy MODEL.tslg ROWS.npy [BATCH]   (rows: f32 [N, 64])
 * Runs the rows BATCH at a time (the last batch may be smaller), all at once without BATCH,
 * when the model was exported with a symbolic batch (its input's axis 0 is -1: any size); a
 * model exported for a fixed batch takes N a multiple of it. Prints "row I: CLASS" for each row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tsl.h"

int main(int argc, char **argv) {
    if (argc != 3 && argc != 4) { fputs("usage: deploy MODEL.tslg ROWS.npy [BATCH]\n", stderr); return 2; }
    tsl_State *S;   /* only for the messages of loading; running needs a session alone */
    tsl_Model *model = NULL;
    tsl_Tensor *rows = NULL;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) return 1;
    int rc = 1;
    if (tsl_model_load(S, argv[1], &model) != TSL_OK || tsl_npy_read(S, argv[2], &rows) != TSL_OK) {
        fprintf(stderr, "deploy: %s\n", tsl_error_message(S));
        goto done;
    }
    int64_t in_shape[TSL_MAX_DIMS], width = tsl_tensor_dim(rows, 1), n = tsl_tensor_dim(rows, 0);
    tsl_model_input(model, 0, NULL, NULL, in_shape, NULL);
    int64_t fixed = in_shape[0];   /* -1: a symbolic batch, any number of rows a run */
    int64_t batch = argc == 4 ? strtoll(argv[3], NULL, 10) : fixed >= 0 ? fixed : n > 0 ? n : 1;
    if (batch < 1 || (fixed >= 0 && batch != fixed)) {
        fprintf(stderr, "deploy: the model runs batches of %lld rows\n", (long long)fixed);
        goto done;
    }
    if (tsl_tensor_ndim(rows) != 2 || width != in_shape[1] || (fixed >= 0 && n % fixed)) {
        fprintf(stderr, "deploy: the rows must be [N, %lld]%s\n", (long long)in_shape[1],
                fixed >= 0 ? " with N a multiple of the model's batch" : "");
        goto done;
    }
    tsl_Session *session;
    if (tsl_session_new(model, &session) != TSL_OK) {
        fputs("deploy: cannot start a session (out of memory)\n", stderr);
        goto done;
    }
    const float *data = tsl_tensor_data(rows);
    rc = 0;
    for (int64_t start = 0; start < n && rc == 0; start += batch) {
        tsl_Tensor *in = NULL, *scores = NULL;
        int64_t count = n - start < batch ? n - start : batch;
        tsl_tensor_new(S, TSL_F32, 2, (int64_t[]){ count, width }, data + start * width, &in);
        if (tsl_session_run(session, &in, 1, &scores, 1) != TSL_OK) {
            fprintf(stderr, "deploy: %s\n", tsl_session_error(session));
            rc = 1;
        } else {
            const float *s = tsl_tensor_data(scores);
            int64_t classes = tsl_tensor_dim(scores, 1);
            for (int64_t r = 0; r < count; r++) {
                int64_t best = 0;
                for (int64_t c = 1; c < classes; c++)
                    if (s[r * classes + c] > s[r * classes + best]) best = c;
                printf("row %lld: %lld\n", (long long)(start + r), (long long)best);
            }
        }
        tsl_tensor_free(scores);
        tsl_tensor_free(in);
    }
    tsl_session_free(session);
done:
    tsl_tensor_free(rows);
    tsl_model_free(model);
    tsl_free(S);
    return rc;
}
