package citron

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/rdma/verbs"
)

// EventKind classifies protocol events reported to ClientOptions.Probe.
type EventKind uint8

// Protocol events.
const (
	EvAcquired EventKind = iota + 1 // a range lock was granted
	EvAbort                         // an attempt at a node was undone (Inequality (1), skipped ticket)
	EvStale                         // a scale-up made the client's layout stale; it refreshed
	EvRestart                       // a multi-node request released its nodes to wait (hold-and-wait avoidance)
	EvEscalate                      // a node was replaced by an ancestor (starvation or failure suspicion)
	EvRecover                       // a lease expired and a waiter repaired a word
	EvShortcut                      // the children-are-leaves shortcut succeeded
	EvScaleUp                       // this client scaled the tree up
	EvCASFail                       // a leaf masked CAS failed
)

func (k EventKind) String() string {
	return [...]string{"?", "acquired", "abort", "stale", "restart", "escalate", "recover", "shortcut", "scale-up", "cas-fail"}[k]
}

// Event is one protocol event.
type Event struct {
	Kind EventKind
	// At is the client's clock (ns).
	At int64
	// Detail says what happened (node, reason).
	Detail string
}

// Stats counts a client's protocol events.
type Stats struct {
	Acquired, Aborts, Stale, Restarts, Escalations, Recoveries, Shortcuts, ScaleUps, CASFails atomic.Uint64
	// SpillAcquired counts requests that took the spillover lock.
	SpillAcquired atomic.Uint64
}

// Client is one thread's CITRON client: it holds the thread's endpoint and its cached view of
// the tree. A Client is used by one goroutine at a time; a thread may hold several range locks.
type Client struct {
	ep  verbs.Endpoint
	dir Directory
	cfg Config
	opt ClientOptions
	ctl verbs.Ptr
	lay Layout // the published layout this client uses
	all Layout // the newest layout known (a pending generation included)
	rng *rand.Rand

	stats Stats
}

var clientSeeds atomic.Int64

// NewClient creates a client on ep (a thread on any node) that reaches CITRON through dir.
func NewClient(ep verbs.Endpoint, dir Directory, opt ClientOptions) (*Client, error) {
	if opt.K == 0 {
		opt.K = 2
	}
	if opt.K < 1 || opt.K > 16 {
		return nil, fmt.Errorf("citron: K %d outside [1, 16]", opt.K)
	}
	seed := opt.Seed
	if seed == 0 {
		seed = clientSeeds.Add(1)*7919 + int64(ep.Node())
	}
	c := &Client{ep: ep, dir: dir, opt: opt, rng: rand.New(rand.NewSource(seed))}
	if err := c.refresh(); err != nil {
		return nil, err
	}
	return c, nil
}

// Stats returns the client's counters.
func (c *Client) Stats() *Stats { return &c.stats }

// Capacity is N as the client knows it.
func (c *Client) Capacity() uint64 { return c.lay.Capacity() }

// Generation is the tree generation the client uses.
func (c *Client) Generation() int { return c.lay.Gen() }

func (c *Client) refresh() error {
	info, err := c.dir.Info(c.ep)
	if err != nil {
		return fmt.Errorf("citron: directory: %w", err)
	}
	c.cfg, c.ctl, c.all = info.Config, info.Control, info.Layout
	c.lay = info.Layout.prefix(info.Published)
	return nil
}

// layoutOf returns the layout of generation g, fetching newer ones from the directory.
func (c *Client) layoutOf(g int) (Layout, error) {
	if g > c.all.Gen() {
		info, err := c.dir.Info(c.ep)
		if err != nil {
			return Layout{}, fmt.Errorf("citron: directory: %w", err)
		}
		c.all = info.Layout
		if g > c.all.Gen() {
			return Layout{}, fmt.Errorf("citron: generation %d unknown to the directory (newest %d)", g, c.all.Gen())
		}
	}
	return c.all.prefix(g), nil
}

func (c *Client) now() int64 {
	t := c.ep.Now()
	if c.opt.Drift != 0 {
		t = int64(float64(t) * (1 + c.opt.Drift))
	}
	return t
}

func (c *Client) probe(k EventKind, format string, args ...any) {
	if c.opt.Probe != nil {
		c.opt.Probe(Event{Kind: k, At: c.now(), Detail: fmt.Sprintf(format, args...)})
	}
}

