/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * claim.h - endpoint ids are claimed per interface for as long as the process lives.
 *
 * Two endpoints of one job on one node must never share an id on an interface: frames
 * for (node, id) would reach both, under the same key. Other users' endpoints may
 * share one harmlessly, since a frame of another job is dropped on its job id (and
 * its MAC) before anything reads it. So the registry that decides is the user's own,
 * which nobody else can write, and what other users hold is no obstacle:
 *
 *   - a lock file claim.<netns>.<interface>.<id> in the user's counter directory
 *     (counters_shm.h: the user's own, not writable by others), locked with flock()
 *     while the process lives and removed when it lets go; it holds the holder's pid;
 *   - a listening abstract-namespace Unix socket pme-ep/<interface>/<id>, as a courtesy:
 *     abstract names belong to the network namespace, leave nothing behind and vanish
 *     when the process dies, so the endpoints of all users, and ours of older builds,
 *     see which ids are in use and pick others. But anybody may bind any abstract name
 *     (a local user bound all 65,535 in seconds and kept every job from starting), so
 *     a name held by another user only steers the choice of a free id, and a name held
 *     by our own user counts as taken.
 *
 * Without a directory of our own (another user made it first), only the names are
 * left: our endpoints then pick ids from different starts (their pids), which keeps
 * them apart unless every name is taken by someone else too.
 */
#ifndef PME_CLAIM_H
#define PME_CLAIM_H

#include <stdint.h>
#include <sys/types.h>

/* An id held on one interface. */
struct pme_claim {
    int file_fd;    /* the lock file, -1 without a directory */
    int name_fd;    /* the abstract name, -1 when someone else holds it */
};

/* Who else holds an id: pid 0 and uid -1 when it could not be asked. */
struct pme_claim_holder {
    int pid;
    long uid;
};

/* Claim (interface, id) in network namespace netns: in the user's directory dirfd (-1:
 * none) and by name. Returns PME_OK with *c to keep (c->name_fd -1 when another user,
 * or a holder that does not say who it is, has the name: then *h is that holder);
 * PME_ERR_BUSY when one of our own processes holds it (*h); or another pme_status with
 * errno-style detail in *sys_errno. */
int pme_claim_take(int dirfd, uint64_t netns, const char *iface, uint16_t id, struct pme_claim *c,
                   struct pme_claim_holder *h, int *sys_errno);
/* Let go of a claim pme_claim_take gave (its lock file is removed first). */
void pme_claim_release(int dirfd, uint64_t netns, const char *iface, uint16_t id,
                       struct pme_claim *c);

/* The abstract name alone: a descriptor to keep open (closing it releases the name),
 * PME_ERR_BUSY with *h set to its holder, or another pme_status with *sys_errno. */
int pme_claim_name(const char *iface, uint16_t id, struct pme_claim_holder *h, int *sys_errno);

#endif
