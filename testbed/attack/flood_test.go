package attack

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

// burst sends reqs in windows of at most 64 datagrams in flight and returns, per txn, the first
// answer that came (a grant or a reject); requests a server keeps waiting get no answer within
// quiet and are absent from the map.
func (p *peer) burst(reqs []wire.Fields, quiet time.Duration) map[uint64]wire.Fields {
	p.t.Helper()
	got := make(map[uint64]wire.Fields, len(reqs))
	const window = 64
	for i := 0; i < len(reqs); i += window {
		end := min(i+window, len(reqs))
		for _, r := range reqs[i:end] {
			p.send(r)
		}
		for {
			f, ok := p.recv(quiet)
			if !ok {
				break
			}
			if _, seen := got[f.Txn]; !seen && (f.Op == wire.OpGrant || f.Op == wire.OpReject) {
				got[f.Txn] = f
			}
			if len(got) >= end {
				break
			}
		}
	}
	return got
}

// tally counts the answers by grant and by reject status.
func tally(answers map[uint64]wire.Fields) (grants int, rejects map[wire.Status]int) {
	rejects = map[wire.Status]int{}
	for _, f := range answers {
		if f.Op == wire.OpGrant {
			grants++
		} else {
			rejects[f.Status]++
		}
	}
	return grants, rejects
}

func serverArgs(t *testing.T, addr string, extra ...string) []string {
	return append([]string{"server", "--listen", addr, "--state-file", filepath.Join(t.TempDir(), "s.state"), "--init",
		"--lease", "20s", "--max-lease", "20s"}, extra...)
}

// TestLockFlood (issue 18, item 6): a sender that acquires ever new locks used to grow the
// server without bound (4.4 M held locks, 1.6 GB, no reject). Past --max-locks (the whole
// server's, divided among its shards) new locks are refused overloaded; the locks it holds are
// served as before, and a freed lock makes room. The control: with --max-locks -1 every lock
// of the same flood is granted.
func TestLockFlood(t *testing.T) {
	const locks, bound = 3000, 1000
	for _, max := range []string{"1000", "-1"} {
		t.Run("max-locks="+max, func(t *testing.T) {
			addr := freeUDP(t)
			// A released lock's state is kept for --idle-retention: short here, so that the room a
			// release makes is soon there.
			s := start(t, serverArgs(t, addr, "--shards", "2", "--max-locks", max, "--idle-retention", "50ms")...)
			s.waitFor(t, serving)
			p := newPeer(t, addr)
			reqs := make([]wire.Fields, locks)
			for i := range reqs {
				reqs[i] = wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: uint32(1000 + i), Txn: uint64(1 + i)}
			}
			answers := p.burst(reqs, 500*time.Millisecond)
			grants, rejects := tally(answers)
			t.Logf("%d acquires of distinct locks: %d answered, %d granted, rejects %v", locks, len(answers), grants, rejects)
			if max == "-1" {
				if grants != locks {
					t.Fatalf("control: unbounded, %d of %d distinct locks granted", grants, locks)
				}
				return
			}
			if grants > bound || grants < bound*9/10 {
				t.Fatalf("%d locks granted with --max-locks %d", grants, bound)
			}
			if rejects[wire.StatusOverloaded] != locks-grants || len(answers) != locks {
				t.Fatalf("rejects %v, %d answers: want %d overloaded, every acquire answered", rejects, len(answers), locks-grants)
			}
			// A held lock is served: its holder releases it, and that makes room for a new lock.
			var held, refused wire.Fields
			for _, f := range answers {
				if f.Op == wire.OpGrant && held.Op == 0 {
					held = f
				}
			}
			for _, r := range reqs {
				if a := answers[r.Txn]; a.Op == wire.OpReject {
					refused = r
					break
				}
			}
			rel := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: held.Lock, Txn: held.Txn, Token: held.Token}
			p.expectOp(wire.OpRelease, held.Txn, &rel, 5*time.Second)
			// The room freed is in the released lock's shard, once its idle state is dropped:
			// acquire locks of the refused ones until one is granted (each shard holds half the
			// bound).
			for _, r := range reqs {
				if answers[r.Txn].Op != wire.OpReject {
					continue
				}
				r.Txn += 1 << 32 // a new request
				p.send(r)
				if f, ok := p.recv(300 * time.Millisecond); ok && f.Op == wire.OpGrant {
					return
				}
			}
			t.Fatalf("after a release no refused lock (first %d) could be acquired", refused.Lock)
		})
	}
}

