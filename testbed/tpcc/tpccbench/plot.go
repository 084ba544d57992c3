package tpccbench

import (
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/netlock-go/netlock/internal/pngplot"
)

var algColor = map[string]color.Color{
	"dslr":         color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
	"dslr-backoff": color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	"drtm":         color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
}

// Plot writes one figure's panels: granted lock requests per second (top) and p99 transaction
// latency (bottom) against the threads per client machine, high contention (left) and low
// (right); a line per algorithm, warehouse count (solid: per client machine, dashed: in all)
// and lock order (circles: ordered, triangles: the clients' order); Figure 10's paper values as
// dotted horizontal lines.
func Plot(ps []Point, fig Figure, file string) error {
	type key struct{ alg, per, order string }
	var keys []key
	for _, p := range ps {
		k := key{p.Alg, p.Per, p.Order}
		if p.Figure == fig.Name && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	var grid [][]*plot.Plot
	for row := range 2 {
		var line []*plot.Plot
		for _, cont := range []string{"high", "low"} {
			p := plot.New()
			p.Title.Text = fmt.Sprintf("%s, %s contention (%d clients, %d servers)", fig.Name, cont, fig.Machines, fig.Servers)
			p.X.Label.Text = "threads per client machine"
			p.Y.Label.Text = []string{"M lock requests/s (virtual)", "p99 transaction latency (us)"}[row]
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
			p.Legend.Top = true
			p.Legend.TextStyle.Font.Size = vg.Points(8)
			legend := row == 0 && cont == "high" // one legend, above the data
			maxY := 0.0
			for _, k := range keys {
				var xys plotter.XYs
				for _, pt := range ps {
					if pt.Figure != fig.Name || pt.Contention != cont || pt.Alg != k.alg || pt.Per != k.per || pt.Order != k.order {
						continue
					}
					y := pt.MRPS
					if row == 1 {
						y = float64(pt.P99) / 1e3
					}
					if y > 0 {
						xys = append(xys, plotter.XY{X: float64(pt.Threads), Y: y})
						maxY = max(maxY, y)
					}
				}
				if len(xys) == 0 {
					continue
				}
				slices.SortFunc(xys, func(a, b plotter.XY) int { return int(a.X - b.X) })
				l, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return err
				}
				l.Color, pts.Color = algColor[k.alg], algColor[k.alg]
				if k.per != PerClient {
					l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
				}
				pts.Shape = draw.CircleGlyph{}
				if k.order == "client" {
					pts.Shape = draw.TriangleGlyph{}
				}
				p.Add(l, pts)
				if legend {
					order := "ascending ids"
					if k.order == "client" {
						order = "clients' order"
					}
					p.Legend.Add(fmt.Sprintf("%s, warehouses per %s, %s", k.alg, k.per, order), l, pts)
				}
			}
			if row == 0 && fig.Name == Fig10.Name {
				for _, a := range []string{"dslr", "drtm"} {
					v, ok := Paper[a][cont]
					if !ok {
						continue
					}
					l, err := plotter.NewLine(plotter.XYs{{X: 1, Y: v}, {X: 8, Y: v}})
					if err != nil {
						return err
					}
					l.Color = algColor[a]
					l.Dashes = []vg.Length{vg.Points(1), vg.Points(3)}
					p.Add(l)
					if legend {
						p.Legend.Add(fmt.Sprintf("paper %s (Fig. 10a)", a), l)
					}
				}
			}
			if legend && maxY > 0 {
				p.Y.Max = maxY * 30 // room for the legend above the lines
			}
			line = append(line, p)
		}
		grid = append(grid, line)
	}
	return pngplot.SaveGrid(grid, file, 2*16*vg.Centimeter, 2*11*vg.Centimeter, pngplot.Options{})
}
