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

#include "counters_shm.h"
#include "pme_internal.h"

struct pme_shm_state {
    int fd;
    char path[160];
};

static uint64_t netns_id(void)
{
    struct stat st;
    return stat("/proc/self/ns/net", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static const char *if_label(const struct pme_ep *ep)
{
    return ep->cfg.iface ? ep->cfg.iface : ep->cfg.device;
}

/* Try to claim ep_id: 0 on success (fd locked), PME_ERR_BUSY if a live process has it. */
static int claim(struct pme_ep *ep, uint16_t id, int *fd_out, char *path, size_t pathlen,
                 int32_t *owner)
{
    snprintf(path, pathlen, "%s/%s%llu.%s.%u", PME_SHM_DIR, PME_SHM_PREFIX,
             (unsigned long long)netns_id(), if_label(ep), id);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        struct pme_counters_shm h;
        *owner = pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) ? h.pid : 0;
        close(fd);
        return PME_ERR_BUSY;
    }
    *fd_out = fd;
    return 0;
}

int pme_counters_open(struct pme_ep *ep)
{
    int fd = -1, rc = 0;
    int32_t owner = 0;
    char path[160];
    bool explicit_id = ep->cfg.ep_id >= 0;
    uint16_t id = explicit_id ? (uint16_t)ep->cfg.ep_id : (uint16_t)(getpid() % PME_EP_ID_MAX);
    if (strchr(if_label(ep), '/')) {
        pme_ep_set_error(ep, "interface name \"%s\" is not valid", if_label(ep));
        return PME_ERR_NODEV;
    }
    if (!strcmp(ep->cfg.device, "loop")) {
        /* Loop endpoints each have their own MAC: ids need no claim, and tests open
         * thousands of them, so they get no file either. */
        static uint16_t next_loop_id;
        if (!explicit_id)
            id = next_loop_id++ % (PME_EP_ID_MAX + 1);
        rc = -ENODEV;
        path[0] = 0;
    }
    for (int tries = 0; tries < 256 && rc != -ENODEV; tries++) {
        rc = claim(ep, id, &fd, path, sizeof(path), &owner);
        if (rc != PME_ERR_BUSY || explicit_id)
            break;
        id = (uint16_t)((id + 1) % (PME_EP_ID_MAX + 1));
    }
    if (rc == PME_ERR_BUSY) {
        pme_ep_set_error(ep,
                         "endpoint id %u on %s is in use by process %d: choose another "
                         "(PME_EP_ID) or leave it unset to pick a free one",
                         id, if_label(ep), owner);
        return PME_ERR_BUSY;
    }
    size_t bytes = pme_shm_size(PME_SHM_MAX_PEERS);
    if (rc < 0) {
        if (ep->cfg.counters_shm && rc != -ENODEV) {
            pme_ep_set_error(ep, "cannot create %s: %s (set PME_COUNTERS=0 to run "
                             "without published counters)", path, strerror(-rc));
            return PME_ERR_DEVICE;
        }
        fd = -1;
    }
    /* A sparse file: only the pages of peers that exist are ever backed. Without
     * published counters (or if the file cannot grow) the same layout lives in
     * anonymous memory and the file only holds the lock. */
    void *map = MAP_FAILED;
    if (ep->cfg.counters_shm && fd >= 0 && ftruncate(fd, 0) == 0 &&
        ftruncate(fd, (off_t)bytes) == 0)
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        if (fd >= 0 && ftruncate(fd, 0) < 0)
            (void)0; /* the lock works without contents */
        map = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (map == MAP_FAILED) {
        if (fd >= 0) {
            unlink(path);
            close(fd);
        }
        pme_ep_set_error(ep, "cannot map counters: %s", strerror(errno));
        return PME_ERR_NOMEM;
    }
    struct pme_shm_state *st = malloc(sizeof(*st));
    if (!st) {
        munmap(map, bytes);
        if (fd >= 0) {
            unlink(path);
            close(fd);
        }
        return PME_ERR_NOMEM;
    }
    st->fd = fd;
    snprintf(st->path, sizeof(st->path), "%s", path);
    ep->shm = map;
    ep->shm_state = st;
    ep->ep_id = id;
    ep->ctr = &ep->shm->ep;
    return PME_OK;
}

/* Fill in what is known once the device is open; only then does pme_info list it. */
void pme_counters_publish(struct pme_ep *ep)
{
    struct pme_counters_shm *h = ep->shm;
    h->layout = PME_SHM_LAYOUT;
    h->pid = getpid();
    h->ep_id = ep->ep_id;
    h->ethertype = ep->cfg.ethertype;
    memcpy(h->mac, ep->mac, 6);
    h->checksum = (uint8_t)ep->cfg.checksum;
    h->mtu = ep->mtu;
    h->netns = netns_id();
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
    struct pme_shm_state *st = ep->shm_state;
    if (ep->shm)
        munmap(ep->shm, pme_shm_size(PME_SHM_MAX_PEERS));
    ep->shm = NULL;
    ep->ctr = NULL;
    if (st) {
        if (st->fd >= 0) {
            unlink(st->path);
            close(st->fd);
        }
        free(st);
    }
    ep->shm_state = NULL;
}

struct pme_peer_counters *pme_counters_peer_slot(struct pme_ep *ep, pme_peer_t idx)
{
    struct pme_shm_peer *sp = &ep->shm->peers[idx];
    struct pme_peer *p = pme_peer_get(ep, idx);
    memcpy(sp->mac, p->mac, 6);
    sp->ep_id = p->ep_id;
    __atomic_store_n(&ep->shm->npeers, idx + 1, __ATOMIC_RELEASE);
    return &sp->c;
}

void pme_ep_counters(pme_ep_t *ep, struct pme_counters *c)
{
    *c = *ep->ctr;
}

uint64_t pme_ep_activity(pme_ep_t *ep)
{
    return ep->ctr->rx_frames + ep->ctr->tx_frames;
}

int pme_peer_counters(pme_ep_t *ep, pme_peer_t idx, struct pme_counters *c)
{
    struct pme_peer *p = pme_peer_get(ep, idx);
    if (!p)
        return PME_ERR_INVAL;
    memset(c, 0, sizeof(*c));
#define PME_COPY_FIELD(name) c->name = p->ctr->name;
    PME_PEER_COUNTER_NAMES(PME_COPY_FIELD)
#undef PME_COPY_FIELD
    return PME_OK;
}
