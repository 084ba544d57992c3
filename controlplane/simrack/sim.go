// Package simrack is a deterministic rack in virtual time for the controller's core
// (controlplane/ctlcore): p4/netlock.p4 on the execution engine as the switch, lock servers
// built on lockcore with lockserver's server-level rules, simulated clients, and one or two
// controller Cores whose effects it carries out, all driven by one event queue. Nothing runs in
// parallel and time is a number, so a run is fully determined by its Config (seed included), and
// failures (a switch restart, a server death, a controller death) happen exactly when asked.
//
// It exists to test the Core's decisions against the real data plane and lock semantics under a
// randomized workload, checked by package history (exclusion, fencing, FIFO), and to show how to
// drive the Core in virtual time (docs/controlplane.md, "Driving the core").
//
// Costs are simple: every link delays a frame by LinkDelay, the switch processes a frame when it
// arrives (the engine's own work takes no virtual time), the controller's P4Runtime and admin
// operations take AdminDelay each way.
package simrack

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"strconv"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/testbed/hostshim"
	"github.com/netlock-go/netlock/wire"
)

// Config configures a simulated rack. Zero fields take the defaults in parentheses.
type Config struct {
	// Seed seeds the workload, the faults and the servers' instance ids.
	Seed uint64
	// Servers (2), each with a standby when Standbys is set; Clients (6).
	Servers  int
	Standbys bool
	Clients  int
	// Key is the rack key (a fixed test key).
	Key uint64
	// Sizing of the switch program (64 locks, 4 x 64 slots).
	Sizing dataplane.Sizing
	// Lease is the lease clients ask for (1s); MaxLease the rack's maximum (2s).
	Lease, MaxLease time.Duration
	// ServerLease is the controller lease the servers enforce (0: none).
	ServerLease time.Duration
	// Workload: each client runs one acquisition at a time: Pick chooses the lock, mode and
	// priority (default: a hot set of 4 locks and 60 cold ones, a third shared, priority 0),
	// then it holds for Hold (200µs-2ms) and thinks Think (0-1ms). Clients retransmit every RTO
	// (20ms) and give up after GiveUp (20s).
	Pick        func(r *rand.Rand, client int) (lock uint32, mode wire.Mode, prio uint8)
	Hold, Think func(r *rand.Rand) time.Duration
	RTO, GiveUp time.Duration
	// Loss and Dup are the probabilities that a datagram between a client and the switch is lost
	// or duplicated (each direction).
	Loss, Dup float64
	// LinkDelay (10µs) and AdminDelay (50µs); ServerLinkDelay, when set, is the delay of the links
	// between the switch and the servers (a slow link keeps push-backs in flight longer).
	LinkDelay, AdminDelay, ServerLinkDelay time.Duration
	// Timeout is when the shell gives an effect up (ctlcore.ErrTimeout): 200ms.
	Timeout time.Duration
	// OutOfBandAdmin carries the controllers' server admin requests and their answers on a
	// management network of their own (AdminDelay each way) instead of through the switch, where
	// they share the servers' links with push-backs.
	OutOfBandAdmin bool
	// Controller configures the Cores; the rack fills in Sizing, Rack, Servers, Standbys, Hosts,
	// ServerLease. Backup adds a second Core (backup) that takes over on KillController.
	Controller ctlcore.Config
	Backup     bool
}

// Counts are the rack's tallies.
type Counts struct {
	Acquired, Rejected, Abandoned, Lost uint64
	// Switch and Server count grants by the tier that made them (switch grants come from the
	// data plane, server grants from a server's core).
	SwitchGrants, ServerGrants uint64
	Dropped, Duplicated        uint64
	RefusedControl             uint64
	StrayGrants                uint64
	EngineErrors               uint64
}

// Sim is a simulated rack.
type Sim struct {
	cfg    Config
	rng    *rand.Rand
	now    int64
	q      eventHeap
	seq    uint64
	plan   addrs
	sw     *dpengine.Switch
	hasP4  bool
	ports  map[int]func(udpframe.Frame) // far ends of the switch ports
	srv    map[uint16]*server           // by number: the live one (after a failover, the standby)
	spare  map[uint16]*server           // standbys not yet in service
	cls    []*client
	ctls   []*ctl
	rec    history.Recorder
	accept history.AcceptLog
	counts Counts
	logRE  *regexp.Regexp
	// grantsOut counts grant frames the switch sent to clients, routedIn the grant frames servers
	// sent into it: the switch made the difference.
	grantsOut, routedIn uint64
	primary             int // the controller that is (or is to be) primary
	started             bool
}

