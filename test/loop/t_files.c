/*
 * t_files.c - what an endpoint puts on the file system cannot be turned against its
 * user, and its endpoint id is held exactly as long as its process lives:
 *   1. the counter file lands in the user's own directory (0750) with mode 0640, and
 *      goes when the endpoint closes;
 *   2. a symbolic link planted where the counter file goes is replaced, never
 *      followed: the file it points to is untouched;
 *   3. a counter directory that is a symbolic link, belongs to another user or is
 *      writable by others is refused with a message naming it;
 *   4. an endpoint id is claimed once per interface; the claim names its holder, and a
 *      process that dies releases it at once.
 * Runs in a private PME_RUNTIME_DIR.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "claim.h"
#include "counters_shm.h"
#include "harness.h"
#include "pme_test.h"

static char base[256], dir[300];

static void counters_on(struct pme_config *cfg, struct pme_loop_wire *wire, int id)
{
    lp_config(cfg, wire);
    cfg->counters_shm = 1;
    cfg->ep_id = id;
}

static void path_of(int id, char *out, size_t len)
{
    struct stat st;
    CHECK(stat("/proc/self/ns/net", &st) == 0, "no netns inode");
    snprintf(out, len, "%s/%llu.loop.%d", dir, (unsigned long long)st.st_ino, id);
}

static int open_ep(struct pme_loop_wire *w, int id, pme_ep_t **ep, char *err, size_t errlen)
{
    struct pme_config cfg;
    counters_on(&cfg, w, id);
    return pme_ep_open(&cfg, ep, err, errlen);
}

static void test_file_modes(struct pme_loop_wire *w)
{
    char err[512], path[512];
    pme_ep_t *ep;
    CHECK(open_ep(w, 5, &ep, err, sizeof(err)) == 0, "open: %s", err);
    path_of(5, path, sizeof(path));
    struct stat st;
    CHECK(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0750,
          "directory %s mode %o", dir, st.st_mode & 0777);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0640,
          "counter file %s missing or mode %o", path, st.st_mode & 0777);
    pme_ep_close(ep);
    CHECK(lstat(path, &st) < 0 && errno == ENOENT, "counter file left behind");
    printf("counter file 0640 in a 0750 directory, removed on close\n");
}

static void test_planted_link(struct pme_loop_wire *w)
{
    char err[512], path[512], victim[512];
    snprintf(victim, sizeof(victim), "%s/precious", base);
    FILE *f = fopen(victim, "w");
    CHECK(f && fputs("do not truncate me\n", f) >= 0 && fclose(f) == 0, "victim");
    path_of(6, path, sizeof(path));
    CHECK(symlink(victim, path) == 0, "symlink: %s", strerror(errno));
    pme_ep_t *ep;
    CHECK(open_ep(w, 6, &ep, err, sizeof(err)) == 0, "open: %s", err);
    struct stat st;
    CHECK(stat(victim, &st) == 0 && st.st_size == 19, "the link was followed: victim is %lld "
          "bytes", (long long)st.st_size);
    CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode), "the link was not replaced");
    pme_ep_close(ep);
    printf("a planted link is replaced, its target untouched\n");
}

static void expect_refused(struct pme_loop_wire *w, const char *what)
{
    char err[512];
    pme_ep_t *ep;
    int rc = open_ep(w, 7, &ep, err, sizeof(err));
    CHECK(rc != 0, "a counter directory that %s was used", what);
    CHECK(strstr(err, dir) || strstr(err, base), "the message does not name the directory: %s",
          err);
    printf("refused a directory that %s: %s\n", what, err);
}

static void test_bad_dirs(struct pme_loop_wire *w)
{
    char elsewhere[512];
    CHECK(chmod(dir, 0777) == 0, "chmod");
    expect_refused(w, "is writable by others");
    CHECK(chmod(dir, 0750) == 0, "chmod");
    snprintf(elsewhere, sizeof(elsewhere), "%s.real", dir);
    CHECK(rename(dir, elsewhere) == 0 && symlink(elsewhere, dir) == 0, "link dir");
    expect_refused(w, "is a symbolic link");
    CHECK(unlink(dir) == 0 && rename(elsewhere, dir) == 0, "restore dir");
    if (geteuid() == 0) {
        CHECK(chown(dir, 65534, 65534) == 0, "chown");
        expect_refused(w, "belongs to another user");
        CHECK(chown(dir, 0, 0) == 0, "chown back");
    }
}

static void test_claims(void)
{
    int owner, e;
    int fd = pme_claim_id("tclaim0", 9, &owner, &e);
    CHECK(fd >= 0, "first claim failed: %s", strerror(e));
    CHECK(pme_claim_id("tclaim0", 9, &owner, &e) == PME_ERR_BUSY, "claimed twice");
    CHECK(owner == getpid(), "holder named as %d, not %d", owner, getpid());
    int other = pme_claim_id("tclaim1", 9, &owner, &e);
    CHECK(other >= 0, "the same id on another interface is free");
    close(other);
    close(fd);
    fd = pme_claim_id("tclaim0", 9, &owner, &e);
    CHECK(fd >= 0, "a released claim was not free again");
    close(fd);
    /* A process that dies without closing anything releases its claim. */
    int pipefd[2];
    CHECK(pipe(pipefd) == 0, "pipe");
    pid_t child = fork();
    if (child == 0) {
        int c = pme_claim_id("tclaim0", 10, &owner, &e);
        char ok = c >= 0 ? 'y' : 'n';
        if (write(pipefd[1], &ok, 1) != 1)
            _exit(2);
        pause(); /* killed below */
        _exit(0);
    }
    char ok = 0;
    CHECK(read(pipefd[0], &ok, 1) == 1 && ok == 'y', "the child could not claim");
    CHECK(pme_claim_id("tclaim0", 10, &owner, &e) == PME_ERR_BUSY && owner == child,
          "the child's claim not seen (holder %d)", owner);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    fd = pme_claim_id("tclaim0", 10, &owner, &e);
    CHECK(fd >= 0, "a killed process's claim was not released");
    close(fd);
    printf("endpoint ids claimed once, named, released at death\n");
}

int main(void)
{
    snprintf(base, sizeof(base), "/tmp/pme-t_files.XXXXXX");
    CHECK(mkdtemp(base), "mkdtemp");
    setenv("PME_RUNTIME_DIR", base, 1);
    pme_counters_dir(dir, sizeof(dir));
    struct pme_loop_wire *w;
    CHECK_OK(pme_loop_wire_create(NULL, &w));
    test_file_modes(w);
    test_planted_link(w);
    test_bad_dirs(w);
    test_claims();
    pme_loop_wire_destroy(w);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    CHECK(system(cmd) == 0, "cleanup");
    return 0;
}
