package modelfig

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/netlock-go/netlock/testbed/rackmodel"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/testbed/tpcc/tpccbench"
)

// Paper's numbers the figures are compared with (NetLock, SIGCOMM'20, section 6).
const (
	// PaperFig13 is knapsack over random allocation, total throughput (Figure 13(a)).
	PaperFig13 = 2.95
	// PaperFig14Max is the throughput with think time 0 and enough slots, MRPS (Figure 14).
	PaperFig14Max = 8.64
	// PaperFig14Think100 is the throughput with think time 100µs, MRPS (Figure 14(a)).
	PaperFig14Think100 = 0.60
	// SwitchGrantRatio is a switch grant's latency over a server grant's in the rack model, for
	// the latency-bound cap (tpcc.Share.LatencyBound): 6.9 µs (Figure 8, every lock in the
	// switch) over about 14 µs (an uncontended server grant: two more host crossings each way and
	// the server's CPU; Figure 13's acquire p50, 14.1 µs).
	SwitchGrantRatio = 0.5
)

// PaperFig10MRPS is NetLock's lock-request throughput in Figure 10(a), MRPS, by contention: the
// DSLR values of tpccbench.Paper times the text's ratios (0.57 x 14.9, 0.073 x 18.4).
var PaperFig10MRPS = map[string]float64{"low": 8.5, "high": 1.35}

// Cap is what the switch share s of a rack's grants allows its gain over the same rack with
// every lock on the servers to be: 1/(1-s) if the lock servers are the bottleneck (they see only
// the share 1-s of the requests), and, if the closed-loop clients are (throughput = workers over
// transaction latency), 1/(1-s(1-SwitchGrantRatio)) with locks taken one after the other, as the
// rack's clients take them (tpcc.Share).
type Cap struct {
	S, ServerBound, LatencyBound float64
}

// ShareCap returns r's measured switch share of grants and its caps.
func ShareCap(r Result) Cap {
	sh := tpcc.Share{}
	if r.RPS > 0 {
		sh.S = r.SwitchRPS / r.RPS
	}
	return Cap{S: sh.S, ServerBound: sh.ServerBound(), LatencyBound: sh.LatencyBound(SwitchGrantRatio, false)}
}

// capNote says what a gain g over servers only is against the caps c.
func capNote(g float64, c Cap) string {
	switch {
	case g > c.ServerBound*1.005:
		return "above both caps"
	case g > c.LatencyBound*1.005:
		return "above the latency cap, within the server cap"
	case g < 1:
		return "a loss"
	}
	return "within both caps"
}

func capCells(c Cap) string {
	return fmt.Sprintf("%.1f%% | %.2fx | %.2fx", 100*c.S, c.ServerBound, c.LatencyBound)
}

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
	case "fig10", "fig11":
		f.fig10(w)
	case "fig15":
		f.fig15(w)
	case "fig12":
		f.fig12(w)
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
			r.Settle, r.Window, r.Seed, strings.Join(distinctStrings(f.Results, func(r Result) string { return r.Phase }), " and "))
	}
}

// variant returns the results of one variant of Figure 13: knapsack, random, servers only.
func (f *Figure) variant(v string) (k, rn, s *Result) {
	return f.find("knapsack, "+v, -1), f.find("random, "+v, -1), f.find("servers only, "+v, 0)
}

func (f *Figure) fig13(w io.Writer) {
	fmt.Fprintln(w, "| rack | knapsack MRPS (switch + servers) | random MRPS (switch + servers) | servers only MRPS | knapsack / random | knapsack / servers only | paper (knapsack / random) |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|")
	defer f.fig13Caps(w)
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

// fig13Caps writes the switch-share caps of Figure 13's racks.
func (f *Figure) fig13Caps(w io.Writer) {
	fmt.Fprintln(w, "\n| rack | allocation | switch share s | cap 1/(1-s) (servers bound) | cap 1/(1-s/2) (clients bound) | measured / servers only | against the caps | cap over random (1-s_random)/(1-s) | measured / random |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|---:|---:|")
	for _, v := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		k, rn, s := f.variant(v)
		if k == nil || rn == nil || s == nil {
			continue
		}
		kc, rc := ShareCap(*k), ShareCap(*rn)
		for _, x := range []struct {
			r *Result
			c Cap
		}{{k, kc}, {rn, rc}} {
			g := x.r.RPS / s.RPS
			over := "- | -"
			if x.r == k {
				over = fmt.Sprintf("%.2fx | %s", (1-rc.S)/(1-kc.S), ratio(k.RPS, rn.RPS))
			}
			fmt.Fprintf(w, "| %s | %s | %s | %.2fx | %s | %s |\n", v, x.r.StrategyName, capCells(x.c), g, capNote(g, x.c), over)
		}
	}
	fmt.Fprintln(w, "\n"+capExplained)
}

