// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_ring.c - raw frames through a packet ring that PME maps and reads itself.
 *
 * Why not libpcap here: libpcap's non-blocking read makes a poll() system call every
 * time it finds its ring empty (to notice an interface that went away), and that poll
 * takes the socket's receive-queue lock, the lock the kernel needs to put the next
 * frame into the ring. A process spinning on an empty ring so slows the very delivery
 * it waits for. This device sets up the same kind of ring (TPACKET_V2 on an AF_PACKET
 * socket), checks the status word of the next slot in memory, and makes no system call
 * while it waits; sleeping is poll() on the socket as before. libpcap still compiles the
 * kernel-side frame filter. Sends go through a TX ring past the interface's queueing
 * discipline where that discipline only queues (dev_txring.c: one system call for a
 * batch, no copy in the kernel), else with the same gathered sendmsg() as the pcap
 * device's. A process without CAP_NET_RAW gets its socket from PME's broker,
 * pme_rawsock (and sends with sendmsg(): the TX ring needs a socket of our own).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev_eth.h"

/* Consecutive empty polls between two looks at the socket's error (its interface went
 * down): rare enough to cost nothing when spinning. Reading the error also clears it; a
 * socket with a pending error polls ready at once, so a sleeping endpoint would
 * otherwise wake without end until its peers time out. */
#define ERROR_CHECK_EVERY 1024u

struct ring_dev {
    struct pme_dev base;
    int fd;
    uint8_t *ring;
    size_t ring_len;
    size_t block_size;
    unsigned frame_size;
    unsigned frames_per_block;
    unsigned nframes;
    unsigned cur; /* the next slot to look at */
    unsigned empty_polls;
    uint64_t drops; /* the kernel's count resets on every read: kept here */
    struct pme_txring *tx;  /* NULL: every frame goes with sendmsg() */
    bool bypass_auto;       /* PME_QDISC_BYPASS=auto: follow what the egress holds */
    bool bypassing;         /* frames to others go through tx */
    char ifname[IF_NAMESIZE];
};

static struct tpacket2_hdr *slot(const struct ring_dev *d, unsigned i)
{
    size_t block = i / d->frames_per_block, in_block = i % d->frames_per_block;
    return (struct tpacket2_hdr *)(d->ring + block * d->block_size +
                                   in_block * (size_t)d->frame_size);
}

static int socket_error(struct ring_dev *d)
{
    int e = 0;
    socklen_t len = sizeof(e);
    if (getsockopt(d->fd, SOL_SOCKET, SO_ERROR, &e, &len) < 0)
        e = errno;
    return e;
}

static int ring_dev_poll(struct pme_dev *dev, int max, pme_rx_fn fn, void *arg)
{
    struct ring_dev *d = (struct ring_dev *)dev;
    int n = 0;
    while (n < max) {
        struct tpacket2_hdr *h = slot(d, d->cur);
        /* Acquire: the frame's bytes are the kernel's until this word says otherwise. */
        if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
            break;
        if ((size_t)h->tp_mac + h->tp_snaplen <= d->frame_size)
            fn(arg, (const uint8_t *)h + h->tp_mac, h->tp_snaplen);
        /* Release: the slot goes back to the kernel after we are done reading it. */
        __atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        d->cur = d->cur + 1 == d->nframes ? 0 : d->cur + 1;
        n++;
    }
    if (d->tx)
        pme_txring_kick_pending(d->tx);
    if (n) {
        d->empty_polls = 0;
    } else if (++d->empty_polls >= ERROR_CHECK_EVERY) {
        d->empty_polls = 0;
        if (socket_error(d))
            return PME_ERR_DEVICE;
    }
    return n;
}

/* Frames to this interface's own MAC are for another endpoint of this host: only frames
 * that pass the egress path reach the packet sockets here. */
static bool to_this_host(const struct ring_dev *d, const struct pme_dev_frame *f)
{
    return !memcmp(f->iov[0].iov_base, d->base.mac, 6);
}

static int ring_dev_send(struct pme_dev *dev, const struct pme_dev_frame *frames, int n)
{
    struct ring_dev *d = (struct ring_dev *)dev;
    /* A batch goes to one peer: all of it to this host, or none. */
    if (!d->bypassing || to_this_host(d, &frames[0]))
        return pme_eth_send(d->fd, frames, n);
    return pme_txring_send(d->tx, frames, n);
}

static int ring_dev_fd(struct pme_dev *dev)
{
    return ((struct ring_dev *)dev)->fd;
}

/* A full device has room again when its TX ring has (or the socket's send buffer).
 * Frames left in the TX ring (the kernel's send buffer was full) go once it has room:
 * sleep until then, not until the next frame arrives. */
