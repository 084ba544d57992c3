package rma_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// countRun runs ops acquisitions per process of an RMA lock in virtual time (F_W = fw) and
// returns the summed protocol counts and the number of shared acquisitions made.
func countRun(t *testing.T, cfg rma.Config, ops int, fw float64, seed int64) (rma.Counts, int64, int64) {
	t.Helper()
	s, err := sim.New(sim.Config{Nodes: cfg.Nodes, RegionSize: 1 << 20, Seed: seed, OpJitter: 100})
	if err != nil {
		t.Fatal(err)
	}
	l, err := rma.New(cfg, func(n int, size uint64) (verbs.Ptr, error) { return s.Endpoint(n).Alloc(size) })
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Nodes * cfg.ProcsPerNode
	hs := make([]*rma.Handle, p)
	reads, writes := make([]int64, p), make([]int64, p)
	for r := 0; r < p; r++ {
		rank := r
		rng := rand.New(rand.NewSource(seed*7919 + int64(r)))
		s.Go(r/cfg.ProcsPerNode, func(ep verbs.Endpoint) error {
			h, err := l.Handle(rank, ep)
			if err != nil {
				return err
			}
			hs[rank] = h
			for i := 0; i < ops; i++ {
				if fw >= 1 || (cfg.Readers && rng.Float64() < fw) || !cfg.Readers {
					writes[rank]++
					if err := h.Lock(); err != nil {
						return err
					}
					rmatestThink(ep, 2)
					if err := h.Unlock(); err != nil {
						return err
					}
				} else {
					reads[rank]++
					if err := h.RLock(); err != nil {
						return err
					}
					rmatestThink(ep, 2)
					if err := h.RUnlock(); err != nil {
						return err
					}
				}
				rmatestThink(ep, rng.Intn(4))
			}
			return nil
		})
	}
	if err := s.Run(1 << 62); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	var c rma.Counts
	var nr, nw int64
	for r, h := range hs {
		c.Add(h.Counts())
		nr += reads[r]
		nw += writes[r]
	}
	return c, nr, nw
}

func rmatestThink(ep verbs.Endpoint, n int) { rdmatest.Think(n)(ep) }

// The counts are consistent with the workload and with each other: every shared acquisition
// is one reader entry, every T_R hit ends in exactly one of (writer queued, claim lost,
// reset), every writer phase begun is ended, and the thresholds act where they must.
func TestCounts(t *testing.T) {
	s := rdmatest.Seed(t)
	for _, tc := range []struct {
		name string
		cfg  rma.Config
		fw   float64
		// want reports what must hold for the counts c.
		want func(c rma.Counts) error
	}{
		{"readers only, T_R=3", rma.Config{Nodes: 2, ProcsPerNode: 3, Elements: []int{3}, Readers: true, TR: 3}, 0,
			func(c rma.Counts) error {
				if c.TRResets == 0 || c.WritePhases != 0 {
					return fmt.Errorf("T_R=3 with readers only: %d resets, %d writer phases", c.TRResets, c.WritePhases)
				}
				return nil
			}},
		{"readers only, T_R=1000", rma.Config{Nodes: 2, ProcsPerNode: 3, Elements: []int{3}, Readers: true, TR: 1000}, 0,
			func(c rma.Counts) error {
				if c.TRHits != 0 || c.TRResets != 0 {
					return fmt.Errorf("T_R=1000 with 90 arrivals per counter: %d hits, %d resets", c.TRHits, c.TRResets)
				}
				return nil
			}},
		{"mixed, T_R=4, T_L=2,2", rma.Config{Nodes: 2, ProcsPerNode: 3, Elements: []int{3}, Readers: true, TR: 4, TL: []int{2, 2}}, 0.4,
			func(c rma.Counts) error {
				if c.WritePhases == 0 || c.TRHits == 0 || c.Passes[1]+c.TLHits[1] == 0 {
					return fmt.Errorf("mixed run without phases, T_R hits or node-level hand-overs: %+v", c)
				}
				return nil
			}},
		{"RMA-MCS, T_L,2=2", rma.Config{Nodes: 3, ProcsPerNode: 3, Elements: []int{3}, TL: []int{1, 2}}, 1,
			func(c rma.Counts) error {
				if c.TLHits[1] == 0 || c.Passes[0] == 0 || c.TLHits[0] != 0 {
					return fmt.Errorf("RMA-MCS T_L,2=2: %+v", c)
				}
				return nil
			}},
		{"RMA-MCS, T_L,2=10^6", rma.Config{Nodes: 3, ProcsPerNode: 3, Elements: []int{3}, TL: []int{1, 1 << 20}}, 1,
			func(c rma.Counts) error {
				if c.TLHits[1] != 0 {
					return fmt.Errorf("T_L,2 never reachable but %d hits", c.TLHits[1])
				}
				return nil
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, reads, _ := countRun(t, tc.cfg, 30, tc.fw, s)
			t.Logf("%+v", c)
			if c.ReaderEntries != reads {
				t.Errorf("%d reader entries for %d shared acquisitions", c.ReaderEntries, reads)
			}
			if got := c.TRWriterQueued + c.TRClaimLost + c.TRResets; got != c.TRHits {
				t.Errorf("%d T_R hits, %d+%d+%d outcomes", c.TRHits, c.TRWriterQueued, c.TRClaimLost, c.TRResets)
			}
			if c.WritePhases != c.WriterResets {
				t.Errorf("%d writer phases begun, %d ended", c.WritePhases, c.WriterResets)
			}
			if c.BackOffs < c.TRWriterQueued+c.TRClaimLost {
				t.Errorf("%d back-offs < %d+%d", c.BackOffs, c.TRWriterQueued, c.TRClaimLost)
			}
			if err := tc.want(c); err != nil {
				t.Errorf("seed %d: %v", s, err)
			}
		})
	}
}
