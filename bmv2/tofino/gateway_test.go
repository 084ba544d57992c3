package tofino

import (
	"strings"
	"testing"
)

// TestGateways: what a Tofino gateway cannot evaluate (bf-p4c 9.13.4's "condition too
// complex"), on the ingress of program(): an order comparison of two fields, and more than 44
// bits of PHV input (a 64-bit equality, with a constant or between two fields); and what it
// can, twins of each.
func TestGateways(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		want       string // "" when the gateway can evaluate it
	}{
		{"order comparison with a constant", `if (meta.a > 5) { meta.c = 1; }`, ""},
		{"equality of two 32-bit fields", `if (meta.a == meta.b) { meta.c = 1; }`, ""},
		{"a 48-bit field against a constant", `if (hdr.ethernet.dst == 0) { meta.c = 1; }`, "reads 48 bits of PHV"},
		{"two 48-bit fields", `if (hdr.ethernet.dst != hdr.ethernet.src) { meta.c = 1; }`, "reads 48 bits of PHV"},
		{"two 32-bit fields against constants", `if (meta.a != 0 || meta.b != 0) { meta.c = 1; }`, "reads 64 bits of PHV"},
		{"an equality and a test of the same field", `if (meta.a == meta.b && meta.b != 0) { meta.c = 1; }`, ""},
		{"a 32-bit field, a 16-bit one and a validity bit", `if (meta.a == 1 && hdr.ethernet.ether_type == 2 && hdr.ethernet.isValid()) { meta.c = 1; }`, "reads 49 bits of PHV"},
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
