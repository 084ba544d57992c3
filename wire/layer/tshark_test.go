package layer_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/internal/testenv"
	"github.com/netlock-go/netlock/wire"
)

// dissector is the Lua dissector, relative to this package's directory (where go test runs).
var dissector = filepath.Join("..", "wireshark", "netlock.lua")

// tsharkFields are the dissector's fields the test reads back with tshark -T fields, in order.
var tsharkFields = []string{
	"netlock.version", "netlock.op", "netlock.mode", "netlock.flags",
	"netlock.flags.reply", "netlock.flags.retry", "netlock.flags.try", "netlock.flags.fwd",
	"netlock.flags.renewed", "netlock.flags.batch", "netlock.flags.reserved",
	"netlock.status", "netlock.admin", "netlock.priority", "netlock.tenant", "netlock.lock",
	"netlock.txn", "netlock.token", "netlock.timestamp", "netlock.lease", "netlock.client_ip",
	"netlock.client_port", "netlock.slots", "netlock.rack_key", "netlock.stat.lock", "netlock.stat.requests",
	"netlock.stat.overflows", "netlock.stat.depth", "netlock.stat.declared", "netlock.resident", "netlock.trailer",
	"_ws.expert.message", "_ws.col.Info",
}

// runTshark runs tshark with the dissector on a capture and returns its standard output. When
// tshark is not installed the test fails under CI and skips elsewhere (testenv.RequireTool).
func runTshark(t *testing.T, args ...string) string {
	t.Helper()
	bin := testenv.RequireTool(t, "tshark", "apt-get install -y tshark")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// -o gui.column... is not needed: _ws.col.Info is read as a field. -n: no name resolution.
	cmd := exec.CommandContext(ctx, bin, append([]string{"-n", "-X", "lua_script:" + dissector}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, stderr.String())
	}
	// tshark reports Lua errors on stderr but still exits 0.
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(strings.ToLower(line), "lua") {
			t.Fatalf("tshark: %s", stderr.String())
		}
	}
	return stdout.String()
}

