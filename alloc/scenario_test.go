package alloc

// Scenario tests: each file in testdata/ runs periods of one Allocator, with the plan of each
// period as the expected output (github.com/cockroachdb/datadriven). Regenerate with
// `go test ./alloc -run Scenarios -rewrite` and review the diff.
//
// Grammar:
//
//	new slots=N[,N...] [h=H] [strategy=knapsack|random] [seed=S]
//	    A fresh Allocator: one pool per level of the given sizes, hysteresis H.
//	step
//	LOCK[@LEVEL] RATE C
//	...
//	    One period; each input line is a demand (level 0 by default). Output: the objective,
//	    the optimum, then per level its layout ("lock[start,end)") and changes.
//	restore
//	LEVEL LOCK START LEN
//	...
//	    Restore a layout (a controller taking over a programmed switch).

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var a *Allocator
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "new":
				cfg, err := scenarioConfig(d)
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				if a, err = New(cfg); err != nil {
					return "error: " + err.Error() + "\n"
				}
				return ""
			case "step":
				var ds []Demand
				for _, line := range nonEmpty(d.Input) {
					f := strings.Fields(line)
					if len(f) != 3 {
						d.Fatalf(t, "demand %q: want LOCK[@LEVEL] RATE C", line)
					}
					lock, level, _ := strings.Cut(f[0], "@")
					dm := Demand{Lock: uint32(atoi(t, d, lock)), Rate: atof(t, d, f[1]), Contention: atoi(t, d, f[2])}
					if level != "" {
						dm.Level = atoi(t, d, level)
					}
					ds = append(ds, dm)
				}
				p, err := a.Step(ds)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				return formatPlan(p)
			case "restore":
				layout := make([][]Region, len(a.cfg.Slots))
				for _, line := range nonEmpty(d.Input) {
					f := strings.Fields(line)
					if len(f) != 4 {
						d.Fatalf(t, "region %q: want LEVEL LOCK START LEN", line)
					}
					l := atoi(t, d, f[0])
					if l < 0 || l >= len(layout) {
						d.Fatalf(t, "level %d", l)
					}
					layout[l] = append(layout[l], Region{Lock: uint32(atoi(t, d, f[1])), Start: atoi(t, d, f[2]), Len: atoi(t, d, f[3])})
				}
				if err := a.Restore(layout); err != nil {
					return "error: " + err.Error() + "\n"
				}
				return ""
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

func scenarioConfig(d *datadriven.TestData) (Config, error) {
	var cfg Config
	for _, arg := range d.CmdArgs {
		v := strings.Join(arg.Vals, ",")
		switch arg.Key {
		case "slots":
			for _, s := range strings.Split(v, ",") {
				n, err := strconv.Atoi(s)
				if err != nil {
					return cfg, err
				}
				cfg.Slots = append(cfg.Slots, n)
			}
		case "h":
			h, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return cfg, err
			}
			cfg.Hysteresis = h
		case "strategy":
			switch v {
			case "knapsack":
				cfg.Strategy = StrategyKnapsack
			case "random":
				cfg.Strategy = StrategyRandom
			default:
				return cfg, fmt.Errorf("strategy %q", v)
			}
		case "seed":
			s, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return cfg, err
			}
			cfg.Seed = s
		default:
			return cfg, fmt.Errorf("unknown argument %q", arg.Key)
		}
	}
	return cfg, nil
}

func formatPlan(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "value %g best %g switch %d slots %d moves %d\n", p.Value, p.Best, p.Switch, p.Slots, p.Moves())
	for l, pp := range p.Levels {
		fmt.Fprintf(&b, "level %d:", l)
		if len(pp.Regions) == 0 {
			b.WriteString(" (empty)")
		}
		for _, r := range pp.Regions {
			fmt.Fprintf(&b, " %d[%d,%d)", r.Lock, r.Start, r.End())
		}
		if pp.Compacted {
			fmt.Fprintf(&b, " compacted [%d,%d)", pp.Window[0], pp.Window[1])
		}
		b.WriteString("\n")
		for _, c := range pp.Changes {
			switch c.Kind {
			case Insert:
				fmt.Fprintf(&b, "  insert %d [%d,%d)\n", c.Lock, c.To.Start, c.To.End())
			case Delete:
				fmt.Fprintf(&b, "  delete %d [%d,%d)\n", c.Lock, c.From.Start, c.From.End())
			default:
				fmt.Fprintf(&b, "  %v %d [%d,%d) -> [%d,%d)\n", c.Kind, c.Lock, c.From.Start, c.From.End(), c.To.Start, c.To.End())
			}
		}
	}
	return b.String()
}

func nonEmpty(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func atoi(t *testing.T, d *datadriven.TestData, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		d.Fatalf(t, "%q: %v", s, err)
	}
	return n
}

func atof(t *testing.T, d *datadriven.TestData, s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d.Fatalf(t, "%q: %v", s, err)
	}
	return f
}
