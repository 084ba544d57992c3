/* Parser value sets: a bit<> set, a struct set matched by @match kinds, a serializable enum set,
 * and a set in a sub-parser instantiated twice (one P4Info entry per instance, as p4c).
 * bmv2/front/testdata/accept/value_sets.p4 with an explicit error where no member matches
 * (TestValueSets). */
#include <core.p4>
#include <v1model.p4>

header eth_t {
    bit<48> dst;
    bit<48> src;
    bit<16> etype;
}
header vlan_t {
    bit<3>  pcp;
    bit<1>  cfi;
    bit<12> vid;
    bit<16> etype;
}
struct headers_t {
    eth_t  eth;
    vlan_t vlan;
}
struct meta_t { }

struct vlan_set_t {
    @match(ternary) bit<12> vid;
    @match(lpm)     bit<16> etype;
}
enum bit<16> EtherType_t { IPV4 = 0x0800, IPV6 = 0x86dd }

parser Inner(packet_in pkt, in bit<16> etype) {
    value_set<bit<16>>(2) tunnel_types;
    state start {
        transition select(etype) {
            tunnel_types: accept;
            default: accept;
        }
    }
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) vlan_types;
    value_set<vlan_set_t>(8) vlans;
    @name("known_types") value_set<EtherType_t>(2) types;
    Inner() in1;
    Inner() in2;
    state start {
        pkt.extract(hdr.eth);
        transition select(hdr.eth.etype) {
            vlan_types: parse_vlan;
            0x8100: parse_vlan;
            default: check;
        }
    }
    state parse_vlan {
        pkt.extract(hdr.vlan);
        transition select(hdr.vlan.vid, hdr.vlan.etype) {
            vlans: accept;
            default: check;
        }
    }
    state check {
        in1.apply(pkt, hdr.eth.etype);
        in2.apply(pkt, hdr.eth.etype);
        transition select((EtherType_t)hdr.eth.etype) {
            types: accept;
            default: no_member;
        }
    }
    /* bmv2 running p4c-bm2-ss's JSON stops a parser with no error where a select matches
     * nothing and has no default (not error.NoMatch), so the error the ingress drops on is
     * explicit. */
    state no_member {
        verify(false, error.NoMatch);
        transition accept;
    }
}

control VC(inout headers_t hdr, inout meta_t meta) { apply { } }
control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = sm.ingress_port;
        if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
        }
    }
}
control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
