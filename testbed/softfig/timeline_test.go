package softfig

import (
	"path/filepath"
	"testing"
	"time"
)

// tlOf is a timeline with 100ms bins of the given transaction counts.
func tlOf(txns ...uint64) *Timeline {
	tl := &Timeline{Bin: 100 * time.Millisecond}
	for i, n := range txns {
		tl.Samples = append(tl.Samples, Sample{At: time.Duration(i+1) * 100 * time.Millisecond, Txns: n})
	}
	return tl
}

// TestRecovery: the throughput before a failure and when three bins in a row are back at 90%.
func TestRecovery(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tl     *Timeline
		at     time.Duration
		before float64
		back   time.Duration
		ok     bool
	}{
		{"back at once", tlOf(10, 10, 10, 10, 10, 10), 300 * time.Millisecond, 100, 300 * time.Millisecond, true},
		{"a dip of two bins", tlOf(10, 10, 10, 0, 0, 9, 10, 9, 10), 300 * time.Millisecond, 100, 500 * time.Millisecond, true},
		{"a low bin then two high ones", tlOf(10, 10, 10, 0, 0, 2, 14, 14, 0), 300 * time.Millisecond, 100, 500 * time.Millisecond, true},
		{"one good bin is not enough", tlOf(10, 10, 10, 0, 20, 0, 0, 10, 10, 10), 300 * time.Millisecond, 100, 700 * time.Millisecond, true},
		{"never", tlOf(10, 10, 10, 0, 0, 0, 5, 5, 5), 300 * time.Millisecond, 100, 0, false},
		{"the window before only", tlOf(100, 10, 10, 10, 10, 10, 10), 400 * time.Millisecond, 100, 300 * time.Millisecond, true},
		{"no bins before", tlOf(10, 10), 0, 0, 0, false},
		// The failure at 250 ms falls in the bin (200, 300]: its traffic is from before the
		// failure and must not make the recovery look sooner (it gave 250 ms).
		{"the bin the failure falls in", tlOf(10, 10, 10, 10, 10, 0, 10, 10, 10), 250 * time.Millisecond, 100, 650 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, back, ok := tc.tl.Recovery(tc.at, 300*time.Millisecond, 0.9)
			if before != tc.before || back != tc.back || ok != tc.ok {
				t.Errorf("Recovery = %v, %v, %v; want %v, %v, %v", before, back, ok, tc.before, tc.back, tc.ok)
			}
		})
	}
}

// TestEventAtAndPlot: EventAt finds the first event by prefix from a time on; the plot is
// written.
func TestEventAtAndPlot(t *testing.T) {
	tl := tlOf(10, 10, 0, 0, 10, 10)
	tl.Label = "test"
	tl.Events = []Event{{At: 150 * time.Millisecond, What: EventKill}, {At: 250 * time.Millisecond, What: EventSuspected},
		{At: 450 * time.Millisecond, What: EventSuspected + " again"}}
	if at, ok := tl.EventAt(EventSuspected, 150*time.Millisecond); !ok || at != 250*time.Millisecond {
		t.Errorf("EventAt = %v, %v", at, ok)
	}
	if at, ok := tl.EventAt(EventSuspected, 300*time.Millisecond); !ok || at != 450*time.Millisecond {
		t.Errorf("EventAt from 300ms = %v, %v", at, ok)
	}
	if _, ok := tl.EventAt(EventStandbyGrants, 0); ok {
		t.Error("found an event that did not happen")
	}
	if err := tl.SavePNG(filepath.Join(t.TempDir(), "tl.png")); err != nil {
		t.Fatal(err)
	}
}
