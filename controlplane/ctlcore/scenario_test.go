package ctlcore

// Scenario tests: each file in testdata/ runs the controller's Core (one, or a primary and its
// backups) against a scripted rack in virtual time, with the Core's effects as the expected
// output (github.com/cockroachdb/datadriven). The rack (scriptRack, scenario_rack_test.go) is
// made of the real cores: the switch is p4/netlock.p4 on the P4 engine (dpengine), the servers
// and standbys are lockserver/srvcore cores; it carries out every effect on them, sends the
// clients' requests through them, and reports a VIOLATION line when two clients hold one lock at
// once or a token does not grow.
// Regenerate the expectations with
//
//	go test ./controlplane/ctlcore -run Scenarios -rewrite
//
// and review every changed line against docs/controlplane.md: a golden file that records a bug is
// worse than none.
//
// Grammar (one command per block; arguments are key=value, durations in Go syntax, lists in
// parentheses):
//
//	rack [servers=N] [standbys] [hosts] [tenants] [every-level] [cookie=C] [lease=DUR] [max-lease=DUR]
//	     [server-lease=DUR] [margin=DUR] [ping=DUR] [dead-after=N] [sweep=DUR] [alloc=DUR]
//	     [poll=DUR] [move-timeout=DUR] [max-grant-rate=R] [max-region=N] [hysteresis=F]
//	     [min-rate=R] [slots=N] [timeout=DUR] [mutation=NAME]
//	    Starts at time 0 with controller a (a Core in the Backup phase) and a rack of N servers
//	    (default 2): server n is 10.0.0.n:8888 on switch port n (MAC 02:00:00:00:01:0n); with
//	    standbys, standby n waits on port 10+n (MAC 02:00:00:00:02:0n); hosts adds the clients'
//	    route 10.0.1.0/24 on port 20 (the clients' port: without the route the switch drops every
//	    answer to a client, its own grants among them, so a rack whose clients acquire through the
//	    switch needs it), tenants a tenant quota, every-level Config.SizeEveryLevel. The switch has
//	    no pipeline yet; its program is sized to 16 lock indices and 32 slots (Sizing{Locks: 16,
//	    PartBits: 3}), so a switch token is counter<<5 | slot. Server processes start at epoch 0
//	    (tokens 1, 2, ...), term 0, instance n (standbys 100+n). Defaults: lease 100ms, max-lease 200ms, server-lease 0 (servers not
//	    fenced), margin 5ms, ping 100ms, dead-after 3, sweep 50ms, poll 5ms, max-region 4,
//	    max-grant-rate 1000 per second, cookie 7, timeout 50ms (the shell's deadline for an
//	    answer); allocation periods run only on reallocate unless alloc= is given. The switch
//	    refuses the P4Runtime writes and packet-outs (switch admin requests) of every controller
//	    but the last one told it is primary; server admin requests go to whichever process the
//	    switch routes the server's address to (the request enters the switch on port 30 from
//	    10.0.2.1; the answer comes back out of band). mutation= sets
//	    TestingKnobs.Mutation: skip-drain, skip-barrier, skip-token-base, skip-floor,
//	    skip-yield-drain, skip-recovery-wait, grace-from-answer. A rack without one must see no
//	    VIOLATION, one with one at least one (the test fails otherwise, whatever the file says).
//	controller name=B
//	    Adds controller B, a Core of the same configuration in the Backup phase. With more than
//	    one controller every effect line starts with its controller's name.
//	primary [c=NAME] [off]
//	    Tells controller NAME (default a) it is (or, with off, is no longer) the switch's primary.
//	advance DUR [hide=(S,...)]
//	    Lets DUR pass: every Core is ticked at its deadlines, the rack's scheduled events happen
//	    (timeouts of unanswered requests, a server's late echo, lease ends). Effects stay pending.
//	run DUR [c=NAME] [hide=(S,...)]
//	    As advance, but the rack answers every effect (of controller NAME only, if given) as soon
//	    as it is emitted, the pending ones first; a request that reaches nobody is answered
//	    ErrTimeout `timeout` later.
//	answer [c=NAME] [id=N | id=(N,...)] [err=timeout|not-found|exists|unavailable] [lost]
//	    Answers the pending effects named (default: every one pending, by controller and id):
//	    the rack carries each out and the Core gets its Result. err= answers with that error
//	    without carrying it out; lost carries it out and answers ErrTimeout (a lost reply).
//	pending [c=NAME]
//	    Lists the effects that wait for their Result.
//	acquire lock=L txn=T [lease=DUR] [server=N] [direct]
//	release lock=L txn=T [direct]
//	    A client acquires (exclusively) or releases lock L: through the switch when the lock
//	    has an entry there, else at its server (server= names it, once per lock); direct: a
//	    client on the server's side of a cut, straight to its server's process.
//	traffic lock=L n=N [server=N] [depth=D] [declared=C]
//	    N more requests of lock L: the switch entry's lock_hits counter goes up by N when it has
//	    one (written through the engine's runtime API), else N real requests reach its server
//	    through the switch: max(D,1) acquires (the first declaring C), lease probes of the first
//	    holder, and the releases, one after the other (N >= 2 max(D,1)). Their grants are checked
//	    but not printed; they use tokens (a server's next token is one higher per grant) and the
//	    server reports a depth of at least 1.
//	switch restart [keep-pipeline] | switch down | switch up
//	    restart: the switch loses its pipeline, tables, clone sessions and registers
//	    (keep-pipeline: only its registers, the cookie 0 among them); holders of its grants keep them until their leases
//	    end. down: it answers nothing (writes fail, admin packets time out) and carries no
//	    traffic.
//	server n=N [standby] cut|heal|mute|unmute|restart [echo=DUR] [epoch=E] [term=T] [drop-answers=K]
//	    Server N's process (or its standby's): cut off from the rack (it keeps its holders, and
//	    grants to direct clients while its controller lease lasts) and back; mute drops the
//	    switch's queue-empties (no barrier echo); echo= delays what it sends into the switch (its
//	    push-backs among them); restart starts a new process instance (a new srvcore.Core: the
//	    next epoch, term 0, its locks' state, resident marks and q2 gone, a grace of max-lease);
//	    epoch= replaces the process by one started at epoch E (as if its state file said so; use
//	    it before the process holds anything); term= raises the controller term it has seen (an
//	    admin ping with that term, as an earlier primary's); drop-answers= loses its next K admin
//	    answers (the requests are carried out).
//	reallocate [c=NAME]
//	evict lock=L [c=NAME]
//	    Core.Reallocate (an allocation period now) and Core.Evict, with the effects they emit.
//	state [c=NAME]
//	    The Core: phase, term, cookie, token observation, servers, locks, staging entries, counters.
//	rack-state
//	    The rack: the switch's entries and registers, the server processes, the live grants.
//
// Output: lines grouped under "@T" (virtual time since the start). An effect is its String();
// with run it is followed by " -> " and the rack's answer (described from the reply the switch or
// the server sent), with answer the line is "#ID -> ANSWER". Lines indented by two spaces are what
// happened in the rack, read from the packets (grants, releases, rejects, overflows, push-backs,
// barrier echoes as they reach the switch, takeovers, what the switch drops of a client's
// request or of its answer, with the program's drop reason); "VIOLATION" lines break the rules the Core keeps (two holders of one
// lock, a token that does not grow). hide= leaves out the effect lines containing one of the
// strings (the rack's lines stay).

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/netlock-go/netlock/p4/dataplane"
	"github.com/netlock-go/netlock/wire"
)

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{t: t}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			s.b.Reset()
			s.headed = false
			if err := s.run(d); err != nil {
				d.Fatalf(t, "%v", err)
			}
			if s.b.Len() == 0 {
				return "ok\n"
			}
			return s.b.String()
		})
		s.checkRack()
	})
}

