/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - one-sided communication done by PME itself: what rma_win.c, rma_sync.c and
 * rma.c share.
 *
 * A window is native when every process of it exposed its memory to PME (a created or
 * allocated window whose memory is not shared with other processes of a node); then
 * puts and gets of contiguous data, window locks, and, when no process of the window
 * shares a node with another and MPICH does all accumulates through the netmod
 * (MPIDI_WINATTR_ACCU_NO_SHM), accumulates of predefined types are requests that the
 * target's PME acts on when they arrive. Everything else goes through MPIDIG's active
 * messages, whose epoch bookkeeping the native window keeps in step.
 */
#ifndef PME_RMA_H_INCLUDED
#define PME_RMA_H_INCLUDED

#include "pme_impl.h"
#include "pme_wire.h"  /* PME_AOP_*, PME_DT_*: accumulate operations and types */

/* The lock the netmod holds on one target's window. */
enum {
    MPIDI_PME_LOCK_NONE = 0,    /* no passive epoch (or active target synchronization) */
    MPIDI_PME_LOCK_LAZY,        /* MPI_Win_lock returned; nothing sent yet */
    MPIDI_PME_LOCK_SENT,        /* a lock request left (alone or carrying an operation) */
    MPIDI_PME_LOCK_HELD,        /* granted */
    MPIDI_PME_LOCK_NOCHECK,     /* MPI_MODE_NOCHECK: no lock taken at all */
};

typedef struct {
    uint32_t key;               /* its window's key at its PME endpoint */
    uint32_t peer;              /* its PME peer, PME_PEER_SELF for this process */
    MPI_Aint size;              /* bytes of its window */
    int disp_unit;
    uint8_t lock;               /* MPIDI_PME_LOCK_* */
    uint8_t lock_type;          /* PME_RMA_LOCK_SHARED or _EXCL */
} MPIDI_PME_rtarget_t;

typedef struct {
    uint32_t key;               /* our own window's key */
    int native_acc;             /* accumulates are PME requests */
    int nranks;
    MPIDI_PME_rtarget_t t[];    /* by rank in the window's communicator */
} MPIDI_PME_rwin_t;

/* NULL: MPIDIG does all of the window's one-sided communication. */
#define MPIDI_PME_RWIN(win) ((MPIDI_PME_rwin_t *) (win)->dev.netmod.pme.rma)

/* rma_win.c: windows exposed and known, waiting for completion */
int MPIDI_PME_rma_wait(MPIR_Win * win, int rank);
int MPIDI_PME_rma_wait_all(MPIR_Win * win);
int MPIDI_PME_rma_check(MPIR_Win * win, int rank);

/* rma_sync.c: locks and flushes */
int MPIDI_PME_rma_ensure_locked(MPIR_Win * win, int rank);
int MPIDI_PME_rma_op_flags(MPIR_Win * win, int rank, size_t payload, unsigned *flags);

#endif /* PME_RMA_H_INCLUDED */
