package dpengine

import (
	"testing"
	"time"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// TestSweepAfterClockStepBack: a grant the switch just made is not a lease that ran out, even if
// the clock the switch is given steps back before the controller's probe. The sweep's rule,
// dataplane.AdminReply.LeaseExpired, is (now - grant time) mod 2^32 > lease: a probe stamped
// before the grant saw a grant time in the future and force-released the holder at once (the
// rack model timed admin packets from its own clock while a busy pipeline stamped packets
// ahead of it: a fencing violation at Figure 8's one-lock point). The engine's clock never goes
// back (engine.TestClockNeverGoesBack); the control: the lease does run out once the clock has
// passed the grant time by more than the lease.
func TestSweepAfterClockStepBack(t *testing.T) {
	const lock = 7
	for _, run := range pipelineRuns {
		t.Run(run.name, func(t *testing.T) {
			r := clockRig(t, run, lock)
			probe := func() dataplane.AdminReply { return probeLock(t, r, lock) }
			r.now = r.now.Add(time.Hour) // the clock has run for a while
			granted := r.now
			acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: 42, Timestamp: 1, LeaseMicros: 1000}
			if outs := r.send(1, clientAddr(1), serverAddr(1), &acq, nil); len(outs) != 1 || outs[0].F.Op != wire.OpGrant {
				t.Fatalf("acquire: %s", describeOuts(outs))
			}
			r.now = granted.Add(-time.Millisecond)
			if rep := probe(); !rep.Live || rep.Token == 0 || rep.LeaseExpired() {
				t.Errorf("probe 1 ms before the grant's stamp: %+v, LeaseExpired %v: want a live grant whose lease has not run out",
					rep, rep.LeaseExpired())
			}
			r.now = granted.Add(500 * time.Microsecond)
			if rep := probe(); rep.LeaseExpired() {
				t.Errorf("probe 500 µs after the grant: lease of %d µs ran out (now %d, granted %d)", rep.Lease, rep.Now, rep.GrantTime)
			}
			r.now = granted.Add(2 * time.Millisecond)
			if rep := probe(); !rep.LeaseExpired() {
				t.Errorf("probe 2 ms after the grant: lease of %d µs has not run out (now %d, granted %d): the control failed",
					rep.Lease, rep.Now, rep.GrantTime)
			}
		})
	}
}

// TestSwitchClockMicroseconds: the switch's clock (admin replies' now, the grant times and lease
// checks) counts microseconds: p4/netlock.p4 divides bmv2's timestamp exactly, p4/tna/netlock.p4
// multiplies Tofino's nanosecond MAC timestamp by 2^-10 + 2^-16 + 2^-17 + 2^-21 = 0.99993/1000
// (its four terms moved by the hash unit, then summed: docs/dataplane.md "Tofino"), 70 ppm slow.
// Checked over 10 s between two probes, within 100 ppm; a term off by one bit is 0.76% off.
func TestSwitchClockMicroseconds(t *testing.T) {
	for _, run := range pipelineRuns {
		t.Run(run.name, func(t *testing.T) {
			r := clockRig(t, run, 7)
			now := func() uint32 { return uint32(probeLock(t, r, 7).Now) }
			const span = 10 * time.Second
			r.now = r.now.Add(37 * time.Hour) // well into the timestamp's range
			first := now()
			r.now = r.now.Add(span)
			got := float64(now() - first) // modulo 2^32
			want := float64(span / time.Microsecond)
			if run.prog.Name == dataplane.TNA.Name {
				want *= 0.99993
			}
			if d := got/want - 1; d > 1e-4 || d < -1e-4 {
				t.Errorf("%v of the switch's clock counted %.0f µs, want %.0f (%.0f ppm off)", span, got, want, d*1e6)
			}
		})
	}
}

