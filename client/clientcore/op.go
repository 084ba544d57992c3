package clientcore

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// OpKind is what an operation does.
type OpKind uint8

const (
	OpAcquire  OpKind = iota // acquire (or try acquire), then the renewal of a grant that waited long
	OpRelease                // release of a held grant
	OpRenew                  // renewal the caller asked for
	opWithdraw               // the withdrawal of an abandoned acquire (no caller waits)
)

// Op is one request and its retransmissions until it is answered, refused, times out or is
// cancelled. When it finishes it appears in Out.Done with Done set and Err its result.
type Op struct {
	Kind OpKind
	E    *Entry
	// Done and Err are the result.
	Done bool
	Err  error
	// User is the caller's attachment (package client: the waiting goroutine's channel).
	User any

	req         wire.Fields
	kd          kind // the kind the op is registered under
	ts          int64
	attempt     int
	rto         time.Duration
	giveUp      int64 // 0: none
	peer        netip.AddrPort
	silent      int // copies in a row after which nothing came about the request
	answering   bool
	silentSince int64
	heardAt     uint32    // e.heard when the last copy was sent
	tm          heapTimer // the op's timer, in Core.ops
	// state within an op
	renewing bool        // acquire: the grant came with little lease left: renewing first
	grace    bool        // release: refused not-holder, waiting one interval for a late reply
	result   error       // release: the answer's verdict
	sub      *Op         // acquire: the renewal
	parent   *Op         // renewal of an acquire
	acq      wire.Fields // withdraw: the acquire it withdraws
	token    uint64      // withdraw: a grant that raced with it
	internal bool        // an acquire's renewal: never reported in Out.Done
}

// Acquire starts an acquire of lock in mode for txn (try: never wait in a queue). e and op are
// the caller's zero values (so that a caller can allocate them with its own record: package
// client allocates one object per acquire+release); e becomes the (lock, txn) record and op the
// acquire, which appears in Out.Done when it finishes.
func (c *Core) Acquire(now int64, e *Entry, op *Op, lock uint32, mode wire.Mode, txn uint64, try bool, o ReqOptions,
	out *Out) error {
	c.now = now
	if !mode.Valid() {
		return fmt.Errorf("client: invalid mode %d", mode)
	}
	if wire.IsReservedLock(lock) {
		return fmt.Errorf("client: lock %d: %w", lock, ErrReservedLock)
	}
	if _, err := c.route(lock); err != nil {
		return err
	}
	*e = Entry{Lock: lock, Txn: txn, Mode: mode, opts: o, kt: heapTimer{idx: -1}, User: e.User}
	ts := c.timestamp(now)
	*op = Op{Kind: OpAcquire, E: e, kd: kindAcquire, ts: ts, tm: heapTimer{idx: -1}, User: op.User}
	if err := c.register(e, kindAcquire, uint64(ts), op); err != nil {
		return err
	}
	var flags wire.Flags
	if try {
		flags = wire.FlagTry
	}
	op.req = wire.Fields{Op: wire.OpAcquire, Mode: mode, Flags: flags, Priority: o.Priority, Tenant: o.Tenant,
		Lock: lock, Txn: txn, Timestamp: uint64(ts), LeaseMicros: LeaseMicros(o.Lease), Slots: o.Contention}
	if err := op.start(c, now, out); err != nil {
		c.unregister(e, kindAcquire, op)
		return err
	}
	return nil
}

