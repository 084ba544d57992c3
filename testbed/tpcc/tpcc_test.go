package tpcc

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/wire"
)

func mustNew(t *testing.T, cfg Config) *Workload {
	t.Helper()
	wl, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// draw returns n transactions of terminal id (locks copied).
func draw(wl *Workload, id int, seed uint64, n int) []Txn {
	term := wl.Terminal(id, seed)
	out := make([]Txn, n)
	var tx Txn
	for i := range out {
		term.Next(&tx)
		out[i] = tx
		out[i].Locks = slices.Clone(tx.Locks)
		out[i].Reads = slices.Clone(tx.Reads)
	}
	return out
}

func TestLockIDRoundTrip(t *testing.T) {
	for _, c := range []struct {
		t   Table
		w   int
		row uint32
	}{{TableWarehouse, 0, 0}, {TableOrderLine, 127, 1<<rowBits - 1}, {TableNewOrderTable, 5, 0}, {TableItem, 0, 99999}} {
		id := LockID(c.t, c.w, c.row)
		if tb, w, row := Decode(id); tb != c.t || w != c.w || row != c.row {
			t.Errorf("Decode(LockID(%v, %d, %d)) = %v, %d, %d", c.t, c.w, c.row, tb, w, row)
		}
		if id < 1<<28 {
			t.Errorf("lock %#x is below 2^28, among the microbenchmarks' ids", id)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, cfg := range []Config{{Warehouses: 0}, {Warehouses: MaxWarehouses + 1}, {Warehouses: 1, Profile: 9}, {Warehouses: 1, Order: 9}} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted it", cfg)
		}
	}
	for _, s := range []string{"spec", "dslr-trace", "dslr-nurand"} {
		if p, err := ParseProfile(s); err != nil || p.String() != s {
			t.Errorf("ParseProfile(%q) = %v, %v", s, p, err)
		}
	}
	if _, err := ParseProfile("tpcc"); err == nil {
		t.Error("ParseProfile accepted tpcc")
	}
	if o, err := ParseOrder("client"); err != nil || o != ClientOrder {
		t.Errorf("ParseOrder(client) = %v, %v", o, err)
	}
	if _, err := ParseOrder("random"); err == nil {
		t.Error("ParseOrder accepted random")
	}
}

// TestDeterministic: a terminal's transactions are a function of the run seed, the terminal and
// its seed; another terminal seed draws others; Ordered and ClientOrder draw the same locks.
func TestDeterministic(t *testing.T) {
	seed := testSeed(t)
	for _, p := range Profiles {
		wl := mustNew(t, Config{Warehouses: 4, Profile: p, Seed: seed})
		a, b := draw(wl, 3, seed+1, 300), draw(mustNew(t, Config{Warehouses: 4, Profile: p, Seed: seed}), 3, seed+1, 300)
		c := draw(wl, 3, seed+2, 300)
		eq := func(x, y []Txn) bool {
			return slices.EqualFunc(x, y, func(p, q Txn) bool {
				return p.Kind == q.Kind && p.Home == q.Home && slices.Equal(p.Locks, q.Locks) && slices.Equal(p.Reads, q.Reads)
			})
		}
		if !eq(a, b) {
			t.Errorf("%v: one seed drew two sequences", p)
		}
		if eq(a, c) {
			t.Errorf("%v: two terminal seeds drew the same sequence", p)
		}
		cl := draw(mustNew(t, Config{Warehouses: 4, Profile: p, Order: ClientOrder, Seed: seed}), 3, seed+1, 300)
		for i := range a {
			if !slices.IsSortedFunc(a[i].Locks, func(x, y client.LockSpec) int { return cmp.Compare(x.Lock, y.Lock) }) {
				t.Fatalf("%v txn %d: ordered locks not ascending: %v", p, i, a[i].Locks)
			}
			for j := 1; j < len(a[i].Locks); j++ {
				if a[i].Locks[j].Lock == a[i].Locks[j-1].Lock {
					t.Fatalf("%v txn %d: lock %#x twice", p, i, a[i].Locks[j].Lock)
				}
			}
			s := slices.Clone(cl[i].Locks)
			slices.SortFunc(s, func(x, y client.LockSpec) int { return cmp.Compare(x.Lock, y.Lock) })
			if !slices.Equal(s, a[i].Locks) {
				t.Fatalf("%v txn %d: client order %v, sorted %v, ordered %v", p, i, cl[i].Locks, s, a[i].Locks)
			}
		}
	}
}

// TestMix: the transaction types follow 45/43/4/4/4 (chi-square); a 46/42/4/4/4 expectation is
// rejected on the same counts (negative control).
func TestMix(t *testing.T) {
	seed := testSeed(t)
	for _, p := range []Profile{Spec, DSLRTrace} {
		wl := mustNew(t, Config{Warehouses: 2, Profile: p, Seed: seed})
		term := wl.Terminal(0, seed)
		obs := make([]float64, len(Kinds))
		var tx Txn
		const n = 200000
		for i := 0; i < n; {
			term.Next(&tx)
			if tx.Part <= 1 { // a Delivery is ten transactions
				obs[tx.Kind-1]++
				i++
			}
		}
		want := []float64{.45, .43, .04, .04, .04}
		chi, df := chiSquare(obs, want)
		t.Logf("%v: counts %v, chi2 %.1f (df %d, critical %.1f)", p, obs, chi, df, chiCrit(df))
		if chi > chiCrit(df) {
			t.Errorf("%v: mix %v rejected: chi2 %.1f > %.1f", p, obs, chi, chiCrit(df))
		}
		if wrong, df := chiSquare(obs, []float64{.46, .42, .04, .04, .04}); wrong <= chiCrit(df) {
			t.Errorf("%v: negative control: a 46/42 mix is not rejected (chi2 %.1f)", p, wrong)
		}
	}
}

// TestNURandExact: NURand's three uses follow their exact distributions (computed by
// enumeration, nuRandPMF), checked by chi-square on a million draws; the same draws are rejected
// against the distribution with another C and against the uniform one (negative controls).
func TestNURandExact(t *testing.T) {
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 2))
	for _, c := range []struct{ a, x, y int }{{255, 0, 999}, {1023, 1, 3000}, {8191, 1, 100000}} {
		cc := r.IntN(c.a + 1)
		pmf := nuRandPMF(c.a, c.x, c.y, cc)
		sum := 0.0
		for _, v := range pmf {
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("NURand(%d, %d, %d) pmf sums to %v", c.a, c.x, c.y, sum)
		}
		obs := make([]float64, c.y-c.x+1)
		for range 1_000_000 {
			v := NURand(r, c.a, c.x, c.y, cc)
			if v < c.x || v > c.y {
				t.Fatalf("NURand(%d, %d, %d) = %d out of range", c.a, c.x, c.y, v)
			}
			obs[v-c.x]++
		}
		chi, df := chiSquare(obs, pmf)
		t.Logf("NURand(%d, %d, %d), C=%d: chi2 %.0f, df %d, critical %.0f", c.a, c.x, c.y, cc, chi, df, chiCrit(df))
		if chi > chiCrit(df) {
			t.Errorf("NURand(%d, %d, %d) rejected: chi2 %.0f > %.0f", c.a, c.x, c.y, chi, chiCrit(df))
		}
		other := nuRandPMF(c.a, c.x, c.y, (cc+1)%(c.a+1))
		uni := make([]float64, len(pmf))
		for i := range uni {
			uni[i] = 1 / float64(len(uni))
		}
		for name, q := range map[string][]float64{"C+1": other, "uniform": uni} {
			if chi, df := chiSquare(obs, q); chi <= chiCrit(df) {
				t.Errorf("negative control: NURand(%d, %d, %d) draws pass as %s (chi2 %.0f)", c.a, c.x, c.y, name, chi)
			}
		}
	}
}

