package bench

import (
	"context"
	"testing"
	"time"
)

// TestCompareEchoWithEcho runs the comparison machinery with a second echo server standing in for
// the lock server: both sides must make progress and match every answer.
func TestCompareEchoWithEcho(t *testing.T) {
	other := startEcho(t, 1)
	var res VsEchoResult
	untilProgress(t, func(d time.Duration) bool {
		var err error
		res, err = CompareWithEcho(context.Background(), other.Addr(), VsEchoOptions{RunOptions: RunOptions{
			Duration: d / 2, Workers: 2, Outstanding: 2, Rounds: 2, Shards: 1}})
		if err != nil {
			t.Fatal(err)
		}
		return allProgressed(res.ServerRuns) && allProgressed(res.EchoRuns)
	})
	if len(res.ServerRuns) != 2 || len(res.EchoRuns) != 2 {
		t.Fatalf("runs: %d server, %d echo", len(res.ServerRuns), len(res.EchoRuns))
	}
	for _, r := range append(res.ServerRuns, res.EchoRuns...) {
		if p := r.Check(); p != "" {
			t.Fatalf("run %+v: %s", r, p)
		}
	}
	if res.Ratio <= 0 || res.Target != VsEchoTarget {
		t.Fatalf("ratio %v target %v", res.Ratio, res.Target)
	}
}

func TestMedian(t *testing.T) {
	runs := []LoadResult{{OpsPerSec: 3}, {OpsPerSec: 1}, {OpsPerSec: 2}}
	if m := medianLoad(runs); m.OpsPerSec != 2 {
		t.Fatal(m)
	}
	if m := medianLoad(runs[:2]); m.OpsPerSec != 1 {
		t.Fatal(m)
	}
	if m := medianPairs([]PairResult{{PairsPerSec: 5}, {PairsPerSec: 9}, {PairsPerSec: 7}}); m.PairsPerSec != 7 {
		t.Fatal(m)
	}
	if (&LoadResult{}).Check() != "no answers" || (&LoadResult{Ops: 1, Rejects: 2, Unexpected: 1}).Check() != "1 unexpected answers, 2 rejects" {
		t.Fatal("Check")
	}
}

func allProgressed(runs []LoadResult) bool {
	for _, r := range runs {
		if r.Pairs == 0 {
			return false
		}
	}
	return true
}
