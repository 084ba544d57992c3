package lockcore

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// MaxPriorities bounds Config.Priorities (NetLock keeps one queue per pipeline stage; 16 is generous).
const MaxPriorities = 16

// Quota bounds what one tenant may ask of a Core. Zero fields mean unlimited.
type Quota struct {
	// MaxOutstanding bounds the tenant's requests that hold or wait for a lock.
	MaxOutstanding int
	// MaxRate bounds the tenant's acquires per second (a window reset every second, as NetLock's
	// control plane resets its per-tenant counters every second).
	MaxRate int
}

// Config configures a Core.
type Config struct {
	// DefaultLease is the lease of a grant whose request asked for none. Default 10s.
	DefaultLease time.Duration
	// MaxLease caps the lease a request may ask for. Default 60s; must be >= DefaultLease.
	MaxLease time.Duration
	// Priorities is the number of priority levels (0 is the highest). Requests with a priority at
	// or above it are rejected as bad requests. Default 8; at most MaxPriorities.
	Priorities int
	// MaxWaiters bounds the waiters of one lock; beyond it acquires are rejected as queue-full.
	// 0 means unbounded.
	MaxWaiters int
	// MaxBuffered bounds the q2 overflow buffer of one lock; beyond it overflow requests are
	// rejected queue-full (to their original client). Default 4096.
	MaxBuffered int
	// IdleRetention is how long the state of a lock without requests is kept (with the memory of
	// its last ended request, which filters late retransmissions) before it is freed. Default 1s.
	// The Core asks for an Expire when the oldest idle state is due (NextDeadline), so idle states
	// are freed on their own timer, whether or not any lease runs.
	IdleRetention time.Duration
	// DefaultQuota applies to tenants without an entry in Quotas.
	DefaultQuota Quota
	// Quotas holds per-tenant quotas.
	Quotas map[uint16]Quota
	// TokenBase is the fencing-token counter's start; the first grant gets TokenBase+1. The lock
	// server sets it to its token epoch shifted into the high bits (lockserver: tokens are
	// epoch-major, the epoch persisted and bumped on every start), so that tokens grow across
	// restarts and failovers without depending on any clock.
	TokenBase uint64
	// GrantAfter (ns, the caller's clock) holds all grants until that time: a server that takes
	// over a failed server's locks waits out the leases the failed server may have granted.
	GrantAfter int64
}

// WithDefaults returns c with every zero field that has a default set to it, or the error that
// New would return for c.
func (c Config) WithDefaults() (Config, error) {
	err := c.validate()
	return c, err
}

func (c *Config) validate() error {
	if c.DefaultLease == 0 {
		c.DefaultLease = 10 * time.Second
	}
	if c.MaxLease == 0 {
		c.MaxLease = 60 * time.Second
		if c.DefaultLease > c.MaxLease {
			c.MaxLease = c.DefaultLease
		}
	}
	if c.Priorities == 0 {
		c.Priorities = 8
	}
	if c.MaxBuffered == 0 {
		c.MaxBuffered = 4096
	}
	if c.IdleRetention == 0 {
		c.IdleRetention = time.Second
	}
	switch {
	case c.DefaultLease < time.Microsecond:
		return fmt.Errorf("default lease %v: must be at least 1µs", c.DefaultLease)
	case c.MaxLease < c.DefaultLease:
		return fmt.Errorf("max lease %v below default lease %v", c.MaxLease, c.DefaultLease)
	case c.MaxLease/time.Microsecond > math.MaxUint32:
		return fmt.Errorf("max lease %v: does not fit the 32-bit µs lease field", c.MaxLease)
	case c.Priorities < 0 || c.Priorities > MaxPriorities:
		return fmt.Errorf("priorities %d: must be in 1..%d", c.Priorities, MaxPriorities)
	case c.MaxWaiters < 0:
		return errors.New("max waiters must not be negative")
	case c.MaxBuffered < 0:
		return errors.New("max buffered must not be negative")
	case c.IdleRetention < 0:
		return errors.New("idle retention must not be negative")
	}
	for t, q := range c.Quotas {
		if q.MaxOutstanding < 0 || q.MaxRate < 0 {
			return fmt.Errorf("quota of tenant %d: negative bound", t)
		}
	}
	if c.DefaultQuota.MaxOutstanding < 0 || c.DefaultQuota.MaxRate < 0 {
		return errors.New("default quota: negative bound")
	}
	return nil
}

