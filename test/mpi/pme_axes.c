// SPDX-License-Identifier: BSD-3-Clause
/*
 * pme_axes - MPI_Bcast, MPI_Reduce and MPI_Allreduce checked element by element, for
 * the datatypes and operations ch4:pme's collectives along a torus's axes take
 * (predefined types of every class, a strided derived type, every predefined
 * reduction, MPI_MINLOC/MPI_MAXLOC on pairs, a commutative user operation) and one they
 * leave to MPICH (a non-commutative user operation), from several roots, in place and
 * not, with messages from 0 bytes to a few MiB that cross the pipeline's segments.
 * Every value is an integer small enough for every sum and product to be exact, so
 * results must match exactly whatever order the reduction took.
 *
 * Prints the MPI_T counter pme_axes_colls of ch4:pme (collectives PME ran along the
 * axes) as "pme_axes: N collectives along the axes" (-1 when there is no such counter),
 * then "pme_axes: OK" or the first errors. Exit status 1 on any wrong element.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pme_pvar.h"

static int rank, size;
static long errors;

static void complain(const char *what, long count, int root, long i, double got, double want)
{
    if (errors++ < 10)
        fprintf(stderr, "pme_axes: rank %d: %s count %ld root %d: element %ld is %g, not %g\n",
                rank, what, count, root, i, got, want);
}

/* Element i of rank r's contribution, for an operation: small integers, and for
 * products only 1 and -1 (some) and 2 (one rank), so that nothing overflows. */
static long value(const char *op, int r, long i)
{
    if (!strcmp(op, "prod"))
        return r == (int) (i % size) ? 2 : (i + r) % 7 == 0 ? -1 : 1;
    if (!strcmp(op, "logical"))
        return (i + r) % 3 == 0;        /* 0 or 1 */
    return (long) ((i * 7 + r * 13) % 101) - (r % 2 ? 50 : 0);
}

static long combine(const char *op, long a, long b)
{
    if (!strcmp(op, "sum"))
        return a + b;
    if (!strcmp(op, "prod"))
        return a * b;
    if (!strcmp(op, "max"))
        return a > b ? a : b;
    if (!strcmp(op, "min"))
        return a < b ? a : b;
    if (!strcmp(op, "band"))
        return a & b;
    if (!strcmp(op, "bor"))
        return a | b;
    if (!strcmp(op, "bxor"))
        return a ^ b;
    return a;
}

static long expected(const char *op, long i)
{
    long v = value(op, 0, i);
    for (int r = 1; r < size; r++)
        v = combine(op, v, value(op, r, i));
    return v;
}

/* ---- element access by MPI type: integers in and out of buffers ---- */

static void put(MPI_Datatype t, void *buf, long i, long v)
{
    if (t == MPI_INT)
        ((int *) buf)[i] = (int) v;
    else if (t == MPI_DOUBLE)
        ((double *) buf)[i] = (double) v;
    else if (t == MPI_FLOAT)
        ((float *) buf)[i] = (float) v;
    else if (t == MPI_LONG_LONG)
        ((long long *) buf)[i] = v;
    else if (t == MPI_SHORT)
        ((short *) buf)[i] = (short) v;
    else if (t == MPI_UNSIGNED_CHAR)
        ((unsigned char *) buf)[i] = (unsigned char) v;
}

static double get(MPI_Datatype t, const void *buf, long i)
{
    if (t == MPI_INT)
        return ((const int *) buf)[i];
    if (t == MPI_DOUBLE)
        return ((const double *) buf)[i];
    if (t == MPI_FLOAT)
        return ((const float *) buf)[i];
    if (t == MPI_LONG_LONG)
        return (double) ((const long long *) buf)[i];
    if (t == MPI_SHORT)
        return ((const short *) buf)[i];
    return ((const unsigned char *) buf)[i];
}

static size_t type_size(MPI_Datatype t)
{
    int s;
    MPI_Type_size(t, &s);
    return (size_t) s;
}

/* ---- user operations ---- */

/* Commutative: the sum of ints. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    for (int i = 0; i < *len; i++)
        ((int *) inout)[i] += ((int *) in)[i];
}

/* Not commutative: the composition of affine maps x -> a x + b over ints modulo 1009,
 * as pairs (a, b); the result depends on the ranks' order. */
static void user_compose(void *in, void *inout, int *len, MPI_Datatype *t)
{
    int *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        int a = x[2 * i], b = x[2 * i + 1], c = y[2 * i], d = y[2 * i + 1];
        /* (in then inout): inout(in(v)) = c (a v + b) + d */
        y[2 * i] = c * a % 1009;
        y[2 * i + 1] = (c * b + d) % 1009;
    }
}

/* ---- the checks ---- */

