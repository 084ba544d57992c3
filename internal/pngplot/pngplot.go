// Package pngplot renders a grid of gonum/plot plots into one PNG file: the figures of the
// benchmarks (rdma/bench, rdma/rma/rmabench, rdma/rangebench) and of the experiments
// (testbed/modelfig) are all written through it.
package pngplot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Options adjust the rendering. Zero fields take the defaults in parentheses.
type Options struct {
	// DPI is the image's resolution (72).
	DPI int
	// Pad is the space between two plots of the grid, across and down (3 mm).
	Pad vg.Length
}

// SaveGrid draws grid (rows of plots; a nil plot leaves its tile empty; every row as long as the
// first) into a w x h PNG at file, creating file's directory if need be. The tiles keep a 2 mm
// margin on every side of the image.
func SaveGrid(grid [][]*plot.Plot, file string, w, h vg.Length, opt Options) error {
	if len(grid) == 0 || len(grid[0]) == 0 {
		return errors.New("pngplot: empty grid")
	}
	if opt.DPI == 0 {
		opt.DPI = 72
	}
	if opt.Pad == 0 {
		opt.Pad = 3 * vg.Millimeter
	}
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(opt.DPI))
	tiles := draw.Tiles{Rows: len(grid), Cols: len(grid[0]), PadX: opt.Pad, PadY: opt.Pad,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, draw.New(img))
	for i := range grid {
		for j := range grid[i] {
			if grid[i][j] != nil {
				grid[i][j].Draw(canvases[i][j])
			}
		}
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("pngplot: %w", err)
	}
	fh, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("pngplot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(fh); err != nil {
		fh.Close()
		return fmt.Errorf("pngplot: %s: %w", file, err)
	}
	return fh.Close()
}
