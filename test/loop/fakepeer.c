/* fakepeer.c - see fakepeer.h. Everything that knows the frame layout is here. */
#include "fakepeer.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "crc32c.h"
#include "pme_test.h"
#include "pme_wire.h"

void fp_init(struct fakepeer *fp, struct pme_loop_wire *wire, pme_ep_t *ep,
             const uint8_t mac[6], uint16_t ep_id, uint32_t job_key)
{
    char addr[PME_ADDR_MAX];
    unsigned m[6], id, version;
    memset(fp, 0, sizeof(*fp));
    fp->wire = wire;
    memcpy(fp->mac, mac, 6);
    fp->ep_id = ep_id;
    fp->job_key = job_key;
    fp->incarnation = 0x5eed0001u;
    fp->snd_nxt = 1000;
    CHECK_OK(pme_ep_addr(ep, addr, sizeof(addr)));
    CHECK(sscanf(addr, "pme%u:%x:%x:%x:%x:%x:%x/%u", &version, &m[0], &m[1], &m[2], &m[3],
                 &m[4], &m[5], &id) == 8, "address %s", addr);
    for (int k = 0; k < 6; k++)
        fp->ep_mac[k] = (uint8_t)m[k];
    fp->ep_ep_id = (uint16_t)id;
}

void fp_addr(const struct fakepeer *fp, char *buf, size_t len)
{
    snprintf(buf, len, "pme%d:%02x:%02x:%02x:%02x:%02x:%02x/%u", PME_WIRE_VERSION, fp->mac[0],
             fp->mac[1], fp->mac[2], fp->mac[3], fp->mac[4], fp->mac[5], fp->ep_id);
}

size_t fp_build(struct fakepeer *fp, uint8_t *buf, int type, uint32_t seq, int with_ack,
                uint32_t ack, uint32_t credit, uint16_t flags, uint16_t aux, const void *sub,
                size_t sublen)
{
    memcpy(buf, fp->ep_mac, 6);
    memcpy(buf + 6, fp->mac, 6);
    buf[12] = PME_ETHERTYPE_DEFAULT >> 8;
    buf[13] = PME_ETHERTYPE_DEFAULT & 0xff;
    struct pme_wire_hdr *wh = (void *)(buf + PME_ETH_HLEN);
    memset(wh, 0, sizeof(*wh));
    wh->dst_ep = htons(fp->ep_ep_id);
    wh->version = PME_WIRE_VERSION;
    wh->type = (uint8_t)type;
    wh->src_ep = htons(fp->ep_id);
    wh->len = htons((uint16_t)sublen);
    wh->job_key = htonl(fp->job_key);
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

void fp_seal(uint8_t *frame, size_t len)
{
    struct pme_wire_hdr *wh = (void *)(frame + PME_ETH_HLEN);
    (void)len;
    uint32_t crc = pme_crc32c(0, wh, PME_WIRE_CRC_COVERED_HDR);
    crc = pme_crc32c(crc, wh + 1, ntohs(wh->len));
    wh->crc = htonl(crc);
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
    fp_seal(buf, n);
    fp_inject(fp, buf, n);
}

int fp_take(struct fakepeer *fp, struct fp_frame *f)
{
    f->len = pme_loop_wire_take(fp->wire, fp->mac, f->raw, sizeof(f->raw));
    if (!f->len)
        return 0;
    CHECK(f->len >= PME_ETH_HLEN + sizeof(struct pme_wire_hdr), "short frame %zu", f->len);
    const struct pme_wire_hdr *wh = (const void *)(f->raw + PME_ETH_HLEN);
    f->type = wh->type;
    f->flags = ntohs(wh->flags);
    f->aux = ntohs(wh->aux);
    f->seq = ntohl(wh->seq);
    f->ack = ntohl(wh->ack);
    f->credit = ntohl(wh->credit);
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

void fp_handshake(struct fakepeer *fp, pme_ep_t *ep, uint16_t max_frame, uint32_t grant)
{
    static struct fp_frame f;
    CHECK(fp_expect(fp, ep, PME_T_HELLO, &f, 1000), "the endpoint sent no HELLO");
    const struct pme_wire_hello *h = (const void *)f.sub;
    fp->rcv_nxt = ntohl(h->first_seq);
    struct pme_wire_hello a = {
        .incarnation = htonl(fp->incarnation),
        .echo = h->incarnation,
        .max_frame = htons(max_frame),
    };
    fp_send(fp, PME_T_HELLO_ACK, 0, 1, fp->rcv_nxt - 1, grant, 0, 0, &a, sizeof(a));
    struct pme_wire_hello mine = {
        .incarnation = htonl(fp->incarnation),
        .first_seq = htonl(fp->snd_nxt),
        .max_frame = htons(max_frame),
    };
    fp_send(fp, PME_T_HELLO, 0, 0, 0, 0, 0, 0, &mine, sizeof(mine));
    CHECK(fp_expect(fp, ep, PME_T_HELLO_ACK, &f, 1000), "the endpoint did not answer HELLO");
}