static int ring_dev_tx_fd(struct pme_dev *dev, bool blocked)
{
    struct ring_dev *d = (struct ring_dev *)dev;
    if (d->tx && pme_txring_pending(d->tx))
        return pme_txring_fd(d->tx);
    if (!blocked)
        return -1;
    return d->bypassing ? pme_txring_fd(d->tx) : d->fd;
}

static uint64_t ring_dev_overruns(struct pme_dev *dev)
{
    struct ring_dev *d = (struct ring_dev *)dev;
    struct tpacket_stats st;
    socklen_t len = sizeof(st);
    if (getsockopt(d->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
        d->drops += st.tp_drops;
    return d->drops;
}

static void ring_dev_close(struct pme_dev *dev)
{
    struct ring_dev *d = (struct ring_dev *)dev;
    if (d->ring)
        munmap(d->ring, d->ring_len);
    if (d->fd >= 0)
        close(d->fd);
    pme_txring_close(d->tx);
    free(d);
}

/* Hand the kernel the filter libpcap compiles for our frames. libpcap's instructions
 * have the layout of the kernel's classic BPF (struct sock_filter); the program header
 * below is struct sock_fprog's, declared here so that the kernel's BPF header and
 * libpcap's need not meet in one file. */
static int attach_filter(struct ring_dev *d, const struct pme_config *cfg, uint16_t ep_id,
                         unsigned snaplen, char *err, size_t errlen)
{
    char expr[160];
    pme_eth_filter_expr(expr, sizeof(expr), cfg->ethertype, d->base.mac, ep_id);
    pcap_t *dead = pcap_open_dead(DLT_EN10MB, (int)snaplen);
    if (!dead) {
        snprintf(err, errlen, "libpcap cannot compile the frame filter (out of memory)");
        return PME_ERR_NOMEM;
    }
    struct bpf_program prog;
    int rc = PME_OK;
    if (pcap_compile(dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
        snprintf(err, errlen, "cannot compile the frame filter: %s", pcap_geterr(dead));
        rc = PME_ERR_DEVICE;
    } else {
        struct {
            unsigned short len;
            struct bpf_insn *filter;
        } fprog = {(unsigned short)prog.bf_len, prog.bf_insns};
        if (setsockopt(d->fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog)) < 0) {
            snprintf(err, errlen, "cannot install the frame filter on %s: %s", cfg->iface,
                     strerror(errno));
            rc = PME_ERR_DEVICE;
        }
        pcap_freecode(&prog);
    }
    pcap_close(dead);
    return rc;
}

/* A ring of whole frames of the interface's MTU, about cfg->ring_bytes in all. Blocks
 * hold several frames each so that jumbo frames do not waste half a block. */
static int map_ring(struct ring_dev *d, const struct pme_config *cfg, unsigned snaplen,
                    char *err, size_t errlen)
{
    int version = TPACKET_V2;
    if (setsockopt(d->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0) {
        snprintf(err, errlen, "the kernel has no TPACKET_V2 packet rings: %s (use PME_DEVICE=pcap)",
                 strerror(errno));
        return PME_ERR_DEVICE;
    }
    /* Where the kernel puts a raw frame in its slot: after the slot header and the
     * link-layer address, aligned. */
    unsigned mac_off = TPACKET_ALIGN(TPACKET2_HDRLEN + 16);
    d->frame_size = TPACKET_ALIGN(mac_off + snaplen);
    struct pme_eth_ring_shape g =
        pme_eth_ring_shape(d->frame_size, cfg->ring_bytes ? cfg->ring_bytes : 16u << 20);
    d->block_size = g.block_size;
    d->frames_per_block = g.frames_per_block;
    d->nframes = g.nframes;
    size_t nblocks = g.nblocks;
    struct tpacket_req req = {
        .tp_block_size = (unsigned)d->block_size,
        .tp_block_nr = (unsigned)nblocks,
        .tp_frame_size = d->frame_size,
        .tp_frame_nr = d->nframes,
    };
    if (setsockopt(d->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)) < 0) {
        snprintf(err, errlen, "cannot set up a %zu-byte packet ring: %s (try a smaller PME_RING)",
                 nblocks * d->block_size, strerror(errno));
        return errno == ENOMEM ? PME_ERR_NOMEM : PME_ERR_DEVICE;
    }
    d->ring_len = nblocks * d->block_size;
    void *m = mmap(NULL, d->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the packet ring: %s", strerror(errno));
        return PME_ERR_NOMEM;
    }
    d->ring = m;
    return PME_OK;
}

/* Our own packet socket, or, without CAP_NET_RAW, one from PME's broker: that one comes
 * bound, with a filter as narrow as attach_filter's that nobody can change. */
static int open_socket(struct ring_dev *d, const struct pme_config *cfg, uint16_t ep_id,
                       int *brokered, char *err, size_t errlen)
{
    /* Protocol 0: the socket takes no frames until it is bound, after the filter is in. */
    d->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    *brokered = 0;
    if (d->fd >= 0)
        return PME_OK;
    if (errno != EPERM && errno != EACCES) {
        snprintf(err, errlen, "cannot open a packet socket: %s", strerror(errno));
        return PME_ERR_DEVICE;
    }
    char why[320];
    d->fd = pme_eth_broker_socket(cfg->iface, cfg->ethertype, ep_id, why, sizeof(why));
    if (d->fd < 0)
        return pme_eth_perm_error_why(cfg->iface, why, err, errlen);
    *brokered = 1;
    return PME_OK;
}

/* Every protocol, like libpcap's socket: only such a socket also gets the frames this
 * host sends, which is how two endpoints on one interface reach each other. */
static int bind_socket(struct ring_dev *d, const struct pme_config *cfg, char *err,
                       size_t errlen)
{
    struct sockaddr_ll sll = {.sll_family = AF_PACKET,
                              .sll_protocol = htons(ETH_P_ALL),
                              .sll_ifindex = (int)if_nametoindex(cfg->iface)};
    if (bind(d->fd, (struct sockaddr *)&sll, sizeof(sll)) == 0)
        return PME_OK;
    if (errno == ENETDOWN)
        return pme_eth_down_error(cfg->iface, err, errlen);
    snprintf(err, errlen, "cannot bind a packet socket to %s: %s", cfg->iface,
             strerror(errno));
    return PME_ERR_DEVICE;
}

/* The TX ring when the configuration allows it and the socket is our own (auto: used
 * while the interface's egress only queues). Without one (an old kernel, no memory, a
 * socket from the broker), frames go with sendmsg() as before: slower, never wrong.
 * Only PME_QDISC_BYPASS=1, which asks for the bypass outright, makes that an error. */
static int open_tx_ring(struct ring_dev *d, const struct pme_config *cfg, unsigned snaplen,
                        int brokered, char *err, size_t errlen)
{
    bool forced = cfg->qdisc_bypass == PME_BYPASS_ON;
    char why[200] = "";
    if (cfg->qdisc_bypass == PME_BYPASS_OFF)
        return 0;
    if (!cfg->tx_ring_bytes)
        snprintf(why, sizeof(why), "PME_TX_RING is 0");
    else if (brokered)
        snprintf(why, sizeof(why), "a socket from the broker pme_rawsock cannot have one");
    else
        d->tx = pme_txring_open(cfg->iface, cfg->tx_ring_bytes, snaplen, why, sizeof(why));
    if (!d->tx) {
        if (!forced)
            return 0;
        snprintf(err, errlen,
                 "PME_QDISC_BYPASS=1 sends through a packet TX ring, and there is none: %s "
                 "(PME_QDISC_BYPASS=auto sends with sendmsg() instead)",
                 why);
        return PME_ERR_DEVICE;
    }
    snprintf(d->ifname, sizeof(d->ifname), "%s", cfg->iface);
    d->bypass_auto = !forced;
    d->bypassing = forced || pme_eth_egress_plain(d->ifname);
    return 0;
}

/* A shaper or a fault injector put on the interface after we opened takes effect within
 * a recheck period: frames go through it from then on. */
static void ring_dev_recheck(struct pme_dev *dev)
{
    struct ring_dev *d = (struct ring_dev *)dev;
    if (d->tx && d->bypass_auto)
        d->bypassing = pme_eth_egress_plain(d->ifname);
}

static int ring_dev_open(struct pme_dev **out, const struct pme_config *cfg,
                         const struct pme_dev_who *who,
                         char *err, size_t errlen)
{
    int rc, brokered;
    struct ring_dev *d = pme_eth_dev_new(sizeof(*d), &pme_dev_ring_ops, cfg->iface, &rc, err,
                                         errlen);
    if (!d)
        return rc;
    unsigned snaplen = PME_ETH_SNAPLEN(d->base.mtu);
    rc = open_socket(d, cfg, who->ep_id, &brokered, err, errlen);
    if (!rc && !brokered)
        rc = attach_filter(d, cfg, who->ep_id, snaplen, err, errlen);
    if (!rc)
        rc = map_ring(d, cfg, snaplen, err, errlen);
    if (!rc && !brokered)
        rc = bind_socket(d, cfg, err, errlen);
    if (!rc)
        rc = open_tx_ring(d, cfg, snaplen, brokered, err, errlen);
    if (rc) {
        ring_dev_close(&d->base);
        return rc;
    }
    *out = &d->base;
    return PME_OK;
}

const struct pme_dev_ops pme_dev_ring_ops = {
    .name = "ring",
    .open = ring_dev_open,
    .close = ring_dev_close,
    .poll = ring_dev_poll,
    .send = ring_dev_send,
    .fd = ring_dev_fd,
    .rx_overruns = ring_dev_overruns,
    .recheck = ring_dev_recheck,
    .tx_fd = ring_dev_tx_fd,
};
