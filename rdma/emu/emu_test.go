package emu_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/rdma/alock"
	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/rdmatest"
	"github.com/netlock-go/netlock/rdma/verbs"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	goleak.VerifyTestMain(m)
}

func cluster(t *testing.T, cfg emu.Config, n int) *emu.Cluster {
	t.Helper()
	c, err := emu.NewCluster(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Error(err)
		}
	})
	return c
}

func TestVerbs(t *testing.T) {
	c := cluster(t, emu.Config{}, 2)
	ep := c.Node(0).NewEndpoint()
	p, err := c.Node(1).Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	if err := verbs.Write(ep, p, 7); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		do   func() (uint64, error)
		want uint64 // returned value
		mem  uint64 // word afterwards
	}{
		{"read", func() (uint64, error) { return verbs.Read(ep, p) }, 7, 7},
		{"cas-miss", func() (uint64, error) { return verbs.CAS(ep, p, 1, 9) }, 7, 7},
		{"cas-hit", func() (uint64, error) { return verbs.CAS(ep, p, 7, 9) }, 7, 9},
		{"faa", func() (uint64, error) { return verbs.FAA(ep, p, 5) }, 9, 14},
	}
	for _, s := range steps {
		got, err := s.do()
		if err != nil || got != s.want || c.Node(1).Load(p.Offset()) != s.mem {
			t.Fatalf("%s: got %d err %v mem %d, want %d mem %d", s.name, got, err, c.Node(1).Load(p.Offset()), s.want, s.mem)
		}
	}
	// Batch: in order, all completions.
	cs, err := verbs.Batch(ep, []verbs.WorkRequest{{Op: verbs.OpWrite, Remote: p, Value: 1}, {Op: verbs.OpFAA, Remote: p, Value: 1}, {Op: verbs.OpRead, Remote: p}})
	if err != nil || cs[1].Value != 1 || cs[2].Value != 2 {
		t.Fatalf("batch: %+v %v", cs, err)
	}
	st := ep.Stats().Snapshot()
	if st.Reads != 2 || st.Writes != 2 || st.CASes != 2 || st.FAAs != 2 || st.Loopback != 0 {
		t.Fatalf("accounting: %+v", st)
	}
	// Loopback goes through the own NIC and is counted.
	q, _ := c.Node(0).Alloc(64)
	if _, err := verbs.FAA(ep, q, 3); err != nil || ep.Stats().Loopback.Load() != 1 {
		t.Fatalf("loopback: %v %d", err, ep.Stats().Loopback.Load())
	}
	if _, err := verbs.Read(ep, verbs.MakePtr(1, 1<<30)); !errors.Is(err, verbs.ErrBadPtr) {
		t.Fatalf("bad pointer: %v", err)
	}
	if _, err := verbs.Read(ep, verbs.MakePtr(7, 64)); !errors.Is(err, verbs.ErrNoNode) {
		t.Fatalf("unknown node: %v", err)
	}
	if _, err := ep.Wait(12345); !errors.Is(err, verbs.ErrNotFound) {
		t.Fatalf("wait for unknown id: %v", err)
	}
}

// A CPU store or CAS landing inside a NIC CAS window is lost: the NIC writes back the value
// computed from what it read (Table 1's "No" cells), deterministically via the window hook.
func TestNICAtomicNotAtomicWithCPU(t *testing.T) {
	var c *emu.Cluster
	var local verbs.Memory
	var once sync.Once
	c = cluster(t, emu.Config{OnAtomicWindow: func(p verbs.Ptr) {
		once.Do(func() {
			if !local.CAS(p.Offset(), 0, 42) { // the CPU wins its CAS inside the window ...
				t.Error("local CAS failed")
			}
		})
	}}, 2)
	local = c.Node(0).NewEndpoint().Local()
	p, _ := c.Node(0).Alloc(64)
	old, err := verbs.CAS(c.Node(1).NewEndpoint(), p, 0, 7) // ... and the NIC's CAS also "wins"
	if err != nil {
		t.Fatal(err)
	}
	if old != 0 || c.Node(0).Load(p.Offset()) != 7 {
		t.Fatalf("NIC CAS returned %d and left %d; want 0 and 7 (the CPU's 42 is lost)", old, c.Node(0).Load(p.Offset()))
	}
}

