package rmabench

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Swept thresholds that CheckSweeps examines.
const (
	ParamTR = "T_R"
	ParamTL = "T_L"
)

// SweepCheck says whether one swept threshold acted at one point of a panel: the values tried
// (same P, same everything else) and, per value, the count of the events the threshold
// governs: T_R-triggered counter resets for T_R, the T_L,1 and T_L,2 hits for T_L,i. A
// threshold whose values all give the same counts did not act there, and the differences
// between its throughputs are noise of the schedule, not its effect.
type SweepCheck struct {
	Panel  string
	Procs  int
	Param  string
	Fixed  string // what the group holds fixed besides P (F_W)
	Values []string
	Events []string
	Acts   bool
}

// CheckSweeps examines every panel of figs whose series vary T_R or T_L,i of RMA-RW.
func CheckSweeps(figs []Figure, rs Results) []SweepCheck {
	var out []SweepCheck
	for _, f := range figs {
		for _, pn := range f.Panels {
			var groups []*sweepGroup
			find := func(param, fixed string, p int) *sweepGroup {
				for _, g := range groups {
					if g.param == param && g.fixed == fixed && g.procs == p {
						return g
					}
				}
				g := &sweepGroup{param: param, fixed: fixed, procs: p}
				groups = append(groups, g)
				return g
			}
			for _, se := range pn.Series {
				for _, c := range se.Points {
					if c.Alg != RMARW {
						continue
					}
					// A config belongs to the T_R group of its (P, F_W, T_L, T_DC) and to the T_L
					// group of its (P, F_W, T_DC, T_R).
					find(ParamTR, fmt.Sprintf("F_W=%g%% T_L=%v T_DC=%d", c.WriteFrac*100, c.TL, c.TDC), c.Procs).add(c)
					find(ParamTL, fmt.Sprintf("F_W=%g%% T_DC=%d T_R=%d", c.WriteFrac*100, c.TDC, c.TR), c.Procs).add(c)
				}
			}
			for _, g := range groups {
				vary := map[string]bool{}
				for _, c := range g.cfgs {
					vary[paramValue(g.param, c)] = true
				}
				if len(vary) < 2 {
					continue
				}
				sc := SweepCheck{Panel: pn.Title, Procs: g.procs, Param: g.param, Fixed: g.fixed}
				ev := map[string]bool{}
				complete := true
				for _, c := range g.cfgs {
					r, ok := rs.Get(c)
					if !ok {
						complete = false
						continue
					}
					e := events(g.param, r)
					sc.Values = append(sc.Values, paramValue(g.param, c))
					sc.Events = append(sc.Events, e)
					ev[e] = true
				}
				if !complete || len(sc.Values) < 2 {
					continue
				}
				sc.Acts = len(ev) > 1
				out = append(out, sc)
			}
		}
	}
	return out
}

// sweepGroup is the points of one panel that differ in one threshold only.
type sweepGroup struct {
	param, fixed string
	procs        int
	cfgs         []Config
}

func (g *sweepGroup) add(c Config) {
	if !slices.ContainsFunc(g.cfgs, func(o Config) bool { return key(o) == key(c) }) {
		g.cfgs = append(g.cfgs, c)
	}
}

func paramValue(param string, c Config) string {
	if param == ParamTR {
		if c.TR == 0 {
			return "default"
		}
		return fmt.Sprint(c.TR)
	}
	if c.TL == nil {
		return "default"
	}
	return fmt.Sprint(c.TL)
}

func events(param string, r Result) string {
	if param == ParamTR {
		return fmt.Sprint(r.Counts.TRResets)
	}
	return fmt.Sprintf("%d/%d", r.Counts.TLHits[0], r.Counts.TLHits[1])
}

// WriteSweepChecks prints the checks as a Markdown table.
func WriteSweepChecks(w io.Writer, cs []SweepCheck) error {
	if _, err := fmt.Fprintln(w, "| panel | P | threshold | held fixed | values | events per value | acts |\n|---|---:|---|---|---|---|---|"); err != nil {
		return err
	}
	for _, c := range cs {
		what := "T_R resets"
		if c.Param == ParamTL {
			what = "T_L,1/T_L,2 hits"
		}
		acts := "yes"
		if !c.Acts {
			acts = "**no**"
		}
		if _, err := fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s: %s | %s |\n", c.Panel, c.Procs, c.Param, c.Fixed,
			strings.Join(c.Values, ", "), what, strings.Join(c.Events, ", "), acts); err != nil {
			return err
		}
	}
	return nil
}

// WriteCounts prints, per figure, the protocol counts of every RMA-RW and central-lock point
// measured in the window: completed writes, writer phases, T_R hits and what became of them,
// reader entries per counter between resets, and the hand-overs below and at T_L,i.
func WriteCounts(w io.Writer, figs []Figure, rs Results) error {
	for _, f := range figs {
		var cs []Config
		seen := map[string]bool{}
		for _, pn := range f.Panels {
			for _, se := range pn.Series {
				for _, c := range se.Points {
					if !c.rw() || seen[key(c)] {
						continue
					}
					if _, ok := rs.Get(c); ok {
						seen[key(c)] = true
						cs = append(cs, c)
					}
				}
			}
		}
		if len(cs) == 0 {
			continue
		}
		if _, err := fmt.Fprintf(w, "### %s: counts in the window\n\n", f.Title); err != nil {
			return err
		}
		fmt.Fprintln(w, "| point | P | F_W % | window us | ops | writes | writer phases | T_R hits | T_R resets | T_R hit, writer queued | entries/counter/epoch | passes L1/L2 | T_L hits L1/L2 |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
		for _, c := range cs {
			r, _ := rs.Get(c)
			k := r.Counts
			win := fmt.Sprint(r.Window / 1000)
			if r.Capped {
				win += " (capped)"
			}
			if r.Alg == CentralRW {
				fmt.Fprintf(w, "| %s | %d | %g | %s | %d | %d | | | | | | | |\n", r.Label(), r.Procs, r.WriteFrac*100, win, r.Ops, r.Writes)
				continue
			}
			fmt.Fprintf(w, "| %s | %d | %g | %s | %d | %d | %d | %d | %d | %d | %s | %d/%d | %d/%d |\n", r.Label(), r.Procs, r.WriteFrac*100,
				win, r.Ops, r.Writes, k.WritePhases, k.TRHits, k.TRResets, k.TRWriterQueued, num(r.EntriesPerEpoch()),
				k.Passes[0], k.Passes[1], k.TLHits[0], k.TLHits[1])
		}
		if _, err := fmt.Fprintln(w); err != nil {
			return err
		}
	}
	return nil
}
