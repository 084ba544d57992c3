package rackmodel

import (
	"cmp"
	"net/netip"
	"slices"
	"time"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// clientHost is a client machine: its workers share its NIC and link.
type clientHost struct {
	r        *Rack
	idx      int
	port     int
	ip       netip.Addr
	workers  []*worker
	up_, dn_ link
	fr       udpframe.Frame
}

func newClientHost(r *Rack, c int) (*clientHost, error) {
	h := &clientHost{r: r, idx: c, port: 1 + c, ip: clientIP(c)}
	for w := 0; w < r.p.Workers; w++ {
		gid := c*r.p.Workers + w
		wl, err := testbed.NewWorkload(r.cfg.Phase, r.p.Clients, gid, r.cfg.Seed<<32^uint64(gid))
		if err != nil {
			return nil, err
		}
		h.workers = append(h.workers, &worker{c: h, idx: w, gid: gid,
			addr: netip.AddrPortFrom(h.ip, uint16(workerPort0+w)), wl: wl})
	}
	return h, nil
}

func (h *clientHost) links() (up, down *link) { return &h.up_, &h.dn_ }

// receive hands an answer to its worker, which takes ClientCPU to read it.
func (h *clientHost) receive(b []byte) {
	r := h.r
	var f wire.Fields
	if err := parse(b, &h.fr, &f); err != nil {
		r.stats.Malformed++
		return
	}
	i := int(h.fr.Dst.Port()) - workerPort0
	if i < 0 || i >= len(h.workers) {
		r.stats.Unroutable++
		return
	}
	w := h.workers[i]
	start := max(r.sim.now, w.busy)
	w.busy = start + int64(r.p.ClientCPU)
	r.sim.at(w.busy, func() { w.handle(&f) })
}

type wstate uint8

const (
	wIdle wstate = iota
	wAcquiring
	wThinking
	wReleasing
)

// hold is one lock of the worker's transaction that was granted.
type hold struct {
	lock     uint32
	mode     wire.Mode
	token    uint64
	deadline int64
	lost     bool // the lease ended (reject lease-expired): not released
	pending  bool // release sent, not acknowledged
	retried  bool // the release was sent again
}

// worker runs transactions one at a time, as client.Txn does: the locks in ascending order, one
// acquire at a time, then ThinkTime, then the releases, all sent together; the next transaction
// starts when every release is acknowledged. A request without an answer for RetryTimeout is
// sent again with the retry flag.
type worker struct {
	c     *clientHost
	idx   int
	gid   int
	addr  netip.AddrPort
	wl    *testbed.Workload
	spec  []client.LockSpec
	state wstate
	txn   uint64
	seq   uint64
	i     int   // the lock being acquired
	sent  int64 // first send of the current acquire (its timestamp)
	start int64 // the transaction's start
	held  []hold
	pend  int // releases not acknowledged
	busy  int64
	gen   uint64 // progress: a retry timer fires only if nothing happened since it was set
	abort bool
}

func (w *worker) rack() *Rack { return w.c.r }

// send builds and sends a request (ClientCPU on the worker's core) and returns when it leaves
// the worker.
func (w *worker) send(f *wire.Fields, dst netip.AddrPort) int64 {
	r := w.rack()
	start := max(r.sim.now, w.busy)
	w.busy = start + int64(r.p.ClientCPU)
	r.hostSend(w.c, w.c.port, w.busy, frame(w.addr, dst, f, nil))
	return w.busy
}

func (w *worker) startTxn() {
	r := w.rack()
	if r.stopping {
		w.state = wIdle
		return
	}
	w.spec = w.wl.Next(w.spec)
	slices.SortFunc(w.spec, func(a, b client.LockSpec) int { return cmp.Compare(a.Lock, b.Lock) })
	w.spec = slices.CompactFunc(w.spec, func(a, b client.LockSpec) bool {
		if a.Lock == b.Lock && b.Mode == wire.Exclusive {
			a.Mode = wire.Exclusive
		}
		return a.Lock == b.Lock
	})
	w.seq++
	w.txn = uint64(w.c.idx+1)<<48 | uint64(w.idx+1)<<32 | w.seq&0xffffffff
	w.i, w.held, w.abort, w.start = 0, w.held[:0], false, r.sim.now
	w.state = wAcquiring
	w.sendAcquire(false)
}

func (w *worker) acquireFields(retry bool) wire.Fields {
	l := w.spec[w.i]
	f := wire.Fields{Op: wire.OpAcquire, Mode: l.Mode, Lock: l.Lock, Txn: w.txn, Timestamp: uint64(w.sent),
		LeaseMicros: uint32(w.rack().p.Lease / time.Microsecond)}
	if retry {
		f.Flags = wire.FlagRetry
	}
	return f
}

func (w *worker) sendAcquire(retry bool) {
	r := w.rack()
	l := w.spec[w.i]
	if !retry {
		w.sent = r.sim.now
		r.stats.AcquiresSent++
		r.record(history.Event{Kind: history.AcquireSent, Lock: l.Lock, Txn: w.txn, Mode: l.Mode, At: vtime(r.sim.now)})
	} else {
		r.stats.Retransmits++
	}
	f := w.acquireFields(retry)
	w.send(&f, serverAddr(r.homeOf(l.Lock)))
	w.arm()
}

// arm sets the retry timer.
func (w *worker) arm() {
	r := w.rack()
	w.gen++
	g := w.gen
	r.sim.at(r.sim.now+int64(r.p.RetryTimeout), func() {
		if w.gen != g {
			return
		}
		switch w.state {
		case wAcquiring:
			w.sendAcquire(true)
		case wReleasing:
			for i := range w.held {
				if h := &w.held[i]; h.pending {
					h.retried = true
					w.sendRelease(h, true)
				}
			}
			w.arm()
		}
	})
}

func (w *worker) findHeld(lock uint32) *hold {
	for i := range w.held {
		if w.held[i].lock == lock {
			return &w.held[i]
		}
	}
	return nil
}

// handle takes one answer.
func (w *worker) handle(f *wire.Fields) {
	r := w.rack()
	if f.Txn != w.txn || w.state == wIdle {
		r.stats.Stray++
		return
	}
	h := w.findHeld(f.Lock)
	switch {
	case f.Op == wire.OpReject && f.Status == wire.StatusLeaseExpired && h != nil && !h.lost && !h.pending:
		// The lease ended (a sweep or the server's expiry): the lock is gone.
		h.lost = true
		w.abort = true
		r.stats.LeasesLost++
		r.record(history.Event{Kind: history.Lost, Lock: h.lock, Txn: w.txn, At: vtime(h.deadline)})
		return
	case w.state == wAcquiring && f.Lock == w.spec[w.i].Lock && f.Timestamp == uint64(w.sent) &&
		(f.Op == wire.OpGrant || f.Op == wire.OpReject):
		w.acquired(f)
	case w.state == wReleasing && h != nil && h.pending && (f.Op == wire.OpRelease && f.Flags&wire.FlagReply != 0 ||
		f.Op == wire.OpReject):
		w.released(h, f)
	case f.Op == wire.OpGrant && h != nil:
		r.stats.DupAnswers++ // a grant sent again for a retransmitted acquire
	default:
		r.stats.Stray++
	}
}

func (w *worker) acquired(f *wire.Fields) {
	r := w.rack()
	l := w.spec[w.i]
	if f.Op == wire.OpReject {
		r.stats.Rejects++
		r.record(history.Event{Kind: history.Rejected, Lock: l.Lock, Txn: w.txn, At: vtime(r.sim.now)})
		w.abort = true
		w.releaseAll()
		return
	}
	r.stats.Granted++
	r.lat.req.Record(time.Duration(r.sim.now - w.sent))
	dl := w.sent + int64(f.LeaseMicros)*int64(time.Microsecond)
	w.held = append(w.held, hold{lock: l.Lock, mode: f.Mode, token: f.Token, deadline: dl})
	r.record(history.Event{Kind: history.Granted, Lock: l.Lock, Txn: w.txn, Mode: f.Mode, Token: f.Token,
		Deadline: vtime(dl), At: vtime(r.sim.now)})
	w.i++
	if w.i < len(w.spec) {
		if r.p.ThinkEachLock && r.p.ThinkTime > 0 {
			// Work with this lock before asking for the next one.
			w.state = wThinking
			w.gen++
			r.sim.at(r.sim.now+int64(r.p.ThinkTime), func() {
				w.state = wAcquiring
				w.sendAcquire(false)
			})
			return
		}
		w.sendAcquire(false)
		return
	}
	w.state = wThinking
	w.gen++
	if r.p.ThinkTime == 0 {
		w.releaseAll()
		return
	}
	r.sim.at(r.sim.now+int64(r.p.ThinkTime), w.releaseAll)
}

// releaseAll sends the releases of every lock still held, the last taken first.
func (w *worker) releaseAll() {
	r := w.rack()
	w.state = wReleasing
	w.pend = 0
	for i := len(w.held) - 1; i >= 0; i-- {
		h := &w.held[i]
		if h.lost {
			continue
		}
		h.pending = true
		w.pend++
		// The holder uses the lock until its release leaves the worker: that instant is the end
		// of its holder interval (history: Released is stamped before the release is sent).
		at := w.sendRelease(h, false)
		e := history.Event{Kind: history.Released, Lock: h.lock, Txn: w.txn, At: vtime(at)}
		r.sim.at(at, func() { r.record(e) })
	}
	if w.pend == 0 {
		w.finish()
		return
	}
	w.arm()
}

func (w *worker) sendRelease(h *hold, retry bool) int64 {
	r := w.rack()
	f := wire.Fields{Op: wire.OpRelease, Mode: h.mode, Lock: h.lock, Txn: w.txn, Token: h.token, Timestamp: uint64(r.sim.now)}
	if retry {
		f.Flags = wire.FlagRetry
		r.stats.Retransmits++
	} else {
		r.stats.ReleasesSent++
	}
	return w.send(&f, serverAddr(r.homeOf(h.lock)))
}

func (w *worker) released(h *hold, f *wire.Fields) {
	r := w.rack()
	switch {
	case f.Op != wire.OpReject:
		r.stats.ReleaseAcks++
	case f.Status == wire.StatusNotHolder && h.retried:
		r.stats.ReleaseAcks++ // a retransmitted release of a grant that already ended
	default:
		r.stats.ReleaseRefused++ // lease expired meanwhile, or refused: the lock is no longer held
	}
	h.pending = false
	w.pend--
	w.gen++
	if w.pend == 0 {
		w.finish()
		return
	}
	w.arm() // the retry timer of the releases still unanswered (the answer ended the old one)
}

func (w *worker) finish() {
	r := w.rack()
	if w.abort {
		r.stats.Aborts++
	} else {
		r.stats.Txns++
		r.stats.Acquisitions += uint64(len(w.spec))
		r.lat.txn.Record(time.Duration(r.sim.now - w.start))
		r.series.txn(r.sim.now)
	}
	w.state = wIdle
	w.startTxn()
}
