/*
 * netlock.p4: the NetLock data plane (NetLock, SIGCOMM'20, sections 4.2-4.4, Algorithms 1-2) for
 * the v1model architecture, with IPv4 routing for all other traffic of the rack.
 *
 * docs/dataplane.md is the reference for this program: the packet formats (docs/protocol.md),
 * the register layout, the passes each operation takes, the Tofino stage mapping and the control
 * interface (tables, admin packets). Go constants for every name used here are in the dataplane
 * package.
 *
 * Structure. Every pipeline pass runs the same ingress: classify the packet, look up the rack
 * configuration, the lock and its server, then run one "pass type" (meta.w.phase). A pass type is
 * a sequence of register actions in a fixed order, each register array used by at most one action
 * in a pass (the engine's Tofino-constraint mode checks this), and each action's decision only
 * uses values of registers earlier in the order (so the order is a Tofino stage order, see
 * docs/dataplane.md). Work that needs a second access to an array (the next slot of a queue)
 * continues in a resubmitted pass, which carries its state in meta.w (@field_list(1)).
 *
 * Each pass emits at most one answer as the packet itself (meta.p) and at most one as an
 * ingress-to-egress clone (meta.c, @field_list(2)), rewritten in egress. At most one of them goes
 * to a host through ipv4_lpm (a table is applied once per pass); answers to a lock's server use
 * the server table, answers to the controller the CPU port.
 */
#include <core.p4>
#include <v1model.p4>

/* ---- Sizing: override with -D (netlock p4 check -D NETLOCK_LOCKS=64 ...). ---- */
#ifndef NETLOCK_LOCKS
#define NETLOCK_LOCKS 16384          /* per-lock state entries (lock_table indices) */
#endif
#ifndef NETLOCK_PART_BITS
#define NETLOCK_PART_BITS 15         /* log2 of the slots in each of the 4 pool parts */
#endif
#ifndef NETLOCK_TENANT_METERS
#define NETLOCK_TENANT_METERS 1024
#endif
#ifndef NETLOCK_ENDED
#define NETLOCK_ENDED 65536          /* cells of the table of ended requests */
#endif
#ifndef CPU_PORT
#define CPU_PORT 255
#endif
#if NETLOCK_PART_BITS > 16
#error NETLOCK_PART_BITS must be at most 16 (region offsets are 16 bits)
#endif

/* The slot pool is 4 parts of 2^NETLOCK_PART_BITS slots: slot s lives in part s >> PART_BITS at
 * index s & PART_MASK. A fencing token is (seq << SLOT_BITS) | slot. */
#define SLOT_BITS (NETLOCK_PART_BITS + 2)
#define PART_SLOTS (32w1 << NETLOCK_PART_BITS)
#define PART_MASK (PART_SLOTS - 1)

/* ---- Protocol constants (docs/protocol.md, wire/wire.go). ---- */
const bit<16> NL_PORT = 8888;
const bit<8> NL_VERSION = 1;

/* standard_metadata.instance_type of a resubmitted packet (bmv2's PKT_INSTANCE_TYPE_RESUBMIT). */
const bit<32> PKT_INSTANCE_RESUBMIT = 6;

const bit<8> OP_ACQUIRE  = 0;
const bit<8> OP_RELEASE  = 1;
const bit<8> OP_PUSHBACK = 2;
const bit<8> OP_GRANT    = 3;
const bit<8> OP_REJECT   = 4;
const bit<8> OP_OVERFLOW = 5;
const bit<8> OP_QEMPTY   = 6;
const bit<8> OP_PROBE    = 7;
const bit<8> OP_ADMIN    = 8;

const bit<8> MODE_S = 0;
const bit<8> MODE_X = 1;

const bit<8> FL_REPLY = 1;
const bit<8> FL_RETRY = 2;
const bit<8> FL_TRY   = 4;
const bit<8> FL_FWD   = 8;
/* A batch of several headers (docs/protocol.md, "Batches"): only between a client and a server it
 * reaches directly. The switch reads one header, so it drops a batch as malformed. */
const bit<8> FL_BATCH = 0x20;

const bit<8> ST_QUOTA      = 1;
const bit<8> ST_WOULDBLOCK = 2;
const bit<8> ST_NOTHOLDER  = 3;
const bit<8> ST_LEASEEXP   = 4;
const bit<8> ST_BADREQ     = 8;

/* Switch admin sub-operations (the status byte of an admin packet; wire.AdminSwitch*). */
const bit<8> ADM_PROBE        = 16;
const bit<8> ADM_RESET        = 17;
const bit<8> ADM_FORCE        = 18;
const bit<8> ADM_TOKEN_BASE   = 19;
const bit<8> ADM_GET_COOKIE   = 20;
const bit<8> ADM_SET_COOKIE   = 21;
const bit<8> ADM_SET_BUFFERED = 22;

/* Admin results (nl_admin_t.result). */
const bit<8> AR_OK      = 0;
const bit<8> AR_NOLOCK  = 1;
const bit<8> AR_NOTHELD = 2;
const bit<8> AR_BADREQ  = 3;

/* Drop reasons: indices of the nl_drops counter (dataplane.Drop*). */
const bit<32> DR_MALFORMED     = 0;  /* UDP to port 8888 without a valid netlock header */
const bit<32> DR_CHECKSUM      = 1;  /* IPv4 header checksum wrong */
const bit<32> DR_PUSHBACK_KEY  = 2;  /* push-back to the switch without the rack key */
const bit<32> DR_ADMIN_PORT    = 3;  /* switch admin packet from a port other than the CPU port */
const bit<32> DR_ADMIN_KEY     = 4;  /* switch admin packet from the CPU port without the rack key */
const bit<32> DR_PUSHBACK_LOCK = 5;  /* push-back for a lock that is not in the switch */
const bit<32> DR_NO_ROUTE      = 6;  /* no route for a packet or an answer */
const bit<32> DR_TTL           = 7;  /* TTL expired */

/* Slot states (s_flags[63:56]). Zero is "done": a fresh pool is all done. A withdrawn waiter's
 * slot is marked apart from a released holder's: gnext may still point at it (never at a
 * released one), and must follow the head past it. */
const bit<8> SS_DONE    = 0;
const bit<8> SS_LIVE    = 1;
const bit<8> SS_WDRAWN  = 2;

/* Pass types (meta.w.phase). */
const bit<8> PH_FRESH = 0;   /* a packet as received */
const bit<8> PH_ACQ   = 1;   /* acquire after a try check or a retry walk that found nothing */
const bit<8> PH_RWALK = 2;   /* retry walk: look for the txn in the occupied slots */
const bit<8> PH_GRANT = 3;   /* grant walk: grant waiters from the first one on */
const bit<8> PH_CLEAN = 4;   /* move the head over done slots */
const bit<8> PH_WDRAW = 5;   /* withdrawal walk: find a waiting txn among the waiters */

/* meta.w.flags */
const bit<8> WF_ACKED     = 1;   /* the answer to the sender went out already */
const bit<8> WF_NOMETER   = 2;   /* the tenant meter ran already (or must not run) */
const bit<8> WF_RETRYMISS = 4;   /* a retry whose request is not in the switch queue (a new acquire) */
const bit<8> WF_DUP       = 16;  /* an acquire without the retry flag the switch saw before: a duplicate */
const bit<8> WF_FORCED    = 8;   /* admin force-release */

/* ---- Headers ---- */
@controller_header("packet_out")
header packet_out_t {
    bit<8> kind;          /* 0: a netlock admin frame follows; 1: send the frame on egress_port */
    bit<9> egress_port;
    bit<7> pad;
}

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> reason;        /* 1: admin reply */
}

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> src;
    bit<32> dst;
}

header udp_t {
    bit<16> src;
    bit<16> dst;
    bit<16> len;
    bit<16> csum;
}

/* The 48-byte netlock header (docs/protocol.md "Layout"). */
header nl_t {
    bit<8>  version;
    bit<8>  op;
    bit<8>  mode;
    bit<8>  flags;
    bit<8>  status;
    bit<8>  prio;
    bit<16> tenant;
    bit<32> lock;
    bit<64> txn;
    bit<64> token;
    bit<64> ts;
    bit<32> lease;
    bit<32> cip;
    bit<16> cport;
    bit<16> slots;
}

/* The authentication trailer of control messages (push-back, overflow, queue-empty, admin). */
header nl_auth_t {
    bit<64> key;
}

/* The body of a switch admin packet, after the trailer (docs/dataplane.md "Admin packets"). */
header nl_admin_t {
    bit<8>  result;
    bit<8>  level;
    bit<16> offset;
    bit<64> value;
    bit<32> now;
    bit<16> holders;
    bit<8>  xheld;
    bit<8>  sstate;
    bit<16> xwait0;
    bit<16> xwait;
    bit<16> wait0;
    bit<16> wait1;
    bit<16> used0;
    bit<16> used1;
    bit<16> buffered;
    bit<16> done;
    bit<16> head;
    bit<16> tail;
    bit<16> gnext;
    bit<16> size;
    bit<32> slot;
    bit<32> gts;
}

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
    udp_t        udp;
    nl_t         nl;
    nl_auth_t    auth;
    nl_admin_t   admin;
}

/* ---- Metadata ---- */

/* State carried from one pass to the next (resubmit field list 1). */
struct walk_t {
    bit<8>  phase;
    bit<8>  level;   /* the level the walk is at */
    bit<16> cur;     /* slot offset in that level's region */
    bit<16> left;    /* live slots still to examine */
    bit<16> steps;   /* slots the walk may still visit (a bound against corrupted counts) */
    bit<8>  flags;
    bit<8>  pclean;  /* 1: clean level clevel when the grant walk ends */
    bit<8>  clevel;
    bit<16> cleft;   /* occupied slots of clevel from its head */
    bit<8>  cadv;    /* 1: the head of clevel moves one slot before this clean pass */
}

/* An answer: a packet the pass sends (the packet itself, or a clone rewritten in egress). */
struct ans_t {
    bit<8>  valid;
    bit<8>  routed;  /* 1: to a host, MACs and port from ipv4_lpm */
    bit<8>  auth;    /* 1: carries the rack key */
    bit<9>  port;
    bit<48> smac;
    bit<48> dmac;
    bit<32> sip;
    bit<32> dip;
    bit<16> sport;
    bit<16> dport;
    bit<8>  op;
    bit<8>  mode;
    bit<8>  flags;
    bit<8>  status;
    bit<8>  prio;
    bit<16> tenant;
    bit<32> lock;
    bit<64> txn;
    bit<64> token;
    bit<64> ts;
    bit<32> lease;
    bit<32> cip;
    bit<16> cport;
    bit<16> slots;
    bit<64> key;
}

