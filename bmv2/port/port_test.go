package port

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/netlock-go/netlock/internal/testenv"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// frame builds a small Ethernet frame whose payload carries i.
func frame(i int) []byte {
	f := make([]byte, 60)
	copy(f[0:6], []byte{0x02, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{0x02, 0, 0, 0, 0, 1})
	f[12], f[13] = 0x88, 0xb5 // local experimental ethertype
	f[14], f[15], f[16], f[17] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
	return f
}

func seq(f []byte) int { return int(f[14])<<24 | int(f[15])<<16 | int(f[16])<<8 | int(f[17]) }

// exchange sends n frames a->b and b->a and checks they arrive in order.
func exchange(t *testing.T, a, b Port, n int) {
	t.Helper()
	for _, dir := range [][2]Port{{a, b}, {b, a}} {
		src, dst := dir[0], dir[1]
		errc := make(chan error, 1)
		go func() {
			buf := make([]byte, MaxFrame)
			for i := 0; i < n; i++ {
				k, err := dst.Recv(buf)
				if err != nil {
					errc <- err
					return
				}
				if !bytes.Equal(buf[:k], frame(i)) {
					errc <- fmt.Errorf("%s: frame %d: got seq %d len %d", dst.Name(), i, seq(buf[:k]), k)
					return
				}
			}
			errc <- nil
		}()
		for i := 0; i < n; i++ {
			if err := src.Send(frame(i)); err != nil {
				t.Fatalf("%s send: %v", src.Name(), err)
			}
		}
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

func TestMemPair(t *testing.T) {
	a, b := NewPair("a", "b")
	defer a.Close()
	defer b.Close()
	exchange(t, a, b, 100)
}

func TestMemCloseUnblocksRecv(t *testing.T) {
	a, b := NewPair("a", "b")
	done := make(chan error)
	go func() { _, err := b.Recv(make([]byte, 64)); done <- err }()
	b.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("Recv after Close = %v, want ErrClosed", err)
	}
	a.Close()
	if err := a.Send(frame(0)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send after Close = %v", err)
	}
	if err := a.Send(make([]byte, MaxFrame+1)); err == nil {
		t.Fatal("oversized frame accepted")
	}
}

func TestMemQueueFullDrops(t *testing.T) {
	a, b := NewMem("a", 4), NewMem("b", 4)
	Link(a, b)
	defer a.Close()
	defer b.Close()
	for i := 0; i < 10; i++ {
		a.Send(frame(i))
	}
	if b.Drops() != 6 {
		t.Fatalf("drops = %d, want 6", b.Drops())
	}
}

func TestMemZeroAllocs(t *testing.T) {
	a, b := NewPair("a", "b")
	defer a.Close()
	defer b.Close()
	f, buf := frame(1), make([]byte, MaxFrame)
	a.Send(f)
	b.Recv(buf) // warm the buffer pool
	if n := testing.AllocsPerRun(200, func() {
		a.Send(f)
		b.Recv(buf)
	}); n != 0 {
		t.Fatalf("allocs per frame = %v, want 0", n)
	}
}

func udpPair(t *testing.T) (*UDPPort, *UDPPort) {
	t.Helper()
	sa, err := ParseUDPSpec("1@127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a, err := ListenUDP(sa)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ListenUDP(UDPSpec{Num: 2, Local: netip.MustParseAddrPort("127.0.0.1:0"), Remote: a.LocalAddr()})
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

func TestUDPTunnel(t *testing.T) {
	a, b := udpPair(t)
	defer a.Close()
	defer b.Close()
	// a has no remote until b's first frame arrives: it learns it.
	if err := b.Send(frame(0)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, MaxFrame)
	if n, err := a.Recv(buf); err != nil || seq(buf[:n]) != 0 {
		t.Fatalf("first frame: %v", err)
	}
	exchange(t, a, b, 200)
	if n := testing.AllocsPerRun(100, func() {
		b.Send(buf[:60])
		a.Recv(buf)
	}); n != 0 {
		t.Fatalf("allocs per frame = %v, want 0", n)
	}
}

func TestParseUDPSpec(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "1@127.0.0.1:9001", want: "1@127.0.0.1:9001"},
		{in: "3@127.0.0.1:9001,127.0.0.1:9101", want: "3@127.0.0.1:9001,127.0.0.1:9101"},
		{in: "7@[::1]:9001,[::1]:9002", want: "7@[::1]:9001,[::1]:9002"},
		{in: "127.0.0.1:9001", bad: true},
		{in: "x@127.0.0.1:9001", bad: true},
		{in: "1@localhost", bad: true},
		{in: "1@127.0.0.1:1,nope", bad: true},
	} {
		sp, err := ParseUDPSpec(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: accepted", tc.in)
			}
			continue
		}
		if err != nil || sp.String() != tc.want {
			t.Errorf("%q: %v %q", tc.in, err, sp.String())
		}
	}
}

// received drains n frames (or until none are pending after close) from p in a goroutine.
func collect(p Port) (get func() []int) {
	var mu sync.Mutex
	var got []int
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, MaxFrame)
		for {
			n, err := p.Recv(buf)
			if err != nil {
				return
			}
			mu.Lock()
			got = append(got, seq(buf[:n]))
			mu.Unlock()
		}
	}()
	return func() []int {
		p.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return got
	}
}

