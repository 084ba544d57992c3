// Package stf runs p4c Simple Test Framework (.stf) files against the netlock engine, with
// the semantics of p4c's backends/bmv2/bmv2stf.py: commands run in order, packets are
// processed one at a time, and at the end the packets that left on every port named by a
// packet or expect command are compared, in order, with the expected ones.
//
// Supported commands: add, setdefault, packet, expect (hex with * wildcard nibbles and a $ end
// marker), no_packet, mirroring_add, mirroring_add_mc, mirroring_delete, mirroring_get,
// mc_mgrp_create, mc_node_create, mc_node_associate, register_write, register_read (an extra
// third number is checked as the expected value, a netlock extension), register_reset,
// counter_read, counter_write, check_counter, meter_set_rates, meter_array_set_rates,
// meter_get_rates and wait.
package stf

import (
	"bufio"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/internal/p4info"
)

// Command is one parsed STF line.
type Command struct {
	Line int
	Name string
	Args []string // whitespace-separated words after the command, parentheses kept
	Text string   // the rest of the line
}

// Parse reads an STF file into commands (comments and blank lines dropped).
func Parse(r io.Reader) ([]Command, error) {
	var cmds []Command
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		cmds = append(cmds, Command{Line: n, Name: strings.ToLower(name), Args: strings.Fields(rest), Text: rest})
	}
	return cmds, sc.Err()
}

type expectation struct {
	line int
	any  bool
	data string // upper-case hex with '*' and optional trailing '$'
}

// Result is the outcome of a run.
type Result struct {
	Packets  int      // packets injected
	Received int      // packets that left the switch
	Failures []string // empty when the test passed
	Log      []string // informational output (register_read, counter_read, ...)
}

// Passed reports whether every check succeeded.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// Run executes commands against sw.
func Run(sw *engine.Switch, cmds []Command) (*Result, error) {
	res := &Result{}
	ext := &extState{} // our commands beyond p4c's STF (stf_ext.go)
	mentioned := map[int]bool{}
	expected := map[int][]expectation{}
	received := map[int][][]byte{}
	fail := func(c Command, format string, args ...any) {
		res.Failures = append(res.Failures, fmt.Sprintf("line %d: %s", c.Line, fmt.Sprintf(format, args...)))
	}
	for _, c := range cmds {
		var err error
		switch c.Name {
		case "add":
			err = addEntry(sw, c)
		case "setdefault":
			err = setDefault(sw, c)
		case "packet":
			port, data, aerr := packetArgs(c)
			if aerr != nil {
				return res, aerr
			}
			mentioned[port] = true
			res.Packets++
			out, perr2 := sw.Process(port, data)
			if perr2 != nil {
				fail(c, "processing packet: %v", perr2)
			}
			if out != nil {
				ext.received(out)
				for _, o := range out.Out {
					res.Received++
					received[o.Port] = append(received[o.Port], append([]byte(nil), o.Data...))
				}
			}
		case "expect":
			if len(c.Args) < 1 {
				return res, fmt.Errorf("line %d: expect needs a port", c.Line)
			}
			port, perr := strconv.Atoi(c.Args[0])
			if perr != nil {
				return res, fmt.Errorf("line %d: bad port %q", c.Line, c.Args[0])
			}
			mentioned[port] = true
			data := strings.ToUpper(strings.Join(c.Args[1:], ""))
			expected[port] = append(expected[port], expectation{line: c.Line, any: data == "", data: data})
		case "no_packet", "wait", "mirroring_get", "meter_get_rates", "":
		case "mirroring_add", "mirroring_add_mc":
			n, perr := ints(c.Args, 2)
			if perr != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, perr)
			}
			if c.Name == "mirroring_add" {
				// A third number truncates the session's copies to that many bytes (netlock's
				// extension; P4Runtime's packet_length_bytes).
				sess := engine.CloneSession{Port: n[1], HasPort: true}
				if len(c.Args) > 2 {
					tr, terr := ints(c.Args, 3)
					if terr != nil || tr[2] < 0 {
						return res, fmt.Errorf("line %d: bad truncation %q", c.Line, c.Args[2])
					}
					sess.TruncateLen = tr[2]
				}
				sw.SetCloneSession(n[0], sess)
			} else {
				sw.SetCloneSession(n[0], engine.CloneSession{McastGrp: n[1]})
			}
		case "mirroring_delete":
			n, perr := ints(c.Args, 1)
			if perr != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, perr)
			}
			sw.DeleteCloneSession(n[0])
		case "mc_mgrp_create":
			n, perr := ints(c.Args, 1)
			if perr != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, perr)
			}
			sw.MulticastGroupCreate(n[0])
		case "mc_node_create":
			n, perr := ints(c.Args, len(c.Args))
			if perr != nil || len(n) < 1 {
				return res, fmt.Errorf("line %d: want mc_node_create RID PORT [PORT ...]", c.Line)
			}
			h := sw.MulticastNodeCreate(n[0], n[1:])
			res.Log = append(res.Log, fmt.Sprintf("mc node %d created", h))
		case "mc_node_associate":
			n, perr := ints(c.Args, 2)
			if perr != nil {
				return res, fmt.Errorf("line %d: %w", c.Line, perr)
			}
			err = sw.MulticastNodeAssociate(n[0], n[1])
		case "register_write", "register_read", "register_reset":
			err = registerCmd(sw, c, res, fail)
		case "counter_read", "counter_write", "check_counter":
			err = counterCmd(sw, c, res, fail)
		case "meter_set_rates", "meter_array_set_rates":
			err = meterCmd(sw, c)
		default:
			ok, xerr := ext.command(sw, c)
			if !ok {
				return res, fmt.Errorf("line %d: unknown STF command %q", c.Line, c.Name)
			}
			err = xerr
		}
		if err != nil {
			return res, fmt.Errorf("line %d: %s: %w", c.Line, c.Name, err)
		}
	}
	ext.finish(res)
	ports := make([]int, 0, len(mentioned))
	for p := range mentioned {
		ports = append(ports, p)
	}
	sort.Ints(ports)
	for _, port := range ports {
		exp, got := expected[port], received[port]
		anyOnly := false
		for _, e := range exp {
			if e.any {
				anyOnly = true
			}
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

func listHex(ps [][]byte) string {
	var sb strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&sb, "\n    %X", p)
	}
	return sb.String()
}

