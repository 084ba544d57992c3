package rackmodel

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
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
	Phase string
	// Seed seeds the workload (and nothing else: the model has no other randomness).
	Seed uint64
	// Record keeps every client observation in a history.Recorder (Rack.History) for
	// history.Check. Memory grows with the run (about 300 bytes per acquisition); the online
	// checker (Rack.Violations) runs either way.
	Record bool
	// Fault, if set, breaks the rack on purpose: the negative controls (fault.go).
	Fault Fault
	// Logger receives the model's logs. Default: discard.
	Logger *slog.Logger
}

// Addresses of the rack (the plan of dataplane's tests): the switch is 10.0.0.1, server s is
// 10.0.1.(s+1) on switch port serverPort0+s, client machine c is 10.0.2.(c+1) on port 1+c, its
// worker w has UDP port workerPort0+w.
const (
	serverPort0 = 301
	workerPort0 = 40000
)

var (
	switchIP  = netip.MustParseAddr("10.0.0.1")
	switchMAC = macFor(switchIP)
	epoch     = time.Unix(1_700_000_000, 0) // virtual time 0 as a time.Time (histories, the engine)
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
type link struct{ free int64 }

// transmit sends n bytes that are ready at t and returns when they have arrived at the far end.
func (r *Rack) transmit(l *link, t int64, n int) int64 {
	start := max(t, l.free)
	l.free = start + int64(float64((n+20)*8)/r.p.LinkGbps+0.5)
	return l.free + int64(r.p.Propagation)
}

// host is a machine on a switch port.
type host interface {
	// receive takes a frame that has passed the host's NIC and stack, at the current time.
	receive(frame []byte)
	links() (up, down *link)
}

// Rack is the rack model: the switch running p4/netlock.p4 on the engine, the lock servers
// (lockcore), the client machines and their workers, on one virtual clock. It is not safe for
// concurrent use.
type Rack struct {
	cfg     Config
	p       Params
	sim     sim
	log     *slog.Logger
	key     uint64
	sw      *vswitch
	servers []*serverHost
	idents  []*identity // by home server id: the lock servers' identities (addresses)
	clients []*clientHost
	ports   map[int]host
	check   checker
	rec     *history.Recorder

	stopping bool // workers finish their transaction and start no new one
	stats    Counters
	series   *series
	measure  *demandMeter
	lat      latencies

	ctl       control
	events    []Event
	installed map[uint32]dataplane.LockEntry // the switch's lock_table as the controller wrote it
}

// New builds a rack: the switch with its routes, the servers, the clients. Every lock starts
// on the servers (the switch's lock table is empty); the workers are idle until Start.
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
	r := &Rack{cfg: cfg, p: p, log: cfg.Logger, key: 0x6e6c_7672_6163_6b00 ^ cfg.Seed, ports: map[int]host{},
		installed: map[uint32]dataplane.LockEntry{}}
	r.check.init()
	if cfg.Record {
		r.rec = &history.Recorder{}
	}
	sw, err := newSwitch(r)
	if err != nil {
		return nil, err
	}
	r.sw = sw
	for s := 0; s < p.Servers; s++ {
		h := newServerHost(r, s)
		r.servers = append(r.servers, h)
		r.ports[h.port] = h
		id, err := newIdentity(r, s, 1)
		if err != nil {
			return nil, err
		}
		r.idents = append(r.idents, id)
		h.idents = append(h.idents, id)
		id.host = h
	}
	for c := 0; c < p.Clients; c++ {
		h, err := newClientHost(r, c)
		if err != nil {
			return nil, err
		}
		r.clients = append(r.clients, h)
		r.ports[h.port] = h
	}
	if err := r.sw.program(); err != nil {
		return nil, err
	}
	return r, nil
}

// Params returns the parameters in force (defaults filled in).
func (r *Rack) Params() Params { return r.p }

// Now returns the virtual time.
func (r *Rack) Now() time.Duration { return time.Duration(r.sim.now) }

// Start lets every worker start transactions.
func (r *Rack) Start() {
	r.stopping = false
	for _, c := range r.clients {
		for _, w := range c.workers {
			if w.state == wIdle {
				w.startTxn()
			}
		}
	}
}

