package front_test

import (
	"os"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// loadV1 checks a v1model program made of a skeleton (parser, checksum controls, egress,
// deparser) and ingress, the body of control I.
func loadV1(t *testing.T, ingress string) *front.Checked {
	t.Helper()
	src := `#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pkt, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
` + ingress + `
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pkt, in H hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
`
	checked, err := front.LoadWith("prog.p4", func(name string) ([]byte, error) {
		if name == "prog.p4" {
			return []byte(src), nil
		}
		return os.ReadFile(name)
	})
	if err != nil {
		t.Fatal(err)
	}
	return checked
}

// TestP4InfoTypeInfo: type_info is present (even empty) exactly when p4c's P4Info generator
// asks for it: a table, an action parameter, an extern instance, an extern function call in a
// control, a controller header; absent otherwise, as in p4c's (checked against p4c-bm2-ss by
// TestRealP4cBM2 on temps.p4 and exprs.p4, which have none).
func TestP4InfoTypeInfo(t *testing.T) {
	for _, c := range []struct {
		name    string
		ingress string
		want    bool
	}{
		{"nothing", `apply { hdr.h.a = 1; }`, false},
		{"static_assert", `apply { static_assert(true); }`, false},
		{"extern function", `apply { mark_to_drop(sm); }`, true},
		{"extern function in an action", `action drop() { mark_to_drop(sm); } apply { drop(); }`, true},
		{"register", `register<bit<8>>(4) r; apply { r.write(0, 1); }`, true},
		{"table", `table t { actions = { NoAction; } } apply { t.apply(); }`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := loadV1(t, c.ingress).P4Info()
			if err != nil {
				t.Fatal(err)
			}
			if got := info.TypeInfo != nil; got != c.want {
				t.Errorf("type_info present: %v, want %v", got, c.want)
			}
		})
	}
}

// TestP4InfoAnonymousProperty: an extern constructed in a table property without @name has no
// P4Runtime name; P4Info refuses it with p4c's words, and accepts it named.
func TestP4InfoAnonymousProperty(t *testing.T) {
	const table = `action set(bit<8> v) { hdr.h.a = v; }
    table t { key = { hdr.h.a: exact; } actions = { set; } %s implementation = action_profile(32w4); }
    apply { t.apply(); }`
	_, err := loadV1(t, strings.Replace(table, "%s", "", 1)).P4Info()
	if err == nil || !strings.Contains(err.Error(), "Table 'I.t' has an anonymous table property 'implementation' with no name annotation, which is not supported by P4Runtime") {
		t.Errorf("anonymous implementation: %v", err)
	}
	info, err := loadV1(t, strings.Replace(table, "%s", `@name("t_profile")`, 1)).P4Info()
	if err != nil {
		t.Fatalf("named implementation: %v", err)
	}
	if n := info.ActionProfiles[0].Preamble.Name; n != "t_profile" {
		t.Errorf("named implementation: action profile %q, want t_profile (p4c's name)", n)
	}
}
