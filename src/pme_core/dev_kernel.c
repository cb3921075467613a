// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_kernel.c - the kernel device: PME's own driver (kmod/, /dev/pme) gives each
 * endpoint a receive ring and a send ring mapped into the process, so a job needs
 * neither root nor CAP_NET_RAW, only membership of group pme.
 *
 * Receiving reads the ring's status words in memory, without system calls, as the
 * ring device does; sleeping is poll() on the file. Sending copies each frame into a
 * send slot and rings the doorbell (one ioctl) once per batch; the driver checks every
 * frame and writes its source fields itself. The layout is src/pme_core/pme_ioctl.h.
 *
 * The driver also answers for the endpoint: it replies to PINGs while the file is open
 * (so a process that computes for long is not taken for dead) and sends BYE to the
 * endpoint's peers when the file is closed, even by a killed process.
 *
 * And it moves rendezvous data without copies (dev_kernel_zc.c): frames sent from
 * pinned pages of the sender's buffer, and received straight into the receiver's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dev_eth.h"
#include "dev_kernel_zc.h"
#include "pme_ioctl.h"

#define PME_DEV_PATH "/dev/pme"

/* Consecutive empty polls between two looks at the interface's state in the control
 * page: a memory read, but one the spinning path need not make every time. */
#define STATE_CHECK_EVERY 1024u

struct kernel_dev {
    struct pme_dev base;
    int fd;
    uint8_t *mem;
    size_t mem_len;
    const struct pme_kring_ctl *ctl;
    uint8_t *rx;
    uint8_t *tx;
    uint32_t rx_slots;
    uint32_t tx_slots;
    uint32_t slot_size;
    uint32_t rx_cur; /* the next receive slot to look at */
    uint32_t tx_cur; /* the next send slot to fill */
    unsigned empty_polls;
    uint32_t state_seen; /* PME_KSTATE_* already reported */
    struct pme_kzc zc;
};

static struct pme_kslot *kslot(uint8_t *ring, uint32_t slot_size, uint32_t i)
{
    return (struct pme_kslot *)(ring + (size_t)i * slot_size);
}

/* Report DOWN or GONE once when it appears (a dead interface keeps reporting). */
static int check_state(struct kernel_dev *d)
{
    uint32_t st = __atomic_load_n(&d->ctl->state, __ATOMIC_ACQUIRE);
    uint32_t fresh = st & ~d->state_seen;
    d->state_seen = st & ~PME_KSTATE_GONE;
    return (fresh & PME_KSTATE_DOWN) || (st & PME_KSTATE_GONE) ? PME_ERR_DEVICE : PME_OK;
}

/* A frame whose payload the driver placed in an armed buffer: its headers go up with
 * dev->placed saying where the rest is. */
static void deliver_placed(struct kernel_dev *d, const struct pme_kslot *s, pme_rx_fn fn,
                           void *arg)
{
    const uint8_t *f = (const uint8_t *)s + PME_KSLOT_HDR_LEN;
    struct pme_dev_placed placed = {(const uint8_t *)(uintptr_t)s->zc_addr, s->zc_len};
    if (s->len < PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + sizeof(struct pme_wire_rdata))
        return;
    d->base.placed = &placed;
    fn(arg, f, s->len);
    d->base.placed = NULL;
    if (s->zc_flags & PME_KZC_FINISHED) {
        const struct pme_wire_rdata *rd =
            (const void *)(f + PME_ETH_HLEN + sizeof(struct pme_wire_hdr));
        pme_kzc_recv_finished(&d->zc, ntohl(rd->rndv_id));
    }
}

static int kernel_poll(struct pme_dev *dev, int max, pme_rx_fn fn, void *arg)
{
    struct kernel_dev *d = (struct kernel_dev *)dev;
    int n = 0;
    while (n < max) {
        struct pme_kslot *s = kslot(d->rx, d->slot_size, d->rx_cur);
        /* Acquire: the frame's bytes are the driver's until this word says otherwise. */
        if (__atomic_load_n(&s->status, __ATOMIC_ACQUIRE) != PME_KRX_USER)
            break;
        if (s->len > d->slot_size - PME_KSLOT_HDR_LEN)
            ; /* never from the driver: skipped */
        else if (s->zc_flags & PME_KZC_PLACED)
            deliver_placed(d, s, fn, arg);
        else
            fn(arg, (const uint8_t *)s + PME_KSLOT_HDR_LEN, s->len);
        /* Release: the slot goes back to the driver after we are done reading it. */
        __atomic_store_n(&s->status, PME_KRX_KERNEL, __ATOMIC_RELEASE);
        d->rx_cur = d->rx_cur + 1 == d->rx_slots ? 0 : d->rx_cur + 1;
        n++;
    }
    if (n) {
        d->empty_polls = 0;
    } else if (++d->empty_polls >= STATE_CHECK_EVERY) {
        d->empty_polls = 0;
        return check_state(d);
    }
    return n;
}

