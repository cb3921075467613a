// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_whoami - every rank says where it runs and what carried its messages.
 *
 * Each rank prints its host name, the MPI library's device (from
 * MPI_Get_library_version), the PME interface in use and how many messages PME sent
 * and received for it during a ring exchange and an allreduce (MPI_T performance
 * variables pme_iface, pme_tx_msgs and pme_rx_msgs of ch4:pme). Under another MPI
 * library the PME part says "n/a".
 *
 * Exit status 0 when every rank got the right data; with --expect-pme, also only
 * when every rank that has a peer on another host sent or received PME messages (in the
 * ring every rank talks to a neighbour on another host unless all ranks share one).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int find_pvar(const char *name)
{
    int n, i;
    MPI_T_pvar_get_num(&n);
    for (i = 0; i < n; i++) {
        char nm[256], desc[1024];
        int nlen = sizeof(nm), dlen = sizeof(desc), verb, cls, bind, ro, cont, atomic;
        MPI_Datatype dt;
        MPI_T_enum en;
        if (MPI_T_pvar_get_info(i, nm, &nlen, &verb, &cls, &dt, &en, desc, &dlen, &bind, &ro,
                                &cont, &atomic) == MPI_SUCCESS && !strcmp(nm, name))
            return i;
    }
    return -1;
}

int main(int argc, char **argv)
{
    int rank, size, provided, expect_pme = 0;
    char host[256], lib[MPI_MAX_LIBRARY_VERSION_STRING], device[128] = "unknown";
    char iface[256] = "n/a";
    int liblen;

    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--expect-pme"))
            expect_pme = 1;

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof(host));
    host[sizeof(host) - 1] = 0;

    MPI_Get_library_version(lib, &liblen);
    char *d = strstr(lib, "Device:");
    if (d) {
        d += strlen("Device:");
        while (*d == ' ' || *d == '\t')
            d++;
        size_t n = strcspn(d, "\n");
        snprintf(device, sizeof(device), "%.*s", (int) n, d);
    } else {
        snprintf(device, sizeof(device), "%.*s", (int) strcspn(lib, "\n"), lib);
    }

    MPI_T_pvar_session session;
    MPI_T_pvar_session_create(&session);

    /* The interface PME uses. */
    int pif = find_pvar("pme_iface"), count;
    if (pif >= 0) {
        MPI_T_pvar_handle h;
        if (MPI_T_pvar_handle_alloc(session, pif, NULL, &h, &count) == MPI_SUCCESS) {
            char buf[4096] = "";
            if (count < (int) sizeof(buf) && MPI_T_pvar_read(session, h, buf) == MPI_SUCCESS &&
                buf[0])
                snprintf(iface, sizeof(iface), "%s", buf);
            MPI_T_pvar_handle_free(session, &h);
        }
    }

    /* PME's message counters, counting from here. */
    MPI_T_pvar_handle htx = MPI_T_PVAR_HANDLE_NULL, hrx = MPI_T_PVAR_HANDLE_NULL;
    int ptx = find_pvar("pme_tx_msgs"), prx = find_pvar("pme_rx_msgs");
    if (ptx >= 0 && prx >= 0) {
        MPI_T_pvar_handle_alloc(session, ptx, NULL, &htx, &count);
        MPI_T_pvar_handle_alloc(session, prx, NULL, &hrx, &count);
    }

    /* A ring exchange and an allreduce, checked. */
    int errors = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[1024], in[1024];
    for (int i = 0; i < 1024; i++)
        out[i] = rank * 1024 + i;
    MPI_Sendrecv(out, 1024, MPI_INT, right, 7, in, 1024, MPI_INT, left, 7, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < 1024; i++)
        if (in[i] != left * 1024 + i)
            errors++;
    long sum = 0, mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != (long) size * (size + 1) / 2)
        errors++;

    unsigned long long tx = 0, rx = 0;
    int have_counts = 0;
    if (htx != MPI_T_PVAR_HANDLE_NULL) {
        MPI_T_pvar_read(session, htx, &tx);
        MPI_T_pvar_read(session, hrx, &rx);
        have_counts = 1;
    }

    /* Does this rank have a peer on another host? */
    char (*hosts)[256] = malloc((size_t) size * 256);
    MPI_Allgather(host, 256, MPI_CHAR, hosts, 256, MPI_CHAR, MPI_COMM_WORLD);
    int offnode = 0;
    for (int i = 0; i < size; i++)
        if (strcmp(hosts[i], host))
            offnode = 1;
    free(hosts);

    char line[1024];
    if (have_counts)
        snprintf(line, sizeof(line),
                 "rank %d of %d on %s: MPI device %s, PME interface %s, PME carried %llu "
                 "messages out and %llu in%s\n", rank, size, host, device, iface, tx, rx,
                 errors ? " -- DATA ERRORS" : "");
    else
        snprintf(line, sizeof(line), "rank %d of %d on %s: MPI device %s, PME n/a%s\n", rank,
                 size, host, device, errors ? " -- DATA ERRORS" : "");

    /* Print in rank order. */
    char *all = rank == 0 ? malloc((size_t) size * sizeof(line)) : NULL;
    MPI_Gather(line, sizeof(line), MPI_CHAR, all, sizeof(line), MPI_CHAR, 0, MPI_COMM_WORLD);
    int bad = errors || (expect_pme && offnode && (!have_counts || tx + rx == 0));
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < size; i++)
            fputs(all + (size_t) i * sizeof(line), stdout);
        printf(anybad ? "pme_whoami: FAILED\n" : "pme_whoami: OK\n");
        fflush(stdout);
        free(all);
    }
    if (htx != MPI_T_PVAR_HANDLE_NULL) {
        MPI_T_pvar_handle_free(session, &htx);
        MPI_T_pvar_handle_free(session, &hrx);
    }
    MPI_T_pvar_session_free(&session);
    MPI_Finalize();
    MPI_T_finalize();
    return anybad ? 1 : 0;
}
