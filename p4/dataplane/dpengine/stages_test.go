package dpengine

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/tofino"
	"github.com/netlock-go/netlock/p4/dataplane"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the generated stage tables of docs/dataplane.md")

const docsDataplane = "../../../docs/dataplane.md"

// TestTofinoStages runs the stage analysis (bmv2/tofino) on p4/tna/netlock.p4's ingress for
// Tofino 1 and 2, sized as it compiles for a Tofino (dataplane.TofinoSizing, as every Tofino test
// here). It checks that the analysis saw every register action of the program (each
// in its register's node), that the orders the program's structure promises hold (the grant
// counter's high half after its low half, the slot's state after its txn, the lock state
// after lk_q, the lock's entry beside rack and its server after it), that the conclusions of
// docs/dataplane.md ("What this says") hold, and that docs/dataplane.md shows the layouts as
// computed (-update-docs rewrites them).
func TestTofinoStages(t *testing.T) {
	checked, err := CheckProgram(dataplane.TNA, dataplane.TofinoSizing)
	if err != nil {
		t.Fatal(err)
	}
	pipes, err := checked.TNAPipes()
	if err != nil {
		t.Fatal(err)
	}
	actions := registerActions(t)
	for _, res := range []tofino.Resources{tofino.Tofino1, tofino.Tofino2} {
		l, err := tofino.Analyze(pipes[0].Ingress.Control, res)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]string{}
		for _, o := range l.Ops {
			if o.Stage < o.Earliest || o.Earliest < o.Folded || o.Folded < o.Floor || o.AtFloor < o.Floor || o.AtFolded < o.Folded {
				t.Errorf("%s: stage %d, earliest %d, folded %d (placed %d), floor %d (placed %d)", o.Name, o.Stage, o.Earliest,
					o.Folded, o.AtFolded, o.Floor, o.AtFloor)
			}
			for _, a := range o.Actions {
				seen[a] = o.Name
			}
		}
		for ra, r := range actions {
			if seen[ra] != r {
				t.Errorf("register action %s of %s: in the analysis as %q", ra, r, seen[ra])
			}
		}
		after := func(a, b string) {
			t.Helper()
			x, y := l.Op(a), l.Op(b)
			if x == nil || y == nil {
				t.Fatalf("%s or %s not in the layout", a, b)
			}
			if !(x.Floor > y.Floor && x.Stage > y.Stage && x.AtFloor > y.AtFloor) {
				t.Errorf("%s (floor %d, stage %d, at floor %d) is not after %s (floor %d, stage %d, at floor %d)",
					a, x.Floor, x.Stage, x.AtFloor, b, y.Floor, y.Stage, y.AtFloor)
			}
		}
		after("lk_tok_hi", "lk_tok")
		after("s_hold", "s_txn_hi")
		after("s_flags", "s_hold")
		after("lk_state", "lk_q")
		after("lk_q", "tenant_meter")
		after("lock_servers", "lock_table")
		if x, y := l.Op("lock_table"), l.Op("rack"); x.Floor != y.Floor || x.AtFloor != y.AtFloor {
			t.Errorf("lock_table (floor %d, at floor %d) is not beside rack (floor %d, at floor %d)", x.Floor, x.AtFloor, y.Floor, y.AtFloor)
		}

		// What docs/dataplane.md concludes ("What this says"): counting operations only, the
		// program fits a pipe of either generation, placed under the stateful ALUs and SRAM
		// of each stage, with the pipe's stateful ALUs and SRAM to spare; with its decisions
		// folded it fits Tofino 2 but not Tofino 1's 12 stages (the op codes that choose among
		// merged register actions are apply-body inputs: bf-p4c allows four register actions
		// per register); counting every computing assignment as a stage of its own, it fits
		// neither.
		if l.Floor > res.Stages || l.FloorStages > res.Stages {
			t.Errorf("%s: floor %d, %d stages placed at the floor: docs/dataplane.md says it fits; update it", res.Name, l.Floor, l.FloorStages)
		}
		if l.SALUs > res.Stages*res.SALUs || l.Blocks > res.Stages*res.SRAMBlocks {
			t.Errorf("%s: %d stateful ALUs, %d SRAM blocks: docs/dataplane.md says they fit; update it", res.Name, l.SALUs, l.Blocks)
		}
		if fits := l.FoldedDepth <= res.Stages && l.FoldedStages <= res.Stages; fits != (res.Stages > tofino.Tofino1.Stages) {
			t.Errorf("%s: %d stages with decisions folded (%d placed): docs/dataplane.md says that fits Tofino 2 only; update it",
				res.Name, l.FoldedDepth, l.FoldedStages)
		}
		if l.Depth <= res.Stages {
			t.Errorf("%s: %d stages counting assignments: docs/dataplane.md says that exceeds the pipe; update it", res.Name, l.Depth)
		}
		docSection(t, "tofino-stages "+res.Name, l.Markdown(),
			res.Name+" stage table is not the analysis's (go test ./p4/dataplane/dpengine -run TestTofinoStages -update-docs)")
	}
	// The smaller build docs/dataplane.md offers in case bf-p4c allows fewer RAMs in one
	// stateful table (NETLOCK_PART_BITS=14: every pool array halved) fits as well.
	small := dataplane.DefaultSizing
	small.PartBits = 14
	sc, err := CheckProgram(dataplane.TNA, small)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := sc.TNAPipes()
	if err != nil {
		t.Fatal(err)
	}
	if l, err := tofino.Analyze(sp[0].Ingress.Control, tofino.Tofino1); err != nil || l.FloorStages > tofino.Tofino1.Stages {
		t.Errorf("NETLOCK_PART_BITS=14: %v", err)
		if l != nil {
			t.Errorf("%d stages placed at the floor, %d with decisions folded:\n%s", l.FloorStages, l.FoldedStages, l.Markdown())
		}
	}
	// The egress places nothing: it writes answers from headers.
	l, err := tofino.Analyze(pipes[0].Egress.Control, tofino.Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Ops) != 0 {
		var names []string
		for _, o := range l.Ops {
			names = append(names, o.Name)
		}
		slices.Sort(names)
		t.Errorf("the egress uses tables or registers now: %v (docs/dataplane.md says it does not)", names)
	}
}

