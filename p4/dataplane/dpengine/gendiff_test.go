package dpengine

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/udpframe"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The generated-pipeline differential test: one seeded random packet sequence driven into two
// switches loaded from p4/netlock.p4 with the same sizing, clock, random source and
// control-plane set-up, one on the interpreter (the reference) and one on the generated Go
// pipeline of p4/netlockgen. After every packet the two results must be identical: the error,
// every output (port and bytes, in order), every packet-in and every digest. Every
// gdStateEvery packets and at the end, every register cell, every indexed counter and every
// direct counter (per table entry) must be identical too. Meter state is not readable through
// the engine's API; it shows in the answers (a tenant over quota is rejected), which are
// compared.
//
// The sequence mixes what a ToR sees: acquires and releases of every mode, priority, flag
// (try, retry, others) and tenant (metered or not) for locks in the switch (regions of one to
// three slots per level, so requests overflow), paused and absent; releases of granted and
// waiting requests and bogus ones; push-backs of overflowed requests from the server (with,
// without and with a wrong rack key, from the wrong port); admin packets from the CPU port
// (every switch sub-operation and unknown ones, right and wrong key) and forged from other
// ports; forged overflow and queue-empty; the other netlock ops, bad versions and unknown ops;
// routed IPv4 (UDP and not, TTL 0..2, bad checksums, unknown destinations); ARP and other
// EtherTypes; truncated netlock headers; random bytes; one-byte corruptions of valid frames;
// raw packet-outs; control-plane changes (a lock moved, paused, deleted, re-inserted; a tenant's
// rate changed) applied to both switches; and clock steps from microseconds to seconds.
//
// Re-run one sequence with -gendiff.seed=N (the seed is printed); -gendiff.n sets the length.

var (
	genDiffSeed = flag.Uint64("gendiff.seed", 0, "run the generated-pipeline differential test with this seed (0: a new one)")
	genDiffN    = flag.Int("gendiff.n", 0, "packets of the generated-pipeline differential test (0: the default)")
	genDiffEach = flag.Int("gendiff.every", 0, "compare the whole state every this many packets (0: the sizing's default; 1 finds the first packet that changes it)")
)

// genDiffPackets is the default length per sizing: 30 000 packets take about a second
// without the race detector; under it (make test runs the package under -race, then this test
// again without), a third.
func genDiffPackets() int {
	if *genDiffN > 0 {
		return *genDiffN
	}
	if raceDetector {
		return 10000
	}
	return 30000
}

// gdSizing is a sizing p4/netlockgen holds a pipeline for, and how often (in packets) the
// differential test compares the whole state for it.
type gdSizing struct {
	name  string
	sz    dataplane.Sizing
	every int
}

// gdSizings are the three pipelines of p4/netlockgen: the tests' sizing (the whole state
// every 64 packets), the benchmark's (every 256) and the program as written, which netlock
// switch runs (2^17 slots and 2^14 locks per array: every 10 000 packets).
var gdSizings = []gdSizing{
	{"l8p6", dataplane.Sizing{Locks: 8, PartBits: 6}, 64},
	{"l64p8", dataplane.Sizing{Locks: 64, PartBits: 8}, 256},
	{"default", dataplane.DefaultSizing, 10000},
}

func (s gdSizing) stateEvery() int {
	if *genDiffEach > 0 {
		return *genDiffEach
	}
	return s.every
}

// gdLoader loads p4/netlock.p4 with sz and cfg on the pipeline under test.
type gdLoader func(sz dataplane.Sizing, cfg engine.Config) (*Switch, error)

func gdLoadInterp(sz dataplane.Sizing, cfg engine.Config) (*Switch, error) {
	cfg.Pipeline = engine.PipelineInterpreted
	return Load(sz, cfg)
}

func gdLoadGen(sz dataplane.Sizing, cfg engine.Config) (*Switch, error) {
	return Load(sz, pipelineConfig(cfg, engine.PipelineGenerated))
}

// gdLock is one lock id of the sequence and its table entry (nil: not in the switch).
type gdLock struct {
	id    uint32
	entry *dataplane.LockEntry
}

// gdReq is a request the sequence saw: acquired (waiting or granted) or overflowed.
type gdReq struct {
	f      wire.Fields
	client int
}

// genDiff is one run: the two switches and what the generator remembers of the answers
// (grants to release, overflows to push back, locks that drained).
type genDiff struct {
	seed uint64
	sz   gdSizing
	rng  *rand.Rand
	now  time.Time
	ref  *Switch // the interpreter
	sut  *Switch // the pipeline under test
	n    int     // packets sent

	locks     []gdLock
	slotsUsed uint32
	grants    []gdReq
	waiting   []gdReq
	overflows []gdReq
	drained   []uint32
	fr        udpframe.Frame
	// seen counts the reference's outputs by kind (op, or port class), to show what the
	// sequence reached.
	seen map[string]int
	// reached counts the reference's table applications by "table/action" (Config.OnTable).
	reached map[string]int
	// rackUnset: the rack configuration was taken away (the rack table's default,
	// rack_unset), until a later change sets it again.
	rackUnset bool
}

