// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_shmwake - a message through shared memory to a rank that sleeps on PME's device.
 *
 * usage: pme_shmwake ROUNDS GAP_US
 * Ranks 0 and 1 share a node. Each round, rank 1 leaves MPI alone for GAP_US (so that
 * rank 0, waiting in MPI_Recv, goes to sleep), then sends rank 0 the round's number and
 * the time of sending (CLOCK_MONOTONIC, one clock for the node), and waits for rank 0's
 * answer. Rank 0 checks the round's number and notes how long the message took to be
 * received. At the end every rank prints "rank R: ok rings=N wakeups=M" (the MPI_T
 * counters pme_shm_rings and pme_shm_wakeups, or -1 where the library has none) and
 * rank 0 prints "latency_us median=X p90=Y" over the rounds. Other ranks only take part
 * in the last barrier. A wrong message prints "rank R: bad ..." and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pme_pvar.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void pause_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    while (nanosleep(&ts, &ts))
        ;
}

/* The value of the MPI_T counter `name`, or -1 if there is none. */
static long long counter(const char *name)
{
    unsigned long long v = 0;
    return pme_pvar_read(name, &v, sizeof(v)) ? (long long) v : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: pme_shmwake ROUNDS GAP_US (2 or more ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rounds = atoi(argv[1]);
    long gap_us = atol(argv[2]);
    double *lat = calloc((size_t) rounds + 1, sizeof(double));
    int bad = 0;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int r = 0; r < rounds && rank < 2; r++) {
        double msg[2];
        if (rank == 1) {
            pause_us(gap_us);
            msg[0] = r;
            msg[1] = now_us();
            MPI_Send(msg, 2, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
            MPI_Recv(msg, 2, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (msg[0] != r + 0.5)
                bad = 1;
        } else {
            MPI_Recv(msg, 2, MPI_DOUBLE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            lat[r] = now_us() - msg[1];
            if (msg[0] != r)
                bad = 1;
            msg[0] = r + 0.5;
            MPI_Send(msg, 2, MPI_DOUBLE, 1, 8, MPI_COMM_WORLD);
        }
        if (bad) {
            printf("rank %d: bad message in round %d\n", rank, r);
            fflush(stdout);
            exit(1);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d: ok rings=%lld wakeups=%lld\n", rank, counter("pme_shm_rings"),
           counter("pme_shm_wakeups"));
    if (rank == 0 && rounds > 0) {
        qsort(lat, (size_t) rounds, sizeof(double), cmp_double);
        printf("latency_us median=%.1f p90=%.1f\n", lat[rounds / 2], lat[rounds * 9 / 10]);
    }
    fflush(stdout);
    free(lat);
    MPI_Finalize();
    MPI_T_finalize();
    return 0;
}