// Release starts the release of e's grant into op (the caller's zero value; nil: the core
// allocates one). It reports false when e was released before (the caller waits for that
// release instead). If the lease was lost already and the server said so, the op finishes at
// once with that error.
func (c *Core) Release(now int64, e *Entry, op *Op, out *Out) bool {
	c.now = now
	if e.released {
		return false
	}
	e.released = true
	if op := e.ops[kindProbe]; op != nil && op.Kind == OpRenew && op.parent == nil {
		op.finish(c, fmt.Errorf("client: renew lock %d: released", e.Lock), out)
	}
	c.keep.remove(e)
	if op == nil {
		op = new(Op)
	}
	*op = Op{Kind: OpRelease, E: e, kd: kindRelease, tm: heapTimer{idx: -1}, User: op.User}
	if e.deadline != 0 && now >= e.deadline {
		c.markLost(e, fmt.Errorf("%w: the lease ended %v before the release", ErrLeaseLost,
			time.Duration(now-e.deadline)), out)
	}
	if e.lostErr != nil && errors.As(e.lostErr, new(*RejectError)) {
		// The server freed the lock already and said so.
		op.Done, op.Err = true, e.lostErr
		c.endHold(e)
		out.Done = append(out.Done, op)
		return true
	}
	op.ts = c.timestamp(now)
	if err := c.register(e, kindRelease, uint64(op.ts), op); err != nil {
		op.Done, op.Err = true, err
		c.endHold(e)
		out.Done = append(out.Done, op)
		return true
	}
	op.req = wire.Fields{Op: wire.OpRelease, Mode: e.Mode, Priority: e.opts.Priority, Tenant: e.opts.Tenant,
		Lock: e.Lock, Txn: e.Txn, Token: e.Token, Timestamp: uint64(op.ts)}
	op.giveUp = now + int64(c.cfg.RequestTimeout)
	if err := op.start(c, now, out); err != nil {
		op.finish(c, err, out)
	}
	return true
}

// endHold forgets that e is held (a release finished).
func (c *Core) endHold(e *Entry) {
	e.held, e.probing = false, false
	c.dropIfIdle(e)
}

// Renew starts a renewal of e's lease the caller asked for (KeepAlive renews by itself) into op
// (the caller's zero value).
func (c *Core) Renew(now int64, e *Entry, op *Op, out *Out) {
	c.now = now
	*op = Op{Kind: OpRenew, E: e, kd: kindProbe, tm: heapTimer{idx: -1}, User: op.User}
	switch {
	case e.released:
		op.Done, op.Err = true, fmt.Errorf("client: renew lock %d: released", e.Lock)
	case e.lostErr != nil:
		op.Done, op.Err = true, e.lostErr
	}
	if op.Done {
		out.Done = append(out.Done, op)
		return
	}
	c.startRenew(now, op, out)
}

// startRenew sends op's lease-probe (a renewal of the caller or of an acquire).
func (c *Core) startRenew(now int64, op *Op, out *Out) {
	e := op.E
	op.ts = c.timestamp(now)
	if err := c.register(e, kindProbe, uint64(op.ts), op); err != nil {
		op.finish(c, err, out)
		return
	}
	op.req = wire.Fields{Op: wire.OpLeaseProbe, Mode: e.Mode, Priority: e.opts.Priority, Tenant: e.opts.Tenant,
		Lock: e.Lock, Txn: e.Txn, Token: e.Token, Timestamp: uint64(op.ts), LeaseMicros: LeaseMicros(e.opts.Lease)}
	op.giveUp = now + int64(c.cfg.RequestTimeout)
	if err := op.start(c, now, out); err != nil {
		op.finish(c, err, out)
	}
}

// Cancel ends op because its caller gave up (its context ended): the op finishes with
// ErrTimeout wrapping cause, naming the server, the attempts and whether the server was heard
// from. An acquire that may wait in a queue is withdrawn in the background (a release with token
// 0; a grant that races with it is released).
func (c *Core) Cancel(now int64, op *Op, cause error, out *Out) {
	if op.Done {
		return
	}
	c.now = now
	if op.Kind == OpAcquire && op.sub != nil {
		// The grant is there, its renewal not answered: the caller gave up; release it.
		sub := op.sub
		op.sub, sub.parent = nil, nil
		sub.finish(c, errStopped, out)
		op.finishNoUnregister(c, fmt.Errorf("%w: acquire of lock %d: %w", ErrTimeout, op.E.Lock, cause), out)
		c.Release(now, op.E, nil, out)
		return
	}
	err := c.ctxEnded(op, cause)
	if op.Kind == OpAcquire {
		op.failAcquire(c, now, err, out)
		return
	}
	op.finish(c, err, out)
}

