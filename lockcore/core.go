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

// Defaults of a Core's bounds (Config). They bound the memory of one Core, whatever its clients
// send, to about 80 MB: BenchmarkMemory (go test ./lockcore -run '^$' -bench Memory -benchtime 1x,
// 2026-11-28) measures 305 B per lock state (with one holder, its table slot and deadline-heap
// slot), 139 B per further waiter or holder (with the lock's membership index) and 58 B per
// remembered ended request, so DefaultMaxLocks states take 40 MB, DefaultMaxRequests requests at
// most 36 MB more and a full replay memory 3.8 MB (large queues may take up to twice their share
// while their slices grow). Without bounds, 4.4 M held locks took 1.6 GB of one server (issue 18).
// The lock server has one Core per shard: it should divide a server-wide budget among its shards
// rather than multiply these by their number. The locks a healthy workload has at once are far
// fewer (NetLock's experiments: thousands of hot locks in the switch, the rest uncontended);
// 4096 shared holders or waiters of one lock are far more than its clients' concurrency.
const (
	DefaultMaxLocks    = 1 << 17 // 131072 locks with requests
	DefaultMaxRequests = 1 << 18 // 262144 requests held, waiting or buffered
	DefaultMaxHolders  = 4096
	DefaultMaxWaiters  = 4096

	// DefaultWaitLease: see Config.WaitLease.
	DefaultWaitLease = 5 * time.Second
	// DefaultReplayWindow is 12 times the client library's RequestTimeout (5 s), the longest it
	// retransmits a release, and the default MaxLease, the longest a request holds: a copy of an
	// acquire is recognised as long as its request could matter.
	DefaultReplayWindow = time.Minute
	// DefaultReplayCapacity (65536 ended requests, 3.8 MB) is as many as the switch remembers
	// (docs/dataplane.md, NETLOCK_ENDED). It costs the uncontended acquire+release pair a lookup
	// and an insertion in that memory; the window shrinks under more than 1092 ends a second
	// (Stats.ReplayForgotten).
	DefaultReplayCapacity = 1 << 16
)

