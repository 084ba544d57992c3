package tofino

import (
	"errors"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// program is a TNA program whose ingress has the given locals and apply body.
func program(locals, body string) string {
	return tnaSkeleton(`struct header_t { ethernet_h ethernet; }
struct metadata_t { bit<32> a; bit<32> b; bit<32> c; bit<32> d; }`, "", "", locals, body, "    apply { }")
}

// tnaSkeleton is the tests' TNA program: an Ethernet header, the types (more headers, header_t
// and metadata_t), the ingress parser's extractions after Ethernet (igExtract) and the egress
// parser's after its intrinsic metadata (egExtract), the ingress's locals and apply body, and
// the egress's body (egress, with its apply).
func tnaSkeleton(types, igExtract, egExtract, locals, body, egress string) string {
	return `#include <core.p4>
#include <tna.p4>
header ethernet_h { bit<48> dst; bit<48> src; bit<16> ether_type; }
` + types + `
parser IgParser(packet_in pkt, out header_t hdr, out metadata_t meta, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.ethernet); ` + igExtract + `transition accept; }
}
control Ingress(inout header_t hdr, inout metadata_t meta, in ingress_intrinsic_metadata_t ig_intr_md,
                in ingress_intrinsic_metadata_from_parser_t ig_prsr_md,
                inout ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md,
                inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {
` + locals + `
    apply {
` + body + `
    }
}
control IgDeparser(packet_out pkt, inout header_t hdr, in metadata_t meta, in ingress_intrinsic_metadata_for_deparser_t ig_dprsr_md) {
    apply { pkt.emit(hdr); }
}
parser EgParser(packet_in pkt, out header_t hdr, out metadata_t meta, out egress_intrinsic_metadata_t eg_intr_md) {
    state start { pkt.extract(eg_intr_md); ` + egExtract + `transition accept; }
}
control Egress(inout header_t hdr, inout metadata_t meta, in egress_intrinsic_metadata_t eg_intr_md,
               in egress_intrinsic_metadata_from_parser_t eg_prsr_md,
               inout egress_intrinsic_metadata_for_deparser_t eg_dprsr_md,
               inout egress_intrinsic_metadata_for_output_port_t eg_oport_md) {
` + egress + `
}
control EgDeparser(packet_out pkt, inout header_t hdr, in metadata_t meta, in egress_intrinsic_metadata_for_deparser_t eg_dprsr_md) {
    apply { pkt.emit(hdr); }
}
Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;
Switch(pipe) main;
`
}

// reg declares a register of n 32-bit cells with a reading action NAME_rd that returns the
// cell plus meta.d, and a writing action NAME_wr.
func reg(name string, n int) string {
	return strings.NewReplacer("NAME", name, "N", itoa(n)).Replace(`
    Register<bit<32>, bit<32>>(N) NAME;
    RegisterAction<bit<32>, bit<32>, bit<32>>(NAME) NAME_rd = {
        void apply(inout bit<32> v, out bit<32> rv) { rv = v; }
    };
    RegisterAction<bit<32>, bit<32>, bit<32>>(NAME) NAME_wr = {
        void apply(inout bit<32> v) { v = meta.d; }
    };`)
}

func itoa(n int) string {
	s := ""
	for ; n > 0 || s == ""; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

// checkedProgram checks src, a TNA program.
func checkedProgram(t *testing.T, src string) *front.Checked {
	t.Helper()
	checked, err := front.LoadWith("t.p4", func(p string) ([]byte, error) {
		if p == "t.p4" {
			return []byte(src), nil
		}
		return nil, errors.New("not found")
	})
	if err != nil {
		t.Fatal(err)
	}
	return checked
}

// firstPipe checks src (a TNA program) and returns its first pipe.
func firstPipe(t *testing.T, src string) *front.TNAPipe {
	t.Helper()
	pipes, err := checkedProgram(t, src).TNAPipes()
	if err != nil {
		t.Fatal(err)
	}
	return pipes[0]
}

func analyze(t *testing.T, src string, res Resources) (*Layout, error) {
	t.Helper()
	return Analyze(firstPipe(t, src).Ingress.Control, res)
}

func TestStages(t *testing.T) {
	small := 1024
	for _, tt := range []struct {
		name, locals, body string
		// per operation: floor, earliest, stage
		want map[string][3]int
		used int
	}{
		{"independent registers share stage 0", reg("r1", small) + reg("r2", small),
			`meta.a = r1_rd.execute(0); meta.b = r2_rd.execute((bit<32>)hdr.ethernet.ether_type);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {0, 0, 0}}, 1},
		{"an index read from a register's result waits a stage", reg("r1", small) + reg("r2", small),
			`meta.a = r1_rd.execute(0); meta.b = r2_rd.execute(meta.a);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {1, 1, 1}}, 2},
		{"a computed index waits another stage (not in the floor)", reg("r1", small) + reg("r2", small),
			`meta.a = r1_rd.execute(0); meta.c = meta.a + 1; meta.b = r2_rd.execute(meta.c);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {1, 2, 2}}, 3},
		{"an apply body's input counts", reg("r1", small) + reg("r2", small),
			`meta.d = r1_rd.execute(0); r2_wr.execute(0);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {1, 1, 1}}, 2},
		{"a condition guarding a register action counts", reg("r1", small) + reg("r2", small),
			`if (r1_rd.execute(0) == 1) { r2_wr.execute(0); }`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {1, 1, 1}}, 2},
		{"a value set under a condition waits for it", reg("r1", small) + reg("r2", small),
			`meta.a = r1_rd.execute(0); if (meta.a == 1) { meta.b = 3; } r2_wr.execute(meta.b);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {1, 2, 2}}, 3},
		{"a value overwritten at the top level forgets its past", reg("r1", small) + reg("r2", small),
			`meta.a = r1_rd.execute(0); meta.a = (bit<32>)hdr.ethernet.ether_type; r2_wr.execute(meta.a);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {0, 0, 0}}, 1},
		{"a register's register actions share its stage", reg("r1", small) + reg("r2", small),
			`meta.a = r1_rd.execute(0); if (hdr.ethernet.ether_type == 1) { meta.b = r2_rd.execute(meta.a); } else { r2_wr.execute(0); }`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {1, 1, 1}}, 2},
		{"a table's action data", reg("r1", small) + `
    action set(bit<32> x) { meta.a = x; }
    table t { key = { hdr.ethernet.dst : exact; } actions = { set; NoAction; } size = 16; }`,
			`t.apply(); r1_wr.execute(meta.a);`,
			map[string][3]int{"t": {0, 0, 0}, "r1": {1, 1, 1}}, 2},
		{"a table keyed on a register's result", reg("r1", small) + `
    action set(bit<32> x) { meta.b = x; }
    table t { key = { meta.a : exact; } actions = { set; NoAction; } size = 16; }`,
			`meta.a = r1_rd.execute(0); t.apply();`,
			map[string][3]int{"r1": {0, 0, 0}, "t": {1, 1, 1}}, 2},
		{"a called action's out parameter", reg("r1", small) + reg("r2", small) + `
    action pick(in bit<32> x, out bit<32> y) { y = x; }`,
			`meta.a = r1_rd.execute(0); pick(meta.a, meta.b); r2_wr.execute(meta.b);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {1, 1, 1}}, 2},
		{"a path that exits does not join", reg("r1", small) + reg("r2", small),
			`meta.a = r1_rd.execute(0); meta.b = 0; if (hdr.ethernet.ether_type == 1) { meta.b = meta.a; exit; } r2_wr.execute(meta.b);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {0, 0, 0}}, 1},
		{"five registers take two stages (four stateful ALUs)",
			reg("r1", small) + reg("r2", small) + reg("r3", small) + reg("r4", small) + reg("r5", small),
			`r1_wr.execute(0); r2_wr.execute(0); r3_wr.execute(0); r4_wr.execute(0); r5_wr.execute(0);`,
			map[string][3]int{"r1": {0, 0, 0}, "r4": {0, 0, 0}, "r5": {0, 0, 1}}, 2},
		{"SRAM: two registers of 33 blocks and one of 17 do not share a stage",
			reg("r1", 131072) + reg("r2", 131072) + reg("r3", 65536),
			`r1_wr.execute(0); r2_wr.execute(0); r3_wr.execute(0);`,
			map[string][3]int{"r1": {0, 0, 0}, "r2": {0, 0, 0}, "r3": {0, 0, 1}}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := analyze(t, program(tt.locals, tt.body), Tofino1)
			if err != nil {
				t.Fatal(err)
			}
			for name, w := range tt.want {
				o := l.Op(name)
				if o == nil {
					t.Fatalf("no operation %s in %v", name, l.Markdown())
				}
				if got := [3]int{o.Floor, o.Earliest, o.Stage}; got != w {
					t.Errorf("%s: floor, earliest, stage = %v, want %v\n%s", name, got, w, l.Markdown())
				}
			}
			if l.Stages != tt.used {
				t.Errorf("%d stages, want %d\n%s", l.Stages, tt.used, l.Markdown())
			}
		})
	}
}

