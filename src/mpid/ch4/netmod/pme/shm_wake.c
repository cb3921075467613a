// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - one wake-up source for shared memory and PME: the doorbell.
 *
 * A rank that waits sleeps in poll() on PME's device (progress.c, pme_ep_idle). A PME
 * frame ends the sleep at once, but a message from a rank of the same node comes
 * through MPICH's shared memory, which poll() cannot watch: without help it waited out
 * the sleep (up to MPIR_CVAR_CH4_PME_MAX_SLEEP_US, plus up to a scheduler tick).
 *
 * So each rank of the node owns a doorbell, a Unix datagram socket with an abstract
 * name the kernel picks (autobind) that its sleep watches beside the device, and a slot
 * in a page shared by the node's ranks: its doorbell's name and a flag, "asleep". Before
 * it sleeps, a rank sets its flag and lets MPICH's shared memory be polled once more (the
 * progress pass after ours); only a pass that then finds nothing sleeps (a cell taken
 * from shared memory counts: MPICH's receive calls MPIDI_PME_shm_received). A sender that
 * has put a cell in a rank's queue (MPICH's iqueue, patched by maint/build-mpich to
 * call MPIDI_PME_shm_sent) reads the flag and, if it is set, clears it and writes one
 * byte to the doorbell. With a full barrier between the sender's enqueue and its load
 * of the flag, and between the sleeper's store of the flag and its last poll of the
 * queue, one of the two sees the other: either the poll finds the cell or the sender
 * rings. The bounded sleep stays as the net under it all (a doorbell that could not be
 * rung, an MPICH built without the patch).
 *
 * The doorbell's name is the kernel's (autobind), so two jobs never collide; anyone in
 * the node's network namespace could write to it, which only wakes the rank early.
 */
#include "mpidimpl.h"
#include "mpidu_init_shm.h"
#include "pme_impl.h"

#include <sys/socket.h>
#include <sys/un.h>

/*
=== BEGIN_MPI_T_CVAR_INFO_BLOCK ===

cvars:
    - name        : MPIR_CVAR_CH4_PME_SHM_WAKE
      category    : CH4_PME
      type        : boolean
      default     : true
      class       : none
      verbosity   : MPI_T_VERBOSITY_USER_BASIC
      scope       : MPI_T_SCOPE_LOCAL
      description : >-
        Whether a rank that sleeps on the network device (see PME_WAIT and
        MPIR_CVAR_CH4_PME_MAX_SLEEP_US) is woken by a doorbell when a rank of its node
        sends it a message through shared memory. Without it such a message waits until
        the sleep ends. The doorbells rung and the sleeps they ended are the MPI_T
        performance variables pme_shm_rings and pme_shm_wakeups.

=== END_MPI_T_CVAR_INFO_BLOCK ===
*/

/* One rank's slot, a cache line of its own: the flag is written by its owner and by the
 * ranks that ring, nothing else shares its line. */
#define DOORBELL_NAME_MAX 40
typedef struct {
    MPL_atomic_int_t asleep;
    uint32_t name_len;          /* bytes of the name (of sun_path), 0: no doorbell */
    char name[DOORBELL_NAME_MAX];       /* the abstract name: NUL, then the kernel's */
    char pad[64 - sizeof(MPL_atomic_int_t) - sizeof(uint32_t) - DOORBELL_NAME_MAX];
} MPIDI_PME_doorbell_slot_t;

static struct {
    MPIDI_PME_doorbell_slot_t *slots;   /* the node's page, or NULL: no doorbells */
    int nslots;
    int me;                     /* our slot (MPICH's local rank) */
    int fd;                     /* our doorbell: read end, and where we ring others from */
    int armed;                  /* our flag is set: the next idle pass may sleep */
    int own_init_shm;           /* we set up MPIDU_Init_shm (5.0), so we finalize it */
} wake = {.fd = -1 };

