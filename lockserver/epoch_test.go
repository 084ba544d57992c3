package lockserver

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/clock"
	"github.com/netlock-go/netlock/lockserver/srvcore"

	"github.com/netlock-go/netlock/wire"
)

// grantOnce starts a server with cfg, takes lock 1 exclusively and returns the grant's token
// and the server's epoch; the server is stopped before it returns.
func grantOnce(t *testing.T, cfg Config) (token, epoch uint64) {
	t.Helper()
	s, stop := startServer(t, cfg)
	defer stop()
	p := newPeer(t, s.Addr())
	p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 1, Txn: 1})
	return p.expect(wire.OpGrant, 1).Token, s.Epoch()
}

// TestTokensGrowAcrossRestartClockSetBack: a server restarted on the same state file issues
// larger tokens although its clock went back by a year (tokens used to start at the start time
// in ns, so they went back with the clock).
func TestTokensGrowAcrossRestartClockSetBack(t *testing.T) {
	state := filepath.Join(t.TempDir(), "server.state")
	later := clock.NewManual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	t1, e1 := grantOnce(t, Config{Shards: 1, StateFile: state, InitState: true, Clock: later})
	earlier := clock.NewManual(later.Wall().AddDate(-1, 0, 0))
	t2, e2 := grantOnce(t, Config{Shards: 1, StateFile: state, Clock: earlier, UnsafeSkipRestartGrace: true})
	if e1 != 1 || e2 != 2 {
		t.Fatalf("epochs %d then %d, want 1 then 2", e1, e2)
	}
	if t2 <= t1 {
		t.Fatalf("token after the restart %d, not above %d", t2, t1)
	}
	if st := readStateT(t, state); st.epoch != 2 {
		t.Fatalf("state file epoch %d, want 2", st.epoch)
	}
}

// TestTokensGrowOnTakeover: a replacement server with its own (fresh) state file and a clock
// behind the failed server's issues larger tokens when handed the failed server's epoch.
func TestTokensGrowOnTakeover(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewManual(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	var t1, e1 uint64
	for i := range 3 { // the failed server had restarted a few times: epoch 3
		t1, e1 = grantOnce(t, Config{Shards: 2, StateFile: filepath.Join(dir, "a.state"), InitState: i == 0, Clock: clk,
			UnsafeSkipRestartGrace: true})
	}
	behind := clock.NewManual(clk.Wall().Add(-time.Hour))
	t2, e2 := grantOnce(t, Config{Shards: 1, StateFile: filepath.Join(dir, "b.state"), InitState: true, Clock: behind,
		TakeoverEpoch: e1})
	if e2 != e1+1 || t2 <= t1 {
		t.Fatalf("replacement: epoch %d token %d; failed server: epoch %d token %d", e2, t2, e1, t1)
	}
	// Without the handed epoch a fresh server would start at epoch 1: below the failed one.
	t3, _ := grantOnce(t, Config{Shards: 1, StateFile: filepath.Join(dir, "c.state"), InitState: true, Clock: behind})
	if t3 >= t1 {
		t.Fatalf("negative control: a fresh server's token %d is not below %d", t3, t1)
	}
}

func TestStateFileErrors(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "s.state")
	a, err := New(Config{Listen: "127.0.0.1:0", Shards: 1, StateFile: state, InitState: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", Shards: 1, StateFile: state}); err == nil ||
		!strings.Contains(err.Error(), "in use") {
		t.Fatalf("second server on one state file: %v, want in use", err)
	}
	a.closeConns()
	for _, bad := range []string{"", "epoch", "epoch x", "epoch 99999999999", "garbage 3", "epoch 1\nepoch 2",
		"epoch 1\nmax_lease_us x", "epoch 1\nmax_lease_us 99999999999", "epoch 1\nclean x", "max_lease_us 5"} {
		if err := os.WriteFile(state, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if s, err := New(Config{Listen: "127.0.0.1:0", Shards: 1, StateFile: state}); err == nil {
			s.closeConns()
			t.Errorf("state file %q accepted", bad)
		}
	}
	if _, err := New(Config{Listen: "127.0.0.1:0", StateFile: filepath.Join(dir, "missing", "s.state")}); !errors.Is(err, ErrNoState) {
		t.Errorf("state file in a missing directory: %v, want ErrNoState", err)
	}
}

// TestAdminTokenFloor: the control plane raises the floor for one lock's shard or for all.
func TestAdminTokenFloor(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.state")
	s, stop := startServer(t, trusted(Config{Shards: 2, StateFile: state, InitState: true}))
	defer stop()
	p := newPeer(t, s.Addr())
	grant := func(lock uint32, txn uint64) uint64 {
		t.Helper()
		p.send(wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: txn})
		g := p.expect(wire.OpGrant, txn)
		p.send(wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: lock, Txn: txn, Token: g.Token})
		p.expect(wire.OpRelease, txn)
		return g.Token
	}
	base := wire.EpochBase(s.Epoch())
	floor := base + 1_000_000
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminTokenFloor, Lock: 4, Txn: 1, Token: floor})
	if r := p.expect(wire.OpAdmin, 1); r.Token != floor {
		t.Fatalf("reply %s, want token %d", r.String(), floor)
	}
	if tok := grant(4, 10); tok != floor+1 {
		t.Fatalf("lock 4 after the floor: token %d, want %d", tok, floor+1)
	}
	if tok := grant(5, 11); tok >= floor { // the other shard
		t.Fatalf("lock 5 (other shard): token %d, want it untouched below %d", tok, floor)
	}
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminTokenFloor, Lock: 0, Txn: 2, Token: floor + 5, Slots: 1})
	p.expect(wire.OpAdmin, 2)
	if tok := grant(5, 12); tok != floor+6 {
		t.Fatalf("lock 5 after a global floor: token %d, want %d", tok, floor+6)
	}
	// A floor in the next epochs' range moves the server there, persisted first.
	far := wire.EpochBase(s.Epoch()+3) + 7
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminTokenFloor, Lock: 4, Txn: 3, Token: far})
	if r := p.expect(wire.OpAdmin, 3); r.Token <= far {
		t.Fatalf("reply token %d, want above %d", r.Token, far)
	}
	if s.Epoch() != 5 {
		t.Fatalf("epoch %d, want 5", s.Epoch())
	}
	if st := readStateT(t, state); st.epoch != 5 {
		t.Fatalf("state file epoch %d, want 5", st.epoch)
	}
	if tok := grant(5, 13); tok <= far {
		t.Fatalf("token %d after the move, want above %d", tok, far)
	}
	p.sendControl(wire.Fields{Op: wire.OpAdmin, Status: wire.AdminTokenFloor, Lock: 4, Txn: 4, Token: 1, Slots: 7})
	if r := p.expect(wire.OpReject, 4); r.Status != wire.StatusBadRequest {
		t.Fatalf("scope 7: %s, want bad-request", r.String())
	}
}

