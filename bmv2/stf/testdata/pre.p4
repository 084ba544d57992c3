// Packet replication and loops: resubmit and recirculate with @field_list metadata, clone
// I2E and E2E to sessions, multicast with rids, instance_type values.
#include <core.p4>
#include <v1model.p4>

header h_t {
    bit<8>  op;
    bit<8>  count;
    bit<32> inst;
    bit<16> rid;
    bit<8>  other;
    bit<8>  loops;
}

struct headers_t { h_t h; }
struct meta_t {
    @field_list(1) bit<8> loops;
    bit<8> other;
}

parser P(packet_in pkt, out headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}

control V(inout headers_t hdr, inout meta_t meta) { apply { } }

control I(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        // meta.other is not in the field list: it must be 0 on every pass.
        hdr.h.other = meta.other;
        meta.other = 0x55;
        meta.loops = meta.loops + 1;
        hdr.h.loops = meta.loops;
        hdr.h.inst = sm.instance_type;
        sm.egress_spec = 1;
        if (hdr.h.op == 1) {
            if (meta.loops < 3) {
                resubmit_preserving_field_list(1);
            }
        } else if (hdr.h.op == 2) {
            hdr.h.count = hdr.h.count + 1;
        } else if (hdr.h.op == 3) {
            meta.loops = 0x77;
            clone_preserving_field_list(CloneType.I2E, 5, 1);
        } else if (hdr.h.op == 4) {
            sm.mcast_grp = 7;
        } else if (hdr.h.op == 5) {
            mark_to_drop(sm);
            clone(CloneType.I2E, 5);
        }
    }
}

control E(inout headers_t hdr, inout meta_t meta, inout standard_metadata_t sm) {
    apply {
        if (sm.instance_type == 1) {
            // I2E clone: the received packet, parsed again (bmv2's simple_switch re-runs the
            // parser on ingress clones); ingress's header edits are not in it.
            hdr.h.setValid();
            hdr.h.op = 0xC1;
            hdr.h.count = 0;
            hdr.h.inst = sm.instance_type;
            hdr.h.rid = 0;
            hdr.h.other = 0;
            hdr.h.loops = meta.loops;
        } else if (sm.instance_type == 2) {
            hdr.h.op = 0xC2;
            hdr.h.inst = sm.instance_type;
            hdr.h.loops = meta.loops;
        } else if (hdr.h.op == 2 && meta.loops < 3) {
            recirculate_preserving_field_list(1);
        } else if (hdr.h.op == 4) {
            hdr.h.rid = sm.egress_rid;
            hdr.h.inst = sm.instance_type;
            hdr.h.count = (bit<8>)sm.egress_port;
            if (sm.egress_rid == 2) {
                clone_preserving_field_list(CloneType.E2E, 6, 1);
            }
        }
    }
}

control C(inout headers_t hdr, inout meta_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }

V1Switch(P(), V(), I(), E(), C(), D()) main;
