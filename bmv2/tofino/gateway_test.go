package tofino

import (
	"strings"
	"testing"
)

// TestGateways: how much of a Tofino 1 gateway's input (4 bytes, 12 bits) a condition takes, on
// the ingress of program(). Each case's verdict is p4c-barefoot 9.13.4's on the same condition
// over fields of the same widths (2026-11-30): refused with "condition too complex, limit of 4
// bytes + 12 bits of PHV input exceeded", or compiled.
func TestGateways(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       string // "" when the gateway can evaluate it
	}{
		{"a 16-bit field above a constant: a 15-bit range", `if (hdr.ethernet.ether_type > 5) { meta.c = 1; }`, "needs 0 bytes and 15 bits"},
		{"a 32-bit field above a constant", `if (meta.a > 5) { meta.c = 1; }`, "needs 0 bytes and 31 bits"},
		{"above 0: an equality", `if (hdr.ethernet.ether_type > 0) { meta.c = 1; }`, ""},
		{"at least a power of two: an equality of the high bits", `if (hdr.ethernet.ether_type >= 0x100) { meta.c = 1; }`, ""},
		{"above 2^12 - 1: an equality of the high bits", `if (hdr.ethernet.ether_type > 0x0fff) { meta.c = 1; }`, ""},
		{"a 12-bit range", `if (hdr.ethernet.ether_type[11:0] > 6) { meta.c = 1; }`, ""},
		{"a 13-bit range", `if (hdr.ethernet.ether_type[12:0] > 6) { meta.c = 1; }`, "needs 0 bytes and 13 bits"},
		{"two 8-bit fields above constants: a range and an equality", `if (hdr.ethernet.ether_type[7:0] > 5 || hdr.ethernet.ether_type[15:8] > 3) { meta.c = 1; }`, ""},
		{"equality of two 32-bit fields", `if (meta.a == meta.b) { meta.c = 1; }`, ""},
		{"a 48-bit field against a constant", `if (hdr.ethernet.dst == 0) { meta.c = 1; }`, "needs 4 bytes and 16 bits"},
		{"two 48-bit fields", `if (hdr.ethernet.dst != hdr.ethernet.src) { meta.c = 1; }`, "needs 6 bytes"},
		{"two 32-bit fields against constants", `if (meta.a != 0 || meta.b != 0) { meta.c = 1; }`, "needs 4 bytes and 32 bits"},
		{"an equality and a test of the same field", `if (meta.a == meta.b && meta.b != 0) { meta.c = 1; }`, ""},
		{"a 32-bit field and 4 bits", `if (meta.a == 1 && hdr.ethernet.ether_type[3:0] == 2) { meta.c = 1; }`, ""},
		{"a 32-bit field and 8 bits", `if (meta.a == 1 && meta.b[7:0] == 2) { meta.c = 1; }`, ""},
		{"a 32-bit field and 16 bits", `if (meta.a == 1 && meta.b[15:0] == 2) { meta.c = 1; }`, "needs 4 bytes and 16 bits"},
		{"a validity bit, a 32-bit field and 11 bits", `if (hdr.ethernet.isValid() && meta.a == 1 && meta.b[10:0] == 3) { meta.c = 1; }`, ""},
		{"a validity bit, a 32-bit field and 12 bits", `if (hdr.ethernet.isValid() && meta.a == 1 && meta.b[11:0] == 3) { meta.c = 1; }`, "needs 4 bytes and 13 bits"},
		{"a 16-bit field, a validity bit and a flag", `if (hdr.ethernet.ether_type == 2 && hdr.ethernet.isValid() && meta.d[0:0] == 1) { meta.c = 1; }`, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checked := checkedProgram(t, program("", tt.body))
			pipes, err := checked.TNAPipes()
			if err != nil {
				t.Fatal(err)
			}
			got := Gateways(pipes[0].Ingress.Control, checked.Const)
			switch {
			case tt.want == "" && len(got) > 0:
				t.Errorf("reported: %v", got)
			case tt.want != "" && (len(got) != 1 || !strings.Contains(got[0].Why, tt.want)):
				t.Errorf("got %v, want one problem with %q", got, tt.want)
			}
		})
	}
}
