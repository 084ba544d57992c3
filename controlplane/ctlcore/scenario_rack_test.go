package ctlcore

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/lockserver/srvcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// scriptRack is the scenario tests' rack: the real switch program (p4/netlock.p4 on the P4
// engine, dpengine) and real lock server processes (lockserver/srvcore cores: the servers and
// their standbys), wired as a rack in virtual time, with clients whose acquires and releases the
// scenario issues one by one. The rack carries no rule of its own: every grant, queue, overflow,
// push-back, token, admin answer and table write is the switch's or a server's. What it keeps is
// the test's: the clock and the events, the wiring (which port reaches which process), the
// scripted failures (cuts, mutes, delays, lost answers, restarts) and the safety oracle.
//
// Wiring. Server n is 10.0.0.n:8888 on switch port n, standby n sits on port 10+n; the clients
// are 10.0.1.x behind port 20 (reachable only when the controller writes their route: rack
// hosts; without it the switch drops its answers to them, its grants among them); the
// controllers' server admin datagrams enter the switch on port 30 from 10.0.2.1 and are routed
// by the switch's table to whichever process holds the server's address; the answers come back
// out of band (the controller's address has no route). A frame the switch sends out of a port
// reaches the process there at once (echo= delays what a process sends back), unless the process
// is cut off.
//
// The oracle (docs/controlplane.md, what the Core must keep): every grant a core emits, the
// switch's (a grant packet leaving the switch that did not come in as one) or a server's (a grant
// in its output), is recorded with its token and lease when it is emitted, delivered or not. A
// grant made while another grant of the same lock is still held (not released, force-released or
// expired), or a token not above every earlier token of the lock, is reported as a VIOLATION line
// in the output. A holder keeps its grant until it releases it or its lease ends, whatever the
// switch forgets (an admin reset, a restart): that is what the drain, the leases waited out and
// the grace are for.
type scriptRack struct {
	cfg     Config // validated (the first Core's)
	sb      uint   // the token's slot bits
	now     time.Time
	timeout time.Duration // the shell's deadline for an answer

	sw     coreSwitch
	procs  []*rackProc       // the servers, then their standbys
	home   map[uint32]uint16 // the server number a client addresses for a lock
	grants map[uint32][]*heldGrant
	maxTok map[uint32]uint64
	ts     uint64 // the clients' request timestamps

	// primary names the controller the switch takes P4Runtime writes and packet-outs from (the
	// last one told it is primary): the others' are refused, as the switch refuses a backup's.
	primary string

	// admin collects the answer of the server admin request being carried out (its txn).
	admin struct {
		txn  uint64
		got  bool
		msg  wire.Fields
		body []byte
	}
	// trace collects what became of the client request being sent.
	trace *reqTrace

	events evHeap
	seq    uint64
	out    func(format string, args ...any) // prints a line of the command's output
	bad    int                              // violations seen
}

// heldGrant is one grant the oracle recorded.
type heldGrant struct {
	lock       uint32
	txn, token uint64
	by         string
	at, until  time.Time
	ended      bool
}

func (g *heldGrant) live(now time.Time) bool { return !g.ended && now.Before(g.until) }

// rackProc is a lock server process (a server or a standby) on a switch port: a srvcore.Core
// and the scripted failures around it.
type rackProc struct {
	name     string
	num      uint16
	port     int
	standby  bool // started as a standby (srvcore.Config.Standby)
	tookOver bool // a standby that answered a takeover
	instance uint32
	core     *srvcore.Core
	cut      bool // nothing of the rack reaches it, nothing comes from it
	drop     int  // the next drop admin answers it sends are lost
	mute     bool // drops queue-empties (the barrier's echo never comes)
	echo     time.Duration
	locks    map[uint32]bool // the locks it was sent something about (for rack-state)
}

// reqTrace is what became of one client request: whether the switch consumed it, the process it
// reached, and the answers.
type reqTrace struct {
	lock      uint32
	txn       uint64
	reached   *rackProc
	lost      string
	overflow  bool
	answered  bool
	rejected  bool
	dropped   bool     // dropped by its server (switch-resident)
	switchLck bool     // the switch has an entry for the lock
	lines     []string // what happened meanwhile, printed after (acquire) or before (release) its summary
}

// print prints what happened during tr's request, with the request's summary line (if any)
// first or last.
func (f *scriptRack) print(tr *reqTrace, summary string, first bool) {
	if summary != "" && first {
		f.out("%s", summary)
	}
	for _, l := range tr.lines {
		f.out("%s", l)
	}
	if summary != "" && !first {
		f.out("%s", summary)
	}
}

