package rangebench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
)

// WriteFiles writes results.json and results.txt (one line per point) into dir.
func WriteFiles(rs []Result, dir, name string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("rangebench: %w", err)
	}
	js := filepath.Join(dir, name+".json")
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(js, b, 0o644); err != nil {
		return nil, fmt.Errorf("rangebench: %w", err)
	}
	txt := filepath.Join(dir, name+".txt")
	f, err := os.Create(txt)
	if err != nil {
		return nil, fmt.Errorf("rangebench: %w", err)
	}
	if err := WriteTable(f, rs); err != nil {
		f.Close()
		return nil, err
	}
	return []string{js, txt}, f.Close()
}

// WriteTable prints one line per point.
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scheme\tL\talpha\tthreads\tk\tfast\tMlocks/s\tp50 us\tp99 us\tverbs/op\tmsgs/op\taborts/op\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%d\t%d\t%v\t%.3f\t%.1f\t%.1f\t%.1f\t%.1f\t%.4f\t\n", r.Scheme, r.L, r.Alpha, r.Threads, r.K, r.Fast,
			r.Throughput/1e6, r.P50/1e3, r.P99/1e3, r.VerbsPerOp, r.MessagesPerOp, r.AbortsPerOp)
	}
	return tw.Flush()
}

// WriteFalseConflicts prints the Fig. 11 points.
func WriteFalseConflicts(w io.Writer, ps []FalseConflictPoint) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "k\tL\ttrials\tfalse\ttrue\trate\t")
	for _, p := range ps {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%.2e\t\n", p.K, p.L, p.Trials, p.False, p.True, p.Rate)
	}
	return tw.Flush()
}

// Claim is one of the paper's reported ratios next to ours.
type Claim struct {
	What, Paper, Here string
}

// MicroClaims compares the microbenchmark (Fig. 6) with the paper's section 4.2.
func MicroClaims(rs []Result) []Claim {
	var out []Claim
	ratio := func(a, b string, L uint64) float64 {
		x, ok1 := peak(rs, a, L)
		y, ok2 := peak(rs, b, L)
		if !ok1 || !ok2 || y.Throughput == 0 {
			return 0
		}
		return x.Throughput / y.Throughput
	}
	p99 := func(a, b string, L uint64) float64 { // mean over thread counts of p99(a)/p99(b)
		var sum float64
		n := 0
		for _, x := range find(rs, func(r Result) bool { return r.Scheme == a && r.L == L }) {
			for _, y := range find(rs, func(r Result) bool { return r.Scheme == b && r.L == L && r.Threads == x.Threads }) {
				if y.P99 > 0 {
					sum += x.P99 / y.P99
					n++
				}
			}
		}
		if n == 0 {
			return 0
		}
		return sum / float64(n)
	}
	out = append(out,
		Claim{"L=1: CITRON peak throughput / SS-Exact", "0.55 (44.6% lower)", fmtRatio(ratio(CITRON, SSExact, 1))},
		Claim{"L=1: CITRON p99 / SS-Exact p99 (mean over threads)", "1.83x", fmtRatio(p99(CITRON, SSExact, 1))},
		Claim{"L=1: SS-Over peak / CITRON peak", "0.83", fmtRatio(ratio(SSOver, CITRON, 1))},
		Claim{"L=1: SS-Under peak / CITRON peak", "0.17", fmtRatio(ratio(SSUnder, CITRON, 1))},
		Claim{"L=1: SS-Over p99 / CITRON p99", "3.77x", fmtRatio(p99(SSOver, CITRON, 1))},
		Claim{"L=1: SS-Under p99 / CITRON p99", "4.68x", fmtRatio(p99(SSUnder, CITRON, 1))},
	)
	for _, L := range []uint64{16, 256} {
		best := 0.0
		for _, ss := range []string{SSExact, SSOver, SSUnder} {
			if r, ok := peak(rs, ss, L); ok {
				best = max(best, r.Throughput)
			}
		}
		c, _ := peak(rs, CITRON, L)
		here := 0.0
		if best > 0 {
			here = c.Throughput / best
		}
		paper := map[uint64]string{16: "1.29x", 256: "1.39x"}[L]
		out = append(out, Claim{fmt.Sprintf("L=%d: CITRON peak / best SS peak", L), paper, fmtRatio(here)})
	}
	for _, L := range []uint64{1, 16, 256} {
		paper := map[uint64]string{1: "1.56x", 16: "1.76x", 256: "about 1x (24.6% lower p99)"}[L]
		out = append(out, Claim{fmt.Sprintf("L=%d: CITRON peak / server-CPU peak", L), paper, fmtRatio(ratio(CITRON, Server, L))})
	}
	return out
}