/* One access to the slot pool: the ops say which arrays are used (0: not used). */
struct slot_io_t {
    bit<2>  part;
    bit<32> idx;
    bit<8>  f_op;
    bit<8>  x_op;
    bit<8>  w_op;
    bit<8>  t_op;
    bit<8>  h_op;
    /* inputs */
    bit<8>  n_mode;
    bit<8>  n_prio;
    bit<8>  n_fwd;
    bit<32> n_lease;
    bit<64> n_txn;
    bit<32> n_ip;
    bit<16> n_port;
    bit<16> n_tenant;
    bit<64> n_ts;
    bit<32> n_seq;
    bit<32> n_gts;
    bit<32> chk_seq;
    bit<8>  pre_ok;  /* the checks before the slot (floor) passed */
    bit<8>  cond;    /* write condition decided before the access (e.g. grant) */
    /* outputs */
    bit<8>  state;
    bit<8>  mode;
    bit<8>  prio;
    bit<8>  fwd;
    bit<32> lease;
    bit<64> txn;
    bit<8>  txn_ok;
    bit<32> ip;
    bit<16> port;
    bit<16> tenant;
    bit<64> ts;
    bit<32> seq;
    bit<32> gts;
    bit<8>  valid;   /* release/probe validation result */
}

/* One access to a level's queue pointers. */
struct lev_io_t {
    bit<8>  h_op;
    bit<8>  t_op;
    bit<8>  g_op;
    bit<16> size;
    bit<16> arg;     /* input offset (release slot, gnext value) */
    bit<8>  cond;
    bit<16> head;    /* outputs */
    bit<16> tail;
    bit<16> gnext;
    bit<8>  adv;     /* the head moved */
}

struct metadata_t {
    @field_list(1) walk_t w;
    @field_list(2) ans_t c;
    /* The port the packet came in on and the instant it did, kept across resubmits: bmv2 resets
     * the metadata of a resubmitted packet, standard_metadata too (its ingress_port and
     * ingress_global_timestamp are 0), all but the fields of the field list. */
    @field_list(1) bit<9>  in_port;
    @field_list(1) bit<32> now;
    ans_t   p;
    bit<8>  p_echo;  /* 1: meta.p answers a client's own lock packet, written over it */
    slot_io_t sl;
    lev_io_t  lv;    /* the level being worked on */
    lev_io_t  lo;    /* the other level (gnext reads) */
    /* rack */
    bit<8>  rack_ok;
    bit<64> key;
    bit<32> sw_ip;
    bit<48> sw_mac;
    bit<32> def_lease;
    bit<32> max_lease;
    /* lock */
    bit<8>  hit;
    bit<8>  paused;
    bit<32> idx;
    bit<32> left0;
    bit<16> size0;
    bit<32> left1;
    bit<16> size1;
    bit<16> server;
    bit<8>  srv_ok;
    bit<32> srv_ip;
    bit<16> srv_udp;
    bit<9>  srv_port;
    bit<48> srv_mac;
    /* classification */
    bit<8>  kind;
    bit<8>  level;       /* level of this pass's work */
    bit<32> left;        /* that level's region */
    bit<16> size;
    bit<32> rq_ip;       /* the requester (the client, also for forwarded requests) */
    bit<16> rq_port;
    bit<8>  rq_fwd;
    bit<32> lease;       /* the lease this request gets */
    bit<32> tslot;       /* from the request's token */
    bit<64> tseq;
    bit<8>  tlevel;      /* 0, 1, or 2 when the slot is in neither region */
    /* register action results */
    bit<8>  ov;
    bit<8>  grant;
    bit<8>  compat;
    bit<16> nhold;
    bit<8>  xheld;
    bit<16> wx0;
    bit<16> wxall;
    bit<32> w0;
    bit<32> w1;
    bit<16> used0;
    bit<16> used1;
    bit<16> buf;
    bit<16> done;
    bit<64> seq;
    bit<64> floor;
    bit<16> off;
    bit<8>  found;
    bit<8>  ended_hit;   /* the request ended (ended table) */
    bit<8>  expired_hit; /* the request ended by force-release: its lease ran out (ended table) */
    bit<8>  dup_hit;     /* the request was seen and has not ended (ended table) */
    bit<8>  meter_color;
    bit<8>  quota;
    bit<32> route_dst;
    bit<8>  nh_ok;
    bit<48> nh_smac;
    bit<48> nh_dmac;
    bit<9>  nh_port;
    bit<8>  resub;
    bit<8>  drop;
}

/* Packet kinds (meta.kind). */
const bit<8> K_ROUTE = 0;    /* ordinary traffic */
const bit<8> K_LOCK  = 1;    /* acquire, release or lease-probe */
const bit<8> K_PB    = 2;    /* push-back to the switch */
const bit<8> K_ADMIN = 3;    /* switch admin from the CPU port */

/* Pass types (the ingress apply block runs one per pass). */
const bit<8> PT_NONE   = 0;    /* not a lock operation (routed) */
const bit<8> PT_ACQ    = 1;    /* take a slot (acquire, push-back, try commit) */
const bit<8> PT_TRY    = 2;    /* check a try acquire */
const bit<8> PT_RWALK  = 3;    /* retry walk */
const bit<8> PT_REL    = 4;    /* release or admin force-release (first pass) */
const bit<8> PT_GRANT  = 5;    /* grant walk */
const bit<8> PT_CLEAN  = 6;    /* clean walk */
const bit<8> PT_WD0    = 7;    /* withdrawal, first pass */
const bit<8> PT_WD     = 8;    /* withdrawal walk */
const bit<8> PT_PROBE  = 9;    /* lease-probe */
const bit<8> PT_ADMIN  = 10;   /* admin, one pass */
const bit<8> PT_BADREQ = 11;   /* an acquire without a txn */
const bit<8> PT_PBNULL = 12;   /* a push-back without a request */

/* What ipv4_lpm looks up in a pass. */
const bit<8> RSEL_NONE   = 0;
const bit<8> RSEL_PACKET = 1;  /* the packet itself, routed */
const bit<8> RSEL_P      = 2;  /* the answer sent as the packet (meta.p) */
const bit<8> RSEL_C      = 3;  /* the answer sent as a clone (meta.c) */

/* ---- Parser ---- */
parser NetlockParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t sm) {
    state start {
        transition select(sm.instance_type) {
            PKT_INSTANCE_RESUBMIT: port_known;   /* meta.in_port and meta.now kept (field list 1) */
            default: first_pass;
        }
    }
    state first_pass {
        meta.in_port = sm.ingress_port;
        meta.now = sm.ingress_global_timestamp[31:0];
        transition port_known;
    }
    state port_known {
        transition select(meta.in_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition select(hdr.packet_out.kind) {
            0: parse_ethernet;
            default: accept;
        }
    }
    state parse_ethernet {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, 17): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst) {
            NL_PORT: parse_nl;
            default: accept;
        }
    }
    state parse_nl {
        pkt.extract(hdr.nl);
        transition select(hdr.nl.op) {
            OP_PUSHBACK: parse_auth;
            OP_OVERFLOW: parse_auth;
            OP_QEMPTY: parse_auth;
            OP_ADMIN: parse_auth_admin;
            default: accept;
        }
    }
    state parse_auth {
        pkt.extract(hdr.auth);
        transition accept;
    }
    state parse_auth_admin {
        pkt.extract(hdr.auth);
        transition select(hdr.nl.status) {
            16 .. 31: parse_admin;
            default: accept;
        }
    }
    state parse_admin {
        pkt.extract(hdr.admin);
        transition accept;
    }
}

control NetlockVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

/* ---- The slot pool ----
 * One part of the pool: 2^NETLOCK_PART_BITS slots, five 64-bit arrays per slot (40 bytes):
 *   s_flags  [63:56] state, [55:48] mode, [47:40] priority, [39:32] forwarded, [31:0] lease (us)
 *   s_txn    txn
 *   s_who    [63:32] client IPv4, [31:16] client UDP port, [15:0] tenant
 *   s_ts     the request's timestamp (echoed in grants)
 *   s_hold   [63:32] grant sequence number (low 32 bits; 0 while waiting), [31:0] grant time (us)
 * The arrays are used in the order txn, hold, flags, who, ts (a release validates the grant
 * number in s_hold before it marks the slot done in s_flags).
 */
control SlotPart(inout slot_io_t io) {
    register<bit<64>>(PART_SLOTS) s_txn;
    register<bit<64>>(PART_SLOTS) s_flags;
    register<bit<64>>(PART_SLOTS) s_who;
    register<bit<64>>(PART_SLOTS) s_ts;
    register<bit<64>>(PART_SLOTS) s_hold;

    /* Every access returns the cell as it is after the access. */

    /* x_op: 1 read, 2 write. txn_ok: the cell held n_txn before the access. */
    action txn_access() {
        bit<64> v;
        s_txn.read(v, io.idx);
        io.txn_ok = (v == io.n_txn) ? 8w1 : 8w0;
        if (io.x_op == 2) {
            v = io.n_txn;
        }
        s_txn.write(io.idx, v);
        io.txn = v;
    }
    /* h_op: 1 read, 2 write, 3 validate and clear (release), 4 validate and touch (probe),
     *       5 write if cond (grant). Valid: the floor check passed, the txn matched and the
     *       cell holds the grant number chk_seq (not 0: a waiter's). */
    action hold_access() {
        bit<64> v;
        s_hold.read(v, io.idx);
        if (io.h_op == 3 || io.h_op == 4) {
            if (io.pre_ok == 1 && io.txn_ok == 1 && v[63:32] == io.chk_seq && v[63:32] != 0) {
                io.valid = 1;
            }
        }
        if (io.h_op == 2 || (io.h_op == 5 && io.cond == 1)) {
            v = io.n_seq ++ io.n_gts;
        } else if (io.h_op == 3 && io.valid == 1) {
            v[63:32] = 0;
        } else if (io.h_op == 4 && io.valid == 1) {
            v[31:0] = io.n_gts;
        }
        s_hold.write(io.idx, v);
        io.seq = v[63:32];
        io.gts = v[31:0];
    }
    /* f_op: 1 read, 2 write (enqueue), 3 done if valid (release), 4 lease if valid and n_lease
     *       is not 0 (probe), 5 withdrawn if live and the txn matched (sets valid) */
    action flags_access() {
        bit<64> v;
        s_flags.read(v, io.idx);
        if (io.f_op == 2) {
            v = SS_LIVE ++ io.n_mode ++ io.n_prio ++ io.n_fwd ++ io.n_lease;
        } else if (io.f_op == 3 && io.valid == 1) {
            v[63:56] = SS_DONE;
        } else if (io.f_op == 4 && io.valid == 1 && io.n_lease != 0) {
            v[31:0] = io.n_lease;
        } else if (io.f_op == 5 && v[63:56] == SS_LIVE && io.txn_ok == 1) {
            v[63:56] = SS_WDRAWN;
            io.valid = 1;
        }
        s_flags.write(io.idx, v);
        io.state = v[63:56];
        io.mode = v[55:48];
        io.prio = v[47:40];
        io.fwd = v[39:32];
        io.lease = v[31:0];
    }
    /* w_op: 1 read, 2 write */
    action who_access() {
        bit<64> v;
        s_who.read(v, io.idx);
        if (io.w_op == 2) {
            v = io.n_ip ++ io.n_port ++ io.n_tenant;
        }
        s_who.write(io.idx, v);
        io.ip = v[63:32];
        io.port = v[31:16];
        io.tenant = v[15:0];
    }
    /* t_op: 1 read, 2 write, 3 write if valid and n_ts is not 0 (probe) */
    action ts_access() {
        bit<64> v;
        s_ts.read(v, io.idx);
        if (io.t_op == 2 || (io.t_op == 3 && io.valid == 1 && io.n_ts != 0)) {
            v = io.n_ts;
        }
        s_ts.write(io.idx, v);
        io.ts = v;
    }
    apply {
        if (io.x_op != 0) { txn_access(); }
        if (io.h_op != 0) { hold_access(); }
        if (io.f_op != 0) { flags_access(); }
        if (io.w_op != 0) { who_access(); }
        if (io.t_op != 0) { ts_access(); }
    }
}

