package tpcc

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/netlock-go/netlock/alloc"
)

// Trace is a lock trace: transactions as the terminal that ran them and their lock ids (the
// modes do not matter to the switch share). The zero value is empty and ready to use.
type Trace struct {
	term  []int32
	off   []int // transaction i's locks are locks[off[i]:off[i+1]]
	locks []uint32
}

// Add appends a transaction run by terminal term.
func (tr *Trace) Add(term int, locks []uint32) {
	if len(tr.off) == 0 {
		tr.off = append(tr.off, 0)
	}
	tr.term = append(tr.term, int32(term))
	tr.locks = append(tr.locks, locks...)
	tr.off = append(tr.off, len(tr.locks))
}

// AddTxn appends tx (its Terminal and lock ids, its read-committed Reads included: they are
// requests too).
func (tr *Trace) AddTxn(tx *Txn) {
	if len(tr.off) == 0 {
		tr.off = append(tr.off, 0)
	}
	tr.term = append(tr.term, int32(tx.Terminal))
	for _, l := range tx.Locks {
		tr.locks = append(tr.locks, l.Lock)
	}
	for _, l := range tx.Reads {
		tr.locks = append(tr.locks, l.Lock)
	}
	tr.off = append(tr.off, len(tr.locks))
}

// Txns is the number of transactions and Requests the number of lock requests.
func (tr *Trace) Txns() int     { return len(tr.term) }
func (tr *Trace) Requests() int { return len(tr.locks) }

// Txn returns transaction i's terminal and locks (not to be modified).
func (tr *Trace) Txn(i int) (term int, locks []uint32) {
	return int(tr.term[i]), tr.locks[tr.off[i]:tr.off[i+1]]
}

// Generate appends txns transactions of each of terminals terminals (ids 0..terminals-1,
// terminal i seeded by seed and i) drawn round-robin, one transaction of each terminal in turn.
func (wl *Workload) Generate(tr *Trace, terminals, txns int, seed uint64) {
	ts := make([]*Terminal, terminals)
	for i := range ts {
		ts[i] = wl.Terminal(i, seed*0x9E3779B97F4A7C15+uint64(i)+1)
	}
	var tx Txn
	for range txns {
		for _, t := range ts {
			t.Next(&tx)
			tr.AddTxn(&tx)
		}
	}
}

// Demand is one lock's demand in a trace: its requests and the distinct terminals that ask for
// it (the most requests for it that can be outstanding at once: NetLock's contention c_i, the
// rule of FissLock's re-implementation of NetLock's allocator, experiments/netlock/
// netlock_analysis.py).
type Demand struct {
	Lock      uint32
	Requests  int
	Terminals int
}

// Demands returns the trace's demand per lock, by lock id.
func (tr *Trace) Demands() []Demand {
	type st struct {
		n     int
		terms []int32
	}
	m := make(map[uint32]*st)
	for i := range tr.term {
		t := tr.term[i]
		for _, l := range tr.locks[tr.off[i]:tr.off[i+1]] {
			s := m[l]
			if s == nil {
				s = &st{}
				m[l] = s
			}
			s.n++
			if j, found := slices.BinarySearch(s.terms, t); !found {
				s.terms = slices.Insert(s.terms, j, t)
			}
		}
	}
	out := make([]Demand, 0, len(m))
	for l, s := range m {
		out = append(out, Demand{Lock: l, Requests: s.n, Terminals: len(s.terms)})
	}
	slices.SortFunc(out, func(a, b Demand) int { return cmp.Compare(a.Lock, b.Lock) })
	return out
}

// Alloc is a switch allocation: for each switch-resident lock, the fraction of its requests the
// switch grants (1 for a lock with a slot for every possible waiter; s_i/c_i for one with s_i of
// its c_i slots: the rest overflow to a lock server, alloc's model). Locks not in it are the
// servers'.
type Alloc struct {
	frac  map[uint32]float64
	slots int
}

// NewAlloc returns the allocation of the given fractions (each in (0, 1]) using slots slots.
func NewAlloc(frac map[uint32]float64, slots int) Alloc { return Alloc{frac: frac, slots: slots} }

// Fraction is the share of lock's requests the switch grants.
func (a Alloc) Fraction(lock uint32) float64 { return a.frac[lock] }

// Locks is the number of switch-resident locks and Slots the slots they use.
func (a Alloc) Locks() int { return len(a.frac) }
func (a Alloc) Slots() int { return a.slots }

// AllocConfig configures Allocate.
type AllocConfig struct {
	// Slots is the switch's queue slots (NetLock's Tofino program: 100 000 in the paper's text,
	// 130 000 in its code; netlock.p4 here: 32 768).
	Slots int
	// MaxLocks bounds the switch-resident locks (0: no limit; NetLock's Tofino program 55 000,
	// netlock.p4 16 384). When more get slots, the knapsack keeps those of the highest r_i/c_i and
	// the random strategy a random subset.
	MaxLocks int
	// MaxContention, if > 0, caps a lock's contention c_i (the slots that serve all its
	// requests): the terminals that ask for a lock bound how many of its requests can wait at
	// once, but fewer may ever do.
	MaxContention int
	// Strategy is alloc.StrategyKnapsack (the paper's, Algorithm 3) or alloc.StrategyRandom
	// (Figure 13's strawman), seeded by Seed.
	Strategy alloc.Strategy
	Seed     uint64
}

