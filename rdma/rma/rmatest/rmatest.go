// Package rmatest is the verification harness of rdma/rma: a reader-writer exclusion detector
// in the style of rdmatest.Detector and a single-lock workload runner for both emulators
// (rdma/emu in real time, rdma/sim in virtual time).
package rmatest

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"

	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/rma"
	"github.com/netlock-go/netlock/rdma/verbs"
)

// Detector checks reader/writer exclusion for one lock in two independent ways:
//   - in emulated memory (on the home node): a writer compare-and-swaps an owner word from 0 to
//     its id and must succeed, reads the reader count (must be 0) before and after its
//     section and increments a protected counter non-atomically (read, then write); a reader
//     adds 1 to the reader count, reads the owner word (must be 0) at entry and exit, and
//     subtracts 1. Read-modify-writes go through the NIC (loopback on the home node) unless
//     the fabric is one node, so that concurrent readers are atomic among themselves;
//   - Go-side occupancy counters outside emulated memory, checked at entry (exact in rdma/sim,
//     where one thread runs at a time; sequentially consistent Dekker-style checks in emu).
//
// The protected counter must equal the number of writer sections at the end.
type Detector struct {
	owner, readers, counter verbs.Ptr
	local                   bool

	inW, inR   atomic.Int32
	maxR       atomic.Int32
	violations atomic.Int64
	wEntries   atomic.Int64
	rEntries   atomic.Int64
	firstMu    sync.Mutex
	first      string
}

// NewDetector allocates the detector's words on home's node; oneNode says the whole fabric is
// that node (CPU atomics only).
func NewDetector(home verbs.Endpoint, oneNode bool) (*Detector, error) {
	p, err := home.Alloc(64)
	if err != nil {
		return nil, fmt.Errorf("rw detector: %w", err)
	}
	return &Detector{owner: p, readers: p.Add(8), counter: p.Add(16), local: oneNode}, nil
}

func (d *Detector) violation(format string, args ...any) {
	if d.violations.Add(1) == 1 {
		d.firstMu.Lock()
		d.first = fmt.Sprintf(format, args...)
		d.firstMu.Unlock()
	}
}

func (d *Detector) read(ep verbs.Endpoint, p verbs.Ptr) (uint64, error) {
	if p.Node() == ep.Node() {
		return ep.Local().Load(p.Offset()), nil
	}
	return verbs.Read(ep, p)
}

func (d *Detector) write(ep verbs.Endpoint, p verbs.Ptr, v uint64) error {
	if d.local {
		ep.Local().Store(p.Offset(), v)
		return nil
	}
	return verbs.Write(ep, p, v)
}

func (d *Detector) faa(ep verbs.Endpoint, p verbs.Ptr, v uint64) error {
	if d.local {
		ep.Local().FAA(p.Offset(), v)
		return nil
	}
	_, err := verbs.FAA(ep, p, v)
	return err
}

// Write runs one writer section for id (non-zero); pause, if set, stretches it.
func (d *Detector) Write(ep verbs.Endpoint, id uint64, pause func()) error {
	d.wEntries.Add(1)
	if w := d.inW.Add(1); w != 1 {
		d.violation("writer %d entered with %d writers inside", id, w-1)
	}
	if r := d.inR.Load(); r != 0 {
		d.violation("writer %d entered with %d readers inside", id, r)
	}
	defer d.inW.Add(-1)
	var old uint64
	var err error
	if d.local {
		if !ep.Local().CAS(d.owner.Offset(), 0, id) {
			old = 1
		}
	} else if old, err = verbs.CAS(ep, d.owner, 0, id); err != nil {
		return err
	}
	owned := old == 0
	if !owned {
		d.violation("writer %d found the owner word taken", id)
	}
	if err := d.checkReaders(ep, id, "entry"); err != nil {
		return err
	}
	v, err := d.read(ep, d.counter)
	if err != nil {
		return err
	}
	if pause != nil {
		pause()
	}
	if err := d.write(ep, d.counter, v+1); err != nil {
		return err
	}
	if err := d.checkReaders(ep, id, "exit"); err != nil {
		return err
	}
	if owned {
		return d.write(ep, d.owner, 0)
	}
	return nil
}

func (d *Detector) checkReaders(ep verbs.Endpoint, id uint64, at string) error {
	r, err := d.read(ep, d.readers)
	if err != nil {
		return err
	}
	if r != 0 {
		d.violation("writer %d saw %d readers at %s", id, r, at)
	}
	return nil
}

func (d *Detector) checkOwner(ep verbs.Endpoint, id uint64, at string) error {
	o, err := d.read(ep, d.owner)
	if err != nil {
		return err
	}
	if o != 0 {
		d.violation("reader %d saw writer %d at %s", id, o, at)
	}
	return nil
}

