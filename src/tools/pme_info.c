// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_info - what PME can use here and what its endpoints are doing.
 *
 *   pme_info                 interfaces usable by PME, the kernel module's totals (when
 *                            pme.ko is loaded), and the endpoints running now
 *   pme_info -c [-p PID]     counters of running endpoints (non-zero ones), and for those
 *                            on the kernel device what the module counted for them
 *   pme_info -c --peers      and per peer
 *   pme_info --clean         remove counter files left by processes that died
 *   pme_info --new-secret    print a new job secret (for PME_JOB_SECRET_FILE)
 *   pme_info --check ...     whether PME can run here, and what to tune (check.c)
 *   pme_info --probe-agent   one host's part of --check --probe (probe_agent.c)
 *   pme_info --config        every PME_* variable and ch4:pme CVAR: default, value, source
 *
 * Endpoints publish their counters in <base>/pme-<uid>/<netns>.<interface>.<id> (base:
 * $PME_RUNTIME_DIR or /dev/shm) and hold a lock on that file while they live; a file
 * nobody locks is a leftover. pme_info shows the endpoints of every user whose
 * directory it may read (root: all), reading only regular files of the directory's
 * owner, which it copies rather than maps (see open_endpoint).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <stdbool.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "counters_shm.h"
#include "crc32c.h"
#include "kmod_counters.h"
#include "pme.h"
#include "pme_wire.h"

static int iface_mtu(const char *name)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    int mtu = (s >= 0 && ioctl(s, SIOCGIFMTU, &ifr) == 0) ? ifr.ifr_mtu : -1;
    if (s >= 0)
        close(s);
    return mtu;
}

static void list_interfaces(void)
{
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) < 0) {
        perror("pme_info: getifaddrs");
        return;
    }
    printf("Interfaces PME can use (Ethernet, EtherType 0x%04X by default):\n",
           PME_ETHERTYPE_DEFAULT);
    printf("  %-16s %-17s %6s  %-10s %s\n", "NAME", "MAC", "MTU", "NEAR CORES", "STATE");
    int n = 0;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET)
            continue;
        struct sockaddr_ll *ll = (struct sockaddr_ll *)i->ifa_addr;
        if (ll->sll_hatype != ARPHRD_ETHER || ll->sll_halen != 6)
            continue;
        const unsigned char *m = ll->sll_addr;
        char cpus[64];
        int here = pme_iface_locality(i->ifa_name, cpus, sizeof(cpus));
        printf("  %-16s %02x:%02x:%02x:%02x:%02x:%02x %6d  %-10s %s%s%s\n", i->ifa_name, m[0], m[1],
               m[2], m[3], m[4], m[5], iface_mtu(i->ifa_name), cpus,
               (i->ifa_flags & IFF_UP) ? "up" : "DOWN",
               (i->ifa_flags & IFF_RUNNING) ? "" : " (no carrier)",
               here == 1 ? ", near this process" : "");
        n++;
    }
    if (!n)
        printf("  (none: PME needs an Ethernet interface)\n");
    freeifaddrs(ifs);
    /* What an endpoint spans when nothing names its interfaces (NEAR CORES: hwloc's
     * locality of the NIC, "unknown" for virtual interfaces). */
    char route_ifs[PME_MAX_IFACES * 16], err[256], dflt[PME_MAX_IFACES * 16];
    if (pme_route_ifaces(route_ifs, sizeof(route_ifs), err, sizeof(err)) > 0)
        printf("Without PME_IFACE an endpoint spans the route file's interfaces: %s\n",
               route_ifs);
    else if (pme_default_ifaces(dflt, sizeof(dflt)) > 0)
        printf("Without PME_IFACE an endpoint spans %s (every data interface: up, not "
               "loopback, bridge or the default route's; on a switch each is a rail)\n", dflt);
    else
        printf("Without PME_IFACE no interface qualifies (up, not loopback, bridge or the "
               "default route's): set PME_IFACE\n");
}

struct endpoint {
    char path[800];
    struct pme_counters_shm *h; /* a copy of the file's start, NULL if not a counter file */
    size_t size;                /* bytes copied: the header and the peers asked for */
    int live;
};

/* Read up to len bytes at off, across short reads. */
static size_t read_at(int fd, void *buf, size_t len, off_t off)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, (char *)buf + got, len - got, off + (off_t)got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    return got;
}

/* Open name in a user's counter directory dfd and copy what we show of it; live tells
 * whether a process still holds its lock. Only a regular file of the directory's owner
 * is read: never through a symbolic link, and never a FIFO or a device, whose open or
 * read would block (root's pme_info hung on a FIFO a user planted). The file is copied,
 * not mapped: a mapping faults (SIGBUS) when its owner truncates the file under us.
 * Returns -1 when name is no file to look at. */
