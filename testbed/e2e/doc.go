// Package e2e holds netlock's end-to-end tests: lock clients (package client) and lock servers
// (package lockserver) over UDP on loopback, with faults injected by package faultnet on every
// socket and the clients' observations checked by package history. It has no non-test code.
//
//   - TestEndToEnd: several clients against two servers under loss, duplication, reordering and
//     delay (a mild and a harsh profile, two priority levels in the harsh one), single-lock
//     acquisitions and 2PL transactions, plus clients that crash while holding a lock. Checked:
//     exclusion, fencing order, FIFO per priority (against the acceptance order logged on the
//     servers' sockets), and that every acquire was answered.
//   - TestFailover: the server of one partition stops mid-run and a replacement with a takeover
//     grace takes the partition over; the clients' Route moves to it.
//   - TestSplitBrainDetected and TestTakeoverGrace/no_grace are negative controls: setups that do
//     break mutual exclusion, which the checker must report.
//   - TestSoak (soak_test.go): the soak, clients against the rack under 20% loss, duplication,
//     reordering and delay with holders crashing and servers failing over, checked round by round
//     by package history; 20 000 operations by default, a million with `make soak` (-soak.ops;
//     docs/reliability.md). TestSoakNegativeControls runs it against a split brain and against a
//     server that forges grants, which the checker must catch.
//
// The seed of a run is logged; rerun one with
//
//	go test ./testbed/e2e -run TestEndToEnd -e2e.seed=N
//
// On a violation the test prints the packet traces of the transactions involved, as the clients
// and the servers saw them.
package e2e
