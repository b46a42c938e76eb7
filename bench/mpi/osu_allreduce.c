/* bench/mpi/osu_allreduce.c - the MPI library's own loop, in the style of OSU's
 * osu_allreduce: MPI_Allreduce (MPI_SUM of floats) and, for comparison with what TSL does
 * (gather, then add in rank order), MPI_Allgather of the same bytes; sizes 1 to 64 MB, one
 * warm-up and REPS timed calls each, barrier before each. Rank 0 prints
 * "SIZE_MB ALLREDUCE_MS ALLREDUCE_MBS ALLGATHER_MS ALLGATHER_MBS" (medians).
 * Built and run by bench/mpi/run.sh: mpicc -O2 osu_allreduce.c. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_ms(double *t, int n) {
    qsort(t, (size_t)n, sizeof *t, cmp);
    return t[n / 2] * 1000;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size, reps = argc > 1 ? atoi(argv[1]) : 10;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int mb = 1; mb <= 64; mb *= 2) {
        int n = mb * 1024 * 1024 / 4;
        float *in = malloc(sizeof(float) * (size_t)n), *out = malloc(sizeof(float) * (size_t)n * (size_t)size);
        for (int i = 0; i < n; i++) in[i] = (float)(rank + 1);
        double ms[2];
        for (int which = 0; which < 2; which++) {
            for (int k = -1; k < reps; k++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                if (which == 0) MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                else MPI_Allgather(in, n, MPI_FLOAT, out, n, MPI_FLOAT, MPI_COMM_WORLD);
                if (k >= 0) t[k] = MPI_Wtime() - t0;
            }
            ms[which] = median_ms(t, reps);
        }
        if (rank == 0) printf("%d %.3f %.1f %.3f %.1f\n", mb, ms[0], mb / (ms[0] / 1000), ms[1], mb / (ms[1] / 1000));
        free(in);
        free(out);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
