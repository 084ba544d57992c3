package udpbatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/netlock-go/netlock/internal/testenv"
)

func listen(t *testing.T, network, addr string) *net.UDPConn {
	t.Helper()
	c, err := net.ListenPacket(network, addr)
	if err != nil {
		testenv.Unavailable(t, "listen %s %s: %v", network, addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.UDPConn)
}

func addrOf(c *net.UDPConn) netip.AddrPort {
	ap := c.LocalAddr().(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// exchange sends n datagrams from each of senders sockets to dst through Writers, and reads them
// all through a Reader on dst, checking contents and senders.
func exchange(t *testing.T, dst *net.UDPConn, dstAddr netip.AddrPort, senders []*net.UDPConn, n int) {
	t.Helper()
	r, err := NewReader(dst, 16, 64)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]netip.AddrPort{}
	for si, s := range senders {
		w, err := NewWriter(s, 8, 64)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			msg := fmt.Sprintf("s%d-m%d", si, i)
			want[msg] = addrOf(s)
			if err := w.Add([]byte(msg), dstAddr); err != nil {
				t.Fatal(err)
			}
		}
		if sent, err := w.Flush(); err != nil || sent != n%8 && n%8 != 0 {
			t.Fatalf("flush sent %d: %v", sent, err)
		}
	}
	_ = dst.SetReadDeadline(time.Now().Add(5 * time.Second))
	for len(want) > 0 {
		k, err := r.Read()
		if err != nil {
			t.Fatalf("read with %d datagrams missing: %v", len(want), err)
		}
		for i := 0; i < k; i++ {
			b, from := r.Packet(i)
			w, ok := want[string(b)]
			if !ok {
				t.Fatalf("unexpected datagram %q", b)
			}
			if w.Addr().IsUnspecified() {
				// A wildcard-bound sender's datagrams come from the address it was routed out of.
				w = netip.AddrPortFrom(from.Addr(), w.Port())
			}
			if w != from {
				t.Fatalf("datagram %q from %v, want %v", b, from, w)
			}
			delete(want, string(b))
		}
	}
}

func TestIPv4(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	var senders []*net.UDPConn
	for i := 0; i < 3; i++ {
		senders = append(senders, listen(t, "udp4", "127.0.0.1:0"))
	}
	exchange(t, dst, addrOf(dst), senders, 50)
}

// TestDualStack: an AF_INET6 wildcard socket receives from and sends to IPv4 peers (v4-mapped on
// the wire of the socket API, plain IPv4 in our addresses).
func TestDualStack(t *testing.T) {
	dst := listen(t, "udp", "[::]:0")
	peer := listen(t, "udp4", "127.0.0.1:0")
	to := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), addrOf(dst).Port())
	exchange(t, dst, to, []*net.UDPConn{peer}, 20)
	// And back: the dual-stack socket writes to an IPv4 peer.
	exchange(t, peer, addrOf(peer), []*net.UDPConn{dst}, 5)
}

func TestTruncationAndTooLarge(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	src := listen(t, "udp4", "127.0.0.1:0")
	w, _ := NewWriter(src, 2, 8)
	if err := w.Add(make([]byte, 9), addrOf(dst)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Add of 9 bytes into 8-byte buffers: %v", err)
	}
	if _, err := src.WriteToUDPAddrPort([]byte("0123456789"), addrOf(dst)); err != nil {
		t.Fatal(err)
	}
	r, _ := NewReader(dst, 4, 4)
	_ = dst.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := r.Read(); err != nil || n != 1 {
		t.Fatalf("read %d: %v", n, err)
	}
	if b, _ := r.Packet(0); string(b) != "0123" {
		t.Fatalf("truncated datagram %q, want %q", b, "0123")
	}
}

func TestDeadlineAndClose(t *testing.T) {
	c := listen(t, "udp4", "127.0.0.1:0")
	r, _ := NewReader(c, 4, 64)
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := r.Read(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past deadline: %v", err)
	}
	_ = c.SetReadDeadline(time.Time{})
	done := make(chan error)
	go func() {
		_, err := r.Read()
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	c.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on closed socket: %v", err)
	}
}

