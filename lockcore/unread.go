package lockcore

import (
	"math"

	"github.com/netlock-go/netlock/wire"
)

// Unread counts: the AdminStats counts of locks whose state was freed before they were read.
//
// A lock's state carries its AdminStats counts (nreq, novf, depth, declared: place.go) until
// TopLocks reads and resets them, but idle retention frees the state of a lock that has had no
// request for Config.IdleRetention (1 s by default), and the control plane reads the counts once
// per allocation period (1 s by default). A lock busy only early in a period would be gone, counts
// and all, before the read, and the controller would never learn of its requests (the scenario
// controlplane/ctlcore/testdata/recovery_interrupted saw 300 requests of a lock vanish so). So
// when a state with unread counts is freed, its counts move here, and the next TopLocks reports
// them, summed with those of a new state of the same lock, exactly once.
//
// Why a small record store and not a longer retention: a record is a lock id and four counts
// (31-39 B with its index slot, measured with runtime.MemStats for 3000-4096 records, against
// 305 B for a lock state with its table and heap slots), the table and MaxLocks stay about locks
// with requests, and the idle timer keeps its meaning. Why not free a state only once its counts
// were read: a Core does not know whether anyone reads them (a server without a controller never
// does), and idle states would then be bounded only by MaxLocks. Why in the Core and not in
// srvcore: the Core frees the state, so it is the one place that sees every count before it goes
// (srvcore has no hook at the free, and would have to scan every lock state between reads).
//
// The store holds at most Config.MaxUnreadStats locks (DefaultMaxUnreadStats). At the bound it
// keeps the busiest: a freed lock whose requests and overflows are more than those of the least
// busy record takes that record's place, and otherwise its own counts are dropped; either way the
// dropped lock is counted in Stats.UnreadDropped and its requests and overflows in
// Stats.UnreadDroppedRequests. AdminStats reports only the busiest locks (at most
// wire.MaxLockStats of them), so under a flood of distinct, rarely used locks (each freed after
// one acquire and one release) the store keeps what a report could carry, while a plain
// first-come bound would fill with such locks and lose a hot one freed later, the very loss it is
// there to prevent. A server whose counts nobody reads fills the store once and then pays a map
// lookup and a comparison per freed state. BenchmarkFreedStates (a pair of a new lock per
// iteration, its state freed soon after; 2026-11-29, a shared 2-CPU machine, noisy) measured
// 276 ns per pair against 259 ns before the store with nobody reading, 287 against 248 with a read
// every 64 Ki pairs (medians of 8): 20-40 ns per freed state. The pair of a lock whose state is
// kept (BenchmarkAcquireRelease) is not affected.
//
// The store is a min-heap of records keyed by requests+overflows, with an index from lock id to
// heap position: adding a record costs O(log n), merging the counts of a lock freed twice in one
// interval too (its key only grows), and TopLocks empties it in O(n).
type unreadStats struct {
	max  int
	heap []wire.LockStat
	pos  map[uint32]int32 // lock -> index in heap
}

// DefaultMaxUnreadStats is the default of Config.MaxUnreadStats: 4096 records, 64 times what
// one AdminStats answer carries (wire.MaxLockStats), 160 kB at most per Core (a lock server has
// one per shard: the bound is not divided among them).
const DefaultMaxUnreadStats = 4096

func statTotal(s *wire.LockStat) uint64 { return uint64(s.Requests) + uint64(s.Overflows) }

func addSat(a, b uint32) uint32 {
	if s := uint64(a) + uint64(b); s <= math.MaxUint32 {
		return uint32(s)
	}
	return math.MaxUint32
}

// mergeStat adds o's counts to s (same lock): requests and overflows add up, depth and
// declared contention take the larger.
func mergeStat(s *wire.LockStat, o *wire.LockStat) {
	s.Requests = addSat(s.Requests, o.Requests)
	s.Overflows = addSat(s.Overflows, o.Overflows)
	s.Depth = max(s.Depth, o.Depth)
	s.Declared = max(s.Declared, o.Declared)
}

func (u *unreadStats) len() int { return len(u.heap) }

// add keeps s (a lock's counts, not all zero) until the next drain, merged with a record of the
// same lock if there is one. At the bound it returns what was dropped: the counts of s itself,
// or those of the least busy record, which s replaces (ok false when nothing was dropped).
func (u *unreadStats) add(s wire.LockStat) (dropped wire.LockStat, ok bool) {
	if i, found := u.pos[s.Lock]; found {
		mergeStat(&u.heap[i], &s)
		siftDown(u, int(i))
		return wire.LockStat{}, false
	}
	if len(u.heap) < u.max {
		if u.pos == nil {
			u.pos = make(map[uint32]int32)
		}
		u.heap = append(u.heap, s)
		u.pos[s.Lock] = int32(len(u.heap) - 1)
		siftUp(u, len(u.heap)-1)
		return wire.LockStat{}, false
	}
	if len(u.heap) == 0 || statTotal(&s) <= statTotal(&u.heap[0]) {
		return s, true
	}
	dropped = u.heap[0]
	delete(u.pos, dropped.Lock)
	u.heap[0] = s
	u.pos[s.Lock] = 0
	siftDown(u, 0)
	return dropped, true
}

// take removes and returns the record of lock, if any. Only the drain in progress calls it: it
// leaves a hole (a zero record) in place of the record, which drain skips; the heap order does not
// matter any more.
func (u *unreadStats) take(lock uint32) (wire.LockStat, bool) {
	i, ok := u.pos[lock]
	if !ok {
		return wire.LockStat{}, false
	}
	s := u.heap[i]
	u.heap[i] = wire.LockStat{}
	delete(u.pos, lock)
	return s, true
}

// drain appends the records to dst, skipping the ones taken, and empties the store.
func (u *unreadStats) drain(dst []wire.LockStat) []wire.LockStat {
	for i := range u.heap {
		if statTotal(&u.heap[i]) > 0 {
			dst = append(dst, u.heap[i])
		}
	}
	clear(u.heap)
	u.heap = u.heap[:0]
	clear(u.pos)
	return dst
}

func (u *unreadStats) less(i, j int) bool {
	a, b := statTotal(&u.heap[i]), statTotal(&u.heap[j])
	return a < b || a == b && u.heap[i].Lock > u.heap[j].Lock
}

func (u *unreadStats) swap(i, j int) {
	u.heap[i], u.heap[j] = u.heap[j], u.heap[i]
	u.pos[u.heap[i].Lock] = int32(i)
	u.pos[u.heap[j].Lock] = int32(j)
}