// gdRack is the rack configuration of the sequence.
var gdRack = dataplane.Rack{Key: rigKey, SwitchIP: diffSwitchAddr.Addr(), SwitchMAC: rigSwitchMAC,
	DefaultLease: 10 * time.Second, MaxLease: 60 * time.Second}

// gdKind is what a run of the differential test ended with.
type gdKind int

const (
	gdEqual  gdKind = iota // every packet and state comparison equal
	gdSetup                // a control-plane change failed on one switch: no comparison made
	gdPacket               // a packet's results differ
	gdState                // registers or counters differ
)

// gdDiff is the outcome of a run: its kind and, unless equal, the seed, the packet and the
// first difference.
type gdDiff struct {
	kind gdKind
	text string
}

// differs reports whether the two switches were seen to differ (a packet's results or the
// state), as opposed to equal or a run that could not compare.
func (d gdDiff) differs() bool { return d.kind == gdPacket || d.kind == gdState }

// gdResult is one switch's answer to one packet, copied out of the engine's reused Result.
type gdResult struct {
	err  string
	outs []engine.Output
	pins [][]byte
	digs []string
}

func capture(res *engine.Result, err error) gdResult {
	var r gdResult
	if err != nil {
		r.err = err.Error()
	}
	if res == nil {
		return r
	}
	for _, o := range res.Out {
		r.outs = append(r.outs, engine.Output{Port: o.Port, Data: bytes.Clone(o.Data)})
	}
	for _, p := range res.PacketIn {
		r.pins = append(r.pins, bytes.Clone(p))
	}
	for _, d := range res.Digests {
		r.digs = append(r.digs, fmt.Sprintf("%d %s %d %x", d.Receiver, d.Name, d.ID, d.Fields))
	}
	return r
}

// diff returns the first difference between a (the reference) and b, or "".
func (a gdResult) diff(b gdResult) string {
	if a.err != b.err {
		return fmt.Sprintf("error: interpreter %q, generated %q", a.err, b.err)
	}
	if len(a.outs) != len(b.outs) {
		return fmt.Sprintf("outputs: interpreter %d %s, generated %d %s", len(a.outs), outsString(a.outs), len(b.outs), outsString(b.outs))
	}
	for i := range a.outs {
		if a.outs[i].Port != b.outs[i].Port || !bytes.Equal(a.outs[i].Data, b.outs[i].Data) {
			return fmt.Sprintf("output %d: interpreter port %d % x, generated port %d % x (first differing byte %d)", i,
				a.outs[i].Port, a.outs[i].Data, b.outs[i].Port, b.outs[i].Data, firstDiff(a.outs[i].Data, b.outs[i].Data))
		}
	}
	if len(a.pins) != len(b.pins) {
		return fmt.Sprintf("packet-ins: interpreter %d, generated %d", len(a.pins), len(b.pins))
	}
	for i := range a.pins {
		if !bytes.Equal(a.pins[i], b.pins[i]) {
			return fmt.Sprintf("packet-in %d: interpreter % x, generated % x (first differing byte %d)", i, a.pins[i], b.pins[i],
				firstDiff(a.pins[i], b.pins[i]))
		}
	}
	if !slices.Equal(a.digs, b.digs) {
		return fmt.Sprintf("digests: interpreter %q, generated %q", a.digs, b.digs)
	}
	return ""
}