func runFaults(cfg Faults, n int) ([]int, FaultStats) {
	a, b := NewMem("a", 4*n), NewMem("b", 4*n)
	Link(a, b)
	f := WithFaults(a, cfg)
	for i := 0; i < n; i++ {
		f.Send(frame(i))
	}
	f.Close()
	// All frames are queued in b (the queue is large enough); read them.
	var got []int
	buf := make([]byte, MaxFrame)
	for len(b.rx) > 0 {
		k, _ := b.Recv(buf)
		got = append(got, seq(buf[:k]))
	}
	b.Close()
	return got, f.Stats()
}

func TestFaultsSeeded(t *testing.T) {
	cfg := Faults{Seed: 42, Loss: 0.1, Dup: 0.1, Reorder: 0.1}
	got1, st1 := runFaults(cfg, 1000)
	got2, st2 := runFaults(cfg, 1000)
	if fmt.Sprint(got1) != fmt.Sprint(got2) || st1 != st2 {
		t.Fatal("same seed, different fault sequence")
	}
	if st1.Lost == 0 || st1.Duplicated == 0 || st1.Reordered == 0 {
		t.Fatalf("no faults injected: %+v", st1)
	}
	if want := 1000 - int(st1.Lost) + int(st1.Duplicated); len(got1) != want {
		t.Fatalf("received %d frames, want %d (%+v)", len(got1), want, st1)
	}
	inversions := 0
	for i := 1; i < len(got1); i++ {
		if got1[i] < got1[i-1] {
			inversions++
		}
	}
	if inversions != int(st1.Reordered) {
		t.Fatalf("inversions = %d, reordered = %d", inversions, st1.Reordered)
	}
	got3, _ := runFaults(Faults{Seed: 43, Loss: 0.1, Dup: 0.1, Reorder: 0.1}, 1000)
	if fmt.Sprint(got1) == fmt.Sprint(got3) {
		t.Fatal("different seeds, same sequence")
	}
	clean, st := runFaults(Faults{}, 100)
	if len(clean) != 100 || st.Sent != 100 {
		t.Fatalf("zero Faults changed the stream: %d frames %+v", len(clean), st)
	}
}

func TestFaultsDelayOnUDP(t *testing.T) {
	a, b := udpPair(t)
	defer a.Close()
	get := collect(a)
	f := WithFaults(b, Faults{Seed: 1, Delay: 1000, Jitter: 100000})
	for i := 0; i < 50; i++ {
		f.Send(frame(i))
	}
	// Wait until all delayed frames have been handed to the socket.
	for {
		f.mu.Lock()
		n := len(f.timers)
		f.mu.Unlock()
		if n == 0 {
			break
		}
		runtime.Gosched()
	}
	f.Close()
	if st := f.Stats(); st.Delayed != 50 {
		t.Fatalf("delayed = %d", st.Delayed)
	}
	// Loopback UDP may in principle drop datagrams, so only bound the count.
	if seen := get(); len(seen) > 50 {
		t.Fatalf("got %d frames", len(seen))
	}
}

