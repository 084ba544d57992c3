/*
 * p4/tna/netlock.p4: the NetLock data plane (NetLock, SIGCOMM'20, sections 4.2-4.4, Algorithms
 * 1-2) for Tofino, in P4_16 for the Tofino Native Architecture (TNA), with IPv4 routing for all
 * other traffic of the rack.
 *
 * It is p4/netlock.p4 (v1model) written the Tofino way, with the same wire format, lock table,
 * control interface, pooled slots, Algorithm 2, overflow protocol, quotas, priorities and admin
 * packets; the same tests run on both and compare them (p4/dataplane/). docs/dataplane.md is the
 * reference for both programs; its section "Tofino (p4/tna/netlock.p4)" lists every difference
 * and gives the stages of every register action.
 *
 * How it differs in structure from the v1model program:
 *
 *  - State lives in Register arrays of 8, 16 or 32-bit cells or pairs of 32-bit cells, and
 *    every update is a RegisterAction whose apply body computes on 32 bits and returns at most
 *    32 bits. 64-bit values (grant counters, txns, timestamps) are split into 32-bit halves:
 *    pairs where one register action needs both halves, two registers where a pass must read
 *    all 64 bits.
 *  - Each register is used at one place of the ingress control (its "stage block"), where an
 *    if-else chain picks one of its register actions: at most one register action per
 *    register per pass, as on Tofino. The blocks run in one fixed order for every kind of
 *    pass, and every block's decisions use only blocks before it, so that the order is a
 *    stage order (the dependency analysis of docs/dataplane.md derives the stages from this
 *    file). Where an operation needs a register before one it already used, it continues in
 *    another pass.
 *  - Passes: the second pass of an acquire (writing the slot) is a resubmit with a 64-bit
 *    resubmit header (Tofino resubmits a packet once); every other continuation is a
 *    recirculation through RECIRC_PORT with the state in a recirculation header before the
 *    request.
 *  - A pass sends at most one answer. A pass that sends an answer and continues sends the
 *    packet, with the answer in a header, through the egress to the recirculation port; the
 *    egress mirrors it (egress to egress) to the answer's port (mirror session port + 1, the
 *    sessions the v1model program uses for its clones), and the mirrored copy's egress pass
 *    writes the answer. An answer without a continuation goes out directly, written by the
 *    egress from the answer header.
 */
#include <core.p4>
#include <tna.p4>

/* ---- Sizing: override with -D (as for p4/netlock.p4). ---- */
#ifndef NETLOCK_LOCKS
#define NETLOCK_LOCKS 16384          /* per-lock state entries (lock_table indices) */
#endif
/* On a Tofino, NETLOCK_PART_BITS is 14 (dataplane.TofinoSizing): bf-p4c places the 32-bit token
 * halves, slot numbers and grant numbers the program splits at SLOT_BITS in PHV containers only
 * when SLOT_BITS is 16; with 17 a move of such a field reads three container slices ("requires
 * too many sources"; docs/dataplane.md, "The real compiler"). Our engine takes any. */
#ifndef NETLOCK_PART_BITS
#define NETLOCK_PART_BITS 15         /* the pool has 4 x 2^NETLOCK_PART_BITS slots */
#endif
#ifndef NETLOCK_TENANT_METERS
#define NETLOCK_TENANT_METERS 1024
#endif
#ifndef NETLOCK_ENDED
#define NETLOCK_ENDED 65536          /* cells of the table of ended requests */
#endif
#ifndef CPU_PORT
#define CPU_PORT 255                 /* the controller's port (Tofino: 192 or 320, the PCIe port) */
#endif
#ifndef RECIRC_PORT
#define RECIRC_PORT 68               /* Tofino 1's recirculation port of pipe 0 */
#endif
/* NETLOCK_FOLD 1 builds the fold (docs/dataplane.md, "The fold"): the program in two
 * Pipelines, half a (the classification, the slot pool, ended requests, lk_buf) in pipe 0's
 * ingress and half b (the tenant meter, the per-lock counters, the decisions, the answer) in pipe
 * 1's, the packet carried from a to b with a's results in a bridge header (nl_bridge_t) through
 * pipe 1's recirculation port RECIRC_PORT_B; every pass b continues goes back to pipe 0 through
 * RECIRC_PORT. It is how the program fits a Tofino 1, whose one pipe's 12 stages hold neither
 * half's share of the other. */
#ifndef NETLOCK_FOLD
#define NETLOCK_FOLD 0
#endif
#ifndef RECIRC_PORT_B
#define RECIRC_PORT_B 196            /* Tofino 1's recirculation port of pipe 1 */
#endif
#if NETLOCK_PART_BITS > 16
#error NETLOCK_PART_BITS must be at most 16 (region offsets are 16 bits)
#endif

#define SLOT_BITS (NETLOCK_PART_BITS + 2)
#define POOL_SLOTS (32w1 << SLOT_BITS)

/* A slot number, or an offset or region start in the pool: 16 bits when the pool's numbers fit
 * (a Tofino's sizing, dataplane.TofinoSizing: 2^16 slots), else 32. The slot arithmetic (region
 * start plus offset) computes at this width, so on a Tofino its operands take 16-bit containers,
 * half the PHV of 32-bit ones; every operand of an add is of it (bf-p4c fills an ALU's operands
 * to the destination's container size and refuses a narrower one). */
/* A lock's index in the per-lock registers: 16 bits when NETLOCK_LOCKS allows (a Tofino's
 * sizing: 16384), else 32. */
#if NETLOCK_LOCKS <= 65536
typedef bit<16> lock_t;
#define LOCK_W 16
#else
typedef bit<32> lock_t;
#define LOCK_W 32
#endif
/* A cell of the ended table, likewise (NETLOCK_ENDED cells). */
#if NETLOCK_ENDED <= 65536
typedef bit<16> ended_t;
#else
typedef bit<32> ended_t;
#endif

#if NETLOCK_PART_BITS <= 14
typedef bit<16> slot_t;
#define SLOT_W 16
#else
typedef bit<32> slot_t;
#define SLOT_W 32
#endif

/* ---- Protocol constants (docs/protocol.md, wire/wire.go): as p4/netlock.p4. ---- */
const bit<16> NL_PORT = 8888;
const bit<8> NL_VERSION = 1;

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
const bit<8> FL_BATCH = 0x20; /* a batch: dropped as malformed (p4/netlock.p4) */

const bit<8> ST_QUOTA      = 1;
const bit<8> ST_WOULDBLOCK = 2;
const bit<8> ST_NOTHOLDER  = 3;
const bit<8> ST_LEASEEXP   = 4;
const bit<8> ST_BADREQ     = 8;

const bit<8> ADM_PROBE        = 16;
const bit<8> ADM_RESET        = 17;
const bit<8> ADM_FORCE        = 18;
const bit<8> ADM_TOKEN_BASE   = 19;
const bit<8> ADM_GET_COOKIE   = 20;
const bit<8> ADM_SET_COOKIE   = 21;
const bit<8> ADM_SET_BUFFERED = 22;
/* The ingress's kinds of pass (its local ptype; 0: none of these, routing or an admin pass
 * after the first or a bad request). */
const bit<4> P_ACQ    = 1;   /* acquire, deciding pass (acquire, push-back, try commit) */
const bit<4> P_WRITE  = 2;   /* acquire, writing pass */
const bit<4> P_TRY    = 3;   /* check a try acquire */
const bit<4> P_RW0    = 4;   /* retry, first pass */
const bit<4> P_RW     = 5;   /* retry walk */
const bit<4> P_REL    = 6;   /* release or admin force-release (first pass) */
const bit<4> P_GRANT  = 7;   /* grant walk */
const bit<4> P_CLEAN  = 8;   /* clean walk */
const bit<4> P_WD0    = 9;   /* withdrawal, first pass */
const bit<4> P_WD     = 10;   /* withdrawal walk */
const bit<4> P_PROBE  = 11;   /* lease-probe */
const bit<4> P_ADMIN  = 12;   /* admin, first pass */
const bit<4> P_SEND   = 13;   /* send an answer decided before */
const bit<4> P_PBNONE = 14;   /* push-back without a request */
const bit<4> P_BINC   = 15;   /* one more request buffered (an overflow decided at a count) */
/* The ingress's code for the admin operation it carries out (its local ad). */
const bit<3> AD_PROBE = 1;
const bit<3> AD_RESET = 2;
const bit<3> AD_TBASE = 3;
const bit<3> AD_GETC  = 4;
const bit<3> AD_SETC  = 5;
const bit<3> AD_SETB  = 6;

const bit<8> AR_OK      = 0;
const bit<8> AR_NOLOCK  = 1;
const bit<8> AR_NOTHELD = 2;
const bit<8> AR_BADREQ  = 3;

const bit<32> DR_MALFORMED     = 0;
const bit<32> DR_CHECKSUM      = 1;
const bit<32> DR_PUSHBACK_KEY  = 2;
const bit<32> DR_ADMIN_PORT    = 3;
const bit<32> DR_ADMIN_KEY     = 4;
const bit<32> DR_PUSHBACK_LOCK = 5;
const bit<32> DR_NO_ROUTE      = 6;
const bit<32> DR_TTL           = 7;

/* Slot states (s_flags[31:24]): as p4/netlock.p4. */
const bit<8> SS_DONE    = 0;
const bit<8> SS_LIVE    = 1;
const bit<8> SS_WDRAWN  = 2;

/* Pass types (the phase of a resubmitted or recirculated pass). */
const bit<8> PH_FRESH  = 0;   /* a packet as received */
const bit<8> PH_ACQ    = 1;   /* acquire, deciding pass (after a try check or a retry miss) */
const bit<8> PH_RWALK  = 2;   /* retry walk: look for the txn in the occupied slots */
const bit<8> PH_GRANT  = 3;   /* grant walk */
const bit<8> PH_CLEAN  = 4;   /* move the head over done slots */
const bit<8> PH_WDRAW  = 5;   /* withdrawal walk */
const bit<8> PH_WRITE  = 6;   /* acquire, second pass: write the slot (resubmitted) */
const bit<8> PH_SEND   = 7;   /* send an answer decided in the pass before */
const bit<8> PH_PROBE2 = 8;   /* admin probe, second pass: counters' second halves, grant time */
const bit<8> PH_PROBE3 = 9;   /* admin probe, third pass: the slot */
const bit<8> PH_RESET2 = 10;  /* admin reset, second pass: the floor */
const bit<8> PH_TBASE2 = 11;  /* admin token base, second pass: raise the counter */
const bit<8> PH_COOKIE2 = 12; /* admin get-cookie, second pass: the low half */
const bit<8> PH_BINC   = 13;  /* an overflow decided at a level's count: one more buffered */

/* What a PH_SEND pass sends. */
const bit<8> SEND_ACK   = 1;  /* the release's answer */
const bit<8> SEND_REPLY = 2;  /* the admin reply */

/* Walk flags (recirc.wflags), as p4/netlock.p4's meta.w.flags. */
const bit<8> WF_NOMETER   = 2;
const bit<8> WF_RETRYMISS = 4;
const bit<8> WF_FORCED    = 8;
const bit<8> WF_DUP       = 16;  /* an acquire without the retry flag the switch saw before: a duplicate */

/* The first byte of what the ingress sends to the egress, and of a mirrored copy. The answer
 * header comes first, before the recirculation header and the request, so that the egress parses
 * only kind and answer: Tofino 1's egress parser reaches at most 160 bytes, its intrinsic
 * metadata (27) included (bf-p4c, ParserEnforceDepthReq), and a mirrored copy is cut after its
 * answer by its mirror session (dataplane.CloneTruncate), so the recirculation state and the
 * request, which may carry the rack key, never leave the switch. */
const bit<8> KD_ANSWER     = 0xa1; /* an answer header follows; the egress writes the answer */
const bit<8> KD_RECIRC     = 0xa2; /* a recirculation header follows, then the request */
const bit<8> KD_MIRROR     = 0xa3; /* a mirrored copy of a KD_RECIRC_ANS packet: write its answer */
const bit<8> KD_RECIRC_ANS = 0xa4; /* an answer header, then a recirculation header and the request */
const bit<8> KD_WRITE      = 0xa5; /* the fold's writing pass: a resubmit header (nl_resub_t), then a
                                      * recirculation header and the request */

const ResubmitType_t RESUB_WRITE = 1;
const MirrorType_t MIRROR_ANSWER = 1;

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

header nl_t {
    bit<8>  version;
    bit<8>  op;
    bit<8>  mode;
    bit<8>  flags;
    bit<8>  status;
    bit<8>  prio;
    bit<16> tenant;
    bit<32> lock;
    bit<32> txn_hi;     /* the txn in 32-bit halves (64 bits on the wire): the pool keeps them in
                         * registers of their own, whose tables write an answer's halves in one
                         * stage only as fields of their own (two slices of one field are an
                         * output dependency, a stage, to bf-p4c) */
    bit<32> txn_lo;
    bit<32> token_hi;   /* the token, (grant number << SLOT_BITS) | slot, in 32-bit halves */
    bit<32> token_lo;
    bit<64> ts;
    bit<32> lease;
    bit<32> cip;
    bit<16> cport;
    bit<16> slots;
}

header nl_auth_t {
    bit<64> key;
}

