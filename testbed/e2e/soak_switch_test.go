package e2e

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/p4"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/p4/netlockgen"
	"github.com/netlock-go/netlock/testbed/hostshim"
	"github.com/netlock-go/netlock/wire"
	// The generated pipeline of p4/netlock.p4 (-soak.pipeline gen), which the rack tests here
	// run too (softrack.Config.Generated).
)

// soakSwitch is the soak's switch path (-soak.path switch): p4/netlock.p4 on the execution
// engine between the clients and the servers. Every lock server and every client is a host of
// the virtual rack (testbed/hostshim, addresses from hostshim.DefaultPlan) on an in-memory
// switch port; the client library and the lock server run unchanged on host sockets.
//
// The switch is configured as a rack's control plane brings it up (docs/dataplane.md,
// "Bring-up"): the rack (key, the switch's address, leases), the lock servers, a route and a
// clone session per host. With -soak.switch-locks (soakConfig.switchLocks; make soak sets it) a
// quarter of every round's locks live in the switch (isSwitchLock):
// when a round opens their lock_table entries go in (regions of two slots per level, so that
// acquires overflow to the server's q2 and come back by queue-empty and push-back often), and
// when the round is checked they go out. The soak plays the control plane's part for them with
// the sweep rules controlplane/ctlcore uses (p4/dataplane's SlotProbes and AdminReply.LeaseExpired;
// docs/controlplane.md): a lease sweep over admin packets (probe every
// occupied slot, force-release a grant whose lease ran out on the switch's clock: crashed holders
// and holders that lost their lease under packet loss), a repeated queue-empty for a lock whose
// switch queue stayed empty with requests counted as buffered (AdminSwitchSetBuffered), and on a
// server failover the switch's buffered counts of that server's locks set to 0 (its q2 died with
// it).
type soakSwitch struct {
	sw      *dpengine.Switch
	mu      sync.Mutex // serializes every engine call: the engine is not safe for concurrent use
	ports   map[int]port.Port
	servers []*hostshim.Host // slot s (0-based) on switch port 1+s: partition s, then the twin
	clients []*hostshim.Host // on switch ports 101..
	wg      sync.WaitGroup

	frames, errs atomic.Uint64

	links       []soakLink
	switchLocks bool            // soakConfig.switchLocks: roundLocks is empty without it
	locks       int             // per round (soakConfig.locks)
	lease       time.Duration   // the switch's default and maximum lease
	servers0    int             // partitions
	installed   map[int64]bool  // guarded by mu: rounds whose switch locks are in lock_table
	stuck       map[uint32]bool // guarded by mu: switch locks the last sweep saw empty with requests buffered
	cpu         int
	nextID      uint16 // guarded by mu: admin request ids
	sweepStop   chan struct{}
	sweepDone   chan struct{} // nil until the sweeper runs
	adminErrs   atomic.Uint64
	sweeps      atomic.Uint64
	forced      atomic.Uint64 // grants force-released by the sweep
	requeued    atomic.Uint64 // repeated queue-empty (AdminSwitchSetBuffered on a stuck lock)
	failResets  atomic.Uint64 // buffered counts set to 0 on failover
}

// soakLink is the cable of one host: its two ends.
type soakLink struct {
	server bool
	ends   [2]*port.MemPort
}

// linkDrops returns the frames the links dropped because a receive queue was full, on the
// servers' links and on the clients'.
func (s *soakSwitch) linkDrops() (servers, clients uint64) {
	for _, l := range s.links {
		n := l.ends[0].Drops() + l.ends[1].Drops()
		if l.server {
			servers += n
		} else {
			clients += n
		}
	}
	return servers, clients
}

// soakRackKey is the rack key of the soak's switch and servers.
const soakRackKey = 0x50a4_5eed_0000_0001

var soakPlan = hostshim.DefaultPlan

// soakMutantFrom and soakMutantTo are the switch-mutant negative control's change to
// p4/netlock.p4: an exclusive acquire is granted at once whoever holds the lock.
const (
	soakMutantFrom = "meta.compat = (nhold == 0) ? 8w1 : 8w0;\n        } else if (level == 0) {"
	soakMutantTo   = "meta.compat = 8w1;\n        } else if (level == 0) {"
)

