// Package clientcore is the protocol of a netlock client without I/O: its requests in flight
// (acquire, release, renewal, the withdrawal of an abandoned acquire) with their retransmissions,
// backoff and liveness probes, the matching of answers to requests, and the leases of its held
// grants (deadlines, renewals with KeepAlive). Package client is the goroutine shell around it
// (one socket, a reader, a timer, callers that wait); the rack model (testbed/rackmodel) drives
// the same Core in virtual time.
//
// A Core takes no clock and starts nothing: every method takes now (monotonic ns,
// internal/clock.Mono) and appends what to send, which operations finished and which leases
// were lost to an [Out]. The caller calls [Core.Tick] at [Core.NextDeadline]. A Core is not safe
// for concurrent use; the shell serializes calls with a mutex.
//
// The rules are those of docs/protocol.md: an acquire is retransmitted with the retry flag, with
// exponential backoff from RetryInterval to MaxRetryInterval and up to a quarter of jitter, to
// the server its lock routes to at that moment; answers are accepted from the address a request
// was sent to (or the server that granted a held lock, or a switch), others are counted as
// foreign; once half of MaxAttempts copies of a waiting acquire went unanswered, its
// retransmissions carry a liveness probe (a lease-probe with token 0, which the server refuses),
// and MaxAttempts copies without a word about the request fail it
// as unreachable; a grant's lease runs from the request's send instant on the client's clock,
// less the drift margin (wire.HolderLease); a grant nobody waits for is released at once.
package clientcore

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// AddrMatch is an address and, if non-zero, a port (a configured switch).
type AddrMatch struct {
	IP   netip.Addr
	Port uint16
}

// Config configures a Core.
type Config struct {
	// Route returns the server of a lock. It is asked for every copy of a request, so that a
	// changed answer (a failover) applies to requests in flight. Required.
	Route func(lock uint32) (netip.AddrPort, error)
	// Servers are the configured servers (answers about unknown requests are accepted only from
	// them, from addresses Route returned, and from switches: a stray grant is given back only to
	// a server this client uses).
	Servers []netip.AddrPort
	// Switches may answer requests for switch-resident locks.
	Switches []AddrMatch
	// RetryInterval is the first retransmission interval, MaxRetryInterval the cap of the
	// backoff, RequestTimeout the bound of a release, a renewal and a withdrawal. Required (> 0).
	RetryInterval, MaxRetryInterval, RequestTimeout time.Duration
	// MaxAttempts bounds the copies sent in a row to a server that says nothing about the
	// request; negative: no bound. 0 is taken as no bound too (the shell sets its default).
	MaxAttempts int
	// KeepAlive renews each held lease with a lease-probe when a third of it has elapsed.
	KeepAlive bool
	// Jitter returns a uniform random number in [0, n]; nil: no jitter.
	Jitter func(n int64) int64
	// TxnKey keys the transaction-id permutation (NewTxnID); ClientID, if set, puts the client's
	// id in the high 32 bits of its transaction ids instead.
	TxnKey   [2]uint64
	ClientID uint32
}

// ReqOptions are the per-request settings of an acquire.
type ReqOptions struct {
	Tenant     uint16
	Priority   uint8
	Lease      time.Duration // 0: the server's default
	Contention uint16        // the contention c_i declared (slots field)
}

// LeaseMicros clamps d to the protocol's 32-bit µs field.
func LeaseMicros(d time.Duration) uint32 {
	us := d / time.Microsecond
	switch {
	case us <= 0:
		return 0
	case us > 1<<32-1:
		return 1<<32 - 1
	}
	return uint32(us)
}

// Send is a datagram to send.
type Send struct {
	To  netip.AddrPort
	Msg wire.Fields
}

// Out collects what a call asks of the caller: datagrams to send (in order), operations that
// finished (Op.Err says how), and held grants whose lease was lost (Entry.LostErr says why).
type Out struct {
	Sends []Send
	Done  []*Op
	Lost  []*Entry
}

// Reset empties o, keeping its memory.
func (o *Out) Reset() {
	clear(o.Done)
	clear(o.Lost)
	o.Sends, o.Done, o.Lost = o.Sends[:0], o.Done[:0], o.Lost[:0]
}

func (o *Out) send(to netip.AddrPort, m *wire.Fields) {
	o.Sends = append(o.Sends, Send{To: to, Msg: *m})
}

// Stats counts a client's traffic (see package client's Stats).
type Stats struct {
	Sent, Retransmits, Received, Malformed, Unknown, StrayGrants, DupGrants, Overflow int64
	Grants, Rejects, LeaseLost, Renewals, Foreign                                     int64
}

// key identifies the requests of one transaction on one lock.
type key struct {
	lock uint32
	txn  uint64
}

// kind is the kind of answer an operation expects.
type kind uint8

