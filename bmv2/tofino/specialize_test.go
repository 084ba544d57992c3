package tofino

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// foldProgram is a TNA program whose ingress takes a constructor parameter bit<2> half and is
// instantiated twice, Ingress(1) in pipe_a and Ingress(2) in pipe_b: its apply block applies
// the table ta under cond1 and executes the register action rg_add (register rg) under cond2.
// ta's action writes meta.b and matches meta.a; rg_add is indexed by meta.a, reads meta.d in
// its apply body and its result goes to meta.c; tc (key meta.e) is applied only where cond2
// names it.
func foldProgram(t *testing.T, cond1, cond2 string) string {
	t.Helper()
	return foldBody(t, `
        if (`+cond1+`) { ta.apply(); }
        if (`+cond2+`) { meta.c = rg_add.execute(meta.a); }`)
}

// foldBody is foldProgram with the ingress's apply body given.
func foldBody(t *testing.T, body string) string {
	t.Helper()
	locals := `
    Register<bit<32>, bit<32>>(1024) rg;
    RegisterAction<bit<32>, bit<32>, bit<32>>(rg) rg_add = {
        void apply(inout bit<32> v, out bit<32> rv) { v = v + meta.d; rv = v; }
    };
    action set_b(bit<32> x) { meta.b = x; }
    table ta { key = { meta.a : exact; } actions = { set_b; } size = 16; }
    table tc { key = { meta.e : exact; } actions = { NoAction; } size = 16; }`
	src := tnaSkeleton(`struct header_t { ethernet_h ethernet; }
struct metadata_t { bit<32> a; bit<32> b; bit<32> c; bit<32> d; bit<16> e; }`, "", "", locals, body, "    apply { }")
	return rewrite(t, src, [][2]string{
		{"inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {", "inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)(bit<2> half) {"},
		{"Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;\nSwitch(pipe) main;",
			"Pipeline(IgParser(), Ingress(1), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe_a;\n" +
				"Pipeline(IgParser(), Ingress(2), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe_b;\n" +
				"Switch(pipe_a, pipe_b) main;"},
	})
}

// rewrite replaces the first occurrence of each pair's first text in src with its second; a
// text src does not hold fails the test.
func rewrite(t *testing.T, src string, pairs [][2]string) string {
	t.Helper()
	for _, r := range pairs {
		if !strings.Contains(src, r[0]) {
			t.Fatalf("the test program has no %q", r[0])
		}
		src = strings.Replace(src, r[0], r[1], 1)
	}
	return src
}

// pipeWant is what one Pipeline of foldProgram holds: the tables and registers PipelineObjects
// lists for its ingress, and of the ingress's estimate the gateways of its table dependency
// graph, its stateful ALUs and the PHV bits its control reads or writes.
type pipeWant struct {
	tables, registers []string
	gateways, salus   int
	mauBits           int
}

