/*
 * iflist.h - expanding an interface list ("eth1", "xp,xm", "x*,y*") into names.
 */
#ifndef PME_IFLIST_H
#define PME_IFLIST_H

#include <stdbool.h>
#include <stddef.h>

#include "node_routes.h"

/* Names and shell patterns separated by commas into at most PME_MAX_DEVS distinct
 * names, in the order given (a pattern's matches in name order). Returns how many, or
 * -1 with err saying why (an empty item, a pattern that matches nothing, too many). */
int pme_iflist_expand(const char *spec, char names[][PME_IFNAME_LEN], char *err,
                      size_t errlen);

#endif