// TestTofinoStagesFollowData is the analysis's negative control: its stages come from the
// data, not from the order of the source. In the program the high half of the grant counter
// waits for the low half (the carry: tok_hi_op's key); a copy whose table keys a packet field
// instead must get lk_tok_hi placed beside lk_tok, one stage earlier, though its table is
// still applied after. (A register used at two places of a pass is refused by the engine before any layout:
// TestTNARulesRefuseTwoActions; bmv2/tofino's TestStagesCycle shows the analysis refusing the
// dependency cycle such a program would make.)
func TestTofinoStagesFollowData(t *testing.T) {
	layout := func(src string) *tofino.Layout {
		t.Helper()
		s := dataplane.Sizing{Locks: 8, PartBits: 6}
		checked, err := checkSource(dataplane.TNA, s, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		pipes, err := checked.TNAPipes()
		if err != nil {
			t.Fatal(err)
		}
		l, err := tofino.Analyze(pipes[0].Ingress.Control, tofino.Tofino2)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	src := string(dataplane.TNA.Source)
	// tok_hi_op's carry: its key on the low half as tok_op read it, in the copy a packet field
	from := `            meta.tok_lo        : ternary @name("tok_lo");`
	to := `            hdr.nl.lock        : ternary @name("tok_lo");`
	if strings.Count(src, from) != 1 {
		t.Fatalf("%q is not in p4/%s once: update the test", from, dataplane.TNA.File)
	}
	mutant := strings.Replace(src, from, to, 1)
	if err := loadCopy(mutant); err != nil {
		t.Fatal(err)
	}
	a, b := layout(src), layout(mutant)
	lo, hi := a.Op("lk_tok"), a.Op("lk_tok_hi")
	if hi.Floor != lo.Floor+1 {
		t.Fatalf("program: lk_tok floor %d, lk_tok_hi floor %d", lo.Floor, hi.Floor)
	}
	lo, hi = b.Op("lk_tok"), b.Op("lk_tok_hi")
	if hi.Floor != lo.Floor {
		t.Errorf("without the carry: lk_tok floor %d, lk_tok_hi floor %d, want equal", lo.Floor, hi.Floor)
	}
}

// TestTofinoPHV counts the PHV demand of p4/tna/netlock.p4 (bmv2/tofino.GressPHV: every field
// each gress uses, before the compiler overlays any), checks what docs/dataplane.md concludes
// from it (the ingress's control alone uses more than the PHV Tofino 1's stages reach, and less
// than Tofino 2's: on Tofino 1 the compiler must overlay fields to allocate it) and that the document shows the figures as computed
// (-update-docs rewrites them).
func TestTofinoPHV(t *testing.T) {
	est := tofino1Estimate(t)
	ig, eg := est.PHV[0], est.PHV[1]
	t1, t2 := tofino.Tofino1PHV, tofino.Tofino2PHV
	if ig.MAUBits <= t1.MAU || ig.MAUBits > t2.MAU {
		t.Errorf("ingress %v: docs/dataplane.md says its control uses more than the %d bits Tofino 1's stages reach and less than Tofino 2's %d; update it",
			ig, t1.MAU, t2.MAU)
	}
	// The compiler allocated the program's PHV only once no cluster of operands was wider
	// than a MAU group (docs/dataplane.md, "The real compiler"); a rewrite that ties more
	// fields into one (an add of two PHV fields that were each added to action data before)
	// is refused here, before a 20-minute compile finds it.
	for _, d := range []tofino.PHVDemand{ig, eg} {
		for _, w := range d.Widest {
			if w.Fields > t1.Group {
				t.Errorf("a cluster of %d operands, wider than a MAU group's %d containers: %v", w.Fields, t1.Group, w)
			}
		}
	}
	row := func(name string, d tofino.PHVDemand) string {
		roots := d.Roots()
		if len(roots) > 8 {
			roots = append(roots[:8], "...")
		}
		var wide []string
		for _, w := range d.Widest {
			if w.Fields > t1.Group {
				wide = append(wide, strconv.Itoa(w.Fields))
			}
		}
		if len(wide) == 0 {
			wide = append(wide, "none")
		}
		return fmt.Sprintf("| %s | %d | %d | %d | %s | %d bits, %d fields, %d headers | %s |\n", name, d.Bits, d.MAUBits, d.Fields,
			strings.Join(roots, ", "), d.Cluster.Bits, d.Cluster.Fields, len(d.Cluster.Headers), strings.Join(wide, ", "))
	}
	want := "| gress | bits | by the control | fields | largest parts (bits) | largest super cluster | operand clusters wider than a MAU group (fields) |\n|---|---|---|---|---|---|---|\n" +
		row("ingress", ig) + row("egress", eg) +
		fmt.Sprintf("| both | %d | %d | %d | Tofino 1: %d bits the stages reach + %d tagalong; Tofino 2: %d | | a group: %d containers of a size |\n",
			ig.Bits+eg.Bits, ig.MAUBits+eg.MAUBits, ig.Fields+eg.Fields, t1.MAU, t1.Tagalong, t2.MAU, t1.Group)
	docSection(t, "tofino-phv", want,
		"PHV table is not the count's (go test ./p4/dataplane/dpengine -run TestTofinoPHV -update-docs)")
}

// TestTofinoPassPHV counts the TNA program's ingress PHV demand for each pass type
// (dataplane.TNAPassFlags; PassPHV refuses them if the program no longer sets them exclusively)
// and keeps docs/dataplane.md's table of it: what an allocation that knew the pass types
// exclusive could reach.
func TestTofinoPassPHV(t *testing.T) {
	checked, err := CheckProgram(dataplane.TNA, dataplane.TofinoSizing)
	if err != nil {
		t.Fatal(err)
	}
	passes, err := tofino.IngressPassPHV(checked, dataplane.TNAPassFlags)
	if err != nil {
		t.Fatal(err)
	}
	est, err := tofino.EstimateProgram(checked, tofino.Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("| pass (flag set) | critical path (stages) | bits | by the control | fields |\n|---|---|---|---|---|\n")
	least, most := passes[0], passes[0]
	for _, p := range passes {
		name := "`" + p.Flag + "`"
		if p.Flag == "" {
			name = "none (routing, the admin passes after the first, a bad request)"
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", name, p.Graph.Stages, p.Bits, p.MAUBits, p.Fields)
		if p.Graph.Stages > est.Graphs[0].Stages {
			t.Errorf("pass %q: critical path %d stages, more than the whole ingress's %d", p.Flag, p.Graph.Stages, est.Graphs[0].Stages)
		}
		if p.MAUBits < least.MAUBits {
			least = p
		}
		if p.MAUBits > most.MAUBits {
			most = p
		}
		if p.Bits > est.PHV[0].Bits {
			t.Errorf("pass %q: %d bits, more than the whole ingress's %d", p.Flag, p.Bits, est.PHV[0].Bits)
		}
	}
	fmt.Fprintf(&b, "| whole ingress | %d | %d | %d | %d |\n", est.Graphs[0].Stages, est.PHV[0].Bits, est.PHV[0].MAUBits, est.PHV[0].Fields)
	// docs/dataplane.md ("Where it stands") says the modelled critical path fits Tofino 2's
	// pipe: a rewrite that lengthens it past that is refused here (the model, not the
	// compiler: the compile is make test-real's).
	if est.Graphs[0].Stages > tofino.Tofino2.Stages {
		t.Errorf("the ingress's critical path by the model is %d stages, more than Tofino 2's %d: docs/dataplane.md says it fits; shorten it or update the docs",
			est.Graphs[0].Stages, tofino.Tofino2.Stages)
	}
	// The ingress gets 3200 of Tofino 1's MAU container bits: groups 0 of each size are
	// ingress-only and groups 1 egress-only (bf-p4c's specs/phv_spec.cpp, docs/dataplane.md).
	const ingressBits = tofino1IngressBits
	if least.MAUBits <= ingressBits {
		t.Errorf("pass %q's control uses %d bits, within the %d the ingress gets: docs/dataplane.md says every pass exceeds it; update it",
			least.Flag, least.MAUBits, ingressBits)
	}
	docSection(t, "tofino-pass-phv", b.String(),
		"pass PHV table is not the count's (go test ./p4/dataplane/dpengine -run TestTofinoPassPHV -update-docs)")
}

// tofino1IngressBits are the MAU container bits bf-p4c gives a Tofino 1 ingress: all but the
// egress-only group of each size (4 x 16 x 8 + 6 x 16 x 16 + 4 x 16 x 32, less one group each).
const tofino1IngressBits = 3*16*8 + 5*16*16 + 3*16*32

// docSection checks that docs/dataplane.md's section between "<!-- name -->" and
// "<!-- end name -->" is want, and rewrites it with -update-docs; stale says what is wrong and
// how to mend it.
func docSection(t *testing.T, name, want, stale string) {
	t.Helper()
	doc, err := os.ReadFile(docsDataplane)
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	begin, end := "<!-- "+name+" -->\n", "<!-- end "+name+" -->"
	i, j := strings.Index(text, begin), strings.Index(text, end)
	if i < 0 || j < i {
		t.Fatalf("docs/dataplane.md has no %q ... %q section", begin, end)
	}
	if text[i+len(begin):j] == want {
		return
	}
	if !*updateDocs {
		t.Errorf("docs/dataplane.md's %s:\n%s", stale, want)
		return
	}
	if err := os.WriteFile(docsDataplane, []byte(text[:i+len(begin)]+want+text[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTofinoGateways: bmv2/tofino.Gateways reports no if condition of the TNA program, as
// bf-p4c 9.13.4 refused none since 768506b (docs/dataplane.md, "The real compiler"); a
// condition put back as it was before b456482 (a 64-bit equality, which the compiler refused
// then: "limit of 4 bytes + 12 bits of PHV input exceeded") is reported. What a gateway cannot
// evaluate at any width the front end refuses (bmv2/front's TestTNAGatewayConditions); the
// layout's cases are TestGateways' (bmv2/tofino), each the compiler's verdict.
func TestTofinoGateways(t *testing.T) {
	for _, g := range tofino1Estimate(t).Gateways {
		t.Errorf("the estimate reports %v, which the compiler took", g)
	}
	// (The timestamp is req_flags' key now; the test is added after it.)
	const site = "        req_flags.apply();"
	const whole = "\n        if (hdr.nl.ts != 0) { has_ts = 1; }"
	src := strings.Replace(string(dataplane.TNA.Source), site, site+whole, 1)
	if src == string(dataplane.TNA.Source) {
		t.Fatalf("the program no longer has %q", site)
	}
	prog := dataplane.TNA
	prog.Source = []byte(src)
	checked, err := CheckProgram(prog, dataplane.TofinoSizing)
	if err != nil {
		t.Fatal(err)
	}
	est, err := tofino.EstimateProgram(checked, tofino.Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	if len(est.Gateways) != 1 || !strings.Contains(est.Gateways[0].Cond, "hdr.nl.ts != 0") {
		t.Errorf("with the timestamp's 64-bit test: %v, want it reported", est.Gateways)
	}
}

// tofino1Estimate is bmv2/tofino's estimate of the TNA program at dataplane.TofinoSizing on
// Tofino 1.
func tofino1Estimate(t *testing.T) *tofino.ProgramEstimate {
	t.Helper()
	checked, err := CheckProgram(dataplane.TNA, dataplane.TofinoSizing)
	if err != nil {
		t.Fatal(err)
	}
	est, err := tofino.EstimateProgram(checked, tofino.Tofino1)
	if err != nil {
		t.Fatal(err)
	}
	return est
}
