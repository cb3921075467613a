// SPDX-License-Identifier: BSD-3-Clause
/*
 * counters.c - claiming an endpoint id (claim.h) and publishing counters for pme_info
 * (counters_shm.h), both in the user's own directory when there is one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "claim.h"
#include "counters.h"
#include "counters_shm.h"

struct pme_shm_state {
    struct pme_claim claim[PME_MAX_DEVS]; /* the endpoint id on each interface (claim.h) */
    unsigned nclaims;
    uint64_t netns;
    uint16_t next_id;   /* where the search for a free id goes on */
    uint16_t tries;     /* ids tried so far */
    int dir_fd;         /* the user's counter directory, -1 when not usable */
    int fd;             /* the counter file, locked while we live */
    char dir[256];
    char name[96];      /* its name in dir_fd */
};

static uint64_t netns_id(void)
{
    struct stat st;
    return stat("/proc/self/ns/net", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* What names the endpoint's files: its first interface (or its device: loop). */
static const char *if_label(const struct pme_ep *ep)
{
    return ep->nifname ? ep->ifname[0] : ep->cfg.iface ? ep->cfg.iface : ep->cfg.device;
}

static const char *claim_label(const struct pme_ep *ep, unsigned i)
{
    return ep->nifname ? ep->ifname[i] : if_label(ep);
}

static void release_claims(struct pme_shm_state *st, const struct pme_ep *ep)
{
    while (st->nclaims) {
        unsigned i = --st->nclaims;
        pme_claim_release(st->dir_fd, st->netns, claim_label(ep, i), ep->self.ep, &st->claim[i]);
    }
}

/* Claim id on every interface the endpoint spans: frames find an endpoint by (node,
 * id) whichever interface they come in by. All or none. *shared tells whether another
 * user holds the id's name somewhere (no obstacle; see claim.h), *h who. */
static int claim_all(struct pme_ep *ep, struct pme_shm_state *st, uint16_t id, bool *shared,
                     struct pme_claim_holder *h, int *e, const char **where)
{
    unsigned n = ep->nifname ? ep->nifname : 1;
    *shared = false;
    ep->self.ep = id;
    for (unsigned i = 0; i < n; i++) {
        struct pme_claim_holder hi;
        *where = claim_label(ep, i);
        int rc = pme_claim_take(st->dir_fd, st->netns, *where, id, &st->claim[i], &hi, e);
        if (rc) {
            *h = hi;
            release_claims(st, ep);
            return rc;
        }
        st->nclaims++;
        if (st->claim[i].name_fd < 0 && !*shared) {
            *shared = true;
            *h = hi;
        }
    }
    return PME_OK;
}

const char *pme_counters_base(void)
{
    const char *b = getenv("PME_RUNTIME_DIR");
    return b && *b ? b : PME_SHM_BASE_DEFAULT;
}

void pme_counters_dir(char *out, size_t len)
{
    snprintf(out, len, "%s/%s%u", pme_counters_base(), PME_SHM_DIR_PREFIX, (unsigned)geteuid());
}

/* Warnings about the counter directory and about ids, once per process: a job's
 * endpoints would repeat them. */
static bool warned_dir, warned_shared;

/* Open (creating it if needed) the user's counter directory, which holds the counter
 * files and the id claims. One that others control (a symbolic link, another owner,
 * write permission for anyone else) is not used: a local user could have made it before
 * our first job, and we could not remove it (/dev/shm is sticky). The endpoint then
 * runs without published counters, with a warning. Returns the descriptor or -1. */
static int open_own_dir(char *dir, size_t len)
{
    pme_counters_dir(dir, len);
    if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
        if (!warned_dir)
            fprintf(stderr, "pme: warning: cannot create %s: %s; running without published "
                    "counters (set PME_RUNTIME_DIR to a directory of yours)\n",
                    dir, strerror(errno));
        warned_dir = true;
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) < 0)
        why = errno == ENOTDIR || errno == ELOOP ? "it is a symbolic link or no directory"
                                                 : strerror(errno);
    else if (st.st_uid != geteuid())
        why = "it belongs to another user";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
        why = "others may write to it";
    if (!why)
        return fd;
    if (!warned_dir) {
        char owner[48] = "";
        if (fd >= 0)
            snprintf(owner, sizeof(owner), " (owner uid %u, mode %03o)", (unsigned)st.st_uid,
                     (unsigned)(st.st_mode & 0777));
        fprintf(stderr, "pme: warning: not using %s: %s%s; this process runs without published "
                "counters (pme_info does not list it), and only abstract socket names keep its "
                "endpoint ids apart from your other processes': set PME_RUNTIME_DIR to a "
                "directory of yours, or have root remove %s\n", dir, why, owner, dir);
        fflush(stderr);
    }
    warned_dir = true;
    if (fd >= 0)
        close(fd);
    return -1;
}

