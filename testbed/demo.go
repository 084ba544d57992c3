// Package testbed runs netlock end to end on one machine (`netlock demo`): by default the whole
// rack of package testbed/softrack in one process (the software switch running p4/netlock.p4, the
// controller over P4Runtime gRPC, lock servers, client nodes attached to switch ports), driven by
// microbenchmarks and a TPC-C-like lock workload; or, with Config.Loopback, lock servers and
// client workers on loopback UDP without a switch.
//
// Every acquisition a demo worker makes is recorded in a history (package history) and each
// phase's history is checked for violations of mutual exclusion and fencing-token order; every
// committed acquisition is attributed to the switch or to a server by the address its grant came
// from (sourceTracker).
package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/internal/latency"
)

// Phase names. Contended phases are "contended/N": all workers draw exclusive locks from a pool
// of N locks. "exclusive/N" is the exclusive phase with N private locks per worker (1..256;
// "exclusive" is exclusive/256).
const (
	PhaseShared    = "shared"
	PhaseExclusive = "exclusive"
	PhaseTPCCHigh  = "tpcc-high"
	PhaseTPCCLow   = "tpcc-low"
	// PhaseCrash: a client node takes crashLocks locks with a short lease and dies without
	// releasing them; the workers contend for the same locks and get them once the leases expire.
	PhaseCrash = "crash"
	// PhasePriority (NetLock Figure 12a): the first half of the rack's workers (client node by
	// client node) are tenant 1 at priority 0 (the highest), the others tenant 2 at priority 1, all on
	// priorityLocks exclusive locks; the report gives each class's throughput and latency
	// (PhaseResult.Classes).
	PhasePriority = "priority"
	priorityLocks = 8
	priorityBase  = 5_000_000
	// PhaseTenants and PhaseQuota (NetLock Figure 12b): 70% of the rack's workers are one tenant
	// and 30% another, on quotaLocks exclusive locks, without quotas (PhaseTenants: tenants 5
	// and 6) and with a quota of Config.TenantRate acquires per second each (PhaseQuota:
	// tenants 3 and 4, limited by the switch's meters and the servers' quotas alike).
	PhaseTenants    = "tenants"
	PhaseQuota      = "quota"
	quotaLocks      = 16
	quotaBase       = 6_000_000
	contendedPrefix = "contended/"
	exclusivePrefix = PhaseExclusive + "/"
	crashLocks      = 8
	crashLockBase   = 4_000_000

	// privateLocks is the number of private locks of a worker in the exclusive phase.
	privateLocks = 256
)

// DefaultPhases is the demo's default run: the microbenchmark (shared, exclusive uncontended, an
// exclusive contention sweep) then TPC-C at high and low contention, two priority classes on
// contended locks, two tenants of 7 and 3 parts without and with quotas, then a crashed holder.
var DefaultPhases = []string{PhaseShared, PhaseExclusive, "contended/64", "contended/8", "contended/1",
	PhaseTPCCHigh, PhaseTPCCLow, PhasePriority, PhaseTenants, PhaseQuota, PhaseCrash}

// Defaults of the rack (and, in parentheses in Config, of the loopback mode).
const (
	DefaultRackDuration = 5 * time.Second
	DefaultRackWarmup   = 1500 * time.Millisecond
	DefaultAllocPeriod  = 500 * time.Millisecond
	DefaultMinRate      = 50
	DefaultTenantRate   = 1000
)

