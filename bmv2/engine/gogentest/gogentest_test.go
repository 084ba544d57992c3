package gogentest

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
	"github.com/netlock-go/netlock/bmv2/stf"
)

var seedFlag = flag.Uint64("seed", 0, "TestShapes: run this seed only")

// splitCommand splits a command line at spaces, honouring Go-quoted words.
func splitCommand(s string) ([]string, error) {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		if s[0] == '"' {
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
			}
			w, _ := strconv.Unquote(q)
			out = append(out, w)
			s = s[len(q):]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		out = append(out, w)
		s = rest
	}
	return out, nil
}

// regenerate runs what a generated file's //go:generate line asks netlock p4 gen-go for.
func regenerate(file string, have []byte) ([]byte, error) {
	lines := strings.SplitN(string(have), "\n", 4)
	if len(lines) < 4 || !strings.HasPrefix(lines[2], "//go:generate ") {
		return nil, fmt.Errorf("%s has no //go:generate line", file)
	}
	line := strings.TrimPrefix(lines[2], "//go:generate ")
	words, err := splitCommand(line)
	if err != nil {
		return nil, err
	}
	var pkg, name, out, program, source string
	opts := front.Options{Defines: map[string]string{}}
	var defines []string
	for i := 0; i < len(words); i++ {
		if words[i] == "gen-go" {
			words = words[i+1:]
			break
		}
	}
	for i := 0; i < len(words); i++ {
		next := func() string {
			i++
			if i < len(words) {
				return words[i]
			}
			return ""
		}
		switch words[i] {
		case "--pkg":
			pkg = next()
		case "--name":
			name = next()
		case "-o":
			out = next()
		case "-D":
			defines = append(defines, next())
		case "--go-generate":
			next()
		default:
			program = words[i]
		}
	}
	if out != file {
		return nil, fmt.Errorf("%s: its //go:generate line writes %s", file, out)
	}
	source = program
	for _, d := range defines {
		n, v, _ := strings.Cut(d, "=")
		opts.Defines[n] = v
		source += " -D " + d
	}
	checked, err := front.LoadOptions(program, opts)
	if err != nil {
		return nil, err
	}
	return engine.GenerateGo(checked, engine.GenOptions{Package: pkg, Name: name, Source: source, Generate: line})
}

// TestUpToDate: every generated file of this package is what its //go:generate line makes.
func TestUpToDate(t *testing.T) {
	files, _ := filepath.Glob("*_gen.go")
	if len(files) == 0 {
		t.Fatal("no generated files")
	}
	for _, f := range files {
		have, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, err := regenerate(f, have)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s is stale: run go generate ./bmv2/engine/gogentest", f)
		}
	}
}

func clock() func() time.Time {
	now := time.Unix(0, 0)
	return func() time.Time { now = now.Add(time.Microsecond); return now }
}

// stfPipelines are the generated pipelines of bmv2/stf's programs, by program.
var stfPipelines = map[string]engine.Generated{
	"l3": Stf_l3Pipeline, "pre": Stf_prePipeline, "priority": Stf_priorityPipeline,
	"round3": Stf_round3Pipeline, "tables": Stf_tablesPipeline,
}

// TestSTF runs the STF tests of bmv2/stf whose programs the Go backend compiles on the
// interpreter and on their generated pipelines.
func TestSTF(t *testing.T) {
	for _, name := range []string{"l3", "pre", "priority", "round3", "tables"} {
		for _, pl := range []engine.Pipeline{engine.PipelineInterpreted, engine.PipelineGenerated} {
			t.Run(name+"/"+pl.String(), func(t *testing.T) {
				checked, err := front.Load(filepath.Join("..", "..", "stf", "testdata", name+".p4"))
				if err != nil {
					t.Fatal(err)
				}
				sw, err := engine.Load(checked, engine.Config{Pipeline: pl, Generated: stfPipelines[name], Now: clock()})
				if err != nil {
					t.Fatal(err)
				}
				if (sw.GeneratedPipeline() != "") != (pl == engine.PipelineGenerated) {
					t.Fatalf("generated pipeline %q", sw.GeneratedPipeline())
				}
				data, err := os.ReadFile(filepath.Join("..", "..", "stf", "testdata", name+".stf"))
				if err != nil {
					t.Fatal(err)
				}
				cmds, err := stf.Parse(bytes.NewReader(data))
				if err != nil {
					t.Fatal(err)
				}
				res, err := stf.Run(sw, cmds)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range res.Failures {
					t.Error(f)
				}
			})
		}
	}
}

