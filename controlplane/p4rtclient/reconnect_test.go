package p4rtclient

import (
	"errors"
	"testing"
)

// TestReconnectAfterSwitchRestart: the controller reaches the switch through a TCP proxy. The
// switch stops (its state is lost); the stream breaks and the client keeps retrying with backoff
// while the proxy refuses connections. A new switch comes up behind the proxy: the client
// reconnects, is primary again, sees that the switch has no pipeline, pushes it again and
// writes.
func TestReconnectAfterSwitchRestart(t *testing.T) {
	s1 := startSwitch(t)
	px := newProxy(t, s1.addr)
	c := primary(t, px.addr(), 1)
	ctx := ctxWait(t)
	if err := c.AddRoutes(ctx, routes, route("10.0.2.0/24", 2)); err != nil {
		t.Fatal(err)
	}

	px.setBackend("")
	s1.stop()
	px.cut()
	waitState(t, c, Connecting)
	if err := c.AddRoutes(ctx, routes, route("10.0.3.0/24", 2)); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("write while the switch is down: %v, want UNAVAILABLE", err)
	}

	s2 := startSwitch(t)
	px.setBackend(s2.addr)
	if err := c.WaitPrimary(ctx); err != nil {
		t.Fatal(err)
	}
	pi, err := c.Pipeline(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pi != nil {
		t.Fatalf("the restarted switch reports pipeline %+v, want none", pi)
	}
	if err := c.SetPipeline(ctx, testProgram(t), 43); err != nil {
		t.Fatal(err)
	}
	if err := c.AddRoutes(ctx, routes, route("10.0.2.0/24", 2)); err != nil {
		t.Fatalf("write after reconnecting: %v", err)
	}
	st := c.Stats()
	if st.Streams < 2 || st.Reconnects < 1 {
		t.Fatalf("stats %+v: want at least 2 streams and 1 reconnect", st)
	}
}

// TestDialUnreachable: a switch that is not there yet is not an error; the client connects when
// it appears.
func TestDialUnreachable(t *testing.T) {
	px := newProxy(t, "")
	c := dial(t, px.addr(), 1)
	if st := c.State(); st != Connecting {
		t.Fatalf("state %s before any switch", st)
	}
	s := startSwitch(t)
	px.setBackend(s.addr)
	if err := c.WaitPrimary(ctxWait(t)); err != nil {
		t.Fatal(err)
	}
}