// Request is one decoded packet handed to a Core.
type Request struct {
	wire.Fields
	// From is the address the packet came from. Answers go there, or to Fields.Client when the
	// packet was forwarded (FlagForwarded); push-backs always go to From (the switch).
	From netip.AddrPort
}

// Effect is a packet the caller must send.
type Effect struct {
	To  netip.AddrPort
	Msg wire.Fields
}

// Stats are a Core's counters (monotonic) and gauges (current values).
type Stats struct {
	Requests   [16]uint64 // by op
	Rejects    [16]uint64 // by status
	Grants     uint64
	Queued     uint64
	Released   uint64
	Withdrawn  uint64
	Expired    uint64
	Renewed    uint64
	Overflowed uint64
	PushedBack uint64
	Duplicates uint64
	Unexpected uint64
	// ResidentDropped counts new acquires dropped because their lock is switch-resident
	// (wire.AdminYield): the client retransmits them, through the switch.
	ResidentDropped uint64
	// Adopted counts the buffered requests moved into a lock's queue by wire.AdminAdopt.
	Adopted uint64
	// Gauges.
	Locks    int
	Holders  int
	Waiters  int
	Buffered int
	// Idle counts the states of locks without requests that are kept for IdleRetention.
	Idle int
}

// Add adds o's counters and gauges to s (the lock server sums its shards).
func (s *Stats) Add(o *Stats) {
	for i := range s.Requests {
		s.Requests[i] += o.Requests[i]
		s.Rejects[i] += o.Rejects[i]
	}
	s.Grants += o.Grants
	s.Queued += o.Queued
	s.Released += o.Released
	s.Withdrawn += o.Withdrawn
	s.Expired += o.Expired
	s.Renewed += o.Renewed
	s.Overflowed += o.Overflowed
	s.PushedBack += o.PushedBack
	s.Duplicates += o.Duplicates
	s.Unexpected += o.Unexpected
	s.ResidentDropped += o.ResidentDropped
	s.Adopted += o.Adopted
	s.Locks += o.Locks
	s.Holders += o.Holders
	s.Waiters += o.Waiters
	s.Buffered += o.Buffered
	s.Idle += o.Idle
}

// entry is one request in a lock's holders, waiters or overflow buffer.
type entry struct {
	txn      uint64
	token    uint64
	deadline int64 // ns; holders only
	ts       uint64
	to       netip.AddrPort
	lease    uint32 // µs
	tenant   uint16
	prio     uint8
	mode     wire.Mode
	fwd      bool
}

// lockState is the state of one lock. Invariants: holders are all shared or a single exclusive
// (holdMode); waiters[whead:] are the live waiters in (prio, arrival) order and the first of them
// is not grantable; overflow[ohead:] is the q2 buffer in (prio, arrival) order; the lock is in the
// Core's deadline heap (hidx >= 0) exactly when len(holders) > 0, with due the earliest deadline
// of its holders.
type lockState struct {
	id       uint32
	holdMode wire.Mode
	holders  []entry
	waiters  []entry
	whead    int
	overflow []entry
	ohead    int
	// The last request of this lock that ended: its txn, token (0 for a withdrawal) and whether it
	// ended by lease expiry. Late retransmissions of its acquire or release are answered from it.
	lastReleased uint64
	lastToken    uint64
	lastExpired  bool
	due          int64 // earliest holder deadline (ns), while in the heap
	hidx         int32 // index in the deadline heap, -1 when not in it
	// Idle locks stay on the idle list for Config.IdleRetention after they became idle, so that a
	// lock used again soon keeps its table slot (and lastReleased keeps filtering late retries).
	inIdle       bool
	idleSince    int64
	iprev, inext *lockState
	// What AdminStats reports (TopLocks takes and resets them): requests processed, overflows
	// buffered, the largest depth (holders + waiters + buffered) and the largest contention a
	// client declared.
	nreq, novf      uint32
	depth, declared uint16
}

func (l *lockState) idle() bool {
	return len(l.holders) == 0 && l.whead == len(l.waiters) && l.ohead == len(l.overflow)
}

func (l *lockState) compatible(m wire.Mode) bool {
	return len(l.holders) == 0 || (m == wire.Shared && l.holdMode == wire.Shared)
}

type tenantState struct {
	q           Quota
	outstanding int
	window      int64
	count       int
}

