package dpengine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

// The programs agree: p4/netlock.p4 and p4/tna/netlock.p4 run the same seeded sequences as the
// differential test (each with a lockcore q2 of its own, and the oracle checking the first),
// and after every input they must have sent the same packets in the same order (grants with
// equal tokens: both number grants alike), the same control messages to the server and the
// same admin replies, and hold the same lock state: per-lock registers and the slots of every
// lock's regions, field by field (the TNA program keeps them in 32-bit halves). Six inputs in
// a hundred are admin probes of a random lock, level and offset (read-only, so the oracle is
// not affected). The TNA program runs as one Pipeline (tna) and as the Tofino 1 fold
// (tna-fold: dataplane.TNAFold, two Pipelines on a chip of two pipes; its registers read from the
// Pipeline that uses them). Re-run one sequence with -seed=N.
func TestProgramsAgree(t *testing.T) {
	n := 200
	if testing.Short() || raceDetector {
		n = 20
	}
	for _, prog := range []dataplane.Program{dataplane.TNA, dataplane.TNAFold} {
		for _, rules := range diffConfigs {
			name := prog.Label() + "/" + rules.name
			t.Run(name, func(t *testing.T) {
				a := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
				b := newDiffSwitch(t, prog, rules, nil, engine.PipelineInterpreted)
				for _, seed := range diffSeeds(t, n) {
					ok := t.Run("", func(t *testing.T) {
						defer func() {
							if t.Failed() {
								t.Logf("seed %d (re-run: go test ./p4/dataplane/dpengine -run 'TestProgramsAgree/%s' -seed=%d)", seed, name, seed)
							}
						}()
						runDiff(t, a, b, rules, seed)
					})
					if !ok {
						return
					}
				}
			})
		}
	}
}

// TestProgramsAgreeCatches is its negative control: TNA programs that break one rule each (a
// grant walk that stops after the first waiter, a rule the oracle also checks; a slot without
// its forwarded flag, whose grants then lack it; a pending grant sent with the txn of the slot
// its pass examines, whose high half differs: the sequences draw it at random; ...) must be told
// apart from the v1model program. TestStateDiffCatches covers the state comparison alone.
func TestProgramsAgreeCatches(t *testing.T) {
	for _, m := range []mutant{
		{"walk-stops-early", "a grant walk goes on while waiters are compatible",
			"if (SV_STATE == SS_LIVE && SV_MODE == MODE_X) {\n                pass_on = 0;",
			"if (SV_STATE == SS_LIVE) {\n                pass_on = 0;"},
		{"slot-forgets-forwarded", "the slot keeps whether the server pushed the request back",
			"meta.n_flags = nflags_h.get({hdr.nl.mode, hdr.nl.prio, meta.rq_fwd});",
			"meta.n_flags = nflags_h.get({hdr.nl.mode, hdr.nl.prio, 8w0});"},
		{"route-pending-grant-to-requester", "the next hop of a grant walk's pending grant is the granted client's",
			"meta.route_dst = hdr.a_ip.dip;",
			"meta.route_dst = hdr.nl.cip;"},
		{"pending-grant-txn-of-examined-slot", "a pending grant's txn is its own slot's (read at hd_idx), not the examined one's",
			"hdr.a_nl.txn_hi = txn_hi_rd.execute(meta.hd_idx);",
			"hdr.a_nl.txn_hi = txn_hi_rd.execute(meta.sl_idx);"},
		{"grant-walk-slot-by-priority", "a grant walk examines the slot at the level it walks",
			"(PH_GRANT, _, 0, _, _, _) : P##cur0();",
			"(PH_GRANT, 0, _, _, _, _) : P##cur0();"},
		{"write-slot-other-level", "the writing pass writes the slot at the request's level",
			"(PH_WRITE, 0, _, _, _, _) : P##off0(); \\\n            (PH_WRITE, _, _, _, _, _) : P##off1();",
			"(PH_WRITE, 0, _, _, _, _) : P##off1(); \\\n            (PH_WRITE, _, _, _, _, _) : P##off0();"},
	} {
		t.Run(m.name, func(t *testing.T) {
			src := mutate(t, dataplane.TNA, m.from, m.to)
			// The configuration with overflow first: the forwarded flag is set by push-backs.
			for _, rules := range []diffRules{diffConfigs[1], diffConfigs[0], diffConfigs[2], diffConfigs[3]} {
				a := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
				b := newDiffSwitch(t, dataplane.TNA, rules, src, engine.PipelineInterpreted)
				for seed := uint64(1); seed <= 200; seed++ {
					if msg := agreeFails(a, b, rules, seed); msg != "" {
						t.Logf("caught (%s) by configuration %s, seed %d:\n%.500s", m.rule, rules.name, seed, msg)
						return
					}
				}
			}
			t.Errorf("mutant %s (breaks: %s) agreed with the v1model program", m.name, m.rule)
		})
	}
}