static int open_endpoint(int dfd, const char *dir, const char *name, uid_t owner, int peers,
                         struct endpoint *e)
{
    int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != owner) {
        close(fd);
        return -1;
    }
    e->live = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
    e->h = NULL;
    e->size = 0;
    snprintf(e->path, sizeof(e->path), "%s/%s", dir, name);
    struct pme_counters_shm head;
    /* A file of another layout (a process of another PME build) would be misread. */
    if (read_at(fd, &head, sizeof(head), 0) == sizeof(head) && head.magic == PME_SHM_MAGIC &&
        head.layout == PME_SHM_LAYOUT) {
        uint32_t n = !peers ? 0 : head.npeers < PME_SHM_MAX_PEERS ? head.npeers
                                                                 : PME_SHM_MAX_PEERS;
        size_t want = (size_t)pme_shm_size(n);
        e->h = malloc(want);
        if (e->h) {
            e->size = read_at(fd, e->h, want, 0);
            if (e->size < sizeof(head)) {
                free(e->h);
                e->h = NULL;
            } else {
                /* Its owner wrote these strings: printed, they must end inside them. */
                e->h->ifname[sizeof(e->h->ifname) - 1] = 0;
                e->h->device[sizeof(e->h->device) - 1] = 0;
            }
        }
    }
    close(fd);
    return 0;
}

static void print_counters(const struct pme_counters *c, const char *indent)
{
    int col = 0;
#define SHOW(name)                                                                   \
    if (c->name) {                                                                   \
        printf("%s%-18s %12llu", col % 3 ? "  " : indent, #name,                     \
               (unsigned long long)c->name);                                        \
        if (++col % 3 == 0)                                                          \
            printf("\n");                                                            \
    }
    PME_COUNTER_NAMES(SHOW)
#undef SHOW
    if (col % 3)
        printf("\n");
    if (!col)
        printf("%s(all counters zero)\n", indent);
}

/* Frames per interface, for an endpoint of several (rails, or a mesh node's links). */
static void print_ifaces(const struct pme_counters_shm *h)
{
    char names[sizeof(h->ifname) + 1];
    snprintf(names, sizeof(names), "%s", h->ifname);
    char *save = NULL, *name = strtok_r(names, ",", &save);
    for (uint32_t i = 0; h->nifs > 1 && i < h->nifs && i < PME_MAX_IFACES; i++) {
        printf("    interface %-10s tx_frames %12llu  rx_frames %12llu  retransmits %llu\n",
               name ? name : "?", (unsigned long long)h->ifs[i].tx_frames,
               (unsigned long long)h->ifs[i].rx_frames, (unsigned long long)h->ifs[i].retransmits);
        name = strtok_r(NULL, ",", &save);
    }
}

