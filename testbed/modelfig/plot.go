package modelfig

import (
	"fmt"
	"image/color"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/internal/pngplot"
)

// pngOptions render the figures at 96 dpi with 4 mm between plots.
var pngOptions = pngplot.Options{DPI: 96, Pad: 4 * vg.Millimeter}

var palette = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
	color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
	color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
	color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
	color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
}

// Plot writes the figure's PNG into dir and returns its path.
func (f *Figure) Plot(dir string) (string, error) {
	if len(f.Results) == 0 && len(f.Timelines) == 0 && len(f.Policies) == 0 {
		return "", fmt.Errorf("experiment: %s has no results to plot", f.Name)
	}
	var grid [][]*plot.Plot
	var err error
	switch f.Name {
	case "fig13":
		grid, err = f.plot13()
	case "fig14":
		grid, err = f.plot14()
	case "fig10", "fig11":
		grid, err = f.plot10()
	case "fig15":
		grid, err = f.plot15()
	case "fig12":
		grid, err = f.plot12()
	case "fig8":
		grid, err = f.plot8()
	case "fig9":
		grid, err = f.plot9()
	default:
		return "", fmt.Errorf("experiment: no plot for %s", f.Name)
	}
	if err != nil {
		return "", err
	}
	file := filepath.Join(dir, f.Name+".png")
	cols := len(grid[0])
	switch f.Name {
	case "fig15":
		return file, pngplot.SaveGrid(grid, file, 24*vg.Centimeter, 10*vg.Centimeter, pngOptions)
	case "fig9":
		return file, pngplot.SaveGrid(grid, file, 20*vg.Centimeter, 10*vg.Centimeter, pngOptions)
	case "fig8":
		return file, pngplot.SaveGrid(grid, file, 26*vg.Centimeter, 18*vg.Centimeter, pngOptions)
	}
	return file, pngplot.SaveGrid(grid, file, vg.Length(cols)*11*vg.Centimeter, vg.Length(len(grid))*8*vg.Centimeter, pngOptions)
}

// plot13: per rack variant, stacked bars of switch and server grants for knapsack, random and
// servers only.
func (f *Figure) plot13() ([][]*plot.Plot, error) {
	var row []*plot.Plot
	for _, v := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		p := plot.New()
		p.Title.Text = v
		p.Y.Label.Text = "MRPS (virtual time)"
		k, rn, s := f.variant(v)
		var sw, srv plotter.Values
		top := 0.0
		for _, r := range []*Result{k, rn, s} {
			if r == nil {
				sw, srv = append(sw, 0), append(srv, 0)
				continue
			}
			sw, srv = append(sw, r.SwitchRPS/1e6), append(srv, r.ServerRPS/1e6)
			top = max(top, r.RPS/1e6)
		}
		bs, err := plotter.NewBarChart(srv, vg.Centimeter*1.5)
		if err != nil {
			return nil, err
		}
		bs.Color = palette[1]
		bw, err := plotter.NewBarChart(sw, vg.Centimeter*1.5)
		if err != nil {
			return nil, err
		}
		bw.Color = palette[0]
		bw.StackOn(bs)
		p.Add(bs, bw)
		p.Legend.Add("granted by the switch", bw)
		p.Legend.Add("granted by the servers", bs)
		p.Legend.Top = true
		p.Y.Min, p.Y.Max = 0, top*1.35
		p.NominalX("knapsack", "random", "servers only")
		row = append(row, p)
	}
	return rows(row, 2), nil
}

// rows lays panels out n to a row (the last row padded with empty panels).
func rows(ps []*plot.Plot, n int) [][]*plot.Plot {
	var g [][]*plot.Plot
	for len(ps) > 0 {
		k := min(n, len(ps))
		row := append([]*plot.Plot(nil), ps[:k]...)
		for len(row) < n && len(g) > 0 {
			row = append(row, nil)
		}
		g = append(g, row)
		ps = ps[k:]
	}
	return g
}

