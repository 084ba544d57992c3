package alloc

// Scenario tests: each file in testdata/ runs periods of one Allocator, with the plan of each
// period as the expected output (github.com/cockroachdb/datadriven). Regenerate with
// `go test ./alloc -run Scenarios -rewrite` and review the diff.
//
// Grammar:
//
//	new slots=N [levels=L] [min=M] [max=X] [h=H] [strategy=knapsack|random] [seed=S]
//	    A fresh Allocator: a pool of N slots, Rules{L, M, X}, hysteresis H.
//	step
//	LOCK[@LEVEL] RATE C
//	...
//	    One period; each input line is a demand (level 0 by default). Output: the objective,
//	    the optimum, the layout ("lock@level[start,end)") and the changes.
//	restore
//	LOCK[@LEVEL] START LEN
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
				var layout []Region
				for _, line := range nonEmpty(d.Input) {
					f := strings.Fields(line)
					if len(f) != 3 {
						d.Fatalf(t, "region %q: want LOCK[@LEVEL] START LEN", line)
					}
					lock, level, _ := strings.Cut(f[0], "@")
					r := Region{Lock: uint32(atoi(t, d, lock)), Start: atoi(t, d, f[1]), Len: atoi(t, d, f[2])}
					if level != "" {
						r.Level = atoi(t, d, level)
					}
					layout = append(layout, r)
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
		num := func(p *int) error {
			n, err := strconv.Atoi(v)
			*p = n
			return err
		}
		var err error
		switch arg.Key {
		case "slots":
			err = num(&cfg.Slots)
		case "levels":
			err = num(&cfg.Rules.Levels)
		case "min":
			err = num(&cfg.Rules.MinRegion)
		case "max":
			err = num(&cfg.Rules.MaxRegion)
		case "h":
			cfg.Hysteresis, err = strconv.ParseFloat(v, 64)
		case "strategy":
			switch v {
			case "knapsack":
				cfg.Strategy = StrategyKnapsack
			case "random":
				cfg.Strategy = StrategyRandom
			default:
				err = fmt.Errorf("strategy %q", v)
			}
		case "seed":
			cfg.Seed, err = strconv.ParseUint(v, 10, 64)
		default:
			err = fmt.Errorf("unknown argument %q", arg.Key)
		}
		if err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

func formatPlan(p *Plan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "value %g best %g locks %d used %d moves %d\n", p.Value, p.Best, p.Locks, p.Used, p.Moves)
	b.WriteString("layout:")
	if len(p.Regions) == 0 {
		b.WriteString(" (empty)")
	}
	for _, r := range p.Regions {
		fmt.Fprintf(&b, " %v[%d,%d)", r.key(), r.Start, r.End())
	}
	if p.Compacted {
		fmt.Fprintf(&b, " compacted [%d,%d)", p.Window[0], p.Window[1])
	}
	b.WriteString("\n")
	for _, c := range p.Changes {
		k := key{c.Lock, c.Level}
		switch c.Kind {
		case Insert:
			fmt.Fprintf(&b, "  insert %v [%d,%d)\n", k, c.To.Start, c.To.End())
		case Delete:
			fmt.Fprintf(&b, "  delete %v [%d,%d)\n", k, c.From.Start, c.From.End())
		default:
			fmt.Fprintf(&b, "  %v %v [%d,%d) -> [%d,%d)\n", c.Kind, k, c.From.Start, c.From.End(), c.To.Start, c.To.End())
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
