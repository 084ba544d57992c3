package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/latency"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// maxViolations is how many violations a phase keeps for its report.
const maxViolations = 10

// quotaBackoff is how long a worker whose transaction was refused for its tenant's quota waits
// before the next one.
const quotaBackoff = 2 * time.Millisecond

type workerStats struct {
	class    int // index in the phase's classes, -1 without
	hist     latency.Histogram
	think    time.Duration
	txns     uint64 // measured
	all      uint64 // the whole phase
	locks    uint64
	bySource [3]uint64 // indexed by Source
	swAll    uint64    // switch grants of the whole phase
	rejects  uint64    // measured
	rejAll   uint64    // the whole phase
	errs     uint64
	lost     uint64
	firstErr error // the first error errs counted
}

// fail counts err as an error of the measured window.
func (ws *workerStats) fail(err error) {
	ws.errs++
	if ws.firstErr == nil {
		ws.firstErr = err
	}
}

// phaseCounters are the phase's live counters (measured window), read by the progress line.
type phaseCounters struct {
	txns, sw, srv atomic.Uint64
}

func serverStats(servers []*lockserver.Server) []lockcore.Stats {
	out := make([]lockcore.Stats, len(servers))
	for i, s := range servers {
		out[i] = s.Stats()
	}
	return out
}

