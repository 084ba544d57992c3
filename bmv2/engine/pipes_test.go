package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/netlock-go/netlock/bmv2/front"
)

// Tests of Config.Pipes with testdata/pipes.p4: each pass writes into the packet's pipe_h what
// the register copy of its pipe held, so an output shows which pipe's state each pass used.

const (
	pipesFwd    = 1 // pipes.p4's OP_FWD
	pipesResub  = 2 // OP_RESUB
	pipesMirror = 3 // OP_MIRROR (session 5)
)

// pipesTag is the tag tag_t's one entry per op sets (the entries are written once, for every
// pipe).
func pipesTag(op byte) uint32 { return 0x7a60 + uint32(op) }

// loadPipes loads testdata/pipes.p4 on a chip of n pipes, with tag_t's entries.
func loadPipes(t testing.TB, n int) *Switch {
	t.Helper()
	sw, err := loadPipesErr(t, Config{Pipes: n})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := sw.Table("tag_t")
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range []byte{pipesFwd, pipesResub} {
		v := binary.BigEndian.AppendUint32(nil, pipesTag(op))
		if err := tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{op}}}, Action: "set_tag", Args: [][]byte{v}}); err != nil {
			t.Fatal(err)
		}
	}
	return sw
}

func loadPipesErr(t testing.TB, cfg Config) (*Switch, error) {
	t.Helper()
	src, err := os.ReadFile("testdata/pipes.p4")
	if err != nil {
		t.Fatal(err)
	}
	return loadTNA(t, string(src), cfg)
}

// pipesHdr is pipes.p4's pipe_h.
type pipesHdr struct {
	op               byte
	out              uint16
	ig, ig2, eg, tag uint32
	color, dcolor    byte
}

const pipesFrameLen = 14 + 21

// pipesPkt is an Ethernet frame carrying pipe_h with op and out.
func pipesPkt(op byte, out uint16) []byte {
	b := make([]byte, pipesFrameLen)
	b[12], b[13] = 0x88, 0xb6
	b[14] = op
	binary.BigEndian.PutUint16(b[15:], out)
	return b
}

func parsePipesHdr(t testing.TB, b []byte) pipesHdr {
	t.Helper()
	if len(b) != pipesFrameLen {
		t.Fatalf("frame of %d bytes, want %d: %x", len(b), pipesFrameLen, b)
	}
	return pipesHdr{op: b[14], out: binary.BigEndian.Uint16(b[15:]), ig: binary.BigEndian.Uint32(b[17:]),
		ig2: binary.BigEndian.Uint32(b[21:]), eg: binary.BigEndian.Uint32(b[25:]), tag: binary.BigEndian.Uint32(b[29:]),
		color: b[33], dcolor: b[34]}
}

// pipesStep is one packet of a scenario: sent on port with op and out, it must leave on
// wantPort with ig, ig2 and eg as given (tag is checked on every output).
type pipesStep struct {
	port        int
	op          byte
	out         uint16
	wantPort    int
	ig, ig2, eg uint32
}

// fwd is a step forwarding from port to out (leaving there).
func fwd(port int, out uint16, ig, eg uint32) pipesStep {
	return pipesStep{port: port, op: pipesFwd, out: out, wantPort: int(out), ig: ig, eg: eg}
}

