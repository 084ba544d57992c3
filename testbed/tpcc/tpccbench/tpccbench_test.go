package tpccbench

import (
	"testing"

	"github.com/netlock-go/netlock/rdma/dlm"
	"github.com/netlock-go/netlock/testbed/tpcc"
	"github.com/netlock-go/netlock/wire"
)

func TestWarehouses(t *testing.T) {
	for _, c := range []struct {
		fig       Figure
		per       string
		perNode   int
		want      int
		wantError bool
	}{{Fig10, PerClient, 10, 100, false}, {Fig10, PerServer, 1, 2, false}, {Fig11, PerTotal, 10, 10, false}, {Fig11, PerClient, 1, 6, false},
		{Fig10, "rack", 1, 0, true}} {
		got, err := Warehouses(c.fig, c.perNode, c.per)
		if got != c.want || (err != nil) != c.wantError {
			t.Errorf("Warehouses(%s, %d, %s) = %d, %v", c.fig.Name, c.perNode, c.per, got, err)
		}
	}
}

// TestSource: client thread t of machine m draws terminal m*threads+t's transactions, modes and
// reads carried over, the hold time set.
func TestSource(t *testing.T) {
	wl, err := tpcc.New(tpcc.Config{Warehouses: 7, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	const threads = 3
	next := Source(wl, threads, 500)(2, 1, 77)
	term := wl.Terminal(2*threads+1, 77)
	var tx tpcc.Txn
	reads := 0
	for i := range 3000 {
		got := next()
		term.Next(&tx)
		if got.Kind != tx.Kind.String() || got.Hold != 500 || len(got.Locks) != len(tx.Locks) || len(got.Reads) != len(tx.Reads) {
			t.Fatalf("txn %d: %+v against %v with %d locks, %d reads", i, got, tx.Kind, len(tx.Locks), len(tx.Reads))
		}
		for j, l := range tx.Locks {
			want := dlm.Exclusive
			if l.Mode == wire.Shared {
				want = dlm.Shared
			}
			if got.Locks[j] != (dlm.Request{Lock: l.Lock, Mode: want}) {
				t.Fatalf("txn %d lock %d: %v, want %v", i, j, got.Locks[j], l)
			}
		}
		reads += len(got.Reads)
		if tx.Home != (2*threads+1)%7 {
			t.Fatalf("home %d", tx.Home)
		}
	}
	if reads == 0 {
		t.Error("no Stock-Level reads in 3000 transactions")
	}
}

// TestServerOf: a warehouse's locks go to its server; the specification's ITEM table spreads
// over all servers by row (and DSLR's per-warehouse items stay with their warehouse).
func TestServerOf(t *testing.T) {
	f := ServerOf(tpcc.Spec, 3)
	if s := f(tpcc.LockID(tpcc.TableDistrict, 5, 3)); s != 2 {
		t.Errorf("warehouse 5's district on server %d, want 2", s)
	}
	seen := map[int]bool{}
	for row := uint32(0); row < 100; row++ {
		seen[f(tpcc.LockID(tpcc.TableItem, 0, row))] = true
	}
	if len(seen) != 3 {
		t.Errorf("items on servers %v, want all three", seen)
	}
	if s := ServerOf(tpcc.DSLRTrace, 3)(tpcc.LockID(tpcc.TableItem, 4, 99)); s != 1 {
		t.Errorf("DSLR's item of warehouse 4 on server %d, want 1", s)
	}
}

// TestWithoutReads: the wrapped source draws the same transactions without Stock-Level's reads;
// the source it wraps has them (negative control).
func TestWithoutReads(t *testing.T) {
	wl, err := tpcc.New(tpcc.Config{Warehouses: 4, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	plain, dropped := Source(wl, 2, 0)(1, 0, 9), WithoutReads(Source(wl, 2, 0))(1, 0, 9)
	reads := 0
	for i := range 3000 {
		a, b := plain(), dropped()
		reads += len(a.Reads)
		if len(b.Reads) != 0 || a.Kind != b.Kind || len(a.Locks) != len(b.Locks) {
			t.Fatalf("txn %d: %s with %d locks, %d reads; without reads: %s with %d locks, %d reads", i, a.Kind, len(a.Locks),
				len(a.Reads), b.Kind, len(b.Locks), len(b.Reads))
		}
	}
	if reads == 0 {
		t.Error("the wrapped source has no reads in 3000 transactions")
	}
}
