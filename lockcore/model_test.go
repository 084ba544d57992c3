package lockcore

import (
	"cmp"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

var seedFlag = flag.Uint64("seed", 0, "seed for randomized tests (0: time-based)")

// model is a trivially correct lock manager: per lock one list of all requests, re-sorted and
// re-examined from scratch after every change. It defines what Core must do. It shares nothing
// with Core but the entry type and the Config defaults: its quotas, its idle-state memory and its
// q2 buffer are its own.
type model struct {
	cfg      Config
	locks    map[uint32]*mlock
	token    uint64
	tenants  map[uint16]*mtenant
	unpaused bool
	// ended lists every request that ended, in the order remembered; pending those of the
	// current call.
	ended, pending []mended
}

// mended is a request that ended: released or withdrawn (status ok), or dropped with a status.
type mended struct {
	lock   uint32
	txn    uint64
	token  uint64
	at     int64
	status wire.Status
}

// mtenant is the model's quota state of one tenant: outstanding requests (held, waiting or
// buffered in q2) and the acquires of the current one-second window.
type mtenant struct {
	outstanding int
	winStart    int64
	inWindow    int
}

type mreq struct {
	entry
	seq     int
	granted bool
	// waitUntil is a waiter's wait deadline: its arrival or latest retransmission plus the wait
	// lease (MaxInt64 without wait leases).
	waitUntil int64
}

type mlock struct {
	reqs      []*mreq
	buf       []*mreq
	idle      bool
	idleSince int64
}

func newModel(cfg Config) *model {
	if err := cfg.validate(); err != nil {
		panic(err)
	}
	return &model{cfg: cfg, locks: map[uint32]*mlock{}, tenants: map[uint16]*mtenant{}}
}

var mseq int

// lock returns lock id for a new request, or nil when MaxLocks other locks have requests.
func (m *model) lock(id uint32) *mlock {
	if l := m.locks[id]; l != nil && !l.idle {
		return l
	}
	active := 0
	for _, l := range m.locks {
		if !l.idle {
			active++
		}
	}
	if active >= m.cfg.MaxLocks {
		return nil
	}
	if m.locks[id] == nil {
		m.locks[id] = &mlock{}
	}
	m.locks[id].idle = false
	return m.locks[id]
}

// requests counts the requests held, waiting or buffered over all locks.
func (m *model) requests() int {
	n := 0
	for _, l := range m.locks {
		n += len(l.reqs) + len(l.buf)
	}
	return n
}

// gc marks an idle lock at now; an expire IdleRetention later forgets it.
func (m *model) gc(now int64, id uint32) {
	if l := m.locks[id]; l != nil && !l.idle && len(l.reqs) == 0 && len(l.buf) == 0 {
		l.idle, l.idleSince = true, now
	}
}

func (m *model) quota(id uint16) Quota {
	if q, ok := m.cfg.Quotas[id]; ok {
		return q
	}
	return m.cfg.DefaultQuota
}

func (m *model) tenant(id uint16) *mtenant {
	if m.tenants[id] == nil {
		m.tenants[id] = &mtenant{}
	}
	return m.tenants[id]
}

// admit applies the quota rules of docs/protocol.md to a new request of tenant id at now: at most
// MaxOutstanding requests held, waiting or buffered; at most MaxRate admitted acquires in a
// window that restarts at the first acquire one second or more after the window's start (or
// more than a second before it: a clock that went back). Zero bounds are unlimited. An admitted
// request is charged. Models of shards that share a limiter share their tenants.
func (m *model) admit(now int64, id uint16) bool {
	q, t := m.quota(id), m.tenant(id)
	if q.MaxOutstanding != 0 && t.outstanding >= q.MaxOutstanding {
		return false
	}
	if q.MaxRate != 0 {
		if now-t.winStart >= int64(time.Second) || t.winStart-now >= int64(time.Second) {
			t.winStart, t.inWindow = now, 0
		}
		if t.inWindow == q.MaxRate {
			return false
		}
		t.inWindow++
	}
	t.outstanding++
	return true
}

// leave gives back one outstanding request of tenant id.
func (m *model) leave(id uint16) {
	if t := m.tenants[id]; t != nil {
		t.outstanding--
	}
}

func (m *model) send(out *[]Effect, e Effect) { *out = append(*out, e) }

func (m *model) grantFX(lock uint32, r *mreq) Effect {
	f := wire.Fields{Op: wire.OpGrant, Mode: r.mode, Priority: r.prio, Tenant: r.tenant, Lock: lock,
		Txn: r.txn, Token: r.token, Timestamp: r.ts, LeaseMicros: r.lease}
	if r.fwd {
		f.Flags, f.Client = wire.FlagForwarded, r.to
	}
	return Effect{To: r.to, Msg: f}
}

func (m *model) rejectFX(lock uint32, r *mreq, s wire.Status) Effect {
	f := wire.Fields{Op: wire.OpReject, Mode: r.mode, Status: s, Priority: r.prio, Tenant: r.tenant,
		Lock: lock, Txn: r.txn, Token: r.token, Timestamp: r.ts}
	if r.fwd {
		f.Flags, f.Client = wire.FlagForwarded, r.to
	}
	return Effect{To: r.to, Msg: f}
}

func reqFX(r *Request, op wire.Op, flags wire.Flags, s wire.Status) Effect {
	to, fwd := replyTo(r)
	f := wire.Fields{Op: op, Mode: r.Mode, Flags: flags, Status: s, Priority: r.Priority, Tenant: r.Tenant,
		Lock: r.Lock, Txn: r.Txn, Token: r.Token, Timestamp: r.Timestamp}
	if fwd {
		f.Flags |= wire.FlagForwarded
		f.Client = to
	}
	return Effect{To: to, Msg: f}
}

// settle grants, in (priority, arrival) order, every waiter whose predecessors are all granted and
// that is compatible with the holders.
func (m *model) settle(now int64, id uint32, l *mlock, out *[]Effect) {
	if now < m.cfg.GrantAfter {
		return
	}
	var waiting []*mreq
	holdX, holders := false, 0
	for _, r := range l.reqs {
		if r.granted {
			holders++
			holdX = holdX || r.mode == wire.Exclusive
		} else {
			waiting = append(waiting, r)
		}
	}
	slices.SortStableFunc(waiting, func(a, b *mreq) int {
		return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.seq, b.seq))
	})
	for _, r := range waiting {
		ok := holders == 0 || (!holdX && r.mode == wire.Shared && holders < m.cfg.MaxHolders)
		if !ok {
			return
		}
		m.token++
		r.granted, r.token = true, m.token
		r.deadline = now + int64(r.lease)*int64(time.Microsecond)
		holders++
		holdX = r.mode == wire.Exclusive
		m.send(out, m.grantFX(id, r))
	}
}

