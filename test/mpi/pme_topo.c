// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_topo - how far apart the neighbours of a virtual topology are on the node mesh,
 * with reorder and without.
 *
 *   pme_topo [--print] [--one-hop] KIND SHAPE
 *
 * KIND is cart (MPI_Cart_create), graph (MPI_Graph_create), dist
 * (MPI_Dist_graph_create, each process giving its own edges) or adjacent
 * (MPI_Dist_graph_create_adjacent); SHAPE a periodic grid, e.g. 4x4 or 2x2x2 or 8,
 * whose vertex v is rank v of MPI_COMM_WORLD (row-major, the last dimension fastest).
 *
 * Every rank reads where its node sits from the MPI_T performance variables
 * pme_topology ("torus:4x4") and pme_coords ("1,2") of ch4:pme; --print prints them,
 * one line per rank ("topo: rank R host H topology T coords C"). Then, for reorder 1
 * and for reorder 0 (MPICH's order, the baseline), the topology is made, every rank
 * sends its coordinates to its neighbours (MPI_Neighbor_allgather) and sums the links
 * to each neighbour it hears from. Also checked: every rank's neighbours are those of
 * the vertex its new rank is (for dist, the vertex rank r of comm_old gave), and the
 * neighbours' new ranks arrive with their coordinates.
 *
 * Prints "pme_topo: KIND SHAPE on T: reorder N edges, H hops, max M; identity N edges,
 * H0 hops, max M0" and "pme_topo: OK"; exit status 1 when a check fails, when the
 * reordered sum is above the identity's, or with --one-hop when a neighbour is more
 * than one link away after reorder (or no torus says how far).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pme_pvar.h"

#define MAXD 8

static int rank, size, ndims, dims[MAXD];       /* the virtual grid */
static int tdims[3], tnd;                       /* the torus, from pme_topology */

static void die(const char *msg)
{
    fprintf(stderr, "pme_topo: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* A string performance variable of ch4:pme ("" when there is none). */
static void read_pvar(const char *name, char *out, size_t len)
{
    char buf[4096] = "";
    if (!pme_pvar_read(name, buf, sizeof(buf) - 1))
        buf[0] = 0;
    snprintf(out, len, "%s", buf);
}

/* The grid neighbours of vertex v, each dimension's -1 then +1 (with wrap-around). */
static int grid_neighbours(int v, int *nb)
{
    int n = 0, stride = 1;
    for (int d = ndims - 1; d >= 0; d--) {
        int c = v / stride % dims[d];
        if (dims[d] > 1) {
            nb[n++] = v + ((c + dims[d] - 1) % dims[d] - c) * stride;
            nb[n++] = v + ((c + 1) % dims[d] - c) * stride;
        }
        stride *= dims[d];
    }
    return n;
}

static int torus_hops(const int *a, const int *b)
{
    int h = 0;
    for (int d = 0; d < tnd; d++) {
        int f = ((b[d] - a[d]) % tdims[d] + tdims[d]) % tdims[d];
        h += f < tdims[d] - f ? f : tdims[d] - f;
    }
    return h;
}

static MPI_Comm make(const char *kind, int reorder)
{
    MPI_Comm c = MPI_COMM_NULL;
    int nb[2 * MAXD], n = grid_neighbours(rank, nb), periods[MAXD];
    if (!strcmp(kind, "cart")) {
        for (int d = 0; d < ndims; d++)
            periods[d] = 1;
        MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, reorder, &c);
    } else if (!strcmp(kind, "graph")) {
        int *index = malloc(size * sizeof(int)), *edges = malloc(size * 2 * MAXD * sizeof(int));
        int k = 0, tmp[2 * MAXD];
        for (int v = 0; v < size; v++) {
            int m = grid_neighbours(v, tmp);
            memcpy(edges + k, tmp, m * sizeof(int));
            index[v] = k += m;
        }
        MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, reorder, &c);
        free(index);
        free(edges);
    } else if (!strcmp(kind, "dist")) {
        int src = rank;
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &src, &n, nb, MPI_UNWEIGHTED, MPI_INFO_NULL,
                              reorder, &c);
    } else if (!strcmp(kind, "adjacent")) {
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n, nb, MPI_UNWEIGHTED, n, nb,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, reorder, &c);
    } else {
        die("KIND is cart, graph, dist or adjacent");
    }
    if (c == MPI_COMM_NULL)
        die("no communicator made");
    return c;
}

/* The neighbours MPI says the calling process has in c, in the order
 * MPI_Neighbor_allgather fills its receive buffer. */
static int neighbours(const char *kind, MPI_Comm c, int me, int *nb)
{
    int n = 0, w;
    if (!strcmp(kind, "cart")) {
        /* MPI's order: dimension by dimension, the source (-1) then the destination */
        for (int d = 0; d < ndims; d++) {
            int lo, hi;
            MPI_Cart_shift(c, d, 1, &lo, &hi);
            nb[n++] = lo;
            nb[n++] = hi;
        }
    } else if (!strcmp(kind, "graph")) {
        MPI_Graph_neighbors_count(c, me, &n);
        MPI_Graph_neighbors(c, me, n, nb);
    } else {
        int in, out;
        MPI_Dist_graph_neighbors_count(c, &in, &out, &w);
        MPI_Dist_graph_neighbors(c, in, nb, MPI_UNWEIGHTED, out, nb + in, MPI_UNWEIGHTED);
        n = in;
    }
    return n;
}