// TestPipesState runs scenarios on chips of 0, 1, 2 and 4 pipes: which copy of a register
// each pass uses. The one-pipe cases are the negative controls: the same packets see one
// copy, so a test that the copies are apart can fail.
func TestPipesState(t *testing.T) {
	warm := []pipesStep{fwd(1, 1, 0, 0), fwd(1, 1, 1, 1), fwd(1, 1, 2, 2)} // three packets in pipe 0
	steps := func(ss ...pipesStep) []pipesStep { return append(append([]pipesStep(nil), warm...), ss...) }
	tests := []struct {
		name  string
		pipes int
		steps []pipesStep
		// ig and eg are ig_count[0] and eg_count[0] of each pipe at the end.
		ig, eg []uint32
	}{
		{"port 129, two pipes: pipe 1's copies", 2,
			steps(fwd(129, 129, 0, 0)), []uint32{3, 1}, []uint32{3, 1}},
		{"port 129, one pipe: the same copies", 1,
			steps(fwd(129, 129, 3, 3)), []uint32{4}, []uint32{4}},
		{"port 129, Pipes 0: one pipe", 0,
			steps(fwd(129, 129, 3, 3)), []uint32{4}, []uint32{4}},
		// In at 129 (pipe 1), out of 68 (pipe 0's recirculation port): the egress at 68 and
		// the second ingress pass use pipe 0's copies, then out of port 2.
		{"recirculation from pipe 1 enters pipe 0, two pipes", 2,
			steps(pipesStep{port: 129, op: pipesFwd, out: 68, wantPort: 2, ig: 0, ig2: 3, eg: 4}), []uint32{4, 1}, []uint32{5, 0}},
		{"recirculation, one pipe", 1,
			steps(pipesStep{port: 129, op: pipesFwd, out: 68, wantPort: 2, ig: 3, ig2: 4, eg: 4}), []uint32{5}, []uint32{5}},
		// In at 1 (pipe 0), out of 130: the egress uses pipe 1's eg_count.
		{"egress on port 130 is pipe 1's, two pipes", 2,
			steps(fwd(1, 130, 3, 0), fwd(1, 130, 4, 1)), []uint32{5, 0}, []uint32{3, 2}},
		{"egress on port 130, one pipe", 1,
			steps(fwd(1, 130, 3, 3), fwd(1, 130, 4, 4)), []uint32{5}, []uint32{5}},
		// A resubmitted packet is the packet as received (ig as sent, 0); its second pass
		// sees the first pass's increment of its own pipe's copy.
		{"resubmit stays in pipe 1, two pipes", 2,
			steps(pipesStep{port: 129, op: pipesResub, out: 2, wantPort: 2, ig2: 1, eg: 3}), []uint32{3, 2}, []uint32{4, 0}},
		{"resubmit, one pipe", 1,
			steps(pipesStep{port: 129, op: pipesResub, out: 2, wantPort: 2, ig2: 4, eg: 3}), []uint32{5}, []uint32{4}},
		{"four pipes", 4,
			steps(fwd(385, 385, 0, 0), fwd(385, 1, 1, 3), fwd(257, 257, 0, 0), fwd(200, 300, 0, 1)),
			[]uint32{3, 1, 1, 2}, []uint32{4, 0, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw := loadPipes(t, tt.pipes)
			for i, st := range tt.steps {
				res, err := sw.Process(st.port, pipesPkt(st.op, st.out))
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				if len(res.Out) != 1 || res.Out[0].Port != st.wantPort {
					t.Fatalf("packet %d: out %v, want one packet on port %d", i, res.Out, st.wantPort)
				}
				got := parsePipesHdr(t, res.Out[0].Data)
				got.color, got.dcolor = 0, 0 // unconfigured meters: green (TestPipesMeters)
				want := pipesHdr{op: st.op, out: st.out, ig: st.ig, ig2: st.ig2, eg: st.eg, tag: pipesTag(st.op)}
				if got != want {
					t.Errorf("packet %d (port %d): got %+v, want %+v", i, st.port, got, want)
				}
			}
			for _, reg := range []struct {
				name string
				want []uint32
			}{{"ig_count", tt.ig}, {"eg_count", tt.eg}} {
				r, err := sw.Register(reg.name)
				if err != nil {
					t.Fatal(err)
				}
				if len(r.Pipes()) != len(reg.want) {
					t.Errorf("%s.Pipes() = %v, want %d pipes", reg.name, r.Pipes(), len(reg.want))
				}
				for p, w := range reg.want {
					v, err := r.ReadPipe(p, 0)
					if err != nil {
						t.Fatal(err)
					}
					if got := binary.BigEndian.Uint32(v); got != w {
						t.Errorf("%s[0] in pipe %d = %d, want %d", reg.name, p, got, w)
					}
				}
			}
		})
	}
}

// TestPipesMirror: an ingress-mirrored copy runs the egress of the pipe of the port it goes
// out of (130: pipe 1 on two pipes), the original that of its own port (2: pipe 0).
func TestPipesMirror(t *testing.T) {
	tests := []struct {
		pipes            int
		copyEg, originEg uint32 // eg_count[0] the copy's and the original's egress saw
	}{
		{2, 0, 3},
		{1, 3, 4}, // one pipe: one eg_count, the copy first
	}
	for _, tt := range tests {
		sw := loadPipes(t, tt.pipes)
		sw.SetCloneSession(5, CloneSession{Port: 130, HasPort: true})
		for i := 0; i < 3; i++ {
			mustProcess(t, sw, 1, pipesPkt(pipesFwd, 2))
		}
		res, err := sw.Process(1, pipesPkt(pipesMirror, 2))
		if err != nil || len(res.Out) != 2 || res.Out[0].Port != 130 || res.Out[1].Port != 2 {
			t.Fatalf("Pipes %d: %v %v, want the copy out of 130 and the packet out of 2", tt.pipes, res, err)
		}
		if c, o := parsePipesHdr(t, res.Out[0].Data), parsePipesHdr(t, res.Out[1].Data); c.eg != tt.copyEg || o.eg != tt.originEg {
			t.Errorf("Pipes %d: the copy saw eg %d, the original %d; want %d and %d", tt.pipes, c.eg, o.eg, tt.copyEg, tt.originEg)
		}
	}
}

