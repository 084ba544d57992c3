package citron

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Scenario 11: scale-up under load. The tree starts at N = 256 (height 1) in a space of 2^20;
// clients append at a growing frontier (IO500 hard-write style: beyond N they take the spillover
// lock and OR their end into the maximizer), lock random ranges below it, in both modes, and
// now and then the whole file [0, frontier) (high nodes: checkers above the old roots);
// a scaler polls the maximizer and scales up. Safety is checked throughout, and afterwards every
// counter pair of every generation must balance (the scalers' propagations and the holders'
// releases of them match exactly).
func TestScaleUpUnderLoad(t *testing.T) {
	for _, m := range []int{1, 2, 4} {
		for seed := seedOf(t, 1); seed < seedOf(t, 1)+3; seed++ {
			t.Run(fmt.Sprintf("m%d/seed%d", m, seed), func(t *testing.T) {
				runScale(t, m, seed, false)
			})
		}
	}
}

// A stale client (it still uses generation 0) locks a leaf after a scale-up: its notification
// lands on the old root after the scaler visited it, so only the mark tells it to refresh; a
// fresh client then locks the whole new tree. With the marks honoured the stale client aborts,
// refreshes and is seen; ignoring them (negative control) both hold the lock at once.
func TestScaleUpStaleClient(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignore-marks=%v", ignore), func(t *testing.T) {
			cfg := Config{Space: 1 << 20, Capacity: 256, M: 1, UnsafeIgnoreMarks: ignore}
			s, err := sim.New(sim.Config{Nodes: 3, RegionSize: 16 << 20, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := NewServer(s.Endpoint(0), cfg)
			if err != nil {
				t.Fatal(err)
			}
			o := newOracle()
			cnt := counter{}
			lock := func(c *Client, ep verbs.Endpoint, who int, lo, hi uint64, hold int64) error {
				h, err := c.LockRange(context.Background(), lo, hi, Exclusive)
				if err != nil {
					return err
				}
				id := o.grant(who, lo, hi, Exclusive)
				verbs.Spend(ep, hold)
				o.release(id)
				return h.Unlock()
			}
			stale, err := NewClient(s.Endpoint(1), srv, ClientOptions{Probe: cnt.probe})
			if err != nil {
				t.Fatal(err)
			}
			s.Go(1, func(ep verbs.Endpoint) error { // the scaler: grow to 1024 first
				c, err := NewClient(ep, srv, ClientOptions{})
				if err != nil {
					return err
				}
				if err := lock(c, ep, 9, 300, 301, 100); err != nil {
					return err
				}
				_, err = c.ScaleUp(context.Background())
				return err
			})
			s.Go(1, func(ep verbs.Endpoint) error {
				verbs.Spend(ep, 50_000)
				stale.ep = ep // the client created before the scale-up, now on its thread
				return lock(stale, ep, 1, 0, 2, 100_000)
			})
			s.Go(2, func(ep verbs.Endpoint) error {
				verbs.Spend(ep, 70_000)
				c, err := NewClient(ep, srv, ClientOptions{})
				if err != nil {
					return err
				}
				if c.Generation() != 1 {
					return fmt.Errorf("fresh client on generation %d", c.Generation())
				}
				return lock(c, ep, 2, 0, 1024, 1000)
			})
			if err := s.Run(int64(time.Second)); err != nil {
				t.Fatal(err)
			}
			t.Logf("violations %d:%s", o.violations, cnt)
			if ignore != (o.violations > 0) {
				t.Fatalf("ignore marks %v: %d violations (%s)", ignore, o.violations, o.first)
			}
			if !ignore && cnt[EvStale] == 0 {
				t.Fatal("the stale client never noticed the scale-up")
			}
		})
	}
}

func runScale(t *testing.T, m int, seed int64, ignoreMarks bool) int {
	cfg := Config{Space: 1 << 20, Capacity: 256, M: m, UnsafeIgnoreMarks: ignoreMarks}
	s, err := sim.New(sim.Config{Nodes: 3, RegionSize: 64 << 20, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(s.Endpoint(0), cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := SimDirectory(s, srv, 0, 2000)
	o := newOracle()
	cnt := counter{}
	frontier := uint64(200)
	const clients, ops = 8, 60
	done := 0
	for i := 0; i < clients; i++ {
		id := i
		s.Go(1+i%2, func(ep verbs.Endpoint) error {
			defer func() { done++ }()
			c, err := NewClient(ep, dir, ClientOptions{Probe: cnt.probe})
			if err != nil {
				return err
			}
			rng := rand.New(rand.NewSource(seed*100 + int64(id)))
			for j := 0; j < ops; j++ {
				var lo, hi uint64
				mode := Exclusive
				switch r := rng.Intn(20); {
				case r == 0: // the whole tree (no spillover): the root, racing with scale-ups
					lo, hi = 0, min(frontier, c.Capacity())
					if rng.Intn(2) == 0 {
						mode = Shared
					}
				case r == 1: // a whole-file request: high nodes, checkers above old roots
					lo, hi = 0, frontier
					if rng.Intn(2) == 0 {
						mode = Shared
					}
				case r < 10: // append at the frontier
					L := uint64(1 + rng.Intn(200))
					lo, hi = frontier, frontier+L
					frontier += L
				default:
					L := uint64(1 + rng.Intn(300))
					lo = uint64(rng.Int63n(int64(frontier)))
					hi = lo + L
					if rng.Intn(3) == 0 {
						mode = Shared
					}
				}
				hi = min(hi, cfg.Space)
				h, err := c.LockRange(context.Background(), lo, hi, mode)
				if err != nil {
					return err
				}
				rid := o.grant(id, lo, hi, mode)
				verbs.Spend(ep, 2000)
				o.release(rid)
				if err := h.Unlock(); err != nil {
					return err
				}
			}
			return nil
		})
	}
	scales := 0
	s.Go(2, func(ep verbs.Endpoint) error {
		c, err := NewClient(ep, dir, ClientOptions{Probe: cnt.probe})
		if err != nil {
			return err
		}
		for done < clients {
			verbs.Spend(ep, 15000)
			ok, err := c.ScaleUp(context.Background())
			if err != nil {
				return err
			}
			if ok {
				scales++
			}
		}
		return nil
	})
	if err := s.Run(int64(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	info, _ := srv.Info(s.Endpoint(0))
	t.Logf("%d scale-ups to N=%d (%d generations), %d grants, %v virtual:%s", scales, info.Layout.Capacity(), info.Layout.Gen()+1, o.grants, time.Duration(s.Now()), cnt)
	if ignoreMarks {
		return o.violations
	}
	if o.violations != 0 {
		t.Fatalf("seed %d: %s", seed, o.first)
	}
	if done != clients+0 || o.grants != clients*ops {
		t.Fatalf("seed %d: %d clients done, %d grants", seed, done, o.grants)
	}
	if scales < 2 {
		t.Fatalf("only %d scale-ups", scales)
	}
	if q, err := quiescent(s.Endpoint(0), srv); err != nil || q != "" {
		t.Fatalf("seed %d: after the run: %s %v", seed, q, err)
	}
	if mx, _ := verbs.Read(s.Endpoint(0), srv.Control().Add(ctlMaximizer)); mx != 0 && info.Layout.Capacity() < cfg.Space {
		t.Logf("maximizer %d left for a later scale-up", mx)
	}
	return 0
}