header nl_admin_t {
    bit<8>  result;
    bit<8>  level;
    bit<16> offset;
    bit<32> value_hi;   /* the 64-bit value in 32-bit halves */
    bit<32> value_lo;
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

/* The admin header of a force-release and a set-buffered as the ingress parses it: the fields
 * they read and write (result, value_lo, now) and those before them; the rest stays payload,
 * which goes out as it came. These are the two admin operations that send answers (a
 * force-release's expiry notice and grants, a set-buffered's queue-empty), and a header of
 * their own, apart from hdr.admin on the parser's paths, keeps hdr.admin from being valid in a
 * pass that sends one: the answer's fields that only answers write are declared mutually
 * exclusive with hdr.admin below, and bf-p4c may give them the same containers. */
header nl_admin_head_t {
    bit<8>  result;
    bit<8>  level;
    bit<16> offset;
    bit<32> value_hi;
    bit<32> value_lo;
    bit<32> now;
}

/* The first byte of a bridged or recirculated packet (KD_*), and the mirror header. */
header nl_kind_t {
    bit<8> kind;
}

/* The state a recirculated pass continues from (p4/netlock.p4's walk_t, resubmit field list
 * 1, plus what the passes split here carry from one to the next). */
header nl_recirc_t {
    bit<8>  phase;
    bit<8>  wflags;     /* WF_* */
    bit<8>  send;       /* PH_SEND: SEND_* */
    /* four flags in one byte */
    bit<1>  binc_qe;    /* PH_BINC: 1 when a full level decided the overflow (check queue-empty) */
    bit<1>  examine;    /* grant walk: 1 when the slot at cur is to be examined */
    bit<1>  pclean;     /* 1: clean clevel when the grant walk ends */
    bit<1>  pend;       /* 1: a pending grant (below) */
    bit<4>  pad1;
    bit<7>  pad0;
    bit<9>  in_port;    /* the port the request arrived on */
    bit<8>  level;      /* grant walk: the level it is at */
    bit<8>  clevel;
    bit<16> cur;        /* slot offset in the level's region */
    bit<16> left;       /* live slots still to examine (retry, withdrawal) */
    bit<16> steps;      /* slots the withdrawal walk may still visit */
    bit<16> cleft;      /* occupied slots of clevel from its head */
    bit<16> chead;      /* the head of clevel (the slot the next clean pass examines) */
    /* The grant the grant walk decided in the pass before: this pass writes its grant number
     * into the slot, reads the slot's txn, client, lease and timestamp into the answer's fields
     * (the pool's blocks, at hd_idx: the pending slot) and sends it. Its flags are read in the
     * deciding pass into pflags, which the pool's flags block fills in every pass that reads
     * a slot's flags (after the pending grant has taken its own): the slot view's flags, with
     * no metadata copy (SV_* below). pend (above) is 1 when there is one. */
    bit<32> pflags;     /* the slot's s_flags cell as read: state ++ mode ++ prio ++ fwd */
    slot_t  pslot;
    bit<32> pseq_hi;    /* also the admin passes' 64-bit value's high half (ADM_HI) */
    bit<32> pseq_lo;
    /* Admin passes: a 64-bit value, ADM_HI ++ a_lo (no pending grant in an admin pass). */
    bit<32> a_lo;
}
#define ADM_HI hdr.recirc.pseq_hi

/* The answer a pass sends (p4/netlock.p4's ans_t), bridged to the egress in the reply's own
 * wire order: what the answer's passes write (a_eth, a_ip, a_udp, a_nl, a_key), with gaps where
 * the egress puts the reply's constant fields (a_etype, a_ipc, a_udpc, a_nlv) and after ans_meta,
 * which only the egress reads. The egress copies no answer field: it drops ans_meta, fills in the
 * constants and emits the rest as parsed, so the answer's fields stay out of the egress's MAU
 * containers (on Tofino they ride in tagalong containers) and the containers the stages reach
 * are the ingress's. (An earlier form, one answer header the egress copied field by field into
 * ethernet, IPv4, UDP and request headers, took 1040 of Tofino 1's 4096 MAU bits for the egress.) */
header ans_meta_t {
    @padding bit<7> pad0;   /* bf-p4c: a 7-bit slice the egress deparses must be padding */
    bit<9>  port;
    bit<8>  auth;       /* 1: carries the rack key (a_key) */
}
header ans_eth_t {
    bit<48> dmac;
    bit<48> smac;
}
header ans_etype_t {
    bit<16> etherType;
}
header ans_ipc_t {
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
}
header ans_ip_t {
    bit<32> sip;
    bit<32> dip;
}
header ans_udp_t {
    bit<16> sport;
    bit<16> dport;
}
header ans_udpc_t {
    bit<16> len;
    bit<16> csum;
}
header ans_nlv_t {
    bit<8>  version;
}
header ans_nl_t {
    bit<8>  op;
    bit<8>  mode;
    bit<8>  flags;
    bit<8>  status;
    bit<8>  prio;
    bit<16> tenant;
    bit<32> lock;
    bit<32> txn_hi;     /* in halves, as nl_t's */
    bit<32> txn_lo;
    bit<32> token_hi;
    bit<32> token_lo;
    bit<64> ts;
    bit<32> lease;
    bit<32> cip;
    bit<16> cport;
    bit<16> slots;
}

#define ANS_VALID hdr.ansx.setValid(); hdr.a_eth.setValid(); hdr.a_ip.setValid(); \
    hdr.a_udp.setValid(); hdr.a_nl.setValid(); hdr.a_key.setValid()
#define ANS_INVALID hdr.ansx.setInvalid(); hdr.a_eth.setInvalid(); hdr.a_ip.setInvalid(); \
    hdr.a_udp.setInvalid(); hdr.a_nl.setInvalid(); hdr.a_key.setInvalid()

/* The bridged answer's length in bits: ans_meta, a_eth, a_ip, a_udp, a_nl, a_key (82 bytes). */
#define ANS_BITS (24 + 96 + 64 + 32 + 376 + 64)

/* The resubmit header of the acquire's second pass (64 bits, Tofino 1's resubmit data). */
header nl_resub_t {
    bit<8>  phase;
    bit<7>  fresh;      /* the fold's writing pass: 1 when the pass it continues came in fresh
                         * (no recirculation header), else 0; 0 without the fold */
    bit<1>  grant;
    bit<16> off;        /* the slot's offset in the level's region */
    bit<32> seq;        /* the grant number's low 32 bits */
}

#if NETLOCK_FOLD
/* The fold's bridge: what half a (pipe 0) computed that half b (pipe 1) reads, in front of the
 * packet a sends to b (NetlockIngressDeparserA; half a writes it as meta.br) and extracted by b's
 * parser into a parser-local header (brin) that it copies out of (parse_bridge). Its fields: the
 * ingress's locals that b reads (nl_locals_t, NL_LOCAL) packed by one hash (lflags) but nc; the
 * one-bit metadata packed by another (mflags); whether the pass came in fresh and the writing
 * pass's grant bit; copies of metadata fields (NL_BRIDGE_FIELDS). Which fields: those a writes and
 * b reads (the table dependency graphs of the two halves). What a's ingress leaves in the
 * packet's headers (the answer, the recirculation header, the request's) goes as the packet,
 * parsed again by b. */
header nl_bridge_t {
    /* Each field below 8 bits in a byte of its own (@pa_container_size 8, below): different
     * actions write them, and bf-p4c writes one container by one instruction of at most two
     * sources (a container packing several: "move instruction constraints will be violated"). */
    bit<16> lflags;     /* the locals half b reads but nc and f_fresh, by one hash (BRIDGE_OUT) */
    bit<7>  f_fresh;    /* 1 when the pass came in fresh (pass_in: no recirculation header), as
                         * meta.resub.fresh, 7 bits at bits 7..1 of its byte: half b copies it there
                         * whole (bf-p4c: a copy keeps a field's place in its byte, and a container
                         * takes at most two sources) */
    @padding bit<1> _f_fresh0;
    @padding bit<7> _r_grant;
    bit<1>  r_grant;    /* a writing pass's meta.resub.grant (bit 0 of its byte, as parse_write's) */
    @padding bit<8> _pad_mf;
    bit<16> mflags;     /* one-bit metadata put together by one hash (BRIDGE_OUT: an action's
                         * moves of them would tie each to its source's container) */
    bit<8>  phase;
    bit<8>  wflags;
    bit<8>  level;
    bit<8>  rq_fwd;
    bit<8>  tlevel;
    @padding bit<7> _nh_port;
    bit<9>  nh_port;    /* in a 16-bit container of its own (a cast to 16 bits was an action of
                         * its own, a stage after the others: bf-p4c) */
    bit<16> l_nc;       /* the local nc (a field named nc would be the macro's) */
    lock_t  idx;
    bit<16> size0;
    bit<16> size1;
    bit<16> size;
    slot_t  sl_idx;
    bit<16> h_arg;
    bit<16> h_step;
    bit<16> q_endx;
    bit<16> q_wrapx;
    bit<16> q_end0x;
    bit<16> q_endxx;
    bit<16> srv_udp;
    bit<16> rd_port;
    bit<16> rd_tenant;
    bit<32> srv_ip;
    bit<32> q_lim;
    bit<32> b_val;
    bit<32> bv;
    bit<32> gts;
    bit<32> now_b;
    bit<48> nh_smac;
    bit<48> nh_dmac;
}
#endif

struct headers_t {
    nl_kind_t    kind;
#if NETLOCK_FOLD
    nl_resub_t   wr;       /* the fold's writing pass (KD_WRITE) */
#endif
    /* the answer (before recirc: see KD_RECIRC_ANS); a_ipc, a_udpc, a_nlv only in the egress,
     * a_etype also in a routed packet (with a_eth: the next hop's MACs, hdr.ethernet invalid) */
    ans_meta_t   ansx;
    ans_eth_t    a_eth;
    ans_etype_t  a_etype;
    ans_ipc_t    a_ipc;
    ans_ip_t     a_ip;
    ans_udp_t    a_udp;
    ans_udpc_t   a_udpc;
    ans_nlv_t    a_nlv;
    ans_nl_t     a_nl;
    nl_auth_t    a_key;
    nl_recirc_t  recirc;
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
    udp_t        udp;
    nl_t         nl;
    nl_auth_t    auth;
    nl_admin_t   admin;
    nl_admin_head_t adminf;   /* a force-release's and a set-buffered's */
}

/* A register cell of two 32-bit halves: hi is bits 63:32 of the 64-bit value it holds. */
struct pair32_t {
    bit<32> hi;
    bit<32> lo;
}

/* A slot's request, as read from the pool, carried, or taken from the request. */
/* The slot view's state, mode, priority and forwarded flag: slices of the slot's s_flags cell,
 * which the pool's flags block reads (or writes) into the pending grant's recirc.pflags (no
 * metadata copy); the request's, with the state SS_LIVE, when the pass does not use s_flags. */
#define SV_STATE hdr.recirc.pflags[31:24]
#define SV_MODE  hdr.recirc.pflags[23:16]
#define SV_PRIO  hdr.recirc.pflags[15:8]
#define SV_FWD   hdr.recirc.pflags[7:0]
/* The slot's grant number (s_hold), read by a release (before it validates), the retry walk and
 * the admin probe into the pending grant's pseq_lo, which none of these passes uses for a pending
 * grant. */
#define SV_SEQ   hdr.recirc.pseq_lo
/* lk_state's lo input (ST_X: state_take_s, state_take_x, state_rel, state_hic): meta.now_b,
 * whose clock term is summed into meta.now in the first stages; a field of its own did not fit
 * the PHV (bf-p4c, 2026-11-30, the last 32 bits unallocated at 0401a79). */
#define ST_X meta.now_b


#if NETLOCK_FOLD
/* The fold: the ingress's locals that half b reads, as metadata (NL_LOCAL), in both halves; half
 * a puts them in the bridge (BRIDGE_OUT), half b's parser takes them out of it. */
struct nl_locals_t {
    bit<4> ptype;
    bit<3> ad;
    bit<1> adm2;
    bit<1> badreq;
    bit<1> clean_done;
    bit<1> clean_wd;
    bit<1> exam;
    bit<1> forced;
    bit<1> retry;
    bit<1> sv_live;
    bit<1> t_in;
    bit<7> f_fresh;
    bit<16> nc;
    bit<8>  ph;
}
#endif

struct metadata_t {
    nl_resub_t resub;
    bool    csum_ok;
    bit<32> pkey_hi;    /* the request's rack key (hdr.auth.key), copied by the parser */
    bit<32> pkey_lo;
    bit<1>  nl_port;    /* the UDP destination is NL_PORT (set by the parser where UDP is) */
    /* the pass */
    bit<8>  phase;
    bit<9>  in_port;
    bit<8>  wflags;
    /* rack */
    bit<1>  rack_ok;
    bit<32> max_lease;
    /* lock */
    bit<1>  hit;
    bit<1>  paused;
    lock_t  idx;
    slot_t  left0;
    bit<16> size0;
    slot_t  left1;
    bit<16> size1;
    bit<16> server;
    bit<1>  srv_ok;
    bit<32> srv_ip;
    bit<16> srv_udp;
    /* classification */
    bit<2>  kind;
    bit<8>  level;
    slot_t  left;
    bit<16> size;
    bit<8>  rq_fwd;
    bit<32> lease;
    bit<32> now;
    slot_t  tslot;
    slot_t  ntslot;    /* ~tslot: lock_table's action adds it to the region starts (its data) */
    slot_t  nsize0;    /* ~size0 and ~size1 in slot_t: tok_room's second operands */
    slot_t  nsize1;
    bit<32> tseq_hi;
    bit<32> tseq_lo;
    bit<8>  tlevel;
    bit<8>  fl_hi;      /* lk_floor's comparisons of the token's grant number, high and low half */
    bit<8>  fl_lo;
    /* the slot the pool blocks use (sl), and the one s_hold uses (hd) */
    slot_t  sl_idx;
    slot_t  hd_idx;
    /* each level's region start plus the positions a pass may use (lock_table's action) */
    /* the slot arithmetic's operands, whole and 32-bit (bf-p4c refuses 16-bit operands and sliced
     * fields in it): offsets (parser copies, widened by hashes), sizes, shifted seq halves */
    bit<15> off15;      /* resub.off[14:0], cur[14:0], chead[14:0]: set by the parser */
    bit<15> cur15;
    bit<15> ch15;
    slot_t  o_res;      /* resub.off[14:0] */
    slot_t  o_cur;      /* recirc.cur[14:0] */
    slot_t  o_ch;       /* recirc.chead[14:0] */
    slot_t  at_off0;
    slot_t  at_off1;
    slot_t  at_cur0;
    slot_t  at_cur1;
    slot_t  at_ch0;
    slot_t  at_ch1;
    /* register action ops (0: not used in this pass) */
    /* register action inputs */
    bit<32> n_flags;
    bit<32> fp;        /* ended: the request's fingerprint, bits 1:0 clear (seen; + 1 ended,
                        * + 3 force-released) */
    ended_t e_idx;
    bit<8>  s_mode;
    bit<16> h_arg;
    bit<16> h_step;    /* heads, gnext_follow: what the position after h_arg's offset adds */
    bit<16> q_endx;    /* tail_enq: (meta.size - 1) ^ 0x8000 (LEVEL_REGS) */
    bit<16> q_wrap;    /* 0x8001 - meta.size: h_step at the region's end */
    /* q_wrap, q_end0 and q_endx copied by the hash unit: what the positions' arithmetic adds and
     * compares with (the level sizes and what use_level computes from them stay out of the
     * positions' cluster: bf-p4c places a cluster in one MAU group, and a gateway's comparison
     * of two fields ties them as an instruction does) */
    bit<16> q_wrapx;
    bit<16> q_end0x;
    bit<16> q_endxx;
    bit<16> q_end0;    /* meta.size - 1: the last position of lap 0 (QNEXT_SET) */
    bit<32> now_a;     /* meta.now's terms (the timestamp's slices), then its two partial sums */
    bit<32> now_b;     /* also ST_X, lk_state's lo input, once the clock is summed */
    bit<32> now_c;
    bit<32> now_d;
    bit<32> p_o;       /* admin probe: the offset of the slot asked for (into recirc.cur) */
    /* Order comparisons of two fields, for a gateway (which compares fields for equality
     * only): a > b as (a |-| b) != 0, the saturating difference computed here first. One
     * field for the passes that compare, which exclude each other: the writing pass's and the
     * retry walk's grant number against the counter's low half, tbase's value against the
     * counter (by the high halves where they differ, else by the low halves), and the first
     * probe pass's slot (the offset asked for widened, added to the head's; then meta.size
     * widened, and p_o minus that: probe_wrap, in every pass): a field of its own for each
     * would not fit the PHV (bf-p4c, 2026-11-30, Tofino 1 as one program). The third probe
     * pass's comparison has its own (gt3). */
    bit<32> gt;
    bit<32> gt3;       /* the third admin probe pass's comparison (gt_slot_val), computed in
                        * every pass before the decisions: a field of its own, as meta.gt is
                        * written in every pass by the probe's offset steps */
    bit<16> hdiff;     /* the heads: the head read minus h_arg */
    bit<16> g_arg;
    bit<32> q_lim;     /* q_take, q_full: the worked level's size (lk_q, lk_q_hi), widened by the
                        * hash unit after use_level (a short-lived copy, not lock_table's) */
    bit<32> q_dec0;    /* q_sub0, q_sub1: what they take off (0: a read) */
    bit<32> q_dec1;
    bit<32> b_val;     /* buf_set: the count to set */
    bit<32> bv;        /* lk_buf before this pass's update */
    bit<32> st_y;      /* lk_state's hi input; ST_X (meta.now_b) its lo input (see there) */
    /* register action results */
    bit<1>  txn_hi_ok;  /* 1-bit register action outputs (bf-p4c takes them; 8 bits each did */
    bit<1>  txn_lo_ok;  /* not fit the PHV, 2026-11-30): so are valid, grant and compat */
    bit<1>  valid;
    bit<1>  found;
    bit<1>  ended_hit;   /* the request ended (ended table) */
    bit<1>  expired_hit; /* the request ended by force-release: its lease ran out (ended table) */
    bit<1>  dup_hit;     /* the request was seen and has not ended (ended table) */
    bit<8>  meter_color;
    bit<1>  quota;
    bit<16> qv;        /* the worked level's occupied slots (q_sub), or 1 when q_take took one */
    bit<16> qo;        /* the other level's occupied slots (q_sub) */
    bit<16> dv;        /* lk_done: the done slots after the update */
    bit<1>  ov;
    bit<1>  grant;
    bit<1>  compat;    /* a try's check at lk_state (st_check_s, st_check_x: 1 if it would be
                        * granted); metadata, not a local, for its @pa_container_size */
    bit<1>  nhold0;
    bit<1>  xheld;
    bit<32> tok_lo;
    bit<32> tok_hi;
    bit<32> k_lo;      /* the answer's token, grant number's low half (TK_ANS: the site after
                        * the decisions hashes hi, k_lo and sl_idx) */
    bit<2>  tk;        /* which token the decisions chose, put together after them: TK_ANS the
                        * answer's, TK_VAL the admin value from the grant counter, 0 none */
    /* q_take's answers (1: the acquire took a slot at level 0, 1): metadata fields for their
     * container size (the pragmas before the ingress control) */
    bit<1>  took0;
    bit<1>  took1;
    bit<16> hv;        /* head of the worked level, before the pass's register action */
    slot_t  t_off;     /* the token's slot offset in its level's region (tslot - left, for a
                        * release's h_arg); before the worked level is chosen, the token's
                        * offset in, then its room in, level 0's region (lock_table's action,
                        * tok_room; meta.left the same for level 1): fields the slot
                        * arithmetic has anyway, dead there (PHV is full) */
    bit<16> tail;
    bit<32> rd_st;     /* lk_state's lo read by the admin probe's second pass (holders) */
    bit<32> rd_sthi;   /* lk_state's hi read by the admin probe (waiters): a field of its own, not
                        * rd_st: the two uses slice it at different bits (bf-p4c: "requires too
                        * many sources") */
    bit<32> size1q;    /* size1 as the queue-empty answer's lease (a field of its own: see TOK_LO),
                        * widened by the hash unit where the answers begin */
    bit<32> gts;       /* the admin probe: the slot's grant time as gtime_rd read it */
    bit<32> st_prev;   /* state_rel: lk_state's lo after */
    bit<16> rd_port;   /* the slot's port and tenant as read (port_rd, tenant_rd) */
    bit<16> rd_tenant;
    /* answers and what comes next */
    bit<1>  a_valid;
    bit<1>  a_routed;
    bit<1>  a_fwd;     /* the answer goes to a forwarded request's client (FL_FWD, cip, cport) */
    bit<1>  reply;     /* the pass answers the controller with the request itself */
    bit<1>  cont;
    bit<1>  resub_go;
    /* routing */
    bit<32> route_dst;
    bit<1>  nh_ok;
    bit<48> nh_smac;
    bit<48> nh_dmac;
    bit<9>  nh_port;
#if NETLOCK_FOLD
    nl_bridge_t br;    /* half a: the bridge BRIDGE_OUT writes (half b's parser reads it into brin) */
    nl_locals_t bl;    /* the ingress's locals that half b reads (NL_LOCAL) */
    bit<2>  wr;        /* half a: a writing pass (KD_WRITE) of a pass that came in recirculated 1,
                        * fresh 2; else 0 (pass_in's key in place of the resubmit flag) */
    bit<1>  br_in;     /* half b: 1 for the bridge from RECIRC_PORT_B, 0 for a packet to steer */
    bit<1>  wr_grant;  /* the writing pass's grant bit (WR_GRANT): its resubmit header's in half a,
                        * the bridge's in half b, each written by the parser */
#endif
}

/* meta.tk: the token put together after the decisions (TOK_HI_SLICED's comment) */
const bit<2> TK_ANS = 1;
const bit<2> TK_VAL = 2;

/* Packet kinds (meta.kind), as p4/netlock.p4. */
const bit<2> K_ROUTE = 0;
const bit<2> K_LOCK  = 1;
const bit<2> K_PB    = 2;
const bit<2> K_ADMIN = 3;

/* ---- Ingress parser ---- */
#if NETLOCK_FOLD
/* The bridge's copies of metadata fields (nl_bridge_t): one list, written out by half a
 * (BRIDGE_OUT) and put back by half b's parser (parse_bridge). */
#define NL_BRIDGE_FIELDS(F) \
    F(phase) \
    F(wflags) \
    F(level) \
    F(rq_fwd) \
    F(tlevel) \
    F(idx) \
    F(size0) \
    F(size1) \
    F(size) \
    F(sl_idx) \
    F(h_arg) \
    F(h_step) \
    F(q_endx) \
    F(q_wrapx) \
    F(q_end0x) \
    F(q_endxx) \
    F(srv_udp) \
    F(rd_port) \
    F(rd_tenant) \
    F(srv_ip) \
    F(q_lim) \
    F(b_val) \
    F(bv) \
    F(gts) \
    F(nh_smac) \
    F(nh_dmac) \
    F(nh_port) \
    F(now_b)
#define NL_BRIDGE_OUT(f) meta.br.f = meta.f;
#define NL_BRIDGE_IN(f) meta.f = brin.f;
#endif

/* The fold: pipe 0's parser parses what half a takes (half 1), pipe 1's the bridge (half 2): each
 * Pipeline's copy holds only its own states (bf-p4c folds the select on the constructor
 * parameter; a state of the other half's extracts would put its headers' validity bits, written
 * by the parser, beside the ones the ingress writes: GreedyAllocation refused that, 2026-12-01). */
parser NetlockIngressParser(packet_in pkt, out headers_t hdr, out metadata_t meta,
                            out ingress_intrinsic_metadata_t ig_md)
#if NETLOCK_FOLD
                           (bit<2> half)
#endif
                           {
    Checksum() ipv4_csum;
#if NETLOCK_FOLD
    nl_bridge_t brin;   /* half b: the bridge as it came */
#endif

    state start {
        pkt.extract(ig_md);
#if NETLOCK_FOLD
        transition select(half) {
            2: start_b;
            default: start_a;
        }
    }
    /* Half b: the bridge from pipe 1's recirculation port; any other packet goes to pipe 0
     * whole (NL_STEER_PIPE0: nothing of it is parsed). */
    state start_b {
        pkt.advance(PORT_METADATA_SIZE);
        transition select(ig_md.ingress_port) {
            RECIRC_PORT_B: parse_bridge;
            default: parse_steer;
        }
    }
    state parse_steer {
        meta.br_in = 0;
        transition accept;
    }
    state start_a {
#endif
        /* meta.csum_ok is read only when IPv4 was parsed, and set once there: Tofino's parser
         * writes a field once per path ("re-assignment is not supported by Tofino"). */
        transition select(ig_md.resubmit_flag) {
            1: parse_resubmit;
            default: parse_port_metadata;
        }
    }
    state parse_resubmit {
        pkt.extract(meta.resub);
        meta.off15 = meta.resub.off[14:0];   /* the parser copies the packet's bits: no slice */
        transition select(ig_md.ingress_port) {
            RECIRC_PORT: parse_kind;
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_port_metadata {
        pkt.advance(PORT_METADATA_SIZE);
        transition select(ig_md.ingress_port) {
            RECIRC_PORT: parse_kind;
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    /* A recirculated pass: the answer the last pass sent (skipped), the state, the request. */
    state parse_kind {
        pkt.extract(hdr.kind);
        transition select(hdr.kind.kind) {
            KD_RECIRC_ANS: parse_old_answer;
#if NETLOCK_FOLD
            KD_WRITE: parse_write;
#endif
            default: parse_recirc;
        }
    }
#if NETLOCK_FOLD
    /* The fold, half a: the writing pass half b sent back (KD_WRITE), its resubmit header, then
     * the recirculation header (meta.wr: pass_in's key). */
    state parse_write {
        pkt.extract(meta.resub);
        meta.off15 = meta.resub.off[14:0];
        meta.wr_grant = meta.resub.grant;
        transition select(meta.resub.fresh) {
            1: parse_write_fresh;
            default: parse_write_recirc;
        }
    }
    state parse_write_fresh {
        meta.wr = 2;
        transition parse_recirc;
    }
    state parse_write_recirc {
        meta.wr = 1;
        transition parse_recirc;
    }
    /* The fold, half b: the bridge (its metadata copies put back, a writing pass's grant and
     * number into meta.resub), the answer and the recirculation header as half a left them, the
     * request. */
    state parse_bridge {
        pkt.extract(brin);
        meta.br_in = 1;
        meta.bl.ptype = brin.lflags[15:12];
        meta.bl.ad = brin.lflags[11:9];
        meta.bl.adm2 = brin.lflags[8:8];
        meta.bl.badreq = brin.lflags[7:7];
        meta.bl.clean_done = brin.lflags[6:6];
        meta.bl.clean_wd = brin.lflags[5:5];
        meta.bl.exam = brin.lflags[4:4];
        meta.bl.forced = brin.lflags[3:3];
        meta.bl.retry = brin.lflags[2:2];
        meta.bl.sv_live = brin.lflags[1:1];
        meta.bl.t_in = brin.lflags[0:0];
        meta.bl.f_fresh = brin.f_fresh;
        meta.bl.nc = brin.l_nc;
        meta.bl.ph = brin.phase;   /* ph is the phase (half a: ph = meta.phase) */
        NL_BRIDGE_FIELDS(NL_BRIDGE_IN)
        meta.wr_grant = brin.r_grant;
        meta.kind = brin.mflags[13:12];
        meta.txn_hi_ok = brin.mflags[11:11];
        meta.txn_lo_ok = brin.mflags[10:10];
        meta.valid = brin.mflags[9:9];
        meta.found = brin.mflags[8:8];
        meta.ended_hit = brin.mflags[7:7];
        meta.expired_hit = brin.mflags[6:6];
        meta.dup_hit = brin.mflags[5:5];
        meta.paused = brin.mflags[4:4];
        meta.nh_ok = brin.mflags[3:3];
        meta.a_valid = brin.mflags[2:2];
        meta.a_routed = brin.mflags[1:1];
        meta.a_fwd = brin.mflags[0:0];
        transition parse_bridge_answer;
    }
    state parse_bridge_answer {
        pkt.extract(hdr.ansx);
        pkt.extract(hdr.a_eth);
        pkt.extract(hdr.a_ip);
        pkt.extract(hdr.a_udp);
        pkt.extract(hdr.a_nl);
        pkt.extract(hdr.a_key);
        pkt.extract(hdr.recirc);
        transition select(hdr.recirc.in_port) {   /* as parse_recirc: half a's packet_out */
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
#endif
    state parse_old_answer {
        pkt.advance(ANS_BITS);   /* the answer the last pass sent: skipped, not parsed */
        transition parse_recirc;
    }
    state parse_recirc {
        pkt.extract(hdr.recirc);
        meta.cur15 = hdr.recirc.cur[14:0];
        meta.ch15 = hdr.recirc.chead[14:0];
        transition select(hdr.recirc.in_port) {
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
        ipv4_csum.add(hdr.ipv4);
        meta.csum_ok = ipv4_csum.verify();
        transition select(hdr.ipv4.ihl, hdr.ipv4.fragOffset, hdr.ipv4.protocol) {
            (5, 0, 17): parse_udp;
            default: accept;
        }
    }
    /* The port's test is the parser's: meta.nl_port, set on both ways out of parse_udp, is
     * what the ingress tests, so no stage reads hdr.udp.dst (bf-p4c keeps it out of the
     * containers the stages reach). */
    state parse_udp {
        pkt.extract(hdr.udp);
        transition select(hdr.udp.dst) {
            NL_PORT: parse_nl_port;
            default: parse_other_port;
        }
    }
    state parse_other_port {
        meta.nl_port = 0;
        transition accept;
    }
    state parse_nl_port {
        meta.nl_port = 1;
        transition parse_nl;
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
    /* The request's key is copied by the parser into metadata, which the key's checks read:
     * hdr.auth.key itself is only parsed and emitted, so bf-p4c keeps it out of the containers
     * the stages reach, and the copy is dead after the checks (64 bits fewer live through the
     * pipe). */
    state parse_auth {
        pkt.extract(hdr.auth);
        meta.pkey_hi = hdr.auth.key[63:32];
        meta.pkey_lo = hdr.auth.key[31:0];
        transition accept;
    }
    state parse_auth_admin {
        pkt.extract(hdr.auth);
        meta.pkey_hi = hdr.auth.key[63:32];
        meta.pkey_lo = hdr.auth.key[31:0];
        transition select(hdr.nl.status) {
            ADM_FORCE: parse_admin_head;
            ADM_SET_BUFFERED: parse_admin_head;
            16 .. 31: parse_admin;
            default: accept;
        }
    }
    state parse_admin_head {
        pkt.extract(hdr.adminf);
        transition accept;
    }
    state parse_admin {
        pkt.extract(hdr.admin);
        transition accept;
    }
}

/* ---- Register helpers ----
 * QNEXT_SET(dst, x): dst = the queue position after x in the worked level's region
 * ([14:0] offset, [15] lap bit, as p4/netlock.p4's qnext): x + 1, or x + q_wrap (the other
 * lap's offset 0) when x is the last position of either lap (size - 1, q_endx). Statements,
 * not an expression: Tofino's actions take no condition on a packet field (bf-p4c:
 * "Conditions in an action must be simple comparisons of an action data parameter"). x is read
 * in place, not copied: every field an instruction reads or writes joins one cluster, which
 * bf-p4c places in one MAU group (16 containers of a size), and a copy is one more field in
 * the queue positions' cluster ("The real compiler" in docs/dataplane.md). */
#define QNEXT_SET(dst, x) { \
        if ((x) == meta.q_end0x || (x) == meta.q_endxx) { dst = (x) + meta.q_wrapx; } else { dst = (x) + 1; } \
    }

/* The slot pool: 4 x 2^NETLOCK_PART_BITS slots (slot s at index s), eleven registers per slot
 * (40 bytes):
 *   s_txn_hi, s_txn_lo   the txn
 *   s_hold               the grant number (low 32 bits; 0 while waiting and after release)
 *   s_gtime              the grant time (us), renewed by a lease-probe. Not a pair with s_hold:
 *                        a register of 65536 64-bit cells does not fit a Tofino 2 stage (bf-p4c:
 *                        "could not fit in stage 0 ... along with 65536 entries of Register", a
 *                        one-register program, 2026-11-30; 65536 32-bit cells or 32768 pairs
 *                        do), and a Tofino pipe's pool has 65536 slots (dataplane.TofinoSizing)
 *   s_flags              [31:24] state, [23:16] mode, [15:8] priority, [7:0] forwarded
 *   s_lease              the lease (us)
 *   s_ip, s_port         the client's IPv4 address and UDP port
 *   s_tenant             the tenant (its own 16-bit register, as the port: one 32-bit cell of
 *                        both took a 32-bit PHV temporary for the write's port ++ tenant and a
 *                        32-bit field for the read)
 *   s_ts_hi, s_ts_lo     the request's timestamp
 * Sixty-four-bit fields are two registers because a grant reads all of them in one pass and a
 * Tofino 1 register action returns one 32-bit value. p4/netlock.p4 splits the pool into 4
 * parts (NetLock's figure 5: more SRAM than one stage holds); here each field is one array
 * over all the slots, so the pool takes ten stateful ALUs instead of 36 (a pipe has 48), and
 * the fields spread over stages instead: each array is in one stage, 33 SRAM blocks for the
 * default 131072 slots, within a stage's 80 (docs/dataplane.md, "SRAM for the slot pool").
 * N0..N10 are the registers' names. */
#define POOL_PART(N0, N1, N2, N3, N4, N5, N6, N7, N8, N9, N10) \
    @name(N0) Register<bit<32>, slot_t>(POOL_SLOTS) s_txn_hi; \
    @name(N1) Register<bit<32>, slot_t>(POOL_SLOTS) s_txn_lo; \
    @name(N2) Register<bit<32>, slot_t>(POOL_SLOTS) s_hold; \
    @name(N10) Register<bit<32>, slot_t>(POOL_SLOTS) s_gtime; \
    @name(N3) Register<bit<32>, slot_t>(POOL_SLOTS) s_flags; \
    @name(N4) Register<bit<32>, slot_t>(POOL_SLOTS) s_lease; \
    @name(N5) Register<bit<32>, slot_t>(POOL_SLOTS) s_ip; \
    @name(N6) Register<bit<16>, slot_t>(POOL_SLOTS) s_port; \
    @name(N9) Register<bit<16>, slot_t>(POOL_SLOTS) s_tenant; \
    @name(N7) Register<bit<32>, slot_t>(POOL_SLOTS) s_ts_hi; \
    @name(N8) Register<bit<32>, slot_t>(POOL_SLOTS) s_ts_lo; \
    RegisterAction<bit<32>, slot_t, bit<1>>(s_txn_hi) txn_hi_cmp = { \
        void apply(inout bit<32> v, out bit<1> rv) { rv = (v == hdr.nl.txn_hi) ? 1w1 : 1w0; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_txn_hi) txn_hi_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_txn_hi) txn_hi_wr = { \
        void apply(inout bit<32> v) { v = hdr.nl.txn_hi; } }; \
    RegisterAction<bit<32>, slot_t, bit<1>>(s_txn_lo) txn_lo_cmp = { \
        void apply(inout bit<32> v, out bit<1> rv) { rv = (v == hdr.nl.txn_lo) ? 1w1 : 1w0; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_txn_lo) txn_lo_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_txn_lo) txn_lo_wr = { \
        void apply(inout bit<32> v) { v = hdr.nl.txn_lo; } }; \
    RegisterAction<bit<32>, slot_t, bit<1>>(s_hold) hold_rel = { \
        void apply(inout bit<32> v, out bit<1> rv) { \
            rv = 0; \
            if (v == meta.tseq_lo && v != 0) { v = 0; rv = 1; } } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_hold) hold_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<1>>(s_hold) hold_chk = { \
        void apply(inout bit<32> v, out bit<1> rv) { \
            rv = 0; \
            if (v == meta.tseq_lo && v != 0) { rv = 1; } } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_hold) hold_wr = { \
        void apply(inout bit<32> v) { v = hdr.recirc.pseq_lo; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_gtime) gtime_wr = { \
        void apply(inout bit<32> v) { v = meta.now; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_gtime) gtime_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_flags) flags_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_flags) flags_wr = { \
        void apply(inout bit<32> v, out bit<32> rv) { v = meta.n_flags | ((bit<32>)SS_LIVE << 24); rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_flags) flags_done = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; v = v & 0x00ffffff; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_flags) flags_wdraw = { \
        void apply(inout bit<32> v, out bit<32> rv) { \
            rv = v; \
            if (v >= 0x01000000 && v < 0x02000000) { v = v + 0x01000000; } } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_lease) lease_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_lease) lease_wr = { \
        void apply(inout bit<32> v, out bit<32> rv) { v = meta.lease; rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_ip) ip_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_ip) ip_wr = { \
        void apply(inout bit<32> v) { v = hdr.nl.cip; } }; \
    RegisterAction<bit<16>, slot_t, bit<16>>(s_port) port_rd = { \
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; } }; \
    RegisterAction<bit<16>, slot_t, bit<16>>(s_port) port_wr = { \
        void apply(inout bit<16> v) { v = hdr.nl.cport; } }; \
    RegisterAction<bit<16>, slot_t, bit<16>>(s_tenant) tenant_rd = { \
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; } }; \
    RegisterAction<bit<16>, slot_t, bit<16>>(s_tenant) tenant_wr = { \
        void apply(inout bit<16> v) { v = hdr.nl.tenant; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_ts_hi) ts_hi_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_ts_hi) ts_hi_wr = { \
        void apply(inout bit<32> v) { v = hdr.nl.ts[63:32]; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_ts_lo) ts_lo_rd = { \
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; } }; \
    RegisterAction<bit<32>, slot_t, bit<32>>(s_ts_lo) ts_lo_wr = { \
        void apply(inout bit<32> v) { v = hdr.nl.ts[31:0]; } };

/* Stage blocks of the pool. The request's cells (txn, client, lease, timestamp) are at hd_idx,
 * s_hold's index: the pass's slot, or the pending grant's in the grant walk's pass that sends it,
 * which examines the next slot's flags at sl_idx. They are read straight into the answer's fields
 * (a_nl.txn, a_ip.dip, a_nl.lease, a_nl.ts; the port and tenant into meta.rd_port and
 * rd_tenant), which every
 * answer that does not take them from there writes after the pool's blocks. */
/* The queue positions of one level, per lock: head, tail, gnext (16-bit positions, as
 * p4/netlock.p4's LevelQueue). NL is the level, NH/NT/NG the registers' names. The worked
 * level's size is meta.size.
 * A stateful ALU computes one operator per statement and compares whole values on Tofino 1
 * (bf-p4c: "You can only have more than one binary operator in a statement if the outer one
 * is |"; no masks in comparisons), so QNEXT is not written out here. A position after the
 * last offset of a region of size S ([14:0] = S - 1) is the other lap's offset 0: x + (0x8001
 * - S) modulo 2^16 in either lap. The pass computes per level meta.q_endx = (S - 1) ^ 0x8000
 * (the last position of lap 1; the last of lap 0 is q_endx - 0x8000 modulo 2^16, so
 * x - q_endx is the next position there too) and, for a move of the head, meta.h_step: the
 * step after the position meta.h_arg's offset, 0x8001 - S at the region's end, else 1.
 * gnext_follow tests meta.g_arg, which a clean walk sets to its head as it does h_arg: a
 * stateful ALU reads two PHV inputs over its register actions (bf-p4c: "requires more than 2
 * PHV inputs"), and gnext_set's is g_arg. */
#define LEVEL_REGS(NL, NH, NT, NG) \
    @name(NH) Register<bit<16>, lock_t>(NETLOCK_LOCKS) head##NL; \
    @name(NT) Register<bit<16>, lock_t>(NETLOCK_LOCKS) tail##NL; \
    @name(NG) Register<bit<16>, lock_t>(NETLOCK_LOCKS) gnext##NL; \
    RegisterAction<bit<16>, lock_t, bit<16>>(head##NL) head_rd##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(head##NL) head_at##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { \
            rv = v; \
            if (v == meta.h_arg || v - meta.h_arg == 0x8000) { v = v + meta.h_step; } } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(head##NL) head_eq##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { \
            rv = v; \
            if (v == meta.h_arg) { v = v + meta.h_step; } } }; \
    RegisterAction<bit<16>, lock_t, bit<32>>(head##NL) head_clr##NL = { \
        void apply(inout bit<16> v) { v = 0; } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(tail##NL) tail_rd##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(tail##NL) tail_enq##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { \
            rv = v; \
            if (v == meta.q_endx || v - meta.q_endx == 0x8000) { v = v - meta.q_endx; } else { v = v + 1; } } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(tail##NL) tail_clr##NL = { \
        void apply(inout bit<16> v) { v = 0; } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(gnext##NL) gnext_rd##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(gnext##NL) gnext_set##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { v = meta.g_arg; rv = v; } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(gnext##NL) gnext_clr##NL = { \
        void apply(inout bit<16> v) { v = 0; } }; \
    RegisterAction<bit<16>, lock_t, bit<16>>(gnext##NL) gnext_follow##NL = { \
        void apply(inout bit<16> v, out bit<16> rv) { \
            rv = v; \
            if (v == meta.g_arg) { v = v + meta.h_step; } } };


/* Container sizes for bf-p4c's PHV allocator: every byte-aligned field of the headers the ingress
 * writes (answer, recirculation state, request, admin, rack key, resubmit header) in containers
 * of its own size (a 64-bit field in two 32-bit ones, a 48-bit one as its offset aligns it).
 * Without them the copies between these headers (an answer echoes the request, a grant the slot
 * read from the pool, the next pass the pending grant) tie them all, with the metadata between,
 * into one super cluster of about 4000 bits over nine headers, and bf-p4c's slicing search
 * (phv/slicing, a depth-first search over all of its slice lists at once) did not finish it in
 * 90 minutes. A field with a container size is solitary, so each header's slice list breaks at
 * it and the largest super cluster is 928 bits (bmv2/tofino.ClusterDemand; docs/dataplane.md,
 * "The real compiler"). Left out: the admin reply's holders, xheld, xwait0 and xwait, which the
 * probe writes from slices of one lk_state read (their containers are the allocator's to pick).
 * The v1model program and the engine ignore the annotations. */
@pa_container_size("ingress", "hdr.ansx.auth", 8)
@pa_container_size("ingress", "hdr.a_eth.dmac", 16, 32)
@pa_container_size("ingress", "hdr.a_eth.smac", 32, 16)
@pa_container_size("ingress", "hdr.a_ip.sip", 32)
@pa_container_size("ingress", "hdr.a_ip.dip", 32)
@pa_container_size("ingress", "hdr.a_udp.sport", 16)
@pa_container_size("ingress", "hdr.a_udp.dport", 16)
@pa_container_size("ingress", "hdr.a_nl.op", 8)
@pa_container_size("ingress", "hdr.a_nl.mode", 8)
@pa_container_size("ingress", "hdr.a_nl.flags", 8)
@pa_container_size("ingress", "hdr.a_nl.status", 8)
@pa_container_size("ingress", "hdr.a_nl.prio", 8)
@pa_container_size("ingress", "hdr.a_nl.tenant", 16)
@pa_container_size("ingress", "hdr.a_nl.lock", 32)
@pa_container_size("ingress", "hdr.a_nl.txn_hi", 32)
@pa_container_size("ingress", "hdr.a_nl.txn_lo", 32)
@pa_container_size("ingress", "hdr.a_nl.token_hi", 32)
@pa_container_size("ingress", "hdr.a_nl.token_lo", 32)
@pa_container_size("ingress", "hdr.a_nl.ts", 32, 32)
@pa_container_size("ingress", "hdr.a_nl.lease", 32)
@pa_container_size("ingress", "hdr.a_nl.cip", 32)
@pa_container_size("ingress", "hdr.a_nl.cport", 16)
@pa_container_size("ingress", "hdr.a_nl.slots", 16)
@pa_container_size("ingress", "hdr.a_key.key", 32, 32)
@pa_container_size("ingress", "hdr.recirc.phase", 8)
@pa_container_size("ingress", "hdr.recirc.wflags", 8)
@pa_container_size("ingress", "hdr.recirc.send", 8)
@pa_container_size("ingress", "hdr.recirc.level", 8)
@pa_container_size("ingress", "hdr.recirc.cur", 16)
@pa_container_size("ingress", "hdr.recirc.left", 16)
@pa_container_size("ingress", "hdr.recirc.steps", 16)
@pa_container_size("ingress", "hdr.recirc.clevel", 8)
@pa_container_size("ingress", "hdr.recirc.cleft", 16)
@pa_container_size("ingress", "hdr.recirc.chead", 16)
@pa_container_size("ingress", "hdr.recirc.pflags", 8, 8, 8, 8)
@pa_container_size("ingress", "hdr.recirc.pslot", SLOT_W)
@pa_container_size("ingress", "hdr.recirc.pseq_hi", 32)
@pa_container_size("ingress", "hdr.recirc.pseq_lo", 32)
@pa_container_size("ingress", "hdr.recirc.a_lo", 32)
@pa_container_size("ingress", "meta.rd_port", 16)
@pa_container_size("ingress", "meta.rd_tenant", 16)
@pa_container_size("ingress", "hdr.nl.version", 8)
@pa_container_size("ingress", "hdr.nl.op", 8)
@pa_container_size("ingress", "hdr.nl.mode", 8)
@pa_container_size("ingress", "hdr.nl.flags", 8)
@pa_container_size("ingress", "hdr.nl.status", 8)
@pa_container_size("ingress", "hdr.nl.prio", 8)
@pa_container_size("ingress", "hdr.nl.tenant", 16)
@pa_container_size("ingress", "hdr.nl.lock", 32)
@pa_container_size("ingress", "hdr.nl.txn_hi", 32)
@pa_container_size("ingress", "hdr.nl.txn_lo", 32)
@pa_container_size("ingress", "hdr.nl.token_hi", 32)
@pa_container_size("ingress", "hdr.nl.token_lo", 32)
@pa_container_size("ingress", "hdr.nl.ts", 32, 32)
@pa_container_size("ingress", "hdr.nl.lease", 32)
@pa_container_size("ingress", "hdr.nl.cip", 32)
@pa_container_size("ingress", "hdr.nl.cport", 16)
@pa_container_size("ingress", "hdr.nl.slots", 16)
@pa_container_size("ingress", "hdr.admin.result", 8)
@pa_container_size("ingress", "hdr.admin.level", 8)
@pa_container_size("ingress", "hdr.admin.offset", 16)
@pa_container_size("ingress", "hdr.admin.value_hi", 32)
@pa_container_size("ingress", "hdr.admin.value_lo", 32)
@pa_container_size("ingress", "hdr.admin.now", 32)
@pa_container_size("ingress", "hdr.admin.sstate", 8)
@pa_container_size("ingress", "hdr.admin.wait0", 16)
@pa_container_size("ingress", "hdr.admin.wait1", 16)
@pa_container_size("ingress", "hdr.admin.used0", 16)
@pa_container_size("ingress", "hdr.admin.used1", 16)
@pa_container_size("ingress", "hdr.admin.buffered", 16)
@pa_container_size("ingress", "hdr.admin.done", 16)
@pa_container_size("ingress", "hdr.admin.head", 16)
@pa_container_size("ingress", "hdr.admin.tail", 16)
@pa_container_size("ingress", "hdr.admin.gnext", 16)
@pa_container_size("ingress", "hdr.admin.size", 16)
@pa_container_size("ingress", "hdr.admin.slot", 32)
@pa_container_size("ingress", "hdr.admin.gts", 32)
@pa_container_size("ingress", "meta.resub.phase", 8)
@pa_container_size("ingress", "meta.resub.off", 16)
@pa_container_size("ingress", "meta.resub.seq", 32)
#if NETLOCK_FOLD
/* The bridge, in half a (pipe_a, which writes and deparses it): every field in containers of its
 * own size (a field that shares one is tied by the copies into and out of the bridge to its
 * source's container: bf-p4c, NO_SLICING_FOUND). Not in half b, whose parser extracts it
 * (there the sizes were refused: NO_VALID_SC_ALLOC_ALIGNMENT). */
@pa_container_size("pipe_a", "ingress", "meta.br.lflags", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.f_fresh", 8)
@pa_container_size("pipe_a", "ingress", "meta.br.r_grant", 8)
@pa_container_size("pipe_a", "ingress", "meta.br.mflags", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.phase", 8)
@pa_container_size("pipe_a", "ingress", "meta.br.wflags", 8)
@pa_container_size("pipe_a", "ingress", "meta.br.level", 8)
@pa_container_size("pipe_a", "ingress", "meta.br.rq_fwd", 8)
@pa_container_size("pipe_a", "ingress", "meta.br.tlevel", 8)
@pa_container_size("pipe_a", "ingress", "meta.br.nh_port", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.l_nc", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.idx", LOCK_W)
@pa_container_size("pipe_a", "ingress", "meta.br.size0", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.size1", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.size", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.sl_idx", SLOT_W)
@pa_container_size("pipe_a", "ingress", "meta.br.h_arg", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.h_step", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.q_endx", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.q_wrapx", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.q_end0x", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.q_endxx", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.srv_udp", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.rd_port", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.rd_tenant", 16)
@pa_container_size("pipe_a", "ingress", "meta.br.srv_ip", 32)
@pa_container_size("pipe_a", "ingress", "meta.br.q_lim", 32)
@pa_container_size("pipe_a", "ingress", "meta.br.b_val", 32)
@pa_container_size("pipe_a", "ingress", "meta.br.bv", 32)
@pa_container_size("pipe_a", "ingress", "meta.br.gts", 32)
@pa_container_size("pipe_a", "ingress", "meta.br.now_b", 32)
@pa_container_size("pipe_a", "ingress", "meta.br.nh_smac", 32, 16)
@pa_container_size("pipe_a", "ingress", "meta.br.nh_dmac", 32, 16)
#endif
@pa_container_size("ingress", "hdr.adminf.result", 8)
@pa_container_size("ingress", "hdr.adminf.level", 8)
@pa_container_size("ingress", "hdr.adminf.offset", 16)
@pa_container_size("ingress", "hdr.adminf.value_hi", 32)
@pa_container_size("ingress", "hdr.adminf.value_lo", 32)
@pa_container_size("ingress", "hdr.adminf.now", 32)
/* The admin header (parsed for every admin request but a force-release, which has hdr.adminf)
 * and the answer's fields that only an answer to a host or a server writes: no pass with
 * hdr.admin valid sends one (the admin passes answer the controller with the request itself),
 * so bf-p4c may give them the same containers. Not listed: what every pass writes (the rack's
 * and the server's fields: a_key.key, a_ip.sip, a_eth, ansx.port) and what the admin probe's
 * last pass reads from the pool (a_nl.txn, ts, lease, a_ip.dip). Checked by
 * TestAdminExclusive (p4/dataplane/dpengine): the program with those fields set to a sentinel
 * when hdr.admin is valid finds them unchanged at the end of every admin pass. */
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.ansx.auth")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_udp.sport")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_udp.dport")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.op")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.mode")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.flags")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.status")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.prio")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.tenant")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.lock")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.token_hi")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.token_lo")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.cip")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.cport")
@pa_mutually_exclusive("ingress", "hdr.admin", "hdr.a_nl.slots")
/* A register's actions in one table put their answers on the action bus at one place; where
 * one answer is 1 bit in a 16-bit container and another 32 bits, the assembler refuses the
 * slot ("action bus slice (0..31) can't fit in a single slot for 16 bit access": bfas, p4c
 * 34b86e9, Tofino 2, 2026-12-01, at txn_hi_op and hold_op). The 1-bit answers of the txn
 * compares and of s_hold's in 32-bit containers, as the 32-bit reads beside them. */
@pa_container_size("ingress", "meta.txn_hi_ok", 32)
@pa_container_size("ingress", "meta.txn_lo_ok", 32)
@pa_container_size("ingress", "meta.valid", 32)
/* The same for lk_q's: q_take's 1-bit answer beside q_full's and q_sub's 16 bits (took0 was in a
 * 32-bit container beside meta.valid, 2026-12-01). */
@pa_container_size("ingress", "meta.took0", 16)
@pa_container_size("ingress", "meta.took1", 16)
/* And lk_state's: the take's and the check's 1-bit answers (state_take_s, state_take_x) in 8-bit
 * containers, where the allocator put them beside the 32-bit reads of state_rel and state_hic
 * and bfas took it (2026-12-01); a 16-bit container there is what it refuses. The front end
 * warns of a table whose register's answers are not so pinned (tnaAnswerSlots). */
@pa_container_size("ingress", "meta.grant", 8)
@pa_container_size("ingress", "meta.compat", 8)
/* The ingress's locals that half b reads are metadata in the fold (meta.bl, nl_locals_t; NL_LOCAL
 * declares a local without the fold): half a packs them into the bridge, half b's parser takes
 * them out of it. */
#if NETLOCK_FOLD
#define NL_LOCAL(T, N)
#define ptype meta.bl.ptype
#define ad meta.bl.ad
#define adm2 meta.bl.adm2
#define badreq meta.bl.badreq
#define clean_done meta.bl.clean_done
#define clean_wd meta.bl.clean_wd
#define exam meta.bl.exam
#define forced meta.bl.forced
#define nc meta.bl.nc
#define retry meta.bl.retry
#define sv_live meta.bl.sv_live
#define t_in meta.bl.t_in
#define ph meta.bl.ph
#else
#define NL_LOCAL(T, N) T N;
#endif

/* A NetLock packet that arrived on a port of another pipe than pipe 0, steered to pipe 0 as a
 * recirculated fresh pass (the steering branch's comment in the ingress's apply block). */
#define NL_STEER_PIPE0 \
            hdr.kind.setValid(); \
            hdr.kind.kind = KD_RECIRC; \
            hdr.recirc.setValid(); \
            hdr.recirc.phase = PH_FRESH; \
            hdr.recirc.wflags = 0; \
            hdr.recirc.send = 0; \
            hdr.recirc.binc_qe = 0; \
            hdr.recirc.examine = 0; \
            hdr.recirc.pclean = 0; \
            hdr.recirc.pend = 0; \
            hdr.recirc.pad1 = 0; \
            hdr.recirc.pad0 = 0; \
            hdr.recirc.in_port = ig_md.ingress_port; \
            hdr.recirc.level = 0; \
            hdr.recirc.clevel = 0; \
            hdr.recirc.cur = 0; \
            hdr.recirc.left = 0; \
            hdr.recirc.steps = 0; \
            hdr.recirc.cleft = 0; \
            hdr.recirc.chead = 0; \
            hdr.recirc.pflags = 0; \
            hdr.recirc.pslot = 0; \
            hdr.recirc.pseq_hi = 0; \
            hdr.recirc.pseq_lo = 0; \
            hdr.recirc.a_lo = 0; \
            ig_tm_md.ucast_egress_port = RECIRC_PORT; \
            ig_tm_md.bypass_egress = 1; \
            ANS_INVALID; \
            exit;

/* The writing pass's grant number (its resubmit header's). In the fold half b reads it where half a
 * put it for hold_wr, the recirculation header's pending grant number (the writing pass with a
 * grant sets it so): a copy of the resubmit header's into the bridge, written by half b's parser,
 * put the field in one cluster with the token's 32-bit arithmetic that bf-p4c could not align
 * (NO_VALID_SC_ALLOC_ALIGNMENT, 2026-12-01). */
#if NETLOCK_FOLD
#define WR_SEQ hdr.recirc.pseq_lo
#else
#define WR_SEQ meta.resub.seq
#endif
/* Its grant bit. In the fold a field of its own (meta.wr_grant), so that meta.resub, which half b
 * writes for the next writing pass, is written by the ingress alone (written by half b's parser
 * too, its byte had three sources: GreedyAllocation, 2026-12-01). */
#if NETLOCK_FOLD
#define WR_GRANT meta.wr_grant
#else
#define WR_GRANT meta.resub.grant
#endif

/* The fold: the ingress of pipe 0 runs half a (half 1), pipe 1's half b (half 2). */
control NetlockIngress(inout headers_t hdr, inout metadata_t meta,
                       in ingress_intrinsic_metadata_t ig_md,
                       in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                       inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                       inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)
#if NETLOCK_FOLD
                      (bit<2> half)
#endif
                      {

    /* ---- Per-lock state (index: the lock's index from lock_table) ----
     * lk_state pair: lo the holders, plus 0x10000 while the holder is exclusive; hi the
     *          exclusive waiters, 0x10000 for each at level 0 plus 1 for each at level 1
     * lk_wait, lk_wait_hi   waiters at level 0 and at level 1
     * lk_q, lk_q_hi   occupied slots at level 0 and at level 1
     * lk_buf   requests buffered at the server (q2)
     * lk_done  done slots not yet passed by a head (p4/netlock.p4's lk_q [63:48])
     * lk_tok, lk_tok_hi   the grant counter's low and high halves
     * lk_floor, lk_floor_hi   grants numbered at or below it are void (set by an admin
     *          reset): the low and high halves
     * lk_tok_hi ++ lk_tok and lk_floor_hi ++ lk_floor are p4/netlock.p4's lk_tok and lk_floor;
     * lk_done, lk_buf, lk_q_hi, lk_q (16 bits each, high to low) its lk_q. */
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_floor;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_floor_hi;
    Register<pair32_t, lock_t>(NETLOCK_LOCKS) lk_state;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_wait;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_wait_hi;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_tok;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_tok_hi;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_q;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_q_hi;
    Register<bit<32>, lock_t>(NETLOCK_LOCKS) lk_buf;
    Register<bit<16>, lock_t>(NETLOCK_LOCKS) lk_done;
    Register<pair32_t, bit<32>>(1) cookie;
    /* The requests seen, as p4/netlock.p4's ended: at a CRC-32 of (lock, txn) modulo the table
     * size, [31:2] a CRC-32 of (txn[31:0], lock, txn[63:32]) (not a rotation of the index's
     * field list: see p4/netlock.p4's ended_access), [1:0] 0 seen, 1 ended, 3 force-released. */
    Register<bit<32>, ended_t>(NETLOCK_ENDED) ended;

    LEVEL_REGS(0, "levels.level0.head", "levels.level0.tail", "levels.level0.gnext")
    LEVEL_REGS(1, "levels.level1.head", "levels.level1.tail", "levels.level1.gnext")

    POOL_PART("pool.s_txn_hi", "pool.s_txn_lo", "pool.s_hold", "pool.s_flags", "pool.s_lease", "pool.s_ip", "pool.s_port", "pool.s_ts_hi", "pool.s_ts_lo", "pool.s_tenant", "pool.s_gtime")

    Meter<bit<32>>(NETLOCK_TENANT_METERS, MeterType_t.PACKETS) tenant_meter;
    Counter<bit<64>, bit<32>>(8, CounterType_t.PACKETS) nl_drops;
    DirectCounter<bit<64>>(CounterType_t.PACKETS) lock_hits;
    DirectCounter<bit<64>>(CounterType_t.PACKETS_AND_BYTES) route_hits;
    Hash<ended_t>(HashAlgorithm_t.CRC32) ended_hash;   /* the CRC's low bits, as the index takes */
    Hash<bit<32>>(HashAlgorithm_t.CRC32) ended_fp;

    /* ---- Per-lock register actions ---- */
    /* lk_floor_hi, lk_floor: is the token's grant number above the floor? Each half's register
     * compares its half (a stateful ALU has two comparison units: the 64-bit comparison in one
     * pair register takes three); the pass combines them: floor_hi_cmp returns 2 above, 1
     * equal, floor_lo_cmp 1 above. */
    RegisterAction<bit<32>, lock_t, bit<8>>(lk_floor_hi) floor_hi_cmp = {
        void apply(inout bit<32> v, out bit<8> rv) {
            rv = 0;
            if (meta.tseq_hi > v) {
                rv = 2;
            } else if (meta.tseq_hi == v) {
                rv = 1;
            }
        }
    };
    RegisterAction<bit<32>, lock_t, bit<8>>(lk_floor_hi) floor_hi_set = {
        void apply(inout bit<32> v) { v = ADM_HI; }
    };
    RegisterAction<bit<32>, lock_t, bit<8>>(lk_floor) floor_lo_cmp = {
        void apply(inout bit<32> v, out bit<8> rv) {
            rv = 0;
            if (meta.tseq_lo > v) { rv = 1; }
        }
    };
    RegisterAction<bit<32>, lock_t, bit<8>>(lk_floor) floor_lo_set = {
        void apply(inout bit<32> v) { v = hdr.recirc.a_lo; }
    };

    /* lk_state: lo the holders, plus 0x10000 while the holder is exclusive; hi the exclusive
     * waiters, 0x10000 for each at level 0 plus 1 for each at level 1. Each question the
     * pass asks is then one comparison of a whole half (nobody holds: lo == 0; no exclusive
     * holder: lo < 0x10000; no exclusive waiter at level 0: hi <= 0xffff; at any level:
     * hi == 0), as a stateful ALU compares (two comparison units on Tofino 1, no slices of
     * the register value in a condition, no concatenations into it). A stateful ALU reads two
     * PHV inputs, over all of its register actions (bf-p4c: "lk_state requires more than 2
     * PHV inputs", 2026-11-30): ST_X, for lo, and meta.st_y, for hi, which the pass sets by
     * the operation, the mode and the level; the bounds that are not inputs are constants of
     * the register action the pass picks by the mode (at most four a register).
     *   state_take_s  a shared request: granted when lo < 0x10000 and hi <= st_y (the level's
     *                 bound: 0xffff at level 0, 0 at level 1, any for the grant walk, which
     *                 goes in queue order): lo += ST_X (1; 0 for a try's check). Returns 1
     *                 for a grant.
     *   state_take_x  an exclusive request: granted when lo == 0: lo += ST_X (0x10001; 0 for
     *                 a try's check). st_y is the waiter's unit in hi (0x10000 at level 0, 1
     *                 at level 1) and its sign which way it goes: an acquire's (below 2^31) is
     *                 added when it waits, a walk's examined waiter's (its negation, at or
     *                 above 2^31) when it is granted; 0 for a try's check. Returns 1 for a
     *                 grant.
     *   state_rel     lo -= ST_X, hi -= st_y; returns lo after, and the pass decides: a release
     *                 (ST_X its own count: 1, or 0x10001 for an exclusive holder; st_y 0)
     *                 learns that nobody holds now when lo before was at most the step, lo
     *                 after 0 or wrapped below 0 (bit 31: lo is below 2^17); a withdrawal
     *                 (ST_X 0, st_y an exclusive waiter's unit or 0) that the holder is
     *                 exclusive when lo >= 0x10000, bit 16. With both 0 it is the probe's read
     *                 of lo.
     *   state_hic     returns hi (the admin probe's read) and clears both halves when ST_X is
     *                 not 0 (an admin reset). */
    RegisterAction<pair32_t, lock_t, bit<1>>(lk_state) state_take_s = {
        void apply(inout pair32_t v, out bit<1> rv) {
            rv = 0;
            if (v.lo < 0x10000 && v.hi <= meta.st_y) {
                v.lo = v.lo + ST_X;
                rv = 1;
            }
        }
    };
    RegisterAction<pair32_t, lock_t, bit<1>>(lk_state) state_take_x = {
        void apply(inout pair32_t v, out bit<1> rv) {
            rv = 0;
            if (v.lo == 0) {
                v.lo = v.lo + ST_X;
                rv = 1;
                if (meta.st_y >= 0x80000000) { v.hi = v.hi + meta.st_y; }
            } else {
                if (meta.st_y < 0x80000000) { v.hi = v.hi + meta.st_y; }
            }
        }
    };
    RegisterAction<pair32_t, lock_t, bit<32>>(lk_state) state_rel = {
        void apply(inout pair32_t v, out bit<32> rv) {
            v.lo = v.lo - ST_X;
            v.hi = v.hi - meta.st_y;
            rv = v.lo;
        }
    };
    RegisterAction<pair32_t, lock_t, bit<32>>(lk_state) state_hic = {
        void apply(inout pair32_t v, out bit<32> rv) {
            rv = v.hi;
            if (ST_X != 0) {
                v.hi = 0;
                v.lo = 0;
            }
        }
    };

    /* lk_wait (level 0), lk_wait_hi (level 1): the waiters; the register actions return the
     * count after the update, its low 16 bits (a level holds at most 2^16 - 1 slots: its size
     * is 16 bits). Two registers, not a pair: a stateful ALU returns one half of a pair, and
     * the pass needs both counts. */
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait) wait0_rd = {
        void apply(inout bit<32> v, out bit<16> rv) { rv = v[15:0]; }
    };
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait) wait0_inc = {
        void apply(inout bit<32> v, out bit<16> rv) { v = v + 1; rv = v[15:0]; }
    };
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait) wait0_dec = {
        void apply(inout bit<32> v, out bit<16> rv) { v = v - 1; rv = v[15:0]; }
    };
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait) wait0_clr = {
        void apply(inout bit<32> v) { v = 0; }
    };
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait_hi) wait1_rd = {
        void apply(inout bit<32> v, out bit<16> rv) { rv = v[15:0]; }
    };
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait_hi) wait1_inc = {
        void apply(inout bit<32> v, out bit<16> rv) { v = v + 1; rv = v[15:0]; }
    };
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait_hi) wait1_dec = {
        void apply(inout bit<32> v, out bit<16> rv) { v = v - 1; rv = v[15:0]; }
    };
    RegisterAction<bit<32>, lock_t, bit<16>>(lk_wait_hi) wait1_clr = {
        void apply(inout bit<32> v) { v = 0; }
    };

    /* The queue counters, p4/netlock.p4's lk_q: the occupied slots of each level (lk_q, lk_q_hi)
     * and the requests buffered at the server (lk_buf), each in a register of its own, so that
     * every question a stateful ALU asks is one comparison of its whole value (Tofino 1: two
     * comparison units, no slices, no concatenations, one output operand). An acquire asks lk_buf
     * first (a stage before): anything buffered, or the lock paused, and it overflows there
     * (one more buffered); else its level's count takes a slot if one is free (q_take). When the
     * level is full the overflow is decided after lk_buf, so the count of buffered requests
     * grows in a second pass (PH_BINC, buf_acq forced). A push-back takes one off lk_buf first
     * (buf_dec), then a slot; when none is free it goes back to the server and a second pass
     * puts the one back. Between the two passes another request can see one buffered request
     * fewer or more than p4/netlock.p4 would: it takes a slot that came free meanwhile ahead of
     * the overflowing request, or overflows once more; exclusion and fencing do not depend on
     * these counts, and the second pass sends queue-empty if the level drained meanwhile. A
     * packet that runs to its end before the next (the tests) sees p4/netlock.p4's counts. */
    /* Four actions, each chosen by the pass's conditions (no parameter read from a field
     * written just before: a stage to bf-p4c): one more buffered (the second pass of an
     * overflow: forced), one fewer, a read, a set. */
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_buf) buf_acq = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
            v = v + 1;
        }
    };
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_buf) buf_dec = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
            if (v != 0) { v = v - 1; }
        }
    };
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_buf) buf_rd = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
        }
    };
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_buf) buf_set = {
        void apply(inout bit<32> v) { v = meta.b_val; }
    };
