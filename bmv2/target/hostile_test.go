package target

import (
	"context"
	"os"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/netlock-go/netlock/bmv2/p4rt"
)

// pushSource pushes P4 source as the pipeline, with info as its P4Info (text), and returns the
// gRPC status of SetForwardingPipelineConfig.
func pushSource(t *testing.T, c *ctl, src, info string) *status.Status {
	t.Helper()
	b := &p4rt.Bundle{Files: []p4rt.BundleFile{{Name: "main.p4", Data: []byte(src)}}}
	_, err := c.SetFwdPipeFromBytes(context.Background(), b.Encode(), []byte(info), 1)
	return status.Convert(err)
}

// p4infoOf is the P4Info text the front end generates for src.
func p4infoOf(t *testing.T, src string) string {
	t.Helper()
	b := &p4rt.Bundle{Files: []p4rt.BundleFile{{Name: "main.p4", Data: []byte(src)}}}
	prog, err := b.Compile()
	if err != nil {
		t.Fatal(err)
	}
	info, err := prog.P4InfoTextCompat() // the client's p4runtime rc.5 messages lack 1.4.0's fields
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// TestHostilePipelines is issue 18's item 5 over P4Runtime: a pipeline nested 500,000 deep
// (which overflowed the engine's stack and killed the switch) is refused with
// INVALID_ARGUMENT, one with a 64 GB register (which the switch tried to allocate) with
// RESOURCE_EXHAUSTED, and the switch then takes a proper pipeline.
func TestHostilePipelines(t *testing.T) {
	l3, err := os.ReadFile("testdata/l3.p4")
	if err != nil {
		t.Fatal(err)
	}
	base := string(l3)
	info := p4infoOf(t, base)
	r := newRig(t, Options{MemoryLimit: 256 << 20})
	c := r.connect(t)

	deep := strings.Replace(base, "control MyIngress(", "const int deep = "+strings.Repeat("-", 500_000)+"1;\ncontrol MyIngress(", 1)
	st := pushSource(t, c, deep, info)
	if st.Code() != codes.InvalidArgument || !strings.Contains(st.Message(), "nested too deeply") {
		t.Fatalf("deep program: got %v, want INVALID_ARGUMENT, nested too deeply", st)
	}

	ig := strings.Index(base, "control MyIngress(")
	ap := strings.Index(base[max(ig, 0):], "    apply {\n")
	if ig < 0 || ap < 0 {
		t.Fatal("no MyIngress apply block to put the register in")
	}
	at := ig + ap
	huge := base[:at] + "    register<bit<128>>(32w0xFFFFFFFF) huge;\n    apply {\n        huge.write(0, 1);\n" + base[at+len("    apply {\n"):]
	st = pushSource(t, c, huge, p4infoOf(t, huge))
	if st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), "huge") {
		t.Fatalf("huge register: got %v, want RESOURCE_EXHAUSTED naming the register", st)
	}

	// The negative control: the same program with a register of a sane size is taken.
	sane := strings.Replace(huge, "32w0xFFFFFFFF", "1024", 1)
	if st := pushSource(t, c, sane, p4infoOf(t, sane)); st.Code() != codes.OK {
		t.Fatalf("a 1024-cell register: %v", st)
	}
	pushL3(t, c)
}
