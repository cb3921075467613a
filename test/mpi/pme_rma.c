// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_rma - one-sided communication checked value by value, and a target that computes.
 *
 * usage: pme_rma [native|blocked|any] [SECONDS]
 *
 * With every synchronization MPI has (lock/unlock exclusive and shared, lock_all,
 * flush, fence, post/start/complete/wait), every rank puts, gets, accumulates
 * (MPI_SUM of int and double, MPI_BXOR, MPI_MAX), fetches-and-adds and
 * compares-and-swaps on every other rank's window and on its own, and checks what
 * landed and what came back: all fetch-and-add results toward one counter are distinct
 * (the additions were atomic), exactly one compare-and-swap wins each slot, every sum
 * counts every contribution once.
 *
 * Then rank 0 computes for SECONDS (default 3) without calling MPI, while every other
 * rank runs lock/put/get/accumulate/fetch-and-op/compare-and-swap/unlock epochs on
 * rank 0's window, timing them. "native": the epochs must finish within half the
 * computation (PME's target answers without rank 0's process); "blocked": they must
 * not (the control, with MPIR_CVAR_CH4_PME_RMA=0: MPIDIG's target is rank 0's
 * process); "any": no expectation (ranks sharing rank 0's node reach its window through
 * shared memory and MPIDIG). Rank 0 then checks its window.
 *
 * Prints "rank R: ok" when everything was right, "rank R: ..." naming the first wrong
 * value otherwise (exit status 1).
 */
#include <mpi.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SLOTS 64        /* ints per rank in the first part's window */
#define BULK 100000     /* bytes of a large put and get */
#define EPOCHS 40       /* per origin while rank 0 computes */

static int rank, size, errors;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void check(int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    printf("rank %d: MPI error in %s: %s\n", rank, what, msg);
    fflush(stdout);
    exit(1);
}

#define EXPECT(cond, ...)                                                                   \
    do {                                                                                    \
        if (!(cond) && errors++ < 10) {                                                     \
            printf("rank %d: ", rank);                                                      \
            printf(__VA_ARGS__);                                                            \
            printf("\n");                                                                   \
        }                                                                                   \
    } while (0)

/* The window of the first part, per rank (displacement unit 1: displacements are byte
 * offsets): SLOTS ints written by puts (slot i by rank i), a sum counter, a fetch-and-add counter, CAS slots, a double sum, a BXOR word, a MAX
 * word, then BULK bytes. */
struct layout {
    int put[SLOTS];
    int sum;
    long fadd;
    int cas[SLOTS];
    double dsum;
    unsigned bxor;
    int max;
    unsigned char bulk[BULK];
};

static unsigned char bulk_byte(int r, int i)
{
    return (unsigned char)(r * 37 + i * 11 + 5);
}

