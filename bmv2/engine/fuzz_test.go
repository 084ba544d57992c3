package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/front"
)

// fuzzSeedPrograms are the P4 programs of the repository's test data: the fuzzer mutates them.
var fuzzSeedPrograms = []string{
	"testdata/*.p4", "../front/testdata/accept/*.p4", "../stf/testdata/*.p4",
	"../p4rt/testdata/*.p4", "../target/testdata/*.p4", "../../p4/*.p4",
}

// FuzzLoad feeds arbitrary source text through the front end and, when it checks, compiles it
// with Load and runs packets through it: a program must never crash the switch that loads it.
// Checking, compiling and processing may fail with an error; they may not panic or hang.
//
//	go test ./bmv2/engine -run '^$' -fuzz FuzzLoad -fuzztime 10m
//
// (-fuzzminimizetime 10s: the fuzzer minimizes every new interesting input, for a minute by
// default, which stalls it on programs this long.) Inputs that found bugs are kept in
// testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	for _, pattern := range fuzzSeedPrograms {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(string(src), []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 8, 0, 0x45, 0, 0, 20}, uint8(1))
		}
	}
	f.Fuzz(func(t *testing.T, src string, pkt []byte, port uint8) {
		defer watchdog(src)()
		toks, errs := front.PreprocessSource("fuzz.p4", src, func(p string) ([]byte, error) { return nil, os.ErrNotExist })
		if len(errs) > 0 {
			return
		}
		prog, err := front.Parse(toks)
		if err != nil {
			return
		}
		checked, err := front.Check(prog)
		if err != nil || checked.Main == nil {
			return
		}
		now := time.Unix(0, 0)
		clock := func() time.Time { now = now.Add(time.Microsecond); return now }
		for _, tofino := range []bool{false, true} {
			sw, err := Load(checked, Config{Now: clock, TofinoConstraints: tofino, MemoryLimit: fuzzMemoryLimit})
			if err != nil {
				continue
			}
			for _, p := range [][]byte{pkt, make([]byte, 64), nil} {
				_, _ = sw.Process(int(port), p)
			}
		}
	})
}

// fuzzMemoryLimit is the memory limit of the fuzzers' switches: a program may declare more
// (testdata/fuzz/FuzzLoad/huge-register declares 64 GB) and must be refused, not allocated.
const fuzzMemoryLimit = 256 << 20

// hangLimit is how long one fuzz input may take before the fuzzer counts it as a hang.
const hangLimit = 30 * time.Second

// watchdog crashes the process when the input it guards runs longer than hangLimit, so the fuzzer
// records the input as a failure; call the returned function when the input is done.
func watchdog(input string) (done func()) {
	t := time.AfterFunc(hangLimit, func() {
		panic(fmt.Sprintf("fuzz input ran longer than %v (a hang):\n%q", hangLimit, input))
	})
	return func() { t.Stop() }
}

