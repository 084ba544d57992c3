// Package controller runs netlock's controller: the pure decision core of package ctlcore, with
// its I/O at the edges. It speaks P4Runtime to the switch through p4rtclient.Client (election,
// reconnection, writes, packet-out and packet-in for the admin packets of p4/netlock.p4) and the
// lock servers' admin protocol over a UDP socket, feeds the results back to the core, ticks it at
// its deadlines, saves its token checkpoint, and exports its counters to Prometheus. One goroutine
// owns the core; the effects run in goroutines of their own, each answered exactly once (a result,
// an error or a timeout).
//
// `netlock controller --config rack.yaml` builds one (cmd/netlock); testbed/softrack runs one in
// process. docs/controlplane.md describes what the core decides.
package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/controlplane/p4rtclient"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/wire"
)

// Config configures a Controller.
type Config struct {
	// Core is the decision core's configuration (servers, routes, periods, allocation).
	Core ctlcore.Config
	// Program is the P4 program pushed to a switch without one (nil: the embedded
	// p4/netlock.p4 with Core.Sizing's sizes; a program of its own must keep netlock.p4's tables,
	// actions and registers, with Core.Sizing's sizes).
	Program *p4rtclient.Program
	// Embedded is the build of netlock's program pushed when Program is nil, with Core.Sizing's
	// sizes (the zero value: dataplane.V1Model, p4/netlock.p4; dataplane.TNAFold needs a switch
	// of two pipes with ports 68 and 196 in loopback: netlock switch --pipes 2
	// --loopback-port 68 --loopback-port 196).
	Embedded dataplane.Program
	// Switch is the P4Runtime connection (address, device id, election id; the Log is set from
	// Log when nil).
	Switch p4rtclient.Config
	// AdminConn is the socket the controller talks to the lock servers with (a UDP socket whose
	// address the servers list in peers.controllers; a host of the rack in tests). The
	// controller closes it when Run returns.
	AdminConn net.PacketConn
	// AdminTimeout bounds an admin request to the switch or a server (default 500ms);
	// WriteTimeout a P4Runtime write, read or pipeline push (default 10s).
	AdminTimeout, WriteTimeout time.Duration
	// StateFile, if set, keeps the core's token checkpoint (the switch's largest token counter
	// and when it was read) across restarts of the controller (docs/controlplane.md, "Switch
	// restart").
	StateFile string
	// Registerer receives the controller's metrics; nil: none.
	Registerer prometheus.Registerer
	// Log receives the controller's logs; nil discards them.
	Log *slog.Logger
}