/* Passive target: exclusive and shared locks, lock_all with flushes. */
static void passive(MPI_Win win, struct layout *mine)
{
    static unsigned char src[BULK], back[BULK];
    for (int i = 0; i < BULK; i++)
        src[i] = bulk_byte(rank, i);
    long *fetched = malloc(sizeof(long) * (size_t)size);
    for (int t = 0; t < size; t++) {
        int v = 1000 * rank + t;
        /* one small put per exclusive epoch: the one-exchange case */
        check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win), "lock");
        check(MPI_Put(&v, 1, MPI_INT, t, offsetof(struct layout, put) + sizeof(int) * rank, 1,
                      MPI_INT, win), "put");
        check(MPI_Win_unlock(t, win), "unlock");
        /* shared: accumulates, a fetch-and-add, a compare-and-swap */
        int one = 1, minus = -1, me = rank, old;
        double half = 0.5;
        unsigned bit = 1u << (rank % 32);
        int big = rank * 10;
        check(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win), "lock shared");
        check(MPI_Accumulate(&one, 1, MPI_INT, t, offsetof(struct layout, sum), 1,
                             MPI_INT, MPI_SUM, win), "accumulate");
        check(MPI_Accumulate(&half, 1, MPI_DOUBLE, t, offsetof(struct layout, dsum), 1,
                             MPI_DOUBLE, MPI_SUM, win), "accumulate double");
        check(MPI_Accumulate(&bit, 1, MPI_UNSIGNED, t, offsetof(struct layout, bxor), 1,
                             MPI_UNSIGNED, MPI_BXOR, win), "accumulate bxor");
        check(MPI_Accumulate(&big, 1, MPI_INT, t, offsetof(struct layout, max), 1, MPI_INT,
                             MPI_MAX, win), "accumulate max");
        long inc = 1;
        check(MPI_Fetch_and_op(&inc, &fetched[t], MPI_LONG, t, offsetof(struct layout, fadd),
                               MPI_SUM, win), "fetch_and_op");
        check(MPI_Compare_and_swap(&me, &minus, &old, MPI_INT, t,
                                   offsetof(struct layout, cas) + sizeof(int) * (t % SLOTS), win),
              "compare_and_swap");
        check(MPI_Win_unlock(t, win), "unlock shared");
    }
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    /* Every process's own window: the values of everyone. */
    check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win), "lock self");
    for (int r = 0; r < size; r++)
        EXPECT(mine->put[r] == 1000 * r + rank, "put slot %d holds %d, not %d", r, mine->put[r],
               1000 * r + rank);
    EXPECT(mine->sum == size, "sum %d, not %d", mine->sum, size);
    EXPECT(mine->dsum == 0.5 * size, "double sum %g, not %g", mine->dsum, 0.5 * size);
    unsigned want = 0;
    for (int r = 0; r < size; r++)
        want ^= 1u << (r % 32);
    EXPECT(mine->bxor == want, "bxor %#x, not %#x", mine->bxor, want);
    EXPECT(mine->max == 10 * (size - 1), "max %d", mine->max);
    EXPECT(mine->fadd == size, "fetch-and-add counter %ld, not %d", mine->fadd, size);
    int winners = 0;
    for (int s = 0; s < SLOTS; s++)
        winners += mine->cas[s] != -1;
    EXPECT(winners == 1 && mine->cas[rank % SLOTS] >= 0 && mine->cas[rank % SLOTS] < size,
           "%d compare-and-swaps won, slot holds %d", winners, mine->cas[rank % SLOTS]);
    check(MPI_Win_unlock(rank, win), "unlock self");
    /* The fetched values toward each target are a permutation of 0..size-1. */
    long *all = malloc(sizeof(long) * (size_t)size * (size_t)size);
    check(MPI_Allgather(fetched, size, MPI_LONG, all, size, MPI_LONG, MPI_COMM_WORLD), "gather");
    for (int t = 0; t < size; t++) {
        unsigned long long seen = 0;
        for (int r = 0; r < size; r++) {
            long f = all[r * size + t];
            EXPECT(f >= 0 && f < size && !(seen >> f & 1), "fetch-and-add toward %d gave %ld twice or out of range", t, f);
            if (f >= 0 && f < 64)
                seen |= 1ull << f;
        }
    }
    free(all);
    free(fetched);
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    /* lock_all: a large put to the next rank, flush, get it back. */
    int next = (rank + 1) % size;
    check(MPI_Win_lock_all(0, win), "lock_all");
    check(MPI_Put(src, BULK, MPI_BYTE, next, offsetof(struct layout, bulk), BULK, MPI_BYTE, win),
          "bulk put");
    check(MPI_Win_flush(next, win), "flush");
    memset(back, 0, BULK);
    check(MPI_Get(back, BULK, MPI_BYTE, next, offsetof(struct layout, bulk), BULK, MPI_BYTE, win),
          "bulk get");
    check(MPI_Win_flush_all(win), "flush_all");
    check(MPI_Win_unlock_all(win), "unlock_all");
    for (int i = 0; i < BULK; i++)
        if (back[i] != bulk_byte(rank, i)) {
            EXPECT(0, "bulk byte %d came back %d, not %d", i, back[i], bulk_byte(rank, i));
            break;
        }
}

/* Active target: fence and post/start/complete/wait, with a strided (derived)
 * datatype too (MPIDIG's part). */
