package tpccbench

import (
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/rdma/dlm"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/wire"
)

// Source is the dlm.Source of a TPC-C workload: client thread t of machine m is terminal
// m*threads + t (home warehouse (m*threads + t) mod W), seeded by the driver's per-thread seed;
// each transaction holds its locks hold ns. Stock-Level's read-committed reads become
// dlm.Txn.Reads.
func Source(wl *tpcc.Workload, threads int, hold int64) dlm.Source {
	return func(m, t int, seed uint64) func() dlm.Txn {
		term := wl.Terminal(m*threads+t, seed)
		var tx tpcc.Txn
		var out dlm.Txn
		return func() dlm.Txn {
			term.Next(&tx)
			out = dlm.Txn{Locks: requests(out.Locks[:0], tx.Locks), Reads: requests(out.Reads[:0], tx.Reads),
				Hold: hold, Kind: tx.Kind.String()}
			return out
		}
	}
}

// WithoutReads is src with every transaction's Reads dropped (the rack model's clients take a
// transaction's Locks only: testbed's TPC-C phases).
func WithoutReads(src dlm.Source) dlm.Source {
	return func(m, t int, seed uint64) func() dlm.Txn {
		next := src(m, t, seed)
		return func() dlm.Txn {
			tx := next()
			tx.Reads = nil
			return tx
		}
	}
}

func requests(dst []dlm.Request, ls []client.LockSpec) []dlm.Request {
	for _, l := range ls {
		m := dlm.Exclusive
		if l.Mode == wire.Shared {
			m = dlm.Shared
		}
		dst = append(dst, dlm.Request{Lock: l.Lock, Mode: m})
	}
	return dst
}

// ServerOf places a lock on a lock server as DSLR places it on its warehouse's lock manager:
// warehouse w's locks on server w mod servers; the specification's one ITEM table (warehouse 0
// in the lock id for every warehouse) is spread by a hash of the row.
func ServerOf(p tpcc.Profile, servers int) func(uint32) int {
	return func(id uint32) int {
		tb, w, row := tpcc.Decode(id)
		if tb == tpcc.TableItem && p == tpcc.Spec {
			return int(uint64(row) * 0x9E3779B97F4A7C15 >> 40 % uint64(servers))
		}
		return w % servers
	}
}
