package alock_test

// Scenarios 3-10 and 12-14 of docs/rdma.md, Test scenarios. Scenario 11 (exhaustive interleavings)
// is in rdma/model, scenario 15 (the lock-table replica) in rdma/bench, scenarios 1-2 (negative
// and positive controls of the emulator) in rdma/locks. Randomized runs log their seed; rerun
// one with RDMA_SEED=<seed>.

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/locks"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// simUntil bounds every simulated run (virtual ns).
const simUntil = 1 << 42

// recorder collects probe events.
type recorder struct {
	mu  sync.Mutex
	evs []alock.Event
	// hook runs inside the probe (after recording), e.g. to inject delays.
	hook func(alock.Event)
}

func (r *recorder) probe(e alock.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
	if r.hook != nil {
		r.hook(e)
	}
}

func (r *recorder) events() []alock.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]alock.Event(nil), r.evs...)
}

func newALock(t *testing.T, cfg alock.Config, r *recorder) *alock.ALock {
	t.Helper()
	if r != nil {
		cfg.Probe = r.probe
	}
	a, err := alock.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// checkME asserts P1 (no overlap), a correct protected counter and that every thread finished
// all its operations (P2/P3 for bounded runs).
func checkME(t *testing.T, res rdmatest.Result, w rdmatest.Workload) {
	t.Helper()
	if res.Violations != 0 {
		t.Fatalf("mutual exclusion violated %d times: %s", res.Violations, res.First)
	}
	var total int64
	for i, o := range res.ThreadOps {
		if o != int64(w.Ops) {
			t.Fatalf("thread %d did %d of %d ops", i, o, w.Ops)
		}
		total += o
	}
	if res.Counted != uint64(total) || res.Entries != total {
		t.Fatalf("counter %d, entries %d, want %d", res.Counted, res.Entries, total)
	}
}

// Scenario 3: one hot lock, mixed cohorts, saturating, random delays on every verb.
func TestSaturatingMixedCohorts(t *testing.T) {
	s := rdmatest.Seed(t)
	t.Run("sim", func(t *testing.T) {
		// One lock on node 0; half of the 32 threads are local to it (50% locality).
		w := rdmatest.Workload{Alg: newALock(t, alock.Config{}, nil), Locks: 1, Threads: []int{16, 6, 5, 5}, Ops: 100, Seed: s}
		res := rdmatest.RunSim(t, w, sim.Config{Seed: s, OpJitter: 2000}, simUntil)
		checkME(t, res, w)
	})
	t.Run("emu", func(t *testing.T) {
		w := rdmatest.Workload{Alg: newALock(t, alock.Config{}, nil), Locks: 1, Threads: []int{3, 2, 2}, Ops: 100, Seed: s,
			Pause: rdmatest.Think(1)}
		res := rdmatest.RunEmu(t, w, emu.Config{Seed: s, OpDelay: 20 * time.Microsecond, AtomicWindowYields: 1})
		checkME(t, res, w)
	})
	t.Run("emu-next-first", func(t *testing.T) {
		w := rdmatest.Workload{Alg: newALock(t, alock.Config{UnlockVariant: alock.UnlockNextFirst}, nil), Locks: 2,
			Threads: []int{2, 2, 2}, Ops: 100, Seed: s, Locality: 0.5}
		res := rdmatest.RunEmu(t, w, emu.Config{Seed: s, OpDelay: 10 * time.Microsecond, AtomicWindowYields: 1})
		checkME(t, res, w)
	})
}

// throughput runs w in virtual time and returns acquisitions per virtual second.
func throughput(t *testing.T, w rdmatest.Workload, cfg sim.Config) (float64, rdmatest.Result) {
	t.Helper()
	cfg.Nodes = len(w.Threads)
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rdmatest.Run(&rdmatest.SimFabric{S: s, Until: 1 << 42}, w)
	if err != nil {
		t.Fatal(err)
	}
	checkME(t, res, w)
	return float64(res.Entries) / (float64(s.Now()) / 1e9), res
}

// Scenario 4: 100% locality: local threads issue no verbs at all (P4), and ALock's throughput
// is far above the loopback competitors under the cost model.
func TestFullLocality(t *testing.T) {
	s := rdmatest.Seed(t)
	w := rdmatest.Workload{Locks: 4, Threads: []int{4, 4}, Ops: 200, Seed: s, Locality: 1}
	w.Alg = newALock(t, alock.Config{}, nil)
	tpA, res := throughput(t, w, sim.Config{Seed: s})
	for i, st := range res.Stats {
		// The detector's own words are local too, so every verb would be a lock verb.
		if st.Remote() != 0 {
			t.Fatalf("thread %d issued %d verbs with 100%% locality", i, st.Remote())
		}
	}
	w.Alg = locks.MCS{}
	tpM, _ := throughput(t, w, sim.Config{Seed: s})
	w.Alg = locks.Spin{}
	tpS, _ := throughput(t, w, sim.Config{Seed: s})
	t.Logf("acquisitions/s: alock %.3g, mcs %.3g (%.1fx), spin %.3g (%.1fx)", tpA, tpM, tpA/tpM, tpS, tpA/tpS)
	if tpA < 5*tpM || tpA < 5*tpS {
		t.Fatalf("ALock %.3g is not far above MCS %.3g and spinlock %.3g at 100%% locality", tpA, tpM, tpS)
	}
}

// Scenario 5: one remote thread on one lock: exact verb counts per operation, no verbs while
// queued (P12), and the contended unlock.
func TestRemoteOpCounts(t *testing.T) {
	s, err := sim.New(sim.Config{Nodes: 3})
	if err != nil {
		t.Fatal(err)
	}
	a := newALock(t, alock.Config{}, nil)
	tbl, err := alock.NewTable(s.Endpoint(0), 1)
	if err != nil {
		t.Fatal(err)
	}
	l := tbl.Lock(0)
	type counts struct{ lock, unlock verbs.StatsSnapshot }
	var c1, c2 counts
	held := false // thread 2 enqueues only once thread 1 holds the lock (one sim thread runs at a time)
	var queuedAt verbs.StatsSnapshot
	s.Go(1, func(ep verbs.Endpoint) error {
		h, err := a.NewHandle(ep)
		if err != nil {
			return err
		}
		st := ep.Stats()
		// Uncontended lock and unlock.
		s0 := st.Snapshot()
		if err := h.Lock(l); err != nil {
			return err
		}
		s1 := st.Snapshot()
		if err := h.Unlock(l); err != nil {
			return err
		}
		c1 = counts{lock: s1.Sub(s0), unlock: st.Snapshot().Sub(s1)}
		// Contended: hold the lock until thread 2 is queued behind us, then release.
		if err := h.Lock(l); err != nil {
			return err
		}
		held = true
		m := ep.Local()
		for i := 0; i < 2000; i++ { // hold ~50us of virtual time; thread 2 enqueues meanwhile
			m.Store(0, uint64(i))
		}
		s2 := st.Snapshot()
		if err := h.Unlock(l); err != nil {
			return err
		}
		c2.unlock = st.Snapshot().Sub(s2)
		return nil
	})
	s.Go(2, func(ep verbs.Endpoint) error {
		h, err := a.NewHandle(ep)
		if err != nil {
			return err
		}
		m := ep.Local()
		for !held {
			m.Store(0, 0) // a costed local op: lets virtual time pass
		}
		st := ep.Stats()
		s0 := st.Snapshot()
		// Lock: rCAS (fails: learns the holder), rCAS, rWrite(prev.next), then local spin.
		if err := h.Lock(l); err != nil {
			return err
		}
		queuedAt = st.Snapshot()
		c2.lock = queuedAt.Sub(s0)
		return h.Unlock(l)
	})
	if err := s.Run(1 << 40); err != nil {
		t.Fatal(err)
	}
	want := func(name string, got verbs.StatsSnapshot, r, w, c uint64) {
		t.Helper()
		if got.Reads != r || got.Writes != w || got.CASes != c || got.FAAs != 0 || got.RemoteSpins != 0 {
			t.Errorf("%s: got %d reads %d writes %d CAS %d spins, want %d/%d/%d/0", name, got.Reads, got.Writes, got.CASes, got.RemoteSpins, r, w, c)
		}
	}
	// Uncontended lock: rCAS enqueue, the awaited victim rWrite, and one poll of tail_l and
	// victim (one three-word READ).
	want("uncontended lock", c1.lock, 1, 1, 1)
	want("uncontended unlock", c1.unlock, 0, 0, 1)
	want("contended unlock", c2.unlock, 0, 1, 1)
	// Queued lock: 2 CAS (the first learns the tail), 1 link write, and nothing while waiting:
	// the pass arrives by the holder's rWrite into our descriptor.
	want("queued lock", c2.lock, 0, 1, 2)
	if c2.lock.LocalSpins == 0 {
		t.Errorf("queued thread never spun locally; the test did not queue it")
	}
}

// cohortRuns scans the CS entry sequence of one lock and returns, per cohort, the longest run
// of consecutive entries made while a leader of the other cohort was waiting in Peterson
// (between its EvVictim and its EvEnter), and the number of pReacquires.
func cohortRuns(evs []alock.Event) (maxRun map[alock.Cohort]int, reacq map[alock.Cohort]int, entries map[alock.Cohort]int) {
	maxRun, reacq, entries = map[alock.Cohort]int{}, map[alock.Cohort]int{}, map[alock.Cohort]int{}
	waiting := map[alock.Cohort]bool{}
	run := map[alock.Cohort]int{}
	for _, e := range evs {
		switch e.Kind {
		case alock.EvVictim:
			waiting[e.Cohort] = true
			run[e.Cohort.Other()] = 0
			if e.Reacquired {
				reacq[e.Cohort]++
			}
		case alock.EvEnter:
			entries[e.Cohort]++
			waiting[e.Cohort] = false
			if waiting[e.Cohort.Other()] {
				run[e.Cohort]++
				maxRun[e.Cohort] = max(maxRun[e.Cohort], run[e.Cohort])
			}
		}
	}
	return
}

// Scenario 6 (P8) and 7 (P9): budget-run and bypass bounds with both cohorts saturated, and the
// lopsided 1-vs-many cases. The run bound is reached, showing that passing happens.
func TestBudgetAndBypassBounds(t *testing.T) {
	s := rdmatest.Seed(t)
	cases := []struct {
		name    string
		threads []int
		lb, rb  int64
	}{
		{"both-saturated", []int{6, 3, 3}, 5, 20},
		{"one-remote-vs-15-local", []int{15, 1}, 5, 20},
		{"one-local-vs-many-remote", []int{1, 8, 8}, 5, 20},
		{"small-budgets", []int{4, 2, 2}, 2, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{}
			a := newALock(t, alock.Config{LocalBudget: tc.lb, RemoteBudget: tc.rb}, r)
			w := rdmatest.Workload{Alg: a, Locks: 1, Threads: tc.threads, Ops: 120, Seed: s}
			res := rdmatest.RunSim(t, w, sim.Config{Seed: s, OpJitter: 500}, simUntil)
			checkME(t, res, w)
			maxRun, reacq, entries := cohortRuns(r.events())
			t.Logf("max runs while other waits: local %d (budget %d), remote %d (budget %d); reacquires local %d remote %d; entries %v",
				maxRun[alock.Local], tc.lb, maxRun[alock.Remote], tc.rb, reacq[alock.Local], reacq[alock.Remote], entries)
			if maxRun[alock.Local] > int(tc.lb) || maxRun[alock.Remote] > int(tc.rb) {
				t.Fatalf("bypass bound broken: local run %d > %d or remote run %d > %d", maxRun[alock.Local], tc.lb, maxRun[alock.Remote], tc.rb)
			}
			// With both cohorts saturated the bounds are reached and reacquires happen about
			// once per budget's worth of entries.
			if tc.threads[0] > 1 && tc.threads[1] > 1 {
				if maxRun[alock.Local] < int(tc.lb)-1 || maxRun[alock.Remote] < int(tc.rb)-1 {
					t.Fatalf("runs %d/%d never approach the budgets %d/%d: passing does not happen", maxRun[alock.Local], maxRun[alock.Remote], tc.lb, tc.rb)
				}
				for c, b := range map[alock.Cohort]int64{alock.Local: tc.lb, alock.Remote: tc.rb} {
					lo, hi := entries[c]/int(b)/2, entries[c]/int(b)+2
					if reacq[c] < lo || reacq[c] > hi {
						t.Fatalf("%v: %d reacquires for %d entries with budget %d, want in [%d,%d]", c, reacq[c], entries[c], b, lo, hi)
					}
				}
			}
		})
	}
}