// TestPipesMeters: an indexed meter and a table entry's direct meter, configured once for
// every pipe (one packet of burst, no refill), let one packet through green in each pipe on
// two pipes, and colour the second packet red on one pipe (the negative control).
func TestPipesMeters(t *testing.T) {
	const green, red = 0, 3 // MeterColor_t
	cfg := MeterConfig{CIR: 1e-12, PIR: 1e-12, CBS: 1, PBS: 1}
	for _, tt := range []struct {
		pipes  int
		second byte // the colours of the second packet, in at port 129
	}{{2, green}, {1, red}} {
		sw := loadPipes(t, tt.pipes)
		m, err := sw.Meter("ig_meter")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.SetRates(-1, cfg); err != nil {
			t.Fatal(err)
		}
		tbl, _ := sw.Table("tag_t")
		if err := tbl.SetMeter(Entry{Match: []FieldMatch{{Value: []byte{pipesFwd}}}}, cfg); err != nil {
			t.Fatal(err)
		}
		if got := m.Rates(0); got == nil || *got != cfg {
			t.Errorf("Pipes %d: Rates(0) = %v", tt.pipes, got)
		}
		first := parsePipesHdr(t, mustProcess(t, sw, 1, pipesPkt(pipesFwd, 1)))
		second := parsePipesHdr(t, mustProcess(t, sw, 129, pipesPkt(pipesFwd, 129)))
		if first.color != green || first.dcolor != green || second.color != tt.second || second.dcolor != tt.second {
			t.Errorf("Pipes %d: colours %d/%d then %d/%d, want green then %d", tt.pipes, first.color, first.dcolor, second.color, second.dcolor, tt.second)
		}
		if err := m.Reset(0); err != nil || m.Rates(0) != nil {
			t.Errorf("Pipes %d: after Reset(0): %v %v", tt.pipes, m.Rates(0), err)
		}
		if c := parsePipesHdr(t, mustProcess(t, sw, 129, pipesPkt(pipesFwd, 129))); c.color != green {
			t.Errorf("Pipes %d: after Reset(0), pipe 1's meter gave %d", tt.pipes, c.color)
		}
	}
}

