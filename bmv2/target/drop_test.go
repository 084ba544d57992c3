package target

import (
	"context"
	"sync"
	"testing"
)

// TestDropReasons: every frame counted in Stats.Dropped or Stats.Errors reaches Options.Drop
// with its reason and port: one before any program (no program), one the program does not
// route (no output), one routed to a port number with nothing attached (no port).
func TestDropReasons(t *testing.T) {
	type drop struct {
		why  DropReason
		port int
		n    int
	}
	var mu sync.Mutex
	var got []drop
	r := newRig(t, Options{Drop: func(why DropReason, port int, frame []byte, err error) {
		mu.Lock()
		got = append(got, drop{why, port, len(frame)})
		mu.Unlock()
	}})
	frame := func(dst string) []byte { return udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", dst, 64, "x") }
	r.dev.Inject(1, frame("10.0.2.2")) // no program yet
	c := r.connect(t)
	pushL3(t, c)
	if err := c.InsertTableEntry(context.Background(), routeEntry(c, "10.0.9.0", 24, hostMAC[1], 9)); err != nil {
		t.Fatal(err)
	}
	r.dev.Inject(1, frame("10.0.8.8")) // no route
	r.dev.Inject(2, frame("10.0.9.9")) // port 9: nothing attached
	size := len(frame("10.0.2.2"))
	want := []drop{{DropNoProgram, 1, size}, {DropNoOutput, 1, size}, {DropNoPort, 9, 0}}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("drops %v, want %v", got, want)
	}
	for i := range want {
		if got[i].why != want[i].why || got[i].port != want[i].port || (want[i].n != 0 && got[i].n != want[i].n) || got[i].n == 0 {
			t.Errorf("drop %d: %v %d (%d bytes), want %v %d", i, got[i].why, got[i].port, got[i].n, want[i].why, want[i].port)
		}
	}
	if st := r.dev.Stats(); st.Dropped != 2 || st.Errors != 1 {
		t.Errorf("stats %+v, want 2 dropped, 1 error", st)
	}
}
