package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/rdma/rangebench"
)

func init() { benchCmd.AddCommand(newBenchCitronCmd()) }

// citronFlags are the flags every CITRON experiment shares.
type citronFlags struct {
	out                  string
	quick                bool
	n                    uint64
	warmupUS, durationUS float64
	seed                 int64
	threads              []int
	schemes              []string
	hotspot              bool
	sameWordNS           int64
}

func (f *citronFlags) options() rangebench.Options {
	o := rangebench.Options{N: f.n, Warmup: int64(f.warmupUS * 1000), Duration: int64(f.durationUS * 1000), Seed: f.seed,
		Threads: f.threads, Schemes: f.schemes, Hotspot: f.hotspot, SameWordNS: f.sameWordNS}
	if len(o.Threads) == 0 {
		o.Threads = []int{6, 24, 96, 192}
		if f.quick {
			o.Threads = []int{6, 24}
		}
	}
	if len(o.Schemes) == 0 {
		o.Schemes = rangebench.Schemes
	}
	return o
}

func newBenchCitronCmd() *cobra.Command {
	f := &citronFlags{}
	cmd := &cobra.Command{
		Use:   "citron",
		Short: "CITRON range locks vs static segmentation vs a server-CPU lock manager (virtual time)",
		Long: `Reproduces the CITRON paper's (FAST '23) microbenchmark, fast-path, false-conflict and k
experiments on the virtual-time emulated RDMA fabric (rdma/sim): node 0 is the lock server, client
threads run on 3 client machines and lock ranges of L units with Zipfian starts. Times are virtual
(the cost model of rdma/rangebench), deterministic for a seed. Each subcommand writes JSON, a text
table and a PNG into --out and prints the paper's ratios next to the measured ones.`,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.out, "out", "out/bench-citron", "output directory")
	pf.BoolVar(&f.quick, "quick", false, "CI size: fewer threads, shorter runs, smaller trials")
	pf.Uint64Var(&f.n, "n", 1<<20, "address space N (units); the paper uses 2^28")
	pf.Float64Var(&f.warmupUS, "warmup-us", 50, "virtual warm-up per point, microseconds")
	pf.Float64Var(&f.durationUS, "duration-us", 300, "virtual measured time per point, microseconds")
	pf.Int64Var(&f.seed, "seed", 1, "seed")
	pf.IntSliceVar(&f.threads, "threads", nil, "client thread counts (default 6,24,96,192)")
	pf.StringSliceVar(&f.schemes, "schemes", nil, "schemes (citron, ss-exact, ss-over, ss-under, server)")
	pf.BoolVar(&f.hotspot, "hotspot", false, "unscrambled Zipf ranks: the hottest starts are the lowest addresses (default: scrambled, as YCSB)")
	pf.Int64Var(&f.sameWordNS, "same-word-ns", 0, "the NIC's same-word atomic time in ns: a word's atomics start at least this far apart and use any free atomic unit (default 0: the cost model's, 250 ns through the unit the word hashes to)")
	cmd.AddCommand(citronMicroCmd(f), citronFastPathCmd(f), citronFalseConfCmd(f), citronKCmd(f), citronAtomicsCmd(f))
	return cmd
}

func runPoints(cmd *cobra.Command, f *citronFlags, name string, sw rangebench.Sweep) ([]rangebench.Result, error) {
	if f.quick {
		for i := range sw {
			sw[i].Warmup, sw[i].Duration = 20_000, 100_000
		}
	}
	start := time.Now()
	if f.hotspot {
		name += "-hotspot"
	}
	fmt.Fprintf(cmd.OutOrStdout(), "netlock bench citron %s: %d points, N=%d, hotspot=%v, %.0fus virtual each, seed %d (%s)\n",
		name, len(sw), f.n, f.hotspot, float64(sw[0].Duration)/1000, f.seed, time.Now().UTC().Format(time.RFC3339))
	rs, err := rangebench.RunSweep(cmd.Context(), sw, func(done, total int, r rangebench.Result) {
		fmt.Fprintf(os.Stderr, "  %d/%d %s L=%d alpha=%.2f threads=%d k=%d fast=%v: %.3f Mlocks/s (%v)\n", done, total, r.Scheme, r.L,
			r.Alpha, r.Threads, r.K, r.Fast, r.Throughput/1e6, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return nil, err
	}
	files, err := rangebench.WriteFiles(rs, f.out, name)
	if err != nil {
		return nil, err
	}
	for _, fl := range files {
		fmt.Fprintln(cmd.OutOrStdout(), "wrote", fl)
	}
	return rs, rangebench.WriteTable(cmd.OutOrStdout(), rs)
}

func citronMicroCmd(f *citronFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "micro",
		Short: "Fig. 6: every scheme, L = 1, 16, 256, Zipf 0.9, against client threads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rs, err := runPoints(cmd, f, "micro", rangebench.MicroSweep(f.options()))
			if err != nil {
				return err
			}
			png := filepath.Join(f.out, map[bool]string{false: "micro.png", true: "micro-hotspot.png"}[f.hotspot])
			if err := rangebench.PlotMicro(rs, png); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "wrote", png)
			return claims(cmd.OutOrStdout(), "Fig. 6 (section 4.2)", rangebench.MicroClaims(rs))
		},
	}
}

