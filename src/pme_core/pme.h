/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pme.h - the public interface of PME's transport (pme_core).
 *
 * PME moves reliable, ordered, flow-controlled messages between endpoints over raw
 * Ethernet frames of its own EtherType. This header is the whole API a user of the
 * transport (the ch4:pme netmod, pme_perf, the tests) needs; nothing in it depends
 * on MPICH.
 *
 * Model
 *   - An endpoint (pme_ep_t) is one process's attachment to its node's NICs (one, a
 *     list, or the route file's on a mesh), identified on the wire by (node, endpoint
 *     id). Several processes on a node share the NICs, each with its own endpoint id.
 *     On a switched network the endpoint's k-th NIC is its rail k: large messages are
 *     striped over the rails both ends have.
 *   - Frames are authenticated (a keyed MAC under a secret the job's processes share:
 *     pme_config.secret) or, on a network where every host is trusted, only checked
 *     for corruption (CRC32C): pme_config.auth.
 *   - Peers are added by address string (pme_ep_addr() of the other side) and named
 *     afterwards by a small integer (pme_peer_t).
 *   - A message is an opaque header (at most pme_ep_max_hdr() bytes) followed by
 *     data gathered from an iovec. Messages to one peer arrive exactly once, in order.
 *   - Messages up to the eager threshold are copied and complete locally at once.
 *     Larger ones are offered to the receiver (PME_EV_RTS); the receiver chooses where
 *     the data goes (pme_rndv_accept) after its own matching, and the data moves
 *     straight from the sender's buffer into the receiver's, fragment by fragment.
 *   - Everything happens inside pme_progress()/pme_wait(), which hand out events
 *     through pme_next_event(). An endpoint is not thread-safe: one thread at a time.
 */
#ifndef PME_H
#define PME_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PME_VERSION_STRING "0.1.0"

typedef struct pme_ep pme_ep_t;
typedef uint32_t pme_peer_t;
typedef uint32_t pme_rndv_t;

enum pme_status {
    PME_OK = 0,
    PME_EAGAIN = -1,        /* nothing to do now; try again after progress */
    PME_ERR_INVAL = -2,     /* bad argument or tunable */
    PME_ERR_NOMEM = -3,
    PME_ERR_NODEV = -4,     /* the interface does not exist */
    PME_ERR_IFDOWN = -5,    /* the interface exists but is down */
    PME_ERR_PERM = -6,      /* no permission for raw frames (CAP_NET_RAW) */
    PME_ERR_DEVICE = -7,    /* the device failed (see pme_ep_last_error) */
    PME_ERR_ADDR = -8,      /* a malformed peer address */
    PME_ERR_VERSION = -9,   /* the peer speaks another PME wire version */
    PME_ERR_PEER_DEAD = -10,/* the peer stopped answering within peer_timeout */
    PME_ERR_TRUNC = -11,    /* the receiver accepted less than was sent */
    PME_ERR_CANCELED = -12, /* the receiver discarded the offer, or the ep closed */
    PME_ERR_TIMEOUT = -13,  /* a wait or flush ran out of time */
    PME_ERR_BUSY = -14,     /* ep id in use on this interface */
    PME_ERR_NOSYS = -15,    /* device not built in */
    PME_ERR_AUTH = -16,     /* authentication asked for without a usable job secret */
    PME_ERR_UNREACHABLE = -17, /* the route file has no usable route to the peer's node */
    PME_ERR_LINK_DOWN = -18,   /* the interface to the peer is down or has no carrier */
    PME_ERR_RANGE = -19,    /* a one-sided access reaches outside the target's window */
    PME_ERR_NOWIN = -20,    /* the target exposes no window of that key */
    PME_ERR_NOTSUP = -21,   /* the peer's PME does not take one-sided requests */
    PME_ERR_NO_ANSWER = -22,/* the peer never answered the handshake (hello_timeout_ms) */
};

const char *pme_strerror(int status);