func TestCapture(t *testing.T) {
	a, b := NewPair("a", "b")
	defer b.Close()
	path := filepath.Join(t.TempDir(), "a.pcap")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := WithCapture(a, fh)
	if err != nil {
		t.Fatal(err)
	}
	c.Send(frame(1))
	b.Send(frame(2))
	buf := make([]byte, MaxFrame)
	if _, err := c.Recv(buf); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	rf, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	r, err := pcapgo.NewReader(rf)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		seqs = append(seqs, seq(data))
	}
	if fmt.Sprint(seqs) != "[1 2]" {
		t.Fatalf("captured %v", seqs)
	}
}

// TestRawVeth creates a network namespace with a veth pair, opens an AF_PACKET
// port on each end from inside the namespace and exchanges frames.
func TestRawVeth(t *testing.T) {
	testenv.RequireRoot(t, "an AF_PACKET port in a network namespace")
	testenv.RequireTool(t, "ip", "apt-get install -y iproute2")
	ns := fmt.Sprintf("nlport%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "ip netns add: %v %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", ns).Run()
	for _, args := range [][]string{
		{"-n", ns, "link", "add", "veth0", "type", "veth", "peer", "name", "veth1"},
		{"-n", ns, "link", "set", "veth0", "up"},
		{"-n", ns, "link", "set", "veth1", "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			testenv.Unavailable(t, "ip %v: %v %s", args, err, out)
		}
	}
	var a, b *RawPort
	var openErr error
	done := make(chan struct{})
	go func() { // a throwaway thread: it enters the namespace and is never reused
		defer close(done)
		runtime.LockOSThread()
		fd, err := unix.Open("/var/run/netns/"+ns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			openErr = err
			return
		}
		defer unix.Close(fd)
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			openErr = err
			return
		}
		if a, openErr = OpenRaw("veth0"); openErr != nil {
			return
		}
		b, openErr = OpenRaw("veth1")
		// The thread stays locked and exits with the goroutine, so it never runs
		// other goroutines in the wrong namespace.
	}()
	<-done
	if openErr != nil {
		if a != nil {
			a.Close()
		}
		testenv.Unavailable(t, "open AF_PACKET ports: %v", openErr)
	}
	defer a.Close()
	defer b.Close()
	if a.Name() != "raw:veth0" {
		t.Fatal(a.Name())
	}
	// The kernel may emit its own frames (IPv6 router solicitations) on a
	// fresh link; exchange ignores nothing, so use a filter on our ethertype.
	recvOurs := func(p Port, buf []byte) (int, error) {
		for {
			n, err := p.Recv(buf)
			if err != nil || (n >= 14 && buf[12] == 0x88 && buf[13] == 0xb5) {
				return n, err
			}
		}
	}
	buf := make([]byte, MaxFrame)
	// sendRecv sends frame i from one end and receives it at the other. A frame that does not
	// arrive within 2 s is sent again (at most three times, each logged; CI saw one frame never
	// arrive, 2026-11-29, and the test hung until the package's timeout), and late copies of
	// earlier frames are skipped: the port must carry every frame, not lose none on a busy host.
	sendRecv := func(from, to *RawPort, i int) {
		t.Helper()
		defer to.SetReadDeadline(time.Time{})
		for try := 1; try <= 3; try++ {
			if err := from.Send(frame(i)); err != nil {
				t.Fatal(err)
			}
			to.SetReadDeadline(time.Now().Add(2 * time.Second))
			for {
				n, err := recvOurs(to, buf)
				if errors.Is(err, os.ErrDeadlineExceeded) {
					t.Logf("%s: frame %d did not arrive in 2 s (try %d)", to.Name(), i, try)
					break
				}
				if err != nil {
					t.Fatalf("%s frame %d: %v", to.Name(), i, err)
				}
				if seq(buf[:n]) < i {
					continue // a late copy of an earlier frame
				}
				if !bytes.Equal(buf[:n], frame(i)) {
					t.Fatalf("%s frame %d: %x", to.Name(), i, buf[:n])
				}
				return
			}
		}
		t.Fatalf("%s: frame %d never arrived in three tries", to.Name(), i)
	}
	for i := 0; i < 20; i++ {
		sendRecv(a, b, i)
		sendRecv(b, a, 1000+i)
	}
	// The allocation count runs 51 frames through without a retry of its own, so a frame lost
	// there must not block Recv forever (a hang of this test was seen in CI, 2026-11-29, and
	// sendRecv above did not cover this loop): b's read deadline bounds each attempt, and an
	// attempt that lost a frame is run again (at most three, each logged).
	f := frame(7)
	for try := 1; ; try++ {
		lost := 0
		b.SetReadDeadline(time.Now().Add(10 * time.Second))
		n := testing.AllocsPerRun(50, func() {
			a.Send(f)
			if _, err := recvOurs(b, buf); err != nil {
				lost++
			}
		})
		b.SetReadDeadline(time.Time{})
		if lost == 0 {
			if n != 0 {
				t.Fatalf("allocs per frame = %v, want 0", n)
			}
			break
		}
		t.Logf("allocation count, try %d: %d frames did not arrive", try, lost)
		if try == 3 {
			t.Fatalf("frames lost in three tries of the allocation count")
		}
	}
	// Close unblocks a pending Recv.
	errc := make(chan error)
	go func() { _, err := recvOurs(a, make([]byte, MaxFrame)); errc <- err }()
	a.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("Recv after Close: %v", err)
	}
}

