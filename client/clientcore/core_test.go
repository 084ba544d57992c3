package clientcore

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/wire"
)

var (
	srvA = netip.MustParseAddrPort("10.0.0.1:8888")
	srvB = netip.MustParseAddrPort("10.0.0.2:8888")
)

// newTestCore is a Core routing every lock to srvA, with 10ms..80ms retransmissions, a 1s
// request timeout and 4 attempts; cfg's non-zero fields win.
func newTestCore(t testing.TB, cfg Config) *Core {
	t.Helper()
	if cfg.Route == nil {
		cfg.Route = func(uint32) (netip.AddrPort, error) { return srvA, nil }
		cfg.Servers = []netip.AddrPort{srvA}
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval, cfg.MaxRetryInterval, cfg.RequestTimeout = 10*time.Millisecond, 80*time.Millisecond, time.Second
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 4
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// FuzzReceive feeds arbitrary datagrams to a core that has an acquire waiting and a held grant
// with a release and a renewal in flight: nothing may panic, every datagram is counted as either
// malformed or received, and every operation that finished is finished exactly once.
func FuzzReceive(f *testing.F) {
	for _, fl := range []wire.Fields{
		{Op: wire.OpGrant, Lock: 1, Txn: 1, Token: 5, LeaseMicros: 100},
		{Op: wire.OpGrant, Lock: 2, Txn: 2, Token: 9},
		{Op: wire.OpReject, Lock: 1, Txn: 1, Status: wire.StatusQuota},
		{Op: wire.OpReject, Lock: 2, Txn: 2, Token: 9, Status: wire.StatusLeaseExpired},
		{Op: wire.OpRelease, Flags: wire.FlagReply, Lock: 2, Txn: 2, Token: 9},
		{Op: wire.OpLeaseProbe, Flags: wire.FlagReply, Lock: 2, Txn: 2, Token: 9, LeaseMicros: 7},
		{Op: wire.OpAdmin, Status: wire.AdminPing},
	} {
		f.Add(wire.Append(nil, &fl))
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Add(wire.AppendBatch(nil, wire.Fields{Op: wire.OpGrant, Lock: 1, Txn: 1, Token: 5},
		wire.Fields{Op: wire.OpRelease, Flags: wire.FlagReply, Lock: 2, Txn: 2, Token: 9}))
	f.Add(wire.AppendBatch(nil, wire.Fields{Op: wire.OpGrant, Lock: 1, Txn: 1, Token: 5},
		wire.Fields{Op: wire.OpGrant, Lock: 2, Txn: 2, Token: 9})[:wire.Len+3])
	f.Fuzz(func(t *testing.T, b []byte) {
		c := newTestCore(t, Config{KeepAlive: true})
		var out Out
		now := int64(1e9)
		var ea, eh Entry
		var acq, hacq, rel, ren Op
		if err := c.Acquire(now, &ea, &acq, 1, wire.Exclusive, 1, false, ReqOptions{}, &out); err != nil {
			t.Fatal(err)
		}
		if err := c.Acquire(now, &eh, &hacq, 2, wire.Exclusive, 2, false, ReqOptions{}, &out); err != nil {
			t.Fatal(err)
		}
		g := wire.Fields{Op: wire.OpGrant, Lock: 2, Txn: 2, Mode: wire.Exclusive, Token: 9, LeaseMicros: 1_000_000,
			Timestamp: hacq.req.Timestamp}
		c.Receive(now, wire.Append(nil, &g), srvA, &out)
		if !hacq.Done || hacq.Err != nil {
			t.Fatalf("the held grant's acquire: done %v err %v", hacq.Done, hacq.Err)
		}
		c.Renew(now, &eh, &ren, &out)
		c.Release(now, &eh, &rel, &out)
		before := c.Stats()
		out.Reset()
		c.Receive(now, b, srvA, &out)
		after := c.Stats()
		want := int64(1) // a datagram is one answer, or malformed
		if k, err := wire.ParseBatch(b); wire.IsBatch(b) && err == nil {
			want = int64(k) // a good batch is k answers
		}
		if after.Malformed+after.Received != before.Malformed+before.Received+want {
			t.Fatalf("datagram not counted: %+v -> %+v", before, after)
		}
		seen := map[*Op]bool{}
		for _, op := range out.Done {
			if seen[op] || !op.Done {
				t.Fatalf("op %v reported twice or not done", op.Kind)
			}
			seen[op] = true
		}
	})
}

// TestReceiveBatch: the answers of a batch datagram are handled in order as if each had come
// alone; a malformed batch is dropped whole and counted once.
func TestReceiveBatch(t *testing.T) {
	c := newTestCore(t, Config{})
	var out Out
	now := int64(1e9)
	var es [3]Entry
	var ops [3]Op
	var grants []wire.Fields
	for i := range es {
		if err := c.Acquire(now, &es[i], &ops[i], uint32(i+1), wire.Exclusive, uint64(i+1), false, ReqOptions{}, &out); err != nil {
			t.Fatal(err)
		}
		grants = append(grants, wire.Fields{Op: wire.OpGrant, Lock: uint32(i + 1), Txn: uint64(i + 1), Mode: wire.Exclusive,
			Token: uint64(10 + i), LeaseMicros: 1_000_000, Timestamp: ops[i].req.Timestamp})
	}
	out.Reset()
	bad := wire.AppendBatch(nil, grants...)
	c.Receive(now, bad[:len(bad)-1], srvA, &out)
	if st := c.Stats(); st.Malformed != 1 || st.Received != 0 || len(out.Done) != 0 {
		t.Fatalf("truncated batch: %+v, %d done", st, len(out.Done))
	}
	c.Receive(now, wire.AppendBatch(nil, grants...), srvA, &out)
	if st := c.Stats(); st.Received != 3 || st.Grants != 3 || len(out.Done) != 3 {
		t.Fatalf("batch of 3 grants: %+v, %d done", st, len(out.Done))
	}
	for i := range ops {
		if !ops[i].Done || ops[i].Err != nil || !es[i].Held() || out.Done[i] != &ops[i] {
			t.Fatalf("acquire %d: done %v err %v held %v (in order: %v)", i, ops[i].Done, ops[i].Err, es[i].Held(),
				out.Done[i] == &ops[i])
		}
	}
}

// sent returns the datagrams of out as "op lock txn flags -> addr" lines.
func sent(out *Out) []string {
	var r []string
	for _, s := range out.Sends {
		r = append(r, s.Msg.Op.String()+" "+s.To.String()+" "+s.Msg.Flags.String())
	}
	return r
}

// TestRetransmitBackoffAndFailover: an unanswered acquire is retransmitted with the retry flag at
// doubling intervals (no jitter here) to the server its lock routes to at that moment, with a
// liveness probe once half of MaxAttempts copies to that server went unanswered; after a route
// change the next copy goes to the new server and answers from the old one are foreign;
// MaxAttempts silent copies fail it as unreachable and it is withdrawn.
func TestRetransmitBackoffAndFailover(t *testing.T) {
	to := srvA
	c := newTestCore(t, Config{Route: func(uint32) (netip.AddrPort, error) { return to, nil },
		Servers: []netip.AddrPort{srvA, srvB}})
	var out Out
	var e Entry
	var op Op
	now := int64(1e9)
	if err := c.Acquire(now, &e, &op, 7, wire.Exclusive, 99, false, ReqOptions{}, &out); err != nil {
		t.Fatal(err)
	}
	if got := sent(&out); len(got) != 1 || got[0] != "acquire 10.0.0.1:8888 " {
		t.Fatalf("first copy %v", got)
	}
	// Copies at +10, +30 (20 later), +70 (40 later) ms: each with the retry flag and a probe.
	for i, gap := range []time.Duration{10, 20, 40} {
		out.Reset()
		if c.NextDeadline() != now+int64(gap*time.Millisecond) {
			t.Fatalf("copy %d due at %d, want %d", i+2, c.NextDeadline()-now, int64(gap*time.Millisecond))
		}
		now = c.NextDeadline()
		if i == 1 {
			to = srvB // a failover: the lock routes elsewhere from now on
		}
		c.Tick(now, &out)
		// No liveness probe yet: it goes once MaxAttempts/2 (2) copies to one server went
		// unanswered, and the failover to srvB started the count again.
		want := []string{"acquire " + to.String() + " retry"}
		if got := sent(&out); !slices.Equal(got, want) {
			t.Fatalf("copy %d: %v, want %v", i+2, got, want)
		}
	}
	// A grant from the old server is foreign now.
	g := wire.Fields{Op: wire.OpGrant, Lock: 7, Txn: 99, Mode: wire.Exclusive, Token: 5, LeaseMicros: 1e6,
		Timestamp: op.req.Timestamp}
	before := c.Stats().Foreign
	out.Reset()
	c.Receive(now, wire.Append(nil, &g), srvA, &out)
	if c.Stats().Foreign != before+1 || op.Done {
		t.Fatalf("a grant from the old server: foreign %d -> %d, done %v", before, c.Stats().Foreign, op.Done)
	}
	// Silent copies to srvB: the third and fourth go with a liveness probe, and the fourth
	// silent one (MaxAttempts) fails the acquire, which is then withdrawn.
	var copies []string
	for !op.Done {
		out.Reset()
		now = c.NextDeadline()
		c.Tick(now, &out)
		if !op.Done {
			copies = append(copies, strings.Join(sent(&out), ", "))
		}
	}
	probed := "acquire 10.0.0.2:8888 retry, lease-probe 10.0.0.2:8888 "
	if want := []string{probed, probed}; !slices.Equal(copies, want) {
		t.Fatalf("the last copies to srvB: %q, want %q", copies, want)
	}
	var ue *UnreachableError
	if !errors.As(op.Err, &ue) || ue.Server != srvB.String() || ue.Attempts != 4 {
		t.Fatalf("acquire failed with %v, want unreachable %s after 4 attempts", op.Err, srvB)
	}
	if got := sent(&out); len(got) != 1 || got[0] != "release 10.0.0.2:8888 " {
		t.Fatalf("withdrawal %v, want a release with token 0 to the new server", got)
	}
	// The grant that raced with the withdrawal is released with its token.
	out.Reset()
	c.Receive(now, wire.Append(nil, &g), srvB, &out)
	if len(out.Sends) != 1 || out.Sends[0].Msg.Op != wire.OpRelease || out.Sends[0].Msg.Token != 5 {
		t.Fatalf("after a racing grant: %v, want its release", sent(&out))
	}
	ack := wire.Fields{Op: wire.OpRelease, Flags: wire.FlagReply, Lock: 7, Txn: 99, Token: 5}
	out.Reset()
	c.Receive(now, wire.Append(nil, &ack), srvB, &out)
	if c.Entries() != 0 {
		t.Fatalf("%d entries after the withdrawal ended, want 0", c.Entries())
	}
}

// TestLeaseKeeper: with KeepAlive the lease is renewed after a third of it; a refused renewal
// loses the lease; without renewals the lease is lost at its deadline (the holder's share of the
// lease: wire.HolderLease).
func TestLeaseKeeper(t *testing.T) {
	for _, keep := range []bool{true, false} {
		c := newTestCore(t, Config{KeepAlive: keep})
		var out Out
		var e Entry
		var op Op
		now := int64(1e9)
		if err := c.Acquire(now, &e, &op, 1, wire.Exclusive, 1, false, ReqOptions{}, &out); err != nil {
			t.Fatal(err)
		}
		g := wire.Fields{Op: wire.OpGrant, Lock: 1, Txn: 1, Mode: wire.Exclusive, Token: 3, LeaseMicros: 900_000,
			Timestamp: op.req.Timestamp}
		out.Reset()
		c.Receive(now, wire.Append(nil, &g), srvA, &out)
		if !op.Done || op.Err != nil || !e.Held() {
			t.Fatalf("keep=%v: grant not held: %v", keep, op.Err)
		}
		end := now + int64(wire.HolderLease(900*time.Millisecond))
		if e.Deadline() != end {
			t.Fatalf("keep=%v: deadline %d, want %d", keep, e.Deadline()-now, end-now)
		}
		if !keep {
			out.Reset()
			c.Tick(end-1, &out)
			if len(out.Lost) != 0 {
				t.Fatal("lost before the deadline")
			}
			c.Tick(end, &out)
			if len(out.Lost) != 1 || !errors.Is(e.LostErr(), ErrLeaseLost) {
				t.Fatalf("at the deadline: lost %v, err %v", len(out.Lost), e.LostErr())
			}
			continue
		}
		due := end - int64(2*900*time.Millisecond/3)
		if c.NextDeadline() != due {
			t.Fatalf("renewal due at %d, want %d", c.NextDeadline()-now, due-now)
		}
		out.Reset()
		c.Tick(due, &out)
		if len(out.Sends) != 1 || out.Sends[0].Msg.Op != wire.OpLeaseProbe || out.Sends[0].Msg.Token != 3 {
			t.Fatalf("renewal %v", sent(&out))
		}
		rej := wire.Fields{Op: wire.OpReject, Lock: 1, Txn: 1, Token: 3, Status: wire.StatusNotHolder,
			Timestamp: out.Sends[0].Msg.Timestamp}
		out.Reset()
		c.Receive(due, wire.Append(nil, &rej), srvA, &out)
		if len(out.Lost) != 1 || !errors.Is(e.LostErr(), ErrLeaseLost) {
			t.Fatalf("refused renewal: lost %d, err %v", len(out.Lost), e.LostErr())
		}
	}
}

// TestTryAcquireHeardWhileItsGrantWaits: a try acquire may wait after all. The lock server's RDMA
// tier grants a try in its lock core and then holds the grant back until its proxy has taken the
// ALock, which a co-located or remote caller may have taken just after the tier's would-block
// check; meanwhile the server answers the try's retransmissions with nothing (the grant is not
// sent yet). Its retransmissions must carry the liveness probe like a waiting acquire's, so that
// the refusals of the probes keep it alive until the grant comes; a server that answers nothing
// at all still fails it as unreachable after MaxAttempts copies (the negative control).
func TestTryAcquireHeardWhileItsGrantWaits(t *testing.T) {
	for _, tc := range []struct {
		name          string
		answersProbes bool
	}{
		{"server answers the probes", true},
		{"silent server", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCore(t, Config{})
			var out Out
			var e Entry
			var op Op
			now := int64(1e9)
			if err := c.Acquire(now, &e, &op, 7, wire.Exclusive, 99, true, ReqOptions{}, &out); err != nil {
				t.Fatal(err)
			}
			const copies = 3 * 4 // three times MaxAttempts
			for i := 0; i < copies && !op.Done; i++ {
				out.Reset()
				now = c.NextDeadline()
				c.Tick(now, &out)
				if !tc.answersProbes {
					continue
				}
				for _, s := range out.Sends {
					if s.Msg.Op == wire.OpLeaseProbe && s.Msg.Token == 0 {
						rej := wire.Fields{Op: wire.OpReject, Status: wire.StatusNotHolder, Lock: 7, Txn: 99,
							Timestamp: s.Msg.Timestamp}
						c.Receive(now, wire.Append(nil, &rej), srvA, &out)
					}
				}
			}
			if !tc.answersProbes {
				var ue *UnreachableError
				if !op.Done || !errors.As(op.Err, &ue) || ue.Attempts != 4 {
					t.Fatalf("try acquire to a silent server: done %v, err %v; want unreachable after 4 attempts",
						op.Done, op.Err)
				}
				return
			}
			if op.Done {
				t.Fatalf("try acquire failed while its grant waited and the server answered: %v", op.Err)
			}
			// A lease long beside the wait: the grant is the caller's without a renewal first.
			g := wire.Fields{Op: wire.OpGrant, Lock: 7, Txn: 99, Mode: wire.Exclusive, Token: 5, LeaseMicros: 60e6,
				Timestamp: op.req.Timestamp}
			out.Reset()
			c.Receive(now, wire.Append(nil, &g), srvA, &out)
			if !op.Done || op.Err != nil || !e.Held() {
				t.Fatalf("after the grant: done %v, err %v, held %v; want granted", op.Done, op.Err, e.Held())
			}
		})
	}
}
