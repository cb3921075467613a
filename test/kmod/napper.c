// SPDX-License-Identifier: BSD-3-Clause
/*
 * napper - a server that stops calling into PME for a long time in the middle of an
 * exchange (as a rank that computes), and its client, which must neither give up on it
 * nor hang when it dies.
 *
 *   napper server IFACE ADDR_FILE NAP_MS
 *       takes message "one", naps NAP_MS without any PME call, takes message "two",
 *       answers "done" and exits 0
 *   napper client IFACE PEER_ADDR
 *       sends "one", 300 ms later "two" while the server naps, waits for "done"; exits 0 when it
 *       came, 1 with the error when the peer failed (dead, or closed), printing how
 *       long it waited after "two" either way
 *
 * Configured from the environment like any PME program (PME_DEVICE, PME_PEER_TIMEOUT_MS,
 * PME_HELPER, ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pme.h"

static pme_ep_t *open_ep(const char *iface)
{
    struct pme_config cfg;
    char err[512];
    pme_config_init(&cfg);
    if (pme_config_from_env(&cfg, err, sizeof(err))) {
        fprintf(stderr, "napper: %s\n", err);
        exit(2);
    }
    cfg.iface = iface;
    pme_ep_t *ep;
    if (pme_ep_open(&cfg, &ep, err, sizeof(err))) {
        fprintf(stderr, "napper: %s\n", err);
        exit(2);
    }
    return ep;
}

/* Wait for a message with this text (from *from); 0, or -1 when the peer failed first. */
static int await_msg(pme_ep_t *ep, const char *text, pme_peer_t *from)
{
    for (;;) {
        struct pme_event ev;
        while (pme_next_event(ep, &ev)) {
            if (ev.type == PME_EV_PEER_FAILED) {
                fprintf(stderr, "napper: peer failed: %s\n", pme_ep_last_error(ep));
                return -1;
            }
            if (ev.type != PME_EV_MSG)
                continue;
            int same = ev.hdr_len == strlen(text) && !memcmp(ev.hdr, text, ev.hdr_len);
            *from = ev.peer;
            pme_event_release(ep, &ev);
            if (same)
                return 0;
        }
        pme_wait(ep, 100);
    }
}

static void send_text(pme_ep_t *ep, pme_peer_t peer, const char *text)
{
    int rc = pme_send(ep, peer, text, strlen(text), NULL, 0, PME_SEND_NO_EVENT, NULL);
    if (rc < 0) {
        fprintf(stderr, "napper: send \"%s\": %s\n", text, pme_ep_last_error(ep));
        exit(1);
    }
}

static int server(const char *iface, const char *addr_file, int nap_ms)
{
    pme_ep_t *ep = open_ep(iface);
    char addr[128], tmp[4096];
    pme_ep_addr(ep, addr, sizeof(addr));
    snprintf(tmp, sizeof(tmp), "%s.tmp", addr_file);
    FILE *f = fopen(tmp, "w");
    if (!f || fprintf(f, "%s\n", addr) < 0 || fclose(f) || rename(tmp, addr_file)) {
        fprintf(stderr, "napper: cannot write %s\n", addr_file);
        return 2;
    }
    pme_peer_t peer;
    if (await_msg(ep, "one", &peer))
        return 1;
    printf("napper: napping %d ms\n", nap_ms);
    fflush(stdout);
    usleep((useconds_t)nap_ms * 1000u);
    if (await_msg(ep, "two", &peer))
        return 1;
    send_text(ep, peer, "done");
    pme_ep_flush(ep, 5000);
    pme_ep_close(ep);
    return 0;
}

static int client(const char *iface, const char *peer_addr)
{
    pme_ep_t *ep = open_ep(iface);
    pme_peer_t peer;
    if (pme_ep_add_peer(ep, peer_addr, &peer)) {
        fprintf(stderr, "napper: %s\n", pme_ep_last_error(ep));
        return 2;
    }
    send_text(ep, peer, "one");
    /* Keep making progress for 300 ms (the server is napping by then), without waiting
     * for "one" to be acknowledged: whether the server acknowledged it before its nap
     * began is a race, and a flush that lost it would wait out the nap here, before
     * "two" is sent, and the nap would not be measured. */
    uint64_t start = pme_ep_now_ns(ep);
    while (pme_ep_now_ns(ep) - start < 300000000u)
        pme_wait(ep, 10);
    send_text(ep, peer, "two");
    pme_progress(ep);
    uint64_t t0 = pme_ep_now_ns(ep);
    pme_peer_t from;
    int rc = await_msg(ep, "done", &from);
    unsigned ms = (unsigned)((pme_ep_now_ns(ep) - t0) / 1000000u);
    printf("napper: %s after %u ms\n", rc ? "gave up" : "answered", ms);
    pme_ep_close(ep);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "server"))
        return server(argv[2], argv[3], atoi(argv[4]));
    if (argc == 4 && !strcmp(argv[1], "client"))
        return client(argv[2], argv[3]);
    fprintf(stderr, "usage: napper server IFACE ADDR_FILE NAP_MS | napper client IFACE PEER_ADDR\n");
    return 2;
}