// failAcquire ends an acquire that was not answered (its caller gave up, or its server is
// unreachable): the request may wait in the server's queue, so it is withdrawn.
func (op *Op) failAcquire(c *Core, now int64, err error, out *Out) {
	c.ops.remove(op)
	op.Done, op.Err = true, err
	out.Done = append(out.Done, op)
	c.withdraw(now, op, out)
}

// ctxEnded is the error of an op whose caller gave up: ErrTimeout wrapping the cause, with the
// server, the attempts and whether the server was heard from (a request that waits in its queue)
// since the copy before.
func (c *Core) ctxEnded(op *Op, cause error) error {
	state := "no answer from the server"
	if op.answering || op.E.heard != op.heardAt {
		state = "the server answering"
	}
	return fmt.Errorf("%w: %s of lock %d at %s, %d attempts, %s: %w", ErrTimeout, op.req.Op, op.req.Lock, op.peer,
		op.attempt, state, cause)
}

// withdraw turns the abandoned acquire op's registration into a withdrawal: it keeps receiving
// grants (to release a racing one) and sends releases with token 0 until acknowledged or
// RequestTimeout passes.
func (c *Core) withdraw(now int64, acq *Op, out *Out) {
	e := acq.E
	if c.closed {
		c.unregister(e, kindAcquire, acq)
		return
	}
	w := &Op{Kind: opWithdraw, E: e, kd: kindRelease, acq: acq.req, tm: heapTimer{idx: -1}, peer: acq.peer}
	// Grants and release answers both reach the withdrawal.
	e.ops[kindAcquire] = w
	e.ops[kindRelease] = w
	e.ts[kindRelease] = 0 // every round of the withdrawal has its own timestamp
	w.giveUp = now + int64(c.cfg.RequestTimeout)
	c.withdrawRound(now, w, out)
}

func (c *Core) withdrawRound(now int64, w *Op, out *Out) {
	e := w.E
	w.req = wire.Fields{Op: wire.OpRelease, Mode: w.acq.Mode, Priority: w.acq.Priority, Tenant: w.acq.Tenant,
		Lock: e.Lock, Txn: e.Txn, Token: w.token, Timestamp: uint64(c.timestamp(now))}
	w.attempt, w.rto = 0, 0
	if err := w.start(c, now, out); err != nil {
		w.finish(c, err, out)
	}
}

// start sends the first copy of op's request and arms its timer.
func (op *Op) start(c *Core, now int64, out *Out) error {
	op.attempt, op.rto, op.silent, op.answering = 0, c.cfg.RetryInterval, 0, false
	return op.sendCopy(c, now, out)
}

// sendCopy sends the next copy of op's request (flagged retry after the first), with the
// liveness probe of an acquire, and arms the retransmission timer.
func (op *Op) sendCopy(c *Core, now int64, out *Out) error {
	op.attempt++
	if op.attempt > 1 {
		op.req.Flags |= wire.FlagRetry
	}
	to, err := c.route(op.req.Lock)
	if err != nil {
		return err
	}
	e := op.E
	if to != op.peer || op.attempt == 1 {
		if to != op.peer {
			op.silent, op.answering = 0, false
		}
		op.peer = to
		e.peer = to
	}
	op.heardAt = e.heard
	if op.silent == 0 {
		op.silentSince = now
	}
	c.send(out, to, &op.req)
	if op.Kind == OpAcquire && c.cfg.MaxAttempts > 0 && op.silent >= max(1, c.cfg.MaxAttempts/2) {
		// The liveness probe: a lease-probe of the lock and txn with token 0, which no holder
		// has, so that the server (or the switch) refuses it with not-holder and changes nothing;
		// the refusal counts as hearing from the server. It goes with every acquire, a try's
		// too (a try may wait after all: the lock server's RDMA tier grants it in its lock core,
		// then holds the grant back until it has taken the ALock, answering the try's copies with
		// nothing meanwhile, and that silence must not read as an unreachable server), but only
		// once half of MaxAttempts copies went unanswered: an acquire waiting in the queue of a
		// server that answers probes sends one per MaxAttempts/2 retransmissions (probing every
		// retransmission doubled a waiting acquire's traffic and the server's answers).
		ts := uint64(c.timestamp(now))
		if e.aliveFirst == 0 {
			e.aliveFirst = ts
		}
		e.aliveLast = ts
		p := wire.Fields{Op: wire.OpLeaseProbe, Mode: op.req.Mode, Priority: op.req.Priority, Tenant: op.req.Tenant,
			Lock: op.req.Lock, Txn: op.req.Txn, Timestamp: ts}
		c.send(out, to, &p)
	}
	// Up to 25% jitter keeps clients that lost packets together from retransmitting together.
	wait := op.rto
	if c.cfg.Jitter != nil {
		wait -= time.Duration(c.cfg.Jitter(int64(op.rto / 4)))
	}
	due := now + int64(wait)
	if op.giveUp != 0 {
		due = min(due, op.giveUp)
	}
	c.ops.set(op, due)
	return nil
}