/* Each returns 16 bits, a count's low half (a level holds at most 2^16 - 1 slots) or 0/1, but q_take
 * one bit (1: it took a slot), which TAKE tests beside the pass's flags in one gateway. */
#define Q_LEVEL(NL, REG) \
    RegisterAction<bit<32>, lock_t, bit<1>>(REG) q_take##NL = { \
        void apply(inout bit<32> v, out bit<1> rv) { \
            rv = 0; \
            if (v < meta.q_lim) { v = v + 1; rv = 1; } } }; \
    RegisterAction<bit<32>, lock_t, bit<16>>(REG) q_sub##NL = { \
        void apply(inout bit<32> v, out bit<16> rv) { v = v - meta.q_dec##NL; rv = v[15:0]; } }; \
    RegisterAction<bit<32>, lock_t, bit<16>>(REG) q_full##NL = { \
        void apply(inout bit<32> v, out bit<16> rv) { \
            rv = 0; \
            if (v >= meta.q_lim) { rv = 1; } } }; \
    RegisterAction<bit<32>, lock_t, bit<32>>(REG) q_clr##NL = { \
        void apply(inout bit<32> v) { v = 0; } };
    Q_LEVEL(0, lk_q)
    Q_LEVEL(1, lk_q_hi)

    /* lk_done: done_inc counts one more (a release whose slot the head did not pass, a
     * withdrawal), done_dec one fewer (the head moving over a done slot), each returning the
     * count after; done_rd reads it, done_clr clears it. Two actions, not one that adds a
     * parameter: the parameter would be written in the stage before, by the pass's
     * conditions, and the table choosing the action (done_op) reads those itself. */
    RegisterAction<bit<16>, lock_t, bit<16>>(lk_done) done_inc = {
        void apply(inout bit<16> v, out bit<16> rv) { v = v + 1; rv = v; }
    };
    RegisterAction<bit<16>, lock_t, bit<16>>(lk_done) done_dec = {
        void apply(inout bit<16> v, out bit<16> rv) { v = v - 1; rv = v; }
    };
    RegisterAction<bit<16>, lock_t, bit<16>>(lk_done) done_rd = {
        void apply(inout bit<16> v, out bit<16> rv) { rv = v; }
    };
    RegisterAction<bit<16>, lock_t, bit<16>>(lk_done) done_clr = {
        void apply(inout bit<16> v) { v = 0; }
    };

    /* lk_tok: the next grant number's low half (0 is skipped: slots keep the low 32 bits, and
     * 0 there means "not granted"). Returns the low half before. */
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_tok) tok_next = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
            /* v + 1 == 0, not v == 0xffffffff: bf-p4c (Tofino 1) writes that comparison's constant
             * as -4294967295, which bfas refuses ("too large for stateful alu", 2026-12-01) */
            if (v + 1 == 0) { v = 1; } else { v = v + 1; }
        }
    };
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_tok) tok_rd = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    /* The admin token base's low half, read from the recirculation header itself: a copy into
     * metadata under the pass's conditions would be a step of its own before the register. */
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_tok) tok_set = {
        void apply(inout bit<32> v) { v = hdr.recirc.a_lo; }
    };
    /* lk_tok_hi: the carry of lk_tok. */
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_tok_hi) tokhi_inc = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + 1; rv = v; }
    };
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_tok_hi) tokhi_rd = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    RegisterAction<bit<32>, lock_t, bit<32>>(lk_tok_hi) tokhi_set = {
        void apply(inout bit<32> v) { v = ADM_HI; }
    };

    RegisterAction<pair32_t, bit<32>, bit<32>>(cookie) cookie_set = {
        void apply(inout pair32_t v) { v.hi = hdr.admin.value_hi; v.lo = hdr.admin.value_lo; }
    };
    RegisterAction<pair32_t, bit<32>, bit<32>>(cookie) cookie_hi = {
        void apply(inout pair32_t v, out bit<32> rv) { rv = v.hi; }
    };
    RegisterAction<pair32_t, bit<32>, bit<32>>(cookie) cookie_lo = {
        void apply(inout pair32_t v, out bit<32> rv) { rv = v.lo; }
    };

    /* ended: look up and record the request as seen unless it ended (an acquire about to be
     * handled); look up only; record as ended (ended_record: fp + 1, which is fp | 1 as fp's
     * low two bits are clear) or force-released (ended_expire: fp + 3). The lookups return the
     * cell minus fp, which the pass compares with constants after the register: 0 seen and not
     * ended, 1 ended, 3 force-released (a cell of another fingerprint gives none of them: its
     * low two bits are the tag). No fp | 1 and fp | 3 fields: the stateful ALU compares and
     * writes v - fp and fp + c itself (two comparison units; a third comparison, with fp, would
     * not fit it, hence the difference as the result). ended_lookup's 0 is not read: the retry
     * passes use only ended and force-released. */
    RegisterAction<bit<32>, ended_t, bit<32>>(ended) ended_seen = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v - meta.fp;
            if (v - meta.fp != 1 && v - meta.fp != 3) {
                v = meta.fp;
            }
        }
    };
    RegisterAction<bit<32>, ended_t, bit<32>>(ended) ended_lookup = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v - meta.fp;
        }
    };
    RegisterAction<bit<32>, ended_t, bit<8>>(ended) ended_record = {
        void apply(inout bit<32> v) { v = meta.fp + 1; }
    };
    RegisterAction<bit<32>, ended_t, bit<8>>(ended) ended_expire = {
        void apply(inout bit<32> v) { v = meta.fp + 3; }
    };

    /* ---- Tables (as p4/netlock.p4) ---- */
    action rack_unset() {
        meta.rack_ok = 0;
    }
    action set_rack(@secret bit<64> key, bit<32> switch_ip, bit<48> switch_mac, bit<32> default_lease,
                    bit<32> max_lease) {
        meta.rack_ok = 1;
        /* The rack's key, address and MAC go straight into the answer's fields a message to a
         * server carries (ans_to_server), not into metadata copied there: three fields fewer
         * in the ingress's PHV. An answer to a client overwrites the source address
         * (ans_to_client) and a routed one both MACs (the next hop); the key stays in a_key,
         * which the egress cuts off unless the answer is a server's (write_answer). */
        hdr.a_key.key = key;
        hdr.a_ip.sip = switch_ip;
        hdr.a_eth.smac = switch_mac;
        meta.lease = default_lease;   /* a request's lease unless it asks for one (below) */
        meta.max_lease = max_lease;
    }
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
        meta.idx = (lock_t)index;
        meta.left0 = (slot_t)left0;
        meta.size0 = size0;
        meta.left1 = (slot_t)left1;
        meta.size1 = size1;
        meta.server = server;
        /* The slot indices a pass may use, each region start plus a position (its wrap bit
         * cut off), added here with the action data: one add each, in the table's stage, so
         * that choosing the slot later is a choice and not an add after it. (Added in an
         * action after the table, from the region starts in the PHV, they tied the positions
         * and the slot numbers into one cluster of 27 operands, more than a MAU group holds.) */
        meta.at_off0 = (slot_t)left0 + meta.o_res;
        meta.at_off1 = (slot_t)left1 + meta.o_res;
        meta.at_cur0 = (slot_t)left0 + meta.o_cur;
        meta.at_cur1 = (slot_t)left1 + meta.o_cur;
        meta.at_ch0 = (slot_t)left0 + meta.o_ch;
        meta.at_ch1 = (slot_t)left1 + meta.o_ch;
        /* The token's offset into each level's region (the token's level, tok_room and the
         * gateways below), with the action data: a stage before tok_room, not two (a miss
         * leaves both 0, and the token names no level: its sizes are 0). Complemented:
         * left + ~tslot = ~(tslot - left). bf-p4c takes no action data as a subtraction's
         * second operand ("Second operand of arithmetic subtraction cannot be sourced from
         * action data", both targets, 2026-11-30 at a4e6788), so tslot - left is not an
         * instruction here; tok_room undoes the complement with ~size (below). */
        meta.t_off = (slot_t)left0 + meta.ntslot;
        meta.left = (slot_t)left1 + meta.ntslot;
        meta.nsize0 = ~(slot_t)size0;
        meta.nsize1 = ~(slot_t)size1;
        lock_hits.count();
    }
    action lock_pause(bit<32> index, bit<32> left0, bit<16> size0, bit<32> left1, bit<16> size1,
                      bit<16> server) {
        lock_hit(index, left0, size0, left1, size1, server);
        meta.paused = 1;
    }
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
        hdr.ansx.port = port;   /* a server message's port (a routed answer's: the next hop's) */
        hdr.a_eth.dmac = mac;   /* a server message's destination (as set_rack's fields) */
    }
    action server_unknown() {
        meta.srv_ok = 0;
    }
    table lock_servers {
        key = { meta.server : exact @name("server"); }
        actions = { set_server; server_unknown; }
        default_action = server_unknown();
        size = 256;
    }

    action tenant_limit(bit<32> meter_index) {
        meta.meter_color = tenant_meter.execute(meter_index);
        meta.quota = 1;
    }
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

    /* The pass's work (P_*, 0 for none): one 4-bit field, set once, by pass_type, that every
     * later stage tests; a 1-bit flag per kind of pass (fifteen, live to the last stage) did
     * not fit the PHV (bf-p4c, 2026-11-30). badreq: an acquire with txn 0, rejected. Declared
     * here, not in the apply block, as pass_type's actions write them. */
    NL_LOCAL(bit<4>, ptype)
    NL_LOCAL(bit<1>, badreq)
    action pass_is(bit<4> t) {
        ptype = t;
        badreq = 0;
    }
    action pass_forced() {   /* an admin force-release of a lock the switch has: a release */
        ptype = P_REL;
        badreq = 0;
        meta.wflags = meta.wflags | WF_FORCED;
    }
    action pass_bad() {
        ptype = 0;
        badreq = 1;
    }
    /* Which pass type: one table whose const entries are, first match first, the branches of
     * an if-else chain on the packet's kind, the lock's entry and server, the phase and the
     * request (LIVE_KIND: a push-back, an admin request, or a lock request whose lock and
     * server are known). One logical table: the chain was some forty gateways and tables in
     * the stages after the lock's server, and the program had about 405 logical tables where
     * a Tofino 2 pipe holds 320 (16 a stage; bf-p4c filled every stage of its first placement
     * round, 2026-11-30 at 5580d82; docs/dataplane.md, "The real compiler"). The other
     * const-entry tables below are there for the same count. Keys are read for every packet:
     * a packet without hdr.nl has kind K_ROUTE, which no entry names. */
    table pass_type {
        key = {
            meta.kind       : ternary @name("kind");
            meta.hit        : ternary @name("hit");
            meta.srv_ok     : ternary @name("srv_ok");
            meta.phase      : ternary @name("phase");
            hdr.nl.op       : ternary @name("op");
            hdr.nl.flags    : ternary @name("flags");
            meta.wflags     : ternary @name("wflags");
            hdr.nl.txn_hi   : ternary @name("txn_hi");
            hdr.nl.txn_lo   : ternary @name("txn_lo");
            hdr.nl.token_hi : ternary @name("token_hi");
            hdr.nl.token_lo : ternary @name("token_lo");
            hdr.nl.status   : ternary @name("status");
        }
        actions = { pass_is; pass_forced; pass_bad; }
        const default_action = pass_is(0);
        /* kind, hit, srv_ok, phase, op, flags, wflags, txn_hi, txn_lo, token_hi, token_lo, status */
        const entries = {
            /* the later passes of a live kind, by their phase */
            (K_PB, _, _, PH_WRITE, _, _, _, _, _, _, _, _) : pass_is(P_WRITE);
            (K_ADMIN, _, _, PH_WRITE, _, _, _, _, _, _, _, _) : pass_is(P_WRITE);
            (K_LOCK, 1, 1, PH_WRITE, _, _, _, _, _, _, _, _) : pass_is(P_WRITE);
            (K_PB, _, _, PH_SEND, _, _, _, _, _, _, _, _) : pass_is(P_SEND);
            (K_ADMIN, _, _, PH_SEND, _, _, _, _, _, _, _, _) : pass_is(P_SEND);
            (K_LOCK, 1, 1, PH_SEND, _, _, _, _, _, _, _, _) : pass_is(P_SEND);
            (K_PB, _, _, PH_GRANT, _, _, _, _, _, _, _, _) : pass_is(P_GRANT);
            (K_ADMIN, _, _, PH_GRANT, _, _, _, _, _, _, _, _) : pass_is(P_GRANT);
            (K_LOCK, 1, 1, PH_GRANT, _, _, _, _, _, _, _, _) : pass_is(P_GRANT);
            (K_PB, _, _, PH_CLEAN, _, _, _, _, _, _, _, _) : pass_is(P_CLEAN);
            (K_ADMIN, _, _, PH_CLEAN, _, _, _, _, _, _, _, _) : pass_is(P_CLEAN);
            (K_LOCK, 1, 1, PH_CLEAN, _, _, _, _, _, _, _, _) : pass_is(P_CLEAN);
            (K_PB, _, _, PH_WDRAW, _, _, _, _, _, _, _, _) : pass_is(P_WD);
            (K_ADMIN, _, _, PH_WDRAW, _, _, _, _, _, _, _, _) : pass_is(P_WD);
            (K_LOCK, 1, 1, PH_WDRAW, _, _, _, _, _, _, _, _) : pass_is(P_WD);
            (K_PB, _, _, PH_BINC, _, _, _, _, _, _, _, _) : pass_is(P_BINC);
            (K_ADMIN, _, _, PH_BINC, _, _, _, _, _, _, _, _) : pass_is(P_BINC);
            (K_LOCK, 1, 1, PH_BINC, _, _, _, _, _, _, _, _) : pass_is(P_BINC);
            /* a push-back: without a request (txn 0), or an acquire */
            (K_PB, _, _, PH_FRESH, _, _, _, 0, 0, _, _, _) : pass_is(P_PBNONE);
            (K_PB, _, _, PH_FRESH, _, _, _, _, _, _, _, _) : pass_is(P_ACQ);
            /* an acquire: txn 0 is a bad request; a retried try not in the queue is checked
             * again as a new try; a retransmission or a copy seen before walks the queue */
            (K_LOCK, 1, 1, PH_FRESH, OP_ACQUIRE, _, _, 0, 0, _, _, _) : pass_bad();
            (K_LOCK, 1, 1, PH_ACQ, OP_ACQUIRE, FL_TRY &&& FL_TRY, WF_RETRYMISS &&& (WF_RETRYMISS | WF_NOMETER), _, _, _, _, _) : pass_is(P_TRY);
            (K_LOCK, 1, 1, PH_ACQ, OP_ACQUIRE, _, _, _, _, _, _, _) : pass_is(P_ACQ);
            (K_LOCK, 1, 1, PH_RWALK, OP_ACQUIRE, _, _, _, _, _, _, _) : pass_is(P_RW);
            (K_LOCK, 1, 1, PH_FRESH, OP_ACQUIRE, FL_RETRY &&& FL_RETRY, _, _, _, _, _, _) : pass_is(P_RW0);
            (K_LOCK, 1, 1, PH_FRESH, OP_ACQUIRE, _, WF_DUP &&& WF_DUP, _, _, _, _, _) : pass_is(P_RW0);
            (K_LOCK, 1, 1, PH_FRESH, OP_ACQUIRE, FL_TRY &&& FL_TRY, _, _, _, _, _, _) : pass_is(P_TRY);
            (K_LOCK, 1, 1, PH_FRESH, OP_ACQUIRE, _, _, _, _, _, _, _) : pass_is(P_ACQ);
            /* a release: without a token, a withdrawal */
            (K_LOCK, 1, 1, PH_FRESH, OP_RELEASE, _, _, _, _, 0, 0, _) : pass_is(P_WD0);
            (K_LOCK, 1, 1, PH_FRESH, OP_RELEASE, _, _, _, _, _, _, _) : pass_is(P_REL);
            (K_LOCK, 1, 1, PH_FRESH, OP_PROBE, _, _, _, _, _, _, _) : pass_is(P_PROBE);
            /* an admin request's first pass: a force-release of a known lock is a release */
            (K_ADMIN, 1, 1, PH_FRESH, _, _, _, _, _, _, _, ADM_FORCE) : pass_forced();
            (K_ADMIN, _, _, PH_FRESH, _, _, _, _, _, _, _, _) : pass_is(P_ADMIN);
        }
        size = 64;
    }

    /* The pool's s_hold, one table: each of its uses is an action the const entries choose,
     * first match first (one table on the register instead of three, each with its gateway,
     * that bf-p4c must all place in the register's stage). */
    action hold_write() { hold_wr.execute(meta.hd_idx); }
    action hold_check() { meta.valid = hold_chk.execute(meta.hd_idx); }
    /* A release clears the hold its token names and says so (meta.valid): the comparison
     * in the stateful ALU, not in a gateway after it (bf-p4c 9.13.4, Tofino 2, 2026-12-01:
     * "Compiler Bug: ... cannot find corresponding slice, field: meta.tseq_lo" at the gateway
     * `SV_SEQ == meta.tseq_lo && meta.tseq_lo != 0`, in its physical live ranges; a read of the
     * slot's grant number for the walk and the probe is hold_rd's). */
    action hold_release() { meta.valid = hold_rel.execute(meta.hd_idx); }
    action hold_read() { SV_SEQ = hold_rd.execute(meta.hd_idx); }
    table hold_op {
        key = {
            ptype           : ternary @name("ptype");
            hdr.recirc.pend : ternary @name("pend");
            meta.kind       : ternary @name("kind");
            meta.phase      : ternary @name("phase");
            meta.tlevel     : ternary @name("tlevel");
            meta.fl_hi      : ternary @name("fl_hi");
            meta.fl_lo      : ternary @name("fl_lo");
            meta.txn_hi_ok  : ternary @name("txn_hi_ok");
            meta.txn_lo_ok  : ternary @name("txn_lo_ok");
        }
        actions = { hold_write; hold_check; hold_release; hold_read; NoAction; }
        const default_action = NoAction();
        /* ptype, pend, kind, phase, tlevel, fl_hi, fl_lo, txn_hi_ok, txn_lo_ok */
        const entries = {
            /* the writing pass; a grant walk's pending grant */
            (P_WRITE, _, _, _, _, _, _, _, _) : hold_write();
            (P_GRANT, 1, _, _, _, _, _, _, _) : hold_write();
            /* a lease-probe or a release whose token names a level (tlevel != 2, REL_GO), is
             * at or above the floor (PRE_OK: the floor's high half below, or equal and the low
             * half below or equal) and whose slot holds its txn (TXN_OK) */
            (P_PROBE, _, _, _, 2, _, _, _, _) : NoAction();
            (P_PROBE, _, _, _, _, 2, _, 1, 1) : hold_check();
            (P_PROBE, _, _, _, _, 1, 1, 1, 1) : hold_check();
            (P_REL, _, _, _, 2, _, _, _, _) : NoAction();
            (P_REL, _, _, _, _, 2, _, 1, 1) : hold_release();
            (P_REL, _, _, _, _, 1, 1, 1, 1) : hold_release();
            /* reads: a retry walk, the probe's third pass */
            (P_RW, _, _, _, _, _, _, _, _) : hold_read();
            (_, _, K_ADMIN, PH_PROBE3, _, _, _, _, _) : hold_read();
        }
        size = 16;
    }

    /* Written in the apply block, read by the tables below (their keys), so the control's:
     * ad, the admin operation a first admin pass carries out (AD_*, 0 if none); took0 and
     * took1, q_take's answers (1: the acquire took a slot at that level); w0 and w1, the
     * waiters at each level as wait0_op's and wait1_op's register actions return them (0 if
     * none runs). */
    NL_LOCAL(bit<3>, ad)
    bit<16> w0;
    bit<16> w1;
    /* adv: the head moved (a release's or a clean walk's); clean_wd: a clean walk's slot at the
     * head is withdrawn; g0 and g1: each level's gnext as gnext0_op's and gnext1_op's return
     * it (0 if none runs) */
    bit<1>  adv;
    NL_LOCAL(bit<1>, clean_wd)
    bit<16> g0;
    bit<16> g1;
    /* head: the worked level's head as head_op returned it (meta.hv); qdone: done slots
     * follow it (meta.dv != 0) */
    bit<16> head;
    bit<1>  qdone;
    /* exam: a grant walk examines the slot at recirc.cur; pass_on: the walk may go past it;
     * nc: the position after recirc.cur (QNEXT) */
    NL_LOCAL(bit<1>, exam)
    bit<1>  pass_on;
    NL_LOCAL(bit<16>, nc)
    /* hi: a grant's token's high half, the grant number's, one less when its low half is above
     * the counter's (it was taken before the low half wrapped). One variable for the two
     * passes that compute it in the decisions (writing, retry walk): they exclude each other
     * (the third admin probe pass's is hi3, before the decisions).
     * Written once in each, in the branches of the comparison (a default overridden later is
     * a stage more to bf-p4c). */
    bit<32> hi;
    bit<32> hi3;   /* the third admin probe pass's, from ADM_HI: computed before the decisions */
    /* acq_go: an acquire or try goes on (not a copy, within its quota); st_to: what state_rel
     * answered (1 a release's, 2 a withdrawal's) */
    bit<1>  acq_go;
    bit<2>  st_to;
    /* forced: the pass is an admin force-release's; finished: a release or withdrawal ended
     * with no walk and no clean walk; walk, clean: what comes next (a grant walk, a clean
     * walk): next_step's keys, set by the decisions */
    NL_LOCAL(bit<1>, forced)
    bit<1>  finished;
    bit<1>  walk;
    bit<1>  clean;
    /* req_flags' and tok_lvl's answers (their comments) */
    bit<1>  has_ts;
    bit<1>  fresh;
    NL_LOCAL(bit<1>, retry)
    NL_LOCAL(bit<1>, t_in)
    bit<1>  t_end;
    /* sv_flags' answer: the slot view's state is live (USED, in gnext's stage); kind_fix's:
     * the admin passes after the first (adm2) */
    NL_LOCAL(bit<1>, sv_live)
    NL_LOCAL(bit<1>, adm2)
    /* qe_pick's answer: queue-empty is due; ov_pick's: lk_buf one more in the next pass
     * (PH_BINC), and a full level decided it (check queue-empty there) */
    bit<1>  qe;
    bit<1>  binc;
    bit<1>  binc_qe;
    /* clean_done: a clean walk's slot at the head is done (released or withdrawn) */
    NL_LOCAL(bit<1>, clean_done)

    /* The request's flags, one table with const entries, first match first (five logical
     * tables as ifs): has_ts, its timestamp is not 0 (a 64-bit key: as a gateway's test it
     * was two, a gateway reads at most 4 bytes and 12 bits of PHV); fresh, the packet's first
     * pass (phase PH_FRESH); retry, it carries FL_RETRY. */
    action req_is(bit<1> f, bit<1> r, bit<1> ts) {
        fresh = f;
        retry = r;
        has_ts = ts;
    }
    table req_flags {
        key = {
            meta.phase    : ternary @name("phase");
            hdr.nl.flags  : ternary @name("flags");
            hdr.nl.ts     : ternary @name("ts");
        }
        actions = { req_is; }
        const default_action = req_is(0, 0, 1);
        /* phase, flags, ts */
        const entries = {
            (PH_FRESH, FL_RETRY &&& FL_RETRY, 0) : req_is(1, 1, 0);
            (PH_FRESH, FL_RETRY &&& FL_RETRY, _) : req_is(1, 1, 1);
            (PH_FRESH, _, 0) : req_is(1, 0, 0);
            (PH_FRESH, _, _) : req_is(1, 0, 1);
            (_, FL_RETRY &&& FL_RETRY, 0) : req_is(0, 1, 0);
            (_, FL_RETRY &&& FL_RETRY, _) : req_is(0, 1, 1);
            (_, _, 0) : req_is(0, 0, 0);
        }
        size = 8;
    }
    /* The token's level (meta.tlevel: 0 or 1, 2 for none), t_in (it names a level: a != in a
     * condition that ORs several tests is "gateway condition too complex" to bf-p4c,
     * 1c9e8e9) and t_end (its room there is 1), from its room in level 0's region (t_off,
     * 0 when it is not there) and in level 1's (left), one table with const entries, first
     * match first (seven logical tables as ifs). */
    action tok_lvl_is(bit<8> l, bit<1> tin, bit<1> tend) {
        meta.tlevel = l;
        t_in = tin;
        t_end = tend;
    }
    table tok_lvl {
        key = {
            meta.t_off : ternary @name("t_off");
            meta.left  : ternary @name("left");
        }
        actions = { tok_lvl_is; }
        const default_action = tok_lvl_is(0, 1, 0);
        /* t_off, left */
        const entries = {
            (1, _) : tok_lvl_is(0, 1, 1);
            (0, 0) : tok_lvl_is(2, 0, 0);
            (0, 1) : tok_lvl_is(1, 1, 1);
            (0, _) : tok_lvl_is(1, 1, 0);
        }
        size = 8;
    }
    /* Whether the head moved (adv), and the worked level's occupied count to decrement with
     * it (q_dec0, q_dec1): head_at's (HOP_AT, a valid release) when the head was at h_arg's
     * offset in either lap (meta.hdiff = head - h_arg, 0 in its low 15 bits), head_eq's
     * (HOP_EQ, a clean walk with slots left over a slot that is not live) when it was at
     * h_arg. One table with const entries (eight logical tables as ifs, two of them gateways
     * that merged with none). */
    action adv_dec0() {
        adv = 1;
        meta.q_dec0 = 1;
    }
    action adv_dec1() {
        adv = 1;
        meta.q_dec1 = 1;
    }
    table hop_pick {
        key = {
            ptype            : ternary @name("ptype");
            meta.valid       : ternary @name("valid");
            hdr.recirc.cleft : ternary @name("cleft");
            SV_STATE         : ternary @name("sv_state");
            meta.hdiff       : ternary @name("hdiff");
            meta.level       : ternary @name("level");
        }
        actions = { adv_dec0; adv_dec1; NoAction; }
        const default_action = NoAction();
        /* ptype, valid, cleft, sv_state, hdiff, level */
        const entries = {
            (P_REL, 1, _, _, 0 &&& 0x7fff, 0) : adv_dec0();
            (P_REL, 1, _, _, 0 &&& 0x7fff, _) : adv_dec1();
            (P_CLEAN, _, 0, _, _, _) : NoAction();
            (P_CLEAN, _, _, SS_LIVE, _, _) : NoAction();
            (P_CLEAN, _, _, _, 0, 0) : adv_dec0();
            (P_CLEAN, _, _, _, 0, _) : adv_dec1();
        }
        size = 8;
    }
    /* The request normalized, one table with const entries (seven logical tables as ifs).
     * The requester's address: a push-back's client (cip, cport, as the server sent them,
     * rq_fwd), else the datagram's source, written into the request's cip and cport in place
     * (every pass: the same again after a recirculation, the packet as it came after a
     * resubmission), so that the request's fields name the requester in every pass with no
     * metadata copy. A lock request goes out only as the answers built from it; an admin
     * request goes back to the controller, so its cip and cport stay as they came (its passes
     * use the requester's address only for the route lookup). A lease of 0 keeps the rack's
     * default (set by the rack table); any other is clamped to the rack's maximum (min: a
     * Tofino gateway compares a field with a constant only). A routed packet has none of
     * these. forced: the pass is an admin force-release's (WF_FORCED), for every kind. */
    action rn_route(bit<1> f) { forced = f; }
    action rn_pb(bit<1> f) {
        meta.rq_fwd = 1;
        forced = f;
    }
    action rn_pb_l(bit<1> f) {
        meta.rq_fwd = 1;
        meta.lease = min(hdr.nl.lease, meta.max_lease);
        forced = f;
    }
    action rn_lock(bit<1> f) {
        hdr.nl.cip = hdr.ipv4.src;
        hdr.nl.cport = hdr.udp.src;
        meta.rq_fwd = 0;
        forced = f;
    }
    action rn_lock_l(bit<1> f) {
        hdr.nl.cip = hdr.ipv4.src;
        hdr.nl.cport = hdr.udp.src;
        meta.rq_fwd = 0;
        meta.lease = min(hdr.nl.lease, meta.max_lease);
        forced = f;
    }
    action rn_other(bit<1> f) {
        meta.rq_fwd = 0;
        forced = f;
    }
    action rn_other_l(bit<1> f) {
        meta.rq_fwd = 0;
        meta.lease = min(hdr.nl.lease, meta.max_lease);
        forced = f;
    }
    table req_norm {
        key = {
            meta.kind    : ternary @name("kind");
            hdr.nl.lease : ternary @name("lease");
            meta.wflags  : ternary @name("wflags");
        }
        actions = { rn_route; rn_pb; rn_pb_l; rn_lock; rn_lock_l; rn_other; rn_other_l; }
        const default_action = rn_other_l(0);
        /* kind, lease, wflags */
        const entries = {
            (K_ROUTE, _, WF_FORCED &&& WF_FORCED) : rn_route(1);
            (K_ROUTE, _, _) : rn_route(0);
            (K_PB, 0, WF_FORCED &&& WF_FORCED) : rn_pb(1);
            (K_PB, 0, _) : rn_pb(0);
            (K_PB, _, WF_FORCED &&& WF_FORCED) : rn_pb_l(1);
            (K_PB, _, _) : rn_pb_l(0);
            (K_LOCK, 0, WF_FORCED &&& WF_FORCED) : rn_lock(1);
            (K_LOCK, 0, _) : rn_lock(0);
            (K_LOCK, _, WF_FORCED &&& WF_FORCED) : rn_lock_l(1);
            (K_LOCK, _, _) : rn_lock_l(0);
            (_, 0, WF_FORCED &&& WF_FORCED) : rn_other(1);
            (_, 0, _) : rn_other(0);
            (_, _, WF_FORCED &&& WF_FORCED) : rn_other_l(1);
        }
        size = 16;
    }
    /* The pass: as received, resubmitted (resubmit header) or recirculated (its header): its
     * phase, the port it came in on, the work flags; a pass as received (or resubmitted as
     * received) gets a fresh recirculation header. One table with const entries (five logical
     * tables as ifs); each field written once (two writes of a field are two stages to
     * bf-p4c: an output dependency). */
