// SPDX-License-Identifier: BSD-3-Clause
/* errors.c - status texts, the endpoint's last error, and randomness, for every layer. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>

#include "pme_internal.h"

const char *pme_strerror(int status)
{
    switch (status) {
    case PME_OK: return "success";
    case PME_EAGAIN: return "resource temporarily unavailable; progress and retry";
    case PME_ERR_INVAL: return "invalid argument";
    case PME_ERR_NOMEM: return "out of memory";
    case PME_ERR_NODEV: return "no such network interface";
    case PME_ERR_IFDOWN: return "network interface is down";
    case PME_ERR_PERM: return "no permission for raw Ethernet frames (CAP_NET_RAW)";
    case PME_ERR_DEVICE: return "device error";
    case PME_ERR_ADDR: return "malformed PME address";
    case PME_ERR_VERSION: return "peer runs another PME wire version";
    case PME_ERR_PEER_DEAD: return "peer stopped answering (timeout)";
    case PME_ERR_TRUNC: return "message truncated by the receiver";
    case PME_ERR_CANCELED: return "operation canceled";
    case PME_ERR_TIMEOUT: return "timed out";
    case PME_ERR_BUSY: return "endpoint id already in use on this interface";
    case PME_ERR_NOSYS: return "device not available in this build";
    case PME_ERR_AUTH: return "authentication is misconfigured (job secret)";
    case PME_ERR_UNREACHABLE: return "no route to the peer's node";
    case PME_ERR_LINK_DOWN: return "the link to the peer is down";
    case PME_ERR_RANGE: return "one-sided access outside the target's window";
    case PME_ERR_NOWIN: return "the target exposes no such window";
    case PME_ERR_NOTSUP: return "the peer's PME does not take one-sided requests";
    case PME_ERR_NO_ANSWER:
        return "the peer never answered the handshake: PME frames do not pass between the "
               "nodes (pme_info --check --probe)";
    default: return "unknown PME status";
    }
}

void pme_ep_set_error(struct pme_ep *ep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ep->err, sizeof(ep->err), fmt, ap);
    va_end(ap);
}

#ifdef PME_FUZZING
/* Fuzzing builds only (test/fuzz): the same "random" bytes in every run, so that a
 * recorded exchange (sequence numbers, incarnations) replays exactly. */
static uint32_t fuzz_state = 0x9e3779b9u;

int pme_getrandom(void *buf, size_t len)
{
    uint8_t *b = buf;
    for (size_t i = 0; i < len; i++) {
        fuzz_state = fuzz_state * 1664525u + 1013904223u;
        b[i] = (uint8_t)(fuzz_state >> 24);
    }
    return 0;
}

/* Each fuzz input starts the sequence over. */
void pme_fuzz_reset_random(void);
void pme_fuzz_reset_random(void)
{
    fuzz_state = 0x9e3779b9u;
}
#else
/* Bytes from the kernel's random source; -1 if it has not enough (early boot). */
int pme_getrandom(void *buf, size_t len)
{
    return getrandom(buf, len, GRND_NONBLOCK) == (ssize_t)len ? 0 : -1;
}
#endif