// timer runs when op's timer is due: the end of a release's grace, a timeout, an unreachable
// server, or the next copy.
func (op *Op) timer(c *Core, now int64, out *Out) {
	if op.grace {
		op.grace = false
		op.finishRelease(c, out)
		return
	}
	if op.giveUp != 0 && now >= op.giveUp {
		op.finish(c, fmt.Errorf("%w: %s of lock %d at %s unanswered after %d attempts", ErrTimeout, op.req.Op,
			op.req.Lock, op.peer, op.attempt), out)
		return
	}
	if op.answering = op.E.heard != op.heardAt; op.answering {
		op.silent = 0
	} else if op.silent++; c.cfg.MaxAttempts > 0 && op.silent >= c.cfg.MaxAttempts {
		err := &UnreachableError{Server: op.peer.String(), Op: op.req.Op, Lock: op.req.Lock, Attempts: op.silent,
			Elapsed: time.Duration(now - op.silentSince)}
		if op.Kind == OpAcquire {
			op.failAcquire(c, now, err, out)
		} else {
			op.finish(c, err, out)
		}
		return
	}
	op.rto = min(2*op.rto, c.cfg.MaxRetryInterval)
	if err := op.sendCopy(c, now, out); err != nil {
		op.finish(c, err, out)
	}
}

// finish ends op with err: it leaves the timer heap and its registration and is reported.
func (op *Op) finish(c *Core, err error, out *Out) {
	if op.Done {
		return
	}
	op.finishNoUnregister(c, err, out)
	c.unregister(op.E, op.kd, op)
	if op.Kind == opWithdraw {
		c.unregister(op.E, kindAcquire, op)
	}
	if op.Kind == OpRelease {
		c.endHold(op.E)
	}
}

func (op *Op) finishNoUnregister(c *Core, err error, out *Out) {
	c.ops.remove(op)
	op.Done, op.Err = true, err
	if op.Kind == opWithdraw {
		return // nobody waits for a withdrawal
	}
	if op.parent != nil {
		op.parent.renewalDone(c, c.now, err, out)
		return
	}
	if op.internal {
		return
	}
	out.Done = append(out.Done, op)
}

// answer offers f, an answer about op's (lock, txn), to op; op takes it or ignores it.
func (op *Op) answer(c *Core, now int64, f *wire.Fields, out *Out) {
	if op.Done {
		return
	}
	switch op.Kind {
	case OpAcquire:
		op.answerAcquire(c, now, f, out)
	case OpRelease:
		op.answerRelease(c, f, out)
	case OpRenew:
		op.answerRenew(c, now, f, out)
	case opWithdraw:
		op.answerWithdraw(c, now, f, out)
	}
}