// TestStagesRegisterSize: cells, width and blocks (data and a spare).
func TestStagesRegisterSize(t *testing.T) {
	l, err := analyze(t, program(reg("r1", 32768)+`
    Register<bit<64>, bit<32>>(1 << 14) wide;
    RegisterAction<bit<64>, bit<32>, bit<32>>(wide) wide_rd = {
        void apply(inout bit<64> v, out bit<32> rv) { rv = v[31:0]; }
    };`, `r1_wr.execute(0); meta.a = wide_rd.execute(1);`), Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][3]int{"r1": {32768, 32, 9}, "wide": {16384, 64, 9}} {
		o := l.Op(name)
		if got := [3]int{o.Cells, o.Bits, o.Blocks}; got != want {
			t.Errorf("%s: cells, bits, blocks = %v, want %v", name, got, want)
		}
	}
	if o := l.Op("r1"); len(o.Actions) != 1 || o.Actions[0] != "r1_wr" {
		t.Errorf("r1's actions: %v", o.Actions)
	}
}

// TestStagesCycle: a register whose action needs a result that needs the register's own
// result cannot be placed (a real dependency cycle across two registers).
func TestStagesCycle(t *testing.T) {
	_, err := analyze(t, program(reg("r1", 1024)+reg("r2", 1024),
		`meta.a = r1_rd.execute(0);
        meta.b = r2_rd.execute(meta.a);
        if (meta.b == 1) { meta.d = meta.b; r1_wr.execute(0); }`), Tofino1)
	if err == nil || !strings.Contains(err.Error(), "cycle") || !strings.Contains(err.Error(), "r1") ||
		!strings.Contains(err.Error(), "r2") {
		t.Fatalf("err = %v, want a cycle through r1 and r2", err)
	}
}