// Core is the lock state machine. See the package documentation for its rules.
type Core struct {
	cfg       Config
	locks     table
	free      []*lockState // recycled states, at most maxFree
	dl        dlHeap       // locks with holders, by earliest deadline
	token     uint64
	quotas    bool
	tenants   map[uint16]*tenantState
	paused    bool
	stats     Stats
	priorityN uint8
	now       int64      // the latest time the caller passed in
	idleHead  *lockState // idle list, oldest first
	idleTail  *lockState
	// modes holds the locks the control plane placed: true for switch-resident (AdminYield),
	// false for adopted back (AdminAdopt). A lock without an entry keeps the plain rules
	// (overflows buffered, acquires served).
	modes  map[uint32]bool
	mutant mutation // tests only: a deliberate bug the model must catch
}

// mutation names a deliberate bug for the negative control of the model test (0: none).
type mutation uint8

const (
	mutantQ2Uncharged        mutation = iota + 1 // q2 requests not charged to the tenant's quota
	mutantResetKeepsHolders                      // an admin reset leaves the holders in place
	mutantDrainKeepsBuffered                     // Drain leaves q2 alone
)

// maxFree bounds the recycled lock states kept for reuse: memory returns to the Go heap after a
// burst of many distinct locks. maxSliceKeep is the largest holders/waiters/overflow capacity a
// recycled state keeps.
const (
	maxFree      = 1024
	maxSliceKeep = 16
)

// New returns an empty Core.
func New(cfg Config) (*Core, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("lockcore: %w", err)
	}
	c := &Core{
		cfg:       cfg,
		locks:     newTable(),
		token:     cfg.TokenBase,
		tenants:   make(map[uint16]*tenantState),
		paused:    cfg.GrantAfter > 0,
		priorityN: uint8(cfg.Priorities),
	}
	c.quotas = len(cfg.Quotas) > 0 || cfg.DefaultQuota != (Quota{})
	return c, nil
}

// Stats returns the counters and gauges.
func (c *Core) Stats() Stats { return c.stats }

// Step applies one request at time now (ns) and appends the packets to send to out.
func (c *Core) Step(now int64, r *Request, out []Effect) []Effect {
	if int(r.Op) < len(c.stats.Requests) {
		c.stats.Requests[r.Op]++
	}
	c.now = now
	if c.paused && now >= c.cfg.GrantAfter {
		out = c.unpause(now, out)
	}
	if r.Op != wire.OpAdmin && wire.IsReservedLock(r.Lock) {
		return c.reserved(r, out)
	}
	switch r.Op {
	case wire.OpAcquire:
		if c.modes != nil && c.modes[r.Lock] && !c.known(r) {
			c.stats.ResidentDropped++
			return out
		}
		return c.acquire(now, r, out)
	case wire.OpRelease:
		return c.release(now, r, out)
	case wire.OpLeaseProbe:
		return c.probe(now, r, out)
	case wire.OpOverflow:
		if resident, ok := c.modes[r.Lock]; c.modes != nil && ok && !resident {
			// Adopted back: an overflow the switch sent before the lock left it is an acquire
			// now, behind everything adopted from q2.
			return c.acquire(now, r, out)
		}
		return c.buffer(now, r, out)
	case wire.OpQueueEmpty:
		if resident, ok := c.modes[r.Lock]; ok && !resident {
			return out // a late queue-empty of a lock that left the switch: nothing to push
		}
		return c.pushBack(r, out)
	case wire.OpAdmin:
		return c.admin(now, r, out)
	}
	c.stats.Unexpected++
	return out
}

func replyTo(r *Request) (netip.AddrPort, bool) {
	if r.Flags&wire.FlagForwarded != 0 && r.Client.IsValid() {
		return r.Client, true
	}
	return r.From, false
}

func (c *Core) reject(r *Request, s wire.Status, out []Effect) []Effect {
	c.stats.Rejects[s]++
	to, fwd := replyTo(r)
	m := wire.Fields{Op: wire.OpReject, Mode: r.Mode, Status: s, Priority: r.Priority, Tenant: r.Tenant,
		Lock: r.Lock, Txn: r.Txn, Token: r.Token, Timestamp: r.Timestamp}
	if fwd {
		m.Flags, m.Client = wire.FlagForwarded, to
	}
	return append(out, Effect{To: to, Msg: m})
}

func (c *Core) rejectEntry(lock uint32, e *entry, s wire.Status, out []Effect) []Effect {
	c.stats.Rejects[s]++
	m := wire.Fields{Op: wire.OpReject, Mode: e.mode, Status: s, Priority: e.prio, Tenant: e.tenant,
		Lock: lock, Txn: e.txn, Token: e.token, Timestamp: e.ts}
	if e.fwd {
		m.Flags, m.Client = wire.FlagForwarded, e.to
	}
	return append(out, Effect{To: e.to, Msg: m})
}

