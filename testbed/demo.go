// Package testbed runs netlock end to end on one machine: lock servers and client workers in one
// process on loopback, driven by microbenchmarks and a TPC-C-like lock workload (`netlock demo`).
package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/latency"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/wire"
)

// Phase names. Contended phases are "contended/N": all workers draw exclusive locks from a pool
// of N locks.
const (
	PhaseShared    = "shared"
	PhaseExclusive = "exclusive"
	PhaseTPCCHigh  = "tpcc-high"
	PhaseTPCCLow   = "tpcc-low"
	// PhaseCrash: a client node takes crashLocks locks with a short lease and dies without
	// releasing them; the workers contend for the same locks and get them once the leases expire.
	PhaseCrash      = "crash"
	contendedPrefix = "contended/"
	crashLocks      = 8
	crashLockBase   = 4_000_000
)

// DefaultPhases is the demo's default run: the microbenchmark (shared, exclusive uncontended, an
// exclusive contention sweep) then TPC-C at high and low contention.
var DefaultPhases = []string{PhaseShared, PhaseExclusive, "contended/64", "contended/8", "contended/1",
	PhaseTPCCHigh, PhaseTPCCLow, PhaseCrash}

// Config configures a demo run.
type Config struct {
	// Duration is the length of each phase. Default 2s.
	Duration time.Duration
	// Clients is the number of client nodes; each is one client.Client with one UDP socket.
	// Default 4. TPC-C uses 1 warehouse per client node (high contention) and 10 (low).
	Clients int
	// Workers is the number of closed-loop transaction workers per client node. Default 4.
	Workers int
	// Servers is the number of lock servers. Default 2.
	Servers int
	// Phases to run, in order. Default DefaultPhases.
	Phases []string
	// Lease is the lease clients ask for. Default 2s.
	Lease time.Duration
	// ThinkTime is how long a transaction works while it holds all its locks, between its last
	// grant and its first release (NetLock section 4.5 and Figure 14: with the round trips it is
	// the time a request occupies a switch queue slot). 0, the default, releases at once. The
	// wait is a timer, so on a loaded machine it lasts longer than asked (PhaseResult.Think
	// reports the mean measured).
	ThinkTime time.Duration
	// Seed seeds the workload generators. Default 1.
	Seed uint64
	// Progress, if set, receives progress: a live line updated in place when ProgressLive is set
	// (a terminal), else one line per finished phase.
	Progress     io.Writer
	ProgressLive bool
	// Logger receives the servers' logs. Default: discard.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if c.Duration == 0 {
		c.Duration = 2 * time.Second
	}
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Servers == 0 {
		c.Servers = 2
	}
	if len(c.Phases) == 0 {
		c.Phases = DefaultPhases
	}
	if c.Lease == 0 {
		c.Lease = 2 * time.Second
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Duration < 0:
		return errors.New("duration must be positive")
	case c.ThinkTime < 0:
		return errors.New("think time must not be negative")
	case c.Clients < 1 || c.Clients*10 > MaxWarehouses:
		return fmt.Errorf("clients %d: must be in 1..%d (10 warehouses per client at low contention)",
			c.Clients, MaxWarehouses/10)
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("workers %d: must be in 1..256", c.Workers)
	case c.Servers < 1 || c.Servers > 16:
		return fmt.Errorf("servers %d: must be in 1..16", c.Servers)
	}
	for _, p := range c.Phases {
		if _, err := parsePhase(p, c.Clients); err != nil {
			return err
		}
	}
	return nil
}

// PhaseResult is the outcome of one phase.
type PhaseResult struct {
	Name      string          `json:"name"`
	Duration  time.Duration   `json:"duration_ns"`
	Txns      uint64          `json:"txns"`
	TxnRate   float64         `json:"txns_per_sec"`
	LockOps   uint64          `json:"lock_acquires"`
	LockRate  float64         `json:"lock_acquires_per_sec"`
	Latency   latency.Latency `json:"txn_latency"`
	Grants    []uint64        `json:"grants_per_server"`
	Rejects   uint64          `json:"rejects"`
	Errors    uint64          `json:"errors"`
	Expiries  uint64          `json:"lease_expiries"`
	Retransm  int64           `json:"retransmits"`
	Workers   int             `json:"workers"`
	LocksUsed string          `json:"locks"`
	// ThinkTime is the think time asked for; Think the mean measured over the committed
	// transactions (a timer on a loaded machine overshoots).
	ThinkTime time.Duration `json:"think_time_ns"`
	Think     time.Duration `json:"think_measured_ns"`
}

// Report is the outcome of a demo run.
type Report struct {
	Servers []string      `json:"servers"`
	Clients int           `json:"clients"`
	Workers int           `json:"workers_per_client"`
	Phases  []PhaseResult `json:"phases"`
}

type phaseSpec struct {
	name       string
	locks      string
	warehouses int // tpcc
	pool       int // contended
}

