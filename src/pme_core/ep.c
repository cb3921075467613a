// SPDX-License-Identifier: BSD-3-Clause
/*
 * ep.c - endpoints: opening (the device, the endpoint's identity on the wire, its keys)
 * and closing, and what does not change while one is open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/epoll.h>

#include "counters.h"
#include "crc32c.h"
#include "dev_eth.h"
#include "env_vars.h"
#include "iflist.h"
#include "msg.h"
#include "progress.h"
#include "rma.h"

/* RTS frames carry the user header whole; keep it within a standard 1500-byte frame
 * so that peers with smaller MTUs can still take it. */
#define MAX_HDR (1500 - sizeof(struct pme_wire_hdr) - sizeof(struct pme_wire_rts))

/* ---- what does not change while the endpoint is open ---- */

int pme_ep_addr(pme_ep_t *ep, char *buf, size_t len)
{
    uint8_t macs[PME_MAX_DEVS][6];
    for (unsigned k = 0; k < ep->nrails; k++)
        memcpy(macs[k], ep->devs[k]->mac, 6);
    return pme_addr_format(&ep->self, (const uint8_t (*)[6])macs, ep->nrails, buf, len);
}

const char *pme_ep_last_error(pme_ep_t *ep)
{
    return ep->err;
}

size_t pme_ep_max_hdr(pme_ep_t *ep)
{
    return ep->max_hdr;
}

size_t pme_ep_eager_max(pme_ep_t *ep)
{
    return ep->cfg.eager_max;
}

unsigned pme_ep_mtu(pme_ep_t *ep)
{
    return ep->mtu;
}

const char *pme_ep_device(pme_ep_t *ep)
{
    return ep->dev->ops->name;
}

int pme_ep_fd(pme_ep_t *ep)
{
    return pme_ep_wait_fd(ep);
}

size_t pme_peer_state_bytes(void)
{
    return sizeof(struct pme_peer) + sizeof(struct pme_peer_counters) + sizeof(uint32_t) * 2;
}

int pme_ep_auth(pme_ep_t *ep)
{
    return ep->keys.auth;
}

void pme_loop_wire_cut(struct pme_loop_wire *wire, pme_ep_t *ep)
{
    pme_loop_wire_cut_iface(wire, ep, 0);
}

void pme_loop_wire_cut_iface(struct pme_loop_wire *wire, pme_ep_t *ep, unsigned i)
{
    (void)wire;
    if (i < ep->ndev && ep->devs[i]->ops == &pme_dev_loop_ops)
        pme_dev_loop_cut(ep->devs[i]);
}

/* ---- opening ---- */

static int validate(const struct pme_config *cfg, char *err, size_t errlen)
{
    if (cfg->window < 1 || cfg->window > 4096) {
        snprintf(err, errlen, "window %u is out of range (1 to 4096 frames)", cfg->window);
        return PME_ERR_INVAL;
    }
    if (cfg->ethertype < 0x0600) {
        snprintf(err, errlen, "EtherType 0x%04x is a length, not a type (need >= 0x0600)",
                 cfg->ethertype);
        return PME_ERR_INVAL;
    }
    if (cfg->ep_id > PME_EP_ID_MAX) {
        snprintf(err, errlen, "endpoint id %d is out of range (0 to %d)", cfg->ep_id,
                 PME_EP_ID_MAX);
        return PME_ERR_INVAL;
    }
    if (cfg->eager_max > UINT32_MAX / 2 || cfg->rto_us == 0 || cfg->peer_timeout_ms == 0 ||
        cfg->rail_timeout_ms == 0) {
        snprintf(err, errlen, "eager_max, rto_us, peer_timeout_ms or rail_timeout_ms is out of "
                 "range");
        return PME_ERR_INVAL;
    }
    if (cfg->node_id == PME_NODE_ANY || cfg->hop_limit == 0) {
        snprintf(err, errlen, "node id 0x%08x or hop limit %u is out of range", cfg->node_id,
                 cfg->hop_limit);
        return PME_ERR_INVAL;
    }
    return PME_OK;
}

/* A node id where none was given: a hash of the interface's MAC, so that every process
 * using the interface agrees without being told (route tables, which need ids the
 * administrator chose, give them explicitly). Never 0 or PME_NODE_ANY. */
static uint32_t node_from_mac(const uint8_t mac[6])
{
    uint32_t n = pme_crc32c(0, mac, 6);
    return n == 0 || n == PME_NODE_ANY ? 1 : n;
}

/* The node id a device that stamps sources must know at open: the one given, the route
 * file's, or the hash of the first interface's MAC (0 when there is no interface to
 * ask: the loop device). */