#define PASS_FRESH_RECIRC(PORT) \
        meta.in_port = PORT; \
        meta.wflags = 0; \
        hdr.recirc.setValid(); \
        hdr.recirc.phase = PH_FRESH; \
        hdr.recirc.wflags = 0; \
        hdr.recirc.send = 0; \
        hdr.recirc.pad0 = 0; \
        hdr.recirc.pad1 = 0; \
        hdr.recirc.in_port = PORT; \
        hdr.recirc.pend = 0; \
        hdr.recirc.examine = 0; \
        hdr.recirc.pclean = 0; \
        hdr.recirc.binc_qe = 0;
/* A recirculated pass keeps binc_qe: the count pass (PH_BINC) that an overflow at a full level
 * asks for reads it in qe_pick (cleared there, it sent no queue-empty when the level drained in
 * between: TestTNAPassesInterleaved). */
#define PASS_RECIRC \
        meta.in_port = hdr.recirc.in_port; \
        meta.wflags = hdr.recirc.wflags;
/* The fold: the bridge made valid, and whether the pass came in fresh (for half b's writing
 * pass: RESUB_SET). In pass_in's actions: after the exits at the top of the apply block (whose
 * packets leave half a without the bridge) and before the bridge's fields are written (f_fresh
 * here, the rest at half a's end: setValid leaves a header's fields undefined); not in
 * the run that makes the answer valid (bf-p4c put the validity bits of that run's headers and
 * the bridge's in one container it could not allocate, GreedyAllocation, 2026-12-01). The pass's
 * way to half b, through pipe 1's recirculation port, here too: the run at half a's end that
 * writes the bridge has two hashes, and its action can take no action data (a constant port is
 * one: bf-p4c, "requires hash, which can only be done through the hit pathway"). */
#if NETLOCK_FOLD
#define PASS_FRESH(F) meta.br.setValid(); meta.br.f_fresh = F; \
    ig_tm_md.ucast_egress_port = RECIRC_PORT_B; ig_tm_md.bypass_egress = 1;
#define PASS_RESUBMITTED meta.wr
#else
#define PASS_FRESH(F)
#define PASS_RESUBMITTED ig_md.resubmit_flag
#endif
    action pi_resub_recirc() {
        meta.phase = meta.resub.phase;
        PASS_RECIRC
        PASS_FRESH(0)
    }
    action pi_resub_fresh() {
        meta.phase = meta.resub.phase;
        PASS_FRESH_RECIRC(ig_md.ingress_port)
        PASS_FRESH(1)
    }
    action pi_recirc() {
        meta.phase = hdr.recirc.phase;
        PASS_RECIRC
        PASS_FRESH(0)
    }
    action pi_fresh() {
        meta.phase = PH_FRESH;
        PASS_FRESH_RECIRC(ig_md.ingress_port)
        PASS_FRESH(1)
    }
#if NETLOCK_FOLD
    /* The fold's writing pass of a pass that came in fresh: as pi_resub_fresh, the port the
     * request came in on from the recirculation header half b sent it with. */
    action pi_write_fresh() {
        meta.phase = meta.resub.phase;
        PASS_FRESH_RECIRC(hdr.recirc.in_port)
        PASS_FRESH(1)
    }
#endif
    table pass_in {
        key = {
            PASS_RESUBMITTED     : exact @name("resubmit");
            hdr.recirc.isValid() : exact @name("recirc");
        }
#if NETLOCK_FOLD
        actions = { pi_resub_recirc; pi_resub_fresh; pi_recirc; pi_fresh; pi_write_fresh; }
#else
        actions = { pi_resub_recirc; pi_resub_fresh; pi_recirc; pi_fresh; }
#endif
        const default_action = pi_fresh();
        const entries = {
#if NETLOCK_FOLD
            (2, true) : pi_write_fresh();
#endif
            (1, true) : pi_resub_recirc();
            (1, false) : pi_resub_fresh();
            (0, true) : pi_recirc();
        }
        size = 4;
    }
    /* After pass_type: the admin passes after the first (adm2), by the phase; a lock request
     * whose lock or server is not known routed (kind K_ROUTE: LOCK_OK). One table with const
     * entries (four logical tables as ifs, with the probe's second and third pass's flags,
     * which the tables keyed on the kind and phase made dead). */
    action adm_is(bit<1> a2) { adm2 = a2; }
    action kind_route() {
        adm2 = 0;
        meta.kind = K_ROUTE;
    }
    table kind_fix {
        key = {
            meta.kind   : ternary @name("kind");
            meta.phase  : ternary @name("phase");
            meta.hit    : ternary @name("hit");
            meta.srv_ok : ternary @name("srv_ok");
        }
        actions = { adm_is; kind_route; }
        const default_action = adm_is(0);
        /* kind, phase, hit, srv_ok */
        const entries = {
            (K_ADMIN, PH_PROBE2, _, _) : adm_is(1);
            (K_ADMIN, PH_PROBE3, _, _) : adm_is(1);
            (K_ADMIN, PH_RESET2, _, _) : adm_is(1);
            (K_ADMIN, PH_TBASE2, _, _) : adm_is(1);
            (K_ADMIN, PH_COOKIE2, _, _) : adm_is(1);
            (K_LOCK, _, 0, _) : kind_route();
            (K_LOCK, _, _, 0) : kind_route();
        }
        size = 8;
    }
    /* The slot view's state (SV_STATE) as the pass reads it: live (sv_live); a withdrawal found
     * its request live (found: flags_wdraw marked the slot withdrawn; the slot view keeps the
     * state it read: no later test of this pass reads it, and the passes after read the flags
     * again); a clean walk's slot at the head is done (released or withdrawn: clean_done),
     * withdrawn (clean_wd). One table with const entries (six logical tables as ifs). */
    action sv_is(bit<1> live, bit<1> fnd, bit<1> done, bit<1> wd) {
        sv_live = live;
        meta.found = fnd;
        clean_done = done;
        clean_wd = wd;
    }
    table sv_flags {
        key = {
            ptype            : ternary @name("ptype");
            meta.txn_hi_ok   : ternary @name("txn_hi_ok");
            meta.txn_lo_ok   : ternary @name("txn_lo_ok");
            hdr.recirc.cleft : ternary @name("cleft");
            SV_STATE         : ternary @name("sv_state");
        }
        actions = { sv_is; }
        const default_action = sv_is(0, 0, 0, 0);
        /* ptype, txn_hi_ok, txn_lo_ok, cleft, sv_state */
        const entries = {
            (P_WD, 1, 1, _, SS_LIVE) : sv_is(1, 1, 0, 0);
            (_, _, _, _, SS_LIVE) : sv_is(1, 0, 0, 0);
            (P_CLEAN, _, _, 0, _) : sv_is(0, 0, 0, 0);
            (P_CLEAN, _, _, _, SS_WDRAWN) : sv_is(0, 0, 1, 1);
            (P_CLEAN, _, _, _, _) : sv_is(0, 0, 1, 0);
        }
        size = 8;
    }

    /* The address the route is looked up for: a routed packet's destination; the slot's
     * client (as ip_rd read it into a_ip.dip) for a grant walk's pending grant, a
     * force-release and a retry walk's live slot of the request; an admin request's source;
     * else the requester (normalized above). One table with const entries (four logical
     * tables as ifs). */
    action rd_dst() { meta.route_dst = hdr.ipv4.dst; }
    action rd_slot() { meta.route_dst = hdr.a_ip.dip; }
    action rd_src() { meta.route_dst = hdr.ipv4.src; }
    action rd_req() { meta.route_dst = hdr.nl.cip; }
    table route_pick {
        key = {
            meta.kind       : ternary @name("kind");
            ptype           : ternary @name("ptype");
            hdr.recirc.pend : ternary @name("pend");
            forced          : ternary @name("forced");
            SV_STATE        : ternary @name("sv_state");
            meta.txn_hi_ok  : ternary @name("txn_hi_ok");
            meta.txn_lo_ok  : ternary @name("txn_lo_ok");
        }
        actions = { rd_dst; rd_slot; rd_src; rd_req; }
        const default_action = rd_req();
        /* kind, ptype, pend, forced, sv_state, txn_hi_ok, txn_lo_ok */
        const entries = {
            (K_ROUTE, _, _, _, _, _, _) : rd_dst();
            (_, P_GRANT, 1, _, _, _, _) : rd_slot();
            (_, P_REL, _, 1, _, _, _) : rd_slot();
            (_, P_RW, _, _, SS_LIVE, 1, 1) : rd_slot();
            (K_ADMIN, _, _, _, _, _, _) : rd_src();
        }
        size = 8;
    }
    /* ov_b: an acquire overflows (requests buffered, or the lock paused); r0 and r1: each
     * level's count as q0_op's and q1_op's return it (0 if none runs) */
    bit<1>  ov_b;
    bit<16> r0;
    bit<16> r1;
    /* Queue-empty is due (qe): no occupied slot at either level (r0 and r1, q0_op's and
     * q1_op's counts, tested before the copy into qv), the lock not paused, and requests
     * buffered: for an overflow counted in lk_buf (P_BINC) when a full level decided it
     * (binc_qe) and the level has slots, for the admin's set-buffered the count it set
     * (b_val), else lk_buf's count before this pass (bv). One table with const entries
     * (six logical tables as ifs, three of them gateways that merged with none). */
    action qe_is(bit<1> v) { qe = v; }
    table qe_pick {
        key = {
            r0                 : ternary @name("r0");
            r1                 : ternary @name("r1");
            meta.paused        : ternary @name("paused");
            ptype              : ternary @name("ptype");
            hdr.recirc.binc_qe : ternary @name("binc_qe");
            meta.size          : ternary @name("size");
            ad                 : ternary @name("ad");
            meta.b_val         : ternary @name("b_val");
            meta.bv            : ternary @name("bv");
        }
        actions = { qe_is; }
        const default_action = qe_is(0);
        /* r0, r1, paused, ptype, binc_qe, size, ad, b_val, bv */
        const entries = {
            (0, 0, 0, P_BINC, 1, 0, _, _, _) : qe_is(0);
            (0, 0, 0, P_BINC, 1, _, _, _, _) : qe_is(1);
            (0, 0, 0, P_BINC, _, _, _, _, _) : qe_is(0);
            (0, 0, 0, _, _, _, AD_SETB, 0, _) : qe_is(0);
            (0, 0, 0, _, _, _, AD_SETB, _, _) : qe_is(1);
            (0, 0, 0, _, _, _, _, _, 0) : qe_is(0);
            (0, 0, 0, _, _, _, _, _, _) : qe_is(1);
        }
        size = 8;
    }
    /* An acquire or push-back that took no slot at either level (took0, took1: q_take's
     * answers) overflows (meta.ov): a push-back goes back to the server's q2 (binc_qe: check
     * queue-empty in the next pass), with lk_buf put back one (binc) if buf_dec took one off
     * (bv); an acquire is buffered at the server (binc), and a full level decided it when no
     * request was buffered and the lock is not paused (ov_b 0: binc_qe). A try that goes on
     * would overflow when requests are buffered or the lock paused (ov_b) or a level is full
     * (qv). One table with const entries (about ten logical tables as ifs). */
    action ov_is(bit<1> o, bit<1> bqe, bit<1> b) {
        meta.ov = o;
        binc_qe = bqe;
        binc = b;
    }
    table ov_pick {
        key = {
            ptype     : ternary @name("ptype");
            acq_go    : ternary @name("acq_go");
            meta.took0 : ternary @name("took0");
            meta.took1 : ternary @name("took1");
            meta.kind : ternary @name("kind");
            meta.bv   : ternary @name("bv");
            ov_b      : ternary @name("ov_b");
            meta.qv   : ternary @name("qv");
        }
        actions = { ov_is; NoAction; }
        const default_action = NoAction();
        /* ptype, acq_go, took0, took1, kind, bv, ov_b, qv */
        const entries = {
            (P_ACQ, 1, 0, 0, K_PB, 0, _, _) : ov_is(1, 1, 0);
            (P_ACQ, 1, 0, 0, K_PB, _, _, _) : ov_is(1, 1, 1);
            (P_ACQ, 1, 0, 0, _, _, 0, _) : ov_is(1, 1, 1);
            (P_ACQ, 1, 0, 0, _, _, _, _) : ov_is(1, 0, 1);
            (P_TRY, 1, _, _, _, _, 1, _) : ov_is(1, 0, 0);
            (P_TRY, 1, _, _, _, _, _, 1) : ov_is(1, 0, 0);
        }
        size = 8;
    }

    /* lk_wait and lk_wait_hi, a table each (bf-p4c lets an action of a table write one
     * stateful ALU's answer: "At most one stateful ALU operation with a given address is
     * allowed per action", 2026-11-30): an acquire that took a place and waits counts itself
     * at its level (the other level's is read); a grant walk's granted waiter and a
     * withdrawal's found request count themselves off; a release, a grant walk's examined
     * slot, a withdrawal's first pass and the admin probe read both counts; an admin reset
     * clears both. A slot taken is took0 or took1 (q_take runs only for an acquire that goes
     * on); a grant walk examines a slot when hdr.recirc.examine is set. */
#define WAIT_KEY \
        key = { \
            meta.took0         : ternary @name("took0"); \
            meta.took1         : ternary @name("took1"); \
            meta.grant         : ternary @name("grant"); \
            meta.level         : ternary @name("level"); \
            ptype              : ternary @name("ptype"); \
            hdr.recirc.examine : ternary @name("examine"); \
            meta.found         : ternary @name("found"); \
            meta.valid         : ternary @name("valid"); \
            ad                 : ternary @name("ad"); \
        }
    action wait0_inc_a() { w0 = wait0_inc.execute(meta.idx); }
    action wait0_dec_a() { w0 = wait0_dec.execute(meta.idx); }
    action wait0_read_a() { w0 = wait0_rd.execute(meta.idx); }
    action wait0_clear_a() { wait0_clr.execute(meta.idx); w0 = 0; }
    action wait0_none_a() { w0 = 0; }
    table wait0_op {
        WAIT_KEY
        actions = { wait0_inc_a; wait0_dec_a; wait0_read_a; wait0_clear_a; wait0_none_a; }
        const default_action = wait0_none_a();
        /* took0, took1, grant, level, ptype, examine, found, valid, ad */
        const entries = {
            (1, _, 0, _, _, _, _, _, _) : wait0_inc_a();
            (_, 1, 0, _, _, _, _, _, _) : wait0_read_a();
            (_, _, 1, 0, P_GRANT, 1, _, _, _) : wait0_dec_a();
            (_, _, 1, 1, P_GRANT, 1, _, _, _) : wait0_read_a();
            (_, _, _, 0, _, _, 1, _, _) : wait0_dec_a();
            (_, _, _, 1, _, _, 1, _, _) : wait0_read_a();
            (_, _, _, _, P_REL, _, _, 1, _) : wait0_read_a();
            (_, _, _, _, P_GRANT, 1, _, _, _) : wait0_read_a();
            (_, _, _, _, P_WD0, _, _, _, _) : wait0_read_a();
            (_, _, _, _, _, _, _, _, AD_PROBE) : wait0_read_a();
            (_, _, _, _, _, _, _, _, AD_RESET) : wait0_clear_a();
        }
        size = 16;
    }
    action wait1_inc_a() { w1 = wait1_inc.execute(meta.idx); }
    action wait1_dec_a() { w1 = wait1_dec.execute(meta.idx); }
    action wait1_read_a() { w1 = wait1_rd.execute(meta.idx); }
    action wait1_clear_a() { wait1_clr.execute(meta.idx); w1 = 0; }
    action wait1_none_a() { w1 = 0; }
    table wait1_op {
        WAIT_KEY
        actions = { wait1_inc_a; wait1_dec_a; wait1_read_a; wait1_clear_a; wait1_none_a; }
        const default_action = wait1_none_a();
        /* took0, took1, grant, level, ptype, examine, found, valid, ad */
        const entries = {
            (_, 1, 0, _, _, _, _, _, _) : wait1_inc_a();
            (1, _, 0, _, _, _, _, _, _) : wait1_read_a();
            (_, _, 1, 1, P_GRANT, 1, _, _, _) : wait1_dec_a();
            (_, _, 1, 0, P_GRANT, 1, _, _, _) : wait1_read_a();
            (_, _, _, 1, _, _, 1, _, _) : wait1_dec_a();
            (_, _, _, 0, _, _, 1, _, _) : wait1_read_a();
            (_, _, _, _, P_REL, _, _, 1, _) : wait1_read_a();
            (_, _, _, _, P_GRANT, 1, _, _, _) : wait1_read_a();
            (_, _, _, _, P_WD0, _, _, _, _) : wait1_read_a();
            (_, _, _, _, _, _, _, _, AD_PROBE) : wait1_read_a();
            (_, _, _, _, _, _, _, _, AD_RESET) : wait1_clear_a();
        }
        size = 16;
    }

    /* Each level's gnext, a table each (wait0_op's comment). The worked level's is set to
     * g_arg past the slot just taken and granted (a slot taken at the level, took0 or took1,
     * and granted) or past the slot a grant walk passed (USED: a slot it examined that is not
     * live or that it granted), read by a release, a found withdrawal, a grant walk, a
     * withdrawal's first pass and the admin probe, followed past the clean walk's head when
     * that moved over a withdrawn slot; the other level's read by a release, a found
     * withdrawal and a grant walk; both cleared by an admin reset. */
#define GNEXT_KEY \
        key = { \
            ad                 : ternary @name("ad"); \
            meta.level         : ternary @name("level"); \
            meta.took0         : ternary @name("took0"); \
            meta.took1         : ternary @name("took1"); \
            meta.grant         : ternary @name("grant"); \
            ptype              : ternary @name("ptype"); \
            hdr.recirc.examine : ternary @name("examine"); \
            SV_STATE           : ternary @name("sv_state"); \
            meta.valid         : ternary @name("valid"); \
            meta.found         : ternary @name("found"); \
            clean_wd           : ternary @name("clean_wd"); \
            adv                : ternary @name("adv"); \
        }
    action g0_set() { g0 = gnext_set0.execute(meta.idx); }
    action g0_read() { g0 = gnext_rd0.execute(meta.idx); }
    action g0_follow() { gnext_follow0.execute(meta.idx); g0 = 0; }
    action g0_clear() { gnext_clr0.execute(meta.idx); g0 = 0; }
    action g0_none() { g0 = 0; }
    table gnext0_op {
        GNEXT_KEY
        actions = { g0_set; g0_read; g0_follow; g0_clear; g0_none; }
        const default_action = g0_none();
        /* ad, level, took0, took1, grant, ptype, examine, sv_state, valid, found, clean_wd, adv */
        const entries = {
            (AD_RESET, _, _, _, _, _, _, _, _, _, _, _) : g0_clear();
            (_, _, 1, _, 1, _, _, _, _, _, _, _) : g0_set();
            (_, _, _, _, 0, P_GRANT, 1, SS_LIVE, _, _, _, _) : g0_read();
            (_, 0, _, _, _, P_GRANT, 1, _, _, _, _, _) : g0_set();
            (_, 1, _, _, _, P_GRANT, 1, _, _, _, _, _) : g0_read();
            (_, _, _, _, _, P_REL, _, _, 1, _, _, _) : g0_read();
            (_, _, _, _, _, _, _, _, _, 1, _, _) : g0_read();
            (_, 0, _, _, _, P_WD0, _, _, _, _, _, _) : g0_read();
            (AD_PROBE, 0, _, _, _, _, _, _, _, _, _, _) : g0_read();
            (_, 0, _, _, _, _, _, _, _, _, 1, 1) : g0_follow();
        }
        size = 16;
    }
    action g1_set() { g1 = gnext_set1.execute(meta.idx); }
    action g1_read() { g1 = gnext_rd1.execute(meta.idx); }
    action g1_follow() { gnext_follow1.execute(meta.idx); g1 = 0; }
    action g1_clear() { gnext_clr1.execute(meta.idx); g1 = 0; }
    action g1_none() { g1 = 0; }
    table gnext1_op {
        GNEXT_KEY
        actions = { g1_set; g1_read; g1_follow; g1_clear; g1_none; }
        const default_action = g1_none();
        /* ad, level, took0, took1, grant, ptype, examine, sv_state, valid, found, clean_wd, adv */
        const entries = {
            (AD_RESET, _, _, _, _, _, _, _, _, _, _, _) : g1_clear();
            (_, _, _, 1, 1, _, _, _, _, _, _, _) : g1_set();
            (_, _, _, _, 0, P_GRANT, 1, SS_LIVE, _, _, _, _) : g1_read();
            (_, 1, _, _, _, P_GRANT, 1, _, _, _, _, _) : g1_set();
            (_, 0, _, _, _, P_GRANT, 1, _, _, _, _, _) : g1_read();
            (_, _, _, _, _, P_REL, _, _, 1, _, _, _) : g1_read();
            (_, _, _, _, _, _, _, _, _, 1, _, _) : g1_read();
            (_, 1, _, _, _, P_WD0, _, _, _, _, _, _) : g1_read();
            (AD_PROBE, 1, _, _, _, _, _, _, _, _, _, _) : g1_read();
            (_, 1, _, _, _, _, _, _, _, _, 1, 1) : g1_follow();
        }
        size = 16;
    }

    /* lk_state's inputs (lk_state's comment), a table each with const entries, first match
     * first (the if-else chains they were took seventeen logical tables, four of them gateways
     * that merged with no table: docs/dataplane.md, "The real compiler"). ST_X, the lo step: 0
     * for a try's check, a withdrawal's found slot and the admin probe's reads (state_rel's of
     * lo, state_hic's of hi, which clears when it is not 0: an admin reset's is), else an
     * exclusive request's 0x10001, a shared one's 1. st_y: 0 for a release and the probe's
     * read of lo (state_rel); for an exclusive request its waiter unit (0x10000 at level 0, 1
     * at level 1): negated for the grant walk's examined waiter (taken off hi when granted),
     * as it is for an acquire (added when it waits) and a withdrawal's found waiter (taken off
     * by state_rel), 0 for a try's check; for a shared request the bound on hi: none for the
     * walk, which goes in queue order, else no exclusive waiter at its level or above (0xffff
     * at level 0, 0 at level 1), and 0 for a withdrawal's (state_rel: shared waiters are not
     * in hi). The admin probe's second pass is kind K_ADMIN at PH_PROBE2; the walk's examined
     * slot a P_GRANT pass with hdr.recirc.examine set. */
    action st_x_is(bit<32> x) { ST_X = x; }
    table st_x_in {
        key = {
            ptype         : ternary @name("ptype");
            meta.found    : ternary @name("found");
            meta.kind     : ternary @name("kind");
            meta.phase    : ternary @name("phase");
            ad            : ternary @name("ad");
            meta.s_mode   : ternary @name("s_mode");
        }
        actions = { st_x_is; }
        const default_action = st_x_is(1);
        /* ptype, found, kind, phase, ad, s_mode */
        const entries = {
            (P_TRY, _, _, _, _, _) : st_x_is(0);
            (_, 1, _, _, _, _) : st_x_is(0);
            (_, _, K_ADMIN, PH_PROBE2, _, _) : st_x_is(0);
            (_, _, _, _, AD_PROBE, _) : st_x_is(0);
            (_, _, _, _, _, MODE_X) : st_x_is(0x10001);
        }
        size = 8;
    }
    action st_y_is(bit<32> y) { meta.st_y = y; }
    table st_y_in {
        key = {
            meta.kind          : ternary @name("kind");
            meta.phase         : ternary @name("phase");
            ptype              : ternary @name("ptype");
            meta.s_mode        : ternary @name("s_mode");
            hdr.recirc.examine : ternary @name("examine");
            meta.found         : ternary @name("found");
            meta.level         : ternary @name("level");
        }
        actions = { st_y_is; }
        const default_action = st_y_is(0);
        /* kind, phase, ptype, s_mode, examine, found, level */
        const entries = {
            (K_ADMIN, PH_PROBE2, _, _, _, _, _) : st_y_is(0);
            (_, _, P_REL, _, _, _, _) : st_y_is(0);
            (_, _, P_GRANT, MODE_X, 1, _, 0) : st_y_is(0xffff0000);
            (_, _, P_GRANT, MODE_X, 1, _, _) : st_y_is(0xffffffff);
            (_, _, P_ACQ, MODE_X, _, _, 0) : st_y_is(0x10000);
            (_, _, P_ACQ, MODE_X, _, _, _) : st_y_is(1);
            (_, _, _, MODE_X, _, 1, 0) : st_y_is(0x10000);
            (_, _, _, MODE_X, _, 1, _) : st_y_is(1);
            (_, _, _, MODE_X, _, _, _) : st_y_is(0);
            (_, _, _, _, _, 1, _) : st_y_is(0);
            (_, _, P_GRANT, _, 1, _, _) : st_y_is(0xffffffff);
            (_, _, _, _, _, _, 0) : st_y_is(0xffff);
        }
        size = 16;
    }

    /* lk_state, one table: an acquire that took a place (took0 or took1) asks for the grant,
     * a try that goes on checks (ST_X 0), a valid release and a found withdrawal release
     * (state_rel), a grant walk's live examined slot asks for the grant, the admin probe reads
     * hi and, in its second pass, lo (state_rel with both inputs 0), an admin reset clears.
     * A request's register action is its mode's (state_take_x for an exclusive one). */
    action st_take_s() { meta.grant = state_take_s.execute(meta.idx); }
    action st_take_x() { meta.grant = state_take_x.execute(meta.idx); }
    action st_check_s() { meta.compat = state_take_s.execute(meta.idx); }
    action st_check_x() { meta.compat = state_take_x.execute(meta.idx); }
    action st_release() { meta.st_prev = state_rel.execute(meta.idx); st_to = 1; }
    action st_withdraw() { meta.st_prev = state_rel.execute(meta.idx); st_to = 2; }
    action st_read_hi() { meta.rd_sthi = state_hic.execute(meta.idx); }
    action st_read_lo() { meta.rd_st = state_rel.execute(meta.idx); }
    action st_clear() { state_hic.execute(meta.idx); }
    table state_op {
        key = {
            meta.took0          : ternary @name("took0");
            meta.took1          : ternary @name("took1");
            ptype               : ternary @name("ptype");
            acq_go              : ternary @name("acq_go");
            meta.valid          : ternary @name("valid");
            hdr.recirc.examine  : ternary @name("examine");
            SV_STATE            : ternary @name("sv_state");
            meta.found          : ternary @name("found");
            ad                  : ternary @name("ad");
            meta.kind           : ternary @name("kind");
            meta.phase          : ternary @name("phase");
            meta.s_mode         : ternary @name("s_mode");
        }
        actions = { st_take_s; st_take_x; st_check_s; st_check_x; st_release; st_withdraw; st_read_hi; st_read_lo; st_clear; NoAction; }
        const default_action = NoAction();
        /* took0, took1, ptype, acq_go, valid, examine, sv_state, found, ad, kind, phase, s_mode */
        const entries = {
            (1, _, _, _, _, _, _, _, _, _, _, MODE_X) : st_take_x();
            (1, _, _, _, _, _, _, _, _, _, _, _) : st_take_s();
            (_, 1, _, _, _, _, _, _, _, _, _, MODE_X) : st_take_x();
            (_, 1, _, _, _, _, _, _, _, _, _, _) : st_take_s();
            (_, _, P_TRY, 1, _, _, _, _, _, _, _, MODE_X) : st_check_x();
            (_, _, P_TRY, 1, _, _, _, _, _, _, _, _) : st_check_s();
            (_, _, P_REL, _, 1, _, _, _, _, _, _, _) : st_release();
            (_, _, P_GRANT, _, _, 1, SS_LIVE, _, _, _, _, MODE_X) : st_take_x();
            (_, _, P_GRANT, _, _, 1, SS_LIVE, _, _, _, _, _) : st_take_s();
            (_, _, _, _, _, _, _, 1, _, _, _, _) : st_withdraw();
            (_, _, _, _, _, _, _, _, AD_PROBE, _, _, _) : st_read_hi();
            (_, _, _, _, _, _, _, _, _, K_ADMIN, PH_PROBE2, _) : st_read_lo();
            (_, _, _, _, _, _, _, _, AD_RESET, _, _, _) : st_clear();
        }
        size = 16;
    }
    /* state_rel's answer, from lo after (lk_state's comment), one table with const entries
     * (the if-else it was took six logical tables, two of them gateways that merged with no
     * table): a release's nobody holds now (lo before at most its step: lo after 0, or
     * wrapped, bit 31, as lo is below 2^17), a withdrawal's exclusive holder (step 0: lo >=
     * 0x10000, bit 16). */
    action nhold0_is(bit<1> v) { meta.nhold0 = v; }
    action xheld_is(bit<1> v) { meta.xheld = v; }
    table st_out {
        key = {
            st_to         : ternary @name("st_to");
            meta.st_prev  : ternary @name("st_prev");
        }
        actions = { nhold0_is; xheld_is; NoAction; }
        const default_action = NoAction();
        /* st_to, st_prev */
        const entries = {
            (1, 0) : nhold0_is(1);
            (1, 0x80000000 &&& 0x80000000) : nhold0_is(1);
            (1, _) : nhold0_is(0);
            (2, 0x10000 &&& 0x10000) : xheld_is(1);
            (2, _) : xheld_is(0);
        }
        size = 8;
    }

    /* (Each action of a table that uses registers uses all of them, the other level's with a
     * read whose value is dropped: bf-p4c refuses a table whose actions use different
     * registers, "The action h_rd0 uses Register ...level0.head but does not use Register
     * ...level1.head", 2026-11-30. So does tail_op.) */
    /* The worked level's head, one table: moved past the token's offset h_arg by a valid
     * release (head_at), past the clean walk's head h_arg over a done slot (head_eq: the walk
     * has slots left and the slot is not live), read by a retry's first pass, a withdrawal walk
     * that found its request live and the admin probe; both levels' cleared by an admin reset. */
    action h_rd0() { meta.hv = head_rd0.execute(meta.idx); head_rd1.execute(meta.idx); }
    action h_rd1() { head_rd0.execute(meta.idx); meta.hv = head_rd1.execute(meta.idx); }
    action h_at0() { meta.hv = head_at0.execute(meta.idx); head_rd1.execute(meta.idx); }
    action h_at1() { head_rd0.execute(meta.idx); meta.hv = head_at1.execute(meta.idx); }
    action h_eq0() { meta.hv = head_eq0.execute(meta.idx); head_rd1.execute(meta.idx); }
    action h_eq1() { head_rd0.execute(meta.idx); meta.hv = head_eq1.execute(meta.idx); }
    action h_clear() { head_clr0.execute(meta.idx); head_clr1.execute(meta.idx); }
    table head_op {
        key = {
            ad               : ternary @name("ad");
            meta.level       : ternary @name("level");
            ptype            : ternary @name("ptype");
            meta.valid       : ternary @name("valid");
            meta.txn_hi_ok   : ternary @name("txn_hi_ok");
            meta.txn_lo_ok   : ternary @name("txn_lo_ok");
            SV_STATE         : ternary @name("sv_state");
            hdr.recirc.cleft : ternary @name("cleft");
        }
        actions = { h_rd0; h_rd1; h_at0; h_at1; h_eq0; h_eq1; h_clear; NoAction; }
        const default_action = NoAction();
        /* ad, level, ptype, valid, txn_hi_ok, txn_lo_ok, sv_state, cleft */
        const entries = {
            (AD_RESET, _, _, _, _, _, _, _) : h_clear();
            (_, 0, P_RW0, _, _, _, _, _) : h_rd0();
            (_, 1, P_RW0, _, _, _, _, _) : h_rd1();
            (_, 0, P_WD, _, 1, 1, SS_LIVE, _) : h_rd0();
            (_, 1, P_WD, _, 1, 1, SS_LIVE, _) : h_rd1();
            (AD_PROBE, 0, _, _, _, _, _, _) : h_rd0();
            (AD_PROBE, 1, _, _, _, _, _, _) : h_rd1();
            (_, 0, P_REL, 1, _, _, _, _) : h_at0();
            (_, 1, P_REL, 1, _, _, _, _) : h_at1();
            (_, _, P_CLEAN, _, _, _, _, 0) : NoAction();
            (_, _, P_CLEAN, _, _, _, SS_LIVE, _) : NoAction();
            (_, 0, P_CLEAN, _, _, _, _, _) : h_eq0();
            (_, 1, P_CLEAN, _, _, _, _, _) : h_eq1();
        }
        size = 16;
    }

    /* lk_q and lk_q_hi, a table each (wait0_op's comment): an acquire or push-back that goes
     * on (not a copy, within its quota: ended_hit, dup_hit, quota, meter_color) and did not
     * overflow at lk_buf takes a slot at its level (a push-back whether or not requests are
     * buffered); a try that goes on asks whether its level is full; the passes that free a
     * slot, walk or probe take q_dec off both levels and read them; an admin reset clears
     * both. */