type addrs struct {
	switchIP, ctlIP netip.Addr
	swMAC           udpframe.MAC
}

// Ports of the rack: server n on 100+n, its standby on 150+n, client i on i, the controller on
// 250.
const (
	serverPortBase  = 100
	standbyPortBase = 150
	ctlPort         = 250
)

type event struct {
	at  int64
	seq uint64
	fn  func()
}

type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(event)) }
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// at schedules fn d from now.
func (s *Sim) at(d time.Duration, fn func()) {
	s.seq++
	heap.Push(&s.q, event{at: s.now + int64(d), seq: s.seq, fn: fn})
}

// Now is the virtual time.
func (s *Sim) Now() time.Time { return time.Unix(0, s.now) }

var epoch0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()

// New builds a rack: switch, servers (and standbys), clients, controllers. Nothing happens before
// Run.
func New(cfg Config) (*Sim, error) {
	cfg.defaults()
	s := &Sim{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x51a3)), now: epoch0, ports: map[int]func(udpframe.Frame){},
		srv: map[uint16]*server{}, spare: map[uint16]*server{},
		logRE: regexp.MustCompile(`netlock: acquire lock=(\d+) txn=(\d+)`)}
	p := hostshim.DefaultPlan
	s.plan = addrs{switchIP: p.Switch(), ctlIP: p.Controller(), swMAC: hostshim.MACFor(p.Switch())}
	if err := s.loadSwitch(); err != nil {
		return nil, err
	}
	s.hasP4 = false
	ccfg := cfg.Controller
	ccfg.Sizing = cfg.Sizing
	ccfg.Rack = dataplane.Rack{Key: cfg.Key, SwitchIP: p.Switch(), SwitchMAC: s.plan.swMAC, DefaultLease: cfg.Lease,
		MaxLease: cfg.MaxLease}
	ccfg.ServerLease = cfg.ServerLease
	ccfg.Servers, ccfg.Standbys, ccfg.Hosts = nil, nil, nil
	for n := 1; n <= cfg.Servers; n++ {
		num := uint16(n)
		addr := netip.AddrPortFrom(p.Server(n), wire.Port)
		sv := newServer(s, num, addr, serverPortBase+n, 1, false)
		s.srv[num] = sv
		s.attach(sv)
		ccfg.Servers = append(ccfg.Servers, ctlcore.Server{Num: num, Addr: addr, Port: sv.port, MAC: hostshim.MACFor(addr.Addr())})
		if cfg.Standbys {
			sb := newServer(s, num, addr, standbyPortBase+n, 0, true)
			s.spare[num] = sb
			s.attach(sb)
			ccfg.Standbys = append(ccfg.Standbys, ctlcore.Standby{Num: num, Port: sb.port, MAC: hostshim.MACFor(addr.Addr())})
		}
	}
	for i := 1; i <= cfg.Clients; i++ {
		c := newClient(s, i)
		s.cls = append(s.cls, c)
		s.ports[i] = c.recv
		ccfg.Hosts = append(ccfg.Hosts, ctlcore.Host{Prefix: netip.PrefixFrom(c.addr.Addr(), 32), Port: i,
			MAC: hostshim.MACFor(c.addr.Addr())})
	}
	ccfg.Hosts = append(ccfg.Hosts, ctlcore.Host{Prefix: netip.PrefixFrom(s.plan.ctlIP, 32), Port: ctlPort,
		MAC: hostshim.MACFor(s.plan.ctlIP)})
	n := 1
	if cfg.Backup {
		n = 2
	}
	for i := range n {
		cc := ccfg
		if cc.Log != nil {
			cc.Log = cc.Log.With("controller", i)
		}
		core, err := ctlcore.New(cc)
		if err != nil {
			return nil, err
		}
		s.ctls = append(s.ctls, &ctl{s: s, core: core, num: i, alive: true, wait: map[uint64]bool{},
			admin: map[uint16]uint64{}, srvWait: map[uint64]uint64{}})
	}
	s.ports[ctlPort] = s.ctlRecv
	return s, nil
}

