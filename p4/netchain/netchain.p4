/*
 * netchain.p4: NetChain used as a lock service, the baseline of NetLock's Figures 10 and 11
 * (NetLock, SIGCOMM'20, section 6.1: "NetChain is not a fully functional lock manager, as it
 * only supports exclusive locks. Therefore, requests for shared locks are treated as exclusive
 * locks. NetChain handles concurrent requests with client-side retry."), for the v1model
 * architecture, on netlock's wire header (docs/protocol.md) so that netlock's clients talk to it.
 *
 * One slot per lock, no queue: lock l is slot l (a lock id at or beyond NETCHAIN_SLOTS is
 * refused bad-request; the client maps its locks onto the slots, package client's NetChainLocks).
 * A slot holds the transaction that holds it (0: free) and the number of grants it made (the
 * fencing token, NetChain's per-key version). Every netlock acquire or release that reaches the
 * switch is answered by the switch itself, to the sender's address and UDP port:
 *
 *   acquire: the slot is free, or held by the same txn (a copy of an acquire whose grant was
 *            lost): grant, exclusive, token = the slot's grants (a copy gets the same token),
 *            no lease; else reject would-block (the client retries after a backoff).
 *   release: the slot is held by the txn with that token: free it, answer release+reply; else
 *            reject not-holder, the slot unchanged.
 *
 * Everything else is routed by ipv4_lpm. What this is not: NetChain's chain replication over
 * several switches, its sequence-number writes and its failure handling are not modelled; the
 * original NetLock repository's NetChain baseline (switch_code/netchain) is a 1-bit status per
 * lock that releases without a holder check; this one checks the holder.
 *
 * Each register array is used by one action, once per packet, holder before version (Tofino's
 * stateful ALU order), so the engine's Tofino-constraint mode accepts it.
 */
#include <core.p4>
#include <v1model.p4>

#ifndef NETCHAIN_SLOTS
#define NETCHAIN_SLOTS 131072        /* lock slots (the original baseline: LENGTH_ARRAY 130000) */
#endif

const bit<16> NL_PORT = 8888;
const bit<8> NL_VERSION = 1;

const bit<8> OP_ACQUIRE = 0;
const bit<8> OP_RELEASE = 1;
const bit<8> OP_GRANT   = 3;
const bit<8> OP_REJECT  = 4;

const bit<8> MODE_X = 1;

const bit<8> FL_REPLY = 1;

const bit<8> ST_WOULDBLOCK = 2;
const bit<8> ST_NOTHOLDER  = 3;
const bit<8> ST_BADREQ     = 8;

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

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    udp_t      udp;
    nl_t       nl;
}

struct metadata_t {
    bit<1> answer;   /* the switch answers the packet (to its sender) */
}

parser NetChainParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t sm) {
    state start {
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
        transition accept;
    }
}

control NetChainVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control NetChainIngress(inout headers_t hdr, inout metadata_t meta,
                        inout standard_metadata_t sm) {
    register<bit<64>>(NETCHAIN_SLOTS) holder;    /* the txn holding the slot; 0: free */
    register<bit<64>>(NETCHAIN_SLOTS) version;   /* the slot's grants: the last grant's token */

    /* An acquire: take the slot if it is free (or already the txn's), count the grant. */
    action acquire(bit<32> idx) {
        bit<64> h;
        holder.read(h, idx);
        bit<1> ok = (h == 0 || h == hdr.nl.txn) ? 1w1 : 1w0;
        bit<1> fresh = (h == 0) ? 1w1 : 1w0;
        holder.write(idx, (ok == 1) ? hdr.nl.txn : h);
        bit<64> v;
        version.read(v, idx);
        v = (fresh == 1) ? v + 1 : v;
        version.write(idx, v);
        hdr.nl.op = (ok == 1) ? OP_GRANT : OP_REJECT;
        hdr.nl.status = (ok == 1) ? 8w0 : ST_WOULDBLOCK;
        hdr.nl.mode = (ok == 1) ? MODE_X : hdr.nl.mode;
        hdr.nl.token = (ok == 1) ? v : hdr.nl.token;
        hdr.nl.lease = 0;
        hdr.nl.flags = 0;
    }

    /* A release: free the slot if the txn holds it with that token. */
    action release(bit<32> idx) {
        bit<64> h;
        holder.read(h, idx);
        bit<64> v;
        version.read(v, idx);
        bit<1> ok = (h == hdr.nl.txn && v == hdr.nl.token) ? 1w1 : 1w0;
        holder.write(idx, (ok == 1) ? 64w0 : h);
        hdr.nl.op = (ok == 1) ? OP_RELEASE : OP_REJECT;
        hdr.nl.flags = (ok == 1) ? FL_REPLY : 8w0;
        hdr.nl.status = (ok == 1) ? 8w0 : ST_NOTHOLDER;
    }

    action bad_request() {
        hdr.nl.op = OP_REJECT;
        hdr.nl.flags = 0;
        hdr.nl.status = ST_BADREQ;
    }

    /* The answer goes back to the sender: swap the addresses and ports. */
    action to_sender() {
        bit<32> a = hdr.ipv4.src;
        hdr.ipv4.src = hdr.ipv4.dst;
        hdr.ipv4.dst = a;
        bit<16> p = hdr.udp.src;
        hdr.udp.src = hdr.udp.dst;
        hdr.udp.dst = p;
        hdr.udp.csum = 0;
        hdr.ipv4.ttl = 64;
        hdr.nl.cip = 0;
        hdr.nl.cport = 0;
        hdr.nl.slots = 0;
    }

    action route(bit<48> smac, bit<48> dmac, bit<9> port) {
        hdr.ethernet.src = smac;
        hdr.ethernet.dst = dmac;
        sm.egress_spec = port;
    }
    action no_route() {
        mark_to_drop(sm);
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dst : lpm @name("dst"); }
        actions = { route; no_route; }
        default_action = no_route();
        size = 1024;
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            mark_to_drop(sm);
            return;
        }
        if (hdr.nl.isValid() && hdr.nl.version == NL_VERSION && (hdr.nl.flags & FL_REPLY) == 0 &&
                (hdr.nl.op == OP_ACQUIRE || hdr.nl.op == OP_RELEASE)) {
            meta.answer = 1;
            if (hdr.nl.lock >= NETCHAIN_SLOTS) {
                bad_request();
            } else if (hdr.nl.op == OP_ACQUIRE) {
                acquire(hdr.nl.lock);
            } else {
                release(hdr.nl.lock);
            }
            to_sender();
        }
        ipv4_lpm.apply();
    }
}

control NetChainEgress(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { }
}

control NetChainComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src, hdr.ipv4.dst },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control NetChainDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
        pkt.emit(hdr.udp);
        pkt.emit(hdr.nl);
    }
}

V1Switch(NetChainParser(), NetChainVerifyChecksum(), NetChainIngress(), NetChainEgress(),
         NetChainComputeChecksum(), NetChainDeparser()) main;
