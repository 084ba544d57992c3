package testbed

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/wire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParsePhase(t *testing.T) {
	for _, tc := range []struct {
		in         string
		warehouses int
		pool       int
		err        bool
	}{
		{in: "shared"}, {in: "exclusive"}, {in: "contended/16", pool: 16}, {in: "tpcc-high", warehouses: 3},
		{in: "tpcc-low", warehouses: 30}, {in: "contended/0", err: true}, {in: "tpcc", err: true},
	} {
		s, err := parsePhase(tc.in, 3)
		if (err != nil) != tc.err || (err == nil && (s.warehouses != tc.warehouses || s.pool != tc.pool)) {
			t.Errorf("parsePhase(%q) = %+v, %v", tc.in, s, err)
		}
	}
}

func TestTPCCLockSets(t *testing.T) {
	g := newTPCCGen(7, 4)
	kinds := map[string]int{}
	var locks []client.LockSpec
	for i := 0; i < 5000; i++ {
		var kind string
		locks, kind = g.next(locks)
		kinds[kind]++
		w := locks[0].Lock >> 22 & 0x7f
		if locks[0].Lock>>29 != tableWarehouse || w >= 4 {
			t.Fatalf("%s: first lock %#x is not a warehouse below 4", kind, locks[0].Lock)
		}
		switch kind {
		case "neworder":
			seen := map[uint32]bool{}
			for _, l := range locks {
				if seen[l.Lock] {
					t.Fatalf("neworder names lock %#x twice", l.Lock)
				}
				seen[l.Lock] = true
			}
			if n := len(locks); n < 3+5 || n > 3+15 || locks[0].Mode != wire.Shared {
				t.Fatalf("neworder with %d locks, warehouse mode %s", n, locks[0].Mode)
			}
			for _, l := range locks[3:] {
				if l.Lock>>29 != tableStock || l.Mode != wire.Exclusive || l.Lock&(1<<22-1) >= items {
					t.Fatalf("neworder stock lock %#x %s", l.Lock, l.Mode)
				}
			}
		case "payment":
			if len(locks) != 3 || slices.ContainsFunc(locks, func(l client.LockSpec) bool { return l.Mode != wire.Exclusive }) {
				t.Fatalf("payment locks %v", locks)
			}
		default:
			t.Fatalf("kind %q", kind)
		}
	}
	// 45:43 renormalised: NewOrder a little over half.
	if f := float64(kinds["neworder"]) / 5000; f < 0.47 || f > 0.55 {
		t.Fatalf("neworder fraction %.3f, want about 0.51", f)
	}
}

// TestDemoRuns runs every phase briefly against real servers over loopback UDP and checks that each
// phase committed transactions and that the grants add up.
func TestDemoRuns(t *testing.T) {
	var progress strings.Builder
	rep, err := Run(context.Background(), Config{Duration: 150 * time.Millisecond, Clients: 2, Workers: 2,
		Progress: &progress})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Phases) != len(DefaultPhases) {
		t.Fatalf("%d phases, want %d", len(rep.Phases), len(DefaultPhases))
	}
	for _, p := range rep.Phases {
		var grants uint64
		for _, g := range p.Grants {
			grants += g
		}
		if p.Txns == 0 || grants < p.LockOps {
			t.Errorf("phase %s: %d txns, %d lock acquires, %d grants", p.Name, p.Txns, p.LockOps, grants)
		}
		if p.Errors != 0 || p.Rejects != 0 {
			t.Errorf("phase %s: %d errors, %d rejects", p.Name, p.Errors, p.Rejects)
		}
	}
	if crash := rep.Phases[len(rep.Phases)-1]; crash.Name != PhaseCrash || crash.Expiries != crashLocks {
		t.Errorf("crash phase: %d lease expiries, want %d (every lock of the crashed holder)", crash.Expiries, crashLocks)
	}
	if !strings.Contains(progress.String(), "tpcc-low") {
		t.Errorf("no progress line for tpcc-low in %q", progress.String())
	}
	var table strings.Builder
	rep.WriteTable(&table)
	if !strings.Contains(table.String(), "contended/1") {
		t.Errorf("table lacks a phase:\n%s", table.String())
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{{Clients: 50}, {Workers: -1}, {Phases: []string{"nope"}}, {Servers: 17}} {
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run accepted %+v", c)
		}
	}
}
