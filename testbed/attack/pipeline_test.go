package attack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/netlock-go/netlock/bmv2/p4rt"
	"github.com/netlock-go/netlock/internal/testenv"
)

// l3Variants reads bmv2/target/testdata/l3.p4 and returns it, a copy whose ingress assigns an
// expression of depth unary minuses, and a copy whose ingress declares and writes
// register<bit<128>>(cells) huge.
func l3Variants(t *testing.T, depth int, cells string) (base, deep, huge string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.ModuleRoot(t), "bmv2", "target", "testdata", "l3.p4"))
	if err != nil {
		t.Fatal(err)
	}
	base = string(b)
	ig := strings.Index(base, "control MyIngress(")
	ap := strings.Index(base[max(ig, 0):], "    apply {\n")
	if ig < 0 || ap < 0 {
		t.Fatal("l3.p4 has no MyIngress apply block")
	}
	at := ig + ap
	rest := base[at+len("    apply {\n"):]
	deep = base[:at] + "    apply {\n        hdr.ipv4.ttl = " + strings.Repeat("-", depth) + "hdr.ipv4.ttl;\n" + rest
	huge = base[:at] + "    register<bit<128>>(" + cells + ") huge;\n    apply {\n        huge.write(0, 1);\n" + rest
	return base, deep, huge
}

// push sends src as a bare P4 device config (SetForwardingPipelineConfig, VERIFY_AND_COMMIT) with
// info as its P4Info, and returns the answer's status.
func push(c *controller, src, info string) *status.Status {
	_, err := c.SetFwdPipeFromBytes(context.Background(), []byte(src), []byte(info), 1)
	return status.Convert(err)
}

// infoOf is the P4Info text netlock's front end generates for src.
func infoOf(t *testing.T, src string) string {
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

// vmHWM is the peak resident memory of process pid in bytes (/proc/PID/status).
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// alive fails the test if the process has exited.
func (p *proc) alive(t *testing.T) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err
		t.Fatalf("the switch exited (%v); output:\n%s", err, p.output())
	default:
	}
}

// TestHostilePipelines (issue 18, item 5), against `netlock switch` started without a program:
// a pipeline whose ingress nests 1,000,000 unary minuses (1 MB; it overflowed the front end's
// stack and killed the switch) is refused with INVALID_ARGUMENT, one with
// register<bit<128>>(32w0xFFFFFFFF) (64 GB, which the switch set out to allocate) with
// RESOURCE_EXHAUSTED; the process lives, its peak memory stays under 1 GB, and it takes the
// next proper pipeline and its entries. Negative controls: the bounds are what refuses, as the
// flags that move them show (--max-nesting 4096 takes a program 4,000 deep that the default
// refuses; --memory-limit none takes a 64 MB register that --memory-limit 32MiB refuses; the 64
// GB register itself is not pushed without a limit, which would take the machine's memory).
func TestHostilePipelines(t *testing.T) {
	base, deep, huge := l3Variants(t, 1_000_000, "32w0xFFFFFFFF")
	sw := start(t, "switch", "--no-p4", "--grpc-server-addr", "127.0.0.1:0", "--device-id", "0")
	addr := sw.waitFor(t, listening)[1]
	c, ok := dialP4RT(t, addr, insecure.NewCredentials(), 1)
	if !ok {
		t.Fatal("not primary")
	}
	if st := push(c, deep, infoOf(t, base)); st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "nested too deeply") {
		t.Fatalf("1,000,000 unary minuses: %v; want INVALID_ARGUMENT, nested too deeply", st)
	}
	sw.alive(t)
	if st := push(c, huge, infoOf(t, huge)); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "huge") {
		t.Fatalf("register<bit<128>>(32w0xFFFFFFFF): %v; want RESOURCE_EXHAUSTED naming the register", st)
	}
	sw.alive(t)
	if hwm := vmHWM(t, sw.cmd.Process.Pid); hwm > 1<<30 {
		t.Errorf("the switch's peak resident memory is %d bytes, want under 1 GB", hwm)
	}
	if st := push(c, base, infoOf(t, base)); st.Code() != codes.OK {
		t.Fatalf("l3.p4 after the hostile pushes: %v", st)
	}
	e := c.NewTableEntry("MyIngress.ipv4_lpm", nil, c.NewTableActionDirect("MyIngress.drop", nil), nil)
	e.IsDefaultAction = true
	if err := c.ModifyTableEntry(context.Background(), e); err != nil {
		t.Fatalf("a write after the hostile pushes: %v", err)
	}
	sw.alive(t)

	t.Run("controls", func(t *testing.T) {
		_, deep4000, _ := l3Variants(t, 4000, "1") // its P4Info is l3.p4's
		_, _, mid := l3Variants(t, 0, "4194304")   // 2^22 cells of 16 bytes: 64 MB
		for _, tc := range []struct {
			flags    []string
			src      string
			want     codes.Code
			whatSent string
		}{
			{nil, deep4000, codes.InvalidArgument, "4,000 unary minuses at the default bound"},
			{[]string{"--max-nesting", "4096"}, deep4000, codes.OK, "4,000 unary minuses at --max-nesting 4096"},
			{[]string{"--memory-limit", "32MiB"}, mid, codes.ResourceExhausted, "a 64 MB register at --memory-limit 32MiB"},
			{[]string{"--memory-limit", "none"}, mid, codes.OK, "a 64 MB register at --memory-limit none"},
		} {
			sw := start(t, append([]string{"switch", "--no-p4", "--grpc-server-addr", "127.0.0.1:0", "--device-id", "0"}, tc.flags...)...)
			c, ok := dialP4RT(t, sw.waitFor(t, listening)[1], insecure.NewCredentials(), 1)
			if !ok {
				t.Fatal("not primary")
			}
			info := infoOf(t, base)
			if tc.src == mid {
				info = infoOf(t, mid)
			}
			if st := push(c, tc.src, info); st.Code() != tc.want {
				t.Errorf("%s: %v, want %v", tc.whatSent, st, tc.want)
			}
			sw.alive(t)
		}
	})
}
