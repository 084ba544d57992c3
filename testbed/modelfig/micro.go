package modelfig

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/rackmodel"
	"github.com/netlock-go/netlock/wire"
)

// The microbenchmarks of the paper's section 6.2: Figure 8 (the lock switch on shared locks, on
// exclusive locks without contention and with contention) and Figure 9 (the lock switch against
// one lock server with 1 to 8 cores). Each request stream is a closed-loop worker taking one lock
// per transaction (acquire, release); the workloads are the testbed's phases: shared (16 shared
// locks), exclusive/1 (one private lock per worker: no contention) and contended/N (every worker
// draws from the same N exclusive locks).

// Fig89Workers is the number of request streams (closed-loop workers, one request outstanding
// each) per client machine in Figures 8 and 9: with every answer from the switch a worker does a
// lock (acquire and release) every two round trips, about 14µs, so that 128 of them offer about 18
// million requests per second, the paper's DPDK client ("one client server can generate up to 18
// MRPS", section 5).
const Fig89Workers = 128

// The sweeps of Figures 8 and 9.
var (
	// Fig8Clients are the client machines of Figure 8(a) and (b): the paper uses up to 12.
	Fig8Clients = []int{1, 2, 4, 8, 12}
	// Fig8Locks are the numbers of locks of Figure 8(c) and (d), at Fig8Clients' largest.
	Fig8Locks = []int{1, 10, 100, 1000, 5000}
	// Fig9Cores are the cores of the lock server of Figure 9.
	Fig9Cores = []int{1, 2, 4, 8}
)

// Fig9Clients are Figure 9's client machines and Fig9Locks its contended locks (the paper's).
const (
	Fig9Clients = 10
	Fig9Locks   = 5000
)

// Paper's numbers (section 6.2).
const (
	// PaperFig8P50, PaperFig8Mean, PaperFig8P99 and PaperFig8P999 are the acquire latencies of
	// Figure 8(a), shared locks, whatever the throughput.
	PaperFig8P50  = 8 * time.Microsecond
	PaperFig8Mean = 7100 * time.Nanosecond
	PaperFig8P99  = 12 * time.Microsecond
	PaperFig8P999 = 14 * time.Microsecond
	// PaperFig9 is the lock switch's throughput over the lock server's (Figure 9).
	PaperFig9 = 7.0
)

// The panels of Figure 8 and the workloads of Figure 9 (Result.Variant).
const (
	MicroShared    = "shared locks"
	MicroExclusive = "exclusive, no contention"
	MicroContended = "exclusive, contention"
)

// Fig9Switch labels Figure 9's lock switch.
const Fig9Switch = "switch"

// microAllocPeriod is the time between the controller's allocation periods in a microbenchmark's
// warm-up: each period moves in at most the 64 hottest locks each server reports
// (wire.MaxLockStats), so a point needs locks / (64 x servers) of them.
const microAllocPeriod = 100 * time.Microsecond

// handoff is about the time between two grants of a contended switch lock (a release's way from
// its client to the switch and the grant's to the next: PaperParams' round trip), for the
// durations of the contended points.
const handoff = 7500 * time.Nanosecond

// microPhase returns the testbed phase of a microbenchmark and its number of locks for a rack
// of workers request streams.
func microPhase(variant string, workers, locks int) (string, int) {
	switch variant {
	case MicroShared:
		return testbed.PhaseShared, 16
	case MicroExclusive:
		return testbed.PhaseExclusive + "/1", workers
	}
	return fmt.Sprintf("contended/%d", locks), locks
}

// contention is the operator's default c_i for the controller (rackmodel.Params.Contention,
// ctlcore.Config.DefaultContention), so that it gives a lock the region its workload needs: on shared locks every worker may hold
// at once, and a shared holder that releases out of order keeps its slot until those before it
// release (docs/dataplane.md), so the largest region; on contended locks four times the workers
// per lock, at least 4; none without contention (the controller's default c_i of 1 fits). At
// most what lets every lock fit in the pool (a lock also has its one-slot region at level 1).
func contention(variant string, workers, locks, maxRegion, pool int) int {
	c := 0
	switch variant {
	case MicroShared:
		c = maxRegion
	case MicroContended:
		c = min(maxRegion, max(4, 4*((workers+locks-1)/locks)))
	}
	return min(c, max(1, pool/locks-1))
}

