/* errors.c - the endpoint's last error, and randomness, for every layer. */
#include <stdarg.h>
#include <stdio.h>
#include <sys/random.h>

#include "pme_internal.h"

void pme_ep_set_error(struct pme_ep *ep, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ep->err, sizeof(ep->err), fmt, ap);
    va_end(ap);
}

/* Bytes from the kernel's random source; -1 if it has not enough (early boot). */
int pme_getrandom(void *buf, size_t len)
{
    return getrandom(buf, len, GRND_NONBLOCK) == (ssize_t)len ? 0 : -1;
}