// checkRack holds a rack's violations to its configuration, whatever its golden output says (a
// rewrite must not record a bug): none for the Core, at least one for a negative control.
func (s *scenario) checkRack() {
	if s.fake == nil {
		return
	}
	m := s.cfg.TestingKnobs.Mutation
	switch {
	case m == NoMutation && s.fake.bad > 0:
		s.t.Errorf("the rack at %s saw %d violations", s.rackLine, s.fake.bad)
	case m != NoMutation && s.fake.bad == 0:
		s.t.Errorf("negative control (mutation %d) of the rack at %s: no violation", m, s.rackLine)
	}
}

type scenarioCtl struct {
	name    string
	core    *Core
	pending []Effect // emitted, not answered yet, in emission order
	seen    map[uint64]bool
}

type scenario struct {
	t        *testing.T
	cfg      Config
	fake     *scriptRack
	rackLine string // where the rack command of fake is
	ctls     []*scenarioCtl
	now      time.Time

	b      strings.Builder
	header time.Time
	headed bool
	hide   []string
	// auto: effects are answered as they are emitted (run), those of autoCtl only if set; queue
	// holds them meanwhile.
	auto    bool
	autoCtl string
	queue   []queued
	// rackLines holds the rack's lines while an effect is carried out, to print them after it.
	buffering bool
	rackLines []string
}

