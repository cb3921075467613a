// SPDX-License-Identifier: BSD-3-Clause
/*
 * t_info_files.c - pme_info reads the counter directories of every user (root reads
 * them all), so what a user leaves there must not hang it, fool it or crash it:
 *   1. a FIFO named like a counter file (whose open blocks until a writer comes: root's
 *      `pme_info -c` and `--clean` hung on one), a symbolic link to a live counter file,
 *      a file too short to be one, and (as root) a copy of a live counter file owned by
 *      another user are not shown; a user directory that is a symbolic link, or that
 *      belongs to another user than its name says, is skipped with a message; both
 *      commands finish, and the two live endpoints are shown with their peers;
 *   2. `--clean` removes the leftovers of dead processes (a counter file nobody locks,
 *      the short one too) and nothing else: not the FIFO, the link, a live endpoint's
 *      file or another user's.
 * pme_info runs as a separate program under `timeout`, as a user would run it.
 * Runs in a private PME_RUNTIME_DIR.
 *
 * pme-test: tier=default cpu=70 time=1
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "counters_shm.h"
#include "harness.h"
#include "pme_test.h"

static char base[256], dir[300], info[512];

static void tweak(struct pme_config *cfg)
{
    cfg->counters_shm = 1;
}

/* Run pme_info with args under a time limit; its output in out. Returns its exit
 * status (124: it had to be stopped). */
static int run_info(const char *args, char *out, size_t len)
{
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "PME_RUNTIME_DIR='%s' timeout -k 2 10 '%s' %s 2>&1", base, info,
             args);
    FILE *p = popen(cmd, "r");
    CHECK(p, "popen %s", cmd);
    size_t n = fread(out, 1, len - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *s = hay; (s = strstr(s, needle)); s += strlen(needle))
        n++;
    return n;
}

static bool exists(const char *name)
{
    char path[600];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return lstat(path, &st) == 0;
}

/* A file of the directory holding `bytes` of the counter file `from`. */
static void copy_file(const char *from, const char *to, size_t bytes)
{
    static uint8_t buf[1 << 16];
    char a[600], b[600];
    snprintf(a, sizeof(a), "%s/%s", dir, from);
    snprintf(b, sizeof(b), "%s/%s", dir, to);
    int in = open(a, O_RDONLY), out = open(b, O_WRONLY | O_CREAT | O_TRUNC, 0640);
    CHECK(in >= 0 && out >= 0, "copy %s to %s: %s", a, b, strerror(errno));
    ssize_t n = read(in, buf, bytes < sizeof(buf) ? bytes : sizeof(buf));
    CHECK(n > 0 && write(out, buf, (size_t)n) == n, "copy %s", a);
    close(in);
    close(out);
}