func outsString(os []engine.Output) string {
	var b strings.Builder
	for _, o := range os {
		fmt.Fprintf(&b, "[port %d % x]", o.Port, o.Data)
	}
	return b.String()
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// gdStateDiff compares every register cell, indexed counter and direct counter of the two
// switches and returns the first difference, or "".
func gdStateDiff(a, b *Switch) string {
	ra, rb := a.Registers(), b.Registers()
	if len(ra) != len(rb) {
		return fmt.Sprintf("%d registers, %d", len(ra), len(rb))
	}
	for i, r := range ra {
		if r.Name != rb[i].Name || r.Size() != rb[i].Size() {
			return fmt.Sprintf("register %d: %s[%d], %s[%d]", i, r.Name, r.Size(), rb[i].Name, rb[i].Size())
		}
		for c := range r.Size() {
			va, _ := r.Read(c)
			vb, _ := rb[i].Read(c)
			if !bytes.Equal(va, vb) {
				return fmt.Sprintf("register %s[%d]: interpreter %x, generated %x", r.Name, c, va, vb)
			}
		}
	}
	ka, kb := a.Counters(), b.Counters()
	if len(ka) != len(kb) {
		return fmt.Sprintf("%d counters, %d", len(ka), len(kb))
	}
	for i, k := range ka {
		if k.Name != kb[i].Name || !slices.Equal(k.Packets, kb[i].Packets) || !slices.Equal(k.Bytes, kb[i].Bytes) {
			return fmt.Sprintf("counter %s: interpreter packets %v bytes %v, generated %s packets %v bytes %v", k.Name, k.Packets, k.Bytes,
				kb[i].Name, kb[i].Packets, kb[i].Bytes)
		}
	}
	ta, tb := a.Tables(), b.Tables()
	for i, t := range ta {
		ea, eb := t.Entries(), tb[i].Entries()
		if len(ea) != len(eb) {
			return fmt.Sprintf("table %s: %d entries, %d", t.Name, len(ea), len(eb))
		}
		for j := range ea {
			if ea[j].Packets != eb[j].Packets || ea[j].Bytes != eb[j].Bytes {
				return fmt.Sprintf("table %s entry %d %v: direct counter interpreter %d/%d, generated %d/%d", t.Name, j, ea[j].Match,
					ea[j].Packets, ea[j].Bytes, eb[j].Packets, eb[j].Bytes)
			}
		}
	}
	return ""
}

// newGenDiff loads both switches and installs the same control-plane state in each.
func newGenDiff(seed uint64, sz gdSizing, load gdLoader) (*genDiff, error) {
	return newGenDiffRef(seed, sz, gdLoadInterp, load)
}

// newGenDiffRef is newGenDiff with the reference loaded by ref (an interpreter).
func newGenDiffRef(seed uint64, sz gdSizing, ref, load gdLoader) (*genDiff, error) {
	g := &genDiff{seed: seed, sz: sz, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)), now: time.Unix(1000, 0), seen: map[string]int{}, reached: map[string]int{}}
	mk := func(l gdLoader, onTable func(table, action string, hit bool)) (*Switch, error) {
		src := rand.New(rand.NewPCG(seed, 7))
		return l(sz.sz, engine.Config{Now: func() time.Time { return g.now }, Random: src.Uint64, OnTable: onTable})
	}
	var err error
	if g.ref, err = mk(ref, func(table, action string, _ bool) { g.reached[table+"/"+action]++ }); err != nil {
		return nil, err
	}
	if g.sut, err = mk(load, nil); err != nil {
		return nil, err
	}
	if g.ref.GeneratedPipeline() != "" {
		return nil, fmt.Errorf("the reference runs generated pipeline %s", g.ref.GeneratedPipeline())
	}
	if g.sut.GeneratedPipeline() == "" {
		return nil, fmt.Errorf("the switch under test runs the interpreter")
	}
	// Locks 1..6 in the switch (6 on server 3, which lock_servers does not hold) with regions of 1..3 slots per level, lock 7 paused, 8 and 9
	// not in the switch (their requests go to the server unchanged). The regions' largest size
	// is smaller where 7 locks of two levels of 3 slots would not fit the pool (16 locks, part
	// bits 3: 32 slots, 2 at most), so that every seed fits every sizing.
	maxSize := uint32(3)
	if fit := uint32(sz.sz.Slots()) / 14; fit < maxSize {
		maxSize = max(fit, 1)
	}
	for id := uint32(1); id <= 9; id++ {
		l := gdLock{id: id}
		if id <= 7 {
			e := &dataplane.LockEntry{Lock: id, Index: id - 1, Server: uint16(1 + id%2), Paused: id == 7}
			if id == 6 {
				e.Server = 3 // not in lock_servers (server_unknown) until a change moves it
			}
			for lv := range e.Regions {
				size := 1 + g.rng.Uint32N(maxSize)
				e.Regions[lv] = dataplane.Region{Left: g.slotsUsed, Size: uint16(size)}
				g.slotsUsed += size
			}
			l.entry = e
		}
		g.locks = append(g.locks, l)
	}
	return g, g.control(func(sw *Switch) error {
		if err := sw.SetRack(gdRack); err != nil {
			return err
		}
		for s := 1; s <= 2; s++ {
			a := serverAddr(s)
			if err := sw.SetServer(uint16(s), dataplane.Server{Addr: a, Port: 100 + s, MAC: hostMAC(a.Addr())}); err != nil {
				return err
			}
			if err := sw.AddRoute(netip.PrefixFrom(a.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(a.Addr()), Port: 100 + s}); err != nil {
				return err
			}
		}
		for c := 1; c <= 20; c++ {
			a := clientAddr(c)
			if err := sw.AddRoute(netip.PrefixFrom(a.Addr(), 32), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: hostMAC(a.Addr()), Port: c}); err != nil {
				return err
			}
		}
		// A covering route, so that unknown 10.0.x.y destinations take the LPM's shorter prefix.
		if err := sw.AddRoute(netip.MustParsePrefix("10.0.0.0/16"), dataplane.NextHop{SrcMAC: rigSwitchMAC, DstMAC: dataplane.MAC{2, 0, 9, 9, 9, 9}, Port: 30}); err != nil {
			return err
		}
		for _, l := range g.locks {
			if l.entry != nil {
				if err := sw.SetLock(*l.entry); err != nil {
					return err
				}
			}
		}
		// Tenant 0 unmetered; 1 a burst of 4 at 2000/s; 2 a burst of 1 at 50/s.
		if err := sw.SetTenantLimit(1, 1, 2000, 4); err != nil {
			return err
		}
		return sw.SetTenantLimit(2, 2, 50, 1)
	})
}