// Handle is a granted range lock.
type Handle struct {
	c          *Client
	start, end uint64
	mode       Mode
	spill      bool
	held       []*held
	granted    int64
	released   bool
}

// Range returns the locked range.
func (h *Handle) Range() (start, end uint64) { return h.start, h.end }

// Mode is the lock's mode.
func (h *Handle) Mode() Mode { return h.mode }

// Nodes describes the tree nodes the lock holds (tests and diagnostics).
func (h *Handle) Nodes() []string {
	var out []string
	for _, x := range h.held {
		out = append(out, x.n.String())
	}
	return out
}

// LockRange acquires [start, end) in mode and returns its handle. It blocks until the lock is
// granted or ctx is done. An empty, inverted or out-of-space range is an error.
func (c *Client) LockRange(ctx context.Context, start, end uint64, mode Mode) (_ *Handle, err error) {
	defer catch(&err)
	switch {
	case mode != Exclusive && mode != Shared:
		return nil, fmt.Errorf("lock [%d,%d) mode %d: %w", start, end, mode, ErrBadMode)
	case start > end:
		return nil, fmt.Errorf("lock [%d,%d): %w", start, end, ErrInvertedRange)
	case start == end:
		return nil, fmt.Errorf("lock [%d,%d): %w", start, end, ErrEmptyRange)
	case end > c.cfg.Space:
		return nil, fmt.Errorf("lock [%d,%d) in a space of %d: %w", start, end, c.cfg.Space, ErrOutOfSpace)
	}
	for {
		h := &Handle{c: c, start: start, end: end, mode: mode}
		N := c.lay.Capacity()
		if end > N {
			if err := c.acquireSpill(ctx, mode); err != nil {
				return nil, err
			}
			if err := c.orMaximizer(end); err != nil {
				return nil, errors.Join(err, c.releaseSpill(mode))
			}
			gen, err := verbs.Read(c.ep, c.ctl.Add(ctlGen))
			if err != nil {
				return nil, errors.Join(err, c.releaseSpill(mode))
			}
			if int(gen) != c.lay.Gen() { // scaled up meanwhile: the tree now covers more
				if err := c.releaseSpill(mode); err != nil {
					return nil, err
				}
				if err := c.refresh(); err != nil {
					return nil, err
				}
				c.stats.Stale.Add(1)
				c.probe(EvStale, "spillover: generation %d, was %d", gen, c.lay.Gen())
				continue
			}
			h.spill = true
			c.stats.SpillAcquired.Add(1)
		}
		if start < N {
			err := c.lockTree(ctx, h, start, min(end, N), mode)
			if errors.Is(err, errStale) {
				if h.spill {
					if err := c.releaseSpill(mode); err != nil {
						return nil, err
					}
				}
				if err := c.refresh(); err != nil {
					return nil, err
				}
				c.stats.Stale.Add(1)
				c.probe(EvStale, "refreshed to generation %d", c.lay.Gen())
				continue
			}
			if err != nil {
				if h.spill {
					err = errors.Join(err, c.releaseSpill(mode))
				}
				return nil, err
			}
		}
		h.granted = c.now()
		c.stats.Acquired.Add(1)
		c.probe(EvAcquired, "[%d,%d) %v nodes %v", start, end, mode, h.Nodes())
		return h, nil
	}
}

// Unlock releases the lock (all its verbs in one batch).
func (h *Handle) Unlock() error {
	if h.released {
		return ErrReleased
	}
	h.released = true
	c := h.c
	if time.Duration(c.now()-h.granted) > c.cfg.Lease {
		return fmt.Errorf("unlock [%d,%d) after %v: %w", h.start, h.end, time.Duration(c.now()-h.granted), ErrLeaseExpired)
	}
	err := c.release(h.held)
	if h.spill {
		err = errors.Join(err, c.releaseSpill(h.mode))
	}
	return err
}

var errStale = errors.New("citron: layout stale")