// plot14: one panel per think time, throughput against slots (log scale) for knapsack and random,
// solid the total and dashed the part granted by the switch; the horizontal line is the rack
// without switch memory (0 slots).
func (f *Figure) plot14() ([][]*plot.Plot, error) {
	var panels []*plot.Plot
	for _, th := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		p := plot.New()
		p.Title.Text = th
		p.X.Label.Text = "switch slots"
		p.Y.Label.Text = "MRPS (virtual time)"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Top = true
		p.Legend.Left = true
		top, lo, hi := 0.0, 0.0, 0.0
		for _, r := range f.Results {
			if r.Variant == th && r.Slots > 0 {
				if lo == 0 || float64(r.Slots) < lo {
					lo = float64(r.Slots)
				}
				hi = max(hi, float64(r.Slots))
			}
		}
		for i, s := range []string{"knapsack", "random"} {
			var total, sw plotter.XYs
			for _, r := range f.Results {
				if r.Variant != th || r.StrategyName != s {
					continue
				}
				top = max(top, r.RPS/1e6)
				if r.Slots == 0 {
					if i == 0 && hi > 0 {
						base, err := plotter.NewLine(plotter.XYs{{X: lo, Y: r.RPS / 1e6}, {X: hi, Y: r.RPS / 1e6}})
						if err != nil {
							return nil, err
						}
						base.Color = color.Gray{Y: 0x80}
						p.Add(base)
						p.Legend.Add("no switch memory", base)
					}
					continue
				}
				total = append(total, plotter.XY{X: float64(r.Slots), Y: r.RPS / 1e6})
				sw = append(sw, plotter.XY{X: float64(r.Slots), Y: r.SwitchRPS / 1e6})
			}
			if len(total) == 0 {
				continue
			}
			for _, xys := range []plotter.XYs{total, sw} {
				slices.SortFunc(xys, func(a, b plotter.XY) int { return int(a.X - b.X) })
			}
			l, pts, err := plotter.NewLinePoints(total)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = palette[i], palette[i]
			ls, err := plotter.NewLine(sw)
			if err != nil {
				return nil, err
			}
			ls.Color, ls.Dashes = palette[i], []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(l, pts, ls)
			p.Legend.Add(s, l)
			p.Legend.Add(s+", by the switch", ls)
		}
		p.Y.Min, p.Y.Max = 0, top*1.45
		panels = append(panels, p)
	}
	return rows(panels, 2), nil
}

// plot10: transaction throughput and mean latency of NetLock, the same rack's servers only and
// the baselines (DSLR and DrTM, when run), by contention; Figures 10 and 11.
func (f *Figure) plot10() ([][]*plot.Plot, error) {
	tput, lat := plot.New(), plot.New()
	tput.Title.Text, lat.Title.Text = "TPC-C transactions", "TPC-C transaction latency"
	tput.Y.Label.Text, lat.Y.Label.Text = "kTPS (virtual time)", "mean µs (virtual time)"
	type sys struct {
		name string
		tps  func(phase, contention string) (tps, mean float64) // 0, 0 if not run
	}
	rack := func(n string) func(string, string) (float64, float64) {
		return func(ph, _ string) (float64, float64) {
			r := f.find(ph+", "+n, -1)
			if r == nil {
				return 0, 0
			}
			return r.TPS / 1e3, float64(r.Txn.Mean) / 1e3
		}
	}
	base := func(alg string) func(string, string) (float64, float64) {
		return func(_, c string) (float64, float64) {
			b := f.baseline(alg, c)
			if b == nil {
				return 0, 0
			}
			return b.TPS / 1e3, float64(b.Mean) / 1e3
		}
	}
	systems := []sys{{"NetLock", rack(Fig10Netlock)}, {Fig10Servers, rack(Fig10Servers)}}
	for _, v := range Fig10NetlockClientCs {
		if r := f.find(fig10Phases[0].phase+", "+v.Label, -1); r != nil {
			systems = append(systems, sys{"NetLock, client.c " + r.ClientC.String(), rack(v.Label)})
		}
	}
	for _, nc := range Fig10NetChains {
		if r := f.find(fig10Phases[0].phase+", "+nc.Label, -1); r != nil {
			systems = append(systems, sys{"NetChain, " + r.NetChain.Policy.String(), rack(nc.Label)})
		}
	}
	if len(f.Baselines) > 0 {
		systems = append(systems, sys{"DSLR", base("dslr")}, sys{"DrTM", base("drtm")})
	}
	w := min(0.7, 3.5/float64(len(systems))) // bar width, cm: a group stays within 3.5 cm
	for i, s := range systems {
		var t, l plotter.Values
		for _, ph := range fig10Phases {
			tp, m := s.tps(ph.phase, ph.contention)
			t, l = append(t, tp), append(l, m)
		}
		for j, v := range []plotter.Values{t, l} {
			b, err := plotter.NewBarChart(v, vg.Centimeter*vg.Length(w))
			if err != nil {
				return nil, err
			}
			b.Color = palette[i%len(palette)]
			b.Offset = (vg.Length(i) - vg.Length(len(systems)-1)/2) * vg.Centimeter * vg.Length(w)
			pl := []*plot.Plot{tput, lat}[j]
			pl.Add(b)
			pl.Legend.Add(s.name, b)
		}
	}
	for _, pl := range []*plot.Plot{tput, lat} {
		pl.NominalX("high contention", "low contention")
		pl.Legend.Top = true
		pl.Y.Min = 0
		pl.Y.Max *= 1 + 0.14*float64(len(systems)) // room for the legend, a line per system
	}
	return [][]*plot.Plot{{tput, lat}}, nil
}