enum pme_wait_mode {
    PME_WAIT_AUTO = 0,  /* spin while each runnable process has a core, else block */
    PME_WAIT_SPIN = 1,  /* poll the device without sleeping (up to the caller's timeout) */
    PME_WAIT_BLOCK = 2, /* sleep on the device's descriptor at once */
};

/* Deterministic fault injection of the loop device (tests). Probabilities in [0,1]. */
struct pme_loop_faults {
    uint64_t seed;
    double drop;
    double dup;
    double reorder;     /* hold a frame back behind the next one */
    double corrupt;     /* flip one bit somewhere in the frame */
    double delay;       /* hold a frame back for delay_frames later frames */
    unsigned delay_frames;
    double full;        /* the device takes no more frames in this send call */
};

struct pme_loop_wire;   /* an in-process wire joining loop-device endpoints */

int pme_loop_wire_create(const struct pme_loop_faults *faults, struct pme_loop_wire **wire);
void pme_loop_wire_set_faults(struct pme_loop_wire *wire, const struct pme_loop_faults *faults);
/* Detach an endpoint's MAC from the wire: its frames vanish, as if the host died. */
void pme_loop_wire_cut(struct pme_loop_wire *wire, pme_ep_t *ep);
/* The same for one device of an endpoint of several (PME_IFACE names them): its link
 * reads as down from then on, as a pulled cable's. */
void pme_loop_wire_cut_iface(struct pme_loop_wire *wire, pme_ep_t *ep, unsigned iface);
void pme_loop_wire_destroy(struct pme_loop_wire *wire);
/* Tests speak raw frames too: put a whole Ethernet frame on the wire (faults apply),
 * and take frames sent to a MAC no endpoint has (returns the length, 0 if none). */
int pme_loop_wire_inject(struct pme_loop_wire *wire, const void *frame, size_t len);
size_t pme_loop_wire_take(struct pme_loop_wire *wire, const uint8_t mac[6], void *buf,
                          size_t len);

/* How frames are protected (pme_config.auth, PME_AUTH). */
enum pme_auth {
    PME_AUTH_NONE = 0,  /* only the link's own check; CRCs present are still verified */
    PME_AUTH_CRC = 1,   /* CRC32C over every frame: corruption, not forgery */
    PME_AUTH_MAC = 2,   /* GMAC under the job's secret: corruption and forgery */
    PME_AUTH_AUTO = 3,  /* MAC when a secret is given, else CRC (the default) */
};

#define PME_SECRET_BYTES 16

/* Whether the ring device's frames skip the interface's queueing discipline. */
enum pme_bypass {
    PME_BYPASS_OFF = 0,     /* the default */
    PME_BYPASS_ON = 1,      /* whatever the interface's egress holds */
    PME_BYPASS_AUTO = 2,    /* when it holds only the kernel's default queues */
};

/* A new job secret from the kernel's random source; 0 on success. */
int pme_secret_generate(uint8_t secret[PME_SECRET_BYTES]);
/* Forget a copy of a secret: zero len bytes at p, in a way no compiler removes (a
 * plain memset of memory about to go out of scope may be). pme_ep_open keeps the
 * secret only in its key schedules; a caller wipes its own pme_config with
 * pme_secret_wipe(cfg.secret, sizeof(cfg.secret)) once the endpoint is open. */
void pme_secret_wipe(void *p, size_t len);

/* The most interfaces one endpoint spans (a node of a 3D torus has six). */
#define PME_MAX_IFACES 8