// capExplained says what the caps are and why a measured gain can exceed them.
const capExplained = "The switch share s is the switch's grants over all grants in the window. The caps bound the gain " +
	"over the same rack with every lock on the servers: 1/(1-s) when the lock servers are the bottleneck (they " +
	"see only the share 1-s of the requests), 1/(1-s/2) when the closed-loop clients are and nothing waits on " +
	"contention (a switch grant takes about half a server grant's time, locks taken one after the other). A gain " +
	"above the latency cap comes from the contended locks the switch holds: their hand-over (a holder's release " +
	"to the lock, the grant to the next waiter) goes through the switch in about half the time, and every waiter " +
	"gains it. A gain above the server cap means the servers-only rack is not bound by the servers' throughput " +
	"alone: near saturation, the requests the switch takes off the servers shorten the queue every remaining " +
	"server request waits in (the latency cap holds a server grant's time fixed), and a hot lock's core (lock l on " +
	"shard l mod cores) is busier than the average."

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
	fmt.Fprintln(w, "\n| think time | knapsack at 0 slots | knapsack, best | random, best | knapsack / random (best) | best / 0 slots | switch share s of the best / cap 1/(1-s) / cap 1/(1-s/2) | paper |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---|---|")
	for _, th := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		var k0, kb, rb float64
		var best Result
		var think time.Duration
		each := false
		for _, r := range f.Results {
			if r.Variant != th {
				continue
			}
			think, each = r.ThinkTime, r.ThinkEach
			if r.StrategyName == "knapsack" {
				if r.RPS > kb {
					best = r
				}
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
		c := ShareCap(best)
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %.1f%% / %.2fx / %.2fx | %s |\n", th, mrps(k0), mrps(kb), mrps(rb), ratio(kb, rb),
			ratio(kb, k0), 100*c.S, c.ServerBound, c.LatencyBound, paper)
	}
}

// baseline returns the baseline point of alg at contention ("high", "low").
func (f *Figure) baseline(alg, contention string) *tpccbench.Point {
	for i := range f.Baselines {
		if p := &f.Baselines[i]; p.Alg == alg && p.Contention == contention {
			return p
		}
	}
	return nil
}

// baselineName is how the paper writes each baseline.
var baselineName = map[string]string{"dslr": "DSLR", "drtm": "DrTM"}

// fig10Phases are Figures 10 and 11's workloads and the baselines' names for them.
var fig10Phases = []struct{ phase, contention string }{{"tpcc-high", "high"}, {"tpcc-low", "low"}}

// paperVersus is the paper's NetLock / alg transaction throughput ratio (Figure 11: "up to").
func (f *Figure) paperVersus(alg, contention string) string {
	if f.Name == "fig11" {
		if v, ok := tpccbench.PaperRatio[alg]["fig11-max"]; ok {
			return fmt.Sprintf("up to %.1fx", v)
		}
		return ""
	}
	if v, ok := tpccbench.PaperRatio[alg][contention]; ok {
		return fmt.Sprintf("%.1fx", v)
	}
	return ""
}

