package lockcore

import (
	"cmp"
	"net/netip"
	"slices"

	"github.com/netlock-go/netlock/wire"
)

// Entry describes one request of a lock, for inspection (tests, admin tools); not for the fast path.
type Entry struct {
	Txn      uint64
	Token    uint64 // holders only
	Mode     wire.Mode
	Priority uint8
	Tenant   uint16
	Deadline int64 // ns: a holder's lease deadline, a waiter's wait deadline (0 without wait leases)
	To       netip.AddrPort
}

// LockInfo is a copy of a lock's state.
type LockInfo struct {
	ID       uint32
	Holders  []Entry // sorted by token, that is in grant order
	Waiters  []Entry // in queue order
	Buffered []Entry // q2, in push-back order
}

func toEntries(es []entry) []Entry {
	var r []Entry
	for i := range es {
		e := &es[i]
		r = append(r, Entry{Txn: e.txn, Token: e.token, Mode: e.mode, Priority: e.prio, Tenant: e.tenant,
			Deadline: e.deadline, To: e.to})
	}
	return r
}

// Inspect returns a copy of the state of lock id, and false if the lock has no state.
func (c *Core) Inspect(id uint32) (LockInfo, bool) {
	l := c.locks.get(id)
	if l == nil || l.inIdle {
		return LockInfo{ID: id}, false
	}
	info := LockInfo{ID: id, Holders: toEntries(l.holders), Waiters: toEntries(l.waiters[l.whead:]),
		Buffered: toEntries(l.overflow[l.ohead:])}
	slices.SortFunc(info.Holders, func(a, b Entry) int { return cmp.Compare(a.Token, b.Token) })
	return info, true
}

// Locks returns the ids of the locks that have requests, in ascending order.
func (c *Core) Locks() []uint32 {
	var ids []uint32
	c.locks.each(func(l *lockState) {
		if !l.inIdle {
			ids = append(ids, l.id)
		}
	})
	slices.Sort(ids)
	return ids
}

// TellHolders tells every holder that its lease will not be renewed: a reject with status s
// and the holder's token, which clients take as the loss of the lease. It changes nothing: the
// holders keep their locks, and nothing is granted in their place, until their leases end. A
// lock server shutting down calls it after Drain (status shutdown), so that its holders learn of
// the shutdown at once instead of when their leases run out.
func (c *Core) TellHolders(s wire.Status, out []Effect) []Effect {
	c.locks.each(func(l *lockState) {
		for i := range l.holders {
			out = c.rejectEntry(l.id, &l.holders[i], s, out)
		}
	})
	return out
}

// LatestDeadline returns the latest lease deadline of any holder (the caller's clock, as Step's
// now), or 0 when nothing is held.
func (c *Core) LatestDeadline() int64 {
	var d int64
	c.locks.each(func(l *lockState) {
		for i := range l.holders {
			d = max(d, l.holders[i].deadline)
		}
	})
	return d
}