// TestPipesAPI covers the runtime API on two pipes: counter reads sum the pipes, register
// reads are pipe 0's, writes go to every pipe, and the per-pipe accessors.
func TestPipesAPI(t *testing.T) {
	sw := loadPipes(t, 2)
	for i := 0; i < 3; i++ {
		mustProcess(t, sw, 1, pipesPkt(pipesFwd, 1))
	}
	for i := 0; i < 2; i++ {
		mustProcess(t, sw, 129, pipesPkt(pipesFwd, 129))
	}

	k, err := sw.Counter("ig_pkts")
	if err != nil {
		t.Fatal(err)
	}
	counterIs := func(what string, pipe int, wantP uint64) {
		t.Helper()
		var p, b uint64
		var err error
		if pipe < 0 {
			p, b, err = k.Read(0)
		} else {
			p, b, err = k.ReadPipe(pipe, 0)
		}
		if err != nil || p != wantP || b != wantP*pipesFrameLen {
			t.Errorf("%s: %d packets %d bytes (%v), want %d and %d", what, p, b, err, wantP, wantP*pipesFrameLen)
		}
	}
	counterIs("Read (the sum)", -1, 5)
	counterIs("ReadPipe 0", 0, 3)
	counterIs("ReadPipe 1", 1, 2)
	if !slices.Equal(k.Pipes(), []int{0, 1}) {
		t.Errorf("counter Pipes() = %v", k.Pipes())
	}
	if err := k.Write(0, 10, 10*pipesFrameLen); err != nil {
		t.Fatal(err)
	}
	counterIs("Read after Write", -1, 10)
	counterIs("ReadPipe 1 after Write", 1, 0)
	if err := k.WritePipe(1, 0, 1, pipesFrameLen); err != nil {
		t.Fatal(err)
	}
	counterIs("Read after WritePipe", -1, 11)

	// The direct counter of tag_t's entry: the sum over the pipes.
	tbl, _ := sw.Table("tag_t")
	key := Entry{Match: []FieldMatch{{Value: []byte{pipesFwd}}}}
	if e, err := tbl.Lookup(key); err != nil || e.Packets != 5 || e.Bytes != 5*pipesFrameLen {
		t.Errorf("Lookup: %d packets %d bytes (%v), want 5", e.Packets, e.Bytes, err)
	}
	for _, e := range tbl.Entries() {
		if e.Match[0].Value[0] == pipesFwd && e.Packets != 5 {
			t.Errorf("Entries: %d packets, want 5", e.Packets)
		}
	}
	if err := tbl.SetDirectCounter(key, 7, 70); err != nil {
		t.Fatal(err)
	}
	mustProcess(t, sw, 129, pipesPkt(pipesFwd, 129))
	if e, _ := tbl.Lookup(key); e.Packets != 8 || e.Bytes != 70+pipesFrameLen {
		t.Errorf("after SetDirectCounter and a packet in pipe 1: %d packets %d bytes, want 8 and %d", e.Packets, e.Bytes, 70+pipesFrameLen)
	}

	// Registers: Read is pipe 0's; Write goes to both; WritePipe to one.
	r, _ := sw.Register("ig_count")
	regIs := func(what string, pipe int, want uint32) {
		t.Helper()
		var v []byte
		var err error
		if pipe < 0 {
			v, err = r.Read(0)
		} else {
			v, err = r.ReadPipe(pipe, 0)
		}
		if err != nil || !bytes.Equal(v, binary.BigEndian.AppendUint32(nil, want)) {
			t.Errorf("%s: %x (%v), want %d", what, v, err, want)
		}
	}
	regIs("Read", -1, 3)
	regIs("ReadPipe 1", 1, 3) // two packets and the one after SetDirectCounter
	if err := r.Write(0, []byte{0, 0, 0, 10}); err != nil {
		t.Fatal(err)
	}
	regIs("ReadPipe 0 after Write", 0, 10)
	regIs("ReadPipe 1 after Write", 1, 10)
	if err := r.WritePipe(1, 0, []byte{0, 0, 0, 20}); err != nil {
		t.Fatal(err)
	}
	if h := parsePipesHdr(t, mustProcess(t, sw, 129, pipesPkt(pipesFwd, 129))); h.ig != 20 {
		t.Errorf("a packet in pipe 1 after WritePipe(1) saw %d, want 20", h.ig)
	}
	if h := parsePipesHdr(t, mustProcess(t, sw, 1, pipesPkt(pipesFwd, 1))); h.ig != 10 {
		t.Errorf("a packet in pipe 0 after WritePipe(1) saw %d, want 10", h.ig)
	}
	regIs("Read after both", -1, 11)
	r.Reset()
	regIs("ReadPipe 0 after Reset", 0, 0)
	regIs("ReadPipe 1 after Reset", 1, 0)

	for _, pipe := range []int{-1, 2} {
		if _, err := r.ReadPipe(pipe, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("ReadPipe(%d): %v, want ErrInvalid", pipe, err)
		}
		if err := r.WritePipe(pipe, 0, []byte{1}); !errors.Is(err, ErrInvalid) {
			t.Errorf("WritePipe(%d): %v, want ErrInvalid", pipe, err)
		}
		if _, _, err := k.ReadPipe(pipe, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("counter ReadPipe(%d): %v, want ErrInvalid", pipe, err)
		}
	}
}

// TestPipesOnePipeAPI: with one pipe the accessors see the one copy, and pipe 1 does not
// exist.
func TestPipesOnePipeAPI(t *testing.T) {
	sw := loadPipes(t, 0)
	mustProcess(t, sw, 129, pipesPkt(pipesFwd, 129))
	r, _ := sw.Register("ig_count")
	k, _ := sw.Counter("ig_pkts")
	if !slices.Equal(r.Pipes(), []int{0}) || !slices.Equal(k.Pipes(), []int{0}) {
		t.Errorf("Pipes() = %v, %v, want [0]", r.Pipes(), k.Pipes())
	}
	if v, err := r.ReadPipe(0, 0); err != nil || !bytes.Equal(v, []byte{0, 0, 0, 1}) {
		t.Errorf("ReadPipe(0) = %x %v", v, err)
	}
	if err := r.WritePipe(0, 0, []byte{5}); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.Read(0); !bytes.Equal(v, []byte{0, 0, 0, 5}) {
		t.Errorf("Read after WritePipe(0) = %x", v)
	}
	if p, _, err := k.ReadPipe(0, 0); err != nil || p != 1 {
		t.Errorf("counter ReadPipe(0) = %d %v", p, err)
	}
	if _, err := r.ReadPipe(1, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadPipe(1) on one pipe: %v, want ErrInvalid", err)
	}
}