// clockRig is a switch of run's program and pipeline with lock at index 1, four slots at each
// level, for the clock tests.
func clockRig(t *testing.T, run pipelineRun, lock uint32) *rig {
	t.Helper()
	r := newRigSource(t, run.prog, dataplane.Sizing{Locks: 8, PartBits: 6}, nil, run.pl)
	must(t, r.sw.SetLock(dataplane.LockEntry{Lock: lock, Index: 1, Server: 1,
		Regions: [dataplane.Levels]dataplane.Region{{Left: 0, Size: 4}, {Left: 4, Size: 4}}}))
	return r
}

// probeLock sends an admin probe of lock through r and returns the switch's reply.
func probeLock(t *testing.T, r *rig, lock uint32) dataplane.AdminReply {
	t.Helper()
	_, pins := r.admin(&dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: lock})
	if len(pins) != 1 {
		t.Fatalf("probe: %d packet-ins, want 1", len(pins))
	}
	_, _, fr, err := dataplane.ParsePacketIn(pins[0])
	if err != nil {
		t.Fatal(err)
	}
	rep, err := dataplane.ParseAdminReply(fr)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestGrantTimeFollowsGrants: a slot's grant time, which the controller's lease sweep reads
// (dataplane.AdminReply.LeaseExpired), is the switch's clock at the grant, whether the acquire
// was granted at once or by the grant walk a release starts, and at the last renewal by a
// lease-probe. Each is checked by a probe at the same instant, whose Now is that clock; the
// clock moves between the steps, so a write missed at any of them leaves an older time. (The
// differential tests run both programs on a clock that stands still, where every grant time
// is the same.)
func TestGrantTimeFollowsGrants(t *testing.T) {
	const lock = 7
	for _, run := range pipelineRuns {
		t.Run(run.name, func(t *testing.T) {
			r := clockRig(t, run, lock)
			check := func(step string, txn uint64) {
				t.Helper()
				rep := probeLock(t, r, lock)
				if !rep.Live || rep.Token == 0 || rep.Txn != txn || rep.GrantTime != rep.Now {
					t.Errorf("%s: the head slot holds txn %d (live %v, token %#x) granted at %d, the clock is %d: want txn %d granted now",
						step, rep.Txn, rep.Live, rep.Token, rep.GrantTime, rep.Now, txn)
				}
			}
			r.now = r.now.Add(time.Hour)
			acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: 42, Timestamp: 1, LeaseMicros: 1000000}
			outs := r.send(1, clientAddr(1), serverAddr(1), &acq, nil)
			if len(outs) != 1 || outs[0].F.Op != wire.OpGrant {
				t.Fatalf("acquire: %s", describeOuts(outs))
			}
			first := outs[0].F.Token
			check("granted at once", 42)
			r.now = r.now.Add(3 * time.Millisecond)
			acq2 := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: 43, Timestamp: 2, LeaseMicros: 1000000}
			if outs := r.send(2, clientAddr(2), serverAddr(1), &acq2, nil); len(outs) != 0 {
				t.Fatalf("a second exclusive acquire: %s, want it to wait", describeOuts(outs))
			}
			r.now = r.now.Add(5 * time.Millisecond)
			rel := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: lock, Txn: 42, Token: first, Timestamp: 1}
			var second uint64
			for _, o := range r.send(1, clientAddr(1), serverAddr(1), &rel, nil) {
				if o.F.Op == wire.OpGrant && o.F.Txn == 43 {
					second = o.F.Token
				}
			}
			if second == 0 {
				t.Fatal("the release granted no waiter")
			}
			check("granted by the walk", 43)
			r.now = r.now.Add(7 * time.Millisecond)
			renew := wire.Fields{Op: wire.OpLeaseProbe, Mode: wire.Exclusive, Lock: lock, Txn: 43, Token: second, Timestamp: 2, LeaseMicros: 1000000}
			if outs := r.send(2, clientAddr(2), serverAddr(1), &renew, nil); len(outs) != 1 || outs[0].F.Op != wire.OpLeaseProbe {
				t.Fatalf("lease-probe: %s", describeOuts(outs))
			}
			check("renewed", 43)
		})
	}
}