// Config configures a demo run.
type Config struct {
	// Loopback runs lock servers and clients on loopback UDP without a switch or a controller
	// (the demo before the rack existed). Default: the rack.
	Loopback bool
	// Pipeline is what runs p4/netlock.p4 in the rack's switch (softrack.Config.Pipeline): auto (the
	// zero value), interp or gen; Generated is the generated pipeline auto and gen run
	// (softrack.Config.Generated).
	Pipeline  engine.Pipeline
	Generated engine.Generated
	// UDPPorts attaches the rack's hosts to the switch through UDP tunnels on loopback instead
	// of in-memory ports.
	UDPPorts bool
	// Duration is the measured length of each phase. Default DefaultRackDuration (loopback 2s).
	Duration time.Duration
	// Warmup is how long each phase's workload runs before its measured window (the controller
	// sees the phase's hot locks and moves them into the switch meanwhile); in the rack the
	// warm-up also lasts until the controller has completed two allocation periods in the phase
	// (at most ten times Warmup: a loaded machine slows the controller down). Its transactions
	// are checked but not counted. Default DefaultRackWarmup (loopback: none). Negative: none.
	Warmup time.Duration
	// Clients is the number of client nodes; each is one client.Client with one UDP socket.
	// Default 4. TPC-C uses 1 warehouse per client node (high contention) and 10 (low).
	Clients int
	// Workers is the number of closed-loop transaction workers per client node. Default 4.
	Workers int
	// Servers is the number of lock servers. Default 2.
	Servers int
	// Phases to run, in order. Default DefaultPhases.
	Phases []string
	// Lease is the lease clients ask for (and the servers' and the switch's default). Default 2s.
	Lease time.Duration
	// ThinkTime is how long a transaction works while it holds all its locks, between its last
	// grant and its first release (NetLock section 4.5 and Figure 14: with the round trips it is
	// the time a request occupies a switch queue slot). 0, the default, releases at once. The
	// wait is a timer, so on a loaded machine it lasts longer than asked (PhaseResult.Think
	// reports the mean measured).
	ThinkTime time.Duration
	// AllocPeriod is the controller's allocation period (DefaultAllocPeriod); Slots the switch
	// slots its allocator may use (0: all of them).
	AllocPeriod time.Duration
	Slots       int
	// TenantRate is the quota of each of PhaseQuota's two tenants, in acquires per second (the
	// switch's meter and each server's max_rate). Default DefaultTenantRate.
	TenantRate int
	// MinRate is the request rate (per second) below which the controller leaves a lock on its
	// server (DefaultMinRate; negative: 0, every lock the servers report is a candidate).
	MinRate float64
	// Mutation runs the controller's deliberately broken variant: negative controls only.
	Mutation ctlcore.Mutation
	// Seed seeds the workload generators. Default 1.
	Seed uint64
	// Progress, if set, receives progress: a live line updated in place when ProgressLive is set
	// (a terminal), else one line per finished phase.
	Progress     io.Writer
	ProgressLive bool
	// Started, if set, is called once the rack (or the loopback servers) runs, before the first
	// phase, with the report's description filled in and no phase yet: the command prints the
	// table's header there, ahead of the progress lines (Report.WriteHeader).
	Started func(Report)
	// Logger receives the servers' and the controller's logs. Default: discard.
	Logger *slog.Logger
}