func b2s(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// wantTsharkFields is what the dissector must show for a capturePacket, field by field.
func wantTsharkFields(p capturePacket) map[string]string {
	if p.raw != nil {
		h := wire.Header(p.raw)
		switch h.Validate() {
		case wire.ErrShort:
			return map[string]string{"_ws.expert.message": fmt.Sprintf("Packet shorter than header: %d of 48 bytes", len(p.raw)),
				"_ws.col.Info": fmt.Sprintf("Malformed (short: %d bytes)", len(p.raw))}
		case wire.ErrOp:
			return map[string]string{"_ws.expert.message": "Unknown op", "netlock.op": strconv.Itoa(int(h.Op())),
				"_ws.col.Info": fmt.Sprintf("Malformed (unknown op %d)", h.Op())}
		case wire.ErrMode:
			return map[string]string{"_ws.expert.message": "Unknown mode", "netlock.mode": strconv.Itoa(int(h.Mode())),
				"_ws.col.Info": fmt.Sprintf("Malformed (unknown mode %d)", h.Mode())}
		}
		panic("raw packet is well-formed")
	}
	f := p.fields
	if p.version != 0 {
		return map[string]string{"_ws.expert.message": "Unsupported version", "netlock.version": strconv.Itoa(int(p.version)),
			"_ws.col.Info": fmt.Sprintf("Malformed (version %d)", p.version)}
	}
	buf := wire.Append(nil, f)
	h := wire.Header(buf)
	m := map[string]string{
		"netlock.version":        "1",
		"netlock.op":             strconv.Itoa(int(f.Op)),
		"netlock.mode":           strconv.Itoa(int(f.Mode)),
		"netlock.flags":          fmt.Sprintf("0x%02x", uint8(f.Flags)),
		"netlock.flags.reply":    b2s(h.Has(wire.FlagReply)),
		"netlock.flags.retry":    b2s(h.Has(wire.FlagRetry)),
		"netlock.flags.try":      b2s(h.Has(wire.FlagTry)),
		"netlock.flags.fwd":      b2s(h.Has(wire.FlagForwarded)),
		"netlock.flags.renewed":  b2s(h.Has(wire.FlagRenewed)),
		"netlock.flags.batch":    b2s(h.Has(wire.FlagBatch)),
		"netlock.flags.reserved": fmt.Sprintf("0x%02x", uint8(f.Flags)>>6), // masked 0xc0, shifted
		"netlock.priority":       strconv.Itoa(int(f.Priority)),
		"netlock.tenant":         strconv.Itoa(int(f.Tenant)),
		"netlock.lock":           strconv.FormatUint(uint64(f.Lock), 10),
		"netlock.txn":            strconv.FormatUint(f.Txn, 10),
		"netlock.token":          strconv.FormatUint(f.Token, 10),
		"netlock.timestamp":      strconv.FormatUint(f.Timestamp, 10),
		"netlock.lease":          strconv.FormatUint(uint64(f.LeaseMicros), 10),
		"netlock.client_ip":      h.ClientAddr().Addr().String(),
		"netlock.client_port":    strconv.Itoa(int(h.ClientPort())),
		"netlock.slots":          strconv.Itoa(int(f.Slots)),
		"_ws.expert.message":     "",
		"_ws.col.Info":           f.String(),
	}
	if f.Op == wire.OpAdmin {
		m["netlock.admin"], m["netlock.status"] = strconv.Itoa(int(f.Status)), ""
	} else {
		m["netlock.status"], m["netlock.admin"] = strconv.Itoa(int(f.Status)), ""
	}
	for _, k := range []string{"netlock.rack_key", "netlock.stat.lock", "netlock.stat.requests", "netlock.stat.overflows",
		"netlock.stat.depth", "netlock.stat.declared", "netlock.resident"} {
		m[k] = ""
	}
	// After the header: the rack key of a control message, then an admin stats or residents
	// reply's body, then the rest as the trailer (wire.Fields.String does not show them).
	rest := p.trailer
	if f.Op.IsControl() && len(rest) >= wire.AuthLen {
		m["netlock.rack_key"] = fmt.Sprintf("0x%016x", binary.BigEndian.Uint64(rest))
		rest = rest[wire.AuthLen:]
		if f.Op == wire.OpAdmin && f.Flags&wire.FlagReply != 0 {
			join := func(k string, v uint64) {
				if m[k] != "" {
					m[k] += ";"
				}
				m[k] += strconv.FormatUint(v, 10)
			}
			switch f.Status {
			case wire.AdminStats:
				stats, err := wire.ParseLockStats(nil, rest, int(f.Slots))
				if err != nil {
					panic(err)
				}
				for _, st := range stats {
					join("netlock.stat.lock", uint64(st.Lock))
					join("netlock.stat.requests", uint64(st.Requests))
					join("netlock.stat.overflows", uint64(st.Overflows))
					join("netlock.stat.depth", uint64(st.Depth))
					join("netlock.stat.declared", uint64(st.Declared))
				}
				rest = rest[len(stats)*wire.LockStatLen:]
			case wire.AdminResidents:
				ids, err := wire.ParseLockIDs(nil, rest, int(f.Slots))
				if err != nil {
					panic(err)
				}
				for _, id := range ids {
					join("netlock.resident", uint64(id))
				}
				rest = rest[4*len(ids):]
			}
		}
	}
	m["netlock.trailer"] = fmt.Sprintf("%x", rest)
	return m
}

// TestTsharkAdminNames: every admin sub-operation of wire/wire.go and wire/srvadmin.go has its
// name in the dissector (shown as "Admin operation: NAME (N)").
func TestTsharkAdminNames(t *testing.T) {
	names := map[wire.Status]string{wire.AdminPing: "ping", wire.AdminSweep: "lease-sweep", wire.AdminResetLock: "reset-lock",
		wire.AdminRDMAJoin: "rdma-join", wire.AdminRDMAPeer: "rdma-peer", wire.AdminTokenFloor: "token-floor",
		wire.AdminYield: "yield", wire.AdminAdopt: "adopt", wire.AdminStats: "stats", wire.AdminTakeover: "takeover",
		wire.AdminResidents: "residents", wire.AdminSwitchProbe: "switch-probe", wire.AdminSwitchReset: "switch-reset",
		wire.AdminSwitchForceRelease: "switch-force-release", wire.AdminSwitchTokenBase: "switch-token-base",
		wire.AdminSwitchGetCookie: "switch-get-cookie", wire.AdminSwitchSetCookie: "switch-set-cookie",
		wire.AdminSwitchSetBuffered: "switch-set-buffered"}
	var pkts []capturePacket
	var order []wire.Status
	for st := range names {
		order = append(order, st)
	}
	slices.Sort(order)
	for _, st := range order {
		pkts = append(pkts, capturePacket{src: clientAddr, dst: serverAddr, fields: &wire.Fields{Op: wire.OpAdmin, Status: st}})
	}
	path := filepath.Join(t.TempDir(), "admin.pcap")
	writePcap(t, path, pkts)
	out := runTshark(t, "-r", path, "-V")
	for _, st := range order {
		want := fmt.Sprintf("Admin operation: %s (%d)", names[st], st)
		if !strings.Contains(out, want) {
			t.Errorf("no %q in the dissection", want)
		}
	}
}

// TestTsharkDissectorFields writes a capture with the Go code and checks every field the Lua
// dissector shows, per packet, against the Go encoder; the Info column must equal
// wire.Fields.String.
func TestTsharkDissectorFields(t *testing.T) {
	pkts := sampleCapture()
	path := filepath.Join(t.TempDir(), "netlock.pcap")
	writePcap(t, path, pkts)
	args := []string{"-r", path, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=;"}
	for _, f := range tsharkFields {
		args = append(args, "-e", f)
	}
	out := runTshark(t, args...)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) != len(pkts) {
		t.Fatalf("tshark printed %d lines for %d packets:\n%s", len(lines), len(pkts), out)
	}
	for i, line := range lines {
		cols := strings.Split(line, "\t")
		if len(cols) != len(tsharkFields) {
			t.Fatalf("#%d: %d columns, want %d: %q", i+1, len(cols), len(tsharkFields), line)
		}
		for name, want := range wantTsharkFields(pkts[i]) {
			got := cols[indexOf(tsharkFields, name)]
			if got != want {
				t.Errorf("frame %d: %s = %q, want %q", i+1, name, got, want)
			}
		}
	}
}

// TestTsharkDissectorNames checks the verbose tree: op, mode, status and admin names, flag bit
// names, and the expert info of malformed packets.
func TestTsharkDissectorNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netlock.pcap")
	writePcap(t, path, sampleCapture())
	out := runTshark(t, "-r", path, "-V")
	for _, want := range []string{
		"NetLock lock protocol, acquire lock=42 txn=1001 mode=X prio=1 tenant=3 lease=250000us",
		"Op: acquire (0)", "Op: release (1)", "Op: push-back (2)", "Op: grant (3)", "Op: reject (4)",
		"Op: overflow (5)", "Op: queue-empty (6)", "Op: lease-probe (7)", "Op: admin (8)",
		"Mode: shared (0)", "Mode: exclusive (1)",
		"Status: would-block (2)", "Status: ok (0)", "Admin operation: ping (1)",
		"Flags: 0x11 (reply|renewed)", "Flags: 0xff (reply|retry|try|fwd|renewed|batch|0xc0)",
		".... ...1 = Reply: True", ".... ..1. = Retry: True", ".... .1.. = Try: True",
		".... 1... = Forwarded: True", "...1 .... = Renewed: True", "..1. .... = Batch: True", "11.. .... = Reserved: 0x3",
		"Transaction: 18446744073709551615", "Fencing token: 77", "Timestamp (ns): 1700000000000000000",
		"Lease (us): 250000", "Client IP: 127.0.0.1", "Client port: 40001", "Slots: 12",
		"Trailer (reserved): 6f6e652d525454207061796c6f6164",
		"Expert Info (Error/Malformed): Unsupported version",
		"Expert Info (Error/Malformed): Unknown op", "Expert Info (Error/Malformed): Unknown mode",
		"Expert Info (Error/Malformed): Packet shorter than header: 5 of 48 bytes",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("tshark -V output lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("tshark -V output:\n%s", out)
	}
}

// TestTsharkFilter checks that display filters on dissector fields work.
func TestTsharkFilter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "netlock.pcap")
	pkts := sampleCapture()
	writePcap(t, path, pkts)
	out := runTshark(t, "-r", path, "-Y", "netlock.op == 3 && netlock.lock == 42", "-T", "fields", "-e", "frame.number")
	want := ""
	for i, p := range pkts {
		if p.fields != nil && p.version == 0 && p.fields.Op == wire.OpGrant && p.fields.Lock == 42 {
			want += strconv.Itoa(i+1) + "\n"
		}
	}
	if out != want || want == "" {
		t.Fatalf("filtered frames %q, want %q", out, want)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	panic(v)
}
