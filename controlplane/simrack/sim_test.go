package simrack

import (
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

var (
	seedFlag = flag.Uint64("sim.seed", 0, "run the randomized tests with this seed only")
	verbose  = flag.Bool("sim.log", false, "log the controllers' decisions")
)

// seeds returns the seeds a randomized test runs: n of them (one under the race detector), or
// -sim.seed.
func seeds(n int) []uint64 {
	if *seedFlag != 0 {
		return []uint64{*seedFlag}
	}
	if raceEnabled {
		n = 1
	}
	var out []uint64
	for i := 1; i <= n; i++ {
		out = append(out, uint64(i))
	}
	return out
}

func testConfig(seed uint64) Config {
	cfg := Config{Seed: seed, Controller: ctlcore.Config{AllocPeriod: 200 * time.Millisecond,
		SweepPeriod: 50 * time.Millisecond, PingPeriod: 50 * time.Millisecond, Hysteresis: 0.3, MaxRegion: 8}}
	if *verbose {
		cfg.Controller.Log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return cfg
}

// shifting is a workload whose hot set changes every period: hot locks move into the switch and
// cold ones out while the clients run. Locks 100-131 are the candidates, four hot at a time;
// a tenth of the requests go to cold locks 1000-1059; a third are shared; priorities 0 and 1.
func shifting(s **Sim, period time.Duration) func(r *rand.Rand, client int) (uint32, wire.Mode, uint8) {
	return func(r *rand.Rand, _ int) (uint32, wire.Mode, uint8) {
		phase := int((*s).Now().UnixNano()-epoch0) / int(period)
		lock := uint32(100 + (phase*4)%32 + r.IntN(4))
		if r.IntN(10) == 0 {
			lock = uint32(1000 + r.IntN(60))
		}
		return lock, wire.Mode(min(r.IntN(3), 1)), uint8(r.IntN(2))
	}
}

// run runs a rack for d after setup and returns it with its violations.
func run(t *testing.T, cfg Config, d time.Duration, setup func(*Sim)) (*Sim, []history.Violation) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(s)
	}
	s.Run(d)
	return s, nil
}

func report(t *testing.T, s *Sim, vs []history.Violation, seed uint64, name string) {
	t.Helper()
	st := s.Core(s.primary).Stats()
	t.Logf("seed %d: %s; moves in %d out %d aborted %d, barriers %d, force-releases %d, periods %d, failovers %d",
		seed, s.Counts(), st.MovesIn, st.MovesOut, st.MovesAborted, st.Barriers, st.ForceReleases, st.Periods, st.Failovers)
	if len(vs) > 0 {
		for i, v := range vs {
			if i < 10 {
				t.Error(v)
			}
		}
		t.Errorf("%d violations (rerun: go test ./controlplane/simrack -run '%s' -sim.seed=%d -sim.log)", len(vs), name, seed)
	}
}

// TestMigrationsUnderLoad: the hot set moves every 600ms, so locks move into the switch and back
// out while six clients take them under 5% loss and 5% duplication. Every acquisition is checked:
// exclusion, fencing order and FIFO against the rack's acceptance order (the switch's accept log
// merged with the servers').
func TestMigrationsUnderLoad(t *testing.T) {
	for _, seed := range seeds(4) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			cfg := testConfig(seed)
			cfg.Loss, cfg.Dup = 0.05, 0.05
			var s *Sim
			cfg.Pick = shifting(&s, 600*time.Millisecond)
			s, _ = run(t, cfg, 0, nil)
			s.Run(4 * time.Second)
			vs := s.Check(true)
			report(t, s, vs, seed, "TestMigrationsUnderLoad")
			st := s.Core(0).Stats()
			if st.MovesIn < 8 || st.MovesOut < 4 || s.Counts().SwitchGrants == 0 || s.Counts().ServerGrants == 0 {
				t.Errorf("too little happened: %+v, %s", st, s.Counts())
			}
		})
	}
}