func TestNoAllocations(t *testing.T) {
	dst := listen(t, "udp4", "127.0.0.1:0")
	src := listen(t, "udp4", "127.0.0.1:0")
	r, _ := NewReader(dst, 8, 64)
	w, _ := NewWriter(src, 8, 64)
	to := addrOf(dst)
	msg := []byte("netlock")
	_ = dst.SetReadDeadline(time.Now().Add(10 * time.Second))
	allocs := testing.AllocsPerRun(200, func() {
		for i := 0; i < 4; i++ {
			b := w.Next()
			w.Commit(copy(b, msg), to)
		}
		if _, err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		for got := 0; got < 4; {
			n, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			got += n
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per batch round trip, want 0", allocs)
	}
}

// TestListenShared: the readers share one socket and every one of them can receive; nobody can
// bind the address beside them, with or without SO_REUSEPORT (the hole of issue 18: a SO_REUSEPORT
// group admitted a second server, or any process of the same user).
func TestListenShared(t *testing.T) {
	conns, err := ListenShared("udp4", "127.0.0.1:0", 3, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	port := addrOf(conns[0]).Port()
	for _, c := range conns[1:] {
		if p := addrOf(c).Port(); p != port {
			t.Fatalf("reader on port %d, want %d", p, port)
		}
	}
	// Each reader, reading alone, receives what is sent to the port.
	src := listen(t, "udp4", "127.0.0.1:0")
	for i, c := range conns {
		if _, err := src.WriteToUDPAddrPort([]byte{byte(i)}, addrOf(conns[0])); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, 8)
		if n, _, err := c.ReadFromUDPAddrPort(buf); err != nil || n != 1 || buf[0] != byte(i) {
			t.Fatalf("reader %d: %d bytes %v, %v", i, n, buf[:n], err)
		}
	}
	addr := addrOf(conns[0]).String()
	if _, err := ListenShared("udp4", addr, 1, 0); !errors.Is(err, ErrAddrInUse) {
		t.Errorf("second ListenShared on %s: %v, want ErrAddrInUse", addr, err)
	}
	if _, err := ListenShared("udp4", "0.0.0.0:"+strconv.Itoa(int(port)), 1, 0); !errors.Is(err, ErrAddrInUse) {
		t.Errorf("ListenShared on the wildcard address of the port: %v, want ErrAddrInUse", err)
	}
	// An intruder asking for SO_REUSEPORT cannot join either.
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		}); err != nil {
			return err
		}
		return serr
	}}
	if pc, err := lc.ListenPacket(context.Background(), "udp4", addr); err == nil {
		pc.Close()
		t.Error("a SO_REUSEPORT socket joined the port")
	}
	// Negative control: on a port bound with SO_REUSEPORT (what the server did before) the same
	// intruder joins.
	group, err := lc.ListenPacket(context.Background(), "udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer group.Close()
	if pc, err := lc.ListenPacket(context.Background(), "udp4", group.LocalAddr().String()); err != nil {
		t.Errorf("negative control: the intruder could not join a SO_REUSEPORT group: %v", err)
	} else {
		pc.Close()
	}
	if _, err := ListenShared("udp4", "127.0.0.1:0", 0, 0); err == nil {
		t.Error("0 readers accepted")
	}
}

// TestFlushBesideHeldWriteLock: a Writer sends while another writer of the same socket holds the
// descriptor's write lock (a writer descheduled in its system call), instead of queueing behind
// it. Negative control: a plain WriteToUDPAddrPort, which takes the write lock, does not get its
// datagram out until the lock is released.
func TestFlushBesideHeldWriteLock(t *testing.T) {
	if !batched {
		t.Skip("one datagram per system call on this platform: writes take the write lock")
	}
	src := listen(t, "udp4", "127.0.0.1:0")
	dst := listen(t, "udp4", "127.0.0.1:0")
	to := addrOf(dst)
	rc, err := src.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	unblock := sync.OnceFunc(func() { close(release) })
	defer unblock() // on failure too: closing the socket waits for the holder
	holder := make(chan error, 1)
	go func() {
		first := true
		holder <- rc.Write(func(uintptr) bool {
			if first {
				first = false
				close(held)
				<-release
			}
			return true
		})
	}()
	<-held
	plain := make(chan error, 1)
	go func() {
		_, err := src.WriteToUDPAddrPort([]byte("plain"), to)
		plain <- err
	}()
	w, err := NewWriter(src, 4, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add([]byte("batched"), to); err != nil {
		t.Fatal(err)
	}
	flushed := make(chan error, 1)
	go func() {
		_, err := w.Flush()
		flushed <- err
	}()
	buf := make([]byte, 64)
	// The deadline only keeps a broken Writer from hanging the test.
	_ = dst.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := dst.ReadFromUDPAddrPort(buf)
	if err != nil || string(buf[:n]) != "batched" {
		t.Fatalf("while the write lock is held: read %q, %v; want the Writer's datagram", buf[:n], err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	// Negative control: the plain write waits for the lock (nothing more arrives while it is held).
	_ = dst.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _, err := dst.ReadFromUDPAddrPort(buf); err == nil {
		t.Fatalf("read %q while the write lock is held: the control does not hold the lock", buf[:n])
	}
	unblock()
	if err := <-holder; err != nil {
		t.Fatal(err)
	}
	if err := <-plain; err != nil {
		t.Fatal(err)
	}
	_ = dst.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, _, err := dst.ReadFromUDPAddrPort(buf); err != nil || string(buf[:n]) != "plain" {
		t.Fatalf("after the release: read %q, %v; want the plain datagram", buf[:n], err)
	}
}
