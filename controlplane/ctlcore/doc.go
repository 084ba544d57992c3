// Package ctlcore is the netlock controller's decision logic as a pure state machine: which
// locks live in the switch and which on their lock servers (paper sections 4.3 and 4.5,
// Algorithm 3), how a lock moves between them without two holders and with tokens that keep
// growing, and how the rack stays safe when the switch, a server or the controller itself
// fails. docs/controlplane.md ("The controller") is the design; this comment is the contract.
//
// # Inputs and effects
//
// A [Core] takes one [Input] at a time with [Core.Step](now, in) and returns the [Effect]s its
// shell must carry out. It does no I/O, starts no goroutines and reads no clock: time is the
// argument now (a now before the last one counts as the last one), and [Core.NextDeadline] says
// when the shell must step it next with a [Tick]. A Core is not safe for concurrent use:
// controlplane/controller is its shell (one goroutine owns it, every effect runs in a goroutine
// of its own), and testbed/rackmodel and the scenario tests drive it in virtual time.
//
// The inputs are [Tick] (time passed: due timers run), [Primary] (the P4Runtime election's
// verdict: the Core acts only while primary, and becoming primary starts a takeover) and the
// [Result] of an earlier effect. The effects are [Write] (P4Runtime updates, atomic or not),
// [PushPipeline], [GetPipeline], [ReadLocks] (the lock table with its direct counters),
// [SwitchAdmin] (an admin packet to netlock.p4 and its reply) and [ServerAdmin] (a lock server's
// admin sub-operation with the controller term). Each effect has an ID, and the shell answers
// every effect with exactly one Result of that ID: success, an error, or [ErrTimeout] when
// nothing came back in time; in any order, but never twice and never not at all (a task of the
// Core waits for it). A refused server request (a reject) is a Result, not an error.
//
// Every task of the Core (a move, a barrier, a sweep, a ping round, the bring-up) is a chain of
// callbacks keyed by effect ID and of timers. A generation number makes every callback and timer
// of an older generation stale: a loss of primacy, a takeover and a restarted switch start a new
// one, and the Results of the old one's effects are ignored when they come. Within a
// generation, a lock's task number does the same for one lock (a failover cancels the moves of
// the dead server's locks). The order of the effects depends on the inputs only.
//
// # Phases
//
//   - Backup: not primary; the Core emits nothing.
//   - TakingOver: primary, learning the switch (GetPipeline; the rack's default action written
//     again; the cookie register read) and the servers. A switch without a pipeline or with
//     cookie 0 is programmed from scratch (the bring-up of docs/dataplane.md: pipeline, rack,
//     clone sessions, servers and routes, tenants, one staging entry per server, the cookie).
//     Otherwise the controller term goes one above the largest any server reports (every later
//     ping announces it; a server refuses placement requests of an older term, so the messages
//     of a deposed primary still in flight cannot move a lock; a server that did not answer is
//     handled under "Terms" below), and the Core reconciles: the lock
//     table says which locks are in the switch (a paused entry was moving out: its move is
//     finished), the servers list their switch-resident locks, a staging entry out of place is
//     put back, and a lock resident at its server without a switch entry is an orphan, recovered
//     as after a switch restart (below).
//   - Recovering: a programmed-from-scratch switch's locks wait out the leases before their
//     servers take them back.
//   - Running: lease sweeps, pings, allocation periods and the moves they start.
//
// # Terms
//
// Invariant: a Core's term only grows, and it moves above a term some server reported only
// after a P4Runtime write that the switch took, i.e. while the Core was the switch's primary.
// Every ping answer carries the term in force at the server. A term above the Core's (a server
// that was cut off during the takeover and had seen an earlier primary's larger term) would make
// that server refuse the Core's placements forever; the Core rewrites the rack's default action
// and, once the switch took it, moves one above the largest term reported and pings every server
// with it (raiseTerm). A deposed primary that still runs learns the larger term the same way, but
// the switch refuses its write, so it keeps its older term and its placement requests stay
// refused.
//
// # Timers
//
// Every SweepPeriod the Core reads the cookie (a changed one is a restarted switch) and probes
// every switch lock: the queue depth (the contention c_i), the grant counter (the token floor of
// a restart), and every granted slot, force-releasing a grant whose lease ran out on the
// switch's clock. Every PingPeriod it pings every server that is not suspected: the ping carries
// the term and renews the server's controller lease (Config.ServerLease). Every AllocPeriod
// (unless Config.Manual: [Core.Reallocate]), when nothing moves and every server answers, an
// allocation period: every server's hottest locks (AdminStats) and the switch's counters give r_i
// and c_i, alloc.Allocator gives the regions, every lock whose regions change moves out, then
// every lock with new regions moves in (the hottest first). A step that fails is retried after
// PollInterval, which also paces the polls of a drain and of a barrier; a lock moving in whose
// server does not drain it in MoveTimeout stays on its server.
//
// # Moves, and the rules they keep
//
// No two holders of a lock, ever: the switch and a server never both grant a lock.
//   - Into the switch (a lock's turn at its server's staging entry has come): yield (the server
//     marks the lock resident and stops taking new acquires), polled until the server has no
//     holder, waiter or buffered request left; the staging entry is lent to the lock's index for
//     a reset and a token base; then the entry is inserted. The switch grants only after the
//     server's queue is empty.
//   - Out of the switch: pause (new acquires go to the server's q2, the switch queue only
//     drains), yield, the barrier (every push-back the server sent before has reached the
//     switch: a queue-empty of its staging lock is answered after them; barriers asked for while
//     one is queued share it), drain (no holder, waiter or occupied slot: the sweeps
//     force-release expired holders meanwhile), reset, token floor at the server, delete, adopt
//     (q2 joins the server's queue, the server grants). The server grants only after the switch
//     queue drained.
//
// Tokens keep growing across every hand-over: a lock moving in gets the switch's token base at
// its server's last token; one moving out gets a floor at its server above the switch's grant
// counter, F = (counter>>SlotBits + 1) << SlotBits, set before the entry is deleted so that a
// controller taking over later finds it in place; a switch restart's locks go back with a floor
// above every token the lost switch may have granted (the largest counter observed plus
// MaxGrantRate grants per second since: [Core.Observe] and [Core.Checkpoint] keep the
// observation across a controller restart; without one, the servers' next epochs); a standby is
// told the dead server's epoch and grants above it.
//
// # Failures
//
//   - A switch restart (its stream comes back without a pipeline, or the cookie reads 0 or
//     changed): the switch is programmed again, and the locks its servers hold resident wait
//     MaxLease + LeaseMargin from the detection (every lease the lost switch granted has ended;
//     paper Figure 15), then each goes back to its server above the floor.
//   - A server that does not answer: a ping unanswered for a PingPeriod is a miss, provided the
//     switch, which carries the pings, answered a request sent after it (a switch outage makes no
//     server look dead; pings lost in a gap of the switch's answers are forgiven). DeadAfter
//     misses in a row: suspected, no longer pinged, and declared dead once its controller lease
//     has run out since the last ping sent to it (deadWait): from then it grants, pushes back and
//     answers nothing, so the move-out of its switch locks meets none of its traffic. Its standby
//     takes over its address (the route and the server entry, one atomic write) with the dead
//     server's epoch and a grace: it grants nothing until the last ping sent + ServerLease +
//     MaxLease + LeaseMargin (takeoverGrace). The server's last grant is before its controller
//     lease ran out, ServerLease after the last ping reached it, and that ping left at "last ping
//     sent" (answered or not: a ping whose answer was lost renewed the lease all the same); every
//     lease it granted ends MaxLease after its grant at the latest; LeaseMargin covers the delays
//     and the clocks' rate difference (an assumption of the deployment). Every switch lock of the
//     dead server then moves out and back in through the standby. Without a controller lease
//     (ServerLease 0) nothing bounds a cut-off server's grants; the grace is then MaxLease +
//     LeaseMargin from the takeover.
//   - A failover outlives the controller that made it. Invariant: once a standby took over a
//     server's address, every primary routes that address to the standby, never back to the
//     server. The record is the servers': a standby that took over says so in every ping answer
//     (wire.PingServing), and no other process does. A Core that did not make the failover
//     learns it from the answer to a ping through the switch's route (its takeover, or any later
//     ping) while the switch keeps its state; a bring-up (the switch lost its routes) first routes
//     the address of every server whose standby the Core has not seen take over to that standby
//     (which grants nothing before a takeover), pings it, and gives the address back to the server
//     only when the standby answers as a standby or does not answer DeadAfter times (locate).
//     The old server is then never routed to nor pinged: its controller lease stays lapsed, so it
//     grants nothing, and its epoch is below the standby's, so its tokens are below every token
//     of the standby. A standby that stays silent during locate although it took over, or that
//     restarted as a standby after its takeover, is not found (docs/controlplane.md, "Limits of
//     the controller").
//   - A server that answers a ping as another process instance restarted: its switch locks move
//     out and back in (its resident marks and q2 died with it).
//   - The controller: a backup's Core takes over when the election makes it primary (above).
//
// # Testing
//
// The scenario tests (scenario_test.go, testdata/) run Cores against a scripted rack in virtual
// time with the effects' String as golden output, and report two holders of a lock or a token
// that does not grow; rack_test.go is a randomized fake shell for the failure timing (grace,
// detection). [Config.TestingKnobs] holds the test-only behaviour: the negative controls, one
// broken rule each, which the scenario tests, the rack model (testbed/rackmodel) and the rack
// tests must catch.
package ctlcore