struct pme_config {
    const char *device;         /* "auto" (default: "kernel" when /dev/pme
                                   may be opened, else "ring"), "ring",
                                   "pcap", "loop" or "kernel"           PME_DEVICE */
    const char *iface;          /* interfaces (ring, pcap, kernel): "eth1", "xp,xm", "x*" PME_IFACE;
                                 * NULL: the route file's (pme_route_ifaces) */
    int ep_id;                  /* endpoint id 0..65534, -1: from pid   PME_EP_ID */
    uint32_t job_key;           /* job id without a secret (other jobs' frames are
                                   dropped by it)                       PME_JOB_KEY */
    int auth;                   /* enum pme_auth                        PME_AUTH */
    uint8_t secret[PME_SECRET_BYTES]; /* the job's secret, if secret_len PME_JOB_SECRET_FILE */
    unsigned secret_len;        /* 0 or PME_SECRET_BYTES */
    uint32_t node_id;           /* this node's id, 0: from the MAC     PME_NODE_ID */
    unsigned hop_limit;         /* hops a frame may take (1..255)       PME_HOP_LIMIT */
    uint16_t ethertype;         /* default 0x88B5                       PME_ETHERTYPE */
    unsigned mtu;               /* 0: the interface's MTU               PME_MTU */
    size_t eager_max;           /* largest eager message                PME_EAGER_MAX */
    unsigned window;            /* frames in flight per peer (Go-Back-N N) PME_WINDOW */
    size_t hold_bytes;          /* frames after a gap kept so that only the lost ones are
                                 * resent (0: plain Go-Back-N)        PME_HOLD */
    size_t rx_pool_bytes;       /* receive pool of the endpoint         PME_RX_POOL */
    size_t tx_pool_bytes;       /* eager send copies of the endpoint    PME_TX_POOL */
    size_t credit_bytes;        /* eager credit granted to each peer    PME_CREDITS */
    size_t coalesce_bytes;      /* small eager messages that wait for the link to one
                                 * peer travel as bundles of at most this many bytes
                                 * (one-sided operations: of a frame; 0: each alone)
                                 *                                      PME_COALESCE */
    unsigned coalesce_after;    /* small messages to a peer leave in the call that sends
                                 * them while fewer of its frames than this wait for an
                                 * acknowledgement; then they gather (0: only when the
                                 * link cannot take them)         PME_COALESCE_AFTER */
    unsigned coalesce_us;       /* what gathers leaves at the latest this long after it
                                 * began, sent by the liveness helper while the caller
                                 * is away                           PME_COALESCE_US */
    unsigned rto_us;            /* first retransmission timeout         PME_RTO_US */
    unsigned peer_timeout_ms;   /* silence after which a peer is dead   PME_PEER_TIMEOUT_MS */
    unsigned link_down_ms;      /* owing this long over an interface that is down or has
                                 * no carrier fails the peer, or drops that rail when it
                                 * has others (0: never)              PME_LINK_DOWN_MS */
    unsigned rail_timeout_ms;   /* a rail unanswered this long while the peer answers on
                                 * another is dropped                 PME_RAIL_TIMEOUT_MS */
    int wait_mode;              /* enum pme_wait_mode                   PME_WAIT */
    unsigned spin_us;           /* AUTO, own core: poll this long before sleeping PME_SPIN_US */
    unsigned yield_us;          /* AUTO, core shared: yield this long first PME_YIELD_US */
    unsigned sleep_slack_us;    /* how late a sleeper may wake for timers PME_SLEEP_SLACK_US */
    unsigned local_procs;       /* processes of the job on this node (0: unknown) */
    unsigned expected_peers;    /* peers to expect (0: unknown): credit is shared among them */
    size_t ring_bytes;          /* kernel receive ring (ring, pcap)     PME_RING */
    size_t zc_min_bytes;        /* smallest rendezvous moved without copies where the
                                 * device can (kernel), 0: never         PME_ZC_MIN */
    size_t tx_ring_bytes;       /* kernel send ring (ring; 0: sendmmsg) PME_TX_RING */
    int qdisc_bypass;           /* enum pme_bypass                      PME_QDISC_BYPASS */
    int counters_shm;           /* publish counters for pme_info, 1/0   PME_COUNTERS */
    int helper;                 /* a thread answers while the caller is away PME_HELPER */
    unsigned helper_us;         /* how long away before it does         PME_HELPER_US */
    struct pme_loop_wire *loop_wire; /* the wire of the loop device */
    /* Tests of rails: the wire of the loop device of interface i when iface names
     * several (NULL: loop_wire), as separate switches are. */
    struct pme_loop_wire *loop_wires[PME_MAX_IFACES];
    unsigned hello_timeout_ms;  /* a peer that never answered our handshake while we have
                                 * something for it fails this early with
                                 * PME_ERR_NO_ANSWER (0, or not below peer_timeout_ms:
                                 * only the peer timeout)          PME_HELLO_TIMEOUT_MS */
};

