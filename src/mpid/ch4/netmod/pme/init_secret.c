// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - what keeps jobs apart on the wire: the job key that drops other jobs'
 * frames early, and the job secret under which every frame carries a MAC.
 */
#include "mpidimpl.h"
#include "pme_impl.h"
#include "pme_init.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Frames that carry no MAC (PME_AUTH=crc or none) are told apart by the job key: a
 * frame with another job's key is dropped early. (A MAC's job id comes from the secret
 * instead, see pme_wire_keys_init.) Rank 0 draws the key with the secret and PMI spreads
 * both (MPIDI_PME_job_secret below), so it is the same in every process of the job and
 * new for every job, whichever launcher started it and however that names its jobs
 * (hydra, Slurm's pmi2). PME_JOB_KEY overrides it. */
static uint32_t job_key = 1;

uint32_t MPIDI_PME_job_key(void)
{
    return job_key;
}

/* Every process of the job learns the same secret, made by rank 0 from the kernel's
 * random source and spread through PMI (never on the wire): PME's frames carry a MAC
 * under it, so no process outside the job can forge or inject one. The job key travels
 * with it. Collective: every process calls it before anything can fail, so that none
 * waits for a missing one. Returns nonzero when rank 0 could not make one (reported like
 * any failure of MPI_Init, by every process). */
int MPIDI_PME_job_secret(uint8_t secret[PME_SECRET_BYTES])
{
    /* the secret, then the job key (4 bytes), then 1 when rank 0 succeeded */
    enum { KEY = PME_SECRET_BYTES, OK = PME_SECRET_BYTES + 4 };
    uint8_t buf[OK + 1] = { 0 };
    if (MPIR_Process.rank == 0) {
        uint8_t rnd[PME_SECRET_BYTES];
        buf[OK] = pme_secret_generate(buf) == PME_OK && pme_secret_generate(rnd) == PME_OK;
        memcpy(buf + KEY, rnd, 4);
        pme_secret_wipe(rnd, sizeof(rnd));
    }
    if (MPIR_pmi_bcast(buf, sizeof(buf), MPIR_PMI_DOMAIN_ALL) != MPI_SUCCESS)
        buf[OK] = 0;
    memcpy(secret, buf, PME_SECRET_BYTES);
    job_key = (uint32_t) buf[KEY] << 24 | (uint32_t) buf[KEY + 1] << 16 |
        (uint32_t) buf[KEY + 2] << 8 | buf[KEY + 3];
    if (!job_key)
        job_key = 1;
    int ok = buf[OK];
    pme_secret_wipe(buf, sizeof(buf));
    return ok ? 0 : -1;
}

/* The secret when none was given: made for the job, unless frames are not to be
 * authenticated. Processes started by MPI_Comm_spawn cannot learn their parents' secret
 * or job key (PMI keeps one job's data from another's), so they need one given to every
 * job alike: a secret file, or without MACs a job key. */
int MPIDI_PME_choose_secret(struct pme_config *cfg, const uint8_t made[PME_SECRET_BYTES],
                         int made_ok, char *err, size_t errlen)
{
    if (cfg->secret_len)
        return 0;
    if (cfg->auth == PME_AUTH_CRC || cfg->auth == PME_AUTH_NONE) {
        if (MPIR_Process.has_parent && !getenv("PME_JOB_KEY")) {
            snprintf(err, errlen, "processes started by MPI_Comm_spawn share their parents' "
                     "job key only when it is given to both: start mpiexec with "
                     "PME_JOB_KEY=<a number> or PME_JOB_SECRET_FILE=<file> in its environment");
            return -1;
        }
        return 0;
    }
    if (MPIR_Process.has_parent) {
        snprintf(err, errlen, "processes started by MPI_Comm_spawn share their parents' job "
                 "secret only through a file: start mpiexec with PME_JOB_SECRET_FILE=<file> "
                 "in its environment (make one with: pme_info --new-secret > <file>), or "
                 "PME_AUTH=crc on a network where every host is trusted");
        return -1;
    }
    if (!made_ok) {
        snprintf(err, errlen, "rank 0 could not make the job secret (no random bytes from "
                 "the kernel); set PME_JOB_SECRET_FILE or PME_AUTH=crc");
        return -1;
    }
    memcpy(cfg->secret, made, PME_SECRET_BYTES);
    cfg->secret_len = PME_SECRET_BYTES;
    return 0;
}
