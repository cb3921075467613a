/* claim.c - see claim.h. */
#include "claim.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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

/* The pid of whoever holds the name, by connecting to it (the holder never accepts;
 * the kernel reports the listener's credentials to a connected client). */
static int holder_pid(const struct sockaddr_un *sa, socklen_t len)
{
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return 0;
    int pid = 0;
    if (connect(s, (const struct sockaddr *)sa, len) == 0) {
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0)
            pid = cred.pid;
    }
    close(s);
    return pid;
}

int pme_claim_id(const char *label, uint16_t id, int *owner, int *sys_errno)
{
    struct sockaddr_un sa;
    socklen_t len = claim_name(&sa, label, id);
    *owner = 0;
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
        *owner = holder_pid(&sa, len);
        return PME_ERR_BUSY;
    }
    *sys_errno = e;
    return PME_ERR_DEVICE;
}
