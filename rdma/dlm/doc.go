// Package dlm holds NetLock's RDMA baselines (SIGCOMM '20, section 6, Figures 10 and 11): the
// decentralized lock managers DSLR (Yoon, Chowdhury, Mozafari, "Distributed Lock Management with
// RDMA: Decentralization without Starvation", SIGMOD '18) and DrTM (Wei, Shi, Chen, Chen, Chen,
// "Fast In-memory Transaction Processing using RDMA and HTM", SOSP '15), as lock clients over
// rdma/verbs, so they run on the real-time emulator (rdma/emu) and in virtual time (rdma/sim);
// a closed-loop transaction driver for N client machines x M threads fed by a transaction
// source (testbed/tpcc's TPC-C plugs in through [Source], in testbed/tpcc/tpccbench); a
// reader-writer history checker; and a cost model calibrated to the ConnectX-3 cluster both
// papers ran on.
//
// # Lock table
//
// Each lock is one 8-byte word on a lock server (a [Table] hashes a 32-bit lock id to a server
// and a word). Clients are the only actors: the servers' CPUs do nothing (one-sided verbs only).
//
// # DSLR
//
// The lock word is four 16-bit counters, from the most significant: nX, nS (exclusive and shared
// locks released, "now serving"), maxX, maxS (exclusive and shared tickets taken). As in the
// authors' code (github.com/dongyoungy/rdma_2pc, src/new_proto4/d2lm_lock_client.cc):
//
//   - Acquire: one RDMA fetch-and-add of 1 to maxS (shared) or maxX (exclusive) takes a ticket;
//     the old word says what is ahead. If maxX or maxS was already at COUNT_MAX (2^15) a reset is
//     pending: undo the add (FAA of -1) and retry after a random backoff. An exclusive request is
//     granted when nX = its maxX and nS = its maxS, a shared one when nX = its maxX; otherwise it
//     polls the word with RDMA READs (optionally waiting, before each read, a time proportional to
//     the requests ahead: the authors' "read backoff") until the condition holds.
//   - Release: FAA of 1 to nX or nS. If the old word shows the counter already at its max (a
//     deadlock reset advanced it past this holder), the add is undone.
//   - Reset: the request whose ticket is COUNT_MAX-1 becomes the resetter: after its release it
//     compare-and-swaps the word from the state where everyone up to it has released and nobody
//     after it got in (nX = maxX = COUNT_MAX and nS = maxS = its maxS, or the shared twin) to 0,
//     repeating until it succeeds.
//   - Leases (deadlock and failure handling): a waiter that sees (nX, nS) unchanged for longer
//     than 2 x Lease x (the requests ahead of it) assumes a deadlock or a dead holder and
//     compare-and-swaps the counters to "everyone ahead of me and I have released" (nX = maxX+1,
//     nS = maxS for an exclusive request; nX = maxX, nS = maxS+1 for a shared one); it then aborts
//     its transaction ([ErrReset]). A waiter that finds the counters past its ticket (somebody
//     reset over it) aborts too.
//
// # DrTM
//
// The lock word is a write-lock bit (63), an 8-bit owner (55-62) and a 55-bit read-lease end time
// (0-54), as in DrTM section 4.2 and the DSLR authors' re-implementation of it
// (drtm_lock_client.cc):
//
//   - Exclusive acquire: CAS from the expected state (first 0) to lock bit + owner. If the word
//     is write-locked, or read-leased with a lease that has not expired (now <= end + Delta), the
//     request fails at once ([ErrConflict]) and its transaction aborts (DrTM does not wait); if the
//     lease has expired it retries the CAS from that value.
//   - Shared acquire: CAS from the expected state to a lease ending at now + Lease. If the word is
//     write-locked: [ErrConflict]. If it holds a lease that is still valid (now < end - Delta -
//     JoinMargin) the request shares it without extending it; an expired lease is replaced by a
//     CAS from its value; a lease in between (neither safely valid nor expired) is a conflict.
//   - Release: exclusive, CAS back to 0; shared, nothing (the lease runs out). Before its
//     transaction commits a shared holder validates that its lease still holds (now < end -
//     Delta, [Client.Validate]), otherwise the transaction aborts ([ErrLeaseExpired]); DrTM
//     assumes clocks synchronized within Delta (PTP).
//
// # What is not the papers'
//
// Documented in docs/rdma.md ("DSLR and DrTM"): the table hashes sparse lock ids onto a fixed
// number of words per server (colliding ids share a lock, which is coarser, never unsafe; a
// transaction takes a shared word once); DrTM's leases read the endpoint's clock (virtual time
// in rdma/sim, where every node has the same clock, so Delta can be 0); a shared DrTM lock is
// validated before the transaction releases its exclusive locks (DrTM's commit check).
package dlm
