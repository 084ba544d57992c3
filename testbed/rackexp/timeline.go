package rackexp

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/netlock-go/netlock/controlplane/ctlcore"
	"github.com/netlock-go/netlock/history"
)

// Timeline is Figure 15 on the software rack: one rack (with a standby per server) under load,
// its throughput sampled every Bin; the switch restarts at RestartAt (rack.RestartSwitch: fresh
// registers, cookie 0) and server 2 dies at KillAt (rack.KillServer: its standby takes over);
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
	for time.Since(start) < tl.End {
		<-tick.C
		el := time.Since(start)
		t, g := b.committed.Load(), b.serverGrants()
		tl.Samples = append(tl.Samples, Sample{At: el, Txns: t - lastT, ServerGrants: g - lastG})
		lastT, lastG = t, g
		if !restarted && tl.RestartAt > 0 && el >= tl.RestartAt {
			restarted = true
			if err := b.r.RestartSwitch(); err != nil && ferr == nil {
				ferr = err
			}
			event("switch restarted (state lost)")
		}
		if !killed && tl.KillAt > 0 && el >= tl.KillAt {
			killed = true
			if err := b.r.KillServer(2); err != nil && ferr == nil {
				ferr = err
			}
			lastG = b.serverGrants() // server 2's counts are its standby's from now on
			event("server 2 killed (its standby takes over)")
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