func citronAtomicsCmd(f *citronFlags) *cobra.Command {
	var sameWord []int64
	c := &cobra.Command{
		Use:   "atomics",
		Short: "Fig. 6 with unscrambled Zipf for several same-word atomic times: the paper's ratios against it",
		Long: `Runs the Fig. 6 microbenchmark (every scheme, L = 1, 16, 256, Zipf 0.9) with unscrambled Zipf
ranks (neighbouring hot ranges, as the paper's false conflicts of static segmentation imply) once per
same-word atomic time (--atomics, ns: one word's atomics start at least that far apart, at most
1e9/ns per second, while each atomic still holds one of 32 units for 250 ns; 0 is the default cost
model, where a word's atomics use the unit it hashes to), and prints the paper's Fig. 6 ratios at
each. Threads default to 6,24,96.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(sameWord) == 0 {
				return errors.New("bench citron atomics: no same-word atomic time")
			}
			for _, ns := range sameWord {
				if err := rangebench.CheckSameWord(ns); err != nil {
					return fmt.Errorf("bench citron atomics: %w", err)
				}
			}
			o := f.options()
			if len(f.threads) == 0 {
				o.Threads = []int{6, 24, 96}
				if f.quick {
					o.Threads = []int{6, 24}
				}
			}
			hot := f.hotspot
			f.hotspot = true
			defer func() { f.hotspot = hot }()
			rs, err := runPoints(cmd, f, "atomics", rangebench.AtomicSweep(o, sameWord))
			if err != nil {
				return err
			}
			png := filepath.Join(f.out, "atomics.png")
			if err := rangebench.PlotAtomics(rs, png); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "wrote", png)
			fmt.Fprintln(cmd.OutOrStdout())
			return rangebench.AtomicClaims(cmd.OutOrStdout(), rs)
		},
	}
	c.Flags().Int64SliceVar(&sameWord, "atomics", []int64{0, 250, 100, 75, 50, 25}, "same-word atomic times, ns (0: the default cost model)")
	return c
}

func citronFastPathCmd(f *citronFlags) *cobra.Command {
	var threads int
	var alphas []float64
	c := &cobra.Command{
		Use:   "fastpath",
		Short: "Fig. 9: CITRON with and without the fast path, L = 16 and 256, against the Zipf skew",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.quick && !cmd.Flags().Changed("alphas") {
				alphas = []float64{0, 0.9}
			}
			rs, err := runPoints(cmd, f, "fastpath", rangebench.FastPathSweep(f.options(), threads, alphas))
			if err != nil {
				return err
			}
			png := filepath.Join(f.out, map[bool]string{false: "fastpath.png", true: "fastpath-hotspot.png"}[f.hotspot])
			if err := rangebench.PlotFastPath(rs, png); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "wrote", png)
			return claims(cmd.OutOrStdout(), "Fig. 9 (section 4.4)", rangebench.FastPathClaims(rs))
		},
	}
	c.Flags().IntVar(&threads, "fp-threads", 96, "client threads (the paper: 96)")
	c.Flags().Float64SliceVar(&alphas, "alphas", []float64{0, 0.5, 0.7, 0.8, 0.9, 0.99}, "Zipf skews")
	return c
}

func citronFalseConfCmd(f *citronFlags) *cobra.Command {
	var trials int
	var ks []int
	var treeN uint64
	c := &cobra.Command{
		Use:   "falseconf",
		Short: "Fig. 11: false-conflict rate against the range length for several k (pure computation on the tree)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.quick && !cmd.Flags().Changed("trials") {
				trials = 2000
			}
			var lengths []uint64
			for L := uint64(1); L <= min(1<<20, treeN); L *= 4 {
				lengths = append(lengths, L)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "netlock bench citron falseconf: N=%d, k=%v, %d pairs per point, seed %d (%s)\n",
				treeN, ks, trials, f.seed, time.Now().UTC().Format(time.RFC3339))
			ps, err := rangebench.FalseConflictSweep(treeN, ks, lengths, trials, f.seed)
			if err != nil {
				return err
			}
			if err := rangebench.WriteFalseConflicts(cmd.OutOrStdout(), ps); err != nil {
				return err
			}
			if err := os.MkdirAll(f.out, 0o755); err != nil {
				return err
			}
			var kres []rangebench.Result
			if b, err := os.ReadFile(filepath.Join(f.out, "k.json")); err == nil {
				kres, _ = rangebench.ReadResults(b)
			}
			png := filepath.Join(f.out, "falseconf.png")
			if err := rangebench.PlotFalseConflicts(ps, kres, png); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "wrote", png)
			return claims(cmd.OutOrStdout(), "Fig. 11 (section 4.6)", rangebench.FalseConflictClaims(ps))
		},
	}
	c.Flags().IntVar(&trials, "trials", 100000, "pairs of requests per point")
	c.Flags().IntSliceVar(&ks, "k", []int{1, 2, 3, 5}, "values of k")
	c.Flags().Uint64Var(&treeN, "tree-n", 1<<28, "tree capacity (the paper: 2^28)")
	return c
}

func citronKCmd(f *citronFlags) *cobra.Command {
	var threads int
	var ks []int
	c := &cobra.Command{
		Use:   "k",
		Short: "CITRON throughput against L for several k (Zipf 0.9); run before falseconf to plot both",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := runPoints(cmd, f, "k", rangebench.KSweep(f.options(), threads, ks, []uint64{1, 16, 256, 4096}))
			return err
		},
	}
	c.Flags().IntVar(&threads, "k-threads", 96, "client threads")
	c.Flags().IntSliceVar(&ks, "k", []int{1, 2, 3}, "values of k")
	return c
}

func claims(w io.Writer, title string, cs []rangebench.Claim) error {
	fmt.Fprintln(w)
	return rangebench.WriteClaims(w, title, cs)
}
