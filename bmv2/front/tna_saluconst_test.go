package front

import (
	"strings"
	"testing"
)

// saluConstProgram is a TNA program with one register action, next, whose apply returns the
// cell and sets it to 1 when cond holds, else increments it (then, if not ""), and writes its
// answer into an emitted header, so the compiler keeps it.
func saluConstProgram(cond, then string) string {
	if then == "" {
		then = "v = 1;"
	}
	return oneIngressProgram("bit<32> a; bit<32> b;", `Register<bit<32>, bit<16>>(1024) r;
    RegisterAction<bit<32>, bit<16>, bit<32>>(r) next = {
        void apply(inout bit<32> v, out bit<32> rv) {
            rv = v;
            if (`+cond+`) { `+then+` } else { v = v + 1; }
        }
    };`, "hdr.h.b = next.execute(hdr.h.a[15:0]);")
}

// saluConstCases are the constant terms of register actions' comparisons, each verdict that of
// bf-p4c 9.13.4 and bfas (p4c 34b86e9) on 2026-12-01 (TestRealTNARules assembles what the
// compiler accepts): the comparison unit takes one constant, the terms of the relation's right
// side negated, a subtracted constant as its W-bit complement, within a 32-bit signed value on
// Tofino 1 (bfas: "too large for stateful alu"; bf-p4c itself for an order comparison).
func saluConstCases() []tnaCase {
	const (
		large = "too large for stateful alu"
		one   = "more than one constant operand"
	)
	type c struct {
		gen, cond, then string
		want, compiler  string
	}
	cases := []c{
		{"1", "v == 0xffffffff", "", large, large},
		{"2", "v == 0xffffffff", "", "", ""},
		{"1", "v + 1 == 0", "", "", ""},
		{"1", "v == 0x80000000", "", "", ""},
		{"1", "v == 0x80000001", "", large, large},
		{"1", "v == 0x7fffffff", "", "", ""},
		{"1", "0xffffffff == v", "", large, large},
		{"2", "0xffffffff == v", "", "", ""},
		{"1", "v != 0xffffffff", "", large, large},
		{"1", "v > 0x7fffffff", "", "", ""},
		{"1", "v >= 0x80000001", "", large, "is out of range"},
		{"1", "v < 0x80000001", "", large, "is out of range"},
		{"1", "v == 1", "v = 0xffffffff;", "", ""},
		{"1", "v == 1", "v = v + 0xfffffff0;", "", ""},
		{"1", "v - 0xffffffff == 0", "", "", ""},
		{"1", "v - 5 == 0", "", large, large},
		{"2", "v - 5 == 0", "", "", ""},
		{"1", "v + 0xffffffff == 0", "", large, large},
		{"1", "v + 0x80000000 == 0", "", large, large},
		{"1", "v + 0x7fffffff == 0", "", "", ""},
		{"1", "hdr.h.a == 0xffffffff", "", large, large},
		{"1", "v - hdr.h.a == 0xffffffff", "", large, large},
		{"1", "v == hdr.h.a - 5", "", large, large},
		{"1", "v - 5 == hdr.h.a", "", large, large},
		{"1", "v > 5 + hdr.h.a", "", "", ""},
		{"1", "v + 3 == hdr.h.a", "", "", ""},
		{"1", "v == -32w1", "", large, large},
		{"1", "v == 2147483648 + 1", "", large, large},
		{"1", "v + 5 == 0xfffffff0", "", one, one},
		{"2", "v + 5 == 0xfffffff0", "", one, one},
	}
	out := make([]tnaCase, 0, len(cases))
	for _, x := range cases {
		name := "salu constant: " + strings.ReplaceAll(x.cond, " ", "")
		if x.then != "" {
			name += ", " + x.then
		}
		out = append(out, tnaCase{name: name, gen: x.gen, src: saluConstProgram(x.cond, x.then), want: x.want, compiler: x.compiler})
	}
	return out
}

// TestTNASALUConstants: the front end refuses the comparisons whose constant a stateful ALU
// cannot take (saluConstCases, compiled and assembled by TestRealTNARules).
func TestTNASALUConstants(t *testing.T) {
	checkTNACases(t, saluConstCases())
}

// TestTNASALUInputsCallee: a function's name in a register action (max(v, md.val), as
// switchml.p4 of p4c's Tofino testgen corpus writes) is no PHV input: with md.idx in the
// condition the register action reads two, which a stateful ALU takes. The front end counted
// max as a third and refused switchml.p4 ("3 PHV inputs (exponent0, exponent1, max)").
func TestTNASALUInputsCallee(t *testing.T) {
	for _, gen := range []string{"1", "2"} {
		checkRuleVerdict(t, "max (Tofino "+gen+")", saluErrors(t, "if (md.idx == 1) { v = max(v, md.val); }", gen), "")
		checkRuleVerdict(t, "a third input (Tofino "+gen+")",
			saluErrors(t, "if (md.idx == 1) { v = max(v, md.val); } else { v = hdr.eth.dst[31:0]; }", gen), "more than the 2 a stateful ALU reads")
	}
}
