package dpengine

import (
	"encoding/binary"
	"flag"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/lockcore"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The differential test: seeded random request sequences run through p4/netlock.p4 on the engine
// (Tofino-constraint mode), with a lockcore.Core as the lock server that buffers the overflow
// (q2), and through an oracle built from lockcore; the answers to the clients (grants, rejects,
// release and probe answers) and their order must be identical.
//
// The oracle is a lockcore.Core for the lock semantics plus the switch's explicit rules where
// they differ from one unbounded lockcore queue (docs/dataplane.md "The switch and lockcore"):
//
//   - diffRules.levels: priority 0 is one queue, every other priority the other (FIFO);
//   - capacity: each lock has a region of a fixed size per level; a slot is freed only when the
//     head of its level moves past it, so a shared holder that releases out of order keeps its
//     slot until the ones before it are gone (the model below keeps the slots in order);
//   - overflow: an acquire finding no free slot at its level, or requests buffered at the server,
//     goes to the server's q2 (a second lockcore.Core, the real buffer code), which pushes
//     requests back when the switch queue has drained (queue-empty: each level's region size,
//     level 0's in slots, level 1's in lease);
//     the count of buffered requests is the overflows sent less the push-backs received (with a
//     request, or without one for an overflow q2 did not buffer); a try acquire that would
//     overflow is refused would-block;
//   - tokens are compared by grant order (the switch's are (seq << slot bits) | slot);
//   - duplicates: a copy of an acquire (a retransmission with the retry flag, or an exact copy
//     of the datagram) is recognised while its request holds or waits in the switch queue or is
//     buffered at the server; the generator sends no other duplicates, no duplicate releases, and
//     no copies of requests that ended (the switch ignores those, lockcore only with the flag);
//   - quotas: a tenant meter with no refill admits as many acquires as lockcore's MaxRate within
//     one window; configurations with quotas have regions large enough never to overflow (the
//     switch meters an acquire before it overflows, lockcore's q2 does not), and no retries.
//
// Re-run one sequence with -seed=N (and -run to pick the configuration); the seed of a failing
// sequence is printed.

var (
	seedFlag  = flag.Uint64("seed", 0, "run only this seed of the differential test")
	debugFlag = flag.Bool("dpdebug", false, "log the switch's per-lock registers after every event")
)

// switchState renders the per-lock registers of locks 0..n-1.
func switchState(sw *Switch, n int) string {
	var b strings.Builder
	rd := func(name string, i int) uint64 {
		r, err := sw.Register(name)
		if err != nil {
			return 0
		}
		v, _ := r.Read(i)
		var x uint64
		for _, c := range v {
			x = x<<8 | uint64(c)
		}
		return x
	}
	for l := 0; l < n; l++ {
		st, w, q := rd(dataplane.RegisterState, l), rd(dataplane.RegisterWaitHigh, l)<<32|rd(dataplane.RegisterWait, l), rd(dataplane.RegisterQueue, l)
		if sw.Program.Name == dataplane.TNA.Name {
			st, q = tnaState(st), tnaQueue(sw, l)
		}
		fmt.Fprintf(&b, "[lock %d: hold %d x%d wx0 %d wx %d | w0 %d w1 %d | used %d/%d buf %d done %d |", l,
			st&0x7fff, st>>15&1, st>>16&0xffff, st>>32&0xffff, w&0xffffffff, w>>32, q&0xffff, q>>16&0xffff, q>>32&0xffff, q>>48)
		for lv := 0; lv < dataplane.Levels; lv++ {
			p := fmt.Sprintf("NetlockIngress.levels.level%d.", lv)
			fmt.Fprintf(&b, " L%d h%d t%d g%d", lv, rd(p+"head", l), rd(p+"tail", l), rd(p+"gnext", l))
		}
		b.WriteString("] ")
	}
	return b.String()
}

// diffRules configures one family of sequences.
type diffRules struct {
	name       string
	locks      int
	sizes      [dataplane.Levels]uint16
	events     int
	quotaBurst int // > 0: tenant 1 is limited to this many acquires
	tryPct     int
	retryPct   int
	wdPct      int
	probePct   int
	bogusPct   int
	relPct     int
}

var diffConfigs = []diffRules{
	{name: "roomy", locks: 4, sizes: [dataplane.Levels]uint16{16, 16}, events: 80, tryPct: 10, retryPct: 8, wdPct: 6, probePct: 5, bogusPct: 4, relPct: 40},
	{name: "overflow", locks: 3, sizes: [dataplane.Levels]uint16{2, 2}, events: 80, tryPct: 6, retryPct: 6, wdPct: 5, probePct: 3, bogusPct: 3, relPct: 40},
	{name: "tiny", locks: 2, sizes: [dataplane.Levels]uint16{1, 1}, events: 60, tryPct: 5, retryPct: 5, wdPct: 5, probePct: 3, bogusPct: 2, relPct: 42},
	{name: "quota", locks: 4, sizes: [dataplane.Levels]uint16{32, 32}, events: 60, quotaBurst: 6, tryPct: 10, wdPct: 5, probePct: 5, bogusPct: 3, relPct: 40},
}

const (
	diffLease    = 10 * time.Second
	diffMaxLease = 60 * time.Second
	diffQ2Server = 1
)

var diffSwitchAddr = netip.AddrPortFrom(netip.MustParseAddr("10.0.0.1"), wire.Port)

// msg is a normalized answer to a client: the token replaced by the grant's ordinal per lock.
type msg struct {
	to netip.AddrPort
	f  wire.Fields
}

func (m msg) String() string {
	return fmt.Sprintf("to %s: %s ts=%d", m.to, m.f.String(), m.f.Timestamp)
}

// tokens records each side's grants per lock, to compare tokens by grant order.
type tokens struct {
	ord  map[uint32]map[uint64]uint64 // lock -> token -> ordinal
	next map[uint32]uint64
	last map[uint32]uint64 // the largest token per lock (the switch's must grow)
}

func newTokens() *tokens {
	return &tokens{ord: map[uint32]map[uint64]uint64{}, next: map[uint32]uint64{}, last: map[uint32]uint64{}}
}

func (t *tokens) grant(lock uint32, tok uint64) (ord uint64, fresh bool) {
	m := t.ord[lock]
	if m == nil {
		m = map[uint64]uint64{}
		t.ord[lock] = m
	}
	if o, ok := m[tok]; ok {
		return o, false
	}
	t.next[lock]++
	m[tok] = t.next[lock]
	return t.next[lock], true
}

// canon rewrites a message's token into "1<<40 + ordinal"; a token never granted (echoed by a
// reject of a bogus release: each side is sent a wrong token of its own) becomes 1<<41.
func (t *tokens) canon(m *msg) {
	if o, ok := t.ord[m.f.Lock][m.f.Token]; ok {
		m.f.Token = 1<<40 + o
	} else if m.f.Token != 0 {
		m.f.Token = 1 << 41
	}
}

// ---- the system under test: the switch and a lockcore q2 ----

type sut struct {
	r      *rig
	q2     *lockcore.Core
	toks   *tokens
	out    []msg    // answers to clients
	srv    []msg    // control messages to the server (overflow, queue-empty)
	pins   [][]byte // admin replies
	effs   []lockcore.Effect
	failed string
}

// inject sends one client datagram into the switch, runs the server's answers (push-backs)
// back into it, and records the answers to clients and the messages to the server.
func (s *sut) inject(c int, f *wire.Fields) {
	s.run(func() []out { return s.r.send(c, clientAddr(c), serverAddr(diffQ2Server), f, nil) })
}

// admin sends an admin request from the controller, as inject sends a client datagram; the
// replies are recorded too.
func (s *sut) admin(req *dataplane.AdminRequest) {
	s.run(func() []out {
		outs, pins := s.r.admin(req)
		s.pins = append(s.pins, pins...)
		return outs
	})
}

// run runs first (a packet into the switch) and then the server's push-backs.
func (s *sut) run(first func() []out) {
	type pkt struct {
		port     int
		src, dst netip.AddrPort
		f        wire.Fields
		key      *uint64
	}
	key := uint64(rigKey)
	var q []pkt
	for n := 0; n == 0 || len(q) > 0; n++ {
		var outs []out
		if n == 0 {
			outs = first()
		} else {
			p := q[0]
			q = q[1:]
			outs = s.r.send(p.port, p.src, p.dst, &p.f, p.key)
		}
		for _, o := range outs {
			if o.Port == 100+diffQ2Server {
				if !o.HasKey || o.Key != rigKey || !o.F.Op.IsControl() {
					s.failed = fmt.Sprintf("to the server without the rack key: %s", o)
					return
				}
				s.srv = append(s.srv, msg{to: o.Frame.Dst, f: o.F})
				req := lockcore.Request{Fields: o.F, From: o.Frame.Src}
				s.effs = s.q2.Step(0, &req, s.effs[:0])
				for _, e := range s.effs {
					if e.Msg.Op == wire.OpPushBack {
						q = append(q, pkt{port: 100 + diffQ2Server, src: serverAddr(diffQ2Server), dst: e.To, f: e.Msg, key: &key})
					} else {
						s.out = append(s.out, msg{to: e.To, f: e.Msg})
					}
				}
				continue
			}
			if o.Frame.Src != serverAddr(diffQ2Server) {
				s.failed = fmt.Sprintf("answer not from the lock's server: %s", o)
				return
			}
			// The next hop is the route of the answer's destination (the rig routes client c
			// to port c): the destination address alone would not show a lookup on another key.
			if port, ok := clientPort(o.Frame.Dst.Addr()); !ok || o.Port != port || o.Frame.DstMAC != hostMAC(o.Frame.Dst.Addr()) {
				s.failed = fmt.Sprintf("answer not on its destination's route (port %d, MAC %v): %s", port, hostMAC(o.Frame.Dst.Addr()), o)
				return
			}
			s.out = append(s.out, msg{to: o.Frame.Dst, f: o.F})
		}
	}
}

// ---- the oracle: lockcore plus the switch's rules ----

type oslot struct {
	txn  uint64
	done bool
}

type oracle struct {
	rules  diffRules
	q1, q2 *lockcore.Core
	slots  map[uint32]*[dataplane.Levels][]oslot
	buf    map[uint32]int
	out    []msg
	effs   []lockcore.Effect
}

func (o *oracle) lockSlots(lock uint32) *[dataplane.Levels][]oslot {
	s := o.slots[lock]
	if s == nil {
		s = new([dataplane.Levels][]oslot)
		o.slots[lock] = s
	}
	return s
}

func level(prio uint8) int {
	if prio == 0 {
		return 0
	}
	return 1
}

func (o *oracle) empty(lock uint32) bool {
	s := o.lockSlots(lock)
	return len(s[0])+len(s[1]) == 0
}

func (o *oracle) record(effs []lockcore.Effect) {
	for _, e := range effs {
		o.out = append(o.out, msg{to: e.To, f: e.Msg})
	}
}

// queueEmpty asks q2 to push back into the drained switch queue, and takes the push-backs.
func (o *oracle) queueEmpty(lock uint32) {
	req := lockcore.Request{Fields: wire.Fields{Op: wire.OpQueueEmpty, Lock: lock, Slots: o.rules.sizes[0],
		LeaseMicros: uint32(o.rules.sizes[1])}, From: diffSwitchAddr}
	pbs := slices.Clone(o.q2.Step(0, &req, nil))
	for _, pb := range pbs {
		if pb.Msg.Op != wire.OpPushBack {
			o.out = append(o.out, msg{to: pb.To, f: pb.Msg})
			continue
		}
		o.pushBack(pb.Msg)
	}
}

// overflow sends f to q2 and counts it as buffered until a push-back comes back for it: one
// with a request later, or one without a request at once if q2 did not buffer it.
func (o *oracle) overflow(f *wire.Fields, client netip.AddrPort) {
	of := *f
	of.Op, of.Flags, of.Client, of.Token = wire.OpOverflow, wire.FlagForwarded, client, 0
	req := lockcore.Request{Fields: of, From: diffSwitchAddr}
	o.buf[f.Lock]++
	for _, e := range o.q2.Step(0, &req, o.effs[:0]) {
		if e.Msg.Op == wire.OpPushBack && e.Msg.Txn == 0 {
			if o.buf[f.Lock] > 0 {
				o.buf[f.Lock]--
			}
			continue
		}
		o.out = append(o.out, msg{to: e.To, f: e.Msg})
	}
}

func (o *oracle) pushBack(f wire.Fields) {
	s := o.lockSlots(f.Lock)
	lv := level(f.Priority)
	if len(s[lv]) >= int(o.rules.sizes[lv]) {
		// No room: back to q2 (the push-back and the new overflow cancel out in the count).
		if o.buf[f.Lock] > 0 {
			o.buf[f.Lock]--
		}
		o.overflow(&f, f.Client)
		return
	}
	if o.buf[f.Lock] > 0 {
		o.buf[f.Lock]--
	}
	s[lv] = append(s[lv], oslot{txn: f.Txn})
	f.Op = wire.OpAcquire
	req := lockcore.Request{Fields: f, From: diffSwitchAddr}
	o.record(o.q1.Step(0, &req, o.effs[:0]))
}

// inQ1 reports whether txn holds or waits for lock in q1.
func (o *oracle) inQ1(lock uint32, txn uint64) bool {
	info, _ := o.q1.Inspect(lock)
	for _, e := range append(info.Holders, info.Waiters...) {
		if e.Txn == txn {
			return true
		}
	}
	return false
}

func (o *oracle) acquire(f *wire.Fields, client netip.AddrPort) {
	s := o.lockSlots(f.Lock)
	lv := level(f.Priority)
	retry := f.Flags&wire.FlagRetry != 0
	full := o.buf[f.Lock] > 0 || len(s[lv]) >= int(o.rules.sizes[lv])
	req := lockcore.Request{Fields: *f, From: client}
	switch {
	case f.Txn == 0:
		o.record(o.q1.Step(0, &req, o.effs[:0]))
	case o.inQ1(f.Lock, f.Txn):
		// A copy (retransmitted or duplicated) of a request that holds or waits.
		o.record(o.q1.Step(0, &req, o.effs[:0]))
	case f.Flags&wire.FlagTry != 0 && full && !retry:
		o.out = append(o.out, msg{to: client, f: wire.Fields{Op: wire.OpReject, Mode: f.Mode, Status: wire.StatusWouldBlock,
			Priority: f.Priority, Tenant: f.Tenant, Lock: f.Lock, Txn: f.Txn, Token: f.Token, Timestamp: f.Timestamp}})
	case full:
		o.overflow(f, client)
	default:
		effs := o.q1.Step(0, &req, o.effs[:0])
		queued := len(effs) == 0 || effs[0].Msg.Op == wire.OpGrant
		if queued {
			s[lv] = append(s[lv], oslot{txn: f.Txn})
		}
		o.record(effs)
	}
}

// release runs a release (token != 0) or withdrawal (token 0) and frees slots.
func (o *oracle) release(f *wire.Fields, client netip.AddrPort, lv int) {
	req := lockcore.Request{Fields: *f, From: client}
	effs := o.q1.Step(0, &req, o.effs[:0])
	ok := len(effs) > 0 && effs[0].Msg.Op == wire.OpRelease
	o.record(effs)
	if !ok {
		return
	}
	s := o.lockSlots(f.Lock)
	for i := range s[lv] {
		if s[lv][i].txn == f.Txn && !s[lv][i].done {
			s[lv][i].done = true
			break
		}
	}
	for len(s[lv]) > 0 && s[lv][0].done {
		s[lv] = s[lv][1:]
	}
	if o.empty(f.Lock) && o.buf[f.Lock] > 0 {
		o.queueEmpty(f.Lock)
	}
}

// ---- the generator ----

type gtxn struct {
	lock   uint32
	txn    uint64
	client int
	f      wire.Fields // the acquire
	swTok  uint64      // the switch's token, once granted
	orTok  uint64      // the oracle's token
	ended  bool
}

type diffRun struct {
	t      tb
	rules  diffRules
	rng    *rand.Rand
	sw     *sut
	sw2    *sut // the other program, which must answer alike (TestProgramsAgree), or nil
	or     *oracle
	otoks  *tokens
	txns   []*gtxn
	byKey  map[[2]uint64]*gtxn
	nextTx uint64
	cells  map[uint32]bool // the cells of the table of requests seen the run's txns use
	ts     uint64
	log    []string
}

func (d *diffRun) fail(format string, args ...any) {
	d.t.Helper()
	tail := d.log
	if len(tail) > 40 && !*debugFlag {
		tail = tail[len(tail)-40:]
	}
	d.t.Fatalf("%s\nlast events:\n%s", fmt.Sprintf(format, args...), strings.Join(tail, "\n"))
}

// step runs one client datagram through both sides and compares the answers.
func (d *diffRun) step(c int, sf, of wire.Fields, what string) {
	d.t.Helper()
	d.sw.out, d.sw.srv, d.or.out = d.sw.out[:0], d.sw.srv[:0], d.or.out[:0]
	d.sw.r.label = inputKind(what, &sf)
	if d.sw2 != nil {
		d.sw2.r.label = d.sw.r.label
	}
	d.sw.inject(c, &sf)
	if d.sw.failed != "" {
		d.fail("%s: %s", what, d.sw.failed)
	}
	if d.sw2 != nil {
		d.sw2.out, d.sw2.srv = d.sw2.out[:0], d.sw2.srv[:0]
		d.sw2.inject(c, &sf)
		d.agree(what)
	}
	switch of.Op {
	case wire.OpAcquire:
		d.or.acquire(&of, clientAddr(c))
	case wire.OpRelease:
		lv := level(of.Priority)
		d.or.release(&of, clientAddr(c), lv)
	default:
		req := lockcore.Request{Fields: of, From: clientAddr(c)}
		d.or.record(d.or.q1.Step(0, &req, d.or.effs[:0]))
	}
	// Learn the tokens of the grants, then compare.
	for i := range d.sw.out {
		m := &d.sw.out[i]
		if m.f.Op == wire.OpGrant {
			if _, fresh := d.sw.toks.grant(m.f.Lock, m.f.Token); fresh {
				if m.f.Token <= d.sw.toks.last[m.f.Lock] {
					d.fail("%s: switch token %d of lock %d not above %d", what, m.f.Token, m.f.Lock, d.sw.toks.last[m.f.Lock])
				}
				d.sw.toks.last[m.f.Lock] = m.f.Token
			}
			if g := d.byKey[[2]uint64{uint64(m.f.Lock), m.f.Txn}]; g != nil {
				g.swTok = m.f.Token
			}
		}
	}
	for i := range d.or.out {
		m := &d.or.out[i]
		if m.f.Op == wire.OpGrant {
			d.otoks.grant(m.f.Lock, m.f.Token)
			if g := d.byKey[[2]uint64{uint64(m.f.Lock), m.f.Txn}]; g != nil {
				g.orTok = m.f.Token
			}
		}
	}
	got := slices.Clone(d.sw.out)
	want := slices.Clone(d.or.out)
	for i := range got {
		d.sw.toks.canon(&got[i])
	}
	for i := range want {
		d.otoks.canon(&want[i])
	}
	d.log = append(d.log, what)
	if *debugFlag {
		d.log = append(d.log, "    state: "+switchState(d.sw.r.sw, d.rules.locks))
	}
	for _, m := range want {
		d.log = append(d.log, "    "+m.String())
	}
	if !slices.Equal(got, want) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: answers differ\nswitch:\n", what)
		for _, m := range got {
			fmt.Fprintf(&b, "    %s\n", m)
		}
		b.WriteString("lockcore oracle:\n")
		for _, m := range want {
			fmt.Fprintf(&b, "    %s\n", m)
		}
		d.fail("%s", b.String())
	}
}