func (m *model) find(l *mlock, txn uint64) int {
	return slices.IndexFunc(l.reqs, func(r *mreq) bool { return r.txn == txn })
}

// end notes a request that ended at now; flush remembers the call's ends in (lock, txn) order.
func (m *model) end(now int64, lock uint32, txn, token uint64, s wire.Status) {
	m.pending = append(m.pending, mended{lock: lock, txn: txn, token: token, at: now, status: s})
}

func (m *model) flush() {
	slices.SortFunc(m.pending, func(a, b mended) int {
		return cmp.Or(cmp.Compare(a.lock, b.lock), cmp.Compare(a.txn, b.txn))
	})
	if m.cfg.ReplayWindow > 0 {
		m.ended = append(m.ended, m.pending...)
	}
	m.pending = m.pending[:0]
}

// endedOf returns how (lock, txn) ended if that is remembered at now: of the last
// ReplayCapacity requests that ended, the latest of it, if it ended less than ReplayWindow ago.
func (m *model) endedOf(now int64, lock uint32, txn uint64) *mended {
	for i := len(m.ended) - 1; i >= 0 && i >= len(m.ended)-m.cfg.ReplayCapacity; i-- {
		if e := &m.ended[i]; e.lock == lock && e.txn == txn {
			if now-e.at < int64(m.cfg.ReplayWindow) {
				return e
			}
			return nil
		}
	}
	return nil
}

func (m *model) step(now int64, r *Request) []Effect {
	out := m.step1(now, r)
	m.flush()
	return out
}

