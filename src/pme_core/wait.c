// SPDX-License-Identifier: BSD-3-Clause
/*
 * wait.c - waiting for progress: PM/Ethernet's Interrupt Reaping in user space.
 *
 * PM's waiting process reaped the device itself instead of paying for an interrupt.
 * Here the choice is between polling the device (cheapest while the process has a
 * core to itself) and sleeping in poll() on its descriptor (cheapest when more
 * processes want to run than there are cores, where polling steals the core the peer
 * needs). Measured on these machines: polling is about 4x faster than sleeping when
 * idle and over 10x slower when oversubscribed. PME_WAIT=auto polls while the process
 * has a core to itself, for spin_us after the last frame (a second by default: only a
 * long quiet gives the core back), then sleeps; a process that shares its core sleeps
 * at once in pme_wait, and in pme_idle yields for yield_us before it sleeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifdef HAVE_HWLOC
#include <hwloc.h>
#endif

#include "link.h"
#include "progress.h"

#define LOAD_SAMPLE_NS 20000000ull /* how often auto mode looks at the run queue */

/* The cores of this node that the job may use: the machine's, less what its cgroup's
 * cpuset withholds, but not narrowed by the process's own binding. Why not the binding:
 * a rank bound to one core (mpiexec -bind-to core, srun's binding) counted one core
 * against the run queue of the whole machine, so its peer's polling on another core
 * made it "share" its core, and it slept through every exchange (measured: an 8-byte
 * half round trip of 12.7 us against 2.5 us polling, two processes bound to cores of
 * their own). Whether its own core is shared is what its run-queue delay says. */
static unsigned count_cores(void)
{
    unsigned n = 0;
#ifdef HAVE_HWLOC
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) == 0) {
            hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
            int w = allowed ? hwloc_bitmap_weight(allowed) : -1;
            n = w > 0 ? (unsigned)w : (unsigned)hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        }
        hwloc_topology_destroy(topo);
    }
#endif
    if (n == 0 || n > 1u << 20) {
        long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (unsigned)online : 1;
    }
    return n;
}

void pme_wait_init(struct pme_ep *ep)
{
    /* Loading the topology takes milliseconds: once per process is enough. */
    static unsigned cores;
    if (!cores)
        cores = count_cores();
    ep->ncores = cores;
    ep->wake_fd = -1;
}

/* Runnable tasks on the machine now (the 4th field of /proc/loadavg, "R/total"). */
static unsigned runnable_now(void)
{
    char buf[128];
    int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    unsigned r = 0, t = 0;
    double a, b, c;
    if (sscanf(buf, "%lf %lf %lf %u/%u", &a, &b, &c, &r, &t) != 5)
        return 0;
    return r;
}

/* How long the calling thread has been runnable without a core, in ns (the second field
 * of /proc/thread-self/schedstat), or NO_RUN_DELAY where the kernel does not say. */
#define NO_RUN_DELAY UINT64_MAX
static uint64_t run_delay_now(void)
{
    char buf[128];
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NO_RUN_DELAY;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return NO_RUN_DELAY;
    buf[n] = 0;
    unsigned long long on_cpu, delay;
    if (sscanf(buf, "%llu %llu", &on_cpu, &delay) != 2)
        return NO_RUN_DELAY;
    return delay;
}

/* Are we competing for a core? Entering that state needs this thread's own run-queue
 * delay to have grown by more than 1/RUN_DELAY_SHARE of the time since the last look:
 * the run queue's length alone misleads, because kernel threads (rcu, kworkers) make it
 * exceed the cores for moments (sampled during a stream between two processes on two
 * cores: one look in six), and each such look stopped polling for 20 ms. Leaving the
 * state needs the run queue to fit the cores too: a process that sleeps gathers little
 * delay even when others fill every core. Without schedstat, the run queue decides. */
#define RUN_DELAY_SHARE 16
static void sample_load(struct pme_ep *ep)
{
    uint64_t delay = run_delay_now();
    if (delay == NO_RUN_DELAY || !ep->load_sampled_ns) {
        ep->oversubscribed = runnable_now() > ep->ncores;
    } else {
        uint64_t grew = delay > ep->run_delay_ns ? delay - ep->run_delay_ns : 0;
        bool delayed = grew > (ep->now - ep->load_sampled_ns) / RUN_DELAY_SHARE;
        ep->oversubscribed = delayed || (ep->oversubscribed && runnable_now() > ep->ncores);
    }
    ep->run_delay_ns = delay;
    ep->load_sampled_ns = ep->now;
}

/* Frames that came or went: a rendezvous moves many of them between two events. */
static uint64_t activity(const struct pme_ep *ep)
{
    return ep->ctr->rx_frames + ep->ctr->tx_frames;
}

