package testbed

import (
	"sync"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/testbed/tpcc"
)

// TPC-C phases draw from testbed/tpcc (its package doc: the specification's transactions with
// DSLR's lock set, NURand with one C per run, a home warehouse per worker): tpcc-high has one
// warehouse per client node, tpcc-low ten, and worker i's home warehouse is i mod W. Locks are
// listed in ascending id (ordered two-phase locking; client.Txn takes them in that order anyway).

// MaxWarehouses bounds the warehouses of a TPC-C phase.
const MaxWarehouses = tpcc.MaxWarehouses

// tpccRuns shares one tpcc.Workload (NURand's constants, the loaded customers' names) among the
// workers of a run: workloads with the same warehouses and run seed are the same run.
var tpccRuns struct {
	mu sync.Mutex
	m  map[tpccKey]*tpcc.Workload // guarded by mu; at most maxTPCCRuns entries
}

type tpccKey struct {
	warehouses int
	seed       uint64
}

const maxTPCCRuns = 16

func tpccRun(warehouses int, seed uint64) (*tpcc.Workload, error) {
	k := tpccKey{warehouses, seed}
	tpccRuns.mu.Lock()
	defer tpccRuns.mu.Unlock()
	if wl, ok := tpccRuns.m[k]; ok {
		return wl, nil
	}
	wl, err := tpcc.New(tpcc.Config{Warehouses: warehouses, Seed: seed})
	if err != nil {
		return nil, err
	}
	if tpccRuns.m == nil || len(tpccRuns.m) >= maxTPCCRuns {
		tpccRuns.m = make(map[tpccKey]*tpcc.Workload)
	}
	tpccRuns.m[k] = wl
	return wl, nil
}

// tpccGen is one worker's terminal.
type tpccGen struct {
	term *tpcc.Terminal
	tx   tpcc.Txn
}

// newTPCCGen returns worker's terminal of the run of warehouses and runSeed, drawing from seed.
func newTPCCGen(warehouses, worker int, runSeed, seed uint64) (*tpccGen, error) {
	wl, err := tpccRun(warehouses, runSeed)
	if err != nil {
		return nil, err
	}
	return &tpccGen{term: wl.Terminal(worker, seed)}, nil
}

// next appends the locks of the next transaction to dst[:0] and returns them with the
// transaction's type.
func (g *tpccGen) next(dst []client.LockSpec) ([]client.LockSpec, string) {
	g.term.Next(&g.tx)
	return append(dst[:0], g.tx.Locks...), g.tx.Kind.String()
}
