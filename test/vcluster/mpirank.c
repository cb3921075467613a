// SPDX-License-Identifier: BSD-3-Clause
/* mpirank - each MPI rank reports where it runs, for the vcluster mpiexec test.
 *
 * Every rank learns every other rank's hostname and network namespace (an allgather, so
 * ranks on different virtual nodes must talk), checks that ranks share a hostname exactly
 * when they share a namespace, moves 1 MiB through an allreduce (so the data network
 * carries real traffic), and prints one line:
 *   rank R size N host H netns net:[ID] sum ok|bad consistent yes|no
 * then "finalizing R" before MPI_Finalize and "finalized R" after it.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LEN 64
#define COUNT (1 << 17) /* doubles: 1 MiB */

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    char host[LEN] = "", ns[LEN] = "";
    gethostname(host, sizeof host - 1);
    ssize_t l = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    if (l > 0)
        ns[l] = 0;

    char *hosts = calloc((size_t)size, LEN), *nss = calloc((size_t)size, LEN);
    MPI_Allgather(host, LEN, MPI_CHAR, hosts, LEN, MPI_CHAR, MPI_COMM_WORLD);
    MPI_Allgather(ns, LEN, MPI_CHAR, nss, LEN, MPI_CHAR, MPI_COMM_WORLD);
    int consistent = 1;
    for (int i = 0; i < size; i++)
        for (int j = 0; j < size; j++)
            if (!strcmp(hosts + i * LEN, hosts + j * LEN) != !strcmp(nss + i * LEN, nss + j * LEN))
                consistent = 0;

    double *buf = malloc(COUNT * sizeof(double));
    for (int i = 0; i < COUNT; i++)
        buf[i] = rank;
    MPI_Allreduce(MPI_IN_PLACE, buf, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    int sum_ok = 1;
    for (int i = 0; i < COUNT; i++)
        if (buf[i] != (double)size * (size - 1) / 2)
            sum_ok = 0;

    printf("rank %d size %d host %s netns %s sum %s consistent %s\n", rank, size, host, ns,
           sum_ok ? "ok" : "bad", consistent ? "yes" : "no");
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("finalizing %d\n", rank);
    fflush(stdout);
    MPI_Finalize();
    printf("finalized %d\n", rank);
    free(buf);
    free(hosts);
    free(nss);
    return 0;
}