static uint32_t node_before_open(const struct pme_ep *ep, const char *first_iface)
{
    uint8_t mac[6];
    unsigned mtu;
    char err[8];
    if (ep->cfg.node_id)
        return ep->cfg.node_id;
    if (ep->routes.present)
        return ep->routes.node;
    if (!first_iface || pme_eth_probe(first_iface, mac, &mtu, err, sizeof(err)))
        return 0;
    return node_from_mac(mac);
}

/* Who we are on the wire, once the device told us our MAC and MTU. */
static int set_identity(struct pme_ep *ep, char *err, size_t errlen)
{
    ep->mtu = ep->dev->mtu;
    for (unsigned i = 1; i < ep->ndev; i++)
        if (ep->devs[i]->mtu < ep->mtu)
            ep->mtu = ep->devs[i]->mtu; /* fragments must fit whichever way they go */
    if (ep->cfg.mtu) {
        if (ep->cfg.mtu > ep->mtu) {
            const char *ifn = ep->cfg_iface ? ep->cfg_iface : "(loop)";
            snprintf(err, errlen,
                     "PME_MTU %u is larger than the MTU %u of interface %s: raise the "
                     "interface's MTU (ip link set dev %s mtu %u) or lower PME_MTU",
                     ep->cfg.mtu, ep->mtu, ifn, ifn, ep->cfg.mtu);
            return PME_ERR_INVAL;
        }
        ep->mtu = ep->cfg.mtu;
    }
    if (ep->mtu > 65535)
        ep->mtu = 65535;
    if (ep->mtu < PME_WIRE_MIN_FRAME) {
        snprintf(err, errlen, "MTU %u is too small for PME (at least %d)", ep->mtu,
                 PME_WIRE_MIN_FRAME);
        return PME_ERR_INVAL;
    }
    size_t room = ep->mtu - sizeof(struct pme_wire_hdr) - sizeof(struct pme_wire_rts);
    ep->max_hdr = room < MAX_HDR ? room : MAX_HDR;
    memcpy(ep->self.mac, ep->dev->mac, 6);
    ep->self.node = ep->cfg.node_id      ? ep->cfg.node_id
                    : ep->routes.present ? ep->routes.node
                                         : node_from_mac(ep->dev->mac);
    ep->self.ethertype_be = htons(ep->cfg.ethertype);
    ep->self.hop_limit = (uint8_t)ep->cfg.hop_limit;
    for (unsigned i = 0; i < ep->ndev; i++) {
        ep->dself[i] = ep->self;
        memcpy(ep->dself[i].mac, ep->devs[i]->mac, 6);
        ep->rx_ctx[i] = (struct pme_rx_ctx){ep, (uint8_t)i};
    }
    return PME_OK;
}

/* Open one device per interface of the configured list (names and patterns, see
 * iflist.c), or of the route file's when none is configured; the loop device has none. */
static int open_devices(struct pme_ep *ep, const struct pme_dev_ops *ops,
                        const struct pme_dev_who *who, char (*names)[PME_IFNAME_LEN], int n,
                        char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        struct pme_config c = ep->cfg;
        c.iface = names ? names[i] : NULL;
        if (ep->cfg.loop_wires[i])
            c.loop_wire = ep->cfg.loop_wires[i];
        int rc = ops->open(&ep->devs[i], &c, who, err, errlen);
        if (rc)
            return rc;
        ep->ndev++;
    }
    ep->dev = ep->devs[0];
    if (n < 2)
        return PME_OK;
    /* Sleeping waits on all of them at once. */
    ep->wait_fd = epoll_create1(EPOLL_CLOEXEC);
    if (ep->wait_fd < 0) {
        snprintf(err, errlen, "cannot create an epoll set for %d interfaces", n);
        return PME_ERR_NOMEM;
    }
    for (int i = 0; i < n; i++) {
        int fd = ep->devs[i]->ops->fd(ep->devs[i]);
        struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
        if (fd < 0) { /* a device without a descriptor: polling only, as with one device */
            close(ep->wait_fd);
            ep->wait_fd = -1;
            return PME_OK;
        }
        if (epoll_ctl(ep->wait_fd, EPOLL_CTL_ADD, fd, &e) < 0) {
            snprintf(err, errlen, "cannot wait on interface %s", names[i]);
            return PME_ERR_NOMEM;
        }
    }
    return PME_OK;
}

/* Which interfaces: the configured list, else the route file's, else every data
 * interface of the node (iflist.c), else none (0: the loop device, or a device that
 * will say no interface was given). On a mesh every route must leave through one of
 * them. */