// TestSpecialize: each Pipeline of a program that instantiates one ingress with different
// constructor arguments holds only what its argument leaves (Specialize): an if on the
// constructor parameter is its branch taken, and the tables, register actions, registers and
// PHV fields of the other branch count nowhere. The negative control tests a metadata field
// instead: both Pipelines keep both branches.
func TestSpecialize(t *testing.T) {
	ta, rg := []string{"ta"}, []string{"rg"}
	for _, tc := range []struct {
		name         string
		cond1, cond2 string
		a, b         pipeWant
	}{
		// pipe_a: meta.a and meta.b (ta); pipe_b: meta.a, meta.c and meta.d (rg_add); both
		// meta.e (tc, applied nowhere, declared: counted as unfolded)
		{name: "constructor parameter", cond1: "half == 1", cond2: "half == 2",
			a: pipeWant{tables: ta, mauBits: 64 + 16},
			b: pipeWant{registers: rg, salus: 1, mauBits: 96 + 16}},
		{name: "negated, not equal", cond1: "!(half != 1)", cond2: "!(half == 1)",
			a: pipeWant{tables: ta, mauBits: 64 + 16},
			b: pipeWant{registers: rg, salus: 1, mauBits: 96 + 16}},
		// the negative control: nothing decided, both branches under gateways in both
		{name: "metadata field", cond1: "meta.d == 1", cond2: "meta.d == 2",
			a: pipeWant{tables: ta, registers: rg, gateways: 2, salus: 1, mauBits: 128 + 16},
			b: pipeWant{tables: ta, registers: rg, gateways: 2, salus: 1, mauBits: 128 + 16}},
		// half decides an operand: the gateway tests what is left (meta.d), or nothing
		{name: "an operand decided", cond1: "half == 1 && meta.d == 1", cond2: "half == 2 || meta.d == 2",
			a: pipeWant{tables: ta, registers: rg, gateways: 2, salus: 1, mauBits: 128 + 16},
			b: pipeWant{registers: rg, salus: 1, mauBits: 96 + 16}},
		// a table applied in a condition the left operand decides never runs
		{name: "a table in the condition", cond1: "half == 1", cond2: "half == 2 && tc.apply().hit",
			a: pipeWant{tables: ta, mauBits: 64},
			b: pipeWant{tables: []string{"tc"}, registers: rg, salus: 1, mauBits: 96 + 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checkedProgram(t, foldProgram(t, tc.cond1, tc.cond2))
			es, objs := estimateObjects(t, c)
			if len(es) != 2 || len(objs) != 2 {
				t.Fatalf("%d estimates and %d object lists, want 2", len(es), len(objs))
			}
			for k, want := range []pipeWant{tc.a, tc.b} {
				e, o := es[k], objs[k]
				if o.Pipeline != e.Pipeline || o.Pipeline != []string{"pipe_a", "pipe_b"}[k] {
					t.Errorf("pipeline %d: %q and %q", k, o.Pipeline, e.Pipeline)
				}
				if !slices.Equal(o.Tables[0], want.tables) || !slices.Equal(o.Registers[0], want.registers) {
					t.Errorf("%s: tables %q, registers %q; want %q, %q", o.Pipeline, o.Tables[0], o.Registers[0], want.tables, want.registers)
				}
				if len(o.Tables[1])+len(o.Registers[1]) != 0 {
					t.Errorf("%s: the egress holds %q, %q", o.Pipeline, o.Tables[1], o.Registers[1])
				}
				// the graph's tables: the tables applied, one for the register action's statement
				tables := len(want.tables)
				if len(want.registers) > 0 {
					tables++
				}
				gateways := 0
				for _, x := range e.Graphs[0].Tables {
					if x.Kind == TGateway {
						gateways++
					}
					if _, ok := x.match["half"]; ok {
						t.Errorf("%s: %s reads the constructor parameter", o.Pipeline, x.Name)
					}
				}
				if e.Logical[0][0] != tables || gateways != want.gateways || e.SALUs != want.salus || e.PHV[0].MAUBits != want.mauBits {
					t.Errorf("%s: %d tables, %d gateways, %d stateful ALUs, %d PHV bits by the control; want %d, %d, %d, %d",
						o.Pipeline, e.Logical[0][0], gateways, e.SALUs, e.PHV[0].MAUBits, tables, want.gateways, want.salus, want.mauBits)
				}
			}
		})
	}
}