/* Create the counter file afresh in our own directory. Our claim on the id means no
 * live endpoint uses this name, so whatever is there (a dead process's file, or
 * anything planted) is removed, never opened or followed. */
static int create_file(struct pme_ep *ep, struct pme_shm_state *st)
{
    snprintf(st->name, sizeof(st->name), "%llu.%s.%u", (unsigned long long)st->netns,
             if_label(ep), ep->self.ep);
    if (unlinkat(st->dir_fd, st->name, 0) < 0 && errno != ENOENT)
        (void)0; /* the exclusive create below reports it */
    st->fd = openat(st->dir_fd, st->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0640);
    if (st->fd < 0 || flock(st->fd, LOCK_EX | LOCK_NB) < 0) {
        pme_ep_set_error(ep, "cannot create %s/%s: %s (set PME_COUNTERS=0 to run without "
                         "published counters)", st->dir, st->name, strerror(errno));
        return PME_ERR_DEVICE;
    }
    return PME_OK;
}

static void warn_shared(const struct pme_ep *ep, const char *where,
                        const struct pme_claim_holder *h)
{
    if (warned_shared)
        return;
    warned_shared = true;
    char who[64] = "a process that does not say who it is";
    if (h->pid)
        snprintf(who, sizeof(who), "process %d of uid %ld", h->pid, h->uid);
    fprintf(stderr, "pme: note: endpoint id %u on %s is also claimed by %s; that is harmless "
            "(frames of another job are dropped on their job id), but if the ids of an "
            "interface are all taken, someone may be squatting them\n",
            ep->self.ep, where, who);
    fflush(stderr);
}

static struct pme_shm_state *state_new(struct pme_ep *ep)
{
    struct pme_shm_state *st = calloc(1, sizeof(*st));
    if (!st)
        return NULL;
    st->dir_fd = st->fd = -1;
    st->netns = netns_id();
    st->next_id = ep->cfg.ep_id >= 0 ? (uint16_t)ep->cfg.ep_id
                                     : (uint16_t)(getpid() % (PME_EP_ID_MAX + 1));
    st->dir_fd = open_own_dir(st->dir, sizeof(st->dir));
    return st;
}

/* Try ids from st->next_id on: the one asked for (PME_EP_ID), or the first that is free.
 * An id whose name another user holds is taken only when no free one turns up among
 * the next 256 (a local user who holds them all cannot keep us from starting). */
static int claim(struct pme_ep *ep, struct pme_shm_state *st)
{
    bool explicit_id = ep->cfg.ep_id >= 0;
    int e = 0, rc = PME_ERR_BUSY, fallback = -1;
    struct pme_claim_holder h = {0, -1}, fh = {0, -1};
    const char *where = if_label(ep), *fwhere = where;
    while (st->tries < 256) {
        uint16_t id = st->next_id;
        bool shared;
        st->tries++;
        st->next_id = (uint16_t)((id + 1) % (PME_EP_ID_MAX + 1));
        rc = claim_all(ep, st, id, &shared, &h, &e, &where);
        if (rc == PME_OK && shared && !explicit_id) {
            if (fallback < 0) {
                fallback = id;
                fh = h;
                fwhere = where;
            }
            release_claims(st, ep);
            rc = PME_ERR_BUSY;
            continue;
        }
        if (rc == PME_OK && shared)
            warn_shared(ep, where, &h);
        if (rc != PME_ERR_BUSY || explicit_id)
            break;
    }
    if (rc == PME_ERR_BUSY && fallback >= 0) {
        bool shared;
        rc = claim_all(ep, st, (uint16_t)fallback, &shared, &h, &e, &where);
        if (rc == PME_OK && shared)
            warn_shared(ep, fwhere, &fh);
    }
    if (rc == PME_ERR_BUSY)
        pme_ep_set_error(ep,
                         "endpoint id %u on %s is in use by process %d: choose another "
                         "(PME_EP_ID) or leave it unset to pick a free one",
                         ep->self.ep, where, h.pid);
    else if (rc)
        pme_ep_set_error(ep, "cannot claim an endpoint id on %s: %s", where, strerror(e));
    return rc;
}

