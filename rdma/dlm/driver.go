package dlm

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/netlock-go/netlock/internal/latency"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Request is one lock of a transaction.
type Request struct {
	Lock uint32
	Mode Mode
}

// Txn is one transaction: the locks it takes, in order (DSLR and DrTM take a transaction's
// locks one after the other and hold them all until it commits), the work it does while holding
// them (Hold, ns of CPU) and a label for per-kind counts (e.g. "neworder").
type Txn struct {
	Locks []Request
	// Reads are read-committed reads (TPC-C's Stock-Level): once Locks are held, each is
	// acquired (in its mode) and released at once, one after the other, before Hold. A read
	// that finds its lock taken (DrTM's conflict) is retried on its own after a backoff; another
	// abort (a DSLR reset) aborts the transaction. A read of a word the transaction holds is
	// skipped (the hold covers it).
	Reads []Request
	Hold  int64
	Kind  string
}

// Source makes the transaction generator of one client thread: machine in [0, Machines), thread
// in [0, Threads), and a seed distinct per thread. The generator is called only by that thread.
// The TPC-C generator of testbed plugs in here.
type Source func(machine, thread int, seed uint64) func() Txn

// Placement says how a lock id maps to a lock word.
type Placement uint8

// Placements.
const (
	// PlaceHash hashes ids onto Servers x Slots words (sparse ids such as TPC-C's; ids that
	// collide share a word).
	PlaceHash Placement = iota
	// PlaceDense puts id on server id % Servers, word id / Servers (ids must be below
	// Servers x Slots): no collisions, for microbenchmarks.
	PlaceDense
)

// Config configures a closed-loop run: Machines client machines with Threads threads each run
// transactions from Source back to back against lock tables on Servers lock servers. On a fabric,
// nodes 0..Servers-1 are the servers and Servers..Servers+Machines-1 the clients.
type Config struct {
	// Alg is the lock algorithm (DSLR, DrTM).
	Alg Algorithm
	// Servers, Machines, Threads: must be >= 1.
	Servers, Machines, Threads int
	// Slots is the number of lock words per server (default 1<<16).
	Slots int
	// Place maps ids to words (default PlaceHash).
	Place Placement
	// ServerOf, if set (with PlaceHash), puts lock id on server ServerOf(id) mod Servers, hashed
	// onto that server's Slots words: DSLR keeps a warehouse's locks on its lock manager.
	ServerOf func(id uint32) int
	// Source generates the transactions. Required.
	Source Source
	// Think is the CPU time between two transactions of a thread, ns.
	Think int64
	// BackoffBase and BackoffMax bound the random exponential backoff after an aborted attempt:
	// uniform in [0, min(max, base x 2^attempt)) (10 us and 10 ms: the DSLR authors' scripts,
	// base_backoff and max_backoff); negative: no backoff.
	BackoffBase, BackoffMax int64
	// SortLocks takes a transaction's words in address order instead of the source's order
	// (deadlock-free for DSLR; the papers' drivers keep the source's order).
	SortLocks bool
	// Warmup and Duration (ns of the endpoints' clock): transactions that commit in [Warmup,
	// Warmup+Duration) are measured; threads start no transaction after that.
	Warmup, Duration int64
	// Seed seeds the generators and backoffs.
	Seed int64
	// History, if set, records every hold for Check.
	History *History
}

func (c *Config) validate(nodes int) error {
	if c.Alg == nil || c.Source == nil {
		return errors.New("dlm: config needs an algorithm and a source")
	}
	if c.Servers < 1 || c.Machines < 1 || c.Threads < 1 || c.Servers+c.Machines > nodes {
		return fmt.Errorf("dlm: %d servers + %d machines x %d threads on %d nodes", c.Servers, c.Machines, c.Threads, nodes)
	}
	if c.Slots == 0 {
		c.Slots = 1 << 16
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = 10_000
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = 10_000_000
	}
	if c.Slots < 1 || c.Duration <= 0 || c.Warmup < 0 || c.Think < 0 {
		return fmt.Errorf("dlm: slots %d, warm-up %d, duration %d, think %d", c.Slots, c.Warmup, c.Duration, c.Think)
	}
	return nil
}

