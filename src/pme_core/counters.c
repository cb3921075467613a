/*
 * counters.c - claiming an endpoint id and publishing counters for pme_info.
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
    int claim_fd[PME_MAX_DEVS]; /* hold the endpoint id on each interface (claim.h) */
    int dir_fd;     /* the user's counter directory, -1 without a file */
    int fd;         /* the counter file, locked while we live */
    char name[96];  /* its name in dir_fd */
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

/* Claim id on every interface the endpoint spans: frames find an endpoint by (node,
 * id) whichever interface they come in by. All or none. */
static int claim_all(struct pme_ep *ep, struct pme_shm_state *st, uint16_t id, int *owner,
                     int *e, const char **where)
{
    unsigned n = ep->nifname ? ep->nifname : 1;
    for (unsigned i = 0; i < n; i++) {
        *where = ep->nifname ? ep->ifname[i] : if_label(ep);
        int rc = pme_claim_id(*where, id, owner, e);
        if (rc < 0) {
            while (i--) {
                close(st->claim_fd[i]);
                st->claim_fd[i] = -1;
            }
            return rc;
        }
        st->claim_fd[i] = rc;
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

/* Open (creating it if needed) the user's counter directory, refusing one that others
 * control: a symbolic link, another owner, or write permission for anyone else. */
static int open_own_dir(struct pme_ep *ep, char *dir, size_t len)
{
    pme_counters_dir(dir, len);
    if (mkdir(dir, 0750) < 0 && errno != EEXIST) {
        pme_ep_set_error(ep, "cannot create %s: %s (set PME_RUNTIME_DIR to a directory of "
                         "yours, or PME_COUNTERS=0 to run without published counters)",
                         dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0) {
        pme_ep_set_error(ep, "cannot use %s: %s (PME refuses a symbolic link there; remove "
                         "it, or set PME_COUNTERS=0)", dir,
                         strerror(errno == ENOTDIR ? ELOOP : errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    const char *why = st.st_uid != geteuid()          ? "it belongs to another user"
                      : st.st_mode & (S_IWGRP | S_IWOTH) ? "others may write to it"
                                                         : NULL;
    if (why) {
        pme_ep_set_error(ep, "refusing to publish counters in %s: %s (owner uid %u, mode %03o); "
                         "remove it (PME recreates it) or set PME_COUNTERS=0", dir, why,
                         (unsigned)st.st_uid, (unsigned)(st.st_mode & 0777));
        close(fd);
        return -1;
    }
    return fd;
}

/* Create the counter file afresh in our own directory. Our claim on the id means no
 * live endpoint uses this name, so whatever is there (a dead process's file, or
 * anything planted) is removed, never opened or followed. */
static int create_file(struct pme_ep *ep, struct pme_shm_state *st, uint16_t id)
{
    char dir[256];
    st->dir_fd = open_own_dir(ep, dir, sizeof(dir));
    if (st->dir_fd < 0)
        return PME_ERR_DEVICE;
    snprintf(st->name, sizeof(st->name), "%llu.%s.%u", (unsigned long long)netns_id(),
             if_label(ep), id);
    if (unlinkat(st->dir_fd, st->name, 0) < 0 && errno != ENOENT)
        (void)0; /* the exclusive create below reports it */
    st->fd = openat(st->dir_fd, st->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    0640);
    if (st->fd < 0 || flock(st->fd, LOCK_EX | LOCK_NB) < 0) {
        pme_ep_set_error(ep, "cannot create %s/%s: %s (set PME_COUNTERS=0 to run without "
                         "published counters)", dir, st->name, strerror(errno));
        return PME_ERR_DEVICE;
    }
    return PME_OK;
}

/* Claim an endpoint id on the interface: the one asked for, or (none asked for) the
 * first free one from a start that depends on the pid. */
static int claim(struct pme_ep *ep, struct pme_shm_state *st, uint16_t *id_out)
{
    bool explicit_id = ep->cfg.ep_id >= 0;
    uint16_t id = explicit_id ? (uint16_t)ep->cfg.ep_id : (uint16_t)(getpid() % PME_EP_ID_MAX);
    if (!strcmp(ep->cfg.device, "loop")) {
        /* Loop endpoints each have their own MAC: ids need no claim (tests open
         * thousands of them). */
        static uint16_t next_loop_id;
        *id_out = explicit_id ? id : next_loop_id++ % (PME_EP_ID_MAX + 1);
        return PME_OK;
    }
    int owner = 0, e = 0, rc = PME_ERR_BUSY;
    const char *where = if_label(ep);
    for (int tries = 0; tries < 256 && rc == PME_ERR_BUSY; tries++) {
        rc = claim_all(ep, st, id, &owner, &e, &where);
        if (rc >= 0) {
            *id_out = id;
            return PME_OK;
        }
        if (explicit_id)
            break;
        id = (uint16_t)((id + 1) % (PME_EP_ID_MAX + 1));
    }
    if (rc == PME_ERR_BUSY)
        pme_ep_set_error(ep,
                         "endpoint id %u on %s is in use by process %d: choose another "
                         "(PME_EP_ID) or leave it unset to pick a free one",
                         id, where, owner);
    else
        pme_ep_set_error(ep, "cannot claim an endpoint id on %s: %s", where,
                         strerror(e));
    return rc;
}

static void state_free(struct pme_shm_state *st)
{
    if (st->fd >= 0)
        close(st->fd);
    if (st->dir_fd >= 0) {
        unlinkat(st->dir_fd, st->name, 0);
        close(st->dir_fd);
    }
    for (int i = 0; i < PME_MAX_DEVS; i++)
        if (st->claim_fd[i] >= 0)
            close(st->claim_fd[i]);
    free(st);
}

int pme_counters_open(struct pme_ep *ep)
{
    if (!*if_label(ep) || strchr(if_label(ep), '/') || strlen(if_label(ep)) > 32) {
        pme_ep_set_error(ep, "interface name \"%s\" is not valid", if_label(ep));
        return PME_ERR_NODEV;
    }
    struct pme_shm_state *st = malloc(sizeof(*st));
    if (!st)
        return PME_ERR_NOMEM;
    st->dir_fd = st->fd = -1;
    for (int i = 0; i < PME_MAX_DEVS; i++)
        st->claim_fd[i] = -1;
    st->name[0] = 0;
    uint16_t id;
    int rc = claim(ep, st, &id);
    if (!rc && ep->cfg.counters_shm)
        rc = create_file(ep, st, id);
    if (rc) {
        state_free(st);
        return rc;
    }
    /* A sparse file: only the pages of peers that exist are ever backed. Without
     * published counters the same layout lives in anonymous memory. */
    size_t bytes = pme_shm_size(PME_SHM_MAX_PEERS);
    void *map = MAP_FAILED;
    if (st->fd >= 0 && ftruncate(st->fd, (off_t)bytes) == 0)
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, 0);
    else if (st->fd < 0)
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
        pme_ep_set_error(ep, "cannot map counters: %s", strerror(errno));
        state_free(st);
        return PME_ERR_NOMEM;
    }
    ep->shm = map;
    ep->shm_state = st;
    ep->self.ep = id;
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
        state_free(ep->shm_state);
    ep->shm_state = NULL;
}