static void print_peer(const struct pme_shm_peer *p)
{
    printf("    peer %02x:%02x:%02x:%02x:%02x:%02x/%u:", p->mac[0], p->mac[1], p->mac[2],
           p->mac[3], p->mac[4], p->mac[5], p->ep_id);
#define SHOWP(name)                                                                  \
    if (p->c.name)                                                                   \
        printf(" %s=%llu", #name, (unsigned long long)p->c.name);
    PME_PEER_COUNTER_NAMES(SHOWP)
#undef SHOWP
    printf("\n");
}

/* A job secret for PME_JOB_SECRET_FILE: 32 hexadecimal digits from the kernel's
 * random source. */
static int new_secret(void)
{
    uint8_t s[PME_SECRET_BYTES];
    if (pme_secret_generate(s)) {
        fprintf(stderr, "pme_info: the kernel gave no random bytes\n");
        return 1;
    }
    for (int i = 0; i < PME_SECRET_BYTES; i++)
        printf("%02x", s[i]);
    printf("\n");
    return 0;
}

struct scan {
    long pid;
    int counters, peers, clean;
    int shown, stale;
};

/* The uid a counter directory's name says (pme-<uid>), or -1 for another name. */
static long dir_uid(const char *name)
{
    const char *d = name + strlen(PME_SHM_DIR_PREFIX);
    char *end;
    if (strncmp(name, PME_SHM_DIR_PREFIX, strlen(PME_SHM_DIR_PREFIX)) || *d < '0' || *d > '9')
        return -1;
    errno = 0;
    unsigned long v = strtoul(d, &end, 10);
    return *end || errno || v > (uid_t)-1 - 1 ? -1 : (long)v;
}

/* Show (or clean) the counter files of one user's directory, name in base (open as
 * topfd). A directory that is a link or does not belong to the user its name says is
 * skipped: its files are not that user's (another user may have made it first). */
static void scan_user_dir(int topfd, const char *base, const char *name, struct scan *sc)
{
    long uid = dir_uid(name);
    if (uid < 0)
        return;
    char dir[512];
    snprintf(dir, sizeof(dir), "%s/%s", base, name);
    int dfd = openat(topfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (dfd < 0)
        return; /* another user's, not readable by us, or not a directory */
    struct stat st;
    if (fstat(dfd, &st) < 0 || st.st_uid != (uid_t)uid) {
        if (!sc->clean)
            fprintf(stderr, "pme_info: skipping %s: it belongs to uid %u, not to uid %ld\n", dir,
                    (unsigned)st.st_uid, uid);
        close(dfd);
        return;
    }
    DIR *d = fdopendir(dfd);
    if (!d) {
        close(dfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        /* Endpoint id claims (claim.h) live beside the counter files: nothing to show,
         * but a dead process's is a leftover like its counter file. */
        bool claim = !strncmp(de->d_name, PME_CLAIM_FILE_PREFIX, strlen(PME_CLAIM_FILE_PREFIX));
        struct endpoint e;
        if (open_endpoint(dirfd(d), dir, de->d_name, st.st_uid, sc->peers && !claim, &e) < 0)
            continue;
        if (!e.live) {
            sc->stale++;
            if (sc->clean && unlinkat(dirfd(d), de->d_name, 0) == 0)
                printf("removed %s (its process is gone)\n", e.path);
        } else if (!sc->clean && !claim && e.h && (!sc->pid || e.h->pid == sc->pid)) {
            const struct pme_counters_shm *h = e.h;
            printf("  pid %-7d %-6s %-12s ep %-5u %02x:%02x:%02x:%02x:%02x:%02x mtu %u "
                   "peers %u  pool %llu/%llu used, %llu reserved\n",
                   h->pid, h->device, h->ifname, h->ep_id, h->mac[0], h->mac[1], h->mac[2],
                   h->mac[3], h->mac[4], h->mac[5], h->mtu, h->npeers,
                   (unsigned long long)h->rx_used, (unsigned long long)h->rx_pool_bytes,
                   (unsigned long long)h->rx_reserved);
            if (sc->counters) {
                print_counters(&h->ep, "    ");
                print_ifaces(h);
                if (!strcmp(h->device, "kernel"))
                    kmod_show_endpoint(h->pid, h->ep_id, h->ifname, "    ");
            }
            if (sc->peers)
                for (uint32_t i = 0; i < h->npeers && pme_shm_size(i + 1) <= e.size; i++)
                    print_peer(&h->peers[i]);
            sc->shown++;
        }
        free(e.h);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    int counters = 0, peers = 0, clean = 0;
    long pid = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--check"))
            return pme_check_main(argc, argv);
        if (!strcmp(argv[i], "--probe-agent"))
            return probe_agent_main(argc, argv);
        if (!strcmp(argv[i], "--config") && i == 1)
            return config_show_main(argc, argv);
    }
    static const struct option lo[] = {{"counters", 0, 0, 'c'}, {"peers", 0, 0, 'P'},
                                       {"pid", 1, 0, 'p'},      {"clean", 0, 0, 'C'},
                                       {"new-secret", 0, 0, 'S'}, {"help", 0, 0, 'h'},
                                       {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "cp:h", lo, NULL)) != -1) {
        switch (c) {
        case 'c': counters = 1; break;
        case 'P': peers = counters = 1; break;
        case 'p': pid = strtol(optarg, NULL, 10); break;
        case 'C': clean = 1; break;
        case 'S': return new_secret();
        default:
            fprintf(stderr, "usage: pme_info [-c|--counters] [--peers] [-p|--pid PID] [--clean]\n"
                            "       pme_info --new-secret > FILE   (a job secret for "
                            "PME_JOB_SECRET_FILE; chmod 600 FILE)\n"
                            "       pme_info --check [-i IFACE] [--hostfile FILE [--rsh CMD] "
                            "[--probe]]\n"
                            "       pme_info --config   (every PME_* variable and CVAR)\n");
            return 2;
        }
    }
    if (!counters && !clean) {
        printf("PME %s, wire version %d, CRC32C by %s\n", PME_VERSION_STRING, PME_WIRE_VERSION,
               pme_crc32c_impl());
        list_interfaces();
        printf("\n");
    }
    if (!clean) {
        kmod_show_global();
        printf("\n");
    }
    const char *base = pme_counters_base();
    DIR *top = opendir(base);
    if (!top) {
        fprintf(stderr, "pme_info: %s: %s\n", base, strerror(errno));
        return 1;
    }
    struct scan sc = {pid, counters, peers, clean, 0, 0};
    if (!clean)
        printf("Endpoints running:\n");
    struct dirent *ud;
    while ((ud = readdir(top)))
        scan_user_dir(dirfd(top), base, ud->d_name, &sc);
    closedir(top);
    int shown = sc.shown, stale = sc.stale;
    if (!clean && !shown)
        printf("  (none)\n");
    if (!clean && stale)
        printf("%d counter file(s) of dead processes: pme_info --clean removes them\n", stale);
    return 0;
}