static int make_doorbell(MPIDI_PME_doorbell_slot_t * slot)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* Binding with only the family asks the kernel for a fresh abstract name. */
    struct sockaddr_un sa = {.sun_family = AF_UNIX };
    socklen_t len = sizeof(sa);
    if (bind(fd, (struct sockaddr *) &sa, sizeof(sa_family_t)) ||
        getsockname(fd, (struct sockaddr *) &sa, &len) ||
        len > offsetof(struct sockaddr_un, sun_path) + DOORBELL_NAME_MAX ||
        len <= offsetof(struct sockaddr_un, sun_path)) {
        close(fd);
        return -1;
    }
    size_t name_len = len - offsetof(struct sockaddr_un, sun_path);
    memcpy(slot->name, sa.sun_path, name_len);
    slot->name_len = (uint32_t) name_len;
    return fd;
}

/* Called by every process of the job once its cards are in (join_world: 4.x's
 * init_world, 5.0's commit of MPI_COMM_WORLD), where MPIDU_Init_shm_alloc, collective
 * among the node's processes, finds them all. A rank alone on its node has nobody to
 * ring it. */
int MPIDI_PME_shm_wake_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    MPIDI_PME_global_t *g = &MPIDI_PME_global;
    int n = MPIR_Process.local_size;
    void *page = NULL;

#if MPIDI_PME_MPICH_5 && (defined(MPL_HAVE_INITSHM) || defined(MPIDI_CH4_DIRECT_NETMOD))
    /* 4.x's ch4 sets up MPIDU_Init_shm at MPI_COMM_WORLD's commit, just before
     * init_world. 5.0's does not: its shared-memory module maps its own segment by name
     * (MPL_initshm_open, wherever POSIX shared memory exists) and only without that
     * sets up MPIDU_Init_shm, and MPIDU_Init_shm_alloc, never set up, took every process
     * for local rank 0 and asserted. So the netmod sets it up itself, here: every
     * process of the job passes this commit (the bootstrap hook refuses a part of the
     * job), and MPIDU_Init_shm_init is a PMI broadcast within each node that a process
     * alone on its node must join as well (PMI's barrier may span the job), hence
     * before the return below. */
    mpi_errno = MPIDU_Init_shm_init();
    MPIR_ERR_CHECK(mpi_errno);
    wake.own_init_shm = 1;
#endif
    if (n <= 1)
        return MPI_SUCCESS;
    mpi_errno = MPIDU_Init_shm_alloc(sizeof(MPIDI_PME_doorbell_slot_t) * (size_t) n, &page);
    MPIR_ERR_CHECK(mpi_errno);
    wake.slots = page;
    wake.nslots = n;
    wake.me = MPIR_Process.local_rank;
    /* Without a doorbell (turned off, or no socket) this rank neither announces its
     * sleeps nor rings others: its slot stays unnamed, and it sleeps in bounded steps
     * as before. */
    if (!MPIR_CVAR_CH4_PME_SHM_WAKE)
        return MPI_SUCCESS;
#ifdef MPIDI_PME_NO_SHM_HOOKS
    /* maint/build-mpich found no place for MPIDI_PME_shm_sent in this MPICH's queue (and
     * said so): nobody would ring, and an announced sleep would only wait longer. */
    return MPI_SUCCESS;
#endif
    wake.fd = make_doorbell(&wake.slots[wake.me]);
    if (wake.fd >= 0)
        pme_ep_set_wake_fd(g->ep, wake.fd);

  fn_exit:
    return mpi_errno;
  fn_fail:
    goto fn_exit;
}

/* After the last shared-memory message (finalize): nobody rings us from now on, and we
 * ring nobody. */
