package attack

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

var serving = regexp.MustCompile(`lock server serving`)

// TestKillNineRestart (issue 18, item 1): a server holding a lock for a client (2 s lease, no
// keep-alive) with a waiter queued is killed with SIGKILL and restarted on its state file. The
// waiter must not be granted before the holder's lease has ended on the holder's reckoning
// (send instant + wire.HolderLease). It used to be granted 0.3 s after the restart. The negative
// control restarts with --unsafe-skip-restart-grace and sees the waiter granted while the holder
// still holds. A deleted state file stops the server instead of restarting tokens at epoch 1.
func TestKillNineRestart(t *testing.T) {
	for _, unsafe := range []bool{false, true} {
		name := "grace"
		if unsafe {
			name = "negative-control"
		}
		t.Run(name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "server.state")
			addr := freeUDP(t)
			args := []string{"server", "--listen", addr, "--state-file", state, "--lease", "2s", "--max-lease", "2s",
				"--shards", "1"}
			s := start(t, append(args, "--init")...)
			s.waitFor(t, serving)
			holder, waiter := newPeer(t, addr), newPeer(t, addr)
			acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 7, Txn: 1}
			sentAt := time.Now()
			g, _ := holder.expectOp(wire.OpGrant, 1, &acq, 5*time.Second)
			leaseEnd := sentAt.Add(wire.HolderLease(time.Duration(g.LeaseMicros) * time.Microsecond))
			wacq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 7, Txn: 2}
			waiter.send(wacq)
			if f, ok := waiter.recv(200 * time.Millisecond); ok {
				t.Fatalf("the waiter got %s while the lock is held", f.String())
			}
			s.kill()
			restart := args
			if unsafe {
				restart = append(restart, "--unsafe-skip-restart-grace")
			}
			s2 := start(t, restart...)
			s2.waitFor(t, serving)
			wacq.Flags |= wire.FlagRetry
			w, grantedAt := waiter.expectOp(wire.OpGrant, 2, &wacq, 10*time.Second)
			if w.Token <= g.Token {
				t.Errorf("token after the restart %d, not above the holder's %d", w.Token, g.Token)
			}
			early := grantedAt.Before(leaseEnd)
			switch {
			case !unsafe && early:
				t.Fatalf("the waiter was granted %v before the holder's lease ended: two holders",
					leaseEnd.Sub(grantedAt))
			case unsafe && !early:
				t.Fatalf("negative control: without the restart grace the waiter was granted only %v after the "+
					"holder's lease ended; the check could not have failed", grantedAt.Sub(leaseEnd))
			}
			if !unsafe && !strings.Contains(s2.output(), "restart_grace=2s") {
				t.Errorf("the restarted server does not announce its grace:\n%s", s2.output())
			}
			s2.kill()
			// The state file is gone: no silent restart at epoch 1.
			if err := os.Remove(state); err != nil {
				t.Fatal(err)
			}
			s3 := start(t, args...)
			err := s3.wait(t, 10*time.Second)
			if err == nil || !strings.Contains(s3.output(), "does not exist") {
				t.Fatalf("a server without its state file: exit %v, output:\n%s", err, s3.output())
			}
		})
	}
}

// TestSecondServerOnTheAddress (issue 18, item 3): a second `netlock server` on an address
// already served fails to start with a clear error (two servers shared the port as one
// SO_REUSEPORT group and both granted the same lock), whatever its reader count; no process can
// join the first server's socket with SO_REUSEPORT either. The control: the same second server on
// a free address starts.
func TestSecondServerOnTheAddress(t *testing.T) {
	addr := freeUDP(t)
	a := start(t, "server", "--listen", addr, "--state-file", filepath.Join(t.TempDir(), "a.state"), "--init",
		"--sockets", "2")
	a.waitFor(t, serving)
	for _, readers := range []string{"1", "2", "4"} {
		b := start(t, "server", "--listen", addr, "--state-file", filepath.Join(t.TempDir(), "b.state"), "--init",
			"--sockets", readers)
		if err := b.wait(t, 10*time.Second); err == nil || !strings.Contains(b.output(), "another process serves this address") {
			t.Fatalf("second server (%s readers) on %s: exit %v, output:\n%s", readers, addr, err, b.output())
		}
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, 0xf /* SO_REUSEPORT */, 1); err != nil {
		t.Fatal(err)
	}
	ap := netipAddr(t, addr)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err == nil {
		t.Fatal("a SO_REUSEPORT socket joined the server's address")
	}
	c := start(t, "server", "--listen", freeUDP(t), "--state-file", filepath.Join(t.TempDir(), "c.state"), "--init")
	c.waitFor(t, serving)
}

// TestNoReflection (issue 18, item 7): a request flagged forwarded names the address the server
// answers; from anyone but a configured switch it is dropped, so that nobody can make the server
// send grants and rejects to a victim. The control: the same datagram from a configured switch
// address is answered to the address it names.
func TestNoReflection(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "rack.key")
	if err := os.WriteFile(keyFile, []byte("6e65746c6f636b21\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sw := range []string{"127.0.0.2", "127.0.0.1"} {
		addr := freeUDP(t)
		s := start(t, "server", "--listen", addr, "--state-file", filepath.Join(t.TempDir(), "s.state"), "--init",
			"--rack-key-file", keyFile, "--switch", sw)
		s.waitFor(t, serving)
		attacker, victim := newPeer(t, addr), newPeer(t, addr)
		attacker.send(wire.Fields{Op: wire.OpAcquire, Flags: wire.FlagForwarded, Mode: wire.Exclusive, Lock: 3, Txn: 9,
			Client: victim.addr()})
		f, ok := victim.recv(300 * time.Millisecond)
		switch {
		case sw == "127.0.0.2" && ok:
			t.Fatalf("the server reflected %s to the victim", f.String())
		case sw == "127.0.0.1" && (!ok || f.Op != wire.OpGrant):
			t.Fatalf("control: a forwarded acquire from the switch was not answered to its client (%v %s)", ok, f.String())
		}
		s.kill()
	}
}