// TestSharedC: the customers of New-Orders drawn by two different terminals both follow
// NURand(1023, 1, 3000) with the workload's one C_ID, and the first item of their orders
// NURand(8191, 1, 100000) with its C for OL_I_ID; against C+1 both are rejected.
func TestSharedC(t *testing.T) {
	seed := testSeed(t)
	wl := mustNew(t, Config{Warehouses: 3, Order: ClientOrder, Seed: seed})
	k := wl.Constants()
	t.Logf("constants %+v", k)
	custPMF, itemPMF := nuRandPMF(1023, 1, 3000, k.ID), nuRandPMF(8191, 1, 100000, k.Item)
	custBad, itemBad := nuRandPMF(1023, 1, 3000, (k.ID+1)%1024), nuRandPMF(8191, 1, 100000, (k.Item+1)%8192)
	for _, id := range []int{0, 7} {
		cust := make([]float64, 3000)
		item := make([]float64, 100000)
		term := wl.Terminal(id, seed^uint64(id)<<20)
		var tx Txn
		for n := 0; n < 120000; {
			term.Next(&tx)
			if tx.Kind != NewOrder {
				continue
			}
			n++
			tb, _, row := Decode(tx.Locks[2].Lock)
			if tb != TableCustomer {
				t.Fatalf("New-Order's third lock is %v, want the customer", tb)
			}
			cust[row%CustomersPerDistrict]++
			tb, _, row = Decode(tx.Locks[6].Lock)
			if tb != TableItem {
				t.Fatalf("New-Order's seventh lock is %v, want the first line's item", tb)
			}
			item[row]++
		}
		for _, c := range []struct {
			name     string
			obs      []float64
			pmf, bad []float64
		}{{"C_ID", cust, custPMF, custBad}, {"OL_I_ID", item, itemPMF, itemBad}} {
			chi, df := chiSquare(c.obs, c.pmf)
			t.Logf("terminal %d %s: chi2 %.0f df %d critical %.0f", id, c.name, chi, df, chiCrit(df))
			if chi > chiCrit(df) {
				t.Errorf("terminal %d: %s does not follow NURand with the run's C: chi2 %.0f", id, c.name, chi)
			}
			if chi, df := chiSquare(c.obs, c.bad); chi <= chiCrit(df) {
				t.Errorf("negative control: terminal %d's %s passes with C+1 (chi2 %.0f)", id, c.name, chi)
			}
		}
	}
}

