package citron

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// twoClients runs client A's request starting at time 0 and client B's at time offset on a
// fresh fabric without jitter, and returns the oracle, the virtual end time and whether both
// finished. Each holds its lock for hold ns.
func twoClients(t *testing.T, cfg Config, a, b [2]uint64, ma, mb Mode, offset, hold int64, opt ClientOptions) (*oracle, int64, int) {
	t.Helper()
	c := sim.DefaultCost()
	c.WireJitter = -1
	s, err := sim.New(sim.Config{Nodes: 3, RegionSize: 8 << 20, Cost: c})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(s.Endpoint(0), cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := newOracle()
	done := 0
	run := func(node int, who int, r [2]uint64, m Mode, start int64) {
		s.Go(node, func(ep verbs.Endpoint) error {
			verbs.Spend(ep, start)
			cl, err := NewClient(ep, srv, opt)
			if err != nil {
				return err
			}
			h, err := cl.LockRange(context.Background(), r[0], r[1], m)
			if err != nil {
				return err
			}
			id := o.grant(who, r[0], r[1], m)
			verbs.Spend(ep, hold)
			o.release(id)
			done++
			return h.Unlock()
		})
	}
	run(1, 1, a, ma, 0)
	run(2, 2, b, mb, offset)
	if err := s.Run(int64(time.Second)); err != nil {
		t.Fatal(err)
	}
	return o, s.Now(), done
}

// The paper's sequential locking of a split range can deadlock: Bob holds the left leaf of
// [60,70) and notified its parent X; Alice occupies X ([0,256)) and waits in (d) for Bob's
// notification; Bob's right leaf waits in (b) for X's Occ. Only the lease-based failure
// suspicion breaks it, after a lease, by treating a live client as dead. Hold-and-wait
// avoidance (a request holding nodes releases them before it would wait) never stalls. The
// offsets sweep Alice's arrival across Bob's acquisition.
func TestSequentialSplitDeadlock(t *testing.T) {
	lease := 2 * time.Millisecond
	for _, unsafe := range []bool{true, false} {
		stalls, violations := 0, 0
		for off := int64(0); off <= 12000; off += 500 {
			cfg := Config{Space: 4096, M: 2, Lease: lease, UnsafeHoldAndWait: unsafe}
			o, end, done := twoClients(t, cfg, [2]uint64{60, 70}, [2]uint64{0, 256}, Exclusive, Exclusive, off, 1000, ClientOptions{})
			if done != 2 {
				t.Fatalf("unsafe=%v offset %d: %d of 2 finished", unsafe, off, done)
			}
			if time.Duration(end) > lease {
				stalls++
			}
			violations += o.violations
		}
		t.Logf("hold-and-wait=%v: %d stalls longer than the lease, %d violations", unsafe, stalls, violations)
		if unsafe && stalls == 0 {
			t.Fatal("the sequential variant never deadlocked")
		}
		if !unsafe && (stalls > 0 || violations > 0) {
			t.Fatalf("hold-and-wait avoidance: %d stalls, %d violations", stalls, violations)
		}
	}
}

// Scenario 3: disjoint bits of one leaf are held at the same time; an overlapping request waits
// for the release; a release clears only its own bits.
func TestLeafBitsNoFalseConflict(t *testing.T) {
	cfg := Config{Space: 4096, M: 2}
	o, end, done := twoClients(t, cfg, [2]uint64{0, 10}, [2]uint64{10, 20}, Exclusive, Exclusive, 0, 50_000, ClientOptions{})
	if done != 2 || o.violations != 0 || end > 60_000 {
		t.Fatalf("disjoint bits: done %d, violations %d, end %v (serialized?)", done, o.violations, time.Duration(end))
	}
	o, end, done = twoClients(t, cfg, [2]uint64{0, 10}, [2]uint64{9, 20}, Exclusive, Exclusive, 5000, 50_000, ClientOptions{})
	if done != 2 || o.violations != 0 || end < 100_000 {
		t.Fatalf("overlapping bits: done %d, violations %d, end %v (not serialized?)", done, o.violations, time.Duration(end))
	}
	// Shared holders of one 8-unit group coexist; an exclusive one waits.
	o, end, done = twoClients(t, cfg, [2]uint64{0, 4}, [2]uint64{2, 6}, Shared, Shared, 0, 50_000, ClientOptions{})
	if done != 2 || end > 60_000 {
		t.Fatalf("shared/shared: done %d, end %v", done, time.Duration(end))
	}
	_ = o
}

// postCounter counts batches (PostSend calls) on an endpoint: one per round trip.
type postCounter struct {
	verbs.Endpoint
	posts int
}

func (p *postCounter) PostSend(wrs ...verbs.WorkRequest) error {
	p.posts++
	return p.Endpoint.PostSend(wrs...)
}

func (p *postCounter) Spend(ns int64) { verbs.Spend(p.Endpoint, ns) }

// Scenario 13: an uncontended acquisition takes two round trips on the fast path (leaf: the
// ancestor reads, then the masked CAS with the notifications; height-1 node: ticket with the
// ancestor reads, then Occ, the four children's masked CASes and the notifications), and more on
// the slow path (plus the wait).
func TestRoundTrips(t *testing.T) {
	tests := []struct {
		name  string
		lo    uint64
		hi    uint64
		slow  bool
		trips int
	}{
		{"leaf-fast", 5, 9, false, 2},
		{"leaf-slow", 5, 9, true, 3},
		{"height1-shortcut", 256, 512, false, 2},
		{"height2-fast", 1024, 2048, false, 3}, // + the descendant check after T_wait
		{"height2-slow", 1024, 2048, true, 5},
		{"split-two-leaves", 60, 70, false, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sim.New(sim.Config{Nodes: 2, RegionSize: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := NewServer(s.Endpoint(0), Config{Space: 1 << 14, M: 4})
			if err != nil {
				t.Fatal(err)
			}
			var trips int
			s.Go(1, func(ep verbs.Endpoint) error {
				pc := &postCounter{Endpoint: ep}
				c, err := NewClient(pc, srv, ClientOptions{SlowPath: tc.slow})
				if err != nil {
					return err
				}
				pc.posts = 0
				h, err := c.LockRange(context.Background(), tc.lo, tc.hi, Exclusive)
				if err != nil {
					return err
				}
				trips = pc.posts
				return h.Unlock()
			})
			if err := s.Run(int64(time.Second)); err != nil {
				t.Fatal(err)
			}
			if trips != tc.trips {
				t.Fatalf("%d round trips, want %d", trips, tc.trips)
			}
		})
	}
}

// Scenario 4: exclusive requests at one internal node are granted in ticket order.
func TestBakeryFIFO(t *testing.T) {
	s, err := sim.New(sim.Config{Nodes: 2, RegionSize: 8 << 20})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(s.Endpoint(0), Config{Space: 4096, M: 2})
	if err != nil {
		t.Fatal(err)
	}
	var order []int
	for i := 0; i < 6; i++ {
		id := i
		s.Go(1, func(ep verbs.Endpoint) error {
			verbs.Spend(ep, int64(id)*3000) // take tickets in order while the first holds
			c, err := NewClient(ep, srv, ClientOptions{})
			if err != nil {
				return err
			}
			h, err := c.LockRange(context.Background(), 1024, 2048, Exclusive)
			if err != nil {
				return err
			}
			order = append(order, id)
			verbs.Spend(ep, 30_000)
			return h.Unlock()
		})
	}
	if err := s.Run(int64(time.Second)); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(order) != "[0 1 2 3 4 5]" {
		t.Fatalf("grant order %v", order)
	}
}

// Scenario 8: a hot leaf hammered by overlapping requests; a victim that keeps failing escalates
// to the leaf's parent (the bakery) and completes.
func TestLeafStarvationEscalates(t *testing.T) {
	w := workload{clients: 8, ops: 40, maxLen: 4, hot: 8, space: 4096, k: 2, seed: 3}
	cnt := counter{}
	res := runSim(t, w, simSetup{cfg: Config{Space: 4096, M: 2, EscalateAfter: 20 * time.Microsecond},
		opts: func(int) ClientOptions { return ClientOptions{Probe: cnt.probe} }})
	t.Logf("%s", cnt)
	if res.o.violations != 0 || res.finished != w.clients {
		t.Fatalf("violations %d, finished %d", res.o.violations, res.finished)
	}
	if cnt[EvEscalate] == 0 {
		t.Fatal("no escalation under a hammered leaf")
	}
}
