// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - broadcast, reduce and allreduce along the axes of a torus, as the MPI/QMP
 * clusters on Gigabit Ethernet meshes did them (doc/transport.md names the paper), for
 * a communicator that holds one rank on every node of the torus; every message goes to
 * a neighbour, one link away.
 *
 * The tree, from the root: along x both ways round (to the farther half one way, the
 * nearer the other, as the routes go), from every node reached along y both ways, then
 * along z. A node's parent is the node one step back toward the root in the last
 * dimension in which it is away from the root; its children are the next node on in
 * that dimension and both neighbours in each later one, so the root sends to all its
 * neighbours at once and the depth is the sum of half the sizes. Messages are cut into
 * segments that follow each other down the tree (a pipeline). A reduce goes up the same
 * tree, each node combining its children's segments with its own; an allreduce is a
 * reduce to rank 0 and a broadcast from it. Reductions need a commutative operation.
 *
 * Each collective takes this path only for messages within its CVAR's range of sizes
 * (measured against MPICH's own algorithms by maint/axes-bench: doc/mpi.md); everything
 * else is MPICH's.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_PME_AXES_BCAST
      category    : CH4_PME
      type        : string
      default     : "16384:4194304"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Message sizes in bytes, MIN:MAX (MAX -1: no limit; "off": never), for which
        MPI_Bcast on a communicator with one rank on every node of a torus sends along
        the torus's axes, neighbour to neighbour, instead of by MPICH's algorithms.
        The default is where maint/axes-bench measured the axes faster on
        torus:2x2x2 (doc/mpi.md).

    - name        : MPIR_CVAR_CH4_PME_AXES_REDUCE
      category    : CH4_PME
      type        : string
      default     : "64:262144"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The same as MPIR_CVAR_CH4_PME_AXES_BCAST for MPI_Reduce with a commutative
        operation.

    - name        : MPIR_CVAR_CH4_PME_AXES_ALLREDUCE
      category    : CH4_PME
      type        : string
      default     : "16:262144"
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        The same as MPIR_CVAR_CH4_PME_AXES_BCAST for MPI_Allreduce with a commutative
        operation.

    - name        : MPIR_CVAR_CH4_PME_AXES_SEGMENT
      category    : CH4_PME
      type        : int
      default     : 65536
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_ALL_EQ
      description : >-
        Bytes of a message that the collectives along a torus's axes pass down (or up)
        the tree at a time; a larger message is a pipeline of such segments. A message
        of fewer than 8 segments goes in quarter segments.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

#define MAX_CHILDREN (2 * PME_TOPO_MAX_DIMS)

/* Whether a message of bytes falls within "MIN:MAX" (MAX -1: no limit; "off" or anything
 * else: never). */
static int in_range(const char *range, MPI_Aint bytes)
{
    long lo, hi;
    char end;
    if (!range || sscanf(range, "%ld:%ld%c", &lo, &hi, &end) != 2)
        return 0;
    return bytes >= lo && (hi < 0 || bytes <= hi);
}

/* comm's place when it holds one rank on every node of the torus. */
static const MPIDI_PME_place_t *axes_place(MPIR_Comm * comm)
{
    const MPIDI_PME_place_t *pl = MPIDI_PME_PLACE(comm);
    if (!pl || pl->per_node != 1 || comm->local_size < 2)
        return NULL;
    MPIDI_PME_global.axes_colls++;
    return pl;
}

/* Where rank sits relative to root's node: the offset in each dimension, the shorter
 * way (the farther half of an even size counted "+"), and the last dimension with one. */
static int offsets(const MPIDI_PME_place_t * pl, int rank, int root, int *s)
{
    int last = -1;
    for (int d = 0; d < pl->ndims; d++) {
        int k = pl->dims[d];
        s[d] = (pl->at[rank][d] - pl->at[root][d] + k) % k;
        if (s[d] > k / 2)
            s[d] -= k;
        if (s[d])
            last = d;
    }
    return last;
}

/* The rank on the node that lies step links from rank's node in dimension d. */
static int rank_toward(const MPIDI_PME_place_t * pl, int rank, int d, int step)
{
    int c[PME_TOPO_MAX_DIMS];
    for (int i = 0; i < pl->ndims; i++)
        c[i] = pl->at[rank][i];
    c[d] = (c[d] + step + pl->dims[d]) % pl->dims[d];
    return pl->node_ranks[MPIDI_PME_place_node(pl, c)];
}

/* rank's parent in root's tree (-1 for the root) and its children, the largest subtree
 * first; returns how many children. */
static int tree(const MPIDI_PME_place_t * pl, int rank, int root, int *parent, int *child)
{
    int s[PME_TOPO_MAX_DIMS], n = 0;
    int last = offsets(pl, rank, root, s);
    *parent = -1;
    if (last >= 0) {
        int dir = s[last] > 0 ? 1 : -1, k = pl->dims[last];
        *parent = rank_toward(pl, rank, last, -dir);
        /* on along the line, while still the shorter way from the root */
        if (dir > 0 ? s[last] + 1 <= k / 2 : s[last] - 1 >= -((k - 1) / 2))
            child[n++] = rank_toward(pl, rank, last, dir);
    }
    for (int d = last + 1; d < pl->ndims; d++) {
        child[n++] = rank_toward(pl, rank, d, 1);
        if (pl->dims[d] > 2)
            child[n++] = rank_toward(pl, rank, d, -1);
    }
    return n;
}

/* Elements per segment (at least one): MPIR_CVAR_CH4_PME_AXES_SEGMENT bytes, or a
 * quarter of that for a message of fewer than 8 such segments, so that a shorter
 * pipeline still has several stages. */
static MPI_Aint segment_count(MPI_Aint count, MPI_Datatype datatype)
{
    MPI_Aint size, bytes = MPIR_CVAR_CH4_PME_AXES_SEGMENT;
    MPIR_Datatype_get_size_macro(datatype, size);
    if (count * size < 8 * bytes)
        bytes /= 4;
    MPI_Aint n = size > 0 ? bytes / size : 1;
    return n > 0 ? n : 1;
}

/* Wait for n requests and free them; the first error. */
static int wait_all(int n, MPIR_Request ** req, MPIDI_PME_errflag_t errflag)
{
    int mpi_errno = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int rc = MPIDI_PME_MPIC_WAIT(req[i], errflag);
        MPIR_Request_free(req[i]);
        mpi_errno = mpi_errno ? mpi_errno : rc;
    }
    return mpi_errno;
}