// agreeFails runs seed on both programs (on a alone against lockcore when b is nil) and returns
// the first failure, or "".
func agreeFails(a, b *rig, rules diffRules, seed uint64) (msg string) {
	rec := &recorder{}
	a.t = rec
	if b != nil {
		b.t = rec
	}
	defer func() {
		if x := recover(); x != nil {
			if _, ok := x.(stopRun); !ok {
				panic(x)
			}
			msg = rec.msg
		}
	}()
	runDiff(rec, a, b, rules, seed)
	return ""
}

// adminProbe sends both programs a probe of a random lock (one not in the switch too), level
// (2 is a bad request) and offset.
func (d *diffRun) adminProbe() {
	d.t.Helper()
	req := dataplane.AdminRequest{Op: wire.AdminSwitchProbe, ID: uint16(d.rng.IntN(1 << 16)), Lock: uint32(d.rng.IntN(d.rules.locks + 1)),
		Level: uint8(d.rng.IntN(3)), Offset: uint16(d.rng.IntN(int(max(d.rules.sizes[0], d.rules.sizes[1])) + 2))}
	what := fmt.Sprintf("admin probe lock=%d level=%d offset=%d", req.Lock, req.Level, req.Offset)
	d.log = append(d.log, what)
	for _, s := range []*sut{d.sw, d.sw2} {
		s.out, s.srv, s.pins = s.out[:0], s.srv[:0], s.pins[:0]
		s.admin(&req)
		if s.failed != "" {
			d.fail("%s: %s", what, s.failed)
		}
	}
	if len(d.sw.pins) != 1 {
		d.fail("%s: %d replies from the v1model program", what, len(d.sw.pins))
	}
	d.agree(what)
}

// agree compares what the two programs sent for the last input, and their lock state.
func (d *diffRun) agree(what string) {
	d.t.Helper()
	a, b := d.sw, d.sw2
	if !slices.Equal(a.out, b.out) {
		d.fail("%s: the programs answered differently\n%s:\n%s%s:\n%s", what, dataplane.V1Model.Name, msgs(a.out), dataplane.TNA.Name, msgs(b.out))
	}
	if !slices.Equal(a.srv, b.srv) {
		d.fail("%s: the programs sent the server different messages\n%s:\n%s%s:\n%s", what, dataplane.V1Model.Name, msgs(a.srv),
			dataplane.TNA.Name, msgs(b.srv))
	}
	a.srv, b.srv = a.srv[:0], b.srv[:0]
	if !slices.EqualFunc(a.pins, b.pins, bytes.Equal) {
		d.fail("%s: the programs' admin replies differ\n%s: %x\n%s: %x", what, dataplane.V1Model.Name, a.pins, dataplane.TNA.Name, b.pins)
	}
	a.pins, b.pins = a.pins[:0], b.pins[:0]
	if diff := stateDiff(a.r.sw, b.r.sw, d.rules); diff != "" {
		d.fail("%s: the programs' lock state differs: %s", what, diff)
	}
}