func (f *Figure) fig10(w io.Writer) {
	fmt.Fprintln(w, "| TPC-C | system | kTPS | MRPS | paper MRPS | switch share | mean / p99 txn latency (µs) | NetLock / this, TPS | NetLock / this, requests/s | paper (NetLock / this, TPS) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, ph := range fig10Phases {
		n := f.find(ph.phase+", "+Fig10Netlock, -1)
		if n == nil {
			continue
		}
		row := func(name string, tps, rps, paperMRPS, share float64, mean, p99 time.Duration, paper string) {
			pm := ""
			if paperMRPS > 0 && f.Name == "fig10" {
				pm = fmt.Sprintf("%.3g", paperMRPS)
			}
			fmt.Fprintf(w, "| %s | %s | %.1f | %s | %s | %.0f%% | %.0f / %.0f | **%s** | %s | %s |\n", ph.phase, name, tps/1e3, mrps(rps),
				pm, 100*share, float64(mean)/1e3, float64(p99)/1e3, ratio(n.TPS, tps), ratio(n.RPS, rps), paper)
		}
		for _, v := range []string{Fig10Netlock, Fig10Servers} {
			if r := f.find(ph.phase+", "+v, -1); r != nil {
				pm := 0.0
				if v == Fig10Netlock {
					pm = PaperFig10MRPS[ph.contention]
				}
				row(v, r.TPS, r.RPS, pm, r.SwitchRPS/max(r.RPS, 1), r.Txn.Mean, r.Txn.P99, "")
			}
		}
		for _, v := range Fig10NetlockClientCs {
			if r := f.find(ph.phase+", "+v.Label, -1); r != nil {
				row(clientCName(*r), r.TPS, r.RPS, 0, r.SwitchRPS/max(r.RPS, 1), r.Txn.Mean, r.Txn.P99, "")
			}
		}
		for _, nc := range Fig10NetChains {
			if r := f.find(ph.phase+", "+nc.Label, -1); r != nil {
				row(netChainName(*r), r.TPS, r.RPS, 0, r.SwitchRPS/max(r.RPS, 1), r.Txn.Mean, r.Txn.P99, f.paperNetChain(ph.contention))
			}
		}
		for _, alg := range []string{"dslr", "drtm"} {
			if b := f.baseline(alg, ph.contention); b != nil {
				row(fmt.Sprintf("%s (rdma/sim, %.2f aborts/txn)", baselineName[alg], b.AbortsPerTxn), b.TPS, b.MRPS*1e6,
					tpccbench.Paper[alg][ph.contention], 0, time.Duration(b.Mean), time.Duration(b.P99), f.paperVersus(alg, ph.contention))
			}
		}
	}
	fmt.Fprintln(w, "\nWhat limits NetLock's gain over its own servers (the switch-share cap: s measured in the window):")
	fmt.Fprintln(w, "\n| TPC-C | switch share s | cap 1/(1-s) (servers bound) | cap 1/(1-s/2) (clients bound) | NetLock / servers only, TPS | against the caps | overflows to q2 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|---:|")
	for _, ph := range fig10Phases {
		n, s := f.find(ph.phase+", "+Fig10Netlock, -1), f.find(ph.phase+", "+Fig10Servers, -1)
		if n == nil || s == nil {
			continue
		}
		c := ShareCap(*n)
		g := n.TPS / max(s.TPS, 1)
		fmt.Fprintf(w, "| %s | %s | %.2fx | %s | %d |\n", ph.phase, capCells(c), g, capNote(g, c), n.Counters.Overflows)
	}
	fmt.Fprintln(w, "\n"+capExplained+" A loss goes with the switch locks' overflow to q2 (the overflows column; each push-back brings back one request, docs/rackmodel.md, \"A finding\").")
	f.netChainNote(w)
	f.clientCTable(w)
	if len(f.Baselines) > 0 {
		fmt.Fprintln(w, "\nWhere the ratio to a baseline comes from: NetLock / DSLR = (NetLock / servers only) x (servers only / DSLR), TPS.")
		fmt.Fprintln(w, "\n| TPC-C | NetLock / servers only (the switch) | servers only / DSLR | servers only / DrTM | NetLock / DSLR | NetLock / DrTM |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
		for _, ph := range fig10Phases {
			n, s := f.find(ph.phase+", "+Fig10Netlock, -1), f.find(ph.phase+", "+Fig10Servers, -1)
			d, t := f.baseline("dslr", ph.contention), f.baseline("drtm", ph.contention)
			if n == nil || s == nil || d == nil || t == nil {
				continue
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", ph.phase, ratio(n.TPS, s.TPS), ratio(s.TPS, d.TPS), ratio(s.TPS, t.TPS),
				ratio(n.TPS, d.TPS), ratio(n.TPS, t.TPS))
		}
		b := f.Baselines[0]
		fmt.Fprintf(w, "\nDSLR and DrTM: rdma/dlm on rdma/sim with dlm.ConnectX3 (one NIC atomic unit, 370 ns per atomic, "+
			"850 ns one way), %d client machines x %d threads, %d lock servers, locks in ascending order, the "+
			"specification's TPC-C without Stock-Level's reads (as the rack's clients), a warehouse's locks on one "+
			"server (the rack: lock l on server l mod servers), %.0f ms measured after %.0f ms (virtual time), the "+
			"same workload seed. NetLock / DSLR is (NetLock / servers only) x (servers only / "+
			"DSLR): the first factor is the switch's, bounded by the caps; the second compares the rack model's lock "+
			"server (a DPDK core per shard, 444 ns per request, 18 MRPS per 8-core server) with DSLR's NIC atomics "+
			"(2.7 M/s per server), two cost models calibrated separately.\n", b.Machines, b.Threads, b.Servers,
			durationMS(f.Baseline, true), durationMS(f.Baseline, false))
	}
}

// durationMS returns the baselines' measured time (or warm-up), ms, as run (tpccbench's
// defaults for zero fields: 20 and 2 ms).
func durationMS(o *tpccbench.Options, measured bool) float64 {
	if o == nil {
		return 0
	}
	d, def := o.Warmup, int64(2_000_000)
	if measured {
		d, def = o.Duration, 20_000_000
	}
	if d == 0 {
		d = def
	}
	return float64(d) / 1e6
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
