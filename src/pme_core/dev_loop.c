// SPDX-License-Identifier: BSD-3-Clause
/*
 * dev_loop.c - an in-process wire for tests, with deterministic faults.
 *
 * Endpoints opened with device "loop" on the same pme_loop_wire exchange frames by
 * MAC, each with its own receive queue. Faults are drawn from a seeded generator, so
 * a failing run repeats exactly: drop, duplicate, reorder (hold a frame behind the
 * next one), corrupt (flip one bit past the Ethernet header), delay (hold a frame for
 * a number of later frames), full (a send call takes only some of its frames, as a
 * full socket buffer does). A cut endpoint's frames vanish both ways, like a host
 * that died. Tests drive the endpoints from one thread, but an endpoint's liveness
 * helper thread polls and sends on its own: the wire's lock covers its queues, taken
 * briefly (never while a received frame is handed up, which may send).
 * Each endpoint's queue has an eventfd that is readable while frames wait, so that
 * blocking waits sleep on the loop device as they do on a real one; it is made on first
 * use, since tests open thousands of loop endpoints and most never sleep.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dev.h"

#define LOOP_QUEUE_LIMIT (256u << 20) /* bytes queued per endpoint before drops */
#define LOOP_MAX_HELD 64

struct loop_frame {
    struct loop_frame *next;
    size_t len;
    unsigned countdown;     /* held frames: later frames to wait for */
    uint8_t data[];
};

struct loop_dev {
    struct pme_dev base;
    struct pme_loop_wire *wire;
    struct loop_dev *next_on_wire;
    struct loop_frame *head, *tail;
    size_t queued;
    uint64_t overruns;
    int cut;
    int efd;                /* readable while frames wait; -1 until asked for */
};

struct pme_loop_wire {
    pthread_mutex_t lock;
    struct pme_loop_faults f;
    struct loop_frame *orphans;     /* frames to MACs nobody has, for tests to take */
    size_t norphans;
    uint64_t rng;
    uint32_t next_mac;
    struct loop_dev *devs;
    struct loop_frame *held[LOOP_MAX_HELD];
    int nheld;
};