func (m *model) step1(now int64, r *Request) []Effect {
	var out []Effect
	m.unpause(now, &out)
	to, fwd := replyTo(r)
	switch r.Op {
	case wire.OpAcquire:
		if r.Txn == 0 || int(r.Priority) >= m.cfg.Priorities {
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusBadRequest))
			return out
		}
		l := m.lock(r.Lock)
		if l == nil {
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusOverloaded))
			return out
		}
		if i := m.find(l, r.Txn); i >= 0 {
			if q := l.reqs[i]; q.granted {
				m.send(&out, m.grantFX(r.Lock, q))
			} else if m.cfg.WaitLease > 0 {
				q.waitUntil = now + int64(m.cfg.WaitLease)
			}
			return out
		}
		if e := m.endedOf(now, r.Lock, r.Txn); e != nil {
			m.gc(now, r.Lock)
			if e.status != wire.StatusOK {
				m.send(&out, reqFX(r, wire.OpReject, 0, e.status))
			}
			return out
		}
		if m.requests() >= m.cfg.MaxRequests {
			m.gc(now, r.Lock)
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusOverloaded))
			return out
		}
		if !m.admit(now, r.Tenant) {
			m.gc(now, r.Lock)
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusQuota))
			return out
		}
		mseq++
		nr := &mreq{seq: mseq, entry: entry{txn: r.Txn, ts: r.Timestamp, to: to, tenant: r.Tenant,
			prio: r.Priority, mode: r.Mode, fwd: fwd}}
		nr.lease = m.lease(r.LeaseMicros)
		nr.waitUntil = math.MaxInt64
		if m.cfg.WaitLease > 0 {
			nr.waitUntil = now + int64(m.cfg.WaitLease)
		}
		l.reqs = append(l.reqs, nr)
		m.settle(now, r.Lock, l, &out)
		if !nr.granted {
			waiting := 0
			for _, q := range l.reqs {
				if !q.granted {
					waiting++
				}
			}
			try := r.Flags&wire.FlagTry != 0
			if try || waiting > m.cfg.MaxWaiters {
				l.reqs = l.reqs[:len(l.reqs)-1]
				m.leave(r.Tenant)
				m.gc(now, r.Lock)
				s := wire.StatusQueueFull
				if try {
					s = wire.StatusWouldBlock
				}
				m.send(&out, reqFX(r, wire.OpReject, 0, s))
			}
		}
	case wire.OpRelease:
		l := m.locks[r.Lock]
		i := -1
		if l != nil {
			i = m.find(l, r.Txn)
		}
		if i < 0 || (l.reqs[i].granted && l.reqs[i].token != r.Token) || (!l.reqs[i].granted && r.Token != 0) {
			m.gc(now, r.Lock)
			e := m.endedOf(now, r.Lock, r.Txn)
			switch {
			case i >= 0 || e == nil || e.token != r.Token:
				m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusNotHolder))
			case e.status != wire.StatusOK:
				m.send(&out, reqFX(r, wire.OpReject, 0, e.status))
			default:
				m.send(&out, reqFX(r, wire.OpRelease, wire.FlagReply, 0))
			}
			return out
		}
		q := l.reqs[i]
		l.reqs = slices.Delete(l.reqs, i, i+1)
		m.end(now, r.Lock, r.Txn, r.Token, wire.StatusOK)
		m.leave(q.tenant)
		m.send(&out, reqFX(r, wire.OpRelease, wire.FlagReply, 0))
		m.settle(now, r.Lock, l, &out)
		m.gc(now, r.Lock)
	case wire.OpLeaseProbe:
		l := m.locks[r.Lock]
		i := -1
		if l != nil {
			i = m.find(l, r.Txn)
		}
		if i < 0 || !l.reqs[i].granted || l.reqs[i].token != r.Token {
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusNotHolder))
			return out
		}
		q := l.reqs[i]
		q.deadline = now + int64(q.lease)*int64(time.Microsecond)
		if r.Timestamp != 0 {
			q.ts = r.Timestamp
		}
		e := reqFX(r, wire.OpLeaseProbe, wire.FlagReply, 0)
		e.Msg.LeaseMicros = q.lease
		m.send(&out, e)
	case wire.OpOverflow:
		// An overflow that is not buffered is answered to the switch by a push-back without a
		// request, after any reject to the client.
		notBuffered := Effect{To: r.From, Msg: wire.Fields{Op: wire.OpPushBack, Lock: r.Lock}}
		if r.Txn == 0 || int(r.Priority) >= m.cfg.Priorities {
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusBadRequest))
			m.send(&out, notBuffered)
			return out
		}
		l := m.lock(r.Lock)
		if l == nil {
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusOverloaded))
			m.send(&out, notBuffered)
			return out
		}
		if slices.IndexFunc(l.buf, func(q *mreq) bool { return q.txn == r.Txn }) >= 0 {
			m.send(&out, notBuffered)
			return out
		}
		if len(l.buf) >= m.cfg.MaxBuffered {
			m.gc(now, r.Lock)
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusQueueFull))
			m.send(&out, notBuffered)
			return out
		}
		if m.requests() >= m.cfg.MaxRequests {
			m.gc(now, r.Lock)
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusOverloaded))
			m.send(&out, notBuffered)
			return out
		}
		if !m.admit(now, r.Tenant) {
			m.gc(now, r.Lock)
			m.send(&out, reqFX(r, wire.OpReject, 0, wire.StatusQuota))
			m.send(&out, notBuffered)
			return out
		}
		mseq++
		l.buf = append(l.buf, &mreq{seq: mseq, entry: entry{txn: r.Txn, ts: r.Timestamp, to: to,
			tenant: r.Tenant, prio: r.Priority, mode: r.Mode, fwd: fwd, lease: m.lease(r.LeaseMicros)}})
		slices.SortStableFunc(l.buf, func(a, b *mreq) int {
			return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.seq, b.seq))
		})
	case wire.OpAdmin:
		m.admin(now, r, &out)
	case wire.OpQueueEmpty:
		l := m.locks[r.Lock]
		if l == nil {
			return out
		}
		// Level 0's free slots in Slots, level 1's in LeaseMicros; level 1 only once every
		// buffered level-0 request goes back.
		level0 := 0
		for level0 < len(l.buf) && l.buf[level0].prio == 0 {
			level0++
		}
		n := min(int(r.Slots), level0)
		if n == level0 {
			n += min(int(r.LeaseMicros), len(l.buf)-level0)
		}
		for _, q := range l.buf[:n] {
			m.leave(q.tenant)
			m.send(&out, Effect{To: r.From, Msg: wire.Fields{Op: wire.OpPushBack, Mode: q.mode,
				Flags: wire.FlagForwarded, Priority: q.prio, Tenant: q.tenant, Lock: r.Lock, Txn: q.txn,
				Timestamp: q.ts, LeaseMicros: q.lease, Client: q.to}})
		}
		l.buf = l.buf[n:]
		m.gc(now, r.Lock)
	}
	return out
}

