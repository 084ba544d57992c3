package tofino

import (
	"strings"
	"testing"
)

// passBody is the ingress body of the pass tests: two exclusive flags set by a test of meta.a,
// each guarding its own work, a variable that follows fa, and an action only fb's branch calls.
const passBody = `
        bit<1> fa = 0;
        bit<1> fb = 0;
        bit<1> g = 0;
        if (meta.a == 1) {
            fa = 1;
        } else if (meta.a == 2) {
            fb = 1;
        }
        if (fa == 1) { meta.b = 1; g = 1; }
        if (fb == 1) { set_c(); }
        if (g == 1) { meta.d = 1; }`

func passDemands(t *testing.T, src string, flags ...string) (map[string]int, error) {
	t.Helper()
	p := firstPipe(t, src)
	ds, err := PassPHV(p.IngressParser.Parser, p.Ingress.Control, p.IngressDeparser.Control, flags)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, d := range ds {
		out[d.Flag] = d.Bits
	}
	return out, nil
}

// TestPassPHV checks each pass's demand against the ingress of program("", "") (113 bits:
// ethernet): the test of meta.a and the three flags' tests are common; each pass adds what its
// branches reach (meta.b and meta.d through g for fa, meta.c through the action for fb).
func TestPassPHV(t *testing.T) {
	base := ingressPHV(t, program("", "")).Bits
	src := program(`
    action set_c() { meta.c = 1; }`, passBody)
	got, err := passDemands(t, src, "fa", "fb")
	if err != nil {
		t.Fatal(err)
	}
	common := 32 + 3 // meta.a, fa, fb, g
	want := map[string]int{"fa": base + common + 32 + 32, "fb": base + common + 32, "": base + common}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("pass %q: %d bits, want %d (all: %v)", f, got[f], w, got)
		}
	}
	// The whole gress counts every branch: more than any pass.
	if all := ingressPHV(t, src).Bits; all != base+common+3*32 {
		t.Errorf("the whole gress: %d bits, want %d", all, base+common+3*32)
	}
}

// TestPassPHVRefusesFlags checks that flags which are not exclusive as written are refused.
func TestPassPHVRefusesFlags(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		flags      []string
		want       string
	}{
		{"both set on one path", `bit<1> fa = 0; bit<1> fb = 0; fa = 1; if (meta.a == 1) { fb = 1; }`, []string{"fa", "fb"},
			"can both be set in one pass"},
		{"set in the same branch", `bit<1> fa = 0; bit<1> fb = 0; if (meta.a == 1) { fa = 1; fb = 1; }`, []string{"fa", "fb"},
			"can both be set in one pass"},
		{"assigned a field", `bit<1> fa = 0; fa = meta.a[0:0];`, []string{"fa"}, "not a constant"},
		{"not declared", `bit<1> fa = 0;`, []string{"fa", "nope"}, "flag nope is not a variable"},
		{"wider than a bit", `bit<8> fa = 0;`, []string{"fa"}, "is not a bit<1>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := passDemands(t, program("", tt.body), tt.flags...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
	// The negative control: exclusive flags in two branches of one if are accepted.
	if _, err := passDemands(t, program("", `bit<1> fa = 0; bit<1> fb = 0; if (meta.a == 1) { fa = 1; } else { fb = 1; }`), "fa", "fb"); err != nil {
		t.Errorf("exclusive flags refused: %v", err)
	}
}

// TestPassPHVValues: passes given as values of one variable (VAR=N) count as the flags of
// passBody do, with the pass's work in a 2-bit variable; a value assigned from a field is
// refused, as a flag's is, and so is a malformed spec.
func TestPassPHVValues(t *testing.T) {
	base := ingressPHV(t, program("", "")).Bits
	body := `
        bit<2> pt = 0;
        bit<1> g = 0;
        if (meta.a == 1) {
            pt = 1;
        } else if (meta.a == 2) {
            pt = 2;
        }
        if (pt == 1) { meta.b = 1; g = 1; }
        if (pt == 2) { set_c(); }
        if (g == 1) { meta.d = 1; }`
	got, err := passDemands(t, program(`
    action set_c() { meta.c = 1; }`, body), "pt=1", "pt=2")
	if err != nil {
		t.Fatal(err)
	}
	common := 32 + 2 + 1 // meta.a, pt, g
	want := map[string]int{"pt=1": base + common + 32 + 32, "pt=2": base + common + 32, "": base + common}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("pass %q: %d bits, want %d (all: %v)", f, got[f], w, got)
		}
	}
	if _, err := passDemands(t, program("", `bit<2> pt = 0; pt = meta.a[1:0];`), "pt=1"); err == nil || !strings.Contains(err.Error(), "not a constant") {
		t.Errorf("pt assigned a field: %v, want a refusal", err)
	}
	if _, err := passDemands(t, program("", `bit<2> pt = 0;`), "pt=x"); err == nil || !strings.Contains(err.Error(), "want VAR=N") {
		t.Errorf("pt=x: %v, want a refusal", err)
	}
}