// compare checks a received packet against an expected hex pattern as testutils.compare_pkt.
func compare(exp string, got []byte) string {
	strict := strings.HasSuffix(exp, "$")
	exp = strings.TrimSuffix(exp, "$")
	g := fmt.Sprintf("%X", got)
	if strict && len(g) > len(exp) {
		return fmt.Sprintf("received packet too long (%d vs %d hex digits)\n    expected %s\n    received %s", len(g), len(exp), exp, g)
	}
	if len(g) < len(exp) {
		return fmt.Sprintf("received packet too short (%d vs %d hex digits)\n    expected %s\n    received %s", len(g), len(exp), exp, g)
	}
	for i := 0; i < len(exp); i++ {
		if exp[i] != '*' && exp[i] != g[i] {
			return fmt.Sprintf("differs at hex digit %d\n    expected %s\n    received %s", i, exp, g)
		}
	}
	return ""
}

func parseHex(s string) ([]byte, error) {
	if len(s)%2 == 1 {
		return nil, fmt.Errorf("odd number of hex digits in packet data")
	}
	out := make([]byte, len(s)/2)
	for i := range out {
		v, err := strconv.ParseUint(s[2*i:2*i+2], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("bad packet data %q", s[2*i:2*i+2])
		}
		out[i] = byte(v)
	}
	return out, nil
}

func ints(args []string, n int) ([]int, error) {
	if len(args) < n {
		return nil, fmt.Errorf("need %d numbers", n)
	}
	out := make([]int, n)
	for i := 0; i < n; i++ {
		v, ok := new(big.Int).SetString(args[i], 0)
		if !ok {
			return nil, fmt.Errorf("bad number %q", args[i])
		}
		out[i] = int(v.Int64())
	}
	return out, nil
}

func parseInt(s string) (*big.Int, error) {
	v, ok := new(big.Int).SetString(strings.ReplaceAll(s, "_", ""), 0)
	if !ok {
		return nil, fmt.Errorf("bad number %q", s)
	}
	return v, nil
}

func bytesOf(v *big.Int) []byte {
	if v.Sign() < 0 {
		m := new(big.Int).Lsh(big.NewInt(1), 128)
		v = new(big.Int).Add(v, m)
	}
	b := v.Bytes()
	if len(b) == 0 {
		return []byte{0}
	}
	return b
}

