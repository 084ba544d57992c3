package rackmodel

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strconv"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/p4/netchain"
	"github.com/netlock-go/netlock/wire"
)

// vswitch is the ToR switch: p4/netlock.p4 on the engine (Tofino-constraint mode), whose clock is
// the virtual clock. The engine runs a packet's passes at once; the model charges the pipeline
// SwitchLatency for the first pass and PassLatency for each further one, and occupies it for
// 1/SwitchMpps per pass (line rate). The controller programs it (control.go): until its pipeline
// is pushed the switch forwards nothing.
type vswitch struct {
	r        *Rack
	dp       *dpengine.Switch // nil until the controller pushes the pipeline
	nc       *netchain.Switch // the NetChain baseline's program instead (Config.NetChain)
	up       bool             // false from a restart until the switch is back
	now      int64            // the engine's clock while it processes a packet
	passes   int              // ingress passes of the packet being processed (applications of the rack table)
	pipeFree int64            // picoseconds
	fr       udpframe.Frame
}

// errSwitchDown is the answer of a switch that is down or has no pipeline to an admin packet.
var errSwitchDown = errors.New("rackmodel: the switch is down or has no pipeline")

// logAcquire is the line netlock.p4 logs for every acquire it takes into a lock's queue (the
// switch's acceptance order).
var logAcquire = regexp.MustCompile(`netlock: acquire lock=(\d+) txn=(\d+)`)

// load loads a fresh program (empty tables, zero registers): the controller's pipeline push.
func (s *vswitch) load() error {
	src := p4.Netlock
	if s.r.cfg.TestingKnobs.Program != nil {
		src = s.r.cfg.TestingKnobs.Program
	}
	sz := s.r.p.Sizing
	read := func(name string) ([]byte, error) {
		if path.Clean(name) == p4.NetlockFile {
			return src, nil
		}
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	checked, err := front.LoadOptions(p4.NetlockFile, front.Options{Defines: sz.Defines(), ReadFile: read})
	if err != nil {
		return fmt.Errorf("rackmodel: %w", err)
	}
	cfg := engine.Config{
		TofinoConstraints: true,
		CPUPort:           s.cpuPort(),
		Now:               func() time.Time { return vtime(s.now) },
		OnTable: func(table, _ string, _ bool) {
			if table == dataplane.TableRack {
				s.passes++
			}
		},
	}
	if s.r.accept != nil {
		cfg.Log = s.logLine
	}
	sw, err := engine.Load(checked, cfg)
	if err != nil {
		return fmt.Errorf("rackmodel: %w", err)
	}
	s.dp = &dpengine.Switch{Switch: sw, Sizing: sz}
	return nil
}

// logLine reads the switch's log for its acceptance order (Config.Record).
func (s *vswitch) logLine(line string) {
	m := logAcquire.FindStringSubmatch(line)
	if m == nil {
		return
	}
	lock, _ := strconv.ParseUint(m[1], 10, 32)
	txn, _ := strconv.ParseUint(m[2], 10, 64)
	s.r.accept.Observe(wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Lock: uint32(lock), Txn: txn}))
}

func (s *vswitch) cpuPort() int {
	if s.r.p.Sizing.CPUPort != 0 {
		return s.r.p.Sizing.CPUPort
	}
	return dataplane.DefaultSizing.CPUPort
}

// running reports whether the switch forwards: up, with a pipeline.
func (s *vswitch) running() bool { return s.up && (s.dp != nil || s.nc != nil) }

// process runs a frame through the program loaded: netlock.p4 or, in a NetChain rack, netchain.p4.
func (s *vswitch) process(port int, frame []byte) (*engine.Result, error) {
	if s.nc != nil {
		return s.nc.Process(port, frame)
	}
	return s.dp.Process(port, frame)
}

// arrive runs a frame that arrived on port through the pipeline.
func (s *vswitch) arrive(port int, frame []byte) {
	r := s.r
	if !s.running() {
		r.stats.SwitchDropped++
		return
	}
	startPS := s.enter()
	var in wire.Fields
	inOK := parse(frame, &s.fr, &in) == nil
	res, err := s.process(port, frame)
	r.stats.SwitchPackets++
	if err != nil {
		r.stats.EngineErrors++
		r.log.Error("rackmodel: engine", "err", err, "port", port)
		return
	}
	dep, passes := s.leave(startPS)
	r.stats.SwitchPasses += uint64(passes)
	s.emit(res.Out, dep, inOK && in.Op != wire.OpGrant)
	r.stats.PacketIns += uint64(len(res.PacketIn))
}

// enter starts a packet's pipeline run: when the pipeline is free, at the model's clock or later
// (picoseconds); the engine's clock (s.now) reads the run's start. Every packet the switch
// processes enters here, the controller's admin packets on the CPU port too: a packet processed
// later is stamped no earlier and leaves no earlier than one processed before it.
func (s *vswitch) enter() (startPS int64) {
	startPS = max(s.r.k.Now()*1000, s.pipeFree)
	s.now, s.passes = (startPS+999)/1000, 0
	return startPS
}