// TestLastNameConstants: C_LAST's run and load values respect clause 2.1.6.1 for many seeds, and
// the rule rejects the forbidden deltas.
func TestLastNameConstants(t *testing.T) {
	for s := uint64(0); s < 2000; s++ {
		if c := constants(s); !ValidLastDelta(c.LastLoad, c.LastRun) {
			t.Fatalf("seed %d: C_LAST load %d run %d", s, c.LastLoad, c.LastRun)
		}
	}
	for _, c := range []struct {
		load, run int
		ok        bool
	}{{0, 65, true}, {200, 81, true}, {0, 119, true}, {0, 64, false}, {0, 120, false}, {10, 106, false}, {150, 38, false}, {7, 7, false}} {
		if got := ValidLastDelta(c.load, c.run); got != c.ok {
			t.Errorf("ValidLastDelta(%d, %d) = %v, want %v", c.load, c.run, got, c.ok)
		}
	}
}

// TestLastNames: a district's customers by last name partition 1..3000, every name has a
// customer, customer c <= 1000 is named c-1.
func TestLastNames(t *testing.T) {
	wl := mustNew(t, Config{Warehouses: 2, Seed: 5})
	seen := make([]int, CustomersPerDistrict+1)
	for n := range 1000 {
		ids := wl.customersNamed(1, 3, n)
		if len(ids) == 0 {
			t.Fatalf("no customer named %d", n)
		}
		for _, c := range ids {
			seen[c]++
			if c <= 1000 && int(c) != n+1 {
				t.Fatalf("customer %d named %d, want %d", c, n, c-1)
			}
		}
	}
	for c := 1; c <= CustomersPerDistrict; c++ {
		if seen[c] != 1 {
			t.Fatalf("customer %d appears %d times", c, seen[c])
		}
	}
}

