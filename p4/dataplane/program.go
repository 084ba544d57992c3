package dataplane

import (
	"fmt"
	"strings"

	"github.com/netlock-go/netlock/p4"
)

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
	// Variant names a build of the program other than its default one ("" for the default;
	// "fold" for TNAFold).
	Variant string
	// Defines are the preprocessor macros the build adds to the sizing's (Sizing.Defines).
	Defines map[string]string
	// Pipes is the number of pipes of the chip the build runs on (engine.Config.Pipes; 0 for a
	// program the engine runs in one), and Loopback the ports a packet sent out of re-enters
	// the ingress from (engine.Config.Loopback; nil for the engine's default, port 68).
	Pipes    int
	Loopback []int
}

// Label is the program's name, with its variant if it has one ("tna-fold").
func (p Program) Label() string {
	if p.Variant == "" {
		return p.Name
	}
	return p.Name + "-" + p.Variant
}

// MacrosWith returns s's macros (Sizing.Defines) with the build's own (Defines).
func (p Program) MacrosWith(s Sizing) map[string]string {
	m := s.Defines()
	for k, v := range p.Defines {
		m[k] = v
	}
	return m
}

// The programs.
var (
	// V1Model is p4/netlock.p4, for v1model (bmv2's simple_switch and netlock switch).
	V1Model = Program{Name: "v1model", File: p4.NetlockFile, Source: p4.Netlock}
	// TNA is p4/tna/netlock.p4, for Tofino (bf-p4c) and netlock switch.
	TNA = Program{Name: "tna", File: p4.NetlockTNAFile, Source: p4.NetlockTNA}
	// TNAFold is p4/tna/netlock.p4 built as the Tofino 1 fold (NETLOCK_FOLD=1, docs/dataplane.md,
	// "The fold"): two Pipelines, half a in pipe 0's ingress and half b in pipe 1's, on a chip
	// of two pipes whose recirculation ports (68, pipe 0's, and 196, pipe 1's) are in loopback.
	TNAFold = Program{Name: "tna", File: p4.NetlockTNAFile, Source: p4.NetlockTNA, Variant: "fold",
		Defines: map[string]string{"NETLOCK_FOLD": "1"}, Pipes: 2, Loopback: []int{TNARecircPort, TNARecircPortB}}
)

// The TNA program's recirculation ports (RECIRC_PORT, RECIRC_PORT_B): Tofino 1's of pipes 0 and 1.
const (
	TNARecircPort  = 68
	TNARecircPortB = 196
)

// Programs lists the programs, v1model first.
var Programs = []Program{V1Model, TNA}

// Builds lists every build of the programs (Programs and their variants), by Label.
var Builds = []Program{V1Model, TNA, TNAFold}

// BuildLabels lists the labels of Builds ("v1model", "tna", "tna-fold").
func BuildLabels() []string {
	out := make([]string, len(Builds))
	for i, p := range Builds {
		out[i] = p.Label()
	}
	return out
}

// BuildNamed returns the build of Builds whose Label is label.
func BuildNamed(label string) (Program, error) {
	for _, p := range Builds {
		if p.Label() == label {
			return p, nil
		}
	}
	return Program{}, fmt.Errorf("dataplane: no program %q (want one of %s)", label, strings.Join(BuildLabels(), ", "))
}

// TNAPassFlags are the kinds of pass of the TNA program's ingress apply block, as values of
// its 4-bit variable ptype (set once, by the if-else chain that decides a pass's work; P_* are
// the program's constants), for the PHV demand of each pass type (bmv2/tofino.PassPHV,
// docs/dataplane.md "PHV demand").
var TNAPassFlags = []string{"ptype=P_ACQ", "ptype=P_WRITE", "ptype=P_TRY", "ptype=P_RW0", "ptype=P_RW", "ptype=P_REL",
	"ptype=P_GRANT", "ptype=P_CLEAN", "ptype=P_WD0", "ptype=P_WD", "ptype=P_PROBE", "ptype=P_ADMIN", "ptype=P_SEND",
	"ptype=P_PBNONE", "ptype=P_BINC"}
