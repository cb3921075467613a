/*
 * rmabench - one-sided latency and bandwidth between rank 0 (the origin) and rank 1 (the
 * target, which waits in MPI_Barrier meanwhile), in the manner of the OSU one-sided
 * benchmarks, for maint/rma-bench. Plain C99 and MPI-3; built with any mpicc.
 *
 *   rmabench [-s SIZES] [-t SECONDS] BENCH...
 *
 *   put_lat, get_lat    one MPI_Put (MPI_Get) and MPI_Win_flush per operation, inside one
 *                       shared lock (osu_put_latency, osu_get_latency): us per operation
 *   put_bw, get_bw      64 operations then MPI_Win_flush (osu_put_bw, osu_get_bw): MB/s
 *   acc_lat             one MPI_Accumulate (MPI_SUM of int) and a flush: us
 *   epoch_put, epoch_get, epoch_acc
 *                       MPI_Win_lock (exclusive), one operation, MPI_Win_unlock per
 *                       operation (rma_contig's loop): us per epoch
 *
 * SIZES: comma-separated bytes with k/m suffixes (default 1,8,64,512,4k,32k,256k,1m,4m).
 * Each (benchmark, size) runs batches of operations for about SECONDS (default 0.3): a
 * warm-up batch sizes them, then 5 batches; the value is the median batch's. After each
 * bandwidth and latency run the origin checks the data: what it put is in the target's
 * window, what it got is what the target holds. Output on rank 0:
 *
 *   bench,size,value,unit,check
 *
 * Exit status 1 when a check failed.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64
#define BATCHES 5
#define MAX_SIZE (4 << 20)

static int rank;
static MPI_Win win;
static unsigned char *wbuf, *obuf;
static double seconds = 0.3;

static unsigned char pat(int seed, size_t i)
{
    return (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

/* One batch of n operations of bench at size; returns seconds. */
static double batch(const char *b, size_t size, long n)
{
    int bw = strstr(b, "_bw") != NULL, count = (int)size;
    double t0 = MPI_Wtime();
    if (!strncmp(b, "epoch_", 6)) {
        for (long i = 0; i < n; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
            if (!strcmp(b, "epoch_put"))
                MPI_Put(obuf, count, MPI_BYTE, 1, 0, count, MPI_BYTE, win);
            else if (!strcmp(b, "epoch_get"))
                MPI_Get(obuf, count, MPI_BYTE, 1, 0, count, MPI_BYTE, win);
            else
                MPI_Accumulate(obuf, count / 4, MPI_INT, 1, 0, count / 4, MPI_INT, MPI_SUM, win);
            MPI_Win_unlock(1, win);
        }
        return MPI_Wtime() - t0;
    }
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        int k = bw ? WINDOW : 1;
        for (int j = 0; j < k; j++) {
            if (!strncmp(b, "put", 3))
                MPI_Put(obuf, count, MPI_BYTE, 1, 0, count, MPI_BYTE, win);
            else if (!strncmp(b, "get", 3))
                MPI_Get(obuf, count, MPI_BYTE, 1, 0, count, MPI_BYTE, win);
            else
                MPI_Accumulate(obuf, count / 4, MPI_INT, 1, 0, count / 4, MPI_INT, MPI_SUM, win);
        }
        MPI_Win_flush(1, win);
    }
    double t = MPI_Wtime() - t0;
    MPI_Win_unlock(1, win);
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Put a pattern, get it back into a cleared buffer: the data path is intact. */
static int verify(size_t size, int seed)
{
    for (size_t i = 0; i < size; i++)
        obuf[i] = pat(seed, i);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(obuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
    MPI_Win_flush(1, win);
    memset(obuf, 0, size);
    MPI_Get(obuf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win);
    MPI_Win_unlock(1, win);
    for (size_t i = 0; i < size; i++)
        if (obuf[i] != pat(seed, i))
            return 0;
    return 1;
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'k' || *end == 'K')
        v *= 1024;
    else if (*end == 'm' || *end == 'M')
        v *= 1024 * 1024;
    return (size_t)v;
}

int main(int argc, char **argv)
{
    const char *sizes_arg = "1,8,64,512,4k,32k,256k,1m,4m";
    int size, failed = 0, nb = 0;
    const char *benches[16];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-s") && i + 1 < argc)
            sizes_arg = argv[++i];
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (nb < 16)
            benches[nb++] = argv[i];
    }
    if (size != 2 || !nb) {
        if (!rank)
            fprintf(stderr, "usage: mpiexec -n 2 rmabench [-s SIZES] [-t SECONDS] BENCH...\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Win_allocate(MAX_SIZE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbuf, &win);
    obuf = malloc(MAX_SIZE);
    memset(obuf, 1, MAX_SIZE);
    memset(wbuf, 0, MAX_SIZE);
    if (!rank)
        printf("bench,size,value,unit,check\n");
    for (int b = 0; b < nb; b++) {
        char *list = strdup(sizes_arg), *save = NULL;
        for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            size_t s = parse_size(tok);
            if (s > MAX_SIZE)
                continue;
            if (strstr(benches[b], "acc") && s < 4)
                continue;
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                /* Warm up and size a batch to seconds / BATCHES. */
                long n = 1;
                double t;
                while ((t = batch(benches[b], s, n)) < seconds / BATCHES / 4 && n < (1L << 24))
                    n *= 2;
                n = (long)(n * (seconds / BATCHES) / (t > 1e-9 ? t : 1e-9)) + 1;
                double per[BATCHES];
                for (int k = 0; k < BATCHES; k++)
                    per[k] = batch(benches[b], s, n) / n;
                qsort(per, BATCHES, sizeof(per[0]), cmp);
                double med = per[BATCHES / 2];
                int ok = verify(s, b * 31 + (int)(s % 97));
                failed |= !ok;
                int bw = strstr(benches[b], "_bw") != NULL;
                printf("%s,%zu,%.3f,%s,%s\n", benches[b], s,
                       bw ? s * (double)WINDOW / med / 1e6 : med * 1e6, bw ? "MB/s" : "us",
                       ok ? "ok" : "FAIL");
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        free(list);
    }
    if (!rank) {
        printf("# end errors=%d\n", failed);
        fflush(stdout);
    }
    MPI_Win_free(&win);
    free(obuf);
    MPI_Finalize();
    return failed;
}
