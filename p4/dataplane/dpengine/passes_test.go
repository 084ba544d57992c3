package dpengine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// passStats are the ingress passes of one kind of input, and those of them in pipe 1.
type passStats struct{ n, sum, min, max, pipe1 int }

func (p *passStats) add(k, pipe1 int) {
	if p.n == 0 || k < p.min {
		p.min = k
	}
	p.max = max(p.max, k)
	p.n++
	p.sum += k
	p.pipe1 += pipe1
}

func (p passStats) String() string {
	if p.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d / %.2f / %d", p.min, float64(p.sum)/float64(p.n), p.max)
}

// TestPassesPerOperation measures the ingress passes (engine.Config.OnIngress) each kind of
// input takes in the programs, on the differential test's sequences (seeds 1-40 of each
// configuration, the same inputs for each: TestProgramsAgree's run), plus admin requests, and
// checks the table in docs/dataplane.md (-update-docs rewrites it): the v1model program, the
// TNA program of one Pipeline, and the Tofino 1 fold, whose passes are those of both pipes
// (half a's in pipe 0; half b's, and the first pass of the controller's packets, in pipe 1).
// It also checks what the docs say: an acquire takes at most one pass more in the TNA program
// than in the v1model program, and the fold runs each pass of the TNA program as one in each
// pipe, the controller's packet's first pass (the packet-out, which applies no table) aside.
func TestPassesPerOperation(t *testing.T) {
	if raceDetector {
		t.Skip("measures passes only without the race detector (the table is the same)")
	}
	rigCountPasses = true
	defer func() { rigCountPasses = false }()
	stats := map[string]*[3]passStats{}
	var kinds []string
	record := func(i int) func(string, int, int) {
		return func(label string, n, pipe1 int) {
			s := stats[label]
			if s == nil {
				s = &[3]passStats{}
				stats[label] = s
				kinds = append(kinds, label)
			}
			s[i].add(n, pipe1)
		}
	}
	for _, rules := range diffConfigs {
		a := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
		b := newDiffSwitch(t, dataplane.TNA, rules, nil, engine.PipelineInterpreted)
		a2 := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
		f := newDiffSwitch(t, dataplane.TNAFold, rules, nil, engine.PipelineInterpreted)
		a.onInput, b.onInput, f.onInput = record(0), record(1), record(2)
		for seed := uint64(1); seed <= 40; seed++ {
			runDiff(t, a, b, rules, seed)
			runDiff(t, a2, f, rules, seed) // the same inputs (a2 is a's twin)
		}
		// Admin requests on a lock with a holder and a waiter.
		for i, r := range []*rig{a, b, f} {
			r.onInput = nil
			c := clientAddr(1)
			for txn := uint64(1); txn <= 2; txn++ {
				r.send(1, c, serverAddr(diffQ2Server), &wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 0, Txn: 1000 + txn}, nil)
			}
			r.onInput = record(i)
			for _, req := range []dataplane.AdminRequest{
				{Op: wire.AdminSwitchProbe, Lock: 0}, {Op: wire.AdminSwitchProbe, Lock: 0, Offset: 1},
				{Op: wire.AdminSwitchTokenBase, Lock: 0, Value: 1 << 20}, {Op: wire.AdminSwitchGetCookie},
				{Op: wire.AdminSwitchSetCookie, Value: 7}, {Op: wire.AdminSwitchSetBuffered, Lock: 0},
				{Op: wire.AdminSwitchReset, Lock: 0},
			} {
				r.admin(&req)
			}
		}
	}
	slices.Sort(kinds)
	var b strings.Builder
	b.WriteString("| input | v1model: min / mean / max | TNA: min / mean / max | TNA fold: min / mean / max | fold: mean in pipe 1 | inputs |\n|---|---|---|---|---:|---:|\n")
	for _, k := range kinds {
		s := stats[k]
		name := k
		admin := false
		if n, ok := strings.CutPrefix(k, "admin "); ok {
			name, admin = "admin "+adminName(n), true
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f | %d |\n", name, s[0], s[1], s[2], float64(s[2].pipe1)/float64(max(s[2].n, 1)), s[0].n)
		if s[0].n != s[1].n || s[0].n != s[2].n {
			t.Errorf("%s: %d, %d and %d inputs to the v1model program, the TNA program and the fold", k, s[0].n, s[1].n, s[2].n)
		}
		// The fold: each TNA pass is a pass in pipe 0 and one in pipe 1, except the first pass
		// of the controller's packets, which enter on the CPU port (255: pipe 1 on the fold)
		// and are recirculated into pipe 0 (through port 68) without applying a table.
		out := 0
		if admin {
			out = s[2].n
		}
		if s[2].sum != 2*s[1].sum-out || s[2].pipe1 != s[1].sum {
			t.Errorf("%s: the fold took %d passes (%d in pipe 1) where the TNA program took %d", k, s[2].sum, s[2].pipe1, s[1].sum)
		}
	}
	if s := stats["acquire"]; s == nil || s[1].max > s[0].max+1 || s[0].n < 100 {
		t.Errorf("acquires: %v", s)
	}
	docSection(t, "passes", b.String(),
		"passes table is not the measurement's (go test ./p4/dataplane/dpengine -run TestPassesPerOperation -update-docs)")
}

func adminName(op string) string {
	var n int
	fmt.Sscan(op, &n)
	switch wire.Status(n) {
	case wire.AdminSwitchProbe:
		return "probe"
	case wire.AdminSwitchReset:
		return "reset"
	case wire.AdminSwitchForceRelease:
		return "force-release"
	case wire.AdminSwitchTokenBase:
		return "token base"
	case wire.AdminSwitchGetCookie:
		return "get cookie"
	case wire.AdminSwitchSetCookie:
		return "set cookie"
	case wire.AdminSwitchSetBuffered:
		return "set buffered"
	}
	return op
}