// TestPipesErrors: Load refuses a number of pipes a Tofino does not have, and pipes for a
// v1model program; Process refuses a port outside the pipes, and so does a packet sent to one.
func TestPipesErrors(t *testing.T) {
	for _, n := range []int{-1, 3, 5, 8} {
		if _, err := loadPipesErr(t, Config{Pipes: n}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "Config.Pipes") {
			t.Errorf("Pipes %d: %v, want ErrInvalid naming Config.Pipes", n, err)
		}
	}
	checked, err := front.Load("testdata/regs.p4")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(checked, Config{Pipes: 2}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "TNA") {
		t.Errorf("v1model with Pipes 2: %v, want ErrInvalid", err)
	}
	if _, err := Load(checked, Config{Pipes: 1}); err != nil {
		t.Errorf("v1model with Pipes 1: %v", err)
	}

	tests := []struct {
		name  string
		pipes int
		port  int
		out   uint16
		want  string // "" for no error
	}{
		{"port 300 on two pipes", 2, 300, 1, "port 300 is in pipe 2; the program runs in pipes [0 1] (Config.Pipes 2)"},
		{"port 256 on two pipes", 2, 256, 1, "port 256 is in pipe 2"},
		{"port 255 on two pipes", 2, 255, 1, ""},
		{"port 300 on four pipes", 4, 300, 1, ""},
		{"port 512 on four pipes", 4, 512, 1, "port 512 is in pipe 4; the program runs in pipes [0 1 2 3]"},
		{"port 300 on one pipe", 1, 300, 1, ""},
		{"out of port 300 on two pipes", 2, 1, 300, "port 300 is in pipe 2"},
		{"out of port 300 on one pipe", 1, 1, 300, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sw := loadPipes(t, tt.pipes)
			res, err := sw.Process(tt.port, pipesPkt(pipesFwd, tt.out))
			if tt.want == "" {
				if err != nil || len(res.Out) != 1 || res.Out[0].Port != int(tt.out) {
					t.Fatalf("%v %v, want one packet out of %d", res, err, tt.out)
				}
				return
			}
			if !errors.Is(err, ErrNoPipe) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrNoPipe with %q", err, tt.want)
			}
			// The switch is usable after the error, its objects back in pipe 0.
			if h := parsePipesHdr(t, mustProcess(t, sw, 1, pipesPkt(pipesFwd, 1))); tt.port == 1 && h.ig != 1 || tt.port != 1 && h.ig != 0 {
				t.Errorf("the next packet saw ig %d", h.ig)
			}
		})
	}
}

// TestPipesAllocs: a packet crossing pipes (in at 129, out of 2; in at 1, out of 130) does
// not allocate in steady state.
func TestPipesAllocs(t *testing.T) {
	for _, n := range []int{1, 2} {
		sw := loadPipes(t, n)
		a, b := pipesPkt(pipesFwd, 2), pipesPkt(pipesFwd, 130)
		run := func() {
			if _, err := sw.Process(129, a); err != nil {
				t.Fatal(err)
			}
			if _, err := sw.Process(1, b); err != nil {
				t.Fatal(err)
			}
		}
		run()
		if got := testing.AllocsPerRun(100, run); got != 0 {
			t.Errorf("Pipes %d: %v allocations a run, want 0", n, got)
		}
	}
}

// mustProcess runs a packet that must leave on one port and returns its frame.
func mustProcess(t testing.TB, sw *Switch, port int, pkt []byte) []byte {
	t.Helper()
	res, err := sw.Process(port, pkt)
	if err != nil || len(res.Out) != 1 {
		t.Fatalf("port %d: %v %v, want one packet out", port, res, err)
	}
	return res.Out[0].Data
}

