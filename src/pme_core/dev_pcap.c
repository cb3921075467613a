// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_pcap.c - raw frames from user space through libpcap.
 *
 * Receive: libpcap's memory-mapped ring in immediate mode (no batching delay), with a
 * kernel-side BPF filter on PME's EtherType, this interface's MAC and this endpoint's
 * id, so that of P processes sharing a NIC each wakes only for its own frames.
 * Send: gathered straight from the caller's buffers with sendmsg()/sendmmsg() on the
 * socket libpcap opened (already bound to the interface), without blocking: a full
 * device is reported so the transport can wait for room.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev_eth.h"

struct pcap_dev {
    struct pme_dev base;
    pcap_t *pc;
    int fd;
};

struct dispatch_ctx {
    pme_rx_fn fn;
    void *arg;
};

static void on_packet(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
    struct dispatch_ctx *c = (struct dispatch_ctx *)user;
    c->fn(c->arg, bytes, h->caplen);
}

static int pcap_dev_poll(struct pme_dev *dev, int max, pme_rx_fn fn, void *arg)
{
    struct pcap_dev *d = (struct pcap_dev *)dev;
    struct dispatch_ctx c = {fn, arg};
    int n = pcap_dispatch(d->pc, max, on_packet, (u_char *)&c);
    return n >= 0 ? n : PME_ERR_DEVICE;
}

static int pcap_dev_send(struct pme_dev *dev, const struct pme_dev_frame *frames, int n)
{
    return pme_eth_send(((struct pcap_dev *)dev)->fd, frames, n);
}

static int pcap_dev_fd(struct pme_dev *dev)
{
    return ((struct pcap_dev *)dev)->fd;
}

static uint64_t pcap_dev_overruns(struct pme_dev *dev)
{
    struct pcap_stat st;
    struct pcap_dev *d = (struct pcap_dev *)dev;
    return pcap_stats(d->pc, &st) == 0 ? st.ps_drop : 0;
}

static void pcap_dev_close(struct pme_dev *dev)
{
    struct pcap_dev *d = (struct pcap_dev *)dev;
    if (d->pc)
        pcap_close(d->pc);
    free(d);
}

static int activate_error(pcap_t *pc, int rc, const char *ifname, char *err, size_t errlen)
{
    switch (rc) {
    case PCAP_ERROR_PERM_DENIED:
        return pme_eth_perm_error(ifname, err, errlen);
    case PCAP_ERROR_NO_SUCH_DEVICE:
        snprintf(err, errlen, "interface \"%s\" does not exist: check PME_IFACE", ifname);
        return PME_ERR_NODEV;
    case PCAP_ERROR_IFACE_NOT_UP:
        return pme_eth_down_error(ifname, err, errlen);
    default:
        snprintf(err, errlen, "libpcap cannot open %s: %s", ifname, pcap_geterr(pc));
        return PME_ERR_DEVICE;
    }
}

static int pcap_dev_open(struct pme_dev **out, const struct pme_config *cfg, const struct pme_dev_who *who,
                         char *err, size_t errlen)
{
    char ebuf[PCAP_ERRBUF_SIZE];
    int rc;
    struct pcap_dev *d = pme_eth_dev_new(sizeof(*d), &pme_dev_pcap_ops, cfg->iface, &rc, err,
                                         errlen);
    if (!d)
        return rc;
    d->pc = pcap_create(cfg->iface, ebuf);
    if (!d->pc) {
        snprintf(err, errlen, "libpcap cannot open %s: %s", cfg->iface, ebuf);
        free(d);
        return PME_ERR_DEVICE;
    }
    pcap_set_snaplen(d->pc, (int)PME_ETH_SNAPLEN(d->base.mtu));
    pcap_set_promisc(d->pc, 0);
    pcap_set_immediate_mode(d->pc, 1);
    /* The socket stays one of every protocol (no pcap_set_protocol_linux): only such a
     * socket also gets the frames this host sends, which is how two endpoints on one
     * interface (processes of one node talking over PME) reach each other. */
    if (cfg->ring_bytes)
        pcap_set_buffer_size(d->pc, (int)(cfg->ring_bytes > (1u << 30) ? 1u << 30
                                                                        : cfg->ring_bytes));
    rc = pcap_activate(d->pc);
    if (rc < 0) {
        rc = activate_error(d->pc, rc, cfg->iface, err, errlen);
        pcap_dev_close(&d->base);
        return rc;
    }
    char filter[160];
    pme_eth_filter_expr(filter, sizeof(filter), cfg->ethertype, d->base.mac, who->ep_id);
    struct bpf_program prog;
    if (pcap_compile(d->pc, &prog, filter, 1, PCAP_NETMASK_UNKNOWN) < 0 ||
        pcap_setfilter(d->pc, &prog) < 0) {
        snprintf(err, errlen, "cannot install the frame filter on %s: %s", cfg->iface,
                 pcap_geterr(d->pc));
        pcap_dev_close(&d->base);
        return PME_ERR_DEVICE;
    }
    pcap_freecode(&prog);
    if (pcap_setnonblock(d->pc, 1, ebuf) < 0) {
        snprintf(err, errlen, "libpcap on %s: %s", cfg->iface, ebuf);
        pcap_dev_close(&d->base);
        return PME_ERR_DEVICE;
    }
    d->fd = pcap_get_selectable_fd(d->pc);
    *out = &d->base;
    return PME_OK;
}

const struct pme_dev_ops pme_dev_pcap_ops = {
    .name = "pcap",
    .open = pcap_dev_open,
    .close = pcap_dev_close,
    .poll = pcap_dev_poll,
    .send = pcap_dev_send,
    .fd = pcap_dev_fd,
    .rx_overruns = pcap_dev_overruns,
};
