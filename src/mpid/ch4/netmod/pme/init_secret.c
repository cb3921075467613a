// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - what keeps jobs apart on the wire: the job key that drops other jobs'
 * frames early, and the job secret under which every frame carries a MAC.
 */
#include "mpidimpl.h"
#include "pme_impl.h"
#include "pme_init.h"

#include <stdio.h>
#include <string.h>

/* Frames of other jobs are dropped by their key, which all processes of a job must
 * share. It is a hash of the PMI job id. Hydra names its jobs
 * "kvs_<mpiexec pid>_<process group>_<random>_<host>"; the process-group and random
 * parts are left out so that processes started by MPI_Comm_spawn from the same
 * mpiexec share the key of their parents. PME_JOB_KEY overrides it. */
uint32_t MPIDI_PME_job_key(void)
{
    const char *id = MPIR_pmi_job_id();
    char norm[256];
    int pid, pg, rnd, n = 0;
    if (!id)
        id = "";
    if (sscanf(id, "kvs_%d_%d_%d_%n", &pid, &pg, &rnd, &n) == 3 && n > 0)
        snprintf(norm, sizeof(norm), "kvs_%d_%s", pid, id + n);
    else
        snprintf(norm, sizeof(norm), "%s", id);
    uint32_t h = 2166136261u;   /* FNV-1a */
    for (const char *p = norm; *p; p++) {
        h ^= (uint8_t) * p;
        h *= 16777619u;
    }
    return h ? h : 1;
}

/* Every process of the job learns the same secret, made by rank 0 from the kernel's
 * random source and spread through PMI (never on the wire): PME's frames carry a MAC
 * under it, so no process outside the job can forge or inject one. Collective: every
 * process calls it before anything can fail, so that none waits for a missing one.
 * Returns nonzero when rank 0 could not make one (reported like any failure of
 * MPI_Init, by every process). */
int MPIDI_PME_job_secret(uint8_t secret[PME_SECRET_BYTES])
{
    /* byte PME_SECRET_BYTES: 1 when rank 0 succeeded */
    uint8_t buf[PME_SECRET_BYTES + 1] = { 0 };
    if (MPIR_Process.rank == 0)
        buf[PME_SECRET_BYTES] = pme_secret_generate(buf) == PME_OK;
    if (MPIR_pmi_bcast(buf, sizeof(buf), MPIR_PMI_DOMAIN_ALL) != MPI_SUCCESS)
        buf[PME_SECRET_BYTES] = 0;
    memcpy(secret, buf, PME_SECRET_BYTES);
    int ok = buf[PME_SECRET_BYTES];
    pme_secret_wipe(buf, sizeof(buf));
    return ok ? 0 : -1;
}

/* The secret when none was given: made for the job, unless frames are not to be
 * authenticated. Processes started by MPI_Comm_spawn cannot learn their parents' secret
 * (PMI keeps one job's data from another's), so they need one given to every job alike. */
int MPIDI_PME_choose_secret(struct pme_config *cfg, const uint8_t made[PME_SECRET_BYTES],
                         int made_ok, char *err, size_t errlen)
{
    if (cfg->secret_len || cfg->auth == PME_AUTH_CRC || cfg->auth == PME_AUTH_NONE)
        return 0;
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
