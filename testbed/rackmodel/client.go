package rackmodel

import (
	"errors"
	"math"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/client/clientcore"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// Txn is one transaction of a worker.
type Txn struct {
	// Locks are the transaction's locks, taken in client.OrderLocks' order.
	Locks []client.LockSpec
	// Priority and Tenant of its acquires (the switch's two levels and tenant meters, the
	// servers' quotas).
	Priority uint8
	Tenant   uint16
	// Hold is how long it holds its locks after the last grant (with Params.ThinkEachLock,
	// after every grant) before it releases them.
	Hold time.Duration
	// Pause is how long the worker waits before it starts the transaction.
	Pause time.Duration
	// Backoff is how long the worker waits after the transaction aborted on a reject before it
	// starts the next one (a client refused for its quota backs off; 0: at once).
	Backoff time.Duration
}

// Source draws the transactions of one worker (Config.Source).
type Source interface {
	// Next fills t (its Locks reused) with the worker's next transaction, starting at virtual
	// time now.
	Next(now time.Duration, t *Txn)
}

// phaseSource draws a testbed phase's transactions (testbed.Workload); they hold their locks
// for Params.ThinkTime.
type phaseSource struct {
	wl   *testbed.Workload
	hold time.Duration
}

func (s *phaseSource) Next(_ time.Duration, t *Txn) {
	t.Locks = s.wl.Next(t.Locks)
	t.Priority, t.Tenant, t.Hold, t.Pause, t.Backoff = 0, 0, s.hold, 0, 0
}

// clientHost is a client machine: its workers share its NIC and link.
type clientHost struct {
	r       *Rack
	idx     int
	port    int
	ip      netip.Addr
	workers []*worker
	up, dn  link
	fr      udpframe.Frame
}

func newClientHost(r *Rack, c int) (*clientHost, error) {
	p := r.p
	h := &clientHost{r: r, idx: c, port: 1 + c, ip: clientIP(c)}
	h.up.prop, h.dn.prop = int64(p.Propagation), int64(p.Propagation)
	servers := make([]netip.AddrPort, p.Servers)
	for s := range servers {
		servers[s] = serverAddr(s)
	}
	for i := 0; i < p.Workers; i++ {
		gid := c*p.Workers + i
		var src Source
		if r.cfg.Source != nil {
			src = r.cfg.Source(gid)
		} else {
			wl, err := testbed.NewWorkload(r.cfg.Phase, p.Clients, gid, r.cfg.Seed<<32^uint64(gid))
			if err != nil {
				return nil, err
			}
			src = &phaseSource{wl: wl, hold: p.ThinkTime}
		}
		// The client's configuration as client.New makes it: lock l routes to Servers[l mod n]
		// (client.Config.Servers without a Route), answers also from the switch, deterministic
		// transaction ids (ClientID), no jitter (the model has no randomness of its own).
		route := func(lock uint32) (netip.AddrPort, error) { return servers[lock%uint32(len(servers))], nil }
		if r.nc != nil {
			route = ncRoute
		}
		core, err := clientcore.New(clientcore.Config{
			Route:            route,
			Servers:          servers,
			Switches:         []clientcore.AddrMatch{{IP: switchIP}},
			RetryInterval:    p.RetryTimeout,
			MaxRetryInterval: p.MaxRetryTimeout,
			RequestTimeout:   p.RequestTimeout,
			MaxAttempts:      p.MaxAttempts,
			ClientID:         uint32(gid + 1),
		})
		if err != nil {
			return nil, err
		}
		h.workers = append(h.workers, &worker{c: h, idx: i, gid: gid, addr: netip.AddrPortFrom(h.ip, uint16(workerPort0+i)),
			src: src, core: core, tickAt: math.MaxInt64})
	}
	return h, nil
}

func (h *clientHost) links() (up, down *link) { return &h.up, &h.dn }
func (h *clientHost) lossy() bool             { return true }

// receive hands an answer to its worker, which takes ClientCPU to read it.
func (h *clientHost) receive(b []byte) {
	r := h.r
	if err := udpframe.Parse(b, &h.fr); err != nil {
		r.stats.Malformed++
		return
	}
	i := int(h.fr.Dst.Port()) - workerPort0
	if h.fr.Dst.Addr() != h.ip || i < 0 || i >= len(h.workers) {
		r.stats.Unroutable++
		return
	}
	w := h.workers[i]
	if w.crashed {
		return
	}
	payload, from := h.fr.Payload, h.fr.Src
	start := max(r.k.Now(), w.busy)
	w.busy = start + int64(r.p.ClientCPU)
	r.at(w.busy, func() {
		if w.crashed {
			return
		}
		var out clientcore.Out
		w.core.Receive(r.k.Now(), payload, from, &out)
		w.process(&out)
	})
}

type wstate uint8

const (
	wIdle      wstate = iota
	wPausing          // waiting Txn.Pause before the transaction
	wAcquiring        // an acquire in flight
	wThinking         // holding, working (Txn.Hold)
	wReleasing        // releases in flight
	wBackoff          // NetChain: waiting to send a rejected acquire again
	wRollback         // NetChain's rollback rule: releasing what the run holds, draining the acquire in flight
)

// hold is one lock of the worker's transaction: the client core's record and its operations (the
// caller's memory, as package client allocates one object per acquire and release).
type hold struct {
	e        clientcore.Entry
	acq, rel clientcore.Op
	lost     bool
	idx      int   // its lock's index in the transaction's Locks
	asked    int64 // when its lock was first asked for in this run (NetChain: before the rejects)
	rejects  int   // the rejects in a row of its lock before this acquire (NetChain's retries)
}

// worker is one lock client (its clientcore.Core, on its own UDP port) running transactions one
// at a time, closed loop, with client.Txn's rules (strict two-phase locking): the locks in
// client.OrderLocks' order, one acquire at a time; on a reject (or an acquire given up) every
// held lock is released and the transaction aborts; a lease lost while later locks were awaited
// aborts it once they are (Txn.Acquire checks the grants at the end); after the last grant the
// transaction works for its hold time, then releases every lock, the last taken first, and the
// next transaction starts when every release is answered. Every message costs the worker
// ClientCPU. The core's timers (retransmissions, liveness probes, lease deadlines) run at its
// NextDeadline.
type worker struct {
	c       *clientHost
	idx     int
	gid     int
	addr    netip.AddrPort
	src     Source
	core    *clientcore.Core
	busy    int64
	tickAt  int64
	crashed bool

	txn   Txn
	id    uint64
	state wstate
	i     int // the lock being acquired (one at a time; with NetChain's Burst, the locks sent)
	got   int // the locks granted in this run
	// out counts the locks asked for in this run and neither granted nor given up: their acquire
	// in flight or waiting to be sent again (one at a time: 0 or 1).
	out   int
	start int64 // the transaction's start
	held  []*hold
	pend  int // releases not answered
	abort bool
	// rejected: the transaction aborted on a reject (Txn.Backoff applies).
	rejected bool
	// NetChain's rollback rule (client.NetChainRollback): rolling, the run is being rolled back;
	// rerun, the next begin runs txn again (its start kept); rolledBack, when the last rollback
	// ended (a rerun's deadline runs from it).
	rolling, rerun bool
	rolledBack     int64
	stats          WorkerCounters
}

func (w *worker) rack() *Rack { return w.c.r }

// process carries out what the core asked for: the datagrams (ClientCPU each on the worker),
// then the finished operations and the lost leases, then the timer. It returns when the last
// datagram leaves the worker (now without one).
func (w *worker) process(out *clientcore.Out) int64 {
	r := w.rack()
	left := r.k.Now()
	for i := range out.Sends {
		s := &out.Sends[i]
		start := max(r.k.Now(), w.busy)
		w.busy = start + int64(r.p.ClientCPU)
		r.hostSend(w.c, w.c.port, w.busy, r.frame(w.addr, s.To, &s.Msg, nil))
		left = w.busy
	}
	done, lost := out.Done, out.Lost
	for _, e := range lost {
		if h, ok := e.User.(*hold); ok {
			w.leaseLost(h)
		}
	}
	for _, op := range done {
		h, ok := op.E.User.(*hold)
		if !ok {
			continue
		}
		switch {
		case op == &h.acq:
			w.acquired(h)
		case op == &h.rel:
			w.released(h)
		}
	}
	w.scheduleTick()
	return left
}

// scheduleTick makes sure the core's Tick runs at its next deadline.
func (w *worker) scheduleTick() {
	due := w.core.NextDeadline()
	if due == math.MaxInt64 || due >= w.tickAt {
		return
	}
	w.tickAt = due
	r := w.rack()
	r.at(due, func() {
		if w.tickAt != due {
			return
		}
		w.tickAt = math.MaxInt64
		if w.crashed {
			return
		}
		var out clientcore.Out
		w.core.Tick(r.k.Now(), &out)
		w.process(&out)
	})
}

// startTxn draws the next transaction and starts it after its pause.
func (w *worker) startTxn() {
	r := w.rack()
	if r.stopping || w.crashed {
		w.state = wIdle
		return
	}
	w.src.Next(time.Duration(r.k.Now()), &w.txn)
	if r.nc != nil {
		w.txn.Locks = client.NetChainLocks(w.txn.Locks, r.nc.cfg.Slots)
	} else {
		w.txn.Locks = client.OrderLocks(w.txn.Locks)
	}
	if w.txn.Pause > 0 {
		w.state = wPausing
		r.at(r.k.Now()+int64(w.txn.Pause), func() {
			if w.state == wPausing {
				w.begin()
			}
		})
		return
	}
	w.begin()
}

func (w *worker) begin() {
	r := w.rack()
	if r.stopping || w.crashed {
		w.state = wIdle
		return
	}
	w.id = w.core.NewTxnID()
	rerun := w.rerun
	if !rerun {
		w.start = r.k.Now()
	}
	w.i, w.got, w.out, w.held, w.abort, w.rejected, w.rerun = 0, 0, 0, w.held[:0], false, false, false
	if len(w.txn.Locks) == 0 {
		w.finish()
		return
	}
	w.ncArm(rerun)
	if w.ncBurst() {
		// Every acquire of the run at once (client.NetChainPolicy.Burst).
		w.state = wAcquiring
		for w.i < len(w.txn.Locks) {
			w.i++
			w.send(w.i-1, nil)
		}
		return
	}
	w.acquire()
}

// acquire asks for lock i of the transaction.
func (w *worker) acquire() { w.send(w.i, nil) }

// send sends the acquire of lock j of the transaction: its first (prev nil), or again after
// prev's reject.
func (w *worker) send(j int, prev *hold) {
	r := w.rack()
	l := w.txn.Locks[j]
	if !w.rolling {
		w.state = wAcquiring
	}
	now := r.k.Now()
	h := &hold{idx: j, asked: now}
	h.e.User = h
	if prev != nil {
		h.asked, h.rejects = prev.asked, prev.rejects
	} else {
		w.out++
	}
	r.stats.AcquiresSent++
	r.record(history.Event{Kind: history.AcquireSent, Lock: l.Lock, Txn: w.id, Mode: l.Mode, Priority: w.txn.Priority,
		At: vtime(now)})
	var out clientcore.Out
	err := w.core.Acquire(now, &h.e, &h.acq, l.Lock, l.Mode, w.id, r.nc != nil,
		clientcore.ReqOptions{Priority: w.txn.Priority, Tenant: w.txn.Tenant, Lease: r.p.Lease}, &out)
	if err != nil {
		r.log.Error("rackmodel: acquire", "err", err)
		h.acq.Done, h.acq.Err = true, err
		out.Done = append(out.Done, &h.acq)
	}
	if g := r.p.GiveUp; g > 0 {
		r.at(now+int64(g), func() {
			if !h.acq.Done && !w.crashed {
				var out clientcore.Out
				w.core.Cancel(r.k.Now(), &h.acq, errGaveUp, &out)
				w.process(&out)
			}
		})
	}
	w.process(&out)
}

var errGaveUp = errors.New("rackmodel: the worker gave the acquire up (Params.GiveUp)")

// acquired takes the outcome of an acquire in flight.
func (w *worker) acquired(h *hold) {
	r := w.rack()
	now := r.k.Now()
	l := w.txn.Locks[h.idx]
	if err := h.acq.Err; err != nil {
		var rej *clientcore.RejectError
		if errors.As(err, &rej) {
			r.stats.Rejects++
			w.stats.Rejects++
			if rej.Status == wire.StatusQuota {
				w.stats.QuotaRejects++
			}
			r.record(history.Event{Kind: history.Rejected, Lock: l.Lock, Txn: w.id, At: vtime(now)})
			if w.ncRetry(h, err) {
				return
			}
			w.rejected = true
		} else {
			r.stats.Abandoned++
			r.record(history.Event{Kind: history.Abandoned, Lock: l.Lock, Txn: w.id, At: vtime(now)})
		}
		w.out--
		if w.rolling || w.ncBurst() {
			// A burst's other acquires may be out: they drain as in a rollback.
			w.ncRollback()
			return
		}
		w.abort = true
		w.releaseAll()
		return
	}
	r.stats.Granted++
	w.stats.Granted++
	r.lat.req.Record(time.Duration(now - h.asked))
	w.out--
	w.got++
	w.held = append(w.held, h)
	ev := history.Event{Kind: history.Granted, Lock: l.Lock, Txn: w.id, Mode: h.e.Mode, Token: h.e.Token, At: vtime(now)}
	if dl := h.e.Deadline(); dl != 0 {
		ev.Deadline = vtime(dl)
	}
	r.record(ev)
	if w.rolling {
		// An acquire in flight at the rollback, granted (held: h alone): released at once.
		w.releaseHeld()
		w.ncRollbackDone()
		return
	}
	if w.ncBurst() {
		if w.got == len(w.txn.Locks) {
			w.think(w.releaseAll)
		}
		return
	}
	w.i++
	if w.i < len(w.txn.Locks) {
		if r.p.ThinkEachLock && w.txn.Hold > 0 {
			// Work with this lock before asking for the next one.
			w.think(w.acquire)
			return
		}
		w.acquire()
		return
	}
	if w.abort {
		// A lease was lost while the later locks were awaited (client.Txn.Acquire fails).
		w.releaseAll()
		return
	}
	w.think(w.releaseAll)
}

// think holds the locks for the transaction's hold time, then runs next.
func (w *worker) think(next func()) {
	if w.txn.Hold == 0 {
		next()
		return
	}
	w.state = wThinking
	r := w.rack()
	r.at(r.k.Now()+int64(w.txn.Hold), func() {
		if !w.crashed && w.state == wThinking {
			next()
		}
	})
}

// leaseLost records that a held lock's lease was lost: the transaction aborts.
func (w *worker) leaseLost(h *hold) {
	if h.lost {
		return
	}
	r := w.rack()
	h.lost = true
	w.abort = true
	r.stats.LeasesLost++
	at := r.k.Now()
	if dl := h.e.Deadline(); dl != 0 && dl < at {
		at = dl
	}
	r.record(history.Event{Kind: history.Lost, Lock: h.e.Lock, Txn: w.id, At: vtime(at)})
}

// releaseAll releases every lock the transaction holds, the last taken first (client.Txn.Release),
// and finishes the transaction when every release is answered.
func (w *worker) releaseAll() {
	w.state = wReleasing
	w.releaseHeld()
	if w.pend == 0 && w.state == wReleasing {
		w.finish()
	}
}

// releaseHeld sends the release of every held lock, the last taken first, and forgets them:
// w.pend counts the releases not answered.
func (w *worker) releaseHeld() {
	r := w.rack()
	held := w.held
	w.held = w.held[:0]
	w.pend += len(held)
	for i := len(held) - 1; i >= 0; i-- {
		h := held[i]
		r.stats.ReleasesSent++
		var out clientcore.Out
		if !w.core.Release(r.k.Now(), &h.e, &h.rel, &out) {
			w.pend--
			continue
		}
		// The holder uses the lock until its release leaves the worker: that instant ends its
		// holder interval (history: Released is stamped before the release is sent).
		e := history.Event{Kind: history.Released, Lock: h.e.Lock, Txn: w.id}
		left := w.process(&out)
		e.At = vtime(left)
		r.at(left, func() { r.record(e) })
	}
}

// released takes the answer of a release.
func (w *worker) released(h *hold) {
	r := w.rack()
	if h.rel.Err == nil {
		r.stats.ReleaseAcks++
	} else {
		r.stats.ReleaseRefused++ // the lease had ended, or the server refused: the lock is not held
	}
	w.pend--
	if w.rolling {
		w.ncRollbackDone()
		return
	}
	if w.pend == 0 && w.state == wReleasing {
		w.finish()
	}
}

func (w *worker) finish() {
	r := w.rack()
	now := r.k.Now()
	if w.abort {
		r.stats.Aborts++
		w.stats.Aborts++
	} else {
		r.stats.Txns++
		r.stats.Acquisitions += uint64(len(w.txn.Locks))
		r.lat.txn.Record(time.Duration(now - w.start))
		r.series.txn(now)
		w.stats.Txns++
		w.stats.TxnTime += time.Duration(now - w.start)
	}
	w.state = wIdle
	if w.rejected && w.txn.Backoff > 0 {
		w.state = wPausing
		r.at(now+int64(w.txn.Backoff), func() {
			if w.state == wPausing {
				w.startTxn()
			}
		})
		return
	}
	w.startTxn()
}

// CrashWorker stops worker w (0-based over the rack) dead: it never sends or reads anything
// again, so a lock it holds or is granted is never released.
func (r *Rack) CrashWorker(w int) {
	if w >= 0 && w < len(r.workers) {
		r.workers[w].crashed = true
	}
}