// loadSoakProgram loads p4/netlock.p4, or with broken == "switch-mutant" the mutant above. The
// interpreter runs it in Tofino-constraint mode; with pl engine.PipelineGenerated its generated
// pipeline (p4/netlockgen) runs it, without that check, which the generated code does not make
// (the differential tests of package dataplane prove both pipelines equal on p4/netlock.p4).
// The mutant has no generated pipeline (Load refuses to bind it).
func loadSoakProgram(broken string, pl engine.Pipeline) (*dpengine.Switch, error) {
	ecfg := engine.Config{TofinoConstraints: true, Pipeline: engine.PipelineInterpreted}
	if pl == engine.PipelineGenerated {
		ecfg = engine.Config{Pipeline: engine.PipelineGenerated, Generated: netlockgen.NetlockPipeline}
	}
	if broken != "switch-mutant" {
		return dpengine.Load(dataplane.Sizing{}, ecfg)
	}
	src := string(p4.Netlock)
	if strings.Count(src, soakMutantFrom) != 1 {
		return nil, fmt.Errorf("soak: the mutation site %q is not in p4/netlock.p4 exactly once", soakMutantFrom)
	}
	src = strings.Replace(src, soakMutantFrom, soakMutantTo, 1)
	sz := dataplane.DefaultSizing
	checked, err := front.LoadOptions(p4.NetlockFile, front.Options{Defines: sz.Defines(),
		ReadFile: func(string) ([]byte, error) { return []byte(src), nil }})
	if err != nil {
		return nil, err
	}
	ecfg.CPUPort = sz.CPUPort
	e, err := engine.Load(checked, ecfg)
	if err != nil {
		return nil, err
	}
	return &dpengine.Switch{Switch: e, Sizing: sz}, nil
}

func startSoakSwitch(cfg *soakConfig) (*soakSwitch, error) {
	sw, err := loadSoakProgram(cfg.broken, cfg.pipeline)
	if err != nil {
		return nil, err
	}
	s := &soakSwitch{sw: sw, ports: map[int]port.Port{}, locks: cfg.locks, lease: cfg.lease, servers0: cfg.servers,
		installed: map[int64]bool{}, stuck: map[uint32]bool{}, cpu: dataplane.DefaultSizing.CPUPort,
		sweepStop: make(chan struct{})}
	swMAC := hostshim.MACFor(soakPlan.Switch())
	if err := sw.SetRack(dataplane.Rack{Key: soakRackKey, SwitchIP: soakPlan.Switch(), SwitchMAC: swMAC,
		DefaultLease: cfg.lease, MaxLease: cfg.lease}); err != nil {
		return nil, err
	}
	// attach puts a host on switch port num. The servers' links get queues long enough never to
	// drop a frame (the program assumes the links between the switch and its servers lose
	// nothing: a lost overflow or push-back leaves its buffered count wrong); a client's link
	// drops frames when its queue is full, as a congested network would.
	attach := func(addr netip.Addr, num int, queue int) (*hostshim.Host, error) {
		hostEnd, swEnd := port.NewMem(addr.String(), queue), port.NewMem(fmt.Sprintf("s1-p%d", num), queue)
		port.Link(hostEnd, swEnd)
		s.links = append(s.links, soakLink{server: queue > 0, ends: [2]*port.MemPort{hostEnd, swEnd}})
		h, err := hostshim.New(hostshim.Config{Addr: addr, Gateway: swMAC, Link: hostEnd})
		if err != nil {
			hostEnd.Close()
			swEnd.Close()
			return nil, err
		}
		s.ports[num] = swEnd
		err = sw.AddRoute(netip.PrefixFrom(addr, 32), dataplane.NextHop{SrcMAC: swMAC, DstMAC: h.MAC(), Port: num})
		return h, err
	}
	fail := func(err error) (*soakSwitch, error) {
		s.close()
		return nil, err
	}
	for slot := range cfg.servers + 1 { // the last one is split brain's twin
		addr := soakPlan.Server(1 + slot)
		h, err := attach(addr, 1+slot, 1<<16)
		if err != nil {
			return fail(err)
		}
		s.servers = append(s.servers, h)
		if err := sw.SetServer(uint16(1+slot), dataplane.Server{Addr: netip.AddrPortFrom(addr, wire.Port),
			Port: 1 + slot, MAC: h.MAC()}); err != nil {
			return fail(err)
		}
	}
	for i := range cfg.clients {
		h, err := attach(soakPlan.Client(1+i), 101+i, 0)
		if err != nil {
			return fail(err)
		}
		s.clients = append(s.clients, h)
	}
	for num := range s.ports {
		sw.AddPortSession(num)
	}
	s.switchLocks = cfg.switchLocks
	if err := s.openRound(0); err != nil {
		return fail(err)
	}
	for num, p := range s.ports {
		s.wg.Add(1)
		go s.forward(num, p)
	}
	s.sweepDone = make(chan struct{})
	go s.sweeper(cfg.lease / 4)
	return s, nil
}

// soakRegion is the size of a switch lock's region at each priority level: small, so that
// acquires overflow to the server's q2 often.
const soakRegion = 4

// isSwitchLock reports whether lock lives in the switch: a quarter of every round's locks, in
// both partitions (lock mod 8 is 0 or 1, partitions are lock mod 2).
func isSwitchLock(lock uint32, locks int) bool { return (lock%uint32(locks))%8 < 2 }

