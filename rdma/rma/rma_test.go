package rma_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/rma/rmatest"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// algo builds a lock on a fabric and returns its per-rank constructor.
type algo struct {
	name  string
	build func(nodes, ppn int, alloc rma.Alloc) (func(rank int, ep verbs.Endpoint) (rma.Locker, error), error)
}

func rmaAlgo(cfg rma.Config) algo {
	name := fmt.Sprintf("rma N=%d readers=%v tl=%v tdc=%d tr=%d", len(cfg.Elements)+1, cfg.Readers, cfg.TL, cfg.TDC, cfg.TR)
	return algo{name, func(nodes, ppn int, alloc rma.Alloc) (func(int, verbs.Endpoint) (rma.Locker, error), error) {
		c := cfg
		c.Nodes, c.ProcsPerNode = nodes, ppn
		l, err := rma.New(c, alloc)
		if err != nil {
			return nil, err
		}
		return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return l.Handle(r, ep) }, nil
	}}
}

var (
	dmcsAlgo = algo{"d-mcs", func(nodes, ppn int, alloc rma.Alloc) (func(int, verbs.Endpoint) (rma.Locker, error), error) {
		d, err := rma.NewDMCS(nodes, ppn, alloc)
		if err != nil {
			return nil, err
		}
		return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return d.Handle(r, ep) }, nil
	}}
	spinAlgo = algo{"spin", func(nodes, ppn int, alloc rma.Alloc) (func(int, verbs.Endpoint) (rma.Locker, error), error) {
		s, err := rma.NewSpin(nodes, ppn, alloc)
		if err != nil {
			return nil, err
		}
		return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return s.Handle(r, ep) }, nil
	}}
	centralAlgo = algo{"central-rw", func(nodes, ppn int, alloc rma.Alloc) (func(int, verbs.Endpoint) (rma.Locker, error), error) {
		c, err := rma.NewCentralRW(nodes, ppn, alloc)
		if err != nil {
			return nil, err
		}
		return func(r int, ep verbs.Endpoint) (rma.Locker, error) { return c.Handle(r, ep) }, nil
	}}
)