// NIC atomics are atomic among themselves: concurrent remote FAAs from many initiators, with
// the window widened, never lose an update; the same with a CPU FAA mixed in can.
func TestNICAtomicsSerialized(t *testing.T) {
	c := cluster(t, emu.Config{AtomicWindowYields: 3}, 3)
	p, _ := c.Node(0).Alloc(64)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		ep := c.Node(i % 3).NewEndpoint()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				if _, err := verbs.FAA(ep, p, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := c.Node(0).Load(p.Offset()); got != 1200 {
		t.Fatalf("remote FAAs lost updates: %d of 1200", got)
	}
}

// Unsignaled verbs complete asynchronously and may be applied after later accesses.
func TestUnsignaledReordered(t *testing.T) {
	c := cluster(t, emu.Config{UnsignaledDelay: 50 * time.Millisecond, Seed: 3}, 2)
	ep := c.Node(1).NewEndpoint()
	p, _ := c.Node(0).Alloc(64)
	stale := 0
	for i := 1; i <= 5; i++ {
		if err := ep.PostSend(verbs.WorkRequest{Op: verbs.OpWrite, Remote: p, Value: uint64(i)}); err != nil {
			t.Fatal(err)
		}
		if v, _ := verbs.Read(ep, p); v != uint64(i) {
			stale++
		}
	}
	if stale == 0 {
		t.Fatal("every unsignaled write was visible to the next read: no asynchrony")
	}
}

// Two "processes": node 0 serves its region over TCP; node 1 is a separate Node object that
// reaches node 0 only through the TCP transport (and vice versa). An ALock table on node 0 is
// shared by local threads of node 0 and remote threads of node 1.
func TestTCPTransportSharedALock(t *testing.T) {
	a, err := emu.NewNode(emu.Config{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := emu.NewNode(emu.Config{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	defer b.Close()
	la, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lb, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.Serve(la)
	b.Serve(lb)
	if err := b.Connect(0, la.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := a.Connect(1, lb.Addr().String()); err != nil {
		t.Fatal(err)
	}
	tbl, err := alock.NewTable(a.NewEndpoint(), 4)
	if err != nil {
		t.Fatal(err)
	}
	alg, err := alock.New(alock.Config{LocalBudget: 2, RemoteBudget: 3})
	if err != nil {
		t.Fatal(err)
	}
	det, err := rdmatest.NewDetector(a.NewEndpoint())
	if err != nil {
		t.Fatal(err)
	}
	// Node 1 learns the table's base pointer out of band.
	remoteView := alock.OpenTable(tbl.Base(), tbl.Len())
	var wg sync.WaitGroup
	const ops = 60
	run := func(n *emu.Node, tb *alock.Table, id uint64) {
		defer wg.Done()
		ep := n.NewEndpoint()
		h, err := alg.NewHandle(ep)
		if err != nil {
			t.Error(err)
			return
		}
		for i := 0; i < ops; i++ {
			l := tb.Lock(2)
			if err := h.Lock(l); err != nil {
				t.Error(err)
				return
			}
			if err := det.CS(ep, id, nil); err != nil {
				t.Error(err)
				return
			}
			if err := h.Unlock(l); err != nil {
				t.Error(err)
				return
			}
		}
	}
	for i := 0; i < 2; i++ {
		wg.Add(2)
		go run(a, tbl, uint64(1+i))
		go run(b, remoteView, uint64(10+i))
	}
	wg.Wait()
	if det.Violations() != 0 {
		t.Fatalf("violations: %s", det.First())
	}
	cnt, err := det.Count(b.NewEndpoint())
	if err != nil || cnt != 4*ops {
		t.Fatalf("counter %d (%v), want %d", cnt, err, 4*ops)
	}
	if _, err := verbs.Read(b.NewEndpoint(), verbs.MakePtr(0, 1<<40)); !errors.Is(err, verbs.ErrBadPtr) {
		t.Fatalf("bad pointer over TCP: %v", err)
	}
}

// Two real processes share one ALock table: this test process hosts node 0 (the table, the
// detector and two local-cohort threads) and re-executes the test binary as node 1, which
// serves its own region (its threads' descriptors) and runs two remote-cohort threads over TCP.
const childEnv = "RDMA_EMU_CHILD"

const childOps = 60

func TestTwoProcessesShareALockTable(t *testing.T) {
	a, err := emu.NewNode(emu.Config{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.Serve(ln)
	tbl, err := alock.NewTable(a.NewEndpoint(), 8)
	if err != nil {
		t.Fatal(err)
	}
	det, err := rdmatest.NewDetector(a.NewEndpoint())
	if err != nil {
		t.Fatal(err)
	}
	owner, counter := det.Words()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+strings.Join([]string{ln.Addr().String(),
		strconv.FormatUint(uint64(tbl.Lock(5)), 10), strconv.FormatUint(uint64(owner), 10), strconv.FormatUint(uint64(counter), 10)}, ","))
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child prints the address of node 1's server; node 0 needs it to pass the lock into
	// the child's descriptors.
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %v", err)
	}
	if err := a.Connect(1, strings.TrimSpace(line)); err != nil {
		t.Fatal(err)
	}
	alg, err := alock.New(alock.Config{LocalBudget: 2, RemoteBudget: 3})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func(id uint64) {
			defer wg.Done()
			if err := hammer(a.NewEndpoint(), alg, tbl.Lock(5), det, id); err != nil {
				t.Error(err)
			}
		}(uint64(i + 1))
	}
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child process: %v", err)
	}
	if det.Violations() != 0 {
		t.Fatalf("violations: %s", det.First())
	}
	cnt, _ := det.Count(a.NewEndpoint())
	if cnt != 4*childOps {
		t.Fatalf("counter %d, want %d (2 local threads here + 2 remote threads in the child)", cnt, 4*childOps)
	}
}

func hammer(ep verbs.Endpoint, alg *alock.ALock, l verbs.Ptr, det *rdmatest.Detector, id uint64) error {
	h, err := alg.NewHandle(ep)
	if err != nil {
		return err
	}
	for i := 0; i < childOps; i++ {
		if err := h.Lock(l); err != nil {
			return err
		}
		if err := det.CS(ep, id, nil); err != nil {
			return err
		}
		if err := h.Unlock(l); err != nil {
			return err
		}
	}
	return nil
}

// childMain is node 1 in its own process.
func childMain() int {
	f := strings.Split(os.Getenv(childEnv), ",")
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "child:", err); return 1 }
	if len(f) != 4 {
		return fail(errors.New("bad " + childEnv))
	}
	var nums [3]uint64
	for i := range nums {
		v, err := strconv.ParseUint(f[i+1], 10, 64)
		if err != nil {
			return fail(err)
		}
		nums[i] = v
	}
	b, err := emu.NewNode(emu.Config{}, 1)
	if err != nil {
		return fail(err)
	}
	defer b.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	b.Serve(ln)
	if err := b.Connect(0, f[0]); err != nil {
		return fail(err)
	}
	fmt.Println(ln.Addr().String())
	alg, err := alock.New(alock.Config{LocalBudget: 2, RemoteBudget: 3})
	if err != nil {
		return fail(err)
	}
	det := rdmatest.AttachDetector(verbs.Ptr(nums[1]), verbs.Ptr(nums[2]))
	errs := make(chan error, 2)
	for i := 0; i < 2; i++ {
		go func(id uint64) { errs <- hammer(b.NewEndpoint(), alg, verbs.Ptr(nums[0]), det, id) }(uint64(10 + i))
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			return fail(err)
		}
	}
	if det.Violations() != 0 {
		return fail(errors.New(det.First()))
	}
	return 0
}

// fakeClock advances only when slept on; it records the total time slept.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept += d
}