func (op *Op) answerAcquire(c *Core, now int64, m *wire.Fields, out *Out) {
	e := op.E
	switch m.Op {
	case wire.OpGrant:
		if m.Timestamp != 0 && m.Timestamp < uint64(op.ts) {
			return // a stale grant of an earlier request of this txn
		}
		// Hold the grant.
		e.Mode, e.Token = m.Mode, m.Token
		if m.LeaseMicros != 0 {
			e.lease = time.Duration(m.LeaseMicros) * time.Microsecond
			e.deadline = leaseEnd(op.ts, e.lease)
		}
		e.Server = e.peer
		e.held = true
		e.ops[kindAcquire] = nil
		c.ops.remove(op)
		c.stats.Grants++
		if e.lease != 0 && e.deadline-now < int64(e.lease/3) {
			// It waited in the queue: the server started the lease when it granted, the client
			// counts from its request, so it may well be valid still: ask.
			sub := &Op{Kind: OpRenew, E: e, kd: kindProbe, tm: heapTimer{idx: -1}, parent: op, internal: true}
			op.sub, op.renewing = sub, true
			c.startRenew(now, sub, out)
			return
		}
		c.schedule(e, c.nextKeep(e), false)
		op.Done, op.Err = true, nil
		out.Done = append(out.Done, op)
	case wire.OpReject:
		// A reject with a token is about a grant. The one this acquire takes is the notice that
		// its own grant's lease ran out before the client saw the grant (the grant was lost; the
		// switch's lease sweep force-released it and echoes the acquire's timestamp): the switch
		// ignores the acquire's retransmissions from then on, so the notice is its last answer.
		// Others (an earlier request of the txn) are ignored.
		if m.Token != 0 && (m.Status != wire.StatusLeaseExpired || m.Timestamp != uint64(op.ts)) {
			return
		}
		if m.Status == wire.StatusNotHolder {
			// Never an answer to an acquire: the refusal of a liveness probe from a server that
			// does not echo timestamps.
			return
		}
		op.finish(c, &RejectError{Op: wire.OpAcquire, Lock: e.Lock, Txn: e.Txn, Status: m.Status}, out)
	}
}

// renewalDone finishes an acquire whose grant came with little lease left, once its renewal
// ended with err: on success the grant is the caller's; else it is released and the acquire
// fails.
func (op *Op) renewalDone(c *Core, now int64, err error, out *Out) {
	op.sub, op.renewing = nil, false
	if op.Done {
		return
	}
	e := op.E
	if err == nil {
		c.schedule(e, c.nextKeep(e), false)
		op.Done, op.Err = true, nil
		out.Done = append(out.Done, op)
		return
	}
	op.Done = true
	op.Err = fmt.Errorf("client: lock %d: %w: renewal after a long wait failed: %w", e.Lock, ErrLeaseLost, err)
	out.Done = append(out.Done, op)
	c.Release(now, e, nil, out)
}

func (op *Op) answerRenew(c *Core, now int64, m *wire.Fields, out *Out) {
	e := op.E
	if m.Token != e.Token {
		return
	}
	switch m.Op {
	case wire.OpLeaseProbe:
		if m.Timestamp != 0 && m.Timestamp != uint64(op.ts) {
			return // the answer to an earlier renewal
		}
		if m.LeaseMicros != 0 {
			e.lease = time.Duration(m.LeaseMicros) * time.Microsecond
		}
		e.deadline = leaseEnd(op.ts, e.lease)
		c.stats.Renewals++
		if op.parent == nil {
			c.schedule(e, c.nextKeep(e), true)
		}
		op.finish(c, nil, out)
	case wire.OpReject:
		var err error = &RejectError{Op: wire.OpLeaseProbe, Lock: e.Lock, Txn: e.Txn, Status: m.Status}
		if op.parent == nil {
			err = fmt.Errorf("%w: renewal refused: %w", ErrLeaseLost, err)
			c.markLost(e, err, out)
		}
		op.finish(c, err, out)
	}
}

