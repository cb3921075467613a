// SPDX-License-Identifier: BSD-3-Clause
/*
 * route_nofwd.c - route_fwd.h for a pme_route built without BPF support: the route
 * file works, the forwarder does not.
 */
#include "route_fwd.h"

static int missing(char *err, size_t errlen)
{
    snprintf(err, errlen,
             "this pme_route was built without BPF support, so it cannot load the mesh "
             "forwarder: apt-get install clang libbpf-dev bpftool, run configure and make "
             "again (or pass --no-forward when the nodes need no forwarding)");
    return -1;
}

int fwd_load(const struct routefile *rf, char *err, size_t errlen)
{
    (void)rf;
    return missing(err, errlen);
}

int fwd_unload(const struct routefile *rf, char *err, size_t errlen)
{
    (void)rf;
    (void)err;
    (void)errlen;
    return 0; /* nothing can have been loaded */
}

int fwd_show(const struct routefile *rf, FILE *out, int kv, char *err, size_t errlen)
{
    (void)rf;
    (void)out;
    (void)kv;
    return missing(err, errlen);
}
