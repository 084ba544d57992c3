package wire_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/netlock-go/netlock/wire"
)

func batchOf(n int) []byte {
	fs := make([]wire.Fields, n)
	for i := range fs {
		fs[i] = wire.Fields{Op: wire.OpAcquire, Mode: wire.Exclusive, Lock: uint32(i + 1), Txn: uint64(100 + i)}
	}
	return wire.AppendBatch(nil, fs...)
}

// TestParseBatch is the table of batch datagrams: what is accepted, and why the rest is
// dropped whole.
func TestParseBatch(t *testing.T) {
	mut := func(b []byte, off int, v byte) []byte { b = bytes.Clone(b); b[off] = v; return b }
	three := batchOf(3)
	tests := []struct {
		name string
		b    []byte
		k    int
		err  error
	}{
		{"one", batchOf(1), 1, nil},
		{"three", three, 3, nil},
		{"max", batchOf(wire.MaxBatch), wire.MaxBatch, nil},
		{"too-many", batchOf(wire.MaxBatch + 1), 0, wire.ErrBatchCount},
		{"empty", nil, 0, wire.ErrShort},
		{"short", three[:wire.Len-1], 0, wire.ErrShort},
		{"trailing-partial", three[:2*wire.Len+1], 0, wire.ErrBatchLen},
		{"trailing-byte", append(bytes.Clone(three), 0), 0, wire.ErrBatchLen},
		{"rack-key-trailer", three[:wire.ControlLen], 0, wire.ErrBatchLen},
		{"version-inside", mut(three, wire.Len, 2), 0, wire.ErrVersion},
		{"version-last", mut(three, 2*wire.Len, 0), 0, wire.ErrVersion},
		{"op-inside", mut(three, wire.Len+1, 9), 0, wire.ErrOp},
		{"mode-inside", mut(three, 2*wire.Len+2, 2), 0, wire.ErrMode},
		{"flag-missing-inside", mut(three, wire.Len+3, 0), 0, wire.ErrBatchFlag},
		{"flag-missing-first", mut(three, 3, 0), 0, wire.ErrBatchFlag},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := wire.ParseBatch(tt.b)
			if !errors.Is(err, tt.err) || k != tt.k {
				t.Fatalf("ParseBatch = %d, %v; want %d, %v", k, err, tt.k, tt.err)
			}
			for i := 0; i < k; i++ {
				h := wire.BatchHeader(tt.b, i)
				if len(h) != wire.Len || cap(h) != wire.Len || h.Lock() != uint32(i+1) || h.Txn() != uint64(100+i) ||
					!h.Has(wire.FlagBatch) {
					t.Fatalf("header %d: % x", i, []byte(h))
				}
			}
		})
	}
	if wire.IsBatch(nil) || wire.IsBatch(wire.Append(nil, &wire.Fields{})) || !wire.IsBatch(three) {
		t.Error("IsBatch")
	}
}

// TestBatchAllocs: checking a batch and reading its headers does not allocate, nor does
// rejecting one.
func TestBatchAllocs(t *testing.T) {
	good, bad := batchOf(wire.MaxBatch), batchOf(3)[:2*wire.Len+5]
	var sink uint64
	n := testing.AllocsPerRun(1000, func() {
		k, err := wire.ParseBatch(good)
		if err != nil || !wire.IsBatch(good) {
			panic(err)
		}
		for i := 0; i < k; i++ {
			sink += uint64(wire.BatchHeader(good, i).Lock())
		}
		if _, err := wire.ParseBatch(bad); err == nil {
			panic("partial header accepted")
		}
	})
	if n != 0 {
		t.Fatalf("allocs per run: %v, want 0", n)
	}
	if sink == 0 {
		t.Fatal("sink")
	}
}

// FuzzBatch checks that ParseBatch never panics, that it accepts exactly the datagrams of
// 1..MaxBatch whole headers that each Validate and carry the batch flag, and that an accepted
// batch re-encodes header by header to the same bytes.
func FuzzBatch(f *testing.F) {
	f.Add(batchOf(1))
	f.Add(batchOf(3))
	f.Add(batchOf(wire.MaxBatch))
	f.Add(batchOf(wire.MaxBatch + 1))
	f.Add(batchOf(2)[:wire.Len+7])
	f.Add(wire.Append(nil, &full))
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xff}, 2*wire.Len))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := wire.ParseBatch(b)
		want := len(b) >= wire.Len && len(b)%wire.Len == 0 && len(b)/wire.Len <= wire.MaxBatch
		for i := 0; want && i < len(b)/wire.Len; i++ {
			h := wire.Header(b[i*wire.Len:])
			want = h.Validate() == nil && h.Has(wire.FlagBatch)
		}
		if (err == nil) != want {
			t.Fatalf("ParseBatch(%d bytes) = %d, %v; want ok=%v", len(b), k, err, want)
		}
		if err != nil {
			if k != 0 {
				t.Fatalf("k %d with error %v", k, err)
			}
			return
		}
		if k != len(b)/wire.Len || !wire.IsBatch(b) {
			t.Fatalf("k %d for %d bytes", k, len(b))
		}
		var again []byte
		for i := 0; i < k; i++ {
			var fs wire.Fields
			wire.BatchHeader(b, i).Decode(&fs)
			again = wire.Append(again, &fs)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("re-encode:\n got % x\nwant % x", again, b)
		}
	})
}
