package rdmaclient

import (
	"sync"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/rma"
)

// handle is one handle of the server's table, whichever the algorithm.
type handle interface {
	lock(i uint32, shared bool) error
	unlock(i uint32) error
}

type alockHandle struct {
	h   *alock.Handle
	tbl *alock.Table
}

func (a alockHandle) lock(i uint32, _ bool) error { return a.h.Lock(a.tbl.Lock(int(i))) }
func (a alockHandle) unlock(i uint32) error       { return a.h.Unlock(a.tbl.Lock(int(i))) }

type rwHandle struct{ h *rma.TableHandle }

func (w rwHandle) lock(i uint32, shared bool) error {
	if shared {
		return w.h.RLock(int(i))
	}
	return w.h.Lock(int(i))
}
func (w rwHandle) unlock(i uint32) error { return w.h.Unlock(int(i)) }

func (c *Client) get() (handle, error) {
	if c.rw != nil {
		h, err := c.rw.Get()
		return rwHandle{h}, err
	}
	h, err := c.pool.Get()
	return alockHandle{h, c.tbl}, err
}

func (c *Client) put(h handle) error {
	switch h := h.(type) {
	case rwHandle:
		return c.rw.Put(h.h)
	case alockHandle:
		return c.pool.Put(h.h)
	}
	return nil
}

// held is what the client holds of one lock: an exclusive hold and the shared ones.
type held struct {
	mu sync.Mutex
	x  handle
	s  []handle
}

func (l *held) add(h handle, shared bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if shared {
		l.s = append(l.s, h)
	} else {
		l.x = h
	}
}

func (l *held) take(shared bool) handle {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !shared {
		h := l.x
		l.x = nil
		return h
	}
	k := len(l.s)
	if k == 0 {
		return nil
	}
	h := l.s[k-1]
	l.s = l.s[:k-1]
	return h
}
