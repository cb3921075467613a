// SPDX-License-Identifier: BSD-3-Clause
/*
 * kping - send one PING to a PME endpoint from a packet socket and wait for the PONG,
 * which pme.ko makes for an endpoint of the kernel device. The PONG is judged by
 * pme_core's own wire layer (pme_wire_check), so a PONG that passes proves the
 * driver's GMAC or CRC is the one user space computes. The driver answers only peers
 * its endpoint sent to, so kping first says HELLO (authentic, naming its MAC) and waits
 * for the endpoint's process to answer it (with a challenge kping leaves unanswered).
 *
 *   kping IFACE PEER_ADDR [--forge] [--via IFACE2]
 *
 * The job's check comes from the environment as for any PME program (PME_AUTH,
 * PME_JOB_SECRET_FILE, PME_JOB_KEY). --forge spoils the PING's check, as a sender
 * without the key would. --via sends the PING from IFACE2 to the endpoint's second MAC
 * (its second interface, which never sent to kping): the PONG must still come to IFACE,
 * where the endpoint's frames to kping go. Exit status: 0 an authentic kernel PONG came, 1 none came
 * within a second, 3 a PONG came that is not authentic or not the kernel's, 2 usage or
 * no answer to the HELLO.
 * Needs CAP_NET_RAW (tests run it as root in a guest).
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "link.h"
#include "wire.h"

#define TOKEN 0x6b70696e67ull /* "kping" */

static int open_socket(const char *iface, uint16_t ethertype, uint8_t mac[6])
{
    int fd = socket(AF_PACKET, SOCK_RAW, htons(ethertype));
    if (fd < 0) {
        fprintf(stderr, "kping: packet socket: %s (run as root)\n", strerror(errno));
        exit(2);
    }
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
    if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
        fprintf(stderr, "kping: interface %s: %s\n", iface, strerror(errno));
        exit(2);
    }
    memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
    struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ethertype),
                              .sll_ifindex = (int)if_nametoindex(iface)};
    if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
        fprintf(stderr, "kping: bind to %s: %s\n", iface, strerror(errno));
        exit(2);
    }
    return fd;
}

static void send_frame(int fd, const void *buf, size_t len)
{
    if (send(fd, buf, len, 0) != (ssize_t)len) {
        fprintf(stderr, "kping: send: %s\n", strerror(errno));
        exit(2);
    }
}

/* A HELLO of rail 0 that lists our MAC: the endpoint's process challenges it, and so
 * sends us a frame through its kernel, which then knows us and where we are. */
static void send_hello(int fd, const struct pme_wire_keys *k, const struct pme_wire_self *self,
                       const uint8_t mac[6], uint32_t node, uint16_t ep, uint64_t nonce)
{
    uint8_t buf[PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + sizeof(struct pme_wire_hello) + 6];
    struct pme_wire_hdr *wh = pme_wire_start(buf, self, mac, node, ep, PME_T_HELLO,
                                             sizeof(struct pme_wire_hello) + 6);
    wh->job_id = htonl(k->job_id);
    struct pme_wire_hello h = {.chal = htobe64(TOKEN), .first_seq = htonl(1),
                               .max_frame = htons(1500), .nrails = 1};
    memcpy(wh + 1, &h, sizeof(h));
    memcpy((uint8_t *)(wh + 1) + sizeof(h), self->mac, 6);
    struct pme_dev_frame f = {.iov = {{buf, sizeof(buf)}}, .iovcnt = 1};
    pme_wire_seal(k, self, nonce, &f);
    send_frame(fd, buf, sizeof(buf));
}

/* Wait up to a second for an authentic frame of the endpoint; 0 when one came. */
static int await_answer(int fd, const struct pme_wire_keys *k, const struct pme_wire_self *self)
{
    uint64_t end = pme_now_ns() + 1000000000ull;
    uint8_t f[9216];
    for (uint64_t now; (now = pme_now_ns()) < end;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)((end - now) / 1000000u) + 1) <= 0)
            continue;
        ssize_t n = recv(fd, f, sizeof(f), 0);
        if (n > 0 && pme_wire_check(k, self, f, (size_t)n, 9000) == PME_WIRE_OK)
            return 0;
    }
    return -1;
}

static void send_ping(int fd, const struct pme_wire_keys *k, const struct pme_wire_self *self,
                      const uint8_t mac[6], uint32_t node, uint16_t ep, uint64_t nonce, int forge)
{
    uint8_t buf[PME_ETH_HLEN + sizeof(struct pme_wire_hdr) + sizeof(struct pme_wire_ping)];
    struct pme_wire_hdr *wh = pme_wire_start(buf, self, mac, node, ep, PME_T_PING,
                                             sizeof(struct pme_wire_ping));
    wh->job_id = htonl(k->job_id);
    struct pme_wire_ping *ping = (struct pme_wire_ping *)(wh + 1);
    memset(ping, 0, sizeof(*ping));
    ping->token = htobe64(TOKEN);
    struct pme_dev_frame f = {.iov = {{buf, sizeof(buf)}}, .iovcnt = 1};
    pme_wire_seal(k, self, nonce, &f);
    if (forge)
        wh->check[0] ^= 1;
    send_frame(fd, buf, sizeof(buf));
}