// Result is a run's outcome. Counts and latencies cover the transactions that committed in the
// measured window; Stats and Verbs cover the whole run.
type Result struct {
	Alg                        string
	Servers, Machines, Threads int
	// Window is the measured time, ns.
	Window int64
	// Txns committed, Aborts (attempts that aborted), Locks granted to committed transactions.
	Txns, Aborts, Locks uint64
	// TxnRate and LockRate are per second of the window.
	TxnRate, LockRate float64
	// Acquire is a transaction's locking latency: from its first attempt to the grant of its last
	// lock in the attempt that committed (retries and backoffs included); Total runs to the end
	// of its release.
	Acquire, Total latency.Latency
	// Kinds counts committed transactions by Txn.Kind.
	Kinds map[string]uint64
	// AllTxns is every committed transaction of the run.
	AllTxns uint64
	Stats   Stats
	Verbs   verbs.StatsSnapshot
	// Table is the run's lock table (for checks of the final words).
	Table *Table `json:"-"`
}

type wreq struct {
	w verbs.Ptr
	m Mode
}

type thread struct {
	ep                  verbs.Endpoint
	cl                  Client
	acq, total          latency.Histogram
	txns, aborts, locks uint64
	all                 uint64
	kinds               map[string]uint64
}

// Run runs cfg on the fabric and returns the measured result. On rdma/sim the fabric's Wait
// runs until its own limit; threads still inside a transaction then are stopped (their partial
// transaction is not counted).
func Run(f rdmatest.Fabric, cfg Config) (Result, error) {
	if err := cfg.validate(f.Nodes()); err != nil {
		return Result{}, err
	}
	var servers []verbs.Endpoint
	for s := range cfg.Servers {
		servers = append(servers, f.Endpoint(s))
	}
	tbl, err := NewTable(servers, cfg.Slots)
	if err != nil {
		return Result{}, err
	}
	word := func(id uint32) verbs.Ptr {
		if cfg.Place == PlaceDense {
			s := int(id) % cfg.Servers
			return tbl.Base[s].Add(8 * uint64(int(id)/cfg.Servers%cfg.Slots))
		}
		if cfg.ServerOf != nil {
			s := cfg.ServerOf(id) % cfg.Servers
			if s < 0 {
				s += cfg.Servers
			}
			return tbl.WordOn(s, id)
		}
		return tbl.Word(id)
	}
	ths := make([]*thread, cfg.Machines*cfg.Threads)
	for m := range cfg.Machines {
		for t := range cfg.Threads {
			i := m*cfg.Threads + t
			th := &thread{kinds: map[string]uint64{}}
			ths[i] = th
			seed := uint64(cfg.Seed)*0x9E3779B97F4A7C15 + uint64(i)*0xBF58476D1CE4E5B9 + 1
			f.Go(cfg.Servers+m, func(ep verbs.Endpoint) error {
				return th.run(ep, &cfg, word, uint64(i+1), m, t, seed)
			})
		}
	}
	if err := f.Wait(); err != nil {
		return Result{}, err
	}
	res := Result{Alg: cfg.Alg.Name(), Servers: cfg.Servers, Machines: cfg.Machines, Threads: cfg.Threads,
		Window: cfg.Duration, Kinds: map[string]uint64{}, Table: tbl}
	var acq, total latency.Histogram
	for _, th := range ths {
		if th.cl == nil {
			continue
		}
		acq.Merge(&th.acq)
		total.Merge(&th.total)
		res.Txns += th.txns
		res.Aborts += th.aborts
		res.Locks += th.locks
		res.AllTxns += th.all
		for k, v := range th.kinds {
			res.Kinds[k] += v
		}
		res.Stats.Add(th.cl.Stats())
		v := th.ep.Stats().Snapshot()
		res.Verbs = addSnap(res.Verbs, v)
	}
	secs := float64(cfg.Duration) / 1e9
	res.TxnRate, res.LockRate = float64(res.Txns)/secs, float64(res.Locks)/secs
	res.Acquire, res.Total = acq.Summary(), total.Summary()
	return res, nil
}