func parsePhase(p string, clients int) (phaseSpec, error) {
	s := phaseSpec{name: p}
	switch p {
	case PhaseShared:
		s.locks = "16 shared"
	case PhaseExclusive:
		s.locks = "private per worker"
	case PhaseTPCCHigh:
		s.warehouses = clients
	case PhaseTPCCLow:
		s.warehouses = 10 * clients
	case PhaseCrash:
		s.locks = fmt.Sprintf("%d, holder crashed", crashLocks)
	default:
		var n int
		if _, err := fmt.Sscanf(p, contendedPrefix+"%d", &n); err != nil || n < 1 {
			return s, fmt.Errorf("unknown phase %q (want shared, exclusive, contended/N, tpcc-high, tpcc-low, crash)", p)
		}
		s.pool = n
		s.locks = fmt.Sprintf("%d exclusive", n)
	}
	if s.warehouses > 0 {
		s.locks = fmt.Sprintf("%d warehouses", s.warehouses)
	}
	return s, nil
}

// Run starts the servers and clients on loopback, runs every phase and returns the report.
func Run(ctx context.Context, cfg Config) (Report, error) {
	if err := cfg.validate(); err != nil {
		return Report{}, fmt.Errorf("demo: %w", err)
	}
	srvCtx, stopServers := context.WithCancel(context.Background())
	var srvWG sync.WaitGroup
	defer func() {
		stopServers()
		srvWG.Wait()
	}()
	var servers []*lockserver.Server
	var addrs []string
	for i := 0; i < cfg.Servers; i++ {
		s, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 1,
			Core:   lockcore.Config{DefaultLease: cfg.Lease, MaxLease: 2 * cfg.Lease},
			Logger: cfg.Logger.With("server", i+1)})
		if err != nil {
			return Report{}, fmt.Errorf("demo: %w", err)
		}
		servers = append(servers, s)
		addrs = append(addrs, s.Addr().String())
		srvWG.Add(1)
		go func() {
			defer srvWG.Done()
			if err := s.Run(srvCtx); err != nil {
				cfg.Logger.Error("lock server", "err", err)
			}
		}()
	}
	var clients []*client.Client
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	for i := 0; i < cfg.Clients; i++ {
		c, err := client.New(client.Config{Servers: addrs, Local: "127.0.0.1:0", Lease: cfg.Lease,
			ClientID: uint32(i + 1), RequestTimeout: 2 * time.Second})
		if err != nil {
			return Report{}, fmt.Errorf("demo: %w", err)
		}
		clients = append(clients, c)
	}
	rep := Report{Servers: addrs, Clients: cfg.Clients, Workers: cfg.Workers}
	for i, name := range cfg.Phases {
		spec, _ := parsePhase(name, cfg.Clients)
		res, err := runPhase(ctx, &cfg, spec, uint64(i), servers, clients)
		if err != nil {
			return rep, err
		}
		rep.Phases = append(rep.Phases, res)
		if ctx.Err() != nil {
			break
		}
	}
	return rep, nil
}

type workerStats struct {
	hist    latency.Histogram
	think   time.Duration
	txns    uint64
	locks   uint64
	rejects uint64
	errs    uint64
}

func runPhase(ctx context.Context, cfg *Config, spec phaseSpec, phaseNo uint64,
	servers []*lockserver.Server, clients []*client.Client) (PhaseResult, error) {
	before := make([]lockcore.Stats, len(servers))
	for i, s := range servers {
		before[i] = s.Stats()
	}
	var retransBefore int64
	for _, c := range clients {
		retransBefore += c.Stats().Retransmits
	}
	if spec.name == PhaseCrash {
		if err := crashHolder(ctx, servers, cfg.Duration/5); err != nil {
			return PhaseResult{}, fmt.Errorf("demo: crash phase: %w", err)
		}
	}
	pctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var txns atomic.Uint64
	stats := make([]*workerStats, 0, len(clients)*cfg.Workers)
	var wg sync.WaitGroup
	start := time.Now()
	for ci, c := range clients {
		for w := 0; w < cfg.Workers; w++ {
			ws := &workerStats{}
			stats = append(stats, ws)
			seed := cfg.Seed<<32 ^ phaseNo<<24 ^ uint64(ci)<<12 ^ uint64(w)
			wg.Add(1)
			go func() {
				defer wg.Done()
				runWorker(pctx, c, newWorkload(spec, ci*cfg.Workers+w, seed), cfg.ThinkTime, ws, &txns)
			}()
		}
	}
	stopProgress := startProgress(cfg.Progress, cfg.ProgressLive, spec.name, start, &txns, servers, before)
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()
	res := PhaseResult{Name: spec.name, Duration: elapsed, Workers: len(stats), LocksUsed: spec.locks,
		ThinkTime: cfg.ThinkTime}
	var hist latency.Histogram
	var think time.Duration
	for _, ws := range stats {
		hist.Merge(&ws.hist)
		think += ws.think
		res.Txns += ws.txns
		res.LockOps += ws.locks
		res.Rejects += ws.rejects
		res.Errors += ws.errs
	}
	res.Latency = hist.Summary()
	if res.Txns > 0 {
		res.Think = think / time.Duration(res.Txns)
	}
	res.TxnRate = float64(res.Txns) / elapsed.Seconds()
	res.LockRate = float64(res.LockOps) / elapsed.Seconds()
	for i, s := range servers {
		st := s.Stats()
		res.Grants = append(res.Grants, st.Grants-before[i].Grants)
		res.Expiries += st.Expired - before[i].Expired
	}
	for _, c := range clients {
		res.Retransm += c.Stats().Retransmits
	}
	res.Retransm -= retransBefore
	return res, nil
}

