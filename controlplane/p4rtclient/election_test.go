package p4rtclient

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// The failover test runs the primary controller in a child process (this test binary, started
// with helperEnv set) so that it can be killed with SIGKILL: no Close, no stream shutdown, the
// kernel just closes its socket.
const (
	helperEnv  = "CONTROLPLANE_TEST_HELPER"
	helperAddr = "CONTROLPLANE_TEST_ADDR"
	helperEID  = "CONTROLPLANE_TEST_ELECTION"
)

// runHelper is the child's main: "primary" connects, waits to be primary, pushes the test
// program, says "primary" on stdout and waits to be killed.
func runHelper(mode string) int {
	if mode != "primary" {
		fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
		return 2
	}
	eid, err := strconv.ParseUint(os.Getenv(helperEID), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	c, err := Dial(Config{Addr: os.Getenv(helperAddr), DeviceID: devID, ElectionID: ElectionID{Low: eid}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := c.WaitPrimary(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p, err := ProgramFromFS(os.DirFS("testdata"), "cptest.p4")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := c.SetPipeline(ctx, p, 7); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("primary")
	time.Sleep(10 * time.Minute) // until killed
	return 1
}

// TestBackupTakesOverWhenPrimaryIsKilled: a primary controller (a child process, election id 2)
// and a backup (election id 1) on one switch. The backup cannot write; the primary is killed
// with SIGKILL; the backup becomes primary, adopts the installed pipeline and writes.
func TestBackupTakesOverWhenPrimaryIsKilled(t *testing.T) {
	s := startSwitch(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=primary", helperAddr+"="+s.addr, helperEID+"=2")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	t.Cleanup(func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Scan()
		line <- sc.Text()
		for sc.Scan() { // drain until the child exits
		}
	}()
	select {
	case l := <-line:
		if l != "primary" {
			t.Fatalf("helper said %q", l)
		}
	case <-time.After(wait):
		t.Fatal("the helper controller did not become primary")
	}

	b := dial(t, s.addr, 1)
	waitState(t, b, Backup)
	ctx := ctxWait(t)
	pi, err := b.LoadPipeline(ctx)
	if err != nil || pi == nil || pi.Cookie != 7 {
		t.Fatalf("backup sees pipeline %+v, %v; want the primary's (cookie 7)", pi, err)
	}
	e, err := routes.Entry(route("10.0.2.0/24", 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.InsertEntry(ctx, e); !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("write from the backup: %v, want PERMISSION_DENIED", err)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed = true
	if err := b.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.InsertEntry(ctx, e); err != nil {
		t.Fatalf("write from the new primary: %v", err)
	}
	if entries, err := b.TableEntries(ctx, routes.Table); err != nil || len(entries) != 1 {
		t.Fatalf("entries %d, %v", len(entries), err)
	}
}

// TestBackupTakesOverOnClose: the same in one process with Close, and back: a controller with a
// higher election id that connects later preempts the current primary.
func TestBackupTakesOverOnClose(t *testing.T) {
	s := startSwitch(t)
	a := primary(t, s.addr, 5)
	b := dial(t, s.addr, 3)
	waitState(t, b, Backup)
	if a.State() != Primary {
		t.Fatalf("a is %s", a.State())
	}
	a.Close()
	if err := a.WaitPrimary(ctxWait(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("WaitPrimary on a closed client: %v", err)
	}
	ctx := ctxWait(t)
	if err := b.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := b.LoadPipeline(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.AddRoutes(ctx, routes, route("10.0.2.0/24", 2)); err != nil {
		t.Fatal(err)
	}
	// A higher election id preempts b.
	c := dial(t, s.addr, 9)
	if err := c.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	waitState(t, b, Backup)
	if err := b.AddRoutes(ctx, routes, route("10.0.3.0/24", 2)); !errors.Is(err, ErrPermissionDenied) {
		t.Fatalf("write from the preempted controller: %v", err)
	}
}

// TestRoles: election is per role; a controller of another role is primary of its own role
// alongside.
func TestRoles(t *testing.T) {
	s := startSwitch(t)
	var cs []*Client
	for _, role := range []string{"", "allocator", "sweeper"} {
		c, err := Dial(Config{Addr: s.addr, DeviceID: devID, ElectionID: ElectionID{Low: 5}, Role: role, Log: testLog(t)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		cs = append(cs, c)
	}
	for _, c := range cs {
		if err := c.WaitPrimary(ctxWait(t)); err != nil {
			t.Fatalf("role %q: %v", c.cfg.Role, err)
		}
	}
	// A second controller of the sweeper role with a lower id is its backup, and takes over.
	b, err := Dial(Config{Addr: s.addr, DeviceID: devID, ElectionID: ElectionID{Low: 2}, Role: "sweeper", Log: testLog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	waitState(t, b, Backup)
	cs[2].Close()
	if err := b.WaitPrimary(ctxWait(t)); err != nil {
		t.Fatal(err)
	}
	if cs[0].State() != Primary || cs[1].State() != Primary {
		t.Fatalf("other roles changed: %s %s", cs[0].State(), cs[1].State())
	}
}
