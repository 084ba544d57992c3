package faultnet

import (
	"bytes"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recordConn is a PacketConn that records what is written to it and reads nothing.
type recordConn struct {
	net.PacketConn // nil: only the methods below are used
	mu             sync.Mutex
	got            [][]byte
	closed         bool
}

func (r *recordConn) WriteTo(p []byte, _ net.Addr) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, append([]byte(nil), p...))
	return len(p), nil
}

func (r *recordConn) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return nil
}

func (r *recordConn) written() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.got...)
}

func seq(n int) [][]byte {
	var out [][]byte
	for i := range n {
		out = append(out, []byte{byte(i)})
	}
	return out
}

func sendAll(t *testing.T, c *Conn, pkts [][]byte) {
	t.Helper()
	for _, p := range pkts {
		if n, err := c.WriteTo(p, nil); err != nil || n != len(p) {
			t.Fatalf("WriteTo = %d, %v", n, err)
		}
	}
}

func TestSendFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults Faults
		in     int
		want   [][]byte
		check  func(Stats) error
	}{
		{"none", Faults{}, 3, seq(3), nil},
		{"loss all", Faults{Loss: 1}, 3, nil, func(s Stats) error {
			if s.SendLost != 3 {
				return fmt.Errorf("SendLost = %d, want 3", s.SendLost)
			}
			return nil
		}},
		{"dup all", Faults{Dup: 1}, 2, [][]byte{{0}, {0}, {1}, {1}}, nil},
		// With Reorder 1 every other datagram is held behind its successor.
		{"reorder all", Faults{Reorder: 1, HoldMax: time.Hour}, 4, [][]byte{{1}, {0}, {3}, {2}}, func(s Stats) error {
			if s.SendReordered != 2 {
				return fmt.Errorf("SendReordered = %d, want 2", s.SendReordered)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := &recordConn{}
			c := Wrap(rc, Config{Seed: 1, Send: tt.faults})
			sendAll(t, c, seq(tt.in))
			if got := rc.written(); !equal(got, tt.want) {
				t.Errorf("written %v, want %v", got, tt.want)
			}
			if tt.check != nil {
				if err := tt.check(c.Stats()); err != nil {
					t.Error(err)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func equal(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestSendHoldFlushesAlone(t *testing.T) {
	rc := &recordConn{}
	c := Wrap(rc, Config{Seed: 1, Send: Faults{Reorder: 1, HoldMax: time.Millisecond}})
	defer c.Close()
	sendAll(t, c, seq(1))
	deadline := time.Now().Add(10 * time.Second)
	for len(rc.written()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("held datagram never flushed")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSendDelay(t *testing.T) {
	rc := &recordConn{}
	c := Wrap(rc, Config{Seed: 7, Send: Faults{Delay: 2 * time.Millisecond}})
	sendAll(t, c, seq(20))
	deadline := time.Now().Add(10 * time.Second)
	for len(rc.written()) < 20 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of 20 delayed datagrams arrived", len(rc.written()))
		}
		time.Sleep(time.Millisecond)
	}
	if s := c.Stats(); s.SendDelayed != 20 {
		t.Errorf("SendDelayed = %d, want 20", s.SendDelayed)
	}
	c.Close()
}

func TestCloseDropsPending(t *testing.T) {
	rc := &recordConn{}
	c := Wrap(rc, Config{Seed: 7, Send: Faults{Delay: time.Hour}})
	sendAll(t, c, seq(5))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.written()); n != 0 {
		t.Errorf("%d datagrams sent after Close", n)
	}
	if _, err := c.WriteTo([]byte{1}, nil); err == nil {
		t.Error("WriteTo after Close succeeded")
	}
}

// TestDeterministic checks that the same seed gives the same fault decisions, and that another
// seed gives different ones.
func TestDeterministic(t *testing.T) {
	run := func(seed uint64) [][]byte {
		rc := &recordConn{}
		c := Wrap(rc, Config{Seed: seed, Send: Faults{Loss: 0.3, Dup: 0.3, Reorder: 0.3, HoldMax: time.Hour}})
		sendAll(t, c, seq(200))
		c.Close()
		return rc.written()
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	a, b := run(seed), run(seed)
	if !equal(a, b) {
		t.Fatal("same seed, different output")
	}
	if c := run(seed + 1); equal(a, c) {
		t.Fatal("different seeds, same output over 200 datagrams")
	}
}

func udpPair(t *testing.T) (a, b *net.UDPConn) {
	t.Helper()
	l := func() *net.UDPConn {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	return l(), l()
}

func readN(t *testing.T, c net.PacketConn, n int) [][]byte {
	t.Helper()
	var out [][]byte
	buf := make([]byte, 64)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	for range n {
		k, _, err := c.ReadFrom(buf)
		if err != nil {
			t.Fatalf("after %d datagrams: %v", len(out), err)
		}
		out = append(out, append([]byte(nil), buf[:k]...))
	}
	return out
}

func TestRecvFaults(t *testing.T) {
	tests := []struct {
		name   string
		faults Faults
		in     int
		want   [][]byte
	}{
		{"none", Faults{}, 3, seq(3)},
		{"dup all", Faults{Dup: 1}, 2, [][]byte{{0}, {0}, {1}, {1}}},
		{"reorder all", Faults{Reorder: 1, HoldMax: time.Hour}, 4, [][]byte{{1}, {0}, {3}, {2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := udpPair(t)
			defer a.Close()
			fb := Wrap(b, Config{Seed: 3, Recv: tt.faults})
			defer fb.Close()
			for _, p := range seq(tt.in) {
				if _, err := a.WriteTo(p, b.LocalAddr()); err != nil {
					t.Fatal(err)
				}
			}
			if got := readN(t, fb, len(tt.want)); !equal(got, tt.want) {
				t.Errorf("read %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRecvLossAndHold(t *testing.T) {
	a, b := udpPair(t)
	defer a.Close()
	fb := Wrap(b, Config{Seed: 3, Recv: Faults{Reorder: 1, HoldMax: time.Millisecond}})
	defer fb.Close()
	// A single held datagram is delivered once the hold time runs out.
	if _, err := a.WriteTo([]byte{9}, b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, fb, 1); !equal(got, [][]byte{{9}}) {
		t.Fatalf("read %v", got)
	}

	a2, b2 := udpPair(t)
	defer a2.Close()
	lossy := Wrap(b2, Config{Seed: 3, Recv: Faults{Loss: 1}})
	if _, err := a2.WriteTo([]byte{1}, b2.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	_ = lossy.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, _, err := lossy.ReadFrom(make([]byte, 8)); err == nil {
		t.Error("read a datagram through Loss 1")
	}
	lossy.Close()
	if s := lossy.Stats(); s.RecvLost != 1 {
		t.Errorf("RecvLost = %d, want 1", s.RecvLost)
	}
}

func TestHookSeeds(t *testing.T) {
	h := Hook(Config{Seed: 5})
	a, b := udpPair(t)
	ca, cb := h(a).(*Conn), h(b).(*Conn)
	defer ca.Close()
	defer cb.Close()
	if ca.cfg.Seed == cb.cfg.Seed {
		t.Error("Hook gave two conns the same seed")
	}
}

func TestRecvDelay(t *testing.T) {
	a, b := udpPair(t)
	defer a.Close()
	fb := Wrap(b, Config{Seed: 3, Recv: Faults{Delay: 2 * time.Millisecond}})
	defer fb.Close()
	for _, p := range seq(5) {
		if _, err := a.WriteTo(p, b.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	// Receive delay is head-of-line: the order is kept.
	if got := readN(t, fb, 5); !equal(got, seq(5)) {
		t.Errorf("read %v", got)
	}
	if s := fb.Stats(); s.RecvDelayed != 5 || s.Recv != 5 {
		t.Errorf("stats %+v, want 5 received, 5 delayed", s)
	}
	if s := fb.Stats().Add(fb.Stats()); s.RecvDelayed != 10 {
		t.Errorf("Add: %+v", s)
	}
}

// TestCloseUnblocksDelayedRead: Close ends a ReadFrom that sleeps in an injected delay.
func TestCloseUnblocksDelayedRead(t *testing.T) {
	a, b := udpPair(t)
	defer a.Close()
	fb := Wrap(b, Config{Seed: 3, Recv: Faults{Delay: time.Hour}})
	if _, err := a.WriteTo([]byte{1}, b.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		_, _, err := fb.ReadFrom(make([]byte, 8))
		errc <- err
	}()
	for fb.Stats().RecvDelayed == 0 {
		time.Sleep(time.Millisecond)
	}
	fb.Close()
	select {
	case err := <-errc:
		if err == nil {
			t.Error("ReadFrom returned a datagram after Close")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFrom still blocked after Close")
	}
}

// TestExempt: datagrams Exempt selects pass untouched and uncounted in both directions, the
// others suffer the faults.
func TestExempt(t *testing.T) {
	exempt := func(p []byte) bool { return p[0]%2 == 1 }
	rc := &recordConn{}
	c := Wrap(rc, Config{Seed: 1, Send: Faults{Loss: 1}, Exempt: exempt})
	sendAll(t, c, seq(4))
	if got, want := rc.written(), [][]byte{{1}, {3}}; !equal(got, want) {
		t.Errorf("sent %v, want %v", got, want)
	}
	if s := c.Stats(); s.Sent != 2 || s.SendLost != 2 {
		t.Errorf("send stats %+v, want 2 sent, 2 lost", s)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	a, b := udpPair(t)
	defer a.Close()
	fb := Wrap(b, Config{Seed: 3, Recv: Faults{Loss: 1}, Exempt: exempt})
	defer fb.Close()
	for _, p := range seq(6) {
		if _, err := a.WriteTo(p, b.LocalAddr()); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := readN(t, fb, 3), [][]byte{{1}, {3}, {5}}; !equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	if s := fb.Stats(); s.Recv < 2 || s.Recv != s.RecvLost {
		t.Errorf("recv stats %+v: every counted datagram should be a lost even one", s)
	}
}
