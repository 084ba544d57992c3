package bench

import (
	"fmt"
	"image/color"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/internal/pngplot"
)

var algColor = map[string]color.Color{
	"alock":       color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"mcs":         color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"mcs-classic": color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"spinlock":    color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

func distinct[T comparable](rs []Result, f func(Result) T, less func(a, b T) bool) []T {
	seen := map[T]bool{}
	var out []T
	for _, r := range rs {
		v := f(r)
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

// PlotThroughput writes one PNG per node count into dir: a grid with one row per table size and
// one column per locality, each panel throughput (M ops/s, log scale) against threads per node,
// one line per algorithm (the layout of the paper's Fig. 5). It returns the files written.
func PlotThroughput(rs []Result, dir string) ([]string, error) {
	nodes := distinct(rs, func(r Result) int { return r.Nodes }, func(a, b int) bool { return a < b })
	lockSizes := distinct(rs, func(r Result) int { return r.Locks }, func(a, b int) bool { return a < b })
	locs := distinct(rs, func(r Result) float64 { return r.Locality }, func(a, b float64) bool { return a < b })
	algs := distinct(rs, func(r Result) string { return r.Alg }, func(a, b string) bool { return a < b })
	var files []string
	for _, n := range nodes {
		grid := make([][]*plot.Plot, len(lockSizes))
		for i, l := range lockSizes {
			for _, loc := range locs {
				p := plot.New()
				p.Title.Text = fmt.Sprintf("%d nodes, %d locks, %.0f%% local", n, l, loc*100)
				p.X.Label.Text = "threads per node"
				p.Y.Label.Text = "M ops/s (virtual)"
				p.Y.Scale = plot.LogScale{}
				p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
				p.Legend.Top = true
				p.Legend.Left = true
				for _, a := range algs {
					var xys plotter.XYs
					for _, r := range rs {
						if r.Nodes == n && r.Locks == l && r.Locality == loc && r.Alg == a && r.Throughput > 0 {
							xys = append(xys, plotter.XY{X: float64(r.ThreadsPerNode), Y: r.Throughput / 1e6})
						}
					}
					if len(xys) == 0 {
						continue
					}
					sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
					line, pts, err := plotter.NewLinePoints(xys)
					if err != nil {
						return nil, err
					}
					line.Color, pts.Color = algColor[a], algColor[a]
					p.Add(line, pts)
					p.Legend.Add(a, line)
				}
				grid[i] = append(grid[i], p)
			}
		}
		f := filepath.Join(dir, fmt.Sprintf("throughput_%dnodes.png", n))
		if err := pngplot.SaveGrid(grid, f, vg.Length(len(locs))*9*vg.Centimeter, vg.Length(len(lockSizes))*7*vg.Centimeter, pngplot.Options{}); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// PlotLatencyCDF writes the latency CDFs of the points with the given node and thread counts
// (the paper's Fig. 6): rows are table sizes, columns localities, one line per algorithm.
func PlotLatencyCDF(rs []Result, nodes, threads int, dir string) (string, error) {
	var sel []Result
	for _, r := range rs {
		if r.Nodes == nodes && r.ThreadsPerNode == threads && r.Hist != nil && r.Hist.Count() > 0 {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return "", fmt.Errorf("bench: no results for %d nodes, %d threads", nodes, threads)
	}
	lockSizes := distinct(sel, func(r Result) int { return r.Locks }, func(a, b int) bool { return a < b })
	locs := distinct(sel, func(r Result) float64 { return r.Locality }, func(a, b float64) bool { return a < b })
	grid := make([][]*plot.Plot, len(lockSizes))
	for i, l := range lockSizes {
		for _, loc := range locs {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%d nodes x %d thr, %d locks, %.0f%% local", nodes, threads, l, loc*100)
			p.X.Label.Text = "latency (ns, virtual)"
			p.Y.Label.Text = "CDF"
			p.X.Scale = plot.LogScale{}
			p.X.Tick.Marker = plot.LogTicks{Prec: -1}
			p.Legend.Top = false
			p.Legend.Left = false
			p.Y.Min, p.Y.Max = 0, 1
			for _, r := range sel {
				if r.Locks != l || r.Locality != loc {
					continue
				}
				xs, ys := r.Hist.CDF()
				xys := make(plotter.XYs, 0, len(xs)+1)
				xys = append(xys, plotter.XY{X: max(xs[0], 1), Y: 0})
				for k := range xs {
					xys = append(xys, plotter.XY{X: max(xs[k], 1), Y: ys[k]})
				}
				line, err := plotter.NewLine(xys)
				if err != nil {
					return "", err
				}
				line.Color = algColor[r.Alg]
				p.Add(line)
				p.Legend.Add(r.Alg, line)
			}
			grid[i] = append(grid[i], p)
		}
	}
	f := filepath.Join(dir, fmt.Sprintf("latency_cdf_%dnodes_%dthreads.png", nodes, threads))
	return f, pngplot.SaveGrid(grid, f, vg.Length(len(locs))*9*vg.Centimeter, vg.Length(len(lockSizes))*7*vg.Centimeter, pngplot.Options{})
}
