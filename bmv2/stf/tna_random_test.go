package stf

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
)

// TestTNARandomPackets sends random frames (random lengths, ports, with the programs' own
// EtherTypes often) into every TNA test program, with the STF scenario's table entries and
// sessions installed: no panic, and no error other than a Tofino-constraint one. The seed is
// printed on failure; NETLOCK_SEED=N re-runs one seed.
func TestTNARandomPackets(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("NETLOCK_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seed = v
	}
	t.Logf("seed %d (NETLOCK_SEED=%d re-runs it)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	progs, _ := filepath.Glob("testdata/tna_*.p4")
	if len(progs) == 0 {
		t.Fatal("no TNA test programs")
	}
	types := [][2]byte{{0x08, 0x00}, {0x88, 0xb5}, {0x88, 0xb6}, {0x08, 0x06}}
	for _, p := range progs {
		checked, err := front.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(0, 0)
		sw, err := engine.Load(checked, engine.Config{Now: func() time.Time { now = now.Add(time.Microsecond); return now }})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		// The scenario's setup (entries, sessions, groups) without its packets.
		f, err := os.Open(p[:len(p)-len(".p4")] + ".stf")
		if err != nil {
			t.Fatal(err)
		}
		cmds, err := Parse(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var setup []Command
		for _, c := range cmds {
			if c.Name != "packet" && c.Name != "expect" && c.Name != "expect_digest" {
				setup = append(setup, c)
			}
		}
		if _, err := Run(sw, setup); err != nil {
			t.Fatalf("%s setup: %v", p, err)
		}
		for i := 0; i < 300; i++ {
			n := rng.IntN(80)
			frame := make([]byte, n)
			for k := range frame {
				frame[k] = byte(rng.Uint32())
			}
			if n >= 14 && rng.IntN(2) == 0 {
				ty := types[rng.IntN(len(types))]
				frame[12], frame[13] = ty[0], ty[1]
			}
			port := rng.IntN(10)
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("%s: seed %d, packet %d (port %d, %x): panic %v", p, seed, i, port, frame, r)
					}
				}()
				if _, err := sw.Process(port, frame); err != nil && !errors.Is(err, engine.ErrTofinoConstraint) {
					t.Errorf("%s: seed %d, packet %d (port %d, %x): %v", p, seed, i, port, frame, err)
				}
			}()
		}
	}
}
