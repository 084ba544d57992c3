package sim_test

import (
	"testing"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// The cost of the extended verbs is the model's path: a masked atomic holds the atomic unit for
// NICMaskedAtomic, a multi-word READ adds NICLine per extra 64-byte line on both NICs, a batch
// pays PostOp once and PostWQE per further verb, and each consumed completion costs PollCQ.
func TestExtendedVerbLatency(t *testing.T) {
	c := sim.DefaultCost()
	c.WireJitter = -1
	c.NICMaskedAtomic = 420
	c.PollCQ = 100 // above NICOp: polling four completions costs more than waiting for the last
	read := c.PostOp + c.NICOp + c.OneWay + c.NICOp + c.OneWay + c.PollCQ
	tests := []struct {
		name string
		wrs  []verbs.WorkRequest
		exec bool
		want int64
	}{
		{"masked-cas", []verbs.WorkRequest{{Op: verbs.OpMaskedCAS}}, false, c.PostOp + c.NICOp + c.OneWay + c.NICMaskedAtomic + c.OneWay + c.PollCQ},
		{"masked-faa", []verbs.WorkRequest{{Op: verbs.OpMaskedFAA}}, false, c.PostOp + c.NICOp + c.OneWay + c.NICMaskedAtomic + c.OneWay + c.PollCQ},
		// 32 words from a line-aligned address: 4 lines, 3 extra on each NIC.
		{"read-32-words", []verbs.WorkRequest{{Op: verbs.OpRead, Words: 32}}, false, read + 2*3*c.NICLine},
		{"write-9-words", []verbs.WorkRequest{{Op: verbs.OpWrite, Data: make([]uint64, 9)}}, false, read + 2*1*c.NICLine},
		// Four reads in one batch: pipelined behind the first (NICOp apart). All signaled, the
		// thread polls four completions (PollCQ each); with Exec only the last one.
		{"batch-4-reads", make([]verbs.WorkRequest, 4), false, read + 3*c.PollCQ},
		{"exec-4-reads", make([]verbs.WorkRequest, 4), true, read + 3*c.NICOp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, sim.Config{Nodes: 2, Cost: c})
			p, _ := s.Endpoint(1).Alloc(1024)
			for i := range tc.wrs {
				if tc.wrs[i].Op == 0 {
					tc.wrs[i].Op = verbs.OpRead
				}
				tc.wrs[i].Remote = p.Add(uint64(8 * i))
			}
			var got int64
			s.Go(0, func(ep verbs.Endpoint) error {
				t0 := ep.Now()
				var err error
				if tc.exec {
					_, err = verbs.Exec(ep, tc.wrs)
				} else {
					_, err = verbs.Batch(ep, tc.wrs)
				}
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

// Masked atomics have the exact semantics and are atomic among themselves (six initiators, one
// field each, no lost increment) in virtual time too.
func TestMaskedAtomicsSim(t *testing.T) {
	s := newSim(t, sim.Config{Nodes: 3, Seed: 3, OpJitter: 500})
	p, _ := s.Endpoint(0).Alloc(64)
	var bd uint64
	for i := 0; i < 8; i++ {
		bd |= verbs.Field{Shift: uint(8 * i), Width: 8}.MSB()
	}
	for i := 0; i < 6; i++ {
		f := verbs.Field{Shift: uint(8 * i), Width: 8}
		bit := uint64(1) << (3 * i)
		s.Go(i%3, func(ep verbs.Endpoint) error {
			for j := 0; j < 100; j++ {
				if _, err := verbs.MaskedFAA(ep, p, f.Add(1), bd); err != nil {
					return err
				}
				if _, ok, err := verbs.MaskedCAS(ep, p.Add(8), 0, bit, bit, bit); err != nil || !ok {
					t.Errorf("own bit: %v %v", ok, err)
				}
				if _, ok, err := verbs.MaskedCAS(ep, p.Add(8), bit, bit, 0, bit); err != nil || !ok {
					t.Errorf("own bit clear: %v %v", ok, err)
				}
			}
			return nil
		})
	}
	if err := s.Run(1 << 40); err != nil {
		t.Fatal(err)
	}
	w, _ := verbs.Read(s.Endpoint(0), p)
	for i := 0; i < 6; i++ {
		if got := (verbs.Field{Shift: uint(8 * i), Width: 8}).Get(w); got != 100 {
			t.Errorf("field %d: %d of 100", i, got)
		}
	}
	if b, _ := verbs.Read(s.Endpoint(0), p.Add(8)); b != 0 {
		t.Errorf("bits left: %#x", b)
	}
}

// Negative control in virtual time: a CPU FAA landing between a masked FAA's read and its
// write-back is lost (the NIC writes back old+add computed from what it read).
func TestMaskedFAANotAtomicWithCPU(t *testing.T) {
	c := sim.DefaultCost()
	c.WireJitter = -1
	s := newSim(t, sim.Config{Nodes: 2, Cost: c})
	p, _ := s.Endpoint(0).Alloc(64)
	s.Go(1, func(ep verbs.Endpoint) error {
		_, err := verbs.MaskedFAA(ep, p, 1<<8, 1<<15)
		return err
	})
	s.Go(0, func(ep verbs.Endpoint) error {
		for ep.Now() < c.PostOp+c.NICOp+c.OneWay+c.AtomicWindow/2 {
			ep.Local().Store(8, 0)
		}
		ep.Local().FAA(p.Offset(), 1)
		return nil
	})
	if err := s.Run(1 << 30); err != nil {
		t.Fatal(err)
	}
	if v, _ := verbs.Read(s.Endpoint(0), p); v != 1<<8 {
		t.Fatalf("word %#x, want %#x (the CPU's +1 lost)", v, 1<<8)
	}
}

// A multi-word READ is not atomic as a whole: it reads line 0 before, and line 1 after, two
// stores that write line 0 and then line 1 - a result no atomic snapshot can give
// (deterministic). Verbs through the same NIC cannot interleave with it in this model (the
// target pipeline is busy for the whole block), so the interleaving comes from the CPU; in
// rdma/emu remote verbs interleave too.
func TestMultiWordReadTears(t *testing.T) {
	c := sim.DefaultCost()
	c.WireJitter = -1
	c.NICLine = 200
	s := newSim(t, sim.Config{Nodes: 2, Cost: c})
	p, _ := s.Endpoint(0).Alloc(128)
	var got []uint64
	s.Go(1, func(ep verbs.Endpoint) error {
		var err error
		got, err = verbs.ReadWords(ep, p, 16) // lines applied at 1200 and 1400
		return err
	})
	s.Go(0, func(ep verbs.Endpoint) error {
		m := ep.Local()
		for ep.Now() < 1250 {
			m.Store(0, 0)
		}
		m.Store(p.Offset(), 1)
		m.Store(p.Offset()+64, 1)
		return nil
	})
	if err := s.Run(1 << 30); err != nil {
		t.Fatal(err)
	}
	if got[0] != 0 || got[8] != 1 {
		t.Fatalf("read %v: want word 0 old and word 8 new", got)
	}
}

// Per-QP order: with wire jitter and read jitter, a batch's READ still sees the earlier WRITE
// and masked FAA of its queue pair; without per-QP order this would fail often.
func TestPerQPOrderSim(t *testing.T) {
	s := newSim(t, sim.Config{Nodes: 2, Seed: 11, OpJitter: 3000, Cost: sim.Cost{WireJitter: 2000}})
	p, _ := s.Endpoint(0).Alloc(64)
	s.Go(1, func(ep verbs.Endpoint) error {
		for i := uint64(1); i <= 200; i++ {
			res, err := verbs.Exec(ep, []verbs.WorkRequest{
				{Op: verbs.OpWrite, Remote: p, Value: i},
				{Op: verbs.OpMaskedFAA, Remote: p.Add(8), Value: 1},
				{Op: verbs.OpRead, Remote: p},
				{Op: verbs.OpRead, Remote: p.Add(8)},
			})
			if err != nil {
				return err
			}
			if res[2] != i || res[3] != i {
				t.Errorf("round %d: read %d/%d", i, res[2], res[3])
			}
		}
		return nil
	})
	if err := s.Run(1 << 40); err != nil {
		t.Fatal(err)
	}
}

// Atomics to words in different atomic units proceed in parallel; to one word they serialize.
// (Eight threads, one FAA each: one queue pair orders its own atomics anyway.)
func TestAtomicUnits(t *testing.T) {
	run := func(units int, sameWord bool) int64 {
		c := sim.DefaultCost()
		c.WireJitter = -1
		c.AtomicUnits = units
		s := newSim(t, sim.Config{Nodes: 2, Cost: c})
		p, _ := s.Endpoint(0).Alloc(1024)
		var end int64
		for i := 0; i < 8; i++ {
			q := p.Add(uint64(8 * i))
			if sameWord {
				q = p
			}
			s.Go(1, func(ep verbs.Endpoint) error {
				_, err := verbs.FAA(ep, q, 1)
				end = max(end, ep.Now())
				return err
			})
		}
		if err := s.Run(1 << 30); err != nil {
			t.Fatal(err)
		}
		return end
	}
	one, eightDistinct, eightSame := run(1, false), run(8, false), run(8, true)
	t.Logf("8 FAAs: 1 unit %d ns, 8 units distinct words %d ns, 8 units same word %d ns", one, eightDistinct, eightSame)
	if eightDistinct*10 > one*7 || eightSame != one {
		t.Fatalf("atomic units: %d / %d / %d", one, eightDistinct, eightSame)
	}
}

// Cost.SameWordAtomic reaches the model: halving it doubles the throughput of FAAs that all hit
// one word (bound by that word), and leaves FAAs that never touch a word twice exactly as they
// were (the negative control: neither an atomic's latency nor the units depend on it). The hot
// word's FAAs stay atomic: no two return the same old value.
func TestSameWordAtomic(t *testing.T) {
	run := func(sameWord int64, hot bool) int64 {
		c := sim.DefaultCost()
		c.WireJitter = -1
		c.NICOp, c.AtomicUnits, c.AtomicWindow, c.SameWordAtomic = 5, 32, 50, sameWord
		s := newSim(t, sim.Config{Nodes: 2, Cost: c})
		const threads, perThread = 32, 2048
		p, err := s.Endpoint(0).Alloc(8 * threads * perThread)
		if err != nil {
			t.Fatal(err)
		}
		var ops int64
		seen := map[uint64]bool{}
		for i := 0; i < threads; i++ {
			s.Go(1, func(ep verbs.Endpoint) error {
				for j := 0; j < perThread; j++ {
					q := p
					if !hot {
						q = p.Add(uint64(8 * (i*perThread + j)))
					}
					old, err := verbs.FAA(ep, q, 1)
					if err != nil {
						return err
					}
					if hot && seen[old] {
						t.Errorf("two FAAs read %d", old)
					}
					seen[old] = true
					ops++
				}
				return nil
			})
		}
		if err := s.Run(200_000); err != nil {
			t.Fatal(err)
		}
		return ops
	}
	tests := []struct {
		name string
		hot  bool
		// want is the ratio of FAAs completed in 200 us at 100 ns to those at 200 ns.
		lo, hi float64
	}{
		{"one hot word", true, 1.9, 2.1},
		{"never the same word twice", false, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			slow, fast := run(200, tc.hot), run(100, tc.hot)
			r := float64(fast) / float64(slow)
			t.Logf("FAAs in 200 us: %d at 200 ns, %d at 100 ns (x%.3f)", slow, fast, r)
			if r < tc.lo || r > tc.hi {
				t.Fatalf("throughput ratio %.3f outside [%v, %v]", r, tc.lo, tc.hi)
			}
		})
	}
}
