package lockcore

// Scenario tests: each file in testdata/ is a sequence of commands run against one Core, with the
// effects of each command as its expected output (github.com/cockroachdb/datadriven). Regenerate the
// expectations with `go test ./lockcore -run Scenarios -rewrite` and review the diff.
//
// Grammar (one command per block; arguments are key=value, durations in Go syntax):
//
//	config [lease=DUR] [maxlease=DUR] [prio=N] [maxwaiters=N] [maxbuffered=N] [idle=DUR] [grant-after=DUR]
//	       [quota=TENANT:OUTSTANDING:RATE ...] [default-quota=OUTSTANDING:RATE]
//	       [maxlocks=N] [maxrequests=N] [maxholders=N] [replay=DUR|off] [replaycap=N] [wait=DUR|off]
//	       [maxunread=N] [cores=N]
//	    Starts a fresh Core at time 0 with TokenBase 0 (the first token is 1). Files start with it;
//	    without it a default Core is used. With cores=N, N Cores (the shards of one server), which
//	    share one SharedLimiter for the quotas; every other command takes core=K (default 0) to
//	    name the Core it applies to, and advance expires them all.
//	acquire c=N lock=L txn=T mode=S|X [prio=P] [tenant=N] [lease=DUR] [try] [retry] [fwd]
//	    Client cN (10.0.0.N:5000) asks for lock L. With fwd the packet comes from the switch
//	    (sw1) carrying cN as the original client.
//	release c=N lock=L txn=T [token=K]
//	    Without token: the txn's current token if it holds the lock, else 0 (withdraw).
//	probe c=N lock=L txn=T [token=K] [lease=DUR]
//	overflow c=N lock=L txn=T mode=S|X [prio=P] [token=Q]  (Q: the q2 number of a push-back sent back)
//	    The switch (sw1) forwards an acquire of cN it could not queue.
//	queue-empty lock=L slots=N
//	    The switch (sw1) announces that lock L's switch queue drained with N free slots.
//	admin ping|sweep|reset|floor|yield|adopt [lock=L] [token=K]
//	    floor raises the token floor to K (wire.AdminTokenFloor); yield makes L switch-resident
//	    (wire.AdminYield), adopt makes it server-owned again with floor K (wire.AdminAdopt).
//	top k=N
//	    Core.TopLocks: the AdminStats records of the N busiest locks since the last top.
//	hold until=DUR|none
//	    Core.SetGrantAfter: no grants before DUR (none: MaxInt64; 0: lift the hold).
//	advance DUR
//	    Moves the clock forward and runs Expire.
//	state [lock=L]
//	    Prints holders (H), waiters (W) and buffered requests (B) of one lock or of all locks.
//	drain
//	    Core.Drain: rejects every waiting and buffered request with status shutdown.
//	stats
//	    Core.Stats; the counters of bounds, replays, wait leases and unread AdminStats counts
//	    (unread.go) only when not zero.
//	unread
//	    The unread store (unread.go): the locks it holds, and what its bound dropped.
//
// Output: one line per effect, "DEST <- MESSAGE", where DEST is cN or sw1 and MESSAGE is
// wire.Fields.String(); "(none)" when there is no effect.

import (
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/netlock-go/netlock/wire"
)

var switchAddr = netip.MustParseAddrPort("10.1.0.1:8888")

func clientAddr(n int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(n)}), 5000)
}

func addrName(a netip.AddrPort) string {
	if a == switchAddr {
		return "sw1"
	}
	b := a.Addr().As4()
	if b[0] == 10 && b[1] == 0 && b[2] == 0 && a.Port() == 5000 {
		return fmt.Sprintf("c%d", b[3])
	}
	return a.String()
}

type scenario struct {
	core  *Core   // the Core a command applies to: cores[core=K], 0 by default
	cores []*Core // several with config cores=N
	now   int64
}

func TestScenarios(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &scenario{}
		s.core = mustCore(t, Config{})
		s.cores = []*Core{s.core}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			out, err := s.run(d)
			if err != nil {
				d.Fatalf(t, "%v", err)
			}
			return out
		})
	})
}