// The real-time cost model: each verb pays Latency twice, and a NIC takes NICRate verbs per
// second, shared by outbound and inbound traffic, so loopback verbs (which pass the same NIC
// twice) get half the rate of verbs to another node. Checked on an injected clock.
func TestWallClockCost(t *testing.T) {
	tests := []struct {
		name      string
		cfg       emu.Config
		target    int
		wantSlept time.Duration
	}{
		{"latency", emu.Config{Latency: 5 * time.Microsecond}, 1, 10 * 2 * 5 * time.Microsecond},
		{"rate-remote", emu.Config{NICRate: 1000}, 1, 9 * time.Millisecond},
		{"rate-loopback", emu.Config{NICRate: 1000}, 0, 19 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Unix(0, 0)}
			tc.cfg.Clock = clk
			c := cluster(t, tc.cfg, 2)
			p, _ := c.Node(tc.target).Alloc(64)
			ep := c.Node(0).NewEndpoint()
			for i := 0; i < 10; i++ {
				if _, err := verbs.Read(ep, p); err != nil {
					t.Fatal(err)
				}
			}
			if clk.slept != tc.wantSlept {
				t.Fatalf("slept %v, want %v", clk.slept, tc.wantSlept)
			}
			if got := ep.Now(); got != int64(tc.wantSlept) {
				t.Fatalf("endpoint clock %d, want %d", got, tc.wantSlept)
			}
		})
	}
}