// Scenario 8: budget 1: every passed acquisition receives 0 and pReacquires, so no thread
// ever enters by a plain pass, and reacquires equal passes (links).
func TestBudgetOne(t *testing.T) {
	s := rdmatest.Seed(t)
	r := &recorder{}
	a := newALock(t, alock.Config{LocalBudget: 1, RemoteBudget: 1}, r)
	w := rdmatest.Workload{Alg: a, Locks: 1, Threads: []int{4, 3, 3}, Ops: 100, Seed: s}
	res := rdmatest.RunSim(t, w, sim.Config{Seed: s, OpJitter: 1000}, simUntil)
	checkME(t, res, w)
	var links, reacq, passed int
	for _, e := range r.events() {
		switch {
		case e.Kind == alock.EvLinked:
			links++
		case e.Kind == alock.EvEnter && e.Reacquired:
			reacq++
		case e.Kind == alock.EvEnter && e.Passed:
			passed++
		}
	}
	if passed != 0 || reacq != links || links == 0 {
		t.Fatalf("budget 1: %d plain passes, %d reacquires, %d links", passed, reacq, links)
	}
}

// Scenario 9 (P10, P5): only remote threads contend: a budget-0 receiver reacquires at once
// (its next CS entry is its own), resets its budget, and tail_r stays non-null meanwhile.
func TestReacquireWithoutOpposition(t *testing.T) {
	sd := rdmatest.Seed(t)
	s, err := sim.New(sim.Config{Nodes: 3, Seed: sd, OpJitter: 1000})
	if err != nil {
		t.Fatal(err)
	}
	setup := s.Endpoint(0)
	r := &recorder{}
	var tailNull int
	r.hook = func(e alock.Event) {
		if e.Kind == alock.EvVictim && e.Reacquired {
			if v, _ := verbs.Read(setup, e.Lock.Add(alock.OffTailR)); v == 0 {
				tailNull++
			}
		}
	}
	a := newALock(t, alock.Config{RemoteBudget: 3}, r)
	w := rdmatest.Workload{Alg: a, Locks: 1, Threads: []int{0, 3, 3}, Ops: 100, Seed: sd}
	res, err := rdmatest.Run(&rdmatest.SimFabric{S: s, Until: 1 << 42}, w)
	if err != nil {
		t.Fatal(err)
	}
	checkME(t, res, w)
	evs := r.events()
	var re int
	for i, e := range evs {
		if e.Kind != alock.EvVictim || !e.Reacquired {
			continue
		}
		re++
		// The next CS entry must be the same handle's, with the full budget.
		j := i + 1
		for j < len(evs) && evs[j].Kind != alock.EvEnter {
			j++
		}
		if j == len(evs) || evs[j].Handle != e.Handle || evs[j].Budget != 3 {
			t.Fatalf("reacquire by %d not followed by its own full-budget entry: %+v", e.Handle, evs[j:min(len(evs), j+1)])
		}
	}
	if re == 0 || tailNull != 0 {
		t.Fatalf("%d reacquires, %d with a null tail_r", re, tailNull)
	}
}

