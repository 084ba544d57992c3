package lockserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/clock"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/wire"
)

// crashedState writes the state file a server leaves when it is killed (kill -9): its epoch and
// the longest lease it may have granted, and no record of a graceful shutdown.
func crashedState(t *testing.T, maxLease time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "server.state")
	text := fmt.Sprintf("epoch 3\nmax_lease_us %d\n", maxLease/time.Microsecond)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRestartGraceAfterCrash: a server restarted on the state file of a crashed run grants
// nothing until the longest lease that run may have granted has passed on its monotonic clock
// (issue 18: the waiter used to be granted 0.3 s after a restart while the old holder, told
// nothing, still held). Wall-clock steps during the grace change nothing. The negative control
// skips the grace and grants at once.
func TestRestartGraceAfterCrash(t *testing.T) {
	for _, tc := range []struct {
		name   string
		skip   bool
		wallBy time.Duration // wall-clock step during the grace
	}{
		{name: "grace"},
		{name: "wall-forward", wallBy: time.Hour},
		{name: "wall-back", wallBy: -time.Hour},
		{name: "negative-control", skip: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := crashedState(t, 5*time.Second)
			clk := clock.NewManual(time.Unix(5000, 0))
			s, stop := startServer(t, Config{Shards: 2, StateFile: state, Clock: clk,
				UnsafeSkipRestartGrace: tc.skip, Core: lockcore.Config{MaxLease: 2 * time.Second, DefaultLease: time.Second,
					// The waiter here does not retransmit while the manual clock jumps over the
					// grace: a wait lease longer than the grace keeps it queued.
					WaitLease: time.Minute}})
			defer stop()
			if s.Epoch() != 4 {
				t.Fatalf("epoch %d after a crash at epoch 3, want 4", s.Epoch())
			}
			p := newPeer(t, s.Addr())
			p.send(wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 1, Mode: wire.Exclusive})
			if tc.skip {
				p.expect(wire.OpGrant, 1)
				return
			}
			p.expectNothing(30 * time.Millisecond)
			clk.StepWall(tc.wallBy)
			clk.Advance(5*time.Second - time.Millisecond)
			p.expectNothing(30 * time.Millisecond)
			// The crashed run's longest lease (5 s, although this run grants at most 2 s) is over.
			clk.Advance(time.Millisecond)
			p.expect(wire.OpGrant, 1)
			// Once the grace is over the state file says this run's longest lease.
			eventuallyT(t, "max lease lowered", func() bool { return readStateT(t, state).maxLease == 2_000_000 })
		})
	}
}

// TestGracefulRestart: a graceful shutdown tells its holders and records when their leases end;
// a restart on the same boot waits only for what is left of them, and not at all when nothing
// was held.
func TestGracefulRestart(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "server.state")
	cfg := Config{Shards: 1, StateFile: state, InitState: true,
		Core: lockcore.Config{DefaultLease: 400 * time.Millisecond}}
	s, stop := startServer(t, cfg)
	p := newPeer(t, s.Addr())
	p.send(wire.Fields{Op: wire.OpAcquire, Lock: 1, Txn: 1, Mode: wire.Exclusive})
	p.expect(wire.OpGrant, 1)
	stop()
	if r := p.expect(wire.OpReject, 1); r.Status != wire.StatusShutdown {
		t.Fatalf("holder told %s, want shutdown", r.String())
	}
	st := readStateT(t, state)
	if st.cleanID == "" {
		t.Fatal("graceful shutdown left no record")
	}
	cfg.InitState = false
	s2, err := New(withListen(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if s2.restartGrace <= 0 || s2.restartGrace > 400*time.Millisecond {
		t.Fatalf("restart grace %v, want in (0, 400ms]: the holder's lease was still running", s2.restartGrace)
	}
	if readStateT(t, state).cleanID != "" {
		t.Fatal("the record of the graceful shutdown outlived the restart")
	}
	s2.closeConns()
	// s2 stopped without a graceful shutdown: its successor waits the whole max lease, and a
	// graceful shutdown within that wait records it.
	s3, stop3 := startServer(t, cfg)
	if s3.restartGrace != time.Minute {
		t.Fatalf("restart grace after a crash %v, want the max lease 1m0s", s3.restartGrace)
	}
	stop3()
	if st := readStateT(t, state); st.restartGrace(bootClock) < 59*time.Second {
		t.Fatalf("a shutdown during the restart grace recorded %v, want the rest of it", st.restartGrace(bootClock))
	}
	// Shut down with nothing held, and no grace running: the next start waits for nothing.
	cfg.UnsafeSkipRestartGrace = true
	_, stop3 = startServer(t, cfg)
	stop3()
	cfg.UnsafeSkipRestartGrace = false
	s4, err := New(withListen(cfg))
	if err != nil {
		t.Fatal(err)
	}
	defer s4.closeConns()
	if s4.restartGrace != 0 {
		t.Fatalf("restart grace %v after a shutdown with no holder, want 0", s4.restartGrace)
	}
	// Another boot: the record says nothing about it, the whole max lease applies.
	st = readStateT(t, state)
	st.cleanID = "another-boot"
	if g := st.restartGrace(bootClock); g != time.Minute {
		t.Fatalf("grace with another boot's record %v, want the max lease 1m0s", g)
	}
}

func withListen(c Config) Config {
	if c.Listen == "" {
		c.Listen = "127.0.0.1:0"
	}
	return c
}

// TestStateFileMustExist: a server that lost its state file does not silently start again at
// epoch 1 (its tokens would go backwards); --init creates a state file only where none is.
func TestStateFileMustExist(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "sub", "server.state")
	if _, err := New(Config{Listen: "127.0.0.1:0", StateFile: state}); !errors.Is(err, ErrNoState) {
		t.Fatalf("missing state file: %v, want ErrNoState", err)
	}
	s, err := New(Config{Listen: "127.0.0.1:0", StateFile: state, InitState: true})
	if err != nil {
		t.Fatal(err)
	}
	first := s.Epoch()
	s.closeConns()
	if _, err := New(Config{Listen: "127.0.0.1:0", StateFile: state, InitState: true}); err == nil {
		t.Fatal("--init over an existing state file accepted")
	}
	s, err = New(Config{Listen: "127.0.0.1:0", StateFile: state, UnsafeSkipRestartGrace: true})
	if err != nil {
		t.Fatal(err)
	}
	if s.Epoch() <= first {
		t.Fatalf("epoch %d after a restart, not above %d", s.Epoch(), first)
	}
	s.closeConns()
	if err := os.Remove(state); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", StateFile: state}); !errors.Is(err, ErrNoState) {
		t.Fatalf("deleted state file: %v, want ErrNoState", err)
	}
}
