package rangebench

import (
	"fmt"
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/internal/pngplot"
)

var schemeColor = map[string]color.Color{
	CITRON:  color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	SSExact: color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	SSOver:  color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	SSUnder: color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	Server:  color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
	"fast":  color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"slow":  color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
}

var kColor = []color.Color{
	color.Black,
	color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
}

type series struct {
	name string
	c    color.Color
	xys  plotter.XYs
}

func panel(title, xl, yl string, logX, logY bool, ss []series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xl
	p.Y.Label.Text = yl
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if logY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	p.Legend.Top = true
	for _, s := range ss {
		if len(s.xys) == 0 {
			continue
		}
		sort.Slice(s.xys, func(i, j int) bool { return s.xys[i].X < s.xys[j].X })
		line, pts, err := plotter.NewLinePoints(s.xys)
		if err != nil {
			return nil, err
		}
		line.Color, pts.Color = s.c, s.c
		p.Add(line, pts)
		p.Legend.Add(s.name, line)
	}
	return p, nil
}

// PlotMicro writes Fig. 6: throughput and p99 latency against threads, one column per L.
func PlotMicro(rs []Result, file string) error {
	var grid [][]*plot.Plot
	for row := 0; row < 3; row++ {
		var line []*plot.Plot
		for _, L := range []uint64{1, 16, 256} {
			var ss []series
			for _, sc := range Schemes {
				s := series{name: sc, c: schemeColor[sc]}
				for _, r := range find(rs, func(r Result) bool { return r.Scheme == sc && r.L == L }) {
					y := r.Throughput / 1e6
					switch row {
					case 1:
						y = r.P50 / 1e3
					case 2:
						y = r.P99 / 1e3
					}
					if y > 0 {
						s.xys = append(s.xys, plotter.XY{X: float64(r.Threads), Y: y})
					}
				}
				ss = append(ss, s)
			}
			yl := []string{"M locks/s (virtual)", "p50 acquire latency (us)", "p99 acquire latency (us)"}[row]
			p, err := panel(fmt.Sprintf("L = %d, Zipf 0.9", L), "client threads", yl, true, row > 0, ss)
			if err != nil {
				return err
			}
			line = append(line, p)
		}
		grid = append(grid, line)
	}
	return pngplot.SaveGrid(grid, file, 3*10*vg.Centimeter, 3*8*vg.Centimeter, pngplot.Options{})
}

// PlotFastPath writes Fig. 9: throughput and median latency against the Zipf skew, fast path
// on and off, one column per L.
func PlotFastPath(rs []Result, file string) error {
	var grid [][]*plot.Plot
	for row := 0; row < 2; row++ {
		var line []*plot.Plot
		for _, L := range []uint64{16, 256} {
			var ss []series
			for _, fast := range []bool{true, false} {
				name := map[bool]string{true: "fast", false: "slow"}[fast]
				s := series{name: name + " path", c: schemeColor[name]}
				for _, r := range find(rs, func(r Result) bool { return r.Scheme == CITRON && r.L == L && r.Fast == fast }) {
					y := r.Throughput / 1e6
					if row == 1 {
						y = r.P50 / 1e3
					}
					s.xys = append(s.xys, plotter.XY{X: r.Alpha, Y: y})
				}
				ss = append(ss, s)
			}
			yl := []string{"M locks/s (virtual)", "p50 acquire latency (us)"}[row]
			p, err := panel(fmt.Sprintf("CITRON, L = %d", L), "Zipf skew", yl, false, false, ss)
			if err != nil {
				return err
			}
			line = append(line, p)
		}
		grid = append(grid, line)
	}
	return pngplot.SaveGrid(grid, file, 2*10*vg.Centimeter, 2*8*vg.Centimeter, pngplot.Options{})
}