/* Auto mode: poll only while everyone who wants a core can have one. */
static bool may_spin(struct pme_ep *ep)
{
    if (ep->cfg.wait_mode == PME_WAIT_SPIN)
        return true;
    if (ep->cfg.wait_mode == PME_WAIT_BLOCK || ep->cfg.spin_us == 0)
        return false;
    if (ep->cfg.local_procs > ep->ncores)
        return false;
    if (!ep->load_sampled_ns || ep->now - ep->load_sampled_ns > LOAD_SAMPLE_NS)
        sample_load(ep);
    return !ep->oversubscribed;
}

/* The scheduler tick fires at multiples of its period in CLOCK_MONOTONIC; 4 ms is a
 * multiple of the period at HZ=250 (Debian's), 500 and 1000. A wake-up aimed TICK_EARLY_NS
 * before a boundary lies within the kernel's own default timer slack (50 us) of it. */
#define TICK_NS 4000000ull
#define TICK_EARLY_NS 25000ull

/* When to wake for something due in timeout_ns that may run up to slack_ns late: at the
 * first tick boundary in that window if there is one, else on time. Why: measured on
 * these machines, a sleep whose timer expires between ticks costs about 2 us more per
 * wake-up, because the kernel must program its timer hardware for it (a trap to the
 * hypervisor in a VM); a timer that expires with the tick rides the tick's interrupt.
 * PME's own timers (retransmission >= 1 ms, delayed ACK) tolerate such lateness. Aiming
 * at the tick leaves the calling thread's timer slack alone: setting it around each
 * sleep (prctl) cost three system calls per wake-up, 6% of a sleeping ping-pong. */
static uint64_t aim_at_tick(uint64_t now, uint64_t timeout_ns, uint64_t slack_ns)
{
    uint64_t due = now + timeout_ns;
    uint64_t tick = (due + TICK_NS - 1) / TICK_NS * TICK_NS;
    if (tick - due > slack_ns)
        return timeout_ns;
    uint64_t at = tick - TICK_EARLY_NS > due ? tick - TICK_EARLY_NS : due;
    return at - now;
}

static uint64_t ns_until(uint64_t now, uint64_t t)
{
    return !t ? UINT64_MAX : t <= now ? 0 : t - now;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
    return a < b ? a : b;
}

/* The latest acceptable wake-up for something due in due_ns that may be up to late_ns
 * late (UINT64_MAX: nothing due). */
static uint64_t latest(uint64_t due_ns, uint64_t late_ns)
{
    return due_ns == UINT64_MAX ? UINT64_MAX : due_ns + late_ns;
}

/* Sleep in ppoll() on the device until a frame comes, the device has room again, PME's
 * next timer is due, the caller's bound passes (caller_ns after ep->now; UINT64_MAX:
 * none) or, with watch_wake, the caller's own wake descriptor is readable (only an idle
 * pass watches it: pme_ep_idle's caller drains it, pme_wait's loop would not). The
 * wake-up may be late so that it rides the scheduler tick: our timers by up to
 * PME_SLEEP_SLACK_US, the caller's bound by at most its own length as well. Delayed
 * ACKs go before the sleep, since no reply will carry them. Callers have just set
 * ep->now. */
static void sleep_on_device(struct pme_ep *ep, uint64_t caller_ns, bool watch_wake)
{
    pme_timers_ack_before_sleep(ep);
    pme_link_send_gathered(ep);
    uint64_t timer_ns = ns_until(ep->now, ep->next_timer_ns);
    struct pollfd pfd[2 * PME_MAX_DEVS + 1];
    unsigned n = 0;
    for (unsigned i = 0; i < ep->ndev; i++) {
        struct pme_dev *dev = ep->devs[i];
        int fd = dev->ops->fd(dev);
        int out_fd = pme_dev_room_fd(dev, ep->blocked_devs & (1u << i));
        pfd[n++] = (struct pollfd){fd, POLLIN | (out_fd == fd ? POLLOUT : 0), 0};
        if (out_fd >= 0 && out_fd != fd)
            pfd[n++] = (struct pollfd){out_fd, POLLOUT, 0};
    }
    if (watch_wake && ep->wake_fd >= 0)
        pfd[n++] = (struct pollfd){ep->wake_fd, POLLIN, 0};
    uint64_t timeout_ns = min_u64(timer_ns, caller_ns);
    uint64_t slack_ns = (uint64_t)ep->cfg.sleep_slack_us * 1000u;
    bool limited = timeout_ns != UINT64_MAX;
    if (limited && slack_ns) {
        uint64_t last = min_u64(latest(timer_ns, slack_ns),
                                latest(caller_ns, min_u64(caller_ns, slack_ns)));
        timeout_ns = aim_at_tick(ep->now, timeout_ns, last - timeout_ns);
    }
    struct timespec ts = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    ep->ctr->wait_sleeps++;
    ppoll(pfd, n, limited ? &ts : NULL, NULL);
}

