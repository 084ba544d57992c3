package sim_test

import (
	"errors"
	"testing"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newSim(t *testing.T, cfg sim.Config) *sim.Sim {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The latency of one uncontended verb is exactly the cost model's path: post, initiator NIC,
// wire, target NIC, wire back (plus the atomic unit for CAS).
func TestVerbLatency(t *testing.T) {
	c := sim.DefaultCost()
	c.WireJitter = -1
	tests := []struct {
		name string
		op   verbs.Opcode
		to   int
		want int64
	}{
		{"remote-read", verbs.OpRead, 1, c.PostOp + c.NICOp + c.OneWay + c.NICOp + c.OneWay},
		{"loopback-read", verbs.OpRead, 0, c.PostOp + c.NICOp + c.LoopbackOneWay + c.NICOp + c.LoopbackOneWay},
		{"remote-cas", verbs.OpCAS, 1, c.PostOp + c.NICOp + c.OneWay + c.NICAtomic + c.OneWay},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, sim.Config{Nodes: 2, Cost: c})
			p, _ := s.Endpoint(tc.to).Alloc(64)
			var got int64
			s.Go(0, func(ep verbs.Endpoint) error {
				t0 := ep.Now()
				_, err := verbs.Batch(ep, []verbs.WorkRequest{{Op: tc.op, Remote: p}})
				got = ep.Now() - t0
				return err
			})
			if err := s.Run(1 << 30); err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("latency %d ns, want %d", got, tc.want)
			}
		})
	}
}

// Loopback and inbound traffic share one NIC: many threads hammering their own node through
// loopback saturate it at half its message rate (each verb crosses it twice), and adding
// inbound traffic from another node slows the loopback threads down.
func TestNICThroughputShared(t *testing.T) {
	run := func(remoteThreads int) float64 {
		s := newSim(t, sim.Config{Nodes: 2})
		p, _ := s.Endpoint(0).Alloc(64)
		var ops int64
		for i := 0; i < 16; i++ {
			s.Go(0, func(ep verbs.Endpoint) error {
				for {
					if _, err := verbs.Read(ep, p); err != nil {
						return err
					}
					ops++
				}
			})
		}
		for i := 0; i < remoteThreads; i++ {
			s.Go(1, func(ep verbs.Endpoint) error {
				for {
					if _, err := verbs.Read(ep, p); err != nil {
						return err
					}
				}
			})
		}
		if err := s.Run(1_000_000); err != nil {
			t.Fatal(err)
		}
		return float64(ops) / 1e-3 // verbs per virtual second
	}
	alone, shared := run(0), run(16)
	limit := 1e9 / float64(2*sim.DefaultCost().NICOp)
	t.Logf("loopback verbs/s: alone %.3g (NIC limit %.3g), with inbound traffic %.3g", alone, limit, shared)
	if alone > limit*1.01 || alone < limit*0.9 {
		t.Fatalf("saturated loopback rate %.3g, want about %.3g", alone, limit)
	}
	if shared > alone*0.8 {
		t.Fatalf("inbound traffic did not slow loopback: %.3g vs %.3g", shared, alone)
	}
}

// A CPU CAS landing inside a NIC CAS window is lost (deterministic in virtual time): the NIC
// read 0 and writes 7, after the CPU's CAS 0->42 succeeded.
func TestNICCASNotAtomicWithCPU(t *testing.T) {
	s := newSim(t, sim.Config{Nodes: 2})
	p, _ := s.Endpoint(0).Alloc(64)
	c := sim.DefaultCost()
	var nicOld uint64
	var cpuOK bool
	s.Go(1, func(ep verbs.Endpoint) error {
		var err error
		nicOld, err = verbs.CAS(ep, p, 0, 7)
		return err
	})
	s.Go(0, func(ep verbs.Endpoint) error {
		// The NIC reads at PostOp+NICOp+OneWay and writes AtomicWindow later; CAS in between.
		for ep.Now() < c.PostOp+c.NICOp+c.OneWay+c.AtomicWindow/2 {
			ep.Local().Store(8, 0)
		}
		cpuOK = ep.Local().CAS(p.Offset(), 0, 42)
		return nil
	})
	if err := s.Run(1 << 30); err != nil {
		t.Fatal(err)
	}
	v, _ := verbs.Read(s.Endpoint(0), p)
	if !cpuOK || nicOld != 0 || v != 7 {
		t.Fatalf("cpu CAS ok=%v, NIC CAS old=%d, word=%d: want true, 0, 7", cpuOK, nicOld, v)
	}
}

