package modelfig

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/netlock-go/netlock/testbed/rackmodel"
)

// Paper's numbers the figures are compared with (NetLock, SIGCOMM'20, section 6).
const (
	// PaperFig13 is knapsack over random allocation, total throughput (Figure 13(a)).
	PaperFig13 = 2.95
	// PaperFig14Max is the throughput with think time 0 and enough slots, MRPS (Figure 14).
	PaperFig14Max = 8.64
	// PaperFig14Think100 is the throughput with think time 100µs, MRPS (Figure 14(a)).
	PaperFig14Think100 = 0.60
	// PaperFig10High and PaperFig10Low are NetLock's transaction throughput over DSLR's in
	// Figure 10 (ten clients, two lock servers), high and low contention.
	PaperFig10High = 18.4
	PaperFig10Low  = 14.9
)

func mrps(x float64) string { return fmt.Sprintf("%.2f", x/1e6) }

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// WriteParams writes the rack's parameters as a Markdown table.
func WriteParams(w io.Writer, p rackmodel.Params) {
	fmt.Fprintln(w, "| parameter | value | meaning |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, r := range p.Rows() {
		fmt.Fprintf(w, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
}

// WriteMarkdown writes the figure's results as Markdown: a table per figure with the ratios
// next to the paper's.
func (f *Figure) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "### %s\n\n", f.Title)
	switch f.Name {
	case "fig13":
		f.fig13(w)
	case "fig14":
		f.fig14(w)
	case "fig10":
		f.fig10(w)
	case "fig15":
		f.fig15(w)
	case "fig8":
		f.fig8(w)
	case "fig9":
		f.fig9(w)
	}
	if f.Name == "fig8" || f.Name == "fig9" {
		f.microFooter(w)
		return
	}
	if len(f.Results) > 0 {
		r := f.Results[0]
		fmt.Fprintf(w, "\nEach point: warm-up %v from every lock on the servers, with the controller's (ctlcore) "+
			"allocation period every %v on the quiesced rack, %v settling, %v measured (virtual time); seed %d; "+
			"workload %s. Every run was checked: 0 violations of exclusion or fencing.\n", r.Warmup, r.AllocPeriod,
			r.Settle, r.Window, r.Seed, r.Phase)
	}
}

// variant returns the results of one variant of Figure 13: knapsack, random, servers only.
func (f *Figure) variant(v string) (k, rn, s *Result) {
	return f.find("knapsack, "+v, -1), f.find("random, "+v, -1), f.find("servers only, "+v, 0)
}

func (f *Figure) fig13(w io.Writer) {
	fmt.Fprintln(w, "| rack | knapsack MRPS (switch + servers) | random MRPS (switch + servers) | servers only MRPS | knapsack / random | knapsack / servers only | paper (knapsack / random) |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|")
	for _, v := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		k, rn, s := f.variant(v)
		if k == nil || rn == nil || s == nil {
			continue
		}
		paper := ""
		if v == Fig13Variants[0].Name {
			paper = fmt.Sprintf("%.2fx", PaperFig13)
		}
		fmt.Fprintf(w, "| %s (%d cores/server, %d workers/client) | %s (%s + %s) | %s (%s + %s) | %s | **%s** | %s | %s |\n", v,
			k.ServerCores, k.Workers, mrps(k.RPS), mrps(k.SwitchRPS), mrps(k.ServerRPS), mrps(rn.RPS), mrps(rn.SwitchRPS),
			mrps(rn.ServerRPS), mrps(s.RPS), ratio(k.RPS, rn.RPS), ratio(k.RPS, s.RPS), paper)
	}
	fmt.Fprintln(w, "\n| rack | allocation | locks in the switch / reported by the servers | value (MRPS) | overflows to q2 | push-backs per queue-empty | acquire p50 / p99 |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|")
	for _, v := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		k, rn, _ := f.variant(v)
		for _, r := range []*Result{k, rn} {
			if r == nil {
				continue
			}
			pq := "-"
			if r.Counters.QueueEmpties > 0 {
				pq = fmt.Sprintf("%.2f", float64(r.Counters.PushBacks)/float64(r.Counters.QueueEmpties))
			}
			fmt.Fprintf(w, "| %s | %s | %d / %d | %.2f | %d | %s | %v / %v |\n", v, r.StrategyName, r.Alloc.Locks,
				r.Alloc.Reported, r.Alloc.Value/1e6, r.Counters.Overflows, pq, r.Acquire.P50, r.Acquire.P99)
		}
	}
	fmt.Fprintln(w, "\nThe value of an allocation is its objective, sum r_i s_i / c_i: the request rate the switch is "+
		"guaranteed to serve under the paper's worst case (all c_i requests of a lock at once), with the controller's "+
		"r_i (a moving average over periods). The servers report their 64 hottest locks each period "+
		"(wire.MaxLockStats): the locks reported are the controller's candidates.")
}