// unpause examines every lock at the first event at or after the grace period.
func (m *model) unpause(now int64, out *[]Effect) {
	if m.cfg.GrantAfter > 0 && now >= m.cfg.GrantAfter && !m.unpaused {
		m.unpaused = true
		for id, l := range m.locks {
			m.settle(now, id, l, out)
		}
	}
}

// lease is the lease in µs of a request that asked for req µs (0: the default), capped.
func (m *model) lease(req uint32) uint32 {
	if req == 0 {
		return uint32(m.cfg.DefaultLease / time.Microsecond)
	}
	return uint32(min(time.Duration(req)*time.Microsecond, m.cfg.MaxLease) / time.Microsecond)
}

// admin applies an admin request: ping, sweep (an expire), reset (every request of the lock
// dropped: holders silently, waiters and buffered ones told not-owner), token floor; anything
// else is a bad request. The answer goes to the sender.
func (m *model) admin(now int64, r *Request, out *[]Effect) {
	reply := Effect{To: r.From, Msg: wire.Fields{Op: wire.OpAdmin, Status: r.Status, Flags: wire.FlagReply,
		Lock: r.Lock, Txn: r.Txn}}
	switch r.Status {
	case wire.AdminPing:
	case wire.AdminSweep:
		*out = append(*out, m.expire(now)...)
	case wire.AdminResetLock:
		if l := m.locks[r.Lock]; l != nil {
			m.dropQueued(now, r.Lock, l, wire.StatusNotOwner, out, true)
			m.gc(now, r.Lock)
		}
	case wire.AdminTokenFloor:
		m.token = max(m.token, r.Token)
		reply.Msg.Token, reply.Msg.Slots = m.token, r.Slots
	default:
		m.send(out, reqFX(r, wire.OpReject, 0, wire.StatusBadRequest))
		return
	}
	m.send(out, reply)
}