// Quota bounds what one tenant may ask of a Core, or of the Cores sharing a TenantLimiter. Zero
// fields mean unlimited.
type Quota struct {
	// MaxOutstanding bounds the tenant's requests that hold, wait for a lock or are buffered in q2.
	MaxOutstanding int
	// MaxRate bounds the tenant's acquires and buffered overflows per second (a one-second window,
	// as NetLock's control plane resets its per-tenant counters every second; quotaState).
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
	// MaxLocks bounds the locks with requests (holders, waiters or buffered requests) of the
	// Core: an acquire or overflow of another lock is rejected overloaded (wire.StatusOverloaded).
	// The states of idle locks (IdleRetention) count too: at the bound the oldest idle state is
	// freed early, so the Core keeps at most MaxLocks lock states. Default DefaultMaxLocks;
	// negative: unbounded (WithDefaults reports math.MaxInt).
	MaxLocks int
	// MaxRequests bounds the requests the Core keeps, held, waiting or buffered in q2, over all
	// its locks: an acquire or overflow beyond it is rejected overloaded. Default
	// DefaultMaxRequests; negative: unbounded.
	MaxRequests int
	// MaxHolders bounds the shared holders of one lock: a shared request that finds MaxHolders
	// holders waits as if the lock were held exclusively, until a holder leaves, so that one lock
	// has at most MaxHolders+MaxWaiters requests. Default DefaultMaxHolders; negative: unbounded.
	MaxHolders int
	// MaxWaiters bounds the waiters of one lock; beyond it acquires are rejected queue-full.
	// Default DefaultMaxWaiters; negative: unbounded.
	MaxWaiters int
	// MaxBuffered bounds the q2 overflow buffer of one lock; beyond it overflow requests are
	// rejected queue-full (to their original client). Default 4096.
	MaxBuffered int
	// IdleRetention is how long the state of a lock without requests is kept (a lock used again
	// soon keeps its state and table slot) before it is freed. Default 1s. The Core asks for an
	// Expire when the oldest idle state is due (NextDeadline), so idle states are freed on their
	// own timer, whether or not any lease runs. The AdminStats counts of a freed state that
	// TopLocks has not read yet are kept until it does (MaxUnreadStats).
	IdleRetention time.Duration
	// MaxUnreadStats bounds the locks whose AdminStats counts are kept after their state was
	// freed (idle retention, or an idle state evicted at MaxLocks), until the next TopLocks
	// reports them (unread.go). At the bound the busiest are kept: a freed lock's counts take the
	// place of the least busy record if they are larger, else they are dropped; the dropped
	// lock is counted in Stats.UnreadDropped, its requests and overflows in
	// Stats.UnreadDroppedRequests. Default DefaultMaxUnreadStats; must not be negative.
	MaxUnreadStats int
	// WaitLease bounds how long a request waits in a lock's queue without a sign of its client:
	// a waiter whose client has not retransmitted its acquire for WaitLease is removed, told
	// (reject, wire.StatusWaitExpired) and the queue advances, so that a dead client's queued
	// requests do not each take a lease when granted. Every retransmission (any copy of the
	// acquire) starts the wait lease again. The client library retransmits a waiting acquire at
	// most every client.Config.MaxRetryInterval (500 ms by default, with backoff from 25 ms and up
	// to 25% jitter below it), so the default, DefaultWaitLease = 5 s, lets ten retransmissions in
	// a row be lost (or delayed) before a live waiter is taken for dead; clients configured with a
	// longer MaxRetryInterval need a longer WaitLease. Expire removes waiters (NextDeadline
	// includes their deadlines); until it runs, an overdue waiter may still be granted. Requests
	// buffered in q2 have no wait lease (the switch owns them). Negative: no wait lease.
	WaitLease time.Duration
	// ReplayWindow is how long a request that ended (released, withdrawn, expired, dropped) is
	// remembered, so that a copy of its acquire, retransmitted late or replayed, is not accepted
	// again (replay.go). Default DefaultReplayWindow; negative: nothing is remembered (a copy of
	// an ended request is a new request).
	ReplayWindow time.Duration
	// ReplayCapacity bounds the ended requests remembered: when it is reached the oldest is
	// forgotten, so under a load of more than ReplayCapacity/ReplayWindow ends per second the
	// window is shorter (Stats.ReplayForgotten counts those). Default DefaultReplayCapacity.
	ReplayCapacity int
	// DefaultQuota applies to tenants without an entry in Quotas.
	DefaultQuota Quota
	// Quotas holds per-tenant quotas, enforced by a limiter of the Core's own.
	Quotas map[uint16]Quota
	// Limiter, if set, enforces the tenants' quotas instead (DefaultQuota and Quotas must then be
	// empty: the limiter has them). The lock server passes one NewSharedLimiter to all its shards,
	// so that a quota bounds a tenant at the server, not at each shard. Nothing authenticates the
	// tenant id a request carries (docs/protocol.md, Quotas).
	Limiter TenantLimiter
	// TokenBase is the fencing-token counter's start; the first grant gets TokenBase+1. The lock
	// server sets it to its token epoch shifted into the high bits (lockserver: tokens are
	// epoch-major, the epoch persisted and bumped on every start), so that tokens grow across
	// restarts and failovers without depending on any clock.
	TokenBase uint64
	// GrantAfter (ns, the caller's clock) holds all grants until that time: a server that takes
	// over a failed server's locks waits out the leases the failed server may have granted.
	GrantAfter int64
	// HashSeed keys the hashes of the Core's lock table (table.go) and replay memory (replay.go):
	// with a secret random seed, lock ids (and txns) chosen to collide cannot be computed, so a
	// client cannot make its lookups, or everyone's, walk long probe runs (issue 18: ids chosen
	// against the former public hash cost 4x the CPU and stalled other clients 5.7 s). 0 selects a
	// fixed, public key: deterministic, for tests and the data plane's oracle. The lock server
	// should pass a random seed (crypto/rand) per start.
	HashSeed uint64
	// TestingKnobs holds test-only behaviour; the zero value is production behaviour.
	TestingKnobs TestingKnobs
}