// FuzzTokenEdits applies token-level edits to the preprocessed token stream of one of the test
// programs (the architecture's declarations included) and runs the result through the parser,
// the checker, Load and packets, like FuzzLoad. Byte-level mutations of source text mostly
// break the lexer or the parser; token edits (delete, duplicate, swap, replace one token by
// another's) keep programs parseable far more often and so reach the checker and the engine.
// edits holds 5 bytes per edit: the operation, then two big-endian token indices (taken modulo
// the stream's length); prog picks the program.
//
//	go test ./bmv2/engine -run '^$' -fuzz FuzzTokenEdits -fuzztime 10m -fuzzminimizetime 10s
func FuzzTokenEdits(f *testing.F) {
	var streams [][]front.Token
	for _, pattern := range fuzzSeedPrograms {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			toks, errs := front.Preprocess(file, os.ReadFile)
			if len(errs) > 0 {
				continue // a program needs a define or a file the fuzzer does not give it
			}
			streams = append(streams, toks)
		}
	}
	if len(streams) == 0 {
		f.Fatal("no seed programs")
	}
	for i := range streams {
		f.Add(uint8(i), []byte{}, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 8, 0, 0x45, 0, 0, 20})
		f.Add(uint8(i), []byte{0, 0, 7, 0, 0, 1, 0, 40, 0, 9}, []byte{})
	}
	f.Fuzz(func(t *testing.T, prog uint8, edits, pkt []byte) {
		if len(edits) > 5*16 {
			return // a handful of edits at a time
		}
		desc := fmt.Sprintf("program %d, edits %x", int(prog)%len(streams), edits)
		base := streams[int(prog)%len(streams)]
		toks := append([]front.Token(nil), base[:len(base)-1]...) // without EOF
		for ; len(edits) >= 5 && len(toks) > 0; edits = edits[5:] {
			i := int(edits[1])<<8 | int(edits[2])
			j := int(edits[3])<<8 | int(edits[4])
			i, j = i%len(toks), j%len(toks)
			switch edits[0] % 4 {
			case 0: // delete token i
				toks = append(toks[:i], toks[i+1:]...)
			case 1: // insert a copy of token j before token i
				toks = append(toks[:i], append([]front.Token{toks[j]}, toks[i:]...)...)
			case 2: // swap
				toks[i], toks[j] = toks[j], toks[i]
			case 3: // replace token i by token j, keeping i's position
				pos := toks[i].Pos
				toks[i] = toks[j]
				toks[i].Pos = pos
			}
		}
		toks = append(toks, base[len(base)-1])
		defer watchdog(desc)()
		p, err := front.Parse(toks)
		if err != nil {
			return
		}
		checked, err := front.Check(p)
		if err != nil || checked.Main == nil {
			return
		}
		now := time.Unix(0, 0)
		sw, err := Load(checked, Config{Now: func() time.Time { now = now.Add(time.Microsecond); return now }, MemoryLimit: fuzzMemoryLimit})
		if err != nil {
			return
		}
		for _, b := range [][]byte{pkt, make([]byte, 64)} {
			_, _ = sw.Process(1, b)
		}
	})
}

// TestArchFieldMissing is the bug FuzzTokenEdits found (its input is in
// testdata/fuzz/FuzzTokenEdits): a TNA program whose tna.p4 lacks a field of an intrinsic
// metadata struct that the engine looks up by name crashed Load; it must be an error.
func TestArchFieldMissing(t *testing.T) {
	toks, errs := front.Preprocess("../stf/testdata/tna_counter.p4", os.ReadFile)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	inStruct, renamed := false, false
	for i := range toks {
		switch {
		case toks[i].Text == "egress_intrinsic_metadata_t" && i > 0 && toks[i-1].Text == "header":
			inStruct = true
		case inStruct && toks[i].Text == "}":
			inStruct = false
		case inStruct && toks[i].Text == "egress_port":
			toks[i].Text, renamed = "egress_port_elsewhere", true
		}
	}
	if !renamed {
		t.Fatal("no egress_port field in egress_intrinsic_metadata_t")
	}
	p, err := front.Parse(toks)
	if err != nil {
		t.Fatal(err)
	}
	checked, err := front.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(checked, Config{}); err == nil || !strings.Contains(err.Error(), "no field egress_port") {
		t.Fatalf("Load: %v, want an error naming the missing field", err)
	}
}

// TestExternParamRenamed is the second bug FuzzTokenEdits found: a register whose read method
// declares its parameters under other names than v1model.p4's (a program that brings its own
// architecture) crashed Load on the missing "index" argument; it must be an error.
func TestExternParamRenamed(t *testing.T) {
	toks, errs := front.Preprocess("testdata/regs.p4", os.ReadFile)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	inRegister, renamed := false, 0
	for i := range toks {
		switch {
		case toks[i].Text == "register" && i > 0 && toks[i-1].Text == "extern":
			inRegister = true
		case inRegister && toks[i].Text == "}" && toks[i].Pos.Col == 1:
			inRegister = false
		case inRegister && toks[i].Text == "index":
			toks[i].Text = "idx"
			renamed++
		}
	}
	if renamed == 0 {
		t.Fatal("no index parameter in v1model.p4's register")
	}
	p, err := front.Parse(toks)
	if err != nil {
		t.Fatal(err)
	}
	checked, err := front.Check(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(checked, Config{}); err == nil || !strings.Contains(err.Error(), `no argument "index"`) {
		t.Fatalf("Load: %v, want an error naming the missing argument", err)
	}
}
