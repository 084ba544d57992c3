package rackmodel

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/netlock-go/netlock/alloc"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/internal/des"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// Config configures one rack.
type Config struct {
	// Params are the machines and costs; zero fields take PaperParams' values.
	Params Params
	// Phase is the workload: a testbed phase ("tpcc-low", "tpcc-high", "contended/N", "shared",
	// "exclusive"), drawn by testbed.Workload as the wall-clock demo draws it. Default tpcc-low.
	// Source, if set, replaces it.
	Phase string
	// Source, if set, returns the source of worker w's transactions (0-based over the rack:
	// client c's worker i is c*Workers+i).
	Source func(w int) Source
	// Seed seeds the workload, the losses and duplications of Params.Loss and Params.Dup, and the
	// servers' instance ids (the model has no other randomness).
	Seed uint64
	// Alloc is how the controller allocates the switch's memory (ctlcore.Config's Strategy,
	// Slots and Seed). Slots 0: never (every lock stays on the servers).
	Alloc AllocSpec
	// Tenants are the per-tenant quotas the controller installs in the switch
	// (ctlcore.Config.Tenants: the tenant_quota table and its meters, at bring-up). A
	// transaction's tenant is Txn.Tenant.
	Tenants []ctlcore.Tenant
	// Backup adds a second controller, a backup that takes over when the primary dies
	// (KillController).
	Backup bool
	// Record keeps every client observation in a history.Recorder (Rack.History) and the
	// rack's acceptance order (Rack.AcceptOrder), for history.Check with every rule. Memory
	// grows with the run (about 300 bytes per acquisition); the online checker (Rack.Violations)
	// runs either way.
	Record bool
	// Logger receives the model's logs and the controllers' decisions (Debug for per-lock
	// ones). Default: discard.
	Logger *slog.Logger
	// TestingKnobs break the rack on purpose: the negative controls (knobs.go).
	TestingKnobs TestingKnobs
	// NetChain, if set, makes the rack the paper's NetChain baseline: the switch runs
	// p4/netchain/netchain.p4, no controller, the servers idle, the clients retry rejected
	// acquires (netchain.go). Alloc must be zero.
	NetChain *NetChain
	// ClientC, if set, makes a netlock rack's clients run NetLock's own client code's rule for a
	// run of a transaction (client.NetChainRollback, with client.NetChainPolicy.Burst as
	// client.c: client.NetChainClientC): a run not granted every lock by its deadline is rolled
	// back and run again after the rule's wait. A netlock switch or server queues an acquire
	// instead of rejecting it, so the rule's Resend never applies. Its Rule must be
	// NetChainRollback (a burst without a deadline can deadlock). A NetChain rack takes its rule
	// from NetChain.Policy.
	ClientC *client.NetChainPolicy
}

// AllocSpec says how the controller allocates the switch's memory.
type AllocSpec struct {
	// Strategy is Algorithm 3 (alloc.StrategyKnapsack) or the random strawman.
	Strategy alloc.Strategy
	// Slots is the switch memory the allocator may use (at most the pool less the controller's
	// two staging slots per server). 0: Allocate does nothing (every lock stays on the servers);
	// with Params.AllocPeriod the controller's own periods then use that whole part of the pool
	// (ctlcore's default).
	Slots int
	// Seed seeds the random strategy.
	Seed uint64
}

// Addresses and switch ports of the rack: the switch is 10.0.0.1, the controllers 10.0.0.2 (UDP
// port 9000+i) on port ctlPort; server s (0-based; number s+1 for the switch and the controller)
// is 10.0.1.(s+1) on port serverPort0+s and its standby on standbyPort0+s; client machine c is
// 10.0.2.(c+1) on port 1+c, its worker w has UDP port workerPort0+w.
const (
	serverPort0  = 301
	standbyPort0 = 401
	ctlPort      = 250
	workerPort0  = 40000
	ctlUDPPort0  = 9000
)

var (
	switchIP  = netip.MustParseAddr("10.0.0.1")
	switchMAC = macFor(switchIP)
	ctlIP     = netip.MustParseAddr("10.0.0.2")
	epoch     = time.Unix(1_700_000_000, 0) // virtual time 0 as a time.Time (histories, the engine, ctlcore)
)

func macFor(a netip.Addr) udpframe.MAC {
	b := a.As4()
	return udpframe.MAC{2, 0, b[0], b[1], b[2], b[3]}
}