/* Fill cfg with the defaults. */
void pme_config_init(struct pme_config *cfg);
/* Override cfg from PME_* environment variables. Returns PME_ERR_INVAL and names the
 * variable in err (if given) when one does not parse. */
int pme_config_from_env(struct pme_config *cfg, char *err, size_t errlen);

/* This node's route file (pme_route.h: $PME_ROUTES, else /run/pme/routes.<netns>), which
 * pme_route installs on a mesh: 1 and its data interfaces as "xp,xm,yp,ym" in buf, 0 when
 * there is none, or PME_ERR_INVAL with err saying what is wrong with it. An endpoint
 * whose configuration names no interface spans these. */
int pme_route_ifaces(char *buf, size_t len, char *err, size_t errlen);

/* The cores near interface ifname's NIC, as hwloc sees this machine ("0-7"; "unknown"
 * for a virtual interface) into cpus: 1 when the calling thread runs only on them, 0
 * when not, -1 when unknown. */
int pme_iface_locality(const char *ifname, char *cpus, size_t len);

/* The interfaces an endpoint spans when neither PME_IFACE nor a route file names them:
 * every Ethernet interface that is up, but loopback, bridges and the ones carrying a
 * default route, joined with commas into buf. Returns how many (0: none). */
int pme_default_ifaces(char *buf, size_t len);

/* Open an endpoint. On failure *ep is NULL and, if err is given, it holds a sentence
 * naming the cause and the fix (e.g. CAP_NET_RAW). */
int pme_ep_open(const struct pme_config *cfg, pme_ep_t **ep, char *err, size_t errlen);
/* Close: pending operations complete with PME_ERR_CANCELED. Call pme_ep_flush first to
 * let sends finish. */
void pme_ep_close(pme_ep_t *ep);
/* Progress until every send is acknowledged or timeout_ms passes. */
int pme_ep_flush(pme_ep_t *ep, int timeout_ms);

/* The endpoint's address, e.g. "pme2:0a000001/7@02:00:0a:00:00:01" (node, endpoint
 * id, MAC), with the MAC of each rail when it has several
 * ("pme2:0a000001/7@02:00:0a:00:00:01,02:00:0a:01:00:01"). Returns the length
 * (excluding NUL) or PME_ERR_INVAL when len is too small. */
#define PME_ADDR_MAX 192
int pme_ep_addr(pme_ep_t *ep, char *buf, size_t len);
/* Register a peer by its address string. The same address twice gives the same
 * pme_peer_t. Nothing is sent until the first message. */
int pme_ep_add_peer(pme_ep_t *ep, const char *addr, pme_peer_t *peer);
/* Last detailed error of this endpoint (cause and fix), "" if none. */
const char *pme_ep_last_error(pme_ep_t *ep);

/* Effective parameters after open. */
size_t pme_ep_max_hdr(pme_ep_t *ep);
size_t pme_ep_eager_max(pme_ep_t *ep);
unsigned pme_ep_mtu(pme_ep_t *ep);
const char *pme_ep_device(pme_ep_t *ep); /* the device in use: "kernel", "ring", ...
                                           (what "auto" chose) */
int pme_ep_auth(pme_ep_t *ep);  /* enum pme_auth in force (never PME_AUTH_AUTO) */
int pme_ep_fd(pme_ep_t *ep);    /* descriptor to sleep on, -1 if none */