// shapesPacket makes a random input for testdata/shapes.p4: header a (24 bytes), b (4) when
// the parser takes it, and some payload; sometimes cut short.
func shapesPacket(rng *rand.Rand) []byte {
	n := 24 + 4 + rng.IntN(8)
	if rng.IntN(8) == 0 {
		n = rng.IntN(30) // too short for a header, or for b
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	if n > 0 && rng.IntN(2) == 0 {
		b[0] = byte(rng.IntN(10)) // the op codes the program tests
	}
	if n > 1 && rng.IntN(3) == 0 {
		b[1] = byte(rng.IntN(24))
	}
	return b
}

// TestShapes runs random packets through testdata/shapes.p4 on the interpreter and on the
// generated pipeline: outputs, registers and counters must be identical. Re-run one seed
// with -seed=N.
func TestShapes(t *testing.T) {
	checked, err := front.Load(filepath.Join("testdata", "shapes.p4"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := []uint64{*seedFlag}
	if *seedFlag == 0 {
		base := uint64(time.Now().UnixNano())
		seeds = []uint64{base, base + 1, base + 2, base + 3}
	}
	for _, seed := range seeds {
		if msg := shapesDiff(t, checked, seed, ShapesPipeline); msg != "" {
			t.Errorf("seed %d (re-run: go test ./bmv2/engine/gogentest -run TestShapes -seed=%d): %s", seed, seed, msg)
		}
	}
}

// shapesDiff runs 500 packets of seed through the interpreter and generated pipeline gen and
// returns the first difference, or "".
func shapesDiff(t *testing.T, checked *front.Checked, seed uint64, gen engine.Generated) string {
	return shapesDiffOf(t, checked, checked, seed, gen)
}

// shapesDiffOf is shapesDiff with the interpreter running ref and the generated pipeline bound
// to a switch loaded from prog (a generated pipeline binds only to the program it was generated
// from, so a mutated reference needs its own copy of the program).
func shapesDiffOf(t *testing.T, ref, prog *front.Checked, seed uint64, gen engine.Generated) string {
	a, err := engine.Load(ref, engine.Config{Pipeline: engine.PipelineInterpreted, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := engine.Load(prog, engine.Config{Pipeline: engine.PipelineGenerated, Generated: gen, Now: clock()})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < 500; i++ {
		pkt := shapesPacket(rng)
		port := 1 + rng.IntN(3)
		ra, errA := a.Process(port, pkt)
		ga := fmt.Sprint(errA)
		var outA []string
		for _, o := range ra.Out {
			outA = append(outA, fmt.Sprintf("%d:%x", o.Port, o.Data))
		}
		rb, errB := b.Process(port, pkt)
		gb := fmt.Sprint(errB)
		var outB []string
		for _, o := range rb.Out {
			outB = append(outB, fmt.Sprintf("%d:%x", o.Port, o.Data))
		}
		if ga != gb || strings.Join(outA, " ") != strings.Join(outB, " ") {
			return fmt.Sprintf("packet %d %x on port %d:\ninterpreter %v %s\ngenerated   %v %s", i, pkt, port, errA, outA, errB, outB)
		}
	}
	for i := 0; i < 8; i++ {
		ra, _ := a.Registers()[0].Read(i)
		rb, _ := b.Registers()[0].Read(i)
		if !bytes.Equal(ra, rb) {
			return fmt.Sprintf("register cell %d: %x and %x", i, ra, rb)
		}
	}
	for i := 0; i < 4; i++ {
		pa, ba, _ := a.Counters()[0].Read(i)
		pb, bb, _ := b.Counters()[0].Read(i)
		if pa != pb || ba != bb {
			return fmt.Sprintf("counter cell %d: %d/%d and %d/%d", i, pa, ba, pb, bb)
		}
	}
	return ""
}

// TestShapesCatches is TestShapes' negative control: the generated pipeline with one
// block replaced (its ingress leaves hdr.o.r2 one higher, as a precedence slip would) must
// be told apart.
func TestShapesCatches(t *testing.T) {
	const file = "shapes.p4"
	checked, err := front.Load(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	// The mutation is found by its source text, so that cases added to shapes.p4 do not
	// move it: bump's "x = x + 8w10" becomes "x = x - 8w10" in the interpreter's program,
	// while the generated pipeline (ShapesPipeline) keeps "+".
	src, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	const stmt, op = "x = x + 8w10;", "+"
	at := bytes.Index(src, []byte(stmt))
	if at < 0 || bytes.Count(src, []byte(stmt)) != 1 {
		t.Fatalf("%q is not in %s once: update the test", stmt, file)
	}
	line := 1 + bytes.Count(src[:at], []byte("\n"))
	col := at - bytes.LastIndexByte(src[:at], '\n') + strings.Index(stmt, op)
	m := engine.GenMutation{At: fmt.Sprintf("%s:%d:%d", file, line, col), Op: op, To: "-"}
	undo, err := m.Apply(checked)
	if err != nil {
		t.Fatal(err)
	}
	defer undo()
	orig, err := front.Load(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	if msg := shapesDiffOf(t, checked, orig, 1, ShapesPipeline); msg == "" {
		t.Errorf("the generated pipeline passed against an interpreter with the mutation %s", m)
	} else {
		t.Logf("mutation %s caught: %.300s", m, msg)
	}
}

// TestTargetL3 runs random frames through bmv2/target's l3.p4 (routes, a CPU port, an
// indexed and a direct counter, digests of known sources) on both pipelines: outputs,
// packet-ins, digests and counters must be identical.
func TestTargetL3(t *testing.T) {
	checked, err := front.Load(filepath.Join("..", "..", "target", "testdata", "l3.p4"))
	if err != nil {
		t.Fatal(err)
	}
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	var sws [2]*engine.Switch
	for i, pl := range []engine.Pipeline{engine.PipelineInterpreted, engine.PipelineGenerated} {
		sw, err := engine.Load(checked, engine.Config{Pipeline: pl, Generated: Target_l3Pipeline, CPUPort: 255, Now: clock()})
		if err != nil {
			t.Fatal(err)
		}
		known, err := sw.Table("known_src")
		if err != nil {
			t.Fatal(err)
		}
		lpm, err := sw.Table("ipv4_lpm")
		if err != nil {
			t.Fatal(err)
		}
		for m := byte(0); m < 4; m++ {
			must(t, known.Insert(engine.Entry{Match: []engine.FieldMatch{{Value: []byte{2, 0, 0, 0, 0, m}}}, Action: "learn"}))
		}
		must(t, lpm.Insert(engine.Entry{Match: []engine.FieldMatch{{Value: []byte{10, 0, 0, 0}, PrefixLen: 8}}, Action: "route",
			Args: [][]byte{{2, 0, 0, 0, 0, 0xaa}, {2, 0, 0, 0, 0, 0xbb}, {0, 3}}}))
		must(t, lpm.Insert(engine.Entry{Match: []engine.FieldMatch{{Value: []byte{10, 1, 0, 0}, PrefixLen: 16}}, Action: "to_cpu"}))
		sws[i] = sw
	}
	rng := rand.New(rand.NewPCG(seed, 3))
	outs, ins, digests := 0, 0, 0
	for i := 0; i < 500; i++ {
		f := make([]byte, 14+20+rng.IntN(10))
		for k := range f {
			f[k] = byte(rng.Uint32())
		}
		copy(f[0:6], []byte{2, 0, 0, 0, 0, 9})
		copy(f[6:12], []byte{2, 0, 0, 0, 0, byte(rng.IntN(6))})
		if rng.IntN(5) != 0 {
			f[12], f[13] = 0x08, 0x00
		}
		f[14] = 0x45
		f[14+8] = byte(rng.IntN(4)) // ttl
		f[14+16], f[14+17] = 10, byte(rng.IntN(3))
		port := 1 + rng.IntN(4)
		if rng.IntN(10) == 0 {
			port = 255 // a packet-out header first
		}
		var got [2]string
		for k, sw := range sws {
			res, err := sw.Process(port, f)
			got[k] = fmt.Sprintf("%v out=%v in=%x digests=%v", err, res.Out, res.PacketIn, res.Digests)
			if k == 0 {
				outs, ins, digests = outs+len(res.Out), ins+len(res.PacketIn), digests+len(res.Digests)
			}
		}
		if got[0] != got[1] {
			t.Fatalf("seed %d (re-run: -seed=%d), frame %d %x on port %d:\ninterpreter %s\ngenerated   %s", seed, seed, i, f, port, got[0], got[1])
		}
	}
	if outs == 0 || ins == 0 || digests == 0 {
		t.Errorf("the frames exercised too little: %d outputs, %d packet-ins, %d digests", outs, ins, digests)
	}
	for k := 0; k < 8; k++ {
		c0, _ := sws[0].Counter("rx_port")
		c1, _ := sws[1].Counter("rx_port")
		p0, b0, _ := c0.Read(k)
		p1, b1, _ := c1.Read(k)
		if p0 != p1 || b0 != b1 {
			t.Errorf("rx_port[%d]: %d/%d and %d/%d", k, p0, b0, p1, b1)
		}
	}
	for _, name := range []string{"ipv4_lpm", "known_src"} {
		t0, _ := sws[0].Table(name)
		t1, _ := sws[1].Table(name)
		if a, b := fmt.Sprint(t0.Entries()), fmt.Sprint(t1.Entries()); a != b {
			t.Errorf("%s entries (with direct counters):\n%s\n%s", name, a, b)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
