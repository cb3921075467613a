// SPDX-License-Identifier: BSD-3-Clause
/* dev.c - choosing a device by name, or the best one this process may use ("auto"). */
#include <string.h>

#include "dev.h"

const struct pme_dev_ops *pme_dev_find(const char *name)
{
    static const struct pme_dev_ops *const all[] = {
        &pme_dev_ring_ops, &pme_dev_pcap_ops, &pme_dev_loop_ops, &pme_dev_kernel_ops,
    };
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
        if (!strcmp(all[i]->name, name))
            return all[i];
    return NULL;
}

int pme_dev_known(const char *name)
{
    return !strcmp(name, PME_DEV_AUTO) || pme_dev_find(name);
}

/* The kernel device when its driver is loaded and this user may open it: it needs no
 * privilege, answers liveness probes while the process computes and places large
 * messages without copies. Otherwise the raw-frame ring, as before the driver existed. */
const struct pme_dev_ops *pme_dev_choose(const char *name)
{
    if (strcmp(name, PME_DEV_AUTO))
        return pme_dev_find(name);
    return pme_dev_kernel_usable() ? &pme_dev_kernel_ops : &pme_dev_ring_ops;
}
