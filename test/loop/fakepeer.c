// SPDX-License-Identifier: BSD-3-Clause
/* fakepeer.c - see fakepeer.h. The fake peer frames with pme_core's own wire layer, so
 * its frames are well-formed until a test spoils them on purpose. */
#include "fakepeer.h"

#include <arpa/inet.h>
#include <endian.h>
#include <stdio.h>
#include <string.h>

#include "pme_test.h"
#include "pme_wire.h"

void fp_init(struct fakepeer *fp, struct pme_loop_wire *wire, pme_ep_t *ep,
             const uint8_t mac[6], uint16_t ep_id, uint32_t node, const uint8_t *secret,
             uint32_t job_key)
{
    char addr[PME_ADDR_MAX], err[200];
    unsigned m[6], id, version, n;
    memset(fp, 0, sizeof(*fp));
    fp->wire = wire;
    memcpy(fp->self.mac, mac, 6);
    fp->self.ep = ep_id;
    fp->self.node = node;
    fp->self.incarnation = 0x5eed0001u;
    fp->self.ethertype_be = htons(PME_ETHERTYPE_DEFAULT);
    fp->self.hop_limit = 16;
    CHECK(pme_wire_keys_init(&fp->keys, secret ? PME_AUTH_MAC : PME_AUTH_CRC, secret,
                             secret ? PME_SECRET_BYTES : 0, job_key, err, sizeof(err)) == 0,
          "fake peer keys: %s", err);
    fp->snd_nxt = 1000;
    CHECK_OK(pme_ep_addr(ep, addr, sizeof(addr)));
    CHECK(sscanf(addr, "pme%u:%8x/%u@%x:%x:%x:%x:%x:%x", &version, &n, &id, &m[0], &m[1], &m[2],
                 &m[3], &m[4], &m[5]) == 9, "address %s", addr);
    for (int k = 0; k < 6; k++)
        fp->ep_mac[k] = (uint8_t)m[k];
    fp->ep_ep_id = (uint16_t)id;
    fp->ep_node = n;
}

void fp_addr(const struct fakepeer *fp, char *buf, size_t len)
{
    const uint8_t *m = fp->self.mac;
    snprintf(buf, len, "pme%d:%08x/%u@%02x:%02x:%02x:%02x:%02x:%02x", PME_WIRE_VERSION,
             fp->self.node, fp->self.ep, m[0], m[1], m[2], m[3], m[4], m[5]);
}

size_t fp_build(struct fakepeer *fp, uint8_t *buf, int type, uint32_t seq, int with_ack,
                uint32_t ack, uint32_t credit, uint16_t flags, uint16_t aux, const void *sub,
                size_t sublen)
{
    struct pme_wire_hdr *wh = pme_wire_start(buf, &fp->self, fp->ep_mac, fp->ep_node,
                                             fp->ep_ep_id, type, sublen);
    wh->job_id = htonl(fp->keys.job_id);
    wh->seq = htonl(seq);
    if (with_ack) {
        flags |= PME_F_ACK_VALID;
        wh->ack = htonl(ack);
        wh->credit = htonl(credit);
    }
    wh->flags = htons(flags);
    wh->aux = htons(aux);
    if (sublen)
        memcpy(wh + 1, sub, sublen);
    return PME_ETH_HLEN + sizeof(*wh) + sublen;
}

void fp_seal(struct fakepeer *fp, uint8_t *frame, size_t len)
{
    struct pme_dev_frame f = {.iov = {{frame, len}}, .iovcnt = 1};
    pme_wire_seal(&fp->keys, &fp->self, ++fp->nonce, &f);
}

void fp_inject(struct fakepeer *fp, const uint8_t *frame, size_t len)
{
    CHECK_OK(pme_loop_wire_inject(fp->wire, frame, len));
}

void fp_send(struct fakepeer *fp, int type, uint64_t seq, int with_ack, uint32_t ack,
             uint32_t credit, uint16_t flags, uint16_t aux, const void *sub, size_t sublen)
{
    static uint8_t buf[70000];
    uint32_t s = 0;
    if (pme_wire_type_is_sequenced((unsigned)type))
        s = seq == FP_SEQ_AUTO ? fp->snd_nxt++ : (uint32_t)seq;
    size_t n = fp_build(fp, buf, type, s, with_ack, ack, credit, flags, aux, sub, sublen);
    fp_seal(fp, buf, n);
    fp_inject(fp, buf, n);
}

