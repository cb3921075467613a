// SPDX-License-Identifier: BSD-3-Clause
/*
 * mpibench - PME's MPI benchmarks, one program, any MPI-3 library.
 *
 *   mpicc -O2 -o mpibench mpibench.c pt2pt.c coll.c halo.c isort.c wavefront.c \
 *       transpose.c rma.c
 *   mpiexec -n 2 ./mpibench [options] BENCH[@SIZES] ...
 *
 * For each benchmark and size the driver warms up while it calibrates how many
 * iterations fill a fifth of the measured time, runs batches of that many (at least
 * five, until the measured time is spent) between two getrusage() calls, checks the
 * results, and rank 0 prints one CSV line:
 *
 *   bench,size,value,unit,iters,ranks,bytes,wall_s,usr_s,sys_s,cpu_max_s,verify
 *
 * value is the figure of merit (see unit) of the median batch; iters the measured
 * iterations of all batches; ranks the ranks that did the work; bytes the payload they
 * moved in all batches; wall_s their duration (the sum of the slowest rank's batches);
 * usr_s and sys_s the CPU time of those ranks summed, cpu_max_s the largest user+sys of
 * one of them; verify "ok" or "FAIL:<errors>". Lines beginning with '#' are comments.
 * The last line, "# end errors=N", is printed and flushed before MPI_Finalize, so that a
 * library that hangs in MPI_Finalize still leaves complete results. Exit status: 0, or 1
 * when a verification failed, 2 on bad usage.
 */
#include "mpibench.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const struct bench *const all_benches[] = {
    &bench_pingpong, &bench_bw, &bench_bibw, &bench_msgrate, &bench_allreduce, &bench_reduce,
    &bench_alltoall, &bench_bcast, &bench_barrier, &bench_halo2d, &bench_halo3d,
    &bench_isort, &bench_wavefront, &bench_transpose, &bench_put, &bench_get, &bench_putbw,
    &bench_getbw, &bench_acc, &bench_epochput, &bench_epochget, &bench_epochacc,
};
#define NBENCH (sizeof(all_benches) / sizeof(all_benches[0]))

static int world_rank, world_size;

void bench_complain(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "mpibench[%d]: ", world_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (posix_memalign(&p, page, bytes ? bytes : 1) != 0) {
        bench_complain("out of memory (%zu bytes)", bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    memset(p, 0, bytes);
    return p;
}

void bench_free(void *p)
{
    free(p);
}

int bench_pair_peer(const struct bench_ctx *c)
{
    int half = c->nranks / 2;
    return c->rank == 0 ? half : c->rank == half ? 0 : -1;
}

int bench_window(const struct bench_ctx *c)
{
    const struct bench_opts *o = c->opts;
    if (c->size == 0 || (size_t)o->window * c->size <= o->max_window_bytes)
        return o->window;
    return c->size > o->max_window_bytes ? 1 : (int)(o->max_window_bytes / c->size);
}

void pattern_fill(void *buf, size_t n, uint64_t seed)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < n; i++)
        b[i] = pattern_byte(seed, i);
}

long pattern_check(const void *buf, size_t n, uint64_t seed, const char *what)
{
    const unsigned char *b = buf;
    long bad = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char want = pattern_byte(seed, i);
        if (b[i] != want) {
            if (bad < 3)
                bench_complain("%s: byte %zu is 0x%02x, expected 0x%02x", what, i, b[i], want);
            bad++;
        }
    }
    return bad;
}

/* ------------------------------------------------------------------ sizes */

static int parse_one_size(const char *s, char **end, size_t *out)
{
    char *e;
    unsigned long long v = strtoull(s, &e, 10);
    if (e == s)
        return -1;
    switch (tolower((unsigned char)*e)) {
    case 'k': v <<= 10; e++; break;
    case 'm': v <<= 20; e++; break;
    case 'g': v <<= 30; e++; break;
    default: break;
    }
    *end = e;
    *out = (size_t)v;
    return 0;
}

/* "A..B" is A, then every power of two above A up to B (0..8 is 0 1 2 4 8);
 * "a,b,c" a list; both mix ("0..64,1m"). Returns the count, or -1. */
