/* L2/L3 test program for the P4Runtime server: every table match kind,
 * indirect and direct counters and meters, a register, a digest and
 * controller packet-in/packet-out headers. */
#include <core.p4>
#include <v1model.p4>
#include "headers.p4"

struct learn_t {
    bit<48> src;
    bit<9>  port;
}

struct metadata_t {
    bit<16> vrf;
    bit<8>  color;
}

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
    counter(64, CounterType.packets_and_bytes) port_counter;
    direct_counter(CounterType.packets_and_bytes) acl_counter;
    meter(32, MeterType.bytes) port_meter;
    direct_meter<bit<8>>(MeterType.packets) route_meter;
    register<bit<32>>(16) seen;

    action drop() {
        mark_to_drop(std);
    }
    action forward(bit<9> port) {
        std.egress_spec = port;
    }
    action set_vrf(bit<16> vrf) {
        meta.vrf = vrf;
    }
    action route(bit<48> dmac, bit<9> port) {
        hdr.ethernet.dst = dmac;
        std.egress_spec = port;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        route_meter.read(meta.color);
    }
    action to_cpu() {
        std.egress_spec = CPU_PORT;
        acl_counter.count();
    }
    action acl_permit() {
        acl_counter.count();
    }
    action flood(bit<16> group) {
        std.mcast_grp = group;
    }
    action learn() {
        digest<learn_t>(1, { hdr.ethernet.src, std.ingress_port });
    }

    table smac {
        key = { hdr.ethernet.src : exact; }
        actions = { learn; NoAction; }
        default_action = learn();
        size = 1024;
    }
    table dmac {
        key = { hdr.ethernet.dst : exact; }
        actions = { forward; flood; drop; }
        default_action = flood(1);
        size = 1024;
    }
    table vrf_map {
        key = {
            std.ingress_port : exact;
            hdr.ethernet.etherType : optional;
        }
        actions = { set_vrf; NoAction; }
        default_action = NoAction();
    }
    table ipv4_lpm {
        key = {
            meta.vrf : exact;
            hdr.ipv4.dst : lpm;
        }
        actions = { route; drop; NoAction; }
        default_action = drop();
        meters = route_meter;
        size = 4096;
    }
    table acl {
        key = {
            hdr.ipv4.src : ternary;
            hdr.ipv4.dst : ternary;
            hdr.ipv4.protocol : ternary;
            hdr.ipv4.ttl : range;
        }
        actions = { to_cpu; acl_permit; drop; }
        default_action = acl_permit();
        counters = acl_counter;
        size = 256;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            std.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        port_counter.count((bit<32>)std.ingress_port);
        port_meter.execute_meter((bit<32>)std.ingress_port, meta.color);
        seen.write((bit<32>)std.ingress_port, 1);
        smac.apply();
        if (hdr.ipv4.isValid()) {
            vrf_map.apply();
            ipv4_lpm.apply();
            acl.apply();
        } else {
            dmac.apply();
        }
        if (std.egress_spec == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = std.ingress_port;
            hdr.packet_in.reason = 1;
        }
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
