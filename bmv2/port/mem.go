package port

import (
	"sync"
	"sync/atomic"
)

// DefaultQueue is the receive queue length, in frames, of in-memory ports.
const DefaultQueue = 1024

// MemPort is an in-memory port. Frames sent on it are delivered to its peer,
// if it has one; a full peer queue drops the frame (counted in Drops).
type MemPort struct {
	name  string
	rx    chan *[]byte // frames waiting for Recv
	free  chan *[]byte // recycled frame buffers
	done  chan struct{}
	once  sync.Once
	peer  atomic.Pointer[MemPort]
	drops atomic.Uint64
}

var _ Port = (*MemPort)(nil)

// NewMem returns an unconnected in-memory port with a receive queue of
// queue frames (DefaultQueue when queue <= 0). Connect it with [Link].
func NewMem(name string, queue int) *MemPort {
	if queue <= 0 {
		queue = DefaultQueue
	}
	return &MemPort{
		name: name,
		rx:   make(chan *[]byte, queue),
		free: make(chan *[]byte, queue),
		done: make(chan struct{}),
	}
}

// NewPair returns two linked in-memory ports: what one sends the other receives.
func NewPair(nameA, nameB string) (*MemPort, *MemPort) {
	a, b := NewMem(nameA, 0), NewMem(nameB, 0)
	Link(a, b)
	return a, b
}

// Link connects a and b as the two ends of a cable, replacing earlier links.
func Link(a, b *MemPort) {
	a.peer.Store(b)
	b.peer.Store(a)
}

// Name implements Port.
func (p *MemPort) Name() string { return "mem:" + p.name }

// Drops is the number of frames dropped because this port's receive queue was full.
func (p *MemPort) Drops() uint64 { return p.drops.Load() }

// Send implements Port.
func (p *MemPort) Send(frame []byte) error {
	select {
	case <-p.done:
		return ErrClosed
	default:
	}
	if len(frame) > MaxFrame {
		return ErrTooLarge
	}
	q := p.peer.Load()
	if q == nil {
		return nil // an unplugged cable
	}
	q.deliver(frame)
	return nil
}

// deliver queues a copy of frame for Recv.
func (p *MemPort) deliver(frame []byte) {
	select {
	case <-p.done:
		return
	default:
	}
	var b *[]byte
	select {
	case b = <-p.free:
	default:
		s := make([]byte, 0, MaxFrame)
		b = &s
	}
	*b = append((*b)[:0], frame...)
	select {
	case p.rx <- b:
	default:
		p.drops.Add(1)
		p.recycle(b)
	}
}

func (p *MemPort) recycle(b *[]byte) {
	select {
	case p.free <- b:
	default:
	}
}

// Recv implements Port.
func (p *MemPort) Recv(buf []byte) (int, error) {
	select {
	case b := <-p.rx:
		n := copy(buf, *b)
		p.recycle(b)
		return n, nil
	case <-p.done:
		return 0, ErrClosed
	}
}

// Close implements Port.
func (p *MemPort) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}
