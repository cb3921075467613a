/*
 * dev_kernel.c - the seam for the kernel device (/dev/pme of kmod/).
 *
 * The driver gives unprivileged jobs protected access through mmap'd rings and ioctls
 * (src/pme_core/pme_ioctl.h, shared with kmod/). Until it exists, choosing it fails
 * with a sentence saying what to use instead.
 */
#include <stdio.h>

#include "dev.h"

static int kernel_open(struct pme_dev **dev, const struct pme_config *cfg, uint16_t ep_id,
                       char *err, size_t errlen)
{
    (void)cfg;
    (void)ep_id;
    *dev = NULL;
    snprintf(err, errlen,
             "PME_DEVICE=kernel needs /dev/pme from PME's kernel module (kmod/), which this "
             "version does not provide yet: use PME_DEVICE=ring (root or CAP_NET_RAW)");
    return PME_ERR_NOSYS;
}

const struct pme_dev_ops pme_dev_kernel_ops = {
    .name = "kernel",
    .open = kernel_open,
};