// Same seed, same program: same virtual end time and same interleaving.
func TestDeterministic(t *testing.T) {
	run := func() (int64, uint64) {
		s := newSim(t, sim.Config{Nodes: 3, Seed: 5, OpJitter: 700})
		p, _ := s.Endpoint(0).Alloc(64)
		for i := 0; i < 6; i++ {
			s.Go(i%3, func(ep verbs.Endpoint) error {
				for j := 0; j < 50; j++ {
					v, err := verbs.Read(ep, p)
					if err != nil {
						return err
					}
					if err := verbs.Write(ep, p, v*31+uint64(ep.Node())); err != nil {
						return err
					}
				}
				return nil
			})
		}
		if err := s.Run(1 << 40); err != nil {
			t.Fatal(err)
		}
		v, _ := verbs.Read(s.Endpoint(0), p)
		return s.Now(), v
	}
	t1, v1 := run()
	t2, v2 := run()
	if t1 != t2 || v1 != v2 {
		t.Fatalf("runs differ: %d/%d vs %d/%d", t1, v1, t2, v2)
	}
}

// Threads parked forever are reported as a deadlock, and stopped without leaking goroutines.
func TestDeadlockDetected(t *testing.T) {
	s := newSim(t, sim.Config{Nodes: 1})
	s.Go(0, func(ep verbs.Endpoint) error {
		ep.Local().Await(func() bool { return ep.Local().Load(64) == 1 }, 64)
		return nil
	})
	if err := s.Run(1 << 30); !errors.Is(err, sim.ErrDeadlock) {
		t.Fatalf("got %v, want deadlock", err)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []sim.Config{
		{Nodes: 0},
		{Nodes: 1, RegionSize: 100},
		{Nodes: 1, Cost: sim.Cost{NICAtomic: 100, AtomicWindow: 200}},
		{Nodes: 1, Cost: sim.Cost{SameWordAtomic: -1}},
		{Nodes: 1, Cost: sim.Cost{SameWordAtomic: 100, AtomicWindow: 100}},
		{Nodes: 1, OpJitter: -1},
	}
	for i, cfg := range tests {
		if _, err := sim.New(cfg); err == nil {
			t.Errorf("#%d: config accepted", i)
		}
	}
}

// A NIC hosting more queue-pair ends than QPLimit slows down (QP cache thrashing).
func TestQPThrashing(t *testing.T) {
	run := func(limit int) int64 {
		s := newSim(t, sim.Config{Nodes: 2, Cost: sim.Cost{QPLimit: limit, QPPenalty: 1}})
		p, _ := s.Endpoint(1).Alloc(64)
		var ops int64
		for i := 0; i < 16; i++ {
			s.Go(0, func(ep verbs.Endpoint) error {
				for {
					if _, err := verbs.Read(ep, p); err != nil {
						return err
					}
					ops++
				}
			})
		}
		if err := s.Run(200_000); err != nil {
			t.Fatal(err)
		}
		return ops
	}
	off, on := run(-1), run(4)
	t.Logf("verbs in 200us: no thrashing %d, QPLimit 4 with 16 QPs %d", off, on)
	if on*3 > off*2 {
		t.Fatalf("16 QPs over a limit of 4 did not slow the NIC: %d vs %d", on, off)
	}
}