func (c *Core) getLock(id uint32) *lockState {
	if l := c.locks.get(id); l != nil {
		if l.inIdle {
			c.unlinkIdle(l)
			c.stats.Locks++
		}
		return l
	}
	var l *lockState
	if n := len(c.free); n > 0 {
		l, c.free = c.free[n-1], c.free[:n-1]
	} else {
		l = &lockState{hidx: -1}
	}
	l.id = id
	c.locks.put(id, l)
	c.stats.Locks++
	return l
}

// maybeFree puts an idle lock on the idle list; Expire frees it IdleRetention later.
func (c *Core) maybeFree(l *lockState) {
	if l.inIdle || !l.idle() {
		return
	}
	c.stats.Locks--
	c.stats.Idle++
	l.holders, l.waiters, l.overflow = l.holders[:0], l.waiters[:0], l.overflow[:0]
	l.whead, l.ohead = 0, 0
	l.inIdle, l.idleSince = true, c.now
	l.iprev, l.inext = c.idleTail, nil
	if c.idleTail != nil {
		c.idleTail.inext = l
	} else {
		c.idleHead = l
	}
	c.idleTail = l
}

func (c *Core) unlinkIdle(l *lockState) {
	if l.iprev != nil {
		l.iprev.inext = l.inext
	} else {
		c.idleHead = l.inext
	}
	if l.inext != nil {
		l.inext.iprev = l.iprev
	} else {
		c.idleTail = l.iprev
	}
	l.iprev, l.inext, l.inIdle = nil, nil, false
	c.stats.Idle--
}

// freeIdle frees the states of the locks that have been idle for IdleRetention at now: they
// leave the table, and up to maxFree of them are kept for reuse.
func (c *Core) freeIdle(now int64) {
	ret := int64(c.cfg.IdleRetention)
	for l := c.idleHead; l != nil && now-l.idleSince >= ret; l = c.idleHead {
		c.unlinkIdle(l)
		c.locks.del(l.id)
		if len(c.free) >= maxFree {
			continue // dropped: the garbage collector takes it
		}
		l.lastReleased, l.lastToken, l.lastExpired = 0, 0, false
		l.nreq, l.novf, l.depth, l.declared = 0, 0, 0, 0
		if cap(l.holders) > maxSliceKeep {
			l.holders = nil
		}
		if cap(l.waiters) > maxSliceKeep {
			l.waiters = nil
		}
		if cap(l.overflow) > maxSliceKeep {
			l.overflow = nil
		}
		c.free = append(c.free, l)
	}
}

func (c *Core) leaseMicros(req uint32) uint32 {
	d := c.cfg.DefaultLease
	if req != 0 {
		d = time.Duration(req) * time.Microsecond
		if d > c.cfg.MaxLease {
			d = c.cfg.MaxLease
		}
	}
	return uint32(d / time.Microsecond)
}

func findTxn(es []entry, txn uint64) int {
	for i := range es {
		if es[i].txn == txn {
			return i
		}
	}
	return -1
}

func (c *Core) tenant(id uint16) *tenantState {
	t := c.tenants[id]
	if t == nil {
		q, ok := c.cfg.Quotas[id]
		if !ok {
			q = c.cfg.DefaultQuota
		}
		t = &tenantState{q: q}
		c.tenants[id] = t
	}
	return t
}

// admitTenant checks and charges the tenant's quota for a new request.
func (c *Core) admitTenant(now int64, id uint16) bool {
	t := c.tenant(id)
	if t.q.MaxOutstanding > 0 && t.outstanding >= t.q.MaxOutstanding {
		return false
	}
	if t.q.MaxRate > 0 {
		if now-t.window >= int64(time.Second) || now < t.window {
			t.window, t.count = now, 0
		}
		if t.count >= t.q.MaxRate {
			return false
		}
		t.count++
	}
	t.outstanding++
	return true
}

func (c *Core) leaveTenant(id uint16) {
	if c.quotas {
		c.tenants[id].outstanding--
	}
}