// findTable resolves a table name as bmv2stf.py does: exact, else a unique suffix.
func findTable(sw *engine.Switch, name string) (*engine.Table, error) {
	var cand *engine.Table
	for _, t := range sw.Tables() {
		if t.Name == name {
			return t, nil
		}
		if strings.HasSuffix(t.Name, name) {
			if cand != nil {
				return nil, fmt.Errorf("table name %s is ambiguous between %s and %s", name, cand.Name, t.Name)
			}
			cand = t
		}
	}
	if cand == nil {
		return nil, fmt.Errorf("could not find table %s", name)
	}
	return cand, nil
}

func findAction(t *engine.Table, name string) (*engine.Action, error) {
	var cand *engine.Action
	for _, a := range t.Actions() {
		if a.Name == name {
			return a, nil
		}
	}
	for _, a := range t.Actions() {
		if strings.HasSuffix(a.Name, name) {
			if cand != nil && cand != a {
				return nil, fmt.Errorf("ambiguous action name %s in %s", name, t.Name)
			}
			cand = a
		}
	}
	if cand == nil {
		return nil, fmt.Errorf("no action %s in table %s", name, t.Name)
	}
	return cand, nil
}

// actionCall parses NAME(arg:value, ...) from s.
func actionCall(t *engine.Table, s string) (*engine.Action, [][]byte, error) {
	s = strings.TrimSpace(s)
	name, rest, _ := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	rest = strings.TrimSpace(rest)
	if i := strings.LastIndexByte(rest, ')'); i >= 0 {
		rest = rest[:i]
	}
	a, err := findAction(t, name)
	if err != nil {
		return nil, nil, err
	}
	vals := map[string]*big.Int{}
	for _, part := range strings.Split(rest, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			return nil, nil, fmt.Errorf("bad action argument %q", part)
		}
		x, err := parseInt(strings.TrimSpace(v))
		if err != nil {
			return nil, nil, err
		}
		vals[strings.TrimSpace(k)] = x
	}
	args := make([][]byte, len(a.Params))
	for i, p := range a.Params {
		v, ok := vals[p.Name]
		if !ok {
			return nil, nil, fmt.Errorf("missing argument %s of action %s", p.Name, a.Name)
		}
		args[i] = bytesOf(v)
		delete(vals, p.Name)
	}
	for k := range vals {
		return nil, nil, fmt.Errorf("unexpected action argument %s of %s", k, a.Name)
	}
	return a, args, nil
}

func setDefault(sw *engine.Switch, c Command) error {
	if len(c.Args) < 2 {
		return fmt.Errorf("setdefault TABLE ACTION(...)")
	}
	t, err := findTable(sw, c.Args[0])
	if err != nil {
		return err
	}
	a, args, err := actionCall(t, strings.TrimSpace(strings.TrimPrefix(c.Text, c.Args[0])))
	if err != nil {
		return err
	}
	return t.SetDefault(a.Name, a.ID, args)
}

// keyField resolves an STF key name against the table's key names as bmv2stf.py does.
func keyField(t *engine.Table, key string) (int, error) {
	if i := strings.IndexByte(key, '$'); i >= 0 && i+1 < len(key) && key[i+1] >= '0' && key[i+1] <= '9' {
		j := i + 1
		for j < len(key) && key[j] >= '0' && key[j] <= '9' {
			j++
		}
		key = key[:i] + "[" + key[i+1:j] + "]" + key[j:]
	}
	for i, k := range t.Keys {
		if k.Name == key || k.Name == key+"$" || k.Name == key+".$valid$" || k.Name == key+".isValid()" {
			return i, nil
		}
	}
	if strings.HasSuffix(key, ".valid") {
		alt := strings.TrimSuffix(key, "valid")
		for i, k := range t.Keys {
			if k.Name == alt+"$valid$" || k.Name == alt+"isValid()" {
				return i, nil
			}
		}
	}
	for i, k := range t.Keys {
		if strings.HasSuffix(k.Name, "."+key) || strings.HasSuffix(k.Name, "."+key+"$") {
			return i, nil
		}
	}
	return -1, fmt.Errorf("unexpected key field %s (table %s has %v)", key, t.Name, keyNames(t))
}

func keyNames(t *engine.Table) []string {
	var out []string
	for _, k := range t.Keys {
		out = append(out, k.Name)
	}
	return out
}