/* Wait up to a second for the answer; returns the exit status. */
static int await_pong(int fd, const struct pme_wire_keys *k, const struct pme_wire_self *self)
{
    uint64_t end = pme_now_ns() + 1000000000ull;
    uint8_t f[9216];
    for (uint64_t now; (now = pme_now_ns()) < end;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, (int)((end - now) / 1000000u) + 1) <= 0)
            continue;
        ssize_t n = recv(fd, f, sizeof(f), 0);
        const struct pme_wire_hdr *wh = (const void *)(f + PME_ETH_HLEN);
        if (n < (ssize_t)(PME_ETH_HLEN + sizeof(*wh)) || wh->type != PME_T_PONG ||
            ntohs(wh->dst_ep) != self->ep)
            continue;
        enum pme_wire_verdict v = pme_wire_check(k, self, f, (size_t)n, 9000);
        const struct pme_wire_ping *pong = (const void *)(wh + 1);
        uint64_t nonce = be64toh(wh->nonce);
        if (v != PME_WIRE_OK) {
            printf("kping: a PONG that fails the job's check (verdict %d)\n", v);
            return 3;
        }
        if (!(ntohs(wh->flags) & PME_F_KERNEL) || !(nonce >> 63) ||
            be64toh(pong->token) != TOKEN) {
            printf("kping: a PONG without the kernel's flag and nonce, or another token\n");
            return 3;
        }
        printf("kping: authentic PONG from the kernel of %08x/%u, nonce %#llx\n",
               ntohl(wh->src_node), ntohs(wh->src_ep), (unsigned long long)nonce);
        return 0;
    }
    printf("kping: no PONG within 1 s\n");
    return 1;
}

int main(int argc, char **argv)
{
    int forge = 0;
    const char *via = NULL;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--forge"))
            forge = 1;
        else if (!strcmp(argv[i], "--via") && i + 1 < argc)
            via = argv[++i];
        else
            argc = 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: kping IFACE PEER_ADDR [--forge] [--via IFACE2]\n");
        return 2;
    }
    struct pme_config cfg;
    char err[512];
    pme_config_init(&cfg);
    if (pme_config_from_env(&cfg, err, sizeof(err))) {
        fprintf(stderr, "kping: %s\n", err);
        return 2;
    }
    unsigned version;
    uint32_t node;
    uint16_t ep;
    uint8_t macs[PME_ADDR_MACS][6], *mac = macs[0];
    unsigned nmacs;
    if (pme_addr_parse(argv[2], &version, &node, &ep, macs, &nmacs)) {
        fprintf(stderr, "kping: \"%s\" is not a PME address (pme_perf prints one)\n", argv[2]);
        return 2;
    }
    int auth = cfg.auth == PME_AUTH_AUTO ? (cfg.secret_len ? PME_AUTH_MAC : PME_AUTH_CRC)
                                         : cfg.auth;
    struct pme_wire_keys keys;
    if (pme_wire_keys_init(&keys, auth, cfg.secret, cfg.secret_len, cfg.job_key, err,
                           sizeof(err))) {
        fprintf(stderr, "kping: %s\n", err);
        return 2;
    }
    struct pme_wire_self self = {.ep = 4321, .node = 0x0a0b0c0d, .incarnation = 0x5eed,
                                 .ethertype_be = htons(cfg.ethertype), .hop_limit = 16};
    int fd = open_socket(argv[1], cfg.ethertype, self.mac);
    /* One identity for every run, with nonces that grow from one run to the next: the
     * driver would drop a PING whose nonce it answered already as a copy. */
    uint64_t nonce = pme_now_ns();
    send_hello(fd, &keys, &self, mac, node, ep, nonce);
    if (await_answer(fd, &keys, &self)) {
        printf("kping: the endpoint did not answer our HELLO within 1 s\n");
        return 2;
    }
    if (via && nmacs < 2) {
        fprintf(stderr, "kping: --via needs an endpoint on two interfaces (%s)\n", argv[2]);
        return 2;
    }
    uint8_t via_mac[6];
    int pfd = via ? open_socket(via, cfg.ethertype, via_mac) : fd;
    send_ping(pfd, &keys, &self, via ? macs[1] : mac, node, ep, nonce + 1, forge);
    int rc = await_pong(fd, &keys, &self);
    if (pfd != fd)
        close(pfd);
    close(fd);
    return rc;
}