// Read runs one reader section.
func (d *Detector) Read(ep verbs.Endpoint, id uint64, pause func()) error {
	d.rEntries.Add(1)
	r := d.inR.Add(1)
	for m := d.maxR.Load(); r > m && !d.maxR.CompareAndSwap(m, r); m = d.maxR.Load() {
	}
	if w := d.inW.Load(); w != 0 {
		d.violation("reader %d entered with a writer inside", id)
	}
	defer d.inR.Add(-1)
	if err := d.faa(ep, d.readers, 1); err != nil {
		return err
	}
	if err := d.checkOwner(ep, id, "entry"); err != nil {
		return err
	}
	if pause != nil {
		pause()
	}
	if err := d.checkOwner(ep, id, "exit"); err != nil {
		return err
	}
	return d.faa(ep, d.readers, ^uint64(0))
}

// Violations is the number of detected overlaps.
func (d *Detector) Violations() int64 { return d.violations.Load() }

// First describes the first violation.
func (d *Detector) First() string {
	d.firstMu.Lock()
	defer d.firstMu.Unlock()
	return d.first
}

// Count reads the protected counter (after all threads stopped).
func (d *Detector) Count(ep verbs.Endpoint) (uint64, error) { return verbs.Read(ep, d.counter) }

// Workload is nodes x procs-per-node processes hammering one lock through a Detector.
type Workload struct {
	Nodes, ProcsPerNode int
	// NewLocker returns rank's handle (ep on rank's node).
	NewLocker func(rank int, ep verbs.Endpoint) (rma.Locker, error)
	// Ops is the number of acquisitions per process.
	Ops int
	// WriteFrac is the probability that an acquisition is exclusive (1: writers only).
	WriteFrac float64
	// Writer, if set, overrides WriteFrac: rank's acquisitions are exclusive iff it returns true.
	Writer func(rank int) bool
	// Seed seeds each process's choices (rank r uses Seed+r).
	Seed int64
	// Pause stretches each critical section; Think runs after each release.
	Pause, Think func(ep verbs.Endpoint)
}

// Result summarizes a run.
type Result struct {
	Violations int64
	First      string
	// WriterSections and ReaderSections are the sections run; Counted is the protected
	// counter (must equal WriterSections).
	WriterSections, ReaderSections int64
	Counted                        uint64
	// MaxReaders is the largest number of readers seen inside at once.
	MaxReaders int
	// Stats per process, by rank.
	Stats []verbs.StatsSnapshot
	// Order is the rank of each writer section in entry order.
	Order []int
}

// Run executes w on f (a fresh fabric: the lock's words must be allocated on it by NewLocker
// or before). The detector lives on node 0.
func Run(f rdmatest.Fabric, w Workload) (Result, error) {
	if f.Nodes() != w.Nodes {
		return Result{}, fmt.Errorf("rmatest: fabric of %d nodes for %d", f.Nodes(), w.Nodes)
	}
	det, err := NewDetector(f.Endpoint(0), w.Nodes == 1)
	if err != nil {
		return Result{}, err
	}
	p := w.Nodes * w.ProcsPerNode
	stats := make([]*verbs.Stats, p)
	var orderMu sync.Mutex
	var order []int
	for r := 0; r < p; r++ {
		rank := r
		f.Go(r/w.ProcsPerNode, func(ep verbs.Endpoint) error {
			stats[rank] = ep.Stats()
			lk, err := w.NewLocker(rank, ep)
			if err != nil {
				return err
			}
			rng := rand.New(rand.NewSource(w.Seed + int64(rank)))
			var pause func()
			if w.Pause != nil {
				pause = func() { w.Pause(ep) }
			}
			for i := 0; i < w.Ops; i++ {
				write := rng.Float64() < w.WriteFrac
				if w.Writer != nil {
					write = w.Writer(rank)
				}
				if write {
					if err := lk.Lock(); err != nil {
						return err
					}
					orderMu.Lock()
					order = append(order, rank)
					orderMu.Unlock()
					if err := det.Write(ep, uint64(rank)+1, pause); err != nil {
						return err
					}
					if err := lk.Unlock(); err != nil {
						return err
					}
				} else {
					if err := lk.RLock(); err != nil {
						return err
					}
					if err := det.Read(ep, uint64(rank)+1, pause); err != nil {
						return err
					}
					if err := lk.RUnlock(); err != nil {
						return err
					}
				}
				if w.Think != nil {
					w.Think(ep)
				}
			}
			return nil
		})
	}
	err = f.Wait()
	res := Result{Violations: det.Violations(), First: det.First(), WriterSections: det.wEntries.Load(),
		ReaderSections: det.rEntries.Load(), MaxReaders: int(det.maxR.Load()), Order: order}
	if err != nil {
		return res, err
	}
	if res.Counted, err = det.Count(f.Endpoint(0)); err != nil {
		return res, err
	}
	for _, s := range stats {
		if s != nil {
			res.Stats = append(res.Stats, s.Snapshot())
		}
	}
	return res, nil
}