// TestSpecializeNested: an if on the constructor parameter inside one on a field folds in
// place; an outer if left with nothing in either branch goes too (p4c's SimplifyControlFlow).
func TestSpecializeNested(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		gateways   [2]int // pipe_a's and pipe_b's
		tables     [2][]string
	}{
		{name: "else left", body: `
        if (meta.d == 1) { if (half == 2) { ta.apply(); } } else { tc.apply(); }`,
			gateways: [2]int{1, 1}, tables: [2][]string{{"tc"}, {"ta", "tc"}}},
		{name: "nothing left", body: `
        if (meta.d == 1) { if (half == 2) { ta.apply(); } }`,
			gateways: [2]int{0, 1}, tables: [2][]string{nil, {"ta"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := checkedProgram(t, foldBody(t, tc.body))
			es, objs := estimateObjects(t, c)
			for k, e := range es {
				n := 0
				for _, x := range e.Graphs[0].Tables {
					if x.Kind == TGateway {
						n++
					}
				}
				if n != tc.gateways[k] || !slices.Equal(objs[k].Tables[0], tc.tables[k]) {
					t.Errorf("%s: %d gateways, tables %q; want %d, %q", e.Pipeline, n, objs[k].Tables[0], tc.gateways[k], tc.tables[k])
				}
			}
		})
	}
}

// TestSpecializeUnchanged: a control that no constructor argument decides anything of is its
// own specialization (the same declaration, so every figure is as before): a control without
// constructor parameters, and one whose parameter no condition tests.
func TestSpecializeUnchanged(t *testing.T) {
	for _, src := range []string{
		program("", "        if (meta.a == 1) { meta.b = 2; } else { meta.c = 3; }"),
		foldProgram(t, "meta.d == 1", "meta.d == 2"),
	} {
		c := checkedProgram(t, src)
		for _, p := range mustPipes(t, c) {
			for _, b := range p.Blocks() {
				if b.Control != nil && Specialize(b, c.Const) != b.Control {
					t.Errorf("%s: %s specialized to another declaration", p.Name, b.Name())
				}
			}
		}
	}
}

