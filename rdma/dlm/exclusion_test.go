package dlm

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Reader-writer exclusion under the real-time emulator (race detector on in make test): client
// threads on three machines run two-lock transactions over four locks on two servers, half of
// the locks shared, with random verb delays; every hold is checked against every other by the
// history, and after the run every lock word must be back at rest.
//
// DrTM reads its leases on one clock for the whole process (PTP in DrTM): the emulator's
// endpoint clocks start at their node's creation, and under load those creations can be
// milliseconds apart, more than any Delta (with them this test has caught exactly that skew).
func TestExclusionEmu(t *testing.T) {
	t0 := time.Now()
	clock := func() int64 { return int64(time.Since(t0)) }
	for _, alg := range []Algorithm{
		DSLR{Lease: int64(time.Second)},
		DSLR{Lease: int64(time.Second), CountMax: 4, ReadBackoff: true, ReadBackoffBase: 2_000, ReadBackoffMax: 20_000},
		DrTM{Lease: 20_000_000, Delta: 2_000_000, Clock: clock},
	} {
		t.Run(alg.Name(), func(t *testing.T) {
			seed := rdmatest.Seed(t)
			c, err := emu.NewCluster(emu.Config{OpDelay: 20 * time.Microsecond, AtomicWindow: time.Microsecond, Seed: seed}, 5)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Real time on a loaded machine: the run is lengthened until it has done enough.
			var h History
			var res Result
			for d := 150 * time.Millisecond; ; d *= 2 {
				h = History{}
				res, err = Run(&rdmatest.EmuFabric{C: c}, Config{Alg: alg, Servers: 2, Machines: 3, Threads: 2, Slots: 8,
					Place: PlaceDense, Source: Uniform(4, 2, 0.5, 20_000), Duration: int64(d),
					BackoffBase: 1_000, BackoffMax: 100_000, SortLocks: true, Seed: seed, History: &h})
				if err != nil {
					t.Fatal(err)
				}
				if res.Txns >= 20 && h.Len() >= 40 || d >= 2*time.Second {
					break
				}
			}
			t.Logf("%d txns, %d aborts, %d holds, stats %+v", res.Txns, res.Aborts, h.Len(), res.Stats)
			checkRun(t, alg, res, &h)
			checkRest(t, alg, res, func(s int, off uint64) uint64 { return c.Node(s).Load(off) })
		})
	}
}

// The same in virtual time, where schedules are reproducible by seed: several configurations,
// including DSLR counter resets every few tickets and DrTM leases that expire during
// transactions.
func TestExclusionSim(t *testing.T) {
	seed := rdmatest.Seed(t)
	for i, alg := range []Algorithm{
		DSLR{},
		DSLR{CountMax: 3},
		DSLR{CountMax: 5, ReadBackoff: true, ReadBackoffBase: 1_000, ReadBackoffMax: 10_000},
		DrTM{Lease: 40_000},
		DrTM{Lease: 25_000, JoinMargin: 8_000},
	} {
		t.Run(fmt.Sprintf("%d-%s", i, alg.Name()), func(t *testing.T) {
			r := rand.New(rand.NewSource(seed + int64(i)))
			locks := uint32(2 + r.Intn(6))
			src := Uniform(locks, 1+r.Intn(3), 0.3+0.4*r.Float64(), int64(r.Intn(10_000)))
			var h History
			res, err := RunSim(Config{Alg: alg, Servers: 2, Machines: 4, Threads: 3, Slots: 16, Place: PlaceDense,
				Source: src, Duration: 4_000_000, BackoffBase: 1_000, BackoffMax: 200_000, SortLocks: true,
				Seed: seed + int64(i), History: &h}, ConnectX3(), 0)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			t.Logf("locks %d: %d txns, %d aborts, stats %+v", locks, res.Txns, res.Aborts, res.Stats)
			checkRun(t, alg, res, &h)
			if d, ok := alg.(DSLR); ok && d.CountMax != 0 && d.CountMax < 10 && res.Stats.CounterResets == 0 {
				t.Fatalf("seed %d: COUNT_MAX %d but no counter reset", seed, d.CountMax)
			}
		})
	}
}

