package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/testbed/bench"
)

// benchCmd is the parent of every benchmark; each benchmark registers itself on it from the init
// function of its own file (bench_*.go).
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Run a benchmark and print results as ratios against a reference measured in the same run",
}

func init() {
	addCommand(benchCmd)
	benchCmd.AddCommand(newBenchCoreCmd(), newBenchAllCmd())
}

// coreTarget is the lock-core target of docs/targets.md, pairs per second per core.
const coreTarget = 10e6

// CoreResult is the lock-core benchmark's outcome.
type CoreResult struct {
	PairsPerSec float64 `json:"pairs_per_sec"`
	NsPerPair   float64 `json:"ns_per_pair"`
	AllocsPerOp int64   `json:"allocs_per_pair"`
	Pairs       int     `json:"pairs"`
	Target      float64 `json:"target_pairs_per_sec"`
}

// runCoreBench measures lockcore.Pairs on one goroutine with testing.Benchmark (b.N scaled to about
// a second), the same unit as BenchmarkAcquireRelease.
func runCoreBench() (CoreResult, error) {
	c, err := lockcore.New(lockcore.Config{})
	if err != nil {
		return CoreResult{}, err
	}
	out := lockcore.Pairs(c, 4096, 1024, make([]lockcore.Effect, 0, 8))
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		out = lockcore.Pairs(c, b.N, 1024, out)
	})
	if r.N == 0 {
		return CoreResult{}, errors.New("core benchmark did not run")
	}
	ns := float64(r.T.Nanoseconds()) / float64(r.N)
	return CoreResult{PairsPerSec: 1e9 / ns, NsPerPair: ns, AllocsPerOp: r.AllocsPerOp(), Pairs: r.N, Target: coreTarget}, nil
}

func printCore(w io.Writer, r CoreResult) {
	fmt.Fprintf(w, "lock core: %.2fM acquire+release pairs/s on one goroutine (%.1f ns/pair, %d allocs/pair); "+
		"target >= %.0fM: %s\n", r.PairsPerSec/1e6, r.NsPerPair, r.AllocsPerOp, r.Target/1e6,
		verdict(r.PairsPerSec >= r.Target && r.AllocsPerOp == 0))
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func newBenchCoreCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "core",
		Short: "Lock core: acquire+release pairs per second per core and allocations",
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := runCoreBench()
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), r)
			}
			printCore(cmd.OutOrStdout(), r)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// AllResult gathers the three headline benchmarks of issue 2.
type AllResult struct {
	Date   string             `json:"date"`
	Core   CoreResult         `json:"core"`
	VsEcho bench.VsEchoResult `json:"server_vs_echo"`
	Redis  *bench.RedisResult `json:"netlock_vs_redis,omitempty"`
	// RedisSkipped says why the Redis comparison did not run (redis-server not installed).
	RedisSkipped string `json:"redis_skipped,omitempty"`
}

func newBenchAllCmd() *cobra.Command {
	var asJSON bool
	var dur time.Duration
	var rounds int
	cmd := &cobra.Command{
		Use:   "all",
		Short: "Lock core, lock server vs batched UDP echo, netlock vs Redis locks: the three ratios",
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			res := AllResult{Date: time.Now().UTC().Format(time.DateOnly)}
			var err error
			if res.Core, err = runCoreBench(); err != nil {
				return fmt.Errorf("core: %w", err)
			}
			if res.VsEcho, err = bench.RunServerVsEcho(ctx, bench.VsEchoOptions{RunOptions: bench.RunOptions{Duration: dur, Rounds: rounds}}); err != nil {
				return fmt.Errorf("server vs echo: %w", err)
			}
			// The lock server runs as a child process, as redis-server does (netlock bench redis).
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("redis: the lock server's binary: %w", err)
			}
			rr, err := bench.RunRedis(ctx, bench.RedisOptions{RunOptions: bench.RunOptions{Duration: dur, Rounds: rounds},
				ServerBin: exe})
			switch {
			case errors.Is(err, bench.ErrNoRedis):
				res.RedisSkipped = err.Error()
			case err != nil:
				return fmt.Errorf("redis: %w", err)
			default:
				res.Redis = &rr
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "netlock benchmarks, %s, GOMAXPROCS=%d\n\n", res.Date, runtimeProcs())
			printCore(w, res.Core)
			v := res.VsEcho
			fmt.Fprintf(w, "lock server / batched UDP echo: %.2f (server %.0f ops/s p99 %v, echo %.0f ops/s p99 %v); target >= %.1f: %s\n",
				v.Ratio, v.Server.OpsPerSec, v.Server.Latency.P99, v.Echo.OpsPerSec, v.Echo.Latency.P99, v.Target,
				verdict(v.Ratio >= v.Target))
			if r := res.Redis; r != nil {
				fmt.Fprintf(w, "netlock / Redis locks: %.2fx (netlock %.0f pairs/s p99 %v, redis %.0f pairs/s p99 %v); target >= %.0fx: %s\n",
					r.Ratio, r.NetLock.PairsPerSec, r.NetLock.Pair.P99, r.Redis.PairsPerSec, r.Redis.Pair.P99,
					r.Target, verdict(r.Ratio >= r.Target))
			} else {
				fmt.Fprintf(w, "netlock / Redis locks: skipped: %s\n", res.RedisSkipped)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&asJSON, "json", false, "print JSON")
	f.DurationVar(&dur, "duration", time.Second, "length of each measured run")
	f.IntVar(&rounds, "rounds", 7, "alternated rounds per comparison (the median run is reported; 3-round medians are unreliable on a shared machine)")
	return cmd
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
