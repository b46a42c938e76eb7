/* deploy.c - classifies the rows of a .npy file with an exported graph, through libtsl alone
 * (no TSL source, no interpreter session: the graph file holds the program and its weights).
 * Usage: deploy MODEL.tslg ROWS.npy   (rows: f32 [N, 64], N a multiple of the model's batch)
 * Prints "row I: CLASS" for each row. */
#include <stdio.h>
#include <string.h>
#include "tsl.h"

int main(int argc, char **argv) {
    if (argc != 3) { fputs("usage: deploy MODEL.tslg ROWS.npy\n", stderr); return 2; }
    tsl_State *S;   /* only for the messages of loading; running needs a session alone */
    tsl_Model *model = NULL;
    tsl_Tensor *rows = NULL;
    if (tsl_new(NULL, NULL, &S) != TSL_OK) return 1;
    int rc = 1;
    if (tsl_model_load(S, argv[1], &model) != TSL_OK || tsl_npy_read(S, argv[2], &rows) != TSL_OK) {
        fprintf(stderr, "deploy: %s\n", tsl_error_message(S));
        goto done;
    }
    int64_t in_shape[TSL_MAX_DIMS], batch, width = tsl_tensor_dim(rows, 1), n = tsl_tensor_dim(rows, 0);
    tsl_model_input(model, 0, NULL, NULL, in_shape, NULL);
    batch = in_shape[0];
    if (tsl_tensor_ndim(rows) != 2 || width != in_shape[1] || n % batch) {
        fprintf(stderr, "deploy: the rows must be [N, %lld] with N a multiple of %lld\n", (long long)in_shape[1], (long long)batch);
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
        tsl_tensor_new(S, TSL_F32, 2, (int64_t[]){ batch, width }, data + start * width, &in);
        if (tsl_session_run(session, &in, 1, &scores, 1) != TSL_OK) {
            fprintf(stderr, "deploy: %s\n", tsl_session_error(session));
            rc = 1;
        } else {
            const float *s = tsl_tensor_data(scores);
            int64_t classes = tsl_tensor_dim(scores, 1);
            for (int64_t r = 0; r < batch; r++) {
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
