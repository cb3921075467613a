/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * routefile.h - a node's route file (pme_route.h's text form) read back whole, for the
 * tools that load or show it.
 */
#ifndef PME_ROUTEFILE_H
#define PME_ROUTEFILE_H

#include <stddef.h>
#include <stdint.h>

#include "pme_route.h"

#define ROUTEFILE_MAX_IFS 8

struct routefile {
    uint32_t node;
    uint16_t ethertype;
    int nif;
    struct { char name[16]; uint8_t mac[6]; } ifs[ROUTEFILE_MAX_IFS];
    int nroutes;
    struct pme_route_line *routes;
};

/* routefile_read: 0, or -1 with a message naming the line in err. */
int routefile_read(const char *path, struct routefile *rf, char *err, size_t errlen);
void routefile_free(struct routefile *rf);

/* Index of the interface called name in rf->ifs, or -1. */
int routefile_iface(const struct routefile *rf, const char *name);

#endif