// estimateObjects is c's estimate on Tofino 1 and its Pipelines' objects, each Pipeline's.
func estimateObjects(t *testing.T, c *front.Checked) ([]*ProgramEstimate, []PipeObjects) {
	t.Helper()
	es, err := EstimatePipelines(c, Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := PipelineObjects(c)
	if err != nil {
		t.Fatal(err)
	}
	return es, objs
}

func mustPipes(t *testing.T, c *front.Checked) []*front.TNAPipe {
	t.Helper()
	pipes, err := c.TNAPipes()
	if err != nil {
		t.Fatal(err)
	}
	return pipes
}

// loadNetlock loads p4/tna/netlock.p4 sized as on a Tofino (NETLOCK_PART_BITS 14), with the
// fold (NETLOCK_FOLD 1) or without.
func loadNetlock(t *testing.T, fold bool) *front.Checked {
	t.Helper()
	defs := map[string]string{"NETLOCK_PART_BITS": "14"}
	if fold {
		defs["NETLOCK_FOLD"] = "1"
	}
	c, err := front.LoadOptions(filepath.Join("..", "..", "p4", "tna", "netlock.p4"), front.Options{Defines: defs})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSpecializeTNA: p4/tna/netlock.p4's fold (NETLOCK_FOLD 1) instantiates its ingress with
// half 1 in pipe_a and half 2 in pipe_b, and each Pipeline holds its half's registers: ended
// (half a) in pipe_a, the lock's queue and state (half b) in pipe_b. Without the fold the
// program's controls are their own specialization: its estimate is as it was.
func TestSpecializeTNA(t *testing.T) {
	objs, err := PipelineObjects(loadNetlock(t, true))
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].Pipeline != "pipe_a" || objs[1].Pipeline != "pipe_b" {
		t.Fatalf("pipelines %+v, want pipe_a and pipe_b", objs)
	}
	for _, tc := range []struct {
		pipe      PipeObjects
		has, hasn []string
	}{
		{objs[0], []string{"ended"}, []string{"lk_q", "lk_state"}},
		{objs[1], []string{"lk_q", "lk_state"}, []string{"ended"}},
	} {
		regs := tc.pipe.Registers[0]
		for _, r := range tc.has {
			if !slices.Contains(regs, r) {
				t.Errorf("%s's ingress registers %q: no %s", tc.pipe.Pipeline, regs, r)
			}
		}
		for _, r := range tc.hasn {
			if slices.Contains(regs, r) {
				t.Errorf("%s's ingress registers %q hold %s", tc.pipe.Pipeline, regs, r)
			}
		}
	}
	// The two halves share no table or register of the ingress.
	for _, x := range append(slices.Clone(objs[0].Tables[0]), objs[0].Registers[0]...) {
		if slices.Contains(objs[1].Tables[0], x) || slices.Contains(objs[1].Registers[0], x) {
			t.Errorf("%s in both halves", x)
		}
	}
	c := loadNetlock(t, false)
	for _, p := range mustPipes(t, c) {
		for _, b := range p.Blocks() {
			if b.Control != nil && Specialize(b, c.Const) != b.Control {
				t.Errorf("without the fold, %s is specialized to another declaration", b.Name())
			}
		}
	}
}

// TestSpecializeParser: a parser instantiated with a constructor argument that its start
// state selects on keeps only the states the argument leads to (SpecializeParser), so each
// Pipeline's PHV demand counts the headers its own parser extracts: pipe_a's parser (half 1)
// extracts hdr.a, pipe_b's (half 2) hdr.b, and the deparser emits both. Unspecialized, each
// Pipeline would count both headers.
func TestSpecializeParser(t *testing.T) {
	src := tnaSkeleton(`header a_h { bit<32> x; }
header b_h { bit<64> y; }
struct header_t { ethernet_h ethernet; a_h a; b_h b; }
struct metadata_t { bit<32> m; }`, "", "", "", "", "    apply { }")
	src = rewrite(t, src, [][2]string{
		{`parser IgParser(packet_in pkt, out header_t hdr, out metadata_t meta, out ingress_intrinsic_metadata_t ig_intr_md) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.ethernet); transition accept; }`,
			`parser IgParser(packet_in pkt, out header_t hdr, out metadata_t meta, out ingress_intrinsic_metadata_t ig_intr_md)(bit<2> half) {
    state start { pkt.extract(ig_intr_md); pkt.advance(PORT_METADATA_SIZE); pkt.extract(hdr.ethernet);
        transition select(half) { 2: parse_b; default: parse_a; } }
    state parse_a { pkt.extract(hdr.a); transition accept; }
    state parse_b { pkt.extract(hdr.b); transition accept; }`},
		{"Pipeline(IgParser(), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe;\nSwitch(pipe) main;",
			"Pipeline(IgParser(1), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe_a;\n" +
				"Pipeline(IgParser(2), Ingress(), IgDeparser(), EgParser(), Egress(), EgDeparser()) pipe_b;\n" +
				"Switch(pipe_a, pipe_b) main;"},
	})
	c := checkedProgram(t, src)
	pipes := mustPipes(t, c)
	for i, want := range []struct{ has, hasnt string }{{"header_t.a", "header_t.b"}, {"header_t.b", "header_t.a"}} {
		p := pipes[i]
		ps := SpecializeParser(p.IngressParser, c.Const)
		if len(ps.States) != 2 {
			t.Errorf("%s: %d states, want start and one of parse_a, parse_b", p.Name, len(ps.States))
		}
		d := GressPHV(ps, Specialize(p.Ingress, c.Const), Specialize(p.IngressDeparser, c.Const))
		if d.ByRoot[want.has] == 0 || d.ByRoot[want.hasnt] != 0 {
			t.Errorf("%s: PHV demand by root %v, want %s and not %s", p.Name, d.ByRoot, want.has, want.hasnt)
		}
		if whole := GressPHV(p.IngressParser.Parser, nil, Specialize(p.IngressDeparser, c.Const)); whole.ByRoot[want.hasnt] == 0 {
			t.Errorf("%s: the unspecialized parser counts no %s: the test shows nothing", p.Name, want.hasnt)
		}
	}
	if SpecializeParser(front.Block{Parser: pipes[0].EgressParser.Parser}, c.Const) != pipes[0].EgressParser.Parser {
		t.Error("a parser without constructor parameters is not itself")
	}
}
