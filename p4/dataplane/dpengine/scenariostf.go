package dpengine

import (
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/stf"
	"github.com/netlock-go/netlock/internal/p4info"
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

// PipelinesSTF adapts cmds (ScenarioSTF's output) to a program of several Pipelines
// (dataplane.TNAFold), whose objects the engine names with their Pipeline's prefix
// (pipe_a.NetlockIngress.rack): a table write (add, setdefault) or a meter's rates go to the
// object of that name in each Pipeline that has it, as a control plane writes each pipe's; a
// register read goes to the copy of the Pipeline owner names (the one whose code uses the
// register: its other copies stay 0), unchanged when owner does not know it. Counter reads need
// no change (bmv2/stf sums a counter's copies in the Pipelines). It never modifies cmds.
func PipelinesSTF(cmds []stf.Command, sw *engine.Switch, owner func(register string) (string, bool)) []stf.Command {
	var tables, meters []string
	for _, t := range sw.Tables() {
		tables = append(tables, t.Name)
	}
	for _, m := range sw.Meters() {
		meters = append(meters, m.Name)
	}
	copies := func(names []string, name string) []string {
		var out []string
		for _, n := range names {
			if n != name && p4info.InPipeline(n, name) {
				out = append(out, n)
			}
		}
		return out
	}
	rename := func(c stf.Command, to string) stf.Command {
		c.Text = to + strings.TrimPrefix(c.Text, c.Args[0])
		c.Args = append([]string{to}, c.Args[1:]...)
		return c
	}
	out := make([]stf.Command, 0, len(cmds))
	for _, c := range cmds {
		var names []string
		switch {
		case len(c.Args) == 0:
		case c.Name == "add" || c.Name == "setdefault":
			names = copies(tables, c.Args[0])
		case c.Name == "meter_set_rates" || c.Name == "meter_array_set_rates":
			names = copies(meters, c.Args[0])
		case c.Name == "register_read":
			if to, ok := owner(c.Args[0]); ok {
				names = []string{to}
			}
		}
		if len(names) == 0 {
			out = append(out, c)
			continue
		}
		for _, n := range names {
			out = append(out, rename(c, n))
		}
	}
	return out
}
