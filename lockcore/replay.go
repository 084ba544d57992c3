package lockcore

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/netlock-go/netlock/wire"
)

// Replay memory: the requests that ended, remembered so that a copy of one is not accepted again.
//
// Every request that leaves a lock's holders or waiters (released, withdrawn, its lease or its
// wait lease run out, dropped by an admin reset or a Drain) is remembered as (lock, txn, token,
// end time, how it ended) for Config.ReplayWindow, in a per-Core memory of at most
// Config.ReplayCapacity requests: when it is full the oldest is forgotten first (counted in
// Stats.ReplayForgotten if its window had not passed), so under a heavy load the window shrinks
// to ReplayCapacity ends. An acquire of a remembered (lock, txn), with or without the retry flag,
// is not accepted again (issue 18, item 8: a replayed old acquire was queued and granted to the
// replayer): it is ignored if the request was released or withdrawn, and otherwise answered
// with the status it ended with (lease-expired, wait-expired, not-owner, shutdown), since its
// client may have missed that answer and still wait. A release that repeats a remembered
// request's token (a retransmission) is acknowledged again, or answered with that status. The
// requests of one call (an Expire, a Drain, an admin reset) are remembered in (lock, txn) order,
// so that which of them the capacity forgets first does not depend on map or heap order.
//
// The memory is a ring of entries in end order (sequence numbers head-n..head-1) and a table of
// hash chains: buckets[h] holds the sequence number (+1) of the newest entry hashed to h, and
// each entry that of the previous one. Forgetting the oldest entry is a tail increment: chains
// end at the first sequence number below the tail, so no entry is ever unlinked. An insertion
// costs one bucket and one ring slot, a lookup one bucket and its live chain (about half an
// entry on average with twice as many buckets as entries). Both grow with the number of
// remembered requests, up to the capacity. The bucket hash is keyed (Config.HashSeed) vector
// multiply-shift (Thorup: strongly universal over the 32-bit words of lock and txn).
type replayMem struct {
	ring    []ended  // power-of-two length; entry of sequence number s at s&(len-1)
	buckets []uint64 // power-of-two length, 2*len(ring); 0 or a sequence number + 1
	head    uint64   // sequence number of the next entry
	tail    uint64   // sequence number of the oldest remembered entry
	bshift  uint8    // 64 - log2(len(buckets))
	window  int64
	max     int
	key     [4]uint64
}

// ended is a remembered request.
type ended struct {
	txn    uint64
	token  uint64 // its grant's token; 0 if it never held the lock
	at     int64  // when it ended
	prev   uint64 // sequence number + 1 of the previous entry of the same bucket, 0: none
	lock   uint32
	status wire.Status // how it ended: StatusOK for released or withdrawn
}

const replayMinRing = 64

func newReplayMem(window int64, max int, seed uint64) replayMem {
	r := replayMem{window: window, max: max}
	if seed == 0 {
		r.key = [4]uint64{0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x27D4EB2F165667C5}
	} else {
		for i := range r.key {
			r.key[i] = mix64(seed + uint64(i+1)*0xD1B54A32D192ED03)
		}
	}
	return r
}

func (r *replayMem) hash(lock uint32, txn uint64) uint64 {
	return (r.key[0]*uint64(uint32(txn)) + r.key[1]*(txn>>32) + r.key[2]*uint64(lock) + r.key[3]) >> r.bshift
}

// len is the number of remembered requests (some may be past their window).
func (r *replayMem) len() int { return int(r.head - r.tail) }

// find returns the latest remembered end of (lock, txn) within the window at now, or nil.
func (r *replayMem) find(lock uint32, txn uint64, now int64) *ended {
	return r.findFrom(r.chain(lock, txn), lock, txn, now)
}

// chain returns the head of the hash chain of (lock, txn): loaded early (acquire does), the
// memory access overlaps with other work.
func (r *replayMem) chain(lock uint32, txn uint64) uint64 {
	if len(r.buckets) == 0 {
		return 0
	}
	return r.buckets[r.hash(lock, txn)]
}

