package stf

import (
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/simpleswitch"
)

// RunReal runs STF commands against bmv2's real simple_switch, with the semantics of Run:
// commands in order, each packet processed to the end before the next command (the driver
// waits for the switch, simpleswitch.Switch.Wait), and the packets that left every port named
// by a packet or expect command compared at the end, in order, with the expected ones.
//
// sw is the same program loaded in the engine; RunReal only reads its tables, keys and
// actions, to write each add and setdefault as simple_switch_CLI's table_add and
// table_set_default (keys in the table's order, ternary values with masks, LPM with prefix
// lengths, priorities as bmv2 orders them: lower wins, so 10000 - PRIORITY, as p4c's
// bmv2stf.py writes them). The other commands go to the CLI as they are, but for netlock's
// extensions, translated: register_read NAME INDEX VALUE checks the value the CLI reads, and
// check_counter NAME(INDEX) [packets|bytes OP VALUE] reads the counter with counter_read and
// checks it (p4c's harness ignores both). port_metadata and expect_digest (TNA) are refused.
// The switch must have an interface for every port the commands use (Ports lists them).
func RunReal(ss *simpleswitch.Switch, sw *engine.Switch, cmds []Command, timeout time.Duration) (*Result, error) {
	res := &Result{}
	mentioned := map[int]bool{}
	expected := map[int][]expectation{}
	received := map[int][][]byte{}
	fail := func(c Command, format string, args ...any) {
		res.Failures = append(res.Failures, fmt.Sprintf("line %d: %s", c.Line, fmt.Sprintf(format, args...)))
	}
	collect := func() {
		for p, fs := range ss.Received() {
			received[p] = append(received[p], fs...)
			res.Received += len(fs)
		}
	}
	cli := func(c Command, cmd string) (string, error) {
		out, err := ss.CLI(cmd)
		if err != nil {
			return out, fmt.Errorf("line %d: %w", c.Line, err)
		}
		return out, nil
	}
	for _, c := range cmds {
		switch c.Name {
		case "add":
			t, e, err := parseAdd(sw, c)
			if err != nil {
				return res, fmt.Errorf("line %d: add: %w", c.Line, err)
			}
			cmd, err := simpleswitch.TableAddCommand(t, e)
			if err != nil {
				return res, fmt.Errorf("line %d: add: %w", c.Line, err)
			}
			if _, err := cli(c, cmd); err != nil {
				return res, err
			}
		case "setdefault":
			if len(c.Args) < 2 {
				return res, fmt.Errorf("line %d: setdefault TABLE ACTION(...)", c.Line)
			}
			t, err := findTable(sw, c.Args[0])
			if err != nil {
				return res, fmt.Errorf("line %d: setdefault: %w", c.Line, err)
			}
			a, args, err := actionCall(t, strings.TrimSpace(strings.TrimPrefix(c.Text, c.Args[0])))
			if err != nil {
				return res, fmt.Errorf("line %d: setdefault: %w", c.Line, err)
			}
			if _, err := cli(c, simpleswitch.TableSetDefaultCommand(t, a.Name, args)); err != nil {
				return res, err
			}
		case "packet":
			port, data, err := packetArgs(c)
			if err != nil {
				return res, err
			}
			mentioned[port] = true
			res.Packets++
			if err := ss.Send(port, data); err != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, err)
			}
			if err := ss.Wait(timeout); err != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, err)
			}
			collect()
		case "expect":
			if len(c.Args) < 1 {
				return res, fmt.Errorf("line %d: expect needs a port", c.Line)
			}
			port, err := strconv.Atoi(c.Args[0])
			if err != nil {
				return res, fmt.Errorf("line %d: bad port %q", c.Line, c.Args[0])
			}
			mentioned[port] = true
			data := strings.ToUpper(strings.Join(c.Args[1:], ""))
			expected[port] = append(expected[port], expectation{line: c.Line, any: data == "", data: data})
		case "no_packet", "":
		case "wait":
			if err := ss.Wait(timeout); err != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, err)
			}
		case "register_read":
			if len(c.Args) < 2 {
				return res, fmt.Errorf("line %d: register_read NAME INDEX [EXPECTED]", c.Line)
			}
			r, err := sw.Register(c.Args[0])
			if err != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, err)
			}
			out, err := cli(c, "register_read "+r.Name+" "+c.Args[1])
			if err != nil {
				return res, err
			}
			got, err := cliValue(out)
			if err != nil {
				return res, fmt.Errorf("line %d: register_read: %w", c.Line, err)
			}
			res.Log = append(res.Log, strings.TrimSpace(out))
			if len(c.Args) >= 3 {
				want, err := parseInt(c.Args[2])
				if err != nil {
					return res, fmt.Errorf("line %d: %w", c.Line, err)
				}
				if want.Cmp(got) != 0 {
					fail(c, "register %s[%s] = %s, want %s", r.Name, c.Args[1], got, want)
				}
			}
		case "check_counter":
			if err := checkCounterReal(ss, sw, c, res, fail); err != nil {
				return res, fmt.Errorf("line %d: check_counter: %w", c.Line, err)
			}
		case "port_metadata", "expect_digest":
			return res, fmt.Errorf("line %d: %s is for TNA programs, not simple_switch", c.Line, c.Name)
		default:
			// mirroring_*, mc_*, register_write/reset, counter_read/write, meter_*: the CLI's.
			out, err := cli(c, c.Name+" "+c.Text)
			if err != nil {
				return res, err
			}
			if strings.HasPrefix(c.Name, "counter_read") || strings.HasPrefix(c.Name, "mirroring_get") || strings.HasPrefix(c.Name, "meter_get") {
				res.Log = append(res.Log, strings.TrimSpace(out))
			}
		}
	}
	if err := ss.Wait(timeout); err != nil {
		return res, err
	}
	collect()
	ports := make([]int, 0, len(mentioned))
	for p := range mentioned {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	for _, port := range ports {
		exp, got := expected[port], received[port]
		anyOnly := false
		for _, e := range exp {
			anyOnly = anyOnly || e.any
		}
		if anyOnly {
			continue
		}
		if len(exp) != len(got) {
			res.Failures = append(res.Failures, fmt.Sprintf("port %d: expected %d packets, got %d%s", port, len(exp), len(got), listHex(got)))
			continue
		}
		for i, e := range exp {
			if msg := compare(e.data, got[i]); msg != "" {
				res.Failures = append(res.Failures, fmt.Sprintf("line %d: port %d packet %d: %s", e.line, port, i+1, msg))
			}
		}
	}
	return res, nil
}

