package tofino

import (
	"strings"
	"testing"

	"github.com/netlock-go/netlock/internal/testenv"
)

// graphCases are small ingress controls and the critical path of their table dependency graph
// in stages. Each case's figure is the compiler's (TestRealTableGraph compiles them: p4c-barefoot
// 9.13.4, table_summary.log's critical path); each case names the rule of TableGraph it shows.
// The ingress writes only fields the deparser emits, so that bf-p4c removes none of it, and
// computes and compares on at most 32 bits (a gateway's and an ALU's limits).
var graphCases = []struct {
	name          string
	rule          string // the rule of the model it shows (graphRules)
	locals, body  string
	want          int
	wantUnderRule int // the critical path without that rule (the negative control)
	compiler      int // the compiler's where the model is known to differ, else 0 (want)
}{
	{name: "action_read", rule: "action", want: 2, wantUnderRule: 1, body: `
        hdr.ethernet.src[31:0] = hdr.ethernet.dst[31:0] + 1;
        hdr.ethernet.dst[31:0] = hdr.ethernet.src[31:0] + 1;`},
	{name: "output", rule: "output", want: 2, wantUnderRule: 1, body: `
        hdr.ethernet.ether_type = 1;
        if (hdr.ethernet.dst[15:0] == 0) { hdr.ethernet.ether_type = 2; }`},
	{name: "exclusive_branches", rule: "exclusive", want: 1, wantUnderRule: 2, body: `
        if (hdr.ethernet.dst[15:0] == 0) { hdr.ethernet.ether_type = 1; } else { hdr.ethernet.ether_type = 2; }`},
	{name: "separate_ifs", rule: "output", want: 2, wantUnderRule: 1, body: `
        if (hdr.ethernet.dst[15:0] == 0) { hdr.ethernet.ether_type = 1; }
        if (hdr.ethernet.dst[15:0] == 1) { hdr.ethernet.ether_type = 2; }`},
	// Two slices of one field: bf-p4c orders their writes (they share a container here); the
	// model takes a slice for its field.
	{name: "slices", rule: "slices", want: 2, wantUnderRule: 1, body: `
        hdr.ethernet.dst[7:0] = 1;
        if (hdr.ethernet.src[15:0] == 0) { hdr.ethernet.dst[15:8] = 2; }`},
	{name: "metadata_zero_init", rule: "zeroinit", want: 2, wantUnderRule: 3, body: `
        meta.a = 0;
        if (hdr.ethernet.dst[15:0] == 0) { meta.a = 1; }
        hdr.ethernet.ether_type = meta.a[15:0];`},
	{name: "exit_else", rule: "exit", want: 1, wantUnderRule: 2, body: `
        if (hdr.ethernet.dst[15:0] == 0) { hdr.ethernet.ether_type = 1; exit; }
        hdr.ethernet.ether_type = 2;`},
	// What follows an if whose then branch exits goes no earlier than that branch's table
	// (stage 1, after the first write of ether_type), and its chain of two follows: so in
	// the TNA program, where bf-p4c merges the gateway into the exiting branch's table (the
	// model's critical path is the compiler's at 28081b6 with this rule, one short without).
	// Here the compiler merges it into the table after and runs the exiting one under it: 2.
	{name: "exit_floor", rule: "exitfloor", want: 3, wantUnderRule: 2, compiler: 2, body: `
        hdr.ethernet.ether_type = 1;
        if (hdr.ethernet.dst[15:0] == 0) { hdr.ethernet.ether_type = 2; exit; }
        hdr.ethernet.src[15:0] = 3;
        hdr.ethernet.src[31:16] = hdr.ethernet.src[15:0];`},
	// The second if's first table writes dst, which the first if's gateway reads: the second if
	// goes no earlier than the tables under the first (stage 1), and its chain of two follows.
	{name: "next_table", rule: "nexttable", want: 3, wantUnderRule: 2, locals: reg("r", 16), body: `
        if (hdr.ethernet.dst[15:0] == 0) {
            meta.a = r_rd.execute(0);
            hdr.ethernet.ether_type = meta.a[15:0];
        }
        if (ig_intr_md.ingress_port == 0) {
            hdr.ethernet.dst[15:0] = 1;
            hdr.ethernet.src[15:0] = hdr.ethernet.dst[15:0];
        }`},
	// The table's miss runs its default action, which writes nothing the if's table writes.
	{name: "table_miss", rule: "armwrites", want: 1, wantUnderRule: 2, locals: tableLocals, body: `
        if (!t.apply().hit) { hdr.ethernet.src[15:0] = 2; }`},
	// A default action the control plane may change could be set_src.
	{name: "table_miss_default", rule: "armwrites", want: 2, wantUnderRule: 2,
		locals: strings.Replace(tableLocals, "const default_action", "default_action", 1), body: `
        if (!t.apply().hit) { hdr.ethernet.src[15:0] = 2; }`},
	// After a hit, any action but a default-only one may have run: the model orders the if's
	// table after set_src. The compiler places both in one stage (what lets it was not
	// found): the model is a stage high here.
	{name: "table_hit", rule: "armwrites", want: 2, wantUnderRule: 2, compiler: 1, locals: tableLocals, body: `
        if (t.apply().hit) { hdr.ethernet.src[15:0] = 2; }`},
	{name: "action_run", rule: "armwrites", want: 1, wantUnderRule: 2, locals: tableLocals, body: `
        switch (t.apply().action_run) {
            NoAction: { hdr.ethernet.src[15:0] = 2; }
        }`},
}

