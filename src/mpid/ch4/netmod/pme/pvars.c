// SPDX-License-Identifier: BSD-3-Clause
/*
 * ch4:pme - PME's counters as MPI_T performance variables (class COUNTER, category
 * CH4_PME), so that a program or a tool can see what the transport carried:
 * pme_tx_msgs, pme_rx_msgs, pme_tx_bytes, pme_rx_bytes, pme_tx_frames,
 * pme_rx_frames, pme_retransmits, pme_rx_held, pme_rndv_sends, pme_rndv_recvs,
 * pme_tx_bundles, pme_tx_bundled, pme_axes_colls
 * (collectives along a torus's axes, coll_axes.c), pme_shm_rings, pme_shm_wakeups
 * (the shared-memory doorbell, shm_wake.c); and as strings
 * (class GENERIC, MPI_CHAR): the interface in use, pme_iface, and where the node sits
 * on a mesh, pme_topology and pme_coords.
 */
#include "mpidimpl.h"
#include "pme_impl.h"

#include <stddef.h>

struct pvar_def {
    const char *name;
    size_t offset;
    const char *desc;
};

static const struct pvar_def pvar_defs[] = {
    {"pme_tx_msgs", offsetof(struct pme_counters, tx_msgs), "Messages sent over PME"},
    {"pme_rx_msgs", offsetof(struct pme_counters, rx_msgs), "Messages received over PME"},
    {"pme_tx_bytes", offsetof(struct pme_counters, tx_bytes), "Bytes of frames sent by PME"},
    {"pme_rx_bytes", offsetof(struct pme_counters, rx_bytes),
     "Bytes of frames received by PME"},
    {"pme_tx_frames", offsetof(struct pme_counters, tx_frames), "Ethernet frames sent by PME"},
    {"pme_rx_frames", offsetof(struct pme_counters, rx_frames),
     "Ethernet frames received by PME"},
    {"pme_retransmits", offsetof(struct pme_counters, retransmits),
     "Frames PME sent again after a loss"},
    {"pme_rx_held", offsetof(struct pme_counters, rx_held),
     "Frames PME received after a loss and held until the lost ones came again"},
    {"pme_rndv_sends", offsetof(struct pme_counters, tx_rndv),
     "Messages sent by PME's zero-copy rendezvous"},
    {"pme_rndv_recvs", offsetof(struct pme_counters, rx_rndv),
     "Messages received by PME's zero-copy rendezvous"},
    {"pme_tx_bundles", offsetof(struct pme_counters, tx_bundles),
     "Bundles of small messages PME sent as one (PME_COALESCE)"},
    {"pme_tx_bundled", offsetof(struct pme_counters, tx_bundled),
     "Small messages PME sent in bundles"},
};

static void get_counter(void *addr, void *obj_handle, int count, void *buf)
{
    const struct pvar_def *def = addr;
    struct pme_counters c;
    memset(&c, 0, sizeof(c));
    if (MPIDI_PME_global.ep)
        pme_ep_counters(MPIDI_PME_global.ep, &c);
    uint64_t v;
    memcpy(&v, (char *) &c + def->offset, sizeof(v));
    *(unsigned long long *) buf = (unsigned long long) v;
}

static void get_iface(void *addr, void *obj_handle, int count, void *buf)
{
    snprintf(buf, (size_t) count, "%s", MPIDI_PME_global.iface);
}

/* Where this node sits: "torus:4x4", "ring:8", "switch" or "" (the route file does not
 * say), and its coordinates "1,2" ("" off a torus). */
static void get_topology(void *addr, void *obj_handle, int count, void *buf)
{
    const struct pme_topology *t = MPIDI_PME_topology();
    char s[64] = "";
    if (t->kind == PME_TOPO_SWITCH)
        snprintf(s, sizeof(s), "switch");
    for (int d = 0; t->kind == PME_TOPO_TORUS && d < t->ndims; d++)
        snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%d",
                 d ? "x" : t->ndims == 1 ? "ring:" : "torus:", t->dims[d]);
    snprintf(buf, (size_t) count, "%s", s);
}

static void get_coords(void *addr, void *obj_handle, int count, void *buf)
{
    const struct pme_topology *t = MPIDI_PME_topology();
    char s[64] = "";
    for (int d = 0; t->kind == PME_TOPO_TORUS && d < t->ndims; d++)
        snprintf(s + strlen(s), sizeof(s) - strlen(s), "%s%d", d ? "," : "", t->coords[d]);
    snprintf(buf, (size_t) count, "%s", s);
}

static void register_string(const char *name, void (*get) (void *, void *, int, void *),
                            const char *desc)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_GENERIC, MPI_CHAR, name, NULL, 64,
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC,
                              MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_CONTINUOUS | MPIR_T_PVAR_FLAG_READONLY,
                              get, NULL, "CH4_PME", desc);
}

/* A counter the netmod itself keeps (not pme_core's): MPI_T reads it in place. */
static void register_netmod_counter(const char *name, unsigned long long *counter,
                                    const char *desc)
{
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG, name, counter,
                              1, MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC,
                              MPI_T_BIND_NO_OBJECT, MPIR_T_PVAR_FLAG_CONTINUOUS, NULL, NULL,
                              "CH4_PME", desc);
}

void MPIDI_PME_pvars_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    for (size_t i = 0; i < sizeof(pvar_defs) / sizeof(pvar_defs[0]); i++)
        MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_COUNTER, MPI_UNSIGNED_LONG_LONG,
                                  pvar_defs[i].name, (void *) &pvar_defs[i], 1,
                                  MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC,
                                  MPI_T_BIND_NO_OBJECT, MPIR_T_PVAR_FLAG_CONTINUOUS,
                                  get_counter, NULL, "CH4_PME", pvar_defs[i].desc);
    MPIR_T_PVAR_REGISTER_impl(MPI_T_PVAR_CLASS_GENERIC, MPI_CHAR, "pme_iface",
                              MPIDI_PME_global.iface, (int) sizeof(MPIDI_PME_global.iface),
                              MPI_T_ENUM_NULL, MPI_T_VERBOSITY_USER_BASIC,
                              MPI_T_BIND_NO_OBJECT,
                              MPIR_T_PVAR_FLAG_CONTINUOUS | MPIR_T_PVAR_FLAG_READONLY,
                              get_iface, NULL, "CH4_PME",
                              "The network interface PME sends and receives on");
    register_netmod_counter("pme_axes_colls", &MPIDI_PME_global.axes_colls,
                            "Broadcasts and reductions PME ran along the axes of a torus");
    register_netmod_counter("pme_shm_rings", &MPIDI_PME_global.shm_rings,
                            "Doorbells rung: shared-memory messages sent to a rank of this "
                            "node that slept on the network device");
    register_netmod_counter("pme_shm_wakeups", &MPIDI_PME_global.shm_wakeups,
                            "Sleeps on the network device that a shared-memory sender's "
                            "doorbell ended");
    register_string("pme_topology", get_topology,
                    "The mesh this node is part of: torus:AxB[xC], ring:N or switch "
                    "(empty when PME's route file does not say)");
    register_string("pme_coords", get_coords,
                    "Where this node sits on the ring or torus: x[,y[,z]]");
}