/* The pool: four parts, one used per access. */
control Pool(inout slot_io_t io) {
    SlotPart() part0;
    SlotPart() part1;
    SlotPart() part2;
    SlotPart() part3;
    apply {
        if (io.part == 0) {
            part0.apply(io);
        } else if (io.part == 1) {
            part1.apply(io);
        } else if (io.part == 2) {
            part2.apply(io);
        } else {
            part3.apply(io);
        }
    }
}

/* A queue position: [14:0] the offset in the lock's region, [15] a lap bit that flips at each
 * wrap, so that equal offsets of different laps tell a full region (tail = head + size) from
 * an empty one (tail = head), and gnext = tail ("no waiter") from gnext = head. */
bit<16> qnext(in bit<16> x, in bit<16> size) {
    if ((x & 0x7fff) + 1 == size) {
        return (x & 0x8000) ^ 0x8000;
    }
    return x + 1;
}

/* ---- The queue pointers of one priority level, per lock (positions, see qnext). ----
 * h_op: 1 read, 2 advance if cond and arg == head (release at the head), 3 advance if cond
 *       (clean), 4 reset
 * t_op: 1 read, 2 enqueue if cond (output: the slot offset taken), 4 reset
 * g_op: 1 read, 2 set to arg if cond, 3 follow the head past a withdrawn slot (cond: the slot at
 *       head, given, was withdrawn), 4 reset,
 *       5 the slot after the tail just taken, if cond (a grant on arrival)
 */
control LevelQueue(inout lev_io_t io, in bit<32> idx) {
    register<bit<16>>(NETLOCK_LOCKS) head;
    register<bit<16>>(NETLOCK_LOCKS) tail;
    register<bit<16>>(NETLOCK_LOCKS) gnext;

    action head_access() {
        bit<16> h;
        head.read(h, idx);
        bit<16> n = qnext(h, io.size);
        io.adv = 0;
        if (io.h_op == 2 && io.cond == 1 && io.arg == (h & 0x7fff)) {
            io.adv = 1;
        } else if (io.h_op == 3 && io.cond == 1) {
            io.adv = 1;
        }
        io.head = h;
        if (io.adv == 1) {
            h = n;
        } else if (io.h_op == 4) {
            h = 0;
        }
        head.write(idx, h);
        if (io.h_op == 3) {
            io.head = h;
        }
    }
    action tail_access() {
        bit<16> t;
        tail.read(t, idx);
        io.tail = t;
        if (io.t_op == 2 && io.cond == 1) {
            t = qnext(t, io.size);
        } else if (io.t_op == 4) {
            t = 0;
        }
        tail.write(idx, t);
    }
    action gnext_access() {
        bit<16> g;
        gnext.read(g, idx);
        if (io.g_op == 2 && io.cond == 1) {
            g = io.arg;
        } else if (io.g_op == 3 && io.cond == 1 && g == io.head) {
            /* The head passes a withdrawn waiter's slot, which gnext was on (gnext never
             * points at a released holder's slot). */
            g = qnext(g, io.size);
        } else if (io.g_op == 4) {
            g = 0;
        } else if (io.g_op == 5 && io.cond == 1) {
            g = qnext(io.tail, io.size);
        }
        gnext.write(idx, g);
        io.gnext = g;
    }
    apply {
        if (io.h_op != 0) { head_access(); }
        if (io.t_op != 0) { tail_access(); }
        if (io.g_op != 0) { gnext_access(); }
    }
}

/* Both levels: lv is the level worked on, lo the other one (used after lv). */
control Levels(inout lev_io_t lv, inout lev_io_t lo, in bit<8> level, in bit<32> idx) {
    LevelQueue() level0;
    LevelQueue() level1;
    apply {
        if (level == 0) {
            level0.apply(lv, idx);
            level1.apply(lo, idx);
        } else {
            level1.apply(lv, idx);
            level0.apply(lo, idx);
        }
    }
}

/* Rewrites the headers into an answer. */
control WriteAnswer(inout headers_t hdr, in ans_t a) {
    apply {
        hdr.packet_out.setInvalid();
        hdr.ethernet.setValid();
        hdr.ethernet.dst = a.dmac;
        hdr.ethernet.src = a.smac;
        hdr.ethernet.etherType = 0x0800;
        hdr.ipv4.setValid();
        hdr.ipv4.version = 4;
        hdr.ipv4.ihl = 5;
        hdr.ipv4.diffserv = 0;
        hdr.ipv4.identification = 0;
        hdr.ipv4.flags = 0;
        hdr.ipv4.fragOffset = 0;
        hdr.ipv4.ttl = 64;
        hdr.ipv4.protocol = 17;
        hdr.ipv4.hdrChecksum = 0;
        hdr.ipv4.src = a.sip;
        hdr.ipv4.dst = a.dip;
        hdr.udp.setValid();
        hdr.udp.src = a.sport;
        hdr.udp.dst = a.dport;
        hdr.udp.csum = 0;
        hdr.nl.setValid();
        hdr.nl.version = NL_VERSION;
        hdr.nl.op = a.op;
        hdr.nl.mode = a.mode;
        hdr.nl.flags = a.flags;
        hdr.nl.status = a.status;
        hdr.nl.prio = a.prio;
        hdr.nl.tenant = a.tenant;
        hdr.nl.lock = a.lock;
        hdr.nl.txn = a.txn;
        hdr.nl.token = a.token;
        hdr.nl.ts = a.ts;
        hdr.nl.lease = a.lease;
        hdr.nl.cip = a.cip;
        hdr.nl.cport = a.cport;
        hdr.nl.slots = a.slots;
        hdr.admin.setInvalid();
        if (a.auth == 1) {
            hdr.auth.setValid();
            hdr.auth.key = a.key;
            hdr.udp.len = 8 + 56;
            hdr.ipv4.totalLen = 20 + 8 + 56;
            truncate(14 + 20 + 8 + 56);
        } else {
            hdr.auth.setInvalid();
            hdr.udp.len = 8 + 48;
            hdr.ipv4.totalLen = 20 + 8 + 48;
            truncate(14 + 20 + 8 + 48);
        }
    }
}

