package dataplane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/tofino"
	"github.com/netlock-go/netlock/internal/testenv"
)

// foldHalves cuts the TNA program's ingress apply block into the two halves of the Tofino 1
// fold (docs/dataplane.md, "Where it stands", Tofino 1), each the whole ingress of a program
// whose declarations are the program's: a, the classification, the slot pool, ended, lk_buf
// and the routed packets' block; b, the tenant meter, the per-lock counters and the decisions
// to the end (out_pick), with the #defines of a's part that b's conditions use. The cuts are
// the program's section comments. Neither half is a working program: b reads what a would
// bridge to it, here fields no table of b writes (the compiler cannot fold them away: a
// metadata field is the parser's, and a local is uninitialized). They measure what the
// compiler makes of each half's tables.
func foldHalves(src string) (a, b string, err error) {
	lines := strings.Split(src, "\n")
	find := func(from int, mark string) (int, error) {
		for i := from; i < len(lines); i++ {
			if strings.Contains(lines[i], mark) {
				return i, nil
			}
		}
		return 0, fmt.Errorf("no line with %q after line %d", mark, from+1)
	}
	ctl, err := find(0, "control NetlockIngress(")
	if err != nil {
		return "", "", err
	}
	apply, err := find(ctl, "    apply {")
	if err != nil {
		return "", "", err
	}
	var cut [4]int // the tenant meter, the routed block, the decisions, the ingress deparser
	for i, mark := range []string{"stage: the tenant meter", "a packet routed through (kind K_ROUTE)", "=== decisions ===", "control NetlockIngressDeparser("} {
		from := apply
		if i > 0 {
			from = cut[i-1]
		}
		if cut[i], err = find(from, mark); err != nil {
			return "", "", err
		}
	}
	end := cut[3] - 1
	for end > cut[2] && lines[end] != "    }" {
		end--
	}
	if end == cut[2] {
		return "", "", fmt.Errorf("the ingress's apply block does not end before line %d", cut[3]+1)
	}
	head, tail := lines[:apply+1], lines[end:]
	var defs []string
	for _, l := range lines[apply+1 : cut[0]] {
		if strings.HasPrefix(strings.TrimSpace(l), "#define") {
			defs = append(defs, l)
		}
	}
	join := func(parts ...[]string) string {
		var all []string
		for _, p := range parts {
			all = append(all, p...)
		}
		return strings.Join(all, "\n")
	}
	a = join(head, lines[apply+1:cut[0]], lines[cut[1]:cut[2]], tail)
	// b has no classification: the phase's local (ph) is the metadata it copies.
	ph := regexp.MustCompile(`\bph\b`)
	var bBody []string
	for _, l := range append(append([]string{}, lines[cut[0]:cut[1]]...), lines[cut[2]:end]...) {
		bBody = append(bBody, ph.ReplaceAllString(l, "meta.phase"))
	}
	b = join(head, defs, bBody, tail)
	return a, b, nil
}

func TestFoldHalves(t *testing.T) {
	a, b, err := foldHalves(string(TNA.Source))
	if err != nil {
		t.Fatal(err)
	}
	// Each register and table of the ingress in one half, as its first use.
	for _, c := range []struct {
		use  string
		a, b bool
	}{
		{"lock_table.apply()", true, false},
		{"hold_op.apply()", true, false},
		{"buf_op.apply()", true, false},
		{"tenant_quota.apply()", false, true},
		{"head_op.apply()", false, true},
		{"state_op.apply()", false, true},
		{"next_step.apply()", false, true},
		{"out_pick.apply()", false, true},
	} {
		if strings.Contains(a, c.use) != c.a || strings.Contains(b, c.use) != c.b {
			t.Errorf("%s: in a %v, in b %v; want %v, %v", c.use, strings.Contains(a, c.use), strings.Contains(b, c.use), c.a, c.b)
		}
	}
	if _, _, err := foldHalves("control NetlockIngress() { apply {\n}\n}"); err == nil {
		t.Error("a program without the section comments was cut")
	}
}

// TestRealTofinoFoldTrial compiles the two halves of the Tofino 1 fold (foldHalves) for
// Tofino 1 with p4c-barefoot (make test-real), logs the compiler's stages, logical tables,
// critical path and resources for each, and fails when a half does not compile or places its
// tables in more stages than a pipe has (both fit on 2026-12-01: docs/dataplane.md, "Where it
// stands").
func TestRealTofinoFoldTrial(t *testing.T) {
	bin := testenv.RealTool(t, "p4c-barefoot")
	a, b, err := foldHalves(string(TNA.Source))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, half := range []struct{ name, src string }{{"a", a}, {"b", b}} {
		t.Run(half.name, func(t *testing.T) {
			src := filepath.Join(dir, "fold_"+half.name+".p4")
			if err := os.WriteFile(src, []byte(half.src), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := tofino.Compile(context.Background(), src, tofino.CompileOptions{
				Compiler: bin, Target: "tofino", Arch: "tna", Defines: TofinoSizing.Defines(),
				IncludeDirs: testenv.RealToolsIncludes(), OutDir: filepath.Join(dir, half.name),
				Flags: []string{"--alt-phv-alloc"},
			})
			if r != nil {
				for _, p := range r.Placement {
					t.Logf("half %s: table placement (%s): %d stages (ingress %d), %d tables; critical path %d",
						half.name, p.State, p.Stages, p.GressStages[0], p.Tables, p.CriticalPath)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("half %s: %d stages of %d, SRAM %d, TCAM %d, stateful ALUs %d, hash distribution units %d, logical tables %d; PHV containers %d / %d bits the stages reach (ingress / egress)",
				half.name, r.Stages, r.AvailableStages, r.SRAMs, r.TCAMs, r.MeterALUs, r.HashDist, r.LogicalTables, r.PHVUse.ContainerBits[0], r.PHVUse.ContainerBits[1])
			if r.Stages > r.AvailableStages {
				t.Errorf("half %s: %d stages placed, the pipe has %d", half.name, r.Stages, r.AvailableStages)
			}
		})
	}
}
