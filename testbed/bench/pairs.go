package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Locker is a lock service as a client library sees it: Acquire blocks until lock is held
// exclusively and returns the function that releases it.
type Locker interface {
	Acquire(ctx context.Context, lock uint32) (release func(context.Context) error, err error)
}

// PairConfig configures [RunPairs].
type PairConfig struct {
	// Concurrency is the number of goroutines; goroutine g loops on lock LockBase+g, so no two
	// contend. 0 means 64.
	Concurrency int
	// Duration is the measured interval. 0 means 1 s.
	Duration time.Duration
	// Warmup runs the load before the measured interval without counting it.
	Warmup time.Duration
	// LockBase is the first lock id.
	LockBase uint32
}

// PairResult is what [RunPairs] measured. A pair is one acquire followed by its release.
type PairResult struct {
	Name        string        `json:"name"`
	Concurrency int           `json:"concurrency"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	// Pairs is the number of pairs completed in the measured interval.
	Pairs       uint64  `json:"pairs"`
	PairsPerSec float64 `json:"pairs_per_sec"`
	// Pair is the latency of acquire+release; Acquire and Release of each call.
	Pair    Latency `json:"pair_latency"`
	Acquire Latency `json:"acquire_latency"`
	Release Latency `json:"release_latency"`
}

// RunPairs drives l with cfg.Concurrency goroutines, each acquiring and releasing its own lock in
// a loop, and reports pairs per second and latencies. The first error of any call stops the run
// and is returned.
func RunPairs(ctx context.Context, name string, l Locker, cfg PairConfig) (PairResult, error) {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 64
	}
	if cfg.Duration <= 0 {
		cfg.Duration = time.Second
	}
	res := PairResult{Name: name, Concurrency: cfg.Concurrency, Elapsed: cfg.Duration}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	from, to := cfg.Warmup, cfg.Warmup+cfg.Duration
	type worker struct {
		pairs          uint64
		pair, acq, rel Histogram
		err            error
	}
	ws := make([]worker, cfg.Concurrency)
	var wg sync.WaitGroup
	for g := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &ws[g]
			lock := cfg.LockBase + uint32(g)
			for ctx.Err() == nil {
				t0 := time.Since(start)
				if t0 >= to {
					return
				}
				release, err := l.Acquire(ctx, lock)
				if err != nil {
					w.err = fmt.Errorf("acquire %d: %w", lock, err)
					cancel()
					return
				}
				t1 := time.Since(start)
				// Release with a fresh context: a lock taken is always given back, even when the
				// run is being cancelled.
				rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				err = release(rctx)
				rcancel()
				if err != nil {
					w.err = fmt.Errorf("release %d: %w", lock, err)
					cancel()
					return
				}
				t2 := time.Since(start)
				if t2 >= from && t2 < to {
					w.pairs++
					w.pair.Record(t2 - t0)
					w.acq.Record(t1 - t0)
					w.rel.Record(t2 - t1)
				}
			}
		}()
	}
	wg.Wait()
	var pair, acq, rel Histogram
	var errs []error
	for i := range ws {
		w := &ws[i]
		res.Pairs += w.pairs
		pair.Merge(&w.pair)
		acq.Merge(&w.acq)
		rel.Merge(&w.rel)
		if w.err != nil && !errors.Is(w.err, context.Canceled) {
			errs = append(errs, w.err)
		}
	}
	res.PairsPerSec = float64(res.Pairs) / cfg.Duration.Seconds()
	res.Pair, res.Acquire, res.Release = pair.Summary(), acq.Summary(), rel.Summary()
	if len(errs) > 0 {
		return res, fmt.Errorf("bench: %s: %w", name, errors.Join(errs...))
	}
	return res, nil
}