// Scenario 10: the MCS unlock race. A successor that swapped the tail is delayed before linking
// itself; the holder's unlock CAS fails, it waits for next and then passes holder.budget-1
// (P7). Real goroutines, the delay is a sleep in the probe.
func TestUnlockRace(t *testing.T) {
	s := rdmatest.Seed(t)
	for _, variant := range []int{alock.UnlockCASFirst, alock.UnlockNextFirst} {
		t.Run(fmt.Sprint("variant", variant), func(t *testing.T) {
			r := &recorder{hook: func(e alock.Event) {
				if e.Kind == alock.EvEnqueued && e.Prev != 0 {
					time.Sleep(300 * time.Microsecond)
				}
			}}
			a := newALock(t, alock.Config{UnlockVariant: variant}, r)
			// The holder stays inside for 100us, so others queue behind it and the delayed
			// successor is still unlinked when the holder releases.
			w := rdmatest.Workload{Alg: a, Locks: 1, Threads: []int{2, 2}, Ops: 20, Seed: s,
				Pause: func(verbs.Endpoint) { time.Sleep(100 * time.Microsecond) }}
			res := rdmatest.RunEmu(t, w, emu.Config{Seed: s})
			checkME(t, res, w)
			checkPasses(t, r.events(), a.Config())
		})
	}
}

