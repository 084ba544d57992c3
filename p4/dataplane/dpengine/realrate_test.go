package dpengine

import (
	"encoding/json"
	"fmt"
	"math/big"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/p4ctl"
	"github.com/netlock-go/netlock/bmv2/port"
	"github.com/netlock-go/netlock/internal/simpleswitch"
	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The rate of lock packets through p4/netlock.p4 on real simple_switch and on netlock switch
// (the interpreter and the generated pipeline), side by side: the same veth pairs in a network
// namespace (simple_switch reads them with libpcap, netlock switch with AF_PACKET), the same
// control-plane state (rateRack, pushed with simple_switch_CLI and with netlock p4 push), the
// same load: rateLocks locks in the switch, one client cycling each through an exclusive
// acquire and its release, one request in flight per lock; every request is answered by the
// switch (a grant or a release acknowledgement written over it). A measurement, not a check of
// speed: it fails only when an answer is wrong or missing.
//
//	make test-real   (or: go test ./p4/dataplane/dpengine -run TestRealSwitchRate -v -count=1)

const (
	rateLocks   = 16
	rateWarmup  = time.Second
	rateMeasure = 5 * time.Second
	rateRounds  = 3
)

// rateRack programs an engine switch with the rack the measurement uses: the switch at
// 10.0.0.1, server 1 on port 101, the client on port 1, rateLocks locks in the switch with 4
// slots per level.
func rateRack(t *testing.T) *Switch {
	t.Helper()
	sw, err := Load(dataplane.DefaultSizing, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	must(t, sw.SetRack(dataplane.Rack{Key: rigKey, SwitchIP: netip.MustParseAddr("10.0.0.1"), SwitchMAC: rigSwitchMAC,
		DefaultLease: 10 * time.Second, MaxLease: 60 * time.Second}))
	srv := serverAddr(1)
	must(t, sw.SetServer(1, dataplane.Server{Addr: srv, Port: 101, MAC: hostMAC(srv.Addr())}))
	must(t, sw.AddRoute(netip.PrefixFrom(srv.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(srv.Addr()), Port: 101}))
	cl := clientAddr(1)
	must(t, sw.AddRoute(netip.PrefixFrom(cl.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(cl.Addr()), Port: 1}))
	for l := 0; l < rateLocks; l++ {
		must(t, sw.SetLock(dataplane.LockEntry{Lock: uint32(l), Index: uint32(l), Server: 1,
			Regions: [dataplane.Levels]dataplane.Region{{Left: uint32(8 * l), Size: 4}, {Left: uint32(8*l + 4), Size: 4}}}))
	}
	return sw
}

// runtimeOf renders an engine switch's table entries, default actions and clone sessions as a
// p4lang/tutorials runtime file (netlock p4 push's input).
func runtimeOf(sw *engine.Switch) p4ctl.Runtime {
	hex := func(b []byte) json.RawMessage {
		return json.RawMessage(strconv.Quote("0x" + new(big.Int).SetBytes(b).Text(16)))
	}
	pair := func(a, b json.RawMessage) json.RawMessage {
		return json.RawMessage("[" + string(a) + "," + string(b) + "]")
	}
	var rt p4ctl.Runtime
	for _, t := range sw.Tables() {
		if t.ConstEntries() {
			continue
		}
		params := func(action string, args [][]byte) map[string]json.RawMessage {
			m := map[string]json.RawMessage{}
			for _, a := range t.Actions() {
				if a.Name == action {
					for i, p := range a.Params {
						m[p.Name] = hex(args[i])
					}
				}
			}
			return m
		}
		for _, e := range t.Entries() {
			te := p4ctl.TableEntry{Table: t.Name, Match: map[string]json.RawMessage{}, ActionName: e.Action,
				ActionParams: params(e.Action, e.Args), Priority: e.Priority}
			for i, k := range t.Keys {
				m := e.Match[i]
				switch k.Kind {
				case engine.LPM:
					te.Match[k.Name] = pair(hex(m.Value), json.RawMessage(strconv.Itoa(m.PrefixLen)))
				case engine.Ternary:
					te.Match[k.Name] = pair(hex(m.Value), hex(m.Mask))
				case engine.Range:
					te.Match[k.Name] = pair(hex(m.Low), hex(m.High))
				default:
					te.Match[k.Name] = hex(m.Value)
				}
			}
			rt.TableEntries = append(rt.TableEntries, te)
		}
		name, args := t.Default()
		rt.TableEntries = append(rt.TableEntries, p4ctl.TableEntry{Table: t.Name, DefaultAction: true, ActionName: name,
			ActionParams: params(name, args)})
	}
	ids := slices.Sorted(func(yield func(int) bool) {
		for id := range sw.CloneSessions() {
			if !yield(id) {
				return
			}
		}
	})
	for _, id := range ids {
		if s := sw.CloneSessions()[id]; s.HasPort {
			rt.CloneSessionEntries = append(rt.CloneSessionEntries, p4ctl.CloneSession{ID: uint32(id), Replicas: []p4ctl.Replica{{EgressPort: uint32(s.Port), Instance: 1}}})
		}
	}
	return rt
}

// rateLoad drives the measurement's load through raw, the client's port, for warmup and then
// d, and returns the answers per second of d.
func rateLoad(raw *port.RawPort, warmup, d time.Duration) (float64, error) {
	type lockState struct {
		txn   uint64
		token uint64
		held  bool
	}
	locks := make([]lockState, rateLocks)
	cl, srv := clientAddr(1), serverAddr(1)
	src := udpframe.Endpoint{MAC: hostMAC(cl.Addr()), Addr: cl}
	dst := udpframe.Endpoint{MAC: rigSwitchMAC, Addr: srv}
	var buf, payload []byte
	nextTxn := uint64(1)
	send := func(l int) error {
		s := &locks[l]
		f := wire.Fields{Mode: wire.Exclusive, Lock: uint32(l), Timestamp: 1}
		if s.held {
			f.Op, f.Txn, f.Token = wire.OpRelease, s.txn, s.token
		} else {
			s.txn, nextTxn = nextTxn, nextTxn+1
			f.Op, f.Txn = wire.OpAcquire, s.txn
		}
		payload = wire.Append(payload[:0], &f)
		buf = udpframe.Append(buf[:0], src, dst, payload)
		return raw.Send(buf)
	}
	for l := range locks {
		if err := send(l); err != nil {
			return 0, err
		}
	}
	rx := make([]byte, port.MaxFrame)
	var fr udpframe.Frame
	var f wire.Fields
	start := time.Now()
	var measured time.Time
	answers := 0
	for {
		now := time.Now()
		if measured.IsZero() && now.Sub(start) >= warmup {
			measured, answers = now, 0
		}
		if !measured.IsZero() && now.Sub(measured) >= d {
			return float64(answers) / now.Sub(measured).Seconds(), nil
		}
		if err := raw.SetReadDeadline(time.Now().Add(2 * time.Second)); err != nil {
			return 0, err
		}
		n, err := raw.Recv(rx)
		if err != nil {
			return 0, fmt.Errorf("after %d answers: %w", answers, err)
		}
		if udpframe.Parse(rx[:n], &fr) != nil || fr.Dst != cl {
			continue // not an answer to the client (the kernel's, a frame of another port)
		}
		h, err := wire.Parse(fr.Payload)
		if err != nil {
			return 0, fmt.Errorf("answer: %w", err)
		}
		h.Decode(&f)
		l := int(f.Lock)
		if l >= rateLocks || f.Txn != locks[l].txn {
			return 0, fmt.Errorf("unexpected answer %s", f.String())
		}
		switch {
		case !locks[l].held && f.Op == wire.OpGrant:
			locks[l].held, locks[l].token = true, f.Token
		case locks[l].held && f.Op == wire.OpRelease:
			locks[l].held = false
		default:
			return 0, fmt.Errorf("unexpected answer %s", f.String())
		}
		answers++
		if err := send(l); err != nil {
			return 0, err
		}
	}
}

// rateTarget is a switch the measurement runs on: its name and how to start it programmed
// with the rack of rateRack.
type rateTarget struct {
	name  string
	start func() (*simpleswitch.Switch, error)
}

// netlockRateTargets are netlock switch with the interpreter and with the generated pipeline,
// on the harness's veth pairs, programmed with netlock p4 push of eng's state.
func netlockRateTargets(t *testing.T, eng *Switch) []rateTarget {
	t.Helper()
	bin := testenv.BuildNetlock(t)
	rtPath := filepath.Join(t.TempDir(), "runtime.json")
	data, err := jsonMarshal(runtimeOf(eng.Switch))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rtPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(testenv.ModuleRoot(t), "p4", filepath.FromSlash(dataplane.V1Model.File))
	var out []rateTarget
	for _, pl := range []string{"interp", "gen"} {
		out = append(out, rateTarget{"netlock switch --pipeline " + pl, func() (*simpleswitch.Switch, error) {
			return simpleswitch.Start(simpleswitch.Options{Switch: bin, Command: []string{"switch"}, Ports: ratePorts, Raw: true, NoCLI: true, Dir: t.TempDir(),
				TargetArgs: []string{"--grpc-server-addr", "127.0.0.1:9559", "--cpu-port", strconv.Itoa(dataplane.DefaultSizing.CPUPort), "--pipeline", pl},
				Ready: func(ns string) error {
					out, err := exec.Command("ip", "netns", "exec", ns, bin, "p4", "push", "--addr", "127.0.0.1:9559", "--timeout", "2s", prog, rtPath).CombinedOutput()
					if err != nil {
						return fmt.Errorf("netlock p4 push: %w: %s", err, out)
					}
					return nil
				}})
		}})
	}
	return out
}

// ratePorts are the switch ports of the measurement: the client's and the server's.
var ratePorts = []int{1, 101}

// rateRun runs every target rounds times in turn, warmup then d each, and returns the rates by
// target name.
func rateRun(t *testing.T, targets []rateTarget, rounds int, warmup, d time.Duration) map[string][]float64 {
	t.Helper()
	rates := map[string][]float64{}
	for round := 0; round < rounds; round++ {
		for _, tg := range targets {
			ss, err := tg.start()
			if err != nil {
				t.Fatalf("%s: %v", tg.name, err)
			}
			r, err := rateLoad(ss.Raw(1), warmup, d)
			ss.Close()
			if err != nil {
				t.Fatalf("%s: %v", tg.name, err)
			}
			rates[tg.name] = append(rates[tg.name], r)
			t.Logf("round %d: %s: %.0f lock packets/s", round+1, tg.name, r)
		}
	}
	return rates
}

// TestSwitchRateHarness runs the measurement's harness on netlock switch alone, briefly, so
// that it is checked where the real tools are not: the veth pairs, netlock p4 push of the rack
// and the load, every answer checked (rateLoad fails on a wrong or missing one). Needs root.
func TestSwitchRateHarness(t *testing.T) {
	testenv.RequireRoot(t, "netlock switch on veth pairs in a network namespace")
	testenv.RequireCommand(t, "ip netns", "apt-get install iproute2", "ip", "netns", "list")
	rates := rateRun(t, netlockRateTargets(t, rateRack(t)), 1, 200*time.Millisecond, 500*time.Millisecond)
	for name, rs := range rates {
		if len(rs) != 1 || rs[0] <= 0 {
			t.Errorf("%s: rates %v: no answers measured", name, rs)
		}
	}
}

// TestRealSwitchRate measures lock packets per second through p4/netlock.p4 on real
// simple_switch and on netlock switch (interpreter and generated pipeline), rateRounds rounds
// of each in turn, and logs the rates and the ratios of the medians (docs/performance.md, "Real
// bmv2 side by side").
func TestRealSwitchRate(t *testing.T) {
	tools := simpleswitch.RequireTools(t)
	eng := rateRack(t)
	json := compileNetlock(t, tools, dataplane.DefaultSizing, t.TempDir())
	targets := []rateTarget{{"simple_switch", func() (*simpleswitch.Switch, error) {
		ss, err := simpleswitch.Start(simpleswitch.Options{Switch: tools.Switch, CLI: tools.CLI, JSON: json, Ports: ratePorts, Raw: true, Dir: t.TempDir()})
		if err != nil {
			return nil, err
		}
		if err := ss.SyncFrom(eng.Switch); err != nil {
			ss.Close()
			return nil, err
		}
		return ss, nil
	}}}
	targets = append(targets, netlockRateTargets(t, eng)...)
	rates := rateRun(t, targets, rateRounds, rateWarmup, rateMeasure)
	med := func(xs []float64) float64 {
		s := slices.Clone(xs)
		sort.Float64s(s)
		return s[len(s)/2]
	}
	base := med(rates["simple_switch"])
	var b strings.Builder
	fmt.Fprintf(&b, "%d locks, one request in flight each, %v per round after %v, %d rounds, %s\n", rateLocks, rateMeasure, rateWarmup, rateRounds, time.Now().UTC().Format(time.RFC3339))
	for _, tg := range targets {
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.2f |\n", tg.name, fmtRates(rates[tg.name]), med(rates[tg.name]), med(rates[tg.name])/base)
	}
	t.Logf("lock packets/s (target | rounds | median | x simple_switch):\n%s", b.String())
}

func fmtRates(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.FormatFloat(x, 'f', 0, 64))
	}
	return strings.Join(s, ", ")
}

func jsonMarshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return nil, fmt.Errorf("runtime: %w", err)
	}
	return b, nil
}