func (c *Config) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	if c.Servers == 0 {
		c.Servers = 2
	}
	if c.Clients == 0 {
		c.Clients = 6
	}
	if c.Key == 0 {
		c.Key = 0x51a7_ac4e_0000_0001
	}
	if c.Sizing == (dataplane.Sizing{}) {
		c.Sizing = dataplane.Sizing{Locks: 64, PartBits: 6}
	}
	def(&c.Lease, time.Second)
	def(&c.MaxLease, 2*time.Second)
	def(&c.RTO, 20*time.Millisecond)
	def(&c.GiveUp, 20*time.Second)
	def(&c.LinkDelay, 10*time.Microsecond)
	def(&c.AdminDelay, 50*time.Microsecond)
	def(&c.Timeout, 200*time.Millisecond)
	if c.Pick == nil {
		c.Pick = func(r *rand.Rand, _ int) (uint32, wire.Mode, uint8) {
			l := uint32(100 + r.IntN(4))
			if r.IntN(3) == 0 {
				l = uint32(1000 + r.IntN(60))
			}
			return l, wire.Mode(min(r.IntN(3), 1)), 0
		}
	}
	if c.Hold == nil {
		c.Hold = func(r *rand.Rand) time.Duration { return time.Duration(200+r.IntN(1800)) * time.Microsecond }
	}
	if c.Think == nil {
		c.Think = func(r *rand.Rand) time.Duration { return time.Duration(r.IntN(1000)) * time.Microsecond }
	}
}

// loadSwitch (re)starts the switch program with fresh registers and empty tables.
func (s *Sim) loadSwitch() error {
	sw, err := dpengine.Load(s.cfg.Sizing, engine.Config{TofinoConstraints: true, Now: s.Now, Log: s.switchLog})
	if err != nil {
		return err
	}
	s.sw = sw
	return nil
}

// switchLog reads the switch's accept log (the order it took acquires of its locks).
func (s *Sim) switchLog(line string) {
	m := s.logRE.FindStringSubmatch(line)
	if m == nil {
		return
	}
	lock, _ := strconv.ParseUint(m[1], 10, 32)
	txn, _ := strconv.ParseUint(m[2], 10, 64)
	s.accept.Observe(wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Lock: uint32(lock), Txn: txn}))
}

func (s *Sim) attach(sv *server) {
	s.ports[sv.port] = func(f udpframe.Frame) {
		if f.Dst.Addr() == sv.addr.Addr() && f.Dst.Port() == wire.Port {
			sv.recv(f.Src, f.Payload)
		}
	}
	var tick func()
	tick = func() {
		sv.tick()
		s.at(time.Millisecond, tick)
	}
	s.at(time.Millisecond, tick)
}

// send sends a datagram from the host on port (address src) to dst, through the switch (or, for
// OutOfBandAdmin, between a controller and a server, directly).
func (s *Sim) send(port int, src, dst netip.AddrPort, payload []byte) {
	if s.cfg.OutOfBandAdmin && (src.Addr() == s.plan.ctlIP || dst.Addr() == s.plan.ctlIP) {
		f := udpframe.Frame{Src: src, Dst: dst, Payload: append([]byte(nil), payload...)}
		s.at(s.cfg.AdminDelay, func() {
			if dst.Addr() == s.plan.ctlIP {
				s.ctlRecv(f)
				return
			}
			for _, sv := range s.srv {
				if sv.addr == dst {
					sv.recv(src, f.Payload)
				}
			}
		})
		return
	}
	frame := udpframe.Append(nil, udpframe.Endpoint{MAC: hostshim.MACFor(src.Addr()), Addr: src},
		udpframe.Endpoint{MAC: s.plan.swMAC, Addr: dst}, payload)
	lossy := port < serverPortBase
	copies := 1
	if lossy {
		if s.rng.Float64() < s.cfg.Loss {
			s.counts.Dropped++
			return
		}
		if s.rng.Float64() < s.cfg.Dup {
			s.counts.Duplicated++
			copies = 2
		}
	}
	for range copies {
		s.at(s.linkDelay(port), func() { s.ingress(port, frame) })
	}
}

// linkDelay is the delay of the link of switch port p.
func (s *Sim) linkDelay(p int) time.Duration {
	if s.cfg.ServerLinkDelay > 0 && p >= serverPortBase && p != ctlPort {
		return s.cfg.ServerLinkDelay
	}
	return s.cfg.LinkDelay
}

func (s *Sim) sendFields(port int, src, dst netip.AddrPort, m wire.Fields) {
	b := wire.Append(nil, &m)
	if m.Op.IsControl() {
		b = append(b, make([]byte, wire.AuthLen)...)
		wire.SetRackKey(b, s.cfg.Key)
	}
	if m.Op == wire.OpGrant && port >= serverPortBase {
		s.counts.ServerGrants++
	}
	s.send(port, src, dst, b)
}