// TestingKnobs changes a Core's behaviour for lockcore's own tests: deliberate bugs that the
// reference model must catch (its negative controls) and bounds small enough to exercise rare
// paths. Its fields are unexported, so no other package can set them, and its zero value changes
// nothing.
type TestingKnobs struct {
	// mutant is a deliberate bug (0: none).
	mutant mutation
	// indexMin replaces the member count above which a lock gets a membership index (0: indexMin;
	// negative: never, the negative control of TestMembershipScansLinear).
	indexMin int
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
	for _, b := range []struct {
		v   *int
		def int
	}{{&c.MaxLocks, DefaultMaxLocks}, {&c.MaxRequests, DefaultMaxRequests}, {&c.MaxHolders, DefaultMaxHolders},
		{&c.MaxWaiters, DefaultMaxWaiters}} {
		switch {
		case *b.v == 0:
			*b.v = b.def
		case *b.v < 0:
			*b.v = math.MaxInt
		}
	}
	if c.IdleRetention == 0 {
		c.IdleRetention = time.Second
	}
	if c.ReplayWindow == 0 {
		c.ReplayWindow = DefaultReplayWindow
	}
	if c.WaitLease == 0 {
		c.WaitLease = DefaultWaitLease
	}
	if c.ReplayCapacity == 0 {
		c.ReplayCapacity = DefaultReplayCapacity
	}
	if c.MaxUnreadStats == 0 {
		c.MaxUnreadStats = DefaultMaxUnreadStats
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
	case c.MaxBuffered < 0:
		return errors.New("max buffered must not be negative")
	case c.IdleRetention < 0:
		return errors.New("idle retention must not be negative")
	case c.ReplayCapacity < 0:
		return errors.New("replay capacity must not be negative")
	case c.MaxUnreadStats < 0:
		return errors.New("max unread stats must not be negative")
	}
	if c.Limiter != nil && (len(c.Quotas) > 0 || c.DefaultQuota != (Quota{})) {
		return errors.New("quotas and a limiter: the limiter has the quotas")
	}
	_, err := newQuotas(c.DefaultQuota, c.Quotas)
	return err
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
	// Rejects at the Core's bounds, by bound (Config.MaxLocks, MaxRequests, MaxWaiters,
	// MaxBuffered), and shared requests that were not granted at once only because their lock had
	// MaxHolders holders (they wait).
	AtMaxLocks, AtMaxRequests, AtMaxWaiters, AtMaxBuffered, AtMaxHolders uint64
	// IdleEvicted counts the idle lock states freed before their IdleRetention ended, to make room
	// for a new lock at MaxLocks.
	IdleEvicted uint64
	// WaitExpired counts the waiters removed because their wait lease ran out.
	WaitExpired uint64
	// Replays counts acquires of requests that had ended (replay.go), not accepted again.
	// ReplayForgotten counts ended requests forgotten before their ReplayWindow passed, because
	// ReplayCapacity later ones ended.
	Replays, ReplayForgotten uint64
	// UnreadDropped counts the locks whose AdminStats counts were dropped unread, after their
	// state was freed, because Config.MaxUnreadStats busier locks' counts were kept;
	// UnreadDroppedRequests the requests and overflows those counts held (unread.go).
	UnreadDropped, UnreadDroppedRequests uint64
	// Gauges.
	Locks    int
	Holders  int
	Waiters  int
	Buffered int
	// Idle counts the states of locks without requests that are kept for IdleRetention.
	Idle int
	// Remembered counts the ended requests in the replay memory (some may be past their window).
	Remembered int
	// Unread counts the locks whose state was freed and whose AdminStats counts wait for the
	// next TopLocks.
	Unread int
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
	s.AtMaxLocks += o.AtMaxLocks
	s.AtMaxRequests += o.AtMaxRequests
	s.AtMaxWaiters += o.AtMaxWaiters
	s.AtMaxBuffered += o.AtMaxBuffered
	s.AtMaxHolders += o.AtMaxHolders
	s.IdleEvicted += o.IdleEvicted
	s.WaitExpired += o.WaitExpired
	s.Replays += o.Replays
	s.ReplayForgotten += o.ReplayForgotten
	s.UnreadDropped += o.UnreadDropped
	s.UnreadDroppedRequests += o.UnreadDroppedRequests
	s.Unread += o.Unread
	s.Remembered += o.Remembered
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
	seq      uint32 // waiters: arrival number (members.go)
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
	// idx indexes holders and waiters once there are more than indexMin of them (members.go);
	// seq is the arrival number of the latest waiter.
	idx  map[uint64]member
	seq  uint32
	due  int64 // earliest holder deadline (ns), while in the heap
	hidx int32 // index in the deadline heap, -1 when not in it
	// With wait leases, a lock with live waiters is in the Core's wait heap at widx (else -1),
	// keyed by wdue, at or before the earliest wait deadline of its waiters.
	widx int32
	wdue int64
	// Idle locks stay on the idle list for Config.IdleRetention after they became idle, so that a
	// lock used again soon keeps its state and table slot.
	inIdle       bool
	idleSince    int64
	iprev, inext *lockState
	// What AdminStats reports (TopLocks takes and resets them): requests processed, overflows
	// buffered, the largest depth (holders + waiters + buffered) and the largest contention a
	// client declared. When the state is freed with counts not yet read, they move to the
	// Core's unread store (unread.go).
	nreq, novf      uint32
	depth, declared uint16
}

func (l *lockState) idle() bool {
	return len(l.holders) == 0 && l.whead == len(l.waiters) && l.ohead == len(l.overflow)
}

// compatible reports whether a request of mode m may join l's holders: when there are none,
// or when m and the holders are shared and fewer than MaxHolders.
func (c *Core) compatible(l *lockState, m wire.Mode) bool {
	return len(l.holders) == 0 || (m == wire.Shared && l.holdMode == wire.Shared &&
		(len(l.holders) < c.cfg.MaxHolders || c.cfg.TestingKnobs.mutant == mutantHoldersUnbounded))
}

