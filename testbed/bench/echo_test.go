package bench

import (
	"context"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/wire"
)

func TestMain(m *testing.M) {
	// go-redis starts a clock goroutine from its package init and stops it only when the last
	// client closes; without redis-server no client is ever made.
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/redis/go-redis/v9/internal/pool.startGlobalTimeCache.func1"))
}

// startEcho runs an echo server for the duration of the test.
func startEcho(t *testing.T, sockets int) *EchoServer {
	t.Helper()
	srv, err := NewEcho(EchoConfig{Listen: "127.0.0.1:0", Sockets: sockets})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("echo Run: %v", err)
		}
	})
	return srv
}

func TestEchoAnswers(t *testing.T) {
	srv := startEcho(t, 2)
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(srv.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	tests := []struct {
		in      wire.Fields
		wantOp  wire.Op
		wantFlg wire.Flags
	}{
		{wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: 1, Txn: 2, Token: 0}, wire.OpGrant, 0},
		{wire.Fields{Op: wire.OpRelease, Lock: 1, Txn: 2, Token: 9}, wire.OpRelease, wire.FlagReply},
		{wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing}, wire.OpAdmin, wire.FlagReply},
		{wire.Fields{Op: wire.OpLeaseProbe, Lock: 3, Txn: 4, Flags: wire.FlagRetry}, wire.OpLeaseProbe, wire.FlagReply | wire.FlagRetry},
	}
	buf := make([]byte, 2048)
	for i, tt := range tests {
		// A trailer is not echoed: the answer is the 48-byte header.
		if _, err := c.Write(append(wire.Append(nil, &tt.in), "trailer"...)); err != nil {
			t.Fatal(err)
		}
		n, err := c.Read(buf)
		if err != nil {
			t.Fatalf("#%d: %v", i, err)
		}
		h, err := wire.Parse(buf[:n])
		if err != nil || n != wire.Len {
			t.Fatalf("#%d: %d bytes, %v", i, n, err)
		}
		var got wire.Fields
		h.Decode(&got)
		want := tt.in
		want.Op, want.Flags = tt.wantOp, tt.wantFlg
		if got != want {
			t.Fatalf("#%d: got %v, want %v", i, &got, &want)
		}
	}
	// Malformed datagrams are dropped and counted.
	if _, err := c.Write([]byte{2, 0, 0}); err != nil {
		t.Fatal(err)
	}
	// The ping after it is answered, so the malformed one has been processed.
	c.Write(wire.Append(nil, &wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing}))
	if _, err := c.Read(buf); err != nil {
		t.Fatal(err)
	}
	// The counters are updated after the system calls return, so the last answer may arrive
	// before its send is counted.
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := srv.Stats()
		if st.Malformed == 1 && st.Received == 6 && st.Sent == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v", st)
		}
		time.Sleep(time.Millisecond)
	}
}

// tinyDurations are the measured intervals of the tests' tiny runs. A loaded machine (and the race
// detector) can stall a process for longer than a tiny run; a run that made no progress at all is
// repeated with the next, longer interval. Tests never look at speed, only at progress and at
// every answer matching its request.
var tinyDurations = []time.Duration{200 * time.Millisecond, 600 * time.Millisecond, 2 * time.Second}

// untilProgress calls run with each of tinyDurations until it reports progress.
func untilProgress(t *testing.T, run func(d time.Duration) (progress bool)) {
	t.Helper()
	for _, d := range tinyDurations {
		if run(d) {
			return
		}
		t.Logf("no progress in a %v run; retrying with a longer one", d)
	}
	t.Fatal("no progress in any run")
}

func TestLoadAgainstEcho(t *testing.T) {
	srv := startEcho(t, 2)
	var res LoadResult
	untilProgress(t, func(d time.Duration) bool {
		var err error
		res, err = RunLoad(context.Background(), LoadConfig{Target: srv.Addr(), Workers: 2, Outstanding: 4,
			Duration: d, Warmup: 20 * time.Millisecond, Mode: wire.Exclusive})
		if err != nil {
			t.Fatal(err)
		}
		return res.Pairs > 0
	})
	checkLoad(t, res)
}

// checkLoad checks a load result for sanity: answers arrived and every one matched a request.
// It never looks at speed.
func checkLoad(t *testing.T, res LoadResult) {
	t.Helper()
	t.Logf("%+v", res)
	if res.Ops == 0 || res.Pairs == 0 || res.OpsPerSec <= 0 {
		t.Fatalf("no progress: %+v", res)
	}
	if res.Unexpected != 0 || res.Malformed != 0 || res.Unfinished != 0 || res.Rejects != 0 {
		t.Fatalf("unmatched answers: %+v", res)
	}
	if res.Latency.Count != res.Ops || res.Latency.P50 <= 0 || res.Latency.P99 < res.Latency.P50 ||
		res.Latency.Max < res.Latency.P999 {
		t.Fatalf("latency %+v", res.Latency)
	}
	// Every pair is two ops; ops in the window may include up to one unpaired op per slot at
	// each end of the window.
	slack := uint64(2 * res.Workers * res.Outstanding)
	if res.Ops+slack < 2*res.Pairs || 2*res.Pairs+slack < res.Ops {
		t.Fatalf("ops %d and pairs %d disagree", res.Ops, res.Pairs)
	}
}