func runPhase(ctx context.Context, cfg *Config, spec phaseSpec, phaseNo uint64, rg *rig) (PhaseResult, error) {
	var rec history.Recorder
	phaseStart := serverStats(rg.servers())
	var ctlBefore struct{ in, out, periods uint64 }
	if rg.controller != nil {
		if st, ok := rg.controller(); ok {
			ctlBefore.in, ctlBefore.out, ctlBefore.periods = st.MovesIn, st.MovesOut, st.Periods
		}
	}
	if spec.name == PhaseCrash {
		if err := crashHolder(ctx, rg, cfg.Duration/5, &rec); err != nil {
			return PhaseResult{}, fmt.Errorf("demo: crash phase: %w", err)
		}
	}
	start := time.Now()
	// The measured window opens at from, set once the warm-up is over and the window's counters
	// are taken: a transaction counts if it starts after both.
	var from atomic.Int64
	from.Store(math.MaxInt64)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var live phaseCounters
	stats := make([]*workerStats, 0, len(rg.clients)*cfg.Workers)
	var wg sync.WaitGroup
	var windowStart []lockcore.Stats
	var retransBefore int64
	mark := func() time.Time {
		windowStart = serverStats(rg.servers())
		retransBefore = 0
		for _, c := range rg.clients {
			retransBefore += c.Stats().Retransmits
		}
		now := time.Now()
		from.Store(now.UnixNano())
		return now
	}
	var opened time.Time
	if cfg.Warmup == 0 {
		opened = mark()
	}
	wls := make([]*Workload, 0, len(rg.clients)*cfg.Workers)
	for ci := range rg.clients {
		for w := 0; w < cfg.Workers; w++ {
			wl, err := newWorkload(spec, ci*cfg.Workers+w, cfg.Seed<<32^phaseNo<<24^uint64(ci)<<12^uint64(w))
			if err != nil {
				return PhaseResult{}, fmt.Errorf("demo: phase %s: %w", spec.name, err)
			}
			wls = append(wls, wl)
		}
	}
	for ci, c := range rg.clients {
		for w := 0; w < cfg.Workers; w++ {
			ws := &workerStats{class: spec.classOf(ci*cfg.Workers+w, len(rg.clients)*cfg.Workers)}
			stats = append(stats, ws)
			wk := &worker{c: c, src: rg.trackers[ci], rec: &rec, name: fmt.Sprintf("c%d.w%d", ci+1, w),
				think: cfg.ThinkTime, from: &from, ws: ws, live: &live, opts: spec.classOpts(ws.class)}
			wl := wls[ci*cfg.Workers+w]
			wg.Add(1)
			go func() {
				defer wg.Done()
				wk.run(pctx, wl)
			}()
		}
	}
	var warmup time.Duration
	if cfg.Warmup > 0 {
		stopWarm := startProgress(cfg.Progress, cfg.ProgressLive, spec.name+" warm-up", start, nil, nil)
		var placed func() bool
		if spec.name == PhaseCrash && rg.switchLocks != nil {
			// The crash phase's locks can move into the switch only once the crashed holder's
			// leases have run out on their server: wait for the first of them too.
			placed = func() bool {
				for _, l := range rg.switchLocks() {
					if l >= crashLockBase && l < crashLockBase+crashLocks {
						return true
					}
				}
				return false
			}
		}
		warmUp(pctx, cfg, rg, ctlBefore.periods, placed)
		stopWarm(false)
		opened = mark()
		warmup = opened.Sub(start)
	}
	var inSwitch func() int
	if rg.switchLocks != nil {
		inSwitch = func() int { return len(rg.switchLocks()) }
	}
	stopProgress := startProgress(cfg.Progress, cfg.ProgressLive, spec.name, opened, &live, inSwitch)
	select {
	case <-time.After(cfg.Duration):
	case <-pctx.Done():
	}
	cancel()
	wg.Wait()
	elapsed := time.Since(opened)
	stopProgress(true)
	res := PhaseResult{Name: spec.name, Duration: elapsed, Warmup: warmup, Workers: len(stats),
		LocksUsed: spec.locks, ThinkTime: cfg.ThinkTime}
	var hist latency.Histogram
	var think time.Duration
	for _, ws := range stats {
		hist.Merge(&ws.hist)
		think += ws.think
		res.Txns += ws.txns
		res.AllTxns += ws.all
		res.AllSwitchGrants += ws.swAll
		res.LockOps += ws.locks
		res.SwitchGrants += ws.bySource[SourceSwitch]
		res.ServerGrants += ws.bySource[SourceServer]
		res.UnknownGrants += ws.bySource[SourceUnknown]
		res.Rejects += ws.rejects
		res.Errors += ws.errs
		if ws.firstErr != nil && res.FirstError == "" {
			res.FirstError = ws.firstErr.Error()
		}
		res.LeaseLost += ws.lost
	}
	res.Latency = hist.Summary()
	for k, cl := range spec.classes {
		var h latency.Histogram
		cr := ClassResult{Name: cl.name, Tenant: cl.tenant, Priority: cl.priority}
		for _, ws := range stats {
			if ws.class == k {
				h.Merge(&ws.hist)
				cr.Workers++
				cr.Txns += ws.txns
				cr.AllTxns += ws.all
				cr.Rejects += ws.rejects
				cr.AllRejects += ws.rejAll
			}
		}
		cr.Latency = h.Summary()
		cr.TxnRate = float64(cr.Txns) / elapsed.Seconds()
		res.Classes = append(res.Classes, cr)
	}
	if res.Txns > 0 {
		res.Think = think / time.Duration(res.Txns)
	}
	res.TxnRate = float64(res.Txns) / elapsed.Seconds()
	res.LockRate = float64(res.LockOps) / elapsed.Seconds()
	end := serverStats(rg.servers())
	for i, st := range end {
		if i < len(windowStart) {
			res.Grants = append(res.Grants, st.Grants-windowStart[i].Grants)
		}
		if i < len(phaseStart) {
			res.Expiries += st.Expired - phaseStart[i].Expired
		}
	}
	for _, c := range rg.clients {
		res.Retransm += c.Stats().Retransmits
	}
	res.Retransm -= retransBefore
	if rg.controller != nil {
		if st, ok := rg.controller(); ok {
			res.MovesIn, res.MovesOut = st.MovesIn-ctlBefore.in, st.MovesOut-ctlBefore.out
			res.Periods = st.Periods - ctlBefore.periods
		}
	}
	events := rec.Events()
	if rg.switchLocks != nil {
		res.SwitchLocks = phaseLocksIn(events, rg.switchLocks())
	}
	res.Events = len(events)
	vs := history.Check(events, history.Options{})
	for i, v := range vs {
		if i == maxViolations {
			res.Violations = append(res.Violations, fmt.Sprintf("... and %d more", len(vs)-i))
			break
		}
		res.Violations = append(res.Violations, v.String())
	}
	return res, nil
}

// phaseLocksIn counts the locks of inSwitch that the phase's history granted: the phase's own
// locks in the switch, not those an earlier phase left there.
func phaseLocksIn(events []history.Event, inSwitch []uint32) int {
	used := make(map[uint32]bool)
	for _, e := range events {
		if e.Kind == history.Granted {
			used[e.Lock] = true
		}
	}
	n := 0
	for _, l := range inSwitch {
		if used[l] {
			n++
		}
	}
	return n
}

// warmUpPeriods is how many allocation periods the controller must have completed since the phase
// began before its measured window opens; maxWarmup bounds the wait as a multiple of Config.Warmup.
const (
	warmUpPeriods = 2
	maxWarmup     = 10
)

