// SPDX-License-Identifier: BSD-3-Clause
/* claim.c - see claim.h. */
#include "claim.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "pme.h"

static socklen_t claim_name(struct sockaddr_un *sa, const char *label, uint16_t id)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    /* sun_path[0] = 0: the abstract namespace; the name is the bytes after it. */
    int n = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "pme-ep/%s/%u", label, id);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

/* Whoever holds the name, by connecting to it (the holder never accepts; the kernel
 * reports the listener's credentials to a connected client). A full backlog, or a
 * name bound without listening, leaves the holder unknown. */
static void holder_of(const struct sockaddr_un *sa, socklen_t len, struct pme_claim_holder *h)
{
    h->pid = 0;
    h->uid = -1;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return;
    if (connect(s, (const struct sockaddr *)sa, len) == 0) {
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0) {
            h->pid = cred.pid;
            h->uid = (long)cred.uid;
        }
    }
    close(s);
}

int pme_claim_name(const char *iface, uint16_t id, struct pme_claim_holder *h, int *sys_errno)
{
    struct sockaddr_un sa;
    socklen_t len = claim_name(&sa, iface, id);
    h->pid = 0;
    h->uid = -1;
    *sys_errno = 0;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0) {
        *sys_errno = errno;
        return PME_ERR_DEVICE;
    }
    if (bind(s, (struct sockaddr *)&sa, len) == 0 && listen(s, 1) == 0)
        return s;
    int e = errno;
    close(s);
    if (e == EADDRINUSE) {
        holder_of(&sa, len, h);
        return PME_ERR_BUSY;
    }
    *sys_errno = e;
    return PME_ERR_DEVICE;
}

static void file_name(char *out, size_t len, uint64_t netns, const char *iface, uint16_t id)
{
    snprintf(out, len, "claim.%llu.%s.%u", (unsigned long long)netns, iface, id);
}

/* The pid a lock file names (0 if it names none yet: its holder is writing it). */
static int file_pid(int fd)
{
    char buf[24];
    ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    return atoi(buf);
}

/* The lock file: a descriptor holding its lock, or PME_ERR_BUSY with the holder's pid.
 * Its holder removes it when done, so the file we locked may be one just removed:
 * then it is no claim, and the one now under that name is tried. */
static int take_file(int dirfd, const char *name, struct pme_claim_holder *h, int *sys_errno)
{
    for (int tries = 0; tries < 16; tries++) {
        int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            *sys_errno = errno;
            return PME_ERR_DEVICE;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            int e = errno;
            if (e == EWOULDBLOCK) {
                h->pid = file_pid(fd);
                h->uid = (long)geteuid();
            }
            close(fd);
            *sys_errno = e == EWOULDBLOCK ? 0 : e;
            return e == EWOULDBLOCK ? PME_ERR_BUSY : PME_ERR_DEVICE;
        }
        struct stat mine, now;
        if (fstat(fd, &mine) == 0 && fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
            mine.st_ino == now.st_ino && mine.st_dev == now.st_dev) {
            char pid[24];
            int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
            /* Only the holder's pid for messages: a failure here costs nothing else. */
            if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) != n)
                (void)0;
            return fd;
        }
        close(fd);
    }
    *sys_errno = EAGAIN;
    return PME_ERR_DEVICE;
}

int pme_claim_take(int dirfd, uint64_t netns, const char *iface, uint16_t id, struct pme_claim *c,
                   struct pme_claim_holder *h, int *sys_errno)
{
    char name[96];
    c->file_fd = c->name_fd = -1;
    h->pid = 0;
    h->uid = -1;
    *sys_errno = 0;
    if (dirfd >= 0) {
        file_name(name, sizeof(name), netns, iface, id);
        int fd = take_file(dirfd, name, h, sys_errno);
        if (fd < 0)
            return fd;
        c->file_fd = fd;
    }
    int fd = pme_claim_name(iface, id, h, sys_errno);
    if (fd >= 0) {
        c->name_fd = fd;
        return PME_OK;
    }
    /* Taken by one of ours (one without our directory: an older build), or taken by
     * someone else, which is no obstacle (see claim.h). */
    if (fd == PME_ERR_BUSY && h->uid != (long)geteuid())
        return PME_OK;
    pme_claim_release(dirfd, netns, iface, id, c);
    return fd;
}

void pme_claim_release(int dirfd, uint64_t netns, const char *iface, uint16_t id,
                       struct pme_claim *c)
{
    if (c->file_fd >= 0) {
        char name[96];
        file_name(name, sizeof(name), netns, iface, id);
        /* Removed while still locked: whoever opened it meanwhile finds it gone. */
        unlinkat(dirfd, name, 0);
        close(c->file_fd);
    }
    if (c->name_fd >= 0)
        close(c->name_fd);
    c->file_fd = c->name_fd = -1;
}