func newScriptRack(cfg Config, now time.Time, timeout time.Duration, out func(string, ...any)) (*scriptRack, error) {
	f := &scriptRack{cfg: cfg, sb: cfg.sizing().SlotBits(), now: now, timeout: timeout, out: out,
		home: map[uint32]uint16{}, grants: map[uint32][]*heldGrant{}, maxTok: map[uint32]uint64{}}
	f.sw = coreSwitch{cfg: &f.cfg, now: func() time.Time { return f.now }}
	for _, s := range cfg.Servers {
		p := &rackProc{name: fmt.Sprintf("server %d", s.Num), num: s.Num, port: s.Port, instance: uint32(s.Num)}
		if err := f.startProc(p, 0, 0); err != nil {
			return nil, err
		}
		f.procs = append(f.procs, p)
	}
	for _, s := range cfg.Standbys {
		p := &rackProc{name: fmt.Sprintf("standby %d", s.Num), num: s.Num, port: s.Port, standby: true,
			instance: 100 + uint32(s.Num)}
		if err := f.startProc(p, 0, 0); err != nil {
			return nil, err
		}
		f.procs = append(f.procs, p)
	}
	return f, nil
}

// mono is the rack's monotonic clock (ns since t0), the servers' now.
func (f *scriptRack) mono() int64 { return f.now.Sub(t0).Nanoseconds() }

// startProc starts p's process (again): a fresh srvcore.Core at epoch, holding every grant for
// grace.
func (f *scriptRack) startProc(p *rackProc, epoch uint64, grace time.Duration) error {
	c, err := newServerCore(&f.cfg, p.instance, p.standby, epoch, grace, f.mono())
	if err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	p.core, p.locks, p.tookOver = c, map[uint32]bool{}, false
	return nil
}

func (f *scriptRack) proc(name string) *rackProc {
	for _, p := range f.procs {
		if p.name == name {
			return p
		}
	}
	return nil
}

func (f *scriptRack) procAt(port int) *rackProc {
	for _, p := range f.procs {
		if p.port == port {
			return p
		}
	}
	return nil
}

func (f *scriptRack) serverAddr(n uint16) (netip.AddrPort, bool) {
	for _, s := range f.cfg.Servers {
		if s.Num == n {
			return s.Addr, true
		}
	}
	return netip.AddrPort{}, false
}

// at runs fn at t (now when t is not later).
func (f *scriptRack) at(t time.Time, fn func()) {
	if !t.After(f.now) {
		fn()
		return
	}
	f.seq++
	heap.Push(&f.events, ev{at: t, seq: f.seq, fn: fn})
}

func (f *scriptRack) ms(t time.Time) string { return t.Sub(t0).String() }

// frames

// the switch

// switchIn runs frame, arrived on port, through the switch and sends on what it sends out. It
// reports false when the switch does not process it (down, no pipeline).
func (f *scriptRack) switchIn(port int, frame []byte) bool {
	if !f.sw.running() {
		return false
	}
	var in wire.Fields
	var fr udpframe.Frame
	inOK := parseFrame(frame, &fr, &in)
	before, _ := f.sw.dp.Drops()
	outs, err := f.sw.process(port, frame)
	if err != nil {
		f.bad++
		f.out("  VIOLATION %v", err)
		return true
	}
	// What the switch dropped of a scripted client's request or of an answer to it.
	if after, _ := f.sw.dp.Drops(); inOK && in.Txn < trafficTxn {
		for why := range after {
			if after[why] > before[why] {
				f.out("  the switch drops the %s of lock %d txn %d or its answer: %s", opName(in.Op), in.Lock, in.Txn,
					dataplane.DropNames[why])
			}
		}
	}
	f.switchOut(outs, inOK && in.Op != wire.OpGrant)
	return true
}

// switchOut sends on the packets the switch sent out; switchGrants says whether a grant among
// them was made by the switch (not a server's grant it routed).
func (f *scriptRack) switchOut(outs []engine.Output, switchGrants bool) {
	for _, o := range outs {
		var m wire.Fields
		var fr udpframe.Frame
		if !parseFrame(o.Data, &fr, &m) {
			continue
		}
		if m.Op == wire.OpGrant && switchGrants {
			f.grant(m, "switch")
		}
		f.deliver(o.Port, o.Data, &fr, &m)
	}
}

// deliver hands a frame that left the switch on port to what is there.
func (f *scriptRack) deliver(port int, data []byte, fr *udpframe.Frame, m *wire.Fields) {
	if port == rackHostPort {
		f.client(m)
		return
	}
	p := f.procAt(port)
	if p == nil {
		return
	}
	tr := f.trace
	if tr != nil && m.Lock == tr.lock && m.Txn == tr.txn {
		if m.Op == wire.OpOverflow {
			tr.overflow = true
			f.out("  lock %d txn %d overflows to %s", m.Lock, m.Txn, p.name)
		} else {
			tr.reached = p
		}
	}
	if p.cut {
		if m.Op == wire.OpOverflow || (tr != nil && m.Lock == tr.lock && m.Txn == tr.txn) {
			f.out("  %s of lock %d txn %d lost: %s is cut off", opName(m.Op), m.Lock, m.Txn, p.name)
		}
		return
	}
	if p.mute && m.Op == wire.OpQueueEmpty {
		return
	}
	f.handle(p, fr.Payload, fr.Src)
}

