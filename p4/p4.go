// Package p4 holds netlock's P4 programs as source, embedded so that tools and tests can load
// or push them without knowing where the repository is: Netlock is p4/netlock.p4, the
// NetLock data plane for v1model, and NetlockTNA is p4/tna/netlock.p4, the same data plane for
// Tofino (TNA) (docs/dataplane.md).
package p4

import _ "embed"

// NetlockFile is the file name of the v1model data-plane program.
const NetlockFile = "netlock.p4"

// Netlock is the source of p4/netlock.p4.
//
//go:embed netlock.p4
var Netlock []byte

// NetlockTNAFile is the path of the TNA data-plane program, relative to p4/.
const NetlockTNAFile = "tna/netlock.p4"

// NetlockTNA is the source of p4/tna/netlock.p4.
//
//go:embed tna/netlock.p4
var NetlockTNA []byte