/* Send hdr (hdr_len <= pme_ep_max_hdr) and the bytes of iov to peer. Eager messages are
 * copied before return; rendezvous ones read iov until PME_EV_SEND_DONE, so the caller
 * keeps the buffers alive until then. Every successful pme_send yields exactly one
 * PME_EV_SEND_DONE carrying ctx, except that with PME_SEND_NO_EVENT an eager message
 * returns PME_DONE and no event follows. PME_EAGAIN: the send pool is full; progress
 * and retry. */
#define PME_SEND_NO_EVENT 1u
#define PME_DONE 1      /* pme_send: eager, complete, no event will follow */
int pme_send(pme_ep_t *ep, pme_peer_t peer, const void *hdr, size_t hdr_len,
             const struct iovec *iov, int iovcnt, unsigned flags, void *ctx);

enum pme_event_type {
    PME_EV_NONE = 0,
    PME_EV_MSG,         /* an eager message: hdr, data; release when done */
    PME_EV_RTS,         /* a rendezvous offer: hdr, total; answer with accept/discard */
    PME_EV_SEND_DONE,   /* a send completed (status), ctx */
    PME_EV_RECV_DONE,   /* an accepted rendezvous landed (status, total), ctx */
    PME_EV_PEER_FAILED, /* the peer is dead or incompatible (status); sends to it fail */
};

struct pme_event {
    int type;
    int status;
    pme_peer_t peer;
    const void *hdr;
    size_t hdr_len;
    const void *data;
    size_t data_len;    /* MSG: bytes of data; RECV_DONE: bytes that landed */
    uint64_t total;     /* RTS: bytes offered */
    pme_rndv_t rndv;    /* RTS: handle for accept/discard */
    void *ctx;
    void *priv_;        /* internal */
};

/* Take the next event, or return 0 when there is none. MSG and RTS events keep
 * their hdr/data valid until pme_event_release (RTS: until accept/discard).
 * The receive pool returns credit to the sender only on release. */
int pme_next_event(pme_ep_t *ep, struct pme_event *ev);
void pme_event_release(pme_ep_t *ep, struct pme_event *ev);

/* Answer a rendezvous offer: the data lands in iov (up to its size; a shorter iov
 * truncates and RECV_DONE says PME_ERR_TRUNC). The offer's hdr stays valid until this
 * call returns. RECV_DONE carries ctx. */
int pme_rndv_accept(pme_ep_t *ep, pme_rndv_t rndv, const struct iovec *iov, int iovcnt,
                    void *ctx);
/* Refuse an offer: the sender's send completes with PME_ERR_CANCELED. */
int pme_rndv_discard(pme_ep_t *ep, pme_rndv_t rndv);

/* Make progress without sleeping; returns the number of events ready. */
int pme_progress(pme_ep_t *ep);
/* Send now what waits for the next pass: small messages held back behind frames in
 * flight so that they travel together (PME_COALESCE). Reads no frames. For a caller
 * that may not call PME again soon, such as the netmod after its event handlers sent
 * answers; cheap when nothing waits. */
void pme_send_waiting(pme_ep_t *ep);
/* Make progress until an event is ready or timeout_ms passes (-1: for ever, still
 * bounded by the peers' timeouts), waiting as the config's wait mode says.
 * Returns the number of events ready, 0 on timeout. */
int pme_wait(pme_ep_t *ep, int timeout_ms);

/* The monotonic time (CLOCK_MONOTONIC, ns) at which the last pme_progress or pme_wait
 * ran: a caller that needs the time right after progress need not read the clock again. */
uint64_t pme_ep_now_ns(pme_ep_t *ep);

/* For a caller that polls several sources (the netmod polls PME and shared memory):
 * call right after a pme_progress that found nothing (it uses that pass's time), with
 * how long nothing has come. Returns at
 * once while polling is right (each runnable process has a core and nothing has come
 * for less than spin_us); otherwise yields the core, and once nothing has come for
 * yield_us (spin_us with a core of its own) sleeps on the device for at most
 * max_sleep_us so that the other sources are still polled often. */