func opName(op wire.Op) string {
	switch op {
	case wire.OpAcquire:
		return "acquire"
	case wire.OpRelease:
		return "release"
	case wire.OpOverflow:
		return "overflow"
	case wire.OpQueueEmpty:
		return "queue-empty"
	case wire.OpGrant:
		return "grant"
	case wire.OpPushBack:
		return "push-back"
	case wire.OpReject:
		return "reject"
	}
	return fmt.Sprintf("op %d", op)
}

// client takes what reaches the clients: their answers (a reject is printed; a grant was
// recorded when it was made).
func (f *scriptRack) client(m *wire.Fields) {
	if tr := f.trace; tr != nil && m.Lock == tr.lock && m.Txn == tr.txn {
		tr.answered = true
		tr.rejected = tr.rejected || m.Op == wire.OpReject
	}
	if m.Op == wire.OpReject && m.Txn < trafficTxn {
		f.out("  lock %d txn %d: %s answers reject %s", m.Lock, m.Txn, f.senderOf(m), m.Status)
	}
}

// senderOf names who sent an answer to a client: the switch for a lock in its table.
func (f *scriptRack) senderOf(m *wire.Fields) string {
	if f.sw.running() {
		if _, ok := f.sw.switchLock(m.Lock); ok {
			return "the switch"
		}
	}
	return "its server"
}

// the servers

// handle hands a datagram from from to p's core and carries out what it asks.
func (f *scriptRack) handle(p *rackProc, payload []byte, from netip.AddrPort) {
	if h, err := wire.Parse(payload); err == nil && !wire.IsReservedLock(h.Lock()) && h.Op() != wire.OpAdmin {
		p.locks[h.Lock()] = true
	} else if err == nil && (h.Status() == wire.AdminYield || h.Status() == wire.AdminAdopt) {
		p.locks[h.Lock()] = true
	}
	before := p.core.Stats().ResidentDropped
	var out srvcore.Out
	p.core.Handle(f.mono(), payload, from, &out)
	if p.core.Stats().ResidentDropped > before && f.trace != nil {
		f.trace.dropped = true
	}
	f.apply(p, &out)
}

// apply carries out what p's core asked for: the datagrams in order, then the replies with a
// body, then the epoch to persist (acknowledged at once: the state file is written instantly).
func (f *scriptRack) apply(p *rackProc, out *srvcore.Out) {
	carryOut(p.core, f.mono(), out, func(to netip.AddrPort, m wire.Fields, body []byte) {
		if body == nil && m.Op == wire.OpGrant {
			f.grant(m, p.name)
		}
		f.send(p, to, m, body)
	})
}

// send sends a datagram of p: an answer to the controller comes back out of band, the rest goes
// into the switch on p's port (echo later).
func (f *scriptRack) send(p *rackProc, to netip.AddrPort, m wire.Fields, body []byte) {
	if to == rackCtl {
		if f.admin.txn == m.Txn && !f.admin.got {
			f.admin.got, f.admin.msg, f.admin.body = true, m, slices.Clone(body)
		}
		return
	}
	if p.cut {
		return
	}
	addr, _ := f.serverAddr(p.num)
	frame := rackFrame(&f.cfg, addr, to, &m)
	f.at(f.now.Add(p.echo), func() {
		if m.Op == wire.OpPushBack && f.sw.running() {
			switch {
			case wire.IsReservedLock(m.Lock):
				f.out("  %s echoes the barrier of staging %d", p.name, m.Lock-wire.ReservedLockBase)
			case m.Txn != 0:
				f.out("  %s pushes back lock %d txn %d", p.name, m.Lock, m.Txn)
			}
		}
		f.switchIn(p.port, frame)
	})
}

// grants