// pipes2Src is pipes.p4 with two Pipelines of its blocks, pa in pipe 0 and pb in pipe 1:
// each has its own tables and state, named pa.Ing.tag_t, pb.Ing.tag_t, ...
func pipes2Src(t testing.TB) string {
	t.Helper()
	src, err := os.ReadFile("testdata/pipes.p4")
	if err != nil {
		t.Fatal(err)
	}
	one := "Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pipe;\nSwitch(pipe) main;\n"
	if !strings.HasSuffix(string(src), one) {
		t.Fatalf("testdata/pipes.p4 does not end with %q", one)
	}
	return strings.TrimSuffix(string(src), one) + `Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pa;
Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pb;
Switch(pa, pb) main;
`
}

// TestPipelines: a program of two Pipelines runs pa in pipe 0 and pb in pipe 1, each with its
// own table entries and registers, under names with the Pipeline's prefix and the ids of
// P4Info; it needs Config.Pipes of 2 or more, and a port of a pipe without a Pipeline is in
// none.
func TestPipelines(t *testing.T) {
	src := pipes2Src(t)
	for _, n := range []int{0, 1} {
		if _, err := loadTNA(t, src, Config{Pipes: n}); err == nil || !strings.Contains(err.Error(), "2 pipes (the engine runs one pipe)") {
			t.Errorf("Pipes %d: %v, want the one-pipe refusal", n, err)
		}
	}
	for _, n := range []int{2, 4} {
		sw, err := loadTNA(t, src, Config{Pipes: n})
		if err != nil {
			t.Fatalf("Pipes %d: %v", n, err)
		}
		if _, err := sw.Table("Ing.tag_t"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
			t.Errorf("Ing.tag_t: %v, want ambiguous (pa's and pb's)", err)
		}
		tagPipelines(t, sw)
		steps := []struct {
			port, out int
			tag       uint32 // pa's or pb's entry: the ingress's Pipeline
			ig, eg    uint32 // the ingress's and the egress's Pipeline's counts
		}{
			{1, 1, 0xa, 0, 0},
			{1, 1, 0xa, 1, 1},
			{129, 129, 0xb, 0, 0},
			{129, 2, 0xb, 1, 2},  // egress in pa
			{1, 130, 0xa, 2, 1},  // egress in pb
			{129, 68, 0xa, 2, 4}, // recirculated: pb, then pa at 68 (its tag_t last) and out of 2
		}
		for i, st := range steps {
			res, err := sw.Process(st.port, pipesPkt(pipesFwd, uint16(st.out)))
			if err != nil {
				t.Fatalf("Pipes %d packet %d: %v", n, i, err)
			}
			wantPort := st.out
			if st.out == 68 {
				wantPort = 2
			}
			if len(res.Out) != 1 || res.Out[0].Port != wantPort {
				t.Fatalf("Pipes %d packet %d: %v, want one packet out of %d", n, i, res.Out, wantPort)
			}
			h := parsePipesHdr(t, res.Out[0].Data)
			if h.tag != st.tag || h.ig != st.ig || h.eg != st.eg {
				t.Errorf("Pipes %d packet %d (port %d): tag %#x ig %d eg %d, want %#x %d %d", n, i, st.port, h.tag, h.ig, h.eg, st.tag, st.ig, st.eg)
			}
		}
		// pa's ig_count: 3 packets and the recirculated pass; pb's: 3.
		for _, want := range []struct {
			name string
			v    uint32
			pipe int
		}{{"pa.Ing.ig_count", 4, 0}, {"pb.Ing.ig_count", 3, 1}, {"pa.Eg.eg_count", 5, 0}, {"pb.Eg.eg_count", 2, 1}} {
			r, err := sw.Register(want.name)
			if err != nil {
				t.Fatal(err)
			}
			if v, _ := r.Read(0); binary.BigEndian.Uint32(v) != want.v || !slices.Equal(r.Pipes(), []int{want.pipe}) {
				t.Errorf("%s[0] = %x (pipes %v), want %d in pipe %d", want.name, v, r.Pipes(), want.v, want.pipe)
			}
		}
		if _, err := sw.Process(300, pipesPkt(pipesFwd, 1)); !errors.Is(err, ErrNoPipe) {
			t.Errorf("Pipes %d, port 300: %v, want ErrNoPipe", n, err)
		}
		// The ids are P4Info's: its two Ing.tag_t, told apart by the hash of the prefixed name.
		info, err := sw.checked.P4Info()
		if err != nil {
			t.Fatal(err)
		}
		ids := map[uint32]bool{}
		for _, x := range info.Tables {
			if x.Preamble.Name == "Ing.tag_t" {
				ids[x.Preamble.Id] = true
			}
		}
		a, _ := sw.Table("pa.Ing.tag_t")
		b, _ := sw.Table("pb.Ing.tag_t")
		if len(ids) != 2 || !ids[a.ID] || !ids[b.ID] || a.ID == b.ID {
			t.Errorf("P4Info's Ing.tag_t ids %v; the tables' %#x and %#x", ids, a.ID, b.ID)
		}
		if got, err := sw.TableByID(b.ID); err != nil || got != b {
			t.Errorf("TableByID(%#x) = %v %v", b.ID, got, err)
		}
	}
}

