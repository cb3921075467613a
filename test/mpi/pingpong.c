// SPDX-License-Identifier: BSD-3-Clause
/*
 * pingpong - round trips between rank 0 and the last rank, with checked data.
 *
 * usage: pingpong [-n ITERS] [-max BYTES] [-announce]
 * Rank 0 and rank size-1 (on different nodes when ranks fill nodes in order) bounce
 * messages of 0, 1, 2, 4 ... max bytes (default 4 MiB); other ranks wait in a barrier.
 * Prints, per size, the half round-trip time in microseconds and the bandwidth in MB/s.
 * Every message is filled with a pattern that depends on size and iteration and is
 * checked on arrival: exit status 1 on any mismatch.
 * -announce: rank 0 also prints "pingpong: timing N bytes" once every rank has reached
 * the barrier before size N, so a test knows the two ranks are alone on the wire.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (unsigned char) (seed * 131u + i * 7u + (i >> 8));
}

static size_t check(const unsigned char *b, size_t n, unsigned seed)
{
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (b[i] != (unsigned char) (seed * 131u + i * 7u + (i >> 8)))
            bad++;
    return bad;
}

int main(int argc, char **argv)
{
    int rank, size, iters = 200, announce = 0;
    size_t max = 4u << 20;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-announce"))
            announce = 1;
        else if (i + 1 == argc)
            break;
        else if (!strcmp(argv[i], "-n"))
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-max"))
            max = strtoull(argv[++i], NULL, 0);
    }
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong: needs at least 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int peer = rank == 0 ? size - 1 : 0;
    int active = rank == 0 || rank == size - 1;
    unsigned char *sbuf = malloc(max ? max : 1), *rbuf = malloc(max ? max : 1);
    char host[256], peerhost[256];
    gethostname(host, sizeof(host));
    host[255] = 0;
    if (rank == 0)
        MPI_Recv(peerhost, 256, MPI_CHAR, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else if (rank == size - 1)
        MPI_Send(host, 256, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pingpong: rank 0 on %s <-> rank %d on %s, %d round trips per size\n"
               "%10s %12s %12s\n", host, size - 1, peerhost, iters, "bytes", "usec", "MB/s");
    if (rank == 0)
        fflush(stdout); /* tests wait for this line to know the job is under way */

    long errors = 0;
    for (size_t len = 0; len <= max; len = len ? len * 2 : 1) {
        int n = len >= (1u << 20) ? (iters > 20 ? 20 : iters) : iters;
        MPI_Barrier(MPI_COMM_WORLD);
        if (!active)
            continue;
        if (announce && rank == 0) {
            printf("pingpong: timing %zu bytes\n", len);
            fflush(stdout);
        }
        double t0 = 0;
        for (int it = -2; it < n; it++) {     /* two warm-up rounds */
            if (it == 0)
                t0 = MPI_Wtime();
            unsigned seed = (unsigned) (len * 31 + (size_t) (it + 2));
            if (rank == 0) {
                fill(sbuf, len, seed);
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                errors += (long) check(rbuf, len, seed + 1);
            } else {
                MPI_Status st;
                int got;
                MPI_Recv(rbuf, (int) len, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &st);
                MPI_Get_count(&st, MPI_BYTE, &got);
                if ((size_t) got != len)
                    errors++;
                errors += (long) check(rbuf, len, seed);
                fill(sbuf, len, seed + 1);
                MPI_Send(sbuf, (int) len, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
            }
        }
        double dt = MPI_Wtime() - t0;
        if (rank == 0) {
            double half_us = dt / n / 2 * 1e6;
            printf("%10zu %12.2f %12.1f\n", len, half_us, len ? len / half_us : 0.0);
            fflush(stdout);
        }
        if (len == max)
            break;
    }
    long total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "pingpong: FAILED (%ld bad bytes)\n" : "pingpong: OK\n", total);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return total ? 1 : 0;
}