static int choose_ifaces(struct pme_ep *ep, char (*names)[PME_IFNAME_LEN], char *err,
                         size_t errlen)
{
    char list[PME_MAX_DEVS * PME_IFNAME_LEN];
    const char *spec = ep->cfg_iface;
    bool loop = !strcmp(ep->cfg_device, "loop");
    if (!spec && ep->routes.present && !loop) {
        pme_iflist_join(ep->routes.iface, ep->routes.niface, list, sizeof(list));
        spec = list;
    }
    if (!spec)
        return loop ? 0 : pme_iflist_default(names);
    int n = pme_iflist_expand(spec, names, err, errlen);
    return n < 0 ? PME_ERR_NODEV : n;
}

/* Rails: on a switched network every interface of the endpoint is one (rail k is
 * device k), on a mesh the routes choose one way to each node. The rail whose NIC is
 * near our cores carries what is sent in order (hwloc; only asked with several). */
static void set_rails(struct pme_ep *ep)
{
    ep->nrails = ep->routes.present ? 1 : ep->ndev;
    ep->near_rail = 0;
    if (ep->nrails < 2 || ep->nifname < ep->nrails || ep->dev->ops == &pme_dev_loop_ops)
        return;
    int near = pme_iflist_locality(ep->ifname, ep->nifname, ep->near_cpus);
    if (near > 0)
        ep->near_rail = (uint8_t)near;
}

/* Each route's interface as an index into ep->devs (routes over interfaces the
 * endpoint does not span are refused when a peer needs them). */
static void bind_routes(struct pme_ep *ep, char (*names)[PME_IFNAME_LEN], int n)
{
    uint8_t map[PME_MAX_DEVS];
    for (unsigned r = 0; r < ep->routes.niface; r++) {
        map[r] = PME_MAX_DEVS;
        for (int i = 0; i < n; i++)
            if (!strcmp(ep->routes.iface[r], names[i]))
                map[r] = (uint8_t)i;
    }
    for (size_t k = 0; k < ep->routes.n; k++)
        ep->routes.v[k].iface = map[ep->routes.v[k].file_iface];
}

static int set_keys(struct pme_ep *ep, char *err, size_t errlen)
{
    int auth = ep->cfg.auth;
    if (auth == PME_AUTH_AUTO)
        auth = ep->cfg.secret_len ? PME_AUTH_MAC : PME_AUTH_CRC;
    if (pme_wire_keys_init(&ep->keys, auth, ep->cfg.secret, ep->cfg.secret_len,
                           ep->cfg.job_key, err, errlen))
        return PME_ERR_AUTH;
    return PME_OK;
}

static void close_devices(struct pme_ep *ep)
{
    for (unsigned i = 0; i < ep->ndev; i++)
        ep->devs[i]->ops->close(ep->devs[i]);
    ep->ndev = 0;
    if (ep->wait_fd >= 0)
        close(ep->wait_fd);
    ep->wait_fd = -1;
}

static void ep_free(struct pme_ep *ep)
{
    close_devices(ep);
    pme_routes_free(&ep->routes);
    pme_counters_close(ep);
    pme_wire_keys_wipe(&ep->keys);
    free(ep->cfg_device);
    free(ep->cfg_iface);
    free(ep);
}

