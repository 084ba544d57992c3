package softfig

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/testbed/history"
)

// Timeline is Figure 15 on the software rack: one rack (with a standby per server) under load,
// its throughput sampled every Bin; the switch restarts at RestartAt (softrack.RestartSwitch: fresh
// registers, cookie 0) and server 2 dies at KillAt (softrack.KillServer: its standby takes over);
// the run ends at End. Every grant a worker observed and every release it decided is recorded
// and checked with history.Check. A zero RestartAt or KillAt leaves that failure out.
type Timeline struct {
	Label                  string         `json:"label"`
	Bin                    time.Duration  `json:"bin_ns"`
	RestartAt, KillAt, End time.Duration  `json:"-"`
	Controller             ctlcore.Config `json:"-"`
	Samples                []Sample       `json:"samples"`
	Events                 []Event        `json:"events"`
	Violations             int            `json:"violations"`
	FirstViolation         string         `json:"first_violation,omitempty"`
	Checked                int            `json:"events_checked"`
}

// Sample is one bin of a Timeline.
type Sample struct {
	At           time.Duration `json:"at_ns"` // since the load started
	Txns         uint64        `json:"txns"`
	ServerGrants uint64        `json:"server_grants"`
}

// Events of a Timeline (Event.What starts with one of them). The controller's are seen at the end
// of the bin in which its counters changed.
const (
	EventRestart       = "switch restarted (state lost)"
	EventKill          = "server 2 killed (its standby takes over)"
	EventReprogrammed  = "controller: switch programmed"
	EventRecovered     = "controller: the lost switch's locks handed back to their servers"
	EventSuspected     = "controller: a server suspected (missed pings)"
	EventTookOver      = "controller: a standby took over"
	EventStandbyGrants = "server 2's standby grants"
)

// Event is a failure the timeline injected, or what the controller reported.
type Event struct {
	At   time.Duration `json:"at_ns"`
	What string        `json:"what"`
}

// RunTimeline runs tl with cfg's load (cfg.Warmup of load first, so that the controller moves
// hot locks into the switch).
func RunTimeline(ctx context.Context, cfg Config, tl *Timeline) error {
	if err := cfg.defaults(); err != nil {
		return err
	}
	b, err := startBenchStandbys(ctx, cfg, Variant{Name: tl.Label, Controller: tl.Controller})
	if err != nil {
		return err
	}
	defer b.close()
	b.load(ctx, cfg.Warmup, cfg.Think, false, nil)
	rec := &history.Recorder{}
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.load(ctx, tl.End, cfg.Think, false, rec)
	}()
	event := func(what string) {
		tl.Events = append(tl.Events, Event{At: time.Since(start), What: what})
	}
	event(fmt.Sprintf("load starts; %d locks in the switch", len(b.r.Primary().Snapshot().Locks)))
	tick := time.NewTicker(tl.Bin)
	defer tick.Stop()
	lastT, lastG := b.committed.Load(), b.serverGrants()
	restarted, killed := false, false
	var ferr error
	// The controller's counters at the last bin (the rack has one controller; Primary is nil
	// while it recovers from the switch restart).
	ctl := b.r.Controller(0)
	seen := ctl.Snapshot().Stats
	standbyGranted := false
	for time.Since(start) < tl.End {
		<-tick.C
		el := time.Since(start)
		t, g := b.committed.Load(), b.serverGrants()
		tl.Samples = append(tl.Samples, Sample{At: el, Txns: t - lastT, ServerGrants: g - lastG})
		lastT, lastG = t, g
		// What the controller did in the bin (counters: the bin's end is an upper bound of when).
		{
			st := ctl.Snapshot().Stats
			if st.Suspicions > seen.Suspicions {
				event(EventSuspected)
			}
			if st.Failovers > seen.Failovers {
				event(EventTookOver)
			}
			if st.BringUps > seen.BringUps {
				event(EventReprogrammed)
			}
			if st.Recovered > seen.Recovered {
				event(EventRecovered)
			}
			seen = st
		}
		if killed && !standbyGranted {
			if s := b.r.Server(2); s != nil && s.Stats().Grants > 0 {
				standbyGranted = true
				event(EventStandbyGrants)
			}
		}
		if !restarted && tl.RestartAt > 0 && el >= tl.RestartAt {
			restarted = true
			if err := b.r.RestartSwitch(); err != nil && ferr == nil {
				ferr = err
			}
			event(EventRestart)
		}
		if !killed && tl.KillAt > 0 && el >= tl.KillAt {
			killed = true
			if err := b.r.KillServer(2); err != nil && ferr == nil {
				ferr = err
			}
			lastG = b.serverGrants() // server 2's counts are its standby's from now on
			event(EventKill)
		}
	}
	wg.Wait()
	if p := b.r.Primary(); p != nil {
		s := p.Snapshot()
		event(fmt.Sprintf("end; %d locks in the switch; controller stats %+v", len(s.Locks), s.Stats))
	}
	evs := rec.Events()
	tl.Checked = len(evs)
	vs := history.Check(evs, history.Options{})
	tl.Violations = len(vs)
	if len(vs) > 0 {
		tl.FirstViolation = vs[0].String()
	}
	return ferr
}

// EventAt returns when the first event named what happened at or after from.
func (tl *Timeline) EventAt(what string, from time.Duration) (time.Duration, bool) {
	for _, e := range tl.Events {
		if e.At >= from && len(e.What) >= len(what) && e.What[:len(what)] == what {
			return e.At, true
		}
	}
	return 0, false
}

// Recovery measures the recovery from a failure at at: before is the mean of the committed
// transactions per second over the bins in the window before at (the bins that end in
// (at-window, at]); back is how long after at the first three bins in a row that start at or
// after at (a bin the failure falls in holds traffic from before it, and counts for neither)
// whose mean is at least frac of before end (the trailing mean: a bin counts once it has ended;
// ok false: never within the run).
func (tl *Timeline) Recovery(at, window time.Duration, frac float64) (before float64, back time.Duration, ok bool) {
	var sum uint64
	n := 0
	first := -1
	for i, s := range tl.Samples {
		if s.At > at-window && s.At <= at {
			sum += s.Txns
			n++
		}
		if s.At-tl.Bin >= at && first < 0 {
			first = i
		}
	}
	if n == 0 || first < 0 {
		return 0, 0, false
	}
	secs := tl.Bin.Seconds()
	before = float64(sum) / float64(n) / secs
	for j := first + 2; j < len(tl.Samples); j++ {
		m := float64(tl.Samples[j-2].Txns+tl.Samples[j-1].Txns+tl.Samples[j].Txns) / 3 / secs
		if m >= frac*before {
			return before, tl.Samples[j].At - at, true
		}
	}
	return before, 0, false
}