#define Q_KEY \
        key = { \
            ad               : ternary @name("ad"); \
            meta.level       : ternary @name("level"); \
            ptype            : ternary @name("ptype"); \
            meta.ended_hit   : ternary @name("ended_hit"); \
            meta.dup_hit     : ternary @name("dup_hit"); \
            meta.quota       : ternary @name("quota"); \
            meta.meter_color : ternary @name("meter_color"); \
            meta.kind        : ternary @name("kind"); \
            ov_b             : ternary @name("ov_b"); \
            meta.valid       : ternary @name("valid"); \
            meta.found       : ternary @name("found"); \
        }
    action q0_take() { meta.took0 = q_take0.execute(meta.idx); r0 = 0; }
    action q0_full() { r0 = q_full0.execute(meta.idx); }
    action q0_sub() { r0 = q_sub0.execute(meta.idx); }
    action q0_clear() { q_clr0.execute(meta.idx); r0 = 0; }
    action q0_none() { r0 = 0; }
    table q0_op {
        Q_KEY
        actions = { q0_take; q0_full; q0_sub; q0_clear; q0_none; }
        const default_action = q0_none();
        /* ad, level, ptype, ended_hit, dup_hit, quota, meter_color, kind, ov_b, valid, found */
        const entries = {
            (AD_RESET, _, _, _, _, _, _, _, _, _, _) : q0_clear();
            (_, 0, P_ACQ, 0, 0, 0, _, K_PB, _, _, _) : q0_take();
            (_, 0, P_ACQ, 0, 0, 0, _, _, 0, _, _) : q0_take();
            (_, 0, P_ACQ, 0, 0, _, 0, K_PB, _, _, _) : q0_take();
            (_, 0, P_ACQ, 0, 0, _, 0, _, 0, _, _) : q0_take();
            (_, 0, P_TRY, 0, 0, 0, _, _, _, _, _) : q0_full();
            (_, 0, P_TRY, 0, 0, _, 0, _, _, _, _) : q0_full();
            (_, _, P_RW0, _, _, _, _, _, _, _, _) : q0_sub();
            (_, _, P_CLEAN, _, _, _, _, _, _, _, _) : q0_sub();
            (_, _, P_BINC, _, _, _, _, _, _, _, _) : q0_sub();
            (_, _, P_REL, _, _, _, _, _, _, 1, _) : q0_sub();
            (_, _, _, _, _, _, _, _, _, _, 1) : q0_sub();
            (AD_PROBE, _, _, _, _, _, _, _, _, _, _) : q0_sub();
            (AD_SETB, _, _, _, _, _, _, _, _, _, _) : q0_sub();
        }
        size = 16;
    }
    action q1_take() { meta.took1 = q_take1.execute(meta.idx); r1 = 0; }
    action q1_full() { r1 = q_full1.execute(meta.idx); }
    action q1_sub() { r1 = q_sub1.execute(meta.idx); }
    action q1_clear() { q_clr1.execute(meta.idx); r1 = 0; }
    action q1_none() { r1 = 0; }
    table q1_op {
        Q_KEY
        actions = { q1_take; q1_full; q1_sub; q1_clear; q1_none; }
        const default_action = q1_none();
        /* ad, level, ptype, ended_hit, dup_hit, quota, meter_color, kind, ov_b, valid, found */
        const entries = {
            (AD_RESET, _, _, _, _, _, _, _, _, _, _) : q1_clear();
            (_, 1, P_ACQ, 0, 0, 0, _, K_PB, _, _, _) : q1_take();
            (_, 1, P_ACQ, 0, 0, 0, _, _, 0, _, _) : q1_take();
            (_, 1, P_ACQ, 0, 0, _, 0, K_PB, _, _, _) : q1_take();
            (_, 1, P_ACQ, 0, 0, _, 0, _, 0, _, _) : q1_take();
            (_, 1, P_TRY, 0, 0, 0, _, _, _, _, _) : q1_full();
            (_, 1, P_TRY, 0, 0, _, 0, _, _, _, _) : q1_full();
            (_, _, P_RW0, _, _, _, _, _, _, _, _) : q1_sub();
            (_, _, P_CLEAN, _, _, _, _, _, _, _, _) : q1_sub();
            (_, _, P_BINC, _, _, _, _, _, _, _, _) : q1_sub();
            (_, _, P_REL, _, _, _, _, _, _, 1, _) : q1_sub();
            (_, _, _, _, _, _, _, _, _, _, 1) : q1_sub();
            (AD_PROBE, _, _, _, _, _, _, _, _, _, _) : q1_sub();
            (AD_SETB, _, _, _, _, _, _, _, _, _, _) : q1_sub();
        }
        size = 16;
    }

    /* lk_done, one table: done slots counted by a valid release whose head did not move (adv)
     * and by a found withdrawal, uncounted as the clean walk moves the head over a done slot
     * (clean_done and adv: CLEAN_GO); read by a valid release whose head moved and by the admin
     * probe's second pass; cleared by an admin reset. */
    action d_inc() { meta.dv = done_inc.execute(meta.idx); }
    action d_dec() { meta.dv = done_dec.execute(meta.idx); }
    action d_read() { meta.dv = done_rd.execute(meta.idx); }
    action d_clear() { done_clr.execute(meta.idx); }
    table done_op {
        key = {
            ptype       : ternary @name("ptype");
            meta.valid  : ternary @name("valid");
            adv         : ternary @name("adv");
            clean_done  : ternary @name("clean_done");
            meta.found  : ternary @name("found");
            ad          : ternary @name("ad");
            meta.kind   : ternary @name("kind");
            meta.phase  : ternary @name("phase");
        }
        actions = { d_inc; d_dec; d_read; d_clear; NoAction; }
        const default_action = NoAction();
        /* ptype, valid, adv, clean_done, found, ad, kind, phase */
        const entries = {
            (P_REL, 1, 1, _, _, _, _, _) : d_read();
            (P_REL, 1, _, _, _, _, _, _) : d_inc();
            (_, _, 1, 1, _, _, _, _) : d_dec();
            (_, _, _, _, 1, _, _, _) : d_inc();
            (_, _, _, _, _, AD_RESET, _, _) : d_clear();
            (_, _, _, _, _, _, K_ADMIN, PH_PROBE2) : d_read();
        }
        size = 16;
    }

    /* Each level's tail, one table: enqueued by an acquire that took a place at the level
     * (took0, took1), read by the admin probe, both cleared by an admin reset. */
    action t_enq0() { meta.tail = tail_enq0.execute(meta.idx); tail_rd1.execute(meta.idx); }
    action t_enq1() { tail_rd0.execute(meta.idx); meta.tail = tail_enq1.execute(meta.idx); }
    action t_rd0() { meta.tail = tail_rd0.execute(meta.idx); tail_rd1.execute(meta.idx); }
    action t_rd1() { tail_rd0.execute(meta.idx); meta.tail = tail_rd1.execute(meta.idx); }
    action t_clear() { tail_clr0.execute(meta.idx); tail_clr1.execute(meta.idx); }
    table tail_op {
        key = {
            ad         : ternary @name("ad");
            meta.level : ternary @name("level");
            meta.took0 : ternary @name("took0");
            meta.took1 : ternary @name("took1");
        }
        actions = { t_enq0; t_enq1; t_rd0; t_rd1; t_clear; NoAction; }
        const default_action = NoAction();
        /* ad, level, took0, took1 */
        const entries = {
            (AD_RESET, _, _, _) : t_clear();
            (_, _, 1, _) : t_enq0();
            (_, _, _, 1) : t_enq1();
            (AD_PROBE, 0, _, _) : t_rd0();
            (AD_PROBE, 1, _, _) : t_rd1();
        }
        size = 8;
    }

    /* The grant counter's low half (lk_tok) and high half (lk_tok_hi), a table each: the pass
     * that grants takes the next number (NEXT_SEQ: a slot taken, took0 or took1, or a grant
     * walk's examined slot, and granted), the high half going up with a carry out of the low
     * half (the low half as read, before its increment); the writing pass of a granted
     * acquire, a retry walk and the admin probe, reset and token base read them; the token
     * base's second pass sets them. */
    action tk_next() { meta.tok_lo = tok_next.execute(meta.idx); }
    action tk_read() { meta.tok_lo = tok_rd.execute(meta.idx); }
    action tk_set() { tok_set.execute(meta.idx); }
    action th_inc() { meta.tok_hi = tokhi_inc.execute(meta.idx); }
    action th_read() { meta.tok_hi = tokhi_rd.execute(meta.idx); }
    action th_set() { tokhi_set.execute(meta.idx); }
    table tok_op {
        key = {
            meta.took0         : ternary @name("took0");
            meta.took1         : ternary @name("took1");
            meta.grant         : ternary @name("grant");
            ptype              : ternary @name("ptype");
            hdr.recirc.examine : ternary @name("examine");
            WR_GRANT           : ternary @name("resub_grant");
            ad                 : ternary @name("ad");
            meta.kind          : ternary @name("kind");
            meta.phase         : ternary @name("phase");
        }
        actions = { tk_next; tk_read; tk_set; NoAction; }
        const default_action = NoAction();
        /* took0, took1, grant, ptype, examine, resub_grant, ad, kind, phase */
        const entries = {
            (1, _, 1, _, _, _, _, _, _) : tk_next();
            (_, 1, 1, _, _, _, _, _, _) : tk_next();
            (_, _, 1, P_GRANT, 1, _, _, _, _) : tk_next();
            (_, _, _, P_WRITE, _, 1, _, _, _) : tk_read();
            (_, _, _, P_RW, _, _, _, _, _) : tk_read();
            (_, _, _, _, _, _, AD_PROBE, _, _) : tk_read();
            (_, _, _, _, _, _, AD_RESET, _, _) : tk_read();
            (_, _, _, _, _, _, AD_TBASE, _, _) : tk_read();
            (_, _, _, _, _, _, _, K_ADMIN, PH_TBASE2) : tk_set();
        }
        size = 16;
    }
    /* lk_buf, one table: one more buffered in an overflow's second pass (PH_BINC), one fewer
     * for a push-back that goes on (it is not looked up in the ended table, as in
     * p4/netlock.p4), set by set-buffered and reset, read by an acquire or try (it overflows
     * when requests are buffered), a clean walk, a valid release, a found withdrawal and the
     * admin probe's second pass. */
    action b_acq() { meta.bv = buf_acq.execute(meta.idx); }
    action b_dec() { meta.bv = buf_dec.execute(meta.idx); }
    action b_set() { buf_set.execute(meta.idx); }
    action b_read() { meta.bv = buf_rd.execute(meta.idx); }
    table buf_op {
        key = {
            ptype      : ternary @name("ptype");
            meta.kind  : ternary @name("kind");
            ad         : ternary @name("ad");
            meta.valid : ternary @name("valid");
            meta.found : ternary @name("found");
            meta.phase : ternary @name("phase");
        }
        actions = { b_acq; b_dec; b_set; b_read; NoAction; }
        const default_action = NoAction();
        /* ptype, kind, ad, valid, found, phase */
        const entries = {
            (P_BINC, _, _, _, _, _) : b_acq();
            (P_ACQ, K_PB, _, _, _, _) : b_dec();
            (P_PBNONE, _, _, _, _, _) : b_dec();
            (_, _, AD_SETB, _, _, _) : b_set();
            (_, _, AD_RESET, _, _, _) : b_set();
            (P_ACQ, _, _, _, _, _) : b_read();
            (P_TRY, _, _, _, _, _) : b_read();
            (P_CLEAN, _, _, _, _, _) : b_read();
            (P_REL, _, _, 1, _, _) : b_read();
            (_, _, _, _, 1, _) : b_read();
            (_, K_ADMIN, _, _, _, PH_PROBE2) : b_read();
        }
        size = 16;
    }
    /* The ended table's cell for the request (ended_hash): a fresh acquire or try of a lock
     * looks it up and records it as seen, a retried one not in the queue records it (its
     * answer was the retry's), a retry looks it up, a valid release and a found withdrawal
     * record the end (force-released: expire). e_cell is the cell minus fp as the lookup
     * found it: 1 ended, 3 force-released, 0 seen and not ended, 2 no lookup (no cell of this
     * request gives 2); ended_flags turns it into the three flags. */
    bit<32> e_cell;
    action e_seen() { e_cell = ended_seen.execute(meta.e_idx); }
    action e_seen_only() { ended_seen.execute(meta.e_idx); e_cell = 2; }
    action e_lookup() { e_cell = ended_lookup.execute(meta.e_idx); }
    action e_expire() { ended_expire.execute(meta.e_idx); e_cell = 2; }
    action e_record() { ended_record.execute(meta.e_idx); e_cell = 2; }
    action e_none() { e_cell = 2; }
    table ended_op {
        key = {
            ptype       : ternary @name("ptype");
            meta.kind   : ternary @name("kind");
            meta.phase  : ternary @name("phase");
            meta.wflags : ternary @name("wflags");
            meta.valid  : ternary @name("valid");
            meta.txn_hi_ok : ternary @name("txn_hi_ok");
            meta.txn_lo_ok : ternary @name("txn_lo_ok");
            SV_STATE    : ternary @name("sv_state");
        }
        actions = { e_seen; e_seen_only; e_lookup; e_expire; e_record; e_none; }
        const default_action = e_none();
        /* ptype, kind, phase, wflags, valid, txn_hi_ok, txn_lo_ok, sv_state; a found
         * withdrawal tested in place (P_WD, its txn's, live: meta.found is a stage later) */
        const entries = {
            (P_ACQ, K_LOCK, PH_FRESH, _, _, _, _, _) : e_seen();
            (P_TRY, K_LOCK, PH_FRESH, _, _, _, _, _) : e_seen();
            (P_ACQ, K_LOCK, _, WF_RETRYMISS &&& WF_RETRYMISS, _, _, _, _) : e_seen_only();
            (P_TRY, K_LOCK, _, WF_RETRYMISS &&& WF_RETRYMISS, _, _, _, _) : e_seen_only();
            (P_RW0, _, _, _, _, _, _, _) : e_lookup();
            (P_RW, _, _, _, _, _, _, _) : e_lookup();
            (P_REL, _, _, WF_FORCED &&& WF_FORCED, 1, _, _, _) : e_expire();
            (P_WD, _, _, WF_FORCED &&& WF_FORCED, _, 1, 1, SS_LIVE) : e_expire();
            (P_REL, _, _, _, 1, _, _, _) : e_record();
            (P_WD, _, _, _, _, 1, 1, SS_LIVE) : e_record();
        }
        size = 16;
    }
    action e_flags(bit<1> ended, bit<1> expired, bit<1> dup) {
        meta.ended_hit = ended;
        meta.expired_hit = expired;
        meta.dup_hit = dup;
    }
    table ended_flags {
        key = { e_cell : ternary @name("e_cell"); }
        actions = { e_flags; }
        const default_action = e_flags(0, 0, 0);
        const entries = {
            1 : e_flags(1, 0, 0);
            3 : e_flags(1, 1, 0);
            0 : e_flags(0, 0, 1);
        }
        size = 4;
    }
    /* The pool's txn (s_txn_hi, s_txn_lo) and client (s_ip, s_port, s_tenant), a table per
     * register (wait0_op's comment; and five registers are more than a stage's four stateful
     * ALUs), all with the same entries: written by the writing
     * pass; the txn compared and the client read by a release or lease-probe whose token names
     * a level (REL_GO: tlevel != 2), a withdrawal walk and a retry walk; both read by a grant
     * walk's pass that sends its pending grant and the admin probe's third pass. */
#define POOL_OP_KEY \
        key = { \
            ptype           : ternary @name("ptype"); \
            meta.tlevel     : ternary @name("tlevel"); \
            hdr.recirc.pend : ternary @name("pend"); \
            meta.kind       : ternary @name("kind"); \
            meta.phase      : ternary @name("phase"); \
        }
    action txn_hi_wr_a() { txn_hi_wr.execute(meta.hd_idx); }
    action txn_hi_cmp_a() { meta.txn_hi_ok = txn_hi_cmp.execute(meta.hd_idx); }
    action txn_hi_rd_a() { hdr.a_nl.txn_hi = txn_hi_rd.execute(meta.hd_idx); }
    table txn_hi_op {
        POOL_OP_KEY
        actions = { txn_hi_wr_a; txn_hi_cmp_a; txn_hi_rd_a; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, pend, kind, phase */
        const entries = {
            (P_WRITE, _, _, _, _) : txn_hi_wr_a();
            (P_REL, 2, _, _, _) : NoAction();
            (P_PROBE, 2, _, _, _) : NoAction();
            (P_REL, _, _, _, _) : txn_hi_cmp_a();
            (P_PROBE, _, _, _, _) : txn_hi_cmp_a();
            (P_WD, _, _, _, _) : txn_hi_cmp_a();
            (P_RW, _, _, _, _) : txn_hi_cmp_a();
            (P_GRANT, _, 1, _, _) : txn_hi_rd_a();
            (_, _, _, K_ADMIN, PH_PROBE3) : txn_hi_rd_a();
        }
        size = 16;
    }
    action txn_lo_wr_a() { txn_lo_wr.execute(meta.hd_idx); }
    action txn_lo_cmp_a() { meta.txn_lo_ok = txn_lo_cmp.execute(meta.hd_idx); }
    action txn_lo_rd_a() { hdr.a_nl.txn_lo = txn_lo_rd.execute(meta.hd_idx); }
    table txn_lo_op {
        POOL_OP_KEY
        actions = { txn_lo_wr_a; txn_lo_cmp_a; txn_lo_rd_a; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, pend, kind, phase */
        const entries = {
            (P_WRITE, _, _, _, _) : txn_lo_wr_a();
            (P_REL, 2, _, _, _) : NoAction();
            (P_PROBE, 2, _, _, _) : NoAction();
            (P_REL, _, _, _, _) : txn_lo_cmp_a();
            (P_PROBE, _, _, _, _) : txn_lo_cmp_a();
            (P_WD, _, _, _, _) : txn_lo_cmp_a();
            (P_RW, _, _, _, _) : txn_lo_cmp_a();
            (P_GRANT, _, 1, _, _) : txn_lo_rd_a();
            (_, _, _, K_ADMIN, PH_PROBE3) : txn_lo_rd_a();
        }
        size = 16;
    }
    action ip_wr_a() { ip_wr.execute(meta.hd_idx); }
    action ip_cmp_a() { hdr.a_ip.dip = ip_rd.execute(meta.hd_idx); }
    action ip_rd_a() { hdr.a_ip.dip = ip_rd.execute(meta.hd_idx); }
    table ip_op {
        POOL_OP_KEY
        actions = { ip_wr_a; ip_cmp_a; ip_rd_a; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, pend, kind, phase */
        const entries = {
            (P_WRITE, _, _, _, _) : ip_wr_a();
            (P_REL, 2, _, _, _) : NoAction();
            (P_PROBE, 2, _, _, _) : NoAction();
            (P_REL, _, _, _, _) : ip_cmp_a();
            (P_PROBE, _, _, _, _) : ip_cmp_a();
            (P_WD, _, _, _, _) : ip_cmp_a();
            (P_RW, _, _, _, _) : ip_cmp_a();
            (P_GRANT, _, 1, _, _) : ip_rd_a();
            (_, _, _, K_ADMIN, PH_PROBE3) : ip_rd_a();
        }
        size = 16;
    }
    action port_wr_a() { port_wr.execute(meta.hd_idx); }
    action port_cmp_a() { meta.rd_port = port_rd.execute(meta.hd_idx); }
    action port_rd_a() { meta.rd_port = port_rd.execute(meta.hd_idx); }
    table port_op {
        POOL_OP_KEY
        actions = { port_wr_a; port_cmp_a; port_rd_a; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, pend, kind, phase */
        const entries = {
            (P_WRITE, _, _, _, _) : port_wr_a();
            (P_REL, 2, _, _, _) : NoAction();
            (P_PROBE, 2, _, _, _) : NoAction();
            (P_REL, _, _, _, _) : port_cmp_a();
            (P_PROBE, _, _, _, _) : port_cmp_a();
            (P_WD, _, _, _, _) : port_cmp_a();
            (P_RW, _, _, _, _) : port_cmp_a();
            (P_GRANT, _, 1, _, _) : port_rd_a();
            (_, _, _, K_ADMIN, PH_PROBE3) : port_rd_a();
        }
        size = 16;
    }
    action tenant_wr_a() { tenant_wr.execute(meta.hd_idx); }
    action tenant_cmp_a() { meta.rd_tenant = tenant_rd.execute(meta.hd_idx); }
    action tenant_rd_a() { meta.rd_tenant = tenant_rd.execute(meta.hd_idx); }
    table tenant_op {
        POOL_OP_KEY
        actions = { tenant_wr_a; tenant_cmp_a; tenant_rd_a; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, pend, kind, phase */
        const entries = {
            (P_WRITE, _, _, _, _) : tenant_wr_a();
            (P_REL, 2, _, _, _) : NoAction();
            (P_PROBE, 2, _, _, _) : NoAction();
            (P_REL, _, _, _, _) : tenant_cmp_a();
            (P_PROBE, _, _, _, _) : tenant_cmp_a();
            (P_WD, _, _, _, _) : tenant_cmp_a();
            (P_RW, _, _, _, _) : tenant_cmp_a();
            (P_GRANT, _, 1, _, _) : tenant_rd_a();
            (_, _, _, K_ADMIN, PH_PROBE3) : tenant_rd_a();
        }
        size = 16;
    }
    /* The pool's flags, lease, grant time and timestamp blocks, a table each with const
     * entries, first match first, as the if-else chains they were (fourteen logical tables,
     * one a gateway that merged with none). The slot view's flags (pflags): the slot's as the
     * flags block writes (the writing pass), marks done (a valid release whose token names a
     * level), marks withdrawn (a withdrawal whose txn matches) or reads them (a release or
     * lease-probe naming a level, a withdrawal, a retry walk, the admin probe's third pass,
     * the grant walk's examined slot at sl_idx, a clean walk with slots left), else the
     * request's (live), SS_LIVE ++ mode ++ prio ++ fwd in one write. The lease: written by the
     * writing pass and by a valid lease-probe that asks for one, read by any other lease-probe
     * naming a level, a retry walk, the admin probe's third pass and a grant walk's pass that
     * sends its pending grant (hd_idx). The grant time: written with the grant number (the
     * writing pass, a grant walk's pending grant) and by a valid lease-probe, read by the admin
     * probe's second pass (into hdr.admin.gts). The timestamp: written by the writing pass and
     * by a valid lease-probe that carries one (has_ts), read by a release naming a level, a
     * retry walk, the admin probe's third pass and a pending grant's pass. */
    action fl_wr() { hdr.recirc.pflags = flags_wr.execute(meta.sl_idx); }
    action fl_done() { hdr.recirc.pflags = flags_done.execute(meta.sl_idx); }
    action fl_wdraw() { hdr.recirc.pflags = flags_wdraw.execute(meta.sl_idx); }
    action fl_rd() { hdr.recirc.pflags = flags_rd.execute(meta.sl_idx); }
    action fl_new() { hdr.recirc.pflags = meta.n_flags | ((bit<32>)SS_LIVE << 24); }
    table flags_op {
        key = {
            ptype              : ternary @name("ptype");
            meta.tlevel        : ternary @name("tlevel");
            meta.valid         : ternary @name("valid");
            meta.txn_hi_ok     : ternary @name("txn_hi_ok");
            meta.txn_lo_ok     : ternary @name("txn_lo_ok");
            meta.kind          : ternary @name("kind");
            meta.phase         : ternary @name("phase");
            hdr.recirc.examine : ternary @name("examine");
            hdr.recirc.cleft   : ternary @name("cleft");
        }
        actions = { fl_wr; fl_done; fl_wdraw; fl_rd; fl_new; }
        const default_action = fl_new();
        /* ptype, tlevel, valid, txn_hi_ok, txn_lo_ok, kind, phase, examine, cleft */
        const entries = {
            (P_WRITE, _, _, _, _, _, _, _, _) : fl_wr();
            (P_REL, 2, _, _, _, _, _, _, _) : fl_new();
            (P_REL, _, 1, _, _, _, _, _, _) : fl_done();
            (P_REL, _, _, _, _, _, _, _, _) : fl_rd();
            (P_WD, _, _, 1, 1, _, _, _, _) : fl_wdraw();
            (P_WD, _, _, _, _, _, _, _, _) : fl_rd();
            (P_RW, _, _, _, _, _, _, _, _) : fl_rd();
            (_, _, _, _, _, K_ADMIN, PH_PROBE3, _, _) : fl_rd();
            (P_GRANT, _, _, _, _, _, _, 1, _) : fl_rd();
            (P_CLEAN, _, _, _, _, _, _, _, 0) : fl_new();
            (P_CLEAN, _, _, _, _, _, _, _, _) : fl_rd();
        }
        size = 16;
    }
    action ls_wr() { hdr.a_nl.lease = lease_wr.execute(meta.hd_idx); }
    action ls_rd() { hdr.a_nl.lease = lease_rd.execute(meta.hd_idx); }
    table lease_op {
        key = {
            ptype           : ternary @name("ptype");
            meta.tlevel     : ternary @name("tlevel");
            meta.valid      : ternary @name("valid");
            hdr.nl.lease    : ternary @name("lease");
            meta.kind       : ternary @name("kind");
            meta.phase      : ternary @name("phase");
            hdr.recirc.pend : ternary @name("pend");
        }
        actions = { ls_wr; ls_rd; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, valid, lease, kind, phase, pend */
        const entries = {
            (P_WRITE, _, _, _, _, _, _) : ls_wr();
            (P_PROBE, 2, _, _, _, _, _) : NoAction();
            (P_PROBE, _, 1, 0, _, _, _) : ls_rd();
            (P_PROBE, _, 1, _, _, _, _) : ls_wr();
            (P_PROBE, _, _, _, _, _, _) : ls_rd();
            (P_RW, _, _, _, _, _, _) : ls_rd();
            (_, _, _, _, K_ADMIN, PH_PROBE3, _) : ls_rd();
            (P_GRANT, _, _, _, _, _, 1) : ls_rd();
        }
        size = 16;
    }
    action gt_wr() { gtime_wr.execute(meta.hd_idx); }
    action gt_rd() { meta.gts = gtime_rd.execute(meta.hd_idx); }
    table gtime_op {
        key = {
            ptype           : ternary @name("ptype");
            meta.tlevel     : ternary @name("tlevel");
            meta.valid      : ternary @name("valid");
            meta.kind       : ternary @name("kind");
            meta.phase      : ternary @name("phase");
            hdr.recirc.pend : ternary @name("pend");
        }
        actions = { gt_wr; gt_rd; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, valid, kind, phase, pend */
        const entries = {
            (P_WRITE, _, _, _, _, _) : gt_wr();
            (P_GRANT, _, _, _, _, 1) : gt_wr();
            (P_PROBE, 2, _, _, _, _) : NoAction();
            (P_PROBE, _, 1, _, _, _) : gt_wr();
            (_, _, _, K_ADMIN, PH_PROBE2, _) : gt_rd();
        }
        size = 8;
    }
    /* The timestamp's halves, a table each: an action writes the answer of one register
     * action (bf-p4c: "At most one stateful ALU operation with a given address is allowed per
     * action", 2026-12-01); TS_KEY, TS_ENTRIES(A_WR, A_RD) their common key and entries. */
#define TS_KEY \
        key = { \
            ptype           : ternary @name("ptype"); \
            meta.tlevel     : ternary @name("tlevel"); \
            meta.valid      : ternary @name("valid"); \
            has_ts          : ternary @name("has_ts"); \
            meta.kind       : ternary @name("kind"); \
            meta.phase      : ternary @name("phase"); \
            hdr.recirc.pend : ternary @name("pend"); \
        }
#define TS_ENTRIES(A_WR, A_RD) \
        const entries = { \
            (P_WRITE, _, _, _, _, _, _) : A_WR(); \
            (P_PROBE, 2, _, _, _, _, _) : NoAction(); \
            (P_PROBE, _, 1, 1, _, _, _) : A_WR(); \
            (P_REL, 2, _, _, _, _, _) : NoAction(); \
            (P_REL, _, _, _, _, _, _) : A_RD(); \
            (P_RW, _, _, _, _, _, _) : A_RD(); \
            (_, _, _, _, K_ADMIN, PH_PROBE3, _) : A_RD(); \
            (P_GRANT, _, _, _, _, _, 1) : A_RD(); \
        }
    action tsh_wr() { ts_hi_wr.execute(meta.hd_idx); }
    action tsh_rd() { hdr.a_nl.ts[63:32] = ts_hi_rd.execute(meta.hd_idx); }
    table ts_hi_op {
        TS_KEY
        actions = { tsh_wr; tsh_rd; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, valid, has_ts, kind, phase, pend */
        TS_ENTRIES(tsh_wr, tsh_rd)
        size = 16;
    }
    action tsl_wr() { ts_lo_wr.execute(meta.hd_idx); }
    action tsl_rd() { hdr.a_nl.ts[31:0] = ts_lo_rd.execute(meta.hd_idx); }
    table ts_lo_op {
        TS_KEY
        actions = { tsl_wr; tsl_rd; NoAction; }
        const default_action = NoAction();
        /* ptype, tlevel, valid, has_ts, kind, phase, pend */
        TS_ENTRIES(tsl_wr, tsl_rd)
        size = 16;
    }
    /* The admin first pass: the operation it carries out (ad) and its result, into hdr.admin
     * or hdr.adminf, whichever was parsed (a force-release comes here only when its lock is
     * missing). One table: the if-else chain it replaces was two tables a branch. */
    action adm_a(bit<3> op, bit<8> r) { ad = op; hdr.admin.result = r; }
    action adm_f(bit<3> op, bit<8> r) { ad = op; hdr.adminf.result = r; }
    table adm_op {
        key = {
            ptype                : ternary @name("ptype");
            hdr.nl.status        : ternary @name("status");
            meta.hit             : ternary @name("hit");
            meta.srv_ok          : ternary @name("srv_ok");
            hdr.admin.level      : ternary @name("level");
            hdr.adminf.isValid() : ternary @name("short");
        }
        actions = { adm_a; adm_f; NoAction; }
        const default_action = NoAction();
        /* ptype, status, hit, srv_ok, level, short */
        const entries = {
            (P_ADMIN, ADM_GET_COOKIE, _, _, _, true) : adm_f(AD_GETC, AR_OK);
            (P_ADMIN, ADM_GET_COOKIE, _, _, _, false) : adm_a(AD_GETC, AR_OK);
            (P_ADMIN, ADM_SET_COOKIE, _, _, _, true) : adm_f(AD_SETC, AR_OK);
            (P_ADMIN, ADM_SET_COOKIE, _, _, _, false) : adm_a(AD_SETC, AR_OK);
            /* no lock, or no server for it */
            (P_ADMIN, _, 0, _, _, true) : adm_f(0, AR_NOLOCK);
            (P_ADMIN, _, 0, _, _, false) : adm_a(0, AR_NOLOCK);
            (P_ADMIN, _, _, 0, _, true) : adm_f(0, AR_NOLOCK);
            (P_ADMIN, _, _, 0, _, false) : adm_a(0, AR_NOLOCK);
            (P_ADMIN, ADM_PROBE, _, _, 0, true) : adm_f(AD_PROBE, AR_OK);
            (P_ADMIN, ADM_PROBE, _, _, 0, false) : adm_a(AD_PROBE, AR_OK);
            (P_ADMIN, ADM_PROBE, _, _, 1, true) : adm_f(AD_PROBE, AR_OK);
            (P_ADMIN, ADM_PROBE, _, _, 1, false) : adm_a(AD_PROBE, AR_OK);
            (P_ADMIN, ADM_RESET, _, _, _, true) : adm_f(AD_RESET, AR_OK);
            (P_ADMIN, ADM_RESET, _, _, _, false) : adm_a(AD_RESET, AR_OK);
            (P_ADMIN, ADM_TOKEN_BASE, _, _, _, true) : adm_f(AD_TBASE, AR_OK);
            (P_ADMIN, ADM_TOKEN_BASE, _, _, _, false) : adm_a(AD_TBASE, AR_OK);
            (P_ADMIN, ADM_SET_BUFFERED, _, _, _, true) : adm_f(AD_SETB, AR_OK);
            (P_ADMIN, ADM_SET_BUFFERED, _, _, _, false) : adm_a(AD_SETB, AR_OK);
            /* an unknown operation, or a probe of a level above 1 */
            (P_ADMIN, _, _, _, _, true) : adm_f(0, AR_BADREQ);
            (P_ADMIN, _, _, _, _, false) : adm_a(0, AR_BADREQ);
        }
        size = 32;
    }
    Hash<slot_t>(HashAlgorithm_t.IDENTITY) slot_sel;     /* the token's slot, as the pass's slot */
    Hash<slot_t>(HashAlgorithm_t.IDENTITY) hd_sel;       /* ... and as its cells' */
    /* The slot the pool blocks use (sl_idx), chosen by the pass's phase alone: every pass type
     * that uses a slot has a phase of its own (the acquire's write, the grant, retry,
     * withdrawal and clean walks, the admin probe's later passes; a fresh release, lease-probe
     * or force-release uses the token's slot), and in the others no pool block runs; the
     * level is the one the pass type works. The request's cells are at the slot too (hd_idx),
     * but a grant walk's pending grant's at its slot (hd_pick, beside it: one action writing
     * both tied the two into one cluster of operands). Two tables: the if-else chain they
     * replace was a table and a gateway a branch. */
#define SLOT_PICK(NAME, SRC) action sl_##NAME() { meta.sl_idx = SRC; } action hd_##NAME() { meta.hd_idx = SRC; }
    SLOT_PICK(off0, meta.at_off0)
    SLOT_PICK(off1, meta.at_off1)
    SLOT_PICK(cur0, meta.at_cur0)
    SLOT_PICK(cur1, meta.at_cur1)
    SLOT_PICK(ch0, meta.at_ch0)
    SLOT_PICK(ch1, meta.at_ch1)
    SLOT_PICK(pend, hdr.recirc.pslot)
    /* the token's slot through the hash unit, not meta.tslot: a move from tslot would tie the
     * slot numbers' cluster of operands to the token's (22 fields, more than a MAU group's 16
     * containers: TestTofinoPHV); a hash each, as an action's hash data is at most 32 bits;
     * chosen by an entry that matches every pass, not as the default action, which cannot
     * use the hash unit (bf-p4c: "Cannot specify sl_tok as the default action, as it requires
     * the hash distribution unit", 2026-11-30) */
    action sl_tok() { meta.sl_idx = slot_sel.get({hdr.nl.token_lo[SLOT_BITS - 1:0]}); }
    action hd_tok() { meta.hd_idx = hd_sel.get({hdr.nl.token_lo[SLOT_BITS - 1:0]}); }
#define SLOT_KEY \
        key = { \
            meta.phase        : ternary @name("phase"); \
            hdr.nl.prio       : ternary @name("prio"); \
            hdr.recirc.level  : ternary @name("level"); \
            hdr.recirc.clevel : ternary @name("clevel"); \
            hdr.admin.level   : ternary @name("probe_level"); \
            hdr.recirc.pend   : ternary @name("pend"); \
        }
#define SLOT_ENTRIES(P, PEND0, PEND1) \
        const entries = { \
            (PH_WRITE, 0, _, _, _, _) : P##off0(); \
            (PH_WRITE, _, _, _, _, _) : P##off1(); \
            (PH_RWALK, 0, _, _, _, _) : P##cur0(); \
            (PH_RWALK, _, _, _, _, _) : P##cur1(); \
            (PH_WDRAW, 0, _, _, _, _) : P##cur0(); \
            (PH_WDRAW, _, _, _, _, _) : P##cur1(); \
            (PH_GRANT, _, 0, _, _, 1) : PEND0(); \
            (PH_GRANT, _, _, _, _, 1) : PEND1(); \
            (PH_GRANT, _, 0, _, _, _) : P##cur0(); \
            (PH_GRANT, _, _, _, _, _) : P##cur1(); \
            (PH_CLEAN, _, _, 0, _, _) : P##ch0(); \
            (PH_CLEAN, _, _, _, _, _) : P##ch1(); \
            (PH_PROBE2, _, _, _, 0, _) : P##cur0(); \
            (PH_PROBE2, _, _, _, _, _) : P##cur1(); \
            (PH_PROBE3, _, _, _, 0, _) : P##cur0(); \
            (PH_PROBE3, _, _, _, _, _) : P##cur1(); \
            (_, _, _, _, _, _) : P##tok(); \
        }
    /* phase, prio, level, clevel, probe_level, pend */
    table slot_pick {
        SLOT_KEY
        actions = { sl_off0; sl_off1; sl_cur0; sl_cur1; sl_ch0; sl_ch1; sl_tok; NoAction; }
        const default_action = NoAction();   /* (the last entry matches every pass) */
        SLOT_ENTRIES(sl_, sl_cur0, sl_cur1)
        size = 32;
    }
    table hd_pick {
        SLOT_KEY
        actions = { hd_off0; hd_off1; hd_cur0; hd_cur1; hd_ch0; hd_ch1; hd_pend; hd_tok; NoAction; }
        const default_action = NoAction();
        SLOT_ENTRIES(hd_, hd_pend, hd_pend)
        size = 32;
    }
    table tok_hi_op {
        key = {
            meta.took0         : ternary @name("took0");
            meta.took1         : ternary @name("took1");
            meta.grant         : ternary @name("grant");
            ptype              : ternary @name("ptype");
            hdr.recirc.examine : ternary @name("examine");
            meta.tok_lo        : ternary @name("tok_lo");
            WR_GRANT           : ternary @name("resub_grant");
            ad                 : ternary @name("ad");
            meta.kind          : ternary @name("kind");
            meta.phase         : ternary @name("phase");
        }
        actions = { th_inc; th_read; th_set; NoAction; }
        const default_action = NoAction();
        /* took0, took1, grant, ptype, examine, tok_lo, resub_grant, ad, kind, phase */
        const entries = {
            (1, _, 1, _, _, 0xffffffff, _, _, _, _) : th_inc();
            (_, 1, 1, _, _, 0xffffffff, _, _, _, _) : th_inc();
            (_, _, 1, P_GRANT, 1, 0xffffffff, _, _, _, _) : th_inc();
            (1, _, 1, _, _, _, _, _, _, _) : th_read();
            (_, 1, 1, _, _, _, _, _, _, _) : th_read();
            (_, _, 1, P_GRANT, 1, _, _, _, _, _) : th_read();
            (_, _, _, P_WRITE, _, _, 1, _, _, _) : th_read();
            (_, _, _, P_RW, _, _, _, _, _, _) : th_read();
            (_, _, _, _, _, _, _, AD_PROBE, _, _) : th_read();
            (_, _, _, _, _, _, _, AD_RESET, _, _) : th_read();
            (_, _, _, _, _, _, _, AD_TBASE, _, _) : th_read();
            (_, _, _, _, _, _, _, _, K_ADMIN, PH_TBASE2) : th_set();
        }
        size = 16;
    }

    /* ---- Helpers ---- */
    /* DROP_COUNT, AGAIN and SEND_NEXT are statements, not actions: an action called from the
     * apply block is a logical table of its own to bf-p4c (one per call), where statements
     * join the other statements of their block in one table (p4c's SynthesizeActions, as
     * bf-p4c's policy allows: no statement reading what one before it wrote, no two
     * externs). The program had about 425 logical tables, a Tofino 2 pipe holds 320
     * (2026-12-01; docs/dataplane.md, "The real compiler"); again alone was called at 20
     * sites. */
    /* Drops the packet (and what it carries: a dropped packet reaches no egress, so an
     * answer built in it goes nowhere; no write of the answer's validity here, which would
     * order every drop after the answer's setValid: an output dependency to bf-p4c). */
#define DROP_COUNT(R) nl_drops.count(R); ig_dprsr_md.drop_ctl = 1

    action use_level0() {
        meta.level = 0;
        meta.left = meta.left0;
        meta.size = meta.size0;
        meta.q_endx = meta.size0 + 0x7fff;
        meta.q_end0 = meta.size0 - 1;
        meta.q_wrap = 0x8001 - meta.size0;
    }
    action use_level1() {
        meta.level = 1;
        meta.left = meta.left1;
        meta.size = meta.size1;
        meta.q_endx = meta.size1 + 0x7fff;
        meta.q_end0 = meta.size1 - 1;
        meta.q_wrap = 0x8001 - meta.size1;
    }
    /* The level the pass works (use_level0, use_level1): a release's or lease-probe's token's
     * (tlevel; 2, no level, works level 1's registers and is refused later), a grant walk's, a
     * clean walk's, an admin probe's (its first pass by the request's status: a probe that does
     * not go on uses no level), else the request's priority's. One table: the if-else chain
     * and the test of its value were a table a branch and two more. */
    table level_pick {
        key = {
            ptype             : ternary @name("ptype");
            meta.tlevel       : ternary @name("tlevel");
            hdr.recirc.level  : ternary @name("level");
            hdr.recirc.clevel : ternary @name("clevel");
            hdr.nl.status     : ternary @name("status");
            meta.kind         : ternary @name("kind");
            meta.phase        : ternary @name("phase");
            hdr.admin.level   : ternary @name("probe_level");
            hdr.nl.prio       : ternary @name("prio");
        }
        actions = { use_level0; use_level1; }
        const default_action = use_level1();
        /* ptype, tlevel, level, clevel, status, kind, phase, probe_level, prio */
        const entries = {
            (P_REL, 0, _, _, _, _, _, _, _) : use_level0();
            (P_REL, _, _, _, _, _, _, _, _) : use_level1();
            (P_PROBE, 0, _, _, _, _, _, _, _) : use_level0();
            (P_PROBE, _, _, _, _, _, _, _, _) : use_level1();
            (P_GRANT, _, 0, _, _, _, _, _, _) : use_level0();
            (P_GRANT, _, _, _, _, _, _, _, _) : use_level1();
            (P_CLEAN, _, _, 0, _, _, _, _, _) : use_level0();
            (P_CLEAN, _, _, _, _, _, _, _, _) : use_level1();
            (P_ADMIN, _, _, _, ADM_PROBE, _, _, 0, _) : use_level0();
            (P_ADMIN, _, _, _, ADM_PROBE, _, _, _, _) : use_level1();
            (_, _, _, _, _, K_ADMIN, PH_PROBE2, 0, _) : use_level0();
            (_, _, _, _, _, K_ADMIN, PH_PROBE2, _, _) : use_level1();
            (_, _, _, _, _, K_ADMIN, PH_PROBE3, 0, _) : use_level0();
            (_, _, _, _, _, K_ADMIN, PH_PROBE3, _, _) : use_level1();
            (_, _, _, _, _, _, _, _, 0) : use_level0();
        }
        size = 16;
    }

    /* The clock: the timestamp's four slices are each moved into a container of their own by
     * the hash unit (IDENTITY: an adder takes operands aligned in their containers, which
     * slices of the 48-bit timestamp are not: bf-p4c, "conflicting PARDE alignment
     * requirements"), then summed in two steps, an action each (an action computes one
     * operation per field in one stage: "action spanning multiple stages"). */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) clk_10;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) clk_16;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) clk_17;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) clk_21;

    /* 32-bit values put together by the hash unit (IDENTITY), for the same reason: the
     * offsets a pass starts from, zero-extended, and the token and admin value, a 64-bit
     * grant number shifted by SLOT_BITS next to a slot, in 32-bit halves (bf-p4c refuses the
     * 64-bit shift and OR across containers: "violates action constraints imposed by
     * Tofino"). TOK_HI_SLICED(h, hi, lo) is bits 63:32 of (hi ++ lo) << SLOT_BITS, the hash of
     * hi's low bits next to lo's high bits; TOK_LO(h, lo, slot) bits 31:0, the hash of lo's low
     * bits next to the slot's (slot < 2^SLOT_BITS); VAL_LO(h, lo) lo << SLOT_BITS. No OR and no
     * shift in the pipe: bf-p4c made an OR of a hash with a shifted field two steps of one
     * action ("action spanning multiple stages"), took the hash ORed with the slot as action
     * data beside the slot's two halves ("requires too many sources": an action with action
     * data reads one container), and a shift or an OR ties its operands into one cluster of the
     * grant numbers' halves, which bf-p4c must place in one MAU group (16 containers of a size):
     * with the shifted copies (sh_pend, sh_wr, sh_a) and the admin value's shifts it was 23
     * fields. The slices split the fields they are taken from, which costs nothing when they
     * are split at bit 16 (NETLOCK_PART_BITS 14, the Tofino build's: two 16-bit halves are two
     * sources, which a move may read). A Hash is called from one place, so each site has its
     * own; the late ones are few: a stage has six 16-bit hash distribution units and takes at
     * most two 32-bit outputs (bf-p4c's TofinoIXBarSpec, two hash functions of three slices; a
     * 32-bit output's halves in one function, IXBar::getHashDistGroups), and with a pair of hashes
     * in each branch of the decisions the last stages ran out ("could not fit within the input
     * crossbar", Tofino 2, 2026-12-01 at 93b92e8: 21 stages). The branches choose the token
     * (meta.tk, meta.k_lo), one pair per destination puts it together after them. */
#define TOK_HI_SLICED(h, hi, lo) h.get({(hi)[31 - SLOT_BITS:0], (lo)[31:32 - SLOT_BITS]})
#define TOK_LO(h, lo, slot) h.get({(lo)[31 - SLOT_BITS:0], (slot)[SLOT_BITS - 1:0]})
/* VAL_LO(h, lo): lo << SLOT_BITS, by the hash unit (a shift ties its source and result into one
 * cluster of operands; see the copies below) */
#define VAL_LO(h, lo) h.get({(lo)[31 - SLOT_BITS:0], (bit<SLOT_BITS>)0})
    Hash<slot_t>(HashAlgorithm_t.IDENTITY) off_res;
    Hash<slot_t>(HashAlgorithm_t.IDENTITY) off_cur;
    Hash<slot_t>(HashAlgorithm_t.IDENTITY) off_ch;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) off_adm;      /* meta.gt in the probe: admin.offset widened */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) off_head;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) off_probe;    /* the admin probe's slot offset */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) qwrap_h;      /* meta.q_wrapx */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) qlim_h;       /* meta.q_lim: meta.size widened */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) plim_h;       /* meta.gt in the probe: meta.size widened */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) size1q_h;     /* meta.size1q: meta.size1 widened */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) qend0_h;      /* meta.q_end0x */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) qendx_h;      /* meta.q_endxx */
    /* Copies by the hash unit (IDENTITY) where a move would join two clusters of instruction
     * operands: bf-p4c places each cluster in one MAU group of 16 containers of a size, and the
     * queue positions (with the admin reply's and the resubmitted offset) and the slot numbers
     * (with the token's slot, the pending grant's and the admin reply's) were each more fields
     * than that (docs/dataplane.md, "The real compiler"; `netlock p4 tofino` lists the clusters
     * wider than a group). A hash's output is no operand of an instruction. */
    Hash<slot_t>(HashAlgorithm_t.IDENTITY) slot_tok;     /* meta.tslot: the request token's slot */
    Hash<slot_t>(HashAlgorithm_t.IDENTITY) slot_pend;    /* recirc.pslot */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) slot_adm;     /* admin.slot */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) pos_resub;    /* resub.off */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) pos_ahead;    /* admin.head */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) pos_atail;    /* admin.tail */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) pos_agnext0;  /* admin.gnext, at level 0 and 1 */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) pos_agnext1;