// TestWaiterFlood (issue 18, item 6): waiters of one lock are bounded by --max-waiters; past
// it acquires are refused queue-full at once instead of growing the queue (100 k waiters made
// every acquire scan them all). The control: --max-waiters -1 queues every one.
func TestWaiterFlood(t *testing.T) {
	const waiters, bound = 300, 50
	for _, max := range []string{"50", "-1"} {
		t.Run("max-waiters="+max, func(t *testing.T) {
			addr := freeUDP(t)
			s := start(t, serverArgs(t, addr, "--shards", "1", "--max-waiters", max)...)
			s.waitFor(t, serving)
			holder, p := newPeer(t, addr), newPeer(t, addr)
			acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 9, Txn: 1}
			holder.expectOp(wire.OpGrant, 1, &acq, 5*time.Second)
			reqs := make([]wire.Fields, waiters)
			for i := range reqs {
				reqs[i] = wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 9, Txn: uint64(100 + i)}
			}
			grants, rejects := tally(p.burst(reqs, 300*time.Millisecond))
			t.Logf("%d waiters behind a holder: %d granted, rejects %v", waiters, grants, rejects)
			switch {
			case grants != 0:
				t.Fatalf("%d waiters granted while the lock is held", grants)
			case max == "-1" && len(rejects) != 0:
				t.Fatalf("control: unbounded, rejects %v", rejects)
			case max != "-1" && rejects[wire.StatusQueueFull] != waiters-bound:
				t.Fatalf("rejects %v, want %d queue-full", rejects, waiters-bound)
			}
		})
	}
}

// TestTenantQuotaAcrossShards (issue 18, item 6): a tenant's max_outstanding is the server's,
// not each shard's (100 used to become 400 with four shards). The control: the same tenant
// without a quota gets every lock.
func TestTenantQuotaAcrossShards(t *testing.T) {
	const locks, quota = 400, 100
	for _, limited := range []bool{true, false} {
		name := "quota"
		if !limited {
			name = "no-quota"
		}
		t.Run(name, func(t *testing.T) {
			addr := freeUDP(t)
			args := serverArgs(t, addr, "--shards", "4")
			if limited {
				cfg := filepath.Join(t.TempDir(), "server.yaml")
				if err := os.WriteFile(cfg, []byte("quotas:\n  7:\n    max_outstanding: 100\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", cfg)
			}
			s := start(t, args...)
			s.waitFor(t, serving)
			p := newPeer(t, addr)
			reqs := make([]wire.Fields, locks)
			for i := range reqs {
				reqs[i] = wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Tenant: 7, Lock: uint32(500 + i), Txn: uint64(1 + i)}
			}
			grants, rejects := tally(p.burst(reqs, 500*time.Millisecond))
			t.Logf("tenant 7, %d locks over 4 shards: %d granted, rejects %v", locks, grants, rejects)
			switch {
			case limited && (grants != quota || rejects[wire.StatusQuota] != locks-quota):
				t.Fatalf("%d granted, rejects %v: want %d granted, the rest quota", grants, rejects, quota)
			case !limited && grants != locks:
				t.Fatalf("control: no quota, %d of %d granted", grants, locks)
			}
		})
	}
}

// TestReplayAfterRelease (issue 18, item 8): a copy of an old acquire, replayed after its
// request was released, used to be queued again and granted to the replayer. The server
// remembers ended requests (--replay-window, --replay-capacity) and ignores the copy; another
// client then gets the lock at once. The control: with --replay-capacity 1 and another request
// ended in between, the server has forgotten the request and grants the replay.
func TestReplayAfterRelease(t *testing.T) {
	for _, forget := range []bool{false, true} {
		name := "remembered"
		if forget {
			name = "negative-control"
		}
		t.Run(name, func(t *testing.T) {
			addr := freeUDP(t)
			extra := []string{"--shards", "1"}
			if forget {
				extra = append(extra, "--replay-capacity", "1")
			}
			s := start(t, serverArgs(t, addr, extra...)...)
			s.waitFor(t, serving)
			victim, attacker, other := newPeer(t, addr), newPeer(t, addr), newPeer(t, addr)
			acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 5, Txn: 1, Timestamp: 42}
			captured := acq // what an on-path attacker recorded
			g, _ := victim.expectOp(wire.OpGrant, 1, &acq, 5*time.Second)
			rel := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: 5, Txn: 1, Token: g.Token}
			victim.expectOp(wire.OpRelease, 1, &rel, 5*time.Second)
			if forget {
				a := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 6, Txn: 2}
				g6, _ := other.expectOp(wire.OpGrant, 2, &a, 5*time.Second)
				r := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: 6, Txn: 2, Token: g6.Token}
				other.expectOp(wire.OpRelease, 2, &r, 5*time.Second)
			}
			attacker.send(captured)
			captured.Flags |= wire.FlagRetry
			attacker.send(captured)
			f, replayed := attacker.recv(500 * time.Millisecond)
			replayed = replayed && f.Op == wire.OpGrant
			if forget {
				if !replayed {
					t.Fatalf("negative control: the forgotten request's replay was not granted (%s); the check could not have failed", f.String())
				}
				return
			}
			if replayed {
				t.Fatalf("the replayed acquire was granted to the replayer: %s", f.String())
			}
			next := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 5, Txn: 3}
			if f, at := other.expectOp(wire.OpGrant, 3, &next, 5*time.Second); f.Token <= g.Token {
				t.Fatalf("next holder's token %d not above %d (at %v)", f.Token, g.Token, at)
			}
		})
	}
}
