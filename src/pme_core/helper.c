// SPDX-License-Identifier: BSD-3-Clause
/*
 * helper.c - the liveness helper: a thread that answers for the endpoint while its
 * caller computes outside PME.
 *
 * A process that computes for longer than its peers' timeout without calling into PME
 * would be taken for dead: nobody acknowledges the frames sent to it or answers their
 * probes (Open-MX's users saw "endpoint unreachable" this way). MPICH's async progress
 * and Open-MX's driver answer for such a process; so does this thread. It sleeps while
 * the caller uses the endpoint; once the caller has left it alone for a whole period
 * (PME_HELPER_US), the thread waits on the device itself and runs a progress pass
 * whenever frames come: acknowledgements, credit, PONGs go out at once, and events
 * queue up for the caller's return. Its cost while the caller is busy is one wake-up
 * per period; the caller pays one uncontended lock per API call (eplock.h).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "eplock.h"
#include "progress.h"

struct pme_helper {
    pthread_t thread;
    int stop_fd;            /* eventfd: readable when the thread must end */
    int period_ms;
};

/* One pass for the absent caller; returns whether frames moved. */
static bool answer(struct pme_ep *ep)
{
    if (!pme_ep_trylock(ep))
        return false; /* the caller came back */
    if (__atomic_load_n(&ep->helper_held, __ATOMIC_ACQUIRE)) {
        pme_ep_unlock_helper(ep); /* the caller updates exposed memory (pme_rma_exclusive) */
        return false;
    }
    uint64_t before = ep->ctr->rx_frames + ep->ctr->tx_frames;
    ep->now = pme_now_ns();
    pme_progress_pass(ep, true);
    ep->ctr->helper_passes++;
    bool moved = ep->ctr->rx_frames + ep->ctr->tx_frames != before;
    pme_ep_unlock_helper(ep);
    return moved;
}

static void *helper_main(void *arg)
{
    struct pme_ep *ep = arg;
    struct pme_helper *h = ep->helper;
    int dev_fd = pme_ep_wait_fd(ep);
    uint64_t seen = __atomic_load_n(&ep->api_exits, __ATOMIC_RELAXED);
    bool away = false, idle_pass = false;
    for (;;) {
        /* While the caller is away, wake for frames too (unless the last pass found the
         * device readable but nothing to take: then only for the period, so that a
         * descriptor stuck readable cannot make us spin). */
        struct pollfd pfd[2] = {{h->stop_fd, POLLIN, 0},
                                {away && !idle_pass ? dev_fd : -1, POLLIN, 0}};
        int n = poll(pfd, 2, h->period_ms);
        if (n < 0 && errno != EINTR)
            break;
        if (pfd[0].revents)
            break;
        uint64_t exits = __atomic_load_n(&ep->api_exits, __ATOMIC_RELAXED);
        bool inside = __atomic_load_n(&ep->api_lock, __ATOMIC_RELAXED);
        if (exits != seen || inside) {
            seen = exits;
            away = idle_pass = false;
            continue;
        }
        away = true;
        idle_pass = !answer(ep) && pfd[1].revents;
    }
    return NULL;
}

int pme_helper_start(struct pme_ep *ep, char *err, size_t errlen)
{
    struct pme_helper *h = calloc(1, sizeof(*h));
    if (!h)
        return PME_ERR_NOMEM;
    h->period_ms = (int)((ep->cfg.helper_us + 999) / 1000);
    if (h->period_ms < 1)
        h->period_ms = 1;
    h->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (h->stop_fd < 0) {
        snprintf(err, errlen, "cannot start the liveness helper: %s (PME_HELPER=0 runs "
                 "without it)", strerror(errno));
        free(h);
        return PME_ERR_DEVICE;
    }
    ep->helper = h;
    int rc = pthread_create(&h->thread, NULL, helper_main, ep);
    if (rc) {
        snprintf(err, errlen, "cannot start the liveness helper thread: %s (PME_HELPER=0 "
                 "runs without it)", strerror(rc));
        ep->helper = NULL;
        close(h->stop_fd);
        free(h);
        return PME_ERR_DEVICE;
    }
    return PME_OK;
}

void pme_helper_stop(struct pme_ep *ep)
{
    struct pme_helper *h = ep->helper;
    if (!h)
        return;
    if (eventfd_write(h->stop_fd, 1) == 0)
        pthread_join(h->thread, NULL);
    close(h->stop_fd);
    free(h);
    ep->helper = NULL;
}
