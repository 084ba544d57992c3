// Package srvcore is a lock server's rules without I/O: the shards of [lockcore.Core] that own
// the locks, and what a server adds around them (docs/architecture.md, "The lock server"):
//
//   - who may send what: the rack key and the peers of every control message, forwarded requests
//     only from a switch (auth.go);
//   - fencing tokens: epoch-major ([wire.EpochShift]); the epoch is persisted before any token of
//     it is granted: moving to a new epoch is an effect, [Out.Persist], that the shell
//     acknowledges with [Core.Persisted] (raft's Ready), and nothing that depends on the new
//     epoch happens before the acknowledgement;
//   - grant holds: a standby before its takeover, a grace period after a restart or a takeover,
//     a lapsed controller lease;
//   - the controller's term fence and its admin sub-operations: ping, placement (yield, adopt,
//     stats, takeover, residents), token floor (place.go).
//
// The lock server (package lockserver) is the UDP shell around it: sockets, batching, timers,
// the state file, metrics. The rack model (testbed/rackmodel) drives the same Core in virtual
// time. A Core takes no clock: every method that needs the time takes now, monotonic ns
// (internal/clock.Mono).
//
// Concurrency: a Core is safe for concurrent use. The server-level state is guarded by one
// mutex, each shard by its own; a lock's requests are stepped under its shard's mutex, so
// several goroutines may Handle datagrams at once. Lock order: Core.mu before Shard.mu.
package srvcore

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// Config configures a Core.
type Config struct {
	// Shards is the number of lock partitions (lock id modulo Shards), each a lockcore.Core.
	Shards int
	// Core configures every shard. TokenBase and GrantAfter are set by the Core. Its bounds of
	// the whole server (MaxLocks, MaxRequests: the memory of the server) are divided among the
	// shards; the per-lock bounds (MaxWaiters, MaxHolders, MaxBuffered) apply to each lock. Its
	// tenant quotas (Quotas, DefaultQuota) are the server's: the shards share one
	// lockcore.SharedLimiter, so a quota of 100 stays 100 whatever the shard count.
	Core lockcore.Config
	// Key is the rack key every control message must carry; 0 refuses every control message.
	Key wire.Key
	// Peers says who may send which control message.
	Peers Peers
	// Epoch is the token epoch in force at start, already persisted by the shell: every token
	// the Core grants is above wire.EpochBase(Epoch).
	Epoch uint64
	// Start is the monotonic time (ns) the server starts at.
	Start int64
	// Grace holds every grant until Start+Grace: the restart grace (the leases a previous run
	// may have granted) or the takeover grace (a failed server's), whichever is longer.
	Grace time.Duration
	// Standby grants nothing until the controller's wire.AdminTakeover.
	Standby bool
	// ControllerLease, if positive, fences the server to the controller: each authenticated
	// admin ping renews its authority for this long, and it grants nothing without authority.
	// The server starts with one lease of authority.
	ControllerLease time.Duration
	// Instance identifies this run of the server in its ping replies (a restart changes it);
	// never 0.
	Instance uint32
	// AcceptBatch accepts batch datagrams (wire.FlagBatch: several client requests back to
	// back, docs/protocol.md "Batches") from clients that reach the server directly: each
	// header is handled as a datagram of its own would be. Off, a batch is dropped whole and
	// counted (BadBatchOff); its client retransmits each request, and retransmissions go
	// single. Off by default: behind a switch a batch loses every request after its first
	// (the switch answers or forwards the first header only), and the releases and probes of
	// switch-held locks in it would reach the server instead of the switch.
	AcceptBatch bool
	// Tier, if set, is a second way to grant some locks (the lock server's RDMA tier).
	Tier Tier
	// Logger receives the core's few logs (epoch moves, takeovers, grant holds). Nil discards.
	Logger *slog.Logger
	// TestingKnobs are for tests only.
	TestingKnobs TestingKnobs
}

// TestingKnobs holds behaviour that only tests ask for (one documented field per package, as
// CockroachDB does).
type TestingKnobs struct {
	// OnAccept, if set, is told every acquire a shard accepts into a lock's queue (granted or
	// waiting; not a duplicate, a refusal, a buffered overflow or a dropped acquire of a
	// switch-resident lock), in the order the shard took them: the acceptance order of the
	// history checker's FIFO rule. It runs under the shard's mutex.
	OnAccept func(lock uint32, txn uint64)
}

