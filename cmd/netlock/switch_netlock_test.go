package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/bmv2/port"
	nlclient "github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/internal/faultnet"
	"github.com/netlock-go/netlock/lockserver"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/p4/dataplane/dpengine"
	"github.com/netlock-go/netlock/testbed/history"
	"github.com/netlock-go/netlock/testbed/hostshim"
	"github.com/netlock-go/netlock/wire"
)

var switchSeed = flag.Uint64("switch.seed", 0, "seed of TestSwitchNetlockEndToEnd (0: time-based)")

const e2eKey = 0x4e4c5357_1234abcd

// nlController is a minimal control plane for the test: P4Runtime over gRPC to netlock switch.
type nlController struct {
	c    *client.Client
	msgs chan *p4v1.StreamMessageResponse
	ctx  context.Context
}

func connectNetlock(t *testing.T, addr string) *nlController {
	t.Helper()
	msgs := make(chan *p4v1.StreamMessageResponse, 100)
	c := primaryController(t, addr, 0, msgs)
	ctl := &nlController{c: c, msgs: msgs, ctx: context.Background()}
	// Push p4/netlock.p4 (the switch runs it already; a controller pushes the P4Info anyway).
	pushPipeline(t, c, dpengine.Bundle(dataplane.DefaultSizing))
	return ctl
}

func (ctl *nlController) insert(t *testing.T, table string, key map[string]client.MatchInterface, action string, args [][]byte) {
	t.Helper()
	if err := ctl.c.InsertTableEntry(ctl.ctx, ctl.c.NewTableEntry(table, key, ctl.c.NewTableActionDirect(action, args), nil)); err != nil {
		t.Fatalf("insert into %s: %v", table, err)
	}
}

// admin sends an admin PacketOut and waits for its PacketIn.
func (ctl *nlController) admin(t *testing.T, req dataplane.AdminRequest) dataplane.AdminReply {
	t.Helper()
	pkt := &p4v1.PacketOut{Payload: req.Frame(nil, e2eKey), Metadata: []*p4v1.PacketMetadata{
		{MetadataId: 1, Value: []byte{dataplane.PacketOutAdmin}}, {MetadataId: 2, Value: []byte{0}},
		{MetadataId: 3, Value: []byte{0}}}}
	if err := ctl.c.SendPacketOut(ctl.ctx, pkt); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(switchWait)
	for {
		select {
		case m := <-ctl.msgs:
			p := m.GetPacket()
			if p == nil {
				continue
			}
			rep, err := dataplane.ParseAdminReply(p.Payload)
			if err != nil {
				t.Fatalf("packet-in: %v", err)
			}
			if rep.ID == req.ID {
				return rep
			}
		case <-deadline:
			t.Fatalf("no answer to admin %d", req.Op)
		}
	}
}

// observed wraps a host socket and shows an AcceptLog the datagrams (inside any fault injection).
// wireTrace keeps a line per lock datagram a host read or sent, for diagnosing a violation.
type wireTrace struct {
	mu    sync.Mutex
	lines []traceLine
}

type traceLine struct {
	lock uint32
	text string
}

// hook returns a function that records the datagrams it is given as who's, in direction dir.
func (w *wireTrace) hook(who, dir string, next func([]byte)) func([]byte) {
	return func(b []byte) {
		if next != nil {
			next(b)
		}
		h, err := wire.Parse(b)
		if err != nil {
			return
		}
		line := fmt.Sprintf("%s %s %s %s op=%v mode=%v flags=%#x status=%v prio=%d txn=%#x token=%d slots=%d client=%v",
			time.Now().Format("15:04:05.000000"), who, dir, fmt.Sprint(h.Lock()), h.Op(), h.Mode(), uint8(h.Flags()), h.Status(),
			h.Priority(), h.Txn(), h.Token(), h.Slots(), h.ClientAddr())
		w.mu.Lock()
		w.lines = append(w.lines, traceLine{h.Lock(), line})
		w.mu.Unlock()
	}
}

