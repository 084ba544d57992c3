package lockcore

import "math"

// Membership: which txns hold or wait for a lock, found in O(1) however many there are.
//
// A lock's holders and waiters are slices, and for the few members a lock has almost always a
// linear scan is the fastest way to find a txn in them. A lock with more than indexMin members
// (holders plus waiters) gets an index, lockState.idx: txn -> the holder's position in holders,
// or the waiter's priority and arrival number, from which its position in waiters is found by
// binary search (waiters are sorted by priority, then arrival, and arrival numbers grow). The
// index is built when the members first exceed indexMin, kept exactly in step with holders and
// waiters by the functions of this file, and dropped when the lock's state goes idle. The
// duplicate check of every acquire (a retransmission must not queue twice) and the lookups of
// releases, renewals and withdrawals therefore cost O(1), O(log n) for a waiter's position,
// instead of a scan: 100k waiters on one lock cost 5*10^9 comparisons to queue before (issue 18:
// 0.5 s stalls), about 10^6 now (TestMembershipScansLinear).
//
// Invariants: l.idx is nil or holds exactly one member per holder and live waiter of l; a txn
// is at most once among a lock's holders and live waiters (acquire and adopt check); the live
// waiters' arrival numbers (entry.seq) grow within each priority and are at most l.seq.

// indexMin is the number of members up to which a lock is searched by scanning.
const indexMin = 8

// member is a txn's place in its lock: a holder's index, or a waiter's priority and arrival.
type member struct {
	holder int32 // index in holders; -1 for a waiter
	prio   uint8
	seq    uint32
}

// scan returns the index of txn in es, or -1, and counts the entries it may compare.
func (c *Core) scan(es []entry, txn uint64) int {
	c.scanned += uint64(len(es))
	for i := range es {
		if es[i].txn == txn {
			return i
		}
	}
	return -1
}

// holderAt returns the index of txn in l.holders, or -1.
func (c *Core) holderAt(l *lockState, txn uint64) int {
	if l.idx == nil {
		return c.scan(l.holders, txn)
	}
	if m, ok := l.idx[txn]; ok && m.holder >= 0 {
		return int(m.holder)
	}
	return -1
}

// waiterAt returns the index of txn among l's live waiters (l.whead <= i < len(l.waiters)), or -1.
func (c *Core) waiterAt(l *lockState, txn uint64) int {
	if l.whead == len(l.waiters) {
		return -1
	}
	return c.findWaiter(l, txn)
}

func (c *Core) findWaiter(l *lockState, txn uint64) int {
	if l.idx == nil {
		if i := c.scan(l.waiters[l.whead:], txn); i >= 0 {
			return l.whead + i
		}
		return -1
	}
	m, ok := l.idx[txn]
	if !ok || m.holder >= 0 {
		return -1
	}
	lo, hi := l.whead, len(l.waiters)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if w := &l.waiters[mid]; w.prio < m.prio || (w.prio == m.prio && w.seq < m.seq) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == len(l.waiters) || l.waiters[lo].txn != txn {
		panic("lockcore: the membership index names a waiter that is not queued")
	}
	return lo
}

// members is the number of holders and live waiters of l.
func (l *lockState) members() int { return len(l.holders) + len(l.waiters) - l.whead }

// maybeIndex builds l's index once l has more than c.indexMin members.
func (c *Core) maybeIndex(l *lockState) {
	if l.idx != nil || l.members() <= c.indexMin {
		return
	}
	l.idx = make(map[uint64]member, 2*l.members())
	for i := range l.holders {
		l.idx[l.holders[i].txn] = member{holder: int32(i)}
	}
	for i := l.whead; i < len(l.waiters); i++ {
		w := &l.waiters[i]
		l.idx[w.txn] = member{holder: -1, prio: w.prio, seq: w.seq}
	}
}

// indexHolder indexes the holder just appended to l's holders (grant calls it when l has an
// index or needs one; a waiter that was granted has left the waiters already: its index entry is
// overwritten).
func (c *Core) indexHolder(l *lockState, txn uint64) {
	if l.idx == nil {
		c.maybeIndex(l)
		return
	}
	l.idx[txn] = member{holder: int32(len(l.holders) - 1)}
}

// dropHolder removes holder i of l (the last holder takes its place).
func (l *lockState) dropHolder(i int) {
	last := len(l.holders) - 1
	if l.idx != nil {
		delete(l.idx, l.holders[i].txn)
		if i != last {
			l.idx[l.holders[last].txn] = member{holder: int32(i)}
		}
	}
	l.holders[i] = l.holders[last]
	l.holders = l.holders[:last]
}

// clearHolders removes every holder of l.
func (l *lockState) clearHolders() {
	if l.idx != nil {
		for i := range l.holders {
			delete(l.idx, l.holders[i].txn)
		}
	}
	l.holders = l.holders[:0]
}

// insertWaiter queues e at pos (l.insertPos(e.prio)) with the next arrival number.
func (c *Core) insertWaiter(l *lockState, pos int, e entry) {
	if l.seq == math.MaxUint32 {
		l.renumber()
	}
	l.seq++
	e.seq = l.seq
	l.waiters = append(l.waiters, entry{})
	copy(l.waiters[pos+1:], l.waiters[pos:])
	l.waiters[pos] = e
	if l.idx != nil {
		l.idx[e.txn] = member{holder: -1, prio: e.prio, seq: e.seq}
	} else {
		c.maybeIndex(l)
	}
}

// renumber gives the live waiters the arrival numbers 1..n in queue order, before l.seq would
// wrap (after 2^32 arrivals without the queue ever emptying).
func (l *lockState) renumber() {
	l.seq = 0
	for i := l.whead; i < len(l.waiters); i++ {
		w := &l.waiters[i]
		l.seq++
		w.seq = l.seq
		if l.idx != nil {
			l.idx[w.txn] = member{holder: -1, prio: w.prio, seq: w.seq}
		}
	}
}

// removeWaiter takes live waiter j out of l's queue.
func (l *lockState) removeWaiter(j int) {
	if l.idx != nil {
		delete(l.idx, l.waiters[j].txn)
	}
	copy(l.waiters[j:], l.waiters[j+1:])
	l.waiters = l.waiters[:len(l.waiters)-1]
}

// clearWaiters empties l's queue.
func (l *lockState) clearWaiters() {
	if l.idx != nil {
		for i := l.whead; i < len(l.waiters); i++ {
			delete(l.idx, l.waiters[i].txn)
		}
	}
	l.waiters, l.whead, l.seq = l.waiters[:0], 0, 0
}
