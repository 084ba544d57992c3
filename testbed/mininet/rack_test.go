package mininet

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/testbed"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/wire"
)

// rackSummary is rack.py's OUT/rack.json.
type rackSummary struct {
	Servers    map[string]float64 `json:"servers"` // grants each server sent (its netlock_grants_total)
	Nodes      int                `json:"nodes"`
	Controller bool               `json:"controller"` // netlock controller ran
	Phases     []struct {
		Name    string `json:"name"`
		Txns    uint64 `json:"txns"`
		LockOps uint64 `json:"lock_acquires"`
	} `json:"phases"`
}

// TestMininetRack runs the rack as processes on Mininet hosts (rack.py): `netlock switch`
// running p4/netlock.p4 on AF_PACKET ports, two `netlock server` and two `netlock loadgen` client
// nodes, and `netlock controller` when the binary has it (else the switch is programmed with the
// rack's bring-up and every lock stays on its server). It checks that every phase made progress on
// every node; with the controller, that the switch granted part of the acquisitions (the servers
// sent fewer grants than the clients made acquisitions: a server's count only ever exceeds what it
// granted, by grants repeated for retransmissions); without it, that the servers sent a grant for
// every acquisition; and that the clients' histories, merged across the processes (one machine,
// one clock), hold no violation, with, as the check's negative control, the same history with one
// holder's release moved past the next grant of its lock, which must show one. Needs root and
// Debian's mininet, like TestMininetPingAndUDP.
func TestMininetRack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Mininet")
	}
	mininetRack(t, "netlock")
}

// TestRealMininetRack is TestMininetRack with bmv2's simple_switch_grpc as the ToR, running the
// JSON p4c-bm2-ss compiles from p4/netlock.p4 (rack.py --switch bmv2), programmed by netlock
// controller over P4Runtime with the P4Info p4c writes (make mininet-rack SWITCH=bmv2).
func TestRealMininetRack(t *testing.T) {
	testenv.RealTool(t, "p4c-bm2-ss")
	testenv.RealTool(t, "simple_switch_grpc")
	mininetRack(t, "bmv2")
}

// mininetRack runs rack.py with the switch target sw ("netlock" or "bmv2") and checks it.
func mininetRack(t *testing.T, sw string) {
	const install = "apt-get install -y mininet iputils-ping ethtool"
	testenv.RequireRoot(t, "Mininet")
	testenv.RequireTool(t, "/usr/bin/mn", install)
	testenv.RequireTool(t, "/usr/bin/python3", install)
	testenv.RequireCommand(t, "Debian's python3 module mininet", install, "/usr/bin/python3", "-c", "import mininet.net")
	testenv.RequireTool(t, "ethtool", install)
	bin := testenv.BuildNetlock(t)
	lockMininet(t)
	// Interface names are global: a random prefix keeps this run's apart from anything else's.
	prefix := fmt.Sprintf("n%03x", rand.IntN(0x1000))
	out := t.TempDir()
	limit := 4 * time.Minute
	if sw == "bmv2" {
		limit = 12 * time.Minute // p4c-bm2-ss takes minutes to compile p4/netlock.p4 on a loaded machine
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	phases := []string{testbed.PhaseShared, "contended/8", "contended/1", testbed.PhaseTPCCHigh}
	cmd := exec.CommandContext(ctx, "/usr/bin/python3", "rack.py", "--lock-held", "--netlock", bin, "--out", out, "--prefix", prefix,
		"--grpc-port", strconv.Itoa(freePort(t)), "--duration", "2", "--record", "--phases", strings.Join(phases, ","),
		"--switch", sw, "--p4tools", testenv.RealToolsDir())
	res, err := cmd.CombinedOutput()
	t.Logf("rack.py:\n%s", res)
	if err != nil {
		for _, f := range []string{prefix + "s1.log", prefix + "srv1.log", prefix + "cl1.log", prefix + "ctl.log"} {
			if b, rerr := os.ReadFile(filepath.Join(out, f)); rerr == nil {
				t.Logf("%s:\n%s", f, tail(string(b), 40))
			}
		}
		t.Fatalf("rack.py: %v", err)
	}
	var sum rackSummary
	readJSON(t, filepath.Join(out, "rack.json"), &sum)
	var events []history.Event
	var acquires uint64
	for i := 1; i <= 2; i++ {
		var node testbed.NodeReport
		readJSON(t, filepath.Join(out, fmt.Sprintf("%scl%d.json", prefix, i)), &node)
		if len(node.Phases) != len(phases) {
			t.Fatalf("node %d: %d phases, want %d", i, len(node.Phases), len(phases))
		}
		for k, p := range node.Phases {
			if p.Name != phases[k] || p.Txns == 0 || len(p.Events) == 0 {
				t.Errorf("node %d phase %s: %d txns, %d history events", i, p.Name, p.Txns, len(p.Events))
			}
			if p.Errors != 0 || p.Rejects != 0 {
				t.Errorf("node %d phase %s: %d errors, %d rejects", i, p.Name, p.Errors, p.Rejects)
			}
			acquires += p.LockOps
			events = append(events, p.Events...)
		}
	}
	var grants float64
	for _, g := range sum.Servers {
		grants += g
	}
	switch {
	case len(sum.Servers) != 2:
		t.Errorf("grants of %d servers (%v), want 2", len(sum.Servers), sum.Servers)
	case sum.Controller && grants >= float64(acquires):
		t.Errorf("with the controller, the servers sent %v grants (%v) for %d acquisitions: the switch granted none",
			grants, sum.Servers, acquires)
	case !sum.Controller && grants < float64(acquires):
		t.Errorf("servers sent %v grants (%v), the clients made %d acquisitions: every one is a server's", grants,
			sum.Servers, acquires)
	}
	t.Logf("controller: %v; %d acquisitions, %v grants sent by the servers", sum.Controller, acquires, grants)
	if vs := history.Check(events, history.Options{}); len(vs) != 0 {
		t.Errorf("%d violations in the merged history of %d events, first: %v", len(vs), len(events), vs[0])
	}
	broken, ok := overlapOne(events)
	if !ok {
		t.Fatal("no lock with two exclusive holders one after the other in the history")
	}
	if vs := history.Check(broken, history.Options{}); len(vs) == 0 {
		t.Error("negative control: a release moved past the next grant went unnoticed")
	}
}

// overlapOne returns a copy of events in which the release of one exclusive holder is moved to
// just after the grant of the next exclusive holder of the same lock: two holders at once.
func overlapOne(events []history.Event) ([]history.Event, bool) {
	type key struct {
		lock uint32
		txn  uint64
	}
	mode := map[key]wire.Mode{}
	released := map[uint32]int{} // lock -> index of the last exclusive release seen
	for i, e := range events {
		k := key{e.Lock, e.Txn}
		switch e.Kind {
		case history.Granted:
			mode[k] = e.Mode
			if j, ok := released[e.Lock]; ok && e.Mode == wire.Exclusive && e.At.After(events[j].At) {
				out := append([]history.Event(nil), events...)
				out[j].At = e.At.Add(time.Microsecond)
				return out, true
			}
		case history.Released:
			if mode[k] == wire.Exclusive {
				released[e.Lock] = i
			}
		}
	}
	return nil, false
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