// of returns the recorded lines about lock.
func (w *wireTrace) of(lock uint32) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, l := range w.lines {
		if l.lock == lock {
			out = append(out, l.text)
		}
	}
	return out
}

type observed struct {
	net.PacketConn
	read, sent func([]byte)
}

func (o observed) ReadFrom(p []byte) (int, net.Addr, error) {
	n, a, err := o.PacketConn.ReadFrom(p)
	if err == nil && o.read != nil {
		o.read(p[:n])
	}
	return n, a, err
}

func (o observed) WriteTo(p []byte, a net.Addr) (int, error) {
	if o.sent != nil {
		o.sent(p)
	}
	return o.PacketConn.WriteTo(p, a)
}

// TestSwitchNetlockEndToEnd runs `netlock switch p4/netlock.p4` (Tofino-constraint mode) with
// UDP-tunnel ports to a virtual rack (package hostshim): a real lock server on 10.0.1.1 and real
// client-library users on 10.0.2.x, with faultnet loss, duplication, reordering and delay on the
// clients' sockets. Locks 1-4 live in the switch (two slots per level: overflow, queue-empty and
// push-back happen), locks 1000-1001 on the server; the same client code takes both. Checked by
// package history: exclusion, fencing order, FIFO per priority (the switch's accept log, which
// --log-console prints, and the server's socket give the acceptance orders), every acquire
// answered; and at the end the switch's queues are empty.
//
// Clients renew their leases (KeepAlive), and the test runs the control plane's lease sweep
// (probe, force-release) over the switch locks. Both directions duplicate: the switch knows a
// copy of an acquire without the retry flag by its table of requests seen (netlock.p4's ended).
func TestSwitchNetlockEndToEnd(t *testing.T) {
	testSwitchNetlockEndToEnd(t, "../../p4/netlock.p4", true, "--tofino-constraints", "--pipeline", "interp")
}

// TestSwitchNetlockGenEndToEnd runs the same rack through `netlock switch --pipeline gen
// p4/netlock.p4`: the program's generated Go pipeline (p4/netlockgen), which does not check
// the Tofino rules.
func TestSwitchNetlockGenEndToEnd(t *testing.T) {
	testSwitchNetlockEndToEnd(t, "../../p4/netlock.p4", true, "--pipeline", "gen")
}

// TestSwitchNetlockTNAEndToEnd runs the same rack through `netlock switch p4/tna/netlock.p4`
// (the TNA program: Tofino's register rules always enforced). TNA has no log_msg, so the
// switch has no accept log: FIFO is checked for the server's locks only; exclusion, fencing,
// answers and empty queues for all.
func TestSwitchNetlockTNAEndToEnd(t *testing.T) {
	testSwitchNetlockEndToEnd(t, "../../p4/tna/netlock.p4", false, "--tofino-constraints")
}