void pme_ep_idle(pme_ep_t *ep, uint64_t idle_us, unsigned max_sleep_us);
/* Nonzero when pme_ep_idle with these arguments would sleep (rather than return at once or
 * yield): a caller with another source announces that it sleeps before it does. */
int pme_ep_idle_sleeps(pme_ep_t *ep, uint64_t idle_us, unsigned max_sleep_us);
/* A descriptor of the caller's own (-1: none) whose readability ends any sleep of the
 * endpoint, as a frame does; the caller drains it. The netmod's is the doorbell that
 * MPI's shared-memory senders ring for a rank that sleeps. */
void pme_ep_set_wake_fd(pme_ep_t *ep, int fd);

/* Where nodes sit: the "topology" and "coords" lines of this node's route file
 * (pme_route.h), which pme_route writes on a ring or torus. MPI places ranks by them
 * and runs collectives along a torus's axes. */
#define PME_TOPO_MAX_DIMS 3
enum pme_topo_kind {
    PME_TOPO_UNKNOWN = 0,   /* no route file, or it does not say where this node sits */
    PME_TOPO_SWITCH = 1,    /* every node is one link away */
    PME_TOPO_TORUS = 2,     /* a torus of ndims dimensions (a ring has one) */
};
struct pme_topology {
    int kind;                       /* enum pme_topo_kind */
    int ndims;                      /* torus: 1 to PME_TOPO_MAX_DIMS, else 0 */
    int dims[PME_TOPO_MAX_DIMS];    /* torus: its size in each dimension */
    int coords[PME_TOPO_MAX_DIMS];  /* torus: where this node sits */
    uint32_t node;                  /* this node's id */
};
void pme_ep_topology(pme_ep_t *ep, struct pme_topology *t);
/* Where peer's node sits: its coordinates (on a torus, else -1 each) and *hops, the
 * links from this node to it (0: this node; the route's length). PME_OK,
 * PME_ERR_INVAL for an unknown peer, PME_ERR_UNREACHABLE when the route file does not
 * say (no file, no route to the node, or a torus without its coordinates). */
int pme_peer_place(pme_ep_t *ep, pme_peer_t peer, int coords[PME_TOPO_MAX_DIMS], int *hops);

/*
 * One-sided communication (RMA).
 *
 * A process exposes memory as a window (pme_rma_expose) and gives its key to its peers
 * by its own means (the netmod exchanges keys when MPI creates a window). Peers then
 * put, get, accumulate into it and lock it: the target's endpoint acts on each request
 * when it arrives, in its caller's progress or, while the caller computes elsewhere,
 * in its liveness helper (PME_HELPER). A request that reaches outside the window, or
 * names no window, is refused at the target (never acted on) and fails at the origin
 * with PME_ERR_RANGE or PME_ERR_NOWIN.
 *
 * Completion is counted per peer: pme_rma_pending says how many operations to a peer
 * are not complete, pme_rma_error whether one failed. A put or accumulate is complete
 * once the target has applied it, a get (or a fetching accumulate) once its bytes have
 * landed, a lock once granted, an unlock once the target released the lock. The
 * buffers of an operation must stay as they are until it is complete.
 *
 * Operations to one peer reach it in the order issued. A peer is asked for a bounded
 * number of answers at a time (gets, fetches, locks: 512); operations issued beyond
 * that wait at the origin, and messages (pme_send) sent meanwhile may overtake them.
 *
 * Accumulates (enum pme_wire_rma_aop and pme_wire_rma_dtype of pme_wire.h) are done by
 * one agent at a time per endpoint, element by element, so that accumulates of the same
 * type to one location from many origins are atomic. A caller that updates exposed
 * memory itself (MPI's own accumulates) brackets that with pme_rma_exclusive.
 *
 * PME_PEER_SELF names this endpoint's own windows: operations on them are done at once;
 * a lock is granted at once or waits (pending) behind the peers' as theirs do.
 */
