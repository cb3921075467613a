// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - the queue of connect/accept handshake messages.
 *
 * MPI_Comm_connect/accept exchange small messages outside MPIDIG
 * (MPIDI_PME_KIND_DYNPROC). The target side of am.c puts them here as they arrive;
 * MPIDI_PME_dynamic_recv (spawn.c) takes them by the port's tag.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/* Queue a connect/accept handshake message (MPIDI_PME_KIND_DYNPROC) that arrived for
 * MPIDI_PME_dynamic_recv, in arrival order. */
int MPIDI_PME_dynq_put(uint32_t tag, const void *data, size_t len)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    MPIDI_PME_dynmsg_t *m = MPL_malloc(sizeof(*m) + len, MPL_MEM_OTHER);
    MPIR_ERR_CHKANDSTMT(!m, mpi_errno, MPI_ERR_OTHER, return mpi_errno, "**nomem");
    m->next = NULL;
    m->tag = tag;
    m->len = len;
    memcpy(m->data, data, len);
    MPIDI_PME_dynmsg_t **pp = &g->dyn_head;
    while (*pp)
        pp = &(*pp)->next;
    *pp = m;
    return MPI_SUCCESS;
}

/* Take the oldest handshake message with `tag` into buf (at most size bytes).
 * Returns 1 when there was one, 0 when none has arrived yet. */
int MPIDI_PME_dynq_take(uint32_t tag, void *buf, size_t size)
{
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    for (MPIDI_PME_dynmsg_t ** pp = &g->dyn_head; *pp; pp = &(*pp)->next) {
        if ((*pp)->tag == tag) {
            MPIDI_PME_dynmsg_t *m = *pp;
            *pp = m->next;
            memcpy(buf, m->data, m->len < size ? m->len : size);
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
