// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_peerdeath - one rank dies; the others must get an MPI error, not hang.
 *
 * usage: pme_peerdeath VICTIM [ROUNDS_BEFORE_DEATH [BYTES]]
 * Every rank exchanges a message of BYTES (default 4) with every other rank each round
 * (MPI_ERRORS_RETURN on MPI_COMM_WORLD). After ROUNDS_BEFORE_DEATH rounds (default 20) rank VICTIM kills
 * itself with SIGKILL. Each survivor prints
 *   "rank R: MPI error after T ms: <MPI error string>"
 * as soon as an MPI call fails, and exits with status 0 without MPI_Finalize. A survivor
 * that completes 100000 more rounds without an error prints "rank R: no error" and exits 1.
 * Run it with hydra's -disable-auto-cleanup so that survivors are not killed by mpiexec.
 *
 * A survivor learns of the death only through something the victim owes it. Eager
 * messages the victim acknowledged before it died leave nothing owed, and a survivor
 * that then only waits to receive cannot tell a dead peer from one that computes.
 * Messages above PME's eager threshold (PME_EAGER_MAX, 68 KiB) go by rendezvous: the
 * victim never answers the offer of the round it dies in, so every survivor has an open
 * rendezvous with it and finds it dead after PME_PEER_TIMEOUT_MS.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return tv.tv_sec * 1e3 + tv.tv_usec / 1e3;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int victim = argc > 1 ? atoi(argv[1]) : size - 1;
    int before = argc > 2 ? atoi(argv[2]) : 20;

    int bytes = argc > 3 ? atoi(argv[3]) : 4;
    if (bytes < 4)
        bytes = 4;
    int count = bytes / (int) sizeof(int);
    int *out = calloc((size_t) size * (size_t) count, sizeof(int));
    int *in = calloc((size_t) size * (size_t) count, sizeof(int));
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t) size);
    MPI_Status *st = malloc(sizeof(MPI_Status) * 2 * (size_t) size);
    double death = 0;
    for (int round = 0; round < before + 100000; round++) {
        if (round == before) {
            if (rank == victim) {
                fflush(stdout);
                kill(getpid(), SIGKILL);
            }
            death = now_ms();
        }
        int n = 0, err = MPI_SUCCESS;
        for (int p = 0; p < size && err == MPI_SUCCESS; p++) {
            if (p == rank)
                continue;
            out[(size_t) p * count] = round;
            err = MPI_Irecv(&in[(size_t) p * count], count, MPI_INT, p, round & 0x7fff,
                            MPI_COMM_WORLD, &req[n++]);
            if (err == MPI_SUCCESS)
                err = MPI_Isend(&out[(size_t) p * count], count, MPI_INT, p, round & 0x7fff,
                                MPI_COMM_WORLD, &req[n++]);
        }
        if (err == MPI_SUCCESS)
            err = MPI_Waitall(n, req, st);
        if (err == MPI_ERR_IN_STATUS) {
            for (int i = 0; i < n; i++)
                if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING) {
                    err = st[i].MPI_ERROR;
                    break;
                }
        }
        if (err != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len, cls;
            MPI_Error_string(err, msg, &len);
            MPI_Error_class(err, &cls);
            for (char *c = msg; *c; c++)
                if (*c == '\n')
                    *c = ' ';
            printf("rank %d: MPI error after %.0f ms (class %d): %s\n", rank,
                   death ? now_ms() - death : -1.0, cls, msg);
            fflush(stdout);
            _exit(0);
        }
    }
    printf("rank %d: no error\n", rank);
    fflush(stdout);
    _exit(1);
}
