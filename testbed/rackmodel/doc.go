// Package rackmodel is the rack model: NetLock's testbed (a Tofino switch, ten or twelve client
// machines, two lock servers with DPDK; NetLock, SIGCOMM'20, section 6) in virtual time, the way
// rdma/sim models an RDMA NIC. It lets netlock show the paper's results at the paper's scale on
// a small shared machine: runs are deterministic for a seed and do not depend on the machine's
// load.
//
// # What is real and what is modelled
//
// Only time is modelled. Every decision is made by netlock's own code, the same code the real
// rack runs; the model is its shell, as the UDP and P4Runtime programs are:
//
//   - The switch is p4/netlock.p4 on the v1model engine (bmv2/engine, Tofino-constraint mode).
//     Every frame a host sends goes through it: it grants the locks in its lock table, overflows
//     to the servers' q2 and takes push-backs, and routes everything else. Its clock (ingress
//     timestamps, lease times) is the virtual clock.
//   - Each lock server is a lockserver/srvcore.Core (its shards of lockcore, the rack key and the
//     peers, the token epoch, the grant holds, the controller's admin operations) on a machine
//     of ServerCores cores: a request is served by the core of its shard
//     (srvcore.Core.ShardIndex), one at a time; the core's Tick runs at its NextDeadline; an epoch
//     it asks to persist is acknowledged after FsyncDelay (server.go).
//   - Each client worker is a client/clientcore.Core (retransmissions, liveness probes, leases,
//     stray grants given back, withdrawals) on its own UDP port, running transactions with
//     client.Txn's rules: the locks in client.OrderLocks' order, one acquire at a time, strict
//     two-phase locking, every lock released on a failure (client.go). The workloads are those
//     of the wall-clock demo (testbed.Workload: TPC-C-like and the microbenchmarks), or any
//     Source.
//   - The controller is controlplane/ctlcore (bring-up, lease sweeps, pings, allocation periods,
//     moves, a switch restart's recovery, a server's failover, a backup's takeover), driven in
//     virtual time: its writes, pipeline pushes and lock-table reads are carried out on the
//     engine, its admin packets go through the switch's CPU port, its server admin requests
//     through the switch to the servers (control.go).
//   - The kernel is internal/des, the one under rdma/sim; the online checker is
//     history.Checker, the one under history.Check.
//
// What the model adds is when things happen ([Params], one struct, stated next to every figure):
// the time a host's stack and NIC take each way, the serialization and propagation of every
// frame on its link, the switch's port-to-port latency per pipeline pass and its line rate, the
// CPU time of a client worker per message and of a server core per request (each core serves
// its requests one at a time, so servers saturate), the think time of a transaction, and the
// time of the controller's switch operations (AdminDelay, default 0). Events are ordered by
// (virtual time, scheduling order), so a run is a deterministic function of its Config.
//
// Simplifications, each a statement about the model rather than about netlock: the switch
// runs all passes of a packet at once (a resubmitted pass of one packet is not interleaved with
// other packets; NetLock's algorithm is written so that it need not be); links lose and duplicate
// only what Params.Loss and Params.Dup say, and only the clients' links; a server's Tick costs no
// CPU; the controller's admin packets do not occupy the pipeline; the clients have no jitter.
//
// # Checks
//
// Every run is checked online ([Rack.Violations]): a history.Checker observes the clients'
// observations as they happen and forgets what has ended, so runs of any length are checked in
// bounded memory; [Config.Record] also keeps the whole history and the rack's acceptance order
// for history.Check with every rule ([Rack.Check]). [Counters] keep every category apart so
// that conservation can be checked: every acquire sent is answered once (granted or rejected),
// every release acknowledged once, and the grants made by the switch and the servers add up to
// the grants the clients observed. [TestingKnobs] break the rack on purpose for the negative
// controls.
//
// # The control plane in the model
//
// [New] brings the rack up the way the controller brings up a switch that just booted.
// [Rack.Allocate] runs one of the controller's allocation periods on a quiesced rack (the
// servers' statistics since their last report, Algorithm 3 or the random strawman on them, the
// moves) and waits for its moves; with Params.AllocPeriod the controller runs them on its own
// while the clients run.
//
// # The NetChain baseline
//
// [Config.NetChain] makes the rack the paper's NetChain baseline (Figures 10 and 11): the switch
// runs p4/netchain/netchain.p4 on the same engine (one slot per lock, every lock exclusive, no
// queue), no controller runs and the servers idle, and the clients follow package client's
// NetChain rules (their locks hashed onto the slots, a rejected acquire handled by
// NetChain.Policy: sent again after client.NetChainBackoff's wait holding the locks, or NetLock's
// own client code's rollback, client.NetChainRollback). The checks are the same.
//
// # Failures
//
// [Rack.RestartSwitch], [Rack.FailServer], [Rack.KillController] and [Rack.CrashWorker] inject
// failures; the controller handles them as it does on the real rack (docs/controlplane.md): a
// restarted switch is programmed again and its locks wait out the leases before their servers
// adopt them; a dead server's address moves to its standby (Params.Standbys), which waits out
// the leases; a backup controller takes over.
package rackmodel