// warmUp waits cfg.Warmup, then, with a controller, until it has completed warmUpPeriods
// allocation periods since the phase began (periods were at before then) and placed reports
// true (nil: at once), at most maxWarmup*cfg.Warmup in all: on a loaded machine the controller is
// slower than its period, and the measured window should see the locks it placed.
func warmUp(ctx context.Context, cfg *Config, rg *rig, before uint64, placed func() bool) {
	t := time.NewTimer(cfg.Warmup)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return
	}
	if rg.controller == nil {
		return
	}
	limit := time.NewTimer(time.Duration(maxWarmup-1) * cfg.Warmup)
	defer limit.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if st, ok := rg.controller(); ok && st.Periods >= before+warmUpPeriods && (placed == nil || placed()) {
			return
		}
		select {
		case <-tick.C:
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// crashHolder plays a client node that takes the crash phase's locks with a short lease and then
// dies: its socket is closed without releasing anything, as a crashed process would leave them.
// Its grants go into the history, each held until its lease deadline.
func crashHolder(ctx context.Context, rg *rig, lease time.Duration, rec *history.Recorder) error {
	c, err := rg.crashClient(lease)
	if err != nil {
		return err
	}
	defer c.Close() // the crash: no release is ever sent
	for i := uint32(0); i < crashLocks; i++ {
		lock := crashLockBase + i
		txn := c.Begin()
		txn.Lock(lock, wire.Exclusive)
		rec.Record(history.Event{Kind: history.AcquireSent, Lock: lock, Txn: txn.ID(), Mode: wire.Exclusive, Client: "crashed"})
		if err := txn.Acquire(ctx); err != nil {
			return err
		}
		g := txn.Grants()[0]
		rec.Record(history.Event{Kind: history.Granted, Lock: lock, Txn: txn.ID(), Mode: g.Mode(), Token: g.Token(),
			Deadline: g.Deadline(), Client: "crashed"})
		rec.Record(history.Event{Kind: history.Lost, Lock: lock, Txn: txn.ID(), At: g.Deadline(), Client: "crashed"})
	}
	return nil
}

// worker runs closed-loop transactions on one client and records each acquisition in the
// phase's history.
type worker struct {
	c     *client.Client
	src   *sourceTracker // nil: every grant is a server's
	rec   *history.Recorder
	name  string
	think time.Duration
	opts  []client.Option // the class's tenant and priority, for every transaction
	from  *atomic.Int64   // transactions that start before it (Unix ns) are not counted
	ws    *workerStats
	live  *phaseCounters
}

// endOf is when a holder stops relying on g: now, or its lease deadline if that passed.
func endOf(g *client.Grant) time.Time {
	now := time.Now()
	if dl := g.Deadline(); !dl.IsZero() && dl.Before(now) {
		return dl
	}
	return now
}

func (w *worker) source(lock uint32, txn uint64) Source {
	if w.src == nil {
		return SourceServer
	}
	return w.src.take(lock, txn)
}

// run runs transactions drawn from wl until ctx ends; each holds its locks for w.think before
// releasing them.
func (w *worker) run(ctx context.Context, wl *Workload) {
	locks := make([]client.LockSpec, 0, 20)
	want := make(map[uint32]wire.Mode, 20)
	var srcs []Source
	for ctx.Err() == nil {
		locks = wl.Next(locks)
		t0 := time.Now()
		measured := t0.UnixNano() >= w.from.Load()
		txn := w.c.Begin(w.opts...)
		clear(want)
		for _, l := range locks {
			txn.Lock(l.Lock, l.Mode)
			if m, ok := want[l.Lock]; !ok || m == wire.Shared {
				want[l.Lock] = l.Mode
			}
		}
		for l, m := range want {
			w.rec.Record(history.Event{Kind: history.AcquireSent, Lock: l, Txn: txn.ID(), Mode: m, Client: w.name})
		}
		if err := txn.Acquire(ctx); err != nil {
			// Txn.Acquire released what it held; those grants are not in the history (their
			// intervals are unknown), which only makes the check see less.
			kind := history.Rejected
			if errors.Is(err, client.ErrTimeout) || errors.Is(err, client.ErrClosed) || ctx.Err() != nil {
				kind = history.Abandoned
			}
			for l := range want {
				if w.src != nil {
					w.src.forget(l, txn.ID())
				}
				w.rec.Record(history.Event{Kind: kind, Lock: l, Txn: txn.ID(), Client: w.name})
			}
			if ctx.Err() != nil {
				return // the phase ended mid-transaction: not counted
			}
			if errors.Is(err, client.ErrQuota) {
				// Over its tenant's quota: back off a little rather than spin on refusals.
				select {
				case <-time.After(quotaBackoff):
				case <-ctx.Done():
				}
			}
			var rej *client.RejectError
			isRej := errors.As(err, &rej)
			if isRej {
				w.ws.rejAll++
			}
			if measured {
				switch {
				case isRej:
					w.ws.rejects++
				case errors.Is(err, client.ErrLeaseLost):
					w.ws.lost++
					w.ws.fail(err)
				default:
					w.ws.fail(err)
				}
			}
			continue
		}
		gs := txn.Grants()
		srcs = srcs[:0]
		for _, g := range gs {
			w.rec.Record(history.Event{Kind: history.Granted, Lock: g.Lock(), Txn: g.Txn(), Mode: g.Mode(),
				Token: g.Token(), Deadline: g.Deadline(), Client: w.name})
			srcs = append(srcs, w.source(g.Lock(), g.Txn()))
		}
		thought, thinkErr := w.hold(ctx)
		lost := false
		var lostErr error
		for _, g := range gs {
			if err := g.LostErr(); err != nil {
				lost, lostErr = true, err
				w.rec.Record(history.Event{Kind: history.Lost, Lock: g.Lock(), Txn: g.Txn(), At: g.Deadline(), Client: w.name})
			} else {
				w.rec.Record(history.Event{Kind: history.Released, Lock: g.Lock(), Txn: g.Txn(), At: endOf(g), Client: w.name})
			}
		}
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), clientRequestTimeout)
		rerr := txn.Release(rctx)
		rcancel()
		switch {
		case thinkErr != nil:
			return // the phase ended while the transaction worked: not counted
		case lost:
			if measured {
				w.ws.lost++
				w.ws.fail(fmt.Errorf("a lease was lost while the transaction held its locks: %w", lostErr))
			}
			continue
		case rerr != nil:
			if measured {
				w.ws.fail(rerr)
			}
			continue
		}
		w.ws.all++
		for _, src := range srcs {
			if src == SourceSwitch {
				w.ws.swAll++
			}
		}
		if !measured {
			continue
		}
		w.ws.hist.Record(time.Since(t0))
		w.ws.think += thought
		w.ws.txns++
		w.ws.locks += uint64(len(gs))
		for _, s := range srcs {
			w.ws.bySource[s]++
			switch s {
			case SourceSwitch:
				w.live.sw.Add(1)
			case SourceServer:
				w.live.srv.Add(1)
			}
		}
		w.live.txns.Add(1)
	}
}