func (c *Config) validate() error {
	switch {
	case c.Shards < 1 || c.Shards > 1024:
		return fmt.Errorf("shards %d: must be in 1..1024", c.Shards)
	case c.Epoch >= wire.MaxEpoch:
		return fmt.Errorf("epoch %d: must be below %d", c.Epoch, uint64(wire.MaxEpoch))
	case c.Grace < 0:
		return errors.New("grace must not be negative")
	case c.ControllerLease < 0:
		return errors.New("controller lease must not be negative")
	case c.Instance == 0:
		return errors.New("instance must not be 0")
	}
	return nil
}

// Tier is a second way to grant locks, beside the shards' queues: the lock server's RDMA tier,
// whose ALocks the server takes on its UDP clients' behalf before their grants leave. The Core
// calls it at three points.
type Tier interface {
	// Intercept sees every request before it is stepped, with no mutex held. It may adapt req
	// (a shared acquire served exclusively). It returns false when it answered the request
	// itself (appending to out) or dropped it.
	Intercept(now int64, req *lockcore.Request, out *Out) bool
	// Filter sees the effects of a step of req, or of a lease expiry (req nil), of shard sh,
	// with sh's mutex held, and returns the effects to send.
	Filter(sh *Shard, req *lockcore.Request, effs []lockcore.Effect) []lockcore.Effect
	// Tick runs at the start of every Tick, with no mutex held.
	Tick(now int64, c *Core, out *Out)
}

// Out collects what a call asks the shell to do. The shell sends Sends in order, then Bodies;
// if Persist is not 0 it persists that epoch and calls Persisted (or PersistFailed). Reset
// before reuse.
type Out struct {
	Sends   []lockcore.Effect
	Bodies  []Body
	Persist uint64
	// BatchTo is the sender of the batch datagram Handle was given (invalid for a single
	// datagram): the shell may coalesce the answers to it into batch datagrams.
	BatchTo netip.AddrPort
	req     lockcore.Request // Handle's scratch: a request on the heap once, not per datagram
}

// Body is a reply with a body after its header and rack key (admin stats and residents).
type Body struct {
	To   netip.AddrPort
	Msg  wire.Fields
	Data []byte
}

// Reset empties o, keeping its memory.
func (o *Out) Reset() {
	o.Sends, o.Bodies, o.Persist, o.BatchTo = o.Sends[:0], o.Bodies[:0], 0, netip.AddrPort{}
}

func (o *Out) send(to netip.AddrPort, m wire.Fields) {
	o.Sends = append(o.Sends, lockcore.Effect{To: to, Msg: m})
}

// Shard is one partition of the locks: a lockcore.Core behind a mutex.
type Shard struct {
	mu   sync.Mutex
	core *lockcore.Core
	out  []lockcore.Effect
}

// Lock and Unlock guard the shard (for a Tier working on it outside a Filter call).
func (sh *Shard) Lock()   { sh.mu.Lock() }
func (sh *Shard) Unlock() { sh.mu.Unlock() }

// Core returns the shard's lock core. The caller holds the shard's mutex.
func (sh *Shard) Core() *lockcore.Core { return sh.core }

// Core is a lock server's rules. Make one with New.
type Core struct {
	cfg    Config
	log    *slog.Logger
	auth   *auth
	shards []*Shard
	bad    [BadReasons]atomic.Uint64
	ref    [RefusedReasons]atomic.Uint64

	mu         sync.Mutex
	epoch      uint64        // in force, persisted
	persisting uint64        // asked of the shell and not yet acknowledged (0: none)
	waits      []persistWait // what waits for an epoch to be persisted
	term       uint64        // the largest controller term seen
	standby    bool          // grants nothing until a takeover
	graceEnd   int64         // no grants before (ns); 0 none
	leaseUntil int64         // the controller lease's end (ns)
	applied    int64         // the grant hold last applied to the shards
	lastStats  int64         // the end of the previous AdminStats interval (ns)
}

// persistWait is something that runs once epoch is persisted (ok) or could not be (!ok).
type persistWait struct {
	epoch uint64
	run   func(now int64, ok bool, out *Out)
}

