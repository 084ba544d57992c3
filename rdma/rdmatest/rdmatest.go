// Package rdmatest is the verification harness of the RDMA tier: a mutual-exclusion detector
// and a lock workload runner that works on both backends (rdma/emu in real time, rdma/sim in
// virtual time).
package rdmatest

import (
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/locks"
	"github.com/netlock-go/netlock/rdma/sim"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Detector is the mutual-exclusion detector of docs/rdma.md, Test scenarios, for one lock. On entry a
// thread CASes an owner word from 0 to its id through its own class path (CPU CAS on the home
// node, rCAS elsewhere) and must succeed; in the critical section it increments a non-atomic
// counter (load+store locally, rRead+rWrite remotely); on exit it clears the owner. An
// independent Go-side occupancy counter (outside emulated memory) also flags overlaps.
type Detector struct {
	owner, counter verbs.Ptr
	inside         atomic.Int32
	violations     atomic.Int64
	entries        atomic.Int64
	firstMu        sync.Mutex
	first          string
}

// NewDetector allocates the detector's words on home's node.
func NewDetector(home verbs.Endpoint) (*Detector, error) {
	p, err := home.Alloc(64)
	if err != nil {
		return nil, fmt.Errorf("detector: %w", err)
	}
	return &Detector{owner: p, counter: p.Add(8)}, nil
}

// AttachDetector uses a detector whose words another process allocated (the Go-side occupancy
// check then only covers this process's threads).
func AttachDetector(owner, counter verbs.Ptr) *Detector {
	return &Detector{owner: owner, counter: counter}
}

// Words returns the detector's owner and counter words (to exclude them from audits).
func (d *Detector) Words() (owner, counter verbs.Ptr) { return d.owner, d.counter }

func (d *Detector) violation(format string, args ...any) {
	if d.violations.Add(1) == 1 {
		d.firstMu.Lock()
		d.first = fmt.Sprintf(format, args...)
		d.firstMu.Unlock()
	}
}

// CS runs one critical section for thread id (non-zero) on ep; pause, if set, is called in the
// middle to stretch the section.
func (d *Detector) CS(ep verbs.Endpoint, id uint64, pause func()) error {
	d.entries.Add(1)
	if n := d.inside.Add(1); n != 1 {
		d.violation("thread %d entered with %d threads inside", id, n-1)
	}
	defer d.inside.Add(-1)
	local := d.owner.Node() == ep.Node()
	m := ep.Local()
	var owned bool
	if local {
		owned = m.CAS(d.owner.Offset(), 0, id)
	} else {
		old, err := verbs.CAS(ep, d.owner, 0, id)
		if err != nil {
			return err
		}
		owned = old == 0
	}
	if !owned {
		d.violation("thread %d found the owner word taken", id)
	}
	var v uint64
	if local {
		v = m.Load(d.counter.Offset())
	} else {
		var err error
		if v, err = verbs.Read(ep, d.counter); err != nil {
			return err
		}
	}
	if pause != nil {
		pause()
	}
	if local {
		m.Store(d.counter.Offset(), v+1)
		if owned {
			m.Store(d.owner.Offset(), 0)
		}
		return nil
	}
	if err := verbs.Write(ep, d.counter, v+1); err != nil {
		return err
	}
	if owned {
		return verbs.Write(ep, d.owner, 0)
	}
	return nil
}

// Violations is the number of detected overlaps so far.
func (d *Detector) Violations() int64 { return d.violations.Load() }

// Entries is the number of critical sections run.
func (d *Detector) Entries() int64 { return d.entries.Load() }

// First describes the first violation.
func (d *Detector) First() string {
	d.firstMu.Lock()
	defer d.firstMu.Unlock()
	return d.first
}

// Count reads the protected counter through ep (use after all threads stopped).
func (d *Detector) Count(ep verbs.Endpoint) (uint64, error) { return verbs.Read(ep, d.counter) }

// Fabric starts threads on nodes and waits for them.
type Fabric interface {
	// Nodes is the number of nodes.
	Nodes() int
	// Endpoint returns a fresh endpoint on node i (for setup, before Go).
	Endpoint(node int) verbs.Endpoint
	// Go starts a thread on node i.
	Go(node int, fn func(ep verbs.Endpoint) error)
	// Wait runs/joins all threads and returns the first error.
	Wait() error
}

// EmuFabric adapts an emu.Cluster.
type EmuFabric struct {
	C    *emu.Cluster
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// Nodes implements Fabric.
func (f *EmuFabric) Nodes() int { return f.C.Len() }

// Endpoint implements Fabric.
func (f *EmuFabric) Endpoint(node int) verbs.Endpoint { return f.C.Node(node).NewEndpoint() }

// Go implements Fabric.
func (f *EmuFabric) Go(node int, fn func(ep verbs.Endpoint) error) {
	ep := f.C.Node(node).NewEndpoint()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := fn(ep); err != nil {
			f.mu.Lock()
			f.errs = append(f.errs, err)
			f.mu.Unlock()
		}
	}()
}

// Wait implements Fabric.
func (f *EmuFabric) Wait() error {
	f.wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	return errors.Join(f.errs...)
}

// Workload describes threads hammering a set of locks through the detector.
type Workload struct {
	Alg locks.Algorithm
	// Locks is the number of locks; lock j lives on node j % Nodes.
	Locks int
	// Threads[i] is the number of threads on node i.
	Threads []int
	// Ops is the number of acquisitions per thread.
	Ops int
	// Locality is the probability that a thread picks a lock on its own node (if one exists).
	Locality float64
	// Seed seeds each thread's lock choice (thread k uses Seed+k).
	Seed int64
	// Pause stretches each critical section (may be nil).
	Pause func(ep verbs.Endpoint)
	// Think, if set, runs after each release, outside the critical section.
	Think func(ep verbs.Endpoint)
	// Stop, if set, ends a thread early when it returns true (checked before each op).
	Stop func() bool
}

// Result summarizes a run.
type Result struct {
	Violations int64
	First      string
	Entries    int64
	// Counted is the sum of the detectors' counters (must equal Entries).
	Counted uint64
	// LocalOps is the number of acquisitions whose lock was on the thread's node.
	LocalOps int64
	// Stats per thread, in start order (node-major).
	Stats []verbs.StatsSnapshot
	// ThreadOps per thread.
	ThreadOps []int64
	// Locks are the lock pointers (lock j on node j % Nodes); Detectors their detectors.
	Locks     []verbs.Ptr
	Detectors []*Detector
}

// Run executes w on f. The locks and detectors are allocated before threads start.
func Run(f Fabric, w Workload) (Result, error) {
	n := f.Nodes()
	if len(w.Threads) != n {
		return Result{}, fmt.Errorf("workload: %d thread counts for %d nodes", len(w.Threads), n)
	}
	type lk struct {
		p verbs.Ptr
		d *Detector
	}
	lockList := make([]lk, w.Locks)
	byNode := make([][]int, n)
	for j := range lockList {
		ep := f.Endpoint(j % n)
		p, err := ep.Alloc(locks.LockSize)
		if err != nil {
			return Result{}, err
		}
		d, err := NewDetector(ep)
		if err != nil {
			return Result{}, err
		}
		lockList[j] = lk{p, d}
		byNode[j%n] = append(byNode[j%n], j)
	}
	var res Result
	for _, l := range lockList {
		res.Locks = append(res.Locks, l.p)
		res.Detectors = append(res.Detectors, l.d)
	}
	var localOps atomic.Int64
	total := 0
	for _, t := range w.Threads {
		total += t
	}
	stats := make([]*verbs.Stats, total)
	ops := make([]int64, total)
	k := 0
	for node := 0; node < n; node++ {
		for t := 0; t < w.Threads[node]; t++ {
			k++
			idx := k - 1
			seed := w.Seed + int64(k)
			node := node
			f.Go(node, func(ep verbs.Endpoint) error {
				stats[idx] = ep.Stats()
				lkr, err := w.Alg.NewLocker(ep)
				if err != nil {
					return err
				}
				rng := rand.New(rand.NewSource(seed))
				for i := 0; i < w.Ops; i++ {
					if w.Stop != nil && w.Stop() {
						return nil
					}
					var j int
					own := byNode[node]
					if len(own) > 0 && (len(own) == w.Locks || rng.Float64() < w.Locality) {
						j = own[rng.Intn(len(own))]
					} else {
						for {
							j = rng.Intn(w.Locks)
							if j%n != node || len(own) == w.Locks {
								break
							}
						}
					}
					if j%n == node {
						localOps.Add(1)
					}
					l := lockList[j]
					if err := lkr.Lock(l.p); err != nil {
						return err
					}
					var pause func()
					if w.Pause != nil {
						pause = func() { w.Pause(ep) }
					}
					if err := l.d.CS(ep, uint64(idx+1), pause); err != nil {
						return err
					}
					if err := lkr.Unlock(l.p); err != nil {
						return err
					}
					ops[idx]++
					if w.Think != nil {
						w.Think(ep)
					}
				}
				return nil
			})
		}
	}
	err := f.Wait()
	for _, l := range lockList {
		res.Violations += l.d.Violations()
		res.Entries += l.d.Entries()
		if res.First == "" {
			res.First = l.d.First()
		}
	}
	if err != nil {
		return res, err
	}
	for j, l := range lockList {
		c, cerr := l.d.Count(f.Endpoint(j % n))
		if cerr != nil {
			return res, cerr
		}
		res.Counted += c
	}
	res.LocalOps = localOps.Load()
	for i, s := range stats {
		if s != nil {
			res.Stats = append(res.Stats, s.Snapshot())
		}
		res.ThreadOps = append(res.ThreadOps, ops[i])
	}
	return res, nil
}

// SimFabric adapts a sim.Sim; Wait runs the simulation until Until (virtual ns).
type SimFabric struct {
	S     *sim.Sim
	Until int64
}

// Nodes implements Fabric.
func (f *SimFabric) Nodes() int { return f.S.Nodes() }

// Endpoint implements Fabric (a setup endpoint).
func (f *SimFabric) Endpoint(node int) verbs.Endpoint { return f.S.Endpoint(node) }

// Go implements Fabric.
func (f *SimFabric) Go(node int, fn func(ep verbs.Endpoint) error) { f.S.Go(node, fn) }

// Wait implements Fabric.
func (f *SimFabric) Wait() error { return f.S.Run(f.Until) }

// Think returns a Workload.Think that performs n CPU loads of the reserved first word of the
// thread's own region (so it costs n local ops in rdma/sim) and yields the processor once (so
// other goroutines run in rdma/emu).
func Think(n int) func(ep verbs.Endpoint) {
	return func(ep verbs.Endpoint) {
		m := ep.Local()
		for i := 0; i < n; i++ {
			m.Load(0)
		}
		runtime.Gosched()
	}
}
