/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * ch4:pme - what moved in MPICH between the versions the netmod is built with: 4.0
 * (Debian 12's 4.0.2), 4.2 (Debian 13's 4.2.1) and 5.0 (5.0.1). The netmod's sources
 * are written once, against the names below; each name is MPICH's own where MPICH
 * kept it, and says in one line what changed where it did not.
 *
 * The series are told apart by MPICH_NUMVERSION (mpi.h): before 4.1 is the 4.0
 * interface, 4.1 up to 5.0 the 4.2 one, 5.0 and later the 5.0 one. 4.1 and 4.3 were
 * never built here; maint/build-mpich says so for a tarball of another version.
 *
 * Included by the netmod's own files only (through pme_noinline.h): never by the rest
 * of MPICH, so that a change here recompiles the netmod alone.
 */
#ifndef PME_COMPAT_H_INCLUDED
#define PME_COMPAT_H_INCLUDED

#define MPIDI_PME_MPICH_AT_LEAST(major, minor) \
    (MPICH_NUMVERSION >= (major) * 10000000 + (minor) * 100000)

/* The three interfaces, as one switch each. */
#if MPIDI_PME_MPICH_AT_LEAST(5, 0)
#define MPIDI_PME_MPICH_5 1
#define MPIDI_PME_MPICH_42 1
#elif MPIDI_PME_MPICH_AT_LEAST(4, 1)
#define MPIDI_PME_MPICH_5 0
#define MPIDI_PME_MPICH_42 1
#else
#define MPIDI_PME_MPICH_5 0
#define MPIDI_PME_MPICH_42 0
#endif

/* Element counts of one-sided operations: int in 4.0, MPI_Aint since (MPI 4's large
 * counts). */
#if MPIDI_PME_MPICH_42
typedef MPI_Aint MPIDI_PME_count_t;
#else
typedef int MPIDI_PME_count_t;
#endif

/* What collectives are told about errors. 4.0 passes a pointer to an MPIR_Errflag_t
 * that they update; 4.2 passes the flag by value (errors are returned); 5.0 passes an
 * int of collective attributes instead (MPIR_COLL_ATTR_*, 0: none). A netmod
 * collective hands what it got to MPICH's, unchanged. */
#if MPIDI_PME_MPICH_5
typedef int MPIDI_PME_errflag_t;
#define MPIDI_PME_ERRFLAG_NONE 0
#elif MPIDI_PME_MPICH_42
typedef MPIR_Errflag_t MPIDI_PME_errflag_t;
#define MPIDI_PME_ERRFLAG_NONE MPIR_ERR_NONE
#else
typedef MPIR_Errflag_t *MPIDI_PME_errflag_t;
/* (a collective of the netmod's own, outside any caller's, needs a flag to point to) */
#define MPIDI_PME_ERRFLAG_NONE (&(MPIR_Errflag_t) { MPIR_ERR_NONE })
#endif

/* The datatypes the netmod's own calls of MPICH's internal collectives (MPIR_*) pass.
 * 5.0's take internal handles only: an external built-in such as MPI_BYTE makes
 * MPIR_Localcopy assert (MPIR_DATATYPE_ASSERT_BUILTIN), which every window creation
 * hit. Earlier versions have no internal handles and take the external ones. */
#if MPIDI_PME_MPICH_5
#define MPIDI_PME_BYTE MPIR_BYTE_INTERNAL
#define MPIDI_PME_INT MPIR_INT_INTERNAL
#else
#define MPIDI_PME_BYTE MPI_BYTE
#define MPIDI_PME_INT MPI_INT
#endif

/* MPIC_Wait lost its error flag in 4.2. */
#if MPIDI_PME_MPICH_42
#define MPIDI_PME_MPIC_WAIT(req, errflag) ((void) (errflag), MPIC_Wait(req))
#else
#define MPIDI_PME_MPIC_WAIT(req, errflag) MPIC_Wait(req, errflag)
#endif

/* Packing and unpacking took a flags argument in 4.2 (MPIR_TYPEREP_FLAG_*). */
#if MPIDI_PME_MPICH_42
#define MPIDI_PME_TYPEREP_PACK(inbuf, incount, dt, inoff, outbuf, max, actual) \
    MPIR_Typerep_pack(inbuf, incount, dt, inoff, outbuf, max, actual, MPIR_TYPEREP_FLAG_NONE)
