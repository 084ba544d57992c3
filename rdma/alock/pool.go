package alock

import (
	"errors"
	"sync"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// Pool hands out Handles of one algorithm on one node, for callers that hold many locks at
// once or act for many clients (a lock server taking locks in the local cohort on behalf of UDP
// clients). Each handle gets its own endpoint from the pool's factory, so handles checked out
// at the same time may be used by different goroutines. A pool is safe for concurrent use.
type Pool struct {
	a     *ALock
	newEP func() verbs.Endpoint
	mu    sync.Mutex
	free  []*Handle
	made  int
}

// NewPool returns a pool whose handles use endpoints made by newEP (all on the same node).
func (a *ALock) NewPool(newEP func() verbs.Endpoint) *Pool { return &Pool{a: a, newEP: newEP} }

// Get returns an idle handle, allocating descriptors for a new one if none is idle.
func (p *Pool) Get() (*Handle, error) {
	p.mu.Lock()
	if k := len(p.free); k > 0 {
		h := p.free[k-1]
		p.free = p.free[:k-1]
		p.mu.Unlock()
		return h, nil
	}
	p.made++
	p.mu.Unlock()
	return p.a.NewHandle(p.newEP())
}

// ErrPutHeld is returned by Put for a handle that still holds a lock.
var ErrPutHeld = errors.New("alock: handle returned to the pool while holding a lock")

// Put returns a handle that holds no lock; its descriptors are reused by a later Get.
func (p *Pool) Put(h *Handle) error {
	if h.held != 0 {
		return ErrPutHeld
	}
	p.mu.Lock()
	p.free = append(p.free, h)
	p.mu.Unlock()
	return nil
}

// Size is the number of handles (and descriptor pairs) the pool has allocated.
func (p *Pool) Size() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.made
}
