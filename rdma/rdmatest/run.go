package rdmatest

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/netlock-go/netlock/rdma/emu"
	"github.com/netlock-go/netlock/rdma/sim"
)

// Seed is the seed of a randomized test: the environment variable RDMA_SEED if it is set (a
// value that is not an int64 fails t), else the clock. It logs the seed and how to rerun with it.
func Seed(t testing.TB) int64 {
	t.Helper()
	s := time.Now().UnixNano()
	if v := os.Getenv("RDMA_SEED"); v != "" {
		var err error
		if s, err = strconv.ParseInt(v, 10, 64); err != nil {
			t.Fatalf("RDMA_SEED: %v", err)
		}
	}
	t.Logf("seed %d (rerun with RDMA_SEED=%d)", s, s)
	return s
}

// RunSim runs w on a virtual-time fabric (rdma/sim) of one node per thread of w (cfg.Nodes is
// set to that), simulating until the virtual time until (ns). An error fails t, named after
// w's algorithm.
func RunSim(t testing.TB, w Workload, cfg sim.Config, until int64) Result {
	t.Helper()
	cfg.Nodes = len(w.Threads)
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(&SimFabric{S: s, Until: until}, w)
	if err != nil {
		t.Fatalf("%s: %v", w.Alg.Name(), err)
	}
	return res
}

// RunEmu runs w on a real-time emulated cluster (rdma/emu) of one node per thread of w, closed
// before RunEmu returns. An error fails t, named after w's algorithm.
func RunEmu(t testing.TB, w Workload, cfg emu.Config) Result {
	t.Helper()
	c, err := emu.NewCluster(cfg, len(w.Threads))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := Run(&EmuFabric{C: c}, w)
	if err != nil {
		t.Fatalf("%s: %v", w.Alg.Name(), err)
	}
	return res
}
