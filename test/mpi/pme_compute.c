// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_compute - a rank that computes for a long time without calling MPI must not be
 * taken for dead by its peers (PME's liveness helper answers for it).
 *
 * usage: pme_compute SECONDS
 * After a barrier, rank 0 computes for SECONDS without any MPI call, while every other
 * rank sends it an eager message and a rendezvous one (1 MiB) and then waits in
 * MPI_Recv for rank 0's answer and in MPI_Barrier. Then rank 0 receives and checks
 * everything and answers. Every rank prints "rank R: ok" when all its data was right;
 * an MPI error is printed as "rank R: MPI error: ..." and the rank exits 1
 * (MPI_ERRORS_RETURN).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG (1 << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(int rc, int rank, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: MPI error in %s: %s\n", rank, what, msg);
    fflush(stdout);
    exit(1);
}

static unsigned char pattern(int rank, int i)
{
    return (unsigned char)(rank * 31 + i * 7);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    double secs = argc > 1 ? atof(argv[1]) : 10;
    unsigned char *big = malloc(BIG);
    int ok = 1;
    check(MPI_Barrier(MPI_COMM_WORLD), rank, "the first barrier");
    if (rank == 0) {
        /* Compute: no MPI call at all for `secs`. */
        double end = now_s() + secs;
        volatile double x = 1;
        while (now_s() < end)
            for (int i = 0; i < 100000; i++)
                x = x * 1.0000001 + 1e-9;
        for (int src = 1; src < size; src++) {
            int small;
            check(MPI_Recv(&small, 1, MPI_INT, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE), 0,
                  "receiving the eager message");
            check(MPI_Recv(big, BIG, MPI_BYTE, src, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE), 0,
                  "receiving the rendezvous message");
            ok &= small == src * 1000;
            for (int i = 0; i < BIG; i += 4093)
                ok &= big[i] == pattern(src, i);
            int answer = src + 7;
            check(MPI_Send(&answer, 1, MPI_INT, src, 3, MPI_COMM_WORLD), 0, "answering");
        }
    } else {
        int small = rank * 1000, answer = 0;
        for (int i = 0; i < BIG; i++)
            big[i] = pattern(rank, i);
        MPI_Request req[2];
        check(MPI_Isend(&small, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, &req[0]), rank, "eager send");
        check(MPI_Isend(big, BIG, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &req[1]), rank, "rendezvous send");
        check(MPI_Recv(&answer, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE), rank,
              "waiting for rank 0");
        MPI_Status st[2];
        check(MPI_Waitall(2, req, st), rank, "completing the sends");
        ok &= answer == rank + 7;
    }
    check(MPI_Barrier(MPI_COMM_WORLD), rank, "the last barrier");
    printf("rank %d: %s\n", rank, ok ? "ok" : "WRONG DATA");
    free(big);
    MPI_Finalize();
    return ok ? 0 : 1;
}
