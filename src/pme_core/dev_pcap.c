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
#include <errno.h>
#include <net/if.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev.h"
#include "pme_wire.h"

struct pcap_dev {
    struct pme_dev base;
    pcap_t *pc;
    int fd;
    char ifname[IF_NAMESIZE];
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

static int is_full(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS;
}

static int pcap_dev_send(struct pme_dev *dev, const struct pme_dev_frame *frames, int n)
{
    struct pcap_dev *d = (struct pcap_dev *)dev;
    if (n == 1) {
        struct msghdr mh = {.msg_iov = (struct iovec *)frames[0].iov,
                            .msg_iovlen = (size_t)frames[0].iovcnt};
        if (sendmsg(d->fd, &mh, MSG_DONTWAIT) >= 0)
            return 1;
        return is_full(errno) ? 0 : PME_ERR_DEVICE;
    }
    struct mmsghdr mm[64];
    if (n > 64)
        n = 64;
    memset(mm, 0, sizeof(mm[0]) * (size_t)n);
    for (int i = 0; i < n; i++) {
        mm[i].msg_hdr.msg_iov = (struct iovec *)frames[i].iov;
        mm[i].msg_hdr.msg_iovlen = (size_t)frames[i].iovcnt;
    }
    int sent = sendmmsg(d->fd, mm, (unsigned)n, MSG_DONTWAIT);
    if (sent >= 0)
        return sent;
    return is_full(errno) ? 0 : PME_ERR_DEVICE;
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

/* The interface's MAC, MTU and state, with errors a user can act on. */
static int probe_iface(const char *ifname, uint8_t mac[6], unsigned *mtu, char *err,
                       size_t errlen)
{
    if (!ifname || !*ifname) {
        snprintf(err, errlen,
                 "no interface given: set PME_IFACE to the Ethernet interface PME should use "
                 "(pme_info lists them)");
        return PME_ERR_NODEV;
    }
    if (strlen(ifname) >= IF_NAMESIZE || !if_nametoindex(ifname)) {
        snprintf(err, errlen,
                 "interface \"%s\" does not exist here: check PME_IFACE (pme_info lists "
                 "the interfaces PME can use)",
                 ifname);
        return PME_ERR_NODEV;
    }
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        snprintf(err, errlen, "cannot query interface %s: %s", ifname, strerror(errno));
        return PME_ERR_DEVICE;
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
    int rc = PME_OK;
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
        snprintf(err, errlen, "cannot query interface %s: %s", ifname, strerror(errno));
        rc = PME_ERR_DEVICE;
    } else if (!(ifr.ifr_flags & IFF_UP)) {
        snprintf(err, errlen, "interface %s is down: bring it up (ip link set dev %s up)",
                 ifname, ifname);
        rc = PME_ERR_IFDOWN;
    } else if (ioctl(s, SIOCGIFHWADDR, &ifr) < 0 || ifr.ifr_hwaddr.sa_family != 1 /* ARPHRD_ETHER */) {
        snprintf(err, errlen, "interface %s is not an Ethernet interface", ifname);
        rc = PME_ERR_NODEV;
    } else {
        memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
        if (ioctl(s, SIOCGIFMTU, &ifr) < 0) {
            snprintf(err, errlen, "cannot read the MTU of %s: %s", ifname, strerror(errno));
            rc = PME_ERR_DEVICE;
        } else {
            *mtu = (unsigned)ifr.ifr_mtu;
        }
    }
    close(s);
    return rc;
}

static int activate_error(pcap_t *pc, int rc, const char *ifname, char *err, size_t errlen)
{
    switch (rc) {
    case PCAP_ERROR_PERM_DENIED:
        snprintf(err, errlen,
                 "no permission for raw Ethernet frames on %s: run as root, give the program "
                 "CAP_NET_RAW (setcap cap_net_raw+ep <program>), or use the kernel device "
                 "(PME_DEVICE=kernel with PME's kmod/ loaded)",
                 ifname);
        return PME_ERR_PERM;
    case PCAP_ERROR_NO_SUCH_DEVICE:
        snprintf(err, errlen, "interface \"%s\" does not exist: check PME_IFACE", ifname);
        return PME_ERR_NODEV;
    case PCAP_ERROR_IFACE_NOT_UP:
        snprintf(err, errlen, "interface %s is down: bring it up (ip link set dev %s up)",
                 ifname, ifname);
        return PME_ERR_IFDOWN;
    default:
        snprintf(err, errlen, "libpcap cannot open %s: %s", ifname, pcap_geterr(pc));
        return PME_ERR_DEVICE;
    }
}

static int pcap_dev_open(struct pme_dev **out, const struct pme_config *cfg, uint16_t ep_id,
                         char *err, size_t errlen)
{
    char ebuf[PCAP_ERRBUF_SIZE];
    uint8_t mac[6];
    unsigned mtu = 0;
    int rc = probe_iface(cfg->iface, mac, &mtu, err, errlen);
    if (rc)
        return rc;
    struct pcap_dev *d = calloc(1, sizeof(*d));
    if (!d)
        return PME_ERR_NOMEM;
    d->base.ops = &pme_dev_pcap_ops;
    memcpy(d->base.mac, mac, 6);
    d->base.mtu = mtu;
    snprintf(d->ifname, sizeof(d->ifname), "%s", cfg->iface);
    d->pc = pcap_create(cfg->iface, ebuf);
    if (!d->pc) {
        snprintf(err, errlen, "libpcap cannot open %s: %s", cfg->iface, ebuf);
        free(d);
        return PME_ERR_DEVICE;
    }
    pcap_set_snaplen(d->pc, (int)mtu + PME_ETH_HLEN + 4);
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
    snprintf(filter, sizeof(filter),
             "ether proto 0x%04x and ether dst %02x:%02x:%02x:%02x:%02x:%02x and "
             "ether[%d:2] = %u",
             cfg->ethertype, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5],
             PME_WIRE_OFF_DST_EP, ep_id);
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