// Run advances the virtual clock by d.
func (r *Rack) Run(d time.Duration) {
	r.sim.runUntil(r.sim.now+int64(d), nil)
}

// ErrNoQuiesce is returned by Quiesce when the workers do not all finish within the limit.
var ErrNoQuiesce = errors.New("rackmodel: the workers did not finish their transactions")

// Quiesce stops the workers from starting transactions and runs until every worker is idle
// (its transaction committed or aborted and every release acknowledged), for at most limit of
// virtual time.
func (r *Rack) Quiesce(limit time.Duration) error {
	r.stopping = true
	end := r.sim.now + int64(limit)
	if r.idleWorkers() == r.p.Clients*r.p.Workers {
		return nil
	}
	r.sim.runUntil(end, func() bool { return r.idleWorkers() == r.p.Clients*r.p.Workers })
	if n := r.idleWorkers(); n != r.p.Clients*r.p.Workers {
		return fmt.Errorf("%w: %d of %d busy after %v", ErrNoQuiesce, r.p.Clients*r.p.Workers-n,
			r.p.Clients*r.p.Workers, limit)
	}
	return nil
}

func (r *Rack) idleWorkers() int {
	n := 0
	for _, c := range r.clients {
		for _, w := range c.workers {
			if w.state == wIdle {
				n++
			}
		}
	}
	return n
}

// hostSend sends a frame from h, ready (built) at t: the host's stack and NIC, then its link.
func (r *Rack) hostSend(h host, port int, t int64, frame []byte) {
	up, _ := h.links()
	at := r.transmit(up, t+int64(r.p.HostLatency), len(frame))
	r.sim.at(at, func() { r.sw.arrive(port, frame) })
}

// deliver sends a frame that leaves the switch on port at t to the host there.
func (r *Rack) deliver(port int, t int64, frame []byte) {
	h := r.ports[port]
	if h == nil {
		r.stats.Unroutable++
		return
	}
	_, down := h.links()
	at := r.transmit(down, t, len(frame)) + int64(r.p.HostLatency)
	r.sim.at(at, func() { h.receive(frame) })
}

// homeOf returns the home server of a lock: the one clients send its requests to (an RSS-like
// hash partition). Failover moves a home's identity to another machine, not the lock's home.
func (r *Rack) homeOf(lock uint32) int { return int(mix32(lock) % uint32(r.p.Servers)) }

// coreOf returns the server core (shard) of a lock.
func (r *Rack) coreOf(lock uint32) int {
	return int(mix32(lock^0x9e3779b9) % uint32(r.p.ServerCores))
}

// mix32 is a 32-bit finalizer (murmur3's fmix32): a bijection that spreads lock ids.
func mix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// History returns the recorded client observations (Config.Record), for history.Check.
func (r *Rack) History() []history.Event {
	if r.rec == nil {
		return nil
	}
	return r.rec.Events()
}

// Violations returns what the online checker found so far (exclusion and fencing on the
// client observations; checker.go).
func (r *Rack) Violations() []history.Violation { return slices.Clone(r.check.violations) }

// vtime converts virtual nanoseconds into the time.Time of histories.
func vtime(ns int64) time.Time { return epoch.Add(time.Duration(ns)) }

func (r *Rack) record(e history.Event) {
	r.check.observe(&e)
	if r.rec != nil {
		r.rec.Record(e)
	}
}

// frame builds a netlock datagram from src to dst, with the rack key when key is set.
func frame(src, dst netip.AddrPort, f *wire.Fields, key *uint64) []byte {
	var payload [wire.ControlLen]byte
	n := wire.Len
	wire.Header(payload[:]).Encode(f)
	if key != nil {
		wire.SetRackKey(payload[:], *key)
		n = wire.ControlLen
	}
	return udpframe.Append(make([]byte, 0, udpframe.HeaderLen+n), udpframe.Endpoint{MAC: macFor(src.Addr()), Addr: src},
		udpframe.Endpoint{MAC: switchMAC, Addr: dst}, payload[:n])
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