func serverAddr(s int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(s + 1)}), wire.Port)
}

func clientIP(c int) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 2, byte(c + 1)}) }

// link is one direction of a host-switch cable: frames are serialized one after the other.
type link struct {
	free int64
	prop int64 // propagation delay
}

// transmit sends n bytes that are ready at t and returns when they have arrived at the far end.
func (r *Rack) transmit(l *link, t int64, n int) int64 {
	start := max(t, l.free)
	l.free = start + int64(float64((n+20)*8)/r.p.LinkGbps+0.5)
	return l.free + l.prop
}

// host is a machine's NIC port on a switch port.
type host interface {
	// receive takes a frame that has passed the host's NIC and stack, at the current time.
	receive(frame []byte)
	links() (up, down *link)
	// lossy reports whether the host's link loses and duplicates frames (Params.Loss, Dup).
	lossy() bool
}

// Rack is the rack model: the switch running p4/netlock.p4 on the engine, the lock servers
// (srvcore), the client machines and their workers (clientcore), the controller (ctlcore), on
// one discrete-event kernel (internal/des). It is not safe for concurrent use.
type Rack struct {
	cfg     Config
	p       Params
	k       *des.Sim
	log     *slog.Logger
	key     uint64
	rng     *rand.Rand // losses and duplications
	sw      *vswitch
	mach    []*machine
	servers []*server // every server process: servers 0..Servers-1, then their standbys
	clients []*clientHost
	workers []*worker
	ctls    []*ctl
	ctlHost *ctlHost
	ports   map[int]host
	served  map[netip.Addr]int // the switch port each server address is routed to (OutOfBandAdmin)

	check  *history.Checker
	nobs   int
	rec    *history.Recorder
	accept *history.AcceptLog

	stopping bool // workers finish their transaction and start no new one
	stats    Counters
	series   *series
	lat      latencies
	events   []Event
	cand     map[uint32]struct{} // every lock a server reported to the controller (AdminStats)
	nc       *ncState            // Config.NetChain's state; nil for a netlock rack
	// run is the clients' rule for a run of a transaction (NetChain.Policy or ClientC); nil:
	// client.Txn's (no deadline, a lock at a time).
	run *runRule
}

// ErrNoBringUp is returned by New when the controller does not bring the switch up.
var ErrNoBringUp = errors.New("rackmodel: the controller did not bring the switch up")