// TestPipeScopes: with Config.PipeScopes {{0, 2}, {1, 3}} (Open-Tofino's 32Q configuration),
// Pipeline pa runs in pipes 0 and 2 and pb in 1 and 3: each pipe of a scope has its own copy
// of its Pipeline's state, the Pipeline's table entries are written once for its pipes, and
// the API reaches the copies of the scope only.
func TestPipeScopes(t *testing.T) {
	sw, err := loadTNA(t, pipes2Src(t), Config{Pipes: 4, PipeScopes: [][]int{{0, 2}, {1, 3}}})
	if err != nil {
		t.Fatal(err)
	}
	tagPipelines(t, sw)
	steps := []struct {
		port, out int
		tag       uint32
		ig, eg    uint32
	}{
		{1, 1, 0xa, 0, 0},     // pa, pipe 0
		{1, 1, 0xa, 1, 1},     // pa, pipe 0
		{257, 257, 0xa, 0, 0}, // pa, pipe 2: its own copies
		{129, 129, 0xb, 0, 0}, // pb, pipe 1
		{385, 385, 0xb, 0, 0}, // pb, pipe 3
		{385, 1, 0xb, 1, 2},   // pb in pipe 3, then pa's egress in pipe 0
		{1, 257, 0xa, 2, 1},   // pa in pipe 0, then in pipe 2
	}
	for i, st := range steps {
		h := parsePipesHdr(t, mustProcess(t, sw, st.port, pipesPkt(pipesFwd, uint16(st.out))))
		if h.tag != st.tag || h.ig != st.ig || h.eg != st.eg {
			t.Errorf("packet %d (port %d): tag %#x ig %d eg %d, want %#x %d %d", i, st.port, h.tag, h.ig, h.eg, st.tag, st.ig, st.eg)
		}
	}
	r, _ := sw.Register("pa.Ing.ig_count")
	if !slices.Equal(r.Pipes(), []int{0, 2}) {
		t.Errorf("pa.Ing.ig_count.Pipes() = %v", r.Pipes())
	}
	for _, c := range []struct{ pipe, want int }{{0, 3}, {2, 1}} {
		if v, err := r.ReadPipe(c.pipe, 0); err != nil || binary.BigEndian.Uint32(v) != uint32(c.want) {
			t.Errorf("pa.Ing.ig_count in pipe %d: %x %v, want %d", c.pipe, v, err, c.want)
		}
	}
	if v, _ := r.Read(0); binary.BigEndian.Uint32(v) != 3 {
		t.Errorf("Read: %x, want pipe 0's 3", v)
	}
	if _, err := r.ReadPipe(1, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("ReadPipe(1) of pa's register: %v, want ErrInvalid", err)
	}
	pb, _ := sw.Register("pb.Ing.ig_count")
	if v, _ := pb.Read(0); !slices.Equal(pb.Pipes(), []int{1, 3}) || binary.BigEndian.Uint32(v) != 1 {
		t.Errorf("pb.Ing.ig_count: pipes %v, Read %x (pipe 1's), want [1 3] and 1", pb.Pipes(), v)
	}
	k, _ := sw.Counter("pb.Ing.ig_pkts")
	if p, _, err := k.Read(0); err != nil || p != 3 {
		t.Errorf("pb.Ing.ig_pkts: %d %v, want 3 (pipes 1 and 3)", p, err)
	}
}

