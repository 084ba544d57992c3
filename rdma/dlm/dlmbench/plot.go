package dlmbench

import (
	"image/color"
	"sort"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/internal/pngplot"
)

var algColor = map[string]color.Color{
	"dslr":         color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	"dslr-backoff": color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
	"drtm":         color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
}

// Plot writes the microbenchmark figure: throughput (top) and p99 acquire latency (bottom) for
// shared locks and uncontended exclusive locks against the client threads, and for contended
// exclusive locks against the size of the lock set.
func Plot(ps []Point, file string) error {
	cols := []struct {
		wl, title, xl string
		logX          bool
	}{
		{Shared, "(a) shared locks", "client threads", false},
		{ExclusiveNC, "(b) exclusive, no contention", "client threads", false},
		{ExclusiveCon, "(c) exclusive, contention", "locks in the set", true},
	}
	var grid [][]*plot.Plot
	for row := range 2 {
		var line []*plot.Plot
		for _, c := range cols {
			p := plot.New()
			p.Title.Text = c.title
			p.X.Label.Text = c.xl
			p.Y.Label.Text = []string{"M lock requests/s (virtual)", "p99 acquire latency (us)"}[row]
			if c.logX {
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = plot.LogTicks{Prec: -1}
			}
			if row == 1 {
				p.Y.Scale = plot.LogScale{}
				p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
			}
			p.Legend.Top = true
			var algs []string
			for a := range algColor {
				algs = append(algs, a)
			}
			sort.Strings(algs)
			for _, a := range algs {
				var xys plotter.XYs
				for _, pt := range ps {
					if pt.Workload != c.wl || pt.Alg != a {
						continue
					}
					x := float64(pt.Machines * pt.Threads)
					if c.logX {
						x = float64(pt.Locks)
					}
					y := pt.MRPS
					if row == 1 {
						y = float64(pt.P99) / 1e3
					}
					if y > 0 {
						xys = append(xys, plotter.XY{X: x, Y: y})
					}
				}
				if len(xys) == 0 {
					continue
				}
				sort.Slice(xys, func(i, j int) bool { return xys[i].X < xys[j].X })
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return err
				}
				l.Color, pts.Color = algColor[a], algColor[a]
				p.Add(l, pts)
				p.Legend.Add(a, l)
			}
			if row == 0 {
				p.Y.Min = 0 // throughput from zero: the differences are the result
			}
			line = append(line, p)
		}
		grid = append(grid, line)
	}
	return pngplot.SaveGrid(grid, file, 3*10*vg.Centimeter, 2*8*vg.Centimeter, pngplot.Options{})
}