// checkPasses verifies P7 per cohort: a thread entering by a pass has its predecessor's budget
// minus one, every entry's budget lies in [1, B], and counts the waits for a late successor.
func checkPasses(t *testing.T, evs []alock.Event, cfg alock.Config) {
	t.Helper()
	last := map[alock.Cohort]int64{}
	waits := 0
	for _, e := range evs {
		switch e.Kind {
		case alock.EvWaitNext:
			waits++
		case alock.EvExit:
			last[e.Cohort] = e.Budget
		case alock.EvEnter:
			b := cfg.LocalBudget
			if e.Cohort == alock.Remote {
				b = cfg.RemoteBudget
			}
			if e.Budget < 1 || e.Budget > b {
				t.Fatalf("entry with budget %d outside [1,%d]", e.Budget, b)
			}
			if e.Passed && e.Budget != last[e.Cohort]-1 {
				t.Fatalf("%v pass carried %d after a holder with %d", e.Cohort, e.Budget, last[e.Cohort])
			}
		}
	}
	if waits == 0 {
		t.Fatal("the unlock race never happened: no holder waited for a late successor")
	}
	t.Logf("%d unlocks waited for a late successor", waits)
}

// Scenario 12 (P11): every access is audited: no remote RMW on tail_l, victim or local
// descriptors; no local write or RMW on tail_r; remote descriptors are touched remotely only by
// rWrite. Detector words are excluded (the detector mixes classes on purpose).
func TestAsymmetricAtomicityAudit(t *testing.T) {
	s := rdmatest.Seed(t)
	var mu sync.Mutex
	var accesses []verbs.Access
	tracer := func(a verbs.Access) {
		mu.Lock()
		accesses = append(accesses, a)
		mu.Unlock()
	}
	var handles []*alock.Handle
	a := newALock(t, alock.Config{}, nil)
	alg := &captureAlg{a: a, handles: &handles, mu: &mu}
	w := rdmatest.Workload{Alg: alg, Locks: 3, Threads: []int{3, 3, 3}, Ops: 80, Seed: s, Locality: 0.5}
	cfg := sim.Config{Nodes: 3, Seed: s, OpJitter: 1000, Tracer: tracer}
	sm, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := rdmatest.Run(&rdmatest.SimFabric{S: sm, Until: 1 << 42}, w)
	if err != nil {
		t.Fatal(err)
	}
	checkME(t, res, w)
	role := map[verbs.Ptr]string{}
	for _, l := range res.Locks {
		role[l.Add(alock.OffTailR)] = "tail_r"
		role[l.Add(alock.OffTailL)] = "tail_l"
		role[l.Add(alock.OffVictim)] = "victim"
	}
	for _, h := range handles {
		ld, rd := h.Descriptors()
		role[ld], role[ld.Add(32)] = "ld", "ld"
		role[rd], role[rd.Add(32)] = "rd", "rd"
	}
	seen := map[string]int{}
	for _, ac := range accesses {
		r, ok := role[ac.Word]
		if !ok {
			continue
		}
		rmw := ac.Op == verbs.OpCAS || ac.Op == verbs.OpFAA
		key := fmt.Sprintf("%s %v %v", r, ac.Class, ac.Op)
		seen[key]++
		bad := false
		switch r {
		case "tail_l", "victim", "ld":
			bad = ac.Class == verbs.ClassRemote && (rmw || r == "ld" || r == "tail_l" && ac.Op != verbs.OpRead)
		case "tail_r":
			bad = ac.Class == verbs.ClassLocal && ac.Op != verbs.OpRead
		case "rd":
			bad = ac.Class == verbs.ClassRemote && ac.Op != verbs.OpWrite
		}
		if bad {
			t.Fatalf("forbidden access: %s (initiator %d)", key, ac.Initiator)
		}
	}
	t.Logf("access classes: %v", seen)
	for _, must := range []string{"tail_r remote CAS", "tail_l local CAS", "tail_l remote READ", "tail_r local READ", "victim remote WRITE", "victim local WRITE", "rd remote WRITE"} {
		if seen[must] == 0 {
			t.Errorf("audit saw no %q: the workload did not exercise it", must)
		}
	}
}