// New returns a Core. Nothing is granted before Start+Grace (and, for a standby, before its
// takeover).
func New(cfg Config) (*Core, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("srvcore: %w", err)
	}
	a, err := newAuth(cfg.Key, cfg.Peers)
	if err != nil {
		return nil, fmt.Errorf("srvcore: %w", err)
	}
	c := &Core{cfg: cfg, log: cfg.Logger, auth: a, epoch: cfg.Epoch, standby: cfg.Standby, lastStats: cfg.Start}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Grace > 0 {
		c.graceEnd = cfg.Start + int64(cfg.Grace)
	}
	c.leaseUntil = cfg.Start + int64(cfg.ControllerLease)
	c.applied = c.holdLocked(cfg.Start)
	shardCfg := cfg.Core
	if shardCfg.Limiter == nil && (len(shardCfg.Quotas) > 0 || shardCfg.DefaultQuota != (lockcore.Quota{})) {
		lim, err := lockcore.NewSharedLimiter(shardCfg.DefaultQuota, shardCfg.Quotas)
		if err != nil {
			return nil, fmt.Errorf("srvcore: %w", err)
		}
		shardCfg.Limiter, shardCfg.Quotas, shardCfg.DefaultQuota = lim, nil, lockcore.Quota{}
	}
	shardCfg.MaxLocks = perShard(shardCfg.MaxLocks, lockcore.DefaultMaxLocks, cfg.Shards)
	shardCfg.MaxRequests = perShard(shardCfg.MaxRequests, lockcore.DefaultMaxRequests, cfg.Shards)
	for range cfg.Shards {
		cc := shardCfg
		cc.TokenBase = wire.EpochBase(cfg.Epoch)
		cc.GrantAfter = c.applied
		core, err := lockcore.New(cc)
		if err != nil {
			return nil, fmt.Errorf("srvcore: %w", err)
		}
		c.shards = append(c.shards, &Shard{core: core, out: make([]lockcore.Effect, 0, 64)})
	}
	return c, nil
}

// perShard divides a server-wide bound (0: def; negative: unbounded) among n shards, rounding
// up.
func perShard(bound, def, n int) int {
	if bound < 0 {
		return bound
	}
	if bound == 0 {
		bound = def
	}
	return (bound + n - 1) / n
}

// Epoch returns the token epoch in force: every token granted from now on is above
// wire.EpochBase(Epoch()).
func (c *Core) Epoch() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// Shards returns the number of shards.
func (c *Core) Shards() int { return len(c.shards) }

// ShardOf returns the shard of lock.
func (c *Core) ShardOf(lock uint32) *Shard { return c.shards[lock%uint32(len(c.shards))] }

// ShardIndex returns the index of lock's shard.
func (c *Core) ShardIndex(lock uint32) int { return int(lock % uint32(len(c.shards))) }

// Handle processes one datagram b from from at now: it is decoded and checked (malformed
// datagrams and refused control messages are counted and dropped), then applied. A batch
// datagram (wire.FlagBatch) is checked whole (wire.ParseBatch: a malformed batch is dropped
// whole), then each of its headers goes, in order, through the same checks and the same Step
// as a single datagram, with one rule more: a batch carries client requests only, so a control
// message in it is refused (RefusedBatched).
func (c *Core) Handle(now int64, b []byte, from netip.AddrPort, out *Out) {
	req := &out.req
	if !wire.IsBatch(b) {
		if c.decode(b, from, false, req) {
			c.Step(now, req, out)
		}
		return
	}
	if !c.cfg.AcceptBatch {
		c.bad[BadBatchOff].Add(1)
		return
	}
	k, err := wire.ParseBatch(b)
	if err != nil {
		c.countBad(err)
		return
	}
	out.BatchTo = from
	for i := 0; i < k; i++ {
		if c.decode(wire.BatchHeader(b, i), from, true, req) {
			c.Step(now, req, out)
		}
	}
}

// countBad counts a datagram dropped for the decoding error err.
func (c *Core) countBad(err error) {
	switch {
	case errors.Is(err, wire.ErrShort):
		c.bad[BadShort].Add(1)
	case errors.Is(err, wire.ErrVersion):
		c.bad[BadVersion].Add(1)
	case errors.Is(err, wire.ErrOp):
		c.bad[BadOp].Add(1)
	case errors.Is(err, wire.ErrMode):
		c.bad[BadMode].Add(1)
	default:
		c.bad[BadBatch].Add(1)
	}
}