func (op *Op) answerRelease(c *Core, m *wire.Fields, out *Out) {
	e := op.E
	if m.Token != e.Token {
		return
	}
	if op.grace {
		if m.Op == wire.OpRelease {
			op.grace, op.result = false, nil
			op.finishRelease(c, out)
		}
		return
	}
	switch m.Op {
	case wire.OpRelease:
		op.result = nil
	case wire.OpReject:
		if m.Status == wire.StatusNotHolder && op.attempt > 1 {
			op.result = nil
			break
		}
		op.result = &RejectError{Op: wire.OpRelease, Lock: e.Lock, Txn: e.Txn, Status: m.Status}
		if errors.Is(op.result, ErrNotHolder) {
			// The network may have duplicated the release: the reply to the first copy can
			// follow the refusal of the second. Give it a retransmission interval to arrive.
			op.grace = true
			c.ops.set(op, c.now+int64(c.cfg.RetryInterval))
			return
		}
	default:
		return
	}
	op.finishRelease(c, out)
}

// finishRelease ends a release with its verdict; a lease lost before the release wins.
func (op *Op) finishRelease(c *Core, out *Out) {
	err := op.result
	if op.E.lostErr != nil {
		// Whatever the server answered, the lock was not protected until the release.
		err = op.E.lostErr
	}
	op.finish(c, err, out)
}

func (op *Op) answerWithdraw(c *Core, now int64, m *wire.Fields, out *Out) {
	switch m.Op {
	case wire.OpGrant:
		if op.token == 0 && (m.Timestamp == 0 || m.Timestamp >= op.acq.Timestamp) {
			// The grant raced with the withdrawal: release it.
			op.token = m.Token
			c.ops.remove(op)
			c.withdrawRound(now, op, out)
		}
	case wire.OpRelease, wire.OpReject:
		if m.Token == op.token {
			op.finish(c, nil, out)
		}
	}
}

// nextKeep is when the lease keeper must look at e next: the deadline, or with KeepAlive when a
// third of the lease has passed since the deadline's start.
func (c *Core) nextKeep(e *Entry) int64 {
	if e.deadline == 0 {
		return math.MaxInt64
	}
	if c.cfg.KeepAlive {
		return e.deadline - int64(2*e.lease/3)
	}
	return e.deadline
}

// renewed applies the answer f to the lease keeper's renewal.
func (c *Core) renewed(e *Entry, f *wire.Fields) {
	e.probing = false
	if f.LeaseMicros != 0 {
		e.lease = time.Duration(f.LeaseMicros) * time.Microsecond
	}
	e.deadline = leaseEnd(int64(f.Timestamp), e.lease)
	c.stats.Renewals++
	c.schedule(e, c.nextKeep(e), true)
}

// keepEvent looks at e at now: past its deadline the lease is lost; with KeepAlive it is time to
// send (or retransmit) a renewal.
func (c *Core) keepEvent(e *Entry, now int64, out *Out) {
	if e.lostErr != nil || e.released || !e.held || e.deadline == 0 {
		return
	}
	dl := e.deadline
	if now >= dl {
		c.markLost(e, fmt.Errorf("%w: the lease ended %v ago without renewal", ErrLeaseLost, time.Duration(now-dl)), out)
		return
	}
	if !c.cfg.KeepAlive {
		c.schedule(e, dl, false)
		return
	}
	retry := e.kprob
	e.kprob = true
	if e.krto == 0 {
		e.krto = c.cfg.RetryInterval
	} else {
		e.krto = min(2*e.krto, c.cfg.MaxRetryInterval)
	}
	next := min(now+int64(e.krto), dl)
	ts := int64(e.probeTS) // a retransmission repeats the renewal's timestamp: any copy's answer counts
	if !retry || ts == 0 {
		ts = c.timestamp(now)
	}
	req := wire.Fields{Op: wire.OpLeaseProbe, Mode: e.Mode, Priority: e.opts.Priority, Tenant: e.opts.Tenant,
		Lock: e.Lock, Txn: e.Txn, Token: e.Token, Timestamp: uint64(ts), LeaseMicros: LeaseMicros(e.opts.Lease)}
	if retry {
		req.Flags |= wire.FlagRetry
	}
	to, err := c.route(e.Lock)
	e.probing, e.probeTS = true, uint64(ts)
	if err == nil {
		e.peer = to
	}
	c.schedule(e, next, false)
	if err == nil {
		c.send(out, to, &req)
	}
}
