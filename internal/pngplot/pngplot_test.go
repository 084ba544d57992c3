package pngplot

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func linePlot(t *testing.T) *plot.Plot {
	t.Helper()
	p := plot.New()
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 2}})
	if err != nil {
		t.Fatal(err)
	}
	p.Add(l)
	return p
}

func TestSaveGrid(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		grid func() [][]*plot.Plot
		opt  Options
		w, h vg.Length
		// wantW, wantH are the image's size in pixels (0: SaveGrid must fail).
		wantW, wantH int
	}{
		{"one plot, defaults", func() [][]*plot.Plot { return [][]*plot.Plot{{linePlot(t)}} }, Options{}, 10 * vg.Centimeter, 5 * vg.Centimeter, 283, 142},
		{"2x2 with an empty tile, 96 dpi", func() [][]*plot.Plot {
			return [][]*plot.Plot{{linePlot(t), linePlot(t)}, {linePlot(t), nil}}
		}, Options{DPI: 96, Pad: 4 * vg.Millimeter}, 2 * vg.Inch, vg.Inch, 192, 96},
		{"empty grid", func() [][]*plot.Plot { return nil }, Options{}, vg.Inch, vg.Inch, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name, "sub", "fig.png")
			err := SaveGrid(tc.grid(), file, tc.w, tc.h, tc.opt)
			if tc.wantW == 0 {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Width != tc.wantW || cfg.Height != tc.wantH {
				t.Errorf("image %dx%d, want %dx%d", cfg.Width, cfg.Height, tc.wantW, tc.wantH)
			}
		})
	}
}
