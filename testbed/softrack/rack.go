// Package softrack runs netlock's whole rack in one process without root: the software switch
// (bmv2/target, the engine behind `netlock switch`) running p4/netlock.p4 with a P4Runtime server
// on a loopback port, the controller (controlplane/controller) over that gRPC connection, lock
// servers (lockserver) and their standbys, and client hosts, every host attached to a switch
// port through package hostshim (in-memory ports or UDP tunnels on loopback). Clients address
// the servers; whether the switch or a server grants a lock is the controller's choice.
//
// The demo (`netlock demo`), the end-to-end tests of migration and failures, and the controller's
// tests build on it. Faults: RestartSwitch (the switch loses its state), KillServer (a server
// dies; its standby takes over its address), KillController (the primary dies; the backup takes
// over).
package softrack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/p4rt"
	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/bmv2/target"
	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/controlplane/controller"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/controlplane/p4rtclient"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/testbed/hostshim"
	"github.com/netlock-go/netlock/wire"
)

// Switch ports of the rack's hosts: client i on port i (1..99), server n on 100+n, its standby
// on 150+n, the controller's admin host on 250. The CPU port is the program's (255).
const (
	ServerPortBase  = 100
	StandbyPortBase = 150
	ControllerPort  = 250
	MaxClients      = 99
)

// Config configures a rack. Zero fields take the defaults in parentheses.
type Config struct {
	// Servers (2); Standbys adds a standby per server (for KillServer); Clients is the number of
	// client hosts (4, at most MaxClients): NewClient(i) for i in 1..Clients.
	Servers  int
	Standbys bool
	Clients  int
	// Shards and Sockets of each server (1, 1).
	Shards, Sockets int
	// Key is the rack key (a fixed one).
	Key uint64
	// Sizing of p4/netlock.p4 (the program's defaults).
	Sizing dataplane.Sizing
	// Pipeline is what runs p4/netlock.p4 in the switch (target.Options.Pipeline): auto (the
	// zero value) runs Generated when set, else the interpreter; interp always the
	// interpreter; gen Generated, and Start fails without it. The rack's switch does not check
	// the Tofino constraints (the generated code does not either).
	Pipeline engine.Pipeline
	// Generated is p4/netlock.p4's generated pipeline (netlockgen.NetlockPipeline, for a
	// binary that links it), which runs it with any Sizing; the zero value names none.
	Generated engine.Generated
	// Pipes and Loopback are the switch's pipes and loopback ports for a TNA program
	// (target.Options): a controller of the caller's pushing the Tofino 1 fold
	// (controller.Config.Embedded, dataplane.TNAFold) needs 2 and {68, 196}.
	Pipes    int
	Loopback []int
	// Lease is the servers' and the switch's default lease, MaxLease the longest (2s, 4s).
	Lease, MaxLease time.Duration
	// ServerLease is the controller lease the servers enforce (0: none).
	ServerLease time.Duration
	// Quotas are the servers' per-tenant quotas (lockcore.Config.Quotas; the switch's are
	// Controller.Tenants).
	Quotas map[uint16]lockcore.Quota
	// UDP attaches the hosts through UDP tunnels on loopback instead of in-memory ports.
	UDP bool
	// Controller adjusts the controller's core (periods, allocation); the rack fills in the
	// sizes, the rack, the servers, the standbys and the routes.
	Controller ctlcore.Config
	// Backup starts a second controller (election id 1, the primary has 2).
	Backup bool
	// NoController starts no controller: the switch runs without a program until one is pushed
	// over P4Runtime (GRPCAddr) by a controller of the caller's, whose admin socket is on
	// ControllerHost. Start then returns at once.
	NoController bool
	// WrapServer, if set, wraps every server's socket (faults, observation): n is the server.
	WrapServer func(n uint16, c net.PacketConn) net.PacketConn
	// OnAccept, if set, is every server's lockserver.Config.OnAccept (the acceptance order).
	OnAccept func(lock uint32, txn uint64)
	// SwitchLog, if set, receives the switch's log lines (packet events and the program's
	// log_msg: the accept log of its locks). It slows the switch down.
	SwitchLog func(string)
	// Log receives the rack's logs (controller, servers); nil discards them.
	Log *slog.Logger
	// AdminTimeout is the controllers' controller.Config.AdminTimeout (0: its default).
	AdminTimeout time.Duration
}