#if NETLOCK_FOLD
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) mflags_h;   /* the bridge's one-bit metadata */
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) lflags_h;   /* the bridge's locals */
#endif
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) val_lo_cnt;   /* admin.value_lo (VAL_LO) */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) val_lo_pass2;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) want_hi_h;    /* admin value >> SLOT_BITS, high half */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tseq_hi_h;    /* the request token >> SLOT_BITS, high half */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tok_seq;      /* the token's grant number, low half */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tok_pend_hi;  /* ans_grant_pending */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tok_pend_lo;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tok_ans_hi;   /* TK_ANS: the writing pass's, the retry walk's */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tok_ans_lo;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tok_probe_hi; /* the admin probe's slot */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) tok_probe_lo;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) val_cnt;      /* TK_VAL: admin value = grant counter << SLOT_BITS */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) val_pass2;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) val_want;     /* admin value >> SLOT_BITS, low half */
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) val_b;
    Hash<bit<32>>(HashAlgorithm_t.IDENTITY) nflags_h;
    Hash<bit<16>>(HashAlgorithm_t.IDENTITY) harg_h;
    /* Hash outputs, at most 32 bits of them per action: Tofino 1 carries a hash's output to
     * the ALUs on the action's immediate pathway, 32 bits wide (bf-p4c: "the number of bits
     * required to go through the immediate pathway ... is greater than the available bits
     * 32"). p4c makes one action of a run of assignments in the apply block, hash outputs and
     * all, so where a run would carry more, the rest is an action of its own (a call ends a
     * run): one more table, in the same stage when nothing it writes is read there. */
    action h_now_b() { meta.now_b = clk_16.get({ig_md.ingress_mac_tstamp[47:16]}); }
    action h_now_c() { meta.now_c = clk_17.get({ig_md.ingress_mac_tstamp[47:17]}); }
    action h_now_d() { meta.now_d = clk_21.get({ig_md.ingress_mac_tstamp[47:21]}); }
    /* The ended table's fingerprint, an action of its own beside the cell's index (16 + 32
     * bits of hash data in one action pass the 32-bit immediate pathway). */
    action h_fp() { meta.fp = ended_fp.get({hdr.nl.txn_lo, hdr.nl.lock, hdr.nl.txn_hi}); }
    action h_tslot() {
        meta.tslot = slot_tok.get({hdr.nl.token_lo[SLOT_BITS - 1:0]});
        meta.ntslot = ~((slot_t)hdr.nl.token_lo[SLOT_BITS - 1:0]);
    }
    action h_o_cur() { meta.o_cur = off_cur.get({meta.cur15}); }
    action h_o_ch() { meta.o_ch = off_ch.get({meta.ch15}); }
    action h_tseq_lo() {
        meta.tseq_lo = tok_seq.get({hdr.nl.token_hi[SLOT_BITS - 1:0], hdr.nl.token_lo[31:SLOT_BITS]});
    }
    action h_q_ends() {
        meta.q_wrapx = qwrap_h.get({meta.q_wrap});
        meta.q_end0x = qend0_h.get({meta.q_end0});
    }
    action h_q_endx() { meta.q_endxx = qendx_h.get({meta.q_endx}); }
    action h_pend_lo() { hdr.a_nl.token_lo = TOK_LO(tok_pend_lo, hdr.recirc.pseq_lo, hdr.recirc.pslot); }
    action h_ans_lo() { hdr.a_nl.token_lo = TOK_LO(tok_ans_lo, meta.k_lo, meta.sl_idx); }
    action h_probe_lo() { hdr.nl.token_lo = TOK_LO(tok_probe_lo, SV_SEQ, meta.sl_idx); }
    action h_val_lo_cnt() { hdr.admin.value_lo = VAL_LO(val_lo_cnt, meta.tok_lo); }
    action h_val_lo_pass2() { hdr.admin.value_lo = VAL_LO(val_lo_pass2, hdr.recirc.a_lo); }
    action h_adm_off() { meta.gt = off_adm.get({hdr.admin.offset}); }
    action h_want_lo() {
        hdr.recirc.a_lo = val_want.get({hdr.admin.value_hi[SLOT_BITS - 1:0], hdr.admin.value_lo[31:SLOT_BITS]});
    }
    action clock_pairs() {
        meta.now_a = meta.now_a + meta.now_b;
        meta.now_c = meta.now_c + meta.now_d;
    }
    action clock_sum() {
        meta.now = meta.now_a + meta.now_c;
    }
    /* The comparisons' saturating differences (meta.gt), each in an action: assigned in the
     * apply block, p4c would propagate the difference into the if that tests it, which a
     * gateway cannot evaluate ("condition expression too complex"). */
    action gt_seq_cnt() {
        meta.gt = WR_SEQ |-| meta.tok_lo;   /* the writing pass's grant number > counter */
    }
    action gt_slot_cnt() {
        meta.gt = SV_SEQ |-| meta.tok_lo;           /* the retry walk's */
    }
    action gt_slot_val() {
        meta.gt3 = SV_SEQ |-| hdr.recirc.a_lo;      /* the third probe pass's, against the value */
    }
    action head_diff() {
        meta.hdiff = meta.hv - meta.h_arg;
    }
    /* The token's room in each level's region: size |-| d for its offset d, computed from
     * ~d as ~d |-| ~size (equal: both are size - d when d <= size and 0 otherwise). */
    action tok_room() {
        meta.t_off = meta.t_off |-| meta.nsize0;
        meta.left = meta.left |-| meta.nsize1;
    }
    /* The admin probe's slot: the offset from the head (probe_add), wrapped in the region
     * (probe_wrap, probe_min), each an action of its own (one operation per field and
     * stage). */
    action probe_add() {
        meta.p_o = meta.p_o + meta.gt;
    }
    /* "if p_o >= size: p_o -= size" (size widened into meta.gt) with no gateway (bf-p4c's
     * gateways compare two fields for equality only): p_o - size wraps above p_o exactly when
     * p_o < size, and is at most p_o otherwise, so the smaller of the two is the answer for
     * every p_o and size. */
    action probe_wrap() {
        meta.gt = meta.p_o - meta.gt;
    }
    action probe_min() {
        meta.p_o = min(meta.p_o, meta.gt);
    }

    /* Point the pool blocks at slot s. */

    /* Answers. The source of every answer to a client is the lock's server address. ans_client
     * leaves its destination to the caller: ans_to_client's ip:port, or the slot's client as the
     * pool's blocks read it (ans_slot_client). */
    /* ans_client but the token, which the caller writes (a field written twice in a pass is
     * two stages to bf-p4c: the pending grant's token halves come from two hashes) */
    action ans_client_notok(bit<8> op, bit<8> fwd) {
        meta.a_valid = 1;
        meta.a_routed = 1;
        hdr.ansx.auth = 0;
        hdr.a_ip.sip = meta.srv_ip;
        hdr.a_udp.sport = meta.srv_udp;
        hdr.a_nl.op = op;
        hdr.a_nl.status = 0;
        hdr.a_nl.flags = 0;
        hdr.a_nl.cip = 0;
        hdr.a_nl.cport = 0;
        meta.a_fwd = fwd[0:0];   /* FL_FWD, cip and cport: after the decisions (an action tests no PHV) */
        hdr.a_nl.lock = hdr.nl.lock;
        hdr.a_nl.mode = 0;
        hdr.a_nl.prio = 0;
        hdr.a_nl.tenant = 0;
        /* txn, ts and lease: each caller's, or the slot's as the pool's blocks read them */
        hdr.a_nl.slots = 0;
    }
    action ans_client(bit<8> op, bit<8> fwd) {
        ans_client_notok(op, fwd);
        hdr.a_nl.token_hi = 0;
        hdr.a_nl.token_lo = 0;
    }
    action ans_to_client(bit<8> op, bit<32> ip, bit<16> port, bit<8> fwd) {
        ans_client(op, fwd);
        hdr.a_ip.dip = ip;
        hdr.a_udp.dport = port;
    }
    /* The slot's client as the destination (the address read into a_ip.dip by ip_rd). */
    action ans_slot_client() {
        hdr.a_udp.dport = meta.rd_port;
        hdr.a_nl.tenant = meta.rd_tenant;
    }
    /* An answer to the requester echoing the request (release ack, reject, probe reply), its
     * lease the caller's (ans_echo: 0). */
    action ans_reply(bit<8> op, bit<8> flags, bit<8> status) {
        ans_to_client(op, hdr.nl.cip, hdr.nl.cport, meta.rq_fwd);
        hdr.a_nl.flags = hdr.a_nl.flags | flags;
        hdr.a_nl.status = status;
        hdr.a_nl.mode = hdr.nl.mode;
        hdr.a_nl.prio = hdr.nl.prio;
        hdr.a_nl.tenant = hdr.nl.tenant;
        hdr.a_nl.txn_hi = hdr.nl.txn_hi; hdr.a_nl.txn_lo = hdr.nl.txn_lo;
        hdr.a_nl.token_hi = hdr.nl.token_hi;
        hdr.a_nl.token_lo = hdr.nl.token_lo;
        hdr.a_nl.ts = hdr.nl.ts;
    }
    action ans_echo(bit<8> op, bit<8> flags, bit<8> status) {
        ans_reply(op, flags, status);
        hdr.a_nl.lease = 0;
    }
    /* A grant to the request in the slot view (its token: the caller's), the slot's lease as
     * the pool's flags block read or wrote it (a_nl.lease): the writing pass's to the requester
     * (ans_grant, its ts the caller's), a retry walk's or a force-release's to the slot's
     * client (ans_grant_slot, its ts the slot's, read by the pool's flags block). */
    action ans_grant_to(bit<8> fwd) {
        ans_client(OP_GRANT, fwd);
        hdr.a_nl.mode = SV_MODE;
        hdr.a_nl.prio = SV_PRIO;
        hdr.a_nl.txn_hi = hdr.nl.txn_hi; hdr.a_nl.txn_lo = hdr.nl.txn_lo;   /* every grant from the slot view is the request's */
    }
    action ans_grant(bit<32> ip, bit<16> port, bit<16> tenant) {
        ans_grant_to(SV_FWD);
        hdr.a_ip.dip = ip;
        hdr.a_udp.dport = port;
        hdr.a_nl.tenant = tenant;
    }
    action ans_grant_slot() {
        ans_grant_to(SV_FWD);
        ans_slot_client();
    }
    /* The grant the grant walk decided in the pass before (its number and slot carried in the
     * recirculation header, its flags in pflags): sent before the pool's flags block reads the
     * examined slot's flags into pflags; its txn, client, lease and timestamp are the slot's,
     * which the pool's blocks read at hd_idx (the pending slot) into the answer's fields, the
     * port and tenant after them (ans_slot_client). */
    action ans_grant_pending() {
        ans_client_notok(OP_GRANT, SV_FWD);   /* token_lo: h_pend_lo */
        hdr.a_nl.mode = SV_MODE;
        hdr.a_nl.prio = SV_PRIO;
        hdr.a_nl.token_hi = TOK_HI_SLICED(tok_pend_hi, hdr.recirc.pseq_hi, hdr.recirc.pseq_lo);
    }
    /* A control message to the lock's server. */
    action ans_to_server(bit<8> op) {
        meta.a_valid = 1;
        meta.a_routed = 0;
        meta.a_fwd = 0;
        hdr.ansx.auth = 1;
        hdr.a_udp.sport = NL_PORT;
        hdr.a_ip.dip = meta.srv_ip;
        hdr.a_udp.dport = meta.srv_udp;
        hdr.a_nl.op = op;
        hdr.a_nl.mode = 0;
        hdr.a_nl.flags = 0;
        hdr.a_nl.status = 0;
        hdr.a_nl.prio = 0;
        hdr.a_nl.tenant = 0;
        hdr.a_nl.lock = hdr.nl.lock;
        hdr.a_nl.txn_hi = 0;
        hdr.a_nl.txn_lo = 0;
        hdr.a_nl.token_hi = 0;
        hdr.a_nl.token_lo = 0;
        hdr.a_nl.ts = 0;
        hdr.a_nl.lease = 0;
        hdr.a_nl.cip = 0;
        hdr.a_nl.cport = 0;
        hdr.a_nl.slots = 0;
    }
    /* Queue-empty announces each level's free slots: level 0's in slots, level 1's in lease (as
     * p4/netlock.p4). */
    action ans_queue_empty() {
        ans_to_server(OP_QEMPTY);
        hdr.a_nl.slots = meta.size0;
        hdr.a_nl.lease = meta.size1q;
    }
    action ans_overflow() {
        ans_to_server(OP_OVERFLOW);
        hdr.a_nl.flags = FL_FWD;
        hdr.a_nl.mode = hdr.nl.mode;
        hdr.a_nl.prio = hdr.nl.prio;
        hdr.a_nl.tenant = hdr.nl.tenant;
        hdr.a_nl.txn_hi = hdr.nl.txn_hi; hdr.a_nl.txn_lo = hdr.nl.txn_lo;
        hdr.a_nl.ts = hdr.nl.ts;
        hdr.a_nl.lease = hdr.nl.lease;
        hdr.a_nl.cip = hdr.nl.cip;
        hdr.a_nl.cport = hdr.nl.cport;
    }

    /* Continue in another pass of type P (recirculated). */
#define AGAIN(P) hdr.recirc.phase = P; meta.cont = 1
    /* Continue to send an answer decided now (after this pass's one). */
#define SEND_NEXT(W) hdr.recirc.phase = PH_SEND; hdr.recirc.send = W; meta.cont = 1


    /* The release's decisions (a pass of type P_REL): two tables whose const entries are, first
     * match first, the if-else chains they replace (docs/dataplane.md, "Where it stands": the
     * decisions' ifs were some seventeen logical tables in the pipe's last stages). V below is
     * "the token names a level and the release is valid" (tlevel != 2 && valid == 1); NOWALK
     * "nobody holds or nobody waits" (nhold0 == 0 || w0 == w1 == 0).
     *
     * rel_walk: what comes next. Not V: finished. V: a grant walk when nobody holds and
     * somebody waits (level 0 if it has waiters, else level 1; its first slot the level's
     * gnext); a clean walk when the head moved and done slots follow it (adv && qdone), or,
     * with no walk, a force-release that found the queue empty (qe: a clean pass that examines
     * nothing sends queue-empty); else, with no walk, finished. */
    action rw_fin() { finished = 1; }
    action rw_clean_qv() {
        clean = 1;
        hdr.recirc.clevel = meta.level;
        hdr.recirc.cleft = meta.qv;
        hdr.recirc.chead = head;
    }
    action rw_clean_0() {
        clean = 1;
        hdr.recirc.clevel = meta.level;
        hdr.recirc.cleft = 0;
        hdr.recirc.chead = head;
    }
    action rw_walk0() { walk = 1; hdr.recirc.level = 0; hdr.recirc.cur = g0; }
    action rw_walk1() { walk = 1; hdr.recirc.level = 1; hdr.recirc.cur = g1; }
    action rw_walk0_clean() { rw_walk0(); rw_clean_qv(); }
    action rw_walk1_clean() { rw_walk1(); rw_clean_qv(); }
    table rel_walk {
        key = {
            meta.tlevel : ternary @name("tlevel");
            meta.valid  : ternary @name("valid");
            meta.nhold0 : ternary @name("nhold0");
            w0          : ternary @name("w0");
            w1          : ternary @name("w1");
            adv         : ternary @name("adv");
            qdone       : ternary @name("qdone");
            forced      : ternary @name("forced");
            qe          : ternary @name("qe");
        }
        actions = { rw_fin; rw_clean_qv; rw_clean_0; rw_walk0; rw_walk1; rw_walk0_clean; rw_walk1_clean; }
        const default_action = rw_fin();
        /* tlevel, valid, nhold0, w0, w1, adv, qdone, forced, qe */
        const entries = {
            (2, _, _, _, _, _, _, _, _) : rw_fin();
            (_, 0, _, _, _, _, _, _, _) : rw_fin();
            (_, _, 1, 0, 0, 1, 1, _, _) : rw_clean_qv();
            (_, _, 1, 0, 0, _, _, 1, 1) : rw_clean_0();
            (_, _, 1, 0, 0, _, _, _, _) : rw_fin();
            (_, _, 1, 0, _, 1, 1, _, _) : rw_walk1_clean();   /* w1 != 0 */
            (_, _, 1, 0, _, _, _, _, _) : rw_walk1();
            (_, _, 1, _, _, 1, 1, _, _) : rw_walk0_clean();   /* w0 != 0 */
            (_, _, 1, _, _, _, _, _, _) : rw_walk0();
            (_, _, _, _, _, 1, 1, _, _) : rw_clean_qv();      /* nhold0 == 0 */
            (_, _, _, _, _, _, _, 1, 1) : rw_clean_0();
        }
        size = 11;
    }
    /* rel_answer: the answer. Not V: a force-release's result "not held", a release's reject
     * (not the holder). V: a force-release tells the old holder its lease ended (lockcore's
     * expiry answer) and the controller "ok"; a release that starts neither walk (NOWALK and
     * not adv && qdone) when queue-empty is due sends queue-empty first, then (in the next
     * pass) its answer; else the release's answer. The answer after a queue-empty
     * (SEND_NEXT) goes with a valid release's token in a level (t_in), not forced, queue-empty
     * due, neither walk: with rel_walk's cases, exclusive with next_step's. */
    action ra_notheld() { hdr.adminf.result = AR_NOTHELD; }
    action ra_reject() { ans_echo(OP_REJECT, 0, ST_NOTHOLDER); }
    action ra_reject_ack() { ans_echo(OP_REJECT, 0, ST_NOTHOLDER); SEND_NEXT(SEND_ACK); }
    action ra_expired() {
        ans_grant_slot();   /* its ts the slot's, read by the pool's flags block */
        hdr.a_nl.token_hi = hdr.nl.token_hi;
        hdr.a_nl.token_lo = hdr.nl.token_lo;
        hdr.a_nl.op = OP_REJECT;
        hdr.a_nl.status = ST_LEASEEXP;
        hdr.a_nl.lease = 0;
        hdr.adminf.result = AR_OK;
    }
    action ra_qe() { ans_queue_empty(); }
    action ra_qe_ack() { ans_queue_empty(); SEND_NEXT(SEND_ACK); }
    action ra_release() { ans_echo(OP_RELEASE, FL_REPLY, 0); }
    table rel_answer {
        key = {
            meta.tlevel : ternary @name("tlevel");
            meta.valid  : ternary @name("valid");
            forced      : ternary @name("forced");
            qe          : ternary @name("qe");
            t_in        : ternary @name("t_in");
            meta.nhold0 : ternary @name("nhold0");
            w0          : ternary @name("w0");
            w1          : ternary @name("w1");
            adv         : ternary @name("adv");
            qdone       : ternary @name("qdone");
        }
        actions = { ra_notheld; ra_reject; ra_reject_ack; ra_expired; ra_qe; ra_qe_ack; ra_release; }
        const default_action = ra_release();
        /* tlevel, valid, forced, qe, t_in, nhold0, w0, w1, adv, qdone */
        const entries = {
            (2, _, 1, _, _, _, _, _, _, _) : ra_notheld();
            (2, 1, 0, 1, 1, _, _, _, _, _) : ra_reject_ack();   /* as the chain it replaced; never
                                                         * runs: tok_lvl sets tlevel 2 with t_in 0,
                                                         * and valid is 1 only with t_in 1 */
            (2, _, _, _, _, _, _, _, _, _) : ra_reject();
            (_, 0, 1, _, _, _, _, _, _, _) : ra_notheld();
            (_, 0, _, _, _, _, _, _, _, _) : ra_reject();
            (_, _, 1, _, _, _, _, _, _, _) : ra_expired();
            /* the next two rows never run (kept as the chain they replace had them): a valid
             * release that did not move the head (adv 0) leaves its slot counted at its
             * level (q_sub takes a slot off only with the head, q_dec), so r0 or r1 is at
             * least 1 and qe_pick says 0 */
            (_, _, _, 1, 1, 0, _, _, 0, _) : ra_qe_ack();
            (_, _, _, 1, _, 0, _, _, 0, _) : ra_qe();
            (_, _, _, 1, 1, 0, _, _, _, 0) : ra_qe_ack();
            (_, _, _, 1, _, 0, _, _, _, 0) : ra_qe();
            (_, _, _, 1, 1, _, 0, 0, 0, _) : ra_qe_ack();
            (_, _, _, 1, _, _, 0, 0, 0, _) : ra_qe();
            (_, _, _, 1, 1, _, 0, 0, _, 0) : ra_qe_ack();
            (_, _, _, 1, _, _, 0, 0, _, 0) : ra_qe();
        }
        size = 14;
    }


    /* The grant walk's decisions (a pass of type P_GRANT), two tables for the if-else chains
     * they replace (rel_walk's comment).
     *
     * grant_pend: a grant decided here (the slot examined and granted) is pending for the next
     * pass, which writes its grant number and sends it: its slot, and its number, the one
     * tok_next returned + 1 (1 after the wrap). recirc.pflags (the slot's mode, priority and
     * forwarded flag) comes from the pool's flags block; its txn, client, lease and timestamp
     * are read by the next pass. */
    action gp_set(bit<32> seq_lo) {
        hdr.recirc.pend = 1;
        hdr.recirc.pslot = slot_pend.get({meta.sl_idx});
        hdr.recirc.pseq_hi = meta.tok_hi;
        hdr.recirc.pseq_lo = seq_lo;
    }
    action gp_next() {
        hdr.recirc.pend = 1;
        hdr.recirc.pslot = slot_pend.get({meta.sl_idx});
        hdr.recirc.pseq_hi = meta.tok_hi;
        hdr.recirc.pseq_lo = meta.tok_lo + 1;
    }
    action gp_none() { hdr.recirc.pend = 0; }
    table grant_pend {
        key = {
            exam     : ternary @name("examine");
            meta.grant  : ternary @name("grant");
            meta.tok_lo : ternary @name("tok_lo");
        }
        actions = { gp_set; gp_next; gp_none; }
        const default_action = gp_none();
        /* examine, grant, tok_lo */
        const entries = {
            (1, 1, 0xffffffff) : gp_set(1);
            (1, 1, _) : gp_next();
        }
        size = 2;
    }
    /* grant_next: what follows, decided from the pass's tests (the waiters' counts, pass_on),
     * not from the fields grant_pend writes. The walk stops when it may not go past the slot
     * or nobody waits: to send the pending grant (a walk pass more), or the clean walk it
     * was to do after (pclean), or finished. Else it examines the next waiter, at level 0
     * if it has one, else level 1: the position after cur (nc) when the walk is at that
     * level, the level's gnext when it moves there. */
    action gn_stop_walk() { hdr.recirc.examine = 0; walk = 1; }
    action gn_stop_clean() { hdr.recirc.examine = 0; clean = 1; }
    action gn_stop_fin() { hdr.recirc.examine = 0; finished = 1; }
    action gn_next_nc(bit<8> level) {
        hdr.recirc.examine = 1;
        walk = 1;
        hdr.recirc.level = level;
        hdr.recirc.cur = nc;
    }
    action gn_next_g0() { hdr.recirc.examine = 1; walk = 1; hdr.recirc.level = 0; hdr.recirc.cur = g0; }
    action gn_next_g1() { hdr.recirc.examine = 1; walk = 1; hdr.recirc.level = 1; hdr.recirc.cur = g1; }
    table grant_next {
        key = {
            pass_on           : ternary @name("pass_on");
            w0                : ternary @name("w0");
            w1                : ternary @name("w1");
            exam           : ternary @name("examine");
            meta.grant        : ternary @name("grant");
            hdr.recirc.pclean : ternary @name("pclean");
            meta.level        : ternary @name("level");
        }
        actions = { gn_stop_walk; gn_stop_clean; gn_stop_fin; gn_next_nc; gn_next_g0; gn_next_g1; }
        const default_action = gn_next_g0();
        /* pass_on, w0, w1, examine, grant, pclean, level */
        const entries = {
            (0, _, _, 1, 1, _, _) : gn_stop_walk();
            (0, _, _, _, _, 1, _) : gn_stop_clean();
            (0, _, _, _, _, _, _) : gn_stop_fin();
            (_, 0, 0, 1, 1, _, _) : gn_stop_walk();
            (_, 0, 0, _, _, 1, _) : gn_stop_clean();
            (_, 0, 0, _, _, _, _) : gn_stop_fin();
            /* at level 1, gn_next_nc(1) is gn_next_g1: a walk that goes past the slot
             * (pass_on 1: USED, so not a live slot left ungranted) ran gnext1_op's g1_set,
             * which returns g_arg, nc */
            (_, 0, _, _, _, _, 1) : gn_next_nc(1);   /* w1 != 0 */
            (_, 0, _, _, _, _, _) : gn_next_g1();
            (_, _, _, _, _, _, 0) : gn_next_nc(0);   /* w0 != 0 */
        }
        size = 9;
    }


    /* The retry's decisions (rel_walk's comment). rw0_op, its first pass (P_RW0): the walk
     * starts at the head over the level's occupied slots (qv); with none, a request the switch
     * does not know (not ended) is acquired again (PH_ACQ, marked a retry miss), one that
     * ended by force-release told again that its lease ended, any other ended one ignored.
     * rw_step, a walk pass (P_RW) at a slot that is not the request's live one: the same at
     * the walk's last slot (left == 1), else on to the next; the count and the position move
     * on (left - 1, nc). */
    action r0_set() { hdr.recirc.cur = head; hdr.recirc.left = meta.qv; }
    action r0_miss() { r0_set(); hdr.recirc.wflags = hdr.recirc.wflags | WF_RETRYMISS; AGAIN(PH_ACQ); }
    action r0_expired() { r0_set(); ans_echo(OP_REJECT, 0, ST_LEASEEXP); }
    action r0_walk() { r0_set(); AGAIN(PH_RWALK); }
    table rw0_op {
        key = {
            meta.qv          : ternary @name("qv");
            meta.ended_hit   : ternary @name("ended_hit");
            meta.expired_hit : ternary @name("expired_hit");
        }
        actions = { r0_set; r0_miss; r0_expired; r0_walk; }
        const default_action = r0_walk();
        /* qv, ended_hit, expired_hit */
        const entries = {
            (0, 0, _) : r0_miss();
            (0, _, 1) : r0_expired();
            (0, _, _) : r0_set();
        }
        size = 3;
    }
    action rs_set() { hdr.recirc.left = hdr.recirc.left - 1; hdr.recirc.cur = nc; }
    action rs_miss() { rs_set(); hdr.recirc.wflags = hdr.recirc.wflags | WF_RETRYMISS; AGAIN(PH_ACQ); }
    action rs_expired() { rs_set(); ans_echo(OP_REJECT, 0, ST_LEASEEXP); }
    action rs_walk() { rs_set(); AGAIN(PH_RWALK); }
    table rw_step {
        key = {
            hdr.recirc.left  : ternary @name("left");
            meta.ended_hit   : ternary @name("ended_hit");
            meta.expired_hit : ternary @name("expired_hit");
        }
        actions = { rs_set; rs_miss; rs_expired; rs_walk; }
        const default_action = rs_walk();
        /* left, ended_hit, expired_hit */
        const entries = {
            (1, 0, _) : rs_miss();
            (1, _, 1) : rs_expired();
            (1, _, _) : rs_set();
        }
        size = 3;
    }

    /* The clean walk's decision (P_CLEAN): on over the done slot at the head when the head
     * was where the walk left it (CLEAN_GO: clean_done and adv), else finished, with
     * queue-empty when it is due. */
    action cl_go() {
        hdr.recirc.cleft = hdr.recirc.cleft - 1;
        hdr.recirc.chead = head;
        hdr.recirc.pclean = 0;
        clean = 1;
    }
    action cl_fin() { finished = 1; }
    action cl_fin_qe() { finished = 1; ans_queue_empty(); }
    table clean_op {
        key = {
            clean_done : ternary @name("clean_done");
            adv        : ternary @name("adv");
            qe         : ternary @name("qe");
        }
        actions = { cl_go; cl_fin; cl_fin_qe; }
        const default_action = cl_fin();
        /* clean_done, adv, qe */
        const entries = {
            (1, 1, _) : cl_go();
            (_, _, 1) : cl_fin_qe();
        }
        size = 2;
    }

    /* The withdrawal's decisions. wd0_op, its first pass (P_WD0): the walk over the level's
     * waiters from its gnext, at most the level's size in steps; nobody waits at the level:
     * rejected (not the holder) and finished. A withdrawal is never an admin force-release's
     * (that is a release pass, P_REL, and its work flags reach no withdrawal pass: a
     * withdrawal's first pass is a client's fresh request, its walk passes follow PH_WDRAW,
     * which only these tables set), so no row here sends the controller's reply. */
    action w0_set0() { hdr.recirc.left = w0; hdr.recirc.cur = g0; hdr.recirc.steps = meta.size; }
    action w0_set1() { hdr.recirc.left = w1; hdr.recirc.cur = g1; hdr.recirc.steps = meta.size; }
    action w0_go0() { w0_set0(); AGAIN(PH_WDRAW); }
    action w0_go1() { w0_set1(); AGAIN(PH_WDRAW); }
    action w0_none0() { w0_set0(); ans_echo(OP_REJECT, 0, ST_NOTHOLDER); finished = 1; }
    action w0_none1() { w0_set1(); ans_echo(OP_REJECT, 0, ST_NOTHOLDER); finished = 1; }
    table wd0_op {
        key = {
            meta.level : ternary @name("level");
            w0         : ternary @name("w0");
            w1         : ternary @name("w1");
        }
        actions = { w0_go0; w0_go1; w0_none0; w0_none1; }
        const default_action = w0_go1();
        /* level, w0, w1 */
        const entries = {
            (0, 0, _) : w0_none0();
            (0, _, _) : w0_go0();
            (1, _, 0) : w0_none1();
        }
        size = 3;
    }
    /* A withdrawal pass (P_WD) that found its request: released (the release's answer), a
     * clean walk when the request was at the head (wd_head: the chain's test of recirc.cur
     * against the head, read before the walk moves it), and a grant walk when nobody holds
     * exclusively and somebody waits (level 0 if it has waiters, else level 1, from the
     * level's gnext); with neither, finished (wd_other). */
    action wf_ans() { ans_echo(OP_RELEASE, FL_REPLY, 0); }
    action wh_none() { rw_clean_qv(); wf_ans(); }
    action wh_walk0() { rw_walk0_clean(); wf_ans(); }
    action wh_walk1() { rw_walk1_clean(); wf_ans(); }
    table wd_head {
        key = {
            meta.xheld : ternary @name("xheld");
            w0         : ternary @name("w0");
            w1         : ternary @name("w1");
        }
        actions = { wh_none; wh_walk0; wh_walk1; }
        const default_action = wh_none();
        /* xheld, w0, w1 */
        const entries = {
            (0, 0, 0) : wh_none();
            (0, 0, _) : wh_walk1();
            (0, _, _) : wh_walk0();
        }
        size = 3;
    }
    action wo_fin() { finished = 1; wf_ans(); }
    action wo_walk0() { rw_walk0(); wf_ans(); }
    action wo_walk1() { rw_walk1(); wf_ans(); }
    table wd_other {
        key = {
            meta.xheld : ternary @name("xheld");
            w0         : ternary @name("w0");
            w1         : ternary @name("w1");
        }
        actions = { wo_fin; wo_walk0; wo_walk1; }
        const default_action = wo_fin();
        /* xheld, w0, w1 */
        const entries = {
            (0, 0, 0) : wo_fin();
            (0, 0, _) : wo_walk1();
            (0, _, _) : wo_walk0();
        }
        size = 3;
    }
    /* A withdrawal walk pass that did not find its request at the slot: the walk ends when
     * no live request is left to pass or no step (tested on the counts before this pass's
     * decrements: left - 1 == 0 as left == 1 when the slot is live), rejected (not the
     * holder) and finished; else on to the next slot. The counts and the position move on
     * either way (left less a live slot, steps less one, nc). */
    action ws_set() { hdr.recirc.steps = hdr.recirc.steps - 1; hdr.recirc.cur = nc; }
    action ws_set_live() { ws_set(); hdr.recirc.left = hdr.recirc.left - 1; }
    action ws_end() { ans_echo(OP_REJECT, 0, ST_NOTHOLDER); finished = 1; }
    action ws_go() { ws_set(); AGAIN(PH_WDRAW); }
    action ws_go_live() { ws_set_live(); AGAIN(PH_WDRAW); }
    action ws_stop() { ws_set(); ws_end(); }
    action ws_stop_live() { ws_set_live(); ws_end(); }
    table wd_step {
        key = {
            sv_live          : ternary @name("sv_live");
            hdr.recirc.left  : ternary @name("left");
            hdr.recirc.steps : ternary @name("steps");
            SV_STATE         : ternary @name("sv_state");
        }
        actions = { ws_go; ws_go_live; ws_stop; ws_stop_live; }
        const default_action = ws_go();
        /* sv_live, left, steps, sv_state */
        const entries = {
            (1, 1, _, SS_LIVE) : ws_stop_live();
            (1, 1, _, _) : ws_stop();
            (0, 0, _, SS_LIVE) : ws_stop_live();
            (0, 0, _, _) : ws_stop();
            (_, _, 1, SS_LIVE) : ws_stop_live();
            (_, _, 1, _) : ws_stop();
            (_, _, _, SS_LIVE) : ws_go_live();
        }
        size = 7;
    }


    /* What the packet becomes after the decisions, one table whose const entries are, first
     * match first, the if-else chain they replace: a packet routed through was sent on or
     * dropped by the routing above (its drops counted here: the drop counter's uses must
     * exclude each other, and this table is the one use after the request's checks; its TTL
     * decremented here, after the key read it as it arrived); the
     * acquire's second pass (resubmitted: the packet as it arrived, with the resubmit header);
     * a pass that continues (recirculated with the state; an answer rides along, and the
     * egress mirrors it to its port); the reply to the controller (the request, answered);
     * the answer (it replaces the request; the egress writes it); else dropped. An answer to
     * be routed (a_routed) goes out to the next hop's port with its MACs (o_routed: where the
     * answer rides along or is the packet; elsewhere it is made invalid); with no next hop
     * (nh_ok 0) it is no answer, counted as a drop (DR_NO_ROUTE) whatever the pass does. */
    action o_route_drop(bit<32> why) { nl_drops.count(why); }
    action o_route_on() { hdr.ipv4.ttl = hdr.ipv4.ttl - 1; }
