package rma

import (
	"errors"
	"fmt"
)

// MaxLevels is the deepest machine hierarchy supported (the paper model-checks N = 1..4).
const MaxLevels = 4

// Default thresholds.
const (
	// DefaultTLLeaf is T_L,i for the levels below the machine (the paper's "50-20" split of
	// a product of 1000, section 5.2.2).
	DefaultTLLeaf = 50
	// DefaultTLRoot is T_L,1, the machine level's threshold (RMA-RW only).
	DefaultTLRoot = 20
	// DefaultTR is the reader threshold T_R.
	DefaultTR = 1000
	// maxTR keeps T_R far below the reset flag.
	maxTR = 1 << 32
)

// Faults are deliberately broken variants, for the negative controls of the tests and for
// demonstrating the errata of the paper's listings. Each must make a checker fail; never set
// one outside tests.
type Faults struct {
	// SkipDrain: a writer that switches the counters to WRITE does not wait for the readers
	// inside to depart (breaks reader/writer exclusion).
	SkipDrain bool
	// ReaderIgnoresWrite: a reader compares only the count bits of ARRIVE with T_R and enters
	// in WRITE mode (breaks reader/writer exclusion).
	ReaderIgnoresWrite bool
	// PaperQueueNodes: every process uses its own queue node at every level, as Listings 4-5
	// print (erratum E3): a writer that inherits a parent level from its predecessor releases
	// it with a queue node that was never enqueued.
	PaperQueueNodes bool
	// PaperReaderReset: the reader that reaches T_R resets its counter with Listing 6's
	// reset_counter, which also clears a WRITE flag that a writer set in the meantime.
	PaperReaderReset bool
	// PaperReleaseOrder: the last writer resets the counters before it removes itself from the
	// machine-level queue (Listing 8 as printed). With Listing 9's reader wait
	// (PaperReaderBarrier) a reader that reaches T_R in between sees the writer queued, backs
	// off and waits for a reset that never comes; with the fixed wait it is safe.
	PaperReleaseOrder bool
	// ResetArriveFirst: a writer's reset subtracts from ARRIVE before DEPART, so a writer that
	// drains concurrently can see ARRIVE and DEPART from different sides of the reset.
	ResetArriveFirst bool
	// UnclaimedReaderReset: the reader whose arrival returned exactly T_R resets its counter
	// without claiming it first (Listing 9): a back-off can bring ARRIVE back to T_R during
	// that reset, a second reader resets concurrently, DEPART is subtracted twice, goes
	// negative, and a draining writer then sees the counter empty with a reader inside.
	UnclaimedReaderReset bool
	// PaperReaderBarrier: a reader that backed off waits for ARRIVE < T_R (Listing 9); when the
	// counter stopped at exactly T_R and no reader arrives any more, nobody ever resets it.
	PaperReaderBarrier bool
}

// Config describes one RMA-MCS or RMA-RW lock over a fabric of Nodes nodes with
// ProcsPerNode processes each (rank r runs on node r / ProcsPerNode).
type Config struct {
	// Nodes and ProcsPerNode place the P = Nodes*ProcsPerNode processes.
	Nodes, ProcsPerNode int
	// Elements is the size, in processes, of one machine element at levels 2..N, outermost
	// first; level 1 is the whole machine. Nil means N = 1: a single distributed queue, the
	// topology-oblivious D-MCS. The paper's evaluation (N = 2: compute node, machine) is
	// []int{ProcsPerNode}. Each size must divide the one before it (and P; an element as large
	// as its parent is allowed, e.g. one node that is the whole machine), and be a multiple
	// or a divisor of ProcsPerNode, so that an element either lies inside one node or is a set
	// of whole nodes.
	Elements []int
	// TL holds the locality thresholds T_L,1 .. T_L,N (index 0 is the machine level): the
	// longest run of consecutive writers of one element at that level before the lock leaves
	// the element. Nil takes DefaultTLRoot for level 1 and DefaultTLLeaf below. T_L,1 bounds
	// the machine-level passes between two reader phases (RMA-RW) and is unused by RMA-MCS.
	TL []int
	// Readers makes the lock RMA-RW (distributed counter, shared acquisitions); without it
	// the lock is RMA-MCS (writers only).
	Readers bool
	// TDC is the distributed-counter threshold: one physical counter per TDC consecutive
	// ranks, counter k hosted on the node of rank k*TDC. 0 takes ProcsPerNode (one counter per
	// node, the paper's recommendation).
	TDC int
	// TR is the reader threshold: a counter admits at most TR arrivals between two resets.
	// 0 takes DefaultTR.
	TR int
	// Faults selects a deliberately broken variant (tests only).
	Faults Faults
}

// Levels is N.
func (c *Config) Levels() int { return len(c.Elements) + 1 }

// Procs is P.
func (c *Config) Procs() int { return c.Nodes * c.ProcsPerNode }