// leave ends the run entered at startPS: it occupies the pipeline for its passes at line rate and
// returns when its packets leave the switch and the passes.
func (s *vswitch) leave(startPS int64) (dep int64, passes int) {
	r := s.r
	passes = max(1, s.passes)
	s.pipeFree = startPS + int64(passes)*int64(1e6/r.p.SwitchMpps+0.5)
	return s.now + int64(r.p.SwitchLatency) + int64(passes-1)*int64(r.p.PassLatency), passes
}

// emit sends the packets a pipeline run sent out, leaving the switch at dep. countGrants says
// whether a grant among them was made by the switch (not a server's grant it routed).
func (s *vswitch) emit(out []engine.Output, dep int64, countGrants bool) {
	r := s.r
	for _, o := range out {
		data := append([]byte(nil), o.Data...)
		var f wire.Fields
		if parse(data, &s.fr, &f) == nil && f.Op == wire.OpGrant {
			if r.accept != nil {
				r.accept.ObserveSent(s.fr.Payload)
			}
			if countGrants {
				r.stats.SwitchGrants++
				r.series.grant(dep, true)
				if k := r.cfg.TestingKnobs.DropGrant; k > 0 && r.stats.SwitchGrants == k {
					continue // the negative control: this grant is lost
				}
			}
		}
		r.deliver(o.Port, dep, data)
	}
}

// admin sends an admin request through the CPU port now and returns the switch's reply.
func (s *vswitch) admin(req dataplane.AdminRequest) (dataplane.AdminReply, error) {
	if !s.running() {
		return dataplane.AdminReply{}, fmt.Errorf("admin %d: %w", req.Op, errSwitchDown)
	}
	startPS := s.enter()
	res, err := s.dp.Process(s.cpuPort(), req.PacketOut(nil, s.r.key))
	if err != nil {
		s.r.stats.EngineErrors++
		return dataplane.AdminReply{}, fmt.Errorf("rackmodel: admin %d: %w", req.Op, err)
	}
	dep, _ := s.leave(startPS)
	// A force-release sends packets (the holder's reject, grants onward).
	s.emit(res.Out, dep, true)
	var reply *dataplane.AdminReply
	for _, pi := range res.PacketIn {
		_, _, fr, err := dataplane.ParsePacketIn(pi)
		if err != nil {
			s.r.stats.PacketIns++
			continue
		}
		if rep, err := dataplane.ParseAdminReply(fr); err == nil && rep.ID == req.ID && reply == nil {
			reply = &rep
			continue
		}
		s.r.stats.PacketIns++
	}
	if reply == nil {
		return dataplane.AdminReply{}, fmt.Errorf("rackmodel: admin %d on lock %d: no reply", req.Op, req.Lock)
	}
	return *reply, nil
}

// apply carries out a controller's Write on the engine's runtime API.
func (s *vswitch) apply(w ctlcore.Write) error {
	if !s.running() {
		return errSwitchDown
	}
	for _, u := range w.Updates {
		e := u.Entity
		var err error
		switch {
		case e.Rack != nil:
			err = s.dp.SetRack(*e.Rack)
		case e.Server != nil:
			err = s.dp.SetServer(e.ServerNum, *e.Server)
		case e.Route != nil:
			if err = s.dp.AddRoute(e.Prefix, *e.Route); err == nil {
				s.r.served[e.Prefix.Addr()] = e.Route.Port
			}
		case e.Lock != nil:
			if u.Op == ctlcore.Delete {
				if err = s.dp.DeleteLock(e.Lock.Lock); errors.Is(err, engine.ErrNotFound) {
					err = fmt.Errorf("%w: %v", ctlcore.ErrNotFound, err)
				}
			} else {
				err = s.dp.SetLock(*e.Lock)
			}
		case e.Tenant != nil:
			err = s.dp.SetTenantLimit(e.Tenant.ID, e.Tenant.Meter, e.Tenant.Rate, e.Tenant.Burst)
		default:
			s.dp.AddPortSession(e.ClonePort)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readLocks reads the lock table and its direct counters (ctlcore.ReadLocks).
func (s *vswitch) readLocks() (ctlcore.Result, error) {
	if !s.running() {
		return ctlcore.Result{}, errSwitchDown
	}
	t, err := s.dp.Table(dataplane.TableLock)
	if err != nil {
		return ctlcore.Result{}, err
	}
	res := ctlcore.Result{Hits: map[uint32]uint64{}}
	for _, e := range t.Entries() {
		le, err := dataplane.ParseLockEntry(e.Match[0].Value, e.Action, e.Args)
		if err != nil {
			return ctlcore.Result{}, err
		}
		res.Locks = append(res.Locks, le)
		res.Hits[le.Lock] = e.Packets
	}
	return res, nil
}

// drops returns the program's drop counter.
func (s *vswitch) drops() [dataplane.DropReasons]uint64 {
	if s.dp == nil {
		return [dataplane.DropReasons]uint64{}
	}
	d, _ := s.dp.Drops()
	return d
}