// grant records a grant m made by by.
func (f *scriptRack) grant(m wire.Fields, by string) {
	for _, g := range f.grants[m.Lock] {
		if g.txn == m.Txn && g.token == m.Token && g.by == by {
			return // the same grant again (a retransmission answered)
		}
	}
	for _, g := range f.grants[m.Lock] {
		if g.live(f.now) {
			f.bad++
			f.out("  VIOLATION two holders of lock %d: txn %d (%s token %d) while txn %d (%s token %d) holds until %s",
				m.Lock, m.Txn, by, m.Token, g.txn, g.by, g.token, f.ms(g.until))
		}
	}
	if m.Token <= f.maxTok[m.Lock] {
		f.bad++
		f.out("  VIOLATION token %d of lock %d (%s) not above %d", m.Token, m.Lock, by, f.maxTok[m.Lock])
	}
	f.maxTok[m.Lock] = max(f.maxTok[m.Lock], m.Token)
	g := &heldGrant{lock: m.Lock, txn: m.Txn, token: m.Token, by: by, at: f.now,
		until: f.now.Add(time.Duration(m.LeaseMicros) * time.Microsecond)}
	f.grants[m.Lock] = append(f.grants[m.Lock], g)
	if m.Txn >= trafficTxn {
		return // the traffic's grants are checked, not printed
	}
	f.out("  grant lock %d txn %d token %d by %s until %s", m.Lock, m.Txn, m.Token, by, f.ms(g.until))
}

// tick runs the servers' cores at their deadlines (leases, grant holds, the controller lease).
func (f *scriptRack) tick() {
	for _, p := range f.procs {
		if d := p.core.NextDeadline(); d != math.MaxInt64 && d <= f.mono() {
			var out srvcore.Out
			p.core.Tick(f.mono(), &out)
			f.apply(p, &out)
		}
	}
}

// next returns the rack's next event or server deadline (zero: none).
func (f *scriptRack) next() time.Time {
	var n time.Time
	take := func(t time.Time) {
		if t.After(f.now) && (n.IsZero() || t.Before(n)) {
			n = t
		}
	}
	if len(f.events) > 0 {
		take(f.events[0].at)
	}
	for _, p := range f.procs {
		if d := p.core.NextDeadline(); d != math.MaxInt64 {
			take(t0.Add(time.Duration(d)))
		}
	}
	return n
}

// runDue runs the events due now; it reports whether there was one.
func (f *scriptRack) runDue() bool {
	ran := false
	for len(f.events) > 0 && !f.events[0].at.After(f.now) {
		e := heap.Pop(&f.events).(ev)
		e.fn()
		ran = true
	}
	return ran
}

// clients

// trafficTxn is the first txn of the traffic command's clients.
const trafficTxn = 1 << 40

// lockAddr returns the address a client sends lock id's requests to: its server's (server=, or
// the server of the switch's entry).
func (f *scriptRack) lockAddr(id uint32) (uint16, netip.AddrPort, bool) {
	n, ok := f.home[id]
	if !ok {
		e, ok := f.sw.switchLock(id)
		if !ok {
			return 0, netip.AddrPort{}, false
		}
		n = e.Server
	}
	a, ok := f.serverAddr(n)
	return n, a, ok
}

// request sends a client's request m from src: through the switch on the clients' port, or
// (direct) straight to server n's process, past any cut. It returns what became of it.
func (f *scriptRack) request(n uint16, dst netip.AddrPort, src netip.AddrPort, m wire.Fields, direct bool) *reqTrace {
	tr := &reqTrace{lock: m.Lock, txn: m.Txn}
	f.trace = tr
	out := f.out
	f.out = func(format string, args ...any) { tr.lines = append(tr.lines, fmt.Sprintf(format, args...)) }
	defer func() { f.trace, f.out = nil, out }()
	if direct {
		p := f.proc(fmt.Sprintf("server %d", n))
		tr.reached = p
		f.handle(p, rackFrame(&f.cfg, src, dst, &m)[udpframe.HeaderLen:], src)
		return tr
	}
	if f.sw.running() {
		_, tr.switchLck = f.sw.switchLock(m.Lock)
	}
	if !f.switchIn(rackHostPort, rackFrame(&f.cfg, src, dst, &m)) {
		tr.lost = "the switch is down"
	}
	return tr
}

// acquire is a client's acquire of lock id (direct: straight to its server's process).
func (f *scriptRack) acquire(id uint32, txn uint64, lease time.Duration, direct bool) error {
	n, dst, ok := f.lockAddr(id)
	if !ok {
		return fmt.Errorf("lock %d has no server (name it with server=)", id)
	}
	f.ts++
	m := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: id, Txn: txn, Timestamp: f.ts,
		LeaseMicros: uint32(lease / time.Microsecond)}
	tr := f.request(n, dst, rackClient, m, direct)
	held := false
	for _, g := range f.grants[id] {
		held = held || (g.txn == txn && g.live(f.now))
	}
	var sum string
	switch {
	case held || tr.answered:
	case tr.lost != "":
		sum = fmt.Sprintf("  acquire of lock %d txn %d lost: %s", id, txn, tr.lost)
	case tr.dropped:
		sum = fmt.Sprintf("  acquire of lock %d txn %d dropped by %s: switch-resident", id, txn, tr.reached.name)
	case tr.overflow:
	case tr.reached != nil && !tr.reached.cut:
		sum = fmt.Sprintf("  lock %d txn %d waits at %s", id, txn, tr.reached.name)
	case tr.reached != nil:
	case tr.switchLck:
		sum = fmt.Sprintf("  lock %d txn %d waits in the switch", id, txn)
	default:
		sum = fmt.Sprintf("  acquire of lock %d txn %d lost: server %d unreachable", id, txn, n)
	}
	f.print(tr, sum, false)
	return nil
}