// endedCell is the cell of the table of requests seen (ended) of lock's txn: both programs
// index it by the CRC-32 of (lock, txn) modulo its size (indexCollisions).
func endedCell(lock uint32, txn uint64, cells int) uint32 {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], lock)
	binary.BigEndian.PutUint64(b[4:], txn)
	return crc32.ChecksumIEEE(b[:]) % uint32(cells)
}

func (d *diffRun) pick(pred func(*gtxn) bool) *gtxn {
	var c []*gtxn
	for _, g := range d.txns {
		if !g.ended && pred(g) {
			c = append(c, g)
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[d.rng.IntN(len(c))]
}

func (d *diffRun) holding(g *gtxn) bool { return g.orTok != 0 }

func (d *diffRun) waitingQ1(g *gtxn) bool { return g.orTok == 0 && d.or.inQ1(g.lock, g.txn) }

func (d *diffRun) next() {
	d.ts++
	if d.sw2 != nil && d.rng.IntN(100) < 6 {
		d.adminProbe()
		return
	}
	p := d.rng.IntN(100)
	r := d.rules
	switch {
	case p < r.relPct:
		if g := d.pick(d.holding); g != nil {
			d.release(g)
			return
		}
	case p < r.relPct+r.wdPct:
		if g := d.pick(d.waitingQ1); g != nil {
			f := wire.Fields{Op: wire.OpRelease, Mode: g.f.Mode, Priority: g.f.Priority, Tenant: g.f.Tenant,
				Lock: g.lock, Txn: g.txn, Timestamp: d.ts}
			g.ended = true
			d.step(g.client, f, f, fmt.Sprintf("withdraw lock=%d txn=%d", g.lock, g.txn))
			return
		}
	case p < r.relPct+r.wdPct+r.retryPct:
		if g := d.pick(func(g *gtxn) bool { return true }); g != nil {
			// A retransmission (retry flag) or a duplicated datagram (an exact copy).
			f, what := g.f, "duplicate"
			if d.rng.IntN(2) == 0 {
				f.Flags |= wire.FlagRetry
				what = "retry"
			}
			d.step(g.client, f, f, fmt.Sprintf("%s lock=%d txn=%d", what, g.lock, g.txn))
			return
		}
	case p < r.relPct+r.wdPct+r.retryPct+r.probePct:
		if g := d.pick(d.holding); g != nil {
			sf := wire.Fields{Op: wire.OpLeaseProbe, Mode: g.f.Mode, Priority: g.f.Priority, Tenant: g.f.Tenant,
				Lock: g.lock, Txn: g.txn, Timestamp: d.ts, LeaseMicros: uint32(d.rng.IntN(3)) * 5_000_000}
			of := sf
			sf.Token, of.Token = g.swTok, g.orTok
			d.step(g.client, sf, of, fmt.Sprintf("probe lock=%d txn=%d", g.lock, g.txn))
			return
		}
	case p < r.relPct+r.wdPct+r.retryPct+r.probePct+r.bogusPct:
		// A release nobody holds: an unknown txn, or a holder's txn with a wrong token (on the
		// switch: the holder's slot with another grant number).
		f := wire.Fields{Op: wire.OpRelease, Mode: wire.Exclusive, Lock: uint32(d.rng.IntN(r.locks)), Txn: 1 << 50, Token: 12345}
		sf, of := f, f
		if g := d.pick(d.holding); g != nil && d.rng.IntN(2) == 0 {
			f.Lock, f.Txn, f.Mode, f.Priority = g.lock, g.txn, g.f.Mode, g.f.Priority
			sf, of = f, f
			sf.Token = g.swTok + 1<<d.sw.r.sw.Sizing.SlotBits()
			of.Token = g.orTok + 1000
		}
		d.step(1, sf, of, fmt.Sprintf("bogus release lock=%d txn=%d", f.Lock, f.Txn))
		return
	}
	d.acquire()
}

func (d *diffRun) acquire() {
	r := d.rules
	d.nextTx++
	// The txn's and the timestamp's high halves random, the txn's low half the sequence number
	// (unique): a program that takes one half of a slot's txn or timestamp from another slot
	// differs. The high half is drawn again while the txn's cell of the table of requests seen
	// is another txn's of the run: that table is a cache (a request whose cell another took is
	// forgotten, and an exact copy of it is then a new request to both programs), which the
	// oracle does not model; ended_test.go tests txns sharing a cell.
	g := &gtxn{lock: uint32(d.rng.IntN(r.locks)), client: 1 + d.rng.IntN(20)}
	for {
		g.txn = uint64(d.rng.Uint32())<<32 | d.nextTx
		c := endedCell(g.lock, g.txn, d.sw.r.sw.Sizing.Ended)
		if !d.cells[c] {
			d.cells[c] = true
			break
		}
	}
	g.f = wire.Fields{Op: wire.OpAcquire, Mode: wire.Mode(d.rng.IntN(2)), Priority: uint8(d.rng.IntN(2)),
		Tenant: uint16(d.rng.IntN(3)), Lock: g.lock, Txn: g.txn, Timestamp: d.ts + uint64(d.rng.Uint32())<<32}
	if d.rng.IntN(4) == 0 {
		g.f.LeaseMicros = uint32(1 + d.rng.IntN(90_000_000))
	}
	if d.rng.IntN(100) < r.tryPct {
		g.f.Flags |= wire.FlagTry
	}
	d.txns = append(d.txns, g)
	d.byKey[[2]uint64{uint64(g.lock), g.txn}] = g
	d.step(g.client, g.f, g.f, fmt.Sprintf("acquire lock=%d txn=%d %s prio=%d flags=%s", g.lock, g.txn, g.f.Mode, g.f.Priority, g.f.Flags))
	// A rejected acquire has ended.
	for _, m := range d.or.out {
		if m.f.Op == wire.OpReject && m.f.Txn == g.txn {
			g.ended = true
		}
	}
}

func (d *diffRun) release(g *gtxn) {
	sf := wire.Fields{Op: wire.OpRelease, Mode: g.f.Mode, Priority: g.f.Priority, Tenant: g.f.Tenant, Lock: g.lock,
		Txn: g.txn, Timestamp: d.ts}
	of := sf
	sf.Token, of.Token = g.swTok, g.orTok
	g.ended = true
	d.step(g.client, sf, of, fmt.Sprintf("release lock=%d txn=%d %s", g.lock, g.txn, g.f.Mode))
}

// drain releases holders until nothing is left anywhere.
func (d *diffRun) drain() {
	for i := 0; i < 100000; i++ {
		d.ts++
		g := d.pick(d.holding)
		if g == nil {
			break
		}
		d.release(g)
	}
}

// newDiffSwitch loads prog for rules (src nil: the embedded program) on pipeline pl.
func newDiffSwitch(t testing.TB, prog dataplane.Program, rules diffRules, src []byte, pl engine.Pipeline) *rig {
	sz := dataplane.Sizing{Locks: 8, PartBits: 6}
	r := newRigSource(t, prog, sz, src, pl)
	left := uint32(0)
	for l := 0; l < rules.locks; l++ {
		e := dataplane.LockEntry{Lock: uint32(l), Index: uint32(l), Server: diffQ2Server}
		for lv := 0; lv < dataplane.Levels; lv++ {
			e.Regions[lv] = dataplane.Region{Left: left, Size: rules.sizes[lv]}
			left += uint32(rules.sizes[lv])
		}
		must(t, r.sw.SetLock(e))
	}
	return r
}

// runDiff runs one seeded sequence on r (whose registers it resets), and on r2 too, which
// must answer alike, when it is not nil.
func runDiff(t tb, r, r2 *rig, rules diffRules, seed uint64) {
	for _, x := range []*rig{r, r2} {
		if x == nil {
			continue
		}
		for _, reg := range x.sw.Registers() {
			reg.Reset()
		}
		if rules.quotaBurst > 0 {
			must(t, x.sw.SetTenantLimit(1, 1, 0, uint64(rules.quotaBurst)))
		}
		x.syncMirrors()
	}
	cfg := lockcore.Config{DefaultLease: diffLease, MaxLease: diffMaxLease, Priorities: 2}
	if rules.quotaBurst > 0 {
		cfg.Quotas = map[uint16]lockcore.Quota{1: {MaxRate: rules.quotaBurst}}
	}
	q1, err := lockcore.New(cfg)
	must(t, err)
	q2a, err := lockcore.New(lockcore.Config{DefaultLease: diffLease, MaxLease: diffMaxLease, Priorities: 2})
	must(t, err)
	q2b, err := lockcore.New(lockcore.Config{DefaultLease: diffLease, MaxLease: diffMaxLease, Priorities: 2})
	must(t, err)
	d := &diffRun{t: t, rules: rules, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		sw:    &sut{r: r, q2: q2a, toks: newTokens()},
		or:    &oracle{rules: rules, q1: q1, q2: q2b, slots: map[uint32]*[dataplane.Levels][]oslot{}, buf: map[uint32]int{}},
		otoks: newTokens(), byKey: map[[2]uint64]*gtxn{}, cells: map[uint32]bool{}}
	d.ts = uint64(d.rng.Uint32())<<32 | uint64(d.rng.Uint32()>>1) // both halves in use (see acquire)
	if r2 != nil {
		q2c, err := lockcore.New(lockcore.Config{DefaultLease: diffLease, MaxLease: diffMaxLease, Priorities: 2})
		must(t, err)
		d.sw2 = &sut{r: r2, q2: q2c, toks: newTokens()}
	}
	for i := 0; i < rules.events; i++ {
		d.next()
	}
	d.drain()
	// Both sides are empty again: the switch's per-lock counters are zero.
	for _, name := range []string{dataplane.RegisterState, dataplane.RegisterWait, dataplane.RegisterWaitHigh, dataplane.RegisterQueue,
		dataplane.RegisterQueueHigh, dataplane.RegisterBuffered, dataplane.RegisterDone} {
		reg, err := r.sw.Register(name)
		if (name == dataplane.RegisterWaitHigh || name == dataplane.RegisterQueueHigh || name == dataplane.RegisterBuffered ||
			name == dataplane.RegisterDone) && err != nil && r.sw.Program.Name == dataplane.V1Model.Name {
			continue // the v1model program keeps both levels in RegisterWait, the queue counters and done slots in RegisterQueue
		}
		must(t, err)
		for l := 0; l < rules.locks; l++ {
			if b, _ := reg.Read(l); slices.ContainsFunc(b, func(x byte) bool { return x != 0 }) {
				d.fail("after the drain, %s[%d] = % x, want 0", name, l, b)
			}
		}
	}
	if st := q2a.Stats(); st.Buffered != 0 {
		d.fail("after the drain, %d requests are still buffered at the server", st.Buffered)
	}
}

func diffSeeds(t *testing.T, n int) []uint64 {
	if *seedFlag != 0 {
		return []uint64{*seedFlag}
	}
	base := uint64(time.Now().UnixNano())
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = base + uint64(i)*0x9e3779b97f4a7c15
	}
	return seeds
}

// TestDifferential runs 400 seeded sequences per configuration and program (1600 per program;
// 50 each with -short, 10 each under the race detector: make test runs the full count without
// it).
func TestDifferential(t *testing.T) {
	n := 400
	switch {
	case raceDetector:
		n = 10
	case testing.Short():
		n = 50
	}
	for _, run := range pipelineRuns {
		prog := run.prog
		t.Run(run.name, func(t *testing.T) {
			for _, rules := range diffConfigs {
				t.Run(rules.name, func(t *testing.T) {
					r := newDiffSwitch(t, prog, rules, nil, run.pl)
					for _, seed := range diffSeeds(t, n) {
						ok := t.Run("", func(t *testing.T) {
							defer func() {
								if t.Failed() {
									t.Logf("seed %d (re-run: go test ./p4/dataplane/dpengine -run 'TestDifferential/%s/%s' -seed=%d)",
										seed, run.name, rules.name, seed)
								}
							}()
							runDiff(t, r, nil, rules, seed)
						})
						if !ok {
							return
						}
					}
				})
			}
		})
	}
}

// recorder is a tb that stops the run at the first failure and keeps the message.
type recorder struct{ msg string }

type stopRun struct{}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(stopRun{})
}