func addSnap(a, b verbs.StatsSnapshot) verbs.StatsSnapshot {
	return verbs.StatsSnapshot{Reads: a.Reads + b.Reads, Writes: a.Writes + b.Writes, CASes: a.CASes + b.CASes,
		FAAs: a.FAAs + b.FAAs, MaskedCASes: a.MaskedCASes + b.MaskedCASes, MaskedFAAs: a.MaskedFAAs + b.MaskedFAAs,
		Words: a.Words + b.Words, Sends: a.Sends + b.Sends, Loopback: a.Loopback + b.Loopback,
		RemoteSpins: a.RemoteSpins + b.RemoteSpins, LocalOps: a.LocalOps + b.LocalOps, LocalSpins: a.LocalSpins + b.LocalSpins}
}

// run is one client thread's closed loop. Its counters are updated as transactions commit, so a
// thread stopped mid-transaction (rdma/sim at its limit) leaves consistent counts.
func (th *thread) run(ep verbs.Endpoint, cfg *Config, word func(uint32) verbs.Ptr, id uint64, m, t int, seed uint64) error {
	r := rand.New(rand.NewSource(int64(seed)))
	cl, err := cfg.Alg.NewClient(ep, id, rand.New(rand.NewSource(int64(seed>>1)+7)))
	if err != nil {
		return err
	}
	th.ep, th.cl = ep, cl
	next := cfg.Source(m, t, seed)
	hist := cfg.History
	end := cfg.Warmup + cfg.Duration
	var reqs, reads []wreq
	var holds []Hold
	var starts []uint64
	// release gives up every hold, last first; ended is the sequence the holds' intervals end at
	// (0: take one before each release), and only holds that protected the transaction (not a
	// DrTM lease whose validation failed or never happened) are recorded.
	release := func(ended uint64, committed bool) error {
		for i := len(holds) - 1; i >= 0; i-- {
			h := holds[i]
			if hist != nil && (committed || h.LeaseEnd == 0) {
				e := ended
				if e == 0 {
					e = hist.Tick()
				}
				hist.Add(Interval{Word: h.Word, Mode: h.Mode, Start: starts[i], End: e, Owner: id})
			}
			if err := cl.Release(h); err != nil {
				return err
			}
		}
		holds, starts = holds[:0], starts[:0]
		return nil
	}
	for ep.Now() < end {
		tx := next()
		reqs = words(reqs[:0], tx.Locks, word, cfg.SortLocks)
		reads = words(reads[:0], tx.Reads, word, false)
		// A read whose word the transaction holds (ids that share a word) is covered by the hold.
		reads = slices.DeleteFunc(reads, func(r wreq) bool {
			return slices.ContainsFunc(reqs, func(q wreq) bool { return q.w == r.w })
		})
		begin := ep.Now()
		committed := false
		for attempt := 0; ; attempt++ {
			var abort error
			for _, q := range reqs {
				h, err := cl.Acquire(q.w, q.m)
				if err != nil {
					if !errors.Is(err, ErrAbort) {
						return err
					}
					abort = err
					break
				}
				holds = append(holds, h)
				if hist != nil {
					starts = append(starts, hist.Tick())
				}
			}
			for i := 0; abort == nil && i < len(reads); i++ {
				if abort = th.read(cl, hist, reads[i], id, r, cfg, end); abort != nil && !errors.Is(abort, ErrAbort) {
					return abort
				}
			}
			acquired := ep.Now()
			if abort == nil {
				verbs.Spend(ep, tx.Hold)
				var ended uint64
				if hist != nil {
					ended = hist.Tick()
				}
				for _, h := range holds {
					if abort = cl.Validate(h); abort != nil {
						break
					}
				}
				if abort == nil {
					if err := release(ended, true); err != nil {
						return err
					}
					if now := ep.Now(); now >= cfg.Warmup && now < end {
						th.acq.Record(time.Duration(acquired - begin))
						th.total.Record(time.Duration(now - begin))
						th.txns++
						th.locks += uint64(len(reqs) + len(reads))
						th.kinds[tx.Kind]++
					}
					th.all++
					committed = true
				} else if !errors.Is(abort, ErrAbort) {
					return abort
				}
			}
			if committed {
				break
			}
			if err := release(0, false); err != nil {
				return err
			}
			if now := ep.Now(); now >= cfg.Warmup && now < end {
				th.aborts++
			}
			if ep.Now() >= end {
				break // give the transaction up: the run is over
			}
			if cfg.BackoffBase > 0 && cfg.BackoffMax > 0 {
				verbs.Spend(ep, backoff(r, cfg.BackoffBase, cfg.BackoffMax, attempt))
			}
		}
		verbs.Spend(ep, cfg.Think)
	}
	return nil
}