// control applies one control-plane change to both switches.
func (g *genDiff) control(f func(sw *Switch) error) error {
	if err := f(g.ref); err != nil {
		return fmt.Errorf("reference: %w", err)
	}
	if err := f(g.sut); err != nil {
		return fmt.Errorf("under test: %w", err)
	}
	return nil
}

// run sends n packets and returns the first difference (with the seed, the packet number
// and the packet), or gdEqual.
func (g *genDiff) run(n int) gdDiff {
	for g.n = 0; g.n < n; g.n++ {
		desc, port, frame, cpu, err := g.next()
		if err != nil {
			return gdDiff{gdSetup, fmt.Sprintf("seed %d packet %d (%s): control-plane change: %v", g.seed, g.n, desc, err)}
		}
		if frame == nil {
			continue
		}
		var a, b gdResult
		if cpu {
			a = capture(g.ref.PacketOut(frame))
			b = capture(g.sut.PacketOut(frame))
		} else {
			a = capture(g.ref.Process(port, frame))
			b = capture(g.sut.Process(port, frame))
		}
		if d := a.diff(b); d != "" {
			return gdDiff{gdPacket, fmt.Sprintf("seed %d packet %d: %s on port %d (cpu %v): % x\nfirst difference: %s", g.seed, g.n, desc, port, cpu, frame, d)}
		}
		g.learn(a)
		if every := g.sz.stateEvery(); g.n%every == every-1 || g.n == n-1 {
			if d := gdStateDiff(g.ref, g.sut); d != "" {
				return gdDiff{gdState, fmt.Sprintf("seed %d: state after packet %d (%s on port %d: % x; last full comparison after packet %d)\nfirst difference: %s",
					g.seed, g.n, desc, port, frame, g.n-g.sz.stateEvery(), d)}
			}
		}
	}
	return gdDiff{}
}

// learn remembers grants, waiting acquires, overflows and drained locks from the reference's
// outputs, for later releases and push-backs.
func (g *genDiff) learn(r gdResult) {
	if r.err != "" {
		g.seen["error"]++
	}
	if len(r.outs)+len(r.pins) == 0 {
		g.seen["nothing out"]++
	}
	g.seen["packet-in"] += len(r.pins)
	for _, o := range r.outs {
		if udpframe.Parse(o.Data, &g.fr) != nil || binary.BigEndian.Uint16(g.fr.Dst.Addr().AsSlice()[:2]) != 10<<8 ||
			g.fr.Dst.Port() != wire.Port && g.fr.Src.Port() != wire.Port {
			g.seen["routed"]++
			continue
		}
		h, err := wire.Parse(g.fr.Payload)
		if err != nil {
			g.seen["other"]++
			continue
		}
		var f wire.Fields
		h.Decode(&f)
		name := f.Op.String()
		if f.Op == wire.OpReject {
			name += " " + f.Status.String()
		}
		g.seen[name]++
		switch f.Op {
		case wire.OpGrant:
			if c, ok := clientPort(g.fr.Dst.Addr()); ok {
				g.grants = keep(append(g.grants, gdReq{f: f, client: c}), 64)
			}
		case wire.OpOverflow:
			g.overflows = keep(append(g.overflows, gdReq{f: f, client: o.Port}), 64)
		case wire.OpQueueEmpty:
			g.drained = keep(append(g.drained, f.Lock), 16)
		}
	}
}

func keep[T any](xs []T, n int) []T {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}

func (g *genDiff) pct(p int) bool { return g.rng.IntN(100) < p }

func pick[T any](g *genDiff, xs []T) T { return xs[g.rng.IntN(len(xs))] }

// lockID is a lock of the sequence, now and then any 32-bit id.
func (g *genDiff) lockID() uint32 {
	if g.pct(3) {
		return g.rng.Uint32()
	}
	return pick(g, g.locks).id
}

// frame builds an Ethernet/IPv4/UDP frame to port 8888 holding f (and the rack key when key
// is not nil).
func (g *genDiff) frame(src, dst netip.AddrPort, f *wire.Fields, key *uint64) []byte {
	payload := wire.Append(nil, f)
	if key != nil {
		payload = append(payload, make([]byte, wire.AuthLen)...)
		wire.SetRackKey(payload, *key)
	}
	return udpframe.Append(nil, udpframe.Endpoint{MAC: hostMAC(src.Addr()), Addr: src},
		udpframe.Endpoint{MAC: rigSwitchMAC, Addr: dst}, payload)
}

// key returns the rack key (mostly), a wrong one or none.
func (g *genDiff) key() *uint64 {
	k := uint64(rigKey)
	switch r := g.rng.IntN(10); {
	case r == 0:
		return nil
	case r == 1:
		k ^= 1 << g.rng.IntN(64)
	}
	return &k
}

