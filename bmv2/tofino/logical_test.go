package tofino

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
			c := checkedProgram(t, program("", tc.body))
			p, err := pipeOf(c)
			if err != nil {
				t.Fatal(err)
			}
			g, err := TableGraph(p.Ingress.Control, c.Const)
			if err != nil {
				t.Fatal(err)
			}
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
			src := filepath.Join(dir, tc.name+".p4")
			if err := os.WriteFile(src, []byte(program("", tc.body)), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Compile(context.Background(), src, CompileOptions{Compiler: bin, Target: "tofino", Arch: "tna",
				IncludeDirs: testenv.RealToolsIncludes(), OutDir: filepath.Join(dir, tc.name)})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Placement) == 0 {
				t.Fatalf("no placement round read from table_summary.log")
			}
			if got, want := r.Placement[0].Tables, tc.tables+tc.gateways; got != want {
				t.Errorf("the compiler allocated %d logical tables, the case says %d", got, want)
			}
		})
	}
}