func ternary(v string) (val, mask *big.Int, err error) {
	if a, b, ok := strings.Cut(v, "&&&"); ok {
		if val, err = parseInt(a); err != nil {
			return
		}
		mask, err = parseInt(b)
		return
	}
	prefix, digits, bits := "", "", 0
	switch {
	case strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X"):
		prefix, digits, bits = "0x", v[2:], 4
	case strings.HasPrefix(v, "0b") || strings.HasPrefix(v, "0B"):
		prefix, digits, bits = "0b", v[2:], 1
	case strings.HasPrefix(v, "0o"):
		prefix, digits, bits = "0o", v[2:], 3
	default:
		val, err = parseInt(v)
		mask = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 128), big.NewInt(1))
		return
	}
	full := strconv.FormatInt(int64(1<<bits-1), 1<<bits)
	var vb, mb strings.Builder
	for _, ch := range digits {
		if ch == '*' {
			vb.WriteByte('0')
			mb.WriteByte('0')
		} else {
			vb.WriteRune(ch)
			mb.WriteString(full)
		}
	}
	if val, err = parseInt(prefix + vb.String()); err != nil {
		return
	}
	mask, err = parseInt(prefix + mb.String())
	return
}

func lpm(v string) (*big.Int, int, error) {
	if a, b, ok := strings.Cut(v, "/"); ok {
		x, err := parseInt(a)
		if err != nil {
			return nil, 0, err
		}
		n, err := strconv.Atoi(b)
		return x, n, err
	}
	bitsPer, digits := 4, ""
	switch {
	case strings.HasPrefix(v, "0x"):
		digits = v[2:]
	case strings.HasPrefix(v, "0b"):
		bitsPer, digits = 1, v[2:]
	case strings.HasPrefix(v, "0o"):
		bitsPer, digits = 3, v[2:]
	default:
		x, err := parseInt(v)
		if err != nil {
			return nil, 0, err
		}
		digits = x.Text(16)
		return x, len(digits) * 4, nil
	}
	n := len(digits) - strings.Count(digits, "*")
	x, err := parseInt(v[:2] + strings.ReplaceAll(digits, "*", "0"))
	return x, n * bitsPer, err
}

func addEntry(sw *engine.Switch, c Command) error {
	t, e, err := parseAdd(sw, c)
	if err != nil {
		return err
	}
	return t.Insert(e)
}

// parseAdd reads an add command into the table and the entry (every key field set; the
// priority 0 when the command gives none).
func parseAdd(sw *engine.Switch, c Command) (t *engine.Table, e engine.Entry, err error) {
	if len(c.Args) < 2 {
		return nil, e, fmt.Errorf("add TABLE [PRIORITY] KEY:VALUE... ACTION(...)")
	}
	t, err = findTable(sw, c.Args[0])
	if err != nil {
		return nil, e, err
	}
	rest := strings.TrimSpace(strings.TrimPrefix(c.Text, c.Args[0]))
	if i := strings.LastIndex(rest, ")"); i >= 0 && strings.Contains(rest[i:], "=") {
		rest = rest[:i+1]
	}
	open := strings.IndexByte(rest, '(')
	if open < 0 {
		return nil, e, fmt.Errorf("missing action call")
	}
	head := strings.Fields(rest[:open])
	if len(head) == 0 {
		return nil, e, fmt.Errorf("missing action name")
	}
	actionText := head[len(head)-1] + rest[open:]
	head = head[:len(head)-1]
	hasPrio := false
	if len(head) > 0 && !strings.Contains(head[0], ":") {
		p, err := strconv.Atoi(head[0])
		if err != nil {
			return nil, e, fmt.Errorf("bad priority %q", head[0])
		}
		e.Priority, hasPrio = int32(p), true
		head = head[1:]
	}
	e.Match = make([]engine.FieldMatch, len(t.Keys))
	given := make([]bool, len(t.Keys))
	for _, kv := range head {
		k, v, ok := strings.Cut(kv, ":")
		if !ok {
			return nil, e, fmt.Errorf("bad key match %q", kv)
		}
		i, err := keyField(t, k)
		if err != nil {
			return nil, e, err
		}
		given[i] = true
		fm := engine.FieldMatch{Name: t.Keys[i].Name}
		switch t.Keys[i].Kind {
		case engine.Ternary, engine.Optional:
			val, mask, err := ternary(v)
			if err != nil {
				return nil, e, err
			}
			fm.Value, fm.Mask = bytesOf(val), bytesOf(mask)
		case engine.LPM:
			val, n, err := lpm(v)
			if err != nil {
				return nil, e, err
			}
			fm.Value, fm.PrefixLen = bytesOf(val), n
		case engine.Range:
			lo, hi, ok := strings.Cut(v, "->")
			if !ok {
				lo, hi = v, v
			}
			l, err := parseInt(lo)
			if err != nil {
				return nil, e, err
			}
			h, err := parseInt(hi)
			if err != nil {
				return nil, e, err
			}
			fm.Low, fm.High = bytesOf(l), bytesOf(h)
		default:
			val, err := parseInt(v)
			if err != nil {
				return nil, e, err
			}
			fm.Value = bytesOf(val)
		}
		e.Match[i] = fm
	}
	for i, k := range t.Keys {
		if !given[i] {
			switch k.Kind {
			case engine.Ternary, engine.Optional:
				e.Match[i] = engine.FieldMatch{Name: k.Name, Value: []byte{0}, Mask: []byte{0}}
			case engine.LPM:
				e.Match[i] = engine.FieldMatch{Name: k.Name, Value: []byte{0}, PrefixLen: 0}
			case engine.Range:
				e.Match[i] = engine.FieldMatch{Name: k.Name, Low: []byte{0}, High: bytesOf(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(k.Width)), big.NewInt(1)))}
			default:
				e.Match[i] = engine.FieldMatch{Name: k.Name, Value: []byte{0}}
			}
		}
	}
	if !hasPrio {
		e.Priority = 0
	}
	a, args, err := actionCall(t, actionText)
	if err != nil {
		return nil, e, err
	}
	e.Action, e.ActionID, e.Args = a.Name, a.ID, args
	return t, e, nil
}