func (g *genDiff) flags() wire.Flags {
	if g.pct(5) {
		return wire.Flags(g.rng.Uint32())
	}
	var f wire.Flags
	if g.pct(15) {
		f |= wire.FlagTry
	}
	if g.pct(10) {
		f |= wire.FlagRetry
	}
	if g.pct(3) {
		f |= wire.FlagForwarded
	}
	if g.pct(2) {
		f |= wire.FlagReply
	}
	return f
}

func (g *genDiff) acquire() wire.Fields {
	f := wire.Fields{Op: wire.OpAcquire, Mode: wire.Mode(g.rng.IntN(2)), Flags: g.flags(), Lock: g.lockID(),
		Txn: uint64(1 + g.rng.IntN(40)), Timestamp: g.rng.Uint64() >> g.rng.IntN(64)}
	if g.pct(3) {
		f.Mode = wire.Mode(g.rng.Uint32())
	}
	switch r := g.rng.IntN(10); {
	case r < 6:
	case r < 9:
		f.Priority = 1 + uint8(g.rng.IntN(3))
	default:
		f.Priority = uint8(g.rng.Uint32())
	}
	f.Tenant = uint16(g.rng.IntN(3))
	if g.pct(3) {
		f.Tenant = uint16(g.rng.Uint32())
	}
	if g.pct(30) {
		f.LeaseMicros = g.rng.Uint32() >> g.rng.IntN(32)
	}
	if g.pct(3) {
		f.Txn = 0
	}
	if g.pct(5) {
		f.Slots = uint16(g.rng.Uint32())
	}
	return f
}