type captureAlg struct {
	a       *alock.ALock
	mu      *sync.Mutex
	handles *[]*alock.Handle
}

func (c *captureAlg) Name() string { return c.a.Name() }
func (c *captureAlg) NewLocker(ep verbs.Endpoint) (locks.Locker, error) {
	h, err := c.a.NewHandle(ep)
	if err == nil {
		c.mu.Lock()
		*c.handles = append(*c.handles, h)
		c.mu.Unlock()
	}
	return h, err
}

// Scenario 13 (P6): within a cohort, CS entry order follows the queue: a thread that enqueued
// behind descriptor d enters right after d's owner among that cohort's entries.
func TestIntraCohortFIFO(t *testing.T) {
	s := rdmatest.Seed(t)
	r := &recorder{}
	var handles []*alock.Handle
	var mu sync.Mutex
	a := newALock(t, alock.Config{}, r)
	alg := &captureAlg{a: a, handles: &handles, mu: &mu}
	w := rdmatest.Workload{Alg: alg, Locks: 1, Threads: []int{5, 3, 3}, Ops: 100, Seed: s}
	res := rdmatest.RunSim(t, w, sim.Config{Seed: s, OpJitter: 2000}, simUntil)
	checkME(t, res, w)
	owner := map[verbs.Ptr]int{}
	for _, h := range handles {
		ld, rd := h.Descriptors()
		owner[ld], owner[rd] = h.ID(), h.ID()
	}
	prevOf := map[int]verbs.Ptr{}
	lastEntry := map[alock.Cohort]int{}
	checked := 0
	for _, e := range r.events() {
		switch e.Kind {
		case alock.EvEnqueued:
			prevOf[e.Handle] = e.Prev
		case alock.EvEnter:
			if p := prevOf[e.Handle]; p != 0 {
				if want := owner[p]; lastEntry[e.Cohort] != want {
					t.Fatalf("%v: handle %d queued behind %d but entered after %d", e.Cohort, e.Handle, want, lastEntry[e.Cohort])
				}
				checked++
			}
			lastEntry[e.Cohort] = e.Handle
		}
	}
	if checked == 0 {
		t.Fatal("no queued entries to check")
	}
	t.Logf("%d queued entries followed their predecessor", checked)
}