void MPIDI_PME_shm_wake_finalize(void)
{
    void *page = wake.slots;
    if (page) {
        if (wake.fd >= 0) {
            pme_ep_set_wake_fd(MPIDI_PME_global.ep, -1);
            close(wake.fd);
            wake.fd = -1;
        }
        wake.armed = 0;
        MPL_atomic_relaxed_store_int(&wake.slots[wake.me].asleep, 0);
        wake.slots = NULL;
        MPIDU_Init_shm_free(page);
    }
    /* A detach, no collective; MPICH's shared-memory module (finalized after the
     * netmod) does not use MPIDU_Init_shm where we set it up. */
    if (wake.own_init_shm) {
        wake.own_init_shm = 0;
        MPIDU_Init_shm_finalize();
    }
}

/* The hook in MPICH's shared-memory send: a cell is now in the queue of local rank
 * `local_rank`. Cheap when nobody sleeps: a barrier and a load (nothing at all in a rank
 * without a doorbell). */
void MPIDI_PME_shm_sent(int local_rank)
{
    if (wake.fd < 0 || local_rank < 0 || local_rank >= wake.nslots || local_rank == wake.me)
        return;
    MPIDI_PME_doorbell_slot_t *s = &wake.slots[local_rank];
    /* the enqueue before the flag's load; the sleeper orders them the other way */
    MPL_atomic_read_write_barrier();
    if (!MPL_atomic_relaxed_load_int(&s->asleep) || !MPL_atomic_swap_int(&s->asleep, 0))
        return;
    uint32_t name_len = s->name_len;
    if (!name_len || name_len > DOORBELL_NAME_MAX)
        return;
    struct sockaddr_un sa = {.sun_family = AF_UNIX };
    memcpy(sa.sun_path, s->name, name_len);
    char byte = 1;
    /* A full doorbell (EAGAIN) has been rung already; a closed one belongs to a rank that
     * is finishing: neither needs more. */
    if (sendto(wake.fd, &byte, 1, MSG_DONTWAIT, (struct sockaddr *) &sa,
               (socklen_t) (offsetof(struct sockaddr_un, sun_path) + name_len)) == 1)
        MPIDI_PME_global.shm_rings++;
}

/* Cells this process took from its shared-memory queue: a progress pass that took one
 * was not idle, even if it completed no request (an unexpected message, one chunk of a
 * long one), and must not sleep with more cells waiting behind it. Relaxed atomics:
 * with MPI_THREAD_MULTIPLE two threads may take cells at once; only a change matters. */
static MPL_atomic_int_t cells_taken;

void MPIDI_PME_shm_received(void)
{
    MPL_atomic_relaxed_store_int(&cells_taken, MPL_atomic_relaxed_load_int(&cells_taken) + 1);
}

int MPIDI_PME_shm_cells_taken(void)
{
    return MPL_atomic_relaxed_load_int(&cells_taken);
}

/* Whether a sleep must be announced before it may begin: we have a doorbell and have
 * not announced yet. (Ranks alone on their node have none and never ask pme_core.) */
int MPIDI_PME_shm_wake_unannounced(void)
{
    return wake.fd >= 0 && !wake.armed;
}

/* An idle pass that would sleep announces it instead (sets our flag) and returns, so
 * that MPICH polls its shared memory once more after the announcement; the next idle
 * pass sleeps. */
void MPIDI_PME_shm_wake_announce(void)
{
    /* release: a sender that sees the flag sees our doorbell's name written before it */
    MPL_atomic_release_store_int(&wake.slots[wake.me].asleep, 1);
    MPL_atomic_read_write_barrier();    /* the flag before the queue's next poll */
    wake.armed = 1;
}

/* After a sleep, or when something came: we are awake. Drains the doorbell. */
void MPIDI_PME_shm_wake_disarm(void)
{
    if (!wake.armed)
        return;
    wake.armed = 0;
    MPL_atomic_relaxed_store_int(&wake.slots[wake.me].asleep, 0);
    char buf[64];
    ssize_t got;
    int rung = 0;
    while ((got = recv(wake.fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
        rung = 1;
    if (rung)
        MPIDI_PME_global.shm_wakeups++;
}