static uint64_t rng_next(struct pme_loop_wire *w)
{
    /* splitmix64: small, fast, and the same sequence for the same seed everywhere */
    uint64_t z = (w->rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int chance(struct pme_loop_wire *w, double p)
{
    if (p <= 0)
        return 0;
    return (double)(rng_next(w) >> 11) * (1.0 / 9007199254740992.0) < p;
}

int pme_loop_wire_create(const struct pme_loop_faults *faults, struct pme_loop_wire **out)
{
    struct pme_loop_wire *w = calloc(1, sizeof(*w));
    if (!w)
        return PME_ERR_NOMEM;
    pthread_mutex_init(&w->lock, NULL);
    pme_loop_wire_set_faults(w, faults);
    w->next_mac = 1;
    *out = w;
    return PME_OK;
}

void pme_loop_wire_set_faults(struct pme_loop_wire *w, const struct pme_loop_faults *faults)
{
    if (faults)
        w->f = *faults;
    else
        memset(&w->f, 0, sizeof(w->f));
    w->rng = w->f.seed;
}

void pme_loop_wire_destroy(struct pme_loop_wire *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->nheld; i++)
        free(w->held[i]);
    while (w->orphans) {
        struct loop_frame *f = w->orphans;
        w->orphans = f->next;
        free(f);
    }
    pthread_mutex_destroy(&w->lock);
    free(w);
}

/* The oldest frame sent to mac that no endpoint took. */
size_t pme_loop_wire_take(struct pme_loop_wire *w, const uint8_t mac[6], void *buf,
                          size_t len)
{
    pthread_mutex_lock(&w->lock);
    struct loop_frame **pp = &w->orphans, **found = NULL;
    for (; *pp; pp = &(*pp)->next)
        if (!memcmp((*pp)->data, mac, 6))
            found = pp; /* the list is newest first: keep the last match */
    struct loop_frame *f = found ? *found : NULL;
    if (f) {
        *found = f->next;
        w->norphans--;
    }
    pthread_mutex_unlock(&w->lock);
    if (!f)
        return 0;
    size_t n = f->len < len ? f->len : len;
    memcpy(buf, f->data, n);
    free(f);
    return n;
}

static struct loop_dev *find_mac(struct pme_loop_wire *w, const uint8_t *mac)
{
    for (struct loop_dev *d = w->devs; d; d = d->next_on_wire)
        if (!memcmp(d->base.mac, mac, 6))
            return d;
    return NULL;
}

/* Detach a loop device from its wire: its frames vanish both ways, as if its host died
 * (pme_loop_wire_cut in ep.c hands us the endpoint's device). */
void pme_dev_loop_cut(struct pme_dev *dev)
{
    ((struct loop_dev *)dev)->cut = 1;
}

int pme_dev_loop_is_cut(const struct pme_dev *dev)
{
    return ((const struct loop_dev *)dev)->cut;
}

#define LOOP_MAX_ORPHANS 1024

/* Keep a frame for a MAC nobody has (tests take them); when too many wait, the oldest
 * goes, so that what a test waits for is never the one thrown away. */
static void keep_orphan(struct pme_loop_wire *w, struct loop_frame *f)
{
    f->next = w->orphans;
    w->orphans = f;
    if (++w->norphans <= LOOP_MAX_ORPHANS)
        return;
    struct loop_frame **pp = &w->orphans;
    while ((*pp)->next)
        pp = &(*pp)->next;
    free(*pp);
    *pp = NULL;
    w->norphans--;
}

static void deliver(struct pme_loop_wire *w, struct loop_frame *f)
{
    if (f->len < 14) {
        free(f); /* shorter than an Ethernet header: no NIC delivers it */
        return;
    }
    struct loop_dev *d = find_mac(w, f->data);
    if (!d) {
        keep_orphan(w, f);
        return;
    }
    if (d->cut) {
        free(f);
        return;
    }
    if (d->queued + f->len > LOOP_QUEUE_LIMIT) {
        d->overruns++;
        free(f);
        return;
    }
    f->next = NULL;
    if (d->tail) {
        d->tail->next = f;
    } else {
        d->head = f;
        if (d->efd >= 0 && eventfd_write(d->efd, 1) < 0)
            (void)0; /* a counter that cannot overflow at one per empty-to-busy change */
    }
    d->tail = f;
    d->queued += f->len;
}

/* A frame passed: held frames whose wait is over go on. */
static void release_held(struct pme_loop_wire *w)
{
    int j = 0;
    struct loop_frame *due[LOOP_MAX_HELD];
    int ndue = 0;
    for (int i = 0; i < w->nheld; i++) {
        if (--w->held[i]->countdown == 0)
            due[ndue++] = w->held[i];
        else
            w->held[j++] = w->held[i];
    }
    w->nheld = j;
    for (int i = 0; i < ndue; i++)
        deliver(w, due[i]);
}

static void hold(struct pme_loop_wire *w, struct loop_frame *f, unsigned countdown)
{
    if (w->nheld == LOOP_MAX_HELD) {
        deliver(w, f);
        return;
    }
    f->countdown = countdown ? countdown : 1;
    w->held[w->nheld++] = f;
}

static int wire_send(struct pme_loop_wire *w, struct loop_dev *src,
                     const struct pme_dev_frame *frames, int n);

static int locked_send(struct pme_loop_wire *w, struct loop_dev *src,
                       const struct pme_dev_frame *frames, int n)
{
    pthread_mutex_lock(&w->lock);
    n = wire_send(w, src, frames, n);
    pthread_mutex_unlock(&w->lock);
    return n;
}

static int loop_send(struct pme_dev *dev, const struct pme_dev_frame *frames, int n)
{
    struct loop_dev *src = (struct loop_dev *)dev;
    return locked_send(src->wire, src, frames, n);
}

int pme_loop_wire_inject(struct pme_loop_wire *w, const void *frame, size_t len)
{
    struct pme_dev_frame f = {.iov = {{(void *)frame, len}}, .iovcnt = 1};
    return locked_send(w, NULL, &f, 1) == 1 ? PME_OK : PME_ERR_NOMEM;
}

static int wire_send(struct pme_loop_wire *w, struct loop_dev *src,
                     const struct pme_dev_frame *frames, int n)
{
    for (int i = 0; i < n; i++) {
        size_t len = 0;
        for (int k = 0; k < frames[i].iovcnt; k++)
            len += frames[i].iov[k].iov_len;
        if (src && src->cut)
            continue;
        if (src && chance(w, w->f.full))
            return i; /* like a full socket buffer: the rest waits for room */
        struct loop_frame *f = malloc(sizeof(*f) + len);
        if (!f)
            return i;
        f->len = len;
        size_t off = 0;
        for (int k = 0; k < frames[i].iovcnt; k++) {
            memcpy(f->data + off, frames[i].iov[k].iov_base, frames[i].iov[k].iov_len);
            off += frames[i].iov[k].iov_len;
        }
        int held_before = w->nheld;
        if (chance(w, w->f.drop)) {
            free(f);
        } else {
            if (chance(w, w->f.corrupt) && len > 14) {
                size_t pos = 14 + rng_next(w) % (len - 14);
                f->data[pos] ^= (uint8_t)(1u << (rng_next(w) % 8));
            }
            if (chance(w, w->f.dup)) {
                struct loop_frame *copy = malloc(sizeof(*copy) + len);
                if (copy) {
                    memcpy(copy, f, sizeof(*f) + len);
                    deliver(w, copy);
                }
            }
            if (chance(w, w->f.reorder))
                hold(w, f, 1);
            else if (chance(w, w->f.delay))
                hold(w, f, w->f.delay_frames);
            else
                deliver(w, f);
        }
        /* Frames held before this one have now been passed by it. */
        if (held_before)
            release_held(w);
    }
    return n;
}

static int loop_poll(struct pme_dev *dev, int max, pme_rx_fn fn, void *arg)
{
    struct loop_dev *d = (struct loop_dev *)dev;
    int n = 0;
    for (; n < max; n++) {
        pthread_mutex_lock(&d->wire->lock);
        struct loop_frame *f = d->head;
        if (f) {
            d->head = f->next;
            if (!d->head)
                d->tail = NULL;
            d->queued -= f->len;
        }
        eventfd_t drained;
        if (!d->head && d->efd >= 0 && eventfd_read(d->efd, &drained) < 0)
            (void)0; /* already clear */
        pthread_mutex_unlock(&d->wire->lock);
        if (!f)
            break;
        if (!d->cut)
            fn(arg, f->data, f->len);
        free(f);
    }
    return n;
}

static int loop_fd(struct pme_dev *dev)
{
    struct loop_dev *d = (struct loop_dev *)dev;
    if (d->efd < 0) {
        d->efd = eventfd(d->head ? 1 : 0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (d->efd < 0)
            d->efd = -1;
    }
    return d->efd;
}

static uint64_t loop_overruns(struct pme_dev *dev)
{
    return ((struct loop_dev *)dev)->overruns;
}

static int loop_open(struct pme_dev **out, const struct pme_config *cfg, const struct pme_dev_who *who,
                     char *err, size_t errlen)
{
    (void)who;
    struct pme_loop_wire *w = cfg->loop_wire;
    if (!w) {
        snprintf(err, errlen, "the loop device needs a wire (pme_loop_wire_create)");
        return PME_ERR_INVAL;
    }
    struct loop_dev *d = calloc(1, sizeof(*d));
    if (!d)
        return PME_ERR_NOMEM;
    d->base.ops = &pme_dev_loop_ops;
    d->efd = -1;
    pthread_mutex_lock(&w->lock);
    uint32_t id = w->next_mac++;
    uint8_t mac[6] = {0x02, 0x00, 0x00, (uint8_t)(id >> 16), (uint8_t)(id >> 8), (uint8_t)id};
    memcpy(d->base.mac, mac, 6);
    d->base.mtu = cfg->mtu ? cfg->mtu : 9000;
    d->wire = w;
    d->next_on_wire = w->devs;
    w->devs = d;
    pthread_mutex_unlock(&w->lock);
    *out = &d->base;
    return PME_OK;
}

static void loop_close(struct pme_dev *dev)
{
    struct loop_dev *d = (struct loop_dev *)dev;
    pthread_mutex_lock(&d->wire->lock);
    struct loop_dev **pp = &d->wire->devs;
    while (*pp && *pp != d)
        pp = &(*pp)->next_on_wire;
    if (*pp)
        *pp = d->next_on_wire;
    pthread_mutex_unlock(&d->wire->lock);
    while (d->head) {
        struct loop_frame *f = d->head;
        d->head = f->next;
        free(f);
    }
    if (d->efd >= 0)
        close(d->efd);
    free(d);
}

const struct pme_dev_ops pme_dev_loop_ops = {
    .name = "loop",
    .open = loop_open,
    .close = loop_close,
    .poll = loop_poll,
    .send = loop_send,
    .fd = loop_fd,
    .rx_overruns = loop_overruns,
};
