// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_claims.c - endpoint ids (claim.h): each is held once per interface among a user's
 * processes, for exactly as long as its holder lives, and no other user can keep an
 * endpoint from starting by taking ids first:
 *   1. an id is claimed once per interface; the claim names its holder's pid; letting
 *      go removes its lock file, and a killed holder's claim is free at once;
 *   2. an id whose name our own user holds without a lock file (an endpoint of an
 *      older build) is taken; without a directory, the names alone decide;
 *   3. (root) an id whose name another user holds is no obstacle: claimed, the holder
 *      reported; and an endpoint of the ring device on a veth interface opens while
 *      another user holds the names of the 300 ids it would try first (before, it
 *      failed "in use by process N"), as it does when asked for one of them by
 *      PME_EP_ID, with one note on its standard error.
 * Runs in a private PME_RUNTIME_DIR.
 *
 * pme-test: tier=default cpu=40 time=1
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "claim.h"
#include "counters_shm.h"
#include "pme_test.h"

#define NS 42 /* the network namespace the claims name (any number will do) */
#define SQUATTED 300

static char base[256], dir[300];
static int dirfd_;

static bool has_file(const char *iface, unsigned id)
{
    char name[128];
    struct stat st;
    snprintf(name, sizeof(name), "%s%u.%s.%u", PME_CLAIM_FILE_PREFIX, NS, iface, id);
    return fstatat(dirfd_, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_once(void)
{
    struct pme_claim c, d;
    struct pme_claim_holder h;
    int e;
    CHECK(pme_claim_take(dirfd_, NS, "tclaim0", 9, &c, &h, &e) == PME_OK, "first claim: %s",
          strerror(e));
    CHECK(c.file_fd >= 0 && c.name_fd >= 0 && has_file("tclaim0", 9), "no lock file or name");
    CHECK(pme_claim_take(dirfd_, NS, "tclaim0", 9, &d, &h, &e) == PME_ERR_BUSY, "claimed twice");
    CHECK(h.pid == getpid(), "holder named as %d, not %d", h.pid, getpid());
    CHECK(pme_claim_take(dirfd_, NS, "tclaim1", 9, &d, &h, &e) == PME_OK,
          "the same id on another interface is free");
    pme_claim_release(dirfd_, NS, "tclaim1", 9, &d);
    pme_claim_release(dirfd_, NS, "tclaim0", 9, &c);
    CHECK(!has_file("tclaim0", 9), "letting go left the lock file");
    CHECK(pme_claim_take(dirfd_, NS, "tclaim0", 9, &c, &h, &e) == PME_OK,
          "a released claim was not free again");
    pme_claim_release(dirfd_, NS, "tclaim0", 9, &c);

    /* A process that dies without closing anything releases its claim. */
    int pipefd[2];
    CHECK(pipe(pipefd) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) {
        char ok = pme_claim_take(dirfd_, NS, "tclaim0", 10, &c, &h, &e) == PME_OK ? 'y' : 'n';
        if (write(pipefd[1], &ok, 1) != 1)
            _exit(2);
        pause(); /* killed below */
        _exit(0);
    }
    char ok = 0;
    CHECK(read(pipefd[0], &ok, 1) == 1 && ok == 'y', "the child could not claim");
    CHECK(pme_claim_take(dirfd_, NS, "tclaim0", 10, &c, &h, &e) == PME_ERR_BUSY &&
              h.pid == child,
          "the child's claim not seen (holder %d)", h.pid);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    CHECK(pme_claim_take(dirfd_, NS, "tclaim0", 10, &c, &h, &e) == PME_OK,
          "a killed process's claim was not released");
    pme_claim_release(dirfd_, NS, "tclaim0", 10, &c);
    close(pipefd[0]);
    close(pipefd[1]);
    printf("ids claimed once per interface, the holder named, released at exit and death\n");
}

static void test_own_names(void)
{
    struct pme_claim c, d;
    struct pme_claim_holder h;
    int e;
    int old = pme_claim_name("tclaim2", 11, &h, &e);
    CHECK(old >= 0, "name: %s", strerror(e));
    CHECK(pme_claim_take(dirfd_, NS, "tclaim2", 11, &c, &h, &e) == PME_ERR_BUSY &&
              h.pid == getpid(),
          "an id whose name our own user holds was taken (holder %d)", h.pid);
    CHECK(!has_file("tclaim2", 11), "a refused claim left its lock file");
    close(old);
    CHECK(pme_claim_take(-1, NS, "tclaim2", 12, &c, &h, &e) == PME_OK && c.file_fd < 0,
          "a claim without a directory: %s", strerror(e));
    CHECK(pme_claim_take(-1, NS, "tclaim2", 12, &d, &h, &e) == PME_ERR_BUSY,
          "without a directory an id was claimed twice");
    pme_claim_release(-1, NS, "tclaim2", 12, &c);
    printf("a name our own user holds counts as taken; without a directory names decide\n");
}

/* A process of user 65534 holding the names of ids [first, first + SQUATTED) of iface;
 * returns when they are held. */
static pid_t squat(const char *iface, unsigned first)
{
    int pipefd[2];
    CHECK(pipe(pipefd) == 0, "pipe");
    pid_t pid = fork();
    CHECK(pid >= 0, "fork");
    if (pid == 0) {
        pid_t parent = getppid();
        if (setgid(65534) || setuid(65534))
            _exit(2);
        /* Gone with the test, even when a check ends it (set after setuid, which clears
         * it). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
            _exit(2);
        struct pme_claim_holder h;
        int e, held = 0;
        for (unsigned i = 0; i < SQUATTED; i++)
            held += pme_claim_name(iface, (uint16_t)((first + i) % (PME_EP_ID_MAX + 1)), &h,
                                   &e) >= 0;
        char ok = held == SQUATTED ? 'y' : 'n';
        if (write(pipefd[1], &ok, 1) != 1)
            _exit(2);
        pause();
        _exit(0);
    }
    char ok = 0;
    CHECK(read(pipefd[0], &ok, 1) == 1 && ok == 'y', "the squatter could not take the names");
    close(pipefd[0]);
    close(pipefd[1]);
    return pid;
}

static void test_other_user(void)
{
    struct pme_claim c;
    struct pme_claim_holder h;
    int e;
    pid_t sq = squat("tsquat", 100);
    CHECK(pme_claim_take(dirfd_, NS, "tsquat", 150, &c, &h, &e) == PME_OK,
          "an id whose name another user holds was refused: %d", e);
    CHECK(c.file_fd >= 0 && c.name_fd < 0 && h.uid == 65534 && h.pid == sq,
          "the other user's holder not reported (uid %ld pid %d)", h.uid, h.pid);
    pme_claim_release(dirfd_, NS, "tsquat", 150, &c);
    kill(sq, SIGKILL);
    waitpid(sq, NULL, 0);
    printf("a name another user holds is no obstacle, and its holder is reported\n");
}

/* In a network namespace of its own, with a veth pair: the names of the ids an
 * endpoint would try first are held by another user; it must open all the same. Runs
 * in a child (the namespace is the child's); returns its verdict. */
static void endpoint_despite_squatter(void)
{
    if (unshare(CLONE_NEWNET) ||
        system("ip link add pmeq0 type veth peer name pmeq1 && ip link set pmeq0 up && "
               "ip link set pmeq1 up"))
        _exit(3);
    unsigned start = (unsigned)getpid() % (PME_EP_ID_MAX + 1);
    pid_t sq = squat("pmeq0", start);
    pme_ep_t *ep, *ep2;
    struct pme_config cfg;
    char err[512], addr[PME_ADDR_MAX];
    pme_config_init(&cfg);
    cfg.device = "ring";
    cfg.iface = "pmeq0";
    cfg.auth = PME_AUTH_CRC;
    cfg.job_key = 0x7e57;
    int rc = pme_ep_open(&cfg, &ep, err, sizeof(err));
    CHECK(rc == 0, "the endpoint did not open while another user held the names of the ids "
          "it tries: %s", err);
    CHECK_OK(pme_ep_addr(ep, addr, sizeof(addr)));
    unsigned id = 0;
    CHECK(sscanf(strchr(addr, '/') + 1, "%u", &id) == 1 && id == start,
          "it took id %u, not the first it tried (%u), all being held by others", id, start);
    cfg.ep_id = (int)((start + 5) % (PME_EP_ID_MAX + 1));
    rc = pme_ep_open(&cfg, &ep2, err, sizeof(err));
    CHECK(rc == 0, "PME_EP_ID=%d, whose name another user holds, did not open: %s", cfg.ep_id,
          err);
    pme_ep_close(ep2);
    pme_ep_close(ep);
    kill(sq, SIGKILL);
    waitpid(sq, NULL, 0);
    printf("an endpoint opens while another user holds the names of its first %d ids (%s)\n",
           SQUATTED, addr);
    fflush(stdout);
    _exit(0);
}

static void test_endpoint(void)
{
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0)
        endpoint_despite_squatter();
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status), "child");
    CHECK(WEXITSTATUS(status) != 3, "cannot make a network namespace with a veth pair");
    CHECK(WEXITSTATUS(status) == 0, "the endpoint scenario failed (above)");
}

int main(void)
{
    snprintf(base, sizeof(base), "/tmp/pme-t_claims.XXXXXX");
    CHECK(mkdtemp(base), "mkdtemp");
    setenv("PME_RUNTIME_DIR", base, 1);
    pme_counters_dir(dir, sizeof(dir));
    CHECK(mkdir(dir, 0750) == 0, "mkdir %s: %s", dir, strerror(errno));
    dirfd_ = open(dir, O_RDONLY | O_DIRECTORY);
    CHECK(dirfd_ >= 0, "open %s", dir);
    test_once();
    test_own_names();
    if (geteuid() == 0) {
        CHECK(chmod(base, 0755) == 0, "chmod");
        test_other_user();
        test_endpoint();
    } else {
        printf("(not root: no other user's names were held)\n");
    }
    close(dirfd_);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    CHECK(system(cmd) == 0, "cleanup");
    return 0;
}