// micro is one point of Figure 8 or 9: the workload on rack p, with every lock in the switch
// (the controller's allocation periods place them in the warm-up) or on the servers.
func (o Options) micro(p rackmodel.Params, variant string, locks int, inSwitch bool, label string) Spec {
	phase, n := microPhase(variant, p.Clients*p.Workers, locks)
	p.Contention = contention(variant, p.Clients*p.Workers, n, p.MaxRegion, poolSlots(p))
	s := Spec{Params: p, Phase: phase, Strategy: alloc.StrategyKnapsack, AllocPeriod: microAllocPeriod,
		Warmup: 5 * microAllocPeriod, Settle: 200 * time.Microsecond, Window: time.Millisecond, Variant: variant, Label: label}
	if inSwitch {
		s.Slots = poolSlots(p)
		per := wire.MaxLockStats * p.Servers
		s.Warmup = time.Duration((n+per-1)/per+8) * microAllocPeriod
		if variant == MicroContended {
			// A lock's queue turns over once every streams-per-lock handoffs, each about a round
			// trip: warm up and measure at least two of these cycles.
			cycle := time.Duration((p.Clients*p.Workers+n-1)/n) * handoff
			s.Warmup += 2 * cycle
			s.Window = max(s.Window, 2*cycle)
		}
	} else {
		// A saturated server's round trips are long (every stream waits for all the others):
		// several of them before the window.
		// Its closed loop moves in waves of one round trip (1.1ms on one core): a window of many.
		s.AllocPeriod, s.Warmup, s.Window = time.Millisecond, 10*time.Millisecond, 20*time.Millisecond
	}
	return o.spec(s)
}

// microRack returns the rack of Figure 8 or 9: clients client machines of Fig89Workers request
// streams each; with Quick, the clients and workers of o.Params.
func (o Options) microRack(clients int) rackmodel.Params {
	p := o.Params
	if !o.Quick {
		p.Clients, p.Workers = clients, Fig89Workers
	}
	return p
}

// Fig8 is the paper's Figure 8: the lock switch (every lock in the switch) on shared locks and on
// exclusive locks without contention against the client machines (the offered load), and on
// exclusive locks with contention against the number of locks, at the most clients.
func Fig8(o Options) *Figure {
	o.fill()
	clients, locks := Fig8Clients, Fig8Locks
	if o.Quick {
		clients, locks = []int{1, o.Params.Clients}, []int{1, 100}
	}
	p := o.microRack(clients[len(clients)-1])
	f := &Figure{Name: "fig8", Title: "Figure 8: the lock switch on shared and exclusive locks, without and with contention",
		Params: p}
	for _, v := range []string{MicroShared, MicroExclusive} {
		for _, c := range clients {
			q := o.microRack(c)
			q.Clients = c
			f.Specs = append(f.Specs, o.micro(q, v, 0, true, v+", "+plural(c, "client")))
		}
	}
	for _, n := range locks {
		f.Specs = append(f.Specs, o.micro(p, MicroContended, n, true, MicroContended+", "+plural(n, "lock")))
	}
	return f
}

// Fig9 is the paper's Figure 9: the lock switch against one lock server with 1 to 8 cores (every
// lock on it), on shared locks, exclusive locks without contention and exclusive locks with
// contention (Fig9Locks), with Fig9Clients client machines. The switch's rack is the 8-core
// server's with every lock moved into the switch.
func Fig9(o Options) *Figure {
	o.fill()
	cores := Fig9Cores
	locks := Fig9Locks
	if o.Quick {
		cores, locks = []int{1, 8}, 100
	}
	p := o.microRack(Fig9Clients)
	p.Servers = 1
	f := &Figure{Name: "fig9", Title: "Figure 9: the lock switch against a lock server with 1 to 8 cores", Params: p}
	for _, v := range []string{MicroShared, MicroExclusive, MicroContended} {
		for _, k := range cores {
			q := p
			q.ServerCores = k
			f.Specs = append(f.Specs, o.micro(q, v, locks, false, fig9Server(v, k)))
		}
		q := p
		q.ServerCores = cores[len(cores)-1]
		f.Specs = append(f.Specs, o.micro(q, v, locks, true, v+", "+Fig9Switch))
	}
	return f
}

func fig9Server(v string, cores int) string { return v + ", server, " + plural(cores, "core") }

// plural returns "n things" ("1 thing").
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

// byVariant returns the results of one variant in order.
func (f *Figure) byVariant(v string) []Result {
	var out []Result
	for _, r := range f.Results {
		if r.Variant == v {
			out = append(out, r)
		}
	}
	return out
}