// PlotFalseConflicts writes Fig. 11 (rate against L, one line per k, log-log; zero rates are
// left out) next to the k sweep's throughput against L.
func PlotFalseConflicts(ps []FalseConflictPoint, ks []Result, file string) error {
	byK := map[int]*series{}
	var order []int
	for _, p := range ps {
		s, ok := byK[p.K]
		if !ok {
			s = &series{name: fmt.Sprintf("k = %d", p.K), c: kColor[p.K%len(kColor)]}
			byK[p.K] = s
			order = append(order, p.K)
		}
		if p.Rate > 0 {
			s.xys = append(s.xys, plotter.XY{X: float64(p.L), Y: p.Rate})
		}
	}
	var ss []series
	for _, k := range order {
		ss = append(ss, *byK[k])
	}
	left, err := panel("false conflicts per request", "range length L (units)", "rate", true, true, ss)
	if err != nil {
		return err
	}
	row := []*plot.Plot{left}
	if len(ks) > 0 {
		byK := map[int]*series{}
		var order []int
		for _, r := range ks {
			s, ok := byK[r.K]
			if !ok {
				s = &series{name: fmt.Sprintf("k = %d", r.K), c: kColor[r.K%len(kColor)]}
				byK[r.K] = s
				order = append(order, r.K)
			}
			s.xys = append(s.xys, plotter.XY{X: float64(r.L), Y: r.Throughput / 1e6})
		}
		var ts []series
		for _, k := range order {
			ts = append(ts, *byK[k])
		}
		right, err := panel(fmt.Sprintf("CITRON throughput, %d threads", ks[0].Threads), "range length L (units)", "M locks/s (virtual)", true, false, ts)
		if err != nil {
			return err
		}
		row = append(row, right)
	}
	return pngplot.SaveGrid([][]*plot.Plot{row}, file, vg.Length(len(row))*11*vg.Centimeter, 8*vg.Centimeter, pngplot.Options{})
}

// PlotAtomics writes the same-word atomic-time sweep: for L = 1, 16 and 256, CITRON's peak
// throughput over SS-Exact's (L = 1) or the best static segmentation's (L = 16, 256) against the
// same-word atomic time, with the paper's ratio as a flat line and the default model (hashed
// units) as one point at 250 ns (top), and every scheme's peak throughput (bottom).
func PlotAtomics(rs []Result, file string) error {
	keys, by := bySameWord(rs)
	paper := map[uint64]float64{1: 0.554, 16: 1.29, 256: 1.39}
	var top, bottom []*plot.Plot
	def := float64(Cost().NICAtomic)
	for _, L := range []uint64{1, 16, 256} {
		ratio := series{name: "here", c: schemeColor[CITRON]}
		hashed := series{name: "default model (hashed unit)", c: schemeColor[SSExact]}
		ref := series{name: "paper", c: color.Black}
		for _, k := range keys {
			r := atomicRatio(by[k], L)
			if r <= 0 {
				continue
			}
			if k == 0 {
				hashed.xys = append(hashed.xys, plotter.XY{X: def, Y: r})
				continue
			}
			ratio.xys = append(ratio.xys, plotter.XY{X: float64(k), Y: r})
			ref.xys = append(ref.xys, plotter.XY{X: float64(k), Y: paper[L]})
		}
		yl := "CITRON / best static segmentation"
		if L == 1 {
			yl = "CITRON / SS-Exact"
		}
		p, err := panel(fmt.Sprintf("L = %d, unscrambled Zipf 0.9", L), "same-word atomic time (ns)", yl, false, false, []series{ratio, hashed, ref})
		if err != nil {
			return err
		}
		headroom(p)
		top = append(top, p)
		var ss []series
		for _, sc := range Schemes {
			s := series{name: sc, c: schemeColor[sc]}
			for _, k := range keys {
				if r, ok := peak(by[k], sc, L); ok && r.Throughput > 0 && k > 0 {
					s.xys = append(s.xys, plotter.XY{X: float64(k), Y: r.Throughput / 1e6})
				}
			}
			ss = append(ss, s)
		}
		p, err = panel(fmt.Sprintf("L = %d: peak throughput", L), "same-word atomic time (ns)", "M locks/s (virtual)", false, false, ss)
		if err != nil {
			return err
		}
		headroom(p)
		bottom = append(bottom, p)
	}
	return pngplot.SaveGrid([][]*plot.Plot{top, bottom}, file, 3*10*vg.Centimeter, 2*8*vg.Centimeter, pngplot.Options{})
}

// headroom starts a linear panel's y axis at 0 and leaves the top third free for the legend.
func headroom(p *plot.Plot) {
	p.Y.Min = 0
	p.Y.Max *= 1.5
}