static void active(MPI_Win win, struct layout *mine)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int v = 7000 + rank, got = -1;
    check(MPI_Win_fence(0, win), "fence");
    check(MPI_Put(&v, 1, MPI_INT, next, 0, 1, MPI_INT, win), "fence put");
    check(MPI_Accumulate(&v, 1, MPI_INT, next, offsetof(struct layout, sum), 1,
                         MPI_INT, MPI_SUM, win), "fence accumulate");
    check(MPI_Win_fence(0, win), "fence");
    EXPECT(mine->put[0] == 7000 + prev, "fence put landed %d", mine->put[0]);
    EXPECT(mine->sum == size + 7000 + prev, "fence accumulate: %d", mine->sum);
    check(MPI_Get(&got, 1, MPI_INT, prev, 0, 1, MPI_INT, win), "fence get");
    check(MPI_Win_fence(0, win), "fence");
    EXPECT(got == 7000 + (prev + size - 1) % size, "fence get: %d", got);

    MPI_Group world, pair_to, pair_from;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &next, &pair_to);
    MPI_Group_incl(world, 1, &prev, &pair_from);
    MPI_Datatype every_other;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int strided[8] = {0};
    for (int i = 0; i < 8; i++)
        strided[i] = 100 * rank + i;
    check(MPI_Win_post(pair_from, 0, win), "post");
    check(MPI_Win_start(pair_to, 0, win), "start");
    check(MPI_Put(strided, 1, every_other, next, sizeof(int) * 8, 1, every_other, win),
          "strided put");
    int two = 2;
    check(MPI_Accumulate(&two, 1, MPI_INT, next, offsetof(struct layout, sum), 1,
                         MPI_INT, MPI_SUM, win), "pscw accumulate");
    check(MPI_Win_complete(win), "complete");
    check(MPI_Win_wait(win), "wait");
    for (int i = 0; i < 8; i += 2)
        EXPECT(mine->put[8 + i] == 100 * prev + i, "strided put slot %d: %d", 8 + i,
               mine->put[8 + i]);
    EXPECT(mine->sum == size + 7000 + prev + 2, "pscw accumulate: %d", mine->sum);
    MPI_Type_free(&every_other);
    MPI_Group_free(&pair_to);
    MPI_Group_free(&pair_from);
    MPI_Group_free(&world);
}

/* Gets and a fetch that the closing synchronization must wait for: rank 0 issues them
 * only after the target (the last rank, on another node in every run of t-rma.sh) has
 * entered its side of that synchronization, so a fence, complete or flush_all that
 * returned without their answers would return with most of BULK bytes still on the
 * wire. Under fence, post/start/complete/wait and lock_all/flush_all in turn; the
 * target's bulk bytes change from one to the next. */
static void late_answers(MPI_Win win, struct layout *mine)
{
    static unsigned char back[BULK];
    const int target = size - 1;
    const struct timespec lag = {0, 300 * 1000 * 1000};
    const char *sync[] = {"fence", "complete", "flush_all"};
    const int peer = rank == 0 ? target : 0; /* of the origin's or the target's PSCW */
    MPI_Group world, only;
    if (size < 2)
        return;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &peer, &only);
    for (int phase = 0; phase < 3; phase++) {
        int seed = 50 + phase;
        long fetched = -1, unused = 0;
        check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win), "lock self");
        for (int i = 0; i < BULK; i++)
            mine->bulk[i] = bulk_byte(seed + rank, i);
        mine->fadd = 1000 * seed + rank;
        check(MPI_Win_unlock(rank, win), "unlock self");
        check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
        memset(back, 0, BULK);
        int origin = rank == 0, serves = rank == target;
        if (phase == 0)
            check(MPI_Win_fence(0, win), "fence");
        else if (phase == 1 && serves)
            check(MPI_Win_post(only, 0, win), "post");
        else if (phase == 1 && origin)
            check(MPI_Win_start(only, 0, win), "start");
        else if (phase == 2 && origin)
            check(MPI_Win_lock_all(0, win), "lock_all");
        if (origin) {
            nanosleep(&lag, NULL);
            check(MPI_Get(back, BULK, MPI_BYTE, target, offsetof(struct layout, bulk), BULK,
                          MPI_BYTE, win), "late get");
            check(MPI_Fetch_and_op(&unused, &fetched, MPI_LONG, target,
                                   offsetof(struct layout, fadd), MPI_NO_OP, win),
                  "late fetch");
        }
        if (phase == 0)
            check(MPI_Win_fence(0, win), "fence");
        else if (phase == 1 && serves)
            check(MPI_Win_wait(win), "wait");
        else if (phase == 1 && origin)
            check(MPI_Win_complete(win), "complete");
        else if (phase == 2 && origin)
            check(MPI_Win_flush_all(win), "flush_all");
        if (origin) {
            /* checked before anything else may make progress */
            int bad = 0;
            for (int i = 0; i < BULK; i++)
                bad += back[i] != bulk_byte(seed + target, i);
            EXPECT(!bad, "%s returned with %d of %d bytes of a get not landed", sync[phase],
                   bad, BULK);
            EXPECT(fetched == 1000 * seed + target, "%s returned before a fetch's answer (%ld)",
                   sync[phase], fetched);
        }
        if (phase == 2 && origin)
            check(MPI_Win_unlock_all(win), "unlock_all");
    }
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    MPI_Group_free(&only);
    MPI_Group_free(&world);
}

