package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/antoninbas/p4runtime-go-client/pkg/client"
	p4v1 "github.com/p4lang/p4runtime/go/p4/v1"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// hostileL3 returns l3.p4's source, a copy with a constant nested depth unary minuses deep
// before MyIngress, and a copy whose MyIngress declares and writes register<bit<128>>(cells)
// huge.
func hostileL3(t *testing.T, depth int, cells string) (base, deep, huge string) {
	t.Helper()
	b, err := os.ReadFile(l3Program)
	if err != nil {
		t.Fatal(err)
	}
	base = string(b)
	const ingress = "control MyIngress("
	ig := strings.Index(base, ingress)
	ap := strings.Index(base[max(ig, 0):], "    apply {\n")
	if ig < 0 || ap < 0 {
		t.Fatal("l3.p4 has no MyIngress apply block")
	}
	deep = base[:ig] + "const int deep = " + strings.Repeat("-", depth) + "1;\n" + base[ig:]
	at := ig + ap
	huge = base[:at] + "    register<bit<128>>(" + cells + ") huge;\n    apply {\n        huge.write(0, 1);\n" +
		base[at+len("    apply {\n"):]
	return base, deep, huge
}

// p4infoText is the P4Info text the front end generates for src.
func p4infoText(t *testing.T, src string) string {
	t.Helper()
	prog, err := (&p4rt.Bundle{Files: []p4rt.BundleFile{{Name: "main.p4", Data: []byte(src)}}}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	info, err := prog.P4InfoTextCompat() // the client's p4runtime rc.5 messages lack 1.4.0's fields
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// pushStatus pushes src as a bare P4 device config with info as its P4Info and returns the
// status of SetForwardingPipelineConfig.
func pushStatus(c *client.Client, src, info string) *status.Status {
	_, err := c.SetFwdPipeFromBytes(context.Background(), []byte(src), []byte(info), 1)
	return status.Convert(err)
}

// TestSwitchHostilePipelines is issue 18's item 5 against a running netlock switch, through its
// gRPC server: a pipeline whose device config nests 1,000,000 unary minuses (1 MB) (which overflowed
// the front end's stack and killed the switch) is refused with INVALID_ARGUMENT, one with
// register<bit<128>>(32w0xFFFFFFFF) (64 GB, which the switch tried to allocate) with
// RESOURCE_EXHAUSTED, and the switch keeps serving: it takes l3.p4, a table entry, and stops
// cleanly. The negative control is the same register with 1024 cells, which is taken.
func TestSwitchHostilePipelines(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	logrus.SetLevel(logrus.PanicLevel)

	// 1,000,000 minuses: with 2^20 the file passes the front end's bound of 2^20 tokens and is
	// refused as "program too large" before it is parsed.
	base, deep, huge := hostileL3(t, 1_000_000, "32w0xFFFFFFFF")
	sw := startSwitch(t, []string{"--no-p4", "--device-id", "1", "--grpc-server-addr", "127.0.0.1:0",
		"--memory-limit", "256MiB"})
	if !strings.Contains(sw.out.String(), "Bounds: nesting 256 levels, state memory 268435456 bytes") {
		t.Errorf("the switch does not state its bounds:\n%s", sw.out)
	}
	c := primaryController(t, sw.grpc, 1, make(chan *p4v1.StreamMessageResponse, 10))

	st := pushStatus(c, deep, p4infoText(t, base))
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "nested too deeply") {
		t.Fatalf("1 MB of unary minus: %v; want INVALID_ARGUMENT, nested too deeply", st)
	}
	st = pushStatus(c, huge, p4infoText(t, huge))
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "huge") {
		t.Fatalf("register<bit<128>>(32w0xFFFFFFFF): %v; want RESOURCE_EXHAUSTED naming the register", st)
	}
	sane := strings.Replace(huge, "32w0xFFFFFFFF", "1024", 1)
	if st := pushStatus(c, sane, p4infoText(t, sane)); st.Code() != codes.OK {
		t.Fatalf("the same register with 1024 cells: %v", st)
	}

	pushPipeline(t, c, bundleFile(t, l3Program))
	e := c.NewTableEntry("MyIngress.ipv4_lpm",
		map[string]client.MatchInterface{"hdr.ipv4.dst": &client.LpmMatch{Value: net.ParseIP("10.0.1.0").To4(), PLen: 24}},
		c.NewTableActionDirect("MyIngress.route", [][]byte{swMAC, aMAC, {1}}), nil)
	if err := c.InsertTableEntry(context.Background(), e); err != nil {
		t.Fatalf("after the hostile pushes: %v", err)
	}
	sw.stop() // fails the test if the switch returned an error
	if !strings.Contains(sw.out.String(), "Switch stopped") {
		t.Errorf("the switch did not stop cleanly:\n%s", sw.out)
	}
}