func mustCore(t testing.TB, cfg Config) *Core {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type args map[string]string

func parseArgs(d *datadriven.TestData) args {
	a := args{}
	for _, ca := range d.CmdArgs {
		a[ca.Key] = strings.Join(ca.Vals, ",")
	}
	return a
}

func (a args) has(k string) bool { _, ok := a[k]; return ok }

func (a args) uint(k string, def uint64) (uint64, error) {
	v, ok := a[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%q: %w", k, v, err)
	}
	return n, nil
}

func (a args) dur(k string) (time.Duration, error) {
	v, ok := a[k]
	if !ok {
		return 0, nil
	}
	return time.ParseDuration(v)
}

func (s *scenario) run(d *datadriven.TestData) (string, error) {
	a := parseArgs(d)
	var effects []Effect
	k, err := a.uint("core", 0)
	if err != nil || k >= uint64(len(s.cores)) {
		return "", fmt.Errorf("core=%q: want 0..%d", a["core"], len(s.cores)-1)
	}
	s.core = s.cores[k]
	delete(a, "core")
	switch d.Cmd {
	case "config":
		return "", s.config(a)
	case "advance":
		if len(d.CmdArgs) != 1 {
			return "", fmt.Errorf("advance takes one duration")
		}
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			return "", err
		}
		s.now += int64(dur)
		if len(s.cores) == 1 {
			effects = s.core.Expire(s.now, nil)
			break
		}
		var b strings.Builder
		for i, c := range s.cores {
			fmt.Fprintf(&b, "core %d:\n%s", i, render(c.Expire(s.now, nil)))
		}
		return b.String(), nil
	case "state":
		return s.state(a)
	case "drain":
		effects = s.core.Drain(nil)
	case "top":
		k, err := a.uint("k", 10)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, st := range s.core.TopLocks(nil, int(k)) {
			fmt.Fprintf(&b, "lock=%d requests=%d overflows=%d depth=%d declared=%d\n", st.Lock, st.Requests,
				st.Overflows, st.Depth, st.Declared)
		}
		if b.Len() == 0 {
			return "(none)\n", nil
		}
		return b.String(), nil
	case "unread":
		st := s.core.Stats()
		return fmt.Sprintf("unread=%d dropped=%d dropped-requests=%d\n", st.Unread, st.UnreadDropped,
			st.UnreadDroppedRequests), nil
	case "hold":
		until := int64(math.MaxInt64)
		if v := a["until"]; v != "none" {
			d, err := a.dur("until")
			if err != nil {
				return "", err
			}
			until = int64(d)
		}
		effects = s.core.SetGrantAfter(s.now, until, nil)
	case "stats":
		st := s.core.Stats()
		return fmt.Sprintf("locks=%d holders=%d waiters=%d buffered=%d grants=%d queued=%d released=%d "+
			"withdrawn=%d expired=%d renewed=%d overflowed=%d pushed=%d duplicates=%d idle=%d next=%v%s\n",
			st.Locks, st.Holders, st.Waiters, st.Buffered, st.Grants, st.Queued, st.Released,
			st.Withdrawn, st.Expired, st.Renewed, st.Overflowed, st.PushedBack, st.Duplicates, st.Idle,
			nextDeadline(s.core.NextDeadline()), placeStats(st)+boundStats(st)), nil
	case "admin":
		r := &Request{From: switchAddr}
		r.Op = wire.OpAdmin
		switch {
		case a.has("ping"):
			r.Status = wire.AdminPing
		case a.has("sweep"):
			r.Status = wire.AdminSweep
		case a.has("reset"):
			r.Status = wire.AdminResetLock
		case a.has("floor"), a.has("adopt"):
			r.Status = wire.AdminTokenFloor
			if a.has("adopt") {
				r.Status = wire.AdminAdopt
			}
			tok, err := a.uint("token", 0)
			if err != nil {
				return "", err
			}
			r.Token = tok
		case a.has("yield"):
			r.Status = wire.AdminYield
		default:
			r.Status = 99
		}
		l, err := a.uint("lock", 0)
		if err != nil {
			return "", err
		}
		r.Lock = uint32(l)
		effects = s.core.Step(s.now, r, nil)
	default:
		r, err := s.request(d.Cmd, a)
		if err != nil {
			return "", err
		}
		effects = s.core.Step(s.now, r, nil)
	}
	return render(effects), nil
}

// placeStats renders the counters of lock placement, when any is set.
func placeStats(st Stats) string {
	if st.ResidentDropped == 0 && st.Adopted == 0 {
		return ""
	}
	return fmt.Sprintf(" resident-dropped=%d adopted=%d", st.ResidentDropped, st.Adopted)
}