type queued struct {
	c *scenarioCtl
	e Effect
}

type args map[string][]string

func parseArgs(d *datadriven.TestData) args {
	a := args{}
	for _, ca := range d.CmdArgs {
		a[ca.Key] = ca.Vals
	}
	return a
}

func (a args) has(k string) bool { _, ok := a[k]; return ok }

func (a args) str(k, def string) string {
	if v, ok := a[k]; ok && len(v) > 0 {
		return v[0]
	}
	return def
}

func (a args) uint(k string, def uint64) (uint64, error) {
	v, ok := a[k]
	if !ok || len(v) == 0 {
		return def, nil
	}
	n, err := strconv.ParseUint(v[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", k, v[0], err)
	}
	return n, nil
}

func (a args) float(k string, def float64) (float64, error) {
	v, ok := a[k]
	if !ok || len(v) == 0 {
		return def, nil
	}
	f, err := strconv.ParseFloat(v[0], 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", k, v[0], err)
	}
	return f, nil
}

func (a args) dur(k string, def time.Duration) (time.Duration, error) {
	v, ok := a[k]
	if !ok || len(v) == 0 {
		return def, nil
	}
	d, err := time.ParseDuration(v[0])
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", k, v[0], err)
	}
	return d, nil
}

var mutations = map[string]Mutation{"skip-drain": MutationSkipDrain, "skip-barrier": MutationSkipBarrier,
	"skip-token-base": MutationSkipTokenBase, "skip-floor": MutationSkipFloor, "skip-yield-drain": MutationSkipYieldDrain,
	"skip-recovery-wait": MutationSkipRecoveryWait, "grace-from-answer": MutationGraceFromAnswer}

// line prints one line of the command's output under the current instant's "@T" head.
func (s *scenario) line(format string, args ...any) {
	if s.buffering {
		s.rackLines = append(s.rackLines, fmt.Sprintf(format, args...))
		return
	}
	if !s.headed || !s.header.Equal(s.now) {
		fmt.Fprintf(&s.b, "@%v\n", s.now.Sub(t0))
		s.header, s.headed = s.now, true
	}
	fmt.Fprintf(&s.b, format+"\n", args...)
}

func (s *scenario) hidden(e Effect) bool {
	str := e.String()
	for _, h := range s.hide {
		if strings.Contains(str, h) {
			return true
		}
	}
	return false
}

func (s *scenario) prefix(c *scenarioCtl) string {
	if len(s.ctls) > 1 {
		return c.name + ": "
	}
	return ""
}

