// Package model is an explicit-state model checker for ALock's step-level algorithm: it
// enumerates every interleaving of a small configuration (by default 2 local + 2 remote
// threads, budgets 1-2, each thread looping forever) and checks mutual exclusion, the bypass
// bound (P9: after a leader of cohort X writes victim, at most B_Y critical sections of cohort
// Y begin before an X thread enters), the budget range (P7), the absence of deadlocks and,
// optionally, that no state traps a thread (every thread can always still reach its critical
// section; with the bypass bound this is the finite-state evidence for starvation freedom).
//
// Each step is one shared-memory access of rdma/alock's code, in its order: the
// descriptor reset, the tail swap (an rCAS loop is a swap because remote RMWs are atomic with
// each other and tail_r is never written by the CPU; tail_l symmetrically), the budget store,
// the link write, the wait for a budget, the victim write, the read of the other tail, the read
// of victim, the budget reset after pReacquire, and the unlock in either order ([S] CAS-first
// or [T] next-first). The model is sequentially consistent, like Go's atomics and like waiting
// for every verb's completion; Config.UnawaitedVictim adds the negative control where a remote
// leader's victim write is posted and applied at any later point, which must be caught.
package model

import (
	"fmt"
	"strings"
)

// Config selects the configuration to explore.
type Config struct {
	// Local and Remote are the number of threads per cohort (Local+Remote <= MaxThreads).
	Local, Remote int
	// LocalBudget and RemoteBudget are the cohorts' budgets (>= 1).
	LocalBudget, RemoteBudget int
	// NextFirst selects the [T] unlock (check next before the CAS) instead of [S] CAS-first.
	NextFirst bool
	// UnawaitedVictim models remote leaders that do not wait for their victim write (negative
	// control: must violate mutual exclusion).
	UnawaitedVictim bool
	// MaxStates bounds the exploration (0: 5 million).
	MaxStates int
	// Liveness also checks that no reachable state traps a thread: from every state, every
	// thread has some execution in which it enters the critical section again.
	Liveness bool
}

// MaxThreads is the largest supported thread count.
const MaxThreads = 4

const (
	cohortL = 1
	cohortR = 2
)

// Program counters.
const (
	pcNCS       = iota // reset descriptor: next := 0, budget := -1
	pcSwap             // prev := tail[c]; tail[c] := me
	pcLeader           // budget := B (queue was empty)
	pcLink             // desc[prev].next := me
	pcAwaitBud         // wait budget >= 0
	pcVictim           // victim := c
	pcReadTail         // local leader: t := tail[other]
	pcReadVic          // local leader: v := victim
	pcPoll             // remote leader: read tail[other] and victim, in either order
	pcResetBud         // budget := B after pReacquire
	pcCS               // critical section
	pcUnlockNx         // [T]: if next != 0 goto pass
	pcUnlockCAS        // CAS(tail[c], me, 0)
	pcAwaitNext        // wait next != 0
	pcPass             // desc[next].budget := budget-1
)

var pcNames = []string{"ncs", "swap", "leader", "link", "await-budget", "victim", "read-tail", "read-victim", "poll", "reset-budget", "cs", "unlock-next", "unlock-cas", "await-next", "pass"}

type thread struct {
	pc     int8
	budget int8 // -1 waiting
	next   int8 // 0 none, else thread index+1
	prev   int8
	reacq  bool
	// pt and pv are a remote leader's poll results of the current batch (-1: not read yet).
	pt, pv int8
}

// State is one global state; it is comparable and used as a map key.
type State struct {
	th      [MaxThreads]thread
	tail    [3]int8 // indexed by cohort
	victim  int8
	pending int8 // UnawaitedVictim: cohort value of a posted, unapplied victim write (0 none)
	waiting [3]bool
	bypass  [3]int8 // CS entries of cohort c since the other cohort's leader wrote victim
}

// Result reports an exploration.
type Result struct {
	States      int
	Transitions int
	// MaxBypass is the largest bypass count seen per cohort (index 1 local, 2 remote).
	MaxBypass [3]int
	// Violation describes the first property violated ("" if none), with a trace from the
	// initial state.
	Violation string
	Trace     []string
	Truncated bool
}

type checker struct {
	cfg    Config
	n      int
	cohort [MaxThreads]int8
	budget [3]int8
}