// boundStats renders the counters of the Core's bounds, replay memory and wait leases that are
// not zero.
func boundStats(st Stats) string {
	var b strings.Builder
	for _, f := range []struct {
		name string
		v    uint64
	}{{"wait-expired", st.WaitExpired}, {"replays", st.Replays}, {"replay-forgotten", st.ReplayForgotten}, {"remembered", uint64(st.Remembered)},
		{"at-max-locks", st.AtMaxLocks}, {"at-max-requests", st.AtMaxRequests}, {"at-max-waiters", st.AtMaxWaiters},
		{"at-max-buffered", st.AtMaxBuffered}, {"at-max-holders", st.AtMaxHolders}, {"idle-evicted", st.IdleEvicted},
		{"unread-dropped", st.UnreadDropped}, {"unread-dropped-requests", st.UnreadDroppedRequests}} {
		if f.v != 0 {
			fmt.Fprintf(&b, " %s=%d", f.name, f.v)
		}
	}
	return b.String()
}

// nextDeadline renders Core.NextDeadline: a time, or "none".
func nextDeadline(d int64) string {
	if d == math.MaxInt64 {
		return "none"
	}
	return time.Duration(d).String()
}

func render(effects []Effect) string {
	if len(effects) == 0 {
		return "(none)\n"
	}
	var b strings.Builder
	for i := range effects {
		m := effects[i].Msg
		line := m.String()
		if m.Client.IsValid() {
			line = strings.Replace(line, "client="+m.Client.String(), "client="+addrName(m.Client), 1)
		}
		fmt.Fprintf(&b, "%s <- %s\n", addrName(effects[i].To), line)
	}
	return b.String()
}

func (s *scenario) config(a args) error {
	var cfg Config
	var err error
	if cfg.DefaultLease, err = a.dur("lease"); err != nil {
		return err
	}
	if cfg.MaxLease, err = a.dur("maxlease"); err != nil {
		return err
	}
	p, err := a.uint("prio", 0)
	if err != nil {
		return err
	}
	cfg.Priorities = int(p)
	mw, err := a.uint("maxwaiters", 0)
	if err != nil {
		return err
	}
	cfg.MaxWaiters = int(mw)
	mb, err := a.uint("maxbuffered", 0)
	if err != nil {
		return err
	}
	cfg.MaxBuffered = int(mb)
	for _, b := range []struct {
		k string
		v *int
	}{{"maxlocks", &cfg.MaxLocks}, {"maxrequests", &cfg.MaxRequests}, {"maxholders", &cfg.MaxHolders},
		{"replaycap", &cfg.ReplayCapacity}, {"maxunread", &cfg.MaxUnreadStats}} {
		n, err := a.uint(b.k, 0)
		if err != nil {
			return err
		}
		*b.v = int(n)
	}
	if a["wait"] == "off" {
		cfg.WaitLease = -1
	} else if cfg.WaitLease, err = a.dur("wait"); err != nil {
		return err
	}
	if a["replay"] == "off" {
		cfg.ReplayWindow = -1
	} else if cfg.ReplayWindow, err = a.dur("replay"); err != nil {
		return err
	}
	if cfg.IdleRetention, err = a.dur("idle"); err != nil {
		return err
	}
	ga, err := a.dur("grant-after")
	if err != nil {
		return err
	}
	cfg.GrantAfter = int64(ga)
	parseQuota := func(v string) (Quota, error) {
		var q Quota
		_, err := fmt.Sscanf(v, "%d:%d", &q.MaxOutstanding, &q.MaxRate)
		return q, err
	}
	if v, ok := a["quota"]; ok {
		cfg.Quotas = map[uint16]Quota{}
		for _, one := range strings.Split(v, ",") {
			var t uint16
			i := strings.IndexByte(one, ':')
			if i < 0 {
				return fmt.Errorf("quota %q: want TENANT:OUT:RATE", one)
			}
			if _, err := fmt.Sscanf(one[:i], "%d", &t); err != nil {
				return err
			}
			q, err := parseQuota(one[i+1:])
			if err != nil {
				return fmt.Errorf("quota %q: %w", one, err)
			}
			cfg.Quotas[t] = q
		}
	}
	if v, ok := a["default-quota"]; ok {
		if cfg.DefaultQuota, err = parseQuota(v); err != nil {
			return err
		}
	}
	n, err := a.uint("cores", 1)
	if err != nil {
		return err
	}
	if n > 1 && cfg.Limiter == nil && (len(cfg.Quotas) > 0 || cfg.DefaultQuota != (Quota{})) {
		if cfg.Limiter, err = NewSharedLimiter(cfg.DefaultQuota, cfg.Quotas); err != nil {
			return err
		}
		cfg.Quotas, cfg.DefaultQuota = nil, Quota{}
	}
	s.cores, s.now = nil, 0
	for i := uint64(0); i < max(n, 1); i++ {
		c, err := New(cfg)
		if err != nil {
			return err
		}
		s.cores = append(s.cores, c)
	}
	s.core = s.cores[0]
	return nil
}

