package lockcore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// TenantLimiter enforces tenant quotas for one or more Cores: a Core asks it to admit every new
// request (an acquire it would grant or queue, an overflow it would buffer in q2) and gives the
// request back when it ends (released, withdrawn, expired, dropped, or pushed back to the
// switch). A Core uses Config.Limiter if set; else, if Config.Quotas or Config.DefaultQuota is
// set, a limiter of its own ([NewTenantLimiter]). A limiter shared by several Cores (the lock
// server's shards) must be safe for concurrent use; NewSharedLimiter's is.
type TenantLimiter interface {
	// Admit charges one new request of tenant at now (ns, the caller's monotonic clock) and
	// returns true, or returns false and charges nothing when the tenant is at its quota.
	Admit(now int64, tenant uint16) bool
	// Leave gives back one request of tenant that Admit charged.
	Leave(tenant uint16)
}

// quotaState is the quota accounting of one tenant: its rules, in one place for every limiter.
// A request is admitted when the tenant has fewer than MaxOutstanding outstanding (admitted and
// not given back) and fewer than MaxRate admitted in the current rate window; zero bounds are
// unlimited. The rate window starts at an admission and lasts one second: the first request a
// second or more after its start starts the next (NetLock's control plane resets its per-tenant
// counters every second). A now more than a second before the window's start (a clock that was
// reset) starts a new window too; one less than a second before it counts in the current window
// (the Cores sharing a limiter read their clocks at slightly different instants, and a request
// that read its clock first may be admitted second).
type quotaState struct {
	q           Quota
	outstanding int
	window      int64
	count       int
}

func (t *quotaState) admit(now int64) bool {
	if t.q.MaxOutstanding > 0 && t.outstanding >= t.q.MaxOutstanding {
		return false
	}
	if t.q.MaxRate > 0 {
		if now-t.window >= int64(time.Second) || t.window-now >= int64(time.Second) {
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

func (t *quotaState) leave() {
	if t.outstanding <= 0 {
		panic("lockcore: a tenant gave back a request it was not charged for")
	}
	t.outstanding--
}

// quotas is the configuration of a limiter: per-tenant quotas and the default for the others.
type quotas struct {
	def Quota
	per map[uint16]Quota
}

func newQuotas(def Quota, per map[uint16]Quota) (quotas, error) {
	if def.MaxOutstanding < 0 || def.MaxRate < 0 {
		return quotas{}, errors.New("default quota: negative bound")
	}
	q := quotas{def: def, per: make(map[uint16]Quota, len(per))}
	for t, x := range per {
		if x.MaxOutstanding < 0 || x.MaxRate < 0 {
			return quotas{}, fmt.Errorf("quota of tenant %d: negative bound", t)
		}
		q.per[t] = x
	}
	return q, nil
}

func (q *quotas) of(tenant uint16) Quota {
	if x, ok := q.per[tenant]; ok {
		return x
	}
	return q.def
}

// localLimiter is the limiter of one Core: not safe for concurrent use.
type localLimiter struct {
	quotas
	tenants map[uint16]*quotaState
}

// NewTenantLimiter returns a limiter for one Core, not safe for concurrent use: per-tenant
// quotas, def for the tenants without one. It is what a Core uses when Config.Limiter is nil and
// Config.Quotas or Config.DefaultQuota is set.
func NewTenantLimiter(def Quota, per map[uint16]Quota) (TenantLimiter, error) {
	q, err := newQuotas(def, per)
	if err != nil {
		return nil, fmt.Errorf("lockcore: %w", err)
	}
	return &localLimiter{quotas: q, tenants: make(map[uint16]*quotaState)}, nil
}

func (l *localLimiter) Admit(now int64, tenant uint16) bool {
	t := l.tenants[tenant]
	if t == nil {
		t = &quotaState{q: l.of(tenant)}
		l.tenants[tenant] = t
	}
	return t.admit(now)
}

func (l *localLimiter) Leave(tenant uint16) { l.tenants[tenant].leave() }

// SharedLimiter is a TenantLimiter safe for concurrent use, for Cores that enforce one quota
// together: the lock server gives one to all its shards, so that a tenant's quota bounds its
// requests at the server (with per-shard limiters, a quota of 100 was 400 with four shards).
// Its rules are quotaState's, as a Core's own limiter's. Each tenant's state has its own mutex,
// found without locking (an array of the 65536 tenant ids: 512 KiB of pointers), so shards
// contend only on requests of one tenant. The requests of a Core that is dropped while it has
// some stay charged: a limiter lives as long as the Cores that share it.
type SharedLimiter struct {
	quotas
	tenants [1 << 16]atomic.Pointer[sharedTenant]
}

type sharedTenant struct {
	mu sync.Mutex
	quotaState
}

// NewSharedLimiter returns a limiter safe for concurrent use: per-tenant quotas, def for the
// tenants without one.
func NewSharedLimiter(def Quota, per map[uint16]Quota) (*SharedLimiter, error) {
	q, err := newQuotas(def, per)
	if err != nil {
		return nil, fmt.Errorf("lockcore: %w", err)
	}
	return &SharedLimiter{quotas: q}, nil
}

func (s *SharedLimiter) tenant(id uint16) *sharedTenant {
	p := &s.tenants[id]
	if t := p.Load(); t != nil {
		return t
	}
	p.CompareAndSwap(nil, &sharedTenant{quotaState: quotaState{q: s.of(id)}})
	return p.Load()
}

// Admit implements TenantLimiter.
func (s *SharedLimiter) Admit(now int64, tenant uint16) bool {
	t := s.tenant(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.admit(now)
}

// Leave implements TenantLimiter.
func (s *SharedLimiter) Leave(tenant uint16) {
	t := s.tenant(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.leave()
}

// Outstanding returns the requests of tenant admitted and not given back.
func (s *SharedLimiter) Outstanding(tenant uint16) int {
	t := s.tenant(tenant)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.outstanding
}

var (
	_ TenantLimiter = (*localLimiter)(nil)
	_ TenantLimiter = (*SharedLimiter)(nil)
)