// requests is the number of requests the Core keeps (held, waiting, buffered).
func (c *Core) requests() int { return c.stats.Holders + c.stats.Waiters + c.stats.Buffered }

// Core is the lock state machine. See the package documentation for its rules.
type Core struct {
	cfg       Config
	locks     table
	free      []*lockState // recycled states, at most maxFree
	dl        dlHeap       // locks with holders, by earliest deadline
	wh        waitHeap     // locks with waiters (wait leases on), by earliest wait deadline
	token     uint64
	q2seq     uint64        // the latest q2 number (buffer): q2 is in (prio, q2 number) order
	quotas    bool          // lim != nil
	lim       TenantLimiter // nil without quotas
	paused    bool
	stats     Stats
	priorityN uint8
	now       int64      // the latest time the caller passed in
	idleHead  *lockState // idle list, oldest first
	idleTail  *lockState
	// modes holds the locks the control plane placed: true for switch-resident (AdminYield),
	// false for adopted back (AdminAdopt). A lock without an entry keeps the plain rules
	// (overflows buffered, acquires served).
	modes map[uint32]bool
	// scanned counts the entries compared by linear membership scans (members.go), for tests.
	scanned uint64
	// indexMin is the number of members above which a lock gets an index (members.go).
	indexMin int
	// replay remembers the requests that ended (replay.go); pending holds those that ended
	// in the current call.
	replay  replayMem
	pending []ended
	// unread keeps the AdminStats counts of freed states until TopLocks reads them (unread.go).
	unread unreadStats
}

// mutation names a deliberate bug for a negative control of the model test (0: none).
type mutation uint8

const (
	mutantQ2Uncharged        mutation = iota + 1 // q2 requests not charged to the tenant's quota
	mutantResetKeepsHolders                      // an admin reset leaves the holders in place
	mutantDrainKeepsBuffered                     // Drain leaves q2 alone
	mutantLocksUnbounded                         // MaxLocks not enforced
	mutantRequestsUnbounded                      // MaxRequests not enforced
	mutantHoldersUnbounded                       // MaxHolders not enforced
	mutantReplayRetryOnly                        // only acquires flagged retry are checked for replay
	mutantNoWaitExpiry                           // Expire leaves waiters whose wait lease ran out
	mutantWaitNotRefreshed                       // a retransmission does not renew its waiter's wait lease
	mutantLimiterPerCore                         // a Core given a SharedLimiter keeps quotas of its own
	mutantUnreadForgotten                        // a freed state's unread AdminStats counts are lost
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
		locks:     newTable(newHashKey(cfg.HashSeed)),
		token:     cfg.TokenBase,
		paused:    cfg.GrantAfter > 0,
		priorityN: uint8(cfg.Priorities),
		replay:    newReplayMem(int64(cfg.ReplayWindow), cfg.ReplayCapacity, cfg.HashSeed),
		indexMin:  indexMin,
		unread:    unreadStats{max: cfg.MaxUnreadStats},
	}
	switch k := cfg.TestingKnobs.indexMin; {
	case k < 0:
		c.indexMin = math.MaxInt
	case k > 0:
		c.indexMin = k
	}
	switch {
	case cfg.Limiter != nil:
		c.lim = cfg.Limiter
		if s, ok := cfg.Limiter.(*SharedLimiter); ok && cfg.TestingKnobs.mutant == mutantLimiterPerCore {
			c.lim, _ = NewTenantLimiter(s.def, s.per)
		}
	case len(cfg.Quotas) > 0 || cfg.DefaultQuota != (Quota{}):
		c.lim, _ = NewTenantLimiter(cfg.DefaultQuota, cfg.Quotas) // validated
	}
	c.quotas = c.lim != nil
	return c, nil
}

// Stats returns the counters and gauges.
func (c *Core) Stats() Stats {
	st := c.stats
	st.Remembered = c.replay.len()
	st.Unread = c.unread.len()
	return st
}

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