/* Rank 0 computes; the others operate on its window meanwhile. Returns 1 when the
 * origins' epochs finished within half the computation. */
static int computing_target(double secs)
{
    struct cw {
        long counter;
        int cas_owner;
        int put[64];
    } *w;
    MPI_Win win;
    check(MPI_Win_allocate(sizeof(*w), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win), "allocate");
    memset(w, 0, sizeof(*w));
    w->cas_owner = -1;
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    double took = 0;
    int fast = 1;
    if (rank == 0) {
        double end = now_s() + secs;
        volatile double x = 1;
        while (now_s() < end)
            x = x * 1.0000001 + 1e-9;
    } else {
        double start = now_s();
        for (int e = 0; e < EPOCHS; e++) {
            long one = 1, before;
            int me = rank, none = -1, owner, back;
            int v = rank * 1000 + e;
            check(MPI_Win_lock(e % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win), "lock");
            check(MPI_Put(&v, 1, MPI_INT, 0, offsetof(struct cw, put) + sizeof(int) * (rank % 64), 1,
                          MPI_INT, win), "put");
            check(MPI_Win_flush(0, win), "flush");
            check(MPI_Get(&back, 1, MPI_INT, 0, offsetof(struct cw, put) + sizeof(int) * (rank % 64),
                          1, MPI_INT, win), "get");
            check(MPI_Accumulate(&one, 1, MPI_LONG, 0, offsetof(struct cw, counter), 1, MPI_LONG,
                                 MPI_SUM, win), "accumulate");
            check(MPI_Fetch_and_op(&one, &before, MPI_LONG, 0, offsetof(struct cw, counter),
                                   MPI_SUM, win), "fetch_and_op");
            check(MPI_Compare_and_swap(&me, &none, &owner, MPI_INT, 0,
                                       offsetof(struct cw, cas_owner), win), "cas");
            check(MPI_Win_unlock(0, win), "unlock");
            EXPECT(back == v, "epoch %d: got %d back, not %d", e, back, v);
        }
        took = now_s() - start;
        fast = took < secs / 2;
        printf("rank %d: %d epochs on rank 0's window in %.3f s while it computed for %.1f s\n",
               rank, EPOCHS, took, secs);
    }
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    if (rank == 0) {
        check(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win), "lock self");
        EXPECT(w->counter == 2L * EPOCHS * (size - 1), "counter %ld, not %ld", w->counter,
               2L * EPOCHS * (size - 1));
        EXPECT(w->cas_owner > 0 && w->cas_owner < size, "CAS owner %d", w->cas_owner);
        for (int r = 1; r < size && r < 64; r++)
            EXPECT(w->put[r] == r * 1000 + EPOCHS - 1, "rank %d's last put: %d", r, w->put[r]);
        check(MPI_Win_unlock(0, win), "unlock self");
    }
    int all_fast;
    check(MPI_Allreduce(&fast, &all_fast, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "allreduce");
    check(MPI_Win_free(&win), "free");
    return all_fast;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *expect = argc > 1 ? argv[1] : "native";
    double secs = argc > 2 ? atof(argv[2]) : 3;

    struct layout *mine;
    MPI_Win win;
    check(MPI_Win_allocate(sizeof(*mine), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &win),
          "allocate");
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    memset(mine, 0, sizeof(*mine));
    for (int s = 0; s < SLOTS; s++)
        mine->cas[s] = -1;
    mine->max = -1;
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    passive(win, mine);
    check(MPI_Barrier(MPI_COMM_WORLD), "barrier");
    active(win, mine);
    late_answers(win, mine);
    check(MPI_Win_free(&win), "free");

    int fast = computing_target(secs);
    if (rank == 0) {
        if (!strcmp(expect, "native"))
            EXPECT(fast, "the origins waited for the computing target");
        else if (!strcmp(expect, "blocked"))
            EXPECT(!fast, "the origins did not wait for the computing target (control)");
    }
    int all_errors;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!errors)
        printf("rank %d: ok\n", rank);
    MPI_Finalize();
    return all_errors ? 1 : 0;
}