// TestSwitchBoundsFlags: --max-nesting and --memory-limit set the bounds of pushed pipelines and
// of the program argument; a default switch takes what the tightened one refuses (the negative
// controls), and bad values are refused before the switch starts.
func TestSwitchBoundsFlags(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	logrus.SetLevel(logrus.PanicLevel)

	// 20 unary minuses nest the constant 21 levels; l3.p4 itself nests less than 16.
	base, deep, _ := hostileL3(t, 20, "1")
	l3 := bundleFile(t, l3Program)
	for _, tc := range []struct {
		name      string
		flags     []string
		deep, mem codes.Code // what a push of the deep program, and of l3.p4, is answered
	}{
		{"default", nil, codes.OK, codes.OK},
		{"max-nesting 16", []string{"--max-nesting", "16"}, codes.InvalidArgument, codes.OK},
		{"memory-limit 4kB", []string{"--memory-limit", "4kB"}, codes.ResourceExhausted, codes.ResourceExhausted},
		{"memory-limit none", []string{"--memory-limit", "none"}, codes.OK, codes.OK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sw := startSwitch(t, append([]string{"--no-p4", "--device-id", "1", "--grpc-server-addr", "127.0.0.1:0"}, tc.flags...))
			c := primaryController(t, sw.grpc, 1, make(chan *p4v1.StreamMessageResponse, 10))
			if st := pushStatus(c, deep, p4infoText(t, deep)); st.Code() != tc.deep {
				t.Errorf("the program nested 21 deep: %v, want %v", st, tc.deep)
			}
			checked, err := l3.Compile()
			if err != nil {
				t.Fatal(err)
			}
			info, err := checked.P4InfoTextCompat()
			if err != nil {
				t.Fatal(err)
			}
			if st := pushStatus(c, base, info); st.Code() != tc.mem {
				t.Errorf("l3.p4 (its 512-cell counter takes 8 KB): %v, want %v", st, tc.mem)
			}
		})
	}

	// The program argument is held to the same bounds.
	dir := t.TempDir()
	deepFile := filepath.Join(dir, "deep.p4")
	if err := os.WriteFile(deepFile, []byte(deep), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--max-nesting", "16", deepFile}, "nested too deeply"},
		{[]string{"--memory-limit", "4kB", l3Program}, "memory limit"},
		{[]string{"--max-nesting", "0", "--no-p4"}, "--max-nesting 0: want 1..4096"},
		{[]string{"--max-nesting", "4097", "--no-p4"}, "--max-nesting 4097: want 1..4096"},
		{[]string{"--memory-limit", "0", "--no-p4"}, "--memory-limit"},
		{[]string{"--memory-limit", "150%", "--no-p4"}, "--memory-limit"},
	} {
		cmd := newSwitchCommand()
		cmd.SetOut(&lockedBuffer{})
		cmd.SetErr(&lockedBuffer{})
		cmd.SetArgs(append(tc.args, "--grpc-server-addr", "127.0.0.1:0"))
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("netlock switch %q: %v; want an error with %q", tc.args, err, tc.want)
		}
	}
}

// TestSwitchMaxNestingFlag: a program whose ingress nests an expression almost as deep as the
// largest --max-nesting allows loads in the engine (its compiler recurses once per level), so no
// value of the flag lets a program overflow the stack.
func TestSwitchMaxNestingFlag(t *testing.T) {
	base, _, _ := hostileL3(t, 1, "1")
	ig := strings.Index(base, "control MyIngress(")
	at := ig + strings.Index(base[ig:], "    apply {\n") + len("    apply {\n")
	deep := base[:at] + "        hdr.ipv4.ttl = " + strings.Repeat("-", maxNestingFlag-8) + "hdr.ipv4.ttl;\n" + base[at:]
	file := filepath.Join(t.TempDir(), "deep.p4")
	if err := os.WriteFile(file, []byte(deep), 0o644); err != nil {
		t.Fatal(err)
	}
	sw := startSwitch(t, []string{"--max-nesting", "4096", "--grpc-server-addr", "127.0.0.1:0", file})
	sw.stop()
}