// lockFor returns the state of lock id for a new request, made or revived if the lock is
// idle, or nil (counted) when the Core has MaxLocks locks with requests already. A new state
// at MaxLocks states in all takes the place of the oldest idle one.
func (c *Core) lockFor(id uint32) *lockState {
	l := c.locks.get(id)
	if l != nil && !l.inIdle {
		return l
	}
	if c.stats.Locks >= c.cfg.MaxLocks && c.cfg.TestingKnobs.mutant != mutantLocksUnbounded {
		c.stats.AtMaxLocks++
		return nil
	}
	if l != nil {
		c.unlinkIdle(l)
		c.stats.Locks++
		return l
	}
	if c.locks.n >= c.cfg.MaxLocks && c.idleHead != nil {
		c.stats.IdleEvicted++
		c.freeState(c.idleHead)
	}
	if n := len(c.free); n > 0 {
		l, c.free = c.free[n-1], c.free[:n-1]
	} else {
		l = &lockState{hidx: -1, widx: -1}
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
	if l.widx >= 0 || l.hidx >= 0 {
		panic("lockcore: a lock without requests is in a deadline heap")
	}
	c.stats.Locks--
	c.stats.Idle++
	l.holders, l.waiters, l.overflow = l.holders[:0], l.waiters[:0], l.overflow[:0]
	l.whead, l.ohead, l.seq, l.idx = 0, 0, 0, nil
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
		c.freeState(l)
	}
}