func (c *Config) validate() error {
	if c.AdminConn == nil {
		return errors.New("controller: no admin socket")
	}
	if c.AdminTimeout == 0 {
		c.AdminTimeout = 500 * time.Millisecond
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 10 * time.Second
	}
	if c.AdminTimeout < 0 || c.WriteTimeout < 0 {
		return errors.New("controller: negative timeout")
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.Core.Log == nil {
		c.Core.Log = c.Log
	}
	if c.Switch.Log == nil {
		c.Switch.Log = c.Log
	}
	return nil
}

// Controller runs a core against a switch and its servers.
type Controller struct {
	cfg     Config
	core    *ctlcore.Core
	prog    *p4rtclient.Program
	servers map[uint16]netip.AddrPort
	log     *slog.Logger

	inputs chan ctlcore.Input
	snap   atomic.Pointer[Snapshot]

	mu       sync.Mutex
	adminID  uint16
	adminW   map[uint16]chan dataplane.AdminReply // guarded by mu
	serverW  map[uint64]chan serverReply          // guarded by mu, by txn
	cl       *p4rtclient.Client                   // set by Run
	sendMu   sync.Mutex                           // serializes AdminConn writes
	saved    time.Time                            // when the checkpoint was last saved
	savedTok uint64
}

type serverReply struct {
	f    wire.Fields
	body []byte
}

// Snapshot is the controller's state as of its last step, for metrics and status pages.
type Snapshot struct {
	Phase   ctlcore.Phase
	Term    uint64
	Primary bool
	Stats   ctlcore.Stats
	Locks   []uint32 // in the switch
	// Stopped: Run has returned (Primary is then false).
	Stopped bool
}

// New checks cfg and builds a Controller (nothing runs before Run).
func New(cfg Config) (*Controller, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	core, err := ctlcore.New(cfg.Core)
	if err != nil {
		return nil, err
	}
	prog := cfg.Program
	if prog == nil {
		build := cfg.Embedded
		if build.Name == "" {
			build = dataplane.V1Model
		}
		if prog, err = p4rtclient.ProgramFromBundle(dpengine.BundleProgram(build, cfg.Core.Sizing)); err != nil {
			return nil, err
		}
	}
	c := &Controller{cfg: cfg, core: core, prog: prog, servers: map[uint16]netip.AddrPort{}, log: cfg.Log,
		inputs: make(chan ctlcore.Input, 1024), adminW: map[uint16]chan dataplane.AdminReply{},
		serverW: map[uint64]chan serverReply{}}
	for _, s := range cfg.Core.Servers {
		c.servers[s.Num] = s.Addr
	}
	if cfg.StateFile != "" {
		tok, at, err := readCheckpoint(cfg.StateFile)
		if err != nil {
			return nil, err
		}
		core.Observe(tok, at)
		c.savedTok = tok
	}
	c.snap.Store(&Snapshot{})
	if cfg.Registerer != nil {
		if err := cfg.Registerer.Register(&collector{c: c}); err != nil {
			return nil, fmt.Errorf("controller: register metrics: %w", err)
		}
	}
	return c, nil
}

// Snapshot returns the controller's state as of its last step.
func (c *Controller) Snapshot() Snapshot { return *c.snap.Load() }

// Run connects to the switch and runs the controller until ctx ends. It returns nil on ctx's
// end.
func (c *Controller) Run(ctx context.Context) error {
	cl, err := p4rtclient.Dial(c.cfg.Switch)
	if err != nil {
		c.cfg.AdminConn.Close()
		return err
	}
	c.mu.Lock()
	c.cl = cl
	c.mu.Unlock()
	ectx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		cl.Close()
		c.cfg.AdminConn.Close()
		wg.Wait()
		// A controller that stopped is nobody's primary, whatever its last step saw.
		c.snap.Store(&Snapshot{Phase: ctlcore.Backup, Term: c.core.Term(), Stats: c.core.Stats(), Stopped: true})
	}()
	sub := cl.Subscribe("admin replies", func(p *p4rtclient.PacketIn) bool {
		r, _ := p.Uint("reason")
		return r == dataplane.PacketInAdminReply
	}, 4096)
	wg.Add(3)
	go func() {
		defer wg.Done()
		c.packetIns(sub)
	}()
	go func() {
		defer wg.Done()
		c.adminReplies()
	}()
	go func() {
		defer wg.Done()
		c.watchPrimary(ectx, cl)
	}()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	step := func(in ctlcore.Input) {
		for _, e := range c.core.Step(time.Now(), in) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := c.exec(ectx, cl, e)
				select {
				case c.inputs <- r:
				case <-ectx.Done():
				}
			}()
		}
		c.publish(cl)
		if d := c.core.NextDeadline(); !d.IsZero() {
			timer.Reset(max(time.Until(d), 0))
		}
	}
	for {
		select {
		case <-ctx.Done():
			c.core.Stop(time.Now())
			return nil
		case in := <-c.inputs:
			step(in)
		case <-timer.C:
			step(ctlcore.Tick{})
		}
	}
}