#define PME_PEER_SELF ((pme_peer_t)0xFFFFFFFFu)

enum pme_rma_lock_type { PME_RMA_LOCK_SHARED = 1, PME_RMA_LOCK_EXCL = 2 };
/* Flags of an operation: take the window's lock for it first (lock, operation and the
 * answer in one exchange). Put, accumulate and compare-and-swap must then fit one frame
 * (pme_rma_frame_room); a get may be of any size. The operation is complete once the
 * lock was granted and the operation done. */
#define PME_RMA_TAKE_SHARED 0x1u
#define PME_RMA_TAKE_EXCL 0x2u

/* Expose [base, base + size) (size may be 0); *key names it to peers. */
int pme_rma_expose(pme_ep_t *ep, void *base, uint64_t size, uint32_t *key);
/* Expose it no more. PME_EAGAIN while answers that read from it wait for their
 * acknowledgement: progress and call again. Locks held on it are dropped. */
int pme_rma_withdraw(pme_ep_t *ep, uint32_t key);

/* offset: bytes from the base of the target's window. */
int pme_rma_put(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset, const void *buf,
                size_t len, unsigned flags);
int pme_rma_get(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset, void *buf,
                size_t len, unsigned flags);
/* Combine the len bytes of buf (elements of dtype) into the window with aop. With
 * result, the values the window held before land there (len <= pme_rma_frame_room);
 * with PME_AOP_NO_OP buf may be NULL. */
int pme_rma_acc(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset, const void *buf,
                void *result, size_t len, int aop, int dtype, unsigned flags);
/* One element of dtype: replace it by *swap if it equals *compare; *result gets the
 * value it had. */
int pme_rma_cas(pme_ep_t *ep, pme_peer_t peer, uint32_t key, uint64_t offset,
                const void *compare, const void *swap, void *result, int dtype,
                unsigned flags);
/* Lock the window at peer (enum pme_rma_lock_type): pending until granted. Unlock:
 * pending until released. */
int pme_rma_lock(pme_ep_t *ep, pme_peer_t peer, uint32_t key, int type);
int pme_rma_unlock(pme_ep_t *ep, pme_peer_t peer, uint32_t key);

/* Operations to peer (or to our own windows: PME_PEER_SELF) not complete yet. */
uint32_t pme_rma_pending(pme_ep_t *ep, pme_peer_t peer);
/* The first failure of an operation to peer since the last call (PME_ERR_RANGE,
 * PME_ERR_NOWIN, PME_ERR_PEER_DEAD, ...), or PME_OK; asking clears it. */
int pme_rma_error(pme_ep_t *ep, pme_peer_t peer);
/* The most bytes a put or accumulate may carry with a lock, and a fetching accumulate
 * at all: one frame's room to peer (until the first exchange with it, what the smallest
 * frames any peer may have take: 144). */
size_t pme_rma_frame_room(pme_ep_t *ep, pme_peer_t peer);
/* on: the caller is about to update exposed memory itself; until it calls again with 0
 * the liveness helper acts on no request (the caller's own progress still does). */
void pme_rma_exclusive(pme_ep_t *ep, int on);

