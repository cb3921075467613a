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
 *
 * It also bounds how long small messages gather into a bundle (link_tx.c): when the
 * caller leaves PME with some gathering, it sets the thread's alarm (a timerfd, one
 * system call per gathering, not per message) to PME_COALESCE_US after they began to
 * gather, and the thread sends them then unless their acknowledgement or the caller
 * sent them first; a caller that sent them takes the alarm back when it leaves. An
 * eventfd woke the thread at once instead, to sleep again until the bound: on a machine
 * whose cores all run ranks, those two wake-ups per burst of sends cost MPI's 8-byte
 * message rate about a quarter.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "eplock.h"
#include "link.h"
#include "progress.h"

struct pme_helper {
    pthread_t thread;
    int stop_fd;            /* eventfd: readable when the thread must end */
    int alarm_fd;           /* timerfd: readable when what gathers is due */
    int period_ms;
    uint64_t wakeups;       /* returns from ppoll (atomic: read by pme_helper_wakeups) */
};

/* Set the alarm for what has gathered since `since` (due coalesce_us later), or take
 * it back (since 0). A failure leaves the thread its period, which bounds the wait too,
 * only later. */
static void alarm_for(const struct pme_ep *ep, const struct pme_helper *h, uint64_t since)
{
    struct itimerspec when = {{0, 0}, {0, 0}}; /* zero: disarmed */
    if (since) {
        uint64_t due = since + (uint64_t)ep->cfg.coalesce_us * 1000u;
        when.it_value.tv_sec = (time_t)(due / 1000000000u);
        when.it_value.tv_nsec = (long)(due % 1000000000u);
        if (!when.it_value.tv_sec && !when.it_value.tv_nsec)
            when.it_value.tv_nsec = 1;
    }
    (void)timerfd_settime(h->alarm_fd, TFD_TIMER_ABSTIME, &when, NULL);
}

void pme_helper_tell(struct pme_ep *ep)
{
    uint64_t since = ep->gathering_since_ns;
    ep->gathering_tell_helper = false;
    ep->gathering_helper_alarm = since != 0;
    alarm_for(ep, ep->helper, since);
}

uint64_t pme_helper_wakeups(const struct pme_ep *ep)
{
    return ep->helper ? __atomic_load_n(&ep->helper->wakeups, __ATOMIC_RELAXED) : 0;
}

/* The thread ends a pass of its own, holding the lock. What the pass started gathering
 * (queued messages it sent behind frames in flight) gets the alarm, since the caller,
 * away, sets none. Only here, under the lock: set from outside it, the alarm raced the
 * caller's own (a caller inside PME when what it gathers fell due kept re-arming an
 * alarm already past, and the thread spun on it until the caller left; on a core shared
 * with ranks, that spin is what they lost). `fired`: the alarm woke this pass and is
 * spent. */
static void pass_done(struct pme_ep *ep, bool fired)
{
    if (fired)
        ep->gathering_helper_alarm = false;
    bool gathers = ep->gathering_since_ns != 0;
    if (ep->gathering_tell_helper || gathers != ep->gathering_helper_alarm)
        pme_helper_tell(ep); /* armed exactly while something gathers */
    pme_ep_unlock_helper(ep);
}

/* Send what gathers if it has gathered long enough and the caller is not inside.
 * Returns false when it could not: the caller was inside (what it leaves behind must
 * not wait for the next period). */
static bool send_gathered(struct pme_ep *ep)
{
    if (!__atomic_load_n(&ep->gathering_since_ns, __ATOMIC_RELAXED))
        return true; /* sent meanwhile: nothing to retry */
    if (!pme_ep_trylock(ep))
        return false;
    uint64_t since = ep->gathering_since_ns;
    ep->now = pme_now_ns();
    if (since && ep->now - since >= (uint64_t)ep->cfg.coalesce_us * 1000u) {
        pme_link_send_gathered(ep);
        ep->ctr->helper_passes++;
    }
    pass_done(ep, true);
    return true;
}

/* Look again a little later (a quarter of the bound, at least 10 us). */
static void alarm_again(const struct pme_ep *ep, const struct pme_helper *h)
{
    uint64_t ns = (uint64_t)ep->cfg.coalesce_us * 250u;
    if (ns < 10000)
        ns = 10000;
    struct itimerspec when = {{0, 0}, {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)}};
    (void)timerfd_settime(h->alarm_fd, 0, &when, NULL);
}

/* How long the thread may sleep: until its next look at the caller (a period after the
 * last); what gathers has the alarm. */
static void sleep_until(const struct pme_helper *h, uint64_t looked_ns, struct timespec *ts)
{
    uint64_t now = pme_now_ns(), due = looked_ns + (uint64_t)h->period_ms * 1000000u;
    uint64_t ns = due > now ? due - now : 0;
    ts->tv_sec = (time_t)(ns / 1000000000u);
    ts->tv_nsec = (long)(ns % 1000000000u);
}

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
    pass_done(ep, false);
    return moved;
}

static void *helper_main(void *arg)
{
    struct pme_ep *ep = arg;
    struct pme_helper *h = ep->helper;
    int dev_fd = pme_ep_wait_fd(ep);
    uint64_t seen = __atomic_load_n(&ep->api_exits, __ATOMIC_RELAXED);
    uint64_t period_ns = (uint64_t)h->period_ms * 1000000u;
    uint64_t looked_ns = pme_now_ns(); /* when it last looked whether the caller is away */
    bool away = false, idle_pass = false;
    for (;;) {
        /* While the caller is away, wake for frames too (unless the last pass found the
         * device readable but nothing to take: then only for the period, so that a
         * descriptor stuck readable cannot make us spin). */
        struct pollfd pfd[3] = {{h->stop_fd, POLLIN, 0},
                                {h->alarm_fd, POLLIN, 0},
                                {away && !idle_pass ? dev_fd : -1, POLLIN, 0}};
        struct timespec ts;
        sleep_until(h, looked_ns, &ts);
        int n = ppoll(pfd, 3, &ts, NULL);
        __atomic_fetch_add(&h->wakeups, 1, __ATOMIC_RELAXED);
        if (n < 0 && errno != EINTR)
            break;
        if (pfd[0].revents)
            break;
        if (pfd[1].revents) {
            uint64_t expirations;
            if (read(h->alarm_fd, &expirations, sizeof(expirations)) < 0)
                expirations = 0; /* (taken back meanwhile: nothing to read) */
            if (!send_gathered(ep))
                alarm_again(ep, h);
        }
        /* Whether the caller has been away a whole period: only when one has passed (a
         * wake-up for what gathers comes sooner) or frames came while it is away. */
        uint64_t now = pme_now_ns();
        if (!pfd[2].revents && now - looked_ns < period_ns)
            continue;
        looked_ns = now;
        uint64_t exits = __atomic_load_n(&ep->api_exits, __ATOMIC_RELAXED);
        bool inside = __atomic_load_n(&ep->api_lock, __ATOMIC_RELAXED);
        if (exits != seen || inside) {
            seen = exits;
            away = idle_pass = false;
            continue;
        }
        away = true;
        idle_pass = !answer(ep) && pfd[2].revents;
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
    h->alarm_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (h->stop_fd < 0 || h->alarm_fd < 0) {
        if (h->stop_fd >= 0)
            close(h->stop_fd);
        if (h->alarm_fd >= 0)
            close(h->alarm_fd);
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
        close(h->alarm_fd);
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
    close(h->alarm_fd);
    free(h);
    ep->helper = NULL;
}