// tableLocals declare a table whose one action writes the low half of src, and whose default
// action is NoAction, const.
const tableLocals = `
    action set_src(bit<16> v) { hdr.ethernet.src[15:0] = v; }
    table t {
        key = { hdr.ethernet.ether_type: exact; }
        actions = { set_src; NoAction; }
        const default_action = NoAction;
    }`

// graphRules turn off one rule of the model each.
var graphRules = map[string]func(*graphModel){
	"action":    func(m *graphModel) { m.noActionRead = true },
	"output":    func(m *graphModel) { m.noOutput = true },
	"exclusive": func(m *graphModel) { m.noExclusive = true },
	"slices":    func(m *graphModel) { m.bitSlices = true },
	"zeroinit":  func(m *graphModel) { m.noZeroInit = true },
	"exit":      func(m *graphModel) { m.noExitElse = true },
	"exitfloor": func(m *graphModel) { m.noExitFloor = true },
	"nexttable": func(m *graphModel) { m.noNextTable = true },
	"armwrites": func(m *graphModel) { m.noArmWrites = true },
}

func TestTableGraph(t *testing.T) {
	for _, tc := range graphCases {
		t.Run(tc.name, func(t *testing.T) {
			g, p, c := ingressGraph(t, tc.locals, tc.body)
			if g.Stages != tc.want {
				var chain []string
				for _, x := range g.Chain() {
					chain = append(chain, x.Name+"@"+itoa(x.Stage))
				}
				t.Errorf("critical path %d stages, want %d (the compiler's); chain %s", g.Stages, tc.want, strings.Join(chain, " -> "))
			}
			// The negative control: the rule the case shows, turned off, changes the figure.
			var m graphModel
			graphRules[tc.rule](&m)
			g, err := m.build(p.Ingress.Control, c.Const)
			if err != nil {
				t.Fatal(err)
			}
			if g.Stages != tc.wantUnderRule {
				t.Errorf("without the rule: critical path %d stages, want %d", g.Stages, tc.wantUnderRule)
			}
		})
	}
}

// TestRealTableGraph compiles graphCases with p4c-barefoot (make test-real) and checks their
// figures against the compiler's critical path (the case's compiler figure where the model is
// known to differ).
func TestRealTableGraph(t *testing.T) {
	bin := testenv.RealTool(t, "p4c-barefoot")
	dir := t.TempDir()
	for _, tc := range graphCases {
		t.Run(tc.name, func(t *testing.T) {
			first := firstRound(t, bin, dir, tc.name, tc.locals, tc.body)
			want := tc.want
			if tc.compiler != 0 {
				want = tc.compiler
			}
			if got := first.CriticalPath; got != want {
				t.Errorf("the compiler's critical path is %d stages, the case says %d", got, want)
			}
		})
	}
}
