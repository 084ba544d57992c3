package citron

import (
	"fmt"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// counter tallies probe events per kind.
type counter map[EventKind]int

func (c counter) probe(e Event) { c[e.Kind]++ }

func (c counter) String() string {
	s := ""
	for k := EvAcquired; k <= EvCASFail; k++ {
		if c[k] > 0 {
			s += fmt.Sprintf(" %v=%d", k, c[k])
		}
	}
	return s
}

// Randomized seeded workloads on rdma/sim, checked by the oracle, the data words and the
// quiescent invariants: mixed range sizes (1..300 units, log-uniform) and modes over a small
// hot space, several k, m, fast and slow path, and wire/read jitter that makes some
// notifications late (aborts).
func TestRandomWorkloadsSim(t *testing.T) {
	base := seedOf(t, 100)
	tests := []struct {
		name   string
		w      workload
		cfg    Config
		jitter int64
	}{
		{"mixed-k2-m2", workload{clients: 8, ops: 60, maxLen: 300, sharedFrac: 0.3, hot: 2048, space: 4096, k: 2}, Config{Space: 4096, M: 2}, 0},
		{"mixed-k1-m1", workload{clients: 8, ops: 60, maxLen: 300, sharedFrac: 0.3, hot: 2048, space: 4096, k: 1}, Config{Space: 4096, M: 1}, 0},
		{"mixed-k3-m3-slow", workload{clients: 8, ops: 60, maxLen: 300, sharedFrac: 0.3, hot: 2048, space: 4096, k: 3, slow: true}, Config{Space: 4096, M: 3}, 0},
		{"small-hot-exclusive", workload{clients: 10, ops: 80, maxLen: 16, hot: 256, space: 4096, k: 2}, Config{Space: 4096, M: 2}, 0},
		{"large-tree-m4", workload{clients: 10, ops: 50, maxLen: 4096, sharedFrac: 0.2, hot: 1 << 16, space: 1 << 18, k: 2}, Config{Space: 1 << 18, M: 4}, 0},
		{"jitter-aborts", workload{clients: 8, ops: 60, maxLen: 300, sharedFrac: 0.3, hot: 2048, space: 4096, k: 2}, Config{Space: 4096, M: 2, TWait: 9 * time.Microsecond}, 3000},
		{"shared-heavy", workload{clients: 10, ops: 60, maxLen: 600, sharedFrac: 0.8, hot: 2048, space: 4096, k: 2}, Config{Space: 4096, M: 2}, 0},
	}
	for _, tc := range tests {
		for s := int64(0); s < 4; s++ {
			tc := tc
			tc.w.seed = base + s
			tc.w.csPause = func(ep verbs.Endpoint) { verbs.Spend(ep, 3000) }
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, tc.w.seed), func(t *testing.T) {
				t.Parallel()
				cnt := counter{}
				res := runSim(t, tc.w, simSetup{cfg: tc.cfg, data: true, jitter: tc.jitter,
					opts: func(int) ClientOptions { return ClientOptions{Probe: cnt.probe} }})
				t.Logf("end %v:%s", time.Duration(res.end), cnt)
				if res.o.violations != 0 || res.bad != 0 {
					t.Fatalf("seed %d (RDMA_SEED=%d): %d violations (%s), %d bad units", tc.w.seed, tc.w.seed, res.o.violations, res.o.first, res.bad)
				}
				if res.finished != tc.w.clients || res.quiet != "" {
					t.Fatalf("seed %d: finished %d of %d, quiescence: %s", tc.w.seed, res.finished, tc.w.clients, res.quiet)
				}
			})
		}
	}
	_ = sim.Cost{}
}

// The same on rdma/emu: real goroutines, the race detector, random verb delays.
func TestRandomWorkloadsEmu(t *testing.T) {
	base := seedOf(t, 200)
	for s := int64(0); s < 3; s++ {
		w := workload{clients: 6, ops: 40, maxLen: 300, sharedFrac: 0.3, hot: 2048, space: 4096, k: 2, seed: base + s}
		w.csPause = func(ep verbs.Endpoint) { verbs.Spend(ep, int64(20*time.Microsecond)) }
		cfg := Config{Space: 4096, M: 2, TWait: 2 * time.Millisecond, Lease: 2 * time.Second}
		res := runEmu(t, w, cfg, emu.Config{OpDelay: 20 * time.Microsecond, Seed: w.seed}, 3, true)
		if res.o.violations != 0 || res.bad != 0 {
			t.Fatalf("seed %d: %d violations (%s), %d bad units", w.seed, res.o.violations, res.o.first, res.bad)
		}
		if res.quiet != "" {
			t.Fatalf("seed %d: quiescence: %s", w.seed, res.quiet)
		}
		t.Logf("seed %d: %d grants", w.seed, res.o.grants)
	}
}