#if NETLOCK_FOLD
    /* The fold: the writing pass goes back to half a (pipe 0) recirculated, with the resubmit
     * header after its kind (KD_WRITE), the recirculation header with the request's port. */
    action o_resub() {
        hdr.kind.setValid();
        hdr.kind.kind = KD_WRITE;
        hdr.wr = meta.resub;
        hdr.recirc.in_port = meta.in_port;
        ANS_INVALID;
        ig_tm_md.ucast_egress_port = RECIRC_PORT;
        ig_tm_md.bypass_egress = 1;
    }
#else
    action o_resub() {
        hdr.recirc.setInvalid();
        ANS_INVALID;
        ig_dprsr_md.resubmit_type = RESUB_WRITE;
    }
#endif
    action o_resub_noroute() { o_resub(); nl_drops.count(DR_NO_ROUTE); }
    action o_recirc_go() {
        hdr.kind.setValid();
        hdr.recirc.in_port = meta.in_port;
        ig_tm_md.ucast_egress_port = RECIRC_PORT;
    }
    action o_recirc_ans() { o_recirc_go(); hdr.kind.kind = KD_RECIRC_ANS; }
    /* an answer routed to its next hop (hdr.a_ip.dip is meta.route_dst: the next hop was
     * looked up above) */
    action o_routed() {
        hdr.a_eth.smac = meta.nh_smac;
        hdr.a_eth.dmac = meta.nh_dmac;
        hdr.ansx.port = meta.nh_port;
    }
    action o_recirc_ans_routed() { o_recirc_ans(); o_routed(); }
    action o_recirc() {
        o_recirc_go();
        hdr.kind.kind = KD_RECIRC;
        ANS_INVALID;
        ig_tm_md.bypass_egress = 1;
    }
    action o_recirc_noroute() { o_recirc(); nl_drops.count(DR_NO_ROUTE); }
    action o_reply() {
        hdr.recirc.setInvalid();
        ANS_INVALID;
        hdr.nl.flags = hdr.nl.flags | FL_REPLY;
        hdr.packet_out.setInvalid();
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = meta.in_port;
        hdr.packet_in.reason = 1;
        ig_tm_md.ucast_egress_port = CPU_PORT;
        ig_tm_md.bypass_egress = 1;
    }
    action o_reply_noroute() { o_reply(); nl_drops.count(DR_NO_ROUTE); }
    action o_answer() {
        hdr.kind.setValid();
        hdr.kind.kind = KD_ANSWER;
        hdr.recirc.setInvalid();
        hdr.packet_out.setInvalid();
        hdr.ethernet.setInvalid();
        hdr.ipv4.setInvalid();
        hdr.udp.setInvalid();
        hdr.nl.setInvalid();
        hdr.auth.setInvalid();
        hdr.admin.setInvalid();
        ig_tm_md.ucast_egress_port = hdr.ansx.port;
    }
    action o_answer_routed() {
        o_answer();
        o_routed();
        ig_tm_md.ucast_egress_port = meta.nh_port;   /* not hdr.ansx.port, written here */
    }
    action o_drop() {
        ANS_INVALID;
        ig_dprsr_md.drop_ctl = 1;
    }
    action o_drop_noroute() { o_drop(); nl_drops.count(DR_NO_ROUTE); }
    table out_pick {
        key = {
            meta.kind           : ternary @name("kind");
            hdr.ipv4.isValid()  : ternary @name("ipv4");
            hdr.ipv4.ttl        : ternary @name("ttl");
            meta.resub_go       : ternary @name("resub_go");
            meta.cont           : ternary @name("cont");
            meta.reply          : ternary @name("reply");
            meta.a_valid        : ternary @name("a_valid");
            meta.a_routed       : ternary @name("a_routed");
            meta.nh_ok          : ternary @name("nh_ok");
        }
        actions = { o_route_drop; o_route_on; o_resub; o_resub_noroute; o_recirc_ans; o_recirc_ans_routed; o_recirc; o_recirc_noroute; o_reply; o_reply_noroute; o_answer; o_answer_routed; o_drop; o_drop_noroute; NoAction; }
        const default_action = o_drop();
        /* kind, ipv4, ttl, resub_go, cont, reply, a_valid, a_routed, nh_ok */
        const entries = {
            (K_ROUTE, true, _, _, _, _, _, _, 0) : o_route_drop(DR_NO_ROUTE);
            (K_ROUTE, true, 0 &&& 0xfe, _, _, _, _, _, _) : o_route_drop(DR_TTL);   /* ttl <= 1 */
            (K_ROUTE, true, _, _, _, _, _, _, _) : o_route_on();
            (K_ROUTE, _, _, _, _, _, _, _, _) : NoAction();
            (_, _, _, 1, _, _, 1, 1, 0) : o_resub_noroute();
            (_, _, _, 1, _, _, _, _, _) : o_resub();
            (_, _, _, _, 1, _, 1, 1, 0) : o_recirc_noroute();
            (_, _, _, _, 1, _, 1, 1, _) : o_recirc_ans_routed();
            (_, _, _, _, 1, _, 1, _, _) : o_recirc_ans();
            (_, _, _, _, 1, _, _, _, _) : o_recirc();
            (_, _, _, _, _, 1, 1, 1, 0) : o_reply_noroute();
            (_, _, _, _, _, 1, _, _, _) : o_reply();
            (_, _, _, _, _, _, 1, 1, 0) : o_drop_noroute();
            (_, _, _, _, _, _, 1, 1, _) : o_answer_routed();
            (_, _, _, _, _, _, 1, _, _) : o_answer();
        }
        size = 15;
    }


    /* Runs of the decisions as actions: a call of an action from the apply block is a
     * logical table of its own, the statements around it another (rel_walk's comment). */
    /* The writing pass's grant: its number compared with the counter (gt_seq_cnt), the answer
     * to the requester with its timestamp; the token's halves after it, when the grant
     * token's high half is chosen (hi), each half an action of its own (a hash's 32 bits are
     * all an action's immediate pathway takes on Tofino 1). */
    action write_grant() {
        gt_seq_cnt();
        ans_grant(hdr.nl.cip, hdr.nl.cport, hdr.nl.tenant);
        hdr.a_nl.ts = hdr.nl.ts;
        meta.k_lo = WR_SEQ;   /* the token's choice: here, not after the comparison's if */
        meta.tk = TK_ANS;             /* (a run after an if is a logical table of its own) */
    }
    /* The retry walk's grant to the slot's client (its ts the slot's, read by the pool's
     * flags block), the same way. */
    action rw_grant() {
        gt_slot_cnt();
        ans_grant_slot();
        meta.k_lo = SV_SEQ;
        meta.tk = TK_ANS;
    }
    /* A set-buffered that leaves nothing buffered: queue-empty, then the reply. */
    action setb_qe() {
        ans_queue_empty();
        SEND_NEXT(SEND_REPLY);
    }
    /* An acquire or push-back that overflows: to the server's q2 (a push-back that does not
     * fit goes back, too, with the q2 number the server gave it: docs/protocol.md, "Overflow
     * (q2)"), and, when a full level of some slots decided it (binc), a pass more that counts
     * it in lk_buf. */
    action ovf_pb() {
        ans_overflow();
        hdr.a_nl.token_hi = hdr.nl.token_hi;
        hdr.a_nl.token_lo = hdr.nl.token_lo;
    }
    action ovf_binc() {
        ans_overflow();
        hdr.recirc.binc_qe = binc_qe;
        AGAIN(PH_BINC);   /* lk_buf: one more buffered */
    }
    action ovf_pb_binc() {
        ovf_pb();
        hdr.recirc.binc_qe = binc_qe;
        AGAIN(PH_BINC);
    }
    table ovf_op {
        key = {
            meta.kind : ternary @name("kind");
            binc      : ternary @name("binc");
        }
        actions = { ans_overflow; ovf_pb; ovf_binc; ovf_pb_binc; }
        const default_action = ans_overflow();
        /* kind, binc */
        const entries = {
            (K_PB, 1) : ovf_pb_binc();
            (K_PB, _) : ovf_pb();
            (_, 1) : ovf_binc();
        }
        size = 3;
    }


    /* The admin probe's level and size (a pass of type P_ADMIN, AD_PROBE): the level's gnext
     * (the probed level's register read), and a lock with no slots at the level refused (bad
     * request), else the second probe pass with the grant counter (a_hi, a_lo; recirc.cur,
     * the offset probed, computed after the heads). */
    action ap_go() {
        ADM_HI = meta.tok_hi;
        hdr.recirc.a_lo = meta.tok_lo;
        AGAIN(PH_PROBE2);
    }
    action ap_bad() {
        hdr.admin.result = AR_BADREQ;
        meta.reply = 1;
    }
    action ap_go0() { hdr.admin.gnext = pos_agnext0.get({g0}); ap_go(); }
    action ap_go1() { hdr.admin.gnext = pos_agnext1.get({g1}); ap_go(); }
    action ap_bad0() { hdr.admin.gnext = pos_agnext0.get({g0}); ap_bad(); }
    action ap_bad1() { hdr.admin.gnext = pos_agnext1.get({g1}); ap_bad(); }
    table adm_probe {
        key = {
            meta.level : ternary @name("level");
            meta.size  : ternary @name("size");
        }
        actions = { ap_go0; ap_go1; ap_bad0; ap_bad1; NoAction; }
        const default_action = NoAction();   /* never: the last entry matches every key (a
                                                 default action may not use the hash unit) */
        /* level, size */
        const entries = {
            (0, 0) : ap_bad0();
            (0, _) : ap_go0();
            (_, 0) : ap_bad1();
            (_, _) : ap_go1();
        }
        size = 4;
    }

    /* What comes next after the decisions of a release, a grant walk, a clean walk or a
     * withdrawal (the only passes that set walk, clean or finished): a walk (and, on a walk's
     * first pass, its examine and pending flags and the clean walk to do once it ends), a
     * clean walk, or a force-release's answer to the controller when it has ended (a pass
     * that finished set neither walk nor clean); and an admin token base's second pass
     * (value above the counter: meta.gt) or its reply, decided on meta.gt, which the chain
     * computes a stage before (its own write of the phase there was a stage after that, and
     * this table's one more). One table with const entries, first match first, after the
     * decision chain: it was a macro expanded at the end of the four branches, 34 logical
     * tables (docs/dataplane.md, "The real compiler"). */
    action ns_walk() { AGAIN(PH_GRANT); }
    action ns_walk_first() {
        AGAIN(PH_GRANT);
        hdr.recirc.examine = 1;
        hdr.recirc.pend = 0;
    }
    action ns_walk_then_clean() {
        hdr.recirc.pclean = 1;   /* clean once the walk ends */
        AGAIN(PH_GRANT);
        hdr.recirc.examine = 1;
        hdr.recirc.pend = 0;
    }
    action ns_clean() { AGAIN(PH_CLEAN); }
    action ns_send_reply() { SEND_NEXT(SEND_REPLY); }
    action ns_reply() { meta.reply = 1; }
    action ns_tbase2() { AGAIN(PH_TBASE2); }
    table next_step {
        key = {
            walk          : ternary @name("walk");
            clean         : ternary @name("clean");
            ptype         : ternary @name("ptype");
            forced        : ternary @name("forced");
            finished      : ternary @name("finished");
            meta.cont     : ternary @name("cont");
            meta.a_valid  : ternary @name("a_valid");
            ad            : ternary @name("ad");
            meta.gt       : ternary @name("gt");
        }
        actions = { ns_walk; ns_walk_first; ns_walk_then_clean; ns_clean; ns_send_reply; ns_reply; ns_tbase2; NoAction; }
        const default_action = NoAction();
        /* walk, clean, ptype, forced, finished, cont, a_valid, ad, gt */
        const entries = {
            (_, _, P_ADMIN, _, _, _, _, AD_TBASE, 0) : ns_reply();
            (_, _, P_ADMIN, _, _, _, _, AD_TBASE, _) : ns_tbase2();
            (1, _, P_GRANT, _, _, _, _, _, _) : ns_walk();
            (1, 1, _, _, _, _, _, _, _) : ns_walk_then_clean();
            (1, _, _, _, _, _, _, _, _) : ns_walk_first();
            (_, 1, _, _, _, _, _, _, _) : ns_clean();
            (_, _, _, 1, 1, 0, 1, _, _) : ns_send_reply();
            (_, _, _, 1, 1, 0, _, _, _) : ns_reply();
        }
        size = 8;
    }

    apply {
#if NETLOCK_FOLD
      if (half == 1) {
#endif
        /* ================= classification ================= */
        meta.a_valid = 0;
        meta.a_fwd = 0;
        meta.reply = 0;
        meta.cont = 0;
        meta.resub_go = 0;
        meta.o_res = off_res.get({meta.off15});
        h_tslot();   /* the token's slot, for lock_table's action */
        h_o_cur();   /* slot_t is 32 bits at the default sizes */
        h_o_ch();
        if (hdr.packet_out.isValid() && hdr.packet_out.kind != 0) {
            /* A raw frame from the controller: out as it came, also when the fold's half b
             * steered it here from the CPU port (its kind and recirculation headers dropped;
             * without the fold a raw frame leaves from the pipe it came in on). */
            ig_tm_md.ucast_egress_port = hdr.packet_out.egress_port;
            ig_tm_md.bypass_egress = 1;
            hdr.packet_out.setInvalid();
            hdr.kind.setInvalid();
            hdr.recirc.setInvalid();
            ANS_INVALID;
            exit;
        } else if (hdr.udp.isValid() && meta.nl_port == 1 && ig_md.ingress_port[8:7] != 0) {
            /* A NetLock packet that arrived on a port of another pipe than pipe 0: steered to
             * pipe 0 before it touches a register. A Tofino loads this one pipeline into every
             * pipe, and each pipe has its own copy of every register (its own MAU stages'
             * memory): run here, a request would take and release slots in this pipe's copy
             * of the locks while the other pipes' clients use theirs, and two clients on two
             * pipes could both hold one exclusive lock (TestPipesShareNoLock). Every pass of a
             * lock runs in pipe 0: its walks recirculate through RECIRC_PORT, pipe 0's, and
             * its acquire resubmits in pipe 0. The packet goes as a recirculated fresh pass
             * (the dup's AGAIN(PH_FRESH) does the same), the port it came in on in the
             * recirculation header (the admin port's check reads it there), straight to the
             * recirculation port (its egress bypassed): one pass more for a client of another
             * pipe, none for pipe 0's. Port bits 8:7 are the pipe on Tofino 1 and 2. A
             * packet cannot come in on RECIRC_PORT or resubmitted in another pipe: both are
             * pipe 0's. Routed packets (not NetLock's) stay in their pipe: lock state is not
             * theirs. */
            NL_STEER_PIPE0
        }
        if (hdr.ipv4.isValid() && !meta.csum_ok) {
            DROP_COUNT(DR_CHECKSUM);
            exit;
        }
        /* The answer is built here; invalid again unless sent. After the exits: the raw
         * frame's branch invalidates it, and a write of the same fields before would be a
         * stage before everything that follows (bf-p4c: an output dependency). */
        ANS_VALID;
        /* The kind header (a recirculated pass's), invalid again unless the pass recirculates
         * or answers: after the exits too (the steering branch makes it valid). */
        hdr.kind.setInvalid();
        /* The switch's clock in microseconds, low 32 bits: the MAC timestamp (ns) times
         * 2^-10 + 2^-16 + 2^-17 + 2^-21 = 0.99993/1000 (Tofino cannot divide by 1000).
         * Computed after the exits above: bf-p4c nests what follows an if that exits in the
         * if's other branch, and that branch's gateway goes no earlier than the tables before
         * it that the tables it holds depend on (the clock's three stages, before). */
        meta.now_a = clk_10.get({ig_md.ingress_mac_tstamp[41:10]});
        h_now_b();
        h_now_c();
        h_now_d();
        clock_pairs();
        clock_sum();
        /* The admin reply's time: written here in every pass of an admin request (the reply
         * pass's is the one the controller sees), so that meta.now is not kept to the end. */
        if (hdr.admin.isValid()) {
            hdr.admin.now = meta.now;
        }
        if (hdr.adminf.isValid()) {
            hdr.adminf.now = meta.now;
        }
        pass_in.apply();   /* the pass's phase, port and work flags (pass_in's comment) */
        req_flags.apply();   /* has_ts, fresh, retry (req_flags' comment) */
        meta.kind = K_ROUTE;
        /* The request's own checks: a malformed request, a push-back with a wrong key, an admin
         * request from another port or with a wrong key is dropped by an exit at the top level
         * below, which counts its reason. No exit inside the block: bf-p4c takes an exit nested
         * in an if as an assignment to a flag that every later table tests (on Tofino 2), and
         * then finds the drop counter's uses in those branches and in the late drops below not
         * mutually exclusive ("cannot share Counter NetlockIngress.nl_drops because use of the
         * Counter ... is not mutually exclusive", Tofino 2, 2026-11-30 at f4b4313); an exit at
         * the top level puts what follows in its if's other branch, which the compiler sees as
         * exclusive. */
        bit<1> early = 0;
        bit<32> early_why = DR_MALFORMED;
        if (hdr.udp.isValid() && meta.nl_port == 1) {
            if (!hdr.nl.isValid() || ig_prsr_md.parser_err != 0 ||
                    hdr.nl.version != NL_VERSION || hdr.nl.op > OP_ADMIN || hdr.nl.mode > MODE_X ||
                    (hdr.nl.flags & FL_BATCH) != 0) {
                early = 1;
            } else {
                rack.apply();
                /* The lock's entry is looked up beside rack, on the header alone, not after the
                 * rack's checks decided the kind: one stage fewer (docs/dataplane.md, "Stages").
                 * Only a lock, push-back or admin request can use it; the ones the checks below
                 * route or drop count a hit in lock_hits that p4/netlock.p4 does not count (a
                 * request while rack is unset, a push-back to another address or with a wrong
                 * key, an admin request with a wrong key or from a port other than the CPU's:
                 * the port is not tested here, as meta.in_port is written in this stage). */
                if (hdr.nl.op == OP_ACQUIRE || hdr.nl.op == OP_RELEASE || hdr.nl.op == OP_PROBE ||
                        hdr.nl.op == OP_PUSHBACK ||
                        (hdr.nl.op == OP_ADMIN && hdr.nl.status >= 16 && hdr.nl.status <= 31)) {
                    lock_table.apply();
                }
                /* The lock's server, looked up as soon as the lock's entry is there, not after
                 * the checks that decide the kind (a stage fewer): its fields are read only in
                 * the passes the checks keep (a lock, push-back or admin request). */
                if (meta.hit == 1) {
                    lock_servers.apply();
                }
                if (hdr.nl.op == OP_ACQUIRE || hdr.nl.op == OP_RELEASE || hdr.nl.op == OP_PROBE) {
                    if (meta.rack_ok == 1) {
                        meta.kind = K_LOCK;
                    }
                } else if (hdr.nl.op == OP_PUSHBACK && meta.rack_ok == 1 && hdr.ipv4.dst == hdr.a_ip.sip) {
                    /* The rack key, tested in place (a flag computed first is a stage before
                     * the kind, and so before every pass's work) */
                    if (meta.pkey_hi != hdr.a_key.key[63:32]) {
                        early = 1;
                        early_why = DR_PUSHBACK_KEY;
                    } else if (meta.pkey_lo != hdr.a_key.key[31:0]) {
                        early = 1;
                        early_why = DR_PUSHBACK_KEY;
                    } else {
                        meta.kind = K_PB;
                    }
                } else if (hdr.nl.op == OP_ADMIN && hdr.nl.status >= 16 && hdr.nl.status <= 31) {
                    if (meta.in_port != CPU_PORT) {
                        early = 1;
                        early_why = DR_ADMIN_PORT;
                    } else if (meta.rack_ok == 0 || (!hdr.admin.isValid() && !hdr.adminf.isValid())) {
                        early = 1;
                        early_why = DR_ADMIN_KEY;
                    } else if (meta.pkey_hi != hdr.a_key.key[63:32]) {
                        early = 1;
                        early_why = DR_ADMIN_KEY;
                    } else if (meta.pkey_lo != hdr.a_key.key[31:0]) {
                        early = 1;
                        early_why = DR_ADMIN_KEY;
                    } else {
                        meta.kind = K_ADMIN;
                    }
                }
            }
        }
        /* The token's level: the level whose slots [left, left + size) hold its slot, as
         * p4/netlock.p4's "tslot >= left && tslot - left < size". Written for a gateway,
         * which tests equalities of fields only: d = tslot - left in slot_t, and d < size
         * as (size |-| d) != 0, each step an action of its own (an action reads what an
         * earlier stage wrote). The first test is implied: every region ends within the
         * slots (left + size <= 2^SLOT_BITS, which dataplane.LockEntry.Validate checks
         * before an entry is written), so a slot below left makes d = tslot - left +
         * 2^w >= 2^SLOT_BITS - left >= size (w the width of slot_t). Computed in every pass,
         * beside the checks that decide the pass's kind rather than after them (a route's
         * pass does not read it): bf-p4c would order it after those checks' tables. */
        tok_room();   /* after lock_table's action, which takes the token's offsets */
        /* t_in: the token names a level (tlevel != 2), as a flag: a != in a condition that
         * ORs several tests is "gateway condition too complex" to bf-p4c (1c9e8e9). */
        /* t_end: the token is its level's region's last slot (its room there is 1): a
         * release's move of the head steps over the wrap there (h_step, below), tested here
         * on the room, not on h_arg against the level's end, four stages later. The token's
         * level, t_in and t_end: tok_lvl (its comment). */
        tok_lvl.apply();
        /* The request's fields later passes test, before the exit below (what follows an if
         * that exits is a stage after its gateway, to bf-p4c) */
#if NETLOCK_FOLD
        ph = meta.phase;
#else
        bit<8> ph = meta.phase;
#endif
        /* (Before the push-back's exit below, as the request's fields: the slot needs only the
         * phase and lock_table's region starts.) */
        slot_pick.apply();   /* (slot_pick's comment) */
        hd_pick.apply();
        /* The drops: the request's own checks' (early, above) and a push-back's whose lock or
         * server is unknown, each the only exit of its branch, at the top level (above). Here,
         * not after the checks: what lies between writes metadata only, and an exit waits for
         * the tables before it (bf-p4c: anti dependencies to an exiting table), which the
         * push-back's test waits for anyway. */
        if (early == 1) {
            DROP_COUNT(early_why);
            exit;
        } else if (meta.kind == K_PB && (meta.hit == 0 || meta.srv_ok == 0)) {
            DROP_COUNT(DR_PUSHBACK_LOCK);
            exit;
        }
        /* A lock request whose lock or server is unknown is routed (kind K_ROUTE): written
         * after the pass type is chosen (below), which tests the lock's entry in place
         * (LOCK_OK), so that the pass type is one stage after the lock's server, not two. */
#define LOCK_OK (meta.kind == K_LOCK && meta.hit == 1 && meta.srv_ok == 1)
#define LIVE_KIND (meta.kind == K_PB || meta.kind == K_ADMIN || LOCK_OK)

        /* The token's grant number (token >> SLOT_BITS) in halves, as slices of the header
         * field: lk_floor's comparison reads them in the stage after the lock's server. */
        meta.tseq_hi = tseq_hi_h.get({hdr.nl.token_hi[31:SLOT_BITS]});
        h_tseq_lo();
        meta.valid = 0;
        meta.found = 0;
        meta.txn_hi_ok = 0;
        meta.txn_lo_ok = 0;
        meta.ended_hit = 0;
        meta.expired_hit = 0;
        meta.dup_hit = 0;
        meta.quota = 0;
        meta.meter_color = 0;
        meta.ov = 0;
        meta.grant = 0;
        meta.qv = 0;
        meta.dv = 0;
        meta.hv = 0;


        /* Which pass type (pass_type's comment). */
        pass_type.apply();
        kind_fix.apply();   /* adm2; a lock request without its lock or server routed (kind_fix's comment) */
        req_norm.apply();   /* the requester's address, the lease, forced (req_norm's comment) */
        hdr.recirc.wflags = meta.wflags;
        finished = 0;
        walk = 0;
        clean = 0;

        /* The admin first pass: what it does, and the answers of the ones that touch nothing. */
        /* The admin operation a first admin pass carries out (AD_*), 0 if none: one 3-bit
         * field, not a flag per operation (six flags live to the last stage did not fit the
         * PHV, bf-p4c 2026-11-30). */
        ad = 0;
        adm_op.apply();   /* (adm_op's comment) */


        /* ================= the level and the slot ================= */
        /* Written once, in exclusive branches (a default overridden later is an output
         * dependency, a stage, to bf-p4c). */
        level_pick.apply();   /* (level_pick's comment) */
        meta.q_lim = qlim_h.get({meta.size});
        h_q_ends();
        h_q_endx();
        /* The position a move of the head tests (h_arg) and the step past it (h_step),
         * computed as soon as the level is there, not after the checks of the pass that moves
         * it, each written once (a field written twice is two stages to bf-p4c). A clean walk
         * (head_eq, gnext_follow): its head. Else a release's (head_at; no other pass reads
         * them): the token's offset in the level's region, moved to 16 bits by the hash unit
         * (a 16-bit field computed from 32-bit ones would need a container of both sizes). */
        if (ptype == P_CLEAN) {
            meta.h_arg = hdr.recirc.chead;
            if (hdr.recirc.chead == meta.q_end0x || hdr.recirc.chead == meta.q_endxx) { meta.h_step = meta.q_wrapx; } else { meta.h_step = 16w1; }
        } else {
            meta.t_off = meta.tslot - meta.left;
            meta.h_arg = harg_h.get({meta.t_off});   /* IDENTITY keeps the low 16 bits */
            /* the step past the region's last offset (a release works its token's level) */
            if (t_end == 1) { meta.h_step = meta.q_wrapx; } else { meta.h_step = 16w1; }
        }
        /* The position after the walk's (recirc.cur), for a grant walk's gnext: computed with
         * the level's ends, before anything writes recirc.cur (the admin probe, the decisions) */
        QNEXT_SET(nc, hdr.recirc.cur)
        /* A release's or lease-probe's token names a level: tested in place, as REL_GO (a flag
         * copied from it would be a stage of its own before every test of it). */
#define REL_GO ((ptype == P_REL || ptype == P_PROBE) && t_in == 1)
        /* The request the pool blocks write or compare with. */
        /* mode ++ prio ++ fwd in one container (the hash unit puts it together: an action reads
         * at most two containers into one), the state SS_LIVE ORed in by flags_wr */
        meta.n_flags = nflags_h.get({hdr.nl.mode, hdr.nl.prio, meta.rq_fwd});

        /* ================= stage: lk_floor ================= */
        meta.fl_hi = 0;
        meta.fl_lo = 0;
        if (REL_GO) {
            meta.fl_hi = floor_hi_cmp.execute(meta.idx);
            meta.fl_lo = floor_lo_cmp.execute(meta.idx);
        } else if (adm2 == 1 && ph == PH_RESET2) {
            floor_hi_set.execute(meta.idx);
            floor_lo_set.execute(meta.idx);
        }
        /* The token is at or above the floor: tested in place, as REL_GO (a flag copied from
         * it would be a stage of its own before the grant number's block). */
#define PRE_OK (meta.fl_hi == 2 || (meta.fl_hi == 1 && meta.fl_lo == 1))

        /* ================= stage: the pool's txn and client ================= */
        exam = 1w0;
        if (ptype == P_GRANT && hdr.recirc.examine == 1) { exam = 1w1; }
        /* The grant walk sends the grant decided in the pass before (ans_grant_pending) here,
         * before the pool's flags block reads the examined slot's flags into pflags; the pool's
         * blocks read the pending slot's txn, client, lease and timestamp (hd_idx) into the
         * answer. hdr.recirc.pend is cleared with the walk's decisions below. */
        if (ptype == P_GRANT && hdr.recirc.pend == 1) {
            ans_grant_pending();
            h_pend_lo();
        } else if (ptype == P_WRITE && WR_GRANT == 1) {
            /* the writing pass's grant number, which hold_wr writes (0: it waits); the pass
             * type in each condition (an if whose branch holds only ifs is a gateway of its
             * own, a logical table) */
            hdr.recirc.pseq_lo = meta.resub.seq;
        } else if (ptype == P_WRITE) {
            hdr.recirc.pseq_lo = 0;
        }
        txn_hi_op.apply();   /* (txn_hi_op's comment) */
        txn_lo_op.apply();
        ip_op.apply();
        port_op.apply();
        tenant_op.apply();
        if (ptype == P_GRANT && hdr.recirc.pend == 1) {
            ans_slot_client();
        }
        /* The slot holds the request's txn: both halves match (tested in place, as REL_GO). */
#define TXN_OK (meta.txn_hi_ok == 1 && meta.txn_lo_ok == 1)

        /* ================= stage: the pool's grant number and time ================= */
        /* The grant number written and the slot written, chosen by the pass type alone (the
         * writing pass and a grant walk's pending grant exclude the other branches below), so
         * that they do not wait for the txn comparison or the floor. */
        /* hold_wr writes recirc.pseq_lo: the pending grant's number, or the writing pass's
         * (above, with the pending grant's answer). */
        /* The grant decided in the pass before: at its slot (hd_idx, above), its number
         * recirc.pseq_lo. */
        /* s_hold: hold_op's comment (meta.valid: hold_release's for a release, hold_check's
         * for a lease-probe, else 0) */
        hold_op.apply();

        /* ================= stage: the pool's flags, lease and timestamp ================= */
        flags_op.apply();   /* (flags_op's comment) */
        lease_op.apply();
        gtime_op.apply();
        ts_hi_op.apply();
        ts_lo_op.apply();
        /* A withdrawal found its request live (flags_wdraw marked the slot withdrawn; the
         * slot view keeps the state it read: no later test of this pass reads it, and the
         * passes after read the flags again); a clean walk's slot at the head is done
         * (released or withdrawn). */
        sv_flags.apply();   /* sv_live, found, clean_done, clean_wd (sv_flags' comment) */

        /* ================= stage: the next hop ================= */
        /* The route is looked up here, not after the answer is decided: a pass sends at most
         * one answer to a host, and its destination is known from the pass type and the slot
         * already: the grant decided in the pass before, a force-release's expiry notice and a
         * retry walk's grant (its request found live) go to the slot's client, every other
         * answer to the requester; a packet routed through to its
         * IPv4 destination. The result is used only when a routed answer goes out (or the packet
         * is routed); route_hits counts every lookup (docs/dataplane.md, "What differs"). */
        route_pick.apply();   /* (route_pick's comment) */
        if (meta.kind != K_ROUTE || hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
        }

        /* ================= stage: ended requests ================= */
        /* A fresh acquire is looked up and recorded as seen: a request that ended is a late
         * copy (ignored), one seen and not ended a copy without the retry flag (the retry walk
         * looks for it). A retry walk looks up only: when it does not find its request (not
         * ended), the acquire pass it continues in records it as seen (p4/netlock.p4 records it
         * at the end of the walk; the cell is the same). */
        meta.e_idx = ended_hash.get({hdr.nl.lock, hdr.nl.txn_hi, hdr.nl.txn_lo});
        h_fp();
        /* fp & 0xfffffffc, or 4 where that is 0 (0 is an empty cell): the low bits cleared
         * with an instruction's own constant 0, in the gateway's actions, not with the mask,
         * which bf-p4c makes action data, and a keyless table's action that reads a hash
         * cannot have action data ("requires hash, which can only be done through the hit
         * pathway", Tofino 1 at --phv_scale_factor 2, 2026-11-30 at 1e5a6c5). */
        if (meta.fp[31:2] == 0) {
            meta.fp = 4;
        } else {
            meta.fp[1:0] = 0;
        }
        /* The cell minus fp as the lookup found it (2, which no cell of this request gives: no
         * lookup): 1 ended, 3 force-released, 0 seen and not ended. */
        ended_op.apply();      /* (ended_op's comment) */
        ended_flags.apply();

        /* ================= stage: lk_buf ================= */
        /* Before the tenant meter, so that it costs no stage of its own: an acquire only reads
         * the count here (it overflows when requests are buffered or the lock is paused), and
         * every overflow of an acquire is counted in a second pass (PH_BINC); a push-back that
         * goes on (not a copy of an ended or live request: ended requests' stage) takes one off,
         * put back by PH_BINC if it finds no slot; set-buffered and reset set it. */
        meta.b_val = 0;
        if (ad == AD_SETB) {
            meta.b_val = val_b.get({hdr.adminf.value_lo[15:0]});
        }
        buf_op.apply();   /* (buf_op's comment) */

#if NETLOCK_FOLD
        /* The fold: half a ends here; the packet goes to half b with the bridge (nl_bridge_t), in
         * one action: its two hashes' 32 bits are what an action's immediate data takes (bf-p4c),
         * and a run after an if would be a stage later. */
        NL_BRIDGE_FIELDS(NL_BRIDGE_OUT)
        meta.br.lflags = lflags_h.get({ptype, ad, adm2, badreq, clean_done, clean_wd, exam, forced, retry, sv_live, t_in});
        meta.br.mflags = mflags_h.get({2w0, meta.kind, meta.txn_hi_ok, meta.txn_lo_ok, meta.valid, meta.found, meta.ended_hit, meta.expired_hit, meta.dup_hit, meta.paused, meta.nh_ok, meta.a_valid, meta.a_routed, meta.a_fwd});
        meta.br.l_nc = nc;
        meta.br.r_grant = WR_GRANT;
      } else {
        /* Half b: a packet from a port of pipe 1 other than RECIRC_PORT_B goes to pipe 0 first,
         * as the steering branch of half a sends one (NL_STEER_PIPE0). */
        if (meta.br_in == 0) {
            NL_STEER_PIPE0
        }
        /* the port the request came in on (pass_in wrote it in both places alike): copied here,
         * not by the parser, which would fix its place in its containers to the recirculation
         * header's, where the packet_in header wants another (bf-p4c,
         * ACTION_CANNOT_BE_SYNTHESIZED) */
        meta.in_port = hdr.recirc.in_port;
        /* the metadata half a's classification starts at 0 that half b writes in some passes */
        meta.reply = 0;
        meta.cont = 0;
        meta.resub_go = 0;
        meta.quota = 0;
        meta.meter_color = 0;
        meta.ov = 0;
        meta.grant = 0;
        meta.qv = 0;
        meta.dv = 0;
        meta.hv = 0;
        finished = 0;
        walk = 0;
        clean = 0;
#endif
        /* Whether an acquire overflows, from lk_buf's count and the lock's pause: here, after
         * the fold's cut, so that half a does not wait a stage for it (half b takes bv and
         * paused from the bridge). */
        ov_b = 0;   /* an acquire overflows: requests buffered, or the lock paused */
        if (meta.bv != 0 || meta.paused == 1) {
            ov_b = 1;
        }

        /* ================= stage: the tenant meter ================= */
        /* (The accept log of p4/netlock.p4, log_msg, has no Tofino counterpart.) The pass's
         * type is tested in each condition, not in an if around them: an if whose branch
         * holds only ifs is a gateway of its own, a logical table (Graph.LogicalTables). */
        if ((ptype == P_ACQ || ptype == P_TRY) && meta.kind == K_LOCK && (meta.wflags & (WF_NOMETER | WF_DUP)) == 0 &&
                retry == 0 && meta.ended_hit == 0 && meta.dup_hit == 0) {
            tenant_quota.apply();
        }
        acq_go = 0;      /* the acquire takes a slot or overflows */
        /* a late copy of a request that ended (ended_hit): ignored */
        if ((ptype == P_ACQ || ptype == P_TRY) && meta.ended_hit == 0 && meta.dup_hit == 1) {
            /* a copy of a request seen and not ended: a retransmission */
            hdr.recirc.wflags = hdr.recirc.wflags | WF_DUP;
            AGAIN(PH_FRESH);
        } else if ((ptype == P_ACQ || ptype == P_TRY) && meta.ended_hit == 0 && meta.quota == 1 && meta.meter_color != 0) {
            ans_echo(OP_REJECT, 0, ST_QUOTA);
        } else if ((ptype == P_ACQ || ptype == P_TRY) && meta.ended_hit == 0) {
            acq_go = 1;
        }

        /* ================= stage: the heads ================= */
        /* What the pass does at the head: head_op. Whether it moved (adv, below) is tested on
         * the same conditions: a valid release's (HOP_AT), a clean walk's over a done slot
         * (HOP_EQ, clean_done's test). */
#define HOP_AT (ptype == P_REL && meta.valid == 1)
#define HOP_EQ (ptype == P_CLEAN && hdr.recirc.cleft > 0 && SV_STATE != SS_LIVE)   /* clean_done's test */
        head_op.apply();   /* (head_op's comment) */
        /* head_at and head_eq return the head before; whether they moved it, and where to, is
         * decided here from the same test (a stateful ALU's output is one operand: bf-p4c
         * refuses "rv = v" beside "rv = 0x10000 | v" of the value written). */
        head = meta.hv;
        /* head_at moves the head when it is at h_arg's offset in either lap (head - h_arg is
         * 0 or 0x8000), head_eq when it is at h_arg. The difference in a metadata field written
         * by an action: p4c propagates a local holding it, or a field assigned it in the apply
         * block, into the conditions, and a gateway computes no difference ("condition
         * expression too complex"). */
        head_diff();
        /* q_sub's decrement of the worked level (q_dec0 or q_dec1; the other level's stays 0):
         * a release's slot is free when the head moved past it, a clean walk's head moved
         * over a done slot (CLEAN_GO, below: HOP_EQ is clean_done's test). Written where adv
         * is, not from adv after it (a stage more before lk_q). */
        meta.q_dec0 = 0;
        meta.q_dec1 = 0;
        adv = 0;
        hop_pick.apply();   /* adv and the level's q_dec (hop_pick's comment) */
        if (adv == 1) {
            head = head + meta.h_step;
        }
        /* The clean walk goes on over its done slot only when the head was where the walk
         * left it (adv), else it stops: tested in place below (clearing clean_done here would
         * be a stage before every test of it). */
#define CLEAN_GO (clean_done == 1 && adv == 1)

        /* The admin probe's offset (head + the offset asked for, modulo the level's size),
         * computed as soon as the head is read rather than with the decisions below, which
         * read none of it (four dependent actions after them, before). Computed in every
         * pass, only its last step in the probe's if: bf-p4c places an if's branch on Tofino 1
         * as one sequence, which it finishes before it goes on with the tables around it, so
         * the four dependent steps in the if held back every table after the heads until they
         * were placed (four stages, 2026-12-01, the fold's trial: docs/dataplane.md, "Where
         * it stands"). The steps write meta.p_o, which nothing else writes, and meta.gt, which
         * every other reader writes first in its own branch (gt_seq_cnt, gt_slot_cnt, the
         * token base's test; next_step tests it only after the token base's).
         * With size 0 the steps leave p_o as it is (p_o - 0 = p_o), and the if writes
         * nothing. */
        /* the head's offset (its low 15 bits) widened by one hash: a 15-bit field written by
         * one hash and read by the next (meta.h15, before) crashed bf-p4c 9.13.4 after PHV
         * allocation (GeneratePrimitiveInfo, 2026-11-30 at 0aa067c) */
        meta.p_o = off_head.get({meta.hv[14:0]});
        h_adm_off();   /* meta.gt: the offset asked for, widened, to the add */
        probe_add();
        meta.gt = plim_h.get({meta.size});   /* here: q_lim ends at the counters */
        probe_wrap();
        probe_min();
        if (ad == AD_PROBE && meta.size != 0) {
            /* The probe's later passes use the slot at this offset as the grant walk does
             * (at_cur: region start + recirc.cur), not a sum computed here: an add into the
             * recirculated header read meta.left and meta.p_o split at bit 16 (bf-p4c:
             * "requires too many sources"). The hash unit takes the low 16 bits (IDENTITY):
             * a slice p_o[15:0] would tie the adders' whole 32-bit p_o to the 16-bit
             * positions ("cannot find a slicing to satisfy @pa_container_size"). */
            hdr.recirc.cur = off_probe.get({meta.p_o});   /* p_o < size <= 0x8000 */
        }

        /* ================= stage: lk_q, lk_q_hi ================= */
        /* The levels' counts: q0_op, q1_op (their entries test acq_go's conditions in place:
         * the flag is a stage after the tenant meter); lk_done: done_op. */
        /* lk_done: done slots counted (a release whose head did not move, a withdrawal),
         * uncounted as the clean walk moves the head over them */
        done_op.apply();   /* (done_op's comment) */
        /* q_take's answer, 1 when it took a slot, in a 1-bit field of each level's own: the
         * tests of TAKE below read it with the pass's other flags in one gateway */
        meta.took0 = 0;
        meta.took1 = 0;
        q0_op.apply();   /* (q0_op's comment) */
        q1_op.apply();
        if (meta.level == 0) {
            meta.qv = r0;
            meta.qo = r1;
        } else {
            meta.qv = r1;
            meta.qo = r0;
        }
        /* queue-empty due: no occupied slot at either level and requests buffered (PH_BINC: one
         * more now; set-buffered: the count set), unless paused. PH_BINC checks only when a full
         * level of some slots decided its overflow (the level may have drained since; requests
         * buffered before had it announced by whoever drained it). */
        qe_pick.apply();   /* (qe_pick's comment) */
        qdone = 1w1;
        if (meta.dv == 0) { qdone = 1w0; }
        /* An acquire or a push-back overflows when it took no slot (q_take returns 1 when it
         * took one); a try when requests are buffered, the lock is paused or its level is full
         * (q_full). */
        meta.ov = 0;
        binc = 0;
        binc_qe = 0;
        ov_pick.apply();   /* meta.ov, binc, binc_qe (ov_pick's comment) */

        /* ================= stage: lk_state ================= */
        /* An acquire takes a place at the lock (tested in place, as REL_GO). */
#define TAKE (ptype == P_ACQ && acq_go == 1 && (meta.took0 == 1 || meta.took1 == 1))
        if (ptype == P_REL || exam == 1 || ptype == P_WD) {
            meta.s_mode = SV_MODE;
        } else {
            meta.s_mode = hdr.nl.mode;
        }
        st_x_in.apply();   /* lk_state's inputs (st_x_in's comment) */
        st_y_in.apply();
        meta.compat = 0;
        st_to = 0;
        state_op.apply();   /* (state_op's comment) */
        /* state_rel's answer tested (st_out's comment). A stateful ALU's output is one operand
         * (bf-p4c: "Incompatible outputs in RegisterAction"), so the register action returns lo
         * and the pass decides, which also lets it serve the probe's read of lo; on lo after,
         * not on lo before less a threshold: the subtraction was a stage of its own. */
        st_out.apply();

        /* ================= stage: lk_wait ================= */
        wait0_op.apply();   /* (wait0_op's comment) */
        wait1_op.apply();

        /* ================= stage: the cookie ================= */
        /* Before the grant counter: the token base's second pass sets the counter from the
         * a_hi/a_lo these write in the first (the cookie's, after it, was a stage after it). */
        if (ad == AD_SETC) {
            cookie_set.execute(0);
        } else if (ad == AD_GETC) {
            ADM_HI = cookie_hi.execute(0);
        } else if (adm2 == 1 && ph == PH_COOKIE2) {
            hdr.recirc.a_lo = cookie_lo.execute(0);
        } else if (ad == AD_TBASE) {
            /* the token base's value >> SLOT_BITS straight into the second pass's a_hi/a_lo
             * (no copy): here, in the if-else that writes them for the cookie (two ifs
             * writing one field are a stage apart to bf-p4c), before the decisions compare
             * it with the counter */
            ADM_HI = want_hi_h.get({hdr.admin.value_hi[31:SLOT_BITS]});
            h_want_lo();
        }

        /* ================= stage: the grant counter ================= */
        tok_op.apply();      /* (tok_op's comment) */
        tok_hi_op.apply();
        /* tok_next returns the number before: the number taken (that + 1, 1 after the wrap)
         * is written where a pass uses it (the acquire's resubmitted number, the grant walk's
         * pending one), not into tok_lo here, which the other passes' comparisons read after
         * it (a stage more to bf-p4c): the acquire's branches test tok_lo with their own
         * (statements before an if are a logical table of their own), grant_pend matches it. */

        /* ================= stage: the tails ================= */
        tail_op.apply();   /* (tail_op's comment) */

        /* ================= stage: gnext ================= */
        /* A grant walk passes the slot it examines (USED) when it granted it or the slot is not
         * live, tested in place on sv_live (computed with the slot's flags: a != under an || is
         * "gateway condition too complex"; a flag computed here would be a stage before gnext). */
#define USED (exam == 1 && (sv_live == 0 || meta.grant == 1))
        pass_on = 0;   /* ... and the walk may go past it (not a live exclusive request) */
        if (USED) {
            /* the slot's test as an equality on state and mode (as above) */
            if (SV_STATE == SS_LIVE && SV_MODE == MODE_X) {
                pass_on = 0;
            } else {
                pass_on = 1;
            }
        }
        /* The value gnext0_op and gnext1_op set: past the slot just taken and granted, or past the slot a
         * grant walk passes (USED); for a clean walk, the head gnext_follow tests (its h_arg). */
        if (ptype == P_CLEAN) {
            meta.g_arg = hdr.recirc.chead;
        } else if (TAKE && meta.grant == 1) {
            /* past the slot just taken and granted: the position after the tail before the
             * enqueue, computed here (a stateful ALU compare takes one PHV operand, and
             * QNEXT of a PHV value needs two: the position and the region's end) */
            QNEXT_SET(meta.g_arg, meta.tail)
        } else if (exam == 1) {
            meta.g_arg = nc;   /* read only if the walk passes the slot (USED) */
        }
        gnext0_op.apply();   /* (gnext0_op's comment) */
        gnext1_op.apply();

        /* The second admin probe pass's holders, from lk_state's lo half as state_rel read it:
         * here, not in the decisions' PH_PROBE2 branch, where bf-p4c split them into three
         * tables in a row (the concatenations' sources), two stages more before next_step
         * (2026-12-01, Tofino 2: first round 21 stages, critical path 20). */
        if (adm2 == 1 && ph == PH_PROBE2) {
            hdr.admin.holders = 1w0 ++ meta.rd_st[14:0];
            hdr.admin.xheld = 7w0 ++ meta.rd_st[16:16];
        }
        /* The admin reset's and token base's second passes answer with the value they carry
         * (the header's ADM_HI and a_lo): here, where those are, not late in the decisions,
         * whose last stages are short of hash distribution units (TOK_HI_SLICED's comment). */
        if (adm2 == 1 && (ph == PH_RESET2 || ph == PH_TBASE2)) {
            hdr.admin.value_hi = TOK_HI_SLICED(val_pass2, ADM_HI, hdr.recirc.a_lo);
            h_val_lo_pass2();
        }

        /* The third admin probe pass's token (the examined slot's grant number and the value's
         * high half), before the decisions and outside their chain: its inputs are the
         * recirculation header's, there from stage 0, and its three dependent steps were the
         * chain's longest (the comparison, the high half, the hashes), which took the
         * decisions two stages past a Tofino 1 pipe in the fold's second half (2026-12-01:
         * docs/dataplane.md, "Where it stands"). The comparison and the high half run in every
         * pass, only the token's write in the pass's if (bf-p4c on Tofino 1 finishes an if's
         * branch before the tables around it); meta.gt3 and hi3 are read nowhere else. */
        gt_slot_val();
        if (meta.gt3 != 0) {   /* SV_SEQ > a_lo */
            hi3 = ADM_HI - 1;
        } else {
            hi3 = ADM_HI;
        }
        if (adm2 == 1 && ph == PH_PROBE3 && SV_SEQ != 0) {
            hdr.nl.token_hi = TOK_HI_SLICED(tok_probe_hi, hi3, SV_SEQ);
            h_probe_lo();
        } else if (adm2 == 1 && ph == PH_PROBE3) {
            hdr.nl.token_hi = 0;
            hdr.nl.token_lo = 0;
        }

        /* ================= a packet routed through (kind K_ROUTE) ================= */
        /* Before the decisions and not in their chain: bf-p4c puts the first table of an
         * if-else chain no earlier than everything any table of the chain depends on, so in the
         * chain these tables waited for the grant counter; here they go where their inputs are.
         * Their drops are counted by out_pick, at the end (the drop counter's uses must exclude
         * each other). */
        if (meta.kind == K_ROUTE) {
            hdr.recirc.setInvalid();
            /* The answer's headers made invalid, but a_eth in the routed branch, which makes it
             * valid: an invalidation overridden later is a stage more to bf-p4c (an output
             * dependency). */
            hdr.ansx.setInvalid();
            hdr.a_ip.setInvalid();
            hdr.a_udp.setInvalid();
            hdr.a_nl.setInvalid();
            hdr.a_key.setInvalid();
            if (hdr.ipv4.isValid()) {
                if (meta.nh_ok == 0) {
                    hdr.a_eth.setInvalid();
                    ig_dprsr_md.drop_ctl = 1;   /* counted by out_pick */
                } else if (hdr.ipv4.ttl <= 1) {
                    hdr.a_eth.setInvalid();
                    ig_dprsr_md.drop_ctl = 1;   /* counted by out_pick */
                } else {
                    /* The next hop's MACs go out in the answer's Ethernet header, the packet's
                     * own left invalid: no stage writes hdr.ethernet, so bf-p4c keeps it out
                     * of the containers the stages reach (a tagalong field on Tofino 1, 96
                     * bits; the packet's bytes are the same). */
                    hdr.a_eth.setValid();
                    hdr.a_eth.smac = meta.nh_smac;
                    hdr.a_eth.dmac = meta.nh_dmac;
                    hdr.a_etype.setValid();
                    hdr.a_etype.etherType = 0x0800;
                    hdr.ethernet.setInvalid();
                    /* the TTL decremented by out_pick, whose key reads it as it arrived */
                    ig_tm_md.ucast_egress_port = meta.nh_port;
                    ig_tm_md.bypass_egress = 1;
                }
            } else {
                hdr.a_eth.setInvalid();
                ig_dprsr_md.drop_ctl = 1;
            }
        }

        /* =============================== decisions =============================== */

        /* The queue-empty answers' lease (ans_queue_empty), widened here, where they begin:
         * live to the answers only. */
        meta.size1q = size1q_h.get({meta.size1});


        /* The pass types' decisions, one if-else chain on ptype (a pass has one type): bf-p4c
         * orders the tables of separate ifs one after another (it knows only the exclusivity the
         * syntax shows), which made these sections 25 stages of the table dependency graph's
         * critical path (docs/dataplane.md, "Where it stands"). */
        /* ---- acquire: deciding pass (a slot taken: write it in the resubmitted pass) ---- */
        /* (A branch's own tests joined to the pass type's, not in an if inside it: an if whose
         * branch holds only ifs is a gateway of its own, a logical table.) */
        if (ptype == P_TRY && acq_go == 1 && (meta.ov == 1 || meta.compat == 0)) {
            ans_echo(OP_REJECT, 0, ST_WOULDBLOCK);
        } else if (ptype == P_TRY && acq_go == 1) {
            hdr.recirc.wflags = hdr.recirc.wflags | WF_NOMETER;
            AGAIN(PH_ACQ);
        } else if (ptype == P_ACQ && acq_go == 1 && meta.ov == 1) {
            ovf_op.apply();   /* (ovf_op's comment) */
        } else if (ptype == P_ACQ && acq_go == 1 && meta.tok_lo == 0xffffffff) {
            /* the slot's write (RESUB_SET) and the number taken (tok_next's comment) */
#if NETLOCK_FOLD
#define RESUB_FRESH meta.bl.f_fresh
#else
#define RESUB_FRESH 0
#endif
#define RESUB_SET meta.resub.setValid(); meta.resub.phase = PH_WRITE; meta.resub.fresh = RESUB_FRESH; \
            meta.resub.grant = meta.grant; meta.resub.off = pos_resub.get({meta.tail}); meta.resub_go = 1;
            RESUB_SET
            meta.resub.seq = 1;
        } else if (ptype == P_ACQ && acq_go == 1) {
            RESUB_SET
            meta.resub.seq = meta.tok_lo + 1;
        } else if (ptype == P_BINC && qe == 1) {
            /* ---- an overflow decided at a level's count: counted in lk_buf now ---- */
            ans_queue_empty();   /* the level drained since the overflow */
        } else if (ptype == P_WRITE && WR_GRANT == 1) {
            /* ---- acquire: writing pass (the slot is written; a grant goes out) ---- */
            write_grant();
            if (meta.gt != 0) {   /* seq > tok_lo */
                hi = meta.tok_hi - 1;
            } else {
                hi = meta.tok_hi;
            }
        } else if (ptype == P_RW0) {
            /* ---- retry (rw0_op's comment) ---- */
            rw0_op.apply();
        } else if (ptype == P_RW && SV_STATE == SS_LIVE && TXN_OK) {
            /* the request's live slot: granted when it has its number, else still waiting */
            if (SV_SEQ != 0) {
                rw_grant();
                if (meta.gt != 0) {   /* SV_SEQ > tok_lo */
                    hi = meta.tok_hi - 1;
                } else {
                    hi = meta.tok_hi;
                }
            }
            /* else: still waiting, nothing to say */
        } else if (ptype == P_RW) {
            rw_step.apply();   /* (rw_step's comment) */
        } else if (ptype == P_REL) {
            /* ---- release and force-release: rel_walk's and rel_answer's comments ---- */
            rel_walk.apply();
            rel_answer.apply();
        } else if (ptype == P_GRANT) {
            /* ---- grant walk: send the grant decided before; examine the next waiter (the one
             * sent above, before the pool's blocks, is done): grant_pend's and grant_next's
             * comments ---- */
            grant_pend.apply();
            grant_next.apply();
        } else if (ptype == P_CLEAN) {
            /* ---- clean walk: move the head over done slots (clean_op's comment) ---- */
            clean_op.apply();
        } else if (ptype == P_WD0) {
            /* ---- withdrawal (wd0_op's, wd_head's, wd_other's and wd_step's comments) ---- */
            wd0_op.apply();
        } else if (ptype == P_WD && meta.found == 1 && hdr.recirc.cur == head) {
            wd_head.apply();
        } else if (ptype == P_WD && meta.found == 1) {
            wd_other.apply();
        } else if (ptype == P_WD) {
            wd_step.apply();
        } else if (ptype == P_PROBE && meta.valid == 1) {
            /* ---- lease-probe ---- */
            ans_reply(OP_PROBE, FL_REPLY, 0);   /* the lease as the pool's flags block read or renewed it */
        } else if (ptype == P_PROBE) {
            ans_echo(OP_REJECT, 0, ST_NOTHOLDER);
        } else if (ptype == P_ADMIN && ad == AD_PROBE) {
            /* ---- admin: each operation's test joined to the pass type's ---- */
            hdr.admin.xwait0 = meta.rd_sthi[31:16];
            hdr.admin.xwait = meta.rd_sthi[31:16] + meta.rd_sthi[15:0];
            hdr.admin.wait0 = w0;
            hdr.admin.wait1 = w1;
            hdr.admin.used0 = r0;
            hdr.admin.used1 = r1;
            /* meta.hv, not the local head (the same here: a probe moves no head): bf-p4c
             * 9.13.4 took the local, a copy of hv, out of the PHV and then crashed on the
             * hash's field list naming it ("Compiler Bug: Exiting with SIGSEGV" in
             * GeneratePrimitiveInfo, 2026-11-30 at dfa486b) */
            hdr.admin.head = pos_ahead.get({meta.hv});
            hdr.admin.tail = pos_atail.get({meta.tail});
            hdr.admin.size = meta.size;
            meta.tk = TK_VAL;   /* before adm_probe: one run with the fields above */
            adm_probe.apply();   /* (adm_probe's comment) */
        } else if (ptype == P_ADMIN && ad == AD_RESET) {
            ADM_HI = meta.tok_hi;
            hdr.recirc.a_lo = meta.tok_lo;
            AGAIN(PH_RESET2);
        } else if (ptype == P_ADMIN && ad == AD_TBASE) {
            /* Raise the grant counter so that every later token is above value (a_hi and
             * a_lo: value >> SLOT_BITS, written with the cookie's blocks). */
            /* value > counter, in 32-bit halves (a gateway tests equalities only):
             * by the high halves where they differ, else by the low halves */
            if (ADM_HI != meta.tok_hi) {
                meta.gt = ADM_HI |-| meta.tok_hi;
            } else {
                meta.gt = hdr.recirc.a_lo |-| meta.tok_lo;
            }
            /* the second pass (value > counter) or the reply: next_step's (a stage earlier
             * than a write of the phase here, which next_step also writes) */
            if (meta.gt == 0) {
                meta.tk = TK_VAL;
            }
        } else if (ptype == P_ADMIN && ad == AD_GETC) {
            AGAIN(PH_COOKIE2);
        } else if (ptype == P_ADMIN && ad == AD_SETB && qe == 1) {
            setb_qe();
        } else if (ptype == P_ADMIN) {
            /* set-buffered with nothing left to announce, set-cookie (the value stays), or an
             * error result */
            meta.reply = 1;
        } else if (adm2 == 1 && ph == PH_PROBE2) {
            /* The admin passes after the first (their ptype is 0): in the chain, which tells
             * bf-p4c that they exclude the branches above. */
            hdr.admin.buffered = meta.bv[15:0];
            hdr.admin.done = meta.dv;
            hdr.admin.gts = meta.gts;   /* the grant time, as gtime_rd read it */
            AGAIN(PH_PROBE3);
        } else if (adm2 == 1 && ph == PH_PROBE3) {
            hdr.admin.sstate = SV_STATE;
            hdr.admin.slot = slot_adm.get({meta.sl_idx});
            hdr.nl.txn_hi = hdr.a_nl.txn_hi;   /* the slot's cells as the pool's blocks read them */
            hdr.nl.txn_lo = hdr.a_nl.txn_lo;
            hdr.nl.mode = SV_MODE;
            hdr.nl.prio = SV_PRIO;
            hdr.nl.tenant = meta.rd_tenant;
            hdr.nl.ts = hdr.a_nl.ts;
            hdr.nl.lease = hdr.a_nl.lease;
            hdr.nl.cip = hdr.a_ip.dip;
            hdr.nl.cport = meta.rd_port;
            meta.reply = 1;   /* its token: before the decisions (the third probe pass's token) */
        } else if (adm2 == 1 && (ph == PH_RESET2 || ph == PH_TBASE2)) {
            meta.reply = 1;   /* the value: before the decisions */
        } else if (adm2 == 1 && ph == PH_COOKIE2) {
            hdr.admin.value_hi = ADM_HI;
            hdr.admin.value_lo = hdr.recirc.a_lo;
            meta.reply = 1;
        } else if (badreq == 1) {
            /* a bad request (its ptype is 0): rejected */
            ans_echo(OP_REJECT, 0, ST_BADREQ);
        } else if (ptype == P_SEND && hdr.recirc.send == SEND_ACK) {
            /* ---- an answer decided in the pass before ---- */
            ans_echo(OP_RELEASE, FL_REPLY, 0);
        } else if (ptype == P_SEND) {
            meta.reply = 1;
        }

        /* The token the decisions chose (meta.tk), its halves put together by one pair of
         * hashes per destination instead of one per branch (TOK_HI_SLICED's comment). */
        if (meta.tk == TK_ANS) {
            hdr.a_nl.token_hi = TOK_HI_SLICED(tok_ans_hi, hi, meta.k_lo);
            h_ans_lo();
        } else if (meta.tk == TK_VAL) {
            hdr.admin.value_hi = TOK_HI_SLICED(val_cnt, meta.tok_hi, meta.tok_lo);
            h_val_lo_cnt();
        }
        next_step.apply();   /* (next_step's comment) */

        /* An answer to a forwarded request's client names it (ans_to_client). */
        if (meta.a_fwd == 1) {
            hdr.a_nl.flags = hdr.a_nl.flags | FL_FWD;
            hdr.a_nl.cip = hdr.a_ip.dip;
            hdr.a_nl.cport = hdr.a_udp.dport;
        }

        /* ================= the answer's next hop, what the packet becomes ================= */
        out_pick.apply();   /* (out_pick's comment) */
#if NETLOCK_FOLD
      }
#endif
    }
}
#if NETLOCK_FOLD
#undef ptype
#undef ad
#undef adm2
#undef badreq
#undef clean_done
#undef clean_wd
#undef exam
#undef forced
#undef nc
#undef ov_b
#undef retry
#undef sv_live
#undef t_in
#undef ph
#endif

