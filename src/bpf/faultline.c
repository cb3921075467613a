// SPDX-License-Identifier: BSD-3-Clause
/*
 * faultline.c - the fault injector's delay line (see pme_faults.h): the process that
 * holds the frames the program hands over and sends each at its departure time.
 *
 * It reads the program's ring buffer, keeps the frames in a heap ordered by departure
 * time (then by arrival, so frames due together keep their order), sleeps on a timer
 * until the next one is due, and sends it through a packet socket bound to the
 * interface whose frames carry PME_FAULTS_PASS_MARK, so that the program lets them
 * through. It tells the program it is alive, and how many in-order frames it has sent,
 * through the memory-mapped map faults_lstate.
 *
 * One line per program: a second one started for the same program exits at once (an
 * abstract socket named after the program is the lock; it goes with the process). The
 * line ends, after sending what it holds, when the program is no longer attached.
 */
#include <errno.h>
#include <stddef.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "faultline.h"
#include "pme_faults.h"
#include "tc_hook.h"

struct held {
    uint64_t depart, seq;
    uint32_t len;
    int in_order;
    uint8_t frame[];
};

struct line {
    struct held **heap;
    size_t n, cap;
    uint64_t seq;
    int oom;
};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ---------------------------------------------------------------- the heap */

static int before(const struct held *a, const struct held *b)
{
    return a->depart < b->depart || (a->depart == b->depart && a->seq < b->seq);
}

static void swap(struct held **a, struct held **b)
{
    struct held *t = *a;
    *a = *b;
    *b = t;
}

static int push(struct line *l, struct held *h)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        struct held **heap = realloc(l->heap, cap * sizeof(*heap));
        if (!heap)
            return -1;
        l->heap = heap;
        l->cap = cap;
    }
    size_t i = l->n++;
    l->heap[i] = h;
    while (i && before(l->heap[i], l->heap[(i - 1) / 2])) {
        swap(&l->heap[i], &l->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    return 0;
}

static struct held *pop(struct line *l)
{
    struct held *top = l->heap[0];
    l->heap[0] = l->heap[--l->n];
    for (size_t i = 0;;) {
        size_t c = 2 * i + 1, m = i;
        if (c < l->n && before(l->heap[c], l->heap[m]))
            m = c;
        if (c + 1 < l->n && before(l->heap[c + 1], l->heap[m]))
            m = c + 1;
        if (m == i)
            break;
        swap(&l->heap[i], &l->heap[m]);
        i = m;
    }
    return top;
}

/* on_record: a frame handed over by the program (ring buffer callback). */
static int on_record(void *ctx, void *data, size_t size)
{
    struct line *l = ctx;
    const struct pme_faults_line_rec *r = data;
    if (size < sizeof(*r) || r->len > size - sizeof(*r))
        return 0;
    struct held *h = malloc(sizeof(*h) + r->len);
    if (h) {
        h->depart = r->depart_ns;
        h->seq = l->seq++;
        h->len = r->len;
        h->in_order = r->in_order != 0;
        memcpy(h->frame, (const uint8_t *)data + sizeof(*r), r->len);
    }
    if (!h || push(l, h)) {
        free(h);
        l->oom = 1;
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- setting up */

/* only_line: take the lock of this program's line; 0: taken, 1: another line has it. */
static int only_line(uint32_t prog_id, int *fd)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "pme-faultline-%u", prog_id);
    *fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (*fd < 0)
        return -1;
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    if (bind(*fd, (struct sockaddr *)&a, len))
        return errno == EADDRINUSE ? 1 : -1;
    return 0;
}

static int send_socket(const char *ifname, char *err, size_t errlen)
{
    int idx = pme_tc_ifindex(ifname, err, errlen);
    if (idx < 0)
        return -1;
    int s = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* protocol 0: sends only */
    struct sockaddr_ll sll;
    memset(&sll, 0, sizeof(sll));
    sll.sll_family = AF_PACKET;
    sll.sll_ifindex = idx;
    unsigned mark = PME_FAULTS_PASS_MARK;
    int sb = 16 << 20;
    if (s < 0 || bind(s, (struct sockaddr *)&sll, sizeof(sll)) ||
        setsockopt(s, SOL_SOCKET, SO_MARK, &mark, sizeof(mark))) {
        snprintf(err, errlen, "cannot open the delay line's socket on %s: %s", ifname,
                 strerror(errno));
        return -1;
    }
    setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof(sb));
    return s;
}