func (c *Config) defaults() error {
	if c.Servers == 0 {
		c.Servers = 2
	}
	if c.Clients == 0 {
		c.Clients = 4
	}
	if c.Clients < 1 || c.Clients > MaxClients {
		return fmt.Errorf("rack: %d clients: want 1..%d", c.Clients, MaxClients)
	}
	if c.Shards == 0 {
		c.Shards = 1
	}
	if c.Sockets == 0 {
		c.Sockets = 1
	}
	if c.Key == 0 {
		c.Key = 0x6e6574_6c6f_636b
	}
	if c.Lease == 0 {
		c.Lease = 2 * time.Second
	}
	if c.MaxLease == 0 {
		c.MaxLease = 2 * c.Lease
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Servers < 1 || c.Servers > 40 {
		return fmt.Errorf("rack: %d servers: want 1..40", c.Servers)
	}
	return nil
}

// Rack is a running rack.
type Rack struct {
	cfg    Config
	plan   hostshim.Plan
	swMAC  hostshim.MAC
	dev    *target.Device
	prog   *front.Checked
	p4mu   sync.Mutex // guards stopP4 (RestartSwitch replaces it)
	stopP4 func()
	grpc   string

	mu       sync.Mutex
	hosts    []*hostshim.Host // every host, closed at Close
	servers  map[uint16]*runningServer
	standbys map[uint16]*runningServer
	clients  map[int]*hostshim.Host
	ctls     []*runningController
	ctlHost  *hostshim.Host // the controller's admin host (ControllerPort)

	wg sync.WaitGroup
}

type runningServer struct {
	srv    *lockserver.Server
	host   *hostshim.Host
	cancel context.CancelFunc
	done   chan error
}

type runningController struct {
	ctl    *controller.Controller
	host   *hostshim.Host
	cancel context.CancelFunc
	// stopped is closed when Run has returned; err is what it returned.
	stopped chan struct{}
	err     error
}

// wait stops the controller and returns what its Run returned (any number of times).
func (rc *runningController) wait() error {
	rc.cancel()
	<-rc.stopped
	return rc.err
}

// Start builds and starts a rack: switch, servers (and standbys), controller(s). It returns once
// the controller runs (the switch is programmed).
func Start(ctx context.Context, cfg Config) (*Rack, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	r := &Rack{cfg: cfg, plan: hostshim.DefaultPlan, servers: map[uint16]*runningServer{},
		standbys: map[uint16]*runningServer{}, clients: map[int]*hostshim.Host{}}
	r.swMAC = hostshim.MACFor(r.plan.Switch())
	ok := false
	defer func() {
		if !ok {
			r.Close()
		}
	}()
	sz := cfg.Sizing
	prog, err := dpengine.Check(sz)
	if err != nil {
		return nil, err
	}
	r.prog = prog
	cpu := sz.CPUPort
	if cpu == 0 {
		cpu = dataplane.DefaultSizing.CPUPort
	}
	r.dev = target.New(target.Options{CPUPort: cpu, Log: cfg.SwitchLog, Pipeline: cfg.Pipeline, Generated: cfg.Generated,
		Pipes: cfg.Pipes, Loopback: cfg.Loopback})
	if err := r.dev.LoadProgram(prog); err != nil {
		return nil, fmt.Errorf("rack: the switch (pipeline %v): %w", cfg.Pipeline, err)
	}
	// Hosts: servers, standbys, controller.
	for n := 1; n <= cfg.Servers; n++ {
		h, err := r.host(ServerPortBase+n, r.plan.Server(n))
		if err != nil {
			return nil, err
		}
		rs, err := r.startServer(uint16(n), h, false)
		if err != nil {
			return nil, err
		}
		r.servers[uint16(n)] = rs
		if cfg.Standbys {
			sh, err := r.host(StandbyPortBase+n, r.plan.Server(n))
			if err != nil {
				return nil, err
			}
			sb, err := r.startServer(uint16(n), sh, true)
			if err != nil {
				return nil, err
			}
			r.standbys[uint16(n)] = sb
		}
	}
	for i := 1; i <= cfg.Clients; i++ {
		h, err := r.host(i, r.plan.Client(i))
		if err != nil {
			return nil, err
		}
		r.clients[i] = h
	}
	ctlHost, err := r.host(ControllerPort, r.plan.Controller())
	if err != nil {
		return nil, err
	}
	var backupHost *hostshim.Host
	if cfg.Backup {
		// The backup's admin socket: a second address of the controller subnet on its own port.
		if backupHost, err = r.host(ControllerPort+1, backupAddr(r.plan)); err != nil {
			return nil, err
		}
	}
	r.dev.Start()
	srv, err := p4rt.NewServer(p4rt.Config{Device: r.dev})
	if err != nil {
		return nil, err
	}
	addr, stop, err := p4rt.Serve("127.0.0.1:0", srv)
	if err != nil {
		return nil, err
	}
	r.p4mu.Lock()
	r.stopP4, r.grpc = stop, addr.String()
	r.p4mu.Unlock()
	r.ctlHost = ctlHost
	if cfg.NoController {
		ok = true
		return r, nil
	}
	if err := r.startController(2, ctlHost); err != nil {
		return nil, err
	}
	if cfg.Backup {
		if err := r.startController(1, backupHost); err != nil {
			return nil, err
		}
	}
	if err := r.WaitRunning(ctx); err != nil {
		return nil, err
	}
	ok = true
	return r, nil
}

func backupAddr(p hostshim.Plan) netip.Addr {
	a := p.Controller().As4()
	a[3]++
	return netip.AddrFrom4(a)
}

// host attaches a host with address a to switch port num.
func (r *Rack) host(num int, a netip.Addr) (*hostshim.Host, error) {
	var swEnd, hostEnd port.Port
	if r.cfg.UDP {
		he, err := port.ListenUDP(port.UDPSpec{Local: netip.MustParseAddrPort("127.0.0.1:0")})
		if err != nil {
			return nil, err
		}
		se, err := port.ListenUDP(port.UDPSpec{Local: netip.MustParseAddrPort("127.0.0.1:0"), Remote: he.LocalAddr()})
		if err != nil {
			he.Close()
			return nil, err
		}
		he.SetRemote(se.LocalAddr())
		swEnd, hostEnd = se, he
	} else {
		swEnd, hostEnd = port.NewPair(fmt.Sprintf("sw%d", num), a.String())
	}
	if err := r.dev.AddPort(num, swEnd); err != nil {
		swEnd.Close()
		hostEnd.Close()
		return nil, err
	}
	h, err := hostshim.New(hostshim.Config{Addr: a, Gateway: r.swMAC, Link: hostEnd, Queue: 8192})
	if err != nil {
		hostEnd.Close()
		return nil, err
	}
	r.mu.Lock()
	r.hosts = append(r.hosts, h)
	r.mu.Unlock()
	return h, nil
}

// ServerAddr is server n's address.
func (r *Rack) ServerAddr(n int) netip.AddrPort {
	return netip.AddrPortFrom(r.plan.Server(n), wire.Port)
}

// ServerAddrs are the servers' addresses, server 1 first: a client's Servers.
func (r *Rack) ServerAddrs() []string {
	var out []string
	for n := 1; n <= r.cfg.Servers; n++ {
		out = append(out, r.ServerAddr(n).String())
	}
	return out
}

func (r *Rack) startServer(n uint16, h *hostshim.Host, standby bool) (*runningServer, error) {
	wrap := h.WrapConn(wire.Port)
	if r.cfg.WrapServer != nil {
		inner := wrap
		wrap = func(c net.PacketConn) net.PacketConn { return r.cfg.WrapServer(n, inner(c)) }
	}
	log := r.cfg.Log.With("server", n)
	if standby {
		log = log.With("standby", true)
	}
	s, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: r.cfg.Shards, Sockets: r.cfg.Sockets,
		Core:    lockcore.Config{DefaultLease: r.cfg.Lease, MaxLease: r.cfg.MaxLease, Quotas: r.cfg.Quotas},
		RackKey: wire.Key(r.cfg.Key), WrapConn: wrap, Standby: standby, ControllerLease: r.cfg.ServerLease,
		TestingKnobs: lockserver.TestingKnobs{OnAccept: r.cfg.OnAccept},
		Peers:        lockserver.Peers{Switches: []string{r.plan.Switch().String()}, Controllers: []string{r.plan.Controller().String(), backupAddr(r.plan).String()}},
		Logger:       log})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	rs := &runningServer{srv: s, host: h, cancel: cancel, done: make(chan error, 1)}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		rs.done <- s.Run(ctx)
	}()
	return rs, nil
}

