package testbed

import (
	"math/rand/v2"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/wire"
)

// Workload draws the lock sets of one closed-loop worker's transactions for a phase: the
// microbenchmarks (shared, exclusive, exclusive/N, contended/N, crash) and the TPC-C-like mix. The demo's
// workers (wall-clock time) and the rack model's (testbed/rackmodel, virtual time) draw from it, so
// both run the same transactions for a seed. A Workload is not safe for concurrent use.
type Workload struct {
	spec   phaseSpec
	worker int
	rng    *rand.Rand
	gen    *tpccGen
	i      int
}

// NewWorkload returns the workload of worker (0-based, unique in the rack) in phase, in a rack
// of clients client nodes (TPC-C: one warehouse per node for tpcc-high, ten for tpcc-low; the
// worker's home warehouse is worker mod W). seed is the worker's: callers pass the run's seed
// shifted left by 32 bits XOR worker-specific bits, and TPC-C's run constants (NURand's C, the
// loaded database) come from its high 32 bits, so that every worker of a run shares them.
func NewWorkload(phase string, clients, worker int, seed uint64) (*Workload, error) {
	spec, err := parsePhase(phase, clients)
	if err != nil {
		return nil, err
	}
	return newWorkload(spec, worker, seed)
}

func newWorkload(spec phaseSpec, worker int, seed uint64) (*Workload, error) {
	w := &Workload{spec: spec, worker: worker, rng: rand.New(rand.NewPCG(seed, 1))}
	if spec.warehouses > 0 {
		g, err := newTPCCGen(spec.warehouses, worker, seed>>32, seed)
		if err != nil {
			return nil, err
		}
		w.gen = g
	}
	return w, nil
}

// Warehouses is the number of TPC-C warehouses of the phase (0 for a microbenchmark).
func (w *Workload) Warehouses() int { return w.spec.warehouses }

// Next appends the locks of the next transaction to dst[:0] and returns it. TPC-C sets hold
// distinct locks in ascending lock order (client.Txn takes them in that order).
func (w *Workload) Next(dst []client.LockSpec) []client.LockSpec {
	dst = dst[:0]
	i := w.i
	w.i++
	switch spec := w.spec; {
	case w.gen != nil:
		dst, _ = w.gen.next(dst)
	case spec.name == PhaseShared:
		dst = append(dst, client.LockSpec{Lock: 1_000_000 + uint32(w.rng.IntN(16)), Mode: wire.Shared})
	case spec.name == PhasePriority:
		dst = append(dst, client.LockSpec{Lock: priorityBase + uint32(w.rng.IntN(priorityLocks)), Mode: wire.Exclusive})
	case spec.name == PhaseTenants || spec.name == PhaseQuota:
		dst = append(dst, client.LockSpec{Lock: quotaBase + uint32(w.rng.IntN(quotaLocks)), Mode: wire.Exclusive})
	case spec.name == PhaseCrash:
		dst = append(dst, client.LockSpec{Lock: crashLockBase + uint32(w.rng.IntN(crashLocks)), Mode: wire.Exclusive})
	case spec.private > 0:
		// Consecutive ids (exclusive/1: one lock per worker, worker after worker), so that they
		// spread over the servers and their shards (lock mod n).
		n := spec.private
		dst = append(dst, client.LockSpec{Lock: 2_000_000 + uint32(w.worker*n+i%n), Mode: wire.Exclusive})
	default:
		dst = append(dst, client.LockSpec{Lock: 3_000_000 + uint32(w.rng.IntN(spec.pool)), Mode: wire.Exclusive})
	}
	return dst
}
