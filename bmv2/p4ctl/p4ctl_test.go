package p4ctl

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const program = "../../testbed/mininet/basic.p4"

func startServer(t *testing.T) (string, *p4rt.MemDevice) {
	t.Helper()
	dev := p4rt.NewMemDevice()
	srv, err := p4rt.NewServer(p4rt.Config{DeviceID: 1, Device: dev})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop, err := p4rt.Serve("127.0.0.1:0", srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr.String(), dev
}

func TestPushAndApplyRuntime(t *testing.T) {
	addr, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prog, err := LoadProgram(program)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("../../testbed/mininet/s1-runtime.json")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := ParseRuntime(data)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dial(ctx, addr, 1, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Push(ctx, prog); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply(ctx, prog.P4Info, rt); err != nil {
		t.Fatal(err)
	}
	entries, err := s.C.ReadTableEntryWildcard(ctx, "MyIngress.ipv4_lpm")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("read %d entries, want 2", len(entries))
	}
	for _, e := range entries {
		lpm := e.Match[0].GetLpm()
		if lpm == nil || lpm.PrefixLen != 32 || len(lpm.Value) != 4 || lpm.Value[0] != 10 {
			t.Fatalf("entry match %v, want 10.0.x.y/32", e.Match)
		}
		if p := e.Action.GetAction().Params; len(p) != 2 || len(p[0].Value) != 6 {
			t.Fatalf("entry params %v, want a MAC and a port", p)
		}
	}
	// Inserting the same entries again is refused (ALREADY_EXISTS), which Apply reports.
	if err := s.Apply(ctx, prog.P4Info, &Runtime{TableEntries: rt.TableEntries[1:2]}); err == nil {
		t.Fatal("duplicate insert accepted")
	}
}

func TestEncodeValue(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []byte
		err   bool
	}{
		{`"10.0.1.1"`, 32, []byte{10, 0, 1, 1}, false},
		{`"08:00:00:00:01:11"`, 48, []byte{8, 0, 0, 0, 1, 0x11}, false},
		{`2`, 9, []byte{0, 2}, false},
		{`"0x1ff"`, 9, []byte{1, 0xff}, false},
		{`"1_000"`, 16, []byte{0x03, 0xe8}, false},
		{`512`, 9, nil, true},
		{`"10.0.1.1"`, 16, nil, true},
		{`-1`, 8, nil, true},
		{`"nope"`, 8, nil, true},
		{`{}`, 8, nil, true},
	} {
		got, err := encodeValue(json.RawMessage(tc.in), tc.width)
		if (err != nil) != tc.err || (!tc.err && string(got) != string(tc.want)) {
			t.Errorf("encodeValue(%s, %d) = %x, %v; want %x (error %v)", tc.in, tc.width, got, err, tc.want, tc.err)
		}
	}
}

func TestRuntimeErrors(t *testing.T) {
	addr, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	prog, err := LoadProgram(program)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Dial(ctx, addr, 1, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Push(ctx, prog); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ entry, want string }{
		{`{"table": "MyIngress.nope", "action_name": "MyIngress.drop", "action_params": {}}`, "no table"},
		{`{"table": "MyIngress.ipv4_lpm", "action_name": "MyIngress.fly", "action_params": {}}`, "no action"},
		{`{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.1", 33]}, "action_name": "MyIngress.drop", "action_params": {}}`, "prefix length"},
		{`{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.srcAddr": ["10.0.0.1", 8]}, "action_name": "MyIngress.drop", "action_params": {}}`, "no match field"},
		{`{"table": "MyIngress.ipv4_lpm", "match": {"hdr.ipv4.dstAddr": ["10.0.0.1", 8]}, "action_name": "MyIngress.ipv4_forward", "action_params": {"port": 1}}`, "missing parameter"},
	} {
		rt, err := ParseRuntime([]byte(`{"table_entries": [` + tc.entry + `]}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Apply(ctx, prog.P4Info, rt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("entry %s: error %v, want %q", tc.entry, err, tc.want)
		}
	}
}

// TestLoadCompiled pushes a program given as a device config file and a P4Info file (the way
// bmv2's p4c outputs are pushed); here the files hold netlock's bundle and the front end's P4Info.
func TestLoadCompiled(t *testing.T) {
	addr, _ := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	src, err := LoadProgram(program)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dc, info := dir+"/device.cfg", dir+"/p4info.txt"
	if err := os.WriteFile(dc, src.DeviceConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(info, src.P4InfoText, 0o644); err != nil {
		t.Fatal(err)
	}
	prog, err := LoadCompiled(dc, info)
	if err != nil {
		t.Fatal(err)
	}
	if len(prog.P4Info.Tables) != len(src.P4Info.Tables) {
		t.Fatalf("P4Info read back with %d tables, want %d", len(prog.P4Info.Tables), len(src.P4Info.Tables))
	}
	s, err := Dial(ctx, addr, 1, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Push(ctx, prog); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCompiled(dc, dir+"/missing.txt"); err == nil {
		t.Fatal("missing P4Info accepted")
	}
	if err := os.WriteFile(info, []byte("tables { nonsense"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCompiled(dc, info); err == nil {
		t.Fatal("malformed P4Info accepted")
	}
}