// release is a client's release of lock id (direct: straight to its server's process).
func (f *scriptRack) release(id uint32, txn uint64, direct bool) error {
	var g *heldGrant
	for _, x := range f.grants[id] {
		if x.txn == txn && !x.ended {
			g = x
		}
	}
	if g == nil {
		f.out("  lock %d txn %d holds nothing", id, txn)
		return nil
	}
	if !g.live(f.now) {
		f.out("  lock %d txn %d: its lease ended at %s", id, txn, f.ms(g.until))
		g.ended = true
		return nil
	}
	// The client no longer uses the lock once it sends the release.
	g.ended = true
	n, dst, ok := f.lockAddr(id)
	if !ok {
		return fmt.Errorf("lock %d has no server (name it with server=)", id)
	}
	f.ts++
	m := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: id, Txn: txn, Token: g.token, Timestamp: f.ts}
	tr := f.request(n, dst, rackClient, m, direct)
	var sum string
	switch {
	case tr.lost != "":
		sum = fmt.Sprintf("  release of lock %d txn %d lost: %s", id, txn, tr.lost)
	case tr.rejected:
	case tr.reached != nil && tr.reached.cut && !direct:
	case tr.reached != nil:
		sum = fmt.Sprintf("  lock %d txn %d released at %s", id, txn, tr.reached.name)
	case tr.switchLck:
		sum = fmt.Sprintf("  lock %d txn %d released at the switch", id, txn)
	default:
		sum = fmt.Sprintf("  release of lock %d txn %d lost: server %d unreachable", id, txn, n)
	}
	f.print(tr, sum, true)
	return nil
}

// traffic sends n more requests of lock id: its switch entry's counter goes up by n (the load
// the allocator reads), or, for a lock its server owns, n real requests reach the server: depth
// acquires (the first declaring declared), whose holder renews its lease (lease probes) until
// they add up to n with the releases that end them one after the other.
func (f *scriptRack) traffic(id uint32, n, depth, declared uint64) error {
	if e, ok := f.sw.switchLock(id); ok && f.sw.running() {
		t, err := f.sw.dp.Table(dataplane.TableLock)
		if err != nil {
			return err
		}
		key := engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyLock, Value: e.Match()}}}
		cur, err := t.Lookup(key)
		if err != nil {
			return err
		}
		return t.SetDirectCounter(key, cur.Packets+n, cur.Bytes)
	}
	srv, dst, ok := f.lockAddr(id)
	if !ok {
		return fmt.Errorf("lock %d: no server to count its traffic", id)
	}
	depth = max(depth, 1)
	if n < 2*depth {
		return fmt.Errorf("traffic lock=%d: n=%d is below two requests (an acquire, a release) per depth %d", id, n, depth)
	}
	base := trafficTxn + f.ts
	for k := range depth {
		f.ts++
		m := wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: id, Txn: base + k, Timestamp: f.ts}
		if k == 0 {
			m.Slots = uint16(declared)
		}
		tr := f.request(srv, dst, rackTraffic, m, false)
		f.print(tr, "", false)
		if tr.reached == nil || tr.reached.cut {
			return fmt.Errorf("lock %d: no server to count its traffic", id)
		}
	}
	holder := func(txn uint64) (*heldGrant, error) {
		for _, g := range f.grants[id] {
			if g.txn == txn && g.live(f.now) {
				return g, nil
			}
		}
		return nil, fmt.Errorf("traffic lock=%d: txn %d not granted (the lock is held or switch-resident)", id, txn)
	}
	g, err := holder(base)
	if err != nil {
		return err
	}
	for range n - 2*depth {
		f.print(f.request(srv, dst, rackTraffic, wire.Fields{Op: wire.OpLeaseProbe, Mode: wire.Exclusive, Lock: id,
			Txn: base, Token: g.token}, false), "", false)
	}
	for k := range depth {
		g, err := holder(base + k)
		if err != nil {
			return err
		}
		g.ended = true
		f.ts++
		f.print(f.request(srv, dst, rackTraffic, wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: id,
			Txn: base + k, Token: g.token, Timestamp: f.ts}, false), "", false)
	}
	return nil
}

// answering effects