// Explore runs a breadth-first exhaustive search from the initial state.
func Explore(cfg Config) (Result, error) {
	n := cfg.Local + cfg.Remote
	if n < 1 || n > MaxThreads || cfg.Local < 0 || cfg.Remote < 0 {
		return Result{}, fmt.Errorf("model: %d local + %d remote threads (max %d)", cfg.Local, cfg.Remote, MaxThreads)
	}
	if cfg.LocalBudget < 1 || cfg.RemoteBudget < 1 || cfg.LocalBudget > 100 || cfg.RemoteBudget > 100 {
		return Result{}, fmt.Errorf("model: budgets %d/%d out of range", cfg.LocalBudget, cfg.RemoteBudget)
	}
	if cfg.MaxStates == 0 {
		cfg.MaxStates = 5_000_000
	}
	c := &checker{cfg: cfg, n: n, budget: [3]int8{0, int8(cfg.LocalBudget), int8(cfg.RemoteBudget)}}
	for i := 0; i < n; i++ {
		c.cohort[i] = cohortL
		if i >= cfg.Local {
			c.cohort[i] = cohortR
		}
	}
	var init State
	for i := range init.th {
		init.th[i].budget = -1
	}
	type node struct {
		parent int32
		thread int8 // -1: initial state
		pc     int8 // pc the step started from
	}
	seen := map[State]int32{init: 0}
	states := []State{init}
	nodes := []node{{-1, -1, 0}}
	var res Result
	var edges []edge
	trace := func(i int32) []string {
		var out []string
		for ; i >= 0; i = nodes[i].parent {
			out = append(out, c.label(nodes[i].thread, nodes[i].pc))
		}
		for l, r := 0, len(out)-1; l < r; l, r = l+1, r-1 {
			out[l], out[r] = out[r], out[l]
		}
		return out
	}
	for head := 0; head < len(states); head++ {
		s := states[head]
		enabled := 0
		for i := 0; i < 2*c.n+1; i++ {
			next, ok, bad := c.step(s, i)
			if !ok {
				continue
			}
			enabled++
			res.Transitions++
			for k := 1; k <= 2; k++ {
				res.MaxBypass[k] = max(res.MaxBypass[k], int(next.bypass[k]))
			}
			entered := i < c.n && next.th[i].pc == pcCS && s.th[i].pc != pcCS
			if to, dup := seen[next]; dup && bad == "" {
				if cfg.Liveness {
					edges = append(edges, edge{int32(head), to, int8(i), entered})
				}
				continue
			}
			if len(states) >= cfg.MaxStates {
				res.Truncated = true
				res.States = len(states)
				return res, nil
			}
			seen[next] = int32(len(states))
			if cfg.Liveness {
				edges = append(edges, edge{int32(head), int32(len(states)), int8(i), entered})
			}
			states = append(states, next)
			nodes = append(nodes, node{int32(head), int8(i), s.pc(i)})
			if bad != "" {
				res.Violation = bad
				res.Trace = trace(int32(len(states) - 1))
				res.States = len(states)
				return res, nil
			}
		}
		if enabled == 0 {
			res.Violation = "deadlock: no thread can move"
			res.Trace = trace(int32(head))
			res.States = len(states)
			return res, nil
		}
	}
	res.States = len(states)
	if cfg.Liveness {
		if i, st := c.trapped(len(states), edges); st >= 0 {
			res.Violation = fmt.Sprintf("liveness: from this state thread t%d can never enter the critical section", i)
			res.Trace = trace(int32(st))
		}
	}
	return res, nil
}

type edge struct {
	from, to int32
	thread   int8
	enter    bool // the step takes thread into the critical section
}

// trapped returns a thread and a reachable state from which no execution lets that thread
// enter the critical section again (-1 if there is none): for each thread, the states that can
// reach one of its entering steps are computed backwards over the transition graph.
func (c *checker) trapped(n int, edges []edge) (int, int) {
	rev := NewReverse(n, edges, func(e edge) (int32, int32) { return e.from, e.to })
	good := make([]bool, n)
	for t := 0; t < c.n; t++ {
		clear(good)
		for _, e := range edges {
			if e.enter && int(e.thread) == t {
				good[e.from] = true
			}
		}
		rev.CanReach(good)
		for st, ok := range good {
			if !ok {
				return t, st
			}
		}
	}
	return -1, -1
}

func (s *State) pc(i int) int8 {
	if i >= MaxThreads {
		return 0
	}
	return s.th[i].pc
}

func (c *checker) label(i, pc int8) string {
	switch {
	case i < 0:
		return "init"
	case int(i) == c.n:
		return "nic: posted victim write applied"
	case int(i) > c.n:
		return fmt.Sprintf("t%d(R) poll: victim read", int(i)-c.n-1)
	case pc == pcPoll:
		return fmt.Sprintf("t%d(R) poll: tail read", i)
	case c.cohort[i] == cohortL:
		return fmt.Sprintf("t%d(L) %s", i, pcNames[pc])
	}
	return fmt.Sprintf("t%d(R) %s", i, pcNames[pc])
}