// dropQueued rejects every waiting and buffered request of l with s (waiters in queue order,
// then buffered ones), and with holders also forgets the holders; each gives its quota back.
// The holders and waiters dropped are remembered as ended with s.
func (m *model) dropQueued(now int64, id uint32, l *mlock, s wire.Status, out *[]Effect, holders bool) {
	var waiting, kept []*mreq
	for _, q := range l.reqs {
		switch {
		case !q.granted:
			waiting = append(waiting, q)
			m.end(now, id, q.txn, 0, s)
		case holders:
			m.leave(q.tenant)
			m.end(now, id, q.txn, q.token, s)
		default:
			kept = append(kept, q)
		}
	}
	slices.SortStableFunc(waiting, func(a, b *mreq) int {
		return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.seq, b.seq))
	})
	for _, q := range append(waiting, l.buf...) {
		m.leave(q.tenant)
		m.send(out, m.rejectFX(id, q, s))
	}
	l.reqs, l.buf = kept, nil
}

// drain is Core.Drain: waiting and buffered requests are rejected with status shutdown.
func (m *model) drain(now int64) []Effect {
	var out []Effect
	for id, l := range m.locks {
		m.dropQueued(now, id, l, wire.StatusShutdown, &out, false)
		m.gc(now, id)
	}
	m.flush()
	return out
}

func (m *model) expire(now int64) []Effect {
	var out []Effect
	for id, l := range m.locks {
		if l.idle && now-l.idleSince >= int64(m.cfg.IdleRetention) {
			delete(m.locks, id)
		}
	}
	// Waiters whose wait lease ran out leave first (before the grace period ends or leases run
	// out: they are not granted).
	changed := map[uint32]bool{}
	for id, l := range m.locks {
		l.reqs = slices.DeleteFunc(l.reqs, func(q *mreq) bool {
			if q.granted || q.waitUntil > now {
				return false
			}
			m.end(now, id, q.txn, 0, wire.StatusWaitExpired)
			m.send(&out, m.rejectFX(id, q, wire.StatusWaitExpired))
			m.leave(q.tenant)
			changed[id] = true
			return true
		})
	}
	m.unpause(now, &out)
	for id, l := range m.locks {
		changed := changed[id]
		for i := 0; i < len(l.reqs); {
			q := l.reqs[i]
			if q.granted && q.deadline <= now {
				m.end(now, id, q.txn, q.token, wire.StatusLeaseExpired)
				m.send(&out, m.rejectFX(id, q, wire.StatusLeaseExpired))
				m.leave(q.tenant)
				l.reqs = slices.Delete(l.reqs, i, i+1)
				changed = true
				continue
			}
			i++
		}
		if changed {
			m.settle(now, id, l, &out)
		}
		m.gc(now, id)
	}
	m.flush()
	return out
}

// canon sorts effects and clears tokens: the order of effects across locks within one call and the
// token values handed out across locks in one Expire are not part of the contract.
func canon(es []Effect) []string {
	var s []string
	for _, e := range es {
		e.Msg.Token = 0
		s = append(s, e.To.String()+" "+e.Msg.String())
	}
	slices.Sort(s)
	return s
}

func TestCoreAgainstModel(t *testing.T) {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with go test ./lockcore -run CoreAgainstModel -seed %d)", seed, seed)
	runs := 300
	if testing.Short() {
		runs = 50
	}
	if err := runAgainstModel(seed, runs, 400, 0); err != nil {
		t.Fatal(err)
	}
}