// testSwitchNetlockEndToEnd runs the end-to-end test on program, with more switch flags;
// acceptLog says whether the program prints the switch's accept log (log_msg).
func testSwitchNetlockEndToEnd(t *testing.T, program string, acceptLog bool, flags ...string) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	logrus.SetLevel(logrus.PanicLevel)
	seed := *switchSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun: go test ./cmd/netlock -run '^%s$' -switch.seed=%d)", seed, t.Name(), seed)

	const (
		nClients   = 3
		workers    = 3
		ops        = 25
		serverPort = 100
	)
	plan := hostshim.DefaultPlan
	switchLocks := []uint32{1, 2, 3, 4}
	serverLocks := []uint32{1000, 1001}

	// The far ends of the switch's ports: server 1 on port 100, client i on port i.
	type wiring struct {
		num  int
		addr netip.Addr
		link *port.UDPPort
	}
	var wires []wiring
	wires = append(wires, wiring{num: serverPort, addr: plan.Server(1)})
	for i := 1; i <= nClients; i++ {
		wires = append(wires, wiring{num: i, addr: plan.Client(i)})
	}
	var args []string
	for i := range wires {
		l, err := port.ListenUDP(port.UDPSpec{Local: netip.MustParseAddrPort("127.0.0.1:0")})
		if err != nil {
			t.Fatal(err)
		}
		wires[i].link = l
		args = append(args, "--udp-port", fmt.Sprintf("%d@127.0.0.1:0,%s", wires[i].num, l.LocalAddr()))
	}
	args = append(args, "--log-console")
	args = append(args, flags...)
	args = append(args, program,
		"--", "--grpc-server-addr", "127.0.0.1:0", "--cpu-port", "255")
	sw := startSwitch(t, args)
	if slices.Contains(flags, "gen") {
		sw.out.waitFor(t, regexp.MustCompile(`Pipeline: generated Go \(netlock\)`))
	}
	hosts := map[netip.Addr]*hostshim.Host{}
	for _, w := range wires {
		m := sw.out.waitFor(t, regexp.MustCompile(`Adding UDP tunnel port `+strconv.Itoa(w.num)+` on (\S+),`))
		a, err := netip.ParseAddrPort(m[1])
		if err != nil {
			t.Fatal(err)
		}
		w.link.SetRemote(a)
		h, err := hostshim.New(hostshim.Config{Addr: w.addr, Gateway: hostshim.MACFor(plan.Switch()), Link: w.link})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		hosts[w.addr] = h
	}

	// The control plane's part: rack, server, routes and clone sessions, locks, cookie.
	ctl := connectNetlock(t, sw.grpc)
	swMAC := hostshim.MACFor(plan.Switch())
	name, a, err := dataplane.Rack{Key: e2eKey, SwitchIP: plan.Switch(), SwitchMAC: swMAC,
		DefaultLease: 10 * time.Second, MaxLease: 60 * time.Second}.Action()
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.c.ModifyTableEntry(ctl.ctx, ctl.c.NewTableEntry(dataplane.TableRack, nil,
		ctl.c.NewTableActionDirect(name, a), nil)); err != nil {
		t.Fatal(err)
	}
	if rep := ctl.admin(t, dataplane.AdminRequest{Op: wire.AdminSwitchGetCookie, ID: 1}); rep.Value != 0 {
		t.Fatalf("fresh switch has cookie %#x", rep.Value)
	}
	srvAddr := netip.AddrPortFrom(plan.Server(1), wire.Port)
	name, a, err = dataplane.Server{Addr: srvAddr, Port: serverPort, MAC: hostshim.MACFor(plan.Server(1))}.Action()
	if err != nil {
		t.Fatal(err)
	}
	ctl.insert(t, dataplane.TableServers, map[string]client.MatchInterface{dataplane.KeyServer: &client.ExactMatch{
		Value: dataplane.ServerMatch(1)}}, name, a)
	for _, w := range wires {
		ip := w.addr.As4()
		name, a := dataplane.NextHop{SrcMAC: swMAC, DstMAC: hostshim.MACFor(w.addr), Port: w.num}.Action()
		ctl.insert(t, dataplane.TableRoute, map[string]client.MatchInterface{dataplane.KeyRouteDst: &client.LpmMatch{
			Value: ip[:], PLen: 32}}, name, a)
		if err := ctl.c.InsertCloneSession(ctl.ctx, uint32(dataplane.CloneSession(w.num)), []uint32{uint32(w.num)},
			client.DefaultCloneSessionOptions); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range switchLocks {
		e := dataplane.LockEntry{Lock: l, Index: uint32(i), Server: 1, Regions: [dataplane.Levels]dataplane.Region{
			{Left: uint32(4 * i), Size: 2}, {Left: uint32(4*i + 2), Size: 2}}}
		ctl.admin(t, dataplane.AdminRequest{Op: wire.AdminSwitchReset, ID: uint16(10 + i), Lock: l})
		name, a := e.Action()
		ctl.insert(t, dataplane.TableLock, map[string]client.MatchInterface{dataplane.KeyLock: &client.ExactMatch{
			Value: e.Match()}}, name, a)
	}
	if rep := ctl.admin(t, dataplane.AdminRequest{Op: wire.AdminSwitchSetCookie, ID: 2, Value: 0xc00c1e}); rep.Value != 0xc00c1e {
		t.Fatalf("cookie %#x", rep.Value)
	}

	// The lock server: owns locks 1000-1001, buffers the switch locks' overflow; accepts
	// control messages from the switch's address with the rack key.
	var serverLog history.AcceptLog
	var trace wireTrace
	srvHost := hosts[plan.Server(1)]
	srv, err := lockserver.New(lockserver.Config{Listen: "127.0.0.1:0", Shards: 1, Sockets: 1, RackKey: e2eKey,
		Peers: lockserver.Peers{Switches: []string{plan.Switch().String()}},
		WrapConn: func(pc net.PacketConn) net.PacketConn {
			return observed{PacketConn: srvHost.WrapConn(wire.Port)(pc), read: trace.hook("server", "read", serverLog.Observe),
				sent: trace.hook("server", "sent", serverLog.ObserveSent)}
		}})
	if err != nil {
		t.Fatal(err)
	}
	srvCtx, stopSrv := context.WithCancel(context.Background())
	srvDone := make(chan error, 1)
	go func() { srvDone <- srv.Run(srvCtx) }()
	defer func() {
		stopSrv()
		if err := <-srvDone; err != nil {
			t.Error(err)
		}
	}()

	// Clients: faults on their sockets; the grants they receive are shown to the switch's
	// accept log (a request the switch took twice is left out of the FIFO order).
	var switchLog history.AcceptLog
	var rec history.Recorder
	var faultMu sync.Mutex
	var faults []*faultnet.Conn
	var clients []*nlclient.Client
	for i := 1; i <= nClients; i++ {
		h := hosts[plan.Client(i)]
		fcfg := faultnet.Config{Seed: seed + uint64(i),
			Send: faultnet.Faults{Loss: 0.05, Dup: 0.05, Reorder: 0.05, DelayProb: 0.1, Delay: 2 * time.Millisecond},
			Recv: faultnet.Faults{Loss: 0.05, Dup: 0.05, Reorder: 0.05}}
		c, err := nlclient.New(nlclient.Config{Servers: []string{srvAddr.String()}, Lease: e2eLease, KeepAlive: true,
			RetryInterval: 20 * time.Millisecond, MaxRetryInterval: 200 * time.Millisecond,
			WrapConn: func(pc net.PacketConn) net.PacketConn {
				who := fmt.Sprintf("client%d", i)
				o := observed{PacketConn: h.WrapConn(0)(pc), read: trace.hook(who, "read", switchLog.ObserveSent),
					sent: trace.hook(who, "sent", nil)}
				f := faultnet.Wrap(o, fcfg)
				faultMu.Lock()
				faults = append(faults, f)
				faultMu.Unlock()
				return f
			}})
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()

	// The lease sweep, as the control plane runs it: grants whose lease ran out on the switch's
	// clock are force-released (a holder that stopped renewing, or a grant the client gave back
	// with a release that was lost).
	drain := make(chan struct{})
	type sweepResult struct {
		ended int
		busy  string
	}
	sweepDone := make(chan sweepResult)
	go func() {
		n, busy := e2eSweep(t, ctl, switchLocks, drain, 2*e2eLease+5*time.Second)
		sweepDone <- sweepResult{n, busy}
	}()

	var wg sync.WaitGroup
	errs := make(chan error, nClients*workers)
	for ci, c := range clients {
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(seed, uint64(ci*workers+w)))
				prio := uint8(w % 2)
				who := fmt.Sprintf("c%d.%d", ci+1, w)
				for i := 0; i < ops; i++ {
					var locks []uint32
					switch r := rng.IntN(10); {
					case r < 6:
						locks = []uint32{switchLocks[rng.IntN(len(switchLocks))]}
					case r < 8:
						locks = []uint32{serverLocks[rng.IntN(len(serverLocks))]}
					default: // a transaction over a switch lock and a server lock
						locks = []uint32{switchLocks[rng.IntN(len(switchLocks))], serverLocks[rng.IntN(len(serverLocks))]}
					}
					if err := e2eTxn(c, rng, &rec, who, prio, locks); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// The switch queues empty again: the sweep ends grants the clients gave back with a release
	// that was lost (at most a lease later).
	close(drain)
	sr := <-sweepDone
	t.Logf("lease sweep: %d grants force-released", sr.ended)
	if sr.busy != "" {
		t.Errorf("the switch queues did not empty: %s", sr.busy)
	}

	st := srv.Stats()
	t.Logf("server: %d overflowed, %d pushed back, %d grants; refused control: %v", st.Overflowed, st.PushedBack,
		st.Grants, srv.ControlRefused())
	for reason, n := range srv.ControlRefused() {
		if n != 0 {
			t.Errorf("server refused %d control messages (%s)", n, reason)
		}
	}
	if st.Overflowed == 0 || st.PushedBack == 0 {
		t.Errorf("no overflow or no push-back happened (%d, %d): the test did not exercise q2", st.Overflowed, st.PushedBack)
	}
	var fs faultnet.Stats
	for _, f := range faults {
		fs = fs.Add(f.Stats())
	}
	t.Logf("faults injected: %+v", fs)
	if fs.SendLost == 0 || fs.SendDup == 0 || fs.RecvDup == 0 {
		t.Errorf("no faults injected: %+v", fs)
	}

	// The switch's accept log, in the order it processed the acquires.
	for _, m := range regexp.MustCompile(`log_msg: netlock: acquire lock=(\d+) txn=(\d+) prio=\d+`).
		FindAllStringSubmatch(sw.out.String(), -1) {
		lock, _ := strconv.ParseUint(m[1], 10, 32)
		txn, _ := strconv.ParseUint(m[2], 10, 64)
		switchLog.Observe(wire.Append(nil, &wire.Fields{Op: wire.OpAcquire, Lock: uint32(lock), Txn: txn}))
	}
	order := serverLog.Order()
	if acceptLog {
		if len(switchLog.Order()) == 0 {
			t.Errorf("%s printed no accept log", program)
		}
		for lock, txns := range switchLog.Order() {
			order[lock] = txns
		}
	} else {
		// No acceptance order for the switch's locks (the server saw only their overflow).
		for _, l := range switchLocks {
			delete(order, l)
		}
	}
	events := rec.Events()
	if vs := history.Check(events, history.Options{AcceptOrder: order, RequireOutcome: true}); len(vs) > 0 {
		for _, v := range vs {
			t.Error(v)
		}
		logViolationContext(t, vs, events, sw.out.String(), &trace)
		t.Fatalf("%d violations in %d events", len(vs), len(events))
	}
	t.Logf("%d events checked, FIFO checked on %d locks", len(events), len(order))
	sw.stop()
	if out := sw.out.String(); strings.Contains(out, "tofino constraint") || strings.Contains(out, "Dropping packet received on port 255") {
		t.Errorf("the switch reports pipeline errors:\n%s", lastLines(out, 30))
	}
}

// e2eLease is the clients' lease: they renew it (KeepAlive) every third of it.
const e2eLease = 2 * time.Second

// e2eSweep probes the switch locks every 100ms and force-releases the grants whose lease ran
// out on the switch's clock. Once drain is closed it also checks, each round, that the switch
// queues are empty (no holder, waiter, occupied slot or buffered request): it returns then, with
// the number of grants it ended, or with the state of a lock that is not empty after wait.
func e2eSweep(t *testing.T, ctl *nlController, locks []uint32, drain <-chan struct{}, wait time.Duration) (int, string) {
	ended := 0
	id := uint16(1000)
	var deadline <-chan time.Time
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-drain:
			if deadline == nil {
				deadline = time.After(wait)
			}
		default:
		}
		busy := ""
		for _, l := range locks {
			for lv := uint8(0); lv < dataplane.Levels; lv++ {
				id++
				head := ctl.admin(t, dataplane.AdminRequest{Op: wire.AdminSwitchProbe, ID: id, Lock: l, Level: lv})
				if head.Holders != 0 || head.Waiting != [2]uint16{} || head.Used != [2]uint16{} || head.Buffered != 0 ||
					head.Done != 0 {
					busy = fmt.Sprintf("lock %d level %d: %+v", l, lv, head)
				}
				for off := uint16(0); off < head.Used[lv]; off++ {
					id++
					r := ctl.admin(t, dataplane.AdminRequest{Op: wire.AdminSwitchProbe, ID: id, Lock: l, Level: lv, Offset: off})
					if !r.Live || r.Token == 0 || r.Now-r.GrantTime <= r.Lease {
						continue
					}
					id++
					if f := ctl.admin(t, dataplane.AdminRequest{Op: wire.AdminSwitchForceRelease, ID: id, Lock: l,
						Txn: r.Txn, Token: r.Token}); f.Result == dataplane.AdminOK {
						ended++
					}
				}
			}
		}
		if deadline != nil && busy == "" {
			return ended, ""
		}
		select {
		case <-deadline:
			return ended, busy
		case <-tick.C:
		}
	}
}