// step executes thread i's next step in s. i == n is the NIC applying a pending victim write;
// i == n+1+k is the victim read of remote leader k's batched poll (its tail read is thread k's
// own step), so the two reads happen in either order. It returns the successor, whether the
// step was enabled, and a violation, if any.
func (c *checker) step(s State, i int) (State, bool, string) {
	if i == c.n {
		if s.pending == 0 {
			return s, false, ""
		}
		s.victim, s.pending = s.pending, 0
		return s, true, ""
	}
	if i > c.n {
		k := i - c.n - 1
		t := &s.th[k]
		if t.pc != pcPoll || t.pv >= 0 {
			return s, false, ""
		}
		t.pv = s.victim
		return s, true, c.polled(&s, k)
	}
	t := &s.th[i]
	me := int8(i + 1)
	co := c.cohort[i]
	other := 3 - co
	var bad string
	switch t.pc {
	case pcNCS:
		t.next, t.budget, t.reacq = 0, -1, false
		t.pc = pcSwap
	case pcSwap:
		t.prev = s.tail[co]
		s.tail[co] = me
		if t.prev == 0 {
			t.pc = pcLeader
		} else {
			t.pc = pcLink
		}
	case pcLeader:
		t.budget = c.budget[co]
		t.pc = pcVictim
	case pcLink:
		s.th[t.prev-1].next = me
		t.pc = pcAwaitBud
	case pcAwaitBud:
		if t.budget < 0 {
			return s, false, ""
		}
		if t.budget == 0 {
			t.reacq = true
			t.pc = pcVictim
		} else {
			t.pc = pcCS
			bad = c.enter(&s, i)
		}
	case pcVictim:
		if c.cfg.UnawaitedVictim && co == cohortR {
			s.pending = co
		} else {
			s.victim = co
		}
		s.waiting[co] = true
		s.bypass[other] = 0
		if co == cohortR {
			t.pc, t.pt, t.pv = pcPoll, -1, -1
		} else {
			t.pc = pcReadTail
		}
	case pcPoll:
		if t.pt >= 0 {
			return s, false, "" // waiting for the victim read of the same batch
		}
		t.pt = s.tail[other]
		bad = c.polled(&s, i)
	case pcReadTail:
		if s.tail[other] == 0 {
			bad = c.afterPeterson(&s, i)
		} else {
			t.pc = pcReadVic
		}
	case pcReadVic:
		if s.victim != co {
			bad = c.afterPeterson(&s, i)
		} else {
			t.pc = pcReadTail
		}
	case pcResetBud:
		t.budget = c.budget[co]
		t.pc = pcCS
		bad = c.enter(&s, i)
	case pcCS:
		if c.cfg.NextFirst {
			t.pc = pcUnlockNx
		} else {
			t.pc = pcUnlockCAS
		}
	case pcUnlockNx:
		if t.next != 0 {
			t.pc = pcPass
		} else {
			t.pc = pcUnlockCAS
		}
	case pcUnlockCAS:
		if s.tail[co] == me {
			s.tail[co] = 0
			t.pc = pcNCS
		} else {
			t.pc = pcAwaitNext
		}
	case pcAwaitNext:
		if t.next == 0 {
			return s, false, ""
		}
		t.pc = pcPass
	case pcPass:
		s.th[t.next-1].budget = t.budget - 1
		t.pc = pcNCS
	}
	return s, true, bad
}

// polled evaluates remote leader i's poll once both reads of the batch were applied: it leaves
// the Peterson wait, or posts the next poll.
func (c *checker) polled(s *State, i int) string {
	t := &s.th[i]
	if t.pt < 0 || t.pv < 0 {
		return ""
	}
	done := t.pt == 0 || t.pv != c.cohort[i]
	t.pt, t.pv = -1, -1
	if !done {
		return ""
	}
	t.pt, t.pv = 0, 0
	return c.afterPeterson(s, i)
}

// afterPeterson leaves the Peterson wait: a reacquirer resets its budget first, a leader
// enters the critical section.
func (c *checker) afterPeterson(s *State, i int) string {
	if s.th[i].reacq {
		s.th[i].pc = pcResetBud
		return ""
	}
	s.th[i].pc = pcCS
	return c.enter(s, i)
}

// enter checks the properties when thread i reaches the critical section.
func (c *checker) enter(s *State, i int) string {
	co := c.cohort[i]
	other := 3 - co
	var holders []string
	for j := 0; j < c.n; j++ {
		if j != i && s.th[j].pc >= pcCS {
			holders = append(holders, fmt.Sprintf("t%d", j))
		}
	}
	if len(holders) > 0 {
		return fmt.Sprintf("mutual exclusion: t%d entered while %s held the lock", i, strings.Join(holders, ","))
	}
	if b := s.th[i].budget; b < 1 || b > c.budget[co] {
		return fmt.Sprintf("budget: t%d entered with budget %d", i, b)
	}
	s.waiting[co] = false
	if s.waiting[other] {
		s.bypass[co]++
		if s.bypass[co] > c.budget[co] {
			return fmt.Sprintf("bypass: %d entries of cohort %d while the other leader waited (budget %d)", s.bypass[co], co, c.budget[co])
		}
	}
	return ""
}