// entry returns the lock_table entry of switch lock i (of locks) in round: indices and regions
// of rounds that may be installed together (the running one and the one being checked) never
// overlap; four rounds take turns.
func (s *soakSwitch) entry(round int64, lock uint32) dataplane.LockEntry {
	i := lock % uint32(s.locks)
	per := uint32(s.locks/4 + 1)
	idx := uint32(round%4)*per + (i/8)*2 + i%8
	return dataplane.LockEntry{Lock: lock, Index: idx, Server: uint16(1 + int(lock)%s.servers0),
		Regions: [dataplane.Levels]dataplane.Region{{Left: 2 * soakRegion * idx, Size: soakRegion},
			{Left: 2*soakRegion*idx + soakRegion, Size: soakRegion}}}
}

// roundLocks returns the switch locks of round.
func (s *soakSwitch) roundLocks(round int64) []uint32 {
	var out []uint32
	if !s.switchLocks {
		return nil
	}
	base := uint32(round) * uint32(s.locks)
	for i := range uint32(s.locks) {
		if isSwitchLock(base+i, s.locks) {
			out = append(out, base+i)
		}
	}
	return out
}

// openRound puts round's switch locks into lock_table, each with a fresh queue (reset: its
// index may have served a lock of an earlier round).
func (s *soakSwitch) openRound(round int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.roundLocks(round) {
		if err := s.sw.SetLock(s.entry(round, l)); err != nil {
			return err
		}
		if rep, err := s.adminLocked(dataplane.AdminRequest{Op: wire.AdminSwitchReset, Lock: l}); err != nil {
			return err
		} else if rep.Result != dataplane.AdminOK {
			return fmt.Errorf("soak: reset of switch lock %d: result %d", l, rep.Result)
		}
	}
	s.installed[round] = true
	return nil
}

// closeRounds takes the switch locks of the rounds before next out of lock_table.
func (s *soakSwitch) closeRounds(next int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for round := range s.installed {
		if round >= next {
			continue
		}
		for _, l := range s.roundLocks(round) {
			if err := s.sw.DeleteLock(l); err != nil {
				return err
			}
			delete(s.stuck, l)
		}
		delete(s.installed, round)
	}
	return nil
}

// adminLocked sends one admin request as a PacketOut, forwards what the switch sends to hosts
// (a force-release tells the holder and grants onward; set-buffered sends queue-empty) and
// returns the switch's answer. Precondition: s.mu is held.
func (s *soakSwitch) adminLocked(req dataplane.AdminRequest) (dataplane.AdminReply, error) {
	s.nextID++
	req.ID = s.nextID
	res, err := s.sw.Process(s.cpu, req.PacketOut(nil, soakRackKey))
	s.frames.Add(1)
	if err != nil {
		s.errs.Add(1)
		return dataplane.AdminReply{}, err
	}
	s.sendLocked(res)
	if len(res.PacketIn) != 1 {
		return dataplane.AdminReply{}, fmt.Errorf("soak: admin %d of lock %d: %d packet-ins", req.Op, req.Lock, len(res.PacketIn))
	}
	_, _, frame, err := dataplane.ParsePacketIn(res.PacketIn[0])
	if err != nil {
		return dataplane.AdminReply{}, err
	}
	rep, err := dataplane.ParseAdminReply(frame)
	if err == nil && rep.ID != req.ID {
		err = fmt.Errorf("soak: admin reply %d to request %d", rep.ID, req.ID)
	}
	return rep, err
}

func (s *soakSwitch) admin(req dataplane.AdminRequest) (dataplane.AdminReply, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rep, err := s.adminLocked(req)
	if err != nil {
		s.adminErrs.Add(1)
	}
	return rep, err
}

// sendLocked sends a pass's outputs to their ports. Precondition: s.mu is held.
func (s *soakSwitch) sendLocked(res *engine.Result) {
	if res == nil {
		return
	}
	for _, o := range res.Out {
		if *soakTrace {
			soakDiag.add(s, o.Port, "out", o.Data)
		}
		if out := s.ports[o.Port]; out != nil {
			_ = out.Send(o.Data) // a closed host's port: the frame is lost, as on a wire
		}
	}
}

// sweeper runs the lease sweep every period until close.
func (s *soakSwitch) sweeper(period time.Duration) {
	defer close(s.sweepDone)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-s.sweepStop:
			return
		case <-t.C:
		}
		s.mu.Lock()
		var locks []uint32
		for round := range s.installed {
			locks = append(locks, s.roundLocks(round)...)
		}
		s.mu.Unlock()
		s.sweeps.Add(1)
		for _, l := range locks {
			s.sweepLock(l)
		}
	}
}