/* Gather one frame into a send slot; 0 if it does not fit one (larger than the MTU). */
static size_t fill_slot(struct kernel_dev *d, struct pme_kslot *s, const struct pme_dev_frame *f)
{
    uint8_t *p = (uint8_t *)s + PME_KSLOT_HDR_LEN;
    size_t len = 0, room = d->slot_size - PME_KSLOT_HDR_LEN;
    for (int i = 0; i < f->iovcnt; i++) {
        if (f->iov[i].iov_len > room - len)
            return 0;
        memcpy(p + len, f->iov[i].iov_base, f->iov[i].iov_len);
        len += f->iov[i].iov_len;
    }
    return len;
}

/* Put an RDATA frame into a zero-copy slot when its payload lies in a buffer being sent
 * from (zc_send_begin): its headers in the slot, the payload named. 0 if not. */
static size_t fill_slot_zc(struct kernel_dev *d, struct pme_kslot *s, const struct pme_dev_frame *f)
{
    if (!d->zc.nsend || f->iovcnt != 2 || f->iov[0].iov_len <= PME_WIRE_OFF_TYPE ||
        f->iov[0].iov_len > d->slot_size - PME_KSLOT_HDR_LEN ||
        ((const uint8_t *)f->iov[0].iov_base)[PME_WIRE_OFF_TYPE] != PME_T_RDATA)
        return 0;
    uint32_t region = pme_kzc_send_region(&d->zc, f->iov[1].iov_base, f->iov[1].iov_len);
    if (!region)
        return 0;
    memcpy((uint8_t *)s + PME_KSLOT_HDR_LEN, f->iov[0].iov_base, f->iov[0].iov_len);
    s->zc_len = (uint32_t)f->iov[1].iov_len;
    s->zc_region = region;
    s->zc_addr = (uintptr_t)f->iov[1].iov_base;
    return f->iov[0].iov_len;
}

static int kernel_send(struct pme_dev *dev, const struct pme_dev_frame *frames, int n)
{
    struct kernel_dev *d = (struct kernel_dev *)dev;
    uint32_t first = d->tx_cur;
    int queued = 0;
    for (; queued < n; queued++) {
        struct pme_kslot *s = kslot(d->tx, d->slot_size, d->tx_cur);
        if (__atomic_load_n(&s->status, __ATOMIC_ACQUIRE) != PME_KTX_FREE)
            break; /* the ring is full: the caller waits for POLLOUT */
        uint32_t status = PME_KTX_SEND_ZC;
        size_t len = fill_slot_zc(d, s, &frames[queued]);
        if (!len) {
            status = PME_KTX_SEND;
            len = fill_slot(d, s, &frames[queued]);
        }
        if (!len) {
            if (!queued)
                return PME_ERR_INVAL; /* larger than the MTU: never sendable */
            break;
        }
        s->len = (uint32_t)len;
        __atomic_store_n(&s->status, status, __ATOMIC_RELEASE);
        d->tx_cur = d->tx_cur + 1 == d->tx_slots ? 0 : d->tx_cur + 1;
    }
    if (!queued)
        return 0;
    if (ioctl(d->fd, PME_IOC_SEND) >= 0)
        return queued;
    /* The driver took none of them (interface down or gone): take the slots back, so
     * that they do not go out later behind newer frames. */
    for (uint32_t i = first; i != d->tx_cur; i = i + 1 == d->tx_slots ? 0 : i + 1)
        __atomic_store_n(&kslot(d->tx, d->slot_size, i)->status, PME_KTX_FREE,
                         __ATOMIC_RELEASE);
    d->tx_cur = first;
    return PME_ERR_DEVICE;
}

static int kernel_fd(struct pme_dev *dev)
{
    return ((struct kernel_dev *)dev)->fd;
}

static uint64_t kernel_overruns(struct pme_dev *dev)
{
    struct kernel_dev *d = (struct kernel_dev *)dev;
    struct pme_kcounters c;
    if (ioctl(d->fd, PME_IOC_COUNTERS, &c) < 0)
        return 0;
    return c.v[PME_KCNT_RX_RING_FULL] + c.v[PME_KCNT_RX_TOO_LONG];
}

static void kernel_close(struct pme_dev *dev)
{
    struct kernel_dev *d = (struct kernel_dev *)dev;
    pme_kzc_free(&d->zc);
    if (d->mem)
        munmap(d->mem, d->mem_len);
    if (d->fd >= 0)
        close(d->fd);
    free(d);
}

