// Package tablehandle puts a handle of either RDMA lock table, ALock's (rdma/alock) or RMA-RW's
// (rdma/rma), behind one interface, with the pool it comes from and goes back to. The lock
// server's RDMA tier (lockserver) and the remote client (client/rdmaclient) take table locks
// through it, whichever algorithm the server's table runs.
package tablehandle

import (
	"fmt"
	"sync"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/rma"
)

// Handle is one handle of a lock table: it takes and releases the table's locks by index. A
// handle is used by one goroutine at a time.
type Handle interface {
	// Lock takes lock i, shared if asked and the algorithm has a shared mode (RMA-RW); ALock
	// takes it exclusively either way.
	Lock(i uint32, shared bool) error
	// Unlock releases lock i.
	Unlock(i uint32) error
}

// Source hands out the handles of one table: an RMA-RW table's if RW is set, else an ALock
// table's (ALock and Table both set).
type Source struct {
	ALock *alock.Pool
	Table *alock.Table
	RW    *rma.TablePool
}

// Get returns an idle handle of the table, making one if none is idle.
func (s Source) Get() (Handle, error) {
	if s.RW != nil {
		h, err := s.RW.Get()
		if err != nil {
			return nil, err
		}
		return rwHandle{h}, nil
	}
	h, err := s.ALock.Get()
	if err != nil {
		return nil, err
	}
	return alockHandle{h, s.Table}, nil
}

// Put returns h, which must come from s's Get and hold no lock, to its pool (the pool's
// ErrPutHeld if it still holds one).
func (s Source) Put(h Handle) error {
	switch h := h.(type) {
	case rwHandle:
		return s.RW.Put(h.h)
	case alockHandle:
		return s.ALock.Put(h.h)
	}
	return fmt.Errorf("tablehandle: put of a %T, not a handle of this source", h)
}

type alockHandle struct {
	h   *alock.Handle
	tbl *alock.Table
}

func (a alockHandle) Lock(i uint32, _ bool) error { return a.h.Lock(a.tbl.Lock(int(i))) }
func (a alockHandle) Unlock(i uint32) error       { return a.h.Unlock(a.tbl.Lock(int(i))) }

type rwHandle struct{ h *rma.TableHandle }

func (w rwHandle) Lock(i uint32, shared bool) error {
	if shared {
		return w.h.RLock(int(i))
	}
	return w.h.Lock(int(i))
}
func (w rwHandle) Unlock(i uint32) error { return w.h.Unlock(int(i)) }

// Held is what one holder (a remote client, the server's co-located API) holds of one lock: an
// exclusive handle and the shared ones. The zero value holds nothing. Safe for concurrent use.
type Held struct {
	mu sync.Mutex
	x  Handle   // guarded by mu
	s  []Handle // guarded by mu
}

// Add records h as holding the lock, shared or exclusive.
func (l *Held) Add(h Handle, shared bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if shared {
		l.s = append(l.s, h)
	} else {
		l.x = h
	}
}

// Take removes and returns the exclusive handle, or if shared the last shared one added; nil if
// there is none.
func (l *Held) Take(shared bool) Handle {
	l.mu.Lock()
	defer l.mu.Unlock()
	var h Handle
	if shared {
		if k := len(l.s); k > 0 {
			h, l.s = l.s[k-1], l.s[:k-1]
		}
	} else {
		h, l.x = l.x, nil
	}
	return h
}
