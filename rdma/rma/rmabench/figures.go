package rmabench

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Series is one line of a panel: its label and the points it is measured at.
type Series struct {
	Label  string
	Points []Config
}

// Panel is one plot of a figure: its series share the x axis (P, or F_W for the writer-fraction
// sweep) and the metric.
type Panel struct {
	Title string
	// X is "procs" or "fw".
	X string
	// Metric is "throughput" (M ops/s) or "latency" (mean of one acquire+release, us, computed
	// as P / throughput for closed loops without think time).
	Metric string
	Series []Series
}

// Figure is one of the paper's figures.
type Figure struct {
	Name   string // fig3, fig4a, ...
	Title  string
	Panels []Panel
}

// Scale chooses the process counts and values of the sweeps.
type Scale struct {
	// Procs are the process counts of the MCS figure (Fig. 3) and of Fig. 5; RWProcs those of
	// the RMA-RW parameter sweeps (Fig. 4).
	Procs, RWProcs []int
	// FWProcs are the process counts of the writer-fraction sweep.
	FWProcs []int
	// MinWrites is every point's Config.MinWrites.
	MinWrites int
	Seed      int64
}

// PaperScale is the paper's range (P up to 1024, 16 processes per node).
func PaperScale() Scale {
	return Scale{Procs: []int{4, 8, 16, 32, 64, 128, 256, 512, 1024}, RWProcs: []int{16, 64, 256, 1024},
		FWProcs: []int{256, 1024}, MinWrites: DefaultMinWrites, Seed: 1}
}

// QuickScale is a CI-size range.
func QuickScale() Scale {
	return Scale{Procs: []int{8, 32, 64}, RWProcs: []int{32, 64}, FWProcs: []int{64}, MinWrites: 40, Seed: 1}
}

func sweep(label string, ps []int, mk func(p int) Config) Series {
	s := Series{Label: label}
	for _, p := range ps {
		s.Points = append(s.Points, mk(p))
	}
	return s
}

// Figures returns the paper's figures at scale sc.
func Figures(sc Scale) []Figure {
	var figs []Figure
	// Fig. 3: RMA-MCS vs D-MCS vs foMPI-Spin, latency and the four throughput benchmarks.
	f3 := Figure{Name: "fig3", Title: "Fig. 3: RMA-MCS vs D-MCS vs spin lock"}
	mcs := []string{RMAMCS, DMCS, Spin}
	lat := Panel{Title: "LB: latency", X: "procs", Metric: "latency"}
	for _, a := range mcs {
		lat.Series = append(lat.Series, sweep(a, sc.Procs, func(p int) Config {
			return Config{Alg: a, Bench: ECSB, Procs: p, Seed: sc.Seed}
		}))
	}
	f3.Panels = append(f3.Panels, lat)
	for _, b := range Benchmarks {
		pn := Panel{Title: fmt.Sprintf("%s: throughput", benchName[b]), X: "procs", Metric: "throughput"}
		for _, a := range mcs {
			pn.Series = append(pn.Series, sweep(a, sc.Procs, func(p int) Config {
				return Config{Alg: a, Bench: b, Procs: p, Seed: sc.Seed}
			}))
		}
		f3.Panels = append(f3.Panels, pn)
	}
	figs = append(figs, f3)

	rw := func(p int, fw float64, tl []int, tdc, tr int) Config {
		return Config{Alg: RMARW, Bench: ECSB, Procs: p, WriteFrac: fw, TL: tl, TDC: tdc, TR: tr, Seed: sc.Seed}
	}
	// Fig. 4a: T_DC, from 8 counters per node to one every 4th node; F_W = 0.2%.
	f4a := Panel{Title: "T_DC (F_W=0.2%)", X: "procs", Metric: "throughput"}
	for _, tdc := range []int{2, 4, 8, 16, 32, 64} {
		var ps []int
		for _, p := range sc.RWProcs {
			if p >= tdc {
				ps = append(ps, p)
			}
		}
		f4a.Series = append(f4a.Series, sweep(tdcLabel(tdc), ps, func(p int) Config { return rw(p, 0.002, nil, tdc, 0) }))
	}
	// Fig. 4b: the product of T_L,i (T_W) with F_W = 25%.
	f4b := Panel{Title: "T_W = T_L,1 x T_L,2 (F_W=25%)", X: "procs", Metric: "throughput"}
	for _, tl := range [][]int{{2, 5}, {4, 25}, {20, 50}} {
		f4b.Series = append(f4b.Series, sweep(fmt.Sprintf("T_W=%d (T_L=%d,%d)", tl[0]*tl[1], tl[0], tl[1]), sc.RWProcs,
			func(p int) Config { return rw(p, 0.25, tl, 0, 0) }))
	}
	// Fig. 4c/4d: the split of T_W = 1000 between the machine and the node levels.
	f4c := Panel{Title: "T_L,2-T_L,1 at T_W=1000 (F_W=25%)", X: "procs", Metric: "throughput"}
	f4d := Panel{Title: "T_L,2-T_L,1 at T_W=1000: latency", X: "procs", Metric: "latency"}
	for _, tl := range [][]int{{100, 10}, {40, 25}, {20, 50}} {
		s := sweep(fmt.Sprintf("%d-%d", tl[1], tl[0]), sc.RWProcs, func(p int) Config { return rw(p, 0.25, tl, 0, 0) })
		f4c.Series = append(f4c.Series, s)
		f4d.Series = append(f4d.Series, s)
	}
	// Fig. 4e/4f: T_R with F_W = 0.2%, then 2% and 5%. The paper's values (1000 to 8000, the
	// text names 1000 and 2000) are joined by smaller ones: a writer's reset empties every
	// counter, so T_R acts only when a counter sees about T_R reader entries between two
	// writer phases, at most about (1/F_W)/counters: 34 to 470 measured at F_W = 0.2% for
	// P = 1024 to 16 (the counts of each point show it).
	trs := TRSweep
	f4e := Panel{Title: "T_R (F_W=0.2%)", X: "procs", Metric: "throughput"}
	for _, tr := range trs {
		f4e.Series = append(f4e.Series, sweep(fmt.Sprintf("T_R=%d", tr), sc.RWProcs, func(p int) Config { return rw(p, 0.002, nil, 0, tr) }))
	}
	f4f := Panel{Title: "T_R x F_W", X: "procs", Metric: "throughput"}
	for _, fw := range []float64{0.02, 0.05} {
		for _, tr := range []int{16, 1000, 4000} { // 16: a value that acts at every P here
			f4f.Series = append(f4f.Series, sweep(fmt.Sprintf("F_W=%g%% T_R=%d", fw*100, tr), sc.RWProcs,
				func(p int) Config { return rw(p, fw, nil, 0, tr) }))
		}
	}
	figs = append(figs, Figure{Name: "fig4", Title: "Fig. 4: RMA-RW parameters", Panels: []Panel{f4a, f4b, f4c, f4d, f4e, f4f}})

	// The writer fraction F_W, RMA-RW and the central lock, at fixed P.
	fws := []float64{0, 0.002, 0.02, 0.05, 0.1, 0.25, 0.5, 1}
	fwf := Figure{Name: "fw", Title: "Writer fraction F_W"}
	for _, p := range sc.FWProcs {
		pn := Panel{Title: fmt.Sprintf("F_W at P=%d", p), X: "fw", Metric: "throughput"}
		for _, a := range []string{RMARW, CentralRW} {
			s := Series{Label: a}
			for _, fw := range fws {
				s.Points = append(s.Points, Config{Alg: a, Bench: ECSB, Procs: p, WriteFrac: fw, Seed: sc.Seed})
			}
			pn.Series = append(pn.Series, s)
		}
		fwf.Panels = append(fwf.Panels, pn)
	}
	figs = append(figs, fwf)

	// Fig. 5: RMA-RW vs the central RMA reader-writer lock at F_W = 0.2%, 2%, 5%.
	f5 := Figure{Name: "fig5", Title: "Fig. 5: RMA-RW vs a central RMA RW lock"}
	for _, fw := range []float64{0.002, 0.02, 0.05} {
		pn := Panel{Title: fmt.Sprintf("F_W=%g%%", fw*100), X: "procs", Metric: "throughput"}
		for _, a := range []string{RMARW, CentralRW} {
			pn.Series = append(pn.Series, sweep(a, sc.Procs, func(p int) Config {
				return Config{Alg: a, Bench: ECSB, Procs: p, WriteFrac: fw, Seed: sc.Seed}
			}))
		}
		f5.Panels = append(f5.Panels, pn)
	}
	figs = append(figs, f5)
	for _, f := range figs {
		for _, pn := range f.Panels {
			for _, se := range pn.Series {
				for i := range se.Points {
					se.Points[i].MinWrites = sc.MinWrites
				}
			}
		}
	}
	return figs
}