// findFrom is find from the chain head s, read before the memory last changed or after.
func (r *replayMem) findFrom(s uint64, lock uint32, txn uint64, now int64) *ended {
	mask := uint64(len(r.ring) - 1)
	for s > r.tail {
		e := &r.ring[(s-1)&mask]
		if e.lock == lock && e.txn == txn {
			if now-e.at < r.window {
				return e
			}
			return nil // the latest is too old, earlier ones too
		}
		s = e.prev
	}
	return nil
}

// add remembers that a request of lock ended at time at with token and status s; it reports
// whether a request still within its window was forgotten to make room.
func (r *replayMem) add(lock uint32, txn, token uint64, at int64, s wire.Status) (forgot bool) {
	if n := r.len(); n == len(r.ring) || n >= r.max {
		forgot = r.makeRoom(at)
	}
	h := r.hash(lock, txn)
	e := &r.ring[r.head&uint64(len(r.ring)-1)]
	e.txn, e.token, e.at, e.lock, e.status, e.prev = txn, token, at, lock, s, r.buckets[h]
	r.buckets[h] = r.head + 1
	r.head++
	return forgot
}

// makeRoom makes room for one more entry in a full ring: it forgets the entries past their
// window at now, then, if the ring holds max entries, the oldest (reporting that it was still
// within its window), or else doubles the ring.
func (r *replayMem) makeRoom(now int64) (forgot bool) {
	mask := uint64(len(r.ring) - 1)
	for r.tail < r.head && now-r.ring[r.tail&mask].at >= r.window {
		r.tail++
	}
	switch n := r.len(); {
	case n >= r.max:
		r.tail++
		return true
	case n == len(r.ring):
		r.grow()
	}
	return false
}

// grow doubles the ring (up to the power of two at or above max) and relinks the buckets.
func (r *replayMem) grow() {
	n := max(replayMinRing, 2*len(r.ring))
	old, omask := r.ring, uint64(len(r.ring)-1)
	r.ring = make([]ended, n)
	r.buckets = make([]uint64, 2*n)
	r.bshift = uint8(64 - bits.Len(uint(2*n-1)))
	mask := uint64(n - 1)
	for s := r.tail; s < r.head; s++ {
		e := old[s&omask]
		h := r.hash(e.lock, e.txn)
		e.prev = r.buckets[h]
		r.buckets[h] = s + 1
		r.ring[s&mask] = e
	}
}

// remember notes that a request of lock ended at now with token and status; the requests of
// one call are added to the memory at its end (flushEnded), in (lock, txn) order.
func (c *Core) remember(lock uint32, txn, token uint64, s wire.Status) {
	if c.cfg.ReplayWindow <= 0 {
		return
	}
	c.pending = append(c.pending, ended{txn: txn, token: token, at: c.now, lock: lock, status: s})
}

// flushEnded adds the requests that ended in this call to the replay memory. Every call that
// ends requests flushes before it returns: Expire, Drain, an admin reset (a release, which ends
// one, calls rememberNow).
func (c *Core) flushEnded() {
	if len(c.pending) > 1 {
		slices.SortFunc(c.pending, func(a, b ended) int {
			return cmp.Or(cmp.Compare(a.lock, b.lock), cmp.Compare(a.txn, b.txn))
		})
	}
	for i := range c.pending {
		e := &c.pending[i]
		c.rememberNow(e.lock, e.txn, e.token, e.at, e.status)
	}
	c.pending = c.pending[:0]
}

// rememberNow adds one ended request to the replay memory (ReplayWindow > 0).
func (c *Core) rememberNow(lock uint32, txn, token uint64, at int64, s wire.Status) {
	if c.replay.add(lock, txn, token, at, s) {
		c.stats.ReplayForgotten++
	}
}

// endedOf returns the remembered end of r's (lock, txn) within the replay window, or nil.
func (c *Core) endedOf(r *Request, now int64) *ended {
	if c.cfg.ReplayWindow <= 0 {
		return nil
	}
	return c.replay.find(r.Lock, r.Txn, now)
}