// freeState frees the idle state l: it leaves the table, and it is kept for reuse if fewer
// than maxFree states are. Its AdminStats counts, if TopLocks has not read them, go to the
// unread store.
func (c *Core) freeState(l *lockState) {
	if l.nreq|l.novf != 0 && c.cfg.TestingKnobs.mutant != mutantUnreadForgotten {
		c.keepUnread(l)
	}
	c.unlinkIdle(l)
	c.locks.del(l.id)
	if len(c.free) >= maxFree {
		return // dropped: the garbage collector takes it
	}
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

// admitTenant checks and charges the tenant's quota for a new request (c.quotas is set).
func (c *Core) admitTenant(now int64, id uint16) bool { return c.lim.Admit(now, id) }

// leaveTenant gives back a request charged by admitTenant.
func (c *Core) leaveTenant(id uint16) {
	if c.quotas {
		c.lim.Leave(id)
	}
}

func (c *Core) acquire(now int64, r *Request, out []Effect) []Effect {
	if r.Txn == 0 || r.Priority >= c.priorityN {
		return c.reject(r, wire.StatusBadRequest, out)
	}
	// The head of the replay memory's chain for (lock, txn), read now: its likely cache miss
	// overlaps with the lock lookup and the duplicate checks.
	chain := c.replay.chain(r.Lock, r.Txn)
	l := c.lockFor(r.Lock)
	if l == nil {
		return c.reject(r, wire.StatusOverloaded, out)
	}
	l.count(r, false)
	if i := c.holderAt(l, r.Txn); i >= 0 {
		c.stats.Duplicates++
		return appendGrant(out, l.id, &l.holders[i])
	}
	if j := c.waiterAt(l, r.Txn); j >= 0 {
		// A retransmission: its client is alive, and its wait lease starts again.
		c.stats.Duplicates++
		if c.cfg.WaitLease > 0 && c.cfg.TestingKnobs.mutant != mutantWaitNotRefreshed {
			l.waiters[j].deadline = now + int64(c.cfg.WaitLease)
		}
		return out
	}
	if e := c.replay.findFrom(chain, r.Lock, r.Txn, now); e != nil &&
		(r.Flags&wire.FlagRetry != 0 || c.cfg.TestingKnobs.mutant != mutantReplayRetryOnly) {
		// A copy of a request that ended (a late retransmission, or a replay: replay.go): not
		// accepted again. Ignored if it was released or withdrawn; else its client may have
		// missed how it ended and still wait: told again.
		c.stats.Replays++
		c.maybeFree(l)
		if e.status != wire.StatusOK {
			return c.reject(r, e.status, out)
		}
		return out
	}
	if c.requests() >= c.cfg.MaxRequests && c.cfg.TestingKnobs.mutant != mutantRequestsUnbounded {
		c.stats.AtMaxRequests++
		c.maybeFree(l)
		return c.reject(r, wire.StatusOverloaded, out)
	}
	if c.quotas && !c.admitTenant(now, r.Tenant) {
		c.maybeFree(l)
		return c.reject(r, wire.StatusQuota, out)
	}
	pos := l.insertPos(r.Priority)
	if pos == l.whead && !c.paused {
		if c.compatible(l, r.Mode) {
			e := c.newEntry(r)
			return c.grant(now, l, &e, out)
		}
		if r.Mode == wire.Shared && l.holdMode == wire.Shared {
			c.stats.AtMaxHolders++
		}
	}
	try := r.Flags&wire.FlagTry != 0
	if try || len(l.waiters)-l.whead >= c.cfg.MaxWaiters {
		if c.quotas {
			c.leaveTenant(r.Tenant)
		}
		c.maybeFree(l)
		if try {
			return c.reject(r, wire.StatusWouldBlock, out)
		}
		c.stats.AtMaxWaiters++
		return c.reject(r, wire.StatusQueueFull, out)
	}
	c.queue(l, pos, c.newEntry(r))
	c.stats.Queued++
	c.stats.Waiters++
	return out
}

// queue makes e a waiter of l at pos (l.insertPos(e.prio)), with its wait deadline.
func (c *Core) queue(l *lockState, pos int, e entry) {
	e.deadline = 0
	if c.cfg.WaitLease > 0 {
		e.deadline = c.now + int64(c.cfg.WaitLease)
		if l.widx < 0 {
			l.wdue = e.deadline
			c.wh.push(l)
		} else if e.deadline < l.wdue { // only if the caller's clock went back
			l.wdue = e.deadline
			c.wh.fix(l)
		}
	}
	c.insertWaiter(l, pos, e)
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

// grant makes e a holder of l and appends its grant.
func (c *Core) grant(now int64, l *lockState, e *entry, out []Effect) []Effect {
	c.token++
	e.token = c.token
	e.deadline = now + int64(e.lease)*int64(time.Microsecond)
	l.holdMode = e.mode
	l.holders = append(l.holders, *e)
	if l.idx != nil || l.members() > c.indexMin {
		c.indexHolder(l, e.txn)
	}
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
	for !c.paused && l.whead < len(l.waiters) && c.compatible(l, l.waiters[l.whead].mode) {
		e := l.waiters[l.whead]
		l.whead++
		c.stats.Waiters--
		out = c.grant(now, l, &e, out)
	}
	if l.whead == len(l.waiters) {
		l.waiters, l.whead, l.seq = l.waiters[:0], 0, 0
		if l.widx >= 0 {
			c.wh.remove(l)
		}
	} else if l.whead > 32 && l.whead > len(l.waiters)/2 {
		n := copy(l.waiters, l.waiters[l.whead:])
		l.waiters, l.whead = l.waiters[:n], 0
	}
	return out
}

func (c *Core) removeHolder(l *lockState, i int) {
	dl := l.holders[i].deadline
	l.dropHolder(i)
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
		return c.releaseEnded(now, r, out)
	}
	l.count(r, false)
	if i := c.holderAt(l, r.Txn); i >= 0 {
		if l.holders[i].token != r.Token {
			return c.reject(r, wire.StatusNotHolder, out)
		}
		tenant := l.holders[i].tenant
		c.removeHolder(l, i)
		c.stats.Released++
		return c.ended(now, l, r, tenant, out)
	}
	j := c.waiterAt(l, r.Txn)
	if j >= 0 && r.Token != 0 {
		// A waiter has no token yet: this names some earlier grant of the txn.
		c.maybeFree(l)
		return c.reject(r, wire.StatusNotHolder, out)
	}
	if j >= 0 {
		tenant := l.waiters[j].tenant
		l.removeWaiter(j)
		c.stats.Waiters--
		c.stats.Withdrawn++
		// A withdrawn exclusive waiter may have held back shared waiters behind it: ended
		// re-examines the queue.
		return c.ended(now, l, r, tenant, out)
	}
	c.maybeFree(l)
	return c.releaseEnded(now, r, out)
}

// releaseEnded answers a release whose txn neither holds nor waits for the lock: if it repeats
// the token of a remembered request of the txn (a retransmission of the release or withdrawal
// that ended it), as that request ended; else not-holder.
func (c *Core) releaseEnded(now int64, r *Request, out []Effect) []Effect {
	e := c.endedOf(r, now)
	if e == nil || e.token != r.Token {
		return c.reject(r, wire.StatusNotHolder, out)
	}
	c.stats.Duplicates++
	if e.status != wire.StatusOK {
		return c.reject(r, e.status, out)
	}
	return c.ack(r, out)
}

// ended finishes a release or withdrawal that removed r's request from l: it remembers the
// request, frees the tenant's quota, acknowledges, and grants onward.
func (c *Core) ended(now int64, l *lockState, r *Request, tenant uint16, out []Effect) []Effect {
	if c.cfg.ReplayWindow > 0 {
		c.rememberNow(l.id, r.Txn, r.Token, now, wire.StatusOK)
	}
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
	i := c.holderAt(l, r.Txn)
	if i < 0 || l.holders[i].token != r.Token {
		return c.reject(r, wire.StatusNotHolder, out)
	}
	h := &l.holders[i]
	if r.LeaseMicros != 0 {
		h.lease = c.leaseMicros(r.LeaseMicros)
	}
	old := h.deadline
	h.deadline = now + int64(h.lease)*int64(time.Microsecond)
	if r.Timestamp != 0 {
		h.ts = r.Timestamp
	}
	if old == l.due || h.deadline < l.due {
		// The earliest deadline may have moved. The renewal of a holder that was not the
		// earliest cannot move it up: O(1) for all but one of many shared holders.
		c.refreshDue(l)
	}
	c.stats.Renewed++
	out = c.ack(r, out)
	out[len(out)-1].Msg.LeaseMicros = h.lease
	return out
}

// buffer keeps an overflowed acquire of a switch-resident lock in q2. A buffered request counts
// against its tenant's quota (outstanding and rate) until it is pushed back or dropped; a full
// buffer (Config.MaxBuffered) rejects it queue-full, a Core at MaxLocks or MaxRequests
// overloaded.
func (c *Core) buffer(now int64, r *Request, out []Effect) []Effect {
	if r.Txn == 0 || r.Priority >= c.priorityN {
		return notBuffered(r, c.reject(r, wire.StatusBadRequest, out))
	}
	l := c.lockFor(r.Lock)
	if l == nil {
		return notBuffered(r, c.reject(r, wire.StatusOverloaded, out))
	}
	l.count(r, true)
	if c.scan(l.overflow[l.ohead:], r.Txn) >= 0 {
		c.stats.Duplicates++
		return notBuffered(r, out)
	}
	if len(l.overflow)-l.ohead >= c.cfg.MaxBuffered {
		c.stats.AtMaxBuffered++
		c.maybeFree(l)
		return notBuffered(r, c.reject(r, wire.StatusQueueFull, out))
	}
	if c.requests() >= c.cfg.MaxRequests && c.cfg.TestingKnobs.mutant != mutantRequestsUnbounded {
		c.stats.AtMaxRequests++
		c.maybeFree(l)
		return notBuffered(r, c.reject(r, wire.StatusOverloaded, out))
	}
	charge := c.quotas && c.cfg.TestingKnobs.mutant != mutantQ2Uncharged
	if charge && !c.admitTenant(now, r.Tenant) {
		c.maybeFree(l)
		return notBuffered(r, c.reject(r, wire.StatusQuota, out))
	}
	// q2 is in (prio, q2 number) order; a buffered entry's token field holds its q2 number
	// (tokens are given only at grant, by the switch). A push-back the switch could not queue
	// comes back with its number (r.Token) and goes back where it was.
	e := c.newEntry(r)
	if r.Token != 0 {
		e.token = r.Token
	} else {
		c.q2seq++
		e.token = c.q2seq
	}
	n := len(l.overflow)
	pos := n
	if n > l.ohead && q2Before(&e, &l.overflow[n-1]) {
		for pos = l.ohead; pos < n && !q2Before(&e, &l.overflow[pos]); pos++ {
		}
	}
	l.overflow = append(l.overflow, entry{})
	copy(l.overflow[pos+1:], l.overflow[pos:])
	l.overflow[pos] = e
	c.stats.Overflowed++
	c.stats.Buffered++
	return out
}

// q2Before reports whether buffered entry a goes before b in q2: (prio, q2 number) order.
func q2Before(a, b *entry) bool {
	return a.prio < b.prio || a.prio == b.prio && a.token < b.token
}

// notBuffered tells the switch that the overflow r did not add to q2 (a duplicate, or refused):
// a push-back without a request (txn 0). The switch counts the overflows it sends as buffered
// until they come back; this keeps its count equal to q2's length.
func notBuffered(r *Request, out []Effect) []Effect {
	return append(out, Effect{To: r.From, Msg: wire.Fields{Op: wire.OpPushBack, Lock: r.Lock}})
}

// pushBack answers a queue-empty notification: the switch announces its free slots per priority
// level, level 0's in r.Slots and level 1's in r.LeaseMicros (docs/protocol.md, "Overflow
// (q2)"). q2 is in (priority, number) order; the buffered requests go back from its head, at
// most r.Slots of level 0 and, only once no level-0 request is left behind, at most
// r.LeaseMicros of level 1 (any priority above 0 is level 1, as in the switch). A level-1
// request thus never passes a level-0 one still buffered, and a level's requests never
// outnumber its free slots.
func (c *Core) pushBack(r *Request, out []Effect) []Effect {
	l := c.locks.get(r.Lock)
	if l == nil {
		return out
	}
	free := [2]int{int(r.Slots), int(min(r.LeaseMicros, math.MaxUint16))}
	for l.ohead < len(l.overflow) {
		e := &l.overflow[l.ohead]
		level := 0
		if e.prio != 0 {
			level = 1
		}
		if free[level] == 0 {
			break
		}
		free[level]--
		l.ohead++
		c.stats.PushedBack++
		c.stats.Buffered--
		if c.quotas && c.cfg.TestingKnobs.mutant != mutantQ2Uncharged {
			c.leaveTenant(e.tenant)
		}
		out = append(out, Effect{To: r.From, Msg: wire.Fields{Op: wire.OpPushBack, Mode: e.mode,
			Flags: wire.FlagForwarded, Priority: e.prio, Tenant: e.tenant, Lock: l.id, Txn: e.txn,
			Token: e.token, Timestamp: e.ts, LeaseMicros: e.lease, Client: e.to}})
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
	if c.cfg.TestingKnobs.mutant == mutantResetKeepsHolders {
		out = c.dropQueued(l, s, out)
		c.flushEnded()
		return out
	}
	for i := range l.holders {
		h := &l.holders[i]
		c.remember(l.id, h.txn, h.token, s)
		if c.quotas {
			c.leaveTenant(h.tenant)
		}
	}
	c.stats.Holders -= len(l.holders)
	if len(l.holders) > 0 {
		l.clearHolders()
		c.dl.remove(l)
	}
	out = c.dropQueued(l, s, out)
	c.maybeFree(l)
	if len(c.pending) > 0 {
		c.flushEnded()
	}
	return out
}

func (c *Core) dropQueued(l *lockState, s wire.Status, out []Effect) []Effect {
	for i := l.whead; i < len(l.waiters); i++ {
		w := &l.waiters[i]
		c.remember(l.id, w.txn, 0, s)
		if c.quotas {
			c.leaveTenant(w.tenant)
		}
		out = c.rejectEntry(l.id, w, s, out)
	}
	c.stats.Waiters -= len(l.waiters) - l.whead
	l.clearWaiters()
	if l.widx >= 0 {
		c.wh.remove(l)
	}
	if c.cfg.TestingKnobs.mutant == mutantDrainKeepsBuffered && s == wire.StatusShutdown {
		return out
	}
	for i := l.ohead; i < len(l.overflow); i++ {
		if c.quotas && c.cfg.TestingKnobs.mutant != mutantQ2Uncharged {
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
	if len(c.pending) > 0 {
		c.flushEnded()
	}
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
	if len(c.wh) > 0 {
		d = min(d, c.wh[0].wdue)
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
	for len(c.wh) > 0 && c.wh[0].wdue <= now && c.cfg.TestingKnobs.mutant != mutantNoWaitExpiry {
		out = c.expireWaiters(now, c.wh[0], out)
	}
	if c.paused && now >= c.cfg.GrantAfter {
		out = c.unpause(now, out)
	}
	for len(c.dl) > 0 && c.dl[0].due <= now {
		l := c.dl[0]
		for i := 0; i < len(l.holders); {
			h := &l.holders[i]
			if h.deadline > now {
				i++
				continue
			}
			e := *h
			c.remember(l.id, e.txn, e.token, wire.StatusLeaseExpired)
			c.stats.Expired++
			if c.quotas {
				c.leaveTenant(e.tenant)
			}
			c.removeHolder(l, i) // moves the last holder to i: look at i again
			out = c.rejectEntry(l.id, &e, wire.StatusLeaseExpired, out)
		}
		// Holders left: the head waiter may be grantable (an exclusive one when none are left, a
		// shared one held back by MaxHolders). New holders' deadlines are after now.
		out = c.advance(now, l, out)
		c.maybeFree(l)
	}
	if len(c.pending) > 0 {
		c.flushEnded()
	}
	return out
}

// expireWaiters removes the waiters of l whose wait deadline passed at now: each is told
// (wait-expired), remembered, and gives its quota back; the queue advances. l is in the wait heap
// and due (wdue <= now); it leaves the heap if no waiter is left, else its key becomes the
// earliest deadline left.
func (c *Core) expireWaiters(now int64, l *lockState, out []Effect) []Effect {
	due, k := int64(math.MaxInt64), l.whead
	for i := l.whead; i < len(l.waiters); i++ {
		w := l.waiters[i]
		if w.deadline > now {
			due = min(due, w.deadline)
			l.waiters[k] = w
			k++
			continue
		}
		if l.idx != nil {
			delete(l.idx, w.txn)
		}
		c.remember(l.id, w.txn, 0, wire.StatusWaitExpired)
		c.stats.Waiters--
		c.stats.WaitExpired++
		if c.quotas {
			c.leaveTenant(w.tenant)
		}
		out = c.rejectEntry(l.id, &w, wire.StatusWaitExpired, out)
	}
	clear(l.waiters[k:])
	l.waiters = l.waiters[:k]
	if k > l.whead {
		l.wdue = due
		c.wh.fix(l)
	}
	out = c.advance(now, l, out) // takes l out of the heap if no waiter is left
	c.maybeFree(l)
	return out
}

// unpause ends the takeover grace period: every lock's waiters are examined.
func (c *Core) unpause(now int64, out []Effect) []Effect {
	c.paused = false
	c.locks.each(func(l *lockState) { out = c.advance(now, l, out) })
	return out
}