// TestModelCatchesMutants is the negative control of TestCoreAgainstModel: deliberately broken
// cores (q2 not charged to quotas, an admin reset that keeps the holders, a Drain that keeps
// q2, each of the bounds MaxLocks, MaxRequests and MaxHolders not enforced, a replay memory
// consulted only for acquires flagged retry, waiters that never wait-expire or whose
// retransmissions do not renew their wait lease, Cores given one shared limiter that keep
// quotas of their own) must each be caught.
func TestModelCatchesMutants(t *testing.T) {
	for _, mu := range []mutation{mutantQ2Uncharged, mutantResetKeepsHolders, mutantDrainKeepsBuffered,
		mutantLocksUnbounded, mutantRequestsUnbounded, mutantHoldersUnbounded, mutantReplayRetryOnly,
		mutantNoWaitExpiry, mutantWaitNotRefreshed, mutantLimiterPerCore} {
		seed := *seedFlag
		if seed == 0 {
			seed = uint64(time.Now().UnixNano())
		}
		if err := runAgainstModel(seed, 300, 400, mu); err == nil {
			t.Errorf("mutant %d not caught (seed %d)", mu, seed)
		} else {
			t.Logf("mutant %d caught: %.200s", mu, err)
		}
	}
}

// runAgainstModel runs randomized request sequences against a Core (with mutation mu) and the
// model and returns the first disagreement.
func runAgainstModel(seed uint64, runs, steps int, mu mutation) error {
	rng := rand.New(rand.NewPCG(seed, 0x6e65746c6f636b))
	for run := 0; run < runs; run++ {
		cfg := Config{DefaultLease: 40 * time.Millisecond, MaxLease: 100 * time.Millisecond, Priorities: 3}
		if rng.IntN(3) == 0 {
			cfg.MaxWaiters = 1 + rng.IntN(3)
		}
		if rng.IntN(3) == 0 {
			cfg.MaxLocks = 1 + rng.IntN(5) // of the 6 locks requests name
		}
		if rng.IntN(3) == 0 {
			cfg.MaxRequests = 2 + rng.IntN(10)
		}
		if rng.IntN(3) == 0 {
			cfg.MaxHolders = 1 + rng.IntN(3)
		}
		if rng.IntN(3) == 0 {
			cfg.Quotas = map[uint16]Quota{1: {MaxOutstanding: 1 + rng.IntN(4)}, 2: {MaxRate: 1 + rng.IntN(6)}}
		}
		if rng.IntN(4) == 0 {
			cfg.DefaultQuota = Quota{MaxOutstanding: 2 + rng.IntN(6), MaxRate: rng.IntN(2) * (5 + rng.IntN(10))}
		}
		if rng.IntN(3) == 0 {
			cfg.MaxBuffered = 1 + rng.IntN(3)
		}
		cfg.IdleRetention = time.Duration(1+rng.IntN(60)) * time.Millisecond
		switch rng.IntN(3) {
		case 0:
			cfg.WaitLease = -1
		case 1:
			cfg.WaitLease = time.Duration(5+rng.IntN(80)) * time.Millisecond
		}
		switch rng.IntN(4) {
		case 0:
			cfg.ReplayWindow = -1 // nothing remembered
		case 1:
			cfg.ReplayWindow = time.Duration(1+rng.IntN(80)) * time.Millisecond
		}
		if rng.IntN(2) == 0 {
			cfg.ReplayCapacity = 1 + rng.IntN(6)
		}
		if rng.IntN(4) == 0 {
			cfg.GrantAfter = int64(time.Duration(rng.IntN(50)) * time.Millisecond)
		}
		cfg.TestingKnobs.mutant = mu
		cfg.TestingKnobs.indexMin = []int{0, 1, 2, 3}[rng.IntN(4)] // members.go's index, at 2 members and up
		shards, err := newShards(rng, cfg)
		if err != nil {
			return err
		}
		var now int64
		for step := 0; step < steps; step++ {
			k, sh := rng.IntN(100), shards[rng.IntN(len(shards))]
			for i, s := range shards {
				var got, want []Effect
				var what string
				switch {
				case k < 12:
					if i == 0 {
						now += int64(time.Duration(rng.IntN(30)) * time.Millisecond)
					}
					what = fmt.Sprintf("advance to %v", time.Duration(now))
					got, want = s.core.Expire(now, nil), s.m.expire(now)
				case k < 13:
					what = "drain"
					got, want = s.core.Drain(nil), s.m.drain(now)
				case s != sh:
					continue
				default:
					r := randomRequest(rng, s.m, now)
					what = fmt.Sprintf("%s from %s", r.Fields.String(), r.From)
					got, want = s.core.Step(now, r, nil), s.m.step(now, r)
				}
				if len(shards) > 1 {
					what = fmt.Sprintf("shard %d of %d: %s", i, len(shards), what)
				}
				if err := s.check(got, want); err != nil {
					return fmt.Errorf("seed %d run %d step %d (%s): %w", seed, run, step, what, err)
				}
			}
		}
	}
	return nil
}

