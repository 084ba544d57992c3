package rackmodel

import (
	"fmt"
	"io/fs"
	"net/netip"
	"path"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/wire"
)

// vswitch is the ToR switch: p4/netlock.p4 on the engine (Tofino-constraint mode), whose clock is
// the virtual clock. The engine runs a packet's passes at once; the model charges the pipeline
// SwitchLatency for the first pass and PassLatency for each further one, and occupies it for
// 1/SwitchMpps per pass (line rate).
type vswitch struct {
	r        *Rack
	dp       *dpengine.Switch
	up       bool  // false from a restart until the switch is back
	pipeline bool  // a program is pushed (false after a restart until the controller pushes it)
	now      int64 // the engine's clock while it processes a packet
	passes   int   // ingress passes of the packet being processed (applications of the rack table)
	pipeFree int64 // picoseconds
	fr       udpframe.Frame
}

func newSwitch(r *Rack) (*vswitch, error) {
	s := &vswitch{r: r, up: true, pipeline: true}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// load loads a fresh program: empty tables, zero registers (a switch that just booted).
func (s *vswitch) load() error {
	src := p4.Netlock
	if s.r.cfg.Fault.Program != nil {
		src = s.r.cfg.Fault.Program
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
	sw, err := engine.Load(checked, cfg)
	if err != nil {
		return fmt.Errorf("rackmodel: %w", err)
	}
	s.dp = &dpengine.Switch{Switch: sw, Sizing: sz}
	return nil
}

func (s *vswitch) cpuPort() int {
	if s.r.p.Sizing.CPUPort != 0 {
		return s.r.p.Sizing.CPUPort
	}
	return dataplane.DefaultSizing.CPUPort
}

// program writes what a controller writes at bring-up (docs/dataplane.md, "Bring-up"): the rack,
// the lock servers, the routes and clone sessions. Lock entries come later (install).
func (s *vswitch) program() error {
	r := s.r
	if err := s.dp.SetRack(dataplane.Rack{Key: r.key, SwitchIP: switchIP, SwitchMAC: switchMAC,
		DefaultLease: r.p.Lease, MaxLease: 2 * r.p.Lease}); err != nil {
		return err
	}
	for _, id := range r.idents {
		if err := s.setServer(id); err != nil {
			return err
		}
	}
	for _, c := range r.clients {
		if err := s.route(c.ip, c.port); err != nil {
			return err
		}
	}
	s.dp.AddPortSession(s.cpuPort())
	return nil
}

// setServer points server number id.home (its address) at the machine that hosts it.
func (s *vswitch) setServer(id *identity) error {
	port := id.host.port
	if err := s.dp.SetServer(uint16(id.home), dataplane.Server{Addr: id.addr, Port: port, MAC: macFor(id.addr.Addr())}); err != nil {
		return err
	}
	s.dp.AddPortSession(port)
	return s.route(id.addr.Addr(), port)
}

func (s *vswitch) route(ip netip.Addr, port int) error {
	return s.dp.AddRoute(netip.PrefixFrom(ip, 32), dataplane.NextHop{SrcMAC: switchMAC, DstMAC: macFor(ip), Port: port})
}

// arrive runs a frame that arrived on port through the pipeline.
func (s *vswitch) arrive(port int, frame []byte) {
	r := s.r
	if !s.up || !s.pipeline {
		r.stats.SwitchDropped++
		return
	}
	passPS := int64(1e6/r.p.SwitchMpps + 0.5) // picoseconds per pass
	startPS := max(r.sim.now*1000, s.pipeFree)
	start := (startPS + 999) / 1000
	s.now, s.passes = start, 0
	var in wire.Fields
	inOK := parse(frame, &s.fr, &in) == nil
	res, err := s.dp.Process(port, frame)
	r.stats.SwitchPackets++
	if err != nil {
		r.stats.EngineErrors++
		r.log.Error("rackmodel: engine", "err", err, "port", port)
		return
	}
	passes := max(1, s.passes)
	r.stats.SwitchPasses += uint64(passes)
	s.pipeFree = startPS + int64(passes)*passPS
	dep := start + int64(r.p.SwitchLatency) + int64(passes-1)*int64(r.p.PassLatency)
	s.emit(res.Out, dep, inOK && in.Op != wire.OpGrant)
	r.stats.PacketIns += uint64(len(res.PacketIn))
}

// emit sends the packets a pipeline run sent out, leaving the switch at dep. countGrants says
// whether a grant among them was made by the switch (not a server's grant it routed).
func (s *vswitch) emit(out []engine.Output, dep int64, countGrants bool) {
	r := s.r
	for _, o := range out {
		data := append([]byte(nil), o.Data...)
		if countGrants {
			var f wire.Fields
			if parse(data, &s.fr, &f) == nil && f.Op == wire.OpGrant {
				r.stats.SwitchGrants++
				r.series.grant(dep, true)
				if r.cfg.Fault.DropGrant > 0 && r.stats.SwitchGrants == r.cfg.Fault.DropGrant {
					continue // the negative control: this grant is lost
				}
			}
		}
		r.deliver(o.Port, dep, data)
	}
}

// admin sends an admin request through the CPU port now and returns the switch's reply.
func (s *vswitch) admin(req dataplane.AdminRequest) (dataplane.AdminReply, error) {
	if !s.up || !s.pipeline {
		return dataplane.AdminReply{}, fmt.Errorf("rackmodel: admin %d: %w", req.Op, errSwitchDown)
	}
	s.now = s.r.sim.now
	res, err := s.dp.Process(s.cpuPort(), req.PacketOut(nil, s.r.key))
	if err != nil {
		return dataplane.AdminReply{}, fmt.Errorf("rackmodel: admin %d: %w", req.Op, err)
	}
	// A force-release sends packets (the holder's reject, grants onward).
	s.emit(res.Out, s.now+int64(s.r.p.SwitchLatency), true)
	for _, pi := range res.PacketIn {
		_, _, fr, err := dataplane.ParsePacketIn(pi)
		if err != nil {
			continue
		}
		if rep, err := dataplane.ParseAdminReply(fr); err == nil && rep.ID == req.ID {
			return rep, nil
		}
	}
	return dataplane.AdminReply{}, fmt.Errorf("rackmodel: admin %d on lock %d: no reply", req.Op, req.Lock)
}

// adminOK sends an admin request and wants result ok.
func (s *vswitch) adminOK(req dataplane.AdminRequest) error {
	rep, err := s.admin(req)
	if err == nil && rep.Result != dataplane.AdminOK {
		err = fmt.Errorf("admin %d on lock %d: result %d", req.Op, req.Lock, rep.Result)
	}
	return err
}

// drops returns the program's drop counter.
func (s *vswitch) drops() [dataplane.DropReasons]uint64 {
	d, _ := s.dp.Drops()
	return d
}