func (s *scenario) ctl(a args) (*scenarioCtl, error) {
	name := a.str("c", "a")
	for _, c := range s.ctls {
		if c.name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no controller %q", name)
}

// step hands the Core of c one input and takes its effects: printed (and left pending), or
// queued to be answered (run).
func (s *scenario) step(c *scenarioCtl, in Input) {
	for _, e := range c.core.Step(s.now, in) {
		if c.seen[e.EffectID()] {
			s.t.Fatalf("%s: effect id %d emitted twice: %v", c.name, e.EffectID(), e)
		}
		c.seen[e.EffectID()] = true
		c.pending = append(c.pending, e)
		if s.autoFor(c) {
			s.queue = append(s.queue, queued{c, e})
			continue
		}
		if !s.hidden(e) {
			s.line("%s%v", s.prefix(c), e)
		}
	}
}

func (s *scenario) autoFor(c *scenarioCtl) bool {
	return s.auto && (s.autoCtl == "" || s.autoCtl == c.name)
}

var answerErrs = map[string]error{"timeout": ErrTimeout, "not-found": ErrNotFound, "exists": ErrAlreadyExists,
	"unavailable": errUnavailable}

// answerOne answers e of c: with errName's error, or by carrying it out in the rack (lost: the
// reply is lost). merged prints the effect and its answer on one line.
func (s *scenario) answerOne(c *scenarioCtl, e Effect, errName string, lost, merged bool) {
	i := slices.IndexFunc(c.pending, func(p Effect) bool { return p.EffectID() == e.EffectID() })
	if i < 0 {
		s.t.Fatalf("%s: effect %d answered twice", c.name, e.EffectID())
	}
	c.pending = slices.Delete(c.pending, i, i+1)
	var res Result
	var delay time.Duration
	var desc string
	s.buffering = true
	if errName != "" {
		res, desc = Result{ID: e.EffectID(), Err: answerErrs[errName]}, errName
	} else {
		res, delay, desc = s.fake.answer(c.name, e)
		if lost {
			res, delay, desc = Result{ID: e.EffectID(), Err: ErrTimeout}, 0, "reply lost: "+desc
		}
	}
	s.buffering = false
	if !s.hidden(e) {
		if merged {
			s.line("%s%v -> %s", s.prefix(c), e, desc)
		} else {
			s.line("%s#%d -> %s", s.prefix(c), e.EffectID(), desc)
		}
	}
	lines := s.rackLines
	s.rackLines = nil
	for _, l := range lines {
		s.line("%s", l)
	}
	if delay > 0 {
		s.fake.at(s.now.Add(delay), func() { s.step(c, res) })
		return
	}
	s.step(c, res)
}

// settle does everything due now: the rack's events, its servers' lease ends, the Cores'
// timers and, with run, the answers of every effect emitted.
func (s *scenario) settle() {
	for i := 0; ; i++ {
		if i > 1_000_000 {
			s.t.Fatalf("no quiescence at %v", s.now.Sub(t0))
		}
		s.fake.now = s.now
		if s.fake.runDue() {
			continue
		}
		s.fake.tick()
		if s.auto && len(s.queue) > 0 {
			q := s.queue[0]
			s.queue = s.queue[1:]
			s.answerOne(q.c, q.e, "", false, true)
			continue
		}
		ticked := false
		for _, c := range s.ctls {
			if dl := c.core.NextDeadline(); !dl.IsZero() && !dl.After(s.now) {
				s.step(c, Tick{})
				ticked = true
			}
		}
		if !ticked {
			return
		}
	}
}

// advance lets d pass, stopping at every deadline of the Cores and the rack.
func (s *scenario) advance(d time.Duration) {
	end := s.now.Add(d)
	for {
		s.settle()
		next := end
		for _, c := range s.ctls {
			if dl := c.core.NextDeadline(); !dl.IsZero() && dl.Before(next) {
				next = dl
			}
		}
		if n := s.fake.next(); !n.IsZero() && n.Before(next) {
			next = n
		}
		if !next.After(s.now) {
			return
		}
		s.now = next
	}
}

func (s *scenario) run(d *datadriven.TestData) error {
	a := parseArgs(d)
	if d.Cmd != "rack" && s.fake == nil {
		return fmt.Errorf("%s before rack", d.Cmd)
	}
	s.hide = a["hide"]
	defer func() { s.hide = nil }()
	switch d.Cmd {
	case "rack":
		s.checkRack()
		s.rackLine = d.Pos
		return s.newRack(a)
	case "controller":
		name := a.str("name", "")
		if name == "" {
			return fmt.Errorf("controller needs name=")
		}
		return s.addCtl(name)
	case "primary":
		c, err := s.ctl(a)
		if err != nil {
			return err
		}
		switch {
		case !a.has("off"):
			s.fake.primary = c.name
		case s.fake.primary == c.name:
			s.fake.primary = ""
		}
		s.step(c, Primary{IsPrimary: !a.has("off")})
		s.settle()
	case "advance", "run":
		if len(d.CmdArgs) == 0 {
			return fmt.Errorf("%s needs a duration", d.Cmd)
		}
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			return err
		}
		if d.Cmd == "run" {
			s.auto, s.autoCtl = true, a.str("c", "")
			defer func() { s.auto, s.autoCtl = false, "" }()
			for _, c := range s.ctls {
				if !s.autoFor(c) {
					continue
				}
				for _, e := range c.pending {
					s.queue = append(s.queue, queued{c, e})
				}
			}
		}
		s.advance(dur)
		if len(s.queue) > 0 {
			return fmt.Errorf("%d effects left unanswered", len(s.queue))
		}
	case "answer":
		return s.answer(a)
	case "pending":
		c, err := s.ctl(a)
		if err != nil {
			return err
		}
		for _, e := range c.pending {
			s.line("%s%v", s.prefix(c), e)
		}
		if len(c.pending) == 0 {
			s.line("(none)")
		}
	case "acquire", "release", "traffic":
		return s.client(d.Cmd, a)
	case "switch":
		return s.switchCmd(d)
	case "server":
		return s.serverCmd(d, a)
	case "reallocate", "evict":
		c, err := s.ctl(a)
		if err != nil {
			return err
		}
		var ok bool
		if d.Cmd == "reallocate" {
			ok = c.core.Reallocate()
		} else {
			id, err := a.uint("lock", 0)
			if err != nil {
				return err
			}
			ok = c.core.Evict(uint32(id))
		}
		if !ok {
			s.line("refused")
		}
		s.step(c, Tick{})
		s.settle()
	case "state":
		c, err := s.ctl(a)
		if err != nil {
			return err
		}
		s.state(c)
	case "rack-state":
		s.fake.now = s.now
		s.fake.describe(&s.b)
	default:
		return fmt.Errorf("unknown command %q", d.Cmd)
	}
	return nil
}