// shard is a Core and its model, checked against each other.
type shard struct {
	core   *Core
	m      *model
	tokens map[uint32]uint64 // the last token granted per lock, as seen in effects
}

// newShards returns one shard of cfg, or, in some runs with quotas, two whose Cores share one
// SharedLimiter and whose models share their tenants' quota state.
func newShards(rng *rand.Rand, cfg Config) ([]*shard, error) {
	n := 1
	if (len(cfg.Quotas) > 0 || cfg.DefaultQuota != (Quota{})) && rng.IntN(2) == 0 {
		n = 2
	}
	ccfg := cfg
	if n > 1 {
		lim, err := NewSharedLimiter(cfg.DefaultQuota, cfg.Quotas)
		if err != nil {
			return nil, err
		}
		ccfg.Quotas, ccfg.DefaultQuota, ccfg.Limiter = nil, Quota{}, lim
	}
	var shards []*shard
	for i := 0; i < n; i++ {
		c, err := New(ccfg)
		if err != nil {
			return nil, err
		}
		s := &shard{core: c, m: newModel(cfg), tokens: map[uint32]uint64{}}
		if i > 0 {
			s.m.tenants = shards[0].m.tenants
		}
		shards = append(shards, s)
	}
	return shards, nil
}

// check compares the effects of one step of s's Core (got) with its model's (want) and the
// states after it, and checks the growth of tokens.
func (s *shard) check(got, want []Effect) error {
	if g, w := canon(got), canon(want); !slices.Equal(g, w) {
		return fmt.Errorf("\ncore:  %q\nmodel: %q", g, w)
	}
	for _, e := range got {
		if e.Msg.Op != wire.OpGrant {
			continue
		}
		// The model adopts the core's token values (their order across locks within one
		// Expire is not part of the contract); their growth is checked here.
		if l := s.m.locks[e.Msg.Lock]; l != nil {
			if i := s.m.find(l, e.Msg.Txn); i >= 0 {
				l.reqs[i].token = e.Msg.Token
			}
		}
		last := s.tokens[e.Msg.Lock]
		if e.Msg.Token <= last && !(e.Msg.Token == last && e.Msg.Token != 0) {
			// A re-sent grant repeats its token; a new one must exceed every earlier one.
			if !isHolderToken(s.core, e.Msg.Lock, e.Msg.Txn, e.Msg.Token) {
				return fmt.Errorf("token %d of lock %d not above %d", e.Msg.Token, e.Msg.Lock, last)
			}
		}
		s.tokens[e.Msg.Lock] = max(last, e.Msg.Token)
	}
	return checkInvariants(s.core, s.m)
}

func isHolderToken(c *Core, lock uint32, txn, token uint64) bool {
	info, _ := c.Inspect(lock)
	for _, h := range info.Holders {
		if h.Txn == txn && h.Token == token {
			return true
		}
	}
	return false
}