// checkRun fails t on any overlapping conflicting holds, and checks that the run did work and
// exercised what the algorithm is about.
func checkRun(t *testing.T, alg Algorithm, res Result, h *History) {
	t.Helper()
	if v := h.Check(5); len(v) > 0 {
		t.Fatalf("%s: %d+ violations, first: %v", alg.Name(), len(v), v[0])
	}
	if res.Txns < 20 || h.Len() < 40 {
		t.Fatalf("%s: only %d transactions, %d holds", alg.Name(), res.Txns, h.Len())
	}
	st := res.Stats
	switch alg.(type) {
	case DSLR:
		if st.Polls == 0 {
			t.Fatalf("dslr never waited: %+v", st)
		}
	case DrTM:
		if st.Conflicts == 0 || st.Joins == 0 || res.Aborts == 0 {
			t.Fatalf("drtm never conflicted or shared a lease: %+v, %d aborts", st, res.Aborts)
		}
	}
}

// checkRest checks every lock word after a complete run: DSLR counters balanced (every ticket
// released), DrTM words without a write lock.
func checkRest(t *testing.T, alg Algorithm, res Result, load func(server int, off uint64) uint64) {
	t.Helper()
	if res.Stats.Resets > 0 {
		return // a lease reset may leave counters unbalanced by design
	}
	for s, base := range res.Table.Base {
		for k := range res.Table.Slots {
			w := load(s, base.Offset()+8*uint64(k))
			switch alg.(type) {
			case DSLR:
				if nX, nS, mX, mS := dslrFields(w); nX != mX || nS != mS {
					t.Fatalf("server %d word %d at rest: nX %d nS %d maxX %d maxS %d", s, k, nX, nS, mX, mS)
				}
			case DrTM:
				if w&drtmWriteBit != 0 {
					t.Fatalf("server %d word %d still write-locked: %#x", s, k, w)
				}
			}
		}
	}
}

// Negative controls: the broken variants must be caught by the history, in virtual time (where
// the schedule is fixed by the seed, so these cannot pass by luck) and in real time. Transactions
// take their locks in address order (the exclusion tests' DSLR would otherwise deadlock, see
// TestDSLRResetOfLiveHolder).
func TestNegativeControls(t *testing.T) {
	for _, alg := range []Algorithm{DSLR{UnsafeIgnoreShared: true}, DrTM{Lease: 40_000, UnsafeIgnoreLease: true}} {
		t.Run(alg.Name()+"/sim", func(t *testing.T) {
			var h History
			_, err := RunSim(Config{Alg: alg, Servers: 1, Machines: 3, Threads: 2, Slots: 4, Place: PlaceDense,
				Source: Uniform(2, 1, 0.6, 10_000), Duration: 3_000_000, BackoffBase: 1_000, BackoffMax: 50_000,
				Seed: 1, History: &h}, ConnectX3(), 0)
			if err != nil {
				t.Fatal(err)
			}
			v := h.Check(0)
			if len(v) == 0 {
				t.Fatalf("%s: no violation in %d holds", alg.Name(), h.Len())
			}
			t.Logf("%s: %d violations in %d holds, e.g. %v", alg.Name(), len(v), h.Len(), v[0])
		})
		t.Run(alg.Name()+"/emu", func(t *testing.T) {
			if d, ok := alg.(DrTM); ok {
				// Real-time leases long enough for readers to commit, on one clock.
				t0 := time.Now()
				d.Lease, d.Delta, d.Clock = 20_000_000, 2_000_000, func() int64 { return int64(time.Since(t0)) }
				alg = d
			}
			for try := range 10 {
				c, err := emu.NewCluster(emu.Config{OpDelay: 20 * time.Microsecond, Seed: int64(try)}, 4)
				if err != nil {
					t.Fatal(err)
				}
				var h History
				_, err = Run(&rdmatest.EmuFabric{C: c}, Config{Alg: alg, Servers: 1, Machines: 3, Threads: 2, Slots: 4,
					Place: PlaceDense, Source: Uniform(2, 1, 0.6, 50_000), Duration: int64(100 * time.Millisecond),
					BackoffBase: 1_000, BackoffMax: 50_000, Seed: int64(try), History: &h})
				c.Close()
				if err != nil {
					t.Fatal(err)
				}
				if v := h.Check(1); len(v) > 0 {
					t.Logf("%s: caught in run %d: %v", alg.Name(), try, v[0])
					return
				}
			}
			t.Fatalf("%s: no violation in 10 real-time runs", alg.Name())
		})
	}
}