static int parse_sizes(const char *spec, size_t *out, int max)
{
    int n = 0;
    const char *s = spec;
    while (*s) {
        char *e;
        size_t a, b;
        if (parse_one_size(s, &e, &a) < 0)
            return -1;
        if (e[0] == '.' && e[1] == '.') {
            if (parse_one_size(e + 2, &e, &b) < 0 || b < a)
                return -1;
            size_t v = a;
            while (v <= b) {
                if (n == max)
                    return -1;
                out[n++] = v;
                if (v == 0)
                    v = 1;
                else {
                    size_t p = 1;
                    while (p <= v)
                        p <<= 1;
                    v = p;
                }
            }
        } else {
            if (n == max)
                return -1;
            out[n++] = a;
        }
        if (*e == ',')
            e++;
        else if (*e)
            return -1;
        s = e;
    }
    return n;
}

/* ------------------------------------------------------------------ driver */

static double cpu_seconds(const struct timeval *tv)
{
    return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

/* Wait for a request without spinning: ranks that have no part in a benchmark (ping-pong
 * with more than 2 ranks) wait here while the others measure, and must not take a core
 * from them when there are more ranks than cores. Costs up to 100 us after the work. */
static void quiet_wait(MPI_Request *req)
{
    int done = 0;
    struct timespec nap = {0, 100 * 1000};
    for (;;) {
        MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (done)
            return;
        nanosleep(&nap, NULL);
    }
}

static double max_all(double v, MPI_Comm comm)
{
    double r;
    MPI_Request req;
    MPI_Iallreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, comm, &req);
    quiet_wait(&req);
    return r;
}

static void quiet_barrier(MPI_Comm comm)
{
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    quiet_wait(&req);
}