// locksOf returns the number of locks of a microbenchmark result.
func locksOf(r Result) int {
	var n int
	if _, err := fmt.Sscanf(r.Phase, "contended/%d", &n); err == nil {
		return n
	}
	if r.Phase == testbed.PhaseShared {
		return 16
	}
	return r.Clients * r.Workers
}

func switchShare(r Result) float64 { return 100 * r.SwitchRPS / max(r.RPS, 1) }

func us(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e3) }

func (f *Figure) fig8(w io.Writer) {
	for _, v := range []string{MicroShared, MicroExclusive} {
		fmt.Fprintf(w, "**%s** (every lock in the switch):\n\n", v)
		fmt.Fprintln(w, "| client machines | request streams | MRPS | switch share | acquire p50 / mean / p99 / p99.9 (µs) | overflows to q2 |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---|---:|")
		for _, r := range f.byVariant(v) {
			fmt.Fprintf(w, "| %d | %d | %s | %.1f%% | %s / %s / %s / %s | %d |\n", r.Clients, r.Clients*r.Workers, mrps(r.RPS),
				switchShare(r), us(r.Acquire.P50), us(r.Acquire.Mean), us(r.Acquire.P99), us(r.Acquire.P999), r.Counters.Overflows)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "**%s** (every lock in the switch", MicroContended)
	if rs := f.byVariant(MicroContended); len(rs) > 0 {
		fmt.Fprintf(w, ", %d client machines, %d request streams", rs[0].Clients, rs[0].Clients*rs[0].Workers)
	}
	fmt.Fprintln(w, "):\n\n| locks | default contention | window | MRPS | switch share | acquire p50 / mean / p99 / p99.9 (µs) | overflows to q2 | retransmissions |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---|---:|---:|")
	for _, r := range f.byVariant(MicroContended) {
		fmt.Fprintf(w, "| %d | %d | %v | %s | %.1f%% | %s / %s / %s / %s | %d | %d |\n", locksOf(r), r.Contention, r.Window,
			mrps(r.RPS), switchShare(r), us(r.Acquire.P50), us(r.Acquire.Mean), us(r.Acquire.P99), us(r.Acquire.P999),
			r.Counters.Overflows, r.Counters.Retransmits)
	}
	fmt.Fprintf(w, "\nThe paper (12 client machines): shared locks at every throughput median %v, mean %v, p99 %v, "+
		"p99.9 %v, the switch not saturated; exclusive locks without contention the same; with contention "+
		"the throughput is low with few locks and grows with them, the latency more than 100 µs under high "+
		"contention and a few µs under low.\n", PaperFig8P50, PaperFig8Mean, PaperFig8P99, PaperFig8P999)
	if err := f.CheckShape(); err != nil {
		fmt.Fprintf(w, "\n**Shape check failed**: %v\n", err)
	} else {
		fmt.Fprintln(w, "\nShape check (CheckShape): passed.")
	}
}

func (f *Figure) fig9(w io.Writer) {
	var cores []int
	for _, k := range distinctInts(f.Results, func(r Result) int { return r.ServerCores }) {
		if f.find(fig9Server(f.Results[0].Variant, k), -1) != nil {
			cores = append(cores, k)
		}
	}
	if len(cores) == 0 {
		return
	}
	var head, sep strings.Builder
	for _, k := range cores {
		fmt.Fprintf(&head, " server, %s |", plural(k, "core"))
		sep.WriteString("---:|")
	}
	fmt.Fprintf(w, "| workload |%s switch (share of grants) | switch / %d-core server | paper |\n", head.String(), cores[len(cores)-1])
	fmt.Fprintf(w, "|---|%s---:|---:|---:|\n", sep.String())
	for _, v := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
		fmt.Fprintf(w, "| %s |", v)
		var best float64
		for _, k := range cores {
			r := f.find(fig9Server(v, k), -1)
			if r == nil {
				fmt.Fprint(w, " |")
				continue
			}
			best = r.RPS
			fmt.Fprintf(w, " %s |", mrps(r.RPS))
		}
		s := f.find(v+", "+Fig9Switch, -1)
		if s == nil {
			fmt.Fprintln(w, " | | |")
			continue
		}
		fmt.Fprintf(w, " %s (%.1f%%) | **%s** | %.0fx |\n", mrps(s.RPS), switchShare(*s), ratio(s.RPS, best), PaperFig9)
	}
	fmt.Fprintln(w, "\nMRPS: locks granted per second (acquire and release: two requests at a lock server).")
	if err := f.CheckShape(); err != nil {
		fmt.Fprintf(w, "\n**Shape check failed**: %v\n", err)
	} else {
		fmt.Fprintln(w, "\nShape check (CheckShape): passed.")
	}
}