/* Is the frame for this fake peer (several share a MAC in some tests)? */
static int for_me(const struct fakepeer *fp, const struct fp_frame *f)
{
    const struct pme_wire_hdr *wh = (const void *)(f->raw + PME_ETH_HLEN);
    if (ntohs(wh->dst_ep) != fp->self.ep)
        return 0;
    return f->len < PME_ETH_HLEN + sizeof(*wh) || ntohl(wh->dst_node) == fp->self.node;
}

int fp_take(struct fakepeer *fp, struct fp_frame *f)
{
    do {
        f->len = pme_loop_wire_take(fp->wire, fp->self.mac, f->raw, sizeof(f->raw));
        if (!f->len)
            return 0;
    } while (!for_me(fp, f));
    const struct pme_wire_hdr *wh = (const void *)(f->raw + PME_ETH_HLEN);
    f->type = wh->type;
    if (f->len < PME_ETH_HLEN + sizeof(struct pme_wire_hdr)) {
        /* a VERSION_NAK: only the version-stable prefix is there */
        CHECK(f->type == PME_T_VERSION_NAK, "short frame %zu of type %d", f->len, f->type);
        f->sub = NULL;
        f->sublen = 0;
        return 1;
    }
    f->flags = ntohs(wh->flags);
    f->aux = ntohs(wh->aux);
    f->seq = ntohl(wh->seq);
    f->ack = ntohl(wh->ack);
    f->credit = ntohl(wh->credit);
    f->incarnation = ntohl(wh->incarnation);
    f->sub = (const uint8_t *)(wh + 1);
    f->sublen = ntohs(wh->len);
    if (pme_wire_type_is_sequenced((unsigned)f->type) && f->seq == fp->rcv_nxt)
        fp->rcv_nxt++;
    return 1;
}

int fp_expect(struct fakepeer *fp, pme_ep_t *ep, int type, struct fp_frame *f, int ms)
{
    double end = now_s() + ms / 1000.0;
    while (now_s() < end) {
        while (fp_take(fp, f))
            if (f->type == type)
                return 1;
        pme_progress(ep);
    }
    return 0;
}

size_t fp_hello(const struct fakepeer *fp, void *buf, uint64_t chal, uint64_t echo,
                uint32_t first_seq, uint16_t max_frame)
{
    struct pme_wire_hello h = {.chal = htobe64(chal), .echo = htobe64(echo),
                               .first_seq = htonl(first_seq), .max_frame = htons(max_frame),
                               .nrails = 1};
    memcpy(buf, &h, sizeof(h));
    memcpy((uint8_t *)buf + sizeof(h), fp->self.mac, 6);
    return FP_HELLO_BYTES;
}

void fp_handshake(struct fakepeer *fp, pme_ep_t *ep, uint16_t max_frame, uint32_t grant)
{
    static struct fp_frame f;
    uint8_t body[FP_HELLO_BYTES];
    CHECK(fp_expect(fp, ep, PME_T_HELLO, &f, 1000), "the endpoint sent no HELLO");
    const struct pme_wire_hello *h = (const void *)f.sub;
    fp->rcv_nxt = ntohl(h->first_seq);
    fp->ep_incarnation = f.incarnation;
    fp->ep_chal = be64toh(h->chal);
    size_t n = fp_hello(fp, body, 0, fp->ep_chal, 0, max_frame);
    fp_send(fp, PME_T_HELLO_ACK, 0, 1, fp->rcv_nxt - 1, grant, 0, 0, body, n);
    n = fp_hello(fp, body, FP_CHAL, 0, fp->snd_nxt, max_frame);
    fp_send(fp, PME_T_HELLO, 0, 0, 0, 0, 0, 0, body, n);
    CHECK(fp_expect(fp, ep, PME_T_HELLO_ACK, &f, 1000), "the endpoint did not answer HELLO");
}
