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
	Deadline int64 // ns; holders only
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
