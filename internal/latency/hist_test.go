package latency

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestHistBuckets(t *testing.T) {
	// Every bucket's bounds map back to the bucket, and buckets tile the value range.
	prevHi := uint64(0)
	for i := 0; i < histBuckets; i++ {
		lo, hi := histBounds(i)
		if histIndex(lo) != i || histIndex(hi) != i {
			t.Fatalf("bucket %d [%d,%d]: index(lo)=%d index(hi)=%d", i, lo, hi, histIndex(lo), histIndex(hi))
		}
		if i > 0 && lo != prevHi+1 {
			t.Fatalf("bucket %d starts at %d, previous ended at %d", i, lo, prevHi)
		}
		if lo >= histSub && float64(hi-lo+1)/float64(lo) > 1.0/histHalf+1e-12 {
			t.Fatalf("bucket %d [%d,%d] too wide", i, lo, hi)
		}
		prevHi = hi
	}
	if prevHi != math.MaxUint64 {
		t.Fatalf("last bucket ends at %d", prevHi)
	}
}

func TestHistQuantiles(t *testing.T) {
	var h Histogram
	if h.Quantile(0.5) != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram")
	}
	r := rand.New(rand.NewPCG(1, 2))
	vals := make([]time.Duration, 100000)
	for i := range vals {
		vals[i] = time.Duration(r.ExpFloat64() * float64(50*time.Microsecond))
		h.Record(vals[i])
	}
	slices.Sort(vals)
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		want := vals[int(math.Ceil(q*float64(len(vals))))-1]
		got := h.Quantile(q)
		if d := math.Abs(float64(got-want)) / float64(want); d > 0.02 {
			t.Errorf("q%v: got %v, want %v (off %.2f%%)", q, got, want, 100*d)
		}
	}
	if h.Max() != vals[len(vals)-1] || h.Min() != vals[0] || h.Count() != uint64(len(vals)) {
		t.Errorf("max %v min %v count %d", h.Max(), h.Min(), h.Count())
	}
	var a, b Histogram
	for i, v := range vals {
		if i%2 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	a.Merge(&b)
	if a != h {
		t.Error("merge of halves differs from the whole")
	}
	h.Record(-time.Second)
	if h.Min() != 0 {
		t.Error("negative not clamped")
	}
}

func TestHistRecordAllocs(t *testing.T) {
	h := new(Histogram)
	if n := testing.AllocsPerRun(100, func() { h.Record(12345) }); n != 0 {
		t.Fatalf("allocs %v", n)
	}
}