var reCLIValue = regexp.MustCompile(`=\s*(\d+)\s*$`)

// cliValue reads the number register_read prints ("NAME[INDEX]= VALUE").
func cliValue(out string) (*big.Int, error) {
	for _, l := range strings.Split(out, "\n") {
		if m := reCLIValue.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			v, _ := new(big.Int).SetString(m[1], 10)
			return v, nil
		}
	}
	return nil, fmt.Errorf("no value in %q", strings.TrimSpace(out))
}

var reCounter = regexp.MustCompile(`packets=(\d+), bytes=(\d+)`)

func checkCounterReal(ss *simpleswitch.Switch, sw *engine.Switch, c Command, res *Result, fail func(Command, string, ...any)) error {
	text := c.Text
	open, closeP := strings.IndexByte(text, '('), strings.IndexByte(text, ')')
	if open < 0 || closeP < open {
		return fmt.Errorf("check_counter NAME(INDEX) [packets|bytes OP VALUE]")
	}
	k, err := sw.Counter(strings.TrimSpace(text[:open]))
	if err != nil {
		return err
	}
	idx, err := parseInt(strings.TrimSpace(text[open+1 : closeP]))
	if err != nil {
		return err
	}
	out, err := ss.CLI(fmt.Sprintf("counter_read %s %s", k.Name, idx))
	if err != nil {
		return err
	}
	m := reCounter.FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("no counter value in %q", strings.TrimSpace(out))
	}
	res.Log = append(res.Log, strings.TrimSpace(out))
	rest := strings.Fields(text[closeP+1:])
	kind, op, want := "packets", "==", int64(0)
	if len(rest) >= 3 {
		kind, op = rest[0], rest[1]
		v, err := parseInt(rest[2])
		if err != nil {
			return err
		}
		want = v.Int64()
	}
	got, _ := strconv.ParseInt(m[1], 10, 64)
	if kind == "bytes" {
		got, _ = strconv.ParseInt(m[2], 10, 64)
	}
	ok := map[string]bool{"==": got == want, "!=": got != want, "<": got < want, "<=": got <= want, ">": got > want, ">=": got >= want}[op]
	if !ok {
		fail(c, "counter %s[%s] %s = %d, want %s %d", k.Name, idx, kind, got, op, want)
	}
	return nil
}

// Ports lists the ports an STF test uses: those of its packet and expect commands and the
// ports of its mirroring sessions (simple_switch needs an interface for each).
func Ports(cmds []Command) []int {
	set := map[int]bool{}
	for _, c := range cmds {
		switch c.Name {
		case "packet", "expect":
			if len(c.Args) > 0 {
				if p, err := strconv.Atoi(c.Args[0]); err == nil {
					set[p] = true
				}
			}
		case "mirroring_add":
			if len(c.Args) > 1 {
				if p, err := strconv.Atoi(c.Args[1]); err == nil {
					set[p] = true
				}
			}
		case "mc_node_create":
			for _, a := range c.Args[min(1, len(c.Args)):] {
				if p, err := strconv.Atoi(a); err == nil {
					set[p] = true
				}
			}
		}
	}
	out := make([]int, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Ints(out)
	return out
}
