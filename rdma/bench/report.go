package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
)

// RunSweep measures every point of s in order, calling progress (if set) after each.
func RunSweep(ctx context.Context, s Sweep, progress func(done, total int, r Result)) ([]Result, error) {
	pts := s.Points()
	out := make([]Result, 0, len(pts))
	for i, p := range pts {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r, err := Run(p)
		if err != nil {
			return out, err
		}
		out = append(out, r)
		if progress != nil {
			progress(i+1, len(pts), r)
		}
	}
	return out, nil
}

// Summary is ALock's best ratio over the competitors for one panel (nodes, locks, locality),
// over the thread counts swept.
type Summary struct {
	Nodes, Locks int
	Locality     float64
	// ALockMax is ALock's highest throughput in the panel (ops/s).
	ALockMax float64
	// MaxVsMCS, MaxVsClassic and MaxVsSpin are the largest ratios over the CAS-first MCS, the
	// classic (successor-first) MCS and the spinlock, at ThreadsMCS/ThreadsClassic/ThreadsSpin
	// threads per node.
	MaxVsMCS, MaxVsClassic, MaxVsSpin       float64
	ThreadsMCS, ThreadsClassic, ThreadsSpin int
}

// Summarize computes one Summary per panel, in (nodes, locks, locality) order.
func Summarize(rs []Result) []Summary {
	ratios := Ratios(rs)
	type pk struct {
		n, l int
		loc  float64
	}
	idx := map[pk]int{}
	var out []Summary
	alockMax := map[pk]float64{}
	for _, r := range rs {
		if r.Alg == "alock" {
			k := pk{r.Nodes, r.Locks, r.Locality}
			alockMax[k] = max(alockMax[k], r.Throughput)
		}
	}
	for _, k := range SortedKeys(ratios) {
		p := pk{k.Nodes, k.Locks, k.Locality}
		i, ok := idx[p]
		if !ok {
			i = len(out)
			idx[p] = i
			out = append(out, Summary{Nodes: k.Nodes, Locks: k.Locks, Locality: k.Locality, ALockMax: alockMax[p]})
		}
		s := &out[i]
		if v := ratios[k]["mcs"]; v > s.MaxVsMCS {
			s.MaxVsMCS, s.ThreadsMCS = v, k.Threads
		}
		if v := ratios[k]["mcs-classic"]; v > s.MaxVsClassic {
			s.MaxVsClassic, s.ThreadsClassic = v, k.Threads
		}
		if v := ratios[k]["spinlock"]; v > s.MaxVsSpin {
			s.MaxVsSpin, s.ThreadsSpin = v, k.Threads
		}
	}
	return out
}

// WriteTable prints every point (throughput, latency percentiles, verbs per op).
func WriteTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "nodes\tlocks\tlocal%\tthr/node\talg\tMops/s\tp50 ns\tp99 ns\tp99.9 ns\tverbs/op\tloopback/op\tspins/op\tmeasured local%\t")
	for _, r := range rs {
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%d\t%s\t%.3f\t%.0f\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.1f\t\n", r.Nodes, r.Locks, r.Locality*100,
			r.ThreadsPerNode, r.Alg, r.Throughput/1e6, r.P50, r.P99, r.P999, r.VerbsPerOp, r.LoopbackPerOp, r.RemoteSpinsPerOp, r.LocalFraction*100)
	}
	return tw.Flush()
}

// WriteSummary prints the per-panel ratios as a Markdown table.
func WriteSummary(w io.Writer, ss []Summary) error {
	if _, err := fmt.Fprintln(w, "| nodes | locks | local | ALock peak Mops/s | max ALock/MCS CAS-first (thr/node) | max ALock/MCS classic (thr/node) | max ALock/spinlock (thr/node) |\n|---:|---:|---:|---:|---:|---:|---:|"); err != nil {
		return err
	}
	for _, s := range ss {
		if _, err := fmt.Fprintf(w, "| %d | %d | %.0f%% | %.1f | %.1fx (%d) | %.1fx (%d) | %.1fx (%d) |\n", s.Nodes, s.Locks, s.Locality*100,
			s.ALockMax/1e6, s.MaxVsMCS, s.ThreadsMCS, s.MaxVsClassic, s.ThreadsClassic, s.MaxVsSpin, s.ThreadsSpin); err != nil {
			return err
		}
	}
	return nil
}

// WriteFiles writes results.json, results.txt and summary.md into dir and returns their paths.
func WriteFiles(rs []Result, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench output: %w", err)
	}
	var files []string
	write := func(name string, f func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		fh, err := os.Create(p)
		if err != nil {
			return fmt.Errorf("bench output: %w", err)
		}
		if err := f(fh); err != nil {
			fh.Close()
			return fmt.Errorf("bench output %s: %w", p, err)
		}
		files = append(files, p)
		return fh.Close()
	}
	if err := write("results.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(rs)
	}); err != nil {
		return nil, err
	}
	if err := write("results.txt", func(w io.Writer) error { return WriteTable(w, rs) }); err != nil {
		return nil, err
	}
	if err := write("summary.md", func(w io.Writer) error { return WriteSummary(w, Summarize(rs)) }); err != nil {
		return nil, err
	}
	return files, nil
}
