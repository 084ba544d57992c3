package target

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestWritesDuringTraffic modifies a route back and forth between ports 2
// and 3 and reads counters over P4Runtime while frames flow through the
// engine. Every frame must come out of port 2 or 3 (no frame is lost or
// duplicated by a concurrent write), and the race detector watches the
// device's locking.
func TestWritesDuringTraffic(t *testing.T) {
	r := newRig(t, Options{})
	c := r.connect(t)
	ctx := context.Background()
	pushL3(t, c)
	if err := c.InsertTableEntry(ctx, routeEntry(c, "10.0.2.0", 24, hostMAC[2], 2)); err != nil {
		t.Fatal(err)
	}

	const frames = 500 // fewer than a port queue holds, so no queue overflows
	frame := udpFrame(t, hostMAC[1], routerMAC, "10.0.1.1", "10.0.2.2", 64, "traffic")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range frames {
			if err := r.hosts[1].p.Send(frame); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for i := range 50 {
		p := byte(2 + i%2)
		if err := c.ModifyTableEntry(ctx, routeEntry(c, "10.0.2.0", 24, hostMAC[p], uint32(p))); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadCounterEntry(ctx, "MyIngress.rx_port", 1); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()

	got := 0
	deadline := time.After(wait) // a hang guard only
	for got < frames {
		select {
		case <-r.hosts[2].rx:
			got++
		case <-r.hosts[3].rx:
			got++
		case <-deadline:
			t.Fatalf("%d of %d frames arrived", got, frames)
		}
	}
	select {
	case f := <-r.hosts[1].rx:
		t.Fatalf("port 1 got %x", f)
	default:
	}
	if st := r.dev.Stats(); st.Received != frames || st.Transmitted != frames || st.Dropped != 0 {
		t.Fatalf("stats %+v", st)
	}
}