// TestPassPHVControlVariable: a pass variable may be the control's own, written by the actions a
// table's const entries choose (p4/tna/netlock.p4's ptype and pass_type): its passes count as
// the apply block's variable's do (TestPassPHVValues), with the table's key and the variable
// common to all. A 1-bit flag of the control is refused (its sets cannot be told apart), and so
// is a name that is no variable.
func TestPassPHVControlVariable(t *testing.T) {
	base := ingressPHV(t, program("", "")).Bits
	decls := `
    bit<2> pt;
    bit<1> cf;
    action set_c() { meta.c = 1; }
    action pass_is(bit<2> v) { pt = v; }
    table pass_type {
        key = { meta.a : ternary; }
        actions = { pass_is; }
        const default_action = pass_is(0);
        const entries = { 1 : pass_is(1); 2 : pass_is(2); }
    }`
	body := `
        bit<1> g = 0;
        pass_type.apply();
        if (pt == 1) { meta.b = 1; g = 1; }
        if (pt == 2) { set_c(); }
        if (g == 1) { meta.d = 1; }`
	got, err := passDemands(t, program(decls, body), "pt=1", "pt=2")
	if err != nil {
		t.Fatal(err)
	}
	common := 32 + 2 + 1 // meta.a (the key), pt, g
	want := map[string]int{"pt=1": base + common + 32 + 32, "pt=2": base + common + 32, "": base + common}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("pass %q: %d bits, want %d (all: %v)", f, got[f], w, got)
		}
	}
	if _, err := passDemands(t, program(decls, body), "cf"); err == nil || !strings.Contains(err.Error(), "flag cf is a variable of the control") {
		t.Errorf("a flag of the control: %v, want a refusal", err)
	}
	_, err = passDemands(t, program(decls, body), "nope=1", "nope=2")
	if err == nil || strings.Count(err.Error(), "nope is not a variable") != 1 {
		t.Errorf("a name that is no variable, given twice: %v, want one refusal", err)
	}
}

// TestPassGraph checks each pass type's critical path (IngressPassPHV's Graph): a pass keeps
// only the tables its branches reach, following the values its assumption decides (g follows
// pt == 1), and the whole control's graph is longer than every pass's.
func TestPassGraph(t *testing.T) {
	c := checkedProgram(t, program("", `
        bit<2> pt = 0;
        bit<1> g = 0;
        if (hdr.ethernet.dst[7:0] == 1) { pt = 1; } else if (hdr.ethernet.dst[7:0] == 2) { pt = 2; }
        if (pt == 1) {
            hdr.ethernet.src[15:0] = hdr.ethernet.dst[15:0] + 1;
            g = 1;
        }
        if (pt == 2) {
            hdr.ethernet.ether_type = 7;
        }
        if (g == 1) {
            hdr.ethernet.ether_type = hdr.ethernet.src[15:0] + 2;
        }
        if (pt == 2) {
            hdr.ethernet.ether_type = hdr.ethernet.ether_type + 1;
        }`))
	passes, err := IngressPassPHV(c, []string{"pt=1", "pt=2"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeOf(c)
	if err != nil {
		t.Fatal(err)
	}
	whole, err := TableGraph(p.Ingress.Control, c.Const)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{"whole": whole.Stages}
	for _, d := range passes {
		got[d.Flag] = d.Graph.Stages
	}
	// pt=1: src, then the g branch's ether_type from it; pt=2: ether_type, then its increment
	// (the g branch is not reached); none: the classification alone.
	want := map[string]int{"whole": 4, "pt=1": 2, "pt=2": 2, "": 1}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q: critical path %d stages, want %d (all: %v)", k, got[k], w, got)
		}
	}
	// The negative control: not following g, pt=2 keeps the g branch, which writes ether_type
	// between its two tables.
	g2, err := graphModel{assume: passes[1].Pass, noFollow: true}.build(p.Ingress.Control, c.Const)
	if err != nil {
		t.Fatal(err)
	}
	if g2.Stages != 3 {
		t.Errorf("pt=2 not following g: critical path %d stages, want 3", g2.Stages)
	}
	if !strings.Contains(PassText(passes, true), "ingress pass pt=1: critical path 2 stages") {
		t.Errorf("PassText:\n%s", PassText(passes, true))
	}
}