// next generates the next packet (or applies a control-plane change and returns no frame).
func (g *genDiff) next() (desc string, port int, frame []byte, cpu bool, err error) {
	// The clock: mostly microseconds, now and then milliseconds or seconds (meters refill).
	switch r := g.rng.IntN(100); {
	case r < 80:
		g.now = g.now.Add(time.Duration(g.rng.IntN(50)) * time.Microsecond)
	case r < 97:
		g.now = g.now.Add(time.Duration(g.rng.IntN(20)) * time.Millisecond)
	default:
		g.now = g.now.Add(time.Duration(1+g.rng.IntN(3)) * time.Second)
	}
	c := 1 + g.rng.IntN(20)
	client := clientAddr(c)
	srv := 1 + g.rng.IntN(2)
	switch r := g.rng.IntN(1000); {
	case r < 280: // acquire
		f := g.acquire()
		g.waiting = keep(append(g.waiting, gdReq{f: f, client: c}), 64)
		return "acquire " + f.String(), c, g.frame(client, serverAddr(srv), &f, nil), false, nil
	case r < 330: // a copy of an earlier acquire (duplicate or retransmission)
		if len(g.waiting) == 0 {
			return "", 0, nil, false, nil
		}
		q := pick(g, g.waiting)
		if g.pct(50) {
			q.f.Flags |= wire.FlagRetry
		}
		return "acquire again " + q.f.String(), q.client, g.frame(clientAddr(q.client), serverAddr(srv), &q.f, nil), false, nil
	case r < 530: // release
		var q gdReq
		switch x := g.rng.IntN(10); {
		case x < 6 && len(g.grants) > 0: // a grant, mostly released once
			i := g.rng.IntN(len(g.grants))
			q = g.grants[i]
			if g.pct(90) {
				g.grants = slices.Delete(g.grants, i, i+1)
			}
		case x < 8 && len(g.waiting) > 0: // a withdrawal (or the release of a grant) by txn
			i := g.rng.IntN(len(g.waiting))
			q = g.waiting[i]
			if g.pct(90) {
				g.waiting = slices.Delete(g.waiting, i, i+1)
			}
		default:
			q = gdReq{f: g.acquire(), client: c}
			q.f.Token = g.rng.Uint64() >> g.rng.IntN(64)
		}
		f := q.f
		f.Op, f.Flags, f.Status = wire.OpRelease, 0, 0
		if g.pct(10) {
			f.Flags = g.flags()
		}
		if g.pct(5) {
			f.Token ^= 1 << g.rng.IntN(20)
		}
		if g.pct(5) {
			f.Txn++
		}
		if g.pct(5) {
			f.Mode ^= 1
		}
		return "release " + f.String(), q.client, g.frame(clientAddr(q.client), serverAddr(srv), &f, nil), false, nil
	case r < 620: // push-back from the server
		var f wire.Fields
		switch x := g.rng.IntN(10); {
		case x < 7 && len(g.overflows) > 0:
			i := g.rng.IntN(len(g.overflows))
			f = g.overflows[i].f
			if g.pct(80) {
				g.overflows = slices.Delete(g.overflows, i, i+1)
			}
		case x < 8:
			f = wire.Fields{Lock: g.lockID()} // an empty push-back (q2 had nothing)
			if len(g.drained) > 0 && g.pct(70) {
				f.Lock = pick(g, g.drained)
			}
		default:
			f = g.acquire()
			f.Client, f.Flags = clientAddr(c), wire.FlagForwarded
		}
		f.Op = wire.OpPushBack
		p := 100 + srv
		if g.pct(5) {
			p = c
		}
		return "push-back " + f.String(), p, g.frame(serverAddr(srv), diffSwitchAddr, &f, g.key()), false, nil
	case r < 720: // admin from the CPU port
		req := g.adminReq()
		k := uint64(rigKey)
		if g.pct(5) {
			k ^= 1 << g.rng.IntN(64)
		}
		return fmt.Sprintf("admin %+v", req), 0, req.PacketOut(nil, k), true, nil
	case r < 740: // forged admin from another port (a bare frame, or a packet_out header too)
		req := g.adminReq()
		fr := req.Frame(nil, rigKey)
		if g.pct(30) {
			fr = req.PacketOut(nil, rigKey)
		}
		p := c
		if g.pct(30) {
			p = 100 + srv
		}
		return fmt.Sprintf("forged admin %+v", req), p, fr, false, nil
	case r < 760: // forged overflow or queue-empty, from a client or a server
		f := g.acquire()
		f.Op = wire.OpOverflow
		if g.pct(50) {
			f.Op = wire.OpQueueEmpty
		}
		p, src := c, client
		if g.pct(30) {
			p, src = 100+srv, serverAddr(srv)
		}
		return "forged " + f.String(), p, g.frame(src, diffSwitchAddr, &f, g.key()), false, nil
	case r < 800: // the other ops, unknown ops
		f := g.acquire()
		f.Op = pick(g, []wire.Op{wire.OpGrant, wire.OpReject, wire.OpLeaseProbe, wire.OpAdmin, wire.Op(9 + g.rng.IntN(247))})
		f.Status = wire.Status(g.rng.IntN(24))
		var key *uint64
		if g.pct(50) {
			key = g.key()
		}
		return "op " + f.String(), c, g.frame(client, serverAddr(srv), &f, key), false, nil
	case r < 830: // a bad version
		f := g.acquire()
		fr := g.frame(client, serverAddr(srv), &f, nil)
		fr[udpframe.HeaderLen] = byte(g.rng.IntN(256))
		return "version " + f.String(), c, fr, false, nil
	case r < 890: // routed IPv4
		return g.routed(c)
	case r < 910: // ARP and other EtherTypes
		fr := make([]byte, 14+28+g.rng.IntN(30))
		for i := range fr {
			fr[i] = byte(g.rng.Uint32())
		}
		et := pick(g, []uint16{0x0806, 0x86dd, 0x8100, uint16(g.rng.Uint32())})
		binary.BigEndian.PutUint16(fr[12:], et)
		return fmt.Sprintf("ethertype %#x", et), c, fr, false, nil
	case r < 940: // truncated netlock header
		f := g.acquire()
		fr := g.frame(client, serverAddr(srv), &f, nil)
		n := g.rng.IntN(wire.Len)
		fr = fr[:udpframe.HeaderLen+n]
		if g.pct(50) { // consistent IPv4 and UDP lengths
			binary.BigEndian.PutUint16(fr[16:], uint16(udpframe.IPv4Len+udpframe.UDPLen+n))
			fr[24], fr[25] = 0, 0
			binary.BigEndian.PutUint16(fr[24:], udpframe.Checksum(fr[14:34], 0))
			binary.BigEndian.PutUint16(fr[38:], uint16(udpframe.UDPLen+n))
		}
		return fmt.Sprintf("truncated to %d netlock bytes", n), c, fr, false, nil
	case r < 960: // random bytes
		fr := make([]byte, g.rng.IntN(120))
		for i := range fr {
			fr[i] = byte(g.rng.Uint32())
		}
		if len(fr) > 14 && g.pct(50) {
			fr[12], fr[13] = 0x08, 0x00
		}
		return "random bytes", g.rng.IntN(260), fr, false, nil
	case r < 985: // a valid frame with one byte changed
		f := g.acquire()
		var key *uint64
		if g.pct(30) {
			f.Op = wire.OpPushBack
			key = g.key()
		}
		fr := g.frame(client, serverAddr(srv), &f, key)
		i := g.rng.IntN(len(fr))
		fr[i] ^= byte(1 + g.rng.IntN(255))
		return fmt.Sprintf("corrupted at byte %d", i), c, fr, false, nil
	case r < 992: // a raw packet-out
		f := g.acquire()
		fr := dataplane.RawPacketOut(nil, g.rng.IntN(260), g.frame(client, serverAddr(srv), &f, nil))
		return "raw packet-out", 0, fr, true, nil
	default: // a control-plane change, on both switches
		return g.change()
	}
}