// TestStagesTooBig: a register larger than a stage's SRAM is refused.
func TestStagesTooBig(t *testing.T) {
	_, err := analyze(t, program(reg("huge", 1<<19), `huge_wr.execute(0);`), Tofino1)
	if err == nil || !strings.Contains(err.Error(), "huge needs 129 SRAM blocks") {
		t.Fatalf("err = %v", err)
	}
}

// TestStagesDecisionTable: a table whose entries and default action are const is the program's
// own decision (p4/tna/netlock.p4's pass_type, hold_op, ...): analysed as the if statement it
// replaces, not as an operation of its own, so that a register action it chooses by a value
// read from another register sits in the next stage either way. A table the control plane
// fills (the same table with plain entries) is an operation: a stage of its own between them.
func TestStagesDecisionTable(t *testing.T) {
	regs := reg("r0", 1024) + reg("r1", 1024)
	byIf := program(regs, `meta.a = r0_rd.execute(0);
        if (meta.a == 1) { r1_wr.execute(0); }`)
	pick := func(constant string) string {
		return program(regs+`
    action go() { r1_wr.execute(0); }
    table pick {
        key = { meta.a : ternary; }
        actions = { go; NoAction; }
        `+constant+` default_action = NoAction();
        `+constant+` entries = { 1 : go(); }
    }`, `meta.a = r0_rd.execute(0);
        pick.apply();`)
	}
	for _, tt := range []struct {
		name, src string
		stage     int  // r1's stage counting operations only
		tableOp   bool // pick is an operation of the layout
	}{
		{"if", byIf, 1, false},
		{"const table", pick("const"), 1, false},
		{"control-plane table", pick(""), 2, true},
	} {
		l, err := analyze(t, tt.src, Tofino1)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if o := l.Op("r1"); o == nil || o.Floor != tt.stage {
			t.Errorf("%s: r1 %+v, want it at stage %d counting operations only", tt.name, o, tt.stage)
		}
		if (l.Op("pick") != nil) != tt.tableOp {
			t.Errorf("%s: pick an operation: %v, want %v", tt.name, l.Op("pick") != nil, tt.tableOp)
		}
	}
}

