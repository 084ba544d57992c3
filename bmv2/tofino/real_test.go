package tofino

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/testenv"
)

// calibrationPrograms are p4c's own Tofino 1 test programs (p4testgen's, in a p4c checkout) the
// estimate is calibrated on: small ones (one register, one table) to programs built of
// sub-controls with dozens of registers.
var calibrationPrograms = []string{
	"tna_register_action_1.p4",
	"tna_register_action_2.p4",
	"tna_hash_3.p4",
	"tna_table_control_exact.p4",
	"tna_action_profile_1.p4",
	"tna_simple_switch.p4",
	"tofino1_only/nasa_bundle_translator.p4",
	"tofino1_only/switchml.p4",
}

// TestRealTofinoCalibration compiles p4c's Tofino test programs with p4c-barefoot (make
// test-real; NETLOCK_P4C_DIR names the p4c checkout that holds them) and sets the compiler's
// stage count and stateful ALUs beside this package's estimate of the same program (the larger
// of its ingress's and egress's): docs/dataplane.md, "The real compiler", has the table. Every
// program must compile and fit: they are p4c's own tests.
func TestRealTofinoCalibration(t *testing.T) {
	bin := testenv.RealTool(t, "p4c-barefoot")
	root := testenv.OptIn(t, "NETLOCK_P4C_DIR", "a p4c checkout (its p4testgen Tofino programs are the calibration set)")
	dir := filepath.Join(root, "backends", "p4tools", "modules", "testgen", "targets", "tofino", "test", "p4-programs")
	out := t.TempDir()
	var rows, clusters, chains, logical, hashes []string
	for _, p := range calibrationPrograms {
		// One subtest a program: -run 'TestRealTofinoCalibration/tna_' leaves out the two that
		// compile for many minutes.
		t.Run(strings.TrimSuffix(filepath.Base(p), ".p4"), func(t *testing.T) {
			prog := filepath.Join(dir, p)
			c, err := front.LoadOptions(prog, front.Options{IncludeDirs: []string{dir}})
			if err != nil {
				t.Fatal(err)
			}
			est, err := EstimateProgram(c, Tofino1)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Compile(context.Background(), prog, CompileOptions{Compiler: bin, Target: "tofino", Arch: "tna",
				IncludeDirs: append([]string{dir}, testenv.RealToolsIncludes()...), OutDir: filepath.Join(out, strings.ReplaceAll(p, "/", "_"))})
			if err != nil {
				t.Fatal(err)
			}
			u := r.PHVUse
			if len(r.Placement) == 0 {
				t.Errorf("no placement round read from table_summary.log")
			} else {
				got := r.Placement[0].CriticalPath
				chains = append(chains, fmt.Sprintf("| %s | %d | %d | %d | %d |", p, r.Stages, got, est.Chain, est.Chain-got))
				if d := est.Chain - got; d < -1 || d > 1 {
					t.Errorf("table dependency graph: critical path %d stages, the compiler's %d (more than a stage off)", est.Chain, got)
				}
				// Logical tables: the first round's count (the whole program: these compile).
				n, m := r.Placement[0].Tables, est.LogicalTotal()
				logical = append(logical, fmt.Sprintf("| %s | %d | %d | %s |", p, n, m, pctOff(m, n)))
				if d := m - n; d < -max(1, n/10) || d > max(1, n/10) {
					t.Errorf("logical tables: the model's %d, the compiler's %d (more than 10%% or one off)", m, n)
				}
			}
			// Hash distribution (hashdist.go): the units beside the compiler's, and the
			// bound, which must not exceed the stages the compiler placed the program in.
			hd := est.HashDist
			hashes = append(hashes, fmt.Sprintf("| %s | %d | %d | %s | %d | %d |", p, r.HashDist, hd.Units, pctOff(hd.Units, r.HashDist), r.Stages, hd.Bound))
			if hd.Bound > r.Stages {
				t.Errorf("hash distribution: the model's bound %d stages, the compiler placed the program in %d", hd.Bound, r.Stages)
			}
			rows = append(rows, fmt.Sprintf("| %s | %d | %d / %d | %d | %d | %d | %d | %d / %d | %d / %d | %d / %d | %s / %s |", p, r.Stages,
				est.Floor, est.FloorStages, est.Folded, est.Placed, est.SALUs, r.MeterALUs,
				u.FieldBits[0], u.FieldBits[1], u.ContainerBits[0]+u.TagalongBits[0], u.ContainerBits[1]+u.TagalongBits[1],
				est.PHV[0].Bits, est.PHV[1].Bits, pctOff(est.PHV[0].Bits, u.FieldBits[0]), pctOff(est.PHV[1].Bits, u.FieldBits[1])))
			if u.FieldBits[0] == 0 {
				t.Errorf("no PHV allocation read from phv.json")
			}
			sc := r.SuperCluster
			widest := func(g int) int {
				if w := est.PHV[g].Widest; len(w) > 0 {
					return w[0].Fields
				}
				return 1
			}
			clusters = append(clusters, fmt.Sprintf("| %s | %d / %d (%s), headers %d / %d | %d / %d (%s), headers %d / %d | %d / %d, %d / %d |", p,
				sc[0].Bits, est.PHV[0].Cluster.Bits, pctOff(est.PHV[0].Cluster.Bits, sc[0].Bits), len(sc[0].Headers), len(est.PHV[0].Cluster.Headers),
				sc[1].Bits, est.PHV[1].Cluster.Bits, pctOff(est.PHV[1].Cluster.Bits, sc[1].Bits), len(sc[1].Headers), len(est.PHV[1].Cluster.Headers),
				sc[0].Widest, widest(0), sc[1].Widest, widest(1)))
			if sc[0].Bits == 0 {
				t.Errorf("no super clusters read from phv_allocation_0.log")
			}
		})
	}
	t.Logf("\n| program | compiler: stages | estimate: floor / placed | folded | earliest | stateful ALUs (estimate) | meter ALUs (compiler) | PHV field bits allocated, ingress / egress (compiler) | PHV container bits, ingress / egress (compiler) | PHV demand, ingress / egress (estimate) | demand vs fields allocated |\n|---|---|---|---|---|---|---|---|---|---|---|\n%s",
		strings.Join(rows, "\n"))
	t.Logf("\n| program | compiler: stages | compiler: critical path | model: critical path | error |\n|---|---|---|---|---|\n%s",
		strings.Join(chains, "\n"))
	t.Logf("\n| program | compiler: logical tables | model: logical tables | error |\n|---|---|---|---|\n%s",
		strings.Join(logical, "\n"))
	t.Logf("\n| program | compiler: hash distribution units | model: units | error | compiler: stages | model: hash distribution bound |\n|---|---|---|---|---|---|\n%s",
		strings.Join(hashes, "\n"))
	t.Logf("\n| program | largest super cluster, ingress: bits compiler / estimate (error), headers | egress | widest operand cluster, ingress: compiler / estimate, egress (a MAU group holds %d) |\n|---|---|---|---|\n%s", Tofino1.PHV.Group,
		strings.Join(clusters, "\n"))
}

// pctOff says how far est is from the compiler's got, in percent of got.
func pctOff(est, got int) string {
	if got == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", 100*float64(est-got)/float64(got))
}