func registerCmd(sw *engine.Switch, c Command, res *Result, fail func(Command, string, ...any)) error {
	if len(c.Args) < 1 {
		return fmt.Errorf("missing register name")
	}
	r, err := sw.Register(c.Args[0])
	if err != nil {
		return err
	}
	switch c.Name {
	case "register_reset":
		r.Reset()
		return nil
	case "register_write":
		if len(c.Args) < 3 {
			return fmt.Errorf("register_write NAME INDEX VALUE")
		}
		i, err := parseInt(c.Args[1])
		if err != nil {
			return err
		}
		v, err := parseInt(c.Args[2])
		if err != nil {
			return err
		}
		return r.Write(int(i.Int64()), bytesOf(v))
	}
	if len(c.Args) < 2 {
		return fmt.Errorf("register_read NAME INDEX [EXPECTED]")
	}
	i, err := parseInt(c.Args[1])
	if err != nil {
		return err
	}
	b, err := r.Read(int(i.Int64()))
	if err != nil {
		return err
	}
	got := new(big.Int).SetBytes(b)
	res.Log = append(res.Log, fmt.Sprintf("%s[%d]= %s", r.Name, i, got))
	if len(c.Args) >= 3 {
		want, err := parseInt(c.Args[2])
		if err != nil {
			return err
		}
		if want.Cmp(got) != 0 {
			fail(c, "register %s[%d] = %s, want %s", r.Name, i, got, want)
		}
	}
	return nil
}

