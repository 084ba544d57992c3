/* Table properties: idle_timeout and requires_versioning are booleans; the Tofino-only ones
 * (atcam, as_alpm, ...) need tna.p4 (tna_table_props.p4 has them accepted). */
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in p, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { p.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    table t {
        key = { hdr.h.a: exact; }
        actions = { NoAction; }
        requires_versioning = 5;
        idle_timeout = 8w1;
        as_alpm = true;
    }
    apply { t.apply(); }
}
control Eg(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out p, in H hdr) { apply { p.emit(hdr.h); } }
V1Switch(P(), VC(), I(), Eg(), CC(), D()) main;