int main(void)
{
    const char *bd = getenv("builddir");
    snprintf(info, sizeof(info), "%s/src/tools/pme_info", bd && *bd ? bd : ".");
    CHECK(access(info, X_OK) == 0, "%s is not built", info);
    snprintf(base, sizeof(base), "/tmp/pme-t_info.XXXXXX");
    CHECK(mkdtemp(base), "mkdtemp");
    setenv("PME_RUNTIME_DIR", base, 1);
    pme_counters_dir(dir, sizeof(dir));

    struct lp_pair lp;
    lp_open(&lp, NULL, tweak);
    size_t sizes[] = {100};
    struct lp_stream s = {.count = 10, .sizes = sizes, .nsizes = 1, .outstanding = 4,
                          .timeout_s = 10};
    lp_run_stream(&lp, &s);
    /* A third endpoint that closes leaves no file; one whose file stays (its process
     * was killed) is played by a copy nobody locks. */
    struct stat st;
    char live[2][128];
    CHECK(stat("/proc/self/ns/net", &st) == 0, "no netns inode");
    for (int i = 0; i < 2; i++) {
        char addr[PME_ADDR_MAX];
        unsigned id;
        CHECK_OK(pme_ep_addr(i ? lp.b : lp.a, addr, sizeof(addr)));
        CHECK(sscanf(strchr(addr, '/') + 1, "%u", &id) == 1, "address %s", addr);
        snprintf(live[i], sizeof(live[i]), "%llu.loop.%u", (unsigned long long)st.st_ino, id);
        CHECK(exists(live[i]), "no counter file %s/%s", dir, live[i]);
    }
    copy_file(live[0], "1.loop.900", 1 << 16);

    /* What a user may plant in its own directory. */
    char path[512], other[1200];
    snprintf(path, sizeof(path), "%s/1.loop.901", dir);
    CHECK(mkfifo(path, 0640) == 0, "mkfifo: %s", strerror(errno));
    snprintf(path, sizeof(path), "%s/1.loop.902", dir);
    snprintf(other, sizeof(other), "%s/%s", dir, live[0]);
    CHECK(symlink(other, path) == 0, "symlink: %s", strerror(errno));
    copy_file(live[0], "1.loop.903", 10);
    bool root = geteuid() == 0;
    if (root) {
        copy_file(live[1], "1.loop.904", 1 << 16);
        snprintf(path, sizeof(path), "%s/1.loop.904", dir);
        CHECK(chown(path, 65534, 65534) == 0, "chown: %s", strerror(errno));
    }
    /* Directories whose files are not their name's user's: a link to ours, and one
     * named after user 4242 that we own. */
    snprintf(path, sizeof(path), "%s/%s4243", base, PME_SHM_DIR_PREFIX);
    CHECK(symlink(dir, path) == 0, "symlink dir: %s", strerror(errno));
    snprintf(path, sizeof(path), "%s/%s4242", base, PME_SHM_DIR_PREFIX);
    CHECK(mkdir(path, 0750) == 0, "mkdir: %s", strerror(errno));
    snprintf(other, sizeof(other), "cp '%s/%s' '%s/'", dir, live[0], path);
    CHECK(system(other) == 0, "%s", other);

    static char out[1 << 16];
    double t0 = now_s();
    int rc = run_info("-c --peers", out, sizeof(out));
    CHECK(rc == 0, "pme_info -c --peers exited with %d%s:\n%s", rc,
          rc == 124 ? " (it hung and was stopped)" : "", out);
    int shown = count(out, "  pid ");
    CHECK(shown == 2, "%d endpoints shown, not the 2 live ones:\n%s", shown, out);
    CHECK(count(out, "    peer ") == 2, "the peers of the live endpoints are not shown:\n%s",
          out);
    CHECK(strstr(out, "skipping") && strstr(out, "4242"),
          "the directory of another owner than its name says was not named:\n%s", out);
    CHECK(count(out, "counter file(s) of dead processes") == 1,
          "the dead endpoint's file was not counted:\n%s", out);
    printf("pme_info -c --peers shows the 2 live endpoints, nothing planted (%.1f s)\n",
           now_s() - t0);

    rc = run_info("--clean", out, sizeof(out));
    CHECK(rc == 0, "pme_info --clean exited with %d%s:\n%s", rc,
          rc == 124 ? " (it hung and was stopped)" : "", out);
    CHECK(!exists("1.loop.900") && !exists("1.loop.903"),
          "the dead endpoint's files were not removed:\n%s", out);
    CHECK(exists(live[0]) && exists(live[1]), "a live endpoint's file was removed:\n%s", out);
    CHECK(exists("1.loop.901") && exists("1.loop.902"),
          "--clean removed what is no counter file of a dead process:\n%s", out);
    CHECK(!root || exists("1.loop.904"), "--clean removed another user's file:\n%s", out);
    printf("pme_info --clean removes the dead endpoints' files only%s\n",
           root ? "" : " (not root: no file of another owner was planted)");

    lp_close(&lp);
    snprintf(other, sizeof(other), "rm -rf '%s'", base);
    CHECK(system(other) == 0, "cleanup");
    return 0;
}