func counterCmd(sw *engine.Switch, c Command, res *Result, fail func(Command, string, ...any)) error {
	text := c.Text
	name, idx := "", int64(0)
	var rest []string
	if c.Name == "check_counter" {
		open, close := strings.IndexByte(text, '('), strings.IndexByte(text, ')')
		if open < 0 || close < open {
			return fmt.Errorf("check_counter NAME(INDEX) [packets|bytes OP VALUE]")
		}
		name = strings.TrimSpace(text[:open])
		inner := strings.TrimSpace(text[open+1 : close])
		v, err := parseInt(inner)
		if err != nil {
			return err
		}
		idx = v.Int64()
		rest = strings.Fields(text[close+1:])
	} else {
		if len(c.Args) < 2 {
			return fmt.Errorf("%s NAME INDEX", c.Name)
		}
		name = c.Args[0]
		v, err := parseInt(c.Args[1])
		if err != nil {
			return err
		}
		idx = v.Int64()
		rest = c.Args[2:]
	}
	ks, err := pipelineCounters(sw, name)
	if err != nil {
		return err
	}
	k := ks[0]
	if idx < 0 || int(idx) >= len(k.Packets) {
		return fmt.Errorf("counter %s: index %d out of range", k.Name, idx)
	}
	var packets, bytes uint64
	for _, x := range ks {
		p, b, err := x.Read(int(idx)) // the sum of the pipes the Pipeline runs in
		if err != nil {
			return err
		}
		packets, bytes = packets+p, bytes+b
	}
	switch c.Name {
	case "counter_read":
		res.Log = append(res.Log, fmt.Sprintf("%s[%d]= (%d bytes, %d packets)", k.Name, idx, bytes, packets))
		return nil
	case "counter_write":
		if len(ks) > 1 {
			return fmt.Errorf("counter_write: %s names a counter in each of %d Pipelines", name, len(ks))
		}
		if len(rest) < 2 {
			return fmt.Errorf("counter_write NAME INDEX PACKETS BYTES")
		}
		p, err := parseInt(rest[0])
		if err != nil {
			return err
		}
		b, err := parseInt(rest[1])
		if err != nil {
			return err
		}
		k.Packets[idx], k.Bytes[idx] = p.Uint64(), b.Uint64()
		return nil
	}
	kind, op, want := "packets", "==", int64(0)
	if len(rest) >= 3 {
		kind, op = rest[0], rest[1]
		v, err := parseInt(rest[2])
		if err != nil {
			return err
		}
		want = v.Int64()
	}
	got := int64(packets)
	if kind == "bytes" {
		got = int64(bytes)
	}
	ok := map[string]bool{"==": got == want, "!=": got != want, "<": got < want, "<=": got <= want, ">": got > want, ">=": got >= want}[op]
	if !ok {
		fail(c, "counter %s[%d] %s = %d, want %s %d", k.Name, idx, kind, got, op, want)
	}
	return nil
}

// pipelineCounters finds the counter name names (engine.Switch.Counter: exactly, or a unique
// suffix), or, in a program of several Pipelines, the counter of that name in each Pipeline
// that has one (names that differ only in the Pipeline's prefix): counter_read and
// check_counter read their sum, the packets the program counted in whichever Pipeline, as a
// counter of one Pipeline reads the sum of its pipes.
func pipelineCounters(sw *engine.Switch, name string) ([]*engine.Counter, error) {
	k, err := sw.Counter(name)
	if err == nil {
		return []*engine.Counter{k}, nil
	}
	var ks []*engine.Counter
	for _, x := range sw.Counters() {
		if x.Name != name && p4info.InPipeline(x.Name, name) {
			ks = append(ks, x)
		}
	}
	if len(ks) < 2 {
		return nil, err
	}
	return ks, nil
}

func meterCmd(sw *engine.Switch, c Command) error {
	if len(c.Args) < 2 {
		return fmt.Errorf("%s NAME [INDEX] RATE:BURST RATE:BURST", c.Name)
	}
	m, err := sw.Meter(c.Args[0])
	if err != nil {
		return err
	}
	idx := -1
	rates := c.Args[1:]
	if c.Name == "meter_set_rates" {
		v, err := parseInt(c.Args[1])
		if err != nil {
			return err
		}
		idx, rates = int(v.Int64()), c.Args[2:]
	}
	if len(rates) != 2 {
		return fmt.Errorf("need two RATE:BURST pairs")
	}
	var cfg engine.MeterConfig
	for i, r := range rates {
		a, b, ok := strings.Cut(r, ":")
		if !ok {
			return fmt.Errorf("bad rate %q", r)
		}
		rate, err := strconv.ParseFloat(a, 64)
		if err != nil {
			return err
		}
		burst, err := strconv.ParseUint(b, 10, 64)
		if err != nil {
			return err
		}
		if i == 0 {
			cfg.CIR, cfg.CBS = rate, burst
		} else {
			cfg.PIR, cfg.PBS = rate, burst
		}
	}
	return m.SetRates(idx, cfg)
}

// packetArgs reads a packet command's port and bytes, for the engine's runner and the real
// simple_switch's alike.
func packetArgs(c Command) (port int, data []byte, err error) {
	if len(c.Args) < 1 {
		return 0, nil, fmt.Errorf("line %d: packet needs a port", c.Line)
	}
	if port, err = strconv.Atoi(c.Args[0]); err != nil {
		return 0, nil, fmt.Errorf("line %d: bad port %q", c.Line, c.Args[0])
	}
	if data, err = parseHex(strings.Join(c.Args[1:], "")); err != nil {
		return 0, nil, fmt.Errorf("line %d: %w", c.Line, err)
	}
	return port, data, nil
}
