// Package rackmodel is the rack model: NetLock's testbed (a Tofino switch, ten or twelve client
// machines, two lock servers with DPDK; NetLock, SIGCOMM'20, section 6) in virtual time, the way
// rdma/sim models an RDMA NIC. It lets netlock show the paper's results at the paper's scale on
// a small shared machine: runs are deterministic for a seed and do not depend on the machine's
// load.
//
// # What is real and what is modelled
//
// Only time is modelled. Every lock decision is made by the real code:
//
//   - The switch is p4/netlock.p4 on the v1model engine (bmv2/engine, Tofino-constraint mode),
//     loaded and programmed as docs/dataplane.md describes (rack, lock servers, routes, clone
//     sessions, lock_table entries, admin packets through the CPU port). Every frame a host
//     sends goes through it: it grants the locks in its lock table, overflows to the servers'
//     q2 and takes push-backs, and routes everything else. Its clock (ingress timestamps,
//     lease times) is the virtual clock.
//   - Each lock server is a set of lockcore.Core shards, one per core, stepped with the virtual
//     clock; control messages must come from the switch with the rack key.
//   - The client workers run client.Txn's protocol (locks in ascending order, one acquire at a
//     time, strict 2PL, retransmissions with the retry flag, leases, fencing tokens) on the
//     wire format, over the workloads of the wall-clock demo (testbed.Workload: TPC-C-like and
//     the microbenchmarks).
//
// What the model adds is when things happen ([Params], one struct, stated next to every figure):
// the time a host's stack and NIC take each way, the serialization and propagation of every
// frame on its link, the switch's port-to-port latency per pipeline pass and its line rate, the
// CPU time of a client worker per message and of a server core per request (each core serves
// its requests one at a time, so servers saturate), the think time of a transaction. Events
// are ordered by (virtual time, scheduling order), so a run is a deterministic function of its
// Config.
//
// Simplifications, each a statement about the model rather than about netlock: the switch
// runs all passes of a packet at once (a resubmitted pass of one packet is not interleaved with
// other packets; NetLock's algorithm is written so that it need not be); links do not lose
// packets unless a fault says so; a lease sweep costs a server no CPU; the control plane's
// table writes and admin packets take no virtual time (allocations run while the rack is
// quiesced; the failure handling runs while clients run).
//
// # Checks
//
// Every run is checked online ([Rack.Violations]): exclusion and fencing on the client
// observations, with history.Check's definitions (checker.go); [Config.Record] also keeps the
// whole history for history.Check itself. [Counters] keep every category apart so that
// conservation can be checked: every acquire sent is answered once (granted or rejected), every
// release acknowledged once, and the grants made by the switch and the servers add up to the
// grants the clients observed. [Fault] breaks the rack on purpose for the negative controls.
//
// # The control plane in the model
//
// [Rack.MeasureDemand] measures r_i (acquires per second) and c_i (the deepest queue after an
// acquire) at the servers during a warm-up, as NetLock's control plane learns them;
// [Rack.Allocate] runs alloc (Algorithm 3 or the random strawman) on them and moves the chosen
// locks into the switch while the rack is quiesced ([Rack.Quiesce]).
//
// # Failures
//
// [Rack.StartControl] starts the controller's sweeps and pings; [Rack.RestartSwitch] and
// [Rack.FailServer] inject the failures of the paper's Figure 15, handled as
// controlplane/ctlcore handles them (failure.go): a restarted switch is re-programmed and its
// locks wait out the leases before their servers adopt them; a dead server's address and locks
// move to another server, which waits out the leases, and its switch locks move out.
package rackmodel
