// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - MPI error codes for PME's failures.
 *
 * pme_core explains each failure in one sentence naming cause and fix
 * (pme_ep_last_error); the netmod puts a summary on top of it, and says a failure that
 * may end the job on stderr before MPICH aborts. Reads the global state, calls nothing
 * else of the netmod.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

/* MPICH keeps at most 256 characters per line of an error stack: long details are split
 * over several lines, at word boundaries. */
#define DETAIL_LINE_MAX 220
#define DETAIL_LINE_MIN 120
#define DETAIL_LINES    16

int MPIDI_PME_make_error(int errclass, const char *func, int line, const char *summary,
                         const char *detail)
{
    int code = MPI_SUCCESS;
    if (detail && *detail) {
        const char *chunks[DETAIL_LINES];
        int lens[DETAIL_LINES];
        int n = 0;
        const char *p = detail;
        while (*p && n < DETAIL_LINES) {
            int len = (int) strlen(p);
            if (len > DETAIL_LINE_MAX) {
                len = DETAIL_LINE_MAX;
                while (len > DETAIL_LINE_MIN && p[len] != ' ')
                    len--;
            }
            chunks[n] = p;
            lens[n] = len;
            n++;
            p += len;
            while (*p == ' ')
                p++;
        }
        /* The newest entry of an error stack prints first: create the last chunk first. */
        for (int i = n - 1; i >= 0; i--) {
            char buf[256];
            snprintf(buf, sizeof(buf), "%.*s", lens[i], chunks[i]);
            code = MPIR_Err_create_code(code, MPIR_ERR_RECOVERABLE, func, line, errclass,
                                        "**pme_detail", "**pme_detail %s", buf);
        }
    }
    return MPIR_Err_create_code(code, MPIR_ERR_RECOVERABLE, func, line, errclass,
                                "**pme_summary", "**pme_summary %s", summary);
}

/* The summary line of a failed PME operation with peer `rank` (-1: none), and its MPI
 * error class. */
static int status_summary(int status, int rank, const char *what, char *summary, size_t len)
{
    if (status == PME_ERR_PEER_DEAD) {
        snprintf(summary, len,
                 "ch4:pme: %s: rank %d stopped answering for %u ms (PME_PEER_TIMEOUT_MS)",
                 what, rank, MPIDI_PME_global.peer_timeout_ms);
        return MPIX_ERR_PROC_FAILED;
    }
    if (rank >= 0)
        snprintf(summary, len, "ch4:pme: %s with rank %d failed: %s", what, rank,
                 pme_strerror(status));
    else
        snprintf(summary, len, "ch4:pme: %s failed: %s", what, pme_strerror(status));
    return MPI_ERR_OTHER;
}

static const char *last_detail(void)
{
    return MPIDI_PME_global.ep ? pme_ep_last_error(MPIDI_PME_global.ep) : "";
}

/* An MPI error for a failed PME operation with peer `rank` (-1: none). */
int MPIDI_PME_error_from_status(int status, int rank, const char *what)
{
    char summary[200];
    int errclass = status_summary(status, rank, what, summary, sizeof(summary));
    return MPIDI_PME_make_error(errclass, __func__, __LINE__, summary, last_detail());
}

void MPIDI_PME_say_then_pause(int say, const char *summary, const char *detail)
{
    if (say) {
        fprintf(stderr, "%s: %s\n", summary, detail);
        fflush(stderr);
    }
    struct timespec pause = { 0, 300 * 1000 * 1000 };
    nanosleep(&pause, NULL);
}

void MPIDI_PME_say_peer_failure(int status, int rank)
{
    static int said;
    if (said)
        return;
    said = 1;
    char summary[200], line[240];
    status_summary(status, rank, "communication", summary, sizeof(summary));
    snprintf(line, sizeof(line), "%s (seen by rank %d)", summary, MPIR_Process.rank);
    MPIDI_PME_say_then_pause(1, line, last_detail());
}