// ingress runs a frame through the switch and delivers what comes out.
func (s *Sim) ingress(port int, frame []byte) {
	if s.sw == nil {
		return
	}
	if port >= serverPortBase && port != ctlPort {
		if h, err := wire.Parse(frame[udpframe.HeaderLen:]); err == nil && h.Op() == wire.OpGrant {
			s.routedIn++
		}
	}
	res, err := s.sw.Process(port, frame)
	if err != nil {
		s.counts.EngineErrors++
		return
	}
	s.deliver(res)
}

func (s *Sim) deliver(res *engine.Result) {
	for _, o := range res.Out {
		dst := s.ports[o.Port]
		if dst == nil {
			continue
		}
		data := append([]byte(nil), o.Data...)
		var f udpframe.Frame
		if udpframe.Parse(data, &f) != nil {
			continue
		}
		lossy := o.Port < serverPortBase
		if lossy && s.rng.Float64() < s.cfg.Loss {
			s.counts.Dropped++
			continue
		}
		copies := 1
		if lossy && s.rng.Float64() < s.cfg.Dup {
			s.counts.Duplicated++
			copies = 2
		}
		if h, err := wire.Parse(f.Payload); err == nil && h.Op() == wire.OpGrant && o.Port < serverPortBase {
			s.grantsOut++
		}
		for range copies {
			s.at(s.linkDelay(o.Port), func() { dst(f) })
		}
	}
	for _, pi := range res.PacketIn {
		s.packetIn(append([]byte(nil), pi...))
	}
}

// Run runs the rack until d of virtual time has passed.
func (s *Sim) Run(d time.Duration) {
	end := s.now + int64(d)
	if !s.started {
		s.started = true
		s.start()
	}
	for len(s.q) > 0 && s.q[0].at <= end {
		e := heap.Pop(&s.q).(event)
		if e.at > s.now {
			s.now = e.at
		}
		e.fn()
	}
	s.now = end
}

func (s *Sim) start() {
	for i, c := range s.ctls {
		c.step(ctlcore.Primary{IsPrimary: i == 0})
	}
	for _, c := range s.cls {
		c.start()
	}
}

// History returns the clients' observations.
func (s *Sim) History() []history.Event { return s.rec.Events() }

// AcceptOrder is the rack's acceptance order per lock: the switch's accept log merged with the
// servers' (one clock: the event order).
func (s *Sim) AcceptOrder() map[uint32][]uint64 { return s.accept.Order() }

// Counts returns the rack's tallies.
func (s *Sim) Counts() Counts {
	c := s.counts
	if s.grantsOut > s.routedIn {
		c.SwitchGrants = s.grantsOut - s.routedIn
	}
	return c
}

// Core returns controller i's Core.
func (s *Sim) Core(i int) *ctlcore.Core { return s.ctls[i].core }

// Check runs history.Check on the run so far.
func (s *Sim) Check(fifo bool) []history.Violation {
	opts := history.Options{RequireOutcome: false, AllowAbandoned: true}
	if fifo {
		opts.AcceptOrder = s.AcceptOrder()
	}
	return history.Check(s.History(), opts)
}

// String summarises the run.
func (c Counts) String() string {
	return fmt.Sprintf("acquired %d (switch grants %d, server grants %d), rejected %d, lost %d, abandoned %d, "+
		"dropped %d, duplicated %d, stray grants %d", c.Acquired, c.SwitchGrants, c.ServerGrants, c.Rejected, c.Lost,
		c.Abandoned, c.Dropped, c.Duplicated, c.StrayGrants)
}

// Evict asks the primary controller to move lock out of the switch now.
func (s *Sim) Evict(lock uint32) bool {
	c := s.ctls[s.primary]
	ok := c.core.Evict(lock)
	for _, e := range c.core.Step(s.Now(), ctlcore.Tick{}) {
		c.do(e)
	}
	c.schedule()
	return ok
}

// Every runs fn every d of virtual time.
func (s *Sim) Every(d time.Duration, fn func()) {
	var tick func()
	tick = func() {
		fn()
		s.at(d, tick)
	}
	s.at(d, tick)
}

// At runs fn after d of virtual time.
func (s *Sim) At(d time.Duration, fn func()) { s.at(d, fn) }