const (
	kindAcquire kind = iota // grant or reject
	kindRelease             // release+reply or reject
	kindProbe               // lease-probe+reply or reject
	numKinds
)

// Entry is the client's record of one (lock, txn): its requests in flight and, once granted,
// the held grant and its lease. Its exported fields are read-only for the caller.
type Entry struct {
	Lock uint32
	Txn  uint64
	// Mode and Token are set by the grant; Server is the address that granted it.
	Mode   wire.Mode
	Token  uint64
	Server netip.AddrPort
	// User is the caller's attachment (package client: its *Grant).
	User any

	opts     ReqOptions
	ops      [numKinds]*Op
	ts       [numKinds]uint64 // each op's request timestamp (0: match any reject)
	peer     netip.AddrPort   // where the requests were last sent: answers come from it
	held     bool
	released bool
	heard    uint32 // datagrams accepted about this (lock, txn)
	// The timestamps of the first and last liveness probe of a waiting acquire.
	aliveFirst, aliveLast uint64
	lease                 time.Duration
	deadline              int64 // the lease's end (client monotonic ns); 0: no lease
	lostErr               error
	// Lease keeper state: its place in the keeper heap, when to look next, its renewal in flight.
	kt      heapTimer // in Core.keep
	krto    time.Duration
	kprob   bool
	probing bool
	probeTS uint64
}

// Held reports whether the grant is held (granted and not released).
func (e *Entry) Held() bool { return e.held }

// Deadline returns the lease's end (monotonic ns; 0: the grant carried no lease).
func (e *Entry) Deadline() int64 { return e.deadline }

// Lease returns the lease the server granted (0: none).
func (e *Entry) Lease() time.Duration { return e.lease }

// LostErr returns why the lease was lost, or nil.
func (e *Entry) LostErr() error { return e.lostErr }

// Core is a client's protocol state. Make one with New.
type Core struct {
	cfg     Config
	entries map[key]*Entry
	routes  map[netip.AddrPort]struct{} // every address Route returned
	ops     timerHeap[*Op]              // operations by their next timer
	keep    timerHeap[*Entry]           // held leases by the keeper's next look
	lastTS  int64
	now     int64 // the latest now passed in
	txnSeq  uint64
	stats   Stats
	closed  bool
}

// New returns a Core.
func New(cfg Config) (*Core, error) {
	switch {
	case cfg.Route == nil:
		return nil, errors.New("clientcore: no Route")
	case cfg.RetryInterval <= 0 || cfg.MaxRetryInterval < cfg.RetryInterval || cfg.RequestTimeout <= 0:
		return nil, fmt.Errorf("clientcore: intervals %v, %v, %v: want 0 < retry <= max retry, request timeout > 0",
			cfg.RetryInterval, cfg.MaxRetryInterval, cfg.RequestTimeout)
	}
	return &Core{cfg: cfg, entries: map[key]*Entry{}, routes: map[netip.AddrPort]struct{}{}}, nil
}

// Stats returns the counters.
func (c *Core) Stats() Stats { return c.stats }

// Entries returns the number of (lock, txn) records the core keeps (held or in flight).
func (c *Core) Entries() int { return len(c.entries) }

// NewTxnID returns a fresh transaction id, never 0: with Config.ClientID, ClientID in the high 32
// bits and a counter in the low 32 bits; otherwise the counter's next value mapped through a
// permutation keyed by Config.TxnKey: id(n) = mix(mix(n^k0)^k1), mix being SplitMix64's bijective
// finalizer, so one client never repeats an id before 2^64 of them and, with a random key, each
// id is uniform over the 2^64 values whatever other clients drew (docs/protocol.md, "Transaction
// ids").
func (c *Core) NewTxnID() uint64 {
	for {
		c.txnSeq++
		var id uint64
		if c.cfg.ClientID != 0 {
			id = uint64(c.cfg.ClientID)<<32 | c.txnSeq&0xffffffff
		} else {
			id = mix64(mix64(c.txnSeq^c.cfg.TxnKey[0]) ^ c.cfg.TxnKey[1])
		}
		if id != 0 {
			return id
		}
	}
}

// mix64 is SplitMix64's finalizer, a bijection of uint64.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// timestamp returns now, strictly increasing across calls, so that every request carries a
// distinct timestamp and an answer can be matched to the attempt it answers.
func (c *Core) timestamp(now int64) int64 {
	if now <= c.lastTS {
		now = c.lastTS + 1
	}
	c.lastTS = now
	return now
}

// leaseEnd is the end of a lease granted for a request sent at ts (client monotonic ns).
func leaseEnd(ts int64, lease time.Duration) int64 { return ts + int64(wire.HolderLease(lease)) }

func (c *Core) route(lock uint32) (netip.AddrPort, error) {
	a, err := c.cfg.Route(lock)
	if err == nil {
		c.routes[a] = struct{}{}
	}
	return a, err
}