// read takes q and gives it up at once (a read-committed read), recording the hold. A read that
// finds the lock taken (DrTM's ErrConflict) is retried on its own after a backoff until end: it
// holds nothing, so waiting for it cannot deadlock, and a read-committed read need not undo the
// transaction. Other aborts (a DSLR reset) abort the transaction; a non-abort error is returned
// as is.
func (th *thread) read(cl Client, hist *History, q wreq, owner uint64, r *rand.Rand, cfg *Config, end int64) error {
	var h Hold
	for attempt := 0; ; attempt++ {
		var err error
		h, err = cl.Acquire(q.w, q.m)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrConflict) || th.ep.Now() >= end {
			return err
		}
		if cfg.BackoffBase > 0 && cfg.BackoffMax > 0 {
			verbs.Spend(th.ep, backoff(r, cfg.BackoffBase, cfg.BackoffMax, attempt))
		}
	}
	var start uint64
	if hist != nil {
		start = hist.Tick()
	}
	if err := cl.Validate(h); err != nil {
		if !errors.Is(err, ErrAbort) {
			return err
		}
		if rerr := cl.Release(h); rerr != nil {
			return rerr
		}
		return err
	}
	if hist != nil {
		hist.Add(Interval{Word: h.Word, Mode: h.Mode, Start: start, End: hist.Tick(), Owner: owner})
	}
	return cl.Release(h)
}

// words maps a transaction's locks to lock words, each word once (in the strongest mode asked),
// in the source's order or, with sorted, in address order.
func words(dst []wreq, locks []Request, word func(uint32) verbs.Ptr, sorted bool) []wreq {
	for _, q := range locks {
		w := word(q.Lock)
		if i := slices.IndexFunc(dst, func(x wreq) bool { return x.w == w }); i >= 0 {
			dst[i].m = max(dst[i].m, q.Mode)
			continue
		}
		dst = append(dst, wreq{w: w, m: q.Mode})
	}
	if sorted {
		slices.SortFunc(dst, func(a, b wreq) int {
			switch {
			case a.w < b.w:
				return -1
			case a.w > b.w:
				return 1
			}
			return 0
		})
	}
	return dst
}

// RunSim runs cfg in virtual time on a fresh rdma/sim fabric of Servers + Machines nodes with the
// given cost model, simulating drain ns past the window (threads still waiting then are stopped).
func RunSim(cfg Config, cost sim.Cost, drain int64) (Result, error) {
	slots := cfg.Slots
	if slots == 0 {
		slots = 1 << 16
	}
	region := max(uint64(1<<20), (uint64(slots)*8+4096+63)&^63)
	s, err := sim.New(sim.Config{Nodes: cfg.Servers + cfg.Machines, RegionSize: region, Cost: cost, Seed: cfg.Seed})
	if err != nil {
		return Result{}, err
	}
	return Run(&rdmatest.SimFabric{S: s, Until: cfg.Warmup + cfg.Duration + drain}, cfg)
}