#define MPIDI_PME_TYPEREP_UNPACK(inbuf, insize, outbuf, outcount, dt, outoff, actual) \
    MPIR_Typerep_unpack(inbuf, insize, outbuf, outcount, dt, outoff, actual, \
                        MPIR_TYPEREP_FLAG_NONE)
#else
#define MPIDI_PME_TYPEREP_PACK MPIR_Typerep_pack
#define MPIDI_PME_TYPEREP_UNPACK MPIR_Typerep_unpack
#endif

/* The size of MPIDIG's buffers for unexpected and packed messages: a CVAR renamed in 4.1
 * (it serves more than active messages since). */
#if MPIDI_PME_MPICH_42
#define MPIDI_PME_PACK_BUFFER_SIZE MPIR_CVAR_CH4_PACK_BUFFER_SIZE
#else
#define MPIDI_PME_PACK_BUFFER_SIZE MPIR_CVAR_CH4_AM_PACK_BUFFER_SIZE
#endif

/* Whether a rank of comm is on this node, from ch4's address vector. (MPIDI_rank_is_local
 * asks the netmod when ch4 has no shared memory, so the netmod cannot call it.) */
#if MPIDI_PME_MPICH_42
#define MPIDI_PME_RANK_IS_LOCAL(rank, comm) MPIDIU_av_is_local(MPIDIU_comm_rank_to_av(comm, rank))
#else
#define MPIDI_PME_RANK_IS_LOCAL(rank, comm) MPIDIU_rank_is_local(rank, comm)
#endif

/* A partitioned receive tells MPIDIG since 5.0 whether its peer is on this node (false
 * for a netmod's). */
#if MPIDI_PME_MPICH_5
#define MPIDI_PME_PRECV_INIT(buf, parts, count, dt, src, tag, comm, info, req) \
    MPIDIG_mpi_precv_init(buf, parts, count, dt, src, tag, comm, info, false, req)
#else
#define MPIDI_PME_PRECV_INIT MPIDIG_mpi_precv_init
#endif

/* Requests the progress engine completed on a VCI, a count that only grows: the
 * netmod's progress takes a change for activity, not idleness. 4.2 keeps no such count;
 * there a pass in which shared memory made progress does not reach the netmod at all,
 * and the cells it took in between are counted by the doorbell's hook
 * (MPIDI_PME_shm_received). */
#if MPIDI_PME_MPICH_42
#define MPIDI_PME_COMPLETIONS(vci) 0
#else
#define MPIDI_PME_COMPLETIONS(vci) MPL_atomic_relaxed_load_int(&MPIDI_VCI(vci).progress_count)
#endif

/* How ch4 names a process of another job (dynamic processes), and the address vector
 * entry behind that name and behind a rank of this job's MPI_COMM_WORLD. 4.x: a "gpid",
 * the netmod's own address vector table and index in it (upids_to_gpids); 5.0: an
 * "lpid" that MPICH gives out (insert_upid), world 0 being this job's. */
#if MPIDI_PME_MPICH_5
typedef MPIR_Lpid MPIDI_PME_procid_t;
#define MPIDI_PME_PROCID_AV(id) MPIDIU_lpid_to_av_slow(id)
#define MPIDI_PME_WORLD_AV(rank) MPIDIU_lpid_to_av(MPIR_LPID_FROM(0, rank))
#define MPIDI_PME_WORLD_PROCID(rank) ((uint64_t) MPIR_LPID_FROM(0, rank))
#else
typedef uint64_t MPIDI_PME_procid_t;
#define MPIDI_PME_PROCID_AV(id) \
    (&MPIDIU_get_av((int) MPIDIU_GPID_GET_AVTID(id), (int) MPIDIU_GPID_GET_LPID(id)))
#define MPIDI_PME_WORLD_AV(rank) (&MPIDIU_get_av(0, rank))
#define MPIDI_PME_WORLD_PROCID(rank) MPIDIU_GPID_CREATE(0, rank)
#endif

#endif /* PME_COMPAT_H_INCLUDED */
