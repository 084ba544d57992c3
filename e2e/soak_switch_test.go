package e2e

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/dataplane"
	"github.com/netlock-go/netlock/testbed/hostshim"
	"github.com/netlock-go/netlock/wire"
)

// soakSwitch is the soak's switch path (-soak.path switch): p4/netlock.p4 on the execution
// engine between the clients and the servers. Every lock server and every client is a host of
// the virtual rack (testbed/hostshim, addresses from hostshim.DefaultPlan) on an in-memory
// switch port; the client library and the lock server run unchanged on host sockets.
//
// The switch is configured as a rack's control plane brings it up (docs/dataplane.md,
// "Bring-up"): the rack (key, the switch's address, leases), the lock servers, a route and a
// clone session per host. It holds no lock of its own (lock_table is empty), so every lock
// request is routed to its server through the program's netlock path (header validation, the
// lock table lookup, routing) and every answer back. Switch-resident locks need what the
// control plane does not do yet: lease sweeps for holders that crash (the switch never expires a
// lease itself) and resetting the switch's overflow accounting when a server fails over.
type soakSwitch struct {
	sw      *dataplane.Switch
	mu      sync.Mutex // serializes every engine call: the engine is not safe for concurrent use
	ports   map[int]port.Port
	servers []*hostshim.Host // slot s (0-based) on switch port 1+s: partition s, then the twin
	clients []*hostshim.Host // on switch ports 101..
	wg      sync.WaitGroup

	frames, errs atomic.Uint64
}

// soakRackKey is the rack key of the soak's switch and servers.
const soakRackKey = 0x50a4_5eed_0000_0001

var soakPlan = hostshim.DefaultPlan

func startSoakSwitch(cfg *soakConfig) (*soakSwitch, error) {
	sw, err := dataplane.Load(dataplane.Sizing{}, engine.Config{TofinoConstraints: true})
	if err != nil {
		return nil, err
	}
	s := &soakSwitch{sw: sw, ports: map[int]port.Port{}}
	swMAC := hostshim.MACFor(soakPlan.Switch())
	if err := sw.SetRack(dataplane.Rack{Key: soakRackKey, SwitchIP: soakPlan.Switch(), SwitchMAC: swMAC,
		DefaultLease: cfg.lease, MaxLease: cfg.lease}); err != nil {
		return nil, err
	}
	attach := func(addr netip.Addr, num int) (*hostshim.Host, error) {
		hostEnd, swEnd := port.NewPair(addr.String(), fmt.Sprintf("s1-p%d", num))
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
		h, err := attach(addr, 1+slot)
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
		h, err := attach(soakPlan.Client(1+i), 101+i)
		if err != nil {
			return fail(err)
		}
		s.clients = append(s.clients, h)
	}
	for num, p := range s.ports {
		s.wg.Add(1)
		go s.forward(num, p)
	}
	return s, nil
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
		res, err := s.sw.Process(num, buf[:n])
		s.frames.Add(1)
		if err != nil {
			s.errs.Add(1)
		}
		if res != nil {
			for _, o := range res.Out {
				if out := s.ports[o.Port]; out != nil {
					_ = out.Send(o.Data) // a closed host's port: the frame is lost, as on a wire
				}
			}
		}
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

// close closes the switch's ports and the hosts, and waits for the readers.
func (s *soakSwitch) close() {
	for _, p := range s.ports {
		p.Close()
	}
	for _, h := range append(append([]*hostshim.Host(nil), s.servers...), s.clients...) {
		h.Close()
	}
	s.wg.Wait()
}