int pme_dev_kernel_usable(void)
{
    return faccessat(AT_FDCWD, PME_DEV_PATH, R_OK | W_OK, AT_EACCESS) == 0;
}

static int open_error(int e, char *err, size_t errlen)
{
    if (e == ENOENT || e == ENXIO || e == ENODEV) {
        snprintf(err, errlen,
                 "PME_DEVICE=kernel needs " PME_DEV_PATH ", which does not exist: PME's kernel "
                 "module is not loaded (modprobe pme, once installed from the package pme-dkms "
                 "or PME's source; see pme(7))");
        return PME_ERR_NODEV;
    }
    if (e == EACCES || e == EPERM) {
        snprintf(err, errlen,
                 "no permission to open " PME_DEV_PATH ": add the user to group pme "
                 "(usermod -aG pme USER, then log in again); the udev rule 60-pme.rules gives "
                 "the device to that group (see pme(7))");
        return PME_ERR_PERM;
    }
    snprintf(err, errlen, "cannot open " PME_DEV_PATH ": %s", strerror(e));
    return PME_ERR_DEVICE;
}

/* A parameter of the loaded module, 0 if unknown. */
static unsigned module_parameter(const char *name)
{
    char path[128];
    unsigned v = 0;
    snprintf(path, sizeof(path), "/sys/module/pme/parameters/%s", name);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fscanf(f, "%u", &v) != 1)
            v = 0;
        fclose(f);
    }
    return v;
}

static int bind_error(struct kernel_dev *d, int e, const struct pme_config *cfg, uint16_t ep_id,
                      char *err, size_t errlen)
{
    uint32_t abi = 0;
    switch (e) {
    case EPROTO:
    case ENOTTY:
        if (ioctl(d->fd, PME_IOC_VERSION, &abi) < 0)
            abi = 0;
        snprintf(err, errlen,
                 "the loaded pme.ko speaks ABI version %u, this PME library version %u: load "
                 "the module of the same PME version (pme-dkms, or PME's source), or rebuild "
                 "PME against it",
                 abi, PME_ABI_VERSION);
        return PME_ERR_DEVICE;
    case EBUSY:
        snprintf(err, errlen, "endpoint id %u is already in use on %s (choose another PME_EP_ID)",
                 ep_id, cfg->iface);
        return PME_ERR_BUSY;
    case ENODEV:
        snprintf(err, errlen,
                 "interface \"%s\" does not exist here: check PME_IFACE (pme_info lists the "
                 "interfaces PME can use)",
                 cfg->iface);
        return PME_ERR_NODEV;
    case ENETDOWN:
        return pme_eth_down_error(cfg->iface, err, errlen);
    case EOPNOTSUPP:
        snprintf(err, errlen, "interface %s is not an Ethernet interface", cfg->iface);
        return PME_ERR_NODEV;
    case EPROTONOSUPPORT:
        snprintf(err, errlen,
                 "pme.ko serves EtherType 0x%04x, PME_ETHERTYPE asks for 0x%04x: reload the "
                 "module with ethertype=0x%04x or set PME_ETHERTYPE to match",
                 module_parameter("ethertype"), cfg->ethertype, cfg->ethertype);
        return PME_ERR_INVAL;
    case EDQUOT:
        snprintf(err, errlen,
                 "pme.ko refused the rings of an endpoint on %s: with them, this user's "
                 "endpoints would hold more than the module's user_ring_mb (%u MiB): close "
                 "some, ask for smaller rings (PME_RING), or have root raise "
                 "/sys/module/pme/parameters/user_ring_mb",
                 cfg->iface, module_parameter("user_ring_mb"));
        return PME_ERR_NOMEM;
    case ENOMEM:
        snprintf(err, errlen,
                 "pme.ko found no memory for the rings of an endpoint on %s (they count "
                 "against the memory cgroup's limit, memory.max): ask for smaller rings "
                 "(PME_RING) or raise the limit",
                 cfg->iface);
        return PME_ERR_NOMEM;
    default:
        snprintf(err, errlen, "cannot bind an endpoint of " PME_DEV_PATH " to %s: %s", cfg->iface,
                 strerror(e));
        return PME_ERR_DEVICE;
    }
}

/* Bind; a module of ABI 2 (before zero copy) is bound with that version, zero copy off.
 * Returns 0 or errno. */