func (s *scenario) newRack(a args) error {
	n, err := a.uint("servers", 2)
	if err != nil {
		return err
	}
	cfg := Config{
		Sizing: dataplane.Sizing{Locks: 16, PartBits: 3},
		Rack: dataplane.Rack{Key: 0x5eed, SwitchIP: netip.MustParseAddr("10.0.0.254"),
			SwitchMAC: dataplane.MAC{2, 0, 0, 0, 0, 0xfe}},
		Manual: true,
	}
	durs := []struct {
		key string
		to  *time.Duration
		def time.Duration
	}{
		{"lease", &cfg.Rack.DefaultLease, 100 * time.Millisecond},
		{"max-lease", &cfg.Rack.MaxLease, 200 * time.Millisecond},
		{"server-lease", &cfg.ServerLease, 0},
		{"margin", &cfg.LeaseMargin, 5 * time.Millisecond},
		{"ping", &cfg.PingPeriod, 100 * time.Millisecond},
		{"sweep", &cfg.SweepPeriod, 50 * time.Millisecond},
		{"poll", &cfg.PollInterval, 5 * time.Millisecond},
		{"move-timeout", &cfg.MoveTimeout, 0},
		{"alloc", &cfg.AllocPeriod, 0},
	}
	for _, d := range durs {
		if *d.to, err = a.dur(d.key, d.def); err != nil {
			return err
		}
	}
	if cfg.AllocPeriod > 0 {
		cfg.Manual = false
	}
	timeout, err := a.dur("timeout", 50*time.Millisecond)
	if err != nil {
		return err
	}
	deadAfter, err := a.uint("dead-after", 3)
	if err != nil {
		return err
	}
	maxRegion, err := a.uint("max-region", 4)
	if err != nil {
		return err
	}
	slots, err := a.uint("slots", 0)
	if err != nil {
		return err
	}
	cfg.Slots = int(slots)
	cookie, err := a.uint("cookie", 7)
	if err != nil {
		return err
	}
	cfg.DeadAfter, cfg.MaxRegion, cfg.Cookie = int(deadAfter), int(maxRegion), cookie
	if cfg.MaxGrantRate, err = a.float("max-grant-rate", 1000); err != nil {
		return err
	}
	if cfg.Hysteresis, err = a.float("hysteresis", 0); err != nil {
		return err
	}
	if cfg.MinRate, err = a.float("min-rate", 0); err != nil {
		return err
	}
	if m := a.str("mutation", ""); m != "" {
		mu, ok := mutations[m]
		if !ok {
			return fmt.Errorf("unknown mutation %q", m)
		}
		cfg.TestingKnobs.Mutation = mu
	}
	for k := uint16(1); k <= uint16(n); k++ {
		addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(k)}), wire.Port)
		cfg.Servers = append(cfg.Servers, Server{Num: k, Addr: addr, Port: int(k), MAC: dataplane.MAC{2, 0, 0, 0, 1, byte(k)}})
		if a.has("standbys") {
			cfg.Standbys = append(cfg.Standbys, Standby{Num: k, Port: 10 + int(k), MAC: dataplane.MAC{2, 0, 0, 0, 2, byte(k)}})
		}
	}
	if a.has("hosts") {
		cfg.Hosts = []Host{{Prefix: netip.MustParsePrefix("10.0.1.0/24"), Port: 20, MAC: dataplane.MAC{2, 0, 0, 0, 3, 0}}}
	}
	cfg.SizeEveryLevel = a.has("every-level")
	if a.has("tenants") {
		cfg.Tenants = []Tenant{{ID: 1, Meter: 0, Rate: 1000, Burst: 100}}
	}
	s.cfg, s.now, s.ctls = cfg, t0, nil
	if err := s.addCtl("a"); err != nil {
		return err
	}
	s.fake, err = newScriptRack(s.ctls[0].core.cfg, s.now, timeout, s.line)
	return err
}

