/* dev.c - choosing a device by name. */
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
