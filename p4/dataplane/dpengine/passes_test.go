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

// passStats are the ingress passes of one kind of input.
type passStats struct{ n, sum, min, max int }

func (p *passStats) add(k int) {
	if p.n == 0 || k < p.min {
		p.min = k
	}
	p.max = max(p.max, k)
	p.n++
	p.sum += k
}

func (p passStats) String() string {
	if p.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d / %.2f / %d", p.min, float64(p.sum)/float64(p.n), p.max)
}

// TestPassesPerOperation measures the ingress passes (applications of the rack table, which
// every pass of a netlock packet applies) each kind of input takes in both programs, on the
// differential test's sequences (seeds 1-40 of each configuration, the same inputs for both:
// TestProgramsAgree's run), plus admin requests, and checks the table in docs/dataplane.md
// (-update-docs rewrites it). It also checks what the docs say of the TNA program: an acquire
// takes at most one pass more than in the v1model program.
func TestPassesPerOperation(t *testing.T) {
	if raceDetector {
		t.Skip("measures passes only without the race detector (the table is the same)")
	}
	rigCountPasses = true
	defer func() { rigCountPasses = false }()
	stats := map[string]*[2]passStats{}
	var kinds []string
	record := func(i int) func(string, int) {
		return func(label string, n int) {
			s := stats[label]
			if s == nil {
				s = &[2]passStats{}
				stats[label] = s
				kinds = append(kinds, label)
			}
			s[i].add(n)
		}
	}
	for _, rules := range diffConfigs {
		a := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
		b := newDiffSwitch(t, dataplane.TNA, rules, nil, engine.PipelineInterpreted)
		a.onInput, b.onInput = record(0), record(1)
		for seed := uint64(1); seed <= 40; seed++ {
			runDiff(t, a, b, rules, seed)
		}
		// Admin requests on a lock with a holder and a waiter.
		for i, r := range []*rig{a, b} {
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
	b.WriteString("| input | v1model: min / mean / max | TNA: min / mean / max | inputs |\n|---|---|---|---:|\n")
	for _, k := range kinds {
		s := stats[k]
		name := k
		if n, ok := strings.CutPrefix(k, "admin "); ok {
			name = "admin " + adminName(n)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", name, s[0], s[1], s[0].n)
		if s[0].n != s[1].n {
			t.Errorf("%s: %d inputs to the v1model program, %d to the TNA program", k, s[0].n, s[1].n)
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