func (s *scenario) addCtl(name string) error {
	c, err := New(s.cfg)
	if err != nil {
		return err
	}
	s.ctls = append(s.ctls, &scenarioCtl{name: name, core: c, seen: map[uint64]bool{}})
	return nil
}

func (s *scenario) answer(a args) error {
	errName := a.str("err", "")
	if _, ok := answerErrs[errName]; errName != "" && !ok {
		return fmt.Errorf("unknown err=%q", errName)
	}
	var targets []queued
	if ids, ok := a["id"]; ok {
		c, err := s.ctl(a)
		if err != nil {
			return err
		}
		for _, v := range ids {
			id, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return err
			}
			i := slices.IndexFunc(c.pending, func(e Effect) bool { return e.EffectID() == id })
			if i < 0 {
				return fmt.Errorf("%s: no effect %d pending", c.name, id)
			}
			targets = append(targets, queued{c, c.pending[i]})
		}
	} else {
		for _, c := range s.ctls {
			if a.has("c") && c.name != a.str("c", "") {
				continue
			}
			for _, e := range c.pending {
				targets = append(targets, queued{c, e})
			}
		}
	}
	if len(targets) == 0 {
		return fmt.Errorf("nothing to answer")
	}
	for _, q := range targets {
		s.answerOne(q.c, q.e, errName, a.has("lost"), false)
	}
	s.settle()
	return nil
}

func (s *scenario) client(cmd string, a args) error {
	id, err := a.uint("lock", 0)
	if err != nil {
		return err
	}
	if a.has("server") {
		n, err := a.uint("server", 0)
		if err != nil {
			return err
		}
		s.fake.home[uint32(id)] = uint16(n)
	}
	s.fake.now = s.now
	switch cmd {
	case "acquire", "release":
		txn, err := a.uint("txn", 0)
		if err != nil {
			return err
		}
		if cmd == "release" {
			if err := s.fake.release(uint32(id), txn, a.has("direct")); err != nil {
				return err
			}
			break
		}
		lease, err := a.dur("lease", 0)
		if err != nil {
			return err
		}
		if err := s.fake.acquire(uint32(id), txn, lease, a.has("direct")); err != nil {
			return err
		}
	case "traffic":
		n, err := a.uint("n", 0)
		if err != nil {
			return err
		}
		depth, err := a.uint("depth", 0)
		if err != nil {
			return err
		}
		declared, err := a.uint("declared", 0)
		if err != nil {
			return err
		}
		if err := s.fake.traffic(uint32(id), n, depth, declared); err != nil {
			return err
		}
	}
	s.settle()
	return nil
}

func (s *scenario) switchCmd(d *datadriven.TestData) error {
	if len(d.CmdArgs) == 0 {
		return fmt.Errorf("switch restart|down|up")
	}
	sw := &s.fake.sw
	switch d.CmdArgs[0].Key {
	case "restart":
		s.fake.restartSwitch(len(d.CmdArgs) > 1 && d.CmdArgs[1].Key == "keep-pipeline")
	case "down":
		sw.down = true
	case "up":
		sw.down = false
	default:
		return fmt.Errorf("switch %s?", d.CmdArgs[0].Key)
	}
	s.settle()
	return nil
}