// decode validates a datagram (or, batched, one header of a batch) into req; invalid ones, and
// control messages that are not authorized (docs/protocol.md, "Who may send what"), are counted
// and false is returned.
func (c *Core) decode(b []byte, from netip.AddrPort, batched bool, req *lockcore.Request) bool {
	h, err := wire.Parse(b)
	if err != nil {
		c.countBad(err)
		return false
	}
	switch op := h.Op(); {
	case op == wire.OpAdmin && h.Has(wire.FlagReply):
		// An answer is never a request: stepping it would answer it (two servers could bounce
		// replies forever).
		c.bad[BadUnexpected].Add(1)
		return false
	case op.IsControl() && batched:
		// Control messages come from the rack's peers one per datagram, with the rack key in
		// their trailer; a batch has no trailer and is a client's.
		c.ref[RefusedBatched].Add(1)
		return false
	case op.IsControl():
		if why := c.auth.check(b, h, from); why >= 0 {
			c.ref[why].Add(1)
			return false
		}
	case op == wire.OpAcquire, op == wire.OpRelease, op == wire.OpLeaseProbe:
		if h.Has(wire.FlagForwarded) && !c.auth.forwardOK(from) {
			c.ref[RefusedForwarded].Add(1)
			return false
		}
	default:
		c.bad[BadUnexpected].Add(1)
		return false
	}
	h.Decode(&req.Fields)
	req.Flags &^= wire.FlagBatch // framing, not part of the request
	req.From = from
	return true
}

// Step applies a decoded, authorized request (Handle's second half; the rack model and tests
// call it with requests they built).
func (c *Core) Step(now int64, req *lockcore.Request, out *Out) {
	if req.Op == wire.OpAdmin {
		switch {
		case req.Status == wire.AdminTokenFloor:
			c.tokenFloor(now, req, out)
			return
		case req.Status == wire.AdminPing:
			c.ping(now, req, out)
			return
		case isPlacement(req.Status):
			c.placement(now, req, out)
			return
		}
	}
	if c.cfg.Tier != nil && !c.cfg.Tier.Intercept(now, req, out) {
		return
	}
	sh := c.ShardOf(req.Lock)
	sh.mu.Lock()
	c.stepShard(now, sh, req, out)
	sh.mu.Unlock()
}

// stepShard steps req on sh and appends its effects. sh.mu is held.
func (c *Core) stepShard(now int64, sh *Shard, req *lockcore.Request, out *Out) {
	hook := c.cfg.TestingKnobs.OnAccept != nil && (req.Op == wire.OpAcquire || req.Op == wire.OpOverflow)
	var taken uint64
	if hook {
		st := sh.core.Stats()
		taken = st.Grants + st.Queued
	}
	sh.out = sh.core.Step(now, req, sh.out[:0])
	if hook {
		// An acquire grants or queues only itself, so this counts its acceptance.
		if st := sh.core.Stats(); st.Grants+st.Queued > taken {
			c.cfg.TestingKnobs.OnAccept(req.Lock, req.Txn)
		}
	}
	if c.cfg.Tier != nil {
		sh.out = c.cfg.Tier.Filter(sh, req, sh.out)
	}
	out.Sends = append(out.Sends, sh.out...)
}

// Tick does what is due at now: the tier's work, the move to the next epoch once a shard is
// half-way through the current one, the grant holds (grace end, controller lease), and every
// shard's lease expiry. The shell calls it periodically (lockserver: every SweepInterval) or at
// NextDeadline.
func (c *Core) Tick(now int64, out *Out) {
	if c.cfg.Tier != nil {
		c.cfg.Tier.Tick(now, c, out)
	}
	c.refillEpoch(now, out)
	c.applyHold(now, out)
	for _, sh := range c.shards {
		sh.mu.Lock()
		if now >= sh.core.NextDeadline() {
			sh.out = sh.core.Expire(now, sh.out[:0])
			if c.cfg.Tier != nil {
				sh.out = c.cfg.Tier.Filter(sh, nil, sh.out)
			}
			out.Sends = append(out.Sends, sh.out...)
		}
		sh.mu.Unlock()
	}
}

// NextDeadline returns a time at or before which Tick has work to do, or math.MaxInt64.
func (c *Core) NextDeadline() int64 {
	d := int64(math.MaxInt64)
	c.mu.Lock()
	if c.cfg.ControllerLease > 0 && !c.standby && c.applied != math.MaxInt64 {
		d = c.leaseUntil
	}
	c.mu.Unlock()
	for _, sh := range c.shards {
		sh.mu.Lock()
		d = min(d, sh.core.NextDeadline())
		sh.mu.Unlock()
	}
	return d
}

// Persisted acknowledges that epoch (an Out.Persist) is on stable storage: what waited for it
// runs, appending to out.
func (c *Core) Persisted(now int64, epoch uint64, out *Out) { c.persisted(now, epoch, true, out) }

// PersistFailed reports that epoch could not be persisted: what waited for it is refused.
func (c *Core) PersistFailed(now int64, epoch uint64, out *Out) { c.persisted(now, epoch, false, out) }