// TestStagesControlVariable: a variable the control declares beside its actions is one value
// for the apply block and every action: what a table's action writes into it, a later
// condition reads (before, each inlined action had a copy of its own, and the dependency was
// lost: r1 in stage 0).
func TestStagesControlVariable(t *testing.T) {
	src := program(reg("r0", 1024)+reg("r1", 1024)+`
    bit<32> v;
    action set_v() { v = r0_rd.execute(0); }
    table t0 {
        key = { meta.b : ternary; }
        actions = { set_v; }
        const default_action = set_v();
        const entries = { 1 : set_v(); }
    }`, `t0.apply();
        if (v == 1) { r1_wr.execute(0); }`)
	l, err := analyze(t, src, Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	if o := l.Op("r1"); o == nil || o.Floor != 1 {
		t.Errorf("r1 %+v, want it at stage 1, after r0", o)
	}
}

// TestStagesRegisterReach: a register whose data takes more SRAM blocks than one stateful ALU
// reaches is refused, at the bounds bf-p4c 9.13.4 showed on one-register programs (2026-11-30):
// Tofino 1 placed 35 blocks of data (71680 64-bit cells) and refused 36; Tofino 2 placed 23
// (47104 64-bit cells; 81920 32-bit cells, 20) and refused 24 (98304 32-bit cells; 65536
// 64-bit cells, the TNA program's grant-number-and-time pair before it was split, 32).
func TestStagesRegisterReach(t *testing.T) {
	for _, tt := range []struct {
		res   Resources
		cells int // of 32 bits: 4096 a block
		ok    bool
	}{
		{Tofino1, 35 * 4096, true},
		{Tofino1, 35*4096 + 1, false},
		{Tofino2, 23 * 4096, true},
		{Tofino2, 24 * 4096, false},
		{Tofino2, 16 * 4096, true},
		{Tofino2, 32 * 4096, false},
	} {
		_, err := analyze(t, program(reg("big", tt.cells), `big_wr.execute(0);`), tt.res)
		refused := err != nil && strings.Contains(err.Error(), "stateful ALU reaches")
		if refused == tt.ok {
			t.Errorf("%s, %d cells of 32 bits: err = %v, want accepted %v", tt.res.Name, tt.cells, err, tt.ok)
		}
	}
}

// TestStagesLongestChainFirst: the list scheduler gives a stage's stateful ALUs to the
// operations with the longest chain after them. r5's result indexes r6; r1..r4 end chains.
// Taking them in order of first use would fill stage 0 with r1..r4 and need three stages
// (r5, then r6); taking r5 first needs two. The placement counting operations only (AtFloor)
// ignores the computed index that delays r7 by a stage in Stage.
func TestStagesLongestChainFirst(t *testing.T) {
	locals := ""
	for _, r := range []string{"r1", "r2", "r3", "r4", "r5", "r6", "r7"} {
		locals += reg(r, 1024)
	}
	l, err := analyze(t, program(locals, `
        r1_wr.execute(0); r2_wr.execute(0); r3_wr.execute(0); r4_wr.execute(0);
        meta.a = r5_rd.execute(0);
        meta.b = r6_rd.execute(meta.a);
        meta.c = meta.b + 1;
        r7_wr.execute(meta.c);`), Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][2]int{"r5": {0, 0}, "r6": {1, 1}, "r7": {2, 3}} {
		if o := l.Op(name); o.AtFloor != want[0] || o.Stage != want[1] {
			t.Errorf("%s: at floor %d, stage %d, want %v\n%s", name, o.AtFloor, o.Stage, want, l.Markdown())
		}
	}
	if l.FloorStages != 3 || l.Stages != 4 || l.SALUs != 7 || l.Blocks != 7*2 {
		t.Errorf("%d stages at floor, %d placed, %d stateful ALUs, %d blocks\n%s", l.FloorStages, l.Stages, l.SALUs, l.Blocks, l.Markdown())
	}
	// r1..r4 share the stages left beside the chain: no stage holds more than four.
	per := map[int]int{}
	for _, o := range l.Ops {
		per[o.AtFloor]++
	}
	for s, n := range per {
		if n > Tofino1.SALUs {
			t.Errorf("stage %d holds %d registers", s, n)
		}
	}
}

// TestStagesFolded: with decisions folded, a chain of flags costs one stage after its inputs
// however long it is written, and so does an arithmetic assignment on a selected value; an
// arithmetic chain still costs a stage per assignment, and a decision read as an index must
// be in the PHV (a stage after its inputs).
func TestStagesFolded(t *testing.T) {
	regs := reg("r1", 1024) + reg("r2", 1024)
	for _, tt := range []struct {
		name, body string
		earliest   int // r2's
		folded     int
	}{
		{"a chain of flags", `meta.a = r1_rd.execute(0);
            if (meta.a == 1) { meta.b = 1; }
            if (meta.b == 1) { meta.c = 2; }
            if (meta.c == 2) { r2_wr.execute(0); }`, 3, 1},
		{"a flag from a comparison", `meta.a = r1_rd.execute(0);
            if (meta.a == 3) { meta.b = 1; } else { meta.b = 0; }
            bool x = meta.b == 1 && hdr.ethernet.ether_type == 2;
            if (x) { r2_wr.execute(0); }`, 3, 1},
		{"arithmetic on a selected value", `meta.a = r1_rd.execute(0);
            if (meta.a == 1) { meta.b = 5; } else { meta.b = 7; }
            meta.c = meta.b + meta.d;
            meta.d = r2_rd.execute(meta.c);`, 3, 2},
		{"an arithmetic chain", `meta.a = r1_rd.execute(0);
            meta.b = meta.a + 1;
            meta.c = meta.b + 1;
            meta.d = r2_rd.execute(meta.c);`, 3, 3},
		{"a decision as an index", `meta.a = r1_rd.execute(0);
            if (meta.a == 1) { meta.b = 5; }
            meta.d = r2_rd.execute(meta.b);`, 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := analyze(t, program(regs, tt.body), Tofino1)
			if err != nil {
				t.Fatal(err)
			}
			o := l.Op("r2")
			if o.Earliest != tt.earliest || o.Folded != tt.folded {
				t.Errorf("r2: earliest %d, folded %d, want %d, %d\n%s", o.Earliest, o.Folded, tt.earliest, tt.folded, l.Markdown())
			}
			if o.Folded < o.Floor || o.Folded > o.Earliest || o.AtFolded < o.Folded {
				t.Errorf("r2: floor %d, folded %d (placed %d), earliest %d", o.Floor, o.Folded, o.AtFolded, o.Earliest)
			}
		})
	}
}

