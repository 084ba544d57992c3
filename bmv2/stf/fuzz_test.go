package stf

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netlock-go/netlock/bmv2/engine"
	"github.com/netlock-go/netlock/bmv2/front"
)

// FuzzRun reads arbitrary STF text and runs it against one of the testdata programs (chosen by
// prog) on a fresh switch: the reader and the runner may report errors and failures, never panic
// or hang.
//
//	go test ./bmv2/stf -run '^$' -fuzz FuzzRun -fuzztime 10m
//
// Inputs that found bugs are kept in testdata/fuzz/FuzzRun.
func FuzzRun(f *testing.F) {
	stfs, err := filepath.Glob("testdata/*.stf")
	if err != nil || len(stfs) == 0 {
		f.Fatalf("no STF files: %v", err)
	}
	var progs []*front.Checked
	for _, path := range stfs {
		checked, err := front.Load(strings.TrimSuffix(path, ".stf") + ".p4")
		if err != nil {
			f.Fatal(err)
		}
		if _, err := engine.Load(checked, engine.Config{}); err != nil {
			continue // a program the engine refuses (its own tests say so): nothing to run STF on
		}
		progs = append(progs, checked)
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(len(progs)-1), string(src))
	}
	f.Add(uint8(0), "register_write r 99999999999 1\nmc_node_create 1 -1\nmeter_set_rates m(0) 1:1 2:2\n")
	f.Fuzz(func(t *testing.T, prog uint8, src string) {
		hang := time.AfterFunc(30*time.Second, func() {
			panic(fmt.Sprintf("STF input ran longer than 30s (a hang):\n%q", src))
		})
		defer hang.Stop()
		cmds, err := Parse(strings.NewReader(src))
		if err != nil {
			return
		}
		now := time.Unix(0, 0)
		sw, err := engine.Load(progs[int(prog)%len(progs)], engine.Config{Now: func() time.Time {
			now = now.Add(time.Microsecond)
			return now
		}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(sw, cmds)
		if res == nil {
			t.Fatalf("Run returned no result (error %v)", err)
		}
	})
}