/* Counters. Every field only grows. */
struct pme_counters {
    uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes, tx_errors;
    uint64_t tx_msgs, rx_msgs, tx_rndv, rx_rndv;
    uint64_t retransmits, rto_fired;
    uint64_t ack_tx, ack_rx, lose_tx, lose_rx, stop_tx, stop_rx, go_tx, go_rx;
    uint64_t credit_tx, credit_rx, credit_stalls, window_stalls;
    uint64_t tx_bundles;    /* bundles of small messages made (PME_COALESCE) */
    uint64_t tx_bundled;    /* messages that went in them */
    uint64_t rx_bundles;    /* bundles received and delivered */
    uint64_t drop_short, drop_foreign_key, drop_version, drop_crc, drop_not_mine,
             drop_out_of_order, drop_duplicate, drop_no_buffer, drop_unknown_peer,
             drop_bad_header;
    uint64_t drop_auth;     /* no MAC, or a wrong one, where one is required */
    uint64_t drop_replay;   /* an authentic frame seen before */
    uint64_t drop_stale;    /* from an old incarnation of the peer (or ahead of its HELLO) */
    uint64_t peers_failed, peers_closed, wait_spins, wait_sleeps, helper_passes;
    uint64_t rx_overruns;   /* frames the device's ring had no room for (sampled) */
    uint64_t rails_dropped; /* rails to peers given up (link down, or unanswered) */
    uint64_t rma_in;        /* one-sided requests this endpoint acted on as target */
    uint64_t rma_refused;   /* ... and refused (no such window, out of its bounds, bad op) */
    uint64_t rx_held;       /* frames that came after a gap, held until it filled */
    uint64_t hello_challenged; /* HELLOs of an incarnation of a peer we had not met,
                             * answered with a challenge before anything else (a peer's
                             * new process, or a HELLO replayed from another run) */
};
#define PME_COUNTER_NAMES(X) \
    X(tx_frames) X(tx_bytes) X(rx_frames) X(rx_bytes) X(tx_errors) \
    X(tx_msgs) X(rx_msgs) X(tx_rndv) X(rx_rndv) \
    X(retransmits) X(rto_fired) \
    X(ack_tx) X(ack_rx) X(lose_tx) X(lose_rx) X(stop_tx) X(stop_rx) X(go_tx) X(go_rx) \
    X(credit_tx) X(credit_rx) X(credit_stalls) X(window_stalls) \
    X(tx_bundles) X(tx_bundled) X(rx_bundles) \
    X(drop_short) X(drop_foreign_key) X(drop_version) X(drop_crc) X(drop_not_mine) \
    X(drop_out_of_order) X(drop_duplicate) X(drop_no_buffer) X(drop_unknown_peer) \
    X(drop_bad_header) X(drop_auth) X(drop_replay) X(drop_stale) \
    X(peers_failed) X(peers_closed) X(wait_spins) X(wait_sleeps) X(helper_passes) \
    X(rx_overruns) X(rails_dropped) X(rma_in) X(rma_refused) X(rx_held) \
    X(hello_challenged)

void pme_ep_counters(pme_ep_t *ep, struct pme_counters *c);
/* Frames through each interface the endpoint spans (rail k is interface k on a switched
 * network): interface i's name (the loop device has none: "") and its counts;
 * PME_ERR_INVAL past the last. */
struct pme_iface_counters {
    uint64_t tx_frames, rx_frames, retransmits;
};
int pme_ep_iface_counters(pme_ep_t *ep, unsigned i, char *name, size_t len,
                          struct pme_iface_counters *c);
/* A number that grows whenever a frame comes or goes: a caller tells an idle progress
 * pass from a busy one (a rendezvous moves many frames without an event) cheaply. */
uint64_t pme_ep_activity(pme_ep_t *ep);
int pme_peer_counters(pme_ep_t *ep, pme_peer_t peer, struct pme_counters *c);

/* Diagnostics: print the protocol state of every peer with work (sequence numbers,
 * window, credit, timers) to f, for bug reports. */
#include <stdio.h>
void pme_ep_dump(pme_ep_t *ep, FILE *f);

/* The receive pool: bytes holding received messages, bytes reserved as peers' eager
 * credit, and its size. */
void pme_ep_pool(pme_ep_t *ep, size_t *used, size_t *reserved, size_t *size);

/* Bytes of fixed state the endpoint keeps per peer (protocol state + counters). */
size_t pme_peer_state_bytes(void);

#ifdef __cplusplus
}
#endif
#endif /* PME_H */