// New builds a rack: the switch without a program, the servers, the clients, the controllers.
// The controller (controlplane/ctlcore) then brings the switch up as it brings up a switch that
// just booted (pipeline, tables, staging entries, cookie, controller term); New returns once it
// runs. Every lock starts on the servers; the workers are idle until Start.
func New(cfg Config) (*Rack, error) {
	if err := cfg.Params.validate(); err != nil {
		return nil, err
	}
	if cfg.Phase == "" {
		cfg.Phase = testbed.PhaseTPCCLow
	}
	if cfg.Seed == 0 {
		cfg.Seed = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p := cfg.Params
	r := &Rack{cfg: cfg, p: p, k: des.New(0), log: cfg.Logger, key: 0x6e6c_7672_6163_6b00 ^ cfg.Seed,
		rng: rand.New(rand.NewPCG(cfg.Seed, 0x1055)), ports: map[int]host{}, served: map[netip.Addr]int{},
		check: history.NewChecker(history.Options{MaxViolations: maxViolations}), cand: map[uint32]struct{}{}}
	if cfg.Record {
		r.rec, r.accept = &history.Recorder{}, &history.AcceptLog{}
	}
	r.sw = &vswitch{r: r, up: true}
	switch {
	case cfg.NetChain != nil && cfg.ClientC != nil:
		return nil, errors.New("rackmodel: ClientC is for netlock racks; a NetChain rack's rule is NetChain.Policy")
	case cfg.NetChain != nil:
		r.nc = newNCState(*cfg.NetChain, cfg.Seed)
		r.run = &runRule{p: r.nc.cfg.Policy, draw: r.nc.jitter}
	case cfg.ClientC != nil:
		if cfg.ClientC.Rule != client.NetChainRollback {
			return nil, fmt.Errorf("rackmodel: ClientC %v: want the rollback rule", *cfg.ClientC)
		}
		rng := rand.New(rand.NewPCG(cfg.Seed, 0x6363))
		r.run = &runRule{p: *cfg.ClientC, draw: func(n int64) int64 { return rng.Int64N(max(n, 0) + 1) }}
	}
	for s := 0; s < p.Servers; s++ {
		r.mach = append(r.mach, &machine{idx: s, up: true, cpu: make([]int64, p.ServerCores)})
	}
	for s := 0; s < p.Servers; s++ {
		if err := r.addServer(s, false); err != nil {
			return nil, err
		}
	}
	if p.Standbys {
		for s := 0; s < p.Servers; s++ {
			if err := r.addServer(s, true); err != nil {
				return nil, err
			}
		}
	}
	for c := 0; c < p.Clients; c++ {
		h, err := newClientHost(r, c)
		if err != nil {
			return nil, err
		}
		r.clients = append(r.clients, h)
		r.workers = append(r.workers, h.workers...)
		r.ports[h.port] = h
	}
	if cfg.NetChain != nil {
		// NetChain's switch has no control plane but its routes: no controller.
		if cfg.Alloc.Slots != 0 || cfg.Backup {
			return nil, errors.New("rackmodel: a NetChain rack has no controller: no Alloc.Slots, no Backup")
		}
		if err := r.bringUpNetChain(); err != nil {
			return nil, err
		}
		return r, nil
	}
	r.ctlHost = &ctlHost{r: r}
	r.ctlHost.up.prop, r.ctlHost.down.prop = int64(p.Propagation), int64(p.Propagation)
	r.ports[ctlPort] = r.ctlHost
	n := 1
	if cfg.Backup {
		n = 2
	}
	for i := range n {
		c, err := newCtl(r, i)
		if err != nil {
			return nil, err
		}
		r.ctls = append(r.ctls, c)
	}
	r.ctls[0].step(ctlcore.Primary{IsPrimary: true})
	// The bring-up: the controller pushes the program, writes the tables and takes a term.
	r.k.RunUntil(int64(time.Second), func() bool { return r.ctls[0].core.Phase() == ctlcore.Running })
	if ph := r.ctls[0].core.Phase(); ph != ctlcore.Running {
		return nil, fmt.Errorf("%w: phase %s after %v", ErrNoBringUp, ph, r.Now())
	}
	return r, nil
}

// Params returns the parameters in force (defaults filled in).
func (r *Rack) Params() Params { return r.p }

// Now returns the virtual time.
func (r *Rack) Now() time.Duration { return time.Duration(r.k.Now()) }

// Fired returns the number of events the kernel has run.
func (r *Rack) Fired() uint64 { return r.k.Fired() }

// at schedules fn at virtual time t (at now if t is earlier).
func (r *Rack) at(t int64, fn func()) { r.k.At(t, fn) }

// runUntil runs the events due at or before t, then moves the clock to t; with stop, it returns
// false as soon as stop reports true after an event (the clock stays there).
func (r *Rack) runUntil(t int64, stop func() bool) bool {
	if ok := r.k.RunUntil(t, stop); !ok {
		return false
	}
	r.k.AdvanceTo(t)
	r.retire()
	return true
}

// Start lets every worker start transactions.
func (r *Rack) Start() {
	r.stopping = false
	for _, w := range r.workers {
		if w.state == wIdle {
			w.startTxn()
		}
	}
}

// Run advances the virtual clock by d.
func (r *Rack) Run(d time.Duration) { r.runUntil(r.k.Now()+int64(d), nil) }

// ErrNoQuiesce is returned by Quiesce when the workers do not all finish within the limit.
var ErrNoQuiesce = errors.New("rackmodel: the workers did not finish their transactions")

// Quiesce stops the workers from starting transactions and runs until every worker is idle
// (its transaction committed or aborted and every release answered), for at most limit of
// virtual time.
func (r *Rack) Quiesce(limit time.Duration) error {
	r.stopping = true
	if r.idleWorkers() == len(r.workers) {
		return nil
	}
	r.runUntil(r.k.Now()+int64(limit), func() bool { return r.idleWorkers() == len(r.workers) })
	r.retire()
	if n := r.idleWorkers(); n != len(r.workers) {
		return fmt.Errorf("%w: %d of %d busy after %v", ErrNoQuiesce, len(r.workers)-n, len(r.workers), limit)
	}
	return nil
}

func (r *Rack) idleWorkers() int {
	n := 0
	for _, w := range r.workers {
		if w.state == wIdle || w.state == wPausing || w.crashed {
			n++
		}
	}
	return n
}

// hostSend sends a frame from h, ready (built) at t: the host's stack and NIC, then its link.
func (r *Rack) hostSend(h host, port int, t int64, frame []byte) {
	copies := r.copies(h)
	up, _ := h.links()
	for range copies {
		at := r.transmit(up, t+int64(r.p.HostLatency), len(frame))
		r.at(at, func() { r.sw.arrive(port, frame) })
	}
}

// deliver sends a frame that leaves the switch on port at t to the host there.
func (r *Rack) deliver(port int, t int64, frame []byte) {
	h := r.ports[port]
	if h == nil {
		r.stats.Unroutable++
		return
	}
	_, down := h.links()
	for range r.copies(h) {
		at := r.transmit(down, t, len(frame)) + int64(r.p.HostLatency)
		r.at(at, func() { h.receive(frame) })
	}
}

// copies returns how many copies of a frame a host's link carries: 0 (lost), 1, or 2
// (duplicated), on a lossy link.
func (r *Rack) copies(h host) int {
	if !h.lossy() || (r.p.Loss == 0 && r.p.Dup == 0) {
		return 1
	}
	if r.rng.Float64() < r.p.Loss {
		r.stats.Dropped++
		return 0
	}
	if r.rng.Float64() < r.p.Dup {
		r.stats.Duplicated++
		return 2
	}
	return 1
}

// History returns the recorded client observations (Config.Record), for history.Check.
func (r *Rack) History() []history.Event {
	if r.rec == nil {
		return nil
	}
	return r.rec.Events()
}

// AcceptOrder returns the rack's acceptance order per lock (Config.Record), for
// history.Options.AcceptOrder: the order the switch took acquires of its locks (its log)
// merged with the order the servers' cores accepted theirs (srvcore.TestingKnobs.OnAccept), on
// the one clock of the model.
func (r *Rack) AcceptOrder() map[uint32][]uint64 {
	if r.accept == nil {
		return nil
	}
	return r.accept.Order()
}

// Check runs history.Check on the recorded history (Config.Record) with the given options, the
// acceptance order added when fifo is set.
func (r *Rack) Check(opts history.Options, fifo bool) []history.Violation {
	if fifo {
		opts.AcceptOrder = r.AcceptOrder()
	}
	return history.Check(r.History(), opts)
}

// maxViolations bounds the violations the online checker keeps.
const maxViolations = 100

// Violations returns what the online checker (a history.Checker fed as the clients observe)
// found so far: the rules of package history over the intervals that have ended (a violation
// among grants still held is found once they end; Quiesce ends them all).
func (r *Rack) Violations() []history.Violation {
	r.retire()
	return r.check.Violations()
}

// vtime converts virtual nanoseconds into the time.Time of histories, the engine and ctlcore.
func vtime(ns int64) time.Time { return epoch.Add(time.Duration(ns)) }

// record observes a client event: the online checker, and the recorder with Config.Record.
func (r *Rack) record(e history.Event) {
	r.check.Observe(e)
	if r.rec != nil {
		r.rec.Record(e)
	}
	if r.nobs++; r.nobs%4096 == 0 {
		r.retire()
	}
}

// retire lets the online checker forget the intervals that ended: every event stamped before
// now has been observed (a loss is stamped with its earlier lease deadline, which ends its
// interval there anyway).
func (r *Rack) retire() { r.check.Retire(vtime(r.k.Now())) }

// frame builds a netlock datagram from src to dst: the header, the rack key after it for a
// control op (as the lock server and the switch send them), then body.
func (r *Rack) frame(src, dst netip.AddrPort, f *wire.Fields, body []byte) []byte {
	n := wire.Len
	if f.Op.IsControl() {
		n = wire.ControlLen
	}
	var buf [wire.ControlLen]byte
	wire.Header(buf[:]).Encode(f)
	if f.Op.IsControl() {
		wire.SetRackKey(buf[:], r.key)
	}
	b := udpframe.Append(make([]byte, 0, udpframe.HeaderLen+n+len(body)), udpframe.Endpoint{MAC: macFor(src.Addr()),
		Addr: src}, udpframe.Endpoint{MAC: switchMAC, Addr: dst}, append(buf[:n:n], body...))
	return b
}

// parse decodes a netlock datagram.
func parse(b []byte, fr *udpframe.Frame, f *wire.Fields) error {
	if err := udpframe.Parse(b, fr); err != nil {
		return err
	}
	h, err := wire.Parse(fr.Payload)
	if err != nil {
		return err
	}
	h.Decode(f)
	return nil
}
