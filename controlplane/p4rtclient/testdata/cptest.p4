/* The control plane's test program (not netlock.p4): an IPv4 router with a route table (lpm),
 * an ACL (ternary, with priorities) that mirrors through a clone session or floods through a
 * multicast group, packet-in to the controller with a reason, and packet-out with an egress
 * port or a multicast group. CPU port 255. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> reason;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9>  egress_port;
    bit<16> mcast_group;
    bit<7>  pad;
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

struct headers_t {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
}

struct metadata_t { }

parser MyParser(packet_in pkt, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t std) {
    state start {
        transition select(std.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        pkt.extract(hdr.packet_out);
        transition parse_ethernet;
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
        transition accept;
    }
}

control MyVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyIngress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t std) {
    action drop() {
        mark_to_drop(std);
    }
    action route(bit<48> dmac, bit<9> port) {
        hdr.ethernet.dst = dmac;
        std.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
    action to_cpu(bit<7> reason) {
        std.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = std.ingress_port;
        hdr.packet_in.reason = reason;
    }
    action mirror(bit<32> session) {
        clone(CloneType.I2E, session);
    }
    action flood(bit<16> group) {
        std.mcast_grp = group;
    }

    table ipv4_lpm {
        key = { hdr.ipv4.dst : lpm; }
        actions = { route; to_cpu; drop; }
        default_action = drop();
        size = 1024;
    }
    table acl {
        key = {
            hdr.ipv4.src      : ternary;
            hdr.ipv4.protocol : exact;
        }
        actions = { mirror; flood; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            if (hdr.packet_out.mcast_group != 0) {
                std.mcast_grp = hdr.packet_out.mcast_group;
            } else {
                std.egress_spec = hdr.packet_out.egress_port;
            }
            hdr.packet_out.setInvalid();
            exit;
        }
        if (!hdr.ipv4.isValid()) {
            mark_to_drop(std);
            exit;
        }
        ipv4_lpm.apply();
        acl.apply();
    }
}

control MyEgress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t std) {
    apply { }
}

control MyComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control MyDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.packet_in);
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(),
         MyComputeChecksum(), MyDeparser()) main;