func (c *Core) persisted(now int64, epoch uint64, ok bool, out *Out) {
	c.mu.Lock()
	if ok {
		c.epoch = max(c.epoch, epoch)
	}
	if c.persisting <= epoch {
		c.persisting = 0
	}
	var run []persistWait
	kept := c.waits[:0]
	for _, w := range c.waits {
		if w.epoch <= epoch {
			run = append(run, w)
		} else {
			kept = append(kept, w)
		}
	}
	c.waits = kept
	c.mu.Unlock()
	for _, w := range run {
		w.run(now, ok && w.epoch <= c.Epoch(), out)
	}
}

// afterEpoch runs f once epoch e (at least) is persisted: at once if it is, else when the shell
// acknowledges it, asking for it in out if nobody has yet. c.mu is held.
func (c *Core) afterEpochLocked(now int64, e uint64, out *Out, f func(now int64, ok bool, out *Out)) (runNow bool) {
	if e > wire.MaxEpoch {
		return true // f runs with !ok: the caller checks
	}
	if e <= c.epoch {
		return true
	}
	c.waits = append(c.waits, persistWait{epoch: e, run: f})
	if e > c.persisting {
		c.persisting = e
		out.Persist = e
	}
	return false
}

// raiseAll raises every shard's token floor to t.
func (c *Core) raiseAll(t uint64) {
	for _, sh := range c.shards {
		sh.mu.Lock()
		sh.core.RaiseTokenFloor(t)
		sh.mu.Unlock()
	}
}

// refillEpoch moves the server to the next epoch once a shard has counted half-way through the
// current one, so that no shard's tokens can ever reach the next epoch's range unannounced.
func (c *Core) refillEpoch(now int64, out *Out) {
	c.mu.Lock()
	e, busy := c.epoch, c.persisting != 0
	c.mu.Unlock()
	if busy {
		return
	}
	limit := wire.EpochBase(e) + wire.EpochRefill
	var top uint64
	for _, sh := range c.shards {
		sh.mu.Lock()
		top = max(top, sh.core.LastToken())
		sh.mu.Unlock()
	}
	if top < limit {
		return
	}
	ne := max(e+1, wire.EpochOf(top)+1)
	c.mu.Lock()
	runNow := c.afterEpochLocked(now, ne, out, func(_ int64, ok bool, _ *Out) {
		if ok {
			c.raiseAll(wire.EpochBase(ne))
			c.log.Info("moved to a new token epoch", "epoch", ne)
		} else {
			c.log.Error("cannot move to a new token epoch: the state file was not written", "epoch", ne)
		}
	})
	c.mu.Unlock()
	if runNow && ne <= wire.MaxEpoch {
		c.raiseAll(wire.EpochBase(ne))
	}
}

// Drain prepares a graceful shutdown: every waiting and buffered request is rejected with status
// shutdown and every holder is told its lease will not be renewed (it keeps the lock until the
// lease ends). It returns the latest lease deadline of any holder (0: none held).
func (c *Core) Drain(out *Out) int64 {
	var until int64
	for _, sh := range c.shards {
		sh.mu.Lock()
		sh.out = sh.core.Drain(sh.out[:0])
		sh.out = sh.core.TellHolders(wire.StatusShutdown, sh.out)
		until = max(until, sh.core.LatestDeadline())
		out.Sends = append(out.Sends, sh.out...)
		sh.mu.Unlock()
	}
	return until
}

// GraceEnd returns when the current grace period ends (ns; 0: none).
func (c *Core) GraceEnd() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.graceEnd
}

// Stats sums the shards' core statistics.
func (c *Core) Stats() lockcore.Stats {
	var t lockcore.Stats
	for _, sh := range c.shards {
		sh.mu.Lock()
		st := sh.core.Stats()
		sh.mu.Unlock()
		t.Add(&st)
	}
	return t
}

// Malformed returns the number of dropped datagrams by reason (BadNames).
func (c *Core) Malformed() [BadReasons]uint64 {
	var r [BadReasons]uint64
	for i := range c.bad {
		r[i] = c.bad[i].Load()
	}
	return r
}

// Refused returns the number of refused control messages by reason (RefusedNames).
func (c *Core) Refused() [RefusedReasons]uint64 {
	var r [RefusedReasons]uint64
	for i := range c.ref {
		r[i] = c.ref[i].Load()
	}
	return r
}

// Inspect returns a copy of lock's state (tests, tools).
func (c *Core) Inspect(lock uint32) (lockcore.LockInfo, bool) {
	sh := c.ShardOf(lock)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return sh.core.Inspect(lock)
}