func msgs(ms []msg) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "    %s token=%d\n", m, m.f.Token)
	}
	return b.String()
}

// regCache looks registers up once per switch.
var regCache = map[*Switch]map[string]*engine.Register{}

// reg reads cell i of a register as a number (0 when the register does not exist).
func reg(sw *Switch, name string, i int) uint64 {
	m := regCache[sw]
	if m == nil {
		m = map[string]*engine.Register{}
		regCache[sw] = m
	}
	r, ok := m[name]
	if !ok {
		r, _ = sw.Register(name)
		m[name] = r
	}
	if r == nil {
		return 0
	}
	v, _ := r.Read(i)
	var x uint64
	for _, c := range v {
		x = x<<8 | uint64(c)
	}
	return x
}

// Register names stateDiff compares.
var (
	levelRegs [dataplane.Levels][3]string
	poolRegs  [dataplane.Parts][]string // the v1model program's, per part (index: the slot in the part)
	poolTNA   []string                  // the TNA program's: one array per field (index: the slot)
)

func init() {
	for lv := range levelRegs {
		for i, f := range []string{"head", "tail", "gnext"} {
			levelRegs[lv][i] = fmt.Sprintf("NetlockIngress.levels.level%d.%s", lv, f)
		}
	}
	for p := range poolRegs {
		pre := fmt.Sprintf("NetlockIngress.pool.part%d.", p)
		for _, f := range []string{"s_txn", "s_hold", "s_flags", "s_who", "s_ts"} {
			poolRegs[p] = append(poolRegs[p], pre+f)
		}
	}
	for _, f := range []string{"s_txn_hi", "s_txn_lo", "s_hold", "s_flags", "s_lease", "s_ip", "s_port", "s_tenant", "s_ts_hi", "s_ts_lo", "s_gtime"} {
		poolTNA = append(poolTNA, "NetlockIngress.pool."+f)
	}
}

// tnaState converts the TNA program's lk_state cell (hi ++ lo; lo: the holders plus 0x10000
// while the holder is exclusive; hi: the exclusive waiters at level 0 times 0x10000 plus those
// at level 1) into the v1model program's layout ([14:0] holders, [15] exclusive, [31:16]
// exclusive waiters at level 0, [47:32] at all levels).
func tnaState(c uint64) uint64 {
	lo, hi := c&0xffffffff, c>>32
	n, x := lo&0xffff, lo>>16&1
	w0, w1 := hi>>16&0xffff, hi&0xffff
	return (w0+w1)&0xffff<<32 | w0<<16 | x<<15 | n&0x7fff
}

// tnaQueue is the TNA program's queue counters of lock l in the v1model program's RegisterQueue
// layout (dataplane.TNAQueueParts).
func tnaQueue(tna *Switch, l int) uint64 {
	var q uint64
	for _, p := range dataplane.TNAQueueParts {
		q |= reg(tna, p.Register, l) << p.Shift
	}
	return q
}