static void state_free(struct pme_shm_state *st, const struct pme_ep *ep)
{
    if (st->fd >= 0) {
        unlinkat(st->dir_fd, st->name, 0);
        close(st->fd);
    }
    release_claims(st, ep);
    if (st->dir_fd >= 0)
        close(st->dir_fd);
    free(st);
}

int pme_counters_claim(struct pme_ep *ep)
{
    if (!*if_label(ep) || strchr(if_label(ep), '/') || strlen(if_label(ep)) > 32) {
        pme_ep_set_error(ep, "interface name \"%s\" is not valid", if_label(ep));
        return PME_ERR_NODEV;
    }
    if (!strcmp(ep->cfg.device, "loop")) {
        /* Loop endpoints each have their own MAC: ids need no claim (tests open
         * thousands of them). */
        static uint16_t next_loop_id;
        ep->self.ep = ep->cfg.ep_id >= 0 ? (uint16_t)ep->cfg.ep_id
                                         : next_loop_id++ % (PME_EP_ID_MAX + 1);
        if (!ep->shm_state && ep->cfg.counters_shm) {
            ep->shm_state = state_new(ep);
            if (!ep->shm_state)
                return PME_ERR_NOMEM;
        }
        return PME_OK;
    }
    if (!ep->shm_state) {
        ep->shm_state = state_new(ep);
        if (!ep->shm_state)
            return PME_ERR_NOMEM;
    }
    return claim(ep, ep->shm_state);
}

void pme_counters_unclaim(struct pme_ep *ep)
{
    if (ep->shm_state)
        release_claims(ep->shm_state, ep);
}

int pme_counters_open(struct pme_ep *ep)
{
    struct pme_shm_state *st = ep->shm_state;
    if (st && st->dir_fd >= 0 && ep->cfg.counters_shm) {
        int rc = create_file(ep, st);
        if (rc)
            return rc;
    }
    /* A sparse file: only the pages of peers that exist are ever backed. Without
     * published counters the same layout lives in anonymous memory. */
    size_t bytes = pme_shm_size(PME_SHM_MAX_PEERS);
    void *map = MAP_FAILED;
    int fd = st ? st->fd : -1;
    if (fd >= 0 && ftruncate(fd, (off_t)bytes) == 0)
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    else if (fd < 0)
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        pme_ep_set_error(ep, "cannot map counters: %s", strerror(errno));
        return PME_ERR_NOMEM;
    }
    ep->shm = map;
    ep->ctr = &ep->shm->ep;
    return PME_OK;
}

/* Fill in what is known once the device is open; only then does pme_info list it. */
void pme_counters_publish(struct pme_ep *ep)
{
    struct pme_counters_shm *h = ep->shm;
    h->layout = PME_SHM_LAYOUT;
    h->pid = getpid();
    h->ep_id = ep->self.ep;
    h->ethertype = ep->cfg.ethertype;
    memcpy(h->mac, ep->self.mac, 6);
    h->auth = (uint8_t)ep->keys.auth;
    h->node = ep->self.node;
    h->job_id = ep->keys.job_id;
    h->mtu = ep->mtu;
    h->netns = netns_id();
    h->nifs = ep->ndev;
    if (ep->nifname) /* every interface, as many as fit: "xp,xm,yp,ym" */
        pme_iflist_join(ep->ifname, ep->nifname, h->ifname, sizeof(h->ifname));
    else
        snprintf(h->ifname, sizeof(h->ifname), "%s", if_label(ep));
    snprintf(h->device, sizeof(h->device), "%s", ep->cfg.device);
    h->rx_pool_bytes = ep->cfg.rx_pool_bytes;
    __atomic_store_n(&h->magic, PME_SHM_MAGIC, __ATOMIC_RELEASE);
}

/* Budgets change often; pme_info reads them from here. */
void pme_counters_sync(struct pme_ep *ep)
{
    ep->shm->rx_used = ep->rx_used;
    ep->shm->rx_reserved = ep->rx_reserved;
    ep->shm->tx_used = ep->tx_used;
}

void pme_counters_close(struct pme_ep *ep)
{
    if (ep->shm)
        munmap(ep->shm, pme_shm_size(PME_SHM_MAX_PEERS));
    ep->shm = NULL;
    ep->ctr = NULL;
    if (ep->shm_state)
        state_free(ep->shm_state, ep);
    ep->shm_state = NULL;
}