// controllerConfig is the core configuration of the rack's controllers.
func (r *Rack) controllerConfig() ctlcore.Config {
	cc := r.cfg.Controller
	cc.Sizing = r.cfg.Sizing
	cc.Rack = dataplane.Rack{Key: r.cfg.Key, SwitchIP: r.plan.Switch(), SwitchMAC: r.swMAC, DefaultLease: r.cfg.Lease,
		MaxLease: r.cfg.MaxLease}
	cc.ServerLease = r.cfg.ServerLease
	cc.Servers, cc.Standbys, cc.Hosts = nil, nil, nil
	for n := 1; n <= r.cfg.Servers; n++ {
		a := r.plan.Server(n)
		cc.Servers = append(cc.Servers, ctlcore.Server{Num: uint16(n), Addr: netip.AddrPortFrom(a, wire.Port),
			Port: ServerPortBase + n, MAC: hostshim.MACFor(a)})
		if r.cfg.Standbys {
			cc.Standbys = append(cc.Standbys, ctlcore.Standby{Num: uint16(n), Port: StandbyPortBase + n, MAC: hostshim.MACFor(a)})
		}
	}
	for i := 1; i <= MaxClients; i++ {
		a := r.plan.Client(i)
		cc.Hosts = append(cc.Hosts, ctlcore.Host{Prefix: netip.PrefixFrom(a, 32), Port: i, MAC: hostshim.MACFor(a)})
	}
	cc.Hosts = append(cc.Hosts, ctlcore.Host{Prefix: netip.PrefixFrom(r.plan.Controller(), 32), Port: ControllerPort,
		MAC: hostshim.MACFor(r.plan.Controller())})
	if r.cfg.Backup {
		b := backupAddr(r.plan)
		cc.Hosts = append(cc.Hosts, ctlcore.Host{Prefix: netip.PrefixFrom(b, 32), Port: ControllerPort + 1, MAC: hostshim.MACFor(b)})
	}
	if cc.Log == nil {
		cc.Log = r.cfg.Log
	}
	return cc
}

