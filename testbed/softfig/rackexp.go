// Package softfig runs the NetLock paper's figures (SIGCOMM'20, section 6) on the software rack
// (testbed/softrack) in wall-clock time: the real p4/netlock.p4 on the software switch, the real
// controller over P4Runtime, real lock servers and lock clients, all on this machine. It is the
// wall-clock counterpart of testbed/modelfig (the rack model in virtual time).
//
// The racks being compared run in one process and take turns: each measured window loads one
// rack while the others idle, and the order rotates every round, so every rack sees the same
// machine (its load by other processes included) and a ratio is measured within one run. The
// software switch processes packets one at a time on a shared CPU, so the switch is not faster
// than a lock server here; what the software rack can show is the protocol's share of grants
// and the relative cost of its paths, not NetLock's line-rate advantage (docs/performance.md).
package softfig

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/internal/latency"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/testbed/softrack"
)

// Config is the load every rack of a comparison gets.
type Config struct {
	// Clients is the number of client hosts, Workers the closed-loop workers per host (each its
	// own lock client). Defaults 2, 4.
	Clients, Workers int
	// Phase is the workload (testbed.Workload: tpcc-low, tpcc-high, contended/N, ...). Default
	// tpcc-low.
	Phase string
	// Think is how long a transaction holds its locks before releasing them.
	Think time.Duration
	// Warmup is the load each rack gets, in turns, before the measurement, so that its
	// controller measures the demand and moves locks in (default 3s); Window the length of one
	// measured window (default 1s) and Rounds the number of windows per rack (default 3).
	Warmup, Window time.Duration
	Rounds         int
	// Seed seeds the workload (the same transactions for every rack).
	Seed uint64
	// Lease is the racks' lease (default 1s; MaxLease twice that).
	Lease time.Duration
	// ServerLease is the controller lease the lock servers enforce (softrack.Config.ServerLease; 0:
	// none).
	ServerLease time.Duration
	// Log receives the racks' logs; nil discards them.
	Log *slog.Logger
	// SlowAcquire, if positive, makes every transaction take its locks one at a time and logs
	// (to Log, level warn) each acquisition that took at least this long (a diagnosis of stalls).
	SlowAcquire time.Duration
	// Pipeline is what runs p4/netlock.p4 in the racks' switches (softrack.Config.Pipeline):
	// auto (Generated when set, else the interpreter), interp or gen; Generated is the
	// generated pipeline auto and gen run (softrack.Config.Generated).
	Pipeline  engine.Pipeline
	Generated engine.Generated
}