// FastPathClaims compares Fig. 9 with section 4.4.
func FastPathClaims(rs []Result) []Claim {
	gain := func(L uint64, f func(fast, slow Result) float64, pred func(a float64) bool) float64 {
		var sum float64
		n := 0
		for _, fr := range find(rs, func(r Result) bool { return r.Scheme == CITRON && r.L == L && r.Fast && pred(r.Alpha) }) {
			for _, sr := range find(rs, func(r Result) bool {
				return r.Scheme == CITRON && r.L == L && !r.Fast && r.Alpha == fr.Alpha && r.Threads == fr.Threads
			}) {
				sum += f(fr, sr)
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return sum / float64(n)
	}
	all := func(float64) bool { return true }
	thr := func(f, s Result) float64 { return f.Throughput/s.Throughput - 1 }
	lat := func(f, s Result) float64 { return 1 - f.P50/s.P50 }
	latUS := func(f, s Result) float64 { return (s.P50 - f.P50) / 1e3 }
	pct := func(x float64) string { return fmt.Sprintf("%+.1f%%", 100*x) }
	lower := func(us, frac float64) string {
		if us >= 0 {
			return fmt.Sprintf("%.1f us lower (%.1f%%)", us, 100*frac)
		}
		return fmt.Sprintf("%.1f us higher (%.1f%%)", -us, -100*frac)
	}
	low := func(a float64) bool { return a <= 0.7 }
	top := func(a float64) bool { return a >= 0.99 }
	return []Claim{
		{"L=16: fast-path median latency (mean over alpha)", "2.4 us lower (21.5%)", lower(gain(16, latUS, all), gain(16, lat, all))},
		{"L=16: fast-path throughput change", "not significant", pct(gain(16, thr, all))},
		{"L=256: fast-path throughput change (mean over alpha)", "+34.3%", pct(gain(256, thr, all))},
		{"L=256, alpha <= 0.7: fast-path median latency", "11.5 us lower (39.4%)", lower(gain(256, latUS, low), gain(256, lat, low))},
		{"L=256, alpha = 0.99: fast-path median latency", "4.8 us higher (17.4%)", lower(gain(256, latUS, top), gain(256, lat, top))},
		{"alpha = 0.99: fast-path throughput change, L=16 / L=256", "higher (non-conflicting requests still gain)",
			pct(gain(16, thr, top)) + " / " + pct(gain(256, thr, top))},
	}
}

// FalseConflictClaims compares Fig. 11 with section 4.6.
func FalseConflictClaims(ps []FalseConflictPoint) []Claim {
	rate := map[[2]uint64]float64{}
	for _, p := range ps {
		rate[[2]uint64{uint64(p.K), p.L}] = p.Rate
	}
	zero := true
	var ratios []float64
	var k5 []float64
	var abs2 []float64
	for _, p := range ps {
		if p.K == 2 && p.L <= 64 && p.False > 0 {
			zero = false
		}
		if p.K == 2 && p.L > 64 {
			if r1 := rate[[2]uint64{1, p.L}]; r1 > 0 {
				ratios = append(ratios, p.Rate/r1)
				abs2 = append(abs2, p.Rate)
			}
			if r5, ok := rate[[2]uint64{5, p.L}]; ok && p.Rate > 0 {
				k5 = append(k5, r5/p.Rate)
			}
		}
	}
	mean := func(xs []float64) float64 {
		var s float64
		for _, x := range xs {
			s += x
		}
		if len(xs) == 0 {
			return 0
		}
		return s / float64(len(xs))
	}
	return []Claim{
		{"k=2, L <= 64: false conflicts", "none", map[bool]string{true: "none", false: "some"}[zero]},
		{"k=2 rate relative to k=1 (L > 64, mean)", "3.6% (two orders of magnitude lower)", fmt.Sprintf("%.1f%%", 100*mean(ratios))},
		{"k=2 absolute rate (L > 64, mean)", "about 1e-4", fmt.Sprintf("%.1e", mean(abs2))},
		{"k=5 rate relative to k=2 (L > 64, mean)", "about 10% (one order lower)", fmt.Sprintf("%.1f%%", 100*mean(k5))},
	}
}

// WriteClaims prints claims as a markdown table.
func WriteClaims(w io.Writer, title string, cs []Claim) error {
	if _, err := fmt.Fprintf(w, "%s\n\n| claim | paper | here |\n|---|---|---|\n", title); err != nil {
		return err
	}
	for _, c := range cs {
		if _, err := fmt.Fprintf(w, "| %s | %s | %s |\n", c.What, c.Paper, c.Here); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

// ReadResults decodes a results JSON file.
func ReadResults(b []byte) ([]Result, error) {
	var rs []Result
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("rangebench: %w", err)
	}
	return rs, nil
}

// AtomicClaims tabulates MicroClaims for each same-word atomic time of an AtomicSweep: one row
// per claim, the paper's value and ours at every time (columns in bySameWord's order).
func AtomicClaims(w io.Writer, rs []Result) error {
	keys, by := bySameWord(rs)
	if len(keys) == 0 {
		return nil
	}
	var rows [][]Claim
	for _, k := range keys {
		rows = append(rows, MicroClaims(by[k]))
	}
	var b strings.Builder
	b.WriteString("| claim (unscrambled Zipf 0.9; same-word atomic time) | paper |")
	for _, k := range keys {
		fmt.Fprintf(&b, " %s |", sameWordLabel(k))
	}
	b.WriteString("\n|---|---|")
	for range keys {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for i, c := range rows[0] {
		fmt.Fprintf(&b, "| %s | %s |", c.What, c.Paper)
		for j := range keys {
			fmt.Fprintf(&b, " %s |", rows[j][i].Here)
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// atomicRatio is CITRON's peak over SS-Exact's at L = 1 and over the best static segmentation's
// at longer ranges: the paper's headline ratios of Fig. 6.
func atomicRatio(rs []Result, L uint64) float64 {
	c, ok := peak(rs, CITRON, L)
	if !ok {
		return 0
	}
	ss := []string{SSExact, SSOver, SSUnder}
	if L == 1 {
		ss = ss[:1]
	}
	best := 0.0
	for _, s := range ss {
		if r, ok := peak(rs, s, L); ok {
			best = max(best, r.Throughput)
		}
	}
	if best == 0 {
		return 0
	}
	return c.Throughput / best
}