// TRSweep are the T_R values of Fig. 4e.
var TRSweep = []int{16, 64, 250, 1000, 2000, 4000, 8000}

var benchName = map[string]string{ECSB: "ECSB", SOB: "SOB", WCSB: "WCSB", WARB: "WARB"}

func tdcLabel(tdc int) string {
	if tdc <= DefaultPPN {
		return fmt.Sprintf("T_DC=%d (%d/node)", tdc, DefaultPPN/tdc)
	}
	return fmt.Sprintf("T_DC=%d (1 per %d nodes)", tdc, tdc/DefaultPPN)
}

// key identifies a measured configuration (points shared by several panels run once). One
// Results holds one scale's points, so MinWrites (the same for all) is not part of it.
func key(c Config) string {
	k := fmt.Sprintf("%s/%s/%d/%d/%g/%v/%d/%d/%d/%d/%d", c.Alg, c.Bench, c.Procs, c.ProcsPerNode, c.WriteFrac, c.TL, c.TDC, c.TR,
		c.Warmup, c.Duration, c.Seed)
	if c.Rate > 0 {
		k += fmt.Sprintf("/rate=%g", c.Rate)
	}
	return k
}

// Results maps configurations to their measurements.
type Results map[string]Result

// Get returns the result of c.
func (rs Results) Get(c Config) (Result, bool) { r, ok := rs[key(c)]; return r, ok }

// RunFigures measures every distinct point of figs, parallel at a time (at least 1), calling
// progress (if set) after each.
func RunFigures(ctx context.Context, figs []Figure, parallel int, progress func(done, total int, r Result)) (Results, error) {
	var todo []Config
	seen := map[string]bool{}
	for _, f := range figs {
		for _, p := range f.Panels {
			for _, s := range p.Series {
				for _, c := range s.Points {
					if k := key(c); !seen[k] {
						seen[k] = true
						todo = append(todo, c)
					}
				}
			}
		}
	}
	// Big points first, so that parallel runs finish together.
	slices.SortStableFunc(todo, func(a, b Config) int { return b.Procs - a.Procs })
	parallel = max(parallel, 1)
	out := Results{}
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	done := 0
	for _, c := range todo {
		if err := ctx.Err(); err != nil {
			first = err
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(c Config) {
			defer wg.Done()
			defer func() { <-sem }()
			r, err := Run(c)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
				}
				return
			}
			out[key(c)] = r
			done++
			if progress != nil {
				progress(done, len(todo), r)
			}
		}(c)
	}
	wg.Wait()
	return out, first
}