// TestEpochRefill: a shard half-way through its epoch's token range moves the server to the
// next epoch, so no token can reach the next epoch's range unannounced.
func TestEpochRefill(t *testing.T) {
	state := filepath.Join(t.TempDir(), "s.state")
	s, err := New(Config{Listen: "127.0.0.1:0", Shards: 2, StateFile: state, InitState: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.closeConns()
	w, err := s.newWriter(0)
	if err != nil {
		t.Fatal(err)
	}
	tick := func() {
		var out srvcore.Out
		s.core.Tick(s.now(), &out)
		w.apply(s.now(), &out)
	}
	lastToken := func(lock uint32) uint64 {
		sh := s.core.ShardOf(lock)
		sh.Lock()
		defer sh.Unlock()
		return sh.Core().LastToken()
	}
	tick()
	if s.Epoch() != 1 {
		t.Fatalf("epoch %d, want 1", s.Epoch())
	}
	sh := s.core.ShardOf(1)
	sh.Lock()
	sh.Core().RaiseTokenFloor(wire.EpochBase(1) + wire.EpochRefill)
	sh.Unlock()
	tick()
	if s.Epoch() != 2 || lastToken(0) != wire.EpochBase(2) {
		t.Fatalf("epoch %d, shard 0 at %d; want 2 and %d", s.Epoch(), lastToken(0), wire.EpochBase(2))
	}
	if st := readStateT(t, state); st.epoch != 2 {
		t.Fatalf("state file epoch %d, want 2", st.epoch)
	}
}

// readStateT reads a state file or fails the test.
func readStateT(t *testing.T, path string) state {
	t.Helper()
	var st state
	found, err := readState(path, &st)
	if err != nil || !found {
		t.Fatalf("state file %s: found %v, %v", path, found, err)
	}
	return st
}