// diffFails runs seed through rules on r and returns the failure, or "".
func diffFails(r *rig, rules diffRules, seed uint64) string {
	return agreeFails(r, nil, rules, seed)
}

// mutant is a copy of a program that breaks one rule: from is replaced by to.
type mutant struct {
	name, rule, from, to string
}

// mutate returns prog's source with from replaced by to once; the test fails when from is not
// in it exactly once (the program changed under the mutant: the mutant must follow it).
func mutate(t testing.TB, prog dataplane.Program, from, to string) []byte {
	t.Helper()
	if strings.Count(string(prog.Source), from) != 1 {
		t.Fatalf("the mutation site %q is not in p4/%s exactly once: update the mutant", from, prog.File)
	}
	return []byte(strings.Replace(string(prog.Source), from, to, 1))
}

// mutants are the negative controls of the differential test, per program.
var mutants = map[string][]mutant{
	dataplane.V1Model.Name: {
		{"shared-overtakes-waiting-exclusive", "a shared request waits behind an exclusive one at its level",
			"meta.compat = (xheld == 0 && wx0 == 0) ? 8w1 : 8w0;", "meta.compat = (xheld == 0) ? 8w1 : 8w0;"},
		{"overflow-ignores-q2", "no request overtakes the server's q2",
			"if (meta.paused == 1 || b > 0 || up >= meta.size) {", "if (meta.paused == 1 || up >= meta.size) {"},
		{"walk-grants-exclusive-to-holders", "an exclusive waiter is granted only when nobody holds",
			"                meta.compat = (nhold == 0) ? 8w1 : 8w0;\n            } else {\n                meta.compat = (xheld == 0) ? 8w1 : 8w0;",
			"                meta.compat = 1;\n            } else {\n                meta.compat = (xheld == 0) ? 8w1 : 8w0;"},
		{"release-ignores-token", "a release must name the holder's token",
			"io.txn_ok == 1 && v[63:32] == io.chk_seq && v[63:32] != 0", "io.txn_ok == 1 && v[63:32] != 0"},
		{"duplicate-is-a-new-request", "a copy of a live acquire without the retry flag is a retransmission",
			"} else if (meta.dup_hit == 1) {", "} else if (meta.dup_hit == 2) {"},
		{"walk-prefers-low-priority", "level 0 is granted before level 1",
			"bit<8> nl = (meta.w0 > 0) ? 8w0 : 8w1;", "bit<8> nl = (meta.w1 > 0) ? 8w1 : 8w0;"},
	},
	dataplane.TNA.Name: {
		{"shared-overtakes-waiting-exclusive", "a shared request waits behind an exclusive one at its level",
			"(_, _, _, _, _, _, 0) : st_y_is(0xffff);",
			"(_, _, _, _, _, _, _) : st_y_is(0xffffffff);"},
		{"overflow-ignores-q2", "no request overtakes the server's q2",
			"if (meta.bv != 0 || meta.paused == 1) {\n            ov_b = 1;", "if (meta.paused == 1) {\n            ov_b = 1;"},
		{"walk-grants-exclusive-to-holders", "an exclusive waiter is granted only when nobody holds",
			"(_, _, P_GRANT, _, _, 1, SS_LIVE, _, _, _, _, MODE_X) : st_take_x();",
			"(_, _, P_GRANT, _, _, 1, SS_LIVE, _, _, _, _, MODE_X) : st_take_s();"},
		{"release-ignores-token", "a release must name the holder's token",
			"if (v == meta.tseq_lo && v != 0) { v = 0; rv = 1; }", "if (v != 0) { v = 0; rv = 1; }"},
		{"duplicate-is-a-new-request", "a copy of a live acquire without the retry flag is a retransmission",
			"0 : e_flags(0, 0, 1);", "0 : e_flags(0, 0, 0);"},
		{"walk-prefers-low-priority", "level 0 is granted before level 1",
			"(_, 0, _, _, _, _, 1) : gn_next_nc(1);   /* w1 != 0 */\n            (_, 0, _, _, _, _, _) : gn_next_g1();",
			"(_, _, 0, _, _, _, 0) : gn_next_nc(0);\n            (_, _, 0, _, _, _, _) : gn_next_g0();\n" +
				"            (_, _, _, _, _, _, 1) : gn_next_nc(1);\n            (_, _, _, _, _, _, _) : gn_next_g1();"},
	},
}

