package rmabench

import (
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/internal/pngplot"
)

// Value is a panel's metric of r: M ops/s, or the closed-loop latency P/throughput in us.
func Value(metric string, r Result) float64 {
	if metric == "latency" {
		if r.Throughput == 0 {
			return math.NaN()
		}
		return float64(r.Procs) / r.Throughput * 1e6
	}
	return r.Throughput / 1e6
}

func xOf(x string, c Config) float64 {
	if x == "fw" {
		return c.WriteFrac * 100
	}
	return float64(c.Procs)
}

func unit(metric string) string {
	if metric == "latency" {
		return "latency (us, virtual)"
	}
	return "M ops/s (virtual)"
}

// WriteTables prints every panel of figs as a Markdown table: one row per x value, one column
// per series.
func WriteTables(w io.Writer, figs []Figure, rs Results) error {
	for _, f := range figs {
		if _, err := fmt.Fprintf(w, "### %s\n\n", f.Title); err != nil {
			return err
		}
		for _, p := range f.Panels {
			xname := "P"
			if p.X == "fw" {
				xname = "F_W %"
			}
			var hdr, sep strings.Builder
			fmt.Fprintf(&hdr, "| %s: %s | %s |", p.Title, unit(p.Metric), xname)
			sep.WriteString("|---|---:|")
			for _, s := range p.Series {
				fmt.Fprintf(&hdr, " %s |", s.Label)
				sep.WriteString("---:|")
			}
			fmt.Fprintf(w, "%s\n%s\n", hdr.String(), sep.String())
			xs := map[float64]bool{}
			for _, s := range p.Series {
				for _, c := range s.Points {
					xs[xOf(p.X, c)] = true
				}
			}
			var order []float64
			for x := range xs {
				order = append(order, x)
			}
			sort.Float64s(order)
			for _, x := range order {
				fmt.Fprintf(w, "| | %g |", x)
				for _, s := range p.Series {
					cell := " |"
					for _, c := range s.Points {
						if xOf(p.X, c) == x {
							if r, ok := rs.Get(c); ok {
								cell = fmt.Sprintf(" %s |", num(Value(p.Metric, r)))
							}
						}
					}
					fmt.Fprint(w, cell)
				}
				fmt.Fprintln(w)
			}
			if _, err := fmt.Fprintln(w); err != nil {
				return err
			}
		}
	}
	return nil
}

func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// WriteJSON writes every result.
func WriteJSON(w io.Writer, rs Results) error {
	var list []Result
	for _, r := range rs {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Alg != b.Alg {
			return a.Alg < b.Alg
		}
		if a.Label() != b.Label() {
			return a.Label() < b.Label()
		}
		if a.Bench != b.Bench {
			return a.Bench < b.Bench
		}
		if a.WriteFrac != b.WriteFrac {
			return a.WriteFrac < b.WriteFrac
		}
		return a.Procs < b.Procs
	})
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(list)
}

var palette = []color.Color{
	color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
	color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
	color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}, color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
}

// Plot writes one PNG per figure into dir (one panel per plot, log-log axes) and returns the
// files written.
func Plot(figs []Figure, rs Results, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("rmabench plots: %w", err)
	}
	var files []string
	for _, f := range figs {
		cols := min(3, len(f.Panels))
		rows := (len(f.Panels) + cols - 1) / cols
		grid := make([][]*plot.Plot, rows)
		for i, pn := range f.Panels {
			p := plot.New()
			p.Title.Text = pn.Title
			p.X.Label.Text = map[string]string{"procs": "processes P", "fw": "writers F_W (%)"}[pn.X]
			p.Y.Label.Text = unit(pn.Metric)
			p.Y.Scale = plot.LogScale{}
			p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
			if pn.X == "procs" {
				p.X.Scale = plot.LogScale{}
				p.X.Tick.Marker = plot.LogTicks{Prec: -1}
			}
			p.Legend.Top = pn.Metric == "latency"
			p.Legend.Left = true
			for k, s := range pn.Series {
				var xys plotter.XYs
				for _, c := range s.Points {
					r, ok := rs.Get(c)
					v := Value(pn.Metric, r)
					x := xOf(pn.X, c)
					if !ok || math.IsNaN(v) || v <= 0 || (pn.X == "fw" && x <= 0) {
						continue
					}
					xys = append(xys, plotter.XY{X: x, Y: v})
				}
				if len(xys) == 0 {
					continue
				}
				line, pts, err := plotter.NewLinePoints(xys)
				if err != nil {
					return nil, err
				}
				line.Color, pts.Color = palette[k%len(palette)], palette[k%len(palette)]
				p.Add(line, pts)
				p.Legend.Add(s.Label, line)
			}
			grid[i/cols] = append(grid[i/cols], p)
		}
		for len(grid[rows-1]) < cols {
			grid[rows-1] = append(grid[rows-1], nil)
		}
		file := filepath.Join(dir, f.Name+".png")
		if err := pngplot.SaveGrid(grid, file, vg.Length(cols)*11*vg.Centimeter, vg.Length(rows)*8*vg.Centimeter, pngplot.Options{}); err != nil {
			return nil, err
		}
		files = append(files, file)
	}
	return files, nil
}