#define BATCHES 5
#define MAX_BATCHES 200

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Run one benchmark at one size; returns the number of verification errors. */
static long run_size(const struct bench *b, size_t size, const struct bench_opts *o)
{
    struct bench_ctx c;
    memset(&c, 0, sizeof(c));
    c.comm = MPI_COMM_WORLD;
    c.rank = world_rank;
    c.nranks = world_size;
    c.size = size;
    c.opts = o;
    c.active = 1;
    c.ops_per_iter = 1;

    int rc = b->setup(&c);
    int worst;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, c.comm);
    if (worst != 0) {
        if (rc == 0 && b->teardown)
            b->teardown(&c);
        if (worst < 0) {
            if (world_rank == 0)
                printf("# error %s %zu: setup failed\n", b->name, size);
            return 1;
        }
        return 0; /* skipped: the benchmark said why */
    }

    /* Warm up, doubling the batch, until the warm-up time is spent; the last batch
     * tells how long an iteration takes. Every rank takes the slowest rank's figure. */
    long k = 1, done = 0;
    double spent = 0, t = 0;
    for (;;) {
        t = max_all(b->run(&c, k), c.comm);
        spent += t;
        done += k;
        if (spent >= o->warmup_s || k >= o->max_iters)
            break;
        k = k * 2 > o->max_iters ? o->max_iters : k * 2;
    }
    /* The last batch, or the average if a hiccup (a descheduled rank) slowed it. */
    double per_iter = t / (double)k;
    if (spent / (double)done < per_iter)
        per_iter = spent / (double)done;
    /* The measured run: batches of k iterations, each about a fifth of the measured
     * time, until that time is spent and there are at least BATCHES of them (or three
     * times the time is spent: slow iterations). The value comes from the median
     * batch, so that a rank descheduled on a shared machine spoils one batch, not the
     * figure; CPU time and bytes cover all batches. */
    double want = per_iter > 0 ? o->target_s / BATCHES / per_iter : (double)o->max_iters;
    long max_k = o->max_iters / BATCHES > 0 ? o->max_iters / BATCHES : 1;
    k = want > (double)max_k ? max_k : (long)want;
    if (k < 1)
        k = 1;
    MPI_Bcast(&k, 1, MPI_LONG, 0, c.comm);

    double batch[MAX_BATCHES], wall = 0;
    int nb = 0;
    if (b->prepare)
        b->prepare(&c);
    quiet_barrier(c.comm);
    struct rusage r0, r1;
    getrusage(RUSAGE_SELF, &r0);
    while (nb < MAX_BATCHES) {
        batch[nb] = max_all(b->run(&c, k), c.comm); /* the same on every rank */
        wall += batch[nb++];
        if ((nb >= BATCHES && (wall >= o->target_s || (long)nb * k >= o->max_iters)) ||
            wall >= 3 * o->target_s)
            break;
    }
    getrusage(RUSAGE_SELF, &r1);
    long iters = k * nb;
    double med = median(batch, nb);

    double usr = cpu_seconds(&r1.ru_utime) - cpu_seconds(&r0.ru_utime);
    double sys = cpu_seconds(&r1.ru_stime) - cpu_seconds(&r0.ru_stime);
    double loc[3] = {c.active ? usr : 0, c.active ? sys : 0, c.active ? 1 : 0}, sum[3];
    MPI_Reduce(loc, sum, 3, MPI_DOUBLE, MPI_SUM, 0, c.comm);
    double cpu = c.active ? usr + sys : 0, cpu_max;
    MPI_Reduce(&cpu, &cpu_max, 1, MPI_DOUBLE, MPI_MAX, 0, c.comm);

    long errors = b->verify ? b->verify(&c) : 0, all_errors;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, c.comm);
    if (b->teardown)
        b->teardown(&c);

    if (world_rank == 0) {
        double value = 0, ops = c.ops_per_iter * (double)k;
        double bytes = c.bytes_per_iter * (double)iters;
        if (med > 0) {
            switch (b->kind) {
            case KIND_LATENCY: value = med / ops * 1e6; break;
            case KIND_BANDWIDTH: value = c.bytes_per_iter * (double)k / med / 1e6; break;
            case KIND_RATE: value = ops / med / 1e6; break;
            }
        }
        char verdict[32];
        if (all_errors)
            snprintf(verdict, sizeof(verdict), "FAIL:%ld", all_errors);
        else
            snprintf(verdict, sizeof(verdict), "ok");
        printf("%s,%zu,%.6g,%s,%ld,%d,%.0f,%.6f,%.6f,%.6f,%.6f,%s\n", b->name, size, value,
               b->unit, iters, (int)sum[2], bytes, wall, sum[0], sum[1], cpu_max, verdict);
        fflush(stdout);
    }
    return all_errors;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mpibench [options] BENCH[@SIZES] ...\n"
            "  -t SEC    measured time per size (default 0.5)\n"
            "  -W SEC    warm-up and calibration time per size (default 0.1)\n"
            "  -n N      at most about N measured iterations per size (default 1000000)\n"
            "  -w N      messages in flight in bw, bibw, msgrate, and operations per\n"
            "            flush in putbw, getbw (default 64)\n"
            "  -s SIZES  sizes of the message benchmarks without @SIZES (default 0..4m)\n"
            "  -L SEC    time limit: sizes not begun by then are skipped (default none)\n"
            "  -l        list the benchmarks and their default sizes\n"
            "SIZES: A..B (A, then powers of two up to B), or a,b,c, or both; k, m, g\n"
            "suffixes are binary. Sizes are bytes, except halo2d/halo3d and wavefront\n"
            "(local edge), isort (keys per rank) and transpose (rows per rank).\n");
}