// tally counts a transaction's locks by (table, mode) and checks their warehouses.
type tally map[Table][2]int

func count(tx *Txn) tally {
	m := tally{}
	for _, l := range tx.Locks {
		tb, _, _ := Decode(l.Lock)
		c := m[tb]
		c[l.Mode]++
		m[tb] = c
	}
	return m
}

func (m tally) n(tb Table, mode wire.Mode) int { return m[tb][mode] }
func (m tally) all(tb Table) int               { return m[tb][0] + m[tb][1] }

// TestSpecLockSets checks each transaction's lock set against the specification's profile
// (package doc) on 50 000 transactions, and the shares of remote transactions, remote lines,
// lookups by name and rollbacks against the clauses' 15%, 1%, 60% and 1% (with negative
// controls: the same counts against 10%, 2%, 50% and 2%).
func TestSpecLockSets(t *testing.T) {
	seed := testSeed(t)
	const W = 4
	wl := mustNew(t, Config{Warehouses: W, Seed: seed})
	var pay, payRemote, named, nameable, no, rollbacks, lines, remoteLines float64
	linesHist := make([]float64, 11)
	wantPart := make([]int, 8) // the next Delivery district per terminal
	for id := range 8 {
		for _, tx := range draw(wl, id, seed+uint64(id), 6000) {
			m := count(&tx)
			home := id % W
			if tx.Home != home {
				t.Fatalf("terminal %d: home %d", id, tx.Home)
			}
			remote := false
			for _, l := range tx.Locks {
				tb, w, _ := Decode(l.Lock)
				switch {
				case tb == TableItem && w != 0:
					t.Fatalf("item lock in warehouse %d", w)
				case tb != TableItem && w != home:
					if !(tb == TableStock && tx.Kind == NewOrder) && !(tb == TableCustomer && tx.Kind == Payment) {
						t.Fatalf("%v: %v lock of warehouse %d, home %d", tx.Kind, tb, w, home)
					}
					remote = true
				}
			}
			if remote != tx.Remote {
				t.Fatalf("%v: Remote %v, locks say %v", tx.Kind, tx.Remote, remote)
			}
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("%v %+v: "+format, append([]any{tx.Kind, m}, args...)...)
			}
			switch tx.Kind {
			case NewOrder:
				no++
				if tx.Rollback {
					rollbacks++
				}
				linesHist[tx.Lines-5]++
				ol := tx.Lines
				if tx.Rollback {
					ol--
				}
				lines += float64(m.all(TableStock))
				for _, l := range tx.Locks {
					if tb, w, _ := Decode(l.Lock); tb == TableStock && w != home {
						remoteLines++
					}
				}
				switch {
				case tx.Lines < 5 || tx.Lines > 15:
					fail("%d lines", tx.Lines)
				case m.n(TableWarehouse, wire.Shared) != 1, m.n(TableDistrict, wire.Exclusive) != 1, m.n(TableCustomer, wire.Shared) != 1:
					fail("want warehouse S, district X, customer S")
				case m.n(TableOrder, wire.Exclusive) != 1, m.n(TableNewOrder, wire.Exclusive) != 1, m.n(TableNewOrderTable, wire.Exclusive) != 1:
					fail("want order X, new-order X, new-order table X")
				case m.n(TableOrderLine, wire.Exclusive) != ol:
					fail("%d order lines, want %d", m.all(TableOrderLine), ol)
				case m.all(TableItem) != m.n(TableItem, wire.Shared) || m.all(TableStock) != m.n(TableStock, wire.Exclusive):
					fail("want items S, stock X")
				case m.all(TableItem) > m.all(TableStock) || m.all(TableStock) > ol || m.all(TableItem) < 1:
					fail("items %d <= stock %d <= lines %d", m.all(TableItem), m.all(TableStock), ol)
				case len(tx.Locks) != 6+ol+m.all(TableItem)+m.all(TableStock):
					fail("%d locks", len(tx.Locks))
				}
			case Payment:
				pay++
				nameable++
				if tx.ByName {
					named++
				}
				if tx.Remote {
					payRemote++
				}
				switch {
				case m.n(TableWarehouse, wire.Exclusive) != 1, m.n(TableDistrict, wire.Exclusive) != 1, m.n(TableHistory, wire.Exclusive) != 1:
					fail("want warehouse, district and history X")
				case m.n(TableCustomer, wire.Exclusive) != 1:
					fail("want one customer X")
				case !tx.ByName && m.all(TableCustomer) != 1:
					fail("by number: want one customer")
				case len(tx.Locks) != 3+m.all(TableCustomer):
					fail("%d locks", len(tx.Locks))
				}
			case OrderStatus:
				nameable++
				if tx.ByName {
					named++
				}
				switch {
				case m.all(TableCustomer) < 1 || m.n(TableCustomer, wire.Exclusive) != 0:
					fail("want customers S")
				case !tx.ByName && m.all(TableCustomer) != 1:
					fail("by number: want one customer")
				case m.n(TableOrder, wire.Shared) != 1 || m.n(TableOrderLine, wire.Shared) < 5 || m.n(TableOrderLine, wire.Shared) > 15:
					fail("want one order S and its 5..15 lines S")
				case len(tx.Locks) != m.all(TableCustomer)+1+m.all(TableOrderLine) || m.all(TableOrderLine) != m.n(TableOrderLine, wire.Shared):
					fail("%d locks", len(tx.Locks))
				}
			case Delivery:
				if tx.Part != wantPart[id]+1 || tx.District != wantPart[id] {
					fail("part %d district %d, want part %d", tx.Part, tx.District, wantPart[id]+1)
				}
				wantPart[id] = (wantPart[id] + 1) % Districts
				switch {
				case m.n(TableNewOrderTable, wire.Exclusive) != 1, m.n(TableNewOrder, wire.Exclusive) != 1:
					fail("want the new-order table and the district's oldest new order X")
				case m.n(TableOrder, wire.Exclusive) != 1, m.n(TableCustomer, wire.Exclusive) != 1:
					fail("want an order and its customer X")
				case m.n(TableOrderLine, wire.Exclusive) < 5 || m.n(TableOrderLine, wire.Exclusive) > 15:
					fail("want 5..15 lines X")
				case len(tx.Locks) != 4+m.all(TableOrderLine) || m.all(TableOrderLine) != m.n(TableOrderLine, wire.Exclusive):
					fail("%d locks", len(tx.Locks))
				}
				for _, l := range tx.Locks {
					if tb, _, row := Decode(l.Lock); tb != TableNewOrderTable && tb != TableCustomer && int(row)/ordersPerDistrict/linesPerOrder != tx.District &&
						int(row)/ordersPerDistrict != tx.District {
						fail("%v row %d outside district %d", tb, row, tx.District)
					}
				}
			case StockLevel:
				r := tally{}
				for _, l := range tx.Reads {
					tb, _, _ := Decode(l.Lock)
					c := r[tb]
					c[l.Mode]++
					r[tb] = c
				}
				switch {
				case len(tx.Locks) != 1 || m.n(TableDistrict, wire.Shared) != 1:
					fail("want the district S, alone")
				case r.n(TableOrderLine, wire.Shared) < 5*stockLevelOrders || r.n(TableOrderLine, wire.Shared) > 15*stockLevelOrders:
					fail("want the lines of 20 orders read: %v", r)
				case r.all(TableStock) != r.n(TableStock, wire.Shared) || r.all(TableStock) < 1 || r.all(TableStock) > r.all(TableOrderLine):
					fail("want stock read, at most one per line: %v", r)
				case len(tx.Reads) != r.all(TableOrderLine)+r.all(TableStock):
					fail("%d reads", len(tx.Reads))
				}
			}
			if tx.Kind != StockLevel && len(tx.Reads) != 0 {
				t.Fatalf("%v with %d reads", tx.Kind, len(tx.Reads))
			}
		}
	}
	// Shares against the clauses, each with a negative control at a wrong value.
	share := func(name string, k, n, p, wrong float64) {
		t.Helper()
		z := func(q float64) float64 { return math.Abs(k/n-q) / math.Sqrt(q*(1-q)/n) }
		t.Logf("%s: %.0f of %.0f = %.4f (want %.2f, z %.2f)", name, k, n, k/n, p, z(p))
		if z(p) > zCrit {
			t.Errorf("%s: %.4f, want %.2f (z %.1f)", name, k/n, p, z(p))
		}
		if z(wrong) <= zCrit {
			t.Errorf("negative control: %s %.4f passes as %.2f", name, k/n, wrong)
		}
	}
	share("remote payments", payRemote, pay, .15, .10)
	share("remote order lines", remoteLines, lines, .01, .02)
	share("customers by last name", named, nameable, .60, .50)
	share("rolled-back new orders", rollbacks, no, .01, .02)
	uni := make([]float64, 11)
	for i := range uni {
		uni[i] = 1.0 / 11
	}
	if chi, df := chiSquare(linesHist, uni); chi > chiCrit(df) {
		t.Errorf("order-line counts %v are not uniform on 5..15 (chi2 %.1f)", linesHist, chi)
	}
	if chi, df := chiSquare(linesHist, append([]float64{.5}, slices.Repeat([]float64{.05}, 10)...)); chi <= chiCrit(df) {
		t.Errorf("negative control: order-line counts pass as skewed (chi2 %.1f)", chi)
	}
}