// e2eTxn takes locks (in order) for one transaction, holds them briefly and releases them,
// recording what the client observes.
func e2eTxn(c *nlclient.Client, rng *rand.Rand, rec *history.Recorder, who string, prio uint8, locks []uint32) error {
	ctx, cancel := context.WithTimeout(context.Background(), switchWait)
	defer cancel()
	txn := c.Begin(nlclient.WithPriority(prio))
	for _, l := range locks {
		mode := wire.Mode(rng.IntN(2))
		txn.Lock(l, mode)
		rec.Record(history.Event{Kind: history.AcquireSent, Lock: l, Txn: txn.ID(), Mode: mode, Priority: prio, Client: who})
	}
	if err := txn.Acquire(ctx); err != nil {
		for _, l := range locks {
			rec.Record(history.Event{Kind: history.Abandoned, Lock: l, Txn: txn.ID(), Client: who})
		}
		return fmt.Errorf("%s: acquire %v: %w", who, locks, err)
	}
	for _, g := range txn.Grants() {
		rec.Record(history.Event{Kind: history.Granted, Lock: g.Lock(), Txn: g.Txn(), Mode: g.Mode(), Token: g.Token(),
			Deadline: g.Deadline(), Client: who})
	}
	time.Sleep(time.Duration(rng.IntN(1500)) * time.Microsecond)
	for _, g := range txn.Grants() {
		at := time.Now()
		if dl := g.Deadline(); dl.Before(at) {
			at = dl // the lease ran out (renewals lost): the holder's interval ended there
		}
		rec.Record(history.Event{Kind: history.Released, Lock: g.Lock(), Txn: g.Txn(), At: at, Client: who})
	}
	if err := txn.Release(ctx); err != nil && !errors.Is(err, nlclient.ErrNotHolder) && !errors.Is(err, nlclient.ErrLeaseLost) {
		return fmt.Errorf("%s: release %v: %w", who, locks, err)
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// logViolationContext logs, for each lock with a violation, the recorded events of that lock and
// the switch's log lines that name it (its accept log and anything else it printed about the
// lock) and the datagrams about it, so that a violation seen once can be diagnosed from the test's output.
func logViolationContext(t *testing.T, vs []history.Violation, events []history.Event, switchOut string, trace *wireTrace) {
	t.Helper()
	locks := map[uint32]bool{}
	for _, v := range vs {
		locks[v.Lock] = true
	}
	for lock := range locks {
		var b strings.Builder
		fmt.Fprintf(&b, "lock %d, the recorded events:\n", lock)
		for _, e := range events {
			if e.Lock == lock {
				fmt.Fprintf(&b, "  %s %s\n", e.At.Format("15:04:05.000000"), e)
			}
		}
		fmt.Fprintf(&b, "the switch's lines about it:\n")
		needle := fmt.Sprintf("lock=%d ", lock)
		for _, line := range strings.Split(switchOut, "\n") {
			if strings.Contains(line, needle) {
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
		fmt.Fprintf(&b, "the datagrams about it the server and the clients read and sent (a client's sent datagrams after its send faults, its read ones before its receive faults):\n")
		for _, line := range trace.of(lock) {
			fmt.Fprintf(&b, "  %s\n", line)
		}
		t.Log(b.String())
	}
}
