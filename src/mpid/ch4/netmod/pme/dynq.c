// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - the queue of connect/accept handshake messages.
 *
 * MPI_Comm_connect/accept exchange small messages outside MPIDIG
 * (MPIDI_PME_KIND_DYNPROC), and so does MPI_Intercomm_create between its two leaders
 * in MPICH 5.0 (dynamic_sendrecv). The target side of am.c puts them here as they
 * arrive; spawn.c takes them by their kind (MPIDI_PME_DYN_*, the header's handler byte),
 * the port's or the call's tag and, for dynamic_sendrecv, the communicator's context id
 * that leads their data.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/* Queue a handshake message (MPIDI_PME_KIND_DYNPROC) that arrived for spawn.c, in arrival
 * order. */
int MPIDI_PME_dynq_put(int sub, uint32_t tag, const void *data, size_t len)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    MPIDI_PME_dynmsg_t *m = MPL_malloc(sizeof(*m) + len, MPL_MEM_OTHER);
    MPIR_ERR_CHKANDSTMT(!m, mpi_errno, MPI_ERR_OTHER, return mpi_errno, "**nomem");
    m->next = NULL;
    m->sub = sub;
    m->tag = tag;
    m->len = len;
    memcpy(m->data, data, len);
    MPIDI_PME_dynmsg_t **pp = &g->dyn_head;
    while (*pp)
        pp = &(*pp)->next;
    *pp = m;
    return MPI_SUCCESS;
}

/* Take the oldest handshake message of kind sub with `tag` whose data begins with the
 * lead_len bytes at lead into buf (the rest of its data, at most size bytes; *got, if
 * not NULL, says how many). Returns 1 when there was one, 0 when none has arrived yet. */
int MPIDI_PME_dynq_take(int sub, uint32_t tag, const void *lead, size_t lead_len, void *buf,
                        size_t size, size_t * got)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    for (MPIDI_PME_dynmsg_t ** pp = &g->dyn_head; *pp; pp = &(*pp)->next) {
        MPIDI_PME_dynmsg_t *m = *pp;
        if (m->sub == sub && m->tag == tag && m->len >= lead_len &&
            !memcmp(m->data, lead, lead_len)) {
            size_t len = m->len - lead_len;
            *pp = m->next;
            len = len < size ? len : size;
            memcpy(buf, m->data + lead_len, len);
            if (got)
                *got = len;
            MPL_free(m);
            return 1;
        }
    }
    return 0;
}

/* Drop handshake messages nobody asked for (finalize). */
void MPIDI_PME_dynq_free(void)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    while (g->dyn_head) {
        MPIDI_PME_dynmsg_t *m = g->dyn_head;
        g->dyn_head = m->next;
        MPL_free(m);
    }
}