// runSim runs a workload of the algorithm in virtual time.
func runSim(t *testing.T, a algo, w rmatest.Workload, cfg sim.Config) (rmatest.Result, error) {
	t.Helper()
	cfg.Nodes = w.Nodes
	if cfg.RegionSize == 0 {
		cfg.RegionSize = 1 << 20
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mk, err := a.build(w.Nodes, w.ProcsPerNode, func(n int, size uint64) (verbs.Ptr, error) { return s.Endpoint(n).Alloc(size) })
	if err != nil {
		t.Fatal(err)
	}
	w.NewLocker = mk
	return rmatest.Run(&rdmatest.SimFabric{S: s, Until: 1 << 62}, w)
}

// runEmu runs a workload of the algorithm in real time on goroutines.
func runEmu(t *testing.T, a algo, w rmatest.Workload, cfg emu.Config) (rmatest.Result, error) {
	t.Helper()
	c, err := emu.NewCluster(cfg, w.Nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mk, err := a.build(w.Nodes, w.ProcsPerNode, func(n int, size uint64) (verbs.Ptr, error) { return c.Node(n).Alloc(size) })
	if err != nil {
		t.Fatal(err)
	}
	w.NewLocker = mk
	return rmatest.Run(&rdmatest.EmuFabric{C: c}, w)
}

func checkClean(t *testing.T, r rmatest.Result, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if r.Violations != 0 {
		t.Fatalf("%d violations, first: %s", r.Violations, r.First)
	}
	if r.Counted != uint64(r.WriterSections) {
		t.Fatalf("protected counter %d after %d writer sections (lost update)", r.Counted, r.WriterSections)
	}
}

// think returns a pause of n CPU accesses (virtual time in sim, a yield in emu).
func think(n int) func(ep verbs.Endpoint) { return rdmatest.Think(n) }

// The writer-only locks of Fig. 3 keep mutual exclusion on both emulators, with 2 and 3 level
// trees, several thresholds and a node-spanning middle level.
func TestWritersExclusive(t *testing.T) {
	s := rdmatest.Seed(t)
	cases := []struct {
		a          algo
		nodes, ppn int
	}{
		{rmaAlgo(rma.Config{}), 3, 3},                                                          // N = 1 (the D-MCS structure)
		{rmaAlgo(rma.Config{Elements: []int{3}, TL: []int{1, 1}}), 3, 3},                       // N = 2, pass to the next node every time
		{rmaAlgo(rma.Config{Elements: []int{3}, TL: []int{1, 4}}), 3, 3},                       // N = 2
		{rmaAlgo(rma.Config{Elements: []int{4, 2}, TL: []int{1, 2, 3}}), 4, 2},                 // N = 3: racks of 2 nodes
		{rmaAlgo(rma.Config{Elements: []int{2, 1}, TL: []int{1, 2, 2}}), 2, 2},                 // N = 3: sub-node elements
		{rmaAlgo(rma.Config{Elements: []int{4}, TL: []int{1, 3}}), 1, 4},                       // one node: CPU atomics only
		{rmaAlgo(rma.Config{Elements: []int{2}, TL: []int{1, 2}, Readers: true, TR: 3}), 2, 2}, // RMA-RW, writers only
		{dmcsAlgo, 3, 3},
		{dmcsAlgo, 1, 4},
		{spinAlgo, 3, 2},
	}
	for i, c := range cases {
		w := rmatest.Workload{Nodes: c.nodes, ProcsPerNode: c.ppn, Ops: 60, WriteFrac: 1, Seed: s + int64(i),
			Pause: think(5), Think: think(3)}
		t.Run(fmt.Sprintf("sim/%s/%dx%d", c.a.name, c.nodes, c.ppn), func(t *testing.T) {
			r, err := runSim(t, c.a, w, sim.Config{Seed: s + int64(i), OpJitter: 200})
			checkClean(t, r, err)
			if want := int64(c.nodes * c.ppn * w.Ops); r.WriterSections != want {
				t.Fatalf("%d sections, want %d", r.WriterSections, want)
			}
		})
		t.Run(fmt.Sprintf("emu/%s/%dx%d", c.a.name, c.nodes, c.ppn), func(t *testing.T) {
			w.Ops = 30
			r, err := runEmu(t, c.a, w, emu.Config{Seed: s + int64(i), AtomicWindowYields: 1, OpDelay: 20 * time.Microsecond})
			checkClean(t, r, err)
		})
	}
}

// RMA-RW keeps writers exclusive and readers apart from writers under mixed workloads, with
// small thresholds so that every path (T_R resets by readers, T_L,1 mode changes, counter
// drains, intra-node passes) runs often, on both emulators; readers do share the lock.
func TestReadersWriters(t *testing.T) {
	s := rdmatest.Seed(t)
	cases := []struct {
		cfg        rma.Config
		nodes, ppn int
		wf         float64
	}{
		{rma.Config{Readers: true, TL: []int{2}, TR: 2}, 3, 2, 0.3},                                // N = 1, counter per node
		{rma.Config{Readers: true, Elements: []int{2}, TL: []int{2, 2}, TR: 3}, 3, 2, 0.3},         // N = 2
		{rma.Config{Readers: true, Elements: []int{3}, TL: []int{1, 3}, TR: 1, TDC: 1}, 2, 3, 0.5}, // a counter per process
		{rma.Config{Readers: true, Elements: []int{3}, TL: []int{3, 1}, TR: 4, TDC: 6}, 2, 3, 0.2}, // one counter
		{rma.Config{Readers: true, Elements: []int{4, 2}, TL: []int{2, 2, 2}, TR: 2}, 4, 2, 0.3},   // N = 3
		{rma.Config{Readers: true, Elements: []int{4}, TL: []int{2, 2}, TR: 2}, 1, 4, 0.3},         // one node
		{rma.Config{Readers: true, Elements: []int{2}}, 3, 2, 0.05},                                // defaults
	}
	for i, c := range cases {
		a := rmaAlgo(c.cfg)
		w := rmatest.Workload{Nodes: c.nodes, ProcsPerNode: c.ppn, Ops: 80, WriteFrac: c.wf, Seed: s + int64(i),
			Pause: think(8), Think: think(2)}
		t.Run(fmt.Sprintf("sim/%s/%dx%d", a.name, c.nodes, c.ppn), func(t *testing.T) {
			r, err := runSim(t, a, w, sim.Config{Seed: s + int64(i), OpJitter: 300})
			checkClean(t, r, err)
			if r.MaxReaders < 2 {
				t.Fatalf("readers never shared the lock (max %d inside)", r.MaxReaders)
			}
			t.Logf("%d writer and %d reader sections, up to %d readers inside", r.WriterSections, r.ReaderSections, r.MaxReaders)
		})
		t.Run(fmt.Sprintf("emu/%s/%dx%d", a.name, c.nodes, c.ppn), func(t *testing.T) {
			w.Ops = 40
			r, err := runEmu(t, a, w, emu.Config{Seed: s + int64(i), AtomicWindowYields: 1, OpDelay: 20 * time.Microsecond})
			checkClean(t, r, err)
		})
	}
}

// The positive control of the Fig. 5 baseline: the central RW lock is correct too.
func TestCentralRW(t *testing.T) {
	s := rdmatest.Seed(t)
	w := rmatest.Workload{Nodes: 3, ProcsPerNode: 2, Ops: 60, WriteFrac: 0.3, Seed: s, Pause: think(8), Think: think(2)}
	r, err := runSim(t, centralAlgo, w, sim.Config{Seed: s, OpJitter: 300})
	checkClean(t, r, err)
	if r.MaxReaders < 2 {
		t.Fatalf("readers never shared the lock")
	}
	w.Ops = 30
	r, err = runEmu(t, centralAlgo, w, emu.Config{Seed: s, AtomicWindowYields: 1})
	checkClean(t, r, err)
}

// Negative controls: a writer that skips the counter drain and a reader that ignores WRITE
// mode must be caught by the detector (each within a few seeded runs), on both emulators.
func TestNegativeControls(t *testing.T) {
	s := rdmatest.Seed(t)
	for _, f := range []struct {
		name   string
		faults rma.Faults
	}{{"skip-drain", rma.Faults{SkipDrain: true}}, {"reader-ignores-write", rma.Faults{ReaderIgnoresWrite: true}}} {
		a := rmaAlgo(rma.Config{Readers: true, Elements: []int{2}, TL: []int{2, 2}, TR: 3, Faults: f.faults})
		for _, backend := range []string{"sim", "emu"} {
			t.Run(f.name+"/"+backend, func(t *testing.T) {
				caught := false
				for k := int64(0); k < 8 && !caught; k++ {
					w := rmatest.Workload{Nodes: 2, ProcsPerNode: 2, Ops: 60, WriteFrac: 0.4, Seed: s + k,
						Pause: think(20), Think: think(1)}
					var r rmatest.Result
					var err error
					if backend == "sim" {
						r, err = runSim(t, a, w, sim.Config{Seed: s + k, OpJitter: 300})
					} else {
						r, err = runEmu(t, a, w, emu.Config{Seed: s + k, AtomicWindowYields: 1, OpDelay: 20 * time.Microsecond})
					}
					if r.Violations > 0 {
						caught = true
						t.Logf("caught after %d runs: %s", k+1, r.First)
					} else if err != nil && !errors.Is(err, sim.ErrDeadlock) {
						t.Fatal(err)
					}
				}
				if !caught {
					t.Fatal("the broken variant passed the detector")
				}
			})
		}
	}
}

// Erratum E3: with per-process queue nodes at every level (Listings 4 and 5 as printed), a
// writer that inherited the machine level from a node neighbour releases it with a queue node
// it never enqueued. The simulator must report the resulting hang (or an overlap).
func TestPaperQueueNodesHang(t *testing.T) {
	s := rdmatest.Seed(t)
	a := rmaAlgo(rma.Config{Elements: []int{2}, TL: []int{1, 2}, Faults: rma.Faults{PaperQueueNodes: true}})
	w := rmatest.Workload{Nodes: 2, ProcsPerNode: 2, Ops: 30, WriteFrac: 1, Seed: s, Pause: think(4)}
	r, err := runSim(t, a, w, sim.Config{Seed: s})
	if r.Violations == 0 && !errors.Is(err, sim.ErrDeadlock) {
		t.Fatalf("per-process parent queue nodes passed (err %v)", err)
	}
	t.Logf("caught: %v %s", err, r.First)
}

// RMA-MCS with N = 1 behaves as D-MCS: in virtual time, with the same seed, both issue the
// same operations at the same instants, so every writer enters in the same order, every
// process has the same operation counts and the runs end at the same virtual time.
func TestRMAMCSOneLevelIsDMCS(t *testing.T) {
	s := rdmatest.Seed(t)
	for _, shape := range [][2]int{{3, 2}, {4, 3}, {2, 1}} {
		t.Run(fmt.Sprintf("%dx%d", shape[0], shape[1]), func(t *testing.T) {
			run := func(a algo) (rmatest.Result, int64) {
				w := rmatest.Workload{Nodes: shape[0], ProcsPerNode: shape[1], Ops: 40, WriteFrac: 1, Seed: s,
					Pause: think(3), Think: think(2)}
				cfg := sim.Config{Nodes: w.Nodes, RegionSize: 1 << 20, Seed: s, OpJitter: 150}
				sm, err := sim.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				mk, err := a.build(w.Nodes, w.ProcsPerNode, func(n int, size uint64) (verbs.Ptr, error) { return sm.Endpoint(n).Alloc(size) })
				if err != nil {
					t.Fatal(err)
				}
				w.NewLocker = mk
				r, err := rmatest.Run(&rdmatest.SimFabric{S: sm, Until: 1 << 62}, w)
				checkClean(t, r, err)
				return r, sm.Now()
			}
			d, dt := run(dmcsAlgo)
			m, mt := run(rmaAlgo(rma.Config{}))
			if fmt.Sprint(d.Order) != fmt.Sprint(m.Order) {
				t.Errorf("entry orders differ:\nD-MCS   %v\nRMA-MCS %v", d.Order, m.Order)
			}
			for i := range d.Stats {
				if d.Stats[i] != m.Stats[i] {
					t.Errorf("rank %d: D-MCS ops %+v, RMA-MCS ops %+v", i, d.Stats[i], m.Stats[i])
				}
			}
			if dt != mt {
				t.Fatalf("D-MCS ends at %d ns, RMA-MCS(N=1) at %d ns", dt, mt)
			}
			// Non-vacuous: the run had contention (some process waited behind another).
			var spins uint64
			for _, st := range d.Stats {
				spins += st.LocalSpins
			}
			if spins == 0 {
				t.Fatal("no process ever waited: the comparison says nothing about hand-overs")
			}
			t.Logf("identical: %d sections, %d ns virtual, %d local spins", d.WriterSections, dt, spins)
		})
	}
}

// Access-class audit over a mixed run: no word of the lock is both read-modify-written by a
// NIC and written or read-modify-written by a CPU (the verbs contract makes those non-atomic),
// and the words of node-local queues are never touched by a NIC.
func TestAccessClasses(t *testing.T) {
	s := rdmatest.Seed(t)
	type use struct{ cpuWrite, nicRMW, nic bool }
	var mu sync.Mutex
	uses := map[verbs.Ptr]*use{}
	sm, err := sim.New(sim.Config{Nodes: 3, RegionSize: 1 << 20, Seed: s, Tracer: func(a verbs.Access) {
		mu.Lock()
		defer mu.Unlock()
		u := uses[a.Word]
		if u == nil {
			u = &use{}
			uses[a.Word] = u
		}
		switch {
		case a.Class == verbs.ClassLocal && a.Op != verbs.OpRead:
			u.cpuWrite = true
		case a.Class == verbs.ClassRemote:
			u.nic = true
			if a.Op.IsAtomic() {
				u.nicRMW = true
			}
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rma.Config{Nodes: 3, ProcsPerNode: 2, Elements: []int{2}, TL: []int{2, 2}, Readers: true, TR: 2}
	l, err := rma.New(cfg, func(n int, size uint64) (verbs.Ptr, error) { return sm.Endpoint(n).Alloc(size) })
	if err != nil {
		t.Fatal(err)
	}
	w := rmatest.Workload{Nodes: 3, ProcsPerNode: 2, Ops: 60, WriteFrac: 0.4, Seed: s, Pause: think(4),
		NewLocker: func(r int, ep verbs.Endpoint) (rma.Locker, error) { return l.Handle(r, ep) }}
	r, err := rmatest.Run(&rdmatest.SimFabric{S: sm, Until: 1 << 62}, w)
	checkClean(t, r, err)
	words := l.Words()
	kinds := map[rma.WordKind]int{}
	for p, wd := range words {
		u := uses[p]
		if u == nil {
			continue
		}
		kinds[wd.Kind]++
		if u.cpuWrite && u.nicRMW {
			t.Errorf("%v (%v): CPU writes and NIC read-modify-writes", wd, p)
		}
		if l.Shape().LevelLocal(int(wd.Lvl)) && (wd.Kind == rma.WTail || wd.Kind == rma.WNext || wd.Kind == rma.WStatus) && u.nic {
			t.Errorf("%v (%v): node-local queue word touched by a NIC", wd, p)
		}
	}
	for _, k := range []rma.WordKind{rma.WTail, rma.WNext, rma.WStatus, rma.WArrive, rma.WDepart} {
		if kinds[k] == 0 {
			t.Errorf("no %v word was used: the audit is vacuous", k)
		}
	}
}

// Operation counts of the uncontended paths (the paper's per-step costs, section 3.3).
func TestUncontendedCosts(t *testing.T) {
	cfg := rma.Config{Nodes: 4, ProcsPerNode: 2, Elements: []int{2}, Readers: true}
	sm, err := sim.New(sim.Config{Nodes: 4, RegionSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	l, err := rma.New(cfg, func(n int, size uint64) (verbs.Ptr, error) { return sm.Endpoint(n).Alloc(size) })
	if err != nil {
		t.Fatal(err)
	}
	var rd, rr, wa, wr verbs.StatsSnapshot
	sm.Go(1, func(ep verbs.Endpoint) error {
		h, err := l.Handle(3, ep) // node 1; its counter is on node 1, the machine tail on node 0
		if err != nil {
			return err
		}
		snap := func(f func() error, into *verbs.StatsSnapshot) error {
			b := ep.Stats().Snapshot()
			if err := f(); err != nil {
				return err
			}
			*into = ep.Stats().Snapshot().Sub(b)
			return nil
		}
		for _, st := range []struct {
			f    func() error
			into *verbs.StatsSnapshot
		}{{h.RLock, &rd}, {h.RUnlock, &rr}, {h.Lock, &wa}, {h.Unlock, &wr}} {
			if err := snap(st.f, st.into); err != nil {
				return err
			}
		}
		return nil
	})
	if err := sm.Run(1 << 40); err != nil {
		t.Fatal(err)
	}
	// Reader: one FAA on ARRIVE; release: one FAA on DEPART (loopback: the counter is local).
	if rd.Remote() != 1 || rd.FAAs != 1 || rr.Remote() != 1 || rr.FAAs != 1 {
		t.Errorf("reader acquire %+v, release %+v: want one FAA each", rd, rr)
	}
	// Writer: node level by CPU; machine level: the swap (one masked CAS), 4 FAAs (+W), then
	// DEPART of the 3 remote counters (the local one is read by the CPU): 3 reads.
	if wa.MaskedCASes != 1 || wa.CASes != 0 || wa.FAAs != 4 || wa.Reads != 3 || wa.Writes != 0 {
		t.Errorf("writer acquire %+v: want 1 masked CAS, 4 FAA, 3 READ", wa)
	}
	// Release: tail CAS, then the reset: 3 DEPART reads (one local), 4+4 FAAs.
	if wr.CASes != 1 || wr.FAAs != 8 || wr.Reads != 3 || wr.Writes != 0 {
		t.Errorf("writer release %+v: want 1 CAS, 8 FAA, 3 READ", wr)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  rma.Config
		want string
	}{
		{rma.Config{Nodes: 0, ProcsPerNode: 1}, "nodes"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, Elements: []int{3}}, "divide"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, Elements: []int{8, 4, 2, 1}}, "levels"},
		{rma.Config{Nodes: 6, ProcsPerNode: 4, Elements: []int{6}}, "neither"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, Elements: []int{4}, TL: []int{1}}, "thresholds"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, Elements: []int{4}, TL: []int{1, 0}}, "T_L,2"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, TR: 5}, "Readers"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, Readers: true, TDC: 9}, "T_DC"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, Readers: true, TR: -1}, "T_R"},
		{rma.Config{Nodes: 2, ProcsPerNode: 4, Faults: rma.Faults{SkipDrain: true}}, "Readers"},
	} {
		_, err := rma.NewShape(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err %v, want %q", c.cfg, err, c.want)
		}
	}
}
