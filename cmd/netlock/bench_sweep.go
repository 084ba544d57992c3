package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"
)

// sweepFlags are the flags that the simulated-sweep benchmarks (bench rdma, bench rma) share:
// where the files go, the CI-size sweep, and whether to draw the PNG plots.
type sweepFlags struct {
	out            string
	quick, noPlots bool
}

// add registers --out (default defOut, described by outHelp), --quick (quickHelp) and --no-plots.
func (s *sweepFlags) add(f *pflag.FlagSet, defOut, outHelp, quickHelp string) {
	f.StringVar(&s.out, "out", defOut, outHelp)
	f.BoolVar(&s.quick, "quick", false, quickHelp)
	f.BoolVar(&s.noPlots, "no-plots", false, "skip the PNG plots")
}

// sweepProgress is a sweep's progress callback: after every every-th point and after the last it
// writes to w how many of the points are done and the time since start.
func sweepProgress[R any](w io.Writer, start time.Time, every int) func(done, total int, _ R) {
	return func(done, total int, _ R) {
		if done%every == 0 || done == total {
			fmt.Fprintf(w, "  %d/%d points (%v)\n", done, total, time.Since(start).Round(time.Second))
		}
	}
}

// printWrote writes a sweep's closing lines to w: how many points it ran in how long since
// start (with note in parentheses, if any) and the files it wrote, one a line.
func printWrote(w io.Writer, points int, start time.Time, note string, files []string) {
	if note != "" {
		note = " (" + note + ")"
	}
	fmt.Fprintf(w, "\n%d points in %v%s; wrote:\n", points, time.Since(start).Round(time.Millisecond), note)
	for _, f := range files {
		fmt.Fprintln(w, " ", f)
	}
}