// TestOneWarehouse: with W = 1 nothing is remote.
func TestOneWarehouse(t *testing.T) {
	wl := mustNew(t, Config{Warehouses: 1, Seed: 3})
	for _, tx := range draw(wl, 5, 9, 20000) {
		if tx.Remote {
			t.Fatalf("%v remote with one warehouse", tx.Kind)
		}
	}
}

// TestDSLRTraceLockSets: DSLRTrace's transactions have exactly DSLR's generator's locks (its
// no_tablelock variant) and the warehouse is uniform per transaction.
func TestDSLRTraceLockSets(t *testing.T) {
	seed := testSeed(t)
	const W = 5
	for _, p := range []Profile{DSLRTrace, DSLRNURand} {
		testDSLRLockSets(t, mustNew(t, Config{Warehouses: W, Profile: p, Order: ClientOrder, Seed: seed}), seed)
	}
}

func testDSLRLockSets(t *testing.T, wl *Workload, seed uint64) {
	const W = 5
	wh := make([]float64, W)
	for _, tx := range draw(wl, 2, seed, 50000) {
		wh[tx.Home]++
		var got []string
		for _, l := range tx.Locks {
			tb, w, _ := Decode(l.Lock)
			if w != tx.Home {
				t.Fatalf("%v: lock in warehouse %d, transaction's %d", tx.Kind, w, tx.Home)
			}
			got = append(got, tb.String()+[]string{"/S", "/X"}[l.Mode])
		}
		var want []string
		switch {
		case tx.Kind == NewOrder:
			want = []string{"warehouse/S", "district/X", "customer/S", "order/X", "new-order table/X", "new-order/X", "item/S", "stock/X", "order-line/X"}
		case tx.Kind == Payment && tx.ByName:
			want = []string{"warehouse/X", "district/X", "customer/X", "customer/X", "history/X", "history/X"}
		case tx.Kind == Payment:
			want = []string{"warehouse/X", "district/X", "customer/X", "history/X"}
		case tx.Kind == OrderStatus && tx.ByName:
			want = []string{"customer/S", "customer/S", "order/S", "order/S", "order-line/S"}
		case tx.Kind == OrderStatus:
			want = []string{"customer/S", "order/S", "order-line/S"}
		case tx.Kind == Delivery:
			want = []string{"new-order table/X", "new-order/X", "order/X", "order-line/X", "customer/X"}
		case tx.Kind == StockLevel:
			want = []string{"district/S", "order-line/S", "stock/S"}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%v: locks %v, want %v", tx.Kind, got, want)
		}
	}
	uni := make([]float64, W)
	for i := range uni {
		uni[i] = 1.0 / W
	}
	if chi, df := chiSquare(wh, uni); chi > chiCrit(df) {
		t.Errorf("warehouses %v are not uniform (chi2 %.1f)", wh, chi)
	}
	if chi, df := chiSquare(wh, []float64{.3, .2, .2, .15, .15}); chi <= chiCrit(df) {
		t.Errorf("negative control: warehouses %v pass as skewed (chi2 %.1f)", wh, chi)
	}
}

