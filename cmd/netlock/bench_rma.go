package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/rdma/rma/rmabench"
)

func init() { benchCmd.AddCommand(newBenchRMACmd()) }

func newBenchRMACmd() *cobra.Command {
	var (
		sf                sweepFlags
		figs              []string
		procs, rwProcs    []int
		fwProcs           []int
		seed              int64
		minWrites         int
		from              []string
		parallel          int
		showClaims, jsonF bool
	)
	cmd := &cobra.Command{
		Use:   "rma",
		Short: "RMA-MCS, RMA-RW and their baselines (HPDC '16, section 5) on the emulated RDMA fabric (virtual time)",
		Long: `Reproduces the evaluation of "High-Performance Distributed RMA Locks" (HPDC '16) on the
virtual-time emulated RDMA fabric (rdma/sim), 16 processes per node:

  fig3  RMA-MCS vs D-MCS vs a spin lock: latency (LB) and throughput of the empty critical
        section (ECSB), one remote access in it (SOB), a counter increment and 1-4 us of work in
        it (WCSB), 1-4 us of work after it (WARB), against P
  fig4  RMA-RW parameters: T_DC, T_W = T_L,1 x T_L,2, its split, T_R, T_R with F_W (its
        latency panel, 4d, is the closed loop's P / throughput; Fig. 4d in open loop is
        netlock bench rma-open)
  fw    RMA-RW and the central RW lock against the writer fraction F_W
  fig5  RMA-RW vs a central RMA reader-writer lock at F_W = 0.2%, 2%, 5%

Times are virtual (the sim cost model), deterministic for a seed; the ratios between locks are
the result. Each point's window adapts until every process completed two acquisitions on
average and, for the reader-writer locks with 0 < F_W < 1, --min-writes writes completed.
Writes results.json, tables.md, counts.md (per point: writes, writer phases, T_R hits and
resets, T_L,i passes and hits, and whether each swept threshold acted), claims.md (each
reproduced ratio next to the paper's) and one PNG per figure into --out; a sweep whose values
all give the same events is reported on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sc := rmabench.PaperScale()
			if sf.quick {
				sc = rmabench.QuickScale()
			}
			f := cmd.Flags()
			if f.Changed("procs") {
				sc.Procs = procs
			}
			if f.Changed("rw-procs") {
				sc.RWProcs = rwProcs
			}
			if f.Changed("fw-procs") {
				sc.FWProcs = fwProcs
			}
			sc.Seed = seed
			if f.Changed("min-writes") {
				sc.MinWrites = minWrites
			}
			all := rmabench.Figures(sc)
			var sel []rmabench.Figure
			for _, fg := range all {
				if len(figs) == 0 || slices.Contains(figs, fg.Name) {
					sel = append(sel, fg)
				}
			}
			if len(sel) == 0 {
				var names []string
				for _, fg := range all {
					names = append(names, fg.Name)
				}
				return fmt.Errorf("bench rma: no figure among %v (have %s)", figs, strings.Join(names, ", "))
			}
			w := cmd.OutOrStdout()
			start := time.Now()
			var rs rmabench.Results
			var err error
			if len(from) > 0 {
				rs, err = loadPoints(from, sel)
			} else {
				rs, err = rmabench.RunFigures(cmd.Context(), sel, parallel, sweepProgress[rmabench.Result](os.Stderr, start, 20))
			}
			if err != nil {
				return err
			}
			if err := os.MkdirAll(sf.out, 0o755); err != nil {
				return err
			}
			var files []string
			write := func(name string, fn func(*os.File) error) error {
				p := filepath.Join(sf.out, name)
				fh, err := os.Create(p)
				if err != nil {
					return err
				}
				if err := fn(fh); err != nil {
					fh.Close()
					return fmt.Errorf("%s: %w", p, err)
				}
				files = append(files, p)
				return fh.Close()
			}
			if err := write("results.json", func(fh *os.File) error { return rmabench.WriteJSON(fh, rs) }); err != nil {
				return err
			}
			if err := write("points.json", func(fh *os.File) error { return json.NewEncoder(fh).Encode(rs) }); err != nil {
				return err
			}
			if err := write("tables.md", func(fh *os.File) error { return rmabench.WriteTables(fh, sel, rs) }); err != nil {
				return err
			}
			checks := rmabench.CheckSweeps(sel, rs)
			if err := write("counts.md", func(fh *os.File) error {
				if err := rmabench.WriteCounts(fh, sel, rs); err != nil {
					return err
				}
				if len(checks) == 0 {
					return nil
				}
				if _, err := fmt.Fprintln(fh, "### Do the swept thresholds act?"); err != nil {
					return err
				}
				return rmabench.WriteSweepChecks(fh, checks)
			}); err != nil {
				return err
			}
			for _, c := range checks {
				if !c.Acts {
					fmt.Fprintf(os.Stderr, "  vacuous sweep: %s at P=%d (%s): %s %v give the same events %v\n",
						c.Panel, c.Procs, c.Fixed, c.Param, c.Values, c.Events)
				}
			}
			claims := len(figs) == 0 // the claims need every figure's points
			if claims {
				if err := write("claims.md", func(fh *os.File) error { return rmabench.WriteClaims(fh, rmabench.Claims(sc, rs)) }); err != nil {
					return err
				}
			}
			if !sf.noPlots {
				pngs, err := rmabench.Plot(sel, rs, sf.out)
				if err != nil {
					return err
				}
				files = append(files, pngs...)
			}
			if jsonF {
				return writeJSON(w, rs)
			}
			if claims && showClaims {
				fmt.Fprintln(w)
				if err := rmabench.WriteClaims(w, rmabench.Claims(sc, rs)); err != nil {
					return err
				}
			}
			printWrote(w, len(rs), start, fmt.Sprintf("seed %d", sc.Seed), files)
			return nil
		},
	}
	f := cmd.Flags()
	sf.add(f, "out/bench-rma", "output directory for results, tables and plots", "CI-size sweep (P up to 64)")
	f.StringSliceVar(&figs, "figs", nil, "figures to run (fig3, fig4, fw, fig5; default all)")
	f.IntSliceVar(&procs, "procs", nil, "process counts of fig3 and fig5 (paper: 4..1024)")
	f.IntSliceVar(&rwProcs, "rw-procs", nil, "process counts of the fig4 sweeps")
	f.IntSliceVar(&fwProcs, "fw-procs", nil, "process counts of the F_W sweep")
	f.Int64Var(&seed, "seed", 1, "seed of the simulation (jitter and the processes' choices)")
	f.IntVar(&parallel, "parallel", 2, "points simulated at once")
	f.IntVar(&minWrites, "min-writes", rmabench.DefaultMinWrites, "minimum writes in a reader-writer point's window (0 < F_W < 1; --quick: 40; negative: none)")
	f.BoolVar(&showClaims, "claims", true, "print the reproduced ratios next to the paper's")
	f.BoolVar(&jsonF, "json", false, "print the results as JSON")
	f.StringSliceVar(&from, "from", nil, "directories of earlier runs (their points.json): write the files from their points instead of simulating (e.g. one run per figure, then all figures with their claims)")
	return cmd
}

// loadPoints merges the points.json files of dirs and checks that they hold every point of figs
// (the scale and seed of those runs must be the ones given now).
func loadPoints(dirs []string, figs []rmabench.Figure) (rmabench.Results, error) {
	rs := rmabench.Results{}
	for _, d := range dirs {
		p := filepath.Join(d, "points.json")
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("bench rma --from: %w", err)
		}
		var part rmabench.Results
		if err := json.Unmarshal(b, &part); err != nil {
			return nil, fmt.Errorf("bench rma --from %s: %w", p, err)
		}
		for k, r := range part {
			rs[k] = r
		}
	}
	missing := 0
	for _, f := range figs {
		for _, pn := range f.Panels {
			for _, s := range pn.Series {
				for _, c := range s.Points {
					if _, ok := rs.Get(c); !ok {
						missing++
					}
				}
			}
		}
	}
	if missing > 0 {
		return nil, fmt.Errorf("bench rma --from %v: %d points of the selected figures are missing (same --seed, --procs and --min-writes?)", dirs, missing)
	}
	return rs, nil
}
