/* SPDX-License-Identifier: (GPL-2.0 OR BSD-3-Clause) */
/*
 * pme_faults.h - what the fault injector (pme_faults.bpf.c) and its control program
 * (faultctl.c, run by maint/faults) share: the maps' names and their value layouts.
 *
 * One copy of the program is loaded per interface and attached to its TC egress hook,
 * so every map below describes one interface. The control program finds the maps again
 * through the program attached to the interface (no pinning, nothing left behind when
 * the interface or its network namespace goes away).
 */
#ifndef PME_FAULTS_H
#define PME_FAULTS_H

#include <linux/types.h>

/* Probabilities are in parts per million of the frames of PME's EtherType. */
#define PME_FAULTS_PPM 1000000u

/*
 * A duplicate made with bpf_clone_redirect passes the egress hook a second time; this
 * mark tells the program it is the copy (the mark is cleared before it leaves, and a
 * veth crossing into another namespace scrubs marks anyway).
 */
#define PME_FAULTS_DUP_MARK 0x504d4544u /* "PMED" */

/* The longest delay accepted: fq's default horizon drops frames due later than 10 s. */
#define PME_FAULTS_MAX_DELAY_NS 1000000000ull

/* Value of the one-entry map "faults_cfg", written by the control program. */
struct pme_faults_cfg {
	__u64 seed;          /* the PRNG's seed (see pme_faults_draw) */
	__u64 salt;          /* per interface, so the links of a cluster differ */
	__u64 delay_ns;      /* how much later a delayed frame leaves */
	__u64 reorder_ns;    /* how much later a reordered frame leaves */
	__u32 drop_ppm;
	__u32 dup_ppm;
	__u32 corrupt_ppm;
	__u32 delay_ppm;
	__u32 reorder_ppm;
	__u16 ethertype;     /* host order; the frames subject to faults */
	__u16 pad;
};

/* Value of the one-entry map "faults_state", kept by the program. */
struct pme_faults_state {
	__u64 frames;        /* PME frames seen so far: the PRNG's position */
	__u64 floor_ns;      /* departure time of the last frame kept in order */
};

/* Indices of the per-CPU counters in the map "faults_cnt". */
enum pme_faults_counter {
	PME_FC_FRAMES,       /* PME frames that reached the hook (duplicates included) */
	PME_FC_DROPPED,
	PME_FC_DUPLICATED,   /* copies sent */
	PME_FC_CORRUPTED,    /* frames with one bit flipped after the Ethernet header */
	PME_FC_DELAYED,
	PME_FC_REORDERED,
	PME_FC_OTHER,        /* frames of other EtherTypes, passed untouched */
	PME_FC_COUNT
};

/* The order of this list is the order of enum pme_faults_counter. */
#define PME_FAULTS_COUNTER_NAMES \
	{ "frames", "dropped", "duplicated", "corrupted", "delayed", "reordered", "other" }

/* The decisions drawn for each frame, in the order the program takes them. */
enum pme_faults_draw_kind {
	PME_FD_DROP,
	PME_FD_CORRUPT,
	PME_FD_CORRUPT_WHERE,
	PME_FD_DUP,
	PME_FD_DELAY,
	PME_FD_REORDER,
	PME_FD_KINDS
};

/*
 * The seeded PRNG: every decision is a pure function of (seed, salt, frame number,
 * kind), so the n-th PME frame through an interface meets the same fate in every run
 * with the same seed, whichever CPU handles it (splitmix64's output function over a
 * counter). The frame number is taken with an atomic add.
 */
static inline __u64 pme_faults_draw(__u64 seed, __u64 salt, __u64 frame, __u32 kind)
{
	__u64 z = seed + salt * 0xD1B54A32D192ED03ull +
		  (frame * PME_FD_KINDS + kind + 1) * 0x9E3779B97F4A7C15ull;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static inline int pme_faults_hit(__u64 draw, __u32 ppm)
{
	return ppm && (draw % PME_FAULTS_PPM) < ppm;
}

#endif /* PME_FAULTS_H */