// Errors of CheckShape.
var (
	ErrNotInSwitch  = errors.New("a lock-switch point was not granted by the switch")
	ErrCores        = errors.New("the lock server's throughput does not grow with its cores")
	ErrSwitchSlower = errors.New("the lock switch is not faster than the lock server with the most cores")
	ErrContention   = errors.New("contention does not cost throughput and latency")
)

// CheckShape checks the shapes Figures 8 and 9 must have whatever the parameters, given that one
// server core is the bottleneck of Figure 9's smallest server: in Figure 8 every point is
// granted by the switch (at least 99% of the grants), and fewer locks give less throughput and
// more latency (the fewest locks against the most); in Figure 9 the switch grants its points,
// the server's throughput grows with its cores (the most against one core, and never falls by
// more than 5%), and the switch is faster than the server with the most cores.
func (f *Figure) CheckShape() error {
	inSwitch := func(r Result) error {
		if switchShare(r) < 99 {
			return fmt.Errorf("%w: %s: %.1f%%", ErrNotInSwitch, r.Label, switchShare(r))
		}
		return nil
	}
	switch f.Name {
	case "fig8":
		for _, r := range f.Results {
			if err := inSwitch(r); err != nil {
				return err
			}
		}
		rs := f.byVariant(MicroContended)
		if len(rs) < 2 {
			return nil
		}
		few, many := rs[0], rs[len(rs)-1]
		if few.RPS >= many.RPS || few.Acquire.Mean <= many.Acquire.Mean {
			return fmt.Errorf("%w: %d locks %s MRPS mean %v, %d locks %s MRPS mean %v", ErrContention, locksOf(few),
				mrps(few.RPS), few.Acquire.Mean, locksOf(many), mrps(many.RPS), many.Acquire.Mean)
		}
	case "fig9":
		for _, v := range distinctStrings(f.Results, func(r Result) string { return r.Variant }) {
			var srv []Result
			var sw *Result
			for _, r := range f.byVariant(v) {
				if strings.HasSuffix(r.Label, Fig9Switch) {
					sw = &r
				} else {
					srv = append(srv, r)
				}
			}
			if len(srv) < 2 || sw == nil {
				continue
			}
			if err := inSwitch(*sw); err != nil {
				return err
			}
			for i := 1; i < len(srv); i++ {
				if srv[i].RPS < 0.95*srv[i-1].RPS {
					return fmt.Errorf("%w: %s: %s MRPS, %s: %s MRPS", ErrCores, srv[i-1].Label, mrps(srv[i-1].RPS),
						srv[i].Label, mrps(srv[i].RPS))
				}
			}
			if last := srv[len(srv)-1]; last.RPS <= srv[0].RPS {
				return fmt.Errorf("%w: %s: %s MRPS, %s: %s MRPS", ErrCores, srv[0].Label, mrps(srv[0].RPS), last.Label,
					mrps(last.RPS))
			} else if sw.RPS <= last.RPS {
				return fmt.Errorf("%w: %s: %s MRPS, %s: %s MRPS", ErrSwitchSlower, sw.Label, mrps(sw.RPS), last.Label,
					mrps(last.RPS))
			}
		}
	}
	return nil
}

// microFooter states how the points of Figure 8 or 9 ran.
func (f *Figure) microFooter(w io.Writer) {
	if len(f.Results) == 0 {
		return
	}
	r := f.Results[0]
	for _, x := range f.Results {
		if x.Slots > 0 {
			r = x
			break
		}
	}
	srv := ""
	for _, x := range f.Results {
		if x.Slots == 0 {
			srv = fmt.Sprintf(" (the lock-server points: %v warm-up, %v measured)", x.Warmup, x.Window)
			break
		}
		if x.Variant == MicroContended && x.Window > r.Window {
			srv = " (the contended points longer, two turns of a lock's queue at least: the window column)"
			break
		}
	}
	fmt.Fprintf(w, "\nEach point: one lock per transaction (acquire, release), %d request streams (closed-loop workers) "+
		"per client machine; the lock-switch points warm up with the controller's (ctlcore) allocation period "+
		"every %v on the quiesced rack until every lock is in the switch (knapsack over the whole pool), the "+
		"lock-server points with every lock on the server; %v settling, %v measured (virtual time)%s; seed %d. "+
		"Every run was checked: 0 violations of exclusion or fencing.\n", r.Workers, r.AllocPeriod, r.Settle, r.Window, srv, r.Seed)
}
