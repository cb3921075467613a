// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_txring.c - sending through a packet TX ring (PACKET_TX_RING) past the interface's
 * queueing discipline (PACKET_QDISC_BYPASS).
 *
 * Why: one sendmsg() per frame costs a system call, an skb with its data copied from
 * the caller, the queueing discipline's locks and, on a socket of every protocol, a
 * clone of the frame for each packet tap of the interface. With a TX ring the frames
 * are written into memory the kernel shares with us, and one send() hands the kernel all
 * of them: it attaches the ring's pages to its skbs instead of copying, and gives them
 * straight to the driver. A slot is ours again once the driver has freed its skb (on a
 * veth pair: once the receiver's socket has copied the frame).
 *
 * The ring lives on a socket of its own that receives nothing: a socket with a TX ring
 * sends only from it (sendmsg's data is ignored), and frames that must go through the
 * queueing discipline (a shaper, a fault injector, frames to this host's own packet
 * sockets) still go with sendmsg() on the device's receiving socket. Why only past the
 * queueing discipline: a frame the discipline drops from the ring is lost without a
 * word, where sendmsg() says ENOBUFS and the transport waits for room.
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev_eth.h"

struct pme_txring {
    int fd;
    uint8_t *base;
    size_t len;
    size_t block_size;
    unsigned frame_size;
    unsigned frames_per_block;
    unsigned nframes;
    unsigned cur;           /* the next slot to fill */
    bool pending;           /* frames the kernel left in the ring at the last kick */
};

/* Where the kernel reads a frame in its slot: right after the slot's header (the
 * default without PACKET_TX_HAS_OFF). */
#define TX_DATA_OFF TPACKET_ALIGN(sizeof(struct tpacket2_hdr))

void pme_txring_close(struct pme_txring *t)
{
    if (!t)
        return;
    if (t->base)
        munmap(t->base, t->len);
    if (t->fd >= 0)
        close(t->fd);
    free(t);
}

/* The ring's geometry for about `bytes` of frames of snaplen. */
static struct tpacket_req geometry(struct pme_txring *t, size_t bytes, unsigned snaplen)
{
    t->frame_size = TPACKET_ALIGN(TX_DATA_OFF + snaplen);
    struct pme_eth_ring_shape g = pme_eth_ring_shape(t->frame_size, bytes);
    t->block_size = g.block_size;
    t->frames_per_block = g.frames_per_block;
    t->nframes = g.nframes;
    t->len = (size_t)g.nblocks * g.block_size;
    return (struct tpacket_req){
        .tp_block_size = (unsigned)t->block_size,
        .tp_block_nr = g.nblocks,
        .tp_frame_size = t->frame_size,
        .tp_frame_nr = t->nframes,
    };
}

struct pme_txring *pme_txring_open(const char *ifname, size_t bytes, unsigned snaplen,
                                   char *err, size_t errlen)
{
    struct pme_txring *t = calloc(1, sizeof(*t));
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    /* Protocol 0: it receives nothing. */
    t->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
    struct tpacket_req req = geometry(t, bytes, snaplen);
    struct sockaddr_ll sll = {.sll_family = AF_PACKET,
                              .sll_ifindex = (int)if_nametoindex(ifname)};
    int version = TPACKET_V2, one = 1;
    const char *step = NULL;
    if (t->fd < 0)
        step = "socket";
    else if (setsockopt(t->fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0)
        step = "TPACKET_V2";
    /* A frame the kernel cannot send is skipped rather than left to block the ring
     * (Go-Back-N sends it again); this must come before the ring. */
    else if (setsockopt(t->fd, SOL_PACKET, PACKET_LOSS, &one, sizeof(one)) < 0)
        step = "PACKET_LOSS";
    else if (setsockopt(t->fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) < 0)
        step = "PACKET_TX_RING";
    else if (setsockopt(t->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) < 0)
        step = "PACKET_QDISC_BYPASS";
    else if (bind(t->fd, (struct sockaddr *)&sll, sizeof(sll)) < 0)
        step = "bind";
    if (!step) {
        void *m = mmap(NULL, t->len, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
        if (m == MAP_FAILED)
            step = "mmap";
        else
            t->base = m;
    }
    if (step) {
        snprintf(err, errlen, "no %zu-byte packet TX ring on %s (%s: %s)", t->len, ifname, step,
                 strerror(errno));
        pme_txring_close(t);
        return NULL;
    }
    /* The frames in flight are charged to the socket's send buffer: let it hold the
     * whole ring where we may (SO_SNDBUFFORCE needs CAP_NET_ADMIN; the plain option is
     * capped by net.core.wmem_max). */
    int want = (int)t->len;
    if (setsockopt(t->fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof(want)) < 0)
        setsockopt(t->fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof(want));
    return t;
}

int pme_txring_fd(const struct pme_txring *t)
{
    return t->fd;
}

static struct tpacket2_hdr *tx_slot(const struct pme_txring *t, unsigned i)
{
    size_t block = i / t->frames_per_block, in_block = i % t->frames_per_block;
    return (struct tpacket2_hdr *)(t->base + block * t->block_size +
                                   in_block * (size_t)t->frame_size);
}

static int is_full(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS;
}

/* Ask the kernel to send every slot marked for sending. What it leaves (its send buffer
 * was full) stays marked and goes with the next kick. */
static int kick(struct pme_txring *t)
{
    int rc = 0;
    if (send(t->fd, NULL, 0, MSG_DONTWAIT) < 0 && !is_full(errno))
        rc = PME_ERR_DEVICE;
    unsigned last = t->cur ? t->cur - 1 : t->nframes - 1;
    t->pending = __atomic_load_n(&tx_slot(t, last)->tp_status, __ATOMIC_ACQUIRE) ==
                 TP_STATUS_SEND_REQUEST;
    return rc;
}

bool pme_txring_pending(const struct pme_txring *t)
{
    return t->pending;
}

void pme_txring_kick_pending(struct pme_txring *t)
{
    if (t->pending)
        kick(t);
}

static size_t frame_bytes(const struct pme_dev_frame *f)
{
    size_t len = 0;
    for (int i = 0; i < f->iovcnt; i++)
        len += f->iov[i].iov_len;
    return len;
}

int pme_txring_send(struct pme_txring *t, const struct pme_dev_frame *frames, int n)
{
    int queued = 0;
    for (; queued < n; queued++) {
        const struct pme_dev_frame *f = &frames[queued];
        struct tpacket2_hdr *h = tx_slot(t, t->cur);
        /* Acquire: the slot is ours once the kernel says so, and not before. */
        if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE)
            break;
        size_t len = frame_bytes(f);
        if (TX_DATA_OFF + len > t->frame_size)
            break; /* longer than the interface's MTU: the kernel would refuse it too */
        uint8_t *p = (uint8_t *)h + TX_DATA_OFF;
        for (int i = 0; i < f->iovcnt; i++) {
            memcpy(p, f->iov[i].iov_base, f->iov[i].iov_len);
            p += f->iov[i].iov_len;
        }
        h->tp_len = (unsigned)len;
        /* Release: the frame's bytes before the word that hands them over. */
        __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
        t->cur = t->cur + 1 == t->nframes ? 0 : t->cur + 1;
    }
    int rc = kick(t);
    return rc && !queued ? rc : queued;
}