static void check_bcast(MPI_Datatype t, long count, int root)
{
    size_t es = type_size(t);
    unsigned char *buf = malloc(count * es + 1);
    for (long i = 0; i < count; i++)
        put(t, buf, i, rank == root ? (i * 7 + root * 13) % 101 : 255);
    MPI_Bcast(buf, (int) count, t, root, MPI_COMM_WORLD);
    for (long i = 0; i < count; i++)
        if (get(t, buf, i) != (i * 7 + root * 13) % 101)
            complain("bcast", count, root, i, get(t, buf, i), (i * 7 + root * 13) % 101);
    free(buf);
}

/* A strided type: every other int of 2 * count. */
static void check_bcast_vector(long count, int root)
{
    MPI_Datatype v;
    MPI_Type_vector((int) count, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    int *buf = malloc((2 * count + 1) * sizeof(int));
    for (long i = 0; i < 2 * count; i++)
        buf[i] = rank == root || i % 2 ? (int) (i * 3 + root) : -1;
    MPI_Bcast(buf, count ? 1 : 0, v, root, MPI_COMM_WORLD);
    for (long i = 0; i < 2 * count; i++)
        if (buf[i] != (int) (i * 3 + root))
            complain("bcast vector", count, root, i, buf[i], (double) (i * 3 + root));
    free(buf);
    MPI_Type_free(&v);
}

/* op_name is the value() family; root -1: allreduce; in_place: MPI_IN_PLACE. */
static void check_reduce(MPI_Datatype t, MPI_Op op, const char *op_name, long count, int root,
                         int in_place)
{
    size_t es = type_size(t);
    unsigned char *in = malloc(count * es + 1), *out = malloc(count * es + 1);
    for (long i = 0; i < count; i++) {
        put(t, in, i, value(op_name, rank, i));
        put(t, out, i, in_place ? value(op_name, rank, i) : 7);
    }
    int mine = root < 0 || rank == root;
    const void *send = in_place && mine ? MPI_IN_PLACE : in;
    if (root < 0)
        MPI_Allreduce(send, out, (int) count, t, op, MPI_COMM_WORLD);
    else
        MPI_Reduce(send, out, (int) count, t, op, root, MPI_COMM_WORLD);
    for (long i = 0; mine && i < count; i++) {
        long want = expected(op_name, i);
        if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) {
            long v = value(op_name, 0, i) != 0;
            for (int r = 1; r < size; r++) {
                long w = value(op_name, r, i) != 0;
                v = op == MPI_LAND ? v && w : op == MPI_LOR ? v || w : v != w;
            }
            want = v;
        }
        if (t == MPI_UNSIGNED_CHAR)
            want &= 0xff;
        if (get(t, out, i) != (double) want)
            complain(root < 0 ? "allreduce" : "reduce", count, root, i, get(t, out, i), want);
    }
    free(in);
    free(out);
}