// BenchmarkMemPort measures one frame through an in-memory link (send and receive).
func BenchmarkMemPort(b *testing.B) {
	a, c := NewPair("a", "b")
	defer a.Close()
	defer c.Close()
	f, buf := frame(1), make([]byte, MaxFrame)
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		a.Send(f)
		c.Recv(buf)
	}
}

// BenchmarkUDPPort measures one frame through a UDP tunnel on loopback.
func BenchmarkUDPPort(b *testing.B) {
	sa, _ := ParseUDPSpec("1@127.0.0.1:0")
	a, err := ListenUDP(sa)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	c, err := ListenUDP(UDPSpec{Num: 2, Local: netip.MustParseAddrPort("127.0.0.1:0"), Remote: a.LocalAddr()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	f, buf := frame(1), make([]byte, MaxFrame)
	b.ReportAllocs()
	b.SetBytes(int64(len(f)))
	for b.Loop() {
		c.Send(f)
		a.Recv(buf)
	}
}

func TestCaptureSplit(t *testing.T) {
	a, b := NewPair("a", "b")
	defer b.Close()
	var in, out bytes.Buffer
	c, err := WithCaptureSplit(a, &in, &out)
	if err != nil {
		t.Fatal(err)
	}
	c.Send(frame(1))
	c.Send(frame(2))
	b.Send(frame(3))
	if _, err := c.Recv(make([]byte, MaxFrame)); err != nil {
		t.Fatal(err)
	}
	c.Close()
	read := func(buf *bytes.Buffer) []int {
		r, err := pcapgo.NewReader(buf)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int
		for {
			data, _, err := r.ReadPacketData()
			if err != nil {
				return seqs
			}
			seqs = append(seqs, seq(data))
		}
	}
	if got := fmt.Sprint(read(&in), read(&out)); got != "[3] [1 2]" {
		t.Fatalf("in, out = %s", got)
	}
	only, err := WithCaptureSplit(NewMem("x", 1), nil, &out)
	if err != nil || only.in != nil {
		t.Fatal("nil writer captured")
	}
	only.Close()
}

func TestParseIfaceSpec(t *testing.T) {
	if n, i, err := ParseIfaceSpec("3@veth1"); err != nil || n != 3 || i != "veth1" {
		t.Fatalf("%d %q %v", n, i, err)
	}
	for _, bad := range []string{"veth1", "x@veth1", "3@", "-1@a"} {
		if _, _, err := ParseIfaceSpec(bad); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}
