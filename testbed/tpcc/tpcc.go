package tpcc

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/netlock-go/netlock/client"
	"github.com/netlock-go/netlock/wire"
)

// Kind is a TPC-C transaction type.
type Kind uint8

// The five transactions.
const (
	NewOrder Kind = iota + 1
	Payment
	OrderStatus
	Delivery
	StockLevel
)

// Kinds lists the transaction types in mix order.
var Kinds = []Kind{NewOrder, Payment, OrderStatus, Delivery, StockLevel}

// Mix is the standard mix in percent, indexed by Kind (TPC-C clause 5.2.3's minimums, New-Order
// the rest; DSLR's generator uses the same).
var Mix = [...]int{NewOrder: 45, Payment: 43, OrderStatus: 4, Delivery: 4, StockLevel: 4}

var kindNames = [...]string{NewOrder: "neworder", Payment: "payment", OrderStatus: "orderstatus",
	Delivery: "delivery", StockLevel: "stocklevel"}

func (k Kind) String() string {
	if k >= NewOrder && k <= StockLevel {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Table is the table of a lock's row.
type Table uint8

// Tables. TableNewOrderTable is DSLR's lock on the whole NEW-ORDER table of a warehouse (row 0).
const (
	TableWarehouse Table = iota + 1
	TableDistrict
	TableCustomer
	TableHistory
	TableNewOrder
	TableOrder
	TableOrderLine
	TableStock
	TableItem
	TableNewOrderTable
)

var tableNames = [...]string{TableWarehouse: "warehouse", TableDistrict: "district", TableCustomer: "customer",
	TableHistory: "history", TableNewOrder: "new-order", TableOrder: "order", TableOrderLine: "order-line",
	TableStock: "stock", TableItem: "item", TableNewOrderTable: "new-order table"}

func (t Table) String() string {
	if t >= TableWarehouse && t <= TableNewOrderTable {
		return tableNames[t]
	}
	return fmt.Sprintf("Table(%d)", uint8(t))
}

// TPC-C's cardinalities (clause 1.2) and the lock-id layout.
const (
	// MaxWarehouses bounds Config.Warehouses (7 bits of the lock id).
	MaxWarehouses        = 128
	Districts            = 10
	CustomersPerDistrict = 3000
	Items                = 100000

	rowBits = 21
	// ordersPerDistrict is the order-number space of a district in lock rows: the 3000 loaded
	// orders and fresh numbers for new ones.
	ordersPerDistrict = 1 << 13
	linesPerOrder     = 16 // order-line rows per order number (lines 1..15)
	loadedOrders      = 3000
	firstUndelivered  = 2101 // the loaded orders 2101..3000 have NEW-ORDER rows (clause 4.3.3.1)
	stockLevelOrders  = 20
)

// LockID is the lock of row in table of warehouse w (0-based; 0 for TableItem).
func LockID(t Table, w int, row uint32) uint32 {
	return uint32(t)<<28 | uint32(w)<<rowBits | row
}

// Decode splits a lock id made by LockID.
func Decode(id uint32) (t Table, w int, row uint32) {
	return Table(id >> 28), int(id>>rowBits) & (MaxWarehouses - 1), id & (1<<rowBits - 1)
}

// Profile selects what a transaction locks (package doc).
type Profile uint8

// Profiles.
const (
	// Spec: the specification's transactions with DSLR's lock set.
	Spec Profile = iota
	// DSLRTrace: DSLR's generator as NetLock's traces recorded it.
	DSLRTrace
	// DSLRNURand: DSLRTrace with the specification's NURand draws of customers and items.
	DSLRNURand
)

func (p Profile) String() string {
	switch p {
	case Spec:
		return "spec"
	case DSLRTrace:
		return "dslr-trace"
	case DSLRNURand:
		return "dslr-nurand"
	}
	return fmt.Sprintf("Profile(%d)", uint8(p))
}

// Profiles lists the profiles.
var Profiles = []Profile{Spec, DSLRTrace, DSLRNURand}

// ParseProfile parses a profile's name.
func ParseProfile(s string) (Profile, error) {
	for _, p := range Profiles {
		if p.String() == s {
			return p, nil
		}
	}
	return 0, fmt.Errorf("tpcc: profile %q: want spec, dslr-trace or dslr-nurand", s)
}

// Order is the order in which a transaction lists (and takes) its locks.
type Order uint8

// Orders.
const (
	// Ordered: ascending lock id (ordered two-phase locking: no deadlock).
	Ordered Order = iota
	// ClientOrder: the order of the transaction's statements (the paper's clients).
	ClientOrder
)

func (o Order) String() string {
	switch o {
	case Ordered:
		return "ordered"
	case ClientOrder:
		return "client"
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// ParseOrder parses "ordered" or "client".
func ParseOrder(s string) (Order, error) {
	for _, o := range []Order{Ordered, ClientOrder} {
		if o.String() == s {
			return o, nil
		}
	}
	return 0, fmt.Errorf("tpcc: lock order %q: want ordered or client", s)
}

// Config configures a Workload.
type Config struct {
	// Warehouses is W, 1..MaxWarehouses.
	Warehouses int
	// Profile is Spec (the default) or DSLRTrace.
	Profile Profile
	// Order is Ordered (the default) or ClientOrder.
	Order Order
	// Seed is the run's seed: NURand's constants and the loaded database's hashes. Terminals
	// have their own seeds.
	Seed uint64
}

// Txn is one transaction: its locks and what it is.
type Txn struct {
	Kind Kind
	// Home is the home warehouse (DSLRTrace: the transaction's warehouse).
	Home int
	// Remote: a New-Order line supplied by, or a Payment for a customer of, another warehouse.
	Remote bool
	// Rollback: a New-Order whose last item is unused (clause 2.4.1.4); it takes the locks up to
	// that item and rolls back. Its Locks omit the unused item's.
	Rollback bool
	// ByName: a Payment or Order-Status that selected its customer by last name.
	ByName bool
	// Lines is a New-Order's order-line count (ol_cnt), 0 otherwise.
	Lines int
	// Terminal is the id of the terminal that drew it.
	Terminal int
	// District is a Delivery part's district and Stock-Level's (0-based).
	District int
	// Part is a Delivery's district plus one: a Delivery is ten transactions, one per district
	// (1..10, drawn one after the other by the terminal); 0 for the other types.
	Part int
	// Locks are the transaction's distinct locks, held to commit, in the Workload's Order.
	Locks []client.LockSpec
	// Reads are Stock-Level's read-committed reads (clause 3.4.1: Level 1 isolation), distinct
	// and not among Locks: each is taken and released on its own while Locks are held. They
	// are lock requests like the others; a consumer that holds them to commit is stricter.
	Reads []client.LockSpec
}

// Constants are NURand's run-time constants C (clause 2.1.6).
type Constants struct {
	// LastLoad is the C_LAST the customers' last names were loaded with; LastRun, ID and Item
	// are the run's C for C_LAST, C_ID and OL_I_ID.
	LastLoad, LastRun, ID, Item int
}

// Workload is one run's TPC-C: its configuration, NURand's constants and the loaded customers'
// last names (built per district on first use). It is safe for concurrent use by its Terminals.
type Workload struct {
	cfg   Config
	c     Constants
	names []lazyNames // per (warehouse, district)
}

type lazyNames struct {
	once sync.Once
	idx  *nameIndex
}

// nameIndex lists a district's customers by last name: those named n are ids[start[n]:start[n+1]]
// (customer numbers 1..3000, ascending).
type nameIndex struct {
	start [1001]uint16
	ids   [CustomersPerDistrict]uint16
}

// New returns the workload of cfg.
func New(cfg Config) (*Workload, error) {
	switch {
	case cfg.Warehouses < 1 || cfg.Warehouses > MaxWarehouses:
		return nil, fmt.Errorf("tpcc: %d warehouses: want 1..%d", cfg.Warehouses, MaxWarehouses)
	case cfg.Profile > DSLRNURand:
		return nil, fmt.Errorf("tpcc: %v", cfg.Profile)
	case cfg.Order > ClientOrder:
		return nil, fmt.Errorf("tpcc: %v", cfg.Order)
	}
	return &Workload{cfg: cfg, c: constants(cfg.Seed), names: make([]lazyNames, cfg.Warehouses*Districts)}, nil
}

// Config returns the workload's configuration.
func (wl *Workload) Config() Config { return wl.cfg }

// Constants returns NURand's constants of the run.
func (wl *Workload) Constants() Constants { return wl.c }

// ValidLastDelta reports whether C_LAST's load and run values may be used together: their
// difference is in 65..119 and not 96 or 112 (clause 2.1.6.1).
func ValidLastDelta(load, run int) bool {
	d := load - run
	if d < 0 {
		d = -d
	}
	return d >= 65 && d <= 119 && d != 96 && d != 112
}

func constants(seed uint64) Constants {
	r := rand.New(rand.NewPCG(seed, 0x74706363436f6e73))
	c := Constants{LastLoad: r.IntN(256), ID: r.IntN(1024), Item: r.IntN(8192)}
	var runs []int
	for v := range 256 {
		if ValidLastDelta(c.LastLoad, v) {
			runs = append(runs, v)
		}
	}
	c.LastRun = runs[r.IntN(len(runs))]
	return c
}

// NURand is TPC-C's non-uniform random function NURand(A, x, y) with run-time constant c
// (clause 2.1.6): (((random(0, A) | random(x, y)) + c) % (y-x+1)) + x.
func NURand(r *rand.Rand, a, x, y, c int) int {
	return ((r.IntN(a+1)|(x+r.IntN(y-x+1)))+c)%(y-x+1) + x
}

// nuRandHash is NURand drawn from the bits of h instead of a random source.
func nuRandHash(h uint64, a, x, y, c int) int {
	u := int(mix(h) % uint64(a+1))
	v := x + int(mix(h^0x5bd1e995)%uint64(y-x+1))
	return ((u|v)+c)%(y-x+1) + x
}

// mix is splitmix64's finalizer.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// customersNamed lists the customers (1..3000) of district d of warehouse w whose last-name
// number is name (0..999), as loaded: customer c's is c-1 for c <= 1000 and NURand(255, 0, 999)
// with C_LOAD for the others (clauses 4.3.2.3 and 4.3.3.1).
func (wl *Workload) customersNamed(w, d, name int) []uint16 {
	ln := &wl.names[w*Districts+d]
	ln.once.Do(func() {
		r := rand.New(rand.NewPCG(wl.cfg.Seed, uint64(w*Districts+d)<<8|0x4c))
		var names [CustomersPerDistrict]uint16
		var count [1000]uint16
		for c := 1; c <= CustomersPerDistrict; c++ {
			n := c - 1
			if c > 1000 {
				n = NURand(r, 255, 0, 999, wl.c.LastLoad)
			}
			names[c-1] = uint16(n)
			count[n]++
		}
		idx := &nameIndex{}
		for n := range 1000 {
			idx.start[n+1] = idx.start[n] + count[n]
		}
		next := idx.start
		for c := 1; c <= CustomersPerDistrict; c++ {
			n := names[c-1]
			idx.ids[next[n]] = uint16(c)
			next[n]++
		}
		ln.idx = idx
	})
	return ln.idx.ids[ln.idx.start[name]:ln.idx.start[name+1]]
}

// orderLines is the line count of loaded order o of district d of warehouse w.
func (wl *Workload) orderLines(w, d, o int) int {
	return 5 + int(mix(wl.cfg.Seed^uint64(w)<<40^uint64(d)<<32^uint64(o)<<8^0x6f6c)%11)
}

// lineItem is the item (1..100000) of line l of loaded order o of district d of warehouse w.
func (wl *Workload) lineItem(w, d, o, l int) int {
	return nuRandHash(wl.cfg.Seed^uint64(w)<<40^uint64(d)<<32^uint64(o)<<8^uint64(l), 8191, 1, Items, wl.c.Item)
}

// Terminal draws one terminal's transactions. It is not safe for concurrent use.
type Terminal struct {
	wl       *Workload
	id       int
	home     int
	district int
	r        *rand.Rand
	seq      uint64
	pos      map[uint32]int // ClientOrder: index of a lock in the transaction
	seen     map[uint32]struct{}
	delivery int // the next district of a Delivery under way (0: none)
}

// Terminal returns terminal id (>= 0) drawing from seed: its home warehouse is id mod W and its
// Stock-Level district (id / W) mod 10.
func (wl *Workload) Terminal(id int, seed uint64) *Terminal {
	t := &Terminal{wl: wl, id: id, home: id % wl.cfg.Warehouses, district: id / wl.cfg.Warehouses % Districts,
		r: rand.New(rand.NewPCG(seed, 0x7470636321)), seen: make(map[uint32]struct{})}
	if wl.cfg.Order == ClientOrder {
		t.pos = make(map[uint32]int)
	}
	return t
}

// Home is the terminal's home warehouse.
func (t *Terminal) Home() int { return t.home }

// Next draws the next transaction into tx (reusing tx.Locks).
func (t *Terminal) Next(tx *Txn) {
	*tx = Txn{Locks: tx.Locks[:0], Reads: tx.Reads[:0], Home: t.home, Terminal: t.id}
	if t.pos != nil {
		clear(t.pos)
	}
	if t.delivery > 0 {
		// The rest of a Delivery: one transaction per district.
		tx.Kind = Delivery
		t.deliver(tx, t.delivery)
		t.delivery = (t.delivery + 1) % Districts
	} else {
		v := t.r.IntN(100)
		for _, k := range Kinds {
			if v < Mix[k] {
				tx.Kind = k
				break
			}
			v -= Mix[k]
		}
		if t.wl.cfg.Profile != Spec {
			t.dslr(tx)
		} else {
			switch tx.Kind {
			case NewOrder:
				t.newOrder(tx)
			case Payment:
				t.payment(tx)
			case OrderStatus:
				t.orderStatus(tx)
			case Delivery:
				_ = t.r.IntN(10) // the carrier, 1..10: drawn, it does not change the rows
				t.deliver(tx, 0)
				t.delivery = 1
			case StockLevel:
				t.stockLevel(tx)
			}
		}
	}
	if t.wl.cfg.Order == Ordered {
		tx.Locks = client.OrderLocks(tx.Locks) // client.Txn's order: ascending ids, a lock once
	}
}

// add appends a lock; in ClientOrder a lock already in the transaction keeps its place and the
// stronger mode (Ordered merges duplicates after sorting).
func (t *Terminal) add(tx *Txn, tb Table, w int, row int, m wire.Mode) {
	id := LockID(tb, w, uint32(row))
	if t.pos != nil {
		if i, ok := t.pos[id]; ok {
			tx.Locks[i].Mode = max(tx.Locks[i].Mode, m)
			return
		}
		t.pos[id] = len(tx.Locks)
	}
	tx.Locks = append(tx.Locks, client.LockSpec{Lock: id, Mode: m})
}

// other is a warehouse other than w, uniformly (w itself when there is only one).
func (t *Terminal) other(w int) int {
	n := t.wl.cfg.Warehouses
	if n == 1 {
		return w
	}
	o := t.r.IntN(n - 1)
	if o >= w {
		o++
	}
	return o
}

// fresh is a new row number in [lo, lo+n) for an inserted row: a hash of the terminal and its
// sequence.
func (t *Terminal) fresh(lo, n int) int {
	t.seq++
	return lo + int(mix(uint64(t.id)<<40^t.seq^0x6e6577)%uint64(n))
}

func orderRow(d, o int) int         { return d*ordersPerDistrict + o }
func lineRow(d, o, l int) int       { return orderRow(d, o)*linesPerOrder + l }
func customerRow(d, c int) int      { return d*CustomersPerDistrict + c - 1 }
func (t *Terminal) custID() int     { return NURand(t.r, 1023, 1, CustomersPerDistrict, t.wl.c.ID) }
func (t *Terminal) lastName() int   { return NURand(t.r, 255, 0, 999, t.wl.c.LastRun) }
func (t *Terminal) itemID() int     { return NURand(t.r, 8191, 1, Items, t.wl.c.Item) }
func (t *Terminal) percent() int    { return 1 + t.r.IntN(100) }
func (t *Terminal) districtID() int { return t.r.IntN(Districts) }

// newOrder is clause 2.4.
func (t *Terminal) newOrder(tx *Txn) {
	w := t.home
	d := t.districtID()
	c := t.custID()
	lines := 5 + t.r.IntN(11)
	tx.Rollback = t.percent() == 1
	tx.Lines = lines
	o := t.fresh(loadedOrders+1, ordersPerDistrict-loadedOrders-1)
	t.add(tx, TableWarehouse, w, 0, wire.Shared)
	t.add(tx, TableDistrict, w, d, wire.Exclusive)
	t.add(tx, TableCustomer, w, customerRow(d, c), wire.Shared)
	t.add(tx, TableOrder, w, orderRow(d, o), wire.Exclusive)
	t.add(tx, TableNewOrderTable, w, 0, wire.Exclusive)
	t.add(tx, TableNewOrder, w, orderRow(d, o), wire.Exclusive)
	for l := 1; l <= lines; l++ {
		i := t.itemID()
		sw := w
		if t.percent() == 1 && t.wl.cfg.Warehouses > 1 {
			sw = t.other(w)
		}
		if tx.Rollback && l == lines {
			break // the unused item: not found, the transaction rolls back
		}
		tx.Remote = tx.Remote || sw != w
		t.add(tx, TableItem, 0, i-1, wire.Shared)
		t.add(tx, TableStock, sw, i-1, wire.Exclusive)
		t.add(tx, TableOrderLine, w, lineRow(d, o, l), wire.Exclusive)
	}
}

// customers adds the customer a Payment or Order-Status selects (2.5.2.2, 2.6.2.2): by last
// name (y <= 60) every customer of the name, the middle one (n/2 rounded up) in mode m and the
// others shared; else one by NURand number in mode m. It returns the selected customer.
func (t *Terminal) customers(tx *Txn, w, d int, m wire.Mode) int {
	if t.percent() <= 60 {
		tx.ByName = true
		ids := t.wl.customersNamed(w, d, t.lastName())
		sel := int(ids[(len(ids)-1)/2])
		for _, c := range ids {
			mode := wire.Shared
			if int(c) == sel {
				mode = m
			}
			t.add(tx, TableCustomer, w, customerRow(d, int(c)), mode)
		}
		return sel
	}
	c := t.custID()
	t.add(tx, TableCustomer, w, customerRow(d, c), m)
	return c
}

// payment is clause 2.5.
func (t *Terminal) payment(tx *Txn) {
	w := t.home
	d := t.districtID()
	cw, cd := w, d
	if t.percent() > 85 && t.wl.cfg.Warehouses > 1 {
		cw, cd = t.other(w), t.districtID()
		tx.Remote = true
	}
	t.add(tx, TableWarehouse, w, 0, wire.Exclusive)
	t.add(tx, TableDistrict, w, d, wire.Exclusive)
	t.customers(tx, cw, cd, wire.Exclusive)
	t.add(tx, TableHistory, w, t.fresh(0, 1<<rowBits), wire.Exclusive)
}

// orderStatus is clause 2.6: the customer's last order is its loaded one (order c).
func (t *Terminal) orderStatus(tx *Txn) {
	w := t.home
	d := t.districtID()
	c := t.customers(tx, w, d, wire.Shared)
	t.add(tx, TableOrder, w, orderRow(d, c), wire.Shared)
	for l := 1; l <= t.wl.orderLines(w, d, c); l++ {
		t.add(tx, TableOrderLine, w, lineRow(d, c, l), wire.Shared)
	}
}

// deliver is district d's part of a Delivery (clause 2.7.4), a transaction of its own: the
// NEW-ORDER table (DSLR's table lock), the district's oldest new order (one row per district,
// NEW-ORDER row 0 of the district), a loaded undelivered order o, its lines and its customer (o).
func (t *Terminal) deliver(tx *Txn, d int) {
	w := t.home
	o := firstUndelivered + t.r.IntN(loadedOrders-firstUndelivered+1)
	tx.District, tx.Part = d, d+1
	t.add(tx, TableNewOrderTable, w, 0, wire.Exclusive)
	t.add(tx, TableNewOrder, w, orderRow(d, 0), wire.Exclusive)
	t.add(tx, TableOrder, w, orderRow(d, o), wire.Exclusive)
	for l := 1; l <= t.wl.orderLines(w, d, o); l++ {
		t.add(tx, TableOrderLine, w, lineRow(d, o, l), wire.Exclusive)
	}
	t.add(tx, TableCustomer, w, customerRow(d, o), wire.Exclusive)
}

// stockLevel is clause 2.8 on the terminal's district: the district is locked (shared, held to
// commit, as DSLR does); the lines of its last 20 orders (20 consecutive loaded orders from a
// random start: the real window moves with every New-Order of the district, so a given line is
// read by few Stock-Levels) and the stock rows of their items are read committed (Reads), each
// line then its item's stock row.
func (t *Terminal) stockLevel(tx *Txn) {
	w, d := t.home, t.district
	tx.District = d
	_ = t.r.IntN(11) // the threshold, 10..20: drawn, it does not change the rows read
	t.add(tx, TableDistrict, w, d, wire.Shared)
	clear(t.seen)
	read := func(tb Table, row int) {
		id := LockID(tb, w, uint32(row))
		if _, dup := t.seen[id]; !dup {
			t.seen[id] = struct{}{}
			tx.Reads = append(tx.Reads, client.LockSpec{Lock: id, Mode: wire.Shared})
		}
	}
	first := 1 + t.r.IntN(loadedOrders-stockLevelOrders+1)
	for o := first; o < first+stockLevelOrders; o++ {
		for l := 1; l <= t.wl.orderLines(w, d, o); l++ {
			read(TableOrderLine, lineRow(d, o, l))
			read(TableStock, t.wl.lineItem(w, d, o, l)-1)
		}
	}
}

// dslr is DSLR's tpcc_lock_gen.cc (no_tablelock variant) as NetLock's traces hold it: the
// warehouse is drawn per transaction, the rows are DSLR's object indices within their table
// (customer, order, new-order, order-line and history rows keyed by the customer number
// 0..29999), draws are uniform (DSLRNURand: customers NURand(1023, 1, 3000) in a uniform
// district, items NURand(8191, 1, 100000)).
func (t *Terminal) dslr(tx *Txn) {
	r := t.r
	w := r.IntN(t.wl.cfg.Warehouses)
	tx.Home = w
	const cust = Districts * CustomersPerDistrict
	nu := t.wl.cfg.Profile == DSLRNURand
	customer := func(d int) int {
		if nu {
			return d*CustomersPerDistrict + t.custID() - 1
		}
		return d*CustomersPerDistrict + r.IntN(CustomersPerDistrict)
	}
	anyCustomer := func() int {
		if nu {
			return customer(r.IntN(Districts))
		}
		return r.IntN(cust)
	}
	switch tx.Kind {
	case NewOrder:
		d := r.IntN(Districts)
		c := customer(d)
		i := r.IntN(Items)
		if nu {
			i = t.itemID() - 1
		}
		tx.Lines = 1
		t.add(tx, TableWarehouse, w, 0, wire.Shared)
		t.add(tx, TableDistrict, w, d, wire.Exclusive)
		t.add(tx, TableCustomer, w, c, wire.Shared)
		t.add(tx, TableOrder, w, c, wire.Exclusive)
		t.add(tx, TableNewOrderTable, w, 0, wire.Exclusive)
		t.add(tx, TableNewOrder, w, c, wire.Exclusive)
		t.add(tx, TableItem, w, i, wire.Shared)
		t.add(tx, TableStock, w, i, wire.Exclusive)
		t.add(tx, TableOrderLine, w, c, wire.Exclusive)
	case Payment:
		x, y := 1+r.IntN(100), 1+r.IntN(100)
		d := r.IntN(Districts)
		if x > 85 && t.wl.cfg.Warehouses > 1 {
			_ = r.IntN(t.wl.cfg.Warehouses) // DSLR's remote node: not in the lock id
			tx.Remote = true
		}
		c1 := anyCustomer()
		t.add(tx, TableWarehouse, w, 0, wire.Exclusive)
		t.add(tx, TableDistrict, w, d, wire.Exclusive)
		if y <= 60 {
			tx.ByName = true
			c2 := anyCustomer()
			for c2 == c1 {
				c2 = anyCustomer()
			}
			t.add(tx, TableCustomer, w, c1, wire.Exclusive)
			t.add(tx, TableCustomer, w, c2, wire.Exclusive)
			t.add(tx, TableHistory, w, c1, wire.Exclusive)
			t.add(tx, TableHistory, w, c2, wire.Exclusive)
		} else {
			t.add(tx, TableCustomer, w, c1, wire.Exclusive)
			t.add(tx, TableHistory, w, c1, wire.Exclusive)
		}
	case OrderStatus:
		y := 1 + r.IntN(100)
		c := anyCustomer()
		if y <= 40 {
			tx.ByName = true
			c2 := anyCustomer()
			for c2 == c {
				c2 = anyCustomer()
			}
			t.add(tx, TableCustomer, w, c, wire.Shared)
			t.add(tx, TableCustomer, w, c2, wire.Shared)
			t.add(tx, TableOrder, w, c, wire.Shared)
			t.add(tx, TableOrder, w, c2, wire.Shared)
		} else {
			t.add(tx, TableCustomer, w, c, wire.Shared)
			t.add(tx, TableOrder, w, c, wire.Shared)
		}
		t.add(tx, TableOrderLine, w, c, wire.Shared)
	case Delivery:
		d := r.IntN(Districts)
		n := d*CustomersPerDistrict + r.IntN(CustomersPerDistrict)
		t.add(tx, TableNewOrderTable, w, 0, wire.Exclusive)
		t.add(tx, TableNewOrder, w, n, wire.Exclusive)
		t.add(tx, TableOrder, w, n, wire.Exclusive)
		t.add(tx, TableOrderLine, w, n, wire.Exclusive)
		t.add(tx, TableCustomer, w, n, wire.Exclusive)
	case StockLevel:
		d := r.IntN(Districts)
		o := r.IntN(cust)
		t.add(tx, TableDistrict, w, d, wire.Shared)
		t.add(tx, TableOrderLine, w, o, wire.Shared)
		t.add(tx, TableStock, w, 0, wire.Shared)
	}
}