// answer carries out e in the rack and returns its Result, how long after now the shell would
// deliver it (the timeout, for a request nobody answers) and a description for the output.
func (f *scriptRack) answer(from string, e Effect) (Result, time.Duration, string) {
	if _, ok := e.(ServerAdmin); !ok && from != f.primary {
		return Result{ID: e.EffectID(), Err: errNotPrimary}, 0, "error: " + errNotPrimary.Error()
	}
	unavailable := func(id uint64) (Result, time.Duration, string) {
		return Result{ID: id, Err: errUnavailable}, 0, "error: " + errUnavailable.Error()
	}
	timeout := func(id uint64, desc string) (Result, time.Duration, string) {
		return Result{ID: id, Err: ErrTimeout}, f.timeout, desc
	}
	switch e := e.(type) {
	case Write:
		if err := f.sw.write(e); err != nil {
			return Result{ID: e.ID, Err: err}, 0, "error: " + err.Error()
		}
		return Result{ID: e.ID}, 0, "ok"
	case PushPipeline:
		if f.sw.down {
			return unavailable(e.ID)
		}
		if err := f.sw.load(); err != nil {
			return Result{ID: e.ID, Err: err}, 0, "error: " + err.Error()
		}
		return Result{ID: e.ID}, 0, "ok"
	case GetPipeline:
		if f.sw.down {
			return unavailable(e.ID)
		}
		if f.sw.dp != nil {
			return Result{ID: e.ID, HasPipeline: true}, 0, "pipeline installed"
		}
		return Result{ID: e.ID}, 0, "no pipeline"
	case ReadLocks:
		if !f.sw.running() {
			return unavailable(e.ID)
		}
		res := f.sw.readLocks(e.ID)
		var desc []string
		for _, le := range res.Locks {
			desc = append(desc, fmt.Sprintf("[%s hits %d]", Entity{Lock: &le}, res.Hits[le.Lock]))
		}
		if len(desc) == 0 {
			return res, 0, "no entries"
		}
		return res, 0, strings.Join(desc, " ")
	case SwitchAdmin:
		rep, desc, ok := f.switchAdmin(e.Req)
		if !ok {
			return timeout(e.ID, "timeout")
		}
		return Result{ID: e.ID, Admin: rep}, 0, desc
	case ServerAdmin:
		p, rep, body, ok := f.serverAdmin(e.Server, e.Msg)
		if !ok {
			return timeout(e.ID, "timeout")
		}
		desc := f.describeAnswer(p, rep, body)
		if p.drop > 0 {
			p.drop--
			return timeout(e.ID, "answer lost: "+desc)
		}
		return Result{ID: e.ID, Server: rep, Body: body}, 0, desc
	}
	return Result{ID: e.EffectID(), Err: fmt.Errorf("unknown effect %T", e)}, 0, "unknown effect"
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// switchAdmin sends an admin request through the switch's CPU port and returns its reply and a
// description; ok is false when no reply comes (the switch is down, has no pipeline or drops the
// packet).
func (f *scriptRack) switchAdmin(q dataplane.AdminRequest) (dataplane.AdminReply, string, bool) {
	rep, outs, ok, err := f.sw.admin(q)
	if err != nil {
		f.bad++
		f.out("  VIOLATION %v", err)
	}
	if !ok {
		f.switchOut(outs, true)
		return rep, "", false
	}
	desc := f.describeAdmin(q, rep)
	if q.Op == wire.AdminSwitchForceRelease && rep.Result == dataplane.AdminOK {
		for _, g := range f.grants[q.Lock] {
			if g.txn == q.Txn && g.token == q.Token && g.by == "switch" {
				g.ended = true
			}
		}
		f.out("  the switch force-releases lock %d txn %d", q.Lock, q.Txn)
	}
	// A force-release or a set-buffered sends packets: the holder's reject, the next grant, a
	// queue-empty.
	f.switchOut(outs, true)
	return rep, desc, true
}

// describeAdmin describes a switch admin reply.
func (f *scriptRack) describeAdmin(q dataplane.AdminRequest, rep dataplane.AdminReply) string {
	switch rep.Result {
	case dataplane.AdminOK:
	case dataplane.AdminNoLock:
		return "no such lock"
	case dataplane.AdminNotHeld:
		return "not held"
	default:
		return "bad request"
	}
	switch q.Op {
	case wire.AdminSwitchGetCookie:
		return fmt.Sprintf("cookie %#x", rep.Value)
	case wire.AdminSwitchSetCookie, wire.AdminSwitchForceRelease, wire.AdminSwitchSetBuffered:
		return "ok"
	case wire.AdminSwitchProbe:
		desc := fmt.Sprintf("counter %d holders %d waiting %d used %d buffered %d", rep.Value, rep.Holders,
			rep.Waiting[0], rep.Used[0], rep.Buffered)
		switch {
		case rep.Live && rep.Token != 0:
			at := f.now.Add(-time.Duration(rep.Now-rep.GrantTime) * time.Microsecond)
			desc += fmt.Sprintf(" slot txn %d token %d granted %s lease %v", rep.Txn, rep.Token, f.ms(at),
				time.Duration(rep.Lease)*time.Microsecond)
		case rep.Live:
			desc += fmt.Sprintf(" slot txn %d waiting", rep.Txn)
		}
		return desc
	}
	return fmt.Sprintf("counter %d", rep.Value)
}

// serverAdmin sends a controller's admin request to server n's address through the switch (from
// the controllers' port) and returns the process that answered and its answer; ok is false when
// none comes.
func (f *scriptRack) serverAdmin(n uint16, m wire.Fields) (p *rackProc, rep wire.Fields, body []byte, ok bool) {
	dst, found := f.serverAddr(n)
	if !found || !f.sw.running() {
		return nil, rep, nil, false
	}
	f.admin.txn, f.admin.got, f.admin.body = m.Txn, false, nil
	epochs := map[*rackProc]uint64{}
	for _, q := range f.procs {
		epochs[q] = q.core.Epoch()
	}
	defer func() { f.admin.txn = 0 }()
	outs, err := f.sw.process(rackCtlPort, rackFrame(&f.cfg, rackCtl, dst, &m))
	if err != nil {
		f.bad++
		f.out("  VIOLATION %v", err)
		return nil, rep, nil, false
	}
	for _, o := range outs {
		q := f.procAt(o.Port)
		if q == nil || q.cut {
			continue
		}
		var fr udpframe.Frame
		var mm wire.Fields
		if !parseFrame(o.Data, &fr, &mm) {
			continue
		}
		f.handle(q, fr.Payload, fr.Src)
		if f.admin.got && p == nil {
			p = q
		}
	}
	if p == nil {
		return nil, rep, nil, false
	}
	if m.Status == wire.AdminTakeover && f.admin.msg.Op == wire.OpAdmin && p.core.Epoch() > epochs[p] {
		p.tookOver = p.tookOver || p.standby
		line := fmt.Sprintf("  %s takes over with epoch %d", p.name, f.admin.msg.Token)
		if ge := p.core.GraceEnd(); ge > f.mono() {
			line += ", grants nothing until " + f.ms(t0.Add(time.Duration(ge)))
		}
		f.out("%s", line)
	}
	return p, f.admin.msg, f.admin.body, true
}

// describeAnswer describes a server's admin answer.
func (f *scriptRack) describeAnswer(p *rackProc, m wire.Fields, body []byte) string {
	if m.Op == wire.OpReject {
		if m.Status == wire.StatusNotOwner {
			return fmt.Sprintf("%s rejects: not-owner (term %d < %d)", p.name, m.Timestamp, p.core.Term())
		}
		return fmt.Sprintf("%s rejects: %s", p.name, m.Status)
	}
	switch m.Status {
	case wire.AdminPing:
		desc := fmt.Sprintf("epoch %d term %d instance %d", m.Token, m.Timestamp, m.LeaseMicros)
		if m.Priority == wire.PingServing {
			desc += " serving"
		}
		return desc
	case wire.AdminTokenFloor:
		return fmt.Sprintf("floor %d", m.Token)
	case wire.AdminYield, wire.AdminAdopt:
		s := fmt.Sprintf("last token %d own %d q2 %d", m.Token, m.LeaseMicros, m.Slots)
		if m.Priority == 1 {
			s += " resident"
		}
		return s
	case wire.AdminStats:
		recs, err := wire.ParseLockStats(nil, body, int(m.Slots))
		if err != nil {
			return "stats: " + err.Error()
		}
		desc := fmt.Sprintf("%d locks over %v", len(recs), time.Duration(m.Token))
		for _, s := range recs {
			desc += fmt.Sprintf(" [lock %d requests %d overflows %d depth %d declared %d]", s.Lock, s.Requests,
				s.Overflows, s.Depth, s.Declared)
		}
		return desc
	case wire.AdminTakeover:
		return fmt.Sprintf("epoch %d", m.Token)
	case wire.AdminResidents:
		var ids []uint32
		for i := 0; i+4 <= len(body) && len(ids) < int(m.Slots); i += 4 {
			ids = append(ids, uint32(body[i])<<24|uint32(body[i+1])<<16|uint32(body[i+2])<<8|uint32(body[i+3]))
		}
		return fmt.Sprintf("resident %v", ids)
	}
	return "bad request"
}

// scripted failures

// restartSwitch restarts the switch (coreSwitch.restart).
func (f *scriptRack) restartSwitch(keep bool) { f.sw.restart(keep) }

// restartProc starts a new instance of p's process: the next epoch (its state file's), term 0,
// its locks' state and resident marks gone, a grace of max-lease.
func (f *scriptRack) restartProc(p *rackProc) error {
	p.instance += 1000
	return f.startProc(p, p.core.Epoch()+1, f.cfg.Rack.MaxLease)
}

// setEpoch makes p a process that started at epoch e (its state file said so).
func (f *scriptRack) setEpoch(p *rackProc, e uint64) error {
	return f.startProc(p, e, 0)
}

// raiseTerm has p see controller term t, as a ping of an earlier primary did.
func (f *scriptRack) raiseTerm(p *rackProc, t uint64) {
	addr, _ := f.serverAddr(p.num)
	m := wire.Fields{Op: wire.OpAdmin, Status: wire.AdminPing, Txn: math.MaxUint64, Timestamp: t}
	f.handle(p, rackFrame(&f.cfg, rackCtl, addr, &m)[udpframe.HeaderLen:], rackCtl)
}

// describe prints the rack's state: the switch's entries and what a probe of each says, the
// servers, the live grants. It leaves the switch's counters as they were.
func (f *scriptRack) describe(b *strings.Builder) {
	switch {
	case f.sw.down:
		b.WriteString("switch: down\n")
	case f.sw.dp == nil:
		b.WriteString("switch: no pipeline\n")
	default:
		locks, hits := f.sw.lockTable()
		save := f.out
		f.out = func(string, ...any) {}
		cookie, _, _ := f.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchGetCookie})
		fmt.Fprintf(b, "switch: cookie %#x, %d entries\n", cookie.Value, len(locks))
		t, _ := f.sw.dp.Table(dataplane.TableLock)
		for _, e := range locks {
			rep, _, ok := f.switchAdmin(dataplane.AdminRequest{Op: wire.AdminSwitchProbe, Lock: e.Lock})
			key := engine.Entry{Match: []engine.FieldMatch{{Name: dataplane.KeyLock, Value: e.Match()}}}
			if cur, err := t.Lookup(key); err == nil {
				_ = t.SetDirectCounter(key, hits[e.Lock], cur.Bytes)
			}
			fmt.Fprintf(b, "  %s hits %d: counter %d", Entity{Lock: &e}, hits[e.Lock], rep.Value)
			if ok && rep.Live && rep.Token != 0 {
				fmt.Fprintf(b, " holder txn %d", rep.Txn)
			}
			if w := int(rep.Used[0]) - int(rep.Holders); w > 0 {
				fmt.Fprintf(b, " waiters %d", w)
			}
			if rep.Buffered > 0 {
				fmt.Fprintf(b, " buffered %d", rep.Buffered)
			}
			b.WriteString("\n")
		}
		f.out = save
	}
	for _, p := range f.procs {
		c := p.core
		fmt.Fprintf(b, "%s port %d: epoch %d term %d last token %d", p.name, p.port, c.Epoch(), c.Term(),
			c.ShardOf(0).Core().LastToken())
		standby := p.standby && !p.tookOver
		switch {
		case standby:
			b.WriteString(" standby")
		case p.cut:
			b.WriteString(" cut off")
		}
		if ge := c.GraceEnd(); ge > f.mono() {
			fmt.Fprintf(b, " grace until %s", f.ms(t0.Add(time.Duration(ge))))
		}
		if f.cfg.ServerLease > 0 && !standby && c.Holding() {
			b.WriteString(" controller lease ran out")
		}
		for _, id := range sortedKeys(p.locks) {
			var parts []string
			if c.ShardOf(id).Core().Resident(id) {
				parts = append(parts, "resident")
			}
			if info, ok := c.Inspect(id); ok {
				for _, h := range info.Holders {
					if h.Txn < trafficTxn {
						parts = append(parts, fmt.Sprintf("holder txn %d", h.Txn))
					}
				}
				if len(info.Waiters) > 0 {
					parts = append(parts, fmt.Sprintf("waiters %d", len(info.Waiters)))
				}
				if len(info.Buffered) > 0 {
					parts = append(parts, fmt.Sprintf("q2 %d", len(info.Buffered)))
				}
			}
			if len(parts) > 0 {
				fmt.Fprintf(b, "; lock %d %s", id, strings.Join(parts, " "))
			}
		}
		b.WriteString("\n")
	}
	for _, id := range sortedKeys(f.grants) {
		for _, g := range f.grants[id] {
			if g.live(f.now) && g.txn < trafficTxn {
				fmt.Fprintf(b, "held: lock %d txn %d token %d by %s until %s\n", id, g.txn, g.token, g.by, f.ms(g.until))
			}
		}
	}
	if f.bad > 0 {
		fmt.Fprintf(b, "violations: %d\n", f.bad)
	}
}
