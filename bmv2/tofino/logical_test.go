package tofino

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/testenv"
)

// logicalCases are small ingress controls and their logical tables: tables, and gateways that
// merge with none (Graph.LogicalTables). TestRealLogicalTables compiles them and checks the
// sum against the compiler's (table_summary.log, "Number of tables allocated").
var logicalCases = []struct {
	name             string
	body             string
	tables, gateways int
}{
	// A gateway merges with the one table of its branch.
	{name: "gateway_merges", tables: 1, gateways: 0, body: `
        if (hdr.ethernet.dst[15:0] == 0) { hdr.ethernet.ether_type = 1; }`},
	// Each gateway of an else-if chain merges with its then branch's table.
	{name: "else_if_chain", tables: 3, gateways: 0, body: `
        if (hdr.ethernet.dst[15:0] == 0) { hdr.ethernet.ether_type = 1; }
        else if (hdr.ethernet.dst[15:0] == 1) { hdr.ethernet.ether_type = 2; }
        else { hdr.ethernet.ether_type = 3; }`},
	// The outer if's branch holds only an if: no table to merge with.
	{name: "nested_if", tables: 1, gateways: 1, body: `
        if (hdr.ethernet.dst[15:0] == 0) {
            if (hdr.ethernet.src[15:0] == 0) { hdr.ethernet.ether_type = 1; }
        }`},
	// The outer branch's table waits for the one under the nested if (it reads what that
	// writes): ordered in the branch, it cannot take the gateway.
	{name: "ordered_in_branch", tables: 2, gateways: 1, body: `
        if (hdr.ethernet.dst[15:0] == 0) {
            if (hdr.ethernet.src[15:0] == 0) { hdr.ethernet.src[31:16] = 1; }
            hdr.ethernet.ether_type = hdr.ethernet.src[31:16];
        }`},
	// The same with a table that does not wait: it takes the gateway.
	{name: "unordered_in_branch", tables: 2, gateways: 0, body: `
        if (hdr.ethernet.dst[15:0] == 0) {
            if (hdr.ethernet.src[15:0] == 0) { hdr.ethernet.src[31:16] = 1; }
            hdr.ethernet.ether_type = 2;
        }`},
	// Two runs of statements (the second reads what the first writes): two tables; the first
	// takes the gateway.
	{name: "two_runs", tables: 2, gateways: 0, body: `
        if (hdr.ethernet.dst[15:0] == 0) {
            hdr.ethernet.src[15:0] = 1;
            hdr.ethernet.ether_type = hdr.ethernet.src[15:0];
        }`},
}

func TestLogicalTables(t *testing.T) {
	for _, tc := range logicalCases {
		t.Run(tc.name, func(t *testing.T) {
			g, _, _ := ingressGraph(t, "", tc.body)
			tables, gateways := g.LogicalTables()
			if tables != tc.tables || gateways != tc.gateways {
				var names []string
				for _, x := range g.Tables {
					names = append(names, x.Name)
				}
				t.Errorf("%d tables and %d gateways of their own, want %d and %d (graph: %v)", tables, gateways, tc.tables, tc.gateways, names)
			}
		})
	}
}

// TestRealLogicalTables compiles logicalCases with p4c-barefoot (make test-real) and checks the
// model's count against the compiler's first placement round.
func TestRealLogicalTables(t *testing.T) {
	bin := testenv.RealTool(t, "p4c-barefoot")
	dir := t.TempDir()
	for _, tc := range logicalCases {
		t.Run(tc.name, func(t *testing.T) {
			first := firstRound(t, bin, dir, tc.name, "", tc.body)
			if got, want := first.Tables, tc.tables+tc.gateways; got != want {
				t.Errorf("the compiler allocated %d logical tables, the case says %d", got, want)
			}
		})
	}
}

// stageBoundCases are TestStageBound's programs: seventeen tables that depend on nothing (the
// branches of an if-else chain) need two stages of sixteen logical tables; a chain of three
// dependent ones, three; both in one graph: eighteen at stage 0 (two stages), the chain's last
// at stage 2 (three): the larger.
func stageBoundCases() []struct {
	name, body string
	want       int
} {
	var wide, chain strings.Builder
	// An if-else chain: exclusive branches, so no branch's write orders another's.
	for i := 0; i < 17; i++ {
		if i > 0 {
			wide.WriteString("        else ")
		} else {
			wide.WriteString("        ")
		}
		fmt.Fprintf(&wide, "if (hdr.ethernet.ether_type == %d) { hdr.ethernet.src[15:0] = %d; }\n", i, i+1)
	}
	// A chain of three (a slice is its field: the second reads what the first wrote), on
	// fields the wide case does not write.
	chain.WriteString(`
        hdr.ethernet.dst[15:0] = 1;
        hdr.ethernet.dst[31:16] = hdr.ethernet.dst[15:0];
        hdr.ethernet.ether_type = hdr.ethernet.dst[31:16];`)
	return []struct {
		name, body string
		want       int
	}{
		{"wide", wide.String(), 2},
		{"chain", chain.String(), 3},
		{"both", wide.String() + chain.String(), 3},
	}
}

// TestStageBound checks StageBound on stageBoundCases.
func TestStageBound(t *testing.T) {
	for _, tc := range stageBoundCases() {
		t.Run(tc.name, func(t *testing.T) {
			g, _, _ := ingressGraph(t, "", tc.body)
			if got := StageBound(g); got != tc.want {
				tables, gws := g.LogicalTables()
				t.Errorf("StageBound %d, want %d (%d tables, %d gateways, critical path %d)", got, tc.want, tables, gws, g.Stages)
			}
		})
	}
}

// TestRealStageBound compiles stageBoundCases with p4c-barefoot (make test-real): the
// compiler's first placement round takes the case's stages.
func TestRealStageBound(t *testing.T) {
	bin := testenv.RealTool(t, "p4c-barefoot")
	dir := t.TempDir()
	for _, tc := range stageBoundCases() {
		t.Run(tc.name, func(t *testing.T) {
			first := firstRound(t, bin, dir, tc.name, "", tc.body)
			if got := first.Stages; got != tc.want {
				t.Errorf("the compiler placed the case in %d stages, the case says %d", got, tc.want)
			}
		})
	}
}

// firstRound compiles one case's program (program(locals, body)) with p4c-barefoot for Tofino 1
// into dir and returns the compiler's first placement round.
func firstRound(t *testing.T, bin, dir, name, locals, body string) PlacementRound {
	t.Helper()
	return firstRoundSrc(t, bin, dir, name, program(locals, body))
}

// firstRoundSrc compiles the program prog as firstRound does.
func firstRoundSrc(t *testing.T, bin, dir, name, prog string) PlacementRound {
	t.Helper()
	src := filepath.Join(dir, name+".p4")
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Compile(context.Background(), src, CompileOptions{Compiler: bin, Target: "tofino", Arch: "tna",
		IncludeDirs: testenv.RealToolsIncludes(), OutDir: filepath.Join(dir, name)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Placement) == 0 {
		t.Fatalf("no placement round read from table_summary.log")
	}
	return r.Placement[0]
}

// ingressGraph checks program(locals, body) and builds its ingress's table dependency graph; it
// returns the pipe and the checked program too.
func ingressGraph(t *testing.T, locals, body string) (*Graph, *front.TNAPipe, *front.Checked) {
	t.Helper()
	c := checkedProgram(t, program(locals, body))
	p, err := pipeOf(c)
	if err != nil {
		t.Fatal(err)
	}
	g, err := TableGraph(p.Ingress.Control, c.Const)
	if err != nil {
		t.Fatal(err)
	}
	return g, p, c
}