int main(int argc, char **argv)
{
    struct bench_opts o = {
        .target_s = 0.5,
        .warmup_s = 0.1,
        .max_iters = 1000000,
        .window = 64,
        .max_window_bytes = (size_t)256 << 20,
        .check_every = 1000,
    };
    const char *global_sizes = NULL;
    double limit = 0;
    int list = 0, opt;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);

    while ((opt = getopt(argc, argv, "t:W:n:w:s:L:lh")) != -1) {
        switch (opt) {
        case 't': o.target_s = atof(optarg); break;
        case 'W': o.warmup_s = atof(optarg); break;
        case 'n': o.max_iters = atol(optarg); break;
        case 'w': o.window = atoi(optarg); break;
        case 's': global_sizes = optarg; break;
        case 'L': limit = atof(optarg); break;
        case 'l': list = 1; break;
        case 'h':
            if (world_rank == 0)
                usage(stdout);
            MPI_Finalize();
            return 0;
        default:
            if (world_rank == 0)
                usage(stderr);
            MPI_Finalize();
            return 2;
        }
    }
    if (o.target_s <= 0 || o.warmup_s < 0 || o.max_iters < 1 || o.window < 1) {
        if (world_rank == 0)
            usage(stderr);
        MPI_Finalize();
        return 2;
    }
    if (list) {
        if (world_rank == 0)
            for (size_t i = 0; i < NBENCH; i++)
                printf("%-10s %-8s %-10s %s\n", all_benches[i]->name, all_benches[i]->unit,
                       all_benches[i]->sizes, all_benches[i]->what);
        MPI_Finalize();
        return 0;
    }
    if (optind >= argc || world_size < 2) {
        if (world_rank == 0) {
            if (world_size < 2)
                fprintf(stderr, "mpibench: needs at least 2 ranks\n");
            usage(stderr);
        }
        MPI_Finalize();
        return 2;
    }

    /* Parse every argument before running anything. */
    enum { MAXSIZES = 64 };
    int nargs = argc - optind;
    const struct bench **which = calloc((size_t)nargs, sizeof(*which));
    size_t(*sizes)[MAXSIZES] = calloc((size_t)nargs, sizeof(*sizes));
    int *nsizes = calloc((size_t)nargs, sizeof(*nsizes));
    for (int a = 0; a < nargs; a++) {
        char name[64];
        const char *arg = argv[optind + a], *at = strchr(arg, '@');
        size_t len = at ? (size_t)(at - arg) : strlen(arg);
        snprintf(name, sizeof(name), "%.*s", (int)len, arg);
        for (size_t i = 0; i < NBENCH; i++)
            if (!strcmp(all_benches[i]->name, name))
                which[a] = all_benches[i];
        const char *spec = at ? at + 1 : NULL;
        if (which[a] && !spec)
            spec = global_sizes && which[a]->message_sizes ? global_sizes : which[a]->sizes;
        if (which[a])
            nsizes[a] = parse_sizes(spec, sizes[a], MAXSIZES);
        if (!which[a] || nsizes[a] <= 0) {
            if (world_rank == 0)
                fprintf(stderr, "mpibench: bad benchmark or sizes: %s (see -l)\n", arg);
            MPI_Finalize();
            return 2;
        }
    }

    /* Header: the library, and where each rank runs. */
    char host[MPI_MAX_PROCESSOR_NAME] = "", lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int hl, ll;
    MPI_Get_processor_name(host, &hl);
    MPI_Get_library_version(lib, &ll);
    char *hosts = NULL;
    if (world_rank == 0)
        hosts = malloc((size_t)world_size * MPI_MAX_PROCESSOR_NAME);
    MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
               0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        for (char *p = lib; *p; p++)
            if (*p == '\n' || *p == '\r' || *p == '\t')
                *p = ' ';
        char *nl = strstr(lib, "MPICH Release");
        if (nl)
            *nl = 0;
        printf("# mpibench 1\n# library: %s\n# ranks: %d\n", lib, world_size);
        for (int r = 0; r < world_size; r++)
            printf("# rank %d: %s\n", r, hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME);
        printf("# options: time %g s, warm-up %g s, window %d\n", o.target_s, o.warmup_s, o.window);
        printf("bench,size,value,unit,iters,ranks,bytes,wall_s,usr_s,sys_s,cpu_max_s,verify\n");
        fflush(stdout);
        free(hosts);
    }

    double t_start = MPI_Wtime();
    long errors = 0;
    for (int a = 0; a < nargs; a++) {
        for (int s = 0; s < nsizes[a]; s++) {
            int stop = 0;
            if (world_rank == 0 && limit > 0 && MPI_Wtime() - t_start > limit)
                stop = 1;
            MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
            if (stop) {
                if (world_rank == 0)
                    printf("# skipped %s %zu: time limit of %g s reached\n", which[a]->name,
                           sizes[a][s], limit);
                continue;
            }
            errors += run_size(which[a], sizes[a][s], &o);
        }
    }
    if (world_rank == 0) {
        printf("# end errors=%ld\n", errors);
        fflush(stdout);
    }
    fflush(stderr);
    free(which);
    free(sizes);
    free(nsizes);
    MPI_Finalize();
    return errors ? 1 : 0;
}
