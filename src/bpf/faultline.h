/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * faultline.h - the fault injector's delay line (faultline.c): run it for the program
 * attached to an interface, until that program goes.
 */
#ifndef PME_FAULTLINE_H
#define PME_FAULTLINE_H

#include <stddef.h>

/* 0 when the program went (or another line serves it), -1 with a message in err. */
int faultline_run(const char *ifname, char *err, size_t errlen);

#endif
