// SPDX-License-Identifier: BSD-3-Clause
/*
 * fuzz_route.c - libFuzzer target for the two readers of a node's route file: an
 * endpoint's (pme_routes_load, node_routes.c, which every process of a mesh runs) and
 * the tools' (routefile_read, src/tools/routefile.c, which pme_route runs as root to
 * load the forwarder). Each input is the file's text. Whatever it holds, a reader
 * refuses it with a message or hands out a table whose every entry can be looked up;
 * a crash, leak or undefined behaviour is a failure (AddressSanitizer, UBSan).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node_routes.h"
#include "routefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The file both readers read, made once (mode 0600: the endpoint's reader refuses a
 * route file others may write) and rewritten for every input. */
static char path[64];
static int fd = -1;

static void write_input(const uint8_t *data, size_t size)
{
    if (fd < 0) {
        snprintf(path, sizeof(path), "/tmp/pme-fuzz-route.XXXXXX");
        fd = mkstemp(path);
        if (fd < 0 || fchmod(fd, 0600)) {
            perror("fuzz_route: temporary file");
            abort();
        }
        setenv("PME_ROUTES", path, 1);
    }
    if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("fuzz_route: write");
        abort();
    }
}

/* What an endpoint does with a table it was handed: look up every route and every
 * node's place, and some that are not there. */
static void use_routes(const struct pme_routes *r)
{
    if (!r->present)
        return;
    if (r->niface > PME_MAX_DEVS || (r->n && !r->v))
        abort();
    for (size_t i = 0; i < r->n; i++) {
        const struct pme_route_hop *h = pme_routes_find(r, r->v[i].node);
        if (!h || h->node != r->v[i].node || h->file_iface >= r->niface || !h->hops)
            abort(); /* an entry the table holds but cannot find, or a bad interface */
    }
    for (size_t i = 0; i < r->ncoords; i++)
        if (pme_routes_coords(r, r->coords[i].node) != &r->coords[i])
            abort();
    for (unsigned d = 0; r->ndims > 0 && d < (unsigned)r->ndims; d++)
        if (d >= PME_ROUTE_MAX_DIMS || r->dims[d] < 2)
            abort(); /* a ring or torus of no size */
    (void)pme_routes_find(r, 0);
    (void)pme_routes_coords(r, 0);
}

static void use_routefile(const struct routefile *rf)
{
    if (rf->nif > ROUTEFILE_MAX_IFS)
        abort();
    for (int i = 0; i < rf->nroutes; i++)
        if (routefile_iface(rf, rf->routes[i].iface) < 0)
            abort(); /* a route on an interface the file does not list */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512] = "";
    write_input(data, size);
    struct pme_routes r;
    if (pme_routes_load(&r, err, sizeof(err)) == 0) {
        use_routes(&r);
        pme_routes_free(&r);
    } else if (!err[0] || r.v || r.coords) {
        abort(); /* refused without a word, or with a table left behind */
    }
    struct routefile rf;
    err[0] = 0;
    if (routefile_read(path, &rf, err, sizeof(err)) == 0) {
        use_routefile(&rf);
        routefile_free(&rf);
    } else if (!err[0]) {
        abort();
    }
    return 0;
}
