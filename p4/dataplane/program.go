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

// TNAPassFlags are the kinds of pass of the TNA program's ingress apply block, as values of
// its 4-bit variable ptype (set once, by the if-else chain that decides a pass's work; P_* are
// the program's constants), for the PHV demand of each pass type (bmv2/tofino.PassPHV,
// docs/dataplane.md "PHV demand").
var TNAPassFlags = []string{"ptype=P_ACQ", "ptype=P_WRITE", "ptype=P_TRY", "ptype=P_RW0", "ptype=P_RW", "ptype=P_REL",
	"ptype=P_GRANT", "ptype=P_CLEAN", "ptype=P_WD0", "ptype=P_WD", "ptype=P_PROBE", "ptype=P_ADMIN", "ptype=P_SEND",
	"ptype=P_PBNONE", "ptype=P_BINC"}
