package citron

import (
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func smallConfig() Config {
	return Config{Space: 4096, M: 2, TWait: 15 * time.Microsecond, Lease: 10 * time.Millisecond}
}

func TestSmokeSim(t *testing.T) {
	w := workload{clients: 6, ops: 50, maxLen: 300, sharedFrac: 0.3, hot: 4096, space: 4096, seed: seedOf(t, 1), k: 2}
	res := runSim(t, w, simSetup{cfg: smallConfig(), data: true})
	t.Logf("grants %d, finished %d, end %v", res.o.grants, res.finished, time.Duration(res.end))
	if res.o.violations != 0 || res.bad != 0 {
		t.Fatalf("seed %d: %d violations (%s), %d bad units", w.seed, res.o.violations, res.o.first, res.bad)
	}
	if res.finished != w.clients || res.quiet != "" {
		t.Fatalf("finished %d, quiescence: %s", res.finished, res.quiet)
	}
}