func (c *Config) defaults() error {
	if c.Clients == 0 {
		c.Clients = 2
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Phase == "" {
		c.Phase = testbed.PhaseTPCCLow
	}
	if c.Warmup == 0 {
		c.Warmup = 3 * time.Second
	}
	if c.Window == 0 {
		c.Window = time.Second
	}
	if c.Rounds == 0 {
		c.Rounds = 3
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Lease == 0 {
		c.Lease = time.Second
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Clients < 1 || c.Clients > softrack.MaxClients:
		return fmt.Errorf("softfig: %d clients: want 1..%d", c.Clients, softrack.MaxClients)
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("softfig: %d workers per client: want 1..256", c.Workers)
	case c.Think < 0 || c.Warmup < 0 || c.Window <= 0 || c.Rounds < 1:
		return errors.New("softfig: negative think or warm-up, or no measured window")
	case c.ServerLease < 0 || c.SlowAcquire < 0:
		return errors.New("softfig: negative server lease or slow-acquire threshold")
	}
	if _, err := testbed.NewWorkload(c.Phase, c.Clients, 0, 1); err != nil {
		return fmt.Errorf("softfig: %w", err)
	}
	return nil
}

// Variant is one rack of a comparison: a name and its controller's allocation settings
// (ctlcore.Config: Strategy, Slots, Seed, AllocPeriod, ...). NoSwitch keeps every lock on the
// servers (the controller never allocates).
type Variant struct {
	Name       string
	Controller ctlcore.Config
	NoSwitch   bool
}

// Result is what one rack did in its measured windows.
type Result struct {
	Variant string `json:"variant"`
	// Pipeline names what ran p4/netlock.p4 in the rack's switch (softrack.Rack.SwitchPipeline).
	Pipeline string        `json:"pipeline"`
	Think    time.Duration `json:"think_ns"`
	Elapsed  time.Duration `json:"elapsed_ns"` // the measured windows' total
	// Txns committed, Locks they held; ServerGrants the grants the lock servers made (of any
	// transaction, committed or not); SwitchLocks the locks in the switch at the end.
	Txns, Locks, ServerGrants uint64
	SwitchLocks               int
	// Errors are transactions that failed (rejects, leases lost, timeouts), kept apart.
	Errors uint64
	// Sent and Retransmits are the clients' datagrams in the measured windows and the part of
	// them that repeated a request (client.Stats).
	Sent, Retransmits int64
	// TPS and LPS are committed transactions and their locks per second of measured window.
	TPS, LPS float64
	Txn      latency.Latency
}

// ServerShare is the servers' grants over the committed transactions' locks: 1 - ServerShare
// estimates the switch's share (both counts include a few grants of failed transactions).
func (r Result) ServerShare() float64 {
	if r.Locks == 0 {
		return 0
	}
	return float64(r.ServerGrants) / float64(r.Locks)
}

// bench is one running rack with its clients and workloads.
type bench struct {
	v       Variant
	r       *softrack.Rack
	clients []*client.Client
	wls     []*testbed.Workload
	res     Result
	hist    latency.Histogram
	// committed counts every committed transaction (for timelines).
	committed atomic.Uint64
	// slow, if set, logs slow acquisitions (Config.SlowAcquire).
	slow *slowLog
}

func startBench(ctx context.Context, cfg Config, v Variant) (*bench, error) {
	return startBenchRack(ctx, cfg, v, false)
}

// startBenchStandbys starts a bench whose servers have standbys (softrack.KillServer).
func startBenchStandbys(ctx context.Context, cfg Config, v Variant) (*bench, error) {
	return startBenchRack(ctx, cfg, v, true)
}

func startBenchRack(ctx context.Context, cfg Config, v Variant, standbys bool) (*bench, error) {
	cc := v.Controller
	if v.NoSwitch {
		cc.AllocPeriod = 24 * time.Hour
	}
	r, err := softrack.Start(ctx, softrack.Config{Clients: cfg.Clients, Controller: cc, Lease: cfg.Lease, Log: cfg.Log,
		Standbys: standbys, ServerLease: cfg.ServerLease, Pipeline: cfg.Pipeline, Generated: cfg.Generated})
	if err != nil {
		return nil, fmt.Errorf("softfig: %s: %w", v.Name, err)
	}
	b := &bench{v: v, r: r, res: Result{Variant: v.Name, Think: cfg.Think, Pipeline: r.SwitchPipeline()}}
	if cfg.SlowAcquire > 0 {
		b.slow = &slowLog{min: cfg.SlowAcquire, log: cfg.Log, start: time.Now()}
	}
	for h := 1; h <= cfg.Clients; h++ {
		for w := 0; w < cfg.Workers; w++ {
			c, err := r.NewClient(h, client.Config{})
			if err != nil {
				b.close()
				return nil, err
			}
			b.clients = append(b.clients, c)
			gid := (h-1)*cfg.Workers + w
			wl, err := testbed.NewWorkload(cfg.Phase, cfg.Clients, gid, cfg.Seed<<32^uint64(gid))
			if err != nil {
				b.close()
				return nil, err
			}
			b.wls = append(b.wls, wl)
		}
	}
	return b, nil
}

func (b *bench) close() error {
	for _, c := range b.clients {
		c.Close()
	}
	return b.r.Close()
}

func (b *bench) serverGrants() uint64 {
	var n uint64
	for _, s := range b.r.Servers() {
		n += s.Stats().Grants
	}
	return n
}

// window is what the workers did in one load period.
type window struct {
	txns, locks, errs uint64
}

// load runs every worker of b closed-loop for d; rec, if set, records the client observations
// (grant returned, release about to be sent). It counts into b.res when measured.
func (b *bench) load(ctx context.Context, d time.Duration, think time.Duration, measured bool, rec *history.Recorder) window {
	lctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	g0 := b.serverGrants()
	sent0, re0 := b.clientSends()
	start := time.Now()
	var wg sync.WaitGroup
	var txns, locks, errs atomic.Uint64
	var mu sync.Mutex
	for i, c := range b.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var specs []client.LockSpec
			var hist latency.Histogram
			for lctx.Err() == nil {
				specs = b.wls[i].Next(specs)
				t0 := time.Now()
				n, err := runTxn(lctx, c, specs, think, rec, b.slow)
				if err != nil {
					if lctx.Err() == nil {
						errs.Add(1)
					}
					continue
				}
				hist.Record(time.Since(t0))
				txns.Add(1)
				b.committed.Add(1)
				locks.Add(uint64(n))
			}
			if measured {
				mu.Lock()
				b.hist.Merge(&hist)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	w := window{txns: txns.Load(), locks: locks.Load(), errs: errs.Load()}
	if measured {
		b.res.Elapsed += time.Since(start)
		b.res.Txns += w.txns
		b.res.Locks += w.locks
		b.res.Errors += w.errs
		b.res.ServerGrants += b.serverGrants() - g0
		sent, re := b.clientSends()
		b.res.Sent += sent - sent0
		b.res.Retransmits += re - re0
	}
	return w
}

// clientSends sums the datagrams b's clients sent and the retransmissions among them.
func (b *bench) clientSends() (sent, retransmits int64) {
	for _, c := range b.clients {
		st := c.Stats()
		sent += st.Sent
		retransmits += st.Retransmits
	}
	return sent, retransmits
}

// runTxn takes specs' locks as one transaction (client.Txn), holds them for think, releases
// them, and returns how many it held. With slow set, the locks are taken one at a time and the
// slow acquisitions logged.
func runTxn(ctx context.Context, c *client.Client, specs []client.LockSpec, think time.Duration,
	rec *history.Recorder, slow *slowLog) (int, error) {
	t := c.Begin()
	if slow != nil {
		if err := slow.acquire(ctx, c, t, specs); err != nil {
			return 0, err
		}
	} else {
		for _, s := range specs {
			t.Lock(s.Lock, s.Mode)
		}
		if err := t.Acquire(ctx); err != nil {
			return 0, err
		}
	}
	gs := t.Grants()
	if rec != nil {
		now := time.Now()
		for _, g := range gs {
			rec.Record(history.Event{Kind: history.Granted, Lock: g.Lock(), Txn: g.Txn(), Mode: g.Mode(),
				Token: g.Token(), Deadline: g.Deadline(), At: now})
		}
	}
	if think > 0 {
		tm := time.NewTimer(think)
		select {
		case <-tm.C:
		case <-ctx.Done():
			tm.Stop()
		}
	}
	if rec != nil {
		now := time.Now()
		for _, g := range gs {
			rec.Record(history.Event{Kind: history.Released, Lock: g.Lock(), Txn: g.Txn(), At: now})
		}
	}
	// The releases get their own time: a window that ended must not strand held locks.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := t.Release(rctx); err != nil {
		return 0, err
	}
	return len(gs), nil
}

// Alternate starts a rack per variant, warms each up in turn, then measures them in alternating
// windows (cfg.Rounds each, the order rotating every round) and returns one Result per variant.
func Alternate(ctx context.Context, cfg Config, variants []Variant) ([]Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	var benches []*bench
	defer func() {
		for _, b := range benches {
			b.close()
		}
	}()
	for _, v := range variants {
		b, err := startBench(ctx, cfg, v)
		if err != nil {
			return nil, err
		}
		benches = append(benches, b)
	}
	// Warm-up in slices, in turns, so that each controller sees its rack loaded in several of
	// its allocation periods.
	const slices = 3
	for range slices {
		for _, b := range benches {
			b.load(ctx, cfg.Warmup/slices, cfg.Think, false, nil)
		}
	}
	for round := range cfg.Rounds {
		for k := range benches {
			b := benches[(k+round)%len(benches)]
			b.load(ctx, cfg.Window, cfg.Think, true, nil)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	var out []Result
	for _, b := range benches {
		r := b.res
		if p := b.r.Primary(); p != nil {
			r.SwitchLocks = len(p.Snapshot().Locks)
		}
		if secs := r.Elapsed.Seconds(); secs > 0 {
			r.TPS, r.LPS = float64(r.Txns)/secs, float64(r.Locks)/secs
		}
		r.Txn = b.hist.Summary()
		out = append(out, r)
	}
	return out, nil
}
