/* dev_eth.c - the parts the libpcap and packet-ring devices share (see dev_eth.h). */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev_eth.h"
#include "pme_wire.h"

int pme_eth_probe(const char *ifname, uint8_t mac[6], unsigned *mtu, char *err,
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
        rc = pme_eth_down_error(ifname, err, errlen);
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

void *pme_eth_dev_new(size_t size, const struct pme_dev_ops *ops, const char *ifname,
                      int *rc, char *err, size_t errlen)
{
    uint8_t mac[6];
    unsigned mtu = 0;
    *rc = pme_eth_probe(ifname, mac, &mtu, err, errlen);
    if (*rc)
        return NULL;
    struct pme_dev *d = calloc(1, size);
    if (!d) {
        snprintf(err, errlen, "out of memory opening %s", ifname);
        *rc = PME_ERR_NOMEM;
        return NULL;
    }
    d->ops = ops;
    memcpy(d->mac, mac, 6);
    d->mtu = mtu;
    return d;
}

void pme_eth_filter_expr(char *out, size_t outlen, uint16_t ethertype, const uint8_t mac[6],
                         uint16_t ep_id)
{
    snprintf(out, outlen,
             "ether proto 0x%04x and ether dst %02x:%02x:%02x:%02x:%02x:%02x and "
             "ether[%d:2] = %u",
             ethertype, mac[0], mac[1], mac[2], mac[3], mac[4], mac[5], PME_WIRE_OFF_DST_EP,
             ep_id);
}

int pme_eth_perm_error(const char *ifname, char *err, size_t errlen)
{
    snprintf(err, errlen,
             "no permission for raw Ethernet frames on %s: run as root, give the program "
             "CAP_NET_RAW (setcap cap_net_raw+ep <program>), or use the kernel device "
             "(PME_DEVICE=kernel with PME's kmod/ loaded)",
             ifname);
    return PME_ERR_PERM;
}

int pme_eth_down_error(const char *ifname, char *err, size_t errlen)
{
    snprintf(err, errlen, "interface %s is down: bring it up (ip link set dev %s up)", ifname,
             ifname);
    return PME_ERR_IFDOWN;
}

static int is_full(int e)
{
    return e == EAGAIN || e == EWOULDBLOCK || e == ENOBUFS;
}

int pme_eth_send(int fd, const struct pme_dev_frame *frames, int n)
{
    if (n == 1) {
        struct msghdr mh = {.msg_iov = (struct iovec *)frames[0].iov,
                            .msg_iovlen = (size_t)frames[0].iovcnt};
        if (sendmsg(fd, &mh, MSG_DONTWAIT) >= 0)
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
    int sent = sendmmsg(fd, mm, (unsigned)n, MSG_DONTWAIT);
    if (sent >= 0)
        return sent;
    return is_full(errno) ? 0 : PME_ERR_DEVICE;
}