func (g *genDiff) adminReq() dataplane.AdminRequest {
	req := dataplane.AdminRequest{Op: wire.Status(16 + g.rng.IntN(7)), ID: uint16(g.rng.Uint32()), Lock: g.lockID(),
		Level: uint8(g.rng.IntN(2)), Offset: uint16(g.rng.IntN(4))}
	if g.pct(5) {
		req.Op = wire.Status(g.rng.IntN(256))
	}
	if g.pct(5) {
		req.Level, req.Offset = uint8(g.rng.Uint32()), uint16(g.rng.Uint32())
	}
	switch req.Op {
	case wire.AdminSwitchForceRelease:
		if len(g.grants) > 0 && g.pct(80) {
			q := pick(g, g.grants)
			req.Lock, req.Txn, req.Token = q.f.Lock, q.f.Txn, q.f.Token
		} else {
			req.Txn, req.Token = uint64(g.rng.IntN(40)), g.rng.Uint64()>>g.rng.IntN(64)
		}
	case wire.AdminSwitchTokenBase:
		req.Value = g.rng.Uint64() >> (20 + g.rng.IntN(44))
	case wire.AdminSwitchSetBuffered:
		req.Value = uint64(g.rng.IntN(4))
	default:
		req.Value = g.rng.Uint64()
	}
	return req
}

// routed returns an ordinary IPv4 packet: UDP to another port or another protocol, to a
// client, a server, the covered /16 or nowhere, with TTLs 0..2 or 64 and now and then a bad
// header checksum.
func (g *genDiff) routed(c int) (string, int, []byte, bool, error) {
	dsts := []netip.Addr{clientAddr(1 + g.rng.IntN(20)).Addr(), serverAddr(1 + g.rng.IntN(2)).Addr(),
		netip.AddrFrom4([4]byte{10, 0, 7, byte(g.rng.Uint32())}), netip.AddrFrom4([4]byte{192, 168, 1, 1}), diffSwitchAddr.Addr()}
	dst := netip.AddrPortFrom(pick(g, dsts), uint16(g.rng.IntN(65536)))
	if g.pct(20) {
		dst = netip.AddrPortFrom(dst.Addr(), wire.Port)
	}
	payload := make([]byte, g.rng.IntN(80))
	for i := range payload {
		payload[i] = byte(g.rng.Uint32())
	}
	fr := udpframe.Append(nil, udpframe.Endpoint{MAC: hostMAC(clientAddr(c).Addr()), Addr: clientAddr(c)},
		udpframe.Endpoint{MAC: rigSwitchMAC, Addr: dst}, payload)
	ip := fr[udpframe.EthLen : udpframe.EthLen+udpframe.IPv4Len]
	if g.pct(30) {
		ip[9] = pick(g, []byte{1, 6, 47, byte(g.rng.Uint32())})
	}
	if g.pct(30) {
		ip[8] = byte(g.rng.IntN(3))
	}
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], udpframe.Checksum(ip, 0))
	if g.pct(10) {
		ip[10] ^= 0x40
	}
	return fmt.Sprintf("routed to %v proto %d ttl %d", dst, ip[9], ip[8]), c, fr, false, nil
}

// change applies a random control-plane change to both switches.
func (g *genDiff) change() (string, int, []byte, bool, error) {
	if g.rackUnset || g.pct(15) { // the rack configuration taken away, or set again
		g.rackUnset = !g.rackUnset
		if !g.rackUnset {
			return "rack set again", 0, nil, false, g.control(func(sw *Switch) error { return sw.SetRack(gdRack) })
		}
		return "rack unset", 0, nil, false, g.control(func(sw *Switch) error {
			tb, err := sw.Table(dataplane.TableRack)
			if err != nil {
				return err
			}
			tb.ResetDefault()
			return nil
		})
	}
	i := g.rng.IntN(7)
	l := &g.locks[i]
	switch x := g.rng.IntN(4); {
	case x == 0 && l.entry != nil: // delete
		e := l.entry
		l.entry = nil
		return fmt.Sprintf("delete lock %d", e.Lock), 0, nil, false, g.control(func(sw *Switch) error { return sw.DeleteLock(e.Lock) })
	case x <= 1: // (re)insert or move to fresh regions (while the pool lasts), paused or not
		// Servers 1 and 2 are in lock_servers; 3 is not (server_unknown).
		e := dataplane.LockEntry{Lock: l.id, Index: uint32(i), Server: uint16(1 + g.rng.IntN(2)), Paused: g.pct(30)}
		if g.pct(25) {
			e.Server = 3
		}
		if l.entry != nil {
			e.Regions = l.entry.Regions
		}
		if l.entry == nil || g.pct(50) {
			for lv := range e.Regions {
				size := 1 + g.rng.Uint32N(3)
				if g.slotsUsed+size > uint32(g.sz.sz.Slots()) {
					g.slotsUsed = 0
				}
				e.Regions[lv] = dataplane.Region{Left: g.slotsUsed, Size: uint16(size)}
				g.slotsUsed += size
			}
		}
		l.entry = &e
		return fmt.Sprintf("set lock %+v", e), 0, nil, false, g.control(func(sw *Switch) error { return sw.SetLock(e) })
	default: // a tenant's rate
		t := uint16(1 + g.rng.IntN(2))
		rate, burst := float64(1+g.rng.IntN(5000)), uint64(1+g.rng.IntN(5))
		return fmt.Sprintf("tenant %d rate %v burst %d", t, rate, burst), 0, nil, false,
			g.control(func(sw *Switch) error { return sw.SetTenantLimit(t, int(t), rate, burst) })
	}
}

