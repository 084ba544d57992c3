package dataplane

import "github.com/netlock-go/netlock/p4"

// Program is one of netlock's switch programs. Both implement the same data plane with the
// same control interface (docs/dataplane.md lists where the TNA program differs); the tests of
// this package run on each.
type Program struct {
	// Name is "v1model" or "tna".
	Name string
	// File is the program's path relative to the repository's p4/ directory.
	File string
	// Source is the program's text.
	Source []byte
}

// The programs.
var (
	// V1Model is p4/netlock.p4, for v1model (bmv2's simple_switch and netlock switch).
	V1Model = Program{Name: "v1model", File: p4.NetlockFile, Source: p4.Netlock}
	// TNA is p4/tna/netlock.p4, for Tofino (bf-p4c) and netlock switch.
	TNA = Program{Name: "tna", File: p4.NetlockTNAFile, Source: p4.NetlockTNA}
)

// Programs lists the programs, v1model first.
var Programs = []Program{V1Model, TNA}

// TNAPassFlags are the 1-bit variables of the TNA program's ingress apply block that say what a
// pass does (at most one is 1: the if-else chain that sets them), for the PHV demand of each
// pass type (bmv2/tofino.PassPHV, docs/dataplane.md "PHV demand").
var TNAPassFlags = []string{"do_acq", "do_write", "do_try", "do_rw0", "do_rw", "do_rel", "do_grant", "do_clean",
	"do_wd0", "do_wd", "do_probe", "do_admin", "do_send", "do_pbnone", "do_binc"}