// stateDiff compares the lock state of a v1model switch and a TNA switch set up by
// newDiffSwitch: the per-lock registers and the slots of the locks' regions.
func stateDiff(v1, tna *Switch, rules diffRules) string {
	for l := 0; l < rules.locks; l++ {
		if x, y := reg(v1, dataplane.RegisterQueue, l), tnaQueue(tna, l); x != y {
			return fmt.Sprintf("%s[%d] = %#x and %#x", dataplane.RegisterQueue, l, x, y)
		}
		if x, y := reg(v1, dataplane.RegisterState, l), tnaState(reg(tna, dataplane.RegisterState, l)); x != y {
			return fmt.Sprintf("%s[%d] = %#x and %#x (TNA layout %#x)", dataplane.RegisterState, l, x, y, reg(tna, dataplane.RegisterState, l))
		}
		// The TNA program keeps these in two 32-bit registers: the low half, and the high half
		// in the register named *High.
		for _, name := range [][2]string{{dataplane.RegisterWait, dataplane.RegisterWaitHigh}, {dataplane.RegisterFloor, dataplane.RegisterFloorHigh}} {
			if x, y := reg(v1, name[0], l), reg(tna, name[1], l)<<32|reg(tna, name[0], l); x != y {
				return fmt.Sprintf("%s[%d] = %#x and %#x", name[0], l, x, y)
			}
		}
		if x, y := reg(v1, dataplane.RegisterToken, l), reg(tna, dataplane.RegisterTokenHigh, l)<<32|reg(tna, dataplane.RegisterToken, l); x != y {
			return fmt.Sprintf("grant counter of lock %d: %d and %d", l, x, y)
		}
		for lv := 0; lv < dataplane.Levels; lv++ {
			for _, name := range levelRegs[lv] {
				if x, y := reg(v1, name, l), reg(tna, name, l); x != y {
					return fmt.Sprintf("%s[%d] = %#x and %#x", name, l, x, y)
				}
			}
		}
	}
	slots := rules.locks * int(rules.sizes[0]+rules.sizes[1])
	bits := v1.Sizing.WithDefaults().PartBits
	for s := 0; s < slots; s++ {
		part, i := s>>bits, s&(1<<bits-1)
		a := poolRegs[part]
		t := func(k int) uint64 { return reg(tna, poolTNA[k], s) }
		want := [5]uint64{t(0)<<32 | t(1), t(2)<<32 | t(10), t(3)<<32 | t(4), t(5)<<32 | t(6)<<16 | t(7), t(8)<<32 | t(9)}
		for k, name := range a {
			if x := reg(v1, name, i); x != want[k] {
				return fmt.Sprintf("slot %d: %s = %#x and %#x", s, name, x, want[k])
			}
		}
	}
	return ""
}

// TestStateDiffCatches is the negative control of the state comparison: after a sequence on
// which the programs agree, one cell changed in the TNA switch (a per-lock register, the high
// half of the grant counter, a level's head, a slot's 32-bit half) must be reported, naming
// the register or the slot; restoring it makes the states equal again.
func TestStateDiffCatches(t *testing.T) {
	rules := diffConfigs[0]
	a := newDiffSwitch(t, dataplane.V1Model, rules, nil, engine.PipelineInterpreted)
	b := newDiffSwitch(t, dataplane.TNA, rules, nil, engine.PipelineInterpreted)
	runDiff(t, a, b, rules, 7)
	if d := stateDiff(a.sw, b.sw, rules); d != "" {
		t.Fatalf("the programs differ after seed 7: %s", d)
	}
	slot := rules.locks*int(rules.sizes[0]+rules.sizes[1]) - 1
	bits := b.sw.Sizing.WithDefaults().PartBits
	for _, c := range []struct {
		reg  string
		cell int
		want string
	}{
		{dataplane.RegisterWait, 1, dataplane.RegisterWait + "[1]"},
		{dataplane.RegisterTokenHigh, 0, "grant counter of lock 0"},
		{levelRegs[1][0], rules.locks - 1, fmt.Sprintf("%s[%d]", levelRegs[1][0], rules.locks-1)},
		{poolTNA[4], slot, fmt.Sprintf("slot %d: %s", slot, poolRegs[slot>>bits][2])},
	} {
		t.Run(c.reg, func(t *testing.T) {
			r, err := b.sw.Register(c.reg)
			if err != nil {
				t.Fatal(err)
			}
			old, err := r.Read(c.cell)
			if err != nil {
				t.Fatal(err)
			}
			v := append([]byte(nil), old...)
			v[len(v)-1] ^= 1
			must(t, r.Write(c.cell, v))
			d := stateDiff(a.sw, b.sw, rules)
			must(t, r.Write(c.cell, old))
			if !strings.Contains(d, c.want) {
				t.Errorf("cell %d of %s changed: stateDiff said %q, want it to name %q", c.cell, c.reg, d, c.want)
			}
			if d := stateDiff(a.sw, b.sw, rules); d != "" {
				t.Errorf("restored: %s", d)
			}
		})
	}
}