/* Links to every neighbour of this process in c: *edges, returns the sum; *max. */
static long measure(const char *kind, MPI_Comm c, const int *coords, long *edges, int *max)
{
    int me, nb[4 * MAXD], want[2 * MAXD], errs = 0;
    MPI_Comm_rank(c, &me);
    int n = neighbours(kind, c, me, nb), nw = grid_neighbours(me, want);
    /* the neighbours of the vertex this process now is, in some order */
    int seen = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < nw; j++)
            if (nb[i] == want[j] && !(seen & 1 << j)) {
                seen |= 1 << j;
                break;
            }
    if (n != nw || seen != (1 << nw) - 1)
        errs++;
    int mine[4] = { me, coords[0], coords[1], coords[2] }, *got = malloc(4 * n * sizeof(int));
    MPI_Neighbor_allgather(mine, 4, MPI_INT, got, 4, MPI_INT, c);
    long sum = 0;
    *max = 0;
    for (int i = 0; i < n; i++) {
        if (got[4 * i] != nb[i])
            errs++;     /* the data did not come from the neighbour MPI named */
        int h = torus_hops(coords, got + 4 * i + 1);
        sum += h;
        *max = h > *max ? h : *max;
    }
    free(got);
    if (errs)
        die("the neighbours are not those of the process's vertex, or their data came "
            "from elsewhere");
    long in[2] = { sum, n }, out[2];
    MPI_Allreduce(in, out, 2, MPI_LONG, MPI_SUM, c);
    MPI_Allreduce(MPI_IN_PLACE, max, 1, MPI_INT, MPI_MAX, c);
    *edges = out[1];
    return out[0];
}

int main(int argc, char **argv)
{
    int provided, print = 0, one_hop = 0, a = 1;
    char topology[64], coords_s[64], host[256];
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (; a < argc && argv[a][0] == '-'; a++) {
        if (!strcmp(argv[a], "--print"))
            print = 1;
        else if (!strcmp(argv[a], "--one-hop"))
            one_hop = 1;
        else
            die("unknown option");
    }
    if (argc - a != 2)
        die("usage: pme_topo [--print] [--one-hop] cart|graph|dist|adjacent SHAPE");
    const char *kind = argv[a];
    int n = 1;
    for (char *s = argv[a + 1]; ndims < MAXD; s++) {
        dims[ndims] = (int) strtol(s, &s, 10);
        if (dims[ndims] < 2)
            die("each size of SHAPE must be at least 2");
        n *= dims[ndims++];
        if (*s != 'x')
            break;
    }
    if (n != size)
        die("SHAPE must have as many positions as there are ranks");

    read_pvar("pme_topology", topology, sizeof(topology));
    read_pvar("pme_coords", coords_s, sizeof(coords_s));
    gethostname(host, sizeof(host));
    host[sizeof(host) - 1] = 0;
    int coords[3] = { 0, 0, 0 };
    if (!strncmp(topology, "torus:", 6) || !strncmp(topology, "ring:", 5)) {
        char *s = strchr(topology, ':') + 1;
        for (tnd = 0; tnd < 3; s++) {
            tdims[tnd++] = (int) strtol(s, &s, 10);
            if (*s != 'x')
                break;
        }
        if (sscanf(coords_s, "%d,%d,%d", &coords[0], &coords[1], &coords[2]) != tnd)
            die("pme_coords does not fit pme_topology");
    }
    if (print) {
        char line[512], *all = rank ? NULL : malloc(size * sizeof(line));
        snprintf(line, sizeof(line), "topo: rank %d host %s topology %s coords %s", rank, host,
                 topology[0] ? topology : "-", coords_s[0] ? coords_s : "-");
        MPI_Gather(line, sizeof(line), MPI_CHAR, all, sizeof(line), MPI_CHAR, 0,
                   MPI_COMM_WORLD);
        for (int r = 0; !rank && r < size; r++)
            printf("%s\n", all + r * sizeof(line));
        free(all);
    }

    long edges[2], hops[2];
    int max[2];
    for (int reorder = 1; reorder >= 0; reorder--) {
        MPI_Comm c = make(kind, reorder);
        hops[reorder] = measure(kind, c, coords, &edges[reorder], &max[reorder]);
        MPI_Comm_free(&c);
    }
    int fail = hops[1] > hops[0] || (one_hop && (max[1] > 1 || !tnd));
    if (rank == 0) {
        printf("pme_topo: %s %s on %s: reorder %ld edges, %ld hops, max %d; identity %ld "
               "edges, %ld hops, max %d\n", kind, argv[a + 1], topology[0] ? topology : "-",
               edges[1], hops[1], max[1], edges[0], hops[0], max[0]);
        printf("pme_topo: %s\n", fail ? "FAILED" : "OK");
    }
    MPI_Finalize();
    return fail;
}