// TestPipeScopesErrors: scopes that do not fit the program or the chip are refused; a pipe
// in no scope runs nothing.
func TestPipeScopesErrors(t *testing.T) {
	one, err := os.ReadFile("testdata/pipes.p4")
	if err != nil {
		t.Fatal(err)
	}
	two := pipes2Src(t)
	tests := []struct {
		name   string
		src    string
		pipes  int
		scopes [][]int
		want   string
	}{
		{"one scope for two Pipelines", two, 4, [][]int{{0, 1}}, "1 scopes for a program of 2 Pipelines"},
		{"a pipe twice", two, 4, [][]int{{0, 2}, {2, 3}}, "pipe 2 in scopes 0 and 1"},
		{"a pipe beyond the chip", two, 2, [][]int{{0}, {2}}, "pipe 2; the chip has 2"},
		{"an empty scope", two, 4, [][]int{{0}, {}}, "PipeScopes[1] is empty"},
		{"scopes on one pipe", string(one), 1, [][]int{{0}}, "on a chip of one pipe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadTNA(t, tt.src, Config{Pipes: tt.pipes, PipeScopes: tt.scopes})
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalid with %q", err, tt.want)
			}
		})
	}
	// One Pipeline in pipe 1 alone of two: its home is pipe 1, pipe 0 runs nothing.
	sw, err := loadTNA(t, string(one), Config{Pipes: 2, PipeScopes: [][]int{{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sw.Process(1, pipesPkt(pipesFwd, 129)); !errors.Is(err, ErrNoPipe) || !strings.Contains(err.Error(), "runs in pipes [1]") {
		t.Errorf("port 1: %v, want ErrNoPipe", err)
	}
	mustProcess(t, sw, 129, pipesPkt(pipesFwd, 129))
	r, _ := sw.Register("ig_count")
	if v, _ := r.Read(0); !slices.Equal(r.Pipes(), []int{1}) || !bytes.Equal(v, []byte{0, 0, 0, 1}) {
		t.Errorf("ig_count: pipes %v, Read %x, want [1] and 1", r.Pipes(), v)
	}
}

// tagPipelines gives pipes2Src's Pipelines their tags: pa's tag_t sets 0xa, pb's 0xb, for
// packets of pipesFwd.
func tagPipelines(t *testing.T, sw *Switch) {
	t.Helper()
	for _, pl := range []struct {
		name string
		tag  uint32
	}{{"pa", 0xa}, {"pb", 0xb}} {
		tbl, err := sw.Table(pl.name + ".Ing.tag_t")
		if err != nil {
			t.Fatal(err)
		}
		if err := tbl.Insert(Entry{Match: []FieldMatch{{Value: []byte{pipesFwd}}}, Action: "set_tag", Args: [][]byte{binary.BigEndian.AppendUint32(nil, pl.tag)}}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPipelinesCtorArgs: one control instantiated in two Pipelines with different constructor
// arguments runs each instance with its own: a direct call of an action with a constant
// argument (compiled once per call site's constants and block instance) writes the packet of
// the Pipeline that calls it, and a condition on the constructor parameter takes each
// instance's branch.
func TestPipelinesCtorArgs(t *testing.T) {
	src := pipes2Src(t)
	for _, r := range []struct{ old, new string }{
		{"            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md) {\n    Register<bit<32>, bit<32>>(4) ig_count;",
			"            inout ingress_intrinsic_metadata_for_tm_t ig_tm_md)(bit<8> k) {\n    Register<bit<32>, bit<32>>(4) ig_count;\n    action put(bit<32> v, bit<8> c) { hdr.p.tag = v; hdr.p.dcolor = c; }"},
		{"        tag_t.apply();\n    }", "        put(0x1234, 3);\n        if (k == 1) { hdr.p.color = 1; } else { hdr.p.color = k; }\n    }"},
		{"Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pa;", "Pipeline(IgP(), Ing(1), IgD(), EgP(), Eg(), EgD()) pa;"},
		{"Pipeline(IgP(), Ing(), IgD(), EgP(), Eg(), EgD()) pb;", "Pipeline(IgP(), Ing(2), IgD(), EgP(), Eg(), EgD()) pb;"},
	} {
		if !strings.Contains(src, r.old) {
			t.Fatalf("pipes2Src has no %q", r.old)
		}
		src = strings.Replace(src, r.old, r.new, 1)
	}
	sw, err := loadTNA(t, src, Config{Pipes: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		port  int
		color uint8
	}{{1, 1}, {129, 2}} {
		h := parsePipesHdr(t, mustProcess(t, sw, c.port, pipesPkt(pipesFwd, uint16(c.port))))
		if h.tag != 0x1234 || h.dcolor != 3 || h.color != c.color {
			t.Errorf("port %d (pipe %d): tag %#x, dcolor %d, color %d; want 0x1234, 3, %d", c.port, c.port>>7, h.tag, h.dcolor, h.color, c.color)
		}
	}
}