// Scenario 14: descriptor reuse across many locks on different nodes; each thread is local for
// some locks and remote for others. Stale next/budget values must never cause a spurious pass
// or a hang.
func TestManyLocksDescriptorReuse(t *testing.T) {
	s := rdmatest.Seed(t)
	for _, n := range []int{20, 100, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			w := rdmatest.Workload{Alg: newALock(t, alock.Config{}, nil), Locks: n, Threads: []int{4, 4, 4, 4}, Ops: 150, Seed: s, Locality: 0.5}
			res := rdmatest.RunSim(t, w, sim.Config{Seed: s, OpJitter: 1000}, simUntil)
			checkME(t, res, w)
		})
	}
	t.Run("emu", func(t *testing.T) {
		w := rdmatest.Workload{Alg: newALock(t, alock.Config{LocalBudget: 2, RemoteBudget: 2}, nil), Locks: 6, Threads: []int{2, 2, 2}, Ops: 150, Seed: s, Locality: 0.5}
		res := rdmatest.RunEmu(t, w, emu.Config{Seed: s, AtomicWindowYields: 1})
		checkME(t, res, w)
	})
}

// Negative control (c) of docs/rdma.md: ALock with an unawaited victim rWrite must violate mutual
// exclusion under delayed application; the same workload with the awaited write passes.
func TestUnawaitedVictimFails(t *testing.T) {
	base := rdmatest.Seed(t)
	for i := int64(0); i < 3; i++ {
		w := rdmatest.Workload{Alg: newALock(t, alock.Config{UnsafeUnawaitedVictim: true}, nil), Locks: 1, Threads: []int{2, 2}, Ops: 300, Seed: base + i}
		cfg := sim.Config{Nodes: 2, Seed: base + i, UnsignaledJitter: 50000}
		sm, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := rdmatest.Run(&rdmatest.SimFabric{S: sm, Until: 1 << 42}, w)
		if err != nil {
			t.Fatal(err)
		}
		if res.Violations == 0 {
			t.Fatalf("seed %d: ALock with an unawaited victim write kept mutual exclusion: the emulator does not delay unsignaled verbs", base+i)
		}
		t.Logf("seed %d: %d violations, first: %s", base+i, res.Violations, res.First)
		w.Alg = newALock(t, alock.Config{}, nil)
		checkME(t, rdmatest.RunSim(t, w, cfg, simUntil), w)
	}
	// Real time: the victim write is applied by a goroutine after a random delay. The local
	// thread often enters uncontended (victim = LOCAL) and stays inside for 200us; a remote
	// leader arriving meanwhile reads the local tail and the stale victim before its own write
	// lands, and enters too.
	sleep := func(d time.Duration) func(verbs.Endpoint) { return func(verbs.Endpoint) { time.Sleep(d) } }
	for attempt := 0; ; attempt++ {
		w := rdmatest.Workload{Alg: newALock(t, alock.Config{UnsafeUnawaitedVictim: true}, nil), Locks: 1, Threads: []int{1, 1}, Ops: 40, Seed: base,
			Pause: sleep(200 * time.Microsecond), Think: sleep(300 * time.Microsecond)}
		res := rdmatest.RunEmu(t, w, emu.Config{Seed: base, UnsignaledDelay: 500 * time.Microsecond})
		if res.Violations > 0 {
			t.Logf("emu attempt %d: %d violations, first: %s", attempt, res.Violations, res.First)
			break
		}
		if attempt == 4 {
			t.Fatal("emu: unawaited victim never violated mutual exclusion in 5 attempts")
		}
	}
}
