// SPDX-License-Identifier: BSD-3-Clause
/*
 * wait_own_core - a process bound to a core of its own polls in auto mode, however busy
 * the other cores are.
 *
 *   wait_own_core IFACE        (run by t-wait-core.sh as root, inside a network namespace)
 *
 * The process binds itself to one core and starts a child that spins on another, as two
 * MPI ranks started with `mpiexec -bind-to core` do while one polls for the other. The
 * machine's run queue (two) then exceeds the cores of the process's binding (one), but
 * not the node's: PME_WAIT=auto must keep polling (no sleep in pme_wait) for as long as
 * PME_SPIN_US allows. It slept in every wait when it counted the binding's cores.
 */
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pme_test.h"

#define WAITS 10
#define WAIT_MS 20
/* A kernel thread made runnable at the moment auto mode looks (every 20 ms) may count
 * as a rival for one look; it may not for more. */
#define SLEEPY_WAITS_ALLOWED 2

/* The first two cores this process may run on, or false. */
static bool two_cores(int *a, int *b)
{
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof(set), &set) == 0, "sched_getaffinity");
    *a = *b = -1;
    for (int c = 0; c < CPU_SETSIZE && *b < 0; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        if (*a < 0)
            *a = c;
        else
            *b = c;
    }
    return *b >= 0;
}

static void bind_to(int core)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "cannot bind to core %d", core);
}

/* A child that spins on `core` until it is killed, or its parent ends (a failed check
 * must not leave it spinning): a busy rank on another core. */
static pid_t spinner(int core)
{
    pid_t parent = getpid();
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
            _exit(1);
        bind_to(core);
        for (volatile unsigned long n = 0;; n++)
            ;
    }
    return pid;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: wait_own_core IFACE\n");
        return 2;
    }
    int mine, other;
    if (!two_cores(&mine, &other))
        SKIP("needs two cores (a busy one beside this process's own)");
    bind_to(mine);
    pid_t child = spinner(other);

    struct pme_config cfg;
    char err[512];
    pme_config_init(&cfg);
    CHECK(pme_config_from_env(&cfg, err, sizeof(err)) == 0, "%s", err);
    cfg.iface = argv[1];
    cfg.wait_mode = PME_WAIT_AUTO;
    cfg.spin_us = 10u * 1000u * 1000u; /* polls throughout, unless it thinks it shares */
    cfg.local_procs = 2;               /* two ranks on this node, as here */
    pme_ep_t *ep;
    CHECK(pme_ep_open(&cfg, &ep, err, sizeof(err)) == 0, "pme_ep_open: %s", err);
    CHECK(pme_ep_fd(ep) >= 0, "device %s has no descriptor to sleep on", pme_ep_device(ep));

    unsigned slept = 0, polled = 0;
    for (int i = 0; i < WAITS; i++) {
        struct pme_counters before, after;
        pme_ep_counters(ep, &before);
        CHECK(pme_wait(ep, WAIT_MS) == 0, "pme_wait had something to do");
        pme_ep_counters(ep, &after);
        slept += after.wait_sleeps > before.wait_sleeps;
        polled += after.wait_spins > before.wait_spins;
    }
    pme_ep_close(ep);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    printf("bound to core %d, a spinner on core %d: of %d waits of %d ms, %u slept and %u "
           "polled\n", mine, other, WAITS, WAIT_MS, slept, polled);
    CHECK(slept <= SLEEPY_WAITS_ALLOWED,
          "%u of %d waits slept: auto mode took the busy core %d for a rival on core %d",
          slept, WAITS, other, mine);
    CHECK(polled >= WAITS - SLEEPY_WAITS_ALLOWED, "only %u of %d waits polled", polled, WAITS);
    return 0;
}