// sweepLock is one lock's share of a sweep, by the rules controlplane/ctlcore's sweep uses
// (dataplane.SlotProbes, AdminReply.LeaseExpired): probe the counters, then every occupied slot;
// force-release a live grant whose lease ran out on the switch's clock. The soak keeps its own
// loop around them because it places its locks itself, round by round, instead of by the
// controller's allocation. One rule is the soak's own: a lock whose queue-empty is owed
// (AdminReply.QueueEmptyOwed) at two sweeps in a row gets its count set again, which makes the
// switch send queue-empty at once. The soak's links to its servers drop packets (faultnet) but
// deliver within a sweep period, which that rule needs; the controller does not repeat
// queue-empties (controlplane/ctlcore/sweep.go says why).
func (s *soakSwitch) sweepLock(l uint32) {
	head, err := s.admin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: l})
	if err != nil || head.Result != dataplane.AdminOK {
		return // taken out of the table since the sweep started
	}
	empty := head.QueueEmptyOwed()
	s.mu.Lock()
	was := s.stuck[l]
	s.stuck[l] = empty && !was
	s.mu.Unlock()
	if empty && was {
		if rep, err := s.admin(dataplane.AdminRequest{Op: wire.AdminSwitchSetBuffered, Lock: l,
			Value: uint64(head.Buffered)}); err == nil && rep.Result == dataplane.AdminOK {
			s.requeued.Add(1)
		}
	}
	check := func(r dataplane.AdminReply) {
		if !r.LeaseExpired() {
			return
		}
		if f, err := s.admin(dataplane.AdminRequest{Op: wire.AdminSwitchForceRelease, Lock: l, Txn: r.Txn,
			Token: r.Token}); err == nil && f.Result == dataplane.AdminOK {
			s.forced.Add(1)
		}
	}
	if head.Used[0] > 0 {
		check(head)
	}
	for _, p := range dataplane.SlotProbes(l, head) {
		if r, err := s.admin(p); err == nil && r.Result == dataplane.AdminOK {
			check(r)
		}
	}
}

// failover replaces partition p's server as a control plane would for its switch locks: start
// runs the replacement while the switch stands still, and the switch's counts of requests
// buffered at the server are set to 0 (the old server's q2 is gone; a request that was in it is
// retransmitted by its client). Precondition: the old server has stopped.
func (s *soakSwitch) failover(p int, start func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := start(); err != nil {
		return err
	}
	for round := range s.installed {
		for _, l := range s.roundLocks(round) {
			if int(l)%s.servers0 != p {
				continue
			}
			rep, err := s.adminLocked(dataplane.AdminRequest{Op: wire.AdminSwitchSetBuffered, Lock: l})
			if err != nil {
				return err
			}
			if rep.Result != dataplane.AdminOK {
				return fmt.Errorf("soak: set-buffered of switch lock %d: result %d", l, rep.Result)
			}
			s.failResets.Add(1)
		}
	}
	return nil
}

// forward is switch port num's reader: every frame through the pipeline, its outputs to their
// ports.
func (s *soakSwitch) forward(num int, p port.Port) {
	defer s.wg.Done()
	buf := make([]byte, port.MaxFrame)
	for {
		n, err := p.Recv(buf)
		if err != nil {
			if errors.Is(err, port.ErrClosed) {
				return
			}
			continue
		}
		s.mu.Lock()
		if *soakTrace {
			soakDiag.add(s, num, "in", buf[:n])
		}
		res, err := s.sw.Process(num, buf[:n])
		s.frames.Add(1)
		if err != nil {
			s.errs.Add(1)
		}
		s.sendLocked(res)
		s.mu.Unlock()
	}
}

// serverAddr is the address of server slot (partition, or the twin after the partitions).
func (s *soakSwitch) serverAddr(slot int) string {
	return netip.AddrPortFrom(soakPlan.Server(1+slot), wire.Port).String()
}

// drops returns the switch's drop counter per reason, as "reason=n" for the non-zero ones.
func (s *soakSwitch) drops() string {
	s.mu.Lock()
	d, err := s.sw.Drops()
	s.mu.Unlock()
	if err != nil {
		return err.Error()
	}
	out := ""
	for i, n := range d {
		if n > 0 {
			out += fmt.Sprintf(" %s=%d", dataplane.DropNames[i], n)
		}
	}
	if out == "" {
		return " none"
	}
	return out
}

// close stops the sweep, closes the switch's ports and the hosts, and waits for the readers.
func (s *soakSwitch) close() {
	select {
	case <-s.sweepStop:
	default:
		close(s.sweepStop)
		if s.sweepDone != nil {
			<-s.sweepDone
		}
	}
	for _, p := range s.ports {
		p.Close()
	}
	for _, h := range append(append([]*hostshim.Host(nil), s.servers...), s.clients...) {
		h.Close()
	}
	s.wg.Wait()
}
