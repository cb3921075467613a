// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_files.c - what an endpoint puts on the file system cannot be turned against its
 * user, and no other user can keep it from starting by planting files:
 *   1. the counter file lands in the user's own directory (0750) with mode 0640, and
 *      goes when the endpoint closes;
 *   2. a symbolic link planted where the counter file goes is replaced, never
 *      followed: the file it points to is untouched;
 *   3. a counter directory that is a symbolic link, belongs to another user or is
 *      writable by others is not used: the endpoint opens all the same, without
 *      published counters, and warns once, naming the directory (another user could
 *      make /dev/shm/pme-<uid> before our first job, and we could not remove it).
 * The endpoint id claims are t_claims.c's. Runs in a private PME_RUNTIME_DIR.
 * pme-test: tier=default cpu=90 time=1
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* Open an endpoint in a child process (the warning comes once per process) with its
 * standard error in a file; it must open, publish no counter file and warn naming the
 * directory. */
static void expect_fallback(struct pme_loop_wire *w, const char *what)
{
    char log[600], path[512];
    snprintf(log, sizeof(log), "%s.log", base);
    path_of(7, path, sizeof(path));
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0, "fork");
    if (child == 0) {
        char err[512];
        pme_ep_t *ep;
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(3);
        int rc = open_ep(w, 7, &ep, err, sizeof(err));
        if (rc) {
            printf("open failed: %s\n", err);
            fflush(stdout);
            _exit(1);
        }
        struct stat st;
        bool published = lstat(path, &st) == 0;
        pme_ep_close(ep);
        _exit(published ? 2 : 0);
    }
    int status;
    CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status), "child");
    CHECK(WEXITSTATUS(status) != 1, "the endpoint did not open when the directory %s", what);
    CHECK(WEXITSTATUS(status) == 0, "a counter file was published in a directory that %s",
          what);
    static char text[4096];
    FILE *f = fopen(log, "r");
    CHECK(f, "log");
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = 0;
    fclose(f);
    unlink(log);
    CHECK(strstr(text, "warning") && strstr(text, dir),
          "no warning naming %s when the directory %s: \"%s\"", dir, what, text);
    printf("a directory that %s is not used: the endpoint opens and warns: %s", what, text);
}

static void test_bad_dirs(struct pme_loop_wire *w)
{
    char elsewhere[512];
    CHECK(chmod(dir, 0777) == 0, "chmod");
    expect_fallback(w, "is writable by others");
    CHECK(chmod(dir, 0750) == 0, "chmod");
    snprintf(elsewhere, sizeof(elsewhere), "%s.real", dir);
    CHECK(rename(dir, elsewhere) == 0 && symlink(elsewhere, dir) == 0, "link dir");
    expect_fallback(w, "is a symbolic link");
    CHECK(unlink(dir) == 0 && rename(elsewhere, dir) == 0, "restore dir");
    if (geteuid() == 0) {
        CHECK(chown(dir, 65534, 65534) == 0, "chown");
        expect_fallback(w, "belongs to another user");
        CHECK(chown(dir, 0, 0) == 0, "chown back");
    } else {
        printf("(not root: no directory of another owner was made)\n");
    }
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
    pme_loop_wire_destroy(w);
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
    CHECK(system(cmd) == 0, "cleanup");
    return 0;
}
