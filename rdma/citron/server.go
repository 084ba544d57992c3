package citron

import (
	"fmt"
	"sync"

	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Directory is the metadata service (the paper's MDS and the server-side allocator a scale-up
// calls): the only part of CITRON that runs on the server's CPU. Every method takes the caller's
// endpoint so that a backend can charge the call (rdma/sim: a two-sided round trip).
type Directory interface {
	// Info returns the configuration, the control block and the newest layout (a generation
	// being added by a scale-up included; Published tells which is current).
	Info(ep verbs.Endpoint) (Info, error)
	// Grow allocates zeroed memory for the next generation, of the given height, and returns
	// the layout including it. The caller holds the spillover lock exclusively.
	Grow(ep verbs.Endpoint, height int) (Layout, error)
	// Publish makes generation gen the current one.
	Publish(ep verbs.Endpoint, gen int) error
}

// Info is what a client learns from the directory.
type Info struct {
	Config    Config
	Control   verbs.Ptr
	Layout    Layout
	Published int
}

// Server is CITRON's state on the lock server: the lock tree, the control block (spillover lock,
// maximizer, published generation) in the server node's registered region, and the directory.
type Server struct {
	ep  verbs.Endpoint
	cfg Config
	ctl verbs.Ptr

	mu        sync.Mutex
	gens      []Generation
	published int
}

var _ Directory = (*Server)(nil)

// NewServer allocates CITRON on ep's node (the lock server); ep is used for allocation only.
func NewServer(ep verbs.Endpoint, cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctl, err := ep.Alloc(ctlBytes)
	if err != nil {
		return nil, fmt.Errorf("citron: control block: %w", err)
	}
	s := &Server{ep: ep, cfg: cfg, ctl: ctl}
	g := []Generation{{Gen: 0, Height: heightFor(cfg.Capacity)}}
	base, err := ep.Alloc(regionBytes(g, 0))
	if err != nil {
		return nil, fmt.Errorf("citron: lock tree of height %d (%d bytes): %w", g[0].Height, regionBytes(g, 0), err)
	}
	g[0].Base = base
	s.gens = g
	return s, nil
}

// TreeBytes is the memory a tree of the given capacity takes on the server (for sizing regions).
func TreeBytes(capacity uint64) uint64 {
	return regionBytes([]Generation{{Height: heightFor(capacity)}}, 0)
}

// Config returns the validated configuration.
func (s *Server) Config() Config { return s.cfg }

// Control is the control block's address.
func (s *Server) Control() verbs.Ptr { return s.ctl }

// Info implements Directory.
func (s *Server) Info(verbs.Endpoint) (Info, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, err := NewLayout(s.gens)
	if err != nil {
		return Info{}, err
	}
	return Info{Config: s.cfg, Control: s.ctl, Layout: l, Published: s.published}, nil
}

// Grow implements Directory.
func (s *Server) Grow(_ verbs.Endpoint, height int) (Layout, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.gens) != s.published+1 {
		return Layout{}, fmt.Errorf("citron: grow while generation %d is pending", len(s.gens)-1)
	}
	if len(s.gens) >= s.cfg.MaxGenerations {
		return Layout{}, fmt.Errorf("citron: %d generations: limit reached", len(s.gens))
	}
	next := append(append([]Generation(nil), s.gens...), Generation{Gen: len(s.gens), Height: height})
	if _, err := NewLayout(next); err != nil {
		return Layout{}, err
	}
	size := regionBytes(next, len(next)-1)
	base, err := s.ep.Alloc(size)
	if err != nil {
		return Layout{}, fmt.Errorf("citron: generation %d (%d bytes): %w", len(next)-1, size, err)
	}
	next[len(next)-1].Base = base
	s.gens = next
	return NewLayout(next)
}

// Publish implements Directory.
func (s *Server) Publish(_ verbs.Endpoint, gen int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.published+1 || gen >= len(s.gens) {
		return fmt.Errorf("citron: publish generation %d (published %d, allocated %d)", gen, s.published, len(s.gens))
	}
	s.published = gen
	return nil
}

// SimDirectory makes every directory call a two-sided round trip on rdma/sim, served by one
// server thread that spends cpu nanoseconds per call (the server's CPU is otherwise idle).
func SimDirectory(s *sim.Sim, d Directory, serverNode int, cpu int64) Directory {
	q := s.NewRPC(serverNode)
	sd := &simDir{d: d, q: q, calls: map[uint64]func(){}}
	q.Serve(1, func(ep verbs.Endpoint, r *sim.Request) {
		verbs.Spend(ep, cpu)
		if f := sd.calls[r.Body[0]]; f != nil {
			delete(sd.calls, r.Body[0])
			f()
		}
		r.Reply(ep, []uint64{0})
	})
	return sd
}

// simDir runs the directory call on the server thread; simulated threads run one at a time, so
// the map needs no lock.
type simDir struct {
	d     Directory
	q     *sim.RPC
	next  uint64
	calls map[uint64]func()
}

func (s *simDir) call(ep verbs.Endpoint, f func()) error {
	s.next++
	s.calls[s.next] = f
	_, err := s.q.Call(ep, []uint64{s.next})
	return err
}

func (s *simDir) Info(ep verbs.Endpoint) (i Info, err error) {
	if cerr := s.call(ep, func() { i, err = s.d.Info(ep) }); cerr != nil {
		return Info{}, cerr
	}
	return i, err
}

func (s *simDir) Grow(ep verbs.Endpoint, h int) (l Layout, err error) {
	if cerr := s.call(ep, func() { l, err = s.d.Grow(ep, h) }); cerr != nil {
		return Layout{}, cerr
	}
	return l, err
}

func (s *simDir) Publish(ep verbs.Endpoint, gen int) (err error) {
	if cerr := s.call(ep, func() { err = s.d.Publish(ep, gen) }); cerr != nil {
		return cerr
	}
	return err
}
