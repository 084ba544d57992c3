package dpengine

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// A Tofino loads the TNA program into every pipe of the chip, and each pipe has its own copy of
// every register (engine.Config.Pipes: the port's pipe is its bits 8:7). The program steers every
// NetLock packet that comes in on a port of another pipe to pipe 0 before it touches a register,
// so that all of a lock's passes use one copy of its state.

// pipeSteer is the steering branch's condition in p4/tna/netlock.p4.
const pipeSteer = "ig_md.ingress_port[8:7] != 0) {"

// pipesOutcome runs two clients' exclusive acquires of one lock on a two-pipe chip, the first
// client on port 1 (pipe 0), the second on port 130 (pipe 1), then an admin probe from the CPU
// port (255, pipe 1) and the first client's release. It reports whether the second client was
// granted while the first held the lock, the txn the probe saw holding the lock, and whether
// the release granted the second client.
func pipesOutcome(t *testing.T, prog dataplane.Program, src []byte) (both bool, probed uint64, walked bool) {
	t.Helper()
	const lock = 7
	r := newRigWith(t, prog, dataplane.Sizing{Locks: 8, PartBits: 6}, src, engine.PipelineInterpreted,
		func(c *engine.Config) { c.Pipes = 2 })
	must(t, r.sw.SetLock(dataplane.LockEntry{Lock: lock, Index: 1, Server: 1,
		Regions: [dataplane.Levels]dataplane.Region{{Left: 0, Size: 4}, {Left: 4, Size: 4}}}))
	far := netip.AddrPortFrom(netip.MustParseAddr("10.0.3.2"), 40002)
	must(t, r.sw.AddRoute(netip.PrefixFrom(far.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(far.Addr()), Port: 130}))

	acq := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: 42, Timestamp: 1, LeaseMicros: 1000000}
	outs := r.send(1, clientAddr(1), serverAddr(1), &acq, nil)
	if len(outs) != 1 || outs[0].F.Op != wire.OpGrant || outs[0].Port != 1 {
		t.Fatalf("the first acquire (port 1, pipe 0): %s, want a grant on port 1", describeOuts(outs))
	}
	first := outs[0].F.Token
	acq2 := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: lock, Txn: 43, Timestamp: 2, LeaseMicros: 1000000}
	for _, o := range r.send(130, far, serverAddr(1), &acq2, nil) {
		if o.F.Op == wire.OpGrant {
			both = true
		}
	}
	probed = probeLock(t, r, lock).Txn
	rel := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: lock, Txn: 42, Token: first, Timestamp: 1}
	for _, o := range r.send(1, clientAddr(1), serverAddr(1), &rel, nil) {
		if o.F.Op == wire.OpGrant && o.F.Txn == 43 && o.Port == 130 {
			walked = true
		}
	}
	return both, probed, walked
}

func TestPipesShareNoLock(t *testing.T) {
	// the program of one Pipeline in both pipes, and the fold (half b in pipe 1 steers the
	// packets of pipe 1's ports to pipe 0, half a)
	for _, prog := range []dataplane.Program{dataplane.TNA, dataplane.TNAFold} {
		t.Run(prog.Label(), func(t *testing.T) {
			both, probed, walked := pipesOutcome(t, prog, nil)
			if both {
				t.Error("two clients on two pipes both hold one exclusive lock")
			}
			if probed != 42 {
				t.Errorf("the admin probe (CPU port, pipe 1) saw txn %d holding the lock, want 42 (pipe 0's state)", probed)
			}
			if !walked {
				t.Error("the release did not grant the waiter of the other pipe (port 130)")
			}
		})
	}
}

// TestPipesShareNoLockCatches is its negative control: without the steering (the branch taken
// only for pipe 3, which a two-pipe chip has no port of), the second client takes the lock in
// pipe 1's copy of the registers while the first holds it in pipe 0's.
func TestPipesShareNoLockCatches(t *testing.T) {
	src := string(dataplane.TNA.Source)
	if strings.Count(src, pipeSteer) != 1 {
		t.Fatalf("p4/%s: the steering condition %q is not there once: update this test", dataplane.TNA.File, pipeSteer)
	}
	mut := strings.Replace(src, pipeSteer, "ig_md.ingress_port[8:7] == 3) {", 1)
	if both, _, _ := pipesOutcome(t, dataplane.TNA, []byte(mut)); !both {
		t.Error("without the steering the second client was not granted: the test cannot tell the pipes apart")
	}
}
