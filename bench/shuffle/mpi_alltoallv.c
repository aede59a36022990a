/*
 * mpi_alltoallv.c — the MPI baseline of bench/shuffle: MPI_Alltoallv of
 * --mb MB per rank (split evenly over all ranks), in rounds of --msg-kb per
 * destination so that buffers stay the size of the multiplexer's pool.
 * Built and run by run.sh only when OpenMPI (mpicc, mpirun) is installed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    double mb = 256;
    long chunk = 512 << 10;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mb")) mb = atof(argv[i + 1]);
        if (!strcmp(argv[i], "--msg-kb")) chunk = atol(argv[i + 1]) << 10;
    }
    long per_peer = (long)(mb * 1048576.0 / n);
    long rounds = (per_peer + chunk - 1) / chunk;
    char *sbuf = calloc((size_t)n, (size_t)chunk), *rbuf = malloc((size_t)n * (size_t)chunk);
    int *counts = malloc(sizeof(int) * (size_t)n), *displs = malloc(sizeof(int) * (size_t)n);
    for (int j = 0; j < n; j++) {
        counts[j] = (int)chunk;
        displs[j] = (int)(j * chunk);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long r = 0; r < rounds; r++)
        MPI_Alltoallv(sbuf, counts, displs, MPI_BYTE, rbuf, counts, displs, MPI_BYTE,
                      MPI_COMM_WORLD);
    double secs = MPI_Wtime() - t0, max;
    MPI_Reduce(&secs, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi: %d ranks, %ld rounds of %ld bytes per pair in %.3f s\n", n, rounds, chunk,
               max);
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
    MPI_Finalize();
    return 0;
}