control NetlockIngressDeparser(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                               in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    Checksum() ipv4_csum;
    /* No constructor argument: the type is the if's. bf-p4c 9.13.4 (p4c 34b86e9) gives the
     * digest selector of a Resubmit(type) no type (parde/extract_deparser.cpp,
     * processResubmitEmit), and with --alt-phv-alloc on Tofino 2 it then stops: "Compiler Bug:
     * Trying to create field slice larger than field: bit[127..0].size() > ...resubmit_type<3>"
     * (FinalizePhysicalLiverange; a 40-line program with Resubmit(1) does the same,
     * 2026-12-01). */
#if !NETLOCK_FOLD
    Resubmit() resubmit;
#endif

    apply {
#if !NETLOCK_FOLD
        if (ig_dprsr_md.resubmit_type == RESUB_WRITE) {
            resubmit.emit(meta.resub);
        }
#endif
        if (hdr.ipv4.isValid()) {
            hdr.ipv4.hdrChecksum = ipv4_csum.update({
                hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
                hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
                hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst });
        }
        pkt.emit(hdr);
    }
}

#if NETLOCK_FOLD
/* The fold, half a's deparser: the bridge in front of the packet (half a changes no IPv4 header
 * field: no checksum to update). */
control NetlockIngressDeparserA(packet_out pkt, inout headers_t hdr, in metadata_t meta,
                                in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply {
        pkt.emit(meta.br);
        pkt.emit(hdr);
    }
}
#endif

/* ---- Egress: writes answers ---- */
struct eg_metadata_t {
    bit<8>     mirrored;
    bit<8>     mkind;      /* KD_MIRROR: the mirror header's one field (a field, not a constant) */
    MirrorId_t session;
}

/* The egress parses only kind and answer (at most 1 + 1 + 82 = 84 of Tofino 1's 160 bytes): what
 * follows the answer (the recirculation header and the request) stays payload. A recirculating
 * pass keeps it; a mirrored copy has it cut off by its session's truncation. */
parser NetlockEgressParser(packet_in pkt, out headers_t hdr, out eg_metadata_t meta,
                           out egress_intrinsic_metadata_t eg_md) {
    state start {
        pkt.extract(eg_md);
        meta.mirrored = 0;
        meta.mkind = 0;
        meta.session = 0;
        nl_kind_t k = pkt.lookahead<nl_kind_t>();
        transition select(k.kind) {
            KD_ANSWER: parse_answer;
            KD_RECIRC_ANS: parse_answer;
            KD_MIRROR: parse_mirror;
            default: accept;
        }
    }
    state parse_answer {
        pkt.extract(hdr.kind);
        pkt.extract(hdr.ansx);
        pkt.extract(hdr.a_eth);
        pkt.extract(hdr.a_ip);
        pkt.extract(hdr.a_udp);
        pkt.extract(hdr.a_nl);
        pkt.extract(hdr.a_key);
        transition accept;
    }
    /* A mirrored copy: the mirror header, then the packet it copies (KD_RECIRC_ANS). */
    state parse_mirror {
        nl_kind_t m;
        pkt.extract(m);
        meta.mirrored = 1;
        transition parse_answer;
    }
}

control NetlockEgress(inout headers_t hdr, inout eg_metadata_t meta,
                      in egress_intrinsic_metadata_t eg_md,
                      in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
                      inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
                      inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
    /* Makes the bridged answer the reply (p4/netlock.p4's WriteAnswer): the reply's constant
     * fields between the parts the ingress wrote, which go out as they came. */
    action write_answer() {
        hdr.kind.setInvalid();
        hdr.ansx.setInvalid();
        hdr.a_etype.setValid();
        hdr.a_etype.etherType = 0x0800;
        hdr.a_ipc.setValid();
        hdr.a_ipc.version = 4;
        hdr.a_ipc.ihl = 5;
        hdr.a_ipc.diffserv = 0;
        hdr.a_ipc.identification = 0;
        hdr.a_ipc.flags = 0;
        hdr.a_ipc.fragOffset = 0;
        hdr.a_ipc.ttl = 64;
        hdr.a_ipc.protocol = 17;
        hdr.a_ipc.hdrChecksum = 0;
        hdr.a_udpc.setValid();
        hdr.a_udpc.csum = 0;
        hdr.a_nlv.setValid();
        hdr.a_nlv.version = NL_VERSION;
        hdr.a_key.setInvalid();
        hdr.a_udpc.len = 8 + 48;
        hdr.a_ipc.totalLen = 20 + 8 + 48;
    }
    /* The rack key behind the answer: a separate action, as an action tests no packet field on
     * Tofino. */
    action write_auth() {
        hdr.a_key.setValid();
        hdr.a_udpc.len = 8 + 56;
        hdr.a_ipc.totalLen = 20 + 8 + 56;
    }
    apply {
        if (meta.mirrored == 1 || (hdr.kind.isValid() && hdr.kind.kind == KD_ANSWER)) {
            write_answer();
            if (hdr.ansx.auth == 1) {
                write_auth();
            }
        } else if (hdr.kind.isValid() && hdr.kind.kind == KD_RECIRC_ANS) {
            /* A recirculating pass with an answer: a copy to the answer's port (mirror session
             * port + 1), whose own egress pass writes the answer. */
            meta.session = (MirrorId_t)hdr.ansx.port + 1;
            meta.mkind = KD_MIRROR;
            eg_dprsr_md.mirror_type = MIRROR_ANSWER;
        }
    }
}

control NetlockEgressDeparser(packet_out pkt, inout headers_t hdr, in eg_metadata_t meta,
                              in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    Checksum() ipv4_csum;
    Mirror(MIRROR_ANSWER) mirror;

    apply {
        if (eg_dprsr_md.mirror_type == MIRROR_ANSWER) {
            mirror.emit<nl_kind_t>(meta.session, {meta.mkind});
        }
        if (hdr.a_ipc.isValid()) {
            hdr.a_ipc.hdrChecksum = ipv4_csum.update({
                hdr.a_ipc.version, hdr.a_ipc.ihl, hdr.a_ipc.diffserv, hdr.a_ipc.totalLen,
                hdr.a_ipc.identification, hdr.a_ipc.flags, hdr.a_ipc.fragOffset, hdr.a_ipc.ttl,
                hdr.a_ipc.protocol, hdr.a_ip.sip, hdr.a_ip.dip });
        }
        pkt.emit(hdr);
    }
}

#if NETLOCK_FOLD
Pipeline(NetlockIngressParser(1), NetlockIngress(1), NetlockIngressDeparserA(),
         NetlockEgressParser(), NetlockEgress(), NetlockEgressDeparser()) pipe_a;
Pipeline(NetlockIngressParser(2), NetlockIngress(2), NetlockIngressDeparser(),
         NetlockEgressParser(), NetlockEgress(), NetlockEgressDeparser()) pipe_b;

Switch(pipe_a, pipe_b) main;
#else
Pipeline(NetlockIngressParser(), NetlockIngress(), NetlockIngressDeparser(),
         NetlockEgressParser(), NetlockEgress(), NetlockEgressDeparser()) pipe;

Switch(pipe) main;
#endif
