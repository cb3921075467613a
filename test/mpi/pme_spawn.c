// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_spawn - dynamic processes over ch4:pme: MPI_Comm_spawn, and communication
 * between the parents and the spawned children.
 *
 * usage: mpiexec -n P pme_spawn [CHILDREN]   (default 2 children)
 * The parents spawn CHILDREN copies of this program, which see MPI_Comm_get_parent.
 * Over the intercommunicator: every parent sends its rank to every child, the children
 * answer with rank*1000 + parent rank, and both sides run an MPI_Allreduce across the
 * intercommunicator and merge it into an intracommunicator for an MPI_Bcast. Each side
 * checks what it got; rank 0 of the parents prints "pme_spawn: OK" or the errors.
 * Exit status 0 when everything arrived as expected.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Comm parent, inter, merged;
    int rank, size, rsize, errs = 0;
    char host[256];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof(host));
    host[255] = 0;
    MPI_Comm_get_parent(&parent);
    int is_child = parent != MPI_COMM_NULL;

    if (!is_child) {
        int nchildren = argc > 1 ? atoi(argv[1]) : 2;
        int *codes = malloc(sizeof(int) * (size_t) nchildren);
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, nchildren, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                       &inter, codes);
        for (int i = 0; i < nchildren; i++)
            if (codes[i] != MPI_SUCCESS)
                errs++;
        free(codes);
    } else {
        inter = parent;
    }
    MPI_Comm_remote_size(inter, &rsize);

    /* point to point across the intercommunicator */
    if (!is_child) {
        for (int c = 0; c < rsize; c++)
            MPI_Send(&rank, 1, MPI_INT, c, 1, inter);
        for (int c = 0; c < rsize; c++) {
            int v;
            MPI_Recv(&v, 1, MPI_INT, c, 2, inter, MPI_STATUS_IGNORE);
            if (v != c * 1000 + rank)
                errs++;
        }
    } else {
        for (int p = 0; p < rsize; p++) {
            int v, w;
            MPI_Recv(&v, 1, MPI_INT, p, 1, inter, MPI_STATUS_IGNORE);
            if (v != p)
                errs++;
            w = rank * 1000 + p;
            MPI_Send(&w, 1, MPI_INT, p, 2, inter);
        }
    }

    /* a collective across the intercommunicator: each side gets the other's sum */
    int mine = is_child ? 100 + rank : rank, other = 0, expect = 0;
    MPI_Allreduce(&mine, &other, 1, MPI_INT, MPI_SUM, inter);
    for (int i = 0; i < rsize; i++)
        expect += is_child ? i : 100 + i;
    if (other != expect)
        errs++;

    /* merged: parents first */
    MPI_Intercomm_merge(inter, is_child, &merged);
    int msize, mrank, token = 0;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    if (mrank == 0)
        token = 4242;
    MPI_Bcast(&token, 1, MPI_INT, 0, merged);
    if (token != 4242 || msize != size + rsize)
        errs++;

    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, merged);
    printf("pme_spawn: %s %d of %d on %s: %s\n", is_child ? "child" : "parent", rank, size,
           host, errs ? "ERRORS" : "ok");
    fflush(stdout);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
    if (!is_child && rank == 0)
        printf(total ? "pme_spawn: FAILED\n" : "pme_spawn: OK\n");
    MPI_Finalize();
    return total ? 1 : 0;
}