func (r *Rack) startController(election uint64, h *hostshim.Host) error {
	conn, err := h.ListenUDP(0)
	if err != nil {
		return err
	}
	log := r.cfg.Log.With("controller", election)
	cc := r.controllerConfig()
	cc.Log = log
	ctl, err := controller.New(controller.Config{Core: cc, AdminConn: conn, Log: log, AdminTimeout: r.cfg.AdminTimeout,
		Switch: p4rtclient.Config{Addr: r.grpc, ElectionID: p4rtclient.ElectionID{Low: election},
			Backoff: p4rtclient.Backoff{Initial: 20 * time.Millisecond, Max: 500 * time.Millisecond}}})
	if err != nil {
		conn.Close()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	rc := &runningController{ctl: ctl, host: h, cancel: cancel, stopped: make(chan struct{})}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		rc.err = ctl.Run(ctx)
		close(rc.stopped)
	}()
	r.mu.Lock()
	r.ctls = append(r.ctls, rc)
	r.mu.Unlock()
	return nil
}

// Controller returns controller i (0 the primary at the start, 1 the backup).
func (r *Rack) Controller(i int) *controller.Controller {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ctls[i].ctl
}

// Primary returns the controller that runs as primary, or nil. A killed controller is never
// the primary, whatever its last snapshot says.
func (r *Rack) Primary() *controller.Controller {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.ctls {
		select {
		case <-c.stopped:
			continue
		default:
		}
		if s := c.ctl.Snapshot(); s.Primary && s.Phase == ctlcore.Running {
			return c.ctl
		}
	}
	return nil
}