control NetlockIngress(inout headers_t hdr, inout metadata_t meta,
                       inout standard_metadata_t sm) {
    /* ---- Per-lock state (index: the lock's index from lock_table) ----
     * lk_state [14:0] holders, [15] the holder is exclusive, [31:16] exclusive waiters at
     *          level 0, [47:32] exclusive waiters at all levels
     * lk_wait  [31:0] waiters at level 0, [63:32] waiters at level 1
     * lk_q     [15:0] occupied slots at level 0, [31:16] at level 1, [47:32] requests buffered
     *          at the server (q2), [63:48] done slots not yet passed by a head
     * lk_tok   the grant sequence counter: every grant takes the next number
     * lk_floor grants numbered at or below it are void (set by an admin reset)
     */
    register<bit<64>>(NETLOCK_LOCKS) lk_floor;
    register<bit<64>>(NETLOCK_LOCKS) lk_state;
    register<bit<64>>(NETLOCK_LOCKS) lk_wait;
    register<bit<64>>(NETLOCK_LOCKS) lk_tok;
    register<bit<64>>(NETLOCK_LOCKS) lk_q;
    register<bit<64>>(1) cookie;
    /* Requests seen and requests that ended (released, withdrawn, force-released): a
     * fingerprint of (lock, txn) at a hash of (lock, txn). A retransmitted acquire that is not in
     * the switch queue and is found here as ended is a late copy of a request that ended
     * (lockcore's "last released"), not a new one; one found force-released is told so. */
    register<bit<32>>(NETLOCK_ENDED) ended;

    meter(NETLOCK_TENANT_METERS, MeterType.packets) tenant_meter;
    counter(8, CounterType.packets) nl_drops;
    direct_counter(CounterType.packets) lock_hits;
    direct_counter(CounterType.packets_and_bytes) route_hits;

    Pool() pool;
    Levels() levels;
    WriteAnswer() write_answer;

    /* ---- Tables ---- */
    action rack_unset() {
        meta.rack_ok = 0;
    }
    action set_rack(@secret bit<64> key, bit<32> switch_ip, bit<48> switch_mac, bit<32> default_lease,
                    bit<32> max_lease) {
        meta.rack_ok = 1;
        meta.key = key;
        meta.sw_ip = switch_ip;
        meta.sw_mac = switch_mac;
        meta.def_lease = default_lease;
        meta.max_lease = max_lease;
    }
    /* The rack configuration: the control plane sets the default action. */
    table rack {
        key = { }
        actions = { set_rack; rack_unset; }
        default_action = rack_unset();
    }

    action lock_miss() {
        meta.hit = 0;
        lock_hits.count();
    }
    action lock_hit(bit<32> index, bit<32> left0, bit<16> size0, bit<32> left1, bit<16> size1,
                    bit<16> server) {
        meta.hit = 1;
        meta.paused = 0;
        meta.idx = index;
        meta.left0 = left0;
        meta.size0 = size0;
        meta.left1 = left1;
        meta.size1 = size1;
        meta.server = server;
        lock_hits.count();
    }
    /* As lock_hit, but new acquires go to the server's q2 (as overflow; the switch sends no
     * queue-empty for the lock, so they stay there) while the switch queue drains: the first
     * step of moving a lock out of the switch. */
    action lock_pause(bit<32> index, bit<32> left0, bit<16> size0, bit<32> left1, bit<16> size1,
                      bit<16> server) {
        lock_hit(index, left0, size0, left1, size1, server);
        meta.paused = 1;
    }
    /* Locks that live in the switch. A miss routes the request to its server unchanged. */
    table lock_table {
        key = { hdr.nl.lock : exact @name("lock"); }
        actions = { lock_hit; lock_pause; lock_miss; }
        default_action = lock_miss();
        counters = lock_hits;
        size = NETLOCK_LOCKS;
    }

    action set_server(bit<32> ip, bit<16> udp_port, bit<9> port, bit<48> mac) {
        meta.srv_ok = 1;
        meta.srv_ip = ip;
        meta.srv_udp = udp_port;
        meta.srv_port = port;
        meta.srv_mac = mac;
    }
    action server_unknown() {
        meta.srv_ok = 0;
    }
    /* The lock servers: where overflow and queue-empty go, and the address answers come from. */
    table lock_servers {
        key = { meta.server : exact @name("server"); }
        actions = { set_server; server_unknown; }
        default_action = server_unknown();
        size = 256;
    }

    action tenant_limit(bit<32> meter_index) {
        tenant_meter.execute_meter((bit<32>)meter_index, meta.meter_color);
        meta.quota = 1;
    }
    /* Per-tenant quota: a tenant with an entry is limited by its meter cell. */
    table tenant_quota {
        key = { hdr.nl.tenant : exact @name("tenant"); }
        actions = { tenant_limit; NoAction; }
        default_action = NoAction();
        size = NETLOCK_TENANT_METERS;
    }

    action route(bit<48> smac, bit<48> dmac, bit<9> port) {
        meta.nh_ok = 1;
        meta.nh_smac = smac;
        meta.nh_dmac = dmac;
        meta.nh_port = port;
        route_hits.count();
    }
    action no_route() {
        meta.nh_ok = 0;
        route_hits.count();
    }
    table ipv4_lpm {
        key = { meta.route_dst : lpm @name("dst"); }
        actions = { route; no_route; }
        default_action = no_route();
        counters = route_hits;
        size = 1024;
    }

    /* ---- Helpers ---- */
    action drop_count(bit<32> reason) {
        nl_drops.count(reason);
        mark_to_drop(sm);
        meta.drop = 1;
    }

    action use_level(bit<8> level) {
        meta.level = level;
        if (level == 0) {
            meta.left = meta.left0;
            meta.size = meta.size0;
        } else {
            meta.left = meta.left1;
            meta.size = meta.size1;
        }
        meta.lv.size = meta.size;
        if (level == 0) {
            meta.lo.size = meta.size1;
        } else {
            meta.lo.size = meta.size0;
        }
    }

    /* The lease this request gets: the default for 0, at most the maximum. */
    action lease_of() {
        if (hdr.nl.lease == 0) {
            meta.lease = meta.def_lease;
        } else if (hdr.nl.lease > meta.max_lease) {
            meta.lease = meta.max_lease;
        } else {
            meta.lease = hdr.nl.lease;
        }
    }

    /* The slot, grant number and level named by the request's token (releases, probes,
     * force-release); level 2: the slot is in neither region. */
    action token_slot() {
        meta.tslot = (bit<32>)(hdr.nl.token & ((64w1 << SLOT_BITS) - 1));
        meta.tseq = hdr.nl.token >> SLOT_BITS;
        if (meta.tslot >= meta.left0 && meta.tslot - meta.left0 < (bit<32>)meta.size0) {
            meta.tlevel = 0;
        } else if (meta.tslot >= meta.left1 && meta.tslot - meta.left1 < (bit<32>)meta.size1) {
            meta.tlevel = 1;
        } else {
            meta.tlevel = 2;
        }
    }

    /* Point the slot access at position pos of the current level's region. */
    action slot_at(bit<16> pos) {
        bit<32> s = meta.left + (bit<32>)(pos & 0x7fff);
        meta.sl.part = s[SLOT_BITS - 1:NETLOCK_PART_BITS];
        meta.sl.idx = s & PART_MASK;
        meta.tslot = s;
    }

    /* The token of a grant numbered seq32 (the low 32 bits the slot keeps) in slot: the high
     * bits are the counter's (meta.seq, read in this pass), less one if the low bits wrapped
     * since the grant (fewer than 2^32 grants of one lock while one holds it). */
    action token_of(out bit<64> token, bit<32> seq32, bit<32> slot) {
        bit<32> hi = meta.seq[63:32];
        if (seq32 > meta.seq[31:0]) {
            hi = hi - 1;
        }
        token = ((hi ++ seq32) << SLOT_BITS) | (bit<64>)slot;
    }

    /* Answers. The source of every answer to a client is the lock's server address. */
    action ans_to_client(inout ans_t a, bit<8> op, bit<32> ip, bit<16> port, bit<8> fwd) {
        a.valid = 1;
        a.routed = 1;
        a.auth = 0;
        a.sip = meta.srv_ip;
        a.sport = meta.srv_udp;
        a.dip = ip;
        a.dport = port;
        a.op = op;
        a.status = 0;
        a.flags = 0;
        a.cip = 0;
        a.cport = 0;
        if (fwd == 1) {
            a.flags = FL_FWD;
            a.cip = ip;
            a.cport = port;
        }
        a.lock = hdr.nl.lock;
        a.lease = 0;
        a.slots = 0;
    }
    /* An answer to the requester echoing the request (release ack, reject, probe reply). */
    action ans_echo(inout ans_t a, bit<8> op, bit<8> flags, bit<8> status) {
        ans_to_client(a, op, meta.rq_ip, meta.rq_port, meta.rq_fwd);
        a.flags = a.flags | flags;
        a.status = status;
        a.mode = hdr.nl.mode;
        a.prio = hdr.nl.prio;
        a.tenant = hdr.nl.tenant;
        a.txn = hdr.nl.txn;
        a.token = hdr.nl.token;
        a.ts = hdr.nl.ts;
    }
    /* An answer to a client's own lock packet (kind K_LOCK: sent by the requester, no
     * trailer): only what differs from the request is kept here, and the headers are rewritten
     * in place at the end of the pass (addresses swapped, op, flags, status, token, lease). */
    action ans_reply(bit<8> op, bit<8> flags, bit<8> status) {
        meta.p.valid = 1;
        meta.p.routed = 1;
        meta.p.dip = hdr.ipv4.src;
        meta.p_echo = 1;
        meta.p.op = op;
        meta.p.flags = flags;
        meta.p.status = status;
        meta.p.token = hdr.nl.token;
        meta.p.lease = 0;
    }
    /* An answer to the requester echoing the request, as the packet itself. */
    action ans_echo_p(bit<8> op, bit<8> flags, bit<8> status) {
        if (meta.kind == K_LOCK) {
            ans_reply(op, flags, status);
        } else {
            ans_echo(meta.p, op, flags, status);
        }
    }
    /* A grant to the request held in the slot just read (meta.sl). */
    action ans_grant_slot(inout ans_t a, bit<64> token) {
        ans_to_client(a, OP_GRANT, meta.sl.ip, meta.sl.port, meta.sl.fwd);
        a.mode = meta.sl.mode;
        a.prio = meta.sl.prio;
        a.tenant = meta.sl.tenant;
        a.txn = meta.sl.txn;
        a.token = token;
        a.ts = meta.sl.ts;
        a.lease = meta.sl.lease;
    }
    /* A control message to the lock's server. */
    action ans_to_server(inout ans_t a, bit<8> op) {
        a.valid = 1;
        a.routed = 0;
        a.auth = 1;
        a.key = meta.key;
        a.port = meta.srv_port;
        a.smac = meta.sw_mac;
        a.dmac = meta.srv_mac;
        a.sip = meta.sw_ip;
        a.sport = NL_PORT;
        a.dip = meta.srv_ip;
        a.dport = meta.srv_udp;
        a.op = op;
        a.mode = 0;
        a.flags = 0;
        a.status = 0;
        a.prio = 0;
        a.tenant = 0;
        a.lock = hdr.nl.lock;
        a.txn = 0;
        a.token = 0;
        a.ts = 0;
        a.lease = 0;
        a.cip = 0;
        a.cport = 0;
        a.slots = 0;
    }
    /* Queue-empty announces each level's free slots (q1 is empty, so its regions' sizes): level 0's
     * in slots, level 1's in lease. The server pushes back at most that many of each level, level 0
     * first (docs/protocol.md, "Overflow (q2)"). */
    action ans_queue_empty(inout ans_t a) {
        ans_to_server(a, OP_QEMPTY);
        a.slots = meta.size0;
        a.lease = (bit<32>)meta.size1;
    }
    action ans_overflow(inout ans_t a) {
        ans_to_server(a, OP_OVERFLOW);
        a.flags = FL_FWD;
        a.mode = hdr.nl.mode;
        a.prio = hdr.nl.prio;
        a.tenant = hdr.nl.tenant;
        a.txn = hdr.nl.txn;
        a.ts = hdr.nl.ts;
        a.lease = hdr.nl.lease;
        a.cip = meta.rq_ip;
        a.cport = meta.rq_port;
    }

    /* Resubmit this packet for another pass of type phase. */
    action again(bit<8> phase) {
        meta.w.phase = phase;
        meta.resub = 1;
    }

    /* ---- Per-lock register actions ----
     * Each is one register action: one read and at most one write of one cell. The op
     * argument selects what it computes, as a Tofino RegisterAction would. */

    /* lk_floor: 1 read, 2 set */
    action floor_access(bit<8> op, bit<64> value) {
        bit<64> v;
        lk_floor.read(v, meta.idx);
        if (op == 2) {
            v = value;
        }
        lk_floor.write(meta.idx, v);
        meta.floor = v;
    }

    /* lk_state ops: 1 read, 2 acquire, 3 release (if the slot was valid), 4 grant walk,
     * 5 withdrawal (if found), 6 reset. mode: the request's or the slot's mode. */
    action state_access(bit<8> op, bit<8> mode, bit<8> level, bit<8> cond) {
        bit<64> v;
        lk_state.read(v, meta.idx);
        bit<16> nhold = 1w0 ++ v[14:0];
        bit<8> xheld = 7w0 ++ v[15:15];
        bit<16> wx0 = v[31:16];
        bit<16> wxall = v[47:32];
        bit<16> isx0 = (mode == MODE_X && level == 0) ? 16w1 : 16w0;
        bit<16> isx = (mode == MODE_X) ? 16w1 : 16w0;
        if (mode == MODE_X) {
            meta.compat = (nhold == 0) ? 8w1 : 8w0;
        } else if (level == 0) {
            meta.compat = (xheld == 0 && wx0 == 0) ? 8w1 : 8w0;
        } else {
            meta.compat = (xheld == 0 && wxall == 0) ? 8w1 : 8w0;
        }
        meta.grant = 0;
        if (op == 2) {
            if (meta.compat == 1) {
                meta.grant = 1;
                nhold = nhold + 1;
                xheld = (mode == MODE_X) ? 8w1 : 8w0;
            } else {
                wx0 = wx0 + isx0;
                wxall = wxall + isx;
            }
        } else if (op == 3 && cond == 1) {
            nhold = nhold - 1;
            if (mode == MODE_X) {
                xheld = 0;
            }
        } else if (op == 4 && cond == 1) {
            /* The waiter at the walk's slot: a grant when compatible with the holders. (A
             * waiter is never blocked by another waiter here: the walk goes in queue order.) */
            if (mode == MODE_X) {
                meta.compat = (nhold == 0) ? 8w1 : 8w0;
            } else {
                meta.compat = (xheld == 0) ? 8w1 : 8w0;
            }
            if (meta.compat == 1) {
                meta.grant = 1;
                nhold = nhold + 1;
                xheld = (mode == MODE_X) ? 8w1 : 8w0;
                wx0 = wx0 - isx0;
                wxall = wxall - isx;
            }
        } else if (op == 5 && cond == 1) {
            wx0 = wx0 - isx0;
            wxall = wxall - isx;
        }
        if (op == 6) {
            v = 0;
        } else {
            v = 16w0 ++ wxall ++ wx0 ++ xheld[0:0] ++ nhold[14:0];
        }
        lk_state.write(meta.idx, v);
        meta.nhold = 1w0 ++ v[14:0];
        meta.xheld = 7w0 ++ v[15:15];
        meta.wx0 = v[31:16];
        meta.wxall = v[47:32];
    }

    /* lk_wait ops: 1 read, 2 enqueue a waiter if cond, 3 remove a waiter if cond (grant,
     * withdrawal), 6 reset */
    action wait_access(bit<8> op, bit<8> level, bit<8> cond) {
        bit<64> v;
        lk_wait.read(v, meta.idx);
        bit<32> w0 = v[31:0];
        bit<32> w1 = v[63:32];
        if (op == 2 && cond == 1) {
            if (level == 0) { w0 = w0 + 1; } else { w1 = w1 + 1; }
        } else if (op == 3 && cond == 1) {
            if (level == 0) { w0 = w0 - 1; } else { w1 = w1 - 1; }
        }
        if (op == 6) {
            v = 0;
        } else {
            v = w1 ++ w0;
        }
        lk_wait.write(meta.idx, v);
        meta.w0 = v[31:0];
        meta.w1 = v[63:32];
    }

    /* lk_tok ops: 1 read, 2 next grant number if cond, 3 raise to at least value */
    action tok_access(bit<8> op, bit<8> cond, bit<64> value) {
        bit<64> v;
        lk_tok.read(v, meta.idx);
        if (op == 2 && cond == 1) {
            v = v + 1;
            if (v[31:0] == 0) {
                v = v + 1;   /* slots keep the low 32 bits, and 0 there means "not granted" */
            }
        } else if (op == 3 && value > v) {
            v = value;
        }
        lk_tok.write(meta.idx, v);
        meta.seq = v;
    }

    /* lk_q ops: 1 read, 2 acquire (take a slot or overflow), 3 push-back (take a slot),
     * 4 release (cond: valid; meta.lv.adv: the head moved), 5 clean step (cond: the head slot
     * is done), 6 withdrawal (cond: found), 7 set buffered to value, 8 reset, 9 a push-back
     * without a request (the server did not buffer an overflow).
     * The buffered count is the number of overflows sent less the push-backs received, with or
     * without a request: the length of the server's q2 (docs/protocol.md, "Overflow (q2)"). */
    action q_access(bit<8> op, bit<8> level, bit<8> cond, bit<16> value) {
        bit<64> v;
        lk_q.read(v, meta.idx);
        bit<16> u0 = v[15:0];
        bit<16> u1 = v[31:16];
        bit<16> b = v[47:32];
        bit<16> d = v[63:48];
        bit<16> up = (level == 0) ? u0 : u1;
        meta.ov = 0;
        if (op == 2) {
            if (meta.paused == 1 || b > 0 || up >= meta.size) {
                meta.ov = 1;
                if (b != 0xffff) {
                    b = b + 1;
                }
            } else {
                up = up + 1;
            }
        } else if (op == 3) {
            if (up >= meta.size) {
                meta.ov = 1;
            } else {
                up = up + 1;
                b = (b > 0) ? b - 1 : 16w0;
            }
        } else if (op == 4 && cond == 1) {
            if (meta.lv.adv == 1) {
                up = up - 1;
            } else {
                d = d + 1;
            }
        } else if (op == 5 && cond == 1) {
            up = up - 1;
            d = d - 1;
        } else if (op == 6 && cond == 1) {
            d = d + 1;
        } else if (op == 7) {
            b = value;
        } else if (op == 9) {
            b = (b > 0) ? b - 1 : 16w0;
        }
        if (level == 0) { u0 = up; } else { u1 = up; }
        if (op == 8) {
            v = 0;
        } else {
            v = d ++ b ++ u1 ++ u0;
        }
        lk_q.write(meta.idx, v);
        meta.used0 = v[15:0];
        meta.used1 = v[31:16];
        meta.buf = v[47:32];
        meta.done = v[63:48];
    }

    /* ended: the requests seen, [31:2] fingerprint, [1:0] 0 seen (live), 1 ended (released or
     * withdrawn), 3 force-released (its lease ran out). op 1: look up (meta.ended_hit,
     * meta.expired_hit, meta.dup_hit) and record the request as seen unless it ended (an acquire
     * about to be handled); op 2: record the request as ended; op 3: as force-released.
     *
     * The cell is a CRC-32 of (lock, txn) modulo the table size, the fingerprint a CRC-32 of
     * (txn[31:0], lock, txn[63:32]). The two field lists must not be rotations of each other:
     * a CRC is linear, and the CRC-32 of (txn, lock) is an invertible linear function of the
     * CRC-32 of (lock, txn) for a fixed lock, so such a fingerprint adds nothing to the full
     * index hash: two txns of one lock sharing a cell of 65536 then shared the fingerprint with
     * probability 2^-16, not 2^-30, and a live request found another's "ended" (seen in
     * testbed/softrack, docs/dataplane.md "Resources"). With the txn's halves apart, the index hash
     * and the fingerprint are 64 independent linear functions of the txn (for one lock the pair
     * determines the txn; dataplane.TestEndedHashIndependent), so two requests of one lock
     * share cell and fingerprint with probability 2^-30 / NETLOCK_ENDED. A cell keeps the last
     * request hashed to it: a request is remembered until NETLOCK_ENDED or so later requests. */
    action ended_access(bit<8> op) {
        bit<32> i;
        hash(i, HashAlgorithm.crc32, 32w0, {hdr.nl.lock, hdr.nl.txn}, (bit<32>)NETLOCK_ENDED);
        bit<32> fp;
        hash(fp, HashAlgorithm.crc32, 32w0, {hdr.nl.txn[31:0], hdr.nl.lock, hdr.nl.txn[63:32]},
             33w0x100000000);
        fp = fp & 0xfffffffc;
        if (fp == 0) {
            fp = 4;   /* 0 is an empty cell */
        }
        bit<32> v;
        ended.read(v, i);
        meta.ended_hit = ((v & 0xfffffffd) == (fp | 1)) ? 8w1 : 8w0;
        meta.expired_hit = (v == (fp | 3)) ? 8w1 : 8w0;
        meta.dup_hit = (v == fp) ? 8w1 : 8w0;
        if (op == 1 && meta.ended_hit == 0) {
            v = fp;
        } else if (op == 2) {
            v = fp | 1;
        } else if (op == 3) {
            v = fp | 3;
        }
        ended.write(i, v);
    }

    action cookie_access(bit<8> op, bit<64> value) {
        bit<64> v;
        cookie.read(v, 0);
        if (op == 2) {
            v = value;
        }
        cookie.write(0, v);
        hdr.admin.value = v;
    }

    /* ---- Pool and level dispatch ---- */
    action slot_clear_ops() {
        meta.sl.f_op = 0;
        meta.sl.x_op = 0;
        meta.sl.w_op = 0;
        meta.sl.t_op = 0;
        meta.sl.h_op = 0;
    }
    action lev_clear_ops() {
        meta.lv.h_op = 0;
        meta.lv.t_op = 0;
        meta.lv.g_op = 0;
        meta.lo.h_op = 0;
        meta.lo.t_op = 0;
        meta.lo.g_op = 0;
    }

    apply {
        /* ================= classification ================= */
        if (hdr.packet_out.isValid() && hdr.packet_out.kind != 0) {
            /* A raw frame from the controller. */
            sm.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        if (hdr.ipv4.isValid() && sm.checksum_error == 1) {
            drop_count(DR_CHECKSUM);
            exit;
        }
        /* meta.kind is K_ROUTE (0) unless set below. */
        if (hdr.udp.isValid() && hdr.udp.dst == NL_PORT) {
            if (!hdr.nl.isValid() || sm.parser_error != error.NoError ||
                    hdr.nl.version != NL_VERSION || hdr.nl.op > OP_ADMIN || hdr.nl.mode > MODE_X ||
                    (hdr.nl.flags & FL_BATCH) != 0) {
                drop_count(DR_MALFORMED);
                exit;
            }
            rack.apply();
            if (hdr.nl.op == OP_ACQUIRE || hdr.nl.op == OP_RELEASE || hdr.nl.op == OP_PROBE) {
                if (meta.rack_ok == 1) {
                    meta.kind = K_LOCK;
                }
            } else if (hdr.nl.op == OP_PUSHBACK && meta.rack_ok == 1 && hdr.ipv4.dst == meta.sw_ip) {
                if (hdr.auth.key != meta.key) {
                    drop_count(DR_PUSHBACK_KEY);
                    exit;
                }
                meta.kind = K_PB;
            } else if (hdr.nl.op == OP_ADMIN && hdr.nl.status >= 16 && hdr.nl.status <= 31) {
                if (meta.in_port != CPU_PORT) {
                    drop_count(DR_ADMIN_PORT);
                    exit;
                }
                if (meta.rack_ok == 0 || hdr.auth.key != meta.key || !hdr.admin.isValid()) {
                    drop_count(DR_ADMIN_KEY);
                    exit;
                }
                meta.kind = K_ADMIN;
            }
        }
        if (meta.kind != K_ROUTE) {
            lock_table.apply();
            if (meta.hit == 1) {
                lock_servers.apply();
            }
            if (meta.kind == K_LOCK && (meta.hit == 0 || meta.srv_ok == 0)) {
                meta.kind = K_ROUTE;   /* not a switch lock: to its server, unchanged */
            } else if (meta.kind == K_PB && (meta.hit == 0 || meta.srv_ok == 0)) {
                drop_count(DR_PUSHBACK_LOCK);
                exit;
            }
        }

        /* ================= the pass type =================
         * Metadata is zero at the start of every pass (v1model; walk_t survives a resubmit). */
        bit<8> pt = PT_NONE;
        bit<8> ph = meta.w.phase;
        bit<8> op = hdr.nl.op;
        bit<8> st = hdr.nl.status;
        if (meta.kind != K_ROUTE) {
            /* The requester: the client, also for a pushed-back request. */
            if (meta.kind == K_PB) {
                meta.rq_ip = hdr.nl.cip;
                meta.rq_port = hdr.nl.cport;
                meta.rq_fwd = 1;
            } else {
                meta.rq_ip = hdr.ipv4.src;
                meta.rq_port = hdr.udp.src;
            }
            if (ph == PH_FRESH) {
                if (meta.kind == K_LOCK) {
                    if (op == OP_ACQUIRE) {
                        /* The accept log: the order in which the switch saw acquires of its
                         * locks (netlock switch --log-console and bmv2's log print it; tests
                         * check FIFO order with it). */
                        log_msg("netlock: acquire lock={} txn={} prio={}", {hdr.nl.lock, hdr.nl.txn, hdr.nl.prio});
                        if (hdr.nl.txn == 0) {
                            pt = PT_BADREQ;
                        } else if ((hdr.nl.flags & FL_RETRY) != 0 || (meta.w.flags & WF_DUP) != 0) {
                            pt = PT_RWALK;
                        } else if ((hdr.nl.flags & FL_TRY) != 0) {
                            pt = PT_TRY;
                        } else {
                            pt = PT_ACQ;
                        }
                    } else if (op == OP_RELEASE) {
                        if (hdr.nl.token != 0) {
                            pt = PT_REL;
                        } else {
                            pt = PT_WD0;
                        }
                    } else {
                        pt = PT_PROBE;
                    }
                } else if (meta.kind == K_PB) {
                    if (hdr.nl.txn == 0) {
                        pt = PT_PBNULL;
                    } else {
                        pt = PT_ACQ;
                    }
                } else if (st == ADM_FORCE && meta.hit == 1 && meta.srv_ok == 1) {
                    pt = PT_REL;
                    meta.w.flags = meta.w.flags | WF_FORCED;
                } else {
                    pt = PT_ADMIN;
                }
            } else if (ph == PH_GRANT) {
                pt = PT_GRANT;
            } else if (ph == PH_CLEAN) {
                pt = PT_CLEAN;
            } else if (ph == PH_WDRAW) {
                pt = PT_WD;
            } else if (meta.kind == K_LOCK && op == OP_ACQUIRE) {
                if (ph == PH_ACQ && (hdr.nl.flags & FL_TRY) != 0 &&
                        (meta.w.flags & (WF_RETRYMISS | WF_NOMETER)) == WF_RETRYMISS) {
                    pt = PT_TRY;   /* a retried try not in the queue: checked again, as a new try */
                } else if (ph == PH_ACQ) {
                    pt = PT_ACQ;
                } else if (ph == PH_RWALK) {
                    pt = PT_RWALK;
                }
            }
        }
        /* After this pass: grant walk, clean walk (set by the pass types below). */
        bit<8> walk = 0;
        bit<8> clean = 0;

        /* ================= acquire, push-back, try ================= */
        if (pt == PT_ACQ || pt == PT_TRY) {
            if (hdr.nl.prio == 0) { use_level(0); } else { use_level(1); }
            lease_of();
            /* Stage: a late copy of a request that ended (a datagram the network delayed or
             * duplicated) is ignored, a copy of one the switch saw and that has not ended is a
             * retransmission without the retry flag (a duplicated datagram): the retry walk looks
             * for it; then the tenant meter (a fresh acquire; not a retry or a copy, not the
             * commit of a try). */
            if (meta.kind == K_LOCK && ph == PH_FRESH) {
                ended_access(1);
            }
            if (meta.kind == K_LOCK && (meta.w.flags & (WF_NOMETER | WF_DUP)) == 0 &&
                    (hdr.nl.flags & FL_RETRY) == 0 && meta.ended_hit == 0 && meta.dup_hit == 0) {
                tenant_quota.apply();
            }
            if (meta.ended_hit == 1) {
                /* ignored: no answer */
            } else if (meta.dup_hit == 1) {
                meta.w.flags = meta.w.flags | WF_DUP;
                again(PH_FRESH);
            } else if (meta.quota == 1 && meta.meter_color != 0) {
                ans_echo_p(OP_REJECT, 0, ST_QUOTA);
            } else if (pt == PT_TRY) {
                /* A try: check without changing anything, commit in a second pass. */
                q_access(1, meta.level, 0, 0);
                state_access(1, hdr.nl.mode, meta.level, 0);
                bit<16> up = (meta.level == 0) ? meta.used0 : meta.used1;
                if (meta.paused == 1 || meta.buf > 0 || up >= meta.size || meta.compat == 0) {
                    ans_echo_p(OP_REJECT, 0, ST_WOULDBLOCK);
                } else {
                    meta.w.flags = meta.w.flags | WF_NOMETER;
                    again(PH_ACQ);
                }
            } else {
                /* Stage: take a slot or overflow. */
                if (meta.kind == K_PB) {
                    q_access(3, meta.level, 0, 0);
                } else {
                    q_access(2, meta.level, 0, 0);
                }
                if (meta.ov == 1) {
                    /* To the server's q2 (a push-back that does not fit goes back, too). No
                     * queue-empty here even if q1 is empty: one was sent when q1 drained with
                     * requests buffered, and a second would bring back more requests than q1
                     * has room for. */
                    ans_overflow(meta.p);
                    if (meta.kind == K_PB) {
                        /* A push-back goes back with the q2 number the server gave it (its
                         * token field), so that the server puts it back where it was and not
                         * behind the requests that overflowed after it (FIFO;
                         * docs/protocol.md, "Overflow (q2)"). */
                        meta.p.token = hdr.nl.token;
                    }
                } else {
                    /* Stages: grant or wait; the waiter count; the tail (and gnext on a grant);
                     * the grant number. */
                    state_access(2, hdr.nl.mode, meta.level, 0);
                    wait_access(2, meta.level, (meta.grant == 0) ? 8w1 : 8w0);
                    meta.lv.t_op = 2;
                    meta.lv.g_op = 5;
                    meta.lv.cond = 1;
                    if (meta.grant == 0) {
                        meta.lv.g_op = 0;
                    }
                    levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
                    tok_access(2, meta.grant, 0);
                    /* Stage: write the slot. */
                    slot_at(meta.lv.tail);
                    meta.sl.x_op = 2;
                    meta.sl.h_op = 2;
                    meta.sl.f_op = 2;
                    meta.sl.w_op = 2;
                    meta.sl.t_op = 2;
                    meta.sl.n_txn = hdr.nl.txn;
                    meta.sl.n_mode = hdr.nl.mode;
                    meta.sl.n_prio = hdr.nl.prio;
                    meta.sl.n_fwd = meta.rq_fwd;
                    meta.sl.n_lease = meta.lease;
                    meta.sl.n_ip = meta.rq_ip;
                    meta.sl.n_port = meta.rq_port;
                    meta.sl.n_tenant = hdr.nl.tenant;
                    meta.sl.n_ts = hdr.nl.ts;
                    meta.sl.n_seq = (meta.grant == 1) ? meta.seq[31:0] : 32w0;
                    meta.sl.n_gts = meta.now;
                    pool.apply(meta.sl);
                    if (meta.grant == 1) {
                        bit<64> token;
                        token_of(token, meta.seq[31:0], meta.tslot);
                        if (meta.kind == K_LOCK) {
                            ans_reply(OP_GRANT, 0, 0);
                            meta.p.token = token;
                            meta.p.lease = meta.lease;
                        } else {
                            ans_grant_slot(meta.p, token);
                        }
                    }
                    /* A waiter gets no answer now. */
                }
            }
        } else if (pt == PT_RWALK) {
            /* ================= retry walk =================
             * A retransmitted acquire: is the txn in an occupied slot of its level? A granted one
             * gets its grant again, a waiting one nothing; otherwise it is a new acquire. */
            if (hdr.nl.prio == 0) { use_level(0); } else { use_level(1); }
            if (ph == PH_FRESH) {
                q_access(1, meta.level, 0, 0);
                meta.lv.h_op = 1;
                levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
                meta.w.cur = meta.lv.head;
                meta.w.left = (meta.level == 0) ? meta.used0 : meta.used1;
            }
            if (meta.w.left == 0) {
                ended_access(1);
                if (meta.ended_hit == 0) {
                    meta.w.flags = meta.w.flags | WF_RETRYMISS;
                    again(PH_ACQ);
                } else if (meta.expired_hit == 1) {
                    ans_echo_p(OP_REJECT, 0, ST_LEASEEXP);
                }
            } else {
                tok_access(1, 0, 0);
                slot_at(meta.w.cur);
                meta.sl.x_op = 1;
                meta.sl.n_txn = hdr.nl.txn;
                meta.sl.h_op = 1;
                meta.sl.f_op = 1;
                meta.sl.w_op = 1;
                meta.sl.t_op = 1;
                pool.apply(meta.sl);
                if (meta.sl.state == SS_LIVE && meta.sl.txn_ok == 1) {
                    if (meta.sl.seq != 0) {
                        bit<64> token;
                        token_of(token, meta.sl.seq, meta.tslot);
                        ans_grant_slot(meta.p, token);
                    }
                    /* else: still waiting, nothing to say */
                } else {
                    meta.w.left = meta.w.left - 1;
                    meta.w.cur = qnext(meta.w.cur, meta.size);
                    if (meta.w.left == 0) {
                        /* Not in the switch queue: a late copy of a request that ended is
                         * ignored, anything else is a new acquire. A retransmission of a
                         * request that was force-released (its grant and the holder's notice
                         * lost, its lease ran out) gets the notice's answer again, reject
                         * lease-expired: its client is still waiting for it. */
                        ended_access(1);
                        if (meta.ended_hit == 0) {
                            meta.w.flags = meta.w.flags | WF_RETRYMISS;
                            again(PH_ACQ);
                        } else if (meta.expired_hit == 1) {
                            ans_echo_p(OP_REJECT, 0, ST_LEASEEXP);
                        }
                    } else {
                        again(PH_RWALK);
                    }
                }
            }
        } else if (pt == PT_REL) {
            /* ================= release (and admin force-release), first pass ================= */
            bit<8> forced = ((meta.w.flags & WF_FORCED) != 0) ? 8w1 : 8w0;
            token_slot();
            if (meta.tlevel == 2) {
                if (forced == 1) {
                    hdr.admin.result = AR_NOTHELD;
                } else {
                    ans_echo_p(OP_REJECT, 0, ST_NOTHOLDER);
                }
            } else {
                use_level(meta.tlevel);
                /* Stage: the floor; then the slot (txn, grant number: valid? clear it; done). */
                floor_access(1, 0);
                meta.sl.pre_ok = (meta.tseq > meta.floor) ? 8w1 : 8w0;
                slot_at((bit<16>)(meta.tslot - meta.left));
                meta.sl.x_op = 1;
                meta.sl.n_txn = hdr.nl.txn;
                meta.sl.h_op = 3;
                meta.sl.chk_seq = meta.tseq[31:0];
                meta.sl.f_op = 3;
                if (forced == 1) {
                    /* the old holder's address and timestamp, for its notice */
                    meta.sl.w_op = 1;
                    meta.sl.t_op = 1;
                }
                pool.apply(meta.sl);
                bit<8> valid = meta.sl.valid;
                /* Stages: holders; waiters (read); the head (moves if the slot was the head) and
                 * gnext (follows it); the other level's gnext; the slot counts. */
                state_access(3, meta.sl.mode, meta.level, valid);
                wait_access(1, meta.level, 0);
                meta.lv.h_op = 2;
                meta.lv.cond = valid;
                meta.lv.arg = (bit<16>)(meta.tslot - meta.left);
                meta.lv.g_op = 1;   /* a released slot was granted: gnext is past it already */
                meta.lo.g_op = 1;
                levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
                q_access(4, meta.level, valid, 0);
                if (valid == 1) {
                    /* ended: force-released requests apart (a retransmission is answered) */
                    ended_access(2 + forced);
                }
                if (valid == 0) {
                    if (forced == 1) {
                        hdr.admin.result = AR_NOTHELD;
                    } else {
                        ans_echo_p(OP_REJECT, 0, ST_NOTHOLDER);
                    }
                } else {
                    if (meta.nhold == 0 && meta.w0 + meta.w1 > 0) {
                        walk = 1;
                        if (meta.w0 > 0) {
                            meta.w.level = 0;
                        } else {
                            meta.w.level = 1;
                        }
                        if (meta.w.level == meta.level) {
                            meta.w.cur = meta.lv.gnext;
                        } else {
                            meta.w.cur = meta.lo.gnext;
                        }
                    }
                    if (meta.lv.adv == 1 && meta.done > 0) {
                        clean = 1;
                        meta.w.clevel = meta.level;
                        meta.w.cleft = (meta.level == 0) ? meta.used0 : meta.used1;
                        meta.w.cadv = 0;
                    }
                    if (forced == 1) {
                        /* Tell the old holder its lease ended (lockcore's expiry answer). */
                        bit<64> token = hdr.nl.token;
                        ans_grant_slot(meta.c, token);
                        meta.c.op = OP_REJECT;
                        meta.c.status = ST_LEASEEXP;
                        meta.c.lease = 0;
                        hdr.admin.result = AR_OK;
                    } else if (walk == 1 || clean == 1) {
                        ans_echo(meta.c, OP_RELEASE, FL_REPLY, 0);
                        meta.w.flags = meta.w.flags | WF_ACKED;
                    } else {
                        ans_echo_p(OP_RELEASE, FL_REPLY, 0);
                    }
                    if (walk == 0 && clean == 0) {
                        if (meta.used0 + meta.used1 == 0 && meta.buf > 0 && meta.paused == 0) {
                            if (forced == 1) {
                                /* The clone carries the holder's notice: a clean pass that
                                 * examines nothing sends queue-empty. */
                                clean = 1;
                                meta.w.clevel = meta.level;
                                meta.w.cleft = 0;
                                meta.w.cadv = 0;
                            } else {
                                ans_queue_empty(meta.c);
                            }
                        }
                    }
                }
            }
        } else if (pt == PT_GRANT) {
            /* ================= grant walk =================
             * One waiter per pass, in queue order (level 0 first): grant it when it is compatible
             * with the holders, skip it when it was withdrawn, stop otherwise. */
            use_level(meta.w.level);
            bit<16> c = meta.w.cur;
            /* Stage: the slot (read). */
            slot_at(c);
            meta.sl.x_op = 1;
            meta.sl.f_op = 1;
            meta.sl.w_op = 1;
            meta.sl.t_op = 1;
            pool.apply(meta.sl);
            bit<8> live = (meta.sl.state == SS_LIVE) ? 8w1 : 8w0;
            /* Stages: holders (grant if compatible); waiters; the grant number; the slot's
             * grant number and time; gnext of this level (past the slot if it was used), the
             * other level's gnext (read). */
            state_access(4, meta.sl.mode, meta.level, live);
            wait_access(3, meta.level, meta.grant);
            tok_access(2, meta.grant, 0);
            slot_clear_ops();
            meta.sl.h_op = 5;
            meta.sl.cond = meta.grant;
            meta.sl.n_seq = meta.seq[31:0];
            meta.sl.n_gts = meta.now;
            pool.apply(meta.sl);
            bit<8> used = (live == 0 || meta.grant == 1) ? 8w1 : 8w0;
            bit<16> nc = qnext(c, meta.size);
            meta.lv.g_op = 2;
            meta.lv.cond = used;
            meta.lv.arg = nc;
            meta.lo.g_op = 1;
            levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
            if (meta.grant == 1) {
                bit<64> token;
                token_of(token, meta.seq[31:0], meta.tslot);
                ans_grant_slot(meta.c, token);
            }
            if (used == 1 && (live == 0 || meta.sl.mode == MODE_S) && meta.w0 + meta.w1 > 0) {
                walk = 1;
                bit<8> nl = (meta.w0 > 0) ? 8w0 : 8w1;
                if (nl == meta.level) {
                    meta.w.cur = nc;
                } else {
                    meta.w.cur = meta.lo.gnext;
                }
                meta.w.level = nl;
            } else if (meta.w.pclean == 1) {
                clean = 1;
            } else {
            }
        } else if (pt == PT_CLEAN) {
            /* ================= clean walk =================
             * Move the head of a level over done slots (released out of order, or withdrawn), so
             * that they can be used again; the walk counts slots (cleft) from the head. */
            use_level(meta.w.clevel);
            meta.lv.h_op = 3;
            meta.lv.cond = meta.w.cadv;
            levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
            bit<16> h = meta.lv.head;
            bit<8> isdone = 0;
            bit<8> wdrawn = 0;
            if (meta.w.cleft > 0) {
                slot_at(h);
                meta.sl.f_op = 1;
                pool.apply(meta.sl);
                if (meta.sl.state != SS_LIVE) {
                    isdone = 1;
                }
                if (meta.sl.state == SS_WDRAWN) {
                    wdrawn = 1;
                }
            }
            q_access(5, meta.level, isdone, 0);
            lev_clear_ops();
            meta.lv.g_op = 3;
            meta.lv.cond = wdrawn;
            meta.lv.head = h;
            levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
            if (isdone == 1) {
                meta.w.cleft = meta.w.cleft - 1;
                meta.w.cadv = 1;
                meta.w.pclean = 0;
                clean = 1;
            } else {
                if (meta.used0 + meta.used1 == 0 && meta.buf > 0 && meta.paused == 0) {
                    ans_queue_empty(meta.c);
                }
            }
        } else if (pt == PT_WD0) {
            /* ================= withdrawal =================
             * A release with token 0: the txn withdraws its waiting request. The first pass reads
             * where the waiters of its level start; the walk looks at one slot per pass. */
            if (hdr.nl.prio == 0) { use_level(0); } else { use_level(1); }
            wait_access(1, meta.level, 0);
            meta.lv.g_op = 1;
            levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
            meta.w.left = (meta.level == 0) ? (bit<16>)meta.w0 : (bit<16>)meta.w1;
            meta.w.cur = meta.lv.gnext;
            meta.w.steps = meta.size;
            if (meta.w.left == 0) {
                ans_echo_p(OP_REJECT, 0, ST_NOTHOLDER);
            } else {
                again(PH_WDRAW);
            }
        } else if (pt == PT_WD) {
            if (hdr.nl.prio == 0) { use_level(0); } else { use_level(1); }
            bit<16> c = meta.w.cur;
            slot_at(c);
            meta.sl.x_op = 1;
            meta.sl.n_txn = hdr.nl.txn;
            meta.sl.f_op = 5;
            pool.apply(meta.sl);
            bit<8> found = meta.sl.valid;
            state_access(5, meta.sl.mode, meta.level, found);
            wait_access(3, meta.level, found);
            meta.lv.h_op = 1;
            meta.lv.g_op = 1;
            meta.lo.g_op = 1;
            levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
            q_access(6, meta.level, found, 0);
            if (found == 1) {
                ended_access(2);
                if (meta.xheld == 0 && meta.w0 + meta.w1 > 0) {
                    walk = 1;
                    if (meta.w0 > 0) { meta.w.level = 0; } else { meta.w.level = 1; }
                    if (meta.w.level == meta.level) {
                        meta.w.cur = meta.lv.gnext;
                    } else {
                        meta.w.cur = meta.lo.gnext;
                    }
                }
                if (c == meta.lv.head) {
                    clean = 1;
                    meta.w.clevel = meta.level;
                    meta.w.cleft = (meta.level == 0) ? meta.used0 : meta.used1;
                    meta.w.cadv = 0;
                }
                if (walk == 1 || clean == 1) {
                    ans_echo(meta.c, OP_RELEASE, FL_REPLY, 0);
                    meta.w.flags = meta.w.flags | WF_ACKED;
                } else {
                    ans_echo_p(OP_RELEASE, FL_REPLY, 0);
                }
            } else {
                if (meta.sl.state == SS_LIVE) {
                    meta.w.left = meta.w.left - 1;
                }
                meta.w.steps = meta.w.steps - 1;
                meta.w.cur = qnext(c, meta.size);
                if (meta.w.left == 0 || meta.w.steps == 0) {
                    ans_echo_p(OP_REJECT, 0, ST_NOTHOLDER);
                } else {
                    again(PH_WDRAW);
                }
            }
        } else if (pt == PT_PROBE) {
            /* ================= lease-probe ================= */
            lease_of();
            token_slot();
            if (meta.tlevel == 2) {
                ans_echo_p(OP_REJECT, 0, ST_NOTHOLDER);
            } else {
                use_level(meta.tlevel);
                floor_access(1, 0);
                meta.sl.pre_ok = (meta.tseq > meta.floor) ? 8w1 : 8w0;
                slot_at((bit<16>)(meta.tslot - meta.left));
                meta.sl.x_op = 1;
                meta.sl.n_txn = hdr.nl.txn;
                meta.sl.h_op = 4;
                meta.sl.chk_seq = meta.tseq[31:0];
                meta.sl.n_gts = meta.now;
                meta.sl.f_op = 4;
                meta.sl.n_lease = (hdr.nl.lease == 0) ? 32w0 : meta.lease;
                meta.sl.t_op = 3;
                meta.sl.n_ts = hdr.nl.ts;
                pool.apply(meta.sl);
                if (meta.sl.valid == 1) {
                    ans_echo_p(OP_PROBE, FL_REPLY, 0);
                    meta.p.lease = meta.sl.lease;
                } else {
                    ans_echo_p(OP_REJECT, 0, ST_NOTHOLDER);
                }
            }
        } else if (pt == PT_ADMIN) {
            /* ================= admin (one pass) ================= */
            hdr.admin.result = AR_OK;
            hdr.admin.now = meta.now;
            bit<8> needs_lock = 1;
            if (st == ADM_GET_COOKIE || st == ADM_SET_COOKIE) {
                needs_lock = 0;
            }
            if (needs_lock == 1 && (meta.hit == 0 || meta.srv_ok == 0)) {
                hdr.admin.result = AR_NOLOCK;
            } else if (st == ADM_PROBE) {
                if (hdr.admin.level > 1) {
                    hdr.admin.result = AR_BADREQ;
                } else {
                    use_level(hdr.admin.level);
                    state_access(1, 0, 0, 0);
                    wait_access(1, 0, 0);
                    tok_access(1, 0, 0);
                    q_access(1, meta.level, 0, 0);
                    meta.lv.h_op = 1;
                    meta.lv.t_op = 1;
                    meta.lv.g_op = 1;
                    levels.apply(meta.lv, meta.lo, meta.level, meta.idx);
                    hdr.admin.holders = meta.nhold;
                    hdr.admin.xheld = meta.xheld;
                    hdr.admin.xwait0 = meta.wx0;
                    hdr.admin.xwait = meta.wxall;
                    hdr.admin.wait0 = (bit<16>)meta.w0;
                    hdr.admin.wait1 = (bit<16>)meta.w1;
                    hdr.admin.used0 = meta.used0;
                    hdr.admin.used1 = meta.used1;
                    hdr.admin.buffered = meta.buf;
                    hdr.admin.done = meta.done;
                    hdr.admin.head = meta.lv.head;
                    hdr.admin.tail = meta.lv.tail;
                    hdr.admin.gnext = meta.lv.gnext;
                    hdr.admin.size = meta.size;
                    hdr.admin.value = meta.seq << SLOT_BITS;
                    if (meta.size == 0) {
                        hdr.admin.result = AR_BADREQ;
                    } else {
                        bit<32> o = (bit<32>)(meta.lv.head & 0x7fff) + (bit<32>)hdr.admin.offset;
                        if (o >= (bit<32>)meta.size) {
                            o = o - (bit<32>)meta.size;
                        }
                        slot_at((bit<16>)o);
                        meta.sl.x_op = 1;
                        meta.sl.h_op = 1;
                        meta.sl.f_op = 1;
                        meta.sl.w_op = 1;
                        meta.sl.t_op = 1;
                        pool.apply(meta.sl);
                        hdr.admin.sstate = meta.sl.state;
                        hdr.admin.slot = meta.tslot;
                        hdr.admin.gts = meta.sl.gts;
                        hdr.nl.txn = meta.sl.txn;
                        hdr.nl.mode = meta.sl.mode;
                        hdr.nl.prio = meta.sl.prio;
                        hdr.nl.tenant = meta.sl.tenant;
                        hdr.nl.ts = meta.sl.ts;
                        hdr.nl.lease = meta.sl.lease;
                        hdr.nl.cip = meta.sl.ip;
                        hdr.nl.cport = meta.sl.port;
                        if (meta.sl.seq != 0) {
                            bit<64> token;
                            token_of(token, meta.sl.seq, meta.tslot);
                            hdr.nl.token = token;
                        } else {
                            hdr.nl.token = 0;
                        }
                    }
                }
            } else if (st == ADM_RESET) {
                tok_access(1, 0, 0);
                floor_access(2, meta.seq);
                state_access(6, 0, 0, 0);
                wait_access(6, 0, 0);
                q_access(8, 0, 0, 0);
                meta.lv.h_op = 4;
                meta.lv.t_op = 4;
                meta.lv.g_op = 4;
                meta.lo.h_op = 4;
                meta.lo.t_op = 4;
                meta.lo.g_op = 4;
                levels.apply(meta.lv, meta.lo, 0, meta.idx);
                hdr.admin.value = meta.seq << SLOT_BITS;
            } else if (st == ADM_TOKEN_BASE) {
                tok_access(3, 0, hdr.admin.value >> SLOT_BITS);
                hdr.admin.value = meta.seq << SLOT_BITS;
            } else if (st == ADM_GET_COOKIE) {
                cookie_access(1, 0);
            } else if (st == ADM_SET_COOKIE) {
                cookie_access(2, hdr.admin.value);
            } else if (st == ADM_SET_BUFFERED) {
                q_access(7, 0, 0, (bit<16>)hdr.admin.value);
                if (meta.used0 + meta.used1 == 0 && meta.buf > 0 && meta.paused == 0) {
                    ans_queue_empty(meta.c);
                }
            } else {
                hdr.admin.result = AR_BADREQ;
            }
        } else if (pt == PT_BADREQ) {
            ans_echo_p(OP_REJECT, 0, ST_BADREQ);
        } else if (pt == PT_PBNULL) {
            /* A push-back without a request: an overflow the server did not buffer. */
            q_access(9, 0, 0, 0);
        }

        /* ================= what comes next ================= */
        if (walk == 1) {
            if (clean == 1 && pt != PT_GRANT) {
                meta.w.pclean = 1;   /* clean once the walk ends */
            }
            again(PH_GRANT);
        } else if (clean == 1) {
            again(PH_CLEAN);
        }

        /* ================= routing and answers ================= */
        /* ipv4_lpm is applied at one place (bmv2 gives a table one place in the control flow):
         * for routed traffic, or for the one answer of the pass that goes to a host. */
        bit<8> rsel = RSEL_NONE;
        if (meta.kind == K_ROUTE) {
            if (hdr.ipv4.isValid()) {
                meta.route_dst = hdr.ipv4.dst;
                rsel = RSEL_PACKET;
            }
        } else if (meta.p.valid == 1 && meta.p.routed == 1) {
            meta.route_dst = meta.p.dip;
            rsel = RSEL_P;
        } else if (meta.c.valid == 1 && meta.c.routed == 1) {
            meta.route_dst = meta.c.dip;
            rsel = RSEL_C;
        }
        if (rsel != RSEL_NONE) {
            ipv4_lpm.apply();
        }
        if (meta.kind == K_ROUTE) {
            if (rsel == RSEL_PACKET) {
                if (meta.nh_ok == 0) {
                    drop_count(DR_NO_ROUTE);
                } else if (hdr.ipv4.ttl <= 1) {
                    drop_count(DR_TTL);
                } else {
                    hdr.ethernet.src = meta.nh_smac;
                    hdr.ethernet.dst = meta.nh_dmac;
                    hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
                    sm.egress_spec = meta.nh_port;
                }
            } else {
                mark_to_drop(sm);
            }
        } else {
            /* At most one answer is routed per pass (one table application). */
            if (rsel == RSEL_P) {
                meta.p.smac = meta.nh_smac;
                meta.p.dmac = meta.nh_dmac;
                meta.p.port = meta.nh_port;
                if (meta.nh_ok == 0) {
                    meta.p.valid = 0;
                    nl_drops.count(DR_NO_ROUTE);
                }
            } else if (rsel == RSEL_C) {
                meta.c.smac = meta.nh_smac;
                meta.c.dmac = meta.nh_dmac;
                meta.c.port = meta.nh_port;
                if (meta.nh_ok == 0) {
                    meta.c.valid = 0;
                    nl_drops.count(DR_NO_ROUTE);
                }
            }
            if (meta.c.valid == 1) {
                /* Clone session N+1 sends to port N (the control plane creates one per port). */
                clone_preserving_field_list(CloneType.I2E, (bit<32>)meta.c.port + 1, 2);
            }
            if (meta.resub == 1) {
                resubmit_preserving_field_list(1);
                mark_to_drop(sm);
            } else if (meta.kind == K_ADMIN) {
                /* The reply to the controller. */
                hdr.nl.flags = hdr.nl.flags | FL_REPLY;
                hdr.admin.now = meta.now;
                hdr.packet_out.setInvalid();
                hdr.packet_in.setValid();
                hdr.packet_in.ingress_port = meta.in_port;
                hdr.packet_in.reason = 1;
                sm.egress_spec = CPU_PORT;
            } else if (meta.p.valid == 1 && meta.p_echo == 1) {
                /* The answer over the client's own request (ans_reply). */
                hdr.ethernet.src = meta.p.smac;
                hdr.ethernet.dst = meta.p.dmac;
                hdr.ipv4.dst = hdr.ipv4.src;
                hdr.ipv4.src = meta.srv_ip;
                hdr.ipv4.ttl = 64;
                hdr.ipv4.totalLen = 20 + 8 + 48;
                hdr.udp.dst = hdr.udp.src;
                hdr.udp.src = meta.srv_udp;
                hdr.udp.len = 8 + 48;
                hdr.udp.csum = 0;
                hdr.nl.op = meta.p.op;
                hdr.nl.flags = meta.p.flags;
                hdr.nl.status = meta.p.status;
                hdr.nl.token = meta.p.token;
                hdr.nl.lease = meta.p.lease;
                hdr.nl.cip = 0;
                hdr.nl.cport = 0;
                hdr.nl.slots = 0;
                truncate(14 + 20 + 8 + 48);
                sm.egress_spec = meta.p.port;
            } else if (meta.p.valid == 1) {
                write_answer.apply(hdr, meta.p);
                sm.egress_spec = meta.p.port;
            } else {
                mark_to_drop(sm);
            }
        }
    }
}

control NetlockEgress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t sm) {
    WriteAnswer() write_answer;
    apply {
        if (sm.instance_type == 1 && meta.c.valid == 1) {
            write_answer.apply(hdr, meta.c);
        }
    }
}

control NetlockComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control NetlockDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.nl);
        pkt.emit(hdr.auth);
        pkt.emit(hdr.admin);
    }
}

V1Switch(NetlockParser(), NetlockVerifyChecksum(), NetlockIngress(), NetlockEgress(),
         NetlockComputeChecksum(), NetlockDeparser()) main;
