package rmabench

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"path/filepath"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/internal/pngplot"
)

// Splits4d are Fig. 4c/4d's splits of T_W = 1000: T_L (machine level, node level), labelled
// T_L,2-T_L,1 as in the paper.
var Splits4d = [][]int{{100, 10}, {40, 25}, {20, 50}}

func splitLabel(tl []int) string { return fmt.Sprintf("%d-%d", tl[1], tl[0]) }

// OpenPoint is one open-loop point of Fig. 4d: the offered load as a fraction of the slowest
// split's closed-loop throughput at that P, and the measured result.
type OpenPoint struct {
	Load     float64 `json:"load"`
	Offered  float64 `json:"offered"`  // requests per virtual second, all processes
	Capacity float64 `json:"capacity"` // the slowest split's closed-loop throughput at P
	Split    string  `json:"split"`
	Result   Result  `json:"result"`
}

// OpenLoop4d measures Fig. 4d with an open loop: for each P, the three splits' closed-loop
// throughput (Fig. 4c's points: RMA-RW, F_W = 25%, ECSB), then each split under Poisson arrivals
// at load x the slowest split's throughput (the same offered load for all three), so that their
// latencies compare at equal load, as a latency benchmark with think time does. It returns the
// open-loop points and the closed-loop results.
func OpenLoop4d(ctx context.Context, procs []int, loads []float64, seed int64, minWrites, parallel int,
	progress func(done, total int, r Result)) ([]OpenPoint, Results, error) {
	closed := func(p int, tl []int) Config {
		return Config{Alg: RMARW, Bench: ECSB, Procs: p, WriteFrac: 0.25, TL: tl, Seed: seed, MinWrites: minWrites}
	}
	var cp Panel
	for _, tl := range Splits4d {
		cp.Series = append(cp.Series, sweep(splitLabel(tl), procs, func(p int) Config { return closed(p, tl) }))
	}
	cr, err := RunFigures(ctx, []Figure{{Panels: []Panel{cp}}}, parallel, progress)
	if err != nil {
		return nil, cr, err
	}
	capacity := map[int]float64{}
	for _, p := range procs {
		for _, tl := range Splits4d {
			r, ok := cr.Get(closed(p, tl))
			if !ok {
				return nil, cr, fmt.Errorf("rmabench: closed-loop point P=%d T_L=%v missing", p, tl)
			}
			if c, ok := capacity[p]; !ok || r.Throughput < c {
				capacity[p] = r.Throughput
			}
		}
	}
	var op Panel
	var meta []OpenPoint
	for _, p := range procs {
		for _, load := range loads {
			offered := load * capacity[p]
			for _, tl := range Splits4d {
				c := closed(p, tl)
				c.Rate = offered / float64(p)
				op.Series = append(op.Series, Series{Points: []Config{c}})
				meta = append(meta, OpenPoint{Load: load, Offered: offered, Capacity: capacity[p], Split: splitLabel(tl), Result: Result{Procs: p, Rate: c.Rate, TL: tl}})
			}
		}
	}
	or, err := RunFigures(ctx, []Figure{{Panels: []Panel{op}}}, parallel, progress)
	if err != nil {
		return nil, cr, err
	}
	for i, s := range op.Series {
		r, ok := or.Get(s.Points[0])
		if !ok {
			return nil, cr, fmt.Errorf("rmabench: open-loop point %v missing", s.Points[0])
		}
		meta[i].Result = r
	}
	return meta, cr, nil
}

// WriteOpen prints the open-loop points as a Markdown table. "served" is the share of the
// window's arrivals that completed in it (below 100% by the requests in progress or queued at
// its end; a saturated point is marked).
func WriteOpen(w io.Writer, ps []OpenPoint) error {
	if _, err := fmt.Fprintln(w, "| P | load | offered M/s | T_L,2-T_L,1 | achieved M/s | served | mean us | p50 us | p99 us | writer mean us | reader mean us |\n|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"); err != nil {
		return err
	}
	for _, p := range ps {
		r := p.Result
		served := "-"
		if r.Arrivals > 0 {
			served = fmt.Sprintf("%.1f%%", 100*float64(r.Samples)/float64(r.Arrivals))
		}
		if r.Saturated {
			served += " (saturated)"
		}
		if _, err := fmt.Fprintf(w, "| %d | %.2f | %.3g | %s | %.3g | %s | %.1f | %.1f | %.1f | %.1f | %.1f |\n", r.Procs, p.Load, p.Offered/1e6, p.Split,
			r.Throughput/1e6, served, r.Mean/1e3, r.P50/1e3, r.P99/1e3, r.WriteMean/1e3, r.ReadMean/1e3); err != nil {
			return err
		}
	}
	return nil
}

var splitColor = map[string]color.Color{
	"10-100": color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"25-40":  color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"50-20":  color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// PlotOpen writes fig4d-open.png into dir: mean, writers' mean and p99 latency against P, one
// column per load, one line per split.
func PlotOpen(ps []OpenPoint, dir string) (string, error) {
	var loads []float64
	seen := map[float64]bool{}
	for _, p := range ps {
		if !seen[p.Load] {
			seen[p.Load] = true
			loads = append(loads, p.Load)
		}
	}
	sort.Float64s(loads)
	metrics := []struct {
		label string
		get   func(Result) float64
	}{
		{"mean latency (us)", func(r Result) float64 { return r.Mean }},
		{"writers' mean latency (us)", func(r Result) float64 { return r.WriteMean }},
		{"p99 latency (us)", func(r Result) float64 { return r.P99 }},
	}
	var grid [][]*plot.Plot
	for _, m := range metrics {
		var line []*plot.Plot
		for _, load := range loads {
			pl := plot.New()
			pl.Title.Text = fmt.Sprintf("open loop, %.0f%% of the slowest split", load*100)
			pl.X.Label.Text = "P"
			pl.Y.Label.Text = m.label
			pl.X.Scale, pl.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
			pl.Y.Scale, pl.Y.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
			pl.Legend.Top, pl.Legend.Left = true, true
			for _, tl := range Splits4d {
				name := splitLabel(tl)
				var xys plotter.XYs
				for _, p := range ps {
					if p.Load != load || p.Split != name {
						continue
					}
					if y := m.get(p.Result); y > 0 {
						xys = append(xys, plotter.XY{X: float64(p.Result.Procs), Y: y / 1e3})
					}
				}
				if len(xys) == 0 {
					continue
				}
				sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return "", err
				}
				l.Color, pts.Color = splitColor[name], splitColor[name]
				pl.Add(l, pts)
				pl.Legend.Add(name, l)
			}
			line = append(line, pl)
		}
		grid = append(grid, line)
	}
	f := filepath.Join(dir, "fig4d-open.png")
	return f, pngplot.SaveGrid(grid, f, vg.Length(len(loads))*12*vg.Centimeter, vg.Length(len(metrics))*8*vg.Centimeter, pngplot.Options{})
}