func (c *Core) acquire(now int64, r *Request, out []Effect) []Effect {
	if r.Txn == 0 || r.Priority >= c.priorityN {
		return c.reject(r, wire.StatusBadRequest, out)
	}
	l := c.getLock(r.Lock)
	l.count(r, false)
	if i := findTxn(l.holders, r.Txn); i >= 0 {
		c.stats.Duplicates++
		return appendGrant(out, l.id, &l.holders[i])
	}
	if findTxn(l.waiters[l.whead:], r.Txn) >= 0 {
		c.stats.Duplicates++
		return out
	}
	if r.Flags&wire.FlagRetry != 0 && l.lastReleased == r.Txn {
		// A late retransmission of a request that ended already: ignored if it was released or
		// withdrawn, answered lease-expired if its lease ran out (its client may still wait).
		c.stats.Duplicates++
		c.maybeFree(l)
		if l.lastExpired {
			return c.reject(r, wire.StatusLeaseExpired, out)
		}
		return out
	}
	if c.quotas && !c.admitTenant(now, r.Tenant) {
		c.maybeFree(l)
		return c.reject(r, wire.StatusQuota, out)
	}
	pos := l.insertPos(r.Priority)
	if pos == l.whead && !c.paused && l.compatible(r.Mode) {
		e := c.newEntry(r)
		return c.grant(now, l, &e, out)
	}
	if r.Flags&wire.FlagTry != 0 || (c.cfg.MaxWaiters > 0 && len(l.waiters)-l.whead >= c.cfg.MaxWaiters) {
		if c.quotas {
			c.leaveTenant(r.Tenant)
		}
		c.maybeFree(l)
		if r.Flags&wire.FlagTry != 0 {
			return c.reject(r, wire.StatusWouldBlock, out)
		}
		return c.reject(r, wire.StatusQueueFull, out)
	}
	l.insertWaiter(pos, c.newEntry(r))
	c.stats.Queued++
	c.stats.Waiters++
	return out
}

func (c *Core) newEntry(r *Request) entry {
	to, fwd := replyTo(r)
	return entry{txn: r.Txn, ts: r.Timestamp, to: to, lease: c.leaseMicros(r.LeaseMicros),
		tenant: r.Tenant, prio: r.Priority, mode: r.Mode, fwd: fwd}
}