// Allocate places the demands' locks in a switch: rate r_i = requests, contention c_i =
// terminals (capped by MaxContention), alloc.Knapsack or alloc.Random over Slots slots.
func Allocate(ds []Demand, c AllocConfig) Alloc {
	items := make([]alloc.Item, len(ds))
	for i, d := range ds {
		ct := max(1, d.Terminals)
		if c.MaxContention > 0 {
			ct = min(ct, c.MaxContention)
		}
		items[i] = alloc.Item{Lock: d.Lock, Rate: float64(d.Requests), Contention: ct}
	}
	var got []int
	if c.Strategy == alloc.StrategyRandom {
		got = alloc.Random(items, c.Slots, c.Seed)
	} else {
		got = alloc.Knapsack(items, c.Slots, 0)
	}
	var in []int
	for i, n := range got {
		if n > 0 {
			in = append(in, i)
		}
	}
	if c.MaxLocks > 0 && len(in) > c.MaxLocks {
		key := func(i int) float64 { return items[i].Rate / float64(items[i].Contention) }
		if c.Strategy == alloc.StrategyRandom {
			key = func(i int) float64 { return float64(mix(c.Seed ^ uint64(items[i].Lock))) }
		}
		slices.SortStableFunc(in, func(a, b int) int { return cmp.Compare(key(b), key(a)) })
		in = in[:c.MaxLocks]
	}
	a := Alloc{frac: make(map[uint32]float64, len(in))}
	for _, i := range in {
		a.frac[items[i].Lock] = float64(min(got[i], items[i].Contention)) / float64(items[i].Contention)
		a.slots += min(got[i], items[i].Contention)
	}
	return a
}

// Share is what a switch allocation does for a trace.
type Share struct {
	Txns, Requests int
	// Switch is the number of requests the switch grants (fractional for partly resident
	// locks) and S = Switch / Requests, the measured switch share.
	Switch, S float64
	// Whole is the share of transactions whose every lock the switch grants (the product of
	// their fractions).
	Whole float64
	// Locks is the number of switch-resident locks.
	Locks int
}

// Analyze measures the switch share of a trace under an allocation.
func Analyze(tr *Trace, a Alloc) Share {
	s := Share{Txns: tr.Txns(), Requests: tr.Requests(), Locks: a.Locks()}
	for i := range tr.term {
		whole := 1.0
		for _, l := range tr.locks[tr.off[i]:tr.off[i+1]] {
			f := a.frac[l]
			s.Switch += f
			whole *= f
		}
		s.Whole += whole
	}
	if s.Requests > 0 {
		s.S = s.Switch / float64(s.Requests)
	}
	if s.Txns > 0 {
		s.Whole /= float64(s.Txns)
	}
	return s
}

// ServerBound is the most the switch can multiply throughput by when the lock servers are the
// bottleneck: the servers grant at most R requests per second and now see only the share 1-S of
// them, so throughput is at most R/(1-S) against R without a switch: 1/(1-S) (+Inf at S = 1).
func (s Share) ServerBound() float64 { return 1 / (1 - s.S) }

// ServerBoundOver is the same bound against another allocation (Figure 13's random strawman):
// (1-base.S)/(1-S).
func (s Share) ServerBoundOver(base Share) float64 { return (1 - base.S) / (1 - s.S) }

// LatencyBound is the most the switch can multiply throughput by when the clients' concurrency,
// not the servers, is the limit (a closed loop: throughput is terminals over transaction
// latency), if a switch grant takes ratio times a server grant and nothing waits on contention.
// Locks taken one after the other (pipelined false): a transaction's latency is the sum of its
// grants, and over the trace the gain is 1/(1 - S(1-ratio)). Locks requested all at once
// (pipelined true, NetLock's clients): a transaction waits for its slowest grant, a server's
// unless the switch grants them all, and the gain is 1/(1 - Whole(1-ratio)). Both are below
// ServerBound for ratio > 0.
func (s Share) LatencyBound(ratio float64, pipelined bool) float64 {
	f := s.S
	if pipelined {
		f = s.Whole
	}
	return 1 / (1 - f*(1-ratio))
}

// Report writes the cap a TPC-C figure prints next to its numbers: the measured share, the
// server-bound cap and the latency-bound caps for a switch grant costing ratio times a server
// grant.
func (s Share) Report(w io.Writer, ratio float64) error {
	_, err := fmt.Fprintf(w, "switch share s = %.1f%% of %d requests (%d locks in the switch); cap if the servers are the bottleneck 1/(1-s) = %.2fx; "+
		"if the clients are (switch grant %.2f of a server's): %.2fx with locks taken in turn, %.2fx with locks requested at once (%.1f%% of transactions wholly in the switch)\n",
		100*s.S, s.Requests, s.Locks, s.ServerBound(), ratio, s.LatencyBound(ratio, false), s.LatencyBound(ratio, true), 100*s.Whole)
	return err
}