func (c *Core) isSwitch(from netip.AddrPort) bool {
	for _, m := range c.cfg.Switches {
		if m.IP == from.Addr() && (m.Port == 0 || m.Port == from.Port()) {
			return true
		}
	}
	return false
}

// isServer reports whether from is a server the client sends to (a configured server or an
// answer of Route), or a switch.
func (c *Core) isServer(from netip.AddrPort) bool {
	for _, a := range c.cfg.Servers {
		if a == from {
			return true
		}
	}
	if _, ok := c.routes[from]; ok {
		return true
	}
	return c.isSwitch(from)
}

func (c *Core) send(out *Out, to netip.AddrPort, m *wire.Fields) {
	c.stats.Sent++
	if m.Flags&wire.FlagRetry != 0 {
		c.stats.Retransmits++
	}
	out.send(to, m)
}

// register makes op the operation of kind kd of e, whose request timestamp is ts (0: match any
// reject). The first registration puts e into the entries.
func (c *Core) register(e *Entry, kd kind, ts uint64, op *Op) error {
	if c.closed {
		return ErrClosed
	}
	k := key{e.Lock, e.Txn}
	switch x := c.entries[k]; {
	case x == nil:
		c.entries[k] = e
	case x != e:
		return fmt.Errorf("client: lock %d txn %#x: request already in flight", e.Lock, e.Txn)
	case e.ops[kd] != nil:
		return fmt.Errorf("client: lock %d txn %#x: %v already in flight", e.Lock, e.Txn, kd)
	}
	e.ops[kd] = op
	e.ts[kd] = ts
	return nil
}

// unregister removes the operation of kind kd (if it is op) and drops e once it is idle.
func (c *Core) unregister(e *Entry, kd kind, op *Op) {
	if e.ops[kd] == op {
		e.ops[kd] = nil
	}
	c.dropIfIdle(e)
}

// dropIfIdle forgets e once it is neither held nor waited for.
func (c *Core) dropIfIdle(e *Entry) {
	if e.held {
		return
	}
	for _, op := range e.ops {
		if op != nil {
			return
		}
	}
	if c.entries[key{e.Lock, e.Txn}] == e {
		delete(c.entries, key{e.Lock, e.Txn})
	}
}

func (k kind) String() string {
	switch k {
	case kindAcquire:
		return "acquire"
	case kindRelease:
		return "release"
	}
	return "renewal"
}

// markLost records that e's lease is lost (once) and reports it in out.
func (c *Core) markLost(e *Entry, cause error, out *Out) {
	if e.lostErr != nil {
		return
	}
	e.lostErr = cause
	e.probing = false
	c.keep.remove(e)
	c.stats.LeaseLost++
	out.Lost = append(out.Lost, e)
}

// NextDeadline returns when Tick has work to do (math.MaxInt64: nothing scheduled).
func (c *Core) NextDeadline() int64 {
	d := int64(math.MaxInt64)
	if c.ops.len() > 0 {
		d = c.ops.min().tm.due
	}
	if c.keep.len() > 0 {
		d = min(d, c.keep.min().kt.due)
	}
	return d
}

// Tick runs what is due at now: retransmissions, timeouts, the lease keeper.
func (c *Core) Tick(now int64, out *Out) {
	c.now = now
	for c.ops.len() > 0 && c.ops.min().tm.due <= now {
		op := c.ops.min()
		c.ops.remove(op)
		op.timer(c, now, out)
	}
	for c.keep.len() > 0 && c.keep.min().kt.due <= now {
		e := c.keep.min()
		c.keep.remove(e)
		c.keepEvent(e, now, out)
	}
}

// Close fails every operation in flight with ErrClosed and stops the lease keeper. Held grants
// are not released (their leases run out on the servers).
func (c *Core) Close(out *Out) {
	c.closed = true
	for _, e := range c.entries {
		for _, op := range e.ops {
			if op != nil && !op.Done {
				op.finish(c, ErrClosed, out)
			}
		}
	}
	for c.keep.len() > 0 {
		c.keep.remove(c.keep.min())
	}
	for c.ops.len() > 0 {
		c.ops.remove(c.ops.min())
	}
}

// Receive handles one datagram from from: one answer, or a batch of answers (wire.FlagBatch),
// each handled as if it had come alone, in order. A malformed batch is dropped whole (counted
// once in Malformed); each answer of a good one counts in Received.
func (c *Core) Receive(now int64, b []byte, from netip.AddrPort, out *Out) {
	c.now = now
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	if !wire.IsBatch(b) {
		h, err := wire.Parse(b)
		if err != nil {
			c.stats.Malformed++
			return
		}
		c.receive(now, h, from, out)
		return
	}
	k, err := wire.ParseBatch(b)
	if err != nil {
		c.stats.Malformed++
		return
	}
	for i := 0; i < k; i++ {
		c.receive(now, wire.BatchHeader(b, i), from, out)
	}
}

