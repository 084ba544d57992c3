package dpengine

import (
	"strconv"

	"github.com/netlock-go/netlock/bmv2/stf"
	"github.com/netlock-go/netlock/p4/dataplane"
)

// ScenarioSTF adapts the commands of a scenario's STF file (p4/testdata, translated from
// p4/dataplane/dpengine/scenarios) to the program of architecture arch
// (dataplane.Program.Name, or P4Info's pkg_info.arch). The files are written once, in
// p4/netlock.p4's terms, and run against both programs; the TNA program differs from them in
// two places the control plane or the layout decide, not the switch's behaviour:
//   - its clone sessions truncate the copy after the answer (dataplane.CloneTruncate), as the
//     control plane configures them: a two-argument mirroring_add gets the length;
//   - its queue counters are four 16-bit registers (dataplane.TNAQueueParts), not one 64-bit
//     one: a register_read of dataplane.RegisterQueue becomes a read of each part.
//
// For p4/netlock.p4 it returns cmds unchanged. It never modifies cmds.
func ScenarioSTF(arch string, cmds []stf.Command) []stf.Command {
	n := dataplane.CloneTruncate(arch)
	if n == 0 {
		return cmds
	}
	out := make([]stf.Command, 0, len(cmds))
	for _, c := range cmds {
		switch {
		case c.Name == "mirroring_add" && len(c.Args) == 2:
			c.Args = append(append([]string(nil), c.Args...), strconv.Itoa(n))
			out = append(out, c)
		case c.Name == "register_read" && len(c.Args) == 3 && c.Args[0] == dataplane.RegisterQueue:
			v, err := strconv.ParseUint(c.Args[2], 0, 64)
			if err != nil {
				out = append(out, c) // the runner reports it
				continue
			}
			for _, p := range dataplane.TNAQueueParts {
				part := c
				part.Args = []string{p.Register, c.Args[1], strconv.FormatUint(v>>p.Shift&0xffff, 10)}
				out = append(out, part)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}