// TestDifferentialMutants is the negative control: each mutant breaks one rule of a program,
// and the differential test must notice within a few hundred sequences.
func TestDifferentialMutants(t *testing.T) {
	if raceDetector {
		t.Skip("the mutants run without the race detector (make test's second pass): the engine is single-threaded")
	}
	for _, prog := range dataplane.Programs {
		t.Run(prog.Name, func(t *testing.T) {
			for _, m := range mutants[prog.Name] {
				t.Run(m.name, func(t *testing.T) {
					src := mutate(t, prog, strings.ReplaceAll(m.from, "\\n", "\n"), strings.ReplaceAll(m.to, "\\n", "\n"))
					for _, rules := range diffConfigs {
						r := newDiffSwitch(t, prog, rules, src, engine.PipelineInterpreted)
						for seed := uint64(1); seed <= 300; seed++ {
							if msg := diffFails(r, rules, seed); msg != "" {
								t.Logf("caught (%s) by configuration %s, seed %d:\n%.600s", m.rule, rules.name, seed, msg)
								return
							}
						}
					}
					t.Errorf("mutant %s (breaks: %s) passed the differential test", m.name, m.rule)
				})
			}
		})
	}
}

// inputKind is the kind of a client datagram the differential test sends: the first word of
// its description, "try acquire" for a try.
func inputKind(what string, f *wire.Fields) string {
	k, _, _ := strings.Cut(what, " ")
	switch {
	case k == "acquire" && f.Flags&wire.FlagTry != 0:
		k = "try acquire"
	case k == "bogus":
		k = "release by a non-holder"
	case k == "duplicate":
		k = "duplicate (exact copy of a live acquire)"
	case k == "retry":
		k = "retry (retransmitted acquire)"
	case k == "withdraw":
		k = "withdraw (release with token 0)"
	case k == "probe":
		k = "lease-probe"
	}
	return k
}