// insertPos returns where a waiter of priority p goes: after every live waiter of priority <= p.
func (l *lockState) insertPos(p uint8) int {
	n := len(l.waiters)
	if n == l.whead || l.waiters[n-1].prio <= p {
		return n
	}
	lo, hi := l.whead, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if l.waiters[m].prio <= p {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

func (l *lockState) insertWaiter(pos int, e entry) {
	l.waiters = append(l.waiters, entry{})
	copy(l.waiters[pos+1:], l.waiters[pos:])
	l.waiters[pos] = e
}

// grant makes e a holder of l and appends its grant.
func (c *Core) grant(now int64, l *lockState, e *entry, out []Effect) []Effect {
	c.token++
	e.token = c.token
	e.deadline = now + int64(e.lease)*int64(time.Microsecond)
	l.holdMode = e.mode
	l.holders = append(l.holders, *e)
	switch {
	case l.hidx < 0:
		l.due = e.deadline
		c.dl.push(l)
	case e.deadline < l.due:
		l.due = e.deadline
		c.dl.fix(l)
	}
	c.stats.Grants++
	c.stats.Holders++
	return appendGrant(out, l.id, e)
}

// appendGrant appends the grant of e, built in place (effects are large; no temporaries).
func appendGrant(out []Effect, lock uint32, e *entry) []Effect {
	out = append(out, Effect{})
	x := &out[len(out)-1]
	x.To = e.to
	m := &x.Msg
	m.Op, m.Mode, m.Priority, m.Tenant, m.Lock = wire.OpGrant, e.mode, e.prio, e.tenant, lock
	m.Txn, m.Token, m.Timestamp, m.LeaseMicros = e.txn, e.token, e.ts, e.lease
	if e.fwd {
		m.Flags = wire.FlagForwarded
		m.Client = e.to
	}
	return out
}

// advance grants the head waiters of l while they are compatible with the holders.
func (c *Core) advance(now int64, l *lockState, out []Effect) []Effect {
	if c.paused {
		return out
	}
	for l.whead < len(l.waiters) && l.compatible(l.waiters[l.whead].mode) {
		e := l.waiters[l.whead]
		l.whead++
		c.stats.Waiters--
		out = c.grant(now, l, &e, out)
	}
	if l.whead == len(l.waiters) {
		l.waiters, l.whead = l.waiters[:0], 0
	} else if l.whead > 32 && l.whead > len(l.waiters)/2 {
		n := copy(l.waiters, l.waiters[l.whead:])
		l.waiters, l.whead = l.waiters[:n], 0
	}
	return out
}

func (c *Core) removeHolder(l *lockState, i int) {
	dl := l.holders[i].deadline
	l.holders[i] = l.holders[len(l.holders)-1]
	l.holders = l.holders[:len(l.holders)-1]
	c.stats.Holders--
	switch {
	case len(l.holders) == 0:
		c.dl.remove(l)
	case dl == l.due:
		c.refreshDue(l)
	}
}

// refreshDue recomputes the earliest deadline of l's holders (l has holders) and its heap place.
func (c *Core) refreshDue(l *lockState) {
	due := int64(math.MaxInt64)
	for i := range l.holders {
		due = min(due, l.holders[i].deadline)
	}
	if due != l.due {
		l.due = due
		c.dl.fix(l)
	}
}

func (c *Core) release(now int64, r *Request, out []Effect) []Effect {
	l := c.locks.get(r.Lock)
	if l == nil {
		return c.reject(r, wire.StatusNotHolder, out)
	}
	l.count(r, false)
	if i := findTxn(l.holders, r.Txn); i >= 0 {
		if l.holders[i].token != r.Token {
			return c.reject(r, wire.StatusNotHolder, out)
		}
		tenant := l.holders[i].tenant
		c.removeHolder(l, i)
		c.stats.Released++
		return c.ended(now, l, r, tenant, out)
	}
	j := findTxn(l.waiters[l.whead:], r.Txn)
	if j >= 0 && r.Token != 0 {
		// A waiter has no token yet: this names some earlier grant of the txn.
		c.maybeFree(l)
		return c.reject(r, wire.StatusNotHolder, out)
	}
	if j >= 0 {
		j += l.whead
		tenant := l.waiters[j].tenant
		copy(l.waiters[j:], l.waiters[j+1:])
		l.waiters = l.waiters[:len(l.waiters)-1]
		c.stats.Waiters--
		c.stats.Withdrawn++
		// A withdrawn exclusive waiter may have held back shared waiters behind it: ended
		// re-examines the queue.
		return c.ended(now, l, r, tenant, out)
	}
	if l.lastReleased == r.Txn && l.lastToken == r.Token {
		// A retransmission of the release (or withdrawal) that ended this txn's request.
		c.stats.Duplicates++
		c.maybeFree(l)
		if l.lastExpired {
			return c.reject(r, wire.StatusLeaseExpired, out)
		}
		return c.ack(r, out)
	}
	c.maybeFree(l)
	return c.reject(r, wire.StatusNotHolder, out)
}

// ended finishes a release or withdrawal that removed r's request from l: it remembers the
// request, frees the tenant's quota, acknowledges, and grants onward.
func (c *Core) ended(now int64, l *lockState, r *Request, tenant uint16, out []Effect) []Effect {
	l.lastReleased, l.lastToken, l.lastExpired = r.Txn, r.Token, false
	if c.quotas {
		c.leaveTenant(tenant)
	}
	out = c.ack(r, out)
	out = c.advance(now, l, out)
	c.maybeFree(l)
	return out
}

func (c *Core) ack(r *Request, out []Effect) []Effect {
	to, fwd := replyTo(r)
	out = append(out, Effect{})
	x := &out[len(out)-1]
	x.To = to
	m := &x.Msg
	m.Op, m.Mode, m.Flags, m.Priority, m.Tenant = r.Op, r.Mode, wire.FlagReply, r.Priority, r.Tenant
	m.Lock, m.Txn, m.Token, m.Timestamp = r.Lock, r.Txn, r.Token, r.Timestamp
	if fwd {
		m.Flags |= wire.FlagForwarded
		m.Client = to
	}
	return out
}

func (c *Core) probe(now int64, r *Request, out []Effect) []Effect {
	l := c.locks.get(r.Lock)
	if l == nil {
		return c.reject(r, wire.StatusNotHolder, out)
	}
	l.count(r, false)
	i := findTxn(l.holders, r.Txn)
	if i < 0 || l.holders[i].token != r.Token {
		return c.reject(r, wire.StatusNotHolder, out)
	}
	h := &l.holders[i]
	if r.LeaseMicros != 0 {
		h.lease = c.leaseMicros(r.LeaseMicros)
	}
	h.deadline = now + int64(h.lease)*int64(time.Microsecond)
	if r.Timestamp != 0 {
		h.ts = r.Timestamp
	}
	c.refreshDue(l)
	c.stats.Renewed++
	out = c.ack(r, out)
	out[len(out)-1].Msg.LeaseMicros = h.lease
	return out
}

// buffer keeps an overflowed acquire of a switch-resident lock in q2. A buffered request counts
// against its tenant's quota (outstanding and rate) until it is pushed back or dropped; a full
// buffer (Config.MaxBuffered) rejects it queue-full.
func (c *Core) buffer(now int64, r *Request, out []Effect) []Effect {
	if r.Txn == 0 || r.Priority >= c.priorityN {
		return notBuffered(r, c.reject(r, wire.StatusBadRequest, out))
	}
	l := c.getLock(r.Lock)
	l.count(r, true)
	if findTxn(l.overflow[l.ohead:], r.Txn) >= 0 {
		c.stats.Duplicates++
		return notBuffered(r, out)
	}
	if len(l.overflow)-l.ohead >= c.cfg.MaxBuffered {
		c.maybeFree(l)
		return notBuffered(r, c.reject(r, wire.StatusQueueFull, out))
	}
	charge := c.quotas && c.mutant != mutantQ2Uncharged
	if charge && !c.admitTenant(now, r.Tenant) {
		c.maybeFree(l)
		return notBuffered(r, c.reject(r, wire.StatusQuota, out))
	}
	e := c.newEntry(r)
	n := len(l.overflow)
	pos := n
	if n > l.ohead && l.overflow[n-1].prio > e.prio {
		for pos = l.ohead; pos < n && l.overflow[pos].prio <= e.prio; pos++ {
		}
	}
	l.overflow = append(l.overflow, entry{})
	copy(l.overflow[pos+1:], l.overflow[pos:])
	l.overflow[pos] = e
	c.stats.Overflowed++
	c.stats.Buffered++
	return out
}

// notBuffered tells the switch that the overflow r did not add to q2 (a duplicate, or refused):
// a push-back without a request (txn 0). The switch counts the overflows it sends as buffered
// until they come back; this keeps its count equal to q2's length.
func notBuffered(r *Request, out []Effect) []Effect {
	return append(out, Effect{To: r.From, Msg: wire.Fields{Op: wire.OpPushBack, Lock: r.Lock}})
}

// pushBack answers a queue-empty notification with at most r.Slots buffered requests.
func (c *Core) pushBack(r *Request, out []Effect) []Effect {
	l := c.locks.get(r.Lock)
	if l == nil {
		return out
	}
	for n := int(r.Slots); n > 0 && l.ohead < len(l.overflow); n-- {
		e := &l.overflow[l.ohead]
		l.ohead++
		c.stats.PushedBack++
		c.stats.Buffered--
		if c.quotas && c.mutant != mutantQ2Uncharged {
			c.leaveTenant(e.tenant)
		}
		out = append(out, Effect{To: r.From, Msg: wire.Fields{Op: wire.OpPushBack, Mode: e.mode,
			Flags: wire.FlagForwarded, Priority: e.prio, Tenant: e.tenant, Lock: l.id, Txn: e.txn,
			Timestamp: e.ts, LeaseMicros: e.lease, Client: e.to}})
	}
	if l.ohead == len(l.overflow) {
		l.overflow, l.ohead = l.overflow[:0], 0
	}
	c.maybeFree(l)
	return out
}

func (c *Core) admin(now int64, r *Request, out []Effect) []Effect {
	switch r.Status {
	case wire.AdminPing:
	case wire.AdminSweep:
		out = c.Expire(now, out)
	case wire.AdminResetLock:
		out = c.resetLock(r.Lock, wire.StatusNotOwner, out)
	case wire.AdminTokenFloor:
		c.RaiseTokenFloor(r.Token)
		m := wire.Fields{Op: wire.OpAdmin, Status: r.Status, Flags: wire.FlagReply, Lock: r.Lock, Txn: r.Txn,
			Token: c.token, Slots: r.Slots}
		return append(out, Effect{To: r.From, Msg: m})
	case wire.AdminYield:
		c.setMode(r.Lock, true)
		return c.lockStatus(r, out)
	case wire.AdminAdopt:
		c.RaiseTokenFloor(r.Token)
		out = c.adopt(now, r.Lock, out)
		return c.lockStatus(r, out)
	default:
		return c.reject(r, wire.StatusBadRequest, out)
	}
	m := wire.Fields{Op: wire.OpAdmin, Status: r.Status, Flags: wire.FlagReply, Lock: r.Lock, Txn: r.Txn}
	return append(out, Effect{To: r.From, Msg: m})
}

// RaiseTokenFloor makes every token granted from now on larger than t (tokens that are already
// above it are unaffected: the counter never goes back). The lock server calls it when the
// control plane hands it a floor (wire.AdminTokenFloor), e.g. when a lock moves from the switch
// back to a server, and when it moves to a new token epoch.
func (c *Core) RaiseTokenFloor(t uint64) {
	if c.token < t {
		c.token = t
	}
}

// LastToken returns the largest token the Core has granted, or the floor it was raised to
// (Config.TokenBase at first): the next grant's token is larger.
func (c *Core) LastToken() uint64 { return c.token }

// resetLock drops every request of a lock: waiters and buffered requests are rejected with s,
// holders are forgotten silently (their leases stay valid on the clients' side; the control plane
// resets a lock only once it has drained, or after waiting out the leases).
func (c *Core) resetLock(id uint32, s wire.Status, out []Effect) []Effect {
	l := c.locks.get(id)
	if l == nil {
		return out
	}
	if c.mutant == mutantResetKeepsHolders {
		return c.dropQueued(l, s, out)
	}
	for i := range l.holders {
		if c.quotas {
			c.leaveTenant(l.holders[i].tenant)
		}
	}
	c.stats.Holders -= len(l.holders)
	if len(l.holders) > 0 {
		l.holders = l.holders[:0]
		c.dl.remove(l)
	}
	out = c.dropQueued(l, s, out)
	c.maybeFree(l)
	return out
}

func (c *Core) dropQueued(l *lockState, s wire.Status, out []Effect) []Effect {
	for i := l.whead; i < len(l.waiters); i++ {
		if c.quotas {
			c.leaveTenant(l.waiters[i].tenant)
		}
		out = c.rejectEntry(l.id, &l.waiters[i], s, out)
	}
	c.stats.Waiters -= len(l.waiters) - l.whead
	l.waiters, l.whead = l.waiters[:0], 0
	if c.mutant == mutantDrainKeepsBuffered && s == wire.StatusShutdown {
		return out
	}
	for i := l.ohead; i < len(l.overflow); i++ {
		if c.quotas && c.mutant != mutantQ2Uncharged {
			c.leaveTenant(l.overflow[i].tenant)
		}
		out = c.rejectEntry(l.id, &l.overflow[i], s, out)
	}
	c.stats.Buffered -= len(l.overflow) - l.ohead
	l.overflow, l.ohead = l.overflow[:0], 0
	return out
}

// Drain rejects every waiting and buffered request with status shutdown; holders keep their locks
// until their leases end. The lock server calls it on graceful shutdown.
func (c *Core) Drain(out []Effect) []Effect {
	c.locks.each(func(l *lockState) {
		out = c.dropQueued(l, wire.StatusShutdown, out)
		c.maybeFree(l)
	})
	return out
}

// NextDeadline returns a time at or before which Expire has work to do (a lease to end, the
// grace period to end, or an idle lock state to free), or math.MaxInt64.
func (c *Core) NextDeadline() int64 {
	d := int64(math.MaxInt64)
	if c.paused {
		d = c.cfg.GrantAfter
	}
	if len(c.dl) > 0 {
		d = min(d, c.dl[0].due)
	}
	if c.idleHead != nil {
		d = min(d, c.idleHead.idleSince+int64(c.cfg.IdleRetention))
	}
	return d
}

// Expire ends every lease that has run out at now: the holder is removed and told (reject,
// lease-expired), and the lock passes to the next waiters. It also ends the takeover grace period
// and frees the lock states that have been idle for IdleRetention. Its cost is proportional to
// what expires (a deadline heap), not to the number of held locks.
func (c *Core) Expire(now int64, out []Effect) []Effect {
	c.now = now
	c.freeIdle(now)
	if c.paused && now >= c.cfg.GrantAfter {
		out = c.unpause(now, out)
	}
	for len(c.dl) > 0 && c.dl[0].due <= now {
		l := c.dl[0]
		expired := false
		for i := 0; i < len(l.holders); {
			h := &l.holders[i]
			if h.deadline > now {
				i++
				continue
			}
			e := *h
			if !expired || e.token > l.lastToken {
				// Of several holders expiring together, the latest grant is remembered.
				l.lastReleased, l.lastToken, l.lastExpired = e.txn, e.token, true
			}
			expired = true
			c.stats.Expired++
			if c.quotas {
				c.leaveTenant(e.tenant)
			}
			c.removeHolder(l, i) // moves the last holder to i: look at i again
			out = c.rejectEntry(l.id, &e, wire.StatusLeaseExpired, out)
		}
		if len(l.holders) == 0 {
			out = c.advance(now, l, out) // new holders' deadlines are after now
			c.maybeFree(l)
		}
	}
	return out
}

// unpause ends the takeover grace period: every lock's waiters are examined.
func (c *Core) unpause(now int64, out []Effect) []Effect {
	c.paused = false
	c.locks.each(func(l *lockState) { out = c.advance(now, l, out) })
	return out
}