static int bind_any_abi(struct kernel_dev *d, struct pme_kbind *b)
{
    uint32_t abi = 0;
    if (ioctl(d->fd, PME_IOC_BIND, b) == 0)
        return 0;
    int e = errno;
    if (e != EPROTO || ioctl(d->fd, PME_IOC_VERSION, &abi) < 0 || abi != 2)
        return e;
    b->abi_version = abi;
    return ioctl(d->fd, PME_IOC_BIND, b) < 0 ? errno : 0;
}

static int bind_and_map(struct kernel_dev *d, const struct pme_config *cfg,
                        const struct pme_dev_who *who, char *err, size_t errlen)
{
    struct pme_kbind b;
    memset(&b, 0, sizeof(b));
    b.abi_version = PME_ABI_VERSION;
    snprintf(b.ifname, sizeof(b.ifname), "%s", cfg->iface);
    b.ep_id = who->ep_id;
    b.ethertype = cfg->ethertype;
    b.job_id = who->job_id;
    b.node_id = who->node ? who->node : PME_NODE_ANY;
    b.incarnation = who->incarnation;
    b.rx_bytes = cfg->ring_bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)cfg->ring_bytes;
    /* The driver answers PINGs and says BYE for us, with the job's own check. */
    b.flags = PME_KBIND_LIVENESS;
    if (who->auth == PME_AUTH_MAC) {
        b.flags |= PME_KBIND_CHECK_MAC;
        memcpy(b.liveness_key, who->mac_key, sizeof(b.liveness_key));
    } else if (who->auth == PME_AUTH_CRC) {
        b.flags |= PME_KBIND_CHECK_CRC;
    }
    int rc = bind_any_abi(d, &b);
    explicit_bzero(b.liveness_key, sizeof(b.liveness_key));
    if (rc)
        return bind_error(d, rc, cfg, who->ep_id, err, errlen);
    void *m = mmap(NULL, (size_t)b.mmap_len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the rings of " PME_DEV_PATH ": %s", strerror(errno));
        return PME_ERR_NOMEM;
    }
    d->mem = m;
    d->mem_len = (size_t)b.mmap_len;
    d->ctl = m;
    d->rx = d->mem + b.rx_offset;
    d->tx = d->mem + b.tx_offset;
    d->rx_slots = b.rx_slots;
    d->tx_slots = b.tx_slots;
    d->slot_size = b.slot_size;
    d->zc.fd = d->fd;
    d->zc.on = b.abi_version >= 3;
    memcpy(d->base.mac, b.mac, 6);
    d->base.mtu = b.mtu;
    return PME_OK;
}

static int kernel_open(struct pme_dev **out, const struct pme_config *cfg, const struct pme_dev_who *who,
                       char *err, size_t errlen)
{
    int rc;
    /* The same checks and messages as the raw-frame devices for a missing or down
     * interface, before the driver is asked. */
    struct kernel_dev *d = pme_eth_dev_new(sizeof(*d), &pme_dev_kernel_ops, cfg->iface, &rc,
                                           err, errlen);
    if (!d)
        return rc;
    d->fd = open(PME_DEV_PATH, O_RDWR | O_CLOEXEC);
    if (d->fd < 0) {
        rc = open_error(errno, err, errlen);
        kernel_close(&d->base);
        return rc;
    }
    rc = bind_and_map(d, cfg, who, err, errlen);
    if (rc) {
        kernel_close(&d->base);
        return rc;
    }
    *out = &d->base;
    return PME_OK;
}

static int kernel_zc_send_begin(struct pme_dev *dev, const void *buf, size_t len)
{
    return pme_kzc_send_begin(&((struct kernel_dev *)dev)->zc, buf, len);
}

static void kernel_zc_send_end(struct pme_dev *dev, const void *buf, size_t len)
{
    pme_kzc_send_end(&((struct kernel_dev *)dev)->zc, buf, len);
}

static int kernel_zc_recv_begin(struct pme_dev *dev, uint32_t key, uint32_t node, uint16_t ep,
                                void *buf, size_t len)
{
    return pme_kzc_recv_begin(&((struct kernel_dev *)dev)->zc, key, node, ep, buf, len);
}

static void kernel_zc_recv_end(struct pme_dev *dev, uint32_t key)
{
    pme_kzc_recv_end(&((struct kernel_dev *)dev)->zc, key);
}

const struct pme_dev_ops pme_dev_kernel_ops = {
    .name = "kernel",
    .open = kernel_open,
    .close = kernel_close,
    .poll = kernel_poll,
    .send = kernel_send,
    .fd = kernel_fd,
    .rx_overruns = kernel_overruns,
    .zc_send_begin = kernel_zc_send_begin,
    .zc_send_end = kernel_zc_send_end,
    .zc_recv_begin = kernel_zc_recv_begin,
    .zc_recv_end = kernel_zc_recv_end,
};