func (s *scenario) serverCmd(d *datadriven.TestData, a args) error {
	n, err := a.uint("n", 0)
	if err != nil {
		return err
	}
	name := fmt.Sprintf("server %d", n)
	if a.has("standby") {
		name = fmt.Sprintf("standby %d", n)
	}
	p := s.fake.proc(name)
	if p == nil {
		return fmt.Errorf("no %s", name)
	}
	s.fake.now = s.now
	for _, ca := range d.CmdArgs {
		switch ca.Key {
		case "n", "standby":
		case "cut":
			p.cut = true
		case "heal":
			p.cut = false
		case "mute":
			p.mute = true
		case "unmute":
			p.mute = false
		case "restart":
			if err := s.fake.restartProc(p); err != nil {
				return err
			}
		case "drop-answers":
			k, err := a.uint("drop-answers", 0)
			if err != nil {
				return err
			}
			p.drop = int(k)
		case "echo":
			if p.echo, err = a.dur("echo", 0); err != nil {
				return err
			}
		case "epoch":
			e, err := a.uint("epoch", 0)
			if err != nil {
				return err
			}
			if err := s.fake.setEpoch(p, e); err != nil {
				return err
			}
		case "term":
			t, err := a.uint("term", 0)
			if err != nil {
				return err
			}
			s.fake.raiseTerm(p, t)
		default:
			return fmt.Errorf("server: unknown %q", ca.Key)
		}
	}
	s.settle()
	return nil
}

// state prints what the Core of c knows.
func (s *scenario) state(c *scenarioCtl) {
	k := c.core
	next := "none"
	if dl := k.NextDeadline(); !dl.IsZero() {
		next = dl.Sub(t0).String()
	}
	fmt.Fprintf(&s.b, "phase %s term %d cookie %#x pending %d next tick %s\n", k.phase, k.term, k.cookie, len(k.pending), next)
	if k.maxTokenAt.IsZero() {
		fmt.Fprintf(&s.b, "token counter: never observed\n")
	} else {
		fmt.Fprintf(&s.b, "token counter: %d observed at %v\n", k.maxToken, k.maxTokenAt.Sub(t0))
	}
	for _, n := range k.order {
		sv := k.servers[n]
		st := "not answering"
		switch {
		case sv.dead:
			st = "dead"
		case sv.suspect:
			st = "suspected"
		case sv.alive:
			st = "alive"
		}
		last := "never"
		if !sv.lastPing.IsZero() {
			last = sv.lastPing.Sub(t0).String()
		}
		fmt.Fprintf(&s.b, "server %d port %d %s epoch %d instance %d last ping %s misses %d\n", n, sv.Port, st, sv.epoch,
			sv.instance, last, sv.live.misses(k.now, k.cfg.PingPeriod, k.switchOK))
	}
	for _, id := range sortedKeys(k.locks) {
		lk := k.locks[id]
		fmt.Fprintf(&s.b, "lock %d state=%s server=%d rate=%.4g", id, lk.state, lk.server, lk.rate)
		if lk.inTable {
			e := lk.entry()
			fmt.Fprintf(&s.b, " [%s]", Entity{Lock: &e})
		}
		if lk.moving {
			fmt.Fprintf(&s.b, " moving")
		}
		s.b.WriteString("\n")
	}
	for _, n := range k.stagingOrder() {
		if st := k.staging[n]; st.busy {
			fmt.Fprintf(&s.b, "staging %d busy, %d queued\n", n, len(st.queue))
		}
	}
	st := k.Stats()
	fmt.Fprintf(&s.b, "takeovers %d bring-ups %d recovered %d moves in %d out %d aborted %d barriers %d "+
		"force-releases %d periods %d suspicions %d deaths %d failovers %d server-restarts %d switch-locks %d\n",
		st.Takeovers, st.BringUps, st.Recovered, st.MovesIn, st.MovesOut, st.MovesAborted, st.Barriers,
		st.ForceReleases, st.Periods, st.Suspicions, st.ServerDeaths, st.Failovers, st.ServerRestarts, st.SwitchLocks)
}
