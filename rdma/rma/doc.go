// Package rma implements the topology-aware distributed locks of "High-Performance
// Distributed RMA Locks" (Schmid, Besta, Hoefler, HPDC '16) on netlock's one-sided verbs
// (rdma/verbs, run on rdma/emu in real time and rdma/sim in virtual time): RMA-MCS, a tree of
// distributed MCS queues over N machine levels, and RMA-RW, the same tree synchronised with
// readers through a distributed counter. The paper's topology-oblivious D-MCS and the foMPI
// baselines (a spin lock and a central reader-writer lock) are here too.
//
// # Structure
//
// Processes (ranks 0..P-1, rank r on node r/ProcsPerNode) are grouped into machine elements
// at levels 1..N: level 1 is the whole machine, [Config.Elements] gives the sizes below (the
// paper evaluates N = 2: compute nodes and the machine). Every element has a distributed queue
// (DQ), a D-MCS lock whose TAIL lives on the element's first node. A writer enqueues at its
// leaf element (level N) and climbs: at each level it either receives the lock from a
// predecessor of the same element, which hands it over together with the count of
// consecutive holders of the element (STATUS = count), or becomes its element's leader and
// enqueues one level up. A holder passes within its element while the count is below T_L,i
// ([Config.TL]); otherwise it releases the parent level and tells its successor to climb
// (ACQUIRE_PARENT). The queues form the distributed tree (DT). Without readers this is
// RMA-MCS; with N = 1 it is one queue, D-MCS, and it then issues exactly D-MCS's operations
// (TestRMAMCSOneLevelIsDMCS compares both in virtual time).
//
// RMA-RW adds the distributed counter (DC): one physical counter (ARRIVE, DEPART) per T_DC
// consecutive ranks ([Config.TDC]), counter k on the node of rank k*T_DC (erratum E2 of our
// reading: the 1-based ceil(p/T_DC) of the text and the 0-based loops of the listings agree
// with this placement). A reader adds 1 to its counter's ARRIVE: below T_R ([Config.TR]) it
// is in; otherwise (T_R reached, or a writer added the WRITE flag, [WriteFlag]) it subtracts
// 1 again and waits until ARRIVE is at most T_R with no flag, then retries. The reader whose
// arrival returned exactly T_R resets the counter if no writer is queued at the machine level.
// It releases by adding 1 to DEPART. A writer that reaches the machine level with no predecessor, or is handed the
// lock with MODE_CHANGE, adds the WRITE flag to every counter and drains them. The
// machine-level holder passes to a writer successor while its count is below T_L,1; after
// T_L,1 passes, or with no successor, it resets the counters (the readers' turn) and a
// successor receives MODE_CHANGE. Hence at most T_W = prod T_L,i writers enter between two
// reader phases.
//
// # Errata of the listings, and how they are resolved
//
//   - E3 (ownership of parent-level queue nodes). Listings 4 and 5 give every process its own
//     NEXT/STATUS at every level, but a writer that is handed level i by its predecessor
//     inherits levels i-1..1 that the predecessor enqueued, and Listing 5 then releases them
//     with its own, never-enqueued queue nodes. Here a queue node above the leaf level belongs
//     to the child element (as in Chabbi et al.'s HMCS): element e's node in its parent's
//     queue is one 64-byte block on e's first node, used by whichever process holds e's lock.
//     Only one process holds e's lock at a time, and a release finishes with the parent-level
//     node (its hand-over or its leave) before it lets the next holder of e climb, so the node
//     is never used twice at once. Faults.PaperQueueNodes keeps the printed version; the model
//     checker finds it deadlocking (TestExhaustiveFindsFaults).
//   - E4 (writer drain). set_counters_to_WRITE (Listing 6) returns without waiting for the
//     readers inside, although the text (sections 3.3.3, 4.1) says the writer checks the
//     counters again. Here the writer adds the flag to every counter in one posted batch and
//     then waits, per counter, until ARRIVE - WriteFlag == DEPART, reading ARRIVE before
//     DEPART (the first ARRIVE value is its own FAA's result): every reader that arrived
//     before the flag has departed or backed off, and none can enter while it is set.
//   - The counter reset and the readers' wait (Listings 6 and 9) are redesigned in five
//     ways, each found necessary by the model checker (rdma/rma/rwmodel; each broken variant
//     is a Faults field that the checker must catch): (a) DEPART is subtracted before
//     ARRIVE, in separate batches, so that a writer draining concurrently never sees ARRIVE
//     without the departures DEPART still counts (Faults.ResetArriveFirst lets a writer in
//     with a reader); (b) a reader's reset never touches the WRITE flag, only its owner
//     removes it (Listing 6 used by a reader, Faults.PaperReaderReset, clears a flag a writer
//     added after the reader's tail check, and that writer never drains); (c) the reader whose
//     arrival returned exactly T_R first claims the reset by adding [ResetFlag] to ARRIVE and
//     gives up if a flag was already there: without the claim a back-off can bring ARRIVE back
//     to T_R during the reset, a second reader resets concurrently, DEPART is subtracted
//     twice and goes negative, and a draining writer sees an empty counter with a reader
//     inside (Faults.UnclaimedReaderReset); the claim also keeps readers out and writers'
//     drains waiting until the reset is done, and the last subtraction removes the claim, the
//     reset amount and the reader's own arrival at once; (d) a reader that backed off waits
//     for ARRIVE <= T_R (no flag), not < T_R: a counter that stopped at exactly T_R with
//     nobody arriving any more is otherwise never reset (Faults.PaperReaderBarrier deadlocks
//     with two rounds per process); (e) the last writer leaves the machine-level queue before
//     it resets the counters (Listing 8 resets first; with Listing 9's wait that strands a
//     counter, Faults.PaperReleaseOrder+PaperReaderBarrier; with (d) both orders are safe,
//     and leaving first spares the readers retries against a writer that is already done).
//     Since (e) lets the next writer drain while the last one resets, (a) is what keeps that
//     drain exact.
//   - E5 (T_W). Listing 8 compares the machine-level count with T_W = prod T_L,i while the
//     evaluation treats T_L,1 as a threshold of its own. Here the machine-level count is
//     compared with T_L,1; with per-level counting that bounds a writer phase by T_W.
//   - E6 (off by one). STATUS count 1 is ACQUIRE_START; a holder passes within its element
//     iff its count is below T_L,i, so a run has at most T_L,i holders (reached exactly in
//     the model checker).
//   - E7. A writer that finds no predecessor at the machine level blocks new readers at once;
//     T_R bounds the arrivals per counter between resets (and so the readers inside a counter
//     at once) and triggers the readers' own resets when no writer is queued.
//   - E1 (D-MCS names) is resolved in [DMCS].
//
// # Layout and access classes
//
// Each tail, queue node (NEXT at byte 0, STATUS at 8) and counter (ARRIVE at 0, DEPART at 8)
// is a 64-byte block. Tails hold queue-node pointers. The enqueue's FAO(REPLACE) is one masked
// compare-and-swap with an empty compare mask on the NIC (the paper's Table 3 mapping for
// RDMA), a CPU compare-and-swap loop on node-local tails. The structures of an element that lies
// inside one node (the node-level queues of N = 2) are only touched by that node's CPUs, with
// CPU atomics. Everything else follows the verbs contract (NIC atomics are atomic among
// themselves, not with CPU atomics): the tails of multi-node queues and the counters of a
// multi-node machine are only read-modify-written by NICs (loopback from their own node) and
// never written by a CPU; queue nodes are never read-modify-written, so their owner loads and
// stores them locally while neighbours use rRead and rWrite. A waiting writer spins on its own
// queue node in local memory; readers that wait poll their counter (locally if it is on their
// node). TestAccessClasses audits this with an access tracer.
//
// # Pure core
//
// [Proc] is the algorithm as a step machine: Lock, RLock, Unlock and RUnlock return a first
// batch of [Op]s on named [Word]s, Resume takes the batch's results and returns the next
// batch, until an empty batch says the phase finished. A [Handle] executes batches on an
// endpoint (verbs posted as one batch with one completion wait), and rdma/rma/rwmodel executes
// the same machines over an abstract memory to enumerate every interleaving.
//
// # Use
//
//	lk, _ := rma.New(rma.Config{Nodes: 4, ProcsPerNode: 16, Elements: []int{16}, Readers: true},
//		func(node int, size uint64) (verbs.Ptr, error) { return fabric.Endpoint(node).Alloc(size) })
//	h, _ := lk.Handle(rank, endpointOnRanksNode)
//	h.RLock(); /* read */ h.RUnlock()
//	h.Lock(); /* write */ h.Unlock()
//
// A Handle is one process: it holds the lock at most once at a time and is not safe for
// concurrent use.
package rma