// receive handles one valid answer h.
func (c *Core) receive(now int64, h wire.Header, from netip.AddrPort, out *Out) {
	c.stats.Received++
	var f wire.Fields
	h.Decode(&f)
	f.Flags &^= wire.FlagBatch // framing, not part of the answer
	c.dispatch(now, &f, from, out)
}

// dispatch hands f to the operation waiting for it. Answers are accepted only from the address
// the request was sent to (a held grant: also the server that granted it) or from a configured
// switch; the rest are counted as foreign and dropped.
func (c *Core) dispatch(now int64, f *wire.Fields, from netip.AddrPort, out *Out) {
	e := c.entries[key{f.Lock, f.Txn}]
	switch {
	case e == nil:
		if !c.isServer(from) {
			// In particular a stray grant is given back only to a server this client uses: the
			// client must not be made to send releases anywhere.
			c.stats.Foreign++
			return
		}
	case from != e.peer && !(e.held && from == e.Server) && !c.isSwitch(from):
		c.stats.Foreign++
		return
	}
	if e != nil {
		e.heard++
		if f.Op == wire.OpReject && f.Token == 0 && e.aliveFirst != 0 && f.Timestamp >= e.aliveFirst &&
			f.Timestamp <= e.aliveLast {
			// The refusal of a liveness probe, possibly a late one: the server is there; nobody
			// waits for it.
			return
		}
	}
	var target *Op
	stray := false
	switch {
	case f.Op == wire.OpGrant:
		switch {
		case e != nil && e.ops[kindAcquire] != nil:
			target = e.ops[kindAcquire]
		case e != nil && e.held && e.Token == f.Token:
			c.stats.DupGrants++
		default:
			// Nobody waits for this grant (the acquire was abandoned, or the grant is a late
			// duplicate of one released already): give it back.
			c.stats.StrayGrants++
			stray = true
		}
	case f.Op == wire.OpRelease && f.Flags&wire.FlagReply != 0 && e != nil:
		target = e.ops[kindRelease]
	case f.Op == wire.OpLeaseProbe && f.Flags&wire.FlagReply != 0 && e != nil:
		target = e.ops[kindProbe]
		if target == nil && e.held && e.probing && f.Token == e.Token && f.Timestamp == e.probeTS {
			c.renewed(e, f) // the lease keeper's renewal
		}
	case f.Op == wire.OpReject && e != nil:
		c.stats.Rejects++
		if (f.Status == wire.StatusLeaseExpired || f.Status == wire.StatusShutdown) && e.held && e.Token == f.Token {
			// The lease ended, or the server shuts down and will not renew it.
			var cause error = &RejectError{Op: wire.OpGrant, Lock: f.Lock, Txn: f.Txn, Status: f.Status}
			if f.Status == wire.StatusShutdown {
				cause = fmt.Errorf("%w: %w", ErrLeaseLost, cause)
			}
			c.markLost(e, cause, out)
			// Tell a pending release or renewal too.
			for _, k := range [...]kind{kindRelease, kindProbe} {
				if op := e.ops[k]; op != nil {
					op.answer(c, now, f, out)
				}
			}
			return
		}
		if e.held && e.probing && e.ops[kindProbe] == nil && f.Token == e.Token && f.Timestamp == e.probeTS {
			// The lease keeper's renewal was refused: the lease is lost.
			c.markLost(e, fmt.Errorf("%w: renewal refused: %w", ErrLeaseLost,
				&RejectError{Op: wire.OpLeaseProbe, Lock: f.Lock, Txn: f.Txn, Status: f.Status}), out)
			return
		}
		// A reject names no op; its echoed timestamp says which request it answers. Without one
		// (a server that does not echo), release (the last request of a txn) goes first, then
		// acquire, then renewal.
		for _, k := range [...]kind{kindRelease, kindAcquire, kindProbe} {
			if op := e.ops[k]; op != nil && (f.Timestamp == 0 || e.ts[k] == 0 || e.ts[k] == f.Timestamp) {
				target = op
				break
			}
		}
	}
	if target != nil {
		target.answer(c, now, f, out)
		return
	}
	if !stray && f.Op != wire.OpGrant && !(f.Op == wire.OpReject && e != nil && e.held) &&
		!(f.Op == wire.OpLeaseProbe && e != nil && e.held) {
		c.stats.Unknown++
	}
	if stray {
		rel := wire.Fields{Op: wire.OpRelease, Mode: f.Mode, Lock: f.Lock, Txn: f.Txn, Token: f.Token,
			Tenant: f.Tenant, Priority: f.Priority, Timestamp: uint64(c.timestamp(now))}
		c.send(out, from, &rel)
	}
}
