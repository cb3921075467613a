/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * progress.h - layer 5: progress passes, waiting, and the liveness helper.
 */
#ifndef PME_PROGRESS_H
#define PME_PROGRESS_H

#include "pme_internal.h"

/* progress.c */
/* One pass at ep->now: resume blocked sends, take frames (poll_device), run timers and
 * judge suspects, send what became due. Returns the number of events ready. */
int pme_progress_pass(struct pme_ep *ep, bool poll_device);

/* wait.c */
int pme_flush_do(struct pme_ep *ep, int timeout_ms);
void pme_wait_init(struct pme_ep *ep);
int pme_wait_do(struct pme_ep *ep, int timeout_ms);
void pme_idle_do(struct pme_ep *ep, uint64_t idle_us, unsigned max_sleep_us);
bool pme_idle_sleeps(struct pme_ep *ep, uint64_t idle_us, unsigned max_sleep_us);

/* helper.c */
int pme_helper_start(struct pme_ep *ep, char *err, size_t errlen);
void pme_helper_stop(struct pme_ep *ep);
/* The caller leaves with small messages gathering: the helper sends them when due. */
void pme_helper_tell(struct pme_ep *ep);
/* How often the helper thread has woken (for tests: it must not spin). */
uint64_t pme_helper_wakeups(const struct pme_ep *ep);

#endif
