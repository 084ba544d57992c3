package dlm

import (
	"errors"
	"fmt"
	"math/rand"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Mode is a lock mode.
type Mode uint8

// Lock modes.
const (
	Shared Mode = iota + 1
	Exclusive
)

func (m Mode) String() string {
	switch m {
	case Shared:
		return "S"
	case Exclusive:
		return "X"
	}
	return fmt.Sprintf("Mode(%d)", uint8(m))
}

// ErrAbort is wrapped by every error that means "release what the transaction holds, back off
// and run it again"; the other errors are failures.
var ErrAbort = errors.New("dlm: abort")

// Abort reasons.
var (
	// ErrConflict: DrTM found the lock write-locked or read-leased (it never waits).
	ErrConflict = fmt.Errorf("%w: lock taken", ErrAbort)
	// ErrReset: a DSLR waiter reset a lock it suspected dead or deadlocked, or was overtaken by
	// such a reset.
	ErrReset = fmt.Errorf("%w: lock reset", ErrAbort)
	// ErrLeaseExpired: a DrTM shared lease ran out before the transaction committed.
	ErrLeaseExpired = fmt.Errorf("%w: read lease expired", ErrAbort)
)

// ErrResetStuck is returned (not an abort) when a DSLR counter reset cannot happen because the
// counters never return to the resetter's state.
var ErrResetStuck = errors.New("dlm: dslr counter reset stuck")

// Hold is a granted lock: the word, the mode and what the algorithm needs to release it.
type Hold struct {
	Word verbs.Ptr
	Mode Mode
	// LeaseEnd is a DrTM shared lock's lease end (endpoint clock, ns); 0 otherwise.
	LeaseEnd int64
	// reset, when set, is the DSLR word a resetter compare-and-swaps to 0 after its release.
	reset    uint64
	resetter bool
}

// Client is one thread's handle on a lock algorithm. It is used by one thread at a time.
type Client interface {
	// Acquire takes the lock word w in mode m; it blocks while the algorithm waits. An error
	// wrapping ErrAbort asks the caller to abort its transaction (release its holds, back off,
	// retry); on such an error nothing is held on w.
	Acquire(w verbs.Ptr, m Mode) (Hold, error)
	// Validate checks, before the transaction commits, that h still protects it (a DrTM lease
	// that has not run out); ErrLeaseExpired otherwise.
	Validate(h Hold) error
	// Release gives h up.
	Release(h Hold) error
	// Stats is the client's protocol accounting.
	Stats() *Stats
}

// Algorithm makes clients.
type Algorithm interface {
	Name() string
	// NewClient returns a handle for the thread using ep; id (unique per thread, non-zero) is its
	// owner id and r its private random source (backoffs).
	NewClient(ep verbs.Endpoint, id uint64, r *rand.Rand) (Client, error)
}

// Stats counts one client's protocol events (beyond the verbs, which the endpoint counts).
type Stats struct {
	Acquired, Released uint64
	// Polls are DSLR's RDMA READs while waiting; Retries are CAS retries (DrTM's expired leases)
	// and DSLR's undone tickets at COUNT_MAX.
	Polls, Retries uint64
	// Conflicts, Resets (DSLR waiters that reset a lock), Overtaken (DSLR waiters a reset passed),
	// Expired (DrTM leases that ran out), Joins (DrTM readers that shared a lease).
	Conflicts, Resets, Overtaken, Expired, Joins uint64
	// CounterResets are DSLR's counter resets at COUNT_MAX; StaleReleases are DSLR releases undone
	// because a reset had already counted them.
	CounterResets, StaleReleases uint64
}

// Add adds o to s.
func (s *Stats) Add(o *Stats) {
	s.Acquired += o.Acquired
	s.Released += o.Released
	s.Polls += o.Polls
	s.Retries += o.Retries
	s.Conflicts += o.Conflicts
	s.Resets += o.Resets
	s.Overtaken += o.Overtaken
	s.Expired += o.Expired
	s.Joins += o.Joins
	s.CounterResets += o.CounterResets
	s.StaleReleases += o.StaleReleases
}

// Table places lock ids on lock servers: Servers nodes (ids 0..Servers-1) with Slots words each,
// starting at Base[s] on server s. An id hashes to one word; ids that collide share it.
type Table struct {
	Base  []verbs.Ptr
	Slots int
}

// NewTable allocates a zeroed table of slots words on each of the given setup endpoints (one per
// server, in server order).
func NewTable(servers []verbs.Endpoint, slots int) (*Table, error) {
	if len(servers) == 0 || slots < 1 {
		return nil, fmt.Errorf("dlm: table of %d servers x %d slots", len(servers), slots)
	}
	t := &Table{Slots: slots}
	for _, ep := range servers {
		p, err := ep.Alloc(uint64(slots) * 8)
		if err != nil {
			return nil, fmt.Errorf("dlm: table on node %d: %w", ep.Node(), err)
		}
		t.Base = append(t.Base, p)
	}
	return t, nil
}

// WordOn is the lock word of id on server s: id hashed onto that server's Slots words.
func (t *Table) WordOn(s int, id uint32) verbs.Ptr {
	h := uint64(id) * 0x9E3779B97F4A7C15
	h ^= h >> 29
	return t.Base[s].Add(8 * (h % uint64(t.Slots)))
}

// Word is the lock word of id.
func (t *Table) Word(id uint32) verbs.Ptr {
	h := uint64(id) * 0x9E3779B97F4A7C15
	h ^= h >> 29
	n := uint64(len(t.Base)) * uint64(t.Slots)
	slot := h % n
	s := slot % uint64(len(t.Base))
	return t.Base[s].Add(8 * (slot / uint64(len(t.Base))))
}

// backoff is the authors' random exponential backoff: uniform in [0, min(max, base * 2^attempt)).
func backoff(r *rand.Rand, base, maxB int64, attempt int) int64 {
	if base <= 0 || maxB <= 0 {
		return 0
	}
	lim := base
	for i := 0; i < attempt && lim < maxB; i++ {
		lim *= 2
	}
	return r.Int63n(min(lim, maxB))
}
