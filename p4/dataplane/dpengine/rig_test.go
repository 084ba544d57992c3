package dpengine

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// rig is a switch with a small rack: the switch at 10.0.0.1, servers 10.0.1.S on port 100+S,
// clients 10.0.2.C on port C (C < 100).
type rig struct {
	t   tb
	sw  *Switch
	now time.Time
	buf []byte
	// passes counts the ingress passes of an input (engine.Config.OnIngress), pipe1 those in
	// pipe 1 (ports 128-255: the fold's half b, and its steering of packets that arrive there),
	// when the rig was made with rigCountPasses set; onInput, if set, receives each input's
	// label and counts.
	passes, pipe1 int
	onInput       func(label string, passes, pipe1 int)
	label         string // what the next client datagram is (set by the test)
	// mirrors, when set, get every packet the switch gets and must send the same packets
	// (real_test.go: real simple_switch, the generated pipeline).
	mirrors []rigMirror
}

// rigCountPasses makes newRigSource count passes (the engine's table hook, off otherwise:
// it slows the pipeline).
var rigCountPasses bool

const rigKey = 0x5eC12e7_0000_1234

var rigSwitchMAC = dataplane.MAC{2, 0, 0, 0, 0, 1}

func hostMAC(ip netip.Addr) dataplane.MAC {
	a := ip.As4()
	return dataplane.MAC{2, 0, a[0], a[1], a[2], a[3]}
}

func clientAddr(c int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 2, byte(c)}), uint16(40000+c))
}

func serverAddr(s int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(s)}), wire.Port)
}

// clientPort is the port the rig routes client address a to (clientAddr), and whether a is a
// client's.
func clientPort(a netip.Addr) (int, bool) {
	b := a.As4()
	if !a.Is4() || b[0] != 10 || b[1] != 0 || b[2] != 2 || b[3] < 1 || b[3] > 20 {
		return 0, false
	}
	return int(b[3]), true
}

// newRigSource loads prog, or src (a version of prog) when it is not nil, on pipeline pl: the
// interpreter in Tofino-constraint mode, or the generated pipeline (p4/netlockgen), which does
// not check the Tofino rules.
func newRigSource(t testing.TB, prog dataplane.Program, sz dataplane.Sizing, src []byte, pl engine.Pipeline) *rig {
	return newRigWith(t, prog, sz, src, pl, nil)
}

// newRigWith is newRigSource with the engine's configuration changed by tweak (when not nil)
// before the program is loaded.
func newRigWith(t testing.TB, prog dataplane.Program, sz dataplane.Sizing, src []byte, pl engine.Pipeline,
	tweak func(*engine.Config)) *rig {
	r := &rig{t: t, now: time.Unix(1000, 0)}
	if src == nil {
		src = prog.Source
	}
	cfg := pipelineConfig(engine.Config{TofinoConstraints: pl != engine.PipelineGenerated, Now: func() time.Time { return r.now }}, pl)
	if tweak != nil {
		tweak(&cfg)
	}
	if rigCountPasses {
		cfg.OnIngress = func(port int) {
			r.passes++
			if port>>7 == 1 {
				r.pipe1++
			}
		}
	}
	sw, err := load(prog, sz, src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.sw = sw
	must(t, sw.SetRack(dataplane.Rack{Key: rigKey, SwitchIP: netip.MustParseAddr("10.0.0.1"), SwitchMAC: rigSwitchMAC,
		DefaultLease: 10 * time.Second, MaxLease: 60 * time.Second}))
	for s := 1; s <= 2; s++ {
		a := serverAddr(s)
		must(t, sw.SetServer(uint16(s), dataplane.Server{Addr: a, Port: 100 + s, MAC: hostMAC(a.Addr())}))
		must(t, sw.AddRoute(netip.PrefixFrom(a.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(a.Addr()), Port: 100 + s}))
	}
	for c := 1; c <= 20; c++ {
		a := clientAddr(c)
		must(t, sw.AddRoute(netip.PrefixFrom(a.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(a.Addr()), Port: c}))
	}
	return r
}

// tb is what the rig and the differential test need of a testing.TB (the mutation test
// passes a recorder instead).
type tb interface {
	Helper()
	Fatalf(format string, args ...any)
}

func must(t tb, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%v", err)
	}
}

// out is one packet the switch sent, decoded.
type out struct {
	Port   int
	Frame  udpframe.Frame
	F      wire.Fields
	Key    uint64
	HasKey bool
}

func (o out) String() string {
	s := fmt.Sprintf("port %d %s->%s %s", o.Port, o.Frame.Src, o.Frame.Dst, o.F.String())
	if o.HasKey {
		s += fmt.Sprintf(" key=%#x", o.Key)
	}
	return s
}

// send injects a netlock datagram from src to dst on port and returns what came out.
func (r *rig) send(port int, src, dst netip.AddrPort, f *wire.Fields, key *uint64) []out {
	r.t.Helper()
	payload := wire.Append(nil, f)
	if key != nil {
		payload = append(payload, make([]byte, 8)...)
		wire.SetRackKey(payload, *key)
	}
	r.buf = udpframe.Append(r.buf[:0], udpframe.Endpoint{MAC: hostMAC(src.Addr()), Addr: src},
		udpframe.Endpoint{MAC: rigSwitchMAC, Addr: dst}, payload)
	r.passes, r.pipe1 = 0, 0
	res, err := r.sw.Process(port, r.buf)
	if err != nil {
		r.t.Fatalf("process %s: %v", f, err)
	}
	r.checkMirrors(port, r.buf, res)
	if r.onInput != nil {
		label := r.label
		if key != nil {
			label = "push-back (from the server)"
		}
		r.onInput(label, r.passes, r.pipe1)
	}
	return r.outs(res)
}

// admin sends an admin request from the controller and returns what came out, and the
// packet-ins (the frames after the packet_in header).
func (r *rig) admin(req *dataplane.AdminRequest) ([]out, [][]byte) {
	r.t.Helper()
	r.buf = req.Frame(append(r.buf[:0], dataplane.PacketOutAdmin, 0, 0), rigKey)
	r.passes, r.pipe1 = 0, 0
	res, err := r.sw.PacketOut(r.buf)
	if err != nil {
		r.t.Fatalf("admin %d: %v", req.Op, err)
	}
	r.checkMirrors(r.sw.Sizing.CPUPort, r.buf, res)
	if r.onInput != nil {
		r.onInput(fmt.Sprintf("admin %d", req.Op), r.passes, r.pipe1)
	}
	var pins [][]byte
	for _, p := range res.PacketIn {
		pins = append(pins, append([]byte(nil), p...))
	}
	return r.outs(res), pins
}

// outs decodes the packets the switch sent.
func (r *rig) outs(res *engine.Result) []out {
	r.t.Helper()
	var outs []out
	for _, o := range res.Out {
		var x out
		x.Port = o.Port
		if err := udpframe.Parse(o.Data, &x.Frame); err != nil {
			r.t.Fatalf("output on port %d: %v (% x)", o.Port, err, o.Data)
		}
		h, err := wire.Parse(x.Frame.Payload)
		if err != nil {
			r.t.Fatalf("output on port %d: %v", o.Port, err)
		}
		h.Decode(&x.F)
		x.Key, x.HasKey = wire.RackKey(x.Frame.Payload)
		outs = append(outs, x)
	}
	return outs
}
