package engine

import (
	"fmt"
	"os"
	"path/filepath"
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
			sw, err := Load(checked, Config{Now: clock, TofinoConstraints: tofino})
			if err != nil {
				continue
			}
			for _, p := range [][]byte{pkt, make([]byte, 64), nil} {
				_, _ = sw.Process(int(port), p)
			}
		}
	})
}

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
