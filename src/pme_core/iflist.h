/*
 * iflist.h - interface lists ("eth1", "xp,xm", "x*,y*"): expanding one into names, and
 * joining names back into one.
 */
#ifndef PME_IFLIST_H
#define PME_IFLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "pme.h"

#define PME_MAX_DEVS PME_MAX_IFACES
#define PME_IFNAME_LEN 16

/* Names and shell patterns separated by commas into at most PME_MAX_DEVS distinct
 * names, in the order given (a pattern's matches in name order). Returns how many, or
 * -1 with err saying why (an empty item, a pattern that matches nothing, too many). */
int pme_iflist_expand(const char *spec, char names[][PME_IFNAME_LEN], char *err,
                      size_t errlen);
/* n names joined with commas into buf ("xp,xm,yp,ym"), as many as fit. */
void pme_iflist_join(char names[][PME_IFNAME_LEN], unsigned n, char *buf, size_t len);

#endif