// lockTree locks [l, r) (inside the tree) into h.held: step 1, then step 2 for each node in
// ascending order, with hold-and-wait avoidance and escalation (see doc.go).
func (c *Client) lockTree(ctx context.Context, h *Handle, l, r uint64, mode Mode) error {
	H := c.lay.Height()
	nodes := splitRange(H, l, r, c.opt.K)
	lockMode := mode
	started := c.now()
	streak := 0
	repair := map[node]bool{} // escalated from a leaf: repair the leaves once held
	for {
		restart := false
		for i := 0; i < len(nodes) && !restart; i++ {
			a := &attempt{c: c, lay: &c.lay, n: nodes[i], mode: lockMode, l: l, r: r, holding: len(h.held) > 0 && !c.cfg.UnsafeHoldAndWait}
			res := a.run(ctx)
			switch res {
			case resAcquired:
				h.held = append(h.held, a.held())
				streak = 0
				if repair[nodes[i]] && lockMode == Exclusive && len(h.held[len(h.held)-1].kids) == 0 {
					c.repairLeaves(nodes[i])
				}
			case resRetry:
				// Aborts feed on load (every abort posts its undo); back off randomly, doubling
				// the bound with each consecutive abort (an addition; the paper retries at once).
				streak++
				verbs.Spend(c.ep, c.rng.Int63n(int64(min(1<<min(streak, 8), 256))*500+1))
				i--
			case resStale, resCanceled:
				err := c.release(h.held)
				h.held = nil
				if res == resStale {
					return errors.Join(errStale, err)
				}
				return errors.Join(ctx.Err(), err)
			case resBlocked:
				if err := c.release(h.held); err != nil {
					return err
				}
				h.held = nil
				c.stats.Restarts.Add(1)
				c.probe(EvRestart, "at %v: %s", nodes[i], a.wait.what)
				if err := c.waitFor(ctx, a.wait); err != nil {
					return err
				}
				restart = true
			case resEscalate:
				if err := c.release(h.held); err != nil {
					return err
				}
				h.held = nil
				c.stats.Escalations.Add(1)
				c.probe(EvEscalate, "%v -> %v (%s)", nodes[i], a.target, a.why)
				if a.h.leaf {
					repair[a.target] = true
				}
				nodes = escalateNodes(nodes, i, a.target)
				if a.upgrade {
					lockMode = Exclusive
				}
				restart = true
			}
		}
		if !restart {
			return nil
		}
		if len(nodes) > 1 && time.Duration(c.now()-started) > c.cfg.EscalateAfter {
			// A multi-node request that keeps restarting locks one covering node instead,
			// which never holds while it waits.
			nodes = []node{coveringNode(H, nodes, l, r)}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// escalateNodes replaces nodes[i] by target and drops the nodes target covers.
func escalateNodes(nodes []node, i int, target node) []node {
	out := []node{target}
	for j, n := range nodes {
		if j != i && !target.covers(n) {
			out = append(out, n)
		}
	}
	// Ascending left boundary; nodes are disjoint (an ancestor of one covers it).
	sort.Slice(out, func(a, b int) bool {
		return out[a].p<<(2*uint(maxHeight-out[a].d)) < out[b].p<<(2*uint(maxHeight-out[b].d))
	})
	return out
}

// coveringNode is the lowest node covering every node of ns.
func coveringNode(h int, ns []node, l, r uint64) node {
	c := splitRange(h, l, r, 1)[0]
	for _, n := range ns {
		for !c.covers(n) {
			c = c.parent()
		}
	}
	return c
}

// repairLeaves runs after an exclusive request that escalated from a leaf acquired the leaf's
// parent without the shortcut (which found every leaf zero) (Alg. 2 line 22 and section 3.10): holding the parent after its descendant check, no
// live request holds any of its leaves, so bits or shared counts still set there belong to
// crashed clients and are cleared with one WRITE each.
func (c *Client) repairLeaves(p node) {
	H := c.lay.Height()
	if p.d != H-1 {
		return
	}
	for _, f := range c.lay.fragments(H, p.p*4, p.p*4+4) {
		ws, err := verbs.ReadWords(c.ep, f.ptr, int(f.count*slotWords))
		if err != nil {
			panic(verbsError{err})
		}
		var wrs []verbs.WorkRequest
		for i := range ws {
			if ws[i] != 0 {
				wrs = append(wrs, verbs.WorkRequest{Op: verbs.OpWrite, Remote: f.ptr.Add(uint64(8 * i)), Value: 0})
			}
		}
		if len(wrs) > 0 {
			if _, err := verbs.Exec(c.ep, wrs); err != nil {
				panic(verbsError{err})
			}
			c.stats.Recoveries.Add(1)
			c.probe(EvRecover, "leaves under %v: %d words of crashed holders cleared", p, len(wrs))
		}
	}
}