// hold waits out the think time (a transaction's work while it holds its locks).
func (w *worker) hold(ctx context.Context) (time.Duration, error) {
	if w.think <= 0 {
		return 0, nil
	}
	t0 := time.Now()
	t := time.NewTimer(w.think)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return time.Since(t0), nil
}

// startProgress prints a progress line for phase name until the returned function is called;
// its argument says whether to end the line with the final counts (false: erase it, for the
// warm-up). Without counters (c nil) the line shows only the elapsed time.
func startProgress(w io.Writer, live bool, name string, start time.Time, c *phaseCounters, inSwitch func() int) func(bool) {
	if w == nil || (c == nil && !live) {
		return func(bool) {}
	}
	done := make(chan bool)
	stopped := make(chan struct{})
	line := func() {
		el := time.Since(start)
		cr := "\r"
		if !live {
			cr = ""
		}
		if c == nil {
			fmt.Fprintf(w, "%s%-24s %5.1fs%80s", cr, name, el.Seconds(), "")
			return
		}
		n, sw, srv := c.txns.Load(), c.sw.Load(), c.srv.Load()
		share := 0.0
		if sw+srv > 0 {
			share = 100 * float64(sw) / float64(sw+srv)
		}
		locks := ""
		if inSwitch != nil {
			locks = "  " + plural(inSwitch(), "lock") + " in the switch"
		}
		fmt.Fprintf(w, "%s%-24s %5.1fs %9d txns %9.0f txn/s  grants: switch %9d (%5.1f%%) servers %9d%s   ", cr, name,
			el.Seconds(), n, float64(n)/el.Seconds(), sw, share, srv, locks)
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case final := <-done:
				if final {
					line()
					fmt.Fprintln(w)
				} else if live {
					fmt.Fprintf(w, "\r%140s\r", "")
				}
				return
			case <-t.C:
				if live {
					line()
				}
			}
		}
	}()
	return func(final bool) {
		done <- final
		<-stopped
	}
}