int pme_ep_open(const struct pme_config *cfg_in, pme_ep_t **out, char *err, size_t errlen)
{
    char dummy[8];
    if (!err) {
        err = dummy;
        errlen = sizeof(dummy);
    }
    err[0] = 0;
    *out = NULL;
    int rc = validate(cfg_in, err, errlen);
    if (rc)
        return rc;
    pme_env_warn_unknown(); /* as UCX does for UCX_*: a misspelt tunable does nothing */
    const struct pme_dev_ops *ops =
        pme_dev_choose(cfg_in->device ? cfg_in->device : PME_DEV_DEFAULT);
    if (!ops) {
        snprintf(err, errlen, "unknown PME device \"%s\" (use auto, ring, pcap, kernel or loop)",
                 cfg_in->device);
        return PME_ERR_INVAL;
    }
    struct pme_ep *ep = calloc(1, sizeof(*ep));
    if (!ep)
        return PME_ERR_NOMEM;
    ep->cfg = *cfg_in;
    ep->cfg_device = strdup(ops->name);
    ep->cfg_iface = cfg_in->iface ? strdup(cfg_in->iface) : NULL;
    ep->cfg.device = ep->cfg_device;
    ep->cfg.iface = ep->cfg_iface;
    ep->up = &pme_msg_upcalls;
    ep->wait_fd = -1;
    ep->held_room = ep->cfg.hold_bytes;
    if (pme_getrandom(&ep->self.incarnation, sizeof(ep->self.incarnation)))
        ep->self.incarnation = (uint32_t)pme_now_ns() ^ (uint32_t)getpid();
    if (!ep->self.incarnation)
        ep->self.incarnation = 1;
    /* Our handshake challenges derive from it (hello_wait.c): a new one every open. */
    if (pme_getrandom(&ep->chal_base, sizeof(ep->chal_base)))
        ep->chal_base = pme_now_ns() ^ ((uint64_t)ep->self.incarnation << 32);
    rc = set_keys(ep, err, errlen);
    if (rc)
        goto fail;
    if (pme_routes_load(&ep->routes, err, errlen)) {
        rc = PME_ERR_INVAL;
        goto fail;
    }
    int nnames = choose_ifaces(ep, ep->ifname, err, errlen);
    if (nnames < 0) {
        rc = nnames;
        goto fail;
    }
    ep->nifname = (unsigned)nnames;
    char (*names)[PME_IFNAME_LEN] = nnames ? ep->ifname : NULL;
    bind_routes(ep, ep->ifname, nnames);
    struct pme_dev_who who = {0, node_before_open(ep, names ? names[0] : NULL),
                              ep->keys.job_id, ep->self.incarnation, ep->keys.auth, {0}};
    if (ep->keys.auth == PME_AUTH_MAC)
        memcpy(who.mac_key, ep->cfg.secret, sizeof(who.mac_key));
    /* From here on the secret lives in the key schedules only (ours, the driver's). */
    explicit_bzero(ep->cfg.secret, sizeof(ep->cfg.secret));
    /* Claim an endpoint id (held for as long as the process lives), then the devices
     * with it; the kernel device's own table has the last word among its endpoints
     * (another user's may hold the id there), and then the next free id is tried. */
    for (unsigned tries = 0;; tries++) {
        rc = pme_counters_claim(ep);
        if (rc) {
            snprintf(err, errlen, "%s", ep->err);
            break;
        }
        who.ep_id = ep->self.ep;
        rc = open_devices(ep, ops, &who, names, nnames ? nnames : 1, err, errlen);
        if (rc != PME_ERR_BUSY || ep->cfg.ep_id >= 0 || tries == 63)
            break;
        close_devices(ep);
        pme_counters_unclaim(ep);
    }
    explicit_bzero(who.mac_key, sizeof(who.mac_key));
    if (rc)
        goto fail;
    rc = pme_counters_open(ep);
    if (rc) {
        snprintf(err, errlen, "%s", ep->err);
        goto fail;
    }
    rc = set_identity(ep, err, errlen);
    if (rc)
        goto fail;
    set_rails(ep);
    pme_counters_publish(ep);
    pme_wait_init(ep);
    if (ep->cfg.helper) {
        rc = pme_helper_start(ep, err, errlen);
        if (rc)
            goto fail;
    }
    *out = ep;
    return PME_OK;
fail:
    ep_free(ep);
    return rc;
}

/* ---- closing ---- */

void pme_ep_close(pme_ep_t *ep)
{
    if (!ep)
        return;
    pme_helper_stop(ep);
    /* Acknowledge what arrived (a peer whose last message we got must not retransmit it
     * to nobody), then tell every peer this incarnation is gone. */
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        for (unsigned k = 0; k < p->nrails; k++) {
            struct pme_rail *r = &p->rail[k];
            if (r->rx_open && p->tx_state != TX_FAILED && (r->unacked || r->ack_deadline))
                pme_link_ctrl_rail(ep, i, k, PME_T_ACK, NULL, 0);
        }
    }
    pme_link_bye_all(ep);
    for (uint32_t i = 0; i < ep->npeers; i++) {
        struct pme_peer *p = pme_peer_get(ep, i);
        for (unsigned k = 0; k < p->nrails; k++) {
            struct pme_txmsg *m = p->rail[k].q_head;
            while (m) {
                struct pme_txmsg *n = m->next;
                pme_txmsg_free(ep, m);
                m = n;
            }
        }
        for (struct pme_txmsg *m = p->stripe_head, *n; m; m = n) {
            n = m->next;
            pme_txmsg_free(ep, m);
        }
        pme_cache_free(&ep->cache, p->asm_buf);
        p->asm_buf = NULL;
    }
    pme_sendreq_free_all(ep);
    pme_rndv_free_all(ep);
    pme_rma_free_requests(ep);
    pme_rma_free_windows(ep);
    pme_evq_free(ep);
    for (int i = 0; i < PME_TX_BATCH; i++)
        free(ep->bounce[i]);
    pme_cache_destroy(&ep->cache);
    pme_peers_free(ep);
    pme_hello_wait_free(ep);
    pme_idxvec_free(&ep->active);
    pme_idxvec_free(&ep->dirty);
    pme_idxvec_free(&ep->suspects);
    pme_idxvec_free(&ep->gathering);
    ep_free(ep);
}