static int axes_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                      const MPIDI_PME_place_t * pl, MPIR_Comm * comm, MPIDI_PME_errflag_t errflag)
{
    int mpi_errno = MPI_SUCCESS, parent, child[MAX_CHILDREN];
    int nchild = tree(pl, comm->rank, root, &parent, child);
    MPI_Aint extent, seg = segment_count(count, datatype);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    MPI_Aint nseg = (count + seg - 1) / seg;
    MPIR_Request **req = MPL_malloc(nseg * (nchild + 1) * sizeof(*req), MPL_MEM_COLL);
    MPIR_ERR_CHKANDJUMP(!req, mpi_errno, MPI_ERR_OTHER, "**nomem");
    MPIR_Request **rreq = req, **sreq = req + nseg;
    int nsend = 0;

    /* every segment's receive posted at once: they come in order from one parent */
    for (MPI_Aint i = 0; parent >= 0 && i < nseg; i++) {
        MPI_Aint n = MPL_MIN(seg, count - i * seg);
        mpi_errno = MPIC_Irecv((char *) buffer + i * seg * extent, n, datatype, parent,
                               MPIR_BCAST_TAG, comm, &rreq[i]);
        MPIR_ERR_CHECK(mpi_errno);
    }
    for (MPI_Aint i = 0; i < nseg; i++) {
        MPI_Aint n = MPL_MIN(seg, count - i * seg);
        if (parent >= 0) {
            mpi_errno = MPIDI_PME_MPIC_WAIT(rreq[i], errflag);
            MPIR_Request_free(rreq[i]);
            MPIR_ERR_CHECK(mpi_errno);
        }
        for (int c = 0; c < nchild; c++) {
            mpi_errno = MPIC_Isend((char *) buffer + i * seg * extent, n, datatype, child[c],
                                   MPIR_BCAST_TAG, comm, &sreq[nsend++], errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    mpi_errno = wait_all(nsend, sreq, errflag);
  fn_exit:
    MPL_free(req);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* A buffer for count elements of datatype (freed with MPL_free(*base)). */
static void *scratch(MPI_Aint count, MPI_Datatype datatype, void **base)
{
    MPI_Aint lb, true_extent, extent;
    MPIR_Type_get_true_extent_impl(datatype, &lb, &true_extent);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    *base = MPL_malloc(count * MPL_MAX(extent, true_extent) + 1, MPL_MEM_COLL);
    return *base ? (char *) *base - lb : NULL;
}

/* Up root's tree: acc holds this rank's contribution and ends with the combination of
 * its subtree's (at root: everyone's). Each segment of each child lands in one of two
 * scratch areas per child while the other is being combined. */
static int axes_reduce_into(void *acc, MPI_Aint count, MPI_Datatype datatype, MPI_Op op,
                            int root, const MPIDI_PME_place_t * pl, MPIR_Comm * comm,
                            MPIDI_PME_errflag_t errflag)
{
    int mpi_errno = MPI_SUCCESS, parent, child[MAX_CHILDREN];
    int nchild = tree(pl, comm->rank, root, &parent, child);
    MPI_Aint extent, seg = segment_count(count, datatype);
    MPIR_Datatype_get_extent_macro(datatype, extent);
    MPI_Aint nseg = (count + seg - 1) / seg;
    void *tmp_base = NULL, *tmp = nchild ? scratch(2 * nchild * seg, datatype, &tmp_base) : NULL;
    MPIR_Request **req = MPL_malloc((nseg + 2 * MAX_CHILDREN) * sizeof(*req), MPL_MEM_COLL);
    MPIR_ERR_CHKANDJUMP(!req || (nchild && !tmp), mpi_errno, MPI_ERR_OTHER, "**nomem");
    MPIR_Request **rreq = req, **sreq = req + 2 * MAX_CHILDREN;
    int nsend = 0;

    for (MPI_Aint i = 0; i < nseg + 1; i++) {
        /* post segment i's receives, then combine segment i - 1 */
        for (int c = 0; i < nseg && c < nchild; c++) {
            MPI_Aint n = MPL_MIN(seg, count - i * seg);
            char *at = (char *) tmp + ((i % 2) * nchild + c) * seg * extent;
            mpi_errno = MPIC_Irecv(at, n, datatype, child[c], MPIR_REDUCE_TAG, comm,
                                   &rreq[(i % 2) * nchild + c]);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (i == 0)
            continue;
        MPI_Aint j = i - 1, n = MPL_MIN(seg, count - j * seg);
        char *mine = (char *) acc + j * seg * extent;
        for (int c = 0; c < nchild; c++) {
            mpi_errno = MPIDI_PME_MPIC_WAIT(rreq[(j % 2) * nchild + c], errflag);
            MPIR_Request_free(rreq[(j % 2) * nchild + c]);
            MPIR_ERR_CHECK(mpi_errno);
            char *in = (char *) tmp + ((j % 2) * nchild + c) * seg * extent;
            mpi_errno = MPIR_Reduce_local(in, mine, n, datatype, op);
            MPIR_ERR_CHECK(mpi_errno);
        }
        if (parent >= 0) {
            mpi_errno = MPIC_Isend(mine, n, datatype, parent, MPIR_REDUCE_TAG, comm,
                                   &sreq[nsend++], errflag);
            MPIR_ERR_CHECK(mpi_errno);
        }
    }
    mpi_errno = wait_all(nsend, sreq, errflag);
  fn_exit:
    MPL_free(req);
    MPL_free(tmp_base);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* Whether a reduction of count elements goes along the axes of comm's torus. */
static const MPIDI_PME_place_t *reduce_place(MPIR_Comm * comm, MPI_Aint count,
                                             MPI_Datatype datatype, MPI_Op op,
                                             const char *range)
{
    MPI_Aint size;
    MPIR_Datatype_get_size_macro(datatype, size);
    return count > 0 && MPIR_Op_is_commutative(op) && in_range(range, count * size) ?
        axes_place(comm) : NULL;
}

int MPIDI_PME_mpi_bcast(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                        MPIR_Comm * comm, MPIDI_PME_errflag_t errflag)
{
    MPI_Aint size;
    const MPIDI_PME_place_t *pl = NULL;
    MPIR_Datatype_get_size_macro(datatype, size);
    if (count > 0 && in_range(MPIR_CVAR_CH4_PME_AXES_BCAST, count * size))
        pl = axes_place(comm);
    if (pl)
        return axes_bcast(buffer, count, datatype, root, pl, comm, errflag);
    return MPIR_Bcast_impl(buffer, count, datatype, root, comm, errflag);
}

int MPIDI_PME_mpi_reduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                         MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm,
                         MPIDI_PME_errflag_t errflag)
{
    int mpi_errno = MPI_SUCCESS;
    void *base = NULL, *acc = recvbuf;
    const MPIDI_PME_place_t *pl = reduce_place(comm, count, datatype, op,
                                               MPIR_CVAR_CH4_PME_AXES_REDUCE);
    if (!pl)
        return MPIR_Reduce_impl(sendbuf, recvbuf, count, datatype, op, root, comm, errflag);
    if (comm->rank != root) {
        acc = scratch(count, datatype, &base);
        MPIR_ERR_CHKANDJUMP(!acc, mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    if (comm->rank != root || sendbuf != MPI_IN_PLACE) {
        mpi_errno = MPIR_Localcopy(sendbuf, count, datatype, acc, count, datatype);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = axes_reduce_into(acc, count, datatype, op, root, pl, comm, errflag);
  fn_exit:
    MPL_free(base);
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

int MPIDI_PME_mpi_allreduce(const void *sendbuf, void *recvbuf, MPI_Aint count,
                            MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm,
                            MPIDI_PME_errflag_t errflag)
{
    int mpi_errno = MPI_SUCCESS;
    const MPIDI_PME_place_t *pl = reduce_place(comm, count, datatype, op,
                                               MPIR_CVAR_CH4_PME_AXES_ALLREDUCE);
    if (!pl)
        return MPIR_Allreduce_impl(sendbuf, recvbuf, count, datatype, op, comm, errflag);
    if (sendbuf != MPI_IN_PLACE) {
        mpi_errno = MPIR_Localcopy(sendbuf, count, datatype, recvbuf, count, datatype);
        MPIR_ERR_CHECK(mpi_errno);
    }
    mpi_errno = axes_reduce_into(recvbuf, count, datatype, op, 0, pl, comm, errflag);
    MPIR_ERR_CHECK(mpi_errno);
    mpi_errno = axes_bcast(recvbuf, count, datatype, 0, pl, comm, errflag);
  fn_fail:
    return mpi_errno;
}
