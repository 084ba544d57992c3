// Package citron is CITRON (Gao, Lu, Xie, Wang, Shu: "CITRON: Distributed Range Lock Management
// with One-sided RDMA", FAST '23): range locks over an address space [0, Space) taken and
// released by clients with one-sided verbs only, on the emulated RNIC of rdma/ (rdma/emu in real
// time, rdma/sim in virtual time). The lock server's CPU only runs the directory (NewServer),
// which allocates memory for scale-ups.
//
// A storage engine uses it like this:
//
//	srv, _ := citron.NewServer(serverEP, citron.Config{Space: 1 << 30})  // on the lock server
//	c, _ := citron.NewClient(ep, srv, citron.ClientOptions{})            // one per thread
//	h, err := c.LockRange(ctx, start, end, citron.Exclusive)             // or citron.Shared
//	...                                                                  // critical section
//	err = h.Unlock()
//
// LockRange rejects an empty range (ErrEmptyRange), an inverted one (ErrInvertedRange) and one
// reaching beyond Space (ErrOutOfSpace). A lock must be released within Config.Lease: waiters
// presume the holder dead after that and repair its state (Unlock then returns ErrLeaseExpired
// and leaves the lock to that recovery). A client serves one goroutine; a thread may hold several
// locks. A Directory other than the Server itself (SimDirectory) charges each metadata call as a
// two-sided round trip.
//
// # Structure
//
// The lock tree is a static quaternary segment tree over [0, N) whose leaves are 64-unit bitmaps
// (tree.go); every node is a 16-byte slot: the paper's 64-bit node word (Occ, the bakery pair
// TCnt/TMax, the notification pair DCnt/DMax, and a scale-up mark in place of the paper's Exp
// flag; word.go) and a second word for shared mode (SOcc and shared notifications; at a leaf,
// eight 8-bit counters of shared holders, one per 8 units). [N, Space) is covered by the
// spillover lock (a DSLR-style reader-writer bakery on one word); a range reaching beyond N takes
// it first and ORs its end into the maximizer (masked CAS with a zero compare mask).
//
// # Protocol (Alg. 1-3 of the paper)
//
// Step 1 splits [l, r) into at most K nodes (default 2) that minimize the covered but unrequested
// units, leaves counting as exact (split.go). Step 2 locks them in ascending order, each with:
// (a) at an internal node, an exclusive request takes a bakery ticket (masked FAA on TMax) and
// waits for TCnt; (b) it reads all ancestors in one batch until none is occupied (exclusive: Occ
// or SOcc; shared: Occ), waiting on the lowest occupied one; (c) at a leaf it sets its bits with
// a masked CAS (shared: counts its groups with a masked FAA), at an internal node it sets Occ
// (shared: SOcc+1); (d) it notifies the ancestors at distances 1, 1+M, 1+2M, ... (DMax+1; the top
// M-1 levels replaced by level M-1, except the parent) and aborts (undoes everything and retries)
// if the notifications completed more than (1-Delta)*TWait after the reads of (b) that found the
// ancestors free (Inequality (1)); at an internal node it then waits TWait and reads the node and
// its internal descendants within M levels (one READ per level) until every notification pair is
// balanced. Release undoes exactly that in one batch (Alg. 3). The fast path batches (a) with (b)
// and (c) with (d) (two round trips when uncontended) and, at a node whose children are leaves,
// sets all four children's bitmaps with masked CASes and skips the wait when they all succeed.
//
// # Where this implementation departs from the paper, and why
//
//   - Hold-and-wait avoidance. The paper locks the K nodes of a split range one after another and
//     claims the ascending order prevents deadlock. It does not: a request holding a leaf under X
//     (it notified X) waits in (b) for X's Occ while X's holder waits in (d) for that leaf's
//     notification. Here a request holding nodes never waits: at any would-block point it
//     releases what it holds, waits passively, and restarts; a multi-node request that keeps
//     restarting for EscalateAfter locks one covering node instead. TestSequentialSplitDeadlock
//     and the exploration (UnsafeHoldAndWait) show the deadlock.
//   - One t1. Step (b) re-reads all ancestors in each iteration (one batch), so one post time is
//     valid for every ancestor; the paper's per-ancestor bookkeeping is ambiguous.
//   - Shared mode is not in the paper (all its locks are exclusive). Shared and exclusive requests
//     at ancestors and descendants use the same Occ/notification/T_wait mechanism on separate
//     words; at the same node and the same leaf they count themselves and then read the other
//     mode's word, in both orders (Dekker), which needs no timing. Shared requests at one node do
//     not conflict. A leaf's shared counters are per 8 units, so shared and exclusive requests in
//     the same 8-unit group of a leaf conflict even if disjoint.
//   - Scale-up (Alg. 4) uses 5-bit generation marks instead of the one-bit Exp and carries the old
//     root's occupancy along distances 1, 1+M, ...; see scale.go for the two problems this fixes.
//   - Recovery of a waiter stuck on notifications forgives only those outstanding for the whole
//     H*Lease period (the paper sets DCnt := DMax, which also swallows live newcomers').
//   - Unspecified by the paper and chosen here: the node bit layout (14-bit tickets, 15-bit
//     notification counters: at most 2^14-1 requests queued at one node), the knapsack algorithm,
//     the "too long" period before a leaf request escalates to its parent (EscalateAfter), the
//     notification distances (1, 1+M, ... rather than 1, M, 2M, ...: both cover), random backoff
//     after an abort (aborts feed on load), and the spillover lock's shared mode (DSLR's).
//   - Not done: the 2PC re-tuning of (M, TWait) and scale-down.
package citron