// TestStagesSubControls: a control applied from the ingress runs there (p4c inlines it), each
// instance with registers of its own: two instances of one control are two registers, the
// second after the first when its index is the first's result; one instance is one register.
func TestStagesSubControls(t *testing.T) {
	sub := `control Count(inout metadata_t meta, in bit<32> idx) {
    Register<bit<32>, bit<32>>(1024) cnt;
    RegisterAction<bit<32>, bit<32>, bit<32>>(cnt) inc = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + 1; rv = v; }
    };
    apply { meta.a = inc.execute(idx); }
}
control Ingress(`
	withSub := func(locals, body string) string {
		return strings.Replace(program(locals, body), "control Ingress(", sub, 1)
	}
	l, err := analyze(t, withSub("Count() c1; Count() c2;", "c1.apply(meta, 0); c2.apply(meta, meta.a);"), Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	c1, c2 := l.Op("c1.cnt"), l.Op("c2.cnt")
	if c1 == nil || c2 == nil || len(l.Ops) != 2 || l.SALUs != 2 {
		var names []string
		for _, o := range l.Ops {
			names = append(names, o.Name)
		}
		t.Fatalf("operations %v, %d stateful ALUs; want c1.cnt and c2.cnt", names, l.SALUs)
	}
	if c1.Floor != 0 || c2.Floor != 1 {
		t.Errorf("c1.cnt floor %d, c2.cnt floor %d; want 0 and 1", c1.Floor, c2.Floor)
	}
	l, err = analyze(t, withSub("Count() c1; Count() c2;", "c1.apply(meta, 0);"), Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Ops) != 1 || l.Op("c1.cnt") == nil {
		t.Errorf("one instance applied: %d operations", len(l.Ops))
	}
}

// TestEstimatePipelines: a program of two Pipelines is estimated pipe by pipe (each runs in a
// pipe of its own), in Switch's order; EstimateProgram is the first's.
func TestEstimatePipelines(t *testing.T) {
	locals := `
    action s1() { meta.a = meta.b + 1; }
    action s2() { meta.c = meta.a + 1; }
    action s3() { meta.d = meta.c + 1; }`
	src := program(locals, "        s1(); s2(); s3();")
	const one = "Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;\nSwitch(pipe) main;\n"
	if !strings.Contains(src, one) {
		t.Fatal("the test program's Switch is not where it was")
	}
	// A second ingress, one step: the first's control under another name, with one call.
	i := strings.Index(src, "control Ingress(")
	j := strings.Index(src, "control IgDeparser(")
	second := strings.Replace(strings.Replace(src[i:j], "control Ingress(", "control Ingress2(", 1), "s1(); s2(); s3();", "s1();", 1)
	src = src[:j] + second + src[j:]
	src = strings.Replace(src, one, `Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pa;
Pipeline(IgParser(), Ingress2(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pb;
Switch(pa, pb) main;
`, 1)
	c := checkedProgram(t, src)
	es, err := EstimatePipelines(c, Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 {
		t.Fatalf("%d estimates, want 2", len(es))
	}
	for k, want := range []struct {
		name  string
		chain int
	}{{"pa", 3}, {"pb", 1}} {
		if e := es[k]; e.Pipeline != want.name || e.Index != k || e.Chain != want.chain {
			t.Errorf("estimate %d: pipeline %q (index %d), critical path %d; want %q, %d", k, e.Pipeline, e.Index, e.Chain, want.name, want.chain)
		}
	}
	first, err := EstimateProgram(c, Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	if first.Pipeline != "pa" || first.Chain != es[0].Chain || first.LogicalTotal() != es[0].LogicalTotal() {
		t.Errorf("EstimateProgram: pipeline %q, critical path %d, %d logical tables; want pa's %d, %d", first.Pipeline, first.Chain, first.LogicalTotal(), es[0].Chain, es[0].LogicalTotal())
	}
}
