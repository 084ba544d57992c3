package stf

import (
	"fmt"
	"math"
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
// checks it (p4c's harness ignores both); register_write's and register_read's hexadecimal
// index and value are written in decimal, the only base the CLI takes (and a value to write
// must fit the Thrift runtime's i64; an expected value that does not is checked as the i64
// saturation the runtime reads, 2^63-1). A packet shorter than
// an Ethernet header cannot cross the veth pair (padFrame): it is sent padded with zeros, and
// the padding is taken off the end of every packet it causes. port_metadata and expect_digest
// (TNA) are refused.
// The switch must have an interface for every port the commands use (Ports lists them).
func RunReal(ss *simpleswitch.Switch, sw *engine.Switch, cmds []Command, timeout time.Duration) (*Result, error) {
	res := &Result{}
	mentioned := map[int]bool{}
	expected := map[int][]expectation{}
	received := map[int][][]byte{}
	fail := func(c Command, format string, args ...any) {
		res.Failures = append(res.Failures, fmt.Sprintf("line %d: %s", c.Line, fmt.Sprintf(format, args...)))
	}
	// collect takes the frames the switch sent; pad is the padding of the packet that caused
	// them (see padFrame), taken off each frame that ends with it.
	collect := func(pad int) {
		for p, fs := range ss.Received() {
			for _, f := range fs {
				received[p] = append(received[p], unpadFrame(f, pad))
			}
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
			data, pad := padFrame(data)
			if err := ss.Send(port, data); err != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, err)
			}
			if err := ss.Wait(timeout); err != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, err)
			}
			collect(pad)
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
			idx, err := parseInt(c.Args[1])
			if err != nil {
				return res, fmt.Errorf("line %d: register_read: %w", c.Line, err)
			}
			out, err := cli(c, "register_read "+r.Name+" "+idx.String())
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
				if want.BitLen() > 63 {
					// The Thrift runtime reads a register as an i64, saturated (bmv2's
					// Data::get<int64_t>): only that much of the value can be checked.
					want = new(big.Int).SetInt64(math.MaxInt64)
					res.Log = append(res.Log, fmt.Sprintf("line %d: %s[%s] wider than the Thrift runtime's i64: checked as its saturation, %s", c.Line, r.Name, c.Args[1], want))
				}
				if want.Cmp(got) != 0 {
					fail(c, "register %s[%s] = %s, want %s", r.Name, c.Args[1], got, want)
				}
			}
		case "check_counter":
			if err := checkCounterReal(ss, sw, c, res, fail); err != nil {
				return res, fmt.Errorf("line %d: check_counter: %w", c.Line, err)
			}
		case "register_write":
			// simple_switch_CLI takes the index and the value in decimal only.
			if len(c.Args) != 3 {
				return res, fmt.Errorf("line %d: register_write NAME INDEX VALUE", c.Line)
			}
			idx, err := parseInt(c.Args[1])
			if err != nil {
				return res, fmt.Errorf("line %d: register_write: %w", c.Line, err)
			}
			v, err := parseInt(c.Args[2])
			if err != nil {
				return res, fmt.Errorf("line %d: register_write: %w", c.Line, err)
			}
			if v.Sign() < 0 || v.BitLen() > 63 {
				// The CLI would die on it (Python's struct.error), taking the session with it.
				return res, fmt.Errorf("line %d: register_write: %s does not fit simple_switch's Thrift runtime, which carries a register value as an i64 (BmRegisterValue)", c.Line, c.Args[2])
			}
			if _, err := cli(c, fmt.Sprintf("register_write %s %s %s", c.Args[0], idx, v)); err != nil {
				return res, err
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
	collect(0)
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

// minFrame is the shortest frame an AF_PACKET socket sends on an Ethernet device such as a
// veth (Linux's dev_validate_header refuses a frame shorter than its 14-byte header with
// EINVAL). p4c's STF harness gives simple_switch its packets in pcap files and has no such
// bound; STF tests use shorter packets.
const minFrame = simpleswitch.ShortFrame

// padFrame pads a frame shorter than minFrame with zeros and returns it and the number of
// bytes added.
func padFrame(f []byte) ([]byte, int) {
	if len(f) >= minFrame {
		return f, 0
	}
	pad := minFrame - len(f)
	return append(append([]byte(nil), f...), make([]byte, pad)...), pad
}

// unpadFrame takes pad zero bytes off the end of a frame caused by a padded packet: the
// padding is payload the program does not parse, so it leaves at the end of every packet. A
// frame that does not end with pad zeros (the program parsed the padding, or cut the
// payload) is returned as it is, and fails its comparison.
func unpadFrame(f []byte, pad int) []byte {
	if pad == 0 || len(f) < pad {
		return f
	}
	for _, b := range f[len(f)-pad:] {
		if b != 0 {
			return f
		}
	}
	return f[:len(f)-pad]
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

// reCounter and reCounterOld read counter_read's answer: "NAME[INDEX]= (BYTES bytes, PACKETS
// packets)" (bmv2 9674187f) or, from older CLIs, "packets=PACKETS, bytes=BYTES".
var (
	reCounter    = regexp.MustCompile(`\((\d+) bytes, (\d+) packets\)`)
	reCounterOld = regexp.MustCompile(`packets=(\d+), bytes=(\d+)`)
)

// counterValue reads the packets and bytes counter_read printed.
func counterValue(out string) (packets, bytes int64, err error) {
	if m := reCounter.FindStringSubmatch(out); m != nil {
		bytes, _ = strconv.ParseInt(m[1], 10, 64)
		packets, _ = strconv.ParseInt(m[2], 10, 64)
		return packets, bytes, nil
	}
	if m := reCounterOld.FindStringSubmatch(out); m != nil {
		packets, _ = strconv.ParseInt(m[1], 10, 64)
		bytes, _ = strconv.ParseInt(m[2], 10, 64)
		return packets, bytes, nil
	}
	return 0, 0, fmt.Errorf("no counter value in %q", strings.TrimSpace(out))
}

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
	packets, bytes, err := counterValue(out)
	if err != nil {
		return err
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
	got := packets
	if kind == "bytes" {
		got = bytes
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
