package target

import (
	"net/netip"
	"testing"
	"time"

	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"

	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/port"
)

// loadL3 installs testdata/l3.p4 directly (no P4Runtime server) and routes
// 10.0.N.0/24 to port N for N = 1, 2 through the Device API.
func loadL3(tb testing.TB, d *Device) {
	tb.Helper()
	prog, err := front.Load("testdata/l3.p4")
	if err != nil {
		tb.Fatal(err)
	}
	if err := d.LoadProgram(prog); err != nil {
		tb.Fatal(err)
	}
	d.mu.Lock()
	t, err := d.sw.Table("ipv4_lpm")
	d.mu.Unlock()
	if err != nil {
		tb.Fatal(err)
	}
	var route uint32
	for _, a := range t.Actions() {
		if a.Name == "MyIngress.route" {
			route = a.ID
		}
	}
	for n := byte(1); n <= 2; n++ {
		e := &p4v1.TableEntry{
			TableId: t.ID,
			Match: []*p4v1.FieldMatch{{FieldId: 1, FieldMatchType: &p4v1.FieldMatch_Lpm{
				Lpm: &p4v1.FieldMatch_LPM{Value: []byte{10, 0, n, 0}, PrefixLen: 24}}}},
			Action: &p4v1.TableAction{Type: &p4v1.TableAction_Action{Action: &p4v1.Action{
				ActionId: route,
				Params: []*p4v1.Action_Param{
					{ParamId: 1, Value: routerMAC}, {ParamId: 2, Value: hostMAC[n]}, {ParamId: 3, Value: []byte{n}},
				},
			}}},
		}
		if err := d.InsertTableEntry(e); err != nil {
			tb.Fatal(err)
		}
	}
}

// TestForwardingAllocs: a routed frame, in through Inject and out through an
// in-memory port, allocates nothing once warm.
func TestForwardingAllocs(t *testing.T) {
	d := New(Options{CPUPort: cpuPort})
	sw2, far2 := port.NewPair("sw2", "h2")
	defer far2.Close()
	if err := d.AddPort(2, sw2); err != nil {
		t.Fatal(err)
	}
	loadL3(t, d)
	frame := udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.2.2", 64, "payload")
	buf := make([]byte, port.MaxFrame)
	allocs := testing.AllocsPerRun(200, func() {
		d.Inject(1, frame)
		if _, err := far2.Recv(buf); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocations per forwarded frame", allocs)
	}
	if st := d.Stats(); st.Transmitted < 200 || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
	d.Close()
}

// window bounds the frames in flight so that no queue overflows.
const window = 64

// forward measures frames/s from src (into switch port 1) to dst (out of
// switch port 2). A frame that does not arrive within a second counts as
// lost and frees its slot (UDP may drop).
func forward(b *testing.B, src, dst port.Port, frame []byte) {
	credits := make(chan struct{}, window)
	for range window {
		credits <- struct{}{}
	}
	recvd := make(chan int, 1)
	go func() {
		buf := make([]byte, port.MaxFrame)
		n := 0
		for n < b.N {
			if _, err := dst.Recv(buf); err != nil {
				break
			}
			n++
			credits <- struct{}{}
		}
		recvd <- n
	}()
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	start := time.Now()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for i := 0; i < b.N; i++ {
		select {
		case <-credits:
		default:
			timer.Reset(time.Second)
			select {
			case <-credits:
			case <-timer.C: // lost; go on
			}
			timer.Stop()
		}
		if err := src.Send(frame); err != nil {
			b.Fatal(err)
		}
	}
	var got int
	select {
	case got = <-recvd:
	case <-time.After(time.Second + time.Duration(b.N)*time.Microsecond):
		dst.Close() // frames were lost at the end; unblock the receiver
		got = <-recvd
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(got)/el.Seconds(), "frames/s")
	b.ReportMetric(float64(b.N-got), "lost")
}

func BenchmarkForwardMem(b *testing.B) {
	d := New(Options{CPUPort: cpuPort})
	sw1, h1 := port.NewPair("sw1", "h1")
	sw2, h2 := port.NewPair("sw2", "h2")
	defer h1.Close()
	defer h2.Close()
	d.AddPort(1, sw1)
	d.AddPort(2, sw2)
	loadL3(b, d)
	d.Start()
	defer d.Close()
	forward(b, h1, h2, udpFrame(b, hostMAC[1], routerMAC, "10.0.1.1", "10.0.2.2", 64, "payload"))
}

func BenchmarkForwardUDP(b *testing.B) {
	lo := netip.MustParseAddrPort("127.0.0.1:0")
	h1, err := port.ListenUDP(port.UDPSpec{Local: lo})
	if err != nil {
		b.Fatal(err)
	}
	h2, err := port.ListenUDP(port.UDPSpec{Local: lo})
	if err != nil {
		b.Fatal(err)
	}
	defer h1.Close()
	defer h2.Close()
	sw1, err := port.ListenUDP(port.UDPSpec{Num: 1, Local: lo, Remote: h1.LocalAddr()})
	if err != nil {
		b.Fatal(err)
	}
	sw2, err := port.ListenUDP(port.UDPSpec{Num: 2, Local: lo, Remote: h2.LocalAddr()})
	if err != nil {
		b.Fatal(err)
	}
	h1.SetRemote(sw1.LocalAddr())
	h2.SetRemote(sw2.LocalAddr())
	d := New(Options{CPUPort: cpuPort})
	d.AddPort(1, sw1)
	d.AddPort(2, sw2)
	loadL3(b, d)
	d.Start()
	defer d.Close()
	forward(b, h1, h2, udpFrame(b, hostMAC[1], routerMAC, "10.0.1.1", "10.0.2.2", 64, "payload"))
}