func (c *Config) validate() error {
	if c.Nodes < 1 || c.ProcsPerNode < 1 {
		return fmt.Errorf("rma: %d nodes x %d processes", c.Nodes, c.ProcsPerNode)
	}
	p := c.Procs()
	if p > 1<<20 {
		return fmt.Errorf("rma: %d processes (max %d)", p, 1<<20)
	}
	n := c.Levels()
	if n > MaxLevels {
		return fmt.Errorf("rma: %d levels (max %d)", n, MaxLevels)
	}
	prev := p
	for i, s := range c.Elements {
		if s < 1 || prev%s != 0 {
			return fmt.Errorf("rma: element size %d at level %d must divide %d", s, i+2, prev)
		}
		if s%c.ProcsPerNode != 0 && c.ProcsPerNode%s != 0 {
			return fmt.Errorf("rma: element size %d at level %d is neither a multiple nor a divisor of %d processes per node", s, i+2, c.ProcsPerNode)
		}
		prev = s
	}
	if c.TL == nil {
		c.TL = make([]int, n)
		for i := range c.TL {
			c.TL[i] = DefaultTLLeaf
		}
		c.TL[0] = DefaultTLRoot
	} else {
		c.TL = append([]int(nil), c.TL...)
	}
	if len(c.TL) != n {
		return fmt.Errorf("rma: %d thresholds T_L for %d levels", len(c.TL), n)
	}
	for i, t := range c.TL {
		if t < 1 || t > 1<<30 {
			return fmt.Errorf("rma: T_L,%d = %d out of range", i+1, t)
		}
	}
	if !c.Readers {
		if c.TDC != 0 || c.TR != 0 {
			return errors.New("rma: T_DC and T_R are RMA-RW parameters (set Readers)")
		}
		if c.Faults.SkipDrain || c.Faults.ReaderIgnoresWrite || c.Faults.PaperReaderReset ||
			c.Faults.PaperReleaseOrder || c.Faults.ResetArriveFirst || c.Faults.UnclaimedReaderReset ||
			c.Faults.PaperReaderBarrier {
			return errors.New("rma: reader faults need Readers")
		}
		return nil
	}
	if c.TDC == 0 {
		c.TDC = c.ProcsPerNode
	}
	if c.TDC < 1 || c.TDC > p {
		return fmt.Errorf("rma: T_DC = %d out of 1..%d", c.TDC, p)
	}
	if c.TR == 0 {
		c.TR = DefaultTR
	}
	if c.TR < 1 || c.TR > maxTR {
		return fmt.Errorf("rma: T_R = %d out of 1..%d", c.TR, maxTR)
	}
	return nil
}

// Shape is a validated configuration with the derived topology: element sizes, counts and
// home nodes, and which structures need the NIC.
type Shape struct {
	cfg Config
	// size[l] is the element size in processes at level l (0-based: 0 is the machine).
	size [MaxLevels]int
	n    int
}

// NewShape validates cfg.
func NewShape(cfg Config) (*Shape, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	s := &Shape{cfg: cfg, n: cfg.Levels()}
	s.size[0] = cfg.Procs()
	for i, e := range cfg.Elements {
		s.size[i+1] = e
	}
	return s, nil
}

// Config is the validated configuration (defaults filled in).
func (s *Shape) Config() Config { return s.cfg }

// Levels is N.
func (s *Shape) Levels() int { return s.n }

// Procs is P.
func (s *Shape) Procs() int { return s.size[0] }

// Elements is the number of machine elements (distributed queues) at 0-based level l.
func (s *Shape) Elements(l int) int { return s.size[0] / s.size[l] }

// Element is e(p, l): the index of p's element at 0-based level l.
func (s *Shape) Element(p, l int) int { return p / s.size[l] }

// Owners is the number of queue nodes at 0-based level l: one per process at the leaf level,
// one per child element above it (one per process with Faults.PaperQueueNodes).
func (s *Shape) Owners(l int) int {
	if l == s.n-1 || s.cfg.Faults.PaperQueueNodes {
		return s.size[0]
	}
	return s.size[0] / s.size[l+1]
}

// Owner is the queue node p uses at 0-based level l: its own at the leaf level, its level-(l+1)
// element's above (HMCS-style ownership, the resolution of erratum E3).
func (s *Shape) Owner(p, l int) int {
	if l == s.n-1 || s.cfg.Faults.PaperQueueNodes {
		return p
	}
	return p / s.size[l+1]
}

// NodeOf is the node rank p runs on.
func (s *Shape) NodeOf(p int) int { return p / s.cfg.ProcsPerNode }

// TailHome is the node holding the tail of element j at level l (its first process's node).
func (s *Shape) TailHome(l, j int) int { return s.NodeOf(j * s.size[l]) }

// OwnerHome is the node holding queue node o of level l (its owner's first process's node).
func (s *Shape) OwnerHome(l, o int) int {
	if l == s.n-1 || s.cfg.Faults.PaperQueueNodes {
		return s.NodeOf(o)
	}
	return s.NodeOf(o * s.size[l+1])
}

// LevelLocal reports whether every queue of level l lies inside one node, so that its words
// are only ever touched by that node's CPUs (the node-level queues of N = 2).
func (s *Shape) LevelLocal(l int) bool { return s.size[l] <= s.cfg.ProcsPerNode }

// Counters is the number of physical reader counters (0 for RMA-MCS).
func (s *Shape) Counters() int {
	if !s.cfg.Readers {
		return 0
	}
	return (s.size[0] + s.cfg.TDC - 1) / s.cfg.TDC
}

// CounterOf is c(p): the index of p's physical counter.
func (s *Shape) CounterOf(p int) int { return p / s.cfg.TDC }

// CounterHome is the node hosting counter k.
func (s *Shape) CounterHome(k int) int { return s.NodeOf(k * s.cfg.TDC) }

// CountersLocal reports whether the counters are only touched by CPUs of their node (a
// single-node machine).
func (s *Shape) CountersLocal() bool { return s.cfg.Nodes == 1 }
