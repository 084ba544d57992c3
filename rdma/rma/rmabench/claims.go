package rmabench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Claim is one of the paper's statements next to the ratio reproduced here.
type Claim struct {
	What, Paper, Here string
}

// Claims computes the reproduced ratios from the results of Figures(sc).
func Claims(sc Scale, rs Results) []Claim {
	get := func(c Config) float64 {
		r, ok := rs.Get(c)
		if !ok || r.Throughput == 0 {
			return math.NaN()
		}
		return r.Throughput
	}
	lat := func(c Config) float64 { return float64(c.Procs) / get(c) } // closed-loop latency
	mcs := func(a, b string, p int) Config { return Config{Alg: a, Bench: b, Procs: p, Seed: sc.Seed} }
	rw := func(a string, p int, fw float64) Config {
		return Config{Alg: a, Bench: ECSB, Procs: p, WriteFrac: fw, Seed: sc.Seed}
	}
	par := func(p int, fw float64, tl []int, tdc, tr int) Config {
		return Config{Alg: RMARW, Bench: ECSB, Procs: p, WriteFrac: fw, TL: tl, TDC: tdc, TR: tr, Seed: sc.Seed}
	}
	x := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return "-"
		}
		return fmt.Sprintf("%.3gx", v)
	}
	var out []Claim
	pmax := slices.Max(sc.Procs)
	out = append(out,
		Claim{fmt.Sprintf("LB latency at P=%d, D-MCS / RMA-MCS", pmax), "~4x (P=1024)",
			x(lat(mcs(DMCS, ECSB, pmax)) / lat(mcs(RMAMCS, ECSB, pmax)))},
		Claim{fmt.Sprintf("LB latency at P=%d, spin / RMA-MCS", pmax), "~10x (P=1024)",
			x(lat(mcs(Spin, ECSB, pmax)) / lat(mcs(RMAMCS, ECSB, pmax)))})
	for _, b := range Benchmarks {
		lo, hi := math.Inf(1), 0.0
		for _, p := range sc.Procs {
			if p <= DefaultPPN {
				continue
			}
			v := get(mcs(RMAMCS, b, p)) / max(get(mcs(DMCS, b, p)), get(mcs(Spin, b, p)))
			lo, hi = min(lo, v), max(hi, v)
		}
		out = append(out, Claim{fmt.Sprintf("%s throughput, RMA-MCS / best of D-MCS and spin, P > %d", benchName[b], DefaultPPN),
			"RMA-MCS best everywhere", fmt.Sprintf("%s .. %s", x(lo), x(hi))})
	}
	if slices.Contains(sc.Procs, 8) && slices.Contains(sc.Procs, 16) {
		for _, b := range []string{ECSB, SOB} {
			out = append(out, Claim{fmt.Sprintf("%s spike P=8 -> 16 (one node), RMA-MCS and D-MCS throughput", benchName[b]),
				"throughput rises (no inter-node traffic yet)",
				fmt.Sprintf("%s, %s", x(get(mcs(RMAMCS, b, 16))/get(mcs(RMAMCS, b, 8))), x(get(mcs(DMCS, b, 16))/get(mcs(DMCS, b, 8))))})
		}
	}
	// Fig. 5 and F_W.
	lo := math.Inf(1)
	for _, fw := range []float64{0.002, 0.02, 0.05} {
		for _, p := range sc.Procs {
			if p >= 64 {
				lo = min(lo, get(rw(RMARW, p, fw))/get(rw(CentralRW, p, fw)))
			}
		}
	}
	out = append(out, Claim{"RMA-RW / central RW lock, P >= 64, F_W 0.2-5%", "> 6x", "min " + x(lo)})
	d2, d5 := 0.0, 0.0
	for _, p := range sc.Procs {
		d2 = max(d2, get(rw(RMARW, p, 0.002))/get(rw(RMARW, p, 0.02)))
		d5 = max(d5, get(rw(RMARW, p, 0.002))/get(rw(RMARW, p, 0.05)))
	}
	out = append(out, Claim{"RMA-RW max over P: F_W 0.2% / 2%", "1.8x", x(d2)},
		Claim{"RMA-RW max over P: F_W 0.2% / 5%", "4.4x", x(d5)})
	for _, p := range sc.FWProcs {
		out = append(out, Claim{fmt.Sprintf("RMA-RW at P=%d: F_W 25%% / 100%%, 50%% / 100%%", p), "flat above F_W = 30%",
			fmt.Sprintf("%s, %s", x(get(rw(RMARW, p, 0.25))/get(rw(RMARW, p, 1))), x(get(rw(RMARW, p, 0.5))/get(rw(RMARW, p, 1))))})
	}
	// Fig. 4.
	pr := slices.Max(sc.RWProcs)
	best, bestV := 0, 0.0
	for _, tdc := range []int{2, 4, 8, 16, 32, 64} {
		if v := get(par(pr, 0.002, nil, tdc, 0)); v > bestV {
			best, bestV = tdc, v
		}
	}
	out = append(out, Claim{fmt.Sprintf("best T_DC at P=%d (F_W 0.2%%)", pr), "tune per machine; 1 counter per node recommended",
		fmt.Sprintf("%s; %s of one per node", tdcLabel(best), x(bestV/get(par(pr, 0.002, nil, 16, 0))))})
	out = append(out, Claim{fmt.Sprintf("T_W=10 / T_W=1000 throughput at P=%d (F_W 25%%)", pr), "smaller T_W: higher throughput",
		x(get(par(pr, 0.25, []int{2, 5}, 0, 0)) / get(par(pr, 0.25, []int{20, 50}, 0, 0)))})
	hi, lo2 := 0.0, math.Inf(1)
	for _, tl := range [][]int{{100, 10}, {40, 25}, {20, 50}} {
		v := get(par(pr, 0.25, tl, 0, 0))
		hi, lo2 = max(hi, v), min(lo2, v)
	}
	out = append(out, Claim{fmt.Sprintf("T_L split at T_W=1000, max/min throughput at P=%d", pr), "<= 1.25x, 50-20 highest",
		fmt.Sprintf("%s; 50-20 / 10-100 = %s", x(hi/lo2), x(get(par(pr, 0.25, []int{20, 50}, 0, 0))/get(par(pr, 0.25, []int{100, 10}, 0, 0))))})
	// Closed loop: P / throughput, Fig. 4c inverted; the open loop's latency is OpenLoop4d's.
	out = append(out, Claim{fmt.Sprintf("T_L split closed-loop latency (P / throughput) at P=%d: 50-20 / 10-100", pr), "50-20 higher (open loop: bench rma-open)",
		x(lat(par(pr, 0.25, []int{20, 50}, 0, 0)) / lat(par(pr, 0.25, []int{100, 10}, 0, 0)))})
	resets := func(c Config) string {
		r, ok := rs.Get(c)
		if !ok {
			return "-"
		}
		return fmt.Sprint(r.Counts.TRResets)
	}
	for _, p := range sc.RWProcs {
		a, b := par(p, 0.002, nil, 0, 8000), par(p, 0.002, nil, 0, 1000)
		out = append(out, Claim{fmt.Sprintf("T_R=8000 / T_R=1000 throughput at P=%d (F_W 0.2%%)", p), "larger T_R: higher (T_R 1000-2000 drop for P > 512)",
			fmt.Sprintf("%s (T_R resets %s vs %s)", x(get(a)/get(b)), resets(a), resets(b))})
	}
	for _, p := range sc.RWProcs {
		a, b := par(p, 0.002, nil, 0, TRSweep[0]), par(p, 0.002, nil, 0, 1000)
		out = append(out, Claim{fmt.Sprintf("T_R=%d / T_R=1000 throughput at P=%d (F_W 0.2%%)", TRSweep[0], p), "(not in the paper: a T_R that acts here)",
			fmt.Sprintf("%s (T_R resets %s vs %s)", x(get(a)/get(b)), resets(a), resets(b))})
	}
	spread := 0.0
	var rc []string
	for _, fw := range []float64{0.02, 0.05} {
		a, b := par(pr, fw, nil, 0, 1000), par(pr, fw, nil, 0, 4000)
		spread = max(spread, math.Abs(get(a)-get(b))/math.Min(get(a), get(b)))
		rc = append(rc, resets(a)+" vs "+resets(b))
	}
	out = append(out, Claim{fmt.Sprintf("T_R 1000 vs 4000 at F_W 2%%, 5%%, P=%d: relative difference", pr), "< 1% mostly",
		fmt.Sprintf("%.1f%% (T_R resets %s)", spread*100, strings.Join(rc, "; "))})
	return out
}

// WriteClaims prints the claims as a Markdown table.
func WriteClaims(w io.Writer, cs []Claim) error {
	if _, err := fmt.Fprintln(w, "| claim (HPDC '16, section 5) | paper | here (model) |\n|---|---|---|"); err != nil {
		return err
	}
	for _, c := range cs {
		if _, err := fmt.Fprintf(w, "| %s | %s | %s |\n", c.What, c.Paper, c.Here); err != nil {
			return err
		}
	}
	return nil
}