int pme_wait_do(struct pme_ep *ep, int timeout_ms)
{
    bool sleeps = pme_ep_wait_fd(ep) >= 0;
    ep->now = pme_now_ns();
    /* A caller that waits sends nothing more to join what gathers (a poll, timeout 0,
     * may come between sends). */
    if (timeout_ms != 0)
        pme_link_send_gathered(ep);
    bool sleep_at_once = sleeps && timeout_ms != 0 && !may_spin(ep);
    int n = pme_progress_pass(ep, !sleep_at_once);
    if (n || timeout_ms == 0)
        return n;
    uint64_t deadline = timeout_ms < 0 ? 0 : ep->now + (uint64_t)timeout_ms * 1000000u;
    /* Auto mode polls for spin_us after the last frame moved, not after the call began:
     * a rendezvous receive sees no event for the hundreds of microseconds its frames
     * take, and sleeping between them would make the sender wait for our wake-ups. */
    uint64_t busy_ns = ep->now, frames = activity(ep);
    for (;;) {
        bool spin = may_spin(ep) &&
                    (ep->cfg.wait_mode == PME_WAIT_SPIN ||
                     ep->now - busy_ns < (uint64_t)ep->cfg.spin_us * 1000u);
        if (spin || !sleeps) {
            ep->ctr->wait_spins++;
            if (!sleeps && !spin)
                sched_yield();
        } else {
            sleep_on_device(ep, ns_until(ep->now, deadline), false);
        }
        ep->now = pme_now_ns();
        n = pme_progress_pass(ep, true);
        if (n)
            return n;
        uint64_t moved = activity(ep);
        if (moved != frames) {
            frames = moved;
            busy_ns = ep->now;
        }
        if (deadline && ep->now >= deadline)
            return 0;
    }
}

/* What an idle pass does: return at once (polling is right), give the core away, or
 * sleep on the device. */
enum idle_choice { IDLE_POLL, IDLE_YIELD, IDLE_SLEEP };

static enum idle_choice idle_choice(struct pme_ep *ep, uint64_t idle_us, unsigned max_sleep_us)
{
    bool own_core = may_spin(ep);
    if (own_core && (ep->cfg.wait_mode == PME_WAIT_SPIN || idle_us < ep->cfg.spin_us))
        return IDLE_POLL;
    /* Sharing the core: give it away at once, and sleep after yield_us of quiet. */
    if ((!own_core && idle_us < ep->cfg.yield_us) || pme_ep_wait_fd(ep) < 0 || max_sleep_us == 0)
        return IDLE_YIELD;
    return IDLE_SLEEP;
}

bool pme_idle_sleeps(struct pme_ep *ep, uint64_t idle_us, unsigned max_sleep_us)
{
    return idle_choice(ep, idle_us, max_sleep_us) == IDLE_SLEEP;
}

void pme_idle_do(struct pme_ep *ep, uint64_t idle_us, unsigned max_sleep_us)
{
    /* Sends that wait for a pass go, and small messages gathering into a bundle: an
     * idle caller sends no more to join them, and may be idle for a long time. */
    if (ep->dirty.n)
        pme_link_after_batch(ep);
    pme_link_send_gathered(ep);
    switch (idle_choice(ep, idle_us, max_sleep_us)) {
    case IDLE_POLL:
        return;
    case IDLE_YIELD:
        ep->ctr->wait_spins++;
        sched_yield();
        return;
    case IDLE_SLEEP:
        /* The caller bounds the sleep to make progress of its own (MPI's shared memory). */
        sleep_on_device(ep, (uint64_t)max_sleep_us * 1000u, true);
        return;
    }
}

/* Progress until every send is acknowledged or timeout_ms passes. */
int pme_flush_do(struct pme_ep *ep, int timeout_ms)
{
    uint64_t deadline = pme_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        ep->now = pme_now_ns();
        pme_progress_pass(ep, true);
        bool busy = false;
        for (uint32_t i = 0; i < ep->npeers && !busy; i++) {
            struct pme_peer *p = pme_peer_get(ep, i);
            busy = p->tx_state != TX_FAILED && pme_peer_has_queued(p);
        }
        if (!busy && ep->sendreqs.used == 0)
            return PME_OK;
        if (timeout_ms >= 0 && pme_now_ns() >= deadline)
            return PME_ERR_TIMEOUT;
        pme_wait_do(ep, 1);
    }
}
