package dlm

import (
	"math/rand/v2"

	"github.com/netlock-go/netlock/rdma/sim"
)

// ConnectX3 is the cost model of the cluster NetLock ran DSLR and DrTM on (CloudLab Apt: Xeon
// E5-2450 at 2.1 GHz, one Mellanox ConnectX-3 56 Gb/s FDR InfiniBand NIC per machine; NetLock
// section 6.1; DSLR ran on the same cluster type). Values in ns, and where they come from:
//
//   - OneWay 850 and NICOp 35: a small RDMA READ costs PostOp + 2 NICOp + 2 OneWay = 1.81 us
//     end to end, the 1.5-2 us that published ConnectX-3 FDR measurements report (HERD, SIGCOMM
//     '14, and FaSST, OSDI '16, both on Apt); 35 ns per verb is about 28 M verbs/s per NIC,
//     between the inbound READ (about 26 M/s) and WRITE (about 35 M/s) rates HERD reports there.
//   - NICAtomic 370 with one atomic unit: about 2.7 M atomics/s per NIC, the ConnectX-3 atomic
//     rate Kalia et al. report ("Design Guidelines for High Performance RDMA Systems", ATC '16,
//     measured on Apt); the unit is shared by every word of the NIC (ConnectX-3 serializes
//     atomics in the NIC), so a lock server's atomics, not its READs, bound DSLR and DrTM.
//     AtomicWindow 300 keeps rdma/sim's read-window-write shape inside it.
//   - PostOp 40, PostWQE 10, PollCQ 0, LocalOp 25, LoopbackOneWay 400, NICLine 6, WireJitter
//     100, QPLimit 450: rdma/sim's defaults (no lock client here uses loopback or multi-word
//     transfers, and the runs stay far below 450 queue pairs per NIC).
//
// These figures were recalled from the cited papers, not re-measured. Checked on 2026-11-28
// (docs/rdma.md, "TPC-C: Figures 10 and 11's baselines"): HERD's abstract (up to 26 M
// operations/s, "similar to native RDMA read throughput", 5 us average latency) supports the
// verb rate and is consistent with the READ time; the atomic rate and the READ latency could not
// be found in the searchable text of Kalia et al. ATC '16 or FaSST and remain unverified. They
// set the model's scale; the comparisons that use it report ratios.
func ConnectX3() sim.Cost {
	return sim.Cost{OneWay: 850, NICOp: 35, NICAtomic: 370, AtomicUnits: 1, AtomicWindow: 300}
}

// Uniform is a source whose transactions each take n distinct locks drawn uniformly from
// [0, locks), each shared with probability shared and exclusive otherwise, holding them for
// hold ns.
func Uniform(locks uint32, n int, shared float64, hold int64) Source {
	return func(_, _ int, seed uint64) func() Txn {
		r := rand.New(rand.NewPCG(seed, 0xd15c))
		buf := make([]Request, 0, n)
		return func() Txn {
			buf = buf[:0]
			for len(buf) < n && len(buf) < int(locks) {
				id := uint32(r.Uint64N(uint64(locks)))
				dup := false
				for _, q := range buf {
					dup = dup || q.Lock == id
				}
				if dup {
					continue
				}
				m := Exclusive
				if r.Float64() < shared {
					m = Shared
				}
				buf = append(buf, Request{Lock: id, Mode: m})
			}
			return Txn{Locks: buf, Hold: hold}
		}
	}
}

// Private is a source without contention: thread t of machine m locks, one per transaction in
// turn, its own perThread locks in mode mode (ids (m x threads + t) x perThread + k, dense).
func Private(threads int, perThread uint32, mode Mode, hold int64) Source {
	return func(m, t int, _ uint64) func() Txn {
		base := uint32(m*threads+t) * perThread
		k := uint32(0)
		buf := make([]Request, 1)
		return func() Txn {
			buf[0] = Request{Lock: base + k, Mode: mode}
			k = (k + 1) % perThread
			return Txn{Locks: buf, Hold: hold}
		}
	}
}