func (f *Figure) fig14(w io.Writer) {
	labels := distinctStrings(f.Results, func(r Result) string { return r.Label })
	fmt.Fprintf(w, "| slots | %s |\n", strings.Join(labels, " | "))
	fmt.Fprintf(w, "|---:|%s\n", strings.Repeat("---:|", len(labels)))
	for _, n := range distinctInts(f.Results, func(r Result) int { return r.Slots }) {
		fmt.Fprintf(w, "| %d |", n)
		for _, l := range labels {
			if r := f.find(l, n); r != nil {
				fmt.Fprintf(w, " %s (%.0f%%) |", mrps(r.RPS), 100*r.SwitchRPS/max(r.RPS, 1))
			} else {
				fmt.Fprint(w, " |")
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nMRPS granted (in parentheses: the share granted by the switch).")
	fmt.Fprintln(w, "\n| think time | knapsack at 0 slots | knapsack, best | random, best | knapsack / random (best) | best / 0 slots | paper |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|")
	for _, th := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		var k0, kb, rb float64
		var think time.Duration
		each := false
		for _, r := range f.Results {
			if r.Variant != th {
				continue
			}
			think, each = r.ThinkTime, r.ThinkEach
			if r.StrategyName == "knapsack" {
				kb = max(kb, r.RPS)
				if r.Slots == 0 {
					k0 = r.RPS
				}
			} else {
				rb = max(rb, r.RPS)
			}
		}
		paper := ""
		switch {
		case think == 0:
			paper = fmt.Sprintf("%.2f MRPS max; knapsack reaches it with 3000 slots, random stays flat", PaperFig14Max)
		case think == 100*time.Microsecond && each:
			paper = fmt.Sprintf("%.2f MRPS max (think time 100µs)", PaperFig14Think100)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", th, mrps(k0), mrps(kb), mrps(rb), ratio(kb, rb), ratio(kb, k0), paper)
	}
}

func (f *Figure) fig10(w io.Writer) {
	fmt.Fprintln(w, "| TPC-C | rack | kTPS | switch share of grants | TPS / servers only | mean txn latency: servers only / this | p99: servers only / this | overflows | paper (NetLock / DSLR, TPS) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, ph := range []string{"tpcc-high", "tpcc-low"} {
		s := f.find(ph+", "+Fig10Servers, -1)
		if s == nil {
			continue
		}
		paper := PaperFig10Low
		if ph == "tpcc-high" {
			paper = PaperFig10High
		}
		for _, v := range []string{Fig10Netlock, Fig10Servers} {
			r := f.find(ph+", "+v, -1)
			if r == nil {
				continue
			}
			pp := ""
			if v == Fig10Netlock {
				pp = fmt.Sprintf("%.1fx", paper)
			}
			fmt.Fprintf(w, "| %s | %s | %.0f | %.0f%% | **%s** | %s | %s | %d | %s |\n", ph, v, r.TPS/1e3,
				100*r.SwitchRPS/max(r.RPS, 1), ratio(r.TPS, s.TPS), ratio(float64(s.Txn.Mean), float64(r.Txn.Mean)),
				ratio(float64(s.Txn.P99), float64(r.Txn.P99)), r.Counters.Overflows, pp)
		}
	}
	fmt.Fprintln(w, "\nLatency ratios above 1: this rack is faster than servers only.")
}

func distinctInts(rs []Result, f func(Result) int) []int {
	var out []int
	seen := map[int]bool{}
	for _, r := range rs {
		if v := f(r); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func distinctStrings(rs []Result, f func(Result) string) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range rs {
		if v := f(r); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
