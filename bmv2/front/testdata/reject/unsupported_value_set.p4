#include <core.p4>
#include <v1model.p4>
header h_t { bit<16> t; }
struct headers { h_t h; }
struct metadata { }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    value_set<bit<16>>(4) pvs;
    state start {
        transition accept;
    }
}
