package softfig

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/netlock-go/netlock/internal/pngplot"
)

// timelineMarks are the events drawn on a Timeline's plot.
var timelineMarks = []struct{ what, label string }{
	{EventRestart, "switch restart"},
	{EventReprogrammed, "re-programmed"},
	{EventRecovered, "locks back to servers"},
	{EventKill, "server 2 killed"},
	{EventSuspected, "suspected"},
	{EventStandbyGrants, "standby grants"},
}

// SavePNG plots tl into file: committed transactions per second over time (top) and the lock
// servers' grants per second (bottom), with the failures and the controller's reactions as
// vertical lines.
func (tl *Timeline) SavePNG(file string) error {
	if len(tl.Samples) == 0 {
		return fmt.Errorf("softfig: %s: no samples", tl.Label)
	}
	secs := tl.Bin.Seconds()
	panel := func(title, ylabel string, y func(Sample) uint64, c color.Color, marks bool) (*plot.Plot, error) {
		p := plot.New()
		p.Title.Text = title
		p.X.Label.Text = "wall-clock time since the load started (s)"
		p.Y.Label.Text = ylabel
		var xys plotter.XYs
		top := 0.0
		for _, s := range tl.Samples {
			v := float64(y(s)) / secs
			xys = append(xys, plotter.XY{X: s.At.Seconds(), Y: v})
			top = max(top, v)
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.Color = c
		p.Add(l)
		for i, m := range timelineMarks {
			at, ok := tl.EventAt(m.what, 0)
			if !ok {
				continue
			}
			x := at.Seconds()
			v, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: top * 1.05}})
			if err != nil {
				return nil, err
			}
			v.Color = color.Gray{Y: uint8(40 + 25*i)}
			v.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
			v.Width = vg.Points(1.2)
			p.Add(v)
			if !marks {
				continue
			}
			lb, err := plotter.NewLabels(plotter.XYLabels{XYs: plotter.XYs{{X: x, Y: top * (1.08 + 0.09*float64(i%3))}},
				Labels: []string{m.label}})
			if err != nil {
				return nil, err
			}
			p.Add(lb)
		}
		p.Y.Min, p.Y.Max = 0, top*1.1
		if marks {
			p.Y.Max = top * 1.35
		}
		return p, nil
	}
	top, err := panel("software rack: "+tl.Label, "committed transactions / s", func(s Sample) uint64 { return s.Txns },
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, true)
	if err != nil {
		return fmt.Errorf("softfig: %w", err)
	}
	bottom, err := panel("", "grants by the lock servers / s", func(s Sample) uint64 { return s.ServerGrants },
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}, false)
	if err != nil {
		return fmt.Errorf("softfig: %w", err)
	}
	if err := pngplot.SaveGrid([][]*plot.Plot{{top}, {bottom}}, file, 24*vg.Centimeter, 16*vg.Centimeter,
		pngplot.Options{DPI: 96, Pad: 4 * vg.Millimeter}); err != nil {
		return fmt.Errorf("softfig: %w", err)
	}
	return nil
}
