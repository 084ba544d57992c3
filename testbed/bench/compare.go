package bench

import (
	"context"
	"fmt"
	"net/netip"
	"runtime"
	"slices"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// RunOptions are the options every comparison shares: how long and how often to measure, and the
// client concurrency.
type RunOptions struct {
	// Duration is the measured length of each run. 0 means 2 s.
	Duration time.Duration `json:"duration_ns"`
	// Warmup precedes each run's measured interval. 0 means Duration/10.
	Warmup time.Duration `json:"warmup_ns"`
	// Workers and Outstanding set the client concurrency. 0 means 4 and 16. Against servers: the
	// load generator's workers, each with its own socket and Outstanding requests in flight
	// ([LoadConfig]). Against Redis: Workers*Outstanding goroutines each loop acquire+release on
	// their own lock; netlock uses Workers client sockets shared by Outstanding goroutines each,
	// Redis a pool of Workers*Outstanding connections.
	Workers     int `json:"workers"`
	Outstanding int `json:"outstanding"`
	// Rounds is the number of runs against each side, alternated. 0 means 3.
	Rounds int `json:"rounds"`
	// Shards is the lock server's shard count (and the echo server's socket count). 0 means
	// GOMAXPROCS.
	Shards int `json:"shards"`
}

func (o *RunOptions) setDefaults() {
	if o.Duration <= 0 {
		o.Duration = 2 * time.Second
	}
	if o.Warmup <= 0 {
		o.Warmup = o.Duration / 10
	}
	if o.Workers <= 0 {
		o.Workers = 4
	}
	if o.Outstanding <= 0 {
		o.Outstanding = 16
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.Shards <= 0 {
		o.Shards = runtime.GOMAXPROCS(0)
	}
}

// VsEchoOptions configures a comparison of a UDP lock server with the [EchoServer].
type VsEchoOptions struct {
	RunOptions
}

// VsEchoResult is the outcome of a server-versus-echo comparison.
type VsEchoResult struct {
	Options VsEchoOptions `json:"options"`
	// Server and Echo are the median runs (by ops/s) of each; ServerRuns and EchoRuns all runs in
	// the order they ran.
	Server     LoadResult   `json:"server"`
	Echo       LoadResult   `json:"echo"`
	ServerRuns []LoadResult `json:"server_runs"`
	EchoRuns   []LoadResult `json:"echo_runs"`
	// Ratio is the median server throughput over the median echo throughput. RoundRatios are
	// the ratios of the two runs of each round (run back to back, so they share the machine's load
	// of the moment).
	Ratio       float64   `json:"ratio"`
	RoundRatios []float64 `json:"round_ratios"`
	// Target is the ratio docs/targets.md asks for.
	Target float64 `json:"target"`
}

// VsEchoTarget is the ratio of lock-server to echo-server throughput the design asks for.
const VsEchoTarget = 0.7

// CompareWithEcho runs an [EchoServer] with opts.Shards sockets next to the UDP server at
// server, and runs the same load ([RunLoad]) against each, alternating (A B, B A, ...), with
// disjoint lock ranges so that no run sees another's locks. The caller owns the server.
func CompareWithEcho(ctx context.Context, server netip.AddrPort, opts VsEchoOptions) (VsEchoResult, error) {
	opts.setDefaults()
	res := VsEchoResult{Options: opts, Target: VsEchoTarget}
	echo, err := NewEcho(EchoConfig{Listen: "127.0.0.1:0", Sockets: opts.Shards})
	if err != nil {
		return res, err
	}
	ectx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- echo.Run(ectx) }()
	defer func() {
		stop()
		<-done
	}()

	locksPerRun := uint32(opts.Workers * opts.Outstanding)
	run := 0
	load := func(target netip.AddrPort) (LoadResult, error) {
		run++
		return RunLoad(ctx, LoadConfig{Target: target, Workers: opts.Workers,
			Outstanding: opts.Outstanding, Duration: opts.Duration, Warmup: opts.Warmup,
			LockBase: 1 + uint32(run)*locksPerRun, Mode: wire.Exclusive})
	}
	for r := 0; r < opts.Rounds; r++ {
		order := []bool{true, false} // server first on even rounds, echo first on odd ones
		if r%2 == 1 {
			order = []bool{false, true}
		}
		for _, isServer := range order {
			if isServer {
				lr, err := load(server)
				if err != nil {
					return res, fmt.Errorf("bench: server run %d: %w", r+1, err)
				}
				res.ServerRuns = append(res.ServerRuns, lr)
			} else {
				lr, err := load(echo.Addr())
				if err != nil {
					return res, fmt.Errorf("bench: echo run %d: %w", r+1, err)
				}
				res.EchoRuns = append(res.EchoRuns, lr)
			}
		}
	}
	for i := range res.EchoRuns {
		if res.EchoRuns[i].OpsPerSec > 0 {
			res.RoundRatios = append(res.RoundRatios, res.ServerRuns[i].OpsPerSec/res.EchoRuns[i].OpsPerSec)
		}
	}
	res.Server, res.Echo = medianLoad(res.ServerRuns), medianLoad(res.EchoRuns)
	if res.Echo.OpsPerSec > 0 {
		res.Ratio = res.Server.OpsPerSec / res.Echo.OpsPerSec
	}
	return res, nil
}

// medianLoad returns the run with the median throughput (the lower middle one for an even count).
func medianLoad(runs []LoadResult) LoadResult {
	return medianBy(runs, func(r LoadResult) float64 { return r.OpsPerSec })
}

// medianPairs is medianLoad for pair results.
func medianPairs(runs []PairResult) PairResult {
	return medianBy(runs, func(r PairResult) float64 { return r.PairsPerSec })
}

// medianBy returns the run with the median rate (the lower middle one for an even count; the
// zero value for none). runs is left as it is.
func medianBy[T any](runs []T, rate func(T) float64) T {
	if len(runs) == 0 {
		var zero T
		return zero
	}
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b T) int {
		switch ra, rb := rate(a), rate(b); {
		case ra < rb:
			return -1
		case ra > rb:
			return 1
		}
		return 0
	})
	return s[(len(s)-1)/2]
}

// Check reports the sanity problems of a load run: answers that matched no request, malformed
// answers, cycles left unfinished, rejects of uncontended locks. It returns "" for a clean run.
func (r *LoadResult) Check() string {
	var s string
	add := func(n uint64, what string) {
		if n != 0 {
			if s != "" {
				s += ", "
			}
			s += fmt.Sprintf("%d %s", n, what)
		}
	}
	add(r.Unexpected, "unexpected answers")
	add(r.Malformed, "malformed answers")
	add(r.Unfinished, "unfinished cycles")
	add(r.Rejects, "rejects")
	if r.Ops == 0 {
		if s != "" {
			s += ", "
		}
		s += "no answers"
	}
	return s
}