// TestConcurrentTerminals: terminals of one workload may run in parallel (the last-name index
// is built once per district); run under -race.
func TestConcurrentTerminals(t *testing.T) {
	wl := mustNew(t, Config{Warehouses: 2, Seed: 11})
	want := make([][]Txn, 4)
	for i := range want {
		want[i] = draw(mustNew(t, Config{Warehouses: 2, Seed: 11}), i, uint64(i), 500)
	}
	got := make([][]Txn, 4)
	done := make(chan int)
	for i := range got {
		go func() { got[i] = draw(wl, i, uint64(i), 500); done <- i }()
	}
	for range got {
		<-done
	}
	for i := range got {
		for j := range got[i] {
			if !slices.Equal(got[i][j].Locks, want[i][j].Locks) {
				t.Fatalf("terminal %d txn %d differs when run concurrently", i, j)
			}
		}
	}
}

// TestDSLRDraws: DSLRTrace draws New-Order's customer uniformly, DSLRNURand by NURand(1023, 1,
// 3000) with the run's C_ID; each is rejected against the other's distribution.
func TestDSLRDraws(t *testing.T) {
	seed := testSeed(t)
	uni := make([]float64, CustomersPerDistrict)
	for i := range uni {
		uni[i] = 1.0 / CustomersPerDistrict
	}
	for _, p := range []Profile{DSLRTrace, DSLRNURand} {
		wl := mustNew(t, Config{Warehouses: 2, Profile: p, Order: ClientOrder, Seed: seed})
		nu := nuRandPMF(1023, 1, CustomersPerDistrict, wl.Constants().ID)
		want, other := uni, nu
		if p == DSLRNURand {
			want, other = nu, uni
		}
		obs := make([]float64, CustomersPerDistrict)
		term := wl.Terminal(0, seed)
		var tx Txn
		for n := 0; n < 150000; {
			term.Next(&tx)
			if tx.Kind == NewOrder {
				_, _, row := Decode(tx.Locks[2].Lock)
				obs[row%CustomersPerDistrict]++
				n++
			}
		}
		if chi, df := chiSquare(obs, want); chi > chiCrit(df) {
			t.Errorf("%v: customers rejected (chi2 %.0f, df %d)", p, chi, df)
		}
		if chi, df := chiSquare(obs, other); chi <= chiCrit(df) {
			t.Errorf("negative control: %v's customers pass as the other profile's (chi2 %.0f)", p, chi)
		}
	}
}