func (s *scenario) request(cmd string, a args) (*Request, error) {
	r := &Request{}
	switch cmd {
	case "acquire":
		r.Op = wire.OpAcquire
	case "release":
		r.Op = wire.OpRelease
	case "probe":
		r.Op = wire.OpLeaseProbe
	case "overflow":
		r.Op = wire.OpOverflow
	case "queue-empty":
		r.Op = wire.OpQueueEmpty
	default:
		return nil, fmt.Errorf("unknown command %q", cmd)
	}
	var err error
	get := func(k string, def uint64) uint64 {
		if err != nil {
			return 0
		}
		var v uint64
		v, err = a.uint(k, def)
		return v
	}
	cl := int(get("c", 0))
	r.Lock = uint32(get("lock", 0))
	r.Txn = get("txn", 0)
	r.Priority = uint8(get("prio", 0))
	r.Tenant = uint16(get("tenant", 0))
	r.Slots = uint16(get("slots", 0))
	if err != nil {
		return nil, err
	}
	switch a["mode"] {
	case "S":
		r.Mode = wire.Shared
	case "X", "":
		r.Mode = wire.Exclusive
	default:
		return nil, fmt.Errorf("mode %q", a["mode"])
	}
	lease, err := a.dur("lease")
	if err != nil {
		return nil, err
	}
	r.LeaseMicros = uint32(lease / time.Microsecond)
	if a.has("slots1") { // queue-empty: level 1's free slots ride in the lease field
		r.LeaseMicros = uint32(get("slots1", 0))
	}
	r.Timestamp = uint64(s.now)
	r.From = clientAddr(cl)
	if a.has("try") {
		r.Flags |= wire.FlagTry
	}
	if a.has("retry") {
		r.Flags |= wire.FlagRetry
	}
	if a.has("fwd") || r.Op == wire.OpOverflow {
		r.Flags |= wire.FlagForwarded
		r.Client, r.From = clientAddr(cl), switchAddr
	}
	if r.Op == wire.OpQueueEmpty {
		r.From = switchAddr
	}
	if r.Op == wire.OpRelease || r.Op == wire.OpLeaseProbe {
		def := uint64(0)
		if info, ok := s.core.Inspect(r.Lock); ok {
			for _, h := range info.Holders {
				if h.Txn == r.Txn {
					def = h.Token
				}
			}
		}
		r.Token = get("token", def)
	}
	if r.Op == wire.OpOverflow {
		r.Token = get("token", 0) // a push-back the switch could not queue carries its q2 number
	}
	return r, err
}

func (s *scenario) state(a args) (string, error) {
	ids := s.core.Locks()
	if a.has("lock") {
		l, err := a.uint("lock", 0)
		if err != nil {
			return "", err
		}
		ids = []uint32{uint32(l)}
	}
	var b strings.Builder
	for _, id := range ids {
		info, ok := s.core.Inspect(id)
		if !ok {
			fmt.Fprintf(&b, "lock %d: (none)\n", id)
			continue
		}
		fmt.Fprintf(&b, "lock %d:", id)
		for _, e := range info.Holders {
			fmt.Fprintf(&b, " H(%s txn=%d token=%d p%d until=%v)", e.Mode, e.Txn, e.Token, e.Priority,
				time.Duration(e.Deadline))
		}
		for _, e := range info.Waiters {
			fmt.Fprintf(&b, " W(%s txn=%d p%d)", e.Mode, e.Txn, e.Priority)
		}
		for _, e := range info.Buffered {
			fmt.Fprintf(&b, " B(%s txn=%d p%d %s)", e.Mode, e.Txn, e.Priority, addrName(e.To))
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "(no locks)\n", nil
	}
	return b.String(), nil
}