// The driver's accounting on a workload without contention: no aborts, no waiting, one lock per
// transaction, and the throughput the closed loop must give (threads / round trips).
func TestDriverNoContention(t *testing.T) {
	c := ConnectX3()
	c.WireJitter = -1
	for _, alg := range []Algorithm{DSLR{}, DrTM{}} {
		res, err := RunSim(Config{Alg: alg, Servers: 2, Machines: 2, Threads: 2, Place: PlaceDense,
			Source: Private(2, 4, Exclusive, 0), Warmup: 100_000, Duration: 1_000_000, Seed: 3}, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.Aborts != 0 || res.Stats.Polls != 0 || res.Stats.Conflicts != 0 || res.Txns != res.Locks {
			t.Fatalf("%s: %+v", alg.Name(), res)
		}
		// One lock + unlock = two atomic round trips per transaction and thread.
		s, _ := sim.New(sim.Config{Nodes: 1, Cost: c})
		k := s.Cost()
		rtt := float64(k.PostOp + k.NICOp + k.OneWay + k.NICAtomic + k.OneWay)
		want := 4 / (2 * rtt * 1e-9)
		if got := res.TxnRate; got < 0.97*want || got > 1.03*want {
			t.Fatalf("%s: %.0f txn/s, want about %.0f", alg.Name(), got, want)
		}
		if p50 := float64(res.Acquire.P50); p50 < 0.97*rtt || p50 > 1.03*rtt {
			t.Fatalf("%s: acquire p50 %v, want %v ns", alg.Name(), res.Acquire.P50, rtt)
		}
	}
}

// skewedDrTM is DrTM whose clients read leases on their endpoint's clock plus their node's
// skew: clocks that disagree by more than Delta, on rdma/sim's virtual time (deterministic for a
// seed, unlike wall-clock skew on the emulator, which a loaded machine can hide).
type skewedDrTM struct {
	DrTM
	skew map[verbs.NodeID]int64
}

func (d skewedDrTM) NewClient(ep verbs.Endpoint, id uint64, r *rand.Rand) (Client, error) {
	off := d.skew[ep.Node()]
	d.Clock = func() int64 { return ep.Now() + off }
	return d.DrTM.NewClient(ep, id, r)
}

// DrTM is safe only while the clocks agree within Delta: with two client machines' clocks 10
// and 40 us ahead of the third and Delta 2 us, a writer on a fast clock takes over leases that
// are still valid for readers on the slow one, and the history sees it. Negative control: the
// same runs with every clock equal see no violation.
func TestDrTMClockSkew(t *testing.T) {
	run := func(skew map[verbs.NodeID]int64, seed int64) (int, []Violation) {
		s, err := sim.New(sim.Config{Nodes: 2 + 3, RegionSize: 1 << 20, Cost: ConnectX3(), Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var h History
		cfg := Config{Alg: skewedDrTM{DrTM{Lease: 50_000, Delta: 2_000}, skew}, Servers: 2, Machines: 3,
			Threads: 2, Slots: 4, Place: PlaceDense, Source: Uniform(2, 1, 0.6, 5_000), Duration: 3_000_000,
			BackoffBase: 1_000, BackoffMax: 50_000, Seed: seed, History: &h}
		if _, err := Run(&rdmatest.SimFabric{S: s, Until: cfg.Duration + 2_000_000}, cfg); err != nil {
			t.Fatal(err)
		}
		return h.Len(), h.Check(1)
	}
	for seed := int64(1); seed <= 3; seed++ {
		if n, v := run(nil, seed); len(v) > 0 {
			t.Fatalf("seed %d, equal clocks: %v (of %d holds)", seed, v[0], n)
		}
		n, v := run(map[verbs.NodeID]int64{3: 10_000, 4: 40_000}, seed)
		if len(v) == 0 {
			t.Fatalf("seed %d: clocks 40 us apart with Delta 2 us: no violation in %d holds", seed, n)
		}
		t.Logf("seed %d: skew beyond Delta caught: %v", seed, v[0])
	}
}

// TestReadsAndServerOf: transactions with read-committed reads (Txn.Reads) keep exclusion (the
// history checks the short read holds against every other hold) and count their reads as
// grants (negative control: DSLR granting writers over readers is caught on the reads); ServerOf
// puts every lock on the server it names, and without it locks are hashed onto both (negative
// control).
func TestReadsAndServerOf(t *testing.T) {
	seed := rdmatest.Seed(t)
	src := func(_, _ int, s uint64) func() Txn {
		r := rand.New(rand.NewSource(int64(s)))
		// Reads wait only on writers that hold nothing else: no deadlock (a read taken while
		// holding locks can deadlock like any other request).
		return func() Txn {
			if r.Intn(2) == 0 {
				return Txn{Locks: []Request{{Lock: 4 + uint32(r.Intn(4)), Mode: Exclusive}}, Hold: 2_000}
			}
			return Txn{Locks: []Request{{Lock: uint32(r.Intn(4)), Mode: Exclusive}},
				Reads: []Request{{Lock: 4 + uint32(r.Intn(4)), Mode: Shared}, {Lock: 4 + uint32(r.Intn(4)), Mode: Shared}}, Hold: 2_000}
		}
	}
	// The negative control is DSLR granting writers over readers. (DrTM's, overwriting read
	// leases, cannot show here: a read's hold closes as soon as its lease is taken, before any
	// writer can overwrite it.)
	for _, alg := range []Algorithm{DSLR{}, DrTM{Lease: 40_000}, DSLR{UnsafeIgnoreShared: true}} {
		unsafe := alg.Name() != "dslr" && alg.Name() != "drtm"
		for _, onOne := range []bool{true, false} {
			if unsafe && !onOne {
				continue
			}
			t.Run(fmt.Sprintf("%s/server-of=%v", alg.Name(), onOne), func(t *testing.T) {
				s, err := sim.New(sim.Config{Nodes: 2 + 3, RegionSize: 1 << 20, Cost: ConnectX3(), Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				var h History
				cfg := Config{Alg: alg, Servers: 2, Machines: 3, Threads: 2, Slots: 64, Source: src, Duration: 3_000_000,
					BackoffBase: 1_000, BackoffMax: 100_000, SortLocks: true, Seed: seed, History: &h}
				if onOne {
					cfg.ServerOf = func(uint32) int { return 3 } // 3 mod 2: server 1
				}
				res, err := Run(&rdmatest.SimFabric{S: s, Until: cfg.Duration + 2_000_000}, cfg)
				if err != nil {
					t.Fatal(err)
				}
				v := h.Check(5)
				if unsafe {
					// Negative control: writers that ignore readers must overlap the reads.
					if len(v) == 0 {
						t.Fatalf("%s: no violation in %d holds", alg.Name(), h.Len())
					}
					t.Logf("%s: %d+ violations, first %v", alg.Name(), len(v), v[0])
					return
				}
				if len(v) > 0 {
					t.Fatalf("%d+ violations, first %v", len(v), v[0])
				}
				if res.Txns < 20 || res.Locks < res.Txns*3/2 {
					t.Fatalf("%d txns, %d grants: reads not counted", res.Txns, res.Locks)
				}
				used := make([]int, 2)
				for sv, base := range res.Table.Base {
					mem := s.Endpoint(sv).Local()
					for k := range res.Table.Slots {
						if mem.Load(base.Offset()+8*uint64(k)) != 0 {
							used[sv]++
						}
					}
				}
				t.Logf("%d txns, %d grants, %d aborts; words used per server %v", res.Txns, res.Locks, res.Aborts, used)
				if alg.Name() != "dslr" {
					return // DrTM's words return to 0 (or hold a lease end)
				}
				if onOne && (used[0] != 0 || used[1] == 0) || !onOne && (used[0] == 0 || used[1] == 0) {
					t.Errorf("words used per server %v", used)
				}
			})
		}
	}
}

// fakeClient fails its first conflicts acquisitions with ErrConflict (or err, if set, every
// time) and counts what it is asked.
type fakeClient struct {
	conflicts          int
	err                error
	acquires, releases int
	stats              Stats
}

func (f *fakeClient) Acquire(w verbs.Ptr, m Mode) (Hold, error) {
	f.acquires++
	if f.err != nil {
		return Hold{}, f.err
	}
	if f.acquires <= f.conflicts {
		return Hold{}, ErrConflict
	}
	return Hold{Word: w, Mode: m}, nil
}
func (f *fakeClient) Validate(Hold) error { return nil }
func (f *fakeClient) Release(Hold) error  { f.releases++; return nil }
func (f *fakeClient) Stats() *Stats       { return &f.stats }

// TestReadRetriesConflicts: a read-committed read that finds its lock taken is retried on its
// own, after backoffs, until it is granted; a reset aborts at once; a read still refused at the
// end of the run gives up with the conflict.
func TestReadRetriesConflicts(t *testing.T) {
	for _, c := range []struct {
		name     string
		f        *fakeClient
		end      int64
		want     error
		acquires int
	}{
		{"granted after 3 conflicts", &fakeClient{conflicts: 3}, 1 << 40, nil, 4},
		{"reset", &fakeClient{err: ErrReset}, 1 << 40, ErrReset, 1},
		{"run over", &fakeClient{conflicts: 1 << 30}, 200_000, ErrConflict, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := sim.New(sim.Config{Nodes: 2, RegionSize: 1 << 20, Cost: ConnectX3(), Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			var got error
			var spent int64
			s.Go(1, func(ep verbs.Endpoint) error {
				th := &thread{ep: ep}
				cfg := Config{BackoffBase: 10_000, BackoffMax: 100_000}
				t0 := ep.Now()
				got = th.read(c.f, nil, wreq{w: verbs.MakePtr(0, 0), m: Shared}, 1, rand.New(rand.NewSource(1)), &cfg, c.end)
				spent = ep.Now() - t0
				return nil
			})
			if err := s.Run(1 << 41); err != nil {
				t.Fatal(err)
			}
			if !errors.Is(got, c.want) && got != c.want {
				t.Fatalf("read: %v, want %v", got, c.want)
			}
			if c.acquires >= 0 && c.f.acquires != c.acquires {
				t.Errorf("%d acquisitions, want %d", c.f.acquires, c.acquires)
			}
			if wantRel := map[bool]int{true: 1, false: 0}[c.want == nil]; c.f.releases != wantRel {
				t.Errorf("%d releases, want %d", c.f.releases, wantRel)
			}
			if c.f.conflicts > 0 && spent == 0 {
				t.Error("retries without backoff")
			}
		})
	}
}