func randomRequest(rng *rand.Rand, m *model, now int64) *Request {
	r := &Request{}
	r.Lock = uint32(1 + rng.IntN(3))
	r.Txn = uint64(rng.IntN(10)) // 0 is a bad request
	r.Mode = wire.Mode(rng.IntN(2))
	r.Priority = uint8(rng.IntN(4)) // 3 is out of range
	r.Tenant = uint16(rng.IntN(3))
	r.Timestamp = uint64(now)
	r.From = clientAddr(int(r.Txn%4) + 1)
	if rng.IntN(5) == 0 {
		r.Flags |= wire.FlagForwarded
		r.Client, r.From = r.From, switchAddr
	}
	switch k := rng.IntN(21); {
	case k < 9:
		r.Op = wire.OpAcquire
		if rng.IntN(6) == 0 {
			r.Flags |= wire.FlagTry
		}
		if rng.IntN(6) == 0 {
			r.Flags |= wire.FlagRetry
		}
		if rng.IntN(3) == 0 {
			r.LeaseMicros = uint32(rng.IntN(150_000))
		}
	case k < 16:
		r.Op = wire.OpRelease
		if l := m.locks[r.Lock]; l != nil {
			if i := m.find(l, r.Txn); i >= 0 {
				r.Token = l.reqs[i].token
			}
		}
		if rng.IntN(8) == 0 {
			r.Token += uint64(rng.IntN(3))
		}
	case k < 17:
		r.Op = wire.OpLeaseProbe
		if l := m.locks[r.Lock]; l != nil {
			if i := m.find(l, r.Txn); i >= 0 {
				r.Token = l.reqs[i].token
			}
		}
	case k < 19:
		r.Op = wire.OpOverflow
		r.Flags |= wire.FlagForwarded
		r.Client, r.From = clientAddr(int(r.Txn%4)+1), switchAddr
		r.Lock += 10 // switch-resident locks are disjoint from server-owned ones
		r.Priority %= 3
		if rng.IntN(3) == 0 {
			r.LeaseMicros = uint32(rng.IntN(150_000))
		}
	case k < 20 && rng.IntN(2) == 0:
		r.Op, r.From, r.Flags, r.Mode, r.Priority, r.Tenant = wire.OpAdmin, switchAddr, 0, 0, 0, 0
		r.Status = []wire.Status{wire.AdminPing, wire.AdminSweep, wire.AdminResetLock, wire.AdminResetLock,
			wire.AdminTokenFloor, 99}[rng.IntN(6)]
		if rng.IntN(2) == 0 {
			r.Lock += 10
		}
		if r.Status == wire.AdminTokenFloor {
			r.Token = uint64(rng.IntN(1000))
		}
	default:
		r.Op = wire.OpQueueEmpty
		r.From, r.Flags = switchAddr, 0
		r.Lock += 10
		r.Slots = uint16(rng.IntN(4))
		r.LeaseMicros = uint32(rng.IntN(4))
	}
	return r
}

// checkInvariants compares the core's lock states with the model's and checks mutual exclusion.
func checkInvariants(c *Core, m *model) error {
	ids := c.Locks()
	var mids []uint32
	for id, l := range m.locks {
		if !l.idle {
			mids = append(mids, id)
		}
	}
	slices.Sort(mids)
	if !slices.Equal(ids, mids) {
		return fmt.Errorf("core locks %v, model locks %v", ids, mids)
	}
	st := c.Stats()
	holders, waiters, buffered := 0, 0, 0
	for _, id := range ids {
		info, _ := c.Inspect(id)
		l := m.locks[id]
		x, s := 0, 0
		for _, h := range info.Holders {
			if h.Mode == wire.Exclusive {
				x++
			} else {
				s++
			}
		}
		if x > 1 || (x == 1 && s > 0) {
			return fmt.Errorf("lock %d has %d exclusive and %d shared holders", id, x, s)
		}
		var mh, mw []uint64
		var wait []*mreq
		for _, q := range l.reqs {
			if q.granted {
				mh = append(mh, q.txn)
			} else {
				wait = append(wait, q)
			}
		}
		slices.SortStableFunc(wait, func(a, b *mreq) int {
			return cmp.Or(cmp.Compare(a.prio, b.prio), cmp.Compare(a.seq, b.seq))
		})
		for _, q := range wait {
			mw = append(mw, q.txn)
		}
		var ch, cw []uint64
		for _, h := range info.Holders {
			ch = append(ch, h.Txn)
		}
		for _, w := range info.Waiters {
			cw = append(cw, w.Txn)
		}
		slices.Sort(ch)
		slices.Sort(mh)
		if !slices.Equal(ch, mh) || !slices.Equal(cw, mw) {
			return fmt.Errorf("lock %d: core holders %v waiters %v; model holders %v waiters %v",
				id, ch, cw, mh, mw)
		}
		if len(info.Buffered) != len(l.buf) {
			return fmt.Errorf("lock %d: core buffers %d, model %d", id, len(info.Buffered), len(l.buf))
		}
		holders += len(ch)
		waiters += len(cw)
		buffered += len(info.Buffered)
	}
	if st.Holders != holders || st.Waiters != waiters || st.Buffered != buffered || st.Locks != len(ids) {
		return fmt.Errorf("gauges %+v disagree with state (holders %d waiters %d buffered %d locks %d)",
			st, holders, waiters, buffered, len(ids))
	}
	return nil
}

var _ = netip.AddrPort{}