// WaitRunning waits until a controller runs as primary.
func (r *Rack) WaitRunning(ctx context.Context) error {
	for r.Primary() == nil {
		select {
		case <-ctx.Done():
			return fmt.Errorf("rack: no controller running: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Server returns server n's running lock server (the standby, after a failover).
func (r *Rack) Server(n uint16) *lockserver.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.servers[n]; s != nil {
		return s.srv
	}
	return nil
}

// Servers returns every lock server that runs (servers, and standbys in service).
func (r *Rack) Servers() []*lockserver.Server {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*lockserver.Server
	for n := 1; n <= r.cfg.Servers; n++ {
		if s := r.servers[uint16(n)]; s != nil {
			out = append(out, s.srv)
		}
	}
	return out
}

func (r *Rack) clientHost(i int) (*hostshim.Host, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if h := r.clients[i]; h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("rack: no client host %d (Config.Clients is %d)", i, r.cfg.Clients)
}

// NewClient makes a lock client on client host i: it addresses the servers (lock l to server
// l % servers + 1) and accepts answers from the switch too. cfg's Servers, WrapConn (kept as an
// inner wrapper, applied after the host socket) and Switches are set; a zero MaxAttempts becomes
// -1 (no bound: the rack fails dead servers over).
func (r *Rack) NewClient(i int, cfg client.Config) (*client.Client, error) {
	h, err := r.clientHost(i)
	if err != nil {
		return nil, err
	}
	cfg.Servers = r.ServerAddrs()
	cfg.Switches = []string{r.plan.Switch().String()}
	inner := cfg.WrapConn
	cfg.WrapConn = func(c net.PacketConn) net.PacketConn {
		c = h.WrapConn(0)(c)
		if inner != nil {
			c = inner(c)
		}
		return c
	}
	if cfg.Local == "" {
		cfg.Local = "127.0.0.1:0"
	}
	if cfg.MaxAttempts == 0 {
		// The rack's controller fails a dead server over (detection, then the standby's grace
		// of the longest lease): its clients keep retransmitting through it, bounded by their
		// contexts, instead of calling the server unreachable after 16 silent copies.
		cfg.MaxAttempts = -1
	}
	return client.New(cfg)
}

// ControllerHost is the host of the controller's admin socket (switch port ControllerPort,
// address Plan().Controller()): with Config.NoController, the caller's controller listens on
// it (ListenUDP).
func (r *Rack) ControllerHost() *hostshim.Host { return r.ctlHost }

// Plan is the rack's address plan (every host's MAC is hostshim.MACFor of its address).
func (r *Rack) Plan() hostshim.Plan { return r.plan }

// SwitchMAC is the switch's MAC.
func (r *Rack) SwitchMAC() hostshim.MAC { return r.swMAC }

// Key is the rack key.
func (r *Rack) Key() uint64 { return r.cfg.Key }

// SwitchDrops reads the switch's drop counter (dataplane.CounterDrops of p4/netlock.p4):
// packets dropped per reason (dataplane.Drop*: DropAdminPort, DropPushBackKey, ...).
func (r *Rack) SwitchDrops() ([dataplane.DropReasons]uint64, error) {
	var out [dataplane.DropReasons]uint64
	info, err := r.prog.P4Info()
	if err != nil {
		return out, fmt.Errorf("rack: %w", err)
	}
	var id uint32
	for _, c := range info.GetCounters() {
		if c.GetPreamble().GetName() == dataplane.CounterDrops {
			id = c.GetPreamble().GetId()
		}
	}
	if id == 0 {
		return out, fmt.Errorf("rack: the program has no counter %s", dataplane.CounterDrops)
	}
	for i := range out {
		d, err := r.dev.Counter(id, int64(i))
		if err != nil {
			return out, fmt.Errorf("rack: counter %s(%d): %w", dataplane.CounterDrops, i, err)
		}
		out[i] = uint64(d.GetPacketCount())
	}
	return out, nil
}

// GRPCAddr is the switch's P4Runtime address.
func (r *Rack) GRPCAddr() string { return r.grpc }

// Device is the switch.
func (r *Rack) Device() *target.Device { return r.dev }

// Host returns the host of switch port num, if attached.
func (r *Rack) Host(num int) *hostshim.Host {
	r.mu.Lock()
	defer r.mu.Unlock()
	if num >= 1 && num <= MaxClients {
		return r.clients[num]
	}
	return nil
}

// SwitchPipeline names what runs p4/netlock.p4 in the switch now: the generated pipeline's name
// (engine.Switch.GeneratedPipeline) or "interpreter".
func (r *Rack) SwitchPipeline() string {
	if name := r.dev.GeneratedPipeline(); name != "" {
		return name
	}
	return "interpreter"
}

// RestartSwitch restarts the switch as a `netlock switch` process restarts: its P4Runtime
// server stops (the controllers' streams break), a fresh engine with empty tables and fresh
// registers (cookie 0) replaces the running one, and a new P4Runtime server without a pipeline
// listens on the same address. Every frame is dropped until the controller that wins the
// election again has programmed it.
func (r *Rack) RestartSwitch() error {
	r.p4mu.Lock()
	defer r.p4mu.Unlock()
	if r.stopP4 != nil {
		r.stopP4()
		r.stopP4 = nil
	}
	if err := r.dev.LoadProgram(r.prog); err != nil {
		return fmt.Errorf("rack: restarting the switch: %w", err)
	}
	srv, err := p4rt.NewServer(p4rt.Config{Device: r.dev})
	if err != nil {
		return fmt.Errorf("rack: restarting the switch: %w", err)
	}
	_, stop, err := p4rt.Serve(r.grpc, srv)
	if err != nil {
		return fmt.Errorf("rack: restarting the switch: %w", err)
	}
	r.stopP4 = stop
	return nil
}

// KillServer stops server n abruptly: its host goes off the wire first (nothing it would say on
// the way out reaches anyone), then the process ends. Its standby, if any, is what the
// controller fails over to.
func (r *Rack) KillServer(n uint16) error {
	r.mu.Lock()
	rs := r.servers[n]
	if sb := r.standbys[n]; sb != nil {
		r.servers[n] = sb
		delete(r.standbys, n)
	} else {
		delete(r.servers, n)
	}
	r.mu.Unlock()
	if rs == nil {
		return fmt.Errorf("rack: no server %d", n)
	}
	rs.host.Close()
	rs.cancel()
	<-rs.done
	return nil
}

// KillController stops controller i abruptly: its P4Runtime stream ends, so the switch makes the
// backup primary.
func (r *Rack) KillController(i int) error {
	r.mu.Lock()
	if i >= len(r.ctls) || r.ctls[i] == nil {
		r.mu.Unlock()
		return fmt.Errorf("rack: no controller %d", i)
	}
	rc := r.ctls[i]
	r.mu.Unlock()
	if err := rc.wait(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("rack: controller %d: %w", i, err)
	}
	return nil
}

// Close stops everything.
func (r *Rack) Close() error {
	r.mu.Lock()
	ctls := r.ctls
	servers := make([]*runningServer, 0, len(r.servers)+len(r.standbys))
	for _, s := range r.servers {
		servers = append(servers, s)
	}
	for _, s := range r.standbys {
		servers = append(servers, s)
	}
	hosts := r.hosts
	r.mu.Unlock()
	var errs []error
	for _, c := range ctls {
		c.cancel()
	}
	for _, s := range servers {
		s.cancel()
	}
	r.wg.Wait()
	for _, c := range ctls {
		if err := c.wait(); err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	for _, s := range servers {
		select {
		case err := <-s.done:
			if err != nil && !strings.Contains(err.Error(), "closed") {
				errs = append(errs, err)
			}
		default:
		}
	}
	r.p4mu.Lock()
	if r.stopP4 != nil {
		r.stopP4()
		r.stopP4 = nil
	}
	r.p4mu.Unlock()
	if r.dev != nil {
		r.dev.Close()
	}
	for _, h := range hosts {
		h.Close()
	}
	return errors.Join(errs...)
}
