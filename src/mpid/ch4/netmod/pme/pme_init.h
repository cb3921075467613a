/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - the parts of start-up that init.c calls: choosing the interface
 * (init_iface.c) and the job key and secret (init_secret.c).
 */
#ifndef PME_INIT_H_INCLUDED
#define PME_INIT_H_INCLUDED

#include "pme_impl.h"

/* init_iface.c */
int MPIDI_PME_choose_iface(struct pme_config *cfg, char *err, size_t errlen);

/* init_secret.c */
uint32_t MPIDI_PME_job_key(void);
int MPIDI_PME_job_secret(uint8_t secret[PME_SECRET_BYTES]);
int MPIDI_PME_choose_secret(struct pme_config *cfg, const uint8_t made[PME_SECRET_BYTES],
                            int made_ok, char *err, size_t errlen);

#endif /* PME_INIT_H_INCLUDED */