// TestGenDifferential runs one random sequence per sizing through the interpreter and the
// generated pipeline of p4/netlock.p4 (see the comment at the top of this file).
func TestGenDifferential(t *testing.T) {
	seed := *genDiffSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	n := genDiffPackets()
	for _, sz := range gdSizings {
		t.Run(sz.name, func(t *testing.T) {
			t.Logf("seed %d, %d packets (re-run: go test ./p4/dataplane/dpengine -run '^TestGenDifferential/%s$' -gendiff.seed=%d -gendiff.n=%d)",
				seed, n, sz.name, seed, n)
			g, err := newGenDiff(seed, sz, gdLoadGen)
			if err != nil {
				t.Fatal(err)
			}
			if d := g.run(n); d.kind != gdEqual {
				t.Fatal(d.text)
			}
			t.Logf("the reference's outputs: %s", seenString(g.seen))
			t.Logf("the reference's table actions: %s", seenString(g.reached))
			if n < gdCoverageMin {
				t.Logf("%d packets: shorter than %d, what the sequence reached is not checked", n, gdCoverageMin)
				return
			}
			for _, p := range gdCoverage(g.ref, g.reached, g.seen) {
				t.Errorf("seed %d: the sequence did not reach %s", seed, p)
			}
		})
	}
}

func seenString(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %d; ", k, m[k])
	}
	return b.String()
}

// gdCoverageMin is the shortest sequence whose coverage TestGenDifferential checks (a
// shorter -gendiff.n, to re-run a failure, is not held to it): 10 000 packets, the length
// under -race.
const gdCoverageMin = 10000

// gdUnreachable are the (table, action) pairs of p4/netlock.p4 that the differential
// sequence cannot reach, with the reason. gdCoverage fails on any other pair never run.
// Empty: every pair is reached (rack_unset by taking the rack configuration away for a while,
// server_unknown by lock 6, which starts on server 3, not in lock_servers, and locks moved
// there; 30 seeds of 10 000 packets all reached every pair). Actions that
// p4/netlock.p4 calls directly, not through a table, are not seen by Config.OnTable and not
// counted here; the output kinds of gdOutputsRequired stand for them.
var gdUnreachable = map[string]string{}

// gdOutputsRequired are the kinds of the reference's outputs (genDiff.seen) every sequence
// must produce: a sequence without them did not exercise the lock queues, the overflow path,
// the control plane's packet-ins or routing.
var gdOutputsRequired = []string{"grant", "overflow", "queue-empty", "packet-in", "routed"}

// gdCoverage lists what a sequence on sw did not reach: every (table, action) pair of sw's
// program not in reached (OnTable's "table/action" counts) and not in gdUnreachable, and
// every output kind of gdOutputsRequired not in seen.
func gdCoverage(sw *Switch, reached, seen map[string]int) []string {
	var missing []string
	for _, tb := range sw.Tables() {
		for _, a := range tb.Actions() {
			k := tb.Name + "/" + a.Name
			if _, ok := gdUnreachable[k]; !ok && reached[k] == 0 {
				missing = append(missing, "table action "+k)
			}
		}
	}
	for _, k := range gdOutputsRequired {
		if seen[k] == 0 {
			missing = append(missing, "an output of kind "+k)
		}
	}
	return missing
}

// TestGenDiffCoverageCatches is gdCoverage's negative control: with every table action and
// output kind reached it reports nothing; with one table action or one output kind taken away
// it reports exactly that one; and every pair gdUnreachable lists is one of the program's.
func TestGenDiffCoverageCatches(t *testing.T) {
	sw, err := gdLoadInterp(gdSizings[0].sz, engine.Config{})
	if err != nil {
		t.Fatal(err)
	}
	reached, seen := map[string]int{}, map[string]int{}
	for _, tb := range sw.Tables() {
		for _, a := range tb.Actions() {
			reached[tb.Name+"/"+a.Name] = 1
		}
	}
	for _, k := range gdOutputsRequired {
		seen[k] = 1
	}
	if len(reached) < 10 {
		t.Fatalf("p4/netlock.p4 has %d table actions: the program changed, update the test", len(reached))
	}
	for k := range gdUnreachable {
		if reached[k] == 0 {
			t.Errorf("gdUnreachable lists %s, which is not a table action of p4/netlock.p4", k)
		}
	}
	if m := gdCoverage(sw, reached, seen); len(m) != 0 {
		t.Fatalf("everything reached: gdCoverage = %q", m)
	}
	for k := range reached {
		if _, ok := gdUnreachable[k]; ok {
			continue
		}
		delete(reached, k)
		if m := gdCoverage(sw, reached, seen); len(m) != 1 || m[0] != "table action "+k {
			t.Errorf("%s never run: gdCoverage = %q", k, m)
		}
		reached[k] = 1
	}
	for _, k := range gdOutputsRequired {
		delete(seen, k)
		if m := gdCoverage(sw, reached, seen); len(m) != 1 || m[0] != "an output of kind "+k {
			t.Errorf("no %s output: gdCoverage = %q", k, m)
		}
		seen[k] = 1
	}
}