/* MPI_MINLOC and MPI_MAXLOC on (double, int) pairs. */
static void check_loc(MPI_Op op, long count, int root)
{
    struct { double v; int loc; } *in = malloc((count + 1) * sizeof(*in)),
        *out = malloc((count + 1) * sizeof(*out));
    for (long i = 0; i < count; i++) {
        in[i].v = (double) ((i + 3 * rank) % 5);        /* ties: the lowest rank wins */
        in[i].loc = rank;
    }
    if (root < 0)
        MPI_Allreduce(in, out, (int) count, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
    else
        MPI_Reduce(in, out, (int) count, MPI_DOUBLE_INT, op, root, MPI_COMM_WORLD);
    for (long i = 0; (root < 0 || rank == root) && i < count; i++) {
        double best = (double) (i % 5);
        int at = 0;
        for (int r = 1; r < size; r++) {
            double v = (double) ((i + 3 * r) % 5);
            if (op == MPI_MINLOC ? v < best : v > best) {
                best = v;
                at = r;
            }
        }
        if (out[i].v != best || out[i].loc != at)
            complain(op == MPI_MINLOC ? "minloc" : "maxloc", count, root, i,
                     out[i].v * 1000 + out[i].loc, best * 1000 + at);
    }
    free(in);
    free(out);
}

/* The non-commutative user operation: the ranks' maps composed in rank order. */
static void check_compose(MPI_Op op, long count, int root)
{
    int *in = malloc((2 * count + 1) * sizeof(int)), *out = malloc((2 * count + 1) * sizeof(int));
    for (long i = 0; i < count; i++) {
        in[2 * i] = (int) ((rank + i) % 7 + 2);
        in[2 * i + 1] = (int) ((rank * 5 + i) % 11);
    }
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Allreduce(in, out, (int) count, pair, op, MPI_COMM_WORLD);
    for (long i = 0; i < count; i++) {
        /* rank 0's map first, then rank 1's, ...: the fold of user_compose */
        long a = (0 + i) % 7 + 2, b = (i) % 11;
        for (int r = 1; r < size; r++) {
            long c = (r + i) % 7 + 2, d = (r * 5 + i) % 11;
            long na = c * a % 1009, nb = (c * b + d) % 1009;
            a = na;
            b = nb;
        }
        if (out[2 * i] != a || out[2 * i + 1] != b)
            complain("non-commutative allreduce", count, root, i, out[2 * i], (double) a);
    }
    MPI_Type_free(&pair);
    free(in);
    free(out);
}

static long read_axes_counter(void)
{
    unsigned long long v = 0;
    return pme_pvar_read("pme_axes_colls", &v, sizeof(v)) ? (long) v : -1;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long before = read_axes_counter();
    int roots[3] = { 0, size / 2, size - 1 };

    /* bytes from 0 to past the pipeline's 64 KiB segments and to a few MiB */
    static const long bytes[] = { 0, 1, 7, 1000, 65535, 65537, 300001, 3 * 1048576 + 5 };
    for (int k = 0; k < 3; k++)
        for (size_t s = 0; s < sizeof(bytes) / sizeof(bytes[0]); s++)
            check_bcast(MPI_UNSIGNED_CHAR, bytes[s], roots[k]);
    for (int k = 0; k < 3; k++) {
        check_bcast(MPI_DOUBLE, 20000, roots[k]);
        check_bcast(MPI_SHORT, 33333, roots[k]);
        check_bcast_vector(0, roots[k]);
        check_bcast_vector(1, roots[k]);
        check_bcast_vector(50000, roots[k]);
    }

    static const struct { MPI_Datatype t; const char *name; } types[] = {
        {MPI_INT, "int"}, {MPI_DOUBLE, "double"}, {MPI_FLOAT, "float"},
        {MPI_LONG_LONG, "long long"}, {MPI_SHORT, "short"},
    };
    struct { MPI_Op op; const char *family; int integer_only; } ops[] = {
        {MPI_SUM, "sum", 0}, {MPI_PROD, "prod", 0}, {MPI_MAX, "max", 0}, {MPI_MIN, "min", 0},
        {MPI_BAND, "band", 1}, {MPI_BOR, "bor", 1}, {MPI_BXOR, "bxor", 1},
        {MPI_LAND, "logical", 1}, {MPI_LOR, "logical", 1}, {MPI_LXOR, "logical", 1},
    };
    static const long counts[] = { 0, 1, 5, 1000, 20000 };
    for (size_t ti = 0; ti < sizeof(types) / sizeof(types[0]); ti++)
        for (size_t oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
            int integer = types[ti].t != MPI_DOUBLE && types[ti].t != MPI_FLOAT;
            if (ops[oi].integer_only && !integer)
                continue;
            for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
                check_reduce(types[ti].t, ops[oi].op, ops[oi].family, counts[ci], -1, 0);
                check_reduce(types[ti].t, ops[oi].op, ops[oi].family, counts[ci],
                             roots[ci % 3], 0);
            }
        }
    /* a few MiB, in place and not, from every root */
    for (int k = 0; k < 3; k++) {
        check_reduce(MPI_INT, MPI_SUM, "sum", 800001, roots[k], k == 1);
        check_reduce(MPI_DOUBLE, MPI_MAX, "max", 300007, roots[k], k == 2);
    }
    check_reduce(MPI_INT, MPI_SUM, "sum", 800001, -1, 0);
    check_reduce(MPI_INT, MPI_SUM, "sum", 800001, -1, 1);
    check_reduce(MPI_LONG_LONG, MPI_BXOR, "bxor", 300000, -1, 0);
    check_reduce(MPI_UNSIGNED_CHAR, MPI_BOR, "bor", 1000, -1, 1);

    for (int k = 0; k < 3; k++) {
        check_loc(MPI_MINLOC, 1000, roots[k]);
        check_loc(MPI_MAXLOC, 20000, -1);
    }
    MPI_Op usum, compose;
    MPI_Op_create(user_sum, 1, &usum);
    MPI_Op_create(user_compose, 0, &compose);
    for (int k = 0; k < 3; k++) {
        check_reduce(MPI_INT, usum, "sum", 20000, roots[k], 0);
        check_reduce(MPI_INT, usum, "sum", 20000, -1, k == 1);
    }
    check_compose(compose, 1000, -1);
    MPI_Op_free(&usum);
    MPI_Op_free(&compose);

    long after = read_axes_counter(), all_errors;
    MPI_Allreduce(&errors, &all_errors, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("pme_axes: %ld collectives along the axes\n", before < 0 ? -1 : after - before);
        printf("pme_axes: %s\n", all_errors ? "FAILED" : "OK");
    }
    MPI_Finalize();
    return all_errors != 0;
}