// watchPrimary tells the core about every change of the P4Runtime election.
func (c *Controller) watchPrimary(ctx context.Context, cl *p4rtclient.Client) {
	last := false
	for {
		ch := cl.Changed()
		p := cl.IsPrimary()
		if p != last {
			last = p
			select {
			case c.inputs <- ctlcore.Primary{IsPrimary: p}:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

func (c *Controller) publish(cl *p4rtclient.Client) {
	c.snap.Store(&Snapshot{Phase: c.core.Phase(), Term: c.core.Term(), Primary: cl.IsPrimary(), Stats: c.core.Stats(),
		Locks: c.core.SwitchLockIDs()})
	if c.cfg.StateFile != "" {
		tok, at := c.core.Checkpoint()
		if tok != c.savedTok && time.Since(c.saved) > time.Second {
			if err := writeCheckpoint(c.cfg.StateFile, tok, at); err != nil {
				c.log.Error("saving the token checkpoint", "err", err)
			} else {
				c.savedTok, c.saved = tok, time.Now()
			}
		}
	}
}

// exec carries out one effect and returns its result.
func (c *Controller) exec(ctx context.Context, cl *p4rtclient.Client, e ctlcore.Effect) ctlcore.Result {
	r := ctlcore.Result{ID: e.EffectID()}
	switch e := e.(type) {
	case ctlcore.Write:
		wctx, cancel := context.WithTimeout(ctx, c.cfg.WriteTimeout)
		defer cancel()
		r.Err = c.write(wctx, cl, e)
	case ctlcore.PushPipeline:
		wctx, cancel := context.WithTimeout(ctx, c.cfg.WriteTimeout)
		defer cancel()
		r.Err = cl.SetPipeline(wctx, c.prog, e.Cookie)
	case ctlcore.GetPipeline:
		wctx, cancel := context.WithTimeout(ctx, c.cfg.WriteTimeout)
		defer cancel()
		pi, err := cl.LoadPipeline(wctx)
		r.HasPipeline, r.Err = pi != nil, err
	case ctlcore.ReadLocks:
		wctx, cancel := context.WithTimeout(ctx, c.cfg.WriteTimeout)
		defer cancel()
		r.Locks, r.Hits, r.Err = c.readLocks(wctx, cl)
	case ctlcore.SwitchAdmin:
		r.Admin, r.Err = c.switchAdmin(ctx, cl, e.Req)
	case ctlcore.ServerAdmin:
		r.Server, r.Body, r.Err = c.serverAdmin(ctx, e.Server, e.Msg)
	default:
		r.Err = fmt.Errorf("controller: unknown effect %T", e)
	}
	if r.Err != nil {
		c.log.Debug("effect failed", "effect", e.String(), "err", r.Err)
	}
	return r
}

// switchAdmin sends an admin PacketOut and waits for its PacketIn.
func (c *Controller) switchAdmin(ctx context.Context, cl *p4rtclient.Client, req dataplane.AdminRequest) (dataplane.AdminReply, error) {
	ch := make(chan dataplane.AdminReply, 1)
	c.mu.Lock()
	for {
		c.adminID++
		if _, busy := c.adminW[c.adminID]; !busy {
			break
		}
	}
	req.ID = c.adminID
	c.adminW[req.ID] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.adminW, req.ID)
		c.mu.Unlock()
	}()
	err := cl.SendPacketOut(ctx, req.Frame(nil, c.cfg.Core.Rack.Key), []p4rtclient.Param{
		{Name: "kind", Value: []byte{dataplane.PacketOutAdmin}}, {Name: "egress_port", Value: []byte{0}},
		{Name: "pad", Value: []byte{0}}})
	if err != nil {
		return dataplane.AdminReply{}, err
	}
	t := time.NewTimer(c.cfg.AdminTimeout)
	defer t.Stop()
	select {
	case rep := <-ch:
		return rep, nil
	case <-t.C:
		return dataplane.AdminReply{}, fmt.Errorf("switch admin %d of lock %d: %w", req.Op, req.Lock, ctlcore.ErrTimeout)
	case <-ctx.Done():
		return dataplane.AdminReply{}, ctx.Err()
	}
}

// packetIns hands admin replies to their waiters.
func (c *Controller) packetIns(sub *p4rtclient.Subscription) {
	for p := range sub.C {
		rep, err := dataplane.ParseAdminReply(p.Payload)
		if err != nil {
			c.log.Debug("packet-in that is not an admin reply", "err", err)
			continue
		}
		c.mu.Lock()
		ch := c.adminW[rep.ID]
		delete(c.adminW, rep.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- rep
		}
	}
}

// serverAdmin sends an admin request to server n and waits for the answer.
func (c *Controller) serverAdmin(ctx context.Context, n uint16, msg wire.Fields) (wire.Fields, []byte, error) {
	to, ok := c.servers[n]
	if !ok {
		return wire.Fields{}, nil, fmt.Errorf("controller: no server %d", n)
	}
	ch := make(chan serverReply, 1)
	c.mu.Lock()
	c.serverW[msg.Txn] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.serverW, msg.Txn)
		c.mu.Unlock()
	}()
	b := append(wire.Append(nil, &msg), make([]byte, wire.AuthLen)...)
	wire.SetRackKey(b, c.cfg.Core.Rack.Key)
	c.sendMu.Lock()
	_, err := c.cfg.AdminConn.WriteTo(b, net.UDPAddrFromAddrPort(to))
	c.sendMu.Unlock()
	if err != nil {
		return wire.Fields{}, nil, fmt.Errorf("controller: server %d: %w", n, err)
	}
	t := time.NewTimer(c.cfg.AdminTimeout)
	defer t.Stop()
	select {
	case r := <-ch:
		return r.f, r.body, nil
	case <-t.C:
		return wire.Fields{}, nil, fmt.Errorf("server %d admin %d: %w", n, msg.Status, ctlcore.ErrTimeout)
	case <-ctx.Done():
		return wire.Fields{}, nil, ctx.Err()
	}
}