/* ---------------------------------------------------------------- running */

/* send_due: send what is due; returns the next departure time (0: none left). A full
 * queue leaves the frame for a little later. */
static uint64_t send_due(struct line *l, int s, struct pme_faults_line_state *ls, int all)
{
    uint64_t now = now_ns();
    while (l->n && (all || l->heap[0]->depart <= now)) {
        struct held *h = l->heap[0];
        if (send(s, h->frame, h->len, MSG_DONTWAIT) < 0 && (errno == ENOBUFS || errno == EAGAIN)) {
            if (!all)
                return now + 50000;
            usleep(100);
            continue;
        }
        /* Sent, or lost on a link that went away: either way it left the line. */
        if (h->in_order)
            __atomic_store_n(&ls->released, ls->released + 1, __ATOMIC_RELEASE);
        free(pop(l));
    }
    return l->n ? l->heap[0]->depart : 0;
}

static void arm(int tfd, uint64_t at)
{
    struct itimerspec it;
    memset(&it, 0, sizeof(it));
    if (at) {
        it.it_value.tv_sec = (time_t)(at / 1000000000ull);
        it.it_value.tv_nsec = (long)(at % 1000000000ull);
    }
    timerfd_settime(tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

int faultline_run(const char *ifname, char *err, size_t errlen)
{
    uint32_t prog_id;
    if (pme_tc_query(ifname, PME_TC_EGRESS, PME_TC_PRIO_FAULTS, &prog_id, err, errlen))
        return -1;
    if (!prog_id) {
        snprintf(err, errlen, "no fault injector on %s to run a delay line for", ifname);
        return -1;
    }
    int lock, rc = only_line(prog_id, &lock);
    if (rc > 0)
        return 0; /* this program has its line */
    if (rc < 0) {
        snprintf(err, errlen, "cannot take the line's lock: %s", strerror(errno));
        return -1;
    }
    int ring = pme_tc_prog_map(prog_id, "pme_faults", "faults_line", err, errlen);
    int lsfd = ring < 0 ? -1 : pme_tc_prog_map(prog_id, "pme_faults", "faults_lstate", err, errlen);
    int s = lsfd < 0 ? -1 : send_socket(ifname, err, errlen);
    if (s < 0)
        return -1;
    struct pme_faults_line_state *ls =
        mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED, lsfd, 0);
    if (ls == MAP_FAILED) {
        snprintf(err, errlen, "cannot map the line's state: %s", strerror(errno));
        return -1;
    }
    struct line l = {0};
    struct ring_buffer *rb = ring_buffer__new(ring, on_record, &l, NULL);
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    int ep = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN};
    if (!rb || tfd < 0 || ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &ev) ||
        epoll_ctl(ep, EPOLL_CTL_ADD, ring_buffer__epoll_fd(rb), &ev)) {
        snprintf(err, errlen, "cannot set up the delay line: %s", strerror(errno));
        return -1;
    }
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake up when the frame is due, not 50 us later */
    uint64_t checked = 0;
    for (;;) {
        uint64_t now = now_ns();
        __atomic_store_n(&ls->alive_ns, now, __ATOMIC_RELEASE);
        if (now - checked > 100000000ull) {
            uint32_t id = 0;
            char ignored[256];
            if (pme_tc_query(ifname, PME_TC_EGRESS, PME_TC_PRIO_FAULTS, &id, ignored,
                             sizeof(ignored)) || id != prog_id)
                break; /* detached */
            checked = now;
        }
        ring_buffer__consume(rb);
        if (l.oom)
            break;
        arm(tfd, send_due(&l, s, ls, 0));
        struct epoll_event got[2];
        if (epoll_wait(ep, got, 2, 50) > 0) {
            uint64_t expirations;
            if (read(tfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
                break;
        }
    }
    ring_buffer__consume(rb);
    send_due(&l, s, ls, 1);
    ring_buffer__free(rb);
    if (l.oom) {
        snprintf(err, errlen, "the delay line ran out of memory");
        return -1;
    }
    return 0;
}
