#include "skel.inc"
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action a() { }
    action b() { }
    table t {
        key = { hdr.h.f8: exact; }
        actions = { a; }
    }
    apply {
        switch (t.apply().action_run) {
            b: { }
        }
    }
}
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