// adminReplies reads the servers' answers: only from a configured server's address, only with
// the rack key (docs/protocol.md, "Who may send what").
func (c *Controller) adminReplies() {
	buf := make([]byte, 4096)
	known := map[netip.AddrPort]bool{}
	for _, a := range c.servers {
		known[a] = true
	}
	for {
		n, from, err := c.cfg.AdminConn.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "closed") {
				return
			}
			continue
		}
		src := addrPortOf(from)
		h, err := wire.Parse(buf[:n])
		if err != nil || !known[src] {
			continue
		}
		var f wire.Fields
		h.Decode(&f)
		if f.Op == wire.OpAdmin {
			if k, ok := wire.RackKey(buf[:n]); !ok || k != c.cfg.Core.Rack.Key {
				continue
			}
		}
		var body []byte
		if n > wire.ControlLen {
			body = append([]byte(nil), buf[wire.ControlLen:n]...)
		}
		c.mu.Lock()
		ch := c.serverW[f.Txn]
		delete(c.serverW, f.Txn)
		c.mu.Unlock()
		if ch != nil {
			ch <- serverReply{f: f, body: body}
		}
	}
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// readCheckpoint reads the token checkpoint ("max_token N at_unixnano T"); a missing file is
// none.
func readCheckpoint(path string) (uint64, time.Time, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, time.Time{}, nil
	}
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("controller: state file: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 4 || f[0] != "max_token" || f[2] != "at_unixnano" {
		return 0, time.Time{}, fmt.Errorf("controller: state file %s: want \"max_token N at_unixnano T\"", path)
	}
	tok, err1 := strconv.ParseUint(f[1], 10, 64)
	at, err2 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, time.Time{}, fmt.Errorf("controller: state file %s: bad number", path)
	}
	return tok, time.Unix(0, at), nil
}

// writeCheckpoint replaces the state file atomically (temporary file, fsync, rename).
func writeCheckpoint(path string, tok uint64, at time.Time) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(tmp, "max_token %d at_unixnano %d\n", tok, at.UnixNano())
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
