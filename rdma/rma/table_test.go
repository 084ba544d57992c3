package rma_test

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/rma/rmatest"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// tableRun has threads on every node take random locks of a table homed on node 0, shared or
// exclusive, through one RW detector per lock.
func tableRun(t *testing.T, f rdmatest.Fabric, p rma.TableParams, locks, perNode, ops int, wf float64, seed int64) ([]*rmatest.Detector, error) {
	t.Helper()
	tbl, err := rma.NewTable(f.Endpoint(0), locks, p)
	if err != nil {
		t.Fatal(err)
	}
	dets := make([]*rmatest.Detector, locks)
	for i := range dets {
		if dets[i], err = rmatest.NewDetector(f.Endpoint(i%f.Nodes()), f.Nodes() == 1); err != nil {
			t.Fatal(err)
		}
	}
	views := make([]*rma.TableNode, f.Nodes())
	for n := range views {
		ep := f.Endpoint(n)
		views[n] = tbl.NodeView(ep.Node(), ep.Alloc)
	}
	for n := 0; n < f.Nodes(); n++ {
		for k := 0; k < perNode; k++ {
			node, id := n, uint64(n*perNode+k+1)
			rng := rand.New(rand.NewSource(seed + int64(id)))
			f.Go(n, func(ep verbs.Endpoint) error {
				h, err := views[node].NewHandle(ep)
				if err != nil {
					return err
				}
				pause := func() { rdmatest.Think(6)(ep) }
				for i := 0; i < ops; i++ {
					l := rng.Intn(locks)
					if rng.Float64() < wf {
						if err := h.Lock(l); err != nil {
							return err
						}
						if err := dets[l].Write(ep, id, pause); err != nil {
							return err
						}
					} else {
						if err := h.RLock(l); err != nil {
							return err
						}
						if err := dets[l].Read(ep, id, pause); err != nil {
							return err
						}
					}
					if err := h.Unlock(l); err != nil {
						return err
					}
				}
				return nil
			})
		}
	}
	return dets, f.Wait()
}

// A lock table shared by several nodes (the lock server's use): reader/writer exclusion per
// lock on both emulators, with small thresholds so that every path runs.
func TestTable(t *testing.T) {
	s := rdmatest.Seed(t)
	p := rma.TableParams{Counters: 2, TL: [2]int{2, 3}, TR: 3}
	check := func(t *testing.T, dets []*rmatest.Detector, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range dets {
			if d.Violations() != 0 {
				t.Fatalf("lock %d: %d violations: %s", i, d.Violations(), d.First())
			}
		}
	}
	t.Run("sim", func(t *testing.T) {
		sm, err := sim.New(sim.Config{Nodes: 3, RegionSize: 1 << 20, Seed: s, OpJitter: 300})
		if err != nil {
			t.Fatal(err)
		}
		dets, err := tableRun(t, &rdmatest.SimFabric{S: sm, Until: 1 << 62}, p, 3, 3, 60, 0.3, s)
		check(t, dets, err)
	})
	t.Run("emu", func(t *testing.T) {
		c, err := emu.NewCluster(emu.Config{Seed: s, AtomicWindowYields: 1}, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		dets, err := tableRun(t, &rdmatest.EmuFabric{C: c}, p, 3, 2, 40, 0.3, s)
		check(t, dets, err)
	})
}

func TestTableErrors(t *testing.T) {
	sm, err := sim.New(sim.Config{Nodes: 2, RegionSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []rma.TableParams{{Counters: 65}, {TL: [2]int{70000, 1}}, {TR: -1}} {
		if _, err := rma.NewTable(sm.Endpoint(0), 4, p); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
	tbl, err := rma.NewTable(sm.Endpoint(0), 4, rma.TableParams{})
	if err != nil {
		t.Fatal(err)
	}
	ep := sm.Endpoint(1)
	view := tbl.NodeView(ep.Node(), ep.Alloc)
	if _, err := view.NewHandle(sm.Endpoint(0)); err == nil {
		t.Error("handle with an endpoint of another node")
	}
	h, err := view.NewHandle(ep)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Lock(4); !errors.Is(err, rma.ErrBadLock) {
		t.Errorf("lock 4 of 4: %v", err)
	}
	if err := h.Unlock(0); !errors.Is(err, rma.ErrNotHeld) {
		t.Errorf("unlock of a lock not held: %v", err)
	}
}
