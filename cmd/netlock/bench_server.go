package main

import (
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/netlock-go/netlock/testbed/bench"
)

func init() { benchCmd.AddCommand(newBenchServerCmd()) }

func newBenchServerCmd() *cobra.Command {
	var opts bench.VsEchoOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "server",
		Short: "Lock server vs a minimal batched UDP echo server, same load, same run (target ratio >= 0.7)",
		Long: `Starts, in this process on loopback, the lock server and a minimal batched UDP echo server
written the same way (recvmmsg/sendmmsg batches of 64, one goroutine per SO_REUSEPORT socket), then
runs the same closed-loop load generator against each in alternating rounds: workers with their own
UDP socket, each keeping --outstanding requests in flight, acquiring and releasing uncontended
exclusive locks. Prints median throughput (one op = one request and its answer), latency
percentiles and the ratio server/echo.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := bench.RunServerVsEcho(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			printServerVsEcho(cmd.OutOrStdout(), &res)
			return nil
		},
	}
	f := cmd.Flags()
	addRunFlags(f, &opts.RunOptions, "load generator goroutines, each with its own UDP socket",
		"requests each worker keeps in flight", "lock server shards and echo sockets (default GOMAXPROCS)")
	f.BoolVar(&asJSON, "json", false, "print the result as JSON")
	return cmd
}

func fmtLatency(d time.Duration) string {
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}

func printServerVsEcho(w io.Writer, r *bench.VsEchoResult) {
	o := r.Options
	fmt.Fprintf(w, "netlock bench server: %d rounds x %v (+%v warmup), %d workers x %d outstanding, %d shards/sockets, GOMAXPROCS=%d\n",
		o.Rounds, o.Duration, o.Warmup, o.Workers, o.Outstanding, o.Shards, runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "%-12s %12s %10s %10s %10s %10s %8s\n", "", "ops/s", "p50", "p99", "p999", "max", "retrans")
	for _, row := range []struct {
		name string
		res  bench.LoadResult
	}{{"lock server", r.Server}, {"echo", r.Echo}} {
		l := row.res.Latency
		fmt.Fprintf(w, "%-12s %12.0f %10s %10s %10s %10s %8d\n", row.name, row.res.OpsPerSec,
			fmtLatency(l.P50), fmtLatency(l.P99), fmtLatency(l.P999), fmtLatency(l.Max), row.res.Retransmits)
	}
	fmt.Fprintf(w, "runs (ops/s): server")
	for _, x := range r.ServerRuns {
		fmt.Fprintf(w, " %.0f", x.OpsPerSec)
	}
	fmt.Fprintf(w, "; echo")
	for _, x := range r.EchoRuns {
		fmt.Fprintf(w, " %.0f", x.OpsPerSec)
	}
	fmt.Fprintln(w)
	for _, x := range append(r.ServerRuns, r.EchoRuns...) {
		if p := x.Check(); p != "" {
			fmt.Fprintf(w, "warning: run against %s: %s\n", x.Target, p)
		}
	}
	fmt.Fprintf(w, "ratio per round:")
	for _, x := range r.RoundRatios {
		fmt.Fprintf(w, " %.2f", x)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "ratio server/echo: %.2f (target >= %.2f: %s)\n", r.Ratio, r.Target, metString(r.Ratio >= r.Target))
}

func metString(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// addRunFlags registers the flags of the options every comparison shares; the help of the
// concurrency flags differs between comparisons.
func addRunFlags(f *pflag.FlagSet, o *bench.RunOptions, workers, outstanding, shards string) {
	f.DurationVar(&o.Duration, "duration", 2*time.Second, "measured length of each run")
	f.DurationVar(&o.Warmup, "warmup", 0, "unmeasured load before each run (default duration/10)")
	f.IntVar(&o.Workers, "workers", 4, workers)
	f.IntVar(&o.Outstanding, "outstanding", 16, outstanding)
	f.IntVar(&o.Rounds, "rounds", 3, "runs against each side, alternated; the median is reported")
	f.IntVar(&o.Shards, "shards", 0, shards)
}