// crashHolder plays a client node that takes the crash phase's locks with a short lease and then
// dies: its socket is closed without releasing anything, as a crashed process would leave them.
func crashHolder(ctx context.Context, servers []*lockserver.Server, lease time.Duration) error {
	var addrs []string
	for _, s := range servers {
		addrs = append(addrs, s.Addr().String())
	}
	c, err := client.New(client.Config{Servers: addrs, Local: "127.0.0.1:0", Lease: lease, ClientID: 0xdead})
	if err != nil {
		return err
	}
	defer c.Close() // the crash: no release is ever sent
	for i := uint32(0); i < crashLocks; i++ {
		if _, err := c.Acquire(ctx, crashLockBase+i, wire.Exclusive); err != nil {
			return err
		}
	}
	return nil
}

// runWorker runs closed-loop transactions drawn from w until ctx ends; each holds its locks for
// think before releasing them.
func runWorker(ctx context.Context, c *client.Client, w *Workload, think time.Duration, ws *workerStats,
	txns *atomic.Uint64) {
	locks := make([]client.LockSpec, 0, 20)
	var thought time.Duration
	body := func(ctx context.Context) error {
		if think <= 0 {
			return nil
		}
		t0 := time.Now()
		t := time.NewTimer(think)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		thought = time.Since(t0)
		return nil
	}
	for ctx.Err() == nil {
		locks = w.Next(locks)
		t0 := time.Now()
		err := c.RunTxn(ctx, locks, body)
		if err != nil {
			if ctx.Err() != nil {
				return // the phase ended mid-transaction: not counted
			}
			var rej *client.RejectError
			if errors.As(err, &rej) {
				ws.rejects++
			} else {
				ws.errs++
			}
			continue
		}
		ws.hist.Record(time.Since(t0))
		ws.think += thought
		ws.txns++
		ws.locks += uint64(len(locks))
		txns.Add(1)
	}
}

// startProgress prints a live progress line until the returned function is called.
func startProgress(w io.Writer, live bool, name string, start time.Time, txns *atomic.Uint64,
	servers []*lockserver.Server, before []lockcore.Stats) func() {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	line := func() {
		el := time.Since(start)
		n := txns.Load()
		grants := ""
		for i, s := range servers {
			grants += fmt.Sprintf(" s%d=%d", i+1, s.Stats().Grants-before[i].Grants)
		}
		cr := "\r"
		if !live {
			cr = ""
		}
		fmt.Fprintf(w, "%s%-14s %5.1fs %10d txns %10.0f txn/s  grants%s   ", cr, name, el.Seconds(), n,
			float64(n)/el.Seconds(), grants)
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				line()
				fmt.Fprintln(w)
				return
			case <-t.C:
				if live {
					line()
				}
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}

// WriteTable prints the report as a table.
func (r Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "\nnetlock demo: %d lock servers (%v), %d client nodes x %d workers, loopback UDP\n\n",
		len(r.Servers), r.Servers, r.Clients, r.Workers)
	fmt.Fprintf(w, "%-14s %-20s %10s %12s %10s %10s  %-22s %8s %8s %8s\n", "phase", "locks", "txn/s",
		"acquires/s", "p50", "p99", "grants per server", "rejects", "expiries", "retrans")
	for _, p := range r.Phases {
		g := ""
		for i, n := range p.Grants {
			if i > 0 {
				g += " / "
			}
			g += fmt.Sprint(n)
		}
		fmt.Fprintf(w, "%-14s %-20s %10.0f %12.0f %10s %10s  %-22s %8d %8d %8d\n", p.Name, p.LocksUsed,
			p.TxnRate, p.LockRate, round(p.Latency.P50), round(p.Latency.P99), g, p.Rejects, p.Expiries, p.Retransm)
	}
	for _, p := range r.Phases {
		if p.ThinkTime > 0 {
			fmt.Fprintf(w, "\n%s: think time %v asked, %v measured (mean per committed transaction)", p.Name,
				p.ThinkTime, round(p.Think))
		}
	}
	fmt.Fprintln(w, "\ntxn/s: committed transactions (a txn takes its locks in ascending order, strict 2PL); p50/p99: per"+
		" transaction;\nexpiries: leases that ran out on the servers; retrans: client re-sends, including the periodic"+
		" re-send of\nacquires that wait in a queue.")
}

func round(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(100 * time.Nanosecond).String()
	}
	return d.String()
}
