/* A tour of the supported subset that basic.p4 and lockqueue.p4 do not cover. */
#include <core.p4>
#define V1MODEL_VERSION 20200408
#include <v1model.p4>

typedef bit<48> mac_t;
type bit<32> TenantId_t;

enum Color { RED, GREEN }

enum bit<16> EtherType {
    IPV4 = 0x0800,
    VLAN = 0x8100,
    OPT  = 0x88b6
}

error { BadOption, TooManyTags }

header ethernet_t {
    mac_t     dst;
    mac_t     src;
    EtherType etherType;
}

header vlan_t {
    bit<3>    pcp;
    bit<1>    cfi;
    bit<12>   vid;
    EtherType etherType;
}

header opt_t {
    bit<8>      len;
    varbit<256> data;
}

header v4_t { bit<32> addr; }
header v6_t { bit<128> addr; }

header_union ip_u {
    v4_t v4;
    v6_t v6;
}

struct headers {
    ethernet_t ethernet;
    vlan_t[2]  vlans;
    opt_t      opt;
    ip_u       ip;
}

struct pair_t {
    bit<8> a;
    bit<8> b;
}

struct metadata {
    @field_list(0) TenantId_t tenant;
    bit<16> hash;
    bit<8>  rnd;
    pair_t  pair;
    bool    seen;
    Color   color;
    error   perr;
}

const pair_t ZERO_PAIR = { a = 0, b = 0 };
const bit<32> SIZE = 1 << 6;

parser VlanParser(packet_in pkt, inout headers hdr) {
    state start {
        pkt.extract(hdr.vlans.next);
        verify(hdr.vlans.lastIndex < 1 || hdr.vlans.last.etherType != EtherType.VLAN, error.TooManyTags);
        transition select(hdr.vlans.last.etherType) {
            EtherType.VLAN: start;
            default: accept;
        }
    }
}

parser FeatParser(packet_in pkt, out headers hdr, inout metadata meta,
                  inout standard_metadata_t sm) {
    VlanParser() vlan_parser;

    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType, pkt.lookahead<bit<8>>()) {
            (EtherType.VLAN, _): parse_vlans;
            (EtherType.OPT, 0 .. 40): parse_opt;
            (EtherType.IPV4, 8w0x45 &&& 8w0xf0): parse_v4;
            default: accept;
        }
    }
    state parse_vlans {
        vlan_parser.apply(pkt, hdr);
        transition accept;
    }
    state parse_opt {
        bit<8> len = pkt.lookahead<bit<8>>();
        pkt.extract(hdr.opt, (bit<32>)len * 8);
        pkt.advance(8);
        transition accept;
    }
    state parse_v4 {
        pkt.extract(hdr.ip.v4);
        transition select(meta.perr == error.NoError) {
            true: accept;
            default: reject;
        }
    }
}

control FeatVerify(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum_with_payload(hdr.ip.v4.isValid(), { hdr.ip.v4.addr }, meta.hash, HashAlgorithm.csum16);
    }
}

control Counting(inout metadata meta)(bit<32> buckets) {
    counter<bit<32>>(buckets, CounterType.packets) per_tenant;
    apply {
        per_tenant.count((bit<32>)meta.tenant);
    }
}

bit<8> max8(in bit<8> x, in bit<8> y) {
    if (x > y) {
        return x;
    }
    return y;
}

control FeatIngress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    Counting(SIZE) counting;
    register<bit<8>, bit<6>>(64) last_seen;

    @id(0x01000abc)
    action set_tenant(TenantId_t t, EtherType e) {
        meta.tenant = t;
        meta.color = Color.GREEN;
        hdr.ethernet.etherType = e;
    }

    action pick(bit<9> port) {
        sm.egress_spec = port;
    }

    table tenants {
        key = {
            hdr.ethernet.src: exact;
            hdr.ethernet.etherType: exact;
            hdr.vlans[0].vid: ternary @name("outer_vid");
        }
        actions = { set_tenant; NoAction; }
        default_action = NoAction();
        support_timeout = true;
    }

    table ecmp {
        key = {
            hdr.ethernet.dst: exact;
            meta.hash: selector;
        }
        actions = { pick; }
        @name("ecmp_action_selector") implementation = action_selector(HashAlgorithm.crc16, 32w64, 32w14);
    }

    apply {
        hash(meta.hash, HashAlgorithm.crc16, 16w0, { hdr.ethernet.src, hdr.ethernet.dst }, 16w1024);
        random(meta.rnd, 8w0, 8w255);
        meta.pair = { a = max8(meta.rnd, 8w7), b = meta.pair.a };
        meta.seen = meta.pair == ZERO_PAIR;
        if (tenants.apply().hit) {
            counting.apply(meta);
        } else if (meta.color == Color.RED) {
            mark_to_drop(sm);
        }
        ecmp.apply();
        switch (hdr.ethernet.etherType) {
            EtherType.VLAN:
            EtherType.OPT: { hdr.vlans.pop_front(1); }
            default: { hdr.vlans.push_front(1); hdr.vlans[0].setValid(); }
        }
        bit<8> prev;
        last_seen.read(prev, hdr.ethernet.src[5:0]);
        last_seen.write(hdr.ethernet.src[5:0], prev |+| 1);
        hdr.ethernet.src = hdr.ethernet.src[47:8] ++ (prev >= 8w100 ? 8w100 : prev);
        if (hdr.ip.v6.isValid()) {
            hdr.ip.v4.setValid();
            hdr.ip.v4.addr = hdr.ip.v6.addr[31:0];
        }
        assert(sm.egress_spec != 9w511 || !meta.seen);
        assume(true);
    }
}

control FeatEgress(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        if (sm.egress_port == 9w64) {
            truncate(64);
            recirculate_preserving_field_list(0);
        }
        int<8> delta = (int<8>)meta.rnd;
        delta = delta |-| 8s100;
        meta.rnd = (bit<8>)(delta >> 1);
    }
}

control FeatCompute(inout headers hdr, inout metadata meta) {
    apply {
        update_checksum_with_payload(hdr.ip.v4.isValid(), { hdr.ip.v4.addr, 16w0 }, meta.hash, HashAlgorithm.csum16);
    }
}

control FeatDeparser(packet_out pkt, in headers hdr) {
    apply {
        pkt.emit(hdr);
    }
}

V1Switch(p = FeatParser(), vr = FeatVerify(), ig = FeatIngress(), eg = FeatEgress(),
         ck = FeatCompute(), dep = FeatDeparser()) main;
