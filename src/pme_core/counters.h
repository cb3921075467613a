/*
 * counters.h - layer 5: the endpoint's id claim and its published counters (the file
 * pme_info reads; layout in counters_shm.h).
 */
#ifndef PME_COUNTERS_H
#define PME_COUNTERS_H

#include "pme_internal.h"

int pme_counters_open(struct pme_ep *ep);
void pme_counters_publish(struct pme_ep *ep);
void pme_counters_sync(struct pme_ep *ep);
void pme_counters_close(struct pme_ep *ep);

#endif