// plot8: (a) and (b) acquire latency against throughput as client machines are added, on shared
// locks and on exclusive locks without contention; (c) throughput and (d) latency against the
// number of contended locks (log scales).
func (f *Figure) plot8() ([][]*plot.Plot, error) {
	var panels []*plot.Plot
	quantiles := []struct {
		name string
		get  func(Result) time.Duration
	}{
		{"p50", func(r Result) time.Duration { return r.Acquire.P50 }},
		{"mean", func(r Result) time.Duration { return r.Acquire.Mean }},
		{"p99", func(r Result) time.Duration { return r.Acquire.P99 }},
	}
	for i, v := range []string{MicroShared, MicroExclusive} {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("(%c) %s", 'a'+i, v)
		if rs := f.byVariant(v); len(rs) > 1 {
			p.Title.Text += fmt.Sprintf(", %d to %d clients", rs[0].Clients, rs[len(rs)-1].Clients)
		}
		p.X.Label.Text = "MRPS (virtual time)"
		p.Y.Label.Text = "acquire latency, µs"
		top := 0.0
		for j, q := range quantiles {
			var xys plotter.XYs
			for _, r := range f.byVariant(v) {
				y := float64(q.get(r)) / 1e3
				top = max(top, y)
				xys = append(xys, plotter.XY{X: r.RPS / 1e6, Y: y})
			}
			if len(xys) == 0 {
				continue
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = palette[j], palette[j]
			p.Add(l, pts)
			p.Legend.Add(q.name, l)
		}
		if xs := f.byVariant(v); len(xs) > 0 {
			// The paper's Figure 8(a): mean 7.1µs, p99 12µs, whatever the throughput.
			for j, ref := range []time.Duration{PaperFig8Mean, PaperFig8P99} {
				l, err := plotter.NewLine(plotter.XYs{{X: xs[0].RPS / 1e6, Y: float64(ref) / 1e3},
					{X: xs[len(xs)-1].RPS / 1e6, Y: float64(ref) / 1e3}})
				if err != nil {
					return nil, err
				}
				l.Color, l.Dashes = palette[1+j], []vg.Length{vg.Points(4), vg.Points(3)}
				p.Add(l)
				p.Legend.Add("paper's "+[]string{"mean", "p99"}[j]+" (shared)", l)
			}
		}
		p.Y.Min, p.Y.Max = 0, max(top*1.5, 20)
		p.Legend.Top = true
		panels = append(panels, p)
	}
	rs := f.byVariant(MicroContended)
	tput, lat := plot.New(), plot.New()
	tput.Title.Text, lat.Title.Text = "(c) contention: throughput", "(d) contention: latency"
	for _, p := range []*plot.Plot{tput, lat} {
		p.X.Label.Text = "locks"
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.Legend.Top = true
	}
	tput.Y.Label.Text, lat.Y.Label.Text = "MRPS (virtual time)", "acquire latency, µs (log)"
	lat.Y.Scale = plot.LogScale{}
	lat.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	var t plotter.XYs
	for _, r := range rs {
		t = append(t, plotter.XY{X: float64(locksOf(r)), Y: r.RPS / 1e6})
	}
	if len(t) > 0 {
		l, pts, err := plotter.NewLinePoints(t)
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = palette[0], palette[0]
		tput.Add(l, pts)
		tput.Y.Min = 0
		for j, q := range quantiles {
			var xys plotter.XYs
			for _, r := range rs {
				xys = append(xys, plotter.XY{X: float64(locksOf(r)), Y: max(float64(q.get(r))/1e3, 0.1)})
			}
			l, pts, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			l.Color, pts.Color = palette[j], palette[j]
			lat.Add(l, pts)
			lat.Legend.Add(q.name, l)
		}
	}
	panels = append(panels, tput, lat)
	return rows(panels, 2), nil
}

// plot9: throughput by workload, the lock server with each number of cores and the switch.
func (f *Figure) plot9() ([][]*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = "lock switch vs lock server"
	p.Y.Label.Text = "MRPS (virtual time)"
	variants := distinctStrings(f.Results, func(r Result) string { return r.Variant })
	var labels []string
	for _, r := range f.Results {
		if len(variants) > 0 && r.Variant == variants[0] {
			labels = append(labels, strings.TrimPrefix(r.Label, variants[0]+", "))
		}
	}
	w := vg.Centimeter * 0.8
	top := 0.0
	for i, l := range labels {
		var vs plotter.Values
		for _, v := range variants {
			r := f.find(v+", "+l, -1)
			if r == nil {
				vs = append(vs, 0)
				continue
			}
			vs = append(vs, r.RPS/1e6)
			top = max(top, r.RPS/1e6)
		}
		b, err := plotter.NewBarChart(vs, w)
		if err != nil {
			return nil, err
		}
		b.Color = palette[i%len(palette)]
		b.Offset = (vg.Length(i) - vg.Length(len(labels)-1)/2) * w
		p.Add(b)
		p.Legend.Add(l, b)
	}
	p.NominalX(variants...)
	p.Legend.Top, p.Legend.Left = true, true
	p.Y.Min, p.Y.Max = 0, top*1.7 // room for the legend
	return [][]*plot.Plot{{p}}, nil
}