func (c *Config) validate() error {
	if c.Duration == 0 {
		c.Duration = DefaultRackDuration
		if c.Loopback {
			c.Duration = 2 * time.Second
		}
	}
	switch {
	case c.Warmup < 0:
		c.Warmup = 0
	case c.Warmup == 0 && !c.Loopback:
		c.Warmup = DefaultRackWarmup
	}
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.TenantRate == 0 {
		c.TenantRate = DefaultTenantRate
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Servers == 0 {
		c.Servers = 2
	}
	if len(c.Phases) == 0 {
		c.Phases = DefaultPhases
	}
	if c.Lease == 0 {
		c.Lease = 2 * time.Second
	}
	if c.AllocPeriod == 0 {
		c.AllocPeriod = DefaultAllocPeriod
	}
	switch {
	case c.MinRate == 0:
		c.MinRate = DefaultMinRate
	case c.MinRate < 0:
		c.MinRate = 0
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Duration < 0:
		return errors.New("duration must be positive")
	case c.ThinkTime < 0:
		return errors.New("think time must not be negative")
	case c.Lease < 0 || c.AllocPeriod < 0 || c.Slots < 0:
		return errors.New("lease, allocation period and slots must not be negative")
	case c.Clients < 1 || c.Clients*10 > MaxWarehouses:
		return fmt.Errorf("clients %d: must be in 1..%d (10 warehouses per client at low contention)",
			c.Clients, MaxWarehouses/10)
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("workers %d: must be in 1..256", c.Workers)
	case c.Servers < 1 || c.Servers > 16:
		return fmt.Errorf("servers %d: must be in 1..16", c.Servers)
	case c.Loopback && (c.UDPPorts || c.Mutation != ctlcore.NoMutation || c.Pipeline != engine.PipelineAuto):
		return errors.New("udp ports, a pipeline choice and controller mutations need the rack, not loopback")
	}
	for _, p := range c.Phases {
		if _, err := parsePhase(p, c.Clients); err != nil {
			return err
		}
	}
	return nil
}

// PhaseResult is the outcome of one phase. Counts are of the measured window unless said
// otherwise.
type PhaseResult struct {
	Name     string        `json:"name"`
	Duration time.Duration `json:"duration_ns"`
	// Warmup is how long the phase ran before its measured window opened.
	Warmup   time.Duration   `json:"warmup_ns"`
	Txns     uint64          `json:"txns"`
	TxnRate  float64         `json:"txns_per_sec"`
	LockOps  uint64          `json:"lock_acquires"`
	LockRate float64         `json:"lock_acquires_per_sec"`
	Latency  latency.Latency `json:"txn_latency"`
	// SwitchGrants and ServerGrants are the committed transactions' acquisitions by who granted
	// them (the source address of the grant the client took); UnknownGrants those whose grant
	// the tracker did not see (should be 0). They add up to LockOps.
	SwitchGrants  uint64 `json:"switch_grants"`
	ServerGrants  uint64 `json:"server_grants"`
	UnknownGrants uint64 `json:"unknown_grants"`
	// Grants are the grants each server counted (lockserver's statistics, every grant it sent).
	Grants []uint64 `json:"grants_per_server"`
	// AllTxns counts the transactions committed in the whole phase, warm-up included, and
	// AllSwitchGrants their acquisitions the switch granted.
	AllTxns         uint64 `json:"txns_with_warmup"`
	AllSwitchGrants uint64 `json:"switch_grants_with_warmup"`
	Rejects         uint64 `json:"rejects"`
	Errors          uint64 `json:"errors"`
	// FirstError is the first error Errors counted ("" when none).
	FirstError string `json:"first_error,omitempty"`
	// LeaseLost counts transactions that lost a lease before they released (an error too).
	LeaseLost uint64 `json:"lease_lost"`
	// Expiries are the leases that ran out on the servers during the whole phase.
	Expiries uint64 `json:"lease_expiries"`
	Retransm int64  `json:"retransmits"`
	Workers  int    `json:"workers"`
	// LocksUsed describes the phase's locks.
	LocksUsed string `json:"locks"`
	// SwitchLocks is the number of the phase's locks (those it granted, warm-up included) in the
	// switch at the end of the phase, not counting locks an earlier phase left there; MovesIn and
	// MovesOut the controller's migrations during the whole phase (rack only).
	SwitchLocks int    `json:"switch_locks"`
	MovesIn     uint64 `json:"moves_in"`
	MovesOut    uint64 `json:"moves_out"`
	// Periods counts the controller's allocation periods during the whole phase.
	Periods uint64 `json:"alloc_periods"`
	// Events is the number of history events checked (the whole phase); Violations what the
	// check found (mutual exclusion, double grants, token reuse, fencing order).
	Events     int      `json:"history_events"`
	Violations []string `json:"violations"`
	// ThinkTime is the think time asked for; Think the mean measured over the committed
	// transactions (a timer on a loaded machine overshoots).
	ThinkTime time.Duration `json:"think_time_ns"`
	Think     time.Duration `json:"think_measured_ns"`
	// Classes splits the measured window by the workers' class in a phase whose workers differ
	// in tenant and priority (PhasePriority); nil in the others.
	Classes []ClassResult `json:"classes,omitempty"`
}

// ClassResult is one class of workers' share of a phase: its tenant and priority, its committed
// transactions in the measured window and their latency, and its transactions over the whole
// phase (a class that starves commits none).
type ClassResult struct {
	Name     string  `json:"name"`
	Tenant   uint16  `json:"tenant"`
	Priority uint8   `json:"priority"`
	Workers  int     `json:"workers"`
	Txns     uint64  `json:"txns"`
	TxnRate  float64 `json:"txns_per_sec"`
	AllTxns  uint64  `json:"txns_with_warmup"`
	Rejects  uint64  `json:"rejects"`
	// AllRejects counts the class's refused requests in the whole phase, warm-up included.
	AllRejects uint64          `json:"rejects_with_warmup"`
	Latency    latency.Latency `json:"txn_latency"`
}

// SwitchShare is the part of the committed acquisitions the switch granted (0 with none).
func (p PhaseResult) SwitchShare() float64 {
	if t := p.SwitchGrants + p.ServerGrants + p.UnknownGrants; t > 0 {
		return float64(p.SwitchGrants) / float64(t)
	}
	return 0
}

// ServerShare is the part of the committed acquisitions the servers granted.
func (p PhaseResult) ServerShare() float64 {
	if t := p.SwitchGrants + p.ServerGrants + p.UnknownGrants; t > 0 {
		return float64(p.ServerGrants) / float64(t)
	}
	return 0
}

// Report is the outcome of a demo run.
type Report struct {
	// Mode is "rack" or "loopback"; Ports how the rack's hosts reach the switch.
	Mode  string `json:"mode"`
	Ports string `json:"ports,omitempty"`
	// Pipeline is what ran p4/netlock.p4 in the switch: the generated pipeline's name
	// (engine.Switch.GeneratedPipeline) or "interpreter" (rack only).
	Pipeline string        `json:"pipeline,omitempty"`
	Servers  []string      `json:"servers"`
	Clients  int           `json:"clients"`
	Workers  int           `json:"workers_per_client"`
	Phases   []PhaseResult `json:"phases"`
	// Controller is the primary controller's counters at the end (rack only).
	Controller *ctlcore.Stats `json:"controller,omitempty"`
}

// Violations is the number of history violations over every phase.
func (r Report) Violations() int {
	n := 0
	for _, p := range r.Phases {
		n += len(p.Violations)
	}
	return n
}

type phaseSpec struct {
	name       string
	locks      string
	warehouses int // tpcc
	pool       int // contended
	private    int // exclusive: locks per worker
	classes    []workerClass
}

// workerClass is the tenant and priority of a class of workers: the rack's workers (numbered
// client node by client node) from the fraction from of them on, up to the next class's.
type workerClass struct {
	name     string
	from     float64
	tenant   uint16
	priority uint8
}

// classOf returns the index in s.classes of the class of worker (0-based, unique in the rack)
// among total workers; -1 if the phase has no classes.
func (s phaseSpec) classOf(worker, total int) int {
	k := -1
	for i, c := range s.classes {
		if float64(worker) >= c.from*float64(total) {
			k = i
		}
	}
	return k
}

// classOpts returns the client options of class k's requests (none for -1).
func (s phaseSpec) classOpts(k int) []client.Option {
	if k < 0 {
		return nil
	}
	c := s.classes[k]
	return []client.Option{client.WithTenant(c.tenant), client.WithPriority(c.priority)}
}

func parsePhase(p string, clients int) (phaseSpec, error) {
	s := phaseSpec{name: p}
	switch p {
	case PhaseShared:
		s.locks = "16 shared"
	case PhaseExclusive:
		s.locks, s.private = "private per worker", privateLocks
	case PhaseTPCCHigh:
		s.warehouses = clients
	case PhaseTPCCLow:
		s.warehouses = 10 * clients
	case PhaseCrash:
		s.locks = fmt.Sprintf("%d, holder crashed", crashLocks)
	case PhaseTenants, PhaseQuota:
		s.locks = fmt.Sprintf("%d excl, 7:3 tenants", quotaLocks)
		t := uint16(5)
		if p == PhaseQuota {
			t = 3
		}
		s.classes = []workerClass{{name: "seven", from: 0, tenant: t, priority: 0},
			{name: "three", from: 0.7, tenant: t + 1, priority: 0}}
	case PhasePriority:
		s.locks = fmt.Sprintf("%d excl, 2 classes", priorityLocks)
		s.classes = []workerClass{{name: "high", from: 0, tenant: 1, priority: 0},
			{name: "low", from: 0.5, tenant: 2, priority: 1}}
	default:
		var n int
		if _, err := fmt.Sscanf(p, exclusivePrefix+"%d", &n); err == nil && strings.HasPrefix(p, exclusivePrefix) {
			if n < 1 || n > privateLocks || p != fmt.Sprintf("%s%d", exclusivePrefix, n) {
				return s, fmt.Errorf("phase %q: want exclusive/N with N in 1..%d", p, privateLocks)
			}
			s.private = n
			s.locks = fmt.Sprintf("%d private per worker", n)
			break
		}
		if _, err := fmt.Sscanf(p, contendedPrefix+"%d", &n); err != nil || n < 1 {
			return s, fmt.Errorf("unknown phase %q (want shared, exclusive, exclusive/N, contended/N, tpcc-high, tpcc-low, priority, tenants, quota, crash)", p)
		}
		s.pool = n
		s.locks = fmt.Sprintf("%d exclusive", n)
	}
	if s.warehouses > 0 {
		s.locks = fmt.Sprintf("%d warehouses", s.warehouses)
	}
	return s, nil
}

// Run starts the rack (or, with cfg.Loopback, servers on loopback), runs every phase and returns
// the report. A history violation is in the report, not an error: the caller decides.
func Run(ctx context.Context, cfg Config) (rep Report, err error) {
	if err := cfg.validate(); err != nil {
		return Report{}, fmt.Errorf("demo: %w", err)
	}
	var rg *rig
	if cfg.Loopback {
		rg, err = startLoopback(&cfg)
	} else {
		rg, err = startRack(ctx, &cfg)
	}
	if err != nil {
		return Report{}, fmt.Errorf("demo: %w", err)
	}
	defer func() {
		if cerr := rg.close(); cerr != nil && err == nil {
			err = fmt.Errorf("demo: shutdown: %w", cerr)
		}
	}()
	rep = Report{Mode: "loopback", Servers: rg.addrs, Clients: cfg.Clients, Workers: cfg.Workers}
	if !cfg.Loopback {
		rep.Mode, rep.Ports, rep.Pipeline = "rack", "in-memory ports", rg.pipeline
		if cfg.UDPPorts {
			rep.Ports = "UDP tunnels"
		}
	}
	if cfg.Started != nil {
		cfg.Started(rep)
	}
	for i, name := range cfg.Phases {
		spec, _ := parsePhase(name, cfg.Clients)
		res, err := runPhase(ctx, &cfg, spec, uint64(i), rg)
		if err != nil {
			return rep, err
		}
		rep.Phases = append(rep.Phases, res)
		if ctx.Err() != nil {
			break
		}
	}
	if rg.controller != nil {
		if st, ok := rg.controller(); ok {
			rep.Controller = &st
		}
	}
	return rep, nil
}

// WriteTable prints the report as a table: WriteHeader, then WriteRows.
func (r Report) WriteTable(w io.Writer) {
	r.WriteHeader(w)
	r.WriteRows(w)
}

// WriteHeader prints what ran: the rack or the loopback servers, and the clients.
func (r Report) WriteHeader(w io.Writer) {
	if r.Mode == "rack" {
		fmt.Fprintf(w, "netlock demo: the rack in one process: p4/netlock.p4 on the software switch (%s, pipeline %s), the"+
			" controller over P4Runtime gRPC,\n%s (%v), %s x %s\n",
			r.Ports, r.Pipeline, plural(len(r.Servers), "lock server"), r.Servers, plural(r.Clients, "client node"),
			plural(r.Workers, "worker"))
	} else {
		fmt.Fprintf(w, "netlock demo: %s (%v), %s x %s, loopback UDP, no switch\n",
			plural(len(r.Servers), "lock server"), r.Servers, plural(r.Clients, "client node"), plural(r.Workers, "worker"))
	}
}

// WriteRows prints the table's column names, a row per phase, the controller's counts and the
// legend.
func (r Report) WriteRows(w io.Writer) {
	fmt.Fprintf(w, "\n%-12s %-18s %8s %10s %9s %9s %7s %7s %6s %7s %6s %8s %7s %6s\n", "phase", "locks", "txn/s",
		"acquires/s", "p50", "p99", "switch", "server", "in-sw", "rejects", "errors", "expiries", "retrans", "viol")
	for _, p := range r.Phases {
		fmt.Fprintf(w, "%-12s %-18s %8.0f %10.0f %9s %9s %6.1f%% %6.1f%% %6d %7d %6d %8d %7d %6d\n", p.Name, p.LocksUsed,
			p.TxnRate, p.LockRate, round(p.Latency.P50), round(p.Latency.P99), 100*p.SwitchShare(), 100*p.ServerShare(),
			p.SwitchLocks, p.Rejects, p.Errors, p.Expiries, p.Retransm, len(p.Violations))
	}
	for _, p := range r.Phases {
		for _, c := range p.Classes {
			fmt.Fprintf(w, "\n%s: class %s (tenant %d, priority %d, %s): %.0f txn/s, p50 %s, p99 %s, %s; %d transactions over the whole phase",
				p.Name, c.Name, c.Tenant, c.Priority, plural(c.Workers, "worker"), c.TxnRate, round(c.Latency.P50),
				round(c.Latency.P99), plural(c.Rejects, "reject"), c.AllTxns)
		}
		if p.ThinkTime > 0 {
			fmt.Fprintf(w, "\n%s: think time %v asked, %v measured (mean per committed transaction)", p.Name,
				p.ThinkTime, round(p.Think))
		}
		if p.UnknownGrants > 0 {
			fmt.Fprintf(w, "\n%s: %d acquisitions whose grant was not seen on the wire (counted in neither share)",
				p.Name, p.UnknownGrants)
		}
		if p.Errors > 0 {
			fmt.Fprintf(w, "\n%s: %s, the first: %s", p.Name, plural(p.Errors, "error"), p.FirstError)
		}
		for _, v := range p.Violations {
			fmt.Fprintf(w, "\n%s: VIOLATION %s", p.Name, v)
		}
	}
	if c := r.Controller; c != nil {
		fmt.Fprintf(w, "\ncontroller: %s, %s moved into the switch, %d out, %s aborted, %s (%s)",
			plural(c.Periods, "allocation period"), plural(c.MovesIn, "lock"), c.MovesOut, plural(c.MovesAborted, "move"),
			plural(c.Sweeps, "lease sweep"), plural(c.ForceReleases, "forced release"))
	}
	fmt.Fprintln(w, "\ntxn/s: committed transactions in the measured window (a txn takes its locks in ascending order,"+
		" strict 2PL);\np50/p99: per transaction; switch/server: the share of the committed acquisitions each granted"+
		" (by the\nsource of the grant); in-sw: the phase's locks in the switch at its end; expiries: leases that ran"+
		" out on\nthe servers; retrans: client re-sends, including the periodic re-send of acquires that wait in a queue;"+
		"\nviol: history violations (mutual exclusion, token order) over the whole phase, warm-up included.")
}

// plural writes n and noun, with an s unless n is 1.
func plural[N ~int | ~uint64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func round(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	case d >= time.Microsecond:
		return d.Round(100 * time.Nanosecond).String()
	}
	return d.String()
}
